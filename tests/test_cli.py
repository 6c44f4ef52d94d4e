"""The `isoeat` command end to end on the bundled GloVe 6B 50d, and its error paths."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest

from isoeat.cli import main


def _run(*args, cwd=None):
    env = dict(os.environ)
    return subprocess.run(
        [sys.executable, "-m", "isoeat.cli", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


@pytest.fixture(scope="module")
def run_out(tmp_path_factory, glove):
    out = tmp_path_factory.mktemp("run")
    proc = _run("run", "--out", str(out / "res"))
    return proc, out / "res"


def test_run_default_prints_table_a1(run_out):
    proc, _ = run_out
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("glove-6b-50d: raw (R) vs ZCA-whitened (W); eps=0.001")
    ids = [ln.split()[0] for ln in lines if ln[:1] == "W"]
    assert ids == [f"W{i}" for i in range(1, 11)]
    assert "Certified (p = upper end of a bracket that holds the exact p) for: W3_R [" in proc.stdout
    assert "W3_W [" in proc.stdout and "; exact elsewhere." in proc.stdout
    assert "Traceback" not in proc.stderr


def test_run_writes_csv_and_json(run_out, glove, glove_zca):
    import isoeat

    _, out = run_out
    records = json.loads((out / "results.json").read_text())
    assert len(records) == 20
    for key in ("test", "model", "calibration", "effect_size", "statistic", "p_value", "p_method", "n_permutations"):
        assert all(key in r for r in records)
    assert {r["calibration"] for r in records} == {"none", "zca"}
    # the command's numbers are the library's numbers
    w6 = {r["calibration"]: r for r in records if r["test"] == "W6"}
    lib = isoeat.weat(glove, "W6", calibration=glove_zca)
    assert w6["zca"]["effect_size"] == pytest.approx(lib.effect_size, abs=1e-12)
    assert w6["zca"]["p_value"] == pytest.approx(lib.p_value) and w6["zca"]["p_method"] == "exact"
    rows = list(csv.DictReader((out / "comparison.csv").open()))
    assert [r["test"] for r in rows] == [f"W{i}" for i in range(1, 11)]
    assert {r["change"] for r in rows} <= {"Stable", "Disappearing", "Emerging"}
    # the run folder is an experiment folder: the calibrator is recorded in its manifest
    calibrator = json.loads((out / "manifest.json").read_text())["calibrators"]["glove-6b-50d/zca"]
    assert calibrator["n"] == 100_000 and calibrator["model_fingerprint"] == glove.fingerprint
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temp files left


def test_tests_command(capsys):
    assert main(["tests"]) == 0
    out = capsys.readouterr().out
    assert "W9" in out and "Mental vs. physical disease" in out and "none-stated" in out
    assert main(["tests", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [t["id"] for t in data][:10] == [f"W{i}" for i in range(1, 11)]


def test_weat_command_json(capsys, glove):
    assert main(["weat", "--test", "W7", "--calibration", "zca", "--format", "json"]) == 0
    raw, rec = json.loads(capsys.readouterr().out)  # the raw space beside the calibrated one
    assert raw["calibration"] == "none" and raw["test"] == "W7"
    assert rec["test"] == "W7" and rec["calibration"] == "zca" and rec["p_method"] == "exact"
    assert rec["n_permutations"] == 12870


def test_weat_command_user_file(tmp_path, capsys, glove):
    p = tmp_path / "mine.yaml"
    p.write_text("id: flowers-small\nbias_type: Valence\nX: [rose, tulip, daisy]\nY: [ant, flea, wasp]\n"
                 "A: [love, peace, joy]\nB: [hatred, war, agony]\n")
    assert main(["weat", "--test", str(p), "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("test,") and "flowers-small" in out


def test_whiten_then_reuse(tmp_path, capsys, glove):
    w = tmp_path / "glove.npz"
    assert main(["whiten", "--save", str(w), "--reference-size", "20000"]) == 0
    assert w.exists() and "saved ZCA whitener for glove-6b-50d" in capsys.readouterr().out
    assert main(["weat", "--test", "W6", "--calibrator", str(w), "--format", "json"]) == 0
    raw, rec = json.loads(capsys.readouterr().out)
    assert raw["calibration"] == "none" and rec["calibration"] == "zca"
    old = tmp_path / "old.npz"  # the older spellings still work: whiten --out, --whitener
    assert main(["whiten", "--out", str(old), "--reference-size", "20000"]) == 0 and old.exists()
    capsys.readouterr()
    assert main(["weat", "--test", "W6", "--whitener", str(old), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [raw, rec]  # the same fit, the same numbers


@pytest.mark.parametrize(
    "args, match",
    [
        (["weat", "--test", "W11"], "unknown test id 'W11'; did you mean W1"),
        (["weat", "--test", "W6", "--model", "glove-6b-5Od"], "did you mean glove-6b-50d"),
        (["weat", "--test", "/nonexistent/t.yaml"], "no such file"),
        (["weat", "--test", "W6", "--model", "glove:/nonexistent/v.txt"], "no such file"),
        (["weat", "--test", "W6", "--whitener", "/nonexistent/w.npz"], "no such calibrator file"),
        (["run", "--tests", "W1,W1"], "more than once"),
    ],
)
def test_user_errors_are_one_line(capsys, args, match):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("isoeat: error: ") and match in err and err.count("\n") == 1


def test_argument_errors_name_the_parameter():
    proc = _run("run", "--permutations", "0")
    assert proc.returncode == 2 and "--permutations must be a positive integer" in proc.stderr
    proc = _run("weat", "--test", "W6", "--alternative", "bigger")
    assert proc.returncode == 2 and "--alternative" in proc.stderr and "Traceback" not in proc.stderr


def test_whitener_of_other_dimension_refused(tmp_path, capsys, glove):
    import numpy as np

    import isoeat

    w = isoeat.ZCAWhitener().fit(np.random.default_rng(0).normal(size=(100, 3)))
    p = isoeat.save_whitener(w, tmp_path / "w3.npz")
    assert main(["weat", "--test", "W6", "--whitener", str(p)]) == 2
    assert "dimension 3" in capsys.readouterr().err


def test_broken_vector_file_names_line(tmp_path, capsys):
    p = tmp_path / "v.txt"
    p.write_text("king 1 2 3\nqueen 1 2\n")
    assert main(["weat", "--test", "W6", "--model", f"glove:{p}"]) == 2
    assert "v.txt:2: word 'queen' has 2 values, expected 3" in capsys.readouterr().err
