"""List cells of CSV files (``_records.records_to_csv``): a list is one cell, its items joined by ``;``.

An item holding ``;`` (a word such as ``rock;roll`` is a valid stimulus) made the cell ambiguous: ``a;b;c`` read back
as three items where two were written. Items are escaped (``\\;`` and ``\\\\``), and every reader splits with
:func:`isoeat._records.cell_list`. Expected values are written by hand from that rule; the round trip is checked on
random items drawn from an alphabet rich in ``;`` and ``\\``, read back by Python's own ``csv`` module.
"""

from __future__ import annotations

import csv
import io
import random

import pytest

from isoeat._records import cell_list, records_to_csv


def _read(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize(("items", "cell"), [
    (["rock;roll", "zzz"], "rock\\;roll;zzz"),
    (["a", "b"], "a;b"),  # items without ; or \\ are written as before
    (["back\\slash", "x"], "back\\\\slash;x"),
    (["end\\", ";"], "end\\\\;\\;"),
    ([], ""),
])
def test_a_list_cell_escapes_what_would_split_it(items, cell):
    got = _read(records_to_csv([{"dropped": items}]))[0]["dropped"]
    assert got == cell
    assert cell_list(got) == items


def test_list_cells_round_trip_whatever_their_items():
    rng = random.Random(7)
    alphabet = "ab;\\ é"
    for _ in range(2000):
        items = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(1, 4))]
        items = [w for w in items if w]  # a cell's empty items are not kept (as before)
        cell = _read(records_to_csv([{"words": items}]))[0]["words"]
        assert cell_list(cell) == items, (items, cell)


def test_a_json_list_and_an_old_plain_cell_read_as_before():
    assert cell_list(["x;y", "z"]) == ["x;y", "z"]  # JSON keeps the list itself
    assert cell_list("a;b;;c") == ["a", "b", "c"]
    assert cell_list(None) == [] and cell_list("") == []


def test_the_readers_of_list_cells_use_the_one_rule():
    from isoeat.reporting.tables import corpus_names

    assert corpus_names("wiki\\;2;ptb") == ["wiki;2", "ptb"]
