"""Tests that kill mutants of ``isoeat/stats/{validity,rank,_checks}.py``.

Expected values are derived by hand from the documented rules (module
docstrings), or recomputed with scipy in the test — never read from isoeat.

* validity: a set needs >= 2 words; X == Y or A == B refused; two words that
  are one vocabulary entry refused; ``ddof`` must be below the pooled count;
  dimension >= 2; zero or non-finite vectors refused, named by their word
  (or ``row i`` when no word is known); partial overlaps refused unless
  ``allow_overlap=True`` (then a warning); at most 8 overlapping words are
  listed, then `` ...``.
* rank: average 1-based ranks; Spearman = Pearson of the ranks.
* _checks: ``s`` 1-D with >= 2 values; ``1 <= n_x <= n - 1``; a level in (0, 1).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from isoeat._errors import ConfigError, DataFormatError, InvalidTestError, IsoeatWarning
from isoeat.stats._checks import _as_scores, _check_level, _check_n_x
from isoeat.stats.rank import rankdata, spearman, tie_groups
from isoeat.stats.validity import check_test

WORDS = {"X": ["x1", "x2"], "Y": ["y1", "y2"], "A": ["a1", "a2"], "B": ["b1", "b2"]}


def _vecs(n=2, dim=3, seed=0, scale=1.0):
    """``n`` random vectors of dimension ``dim`` with no zero row (entries in [0.1, 0.5] * scale)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0.1, 0.5, size=(n, dim)) * scale


def _four(n=(2, 2, 2, 2), dim=3, scale=1.0):
    return {r: _vecs(k, dim, seed=i, scale=scale) for i, (r, k) in enumerate(zip("XYAB", n))}


# --- validity: valid inputs pass ------------------------------------------------------------------


def test_valid_words_and_vectors_pass():
    check_test("T", words=WORDS)
    check_test("T", words=WORDS, vectors=_four())
    check_test("T", vectors=_four(n=(2, 3, 4, 5), dim=2))  # dimension 2 is enough; n != dim
    check_test("T", vectors=_four(dim=7, scale=0.1))  # every |entry| below 1 is fine
    # SC-WEAT shape: a 1-D target vector "w" (one word is allowed for "w") and A, B
    check_test("S", vectors={"w": np.array([0.3, 0.2, 0.1]), "A": _vecs(2, 3, 1), "B": _vecs(2, 3, 2)},
               ddof=1, sd_over=("A", "B"))
    check_test("S", words={"w": ["t"], "A": ["a1", "a2"], "B": ["b1", "b2"]})


def test_ddof_is_ignored_when_no_set_is_sized():
    check_test("T", ddof=5)  # no sets: nothing to pool, nothing to refuse


# --- validity: sizes ------------------------------------------------------------------------------


def test_a_set_of_one_word_is_refused():
    with pytest.raises(InvalidTestError, match="set X has 1 word"):
        check_test("T", words={**WORDS, "X": ["x1"]})


def test_a_set_of_one_vector_is_refused_whatever_its_dimension():
    vecs = _four()
    vecs["X"] = _vecs(1, 3)
    with pytest.raises(InvalidTestError, match="set X has 1 word"):
        check_test("T", vectors=vecs)


def test_a_one_dimensional_array_is_one_vector():
    vecs = _four()
    vecs["Y"] = np.array([0.1, 0.2, 0.3])
    with pytest.raises(InvalidTestError, match="set Y has 1 word"):
        check_test("T", vectors=vecs)


def test_dimension_one_is_refused_and_two_accepted():
    with pytest.raises(InvalidTestError, match="dimension 1"):
        check_test("T", vectors=_four(n=(3, 3, 3, 3), dim=1))
    check_test("T", vectors=_four(n=(3, 3, 3, 3), dim=2))


@pytest.mark.parametrize(("n", "ok"), [(4, False), (3, True)])
def test_ddof_must_be_below_the_pooled_count(n, ok):
    # X and Y have 2 words each: the pooled count is 4, so ddof = 4 is refused, 3 accepted
    if ok:
        check_test("T", words=WORDS, ddof=n)
        check_test("T", vectors=_four(), ddof=n)
    else:
        with pytest.raises(InvalidTestError, match="ddof=4 must be below the 4 values"):
            check_test("T", words=WORDS, ddof=n)


def test_ddof_over_attribute_sets():
    # SC-WEAT pools A and B: |A| + |B| = 5, ddof = 5 refused, 4 accepted
    words = {"w": ["t"], "A": ["a1", "a2", "a3"], "B": ["b1", "b2"]}
    check_test("S", words=words, ddof=4, sd_over=("A", "B"))
    with pytest.raises(InvalidTestError, match="5 values of sets A\\+B"):
        check_test("S", words=words, ddof=5, sd_over=("A", "B"))


# --- validity: bad vectors are named -------------------------------------------------------------


def test_a_zero_vector_is_named_by_its_word():
    vecs = _four(n=(3, 2, 2, 2), dim=4)
    vecs["X"][2] = 0.0
    with pytest.raises(InvalidTestError, match="set X: the vector of 'x3' is all zeros"):
        check_test("T", words={**WORDS, "X": ["x1", "x2", "x3"]}, vectors=vecs)


def test_a_non_finite_vector_is_named_by_its_word():
    vecs = _four(n=(3, 2, 2, 2), dim=4)
    vecs["X"][2, 1] = np.nan
    with pytest.raises(InvalidTestError, match="set X: the vector of 'x3' is not finite"):
        check_test("T", words={**WORDS, "X": ["x1", "x2", "x3"]}, vectors=vecs)
    vecs["X"][2, 1] = np.inf
    with pytest.raises(InvalidTestError, match="the vector of 'x3' is not finite"):
        check_test("T", words={**WORDS, "X": ["x1", "x2", "x3"]}, vectors=vecs)


def test_a_bad_vector_without_its_word_is_named_by_its_row():
    vecs = _four(n=(3, 2, 2, 2), dim=4)
    vecs["X"][1] = 0.0
    with pytest.raises(InvalidTestError, match="the vector of row 1 is all zeros"):
        check_test("T", vectors=vecs)
    # fewer words than rows: the row beyond the words is named by its index
    vecs = _four(n=(3, 2, 2, 2), dim=4)
    vecs["X"][2] = 0.0
    with pytest.raises(InvalidTestError, match="the vector of row 2 is all zeros"):
        check_test("T", words={"X": ["x1", "x2"]}, vectors=vecs)


# --- validity: duplicates, identical sets, overlaps ----------------------------------------------


def test_a_word_listed_twice_is_refused():
    with pytest.raises(InvalidTestError, match="set A lists 'a1' twice"):
        check_test("T", words={**WORDS, "A": ["a1", "a2", "a1"]})


def test_two_words_of_one_entry_are_refused():
    words = {**WORDS, "A": ["Bill", "bill", "john"]}
    entries = {**WORDS, "A": ["bill", "bill", "john"]}
    with pytest.raises(InvalidTestError, match="'Bill' and 'bill', which are the same vocabulary entry 'bill'"):
        check_test("T", words=words, entries=entries)


def test_identical_sets_are_refused():
    with pytest.raises(InvalidTestError, match="set X is identical to set Y"):
        check_test("T", words={**WORDS, "Y": ["x2", "x1"]})
    vecs = _four()
    vecs["B"] = vecs["A"].copy()
    with pytest.raises(InvalidTestError, match="set A is identical to set B \\(the same vectors\\)"):
        check_test("T", vectors=vecs)


def test_one_set_of_a_pair_alone_is_not_compared():
    # only X of the target pair: no comparison with a missing Y, no error
    check_test("T", words={"X": ["x1", "x2"], "A": ["a1", "a2"], "B": ["b1", "b2"]})


def test_overlap_refused_by_default_and_warned_when_allowed():
    words = {**WORDS, "Y": ["y1", "x2"]}
    with pytest.raises(InvalidTestError, match="sets X and Y share 1 word\\(s\\): 'x2'; pass allow_overlap=True"):
        check_test("T", words=words)
    with pytest.raises(InvalidTestError, match="allow_overlap"):
        check_test("T", words=words, allow_overlap=False)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        check_test("T", words=words, allow_overlap=True)
    assert [str(w.message) for w in rec if issubclass(w.category, IsoeatWarning)] == [
        "test T: sets X and Y share 1 word(s): 'x2' (allow_overlap=True)"]


def test_overlap_message_lists_at_most_eight_words():
    shared = [f"s{i}" for i in range(9)]  # 9 shared words: 8 listed, then " ..."
    words = {"X": shared + ["x"], "Y": shared + ["y"], "A": ["a1", "a2"], "B": ["b1", "b2"]}
    with pytest.raises(InvalidTestError) as exc:
        check_test("T", words=words)
    listed = ", ".join(repr(w) for w in shared[:8])
    assert f"share 9 word(s): {listed} ...;" in str(exc.value)
    # exactly 8 shared words: all listed, no " ..."
    shared = shared[:8]
    words = {"X": shared + ["x"], "Y": shared + ["y"], "A": ["a1", "a2"], "B": ["b1", "b2"]}
    with pytest.raises(InvalidTestError) as exc:
        check_test("T", words=words)
    assert f"share 8 word(s): {listed}; pass" in str(exc.value)


# --- rank --------------------------------------------------------------------------------------------


def test_rankdata_by_hand():
    assert rankdata([10, 30, 20, 20]).tolist() == [1.0, 4.0, 2.5, 2.5]
    assert rankdata([3.0, 1.0, 2.0]).tolist() == [3.0, 1.0, 2.0]
    assert rankdata([5, 5, 5, 1]).tolist() == [3.0, 3.0, 3.0, 1.0]  # ranks 2, 3, 4 averaged
    assert rankdata([2, 2]).tolist() == [1.5, 1.5]


def test_tie_groups_by_hand():
    order, starts, group = tie_groups([10, 30, 20, 20])
    assert order.tolist() == [0, 2, 3, 1]
    assert starts.tolist() == [0, 1, 3]
    assert group.tolist() == [0, 2, 1, 1]
    order, starts, group = tie_groups([7, 7, 1])
    assert (order.tolist(), starts.tolist(), group.tolist()) == ([2, 0, 1], [0, 1], [1, 1, 0])


@pytest.mark.parametrize("seed", range(5))
def test_rankdata_and_spearman_equal_scipy(seed):
    from scipy.stats import rankdata as sp_rankdata
    from scipy.stats import spearmanr

    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, size=11).astype(float)  # many ties
    y = rng.normal(size=11)
    np.testing.assert_array_equal(rankdata(x), sp_rankdata(x))
    assert spearman(x, y) == pytest.approx(spearmanr(x, y)[0], rel=1e-12)


def test_spearman_by_hand():
    # ranks (1,2,3,4) and (1,2,4,3): centred (-1.5,-.5,.5,1.5), (-1.5,-.5,1.5,.5): 4 / 5 = 0.8
    assert spearman([1, 2, 3, 4], [10, 20, 40, 30]) == pytest.approx(0.8, abs=1e-15)
    assert spearman([1, 2], [5, 9]) == pytest.approx(1.0)  # two pairs are enough
    assert spearman([1, 2], [9, 5]) == pytest.approx(-1.0)


def test_spearman_refusals():
    with pytest.raises(ConfigError, match="same length"):
        spearman([1, 2, 3], [1, 2])
    with pytest.raises(ConfigError, match="at least 2 pairs"):
        spearman([1], [1])
    with pytest.raises(DataFormatError, match="NaN or inf"):
        spearman([1, 2, 3], [1, np.nan, 3])
    with pytest.raises(DataFormatError, match="NaN or inf"):
        spearman([1, np.inf, 3], [1, 2, 3])
    with pytest.raises(DataFormatError, match="constant"):
        spearman([1, 1, 1], [1, 2, 3])


# --- _checks -----------------------------------------------------------------------------------------


def test_scores_need_one_dimension_and_two_values():
    assert _as_scores([1.0, 2.0]).tolist() == [1.0, 2.0]
    with pytest.raises(ConfigError, match="at least 2 values, got 1"):
        _as_scores([1.0])
    with pytest.raises(ConfigError, match="must be 1-D"):
        _as_scores([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ConfigError, match="must be 1-D"):
        _as_scores(3.0)


@pytest.mark.parametrize(("n_x", "ok"), [(-1, False), (0, False), (1, True), (3, True), (4, True), (5, False)])
def test_n_x_leaves_both_sides_non_empty(n_x, ok):
    n = 5
    if ok:
        assert _check_n_x(n_x, n) == n_x
    else:
        with pytest.raises(ConfigError, match="1 <= n_x <= n - 1"):
            _check_n_x(n_x, n)


@pytest.mark.parametrize(("level", "ok"), [
    (0.0, False), (1.0, False), (-0.1, False), (1.5, False),
    (1e-9, True), (0.5, True), (0.95, True), (1 - 1e-9, True),
])
def test_level_in_the_open_unit_interval(level, ok):
    if ok:
        assert _check_level("level", level) == level
    else:
        with pytest.raises(ConfigError, match="level"):
            _check_level("level", level)


def test_scores_nan_and_inf_refused():
    with pytest.raises(ConfigError, match="NaN at positions \\[1\\]"):
        _as_scores([1.0, math.nan, 2.0])
    with pytest.raises(ConfigError, match="infinite values at positions \\[2\\]"):
        _as_scores([1.0, 2.0, -math.inf])
