r"""The decision-aid figures of the report: why d moved (paper §5.5) and anisotropy severity (§5.4).

* :func:`figure_mechanism` — one row per test of one model and calibrated
  space: each of the reference covariance's top principal directions'
  contribution to d, raw | calibrated, and the rest. A direction's
  contribution to d is :math:`d\,c_k/C` (:math:`d = C/\operatorname{SD}(s)`,
  :math:`C = \sum_k c_k`, :mod:`isoeat.diagnostics.mechanism`), so a row of
  the raw panel adds up to :math:`d_R` and of the calibrated one to :math:`d_W`.
* :func:`figure_severity` — across the models of a grid: the raw mean
  pairwise cosine (anisotropy severity) against the number of tests whose
  significance changed (Disappearing + Emerging), with Spearman's
  :math:`\rho` (:func:`isoeat.stats.rank.spearman`, scipy's definition) on
  the figure. Drawn only with at least :data:`MIN_SEVERITY_MODELS` models
  measured; :func:`severity_points` says why not otherwise.

Rendered with matplotlib's Agg canvas (no pyplot), PNG only (the report
embeds PNG): by :func:`write_aid_figures` in this process, or planned by
:func:`aid_plan` and built and drawn with the report's other figures.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._io import atomic_write_bytes
from .mechanism_data import mechanism_records

__all__ = ["MIN_SEVERITY_MODELS", "figure_mechanism", "severity_points", "figure_severity", "write_aid_figures",
           "aid_figures", "aid_plan",
           "AID_PREFIXES", "aid_figure_names", "is_aid_figure"]

#: The severity plot needs at least this many models with a raw mean cosine (a rank correlation of 2 is ±1).
MIN_SEVERITY_MODELS = 3
#: File-name prefixes of the figures written here (the report shows them in its decision-aids section).
AID_PREFIXES = ("mechanism-", "severity-")
_RAW, _CAL = "#4a4a4a", "#3b8ad9"
_DPI = 150


def _figure(w: float, h: float, layout: str | None = "constrained") -> Any:
    from .figures import require_matplotlib

    require_matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=(w, h), layout=layout)


def _bars(rec: dict, d: float, side: str) -> list[float]:
    """Contributions to d of the stored top directions and of the rest (``side``: "raw" or "calibrated")."""
    C = rec[f"contrast_{side}"]
    c = rec[f"c_{side}"]
    if not (math.isfinite(d) and C):
        return [float("nan")] * (len(c) + 1)
    parts = [d * ck / C for ck in c]
    return parts + [d - sum(parts)]


def figure_mechanism(res: Any, model: str, calibration: str) -> Any | None:
    """Each top principal direction's contribution to d, raw | calibrated: one row per test, one column per direction.

    Two heat maps on one diverging colour scale (the same for both), columns
    k = 1..10 and "rest" (all other directions), rows the tests labelled with
    their change class and d raw -> calibrated. A row of a panel adds up to
    that space's d. Images, not bars: one artist per panel keeps it cheap.
    """
    import numpy as np

    recs = mechanism_records(res, model, calibration)
    if not recs:
        return None
    k = max(len(rec["c_raw"]) for _, _, rec in recs)
    pad = lambda v: list(v[:-1]) + [float("nan")] * (k + 1 - len(v)) + [v[-1]]  # noqa: E731 - rest stays last
    M = {side: np.array([pad(_bars(rec, row[f"d_{side}"], side)) for _, row, rec in recs], dtype=float)
         for side in ("raw", "calibrated")}
    finite = np.concatenate([m[np.isfinite(m)] for m in M.values()])
    vmax = float(np.abs(finite).max()) if finite.size else 1.0
    n = len(recs)
    h = 1.6 + 0.24 * n
    fig = _figure(10.5, h, layout=None)
    left, right, top, bottom = 1.9 / 10.5, 0.9 / 10.5, 0.62 / h, 0.5 / h
    gap = 0.25 / 10.5
    w = (1 - left - right - gap) / 2
    cmap = _cmap()
    labels = [f"{t} ({row['change'][0]})  {_d(row['d_raw'])} -> {_d(row['d_calibrated'])}" for t, row, _ in recs]
    image = None
    for i, side in enumerate(("raw", "calibrated")):
        ax = fig.add_axes((left + i * (w + gap), bottom, w, 1 - top - bottom))
        image = ax.imshow(M[side], cmap=cmap, vmin=-vmax, vmax=vmax, aspect="auto", interpolation="nearest")
        ax.set_xticks(range(k + 1), [str(j + 1) for j in range(k)] + ["rest"], fontsize=7)
        ax.set_yticks(range(n), labels if i == 0 else [""] * n, fontsize=7)
        ax.tick_params(length=0)
        ax.axvline(k - 0.5, color="white", lw=2.5)  # the top directions | the rest
        ax.set_title("raw space" if side == "raw" else f"after {calibration}", fontsize=8)
        ax.set_xlabel("principal direction k of the reference covariance (1 = most variance)", fontsize=7)
    cax = fig.add_axes((1 - right + 0.15 / 10.5, bottom, 0.12 / 10.5, 1 - top - bottom))
    cb = fig.colorbar(image, cax=cax)
    cb.ax.tick_params(labelsize=6.5)
    cb.set_label("contribution to d (d * c_k / C)", fontsize=7)
    fig.suptitle(f"Why d moved: {model}, raw vs {calibration}. Each row adds up to its d; shrunk top directions "
                 "fade after whitening", fontsize=8.5, y=1 - 0.12 / h, va="top")
    return fig


def _d(x: Any) -> str:
    try:
        return f"{float(x):.2f}"
    except (TypeError, ValueError):
        return "nan"


def _cmap() -> Any:
    from matplotlib import colormaps

    return colormaps["RdBu_r"]


def severity_points(res: Any, calibration: str) -> tuple[list[tuple[str, float, int]], str]:
    """``(model, raw mean cosine, significance changes)`` per model with both measured, and a note ('' if drawable)."""
    raw_label = next((c["label"] for c in res.calibrations if c["name"] == "none"), "none")
    cos = {a["model"]: a.get("mean_cosine") for a in res.anisotropy if a.get("calibration") == raw_label}
    points = []
    for m in res.models:
        rows = [r for r in res.comparisons if r["model"] == m["label"] and r["calibration"] == calibration]
        mc = cos.get(m["label"])
        if rows and mc is not None and math.isfinite(mc):
            points.append((m["label"], float(mc), sum(r["change"] != "Stable" for r in rows)))
    if len(points) < MIN_SEVERITY_MODELS:
        why = "no raw anisotropy measured" if not cos else f"{len(points)} model(s) measured here"
        return points, (f"The anisotropy-severity plot (paper §5.4) needs at least {MIN_SEVERITY_MODELS} models with "
                        f"a raw mean cosine and a comparison ({why}); not drawn.")
    return points, ""


def figure_severity(res: Any, calibration: str) -> Any | None:
    """Raw mean cosine against significance changes per model, Spearman's rho on the figure (None below 3 models)."""
    from .._errors import DataFormatError
    from ..stats.rank import spearman

    points, note = severity_points(res, calibration)
    if note:
        return None
    xs, ys = [p[1] for p in points], [p[2] for p in points]
    try:
        rho = spearman(xs, ys)
    except DataFormatError:  # a constant axis (e.g. no change in any model): rho is undefined, said on the figure
        rho = math.nan
    fig = _figure(5.6, 3.8)
    ax = fig.subplots()
    ax.scatter(xs, ys, s=36, color=_CAL, zorder=3)
    for name, x, y in points:
        ax.annotate(name, (x, y), xytext=(4, 4), textcoords="offset points", fontsize=7)
    n_tests = len({r["test"] for r in res.comparisons})
    ax.set_xlabel("raw mean pairwise cosine (anisotropy severity)", fontsize=8)
    ax.set_ylabel(f"significance changes (D + E) of {n_tests} tests", fontsize=8)
    ax.set_ylim(-0.5, max(ys) + 1)
    ax.margins(x=0.15)  # room for the labels of the outermost points
    ax.tick_params(labelsize=7)
    rho_txt = "undefined (a constant axis)" if not math.isfinite(rho) else f"{rho:.2f}"
    ax.set_title(f"Anisotropy severity vs changed results, raw vs {calibration}\n"
                 f"Spearman's rho = {rho_txt} (n = {len(points)} models)", fontsize=8.5)
    return fig


def _save_png(fig: Any, path: Path, dpi: int) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from ._render import literal_text

    FigureCanvasAgg(fig)
    literal_text(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": "isoeat"}, pil_kwargs={"compress_level": 3})
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, buf.getvalue())
    return path


def aid_figure_names(res: Any) -> dict[tuple[str, str | None, str], str]:
    """File stems of the figures: ``("mechanism", model, cal)`` and ``("severity", None, cal)`` to a unique stem."""
    from .._names import unique_names

    cals = [c["label"] for c in res.calibrations if c["name"] != "none"]
    pairs = [(m["label"], c) for m in res.models for c in cals]
    names = {("mechanism", m, c): f"mechanism-{n}" for (m, c), n in zip(pairs, unique_names(pairs))}
    names.update({("severity", None, c): f"severity-{n}" for c, n in zip(cals, unique_names([(c,) for c in cals]))})
    return names


def aid_plan(res: Any) -> list[tuple[str, Any]]:
    """``(file stem, draw)`` of every decision-aid figure ``res`` may support, nothing built: ``draw()`` builds the
    mechanism figure of a (model, calibrated space) or the severity figure of a space, or gives None. ``isoeat
    report`` draws them with the other figures (:func:`isoeat.reporting.figures.write_figures`, ``extra=``), PNG
    only, each built in the process that draws it."""
    return [(stem, (lambda model=model, cal=cal: figure_mechanism(res, model, cal)) if kind == "mechanism"
             else (lambda cal=cal: figure_severity(res, cal)))
            for (kind, model, cal), stem in aid_figure_names(res).items()]


def aid_figures(res: Any) -> list[tuple[str, Any]]:
    """``(file stem, Figure)`` of every decision-aid figure ``res`` supports (built, not drawn): the mechanism
    figure of every (model, calibrated space), the severity figure of every space (:func:`aid_plan`, built)."""
    return [(stem, fig) for stem, draw in aid_plan(res) if (fig := draw()) is not None]


def write_aid_figures(res: Any, folder: str | Path, *, dpi: int | None = None) -> list[Path]:
    """Draw the mechanism figure of every (model, calibrated space) and the severity figure of every space (PNG).

    ``dpi``: default the config's ``report.dpi``, else 150 (as the other figures).
    """
    from .figures import check_dpi

    folder = Path(folder)
    rep = ((getattr(res, "experiment", None) or {}).get("config", {}) or {}).get("report", {}) or {}
    dpi = check_dpi(dpi if dpi is not None else (rep.get("dpi") or _DPI))
    return [_save_png(fig, folder / f"{stem}.png", dpi) for stem, fig in aid_figures(res)]


def is_aid_figure(path: Path, names: Sequence[str] = AID_PREFIXES) -> bool:
    """Whether ``path`` is one of this module's figures (by its file name)."""
    return Path(path).name.startswith(tuple(names))
