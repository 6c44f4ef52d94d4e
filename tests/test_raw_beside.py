"""``weat``, ``scweat`` and ``seat`` print the raw space beside the calibrated one (issue 33, item 2).

Each space's numbers are those of the library called for that one space (``isoeat.weat`` / ``sc_weat`` with
``calibration=None`` and with a ZCA fitted on the same reference sample, ``rng`` the command's seed) — what
``--calibration none`` and ``--calibration zca`` printed before — and the change class follows from the two
p-values by the rule of the paper (significance at alpha, strict), computed here from scratch.
"""

from __future__ import annotations

import json

import pytest

from isoeat.cli import main


@pytest.fixture(scope="module")
def zca(glove):
    from isoeat.calibration import fit_calibrator

    return fit_calibrator(glove, "zca", n_reference=20_000)


_KEYS = ("effect_size", "statistic", "p_value", "p_method", "n_permutations", "count", "p_ci_low", "p_ci_high",
         "seed", "calibration", "n_a", "n_b")


def _numbers(rec):
    return {k: rec[k] for k in _KEYS}


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_weat_raw_row_and_calibrated_row_are_each_space_alone(capsys, glove, zca):
    from isoeat.stats.weat import weat

    recs = _json(capsys, ["weat", "--test", "W6,W8", "--reference-size", "20000", "--seed", "3", "--format", "json"])
    assert [(r["test"], r["calibration"]) for r in recs] == [("W6", "none"), ("W6", "zca"), ("W8", "none"),
                                                             ("W8", "zca")]
    for rec in recs:
        want = weat(glove, rec["test"], calibration=None if rec["calibration"] == "none" else zca, rng=3).to_dict()
        assert _numbers(rec) == _numbers(want)
    # --calibration none: the raw space only, the same numbers as the raw rows above
    raw = _json(capsys, ["weat", "--test", "W6,W8", "--calibration", "none", "--seed", "3", "--format", "json"])
    assert raw == [recs[0], recs[2]]


def test_weat_table_states_the_change_class(capsys, glove):
    assert main(["weat", "--test", "W6,W8", "--reference-size", "20000", "--alpha", "0.05"]) == 0
    out = capsys.readouterr().out
    recs = _json(capsys, ["weat", "--test", "W6,W8", "--reference-size", "20000", "--format", "json"])
    lines = out.splitlines()
    start = lines.index("Raw vs zca:")
    for test in ("W6", "W8"):
        raw, cal = [r for r in recs if r["test"] == test]
        sig_r, sig_c = raw["p_value"] < 0.05, cal["p_value"] < 0.05  # the paper's rule, strict
        want = "S" if sig_r == sig_c else ("D" if sig_r else "E")
        row = next(line for line in lines[start:] if line.startswith(test))
        assert row.split()[4] == want, row
        dd = f"{cal['effect_size'] - raw['effect_size']:+.2f}"
        assert row.split()[3] == ("0.00" if dd in ("+0.00", "-0.00") else dd)


def test_change_class_at_its_boundary(capsys):
    """alpha equal to the raw p: not significant (strict), so a raw p = alpha against a calibrated p < alpha is
    Emerging, and the same alpha nudged above the raw p makes it Stable."""
    from isoeat.commands._spaces import change_lines

    raw, cal = {"effect_size": 0.9, "p_value": 0.04}, {"effect_size": 1.0, "p_value": 0.01}
    assert change_lines([("T", raw, cal)], "zca", 0.04)[2].splitlines()[-1].split()[4] == "E"
    assert change_lines([("T", raw, cal)], "zca", 0.0400001)[2].splitlines()[-1].split()[4] == "S"
    assert change_lines([("T", cal, raw)], "zca", 0.04)[2].splitlines()[-1].split()[4] == "D"


def test_scweat_raw_beside_calibrated(capsys, glove, zca):
    from isoeat.stats.weat import sc_weat
    from isoeat.wordsets import get_test

    recs = _json(capsys, ["scweat", "--words", "nurse,engineer", "--attributes", "W7", "--reference-size", "20000",
                          "--format", "json"])
    assert [(r["word"], r["calibration"]) for r in recs] == [("nurse", "none"), ("nurse", "zca"),
                                                             ("engineer", "none"), ("engineer", "zca")]
    t = get_test("W7")
    for space, cal in (("none", None), ("zca", zca)):
        want = [_numbers(r.to_dict()) for r in sc_weat(glove, "nurse,engineer", t, calibration=cal, rng=0)]
        assert [_numbers(r) for r in recs if r["calibration"] == space] == want
    assert main(["scweat", "--words", "nurse,engineer", "--attributes", "W7", "--reference-size", "20000"]) == 0
    assert "Raw vs zca:" in capsys.readouterr().out
