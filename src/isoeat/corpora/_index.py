"""Word → sentence index over a fixed list of sentences.

Tokens are maximal runs of word characters (``\\w+`` in Python's Unicode
regular expressions: letters, digits, underscore). The index maps each token
to the sorted ids of the sentences that contain it, stored as one compressed
sparse row structure (a ``vocabulary`` dict, an ``offsets`` array and one
``postings`` array of ``int32``), plus the same over lower-cased tokens for the
case-insensitive fallback.

A whole-word occurrence of a query ``w`` in a sentence ``s`` is a match of
``re.escape(w)`` in ``s`` not preceded and not followed by a word character:
``(?<!\\w)w(?!\\w)``. Every ``\\w+`` run of ``w`` is then a complete token of
``s`` (the characters around each run are either non-word characters inside
``w`` or the boundary), so the sentences holding *all* of ``w``'s tokens are a
superset of the matches. A query intersects those posting lists and, unless
``w`` is a single token (then the index is exact), verifies each remaining
candidate with the regular expression. The corpus is never rescanned.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence

import numpy as np

__all__ = ["WordIndex", "word_pattern", "TOKEN_RE"]

TOKEN_RE = re.compile(r"\w+")


def word_pattern(word: str, ignore_case: bool = False) -> re.Pattern[str]:
    """The whole-word regular expression for ``word`` (see the module docstring)."""
    return re.compile(r"(?<!\w)" + re.escape(word) + r"(?!\w)", re.IGNORECASE if ignore_case else 0)


class _Postings:
    """CSR posting lists: ``postings[offsets[t]:offsets[t + 1]]`` are the sorted sentence ids of token ``t``."""

    __slots__ = ("vocab", "offsets", "postings")

    def __init__(self, vocab: dict[str, int], token_ids: np.ndarray, sentence_ids: np.ndarray, n_sentences: int):
        # one int64 key per (token, sentence); sorting the keys sorts by token, then sentence
        n = max(int(n_sentences), 1)
        keys = np.sort(token_ids.astype(np.int64) * n + sentence_ids)
        if keys.size:
            keep = np.empty(keys.size, dtype=bool)
            keep[0] = True
            np.not_equal(keys[1:], keys[:-1], out=keep[1:])
            keys = keys[keep]
        tids = keys // n
        self.vocab = vocab
        counts = np.bincount(tids, minlength=len(vocab))
        self.offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.postings = (keys - tids * n).astype(np.int32)

    def get(self, token: str) -> np.ndarray:
        tid = self.vocab.get(token)
        if tid is None:
            return np.empty(0, dtype=np.int32)
        return self.postings[self.offsets[tid] : self.offsets[tid + 1]]


class WordIndex:
    """Token → sentence-id index with whole-word verification.

    Parameters
    ----------
    sentences : sequence of str
        The indexed sentences; ids are positions in this sequence.
    """

    def __init__(self, sentences: Sequence[str]):
        self._sentences = sentences
        n = len(sentences)
        findall = TOKEN_RE.findall
        vocab: dict[str, int] = {}
        setdefault = vocab.setdefault
        ids = array("i")
        lens = array("i")
        for start in range(0, n, 4096):  # in chunks: token strings never pile up
            flat: list[str] = []
            extend = flat.extend
            for sent in sentences[start : start + 4096]:
                toks = findall(sent)
                extend(toks)
                lens.append(len(toks))
            ids.extend([setdefault(t, len(vocab)) for t in flat])
        token_ids = np.frombuffer(ids, dtype=np.int32).astype(np.int64) if len(ids) else np.empty(0, np.int64)
        counts = np.frombuffer(lens, dtype=np.int32) if len(lens) else np.empty(0, np.int32)
        sentence_ids = np.repeat(np.arange(n, dtype=np.int64), counts)
        self._exact = _Postings(vocab, token_ids, sentence_ids, n)
        lower: dict[str, int] = {}
        lmap = np.fromiter((lower.setdefault(t.lower(), len(lower)) for t in vocab), dtype=np.int64, count=len(vocab))
        self._lower = _Postings(lower, lmap[token_ids] if token_ids.size else token_ids, sentence_ids, n)
        self.n_tokens = len(vocab)
        self.n_postings = int(self._exact.postings.size)

    def candidates(self, word: str, ignore_case: bool) -> np.ndarray:
        """Sorted ids of sentences holding every ``\\w+`` token of ``word``."""
        parts = TOKEN_RE.findall(word)
        table = self._lower if ignore_case else self._exact
        keys = {p.lower() for p in parts} if ignore_case else set(parts)
        lists = sorted((table.get(k) for k in keys), key=len)
        if not lists:
            return np.empty(0, dtype=np.int32)
        cand = lists[0]
        for other in lists[1:]:
            if cand.size == 0:
                break
            cand = np.intersect1d(cand, other, assume_unique=True)
        return cand

    def find(self, word: str, ignore_case: bool) -> np.ndarray:
        """Sorted ids of the sentences with a whole-word occurrence of ``word``."""
        cand = self.candidates(word, ignore_case)
        if cand.size == 0:
            return cand
        if not ignore_case and TOKEN_RE.fullmatch(word):
            return cand  # a single token: the index is exact
        search = word_pattern(word, ignore_case).search
        sents = self._sentences
        keep = [int(i) for i in cand if search(sents[i])]
        return np.asarray(keep, dtype=np.int32)
