"""Static word vectors: a vocabulary and a matrix.

Readers (in :mod:`isoeat.backends._static_readers`, re-exported here) for
GloVe text (no header), word2vec text and fastText ``.vec`` (header
``count dim``), word2vec binary, gensim ``KeyedVectors`` files (pickles: only
with ``allow_pickle`` set to true) and ``.npy`` matrices with a vocabulary file.
Each reader validates as it goes and names the file and line of the first
problem; :func:`open_static` turns a file into a :class:`StaticVectors`.

Identity: :attr:`StaticVectors.fingerprint` is a SHA-256 of every byte of the
vectors and of the vocabulary (:func:`content_fingerprint`); for models read
from files it is cached against the files' stamps
(:class:`~isoeat.backends.cache.FingerprintCache`).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError, DataFormatError, IsoeatFileNotFoundError
from .._textio import iter_lines, nfc
from .._validate import SUGGEST_MODEL_WORDS, check_bool, check_choice, check_int, suggest_words
from ._phrases import compose, phrase_words
from ._static_readers import (
    PICKLE_RISK,
    RAW_READERS,
    read_gensim_kv,
    read_glove_text,
    read_npy,
    read_word2vec_binary,
    read_word2vec_text,
)
from ._vocab import DUPLICATE_POLICIES, Locate, Vocabulary, build_vocabulary, row_locator
from .base import Lookup
from .cache import FingerprintCache, WordListCache

__all__ = [
    "StaticVectors",
    "content_fingerprint",
    "open_static",
    "read_glove_text",
    "read_word2vec_text",
    "read_word2vec_binary",
    "read_npy",
    "read_gensim_kv",
    "DUPLICATE_POLICIES",
    "PICKLE_RISK",
    "FINGERPRINT_SCHEME",
]

_TOKEN_RE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", re.UNICODE)
#: Version of what :func:`content_fingerprint` hashes (part of every cache key).
FINGERPRINT_SCHEME = 2
#: Rows hashed per step (a bounded slice of a memory map is read at a time).
_HASH_CHUNK_BYTES = 1 << 24


def content_fingerprint(words: Sequence[str], vectors: np.ndarray, *, extra: str = "") -> str:
    """SHA-256 (first 16 hex digits) of every byte of ``vectors`` and ``words``.

    Hashed in order: a header with the scheme, shape, dtype (little-endian
    form) and ``extra``; the UTF-8 lengths and bytes of the words in order;
    then the matrix rows in order, streamed in slices of about 16 MiB (a
    memory map is never read whole). Any change of a value, a word, the order,
    the shape or the dtype changes it.

    Examples
    --------
    >>> a = content_fingerprint(["x", "y"], np.eye(2, dtype=np.float32))
    >>> b = content_fingerprint(["x", "y"], np.array([[1, 0], [0, 1.5]], dtype=np.float32))
    >>> len(a), a == b
    (16, False)
    """
    vectors = vectors if isinstance(vectors, np.ndarray) else np.asarray(vectors)
    dtype = vectors.dtype.newbyteorder("<") if vectors.dtype.byteorder not in "|" else vectors.dtype
    rows, cols = (vectors.shape + (1,))[:2] if vectors.ndim == 1 else vectors.shape[:2]
    h = hashlib.sha256()
    h.update(f"isoeat-static|scheme={FINGERPRINT_SCHEME}|shape={rows}x{cols}|dtype={dtype.str}|{extra}\n".encode())
    encoded = [w.encode("utf-8", "surrogatepass") for w in words]
    h.update(np.fromiter((len(b) for b in encoded), dtype="<u8", count=len(encoded)).tobytes())
    h.update(b"".join(encoded))
    step = max(1, _HASH_CHUNK_BYTES // max(1, cols * dtype.itemsize))
    for start in range(0, rows, step):
        block = np.ascontiguousarray(vectors[start : start + step], dtype=dtype)
        h.update(memoryview(block).cast("B"))  # type: ignore[arg-type]  # numpy's stubs omit the buffer protocol
    return h.hexdigest()[:16]


class StaticVectors:
    """An encoder over a fixed vocabulary of word vectors.

    Parameters
    ----------
    words : sequence of str
        Vocabulary, ideally in frequency order (most frequent first); the
        reference sample for whitening is the top of this list.
    vectors : numpy.ndarray
        ``(len(words), dim)`` matrix (a memory map is fine; it is not copied).
    name : str
        The spec the model was loaded from.
    source : str
        Where the vectors came from (for manifests).
    lowercase_fallback : bool or None
        After an exact lookup fails, try the lowercased word. ``None`` (default)
        turns it on when the vocabulary is lowercase (as GloVe 6B is), so that
        capitalised names in the word lists are found; every fallback is
        reported in :class:`~isoeat.backends.base.Lookup`.
    duplicates : {"error", "first", "last"}
        What a word present twice (possibly only after Unicode NFC
        normalisation) means. ``"error"`` (default) refuses the vocabulary
        with a one-line :class:`~isoeat.DataFormatError` naming the word and
        both positions (file lines when read from a file); ``"first"`` or
        ``"last"`` keeps every row and makes lookups return the first or the
        last occurrence (GloVe and word2vec files are in frequency order, so
        ``"first"`` is the more frequent entry). Reported in
        :meth:`describe` and part of the :attr:`fingerprint`.
    locate : callable, optional
        ``locate(i) -> (prefix, where)`` naming row ``i`` in messages (readers
        pass file lines); default ``"NAME: row i+1"``.
    file_stamps : sequence of dict, optional
        :func:`~isoeat.backends.cache.file_stamp` of every file the vectors
        were read from, taken before reading; when given, the fingerprint is
        cached against them.

    Notes
    -----
    Words are stored in Unicode NFC and queries are normalised the same way,
    so ``"cafe\\u0301"`` finds ``"caf\\u00e9"``. Words that were not in NFC
    are reported with an :class:`~isoeat.IsoeatWarning` and in
    :meth:`describe` (count and examples of the original form).

    Examples
    --------
    >>> import numpy as np
    >>> m = StaticVectors(["a", "b"], np.eye(2), name="toy")
    >>> m.lookup(["A", "b", "zz"]).missing
    ('zz',)
    """

    kind = "static"

    def __init__(
        self,
        words: Sequence[str] | Vocabulary,
        vectors: np.ndarray,
        *,
        name: str = "vectors",
        source: str = "",
        lowercase_fallback: bool | None = None,
        duplicates: str = "error",
        locate: Locate | None = None,
        file_stamps: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        vectors = np.asarray(vectors) if not isinstance(vectors, np.ndarray) else vectors
        where = source or name
        if vectors.ndim != 2:
            raise DataFormatError(f"{where}: vectors must be a 2-D matrix, got shape {vectors.shape}")
        # words: a list, or a vocabulary built before (:meth:`from_stamped_files`)
        n_words = len(words.words) if isinstance(words, Vocabulary) else len(words)
        if n_words != vectors.shape[0]:
            raise DataFormatError(f"{where}: {n_words} vocabulary entries but {vectors.shape[0]} vector rows")
        if vectors.shape[0] == 0:
            raise DataFormatError(f"{where}: no vectors")
        if vectors.shape[1] == 0:
            raise DataFormatError(f"{where}: the matrix has 0 columns (vectors of dimension 0)")
        vocab = words if isinstance(words, Vocabulary) else build_vocabulary(
            words, duplicates=duplicates, locate=locate or row_locator(where), source=where)
        self.words: tuple[str, ...] = vocab.words
        self.vectors = vectors
        self.name = name
        self.source = where
        self.dim = int(vectors.shape[1])
        self._vocab = vocab
        self._index = vocab.index
        self.n_duplicates = vocab.n_duplicates
        if lowercase_fallback is None:
            sample = self.words[:20000]
            upper = sum(1 for w in sample if w != w.lower())
            lowercase_fallback = upper <= 0.01 * len(sample)
        self.lowercase_fallback = check_bool("lowercase_fallback", lowercase_fallback)
        self._file_stamps = [dict(s) for s in file_stamps] if file_stamps else []
        self._fingerprint: str | None = None

    @classmethod
    def from_stamped_files(cls, read_words: Callable[[], Sequence[str]], vectors: np.ndarray, *,
                           file_stamps: Sequence[Mapping[str, Any]], name: str, **kwargs: Any) -> StaticVectors:
        """A model read from files whose words ``read_words()`` returns, read once per version of the files.

        A clean vocabulary (every word already NFC, none twice) is kept in the :class:`WordListCache` keyed
        by ``file_stamps`` (taken before reading) and ``name``; the next load of the same files takes it
        from there without calling ``read_words``. Its words are then exactly those read (and its index the
        one :func:`build_vocabulary` gives a clean list): the model is the same either way.
        """
        cache, parts, rows = WordListCache(), {"model": name}, int(vectors.shape[0])
        cached = cache.get(file_stamps, parts, rows)
        if cached is not None:
            index = dict(zip(cached, range(rows)))
            if len(index) == rows:  # clean, as stored: no duplicate (the policy has nothing to choose)
                vocab = Vocabulary(cached, index, check_choice("duplicates", kwargs.pop("duplicates", "error"),
                                                               DUPLICATE_POLICIES), 0, (), 0, ())
                return cls(vocab, vectors, name=name, file_stamps=file_stamps, **kwargs)
        model = cls(read_words(), vectors, name=name, file_stamps=file_stamps, **kwargs)
        if not model._vocab.n_normalized and not model.n_duplicates:
            cache.put(file_stamps, parts, model.words)
        return model

    # -- basic container behaviour -------------------------------------
    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and nfc(word) in self._index

    def __repr__(self) -> str:
        return f"StaticVectors(name={self.name!r}, vocab={len(self)}, dim={self.dim})"

    @property
    def fingerprint(self) -> str:
        """SHA-256 of every byte of the vectors and the vocabulary (16 hex digits).

        See :func:`content_fingerprint`; the duplicates policy is part of it
        when the vocabulary has duplicates (it changes which vectors lookups
        return). For a model read from files the value is cached against the
        files' stamps (path, size, mtime, ctime, inode), so a large model is
        hashed once, and again only when a file changes or is touched.
        """
        if self._fingerprint is None:
            extra = f"duplicates={self._vocab.policy}" if self.n_duplicates else ""
            cache = FingerprintCache() if self._file_stamps else None
            parts = {"scheme": FINGERPRINT_SCHEME, "name": self.name, "extra": extra}
            fp = cache.get(self._file_stamps, parts) if cache is not None else None
            if fp is None:
                fp = content_fingerprint(self.words, self.vectors, extra=extra)
                if cache is not None:
                    cache.put(self._file_stamps, parts, fp)
            self._fingerprint = fp
        return self._fingerprint

    def describe(self) -> dict[str, Any]:
        """Metadata for manifests and results."""
        return {
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "vocab_size": len(self),
            "dim": self.dim,
            "fingerprint": self.fingerprint,
            "lowercase_fallback": self.lowercase_fallback,
            **self._vocab.describe(),
        }

    # -- lookup ---------------------------------------------------------
    def row(self, word: str) -> tuple[int | None, str | None]:
        """``(row, entry)`` of ``word``: its row index and, when found only by the lowercase fallback, the
        vocabulary entry it matched (``(None, None)`` when it is not in the vocabulary)."""
        return self._row(word)

    def _row(self, word: str) -> tuple[int | None, str | None]:
        word = nfc(word)
        i = self._index.get(word)
        if i is not None:
            return i, None
        if self.lowercase_fallback:
            low = nfc(word.lower())
            i = self._index.get(low)
            if i is not None:
                return i, low
        return None, None

    def lookup(self, words: Iterable[str]) -> Lookup:
        """Vectors of the words that are in the vocabulary, and a report.

        Exact match first (both sides in Unicode NFC), then (if enabled) the
        lowercased word. A stimulus of several words (``"new york"``) that is
        not an entry itself is a phrase: its ``_``-joined token (``new_york``)
        if the vocabulary has one, else the mean of its words' raw vectors
        (:mod:`isoeat.backends._phrases`; how each was embedded is in
        :attr:`Lookup.embedded`, a missing phrase's missing word in
        :attr:`Lookup.missing_parts`). Vectors with
        NaN/inf values or all zeros are refused, since cosine is undefined.
        """
        words = tuple(words)
        rows: list[int] = []  # a vocabulary row per found word; 0 where the word is a composed phrase
        composed: dict[int, np.ndarray] = {}  # position among the found words -> the phrase's vector
        found: list[str] = []
        missing: list[str] = []
        folded: list[tuple[str, str]] = []
        embedded: list[tuple[str, str]] = []
        parts: list[tuple[str, str]] = []
        for w in words:
            i, via = self._row(w)
            if i is None and phrase_words(w):
                how, vec, entry, gap = compose(w, self._row, self.vectors)
                if vec is None:
                    missing.append(w)
                    parts.append((w, gap))
                    continue
                composed[len(found)] = vec
                rows.append(0)
                found.append(w)
                embedded.append((w, how))
                if entry:
                    folded.append((w, entry))
                continue
            if i is None:
                missing.append(w)
                continue
            rows.append(i)
            found.append(w)
            if via is not None:
                folded.append((w, via))
        vecs = np.asarray(self.vectors[np.asarray(rows, dtype=np.int64)], dtype=np.float64).reshape(
            len(rows), self.dim
        )
        for k, vec in composed.items():
            vecs[k] = vec
        if vecs.size:
            bad = ~np.isfinite(vecs).all(axis=1)
            if bad.any():
                w = found[int(np.flatnonzero(bad)[0])]
                raise DataFormatError(f"{self.source}: vector of {w!r} contains NaN or inf")
            zero = ~vecs.any(axis=1)
            if zero.any():
                w = found[int(np.flatnonzero(zero)[0])]
                raise DataFormatError(f"{self.source}: vector of {w!r} is all zeros (cosine undefined)")
        return Lookup(words, vecs, tuple(found), tuple(missing), tuple(folded), tuple(embedded), tuple(parts))

    def suggest(self, words: Iterable[str], n: int = 3) -> dict[str, tuple[str, ...]]:
        """Did-you-mean for words missing from the vocabulary: word -> up to ``n`` vocabulary words.

        :func:`isoeat._validate.suggest_words` over this vocabulary (the
        lowercased word when the lowercase fallback is on), nearest edits
        first, then the vocabulary's order (frequency for GloVe and word2vec
        files); words with no near entry are left out. For a phrase, the phrase with its first word
        missing from the vocabulary replaced by that word's near entries. Remembered per model, and at most
        :data:`~isoeat._validate.SUGGEST_MODEL_WORDS` distinct words looked up per model (later ones get none).

        Examples
        --------
        >>> m = StaticVectors(["the", "salary", "saler"], np.eye(3), name="toy")
        >>> m.suggest(["salery", "zzzzzzzz"])
        {'salery': ('salary', 'saler')}
        """
        memo = self.__dict__.setdefault("_suggested", {})
        out: dict[str, tuple[str, ...]] = {}
        for w in words:
            key = (w, n)
            if key not in memo:
                if len(memo) >= SUGGEST_MODEL_WORDS:  # the model's budget over every test is spent
                    continue
                memo[key] = self._near(w, n)
            if memo[key]:
                out[w] = memo[key]
        return out

    def _near(self, word: str, n: int) -> tuple[str, ...]:
        """Near vocabulary entries of ``word``; for a phrase, the phrase with its first missing word replaced."""
        parts = phrase_words(word)
        gap = next((i for i, p in enumerate(parts) if self._row(p)[0] is None), None)
        if gap is not None:
            return tuple(" ".join([*parts[:gap], near, *parts[gap + 1:]]) for near in self._near(parts[gap], n))
        query = nfc(word.lower()) if self.lowercase_fallback else nfc(word)
        return tuple(suggest_words(query, self._index.get, n=n))

    # -- reference sample for calibration ------------------------------
    def reference_vectors(
        self, n: int = 100_000, *, text: str | Path | None = None, **_: Any
    ) -> tuple[np.ndarray, str]:
        """Reference vectors for fitting a calibrator.

        Parameters
        ----------
        n : int
            How many (default 100,000, the paper's §4.1 sample size).
        text : path, optional
            A reference text: its distinct words that are in the vocabulary, by
            decreasing frequency in that text, up to ``n``. Without it, the
            top ``n`` rows of the vocabulary (GloVe and word2vec files are in
            frequency order).

        Returns
        -------
        vectors : numpy.ndarray
            ``(m, dim)`` float64, ``m <= n``.
        description : str
            How the sample was drawn (for the whitener's metadata).

        Raises
        ------
        DataFormatError
            A sampled row holds NaN or inf (its row and word named): refused, never dropped.
        """
        n = check_int("reference size 'n'", n, lo=1)
        if text is None:
            m = min(int(n), len(self))
            vecs = np.asarray(self.vectors[:m], dtype=np.float64)
            desc = f"top {m} vocabulary rows by frequency of {self.name}"
            if m < n:
                desc += f" (asked for {n}; the vocabulary has {len(self)})"
        else:
            counts = _word_counts(Path(text))
            rows: list[int] = []
            seen: set[int] = set()
            for w, _c in counts.most_common():
                i, _via = self._row(w)
                if i is not None and i not in seen:
                    seen.add(i)
                    rows.append(i)
                    if len(rows) >= n:
                        break
            if not rows:
                raise DataFormatError(f"{text}: no word of this text is in the vocabulary of {self.name}")
            rows = sorted(rows)
            vecs = np.asarray(self.vectors[np.asarray(rows)], dtype=np.float64)
            desc = f"{len(rows)} vocabulary words of {text} by frequency (asked for {n})"
        bad = ~np.isfinite(vecs).all(axis=1)
        if bad.any():  # refused, never dropped: a reference sample is what its description says
            k = int(np.flatnonzero(bad)[0])
            i = k if text is None else rows[k]
            raise DataFormatError(f"{self.source}: row {i + 1} (word {self.words[i]!r}) of the reference sample has "
                                  "NaN or inf values")
        return vecs, desc


def _word_counts(path: Path) -> Counter:
    if not path.exists():
        raise IsoeatFileNotFoundError(f"{path}: no such reference text")
    counts: Counter = Counter()
    for _lineno, line in iter_lines(path, what="reference text"):
        counts.update(_TOKEN_RE.findall(nfc(line)))
    return counts


def split_npy_spec(spec: str, resolve: Any = None) -> tuple[str, str]:
    """``MATRIX.npy,VOCAB`` of an ``npy:`` spec split where the matrix file is: a comma may be part of a file name.

    The split chosen is the first whose left part is an existing file (``resolve``: how a part becomes a path;
    default: ``~`` expanded); ``VOCAB`` is ``""`` when none is given.

    Raises
    ------
    IsoeatFileNotFoundError
        No split names an existing matrix file: the message names the whole spec and what was tried.

    Examples
    --------
    >>> split_npy_spec("/no/such/m.npy")
    Traceback (most recent call last):
    ...
    isoeat._errors.IsoeatFileNotFoundError: npy:/no/such/m.npy: no such matrix file
    """
    cuts = [i for i, ch in enumerate(spec) if ch == ","] + [len(spec)]
    splits = [(spec[:i], spec[i + 1:]) for i in cuts]
    for matrix, vocab in splits:
        if (resolve(matrix) if resolve else Path(matrix).expanduser()).is_file():
            return matrix, vocab
    if len(splits) == 1:
        raise IsoeatFileNotFoundError(f"npy:{spec}: no such matrix file")
    tried = ", ".join(repr(m) for m, _ in splits)
    raise IsoeatFileNotFoundError(f"npy:{spec}: no matrix file found at any comma (tried {tried}); the spec is "
                                  "npy:MATRIX.npy,VOCAB and a comma may be part of a file name")


def open_static(fmt: str, path: str, *, name: str | None = None, allow_pickle: bool = False,
                **kwargs: Any) -> StaticVectors:
    """Read a vector file of format ``fmt`` into a :class:`StaticVectors`.

    Parameters
    ----------
    fmt : {"glove", "word2vec-text", "word2vec-bin", "npy", "gensim"}
        The reader. For ``npy``, ``path`` may be ``MATRIX.npy,VOCAB``.
    path : str
        The file.
    name : str, optional
        The model's name (default ``"FMT:PATH"``).
    allow_pickle : bool
        Needed for ``gensim`` (``.kv`` files are pickles: loading one runs
        code from the file); default False refuses with the risk stated.
    **kwargs
        :class:`StaticVectors` options (``lowercase_fallback``, ``duplicates``).
    """
    allow_pickle = check_bool("allow_pickle", allow_pickle)
    if fmt == "npy":
        matrix, vocab = split_npy_spec(path)
        raw = RAW_READERS["npy"](matrix, vocab or None)
        path = matrix
    elif fmt == "gensim":
        raw = RAW_READERS["gensim"](path, allow_pickle=allow_pickle)
    elif fmt in RAW_READERS:
        raw = RAW_READERS[fmt](path)
    else:
        raise ConfigError(f"unknown vector format {fmt!r}")
    return StaticVectors(raw.words, raw.vectors, name=name or f"{fmt}:{path}", source=path, locate=raw.locate,
                         file_stamps=raw.stamps, **kwargs)
