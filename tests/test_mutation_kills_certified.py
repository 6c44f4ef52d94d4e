"""Tests that kill mutants of ``isoeat/stats/_certified.py``: tables, counts and limits from scratch.

Expected values are computed here independently of the module:

* subset counts by enumerating every subset with :mod:`itertools` (exact
  integers, or :class:`fractions.Fraction` sums of the float inputs);
* partition counts by the exact meet-in-the-middle counts of
  ``partition_test(method="exact")`` (independent code, :mod:`isoeat.stats._exact`;
  the brute-force tie-rule counter is ``brute_count`` in tests/test_certified.py);
* table sizes, the rounding depth and the limits from the formulas written in
  the module's docstrings, worked by hand in the comments.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from isoeat import ConfigError
from isoeat.stats import _certified
from isoeat.stats._certified import _certified_tail_count, certified_bracket, certified_memory_bytes
from isoeat.stats.permutation import DEFAULT_RTOL

ALTS = ("greater", "less", "two-sided")


# ---------------------------------------------------------------------------
# memory of the tables (docstring of certified_memory_bytes), by hand
# ---------------------------------------------------------------------------


def test_memory_of_the_tables_by_hand():
    # s = [0, 1, 2, 3], n_x = 2, grid 1: X side {0, 1}, Y side {2, 3}, sizes j = 0, 1, 2.
    # X: j = 0 -> sums {0} (width 1), j = 1 -> {0, 1} (2), j = 2 -> {1} (1); Y likewise 1, 2, 1.
    # 8 bytes * (sum of widths 8 + 3 temporaries of the widest, 2) = 8 * 14 = 112
    assert certified_memory_bytes([0.0, 1.0, 2.0, 3.0], 2, 0) == 112
    # grid 1/2: X {0, 2}: widths 1, 3, 1; Y {4, 6}: 1, 3, 1 -> 8 * (10 + 3 * 3) = 152
    assert certified_memory_bytes([0.0, 1.0, 2.0, 3.0], 2, 1) == 152
    # n_x = 3 of 4 counts the complement (size 1): Y side {3} first: j = 0 -> 1, j = 1 -> 1;
    # X side {0, 1, 2}: j = 0 -> 1, j = 1 -> {0, 1, 2}, width 3 -> 8 * (6 + 3 * 3) = 120
    assert certified_memory_bytes([0.0, 1.0, 2.0, 3.0], 3, 0) == 120
    # one value per side, n_x = 1: widths 1, 1 on each side -> 8 * (4 + 3) = 56
    assert certified_memory_bytes([5.0, -7.0], 1, 0) == 56


def test_half_plan_smallest_sums_and_widths_by_hand():
    # ascending [-2, 0, 0, 5], sizes up to 3: smallest sums 0, -2, -2, -2; largest 0, 5, 5, 5;
    # widths 1, 8, 8, 8
    assert _certified._half_plan([-2, 0, 0, 5], 3) == ([0, -2, -2, -2], [1, 8, 8, 8])
    # sizes capped at the number of values: kmax 5 of 2 values -> j = 0, 1, 2
    assert _certified._half_plan([1, 4], 5) == ([0, 1, 5], [1, 4, 1])


def test_depth_is_the_documented_bound():
    # n + 2w + 2(k + 1) + 8 with w the widest table: n = 10, widths 1, 3, 2 and 4 -> w = 4, k = 2:
    # 10 + 8 + 6 + 8 = 32
    halves = [[(0, np.zeros(1)), (0, np.zeros(3)), (0, np.zeros(2))], [(0, np.zeros(4))]]
    assert _certified._depth(10, halves, 2) == 32
    assert _certified._depth(1, [[(0, np.zeros(1))]], 0) == 1 + 2 + 2 + 8


# ---------------------------------------------------------------------------
# the dynamic programme and the combination against enumeration
# ---------------------------------------------------------------------------


def _subset_sum_counts(vals, j):
    counts = {}
    for c in itertools.combinations(vals, j):
        counts[sum(c)] = counts.get(sum(c), 0) + 1
    return counts


@pytest.mark.parametrize("vals", [[-3, -3, 0, 1, 1, 4, 9], [2], [0, 0, 0], [-5, 2, 7, 7, 8, 20]])
def test_half_tables_count_every_subset_sum(vals):
    for kmax in range(len(vals) + 2):
        tabs = _certified._half_tables(vals, kmax)
        assert len(tabs) == min(kmax, len(vals)) + 1
        for j, (lo, arr) in enumerate(tabs):
            expected = _subset_sum_counts(vals, j)
            assert lo == min(expected)
            got = {lo + i: int(c) for i, c in enumerate(arr) if c}
            assert got == expected, (vals, kmax, j)
            assert arr.size == max(expected) - min(expected) + 1


def test_count_ge_pairs_the_halves_at_every_threshold():
    left_vals, right_vals = [-2, 0, 1, 1, 3], [-1, 2, 2, 5]
    for k in range(0, len(left_vals) + len(right_vals) + 1):
        left = _certified._half_tables(left_vals, k)
        right = _certified._half_tables(right_vals, k)
        js = range(max(0, k - len(right_vals)), min(k, len(left_vals)) + 1)
        sums = {j: [sum(a) + sum(b) for a in itertools.combinations(left_vals, j)
                    for b in itertools.combinations(right_vals, k - j)] for j in js}
        # thresholds from below every sum to above every sum, per size; two queries at once
        for shift in range(-16, 17):
            ths = {j: [shift + j, shift - j] for j in js}
            got = _certified._count_ge(left, right, k, ths)
            want = [sum(sum(v >= ths[j][q] for v in sums[j]) for j in js) for q in range(2)]
            assert got == want, (k, shift)


# ---------------------------------------------------------------------------
# limits
# ---------------------------------------------------------------------------


def test_table_update_limit_at_its_boundary():
    # n (k + 1) updates: 2**19 values of subsets of 1 make exactly 2**20 (allowed), one more value does not
    assert _certified._feasible(2**19, 1) == ""
    assert "table updates" in _certified._feasible(2**19 + 1, 1)
    assert _certified._feasible(2**10, 2**10 - 1) == ""  # 2**10 * 2**10
    assert "table updates" in _certified._feasible(2**10, 2**10)


def test_float_limit_at_its_boundary():
    # C(1005, 502) < 2**1000 < C(1006, 503) < 2**1001 (checked here); both well within the update limit
    assert math.comb(1005, 502) < 2**1000 < math.comb(1006, 503) < 2**1001
    assert _certified._feasible(1005, 502) == ""
    assert "2**1000" in _certified._feasible(1006, 503)


def test_small_problems_split_by_the_observed_sides():
    # C(46, 23) = 8.2e12 <= 1e13: observed sides; C(48, 24) = 3.2e13 in (1e13, 11**13): sorted halves
    assert math.comb(46, 23) <= 10**13 < math.comb(48, 24) < 11**13
    for n in (46, 48):
        s = np.random.default_rng(n).normal(size=n)
        prob = _certified._Problem(s, n // 2, "greater", DEFAULT_RTOL)
        fr = [Fraction(v) for v in s.tolist()]
        if n == 46:
            assert prob.halves == (fr[:23], fr[23:])
            assert [a.tolist() for a in prob.float_halves] == [s[:23].tolist(), s[23:].tolist()]
        else:
            assert prob.halves == (sorted(fr)[:24], sorted(fr)[24:])
            assert [a.tolist() for a in prob.float_halves] == [np.sort(s)[:24].tolist(), np.sort(s)[24:].tolist()]


def test_refinement_stops_at_the_grid_that_rounds_no_float():
    # multiples of 2**-1074 (the smallest subnormal): no grid rounds them from 2**-1074 on, and with
    # C(64, 32) > 2**53 the float counts keep the bracket wider than a relative 1e-30, so refinement
    # runs up to the documented finest grid 2**-1075 and says so
    rng = np.random.default_rng(3)
    vals = rng.integers(0, 4, size=64)
    vals[:32] = np.sort(vals[:32])[::-1]
    s = np.ldexp(vals.astype(float), -1074)
    r = _certified_tail_count(s, 32, "greater", DEFAULT_RTOL, 2**30, rel_width=1e-30, abs_width=0.0)
    assert (r.bits, r.reached, r.reason) == (1075, False, "resolution 2**-1075 reached")
    assert r.low < r.high


def test_predicted_tables_are_refused_beyond_four_times_the_budget():
    # the refusal without running is at predicted > 4 * memory: seed 0 predicts a multiple of 4 bytes
    s = np.random.default_rng(0).normal(size=20)
    prob = _certified._Problem(s, 10, "greater", DEFAULT_RTOL)
    predicted = _certified._plan_estimate(prob, _certified._predicted_bits(prob, 1e-3, 1e-12))
    assert predicted % 4 == 0
    at = _certified_tail_count(s, 10, "greater", DEFAULT_RTOL, predicted // 4)  # exactly 4 times: runs
    assert at.bits is not None and "(predicted)" not in at.reason
    below = _certified_tail_count(s, 10, "greater", DEFAULT_RTOL, predicted // 4 - 1)
    assert below.bits is None and below.reason.endswith("(predicted)") and (below.low, below.high) == (0, 184756)


# ---------------------------------------------------------------------------
# the predicted resolution and the float memory estimate
# ---------------------------------------------------------------------------


def predicted_bits_from_scratch(s, n_x, alternative, rel_width, abs_width):
    """The resolution the docstrings describe, computed on the X side with scipy's normal distribution.

    The sum T of a random n_x-subset has mean n_x * mean(s) and variance
    n_x (n - n_x) / (n (n - 1)) * sum (s - mean)^2 (sampling without replacement); with p the normal
    tail at the thresholds and f the density there, the grid delta that makes the bracket's width,
    f * delta * span (span = max(k (n - k) / (2n), 1) grid steps), equal to max(rel_width * p, abs_width);
    never coarser than 16 grid steps across the values (2**(floor(log2(spread)) - 3)), at most 2**-1075.
    Counting the complement gives the same p and f (T_c = sum(s) - T).
    """
    from scipy.stats import norm

    s = np.asarray(s, dtype=float)
    n, k = s.size, min(n_x, s.size - n_x)
    if not np.any(s):
        return 0
    spread = float(s.max() - s.min())
    coarse = 3 - math.floor(math.log2(spread)) if spread > 0 else -(math.frexp(float(np.abs(s).max()))[1])
    fr = [Fraction(v) for v in s.tolist()]
    tau = Fraction(DEFAULT_RTOL * float(np.abs(s).sum()))
    t_obs, m = sum(fr[:n_x]), Fraction(n_x) * sum(fr) / n
    if alternative == "greater":
        queries = [("ge", t_obs - tau)]
    elif alternative == "less":
        queries = [("le", t_obs + tau)]
    else:
        d = abs(t_obs - m) - tau
        queries = [("ge", m + d), ("le", m - d)] if d > 0 else []
    sd = math.sqrt(n_x * (n - n_x) / (n * (n - 1)) * float(np.sum((s - s.mean()) ** 2)))
    if sd == 0 or not queries:
        return coarse
    dist = norm(n_x * float(s.mean()), sd)
    p = sum(dist.sf(float(t)) if way == "ge" else dist.cdf(float(t)) for way, t in queries)
    dens = sum(dist.pdf(float(t)) for _, t in queries)
    delta = max(rel_width * p, abs_width) / (dens * max(k * (n - k) / n / 2, 1.0))
    return min(1075, max(coarse, math.ceil(-math.log2(delta))))


@pytest.mark.parametrize("seed", range(6))
def test_predicted_resolution_follows_the_normal_approximation(seed):
    rng = np.random.default_rng(200 + seed)
    n = (12, 30, 9)[seed % 3]
    n_x = (6, 11, 7)[seed % 3]  # 7 of 9 counts the complement
    s = rng.normal(scale=10.0 ** (seed - 3), size=n)
    s[:n_x] += 0.3 * 10.0 ** (seed - 3) * (seed % 2)
    for alt in ALTS:
        for rel, ab in ((1e-3, 1e-12), (0.5, 1e-3), (1e-9, 1e-30)):
            prob = _certified._Problem(s, n_x, alt, DEFAULT_RTOL)
            assert _certified._predicted_bits(prob, rel, ab) == predicted_bits_from_scratch(s, n_x, alt, rel, ab), \
                (alt, rel, ab)


def test_predicted_resolution_without_spread_or_values():
    # all zero: grid 1; all equal (no spread, no variance): one grid step of 2**(e) above the values,
    # e the binary exponent of the peak (frexp(1.5) = (0.75, 1))
    assert _certified._predicted_bits(_certified._Problem(np.zeros(6), 3, "greater", DEFAULT_RTOL), 1e-3, 1e-12) == 0
    assert _certified._predicted_bits(_certified._Problem(np.full(6, 1.5), 3, "greater", DEFAULT_RTOL),
                                      1e-3, 1e-12) == -1
    # the observed value at the null mean two-sided: no query, the coarse grid alone
    s = np.array([1.0, -1.0, 0.0, 2.0, -2.0, 0.0])  # spread 4 = 2**2: grid 2**-1 (8 steps across)
    assert _certified._predicted_bits(_certified._Problem(s, 3, "two-sided", DEFAULT_RTOL), 1e-3, 1e-12) == 1
    assert predicted_bits_from_scratch(s, 3, "two-sided", 1e-3, 1e-12) == 1


def test_float_memory_estimate_by_hand_and_its_cap():
    # the tables of test_memory_of_the_tables_by_hand, each size j widened by j steps (the slack of j
    # rounded values; an estimate before rounding). n_x = 2, grid 1: X {0, 1}: 1, 1 + 2, 0 + 3 -> 7;
    # Y {2, 3}: 7 -> 8 * (14 + 3 * 3) = 184. Grid 1/2: X {0, 2}: 1, 2 + 2, 0 + 3 -> 8; Y {4, 6}: 8
    # -> 8 * (16 + 3 * 4) = 224. n_x = 3 (complement, size 1): Y {3}: 1, 2; X {0, 1, 2}: 1, 2 + 2
    # -> 8 * (8 + 3 * 4) = 160
    for n_x, bits, expected in ((2, 0, 184), (2, 1, 224), (3, 0, 160)):
        prob = _certified._Problem(np.array([0.0, 1.0, 2.0, 3.0]), n_x, "greater", DEFAULT_RTOL)
        assert _certified._plan_estimate(prob, bits) == expected
    # s = [0, 0, X, 0], n_x = 2 (observed sides {0, 0} and {X, 0}): widths 1, 2, 3 and 1, X + 2, 3;
    # 8 * (X + 12 + 3 (X + 2)) = 32 X + 144, as a float 32 X for X >= 2**60
    def estimate(x, bits=0):
        return _certified._plan_estimate(_certified._Problem(np.array([0.0, 0.0, x, 0.0]), 2, "greater", 0.0), bits)
    assert estimate(2.0**100) == 2**105
    assert estimate(1.5 * 2**194) == 3 * 2**198  # below the cap 2**200: the estimate itself
    assert estimate(2.0**195) == 2**200  # at the cap
    assert estimate(1.5 * 2**195) == 2**200  # above it
    assert estimate(1.5 * 2**195, bits=-10) == 3 * 2**189  # a coarser grid shrinks it
    assert estimate(2.0**300) == 2**200  # far above it (32 * 2**300 is finite)


# ---------------------------------------------------------------------------
# refinement and the entry points
# ---------------------------------------------------------------------------


def test_finest_fitting_grid_by_hand():
    # s = [0, 1, 2, 3], n_x = 2 on the grid 2**-b (b >= 0): X {0, 2**b}: widths 1, 2**b + 1, 1;
    # Y {2 * 2**b, 3 * 2**b}: the same -> 8 * (2 * (2**b + 3) + 3 * (2**b + 1)) = 8 * (5 * 2**b + 9)
    prob = _certified._Problem(np.array([0.0, 1.0, 2.0, 3.0]), 2, "greater", DEFAULT_RTOL)
    at3 = 8 * (5 * 8 + 9)
    assert certified_memory_bytes([0.0, 1.0, 2.0, 3.0], 2, 3) == at3
    assert _certified._finest_fitting(prob, 0, 6, at3) == 3
    assert _certified._finest_fitting(prob, 0, 6, at3 - 1) == 2
    assert _certified._finest_fitting(prob, 2, 6, at3) == 3
    assert _certified._finest_fitting(prob, 3, 6, at3) is None  # both ends excluded
    assert _certified._finest_fitting(prob, 0, 3, 10**9) == 2
    # certified_bracket at that grid: fits in exactly its bytes, not in one less
    # "less": subset sums 1, 2, 3, 3, 4, 5, only {0, 1} is <= T_obs = 1
    assert certified_bracket([0.0, 1.0, 2.0, 3.0], 2, 3, alternative="less", memory=at3) == (1, 1)
    with pytest.raises(ConfigError, match="2\\*\\*-3 would need about 392 bytes > 391 bytes"):
        certified_bracket([0.0, 1.0, 2.0, 3.0], 2, 3, alternative="less", memory=at3 - 1)


def test_infeasible_problems_return_the_trivial_bracket():
    s = np.zeros(2**19 + 1)
    s[0] = 1.0
    r = _certified_tail_count(s, 1, "greater", 0.5, 2**30)
    assert r == (0, 2**19 + 1, 2**19 + 1, 0.5, None, False, 0, r.reason) and "table updates" in r.reason


def _fake_passes(monkeypatch, target, results):
    """Run _certified_tail_count on 30 values with the predicted grid ``target`` and scripted passes."""
    seen = []

    def fake(prob, bits, memory):
        seen.append(bits)
        return results(bits)

    monkeypatch.setattr(_certified, "_predicted_bits", lambda prob, rel, ab: target)
    monkeypatch.setattr(_certified, "_bracket_at", fake)
    s = np.random.default_rng(2).normal(size=30)
    return _certified_tail_count(s, 15, "greater", DEFAULT_RTOL, 2**30), seen


@pytest.mark.parametrize("width, step", [(2, 2), (3, 2), (4, 3), (100, 7), (3276, 12), (10**6, 12)])
def test_refinement_steps_by_the_measured_width(monkeypatch, width, step):
    # first pass 3 bits below the prediction; the target width here is 1e-3 * 1000 = 1 count
    # (1e-12 * C(30, 15) = 1.6e-4 is smaller), so the next grid is finer by ceil(log2(1.25 width)),
    # between 1 and 12 bits: 1.25 * 2 = 2.5 -> 2; 3.75 -> 2; 5 -> 3; 125 -> 7; 4095 -> 12; 1.25e6 -> 12
    r, seen = _fake_passes(monkeypatch, 20, lambda bits: (1000, 1000 + width, 1) if bits == 17 else (1000, 1001, 1))
    assert seen == [17, 17 + step] and r.reached and (r.low, r.high) == (1000, 1001)


def test_refinement_falls_back_to_the_finest_grid_that_fits(monkeypatch):
    # no first pass fits: the finest grid in (bits - 8, bits) that fits is tried next
    fits = []
    monkeypatch.setattr(_certified, "_finest_fitting", lambda prob, above, below, memory: fits.append(
        (above, below)) or (below - 2 if len(fits) == 1 else None))
    r, seen = _fake_passes(monkeypatch, 20, lambda bits: None if bits in (17, 18) else (1000, 1004, 1))
    # 17 refused, 15 run (width 4 > 1: 5 -> 3 bits finer), 18 refused, nothing in (15, 18) fits
    assert seen == [17, 15, 18] and fits == [(9, 17), (15, 18)]
    assert (r.low, r.high, r.bits, r.reached, r.memory) == (1000, 1004, 15, False, 1)
    assert r.reason.startswith("a narrower bracket needs tables of about")


@pytest.mark.parametrize("alternative", ALTS)
def test_float_counts_are_widened_by_exactly_gamma_d(monkeypatch, alternative):
    # the docstring's bounds: ceil(c / (1 + g)) and floor(c / (1 - g)), g = D u / (1 - D u), u = 2**-53,
    # per query (two-sided: two, whose bounds add). With D = 10**6 and c ~ 1e28 the terms of order
    # (D u)**2 c ~ 1e9 are visible, so any other g shows. The counts are scripted; C(100, 50) ~ 1e29.
    u = Fraction(1, 2**53)
    depth = 10**6
    g = depth * u / (1 - depth * u)
    counts = iter([[1.0e28, 3.0e28], [2.0e27, 5.0e27]])
    monkeypatch.setattr(_certified, "_depth", lambda n, halves, k: depth)
    monkeypatch.setattr(_certified, "_count_ge", lambda left, right, k, ths: next(counts))
    s = np.arange(100.0) % 4
    s[:50] += 1.0  # T_obs = 127 away from the null mean 102: two-sided has two tails
    low, high = certified_bracket(s, 50, 0, alternative=alternative)
    queries = [[1.0e28, 3.0e28], [2.0e27, 5.0e27]][:2 if alternative == "two-sided" else 1]
    want_low = sum(math.ceil(Fraction(strict) / (1 + g)) for strict, _ in queries)
    want_high = sum(math.floor(Fraction(loose) / (1 - g)) for _, loose in queries)
    assert (low, high) == (want_low, want_high)
    assert want_low < sum(int(Fraction(q[0])) for q in queries)  # the widening is visible


def test_default_memory_limit_is_2_to_the_62_bytes():
    # s = [0, 1, 2, 3], n_x = 2 on the grid 2**-57: 8 * (5 * 2**57 + 9) bytes (see above), just over 2**62:
    # refused before allocating, without a memory argument
    assert 2**62 < 8 * (5 * 2**57 + 9) < 2**63
    assert certified_memory_bytes([0.0, 1.0, 2.0, 3.0], 2, 57) == 8 * (5 * 2**57 + 9)
    with pytest.raises(ConfigError, match=r"2\*\*-57 would need about 5.24e\+06 TiB > 4.19e\+06 TiB"):
        certified_bracket([0.0, 1.0, 2.0, 3.0], 2, 57)


# ---------------------------------------------------------------------------
# planning and refinement: the remaining fields of every early return, the limits' edges
# ---------------------------------------------------------------------------


def test_predicted_resolution_is_the_coarse_grid_when_the_normal_density_underflows():
    # s = (1, 0 x 1499), n_x = 1: the null mean of T is 1/n and its variance (n - 1)/(n (n - 1)) * (n - 1)/n
    # = (n - 1)/n**2, so T_obs = 1 lies (1 - 1/n) / (sqrt(n - 1)/n) = sqrt(n - 1) = sqrt(1499) SDs above it.
    # The normal density there, exp(-1499/2) / (sd sqrt(2 pi)), is below the smallest float: no width can be
    # predicted and the coarse grid alone is used, 16 steps across the spread 1: 2**-3 (bits 3), as for no query
    from scipy.stats import norm

    n = 1500
    s = np.zeros(n)
    s[0] = 1.0
    z = (1.0 - 1e-12 - 1 / n) / (math.sqrt(n - 1) / n)  # the threshold is T_obs - tau, tau = 1e-12
    assert z == pytest.approx(math.sqrt(n - 1), rel=1e-9) and norm.pdf(z) == 0.0
    prob = _certified._Problem(s, 1, "greater", DEFAULT_RTOL)
    assert _certified._predicted_bits(prob, 1e-3, 1e-12) == 3


def test_feasibility_is_judged_on_the_counted_side(monkeypatch):
    # n_x = 9 of 10 counts the complement, subsets of 1: 10 * (1 + 1) = 20 table updates, at a limit of 20
    # allowed (with n_x itself it would be 10 * 10 = 100). The count is the brute-force one (9-subsets
    # whose sum reaches T_obs - tau, in rationals).
    monkeypatch.setattr(_certified, "_MAX_PASSES", 20)
    s = np.random.default_rng(4).normal(size=10)
    fr = [Fraction(v) for v in s.tolist()]
    tau = Fraction(DEFAULT_RTOL * float(np.abs(s).sum()))
    t_obs = sum(fr[:9])
    want = sum(sum(c) >= t_obs - tau for c in itertools.combinations(fr, 9))
    r = _certified_tail_count(s, 9, "greater", DEFAULT_RTOL, 2**30)
    assert r.bits is not None and r.reached and r.low <= want <= r.high and r.reason == ""
    monkeypatch.setattr(_certified, "_MAX_PASSES", 19)  # one below: refused, the trivial bracket
    r = _certified_tail_count(s, 9, "greater", DEFAULT_RTOL, 2**30)
    assert (r.low, r.high, r.bits) == (0, 10, None) and "20 table updates, beyond 19" in r.reason


def test_an_infeasible_problem_reports_its_tolerance(monkeypatch):
    # rtol 0.5 of sum|s| = 4: tau = 2 (the trivial bracket still says which tolerance the count would use)
    monkeypatch.setattr(_certified, "_MAX_PASSES", 19)
    s = np.array([4.0] + [0.0] * 9)
    r = _certified_tail_count(s, 1, "greater", 0.5, 2**30)
    assert r == (0, 10, 10, 2.0, None, False, 0, r.reason) and "table updates" in r.reason


def test_every_partition_reaching_the_observed_value_is_a_point_without_tables():
    # two-sided with T_obs at the null mean: every partition reaches it, C(6, 3) = 20, no table is run,
    # the target counts as met; tau = 1e-12 * sum|s| = 6e-12
    s = np.array([1.0, -1.0, 0.0, 2.0, -2.0, 0.0])
    r = _certified_tail_count(s, 3, "two-sided", DEFAULT_RTOL, 2**30)
    assert r == (20, 20, 20, DEFAULT_RTOL * 6.0, None, True, 0, "")


def test_a_refusal_on_the_prediction_reports_no_tables_and_no_target():
    s = np.random.default_rng(0).normal(size=20)
    prob = _certified._Problem(s, 10, "greater", DEFAULT_RTOL)
    predicted = _certified._plan_estimate(prob, _certified._predicted_bits(prob, 1e-3, 1e-12))
    r = _certified_tail_count(s, 10, "greater", DEFAULT_RTOL, predicted // 4 - 1)
    assert r[:7] == (0, 184756, 184756, DEFAULT_RTOL * float(np.abs(s).sum()), None, False, 0)  # C(20, 10)


def test_no_pass_fitting_in_memory_reports_the_trivial_bracket(monkeypatch):
    # the first pass is refused and no coarser grid fits: nothing ran, so (0, C(30, 15)), no grid, 0 bytes
    monkeypatch.setattr(_certified, "_finest_fitting", lambda prob, above, below, memory: None)
    r, seen = _fake_passes(monkeypatch, 20, lambda bits: None)
    assert seen == [17]
    assert r[:7] == (0, 155117520, 155117520, r.tolerance, None, False, 0) and math.comb(30, 15) == 155117520
    assert r.reason.startswith("a narrower bracket needs tables of about")


def test_certified_bracket_default_tolerance_is_1e_12_of_the_absolute_sum():
    # s = (1, 1 - 1.5e-12): T_obs = 1, the other 1-subset is 1.5e-12 below it, inside tau = 1e-12 * sum|s|
    # (about 2e-12) and outside half of it. Both values are multiples of 2**-53, so the grid 2**-60 rounds
    # nothing and the bracket is a point.
    s = np.array([1.0, 1.0 - 1.5e-12])
    assert 0.5e-12 * float(np.abs(s).sum()) < 1.5e-12 < 1e-12 * float(np.abs(s).sum())
    assert certified_bracket(s, 1, 60) == (2, 2)
    assert certified_bracket(s, 1, 60, rtol=0.5e-12) == (1, 1)


def test_predicted_resolution_with_the_largest_value_exactly_1():
    # the shortcut for all-zero values (grid 1) must not catch a peak of 1: the scaled values are those of
    # test_predicted_resolution_follows_the_normal_approximation, divided by their largest |value| (exact: v / v == 1)
    rng = np.random.default_rng(31)
    s = rng.normal(size=12)
    s[:6] += 0.8
    s = s / np.abs(s).max()
    assert np.abs(s).max() == 1.0
    for alt in ALTS:
        want = predicted_bits_from_scratch(s, 6, alt, 1e-3, 1e-12)
        assert want > 0
        assert _certified._predicted_bits(_certified._Problem(s, 6, alt, DEFAULT_RTOL), 1e-3, 1e-12) == want, alt


@pytest.mark.parametrize("s, n_x", [([0.3, -1.1, 2.0], 1), ([0.7, -0.4], 1), ([1.5, 0.25, -0.5], 2)])
def test_predicted_resolution_takes_a_span_of_at_least_one_grid_step(s, n_x):
    # k (n - k) / (2 n) is below 1 for n = 2 and 3 (1/4, 1/3): the span is then 1 grid step (docstring of the
    # from-scratch reference: max(k (n - k) / (2n), 1)); with a smaller span the grid would be one bit finer
    s = np.array(s)
    k = min(n_x, s.size - n_x)
    assert k * (s.size - k) / s.size / 2 < 1
    for alt in ALTS:
        want = predicted_bits_from_scratch(s, n_x, alt, 1e-3, 1e-12)
        got = _certified._predicted_bits(_certified._Problem(s, n_x, alt, DEFAULT_RTOL), 1e-3, 1e-12)
        assert got == want, alt


def test_refinement_step_reads_the_absolute_target_when_it_is_the_larger(monkeypatch):
    # 60 values, n_x = 30: C(60, 30) = 118,264,581,564,861,424, so the absolute target 1e-12 * C(60, 30) is
    # about 118,265 counts, far above 1e-3 * low (low = 0 here). The first pass (grid 17) is 200,000 wide:
    # 1.25 * 200,000 / 118,264.58 = 2.11, so the next grid is ceil(log2 2.11) = 2 bits finer, where a width of
    # 100,000 meets the target.
    total = math.comb(60, 30)
    assert total == 118_264_581_564_861_424 and math.ceil(math.log2(1.25 * 200_000 / (1e-12 * total))) == 2
    seen = []

    def fake(prob, bits, memory):
        seen.append(bits)
        return (0, 200_000, 1) if bits == 17 else (0, 100_000, 1)

    monkeypatch.setattr(_certified, "_predicted_bits", lambda prob, rel, ab: 20)
    monkeypatch.setattr(_certified, "_bracket_at", fake)
    s = np.random.default_rng(5).normal(size=60)
    r = _certified_tail_count(s, 30, "greater", DEFAULT_RTOL, 2**40)
    assert seen == [17, 19] and r.reached and (r.low, r.high, r.bits) == (0, 100_000, 19)
