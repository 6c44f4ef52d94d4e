"""Adversarial inputs for the report's per-test heatmaps (reporting/heatmap_plan.py, reporting/_heatmap_draw.py).

Each test is an input that once drew a wrong or misleading figure. Expected values come from outside the
renderer: colour-bar tick labels from a matplotlib colour bar of the same scale and length; text extents from the
fonts' own metrics read by matplotlib (Helvetica's AFM through ``matplotlib._afm``, DejaVu Sans through
``FT2Font``), never from isoeat's width tables; the matplotlib figure's texts from its Agg renderer.
"""

from __future__ import annotations

import io
import re
import warnings
import zlib
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("PIL")

X = ["math", "algebra", "geometry", "calculus", "equations"]
Y = ["poetry", "art", "dance"]
A = ["male", "man", "boy", "he"]
B = ["female", "woman", "girl"]
NAMES = {"X": "Math", "Y": "Arts", "A": "Male", "B": "Female"}
SPACES = [{"name": "none", "label": "none"}, {"name": "zca", "label": "zca"}]


def _results(words=(X, Y, A, B), *, scale: float | None = None, names=None, cals=None, test: str = "T"):
    """Two spaces of random cosines (``scale``: every cosine times it, the largest |cosine| exactly ``scale``)."""
    xw, yw, aw, bw = words
    names = {**NAMES, **(names or {})}
    cals = cals or SPACES
    rng = np.random.default_rng(3)
    cos = []
    for _ in cals:
        mats = [rng.uniform(-0.9, 0.9, size=(len(w), len(aw) + len(bw))) for w in (xw, yw)]
        if scale is not None:
            top = max(np.abs(m).max() for m in mats)
            mats = [m / top for m in mats]
            mats[0][0, 0] = 1.0
            mats = [m * scale for m in mats]
        cos.append({"X_words": list(xw), "Y_words": list(yw), "A_words": list(aw), "B_words": list(bw),
                    **{f"{k}_name": v for k, v in names.items()},
                    "X_AB": mats[0].tolist(), "Y_AB": mats[1].tolist()})
    labels = [c["label"] for c in cals]
    return SimpleNamespace(calibrations=cals, tests=[{"id": test, "bias_type": "Gender"}],
                           cosines=lambda model, cal, t: cos[labels.index(cal)])


def _plan(res, model="M", test="T"):
    from isoeat.reporting.heatmap_plan import heatmap_plan

    return heatmap_plan(res, model, test)


# --------------------------------------------------------------------------- colour-bar ticks
def _matplotlib_bar_labels(vmax: float, length_in: float) -> tuple[list[str], str]:
    """A matplotlib colour bar of scale [-vmax, vmax], ``length_in`` long at 7 pt: its tick labels (minus as '-')
    and its offset text (the "1e-12" written above the bar when the ticks are scaled)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, length_in + 1), dpi=100)
    FigureCanvasAgg(fig)
    cax = fig.add_axes([0.4, 0.5 / (length_in + 1), 0.07, length_in / (length_in + 1)])
    cb = fig.colorbar(ScalarMappable(Normalize(-vmax, vmax), "RdBu_r"), cax=cax)
    cb.ax.tick_params(labelsize=7)
    fig.canvas.draw()
    labels = [t.get_text().replace("\u2212", "-") for t in cb.ax.get_yticklabels()
              if abs(t.get_position()[1]) <= vmax * (1 + 1e-9)]
    return labels, cb.ax.yaxis.get_offset_text().get_text()


# (scale, drawn directly): matplotlib writes a colour bar's ticks scaled, with an offset text "1eN" above the
# bar, when the largest tick's order of magnitude is <= -5 or >= 6 (ScalarFormatter's power limits): the direct
# renderer, which writes plain numbers, must leave those to matplotlib. Boundaries: the largest tick 1e-4 (plain)
# and 9.5e-5 (scaled); 5e5 (plain) and 1e6 (scaled).
@pytest.mark.parametrize(("scale", "direct"), [
    (1e-12, False), (3e-8, False), (9.99e-5, False), (1e-4, True), (0.6, True), (999_999.0, True),
    (1e6, False), (5e-324, False),
])
def test_colour_bar_ticks_never_lie(scale, direct):
    from isoeat.reporting._heatmap_draw import direct_heatmap
    from isoeat.reporting.heatmap_plan import bar_ticks, tick_text

    plan = _plan(_results(scale=scale))
    assert [b.vmax for b in plan.bars] == [scale, scale]
    drawn = direct_heatmap(plan, ("png", "pdf"))
    assert (drawn is not None) == direct, scale
    if drawn is not None:
        for bar in plan.bars:
            labels, offset = _matplotlib_bar_labels(bar.vmax, bar.box[3])
            assert offset == "" and tick_text(bar_ticks(bar.vmax, bar.box[3])) == labels


@pytest.mark.parametrize("scale", [1e-12, 5e-324])
def test_tiny_scales_write_valid_figures(tmp_path, scale):
    """A space whose cosines are all tiny: the report writes readable files (matplotlib's scaled ticks)."""
    from PIL import Image

    files = _write(tmp_path, _results(scale=scale))
    for p in files:
        if p.suffix == ".png":
            Image.open(p).verify()
    assert {p.suffix for p in files} == {".png", ".pdf"}


def _write(folder: Path, res, formats=("png", "pdf"), **kw):
    from isoeat.reporting.figures import write_figures

    res.models, res.experiment, res.anisotropy, res.comparisons = [{"label": "M", "family": "static"}], {}, [], []
    res.heatmap = lambda model, cal: None
    return [p for p in write_figures(res, folder, formats=formats, dpi=kw.pop("dpi", 60), test_heatmaps="all",
                                     jobs=kw.pop("jobs", 1), progress=False, **kw) if p.parent.name == "tests"]


# --------------------------------------------------------------------------- every text on the page, clear of the rest
@cache
def _font_widths() -> tuple[object, object]:
    """Helvetica's AFM (matplotlib's parser) and DejaVu Sans (FreeType at 72 px per em): the fonts' own metrics."""
    from pathlib import Path

    import matplotlib
    from matplotlib._afm import AFM
    from matplotlib.ft2font import FT2Font

    root = Path(matplotlib.get_data_path()) / "fonts"
    with open(root / "pdfcorefonts" / "Helvetica.afm", "rb") as fh:
        afm = AFM(fh)
    ft = FT2Font(str(root / "ttf" / "DejaVuSans.ttf"))
    ft.set_size(72, 72)
    return afm, ft


def _widths(s: str, size: float) -> tuple[float, float]:
    """Width of ``s`` at ``size`` points in Helvetica (the direct PDF) and in DejaVu Sans (the PNG, matplotlib)."""
    afm, ft = _font_widths()
    names = {"'": "quotesingle", "`": "grave"}  # WinAnsiEncoding's glyphs where the AFM's StandardEncoding differs
    helv = sum(afm.get_width_from_char_name(names[c]) if c in names else afm.get_width_char(ord(c)) for c in s)
    helv *= size / 1000
    dejavu = sum(ft.load_char(ord(c)).linearHoriAdvance / 65536 / 72 for c in s) * size
    return helv, dejavu


def _pdf_boxes(data: bytes) -> tuple[list, list, float, float]:
    """The direct PDF's texts (text, x0, y0, x1, y1 in points, as wide as the wider font would draw it, grown
    from the end it is anchored at) and its images (x0, y0, x1, y1); the page's size."""
    media = re.search(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", data)
    i = data.index(b"stream\n", data.index(b"5 0 obj")) + 7
    ops = zlib.decompress(data[i:data.index(b"\nendstream", i)]).decode("ascii")
    images = []
    for m in re.finditer(r"q ([-\d.]+) 0 0 ([-\d.]+) ([-\d.]+) ([-\d.]+) cm /Im", ops):
        w, h, x, y = map(float, m.groups())
        images.append((x, y, x + w, y + h))
    texts = []
    for m in re.finditer(r"BT /F1 ([\d.]+) Tf ([-\d. ]+) Tm \(((?:\\.|[^\\)])*)\) Tj ET", ops):
        size, (a, _b, _c, _d, e, f) = float(m.group(1)), map(float, m.group(2).split())
        s = re.sub(r"\\(.)", r"\1", m.group(3))
        helv, dejavu = _widths(s, size)
        more = max(0.0, dejavu - helv)
        asc, desc = 0.718 * size, 0.207 * size  # Helvetica's ascender and descender
        # anchored at its end (a word label 2.5 pt before its panel): it grows away from the panel; at its start (the
        # footer, under the first panel's left edge): rightwards; else both ways
        if a == 1:
            end = any(abs(e + helv - (r[0] - 2.5)) < 0.01 for r in images)
            start = any(abs(e - r[0]) < 0.01 for r in images)
            lo, hi = (more, 0.0) if end else (0.0, more) if start else (more / 2, more / 2)
            texts.append((s, e - lo, f - desc, e + helv + hi, f + asc))
        else:  # a quarter turn, reading upwards: x across, y along
            end = any(abs(f + helv - (r[1] - 2.5)) < 0.01 for r in images)
            lo, hi = (more, 0.0) if end else (more / 2, more / 2)
            texts.append((s, e - asc, f - lo, e + desc, f + helv + hi))
    return texts, images, float(media.group(1)), float(media.group(2))


def _clashes(texts, images, width, height, tol: float = 0.5) -> list[tuple]:
    def meet(a, b):
        return a[0] < b[2] - tol and a[2] > b[0] + tol and a[1] < b[3] - tol and a[3] > b[1] + tol

    out = []
    for s, *box in texts:
        if box[0] < -tol or box[1] < -tol or box[2] > width + tol or box[3] > height + tol:
            out.append(("off the page", s))
        out += [("on the cells", s) for im in images if meet(box, im)]
    for i, (s, *a) in enumerate(texts):
        out += [("on another text", s, t) for t, *b in texts[i + 1:] if meet(a, b)]
    return out


def _matplotlib_clashes(res, model: str, test: str) -> list[tuple]:
    """The same check on the matplotlib figure of the same plan (its Agg renderer's text extents, in pixels, at the
    report's default 150 dpi and settings)."""
    from matplotlib import rc_context
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from isoeat.reporting._render import _RC, literal_text
    from isoeat.reporting.figures import figure_test_heatmap

    with rc_context({"figure.dpi": 150, **_RC}):  # as the report draws it: texts as written, never mathtext
        fig = literal_text(figure_test_heatmap(res, model, test))
        FigureCanvasAgg(fig).draw()
        renderer = fig.canvas.get_renderer()
    hidden = set()  # tick labels outside their axis's range: built, never drawn
    for ax in fig.axes:
        lo, hi = sorted(ax.get_ylim())
        hidden |= {id(t) for t in ax.get_yticklabels() if not lo - 1e-9 <= t.get_position()[1] <= hi + 1e-9}
    texts = [(t.get_text(), *t.get_window_extent(renderer).extents) for t in fig.findobj(
        lambda o: hasattr(o, "get_text") and hasattr(o, "get_window_extent") and o.get_visible() and o.get_text())
        if id(t) not in hidden]
    images = [tuple(ax.get_window_extent(renderer).extents) for ax in fig.axes]
    return _clashes(texts, images, fig.bbox.width, fig.bbox.height, tol=1.0)


LONG = "career family words of the original study, extended"
ADVERSE = {
    "long lowercase words": dict(words=(["m" * 60, *X], ["w" * 60, *Y], A, B)),
    "capital words": dict(words=(["MOHAMMEDWWWWWWWWWWWW", *X], ["WASHINGTONIANWWWWWWW", *Y], A, B)),
    "long attribute words": dict(words=(X, Y, ["W" * 24, *A], ["m" * 62, *B])),
    "long set names": dict(names={"A": "male names of the original study " * 2, "B": "female names " * 4}),
    "long target names": dict(names={"X": LONG, "Y": LONG + " too"}),
    "long calibration labels": dict(cals=[{"name": "zca", "label": "zca-shrinkage-0.5-eps-1e-5-reference-100000"},
                                          {"name": "zca", "label": "zca-shrinkage-0.5-eps-1e-5-reference-100001"}]),
    "capital test id": dict(test="W" * 90),
    "words in a script DejaVu Sans lacks": dict(words=(["女性" * 12, *X], Y, ["男性" * 10, *A], B)),
    "five-line title": dict(test="career family names from the original study extended v2 " * 5),
}


@pytest.mark.parametrize("case", list(ADVERSE))
def test_every_text_on_the_page_and_clear_of_cells_and_texts(case):
    """Long words, long names and labels in wide letters: every word, title, label and footer lies on the page,
    off the cells and off every other text, in the direct PDF (either font's widths) and in matplotlib's figure."""
    from isoeat.reporting._heatmap_draw import direct_heatmap, pdf_heatmap, png_heatmap

    kw = dict(ADVERSE[case])
    test = kw.get("test", "T")
    res = _results(**kw)
    plan = _plan(res, test=test)
    if case == "words in a script DejaVu Sans lacks":  # matplotlib's: a fallback font, or a box where none has them
        assert direct_heatmap(plan, ("png", "pdf")) is None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # no installed font has them: said once by the report (_glyphs.py)
            assert _matplotlib_clashes(res, "M", test) == []
        return
    assert direct_heatmap(plan, ("png", "pdf")) is not None
    assert _clashes(*_pdf_boxes(pdf_heatmap(plan))) == []
    assert _matplotlib_clashes(res, "M", test) == []
    from PIL import Image

    img = Image.open(io.BytesIO(png_heatmap(plan, 50)))
    assert img.size == (int(plan.width * 50), int(plan.height * 50))


def test_ordinary_layout_unchanged():
    """Words the 0.62 em per character estimate fits keep the layout they had (the figures of the docs)."""
    plan = _plan(_results())
    ch = 7 * 0.62 / 72  # inches per character of a 7 pt label (the plan's estimate)
    lab_x, lab_y, lab_attr = 9 * ch + 0.2, 6 * ch + 0.2, 6 * ch + 0.15  # "equations", "poetry", "female"
    left, gap = lab_x + 0.1, lab_y + 0.35
    width = left + 2.6 + gap + 2.6 + 0.25 + 0.14 + 0.85  # panels 2.6 in wide (7 columns of 0.2 in are narrower)
    height = 0.5 + 2 * (0.32 + 1.3 + 0.12) + lab_attr + 0.05 + 0.35  # two rows of panels 1.3 in tall
    assert (plan.width, plan.height) == pytest.approx((width, height), abs=1e-12)
    assert plan.panels[0].box == pytest.approx((left, 0.82, 2.6, 1.3))


# --------------------------------------------------------------------------- formats
def test_a_format_named_twice_is_written_once(tmp_path):
    """``--formats pdf,png,pdf``: each file once in the list of files written (the report counted 43 files for a
    folder of 28), each a valid file."""
    pypdf = pytest.importorskip("pypdf")
    from PIL import Image

    files = _write(tmp_path, _results(), formats=("pdf", "png", "pdf"))
    assert [p.suffix for p in files] == [".pdf", ".png"]
    pypdf.PdfReader(files[0], strict=True)
    Image.open(files[1]).verify()


# --------------------------------------------------------------------------- forked drawing
def test_a_drawing_process_killed_leaves_no_traceback_and_no_figure_missing(tmp_path, monkeypatch):
    """A forked drawing process killed by the system (the OOM killer's SIGKILL): the figures it left are drawn
    in this process, said once; it was a BrokenProcessPool traceback."""
    import os
    import signal

    from PIL import Image

    from isoeat import IsoeatWarning
    from isoeat.reporting import _render

    parent, draw = os.getpid(), _render._save

    def killed_in_a_worker(fig, base, formats, dpi):
        if os.getpid() != parent and base.name == "M-T2":
            os.kill(os.getpid(), signal.SIGKILL)
        return draw(fig, base, formats, dpi)

    monkeypatch.setattr(_render, "_save", killed_in_a_worker)
    res = _results()
    res.tests = [{"id": f"T{k}", "bias_type": "Gender"} for k in range(1, 7)]
    with pytest.warns(IsoeatWarning, match="ended abruptly"):
        files = _write(tmp_path, res, jobs=2)
    assert sorted(p.name for p in files) == sorted(f"M-T{k}.{f}" for k in range(1, 7) for f in ("png", "pdf"))
    for p in files:
        assert p.is_file()
        if p.suffix == ".png":
            Image.open(p).verify()


# --------------------------------------------------------------------------- Pillow
@pytest.mark.parametrize("lacks", ["Transpose", "Resampling", "freetype2"])
def test_an_old_or_freetype_less_pillow_leaves_the_heatmap_to_matplotlib(tmp_path, monkeypatch, lacks):
    """isoeat asks only matplotlib >= 3.7, which takes Pillow >= 6.2: Pillow before 9.1 has no ``Image.Transpose``
    or ``Image.Resampling`` and a Pillow built without FreeType no ``truetype``; the direct renderer died there
    (AttributeError, ImportError). Such a Pillow: matplotlib draws the heatmap, and the files are valid."""
    pypdf = pytest.importorskip("pypdf")
    from PIL import Image, features

    from isoeat.reporting._heatmap_draw import direct_heatmap

    if lacks == "freetype2":
        real = features.check_module
        monkeypatch.setattr(features, "check_module", lambda name: False if name == "freetype2" else real(name))
    else:
        monkeypatch.delattr(Image, lacks)
    assert direct_heatmap(_plan(_results()), ("png", "pdf")) is None
    png, pdf = _write(tmp_path, _results())
    Image.open(png).verify()
    assert "isoeat" not in str(pypdf.PdfReader(pdf, strict=True).metadata.get("/Producer", ""))  # matplotlib's PDF


# --------------------------------------------------------------------------- undefined cosines
def _map_distance(rgb) -> int:
    """The smallest largest-channel difference between ``rgb`` and any of RdBu_r's 256 colours (matplotlib's)."""
    from matplotlib import colormaps

    cols = colormaps["RdBu_r"](np.linspace(0, 1, 256), bytes=True)[:, :3].astype(int)
    return int(np.abs(cols - np.asarray(rgb, dtype=int)).max(axis=1).min())


@pytest.mark.parametrize("all_nan", [False, True])
def test_an_undefined_cosine_never_looks_like_a_cosine_of_zero(all_nan):
    """An undefined cosine (a zero vector) was drawn white: 8 levels from RdBu_r's centre (247, 247, 247), the colour
    of a cosine of 0, so a reader saw "no association" where there is no number. Its cell must be far from every
    colour of the map in the direct PNG, the direct PDF and matplotlib's PNG, and the footer must say what it
    means (only where a cell is undefined)."""
    from PIL import Image

    from isoeat.reporting._heatmap_draw import pdf_heatmap, png_heatmap

    res = _results()
    cos = res.cosines("M", "none", "T")
    x_ab = np.asarray(cos["X_AB"])
    if all_nan:
        x_ab[:] = np.nan
        cos["Y_AB"] = np.full_like(np.asarray(cos["Y_AB"]), np.nan).tolist()
    else:
        x_ab[1, 2] = np.nan
    cos["X_AB"] = x_ab.tolist()
    plan = _plan(res)
    assert "undefined" in plan.footer and "undefined" not in _plan(_results()).footer
    dpi = 100
    x, y, w, h = plan.panels[0].box
    cx, cy = int((x + w * 2.5 / x_ab.shape[1]) * dpi), int((y + h * 1.5 / x_ab.shape[0]) * dpi)
    direct = np.asarray(Image.open(io.BytesIO(png_heatmap(plan, dpi))), dtype=int)
    assert _map_distance(direct[cy, cx]) >= 40, direct[cy, cx]
    mpl = _matplotlib_png(res, dpi)
    assert _map_distance(mpl[cy, cx]) >= 40 and np.abs(mpl[cy, cx] - direct[cy, cx]).max() <= 1
    # the PDF: the first panel's cell image, block (1, 2)
    pypdf = pytest.importorskip("pypdf")
    page = pypdf.PdfReader(io.BytesIO(pdf_heatmap(plan))).pages[0]
    im = page["/Resources"]["/XObject"]["/Im0"].get_object()
    data = np.frombuffer(im.get_data(), np.uint8).reshape(im["/Height"], im["/Width"], 3).astype(int)
    k = im["/Height"] // x_ab.shape[0]
    assert _map_distance(data[k + k // 2, 2 * k + k // 2]) >= 40


def _matplotlib_png(res, dpi: int) -> np.ndarray:
    from matplotlib import rc_context
    from PIL import Image

    from isoeat.reporting._render import _RC, _png
    from isoeat.reporting.figures import figure_test_heatmap

    with rc_context({"figure.dpi": dpi, **_RC}):
        return np.asarray(Image.open(io.BytesIO(_png(figure_test_heatmap(res, "M", "T"), dpi))), dtype=int)


# --------------------------------------------------------------------------- space names
@pytest.mark.parametrize("cals", [
    [{"name": "none", "label": "none"}, {"name": "zca", "label": "raw"}],  # a whitened space labelled "raw"
    [{"name": "zca", "label": "zca"}, {"name": "zca", "label": "ZCA-whitened"}],  # two ZCA spaces, one by that name
])
def test_every_space_has_its_own_name_in_the_figure(cals):
    """A calibration labelled like another space's title ("raw", "ZCA-whitened"): two rows of panels and two colour
    bars with the same name, the whitened space passing for the raw one. Each space's name must differ."""
    plan = _plan(_results(cals=cals))
    assert len({b.label for b in plan.bars}) == 2
    assert len({p.title for p in plan.panels}) == 4
    assert plan.bars[0].label == ("cosine (raw)" if cals[0]["name"] == "none" else "cosine (ZCA-whitened)")
