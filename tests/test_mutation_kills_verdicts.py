"""Tests that kill mutants of ``isoeat/experiments/_verdicts.py`` (the spread of d over the cells).

``d_sd`` is the sample standard deviation (``ddof=1``) of the defined d of a
test's sweep cells, NaN when fewer than two are defined — computed here by
hand or with :func:`statistics.stdev`, never read from isoeat.
"""

from __future__ import annotations

import math
import statistics
import warnings
from types import SimpleNamespace

import pytest

from isoeat.experiments._verdicts import _summarise

NAN = float("nan")


def _rows(ds, kind="eps"):
    """Raw, default and sweep rows of test "T"; every cell agrees with the default (p = 0.01)."""
    out = [
        SimpleNamespace(test="T", kind="raw", effect_size=2.0, p_value=0.001, bias_type="b", agrees_with_default=False),
        SimpleNamespace(test="T", kind="default", effect_size=1.0, p_value=0.01, bias_type="b",
                        agrees_with_default=True),
    ]
    out += [SimpleNamespace(test="T", kind=kind, effect_size=d, p_value=0.01, bias_type="b", agrees_with_default=True)
            for d in ds]
    return out


def _summary(ds):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "degrees of freedom" RuntimeWarning either
        return _summarise(_rows(ds), "T", 0.05, 0.9, 5.0)


def test_d_sd_is_the_sample_standard_deviation():
    s = _summary([1.0, 2.0, 3.0])
    assert s.d_sd == pytest.approx(1.0, abs=1e-15)  # sum of squares 2, over n - 1 = 2
    s = _summary([1.5, 0.75, -0.5, 1.0])
    assert s.d_sd == pytest.approx(statistics.stdev([1.5, 0.75, -0.5, 1.0]), rel=1e-12)


def test_d_sd_over_the_defined_d_only():
    s = _summary([1.0, NAN, 3.0])
    assert s.d_sd == pytest.approx(math.sqrt(2.0), rel=1e-15)  # (1, 3): 2 / 1
    assert (s.d_min, s.d_max) == (1.0, 3.0)


@pytest.mark.parametrize("ds", [[1.0], [NAN, 2.0], [NAN], []])
def test_d_sd_of_fewer_than_two_defined_d_is_nan_without_a_warning(ds):
    s = _summary(ds)
    assert math.isnan(s.d_sd)
