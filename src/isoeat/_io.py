"""Atomic file writes: a result file is either the old one or the new one, never half."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

__all__ = ["atomic_write", "atomic_write_text", "atomic_write_bytes", "check_inside"]


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file next to ``path``; on success fsync and rename over it.

    On any exception the temporary file is removed and ``path`` is untouched;
    an :class:`OSError` that names no file (``ENOSPC`` during a write) or the
    temporary file (a rename over a folder) is raised again naming ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp creates 0600; results are ordinary files
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding, newline=None if "b" in mode else "") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename in (None, tmp) and exc.errno is not None:
            # a full disk during write/fsync names no file, a failed rename names the temporary one (the
            # destination is a folder, say): name the file being written
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | Path, text: str) -> None:
    with atomic_write(path, "w") as fh:
        fh.write(text)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_write(path, "wb") as fh:
        fh.write(data)


def atomic_write_with(path: str | Path, writer: Callable[[IO], None], binary: bool = True) -> None:
    """Call ``writer(fh)`` on a temporary file and rename it over ``path``."""
    with atomic_write(path, "wb" if binary else "w") as fh:
        writer(fh)


def check_inside(root: Path, path: Path) -> Path:
    """``path`` if it resolves inside ``root``; a symlink leading out of the folder is refused.

    Raises
    ------
    UnsafePathError
        Naming the path and where it leads.
    """
    from ._errors import UnsafePathError

    target = path.resolve()
    base = root.resolve()
    if target != base and base not in target.parents:
        raise UnsafePathError(f"{path}: leads out of the run folder (to {target}); isoeat reads only files inside "
                              f"{root}: remove the link")
    return path
