"""Boundaries of isoeat.stats.bootstrap: validation, degenerate cases, BCa.

Expected values are worked by hand or computed from scratch in the test (the
BCa end points from the formula of the docstring, Efron 1987, on the same
replicates; the attribute resampling by an explicit per-replicate loop).
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
from scipy.special import ndtr, ndtri

from isoeat._errors import ConfigError
from isoeat.stats.bootstrap import _replicates, bootstrap_effect_size, effect_size


def _d(x, y, ddof=1):
    """Effect size from scratch: mean difference over the pooled SD."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    pooled = np.concatenate([x, y])
    sd = math.sqrt(sum((v - pooled.mean()) ** 2 for v in pooled) / (pooled.size - ddof))
    return (x.mean() - y.mean()) / sd


# ---------------------------------------------------------------------------
# effect_size and input validation
# ---------------------------------------------------------------------------


def test_single_words_and_defaults():
    # x = [1], y = [0, 2]: diff 0, so d = 0; x = [2], y = [0, 1]: diff 1.5,
    # pooled mean 1, squares 1 + 1 + 0 = 2, sd = 1 -> d = 1.5
    assert effect_size([1.0], [0.0, 2.0]) == 0.0
    assert effect_size([2.0], [0.0, 1.0]) == pytest.approx(1.5, rel=1e-15)
    r = bootstrap_effect_size([2.0], [0.0, 1.0], n_resamples=1, rng=0)
    assert r.estimate == pytest.approx(1.5, rel=1e-15)  # default ddof = 1
    assert bootstrap_effect_size([1.0, 2.0], [0.0, 1.0], rng=0).n_resamples == 10_000  # default


def test_result_is_frozen():
    r = bootstrap_effect_size([2.0], [0.0, 1.0], n_resamples=1, rng=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.ci_low = 0.0
    assert hash(r) == hash(dataclasses.replace(r))


def test_interval_of_a_result_keeps_its_note_and_reads_none_as_empty():
    from isoeat.stats.bootstrap import BootstrapResult

    base = dict(estimate=1.0, ci_low=0.5, ci_high=1.5, confidence=0.9, method="percentile", n_resamples=300)
    noted = BootstrapResult(**base, resample_attributes=True, note="3 replicates with zero pooled SD dropped")
    iv = noted.interval()
    assert iv.note == "3 replicates with zero pooled SD dropped" and iv.estimand == "populations"
    assert (iv.low, iv.high, iv.level, iv.method, iv.n_resamples) == (0.5, 1.5, 0.9, "percentile", 300)
    plain = BootstrapResult(**base, resample_attributes=False).interval()
    assert plain.note == "" and plain.estimand == "given-attributes"


def test_underflowing_pooled_sd_gives_nan_not_inf():
    # the squared deviations (5e-171)^2 underflow to 0: the SD is 0, d is undefined
    assert math.isnan(effect_size([0.0, 0.0], [1e-170, 1e-170]))


@pytest.mark.parametrize("bad", [[], [[0.1, 0.2]], np.zeros((2, 2)), 0.5])
def test_s_must_be_a_non_empty_vector(bad):
    with pytest.raises(ConfigError, match="s_x must be a non-empty 1-D array"):
        effect_size(bad, [0.0, 1.0])


@pytest.mark.parametrize("ddof", [True, 1.0, "1", -1])
def test_invalid_ddof(ddof):
    with pytest.raises(ConfigError, match="ddof must be a non-negative integer"):
        effect_size([0.0, 1.0], [2.0, 3.0], ddof=ddof)


def test_ddof_zero_accepted():
    # x = [1, 2, 3], y = [0, 0, 0]: squares sum 8, ddof 0 -> sd = sqrt(8/6), d = sqrt(3)
    assert effect_size([1, 2, 3], [0, 0, 0], ddof=0) == pytest.approx(math.sqrt(3), rel=1e-14)
    assert effect_size([1, 2, 3], [0, 0, 0], ddof=np.int64(0)) == pytest.approx(math.sqrt(3), rel=1e-14)


@pytest.mark.parametrize("n", [True, 2.0, "10", -5, 0])
def test_invalid_n_resamples(n):
    with pytest.raises(ConfigError, match="n_resamples must be"):
        bootstrap_effect_size([0.0, 1.0], [2.0, 3.0], n_resamples=n)


def test_one_resample_is_enough():
    # x = [0, 1], y = [5]: resampling y always gives [5]; a replicate is finite unless x* = [a, a]
    for seed in range(20):
        r = bootstrap_effect_size([0.0, 1.0], [5.0], n_resamples=1, rng=seed)
        if r.note is None:
            assert math.isfinite(r.ci_low) and r.ci_low == r.ci_high
        else:
            assert r.note == "1 replicates with zero pooled SD dropped"
            assert math.isnan(r.ci_low) and math.isnan(r.ci_high)


def test_every_replicate_dropped_gives_nan_interval_with_note():
    # x = [0, 0, 1], y = [0]: a replicate is degenerate when x* = [0, 0, 0] (prob 8/27);
    # over seeds both outcomes occur, and a NaN interval always says why
    seen = set()
    for seed in range(40):
        r = bootstrap_effect_size([0.0, 0.0, 1.0], [0.0], n_resamples=1, rng=seed)
        seen.add(r.note is None)
        assert math.isnan(r.ci_low) == (r.note is not None)
    assert seen == {True, False}


def test_several_chunks_of_replicates():
    # 2000 target words: a chunk holds 2**22 // (2 * 2000) = 1048 replicates, so 2500
    # replicates take three chunks (1048 + 1048 + 404); all are drawn and finite
    rng = np.random.default_rng(0)
    x, y = rng.normal(0.3, 1.0, 1000), rng.normal(0.0, 1.0, 1000)
    r = bootstrap_effect_size(x, y, n_resamples=2500, rng=1)
    assert r.n_resamples == 2500 and r.note is None
    assert r.ci_low < r.estimate < r.ci_high
    reps = _replicates(x, y, 1, 2500, np.random.default_rng(1), None)
    assert reps.shape == (2500,) and np.all(np.isfinite(reps))
    assert (r.ci_low, r.ci_high) == tuple(np.quantile(reps, [0.025, 0.975]))


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.999])
def test_percentile_levels(confidence):
    x, y = [0.0, 1.0, 3.0, 4.0], [0.5, 2.0, 2.5]
    r = bootstrap_effect_size(x, y, n_resamples=999, confidence=confidence, rng=3, method="percentile")
    reps = _replicates(np.array(x), np.array(y), 1, 999, np.random.default_rng(3), None)
    reps = reps[np.isfinite(reps)]
    a = 1 - confidence
    assert (r.ci_low, r.ci_high) == tuple(np.quantile(reps, [a / 2, 1 - a / 2]))


def test_min_resamples_absorbs_float_noise_below_the_sixth_decimal():
    from isoeat.stats.bootstrap import min_resamples

    # ceil(2 * 5 / (1 - level)) (docstring), the quotient first rounded to 6 decimals: 1 - 0.9 is
    # 0.09999999999999998 in floats, so 10 / (1 - 0.9) is 100.00000000000003 and needs the rounding
    assert (min_resamples(0.9), min_resamples(0.95), min_resamples(0.99)) == (100, 200, 1000)
    # a quotient 4e-7 above 200 rounds to 200; 6e-7 above rounds to 200.000001, and its ceiling is 201
    assert min_resamples(1 - 10 / (200 + 4e-7)) == 200
    assert min_resamples(1 - 10 / (200 + 6e-7)) == 201


# ---------------------------------------------------------------------------
# BCa from scratch
# ---------------------------------------------------------------------------


def _bca_from_scratch(x, y, n, seed, confidence):
    est = effect_size(x, y)  # the same rounding as the estimate the replicates are compared with
    reps = _replicates(np.array(x, float), np.array(y, float), 1, n, np.random.default_rng(seed), None)
    reps = reps[np.isfinite(reps)]
    z0 = ndtri(np.mean(reps < est))
    jack = [_d(np.delete(x, i), y) for i in range(len(x))] + [_d(x, np.delete(y, i)) for i in range(len(y))]
    jack = np.array([j for j in jack if np.isfinite(j)])
    u = jack.mean() - jack
    a = np.sum(u**3) / (6 * np.sum(u**2) ** 1.5)
    alpha = 1 - confidence
    lv = [ndtr(z0 + (z0 + ndtri(q)) / (1 - a * (z0 + ndtri(q)))) for q in (alpha / 2, 1 - alpha / 2)]
    return np.quantile(reps, lv)


@pytest.mark.parametrize(
    "x, y, seed",
    [
        ([0.0, 1.0, 5.0, 2.0, 9.0], [0.0, 0.5, 1.0, 0.2], 11),  # skewed: acceleration far from 0
        ([0.0, 1.0], [0.0, 3.0], 4),  # tiny: many replicates tie with the estimate
    ],
)
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_bca_matches_formula(x, y, seed, confidence):
    r = bootstrap_effect_size(x, y, n_resamples=4000, confidence=confidence, rng=seed, method="bca")
    assert r.method == "bca", r.note
    np.testing.assert_allclose([r.ci_low, r.ci_high], _bca_from_scratch(x, y, 4000, seed, confidence),
                               rtol=1e-12)


def test_bca_with_a_single_word_group_warns_nothing():
    # |X| = 1: no leave-one-out value for X; the jackknife is over Y only, silently
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = bootstrap_effect_size([4.0], [0.0, 1.0, 3.0, 0.5], n_resamples=2000, rng=1, method="bca")
        r2 = bootstrap_effect_size([0.0, 1.0, 3.0, 0.5], [4.0], n_resamples=2000, rng=1, method="bca")
    assert r.method == "bca" and r2.method == "bca"
    jack = np.array([_d([4.0], np.delete([0.0, 1.0, 3.0, 0.5], i)) for i in range(4)])
    assert np.all(np.isfinite(jack))


def test_bca_needs_two_jackknife_values():
    # x = [1], y = [0, 3]: two leave-one-out values (Y words), -sqrt(2) and sqrt(2): enough
    r = bootstrap_effect_size([1.0], [0.0, 3.0], n_resamples=400, rng=0, method="bca")
    assert r.method == "bca" and r.note is None
    # with ddof = 2 a leave-one-out sample (n = 2) has no SD: no jackknife value at all
    r = bootstrap_effect_size([1.0], [0.0, 3.0], n_resamples=400, rng=0, method="bca", ddof=2)
    assert r.method == "percentile"
    assert "fewer than 2 jackknife values" in r.note


# ---------------------------------------------------------------------------
# attribute_cos: validation and resampling with |A| != |B|
# ---------------------------------------------------------------------------


def _mats(nx=3, ny=4, na=2, nb=5, seed=0):
    rng = np.random.default_rng(seed)
    mats = [rng.uniform(-1, 1, size=s) for s in ((nx, na), (nx, nb), (ny, na), (ny, nb))]
    s_x = mats[0].mean(1) - mats[1].mean(1)
    s_y = mats[2].mean(1) - mats[3].mean(1)
    return s_x, s_y, mats


def test_attribute_resampling_with_unequal_a_and_b_matches_explicit_loop():
    s_x, s_y, (cxa, cxb, cya, cyb) = _mats()
    r = 40
    gen = np.random.default_rng(5)
    ix = gen.integers(0, 3, size=(r, 3))
    iy = gen.integers(0, 4, size=(r, 4))
    wa = gen.multinomial(2, [1 / 2] * 2, size=r)
    wb = gen.multinomial(5, [1 / 5] * 5, size=r)
    expected = []
    for k in range(r):
        ca, cb = np.repeat(np.arange(2), wa[k]), np.repeat(np.arange(5), wb[k])
        sx = cxa[ix[k]][:, ca].mean(1) - cxb[ix[k]][:, cb].mean(1)
        sy = cya[iy[k]][:, ca].mean(1) - cyb[iy[k]][:, cb].mean(1)
        expected.append(_d(sx, sy) if np.ptp(np.concatenate([sx, sy])) > 0 else np.nan)
    got = _replicates(s_x, s_y, 1, r, np.random.default_rng(5), (cxa, cxb, cya, cyb))
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    res = bootstrap_effect_size(s_x, s_y, n_resamples=r, rng=5, attribute_cos=(cxa, cxb, cya, cyb))
    np.testing.assert_allclose([res.ci_low, res.ci_high], np.quantile(expected, [0.025, 0.975]), rtol=1e-12)


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda m: m[:3], "four 2-D matrices"),
        (lambda m: m + [m[0]], "four 2-D matrices"),
        (lambda m: [m[0][:, 0]] + m[1:], "four 2-D matrices"),
        (lambda m: [m[0][:2]] + m[1:], "need 3 rows"),
        (lambda m: [m[0], m[1][:2]] + m[2:], "need 3 rows"),
        (lambda m: m[:2] + [m[2][:3], m[3]], "need 4 rows"),
        (lambda m: m[:3] + [m[3][:3]], "need 4 rows"),
        (lambda m: m[:2] + [m[2][:, :1], m[3]], "same"),
        (lambda m: m[:3] + [m[3][:, :4]], "same"),
        (lambda m: [m[0][:, :0], m[1], m[2][:, :0], m[3]], "non-zero"),
        (lambda m: [m[0], m[1][:, :0], m[2], m[3][:, :0]], "non-zero"),
    ],
)
def test_attribute_cos_shapes(change, match):
    s_x, s_y, mats = _mats()
    with pytest.raises(ConfigError, match=match):
        bootstrap_effect_size(s_x, s_y, n_resamples=5, attribute_cos=tuple(change(mats)))


def test_attribute_cos_non_finite_and_inconsistent():
    s_x, s_y, mats = _mats()
    bad = [m.copy() for m in mats]
    bad[3][0, 0] = np.inf
    with pytest.raises(ConfigError, match="NaN or infinite"):
        bootstrap_effect_size(s_x, s_y, n_resamples=5, attribute_cos=tuple(bad))
    with pytest.raises(ConfigError, match="inconsistent"):
        bootstrap_effect_size(s_x, s_y + 0.01, n_resamples=5, attribute_cos=tuple(mats))


@pytest.mark.parametrize("which", ["x", "y"])
def test_attribute_cos_consistency_tolerance(which):
    # one attribute column each: s = cos_A - cos_B exactly; allclose(s, given, rtol=1e-5, atol=1e-7)
    s = np.array([0.0, 1.0, -0.5])
    mats = (s[:, None], np.zeros((3, 1)), s[:, None], np.zeros((3, 1)))

    def run(delta):
        given = s + delta
        args = (given, s) if which == "x" else (s, given)
        return bootstrap_effect_size(*args, n_resamples=5, rng=0, attribute_cos=mats)

    run(np.array([0.7e-7, 0.0, 0.0]))  # |0 - 0.7e-7| <= 1e-7 + 1e-5 * 0.7e-7
    run(np.array([0.0, 0.7e-5, 0.0]))  # |1 - (1 + 0.7e-5)| <= 1e-7 + 1e-5 * 1.000007
    with pytest.raises(ConfigError, match="inconsistent"):
        run(np.array([1.3e-7, 0.0, 0.0]))
    with pytest.raises(ConfigError, match="inconsistent"):
        run(np.array([0.0, 1.2e-5, 0.0]))


def test_bca_identical_jackknife_values_fall_back():
    # x = [0], y = [1, 2] (ddof 1): both leave-one-out samples give d = -sqrt(2) (n = 2),
    # so the acceleration is 0/0; the replicates straddle d = -1.5, so z0 is finite
    r = bootstrap_effect_size([0.0], [1.0, 2.0], n_resamples=400, rng=0, method="bca")
    assert r.estimate == pytest.approx(-1.5, rel=1e-14)
    assert r.method == "percentile"
    assert r.note == "fell back to percentile: BCa acceleration undefined (identical jackknife values)"
