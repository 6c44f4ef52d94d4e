"""Reading corpus files safely: regular files only, bounded lines, content fingerprints.

* :func:`check_regular_file` refuses, by ``os.stat`` and before anything
  opens it, a path that is not a regular file: a FIFO (opening one blocks
  until a writer appears), a character or block device (``/dev/zero`` never
  ends), a socket or a folder. The message is one line naming the path and
  what it is.
* :func:`bounded_lines` yields the raw lines of an open binary stream with at
  most :data:`MAX_LINE_BYTES` bytes held at a time: a longer line is a
  :class:`~isoeat.DataFormatError` naming the file and the line (corpus files
  hold one paragraph per line; a line over 1 MiB means the file is not such a
  text, e.g. a minified JSON dump or text without line breaks).
* :func:`file_sha256` is the SHA-256 of a file's bytes, streamed in 1 MiB
  blocks and cached in this process against the file's resolved path, size,
  modification time (ns) and inode, so asking again costs one ``stat``.
* :func:`files_sha256` combines several files (a folder corpus) with their
  names relative to the corpus root.

These are private helpers of :mod:`isoeat.corpora`; :func:`file_sha256` is
public as ``isoeat.corpora.file_sha256``.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from .. import _textio
from .._errors import DataFormatError, IsoeatFileNotFoundError

__all__ = ["MAX_LINE_BYTES", "check_regular_file", "bounded_lines", "file_sha256", "files_sha256", "texts_sha256"]

#: Longest line (in bytes, newline included) a corpus file may have (the one limit of every text reader).
MAX_LINE_BYTES = _textio.MAX_LINE_BYTES

def check_regular_file(path: str | os.PathLike) -> os.stat_result:
    """``os.stat(path)`` when ``path`` is a regular file; else a one-line error (see :mod:`isoeat._textio`).

    Raises
    ------
    IsoeatFileNotFoundError
        No such path, or a FIFO, device, socket or folder
        (``"PATH: not a regular file (a FIFO); expected a corpus file"``).
    """
    return _textio.check_regular_file(path, what="corpus file")


def _limit_words(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n} bytes"


def bounded_lines(fh: IO[bytes], path: str | os.PathLike) -> Iterator[bytes]:
    """The lines of a binary stream (newline kept), refusing one longer than :data:`MAX_LINE_BYTES`.

    At most ``MAX_LINE_BYTES + 1`` bytes are read per step, so memory stays
    bounded whatever the file holds.

    Raises
    ------
    DataFormatError
        ``"PATH:N: line longer than 1 MiB; ..."`` at the first such line.
    """
    limit = MAX_LINE_BYTES
    readline = fh.readline
    lineno = 0
    while True:
        raw = readline(limit + 1)
        if not raw:
            return
        lineno += 1
        if len(raw) > limit:
            raise DataFormatError(
                f"{path}:{lineno}: line longer than {_limit_words(limit)}; corpus files hold one paragraph per "
                "line (is this a text file with line breaks?)"
            )
        yield raw


# ---------------------------------------------------------------------------
# content fingerprints
# ---------------------------------------------------------------------------

_SHA_CACHE: dict[tuple[str, int, int, int, int], str] = {}
_SHA_LOCK = threading.Lock()
_SHA_CACHE_MAX = 4096


def _open_raw(path: Path) -> IO[bytes]:
    return open(path, "rb")


def file_sha256(path: str | os.PathLike, *, fresh: bool = False) -> str:
    """SHA-256 (hex) of the bytes of a regular file, streamed; cached per path, size, mtime and inode
    (``fresh``: read now, whatever the cache holds: where a result is reused on the strength of the hash alone).

    Parameters
    ----------
    path : str or path
        The file (compressed files are hashed as stored, not decompressed).

    Returns
    -------
    str
        64 hex digits.

    Raises
    ------
    IsoeatFileNotFoundError
        Missing, unreadable, or not a regular file (see :func:`check_regular_file`).

    Examples
    --------
    >>> import hashlib, tempfile, os
    >>> with tempfile.NamedTemporaryFile(delete=False) as fh:
    ...     _ = fh.write(b"abc")
    >>> file_sha256(fh.name) == hashlib.sha256(b"abc").hexdigest()
    True
    >>> os.remove(fh.name)
    """
    p = Path(path)
    st = check_regular_file(p)
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)
    with _SHA_LOCK:
        hit = None if fresh else _SHA_CACHE.get(key)
    if hit is not None:
        return hit
    h = hashlib.sha256()
    try:
        with _open_raw(p) as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        raise IsoeatFileNotFoundError(f"{p}: cannot be read ({exc.strerror or exc})") from None
    digest = h.hexdigest()
    with _SHA_LOCK:
        if len(_SHA_CACHE) >= _SHA_CACHE_MAX:
            _SHA_CACHE.pop(next(iter(_SHA_CACHE)))
        _SHA_CACHE[key] = digest
    return digest


def files_sha256(root: Path, files: Iterable[Path]) -> str:
    """One SHA-256 over several files: for each, its path relative to ``root`` (or its name) and its hash.

    A single file given as the root hashes to exactly :func:`file_sha256` of it.
    """
    files = list(files)
    if len(files) == 1 and files[0] == root:
        return file_sha256(root)
    h = hashlib.sha256(b"isoeat-corpus-files-1\n")
    for f in files:
        try:
            rel = f.relative_to(root).as_posix()
        except ValueError:
            rel = f.name
        h.update(f"{rel}\0{file_sha256(f)}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def texts_sha256(texts: Iterable[str]) -> str:
    """SHA-256 of strings given in memory (each length-prefixed UTF-8), for corpora without files.

    Also the digest of a list of texts in the contextual encoders' cache keys.
    """
    h = hashlib.sha256()
    for t in texts:
        b = t.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()
