"""Boundaries of isoeat.stats.multitest: the [0, 1] range check and its message.

p-values 0 and 1 are valid (closed interval); the error names the offending
values, at most the first five, in input order. Expected values by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from isoeat._errors import ConfigError
from isoeat.stats.multitest import benjamini_hochberg, holm


@pytest.mark.parametrize("fn", [holm, benjamini_hochberg])
def test_zero_and_one_are_valid(fn):
    # Holm [0, 1]: sorted 0, 1 with factors 2, 1 -> 0, 1; BH: 0 * 2/1 = 0, 1 * 2/2 = 1
    np.testing.assert_array_equal(fn([0.0, 1.0]), [0.0, 1.0])
    np.testing.assert_array_equal(fn([1.0]), [1.0])
    np.testing.assert_array_equal(fn([0.0]), [0.0])


@pytest.mark.parametrize("fn", [holm, benjamini_hochberg])
@pytest.mark.parametrize(
    ("pvalues", "named"),
    [
        ([0.0, 0.5, 1.5], "[1.5]"),  # 0 and 0.5 are valid, only 1.5 is named
        ([1.0, 0.5, -0.5], "[-0.5]"),  # 1 is valid, only -0.5 is named
        ([0.7, 1.0, 2.0, -1.0], "[2.0, -1.0]"),  # input order, both sides
    ],
)
def test_message_names_exactly_the_values_outside_0_1(fn, pvalues, named):
    with pytest.raises(ConfigError) as info:
        fn(pvalues)
    assert str(info.value).endswith("got " + named)


def test_message_names_at_most_five_values():
    with pytest.raises(ConfigError) as info:
        holm([2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    assert str(info.value).endswith("got [2.0, 3.0, 4.0, 5.0, 6.0]")


def test_single_pvalue_is_unchanged():
    # m = 1: Holm factor 1, BH factor 1/1; a lone p is its own adjusted p
    for p in (0.0, 0.03, 0.5, 1.0):
        assert holm([p])[0] == p
        assert benjamini_hochberg([p])[0] == p
