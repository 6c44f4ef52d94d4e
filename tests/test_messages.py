"""Outputs that say what happened: a metric's failure is its own, a figure's missing glyphs are said once (or
drawn with a font that has them), a footer describes the rows it sits under, the docs say what report does.

The one-line refusals of this class are cases of the robustness catalogue
(``tests/robustness/test_bad_input_trust.py``: CLI_CASES).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from isoeat import IsoeatWarning
from isoeat.cli import main

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_one_failing_metric_leaves_the_others(capsys, glove):
    # RNSB's logistic regression cannot reach its optimum on separable poles with a huge C: it fails alone
    code = main(["metric", "rnsb,ripa,mac", "--test", "W6", "--rnsb-c", "1e9"])
    captured = capsys.readouterr()
    assert code == 1  # some metrics failed; the others are printed
    assert "RIPA:" in captured.out and "MAC:" in captured.out and "RNSB:" not in captured.out
    failed = [ln for ln in captured.err.splitlines() if ln.startswith("isoeat: metric failed: ")]
    assert len(failed) == 1 and failed[0].startswith("isoeat: metric failed: rnsb on W6 (raw): the logistic "
                                                     "regression of RNSB did not reach"), captured.err


def test_one_failing_metric_leaves_the_others_in_json(capsys, glove):
    assert main(["metric", "rnsb,ripa", "--test", "W6", "--rnsb-c", "1e9", "--format", "json"]) == 1
    recs = json.loads(capsys.readouterr().out)
    assert {r["metric"] for r in recs} == {"ripa"} and {r["calibration"] for r in recs} == {"none", "zca"}


def test_the_numbers_of_the_metrics_that_ran_do_not_change(capsys, glove):
    """Each metric on its own named stream: computed alone or beside a failing one, the same numbers."""
    assert main(["metric", "ripa", "--test", "W6", "--pairs", "he:she,him:her", "--format", "json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert main(["metric", "semaxis,ripa", "--test", "W6", "--pairs", "he:she,him:her", "--format", "json"]) == 0
    both = [r for r in json.loads(capsys.readouterr().out) if r["metric"] == "ripa"]
    assert [(r["estimate"], r["p_value"]) for r in both] == [(r["estimate"], r["p_value"]) for r in alone]


def _label_run(tmp_path: Path, label: str) -> Path:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"models: [{{spec: glove-6b-50d, label: '{label}'}}]\ntests: [W6]\ncalibrations: [none, zca]\n"
                   "settings: {permutations: 500, reference: {size: 2000}}\n", encoding="utf-8")
    out = tmp_path / "o"
    assert main(["run", str(cfg), "--out", str(out), "-q"]) == 0
    return out


@pytest.mark.filterwarnings("always::isoeat._errors.IsoeatWarning")  # the CLI prints them as one line
def test_a_label_no_font_has_is_said_once(tmp_path, capsys, glove):
    pytest.importorskip("matplotlib")
    from isoeat.reporting._glyphs import fonts_with

    if not fonts_with(["模"])[1]:
        pytest.skip("a font with CJK glyphs is installed here: nothing is missing")
    out = _label_run(tmp_path, "模型")
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    err = capsys.readouterr().err
    assert "Glyph" not in err and "UserWarning" not in err, err
    lines = [ln for ln in err.splitlines() if "no installed font has" in ln]
    assert len(lines) == 1 and lines[0].startswith("isoeat: warning: ") and "模, 型" in lines[0], err


def test_a_label_another_installed_font_has_is_drawn_with_it(tmp_path, capsys, glove):
    pytest.importorskip("matplotlib")
    from isoeat.reporting._glyphs import fonts_with, glyphs_for, missing_chars

    ch = "\u1d15"  # LATIN LETTER SMALL CAPITAL OU: not in DejaVu Sans, in DejaVu Serif (both ship with matplotlib)
    if missing_chars([ch]) != [ch] or fonts_with([ch])[1]:
        pytest.skip("the fonts here differ from matplotlib's own")
    out = _label_run(tmp_path, f"m{ch}del")
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["report", str(out)]) == 0
    err = capsys.readouterr().err
    assert not [w for w in caught if "Glyph" in str(w.message) or issubclass(w.category, IsoeatWarning)], \
        [str(w.message) for w in caught]
    assert "warning" not in err
    with glyphs_for([f"m{ch}del"]) as lost:
        from matplotlib import rcParams

        assert lost == [] and rcParams["font.family"][0] == "DejaVu Sans" and len(rcParams["font.family"]) > 1


def test_the_sensitivity_footer_describes_its_rows():
    from isoeat.commands.sensitivity import _p_line

    rows = [SimpleNamespace(test="W1", p_method="certified"), SimpleNamespace(test="W1", p_method="certified"),
            SimpleNamespace(test="W6", p_method="exact"), SimpleNamespace(test="W9", p_method="monte-carlo")]
    line = _p_line(SimpleNamespace(rows=rows, p_options={"n_permutations": 20_000}))
    assert line == ("p: certified (the upper end of a bracket that holds the exact p) for W1; exact for W6; "
                    "Monte Carlo (20,000 permutations, p = (k+1)/(N+1)) for W9")
    only_exact = _p_line(SimpleNamespace(rows=rows[2:3], p_options={"n_permutations": 1}))
    assert only_exact == "p: exact for W6" and "certified" not in only_exact


def test_report_is_refused_while_a_run_holds_the_folder_as_the_docs_say(tmp_path, capsys, glove):
    from isoeat.experiments.lock import DirLock

    out = tmp_path / "o"
    assert main(["run", "--tests", "W6", "--reference-size", "2000", "--out", str(out), "-q"]) == 0
    capsys.readouterr()
    with DirLock(out, "a-run"):
        assert main(["report", str(out), "--no-figures"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("isoeat: error: ") and "another isoeat run" in err and err.count("\n") == 1
    text = (DOCS / "experiments.md").read_text(encoding="utf-8")
    assert "a run may still be going" not in text
    assert "refused (one line\nnaming the run) while `isoeat run` writes the same folder" in text


def test_anisotropy_says_the_file_it_wrote(tmp_path, capsys, glove):
    out = tmp_path / "m.npz"
    assert main(["anisotropy", "--samples", "200", "--matrix-out", str(out)]) == 0
    said = [ln for ln in capsys.readouterr().out.splitlines() if "written to" in ln]
    assert said == [f"Pairwise cosine matrices written to {out}"] and out.is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]
