"""Figures of a sensitivity analysis (matplotlib, imported lazily).

Reads a :class:`~isoeat.experiments.sensitivity.SensitivityResult` (or its
tidy records) and draws, for one swept choice, the calibrated WEAT effect
size d of every test:

* ``"eps"`` and ``"reference_size"``: d against the setting (log axis), one
  line per test through the mean over the reference draws, a band from the
  smallest to the largest d over the draws, filled markers where the
  majority of draws is significant (p < alpha) and hollow ones where it is
  not; a dotted vertical line marks the default setting;
* ``"reference"`` and ``"calibration"``: one point per test and setting
  (mean over draws) with a bar over the draws.

Nothing here computes statistics; no global matplotlib state (pyplot, the
backend) is touched: figures are :class:`matplotlib.figure.Figure` objects.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._errors import ConfigError, MissingDependencyError
from .._io import atomic_write_with
from .._validate import check_choice
from ..labels import is_significant

__all__ = ["plot_sensitivity", "save_sensitivity_figures", "require_matplotlib", "FIGURE_KINDS"]

FIGURE_KINDS = ("eps", "reference_size", "reference", "calibration")
_XLABEL = {
    "eps": "ε (regulariser added to the eigenvalues)",
    "reference_size": "reference sample size n (log scale)",
    "reference": "reference source",
    "calibration": "calibration",
}
_TITLE = {
    "eps": "d against ε",
    "reference_size": "d against reference size",
    "reference": "d by reference source",
    "calibration": "d by calibration",
}


def require_matplotlib() -> Any:
    """Import matplotlib or raise :class:`~isoeat.MissingDependencyError` with the install line."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError(
            'figures need matplotlib, which is not installed: pip install "isoeat[plot]"'
        ) from None
    return Figure


def _records(result: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    if hasattr(result, "records"):
        return result.records(), {
            "model": result.model, "calibration": result.calibration, "alpha": result.alpha,
            "default": dict(result.default), "sweep": dict(result.sweep),
        }
    recs = [dict(r) for r in result]
    return recs, {}


def _stats(values: Sequence[float]) -> tuple[float, float, float]:
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not vals:
        return float("nan"), float("nan"), float("nan")
    return sum(vals) / len(vals), min(vals), max(vals)


def plot_sensitivity(result: Any, kind: str = "eps", ax: Any = None, *, alpha: float | None = None) -> Any:
    """Draw d against one swept choice; returns the Figure.

    Parameters
    ----------
    result : SensitivityResult or iterable of row dicts
    kind : {"eps", "reference_size", "reference", "calibration"}
    ax : matplotlib Axes, optional
        Draw into it; otherwise a new Figure is made (no pyplot).
    alpha : float, optional
        Significance level of the markers (default: the result's).
    """
    Figure = require_matplotlib()
    kind = check_choice("kind", kind, FIGURE_KINDS)
    recs, meta = _records(result)
    alpha = float(alpha if alpha is not None else meta.get("alpha", 0.05))
    rows = [r for r in recs if r["kind"] == kind]
    if not rows:
        raise ConfigError(f"the result has no {kind!r} sweep to plot")
    tests = list(dict.fromkeys(r["test"] for r in recs))
    bias = {r["test"]: r.get("bias_type", "") for r in recs}
    if ax is None:
        fig = Figure(figsize=(8.4, 4.8), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    from matplotlib import colormaps

    cmap = colormaps["tab10"] if len(tests) <= 10 else colormaps["tab20"]
    numeric = kind in ("eps", "reference_size")
    if numeric:
        xkey = "eps" if kind == "eps" else "n_reference"
        for i, t in enumerate(tests):
            colour = cmap(i % cmap.N)
            by_x: dict[float, list[dict[str, Any]]] = {}
            for r in rows:
                if r["test"] == t:
                    by_x.setdefault(float(r[xkey]), []).append(r)
            xs = sorted(by_x)
            mean, lo, hi, sig = [], [], [], []
            for x in xs:
                m, a, b = _stats([r["effect_size"] for r in by_x[x]])
                mean.append(m), lo.append(a), hi.append(b)
                sig.append(sum(is_significant(r["p_value"], alpha) for r in by_x[x]) * 2 > len(by_x[x]))
            label = f"{t} ({bias[t]})" if bias.get(t) else t
            ax.plot(xs, mean, "-", color=colour, lw=1.4, label=label)
            if len(xs) and any(b > a for a, b in zip(lo, hi)):
                ax.fill_between(xs, lo, hi, color=colour, alpha=0.18, lw=0)
            for x, m, s in zip(xs, mean, sig):
                ax.plot([x], [m], "o", ms=5, color=colour, mfc=colour if s else "white", mew=1.2)
        ax.set_xscale("log")
        default = meta.get("default", {})
        dx = default.get("eps") if kind == "eps" else default.get("n_reference_used", default.get("n_reference"))
        if kind == "eps" and meta.get("sweep", {}).get("eps_mode") == "relative":
            ax.set_xlabel("ε relative to the mean eigenvalue tr(Σ)/d of the reference sample")
            dx = None  # the default is absolute; it has no fixed place on a relative axis
        else:
            ax.set_xlabel(_XLABEL[kind])
        if dx is not None and not (isinstance(dx, float) and math.isnan(dx)):
            ax.axvline(float(dx), color="0.4", ls=":", lw=1)
            ax.annotate("default", (float(dx), 1.0), xycoords=("data", "axes fraction"), xytext=(-3, -12),
                        textcoords="offset points", fontsize=8, color="0.3", ha="right")
    else:
        if kind == "calibration":  # uncalibrated d first, side by side (paper's recommendation)
            rows = [{**r, "setting": "none (raw)"} for r in recs if r["kind"] == "raw"] + rows
        settings = list(dict.fromkeys(r["setting"] for r in rows))
        short = [Path(s).name if kind == "reference" and s != "top" else s for s in settings]
        width = 0.8 / max(1, len(tests))
        for i, t in enumerate(tests):
            colour = cmap(i % cmap.N)
            for k, s in enumerate(settings):
                sel = [r for r in rows if r["test"] == t and r["setting"] == s]
                if not sel:
                    continue
                m, a, b = _stats([r["effect_size"] for r in sel])
                sgn = sum(is_significant(r["p_value"], alpha) for r in sel) * 2 > len(sel)
                x = k - 0.4 + width * (i + 0.5)
                ax.plot([x, x], [a, b], "-", color=colour, lw=1.2)
                ax.plot([x], [m], "o", ms=5, color=colour, mfc=colour if sgn else "white", mew=1.2,
                        label=(f"{t} ({bias[t]})" if bias.get(t) else t) if k == 0 else None)
        ax.set_xticks(range(len(settings)), short, rotation=20 if max(map(len, short)) > 10 else 0)
        ax.set_xlabel(_XLABEL[kind])
    ax.axhline(0.0, color="0.6", lw=0.8)
    ax.set_ylabel("WEAT effect size d (calibrated)")
    sweep = meta.get("sweep", {})
    reps = sweep.get("repeats")
    draw = sweep.get("draw")
    what = "d" if kind == "calibration" else f"{meta.get('calibration', '')}-calibrated d"
    title = f"{meta.get('model', '')}: {what} {_TITLE[kind][2:]}" if meta else _TITLE[kind]
    ax.set_title(title, fontsize=11, pad=18)
    centre, spread = ("line", "band") if numeric else ("point", "bar")
    note = (f"{centre}: mean over {reps} reference draw{'s' if reps != 1 else ''} ({draw}); {spread}: min–max over "
            f"draws; filled: significant (p < {alpha:g}) in most draws" if reps else
            f"filled: significant (p < {alpha:g})")
    ax.text(0.5, 1.012, note, transform=ax.transAxes, fontsize=7.5, color="0.35", ha="center", va="bottom")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.grid(True, which="major", color="0.92", lw=0.6)
    return fig


def save_sensitivity_figures(
    result: Any, out_dir: str | Path, *, formats: Sequence[str] = ("png", "pdf"), dpi: int = 150
) -> list[Path]:
    """Write ``sensitivity_<kind>.<fmt>`` for every swept kind, atomically; returns the paths.

    ``sensitivity_eps`` and ``sensitivity_reference_size`` are written when
    those choices were swept; ``sensitivity_reference`` and
    ``sensitivity_calibration`` when the result has them. ``dpi`` must lie in
    [10, 1200]; ``out_dir`` is created only when there is a figure to write.
    """
    from ._render import literal_text
    from .figures import check_dpi

    dpi = check_dpi(dpi)
    require_matplotlib()
    recs, _ = _records(result)
    kinds = [k for k in FIGURE_KINDS if any(r["kind"] == k for r in recs)]
    out = Path(out_dir)
    if kinds:
        out.mkdir(parents=True, exist_ok=True)
    paths = []
    for kind in kinds:
        fig = literal_text(plot_sensitivity(result, kind))
        for fmt in formats:
            p = out / f"sensitivity_{kind}.{fmt}"
            atomic_write_with(p, lambda fh, fig=fig, fmt=fmt: fig.savefig(fh, format=fmt, dpi=dpi))
            paths.append(p)
    return paths
