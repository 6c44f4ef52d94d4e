"""The adversary's cases of peers' conventions (issue 46): what was silently wrong, each with its fix.

Provenance of every expected value is given at its test; none is copied from isoeat's output.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

import isoeat
from isoeat.cli import main
from isoeat.stats.conventions import CONVENTIONS, convention_lines, p_note


def _cos(U, V):
    U = np.asarray(U, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    return (U / np.linalg.norm(U, axis=1, keepdims=True)) @ (V / np.linalg.norm(V, axis=1, keepdims=True)).T


# --- 1. Case fallback: WEFE's default and responsibly lose cased words; isoeat finds them lowercased -----------


def test_wefe_footer_says_wefe_default_loses_the_cased_words_of_w6(glove):
    # WEFE 1.0.1 itself, run on the bundled GloVe vectors of W1-W10 (isoeat export of every word and its
    # lowercase form, gensim KeyedVectors, WEAT().run_query(query, model, return_effect_size=True), its default
    # preprocessors=[{}]) returned nan for W3, W4, W5, W6, W8 and W10 ("lost proportionally more words than
    # specified in 'lost_words_threshold'"): GloVe 6B is lowercased and these tests hold names ("John").
    # isoeat's --convention wefe is WEFE with preprocessors=[{}, {"lowercase": True}]: it must say so.
    r = isoeat.weat(glove, "W6", rng=0, convention="wefe")
    assert r.case_folded  # John->john, ...
    lines = convention_lines([r])
    hit = [ln for ln in lines if "preprocessors=[{}]" in ln]
    assert len(hit) == 1 and hit[0].startswith("W6: wefe:") and "nan" in hit[0] and "John->john" in hit[0]
    assert "{'lowercase': True}" in hit[0]
    # a test with no cased word gets no such line (W7: all lowercase words)
    assert not [
        ln for ln in convention_lines([isoeat.weat(glove, "W7", rng=0, convention="wefe")]) if "preprocessors" in ln
    ]
    # and the default convention none (isoeat's own fallback is reported in case_folded as before)
    assert convention_lines([isoeat.weat(glove, "W6", rng=0)]) == []


def test_responsibly_footer_says_its_word_in_model_loses_the_cased_words_of_w8(glove):
    # responsibly 0.1.2 _filter_by_model_weat_stimuli (responsibly/we/weat.py): `word in model`, no case
    # fallback; on a lowercased GloVe it keeps X minus Einstein/NASA/Shakespeare, then samples Y down to that size
    # with random.seed(42). That d, from scratch here, differs from the d isoeat gives with the words found
    # lowercased: the footer must say the peer's sets differ.
    t = isoeat.get_test("W8")
    vocab = glove.lookup([w for s in (t.X, t.Y, t.A, t.B) for w in s.words])
    exact = {w for w in vocab.found if w == w.lower()}  # what `word in model` finds in a lowercased vocabulary

    def filt(words):
        return [w for w in words if w in exact]

    def samp(seq, n):
        random.seed(42)
        return random.sample(seq, n) if len(seq) > n else seq

    sets = {r: filt(getattr(t, r).words) for r in "XYAB"}
    for a, b in (("X", "Y"), ("A", "B")):
        n = min(len(sets[a]), len(sets[b]))
        sets[a], sets[b] = samp(sets[a], n), samp(sets[b], n)
    V = {r: np.asarray(glove.lookup(sets[r]).vectors) for r in "XYAB"}

    def s(W):
        return _cos(W, V["A"]).mean(1) - _cos(W, V["B"]).mean(1)

    sx, sy = s(V["X"]), s(V["Y"])
    d_resp = (sx.mean() - sy.mean()) / np.std(np.r_[sx, sy], ddof=0)
    r = isoeat.weat(glove, "W8", rng=0, convention="responsibly")
    assert abs(r.effect_size - d_resp) > 1e-3  # the peer's own d on this model is another number
    hit = [ln for ln in convention_lines([r]) if "word in model" in ln]
    assert len(hit) == 1 and hit[0].startswith("W8: responsibly:") and "3 cased word(s)" in hit[0]


# --- 2. "isoeat's exact p" said of a Monte Carlo p ---------------------------------------------------------


def test_p_note_names_isoeats_p_method_not_exact_when_sampled(glove, capsys):
    # with --method monte-carlo --permutations 1000 isoeat's p is (k+1)/1001, a Monte Carlo estimate: the
    # footer must not call it exact (it said "isoeat's exact p is 0.000999").
    conv = CONVENTIONS.get("wefe")
    assert p_note(conv, 0.5).endswith("isoeat's exact p is 0.5")
    assert p_note(conv, 0.5, p_method="monte-carlo").endswith("isoeat's monte-carlo p is 0.5")
    args = [
        "weat",
        "--test",
        "W6",
        "--calibration",
        "none",
        "--method",
        "monte-carlo",
        "--permutations",
        "1000",
        "--seed",
        "0",
    ]
    assert main([*args, "--convention", "wefe"]) == 0
    out = capsys.readouterr().out
    assert "isoeat's exact p" not in out and "isoeat's monte-carlo p is 0.000999" in out  # 1/1001
    assert main([*args, "--explain"]) == 0
    out = capsys.readouterr().out
    assert "isoeat's exact p" not in out and "isoeat's monte-carlo p is 0.000999" in out


# --- 3. --explain hides what a convention left out (attributes too) ----------------------------------------

UNEQUAL = """id: U1
bias_type: probe
X: [rose, tulip, daisy, lily, orchid, violet]
Y: [ant, wasp, flea]
A: [love, peace, joy, happy, gift]
B: [hatred, war, filth]
"""


def test_explain_names_the_words_each_convention_left_out(glove, tmp_path: Path, capsys):
    f = tmp_path / "u1.yaml"
    f.write_text(UNEQUAL, encoding="utf-8")

    # responsibly: random.seed(42); random.sample(words, 3) on X (6 words) and on A (5): by hand with Python's
    # random, as responsibly/we/weat.py _sample_if_bigger calls it; sent-bias: X cut from its end to 3 words.
    def left(words, n):
        random.seed(42)
        keep = set(random.sample(words, n))
        return [w for w in words if w not in keep]

    X = ["rose", "tulip", "daisy", "lily", "orchid", "violet"]
    A = ["love", "peace", "joy", "happy", "gift"]
    resp = [f"X:{w}" for w in left(X, 3)] + [f"A:{w}" for w in left(A, 3)]
    rows = {r.convention: r for r in isoeat.explain_conventions(glove, str(f), rng=0)}
    assert list(rows["responsibly"].cut) == resp
    assert list(rows["sent-bias"].cut) == ["X:lily", "X:orchid", "X:violet"]
    assert list(rows["wefe"].cut) == []
    assert main(["weat", "--test", str(f), "--explain", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert f"responsibly left out {', '.join(resp)}" in out
    assert "sent-bias left out X:lily, X:orchid, X:violet" in out
    assert main(["weat", "--test", str(f), "--explain", "--seed", "0", "--format", "json"]) == 0
    recs = {r["convention"]: r for r in json.loads(capsys.readouterr().out)}
    assert recs["responsibly"]["cut"] == resp and recs["isoeat"]["cut"] == []
    assert main(["weat", "--test", str(f), "--explain", "--seed", "0", "--format", "csv"]) == 0
    assert ";".join(resp) in capsys.readouterr().out  # the house CSV writer joins a list with ";"


@pytest.mark.parametrize("bad", [3, None, ["wefe"]])
def test_convention_of_a_bad_type_is_one_config_error(glove, bad):
    with pytest.raises(isoeat.ConfigError, match="convention must be a name"):
        isoeat.weat(glove, "W6", rng=0, convention=bad)


# --- 4. --explain --ci: intervals computed for every convention, then dropped without a word --------------


def test_explain_refuses_an_interval_in_one_line(glove, capsys):
    # the explain rows have no interval columns: a typed --ci (or ci=True) was computed seven times and never
    # shown (JSON neither); it must be one line naming it, exit 2, as --ddof is.
    for extra in (["--ci"], ["--ci-method", "bca"], ["--bootstrap", "200"]):
        assert main(["weat", "--test", "W6", "--explain", *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and f"drop {extra[0]}" in err
    with pytest.raises(isoeat.ConfigError, match="ci"):
        isoeat.explain_conventions(glove, "W6", rng=0, ci=True)


# --- 5. --convention on a command that does not take it -----------------------------------------------------


@pytest.mark.parametrize("command", [["ceat", "--test", "W6"], ["run"], ["metric", "--test", "W6"]])
def test_convention_on_a_command_without_it_names_the_commands_that_take_it(command, capsys):
    # argparse's own line was "isoeat: error: unrecognized arguments: --convention wefe (see 'isoeat --help')":
    # the wrong --help, and no word of where the option lives (weat and scweat: commands/core.py add(...)).
    with pytest.raises(SystemExit) as exc:
        main([*command, "--convention", "wefe"])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and "\n" not in err
    assert err.startswith(
        f"isoeat {command[0]}: error: unrecognized arguments: --convention"
    )  # run, metric: wefe positional
    assert "--convention is an option of scweat, weat" in err and f"see 'isoeat {command[0]} --help'" in err


def test_an_option_no_command_has_keeps_the_plain_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["weat", "--test", "W6", "--no-such-option"])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and err == (
        "isoeat weat: error: unrecognized arguments: --no-such-option (see 'isoeat weat --help')"
    )


# --- 6. A contextual model: the peer's encoding is named, not applied, and must be said --------------------


class _Streaming:
    """The bundled GloVe dressed as a contextual encoder (isoeat._types.StreamingReference: reference_batches)."""

    name = "fake-bert"

    def __init__(self, inner):
        self._inner = inner

    def lookup(self, words, **kw):
        return self._inner.lookup(words, **kw)

    def reference_batches(self, n, **kw):  # pragma: no cover - never called here
        raise AssertionError

    def __getattr__(self, key):
        return getattr(self._inner, key)


@pytest.mark.parametrize("name", ["sent-bias", "wefe", "caliskan"])
def test_a_peer_encoding_on_a_contextual_model_is_said(glove, name):
    # sent-bias lowercases a cased BERT and pools the first token (sentbias/encoders/bert.py:8, 25); WEFE,
    # responsibly and Caliskan et al. take static word vectors: on a contextual model none of that is what isoeat
    # encodes, and `weat --model minilm --convention sent-bias` printed only "convention sent-bias ...: ddof 1".
    with pytest.warns(isoeat.IsoeatWarning, match=f"convention {name}: .*not applied.*fake-bert"):
        isoeat.weat(_Streaming(glove), "W7", rng=0, convention=name)


def test_no_encoding_warning_where_the_convention_takes_the_model_as_it_is(glove, recwarn):
    isoeat.weat(_Streaming(glove), "W7", rng=0, convention="ml-eat")  # ML-EAT: the model's own encoding
    isoeat.weat(_Streaming(glove), "W7", rng=0)  # isoeat's default
    isoeat.weat(glove, "W7", rng=0, convention="sent-bias")  # a static model: nothing to say
    isoeat.sc_weat(_Streaming(glove), "nurse", "W7", rng=0, convention="ml-eat")
    assert not [w for w in recwarn if "not applied" in str(w.message)]
    with pytest.warns(isoeat.IsoeatWarning, match="convention caliskan: .*not applied"):
        isoeat.sc_weat(_Streaming(glove), "nurse", "W7", rng=0, convention="caliskan")


# --- 7. responsibly's sample by words, not positions ----------------------------------------------------------


def test_sample_42_keeps_exactly_the_positions_random_sample_draws_even_with_repeated_words():
    # random.sample(population, k) picks positions by len(population) and k alone (CPython random.py), so
    # responsibly's random.seed(42); random.sample(words, n) keeps the words at positions
    # random.seed(42); random.sample(range(len(words)), n). isoeat kept "every word equal to a drawn one": with a
    # word twice in the list (possible through equal_sizes itself, not through a test file, which refuses it)
    # that kept n + 1 rows.
    from isoeat.stats.conventions import equal_sizes

    conv = CONVENTIONS.get("responsibly")
    for words in (["a", "b", "a", "c", "d"], ["a", "a", "b", "c", "d", "e"], list("abcdefg")):
        for n in range(2, len(words)):
            random.seed(42)
            pos = sorted(random.sample(range(len(words)), n))
            w = {"X": words, "Y": [f"y{i}" for i in range(n)], "A": ["p", "q"], "B": ["r", "s"]}
            v = {k: np.arange(len(x), dtype=float).reshape(-1, 1) for k, x in w.items()}
            out, cut = equal_sizes(conv, w, v)
            assert out["X"][:, 0].tolist() == pos, (words, n)
            assert cut == [f"X:{words[i]}" for i in range(len(words)) if i not in pos]


# --- 8. The footer of records read back from CSV ----------------------------------------------------------------


def test_convention_lines_of_csv_records_are_those_of_the_results(glove, tmp_path: Path, capsys):
    # a CSV record holds a list as "a;b" (reporting/tables.py): the footer split it into characters
    # ("left out Y, :, w, e, e, v, i, l") and counted one case-folded word for sixteen.
    import csv
    import io

    f = tmp_path / "u1.yaml"
    f.write_text(UNEQUAL, encoding="utf-8")
    for test, name in ((str(f), "responsibly"), ("W6", "wefe"), ("W1", "sent-bias")):
        results = [isoeat.weat(glove, test, rng=0, convention=name, calibration=c) for c in (None, "zca")]
        assert main(["weat", "--test", test, "--convention", name, "--seed", "0", "--format", "csv"]) == 0
        rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
        assert convention_lines(rows) == convention_lines(results)


# --- 9. caliskan: the paper's p is written strictly greater ----------------------------------------------------


def test_caliskan_names_the_papers_strictly_greater_p(glove):
    # Caliskan et al. 2017, supplement: "the one-sided P value of the permutation test is
    # Pr_i[s(X_i, Y_i, A, B) > s(X, Y, A, B)]" (the convention's own source line). Counted by hand over the 12,870
    # partitions of W6 that p is 0 (no partition exceeds the observed one), where isoeat's P[S_i >= S] is 1/12870:
    # the row said nothing ("isoeat's default by design").
    import itertools

    t = isoeat.get_test("W6")
    V = {r: np.asarray(glove.lookup(list(getattr(t, r).words)).vectors) for r in "XYAB"}
    s = np.concatenate([_cos(V[r], V["A"]).mean(1) - _cos(V[r], V["B"]).mean(1) for r in "XY"])
    observed = s[:8].sum()
    sums = np.array([s[list(c)].sum() for c in itertools.combinations(range(16), 8)])
    strict, at_least = np.mean(sums > observed + 1e-12), np.mean(sums >= observed - 1e-12)
    assert strict == 0.0 and at_least == pytest.approx(1 / 12870)
    r = isoeat.weat(glove, "W6", rng=0, convention="caliskan")
    assert r.p_value == pytest.approx(at_least)
    note = p_note(CONVENTIONS.get("caliskan"), r.p_value)
    assert "strictly greater" in note and note.endswith("isoeat's exact p is 7.77e-05")
    rows = {x.convention: x for x in isoeat.explain_conventions(glove, "W6", rng=0)}
    assert rows["caliskan"].p_note == note


# --- 10. WEFE's lost-vocabulary threshold, at its boundary --------------------------------------------------------


def _lost_test(tmp_path: Path, n_x: int) -> str:
    f = tmp_path / f"lost{n_x}.yaml"
    xs = ["rose", "tulip", "daisy", "lily", "orchid", "violet"][: n_x - 1] + ["zzqqxxnotaword"]
    f.write_text(
        "id: L1\nbias_type: probe\n"
        f"X: [{', '.join(xs)}]\nY: [ant, wasp, flea, moth, roach]\n"
        "A: [love, peace, joy, happy, gift]\nB: [hatred, war, filth, agony, grief]\n",
        encoding="utf-8",
    )
    return str(f)


def test_wefe_lost_vocabulary_threshold_at_its_boundary(glove, tmp_path: Path, recwarn):
    # WEFE 1.0.1 wefe/preprocessing.py _check_lost_vocabulary_threshold: nan where lost / len(set) > 0.2.
    # 1 of 5 lost (0.2, not > 0.2): WEFE computes d, and so does isoeat (kept 0.8, not < min_coverage 0.8), silently.
    r = isoeat.weat(glove, _lost_test(tmp_path, 5), rng=0, convention="wefe")
    assert r.n_x == 4 and not [w for w in recwarn if "lost_vocabulary_threshold" in str(w.message)]
    # 1 of 4 lost (0.25 > 0.2): WEFE gives nan; isoeat refuses at its default min_coverage 0.8 ...
    with pytest.raises(isoeat.CoverageError):
        isoeat.weat(glove, _lost_test(tmp_path, 4), rng=0, convention="wefe")
    # ... and with min_coverage lowered it measures, where WEFE would give nan: that must be said
    with pytest.warns(isoeat.IsoeatWarning, match=r"convention wefe: X lost 1 of 4 words \(25%\).*nan"):
        r = isoeat.weat(glove, _lost_test(tmp_path, 4), rng=0, convention="wefe", min_coverage=0.5)
    assert r.n_x == 3
