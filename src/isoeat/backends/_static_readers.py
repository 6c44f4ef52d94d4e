"""Readers of static word-vector files (GloVe text, word2vec text/.vec and binary, npy + vocabulary, gensim).

Each reader checks the path is a regular file before opening it (see
:mod:`isoeat._textio`), reads text line by line with a bounded line length,
strips a UTF-8 byte-order mark, never allocates more than the file can hold,
and names the file and line (or entry) of the first problem in a one-line
:class:`~isoeat.DataFormatError`. ``.gz`` files are read transparently.

The internal ``raw_*`` readers return a :class:`RawVectors` (words as read,
the matrix, how to name a row in messages, and the stamps of the files read,
which key the fingerprint cache); :class:`~isoeat.backends.static.StaticVectors`
then normalises and indexes the words (:mod:`isoeat.backends._vocab`). The
public ``read_*`` functions return ``(words, matrix)`` with the words
normalised and the ``duplicates`` policy applied.
"""

from __future__ import annotations

import glob
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError, DataFormatError, IsoeatFileNotFoundError, MissingDependencyError
from .._textio import (
    MAX_LINE_BYTES,
    check_compression,
    check_regular_file,
    is_gzip_name,
    iter_lines,
    open_binary,
    read_error,
)
from ._vocab import Locate, build_vocabulary, entry_locator, line_locator
from .cache import file_stamp

__all__ = ["RawVectors", "RAW_READERS", "read_glove_text", "read_word2vec_text", "read_word2vec_binary",
           "read_npy", "read_gensim_kv", "PICKLE_RISK"]

#: Why pickle-based formats need an explicit opt-in (part of every refusal).
PICKLE_RISK = ("gensim .kv files are Python pickles: loading one runs code from the file; "
               "pass --allow-pickle only for files you trust")
#: Largest ratio of uncompressed to compressed size that deflate can reach (about 1032:1).
_GZIP_MAX_RATIO = 1032
#: Longest word accepted in a word2vec binary file, in bytes.
_MAX_WORD_BYTES = 10_000


@dataclass(frozen=True)
class RawVectors:
    """What a reader read: words as in the file, the matrix, row names for messages, file stamps."""

    words: list[str]
    vectors: np.ndarray
    locate: Locate
    stamps: list[dict[str, Any]]


def _check_file(path: Path) -> dict[str, Any]:
    """Refuse anything but a non-empty regular file; return its stamp (taken before reading)."""
    st = check_regular_file(path, what="vector file")
    if st.st_size == 0:
        raise DataFormatError(f"{path}: file is empty")
    return file_stamp(path)


def _is_float(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


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


def _text_header(path: Path, line: str, required: bool) -> tuple[int, int] | None:
    """``(count, dim)`` from a ``count dim`` first line, ``None`` if it is a vector line."""
    parts = line.split()
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        count, dim = int(parts[0]), int(parts[1])
        # a value takes at least 2 bytes ("0 "): no line of the bounded length can hold more
        if dim < 1 or dim > MAX_LINE_BYTES // 2:
            raise DataFormatError(f"{path}:1: header gives dimension {dim}, not a plausible vector size")
        return count, dim
    if required:
        raise DataFormatError(f"{path}:1: expected a header 'count dim' (word2vec/fastText text format)")
    return None


def _split_vector_line(path: Path, lineno: int, line: str, dim: int) -> list[str]:
    parts = line.rstrip().split(" ")
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
    return parts


def raw_text(path: str | Path, *, header: bool | None) -> RawVectors:
    """GloVe (``header=False``), word2vec text/.vec (``True``) or either (``None``).

    A header's count is only checked against the rows found, never used to
    allocate.
    """
    path = Path(path)
    stamp = _check_file(path)
    words: list[str] = []
    lines: list[int] = []
    rows: list[np.ndarray] = []
    dim: int | None = None
    expected: int | None = None
    for lineno, line in iter_lines(path, what="vector file"):
        if not line.strip():
            continue
        if lineno == 1 and header is not False:
            found = _text_header(path, line, bool(header))
            if found is not None:
                expected, dim = found
                continue
        if dim is None:
            dim = len(line.rstrip().split(" ")) - 1
            if dim < 1:
                raise DataFormatError(f"{path}:{lineno}: a vector line needs a word and numbers")
        parts = _split_vector_line(path, lineno, line, dim)
        rows.append(_parse_floats(path, lineno, parts[0], parts[1:], dim))
        words.append(parts[0])
        lines.append(lineno)
    if not rows:
        raise DataFormatError(f"{path}: no vectors found")
    if expected is not None and expected != len(rows):
        raise DataFormatError(f"{path}:1: header announces {expected} vectors, file has {len(rows)}")
    return RawVectors(words, np.vstack(rows), line_locator(path, lines), [stamp])


def _binary_header(path: Path, head: bytes, size: int) -> tuple[int, int, int, str]:
    """``(count, dim, rows the file can hold, note)``; the note explains a count it cannot hold."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    try:
        count, dim = (int(x) for x in head.split())
    except ValueError:
        raise DataFormatError(f"{path}:1: expected a header 'count dim', got {head[:60]!r}") from None
    if count < 1 or dim < 1:
        raise DataFormatError(f"{path}:1: header gives {count} vectors of dimension {dim}")
    row = 4 * dim + 2  # at least a one-byte word, a space and dim float32s per vector
    limit = size * _GZIP_MAX_RATIO if is_gzip_name(path) else size
    held = f"a {size:,}-byte gzip file holds less" if is_gzip_name(path) else f"the file has {size:,} bytes"
    if row > limit:
        raise DataFormatError(
            f"{path}:1: header announces {count} vectors of dimension {dim} but {held}: not even one vector fits"
        )
    capacity = limit // row
    note = f" (they need at least {count * row:,} bytes; {held})" if count > capacity else ""
    return count, dim, min(count, capacity), note


def _binary_word(fh: Any, path: Path, i: int, count: int, note: str) -> str:
    buf = bytearray()
    while True:
        ch = fh.read(1)
        if not ch:
            raise DataFormatError(f"{path}: file ends after {i} of the {count} vectors its header announces{note}")
        if ch == b" ":
            break
        if ch != b"\n" or buf:
            buf += ch
        if len(buf) > _MAX_WORD_BYTES:
            raise DataFormatError(f"{path}: entry {i + 1}: word longer than 10,000 bytes (corrupt file?)")
    try:
        return buf.decode("utf-8")
    except UnicodeDecodeError:
        raise DataFormatError(f"{path}: entry {i + 1}: word is not valid UTF-8: {bytes(buf[:40])!r}") from None


def _binary_rows(fh: Any, path: Path, header: tuple[int, int, int, str]) -> tuple[list[str], np.ndarray]:
    count, dim, capacity, note = header
    nbytes = 4 * dim
    words: list[str] = []
    mat = np.empty((capacity, dim), dtype=np.float32)  # never more rows than the file can hold
    for i in range(count):
        word = _binary_word(fh, path, i, count, note)
        data = fh.read(nbytes)
        if len(data) != nbytes:
            raise DataFormatError(
                f"{path}: file ends inside vector {i + 1} ({word!r}) of the {count} its header announces{note}"
            )
        if i >= capacity:  # cannot happen for a file of the size stamped; the file grew while read
            raise DataFormatError(f"{path}: changed while it was read (more vectors than its size allows)")
        vec = np.frombuffer(data, dtype="<f4")
        if not np.isfinite(vec).all():
            raise DataFormatError(f"{path}: entry {i + 1}: word {word!r} has NaN or inf values")
        mat[i] = vec
        words.append(word)
    if fh.read(4096).strip():  # a header announcing fewer vectors than the file holds would drop the rest
        raise DataFormatError(f"{path}: the file continues after the {count} vectors its header announces "
                              "(the header is wrong, or the file is not one word2vec binary)")
    return words, mat


def raw_word2vec_binary(path: str | Path) -> RawVectors:
    """The word2vec binary format (header line, then word, space, float32s), ``.gz`` too.

    The header is checked against the file size before anything is allocated.
    """
    path = Path(path)
    stamp = _check_file(path)
    try:
        with open_binary(path) as fh:
            header = _binary_header(path, fh.readline(4096), stamp["size"])
            words, mat = _binary_rows(fh, path, header)
    except (OSError, EOFError, zlib.error) as exc:
        raise read_error(path, exc) from None
    return RawVectors(words, mat, entry_locator(path), [stamp])


def _vocab_file(path: Path) -> tuple[list[str], list[int]]:
    words: list[str] = []
    lines: list[int] = []
    for lineno, w in iter_lines(path, what="vocabulary file"):
        if "\t" in w:  # "word<TAB>count" vocabularies
            w = w.split("\t", 1)[0]
        if not w:
            raise DataFormatError(f"{path}:{lineno}: empty vocabulary entry")
        words.append(w)
        lines.append(lineno)
    return words, lines


def _find_vocab(path: Path) -> Path:
    for suffix in (".vocab", ".txt", ".tsv"):
        cand = path.with_suffix(suffix)
        if cand.exists():
            return cand
    raise IsoeatFileNotFoundError(
        f"{path}: no vocabulary file found next to it (looked for .vocab, .txt, .tsv); use npy:MATRIX.npy,VOCAB.txt"
    )


#: Rows of a ``.npy`` matrix checked for NaN/inf at a time (bounded memory on a memory-mapped file).
_FINITE_CHUNK_ROWS = 65_536


def _first_non_finite(mat: np.ndarray) -> int | None:
    """Index of the first row of ``mat`` holding NaN or inf, read in chunks; None when every value is finite."""
    if mat.dtype.kind != "f":
        return None
    for start in range(0, mat.shape[0], _FINITE_CHUNK_ROWS):
        bad = ~np.isfinite(np.asarray(mat[start:start + _FINITE_CHUNK_ROWS])).all(axis=1)
        if bad.any():
            return start + int(np.flatnonzero(bad)[0])
    return None


def _load_npy(path: Path) -> np.ndarray:
    try:
        mat = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        check_compression(path)  # a .npy.bz2, .npy.xz, ...: say so
        raise DataFormatError(f"{path}: not a plain .npy array ({exc})") from None
    except OSError as exc:
        raise DataFormatError(f"{path}: cannot read as .npy ({exc})") from None
    if not isinstance(mat, np.ndarray):  # np.load of a .npz archive gives an NpzFile
        names = ", ".join(getattr(mat, "files", [])[:5])
        getattr(mat, "close", lambda: None)()
        raise DataFormatError(f"{path}: a .npz archive (arrays: {names or 'none'}), not a .npy matrix; npy: reads "
                              "one 2-D .npy file: save the matrix with numpy.save")
    if mat.dtype.kind not in "fiu":
        raise DataFormatError(f"{path}: expected a numeric matrix, got dtype {mat.dtype}")
    if mat.ndim != 2:
        raise DataFormatError(f"{path}: vectors must be a 2-D matrix, got shape {mat.shape}")
    return mat


def raw_npy(path: str | Path, vocab: str | Path | None = None) -> RawVectors:
    """A ``.npy`` matrix (memory-mapped, never unpickled) and its vocabulary file.

    Refused in one line: a ``.npz`` archive, a matrix that is not 2-D and numeric, a vocabulary whose
    number of entries is not the matrix's number of rows (both files named), a row with NaN or inf
    values (the file, the row and its word named, as the text readers do).
    """
    path = Path(path)
    stamp = _check_file(path)
    mat = _load_npy(path)
    vocab = Path(vocab) if vocab is not None else _find_vocab(path)
    if check_regular_file(vocab, what="vocabulary file").st_size == 0:
        raise DataFormatError(f"{vocab}: file is empty")
    vstamp = file_stamp(vocab)
    words, lines = _vocab_file(vocab)
    if len(words) != mat.shape[0]:
        raise DataFormatError(f"{vocab}: the vocabulary has {len(words):,} entries but the matrix {path} has "
                              f"{mat.shape[0]:,} rows (one word per row, in the matrix's order)")
    bad = _first_non_finite(mat)
    if bad is not None:
        raise DataFormatError(f"{path}: row {bad + 1} (word {words[bad]!r}, {vocab}:{lines[bad]}) has NaN or inf "
                              "values")
    return RawVectors(words, mat, line_locator(vocab, lines), [stamp, vstamp])


def raw_gensim_kv(path: str | Path, *, allow_pickle: bool = False) -> RawVectors:
    """A gensim ``KeyedVectors`` file (``.kv``) through gensim; refused unless ``allow_pickle``."""
    path = Path(path)
    if not allow_pickle:
        raise ConfigError(f"{path}: {PICKLE_RISK}")
    stamp = _check_file(path)
    try:
        from gensim.models import KeyedVectors
    except ImportError:
        raise MissingDependencyError('reading gensim .kv files needs gensim: pip install "isoeat[gensim]"') from None
    try:
        kv = KeyedVectors.load(str(path), mmap="r")
    except Exception as exc:  # gensim raises many kinds
        raise DataFormatError(f"{path}: gensim could not load it as KeyedVectors ({exc})") from None
    sidecars = sorted(p for p in path.parent.glob(f"{glob.escape(path.name)}.*") if p.is_file())
    return RawVectors(list(kv.index_to_key), kv.vectors, entry_locator(path),
                      [stamp, *(file_stamp(p) for p in sidecars)])


#: Internal readers by format name (``load_model`` prefixes map onto these).
RAW_READERS: dict[str, Callable[..., RawVectors]] = {
    "glove": lambda p: raw_text(p, header=False),
    "word2vec-text": lambda p: raw_text(p, header=True),
    "word2vec-bin": raw_word2vec_binary,
    "npy": raw_npy,
    "gensim": raw_gensim_kv,
}


def _public(raw: RawVectors, path: Any, duplicates: str) -> tuple[list[str], np.ndarray]:
    vocab = build_vocabulary(raw.words, duplicates=duplicates, locate=raw.locate, source=str(path))
    return list(vocab.words), raw.vectors


def read_glove_text(path: str | Path, *, duplicates: str = "error") -> tuple[list[str], np.ndarray]:
    """Read a GloVe text file: ``word v1 v2 ... vd`` per line, no header.

    Words are returned in Unicode NFC; ``duplicates`` (``"error"``, ``"first"``,
    ``"last"``) is checked as :class:`~isoeat.backends.static.StaticVectors` does.
    """
    return _public(raw_text(path, header=False), path, duplicates)


def read_word2vec_text(path: str | Path, *, duplicates: str = "error") -> tuple[list[str], np.ndarray]:
    """Read word2vec text or fastText ``.vec``: header ``count dim``, then lines (see :func:`read_glove_text`)."""
    return _public(raw_text(path, header=True), path, duplicates)


def read_word2vec_binary(path: str | Path, *, duplicates: str = "error") -> tuple[list[str], np.ndarray]:
    """Read the word2vec binary format (header line, then word, space, float32s)."""
    return _public(raw_word2vec_binary(path), path, duplicates)


def read_npy(path: str | Path, vocab: str | Path | None = None, *,
             duplicates: str = "error") -> tuple[list[str], np.ndarray]:
    """Read a ``.npy`` matrix (memory-mapped, never unpickled) and its vocabulary.

    The vocabulary is ``vocab`` or, when omitted, a sibling file named like the
    matrix with suffix ``.vocab``, ``.txt`` or ``.tsv`` (one word per line,
    optionally ``word<TAB>count``).
    """
    return _public(raw_npy(path, vocab), path, duplicates)


def read_gensim_kv(path: str | Path, *, allow_pickle: bool = False,
                   duplicates: str = "error") -> tuple[list[str], np.ndarray]:
    """Read a gensim ``KeyedVectors`` file (``.kv``) through gensim.

    gensim stores these with Python's pickle, so loading one runs code from
    the file: it is refused (:class:`~isoeat.ConfigError`) unless
    ``allow_pickle`` set to true. Load only files you trust.
    """
    return _public(raw_gensim_kv(path, allow_pickle=allow_pickle), path, duplicates)
