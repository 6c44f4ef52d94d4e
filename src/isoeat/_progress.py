"""The one progress reporter: one line per stage with counts, elapsed time, throughput and ETA.

Used by ``isoeat run`` (quick and grid), ``isoeat sensitivity``, the contextual
encoders (reference sentences, contexts, sentences) and the other commands that
report steps; :func:`terminal_progress` adapts it to the ``progress(done,
total, label)`` callback that library functions accept.

Two forms, one stage = one :class:`Progress`:

* ``bar``: a line rewritten in place (stderr is a terminal);
* ``log``: plain lines for log files (CI, ``nohup``, SLURM): a line once
  :data:`LOG_INTERVAL` seconds have passed since the last one, or earlier when the
  longest of the last :data:`RECENT_STEPS` steps, taken once more, would pass that
  interval (so a log is never silent for longer than it while steps last no
  longer than those recent ones; a slow first step, the model warming up, stops
  counting after them), plus a final line with the count and elapsed time. Left to itself
  (stderr not a terminal, nothing asked), a stage shorter than
  :data:`LOG_INTERVAL` prints nothing.

A long stage can be announced: a :class:`Progress` with an ``announce``
callable writes the line it returns once, when the steps computed for
:data:`ESTIMATE_AFTER` seconds project the whole stage to :data:`LONG_STEP`
seconds or more (the contextual encoders' reference pass: its size, estimated
time and how to get a shorter one; :func:`purpose` and
:func:`set_pass_advice` supply the words of the caller and of the command line).

Which form, if any: ``--quiet`` (:func:`set_quiet`) silences everything; else
an explicit ``progress=True/False``; else ``$ISOEAT_PROGRESS``: ``0``/``off``
none, ``1``/``on`` every stage (bar on a terminal, log lines otherwise),
``bar`` or ``log`` that form, ``auto`` (or unset) a bar on a terminal and log
lines after :data:`LOG_INTERVAL` seconds otherwise.

Time comes from ``clock`` (default :func:`time.perf_counter`), so tests drive
it by hand.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import math
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["Progress", "progress_enabled", "progress_mode", "progress_bar", "terminal_progress", "format_duration",
           "set_quiet", "is_quiet", "LOG_INTERVAL", "PROGRESS_DOC", "progress_callback", "LONG_STEP",
           "ESTIMATE_AFTER", "RECENT_STEPS", "purpose", "current_purpose", "set_pass_advice", "pass_advice"]

#: Seconds between two log lines (and before the first one of a stage nobody asked to see).
LOG_INTERVAL = 10.0
#: Steps whose longest the log form expects the next one to last at most (a reference pass's chunk of 2,048
#: sentences is 32 batches of 64: its first, longest batch is among them when the next chunk starts).
RECENT_STEPS = 32
#: Seconds of computed steps after which a stage's whole time is estimated (for its announcement).
ESTIMATE_AFTER = 5.0
#: A stage estimated to take this many seconds or more is announced (``Progress.announce``), once.
LONG_STEP = 60.0

_PURPOSE: contextvars.ContextVar[str | None] = contextvars.ContextVar("isoeat_purpose", default=None)
_ADVICE: str | None = None


@contextlib.contextmanager
def purpose(text: str) -> Iterator[None]:
    """What the long steps run inside this block are for (``"fitting zca"``), named by their announcement."""
    token = _PURPOSE.set(text)
    try:
        yield
    finally:
        _PURPOSE.reset(token)


def current_purpose(default: str) -> str:
    """The innermost :func:`purpose`, else ``default``."""
    return _PURPOSE.get() or default


def set_pass_advice(template: str | None) -> str | None:
    """How a caller gets a shorter reference pass, with ``{size}`` for a smaller size (the command line sets its
    options' words; None: the Python API's); returns the previous setting."""
    global _ADVICE
    old, _ADVICE = _ADVICE, template
    return old


def pass_advice(size: int) -> str:
    """The advice of :func:`set_pass_advice` for a smaller reference of ``size`` sentences."""
    template = _ADVICE or ("n_reference={size} for a smaller sample, or isoeat.load_calibrator(PATH) to reuse a "
                           "saved calibrator")
    return template.format(size=f"{size}")

_OFF = ("", "0", "false", "no", "off")
_ON = ("1", "true", "yes", "on")
_QUIET = False


def set_quiet(on: bool) -> bool:
    """Silence every progress line (the CLI's ``--quiet``); returns the previous setting."""
    global _QUIET
    old, _QUIET = _QUIET, bool(on)
    return old


def is_quiet() -> bool:
    """Whether ``--quiet`` (:func:`set_quiet`) is in force."""
    return _QUIET


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


def _rate(n: float, seconds: float) -> str:
    """Steps per second (or seconds per step when slower than one a second)."""
    if n <= 0 or seconds <= 0:
        return ""
    r = n / seconds
    return f"{r:,.1f}/s" if r >= 1 else f"{seconds / n:,.1f} s each"


class Progress:
    """Steps done/total of one stage, with elapsed time and ETA, on stderr.

    Parameters
    ----------
    total : int
        Steps of the stage (sentences, contexts, cells, ...).
    enabled : bool or {"bar", "log"}
        ``False``/``None``: count silently; ``True`` or ``"bar"``: one line
        rewritten in place; ``"log"``: plain lines (at most one every
        ``interval`` seconds, and a final line).
    stream : file, optional
        Default ``sys.stderr``.
    prefix : str
        Start of every line.
    clock : callable, optional
        Seconds as a float (default :func:`time.perf_counter`).
    interval : float
        Seconds between two log lines.
    quiet_below : float
        Log form: a stage that ends before this many seconds, having printed
        nothing, prints no final line either.

    The ETA is the measured throughput of the steps computed so far (their
    mean time) times the steps left; steps reused from earlier runs
    (``advance`` without ``seconds``) count as done but not in the mean.
    """

    def __init__(self, total: int, enabled: Any, stream: Any = None, *, prefix: str = "isoeat run",
                 clock: Callable[[], float] | None = None, interval: float = LOG_INTERVAL,
                 quiet_below: float = 0.0) -> None:
        self.total = total
        self.prefix = prefix
        self.mode = "bar" if enabled is True else (enabled if enabled in ("bar", "log") else None)
        self.enabled = self.mode is not None
        self.stream = stream or sys.stderr
        self.clock = clock or time.perf_counter
        self.interval = interval
        self.quiet_below = quiet_below
        self.done = 0
        self.computed = 0
        self.compute_time = 0.0
        self.work_total: float | None = None  # the stage's work (weigh()): the ETA then scales time by work
        self.work_done = 0.0
        self.work_computed = 0.0
        self.t0 = self.clock()
        self._last = self.t0  # time of the last update (for update()'s step time)
        self._logged = self.t0  # time of the last log line
        self.lines = 0  # log lines written
        self._width = 0
        self._closed = False
        self.label = ""
        self.listener: Callable[[int, int, str], None] | None = None  # a caller's progress(done, total, label)
        self.recent: collections.deque[float] = collections.deque(maxlen=RECENT_STEPS)  # the last steps' seconds
        #: ``announce(estimated_seconds)``: the line announcing a long stage (None: none), asked once
        self.announce: Callable[[float], str | None] | None = None
        self._estimated = False

    def eta(self) -> float:
        """Seconds left: mean computed step time x steps left (NaN before the first computed step, 0 when done);
        for a weighed stage (:meth:`weigh`), time per unit of computed work x work left."""
        left = self.total - self.done
        if left <= 0:
            return 0.0
        if self.work_total is not None and self.work_computed > 0:
            return self.compute_time / self.work_computed * max(self.work_total - self.work_done, 0.0)
        return (self.compute_time / self.computed) * left if self.computed else float("nan")

    def weigh(self, work_total: float) -> None:
        """Steps of unequal cost: the stage holds ``work_total`` units of work (e.g. characters of the sentences),
        and each step says its own (``update(n, work=w)``; a step that does not: the mean work of a step), so that
        the ETA of a stage whose costly steps come first (length-sorted batches) is not off by their share."""
        self.work_total = float(work_total)

    def _work(self, n: int, work: float | None) -> float:
        if work is not None:
            return float(work)
        return n * self.work_total / self.total if self.work_total is not None and self.total else 0.0

    def advance(self, label: str, *, seconds: float | None = None, n: int = 1, work: float | None = None) -> None:
        self.done += n
        w = self._work(n, work)
        self.work_done += w
        if seconds is not None:
            self.computed += n
            self.work_computed += w
            self.compute_time += seconds
            self.recent.append(seconds)
            self._estimate()
        self.show(label)
        if self.listener is not None:
            self.listener(self.done, self.total, label)

    def skip(self, n: int, label: str | None = None, *, work: float | None = None) -> None:
        """``n`` steps reused (read from a cache): done, but not in the mean step time, nor in the next step's."""
        self._last = self.clock()
        self.advance(self.label if label is None else label, n=n, work=work)

    def _estimate(self) -> None:
        """Once ``ESTIMATE_AFTER`` seconds of steps are measured: the announcement of a stage estimated at
        ``LONG_STEP`` seconds or more (written when progress is shown at all)."""
        if self._estimated or self.announce is None or self.compute_time < ESTIMATE_AFTER:
            return
        self._estimated = True
        whole = self.clock() - self.t0 + self.eta()
        if self.mode is None or not whole >= LONG_STEP:
            return
        text = self.announce(whole)
        if text:
            if self.mode == "bar" and self._width:
                self.stream.write("\r" + " " * self._width + "\r")
                self._width = 0
            self._write_line(text)

    def rate(self) -> float:
        """Steps per second at the measured pace (NaN before the first): for a weighed stage, the stage's mean step
        at the time per unit of work measured so far."""
        if self.compute_time <= 0:
            return float("nan")
        if self.work_total is not None and self.work_computed > 0 and self.total:
            return self.work_computed / self.compute_time / (self.work_total / self.total)
        return self.computed / self.compute_time

    def _text(self, label: str, final: bool = False) -> str:
        elapsed = self.clock() - self.t0
        pct = 100.0 * self.done / self.total if self.total else 100.0
        head = f"{self.prefix}: [{self.done:,}/{self.total:,}] {pct:3.0f}%"
        if final:
            verb = "done in" if self.done >= self.total else "stopped after"
            return f"{head}  {verb} {format_duration(elapsed)}  {label}".rstrip()
        rate = _rate(self.computed, self.compute_time)
        return (f"{head}  elapsed {format_duration(elapsed)}  ETA {format_duration(self.eta())}"
                f"{'  ' + rate if rate else ''}  {label}").rstrip()

    def show(self, label: str) -> None:
        if label:
            self.label = label
        if self.mode == "log":
            now = self.clock()
            since = now - self._logged  # a line now when the next step, as long as the longest recent, would pass it
            longest = max(self.recent, default=0.0)
            if (since >= self.interval or since + longest > self.interval) and self.done < self.total:
                self._logged = now
                self._write_line(self._text(self.label))
            return
        if self.mode != "bar":
            return
        text = self._text(self.label)
        if len(text) > 110:
            text = text[:107] + "..."
        pad = max(self._width - len(text), 0)
        self._width = len(text)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()

    def _write_line(self, text: str) -> None:
        self.lines += 1
        self.stream.write(text + "\n")
        self.stream.flush()

    def update(self, n: int = 1, label: str | None = None, *, work: float | None = None) -> None:
        """``n`` more steps computed since the last call (the tqdm-style interface encoders use); ``work``: their
        work in a weighed stage (:meth:`weigh`)."""
        now = self.clock()
        seconds, self._last = now - self._last, now
        self.advance(self.label if label is None else label, seconds=seconds, n=n, work=work)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """End the stage: the bar's line is finished; the log form writes its final line."""
        if self._closed:
            return
        self._closed = True
        if self.mode == "bar" and self._width:
            self.stream.write("\n")
            self.stream.flush()
        elif self.mode == "log" and (self.lines or self.clock() - self.t0 >= self.quiet_below):
            self._write_line(self._text(self.label, final=True))


def _settings(flag: Any) -> tuple[str | None, float]:
    """``(mode, quiet_below)`` for an explicit flag (True/False/None), ``--quiet`` and ``$ISOEAT_PROGRESS``."""
    if _QUIET or flag is False:
        return None, 0.0
    from ._env import PROGRESS_VALUES, env_choice

    value = env_choice("ISOEAT_PROGRESS", PROGRESS_VALUES, "auto")  # any other value: an error naming it
    if value in ("bar", "log"):
        return value, 0.0
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    if flag is True or value in _ON:
        return ("bar" if tty else "log"), 0.0
    if value in _OFF:
        return None, 0.0
    return ("bar", 0.0) if tty else ("log", LOG_INTERVAL)  # auto (and any other value)


def progress_mode(flag: bool | None = None) -> str | None:
    """``"bar"``, ``"log"`` or ``None`` (off) for an explicit flag, ``--quiet`` and ``$ISOEAT_PROGRESS``.

    Examples
    --------
    >>> progress_mode(False) is None
    True
    """
    return _settings(flag)[0]


def progress_enabled(flag: bool | None) -> bool:
    """Whether progress is shown at all (see :func:`progress_mode`)."""
    return progress_mode(flag) is not None


def progress_bar(total: int, label: str, enabled: Any = None, *, prefix: str = "isoeat",
                 clock: Callable[[], float] | None = None, stream: Any = None) -> Progress:
    """A :class:`Progress` for ``total`` steps of a stage (``with progress_bar(n, "encoding") as bar: bar.update(k)``).

    ``enabled`` is a progress argument (:data:`PROGRESS_DOC`): None follows ``--quiet`` and
    ``$ISOEAT_PROGRESS`` (:func:`progress_mode`); a disabled bar counts silently; a callable is called as
    ``enabled(done, total, label)`` at every step, and nothing is drawn.
    """
    listener = enabled if callable(enabled) else None
    mode, quiet_below = _settings(False if listener is not None else enabled)
    bar = Progress(total, mode, stream, prefix=prefix, clock=clock, quiet_below=quiet_below)
    bar.label = label
    bar.listener = listener
    return bar


#: What every ``progress`` argument of isoeat accepts (one type everywhere).
PROGRESS_DOC = ("None (a bar on a terminal, log lines otherwise; ``--quiet`` and ``$ISOEAT_PROGRESS`` decide), "
                "True or False (show it or not), or a callable ``progress(done, total, label)`` called after each "
                "step instead of drawing anything")


def progress_callback(progress: Any, prefix: str = "isoeat") -> Callable[[int, int, str], None] | None:
    """A ``progress(done, total, label)`` callback for a progress argument (:data:`PROGRESS_DOC`), or None.

    A callable is returned as it is; True, False and None give :func:`terminal_progress` (drawn when that
    setting shows progress) or None.
    """
    if callable(progress):
        return progress
    return terminal_progress(prefix, enabled=progress)


def terminal_progress(prefix: str = "isoeat", *, clock: Callable[[], float] | None = None,
                      stream: Any = None, enabled: bool | None = None) -> Callable[[int, int, str], None] | None:
    """A ``progress(done, total, label)`` callback drawing a :class:`Progress` line, or None.

    None when progress is off (``enabled=False``, ``--quiet``, ``ISOEAT_PROGRESS=0``).
    """
    if not progress_enabled(enabled):
        return None
    clock = clock or time.perf_counter
    state: dict[str, Any] = {"start": clock()}  # a stage starts with the callback, or when the last one ended

    def progress(done: int, total: int, label: str) -> None:
        bar = state.get("bar")
        if bar is None or bar.total != total:
            bar = state["bar"] = progress_bar(total, label, enabled, prefix=prefix, clock=clock, stream=stream)
            bar.t0 = bar._last = bar._logged = state["start"]  # the first step's time counts too
        bar.update(done - bar.done, label=label)
        if done >= total:
            bar.close()
            state.pop("bar")
            state["start"] = clock()

    return progress
