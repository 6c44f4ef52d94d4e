"""The criterion-validity scatter: each word's SC-WEAT d against its criterion value, one panel per space.

One panel per :class:`~isoeat.stats.criterion.CriterionResult` (raw first, then the calibration): a point per
word, labelled with the word (placed without overlaps by :func:`isoeat.reporting.labels.place_labels`), the
least-squares line of the value on d, and Pearson's r and Spearman's ρ with their intervals in the title.
Written by ``isoeat scweat --criterion ... --criterion-figure PATH`` (``.png``, ``.pdf`` or ``.svg``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError
from ._figure_file import write_figure_file
from .figures import _figure, fix_layout

__all__ = ["figure_criterion", "write_criterion_figure", "correlation_text"]


def correlation_text(r: Any) -> str:
    """``r = -0.50 [-0.70, -0.22], rho = -0.48 [-0.70, -0.18], n = 40`` (``undefined: WHY`` when undefined)."""
    if r.undefined:
        return f"r and rho undefined: {r.undefined} (n = {r.n})"
    return (
        f"r = {r.pearson_r:.2f} [{r.pearson_ci_low:.2f}, {r.pearson_ci_high:.2f}], rho = {r.spearman_rho:.2f} "
        f"[{r.spearman_ci_low:.2f}, {r.spearman_ci_high:.2f}], n = {r.n}"
    )


def figure_criterion(results: Sequence[Any], value_label: str = "criterion value") -> Any:
    """The figure (a matplotlib ``Figure``) of the criterion results of one model, raw first."""
    from .labels import place_labels

    if not results:
        raise ConfigError("criterion figure: no results")
    fig = _figure(5.2 * len(results), 4.8)
    axes = [fig.add_subplot(1, len(results), i + 1) for i in range(len(results))]
    for ax, r in zip(axes, results):
        d, v = np.asarray(r.effect_sizes, dtype=np.float64), np.asarray(r.values, dtype=np.float64)
        ax.scatter(d, v, s=16, color="C0", zorder=3)
        if not r.undefined and len(d) >= 2 and math.isfinite(r.pearson_r):
            slope, icpt = np.polyfit(d, v, 1)
            xs = np.array([d.min(), d.max()])
            ax.plot(xs, slope * xs + icpt, color="C3", linewidth=1.0)
        ax.axvline(0.0, color="0.6", linewidth=0.6)
        space = "raw" if r.calibration == "none" else r.calibration
        ax.set_title(f"{space}: {correlation_text(r)}", fontsize=8)
        ax.set_xlabel(f"SC-WEAT d (> 0: closer to {r.attribute_a}; < 0: to {r.attribute_b})", fontsize=8)
        ax.set_ylabel(value_label, fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle(
        f"Criterion validity on {results[0].model}: {results[0].criterion} ({results[0].ci_level:.0%} "
        "intervals, Fisher z)",
        fontsize=9,
    )
    fix_layout(fig)  # the constrained layout fixes the axes; labels are then placed in pixels
    for ax, r in zip(axes, results):
        place_labels(ax, list(zip(r.words, r.effect_sizes, r.values)), fontsize=6, marker_pt=4.0)
    return fig


def write_criterion_figure(
    results: Sequence[Any], path: str | Path, *, value_label: str = "criterion value", dpi: int = 150
) -> Path:
    """Write :func:`figure_criterion` to ``path`` (``.png``, ``.pdf`` or ``.svg``); returns the path."""
    return write_figure_file(lambda: figure_criterion(results, value_label), path, dpi=dpi, what="criterion figure")
