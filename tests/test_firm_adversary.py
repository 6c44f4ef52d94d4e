"""Adversary of the Firm levels (issue 45, item 1): the bounds at R other than 100, impossible counts, the raw
record's level, and the benchmark's level check able to fail.

Expected levels come from integer arithmetic on the stated thresholds (q = (R - k)/R <= 1/20 exactly when
20 (R - k) <= R; <= 1/4 exactly when 4 (R - k) <= R), never from the function under test.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from isoeat._errors import ConfigError
from isoeat.labels import firm_level, holds_mark


def _level(k: int, r: int) -> str:
    return "firm" if 20 * (r - k) <= r else "borderline" if 4 * (r - k) <= r else "unstable"


@pytest.mark.parametrize("r", [1, 2, 3, 4, 19, 20, 21, 37, 40, 99, 100, 101, 1000])
def test_every_count_at_every_r_matches_the_integer_rule(r: int) -> None:
    assert [firm_level(k, r) for k in range(r + 1)] == [_level(k, r) for k in range(r + 1)]


def test_bounds_at_r_20_and_37() -> None:
    # 19/20: q = 1/20 exactly (firm); 15/20: q = 1/4 exactly (borderline); 14/20: 0.30 (unstable)
    assert [holds_mark(k, 20) for k in (19, 18, 15, 14)] == [
        "firm",
        "borderline (18/20)",
        "borderline (15/20)",
        "unstable (14/20)",
    ]
    # 37: 36/37 q = 0.027 firm, 35/37 q = 0.054 borderline, 28/37 q = 0.243 borderline, 27/37 q = 0.270 unstable
    assert [holds_mark(k, 37) for k in (36, 35, 28, 27)] == [
        "firm",
        "borderline (35/37)",
        "borderline (28/37)",
        "unstable (27/37)",
    ]


@pytest.mark.parametrize("same, total", [(-1, 100), (101, 100), (5, -3)])
def test_impossible_counts_are_refused_in_one_line(same: int, total: int) -> None:
    """k agreeing of R redraws is 0..R; -1 of 100 raised StopIteration and 101 of 100 read as firm."""
    with pytest.raises(ConfigError, match=rf"{same}.*{total}"):
        holds_mark(same, total) if total > 0 else firm_level(same, total)


def test_raw_records_carry_no_level(glove) -> None:
    import contextlib
    import io
    import json

    from isoeat.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["run", "--tests", "W3", "--format", "json"]) == 0
    rows = {r["calibration"]: r for r in json.loads(out.getvalue())}
    assert rows["none"]["firm"] is None and rows["none"]["replicate_share"] is None
    same, total = (int(x) for x in rows["zca"]["replicate_share"].split("/"))
    assert rows["zca"]["firm"] == _level(same, total)


def _bench_module():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "stability.py"
    import sys

    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location("bench_stability_adv", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_benchmark_level_check_can_fail() -> None:
    """Synthetic pairs: 'firm' calls that flip 30% of the time over 40 pairs on 4 tests lie wholly above the
    band [0, 0.05]; the check must report the miss (and pass the same pairs at 1% flips)."""
    bench = _bench_module()
    tests = ["W1", "W2", "W3", "W4"]

    def figures(flip: float) -> dict:
        pairs = [{"test": tests[i % 4], "level": "firm", "flip": flip + 0.01 * ((i % 3) - 1)} for i in range(40)]
        return {"levels": {2000: {name: bench.level_stats(pairs, name) for name in ("firm", "borderline", "unstable")}}}

    bad = [r for r in bench.level_rows(figures(0.30)) if "firm" in r["what"] and not r["ok"]]
    good = [r for r in bench.level_rows(figures(0.01)) if not r["ok"]]
    assert bad and not good


def test_reproduce_records_carry_the_level_as_run_does(tmp_path, monkeypatch, capsys) -> None:
    """paper_comparison.csv's ``firm`` was the printed cell ("borderline (94/100)") where every other record's
    ``firm`` is the level ("borderline") beside ``replicate_share``; now the same two columns as comparison.json
    (tests/test_one_route.py's small mapped GloVe stand-in)."""
    import csv
    import json

    import numpy as np

    from isoeat.cli import main
    from isoeat.wordsets import get_test

    words: list[str] = []
    for i in range(1, 11):
        t = get_test(f"W{i}")
        for ws in (t.X, t.Y, t.A, t.B):
            words += [w for w in ws.words if w not in words]
    words += [f"filler{i}" for i in range(200)]
    vecs = np.random.default_rng(7).normal(size=(len(words), 12))
    (tmp_path / "g.txt").write_text(
        "".join(w + " " + " ".join(f"{x:.6f}" for x in v) + "\n" for w, v in zip(words, vecs))
    )
    monkeypatch.chdir(tmp_path)
    argv = ["reproduce", "--model", "glove-6b-100d=glove:g.txt", "--models", "GloVe", "--quick", "--no-extras"]
    assert main([*argv, "--offline", "--out", "rep"]) == 0
    capsys.readouterr()
    comp = {
        r["test"]: r
        for r in json.loads((tmp_path / "rep" / "comparison.json").read_text())
        if r["calibration"] == "zca"
    }
    with open(tmp_path / "rep" / "paper_comparison.csv", newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    assert rows
    for r in rows:
        same, total = (int(x) for x in r["replicate_share"].split("/"))
        assert r["firm"] == _level(same, total) == comp[r["test"]]["firm"]
        assert r["replicate_share"] == comp[r["test"]]["replicate_share"]


@pytest.mark.parametrize(
    "row, marks",
    [
        ({"class_holds": True, "firm": "firm"}, 0),
        ({"class_holds": None}, 0),
        ({}, 0),
        ({"class_holds": False, "firm": "borderline"}, 1),
        ({"class_holds": False, "firm": "unstable"}, 2),
        ({"class_holds": False}, 1),  # a folder written before the levels: not firm, level unknown
        ({"class_holds": "False", "firm": "unstable"}, 2),  # read back from comparison.csv
    ],
)
def test_table_a1_marks_borderline_and_unstable_apart(row: dict, marks: int) -> None:
    """Table A1 lumped borderline (94/100) and unstable (10/100) under one dagger; the level is in the record."""
    from isoeat.reporting.paper_tables import _daggers

    assert _daggers(row) == marks
