"""Certified p-values: the bracket always holds the count, narrows with the resolution, and stays in budget.

Expected counts come from outside the certified code: brute force over
``itertools.combinations`` in exact rationals (the tie rule written out again
here), the meet-in-the-middle exact path (:mod:`isoeat.stats._exact`, itself
checked against an independent count in ``test_exact_counts.py``), and, for
counts beyond 2**53, a dynamic programme over (size, integer sum) in Python
integers written here.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, IsoeatWarning
from isoeat.stats import _certified
from isoeat.stats._certified import (
    DEFAULT_ABS_WIDTH,
    DEFAULT_REL_WIDTH,
    _certified_tail_count,
    _reached,
    certified_bracket,
    certified_memory_bytes,
)
from isoeat.stats.permutation import DEFAULT_RTOL, _p_outward, exact_memory_bytes, partition_test

ALTS = ("greater", "less", "two-sided")
STANDARD = ["W1", "W2", "W4", "W5", "W6", "W7", "W8", "W9", "W10"]


def brute_count(s, n_x, alternative, rtol=DEFAULT_RTOL) -> int:
    """The tie rule of partition_test, in exact rationals over every n_x-subset."""
    fr = [Fraction(float(v)) for v in s]
    tau = Fraction(rtol * float(np.abs(np.asarray(s, dtype=float)).sum()))
    t_obs = sum(fr[:n_x])
    m = Fraction(n_x) * sum(fr) / len(fr)
    reaches = {"greater": lambda t: t >= t_obs - tau, "less": lambda t: t <= t_obs + tau,
               "two-sided": lambda t: abs(t - m) >= abs(t_obs - m) - tau}[alternative]
    return sum(reaches(sum(c)) for c in itertools.combinations(fr, n_x))


def int_dp_count_ge(values: list[int], k: int, threshold: int) -> int:
    """#{k-subsets with sum >= threshold} of small non-negative ints, by a Python-int programme."""
    top = sum(sorted(values)[-k:]) if k else 0
    table = [[0] * (top + 1) for _ in range(k + 1)]
    table[0][0] = 1
    for v in values:
        for j in range(k, 0, -1):
            row, prev = table[j], table[j - 1]
            for t in range(top - v, -1, -1):
                if prev[t]:
                    row[t + v] += prev[t]
    return sum(table[k][max(threshold, 0):])


def s_vector(model, test_id, calibrator=None):
    r = isoeat.weat(model, test_id, calibration=calibrator, method="monte-carlo", n_permutations=1, rng=0)
    return np.array(r.s_x + r.s_y), len(r.s_x)


# ---------------------------------------------------------------------------
# the bracket holds the count
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("space", ["raw", "zca"])
@pytest.mark.parametrize("test_id", [pytest.param(t, marks=[pytest.mark.slow] if t in ("W1", "W2") else [])
                                     for t in STANDARD])
def test_certified_bracket_holds_the_exact_count_of_the_standard_tests(glove, glove_zca, test_id, space):
    s, n_x = s_vector(glove, test_id, glove_zca if space == "zca" else None)
    for alt in ALTS:
        exact = partition_test(s, n_x, alternative=alt, method="exact")
        cert = partition_test(s, n_x, alternative=alt, method="certified")
        assert cert.p_method == "certified" and cert.n_partitions == exact.n_partitions
        assert cert.ci_low <= exact.p_value <= cert.ci_high == cert.p_value
        assert cert.count >= exact.count
        # a coarse resolution: a wide bracket whose ends are not trivial, still holding the count
        low, high = certified_bracket(s, n_x, 8, alternative=alt)
        assert low <= exact.count <= high and (low, high) != (0, exact.n_partitions)


def test_small_counts_of_the_standard_tests_are_resolved_exactly(glove):
    # W6..W9 have C(16, 8) = 12,870 or fewer partitions: splitting by the observed sides makes the
    # observed partition's own rounding cancel, so the few partitions at the top are told apart
    for test_id in ("W6", "W7", "W8"):
        s, n_x = s_vector(glove, test_id)
        exact = partition_test(s, n_x, method="exact")
        cert = _certified_tail_count(s, n_x, "greater", DEFAULT_RTOL, 2**30)
        assert cert.low == cert.high == exact.count and cert.reached, test_id
        res = partition_test(s, n_x, method="certified")
        assert res.count == exact.count and "certified bracket" in res.note
        # p/C(n, n_x) is not a float: the bounds are the two floats around it
        assert res.ci_low <= exact.p_value <= res.ci_high and math.nextafter(res.ci_low, 1) >= res.ci_high


@pytest.mark.parametrize("seed", range(12))
def test_bracket_holds_brute_force_on_tie_heavy_vectors(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 13))
    n_x = int(rng.integers(1, n))
    # few distinct values, many ties; scaled by 0.1 (not dyadic) on odd seeds, so residuals are not zero
    s = rng.integers(-3, 4, size=n).astype(float) * (0.1 if seed % 2 else 0.5)
    for alt in ALTS:
        expected = brute_count(s, n_x, alt)
        assert partition_test(s, n_x, alternative=alt, method="exact").count == expected
        for bits in (-3, 0, 2, 4, 7, 12):
            low, high = certified_bracket(s, n_x, bits, alternative=alt)
            assert low <= expected <= high, (alt, bits, low, expected, high)
            if seed % 2 == 0 and bits >= 1:  # multiples of 0.5 on a grid of 0.5 or finer: nothing rounded
                assert low == high == expected


@pytest.mark.parametrize("seed", range(6))
def test_bracket_holds_brute_force_on_continuous_vectors(seed):
    rng = np.random.default_rng(100 + seed)
    n = 12
    n_x = (4, 6, 8)[seed % 3]
    s = rng.normal(scale=0.1, size=n)
    s[:n_x] += 0.05 * seed  # from null to strong effects
    for alt in ALTS:
        expected = brute_count(s, n_x, alt)
        for bits in (4, 8, 12, 16, 20):
            low, high = certified_bracket(s, n_x, bits, alternative=alt)
            assert low <= expected <= high, (alt, bits)
        r = partition_test(s, n_x, alternative=alt, method="certified")
        assert r.ci_low <= expected / r.n_partitions <= r.ci_high


def test_both_splits_hold_the_count():
    rng = np.random.default_rng(7)
    s = rng.normal(size=14)
    for alt in ALTS:
        expected = brute_count(s, 7, alt)
        for split in ("observed", "sorted"):
            prob = _certified._Problem(s, 7, alt, DEFAULT_RTOL, split)
            for bits in (6, 12):
                low, high, _ = _certified._bracket_at(prob, bits, 2**30)
                assert low <= expected <= high, (alt, split, bits)


def test_counts_beyond_float_precision_stay_certified():
    # 64 small integers: C(64, 32) ~ 1.8e18 > 2**53, so the float tables round; the bracket must
    # still hold the exact count (from a Python-int programme) and be narrow (relative 1e-9)
    rng = np.random.default_rng(3)
    vals = rng.integers(0, 4, size=64)
    vals[:32] = np.sort(vals[:32])[::-1]
    s = vals.astype(float)
    t_obs = int(vals[:32].sum())
    expected = int_dp_count_ge(vals.tolist(), 32, t_obs)  # integers: T >= T_obs - tau iff T >= T_obs
    assert expected > 2**53
    low, high = certified_bracket(s, 32, 0)  # grid 1: nothing rounded, only the float counts
    assert low <= expected <= high
    assert high - low <= 1e-9 * expected
    r = partition_test(s, 32, method="certified")
    assert r.ci_low <= Fraction(expected, math.comb(64, 32)) <= r.ci_high


def test_complement_side_is_counted_as_the_complement():
    # n_x > n/2 counts the (n - n_x)-subsets; brute force on the n_x side
    rng = np.random.default_rng(11)
    s = rng.normal(size=11)
    for n_x in (7, 9, 10):
        for alt in ALTS:
            expected = brute_count(s, n_x, alt)
            for bits in (3, 9, 15):
                low, high = certified_bracket(s, n_x, bits, alternative=alt)
                assert low <= expected <= high, (n_x, alt, bits)


# ---------------------------------------------------------------------------
# boundaries
# ---------------------------------------------------------------------------


def test_a_subset_exactly_tau_below_counts_and_one_further_does_not():
    # integers, sum|s| = 16, rtol = 1/16: tau = 1 exactly. Subsets at T_obs - 1 reach the observed
    # value, those at T_obs - 2 do not; the grid of 1 rounds nothing, so the bracket is a point
    s = np.array([3.0, 2.0, 1.0, 0.0, -2.0, -4.0, 4.0, 0.0])
    assert float(np.abs(s).sum()) == 16.0
    rtol = 1 / 16
    for alt in ALTS:
        expected = brute_count(s, 4, alt, rtol=rtol)
        assert certified_bracket(s, 4, 0, alternative=alt, rtol=rtol) == (expected, expected)
        strict = brute_count(s, 4, alt, rtol=0.0)
        assert certified_bracket(s, 4, 0, alternative=alt, rtol=0.0) == (strict, strict)
    # the tolerance matters here (subsets at exactly T_obs - 1 exist), so the test can tell
    assert brute_count(s, 4, "greater", rtol=rtol) > brute_count(s, 4, "greater", rtol=0.0)


def test_observed_value_at_the_null_mean_gives_p_one_two_sided():
    s = np.array([1.0, -1.0, 0.0, 2.0, -2.0, 0.0])  # T_obs = 0 = n_x * mean: every partition reaches it
    r = partition_test(s, 3, alternative="two-sided", method="certified")
    assert r.p_value == r.ci_low == r.ci_high == 1.0 and r.count == math.comb(6, 3)


def test_width_target_is_met_at_its_boundary():
    total = 10**15
    assert _reached(1000, 1001, total, 1e-3, 0.0)  # width 1 == 1e-3 * 1000
    assert not _reached(1000, 1002, total, 1e-3, 0.0)
    assert _reached(0, 1000, total, 1e-3, 1e-12)  # width 1000 == 1e-12 * 1e15
    assert not _reached(0, 1001, total, 1e-3, 1e-12)
    assert DEFAULT_REL_WIDTH == 1e-3 and DEFAULT_ABS_WIDTH == 1e-12


def test_p_bounds_are_rounded_outwards():
    assert _p_outward(1, 4, up=False) == _p_outward(1, 4, up=True) == 0.25  # representable: exact
    lo, hi = _p_outward(1, 3, up=False), _p_outward(1, 3, up=True)
    assert Fraction(lo) < Fraction(1, 3) < Fraction(hi)
    assert math.nextafter(lo, 1.0) == hi  # adjacent floats
    assert _p_outward(0, 7, up=False) == 0.0 and _p_outward(7, 7, up=True) == 1.0


def test_float_counts_are_widened_by_their_rounding_bound():
    # a float count 1001 within relative 1/1000 of the exact one: the exact count is in 1000..1002
    assert _certified._certify(1001.0, Fraction(1, 1000), 10**6) == (1000, 1002)
    assert _certified._certify(1001.0, Fraction(1, 1000), 1001) == (1000, 1001)  # never above the total
    assert _certified._certify(0.0, Fraction(1, 10), 5) == (0, 0)


def test_two_sided_with_the_observed_distance_equal_to_the_tolerance_counts_everything():
    # |T_obs - m| = 2 = tau exactly (rtol = 1/2, sum|s| = 4): d = 0, every partition reaches
    s = np.array([3.0, 1.0, 0.0, 0.0])
    assert brute_count(s, 2, "two-sided", rtol=0.5) == 6
    assert certified_bracket(s, 2, 0, alternative="two-sided", rtol=0.5) == (6, 6)


# ---------------------------------------------------------------------------
# refinement
# ---------------------------------------------------------------------------


def test_bracket_narrows_as_the_resolution_shrinks(glove):
    s, n_x = s_vector(glove, "W3")
    widths = []
    for bits in (10, 12, 14, 16):
        low, high = certified_bracket(s, n_x, bits)
        widths.append(high - low)
    # each halving of delta about halves the width (the uncertain band is k * delta / 2 wide)
    for coarse, fine in zip(widths, widths[1:]):
        assert fine < 0.5 * coarse
    r = partition_test(s, n_x, method="certified")
    assert r.ci_high - r.ci_low <= DEFAULT_REL_WIDTH * r.ci_low
    assert r.ci_high - r.ci_low < widths[-1] / math.comb(64, 32)


def test_refinement_keeps_the_intersection_of_its_brackets(monkeypatch):
    # every bracket is certified, so their intersection is: a finer pass with a worse upper end
    # (possible: the roundings differ) must not widen the result
    s = np.random.default_rng(2).normal(size=30)
    total = math.comb(30, 15)
    passes = iter([(100, 10_010, 1), (10_005, 30_000, 1)])
    seen = []

    def fake(prob, bits, memory):
        seen.append(bits)
        return next(passes)

    monkeypatch.setattr(_certified, "_bracket_at", fake)
    r = _certified_tail_count(s, 15, "greater", DEFAULT_RTOL, 2**30)
    # the second pass alone is far too wide; with the first one it meets the target (5 <= 1e-3 * 10,005)
    assert (r.low, r.high, r.total) == (10_005, 10_010, total) and r.reached
    assert len(seen) == 2 and seen[0] < seen[1]  # the second pass at a finer resolution


def test_w3_auto_is_certified_and_says_why(glove, glove_zca):
    for cal in (None, glove_zca):
        r = isoeat.weat(glove, "W3", calibration=cal, rng=0)
        assert r.p_method == "certified" and r.n_permutations == r.n_partitions == math.comb(64, 32)
        assert r.p_ci_low <= r.p_value == r.p_ci_high
        assert r.p_ci_high - r.p_ci_low <= DEFAULT_REL_WIDTH * r.p_ci_low
    s, n_x = s_vector(glove, "W3")
    res = partition_test(s, n_x)
    assert "exact_budget" in res.note and "certified bracket" in res.note
    # the Monte Carlo p of the same test agrees (its 99.9% interval holds the bracket's midpoint)
    mc = partition_test(s, n_x, method="monte-carlo", n_permutations=200_000, rng=1, confidence=0.999)
    assert mc.ci_low <= (res.ci_low + res.ci_high) / 2 <= mc.ci_high


# ---------------------------------------------------------------------------
# memory budget
# ---------------------------------------------------------------------------


def test_memory_budget_is_checked_before_allocating(glove, monkeypatch):
    s, n_x = s_vector(glove, "W3")
    need = certified_memory_bytes(s, n_x, 16)
    assert certified_memory_bytes(s, n_x, 14) < need < certified_memory_bytes(s, n_x, 18)

    def no_tables(*_a, **_k):
        raise AssertionError("tables allocated beyond the budget")

    monkeypatch.setattr(_certified, "_half_tables", no_tables)
    with pytest.raises(ConfigError, match="would need about"):
        certified_bracket(s, n_x, 16, memory=need - 1)
    # partition_test with a budget too small for any useful bracket: refuses or falls back, never allocates
    with pytest.raises(ConfigError, match="method='certified'"):
        partition_test(s, n_x, method="certified", exact_memory=1 << 16)
    r = partition_test(s, n_x, exact_memory=1 << 16, n_permutations=2_000, rng=0)
    assert r.p_method == "monte-carlo" and "certified" in r.note and "exact_budget" in r.note


def test_a_budget_between_passes_gives_the_finest_bracket_that_fits(glove):
    s, n_x = s_vector(glove, "W3")
    budget = certified_memory_bytes(s, n_x, 17)  # the target needs 2**-19 (test_w3_...), 4 times as much
    cert = _certified_tail_count(s, n_x, "greater", DEFAULT_RTOL, budget)
    assert not cert.reached and cert.bits == 17 and cert.memory <= budget
    assert "needs tables of about" in cert.reason
    r = partition_test(s, n_x, method="certified", exact_memory=budget)
    assert r.p_method == "certified" and "wider than the target" in r.note
    full = partition_test(s, n_x, method="certified")
    assert r.ci_low <= full.ci_low <= full.ci_high <= r.ci_high  # both certified: nested here


def test_exact_memory_fallback_warns_and_certifies():
    s = np.random.default_rng(0).normal(size=40)
    assert exact_memory_bytes(40, 20) > 20 << 20  # exact counting does not fit; a bracket does
    with pytest.warns(IsoeatWarning, match="exact_memory.*certified"):
        r = partition_test(s, 20, exact_memory=20 << 20, n_permutations=2 * math.comb(40, 20))
    assert r.p_method == "certified"
    exact = partition_test(s, 20)
    assert r.ci_low <= exact.p_value <= r.ci_high


LIMIT_SCRIPT = textwrap.dedent("""
    import resource, numpy as np
    from isoeat.stats.permutation import partition_test

    def vm_bytes():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))

    rng = np.random.default_rng(5)
    s = np.concatenate([rng.normal(0.02, 0.05, 100), rng.normal(0.0, 0.05, 100)])
    limit = vm_bytes() + 400 * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        np.ones(2**26)  # 512 MiB: the limit bites
        print("limit-not-enforced")
    except MemoryError:
        print("limit-enforced")
    r = partition_test(s, 100, exact_memory=192 * 2**20, n_permutations=10_000, rng=0)
    print(r.p_method, r.ci_low <= r.p_value <= r.ci_high)
    print(r.note)
""")


def test_user_size_test_stays_within_an_address_space_limit():
    pytest.importorskip("resource")
    if not sys.platform.startswith("linux"):
        pytest.skip("VmSize from /proc is Linux-only")
    out = subprocess.run([sys.executable, "-c", LIMIT_SCRIPT], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert lines[0] == "limit-enforced"
    method, ok = lines[1].split()
    assert method in ("certified", "monte-carlo") and ok == "True"
    assert "certified" in lines[2]  # says what it did (or why it could not certify)


# ---------------------------------------------------------------------------
# surfaces
# ---------------------------------------------------------------------------


def test_tables_name_certified_rows_with_their_bracket(glove):
    from isoeat.reporting.tables import weat_table

    r = isoeat.weat(glove, "W3", rng=0)
    text = weat_table([r])
    assert "certified" in text and "holds the exact p" in text


def test_auto_keeps_a_wide_bracket_only_when_sampling_would_say_less():
    from isoeat.stats._certified import CertifiedCount
    from isoeat.stats.permutation import _narrower_than_sampling

    total = 10**12
    # p ~ 0.3, bracket 1e-3 wide; 100,000 permutations give an interval about 0.0057 wide
    wide = CertifiedCount(299_500_000_000, 300_500_000_000, total, 0.0, 10, False, 1, "")
    assert _narrower_than_sampling(wide, 100_000, 0.95)
    assert not _narrower_than_sampling(wide, 100_000_000, 0.95)  # 1e8 permutations: about 0.00018 wide
    # p ~ 3e-5: 100,000 permutations see about 3 hits; any bracket below that width wins
    small = CertifiedCount(29_000_000, 31_000_000, total, 0.0, 10, False, 1, "")
    assert _narrower_than_sampling(small, 100_000, 0.95)


def test_w3_auto_in_a_small_budget_returns_the_narrower_bracket(glove):
    s, n_x = s_vector(glove, "W3")
    budget = certified_memory_bytes(s, n_x, 17)  # a bracket about 2e-3 wide relative to p ~ 3e-5
    r = partition_test(s, n_x, exact_memory=budget, n_permutations=100_000, rng=0)
    assert r.p_method == "certified" and "wider than the target" in r.note and "Monte Carlo" in r.note
    mc = partition_test(s, n_x, method="monte-carlo", n_permutations=100_000, rng=0)
    assert r.ci_high - r.ci_low < mc.ci_high - mc.ci_low


def test_power_of_two_scaling_changes_nothing_even_at_the_ends_of_the_float_range():
    # scaling by 2**e is exact, so the grid, the counts and the bracket are the same at any scale
    s = np.random.default_rng(4).normal(size=66)
    base = partition_test(s, 33, alternative="two-sided", method="certified")
    for e in (-900, 900):
        r = partition_test(np.ldexp(s, e), 33, alternative="two-sided", method="certified")
        assert (r.ci_low, r.ci_high, r.count) == (base.ci_low, base.ci_high, base.count), e
        assert f"2**{int(base.note.split('2**')[1].split()[0]) + e} " in r.note
