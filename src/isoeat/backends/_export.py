"""Export a model's vectors to a file that loads back: ``.npy`` + vocabulary (``npy:``) or GloVe text (``glove:``).

:func:`export_vectors` (``isoeat export``) writes the rows of a model with a vocabulary (static vectors) for a
list of words, or its first ``top`` rows, exactly as stored: ``.npy`` keeps the dtype and every bit; GloVe text
writes each value as the shortest decimal that reads back to the same float32 (the text reader's type), and
refuses a matrix whose values float32 would change. Rows are streamed in chunks of :data:`CHUNK_ROWS` (memory
bounded by the chunk, whatever ``top``); the matrix and its vocabulary are written atomically, together
(``_io.atomic_write``: nothing half-written, an existing file replaced only with ``force``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from .._errors import ConfigError, CoverageError
from .._io import atomic_write
from .._types import VocabularyModel, name_of
from .._validate import check_bool, check_int, check_path, show
from ._phrases import phrase_words

__all__ = ["export_vectors", "out_paths", "CHUNK_ROWS", "EXPORT_FORMATS"]

#: Rows read, converted and written at a time (a chunk of float64 rows of dimension 1024 is 64 MiB).
CHUNK_ROWS = 8192
#: Output suffix -> format and the spec that loads it back.
EXPORT_FORMATS = {".npy": "npy", ".txt": "glove"}
_WHERE = "export_vectors"


def out_paths(path: Any, force: bool) -> tuple[Path, Path | None]:
    """The file(s) written: ``X.npy`` and its vocabulary ``X.vocab`` (what ``npy:X.npy`` finds), or ``X.txt``."""
    out = check_path(f"{_WHERE}: path", path)
    if out.suffix.lower() not in EXPORT_FORMATS:
        raise ConfigError(f"{_WHERE}: path {out}: give a name ending in .npy (matrix, with its vocabulary in a "
                          f"{out.with_suffix('.vocab').name} beside it) or .txt (GloVe text)")
    vocab = out.with_suffix(".vocab") if out.suffix.lower() == ".npy" else None
    for p in (out, vocab):
        if p is None:
            continue
        if p.is_dir() or (p.exists() and not p.is_file()):
            raise ConfigError(f"{_WHERE}: {p} is a folder or not a regular file; give a file name")
        if p.exists() and not force:
            raise ConfigError(f"{_WHERE}: {p} exists; nothing written (force=True replaces it)")
    return out, vocab


def _rows_of_words(model: Any, words: Any, skip_missing: bool) -> tuple[list[int], list[str]]:
    """The rows of ``words`` (each row once, in the order asked) and the words not in the vocabulary."""
    if isinstance(words, str):
        words = [words]
    if not isinstance(words, Sequence) or not words:
        raise ConfigError(f"{_WHERE}: words must be a non-empty list of words, got {show(words)}")
    rows: list[int] = []
    seen: set[int] = set()
    missing: list[str] = []
    for i, w in enumerate(words):
        if not isinstance(w, str) or not w.strip():
            raise ConfigError(f"{_WHERE}: words[{i}] must be a non-empty string, got {show(w)}")
        row, _ = model.row(w.strip())
        if row is None:
            missing.append(w)
        elif row not in seen:
            seen.add(row)
            rows.append(int(row))
    if missing and (not skip_missing or not rows):
        shown = ", ".join(map(repr, missing[:10])) + (f", ... ({len(missing)} in all)" if len(missing) > 10 else "")
        raise CoverageError(f"{_WHERE}: not in the vocabulary of {_name(model)}: {shown}; nothing written"
                            + ("" if rows else " (no word of the list is in it)" if skip_missing else
                               " (skip_missing=True writes the others)") + _phrase_note(missing))
    return rows, missing


def _phrase_note(missing: Sequence[str]) -> str:
    """Why a phrase is not exported: it is composed when looked up (:mod:`._phrases`), not a stored row."""
    phrase = next((w for w in missing if phrase_words(w)), None)
    if phrase is None:
        return ""
    return (f"; {phrase!r} is a phrase: a test embeds it by the phrase rule (its '_' token, else the mean of its "
            "words), but export writes stored rows only: export its words or its '_' token")


def _name(model: Any) -> str:
    return name_of(model, "the model")


def _unsafe(word: str, text: bool) -> str:
    """Why ``word`` cannot be one line of the output (a vocabulary line, a GloVe line's first field), or ``""``."""
    if any(c in word for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029") or word.startswith("\ufeff"):
        return "holds a line break"
    if word != word.strip():
        return "starts or ends with a blank"
    if not text and "\t" in word:
        return "holds a tab (a vocabulary line is WORD<TAB>COUNT)"
    if text and " " in word and any(_is_number(p) for p in word.split(" ")[1:]):
        return "holds a space followed by a number (a GloVe line would read it as a value)"
    return ""


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _write_chunks(model: Any, rows: Sequence[int] | None, n: int, fh: IO, vf: IO | None) -> None:
    """Stream the rows (``None``: the first ``n``) to the matrix file ``fh`` (binary .npy, or GloVe text when ``vf``
    is None) and the vocabulary file ``vf``."""
    words = model.words
    text = vf is None
    for start in range(0, n, CHUNK_ROWS):
        idx = np.arange(start, min(n, start + CHUNK_ROWS)) if rows is None else np.asarray(
            rows[start:start + CHUNK_ROWS], dtype=np.int64)
        block = np.asarray(model.vectors[idx])
        names = [str(words[i]) for i in idx]
        for w in names:
            why = _unsafe(w, text)
            if why:
                raise ConfigError(f"{_WHERE}: the word {w!r} {why}: it cannot be written to "
                                  f"{'GloVe text' if text else 'a vocabulary file'}; nothing written"
                                  + ("; write .npy" if text and not why.endswith("break") else ""))
        if vf is None:
            as32 = block.astype(np.float32)
            if not np.array_equal(as32.astype(block.dtype), block):
                raise ConfigError(f"{_WHERE}: the vectors are {block.dtype} and GloVe text is read back as float32, "
                                  "which would change them; nothing written: write .npy to keep them exactly")
            fh.write("".join(w + " " + " ".join(map(str, r)) + "\n" for w, r in zip(names, as32)))
        else:
            fh.write(np.ascontiguousarray(block).tobytes())
            vf.write("".join(w + "\n" for w in names))


def export_vectors(model: Any, path: Any, *, words: Any = None, top: Any = None, skip_missing: bool = False,
                   force: bool = False) -> dict[str, Any]:
    """Write a model's vectors for ``words``, or its first ``top`` rows, to a file that loads back.

    Parameters
    ----------
    model : StaticVectors
        A model with a vocabulary (static vectors: ``glove:``, ``word2vec:``, ``npy:``, a named model).
    path : str or Path
        ``X.npy``: the matrix (the model's dtype, every bit) and its vocabulary ``X.vocab`` beside it, one word a
        line (``load_model("npy:X.npy")``); or ``X.txt``: GloVe text (``load_model("glove:X.txt")``), values as
        the shortest decimals that read back to the same float32.
    words : list of str, optional
        The words written, each under its vocabulary entry, once, in the order given (a word found only by the
        lowercase fallback is written as the entry it matched).
    top : int, optional
        The first ``top`` rows instead (the most frequent words of GloVe and word2vec files), at most the
        vocabulary's size. Give ``words`` or ``top``.
    skip_missing : bool
        Write the words that are in the vocabulary and report the others in ``missing`` (default False: a word
        not in the vocabulary is a :class:`~isoeat.CoverageError` and nothing is written).
    force : bool
        Replace existing output files (default False: refused, nothing written).

    Returns
    -------
    dict
        ``path``, ``vocabulary`` (the ``.vocab`` file, or None), ``format`` (``npy`` or ``glove``), ``spec`` (what
        :func:`isoeat.load_model` takes), ``rows``, ``dim``, ``dtype``, ``missing``.

    Examples
    --------
    >>> import numpy as np, tempfile, os, isoeat
    >>> m = isoeat.StaticVectors(["he", "she", "it"], np.eye(3, dtype=np.float32), name="toy")
    >>> out = os.path.join(tempfile.mkdtemp(), "v.txt")
    >>> export_vectors(m, out, words=["she", "it"])["rows"]
    2
    >>> isoeat.load_model("glove:" + out).lookup(["she"]).vectors.tolist()
    [[0.0, 1.0, 0.0]]
    """
    if not isinstance(model, VocabularyModel):
        raise ConfigError(f"{_WHERE}: model must be a model with a vocabulary (static vectors, e.g. "
                          f"isoeat.load_model('glove-6b-50d')), got {show(model)}; a contextual model's vectors "
                          "depend on their contexts and have no rows to export")
    force = check_bool("force", force)
    skip_missing = check_bool("skip_missing", skip_missing)
    if (words is None) == (top is None):
        raise ConfigError(f"{_WHERE}: give words=[...] or top=N (one of them)")
    out, vocab = out_paths(path, force)
    missing: list[str] = []
    rows: list[int] | None = None
    if top is not None:
        n = check_int("top", top, lo=1)
        if n > len(model.words):
            raise ConfigError(f"{_WHERE}: top: {n:,} rows asked, but {_name(model)} has {len(model.words):,}; "
                              "nothing written")
    else:
        rows, missing = _rows_of_words(model, words, skip_missing)
        n = len(rows)
    dim, dtype = int(model.vectors.shape[1]), np.asarray(model.vectors[:1]).dtype
    if vocab is None:
        with atomic_write(out, "w") as fh:
            _write_chunks(model, rows, n, fh, None)
    else:
        header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (n, dim)}
        with contextlib.ExitStack() as stack:  # both renamed after both are written; either fails: neither
            vf = stack.enter_context(atomic_write(vocab, "w"))
            fh = stack.enter_context(atomic_write(out, "wb"))
            np.lib.format.write_array_header_1_0(fh, header)
            _write_chunks(model, rows, n, fh, vf)
    fmt = EXPORT_FORMATS[out.suffix.lower()]
    return {"path": str(out), "vocabulary": None if vocab is None else str(vocab), "format": fmt,
            "spec": f"{fmt}:{out}", "rows": n, "dim": dim, "dtype": str(dtype), "missing": missing}
