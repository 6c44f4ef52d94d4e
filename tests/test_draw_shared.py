"""The report's figures shared between processes (reporting/_render.py: ``shares``, ``draw_all``), the light
minor ticks of Figure 2, the weights that share the figures, and the command's exit (cli.console).

Expected values come from outside the code under test: the shares from a brute-force search over every
assignment; files and errors from what a one-process drawing gives; Figure 2's pixels from matplotlib drawing its
own minor ticks.
"""

from __future__ import annotations

import gc
import itertools
import os
import signal
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from isoeat import IsoeatWarning
from isoeat._errors import ConfigError
from isoeat.reporting import _render
from isoeat.reporting._render import Entry, draw_all, shares

FORK = sys.platform.startswith("linux")
needs_fork = pytest.mark.skipif(not FORK, reason="the drawing processes are forked (Linux)")


# --------------------------------------------------------------------------- shares
def _brute_makespan(weights, jobs):
    """The least possible largest load over every assignment of ``weights`` to ``jobs`` processes."""
    best = float("inf")
    for assign in itertools.product(range(jobs), repeat=len(weights)):
        loads = [0.0] * jobs
        for w, k in zip(weights, assign):
            loads[k] += w
        best = min(best, max(loads))
    return best


@pytest.mark.parametrize("weights", [[0.5, 0.35, 0.25, 0.25, 0.15] + [0.06] * 5, [1, 1, 1, 1], [3, 1, 1, 1],
                                     [0.1], [2, 2, 1, 1, 1, 1], [0.05] * 7])
@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_shares_cover_every_figure_once_and_stay_within_4_3_of_the_best(weights, jobs):
    """Longest processing time first: every figure in exactly one share, each share in the plan's order, and the
    largest load within 4/3 of the optimum (Graham's bound for LPT, against a brute-force optimum)."""
    parts = shares(weights, jobs)
    assert len(parts) == min(jobs, len(weights))
    assert sorted(i for p in parts for i in p) == list(range(len(weights)))
    assert all(p == sorted(p) for p in parts)
    worst = max(sum(weights[i] for i in p) for p in parts)
    assert worst <= 4 / 3 * _brute_makespan(weights, len(parts)) + 1e-12
    assert shares(weights, jobs) == parts  # deterministic


def test_shares_give_the_heaviest_figure_to_the_calling_process():
    assert shares([0.1, 0.9, 0.2], 2)[0] == [1]
    assert shares([], 2) == [[]] or shares([], 2) == []


# --------------------------------------------------------------------------- draw_all with fake figures
class _Fake:
    """A figure drawn without matplotlib: one file per format holding its name and the pid that drew it."""

    def __init__(self, name: str, inches=(2.0, 1.0)):
        self.name, self.inches = name, inches

    def get_size_inches(self):
        return np.array(self.inches)

    def write_files(self, base: Path, formats, dpi):
        out = []
        base.parent.mkdir(parents=True, exist_ok=True)
        for fmt in formats:
            p = base.parent / f"{base.name}.{fmt}"
            p.write_text(f"{self.name} {os.getpid()}")
            out.append(p)
        return out


def _check(fig, path, dpi):
    from isoeat.reporting.figures import _check_pixels

    _check_pixels(fig, path, dpi)


def _entries(n=6, draw=None, weights=None):
    names = [f"f{k}" for k in range(n)]
    weights = weights or [1.0] * n
    return [Entry(name, (lambda name=name: draw(name)) if draw else (lambda name=name: _Fake(name)), False, w)
            for name, w in zip(names, weights)]


def _files(folder: Path):
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


@needs_fork
def test_two_processes_write_the_same_files_in_the_plan_order(tmp_path):
    one = draw_all(_entries(), tmp_path / "one", ("png", "pdf"), 50, 1, _check, progress=False)
    two = draw_all(_entries(), tmp_path / "two", ("png", "pdf"), 50, 2, _check, progress=False)
    assert [[p.relative_to(tmp_path / "one") for p in f] for f in one] == \
        [[p.relative_to(tmp_path / "two") for p in f] for f in two]
    pids = {p.read_text().split()[1] for f in two for p in f}
    assert len(pids) == 2 and str(os.getpid()) in pids  # this process drew its share, a forked one the other


@needs_fork
def test_a_figure_built_as_none_has_no_files(tmp_path):
    got = draw_all(_entries(draw=lambda name: None if name == "f3" else _Fake(name)), tmp_path, ("png",), 50, 2,
                   _check, progress=False)
    assert got[3] is None and all(got[k] for k in (0, 1, 2, 4, 5))
    assert "f3.png" not in _files(tmp_path)


@needs_fork
@pytest.mark.parametrize("big", ["f0", "f5"])  # f0: in this process's share; f5: in the forked one's
def test_a_figure_too_large_in_any_share_writes_nothing(tmp_path, big):
    """The barrier: every share is built and checked before any process writes a file."""
    parts = shares([1.0] * 6, 2)
    assert (int(big[1]) in parts[0]) == (big == "f0")
    entries = _entries(draw=lambda name: _Fake(name, (300.0, 300.0) if name == big else (2.0, 1.0)))
    with pytest.raises(ConfigError, match=f"{big}: the figure would be"):
        draw_all(entries, tmp_path / "figs", ("png", "pdf"), 150, 2, _check, progress=False)
    assert not (tmp_path / "figs").exists() or _files(tmp_path / "figs") == []


@needs_fork
def test_an_error_building_in_the_forked_process_is_raised_here_and_nothing_written(tmp_path):
    parent = os.getpid()

    def draw(name):
        if os.getpid() != parent:
            raise ValueError(f"cannot build {name}")
        return _Fake(name)

    with pytest.raises(ValueError, match="cannot build"):
        draw_all(_entries(draw=draw), tmp_path / "figs", ("png",), 50, 2, _check, progress=False)
    assert not (tmp_path / "figs").exists() or _files(tmp_path / "figs") == []


@needs_fork
def test_warnings_of_the_forked_process_are_given_here(tmp_path):
    parent = os.getpid()

    def draw(name):
        if os.getpid() != parent:
            warnings.warn(f"odd labels in {name}", IsoeatWarning, stacklevel=1)
        return _Fake(name)

    with pytest.warns(IsoeatWarning, match="odd labels in f"):
        draw_all(_entries(draw=draw), tmp_path, ("png",), 50, 2, _check, progress=False)


@needs_fork
def test_a_process_killed_while_building_leaves_its_share_to_this_one(tmp_path):
    """Killed before the barrier (the OOM killer): its figures are built and checked here before any file is
    written, said once, and every file is there."""
    parent = os.getpid()

    def draw(name):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return _Fake(name)

    with pytest.warns(IsoeatWarning, match="ended abruptly"):
        got = draw_all(_entries(draw=draw), tmp_path, ("png",), 50, 2, _check, progress=False)
    assert _files(tmp_path) == [f"f{k}.png" for k in range(6)]
    assert all(p.read_text().split()[1] == str(parent) for f in got for p in f)


@needs_fork
def test_an_error_drawing_in_the_forked_process_is_raised_after_it_has_finished(tmp_path, monkeypatch):
    parent, save = os.getpid(), _render._save

    def failing(fig, base, formats, dpi):
        if os.getpid() != parent and base.name == "f5":
            raise OSError(28, "No space left on device")
        return save(fig, base, formats, dpi)

    monkeypatch.setattr(_render, "_save", failing)
    with pytest.raises(OSError, match="No space left"):
        draw_all(_entries(), tmp_path, ("png",), 50, 2, _check, progress=False)


@needs_fork
def test_the_progress_stage_counts_every_figure_of_every_process(tmp_path, monkeypatch):
    seen = []

    class Bar:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n, label=None):
            seen.append(label)

    monkeypatch.setattr(_render, "_stage", lambda n, progress: Bar())
    draw_all(_entries(), tmp_path, ("png",), 50, 2, _check, progress=False)
    assert sorted(seen) == [f"f{k}" for k in range(6)]


def test_the_collector_is_frozen_while_drawing_and_given_back(tmp_path):
    counts = []
    entries = [Entry("f0", lambda: counts.append(gc.get_freeze_count()) or _Fake("f0"), False, 1.0)]
    assert gc.get_freeze_count() == 0
    draw_all(entries, tmp_path, ("png",), 50, 1, _check, progress=False)
    assert counts[0] > 0 and gc.get_freeze_count() == 0
    gc.freeze()  # a caller's own freeze is left as it is
    try:
        before = gc.get_freeze_count()
        draw_all(entries, tmp_path, ("png",), 50, 1, _check, progress=False)
        assert gc.get_freeze_count() == before
    finally:
        gc.unfreeze()


# --------------------------------------------------------------------------- Figure 2's minor ticks
def _fig2(lo_exp: float, light: bool, monkeypatch, top: float = 10.0 ** -0.5, dpi: int = 60):
    """Figure 2 of one model whose explained variance falls from ``top`` to ``10**lo_exp`` in 12 components: its PNG
    bytes and the classes of its log axes' minor locators (``light``: isoeat's minor ticks; else matplotlib's own,
    the reference). Also used by tests/test_draw_shared_adv.py."""
    pytest.importorskip("matplotlib")
    from types import SimpleNamespace

    from matplotlib import rc_context

    from isoeat.reporting import figures as F
    from isoeat.reporting._render import _png, fix_layout

    if not light:  # matplotlib's own minor ticks
        monkeypatch.setattr(F, "_light_minor_ticks", lambda axes, alpha: None)
    evr = list(np.geomspace(top, 10.0 ** lo_exp, 12))
    res = SimpleNamespace(
        models=[{"label": "M", "family": "static"}],
        calibrations=[{"name": "none", "label": "raw"}, {"name": "zca", "label": "zca"}],
        anisotropy=[{"model": "M", "calibration": c, "explained_variance_ratio": evr, "dim": 50, "top_k": 12}
                    for c in ("raw", "zca")],
        experiment={})
    with rc_context({"figure.dpi": dpi, **_render._RC}):
        fig = F.figure_explained_variance(res)
        fix_layout(fig, dpi)
        png = _png(fig, dpi)
    monkeypatch.undo()
    minor = [type(ax.yaxis.get_minor_locator()).__name__ for ax in fig.axes if ax.get_yscale() == "log"]
    return png, minor


@pytest.mark.parametrize("lo_exp", [-3.7, -2.3])  # 3.2 decades (paper_glove's raw space: 3), 1.8
def test_light_minor_ticks_draw_the_pixels_matplotlib_draws(lo_exp, monkeypatch):
    """Where matplotlib labels no minor tick, its marks and gridlines drawn as two artists give the very pixels of
    matplotlib's own minor ticks."""
    import io

    from PIL import Image

    mine, kinds = _fig2(lo_exp, True, monkeypatch)
    theirs, kinds_mpl = _fig2(lo_exp, False, monkeypatch)
    assert set(kinds) == {"NullLocator"} and "NullLocator" not in kinds_mpl
    a = np.asarray(Image.open(io.BytesIO(mine)).convert("RGB"))
    b = np.asarray(Image.open(io.BytesIO(theirs)).convert("RGB"))
    assert a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("lo_exp", [-1.51, -1.0])  # views where matplotlib labels minor ticks (2x10^-2, ...)
def test_where_matplotlib_labels_minor_ticks_its_ticks_stay(lo_exp, monkeypatch):
    """The case an earlier rule (more than a decade of data) got wrong: 0.031..0.32 with the 1/dim line at 0.02
    spans one major tick, and matplotlib labels the minor ticks; the figure is matplotlib's own."""
    import io

    from PIL import Image

    mine, kinds = _fig2(lo_exp, True, monkeypatch)
    theirs, _ = _fig2(lo_exp, False, monkeypatch)
    assert "NullLocator" not in kinds
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(mine))), np.asarray(Image.open(io.BytesIO(theirs))))


# --------------------------------------------------------------------------- weights of the plan
def test_heatmap_weights_follow_their_cells_and_the_plan_keeps_its_names():
    from types import SimpleNamespace

    from isoeat.reporting import figures as F

    rows = [{"model": "M", "test": t, "calibration": c, "n_x": nx, "n_y": nx, "n_a": 4, "n_b": 4}
            for t, nx in (("T1", 25), ("T2", 8)) for c in ("raw", "zca")]
    res = SimpleNamespace(models=[{"label": "M", "family": "static"}], tests=[{"id": "T1"}, {"id": "T2"}],
                          calibrations=[{"name": "none", "label": "raw"}, {"name": "zca", "label": "zca"}],
                          weat=rows, anisotropy=[], comparisons=[], experiment={})
    assert F._heatmap_cells(res, "M", "T1") == 2 * (50 * 8)  # (X + Y) x (A + B) in each of two spaces
    weighed = F._weighed_plan(res, "all", ("png",))
    assert [n for n, _ in F.figure_plan(res, test_heatmaps="all", formats=("png",))] == [n for n, _, _ in weighed]
    w = dict((n, wt) for n, _, wt in weighed)
    assert w["tests/M-T1"] > w["tests/M-T2"] > 0
    assert w["tests/M-T1"] == pytest.approx(F._HEATMAP_WEIGHT + F._CELL_WEIGHT * 800)


def test_aid_plan_builds_nothing_until_drawn(monkeypatch):
    from types import SimpleNamespace

    from isoeat.reporting import mechanism_figure as MF

    calls = []
    monkeypatch.setattr(MF, "figure_mechanism", lambda res, m, c: calls.append(("mechanism", m, c)) or "fig")
    monkeypatch.setattr(MF, "figure_severity", lambda res, c: calls.append(("severity", c)) or None)
    res = SimpleNamespace(models=[{"label": "M"}], calibrations=[{"name": "none", "label": "raw"},
                                                                 {"name": "zca", "label": "zca"}])
    plan = MF.aid_plan(res)
    assert calls == [] and [s for s, _ in plan] == ["mechanism-M-zca", "severity-zca"]
    assert [d() for _, d in plan] == ["fig", None] and calls == [("mechanism", "M", "zca"), ("severity", "zca")]
    assert MF.aid_figures(res) == [("mechanism-M-zca", "fig")]  # the built ones only


# --------------------------------------------------------------------------- the command's exit
@pytest.mark.parametrize(("status", "freezes"), [(0, True), (1, False), (2, False), (130, False)])
def test_console_exits_with_mains_status_freezing_only_after_success(monkeypatch, status, freezes):
    """A failed command may have run out of memory: its teardown must free what it can (frozen, the objects in
    cycles stayed, and under ``prlimit --as`` the teardown printed screens of MemoryError after the one line)."""
    from isoeat import cli

    frozen = []
    monkeypatch.setattr(cli, "main", lambda argv=None: status)
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    with pytest.raises(SystemExit) as ex:
        cli.console()
    assert ex.value.code == status and frozen == ([True] if freezes else [])


def test_the_command_prints_everything_and_exits_with_its_status():
    import subprocess

    ok = subprocess.run([sys.executable, "-m", "isoeat.cli", "--version"], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.startswith("isoeat ")
    bad = subprocess.run([sys.executable, "-m", "isoeat.cli", "weat", "--test", "W99"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "W99" in bad.stderr


# --------------------------------------------------------------------------- labels drawn as written
def test_every_public_figure_draws_a_name_with_dollar_signs_as_written():
    """``figure_test_heatmap`` called on its own (not through ``write_figures``, whose layout step made the texts
    literal) parsed a name with two ``$`` as mathtext: an unknown command was a ValueError, a valid one was drawn as
    a formula. Every public figure function now returns its labels as written."""
    pytest.importorskip("matplotlib")
    from isoeat.reporting.figures import figure_test_heatmap
    from test_heatmap_direct_adv import _results

    name = "a $x^{2}$ b $\\\\foo$"
    res = _results(names={"X": name})
    fig = figure_test_heatmap(res, "M", "T")
    fig.canvas.draw()  # was: ValueError (Unknown symbol: \\foo)
    dollar = [t for t in fig.findobj(lambda a: hasattr(a, "get_parse_math")) if "$" in t.get_text()]
    assert dollar and not any(t.get_parse_math() for t in dollar)
