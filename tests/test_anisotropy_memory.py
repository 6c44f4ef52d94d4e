"""Anisotropy memory is bounded: blockwise cosine statistics, only the heatmap block is built."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from isoeat import ConfigError
from isoeat.diagnostics import anisotropy_from_vectors, compare_anisotropy, cosine_stats, pairwise_cosine


def _full_stats(X):
    """The definition: mean and population SD of the N(N-1) off-diagonal cosines, from the whole matrix."""
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    C = U @ U.T
    off = C[~np.eye(len(C), dtype=bool)]
    return off.mean(), off.std()


@pytest.mark.parametrize("n,d", [(40, 5), (30, 64), (257, 300), (2, 3)])
def test_cosine_stats_equal_the_full_matrix(n, d, rng):
    X = rng.normal(size=(n, d)) + 0.7  # a shared offset: mean cosine well above 0
    mean, sd = cosine_stats(X)
    ref_mean, ref_sd = _full_stats(X)
    assert mean == pytest.approx(ref_mean, abs=1e-12)
    assert sd == pytest.approx(ref_sd, abs=1e-12)


def test_cosine_stats_blockwise_for_wide_vectors(rng, monkeypatch):
    # N <= d (contextual models, small samples): rows are processed in blocks, never the N x N matrix at once
    import importlib

    an = importlib.import_module("isoeat.diagnostics.anisotropy")  # the package re-exports a function of that name

    X = rng.normal(size=(300, 400)) + 0.3
    ref = _full_stats(X)
    monkeypatch.setattr(an, "_BLOCK_ROWS", 64)
    got = cosine_stats(X)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", [1, 7, 50, 80])
def test_heatmap_block_equals_the_corner_of_the_full_matrix(k, rng):
    X = rng.normal(size=(50, 6)) + 1.0
    r = anisotropy_from_vectors(X, return_matrix=True, matrix_size=k)
    full = pairwise_cosine(X)
    m = min(k, 50)
    assert r.cosine_matrix.shape == (m, m)
    np.testing.assert_allclose(r.cosine_matrix, full[:m, :m], rtol=0, atol=1e-12)
    assert np.all(np.diag(r.cosine_matrix) == 1.0)
    # the numbers do not depend on whether a matrix was kept
    plain = anisotropy_from_vectors(X)
    assert (plain.mean_cosine, plain.sd_cosine) == (r.mean_cosine, r.sd_cosine)
    assert anisotropy_from_vectors(X, return_matrix=True).cosine_matrix.shape == (50, 50)  # whole matrix as before


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "300"])
def test_bad_matrix_size_refused(bad, rng):
    with pytest.raises(ConfigError, match="matrix_size must be"):
        anisotropy_from_vectors(rng.normal(size=(10, 3)), return_matrix=True, matrix_size=bad)


def test_return_matrix_must_be_a_bool(rng):
    with pytest.raises(ConfigError, match="return_matrix must be true or false"):
        anisotropy_from_vectors(rng.normal(size=(10, 3)), return_matrix=300)


def test_sample_12000_on_glove_keeps_memory_bounded(glove):
    from isoeat.calibration import fit_calibrator

    zca = fit_calibrator(glove, "zca", n_reference=20_000)
    tracemalloc.start()
    try:
        raw, cal = compare_anisotropy(glove, zca, n_samples=12_000, rng=0, return_matrix=True, matrix_size=300)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    assert raw.cosine_matrix.shape == cal.cosine_matrix.shape == (300, 300)
    assert raw.n_samples == cal.n_samples == 12_000
