"""Reference corpora: reading, sentence filtering, seeded sampling, word → sentence index.

Contextual encoders need sentences that contain each target or attribute
word, and reference sentences for the whitening statistics (paper §4.1:
sentences of 7–75 tokens, section headers excluded, up to 200,000 indexed
sentences with a fixed seed; up to 20 contexts per word).

Quick start::

    from isoeat.corpora import load_corpus
    corpus = load_corpus("gensim-wiki")          # offline: gensim's Wikipedia sample
    ctx = corpus.contexts("doctor", k=20)        # Contexts(sentences, spans, n_available, ...)
    ref = corpus.sample(100_000)                 # ref.capped is True if fewer exist
    corpus.describe()["fingerprint"]
    corpus.source_sha256                         # SHA-256 of the bytes read (file_sha256 for one file)

Sentence splitting uses Wikimedia's ``sentencex`` (rule-based; see
:mod:`isoeat.corpora._text` for WikiText detokenisation and the built-in
``splitter="regex"`` alternative); tokens for the length filter are
whitespace tokens after detokenisation.
"""

from __future__ import annotations

from ._corpus import Contexts, Corpus, Sample
from ._files import file_sha256
from ._index import WordIndex, word_pattern
from ._load import (
    BUNDLED_WIKITEXT2_NAME,
    FORMAT_PREFIXES,
    NAMED_CORPORA,
    available_corpora,
    bundled_wikitext2_test,
    clear_corpus_cache,
    corpus_list,
    corpus_variables,
    load_corpus,
    offline_corpora,
    resolve_auto_corpus,
    resolve_corpus_spec,
    shared_enwiki_sample_path,
    shared_wikitext2_path,
)
from ._readers import sniff_format
from ._text import (
    PREPROCESS_VERSION,
    SPLITTERS,
    Splitter,
    detokenize_wikitext,
    get_splitter,
    is_wikitext_header,
    regex_split,
)

__all__ = [
    "Corpus",
    "Contexts",
    "Sample",
    # _load's (spelt out, not spread from its list, so that type checkers and linters see them)
    "load_corpus",
    "available_corpora",
    "clear_corpus_cache",
    "NAMED_CORPORA",
    "FORMAT_PREFIXES",
    "shared_wikitext2_path",
    "bundled_wikitext2_test",
    "BUNDLED_WIKITEXT2_NAME",
    "shared_enwiki_sample_path",
    "offline_corpora",
    "corpus_variables",
    "resolve_auto_corpus",
    "resolve_corpus_spec",
    "corpus_list",
    "file_sha256",
    "WordIndex",
    "word_pattern",
    "sniff_format",
    "Splitter",
    "SPLITTERS",
    "get_splitter",
    "regex_split",
    "detokenize_wikitext",
    "is_wikitext_header",
    "PREPROCESS_VERSION",
]
