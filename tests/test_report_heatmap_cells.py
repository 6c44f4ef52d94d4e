"""The per-test heatmap's cells coloured once per cell (``figures._cells``): the pixels Agg draws are exactly those
of the float image coloured by matplotlib at draw time (the way the cells were drawn before), and the colour bar
keeps the panel's symmetric scale."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest


def _results(with_nan: bool = False) -> SimpleNamespace:
    xw, yw, aw, bw = [f"x{i}" for i in range(7)], [f"yy{i}" for i in range(5)], ["a1", "a2", "a3"], ["b1", "b2"]
    rng = np.random.default_rng(3)
    x_ab = rng.normal(size=(7, 5))
    if with_nan:
        x_ab[2, 3] = np.nan  # an undefined cosine: the colour map's "bad" colour, as before
    cos = {
        "X_words": xw,
        "Y_words": yw,
        "A_words": aw,
        "B_words": bw,
        "X_AB": x_ab.tolist(),
        "Y_AB": rng.normal(size=(5, 5)).tolist(),
    }
    return SimpleNamespace(
        calibrations=[{"name": "none", "label": "none"}],
        tests=[{"id": "T", "bias_type": "x"}],
        cosines=lambda model, cal, test: cos,
    )


def test_cells_pixels_equal_the_float_image() -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from isoeat.reporting.figures import figure_test_heatmap

    res = _results()
    fig = figure_test_heatmap(res, "M", "T")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    drawn = np.asarray(canvas.buffer_rgba()).copy()
    cos = res.cosines("M", "none", "T")
    mats = [np.asarray(cos["X_AB"], float), np.asarray(cos["Y_AB"], float)]
    vmax = max(float(np.abs(M).max()) for M in mats)
    panels = [ax for ax in fig.axes if ax.images and ax.texts]
    assert len(panels) == 2
    for ax, M in zip(panels, mats):
        (im,) = ax.images
        blocks = np.asarray(im.get_array())
        assert blocks.dtype == np.uint8 and blocks.shape[2] == 4  # RGBA bytes, coloured once per cell
        k = blocks.shape[0] // M.shape[0]
        assert blocks.shape[:2] == (k * M.shape[0], k * M.shape[1]) and k >= 2
        # the reference: the float cells coloured by matplotlib at draw time, as imshow(..., cmap, vmin, vmax) does
        ext = im.get_extent()
        im.remove()
        ref = np.repeat(np.repeat(M, k, axis=0), k, axis=1)
        ax.imshow(ref, cmap="RdBu_r", vmin=-vmax, vmax=vmax, interpolation="none", extent=ext, aspect="auto")
    canvas.draw()
    assert np.array_equal(drawn, np.asarray(canvas.buffer_rgba()))


def test_colour_bar_keeps_the_symmetric_scale() -> None:
    pytest.importorskip("matplotlib")
    from isoeat.reporting.figures import figure_test_heatmap

    res = _results()
    cos = res.cosines("M", "none", "T")
    vmax = max(float(np.abs(np.asarray(cos[k])).max()) for k in ("X_AB", "Y_AB"))
    fig = figure_test_heatmap(res, "M", "T")
    bars = [ax for ax in fig.axes if getattr(ax, "_colorbar", None) is not None]
    assert len(bars) == 1
    norm = bars[0]._colorbar.mappable.norm
    assert (norm.vmin, norm.vmax) == (-vmax, vmax)
    assert bars[0]._colorbar.cmap.name == "RdBu_r"


@pytest.mark.parametrize("shape", [(7, 5), (1, 1), (40, 3), (200, 2)])
def test_cells_with_an_undefined_value(shape: tuple[int, int]) -> None:
    """NaN (an undefined cosine) gets the colour map's "bad" colour, as the float image gave it; (200, 2): k = 1,
    the float image as before."""
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from isoeat.reporting.figures import _cells

    M = np.random.default_rng(5).uniform(-0.9, 0.9, size=shape)
    M[0, 0] = np.nan

    def draw(new: bool) -> np.ndarray:
        fig = Figure(figsize=(3, 3), dpi=100)
        ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
        if new:
            _cells(ax, M, cmap="RdBu_r", vmin=-1.0, vmax=1.0, aspect="auto")
        else:
            n_r, n_c = M.shape
            k = min(16, 256 // max(n_r, n_c))
            if k < 2:
                ax.imshow(M, cmap="RdBu_r", vmin=-1.0, vmax=1.0, aspect="auto", interpolation="nearest")
            else:
                ax.imshow(
                    np.repeat(np.repeat(M, k, axis=0), k, axis=1),
                    cmap="RdBu_r",
                    vmin=-1.0,
                    vmax=1.0,
                    aspect="auto",
                    interpolation="none",
                    extent=(-0.5, n_c - 0.5, n_r - 0.5, -0.5),
                )
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        return np.asarray(canvas.buffer_rgba()).copy()

    assert np.array_equal(draw(True), draw(False))
