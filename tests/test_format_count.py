"""Counts in tables: an exact or certified test's number of partitions can have 150 digits (C(n, n/2) for
a few hundred words); tables print it in scientific notation above 10**12, records keep the exact integer."""

from __future__ import annotations

from math import comb

import pytest

from isoeat.reporting.tables import MAX_PLAIN_COUNT, format_count


@pytest.mark.parametrize("n, text", [
    (0, "0"),
    (1_048_576, "1,048,576"),
    (10**12, "1,000,000,000,000"),  # at the bound: still plain
    (10**12 + 1, "1.00e+12"),  # just above: scientific
    (1_235 * 10**146, "1.24e+149"),  # rounded half to even on the exact integer: 1.235 -> 1.24
    (1_225 * 10**146, "1.22e+149"),  # ... and 1.225 -> 1.22 (no float rounding of the whole)
    (10**400, "1.00e+400"),  # beyond a float's range
])
def test_format_count(n, text):
    assert MAX_PLAIN_COUNT == 10**12
    assert format_count(n) == text


def test_a_partition_count_is_short():
    n = comb(260, 130)  # the partitions of two sets of 130 words: 77 digits
    assert len(str(n)) > 70
    text = format_count(n)
    assert len(text) <= 9 and float(text) == pytest.approx(n, rel=5e-3)
