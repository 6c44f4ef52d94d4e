"""Tests that kill mutants of ``isoeat/stats/_certified.py``: tables, counts and limits from scratch.

Expected values are computed here independently of the module:

* subset counts by enumerating every subset with :mod:`itertools` (exact
  integers, or :class:`fractions.Fraction` sums of the float inputs);
* partition counts by the tie rule of ``partition_test`` in rationals
  (``brute_count``), or by the exact meet-in-the-middle counts of
  ``partition_test(method="exact")`` (independent code, :mod:`isoeat.stats._exact`);
* table sizes, the rounding depth and the limits from the formulas written in
  the module's docstrings, worked by hand in the comments.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from isoeat.stats import _certified
from isoeat.stats._certified import _certified_tail_count, certified_memory_bytes
from isoeat.stats.permutation import DEFAULT_RTOL

ALTS = ("greater", "less", "two-sided")


def brute_count(s, n_x, alternative, rtol=DEFAULT_RTOL) -> int:
    """The tie rule of partition_test, in exact rationals over every n_x-subset."""
    fr = [Fraction(float(v)) for v in s]
    tau = Fraction(rtol * float(np.abs(np.asarray(s, dtype=float)).sum()))
    t_obs = sum(fr[:n_x])
    m = Fraction(n_x) * sum(fr) / len(fr)
    reaches = {"greater": lambda t: t >= t_obs - tau, "less": lambda t: t <= t_obs + tau,
               "two-sided": lambda t: abs(t - m) >= abs(t_obs - m) - tau}[alternative]
    return sum(reaches(sum(c, Fraction(0))) for c in itertools.combinations(fr, n_x))


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
