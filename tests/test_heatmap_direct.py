"""The per-test heatmaps drawn directly (reporting/_heatmap_draw.py): the plan matplotlib draws, at its places.

Expected values come from outside the renderer: the cell colours from matplotlib's own ``RdBu_r`` map on the
test's scale (the largest finite |cosine|, computed here), the colour bar's ticks from a matplotlib colour bar of
the same length, the PDF read back by pypdf (a PDF parser isoeat does not use), the PNG by Pillow.
"""

from __future__ import annotations

import io
import math
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("PIL")

X = ["math", "algebra", "geometry", "calculus", "equations"]
Y = ["poetry", "art", "dance"]
A = ["male", "man", "boy", "he"]
B = ["female", "woman", "girl"]


def _results(words=(X, Y, A, B), nan: bool = False, spaces: int = 2) -> SimpleNamespace:
    xw, yw, aw, bw = words
    rng = np.random.default_rng(7)
    cos = {}
    for s in range(spaces):
        x_ab = rng.uniform(-0.5, 0.7, size=(len(xw), len(aw) + len(bw)))
        if nan and s == 0:
            x_ab[1, 2] = np.nan  # an undefined cosine
        cos[s] = {"X_words": list(xw), "Y_words": list(yw), "A_words": list(aw), "B_words": list(bw),
                  "X_name": "Math", "Y_name": "Arts", "A_name": "Male", "B_name": "Female",
                  "X_AB": x_ab.tolist(), "Y_AB": rng.uniform(-0.3, 0.4, size=(len(yw), len(aw) + len(bw))).tolist()}
    cals = [{"name": "none", "label": "none"}, {"name": "zca", "label": "zca"}][:spaces]
    return SimpleNamespace(calibrations=cals, tests=[{"id": "T", "bias_type": "Gender"}],
                           cosines=lambda model, cal, test: cos[[c["label"] for c in cals].index(cal)])


def _expected_rgb(value: float, vmax: float) -> np.ndarray:
    """matplotlib's RdBu_r colour of ``value`` on [-vmax, vmax] (an undefined value: grey 0.6, i.e. 153, the map's
    "bad" colour for the heatmaps: white was a cosine of 0 to the eye)."""
    from matplotlib import colormaps

    if not math.isfinite(value):
        return np.array([153, 153, 153])
    return np.asarray(colormaps["RdBu_r"]((value + vmax) / (2 * vmax), bytes=True)[:3], dtype=int)


def _plan(res):
    from isoeat.reporting.heatmap_plan import heatmap_plan

    return heatmap_plan(res, "M", "T")


def test_matplotlib_draws_the_same_plan():
    """One layout: the matplotlib figure's panels and colour bars sit exactly at the plan's boxes."""
    from isoeat.reporting.figures import figure_test_heatmap

    res = _results()
    plan, fig = _plan(res), figure_test_heatmap(res, "M", "T")
    w, h = fig.get_size_inches()
    assert (w, h) == pytest.approx((plan.width, plan.height))
    boxes = sorted(tuple(np.round(ax.get_position().bounds, 9)) for ax in fig.axes)
    want = []
    for x, y, bw, bh in [p.box for p in plan.panels] + [b.box for b in plan.bars]:
        want.append(tuple(np.round((x / w, 1 - (y + bh) / h, bw / w, bh / h), 9)))
    assert boxes == sorted(want)


def test_png_cells_have_matplotlibs_colours_and_words_sit_on_their_rows():
    from PIL import Image

    from isoeat.reporting._heatmap_draw import png_heatmap

    res, dpi = _results(nan=True), 100
    plan = _plan(res)
    img = Image.open(io.BytesIO(png_heatmap(plan, dpi)))
    assert img.mode == "RGB" and img.size == (int(plan.width * dpi), int(plan.height * dpi))
    assert img.info["dpi"] == pytest.approx((dpi, dpi), abs=0.01)
    px = np.asarray(img, dtype=int)
    for s in range(2):
        cos = res.cosines("M", res.calibrations[s]["label"], "T")
        mats = [np.asarray(cos["X_AB"]), np.asarray(cos["Y_AB"])]
        vmax = max(np.nanmax(np.abs(m)) for m in mats)  # the space's symmetric scale: finite cosines only
        for panel, m in zip(plan.panels[2 * s: 2 * s + 2], mats):
            x, y, w, h = panel.box
            for (r, c), v in np.ndenumerate(m):
                cx = int((x + w * (c + 0.5) / m.shape[1]) * dpi)
                cy = int((y + h * (r + 0.5) / m.shape[0]) * dpi)
                if c in (len(A) - 1, len(A)):
                    cx += (-1 if c == len(A) - 1 else 1) * int(w / m.shape[1] * dpi / 4)  # off the white line
                got = px[cy, cx]
                assert np.abs(got - _expected_rgb(v, vmax)).max() <= 1, (s, r, c, v, got)
            # the white line between A and B, down the panel
            split_x = int(round((x + w * len(A) / m.shape[1]) * dpi))
            assert (px[int((y + h / 2) * dpi), split_x] == 255).all()
            # each row's word: dark pixels in the label margin left of the panel, at the row's height
            for r in range(m.shape[0]):
                cy = int((y + h * (r + 0.5) / m.shape[0]) * dpi)
                strip = px[cy - 2: cy + 3, int((x - 0.45) * dpi): int((x - 0.02) * dpi)]
                assert strip.min() < 128, (s, r)


def test_pdf_reads_back_with_every_word_on_its_row():
    pypdf = pytest.importorskip("pypdf")
    from isoeat.reporting._heatmap_draw import pdf_heatmap

    res = _results()
    plan = _plan(res)
    reader = pypdf.PdfReader(io.BytesIO(pdf_heatmap(plan)))
    (page,) = reader.pages
    assert float(page.mediabox.width) == pytest.approx(plan.width * 72, abs=1e-3)
    assert float(page.mediabox.height) == pytest.approx(plan.height * 72, abs=1e-3)
    found: list[tuple[str, float, float, tuple]] = []

    def visit(text, cm, tm, font, size):
        if text.strip():
            found.append((text, tm[4], tm[5], tuple(tm[:4])))

    page.extract_text(visitor_text=visit)
    texts = [t for t, *_ in found]
    for word in X + Y + A + B + [p.title for p in plan.panels] + [plan.footer, "cosine (raw)"]:
        assert word in texts, word
    # row words: baseline within their row's band (PDF y grows upwards), right of nothing inside the panel
    for panel in plan.panels:
        x, y, w, h = panel.box
        top = (plan.height - y) * 72
        for r, word in enumerate(panel.rows):
            lo, hi = top - h * 72 * (r + 1) / len(panel.rows), top - h * 72 * r / len(panel.rows)
            assert any(t == word and lo <= ty <= hi and tx < x * 72 for t, tx, ty, _ in found), (word, lo, hi)
    # column words (last row of panels) are rotated a quarter turn, reading upwards, below the panel
    last = plan.panels[-1]
    bottom = (plan.height - last.box[1] - last.box[3]) * 72
    for word in B:
        turns = [m for t, _tx, ty, m in found if t == word and ty < bottom]
        assert turns and turns[0] == pytest.approx((0, 1, -1, 0)), word
    images = [obj for obj in page["/Resources"]["/XObject"].values()]
    assert len(images) == 2 * 2 + 2  # two panels and one colour bar per space


def test_pdf_cell_image_is_the_cells_in_blocks():
    pypdf = pytest.importorskip("pypdf")
    from isoeat.reporting._heatmap_draw import pdf_heatmap

    res = _results(spaces=1)
    plan = _plan(res)
    page = pypdf.PdfReader(io.BytesIO(pdf_heatmap(plan))).pages[0]
    cos = res.cosines("M", "none", "T")
    m = np.asarray(cos["X_AB"])
    vmax = max(np.nanmax(np.abs(np.asarray(cos[k]))) for k in ("X_AB", "Y_AB"))
    ims = sorted((obj.get_object() for obj in page["/Resources"]["/XObject"].values()), key=lambda o: -o["/Width"])
    im = next(o for o in ims if (o["/Height"], o["/Width"]) == (o["/Height"], o["/Height"] * m.shape[1]
                                                                   // m.shape[0]))
    data = np.frombuffer(im.get_data(), np.uint8).reshape(im["/Height"], im["/Width"], 3).astype(int)
    k = im["/Height"] // m.shape[0]
    assert k >= 2 and data.shape[:2] == (k * m.shape[0], k * m.shape[1])
    for (r, c), v in np.ndenumerate(m):
        block = data[r * k:(r + 1) * k, c * k:(c + 1) * k]
        assert (block == block[0, 0]).all() and np.abs(block[0, 0] - _expected_rgb(v, vmax)).max() <= 1


@pytest.mark.parametrize("vmax", [0.05, 0.37, 0.6, 0.999, 1.0, 2.5])
@pytest.mark.parametrize("length_in", [1.0, 1.3, 1.6, 3.0])
def test_colour_bar_ticks_are_matplotlibs(vmax, length_in):
    """The ticks of a matplotlib colour bar of the same scale and length, and its labels (minus as '-')."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure

    from isoeat.reporting.heatmap_plan import bar_ticks, tick_text

    fig = Figure(figsize=(2, length_in + 1), dpi=100)
    FigureCanvasAgg(fig)
    cax = fig.add_axes([0.4, 0.5 / (length_in + 1), 0.14 / 2, length_in / (length_in + 1)])
    cb = fig.colorbar(ScalarMappable(Normalize(-vmax, vmax), "RdBu_r"), cax=cax)
    cb.ax.tick_params(labelsize=7)
    fig.canvas.draw()
    want = [t for t in cb.get_ticks() if -vmax - 1e-12 <= t <= vmax + 1e-12]
    got = bar_ticks(vmax, length_in)
    assert got == pytest.approx(want, abs=1e-12)
    labels = [t.get_text().replace("\u2212", "-") for t in cb.ax.get_yticklabels()
              if -vmax - 1e-12 <= t.get_position()[1] <= vmax + 1e-12]
    assert tick_text(got) == labels


@pytest.mark.parametrize(("mats", "want"), [
    ([np.array([[0.2, -0.7]]), np.array([[0.5]])], 0.7),
    ([np.array([[np.nan, -0.3]]), np.array([[0.1]])], 0.3),  # an undefined cosine does not set the scale
    ([np.array([[np.nan]]), np.array([[np.nan]])], 1.0),  # nothing finite: 1
    ([np.zeros((2, 2)), np.zeros((1, 2))], 1.0),  # all zero: 1, never a 0 scale
])
def test_colour_scale(mats, want):
    from isoeat.reporting.heatmap_plan import colour_scale

    assert colour_scale(mats) == want


def test_direct_only_for_ascii_png_and_pdf():
    from isoeat.reporting._heatmap_draw import DirectHeatmap, direct_heatmap

    plan = _plan(_results())
    assert isinstance(direct_heatmap(plan, ("png", "pdf")), DirectHeatmap)
    assert isinstance(direct_heatmap(plan, ("pdf",)), DirectHeatmap)
    assert direct_heatmap(plan, ("png", "svg")) is None  # SVG: matplotlib
    assert direct_heatmap(None, ("png",)) is None
    for word in ("café", "女性", "tab\tword", "~ok"):  # '~' (0x7e) is the last printable ASCII: direct
        p = _plan(_results(words=(X, Y, A, [*B[:-1], word])))
        assert (direct_heatmap(p, ("png",)) is not None) == (word == "~ok"), word


def test_write_figures_draws_ascii_directly_and_others_with_matplotlib(tmp_path):
    pypdf = pytest.importorskip("pypdf")
    from isoeat.reporting.figures import write_figures

    for name, words in (("ascii", (X, Y, A, B)), ("accent", (X, Y, A, [*B[:-1], "fiancée"]))):
        res = _results(words=words)
        res.models, res.experiment, res.anisotropy, res.comparisons = [{"label": "M", "family": "static"}], {}, [], []
        res.heatmap = lambda model, cal: None
        files = write_figures(res, tmp_path / name, formats=("png", "pdf"), dpi=60, test_heatmaps="all", jobs=1)
        pdf = next(p for p in files if p.suffix == ".pdf" and p.parent.name == "tests")
        producer = str(pypdf.PdfReader(pdf).metadata.get("/Producer", ""))
        assert ("isoeat" in producer) == (name == "ascii"), producer
        assert "fiancée" in pypdf.PdfReader(pdf).pages[0].extract_text() or name == "ascii"


def test_direct_files_are_the_same_bytes_every_time(tmp_path):
    from isoeat.reporting._heatmap_draw import pdf_heatmap, png_heatmap

    plan = _plan(_results())
    assert png_heatmap(plan, 80) == png_heatmap(plan, 80)
    assert pdf_heatmap(plan) == pdf_heatmap(plan)


@pytest.mark.parametrize(("cpus", "load", "want"), [
    (2, 0.0, 2), (2, 0.5, 2), (2, 0.51, 1), (2, 1.49, 1), (2, 6.0, 1), (8, 0.0, 8), (8, 3.4, 5), (1, 0.0, 1),
])
def test_report_processes_follow_idle_cores(cpus, load, want, monkeypatch):
    """Two drawing processes only where the last minute left a core idle: cpus - load, rounded (0.5 rounds up)."""
    import sys

    from isoeat.reporting import _render

    monkeypatch.setattr(sys, "platform", "linux")
    assert _render.idle_cores(cpus, load) == want


def test_report_processes_one_off_linux(monkeypatch):
    import sys

    from isoeat.reporting import _render

    monkeypatch.setattr(sys, "platform", "darwin")
    assert _render.idle_cores(8, 0.0) == 1


@pytest.mark.parametrize(("text", "want"), [
    ("max 100000\n", None), ("150000 100000\n", 1.5), ("100000 100000", 1.0), ("50000 100000", 0.5),
    ("", None), ("garbage", None), ("a b", None), ("0 100000", None), ("100000 0", None),
])
def test_cpu_quota_reads_cgroup_v2(tmp_path, text, want):
    """cpu.max as the kernel writes it: "QUOTA PERIOD" in microseconds, or "max PERIOD" (no limit)."""
    from isoeat.reporting._render import cpu_quota

    f = tmp_path / "cpu.max"
    f.write_text(text)
    assert cpu_quota(str(f)) == want
    assert cpu_quota(str(tmp_path / "absent")) is None


def test_idle_cores_never_exceed_the_container_quota(monkeypatch):
    import os
    import sys

    from isoeat.reporting import _render

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(_render, "cpu_quota", lambda: 1.5)  # a container limited to 1.5 CPUs on a big host
    assert _render.idle_cores(None, 0.0) == 1
    monkeypatch.setattr(_render, "cpu_quota", lambda: None)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)
    assert _render.idle_cores(None, 0.0) == 4


def test_cpu_ticks_reads_proc_stat(tmp_path):
    """/proc/stat's first line: user nice system idle iowait irq softirq steal (guest ...): busy = all but idle and
    iowait (proc(5))."""
    from isoeat.reporting._render import cpu_ticks

    f = tmp_path / "stat"
    f.write_text("cpu  100 5 50 1000 20 3 2 1 0 0\ncpu0 50 2 25 500 10 1 1 0 0 0\n")
    assert cpu_ticks(str(f)) == (100 + 5 + 50 + 3 + 2 + 1, 100 + 5 + 50 + 1000 + 20 + 3 + 2 + 1)
    f.write_text("intr 1 2 3\n")
    assert cpu_ticks(str(f)) is None
    assert cpu_ticks(str(tmp_path / "absent")) is None


@pytest.mark.parametrize(("busy_ticks", "own_s", "dt", "want"), [
    (150, 0.5, 1.0, 1.0),    # 1.5 CPU-seconds by everyone, 0.5 by this process: one other core busy
    (50, 0.5, 1.0, 0.0),     # only this process
    (40, 0.5, 1.0, 0.0),     # tick rounding below this process's own time: never negative
    (100, 0.4, 0.2, 3.0),    # exactly the shortest interval measured
    (100, 0.4, 0.19, None),  # shorter: too few ticks, the load average decides
])
def test_cpu_probe_counts_the_cores_others_keep_busy(busy_ticks, own_s, dt, want):
    from isoeat.reporting._render import CpuProbe

    ticks = iter([(0, 0), (busy_ticks, 1000)])
    clock = iter([0.0, dt])
    own = iter([2.0, 2.0 + own_s])
    probe = CpuProbe(ticks=lambda: next(ticks), clock=lambda: next(clock), own=lambda: next(own))
    got = probe.others_busy(hz=100.0)
    assert got == (None if want is None else pytest.approx(want))
