"""The lean JSON and CSV writers of ``isoeat._records`` write the same characters as the standard library.

``indented_json`` (the text of every indented ``write_json``) must equal ``json.dumps(obj, indent=2,
allow_nan=False, default=...)``, the reference being the standard library's pure-Python indenting encoder; and
``records_to_csv`` (rows written as lists) must equal a ``csv.DictWriter`` rendering of the documented cell rules
(lists joined by ``;``, None empty, text cells escaped by ``csv_text``, a row holding a CR quoted in full),
re-implemented here from the docstrings.
"""

from __future__ import annotations

import csv
import enum
import io
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from isoeat._records import _json_default, clean, csv_text, indented_json, records_to_csv, write_json


def _reference_json(obj):
    # the standard library's indenting encoder (pure Python): the text write_json wrote before
    return json.dumps(obj, indent=2, allow_nan=False, default=_json_default)


class _Level(enum.IntEnum):
    ONE = 1


_KEYS = ["a", "é", 'q"uote', "tab\t", "", "x" * 3, 7, 2.5, True, None]
_SCALARS = [
    0,
    -3,
    2**70,
    1.5,
    -0.0,
    1e-300,
    1e300,
    0.1 + 0.2,
    True,
    False,
    None,
    "",
    "plain",
    "ünïcode ✓",
    'esc "\\ \n \r \t \x00',
    np.float64(0.25),  # a float subclass
    _Level.ONE,  # an int subclass
]


def _random_value(rng: random.Random, depth: int):
    kind = rng.random()
    if depth >= 4 or kind < 0.45:
        return rng.choice(_SCALARS)
    if kind < 0.55:
        return Path("/tmp/p") if rng.random() < 0.5 else rng.choice([[], {}, ()])  # default-encoded leaf, empties
    n = rng.randint(0, 5)
    if kind < 0.78:
        items = [_random_value(rng, depth + 1) for _ in range(n)]
        return tuple(items) if rng.random() < 0.2 else items
    return {rng.choice(_KEYS): _random_value(rng, depth + 1) for _ in range(n)}


@pytest.mark.parametrize(
    "obj",
    [
        {},
        [],
        1,
        "s",
        None,
        {"a": []},
        {"a": {}},
        [[]],
        [{}],
        {"rows": [{"d": 1.0, "w": "x"}, {"d": None, "w": "y"}]},
        {"m": "glove", "audits": [{"p": 0.5, "l": ["X:a", "Y:b"], "rows": [{"k": True}]}]},
        {3: "int key", 2.5: "float key", True: "bool key", None: "none key"},
        [Path("/a/b"), {"p": Path("c")}],
        (1, (2, (3,))),
    ],
)
def test_indented_json_is_json_dumps_indent_2(obj):
    assert indented_json(obj) == _reference_json(obj)


def test_indented_json_random_structures():
    rng = random.Random(20261207)
    for _ in range(3000):
        obj = _random_value(rng, 0)
        assert indented_json(obj) == _reference_json(obj)


def test_indented_json_refuses_what_json_refuses():
    for bad in ({"x": math.nan}, [math.inf], {"x": [1, {"y": -math.inf}]}):
        with pytest.raises(ValueError):
            _reference_json(bad)
        with pytest.raises(ValueError):
            indented_json(bad)
    for bad in ({"x": object()}, [{1, 2}], {(1, 2): 3}):
        with pytest.raises(TypeError):
            _reference_json(bad)
        with pytest.raises(TypeError):
            indented_json(bad)


_UNCLEAN = [
    math.nan,
    math.inf,
    -math.inf,
    np.float64(math.nan),
    np.float32(1.5),
    np.int64(7),
    np.bool_(True),
    np.array([1.0, math.nan]),
    np.array([[1, 2], [3, 4]]),
    np.array([]),
    np.float64(2.0),
]


def _random_unclean(rng: random.Random, depth: int):
    if depth < 4 and rng.random() < 0.5:
        n = rng.randint(0, 5)
        if rng.random() < 0.5:
            return [_random_unclean(rng, depth + 1) for _ in range(n)]
        return {rng.choice(["a", "b", "c", "d", 5]): _random_unclean(rng, depth + 1) for _ in range(n)}
    return rng.choice(_UNCLEAN + _SCALARS)


def test_indented_json_clean_values_is_dumps_of_clean():
    # clean() (NaN/inf to null, numpy to Python) then the standard encoder: what write_json wrote before
    rng = random.Random(43)
    for _ in range(3000):
        obj = _random_unclean(rng, 0)
        assert indented_json(obj, clean_values=True) == _reference_json(clean(obj))
    rows = [{"d": 1.0, "p": math.nan, "w": "x"}, {"d": 2.0, "p": 0.5, "w": "y"}]
    assert indented_json({"rows": rows}, clean_values=True) == _reference_json(clean({"rows": rows}))


def test_write_json_text_unchanged(tmp_path):
    obj = {"d": math.nan, "v": np.array([1.5, np.inf]), "n": np.int64(3), "rows": [{"a": 1, "b": [0.5, None]}]}
    write_json(tmp_path / "x.json", obj)
    assert (tmp_path / "x.json").read_text("utf-8") == _reference_json(clean(obj)) + "\n"
    write_json(tmp_path / "c.json", obj, compact=True)
    expected = json.dumps(clean(obj), separators=(",", ":"), allow_nan=False) + "\n"
    assert (tmp_path / "c.json").read_text("utf-8") == expected


def _reference_csv(records):
    # the documented rules, by csv.DictWriter: first-seen field order, missing and None cells empty, lists joined
    # by ';', text cells through csv_text, a row with a CR in a text cell quoted in full
    fields = []
    for rec in records:
        fields += [k for k in rec if k not in fields]

    def cell(v):
        if isinstance(v, (list, tuple)):
            v = ";".join(str(x) for x in v)
        return "" if v is None else csv_text(v) if isinstance(v, str) else v

    buf = io.StringIO()
    plain = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    quoted = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n", quoting=csv.QUOTE_ALL)
    plain.writerow({k: csv_text(str(k)) for k in fields})
    for rec in records:
        row = {k: cell(rec.get(k)) for k in fields}
        (quoted if any(isinstance(v, str) and "\r" in v for v in row.values()) else plain).writerow(row)
    return buf.getvalue()


def test_records_to_csv_matches_the_rules():
    records = [
        {"test": "W1", "d": 1.25, "p": 0.5, "n": 3, "flag": True, "words": ["a", "b"], "note": None},
        {"test": "=cmd", "d": math.nan, "extra": "-x", "n": np.int64(4), "words": ("c",), "flag": np.bool_(False)},
        {"test": "cr\rrow", "d": np.float64(0.1), "note": 'line\nbreak, comma "q"'},
        {"-lead": "-2.5", "test": "@at", "d": -0.0, "note": "+plus"},
        {"test": _Level.ONE, "d": 1e-300},
    ]
    assert records_to_csv(records) == _reference_csv(records)
    assert records_to_csv([]) == ""
    header_cr = [{"a\rb": 1, "c": "x"}, {"c": "y\rz"}, {"c": "plain"}]  # a CR in a field name, then in a cell
    assert records_to_csv(header_cr) == _reference_csv(header_cr)
    assert records_to_csv(header_cr[:1]) == _reference_csv(header_cr[:1])


def test_records_to_csv_random_rows():
    rng = random.Random(7)
    values = [1, 2.5, -0.0, True, None, "x", "=f", "a\rb", "-1e3", ["p", 2], (), np.float64(3.5), np.int32(2)]
    for _ in range(200):
        keys = ["k1", "k2", "k3", "=k4", "k5"]
        records = [{k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, 5))} for _ in range(6)]
        records = [r for r in records if r] or [{"k1": 1}]
        assert records_to_csv(records) == _reference_csv(records)
