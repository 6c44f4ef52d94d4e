"""Change classes of ``classify_change`` at their exact boundaries.

Expected values are derived by hand from the documented rule: a test is
significant when ``p < alpha`` (strictly), so ``p == alpha`` is *not*
significant; Disappearing = significant raw and not calibrated, Emerging = the
reverse, Stable otherwise. ``alpha`` must lie in the open interval (0, 1).
Only the public function is used (the comparison module is being rewritten).
"""

from __future__ import annotations

import pytest

from isoeat._errors import ConfigError
from isoeat.experiments.compare import classify_change


@pytest.mark.parametrize(
    ("p_raw", "p_cal", "expected"),
    [
        (0.01, 0.02, "Stable"),  # sig -> sig
        (0.01, 0.20, "Disappearing"),  # sig -> non-sig
        (0.20, 0.01, "Emerging"),  # non-sig -> sig
        (0.20, 0.30, "Stable"),  # non-sig -> non-sig
    ],
)
def test_truth_table(p_raw, p_cal, expected):
    assert classify_change(p_raw, p_cal, 0.05) == expected


def test_p_equal_to_alpha_is_not_significant():
    # p == alpha: not significant, on either side
    assert classify_change(0.05, 0.20, 0.05) == "Stable"
    assert classify_change(0.20, 0.05, 0.05) == "Stable"
    assert classify_change(0.01, 0.05, 0.05) == "Disappearing"
    assert classify_change(0.05, 0.01, 0.05) == "Emerging"
    assert classify_change(0.05, 0.05, 0.05) == "Stable"


def test_exact_6x6_pvalues_against_alpha():
    # a 6x6 exact test has p = k / C(12, 6) = k / 924; 46/924 = 0.0498 < 0.05 <= 47/924 = 0.0509
    for k in range(925):
        p = k / 924
        sig = k <= 46
        assert classify_change(p, 1.0, 0.05) == ("Disappearing" if sig else "Stable"), k
        assert classify_change(1.0, p, 0.05) == ("Emerging" if sig else "Stable"), k
    # alpha hit exactly by an attainable p: k = 47 is not significant, k = 46 is
    alpha = 47 / 924
    assert classify_change(47 / 924, 1.0, alpha) == "Stable"
    assert classify_change(46 / 924, 1.0, alpha) == "Disappearing"
    assert classify_change(1.0, 47 / 924, alpha) == "Stable"
    assert classify_change(1.0, 46 / 924, alpha) == "Emerging"


def test_default_alpha_is_0_05():
    assert classify_change(0.03, 0.20) == "Disappearing"  # 0.03 < 0.05 (but not < 0.025)
    assert classify_change(0.20, 0.03) == "Emerging"
    assert classify_change(0.05, 0.20) == "Stable"  # the default alpha is 0.05, not more
    assert classify_change(0.049, 0.051) == "Disappearing"


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5])
def test_alpha_outside_open_unit_interval_is_refused(alpha):
    with pytest.raises(ConfigError, match="alpha"):
        classify_change(0.01, 0.2, alpha)


@pytest.mark.parametrize("alpha", [1e-12, 0.01, 0.5, 0.7, 0.99, 1 - 1e-12])
def test_alpha_inside_open_unit_interval_is_accepted(alpha):
    # p = 0 is below any valid alpha, p = 1 above it
    assert classify_change(0.0, 1.0, alpha) == "Disappearing"
    assert classify_change(1.0, 0.0, alpha) == "Emerging"
    assert classify_change(0.0, 0.0, alpha) == "Stable"
    assert classify_change(1.0, 1.0, alpha) == "Stable"
