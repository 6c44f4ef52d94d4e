"""On-disk cache of computed embeddings (contextual word vectors, sentence vectors).

Every entry is keyed by *everything that determines its vectors*: a dict of
key parts (model fingerprint, layer, pooling, unit, corpus fingerprint, seed,
contexts per word, the word or a hash of the sentences, format version, ...).
The key is the SHA-256 of the canonical JSON of that dict (sorted keys, no
whitespace), so changing any part gives another file and a stale vector is
never served.

Files are ``.npz`` archives written atomically (temporary file in the same
folder, fsync, rename) and read with ``allow_pickle=False``; each holds its key
parts as JSON next to the arrays and is checked against them on reading. A
file that cannot be read or does not match its key (truncated, corrupt, edited)
is reported with an :class:`~isoeat.IsoeatWarning`, removed, and the vectors
are recomputed: a bad cache never stops a run.

Location: ``cache_dir`` argument, else ``$ISOEAT_CACHE_DIR``, else
``~/.cache/isoeat``. ``$ISOEAT_NO_CACHE=1`` (or ``use_cache=False``,
``--no-cache``) turns the cache off.

Size cap: ``$ISOEAT_CACHE_MAX`` (``2G``, ``500M``, ``2GiB``, bytes; K/M/G are
powers of 1000, KiB/MiB/GiB of 1024). A write that takes the cache over the
cap evicts the least recently used entries down to 90% of it. "Used" is the
file's modification time, set when the entry is written and touched on every
read (``os.utime``: atomic, no shared index that two processes could corrupt);
an entry removed by another process is a plain miss. Only files named as
entries (``embeddings/<kind>/<xx>/<64 hex digits>.npz``, regular files, no
links followed) are ever counted or deleted (:func:`cache_entries`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._env import env_bytes, env_flag, env_text
from .._errors import ConfigError, IsoeatWarning
from .._io import atomic_write_text, atomic_write_with
from .._validate import check_bool

__all__ = ["EmbeddingCache", "FingerprintCache", "WordListCache", "quiet_get", "quiet_put", "code_digest",
           "file_stamp", "cache_key", "default_cache_dir",
           "cache_enabled_by_default", "CACHE_FORMAT", "cache_max_bytes", "cache_entries", "evict",
           "cache_growth", "reset_cache_growth", "clear_cache", "format_bytes", "BracketStore"]

#: Bumped whenever the meaning of a cached array changes (invalidates old entries).
CACHE_FORMAT = 1


def default_cache_dir() -> Path:
    """``$ISOEAT_CACHE_DIR`` if set, else ``~/.cache/isoeat``."""
    env = env_text("ISOEAT_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "isoeat"


def cache_enabled_by_default() -> bool:
    """False when ``$ISOEAT_NO_CACHE`` is set to a true value (1, true, yes, on)."""
    return not env_flag("ISOEAT_NO_CACHE")


def cache_max_bytes() -> int | None:
    """``$ISOEAT_CACHE_MAX`` in bytes (``2G``, ``500M``, ``2GiB``, ``1000000``), or ``None`` (unset or empty: no cap).

    A value that is not a size raises :class:`~isoeat.ConfigError` naming the variable.
    """
    return env_bytes("ISOEAT_CACHE_MAX")


def format_bytes(n: float) -> str:
    """Bytes in decimal units, as a person reads them.

    Examples
    --------
    >>> format_bytes(999), format_bytes(579_200_000), format_bytes(1.1e9)
    ('999 B', '579.2 MB', '1.1 GB')
    """
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


#: An entry's file name: the key (64 hex digits) and ``.npz``, in ``embeddings/<kind>/<key[:2]>/``.
_ENTRY = re.compile(r"[0-9a-f]{64}\.npz")
_SHARD = re.compile(r"[0-9a-f]{2}")
_KIND = re.compile(r"[A-Za-z0-9_-]+")

#: Cache folders this process could not write to (a file, read-only, full): warned once, not written again.
_UNWRITABLE: set[str] = set()

#: Bytes written to the cache by this process, by cache folder (what the CLI reports at the end).
_GROWTH: dict[str, int] = {}


def cache_growth() -> dict[str, int]:
    """Bytes this process wrote into each cache folder since :func:`reset_cache_growth`."""
    return dict(_GROWTH)


def reset_cache_growth() -> None:
    """Start a command's accounting: no bytes written yet, every folder tried again."""
    _GROWTH.clear()
    _UNWRITABLE.clear()


def _real_dirs(folder: Path, pattern: re.Pattern) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return sorted(Path(e.path) for e in it if pattern.fullmatch(e.name) and e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def cache_entries(root: str | os.PathLike) -> list[tuple[Path, int, int]]:
    """Every embedding entry under ``root``: ``(path, size in bytes, mtime_ns)``, least recently used first.

    Only regular files named as entries, in folders named as isoeat names them,
    are listed; links are not followed, anything else is ignored (and so never
    deleted by :func:`evict` or :func:`clear_cache`). Ties in time go by path.
    """
    found = []
    for kind in _real_dirs(Path(root) / "embeddings", _KIND):
        for shard in _real_dirs(kind, _SHARD):
            try:
                with os.scandir(shard) as it:
                    for e in it:
                        if not (_ENTRY.fullmatch(e.name) and e.name[:2] == shard.name):
                            continue
                        with contextlib.suppress(OSError):  # removed meanwhile by another process
                            if e.is_file(follow_symlinks=False):
                                st = e.stat(follow_symlinks=False)
                                found.append((Path(e.path), st.st_size, st.st_mtime_ns))
            except OSError:
                continue
    found.sort(key=lambda t: (t[2], str(t[0])))
    return found


def evict(root: str | os.PathLike, cap: int, *, target: float = 0.9) -> tuple[int, int, int]:
    """Delete the least recently used entries while the cache holds more than ``cap`` bytes.

    Once over ``cap``, entries go, oldest first, until at most ``target * cap``
    bytes remain (room for the next writes without a scan each). Returns
    ``(entries removed, bytes freed, bytes left)``.
    """
    entries = cache_entries(root)
    total = sum(size for _, size, _ in entries)
    removed = freed = 0
    if total <= cap:
        return 0, 0, total
    goal = int(cap * target)
    for path, size, _ in entries:
        if total <= goal:
            break
        try:
            path.unlink()
        except FileNotFoundError:  # another process evicted it first
            pass
        except OSError:
            continue
        else:
            removed += 1
            freed += size
        total -= size
    return removed, freed, total


def clear_cache(root: str | os.PathLike, kind: str | None = None, *, fingerprints: bool = False) -> tuple[int, int]:
    """Delete every embedding entry (of one ``kind``, or all) and, with ``fingerprints``, ``fingerprints.json``.

    Returns ``(files removed, bytes freed)``. Nothing but cache entries is
    touched; emptied entry folders are removed.
    """
    root = Path(root)
    removed = freed = 0
    for path, size, _ in cache_entries(root):
        if kind is not None and path.parent.parent.name != kind:
            continue
        with contextlib.suppress(OSError):
            path.unlink()
            removed += 1
            freed += size
    for k in _real_dirs(root / "embeddings", _KIND):
        for shard in _real_dirs(k, _SHARD):
            with contextlib.suppress(OSError):
                shard.rmdir()  # only when empty
    fp = root / FingerprintCache.FILE
    if fingerprints and fp.is_file() and not fp.is_symlink():
        with contextlib.suppress(OSError):
            size = fp.stat().st_size
            fp.unlink()
            removed += 1
            freed += size
    return removed, freed


def _canonical(parts: Mapping[str, Any]) -> str:
    from .._records import canonical_json

    try:
        return canonical_json(dict(parts))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"cache key parts must be plain JSON values: {exc}") from None


def cache_key(parts: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``parts``.

    Examples
    --------
    >>> cache_key({"b": 1, "a": "x"}) == cache_key({"a": "x", "b": 1})
    True
    >>> cache_key({"a": 1}) == cache_key({"a": 2})
    False
    """
    return hashlib.sha256(_canonical(parts).encode("utf-8")).hexdigest()


class EmbeddingCache:
    """A folder of ``.npz`` entries addressed by :func:`cache_key`.

    Parameters
    ----------
    root : path, optional
        Cache folder (default :func:`default_cache_dir`). Entries live under
        ``root/embeddings/<kind>/<key[:2]>/<key>.npz``.
    enabled : bool, optional
        ``False`` makes :meth:`get` always miss and :meth:`put` do nothing.
        Default: on unless ``$ISOEAT_NO_CACHE`` is set.

    Attributes
    ----------
    hits, misses, writes, corrupt : int
        Counters since creation (for reports and tests).

    Examples
    --------
    >>> import tempfile
    >>> c = EmbeddingCache(tempfile.mkdtemp())
    >>> c.get("demo", {"word": "x"}) is None
    True
    >>> _ = c.put("demo", {"word": "x"}, {"vectors": np.ones((1, 3))})
    >>> c.get("demo", {"word": "x"})["vectors"].shape
    (1, 3)
    """

    def __init__(self, root: str | os.PathLike | None = None, *, enabled: bool | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()
        self.enabled = cache_enabled_by_default() if enabled is None else check_bool("enabled", enabled)
        self.max_bytes = cache_max_bytes() if self.enabled else None
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self.corrupt = 0
        self.evicted = 0
        self._size: int | None = None  # bytes in the cache as of the last scan plus this object's writes

    def __repr__(self) -> str:
        return f"EmbeddingCache(root={str(self.root)!r}, enabled={self.enabled})"

    def path(self, kind: str, parts: Mapping[str, Any]) -> Path:
        """Where the entry for ``parts`` lives (whether or not it exists)."""
        if not kind.replace("-", "").replace("_", "").isalnum():
            raise ConfigError(f"cache kind must be alphanumeric (with - or _), got {kind!r}")
        key = cache_key({"cache_format": CACHE_FORMAT, **parts})
        return self.root / "embeddings" / kind / key[:2] / f"{key}.npz"

    def get(self, kind: str, parts: Mapping[str, Any]) -> dict[str, np.ndarray] | None:
        """The arrays stored for ``parts``, or ``None`` (miss, disabled, or a bad file).

        A file that cannot be read, holds a pickle, lacks its key record or
        whose key record differs from ``parts`` is reported with an
        ``IsoeatWarning`` and deleted; the caller recomputes.
        """
        if not self.enabled:
            return None
        path = self.path(kind, parts)
        if not path.exists():
            self.misses += 1
            return None
        expected = _canonical({"cache_format": CACHE_FORMAT, **parts})
        try:
            fh = open(path, "rb")
        except FileNotFoundError:  # evicted by another process in between: a plain miss
            self.misses += 1
            return None
        try:
            with fh, np.load(fh, allow_pickle=False) as npz:
                if "__key__" not in npz.files:
                    raise ValueError("no key record")
                stored = str(npz["__key__"])
                if stored != expected:
                    raise ValueError("key record does not match the file name (edited or colliding file)")
                arrays = {k: np.array(npz[k]) for k in npz.files if k != "__key__"}
            for k, a in arrays.items():
                if a.dtype.kind == "f" and not np.isfinite(a).all():
                    raise ValueError(f"array {k!r} contains NaN or inf")
        except Exception as exc:  # zip errors, truncated files, pickles refused, bad records
            self.corrupt += 1
            self.misses += 1
            warnings.warn(
                f"embedding cache file {path} is unreadable or corrupt ({type(exc).__name__}: {exc}); "
                "recomputing it",
                IsoeatWarning,
                stacklevel=2,
            )
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        self.hits += 1
        with contextlib.suppress(OSError):  # recently used: evicted last
            os.utime(path)
        return arrays

    def put(self, kind: str, parts: Mapping[str, Any], arrays: Mapping[str, Any]) -> Path | None:
        """Store ``arrays`` (numeric or string arrays, never objects) atomically under ``parts``.

        Failing to write (read-only folder, full disk) warns and returns
        ``None``: the cache is an optimisation, never a reason to stop.
        """
        if not self.enabled:
            return None
        path = self.path(kind, parts)
        record = _canonical({"cache_format": CACHE_FORMAT, **parts})
        payload: dict[str, Any] = {}  # Any: mypy would match np.savez's **kwds against its allow_pickle (a bool)
        for k, v in arrays.items():
            a = np.asarray(v)
            if a.dtype == object:
                raise ConfigError(f"cache entry {k!r}: object arrays are not stored (no pickles)")
            payload[k] = a
        payload["__key__"] = np.array(record)
        if str(self.root) in _UNWRITABLE:  # said once: the folder is not written again by this process
            return None
        try:
            atomic_write_with(path, lambda fh: np.savez(fh, **payload))
        except OSError as exc:
            _UNWRITABLE.add(str(self.root))
            from_env = " ($ISOEAT_CACHE_DIR)" if env_text("ISOEAT_CACHE_DIR") and Path(
                env_text("ISOEAT_CACHE_DIR") or "").expanduser() == self.root else ""
            warnings.warn(f"cannot write the embedding cache in {self.root}{from_env} ({exc.strerror or exc}: "
                          f"{exc.filename or path}); continuing without writing to it (said once)",
                          IsoeatWarning, stacklevel=2)
            return None
        self.writes += 1
        with contextlib.suppress(OSError):
            size = path.stat().st_size
            _GROWTH[str(self.root)] = _GROWTH.get(str(self.root), 0) + size
            self._keep_under_cap(size)
        return path

    def _keep_under_cap(self, written: int) -> None:
        """After a write: evict least recently used entries once the cache is over ``max_bytes``."""
        if self.max_bytes is None:
            return
        if self._size is None:
            self._size = sum(size for _, size, _ in cache_entries(self.root))
        else:
            self._size += written
        if self._size > self.max_bytes:  # scan again: other processes may have written or evicted
            removed, _, self._size = evict(self.root, self.max_bytes)
            self.evicted += removed

    def clear(self, kind: str | None = None) -> int:
        """Delete entries (of one ``kind``, or all; see :func:`clear_cache`); returns how many files were removed."""
        self._size = None
        return clear_cache(self.root, kind)[0]

    def stats(self) -> dict[str, Any]:
        return {"root": str(self.root), "enabled": self.enabled, "hits": self.hits, "misses": self.misses,
                "writes": self.writes, "corrupt": self.corrupt, "evicted": self.evicted}


# ----------------------------------------------------------------------------
# content fingerprints of model files
# ----------------------------------------------------------------------------

#: A file modified less than this many seconds before it was stamped may change again within the
#: same timestamp tick ("racy" in git's words): its fingerprint is computed but never cached.
RACY_SECONDS = 2.0


def file_stamp(path: str | os.PathLike) -> dict[str, Any]:
    """What identifies one version of a file without reading it.

    ``{"path": resolved path, "size", "mtime_ns", "ctime_ns", "inode", "racy"}``;
    ``racy`` is true when the file was modified less than :data:`RACY_SECONDS`
    ago (a later write within the same clock tick could keep every other field).
    """
    st = os.stat(path)
    return {"path": str(Path(path).resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "ctime_ns": st.st_ctime_ns, "inode": st.st_ino,
            "racy": st.st_mtime_ns >= time.time_ns() - int(RACY_SECONDS * 1e9)}


class FingerprintCache:
    """A small JSON file mapping model files (by :func:`file_stamp`) to their content fingerprint.

    Hashing every byte of a large model takes a noticeable time; this cache
    lets a run skip it when the files are exactly those seen before. An entry
    is keyed by the stamps of every file the model was read from (resolved
    path, size, mtime_ns, ctime_ns, inode) and the options that shape the
    vectors (``parts``), so touching, replacing or editing a file recomputes.

    The file is ``<cache dir>/fingerprints.json`` (see :func:`default_cache_dir`),
    written atomically and holding at most :attr:`MAX_ENTRIES` entries (oldest
    dropped first). The cache never stops a run: an unreadable or corrupt file
    is ignored, a read-only or missing folder only means nothing is cached,
    and ``$ISOEAT_NO_CACHE`` turns it off.

    Examples
    --------
    >>> import tempfile
    >>> c = FingerprintCache(tempfile.mkdtemp())
    >>> stamps = [{"path": "/m.npy", "size": 1, "mtime_ns": 0, "ctime_ns": 0, "inode": 1, "racy": False}]
    >>> c.get(stamps, {"reader": "npy"}) is None
    True
    >>> c.put(stamps, {"reader": "npy"}, "0123abcd")
    True
    >>> c.get(stamps, {"reader": "npy"})
    '0123abcd'
    """

    FILE = "fingerprints.json"
    MAX_ENTRIES = 512
    FORMAT = 1

    def __init__(self, root: str | os.PathLike | None = None, *, enabled: bool | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()
        self.enabled = cache_enabled_by_default() if enabled is None else check_bool("enabled", enabled)

    @property
    def path(self) -> Path:
        return self.root / self.FILE

    @staticmethod
    def key(stamps: Sequence[Mapping[str, Any]], parts: Mapping[str, Any]) -> str:
        files = [{k: v for k, v in s.items() if k != "racy"} for s in stamps]
        return cache_key({"fingerprint_cache": FingerprintCache.FORMAT, "files": files, **parts})

    def _entries(self) -> dict[str, Any]:
        try:
            with open(self.path, "rb") as fh:
                data = json.loads(fh.read(1 << 22).decode("utf-8"))
            entries = data["entries"] if data.get("format") == self.FORMAT else {}
            return {k: v for k, v in entries.items() if isinstance(v, str)} if isinstance(entries, dict) else {}
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return {}

    def get(self, stamps: Sequence[Mapping[str, Any]], parts: Mapping[str, Any]) -> str | None:
        """The fingerprint stored for these file stamps and parts, or ``None``."""
        if not self.enabled or not stamps:
            return None
        return self._entries().get(self.key(stamps, parts))

    def put(self, stamps: Sequence[Mapping[str, Any]], parts: Mapping[str, Any], fingerprint: str) -> bool:
        """Store ``fingerprint``; returns whether it was stored (never raises for I/O)."""
        if not self.enabled or not stamps or any(s.get("racy") for s in stamps):
            return False
        entries = self._entries()
        key = self.key(stamps, parts)
        entries.pop(key, None)
        entries[key] = fingerprint
        while len(entries) > self.MAX_ENTRIES:
            entries.pop(next(iter(entries)))
        text = json.dumps({"format": self.FORMAT, "entries": entries}, indent=0)
        try:
            atomic_write_text(self.path, text)
        except OSError:
            return False
        return True


_CODE: list[str] = []  # code_digest(), computed once per process


def code_digest() -> str:
    """SHA-256 of every source file of the isoeat package (~8 ms, once per process): part of the key of every
    value kept by content, so any change to the code that computes a value computes it again."""
    if not _CODE:
        root = Path(__file__).resolve().parent.parent
        h = hashlib.sha256()
        for p in sorted(root.rglob("*.py")):
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
        _CODE.append(h.hexdigest())
    return _CODE[0]


def quiet_get(cache: EmbeddingCache, kind: str, parts: Mapping[str, Any]) -> dict[str, np.ndarray] | None:
    """:meth:`EmbeddingCache.get` for a value that is cheap to recompute: a bad entry is removed and recomputed
    without a warning (a speed-up, not something the user asked to keep)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IsoeatWarning)
        return cache.get(kind, parts)


def quiet_put(cache: EmbeddingCache, kind: str, parts: Mapping[str, Any], arrays: Mapping[str, Any]) -> bool:
    """:meth:`EmbeddingCache.put` without its warning; an unwritable folder is left for the embedding cache's
    own once-said warning (the next run recomputes), and the bytes are not counted in :func:`cache_growth`
    (a command's output stays the same whether or not this speed-up was stored; ``isoeat cache info`` counts
    them). Returns whether the entry was stored."""
    root = str(cache.root)
    said, grown = root in _UNWRITABLE, _GROWTH.get(root)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IsoeatWarning)
        done = cache.put(kind, parts, arrays) is not None
    if not said:
        _UNWRITABLE.discard(root)
    if grown is None:  # not in the command's "cache grew by" line: the user asked for no embedding
        _GROWTH.pop(root, None)
    else:
        _GROWTH[root] = grown
    return done


class WordListCache:
    """A model file's vocabulary as read and checked once, keyed by the files' stamps (:func:`file_stamp`).

    Reading a vocabulary of 400,000 words (parquet, NFC check, duplicate check) costs more than the rest of
    loading a memory-mapped model; a word list that was clean (already NFC, no duplicate) is stored as one
    array of UTF-8 bytes (the words joined by newlines) in an :class:`EmbeddingCache` entry of kind
    ``vocabulary``, keyed by the stamps of every file (resolved path, size, mtime_ns, ctime_ns, inode) and
    ``parts``: replacing, editing or touching a file reads it again. A racy stamp (a file modified within
    :data:`RACY_SECONDS`), a word holding a newline, or a disabled cache: nothing is stored.

    Examples
    --------
    >>> import tempfile
    >>> c = WordListCache(tempfile.mkdtemp())
    >>> stamps = [{"path": "/v.parquet", "size": 1, "mtime_ns": 0, "ctime_ns": 0, "inode": 1, "racy": False}]
    >>> c.get(stamps, {"model": "toy"}, 2) is None
    True
    >>> c.put(stamps, {"model": "toy"}, ("a", "b"))
    True
    >>> c.get(stamps, {"model": "toy"}, 2)
    ('a', 'b')
    """

    KIND = "vocabulary"
    FORMAT = 1

    def __init__(self, root: str | os.PathLike | None = None, *, enabled: bool | None = None) -> None:
        self.cache = EmbeddingCache(root, enabled=enabled)

    def _parts(self, stamps: Sequence[Mapping[str, Any]], parts: Mapping[str, Any]) -> dict[str, Any]:
        files = [{k: v for k, v in s.items() if k != "racy"} for s in stamps]
        return {"word_list_cache": self.FORMAT, "files": files, **parts}

    def get(self, stamps: Sequence[Mapping[str, Any]], parts: Mapping[str, Any], count: int) -> tuple[str, ...] | None:
        """The words stored for these stamps and parts when there are exactly ``count`` of them, else ``None``."""
        if not stamps or not self.cache.enabled:
            return None
        found = quiet_get(self.cache, self.KIND, self._parts(stamps, parts))
        if found is None or set(found) != {"words", "count"} or int(found["count"]) != count:
            return None
        try:
            words = tuple(found["words"].tobytes().decode("utf-8").split("\n")) if count else ()
        except UnicodeDecodeError:
            return None
        return words if len(words) == count else None

    def put(self, stamps: Sequence[Mapping[str, Any]], parts: Mapping[str, Any], words: Sequence[str]) -> bool:
        """Store ``words``; returns whether they were stored (never raises for I/O)."""
        if not stamps or not self.cache.enabled or any(s.get("racy") for s in stamps) or not words:
            return False
        if any("\n" in w for w in words):
            return False
        blob = np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8)
        return quiet_put(self.cache, self.KIND, self._parts(stamps, parts),
                         {"words": blob, "count": np.int64(len(words))})


class BracketStore:
    """The embedding cache as the certified brackets' store (:func:`isoeat.stats._certified.set_bracket_store`):
    kind ``certified``, the cache folder read at each call (``$ISOEAT_CACHE_DIR``, ``$ISOEAT_NO_CACHE``), quiet
    (:func:`quiet_get`, :func:`quiet_put`): a bad entry is computed again."""

    KIND = "certified"

    def code(self) -> str:
        return code_digest()

    def get(self, key: Mapping[str, Any]) -> str | None:
        cache = EmbeddingCache()
        found = quiet_get(cache, self.KIND, key) if cache.enabled else None
        return None if found is None or "record" not in found else str(found["record"])

    def put(self, key: Mapping[str, Any], record: str) -> None:
        cache = EmbeddingCache()
        if cache.enabled:
            quiet_put(cache, self.KIND, key, {"record": np.array(record)})
