"""The robust/fragile verdict of the sensitivity analysis, pinned at its boundaries.

Every expected value below is derived by hand from the documented rule
(docs/sensitivity.md "The rule", and the Verdict section of
isoeat.experiments.sensitivity), never by calling the code:

* significant  <=>  p < alpha          (p == alpha is NOT significant; NaN < alpha is false)
* a cell agrees  <=>  its significance call equals the default's
* robust  <=>  share of agreeing cells >= agreement_threshold
              and every cell's d is defined with |d - d_default| <= max_shift
  otherwise fragile, naming the failing criterion; no cells is fragile
* a sign reversal is a cell whose d has the strictly opposite sign of d_default

Floats at the boundaries are exact binary values (0.5, 0.25, 0.75) or their
immediate neighbours (``np.nextafter``), so "just either side" means one ulp.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from isoeat.experiments._verdicts import (
    _summarise,
    agreement_share,
    agrees,
    is_significant,
    max_abs_shift,
    sign_reversals,
    verdict,
)

NAN = float("nan")
ALPHA = 0.05
BELOW_ALPHA = float(np.nextafter(ALPHA, 0.0))
ABOVE_ALPHA = float(np.nextafter(ALPHA, 1.0))


def below(x: float) -> float:
    return float(np.nextafter(x, -math.inf))


def above(x: float) -> float:
    return float(np.nextafter(x, math.inf))


# ---------------------------------------------------------------------------
# significance: p < alpha, strictly
# ---------------------------------------------------------------------------

SIGNIFICANCE = [
    # p,            alpha, expected
    (0.01, ALPHA, True),
    (BELOW_ALPHA, ALPHA, True),  # one ulp below alpha
    (ALPHA, ALPHA, False),  # p == alpha is not significant
    (ABOVE_ALPHA, ALPHA, False),
    (0.0, ALPHA, True),
    (1.0, ALPHA, False),
    (NAN, ALPHA, False),  # NaN < alpha is false
    (0.01, 0.01, False),
    (0.0099, 0.01, True),
]


@pytest.mark.parametrize(("p", "alpha", "expected"), SIGNIFICANCE)
def test_significance_is_p_strictly_below_alpha(p, alpha, expected):
    assert is_significant(p, alpha) is expected


AGREEMENT = [
    # p_cell,       p_default,   expected (alpha = 0.05)
    (0.01, 0.02, True),  # both significant
    (0.50, 0.06, True),  # both not significant
    (ALPHA, 0.04, False),  # cell exactly at alpha: not significant; default significant
    (0.04, ALPHA, False),  # default exactly at alpha: not significant; cell significant
    (ALPHA, ALPHA, True),  # both at alpha: both not significant
    (BELOW_ALPHA, ALPHA, False),
    (ABOVE_ALPHA, ALPHA, True),
    (NAN, 0.50, True),  # NaN is not significant, like the default
    (NAN, 0.01, False),
]


@pytest.mark.parametrize(("p", "p_default", "expected"), AGREEMENT)
def test_agreement_compares_the_significance_calls(p, p_default, expected):
    assert agrees(p, p_default, ALPHA) is expected


# ---------------------------------------------------------------------------
# the verdict: share >= threshold and max shift <= max_shift, all d defined
# ---------------------------------------------------------------------------

VERDICTS = [
    # share,       shift,       all d defined, threshold, max_shift, expected, failing criteria
    (0.75, 0.25, True, 0.75, 0.5, "robust", ()),  # share exactly at the threshold
    (below(0.75), 0.25, True, 0.75, 0.5, "fragile", ("agree",)),  # one ulp below it
    (above(0.75), 0.25, True, 0.75, 0.5, "robust", ()),
    (0.9, 0.25, True, 0.9, 0.5, "robust", ()),  # 9 of 10 cells at the default 90%
    (0.8, 0.25, True, 0.9, 0.5, "fragile", ("agree",)),  # 8 of 10
    (1.0, 0.5, True, 0.9, 0.5, "robust", ()),  # shift exactly max_shift
    (1.0, above(0.5), True, 0.9, 0.5, "fragile", ("shift",)),  # one ulp beyond it
    (1.0, below(0.5), True, 0.9, 0.5, "robust", ()),
    (1.0, 0.0, True, 1.0, 0.5, "robust", ()),  # threshold 100%, all agree
    (below(1.0), 0.0, True, 1.0, 0.5, "fragile", ("agree",)),
    (0.0, 0.0, True, 0.0, 0.5, "robust", ()),  # threshold 0: any share passes
    (0.5, 0.75, True, 0.9, 0.5, "fragile", ("agree", "shift")),  # both fail, both named
    (1.0, 0.25, False, 0.9, 0.5, "fragile", ("shift",)),  # a cell with undefined (NaN) d
    (1.0, NAN, False, 0.9, 0.5, "fragile", ("shift",)),  # no cell has a defined d
    (NAN, NAN, True, 0.9, 0.5, "fragile", ("agree", "shift")),  # no cells at all
]


@pytest.mark.parametrize(("share", "shift", "defined", "thr", "max_shift", "expected", "failing"), VERDICTS)
def test_verdict_at_its_boundaries(share, shift, defined, thr, max_shift, expected, failing):
    label, reason = verdict(share, shift, 10, defined, thr, max_shift)
    assert label == expected
    assert ("significance agrees with the default" in reason) == ("agree" in failing)
    assert ("d moves up to" in reason) == ("shift" in failing)
    if expected == "robust":
        assert reason.startswith("significance agrees in ")


# ---------------------------------------------------------------------------
# the numbers the verdict is made of
# ---------------------------------------------------------------------------

SHARES = [
    ([True] * 9 + [False], 0.9),
    ([True, True, True, False], 0.75),
    ([False, False], 0.0),
    ([True], 1.0),
]


@pytest.mark.parametrize(("flags", "expected"), SHARES)
def test_agreement_share(flags, expected):
    assert agreement_share(flags) == expected


def test_agreement_share_of_no_cells_is_nan():
    assert math.isnan(agreement_share([]))


SHIFTS = [
    # d,                     d_default, expected max |d - d_default| over defined d
    ([1.5], 1.0, 0.5),
    ([0.5, 1.25], 1.0, 0.5),
    ([1.25, NAN], 1.0, 0.25),  # NaN d is left out of the maximum (and fails the verdict separately)
    ([-0.25, 0.25], 0.0, 0.25),
    ([-1.0], 1.0, 2.0),
]


@pytest.mark.parametrize(("d", "d_default", "expected"), SHIFTS)
def test_max_abs_shift(d, d_default, expected):
    assert max_abs_shift(d, d_default) == expected


def test_max_abs_shift_without_defined_d_is_nan():
    assert math.isnan(max_abs_shift([NAN, NAN], 1.0))
    assert math.isnan(max_abs_shift([], 1.0))


SIGNS = [
    # d,                       d_default, reversals
    ([-0.5, 0.0, 0.5], 1.0, 1),  # 0 is not a reversal
    ([-0.5, 0.0, 0.5], -1.0, 1),
    ([-0.5, 0.0, 0.5], 0.0, 0),  # a zero default has no sign to reverse
    ([NAN, -2.0, -3.0], 1.0, 2),  # NaN d is not counted
    ([0.25, 0.75], 1.0, 0),
    ([-0.25, -0.75], 1.0, 2),
]


@pytest.mark.parametrize(("d", "d_default", "expected"), SIGNS)
def test_sign_reversals(d, d_default, expected):
    assert sign_reversals(d, d_default) == expected


# ---------------------------------------------------------------------------
# the per-test summary, from rows
# ---------------------------------------------------------------------------


def _rows(d_default, p_default, cells, kind="eps"):
    """Raw, default and sweep rows of test "T"; ``cells`` are (d, p) pairs.

    ``agrees_with_default`` is set by the documented rule, by hand: equal
    calls of ``p < 0.05``.
    """
    sig_default = p_default < ALPHA
    out = [
        SimpleNamespace(test="T", kind="raw", effect_size=2.0, p_value=0.001, bias_type="b", agrees_with_default=False),
        SimpleNamespace(test="T", kind="default", effect_size=d_default, p_value=p_default, bias_type="b",
                        agrees_with_default=True),
    ]
    for d, p in cells:
        out.append(SimpleNamespace(test="T", kind=kind, effect_size=d, p_value=p, bias_type="b",
                                   agrees_with_default=(p < ALPHA) == sig_default))
    out.append(SimpleNamespace(test="U", kind=kind, effect_size=-9.0, p_value=0.9, bias_type="b",
                               agrees_with_default=False))  # another test's row: ignored
    return out


SUMMARIES = [
    # d_default, p_default, cells (d, p),                                    expected verdict
    (1.0, 0.01, [(1.5, 0.01)] * 9 + [(1.25, 0.2)], "robust"),  # 9/10 agree, shift exactly 0.5
    (1.0, 0.01, [(1.25, 0.01)] * 8 + [(1.25, 0.2)] * 2, "fragile"),  # 8/10 agree
    (1.0, 0.01, [(1.25, 0.01)] * 9 + [(1.25, ALPHA)], "robust"),  # the p == alpha cell disagrees: 9/10
    (1.0, 0.01, [(1.25, 0.01)] * 8 + [(1.25, ALPHA)] * 2, "fragile"),  # two p == alpha cells: 8/10
    (1.0, ALPHA, [(1.25, 0.2)] * 10, "robust"),  # default at alpha is not significant: all agree
    (1.0, ALPHA, [(1.25, 0.01)] * 2 + [(1.25, 0.2)] * 8, "fragile"),  # 8/10
    (1.0, 0.01, [(1.0, 0.01)] * 9 + [(above(1.5), 0.01)], "fragile"),  # one cell one ulp beyond 0.5
    (1.0, 0.01, [(1.0, 0.01)] * 9 + [(NAN, 0.01)], "fragile"),  # one undefined d
    (0.25, 0.01, [(-0.25, 0.01)] * 10, "robust"),  # sign reversal with shift exactly 0.5 is allowed
]


@pytest.mark.parametrize(("d_default", "p_default", "cells", "expected"), SUMMARIES)
def test_summary_verdict_from_rows(d_default, p_default, cells, expected):
    s = _summarise(_rows(d_default, p_default, cells), "T", ALPHA, 0.9, 0.5)
    assert s.verdict == expected
    assert s.n_cells == len(cells)
    assert s.significant_default is (p_default < ALPHA)


def test_summary_fields_by_hand():
    cells = [(1.5, 0.01), (0.75, 0.2), (-0.5, ALPHA), (1.0, 0.001)]
    s = _summarise(_rows(1.0, 0.01, cells, kind="reference_size"), "T", ALPHA, 0.75, 0.5)
    # agreement: sig, not, not (p == alpha), sig vs default sig -> 2/4
    assert s.share_agree == 0.5
    assert s.share_agree_reference_size == 0.5
    assert math.isnan(s.share_agree_eps) and math.isnan(s.share_agree_calibration)
    assert s.max_abs_shift == 1.5  # |-0.5 - 1.0|
    assert s.sign_reversals == 1
    assert (s.d_min, s.d_max) == (-0.5, 1.5)
    assert s.significant_raw is True and s.d_raw == 2.0
    assert s.verdict == "fragile"
    assert "50% of 4 cells" in s.reason and "d moves up to 1.50" in s.reason


def test_summary_without_cells_is_fragile():
    s = _summarise(_rows(1.0, 0.01, []), "T", ALPHA, 0.9, 0.5)
    assert s.verdict == "fragile"
    assert s.n_cells == 0 and math.isnan(s.share_agree) and math.isnan(s.max_abs_shift)


# ---------------------------------------------------------------------------
# end to end: the rows of a real sweep follow the rule
# ---------------------------------------------------------------------------


def test_real_sweep_rows_and_verdicts_follow_the_rule(glove):
    from isoeat.experiments.sensitivity import sensitivity_analysis

    alpha, thr, max_shift = 0.05, 0.9, 0.5
    res = sensitivity_analysis(glove, ["W6", "W9", "W4"], eps=(1e-4, 1e-1), reference_sizes=(2000,), repeats=2,
                               rng=3, calibrations=("center",), n_reference=20_000, exact_max_n=16, alpha=alpha,
                               agreement_threshold=thr, max_shift=max_shift)
    for s in res.summary:
        rows = [r for r in res.rows if r.test == s.test]
        default = next(r for r in rows if r.kind == "default")
        cells = [r for r in rows if r.kind not in ("raw", "default")]
        for r in rows:
            assert r.significant is (r.p_value < alpha)
            assert r.agrees_with_default is ((r.p_value < alpha) == (default.p_value < alpha))
        share = sum(r.agrees_with_default for r in cells) / len(cells)
        shifts = [abs(r.effect_size - default.effect_size) for r in cells]
        robust = share >= thr and all(math.isfinite(x) and x <= max_shift for x in shifts)
        assert s.verdict == ("robust" if robust else "fragile")
        assert s.sign_reversals == sum(r.effect_size * default.effect_size < 0 for r in cells)
    assert {s.verdict for s in res.summary} == {"robust", "fragile"}  # both branches exercised
