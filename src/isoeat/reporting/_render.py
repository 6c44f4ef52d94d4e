"""Rendering of built figures: one layout, one draw per format, atomic files, optionally in forked workers.

:func:`fix_layout` computes a figure's layout once (``savefig`` would lay out
and pre-draw a figure that has a layout engine for every format);
:func:`_save` draws it once per format (PNG as RGB, PDF and SVG with
reproducible metadata) under :data:`_RC`; :func:`_save_all` renders a list of
built figures in this process or in forked workers (``ISOEAT_REPORT_JOBS``, else
:func:`idle_cores`); a figure drawn without matplotlib (``write_files``:
:class:`~isoeat.reporting._heatmap_draw.DirectHeatmap`) writes its own files.
matplotlib is imported lazily, as in :mod:`isoeat.reporting.figures`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: matplotlib settings every figure is measured, laid out and saved under. Text unhinted: FreeType's autohinter,
#: run on every glyph of every draw, was a third of the PNG text time; at the report's resolution the glyphs look
#: the same, and they are the shapes the PDF (never hinted) has.
_RC = {"text.hinting": "no_hinting"}


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


#: Figures waiting to be rendered by the forked workers of :func:`_save_all` (inherited, never pickled).
_PENDING: list[tuple[str, Any]] = []


def _save_one(i: int, folder: Path, formats: Sequence[str], dpi: int) -> list[Path]:
    name, fig = _PENDING[i]
    return _save(fig, folder / name, formats, dpi)


def _jobs(jobs: int | None, n: int, probe: CpuProbe | None = None) -> int:
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if jobs is None:
        from .._env import REPORT_JOBS_MAX, env_int

        busy = probe.others_busy() if probe is not None else None
        jobs = env_int("ISOEAT_REPORT_JOBS", 0, lo=1, hi=REPORT_JOBS_MAX) or idle_cores(load=busy)
    return max(1, min(jobs, n // 2))  # a worker pays off only with a few figures each


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


def _save_all(built: list[tuple[str, Any]], folder: Path, formats: Sequence[str], dpi: int,
              jobs: int | None, progress: bool | None = None) -> list[Path]:
    """Render ``built`` (name, Figure) to every format: each figure drawn once per format, in ``jobs`` processes.

    Workers are forked after the figures are built, so they render the very
    objects the parent checked; the order of the files returned is the plan's.
    One progress stage counts the figures rendered (``progress`` as in
    :func:`isoeat._progress.progress_bar`: None follows ``--quiet`` and
    ``$ISOEAT_PROGRESS``).
    """
    from .._progress import progress_bar

    jobs = _jobs(jobs, len(built))
    with progress_bar(len(built), "figures", progress, prefix="isoeat report") as bar:
        if jobs <= 1:
            out = []
            for name, fig in built:
                out += _save(fig, folder / name, formats, dpi)
                _release(fig)
                bar.update(1, label=name)
            return out
        # the longest first (matplotlib's figures, then the heatmaps drawn directly), so that no worker is left
        # drawing a long figure alone at the end; the files are returned in the plan's order
        from ._heatmap_draw import DirectHeatmap

        order = sorted(range(len(built)), key=lambda i: isinstance(built[i][1], DirectHeatmap))
        parts = _save_forked([built[i] for i in order], folder, formats, dpi, jobs, bar)
        by_plan = dict(zip(order, parts))
        return [p for i in range(len(built)) for p in by_plan[i]]


def _save_forked(built: list[tuple[str, Any]], folder: Path, formats: Sequence[str], dpi: int, jobs: int,
                 bar: Any) -> list[list[Path]]:
    """:func:`_save_all` in ``jobs`` forked workers, ``bar`` advanced as each figure's files come back in order;
    the files of each figure, in ``built``'s order.
    A worker killed by the system (the OOM killer's SIGKILL breaks the pool): the figures not yet back are drawn
    in this process, said once."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    from functools import partial

    global _PENDING
    _PENDING = built
    parts: list[list[Path]] = []
    try:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as ex:
            for (name, _), part in zip(built, ex.map(partial(_save_one, folder=folder, formats=formats, dpi=dpi),
                                                      range(len(built)))):
                parts.append(part)
                bar.update(1, label=name)
    except BrokenProcessPool:
        import warnings

        from .._errors import IsoeatWarning

        left = len(built) - len(parts)
        warnings.warn(f"a figure-drawing process ended abruptly (killed, perhaps for memory): the {left} figures not "
                      "back yet are drawn in this process", IsoeatWarning, stacklevel=3)
        for name, fig in built[len(parts):]:
            parts.append(_save(fig, folder / name, formats, dpi))
            _release(fig)
            bar.update(1, label=name)
    finally:
        _PENDING = []
    return parts
