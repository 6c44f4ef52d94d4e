"""Tests that kill mutants of ``isoeat/stats/permutation.py`` and ``isoeat/stats/_montecarlo.py``.

Expected values are derived here, from the documented rules (the docstring of
:func:`~isoeat.stats.permutation.partition_test`) or from scratch:

* method choice: "auto" counts exactly when ``exact_cost <= exact_budget`` or
  ``C(n, n_x) <= n_permutations``; "exact" beyond the budget raises; over
  ``exact_memory`` "exact" raises and "auto" runs Monte Carlo (with
  ``FALLBACK_PERMUTATIONS`` = 10**6 draws when ``n_permutations`` asked for at
  least as many as there are partitions), warns and says so in ``note``; at
  most 10**9 Monte Carlo permutations. Every limit is tested *at* its value.
* Clopper–Pearson limits by bisection on binomial tail sums in exact
  rationals (:mod:`fractions`), the closed forms at ``k = 0`` and ``k = n``;
* Monte Carlo hit counts against the drawn subsets recounted in
  :class:`fractions.Fraction` (the draw layout is the documented one: batches
  of ``_random_subset_masks`` columns from the Generator's bit generator).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import warnings

import numpy as np
import pytest

from isoeat._errors import ConfigError, IsoeatWarning
from isoeat.stats._exact import exact_cost, exact_memory_bytes
from isoeat.stats.permutation import PermutationResult, partition_test

S8 = np.array([5.0, 1.0, -3.0, 4.0, -2.0, 6.0, -7.0, 4.0])  # n = 8, n_x = 4: C(8, 4) = 70 partitions


def _brute_greater(s, n_x):
    """Partitions with T >= T_obs (integer scores: no tolerance question)."""
    s = [int(v) for v in s]
    t_obs = sum(s[:n_x])
    return sum(1 for c in itertools.combinations(s, n_x) if sum(c) >= t_obs)


# --- permutation.py: the result type and the defaults ------------------------------------------------


def test_results_are_frozen():
    r = partition_test(S8, 4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.p_value = 0.5  # type: ignore[misc]
    assert isinstance(r, PermutationResult)


def test_default_monte_carlo_sample_is_100_000():
    r = partition_test(S8, 4, method="monte-carlo", rng=0)
    assert r.p_method == "monte-carlo" and r.n_permutations == 100_000


# --- permutation.py: the exact budget, at its value --------------------------------------------------


def test_exact_at_exactly_the_budget_is_allowed():
    cost = exact_cost(8, 4)
    r = partition_test(S8, 4, method="exact", exact_budget=cost)  # cost == budget: not beyond it
    assert r.p_method == "exact" and r.count == _brute_greater(S8, 4)
    with pytest.raises(ConfigError, match="exact_budget"):
        partition_test(S8, 4, method="exact", exact_budget=math.nextafter(cost, 0.0))


def test_auto_counts_exactly_at_exactly_the_budget():
    cost = exact_cost(8, 4)
    # n_permutations = 69 < 70 partitions: only the budget can make it exact
    r = partition_test(S8, 4, exact_budget=cost, n_permutations=69, rng=0)
    assert r.p_method == "exact" and r.count == _brute_greater(S8, 4)
    r = partition_test(S8, 4, exact_budget=math.nextafter(cost, 0.0), n_permutations=69, rng=0)
    assert r.p_method != "exact"  # beyond the budget: certified (or Monte Carlo), never exact


def test_auto_counts_exactly_when_n_permutations_equals_the_number_of_partitions():
    # budget 0: only C(8, 4) = 70 <= n_permutations makes it exact
    r = partition_test(S8, 4, exact_budget=0, n_permutations=70, rng=0)
    assert r.p_method == "exact" and r.count == _brute_greater(S8, 4)
    r = partition_test(S8, 4, exact_budget=0, n_permutations=69, rng=0)
    assert r.p_method != "exact"  # certified (or Monte Carlo), never exact


def test_an_infinite_exact_budget_is_accepted():
    r = partition_test(S8, 4, exact_budget=math.inf, n_permutations=1, rng=0)
    assert r.p_method == "exact" and r.count == _brute_greater(S8, 4)


# --- permutation.py: the memory budget, at its value -------------------------------------------------


def test_exact_at_exactly_the_memory_budget_is_allowed():
    need = exact_memory_bytes(8, 4)  # the estimate partition_test compares with (the default worker count)
    for method in ("exact", "auto"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no fallback warning
            r = partition_test(S8, 4, method=method, exact_memory=need)
        assert r.p_method == "exact" and r.note == "", method
    with pytest.raises(ConfigError, match="method='exact'.*exact_memory"):
        partition_test(S8, 4, method="exact", exact_memory=need - 1)


def test_exact_memory_zero_is_a_budget_nothing_fits_in():
    # exact_memory >= 0 is valid; 0 bytes: "exact" refuses with the memory message, "auto" falls back
    with pytest.raises(ConfigError, match=r"method='exact': exact counting .* > exact_memory 0 bytes"):
        partition_test(S8, 4, method="exact", exact_memory=0)
    with pytest.warns(IsoeatWarning, match="exact_memory 0 bytes"):
        r = partition_test(S8, 4, exact_memory=0, n_permutations=69, rng=0)
    assert r.p_method == "monte-carlo" and r.n_permutations == 69
    assert r.note.endswith("Monte Carlo with 69 random partitions instead")
    with pytest.raises(ConfigError, match="exact_memory"):
        partition_test(S8, 4, exact_memory=-1)


def test_memory_fallback_uses_a_million_draws_when_all_partitions_were_asked_for():
    # n_permutations = 70 = C(8, 4): asked for at least as many draws as partitions -> 10**6 random partitions
    for asked in (70, 71):
        with pytest.warns(IsoeatWarning, match="1000000 random partitions"):
            r = partition_test(S8, 4, exact_memory=0, n_permutations=asked, rng=0)
        assert r.p_method == "monte-carlo" and r.n_permutations == 1_000_000, asked
        assert "1000000 random partitions" in r.note


# --- permutation.py: the Monte Carlo limit, at its value ---------------------------------------------


def _overwhelming():
    s = np.random.default_rng(3).normal(size=64)
    s[:32] += 3.0  # p tiny: sequential stopping ends the run after its first batch
    return s


def test_at_most_a_billion_monte_carlo_permutations():
    s = _overwhelming()
    r = partition_test(s, 32, method="monte-carlo", n_permutations=10**9, sequential_alpha=0.05, rng=0)
    assert r.stopped_early and r.n_permutations < 10**6  # 10**9 itself is allowed
    with pytest.raises(ConfigError, match="at most 1,000,000,000"):
        partition_test(s, 32, method="monte-carlo", n_permutations=10**9 + 1, sequential_alpha=0.05, rng=0)


# --- _montecarlo.py: the Clopper-Pearson interval, from its definition --------------------------------


def _binom_ge(k, n, p):
    """P[X >= k] for X ~ Binomial(n, p), summed term by term (log-space terms: no overflow for large n)."""
    if p <= 0.0 or p >= 1.0:
        return float(k <= 0) if p <= 0.0 else 1.0
    lp, lq = math.log(p), math.log1p(-p)
    return math.fsum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp
                              + (n - i) * lq) for i in range(k, n + 1))


def _bisect(f, lo=0.0, hi=1.0):
    """The root of an increasing f on [lo, hi], by bisection to float resolution."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


def _cp(k, n, confidence):
    """Clopper-Pearson from its definition: P[X >= k | low] = alpha/2 and P[X <= k | high] = alpha/2."""
    a = (1 - confidence) / 2
    low = 0.0 if k == 0 else _bisect(lambda p: _binom_ge(k, n, p) - a)
    high = 1.0 if k == n else _bisect(lambda p: a - (1 - _binom_ge(k + 1, n, p)))
    return low, high


@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.5])
@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (0, 7), (1, 7), (3, 7), (6, 7), (7, 7), (2, 20)])
def test_clopper_pearson_from_its_definition(k, n, confidence):
    from isoeat.stats.permutation import clopper_pearson

    low, high = clopper_pearson(k, n, confidence)
    want_low, want_high = _cp(k, n, confidence)
    assert low == pytest.approx(want_low, rel=1e-9, abs=1e-14)
    assert high == pytest.approx(want_high, rel=1e-9, abs=1e-14)


def test_clopper_pearson_closed_forms_for_one_trial():
    from isoeat.stats.permutation import clopper_pearson

    # n = 1: k = 0 gives (0, 1 - alpha/2), k = 1 gives (alpha/2, 1)
    assert clopper_pearson(0, 1) == (0.0, pytest.approx(0.975, rel=1e-12))
    assert clopper_pearson(1, 1) == (pytest.approx(0.025, rel=1e-12), 1.0)
    assert clopper_pearson(0, 1, 0.5) == (0.0, pytest.approx(0.75, rel=1e-12))


@pytest.mark.parametrize(("k", "n", "word"), [(0, 0, "n must be >= 1"), (0, -1, "n must be >= 1"),
                                             (-1, 5, "k must satisfy"), (6, 5, "k must satisfy")])
def test_clopper_pearson_refusals(k, n, word):
    from isoeat.stats.permutation import clopper_pearson

    with pytest.raises(ConfigError, match=word):
        clopper_pearson(k, n)


def test_clopper_pearson_accepts_k_at_both_ends():
    from isoeat.stats.permutation import clopper_pearson

    assert clopper_pearson(0, 5)[0] == 0.0 and clopper_pearson(5, 5)[1] == 1.0


# --- _montecarlo.py: hit counts against the drawn subsets, recounted ---------------------------------


def _recount(ints, n_x, alternative, n_perm, seed, tau, den=1, batch=None):
    """Hits of ``partition_test(method="monte-carlo")`` recounted from its draws, in exact integers.

    The scores are ``ints / den`` (exact rationals), ``tau`` the tie tolerance (a dyadic float or a
    Fraction). The draws follow the documented layout: a Generator from ``default_rng(seed)``, batches
    of ``batch_size`` (default ``max(1024, 2**20 // n)``) columns of ``_random_subset_masks``. Every
    comparison is multiplied by ``n * den * denominator(tau)`` so that it is one between integers:
    ``T >= T_obs - tau``, ``T <= T_obs + tau``, ``|T - m| >= |T_obs - m| - tau`` with ``m = n_x mean(s)``.
    """
    from fractions import Fraction

    from isoeat.stats.permutation import _random_subset_masks

    v = np.array([int(i) for i in ints], dtype=np.int64)
    n = v.size
    tau = Fraction(tau)
    scale = n * tau.denominator  # (den * T) * scale and (den * tau) * scale are integers
    t_obs = int(v[:n_x].sum()) * scale
    m = n_x * int(v.sum()) * tau.denominator  # den * m * scale = n_x * sum(v) * denominator(tau)
    tau_i = int(tau * den * scale)
    batch = max(1024, 2**20 // n) if batch is None else batch
    bitgen = np.random.default_rng(seed).bit_generator
    hits = done = 0
    while done < n_perm:
        b = min(batch, n_perm - done)
        t = (v @ _random_subset_masks(n, n_x, b, bitgen).astype(np.int64)) * scale
        if alternative == "greater":
            hits += int(np.count_nonzero(t >= t_obs - tau_i))
        elif alternative == "less":
            hits += int(np.count_nonzero(t <= t_obs + tau_i))
        else:
            hits += int(np.count_nonzero(np.abs(t - m) >= abs(t_obs - m) - tau_i))
        done += b
    return hits


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize(("n_x", "rtol", "tau"), [(3, 1 / 32, 1), (4, 1 / 32, 1), (4, 1 / 64, 0.5), (5, 0.0, 0)])
def test_monte_carlo_hits_equal_the_drawn_subsets_recounted(alternative, n_x, rtol, tau, sign):
    # S8: sum|s| = 32, so rtol = 1/32 gives tau = 1 exactly: subsets one unit away are on the boundary;
    # -S8 puts the observed X side below the null mean (n_x = 4: T_obs = -7 < m = -4)
    s = sign * S8
    r = partition_test(s, n_x, alternative=alternative, method="monte-carlo", n_permutations=1500, rng=5,
                       rtol=rtol)
    k = _recount(s.tolist(), n_x, alternative, 1500, 5, tau)
    assert r.count == k and r.n_permutations == 1500 and r.stopped_early is False
    assert r.p_value == (k + 1) / 1501
    assert r.tolerance == tau
    want_low, want_high = _cp(k, 1500, 0.95)
    assert r.ci_low == pytest.approx(want_low, rel=1e-9, abs=1e-14)
    assert r.ci_high == pytest.approx(want_high, rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_monte_carlo_counts_ties_of_inexact_values(alternative):
    # s = ints / 10: the sums of tied subsets are equal as rationals but not as floats (0.1 is inexact),
    # and float32 rounds them apart; the default tolerance (1e-12 sum|s|) must count each tie, and
    # distinct sums differ by at least 0.1, far beyond it
    ints = np.random.default_rng(21).integers(-3, 4, size=40)
    r = partition_test(ints / 10.0, 20, alternative=alternative, method="monte-carlo", n_permutations=3000, rng=2)
    assert r.count == _recount(ints, 20, alternative, 3000, 2, 0, den=10)


@pytest.mark.parametrize(("n", "n_perm"), [(8, 140_000), (1100, 2100)])
def test_monte_carlo_default_batches_are_the_documented_layout(n, n_perm):
    # default batch_size = max(1024, 2**20 // n): 131072 for n = 8, 1024 for n = 1100 (2**20 // 1100 = 953);
    # each run spans two batches, and results for a seed depend on the layout
    ints = np.random.default_rng(n).integers(-6, 7, size=n)
    n_x = n // 2
    for seed in (0, 1, 2):
        r = partition_test(ints.astype(float), n_x, method="monte-carlo", n_permutations=n_perm, rng=seed)
        assert r.count == _recount(ints, n_x, "greater", n_perm, seed, 0), seed


def test_monte_carlo_float32_screen_is_wide_enough_for_large_n():
    # n = 32000: 16000 values 1 - 2**-10, then 16000 values 2**-14. Normalised (x = s / 2**15, sum|x| < 1)
    # the running float32 sum of the first half is about 0.5, where each small value (2**-29) is below
    # half an ulp and can be lost: a float32 column sum can be off by up to 16000 * 2**-29 ~ 3e-5 (the
    # bound (n + 1) 2**-24 sum|x| allows 2e-3), so the screen must widen with n.
    # n_x = n - 1: each partition leaves one word out; those leaving out a small value tie with the
    # observed one (which leaves out the last), those leaving out a large one are far below it
    n = 32000
    s = np.array([1 - 2.0**-10] * 16000 + [2.0**-14] * 16000)
    r = partition_test(s, n - 1, method="monte-carlo", n_permutations=200, rng=0, rtol=0.0)
    ints = (s * 2**15).astype(np.int64)  # exact: 32736 and 2
    assert r.count == _recount(ints, n - 1, "greater", 200, 0, 0)
    assert 50 < r.count < 150  # about half of the draws tie


def _untouched(gen, seed):
    """True when ``gen`` has drawn nothing since ``default_rng(seed)``."""
    return gen.bit_generator.state == np.random.default_rng(seed).bit_generator.state


@pytest.mark.parametrize(("rtol", "what"), [(3 / 32, "d = 0"), (4 / 32, "d < 0")])
def test_two_sided_that_every_partition_reaches_draws_nothing(rtol, what):
    # S8, n_x = 4: null mean m = 4 * 8 / 8 = 4, T_obs = 5 + 1 - 3 + 4 = 7, |T_obs - m| = 3;
    # tau = rtol * 32 = 3 (exactly at it) or 4: every partition reaches the observed value,
    # so Monte Carlo counts them all without sampling (the Generator is not advanced)
    gen = np.random.default_rng(9)
    r = partition_test(S8, 4, alternative="two-sided", method="monte-carlo", n_permutations=500, rng=gen,
                       rtol=rtol)
    assert r.count == 500 == _recount(S8.tolist(), 4, "two-sided", 500, 9, rtol * 32) and r.p_value == 1.0
    assert _untouched(gen, 9), what
    # an all-zero s: every partition ties, nothing drawn either
    gen = np.random.default_rng(9)
    r = partition_test(np.zeros(8), 4, alternative="two-sided", method="monte-carlo", n_permutations=500, rng=gen)
    assert r.count == 500 and _untouched(gen, 9)
    # a one-sided test does sample
    gen = np.random.default_rng(9)
    partition_test(S8, 4, method="monte-carlo", n_permutations=500, rng=gen, rtol=rtol)
    assert not _untouched(gen, 9)


def test_monte_carlo_with_an_odd_number_of_uniforms():
    # n * batch odd (7 * 999): the draws take ceil(n * batch / 2) 64-bit words, each giving two uniforms
    ints = np.array([3, -1, 4, -1, 5, -9, 2])
    for alternative in ("greater", "less", "two-sided"):
        r = partition_test(ints.astype(float), 3, alternative=alternative, method="monte-carlo",
                           n_permutations=999, rng=4)
        assert r.count == _recount(ints, 3, alternative, 999, 4, 0) and r.n_permutations == 999


# --- _montecarlo.py: sequential stopping, at its boundaries -------------------------------------------


def _first_batch_hits(s, n_x, batch, seed):
    """Hits of the first ``batch`` draws (the same draws begin every run with this seed and batch size)."""
    return partition_test(s, n_x, method="monte-carlo", n_permutations=batch, batch_size=batch, rng=seed).count


def test_sequential_stopping_never_claims_an_early_stop_on_the_last_batch():
    s = _overwhelming()
    # one batch holds the whole sample: the interval is far below 0.05, but nothing was left to skip
    r = partition_test(s, 32, method="monte-carlo", n_permutations=2000, batch_size=2000, sequential_alpha=0.05,
                       rng=0)
    assert r.n_permutations == 2000 and r.stopped_early is False
    # two batches: it stops after the first
    r = partition_test(s, 32, method="monte-carlo", n_permutations=4000, batch_size=2000, sequential_alpha=0.05,
                       rng=0)
    assert r.n_permutations == 2000 and r.stopped_early is True


@pytest.mark.parametrize("end", ["low", "high"])
def test_sequential_stopping_needs_the_interval_strictly_beside_alpha(end):
    from isoeat.stats.permutation import clopper_pearson

    rng = np.random.default_rng(8)
    s = rng.normal(size=30)
    s[:15] += 0.2  # a moderate p: the first batch's interval lies inside (0, 1)
    k = _first_batch_hits(s, 15, 500, 6)
    assert 0 < k < 500
    low, high = clopper_pearson(k, 500)
    alpha = low if end == "low" else high
    # alpha exactly at an end of the interval after the first batch: the interval does not lie
    # entirely above or below it, so the run goes on
    r = partition_test(s, 15, method="monte-carlo", n_permutations=1000, batch_size=500, sequential_alpha=alpha,
                       rng=6)
    assert r.n_permutations == 1000 and r.stopped_early is False
    # just beside it, the run stops after the first batch
    beside = math.nextafter(alpha, 0.0) if end == "low" else math.nextafter(alpha, 1.0)
    r = partition_test(s, 15, method="monte-carlo", n_permutations=1000, batch_size=500, sequential_alpha=beside,
                       rng=6)
    assert r.n_permutations == 500 and r.stopped_early is True and r.count == k


# --- _montecarlo.py: the float32 screen of _mc_hits, column by column ---------------------------------


def _hits_by_rule(values, hi, lo):
    """Columns with T >= hi or T <= lo (the contract of ``_mc_hits``; comparisons of floats are exact)."""
    return sum(1 for v in values if v >= hi or v <= lo)


# hi >= lo as partition_test passes them: one tail (the other threshold infinite), two tails apart, two
# tails closer than the band, and hi == lo (two-sided with d > 0 below half an ulp of the null mean m:
# m + d and m - d round to the same float)
@pytest.mark.parametrize(("hi", "lo"), [(0.5, 0.25), (0.375, 0.375), (0.5, -math.inf), (math.inf, 0.25),
                                        (0.5, 0.5 - 2.0**-7)])
def test_mc_hits_counts_each_column_once_at_every_screen_boundary(hi, lo):
    from isoeat.stats._montecarlo import _mc_hits

    band = 2.0**-6
    # one column per value (an identity mask): T is the value itself; every value sits on or beside a
    # threshold, a threshold +- band (the edges of the float32 screen), or between them; the last ones
    # are not float32 numbers (float32 rounds them onto the threshold, the float64 recheck decides)
    values = []
    for t in (0.5, 0.25, 0.375, 0.5 - 2.0**-7):
        values += [t, t - band, t + band, t - band / 2, t + band / 2, t - 2 * band, t + 2 * band,
                   t - 2.0**-40, t + 2.0**-40]
    values += [0.0, 0.9, -0.9]
    s = np.array(values)
    mask = np.eye(s.size, dtype=np.float32)
    got = _mc_hits(s, s.astype(np.float32), mask, hi, lo, band)
    assert got == _hits_by_rule(values, hi, lo)
