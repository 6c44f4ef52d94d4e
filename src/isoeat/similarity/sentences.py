r"""Sentence vectors for sentence-similarity benchmarks (STS-B).

Two routes, chosen by what the model offers:

* **Sentence encoders** (transformer models, sentence-transformers): a model
  with ``encode_sentences(list[str]) -> ndarray (n, dim)`` encodes each
  sentence itself (for transformer models the encoder mean-pools its token
  states). A calibrator is applied to these sentence vectors.
* **Static word vectors**: the sentence vector is the mean of the vectors of
  its in-vocabulary tokens (a bag-of-words average),

  .. math::

      v(s) = \frac{1}{|T_s|}\sum_{t\in T_s} \vec t,

  where :math:`T_s` is the list of tokens of :math:`s` found in the
  vocabulary (repeated tokens count repeatedly). A calibrator is applied to
  the word vectors *before* averaging (the calibrated space is the space the
  words live in); for affine calibrators such as ZCA this is the same as
  calibrating the average.

Tokenisation rule for the static route (:func:`tokenize`), close to the
Penn-Treebank style of GloVe's training text: lowercase; curly apostrophes
become ``'``; the clitics ``n't``, ``'s``, ``'re``, ``'ve``, ``'ll``, ``'d``,
``'m`` are split off (``don't`` → ``do n't``); tokens are runs of letters and
digits that may contain inner ``-``, ``.``, ``,`` or ``'`` (``well-known``,
``3.5``, ``1,000``); punctuation is dropped. A compound token that is not in
the vocabulary is replaced by its letter/digit parts. Sentences with no
token in the vocabulary get no vector: they are dropped and counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import ConfigError, DataFormatError
from .._types import Encoder, dim_of, name_of, sentence_pooling_of

__all__ = ["tokenize", "sentence_vectors", "SentenceVectors"]

_CLITIC_NT = re.compile(r"(\w)n't\b")
_CLITIC = re.compile(r"(\w)'(s|re|ve|ll|d|m)\b")
_TOKEN = re.compile(r"n't\b|'(?:s|re|ve|ll|d|m)\b|[^\W_]+(?:[-.,'][^\W_]+)*")
_PARTS = re.compile(r"[^\W_]+")


def tokenize(sentence: str) -> list[str]:
    """Lowercased word tokens of ``sentence`` (see the module docstring for the rule).

    Examples
    --------
    >>> tokenize("A woman's hat doesn't cost $1,000.")
    ['a', 'woman', "'s", 'hat', 'does', "n't", 'cost', '1,000']
    """
    s = sentence.lower().replace("\u2019", "'").replace("\u2018", "'")
    s = _CLITIC_NT.sub(r"\1 n't", s)
    s = _CLITIC.sub(r"\1 '\2", s)
    return _TOKEN.findall(s)


@dataclass(frozen=True, eq=False)
class SentenceVectors:
    """Vectors of the sentences that could be encoded.

    Attributes
    ----------
    vectors : numpy.ndarray, shape (n_kept, dim)
        Rows in the order of the kept sentences.
    kept : numpy.ndarray of bool, shape (n_sentences,)
        Which input sentences have a vector.
    method : str
        ``"encode_sentences"`` or the pooling rule of the static route.
    n_tokens, n_tokens_found : int
        Tokens seen and found in the vocabulary (static route; 0 otherwise).
    missing_tokens : tuple of str
        Distinct tokens not in the vocabulary (static route).
    """

    vectors: np.ndarray = field(repr=False)
    kept: np.ndarray = field(repr=False)
    method: str
    n_tokens: int = 0
    n_tokens_found: int = 0
    missing_tokens: tuple[str, ...] = ()

    @property
    def n_dropped(self) -> int:
        return int((~self.kept).sum())


class _StaticPooler:
    """Tokenise once, look up each distinct token once, average (raw or calibrated) word vectors."""

    method = "mean of in-vocabulary word vectors (isoeat.similarity.tokenize: lowercased PTB-style tokens)"

    def __init__(self, model: Any, sentences: Sequence[str], tokenizer: Callable[[str], list[str]] | None):
        tok = tokenizer or tokenize
        token_lists = [list(tok(s)) for s in sentences]
        vocab: dict[str, int] = {}
        for toks in token_lists:
            for t in toks:
                vocab.setdefault(t, len(vocab))
        words = list(vocab)
        look = model.lookup(words) if words else None
        found = set(look.found) if look is not None else set()
        # OOV compounds: try their parts
        parts_of: dict[str, list[str]] = {}
        extra: list[str] = []
        for w in words:
            if w not in found and _PARTS.fullmatch(w) is None:
                parts = _PARTS.findall(w)
                if parts:
                    parts_of[w] = parts
                    extra.extend(p for p in parts if p not in vocab and p not in extra)
        found_vecs: dict[str, np.ndarray] = {}
        if look is not None:
            found_vecs.update(zip(look.found, look.vectors))
        if extra:
            look2 = model.lookup(extra)
            found_vecs.update(zip(look2.found, look2.vectors))
        names = list(found_vecs)
        index = {w: i for i, w in enumerate(names)}
        self.matrix = (np.vstack([found_vecs[w] for w in names]) if names
                       else np.empty((0, int(dim_of(model) or 0))))
        rows: list[int] = []
        offsets: list[int] = []
        kept: list[bool] = []
        missing: dict[str, None] = {}
        n_tokens = n_found = 0
        for toks in token_lists:
            sent_rows: list[int] = []
            for t in toks:
                n_tokens += 1
                if t in index:
                    sent_rows.append(index[t])
                    n_found += 1
                elif t in parts_of and any(p in index for p in parts_of[t]):
                    sent_rows.extend(index[p] for p in parts_of[t] if p in index)
                    n_found += 1
                    missing.update((p, None) for p in parts_of[t] if p not in index)
                else:
                    missing[t] = None
            if sent_rows:
                offsets.append(len(rows))
                rows.extend(sent_rows)
                kept.append(True)
            else:
                kept.append(False)
        self.rows = np.asarray(rows, dtype=np.intp)
        self.offsets = np.asarray(offsets, dtype=np.intp)
        self.lengths = np.diff(np.append(self.offsets, len(self.rows)))
        self.kept = np.asarray(kept, dtype=bool)
        self.n_tokens, self.n_found = n_tokens, n_found
        self.missing = tuple(missing)

    def pool(self, calibration: Any = None) -> np.ndarray:
        M = self.matrix if calibration is None else np.asarray(calibration.transform(self.matrix), dtype=np.float64)
        if not len(self.offsets):
            return np.empty((0, M.shape[1]))
        sums = np.add.reduceat(M[self.rows], self.offsets, axis=0)
        return sums / self.lengths[:, None]

    def result(self, calibration: Any = None) -> SentenceVectors:
        return SentenceVectors(self.pool(calibration), self.kept, self.method, self.n_tokens, self.n_found,
                               self.missing)


def _check_encoded(V: Any, n: int, model: Any) -> np.ndarray:
    V = np.asarray(V, dtype=np.float64)
    if V.ndim != 2 or V.shape[0] != n:
        raise DataFormatError(
            f"{name_of(model, 'model')}.encode_sentences returned shape {V.shape}, expected ({n}, dim)"
        )
    if not np.isfinite(V).all():
        raise DataFormatError(f"{name_of(model, 'model')}: sentence vectors contain NaN or inf")
    return V


def sentence_vectors(
    model: Any,
    sentences: Sequence[str],
    *,
    calibration: Any = None,
    tokenizer: Callable[[str], list[str]] | None = None,
) -> SentenceVectors:
    """Vectors of ``sentences``: the model's own sentence encoder, else mean word vectors.

    Parameters
    ----------
    model : Encoder
        With ``encode_sentences`` (sentence encoders, transformer models), or
        with ``lookup`` (static word vectors).
    sentences : sequence of str
    calibration : fitted calibrator, optional
        Applied to the sentence vectors (encoders) or to the word vectors
        before averaging (static).
    tokenizer : callable, optional
        ``str -> list[str]`` for the static route (default :func:`tokenize`).

    Returns
    -------
    SentenceVectors

    Examples
    --------
    >>> from isoeat.backends import StaticVectors
    >>> m = StaticVectors(["a", "cat", "sat"], np.eye(3), name="toy")
    >>> sv = sentence_vectors(m, ["A cat sat.", "Zzz!"])
    >>> sv.vectors.round(2).tolist(), sv.kept.tolist()
    ([[0.33, 0.33, 0.33]], [True, False])
    """
    if isinstance(sentences, str):
        raise ConfigError("sentences must be a sequence of strings, not one string")
    sentences = list(sentences)
    encode = sentence_pooling_of(model)
    if encode is not None:
        V = _check_encoded(encode(sentences), len(sentences), model) if sentences else np.empty((0, model.dim))
        if calibration is not None and len(V):
            V = np.asarray(calibration.transform(V), dtype=np.float64)
        return SentenceVectors(V, np.ones(len(sentences), dtype=bool), "encode_sentences")
    if not isinstance(model, Encoder):
        raise ConfigError(f"{name_of(model, str(model))!r} has neither encode_sentences nor lookup")
    return _StaticPooler(model, sentences, tokenizer).result(calibration)
