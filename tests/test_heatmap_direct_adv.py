"""Adversarial inputs for the report's per-test heatmaps (reporting/heatmap_plan.py, reporting/_heatmap_draw.py).

Each test is an input that once drew a wrong or misleading figure. Expected values come from outside the
renderer: colour-bar tick labels from a matplotlib colour bar of the same scale and length; text extents from the
fonts' own metrics read by matplotlib (Helvetica's AFM through ``matplotlib._afm``, DejaVu Sans through
``FT2Font``), never from isoeat's width tables; the matplotlib figure's texts from its Agg renderer.
"""

from __future__ import annotations

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
                                     jobs=1, progress=False, **kw) if p.parent.name == "tests"]
