"""Fuzzing the remaining file parsers: experiment configs, similarity word-pair
and STS files, corpora (text, wikitext, wikiextractor), SEAT templates, the
embedding cache and the sensitivity list options. Random bytes and mutated
valid files never raise anything but isoeat's own errors (IsoeatError); a bad
cache entry only warns (IsoeatWarning) and reads as a miss.

FUZZ_EXAMPLES examples per parser (PARSERS_FUZZED parsers; hypothesis,
derandomised so CI is stable).
"""

from __future__ import annotations

import os
import tempfile
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isoeat import IsoeatError, IsoeatWarning
from isoeat.backends.cache import EmbeddingCache
from isoeat.backends.sentence import load_templates
from isoeat.commands.sensitivity import _parse_floats, _parse_ints
from isoeat.corpora import load_corpus
from isoeat.experiments.config import load_config
from isoeat.similarity import read_sts, read_word_pairs

from .test_fuzz_core import _check, inputs

FUZZ_EXAMPLES = int(os.environ.get("ISOEAT_FUZZ_EXAMPLES", "200"))
FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

VALID_CONFIG = (b"name: fuzz\nmodels:\n  - spec: glove-6b-50d\n    label: G\n    family: static\ntests: [W6, W7]\n"
                b"calibrations: [none, {name: zca, params: {eps: 0.001}}]\n"
                b"settings: {permutations: 100, seed: 1, alpha: 0.05, method: auto, reference: {size: 1000}}\n")
VALID_PAIRS = b"word1\tword2\tscore\nman\twoman\t3.5\nking\tqueen\t8.0\ncat\tdog\t6.1\n"
VALID_PAIRS_CSV = b"# comment\nWord 1,Word 2,Human (mean)\ntiger,cat,7.35\nbook,paper,7.46\n"
VALID_STS = (b"genre\tfile\tyear\tsid\tscore\tsentence1\tsentence2\n"
             b"main-captions\tMSRvid\t2012test\t0001\t5.000\tA man is playing a flute.\tA man is playing a flute.\n"
             b"main-captions\tMSRvid\t2012test\t0004\t2.400\tA cat sits.\tA dog runs in the park.\n")
LONG = b"This is a perfectly fine sentence with many words in it and then some more .\n"
VALID_TEXT = LONG + b"\n" + b"Another paragraph that is long enough to be kept by the sentence filter here .\n"
VALID_WIKITEXT = b" = Title = \n \n " + LONG + b" = = Section = = \n " + LONG
VALID_WIKIEXTRACTOR = b'<doc id="1" url="x" title="T">\nT\n\n' + LONG + b"</doc>\n"
VALID_TEMPLATES = b"# templates\nThis is {}.\nThat is {}.\n\n{} is here.\n"

PARSERS_FUZZED = ("config", "word pairs", "word pairs (csv)", "sts", "corpus text", "corpus wikitext",
                  "corpus wikiextractor", "templates", "embedding cache", "sensitivity --eps", "sensitivity --reference-sizes")


@FUZZ
@given(inputs(VALID_CONFIG))
def test_fuzz_experiment_config(data):
    _check(load_config, data, ".yaml")


@FUZZ
@given(inputs(VALID_PAIRS))
def test_fuzz_word_pairs(data):
    _check(read_word_pairs, data, ".txt")


@FUZZ
@given(inputs(VALID_PAIRS_CSV))
def test_fuzz_word_pairs_csv(data):
    _check(read_word_pairs, data, ".csv")


@FUZZ
@given(inputs(VALID_STS))
def test_fuzz_sts(data):
    _check(read_sts, data, ".csv")


def _corpus(fmt):
    def parse(p):
        load_corpus(f"{fmt}:{p}", cache=False, max_sentences=50)
    return parse


@FUZZ
@given(inputs(VALID_TEXT))
def test_fuzz_corpus_text(data):
    _check(_corpus("text"), data, ".txt")


@FUZZ
@given(inputs(VALID_WIKITEXT))
def test_fuzz_corpus_wikitext(data):
    _check(_corpus("wikitext"), data, ".tokens")


@FUZZ
@given(inputs(VALID_WIKIEXTRACTOR))
def test_fuzz_corpus_wikiextractor(data):
    _check(_corpus("wikiextractor"), data, "")


@FUZZ
@given(inputs(VALID_TEMPLATES))
def test_fuzz_templates(data):
    _check(load_templates, data, ".txt")


def _valid_cache_entry() -> bytes:
    with tempfile.TemporaryDirectory() as d:
        c = EmbeddingCache(d, enabled=True)
        return c.put("static", {"w": "x"}, {"vectors": np.arange(6.0).reshape(2, 3), "words": np.array(["a", "b"])}).read_bytes()


VALID_CACHE = _valid_cache_entry()


@FUZZ
@given(inputs(VALID_CACHE))
def test_fuzz_embedding_cache(data):
    with tempfile.TemporaryDirectory() as d:
        c = EmbeddingCache(d, enabled=True)
        p = c.path("static", {"w": "x"})
        p.parent.mkdir(parents=True)
        p.write_bytes(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IsoeatWarning)
            warnings.simplefilter("ignore", ResourceWarning)
            got = c.get("static", {"w": "x"})
        assert got is None or set(got) == {"vectors", "words"}
        assert got is not None or not p.exists()  # a bad entry is removed


LIST_TEXT = st.one_of(st.text(max_size=30),
                      st.lists(st.sampled_from(["1e-3", "0", "-1", "none", "", " ", "2", "1.5", "nan", "inf", "x", "100000",
                                                "1e400", "0x10", "1_000"]), max_size=5).map(",".join))


@FUZZ
@given(LIST_TEXT)
def test_fuzz_sensitivity_eps_list(text):
    try:
        out = _parse_floats(text, "--eps")
    except IsoeatError:
        return
    assert out is None or all(np.isfinite(v) and v > 0 for v in out)


@FUZZ
@given(LIST_TEXT)
def test_fuzz_sensitivity_sizes_list(text):
    try:
        out = _parse_ints(text, "--reference-sizes")
    except IsoeatError:
        return
    assert out is None or all(isinstance(v, int) and v >= 2 for v in out)
