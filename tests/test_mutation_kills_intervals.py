"""Tests written to kill survivors of tools/mutation.py in stats/intervals.py, stats/_ci.py and stats/bootstrap.py.

Expected values are derived by hand or from scratch in the test: the BCa
quantile levels from Efron's formula (the docstring of
``bootstrap_effect_size``) on the same replicates, jackknife values by
explicit delete-one loops, record columns by hand.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.special import ndtr, ndtri

from isoeat.stats import intervals as iv
from isoeat.stats._ci import ConfidenceInterval
from isoeat.stats.bootstrap import _replicates, bootstrap_effect_size, effect_size

# ---------------------------------------------------------------------------
# bootstrap: BCa levels at 0 and 1, and past the pole of w / (1 - a w)
# ---------------------------------------------------------------------------


def _d(x, y):
    """Effect size from scratch: mean difference over the pooled SD (ddof 1)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    pooled = np.concatenate([x, y])
    sd = math.sqrt(sum((v - pooled.mean()) ** 2 for v in pooled) / (pooled.size - 1))
    return (x.mean() - y.mean()) / sd


def _bca_parts(x, y, n, seed, confidence):
    """Replicates (the same draws), z0, the acceleration and w = z0 + z_q at both levels, from the formula."""
    est = effect_size(x, y)  # the same rounding as the estimate the replicates are compared with
    reps = _replicates(np.array(x, float), np.array(y, float), 1, n, np.random.default_rng(seed), None)
    z0 = float(ndtri(np.mean(reps < est)))
    jack = np.array([_d(np.delete(x, i), y) for i in range(len(x))] + [_d(x, np.delete(y, i)) for i in range(len(y))])
    u = jack.mean() - jack
    a = float(np.sum(u**3) / (6 * np.sum(u**2) ** 1.5))
    alpha = 1 - confidence
    ws = [z0 + float(ndtri(q)) for q in (alpha / 2, 1 - alpha / 2)]
    return reps, z0, a, ws


# One X word far out: leaving it out moves d far below the other delete-one values, so the acceleration is
# near its bound -1/6 (about -0.117 here); at extreme levels a * (z0 + z_q) reaches 1 at the lower level.
X_OUT, Y_OUT = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 20.0], [0.0, 0.1, 0.2, 0.3]


def test_bca_lower_level_exactly_zero_is_kept_and_gives_the_smallest_replicate():
    conf = 1 - 2e-12
    reps, z0, a, ws = _bca_parts(X_OUT, Y_OUT, 2000, 1, conf)
    assert 0.5 < a * ws[0] < 1.0 and a * ws[1] < 1.0  # both levels before the pole
    levels = [float(ndtr(z0 + w / (1 - a * w))) for w in ws]
    assert levels[0] == 0.0 and 0.0 < levels[1] < 1.0  # z0 + w/(1 - a w) is about -72: ndtr underflows to 0
    r = bootstrap_effect_size(X_OUT, Y_OUT, n_resamples=2000, confidence=conf, rng=1, method="bca")
    assert r.method == "bca" and r.note is None
    assert r.ci_low == reps.min()
    assert r.ci_high == pytest.approx(float(np.quantile(reps, levels[1])), rel=1e-12)


def test_bca_upper_level_exactly_one_is_kept_and_gives_the_largest_replicate():
    x, y, conf = [0.0, 0.1, 0.2, 0.3, 50.0], [0.0, 0.1, 0.2, 0.3], 0.999999
    reps, z0, a, ws = _bca_parts(x, y, 2000, 1, conf)
    assert 0.5 < a * ws[1] < 1.0 and a * ws[0] < 1.0
    levels = [float(ndtr(z0 + w / (1 - a * w))) for w in ws]
    assert levels[1] == 1.0 and 0.0 < levels[0] < 1.0  # z0 + w/(1 - a w) is about 10: ndtr rounds to 1
    r = bootstrap_effect_size(x, y, n_resamples=2000, confidence=conf, rng=1, method="bca")
    assert r.method == "bca" and r.note is None
    assert r.ci_high == reps.max()
    assert r.ci_low == pytest.approx(float(np.quantile(reps, levels[0])), rel=1e-12)


def test_bca_past_the_pole_falls_back_instead_of_an_inverted_interval():
    # Bug found by the mutation check: with a (z0 + z_q) > 1 the formula maps the lower level to 1.0
    # (w / (1 - a w) changes sign past the pole), and the "BCa" interval came out inverted (low > high).
    conf = 1 - 1e-15
    reps, z0, a, ws = _bca_parts(X_OUT, Y_OUT, 2000, 1, conf)
    assert a * ws[0] > 1.0 > a * ws[1]
    assert float(ndtr(z0 + ws[0] / (1 - a * ws[0]))) > float(ndtr(z0 + ws[1] / (1 - a * ws[1])))  # inverted
    r = bootstrap_effect_size(X_OUT, Y_OUT, n_resamples=2000, confidence=conf, rng=1, method="bca")
    assert r.method == "percentile"
    assert r.note == "fell back to percentile: BCa transformation not monotone (1 - a(z0 + z_q) <= 0 at a level)"
    alpha = 1 - conf
    np.testing.assert_allclose([r.ci_low, r.ci_high], np.quantile(reps, [alpha / 2, 1 - alpha / 2]), rtol=1e-12)
    assert r.ci_low <= r.estimate <= r.ci_high


def test_bca_upper_level_past_the_pole_falls_back_too():
    # A Y word far below the rest: leaving it out lowers d, so the acceleration is positive (about 0.14)
    # and the upper level passes the pole, a * w > 1 with w > 0.
    x, y, conf = [0.0, 0.1, 0.2, 0.3], [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, -20.0], 1 - 1e-15
    reps, z0, a, ws = _bca_parts(x, y, 2000, 1, conf)
    assert a * ws[1] > 1.0 > a * ws[0]
    r = bootstrap_effect_size(x, y, n_resamples=2000, confidence=conf, rng=1, method="bca")
    assert r.method == "percentile" and "not monotone" in r.note
    alpha = 1 - conf
    np.testing.assert_allclose([r.ci_low, r.ci_high], np.quantile(reps, [alpha / 2, 1 - alpha / 2]), rtol=1e-12)


def test_bca_exactly_at_the_pole_falls_back(monkeypatch):
    # a (z0 + z_q) == 1 exactly: the formula divides by 0, so the interval falls back (documented: >= 1).
    # Built with exact arithmetic: jackknife values 5, -1, -1, -3 (mean 0) give deviations -5, 1, 1, 3 with
    # sum of squares 36 = 6**2 and sum of cubes -96, so a = -96 / (6 * 216) = -2/27 (one rounding, the same
    # in the test as in the program); z0 = 0 and the lower z_q = -13.5 = 1/a up to that rounding.
    import scipy.special

    import isoeat.stats.bootstrap as bs

    conf = 0.9
    a = -96.0 / (6.0 * 36.0**1.5)
    assert a * -13.5 == 1.0  # exactly at the pole, in floating point

    def fake_ndtri(p):
        p = float(p)
        return -13.5 if p == (1 - conf) / 2 else (13.5 if p == 1 - (1 - conf) / 2 else 0.0)

    monkeypatch.setattr(scipy.special, "ndtri", fake_ndtri)
    monkeypatch.setattr(bs, "_jackknife", lambda x, y, ddof: np.array([5.0, -1.0, -1.0, -3.0]))
    x, y = [0.0, 1.0, 5.0], [0.0, 0.5, 1.0]
    r = bootstrap_effect_size(x, y, n_resamples=500, confidence=conf, rng=2, method="bca")
    assert r.method == "percentile"
    assert r.note == "fell back to percentile: BCa transformation not monotone (1 - a(z0 + z_q) <= 0 at a level)"
    reps = _replicates(np.array(x), np.array(y), 1, 500, np.random.default_rng(2), None)
    np.testing.assert_allclose([r.ci_low, r.ci_high], np.quantile(reps, [0.05, 0.95]), rtol=1e-12)


# ---------------------------------------------------------------------------
# _ci: the interval record
# ---------------------------------------------------------------------------


def _same(a: ConfidenceInterval, b: ConfidenceInterval) -> bool:
    """Field-by-field equality with NaN equal to NaN."""
    for f in dataclasses.fields(ConfidenceInterval):
        u, v = getattr(a, f.name), getattr(b, f.name)
        if not (u == v or (isinstance(u, float) and isinstance(v, float) and math.isnan(u) and math.isnan(v))):
            return False
    return True


def test_interval_is_frozen():
    ci = ConfidenceInterval(low=0.1, high=0.9, level=0.95, method="noncentral-t")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ci.low = 0.0  # type: ignore[misc]


def test_defaults_of_an_interval():
    ci = ConfidenceInterval(low=0.1, high=0.9, level=0.95, method="noncentral-t")
    assert (ci.n_resamples, ci.estimand, ci.note, ci.warning) == (0, "given-attributes", "", "")
    assert math.isnan(ci.estimate)


def test_flat_of_no_interval_by_hand():
    got = ConfidenceInterval.flat(None, "p")
    assert list(got) == ["p_low", "p_high", "p_method", "p_level", "p_resamples", "p_note", "p_estimand",
                         "p_estimate", "p_warning"]
    assert math.isnan(got["p_low"]) and math.isnan(got["p_high"]) and math.isnan(got["p_level"])
    assert math.isnan(got["p_estimate"])
    assert (got["p_method"], got["p_resamples"], got["p_note"], got["p_estimand"], got["p_warning"]) == (
        "", 0, "", "", "")


def test_flat_of_an_interval_by_hand():
    ci = ConfidenceInterval(low=-0.5, high=1.5, level=0.9, method="bca", n_resamples=2000, estimand="populations",
                            note="3 replicates dropped", estimate=0.7, warning="w")
    assert ConfidenceInterval.flat(ci, "q") == {
        "q_low": -0.5, "q_high": 1.5, "q_method": "bca+attributes", "q_level": 0.9, "q_resamples": 2000,
        "q_note": "3 replicates dropped", "q_estimand": "populations", "q_estimate": 0.7, "q_warning": "w"}


@pytest.mark.parametrize("estimand, method, label", [
    ("populations", "bca", "bca+attributes"), ("populations", "percentile", "percentile+attributes"),
    ("populations", "jackknife", "jackknife"), ("given-attributes", "bca", "bca"),
    ("given-attributes", "noncentral-t", "noncentral-t"), ("given-word", "noncentral-t", "noncentral-t"),
])
def test_label_names_attribute_resampling_only_for_a_populations_bootstrap(estimand, method, label):
    ci = ConfidenceInterval(low=0.0, high=1.0, level=0.95, method=method, estimand=estimand)
    assert ci.label == label
    assert ci.resample_attributes is label.endswith("+attributes")


@pytest.mark.parametrize("low, high, warning, flagged", [
    (0.0, 1.0, "", False), (math.nan, 1.0, "", True), (0.0, math.nan, "", True), (0.0, math.inf, "", True),
    (-math.inf, 1.0, "", True), (0.0, 1.0, "not established", True),
])
def test_flagged_by_hand(low, high, warning, flagged):
    ci = ConfidenceInterval(low=low, high=high, level=0.95, method="noncentral-t", warning=warning)
    assert ci.flagged is flagged


def test_from_flat_reads_json_nulls_as_nan_and_empty():
    rec = {"p_low": None, "p_high": None, "p_method": "noncentral-t", "p_level": 0.95, "p_resamples": None,
           "p_note": None, "p_estimand": None, "p_estimate": None, "p_warning": None}
    want = ConfidenceInterval(low=math.nan, high=math.nan, level=0.95, method="noncentral-t", n_resamples=0,
                              estimand="given-attributes", note="", estimate=math.nan, warning="")
    got = ConfidenceInterval.from_flat(rec, "p")
    assert _same(got, want), got


def test_from_flat_of_an_older_record_with_attributes():
    rec = {"p_low": 0.2, "p_high": 1.2, "p_method": "percentile+attributes", "p_level": 0.9, "p_resamples": 999}
    want = ConfidenceInterval(low=0.2, high=1.2, level=0.9, method="percentile", n_resamples=999,
                              estimand="populations")
    assert _same(ConfidenceInterval.from_flat(rec, "p"), want)


def test_from_flat_needs_neither_resamples_nor_method_to_be_missing():
    assert ConfidenceInterval.from_flat({}, "p") is None
    assert ConfidenceInterval.from_flat({"p_resamples": 0, "p_method": ""}, "p") is None
    # resamples without a method: still an interval (method empty)
    got = ConfidenceInterval.from_flat({"p_resamples": 500, "p_level": 0.95, "p_low": 0.0, "p_high": 1.0}, "p")
    want = ConfidenceInterval(low=0.0, high=1.0, level=0.95, method="", n_resamples=500)
    assert _same(got, want)
    got = ConfidenceInterval.from_flat({"p_method": "jackknife", "p_estimand": "populations", "p_note": "n",
                                        "p_warning": "w", "p_estimate": 0.5}, "p")
    want = ConfidenceInterval(low=math.nan, high=math.nan, level=math.nan, method="jackknife",
                              estimand="populations", note="n", warning="w", estimate=0.5)
    assert _same(got, want)


# ---------------------------------------------------------------------------
# intervals: the check-and-solve path of the noncentrality, on a stand-in CDF
# ---------------------------------------------------------------------------
# scipy's nctdtr / nctdtrinc are replaced by a normal location family F(x) = Phi(t + shift - x) (decreasing
# in x, like the noncentral-t CDF in lambda), whose root of F(x) = p is x* = t + shift - Phi^-1(p), and by a
# "cdflib" answer L0 at which F is made to return a chosen value. The answer is kept when that value is
# within 1e-5 of the tail probability min(p, 1 - p) of p, solved again otherwise (docstring).

L0 = 5.0


def _fake_cdf(monkeypatch, at_l0=None, shift=0.0, nan_beyond=math.inf):
    import scipy.special

    def nctdtr(df, lam, t):
        lam, t = np.broadcast_arrays(np.asarray(lam, float), np.asarray(t, float))
        z = t + shift - lam
        out = np.where(np.abs(z) > nan_beyond, np.nan, ndtr(z))  # NaN far in a tail, like cdflib
        if at_l0 is not None:
            out = np.where(lam == L0, at_l0, out)
        return out

    monkeypatch.setattr(scipy.special, "nctdtr", nctdtr)
    monkeypatch.setattr(scipy.special, "nctdtrinc", lambda df, p, t: np.full(np.shape(t), L0))


@pytest.mark.parametrize("p", [0.025, 0.975, 0.0005, 0.9995, 0.3])
@pytest.mark.parametrize("k, kept", [(0.9, True), (-0.9, True), (1.1, False), (-1.1, False)])
def test_cdflib_answer_kept_within_the_tolerance_of_its_tail(monkeypatch, p, k, kept):
    tail = min(p, 1 - p)
    _fake_cdf(monkeypatch, at_l0=p + k * 1e-5 * tail)
    t = 0.3
    got = iv._nct_noncentrality(10, p, np.array([t]))[0]
    root = t - float(ndtri(p))
    assert got == (L0 if kept else pytest.approx(root, abs=1e-9))


@pytest.mark.parametrize("p", [0.46120230955959407, 0.8070165296071288])
@pytest.mark.parametrize("sign", [1, -1])
def test_cdflib_answer_off_by_exactly_the_tolerance_is_kept(monkeypatch, p, sign):
    # These p were found by a search over random floats for p +- 1e-5 * min(p, 1 - p) exactly representable,
    # so that the check sees |F(L0) - p| equal to the tolerance, bit for bit.
    thr = 1e-5 * min(p, 1.0 - p)
    c = p + sign * thr
    assert abs(c - p) == thr
    _fake_cdf(monkeypatch, at_l0=c)
    assert iv._nct_noncentrality(10, p, np.array([0.3]))[0] == L0


def test_a_nan_check_counts_as_off(monkeypatch):
    _fake_cdf(monkeypatch, at_l0=math.nan)
    got = iv._nct_noncentrality(10, 0.025, np.array([0.3]))[0]
    assert got == pytest.approx(0.3 - float(ndtri(0.025)), abs=1e-9)


@pytest.mark.parametrize("t, p", [(25.0, 0.0005), (-25.0, 0.9995), (25.0, 0.9995), (-25.0, 0.0005)])
def test_where_the_cdf_is_nan_far_in_a_tail_it_counts_as_0_or_1(monkeypatch, t, p):
    # The first bracket is (-|t| - 10, |t| + 10); at x = -35 (t = 25) the CDF is NaN here (|t - x| > 30)
    # and stands for 1 (x < t: far below the root), at x = 35 (t = -25) for 0.
    _fake_cdf(monkeypatch, at_l0=math.nan, nan_beyond=30.0)
    got = iv._nct_noncentrality(10, p, np.array([t]))[0]
    assert got == pytest.approx(t - float(ndtri(p)), abs=1e-9)


# ---------------------------------------------------------------------------
# intervals: jackknife at an estimate of exactly 0, interval_on_d, IntervalRequest
# ---------------------------------------------------------------------------


def _blocks(nx, ny, na, nb, seed):
    """Cosine-like blocks with word, attribute and interaction effects."""
    rng = np.random.default_rng(seed)
    rx, ry = rng.normal(0.4, 1.0, nx), rng.normal(-0.4, 1.0, ny)
    va, vb = rng.normal(0, 0.5, na), rng.normal(0, 0.5, nb)
    return (rx[:, None] / 2 + va + rng.normal(0, 0.3, (nx, na)), -rx[:, None] / 2 + vb + rng.normal(0, 0.3, (nx, nb)),
            ry[:, None] / 2 + va + rng.normal(0, 0.3, (ny, na)), -ry[:, None] / 2 + vb + rng.normal(0, 0.3, (ny, nb)))


def test_jackknife_at_an_estimate_of_exactly_zero_has_a_finite_se():
    # Y's cosines equal X's: D = 0 exactly, so the estimate is 0; the delete-one estimates are not all 0, so
    # the standard error is finite and positive, and the interval is symmetric about 0.
    cxa, cxb, _, _ = _blocks(6, 6, 5, 5, seed=3)
    est, se, lo, hi = iv.jackknife_population_interval(cxa, cxb, cxa.copy(), cxb.copy(), 0.95)
    assert est == 0.0
    assert math.isfinite(se) and se > 0
    assert lo == -hi and hi > 0


def test_interval_request_is_frozen():
    r = iv.IntervalRequest(estimand="given-attributes", method="noncentral-t", level=0.95, n_resamples=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.level = 0.9  # type: ignore[misc]


def _req(estimand, method, n=0, level=0.95):
    return iv.IntervalRequest(estimand=estimand, method=method, level=level, n_resamples=n)


@pytest.mark.parametrize("estimand", ["given-attributes", "populations"])
def test_bootstrap_interval_resamples_attributes_only_for_populations(estimand):
    mats = _blocks(5, 6, 4, 3, seed=8)
    sx, sy = mats[0].mean(1) - mats[1].mean(1), mats[2].mean(1) - mats[3].mean(1)
    ci = iv.interval_on_d(sx, sy, mats, _req(estimand, "percentile", n=400), rng=12)
    # default ddof = 1; the same replicates drawn from scratch with the attribute words only for populations
    reps = _replicates(sx, sy, 1, 400, np.random.default_rng(12), mats if estimand == "populations" else None)
    np.testing.assert_allclose([ci.low, ci.high], np.quantile(reps, [0.025, 0.975]), rtol=1e-12)
    assert (ci.method, ci.n_resamples, ci.note, ci.estimand) == ("percentile", 400, "", estimand)


def test_bootstrap_interval_ddof_default_is_one():
    sx, sy = np.array([0.1, 0.5, 0.2, 0.9]), np.array([0.0, -0.3, 0.1])
    ci = iv.interval_on_d(sx, sy, None, _req("given-attributes", "percentile", n=300), rng=4)
    reps1 = _replicates(sx, sy, 1, 300, np.random.default_rng(4), None)
    np.testing.assert_allclose([ci.low, ci.high], np.quantile(reps1, [0.025, 0.975]), rtol=1e-12)
    ci0 = iv.interval_on_d(sx, sy, None, _req("given-attributes", "percentile", n=300), ddof=0, rng=4)
    assert ci0.low != ci.low  # ddof changes the replicates' SD: so the default is pinned


@pytest.mark.parametrize("na, nb, warned", [(25, 25, False), (24, 25, True), (25, 24, True)])
def test_populations_warning_reads_the_attribute_sizes_from_the_matrices(na, nb, warned):
    # 16 targets per set and 25 attributes per set is where the study establishes the jackknife (COVERED_FROM)
    mats = _blocks(16, 16, na, nb, seed=5)
    sx, sy = mats[0].mean(1) - mats[1].mean(1), mats[2].mean(1) - mats[3].mean(1)
    ci = iv.interval_on_d(sx, sy, mats, _req("populations", "jackknife"))
    assert bool(ci.warning) is warned
    assert math.isfinite(ci.low) and ci.note == ""


@pytest.mark.parametrize("n, note", [(3, ""), (2, "no interval: the populations estimand needs at least 3 words in every set")])
def test_populations_note_at_three_words(n, note):
    mats = _blocks(n, 4, 4, 4, seed=6)
    sx, sy = mats[0].mean(1) - mats[1].mean(1), mats[2].mean(1) - mats[3].mean(1)
    ci = iv.interval_on_d(sx, sy, mats, _req("populations", "jackknife"))
    assert ci.note == note
    assert math.isfinite(ci.high) is (n == 3)


def test_populations_note_when_the_attribute_noise_explains_the_spread():
    # s equal within each set (row effects cancel) but the cosines vary: sigma^2 estimate <= 0, no interval
    rng = np.random.default_rng(2)
    cxa = rng.normal(0, 1, (4, 4))
    cxb = cxa - 0.5
    cya = rng.normal(0, 1, (4, 4))
    cyb = cya + 0.5
    sx, sy = cxa.mean(1) - cxb.mean(1), cya.mean(1) - cyb.mean(1)
    ci = iv.interval_on_d(sx, sy, (cxa, cxb, cya, cyb), _req("populations", "jackknife"))
    assert math.isnan(ci.low) and math.isnan(ci.high)
    assert ci.note.startswith("no interval: the attribute words' noise accounts for all the spread of s")


def test_analytic_methods_record_no_resamples():
    r = iv.check_interval_options(True, 0, "auto", 0.95, "given-attributes")
    assert (r.estimand, r.method, r.n_resamples) == ("given-attributes", "noncentral-t", 0)
    r = iv.check_interval_options(True, 0, "jackknife", 0.95, "populations")
    assert (r.method, r.n_resamples) == ("jackknife", 0)


@pytest.mark.parametrize("bootstrap, level, n", [(0, 0.95, 10_000), (500, 0.95, 500), (0, 0.9999, 100_000)])
def test_bootstrap_methods_record_their_replicates(bootstrap, level, n):
    # without bootstrap=N: max(10,000, need) with need = 2 * 5 / (1 - level) (5 values beyond each end):
    # 200 at 0.95, 100,000 at 0.9999
    r = iv.check_interval_options(True, bootstrap, "bca", level, "given-attributes")
    assert (r.method, r.n_resamples, r.level) == ("bca", n, level)


@pytest.mark.parametrize("root, found", [(5.2e6, True), (-5.2e6, True), (5.3e6, False), (-5.3e6, False)])
def test_the_search_widens_the_bracket_by_doubling_twenty_times(monkeypatch, root, found):
    # t = 0, p = 0.5: the stand-in's root is x* = shift. The loop tries (-|t| - 10, |t| + 10) * 2**k for
    # k = 0..19 (20 brackets), the last one (-5,242,880, 5,242,880): a root at +-5.2e6 is inside it, one at
    # +-5.3e6 is past it (a 21st bracket, 10,485,760, would hold it), so it is NaN.
    assert 10.0 * 2.0**19 == 5_242_880.0
    _fake_cdf(monkeypatch, at_l0=math.nan, shift=root)
    got = iv._nct_noncentrality(10, 0.5, np.array([0.0]))[0]
    if found:
        assert got == pytest.approx(root, abs=1e-6)
    else:
        assert math.isnan(got)


@pytest.mark.parametrize("t", [-30.0, 30.0])
def test_the_first_bracket_reaches_10_beyond_t_on_both_sides(monkeypatch, t):
    # The last bracket is (-|t| - 10, |t| + 10) * 2**19; with |t| = 30 that is 40 * 2**19 = 20,971,520 on
    # each side, so a root at +-2.09e7 is found whatever the sign of t (a first bracket of |t| + 5, or of
    # t + 10 / -t - 10 for the sign of t that shrinks it, ends short of it).
    for root in (2.09e7, -2.09e7):
        _fake_cdf(monkeypatch, at_l0=math.nan, shift=root - t)
        assert iv._nct_noncentrality(10, 0.5, np.array([t]))[0] == pytest.approx(root, abs=1e-6)


@pytest.mark.parametrize("p", [0.025, 0.5, 0.975])
def test_a_nan_cdf_stands_for_1_below_t_and_0_from_t_on(monkeypatch, p):
    # Where nctdtr is NaN (far in a tail; for t below about -1.8e5 scipy's is NaN even at lambda = t) the
    # search uses the limit of P(T <= t) in lambda: 1 for lambda below t, 0 for lambda at or above it (the
    # rule float(lambda < t), exactly at its boundary). brentq is replaced by a probe of the function it is
    # given, at t itself and one ulp either side, with a stand-in CDF that is NaN everywhere but at the ends
    # of the first bracket (so that it is bracketed: 1 at -|t| - 10, 0 at |t| + 10).
    import scipy.optimize
    import scipy.special

    t = -2.5e5
    lo, hi = -abs(t) - 10.0, abs(t) + 10.0

    def nctdtr(df, lam, tt):
        lam = np.asarray(lam, float)
        return np.where(lam == lo, 1.0, np.where(lam == hi, 0.0, np.nan))

    probed = {}

    def probe(f, a, b, xtol):
        assert (a, b) == (lo, hi)
        for x in (np.nextafter(t, -np.inf), t, np.nextafter(t, np.inf)):
            probed[float(x)] = f(float(x))
        return 1.0

    monkeypatch.setattr(scipy.special, "nctdtr", nctdtr)
    monkeypatch.setattr(scipy.special, "nctdtrinc", lambda df, p, t: np.full(np.shape(t), L0))
    monkeypatch.setattr(scipy.optimize, "brentq", probe)
    assert iv._nct_noncentrality(10, p, np.array([t]))[0] == 1.0
    assert probed == {float(np.nextafter(t, -np.inf)): 1.0 - p, t: 0.0 - p, float(np.nextafter(t, np.inf)): 0.0 - p}


def test_populations_jackknife_default_budget_is_2_gib():
    # the budget check of interval_on_d: 48 * (t**2 a + a**2 t) bytes with t, a the largest target and attribute
    # sets. t = a = 282 needs 48 * 2 * 282**3 = 2,152,873,728 bytes, just over 2 GiB = 2,147,483,648: refused by
    # default, before anything is allocated (t = a = 281 would need 2,130,071,136, under it)
    assert 48 * 2 * 281**3 < 2**31 < 48 * 2 * 282**3 == 2_152_873_728
    g = np.random.default_rng(1)
    cxa, cxb, cya, cyb = g.normal(size=(282, 282)), g.normal(size=(282, 3)), g.normal(size=(3, 282)), g.normal(size=(3, 3))
    sx, sy = cxa.mean(1) - cxb.mean(1), cya.mean(1) - cyb.mean(1)
    ci = iv.interval_on_d(sx, sy, (cxa, cxb, cya, cyb), _req("populations", "jackknife"))
    assert math.isnan(ci.low) and math.isnan(ci.high)
    assert ci.note == ("no interval: the jackknife over 282+3 target and 282+3 attribute words needs about 2.0 GiB, "
                       "over its 2 GiB budget")
