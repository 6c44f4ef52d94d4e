"""Adversarial cases of the report's shared drawing (reporting/_render.py: ``draw_all``), each a defect found and
fixed: what a forked process caught must reach the caller as a one-process drawing gives it, whatever the
warning's class; two threads drawing at once each get their own figures; SVG files are the same bytes whoever
draws them.

Expected values come from a one-process drawing (``jobs=1``) of the same entries, or from the entries themselves
(each fake file holds the name of the figure it was built for).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from isoeat import IsoeatWarning
from isoeat.reporting import _render
from isoeat.reporting._render import Entry, draw_all

FORK = sys.platform.startswith("linux")
needs_fork = pytest.mark.skipif(not FORK, reason="the drawing processes are forked (Linux)")


class _Fake:
    """A figure drawn without matplotlib: one file per format holding its name; ``warn``: a warning given while
    its files are written (at draw time, not build time)."""

    def __init__(self, name: str, warn=None):
        self.name, self.warn = name, warn

    def get_size_inches(self):
        return np.array((2.0, 1.0))

    def write_files(self, base: Path, formats, dpi):
        if self.warn is not None:
            self.warn(self.name)
        out = []
        base.parent.mkdir(parents=True, exist_ok=True)
        for fmt in formats:
            p = base.parent / f"{base.name}.{fmt}"
            p.write_text(self.name)
            out.append(p)
        return out


def _check(fig, path, dpi):
    from isoeat.reporting.figures import _check_pixels

    _check_pixels(fig, path, dpi)


def _entries(n=6, draw=None, prefix="f"):
    return [Entry(f"{prefix}{k}", (lambda name=f"{prefix}{k}": draw(name)) if draw else
                  (lambda name=f"{prefix}{k}": _Fake(name)), False, 1.0) for k in range(n)]


def _files(folder: Path):
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


# --------------------------------------------------------------------------- warnings of any class
class _NeedsCode(UserWarning):
    """A warning class whose constructor needs a second argument (``warnings.warn(message, category)`` cannot
    make one from the message alone)."""

    def __init__(self, message: str, code: int):
        super().__init__(message, code)
        self.code = code

    def __str__(self) -> str:
        return f"{self.args[0]} (code {self.code})"


@needs_fork
@pytest.mark.parametrize("kind", ["local", "needs-code"])
def test_a_warning_of_any_class_built_in_a_forked_process_is_given_not_fatal(tmp_path, kind):
    """A warning whose class does not pickle (defined in a function) or cannot be made from its message alone was
    fatal with two processes (the message could not cross, or the parent could not give it again); one process
    only warns. Both draw every figure and warn with the same text."""

    class Local(UserWarning):
        pass

    def draw(name):
        if kind == "local":
            warnings.warn(f"odd {name}", Local, stacklevel=1)
        else:
            warnings.warn(_NeedsCode(f"odd {name}", 7), stacklevel=1)
        return _Fake(name)

    got = {}
    for jobs in (1, 2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = draw_all(_entries(draw=draw), tmp_path / str(jobs), ("png",), 50, jobs, _check, progress=False)
        assert all(out)
        got[jobs] = sorted(str(w.message) for w in caught)
    assert got[2] == got[1] and len(got[1]) == 6


@needs_fork
def test_a_warning_given_while_a_forked_process_draws_reaches_the_caller(tmp_path):
    """Warnings given while a figure's files are written (matplotlib warns at draw time) reach the caller's
    filters and records as with one process, not printed by the forked process behind the caller's back."""

    def warn(name):
        warnings.warn(f"drawing {name}", UserWarning, stacklevel=1)

    got = {}
    for jobs in (1, 2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            draw_all(_entries(draw=lambda name: _Fake(name, warn)), tmp_path / str(jobs), ("png",), 50, jobs,
                     _check, progress=False)
        got[jobs] = sorted(str(w.message) for w in caught)
    assert got[1] == [f"drawing f{k}" for k in range(6)]
    assert got[2] == got[1]


# --------------------------------------------------------------------------- two threads drawing at once
class _Flush:
    """A stream whose first flush (``draw_all`` flushes before it forks) runs ``hook`` first: a deterministic
    thread switch at the worst moment."""

    def __init__(self, stream, hook):
        self.stream, self.hook = stream, hook

    def write(self, s):
        return self.stream.write(s)

    def flush(self):
        hook, self.hook = self.hook, None
        if hook is not None:
            hook()
        return self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)


@needs_fork
def test_two_threads_drawing_at_once_each_draw_their_own_figures(tmp_path, monkeypatch):
    """Library use from threads (a service writing two reports at once): another thread's drawing, started and
    finished while this one was about to fork, must not change which figures this one's processes draw."""
    other = {}

    def run_other():
        other["out"] = draw_all(_entries(prefix="b"), tmp_path / "b", ("png",), 50, 2, _check, progress=False)

    def hook():
        t = threading.Thread(target=run_other)
        t.start()
        t.join()

    monkeypatch.setattr(sys, "stdout", _Flush(sys.stdout, hook))
    mine = draw_all(_entries(prefix="a"), tmp_path / "a", ("png",), 50, 2, _check, progress=False)
    for out, prefix in ((mine, "a"), (other["out"], "b")):
        assert [p.read_text() for f in out for p in f] == [f"{prefix}{k}" for k in range(6)]
        assert [p.stem for f in out for p in f] == [f"{prefix}{k}" for k in range(6)]


# --------------------------------------------------------------------------- the same bytes whoever draws
def _plot(name):
    """A small matplotlib figure with a clip path and markers (the ids an SVG names)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2.0, 1.5))
    ax = fig.add_subplot()
    ax.plot([1, 2, 3], [1, 4, 2 + len(name)], marker="o")
    ax.set_title(name)
    return fig


@needs_fork
def test_svg_files_are_the_same_bytes_in_one_process_in_two_and_in_every_run(tmp_path):
    """matplotlib names an SVG's clip paths and markers by a hash salted at random per process unless
    ``svg.hashsalt`` is set: two processes (or two runs) gave different bytes for the same figure, where PNG and
    PDF are the same. Compared: jobs=1 twice, jobs=2 and jobs=3, file by file."""
    pytest.importorskip("matplotlib")
    runs = {}
    for tag, jobs in (("one", 1), ("again", 1), ("two", 2), ("three", 3)):
        entries = [Entry(f"p{k}", (lambda k=k: _plot(f"p{k}")), False, 1.0) for k in range(6)]
        draw_all(entries, tmp_path / tag, ("svg",), 50, jobs, _check, progress=False)
        runs[tag] = {p.name: p.read_bytes() for p in sorted((tmp_path / tag).iterdir())}
    assert len(runs["one"]) == 6 and b'clip-path="url(#' in runs["one"]["p0.svg"]
    for tag in ("again", "two", "three"):
        assert runs[tag] == runs["one"], tag


# --------------------------------------------------------------------------- stopping, and what a killed process leaves
@needs_fork
def test_an_interrupt_here_stops_the_forked_process_after_its_current_figure(tmp_path, monkeypatch):
    """Ctrl-C reaching this process only (a supervisor's SIGINT to its pid, not the terminal's to the group): the
    forked process used to draw the whole of its share (each figure 0.8 s here) before the interrupt was given;
    it stops after the figure it is drawing."""
    parent, save = os.getpid(), _render._save

    def slow(fig, base, formats, dpi):
        if os.getpid() == parent:
            raise KeyboardInterrupt
        files = save(fig, base, formats, dpi)
        time.sleep(0.8)
        return files

    monkeypatch.setattr(_render, "_save", slow)
    with pytest.raises(KeyboardInterrupt):
        draw_all(_entries(), tmp_path, ("png",), 50, 2, _check, progress=False)
    assert len(_files(tmp_path)) < 3  # its share is 3 figures


class _AtomicFake(_Fake):
    """A fake figure written as the report writes its files (``_io.atomic_write_bytes``: a temporary file renamed)."""

    def write_files(self, base: Path, formats, dpi):
        from isoeat._io import atomic_write_bytes

        out = []
        for fmt in formats:
            p = base.parent / f"{base.name}.{fmt}"
            atomic_write_bytes(p, self.name.encode())
            out.append(p)
        return out


@needs_fork
def test_a_process_killed_while_writing_leaves_no_temporary_file(tmp_path, monkeypatch):
    """Killed (the OOM killer's SIGKILL) between writing a file and renaming it: this process draws its figures
    again, and the temporary file it left is removed, not left in the report's folder."""
    parent, fsync = os.getpid(), os.fsync

    def killing(fd):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return fsync(fd)

    monkeypatch.setattr(os, "fsync", killing)
    entries = _entries(draw=lambda name: _AtomicFake(name))
    with pytest.warns(IsoeatWarning, match="ended abruptly"):
        got = draw_all(entries, tmp_path, ("png", "pdf"), 50, 2, _check, progress=False)
    assert all(got)
    assert _files(tmp_path) == sorted(f"f{k}.{fmt}" for k in range(6) for fmt in ("png", "pdf"))


# --------------------------------------------------------------------------- errors as one process gives them
@needs_fork
def test_an_error_of_a_forked_process_keeps_its_causes_as_one_process_gives_them(tmp_path):
    """An error raised while handling another (isoeat's message for a library that could not load as memory ran
    out) crossed the pipe without its cause: the command's line (``_resources.underlying``: the cause chain) then
    named no resource with two processes where one process names it. The child's own traceback is kept too (a
    note, where Python has them), for an unexpected error's report."""
    from isoeat._errors import MissingDependencyError
    from isoeat._resources import underlying

    def draw(name):
        if name == "f3":  # the forked process's share with two processes
            try:
                raise MemoryError("cannot allocate 12 GiB")
            except MemoryError as exc:
                raise MissingDependencyError("matplotlib could not be loaded") from exc
        return _Fake(name)

    got = {}
    for jobs in (1, 2):
        with pytest.raises(MissingDependencyError) as info:
            draw_all(_entries(draw=draw), tmp_path / str(jobs), ("png",), 50, jobs, _check, progress=False)
        exc = info.value
        got[jobs] = (str(exc), type(exc.__cause__), str(exc.__cause__), underlying(exc, "while drawing"))
    assert got[1][3] is not None and "memory" in got[1][3]
    assert got[2] == got[1]
    if sys.version_info >= (3, 11):
        assert any("in draw" in note for note in getattr(info.value, "__notes__", ()))


# --------------------------------------------------------------------------- the collector, in library use
class _Cyclic(_Fake):
    """A fake figure in a reference cycle, as a matplotlib Figure is (figure -> axes -> figure): freed only by a
    collection."""

    def __init__(self, name: str):
        super().__init__(name)
        self.me = self


@pytest.mark.parametrize("jobs", [1, 2] if FORK else [1])
def test_drawing_many_times_in_one_process_does_not_keep_earlier_figures(tmp_path, jobs):
    """``write_figures`` called again and again (a service, a notebook): each call froze what the last one left,
    its figures among it (garbage in cycles, not yet collected), then gave it back to the oldest generation, and
    the next call froze it again before any full collection: 60 calls kept 500,000 objects of matplotlib figures
    alive. The figures of earlier calls must be freed (at most the last call's are left)."""
    import gc
    import weakref

    made: list = []

    def draw(name):
        fig = _Cyclic(name)
        made.append(weakref.ref(fig))
        return fig

    gc.collect()
    for k in range(20):
        draw_all(_entries(draw=draw), tmp_path / str(k % 2), ("png",), 50, jobs, _check, progress=False)
    alive = sum(r() is not None for r in made)
    assert alive <= 6, f"{alive} figures of earlier calls alive"


# --------------------------------------------------------------------------- no standard output
@needs_fork
@pytest.mark.parametrize("stream", ["none", "closed"])
def test_a_missing_or_closed_standard_output_draws_as_one_process_does(tmp_path, monkeypatch, stream):
    """``isoeat report D >&-`` (standard output closed: Python's ``sys.stdout`` is None) ended in a traceback
    and no figure with two processes (the flush before the fork), where one process draws every figure; a
    closed stream object (library use) likewise."""
    if stream == "none":
        monkeypatch.setattr(sys, "stdout", None)
    else:
        closed = open(tmp_path.parent / f"{tmp_path.name}-stderr.txt", "w")  # noqa: SIM115 - closed at once
        closed.close()
        monkeypatch.setattr(sys, "stderr", closed)
    got = draw_all(_entries(), tmp_path, ("png",), 50, 2, _check, progress=False)
    assert all(got) and _files(tmp_path) == [f"f{k}.png" for k in range(6)]


def test_the_command_with_standard_output_closed_draws_every_figure(tmp_path):
    """The command itself: ``isoeat report`` with file descriptor 1 closed exits 0 having drawn its figures, with
    two drawing processes as with one (a report from a small results folder of fake records)."""
    import subprocess

    pytest.importorskip("matplotlib")
    env = dict(os.environ, ISOEAT_REPORT_JOBS="2", ISOEAT_PROGRESS="0")
    out = tmp_path / "run"
    cfg = tmp_path / "small.yaml"  # the bundled GloVe, two tests, small samples
    cfg.write_text("name: small\nmodels: [{spec: glove-6b-50d, label: G, family: static}]\ntests: [W1, W2]\n"
                   "calibrations: [none, zca]\nsettings: {permutations: 200, seed: 0, reference: {size: 2000}}\n"
                   "anisotropy: {sample: 200, components: 20}\nreport: {test_heatmaps: none}\n")
    run = subprocess.run([sys.executable, "-m", "isoeat.cli", "run", str(cfg), "--out", str(out)], capture_output=True,
                         text=True, env=env)
    if run.returncode != 0:
        pytest.skip(f"no run folder: {run.stderr.strip()[-200:]}")
    rep = subprocess.run(f'"{sys.executable}" -m isoeat.cli report "{out}" --formats png >&-', shell=True,
                         capture_output=False, stderr=subprocess.PIPE, text=True, env=env)
    assert rep.returncode == 0, rep.stderr[-500:]
    assert "Traceback" not in rep.stderr
    assert (out / "figures" / "fig2_explained_variance.png").exists()


# --------------------------------------------------------------------------- another thread drawing with matplotlib
_LOCKED_DRAW = r"""
import sys, threading, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from matplotlib.figure import Figure
from test_draw_shared_adv import _check, _plot
from isoeat.reporting._render import Entry, draw_all

held = threading.Event()

def other():  # another thread drawing a matplotlib figure: Figure.draw holds Figure._render_lock
    with Figure._render_lock:
        held.set()
        time.sleep(1.0)

threading.Thread(target=other).start()
held.wait()
entries = [Entry(f"p{k}", (lambda k=k: _plot(f"p{k}")), False, 1.0) for k in range(4)]
out = draw_all(entries, Path(sys.argv[2]), ("png",), 50, 2, _check, progress=False)
print(sum(1 for f in out if f))
"""


@needs_fork
def test_forking_while_another_thread_draws_with_matplotlib_does_not_hang(tmp_path):
    """A thread of the caller drawing a matplotlib figure holds matplotlib's render lock (``Figure._render_lock``:
    one figure draws at a time, its font and text caches shared): a process forked then inherited the lock held
    by a thread it does not have, and its first draw waited for ever, and this process with it. The forks wait
    until no figure is drawing."""
    import subprocess

    pytest.importorskip("matplotlib")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(_render.__file__).parents[2]),
                                                       os.environ.get("PYTHONPATH", "")]))
    run = subprocess.Popen([sys.executable, "-c", _LOCKED_DRAW, str(Path(__file__).parent), str(tmp_path)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        stdout, stderr = run.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)  # its forked process too
        run.communicate()
        pytest.fail("the drawing did not end in 30 s (a forked process waits for a lock no thread of it holds)")
    assert run.returncode == 0, stderr[-800:]
    assert stdout.strip() == "4"


# --------------------------------------------------------------------------- this process ended by a signal
_PARENT_KILLED = r"""
import os, signal, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from test_draw_shared_adv import _Fake, _check, _entries
from isoeat.reporting._render import draw_all

phase, parent = sys.argv[3], os.getpid()

class Slow(_Fake):
    def write_files(self, base, formats, dpi):
        if os.getpid() == parent:  # this process ends (a supervisor's SIGTERM to its pid, the OOM killer)
            os.kill(parent, signal.SIGKILL)
        time.sleep(0.3)
        return super().write_files(base, formats, dpi)

def draw(name):
    if phase == "building" and os.getpid() == parent:
        time.sleep(0.5)  # the other process is waiting for "go"
        os.kill(parent, signal.SIGKILL)
    return Slow(name)

draw_all(_entries(16, draw=draw), Path(sys.argv[2]), ("png",), 50, 2, _check, progress=False)
"""


@needs_fork
@pytest.mark.parametrize("phase", ["building", "drawing"])
def test_a_forked_process_ends_soon_after_this_one_is_killed(tmp_path, phase):
    """This process killed (SIGKILL; SIGTERM to its pid alone, as a workflow manager's ``terminate()`` sends):
    the forked process held both ends of its pipe, so it never saw this one go. Waiting for "go", it waited for
    ever (a process left behind); drawing, it drew the rest of its share into the folder of a command that had
    ended. It ends at its next message, after at most the figure it is drawing."""
    import shutil
    import subprocess

    if shutil.which("pgrep") is None:
        pytest.skip("no pgrep to find the processes left")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(_render.__file__).parents[2]),
                                                       os.environ.get("PYTHONPATH", "")]))
    run = subprocess.Popen([sys.executable, "-c", _PARENT_KILLED, str(Path(__file__).parent), str(tmp_path), phase],
                           stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    try:
        run.wait(timeout=60)
        deadline = time.monotonic() + 4.0
        while time.monotonic() < deadline:
            left = subprocess.run(["pgrep", "-g", str(run.pid)], capture_output=True, text=True).stdout.split()
            if not left:
                break
            time.sleep(0.1)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == -signal.SIGKILL
    assert left == [], "a forked drawing process outlived this one"
    assert len(_files(tmp_path)) <= 1  # its share is 8 figures of 0.3 s


# --------------------------------------------------------------------------- Figure 2's light minor ticks
def _fig2_png(lo: float, light: bool, monkeypatch, dpi: int = 60):
    """Figure 2 of one model whose explained variance falls from 0.5 to 10**lo in 12 components, as PNG pixels
    (``light``: isoeat's minor ticks; else matplotlib's own, the reference: ``test_draw_shared._fig2``)."""
    import io

    from PIL import Image

    from test_draw_shared import _fig2

    png, _ = _fig2(lo, light, monkeypatch, top=0.5, dpi=dpi)
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


@pytest.mark.parametrize("lo", [-8.0, -8.5, -7.0, -3.0])
@pytest.mark.parametrize("dpi", [60, 150])
def test_light_minor_ticks_follow_the_laid_out_axis(lo, dpi, monkeypatch):
    """matplotlib's log locator puts minor ticks only where its major ticks are one decade apart, and how many
    decades apart they are depends on the axis's length *after* the layout: ~8 decades of explained variance (a
    rank-deficient space) had minor gridlines in every decade, read before the layout, where matplotlib, laid out,
    draws majors two decades apart and no minor tick. The pixels must be matplotlib's own (7 and 3 decades: the
    light ticks stay, and stay the same)."""
    pytest.importorskip("matplotlib")
    mine = _fig2_png(lo, True, monkeypatch, dpi)
    theirs = _fig2_png(lo, False, monkeypatch, dpi)
    assert mine.shape == theirs.shape
    assert int((mine != theirs).any(-1).sum()) == 0


# --------------------------------------------------------------------------- where the system cannot fork
def test_jobs_asked_for_where_the_system_cannot_fork_draw_in_this_process(tmp_path, monkeypatch):
    """``write_figures(..., jobs=2)`` on Windows (no "fork" start method): its docstring promises more processes
    "only where the system can fork", but ``draw_all`` asked for the fork context and failed. It draws every
    figure in this process instead (simulated: the methods and context Windows gives)."""
    import multiprocessing

    real = multiprocessing.get_context

    def context(method=None):
        if method == "fork":
            raise ValueError("cannot find context for 'fork'")
        return real(method)

    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    monkeypatch.setattr(multiprocessing, "get_context", context)
    got = draw_all(_entries(), tmp_path, ("png",), 50, 2, _check, progress=False)
    assert all(got) and _files(tmp_path) == [f"f{k}.png" for k in range(6)]


@needs_fork
def test_a_process_killed_after_building_its_share_leaves_it_to_this_one(tmp_path):
    """Killed (the OOM killer) after it said "built", before "go" reached it: sending "go" raised BrokenPipeError
    here, which the command reads as its standard output closed by a reader (``isoeat report D | head``): exit
    status 0, not one figure, not a word. Its figures are drawn here, said once, as when it dies building."""
    import multiprocessing

    parent = os.getpid()

    def draw(name):
        if os.getpid() == parent and name == "f0":
            time.sleep(0.5)  # the other process has built its share and waits for "go"
            for kid in multiprocessing.active_children():
                os.kill(kid.pid, signal.SIGKILL)
                kid.join()
        return _Fake(name)

    with pytest.warns(IsoeatWarning, match="ended abruptly"):
        got = draw_all(_entries(draw=draw), tmp_path, ("png",), 50, 2, _check, progress=False)
    assert all(got) and _files(tmp_path) == [f"f{k}.png" for k in range(6)]
