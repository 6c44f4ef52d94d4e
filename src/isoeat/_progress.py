"""The one progress reporter: a rewritten stderr line with counts, elapsed time and ETA.

Used by ``isoeat run`` (quick and grid), ``isoeat sensitivity`` and the other
commands that report steps; :func:`terminal_progress` adapts it to the
``progress(done, total, label)`` callback that library functions accept.
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import Any, Callable

__all__ = ["Progress", "progress_enabled", "progress_bar", "terminal_progress", "format_duration"]


def format_duration(s: float) -> str:
    """``m:ss`` or ``h:mm:ss``; ``?`` when unknown.

    Examples
    --------
    >>> format_duration(75), format_duration(3725), format_duration(float("nan"))
    ('1:15', '1:02:05', '?')
    """
    if not math.isfinite(s):
        return "?"
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


class Progress:
    """Steps done/total with elapsed time and ETA on stderr (one rewritten line).

    The ETA is the mean time of the steps computed so far times the steps
    left; steps reused from earlier runs (``advance`` without ``seconds``)
    count as done but not in the mean.
    """

    def __init__(self, total: int, enabled: bool, stream: Any = None, *, prefix: str = "isoeat run") -> None:
        self.total = total
        self.prefix = prefix
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.done = 0
        self.computed = 0
        self.compute_time = 0.0
        self.t0 = time.perf_counter()
        self._last = self.t0
        self._width = 0
        self.label = ""

    def advance(self, label: str, *, seconds: float | None = None, n: int = 1) -> None:
        self.done += n
        if seconds is not None:
            self.computed += n
            self.compute_time += seconds
        self.show(label)

    def show(self, label: str) -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.t0
        left = self.total - self.done
        eta = (self.compute_time / self.computed) * left if self.computed else float("nan")
        pct = 100.0 * self.done / self.total if self.total else 100.0
        text = (f"{self.prefix}: [{self.done}/{self.total}] {pct:3.0f}%  elapsed {format_duration(elapsed)}  "
                f"ETA {format_duration(eta) if left else '0:00'}  {label}")
        if len(text) > 110:
            text = text[:107] + "..."
        pad = max(self._width - len(text), 0)
        self._width = len(text)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()

    def update(self, n: int = 1, label: str | None = None) -> None:
        """``n`` more steps computed since the last call (the tqdm-style interface encoders use)."""
        now = time.perf_counter()
        seconds, self._last = now - self._last, now
        self.advance(self.label if label is None else label, seconds=seconds, n=n)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\n")
            self.stream.flush()


def progress_enabled(flag: bool | None) -> bool:
    if flag is not None:
        return bool(flag)
    env = os.environ.get("ISOEAT_PROGRESS")
    if env is not None:
        return env.strip().lower() not in ("", "0", "false", "no", "off")
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def progress_bar(total: int, label: str, enabled: bool | None = None, *, prefix: str = "isoeat") -> Progress:
    """A :class:`Progress` for ``total`` steps of one stage (``with progress_bar(n, "encoding") as bar: bar.update(k)``).

    ``enabled=None`` follows :func:`progress_enabled`; a disabled bar counts silently.
    """
    bar = Progress(total, progress_enabled(enabled), prefix=prefix)
    bar.label = label
    return bar


def terminal_progress(prefix: str = "isoeat") -> Callable[[int, int, str], None] | None:
    """A ``progress(done, total, label)`` callback drawing a :class:`Progress` line, or None.

    None when progress is off (stderr not a terminal, or ``ISOEAT_PROGRESS=0``).
    """
    if not progress_enabled(None):
        return None
    state: dict[str, Any] = {}

    def progress(done: int, total: int, label: str) -> None:
        bar = state.get("bar")
        if bar is None or bar.total != total:
            bar = state["bar"] = Progress(total, True, prefix=prefix)
        bar.advance(label, seconds=time.perf_counter() - state.get("last", bar.t0), n=done - bar.done)
        state["last"] = time.perf_counter()
        if done >= total:
            bar.close()
            state.pop("bar")

    return progress
