"""Hostile phrases (issue 42 item 3, adversary): whitespace variants, a phrase and its own token, cell hashes.

Expected values come from hand-built toy vocabularies (numpy arrays written here) and the rule of
``isoeat.backends._phrases`` as its docstring states it: a phrase is its ``_``-joined token, else the mean of its
words' raw vectors. "One vocabulary entry counts once" is the house's validity rule (``stats/validity.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

import isoeat
from isoeat import InvalidTestError, StaticVectors
from isoeat.backends import _phrases
from isoeat.experiments.config import test_hash
from isoeat.stats.criterion import criterion_validity
from isoeat.wordsets import AssociationTest, WordSet
from isoeat.wordsets.criteria import Criterion

rng = np.random.default_rng(7)
VOCAB = [
    "new",
    "york",
    "new_york",
    "paris",
    "london",
    "rome",
    "berlin",
    "madrid",
    "love",
    "peace",
    "hate",
    "war",
    "boston",
    "chicago",
    "nurse",
    "pilot",
    "judge",
]
TOY = StaticVectors(VOCAB, rng.normal(size=(len(VOCAB), 8)), name="toy")
NO_TOKEN = StaticVectors([w for w in VOCAB if w != "new_york"], rng.normal(size=(len(VOCAB) - 1, 8)), name="toy2")
ATTR = (WordSet("A", ["love", "peace"]), WordSet("B", ["hate", "war"]))


@pytest.mark.parametrize("variant", ["new  york", "new\tyork", " new york ", "new\u00a0york", "new \u2003york"])
def test_whitespace_variants_compose_as_the_phrase(variant):
    """Held: any Unicode whitespace separates words; the vector is the mean of the raw rows (hand: (new+york)/2)."""
    lk = NO_TOKEN.lookup([variant])
    want = (NO_TOKEN.vectors[NO_TOKEN._row("new")[0]] + NO_TOKEN.vectors[NO_TOKEN._row("york")[0]]) / 2
    assert lk.found == (variant,) and lk.how(variant) == "mean-of-words"
    np.testing.assert_allclose(lk.vectors[0], want, rtol=0, atol=1e-12)


def test_a_tab_in_a_word_set_is_refused_naming_the_word():
    """Held: a word set refuses a control character (U+0009) in a word, naming it."""
    with pytest.raises(isoeat.ConfigError, match="U\\+0009"):
        WordSet("A", ["new\tyork", "boston"])


@pytest.mark.parametrize("twin", ["new  york", "new\u00a0york", " new york"])
def test_two_spellings_of_one_phrase_in_a_set_are_refused(twin):
    """Break: 'new york' and 'new  york' were two words of one set with one vector (counted twice, silently)."""
    sets = (WordSet("A", ["new york", twin, "boston"]), WordSet("B", ["paris", "london", "rome"]))
    with pytest.raises(InvalidTestError, match="same vocabulary entry 'new \\+ york'"):
        isoeat.sc_weat(NO_TOKEN, ["nurse"], sets)


def test_a_phrase_and_its_own_token_are_one_entry():
    """Break: 'new york' is embedded as the token new_york; listing both counted new_york twice."""
    assert TOY.lookup(["new york"]).how("new york") == "phrase-token"
    sets = (WordSet("A", ["new york", "new_york", "boston"]), WordSet("B", ["paris", "london", "rome"]))
    with pytest.raises(InvalidTestError, match="'new york' and 'new_york'"):
        isoeat.sc_weat(TOY, ["nurse"], sets)


def test_weat_refuses_a_phrase_in_x_and_its_token_in_y_as_an_overlap():
    """The overlap rule uses the entries too: X 'new york' and Y 'new_york' share a word."""
    t = AssociationTest(
        "ph",
        "Custom",
        X=WordSet("X", ["new york", "boston"]),
        Y=WordSet("Y", ["new_york", "paris"]),
        A=ATTR[0],
        B=ATTR[1],
    )
    with pytest.raises(InvalidTestError, match="share 1 word"):
        isoeat.weat(TOY, t, calibration="none")


def test_criterion_words_that_are_one_phrase_are_refused():
    """Criterion validity: 'new york' and 'new  york' would be two points with one vector."""
    crit = Criterion("c", ("new york", "new  york", "boston", "chicago"), (1.0, 2.0, 3.0, 4.0))
    with pytest.raises(isoeat.CoverageError, match="same vocabulary entry 'new \\+ york'"):
        criterion_validity(NO_TOKEN, crit, ATTR)


def test_a_repeated_word_weighs_twice():
    """Held: 'new new york' is the mean of new, new, york (the rule: the mean over the words as written)."""
    lk = NO_TOKEN.lookup(["new new york"])
    r = {w: NO_TOKEN.vectors[NO_TOKEN._row(w)[0]] for w in ("new", "york")}
    np.testing.assert_allclose(lk.vectors[0], (2 * r["new"] + r["york"]) / 3, rtol=0, atol=1e-12)


def _test(words):
    return AssociationTest(
        "t", "Custom", X=WordSet("X", words), Y=WordSet("Y", ["paris", "rome"]), A=ATTR[0], B=ATTR[1]
    )


def test_a_change_of_the_phrase_rule_changes_the_hash_of_a_test_with_phrases(monkeypatch):
    """Break: a run folder's cell hash (test_hash) did not depend on the phrase rule; a changed rule reused cells."""
    with_phrase, without = _test(["new york", "boston"]), _test(["boston", "chicago"])
    before = test_hash(with_phrase), test_hash(without)
    monkeypatch.setattr(_phrases, "PHRASE_RULE_VERSION", _phrases.PHRASE_RULE_VERSION + 1)
    assert test_hash(with_phrase) != before[0]
    assert test_hash(without) == before[1]  # no phrase: the hash of every existing run folder is kept
    monkeypatch.undo()
    monkeypatch.setattr(_phrases, "PHRASE_RULE", _phrases.PHRASE_RULE + " (changed)")
    assert test_hash(with_phrase) != before[0]


def test_export_of_a_phrase_says_it_is_a_phrase(tmp_path):
    """Break: 'new york' was refused as 'not in the vocabulary' though lookup composes it; the message now says why."""
    from isoeat.backends._export import export_vectors

    with pytest.raises(isoeat.CoverageError, match="'new york' is a phrase: .* export writes stored rows only"):
        export_vectors(NO_TOKEN, tmp_path / "x.txt", words=["new york", "nurse"])
    assert not (tmp_path / "x.txt").exists()


def test_two_orders_of_one_mean_are_one_entry():
    """Break: 'new york' and 'york new' (no token for either) are the mean of the same two rows, one vector
    (hand: (new + york)/2 == (york + new)/2), and were two words of one set."""
    lk = NO_TOKEN.lookup(["new york", "york new"])
    np.testing.assert_array_equal(lk.vectors[0], lk.vectors[1])
    sets = (WordSet("A", ["new york", "york new", "boston"]), WordSet("B", ["paris", "london", "rome"]))
    with pytest.raises(InvalidTestError, match="'new york' and 'york new', which are the same vocabulary entry"):
        isoeat.sc_weat(NO_TOKEN, ["nurse"], sets)


def test_a_token_and_a_reversed_mean_are_two_entries():
    """Held: with the token new_york, 'new york' is that token and 'york new' the mean of york and new: two
    different vectors, two entries (not refused)."""
    lk = TOY.lookup(["new york", "york new"])
    assert lk.how("new york") == "phrase-token" and lk.how("york new") == "mean-of-words"
    sets = (WordSet("A", ["new york", "york new", "boston"]), WordSet("B", ["paris", "london", "rome"]))
    assert len(isoeat.sc_weat(TOY, ["nurse"], sets)) == 1


def test_ngroup_refuses_two_orders_of_one_mean_across_groups():
    """k-group tests use the same entries: 'new york' in one group, 'york new' in another."""
    t = isoeat.NGroupTest(
        "t",
        "Custom",
        (WordSet("g1", ("new york", "boston")), WordSet("g2", ("york new", "paris"))),
        (WordSet("p", ("love", "peace")), WordSet("u", ("hate", "war"))),
    )
    with pytest.raises(InvalidTestError, match="are one vocabulary entry"):
        isoeat.ngroup(NO_TOKEN, t, statistics="mac")
