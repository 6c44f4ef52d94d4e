"""Tests that kill mutants of ``isoeat/stats/_exact.py``: counts against brute force.

Every expected count is computed here from scratch, by enumerating all
subsets with :mod:`itertools` in exact rational arithmetic
(:class:`fractions.Fraction`), from the documented rules:

* ``exact_count(s, n_x, t)``: number of ``n_x``-subsets with sum ``>= t``;
* ``partition_test(..., method="exact").count``: partitions with
  :math:`T \\ge T_{obs} - \\tau` ("greater"), :math:`T \\le T_{obs} + \\tau`
  ("less"), :math:`|T - m| \\ge |T_{obs} - m| - \\tau` ("two-sided",
  :math:`m = n_x \\bar s`), with :math:`\\tau = \\mathrm{rtol}\\sum|s_i|`.

The inputs are small integers (exact in the fixed-point counter), and where
the tolerance matters ``sum|s|`` is a power of two and ``rtol = 1/sum|s|``
so that :math:`\\tau = 1` exactly and partitions lie *on* the boundary.
The cost and memory formulas are the ones written in the docstrings.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from isoeat._errors import ConfigError
from isoeat.stats._exact import describe_bytes, exact_cost, exact_count, exact_memory_bytes
from isoeat.stats.permutation import partition_test


def _brute_ge(s, n_x, t):
    t = Fraction(t)
    return sum(1 for c in itertools.combinations(s, n_x) if sum(map(Fraction, c)) >= t)


def _brute_tail(s, n_x, alternative, tau):
    s = [Fraction(v) for v in s]
    tau = Fraction(tau)
    n = len(s)
    m = Fraction(n_x) * sum(s) / n
    t_obs = sum(s[:n_x])
    sums = [sum(c) for c in itertools.combinations(s, n_x)]
    if alternative == "greater":
        return sum(1 for t in sums if t >= t_obs - tau)
    if alternative == "less":
        return sum(1 for t in sums if t <= t_obs + tau)
    return sum(1 for t in sums if abs(t - m) >= abs(t_obs - m) - tau)


def _int_cases():
    rng = np.random.default_rng(7)
    for n in (2, 3, 5, 8, 9, 10):
        for rep in range(2):
            yield rng.integers(-6, 7, size=n).astype(float)


@pytest.mark.parametrize("s", list(_int_cases()), ids=lambda s: f"n{len(s)}")
def test_exact_count_equals_brute_force_at_every_attained_threshold(s):
    n = len(s)
    for n_x in range(n + 1):
        sums = sorted({sum(c) for c in itertools.combinations(s.tolist(), n_x)})
        # each attained sum (the boundary itself), and just above / below it
        for t in sorted({*sums, *(v + 0.5 for v in sums), *(v - 0.5 for v in sums)}):
            assert exact_count(s, n_x, t) == _brute_ge(s.tolist(), n_x, t), (n_x, t)


def test_exact_count_on_non_integer_values():
    s = np.array([0.1, 0.2, 0.3, -0.25, 0.7, 1.5, -0.9, 0.05])
    for n_x in (1, 3, 4, 6):
        sums = [sum(c) for c in itertools.combinations(s.tolist(), n_x)]
        for t in sorted(sums)[::3]:
            # thresholds 1e-9 away from an attained sum: no rounding question
            for u in (t - 1e-9, t + 1e-9):
                want = sum(1 for v in itertools.combinations(s.tolist(), n_x) if math.fsum(v) >= u)
                assert exact_count(s, n_x, u) == want, (n_x, u)


def test_exact_count_outside_the_range_of_sums():
    s = np.array([1.0, 2.0, 3.0, 4.0])
    assert exact_count(s, 2, 1e300) == 0
    assert exact_count(s, 2, -1e300) == 6
    assert exact_count(s, 2, 7.0) == 1  # only 3 + 4 reaches 7 (2 + 4 = 6)
    assert exact_count(s, 2, 7.0) == _brute_ge([1, 2, 3, 4], 2, 7)
    assert exact_count(s, 0, 0.0) == 1 and exact_count(s, 0, 0.5) == 0
    assert exact_count(s, 4, 10.0) == 1 and exact_count(s, 4, 10.5) == 0
    assert exact_count(np.zeros(5), 2, 0.0) == 10 and exact_count(np.zeros(5), 2, 1e-300) == 0


def test_exact_count_refusals():
    with pytest.raises(ConfigError, match="n_x"):
        exact_count([1.0, 2.0, 3.0], 4, 0.0)
    with pytest.raises(ConfigError, match="n_x"):
        exact_count([1.0, 2.0, 3.0], -1, 0.0)
    with pytest.raises(ConfigError, match="NaN"):
        exact_count([1.0, 2.0, 3.0], 1, float("nan"))
    need = exact_memory_bytes(3, 1)
    assert exact_count([1.0, 2.0, 3.0], 1, 2.0, exact_memory=need) == 2  # exactly the estimate is allowed
    with pytest.raises(ConfigError, match="exact_memory"):
        exact_count([1.0, 2.0, 3.0], 1, 2.0, exact_memory=need - 1)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize("s", list(_int_cases())[2:], ids=lambda s: f"n{len(s)}")
def test_partition_test_counts_equal_brute_force(s, alternative):
    n = len(s)
    for n_x in range(1, n):
        r = partition_test(s, n_x, alternative=alternative, method="exact")
        assert r.count == _brute_tail(s.tolist(), n_x, alternative, 0), (n_x, alternative)
        assert r.n_partitions == math.comb(n, n_x)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_partition_test_counts_partitions_exactly_at_the_tolerance(alternative):
    # sum|s| = 32 and rtol = 1/32: tau = 1 exactly; partitions one unit away are on the boundary
    s = np.array([5.0, 1.0, -3.0, 4.0, -2.0, 6.0, -7.0, 4.0])
    assert np.abs(s).sum() == 32
    rtol = 1 / 32
    matters = []
    for n_x in range(1, 8):
        r = partition_test(s, n_x, alternative=alternative, method="exact", rtol=rtol)
        assert r.tolerance == 1.0
        want = _brute_tail(s.tolist(), n_x, alternative, 1)
        assert r.count == want, (n_x, alternative)
        matters.append(want > _brute_tail(s.tolist(), n_x, alternative, 0))
    # and the tolerance matters here: without it fewer partitions reach the observed value
    assert sum(matters) >= 3


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_partition_test_tolerance_one_half(alternative):
    # rtol = 1/64: tau = 0.5, a sum one unit away is not a tie
    s = np.array([5.0, 1.0, -3.0, 4.0, -2.0, 6.0, -7.0, 4.0])
    for n_x in (2, 3, 4, 5):
        r = partition_test(s, n_x, alternative=alternative, method="exact", rtol=1 / 64)
        assert r.count == _brute_tail(s.tolist(), n_x, alternative, Fraction(1, 2)), (n_x, alternative)


def test_two_sided_with_the_observed_sum_at_the_null_mean_counts_everything():
    s = np.array([1.0, -1.0, 2.0, -2.0, 3.0, -3.0])
    r = partition_test(s, 2, alternative="two-sided", method="exact")  # X = (1, -1): T = 0 = m = 2 * 0
    assert r.count == math.comb(6, 2)


# --- the cost and memory estimates, from their docstring formulas ---------------------------------------


def _cost(n, n_x):
    k = min(n_x, n - n_x)
    h, hr = n // 2, n - n // 2
    build = sum(math.comb(h, j) for j in range(min(k, h) + 1)) + sum(math.comb(hr, j) for j in range(min(k, hr) + 1))
    work = 0.0
    for j in range(0, k + 1):
        if j > h or k - j > hr:
            continue
        nj = math.comb(h, j) + math.comb(hr, k - j)
        work += nj * math.log2(max(nj, 2))
    return build + work


def _memory(n, n_x, w):
    k = min(n_x, n - n_x)
    h, hr = n // 2, n - n // 2
    build = sum(math.comb(h, j) + math.comb(hr, j) for j in range(k + 1))
    peak = max(math.comb(h, j) + math.comb(hr, k - j) for j in range(k + 1) if j <= h and k - j <= hr)
    return 8 * build + (8 + 16 * w) * peak


@pytest.mark.parametrize(("n", "n_x"), [(1, 0), (1, 1), (2, 1), (5, 2), (5, 3), (7, 1), (12, 6), (13, 9), (50, 25)])
def test_exact_cost_follows_its_formula(n, n_x):
    assert exact_cost(n, n_x) == pytest.approx(_cost(n, n_x), rel=1e-12)


@pytest.mark.parametrize(("n", "n_x"), [(1, 0), (2, 1), (5, 2), (5, 3), (7, 1), (12, 6), (13, 9), (50, 25)])
@pytest.mark.parametrize("w", [1, 3])
def test_exact_memory_follows_its_formula(n, n_x, w):
    assert exact_memory_bytes(n, n_x, workers=w) == _memory(n, n_x, w)


def test_cost_and_memory_beyond_floats():
    # log2 C(4000, 2000) ~ 3994 > 2001 + log2(2001): beyond floats
    assert exact_cost(4000, 2000) == math.inf
    assert exact_memory_bytes(4000, 2000, workers=1) == 24 * 2**1000
    # log2 C(2100, 1050) ~ 2094 > 2012 too, but C(300, 150) ~ 2**296 is a finite estimate
    assert exact_cost(2100, 1050) == math.inf
    assert math.isfinite(exact_cost(300, 150))


@pytest.mark.parametrize(("n", "n_x"), [(0, 0), (3, 4), (3, -1)])
def test_cost_refuses_impossible_sizes(n, n_x):
    with pytest.raises(ConfigError, match="0 <= n_x <= n and n >= 1"):
        exact_cost(n, n_x)


@pytest.mark.parametrize(("b", "text"), [
    (0, "0 bytes"), (1023, "1023 bytes"), (2**10, "1 KiB"), (2**20 - 1, "1.02e+03 KiB"), (2**20, "1 MiB"),
    (3 * 2**29, "1.5 GiB"), (2**30, "1 GiB"), (2**40, "1 TiB"), (2**50, "1.02e+03 TiB"),
    (2**1000, "more than 1e300 bytes"), (2**1000 - 2**900, f"{(2**1000 - 2**900) / 2**40:.3g} TiB"),
])
def test_describe_bytes(b, text):
    assert describe_bytes(b) == text


# --- a large problem (halves of 20 values, split into quarters) against a dynamic-programming count ----


def _size_sum_table(values, kmax):
    """``table[k][t + off]``: number of k-subsets of the integers ``values`` with sum t (from scratch)."""
    off = int(sum(abs(v) for v in values))
    table = np.zeros((kmax + 1, 2 * off + 1), dtype=object)
    table[0, off] = 1
    for v in values:
        v = int(v)
        for k in range(kmax, 0, -1):
            shifted = np.zeros_like(table[k - 1])
            if v >= 0:
                shifted[v:] = table[k - 1][: len(shifted) - v]
            else:
                shifted[:v] = table[k - 1][-v:]
            table[k] = table[k] + shifted
    return table, off


@pytest.mark.parametrize("n_x", [20, 13, 27])
def test_large_exact_counts_equal_a_dynamic_programming_count(n_x):
    s = np.random.default_rng(11).integers(-6, 7, size=40).astype(float)
    assert exact_cost(40, 20) > 2e7  # a large problem: halves of 20 > _SPLIT_MIN values, quarters of 10
    table, off = _size_sum_table(s.tolist(), 40)
    row = table[n_x]
    sums = np.arange(-off, off + 1)
    t_obs = int(s[:n_x].sum())
    for t in (t_obs - 7, t_obs, t_obs + 1, 0, 5):
        assert exact_count(s, n_x, float(t)) == int(row[sums >= t].sum()), t
    m2 = n_x * int(s.sum())  # n * null mean, in integers: |n T - n_x tot| >= |n T_obs - n_x tot|
    want = {
        "greater": int(row[sums >= t_obs].sum()),
        "less": int(row[sums <= t_obs].sum()),
        "two-sided": int(row[np.abs(40 * sums - m2) >= abs(40 * t_obs - m2)].sum()),
    }
    for alt, count in want.items():
        assert partition_test(s, n_x, alternative=alt, method="exact").count == count, alt


def test_values_at_the_resolution_of_the_fixed_point():
    # peak 1, n = 3: sum|s| < 2**(1 + 2), so s is scaled by 2**56 and 2**-56 is exactly one unit;
    # the two units are the only positive values, their sum (2 units) is the largest subset sum
    s = [-1.0, 2.0**-56, 2.0**-56]
    for n_x in (1, 2):
        for t in (2.0**-55, 2.0**-56, 0.0, -1.0, -1.0 + 2.0**-56 * 8):
            assert exact_count(np.array(s), n_x, t) == _brute_ge(s, n_x, t), (n_x, t)
    assert exact_count(np.array(s), 2, 2.0**-55) == 1


def test_exact_memory_zero_is_a_valid_budget_that_refuses_everything():
    # exact_memory must be >= 0: 0 is accepted as a budget (and no problem fits in it), -1 is not
    with pytest.raises(ConfigError, match=r"would need about .* > exact_memory 0 bytes"):
        exact_count([1.0, 2.0, 3.0], 1, 2.0, exact_memory=0)
    with pytest.raises(ConfigError, match="exact_memory"):
        exact_count([1.0, 2.0, 3.0], 1, 2.0, exact_memory=-1)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_a_tolerance_beyond_float_range_makes_every_partition_a_tie(alternative):
    # rtol = 1e300: tau = 1e300 * sum|s| is finite, but far beyond every |T - T_obs|; all C(8, 3) partitions count
    s = np.array([5.0, 1.0, -3.0, 4.0, -2.0, 6.0, -7.0, 4.0])
    r = partition_test(s, 3, alternative=alternative, method="exact", rtol=1e300)
    assert r.count == _brute_tail(s.tolist(), 3, alternative, Fraction(1e300) * 32) == math.comb(8, 3)


@pytest.mark.parametrize("n_x", [2, 3])
def test_two_sided_without_tolerance_at_the_null_mean_counts_each_partition_once(n_x):
    # rtol = 0 and the observed X side at the null mean: X = (1, -1) or (1, -1, 0), T_obs = 0 = m;
    # every partition is at least as far from m, and each is counted once
    s = np.array([1.0, -1.0, 2.0, -2.0, 3.0, -3.0]) if n_x == 2 else np.array([1.0, -1.0, 0.0, 2.0, -2.0, 0.0])
    r = partition_test(s, n_x, alternative="two-sided", method="exact", rtol=0.0)
    assert r.count == _brute_tail(s.tolist(), n_x, "two-sided", 0) == math.comb(6, n_x)


def test_default_tolerance_is_1e_12_of_the_absolute_sum():
    s = np.array([5.0, 1.0, -3.0, 4.0, -2.0, 6.0, -7.0, 4.0])
    assert partition_test(s, 3, method="exact").tolerance == 1e-12 * 32


# --- the fixed-point resolution: 2**-59 of 2**e, e = exponent of max|s| + bit length of n - 1 ---------


def test_rounding_below_the_resolution_creates_no_count():
    # n = 3, max|s| = 1: sum|s| < 2**(1 + 2), so s is scaled by 2**(59 - 3) and u = 2**-56 is one unit.
    # 0.3 u rounds to 0 units, the threshold 0.65 u to 1: the pair (0.3 u, 0.3 u) sums to 0.6 u < 0.65 u,
    # and is not counted (by brute force in rationals, nor by the counter)
    u = 2.0**-56
    s = [-1.0, 0.3 * u, 0.3 * u]
    assert exact_count(np.array(s), 2, 0.65 * u) == _brute_ge(s, 2, 0.65 * u) == 0
    assert exact_count(np.array(s), 2, -1.0) == _brute_ge(s, 2, -1.0) == 3


def test_the_resolution_for_n_a_power_of_two():
    # n = 4: the bit length of n - 1 = 3 is 2, so again u = 2**-56 is one unit (not 2**-55): 0.6 u rounds
    # to 1 unit, the threshold 1.1 u up to 2, and the pair (0.6 u, 0.6 u) = 1.2 u >= 1.1 u counts
    u = 2.0**-56
    s = [-1.0, 0.6 * u, 0.6 * u, -1.0]
    assert exact_count(np.array(s), 2, 1.1 * u) == _brute_ge(s, 2, 1.1 * u) == 1


# --- the cost and memory estimates at the float-range boundaries ----------------------------------------


def test_cost_is_infinite_once_the_stored_sums_reach_2_to_the_1000():
    # n = 1998, n_x = 999: halves of 999, every size stored, build = 2**999 + 2**999 = 2**1000 exactly;
    # no pass is above 2**1000 (max N_j = 2 C(999, 499) < 2**995), and log2 C(1998, 999) ~ 1992 is not
    # beyond floats: the build count alone reaches the bound, and the estimate is inf
    assert sum(math.comb(999, j) for j in range(1000)) * 2 == 2**1000
    assert exact_cost(1998, 999) == math.inf
    # one word fewer on each side: build = 2**999, finite, and the docstring formula
    assert exact_cost(1996, 998) == pytest.approx(_cost(1996, 998), rel=1e-12)


# n_x = 100 and n either side of the documented test of _beyond_floats, log2 C(n, k) > 2001 + log2(k + 1),
# by about 0.005 bits (far above float error, below every shift of the test's terms)
_ABOVE, _BELOW = 42_011_581, 42_008_670


def test_memory_estimate_switches_to_the_lower_bound_exactly_at_the_documented_test():
    k = 100
    # the side of the boundary, in exact integers: C(n, k) > (k + 1) 2**2001
    assert math.comb(_ABOVE, k) > (k + 1) * 2**2001 >= math.comb(_BELOW, k)
    assert math.log2(math.comb(_ABOVE, k)) - 2001 - math.log2(k + 1) < 0.01
    assert math.log2(math.comb(_BELOW, k)) - 2001 - math.log2(k + 1) > -0.01
    assert exact_memory_bytes(_ABOVE, k, workers=1) == 24 * 2**1000  # beyond floats: the lower bound
    assert exact_memory_bytes(_BELOW, k, workers=1) == _memory(_BELOW, k, 1)  # not beyond: the formula
    assert exact_memory_bytes(_BELOW, _BELOW - k, workers=2) == _memory(_BELOW, k, 2)  # the complement
    assert exact_cost(_ABOVE, k) == exact_cost(_BELOW, k) == math.inf  # a pass is above 2**1000 either way


# --- the defaults -----------------------------------------------------------------------------------------


def test_default_memory_is_2_gib_and_default_budget_covers_n_50_but_not_51():
    from isoeat.stats._exact import DEFAULT_EXACT_BUDGET, DEFAULT_EXACT_MEMORY

    assert DEFAULT_EXACT_MEMORY == 2 * 2**30
    assert max(exact_cost(50, k) for k in range(51)) <= DEFAULT_EXACT_BUDGET
    assert exact_cost(51, 25) > DEFAULT_EXACT_BUDGET and exact_cost(51, 26) > DEFAULT_EXACT_BUDGET


# --- the worker count: this process's CPUs, at most 4 -----------------------------------------------------


def test_workers_follow_the_cpu_affinity_capped_at_four(monkeypatch):
    import os

    from isoeat.stats._exact import _n_workers

    calls = []

    def affinity(pid):
        calls.append(pid)
        return set(range(cpus))

    monkeypatch.setattr(os, "sched_getaffinity", affinity, raising=False)
    for cpus, want in ((1, 1), (3, 3), (4, 4), (5, 4), (64, 4)):
        assert _n_workers() == want, cpus
    assert set(calls) == {0}  # this process (pid 0), not another one
    # without sched_getaffinity: os.cpu_count(), and 1 when that is unknown
    monkeypatch.delattr(os, "sched_getaffinity")
    for count, want in ((3, 3), (6, 4), (None, 1)):
        monkeypatch.setattr(os, "cpu_count", lambda count=count: count)
        assert _n_workers() == want, count


# --- the counter's internal boundaries: quarter split, chunked key building and position sums -----------


def _dp_counts(s, n_x, thresholds):
    """For each t: number of n_x-subsets of the integers ``s`` with sum >= t (dynamic programming, from scratch)."""
    table, off = _size_sum_table(s.tolist(), n_x)
    row, sums = table[n_x], np.arange(-off, off + 1)
    return [int(row[sums >= t].sum()) for t in thresholds]


def _thresholds(s, n_x):
    t_obs = int(s[:n_x].sum())
    return sorted({t_obs - 9, t_obs - 1, t_obs, t_obs + 1, t_obs + 4, 0, 1})


@pytest.mark.parametrize("split_min", [0, 1, 2, 3, 4, 5, 9])
def test_quarter_split_at_every_half_size(monkeypatch, split_min):
    # halves of 5 and 6 values: split into quarters when a half has more than split_min values,
    # including quarters of 0, 1 and 2 values (P holds only the empty sum when a half is not split)
    import isoeat.stats._exact as ex

    monkeypatch.setattr(ex, "_SPLIT_MIN", split_min)
    s = np.random.default_rng(3).integers(-6, 7, size=11).astype(float)
    for n_x in range(12):
        for t in _thresholds(s, n_x):
            assert exact_count(s, n_x, float(t)) == _brute_ge(s.tolist(), n_x, t), (n_x, t)


def _spy_key_counts(monkeypatch, ex):
    """Record the number of keys of every sort-merge pass (the two ``fill`` calls of one pass)."""
    sizes = []
    real = ex._HalfSums.fill

    def fill(self, j, c, out, scale, offset):
        sizes.append(out.size)
        return real(self, j, c, out, scale, offset)

    monkeypatch.setattr(ex._HalfSums, "fill", fill)
    return sizes


def _chunk_case():
    # n = 34: halves of 17 values, split (above the default _SPLIT_MIN = 16) into quarters of 8 and 9
    # (at most C(9, 3) = 84 sums per size for n_x = 6: rows of 1..84 keys)
    s = np.random.default_rng(5).integers(-20, 21, size=34).astype(float)
    return s, {n_x: _thresholds(s, n_x) for n_x in (2, 6)}


def _counts_with_chunk(monkeypatch, chunk):
    import isoeat.stats._exact as ex

    assert ex._SPLIT_MIN == 16
    monkeypatch.setattr(ex, "_CHUNK", chunk)
    sizes = _spy_key_counts(monkeypatch, ex)
    s, cases = _chunk_case()
    got = {n_x: [exact_count(s, n_x, float(t)) for t in ts] for n_x, ts in cases.items()}
    monkeypatch.undo()
    return got, [a + b for a, b in zip(sizes[0::2], sizes[1::2])]


@pytest.mark.parametrize("chunk", [1, 2, 3, 4, 5, 7, 8, 16])
def test_chunked_key_building_at_small_chunks(monkeypatch, chunk):
    # chunks of 1 key (each chunk one row, however long) and a few keys: every row boundary meets a
    # chunk boundary somewhere, and key counts that are multiples of the chunk, one more and one less occur
    s, cases = _chunk_case()
    got, keys = _counts_with_chunk(monkeypatch, chunk)
    assert got == {n_x: _dp_counts(s, n_x, ts) for n_x, ts in cases.items()}
    if chunk > 1:
        assert {n % chunk for n in keys if n > chunk} >= {0, 1, chunk - 1}


def test_chunked_key_building_at_chunks_of_a_pass_size(monkeypatch):
    # chunk sizes taken from the key counts of actual passes: a pass of exactly one chunk, one key more
    # than a chunk, one less, two and three chunks
    s, cases = _chunk_case()
    want = {n_x: _dp_counts(s, n_x, ts) for n_x, ts in cases.items()}
    _, keys = _counts_with_chunk(monkeypatch, 1 << 20)
    sizes = sorted(set(keys))
    assert sizes[-1] > 1000
    for n in (sizes[-1], sizes[len(sizes) // 2], 84):
        for chunk in (n, n - 1, n + 1, n // 2, n // 3):
            assert _counts_with_chunk(monkeypatch, chunk)[0] == want, (n, chunk)


def test_traced_memory_stays_within_the_estimate():
    # the estimate is checked before anything is allocated: what the counter allocates must stay below it,
    # also where nearly every sum can reach the threshold (a threshold at the median keeps them all)
    import tracemalloc

    rng = np.random.default_rng(9)
    for n, n_x in ((30, 15), (34, 11), (40, 20)):
        s = rng.normal(size=n)
        for t in (float(np.median(s)) * n_x, float(s[:n_x].sum())):
            tracemalloc.start()
            exact_count(s, n_x, t)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            assert peak <= exact_memory_bytes(n, n_x, workers=1), (n, n_x, t)
