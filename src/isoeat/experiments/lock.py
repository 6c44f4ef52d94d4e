"""An exclusive, OS-checked lock on an output folder (``DIR/.isoeat.lock``)."""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
import warnings
from pathlib import Path
from typing import Any

from .._errors import ExperimentLockedError, IsoeatWarning
from .manifest import now_iso

__all__ = ["DirLock", "LOCK_NAME"]

LOCK_NAME = ".isoeat.lock"


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    try:  # a zombie (killed, not yet reaped) holds nothing
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
        if state in (b"Z", b"X"):
            return False
    except (OSError, IndexError):
        pass
    return True


def _proc_start(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


class DirLock:
    """An exclusive lock on an output folder: ``DIR/.isoeat.lock`` created with ``O_EXCL``.

    The file holds the PID, host name, process start tick and start time. A
    second run on the same folder is refused (:class:`ExperimentLockedError`).
    A stale lock — its PID dead (or reused by another process) on this same
    host — is taken over with an :class:`~isoeat.IsoeatWarning`. A lock from
    another host is never taken over automatically (remove the file by hand
    when that run is gone).
    """

    def __init__(self, out_dir: str | Path, run_id: str = "") -> None:
        self.path = Path(out_dir) / LOCK_NAME
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.held = False

    def _payload(self) -> bytes:
        return json.dumps({
            "pid": os.getpid(), "host": socket.gethostname(), "pid_start": _proc_start(os.getpid()),
            "started": now_iso(), "run_id": self.run_id,
        }).encode()

    def _create(self) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        try:
            os.write(fd, self._payload())
            os.fsync(fd)
        finally:
            os.close(fd)
        return True

    def acquire(self) -> "DirLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(3):
            if self._create():
                self.held = True
                return self
            try:
                info = json.loads(self.path.read_text("utf-8") or "{}")
            except FileNotFoundError:
                continue  # released meanwhile: try again
            except (OSError, ValueError):
                info = {}
            host, pid = info.get("host"), info.get("pid")
            same_host = host == socket.gethostname()
            stale = False
            if same_host and isinstance(pid, int):
                stale = not _pid_alive(pid)
                if not stale and info.get("pid_start") and _proc_start(pid) not in (None, info.get("pid_start")):
                    stale = True  # the PID was reused by another process
            elif not info:
                # unreadable lock file: stale only if old (a writer may be between create and write)
                try:
                    stale = time.time() - self.path.stat().st_mtime > 10
                except FileNotFoundError:
                    continue
            if not stale:
                since = info.get("started", "?")
                who = f"pid {pid} on {host}" if info else "an unknown process"
                raise ExperimentLockedError(
                    f"{self.path.parent}: another isoeat run ({who}, since {since}) is using this folder; "
                    f"wait for it to finish, or remove {self.path} if that run is gone"
                )
            warnings.warn(
                f"{self.path}: taking over a stale lock (pid {pid} on {host} is no longer running; "
                f"started {info.get('started', '?')})", IsoeatWarning, stacklevel=2,
            )
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
        raise ExperimentLockedError(f"{self.path}: could not acquire the lock (another run keeps taking it)")

    def release(self) -> None:
        if not self.held:
            return
        try:
            info = json.loads(self.path.read_text("utf-8"))
            if info.get("pid") == os.getpid() and info.get("run_id") == self.run_id:
                os.unlink(self.path)
        except (OSError, ValueError):
            pass
        self.held = False

    def __enter__(self) -> "DirLock":
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()
