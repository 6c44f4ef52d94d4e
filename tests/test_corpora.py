"""Reference corpora: readers, filters, sampling, word index, fingerprints, errors."""

from __future__ import annotations

import gzip
import json
import pickle
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from isoeat import (
    ConfigError,
    DataFormatError,
    IsoeatFileNotFoundError,
    MissingDependencyError,
    UnknownNameError,
)
from isoeat.corpora import (
    Contexts,
    Corpus,
    Sample,
    clear_corpus_cache,
    detokenize_wikitext,
    is_wikitext_header,
    load_corpus,
    regex_split,
    sniff_format,
)
from isoeat.corpora._readers import iter_files

SPLITTERS = ["sentencex", "regex"]


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_corpus_cache()
    yield
    clear_corpus_cache()


def n_tokens(n: int) -> str:
    """A natural sentence of exactly n whitespace tokens."""
    return "Sentence " + " ".join(["token"] * (n - 2)) + " end."


def wt_tokens(n: int) -> str:
    """The same sentence in WikiText spacing (the final period is its own token)."""
    return n_tokens(n)[:-1] + " ."


WIKITEXT = "\n".join(
    [
        " ",
        " = Test Article With A Very Long Title Indeed = ",
        " ",
        " The team won 3 @,@ 000 games in a short @-@ term period of 2 @.@ 5 years . The crowd 's chant was "
        '" hello there " , and it lasted ( about 10 minutes ) ; nobody left . ',
        " ",
        " = = This section header has more than seven tokens in it = = ",
        " ",
        f" {wt_tokens(6)} {wt_tokens(7)} ",
        f" {wt_tokens(75)} {wt_tokens(76)} ",
        " = = = Short sub = = = ",
        " Prices rose to $ 25 @,@ 085 in 1990 , which I 'm sure was n't cheap ! Was it worth it at all , though ? ",
        "",
    ]
)
WIKITEXT_KEPT = [
    "The team won 3,000 games in a short-term period of 2.5 years.",
    'The crowd\'s chant was "hello there", and it lasted (about 10 minutes); nobody left.',
    n_tokens(7),
    n_tokens(75),
    "Prices rose to $25,085 in 1990, which I'm sure wasn't cheap!",
    "Was it worth it at all, though?",
]

WIKIEXTRACTOR = """<doc id="12" url="http://en.wikipedia.org/wiki?curid=12" title="A Title That Has Seven Or More Tokens">
A Title That Has Seven Or More Tokens

The first paragraph of the article has a sentence that is long enough. It also has a second sentence of enough tokens ().
Early life and career.
The subarctic climate (; ) is brief and has long, very cold winters here.
</doc>
<doc id="13" url="http://en.wikipedia.org/wiki?curid=13" title="Math">
Math

The albedo is written formula_1 in this equation of the paper. Too short here.
Another plain sentence in the second article, with seven tokens.
</doc>
"""
WIKIEXTRACTOR_KEPT = [
    "The first paragraph of the article has a sentence that is long enough.",
    "It also has a second sentence of enough tokens.",
    "The subarctic climate is brief and has long, very cold winters here.",
    "Another plain sentence in the second article, with seven tokens.",
]


@pytest.fixture
def wikitext_file(tmp_path: Path) -> Path:
    p = tmp_path / "wiki.test.raw"
    p.write_text(WIKITEXT, encoding="utf-8")
    return p


@pytest.fixture
def wikiextractor_file(tmp_path: Path) -> Path:
    p = tmp_path / "wiki_00"
    p.write_text(WIKIEXTRACTOR, encoding="utf-8")
    return p


WORD_SENTENCES = [
    "The doctor said that he would call the patient back tomorrow.",  # 0: he, the
    "Then the nurse told them that there was nothing more to do.",  # 1: no 'he'
    "She asked whether he, or (he) himself, would go there at all.",  # 2: he twice
    "The short-term plan was dropped in favour of a long term one.",  # 3: short-term
    "Their short term plans and short-terms were never written down.",  # 4: no short-term
    "A visitor from New York said the New Yorker had a fine review.",  # 5: New York
    "The files he_1 and he2 are not the word we look for at all.",  # 6: no 'he'
    "The café's owner and a caf worker met in the town square today.",  # 7: café, caf
    "Nobody in new york city had heard the news of the day before.",  # 8: new york
    "A DOCTOR of philosophy is not always a doctor of medicine, though.",  # 9: DOCTOR, doctor
]


@pytest.fixture
def words_corpus() -> Corpus:
    return Corpus.from_sentences(WORD_SENTENCES, name="words")


# ---------------------------------------------------------------------------
# text rules
# ---------------------------------------------------------------------------


def test_wikitext_header_rule():
    assert is_wikitext_header(" = Homarus gammarus = ")
    assert is_wikitext_header(" = = Life cycle = = ")
    assert is_wikitext_header(" = = = Sub section = = = ")
    assert not is_wikitext_header(" The value x = 3 is used = often . ")
    assert not is_wikitext_header(" ")
    assert not is_wikitext_header(" = = ")


def test_detokenize_wikitext_rules():
    assert detokenize_wikitext(" 0 @.@ 7 – 2 @.@ 2 kg ( 1 @.@ 5 lb ) ") == "0.7 – 2.2 kg (1.5 lb)"
    assert detokenize_wikitext(" red @-@ tipped , 20 @,@ 000 ; ok : fine . ") == "red-tipped, 20,000; ok: fine."
    assert detokenize_wikitext(' the " lobster red " on cooking ') == 'the "lobster red" on cooking'
    # an odd number of double quotes is left alone
    assert detokenize_wikitext(' a " b " c " d ') == 'a " b " c " d'
    # single quotes are left alone, clitics are attached
    assert (
        detokenize_wikitext(" Linnaeus ' concept , the ' voes ' and John 's ")
        == "Linnaeus ' concept, the ' voes ' and John's"
    )
    assert detokenize_wikitext(" SEPTA ’ s line , I ’ m sure , don 't ") == "SEPTA’s line, I’m sure, don't"
    assert detokenize_wikitext(" $ 25 and $ x and 79 % [ 3 ] ") == "$25 and $ x and 79% [3]"


def test_regex_splitter_rules():
    assert regex_split("Dr. J. R. Smith lives in the U.S. now. He is 3.5 m tall! Is he? yes.") == [
        "Dr. J. R. Smith lives in the U.S. now.",
        "He is 3.5 m tall!",
        "Is he? yes.",
    ]
    assert regex_split('He said "Go." Then he left (see Fig. 3). "Why?" she asked.') == [
        'He said "Go."',
        "Then he left (see Fig. 3).",
        '"Why?" she asked.',
    ]


# ---------------------------------------------------------------------------
# readers and filters against hand-made files
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("splitter", SPLITTERS)
def test_wikitext_file_exact_sentences(wikitext_file, splitter):
    c = load_corpus(f"wikitext:{wikitext_file}", splitter=splitter)
    assert list(c.sentences) == WIKITEXT_KEPT
    # 6 and 76 tokens dropped, 7 and 75 kept; headers never become sentences
    assert [len(s.split()) for s in c.sentences if s.startswith("Sentence")] == [7, 75]
    assert not any("header" in s or "Title" in s or "Short sub" in s for s in c.sentences)
    r = c.describe()["read"]
    assert (r["header_lines"], r["blank_lines"], r["paragraphs"]) == (3, 4, 4)
    assert (r["too_short"], r["too_long"], r["candidates"]) == (1, 1, 6)


def test_token_bounds_are_inclusive_and_configurable(wikitext_file):
    c = load_corpus(wikitext_file, min_tokens=6, max_tokens=76)
    lengths = sorted(len(s.split()) for s in c.sentences if s.startswith("Sentence"))
    assert lengths == [6, 7, 75, 76]
    c = load_corpus(wikitext_file, min_tokens=8, max_tokens=74)
    assert not any(s.startswith("Sentence") for s in c.sentences)


@pytest.mark.parametrize("splitter", SPLITTERS)
def test_wikiextractor_file_exact_sentences(wikiextractor_file, splitter):
    c = load_corpus(f"wikiextractor:{wikiextractor_file}", splitter=splitter)
    assert list(c.sentences) == WIKIEXTRACTOR_KEPT
    r = c.describe()["read"]
    assert r["documents"] == 2
    assert r["dropped_formula"] == 1  # the formula_1 sentence
    assert "A Title That Has Seven Or More Tokens" not in c.sentences


def test_format_sniffing(tmp_path, wikitext_file, wikiextractor_file):
    assert sniff_format(wikitext_file) == "wikitext"
    assert sniff_format(wikiextractor_file) == "wikiextractor"
    plain = tmp_path / "plain.txt"
    plain.write_text("A plain line of text that is long enough to keep.\n\nAnother one, also long enough to keep.\n")
    assert sniff_format(plain) == "text"
    assert list(load_corpus(wikitext_file).sentences) == WIKITEXT_KEPT
    assert list(load_corpus(wikiextractor_file).sentences) == WIKIEXTRACTOR_KEPT
    assert list(load_corpus(f"text:{plain}").sentences) == [
        "A plain line of text that is long enough to keep.",
        "Another one, also long enough to keep.",
    ]


def test_folder_recursive_sorted_and_compressed(tmp_path):
    root = tmp_path / "extracted"
    (root / "AB").mkdir(parents=True)
    (root / "AA").mkdir()
    (root / ".hidden").mkdir()
    (root / "AB" / "wiki_00").write_text(WIKIEXTRACTOR.replace("first paragraph", "third paragraph"))
    with gzip.open(root / "AA" / "wiki_01.gz", "wt", encoding="utf-8") as fh:
        fh.write(WIKIEXTRACTOR.replace("first paragraph", "second paragraph"))
    (root / "AA" / "wiki_00").write_text(WIKIEXTRACTOR)
    (root / ".hidden" / "junk").write_text("This hidden file must never be read by the corpus reader.\n")
    c = load_corpus(root)
    firsts = [s for s in c.sentences if s.startswith("The ") and "paragraph" in s]
    assert [s.split()[1] for s in firsts] == ["first", "second", "third"]
    assert c.describe()["read"]["files"] == 3
    assert not any("hidden" in s for s in c.sentences)


def test_wikitext_folder_reads_splits_in_order(tmp_path):
    for split in ("test", "valid", "train"):
        (tmp_path / f"wiki.{split}.raw").write_text(f" = T = \n The {split} split has a sentence long enough here . \n")
    c = load_corpus(f"wikitext:{tmp_path}")
    assert [s.split()[1] for s in c.sentences] == ["train", "valid", "test"]


def test_from_sentences_filters_and_normalises():
    c = Corpus.from_sentences(
        ["  too   short  here ", n_tokens(7), n_tokens(76), "  A\tsentence  with\nseven  tokens in it. "]
    )
    assert c.sentences == (n_tokens(7), "A sentence with seven tokens in it.")
    assert c.describe()["n_candidates"] == 2


# ---------------------------------------------------------------------------
# sampling
# ---------------------------------------------------------------------------


def _many(n: int) -> list[str]:
    return [f"Sentence number {i} is here with enough tokens." for i in range(n)]


def test_reservoir_sample_deterministic_ordered_subset():
    sents = _many(500)
    a = Corpus.from_sentences(sents, max_sentences=50, seed=3)
    b = Corpus.from_sentences(sents, max_sentences=50, seed=3)
    c = Corpus.from_sentences(sents, max_sentences=50, seed=4)
    assert a.sentences == b.sentences and a.fingerprint == b.fingerprint
    assert a.sentences != c.sentences and a.fingerprint != c.fingerprint
    assert len(a) == 50 and a.describe()["n_candidates"] == 500
    idx = [sents.index(s) for s in a.sentences]
    assert idx == sorted(idx) and len(set(idx)) == 50  # corpus order, no duplicates
    full = Corpus.from_sentences(sents, max_sentences=500)
    assert list(full.sentences) == sents  # nothing to sample: all kept, in order


def test_reservoir_sample_is_roughly_uniform():
    sents = _many(40)
    counts = np.zeros(40)
    for seed in range(300):
        c = Corpus.from_sentences(sents, max_sentences=10, seed=seed)
        counts[[sents.index(s) for s in c.sentences]] += 1
    freq = counts / 300  # each should be 0.25
    assert abs(freq[:10].mean() - 0.25) < 0.05 and abs(freq[-10:].mean() - 0.25) < 0.05
    assert freq.min() > 0.12 and freq.max() < 0.40


def test_sample_deterministic_prefix_and_capped():
    c = Corpus.from_sentences(_many(100))
    s1, s2 = c.sample(10), c.sample(10)
    assert isinstance(s1, Sample) and isinstance(s1, tuple)
    assert s1 == s2 and not s1.capped and len(set(s1)) == 10
    assert c.sample(20)[:10] == s1  # a smaller n is a prefix
    assert c.sample(10, rng=1) == c.sample(10, rng=np.random.default_rng(1))
    assert c.sample(10, rng=1) != c.sample(10, rng=2)
    assert [c.sentences[i] for i in s1.sentence_ids] == list(s1)
    big = c.sample(1000)
    assert big.capped and big.n_requested == 1000 and sorted(big) == sorted(c.sentences)
    assert pickle.loads(pickle.dumps(big)).capped


# ---------------------------------------------------------------------------
# word index and contexts
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("he", {0, 2}),  # not 'the', 'then', 'them', 'there', 'he_1', 'he2'
        ("the", {0, 1, 5, 6, 7, 8}),  # case-sensitive: sentences with only "The" (2, 3, 4, 9) do not count
        ("short-term", {3}),  # not 'short term', not 'short-terms'
        ("term", {3, 4}),  # inside "short-term" and in "short term"; "short-terms" has "terms"
        ("New York", {5}),  # not 'New Yorker', not 'new york'
        ("café", {7}),
        ("caf", {7}),  # the word 'caf', not the prefix of 'café'
        ("doctor", {0, 9}),
        ("DOCTOR", {9}),
    ],
)
def test_whole_word_matching(words_corpus, word, expected):
    ctx = words_corpus.contexts(word, k=100)
    assert set(ctx.sentence_ids) == expected
    assert ctx.n_available == len(expected) and not ctx.case_insensitive
    for sent, (a, b) in zip(ctx.sentences, ctx.spans):
        assert sent[a:b] == word


def test_term_matching_details(words_corpus):
    # a hyphen is a boundary: "terms" is a whole word inside "short-terms"
    assert words_corpus.contexts("terms").sentence_ids == (4,)
    assert set(words_corpus.contexts("short-terms").sentence_ids) == {4}


def test_span_is_first_occurrence(words_corpus):
    ctx = words_corpus.contexts("he", k=10)
    spans = dict(zip(ctx.sentence_ids, ctx.spans))
    s2 = WORD_SENTENCES[2]
    assert spans[2] == (s2.index(" he,") + 1, s2.index(" he,") + 3)
    assert spans[0] == (WORD_SENTENCES[0].index(" he ") + 1, WORD_SENTENCES[0].index(" he ") + 3)


def test_case_insensitive_fallback_is_reported(words_corpus):
    ctx = words_corpus.contexts("Nurse")
    assert ctx.case_insensitive and ctx.n_available == 1 and ctx.sentence_ids == (1,)
    a, b = ctx.spans[0]
    assert ctx.sentences[0][a:b] == "nurse"
    ny = words_corpus.contexts("NEW YORK")
    assert ny.case_insensitive and set(ny.sentence_ids) == {5, 8}
    exact = words_corpus.contexts("nurse")
    assert not exact.case_insensitive
    missing = words_corpus.contexts("zebra")
    assert missing == Contexts("zebra", (), 0, False, (), ())
    assert not missing.found and len(missing) == 0
    assert words_corpus.count("Nurse") == (1, True)


def test_contexts_deterministic_k_and_seed():
    sents = [f"The word doctor appears in sentence number {i} here." for i in range(60)]
    c = Corpus.from_sentences(sents)
    a, b = c.contexts("doctor", k=20), c.contexts("doctor", k=20)
    assert a == b and len(a.sentences) == 20 and a.n_available == 60
    assert len(set(a.sentence_ids)) == 20  # without replacement
    assert c.contexts("doctor", k=5).sentences == a.sentences[:5]  # prefix
    assert c.contexts("doctor", k=100).n_available == 60 and len(c.contexts("doctor", k=100)) == 60
    r1 = c.contexts("doctor", rng=7)
    assert r1 == c.contexts("doctor", rng=np.random.default_rng(7))
    assert r1.sentences != c.contexts("doctor", rng=8).sentences
    # the default does not depend on call order, and follows the corpus seed
    c2 = Corpus.from_sentences(sents)
    c2.contexts("word")
    assert c2.contexts("doctor") == a
    assert Corpus.from_sentences(sents, seed=1).contexts("doctor").sentences != a.sentences


def test_index_is_not_a_rescan(words_corpus, monkeypatch):
    words_corpus.build_index()
    # after the index exists, a query only touches candidate sentences
    seen = []

    class Spy(tuple):
        def __getitem__(self, i):
            seen.append(i)
            return tuple.__getitem__(self, i)

    words_corpus.index._sentences = Spy(words_corpus.sentences)
    words_corpus.contexts("short-term")
    assert set(seen) <= {3, 4}


def test_corpus_pickles(words_corpus):
    words_corpus.contexts("he")
    c = pickle.loads(pickle.dumps(words_corpus))
    assert c.fingerprint == words_corpus.fingerprint
    assert c.contexts("he") == words_corpus.contexts("he")


# ---------------------------------------------------------------------------
# fingerprint and description
# ---------------------------------------------------------------------------


def test_fingerprint_changes_with_content_and_settings(wikitext_file, tmp_path):
    base = load_corpus(wikitext_file)
    assert len(base.fingerprint) == 16 and int(base.fingerprint, 16) >= 0
    again = load_corpus(wikitext_file, cache=False)
    assert again is not base and again.fingerprint == base.fingerprint
    changed = tmp_path / "changed.raw"
    changed.write_text(WIKITEXT.replace("nobody left", "everybody left"), encoding="utf-8")
    assert load_corpus(changed).fingerprint != base.fingerprint
    variants = [
        load_corpus(wikitext_file, seed=1),
        load_corpus(wikitext_file, min_tokens=6),
        load_corpus(wikitext_file, max_tokens=76),
        load_corpus(wikitext_file, max_sentences=5),
        load_corpus(wikitext_file, splitter="regex"),
    ]
    fps = {v.fingerprint for v in variants}
    assert base.fingerprint not in fps and len(fps) == len(variants)


def test_in_process_cache(wikitext_file):
    a = load_corpus(wikitext_file)
    assert load_corpus(wikitext_file) is a
    assert load_corpus(wikitext_file, seed=1) is not a
    assert load_corpus(wikitext_file, cache=False) is not a
    wikitext_file.write_text(WIKITEXT + " One more sentence that is long enough to be kept here . \n")
    b = load_corpus(wikitext_file)
    assert b is not a and len(b) == len(a) + 1 and b.fingerprint != a.fingerprint


def test_fingerprint_stable_across_processes():
    code = (
        "from isoeat.corpora import Corpus;"
        f"print(Corpus.from_sentences({_many(30)!r}, max_sentences=10, seed=5).fingerprint)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == Corpus.from_sentences(_many(30), max_sentences=10, seed=5).fingerprint


def test_describe(wikitext_file):
    d = load_corpus(wikitext_file, max_sentences=4, seed=2).describe()
    json.dumps(d)
    assert d["n_sentences"] == 4 and d["n_candidates"] == 6
    assert d["settings"]["min_tokens"] == 7 and d["settings"]["max_tokens"] == 75
    assert d["settings"]["max_sentences"] == 4 and d["settings"]["seed"] == 2
    assert d["splitter"].startswith("sentencex") and d["fingerprint"]
    assert str(wikitext_file.name) in d["source"] and d["name"] == str(wikitext_file)


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_no_usable_sentences_is_a_clear_error(tmp_path):
    p = tmp_path / "short.raw"
    p.write_text(" = Title = \n \n Too short . Also short . \n = = A header with many many tokens in it = = \n")
    with pytest.raises(DataFormatError, match=r"no usable sentences.*2 sentence.*2 had fewer than 7 tokens"):
        load_corpus(p)
    only_headers = tmp_path / "headers.raw"
    only_headers.write_text(" = Title = \n = = Section with quite a lot of words = = \n")
    with pytest.raises(DataFormatError, match=r"2 header.*no text found"):
        load_corpus(only_headers)
    with pytest.raises(DataFormatError, match="no usable sentences"):
        Corpus.from_sentences(["short one", "", n_tokens(80)])
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(DataFormatError, match="no usable sentences"):
        load_corpus(empty)


def test_missing_paths_and_unknown_names(tmp_path):
    with pytest.raises(IsoeatFileNotFoundError, match="no such file"):
        load_corpus(tmp_path / "missing.txt")
    with pytest.raises(IsoeatFileNotFoundError, match="no such file"):
        load_corpus(f"wikitext:{tmp_path / 'nope'}")
    with pytest.raises(UnknownNameError, match="did you mean wikitext-103"):
        load_corpus("wikitxt-103")
    with pytest.raises(UnknownNameError):
        load_corpus("")
    (tmp_path / "emptydir").mkdir()
    with pytest.raises(IsoeatFileNotFoundError, match="no files"):
        load_corpus(tmp_path / "emptydir")


def test_not_utf8_names_file_and_line(tmp_path):
    p = tmp_path / "latin1.txt"
    p.write_bytes(
        "A first line that is perfectly fine to read.\nCaf\xe9 au lait is served here every day.\n".encode("latin-1")
    )
    with pytest.raises(DataFormatError, match=r"latin1\.txt:2: not valid UTF-8"):
        load_corpus(p)
    b = tmp_path / "binary.bin"
    b.write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(DataFormatError, match="binary"):
        load_corpus(b)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"min_tokens": 10, "max_tokens": 5}, "min_tokens must be <= max_tokens"),
        ({"max_sentences": 0}, "max_sentences"),
        ({"min_tokens": 0}, "min_tokens"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"max_tokens": True}, "max_tokens"),
        ({"splitter": "nltk"}, "splitter"),
    ],
)
def test_bad_settings(wikitext_file, kwargs, name):
    with pytest.raises(ConfigError, match=name):
        load_corpus(wikitext_file, **kwargs)


def test_bad_query_parameters(words_corpus):
    with pytest.raises(ConfigError, match="k must be"):
        words_corpus.contexts("he", k=0)
    with pytest.raises(ConfigError, match="word must contain"):
        words_corpus.contexts("!!")
    with pytest.raises(ConfigError, match="word must be a string"):
        words_corpus.contexts(3)
    with pytest.raises(ConfigError, match="n must be"):
        words_corpus.sample(0)
    with pytest.raises(ConfigError, match="sentences"):
        Corpus.from_sentences("not a list")
    with pytest.raises(ConfigError, match=r"sentences\[1\]"):
        Corpus.from_sentences([n_tokens(8), 3])


def test_missing_optional_dependencies(monkeypatch, wikitext_file):
    monkeypatch.setitem(sys.modules, "sentencex", None)
    with pytest.raises(MissingDependencyError, match="sentencex"):
        load_corpus(wikitext_file)
    assert list(load_corpus(wikitext_file, splitter="regex").sentences) == WIKITEXT_KEPT
    monkeypatch.setitem(sys.modules, "gensim.test.utils", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "isoeat\[gensim\]"'):
        load_corpus("gensim-wiki", splitter="regex")
    monkeypatch.delenv("ISOEAT_WIKITEXT103", raising=False)
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(MissingDependencyError, match="wikitext:PATH"):
        load_corpus("wikitext-103", splitter="regex")


class _FakeSplit:
    def __init__(self, rows):
        self.rows = rows

    def iter(self, batch_size):
        for i in range(0, len(self.rows), batch_size):
            yield {"text": self.rows[i : i + batch_size]}


def test_wikitext_103_through_datasets(monkeypatch):
    calls = []

    def load_dataset(name, config):
        calls.append((name, config))
        rows = [line + "\n" for line in WIKITEXT.split("\n")]
        return {"train": _FakeSplit(rows), "validation": _FakeSplit([]), "test": _FakeSplit([])}

    monkeypatch.delenv("ISOEAT_WIKITEXT103", raising=False)
    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    c = load_corpus("wikitext-103")
    assert calls == [("wikitext", "wikitext-103-raw-v1")]
    assert list(c.sentences) == WIKITEXT_KEPT and c.name == "wikitext-103"
    assert "datasets" in c.describe()["source"]


def test_wikitext_103_offline_error(monkeypatch, tmp_path):
    def load_dataset(name, config):
        raise ConnectionError("Couldn't reach the hub")

    monkeypatch.delenv("ISOEAT_WIKITEXT103", raising=False)
    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    with pytest.raises(IsoeatFileNotFoundError, match=r"offline.*wikitext:PATH.*wiki\.train\.raw"):
        load_corpus("wikitext-103")
    # a local folder named by the environment variable needs no network
    (tmp_path / "wiki.train.raw").write_text(WIKITEXT, encoding="utf-8")
    monkeypatch.setenv("ISOEAT_WIKITEXT103", str(tmp_path))
    assert list(load_corpus("wikitext-103").sentences) == WIKITEXT_KEPT


# ---------------------------------------------------------------------------
# real corpora (../shared/data, gensim)
# ---------------------------------------------------------------------------


def test_wikitext2_real_counts(shared_data):
    root = shared_data / "corpora" / "wikitext-2-raw-v1"
    valid = load_corpus(root / "wiki.valid.raw")
    test = load_corpus(root / "wiki.test.raw")
    # README heuristic: 7,718 and 8,952 sentences of 7-75 tokens (a cruder splitter)
    assert 0.9 * 7718 <= len(valid) <= 1.1 * 7718
    assert 0.9 * 8952 <= len(test) <= 1.1 * 8952
    assert valid.describe()["read"]["paragraphs"] == 1841
    assert not any(s.startswith("= ") or " @-@ " in s or " @,@ " in s for s in valid.sentences)
    both = load_corpus(root)
    assert len(both) == len(valid) + len(test)
    ctx = both.contexts("lobster")
    assert ctx.n_available > 5 and len(ctx.sentences) == min(20, ctx.n_available)


def test_wikitext2_named_uses_shared_copy(shared_data, monkeypatch):
    monkeypatch.delenv("ISOEAT_WIKITEXT2", raising=False)
    monkeypatch.setenv("ISOEAT_SHARED_DATA", str(shared_data))
    c = load_corpus("wikitext-2")
    assert c.name == "wikitext-2" and "wikitext-2-raw-v1" in c.describe()["source"]
    assert c.describe()["read"]["files"] == 2


def test_wikiextractor_real_sample(shared_data):
    root = shared_data / "corpora" / "enwiki-2015-wikiextractor-sample"
    files = iter_files(root)
    assert len(files) == 30 and files[0].relative_to(root).as_posix() == "AA/wiki_00"
    c = load_corpus(files[0])
    d = c.describe()
    assert d["read"]["formats"] == {"wikiextractor": 1}
    # README: about 6.6k-7.3k sentences of 7-75 tokens per file
    assert 6000 <= len(c) <= 8000
    assert not any(s.startswith("<doc") or s == "Anarchism" for s in c.sentences)
    assert c.contexts("anarchism").n_available > 10


def test_gensim_wiki_offline():
    pytest.importorskip("gensim")
    c = load_corpus("gensim-wiki", max_sentences=5000, seed=1)
    d = c.describe()
    assert len(c) == 5000 and d["n_candidates"] > 10_000
    assert d["read"]["documents"] > 100
    assert not any("'''" in s or s.startswith("==") for s in c.sentences)
    assert c.contexts("war").n_available > 0
