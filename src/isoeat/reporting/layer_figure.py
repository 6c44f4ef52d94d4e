"""The layer-profile figure of ``isoeat run --layers``: anisotropy and d per layer, raw vs calibrated.

Left: the mean pairwise cosine and the IsoScore of the test words' vectors per
layer (raw solid, calibrated dashed). Right: each test's d per layer (one
colour per test; raw solid, calibrated dashed) with a line at 0. It reads only
the profile rows (:func:`isoeat.experiments.layers.profile_rows`) and is
written with :func:`isoeat.reporting.figures._save` (PNG, PDF or SVG).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from ._figure_file import write_figure_file
from .figures import _figure

__all__ = ["figure_layer_profile", "write_layer_figure"]


def figure_layer_profile(rows: Sequence[Mapping[str, Any]]) -> Any:
    """The figure (a matplotlib ``Figure``) of the profile rows of one model and calibration."""
    if not rows:
        raise ConfigError("layer figure: no rows")
    layers = sorted(dict.fromkeys(r["layer"] for r in rows))
    first = {r["layer"]: r for r in rows}
    fig = _figure(11.0, 4.2)
    left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    for key, label, colour in (("mean_cosine", "mean cosine", "C0"), ("isoscore", "IsoScore", "C1")):
        left.plot(layers, [first[x][f"{key}_raw"] for x in layers], "-o", color=colour, label=f"{label} raw")
        left.plot(layers, [first[x][f"{key}_calibrated"] for x in layers], "--s", color=colour,
                  label=f"{label} calibrated")
    left.set_xlabel("layer (0 = embedding output)")
    left.set_title(f"anisotropy of the {rows[0]['n_words']} test words' vectors", fontsize=10)
    left.legend(fontsize=7)
    tests = list(dict.fromkeys(r["test"] for r in rows))
    by = {(r["test"], r["layer"]): r for r in rows}
    for i, t in enumerate(tests):
        xs = [x for x in layers if (t, x) in by]
        colour = f"C{i % 10}"
        right.plot(xs, [by[(t, x)]["d_raw"] for x in xs], "-o", color=colour, markersize=3, label=t)
        right.plot(xs, [by[(t, x)]["d_calibrated"] for x in xs], "--", color=colour, linewidth=1)
    right.axhline(0.0, color="black", linewidth=0.8)
    right.set_xlabel("layer (0 = embedding output)")
    right.set_ylabel("effect size d (raw solid, calibrated dashed)")
    right.set_title(f"{rows[0]['model']}: d raw vs {rows[0]['calibration']}", fontsize=10)
    right.legend(fontsize=7, ncol=2)
    for ax in (left, right):
        ax.set_xticks(layers)
    return fig


def write_layer_figure(rows: Sequence[Mapping[str, Any]], path: str | Path, *, dpi: int = 150) -> Path:
    """Write :func:`figure_layer_profile` to ``path`` (``.png``, ``.pdf`` or ``.svg``); returns the path."""
    return write_figure_file(lambda: figure_layer_profile(rows), path, dpi=dpi, what='layer figure')
