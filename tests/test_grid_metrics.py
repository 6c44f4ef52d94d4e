"""The bias metrics in an experiment grid (``metrics:``): cells, the changed-conclusion rule, files, CLI, report.

Expected values come from a from-scratch computation in this file: the
small GloVe text file is parsed with numpy, the ZCA whitener is fitted by hand
(mean and covariance with n - 1 of the first ``reference.size`` rows, the
order of frequency of a GloVe file, eigenvalues + eps to the power -1/2), and
MAC, RND and its exact two-sided permutation p are computed from their
definitions (Manzini et al. 2019; Garg et al. 2018; docs/metrics.md), never
taken from isoeat's output. The labels of :func:`metric_change` are written by
hand from the rule in docs/metrics.md ("In a grid").
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

import isoeat
from isoeat._errors import ConfigError
from isoeat.cli import main
from isoeat.experiments import runner as R
from isoeat.experiments.compare import metric_change
from isoeat.experiments.config import parse_config

# W6 of Caliskan et al. (2017): male vs female names x career vs family (GloVe 6B is lowercase)
W6 = dict(X=["john", "paul", "mike", "kevin", "steve", "greg", "jeff", "bill"],
          Y=["amy", "joan", "lisa", "sarah", "diana", "kate", "ann", "donna"],
          A=["executive", "management", "professional", "corporation", "salary", "office", "business", "career"],
          B=["home", "parents", "children", "family", "cousins", "marriage", "wedding", "relatives"])
REF, EPS, ALPHA = 300, 1e-3, 0.05
METRICS = ["mac", "rnd", "ripa", "ect", "direct-bias"]


@pytest.fixture(scope="module")
def small(tmp_path_factory, glove):
    """A GloVe text file (the 400 most frequent words plus W6's, real vectors) and its rows parsed by numpy."""
    base = tmp_path_factory.mktemp("grid-metrics")
    words = list(dict.fromkeys(list(glove.words[:400]) + [w for ws in W6.values() for w in ws]))
    vecs = glove.lookup(words).vectors
    path = base / "small.txt"
    path.write_text("".join(w + " " + " ".join(f"{x:.6f}" for x in v) + "\n" for w, v in zip(words, vecs)),
                    encoding="utf-8")
    rows = [line.split(" ") for line in path.read_text(encoding="utf-8").splitlines()]
    # static vectors are held in float32 (as GloVe's own files are read by most tools): round the same way
    as32 = lambda r: np.array([float(x) for x in r[1:]], dtype=np.float32).astype(np.float64)  # noqa: E731
    table = {r[0]: as32(r) for r in rows}
    matrix = np.array([as32(r) for r in rows])
    return base, path, table, matrix


def _config(base: Path, path: Path, metrics: list[str] | None, name: str = "exp.yaml", tests: str = "[W6]") -> Path:
    cfg = base / name
    extra = f"metrics: [{', '.join(metrics)}]\n" if metrics else ""
    cfg.write_text(f"name: metrics-grid\nmodels: [{{spec: 'glove:{path}', label: small}}]\ntests: {tests}\n{extra}"
                   f"settings: {{permutations: 1000, reference: {{size: {REF}}}}}\n", encoding="utf-8")
    return cfg


@pytest.fixture(scope="module")
def grid(small):
    """A WEAT-only run, then the same folder with ``metrics:`` added (same protocol: the grid grows)."""
    base, path, _, _ = small
    out = base / "out"
    first = R.run_experiment(_config(base, path, None, "weat.yaml"), out)
    second = R.run_experiment(_config(base, path, METRICS), out)
    return out, first, second


# --------------------------------------------------------------------------- from scratch
def _zca(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ref = matrix[:REF]
    mu = ref.mean(axis=0)
    lam, U = np.linalg.eigh(np.cov(ref, rowvar=False, ddof=1))
    return mu, U @ np.diag((lam + EPS) ** -0.5) @ U.T


def _sets(table: dict, matrix: np.ndarray, calibrated: bool) -> dict[str, np.ndarray]:
    mu, W = _zca(matrix)
    out = {}
    for role, words in W6.items():
        V = np.array([table[w] for w in words])
        out[role] = (V - mu) @ W.T if calibrated else V
    return out


def _unit(M: np.ndarray) -> np.ndarray:
    return M / np.linalg.norm(M, axis=1, keepdims=True)


def _mac(s: dict) -> float:
    """Manzini et al.: mean over targets of the mean over both poles of mean_s (1 - cos(w, s))."""
    T = _unit(np.vstack([s["X"], s["Y"]]))
    return float(np.mean([0.5 * ((1 - T[i] @ _unit(s["A"]).T).mean() + (1 - T[i] @ _unit(s["B"]).T).mean())
                          for i in range(len(T))]))


def _rnd(s: dict) -> tuple[float, float]:
    """Garg et al.'s per-word ||w - mean A|| - ||w - mean B||; X mean minus Y mean; exact two-sided p."""
    T = np.vstack([s["X"], s["Y"]])
    f = np.linalg.norm(T - s["A"].mean(axis=0), axis=1) - np.linalg.norm(T - s["B"].mean(axis=0), axis=1)
    n, nx = len(f), len(s["X"])
    stat = lambda idx: f[list(idx)].mean() - np.delete(f, list(idx)).mean()  # noqa: E731
    obs = stat(range(nx))
    every = np.array([stat(c) for c in itertools.combinations(range(n), nx)])
    tol = 1e-9 * np.abs(f).sum()
    return float(obs), float(np.mean(np.abs(every) >= abs(obs) - tol))


# --------------------------------------------------------------------------- the rule, at its boundaries
# (estimate_raw, p_raw, estimate_cal, p_cal, signed, has_p) -> (conclusion, reason), written from the rule by hand
RULE = [
    ((0.3, 0.05, 0.3, 0.01, True, True), ("changed", "Emerging")),            # p_raw == alpha: not significant
    ((0.3, 0.01, 0.3, 0.05, True, True), ("changed", "Disappearing")),        # p_cal == alpha: not significant
    ((0.3, 0.05, 0.3, 0.05, True, True), ("unchanged", "")),                  # both at alpha: neither
    ((0.3, 0.0499999, 0.3, 0.0500001, True, True), ("changed", "Disappearing")),
    ((0.0, 0.5, -0.3, 0.5, True, True), ("unchanged", "")),                   # zero raw: no reversal
    ((0.3, 0.5, 0.0, 0.5, True, True), ("unchanged", "")),                    # zero calibrated: no reversal
    ((0.1, 0.5, -0.1, 0.5, True, True), ("changed", "sign reversal")),       # reversal, neither significant
    ((0.1, 0.01, -0.1, 0.5, True, True), ("changed", "Disappearing; sign reversal")),
    ((float("nan"), 0.5, -0.1, 0.5, True, True), ("unchanged", "")),          # NaN: no reversal
    ((0.1, float("nan"), 0.1, 0.01, True, True), ("changed", "Emerging")),    # NaN p: not significant
    ((-0.4, 0.2, 0.3, 0.3, False, True), ("unchanged", "")),                  # ECT: unsigned, the sign is no conclusion
    ((-0.4, 0.2, 0.3, 0.01, False, True), ("changed", "Emerging")),
    ((0.7, float("nan"), 0.1, float("nan"), False, False), ("no conclusion", "")),  # MAC, direct bias, RNSB
    ((0.7, float("nan"), -0.1, float("nan"), True, False), ("changed", "sign reversal")),  # signed, no p
]


@pytest.mark.parametrize("args,expected", RULE)
def test_changed_conclusion_rule_at_its_boundaries(args, expected):
    er, pr, ec, pc, signed, has_p = args
    got = metric_change(er, pr, ec, pc, signed=signed, has_p=has_p, alpha=ALPHA)
    assert (got["conclusion"], got["reason"]) == expected
    assert got["sig_raw"] == (has_p and pr < ALPHA) and got["sig_calibrated"] == (has_p and pc < ALPHA)
    assert got["delta"] == pytest.approx(ec - er, nan_ok=True)


def test_rule_refuses_alpha_outside_0_1_and_defaults_to_0_05():
    for alpha in (0.0, 1.0, -0.1, 1.5):
        for has_p in (True, False):
            with pytest.raises(ConfigError, match="alpha"):
                metric_change(0.1, 0.5, 0.2, 0.5, signed=True, has_p=has_p, alpha=alpha)
    assert metric_change(0.1, 0.5, 0.2, 0.55, signed=False, has_p=True, alpha=0.52)["reason"] == "Disappearing"
    assert metric_change(0.1, 0.03, 0.2, 0.5, signed=True, has_p=True)["reason"] == "Disappearing"  # 0.03 < 0.05
    assert metric_change(0.1, 0.05, 0.2, 0.5, signed=True, has_p=True)["reason"] == ""


# --------------------------------------------------------------------------- config
def test_config_refuses_an_unknown_metric_with_a_suggestion():
    with pytest.raises(ConfigError, match=r"metrics\[1\]: unknown metric 'rpia'; did you mean ripa"):
        parse_config({"models": ["glove-6b-50d"], "tests": ["W6"], "metrics": ["mac", "rpia"]})
    with pytest.raises(ConfigError, match="metrics: metric\\(s\\) listed more than once: mac"):
        parse_config({"models": ["glove-6b-50d"], "tests": ["W6"], "metrics": "mac,MAC"})
    with pytest.raises(ConfigError, match="metrics: expected a non-empty list"):
        parse_config({"models": ["glove-6b-50d"], "metrics": "true"})  # a flag is no list of metrics
    assert parse_config({"models": ["glove-6b-50d"], "metrics": "false"}).metrics == ()


def test_metrics_key_leaves_the_protocol_and_old_configs_alone():
    plain = parse_config({"models": ["glove-6b-50d"], "tests": ["W6"]})
    with_m = parse_config({"models": ["glove-6b-50d"], "tests": ["W6"], "metrics": ["direct_bias", "RND"]})
    assert plain.metrics == () and "metrics" not in plain.to_dict()
    assert with_m.metrics == ("direct-bias", "rnd") and with_m.to_dict()["metrics"] == ["direct-bias", "rnd"]
    assert with_m.protocol_hash() == plain.protocol_hash()
    assert parse_config({"models": ["glove-6b-50d"], "metrics": "all"}).metrics == isoeat.metric_names()


# --------------------------------------------------------------------------- the grid
def test_adding_metrics_reuses_the_weat_cells_and_the_calibrator(grid):
    out, first, second = grid
    assert first.ok and (first.total, first.computed) == (2, 2)
    assert second.ok and (second.total, second.computed, second.reused) == (4, 2, 2)
    assert sorted(str(p.relative_to(out)) for p in (out / "metrics").rglob("*.json")) == [
        "metrics/small/none/W6.json", "metrics/small/zca/W6.json"]
    cell = json.loads((out / "metrics/small/zca/W6.json").read_text())  # strict JSON (no NaN)
    assert cell["kind"] == "metrics" and cell["calibrator"]["path"] == "calibrators/small/zca.npz"
    assert [r["metric"] for r in cell["result"]["metrics"]] == METRICS
    mac = cell["result"]["metrics"][0]  # with its per-word values, X words first
    assert [w.lower() for w in mac["words"]] == W6["X"] + W6["Y"] and len(mac["per_word"]) == 16  # as W6 spells them


def test_metric_values_match_a_computation_from_scratch(grid, small):
    out, _, _ = grid
    _, _, table, matrix = small
    res = R.load_experiment(out)
    assert not res.failures
    got = {(r["calibration"], r["metric"]): r for r in res.metrics}
    for cal in ("none", "zca"):
        s = _sets(table, matrix, calibrated=cal == "zca")
        assert got[(cal, "mac")]["estimate"] == pytest.approx(_mac(s), abs=1e-9)
        john = _unit(s["X"][:1])[0]  # the first target word's own MAC term, stored in the cell
        want = 0.5 * ((1 - _unit(s["A"]) @ john).mean() + (1 - _unit(s["B"]) @ john).mean())
        assert got[(cal, "mac")]["per_word"][0] == pytest.approx(want, abs=1e-9)
        est, p = _rnd(s)
        assert got[(cal, "rnd")]["estimate"] == pytest.approx(est, abs=1e-9)
        assert got[(cal, "rnd")]["p_value"] == pytest.approx(p, abs=1e-12)
        assert got[(cal, "rnd")]["p_method"] == "exact" and got[(cal, "mac")]["p_method"] == "none"
    rows = {r["metric"]: r for r in res.metric_comparisons}
    assert len(res.metric_comparisons) == len(METRICS)  # one row per metric: raw vs zca, never raw vs raw
    assert set(rows) == set(METRICS) and all(r["calibration"] == "zca" for r in rows.values())
    raw_s, cal_s = _sets(table, matrix, False), _sets(table, matrix, True)
    assert rows["mac"]["delta"] == pytest.approx(_mac(cal_s) - _mac(raw_s), abs=1e-9)
    assert rows["mac"]["conclusion"] == "no conclusion"  # unsigned, no p-value
    (er, pr), (ec, pc) = _rnd(raw_s), _rnd(cal_s)
    flipped = (pr < ALPHA) != (pc < ALPHA) or er * ec < 0
    assert rows["rnd"]["conclusion"] == ("changed" if flipped else "unchanged")


def _nan_free(d: dict) -> dict:
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in d.items()}


def test_load_experiment_round_trip_and_seeds_replay(grid, small):
    out, _, _ = grid
    res = R.load_experiment(out)
    cell = json.loads((out / "metrics/small/zca/W6.json").read_text())["result"]["metrics"]
    for stored in cell:
        rec = next(r for r in res.metrics if r["calibration"] == "zca" and r["metric"] == stored["metric"])
        again = isoeat.MetricResult.from_dict({**rec, "model": rec["model_name"], "calibration": "zca"})
        assert _nan_free(again.to_dict(scores=True)) == _nan_free(isoeat.MetricResult.from_dict(stored).to_dict(scores=True))
    # a recorded seed replays its metric (here: RND in the raw space)
    rnd = next(r for r in res.metrics if r["calibration"] == "none" and r["metric"] == "rnd")
    model = isoeat.load_model(f"glove:{small[1]}")
    again = isoeat.metric(model, "rnd", "W6", rng=rnd["seed"], n_permutations=1000)
    assert (again.estimate, again.p_value, again.seed) == (rnd["estimate"], rnd["p_value"], rnd["seed"])
    # rerun: every cell reused
    s = R.run_experiment(_config(small[0], small[1], METRICS), out)
    assert (s.computed, s.reused) == (0, 4)


def test_a_metric_seed_does_not_depend_on_the_other_metrics_listed(grid, small):
    out, _, _ = grid
    base, path, _, _ = small
    other = base / "out-ect-rnd"
    R.run_experiment(_config(base, path, ["ect", "rnd"], "other.yaml"), other)
    seeds = lambda folder: {(r["calibration"], r["metric"]): r["seed"] for r in R.load_experiment(folder).metrics}  # noqa: E731
    mine, theirs = seeds(out), seeds(other)
    assert theirs == {k: v for k, v in mine.items() if k[1] in ("ect", "rnd")}


def test_a_metric_that_cannot_run_fails_alone(small, tmp_path):
    base, path, _, _ = small
    tests = tmp_path / "t.yaml"  # A and B of different sizes and no gender: RIPA has no defining pairs
    tests.write_text("tests:\n  - id: T1\n    bias_type: Other\n" + "".join(
        f"    {k}: [{', '.join(v[:7] if k == 'A' else v)}]\n" for k, v in W6.items()), encoding="utf-8")
    out = tmp_path / "out"
    s = R.run_experiment(_config(tmp_path, path, ["mac", "ripa"], tests=f"['{tests}']"), out)
    assert s.ok  # the cell finished; the metric that could not run is recorded in it
    res = R.load_experiment(out)
    assert sorted((r["calibration"], r["metric"]) for r in res.metrics) == [("none", "mac"), ("zca", "mac")]
    assert sorted((f["kind"], f["calibration"], f["item"]) for f in res.failures) == [
        ("metrics", "none", "T1 ripa"), ("metrics", "zca", "T1 ripa")]
    assert all("pairs" in f["message"] and f["user_error"] is True and f["type"] == "ConfigError"
               for f in res.failures)


def test_failed_and_damaged_metric_cells_are_failures_not_results(small, tmp_path, monkeypatch):
    base, path, _, _ = small
    out = tmp_path / "out"

    def broken(engine, cell, *a):
        if cell.kind == "metrics" and cell.calibration == "zca":
            raise RuntimeError("boom")
        return real(engine, cell, *a)

    real = R.compute_cell
    monkeypatch.setattr(R, "compute_cell", broken)
    s = R.run_experiment(_config(tmp_path, path, ["mac"]), out)
    assert [f["kind"] for f in s.failed] == ["metrics"]
    res = R.load_experiment(out)
    assert [r["calibration"] for r in res.metrics] == ["none"] and res.metric_comparisons == []
    (f,) = res.failures
    assert (f["kind"], f["calibration"], f["item"], f["type"], f["message"]) == ("metrics", "zca", "W6",
                                                                                 "RuntimeError", "boom")
    # a hand-edited number breaks the cell's content hash: listed as damaged, its values never published
    cell = out / "metrics/small/none/W6.json"
    cell.write_text(cell.read_text().replace('"estimate":', '"estimate": 1.0, "was":', 1))
    res = R.load_experiment(out)
    assert res.metrics == [] and sorted((f["calibration"], f["type"]) for f in res.failures) == [
        ("none", "DamagedCell"), ("zca", "RuntimeError")]
    assert len(res.weat) == 2  # the WEAT cells are untouched
    failed = out / "metrics/small/zca/W6.json"  # a failed cell edited by hand is damaged too, not its error
    failed.write_text(failed.read_text().replace('"boom"', '"all fine"'))
    assert sorted((f["calibration"], f["type"]) for f in R.load_experiment(out).failures) == [
        ("none", "DamagedCell"), ("zca", "DamagedCell")]


# --------------------------------------------------------------------------- files, CLI, report
def test_metric_comparison_csv_is_written_and_escaped(grid, tmp_path):
    out, _, _ = grid
    rows = list(csv.DictReader(io.StringIO((out / "metric_comparison.csv").read_text())))
    res = R.load_experiment(out)
    assert [(r["metric"], r["conclusion"]) for r in rows] == [(r["metric"], r["conclusion"])
                                                               for r in res.metric_comparisons]
    assert math.isclose(float(rows[0]["estimate_raw"]), res.metric_comparisons[0]["estimate_raw"], rel_tol=1e-12)
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    res = R.load_experiment(copy)
    res.metric_comparisons[0]["test"] = "=HYPERLINK(1)"
    R.write_results(copy, res)
    text = (copy / "metric_comparison.csv").read_text()
    assert "'=HYPERLINK(1)" in text and ",=HYPERLINK" not in text


def test_cli_prints_the_metric_table_after_the_weat_table(grid, small, capsys):
    out, _, _ = grid
    assert main(["run", str(_config(small[0], small[1], METRICS)), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    weat_at, metrics_at = text.index("ID  Bias"), text.index("Calibration across metrics: small, raw vs zca")
    assert weat_at < metrics_at
    table = text[metrics_at:]
    res = R.load_experiment(out)
    lines = table.splitlines()
    changed = sum(r["conclusion"] == "changed" for r in res.metric_comparisons)
    judged = sum(r["conclusion"] in ("changed", "unchanged") for r in res.metric_comparisons)
    assert lines[0].endswith(f"({changed} of {judged} conclusions changed)") and judged == 3  # rnd, ripa, ect
    column = lines[1].index("Conclusion")
    raw_p = _rnd(_sets(small[2], small[3], False))[1]
    for r in res.metric_comparisons:
        line = next(x for x in lines if x.split()[:2] == ["W6", r["metric"]])
        cells = line.split()
        assert cells[2] == f"{r['estimate_raw']:.3f}"
        assert line[column:] == r["conclusion"] + (f" ({r['reason']})" if r["reason"] else "")  # left-aligned
        if r["metric"] in ("mac", "direct-bias"):  # no p-value
            assert cells[5:7] == ["-", "-"]
        if r["metric"] == "rnd":
            assert cells[5] == f"{raw_p:.4f}".removeprefix("0")
    assert "changed: significance at alpha = 0.05 differs" in table


def test_report_section_present_and_escaped(grid, small, tmp_path):
    from isoeat.reporting.html import render_report

    out, _, _ = grid
    res = R.load_experiment(out)
    res.metric_comparisons[0]["test"] = "<script>alert(1)</script>"
    page = render_report(res)
    assert "<h2 id='metrics'>Calibration across metrics</h2>" in page and "href='#metrics'" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert page.index("id='tables'") < page.index("id='metrics'") < page.index("id='figures'")
    # a folder without metrics has no such section
    plain = tmp_path / "plain"
    R.run_experiment(_config(small[0], small[1], None, "plain.yaml"), plain)
    assert "Calibration across metrics" not in render_report(R.load_experiment(plain))


def test_quick_run_takes_metrics_from_the_command_line(small, tmp_path, capsys):
    base, path, table, matrix = small
    out = tmp_path / "quick"
    assert main(["run", "--model", f"glove:{path}", "--tests", "W6", "--metrics", "mac,rnd",
                 "--reference-size", str(REF), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.index("ID  Bias") < text.index("Calibration across metrics:")
    res = R.load_experiment(out)
    got = {(r["calibration"], r["metric"]): r["estimate"] for r in res.metrics}
    assert got[("zca", "mac")] == pytest.approx(_mac(_sets(table, matrix, True)), abs=1e-9)
    assert main(["run", "--model", f"glove:{path}", "--tests", "W6", "--metrics", "mca"]) == 2
    err = capsys.readouterr().err
    assert "--metrics[0]: unknown metric 'mca'; did you mean mac" in err and len(err.strip().splitlines()) == 1


def test_seeds_follow_the_documented_rule(grid):
    """docs/metrics.md: metric m on test t draws from the stream (metric, m, t) of settings.seed in every space,
    recorded as the root seed and the stream's name; the stream's seed follows the manifest's rule."""
    out, _, _ = grid
    res = R.load_experiment(out)
    for cal in ("none", "zca"):
        cell = json.loads((out / "metrics" / "small" / cal / "W6.json").read_text())
        assert (cell["seed"], cell["seed_stream"]) == (0, ["metric", "*", "W6"])
        for r in (r for r in res.metrics if r["calibration"] == cal):
            assert (r["seed"], r["seed_stream"]) == (0, ["metric", r["metric"], "W6"])
    from isoeat._random import derive_seed

    from _streams import stream_seed  # the rule written out independently

    assert derive_seed(0, "metric", "rnd", "W6") == stream_seed(0, "metric", "rnd", "W6")


def test_planned_cells_draw_from_named_streams(tmp_path):
    """With 2 tests, 2 calibrations and 2 similarity benchmarks every cell names its own stream of the root seed:
    the metrics cell of test t (metric, *, t), the WEAT cell (weat, t), whatever the space (docs/metrics.md)."""
    from isoeat.experiments.cells import plan_cells

    cfg = parse_config({"models": ["glove-6b-50d"], "tests": ["W6", "W7"], "metrics": ["mac"], "settings": {"seed": 5},
                        "similarity": {"benchmarks": ["ws353", "simlex999"]}})
    cells = plan_cells(cfg, tmp_path)
    for t in ("W6", "W7"):
        for c in ("none", "zca"):
            m = next(x for x in cells if x.kind == "metrics" and x.item == t and x.calibration == c)
            w = next(x for x in cells if x.kind == "weat" and x.item == t and x.calibration == c)
            assert (m.stream, m.seed) == (("metric", "*", t), 5)
            assert (w.stream, w.seed) == (("weat", t), 5)
            assert m.key == f"glove-6b-50d/{c}/{t}/metrics" and m.path == tmp_path / "metrics" / "glove-6b-50d" / c / f"{t}.json"
    assert len({x.cell_hash for x in cells}) == len(cells)
