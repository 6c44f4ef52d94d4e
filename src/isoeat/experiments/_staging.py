"""Scratch folders of a run folder: ``--overwrite all`` computes into a staging folder and swaps it in.

Only folders that carry isoeat's marker file are ever touched; the replaced
results are kept (``.isoeat-replaced-RUN``), never deleted; a swap cut short is
undone by the next run (we hold the folder's lock).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["SCRATCH", "make_scratch", "is_scratch", "recover_scratch", "swap_in"]

SCRATCH = ".isoeat-"  # staging, swap and kept folders inside DIR
_MARKER = ".isoeat-scratch"  # the file that marks a folder as one of those (a user's .isoeat-* folder is left alone)


def make_scratch(path: Path, role: str) -> Path:
    path.mkdir(parents=True)
    (path / _MARKER).write_text(role + "\n", encoding="utf-8")
    return path


def is_scratch(path: Path) -> bool:
    return path.name.startswith(SCRATCH) and path.is_dir() and not path.is_symlink() and (path / _MARKER).is_file()


def recover_scratch(out: Path, log: Callable[[str], None]) -> None:
    """Undo what a run killed while staging or swapping left behind (we hold the lock).

    A staging folder is dropped (its run did not finish). A folder of old
    results whose swap was cut short gives back every item the folder lacks.
    Only folders that carry isoeat's marker file are touched; kept results
    (``.isoeat-replaced-*``) stay until the user removes them.
    """
    import shutil

    for d in sorted(out.glob(SCRATCH + "*")):
        if not is_scratch(d):
            continue
        role = (d / _MARKER).read_text(encoding="utf-8").strip()
        if role == "old":
            back = [p.name for p in d.iterdir() if p.name != _MARKER and not (out / p.name).exists()]
            for name in back:
                os.replace(d / name, out / name)
            if back:
                log(f"{out}: restored {', '.join(back)} from an interrupted replacement ({d.name})")
            shutil.rmtree(d, ignore_errors=True)
        elif role == "staging":
            shutil.rmtree(d, ignore_errors=True)


def swap_in(staging: Path, out: Path, run_id: str, owned: Sequence[str]) -> Path:
    """Replace the owned results in ``out`` by those in ``staging``; the old ones are kept, not deleted.

    Each old item moves aside only when its successor exists; at the end the
    folder of old items is renamed ``.isoeat-replaced-RUN`` and left for the
    user (it may hold files of theirs that sat inside isoeat's folders).
    """
    import shutil

    old = make_scratch(out / f"{SCRATCH}old-{run_id}", "old")
    for name in owned:
        if (out / name).exists() or (out / name).is_symlink():
            os.replace(out / name, old / name)
        if (staging / name).exists():
            os.replace(staging / name, out / name)
    shutil.rmtree(staging, ignore_errors=True)
    if len([p for p in old.iterdir() if p.name != _MARKER]) == 0:
        shutil.rmtree(old, ignore_errors=True)
        return old
    (old / _MARKER).write_text("kept\n", encoding="utf-8")
    kept = out / f"{SCRATCH}replaced-{run_id}"
    os.replace(old, kept)
    return kept
