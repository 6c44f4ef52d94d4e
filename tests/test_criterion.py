"""Criterion validity (issue 42, item 5): SC-WEAT d of each word against a real-world value, r and rho.

Expected values come from outside isoeat: the per-word SC-WEAT d from the GloVe files read with numpy
(``tests/_raw_glove.py``, Caliskan et al. 2017's definition), r and rho and their p from
``scipy.stats.pearsonr`` / ``spearmanr``, the intervals by hand (Fisher 1921: tanh(artanh r -+ 1.959964 /
sqrt(n-3)); Bonett & Wright 2000: SE sqrt((1 + rho^2/2) / (n-3))).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

import _raw_glove  # tests/_raw_glove.py (rootdir-relative import, as _w6_corpus)
import isoeat
from isoeat import CoverageError, DataFormatError, StaticVectors
from isoeat.cli import main
from isoeat.stats.criterion import MIN_WORDS, correlate
from isoeat.wordsets.criteria import Criterion, load_criterion

Z975 = 1.959963984540054  # the 0.975 quantile of the standard normal


@pytest.fixture(scope="module")
def raw_glove():
    return _raw_glove.raw_glove()


@pytest.fixture(scope="module")
def occupations_raw(glove):
    return isoeat.criterion_validity(glove, "occupations", "W7", rng=0)


def test_bundled_occupations_hold_their_provenance():
    c = load_criterion("occupations")
    assert len(c) == 40 and c.words[0] == "carpenter" and c.values[0] == 2.0
    assert dict(zip(c.words, c.values))["nurse"] == 90.0 and "construction worker" in c.words
    assert "Bureau of Labor Statistics" in c.source and "MIT" in c.licence and "Zhao" in c.citation


def test_r_and_rho_equal_scipy_on_effects_computed_from_scratch(occupations_raw, raw_glove):
    vec, _ = raw_glove
    t = isoeat.get_test("W7")
    crit = load_criterion("occupations")
    d = [_raw_glove.sc_weat_d(vec, w, t.A.words, t.B.words) for w in crit.words]
    res = occupations_raw
    assert res.words == crit.words and res.n == 40 and not res.missing and not res.undefined_words
    np.testing.assert_allclose(res.effect_sizes, d, atol=1e-9)
    pr, sr = stats.pearsonr(d, crit.values), stats.spearmanr(d, crit.values)
    assert res.pearson_r == pytest.approx(pr.statistic, abs=1e-9)
    assert res.spearman_rho == pytest.approx(sr.statistic, abs=1e-9)
    assert res.pearson_p == pytest.approx(pr.pvalue, rel=1e-6)
    assert res.spearman_p == pytest.approx(sr.pvalue, rel=1e-6)
    assert res.embedded == ("target:construction worker->mean-of-words",)


def test_intervals_are_fisher_z_by_hand(occupations_raw):
    r, rho, n = occupations_raw.pearson_r, occupations_raw.spearman_rho, occupations_raw.n
    se = 1 / math.sqrt(n - 3)
    assert occupations_raw.pearson_ci_low == pytest.approx(math.tanh(math.atanh(r) - Z975 * se), abs=1e-12)
    assert occupations_raw.pearson_ci_high == pytest.approx(math.tanh(math.atanh(r) + Z975 * se), abs=1e-12)
    se_bw = math.sqrt((1 + rho**2 / 2) / (n - 3))
    assert occupations_raw.spearman_ci_low == pytest.approx(math.tanh(math.atanh(rho) - Z975 * se_bw), abs=1e-12)
    assert occupations_raw.spearman_ci_high == pytest.approx(math.tanh(math.atanh(rho) + Z975 * se_bw), abs=1e-12)
    # another level: the 0.995 quantile, 2.5758293035489
    c = correlate(occupations_raw.effect_sizes, occupations_raw.values, ci_level=0.99)
    assert c["pearson_ci_low"] == pytest.approx(math.tanh(math.atanh(r) - 2.5758293035489004 * se), abs=1e-12)


def test_boundaries_three_words_and_fewer():
    x, y = [0.1, 0.5, 0.2], [3.0, 1.0, 7.0]
    c = correlate(x, y)  # n = 3 = MIN_WORDS: r is computed; its interval is all of [-1, 1] (SE infinite)
    assert MIN_WORDS == 3 and c["pearson_r"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert (c["pearson_ci_low"], c["pearson_ci_high"]) == (-1.0, 1.0)
    assert c["pearson_p"] == pytest.approx(stats.pearsonr(x, y).pvalue, rel=1e-9)
    with pytest.raises(CoverageError, match=r"^criterion validity needs at least 3 words .* got 2$"):
        correlate(x[:2], y[:2])
    c4 = correlate([0.1, 0.5, 0.2, 0.4], [3.0, 1.0, 7.0, 2.0])  # n = 4: SE 1, a finite interval
    assert -1 < c4["pearson_ci_low"] < c4["pearson_r"] < c4["pearson_ci_high"] < 1


def test_constant_values_or_effects_are_undefined_with_a_reason():
    c = correlate([0.1, 0.5, 0.2, 0.3], [5.0, 5.0, 5.0, 5.0])
    assert c["undefined"] == "the criterion values are all equal (5)"
    assert all(math.isnan(c[k]) for k in ("pearson_r", "pearson_ci_low", "pearson_p", "spearman_rho", "spearman_p"))
    c = correlate([0.2, 0.2, 0.2], [1.0, 2.0, 3.0])
    assert c["undefined"] == "every word has the same effect size (0.2)" and math.isnan(c["pearson_r"])


def test_cli_prints_an_undefined_correlation_as_a_dash_with_its_reason(tmp_path, capsys):
    p = _csv(tmp_path, "word,value\nnurse,5\nengineer,5\nteacher,5\n")
    assert main(["scweat", "--criterion", str(p), "--attributes", "W7", "--calibration", "none"]) == 0
    out = capsys.readouterr().out
    row = next(ln.split() for ln in out.splitlines() if ln.startswith("none "))
    assert row == ["none", "3", "-", "-", "-", "-", "-", "-"]
    assert "none: r and rho undefined: the criterion values are all equal (5)." in out


def test_perfect_correlation_has_a_point_interval_and_p_zero():
    c = correlate([1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 4.0, 6.0, 8.0, 10.0])
    assert c["pearson_r"] == pytest.approx(1.0) and c["pearson_ci_low"] == c["pearson_ci_high"] == c["pearson_r"]
    assert c["pearson_p"] == 0.0 and c["spearman_rho"] == 1.0


def _csv(tmp_path, text, name="c.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "text, message",
    [
        ("term,score\nnurse,1\n", r"c\.csv:1: the header must name the columns word and value .* missing: word, value"),
        ("word,value\nnurse,abc\n", r"c\.csv:2: word 'nurse': value 'abc' is not a number"),
        ("word,value\nnurse,nan\n", r"c\.csv:2: word 'nurse': value 'nan' is not finite"),
        ("word,value\nnurse,1\n\ndoctor,2\nnurse,3\n", r"c\.csv:5: word 'nurse' is listed twice \(lines 2 and 5\)"),
        ("word,value\n,4\n", r"c\.csv:2: an empty word \(value '4'\)"),
        ("word,value\nnurse\n", r"c\.csv:2: 1 column\(s\), the header names 2"),
        ("word,value\n", r"c\.csv: no rows of word,value \(only a header\)"),
    ],
)
def test_bad_csv_is_one_line_naming_file_line_and_word(tmp_path, text, message):
    with pytest.raises(DataFormatError, match=message) as err:
        load_criterion(_csv(tmp_path, text))
    assert "\n" not in str(err.value)


def test_extra_columns_and_any_order_are_read(tmp_path):
    c = load_criterion(_csv(tmp_path, "value,source,word\n3.5,x,nurse\n-1,y,doctor\n"))
    assert c.words == ("nurse", "doctor") and c.values == (3.5, -1.0) and c.lines == (2, 3)


def test_words_missing_from_the_model_are_listed_not_dropped(glove, tmp_path):
    p = _csv(tmp_path, "word,value\nnurse,90\nengineer,10\nteacher,78\nzzqxv,50\ncarpenter,2\n")
    res = isoeat.criterion_validity(glove, p, "W7", rng=0)
    assert res.missing == ("zzqxv",) and res.n == 4 and "zzqxv" not in res.words
    few = _csv(tmp_path, "word,value\nnurse,90\nzzqxv,50\nqqzzv,3\n", "few.csv")
    with pytest.raises(
        CoverageError,
        match=r"only 1 of its 3 words are in glove-6b-50d; criterion validity needs at least 3 \(left out: zzqxv, qqzzv\)",
    ):
        isoeat.criterion_validity(glove, few, "W7", rng=0)


def test_two_words_of_one_vocabulary_entry_are_refused(glove, tmp_path):
    p = _csv(tmp_path, "word,value\nNurse,90\nengineer,10\nnurse,91\nteacher,78\n")
    with pytest.raises(CoverageError, match=r"'Nurse' and 'nurse' are the same vocabulary entry 'nurse'"):
        isoeat.criterion_validity(glove, p, "W7", rng=0)


def test_a_word_with_undefined_d_is_listed_and_left_out():
    # A = e1, e2; B = e3, e4: "flat" (e5) has cosine 0 with every attribute word, so its SC-WEAT d is undefined
    E = np.eye(6)
    words = ["a1", "a2", "b1", "b2", "flat", "p", "q", "r"]
    vecs = np.vstack(
        [
            E[0],
            E[1],
            E[2],
            E[3],
            E[4],
            E[0] + 0.2 * E[2] + E[5],
            E[2] + 0.5 * E[1] + E[5],
            E[1] + E[3] + 0.3 * E[0] + E[5],
        ]
    )
    m = StaticVectors(words, vecs, name="toy")
    A, B = isoeat.WordSet("A", ("a1", "a2")), isoeat.WordSet("B", ("b1", "b2"))
    crit = Criterion("toy", ("p", "q", "r", "flat"), (1.0, 2.0, 3.0, 4.0))
    res = isoeat.criterion_validity(m, crit, (A, B), rng=0)
    assert res.undefined_words == ("flat",) and res.words == ("p", "q", "r") and res.n == 3
    two = Criterion("toy2", ("p", "q", "flat"), (1.0, 2.0, 4.0))  # 2 defined: below MIN_WORDS, at the boundary
    with pytest.raises(
        CoverageError,
        match=r"only 2 of its 3 words have a defined SC-WEAT d in toy \(none\); .* "
        r"at least 3 \(left out: flat\)$",
    ):
        isoeat.criterion_validity(m, two, (A, B), rng=0)


def test_cli_prints_r_with_interval_raw_and_calibrated(capsys, tmp_path):
    fig = tmp_path / "crit.png"
    assert main(["scweat", "--criterion", "occupations", "--attributes", "W7", "--criterion-figure", str(fig)]) == 0
    out = capsys.readouterr().out
    rows = {ln.split()[0]: ln.split() for ln in out.splitlines() if ln.split()[:1] in (["none"], ["zca"])}
    assert set(rows) == {"none", "zca"} and rows["none"][1] == "40"
    assert rows["none"][2] == "-0.498" and rows["none"][3:5] == ["[-0.701,", "-0.221]"]  # the API's, rounded
    assert "Fisher z" in out and "construction worker" in out and "Bureau of Labor Statistics" in out
    assert fig.is_file() and fig.read_bytes()[:4] == b"\x89PNG"
    assert (
        main(
            ["scweat", "--criterion", "occupations", "--attributes", "W7", "--calibration", "none", "--format", "json"]
        )
        == 0
    )
    recs = json.loads(capsys.readouterr().out)
    assert [r["calibration"] for r in recs] == ["none"] and recs[0]["pearson_r"] == pytest.approx(-0.4979, abs=1e-4)


def test_cli_api_agree(occupations_raw):
    assert round(occupations_raw.pearson_r, 3) == -0.498
    assert (round(occupations_raw.pearson_ci_low, 3), round(occupations_raw.pearson_ci_high, 3)) == (-0.701, -0.221)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["scweat", "--attributes", "W7"], "give the target words: --words"),
        (["scweat", "--words", "nurse", "--criterion", "occupations", "--attributes", "W7"], "drop --words"),
        (["scweat", "--words", "nurse", "--attributes", "W7", "--criterion-figure", "x.png"], "give --criterion"),
        (["scweat", "--criterion", "ocupations", "--attributes", "W7"], "did you mean 'occupations'"),
        (["scweat", "--criterion", "occupations", "--attributes", "W7", "--ci"], "intervals are on r and rho"),
    ],
)
def test_cli_refuses_with_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err
