"""Exact p-values are exact: counts checked against an independent count, ties kept.

The independent count is a plain-numpy meet in the middle written here (not
isoeat's fixed-point counter): all subset sums of each half of ``s`` in
float64, grouped by size, the right half sorted, pairs reaching the observed
sum counted with ``searchsorted``. No tolerance is used; instead the test
checks that no partition other than the observed one lies within
``W = 1e-13 * sum|s|`` of the threshold: W is ~20 times the float64 rounding
of a 50-term sum (so rounding cannot change the count) and 10 times below the
tie tolerance (so a near miss counted as a tie would show up as a mismatch).
In W1 on raw GloVe one partition lies between 1e-12 and 1e-11 sum|s| above
the threshold.
"""

from __future__ import annotations

import numpy as np
import pytest

import isoeat
from isoeat.stats.permutation import DEFAULT_RTOL, partition_test

EXACT_TESTS = ["W1", "W2", "W4", "W5", "W6", "W7", "W8", "W9", "W10"]
SLOW = {"W1", "W2"}  # 2**24-2**25 subsets per half: ~10 s each


def _half_sums(values: np.ndarray) -> list[np.ndarray]:
    """All subset sums of ``values`` (float64), as one array per subset size."""
    sums = np.zeros(1)
    sizes = np.zeros(1, dtype=np.int8)
    for v in values:
        sums = np.concatenate([sums, sums + v])
        sizes = np.concatenate([sizes, sizes + 1])
    order = np.argsort(sizes, kind="stable")
    sums, sizes = sums[order], sizes[order]
    bounds = np.searchsorted(sizes, np.arange(len(values) + 2))
    return [sums[bounds[k]:bounds[k + 1]] for k in range(len(values) + 1)]


def independent_count(s: np.ndarray, n_x: int, window: float) -> tuple[int, int]:
    """(#{n_x-subsets with sum >= thr + window} , #{... within [thr - window, thr + window)})."""
    thr = float(np.sum(s[:n_x]))
    h = s.size // 2
    left = _half_sums(s[:h])
    right = [np.sort(r) for r in _half_sums(s[h:])]
    above = near = 0
    for j, a in enumerate(left):
        k = n_x - j
        if not 0 <= k < len(right):
            continue
        b = right[k]
        hi = b.size - np.searchsorted(b, thr - a + window, side="left")
        lo = b.size - np.searchsorted(b, thr - a - window, side="left")
        above += int(hi.sum())
        near += int((lo - hi).sum())
    return above, near


def _cases():
    for cal in ("raw", "zca"):
        for t in EXACT_TESTS:
            yield pytest.param(t, cal, marks=[pytest.mark.slow] if t in SLOW else [], id=f"{t}-{cal}")


@pytest.mark.parametrize("test_id,cal", list(_cases()))
def test_exact_count_equals_an_independent_count(glove, glove_zca, test_id, cal):
    r = isoeat.weat(glove, test_id, calibration=glove_zca if cal == "zca" else None, rng=0)
    assert r.p_method == "exact"
    s = np.array(r.s_x + r.s_y)
    window = 1e-13 * float(np.abs(s).sum())  # >> float rounding of a subset sum (~5e-15 relative)
    above, near = independent_count(s, r.n_x, window)
    assert near == 1, f"{near - 1} partitions within 1e-13 sum|s| of the observed one: ambiguous"
    assert r.count == above + 1  # the observed partition reaches itself
    assert r.p_value == r.count / r.n_partitions


def test_tolerance_is_at_the_scale_of_rounding():
    import itertools
    from fractions import Fraction

    assert DEFAULT_RTOL <= 1e-11
    # {0.5 - 1e-10, 0.3, 0.2} lies 1e-10 (6e-11 of sum|s|) below the observed sum 1.0: not a tie
    vals = [0.5, 0.3, 0.2, 0.5 - 1e-10, 0.1, 0.0]
    thr = sum(Fraction(v) for v in vals[:3])
    expected = sum(sum(map(Fraction, c)) >= thr for c in itertools.combinations(vals, 3))
    assert expected == 4
    for alt, count in (("greater", expected), ("less", None)):
        r = partition_test(np.array(vals), 3, method="exact", alternative=alt)
        if count is not None:
            assert r.count == count
    assert r.tolerance == DEFAULT_RTOL * float(np.abs(vals).sum())


def test_ties_count_exact_duplicates_and_float_noise():
    import itertools
    from fractions import Fraction

    # genuine ties: equal s-values in X and Y, and values equal up to rounding (0.1 + 0.2 vs 0.3)
    noisy = 0.1 + 0.2  # 0.30000000000000004
    s = np.array([0.3, 0.7, 0.2, 0.5, noisy, 0.7, 0.2, 0.1])
    n_x = 4
    exact_vals = [Fraction(3, 10), Fraction(7, 10), Fraction(2, 10), Fraction(5, 10),
                  Fraction(3, 10), Fraction(7, 10), Fraction(2, 10), Fraction(1, 10)]
    thr = sum(exact_vals[:n_x])
    expected = sum(sum(c) >= thr for c in itertools.combinations(exact_vals, n_x))
    for alt in ("greater",):
        assert partition_test(s, n_x, method="exact", alternative=alt).count == expected
    # with the observed side holding the larger of the near-equal values the ties must still count
    s_swapped = s[[4, 1, 2, 3, 0, 5, 6, 7]]
    assert partition_test(s_swapped, n_x, method="exact").count == expected
