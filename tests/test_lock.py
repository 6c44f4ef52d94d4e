"""The folder lock: an OS lock, refused while held, free when its holder dies, never held twice."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import isoeat
from isoeat.experiments.lock import LOCK_NAME, DirLock

HOLD = textwrap.dedent("""
    import sys, time
    from isoeat.experiments.lock import DirLock
    lock = DirLock(sys.argv[1]).acquire()
    print("held", flush=True)
    time.sleep(120)
""")


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_held_lock_is_refused_naming_the_holder_then_free_after_sigkill(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(isoeat.ExperimentLockedError, match=f"pid {holder.pid}"):
            DirLock(tmp_path).acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # the kernel released the OS lock; the file it left names a dead process: taken over with a warning
    with pytest.warns(isoeat.IsoeatWarning, match="stale lock"):
        with DirLock(tmp_path) as lock:
            assert lock.held
            info = json.loads((tmp_path / LOCK_NAME).read_text())
            assert info["pid"] == os.getpid()
    assert not (tmp_path / LOCK_NAME).exists()


def test_an_empty_lock_file_left_by_a_full_disk_does_not_block(tmp_path):
    (tmp_path / LOCK_NAME).write_text("")
    with DirLock(tmp_path) as lock:
        assert lock.held
    assert not (tmp_path / LOCK_NAME).exists()


def test_a_lock_file_from_another_host_is_not_taken_over(tmp_path):
    (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": 1, "host": socket.gethostname() + "-elsewhere",
                                                  "started": "2026-01-01T00:00:00Z"}))
    with pytest.raises(isoeat.ExperimentLockedError, match="elsewhere"):
        DirLock(tmp_path).acquire()


RACE = textwrap.dedent("""
    import os, sys, time, warnings
    from pathlib import Path
    from isoeat.experiments.lock import DirLock
    from isoeat import ExperimentLockedError
    warnings.simplefilter("ignore")
    start, dirs = float(sys.argv[1]), sys.argv[2:]
    for i, d in enumerate(dirs):
        time.sleep(max(0.0, start + 0.4 * i - time.time()))  # all processes try at the same instant
        try:
            lock = DirLock(d).acquire()
        except ExperimentLockedError:
            print("refused", flush=True)
            continue
        try:
            fd = os.open(os.path.join(d, "inside"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            print("VIOLATION", flush=True)  # another process holds the lock at the same time
            lock.release()
            continue
        time.sleep(0.1)
        os.close(fd)
        os.unlink(os.path.join(d, "inside"))
        lock.release()
        print("held", flush=True)
""")


def test_four_processes_racing_for_a_stale_lock_never_both_hold_it(tmp_path):
    trials, procs = 12, 4
    dead = _dead_pid()
    dirs = []
    for i in range(trials):
        d = tmp_path / f"t{i}"
        d.mkdir()
        (d / LOCK_NAME).write_text(json.dumps({"pid": dead, "host": socket.gethostname(), "started": "?"}))
        dirs.append(str(d))
    start = time.time() + 3.0  # time for the interpreters to start
    ps = [subprocess.Popen([sys.executable, "-c", RACE, str(start), *dirs], stdout=subprocess.PIPE, text=True)
          for _ in range(procs)]
    outs = [p.communicate(timeout=300)[0].split() for p in ps]
    assert all(len(o) == trials for o in outs), outs
    assert not any("VIOLATION" in o for o in outs)
    for i in range(trials):
        assert sum(o[i] == "held" for o in outs) >= 1, i  # someone got each lock
    assert not any(Path(d, LOCK_NAME).exists() for d in dirs)
