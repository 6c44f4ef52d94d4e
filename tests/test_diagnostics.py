"""Anisotropy diagnostics (paper Experiment 1, Table 2, Figures 1-2): values, properties, real GloVe, CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, DataFormatError, IsoeatWarning
from isoeat.backends import StaticVectors
from isoeat.cli import main
from isoeat.diagnostics import (
    anisotropy,
    anisotropy_from_vectors,
    compare_anisotropy,
    cosine_stats,
    explained_variance_ratio,
    isoscore,
    pairwise_cosine,
    partition_ratio,
    sample_reference,
)

# -- independent reference implementations -------------------------------------------------


def _isoscore_reference(X):
    """Rudman et al. (2022) Algorithm 1 step by step: PCA by SVD, variance of reoriented points."""
    X = np.asarray(X, float)
    n = X.shape[1]
    Xc = X - X.mean(axis=0)
    _, _, Vt = np.linalg.svd(Xc, full_matrices=True)
    P = Xc @ Vt.T  # step 2: reorient
    var = np.var(P, axis=0, ddof=1)  # step 3
    if len(var) < n:
        var = np.concatenate([var, np.zeros(n - len(var))])
    var_hat = math.sqrt(n) * var / np.linalg.norm(var)  # step 4
    delta = np.linalg.norm(var_hat - 1) / math.sqrt(2 * (n - math.sqrt(n)))  # step 5
    return ((n - delta**2 * (n - math.sqrt(n))) ** 2 - n) / (n * (n - 1))  # step 6


def _partition_ratio_reference(X):
    _, U = np.linalg.eig(X.T @ X)
    zs = []
    for j in range(U.shape[1]):
        for sign in (1, -1):
            zs.append(np.sum(np.exp(X @ (sign * np.real(U[:, j])))))
    return min(zs) / max(zs)


# -- cosine statistics ------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(300, 20), (30, 60)])  # Gram branch (d < N) and matrix branch
def test_cosine_stats_equals_brute_force_off_diagonal(rng, shape):
    X = rng.normal(size=shape) + rng.normal(size=shape[1])
    C = pairwise_cosine(X)
    off = C[~np.eye(shape[0], dtype=bool)]
    mean, sd = cosine_stats(X)
    assert mean == pytest.approx(off.mean(), abs=1e-12)
    assert sd == pytest.approx(off.std(ddof=0), abs=1e-12)
    np.testing.assert_allclose(np.diag(C), 1.0)
    np.testing.assert_allclose(C, C.T)


def test_cosine_stats_is_scale_invariant_per_row(rng):
    X = rng.normal(size=(100, 5))
    scaled = X * rng.uniform(0.1, 10, size=(100, 1))
    np.testing.assert_allclose(cosine_stats(X), cosine_stats(scaled), atol=1e-12)


def test_cosine_stats_refuses_bad_input():
    with pytest.raises(ConfigError):
        cosine_stats(np.ones((1, 3)))
    with pytest.raises(DataFormatError, match="all-zero"):
        cosine_stats(np.array([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(DataFormatError, match="NaN"):
        cosine_stats(np.array([[1.0, np.nan], [0.0, 1.0]]))


# -- explained variance --------------------------------------------------------------------------


def test_explained_variance_ratio_matches_covariance_eigenvalues(rng):
    X = rng.normal(size=(500, 8)) @ rng.normal(size=(8, 8))
    lam = np.sort(np.linalg.eigvalsh(np.cov(X, rowvar=False)))[::-1]
    full = explained_variance_ratio(X, None)
    np.testing.assert_allclose(full, lam / lam.sum(), atol=1e-12)
    assert full.sum() == pytest.approx(1.0)
    assert np.all(np.diff(full) <= 1e-15)
    np.testing.assert_allclose(explained_variance_ratio(X, 3), full[:3])
    assert len(explained_variance_ratio(X, 50)) == 8  # k > d: all d
    with pytest.raises(ConfigError):
        explained_variance_ratio(X, 0)


def test_fewer_vectors_than_dimensions_give_the_covariance_eigenvalues(rng):
    # n < d takes the n x n Gram matrix: the same spectrum as np.cov's d x d matrix, zeros included
    X = rng.normal(size=(12, 40)) @ rng.normal(size=(40, 40))
    lam = np.clip(np.sort(np.linalg.eigvalsh(np.cov(X, rowvar=False)))[::-1], 0, None)
    full = explained_variance_ratio(X, None)
    assert len(full) == 40 and np.all(full[12:] == 0) and full[11] < 1e-12  # rank 11 after centring
    np.testing.assert_allclose(full, lam / lam.sum(), atol=1e-12)
    from isoeat.diagnostics.anisotropy import _covariance_eigenvalues

    np.testing.assert_allclose(_covariance_eigenvalues(X), lam, rtol=1e-9, atol=1e-9 * lam[0])


# -- IsoScore --------------------------------------------------------------------------------------


def test_isoscore_is_one_for_isotropic_gaussian(rng):
    assert isoscore(rng.normal(size=(50_000, 10))) > 0.99
    # any mean, any rotation, any global scale
    Q, _ = np.linalg.qr(rng.normal(size=(10, 10)))
    assert isoscore(rng.normal(size=(50_000, 10)) @ Q * 7.0 + 100.0) > 0.99


def test_isoscore_is_zero_for_rank_one_cloud(rng):
    direction = rng.normal(size=20)
    X = np.outer(rng.normal(size=1000), direction) + rng.normal(size=20)
    assert isoscore(X) == pytest.approx(0.0, abs=1e-9)
    # nearly rank one: still low
    assert isoscore(X + 1e-3 * rng.normal(size=X.shape)) < 0.01


def test_isoscore_uses_k_of_n_dimensions_as_the_paper_says():
    # variance spread equally over k of n axes: iota = (k - 1) / (n - 1) (Rudman et al. 2022, §4)
    n = 12
    for k in (1, 3, 6, 12):
        X = np.vstack([np.eye(n)[:k], -np.eye(n)[:k]])  # equal variance on k axes, 0 elsewhere
        assert isoscore(X) == pytest.approx((k - 1) / (n - 1), abs=1e-12)


def test_isoscore_matches_algorithm_1_step_by_step(rng):
    for X in (rng.normal(size=(400, 6)) @ rng.normal(size=(6, 6)), rng.normal(size=(5, 8))):
        assert isoscore(X) == pytest.approx(_isoscore_reference(X), abs=1e-10)


# -- partition-function ratio ----------------------------------------------------------------------


def test_partition_ratio_matches_loop_over_signed_eigenvectors(rng):
    X = rng.normal(size=(300, 5)) * 0.5 + rng.normal(size=5) * 0.3
    assert partition_ratio(X) == pytest.approx(_partition_ratio_reference(X), rel=1e-9)


def test_partition_ratio_isotropic_near_one_and_shifted_near_zero(rng):
    assert partition_ratio(rng.normal(size=(100_000, 4)) * 0.1) > 0.97
    # Z(e1)/Z(-e1) = exp(-6): the shared offset makes one direction dominate
    assert partition_ratio(rng.normal(size=(2000, 4)) * 0.1 + [3.0, 0, 0, 0]) == pytest.approx(math.exp(-6), rel=0.01)
    # sign of the eigenvectors does not matter: -X gives the same value
    X = rng.normal(size=(500, 4)) + 1.0
    assert partition_ratio(X) == pytest.approx(partition_ratio(-X), rel=1e-12)


def test_partition_ratio_does_not_overflow_for_large_norms(rng):
    X = rng.normal(size=(200, 3)) * 1000.0 + 5000.0
    v = partition_ratio(X)
    assert 0.0 <= v <= 1.0 and math.isfinite(v)


# -- sampling ------------------------------------------------------------------------------------------


def _toy_model(n=500, d=6, seed=0):
    r = np.random.default_rng(seed)
    return StaticVectors([f"w{i}" for i in range(n)], r.normal(size=(n, d)) + 2.0, name="toy")


def test_sample_is_seeded_distinct_and_stated():
    m = _toy_model()
    a, desc, seed = sample_reference(m, 100, rng=3, reference_size=400)
    b, _, _ = sample_reference(m, 100, rng=3, reference_size=400)
    c, _, _ = sample_reference(m, 100, rng=4, reference_size=400)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert len(np.unique(a, axis=0)) == 100  # without replacement
    pool = np.asarray(m.vectors[:400])
    assert all((pool == row).all(axis=1).any() for row in a)  # drawn from the pool only
    assert seed == 3 and "100 of 400" in desc and "without replacement" in desc and "seed 3" in desc


def test_more_samples_than_reference_vectors_uses_all_and_says_so():
    m = _toy_model(n=150)
    with pytest.warns(IsoeatWarning, match="only 150"):
        res = anisotropy(m, n_samples=2000, rng=0, frame="reference")
    assert res.n_samples == 150 and res.n_requested == 2000
    assert "only 150 available" in res.sampling
    with pytest.raises(ConfigError):
        sample_reference(m, 1)


def test_raw_and_calibrated_use_the_same_sample():
    m = _toy_model()
    cal = isoeat.fit_calibrator(m, "zca", n_reference=500)
    raw, white = compare_anisotropy(m, cal, n_samples=200, rng=1, return_matrix=True, frame="reference")
    assert raw.sampling == white.sampling and raw.seed == white.seed == 1
    assert raw.calibration == "none" and white.calibration == "zca"
    # the same int seed reproduces each alone
    assert anisotropy(m, cal, n_samples=200, rng=1, frame="reference").mean_cosine == pytest.approx(white.mean_cosine, abs=1e-15)
    assert anisotropy(m, n_samples=200, rng=1, frame="reference").mean_cosine == pytest.approx(raw.mean_cosine, abs=1e-15)
    off = raw.cosine_matrix[~np.eye(200, dtype=bool)]
    assert off.mean() == pytest.approx(raw.sample_mean_cosine, abs=1e-12)  # the sample's figure
    U = m.vectors[:500] / np.linalg.norm(m.vectors[:500], axis=1, keepdims=True)   # the frame: the 500-row pool
    C = U @ U.T
    assert raw.cosine_method == "exact" and raw.frame_size == 500
    assert raw.mean_cosine == pytest.approx((C.sum() - np.trace(C)) / (500 * 499), abs=1e-12)
    d = raw.to_dict()
    assert "cosine_matrix" not in d and {"mean_cosine", "sd_cosine", "n_samples", "model", "calibration"} <= set(d)


def test_one_calibrated_space_measures_only_that_space(monkeypatch):
    # anisotropy(model, cal) gives compare_anisotropy's calibrated result without measuring the raw space too
    # (run cells ask for each space alone: the raw one was measured twice per model and layer)
    import importlib

    mod = importlib.import_module("isoeat.diagnostics.anisotropy")

    m = _toy_model()
    cal = isoeat.fit_calibrator(m, "zca", n_reference=500)
    _, white = compare_anisotropy(m, cal, n_samples=200, rng=3, top_k=5, frame="reference")
    measured = []
    real = mod.anisotropy_from_vectors
    monkeypatch.setattr(mod, "anisotropy_from_vectors", lambda X, **k: measured.append(k["calibration"]) or real(X, **k))
    alone = anisotropy(m, cal, n_samples=200, rng=3, top_k=5, frame="reference")
    assert measured == ["zca"]
    assert alone.to_dict() == white.to_dict()
    assert anisotropy(m, n_samples=200, rng=3, frame="reference").calibration == "none" and measured[-1] == "none"
    with pytest.raises(isoeat.ConfigError, match="unknown keyword 'n_sample'; did you mean n_samples"):
        anisotropy(m, cal, n_sample=200)


def test_one_eigendecomposition_gives_the_same_measures_as_each_function(rng):
    X = rng.normal(size=(400, 12)) @ rng.normal(size=(12, 12)) + 1.5
    r = anisotropy_from_vectors(X, top_k=4)
    assert r.isoscore == isoscore(X) and r.partition_ratio == partition_ratio(X)
    np.testing.assert_array_equal(r.explained_variance_ratio, explained_variance_ratio(X, 4))
    assert r.partition_ratio == pytest.approx(_partition_ratio_reference(X), rel=1e-9)
    assert r.isoscore == pytest.approx(_isoscore_reference(X), abs=1e-10)


def test_shared_offset_is_anisotropic_and_whitening_removes_it(rng):
    X = rng.normal(size=(3000, 10)) @ np.diag(np.linspace(3, 0.2, 10)) + 4.0
    raw = anisotropy_from_vectors(X)
    Z = isoeat.ZCAWhitener(eps=0).fit_transform(X)
    white = anisotropy_from_vectors(Z)
    assert raw.mean_cosine > 0.5 and abs(white.mean_cosine) < 0.01
    assert white.isoscore > 0.999 and raw.isoscore < 0.7
    np.testing.assert_allclose(white.explained_variance_ratio, 0.1, atol=1e-10)


# -- real GloVe -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def glove_aniso(glove, glove_zca):
    return compare_anisotropy(glove, glove_zca, n_samples=2000, rng=0, frame="reference")  # the ZCA pool


def test_glove_whitened_reference_vectors_have_mean_cosine_near_zero(glove_aniso):
    raw, white = glove_aniso
    assert raw.n_samples == white.n_samples == 2000 and raw.dim == 50
    assert abs(white.mean_cosine) < 0.005
    assert abs(white.mean_cosine) < abs(raw.mean_cosine)
    assert 0.05 < white.sd_cosine < raw.sd_cosine < 0.5
    assert "top 100000 vocabulary rows" in raw.sampling


def test_glove_whitened_explained_variance_is_flat(glove_aniso):
    raw, white = glove_aniso
    r, w = np.array(raw.explained_variance_ratio), np.array(white.explained_variance_ratio)
    assert len(r) == len(w) == 50
    # raw: the top component carries hundreds of times the variance of the last;
    # whitened: within sampling noise of 1/d (Marchenko-Pastur spread for N=2000, d=50)
    assert r[0] / r[-1] > 100
    assert w[0] / w[-1] < 3
    np.testing.assert_allclose(w, 1 / 50, atol=0.01)
    assert white.isoscore > 0.95 > raw.isoscore


# -- command line --------------------------------------------------------------------------------------


def test_cli_anisotropy_json(capsys, glove):
    assert main(["anisotropy", "--format", "json", "--samples", "500", "--seed", "3"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert [r["calibration"] for r in recs] == ["none", "zca"]
    for r in recs:
        assert {"model", "calibration", "mean_cosine", "sd_cosine", "n_samples", "isoscore",
                "partition_ratio", "explained_variance_ratio", "sampling", "seed"} <= set(r)
        assert r["n_samples"] == 500 and r["seed"] == 3 and r["model"] == "glove-6b-50d"
    lib = compare_anisotropy(glove, isoeat.fit_calibrator(glove, "zca"), n_samples=500, rng=3)
    assert recs[1]["mean_cosine"] == pytest.approx(lib[1].mean_cosine, abs=1e-12)


def test_cli_anisotropy_table_and_matrix(capsys, tmp_path, glove):
    out = tmp_path / "cos.npz"
    assert main(["anisotropy", "--samples", "300", "--frame", "reference", "--matrix-out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Raw Mean  Raw SD  Wh. Mean  Wh. SD" in text
    assert "IsoScore" in text and "I(W)" in text and "300 of 100000 vectors" in text
    with np.load(out, allow_pickle=False) as z:
        assert z["none"].shape == z["zca"].shape == (300, 300)
        assert json.loads(str(z["info_json"]))["seed"] == 0


def test_cli_anisotropy_raw_only_and_too_many_samples(capsys, glove):
    assert main(["anisotropy", "--calibration", "none", "--samples", "3000", "--reference-size", "2500",
                 "--frame", "reference", "--format", "csv"]) == 0
    cap = capsys.readouterr()
    lines = cap.out.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("model,calibration,mean_cosine")
    assert ",2500,3000," in lines[1]  # n_samples, n_requested
    assert "only 2500 are available" in cap.err


def test_cli_anisotropy_bad_option_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["anisotropy", "--samples", "0"])
    assert exc.value.code == 2
    assert main(["anisotropy", "--model", "no-such-model-xyz"]) == 2
    assert "isoeat: error:" in capsys.readouterr().err
