"""An exclusive lock on an output folder (``DIR/.isoeat.lock``), held by the operating system.

The lock is an OS lock (``fcntl.flock``, ``msvcrt.locking`` on Windows) on the
open file ``DIR/.isoeat.lock``: the kernel releases it when its holder exits,
however it exits (SIGKILL, power loss of the process, disk full), so there is
no stale lock to guess about and no race between two processes taking one
over. The file's content (PID, host, start time) only serves the message a
second run prints. A lock file naming another host is never taken over
automatically (network file systems do not always carry OS locks between hosts).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._errors import ConfigError, ExperimentLockedError, ExperimentMismatchError, IsoeatWarning
from .manifest import now_iso

__all__ = ["DirLock", "LOCK_NAME", "claimed_folder", "IDENTITY_NAME"]

LOCK_NAME = ".isoeat.lock"


def _try_lock(fd: int) -> bool:
    """Take the OS lock on ``fd`` without waiting; False when another process holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]  # Windows only
            return True
        except OSError:
            return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except (BlockingIOError, PermissionError):
        return False


def _read_info(path: Path) -> dict:
    try:
        info = json.loads(path.read_text("utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


class DirLock:
    """The exclusive lock of an output folder (a context manager).

    A second run on a locked folder is refused with
    :class:`~isoeat.ExperimentLockedError` naming the holder. A lock file left
    by a process that is gone (the OS lock is free) is taken over with an
    :class:`~isoeat.IsoeatWarning`; one naming another host is refused.
    """

    def __init__(self, out_dir: str | Path, run_id: str = "") -> None:
        self.path = Path(out_dir) / LOCK_NAME
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.held = False
        self._fd: int | None = None

    def _payload(self) -> bytes:
        return json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": now_iso(),
                           "run_id": self.run_id}).encode()

    def _refuse(self, info: dict) -> ExperimentLockedError:
        pid, host = info.get("pid"), info.get("host")
        who = f"pid {pid} on {host}" if pid is not None else "another isoeat process"
        return ExperimentLockedError(
            f"{self.path.parent}: another isoeat run ({who}, since {info.get('started', '?')}) is using this folder; "
            f"wait for it to finish, or remove {self.path} if that run is gone"
        )

    def acquire(self) -> DirLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(20):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            if not _try_lock(fd):
                os.close(fd)
                raise self._refuse(_read_info(self.path))
            try:  # the file may have been unlinked by its releasing holder meanwhile: lock the one on disk
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            info = _read_info(self.path)
            if info and info.get("host") not in (None, socket.gethostname()):
                os.close(fd)
                raise self._refuse(info)
            if info.get("pid") is not None:
                warnings.warn(
                    f"{self.path}: taking over a stale lock (pid {info.get('pid')} on {info.get('host')} is no longer "
                    f"running; started {info.get('started', '?')})", IsoeatWarning, stacklevel=2,
                )
            try:
                os.ftruncate(fd, 0)
                os.write(fd, self._payload())
                os.fsync(fd)
            except OSError:  # disk full: the OS lock holds all the same; the message just names no PID
                pass
            self._fd, self.held = fd, True
            return self
        raise ExperimentLockedError(f"{self.path}: could not acquire the lock (another run keeps taking it)")

    def release(self) -> None:
        if not self.held or self._fd is None:
            return
        try:  # unlink while still holding the lock; a waiter that opened the old file re-checks the inode
            if os.fstat(self._fd).st_ino == os.stat(self.path).st_ino:
                os.unlink(self.path)
        except OSError:
            pass
        finally:
            os.close(self._fd)  # closing releases the OS lock
            self._fd, self.held = None, False

    def __enter__(self) -> DirLock:
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()


#: The identity file of an output folder written by a command other than ``isoeat run``.
IDENTITY_NAME = ".isoeat-output.json"


@contextlib.contextmanager
def claimed_folder(out: str | Path, kind: str, *, force: bool = False) -> Iterator[Path]:
    """Create or reuse ``out`` for a command's output, holding its lock; refuse a folder isoeat did not write.

    The folder gets an identity file (``.isoeat-output.json``, naming the
    command that writes it). A folder that holds other files and no identity,
    or the identity of another command, is refused unless ``force`` (then the
    command writes beside those files, replacing only those of its own names).

    Raises
    ------
    ConfigError
        ``out`` exists and is not a folder.
    ExperimentMismatchError
        The folder holds files isoeat did not write, or another command's output.
    ExperimentLockedError
        Another isoeat process is writing it.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: exists and is not a folder")
    with DirLock(out):
        ident = _read_info(out / IDENTITY_NAME) if (out / IDENTITY_NAME).exists() else None
        others = sorted(p.name for p in out.iterdir() if p.name not in (LOCK_NAME, IDENTITY_NAME))
        if not force:
            if ident is None and others:
                shown = ", ".join(others[:5]) + (" ..." if len(others) > 5 else "")
                raise ExperimentMismatchError(
                    f"{out}: holds files isoeat did not write ({shown}); use a new or empty folder, or --force to "
                    f"write beside them")
            if ident is not None and ident.get("kind") != kind:
                raise ExperimentMismatchError(
                    f"{out}: holds the output of 'isoeat {ident.get('kind')}', not of 'isoeat {kind}'; use another "
                    "folder, or --force")
        from .._io import atomic_write_text
        from .._version import __version__

        atomic_write_text(out / IDENTITY_NAME, json.dumps({"format": "isoeat-output", "kind": kind,
                                                          "written": now_iso(), "isoeat_version": __version__}) + "\n")
        yield out
