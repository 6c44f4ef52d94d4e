"""Boundary tests for calibration/zca.py and calibration/moments.py.

Written to kill the mutants that the mutation check (tools/mutation.py,
docs/mutation.md) found surviving the older tests. Expected values are worked
by hand from the formulas (ZCA: paper eq. 7-11, W = U (Lambda + eps I)^(-1/2) U^T;
moments: M = sum (x - mu)(x - mu)^T, Sigma = M / (n - ddof)) on tiny inputs
whose covariance is exact, or computed from scratch with numpy.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, DataFormatError, DimensionMismatchError, IsoeatWarning, ZCAWhitener
from isoeat.calibration.moments import CovarianceAccumulator


def _diag_cloud(var_a: float, var_b: float) -> np.ndarray:
    """Four 2-D points, mean 0, covariance (n-1) exactly diag(var_a, var_b)."""
    a, b = np.sqrt(1.5 * var_a), np.sqrt(1.5 * var_b)  # 2 a^2 / 3 = var_a
    return np.array([[a, 0.0], [-a, 0.0], [0.0, b], [0.0, -b]])


# ---------------------------------------------------------------------------
# ZCAWhitener: parameters
# ---------------------------------------------------------------------------


def test_default_eps_is_1e_3():
    assert ZCAWhitener().eps == 1e-3
    assert ZCAWhitener().get_params() == {"eps": 1e-3, "eps_mode": "absolute"}
    acc = CovarianceAccumulator().update(_diag_cloud(4.0, 9.0))
    w = ZCAWhitener.from_statistics(acc)
    assert w.eps == 1e-3 and w.eps_ == 1e-3
    # W = diag(1 / sqrt(4 + 1e-3), 1 / sqrt(9 + 1e-3)) by hand
    np.testing.assert_allclose(np.diag(w.whitening_), [1 / np.sqrt(4.001), 1 / np.sqrt(9.001)], rtol=1e-12)


def test_set_params():
    w = ZCAWhitener()
    assert w.set_params(eps=0.5) is w and w.eps == 0.5
    with pytest.raises(ConfigError, match="'foo'"):
        w.set_params(foo=1)


@pytest.mark.parametrize("eps", [True, "0.1", None, float("nan"), float("inf"), -1e-12, -1])
def test_invalid_eps_refused(eps):
    with pytest.raises(ConfigError, match="eps must be"):
        ZCAWhitener(eps=eps).fit(_diag_cloud(4.0, 9.0))


@pytest.mark.parametrize("eps", [0, 0.0, 0.5, 1, 2.5, np.float32(0.25)])
def test_valid_eps_accepted(eps):
    w = ZCAWhitener(eps=eps).fit(_diag_cloud(4.0, 9.0))
    np.testing.assert_allclose(np.diag(w.whitening_), [1 / np.sqrt(4 + eps), 1 / np.sqrt(9 + eps)], rtol=1e-6)


# ---------------------------------------------------------------------------
# ZCAWhitener: input shapes and sample-size boundaries
# ---------------------------------------------------------------------------


def test_one_dimensional_input_is_one_row():
    w = ZCAWhitener().fit(_diag_cloud(4.0, 9.0))
    x = np.array([2.0, 3.0])
    np.testing.assert_allclose(w.transform(x), [[2 / np.sqrt(4.001), 3 / np.sqrt(9.001)]], rtol=1e-12)
    with pytest.raises(DataFormatError, match="2-D"):
        w.transform(np.ones((1, 2, 2)))


def test_two_samples_are_enough_one_is_not():
    # X = [0], [2]: mean 1, covariance (1 + 1) / (2 - 1) = 2, W = 1 / sqrt(2 + eps)
    w = ZCAWhitener(eps=0).fit(np.array([[0.0], [2.0]]))
    np.testing.assert_allclose(w.whitening_, [[1 / np.sqrt(2)]], rtol=1e-12)
    np.testing.assert_allclose(w.mean_, [1.0])
    with pytest.raises(DataFormatError, match="at least 2"):
        ZCAWhitener().fit(np.array([[1.0]]))
    acc = CovarianceAccumulator().update(np.array([[0.0], [2.0]]))
    np.testing.assert_allclose(ZCAWhitener.from_statistics(acc, eps=0).whitening_, [[1 / np.sqrt(2)]])
    np.testing.assert_allclose(ZCAWhitener(eps=0).fit_batches([[[0.0]], [[2.0]]]).whitening_, [[1 / np.sqrt(2)]])
    with pytest.raises(DataFormatError, match="at least 2"):
        ZCAWhitener.from_statistics(CovarianceAccumulator().update(np.array([[1.0]])))
    with pytest.raises(DataFormatError, match="at least 2"):
        ZCAWhitener().fit_batches([[[1.0]]])


def test_partial_fit_fits_from_the_second_row():
    w = ZCAWhitener()
    w.partial_fit(np.array([[0.0]]))
    assert not hasattr(w, "whitening_")  # one row: nothing to fit yet
    w.partial_fit(np.array([[2.0]]))
    assert w.n_samples_seen_ == 2 and w.eps_ == 1e-3
    np.testing.assert_allclose(w.whitening_, [[1 / np.sqrt(2.001)]], rtol=1e-12)


# ---------------------------------------------------------------------------
# ZCAWhitener: the few-samples warning and the singular-covariance errors
# ---------------------------------------------------------------------------


def test_few_samples_warning_boundary_is_n_equal_dim():
    rng = np.random.default_rng(0)
    with pytest.warns(IsoeatWarning, match="only 3 reference vectors for dimension 3"):
        ZCAWhitener().fit(rng.normal(size=(3, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ZCAWhitener().fit(rng.normal(size=(4, 3)))  # n = d + 1: no warning


def test_partial_fit_batches_do_not_warn_but_a_later_fit_does():
    rng = np.random.default_rng(1)
    w = ZCAWhitener()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w.partial_fit(rng.normal(size=(2, 3)))  # n = 2 <= d = 3, intermediate batch
        assert hasattr(w, "whitening_")
        w.partial_fit(rng.normal(size=(2, 3)))
    with pytest.warns(IsoeatWarning, match="only 2 reference vectors"):
        w.fit(rng.normal(size=(2, 3)))


def test_eps_zero_with_n_equal_dim_is_refused():
    rng = np.random.default_rng(2)
    with pytest.warns(IsoeatWarning), pytest.raises(ConfigError, match="singular"):
        ZCAWhitener(eps=0).fit(rng.normal(size=(3, 3)))
    # n = d + 1 with eps = 0 is full rank: W W = Sigma^-1 (computed from scratch)
    X = rng.normal(size=(4, 3))
    w = ZCAWhitener(eps=0).fit(X)
    np.testing.assert_allclose(w.whitening_ @ w.whitening_, np.linalg.inv(np.cov(X, rowvar=False)), rtol=1e-7)


def test_eps_zero_with_an_exact_zero_eigenvalue_is_refused():
    # second column constant: covariance diag(1, 0) exactly
    X = np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0]])
    with pytest.raises(ConfigError, match="zero eigenvalue"):
        ZCAWhitener(eps=0).fit(X)
    w = ZCAWhitener(eps=1e-3).fit(X)
    np.testing.assert_allclose(np.sort(np.diag(w.whitening_)), [1 / np.sqrt(1.001), 1 / np.sqrt(1e-3)])


def test_metadata_cleared_by_a_refit():
    # a refit on other vectors must not keep the provenance of the earlier fit (issue: a refitted
    # whitener kept metadata_, so check_compatible accepted the wrong model)
    X = _diag_cloud(4.0, 9.0)
    w = ZCAWhitener().fit(X)
    assert w.metadata_ == {}
    w.metadata_["model_fingerprint"] = "abc"
    w.fit(X)
    assert w.metadata_ == {}


# ---------------------------------------------------------------------------
# ZCAWhitener: consistency check of loaded files (shapes and tolerance)
# ---------------------------------------------------------------------------


def _saved_arrays(tmp_path, X):
    """The arrays of a saved whitener as a file written before content hashes holds them (format_version 1).

    Files with a content hash refuse any change at all; these consistency checks guard the older files.
    """
    import json

    p = isoeat.save_whitener(ZCAWhitener().fit(X), tmp_path / "w.npz")
    with np.load(p) as npz:
        arrays = {k: npz[k] for k in npz.files if k != "content_sha256"}
    meta = json.loads(str(arrays["metadata_json"]))
    meta["format_version"] = 1
    arrays["metadata_json"] = np.array(json.dumps(meta))
    return arrays


@pytest.fixture(autouse=True)
def _old_files_warn_quietly():
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*saved before isoeat recorded content hashes.*")
        yield


@pytest.mark.parametrize(
    "key, bad",
    [("mean_", np.zeros(3)), ("eigenvalues_", np.ones(3)), ("covariance_", np.eye(3)),
     ("eigenvectors_", np.eye(3)), ("whitening_", np.eye(3))],
)
def test_loaded_arrays_of_the_wrong_shape_refused(tmp_path, key, bad):
    arrays = _saved_arrays(tmp_path, _diag_cloud(4.0, 9.0))
    arrays[key] = bad
    np.savez(tmp_path / "t.npz", **arrays)
    with pytest.raises(DataFormatError, match=r"((has shape .*expected .* for|announces shape .*of) dimension 2|metadata field 'dim' is 2, but \w+ has shape)"):
        isoeat.load_whitener(tmp_path / "t.npz")


def _load_tampered(tmp_path, arrays, i, j, delta):
    arrays = dict(arrays)
    W = arrays["whitening_"].copy()
    W[i, j] += delta
    arrays["whitening_"] = W
    np.savez(tmp_path / "t.npz", **arrays)
    return isoeat.load_whitener(tmp_path / "t.npz")


def test_tamper_tolerance_absolute_part(tmp_path):
    # W = diag(~0.5, ~0.33), off-diagonal exactly 0; atol = 1e-10 * max(1, max|W|) = 1e-10
    arrays = _saved_arrays(tmp_path, _diag_cloud(4.0, 9.0))
    assert arrays["whitening_"][0, 1] == 0.0
    _load_tampered(tmp_path, arrays, 0, 1, 0.7e-10)
    with pytest.raises(DataFormatError, match="tampered"):
        _load_tampered(tmp_path, arrays, 0, 1, 1.3e-10)
    # W = diag(1/sqrt(0.011), 1/sqrt(0.041)) ~ (9.53, 4.94): atol = 1e-10 * 9.53
    arrays = _saved_arrays(tmp_path, _diag_cloud(0.01, 0.04))
    _load_tampered(tmp_path, arrays, 0, 1, 8e-10)
    with pytest.raises(DataFormatError, match="tampered"):
        _load_tampered(tmp_path, arrays, 0, 1, 11e-10)


def test_tamper_tolerance_relative_part(tmp_path):
    # diagonal entry w ~ 0.5: tolerance 1e-10 + 1e-8 * |w| ~ 5.1e-9
    arrays = _saved_arrays(tmp_path, _diag_cloud(4.0, 9.0))
    k = int(np.argmax(np.diag(arrays["whitening_"])))
    _load_tampered(tmp_path, arrays, k, k, 3.5e-9)
    with pytest.raises(DataFormatError, match="tampered"):
        _load_tampered(tmp_path, arrays, k, k, 7e-9)


# ---------------------------------------------------------------------------
# CovarianceAccumulator
# ---------------------------------------------------------------------------


def test_one_dimensional_batch_is_one_row_and_3d_is_refused():
    acc = CovarianceAccumulator().update(np.array([1.0, 2.0, 3.0]))
    assert acc.n == 1 and acc.dim == 3
    np.testing.assert_array_equal(acc.mean, [1.0, 2.0, 3.0])
    with pytest.raises(DataFormatError, match="2-D"):
        CovarianceAccumulator().update(np.ones((2, 2, 2)))


def test_empty_batch_on_a_fresh_accumulator_is_a_no_op():
    acc = CovarianceAccumulator().update(np.empty((0, 4)))
    assert acc.n == 0 and acc.dim is None and acc.mean is None


def test_row_by_row_updates_and_merges():
    X = np.array([[0.0, 1.0], [2.0, 5.0], [4.0, 3.0], [6.0, 11.0], [8.0, 0.0]])
    acc = CovarianceAccumulator()
    for row in X:
        acc.update(row[None, :])
    # from scratch: mean, M = sum (x - mu)(x - mu)^T
    mu = X.sum(0) / 5
    M = sum(np.outer(x - mu, x - mu) for x in X)
    assert acc.n == 5
    np.testing.assert_allclose(acc.mean, mu, rtol=1e-14)
    np.testing.assert_allclose(acc.comoment, M, rtol=1e-12)
    for k in (2, 3, 5):  # tree reduction of k one-row accumulators (odd and even counts)
        parts = [CovarianceAccumulator().update(x[None, :]) for x in X[:k]]
        merged = CovarianceAccumulator.merge_all(parts)
        assert merged.n == k
        np.testing.assert_allclose(merged.covariance(), np.cov(X[:k], rowvar=False), rtol=1e-12)


def test_merge_all_ignores_empty_parts():
    X = np.array([[1.0], [3.0]])
    merged = CovarianceAccumulator.merge_all([CovarianceAccumulator(), CovarianceAccumulator().update(X)])
    assert merged.n == 2
    np.testing.assert_allclose(merged.covariance(), [[2.0]])
    assert CovarianceAccumulator.merge_all([CovarianceAccumulator()]).n == 0
    assert CovarianceAccumulator.merge_all([]).n == 0


def test_covariance_needs_more_than_ddof_vectors():
    acc = CovarianceAccumulator().update(np.array([[0.0], [2.0]]))  # M = 2
    np.testing.assert_allclose(acc.covariance(), [[2.0]])  # default ddof = 1: 2 / 1
    np.testing.assert_allclose(acc.covariance(ddof=0), [[1.0]])  # 2 / 2
    with pytest.raises(DataFormatError, match="more than 2 vectors"):
        acc.covariance(ddof=2)
    with pytest.raises(DataFormatError, match="more than 1 vectors"):
        CovarianceAccumulator().update(np.array([[1.0]])).covariance()


def test_arrays_roundtrip_and_merge_errors():
    X = np.array([[0.0, 1.0, 2.0], [2.0, 5.0, 1.0], [4.0, 3.0, 0.0]])
    acc = CovarianceAccumulator().update(X)
    back = CovarianceAccumulator.from_arrays(acc.to_arrays())
    assert back.n == 3 and back.dim == 3
    np.testing.assert_array_equal(back.covariance(), acc.covariance())
    with pytest.raises(ConfigError, match="CovarianceAccumulator"):
        acc.merge(object())
    with pytest.raises(DimensionMismatchError, match="dimension 2 into 3"):
        acc.merge(CovarianceAccumulator().update(np.ones((2, 2))))
