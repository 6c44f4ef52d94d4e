"""Static word vectors: a vocabulary and a matrix.

Readers for GloVe text (no header), word2vec text and fastText ``.vec``
(header ``count dim``), word2vec binary, gensim ``KeyedVectors`` files and
``.npy`` matrices with a vocabulary file. Each reader validates as it goes and
names the file and line of the first problem.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from .._errors import (
    DataFormatError,
    IsoeatFileNotFoundError,
    MissingDependencyError,
)
from .._validate import check_int
from .base import Lookup

__all__ = [
    "StaticVectors",
    "read_glove_text",
    "read_word2vec_text",
    "read_word2vec_binary",
    "read_npy",
    "read_gensim_kv",
]

_TOKEN_RE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", re.UNICODE)


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
        words: Sequence[str],
        vectors: np.ndarray,
        *,
        name: str = "vectors",
        source: str = "",
        lowercase_fallback: bool | None = None,
    ) -> None:
        vectors = np.asarray(vectors) if not isinstance(vectors, np.ndarray) else vectors
        if vectors.ndim != 2:
            raise DataFormatError(f"{source or name}: vectors must be a 2-D matrix, got shape {vectors.shape}")
        if len(words) != vectors.shape[0]:
            raise DataFormatError(
                f"{source or name}: {len(words)} vocabulary entries but {vectors.shape[0]} vector rows"
            )
        if vectors.shape[0] == 0:
            raise DataFormatError(f"{source or name}: no vectors")
        self.words: tuple[str, ...] = tuple(words)
        self.vectors = vectors
        self.name = name
        self.source = source or name
        self.dim = int(vectors.shape[1])
        index: dict[str, int] = {}
        for i, w in enumerate(self.words):
            index.setdefault(w, i)  # first (most frequent) occurrence wins
        self._index = index
        self.n_duplicates = len(self.words) - len(index)
        if lowercase_fallback is None:
            sample = self.words[:20000]
            upper = sum(1 for w in sample if w != w.lower())
            lowercase_fallback = upper <= 0.01 * len(sample)
        self.lowercase_fallback = bool(lowercase_fallback)
        self._fingerprint: str | None = None

    # -- basic container behaviour -------------------------------------
    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self._index

    def __repr__(self) -> str:
        return f"StaticVectors(name={self.name!r}, vocab={len(self)}, dim={self.dim})"

    @property
    def fingerprint(self) -> str:
        """SHA-256 over shape, dtype, the vocabulary and 1,024 evenly spaced rows.

        A sampled hash keeps this fast for multi-gigabyte models while any
        change of vocabulary, order or dimension, and almost any change of the
        values, changes it.
        """
        if self._fingerprint is None:
            h = hashlib.sha256()
            h.update(f"static|{self.vectors.shape}|".encode())
            h.update("\n".join(self.words).encode("utf-8", "surrogatepass"))
            rows = np.unique(np.linspace(0, len(self) - 1, num=min(1024, len(self))).astype(np.int64))
            h.update(np.ascontiguousarray(self.vectors[rows], dtype=np.float32).tobytes())
            self._fingerprint = h.hexdigest()[:16]
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
        }

    # -- lookup ---------------------------------------------------------
    def _row(self, word: str) -> tuple[int | None, str | None]:
        i = self._index.get(word)
        if i is not None:
            return i, None
        if self.lowercase_fallback:
            low = word.lower()
            i = self._index.get(low)
            if i is not None:
                return i, low
        return None, None

    def lookup(self, words: Iterable[str]) -> Lookup:
        """Vectors of the words that are in the vocabulary, and a report.

        Exact match first, then (if enabled) the lowercased word. Vectors with
        NaN/inf values or all zeros are refused, since cosine is undefined.
        """
        words = tuple(words)
        rows: list[int] = []
        found: list[str] = []
        missing: list[str] = []
        folded: list[tuple[str, str]] = []
        for w in words:
            i, via = self._row(w)
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
        if vecs.size:
            bad = ~np.isfinite(vecs).all(axis=1)
            if bad.any():
                w = found[int(np.flatnonzero(bad)[0])]
                raise DataFormatError(f"{self.source}: vector of {w!r} contains NaN or inf")
            zero = ~vecs.any(axis=1)
            if zero.any():
                w = found[int(np.flatnonzero(zero)[0])]
                raise DataFormatError(f"{self.source}: vector of {w!r} is all zeros (cosine undefined)")
        return Lookup(words, vecs, tuple(found), tuple(missing), tuple(folded))

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
            vecs = np.asarray(self.vectors[np.asarray(sorted(rows))], dtype=np.float64)
            desc = f"{len(rows)} vocabulary words of {text} by frequency (asked for {n})"
        finite = np.isfinite(vecs).all(axis=1)
        if not finite.all():
            vecs = vecs[finite]
            desc += f"; {int((~finite).sum())} non-finite rows skipped"
        return vecs, desc


def _word_counts(path: Path) -> Counter:
    if not path.exists():
        raise IsoeatFileNotFoundError(f"{path}: no such reference text")
    counts: Counter = Counter()
    for _lineno, line in _binary_lines(path):
        counts.update(_TOKEN_RE.findall(line))
    return counts


# ----------------------------------------------------------------------------
# readers
# ----------------------------------------------------------------------------


def _check_file(path: Path) -> None:
    if not path.exists():
        raise IsoeatFileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise IsoeatFileNotFoundError(f"{path}: is a folder, expected a vector file")
    if path.stat().st_size == 0:
        raise DataFormatError(f"{path}: file is empty")


def _parse_floats(path: Path, lineno: int, word: str, fields: Sequence[str], dim: int) -> np.ndarray:
    if len(fields) != dim:
        raise DataFormatError(
            f"{path}:{lineno}: word {word!r} has {len(fields)} values, expected {dim} "
            "(inconsistent dimensions)"
        )
    try:
        vec = np.array(fields, dtype=np.float32)
    except ValueError:
        bad = next((f for f in fields if not _is_float(f)), "?")
        raise DataFormatError(f"{path}:{lineno}: word {word!r}: {bad!r} is not a number") from None
    if not np.isfinite(vec).all():
        raise DataFormatError(f"{path}:{lineno}: word {word!r} has NaN or inf values")
    return vec


def _is_float(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _binary_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, text)``, decoding each line on its own so that a
    bad byte is reported on the line where it is."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise DataFormatError(
                        f"{path}:{lineno}: not valid UTF-8 (byte {exc.start + 1} of the line: {exc.reason})"
                    ) from None
                yield lineno, text.rstrip("\n").rstrip("\r")
    except (OSError, EOFError) as exc:
        raise DataFormatError(f"{path}: cannot read ({exc})") from None


def _read_text_vectors(path: Path, *, header: bool | None) -> tuple[list[str], np.ndarray]:
    _check_file(path)
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim: int | None = None
    expected: int | None = None
    for lineno, line in _binary_lines(path):
        if not line.strip():
            continue
        if lineno == 1 and header is not False:
            parts = line.split()
            if len(parts) == 2 and all(p.isdigit() for p in parts):
                expected, dim = int(parts[0]), int(parts[1])
                if dim < 1:
                    raise DataFormatError(f"{path}:1: header gives dimension {dim}")
                continue
            if header:
                raise DataFormatError(
                    f"{path}:1: expected a header 'count dim' (word2vec/fastText text format)"
                )
        parts = line.rstrip().split(" ")
        if dim is None:
            dim = len(parts) - 1
            if dim < 1:
                raise DataFormatError(f"{path}:{lineno}: a vector line needs a word and numbers")
        if len(parts) > dim + 1:
            # GloVe 840B has a few words containing spaces; a number among the
            # extra leading fields means a vector of another dimension instead
            extra = parts[1 : len(parts) - dim]
            if any(_is_float(f) for f in extra):
                raise DataFormatError(
                    f"{path}:{lineno}: word {parts[0]!r} has {len(parts) - 1} values, expected {dim} "
                    "(inconsistent dimensions)"
                )
            parts = [" ".join(parts[: len(parts) - dim]), *parts[len(parts) - dim :]]
        word = parts[0]
        rows.append(_parse_floats(path, lineno, word, parts[1:], dim))
        words.append(word)
    if not rows:
        raise DataFormatError(f"{path}: no vectors found")
    if expected is not None and expected != len(rows):
        raise DataFormatError(f"{path}:1: header announces {expected} vectors, file has {len(rows)}")
    return words, np.vstack(rows)


def read_glove_text(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Read a GloVe text file: ``word v1 v2 ... vd`` per line, no header."""
    return _read_text_vectors(Path(path), header=False)


def read_word2vec_text(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Read word2vec text or fastText ``.vec``: header ``count dim``, then lines."""
    return _read_text_vectors(Path(path), header=True)


def read_word2vec_binary(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Read the word2vec binary format (header line, then word, space, float32s)."""
    path = Path(path)
    _check_file(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        head = fh.readline()
        try:
            count, dim = (int(x) for x in head.split())
        except ValueError:
            raise DataFormatError(f"{path}:1: expected a header 'count dim', got {head[:60]!r}") from None
        if count < 1 or dim < 1:
            raise DataFormatError(f"{path}:1: header gives {count} vectors of dimension {dim}")
        nbytes = 4 * dim
        words: list[str] = []
        mat = np.empty((count, dim), dtype=np.float32)
        for i in range(count):
            buf = bytearray()
            while True:
                ch = fh.read(1)
                if not ch:
                    raise DataFormatError(
                        f"{path}: file ends after {i} of the {count} vectors its header announces"
                    )
                if ch == b" ":
                    break
                if ch != b"\n" or buf:
                    buf += ch
                if len(buf) > 10_000:
                    raise DataFormatError(f"{path}: entry {i + 1}: word longer than 10,000 bytes (corrupt file?)")
            try:
                word = buf.decode("utf-8")
            except UnicodeDecodeError:
                raise DataFormatError(f"{path}: entry {i + 1}: word is not valid UTF-8: {bytes(buf[:40])!r}") from None
            data = fh.read(nbytes)
            if len(data) != nbytes:
                raise DataFormatError(
                    f"{path}: file ends inside vector {i + 1} ({word!r}) of the {count} its header announces"
                )
            vec = np.frombuffer(data, dtype="<f4")
            if not np.isfinite(vec).all():
                raise DataFormatError(f"{path}: entry {i + 1}: word {word!r} has NaN or inf values")
            mat[i] = vec
            words.append(word)
    return words, mat


def _read_vocab_file(path: Path) -> list[str]:
    _check_file(path)
    words: list[str] = []
    for lineno, w in _binary_lines(path):
        if "\t" in w:  # "word<TAB>count" vocabularies
            w = w.split("\t", 1)[0]
        if not w:
            raise DataFormatError(f"{path}:{lineno}: empty vocabulary entry")
        words.append(w)
    return words


def read_npy(path: str | Path, vocab: str | Path | None = None) -> tuple[list[str], np.ndarray]:
    """Read a ``.npy`` matrix (memory-mapped, never unpickled) and its vocabulary.

    The vocabulary is ``vocab`` or, when omitted, a sibling file named like the
    matrix with suffix ``.vocab``, ``.txt`` or ``.tsv`` (one word per line,
    optionally ``word<TAB>count``).
    """
    path = Path(path)
    _check_file(path)
    if vocab is None:
        for suffix in (".vocab", ".txt", ".tsv"):
            cand = path.with_suffix(suffix)
            if cand.exists():
                vocab = cand
                break
        else:
            raise IsoeatFileNotFoundError(
                f"{path}: no vocabulary file found next to it (looked for .vocab, .txt, .tsv); "
                "use npy:MATRIX.npy,VOCAB.txt"
            )
    try:
        mat = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        raise DataFormatError(f"{path}: not a plain .npy array ({exc})") from None
    except OSError as exc:
        raise DataFormatError(f"{path}: cannot read as .npy ({exc})") from None
    if mat.dtype.kind not in "fiu":
        raise DataFormatError(f"{path}: expected a numeric matrix, got dtype {mat.dtype}")
    return _read_vocab_file(Path(vocab)), mat


def read_gensim_kv(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Read a gensim ``KeyedVectors`` file (``.kv``) through gensim.

    gensim stores these with Python's pickle: load only files you trust.
    """
    path = Path(path)
    _check_file(path)
    try:
        from gensim.models import KeyedVectors
    except ImportError:
        raise MissingDependencyError(
            'reading gensim .kv files needs gensim: pip install "isoeat[gensim]"'
        ) from None
    try:
        kv = KeyedVectors.load(str(path), mmap="r")
    except Exception as exc:  # gensim raises many kinds
        raise DataFormatError(f"{path}: gensim could not load it as KeyedVectors ({exc})") from None
    return list(kv.index_to_key), kv.vectors
