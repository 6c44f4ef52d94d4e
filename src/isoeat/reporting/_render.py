"""Rendering of figures: one layout, one draw per format, atomic files, optionally shared with forked processes.

:func:`fix_layout` computes a figure's layout once (``savefig`` would lay out
and pre-draw a figure that has a layout engine for every format);
:func:`_save` draws it once per format (PNG as RGB, PDF and SVG with
reproducible metadata) under :data:`_RC`; :func:`draw_all` builds, checks and
draws a list of :class:`Entry` in this process or shared with forked ones
(``ISOEAT_REPORT_JOBS``, else :func:`idle_cores`), every size checked before
any file is written; a figure drawn without matplotlib (``write_files``:
:class:`~isoeat.reporting._heatmap_draw.DirectHeatmap`) writes its own files.
matplotlib is imported lazily, as in :mod:`isoeat.reporting.figures`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

#: matplotlib settings every figure is measured, laid out and saved under. Text unhinted: FreeType's autohinter,
#: run on every glyph of every draw, was a third of the PNG text time; at the report's resolution the glyphs look
#: the same, and they are the shapes the PDF (never hinted) has.
#: ``svg.hashsalt``: the ids of an SVG's clip paths and markers hashed with a fixed salt, not a random one per
#: process: the same figure is the same bytes, whichever process draws it, in every run.
_RC = {"text.hinting": "no_hinting", "svg.hashsalt": "isoeat"}


def literal_text(fig: Any) -> Any:
    """Draw every text of ``fig`` that can hold a label (titles, suptitles, axis labels, texts, annotations,
    legends) as written, never as mathtext: labels are data, and a model or test name with two dollar signs
    would otherwise lose them silently. Tick labels are left alone (a log axis's formatter writes mathtext).
    Returns ``fig``."""
    texts = list(fig.texts)
    texts += [t for t in (getattr(fig, n, None) for n in ("_suptitle", "_supxlabel", "_supylabel")) if t is not None]
    for leg in list(getattr(fig, "legends", [])) + [ax.get_legend() for ax in fig.axes]:
        if leg is not None:
            texts += list(leg.get_texts()) + [leg.get_title()]
    for ax in fig.axes:
        texts += list(ax.texts) + [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
    for t in texts:
        t.set_parse_math(False)
    return fig


def fix_layout(fig: Any, dpi: float | None = None) -> Any:
    """Compute ``fig``'s layout once and keep it: the figure is left without a layout engine.

    ``savefig`` on a figure that has a layout engine draws the whole figure
    (rendering disabled) to lay it out, then draws it again to print: two
    draws per format. Laid out once here, each format draws it once, in the
    same layout. ``dpi``: lay it out at this resolution (text sizes in
    pixels are rounded at it), default the figure's. Returns ``fig``.
    """
    literal_text(fig)  # before any text is measured
    engine = fig.get_layout_engine()
    if engine is None:
        return fig
    if dpi is not None and fig.dpi != dpi:
        fig.set_dpi(dpi)
    engine.execute(fig)
    from matplotlib import rc_context

    with rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)  # None removes the engine ('none' leaves a placeholder that savefig lays out)
    for after in getattr(fig, "_isoeat_after_layout", ()):  # what depends on the laid-out sizes (figures.py)
        after()
    fig._isoeat_after_layout = []
    return fig


def _save(fig: Any, base: Path, formats: Sequence[str], dpi: int) -> list[Path]:
    if hasattr(fig, "write_files"):  # drawn without matplotlib (reporting/_heatmap_draw.py)
        return fig.write_files(base, formats, dpi)
    base.parent.mkdir(parents=True, exist_ok=True)
    out = []
    import io

    from matplotlib import rc_context

    from .._io import atomic_write_bytes

    with rc_context(_RC):
        fix_layout(fig, dpi)
        for fmt in formats:
            if fmt == "png":
                data = _png(fig, dpi)
            else:
                buf = io.BytesIO()
                fig.savefig(buf, format=fmt, dpi=dpi, metadata=_metadata(fmt))
                data = buf.getvalue()
            p = base.parent / f"{base.name}.{fmt}"
            atomic_write_bytes(p, data)
            out.append(p)
    return out


def _png(fig: Any, dpi: int) -> bytes:
    """``fig`` drawn by Agg at ``dpi`` as an RGB PNG (:func:`isoeat.reporting._png.png_bytes`: rows filtered "Up",
    zlib level 3, half Pillow's time for the same size).

    RGB, not savefig's RGBA: the figures are opaque, and the alpha channel was a
    quarter of the bytes to filter and compress (and ~10% of the file).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from ._png import png_bytes

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    if fig.dpi != dpi:
        fig.set_dpi(dpi)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    return png_bytes(rgba[..., :3], dpi, (_metadata("png") or {})["Software"])


def _metadata(fmt: str) -> dict | None:
    if fmt == "png":
        return {"Software": "isoeat"}
    if fmt == "pdf":
        return {"Creator": "isoeat", "CreationDate": None}  # reproducible bytes
    if fmt == "svg":
        return {"Date": None}
    return None


def _release(fig: Any) -> None:
    """Let ``fig``'s renderer go once it is saved: a new bare canvas replaces its Agg canvas (and the pixel buffer it
    holds), so the next figure's renderer reuses that memory instead of faulting in fresh pages."""
    from matplotlib.backend_bases import FigureCanvasBase

    if not hasattr(fig, "write_files"):
        FigureCanvasBase(fig)


class PngOnly:
    """A built matplotlib figure drawn as PNG whatever formats the other figures take (the decision aids: the
    report embeds PNG); :func:`_save` draws it by its ``write_files``, as it draws any figure."""

    def __init__(self, fig: Any) -> None:
        self.fig = fig

    def get_size_inches(self) -> Any:
        return self.fig.get_size_inches()

    def write_files(self, base: Path, formats: Sequence[str], dpi: int) -> list[Path]:
        return _save(self.fig, base, ("png",), dpi)


def _jobs(jobs: int | None, n: int, probe: CpuProbe | None = None) -> int:
    """The processes that draw ``n`` figures: ``jobs``, else ``ISOEAT_REPORT_JOBS``, else :func:`idle_cores` (with
    ``probe``'s measure of the cores other processes keep busy); 1 where the system cannot fork; at most ``n // 2``
    (a process pays off only with a few figures)."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if jobs is None:
        from .._env import REPORT_JOBS_MAX, env_int

        busy = probe.others_busy() if probe is not None else None
        jobs = env_int("ISOEAT_REPORT_JOBS", 0, lo=1, hi=REPORT_JOBS_MAX) or idle_cores(load=busy)
    return max(1, min(jobs, n // 2))


def cpu_ticks(path: str = "/proc/stat") -> tuple[int, int] | None:
    """``(busy, total)`` clock ticks of all CPUs since boot, from the ``cpu`` line of ``/proc/stat`` (idle and
    iowait are idle; user, nice, system, irq, softirq and steal busy); None where there is no such line."""
    try:
        with open(path, encoding="ascii") as fh:
            first = fh.readline().split()
        ticks = [int(v) for v in first[1:9]]
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not first or first[0] != "cpu" or len(ticks) < 5:
        return None
    total = sum(ticks)
    return total - ticks[3] - ticks[4], total


class CpuProbe:
    """How many cores other processes kept busy while this one built the figures (Linux's ``/proc/stat`` and this
    process's own CPU time over the same interval): the load of *now*, where the 1-minute load average still
    counts the grid this report follows."""

    MIN_SECONDS = 0.2  # shorter: too few clock ticks (100 a second) to tell; the load average instead

    def __init__(self, ticks: Any = cpu_ticks, clock: Any = None, own: Any = None) -> None:
        import time

        self._ticks, self._clock, self._own = ticks, clock or time.monotonic, own or time.process_time
        self.start = (self._ticks(), self._clock(), self._own())

    def others_busy(self, hz: float | None = None) -> float | None:
        """Cores busy with other processes since the probe started (>= 0), or None (too short, or no /proc)."""
        import os

        t0, w0, c0 = self.start
        t1, dt = self._ticks(), self._clock() - w0
        if t0 is None or t1 is None or dt < self.MIN_SECONDS:
            return None
        if hz is None:
            hz = float(os.sysconf("SC_CLK_TCK")) if hasattr(os, "sysconf") else 100.0
        everyone = (t1[0] - t0[0]) / hz  # CPU seconds of every process, this one included
        return max(0.0, (everyone - (self._own() - c0)) / dt)


def idle_cores(cpus: int | None = None, load: float | None = None) -> int:
    """The report's default number of drawing processes: the cores left idle, rounded (``cpus - load``, at
    least 1, at most ``cpus``), on Linux; 1 elsewhere (forking a process that has used the system's graphics or
    BLAS libraries is unsafe on macOS). On a quiet 2-core machine two processes halve the figures' wall time;
    under load a second one only costs CPU. ``cpus``: default this process's usable cores, at most a container's
    CPU quota; ``load``: the cores other processes keep busy (:class:`CpuProbe`), default the 1-minute load
    average."""
    import os
    import sys

    if not sys.platform.startswith("linux"):
        return 1
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        quota = cpu_quota()
        if quota is not None:
            cpus = max(1, min(cpus, int(quota)))  # a container's CPU limit: the cores it may use in all
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:
            return 1
    return max(1, min(cpus, int(cpus - load + 0.5)))


def cpu_quota(path: str = "/sys/fs/cgroup/cpu.max") -> float | None:
    """The CPUs a cgroup-v2 limit allows this process (``quota / period`` of ``cpu.max``), or None: no limit
    (``max``), no such file, or a line that is not two numbers."""
    try:
        with open(path, encoding="ascii") as fh:
            parts = fh.read().split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(parts) != 2 or parts[0] == "max":
        return None
    try:
        quota, period = float(parts[0]), float(parts[1])
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


class Entry(NamedTuple):
    """A figure to draw: its file stem, a zero-argument ``draw`` that builds it (a matplotlib Figure, a figure drawn
    directly, or None: nothing to draw), whether it is drawn as PNG whatever the formats (the decision aids), and
    its ``weight``: a rough cost of drawing it, used only to share the figures between processes."""

    name: str
    draw: Callable[[], Any]
    png_only: bool = False
    weight: float = 1.0


def shares(weights: Sequence[float], jobs: int) -> list[list[int]]:
    """The figures (indices of ``weights``) each of ``jobs`` processes draws: the heaviest first, each to the least
    loaded process so far (longest processing time first); each share in the plan's order, the first the
    calling process's. Deterministic (ties go to the lower process)."""
    jobs = max(1, min(int(jobs), len(weights)))
    loads, out = [0.0] * jobs, [[] for _ in range(jobs)]  # type: list[float], list[list[int]]
    for i in sorted(range(len(weights)), key=lambda i: -weights[i]):
        k = min(range(jobs), key=loads.__getitem__)
        out[k].append(i)
        loads[k] += weights[i]
    return [sorted(s) for s in out]


def _build(entry: Entry, folder: Path, dpi: int, check: Callable[[Any, Path, int], None]) -> Any | None:
    """``entry`` built, its size checked (``check`` raises for a figure too large): the figure to save, or None."""
    fig = entry.draw()
    if fig is None:
        return None
    check(fig, folder / entry.name, dpi)
    return PngOnly(fig) if entry.png_only else fig


def draw_all(entries: Sequence[Entry], folder: Path, formats: Sequence[str], dpi: int, jobs: int,
             check: Callable[[Any, Path, int], None], progress: bool | None = None) -> list[list[Path] | None]:
    """Build, check and draw ``entries`` into ``folder``: the files of each entry, in their order (None: its
    ``draw`` gave nothing).

    Every figure is built and its size checked before any file is written (a
    figure too large raises, and nothing is written). With ``jobs`` > 1 the
    figures are shared between this process and ``jobs - 1`` forked ones
    (:func:`shares` by weight): each builds and checks its own share, they all
    wait until every share has passed (a barrier), then each draws its share
    (building in the processes, not before the fork, keeps that work parallel
    too). A process that ends abruptly (the OOM killer's SIGKILL) leaves its
    figures to this process, said once (and the temporary files it left are
    removed); an error or an interrupt here stops the others after the figure
    they are drawing. The warnings they catch, building or drawing, are given
    again here. One progress stage counts the figures
    drawn, once every share is built (``progress`` as in :func:`isoeat._progress.progress_bar`).
    """
    import multiprocessing

    entries = list(entries)
    if "fork" not in multiprocessing.get_all_start_methods():  # Windows: every figure here
        jobs = 1
    parts = shares([e.weight for e in entries], jobs)
    out: list[list[Path] | None] = [None] * len(entries)
    with _frozen():
        if len(parts) <= 1:
            built = [_build(e, folder, dpi, check) for e in entries]  # every size checked first
            with _stage(sum(f is not None for f in built), progress) as bar:
                for i, fig in enumerate(built):
                    _draw_here(i, fig, entries, folder, formats, dpi, out, bar)
            return out
        _draw_shared(entries, parts, folder, formats, dpi, check, out, progress)
    return out


def _stage(n: int, progress: bool | None) -> Any:
    """The progress stage of ``n`` figures drawn."""
    from .._progress import progress_bar

    return progress_bar(n, "figures", progress, prefix="isoeat report")


@contextlib.contextmanager
def _frozen() -> Iterator[None]:
    """The objects alive now left out of the garbage collector's passes while the figures are drawn
    (``gc.freeze``), then given back: every full collection of matplotlib's many short-lived objects walked the
    ~100,000 objects numpy, matplotlib and isoeat had loaded, and, in a forked process, wrote to each one's memory
    page (copying it). Where the caller froze objects already, their freeze is left as it is. From the second
    drawing in a process on (library use), the objects are collected first: the last drawing's figures, garbage in
    reference cycles, would otherwise be frozen again, call after call, and never freed (the command draws once
    and pays nothing)."""
    import gc

    global _DREW
    if gc.get_freeze_count():
        yield
        return
    if _DREW:
        gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        _DREW = True


#: Whether :func:`_frozen` has frozen and given back the collector's objects in this process already.
_DREW = False


def _draw_here(i: int, fig: Any, entries: Sequence[Entry], folder: Path, formats: Sequence[str], dpi: int,
               out: list, bar: Any) -> None:
    if fig is not None:
        out[i] = _save(fig, folder / entries[i].name, formats, dpi)
        _release(fig)
        bar.update(1, label=entries[i].name)


class _Kid:
    """A forked drawing process: its share, its end of the pipe, and the figures it has sent back."""

    def __init__(self, ctx: Any, share: list[int], target: Callable[..., None], args: tuple,
                 others: Sequence[Any] = ()) -> None:
        self.share, self.built, self.ended = share, None, False  # type: list[int], list[int] | None, bool
        self.conn, child = ctx.Pipe()
        # the parent's ends it inherits (its own and the earlier processes'): closed there, so that it sees the
        # parent end (EOF, a broken pipe) instead of holding both ends of its own pipe open
        ends = [self.conn, *others]
        self.proc = ctx.Process(target=target, args=(child, ends, share, *args), daemon=True)
        self.proc.start()
        child.close()

    def recv(self) -> tuple | None:
        """The next message, or None: the process ended without saying so (killed)."""
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.ended = True
            return None


def _draw_shared(entries: list[Entry], parts: list[list[int]], folder: Path, formats: Sequence[str], dpi: int,
                 check: Callable[[Any, Path, int], None], out: list, progress: bool | None) -> None:
    import multiprocessing
    import sys

    if "pdf" in formats:  # imported once before the fork, not once per process
        import matplotlib.backends.backend_pdf  # noqa: F401
    for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written again by a child
        if stream is not None and not getattr(stream, "closed", False):  # None: the descriptor was closed (>&-)
            stream.flush()
    ctx = multiprocessing.get_context("fork")
    kids: list[_Kid] = []
    go = False
    try:
        with _render_lock():  # no other thread of this process is drawing a matplotlib figure as they fork
            for share in parts[1:]:
                kids.append(_Kid(ctx, share, _child, (entries, folder, tuple(formats), dpi, check),
                                 [k.conn for k in kids]))
        mine = {i: _build(entries[i], folder, dpi, check) for i in parts[0]}
        lost: list[int] = []
        for kid in kids:  # the barrier: every share built and checked
            msg = kid.recv()
            if msg is None:
                lost += kid.share
            elif msg[0] == "error":
                raise _arrived(msg[1])
            else:
                kid.built = msg[1]
                _warn_again(msg[2])
        mine.update({i: _build(entries[i], folder, dpi, check) for i in lost})  # checked before any file
        for kid in kids:
            if not kid.ended:
                try:
                    kid.conn.send("go")
                except OSError:  # killed after it said "built" (not the command's stdout: BrokenPipeError): drawn here
                    kid.ended = True
        go = True
        if lost:
            _said_lost(len(lost))
        n = sum(f is not None for f in mine.values()) + sum(len(kid.built or ()) for kid in kids)
        with _stage(n, progress) as bar:
            for i in sorted(mine):
                _draw_here(i, mine[i], entries, folder, formats, dpi, out, bar)
                _collect(kids, entries, out, bar, block=False)
            _collect(kids, entries, out, bar, block=True)
            left = [i for kid in kids if kid.ended and kid.built for i in kid.built if out[i] is None]
            if left:
                _said_lost(len(left))
                for i in left:
                    _unlink_temporary(folder / entries[i].name)
                    _draw_here(i, _build(entries[i], folder, dpi, check), entries, folder, formats, dpi, out, bar)
    except BaseException:
        for kid in kids if go else ():  # an error or an interrupt here: the others stop after their current figure
            with contextlib.suppress(OSError):
                kid.conn.send("stop")
        raise
    finally:
        for kid in kids:
            if not go:
                kid.proc.kill()  # nothing written yet: stopped at once
            else:
                while not kid.ended and kid.recv() is not None:  # the figures it is drawing are finished
                    pass
            kid.proc.join()
            kid.conn.close()


def _render_lock() -> Any:
    """matplotlib's render lock (``Figure._render_lock``, held while a figure draws: its font and text caches are
    shared), to hold while forking: a process forked as another thread draws would inherit the lock held by a
    thread it does not have and wait for ever at its first figure; forked by the thread that holds it, the
    (re-entrant) lock is its own. A null context where matplotlib's figures are not loaded (nothing draws)."""
    import sys

    lock = getattr(getattr(sys.modules.get("matplotlib.figure"), "Figure", None), "_render_lock", None)
    return lock if lock is not None else contextlib.nullcontext()


def _collect(kids: list[_Kid], entries: Sequence[Entry], out: list, bar: Any, block: bool) -> None:
    """The figures the other processes have drawn since: their files noted, the stage advanced; ``block``: until
    every process has ended."""
    for kid in kids:
        while not kid.ended and (block or kid.conn.poll()):
            msg = kid.recv()
            if msg is None or msg[0] == "end":
                kid.ended = True
            elif msg[0] == "error":
                raise _arrived(msg[1])
            else:
                out[msg[1]] = msg[2]
                _warn_again(msg[3])
                bar.update(1, label=entries[msg[1]].name)


def _unlink_temporary(base: Path) -> None:
    """The temporary files (``_io.atomic_write``'s ``.NAME.FMT.*.tmp``) of the figure ``base`` that a killed
    process left unrenamed."""
    import glob

    for tmp in base.parent.glob(f".{glob.escape(base.name)}.*.tmp"):
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _said_lost(n: int) -> None:
    import warnings

    from .._errors import IsoeatWarning

    warnings.warn(f"a figure-drawing process ended abruptly (killed, perhaps for memory): the {n} figures not back "
                  "yet are drawn in this process", IsoeatWarning, stacklevel=5)


def _warn_again(caught: Sequence[Warning]) -> None:
    """The warnings a child caught while building or drawing its figures, given again here (where the user sees
    them once, through the caller's filters)."""
    import warnings

    for message in caught:
        warnings.warn(message, stacklevel=5)


def _crosses(obj: object) -> bool:
    """Whether ``obj`` can cross the pipe: pickled and unpickled (our own object, between our own processes)."""
    import pickle

    try:
        pickle.loads(pickle.dumps(obj))
        return True
    except Exception:  # noqa: BLE001 - any object that does not cross
        return False


def _portable_warnings(caught: Sequence[Any]) -> list[Warning]:
    """The warnings ``caught`` (``warnings.WarningMessage``) as they can cross the pipe: each its own instance, or,
    where that does not pickle (a class defined in a function), its text as the nearest class above that does."""
    out = []
    for w in caught:
        msg = w.message
        if not _crosses(msg):
            bases = [b for b in type(msg).__mro__[1:] if issubclass(b, Warning) and _crosses(b)]
            msg = bases[0](str(msg))  # Warning itself crosses
        out.append(msg)
    return out


def _portable(exc: BaseException | None, depth: int = 3) -> tuple | None:
    """``exc`` as it can cross the pipe (its own type where it pickles, else a RuntimeError naming it) with what
    pickling drops: its cause and context (as many deep as ``depth``: ``_resources.underlying`` reads them for the
    command's line), and its traceback's text. :func:`_arrived` puts it together again."""
    import traceback

    if exc is None or depth == 0:
        return None
    own = exc if _crosses(exc) else RuntimeError(f"{type(exc).__name__}: {exc}")
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, chain=False))
    return own, _portable(exc.__cause__, depth - 1), _portable(exc.__context__, depth - 1), \
        exc.__suppress_context__, tb


def _arrived(sent: tuple, note: bool = True) -> BaseException:
    """The exception :func:`_portable` sent, its causes in place; ``note``: the child's traceback as a note (3.11+)."""
    own, cause, context, suppress, tb = sent
    own.__cause__ = _arrived(cause, False) if cause else None
    own.__context__ = _arrived(context, False) if context else None
    own.__suppress_context__ = suppress
    if note and hasattr(own, "add_note"):
        own.add_note(f"raised in a forked figure-drawing process:\n{tb.rstrip()}")
    return own


def _child(conn: Any, ends: Sequence[Any], share: list[int], entries: Sequence[Entry], folder: Path,
           formats: Sequence[str], dpi: int, check: Callable[[Any, Path, int], None]) -> None:
    """A forked process of :func:`draw_all`: build and check its share, say so, wait for "go", draw, say each (with
    the warnings caught, given again by the parent). ``entries``: inherited at the fork, never pickled; ``ends``:
    the parent's ends of the pipes, closed here (the parent ended, killed: "go" never comes, a "done" is refused,
    and this process ends)."""
    import warnings

    for end in ends:
        end.close()
    try:
        with warnings.catch_warnings(record=True) as caught:
            figs = {i: _build(entries[i], folder, dpi, check) for i in share}
        conn.send(("built", [i for i in share if figs[i] is not None], _portable_warnings(caught)))
        if conn.recv() != "go":  # EOFError where the parent ended
            return
        for i, fig in figs.items():
            if conn.poll() and conn.recv() == "stop":  # the parent failed or was interrupted
                break
            if fig is not None:
                with warnings.catch_warnings(record=True) as caught:
                    files = _save(fig, folder / entries[i].name, formats, dpi)
                _release(fig)
                conn.send(("done", i, files, _portable_warnings(caught)))
        conn.send(("end",))
    except KeyboardInterrupt:  # the terminal's Ctrl-C reaches every process: the parent says it
        pass
    except BaseException as exc:  # noqa: BLE001 - said by the parent, as its own
        try:
            conn.send(("error", _portable(exc)))
        except OSError:
            pass
    finally:
        conn.close()
