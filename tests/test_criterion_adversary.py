"""Hostile criterion files and the intervals' track record (issue 42 item 5, adversary).

Expected values: scipy.stats (a peer library) for r, rho with ties and their p; Fisher's (1921) z interval
written out here; the coverage figures quoted are those printed by ``python benchmarks/criterion_coverage.py``
(2,000 data sets a design, seed 20261207), which measures them -- the unit tests only check that every output
states them (or states that a level has none), the house rule for a printed uncertainty.
"""

from __future__ import annotations

import contextlib
import io
import json
import math

import numpy as np
import pytest
from scipy import stats

import isoeat
from isoeat.cli import main
from isoeat.stats.criterion import MIN_WORDS, correlate, coverage_note
from isoeat.wordsets.criteria import load_criterion


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(args)
        except SystemExit as e:
            rc = int(e.code or 0)
    return rc, out.getvalue(), err.getvalue()


def test_bom_crlf_and_a_quoted_comma_are_read(tmp_path):
    """Held: a UTF-8 BOM, CRLF line ends and a quoted field holding a comma (hand example)."""
    f = tmp_path / "c.csv"
    f.write_bytes(b'\xef\xbb\xbfword,value\r\nnurse,90\r\n"doctor, md",40\r\n"engineer",15.5\r\n')
    c = load_criterion(f)
    assert c.words == ("nurse", "doctor, md", "engineer") and c.values == (90.0, 40.0, 15.5)
    assert c.lines == (2, 3, 4)


@pytest.mark.parametrize("raw", ["nan", "inf", "-inf", "1e400", "", "1,5", "0x10"])
def test_a_value_that_is_not_a_finite_number_names_file_line_word(tmp_path, raw):
    f = tmp_path / "c.csv"
    f.write_text(f'word,value\nnurse,"{raw}"\n', encoding="utf-8")
    with pytest.raises(isoeat.DataFormatError, match=r"c\.csv:2: word 'nurse': value"):
        load_criterion(f)


def test_spearman_with_ties_matches_scipy():
    """Ties get average ranks (scipy.stats.spearmanr); Pearson and both p as scipy.stats.pearsonr/spearmanr."""
    x = [0.3, -0.2, 0.3, 0.9, -0.5, 0.1, 0.1, 0.7]
    y = [90.0, 90.0, 5.0, 5.0, 40.0, 40.0, 12.0, 3.0]
    c = correlate(x, y)
    rho, p_rho = stats.spearmanr(x, y)
    r, p_r = stats.pearsonr(x, y)
    assert c["spearman_rho"] == pytest.approx(rho, abs=1e-12) and c["spearman_p"] == pytest.approx(p_rho, rel=1e-9)
    assert c["pearson_r"] == pytest.approx(r, abs=1e-12) and c["pearson_p"] == pytest.approx(p_r, rel=1e-9)
    # Fisher (1921): tanh(artanh r -+ 1.959964 / sqrt(n - 3))
    q = stats.norm.ppf(0.975) / math.sqrt(len(x) - 3)
    assert c["pearson_ci_low"] == pytest.approx(math.tanh(math.atanh(r) - q), abs=1e-12)
    assert c["pearson_ci_high"] == pytest.approx(math.tanh(math.atanh(r) + q), abs=1e-12)


def test_the_n_boundary():
    """At MIN_WORDS (3) the interval is all of [-1, 1] (SE infinite); one fewer is refused."""
    assert MIN_WORDS == 3
    c = correlate([0.1, 0.5, 0.2], [1.0, 2.0, 3.0])  # ranks (1, 3, 2) vs (1, 2, 3): rho = 0.5
    assert (c["pearson_ci_low"], c["pearson_ci_high"]) == (-1.0, 1.0)
    assert (c["spearman_ci_low"], c["spearman_ci_high"]) == (-1.0, 1.0)
    with pytest.raises(isoeat.CoverageError, match="at least 3"):
        correlate([0.1, 0.5], [1.0, 3.0])
    c4 = correlate([0.1, 0.5, 0.2, 0.4], [1.0, 3.0, 2.0, 2.5])
    assert -1.0 < c4["pearson_ci_low"] < c4["pearson_ci_high"] < 1.0


def test_coverage_note_quotes_the_measured_record_and_its_limits():
    """Break (house rule): the intervals were printed with no track record; the note states the measured one."""
    at40 = coverage_note(40, 0.95)
    assert "0.945-0.977" in at40 and "0.73-0.85" in at40 and "heavy-tailed" in at40
    assert "benchmarks/criterion_coverage.py" in at40 and "below" not in at40
    assert "n = 10" not in coverage_note(10, 0.95) and "n = 9 is below" in coverage_note(9, 0.95)
    for level in (0.9, 0.99, 0.951):
        assert coverage_note(40, level).startswith(f"No measured coverage at the {level:.0%} level")


def test_every_output_states_the_coverage(tmp_path):
    """The table's footer and the JSON record carry the note; --ci-level 0.9 says there is none."""
    model = isoeat.load_model("glove-6b-50d")
    res = isoeat.criterion_validity(model, "occupations", "W7", calibration="none", rng=0)
    assert res.ci_coverage == coverage_note(40, 0.95) and res.to_dict()["ci_coverage"] == res.ci_coverage
    rc, out, err = _cli(["scweat", "--criterion", "occupations", "--attributes", "W7", "--calibration", "none"])
    assert rc == 0, err
    assert coverage_note(40, 0.95) + "." in out.splitlines()
    rc, out, err = _cli(
        ["scweat", "--criterion", "occupations", "--attributes", "W7", "--calibration", "none", "--ci-level", "0.9"]
    )
    assert rc == 0, err
    assert "No measured coverage at the 90% level" in out
    rc, out, err = _cli(
        ["scweat", "--criterion", "occupations", "--attributes", "W7", "--calibration", "none", "--format", "json"]
    )
    doc = json.loads(out)
    rec = doc[0] if isinstance(doc, list) else doc
    assert rec["ci_coverage"] == coverage_note(40, 0.95)
    assert np.isfinite(rec["pearson_r"])


def test_an_unquoted_thousands_comma_is_refused_not_read_as_the_first_digits(tmp_path):
    """Break: 'salary,1,234' under the header word,value was read as the value 1 (the extra column ignored)."""
    f = tmp_path / "c.csv"
    f.write_text("word,value\nnurse,1,234\nengineer,15\n", encoding="utf-8")
    with pytest.raises(isoeat.DataFormatError, match=r'c\.csv:2: 3 columns, the header has 2 .*"1,234"'):
        load_criterion(f)
    f.write_text('word,value\nnurse,"1,234"\nengineer,15,\n', encoding="utf-8")  # quoted; a trailing empty field
    with pytest.raises(isoeat.DataFormatError, match="is not a number"):  # "1,234" is not a float: said
        load_criterion(f)
    f.write_text("word,value\nnurse,1234\nengineer,15,\n", encoding="utf-8")
    assert load_criterion(f).values == (1234.0, 15.0)


def test_a_header_naming_a_column_twice_is_refused(tmp_path):
    """Break: 'word,value,value' silently read the first value column."""
    f = tmp_path / "c.csv"
    f.write_text("word,value,Value\nnurse,1,2\n", encoding="utf-8")
    with pytest.raises(isoeat.DataFormatError, match=r"c\.csv:1: the header names the column value 2 times"):
        load_criterion(f)


def test_a_semicolon_in_a_criterion_word_is_refused(tmp_path):
    """Break: 'nurse;aide' was listed in the CSV record's missing/words cells, which join words with ';'."""
    f = tmp_path / "c.csv"
    f.write_text('word,value\n"nurse;aide",3\nnurse,4\n', encoding="utf-8")
    with pytest.raises(isoeat.DataFormatError, match=r"c\.csv:2: word 'nurse;aide' holds ';'"):
        load_criterion(f)
