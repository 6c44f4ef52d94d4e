"""Reduced protocols are marked (issue 32, item 3): under every table and in a column of every record.

The paper's protocol (§4.1, §4.3): 100,000 reference items, ε = 1e-3, 100,000 permutations where p is sampled,
20 contexts per word. Each bound is tested at its value and one step beyond.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from isoeat.cli import main
from isoeat.labels import protocol_departures, protocol_text


@pytest.mark.parametrize("kwargs, want", [
    (dict(reference_size=100_000, eps=1e-3, permutations=100_000, sampled=True, contexts_per_word=20), ()),
    (dict(reference_size=99_999), ("reference 99,999 (the paper: 100,000)",)),
    (dict(reference_size=100_001), ()),
    (dict(eps=1e-3 + 1e-12), ("epsilon 0.001000000001 (the paper: 0.001)",)),
    (dict(eps=0.01), ("epsilon 0.01 (the paper: 0.001)",)),
    (dict(eps=1e-3, eps_relative=True), ("relative epsilon (the paper: absolute 0.001)",)),
    (dict(permutations=99_999, sampled=True), ("99,999 permutations (the paper: 100,000)",)),
    (dict(permutations=10, sampled=False), ()),  # an exact or certified p needs no permutations
    (dict(contexts_per_word=19), ("19 contexts per word (the paper: 20)",)),
    (dict(contexts_per_word=20), ()),
    (dict(quick=True), ("--quick",)),
    (dict(), ()),
])
def test_departures_at_their_bounds(kwargs, want):
    assert protocol_departures(**kwargs) == want
    assert protocol_text(want) == ("paper" if not want else "reduced: " + "; ".join(want))


def _csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_a_reduced_reference_is_marked_under_the_table_and_in_every_record(capsys):
    assert main(["run", "--tests", "W6", "--reference-size", "2000"]) == 0
    out = capsys.readouterr().out
    assert "! Reduced protocol, not the paper's: reference 2,000 (the paper: 100,000)." in out
    assert main(["run", "--tests", "W6", "--reference-size", "2000", "--format", "csv"]) == 0
    rows = _csv(capsys.readouterr().out)
    assert {r["protocol"] for r in rows if r["calibration"] != "none"} == {"reduced: reference 2,000 (the paper: 100,000)"}
    # the raw space fits nothing: the paper's, as the run folder's own records say (issue 40: they must agree)
    assert {r["protocol"] for r in rows if r["calibration"] == "none"} == {"paper"}


def test_the_paper_protocol_says_so_and_prints_no_mark(capsys):
    assert main(["run", "--tests", "W6"]) == 0
    assert "Reduced protocol" not in capsys.readouterr().out
    assert main(["run", "--tests", "W6", "--format", "json"]) == 0
    assert {r["protocol"] for r in json.loads(capsys.readouterr().out)} == {"paper"}


def test_a_run_folder_marks_its_tidy_files(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--tests", "W6", "--reference-size", "3000", "--permutations", "500", "--method",
                 "monte-carlo", "--out", str(out)]) == 0
    capsys.readouterr()
    want = "reduced: reference 3,000 (the paper: 100,000); 500 permutations (the paper: 100,000)"
    for name in ("results.csv", "comparison.csv"):
        rows = _csv((out / name).read_text())
        assert rows and all(r["protocol"] == want for r in rows if r.get("calibration") != "none"), name
    raw = [r for r in _csv((out / "results.csv").read_text()) if r["calibration"] == "none"]
    assert {r["protocol"] for r in raw} == {"reduced: 500 permutations (the paper: 100,000)"}  # raw fits nothing


def test_compare_calibration_names_its_departures(glove):
    import isoeat

    comp = isoeat.compare_calibration(glove, ["W6"], n_reference=5000)
    assert comp.departures == ("reference 5,000 (the paper: 100,000)",)
    assert {r["protocol"] for r in comp.records() if r["calibration"] != "none"} == {
        "reduced: reference 5,000 (the paper: 100,000)"}
    assert {r["protocol"] for r in comp.records() if r["calibration"] == "none"} == {"paper"}  # raw fits nothing
    assert isoeat.compare_calibration(glove, ["W6"]).departures == ()
