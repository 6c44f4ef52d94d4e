"""Defects found by an adversarial review, each pinned: unbounded inputs and late user errors."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import isoeat
from isoeat.cli import main


def _one_line_error(capsys, *args) -> str:
    assert main(list(args)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("isoeat: error: ") and "Traceback" not in err
    return err


def test_a_fifo_given_as_whitener_is_refused_at_once(tmp_path):
    fifo = tmp_path / "w.npz"
    os.mkfifo(fifo)
    r = subprocess.run([sys.executable, "-m", "isoeat.cli", "weat", "--test", "W6", "--whitener", str(fifo)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "not a regular file (a FIFO)" in r.stderr


def test_a_calibrator_announcing_huge_arrays_is_refused_before_loading(tmp_path, capsys):
    w = isoeat.ZCAWhitener().fit(np.random.default_rng(0).normal(size=(100, 5)))
    p = isoeat.save_whitener(w, tmp_path / "ok.npz")
    with np.load(p) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["whitening_"] = np.zeros((600, 600))  # the header says 600 x 600 for a 5-dimensional calibrator
    np.savez(tmp_path / "bomb.npz", **arrays)
    with pytest.raises(isoeat.DataFormatError, match=r"announces shape \(600, 600\).*refused before loading"):
        isoeat.load_calibrator(tmp_path / "bomb.npz")


def test_run_with_another_models_calibrator_is_a_user_error_before_any_folder(tmp_path, glove, capsys):
    words = list(glove.words[:3000])
    np.save(tmp_path / "m.npy", np.array(glove.lookup(words).vectors, dtype=np.float32) * 2 + 0.1)
    (tmp_path / "m.vocab").write_text("\n".join(words) + "\n")
    assert main(["whiten", "--out", str(tmp_path / "g.npz"), "--reference-size", "2000"]) == 0
    capsys.readouterr()
    out = tmp_path / "out"
    err = _one_line_error(capsys, "run", "--model", f"npy:{tmp_path / 'm.npy'},{tmp_path / 'm.vocab'}",
                          "--tests", "W6", "--whitener", str(tmp_path / "g.npz"), "--out", str(out))
    assert "--force" in err and not out.exists()


def test_word_set_files_are_bounded(tmp_path, capsys):
    long = tmp_path / "long.yaml"
    long.write_text("id: L\nX: [" + "a" * (2 << 20) + "]\n")
    assert "line longer than 1 MiB" in _one_line_error(capsys, "weat", "--test", str(long))
    big = tmp_path / "big.yaml"
    with open(big, "w") as fh:
        for _ in range(20):
            fh.write(("# " + "x" * 1000 + "\n") * 1000)
    assert "at most 16 MiB" in _one_line_error(capsys, "weat", "--test", str(big))


def test_a_word2vec_binary_holding_more_than_its_header_says_is_refused(tmp_path, capsys):
    vecs = np.random.default_rng(0).normal(size=(4, 3)).astype("<f4")
    with open(tmp_path / "v.bin", "wb") as fh:
        fh.write(b"2 3\n")
        for w, v in zip(["he", "she", "cat", "dog"], vecs):
            fh.write(w.encode() + b" " + v.tobytes() + b"\n")
    err = _one_line_error(capsys, "weat", "--test", "W6", "--model", f"word2vec:{tmp_path / 'v.bin'}")
    assert "continues after the 2 vectors its header announces" in err


def test_monte_carlo_is_bounded_in_time_too(glove, capsys):
    err = _one_line_error(capsys, "weat", "--test", "W3", "--method", "monte-carlo", "--permutations",
                          "100000000000000000")
    assert "at most 1,000,000,000 Monte Carlo permutations" in err
