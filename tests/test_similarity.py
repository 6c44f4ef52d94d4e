"""Similarity benchmarks (paper Experiment 2, Table 3): readers, Spearman, coverage, bootstrap, CLI."""

from __future__ import annotations

import importlib.util
import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import isoeat
from isoeat import ConfigError, CoverageError, DataFormatError, IsoeatFileNotFoundError, UnknownNameError
from isoeat.backends import StaticVectors
from isoeat.cli import main
from isoeat.similarity import (
    SentencePairs,
    WordPairs,
    compare_similarity,
    evaluate_similarity,
    find_benchmark_file,
    load_benchmark,
    paired_bootstrap_spearman,
    read_sts,
    read_word_pairs,
    resampled_spearman,
    sentence_vectors,
    spearman,
    tokenize,
)
from isoeat.similarity import benchmarks as bm

# ws353 and simlex999 come from gensim's bundled test data (gensim is a dev dependency)
needs_gensim = pytest.mark.skipif(importlib.util.find_spec("gensim") is None, reason="gensim not installed")


# -- gensim equivalence (the reference test) ------------------------------------------------


@pytest.fixture(scope="module")
def glove_kv(glove):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(glove.dim)
    kv.add_vectors(list(glove.words), np.asarray(glove.vectors))
    return kv


@needs_gensim
@pytest.mark.parametrize("name,filename", [("ws353", "wordsim353.tsv"), ("simlex999", "simlex999.txt")])
def test_spearman_equals_gensim_evaluate_word_pairs(glove, glove_kv, name, filename):
    from gensim.test.utils import datapath

    # gensim looks only at the first restrict_vocab (default 300,000) words; isoeat uses the whole
    # vocabulary, so compare with all 400,000. Both lowercase (GloVe 6B is lowercase) and skip OOV pairs.
    _pearson, (rho, _p), oov_pct = glove_kv.evaluate_word_pairs(datapath(filename), restrict_vocab=len(glove))
    res = evaluate_similarity(glove, name)
    assert res.spearman == pytest.approx(rho, abs=1e-9)
    assert res.source == datapath(filename)  # the named benchmark is gensim's bundled file
    assert 100 * (1 - res.coverage) == pytest.approx(oov_pct)
    from scipy.stats import spearmanr

    assert res.spearman == pytest.approx(spearmanr(res.gold, res.similarities)[0], abs=1e-12)


@needs_gensim
def test_oov_handling_matches_gensim_on_a_file_with_unknown_words(glove, glove_kv, tmp_path):
    p = tmp_path / "pairs.tsv"
    p.write_text("# header comment\nTiger\tcat\t7.35\nzzqqxx\tcat\t1.0\nbook\tpaper\t7.46\n"
                 "king\tqueen\t8.58\ncar\tzzqqyy\t2.0\ncomputer\tkeyboard\t7.62\nsun\tmoon\t6.1\n")
    _pe, (rho, _p), oov_pct = glove_kv.evaluate_word_pairs(str(p), restrict_vocab=len(glove))
    res = evaluate_similarity(glove, p)
    assert res.spearman == pytest.approx(rho, abs=1e-9)
    assert (res.n_pairs, res.n_total) == (5, 7) and 100 * (1 - res.coverage) == pytest.approx(oov_pct)
    assert res.oov_pairs == (("zzqqxx", "cat", 3), ("car", "zzqqyy", 6))
    assert set(res.missing) == {"zzqqxx", "zzqqyy"}


# -- readers: real files ---------------------------------------------------------------------------------


@needs_gensim
def test_ws353_combined_csv_and_gensim_copy_agree(shared_data):
    a = read_word_pairs(shared_data / "similarity/wordsim353/combined.csv")
    b = load_benchmark("ws353")
    assert len(a) == len(b) == 353
    assert a.word1 == b.word1 and a.word2 == b.word2
    np.testing.assert_array_equal(a.scores, b.scores)
    assert a.lines[0] == 2  # the header line is skipped


@needs_gensim
def test_simlex_original_layout_reads_the_simlex999_column(shared_data):
    a = read_word_pairs(shared_data / "similarity/SimLex-999/SimLex-999.txt")  # TAB, CRLF, POS column, header
    b = load_benchmark("simlex999")
    assert len(a) == 999 and a.word1 == b.word1 and a.word2 == b.word2
    np.testing.assert_array_equal(a.scores, b.scores)
    assert (a.word1[0], a.word2[0], a.scores[0]) == ("old", "new", 1.58)


@pytest.mark.parametrize(
    "name,n,first,lo,hi",
    [("men", 3000, ("sun", "sunlight", 50.0), 0, 50), ("rg65", 65, ("gem", "jewel", 3.94), 0, 4),
     ("rw", 2034, ("squishing", "squirt", 5.88), 0, 10), ("mturk771", 771, ("access", "gateway", 3.791666667), 1, 5)],
)
def test_named_benchmarks_from_shared_data(shared_data, monkeypatch, name, n, first, lo, hi):
    monkeypatch.setenv("ISOEAT_DATA_DIR", str(shared_data))
    b = load_benchmark(name)
    assert isinstance(b, WordPairs) and len(b) == n
    assert (b.word1[0], b.word2[0], b.scores[0]) == first
    assert lo <= b.scores.min() and b.scores.max() <= hi


def test_stsb_parser_on_the_real_files(shared_data):
    counts = {"sts-train.csv": (5749, 197), "sts-dev.csv": (1500, 22), "sts-test.csv": (1379, 284)}
    for fname, (n, extra) in counts.items():
        s = read_sts(shared_data / "sts/stsbenchmark" / fname)
        assert len(s) == n and s.n_extra_fields == extra
        assert 0.0 <= s.scores.min() and s.scores.max() <= 5.0
        assert all(x and y for x, y in zip(s.sentence1, s.sentence2))
        assert set(s.genres) <= {"main-news", "main-captions", "main-forum", "main-forums"}
    test = read_sts(shared_data / "sts/stsbenchmark/sts-test.csv")
    assert test.sentence1[0] == "A girl is styling her hair." and test.scores[0] == 2.5
    # a row with the two trailing attribution fields keeps the right sentences
    i = test.lines.index(next(ln for ln, g in zip(test.lines, test.genres) if g == "main-forums"))
    assert not test.sentence2[i].startswith("StackExchange")
    # quotes are not CSV-quoted fields
    assert any('"' in x for x in test.sentence1 + test.sentence2)
    assert isinstance(load_benchmark(shared_data / "sts/stsbenchmark/sts-dev.csv"), SentencePairs)  # sniffed


# -- readers: bad input -----------------------------------------------------------------------------------


def test_malformed_word_pair_lines_name_file_and_line(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_text("a\tb\t1.0\nc\td\tlots\n")
    with pytest.raises(DataFormatError, match=r"bad\.tsv:2: score 'lots'"):
        read_word_pairs(p)
    p.write_text("a\tb\t1.0\nc\td\n")
    with pytest.raises(DataFormatError, match=r"bad\.tsv:2: 2 field\(s\), expected 3"):
        read_word_pairs(p)
    p.write_text("a b 1.0\nc d 2.0 extra\n")
    with pytest.raises(DataFormatError, match=r"bad\.tsv:2: 4 field"):
        read_word_pairs(p)
    p.write_text("a\tb\t1.0\n\tc\t2.0\n")
    with pytest.raises(DataFormatError, match=r"bad\.tsv:2: empty word"):
        read_word_pairs(p)
    p.write_text("a\tb\tnan\n")
    with pytest.raises(DataFormatError, match=r"bad\.tsv"):
        read_word_pairs(p)
    p.write_text("# only a comment\n\n")
    with pytest.raises(DataFormatError, match="no word pairs"):
        read_word_pairs(p)
    p.write_bytes(b"a\tb\t1.0\nc\xff\td\t2.0\n")
    with pytest.raises(DataFormatError, match=r"bad\.tsv:2: not valid UTF-8"):
        read_word_pairs(p)


def test_malformed_sts_lines_name_file_and_line(tmp_path):
    p = tmp_path / "sts.csv"
    good = "main-news\theadlines\t2015\t0001\t3.2\tA man runs.\tA man is running.\n"
    p.write_text(good + "main-news\theadlines\t2015\t0002\tx\tA.\tB.\n")
    with pytest.raises(DataFormatError, match=r"sts\.csv:2: score 'x'"):
        read_sts(p)
    p.write_text(good + "main-news\theadlines\t2015\t0002\t1.0\tonly one sentence\n")
    with pytest.raises(DataFormatError, match=r"sts\.csv:2: 6 tab-separated"):
        read_sts(p)


def test_benchmark_with_no_in_vocabulary_pairs_is_an_error_not_nan(glove, tmp_path):
    p = tmp_path / "oov.tsv"
    p.write_text("zzqqa\tzzqqb\t1.0\nzzqqc\tzzqqd\t2.0\nzzqqe\tzzqqf\t3.0\n")
    with pytest.raises(CoverageError, match="none of the 3 pairs"):
        evaluate_similarity(glove, p)
    p.write_text("cat\tdog\t1.0\nzzqqc\tzzqqd\t2.0\nbook\tpaper\t3.0\n")
    with pytest.raises(CoverageError, match="only 2 of the 3"):
        evaluate_similarity(glove, p)
    p.write_text("cat\tdog\t1.0\nzzqqc\tzzqqd\t2.0\nbook\tpaper\t3.0\nsun\tmoon\t4.0\n")
    with pytest.raises(CoverageError, match="below min_coverage"):
        evaluate_similarity(glove, p, min_coverage=0.9)
    assert evaluate_similarity(glove, p).coverage == 0.75


def test_constant_human_scores_are_refused(glove, tmp_path):
    p = tmp_path / "const.tsv"
    p.write_text("cat\tdog\t5\nbook\tpaper\t5\nsun\tmoon\t5\nking\tqueen\t5\n")
    with pytest.raises(DataFormatError, match="human scores .* are equal"):
        evaluate_similarity(glove, p)
    with pytest.raises(DataFormatError, match="constant"):
        spearman([1, 1, 1], [1, 2, 3])


def test_unknown_name_and_missing_file_messages(monkeypatch, tmp_path):
    with pytest.raises(UnknownNameError, match="did you mean ws353"):
        load_benchmark("ws35")
    with pytest.raises(IsoeatFileNotFoundError, match="no such benchmark file"):
        load_benchmark(str(tmp_path / "nope.txt"))
    monkeypatch.delenv("ISOEAT_DATA_DIR", raising=False)
    monkeypatch.setattr(bm, "_checkout_shared", lambda: None)
    with pytest.raises(IsoeatFileNotFoundError, match=r"ISOEAT_DATA_DIR.*--benchmark PATH.*is not set"):
        find_benchmark_file("men")
    monkeypatch.setenv("ISOEAT_DATA_DIR", str(tmp_path / "missing"))  # named, never another folder used instead
    with pytest.raises(IsoeatFileNotFoundError, match=r"\$ISOEAT_DATA_DIR=.*missing: no such file or folder"):
        find_benchmark_file("men")
    # the data folder may hold the file under its layout or directly
    (tmp_path / "rg65.txt").write_text("gem\tjewel\t3.94\nnoon\tmidday\t3.94\ncord\tsmile\t0.02\n")
    monkeypatch.setenv("ISOEAT_DATA_DIR", str(tmp_path))
    assert find_benchmark_file("rg65") == tmp_path / "rg65.txt"
    assert load_benchmark("RG-65").title == "RG-65"


@needs_gensim
def test_ws353_and_simlex999_need_no_shared_data(monkeypatch):
    monkeypatch.delenv("ISOEAT_DATA_DIR", raising=False)
    monkeypatch.setattr(bm, "_checkout_shared", lambda: None)
    assert len(load_benchmark("ws353")) == 353 and len(load_benchmark("simlex999")) == 999


# -- Spearman and the paired bootstrap --------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 30), st.integers(0, 2**32 - 1), st.sampled_from([None, 1, 3]))
def test_resampled_spearman_equals_scipy_on_explicit_resamples(n, seed, decimals):
    from scipy.stats import spearmanr

    r = np.random.default_rng(seed)
    g = r.normal(size=n)
    a = g + r.normal(size=n)
    if decimals is not None:  # ties in the data on top of the duplicates a resample makes
        g, a = np.round(g, decimals), np.round(a, decimals)
    idx = r.integers(0, n, size=(25, n))
    counts = np.stack([np.bincount(i, minlength=n) for i in idx])
    got = resampled_spearman(g, [a], counts)[0]
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = np.array([spearmanr(g[i], a[i])[0] for i in idx])
    np.testing.assert_allclose(got, ref, atol=1e-12, equal_nan=True)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=1, max_size=40))
def test_rankdata_and_spearman_equal_scipy(values):
    from scipy.stats import rankdata as sp_rankdata
    from scipy.stats import spearmanr

    from isoeat.similarity.evaluate import rankdata

    np.testing.assert_array_equal(rankdata(values), sp_rankdata(values))
    y = np.arange(len(values)) % 7
    if len(set(values)) > 1 and len(set(y)) > 1:
        assert spearman(values, y) == pytest.approx(spearmanr(values, y)[0], abs=1e-12)


def test_bootstrap_is_reproducible_for_a_fixed_seed(rng):
    g = rng.normal(size=150)
    a, b = g + rng.normal(size=150) * 2, g + rng.normal(size=150) * 1.5
    r1 = paired_bootstrap_spearman(g, a, b, n_resamples=3000, rng=7)
    r2 = paired_bootstrap_spearman(g, a, b, n_resamples=3000, rng=7)
    r3 = paired_bootstrap_spearman(g, a, b, n_resamples=3000, rng=8)
    assert r1 == r2
    assert r1.ci_low != r3.ci_low
    assert r1.seed == 7 and r1.n_valid == 3000 and r1.n_pairs == 150
    assert r1.delta == pytest.approx(spearman(g, b) - spearman(g, a), abs=1e-15)
    assert r1.ci_low < r1.delta < r1.ci_high
    assert r1.ci_a_low < r1.rho_a < r1.ci_a_high and r1.ci_b_low < r1.rho_b < r1.ci_b_high


def test_bootstrap_p_value_conventions(rng):
    g = rng.normal(size=100)
    a = g + rng.normal(size=100)
    same = paired_bootstrap_spearman(g, a, a, n_resamples=500, rng=0)
    assert same.delta == 0 and same.p_value == 1.0 and same.ci_low == same.ci_high == 0
    better = paired_bootstrap_spearman(g, a, g + 0.01 * rng.normal(size=100), n_resamples=999, rng=0)
    assert better.p_value == pytest.approx(2 / 1000)  # never 0: (k+1)/(B+1), doubled
    with pytest.raises(ConfigError):
        paired_bootstrap_spearman(g, a, a[:-1])
    with pytest.raises(ConfigError):
        paired_bootstrap_spearman(g, a, a, n_resamples=0)
    with pytest.raises(DataFormatError):
        paired_bootstrap_spearman(np.ones(10), a[:10], a[:10])


def test_bootstrap_interval_covers_the_truth_under_the_null(rng):
    # two equally good, independent noisy copies: the 95% interval on delta should cover 0 about 95%
    cover = 0
    for _ in range(40):
        g = rng.normal(size=120)
        a, b = g + rng.normal(size=120), g + rng.normal(size=120)
        r = paired_bootstrap_spearman(g, a, b, n_resamples=400, rng=rng)
        cover += r.ci_low <= 0 <= r.ci_high
    assert cover >= 33


# -- sentence vectors --------------------------------------------------------------------------------------


def test_tokenize_rule():
    assert tokenize("A woman's hat doesn't cost $1,000.") == ["a", "woman", "'s", "hat", "does", "n't", "cost", "1,000"]
    assert tokenize("Well-known U.S. can’t") == ["well-known", "u.s", "ca", "n't"]


def test_static_sentence_vectors_are_means_of_known_words():
    m = StaticVectors(["a", "cat", "sat", "u", "s"], np.arange(15, dtype=float).reshape(5, 3) + 1, name="toy")
    sv = sentence_vectors(m, ["A cat sat on zzz.", "Nothing known!", "u.s"])
    assert sv.kept.tolist() == [True, False, True] and sv.n_dropped == 1
    np.testing.assert_allclose(sv.vectors[0], (m.vectors[0] + m.vectors[1] + m.vectors[2]) / 3)
    np.testing.assert_allclose(sv.vectors[1], (m.vectors[3] + m.vectors[4]) / 2)  # OOV compound split
    assert {"on", "zzz", "nothing", "known"} <= set(sv.missing_tokens)
    cal = isoeat.ZCAWhitener(eps=0).fit(np.random.default_rng(0).normal(size=(50, 3)))
    np.testing.assert_allclose(sentence_vectors(m, ["A cat sat"], calibration=cal).vectors[0],
                               cal.transform(m.vectors[:3]).mean(axis=0))


class _SentenceEncoder:
    """Stands in for a transformer/sentence encoder: only encode_sentences."""

    name = "fake-encoder"
    dim = 4
    fingerprint = "fake"

    def __init__(self):
        self.calls = 0

    def encode_sentences(self, sentences):
        self.calls += 1
        r = np.random.default_rng(0)
        table = {}
        out = []
        for s in sentences:
            key = len(s.split())
            table.setdefault(key, r.normal(size=4))
            out.append(table[key] + 0.01 * len(s))
        return np.array(out)


def test_sentence_encoder_route_is_used_when_present(tmp_path):
    enc = _SentenceEncoder()
    sv = sentence_vectors(enc, ["one two", "three four five"])
    assert sv.method == "encode_sentences" and sv.vectors.shape == (2, 4) and enc.calls == 1
    p = tmp_path / "sts.csv"
    rows = ["g\tf\t2015\t%04d\t%.1f\t%s\t%s" % (i, i % 5, "a " * (i % 4 + 1), "b " * (i % 3 + 1))
            for i in range(12)]
    p.write_text("\n".join(rows) + "\n")
    cal = isoeat.ZCAWhitener().fit(np.random.default_rng(1).normal(size=(100, 4)))
    c = compare_similarity(enc, p, cal, n_resamples=100, rng=0, force=True)
    assert c.raw.method == "encode_sentences" and c.raw.n_pairs == 12 and c.raw.kind == "sentence"


# -- real GloVe, raw vs ZCA ----------------------------------------------------------------------------------


@needs_gensim
def test_glove_ws353_raw_vs_zca_with_bootstrap(glove, glove_zca):
    c = compare_similarity(glove, "ws353", glove_zca, n_resamples=2000, rng=0)
    assert c.raw.n_pairs == c.calibrated.n_pairs == 353 and c.raw.coverage == 1.0
    np.testing.assert_array_equal(c.raw.used, c.calibrated.used)
    assert 0.45 < c.raw.spearman < 0.55 and c.delta > 0  # measured: .503 -> .577
    assert c.bootstrap.ci_low > 0 and c.bootstrap.p_value < 0.01
    recs = c.records()
    assert [r["calibration"] for r in recs] == ["none", "zca"]
    for r in recs:
        assert {"model", "calibration", "benchmark", "spearman", "n_pairs", "coverage", "delta_spearman",
                "delta_ci_low", "delta_ci_high", "p_value", "oov_pairs"} <= set(r)
    assert recs[0]["delta_spearman"] is None and recs[1]["delta_spearman"] == pytest.approx(c.delta)


def test_glove_stsb_mean_pooling(glove, glove_zca, shared_data, monkeypatch):
    monkeypatch.setenv("ISOEAT_DATA_DIR", str(shared_data))
    r = evaluate_similarity(glove, "stsb")
    assert r.kind == "sentence" and r.n_total == 1379 and r.coverage == 1.0
    assert 0.35 < r.spearman < 0.5  # 50d bag of words (the paper's 100d GloVe: .560)
    assert "mean of in-vocabulary word vectors" in r.method


# -- command line ----------------------------------------------------------------------------------------------


@needs_gensim
def test_cli_similarity_json_records(capsys, glove):
    assert main(["similarity", "--benchmark", "ws353", "--calibration", "zca", "--bootstrap", "500",
                 "--format", "json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert len(recs) == 2
    for r in recs:
        assert r["model"] == "glove-6b-50d" and r["benchmark"] == "ws353" and r["n_pairs"] == 353
        assert {"calibration", "spearman", "coverage"} <= set(r)
    assert recs[1]["n_resamples"] == 500 and recs[1]["delta_ci_low"] < recs[1]["delta_spearman"]
    lib = evaluate_similarity(glove, "ws353")
    assert recs[0]["spearman"] == pytest.approx(lib.spearman, abs=1e-12)


@needs_gensim
def test_cli_similarity_table_like_table_3(capsys, glove):
    assert main(["similarity", "--benchmark", "ws353,simlex999", "--bootstrap", "300"]) == 0
    out = capsys.readouterr().out
    assert "Bench." in out and "Raw" in out and "White" in out and "Sig." in out
    assert "WS-353" in out and "SL-999" in out and "300 resamples (seed 0)" in out


@needs_gensim
def test_cli_similarity_raw_only_and_bad_file(capsys, glove, tmp_path):
    assert main(["similarity", "--calibration", "none", "--benchmark", "ws353", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and "spearman" in lines[0]
    bad = tmp_path / "bad.txt"
    bad.write_text("a b 1\nc d x\n")
    assert main(["similarity", "--benchmark", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("isoeat: error:") and "bad.txt:2:" in err and len(err.strip().splitlines()) == 1
    assert main(["similarity", "--benchmark", "nosuch"]) == 2
    assert "unknown benchmark" in capsys.readouterr().err
