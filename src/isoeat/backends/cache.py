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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import warnings
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .._errors import ConfigError, IsoeatWarning
from .._io import atomic_write_text, atomic_write_with
from .._validate import check_bool

__all__ = ["EmbeddingCache", "FingerprintCache", "file_stamp", "cache_key", "default_cache_dir",
           "cache_enabled_by_default", "CACHE_FORMAT"]

#: Bumped whenever the meaning of a cached array changes (invalidates old entries).
CACHE_FORMAT = 1


def default_cache_dir() -> Path:
    """``$ISOEAT_CACHE_DIR`` if set, else ``~/.cache/isoeat``."""
    env = os.environ.get("ISOEAT_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "isoeat"


def cache_enabled_by_default() -> bool:
    """False when ``$ISOEAT_NO_CACHE`` is set to a true value (1, true, yes, on)."""
    return os.environ.get("ISOEAT_NO_CACHE", "").strip().lower() not in {"1", "true", "yes", "on"}


def _canonical(parts: Mapping[str, Any]) -> str:
    try:
        return json.dumps(dict(parts), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
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
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self.corrupt = 0

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
            with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as npz:
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
        payload: dict[str, np.ndarray] = {}
        for k, v in arrays.items():
            a = np.asarray(v)
            if a.dtype == object:
                raise ConfigError(f"cache entry {k!r}: object arrays are not stored (no pickles)")
            payload[k] = a
        payload["__key__"] = np.array(record)
        try:
            atomic_write_with(path, lambda fh: np.savez(fh, **payload))
        except OSError as exc:
            warnings.warn(f"cannot write the embedding cache at {path} ({exc}); continuing without it",
                          IsoeatWarning, stacklevel=2)
            return None
        self.writes += 1
        return path

    def clear(self, kind: str | None = None) -> int:
        """Delete entries (of one ``kind``, or all); returns how many files were removed."""
        base = self.root / "embeddings"
        if kind is not None:
            base = base / kind
        n = 0
        if base.is_dir():
            for p in base.rglob("*.npz"):
                with contextlib.suppress(OSError):
                    p.unlink()
                    n += 1
        return n

    def stats(self) -> dict[str, Any]:
        return {"root": str(self.root), "enabled": self.enabled, "hits": self.hits, "misses": self.misses,
                "writes": self.writes, "corrupt": self.corrupt}


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
    def key(stamps: list[Mapping[str, Any]], parts: Mapping[str, Any]) -> str:
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

    def get(self, stamps: list[Mapping[str, Any]], parts: Mapping[str, Any]) -> str | None:
        """The fingerprint stored for these file stamps and parts, or ``None``."""
        if not self.enabled or not stamps:
            return None
        return self._entries().get(self.key(stamps, parts))

    def put(self, stamps: list[Mapping[str, Any]], parts: Mapping[str, Any], fingerprint: str) -> bool:
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
