"""A forest-style figure of CEAT draws: every draw's d, and the combined effect size with its 95% interval.

One row per space (raw, then each calibration): the draws' effect sizes as
faint points (jittered vertically so that they do not hide each other), and
the DerSimonian–Laird combined effect size (CES) as a diamond spanning its
draw-level 95% interval (Guo & Caliskan's; the contexts interval is in the
table), on a common d axis with a line at 0. Written with
:func:`isoeat.reporting._render._save` (PNG, PDF or SVG, reproducible bytes).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError
from ._figure_file import write_figure_file
from .figures import _figure

__all__ = ["figure_ceat_forest", "write_ceat_figure"]


def figure_ceat_forest(results: Sequence[Any]) -> Any:
    """The figure (a matplotlib ``Figure``) for the CEAT results of one test, raw first."""
    if not results:
        raise ConfigError("CEAT figure: no results")
    fig = _figure(7.0, 1.2 + 0.8 * len(results))
    ax = fig.add_subplot(1, 1, 1)
    jitter = np.random.default_rng(0)  # fixed: the figure's bytes do not depend on the run's seed
    labels = []
    for row, r in enumerate(results):
        y = len(results) - 1 - row
        d = np.asarray(r.effect_sizes, dtype=np.float64)
        ax.scatter(d, y + jitter.uniform(-0.25, 0.25, d.size), s=4, alpha=0.25, color="0.45", linewidths=0)
        m = r.meta
        ax.fill([m.ci_low, m.ces, m.ci_high, m.ces], [y, y + 0.18, y, y - 0.18], color="C3", zorder=3)
        ax.text(m.ces, y + 0.3, f"CES {m.ces:.2f} [{m.ci_low:.2f}, {m.ci_high:.2f}], tau^2 {m.tau2:.3f}",
                ha="center", va="bottom", fontsize=8, bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
        labels.append("raw" if r.calibration == "none" else r.calibration)
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(results)), labels[::-1])
    ax.set_ylim(-0.6, len(results) - 0.3)
    ax.set_xlabel("effect size d of each draw (points); combined effect size and its draw-level 95% interval "
                  "(diamond)")
    r0 = results[0]
    ax.set_title(f"CEAT {r0.test} on {r0.model}: {r0.meta.n} draws (seed {r0.seed})", fontsize=10)
    return fig


def write_ceat_figure(results: Sequence[Any], path: str | Path, *, dpi: int = 150) -> Path:
    """Write :func:`figure_ceat_forest` to ``path`` (``.png``, ``.pdf`` or ``.svg``); returns the path."""
    return write_figure_file(lambda: figure_ceat_forest(results), path, dpi=dpi, what='CEAT figure')
