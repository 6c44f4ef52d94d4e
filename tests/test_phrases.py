"""Multi-word stimuli on static vectors (issue 42, item 3): phrase token, else the mean of the words' raw vectors.

The rule (``isoeat.backends._phrases``): a stimulus that is not an entry itself and holds several words is its
``_``-joined token if the vocabulary has one (as given, then lowercased where the model folds case), else the
mean of its words' raw vectors, else missing, named with the missing word. Expected values are computed here
from the GloVe 6B 50d files read with numpy and pyarrow (not through isoeat's lookup): mean of the raw rows,
cosine, s(w, A, B), d with ddof 1 (Caliskan et al. 2017, eq. 1-3).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import _raw_glove  # tests/_raw_glove.py (rootdir-relative import, as _w6_corpus)
import isoeat
from isoeat import CoverageError, StaticVectors

US = ["new york", "los angeles", "san francisco", "las vegas", "chicago"]
EUROPE = ["paris", "london", "berlin", "rome", "madrid"]
W1 = isoeat.get_test("W1")


@pytest.fixture(scope="module")
def raw_glove():
    """The GloVe 6B 50d rows by word, read from the package's files with numpy and pyarrow (not isoeat)."""
    return _raw_glove.raw_glove()


def _d(vec, X, Y, A, B, transform=lambda v: v) -> float:
    """WEAT d from scratch: unit rows, mean cosine differences, SD over X u Y with ddof 1."""

    def unit(words):
        M = transform(np.asarray([vec(w) for w in words]))
        return M / np.linalg.norm(M, axis=1, keepdims=True)

    Xu, Yu, Au, Bu = (unit(s) for s in (X, Y, A, B))
    s = lambda T: (T @ Au.T).mean(axis=1) - (T @ Bu.T).mean(axis=1)  # noqa: E731
    sx, sy = s(Xu), s(Yu)
    return float((sx.mean() - sy.mean()) / np.concatenate([sx, sy]).std(ddof=1))


def _test():
    return isoeat.AssociationTest(
        id="cities",
        bias_type="Custom",
        X=isoeat.WordSet("US cities", tuple(US)),
        Y=isoeat.WordSet("European cities", tuple(EUROPE)),
        A=W1.A,
        B=W1.B,
    )


def test_glove_has_no_phrase_tokens_for_these(raw_glove):
    _, index = raw_glove
    # so every multi-word city below is the mean of its words on GloVe 6B (which joins no phrases with '_')
    assert not any(w.replace(" ", "_") in index for w in US if " " in w)
    assert all(part in index for w in US for part in w.split())


def test_weat_d_with_phrases_equals_the_mean_of_raw_word_vectors(glove, raw_glove):
    vec, _ = raw_glove
    res = isoeat.weat(glove, _test(), rng=0)
    expected = _d(vec, US, EUROPE, W1.A.words, W1.B.words)
    assert res.effect_size == pytest.approx(expected, abs=1e-9)
    # the rule is the raw mean: the mean of unit word vectors gives another d (so the check above can fail)
    unit_mean = _d(lambda w: vec(w, unit_words=True), US, EUROPE, W1.A.words, W1.B.words)
    assert abs(unit_mean - expected) > 1e-4
    assert res.embedded == tuple(f"X:{w}->mean-of-words" for w in US if " " in w)
    # appended after the earlier columns (issue 46's convention and cut come after it)
    assert res.to_dict()["embedded"] == list(res.embedded) and list(res.to_dict())[-3:] == ["embedded", "convention",
                                                                                           "cut"]
    assert isoeat.WEATResult.from_dict(res.to_dict(scores=True)) == res


def test_calibrated_space_sees_the_composed_vector(glove, raw_glove):
    vec, _ = raw_glove
    cal = isoeat.fit_calibrator(glove, "zca", n_reference=20_000)
    res = isoeat.weat(glove, _test(), calibration=cal, rng=0)
    assert res.effect_size == pytest.approx(_d(vec, US, EUROPE, W1.A.words, W1.B.words, cal.transform), abs=1e-9)
    # ZCA is affine: compose then whiten == whiten each word then take the mean (the docstring's claim)
    words = np.asarray([vec(w) for w in "new york".split()])
    np.testing.assert_allclose(
        cal.transform(words.mean(axis=0, keepdims=True))[0], cal.transform(words).mean(axis=0), rtol=1e-10, atol=1e-10
    )


def test_sc_weat_of_a_phrase_records_how_it_was_embedded(glove, raw_glove):
    vec, _ = raw_glove
    res = isoeat.sc_weat(glove, ["new york", "paris"], "W7", rng=0)
    A = np.asarray([vec(w) for w in isoeat.get_test("W7").A.words])
    B = np.asarray([vec(w) for w in isoeat.get_test("W7").B.words])
    w = vec("new york")
    cos = lambda M: M @ w / (np.linalg.norm(M, axis=1) * np.linalg.norm(w))  # noqa: E731
    ca, cb = cos(A), cos(B)
    assert res[0].effect_size == pytest.approx((ca.mean() - cb.mean()) / np.concatenate([ca, cb]).std(ddof=1), abs=1e-9)
    assert res[0].embedded == ("target:new york->mean-of-words",) and res[1].embedded == ()


def _toy(words, lowercase_fallback=None):
    rng = np.random.default_rng(7)
    return StaticVectors(words, rng.normal(size=(len(words), 4)), name="toy", lowercase_fallback=lowercase_fallback)


def test_the_phrase_token_comes_first():
    m = _toy(["new", "york", "new_york", "Los_Angeles", "los", "angeles"])
    lk = m.lookup(["new york", "Los Angeles", "los angeles", "york"])
    assert lk.found == ("new york", "Los Angeles", "los angeles", "york") and not lk.missing
    np.testing.assert_array_equal(lk.vectors[0], m.vectors[2])  # new_york, not the mean of new and york
    np.testing.assert_array_equal(lk.vectors[1], m.vectors[3])  # Los_Angeles as given (mixed-case vocabulary)
    np.testing.assert_allclose(lk.vectors[2], m.vectors[4:6].mean(axis=0))  # no los_angeles: the mean
    assert lk.embedded == (
        ("new york", "phrase-token"),
        ("Los Angeles", "phrase-token"),
        ("los angeles", "mean-of-words"),
    )
    assert [lk.how(w) for w in lk.found] == ["phrase-token", "phrase-token", "mean-of-words", "token"]


def test_case_fallback_applies_to_the_phrase_token_and_the_words():
    m = _toy(["new", "york", "new_york", "san", "jose"], lowercase_fallback=True)
    lk = m.lookup(["New York", "San Jose"])
    np.testing.assert_array_equal(lk.vectors[0], m.vectors[2])
    np.testing.assert_allclose(lk.vectors[1], m.vectors[3:5].mean(axis=0))
    assert lk.case_folded == (("New York", "new_york"), ("San Jose", "san jose"))


def test_an_entry_with_a_space_is_a_token():
    m = _toy(["new york", "new", "york"])
    lk = m.lookup(["new york"])
    np.testing.assert_array_equal(lk.vectors[0], m.vectors[0])
    assert lk.embedded == () and lk.how("new york") == "token"


def test_a_phrase_with_a_missing_word_is_missing_and_names_the_word(glove):
    lk = glove.lookup(["new yrok", "new york"])
    assert lk.missing == ("new yrok",) and lk.missing_parts == (("new yrok", "yrok"),)
    assert lk.to_dict()["missing_parts"] == [["new yrok", "yrok"]]
    with pytest.raises(CoverageError) as err:
        isoeat.sc_weat(glove, ["new yrok", "paris"], "W7", rng=0)
    msg = str(err.value)
    assert "\n" not in msg and "its word 'yrok' is not in the vocabulary" in msg and "did you mean new york" in msg


def test_weat_and_scweat_tables_say_how_phrases_were_embedded(tmp_path, capsys):
    from isoeat.cli import main

    test = tmp_path / "cities.yaml"
    test.write_text(
        f"id: cities\nX: {json.dumps(US)}\nY: {json.dumps(EUROPE)}\n"
        f"A: {json.dumps(list(W1.A.words))}\nB: {json.dumps(list(W1.B.words))}\n"
    )
    assert main(["weat", "--test", str(test), "--calibration", "none"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("Phrases:"))
    assert "cities X:new york: mean-of-words" in line and "else the mean of its words' raw vectors" in line
    assert (
        main(["scweat", "--words", "new york,paris", "--attributes", "W7", "--calibration", "none", "--format", "json"])
        == 0
    )
    recs = json.loads(capsys.readouterr().out)
    assert [r["embedded"] for r in recs] == [["target:new york->mean-of-words"], []]


def test_metric_records_and_the_run_table_say_how_phrases_were_embedded(glove, capsys, tmp_path):
    from isoeat.cli import main

    res = isoeat.metric(glove, "mac", _test(), rng=0)
    assert res.embedded == tuple(f"X:{w}->mean-of-words" for w in US if " " in w)
    assert (
        list(res.to_dict())[-1] == "embedded" and isoeat.MetricResult.from_dict(res.to_dict()).embedded == res.embedded
    )
    test = tmp_path / "cities.yaml"
    test.write_text(
        f"id: cities\nX: {json.dumps(US)}\nY: {json.dumps(EUROPE)}\n"
        f"A: {json.dumps(list(W1.A.words))}\nB: {json.dumps(list(W1.B.words))}\n"
    )
    assert main(["metric", "mac", "--test", str(test), "--calibration", "none"]) == 0
    assert "Phrases: cities X:new york: mean-of-words;" in capsys.readouterr().out
    comp = isoeat.compare_calibration(glove, [_test()], calibration="zca", rng=0, n_reference=20_000)
    from isoeat.reporting.tables import comparison_table

    assert "Phrases: cities X:new york: mean-of-words;" in comparison_table(comp)
