"""One validity check (isoeat.stats.validity.check_test) shared by WEAT, SC-WEAT and SEAT."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, InvalidTestError, IsoeatWarning
from isoeat.stats.weat import sc_weat, sc_weat_from_vectors, weat_from_vectors
from isoeat.wordsets import AssociationTest, WordSet

WORDS = {
    "X": ["john", "paul", "mike", "kevin"],
    "Y": ["amy", "joan", "lisa", "sarah"],
    "A": ["executive", "management", "salary", "office"],
    "B": ["home", "parents", "children", "family"],
}


def _test(**changes):
    sets = {r: WordSet(name=f"set{r}", words=tuple(changes.get(r, WORDS[r]))) for r in "XYAB"}
    return AssociationTest(id="T1", bias_type="Gender", **sets)


@pytest.mark.parametrize("test_id", [f"W{i}" for i in range(1, 11)])
def test_no_standard_test_is_refused_or_warned(glove, test_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = isoeat.weat(glove, test_id, method="monte-carlo", n_permutations=100, rng=0)
    assert np.isfinite(r.effect_size)


@pytest.mark.parametrize("changes,fragment", [
    (dict(Y=WORDS["X"]), "test T1: set X is identical to set Y ('john', 'paul'"),
    (dict(B=WORDS["A"]), "test T1: set A is identical to set B"),
    (dict(Y=["john", "joan", "lisa", "sarah"]), "test T1: sets X and Y share 1 word(s): 'john'"),
    (dict(B=["home", "salary", "children", "family"]), "sets A and B share 1 word(s): 'salary'"),
    (dict(A=["executive", "john", "salary", "office"]), "sets targets and attributes share 1 word(s): 'john'"),
    (dict(X=["Bill", "bill", "mike", "kevin"]), "set X lists 'Bill' and 'bill', which are the same vocabulary entry 'bill'"),
])
def test_weat_refuses_an_invalid_test_naming_sets_and_words(glove, changes, fragment):
    with pytest.raises(InvalidTestError) as info:
        isoeat.weat(glove, _test(**changes), rng=0)
    assert fragment in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, ConfigError)


def test_allow_overlap_proceeds_with_a_warning(glove):
    t = _test(Y=["john", "joan", "lisa", "sarah"])
    with pytest.warns(IsoeatWarning, match="sets X and Y share 1 word"):
        r = isoeat.weat(glove, t, rng=0, allow_overlap=True)
    assert np.isfinite(r.effect_size)


def test_vectors_level_checks():
    g = np.random.default_rng(0)
    X, Y, A, B = (g.normal(size=(3, 4)) for _ in range(4))
    with pytest.raises(InvalidTestError, match="ddof=6 must be below the 6 values of sets X"):
        weat_from_vectors(X, Y, A, B, ddof=6)
    with pytest.raises(InvalidTestError, match="set X is identical to set Y"):
        weat_from_vectors(X, X.copy(), A, B)
    with pytest.raises(InvalidTestError, match="dimension 1"):
        weat_from_vectors(X[:, :1], Y[:, :1], A[:, :1], B[:, :1])
    with pytest.raises(InvalidTestError, match="ddof=6 must be below the 6 values of sets A\\+B"):
        sc_weat_from_vectors(X[0], A, B, ddof=6)


def test_a_zero_vector_is_named_by_its_word(glove):
    class Zeroed:
        name = "zeroed"

        def lookup(self, words):
            lk = glove.lookup(words)
            v = lk.vectors.copy()
            v[[i for i, w in enumerate(lk.found) if w == "paul"]] = 0.0
            return dataclasses.replace(lk, vectors=v)

    with pytest.raises(InvalidTestError, match="set X: the vector of 'paul' is all zeros"):
        isoeat.weat(Zeroed(), _test(), rng=0)


def test_sc_weat_refuses_a_target_among_the_attributes_and_an_interval(glove):
    with pytest.raises(InvalidTestError, match="targets and attributes share 1 word\\(s\\): 'salary'"):
        sc_weat(glove, "salary", (WordSet("a", tuple(WORDS["A"])), WordSet("b", tuple(WORDS["B"]))), rng=0)
    with pytest.raises(ConfigError, match="bootstrap"):
        sc_weat(glove, "john", "W6", rng=0, bootstrap=1000)


def test_seat_uses_the_same_check():
    class Encoder:
        name = "stub"

        def encode_sentences(self, texts):
            g = np.random.default_rng(len(texts))
            return g.normal(size=(len(texts), 8))

    with pytest.raises(InvalidTestError, match="test T1: set X is identical to set Y \\('john'"):
        isoeat.seat(Encoder(), _test(Y=WORDS["X"]), templates=["This is {}."])
    with pytest.raises(InvalidTestError, match="sets targets and attributes share 1 word"):
        isoeat.seat(Encoder(), _test(A=["executive", "john", "salary", "office"]), templates=["This is {}."])
    with pytest.warns(IsoeatWarning, match="share 1 word"):
        isoeat.seat(Encoder(), _test(A=["executive", "john", "salary", "office"]), templates=["This is {}."],
                    allow_overlap=True, n_permutations=100)


def test_bootstrap_needs_enough_resamples_for_its_level():
    g = np.random.default_rng(0)
    X, Y, A, B = (g.normal(size=(5, 4)) for _ in range(4))
    with pytest.raises(ConfigError, match=r"bootstrap must be 0 \(no interval\) or at least 200 .*0\.95.*got 1$"):
        weat_from_vectors(X, Y, A, B, bootstrap=1)
    with pytest.raises(ConfigError, match="at least 1000"):
        weat_from_vectors(X, Y, A, B, bootstrap=500, ci_level=0.99)
    r = weat_from_vectors(X, Y, A, B, bootstrap=200, rng=0)
    assert r.effect_size_ci.low <= r.effect_size <= r.effect_size_ci.high
