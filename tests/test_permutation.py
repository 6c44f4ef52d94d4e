"""Tests for isoeat.stats.permutation.

Reference values come from (a) brute-force enumeration with
itertools.combinations, (b) an independent integer dynamic programme over
(subset size, subset sum), (c) scipy.stats.permutation_test with exact
enumeration, (d) scipy's binomial test interval, and (e) hand computation
(stated inline).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isoeat._errors import ConfigError
from isoeat.stats.permutation import (
    DEFAULT_EXACT_BUDGET,
    DEFAULT_RTOL,
    PermutationResult,
    _random_subset_masks,
    clopper_pearson,
    exact_cost,
    exact_count,
    partition_test,
)

ALTERNATIVES = ("greater", "less", "two-sided")


# ---------------------------------------------------------------------------
# independent references
# ---------------------------------------------------------------------------


def brute_count(s, n_x, alternative, rtol=DEFAULT_RTOL):
    """Count partitions reaching the observed value by enumerating them all."""
    s = np.asarray(s, dtype=float)
    tol = rtol * float(np.abs(s).sum())
    t_obs = float(np.sum(s[:n_x]))
    m = n_x * float(np.mean(s))
    count = 0
    for comb in itertools.combinations(range(s.size), n_x):
        t = float(np.sum(s[list(comb)]))
        if alternative == "greater":
            count += t >= t_obs - tol
        elif alternative == "less":
            count += t <= t_obs + tol
        else:
            count += abs(t - m) >= abs(t_obs - m) - tol
    return count


def dp_size_sum_table(values, k):
    """ways[j][v] = number of j-subsets of the integer `values` summing to v."""
    offset = sum(-v for v in values if v < 0)
    width = offset + sum(v for v in values if v > 0) + 1
    ways = [[0] * width for _ in range(k + 1)]
    ways[0][offset] = 1
    for v in values:
        for j in range(k, 0, -1):
            prev = ways[j - 1]
            cur = ways[j]
            for idx in range(width):
                if prev[idx] and 0 <= idx + v < width:
                    cur[idx + v] += prev[idx]
    return ways[k], offset


# ---------------------------------------------------------------------------
# hand-checked example
# ---------------------------------------------------------------------------


def test_hand_checked_example():
    # s = [3, 1, 2, 0], n_x = 2: the six 2-subset sums are
    # {3+1=4, 3+2=5, 3+0=3, 1+2=3, 1+0=1, 2+0=2}; T_obs = 4.
    s = [3.0, 1.0, 2.0, 0.0]
    greater = partition_test(s, 2, alternative="greater")
    less = partition_test(s, 2, alternative="less")
    # sums >= 4: {4, 5} -> 2/6; sums <= 4: {4, 3, 3, 1, 2} -> 5/6
    assert greater.count == 2 and greater.p_value == pytest.approx(2 / 6, abs=1e-15)
    assert less.count == 5 and less.p_value == pytest.approx(5 / 6, abs=1e-15)
    # two-sided: m = 2 * mean(s) = 3, |T - 3| = {1, 2, 0, 0, 2, 1} >= |4 - 3| = 1 -> 4/6
    two = partition_test(s, 2, alternative="two-sided")
    assert two.count == 4 and two.p_value == pytest.approx(4 / 6, abs=1e-15)
    for r in (greater, less, two):
        assert r.p_method == "exact"
        assert r.n_partitions == 6
        assert r.n_permutations is None
        assert r.ci_low == r.p_value == r.ci_high
        assert r.tolerance == pytest.approx(DEFAULT_RTOL * 6.0)
        assert r.stopped_early is False
    assert exact_count(s, 2, 4.0) == 2
    assert exact_count(s, 2, 4.5) == 1
    assert exact_count(s, 2, 5.0) == 1
    assert exact_count(s, 2, 5.0000001) == 0
    assert exact_count(s, 2, -100.0) == 6
    assert exact_count(s, 0, 0.0) == 1 and exact_count(s, 4, 6.0) == 1


def test_to_dict_roundtrip():
    r = partition_test([3.0, 1.0, 2.0, 0.0], 2)
    d = r.to_dict()
    assert d == {
        "p_value": r.p_value,
        "p_method": "exact",
        "alternative": "greater",
        "count": 2,
        "n_partitions": 6,
        "n_permutations": None,
        "ci_low": r.p_value,
        "ci_high": r.p_value,
        "tolerance": r.tolerance,
        "stopped_early": False,
        "note": "",
    }
    assert PermutationResult(**d) == r


# ---------------------------------------------------------------------------
# exact counting against brute force (hypothesis)
# ---------------------------------------------------------------------------


@st.composite
def score_vectors(draw):
    n = draw(st.integers(min_value=2, max_value=14))
    n_x = draw(st.integers(min_value=1, max_value=n - 1))
    kind = draw(st.sampled_from(["ties", "continuous", "mixed"]))
    if kind == "ties":
        # deliberate ties: small integers scaled by 0.1 (inexact in binary)
        ints = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
        s = [0.1 * v for v in ints]
    elif kind == "continuous":
        s = draw(
            st.lists(
                st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False, width=64),
                min_size=n,
                max_size=n,
            )
        )
    else:
        ints = draw(st.lists(st.integers(-2, 2), min_size=n, max_size=n))
        s = [0.25 * v + (0.013 * i if i % 3 == 0 else 0.0) for i, v in enumerate(ints)]
    return np.array(s, dtype=float), n_x


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(score_vectors())
def test_exact_partition_test_matches_brute_force(data):
    s, n_x = data
    for alternative in ALTERNATIVES:
        res = partition_test(s, n_x, alternative=alternative, method="exact")
        expected = brute_count(s, n_x, alternative)
        assert res.count == expected, (s.tolist(), n_x, alternative)
        assert res.n_partitions == math.comb(s.size, n_x)
        assert res.p_value == expected / math.comb(s.size, n_x)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(-6, 6), min_size=2, max_size=14).flatmap(
        lambda ints: st.tuples(
            st.just(ints),
            st.integers(0, len(ints)),
            st.integers(-40, 40),
        )
    )
)
def test_exact_count_matches_brute_force_integers(args):
    # integer-valued s: every subset sum is exact in float64, so the count with
    # threshold exactly at (or between) subset sums is unambiguous.
    ints, n_x, thr = args
    s = np.array(ints, dtype=float)
    expected = sum(1 for c in itertools.combinations(ints, n_x) if sum(c) >= thr)
    assert exact_count(s, n_x, float(thr)) == expected
    assert exact_count(s, n_x, thr - 0.5) == sum(
        1 for c in itertools.combinations(ints, n_x) if sum(c) >= thr - 0.5
    )


@pytest.mark.parametrize("n,n_x", [(30, 15), (31, 11), (40, 20), (36, 25)])
def test_exact_large_against_dynamic_programme(n, n_x):
    # Integer scores with many ties; reference: DP over (size, sum), which
    # shares no code with the meet-in-the-middle counter.  (40, 20) runs the
    # multi-threaded path (exact_cost > 2e7).
    rng = np.random.default_rng(n * 100 + n_x)
    ints = rng.integers(-4, 5, size=n).tolist()
    ways, offset = dp_size_sum_table(ints, n_x)
    t_obs = sum(ints[:n_x])
    total = sum(ints)
    s = np.array(ints, dtype=float)
    assert sum(ways) == math.comb(n, n_x)
    ge = sum(w for idx, w in enumerate(ways) if idx - offset >= t_obs)
    le = sum(w for idx, w in enumerate(ways) if idx - offset <= t_obs)
    # two-sided in exact rationals: |n T - n_x total| >= |n T_obs - n_x total|
    dev = abs(n * t_obs - n_x * total)
    two = sum(w for idx, w in enumerate(ways) if abs(n * (idx - offset) - n_x * total) >= dev)
    assert partition_test(s, n_x, alternative="greater").count == ge
    assert partition_test(s, n_x, alternative="less").count == le
    assert partition_test(s, n_x, alternative="two-sided").count == two
    assert exact_count(s, n_x, t_obs + 0.5) == sum(
        w for idx, w in enumerate(ways) if idx - offset >= t_obs + 0.5
    )


# ---------------------------------------------------------------------------
# symmetries
# ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(score_vectors())
def test_less_equals_greater_on_negated(data):
    s, n_x = data
    less = partition_test(s, n_x, alternative="less", method="exact")
    greater_neg = partition_test(-s, n_x, alternative="greater", method="exact")
    assert less.count == greater_neg.count
    assert less.p_value == greater_neg.p_value


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 7).flatmap(lambda h: st.lists(st.integers(-5, 5), min_size=2 * h, max_size=2 * h)))
def test_two_sided_symmetric_under_swapping_x_and_y(ints):
    s = 0.1 * np.array(ints, dtype=float)
    n_x = s.size // 2
    swapped = np.concatenate([s[n_x:], s[:n_x]])
    a = partition_test(s, n_x, alternative="two-sided")
    b = partition_test(swapped, n_x, alternative="two-sided")
    assert a.count == b.count and a.p_value == b.p_value


def test_monte_carlo_less_equals_greater_on_negated_same_seed():
    rng = np.random.default_rng(11)
    s = rng.normal(size=40)
    less = partition_test(s, 20, alternative="less", method="monte-carlo", n_permutations=20_000, rng=3)
    greater_neg = partition_test(
        -s, 20, alternative="greater", method="monte-carlo", n_permutations=20_000, rng=3
    )
    assert less.count == greater_neg.count


# ---------------------------------------------------------------------------
# agreement with scipy.stats.permutation_test (exact enumeration, no ties)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n_x,n_y,seed", [(4, 4, 0), (5, 5, 1), (3, 6, 2), (6, 4, 3)])
@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_agrees_with_scipy_permutation_test(n_x, n_y, seed, alternative):
    from scipy.stats import permutation_test

    rng = np.random.default_rng(seed)
    x = rng.normal(0.3, 1.0, size=n_x)
    y = rng.normal(0.0, 1.0, size=n_y)

    def statistic(a, b, axis):
        return np.sum(a, axis=axis) - np.sum(b, axis=axis)

    ref = permutation_test(
        (x, y),
        statistic,
        permutation_type="independent",
        n_resamples=np.inf,
        alternative=alternative,
        vectorized=True,
    )
    ours = partition_test(np.concatenate([x, y]), n_x, alternative=alternative)
    assert ours.p_method == "exact"
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)


# ---------------------------------------------------------------------------
# Monte Carlo
# ---------------------------------------------------------------------------


def _moderate_example():
    # seed 2, shift 0.3: exact p = 0.1807 (greater), 0.8193 (less), 0.3614 (two-sided)
    rng = np.random.default_rng(2)
    s = rng.normal(size=24)
    s[:12] += 0.3
    return s


def test_monte_carlo_ci_contains_exact_p():
    s = _moderate_example()
    exact = partition_test(s, 12, method="exact")
    assert 0.05 < exact.p_value < 0.3  # moderate p by construction
    mc = partition_test(s, 12, method="monte-carlo", n_permutations=50_000, rng=7)
    assert mc.p_method == "monte-carlo"
    assert mc.n_permutations == 50_000
    assert mc.n_partitions == math.comb(24, 12)
    assert mc.ci_low <= exact.p_value <= mc.ci_high
    assert mc.p_value == (mc.count + 1) / (50_000 + 1)
    assert (mc.ci_low, mc.ci_high) == clopper_pearson(mc.count, 50_000)
    for alternative in ("less", "two-sided"):
        e = partition_test(s, 12, alternative=alternative)
        m = partition_test(s, 12, alternative=alternative, method="monte-carlo", n_permutations=50_000, rng=8)
        assert m.ci_low <= e.p_value <= m.ci_high


def test_monte_carlo_unequal_sizes_ci_contains_exact_p():
    rng = np.random.default_rng(5)
    s = rng.normal(size=20)
    s[:7] += 0.4
    for alternative in ALTERNATIVES:
        e = partition_test(s, 7, alternative=alternative)
        m = partition_test(s, 7, alternative=alternative, method="monte-carlo", n_permutations=40_000, rng=1)
        assert m.ci_low <= e.p_value <= m.ci_high, alternative


def test_monte_carlo_reproducible_and_seed_dependent():
    s = _moderate_example()
    kw = dict(method="monte-carlo", n_permutations=20_000)
    a = partition_test(s, 12, rng=123, **kw)
    b = partition_test(s, 12, rng=123, **kw)
    c = partition_test(s, 12, rng=124, **kw)
    assert a == b
    assert a.count != c.count
    g1 = partition_test(s, 12, rng=np.random.default_rng(123), **kw)
    assert g1 == a  # an int seed and a Generator built from it agree


def test_monte_carlo_does_not_touch_global_state():
    state = np.random.get_state()
    partition_test(_moderate_example(), 12, method="monte-carlo", n_permutations=5_000, rng=None)
    after = np.random.get_state()
    assert state[0] == after[0] and np.array_equal(state[1], after[1]) and state[2:] == after[2:]


def test_monte_carlo_ties_with_identical_values():
    # all scores equal: every partition ties with the observed one, p = 1
    r = partition_test(np.full(30, 0.2), 15, method="monte-carlo", n_permutations=3_000, rng=0)
    assert r.count == 3_000 and r.p_value == 1.0
    r = partition_test(np.full(30, 0.2), 15, alternative="two-sided", method="monte-carlo", n_permutations=3_000, rng=0)
    assert r.count == 3_000
    # binary scores: T takes few values, ties resolved by the tolerance
    s = np.array([0.1] * 10 + [0.0] * 10)
    s[[0, 1, 10, 11]] = s[[10, 11, 0, 1]]  # X side has 8 of the 0.1s
    e = partition_test(s, 10)
    m = partition_test(s, 10, method="monte-carlo", n_permutations=100_000, rng=4)
    assert m.ci_low <= e.p_value <= m.ci_high


def test_random_subsets_are_uniform():
    # n = 5, n_x = 2: 10 subsets, each with probability 1/10.
    rng = np.random.default_rng(99)
    masks = _random_subset_masks(5, 2, 200_000, rng.bit_generator)
    assert masks.shape == (5, 200_000)
    assert np.all(masks.sum(axis=0) == 2)
    codes = (masks * (2 ** np.arange(5))[:, None]).sum(axis=0).astype(int)
    _, freq = np.unique(codes, return_counts=True)
    assert freq.size == 10
    chi2 = float(((freq - 20_000) ** 2 / 20_000).sum())
    # chi-square with 9 df: P[chi2 > 27.88] = 0.001
    assert chi2 < 27.88
    # exact subset size for larger n as well
    masks = _random_subset_masks(64, 17, 5_000, rng.bit_generator)
    assert np.all(masks.sum(axis=0) == 17)
    assert np.allclose(masks.mean(axis=1), 17 / 64, atol=0.03)


def test_sequential_stopping():
    rng = np.random.default_rng(3)
    s = rng.normal(size=64)
    s[:32] += 1.0  # overwhelming effect, p ~ 0
    r = partition_test(s, 32, method="monte-carlo", n_permutations=200_000, sequential_alpha=0.05, batch_size=2_000,
                       rng=0)
    assert r.p_method == "monte-carlo"
    assert r.stopped_early is True
    assert r.n_permutations == 2_000
    assert r.ci_high < 0.05
    # a null-ish case whose interval straddles nothing near alpha stops too
    s0 = rng.normal(size=64)
    r0 = partition_test(s0, 32, method="monte-carlo", n_permutations=200_000, sequential_alpha=0.05,
                        batch_size=2_000, rng=0)
    assert r0.stopped_early is True and r0.ci_low > 0.05
    # without sequential stopping all permutations are used
    full = partition_test(s, 32, method="monte-carlo", n_permutations=10_000, rng=0)
    assert full.n_permutations == 10_000 and full.stopped_early is False


# ---------------------------------------------------------------------------
# method selection / budget
# ---------------------------------------------------------------------------


def test_default_budget_covers_n_up_to_50():
    assert max(exact_cost(n, k) for n in range(2, 51) for k in range(1, n)) <= DEFAULT_EXACT_BUDGET
    assert exact_cost(64, 32) > DEFAULT_EXACT_BUDGET
    r = partition_test(np.linspace(-1, 1, 64), 32, n_permutations=1_000, rng=0)
    assert r.p_method == "certified" and "exact_budget" in r.note  # beyond the budget: a certified bracket
    # tiny budget, but C(n, n_x) <= n_permutations: auto still enumerates
    r = partition_test(np.arange(8.0), 4, exact_budget=0, n_permutations=100)
    assert r.p_method == "exact" and r.count == brute_count(np.arange(8.0), 4, "greater")


def test_exact_count_complement_branch():
    # n_x > n/2 goes through the complement; compare with brute force.  Dyadic
    # values, so every subset sum (and the comparison at thr) is exact in float64.
    s = np.array([0.25, -1.25, 2.5, 0.75, 0.0, -0.5, 1.0, 0.875, -2.0])
    for n_x in range(5, 9):
        for thr in (-1.0, 0.0, 1.5, 1.75, 3.0, 3.125):
            expected = sum(1 for c in itertools.combinations(s.tolist(), n_x) if sum(c) >= thr)
            assert exact_count(s, n_x, thr) == expected


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_exact_beyond_budget_raises():
    with pytest.raises(ConfigError) as info:
        partition_test(np.linspace(-1, 1, 64), 32, method="exact")
    msg = str(info.value)
    assert str(math.comb(64, 32)) in msg  # 1832624140942590534
    assert "monte-carlo" in msg and "method" in msg


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"n_permutations": 0}, "n_permutations"),
        ({"alternative": "bigger"}, "alternative"),
        ({"method": "bootstrap"}, "method"),
        ({"rtol": -1.0}, "rtol"),
        ({"confidence": 1.5}, "confidence"),
        ({"sequential_alpha": 0.0}, "sequential_alpha"),
        ({"batch_size": 0}, "batch_size"),
    ],
)
def test_invalid_parameters_name_the_parameter(kwargs, name):
    with pytest.raises(ConfigError) as info:
        partition_test([0.1, 0.2, 0.3, 0.4], 2, **kwargs)
    assert name in str(info.value)


def test_alternative_error_lists_allowed_values():
    with pytest.raises(ConfigError) as info:
        partition_test([0.1, 0.2, 0.3, 0.4], 2, alternative="bigger")
    msg = str(info.value)
    assert "alternative must be one of greater, less, two-sided" in msg and "'bigger'" in msg


@pytest.mark.parametrize("n_x", [0, 4, -1])
def test_n_x_out_of_range(n_x):
    with pytest.raises(ConfigError, match="n_x"):
        partition_test([0.1, 0.2, 0.3, 0.4], n_x)


@pytest.mark.parametrize("bad,word", [(np.nan, "NaN"), (np.inf, "infinite")])
def test_non_finite_scores(bad, word):
    with pytest.raises(ConfigError, match=word):
        partition_test([0.1, bad, 0.3, 0.4], 2)


# ---------------------------------------------------------------------------
# Clopper-Pearson
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (7, 100), (512, 100_000)])
def test_clopper_pearson_matches_scipy_binomtest(k, n):
    from scipy.stats import binomtest

    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    low, high = clopper_pearson(k, n)
    assert low == pytest.approx(ref.low, rel=1e-9, abs=1e-15)
    assert high == pytest.approx(ref.high, rel=1e-9, abs=1e-15)


def test_clopper_pearson_hand_values():
    # k = 0: upper bound 1 - (alpha/2)**(1/n); k = n: lower bound (alpha/2)**(1/n)
    assert clopper_pearson(0, 10) == (0.0, pytest.approx(1 - 0.025 ** (1 / 10)))
    assert clopper_pearson(10, 10) == (pytest.approx(0.025 ** (1 / 10)), 1.0)
    with pytest.raises(ConfigError, match="k"):
        clopper_pearson(11, 10)
