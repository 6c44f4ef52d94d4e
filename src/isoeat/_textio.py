"""Reading user text files safely: one helper for every reader of isoeat.

Every file a user names (vector files, vocabularies, reference texts, word
lists, benchmarks, corpora) should go through these helpers so that the same
input means the same thing everywhere and no input can hang, exhaust memory
or silently change meaning:

* :func:`check_regular_file` -- ``os.stat`` *before* opening: a missing path,
  a folder, a FIFO, a device (``/dev/zero``) or a socket is refused with a
  one-line error naming the path (opening a FIFO blocks forever; reading
  ``/dev/zero`` never ends).
* :func:`open_binary` -- opens a file for binary reading, through gzip when
  its name ends in ``.gz``.
* :func:`read_error` -- turns what reading raised (``OSError``, a bad gzip
  header, a truncated or corrupt gzip stream) into a one-line
  :class:`~isoeat.DataFormatError` naming the file.
* :func:`iter_lines` -- ``(line number, text)`` pairs: each line decoded as
  UTF-8 on its own (a bad byte is reported on its line), a UTF-8 byte-order
  mark at the start of the file removed, line endings (``\\n``, ``\\r\\n``)
  removed, and no line longer than ``max_line_bytes`` (default
  :data:`MAX_LINE_BYTES`, 1 MiB) ever held in memory.
* :func:`nfc` -- a word in Unicode normal form C (composed): ``"cafe\\u0301"``
  and ``"caf\\u00e9"`` are the same word to a reader, so isoeat normalises
  vocabularies and queries alike. Readers should report the words they
  changed (count and examples) rather than change them silently.

Adopting it in a reader::

    from isoeat._textio import iter_lines, nfc

    for lineno, line in iter_lines(path, what="benchmark file"):
        fields = line.split("\\t")
        ...  # errors: raise DataFormatError(f"{path}:{lineno}: ...")

This module imports only the standard library and :mod:`isoeat._errors`.
"""

from __future__ import annotations

import gzip
import os
import stat
import unicodedata
import zlib
from collections.abc import Iterator
from typing import IO

from ._errors import DataFormatError, IsoeatFileNotFoundError

__all__ = ["MAX_LINE_BYTES", "BOM", "check_regular_file", "check_compression", "compression_kind", "is_gzip_name",
           "open_binary", "read_error", "iter_lines", "nfc", "strip_bom"]

#: Longest line (in bytes, without its line ending) :func:`iter_lines` accepts by default: 1 MiB.
MAX_LINE_BYTES = 1 << 20
#: The UTF-8 byte-order mark as text (some Windows editors write it at the start of a file).
BOM = "\ufeff"
_BOM_BYTES = BOM.encode("utf-8")


def check_regular_file(path: str | os.PathLike, *, what: str = "file") -> os.stat_result:
    """``os.stat(path)`` if it is a regular file (symbolic links are followed).

    Parameters
    ----------
    path : path
        The file to check; nothing is opened.
    what : str
        What the file should be, for messages ("vector file", "vocabulary").

    Returns
    -------
    os.stat_result
        Its status (size, mtime, inode), e.g. to compare with a later one.

    Raises
    ------
    IsoeatFileNotFoundError
        ``PATH: no such file``, ``PATH: is a folder, expected a WHAT``, or
        ``PATH: not a regular file (a FIFO); expected a WHAT``.

    Examples
    --------
    >>> check_regular_file("/dev/null", what="vector file")
    Traceback (most recent call last):
    ...
    isoeat._errors.IsoeatFileNotFoundError: /dev/null: not a regular file (a character device); expected a vector file
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise IsoeatFileNotFoundError(f"{path}: no such file") from None
    except OSError as exc:
        raise IsoeatFileNotFoundError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise IsoeatFileNotFoundError(f"{path}: is a folder, expected a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise IsoeatFileNotFoundError(f"{path}: not a regular file ({_kind(st.st_mode)}); expected a {what}")
    return st


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"


def is_gzip_name(path: str | os.PathLike) -> bool:
    """Whether the file name ends in ``.gz`` (any case)."""
    return str(path).lower().endswith(".gz")


#: Compressions isoeat does not read: (name suffix, magic bytes, name), refused by name or by content.
_UNSUPPORTED_COMPRESSION = (
    (".bz2", b"BZh", "bzip2"), (".xz", b"\xfd7zXZ\x00", "xz"), (".lzma", b"\x5d\x00\x00", "lzma"),
    (".zst", b"\x28\xb5\x2f\xfd", "zstd"), (".zip", b"PK\x03\x04", "zip"), (".7z", b"7z\xbc\xaf\x27\x1c", "7z"),
    (".lz4", b"\x04\x22\x4d\x18", "lz4"), (".z", b"\x1f\x9d", "compress (.Z)"),
)
#: What every refusal of a compressed file says is read.
SUPPORTED_COMPRESSION = "this file is read uncompressed or gzip-compressed (.gz) only; decompress it first"


def check_compression(path: str | os.PathLike) -> None:
    """Refuse a file compressed other than by gzip, by its name or its first bytes (one line naming both).

    Examples
    --------
    >>> check_compression("vectors.txt.bz2")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    isoeat._errors.DataFormatError: vectors.txt.bz2: bzip2 compression is not supported (this file is read ...)
    """
    if str(path).lower().endswith(".gz"):
        return
    head = b""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError:
        pass  # opening it again reports the cause
    kind = compression_kind(path, head)
    if kind is not None:
        raise DataFormatError(f"{path}: {kind} compression is not supported ({SUPPORTED_COMPRESSION})")
    if head.startswith(b"\x1f\x8b"):
        raise DataFormatError(f"{path}: a gzip file without a .gz name; rename it to end in .gz")


def compression_kind(path: str | os.PathLike, head: bytes, *, gzip: bool = False) -> str | None:
    """The compression a file's name or first bytes ``head`` say it has, other than gzip (``gzip``: gzip too,
    for a reader of plain text only); None: none of them.

    >>> compression_kind("t.yaml.bz2", b""), compression_kind("t.yaml", b"BZh91AY"), compression_kind("t.yaml", b"id")
    ('bzip2', 'bzip2', None)
    """
    name = str(path).lower()
    if gzip and (name.endswith(".gz") or head.startswith(b"\x1f\x8b")):
        return "gzip"
    for suffix, magic, kind in _UNSUPPORTED_COMPRESSION:
        by_content = head.startswith(magic) and (magic != b"BZh" or head[3:4].isdigit())
        if name.endswith(suffix) or (by_content and len(magic) >= 3):
            return kind
    return None


def open_binary(path: str | os.PathLike) -> IO[bytes]:
    """Open ``path`` for binary reading, decompressing when its name ends in ``.gz``.

    Check the path with :func:`check_regular_file` first. Errors raised while
    reading the returned file should go through :func:`read_error`. A file
    compressed otherwise (bzip2, xz, zstd, zip, ...) is refused in one line
    (:func:`check_compression`).
    """
    check_compression(path)
    try:
        # GzipFile reads bytes as IO[bytes] does; typeshed types it as a BufferedIOBase only
        return gzip.open(path, "rb") if is_gzip_name(path) else open(path, "rb")  # type: ignore[return-value]
    except OSError as exc:
        raise read_error(path, exc) from None


def read_error(path: str | os.PathLike, exc: BaseException) -> DataFormatError:
    """A one-line :class:`~isoeat.DataFormatError` for what reading ``path`` raised.

    Examples
    --------
    >>> print(read_error("v.txt.gz", gzip.BadGzipFile("Not a gzipped file (b'he')")))
    v.txt.gz: not a gzip file despite its .gz name (it starts with bytes b'he')
    >>> print(read_error("v.bin.gz", EOFError("Compressed file ended before the end-of-stream marker was reached")))
    v.bin.gz: the gzip stream is truncated (it ends before its end-of-stream marker); download it again
    """
    if isinstance(exc, gzip.BadGzipFile):
        start = str(exc).partition("(")[2].rstrip(")")
        hint = f" (it starts with bytes {start})" if start else ""
        return DataFormatError(f"{path}: not a gzip file despite its .gz name{hint}")
    if isinstance(exc, EOFError):
        return DataFormatError(
            f"{path}: the gzip stream is truncated (it ends before its end-of-stream marker); download it again"
        )
    if isinstance(exc, zlib.error):
        return DataFormatError(f"{path}: the gzip stream is corrupt ({exc})")
    if isinstance(exc, OSError):
        return DataFormatError(f"{path}: cannot read ({exc.strerror or exc})")
    return DataFormatError(f"{path}: cannot read ({type(exc).__name__}: {exc})")


def strip_bom(text: str) -> str:
    """``text`` without a leading byte-order mark.

    >>> strip_bom("\\ufeffhe")
    'he'
    """
    return text[1:] if text.startswith(BOM) else text


def nfc(word: str) -> str:
    """``word`` in Unicode normal form C (a fast no-op when it already is).

    >>> nfc("cafe\\u0301") == "caf\\u00e9"
    True
    """
    return word if unicodedata.is_normalized("NFC", word) else unicodedata.normalize("NFC", word)


def iter_lines(path: str | os.PathLike, *, what: str = "file",
               max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for each line of a UTF-8 (optionally gzipped) file.

    Parameters
    ----------
    path : path
        A regular file (checked with :func:`check_regular_file` before opening).
    what : str
        What the file should be, for messages.
    max_line_bytes : int
        Longest line accepted, in bytes without its line ending (default 1 MiB).

    Yields
    ------
    (int, str)
        1-based line number and the line without ``\\n``/``\\r\\n``; a UTF-8
        byte-order mark at the start of line 1 is removed. Blank lines are
        yielded too (as ``""``), so that numbers stay those of the file.

    Raises
    ------
    IsoeatFileNotFoundError
        Not a regular file.
    DataFormatError
        ``PATH:N: not valid UTF-8 ...``, ``PATH:N: line longer than 1 MiB ...``
        or a reading error (:func:`read_error`).
    """
    check_regular_file(path, what=what)
    limit = int(max_line_bytes)
    fh = open_binary(path)
    try:
        with fh:
            lineno = 0
            while True:
                raw = fh.readline(limit + 2)
                if not raw:
                    return
                lineno += 1
                yield lineno, _decode_line(path, lineno, raw, limit)
    except (OSError, EOFError, zlib.error) as exc:
        raise read_error(path, exc) from None


def _decode_line(path: str | os.PathLike, lineno: int, raw: bytes, limit: int) -> str:
    raw = raw.rstrip(b"\n").rstrip(b"\r")
    if lineno == 1 and raw.startswith(_BOM_BYTES):
        raw = raw[len(_BOM_BYTES):]
    if len(raw) > limit:
        raise DataFormatError(f"{path}:{lineno}: line longer than {_size(limit)} (not a text file of this kind?)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(
            f"{path}:{lineno}: not valid UTF-8 (byte {exc.start + 1} of the line: {exc.reason})"
        ) from None


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n % (1 << 20) == 0 else f"{n:,} bytes"

