"""Hostile k-group tests (issue 42 item 4, adversary): names that print alike, CLI errors, CSV escaping.

Expected values are hand examples: what a reader of the table would see of two names (Unicode NFKC, invisible
format characters, blanks, case), and the CSV rule of the house (a cell starting with ``=``, ``+``, ``-`` or
``@`` is written with a leading ``'`` so that a spreadsheet does not run it as a formula).
"""

from __future__ import annotations

import contextlib
import csv
import io

import pytest

import isoeat
from isoeat import ConfigError
from isoeat.cli import main

ATTR = (isoeat.WordSet("p", ("love", "peace")), isoeat.WordSet("u", ("hate", "war")))


def _groups(second: str) -> tuple:
    return (isoeat.WordSet("flowers", ("rose", "tulip")), isoeat.WordSet(second, ("ant", "bee")))


@pytest.mark.parametrize(
    "twin",
    [
        "Flowers",  # held: case
        "\ufb02owers",  # held: the 'fl' ligature (its casefold is 'flowers')
        "\uff46lowers",  # break: fullwidth f (NFKC: f)
        "flowers\u200b",  # break: a zero-width space (a format character, invisible)
        "Flowers ",  # break: a trailing blank
        "flo wers".replace(" ", "") + "\u2060",  # break: a word joiner (invisible)
    ],
)
def test_two_group_names_that_print_alike_are_refused(twin):
    with pytest.raises(ConfigError, match="print alike"):
        isoeat.NGroupTest("t", "Custom", _groups(twin), ATTR)


def test_distinct_names_are_kept():
    """Held: names that differ in a letter are two groups (flowers / flower)."""
    t = isoeat.NGroupTest("t", "Custom", _groups("flower"), ATTR)
    assert [g.name for g in t.targets] == ["flowers", "flower"]


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(args)
        except SystemExit as e:
            rc = int(e.code or 0)
    return rc, out.getvalue(), err.getvalue()


def test_a_look_alike_group_name_in_a_file_is_one_line_exit_2(tmp_path):
    f = tmp_path / "t.yaml"
    f.write_text(
        'id: c\ntargets:\n  flowers: [rose, tulip]\n  "flowers\\u200b": [ant, bee]\n'
        "attributes:\n  p: [love, peace]\n  u: [hate, war]\n",
        encoding="utf-8",
    )
    rc, out, err = _cli(["ngroup", "--test", str(f), "--calibration", "none"])
    assert rc == 2 and "Traceback" not in err
    assert "'flowers' and 'flowers\\u200b', which print alike" in err and err.count("\n") == 1


def test_csv_escapes_group_names_that_start_a_formula(tmp_path):
    """Held: group, attribute and test names starting with =, +, -, @ are written with a leading quote."""
    f = tmp_path / "t.yaml"
    f.write_text(
        'id: "=cmd"\ntargets:\n  "=f": [rose, tulip]\n  "+i": [ant, bee]\n'
        'attributes:\n  "@p": [love, peace]\n  "-u": [hate, war]\n',
        encoding="utf-8",
    )
    rc, out, err = _cli(["ngroup", "--test", str(f), "--calibration", "none", "--statistics", "mac", "--format", "csv"])
    assert rc == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows[0]["test"] == "'=cmd" and rows[0]["groups"] == "'=f;+i" and rows[0]["attributes"] == "'@p;-u"


@pytest.mark.filterwarnings("ignore:zca. only 10 reference vectors")
def test_a_tiny_reference_is_marked_a_reduced_protocol(tmp_path):
    """Break: 'isoeat ngroup --reference-size 10' printed a calibrated column with no '! Reduced protocol' line
    (weat, scweat, metric print it: labels.protocol_departures, the reference the paper used is 100,000)."""
    rc, out, err = _cli(["ngroup", "--test", "examples/religion.yaml", "--reference-size", "10", "--statistics", "mac"])
    assert rc == 0, err
    assert out.splitlines()[-1].startswith("! Reduced protocol, not the paper's: reference 10 (the paper: 100,000)")


def test_sampled_p_with_few_permutations_is_marked_in_records():
    """--permutations 1000 with a Monte Carlo p: each record's protocol says so; an exact p needs none."""
    rc, out, err = _cli(
        [
            "ngroup",
            "--test",
            "examples/religion.yaml",
            "--permutations",
            "1000",
            "--calibration",
            "none",
            "--statistics",
            "same,mac",
            "--format",
            "csv",
        ]
    )
    assert rc == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["p_method"] for r in rows} == {"monte-carlo", "none"}
    assert all(r["protocol"] == "reduced: 1,000 permutations (the paper: 100,000)" for r in rows)
    rc, out, err = _cli(
        [
            "ngroup",
            "--test",
            "W6",
            "--permutations",
            "1000",
            "--calibration",
            "none",
            "--statistics",
            "gweat",
            "--format",
            "csv",
        ]
    )
    row = next(csv.DictReader(io.StringIO(out)))
    assert rc == 0 and row["p_method"] == "exact" and row["protocol"] == "paper"


def test_exact_monte_carlo_boundary_at_n_permutations():
    """Held: 'auto' counts every assignment when their number (6!/(2!2!2!) = 90) is at most n_permutations, and
    samples at one fewer; the exact p equals a from-scratch enumeration of the distinct assignments."""
    import itertools

    import numpy as np

    from isoeat.stats.ngroup import group_permutation_test

    values = np.array([0.9, 0.1, 0.5, 0.3, 0.7, 0.2])

    def stat(L):  # mean of group 0 minus mean of group 2
        L = np.atleast_2d(L)
        return ((L == 0) * values).sum(1) / 2 - ((L == 2) * values).sum(1) / 2

    observed = stat(np.array([0, 0, 1, 1, 2, 2]))[0]
    labellings = {p for p in itertools.permutations([0, 0, 1, 1, 2, 2])}
    assert len(labellings) == 90
    want = sum(stat(np.array(p))[0] >= observed - 1e-9 for p in labellings) / 90
    exact = group_permutation_test(stat, [2, 2, 2], n_permutations=90, rng=0)
    sampled = group_permutation_test(stat, [2, 2, 2], n_permutations=89, rng=0)
    assert (exact.p_method, exact.n_assignments) == ("exact", 90)
    assert exact.p_value == pytest.approx(want, abs=1e-12)
    assert sampled.p_method == "monte-carlo" and sampled.n_permutations == 89


@pytest.mark.parametrize("role", ["targets", "attributes"])
def test_a_semicolon_in_a_group_name_is_refused(role):
    """Break: groups 'a;b', 'c', 'a' were written to CSV as 'a;b;c;a' (the ';' joins a record's list cells):
    four names for k = 3, and two of them 'a'."""
    bad = (isoeat.WordSet("a;b", ("rose", "tulip")), isoeat.WordSet("c", ("ant", "bee")))
    targets, attributes = (bad, ATTR) if role == "targets" else (_groups("insects"), bad)
    with pytest.raises(ConfigError, match=f"{role}: group name 'a;b' holds ';'"):
        isoeat.NGroupTest("t", "Custom", targets, attributes)
