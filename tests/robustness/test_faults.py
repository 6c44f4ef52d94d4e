"""Faults: runs killed at random points resume to the same results; a full disk
leaves previous results intact; two processes share one embedding cache
safely; untrusted content is never executed (no pickle, safe YAML, no shell,
no remote code by default) and outputs stay inside the chosen folder.

KILL_RESUME_TRIALS seeded kill-and-resume trials (SIGKILL after a seeded number
of finished cells plus a seeded delay), CACHE_WRITERS concurrent cache writers x
CACHE_ROUNDS rounds over CACHE_KEYS keys.
"""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import isoeat
import isoeat._io
from isoeat.cli import main

KILL_RESUME_TRIALS = 3
CACHE_WRITERS = 2
CACHE_ROUNDS = 25
CACHE_KEYS = 8
SRC = Path(isoeat.__file__).resolve().parent

CONFIG = """\
models: [{spec: glove-6b-50d, label: G}]
tests: [W6, W7, W8, W9]
calibrations: [none, zca]
settings: {permutations: 20000, method: monte-carlo, seed: 3, reference: {size: 20000}}
"""
N_CELLS = 8


def _env(tmp: Path) -> dict:
    env = dict(os.environ)
    env.update(HOME=str(tmp / "home"), ISOEAT_CACHE_DIR=str(tmp / "cache"), MPLCONFIGDIR=str(tmp / "mpl"),
               PYTHONPATH=os.pathsep.join([str(SRC.parent), env.get("PYTHONPATH", "")]))
    return env


def _cmd(cfg: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "isoeat.cli", "run", str(cfg), "--out", str(out), "--no-progress"]


def _results(out: Path) -> dict:
    rows = json.loads((out / "results.json").read_text())
    return {(r["test"], r["calibration"]): (r["effect_size"], r["p_value"], r["n_permutations"]) for r in rows}


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory, glove):
    tmp = tmp_path_factory.mktemp("ref")
    (tmp / "home").mkdir()
    cfg = tmp / "c.yaml"
    cfg.write_text(CONFIG)
    r = subprocess.run(_cmd(cfg, tmp / "out"), env=_env(tmp), cwd=tmp / "home", capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    res = _results(tmp / "out")
    assert len(res) == N_CELLS
    return tmp, res


def _kill_mid_grid(cfg: Path, out: Path, tmp_path: Path, rnd: random.Random) -> int:
    """Start a run, SIGKILL it at a seeded point strictly inside the grid; the number of cells it finished.

    The process is first stopped (SIGSTOP), the finished cells counted, then
    killed: a stop that comes after the last cell does not count, and the trial
    starts again in a fresh folder, until a kill lands mid-grid.
    """
    import shutil

    for attempt in range(20):
        shutil.rmtree(out, ignore_errors=True)
        # the first attempt stops at a seeded point; when the machine is fast enough to finish the grid
        # before that point, later attempts stop as soon as the first cell is written
        k = rnd.randint(1, N_CELLS - 2) if attempt == 0 else 1
        delay = rnd.uniform(0.0, 0.4) if attempt == 0 else 0.0
        proc = subprocess.Popen(_cmd(cfg, out), env=_env(tmp_path), cwd=tmp_path / "home",
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if (out / "cells").exists() and len(list((out / "cells").rglob("*.json"))) >= k:
                break
            time.sleep(0.001)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGSTOP)
        done = len(list((out / "cells").rglob("*.json"))) if (out / "cells").exists() else 0
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        if 0 < done < N_CELLS and proc.returncode == -signal.SIGKILL:
            return done
    raise AssertionError("no kill landed mid-grid in 20 attempts")


@pytest.mark.parametrize("seed", range(KILL_RESUME_TRIALS))
def test_killed_run_resumes_to_same_results(tmp_path, reference_run, seed):
    _, expected = reference_run
    rnd = random.Random(seed)
    (tmp_path / "home").mkdir()
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG)
    out = tmp_path / "out"
    done = _kill_mid_grid(cfg, out, tmp_path, rnd)
    assert 0 < done < N_CELLS
    # no half-written file: every JSON that exists parses
    for p in out.rglob("*.json") if out.exists() else []:
        json.loads(p.read_text())
    r = subprocess.run(_cmd(cfg, out), env=_env(tmp_path), cwd=tmp_path / "home", capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert _results(out) == expected
    assert not list(out.rglob("*.tmp"))


# --- disk full -------------------------------------------------------------------------------------
def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("where", ["replace", "fsync"])
def test_disk_full_keeps_previous_file(tmp_path, monkeypatch, where):
    target = tmp_path / "results.json"
    target.write_text('{"old": true}')
    monkeypatch.setattr(isoeat._io.os, where, _enospc)
    with pytest.raises(OSError) as info:
        isoeat._io.atomic_write_text(target, '{"new": true, "padding": "' + "x" * 100_000 + '"}')
    assert info.value.errno == errno.ENOSPC
    monkeypatch.undo()
    assert target.read_text() == '{"old": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # no temporary file left


def _disk_full_rerun(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    cfg = tmp_path / "c.yaml"
    cfg.write_text("models: [glove-6b-50d]\ntests: [W6, W7]\ncalibrations: [none]\nsettings: {permutations: 200}\n")
    out = tmp_path / "out"
    assert main(["run", str(cfg), "--out", str(out)]) == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    monkeypatch.setattr(isoeat._io.os, "replace", _enospc)
    try:
        code = main(["run", str(cfg), "--out", str(out), "--overwrite", "all"])
    except OSError as exc:  # see test_disk_full_cli_one_line_error
        code = exc
    finally:
        monkeypatch.undo()
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    return code, capsys.readouterr().err, before, after, out


def test_disk_full_cli_rerun_keeps_previous_results(tmp_path, monkeypatch, capsys, glove):
    code, err, before, after, out = _disk_full_rerun(tmp_path, monkeypatch, capsys)
    assert code != 0
    assert not [p for p in after if p.name.endswith(".tmp")]
    for p in ("results.json", "results.csv", "comparison.json", "manifest.json", "experiment.json"):
        assert after[out / p] == before[out / p], p  # previous results intact


def test_disk_full_cli_one_line_error(tmp_path, monkeypatch, capsys, glove):
    code, err, _, _, _ = _disk_full_rerun(tmp_path, monkeypatch, capsys)
    assert code == 2 or code == 1
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("isoeat: error: ") and "No space left on device" in last, err


# --- two processes on one cache --------------------------------------------------------------------
def _value(i: int) -> np.ndarray:
    return np.arange(300.0).reshape(100, 3) * (i + 1)


def _hammer(root: str, seed: int, q) -> None:
    import warnings

    from isoeat.backends.cache import EmbeddingCache

    warnings.simplefilter("error")
    c = EmbeddingCache(root, enabled=True)
    rnd = random.Random(seed)
    bad = 0
    try:
        for _ in range(CACHE_ROUNDS):
            i = rnd.randrange(CACHE_KEYS)
            got = c.get("static", {"model": "m", "key": i})
            if got is not None and not np.array_equal(got["vectors"], _value(i)):
                bad += 1
            c.put("static", {"model": "m", "key": i}, {"vectors": _value(i), "words": np.array([f"w{i}"])})
        q.put((seed, bad, c.corrupt))
    except BaseException as exc:  # report, do not hide
        q.put((seed, -1, repr(exc)))


def test_two_processes_share_a_cache(tmp_path):
    from isoeat.backends.cache import EmbeddingCache

    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_hammer, args=(str(tmp_path), s, q)) for s in range(CACHE_WRITERS)]
    for p in procs:
        p.start()
    reports = [q.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert all(bad == 0 and corrupt == 0 for _, bad, corrupt in reports), reports
    c = EmbeddingCache(tmp_path, enabled=True)
    for i in range(CACHE_KEYS):
        got = c.get("static", {"model": "m", "key": i})
        if got is not None:
            np.testing.assert_array_equal(got["vectors"], _value(i))
            assert got["words"].tolist() == [f"w{i}"]
    assert c.corrupt == 0
    assert not list(tmp_path.rglob("*.tmp"))


# --- untrusted content -----------------------------------------------------------------------------
def _sources():
    return {p: p.read_text("utf-8") for p in SRC.rglob("*.py")}


#: The one pickle load allowed: reporting/_render.py round-trips an object it has just pickled itself (a warning or an
#: error of a forked drawing process, to know it can cross the pipe to the parent), never bytes read from anywhere.
_ROUND_TRIP = "pickle.loads(pickle.dumps("


def test_no_pickle_anywhere():
    for p, text in _sources().items():
        if p.name == "_render.py":
            text = text.replace(_ROUND_TRIP, "")
        assert not re.search(r"allow_pickle\s*=\s*True", text), p
        assert not re.search(r"\bpickle\.loads?\(|\bcPickle\b|\bdill\b|\bjoblib\.load\(", text), p
        assert "torch.load(" not in text or "weights_only=True" in text, p


def test_yaml_only_safe_loaders():
    for p, text in _sources().items():
        for m in re.finditer(r"yaml\.(load|unsafe_load|full_load|load_all)\(([^\n]*)", text):
            assert m.group(1) == "load" and re.search(r"Loader=(yaml\.SafeLoader|yaml\.CSafeLoader|_UniqueKeyLoader\.make\(\))", m.group(2)), (p, m.group(0))
    # the custom loader really is a SafeLoader
    import yaml

    from isoeat.experiments.config import _UniqueKeyLoader
    assert issubclass(_UniqueKeyLoader.make(), yaml.SafeLoader)


def test_no_shell_and_no_eval():
    for p, text in _sources().items():
        assert not re.search(r"shell\s*=\s*True", text), p
        assert not re.search(r"\bos\.system\(|\bos\.popen\(|(?<![\w.])eval\(|(?<![\w.])exec\(", text), p


def test_trust_remote_code_off_by_default():
    for p, text in _sources().items():
        for m in re.finditer(r"trust_remote_code\s*=\s*([^,)\n]+)", text):
            assert m.group(1).strip() in ("False", "trust_remote_code", "bool(trust_remote_code)"), (p, m.group(0))
    import inspect

    from isoeat.backends import sentence, transformer
    for mod in (sentence, transformer):
        for _, obj in inspect.getmembers(mod, inspect.isclass):
            if obj.__module__ != mod.__name__:
                continue
            try:
                params = inspect.signature(obj).parameters
            except (TypeError, ValueError):
                continue
            if "trust_remote_code" in params:
                assert params["trust_remote_code"].default is False, obj


def test_model_spec_taken_literally(tmp_path, capsys, glove):
    marker = tmp_path / "pwned"
    code = main(["weat", "--test", "W6", "--model", f"glove:$(touch {marker})"])
    assert code == 2 and not marker.exists()
    code = main(["weat", "--test", "W6", "--model", f"glove:{tmp_path}/a;touch {marker}"])
    assert code == 2 and not marker.exists()
    assert "Traceback" not in capsys.readouterr().err


def test_outputs_confined_to_out_folder(tmp_path, glove):
    """Labels and test ids with '../' still write only inside --out (and the cache folder)."""
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    cfg = tmp_path / "cfg" / "c.yaml"
    cfg.parent.mkdir()
    cfg.write_text('models: [{spec: glove-6b-50d, label: "../../../esc/ape"}]\ntests: [W6]\n'
                   "calibrations: [none, zca]\nsettings: {permutations: 200, reference: {size: 5000}}\n")
    out = tmp_path / "deep" / "out"
    r = subprocess.run(_cmd(cfg, out), env=_env(tmp_path), cwd=tmp_path / "work", capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    allowed = (out, tmp_path / "cache", tmp_path / "home", tmp_path / "mpl")
    stray = [p for p in tmp_path.rglob("*") if p.is_file() and p != cfg
             and not any(p.resolve().is_relative_to(a.resolve()) for a in allowed)]
    assert stray == []
    for p in out.rglob("*"):
        assert p.resolve().is_relative_to(out.resolve())
    assert not list((tmp_path / "work").iterdir())
