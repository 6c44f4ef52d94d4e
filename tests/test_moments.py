"""Streaming, mergeable covariance and ZCA fitted batch by batch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import isoeat
from isoeat import DataFormatError, DimensionMismatchError
from isoeat.calibration.moments import CovarianceAccumulator


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 200),
    d=st.integers(1, 6),
    cuts=st.lists(st.floats(0, 1), max_size=6),
    seed=st.integers(0, 2**31 - 1),
    offset=st.floats(-1e3, 1e3),
)
def test_merged_random_splits_equal_numpy_cov(n, d, cuts, seed, offset):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10, size=d) + offset
    idx = sorted({int(c * n) for c in cuts} | {0, n})
    parts = [CovarianceAccumulator().update(X[a:b]) for a, b in zip(idx[:-1], idx[1:])]
    rng.shuffle(parts)  # merge order must not matter
    acc = CovarianceAccumulator.merge_all(parts)
    ref = np.cov(X, rowvar=False).reshape(d, d)
    assert acc.n == n
    np.testing.assert_allclose(acc.mean, X.mean(0), rtol=1e-10, atol=1e-10 * (1 + abs(offset)))
    np.testing.assert_allclose(acc.covariance(), ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


def test_partial_fit_equals_fit(glove):
    X, _ = glove.reference_vectors(20_000)
    full = isoeat.ZCAWhitener().fit(X)
    part = isoeat.ZCAWhitener()
    for a in range(0, len(X), 3_000):
        part.partial_fit(X[a : a + 3_000])
    np.testing.assert_allclose(part.whitening_, full.whitening_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(part.mean_, full.mean_, rtol=1e-12)
    assert part.n_samples_seen_ == 20_000
    batched = isoeat.ZCAWhitener().fit_batches(X[a : a + 1000] for a in range(0, len(X), 1000))
    np.testing.assert_allclose(batched.whitening_, full.whitening_, rtol=1e-9, atol=1e-12)
    merged = CovarianceAccumulator.merge_all([CovarianceAccumulator().update(X[:7000]),
                                              CovarianceAccumulator().update(X[7000:])])
    from_stats = isoeat.ZCAWhitener.from_statistics(merged, eps=1e-3)
    np.testing.assert_allclose(from_stats.whitening_, full.whitening_, rtol=1e-9, atol=1e-12)


def test_streaming_model_path_used_by_fit_calibrator(glove):
    class Streaming:
        name, dim = glove.name, glove.dim
        fingerprint = glove.fingerprint

        def reference_batches(self, n):
            X, desc = glove.reference_vectors(n)
            return (X[a : a + 500] for a in range(0, len(X), 500)), desc + " (streamed)"

    cal = isoeat.fit_calibrator(Streaming(), "zca", n_reference=5_000)
    ref = isoeat.fit_calibrator(glove, "zca", n_reference=5_000)
    np.testing.assert_allclose(cal.whitening_, ref.whitening_, rtol=1e-9, atol=1e-12)
    assert cal.metadata_["n"] == 5_000 and cal.metadata_["reference"].endswith("(streamed)")


def test_bad_batches():
    acc = CovarianceAccumulator().update(np.ones((3, 4)))
    with pytest.raises(DimensionMismatchError, match="dimension 5"):
        acc.update(np.ones((2, 5)))
    with pytest.raises(DataFormatError, match="NaN"):
        acc.update(np.full((2, 4), np.nan))
    assert acc.update(np.empty((0, 4))).n == 3  # an empty shard is a no-op
    with pytest.raises(DataFormatError, match="at least 2"):
        isoeat.ZCAWhitener().fit_batches([np.ones((1, 4))])


# ----------------------------------------------------------------------------
# the device accumulator (torch float64 on the model's device)
# ----------------------------------------------------------------------------


def _direct(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and co-moment from scratch, in float64."""
    X = np.asarray(X, dtype=np.float64)
    mu = X.mean(axis=0)
    return mu, (X - mu).T @ (X - mu)


def _rel(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max())


def test_device_accumulator_equals_a_direct_float64_computation():
    torch = pytest.importorskip("torch")
    from isoeat.calibration.moments import DeviceAccumulator

    rng = np.random.default_rng(0)
    X = (50.0 + rng.normal(size=(301, 6))).astype(np.float32)  # far from the origin: cancellation would show
    acc = DeviceAccumulator(6, torch, "cpu")
    for lo, hi in ((0, 100), (100, 100), (100, 101), (101, 301)):  # uneven batches, an empty one
        acc.update(torch.from_numpy(X[lo:hi]))
    host = acc.to_host()
    mu, M = _direct(X)
    assert host.n == 301
    assert _rel(host.mean, mu) < 1e-12 and _rel(host.comoment, M) < 1e-12
    # the numpy accumulator on the same batches: the same numbers to rounding
    ref = CovarianceAccumulator(6)
    for lo, hi in ((0, 100), (100, 101), (101, 301)):
        ref.update(X[lo:hi])
    assert _rel(host.comoment, ref.comoment) < 1e-12 and _rel(host.mean, ref.mean) < 1e-12
    # merging device accumulators is the numpy merge
    a = DeviceAccumulator(6, torch, "cpu").update(torch.from_numpy(X[:7]))
    b = DeviceAccumulator(6, torch, "cpu").update(torch.from_numpy(X[7:]))
    merged = a.merge(b).merge(DeviceAccumulator(6, torch, "cpu")).to_host()
    assert merged.n == 301 and _rel(merged.comoment, M) < 1e-12
    # bfloat16 input is upcast before anything is summed: the statistics of the bfloat16 values themselves
    Xb = torch.from_numpy(X).to(torch.bfloat16)
    got = DeviceAccumulator(6, torch, "cpu").update(Xb).to_host()
    mu_b, M_b = _direct(Xb.to(torch.float64).numpy())
    assert _rel(got.comoment, M_b) < 1e-12 and _rel(got.mean, mu_b) < 1e-12


def test_device_accumulator_refuses_non_finite_rows_and_other_dimensions():
    torch = pytest.importorskip("torch")
    from isoeat.calibration.moments import DeviceAccumulator

    X = torch.ones((3, 4), dtype=torch.float32)
    X[1, 2] = float("nan")
    acc = DeviceAccumulator(4, torch, "cpu").update(X)
    with pytest.raises(DataFormatError, match="NaN or inf"):
        acc.to_host()
    with pytest.raises(DimensionMismatchError, match="dimension 4"):
        DeviceAccumulator(4, torch, "cpu").update(torch.ones((2, 5)))
    empty = DeviceAccumulator(4, torch, "cpu").to_host()
    assert empty.n == 0 and empty.dim == 4
