"""Semantic-similarity benchmarks: does cosine in a (calibrated) space track human judgements?

Experiment 2 of the paper (§4.3, §5.2, Table 3): Spearman's ρ between cosine
similarity and human scores on word-pair benchmarks (WordSim-353,
SimLex-999, MEN, RG-65, RW, MTurk-771) and on STS-B sentence pairs, raw and
calibrated, with coverage, and a paired bootstrap of the change Δρ.

Modules: :mod:`~isoeat.similarity.benchmarks` (readers, named benchmarks and
where their files are found), :mod:`~isoeat.similarity.sentences` (sentence
vectors), :mod:`~isoeat.similarity.evaluate` (ρ, coverage, comparison),
:mod:`~isoeat.similarity.bootstrap` (paired bootstrap).
"""

from .benchmarks import (
    BENCHMARKS,
    BenchmarkSpec,
    SentencePairs,
    WordPairs,
    benchmark_names,
    data_dirs,
    find_benchmark_file,
    load_benchmark,
    read_sts,
    read_word_pairs,
)
from .bootstrap import PairedBootstrapResult, paired_bootstrap_spearman, resampled_spearman
from .evaluate import SimilarityComparison, SimilarityResult, compare_similarity, evaluate_similarity, spearman
from .sentences import SentenceVectors, sentence_vectors, tokenize

__all__ = [
    "BENCHMARKS",
    "BenchmarkSpec",
    "WordPairs",
    "SentencePairs",
    "benchmark_names",
    "data_dirs",
    "find_benchmark_file",
    "load_benchmark",
    "read_word_pairs",
    "read_sts",
    "spearman",
    "SimilarityResult",
    "SimilarityComparison",
    "evaluate_similarity",
    "compare_similarity",
    "PairedBootstrapResult",
    "paired_bootstrap_spearman",
    "resampled_spearman",
    "SentenceVectors",
    "sentence_vectors",
    "tokenize",
]
