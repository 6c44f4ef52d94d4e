"""The per-test heatmap's layout, in inches, apart from any drawing library: one home for its geometry.

:func:`heatmap_plan` reads a test's stored cosines (every space of the
experiment that has them) and places everything the figure shows: the two
panels of each space (X and Y against the attribute words A | B), their word
labels, the colour bar of each space with its symmetric scale, the titles and
the footer. Two renderers draw it: :func:`isoeat.reporting.figures.figure_test_heatmap`
(matplotlib: any text, any format) and :mod:`isoeat.reporting._heatmap_draw`
(PNG and PDF written directly, for figures whose texts are printable ASCII:
the report's first run, ~10x faster), so both put every cell, word and scale
in the same place. Coordinates are inches from the figure's top-left corner.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._heatmap_fonts import EST_EM, label_in, text_in

__all__ = ["Panel", "ColourBar", "HeatmapPlan", "heatmap_plan", "colour_scale"]


@dataclass(frozen=True)
class Panel:
    """One heatmap panel: ``cells`` (rows: the target words ``rows``; columns: A then B) in ``box``
    ``(x, y, w, h)``; a white line after the first ``split`` columns; column words ``cols`` under it (the
    last row of panels only); ``title`` above it; the colour scale is ``[-vmax, vmax]``."""

    box: tuple[float, float, float, float]
    cells: np.ndarray
    vmax: float
    split: int
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    title: str


@dataclass(frozen=True)
class ColourBar:
    """The colour bar of one space's row: ``box``, scale ``[-vmax, vmax]``, its ``label`` (rotated)."""

    box: tuple[float, float, float, float]
    vmax: float
    label: str


@dataclass(frozen=True)
class HeatmapPlan:
    """A whole per-test heatmap: size, word-label font size ``fs`` (points), panels, colour bars, the title
    (centred, its lines ``title`` from the top) and the footer (left, bottom)."""

    width: float
    height: float
    fs: float
    panels: tuple[Panel, ...]
    bars: tuple[ColourBar, ...]
    title: tuple[str, ...]
    footer: str
    footer_x: float

    def texts(self) -> list[str]:
        """Every text the figure draws (words, titles, labels, footer)."""
        out = list(self.title) + [self.footer] + [b.label for b in self.bars]
        for p in self.panels:
            out += [p.title, *p.rows, *p.cols]
        return out


#: Title and footer offsets from the figure's edges (inches), and the font sizes (points) of the texts other than
#: the word labels: title, panel titles, colour-bar label and ticks, footer.
EDGE = 0.12
TITLE_PT, PANEL_TITLE_PT, BAR_LABEL_PT, BAR_TICK_PT, FOOTER_PT = 10.0, 9.0, 8.0, 7.0, 8.0


#: The colour of an undefined cosine (a zero vector): mid grey, at least 53 levels from every colour of ``RdBu_r``
#: (whose white centre is a cosine of 0); the footer then says so (:data:`UNDEFINED_NOTE`).
UNDEFINED_RGB = (0.6, 0.6, 0.6)
UNDEFINED_NOTE = "grey: undefined cosine"


def heatmap_cmap() -> Any:
    """``RdBu_r`` with undefined cosines in :data:`UNDEFINED_RGB` (both renderers colour cells with it)."""
    from matplotlib import colormaps

    return colormaps["RdBu_r"].with_extremes(bad=UNDEFINED_RGB)


def block_pixels(n_rows: int, n_cols: int) -> int:
    """The side k of the k x k pixel block each cell is drawn as in an embedded image: up to 16, the image up to
    256 px a side (a PDF viewer that smooths an enlarged image then blurs only the outer 1/k of a cell); 1 for
    matrices too large for k >= 2."""
    return max(1, min(16, 256 // max(n_rows, n_cols, 1)))


def colour_scale(mats: Sequence[np.ndarray]) -> float:
    """The symmetric scale of one space's panels: the largest finite ``|cosine|``, 1.0 when there is none or it is
    0 (an undefined cosine is drawn in :data:`UNDEFINED_RGB` and does not set the scale)."""
    finite = [np.abs(M[np.isfinite(M)]) for M in mats]
    top = max((float(a.max()) for a in finite if a.size), default=0.0)
    return top if top > 0 else 1.0


def _space_title(res: Any, label: str) -> str:
    """A space's name in figure titles: "raw", "ZCA-whitened" (the default ZCA), else its label, followed by its
    method where another space goes by that name (a ZCA space labelled "raw": "raw (zca)")."""
    name = next((c["name"] for c in res.calibrations if c["label"] == label), label)
    title = _usual_title(name, label)
    others = {_usual_title(c["name"], c["label"]).casefold() for c in res.calibrations if c["label"] != label}
    return f"{label} ({name})" if title == label and label.casefold() in others else title


def _usual_title(name: str, label: str) -> str:
    if name == "none":
        return "raw"
    return "ZCA-whitened" if name == "zca" and label == "zca" else label


def heatmap_plan(res: Any, model: str, test: str) -> HeatmapPlan | None:
    """The layout of ``test``'s heatmap on ``model``: one row of two panels per space with stored cosines (None
    when no space has them). Sizes follow the words: cells of 0.2 in (0.13 in and 5.5 pt labels past 30 words),
    label margins from the longest word (0.62 em per character, more where the fonts draw it wider: see
    :func:`text_in`); a panel at least as wide as its title, a colour bar nearly as long as its label, the figure as
    wide as its footer and the title wrapped to the figure's width, its rows of panels below its last line."""
    spaces = [(c, res.cosines(model, c["label"], test)) for c in res.calibrations]
    spaces = [(c, cs) for c, cs in spaces if cs and cs.get("X_AB") and cs.get("Y_AB")]
    if not spaces:
        return None
    c0 = spaces[0][1]
    nx, ny = len(c0["X_words"]), len(c0["Y_words"])
    attr = tuple(c0["A_words"]) + tuple(c0["B_words"])
    big = max(nx, ny, len(attr)) > 30
    fs, cell = (5.5, 0.13) if big else (7.0, 0.2)
    ch = fs * EST_EM / 72  # inches per character of a label: the estimate
    lab_x = max((label_in(w, fs) for w in c0["X_words"]), default=4 * ch) + 0.2
    lab_y = max((label_in(w, fs) for w in c0["Y_words"]), default=4 * ch) + 0.2
    lab_attr = max((label_in(w, fs) for w in attr), default=4 * ch) + 0.15
    names = [_space_title(res, c["label"]) for c, _ in spaces]
    titles = [[f"{space}: {role} = {cs.get(f'{role}_name', role)}" for role in "XY"]
              for space, (_, cs) in zip(names, spaces)]
    pw = max(2.6, len(attr) * cell, *(text_in(t, PANEL_TITLE_PT) for row in titles for t in row))  # panel width
    # panel height; a colour bar's label may pass its ends by 0.2 in (the rows' bars are 0.44 in apart)
    ph = max(1.3, max(nx, ny) * cell, *(text_in(f"cosine ({n})", BAR_LABEL_PT) - 0.4 for n in names))
    left, gap, cbar_w, right = lab_x + 0.1, lab_y + 0.35, 0.14, 0.85
    footer = f"columns: A = {c0.get('A_name', 'A')}  |  B = {c0.get('B_name', 'B')}  (white line between them)"
    mats = [[np.asarray(cs["X_AB"], dtype=float), np.asarray(cs["Y_AB"], dtype=float)] for _, cs in spaces]
    if any(np.isnan(M).any() for pair in mats for M in pair):
        footer += f";  {UNDEFINED_NOTE}"
    width = max(left + pw + gap + pw + 0.25 + cbar_w + right, left + text_in(footer, FOOTER_PT) + EDGE)
    bias = next((t.get("bias_type", "") for t in res.tests if t["id"] == test), "")
    title = _wrap(f"{test} ({bias}) on {model}: cosine of each target word (rows) with each attribute word "
                  "(columns), per space", width - 2 * EDGE, max(40, int(width * 72 / 5.6)))
    # the panel titles' tops lie 0.17 in below title_h: 0.5 in holds two lines of title
    title_h, row_title = max(0.5, EDGE + len(title) * TITLE_LINE_IN - 0.1), 0.32
    row_h = row_title + ph + 0.12  # attribute words only under the last row: the columns are the same in every row
    height = title_h + row_h * len(spaces) + lab_attr + 0.05 + 0.35
    panels, bars = [], []
    for i, (_, cs) in enumerate(spaces):
        vmax = colour_scale(mats[i])
        y0 = title_h + i * row_h + row_title
        last = i == len(spaces) - 1
        for j, (M, role) in enumerate(zip(mats[i], "XY")):
            panels.append(Panel((left + j * (pw + gap), y0, pw, ph * M.shape[0] / max(nx, ny)), M, vmax,
                                len(cs["A_words"]), tuple(cs[f"{role}_words"]),
                                tuple(cs["A_words"]) + tuple(cs["B_words"]) if last else (), titles[i][j]))
        bars.append(ColourBar((left + 2 * pw + gap + 0.25, y0, cbar_w, ph), vmax, f"cosine ({names[i]})"))
    return HeatmapPlan(width, height, fs, tuple(panels), tuple(bars), title, footer, left)


#: A title line's height (inches): 1.2 times DejaVu Sans's line (ascender + descender, 1.164 em), as drawn.
TITLE_LINE_IN = 1.2 * 1.17 * TITLE_PT / 72


def _wrap(text: str, width_in: float, chars: int) -> tuple[str, ...]:
    """``text`` in lines of at most ``chars`` characters, fewer where a line would be wider than ``width_in`` at
    the title's size."""
    lines = textwrap.wrap(text, chars)
    while chars > 10 and any(text_in(line, TITLE_PT) > width_in for line in lines):
        chars -= 2
        lines = textwrap.wrap(text, chars)
    return tuple(lines)


def bar_ticks(vmax: float, length_in: float, size_pt: float = BAR_TICK_PT) -> list[float]:
    """Tick values of a colour bar of scale ``[-vmax, vmax]`` and length ``length_in``: matplotlib's rule for a
    vertical axis (``MaxNLocator`` with steps 1, 2, 2.5, 5, 10 and as many bins as labels of ``size_pt`` fit at
    twice their size, at most 9), without building an axis."""
    bins = max(1, min(9, math.floor(length_in * 72 / (2 * size_pt))))
    span = 2 * vmax
    raw = span / bins
    mag = 10 ** math.floor(math.log10(raw))
    step = next((s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw * (1 - 1e-12)), 10 * mag)
    lo = math.ceil(-vmax / step - 1e-9)
    hi = math.floor(vmax / step + 1e-9)
    return [k * step for k in range(lo, hi + 1)]


def ticks_plain(vmax: float, length_in: float) -> bool:
    """Whether matplotlib writes the ticks of this colour bar as plain numbers, as :func:`tick_text` does: its
    ``ScalarFormatter`` scales them (offset text ``1eN`` above the bar) where the largest tick's order of magnitude
    is <= -5 or >= 6 (``axes.formatter.limits``), e.g. a space whose cosines are all below 1e-4. False there and
    for a scale no tick can be placed on (subnormal, infinite)."""
    if not 1e-300 < vmax < 1e300:
        return False
    top = max(abs(v) for v in bar_ticks(vmax, length_in))
    return top > 0 and -5 < math.floor(math.log10(top)) < 6


def tick_text(values: Sequence[float]) -> list[str]:
    """Tick labels with one number of decimals, the fewest that write every value exactly (as matplotlib's
    ``ScalarFormatter`` does: ``-0.2, 0.0, 0.2``; ``-1, 0, 1``); ``-0`` written as 0."""
    dec = next((k for k in range(7) if all(abs(round(v, k) - v) < 1e-9 * max(1.0, abs(v)) for v in values)), 6)
    return [f"{(0.0 if abs(v) < 1e-12 else v):.{dec}f}" for v in values]
