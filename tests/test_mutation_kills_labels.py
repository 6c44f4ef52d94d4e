"""isoeat/labels.py at every boundary its rules name: the fallback share, alpha, opposite signs, magnitudes.

Expected values are worked out by hand in the comments (fractions, not floats, at the bounds).
"""

from __future__ import annotations

import math
from types import SimpleNamespace as NS

import pytest

from isoeat._errors import ConfigError
from isoeat.labels import (
    FALLBACK_WARN_SHARE,
    change_flags,
    check_alpha,
    classify_change,
    cohen_magnitude,
    compare_records,
    fallback_counts,
    is_significant,
    metric_change,
    opposite_signs,
    sanity_failures,
    too_many_fallbacks,
)


def test_the_fallback_share_is_ten_percent_strictly_above():
    assert FALLBACK_WARN_SHARE == 0.10
    assert too_many_fallbacks(10, 100) is False      # 10/100 = 0.10: at the bound, no warning
    assert too_many_fallbacks(11, 100) is True       # 0.11 > 0.10
    assert too_many_fallbacks(1, 10) is False        # 0.1 exactly (the float 0.1 is not 1/10: compared exactly)
    assert too_many_fallbacks(1, 9) is True          # 0.111...
    assert too_many_fallbacks(0, 0) is False         # no entries: nothing to warn about
    assert too_many_fallbacks(1, 1) is True


def test_fallback_counts_count_entries_totals_and_distinct_words():
    # two tests: 3 fallback entries, one word ("nurse") in two sets, sizes 2+2+3+3 and 1+1+2+2
    a = {"fallback": ["X:nurse", "A:home"], "n_x": 2, "n_y": 2, "n_a": 3, "n_b": 3}
    b = NS(fallback=("Y:nurse",), n_x=1, n_y=1, n_a=2, n_b=2)
    assert fallback_counts([a, b]) == (3, 16, 2)
    assert fallback_counts([{"fallback": None, "n_x": 1, "n_y": 1, "n_a": 1, "n_b": 1}]) == (0, 4, 0)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5, True, "0.05", None])
def test_check_alpha_refuses_the_closed_ends_and_non_numbers(alpha):
    if isinstance(alpha, str):
        assert check_alpha(alpha) == 0.05  # a number written as text (a YAML or CLI value) is a number
        return
    with pytest.raises(ConfigError, match="alpha must lie in"):
        check_alpha(alpha)


def test_check_alpha_keeps_values_just_inside():
    assert check_alpha(1e-300) == 1e-300 and check_alpha(math.nextafter(1.0, 0.0)) < 1.0


def test_significance_is_strict_and_nan_is_not_significant():
    assert is_significant(0.0499, 0.05) and not is_significant(0.05, 0.05)
    assert not is_significant(float("nan"), 0.05)


@pytest.mark.parametrize("a, b, want", [(1.0, -1.0, True), (-2.0, 3.0, True), (1.0, 1.0, False),
                                         (0.0, -1.0, False), (-1.0, 0.0, False), (math.inf, -1.0, False),
                                         (1.0, math.nan, False), (-1e-300, 1e-300, True), (0.0, 1.0, False),
                                         (1.0, 0.0, False), (0.0, 0.0, False)])
def test_opposite_signs(a, b, want):
    assert opposite_signs(a, b) is want


def test_large_shift_is_strictly_above_one_half():
    assert change_flags(1.0, 1.5)["large_shift"] is False and change_flags(1.0, 1.5000001)["large_shift"] is True
    assert change_flags(0.0, math.nan)["large_shift"] is False


def test_change_classes_need_a_valid_alpha():
    with pytest.raises(ConfigError):
        classify_change(0.01, 0.2, alpha=0.0)
    assert classify_change(0.01, 0.01, alpha=0.05) == "Stable" and classify_change(0.2, 0.2) == "Stable"


def test_compare_records_adjusted_classes_only_with_finite_adjusted_p():
    raw = {"effect_size": 1.0, "p_value": 0.01, "p_holm": 0.04, "p_bh": float("nan")}
    cal = {"effect_size": 0.4, "p_value": 0.2, "p_holm": 0.3, "p_bh": 0.3}
    row = compare_records(raw, cal, 0.05)
    assert row["change"] == "Disappearing" and row["change_holm"] == "Disappearing" and "change_bh" not in row
    assert row["large_shift"] is True and row["sign_reversal"] is False


def test_magnitude_bounds_are_inclusive_lower_bounds():
    assert [cohen_magnitude(d) for d in (0.2, math.nextafter(0.2, 0), 0.5, math.nextafter(0.5, 0), 0.8,
                                         math.nextafter(0.8, 0))] == ["small", "negligible", "medium", "small",
                                                                      "large", "medium"]
    assert cohen_magnitude(None) == "n/a" and cohen_magnitude(-math.inf) == "n/a"
    assert [cohen_magnitude(d) for d in (-0.9, -0.6, -0.3, -0.1)] == ["large", "medium", "small", "negligible"]


def test_sanity_failures_direction_and_skips():
    weak = NS(effect_size=-0.3, p_value=0.01, alternative="two-sided")  # significant, wrong way round
    less = NS(effect_size=-1.0, p_value=0.5, alternative="less")        # another question: skipped
    ok = NS(effect_size=0.0001, p_value=0.01, alternative="two-sided")
    rows = [NS(test="W2", raw=weak, calibrated=ok), NS(test="W1", raw=less, calibrated=ok)]
    assert sanity_failures(rows, 0.05) == [("W2", "raw", -0.3, 0.01)]
    zero = NS(effect_size=0.0, p_value=0.01, alternative="two-sided")   # d = 0 is not "its expected direction"
    assert sanity_failures([NS(test="W1", raw=zero, calibrated=ok)], 0.05) == [("W1", "raw", 0.0, 0.01)]


def test_metric_change_without_p_or_sign():
    r = metric_change(0.5, float("nan"), -0.5, float("nan"), signed=True, has_p=False)
    assert (r["conclusion"], r["reason"], r["change"], r["sig_raw"]) == ("changed", "sign reversal", "", False)
    u = metric_change(0.5, 0.01, -0.5, 0.01, signed=False, has_p=True)
    assert (u["conclusion"], u["sign_reversal"], u["sig_raw"], u["sig_calibrated"]) == ("unchanged", False, True, True)
    with pytest.raises(ConfigError):
        metric_change(0.5, 0.01, 0.5, 0.01, signed=True, has_p=True, alpha=1.0)
    # without a p-value the p given is ignored, however small
    n = metric_change(0.5, 0.001, 0.4, 0.001, signed=True, has_p=False)
    assert (n["sig_raw"], n["sig_calibrated"], n["conclusion"]) == (False, False, "unchanged")
    # the default level is 0.05: p = 0.03 is significant, p = 0.06 not
    d = metric_change(0.5, 0.03, 0.4, 0.06, signed=True, has_p=True)
    assert (d["sig_raw"], d["sig_calibrated"], d["change"]) == (True, False, "Disappearing")


def test_permutations_depart_only_where_a_p_was_sampled():
    from isoeat.labels import protocol_departures

    assert protocol_departures(reference_size=100_000, eps=1e-3, permutations=10_000) == ()  # exact p: none needed
    assert protocol_departures(permutations=10_000, sampled=True) == ("10,000 permutations (the paper: 100,000)",)


def test_the_firm_cell_is_a_dash_without_replicates():
    from isoeat.labels import holds_mark

    assert holds_mark(None, 100) == "-" and holds_mark(5, 0) == "-" and holds_mark(5, None) == "-"


def test_a_shifted_p_from_the_ends_of_the_unit_interval_is_finite():
    """p = 0 (an exact p can be 0 only in a degenerate case) and p = 1 are clamped before the probit."""
    from isoeat.labels import shifted_p

    for p in (0.0, 1.0):
        q = shifted_p(p, 0.5, 0.6, 8, 8)
        assert 0.0 <= q <= 1.0 and math.isfinite(q)


def test_shifted_p_uses_the_null_slope_with_ddof():
    """c = sqrt(n_x n_y / n) sqrt((n - 1)/(n - ddof)): with ddof = 0 and n_x = n_y = 8, c = 2 sqrt(15/16);
    from p = 0.5 at d = 0 to d' = 0.5, p' = 1 - Phi(c / 2) (greater)."""
    from statistics import NormalDist

    from isoeat.labels import shifted_p

    c = 2.0 * math.sqrt(15 / 16)
    assert shifted_p(0.5, 0.0, 0.5, 8, 8, ddof=0) == pytest.approx(1 - NormalDist().cdf(c * 0.5), abs=1e-12)


def test_two_sided_shifted_p_moves_by_the_change_in_absolute_effect():
    """Two-sided: p' = min(1, 2 (1 - Phi(Phi^-1(1 - p/2) + c (|d'| - |d|)))), c = 2 for n_x = n_y = 8, ddof 1."""
    from statistics import NormalDist

    from isoeat.labels import shifted_p

    nd = NormalDist()

    def want(p, d, d_new):
        return min(1.0, 2 * (1 - nd.cdf(nd.inv_cdf(1 - p / 2) + 2.0 * (abs(d_new) - abs(d)))))

    for p, d, d_new in ((0.2, -0.5, -0.6), (0.2, 0.5, -0.6), (0.9, 0.5, 0.2), (0.9, -0.5, -0.1)):
        assert shifted_p(p, d, d_new, 8, 8, "two-sided") == pytest.approx(want(p, d, d_new), abs=1e-12)
    assert shifted_p(0.9, 0.5, 0.2, 8, 8, "two-sided") > 0.9  # above one half: the cap is at 1


def test_replicate_agreement_uses_the_cells_ddof_by_default():
    import inspect

    from isoeat.labels import replicate_agreement

    assert inspect.signature(replicate_agreement).parameters["ddof"].default == 1  # WEAT's d: sample SD, ddof 1
