"""Intervals on d where users meet them: the CLI tables, JSON records, SEAT and the run folder.

The numbers themselves are checked from scratch in tests/test_intervals.py; here every
printed interval must name its estimand and method, flagged intervals must be marked,
and a method that does not estimate the requested estimand must be refused in one line.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

import isoeat
from isoeat.cli import main
from isoeat.stats.weat import cosine_matrix


def _noncentral_t_by_root(s_x, s_y, level=0.95):
    """Limits on theta from brentq on scipy.stats.nct (independent of isoeat's nctdtrinc route)."""
    from scipy.optimize import brentq

    nx, ny = len(s_x), len(s_y)
    sw = math.sqrt(((nx - 1) * np.var(s_x, ddof=1) + (ny - 1) * np.var(s_y, ddof=1)) / (nx + ny - 2))
    scale = math.sqrt(1 / nx + 1 / ny)
    t = (np.mean(s_x) - np.mean(s_y)) / sw / scale
    df = nx + ny - 2
    a = 1 - level
    lo = brentq(lambda lam: stats.nct.cdf(t, df, lam) - (1 - a / 2), t - 30, t + 30)
    hi = brentq(lambda lam: stats.nct.cdf(t, df, lam) - a / 2, t - 30, t + 30)
    share = nx / (nx + ny)
    return tuple(lam * scale / math.sqrt(1 + share * (1 - share) * (lam * scale) ** 2) for lam in (lo, hi))


def test_weat_cli_prints_the_interval_with_its_estimand(glove, capsys):
    assert main(["weat", "--test", "W6", "--ci"]) == 0
    out = capsys.readouterr().out
    assert "CI on d" in out and "estimand given-attributes (noncentral-t)" in out
    t = isoeat.get_test("W6")
    X, Y, A, B = (glove.lookup(ws.words).vectors for ws in (t.X, t.Y, t.A, t.B))
    s = [cosine_matrix(M, A).mean(1) - cosine_matrix(M, B).mean(1) for M in (X, Y)]
    lo, hi = _noncentral_t_by_root(*s)
    assert f"[{lo:.2f}, {hi:.2f}]" in out


def test_weat_cli_json_records_carry_estimand_estimate_and_warning(capsys):
    assert main(["weat", "--test", "W6", "--calibration", "none", "--ci", "--ci-estimand", "populations",
                 "--format", "json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert rec["effect_size_ci_estimand"] == "populations" and rec["effect_size_ci_method"] == "jackknife"
    # 8 + 8 words with 8 + 8 attributes lies below the sizes the coverage study established
    assert "established only from 16 target and 25 attribute words" in rec["effect_size_ci_warning"]
    assert rec["effect_size_ci_estimate"] > 0 and rec["effect_size_ci_low"] < rec["effect_size_ci_high"]


def test_flagged_interval_is_marked_in_the_table(capsys):
    assert main(["weat", "--test", "W6", "--ci", "--ci-method", "percentile", "--bootstrap", "1000"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("W6"))
    assert "]!" in row
    assert "! the percentile interval (given-attributes) is not the default (noncentral-t" in out
    assert "measured coverage 0." in out and "at 8 target and 8 attribute words per set" in out


@pytest.mark.parametrize("argv, words", [
    (["weat", "--test", "W6", "--ci", "--ci-method", "jackknife"], "does not estimate 'given-attributes'"),
    (["weat", "--test", "W6", "--ci", "--ci-estimand", "populations", "--ci-method", "noncentral-t"],
     "does not estimate 'populations'"),
    (["scweat", "--words", "nurse", "--attributes", "W6", "--ci", "--ci-estimand", "populations"],
     "--ci-estimand"),
])
def test_a_method_that_does_not_estimate_the_estimand_is_one_line(argv, words, capsys):
    assert main(argv) != 0
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "Traceback" not in err


def test_run_table_has_intervals_for_both_spaces(capsys):
    assert main(["run", "--tests", "W6,W9", "--ci"]) == 0
    out = capsys.readouterr().out
    assert "CI_R" in out and "CI_W" in out and "estimand given-attributes (noncentral-t)" in out
    assert "!" not in "".join(line for line in out.splitlines() if line.startswith(("W6", "W9")))


def test_scweat_cli_interval_from_the_words_cosines(glove, capsys):
    assert main(["scweat", "--words", "engineer", "--attributes", "W6", "--ci"]) == 0
    out = capsys.readouterr().out
    t = isoeat.get_test("W6")
    w = glove.lookup(["engineer"]).vectors
    ca = cosine_matrix(w, glove.lookup(t.A.words).vectors)[0]
    cb = cosine_matrix(w, glove.lookup(t.B.words).vectors)[0]
    lo, hi = _noncentral_t_by_root(ca, cb)
    assert f"[{lo:.2f}, {hi:.2f}]" in out and "estimand given-word" in out


def test_seat_table_shows_the_interval():
    from isoeat.commands.seat import _table
    from isoeat.stats.seat import seat
    from test_result_surface import ToyEncoder

    res = seat(ToyEncoder(), "W6", templates=["This is {}.", "{} is here."], rng=9, ci=True)
    assert all(r.effect_size_ci is not None and r.effect_size_ci.estimand == "given-attributes"
               for r in res.results)
    text = _table(res)
    assert "CI on d" in text and "estimand given-attributes (noncentral-t)" in text


def test_run_folder_cells_carry_the_interval(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--tests", "W6", "--ci", "--ci-estimand", "populations", "--out", str(out)]) == 0
    capsys.readouterr()
    from isoeat.experiments.results import load_experiment

    rows = load_experiment(out).weat
    assert rows and all(r["effect_size_ci_estimand"] == "populations" for r in rows)
    assert all(r["effect_size_ci_method"] == "jackknife" for r in rows)


def test_populations_jackknife_is_refused_over_its_memory_budget(monkeypatch):
    from isoeat.stats import intervals as iv
    from isoeat.stats.weat import weat_from_vectors

    g = np.random.default_rng(0)
    X, Y, A, B = (g.normal(size=(10, 6)) + s for s in (0.5, -0.5, 0.2, -0.2))
    # 48 * (10*10*10 + 10*10*10) = 96,000 bytes: refused one byte below, computed at exactly the budget
    monkeypatch.setattr(iv, "JACKKNIFE_MEMORY", 96_000 - 1)
    r = weat_from_vectors(X, Y, A, B, ci=True, ci_estimand="populations", rng=0)
    assert math.isnan(r.effect_size_ci.low) and "over its" in r.effect_size_ci.note
    monkeypatch.setattr(iv, "JACKKNIFE_MEMORY", 96_000)
    r = weat_from_vectors(X, Y, A, B, ci=True, ci_estimand="populations", rng=0)
    assert "over its" not in r.effect_size_ci.note  # computed (or refused for another reason)


def test_footer_prints_the_level_as_given():
    from isoeat.reporting.tables import ci_footer
    from isoeat.stats.intervals import ConfidenceInterval

    ci = ConfidenceInterval(low=0.1, high=0.9, level=0.999, method="noncentral-t")
    assert ci_footer([ci], ["W6"]).startswith("CI: 99.9% interval")


# --- interval options without an interval: refused, not ignored -------------------------------------------


@pytest.mark.parametrize("kwargs, named", [
    ({"ci_level": 0.9}, "ci_level"),
    ({"ci_level": 0.95 + 1e-12}, "ci_level"),          # just beside the default is still a given value
    ({"ci_method": "noncentral-t"}, "ci_method"),
    ({"ci_estimand": "populations"}, "ci_estimand"),
    ({"resample_attributes": True}, "resample-attributes"),
])
def test_interval_options_without_an_interval_are_refused(kwargs, named):
    from isoeat.stats.intervals import check_interval_options

    args = {"ci": False, "bootstrap": 0, "ci_method": "auto", "ci_level": 0.95, "ci_estimand": "given-attributes"}
    args.update(kwargs)
    with pytest.raises(isoeat.ConfigError, match=named):
        check_interval_options(**args)
    assert check_interval_options(**{**args, "ci": True}) is not None          # with the interval: accepted
    if kwargs.get("ci_method") is None:                                        # bootstrap=N also asks for one
        assert check_interval_options(**{**args, "bootstrap": 10_000, "ci_method": "percentile"}) is not None


def test_default_interval_options_without_an_interval_are_silent():
    from isoeat.stats.intervals import check_interval_options

    assert check_interval_options(False, 0, "auto", 0.95, "given-attributes") is None
    assert check_interval_options(False, 0, "auto", 0.95, "given-word") is None     # SC-WEAT's one estimand


def test_cli_names_the_unused_interval_option(capsys):
    assert main(["weat", "--test", "W6", "--ci-level", "0.9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--ci-level" in err and "--ci" in err
