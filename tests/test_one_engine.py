"""One engine: a cell reached by two commands is the same cell (same sample, same seed, same numbers),
and labels never share a file (issue 30).

Every number below is compared across commands, not with a pinned value: the WEAT numbers themselves are checked
against from-scratch computations elsewhere (test_readme_run.py, test_mutation_kills_stats.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import isoeat
from isoeat.cli import main
from isoeat.experiments import runner as R
from isoeat.experiments.config import parse_config

MC = {"method": "monte-carlo", "permutations": 3000}  # every p sampled: a seed that differed would show


def _grid(tests, **settings):
    return parse_config({"models": [{"spec": "glove-6b-50d", "label": "g"}], "tests": tests,
                         "calibrations": ["none", "zca"], "settings": {"seed": 5, **MC, **settings},
                         "anisotropy": {"sample": 500, "components": 10}, "metrics": ["rnd", "nas"]})


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    out = tmp_path_factory.mktemp("engine") / "out"
    assert R.run_experiment(_grid(["W1", "W3", "W6"]), out).ok
    return R.load_experiment(out), out


def _weat(res, cal, test):
    return next(r for r in res.weat if r["calibration"] == cal and r["test"] == test)


def test_a_weat_cell_is_the_same_through_every_command(grid, glove, capsys):
    res, out = grid
    zca = isoeat.load_calibrator(out / "calibrators" / "g" / "zca.npz")
    comp = isoeat.compare_calibration(glove, ["W3", "W6"], calibration=zca, rng=5, method="monte-carlo",
                                      n_permutations=3000)
    for row in comp.rows:
        for cal, r in (("none", row.raw), ("zca", row.calibrated)):
            cell = _weat(res, cal, row.test)
            assert (cell["effect_size"], cell["p_value"], cell["seed"]) == (r.effect_size, r.p_value, r.seed)
            assert cell["seed_stream"] == list(r.seed_stream) == ["weat", row.test]
    # the stand-alone command and the Python function, with the same root seed
    one = isoeat.weat(glove, "W3", rng=5, method="monte-carlo", n_permutations=3000)
    assert (one.effect_size, one.p_value) == (_weat(res, "none", "W3")["effect_size"], _weat(res, "none", "W3")["p_value"])
    assert main(["weat", "--test", "W3", "--seed", "5", "--method", "monte-carlo", "--permutations", "3000",
                 "--calibration", "none", "--format", "json"]) == 0
    (cli,) = json.loads(capsys.readouterr().out)
    assert (cli["effect_size"], cli["p_value"]) == (one.effect_size, one.p_value)


def test_a_cell_does_not_move_with_the_rest_of_the_grid(grid, tmp_path):
    """The same test in a grid of other tests (W3 alone, first instead of second) gives the same numbers,
    and so does the isotropy check (it used to move with the test list: 0.011, 0.012 or 0.013)."""
    res, _ = grid
    alone = tmp_path / "alone"
    assert R.run_experiment(_grid(["W3"]), alone).ok
    other = R.load_experiment(alone)
    for cal in ("none", "zca"):
        a, b = _weat(res, cal, "W3"), _weat(other, cal, "W3")
        assert (a["effect_size"], a["p_value"]) == (b["effect_size"], b["p_value"])
    key = lambda rows: {r["calibration"]: (r["mean_cosine"], r["isoscore"]) for r in rows}  # noqa: E731
    assert key(res.anisotropy) == key(other.anisotropy)
    metric = lambda rs: {(r["calibration"], r["metric"]): r["p_value"] for r in rs if r["test"] == "W3"}  # noqa: E731
    assert metric(res.metrics) == metric(other.metrics)


def test_metric_p_values_are_the_same_in_run_and_in_the_metric_command(grid, capsys):
    """W1's RND p was 5.0e-05 in `isoeat metric` and 9.0e-05 in `isoeat run --metrics` (another seed); W3's p are
    moderate, so a different stream would show in the sampled p."""
    res, _ = grid
    assert main(["metric", "rnd,nas", "--test", "W3", "--seed", "5", "--method", "monte-carlo", "--permutations",
                 "3000", "--format", "json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    mine = {(r["calibration"], r["metric"]): (r["estimate"], r["p_value"]) for r in res.metrics if r["test"] == "W3"}
    theirs = {(r["calibration"], r["metric"]): (r["estimate"], r["p_value"]) for r in recs}
    assert set(mine) == set(theirs) == {(c, m) for c in ("none", "zca") for m in ("rnd", "nas")}
    assert mine == theirs and max(p for _, p in mine.values()) > 1e-2  # not all at the floor 1/(N+1)


def test_the_isotropy_check_is_the_anisotropy_command_on_the_same_frame(grid, capsys):
    res, _ = grid
    assert main(["anisotropy", "--seed", "5", "--samples", "500", "--top-k", "10", "--format", "json"]) == 0
    recs = {r["calibration"]: r for r in json.loads(capsys.readouterr().out)}
    for row in res.anisotropy:
        assert row["mean_cosine"] == pytest.approx(recs[row["calibration"]]["mean_cosine"], rel=1e-12, abs=1e-15)


def test_sensitivity_default_and_raw_rows_are_the_run_cells(grid, glove):
    from isoeat.experiments.sensitivity import sensitivity_analysis

    res, _ = grid
    sens = sensitivity_analysis(glove, ["W3"], eps=[1e-2], reference_sizes=None, repeats=1, rng=5,
                                method="monte-carlo", n_permutations=3000)
    rows = {r.kind: r for r in sens.rows if r.kind in ("raw", "default")}
    for kind, cal in (("raw", "none"), ("default", "zca")):
        cell = _weat(res, cal, "W3")
        assert (rows[kind].effect_size, rows[kind].p_value) == (cell["effect_size"], cell["p_value"])


def test_auto_reference_check_measures_the_pool_the_calibrator_was_fitted_on(glove, tmp_path, capsys):
    """With --reference-size auto the calibrator is fitted on a random subset of the top max rows; the check used
    to measure the top rows instead. Here the check's sample is rebuilt from the recorded spec by hand."""
    from isoeat.diagnostics.anisotropy import cosine_stats

    from _streams import stream_seed

    out = tmp_path / "auto"
    assert main(["run", "--tests", "W6", "--reference-size", "auto", "--reference-max", "20000", "--seed", "3",
                 "--frame", "reference",
                 "--reference-tolerance", "1",
                 "--out", str(out), "--format", "json"]) == 0
    capsys.readouterr()
    cal = isoeat.load_calibrator(out / "calibrators" / "glove-6b-50d" / "zca.npz")
    spec = cal.metadata_["reference_spec"]
    assert (spec["draw"], spec["pool"], spec["stream"]) == ("subset", 20000, ["reference-shards"])
    used = spec["size"]
    assert used == cal.n_samples_seen_ < 20000
    # the fitted rows by hand: the top 20000, in the order of the stream reference-shards of seed 3, first `used`
    order = np.random.default_rng(stream_seed(3, "reference-shards")).permutation(20000)
    fitted = np.asarray(glove.vectors[:20000], dtype=float)[order[:used]]
    mean = fitted.mean(axis=0)
    assert np.allclose(cal.mean_, mean, atol=1e-12)
    # the check: 2,000 of those rows, by the stream anisotropy/reference of seed 3
    pick = np.sort(np.random.default_rng(stream_seed(3, "anisotropy", "reference")).choice(used, 2000, replace=False))
    (raw,) = [a for a in R.load_experiment(out).anisotropy if a["calibration"] == "none"]
    assert raw["sample_mean_cosine"] == pytest.approx(cosine_stats(fitted[pick])[0], rel=1e-9)
    # the mean over the whole pool is exact: all pairs of the fitted rows, (|sum u|^2 - N) / (N (N - 1))
    u = fitted / np.linalg.norm(fitted, axis=1, keepdims=True)
    s = u.sum(axis=0)
    assert raw["mean_cosine"] == pytest.approx((s @ s - used) / (used * (used - 1)), rel=1e-9)


# --------------------------------------------------------------------------- labels and file names
def _tiny_model(path: Path, glove, shift: float) -> str:
    """A GloVe-format text of the built-in test words and 3,000 frequent words, every vector moved by ``shift``."""
    words = list(dict.fromkeys([*glove.words[:3000], *(w.lower() for t in isoeat.list_tests()
                                                       for ws in t.sets().values() for w in ws.words)]))
    lk = glove.lookup(words)
    rng = np.random.default_rng(1)
    with path.open("w", encoding="utf-8") as fh:
        for w, v in zip(lk.found, lk.vectors):
            fh.write(w + " " + " ".join(f"{x:.6f}" for x in v + shift * rng.normal(size=v.shape)) + "\n")
    return f"glove:{path}"


def test_an_escaped_label_and_its_literal_twin_keep_their_own_results(glove, tmp_path):
    """`z 1` (escaped) beside a model labelled with the old escape of `z 1` wrote both to one folder."""
    other = _tiny_model(tmp_path / "other.txt", glove, shift=0.5)
    cfg = parse_config({"models": [{"spec": "glove-6b-50d", "label": "z 1"}, {"spec": other, "label": "z_1-2e22fb"},
                                   {"spec": other, "label": "z_1+2e22fb0583"}],
                        "tests": ["W6"], "calibrations": ["none"], "settings": {"permutations": 1000}})
    out = tmp_path / "out"
    assert R.run_experiment(cfg, out).ok
    d = {r["model"]: r["effect_size"] for r in R.load_experiment(out).weat}
    assert d["z 1"] == isoeat.weat(glove, "W6").effect_size
    mine = isoeat.weat(isoeat.load_model(other), "W6").effect_size
    assert d["z_1-2e22fb"] == d["z_1+2e22fb0583"] == mine != d["z 1"]
    assert len({p.parent.parent for p in (out / "cells").rglob("W6.json")}) == 3


def test_labels_that_differ_only_in_case_are_refused_before_anything_is_written(tmp_path):
    cfg = parse_config({"models": [{"spec": "glove-6b-50d", "label": "GloVe"}, {"spec": "glove-6b-50d",
                                                                                "label": "glove"}], "tests": ["W6"]})
    out = tmp_path / "out"
    with pytest.raises(isoeat.ConfigError, match="model labels 'GloVe' and 'glove' differ only in case"):
        R.run_experiment(cfg, out)
    assert not out.exists()


def test_a_grid_that_grows_may_not_add_a_case_twin_of_a_label_the_folder_holds(tmp_path):
    out = tmp_path / "out"
    base = {"tests": ["W6"], "calibrations": ["none"], "settings": {"permutations": 1000}}
    assert R.run_experiment(parse_config({"models": [{"spec": "glove-6b-50d", "label": "GloVe"}], **base}), out).ok
    before = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file() and p.name != "manifest.json")
    with pytest.raises(isoeat.ConfigError, match="differ only in case"):
        R.run_experiment(parse_config({"models": [{"spec": "glove-6b-50d", "label": "GLOVE"}], **base}), out)
    after = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file() and p.name != "manifest.json")
    assert before == after


def test_an_over_long_label_gets_a_short_safe_name(glove, tmp_path):
    label = "model " + "x" * 300  # over the 255-byte limit of a file name
    cfg = parse_config({"models": [{"spec": "glove-6b-50d", "label": label}], "tests": ["W6"],
                        "calibrations": ["none"], "settings": {"permutations": 1000}})
    out = tmp_path / "out"
    assert R.run_experiment(cfg, out).ok
    (rec,) = R.load_experiment(out).weat
    assert rec["model"] == label and rec["effect_size"] == isoeat.weat(glove, "W6").effect_size
    assert max(len(p.name.encode()) for p in out.rglob("*")) <= 120


def test_cells_and_report_files_share_one_name_scheme():
    from isoeat._names import file_name
    from isoeat.experiments._store import slug
    from isoeat.reporting.paper_tables import safe_name

    assert slug is file_name and safe_name is file_name
