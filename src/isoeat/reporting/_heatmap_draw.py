"""The per-test heatmaps drawn directly: PNG by Pillow, PDF written as PDF operators, from one layout.

The per-test heatmaps were most of a first ``isoeat report`` (10 of its 14
figures on paper_glove; matplotlib builds six Axes per figure, each with its
tick machinery, and draws every line of every word label through its text
layout: ~0.35 s per figure for PNG and PDF). A heatmap is cells, words and
two colour bars: :class:`DirectHeatmap` draws the
:class:`~isoeat.reporting.heatmap_plan.HeatmapPlan` that matplotlib's
:func:`~isoeat.reporting.figures.figure_test_heatmap` draws, at the same
places, in about a tenth of the time:

* **PNG**: the cells are numpy blocks coloured by matplotlib's ``RdBu_r`` map
  (the colours ``imshow`` gives them; an undefined cosine grey, the map's
  "bad" colour ``heatmap_plan.UNDEFINED_RGB``), words and titles by Pillow's
  FreeType in DejaVu Sans (matplotlib's default font, from matplotlib's own
  data folder), encoded by :func:`isoeat.reporting._png.png_bytes`.
* **PDF**: vector text in Helvetica (one of PDF's 14 standard fonts, so
  nothing is embedded; widths from its metrics in matplotlib's data folder),
  each panel's cells one RGB image of k x k-pixel blocks (as ``figures._cells``
  embeds them), the colour bars 256-step images, spines and ticks as lines.

Used only where :func:`direct_heatmap` says so: every text printable ASCII
(Helvetica's standard encoding, and every character in DejaVu Sans), formats
PNG and PDF only, Pillow 9.1 or later with FreeType, both font files present, and every
colour bar's ticks written by matplotlib as plain numbers (a scale below
1e-4 gets matplotlib's ``1eN`` offset text). Otherwise
matplotlib draws the figure, as before (a word in another script, SVG).
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ._heatmap_fonts import font_files as _font_files
from ._heatmap_fonts import helvetica_widths as _helvetica_widths
from .heatmap_plan import (
    BAR_LABEL_PT,
    BAR_TICK_PT,
    EDGE,
    FOOTER_PT,
    PANEL_TITLE_PT,
    TITLE_PT,
    HeatmapPlan,
    bar_ticks,
    tick_text,
    ticks_plain,
)

__all__ = ["DirectHeatmap", "direct_heatmap", "FORMATS"]

#: The formats drawn directly (any other: matplotlib).
FORMATS = frozenset({"png", "pdf"})
#: Line widths (points): spines and ticks, the white line between A and B (matplotlib's defaults and the plan's).
SPINE_PT, SPLIT_PT = 0.8, 2.5
#: Tick length, the pads of tick labels, the colour-bar label, the word labels and the panel titles (points).
TICK_LEN_PT, TICK_PAD_PT, LABEL_PAD_PT, WORD_PAD_PT, TITLE_PAD_PT = 3.5, 3.5, 4.0, 2.5, 4.0
#: Colour-bar steps (matplotlib's colour bars use the map's 256 colours).
BAR_STEPS = 256
#: Helvetica's ascender and descender (per 1,000 units of the font size): its vertical middle is their mean.
_HELV_ASC, _HELV_DESC = 718, -207
_HELV_MID = (_HELV_ASC + _HELV_DESC) / 2000


def _printable_ascii(s: str) -> bool:
    return all(" " <= ch <= "~" for ch in s)


def _pillow() -> bool:
    """Pillow with what the direct renderer uses: FreeType text (``ImageFont.truetype``) and the enums of Pillow
    9.1 (``Image.Transpose``, ``Image.Resampling``). matplotlib >= 3.7 takes Pillow from 6.2 on: an older Pillow,
    or one built without FreeType, leaves the heatmaps to matplotlib."""
    try:
        from PIL import Image, ImageDraw, ImageFont, features  # noqa: F401
    except ImportError:
        return False
    return hasattr(Image, "Transpose") and hasattr(Image, "Resampling") and bool(features.check_module("freetype2"))


def direct_heatmap(plan: HeatmapPlan | None, formats: Sequence[str]) -> DirectHeatmap | None:
    """A :class:`DirectHeatmap` of ``plan`` when it can be drawn directly in ``formats``, else None (then
    matplotlib draws it: a text that is not printable ASCII, a format other than PNG and PDF, no Pillow, a colour
    bar whose ticks matplotlib writes scaled by a power of ten, see :func:`~.heatmap_plan.ticks_plain`)."""
    if plan is None or not formats or not set(formats) <= FORMATS:
        return None
    if not all(ticks_plain(b.vmax, b.box[3]) for b in plan.bars):
        return None
    if not all(_printable_ascii(t) for t in plan.texts()) or _font_files() is None or not _pillow():
        return None
    return DirectHeatmap(plan)


class DirectHeatmap:
    """A per-test heatmap drawn without matplotlib; used by :func:`isoeat.reporting._render._save` as a Figure
    is (``get_size_inches``, ``write_files``)."""

    def __init__(self, plan: HeatmapPlan) -> None:
        self.plan = plan

    def get_size_inches(self) -> np.ndarray:
        return np.array([self.plan.width, self.plan.height])

    def write_files(self, base: Path, formats: Sequence[str], dpi: int) -> list[Path]:
        """Write ``base.FMT`` for each format (atomically); the paths written, in ``formats``' order."""
        from .._io import atomic_write_bytes

        base.parent.mkdir(parents=True, exist_ok=True)
        out = []
        for fmt in formats:
            data = png_heatmap(self.plan, dpi) if fmt == "png" else pdf_heatmap(self.plan)
            p = base.parent / f"{base.name}.{fmt}"
            atomic_write_bytes(p, data)
            out.append(p)
        return out


# --------------------------------------------------------------------------- colours
@cache
def _cmap() -> Any:
    from .heatmap_plan import heatmap_cmap

    return heatmap_cmap()  # a copy each time it is built: once here


def cell_rgb(cells: np.ndarray, vmax: float) -> np.ndarray:
    """``cells`` coloured by ``RdBu_r`` on ``[-vmax, vmax]`` as uint8 RGB, composited on white (an undefined
    cosine is the map's "bad" colour, :data:`~.heatmap_plan.UNDEFINED_RGB`): the colours ``imshow`` draws."""
    from matplotlib.colors import Normalize

    rgba = _cmap()(Normalize(-vmax, vmax)(np.asarray(cells, dtype=float)), bytes=True)
    a = rgba[..., 3:4].astype(np.uint16)
    return ((rgba[..., :3].astype(np.uint16) * a + 255 * (255 - a) + 127) // 255).astype(np.uint8)


def bar_rgb(vmax: float, steps: int = BAR_STEPS) -> np.ndarray:
    """A colour bar's ``steps`` colours, top (``vmax``) to bottom (``-vmax``), as a ``steps x 1 x 3`` image."""
    values = vmax - (np.arange(steps) + 0.5) * (2 * vmax / steps)
    return cell_rgb(values[:, None], vmax)


def _blocks(rgb: np.ndarray) -> np.ndarray:
    """Each cell a block of k x k pixels (:func:`~.heatmap_plan.block_pixels`, as ``figures._cells``)."""
    from .heatmap_plan import block_pixels

    k = block_pixels(rgb.shape[0], rgb.shape[1])
    return np.repeat(np.repeat(rgb, k, axis=0), k, axis=1)


# --------------------------------------------------------------------------- PNG
@cache
def _font(size_pt: float, dpi: int) -> Any:
    from PIL import ImageFont

    files = _font_files()
    assert files is not None  # direct_heatmap checked
    try:
        return ImageFont.truetype(str(files[0]), size_pt * dpi / 72)
    except TypeError:  # Pillow < 10.1 takes whole pixels only
        return ImageFont.truetype(str(files[0]), max(1, round(size_pt * dpi / 72)))


@lru_cache(maxsize=4096)
def _rotated_mask(text: str, font: Any) -> tuple[Any, int, int]:
    """``text`` in ``font`` rotated 90 degrees (reading upwards) as a mask, with its bounding box's top and width
    (kept: a word drawn in every space's row is rendered once)."""
    from PIL import Image, ImageDraw

    left, top, right, bottom = font.getbbox(text, anchor="lm")
    w, h = max(1, right - left), max(1, bottom - top)
    mask = Image.new("L", (w, h), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, font=font, fill=255, anchor="lm")
    return mask.transpose(Image.Transpose.ROTATE_90), top, w  # (w x h) -> (h x w): the text's end at the top


def _rotated(img: Any, text: str, font: Any, x: float, y: float, where: str) -> None:
    """``text`` rotated 90 degrees (reading upwards) onto ``img``: ``where`` "top-centre" puts the end of the text
    at height ``y`` and its middle line at ``x``; "left-middle" its ascender side at ``x``, centred on ``y``."""
    rot, top, w = _rotated_mask(text, font)
    if where == "top-centre":
        pos = (round(x + top), round(y))
    else:
        pos = (round(x), round(y - w / 2))
    img.paste((0, 0, 0), pos, rot)


def _px(v: float, dpi: int) -> int:
    return int(round(v * dpi))


def _png_panel(img: Any, draw: Any, p: Any, plan: HeatmapPlan, dpi: int) -> None:
    from PIL import Image

    x, y, w, h = p.box
    x0, y0, x1, y1 = _px(x, dpi), _px(y, dpi), _px(x + w, dpi), _px(y + h, dpi)
    n_r, n_c = p.cells.shape
    rows = np.diff(np.round(np.linspace(y0, y1, n_r + 1)).astype(int))
    cols = np.diff(np.round(np.linspace(x0, x1, n_c + 1)).astype(int))
    block = np.repeat(np.repeat(cell_rgb(p.cells, p.vmax), rows, axis=0), cols, axis=1)
    img.paste(Image.fromarray(np.ascontiguousarray(block), "RGB"), (x0, y0))
    pt = dpi / 72
    xs = x0 + (x1 - x0) * p.split / n_c
    draw.line([(xs, y0), (xs, y1)], fill=(255, 255, 255), width=max(1, round(SPLIT_PT * pt)))
    draw.rectangle([x0, y0, x1, y1], outline=(0, 0, 0), width=max(1, round(SPINE_PT * pt)))
    font = _font(plan.fs, dpi)
    for k, word in enumerate(p.rows):
        draw.text((x0 - WORD_PAD_PT * pt, y0 + (y1 - y0) * (k + 0.5) / n_r), word, font=font, fill=(0, 0, 0),
                  anchor="rm")
    for k, word in enumerate(p.cols):
        _rotated(img, word, font, x0 + (x1 - x0) * (k + 0.5) / n_c, y1 + WORD_PAD_PT * pt, "top-centre")
    draw.text(((x0 + x1) / 2, y0 - TITLE_PAD_PT * pt), p.title, font=_font(PANEL_TITLE_PT, dpi), fill=(0, 0, 0),
              anchor="ms")


def _png_bar(img: Any, draw: Any, bar: Any, dpi: int) -> None:
    from PIL import Image

    x, y, w, h = bar.box
    x0, y0, x1, y1 = _px(x, dpi), _px(y, dpi), _px(x + w, dpi), _px(y + h, dpi)
    grad = Image.fromarray(np.ascontiguousarray(bar_rgb(bar.vmax)), "RGB").resize((x1 - x0, y1 - y0),
                                                                                     Image.Resampling.NEAREST)
    img.paste(grad, (x0, y0))
    pt = dpi / 72
    lw = max(1, round(SPINE_PT * pt))
    draw.rectangle([x0, y0, x1, y1], outline=(0, 0, 0), width=lw)
    ticks = bar_ticks(bar.vmax, h)
    font = _font(BAR_TICK_PT, dpi)
    widest = 0.0
    for v, s in zip(ticks, tick_text(ticks)):
        ty = y1 - (v + bar.vmax) / (2 * bar.vmax) * (y1 - y0)
        draw.line([(x1, ty), (x1 + TICK_LEN_PT * pt, ty)], fill=(0, 0, 0), width=lw)
        s = s.replace("-", "\u2212")  # matplotlib's tick labels write a minus sign
        draw.text((x1 + (TICK_LEN_PT + TICK_PAD_PT) * pt, ty), s, font=font, fill=(0, 0, 0), anchor="lm")
        widest = max(widest, font.getlength(s))
    _rotated(img, bar.label, _font(BAR_LABEL_PT, dpi),
             x1 + (TICK_LEN_PT + TICK_PAD_PT + LABEL_PAD_PT) * pt + widest, (y0 + y1) / 2, "left-middle")


def png_heatmap(plan: HeatmapPlan, dpi: int) -> bytes:
    """``plan`` as the bytes of an RGB PNG at ``dpi`` (white background; size ``width x height`` inches)."""
    from PIL import Image, ImageDraw

    from ._png import png_bytes

    img = Image.new("RGB", (int(plan.width * dpi), int(plan.height * dpi)), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    for p in plan.panels:
        _png_panel(img, draw, p, plan, dpi)
    for bar in plan.bars:
        _png_bar(img, draw, bar, dpi)
    title = _font(TITLE_PT, dpi)
    ascent, descent = title.getmetrics()
    for k, line in enumerate(plan.title):
        draw.text((img.width / 2, EDGE * dpi + k * 1.2 * (ascent + descent)), line, font=title, fill=(0, 0, 0),
                  anchor="ma")
    draw.text((plan.footer_x * dpi, img.height - EDGE * dpi), plan.footer, font=_font(FOOTER_PT, dpi),
              fill=(0, 0, 0), anchor="ld")
    return png_bytes(np.asarray(img), dpi, "isoeat")


# --------------------------------------------------------------------------- PDF
def text_width(s: str, size_pt: float) -> float:
    """Width of ``s`` (printable ASCII) in Helvetica at ``size_pt``, in points."""
    widths = _helvetica_widths()
    return sum(widths[ch] for ch in s) * size_pt


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


class _Page:
    """One page's content stream (points, origin bottom-left) and the images it draws."""

    def __init__(self, plan: HeatmapPlan) -> None:
        self.w, self.h = plan.width * 72, plan.height * 72
        self.ops: list[str] = []
        self.images: list[np.ndarray] = []

    def y(self, y_in: float) -> float:
        return self.h - y_in * 72

    def text(self, s: str, size: float, x: float, y: float, ha: str = "left", va: str = "baseline",
             rotated: bool = False) -> None:
        """``s`` at (x, y) points; ``ha`` left/centre/right along the text, ``va`` baseline/middle/bottom/top."""
        width = text_width(s, size)
        along = {"left": 0.0, "centre": -width / 2, "right": -width}[ha]
        across = {"baseline": 0.0, "middle": -_HELV_MID * size, "bottom": -_HELV_DESC / 1000 * size,
                  "top": -_HELV_ASC / 1000 * size}[va]
        m = f"0 1 -1 0 {x - across:.3f} {y + along:.3f}" if rotated else f"1 0 0 1 {x + along:.3f} {y + across:.3f}"
        self.ops.append(f"BT /F1 {size:g} Tf {m} Tm ({_esc(s)}) Tj ET")

    def image(self, rgb: np.ndarray, x: float, y: float, w: float, h: float) -> None:
        self.ops.append(f"q {w:.3f} 0 0 {h:.3f} {x:.3f} {y:.3f} cm /Im{len(self.images)} Do Q")
        self.images.append(np.ascontiguousarray(rgb, dtype=np.uint8))

    def line(self, x0: float, y0: float, x1: float, y1: float, width: float, grey: int = 0) -> None:
        self.ops.append(f"{grey} G {width:g} w {x0:.3f} {y0:.3f} m {x1:.3f} {y1:.3f} l S")

    def rect(self, x: float, y: float, w: float, h: float, width: float) -> None:
        self.ops.append(f"0 G {width:g} w {x:.3f} {y:.3f} {w:.3f} {h:.3f} re S")


def _pdf_panel(page: _Page, p: Any, fs: float) -> None:
    x, y_top, w_in, h_in = p.box
    x0, y1, w, h = x * 72, page.y(y_top), w_in * 72, h_in * 72
    y0 = y1 - h
    n_r, n_c = p.cells.shape
    page.image(_blocks(cell_rgb(p.cells, p.vmax)), x0, y0, w, h)
    xs = x0 + w * p.split / n_c
    page.line(xs, y0, xs, y1, SPLIT_PT, grey=1)
    page.rect(x0, y0, w, h, SPINE_PT)
    for k, word in enumerate(p.rows):
        page.text(word, fs, x0 - WORD_PAD_PT, y1 - h * (k + 0.5) / n_r, ha="right", va="middle")
    for k, word in enumerate(p.cols):
        page.text(word, fs, x0 + w * (k + 0.5) / n_c, y0 - WORD_PAD_PT, ha="right", va="middle", rotated=True)
    page.text(p.title, PANEL_TITLE_PT, x0 + w / 2, y1 + TITLE_PAD_PT, ha="centre")


def _pdf_bar(page: _Page, bar: Any) -> None:
    x, y_top, w_in, h_in = bar.box
    x0, y1, w, h = x * 72, page.y(y_top), w_in * 72, h_in * 72
    y0 = y1 - h
    page.image(bar_rgb(bar.vmax), x0, y0, w, h)
    page.rect(x0, y0, w, h, SPINE_PT)
    ticks = bar_ticks(bar.vmax, h_in)
    widest = 0.0
    for v, s in zip(ticks, tick_text(ticks)):
        ty = y0 + (v + bar.vmax) / (2 * bar.vmax) * h
        page.line(x0 + w, ty, x0 + w + TICK_LEN_PT, ty, SPINE_PT)
        page.text(s, BAR_TICK_PT, x0 + w + TICK_LEN_PT + TICK_PAD_PT, ty, va="middle")
        widest = max(widest, text_width(s, BAR_TICK_PT))
    page.text(bar.label, BAR_LABEL_PT, x0 + w + TICK_LEN_PT + TICK_PAD_PT + LABEL_PAD_PT + widest, (y0 + y1) / 2,
              ha="centre", va="top", rotated=True)


def _pdf_file(page: _Page) -> bytes:
    """The page as a whole PDF file: catalog, pages, page, Helvetica, the images, the content, the info."""
    content = zlib.compress("\n".join(page.ops).encode("ascii"), 6)
    xobjects = " ".join(f"/Im{k} {6 + k} 0 R" for k in range(len(page.images)))
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {page.w:.3f} {page.h:.3f}] /Resources << /Font << /F1 "
             f"4 0 R >> /XObject << {xobjects} >> >> /Contents 5 0 R >>").encode("ascii"),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream"]
    for rgb in page.images:
        data = zlib.compress(rgb.tobytes(), 6)
        objs.append(b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB "
                    b"/BitsPerComponent 8 /Interpolate false /Filter /FlateDecode /Length %d >>\nstream\n"
                    % (rgb.shape[1], rgb.shape[0], len(data)) + data + b"\nendstream")
    objs.append(b"<< /Creator (isoeat) /Producer (isoeat) >>")
    buf = io.BytesIO()
    buf.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for k, body in enumerate(objs, start=1):
        offsets.append(buf.tell())
        buf.write(b"%d 0 obj\n" % k + body + b"\nendobj\n")
    xref = buf.tell()
    buf.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1))
    buf.write(b"".join(b"%010d 00000 n \n" % off for off in offsets))
    buf.write(b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n"
              % (len(objs) + 1, len(objs), xref))
    return buf.getvalue()


def pdf_heatmap(plan: HeatmapPlan) -> bytes:
    """``plan`` as the bytes of a one-page PDF (vector text in Helvetica; cells and colour bars as images)."""
    page = _Page(plan)
    for p in plan.panels:
        _pdf_panel(page, p, plan.fs)
    for bar in plan.bars:
        _pdf_bar(page, bar)
    top = page.y(EDGE)
    for k, line in enumerate(plan.title):
        page.text(line, TITLE_PT, page.w / 2, top - k * 1.2 * TITLE_PT * (_HELV_ASC - _HELV_DESC) / 1000,
                  ha="centre", va="top")
    page.text(plan.footer, FOOTER_PT, plan.footer_x * 72, EDGE * 72, va="bottom")
    return _pdf_file(page)
