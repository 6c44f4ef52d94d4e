"""Tests for isoeat.stats.bootstrap.

Reference values: hand computation (inline) and scipy.stats.bootstrap with the
same statistic (independent implementation; agreement up to Monte Carlo error).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from isoeat._errors import ConfigError
from isoeat.stats.bootstrap import BootstrapResult, bootstrap_effect_size, effect_size


def _d_stat(a, b, axis=-1):
    pooled = np.concatenate([a, b], axis=axis)
    return (a.mean(axis=axis) - b.mean(axis=axis)) / pooled.std(axis=axis, ddof=1)


def _normal_example(shift=0.5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(shift, 1.0, 20), rng.normal(0.0, 1.0, 25)


def _cosine_example(seed=0):
    """Random unit vectors; X pulled towards the A centroid (a real-ish WEAT)."""
    rng = np.random.default_rng(seed)
    emb = rng.normal(size=(61, 50))
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    x, y, a, b = emb[:20], emb[20:45], emb[45:53], emb[53:61]
    x = x + 0.3 * a.mean(axis=0)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    mats = (x @ a.T, x @ b.T, y @ a.T, y @ b.T)
    s_x = mats[0].mean(axis=1) - mats[1].mean(axis=1)
    s_y = mats[2].mean(axis=1) - mats[3].mean(axis=1)
    return s_x, s_y, mats


def test_effect_size_hand_computed():
    # s_x = [1, 2, 3], s_y = [0, 0, 0]: mean difference 2; pooled mean 1,
    # squared deviations 0 + 1 + 4 + 1 + 1 + 1 = 8.
    # ddof=1: sd = sqrt(8/5) -> d = 2 / sqrt(1.6) = 1.5811388...
    # ddof=0: sd = sqrt(8/6) -> d = 2 / sqrt(4/3) = sqrt(3)
    assert effect_size([1, 2, 3], [0, 0, 0]) == pytest.approx(2 / math.sqrt(1.6), rel=1e-14)
    assert effect_size([1, 2, 3], [0, 0, 0], ddof=0) == pytest.approx(math.sqrt(3), rel=1e-14)
    assert effect_size([0, 0, 0], [1, 2, 3]) == pytest.approx(-2 / math.sqrt(1.6), rel=1e-14)


def test_effect_size_zero_sd_is_nan():
    assert math.isnan(effect_size([0.2, 0.2], [0.2, 0.2]))
    assert math.isnan(effect_size([0.2], [0.3], ddof=2))  # n - ddof <= 0


def test_reproducible_for_fixed_seed():
    x, y = _normal_example()
    a = bootstrap_effect_size(x, y, n_resamples=2_000, rng=42)
    b = bootstrap_effect_size(x, y, n_resamples=2_000, rng=42)
    c = bootstrap_effect_size(x, y, n_resamples=2_000, rng=43)
    assert a == b
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert a.estimate == c.estimate == pytest.approx(effect_size(x, y))
    d = a.to_dict()
    assert d["n_resamples"] == 2_000 and d["resample_attributes"] is False and d["method"] == "percentile"
    assert BootstrapResult(**d) == a


def test_percentile_interval_contains_estimate():
    x, y = _normal_example()
    r = bootstrap_effect_size(x, y, n_resamples=5_000, rng=1)
    assert r.ci_low < r.estimate < r.ci_high
    assert r.confidence == 0.95 and r.method == "percentile"


def test_huge_separation_excludes_zero():
    rng = np.random.default_rng(3)
    x = rng.normal(5.0, 1.0, 15)
    y = rng.normal(-5.0, 1.0, 15)
    for method in ("percentile", "bca"):
        r = bootstrap_effect_size(x, y, n_resamples=3_000, rng=2, method=method)
        assert r.ci_low > 0.0 and r.ci_high > r.ci_low


def test_bca_close_to_percentile_on_symmetric_data():
    # d near 0 with symmetric normal data: bias correction and acceleration are
    # both small, so BCa end points move only slightly.
    rng = np.random.default_rng(8)
    x = rng.normal(0.0, 1.0, 40)
    y = rng.normal(0.0, 1.0, 40)
    p = bootstrap_effect_size(x, y, n_resamples=8_000, rng=5)
    b = bootstrap_effect_size(x, y, n_resamples=8_000, rng=5, method="bca")
    assert b.method == "bca" and b.note is None
    assert abs(b.ci_low - p.ci_low) < 0.03
    assert abs(b.ci_high - p.ci_high) < 0.03


@pytest.mark.parametrize("method,scipy_method", [("percentile", "percentile"), ("bca", "BCa")])
def test_agrees_with_scipy_bootstrap(method, scipy_method):
    from scipy.stats import bootstrap

    x, y = _normal_example(shift=0.5, seed=0)
    ours = bootstrap_effect_size(x, y, n_resamples=20_000, rng=1, method=method)
    ref = bootstrap(
        (x, y), _d_stat, method=scipy_method, n_resamples=20_000, rng=np.random.default_rng(2), vectorized=True
    )
    # Monte Carlo error of a 2.5% quantile with 20k replicates is ~0.01 here
    assert ours.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.03)
    assert ours.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.03)


def test_attribute_resampling_widens_interval():
    s_x, s_y, mats = _cosine_example()
    targets_only = bootstrap_effect_size(s_x, s_y, n_resamples=4_000, rng=0)
    with_attrs = bootstrap_effect_size(s_x, s_y, n_resamples=4_000, rng=0, attribute_cos=mats)
    assert with_attrs.resample_attributes is True
    assert with_attrs.estimate == targets_only.estimate
    width_t = targets_only.ci_high - targets_only.ci_low
    width_a = with_attrs.ci_high - with_attrs.ci_low
    assert width_a > 1.1 * width_t
    # reproducible too
    again = bootstrap_effect_size(s_x, s_y, n_resamples=4_000, rng=0, attribute_cos=mats)
    assert again == with_attrs


def test_attribute_resampling_matches_explicit_loop():
    # The vectorised replicate equals a direct per-replicate computation with the
    # same draws (same generator calls in the same order, one chunk).
    s_x, s_y, (cxa, cxb, cya, cyb) = _cosine_example(seed=4)
    r = 50
    gen = np.random.default_rng(9)
    ix = gen.integers(0, s_x.size, size=(r, s_x.size))
    iy = gen.integers(0, s_y.size, size=(r, s_y.size))
    wa = gen.multinomial(cxa.shape[1], np.full(cxa.shape[1], 1 / cxa.shape[1]), size=r)
    wb = gen.multinomial(cxb.shape[1], np.full(cxb.shape[1], 1 / cxb.shape[1]), size=r)
    expected = []
    for k in range(r):
        cols_a = np.repeat(np.arange(cxa.shape[1]), wa[k])
        cols_b = np.repeat(np.arange(cxb.shape[1]), wb[k])
        sx = cxa[ix[k]][:, cols_a].mean(axis=1) - cxb[ix[k]][:, cols_b].mean(axis=1)
        sy = cya[iy[k]][:, cols_a].mean(axis=1) - cyb[iy[k]][:, cols_b].mean(axis=1)
        expected.append(effect_size(sx, sy))
    from isoeat.stats.bootstrap import _replicates

    got = _replicates(s_x, s_y, 1, r, np.random.default_rng(9), (cxa, cxb, cya, cyb))
    np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_bca_degenerate_falls_back_with_reason():
    r = bootstrap_effect_size([1.0, 1.0, 1.0], [0.0, 0.0, 0.0], method="bca", n_resamples=500, rng=0)
    assert r.method == "percentile"
    assert r.note is not None and "fell back to percentile" in r.note
    # every replicate is the original data: d = 1 / sd, sd^2 = 6 * 0.25 / 5 = 0.3
    assert r.ci_low == r.ci_high == r.estimate == pytest.approx(1 / math.sqrt(0.3), rel=1e-14)


def test_undefined_estimate_gives_nan_interval():
    r = bootstrap_effect_size([0.5, 0.5], [0.5, 0.5], n_resamples=100, rng=0)
    assert math.isnan(r.estimate) and math.isnan(r.ci_low) and math.isnan(r.ci_high)
    assert "undefined" in r.note


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"n_resamples": 0}, "n_resamples"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": 0.0}, "confidence"),
        ({"method": "bootstrap-t"}, "method"),
        ({"ddof": -1}, "ddof"),
    ],
)
def test_invalid_parameters(kwargs, name):
    with pytest.raises(ConfigError) as info:
        bootstrap_effect_size([0.1, 0.2, 0.3], [0.0, 0.1, 0.05], **kwargs)
    assert name in str(info.value)


def test_attribute_cos_validation():
    s_x, s_y, mats = _cosine_example()
    with pytest.raises(ConfigError, match="inconsistent"):
        bootstrap_effect_size(s_x + 0.1, s_y, attribute_cos=mats, n_resamples=10)
    with pytest.raises(ConfigError, match="rows"):
        bootstrap_effect_size(s_x[:-1], s_y, attribute_cos=mats, n_resamples=10)
    with pytest.raises(ConfigError, match="s_x"):
        bootstrap_effect_size([np.nan, 0.1], s_y, n_resamples=10)
