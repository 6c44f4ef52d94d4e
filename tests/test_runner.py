"""The experiment runner end to end on the bundled GloVe 6B 50d: cells, resume, kill, lock, failures, manifest."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import isoeat
from isoeat.experiments import runner as R
from isoeat.experiments.config import load_config, parse_config

SMALL = """\
name: small
models: [{spec: glove-6b-50d, label: GloVe}]
tests: [W6, W7]
calibrations: [none, zca]
settings: {permutations: 2000, seed: 0}
"""

# Monte Carlo everywhere with many permutations: each cell takes a fraction of a second, long enough
# to kill the process between two cells.
SLOW = """\
name: slow
models: [glove-6b-50d]
tests: [W1, W2, W3, W4, W5, W6, W7, W8]
settings: {permutations: 150000, method: monte-carlo, seed: 3}
"""


def _cfg(tmp_path: Path, text: str, name: str = "exp.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _cli(*args, cwd, **kw):
    return subprocess.run([sys.executable, "-m", "isoeat.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=dict(os.environ), timeout=300, **kw)


def _cells(out: Path) -> dict[str, Path]:
    return {str(p.relative_to(out)): p for p in sorted((out / "cells").rglob("*.json"))}


def _results(out: Path) -> list[dict]:
    return json.loads((out / "results.json").read_text())


@pytest.fixture(scope="module")
def small_run(tmp_path_factory, glove):
    base = tmp_path_factory.mktemp("runner")
    cfg = _cfg(base, SMALL)
    summary = R.run_experiment(cfg, base / "out")
    return cfg, base / "out", summary


def test_small_grid_end_to_end(small_run, glove, glove_zca):
    _, out, summary = small_run
    assert summary.ok and (summary.total, summary.computed, summary.reused) == (4, 4, 0)
    assert sorted(_cells(out)) == ["cells/GloVe/none/W6.json", "cells/GloVe/none/W7.json",
                                   "cells/GloVe/zca/W6.json", "cells/GloVe/zca/W7.json"]
    for name in ("experiment.json", "config.yaml", "manifest.json", "results.csv", "results.json", "comparison.csv",
                 "comparison.json", "summary.json", "failures.json", "calibrators/GloVe/zca.npz",
                 "tables/table_a1-zca.md", "tables/table_a1-zca.tex", "tables/table_a1-zca.csv",
                 "tables/summary-zca.md"):
        assert (out / name).exists(), name
    assert not (out / ".isoeat.lock").exists()
    assert not [p for p in out.rglob(".*.tmp")]
    # the numbers are the library's: the grid reproduces compare_calibration (same seeds) bit for bit
    comp = isoeat.compare_calibration(glove, ["W6", "W7"], calibration=glove_zca, rng=0, n_permutations=2000)
    rows = {r["test"]: r for r in json.loads((out / "comparison.json").read_text())}
    for row in comp.rows:
        mine = rows[row.test]
        assert mine["d_raw"] == row.raw.effect_size and mine["d_calibrated"] == row.calibrated.effect_size
        assert mine["p_raw"] == row.raw.p_value and mine["p_calibrated"] == row.calibrated.p_value
        assert mine["p_holm_raw"] == pytest.approx(row.raw.p_holm) and mine["change"] == row.change
    cell = json.loads((out / "cells/GloVe/zca/W6.json").read_text())
    assert cell["status"] == "ok" and cell["seed"] == cell["result"]["seed"] == 0
    assert cell["seed_stream"] == cell["result"]["seed_stream"] == ["weat", "W6"]
    assert cell["model_fingerprint"] == glove.fingerprint and len(cell["result"]["s_x"]) == 8
    cos = cell["cosines"]
    assert np.asarray(cos["X_AB"]).shape == (8, 16) and cos["A_name"] == "Career"
    # the stored cosines are those of the whitened space
    lk = glove.lookup(["John"])
    a = glove.lookup(["executive"])
    zj, za = glove_zca.transform(lk.vectors)[0], glove_zca.transform(a.vectors)[0]
    assert cos["X_AB"][0][0] == pytest.approx(zj @ za / np.linalg.norm(zj) / np.linalg.norm(za), abs=1e-6)


def test_manifest_records_versions_fingerprints_seeds_and_durations(small_run, glove):
    _, out, _ = small_run
    m = json.loads((out / "manifest.json").read_text())
    assert m["isoeat_version"] == isoeat.__version__ and m["environment"]["python"] == sys.version.split()[0]
    assert m["packages"]["numpy"] == np.__version__
    assert m["models"]["GloVe"]["fingerprint"] == glove.fingerprint and m["models"]["GloVe"]["family"] == "static"
    cal = m["calibrators"]["GloVe/zca"]
    assert cal["n"] == 100_000 and cal["params"] == {"eps": 0.001, "eps_mode": "absolute"}
    assert cal["eps"] == 0.001 and cal["eps_mode"] == "absolute" and cal["eps_relative"] is None
    assert m["config"]["settings"]["permutations"] == 2000 and m["seeds"]["root"] == 0
    assert m["tests"]["W6"]["words_sha256"]
    run = m["runs"][0]  # the fixture's run (a test of this module may have rerun into the folder since)
    assert run["status"] == "finished" and run["started"] <= run["ended"] and run["computed"] == 4
    cells = m["cells"]["list"]
    assert len(cells) == 4 and all(c["duration_s"] >= 0 and isinstance(c["seed"], int) for c in cells)
    assert {c["seed"] for c in cells} == {0}  # the root; each cell its own stream, raw and calibrated alike
    assert sorted(tuple(c["seed_stream"]) for c in cells) == [("weat", "W6")] * 2 + [("weat", "W7")] * 2


def test_rerun_reuses_every_cell_without_rewriting(small_run):
    cfg, out, _ = small_run
    before = {k: (p.stat().st_mtime_ns, p.stat().st_ino) for k, p in _cells(out).items()}
    s = R.run_experiment(cfg, out)
    assert (s.computed, s.reused) == (0, 4)
    assert {k: (p.stat().st_mtime_ns, p.stat().st_ino) for k, p in _cells(out).items()} == before
    m = json.loads((out / "manifest.json").read_text())
    assert [r["reused"] for r in m["runs"]][-1] == 4 and m["calibrators"]["GloVe/zca"]["reused"] in (False, True)


def test_grid_grows_and_reuses_the_saved_calibrator(tmp_path, glove):
    cfg = _cfg(tmp_path, SMALL)
    out = tmp_path / "out"
    R.run_experiment(cfg, out)
    first = {k: p.stat().st_mtime_ns for k, p in _cells(out).items()}
    notes: list[str] = []
    bigger = _cfg(tmp_path, SMALL.replace("[W6, W7]", "[W6, W7, W10]"))
    s = R.run_experiment(bigger, out, log=notes.append)
    assert (s.computed, s.reused) == (2, 4)
    assert all(_cells(out)[k].stat().st_mtime_ns == v for k, v in first.items())
    assert any("reusing calibrator zca" in n for n in notes)
    assert json.loads((out / "manifest.json").read_text())["calibrators"]["GloVe/zca"]["reused"] is True
    # --overwrite all recomputes everything
    s = R.run_experiment(bigger, out, overwrite="all")
    assert (s.computed, s.reused) == (6, 0)


def test_folder_of_another_experiment_is_refused(tmp_path, glove):
    out = tmp_path / "out"
    R.run_experiment(_cfg(tmp_path, SMALL), out)
    other = _cfg(tmp_path, SMALL.replace("permutations: 2000", "permutations: 3000"), "other.yaml")
    with pytest.raises(R.ExperimentMismatchError, match=r"another experiment.*settings\.permutations: 2000"):
        R.run_experiment(other, out)
    proc = _cli("run", str(other), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 2 and "--overwrite all" in proc.stderr and "Traceback" not in proc.stderr
    s = R.run_experiment(other, out, overwrite="all")
    assert s.computed == 4
    assert json.loads((out / "experiment.json").read_text())["config"]["settings"]["permutations"] == 3000
    # a non-empty folder that is not an experiment
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(R.ExperimentMismatchError, match="not empty"):
        R.run_experiment(_cfg(tmp_path, SMALL), foreign)
    R.run_experiment(_cfg(tmp_path, SMALL), foreign, overwrite="all")
    assert (foreign / "notes.txt").read_text() == "mine"  # never deletes what is not isoeat's


def test_lock_refuses_a_second_run_and_takes_over_a_stale_one(tmp_path, glove):
    cfg = _cfg(tmp_path, SMALL)
    out = tmp_path / "out"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from isoeat.experiments.lock import DirLock; "
                               "DirLock(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(60)", str(out)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(R.ExperimentLockedError, match=f"pid {holder.pid}"):
            R.run_experiment(cfg, out)
    finally:
        holder.kill()
        holder.wait()
    # now the PID is dead: the lock is stale and taken over with a warning
    with pytest.warns(isoeat.IsoeatWarning, match="stale lock"):
        s = R.run_experiment(cfg, out)
    assert s.ok and not (out / ".isoeat.lock").exists()


def _wait_for(pred, timeout=60.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pred():
            return True
        time.sleep(0.01)
    return False


def test_kill_mid_grid_then_resume_equals_an_uninterrupted_run(tmp_path, glove):
    cfg = _cfg(tmp_path, SLOW)
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "isoeat.cli", "run", str(cfg), "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert _wait_for(lambda: (out / "cells").exists() and any((out / "cells").rglob("*.json"))), "no cell appeared"
        proc.send_signal(signal.SIGSTOP)  # hold it mid-grid, alive and holding the lock
        # a second run on the same folder meanwhile is refused
        second = _cli("run", str(cfg), "--out", str(out), cwd=tmp_path)
        assert second.returncode == 2 and "another isoeat run" in second.stderr, second.stderr
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    done = {k: (p.stat().st_mtime_ns, p.stat().st_ino, json.loads(p.read_text())["run_id"])
            for k, p in _cells(out).items()}
    assert 1 <= len(done) < 16, "the kill should land mid-grid"
    assert (out / ".isoeat.lock").exists()  # SIGKILL leaves the lock behind ...
    resumed = _cli("run", str(cfg), "--out", str(out), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "stale lock" in resumed.stderr  # ... which the rerun takes over
    after = _cells(out)
    assert len(after) == 16
    for k, (mtime, ino, run_id) in done.items():  # finished cells were not recomputed
        st = after[k].stat()
        assert (st.st_mtime_ns, st.st_ino) == (mtime, ino)
        assert json.loads(after[k].read_text())["run_id"] == run_id
    runs = json.loads((out / "manifest.json").read_text())["runs"]
    # the killed run could not record its end; the run that found it "running" under its lock marks it
    assert [r["status"] for r in runs] == ["interrupted", "finished"] and runs[0]["ended"] is None
    assert runs[1]["reused"] == len(done) and runs[1]["computed"] == 16 - len(done)
    # the final results equal those of an uninterrupted run
    clean = tmp_path / "clean"
    R.run_experiment(cfg, clean)
    assert _results(out) == _results(clean)
    assert json.loads((out / "comparison.json").read_text()) == json.loads((clean / "comparison.json").read_text())


def test_failing_cells_are_recorded_and_the_grid_goes_on(tmp_path, glove, monkeypatch):
    # a user test whose X set is mostly out of vocabulary: its cells fail with CoverageError
    (tmp_path / "bad.yaml").write_text(
        "id: BAD\nbias_type: Gender\nX: [qqzzxx, wwvvyy, doctor]\nY: [nurse, teacher, cook]\n"
        "A: [he, him, his]\nB: [she, her, hers]\n", encoding="utf-8")
    cfg = _cfg(tmp_path, SMALL.replace("[W6, W7]", "[W6, bad.yaml, W7]"))
    proc = _cli("run", "exp.yaml", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "2 cell(s) failed" in proc.stderr and "GloVe/none/BAD: CoverageError" in proc.stderr
    # a coverage failure fails again on a rerun: named with its remedy, never offered --overwrite failed
    assert "2 CoverageError cell(s) would fail again (too few of a set's words are in the model" in proc.stderr
    assert "--overwrite failed" not in proc.stderr and "Traceback" not in proc.stderr
    assert "W6" in proc.stdout  # the table of the cells that finished is printed
    out = tmp_path / "out"
    fails = json.loads((out / "failures.json").read_text())
    assert {f["item"] for f in fails} == {"BAD"} and fails[0]["type"] == "CoverageError"
    assert {r["test"] for r in _results(out)} == {"W6", "W7"}
    bad = json.loads((out / "cells/GloVe/zca/BAD.json").read_text())
    assert bad["status"] == "failed" and "qqzzxx" in bad["error"]["message"]
    # never: failed cells are kept (still exit 1); failed: they are retried
    again = _cli("run", "exp.yaml", "--out", "out", cwd=tmp_path)
    assert again.returncode == 1
    assert json.loads((out / "cells/GloVe/zca/BAD.json").read_text())["run_id"] == bad["run_id"]
    summary = R.run_experiment(cfg, out, overwrite="failed")
    assert summary.computed == 2 and summary.reused == 4 and len(summary.failed) == 2
    assert json.loads((out / "cells/GloVe/zca/BAD.json").read_text())["run_id"] != bad["run_id"]

    # an unexpected exception (a bug) in one cell: recorded with its traceback, the rest goes on
    real = R.compute_cell

    def flaky(engine, cell, *a):
        if cell.item == "W7" and cell.calibration == "zca":
            raise RuntimeError("boom")
        return real(engine, cell, *a)

    monkeypatch.setattr(R, "compute_cell", flaky)
    out2 = tmp_path / "out2"
    summary = R.run_experiment(_cfg(tmp_path, SMALL, "ok.yaml"), out2)
    assert [f["key"] for f in summary.failed] == ["GloVe/zca/W7"] and summary.computed == 4
    rec = json.loads((out2 / "cells/GloVe/zca/W7.json").read_text())
    assert rec["error"]["type"] == "RuntimeError" and "boom" in rec["error"]["traceback"]


def test_a_model_that_cannot_load_fails_only_its_cells(tmp_path, glove):
    (tmp_path / "broken.txt").write_text("hello 0.1 0.2\nworld 0.3\n", encoding="utf-8")
    cfg = _cfg(tmp_path, SMALL.replace("models: [{spec: glove-6b-50d, label: GloVe}]",
                                        "models: [{spec: 'glove:broken.txt', label: Broken}, "
                                        "{spec: glove-6b-50d, label: GloVe}]"))
    # relative model paths are the user's business: run from the config's folder
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        s = R.run_experiment(load_config(cfg), tmp_path / "out")
    finally:
        os.chdir(cwd)
    assert len(s.failed) == 4 and all(f["key"].startswith("Broken/") for f in s.failed)
    assert all(f["stage"] == "load model" and f["type"] == "DataFormatError" for f in s.failed)
    assert {r["model"] for r in _results(tmp_path / "out")} == {"GloVe"}


def test_progress_line_counts_cells_with_eta():
    buf = io.StringIO()
    p = R.Progress(4, True, buf)
    p.advance("a", seconds=1.0)
    p.advance("b", seconds=1.0)
    text = buf.getvalue()
    assert "[2/4]" in text and "50%" in text and "ETA 0:02" in text
    p.close()
    assert buf.getvalue().endswith("\n")
    quiet = io.StringIO()
    R.Progress(4, False, quiet).advance("a", seconds=1.0)
    assert quiet.getvalue() == ""


def test_seeds_are_named_streams_of_the_root_and_recorded(tmp_path):
    cfg = parse_config({"models": ["glove-6b-50d", {"spec": "glove-6b-50d", "label": "again"}],
                        "tests": ["W6", "W7"], "settings": {"seed": 11}})
    cells = R.plan_cells(cfg, tmp_path)
    first = [c for c in cells if c.model == "glove-6b-50d"]
    assert [(c.seed, c.stream) for c in first] == [(11, ("weat", t)) for cal in ("none", "zca")
                                                   for t in ("W6", "W7")]
    assert [c.stream for c in cells if c.model == "again"] == [c.stream for c in first]
    assert len({c.path for c in cells}) == len(cells)
    # a stream does not depend on the rest of the grid: W7 alone plans the same cell (same stream and hash)
    alone = R.plan_cells(parse_config({"models": ["glove-6b-50d"], "tests": ["W7"], "settings": {"seed": 11}}),
                         tmp_path)
    same = {(c.calibration, c.item): c.cell_hash for c in first}
    assert all(c.cell_hash == same[(c.calibration, c.item)] for c in alone)
