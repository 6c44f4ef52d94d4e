"""The levels of the Firm mark (issue 45, item 1): firm / borderline / unstable by the estimated flip probability,
each at its threshold, the footer's two lines, the level in JSON and CSV records, the benchmark's check.

Expected levels are derived here from the stated thresholds in integer arithmetic (q = 1 - same/total <= 5%
exactly when 20 (total - same) <= total; <= 25% exactly when 4 (total - same) <= total), never from the
function under test.
"""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import io
import json
import re
from pathlib import Path

import pytest

from isoeat.labels import (
    FIRM_LEVELS,
    FIRM_MEANING,
    STABILITY_RULE,
    STABILITY_TRACK_RECORD,
    call_holds,
    firm_level,
    flip_estimate,
    holds_mark,
)

ROOT = Path(__file__).resolve().parents[1]


def _expected(same: int, total: int) -> str:
    """The level from the stated thresholds, in integers (5% = 1/20, 25% = 1/4)."""
    miss = total - same
    return "firm" if 20 * miss <= total else "borderline" if 4 * miss <= total else "unstable"


# ---------------------------------------------------------------------------- each level at its threshold

@pytest.mark.parametrize("same,total,level", [
    (95, 100, "firm"), (94, 100, "borderline"),  # q = 5% exactly: firm; one more disagreeing: borderline
    (75, 100, "borderline"), (74, 100, "unstable"),  # q = 25% exactly: borderline
    (19, 20, "firm"), (18, 20, "borderline"), (15, 20, "borderline"), (14, 20, "unstable"),
    (57, 60, "firm"), (56, 60, "borderline"),  # 1 - 57/60 is 0.05000000000000004 in floats: exact here
    (45, 60, "borderline"), (44, 60, "unstable"),
    (100, 100, "firm"), (0, 100, "unstable"), (1, 1, "firm"), (0, 1, "unstable"),
])
def test_level_at_each_threshold(same: int, total: int, level: str) -> None:
    assert _expected(same, total) == level  # the table above is the stated rule
    assert firm_level(same, total) == level


def test_levels_stated_as_data() -> None:
    assert FIRM_LEVELS == (("firm", 0.05), ("borderline", 0.25), ("unstable", 1.0))
    assert set(FIRM_MEANING) == {name for name, _ in FIRM_LEVELS}
    assert FIRM_MEANING["firm"][1] == 0.05 and FIRM_MEANING["borderline"][1] == 0.25
    assert FIRM_MEANING["unstable"][0] == 0.25


def test_every_share_up_to_200_redraws() -> None:
    for total in range(1, 201):
        for same in range(total + 1):
            level = firm_level(same, total)
            assert level == _expected(same, total), (same, total)
            assert (level == "firm") is call_holds(same, total), (same, total)  # the one rule, two readings


def test_flip_estimate_and_no_redraws() -> None:
    assert flip_estimate(95, 100) == pytest.approx(0.05) and flip_estimate(100, 100) == 0.0
    assert flip_estimate(0, 0) != flip_estimate(0, 0)  # NaN
    assert firm_level(0, 0) == "" and holds_mark(None, None) == "-" and holds_mark(5, 0) == "-"


@pytest.mark.parametrize("same,total,cell", [
    (95, 100, "firm"), (94, 100, "borderline (94/100)"), (75, 100, "borderline (75/100)"),
    (74, 100, "unstable (74/100)"), (19, 20, "firm"), (14, 20, "unstable (14/20)"),
])
def test_firm_cell(same: int, total: int, cell: str) -> None:
    assert holds_mark(same, total) == cell


# ---------------------------------------------------------------------------- the footer

def _comparison(same: list[int]):
    import numpy as np

    from isoeat.experiments.compare import Comparison, ComparisonRow
    from isoeat.stats.weat import weat_from_vectors

    rng = np.random.default_rng(0)
    res = weat_from_vectors(*(rng.normal(size=(6, 4)) for _ in range(4)), rng=0)
    rows = tuple(ComparisonRow(test=f"T{i}", bias_type="Toy", raw=res, calibrated=res, change="Stable",
                               delta_d=0.0, large_shift=False, sign_reversal=False, replicates_same=k,
                               replicates=100) for i, k in enumerate(same))
    meta = {"reference_replicates": 100, "reference_replicate_shards": 100}
    return Comparison(model="toy", calibration="zca", alpha=0.05, rows=rows, calibrator_metadata=meta)


def test_footer_is_two_lines_with_every_level_and_both_sides_of_the_record() -> None:
    from isoeat.reporting.tables import comparison_table

    text = comparison_table(_comparison([95, 94, 74]))
    lines = text.splitlines()
    cells = {line.split()[0]: line for line in lines if line.startswith(("T0 ", "T1 ", "T2 "))}
    assert " firm " in cells["T0"] and "borderline (94/100)" in cells["T1"] and "unstable (74/100)" in cells["T2"]
    i = next(k for k, line in enumerate(lines) if line.startswith("Firm: "))
    first, second = lines[i], lines[i + 1]
    assert STABILITY_RULE.count("\n") == 1  # two lines, no more
    for said in ("100 redraws", "100 shards", "firm <= 5%", "borderline (k/R agree) <= 25%", "unstable (k/R) above"):
        assert said in first, said
    assert STABILITY_TRACK_RECORD in first
    # the record quotes every level at both sizes (both sides of the rule: firm and not firm)
    for level in ("firm", "borderline", "unstable"):
        assert re.search(rf"{level} in \d+(\.\d)?% / \d+(\.\d)?%", STABILITY_TRACK_RECORD), level
    assert "2,000 / 5,000 words" in STABILITY_TRACK_RECORD
    assert second.startswith("Firm asks whether a fresh draw") and "'isoeat sensitivity'" in second
    assert not lines[i + 2].startswith("Firm") if i + 2 < len(lines) else True


def test_record_quotes_rates_inside_each_levels_band() -> None:
    """The rates the footer quotes do not contradict what each level claims (FIRM_MEANING)."""
    for level, (lo, hi) in FIRM_MEANING.items():
        m = re.search(rf"{level} in (\d+(?:\.\d)?)% / (\d+(?:\.\d)?)%", STABILITY_TRACK_RECORD)
        assert m is not None, level
        for rate in (float(m.group(1)) / 100, float(m.group(2)) / 100):
            assert lo <= rate <= hi, (level, rate)


# ---------------------------------------------------------------------------- the mark in JSON and CSV

def _cli(argv: list[str]) -> tuple[int, str, str]:
    from isoeat.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = int(exc.code or 0)
    return rc, out.getvalue(), err.getvalue()


def test_level_in_json_and_csv_records(glove, tmp_path: Path) -> None:
    rc, out, err = _cli(["run", "--tests", "W6,W9", "--reference-size", "2000", "--format", "json"])
    assert rc == 0, err
    recs = json.loads(out)
    cal = [r for r in recs if r["calibration"] == "zca"]
    assert len(cal) == 2
    for r in cal:
        same, total = map(int, r["replicate_share"].split("/"))
        assert r["firm"] == _expected(same, total)
    assert all(r["firm"] is None for r in recs if r["calibration"] == "none")
    rc, out, err = _cli(["run", "--tests", "W6,W9", "--reference-size", "2000", "--format", "csv"])
    assert rc == 0, err
    rows = [r for r in csv.DictReader(io.StringIO(out)) if r["calibration"] == "zca"]
    assert [r["firm"] for r in rows] == [r["firm"] for r in cal]
    folder = tmp_path / "res"
    rc, _, err = _cli(["run", "--tests", "W6,W9", "--reference-size", "2000", "--out", str(folder), "-q"])
    assert rc == 0, err
    with open(folder / "comparison.csv", newline="") as f:
        comp = list(csv.DictReader(f))
    assert [r["firm"] for r in comp] == [r["firm"] for r in cal]


def test_no_level_without_redraws(glove) -> None:
    rc, out, err = _cli(["run", "--tests", "W6", "--stability", "off", "--format", "json"])
    assert rc == 0, err
    assert all("firm" not in r for r in json.loads(out))


# ---------------------------------------------------------------------------- the benchmark's check of the levels

def _bench():
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("stability_bench", ROOT / "benchmarks" / "stability.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("level,lo,hi,ok", [
    ("firm", 0.0, 0.05, True), ("firm", 0.0501, 0.08, False),  # interval wholly above 5%: contradicted
    ("borderline", 0.25, 0.3, True), ("borderline", 0.2501, 0.3, False),
    ("unstable", 0.1, 0.25, True), ("unstable", 0.1, 0.2499, False),  # wholly below 25%: contradicted
])
def test_benchmark_level_check_at_the_band_edges(level: str, lo: float, hi: float, ok: bool) -> None:
    mod = _bench()
    v = {"pairs": 10, "tests": ["W1"], "mean": (lo + hi) / 2, "lo": lo, "hi": hi}
    (row,) = mod.level_rows({"levels": {2000: {level: v}}})
    assert row["ok"] is ok


def test_benchmark_level_interval_by_hand() -> None:
    """Mean +- 1.96 SE, SE the larger of the clustered (by test) and the independent-pairs SE, by hand."""
    import math

    mod = _bench()
    pairs = [{"test": "A", "flip": 0.1, "level": "borderline"}, {"test": "A", "flip": 0.3, "level": "borderline"},
             {"test": "B", "flip": 0.0, "level": "borderline"}, {"test": "B", "flip": 0.2, "level": "firm"}]
    s = mod.level_stats(pairs, "borderline")
    m = 0.4 / 3
    pair_se = math.sqrt(sum((x - m) ** 2 for x in (0.1, 0.3, 0.0)) / 2 / 3)
    cluster_se = math.sqrt(2 / 1 * ((0.1 - m + 0.3 - m) ** 2 + (0.0 - m) ** 2)) / 3
    se = max(pair_se, cluster_se)
    assert s["pairs"] == 3 and s["tests"] == ["A", "B"] and s["mean"] == pytest.approx(m)
    assert s["lo"] == pytest.approx(max(0.0, m - 1.96 * se)) and s["hi"] == pytest.approx(m + 1.96 * se)
    assert mod.level_stats(pairs, "unstable")["pairs"] == 0
