"""Exact anisotropy over a whole frame (isoeat.diagnostics.frame_cosine), the sample's SE, and one seed rule.

Expected values are computed here independently: the frame's mean pairwise cosine by a direct blockwise sum
of the off-diagonal entries of U U^T (never the Gram identity the code uses), the variance of a sample's pair
mean by enumerating every subset of a small frame, and the estimated SE against the spread over repeated
samples drawn here with numpy.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import isoeat
from isoeat.backends import StaticVectors
from isoeat.cli import main
from isoeat.diagnostics import compare_anisotropy
from isoeat.diagnostics import frame_cosine as fc


def _direct_mean_sd(V, block=1000):
    """Mean and population SD of the off-diagonal cosines of the rows of V, a block of rows at a time."""
    U = np.asarray(V, dtype=np.float64)
    U = U / np.linalg.norm(U, axis=1, keepdims=True)
    n = len(U)
    total = total_sq = 0.0
    for i in range(0, n, block):
        C = U[i:i + block] @ U.T
        for k in range(C.shape[0]):
            C[k, i + k] = 0.0            # the diagonal left out
        total += C.sum()
        total_sq += (C * C).sum()
    mean = total / (n * (n - 1))
    return mean, np.sqrt(total_sq / (n * (n - 1)) - mean**2)


def _pair_mean(C, idx):
    c = C[np.ix_(idx, idx)]
    n = len(idx)
    return (c.sum() - np.trace(c)) / (n * (n - 1))


def test_glove_top_10000_exact_mean_is_printed(glove, capsys):
    # issue 35: 2,000 sampled rows gave 0.2143 (old seed), while every pair of the 10,000 rows gives 0.21985
    mean, sd = _direct_mean_sd(glove.vectors[:10000])
    assert round(mean, 4) == 0.2199
    assert main(["anisotropy", "--calibration", "none", "--frame", "vocabulary-top:10000", "--format", "json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert rec["cosine_method"] == "exact" and rec["frame_size"] == 10000 and rec["mean_cosine_se"] == 0.0
    assert rec["mean_cosine"] == pytest.approx(mean, abs=1e-12) and rec["sd_cosine"] == pytest.approx(sd, abs=1e-12)
    assert rec["sample_mean_cosine"] != rec["mean_cosine"] and 0 < rec["sample_mean_cosine_se"] < 0.01
    assert main(["anisotropy", "--calibration", "none", "--frame", "vocabulary-top:10000"]) == 0
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith("raw"))
    assert row.split()[1] == "0.2199"
    assert "exact: over all N(N-1) off-diagonal pairs of the frame's N = 10,000 vectors" in out
    # issue 45: IsoScore and EVR are the frame's too (exact covariance); I(W) stays the sample's
    assert "IsoScore and EVR: exact, of the covariance of the frame's 10,000 vectors" in out
    assert "I(W) of the 2,000 sampled vectors (no SE)" in out


@pytest.mark.parametrize("weights", [None, [3, 1, 2, 1, 1, 1, 2, 1, 1]])
@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_pair_mean_variance_equals_every_subset(n, weights):
    g = np.random.default_rng(4)
    X = g.normal(size=(9, 3)) + 0.6
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    C = U @ U.T
    units = np.arange(9) if weights is None else np.repeat(np.arange(9), weights)  # token copies: cosine 1
    means = [_pair_mean(C, units[list(s)]) for s in itertools.combinations(range(len(units)), n)]
    m = fc.cosine_moments([(X, None if weights is None else np.array(weights))])
    assert m.count == len(units)
    assert m.mean == pytest.approx(np.mean(means), abs=1e-13)        # the pair mean is unbiased
    assert fc.pair_mean_variance(m, n) == pytest.approx(np.var(means), rel=1e-10, abs=1e-15)
    assert fc.pair_mean_variance(m, len(units)) == 0.0


def test_calibrated_and_token_frames_are_exact(tmp_path):
    g = np.random.default_rng(2)
    words = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(300)]
    m = StaticVectors(words, g.normal(size=(300, 5)) + 1.0, name="toy")
    cal = isoeat.fit_calibrator(m, "zca", n_reference=300)
    raw, white = compare_anisotropy(m, cal, n_samples=40, frame="vocabulary-top:250", rng=0)
    assert (raw.mean_cosine, raw.sd_cosine) == pytest.approx(_direct_mean_sd(m.vectors[:250]), abs=1e-12)
    Z = cal.transform(np.asarray(m.vectors[:250], dtype=np.float64))
    assert (white.mean_cosine, white.sd_cosine) == pytest.approx(_direct_mean_sd(Z), abs=1e-12)
    assert raw.n_samples == 40 and raw.frame_size == 250 and white.cosine_method == "exact"
    text = tmp_path / "t.txt"
    text.write_text(" ".join([words[1]] * 30 + [words[2]] * 20 + words[3:60]) + "\n")
    (tok,) = compare_anisotropy(m, n_samples=40, frame=f"corpus-tokens:{text}", rng=0)
    rows = [1] * 30 + [2] * 20 + list(range(3, 60))
    assert tok.frame_size == len(rows) and tok.cosine_method == "exact"
    assert tok.mean_cosine == pytest.approx(_direct_mean_sd(m.vectors[rows])[0], abs=1e-12)


def test_sample_se_over_repeated_samples():
    # the exact SE of the sample's mean (printed as "Sample mean +- SE") against 4,000 samples drawn here
    g = np.random.default_rng(7)
    V = g.normal(size=(600, 8)) + np.linspace(0, 1, 8)
    m = StaticVectors([f"w{i}" for i in range(600)], V, name="toy")
    (r,) = compare_anisotropy(m, n_samples=60, frame="vocabulary-all", rng=0)
    U = V / np.linalg.norm(V, axis=1, keepdims=True)
    C = U @ U.T
    means = np.array([_pair_mean(C, g.choice(600, 60, replace=False)) for _ in range(4000)])
    assert r.sample_mean_cosine_se == pytest.approx(means.std(), rel=0.05)     # MC error of an SD: 1.1% here
    # the SE estimated from one sample (frames over the budget): right on average, within 10%
    est = [fc.sample_mean_se(V[g.choice(600, 60, replace=False)], 600) for _ in range(400)]
    assert np.mean(est) == pytest.approx(means.std(), rel=0.10)


def test_over_the_budget_the_figures_are_the_sample_s_with_an_se(monkeypatch, glove, capsys):
    monkeypatch.setattr(fc, "EXACT_BUDGET", 10000 * 50**2 - 1)       # one multiply-add short of this frame
    (r,) = compare_anisotropy(glove, frame="vocabulary-top:10000", rng=0)
    assert r.cosine_method == "sampled" and r.mean_cosine == r.sample_mean_cosine
    assert r.mean_cosine_se == r.sample_mean_cosine_se and 0.001 < r.mean_cosine_se < 0.01
    assert main(["anisotropy", "--calibration", "none", "--frame", "vocabulary-top:10000"]) == 0
    assert "sampled: over the pairs of the N = 2,000 sampled vectors" in capsys.readouterr().out
    monkeypatch.setattr(fc, "EXACT_BUDGET", 10000 * 50**2)           # at the budget: exact
    assert compare_anisotropy(glove, frame="vocabulary-top:10000", rng=0)[0].cosine_method == "exact"


@pytest.mark.parametrize("seed", [0, 3])
def test_run_and_anisotropy_agree_on_the_same_frame(glove, tmp_path, capsys, seed):
    out = tmp_path / "run"
    assert main(["run", "--tests", "W6", "--seed", str(seed), "--out", str(out), "--format", "json"]) == 0
    capsys.readouterr()
    assert main(["anisotropy", "--seed", str(seed), "--format", "json"]) == 0
    alone = {r["calibration"]: r for r in json.loads(capsys.readouterr().out)}
    from isoeat.experiments.results import load_experiment

    in_run = {r["calibration"]: r for r in load_experiment(out).anisotropy}
    assert set(in_run) == set(alone) == {"none", "zca"}
    for space in alone:
        for key in ("mean_cosine", "sd_cosine", "sample_mean_cosine", "isoscore", "frame_size", "cosine_method"):
            assert in_run[space][key] == pytest.approx(alone[space][key], abs=1e-12), (space, key)
