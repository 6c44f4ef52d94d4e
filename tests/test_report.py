"""Paper values, the paper's tables and figures, the HTML report (rendered in headless Chromium), reproduce."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import isoeat
from isoeat.commands.reproduce import candidate_models, paper_rows, paper_values, parse_paper_p
from isoeat.experiments import runner as R
from isoeat.experiments.summary import summarize
from isoeat.reporting import paper_tables as PT

CONFIG = """\
name: report-test
description: two tests on GloVe, raw vs ZCA
models: [{spec: glove-6b-50d, label: GloVe}]
tests: [W6, W8]
calibrations: [none, zca]
metrics: [mac, rnd]
settings: {permutations: 2000}
anisotropy: {sample: 300, heatmap_size: 60}
similarity: {benchmarks: [ws353], bootstrap: 200}
report: {figure_formats: [png], dpi: 80}
"""


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "isoeat.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=dict(os.environ), timeout=300)


@pytest.fixture(scope="module")
def experiment(tmp_path_factory, glove):
    base = tmp_path_factory.mktemp("report")
    (base / "exp.yaml").write_text(CONFIG, encoding="utf-8")
    R.run_experiment(base / "exp.yaml", base / "out")
    return base / "out"


@pytest.fixture(scope="module")
def reported(experiment):
    pytest.importorskip("matplotlib")
    proc = _cli("report", str(experiment), "--html")
    assert proc.returncode == 0, proc.stderr
    return experiment, proc


# --------------------------------------------------------------------------- the paper's values
def test_paper_values_transcription_and_provenance():
    pv = paper_values()
    assert pv["source"]["transcribed_from"] and "Table A1" in pv["source"]["tables"]["table_a1"]
    assert [m["label"] for m in pv["models"]] == ["GloVe", "word2vec", "GPT-2", "BERT", "RoBERTa", "unsup-BERT",
                                                  "unsup-RoBERTa"]
    assert all(len(v) == 10 for v in pv["table_a1"].values())
    a1 = pv["table_a1"]
    assert (a1["GPT-2"]["W2"]["d_R"], a1["GPT-2"]["W2"]["p_R"], a1["GPT-2"]["W2"]["d_W"]) == (-0.87, ".9993", 1.05)
    assert a1["GloVe"]["W3"] == {"bias_type": "Race", "d_R": 0.95, "p_R": "10^-5", "d_W": 0.24, "p_W": ".1660",
                                 "chg": "D"}
    assert a1["unsup-RoBERTa"]["W6"]["p_R"] == "10^-4" and a1["unsup-RoBERTa"]["W8"]["d_R"] == 0.0
    assert pv["table2"]["GPT-2"] == {"raw_mean": 0.997, "raw_sd": 0.003, "white_mean": 0.001, "white_sd": 0.042}
    assert len(pv["table3"]) == 7 and pv["table3"]["GPT-2"]["ws353"] == {
        "label": "WS-353", "raw": 0.263, "white": 0.62, "delta": 0.358, "sig": "***"}
    assert pv["table3"]["word2vec"]["ws353"]["delta"] == -0.025 and pv["table3"]["RoBERTa"]["stsb"]["sig"] == "n.s."
    assert parse_paper_p(".0098") == (0.0098, "=") and parse_paper_p("10^-5") == (1e-4, "<")


def test_printed_change_classes_follow_the_printed_p():
    for r in paper_rows():
        assert r["change"] == isoeat.classify_change(r["p_raw"], r["p_calibrated"]), r


def test_summary_reproduces_the_counts_of_sections_5_3_to_5_5():
    pv = paper_values()["summary"]
    s = summarize(paper_rows())
    o = s["overall"]
    assert (o["n"], o["Stable"], o["Disappearing"], o["Emerging"]) == (70, 48, 12, 10)
    assert o["stable_large_shift"] == pv["stable_large_shift"] == 7
    assert o["changed_or_shifted"] == pv["changed_or_shifted"] == 29
    assert round(100 * o["Stable_share"], 1) == 68.6 and round(100 * o["changed_or_shifted_share"], 1) == 41.4
    race = next(g for g in s["by_bias"] if g["group"] == "Race")
    assert race["Disappearing"] == 8 and round(100 * race["Disappearing_share_of_class"], 1) == 66.7
    groups = {g["group"]: g for g in s["by_bias_group"]}
    assert {k: groups[k]["Emerging"] for k in pv["emerging_by_bias_group"]} == pv["emerging_by_bias_group"]
    fam = {g["group"]: g for g in s["by_family"]}
    assert fam["contextualized"]["Emerging"] == 6 and fam["static"]["Disappearing"] == 4
    per_model = {g["group"]: g["significance_changed"] for g in s["by_model"]}
    assert {k: per_model[k] for k in pv["changes_by_model"]} == pv["changes_by_model"]


def _paper_results():
    """The paper's own Table A1-3 as results, to check the table layouts on seven models."""
    pv = paper_values()
    rows = [dict(r, calibration="zca", calibration_name="zca", sig_raw=r["p_raw"] < 0.05,
                 sig_calibrated=r["p_calibrated"] < 0.05, large_shift=abs(r["delta_d"]) > 0.5,
                 sign_reversal=r["d_raw"] * r["d_calibrated"] < 0, p_method_raw="monte-carlo",
                 p_method_calibrated="monte-carlo") for r in paper_rows()]
    aniso = []
    for m, v in pv["table2"].items():
        aniso.append({"model": m, "calibration": "none", "mean_cosine": v["raw_mean"], "sd_cosine": v["raw_sd"],
                      "isoscore": None, "n_samples": 2000, "sampling": "WikiText-103"})
        aniso.append({"model": m, "calibration": "zca", "mean_cosine": v["white_mean"], "sd_cosine": v["white_sd"],
                      "isoscore": None, "n_samples": 2000, "sampling": "WikiText-103"})
    sims = [{"model": m, "calibration": "zca", "benchmark": b, "benchmark_title": v["label"], "rho_raw": v["raw"],
             "rho_calibrated": v["white"], "delta": v["delta"],
             "p_value": {"***": 1e-4, "**": 0.005, "*": 0.03, "n.s.": 0.3}[v["sig"]], "n_pairs": 353}
            for m, t in pv["table3"].items() for b, v in t.items()]
    return SimpleNamespace(
        alpha=0.05, settings={"alternative": "greater", "permutations": 100_000},
        models=[{"label": m["label"], "family": m["family"]} for m in pv["models"]],
        tests=[{"id": k, "bias_type": v} for k, v in pv["tests"].items()],
        calibrations=[{"name": "none", "label": "none"}, {"name": "zca", "label": "zca"}],
        comparisons=rows, summary={"zca": summarize(rows)}, anisotropy=aniso, similarity=sims,
    )


def test_table_a1_layout_groups_models_by_family():
    t = PT.table_a1(_paper_results(), "zca")
    assert [b[0] for b in t.blocks] == ["Static embeddings", "Contextualized embeddings",
                                        "Unsupervised contrastive embeddings"]
    assert [g for g, _ in t.blocks[1][1]] == ["", "GPT-2", "BERT", "RoBERTa"]
    md = PT.to_markdown(t)
    assert "| ID | Bias | GloVe d_R | p_R | d_W | p_W | Chg | word2vec d_R |" in md
    # GPT-2 W2: -0.87 (p .9993) -> **1.05** (p < 1e-4), Emerging; bold exactly where p < alpha
    assert "| W2 | Valence | -0.87 | .9993 | **1.05** | 1.0e-05 | E |" in md
    tex = PT.to_latex(t)
    assert r"\multicolumn{5}{c}{GPT-2}" in tex and r"$-$0.87" in tex and r"\textbf{1.05}" in tex
    assert tex.count(r"\begin{tabular}") == 3 and r"\cmidrule(lr){3-7}" in tex
    assert len(t.records) == 70


def test_tables_2_3_and_summary_layouts():
    res = _paper_results()
    t2 = PT.table2(res)
    md = PT.to_markdown(t2)
    assert "| GPT-2 | contextualized | 0.997 | 0.003 | -- | 0.001 | 0.042 | -- |" in md
    t3 = PT.table3(res, "zca")
    md3 = PT.to_markdown(t3)
    assert "| GPT-2 | WS-353 | 353 | .263 | .620 | **+.358** |" in md3 and "***" in md3
    assert "$^{***}$" in PT.to_latex(t3)
    st = PT.summary_table(res, "zca")
    md = PT.to_markdown(st)
    assert "| All model-test combinations | 70 | 48 (68.6%) | 12 (17.1%) | 10 (14.3%) | 7 | 29 (41.4%) |" in md
    # race: 8 of the 12 Disappearing cases (paper §5.5), spelled out; a group without any says just 0
    assert "8 (61.5%), 67% of all Disappearing" in md or "8 (38.1%), 67% of all Disappearing" in md
    assert "0 (0.0%), 0% of all" not in md and "0 (0.0%);" not in md
    assert PT.stars(0.0005) == "***" and PT.stars(0.2) == "n.s." and PT.latex_p(2.1e-5) == r"$2.1{\times}10^{-5}$"


# --------------------------------------------------------------------------- tables and figures of a real run
def test_run_writes_paper_tables(experiment):
    tables = experiment / "tables"
    for name in ("table_a1-zca", "table2", "table3-zca", "summary-zca"):
        for ext in ("csv", "md", "tex"):
            assert (tables / f"{name}.{ext}").stat().st_size > 0, (name, ext)
    md = (tables / "table_a1-zca.md").read_text()
    comp = {r["test"]: r for r in json.loads((experiment / "comparison.json").read_text())}
    d6 = f"{comp['W6']['d_raw']:.2f}"
    assert f"| W6 | Gender | **{d6}** |" in md  # significant: bold
    csv_head = (tables / "table_a1-zca.csv").read_text().splitlines()[0]
    for col in ("model", "family", "test", "d_raw", "p_raw", "p_holm_raw", "p_bh_raw", "d_calibrated", "change",
                "change_holm", "delta_d"):
        assert col in csv_head.split(",")
    t2 = (tables / "table2.md").read_text()
    a = {x["calibration"]: x for x in json.loads(json.dumps(R.load_experiment(experiment).anisotropy))}
    assert f"{a['none']['mean_cosine']:.3f}" in t2 and a["zca"]["n_samples"] == 300
    assert "WS-353" in (tables / "table3-zca.md").read_text()


def test_report_command_writes_figures_and_a_self_contained_page(reported):
    out, proc = reported
    assert "report:" in proc.stdout and "self-contained" in proc.stdout
    figs = sorted(p.relative_to(out / "figures").as_posix() for p in (out / "figures").rglob("*.png"))
    assert figs == ["fig1_cosine_heatmaps.png", "fig2_explained_variance.png", "fig3_effect_sizes-zca.png",
                    "fig4_scatter-zca.png", "mechanism-GloVe-zca.png", "tests/GloVe-W6.png", "tests/GloVe-W8.png"]
    from PIL import Image

    for f in (out / "figures").rglob("*.png"):
        with Image.open(f) as im:
            assert im.size[0] > 300 and im.size[1] > 150, f
            assert np.asarray(im.convert("L")).std() > 5, f  # not blank
    page = (out / "report.html").read_text()
    assert page.count("<img ") == 7 and page.count('src="data:image/png;base64,') == 7
    assert not re.search(r"""(src|href)=["'](https?:|//|file:)""", page)  # nothing external
    assert "<table>" in page and "Table A1" in page and "Summary of changes" in page
    assert "Conventions" in page and "ddof = 1" in page and "manifest" in page.lower()
    assert "name: report-test" in page  # the config as given
    assert "<h2 id='metrics'>Calibration across metrics</h2>" in page  # metrics: in the config
    assert "Layer profile" not in page and "layers.png" not in page  # no --layers sweep here


def test_report_renders_in_headless_chromium(reported, tmp_path):
    exe = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
                if shutil.which(n)), None)
    if exe is None:
        pytest.skip("Chromium is not installed (CI installs it: apt-get install -y chromium)")
    out, _ = reported
    url = (out / "report.html").resolve().as_uri()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([exe, *flags, "--virtual-time-budget=10000", "--dump-dom", url], capture_output=True,
                         text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    m = re.search(r'<body[^>]*data-images="(\d+)"[^>]*data-images-loaded="(\d+)"[^>]*data-tables="(\d+)"', dom.stdout)
    assert m, dom.stdout[:500]
    n_img, n_loaded, n_tables = map(int, m.groups())
    assert n_img == 7 and n_loaded == n_img and n_tables >= 4  # every embedded image decoded; tables in the DOM
    # the decision aids under plain headings: isotropy check, sanity tests, why d moved, the severity note, how to read
    aids = re.search(r'<h2 id="aids">Is the space anisotropic\? The isotropy check</h2>(.*?)<h2 id="tables">',
                     dom.stdout, re.S)
    assert aids, "no decision-aids section"
    body = aids.group(1)
    assert body.count('<table class="isotropy">') == 1 and body.count('<table class="mechanism">') == 1
    assert '<h2 id="mechanism">Why d moved</h2>' in body and '<h2 id="sanity">Do the sanity tests hold?</h2>' in body
    assert re.search(r'<figure class="aid"><img alt="Why d moved: GloVe, raw vs zca[^"]*" src="data:image/png', body)
    assert "needs at least 3 models" in body and "sanity tests" in body.lower()
    assert "Association is not harm" in body and "allocational" in body.lower()
    # the page reads top-down (issue 33): in the rendered DOM the d / p / change table (Table A1) comes first,
    # then the change counts, the isotropy check and the mechanism table; the formula only after that table
    order = [dom.stdout.find(m) for m in ('<figure class="table" id="table_a1-zca">', '<h2 id="summary">',
                                          '<table class="isotropy">', '<table class="mechanism">',
                                          '<p class="note formula">', '<figure class="table" id="table2">')]
    assert -1 not in order and order == sorted(order), order
    assert dom.stdout.find("top-k: the share of the raw contrast") > order[3]
    assert re.search(r"<title>report-test — isoeat report</title>", dom.stdout)  # the config's name
    mech_rows = re.search(r'<table class="mechanism">.*?<tbody>(.*?)</tbody>', body, re.S).group(1)
    assert mech_rows.count("<tr>") == 2  # W6, W8
    section = re.search(r'<h2 id="metrics">Calibration across metrics</h2>(.*?)<h2 ', dom.stdout, re.S)
    assert section and section.group(1).count("<tr>") == 1 + 2 * 2  # header + (W6, W8) x (mac, rnd)
    assert 'id="layers"' not in dom.stdout and "Layer profile" not in dom.stdout  # no --layers sweep here
    # the page fits a 1280 px window: no horizontal scroll (the manifest's packages row wraps, wide tables scroll in
    # their own box). Measured by a probe added to a copy of the page, after layout, images decoded.
    probe = ("<script>window.addEventListener('load', function () { var d = document.documentElement; "
             "document.body.setAttribute('data-probe', d.scrollWidth + 'x' + d.clientWidth); });</script></body>")
    copy = tmp_path / "probe.html"
    copy.write_text((out / "report.html").read_text("utf-8").replace("</body>", probe), "utf-8")
    fit = subprocess.run([exe, *flags, "--window-size=1280,2200", "--virtual-time-budget=10000", "--dump-dom",
                          copy.as_uri()], capture_output=True, text=True, timeout=120)
    m = re.search(r'data-probe="(\d+)x(\d+)"', fit.stdout)
    assert m, fit.stdout[:500]
    scroll_width, client_width = map(int, m.groups())
    assert client_width == 1280 and scroll_width <= 1280, (scroll_width, client_width)
    shot = tmp_path / "shot.png"
    r = subprocess.run([exe, *flags, f"--screenshot={shot}", "--window-size=1280,2200", url], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    from PIL import Image

    with Image.open(shot) as im:
        px = np.asarray(im.convert("RGB"), dtype=float)
    assert px.shape[:2] == (2200, 1280)
    assert (px.std(axis=(0, 1)) > 10).all()  # text, tables and figures, not a blank page


def test_decision_aids_in_the_page(reported):
    """The report's decision aids, value by value from the folder's own files (comparison.json, the cells)."""
    out, _ = reported
    page = (out / "report.html").read_text()
    section = page.split("<h2 id='aids'>", 1)[1].split("<h2 id='tables'>", 1)[0]
    comp = {r["test"]: r for r in json.loads((out / "comparison.json").read_text())}
    for tid, r in comp.items():
        cell = json.loads((out / "cells" / "GloVe" / "zca" / f"{tid}.json").read_text())
        mech = cell["mechanism"]
        raw = json.loads((out / "cells" / "GloVe" / "none" / f"{tid}.json").read_text())["result"]
        # the stored raw contrast is the raw cell's own mean_X s - mean_Y s; the calibrated one the calibrated cell's
        assert mech["contrast_raw"] == pytest.approx(np.mean(raw["s_x"]) - np.mean(raw["s_y"]), abs=1e-12)
        assert mech["contrast_calibrated"] == pytest.approx(
            np.mean(cell["result"]["s_x"]) - np.mean(cell["result"]["s_y"]), abs=1e-12)
        mag = lambda d: ("large" if abs(d) >= 0.8 else "medium" if abs(d) >= 0.5 else  # noqa: E731
                         "small" if abs(d) >= 0.2 else "negligible")
        assert (r["magnitude_raw"], r["magnitude_calibrated"]) == (mag(r["d_raw"]), mag(r["d_calibrated"]))
        assert (f"<td>{r['d_raw']:.2f}</td><td class='l'>{mag(r['d_raw'])}</td>"
                f"<td>{r['d_calibrated']:.2f}</td><td class='l'>{mag(r['d_calibrated'])}</td>") in section
        assert f"<td>{100 * mech['share_raw']['1']:.0f}%</td>".replace("<td>-0%", "<td>0%") in section
    a = {x["calibration"]: x for x in R.load_experiment(out).anisotropy}
    assert f"<td>{a['none']['mean_cosine']:.3f}</td>" in section and "Recommendation:" in section
    assert "not in this experiment" in section  # W1/W2 not run: said, not silently skipped


def test_report_reads_top_down_in_the_html_text(reported):
    """Issue 33: the d / p / change table first, then the change counts, the decision aids under plain headings and
    the mechanism table; the formula of the mechanism's columns only under its heading, after its table."""
    from isoeat.reporting.aids import _MECH_NOTE

    out, _ = reported
    page = (out / "report.html").read_text()
    marks = ["<h1>report-test</h1>", "<h2 id='results'>Effect sizes d and p-values, raw and calibrated</h2>",
             '<figure class="table" id="table_a1-zca">', "<h2 id='summary'>How many results changed</h2>",
             "<h2 id='aids'>Is the space anisotropic? The isotropy check</h2>", "<table class='isotropy'>",
             "<h2 id='sanity'>Do the sanity tests hold?</h2>", "<h2 id='mechanism'>Why d moved</h2>",
             "<table class='mechanism'>", "<p class='note formula'>", "<h2 id='reading'>How to read these numbers</h2>",
             "<h2 id='tables'>More tables</h2>", '<figure class="table" id="table2">', "<h2 id='figures'>"]
    where = [page.find(m) for m in marks]
    assert -1 not in where and where == sorted(where), list(zip(marks, where))
    formula = page.find(_MECH_NOTE.split(" (")[0].replace("'", "&#x27;")[:60])
    assert formula > where[marks.index("<table class='mechanism'>")]  # no formula paragraph before a table
    assert "Decision aids" not in page and page.count("<table class='isotropy'>") == 1


def test_report_title_is_the_config_name_else_the_folder_name(experiment, tmp_path):
    from isoeat.reporting.html import UNNAMED, render_report

    res = R.load_experiment(experiment)
    assert "<title>report-test — isoeat report</title>" in render_report(res)
    for unnamed in UNNAMED:  # `isoeat run` without a config names its run "isoeat-run": the folder names the page
        res.experiment = dict(res.experiment, name=unnamed, config=dict(res.experiment["config"], name=unnamed))
        page = render_report(res)
        assert f"<h1>{experiment.name}</h1>" in page and f"<title>{experiment.name} — isoeat report</title>" in page
        assert "isoeat-run</h1>" not in page


def test_decision_aids_on_the_papers_seven_models():
    """Sanity failures (raw GPT-2 misses W1 and W2 in Table A1), isotropy verdicts from Table 2, labels escaped."""
    from isoeat.reporting.aids import aids_section

    res = _paper_results()
    res.weat, res.out = [], "."
    res.models[0] = {**res.models[0], "label": "<b>GloVe</b>"}  # a hostile label: escaped wherever it is shown
    res.comparisons = [dict(r, model="<b>GloVe</b>") if r["model"] == "GloVe" else r for r in res.comparisons]
    for a in res.anisotropy:
        if a["model"] == "GloVe":
            a["model"] = "<b>GloVe</b>"
    page = aids_section(res)
    gpt2 = {r["test"]: r for r in res.comparisons if r["model"] == "GPT-2"}
    assert (f"GPT-2, raw vs zca: sanity check failed: W1 raw (d = {gpt2['W1']['d_raw']:.2f}" in page
            and "W2 raw" in page)
    assert "<b>GloVe</b>" not in page and "&lt;b&gt;GloVe&lt;/b&gt;, raw vs zca: sanity tests W1, W2 significant" in page
    # Table 2: GPT-2 0.997 -> anisotropic; word2vec 0.059 passes the mean-cosine check (IsoScore not in Table 2)
    iso = re.search(r"<table class='isotropy'>.*?<tbody>(.*?)</tbody>", page, re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", iso)
    assert len(rows) == 7 and page.count("<table class='isotropy'>") == 1  # one table, a row per model
    gpt2 = next(r for r in rows if r.startswith("<td class='l'>GPT-2</td>"))
    assert "<td class='bad'>0.997</td>" in gpt2 and "<td class='l bad'>anisotropic</td>" in gpt2
    w2v = next(r for r in rows if r.startswith("<td class='l'>word2vec</td>"))
    assert "<td>0.059</td>" in w2v and "<td class='l'>partly measured</td>" in w2v
    assert page.count("<td class='l'>not measured</td>") == 2 * 7  # IsoScore and top-PC share of each model
    assert ("Recommendation (&lt;b&gt;GloVe&lt;/b&gt;, GPT-2, BERT, RoBERTa, unsup-BERT, unsup-RoBERTa): calibrate"
            in page)  # one line per recommendation, naming its models (escaped)
    assert "Recommendation (word2vec): no measured check flags" in page
    assert "No mechanism recorded for this space" in page


def _figure_title(fig) -> str:
    return "\n".join(ax.get_title() for ax in fig.axes)


def test_severity_figure_spearman_on_the_papers_seven_models():
    """Paper §5.4: mean cosine (Table 2) vs significance changes per model; rho computed here by scipy."""
    pytest.importorskip("matplotlib")
    from scipy.stats import spearmanr

    from isoeat.reporting.mechanism_figure import figure_severity, severity_points

    res = _paper_results()
    pv = paper_values()
    points, note = severity_points(res, "zca")
    assert note == "" and len(points) == 7
    changes = {m: sum(r["change"] != "Stable" for r in res.comparisons if r["model"] == m) for m in pv["table2"]}
    for m, n in pv["summary"]["changes_by_model"].items():  # the text's counts (GPT-2 5, BERT 5, ...) are the rows' counts
        assert changes[m] == n, m
    assert {p[0]: (p[1], p[2]) for p in points} == {m: (v["raw_mean"], changes[m]) for m, v in pv["table2"].items()}
    rho = spearmanr([pv["table2"][m]["raw_mean"] for m in changes], list(changes.values())).statistic
    title = _figure_title(figure_severity(res, "zca"))
    assert f"Spearman's rho = {rho:.2f} (n = 7 models)" in title


def test_severity_figure_with_a_constant_axis_says_rho_is_undefined():
    """No model changes any result (e.g. the layers of one --layers run): rho is undefined, said on the figure."""
    pytest.importorskip("matplotlib")
    from isoeat.reporting.mechanism_figure import figure_severity

    res = _paper_results()
    for r in res.comparisons:
        r["change"] = "Stable"
    assert "Spearman's rho = undefined (a constant axis)" in _figure_title(figure_severity(res, "zca"))


def test_severity_needs_three_models():
    from isoeat.reporting.mechanism_figure import MIN_SEVERITY_MODELS, figure_severity, severity_points

    res = _paper_results()
    keep = {m["label"] for m in res.models[:2]}
    res.models = [m for m in res.models if m["label"] in keep]
    points, note = severity_points(res, "zca")
    assert MIN_SEVERITY_MODELS == 3 and len(points) == 2
    assert "needs at least 3 models" in note and "2 model(s) measured here" in note
    assert figure_severity(res, "zca") is None
    res.anisotropy = []
    assert "no raw anisotropy measured" in severity_points(res, "zca")[1]


def test_report_without_matplotlib(experiment, monkeypatch, tmp_path):
    from isoeat.reporting import figures

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(isoeat.MissingDependencyError, match=r'pip install "isoeat\[plot\]"'):
        figures.require_matplotlib()
    res = R.load_experiment(experiment)
    with pytest.raises(isoeat.MissingDependencyError):
        figures.write_figures(res, tmp_path / "figs")
    from isoeat.cli import main

    copy = tmp_path / "copy"
    shutil.copytree(experiment, copy)
    shutil.rmtree(copy / "tables")
    assert main(["report", str(copy), "--no-figures"]) == 0
    assert (copy / "tables" / "table_a1-zca.md").exists()
    assert main(["report", str(copy)]) == 2  # figures wanted, matplotlib missing: one-line error


def test_report_on_a_folder_that_is_no_experiment(tmp_path, capsys):
    from isoeat.cli import main

    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("isoeat: error:") and "not an isoeat experiment folder" in err


# --------------------------------------------------------------------------- the layer profile (run --layers)
@pytest.fixture(scope="module")
def layer_sweep(tmp_path_factory):
    """``isoeat run --layers all --out`` on a tiny random BERT (hidden states 0, 1, 2), then ``report --html``."""
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    sys.path.insert(0, os.path.dirname(__file__))
    from isoeat.cli import main
    from test_layers import _cli_files
    from test_transformer import build_tiny

    base = tmp_path_factory.mktemp("report-layers")
    bert = build_tiny(base / "bert", "bert-uncased")
    corpus_file, test_file = _cli_files(base)
    out = base / "sweep"
    assert main(["run", "--model", f"hf:{bert}", "--tests", str(test_file), "--corpus", str(corpus_file),
                 "--device", "cpu", "--no-cache", "--reference-size", "40", "--layers", "all",
                 "--permutations", "200", "--out", str(out)]) == 0
    proc = _cli("report", str(out), "--html")
    assert proc.returncode == 0, proc.stderr
    return out


def _layer_csv(out):
    import csv

    with open(out / "tables" / "layers.csv", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_layer_profile_section_renders_in_headless_chromium(layer_sweep, tmp_path):
    exe = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
                if shutil.which(n)), None)
    if exe is None:
        pytest.skip("Chromium is not installed (CI installs it: apt-get install -y chromium)")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={tmp_path / 'p'}"]
    dom = subprocess.run([exe, *flags, "--virtual-time-budget=10000", "--dump-dom",
                          (layer_sweep / "report.html").resolve().as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    m = re.search(r'<body[^>]*data-images="(\d+)"[^>]*data-images-loaded="(\d+)"', dom.stdout)
    assert m and int(m.group(1)) == int(m.group(2)) > 0, dom.stdout[:500]  # every image decoded
    assert "<a href=\"#layers\">Layer profile</a>" in dom.stdout
    section = re.search(r'<h2 id="layers">Layer profile</h2>(.*?)<h2 ', dom.stdout, re.S)
    assert section, "no layer-profile section"
    body = section.group(1)
    rows = _layer_csv(layer_sweep)
    aniso = re.search(r'<table class="layers-anisotropy">.*?<tbody>(.*?)</tbody>', body, re.S).group(1)
    got = [re.findall(r"<td>([^<]*)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", aniso)]
    assert got == [[r["layer"], *(f"{float(r[k]):.3f}" for k in ("mean_cosine_raw", "mean_cosine_calibrated",
                                                               "isoscore_raw", "isoscore_calibrated"))]
                   for r in rows]  # one test: one row per layer, values as in the CSV
    d = re.search(r'<table class="layers-d">.*?<tbody>(.*?)</tbody>', body, re.S).group(1)
    cells = re.findall(r"<td>([^<]*)</td>", d)
    assert cells == [f"{float(r['d_raw']):+.2f} \u2192 {float(r['d_calibrated']):+.2f}" for r in rows]
    assert re.search(r'<figure><img alt="Layer profile: [^"]*" src="data:image/png;base64,', body)
    figures = dom.stdout.split('<h2 id="figures">', 1)[1].split('<h2 id="failures">', 1)[0]
    assert "Layer profile" not in figures  # the layer figure is placed once, in its section


def test_layer_sweep_report_shows_the_isotropy_check_once(layer_sweep):
    """Issue 33: with --layers the isotropy check is one table with a row per layer, not a block per layer."""
    page = (layer_sweep / "report.html").read_text()
    layers = sorted({int(r["layer"]) for r in _layer_csv(layer_sweep)})
    assert len(layers) == 3
    assert page.count("<table class='isotropy'>") == 1 and page.count("The isotropy check</h2>") == 1
    iso = re.search(r"<table class='isotropy'>.*?<tbody>(.*?)</tbody>", page, re.S).group(1)
    labels = re.findall(r"<tr><td class='l'>([^<]*)</td>", iso)
    assert [lab.rsplit("@L", 1)[1] for lab in labels] == [str(x) for x in layers]
    assert page.count("Recommendation") <= 3  # one line per distinct recommendation, not one per layer


def _field(t, line, col, value):
    lines = t.splitlines()
    fields = lines[line].split(",")
    fields[col] = value
    lines[line] = ",".join(fields)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("edit, message", [
    (lambda t: _field(t, 1, 5, "9.5"), "d_raw 9.5 differs from the cells"),  # a hand-edited d
    (lambda t: _field(t, 2, 1, "7"), "no such cell in this folder"),  # a layer the folder never ran
    (lambda t: _field(t, 1, 10, "Emerging" if t.splitlines()[1].split(",")[10] == "Stable" else "Stable"),
     "differs from the cells' '"),  # a change class (a text) not the cells'
    (lambda t: _field(t, 1, 11, "abc"), "mean_cosine_raw 'abc' is not a finite number"),
    (lambda t: _field(t, 1, 10, "Maybe"), "change 'Maybe' is not one of"),
    (lambda t: t.replace(t.splitlines()[1], t.splitlines()[1] + ",extra"), "17 fields, the header has 16"),
    (lambda t: t.replace("isoscore_raw", "iso_raw"), "header lacks isoscore_raw"),
    (lambda t: t.splitlines()[0] + "\n", "no rows"),
    (lambda t: t.encode("utf-8")[:-3] + b"\xff\n", "not valid UTF-8"),
])
def test_layer_section_leaves_out_a_damaged_csv_with_a_note(layer_sweep, tmp_path, edit, message):
    from isoeat.reporting.html import render_report

    copy = tmp_path / "copy"
    shutil.copytree(layer_sweep, copy)
    path = copy / "tables" / "layers.csv"
    new = edit(path.read_text("utf-8"))
    path.write_bytes(new if isinstance(new, bytes) else new.encode("utf-8"))
    page = render_report(R.load_experiment(copy))
    section = page.split("<h2 id='layers'>Layer profile</h2>", 1)[1].split("<h2 ", 1)[0]
    import html

    notes = [html.unescape(n) for n in re.findall(r"<p class='note bad'>([^<]*)</p>", section)]
    assert len(notes) == 1 and message in notes[0] and "the layer profile is left out" in notes[0], section
    assert "<table" not in section and "<img" not in section


def test_layer_csv_whose_layer_anisotropy_differs_between_its_rows_is_refused(tmp_path):
    from isoeat import DataFormatError
    from isoeat.experiments.layers import PROFILE_COLUMNS
    from isoeat.reporting.layer_section import _parse

    row = dict(model="m", layer=0, calibration="zca", test="W1", bias_type="x", d_raw=0.5, p_raw=0.1,
               d_calibrated=0.4, p_calibrated=0.2, delta_d=-0.1, change="Stable", mean_cosine_raw=0.4,
               mean_cosine_calibrated=0.0, isoscore_raw=0.1, isoscore_calibrated=0.9, n_words=8)
    path = tmp_path / "layers.csv"
    lines = [",".join(PROFILE_COLUMNS)] + [",".join(str(r[c]) for c in PROFILE_COLUMNS)
                                           for r in (row, {**row, "test": "W2"})]
    path.write_text("\n".join(lines) + "\n")
    assert [r["test"] for r in _parse(path)] == ["W1", "W2"]
    path.write_text("\n".join([*lines[:2], lines[2].replace(",0.4,0.0,", ",0.41,0.0,")]) + "\n")
    with pytest.raises(DataFormatError, match="layer 0: the anisotropy differs between its rows"):
        _parse(path)


def test_layer_csv_linked_out_of_the_folder_is_refused(layer_sweep, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(layer_sweep, copy)
    outside = tmp_path / "elsewhere.csv"
    (copy / "tables" / "layers.csv").rename(outside)
    (copy / "tables" / "layers.csv").symlink_to(outside)
    proc = _cli("report", str(copy), "--html")
    err = proc.stderr.strip()
    # refused before anything is written, by the check run makes too (issue 40 #2: experiments._store.check_owned)
    assert proc.returncode != 0 and "layers.csv: is a link leading out of the folder" in err, err
    assert len(err.splitlines()) == 1, err


# --------------------------------------------------------------------------- reproduce
def test_candidates_know_the_paper_models():
    cands = {c["label"]: c for c in candidate_models(online=False)}
    assert cands["GloVe-6B-50d"]["paper"] == "GloVe" and cands["GloVe-6B-50d"]["same"] is False
    assert cands["GPT-2"]["spec"] == "hf:gpt2" and cands["GPT-2"]["same"] is True
    assert cands["unsup-RoBERTa"]["spec"] == "hf:princeton-nlp/unsup-simcse-roberta-base"
    assert cands["MiniLM"]["paper"] is None


def test_reproduce_prints_the_paper_beside_ours(tmp_path, glove):
    proc = _cli("reproduce", "--models", "glove-6b-50d", "--quick", "--no-extras", "--offline",
                "--out", str(tmp_path / "rep"))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "A DIFFERENT MODEL" in out and "6B 100d" in out and "paper d_R" in out
    w3 = next(line for line in out.splitlines() if line.startswith("W3 "))
    assert "0.95" in w3 and "10^-5" in w3 and ".1660" in w3  # the paper's GloVe W3 row beside ours
    assert "change class agrees with the paper in" in out
    rows = (tmp_path / "rep" / "paper_comparison.csv").read_text().splitlines()
    assert len(rows) == 11 and "paper_d_raw" in rows[0]
