"""Did-you-mean for out-of-vocabulary words (issue 32, item 7): candidates, their order, their cost, where shown.

The expected suggestions are derived independently: a brute-force optimal-string-alignment (Damerau–Levenshtein
with adjacent transpositions) distance over every word of a vocabulary, written out here with plain loops,
sorted by (distance, vocabulary row). isoeat generates the edits of the query instead and never scans the
vocabulary; the two must agree.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import isoeat
from isoeat._errors import CoverageError
from isoeat._validate import suggest_words
from isoeat.backends.static import StaticVectors


def dl(a: str, b: str) -> int:
    """Damerau–Levenshtein distance (Lowrance & Wagner 1975; unrestricted: a swapped pair may be edited again)."""
    inf = len(a) + len(b)
    d = [[inf] * (len(b) + 2) for _ in range(len(a) + 2)]
    for i in range(len(a) + 1):
        d[i + 1][1] = i
    for j in range(len(b) + 1):
        d[1][j + 1] = j
    last: dict[str, int] = {}
    for i in range(1, len(a) + 1):
        match_col = 0
        for j in range(1, len(b) + 1):
            k, l = last.get(b[j - 1], 0), match_col
            cost = 0 if a[i - 1] == b[j - 1] else 1
            if cost == 0:
                match_col = j
            d[i + 1][j + 1] = min(d[i][j] + cost, d[i + 1][j] + 1, d[i][j + 1] + 1,
                                  d[k][l] + (i - k - 1) + 1 + (j - l - 1))
        last[a[i - 1]] = i
    return d[len(a) + 1][len(b) + 1]


def test_the_distance_of_the_check_itself():
    # hand: kevn -> kevin one insertion; salery -> salary one substitution; ca -> abc two (swap, then insert
    # between: the unrestricted distance; the restricted "optimal string alignment" would say 3)
    assert (dl("kevn", "kevin"), dl("salery", "salary"), dl("ca", "abc"), dl("abc", "abc")) == (1, 1, 2, 0)


def brute_force(word: str, vocab: list[str], n: int = 3) -> tuple[str, ...]:
    """The nearest vocabulary words by Damerau–Levenshtein distance (1, else 2 for a word of 8 letters or more),
    lowest row first.

    Only words made of a-z and the word's own characters can be reached (the documented alphabet).
    """
    from collections import Counter

    allowed = set("abcdefghijklmnopqrstuvwxyz") | set(word)
    cw = Counter(word)
    near = []
    for row, v in enumerate(vocab):
        if abs(len(v) - len(word)) > 2 or v == word or not set(v) <= allowed:
            continue
        cv = Counter(v)
        if sum(((cw - cv) + (cv - cw)).values()) > 4:  # each edit changes the letter counts by at most 2
            continue
        near.append((dl(word, v), row, v))
    for dist in (1, 2) if len(word) >= 8 else (1,):  # two edits only for words of 8 letters or more
        hits = sorted((row, v) for d, row, v in near if d == dist)
        if hits:
            return tuple(v for _, v in hits[:n])
    return ()


VOCAB = ["the", "kelvin", "salary", "kevin", "saler", "executive", "ken", "valery", "keen", "managment", "management"]


def _rank(vocab):
    rows = {w: i for i, w in enumerate(vocab)}
    return rows.get


@pytest.mark.parametrize("word", ["salery", "kevn", "egzecutive", "mangement", "xqzv", "teh", "ht"])
def test_suggestions_equal_a_brute_force_scan(word):
    assert suggest_words(word, _rank(VOCAB)) == brute_force(word, VOCAB)


def test_distance_one_is_preferred_then_the_vocabulary_order():
    # kevn -> kevin (insert i), ken (delete v), keen (substitute v -> e): distance 1, in row order;
    # kelvin (distance 2) is ranked higher in the vocabulary but is not offered while distance-1 words exist
    assert suggest_words("kevn", _rank(VOCAB)) == ("kevin", "ken", "keen")
    assert suggest_words("kevn", _rank(VOCAB), n=1) == ("kevin",)
    # egzecutive -> executive needs two edits (g -> x, delete z): offered when no word is one edit away
    assert suggest_words("egzecutive", _rank(VOCAB)) == ("executive",)


def test_the_cost_is_bounded_whatever_the_vocabulary():
    calls = []

    def rank(w):
        calls.append(w)
        return None

    assert suggest_words("abcdefghijklmnopqrst", rank) == ()  # 20 letters, nothing near: the worst case
    from isoeat._validate import SUGGEST_PROBES

    assert 0 < len(calls) <= SUGGEST_PROBES  # probes of the vocabulary, not a scan of it
    calls.clear()
    suggest_words("ab", rank)
    assert len(calls) <= SUGGEST_PROBES


def test_static_vectors_suggest_from_their_vocabulary_with_the_lowercase_fallback():
    m = StaticVectors(VOCAB, np.eye(len(VOCAB)), name="toy")
    assert m.suggest(["Kevn", "salery", "zzzzzz"]) == {"Kevn": ("kevin", "ken", "keen"),
                                                       "salery": ("salary", "saler", "valery")}


def test_glove_suggestions_match_a_brute_force_scan(glove):
    vocab = list(glove.words)
    for word in ("salery", "kevn"):
        assert glove.suggest([word])[word] == brute_force(word, vocab)


def _misspelled_test(tmp_path):
    f = tmp_path / "t.yaml"
    f.write_text("id: T\nbias_type: Gender\nX: [john, paul, mike, kevn, steve, greg, jeff, bill]\n"
                 "Y: [amy, joan, lisa, sarah, diana, kate, ann, donna]\n"
                 "A: [executive, management, professional, corporation, salery, office, business, career]\n"
                 "B: [home, parents, children, family, cousins, marriage, wedding, relatives]\n", encoding="utf-8")
    return f


def test_weat_records_the_suggestions_of_its_dropped_words(glove, tmp_path):
    (t,) = isoeat.load_tests_from_file(_misspelled_test(tmp_path))
    r = isoeat.weat(glove, t, rng=0, n_permutations=200)
    vocab = list(glove.words)
    assert r.dropped == ("X:kevn", "A:salery")
    assert r.suggestions == (f"X:kevn->{'|'.join(brute_force('kevn', vocab))}",
                             f"A:salery->{'|'.join(brute_force('salery', vocab))}")
    assert r.to_dict()["suggestions"] == list(r.suggestions)
    assert isoeat.WEATResult.from_dict(r.to_dict()).suggestions == r.suggestions


def test_cli_prints_and_records_the_suggestions(glove, tmp_path, capsys):
    from isoeat.cli import main

    f = _misspelled_test(tmp_path)
    assert main(["weat", "--test", str(f), "--calibration", "none", "--permutations", "200"]) == 0
    out = capsys.readouterr().out
    assert "X:kevn (did you mean kevin" in out and "A:salery (did you mean salary" in out
    assert main(["weat", "--test", str(f), "--calibration", "none", "--permutations", "200", "--format",
                 "json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert rec["suggestions"][0].startswith("X:kevn->kevin")


def test_too_few_words_names_the_suggestions_in_the_error(glove):
    t = isoeat.get_test("W6")
    bad = type(t)(**{**{k: getattr(t, k) for k in ("bias_type", "Y", "A", "B")}, "id": "W6-misspelled",
                     "X": type(t.X)("names", ["kevn", "jonh", "paul"])})  # its own id: a built-in's is refused
    with pytest.raises(CoverageError, match=r"kevn \(did you mean kevin.*\).*jonh \(did you mean john"):
        isoeat.weat(glove, bad, rng=0)


def test_sc_weat_target_word_not_found_suggests(glove):
    with pytest.raises(CoverageError, match=r"dcotor \(did you mean doctor\?\)"):
        isoeat.sc_weat(glove, "dcotor", "W6", rng=0)


def test_metric_records_the_suggestions(glove, tmp_path):
    (t,) = isoeat.load_tests_from_file(_misspelled_test(tmp_path))
    r = isoeat.metric(glove, "rnd", t, calibration=None, rng=0, n_permutations=200)
    assert r.suggestions[0].startswith("X:kevn->kevin") and r.to_dict()["suggestions"] == list(r.suggestions)
