r"""The decision-aid figures of the report: why d moved (paper §5.5) and anisotropy severity (§5.4).

* :func:`figure_mechanism` — one panel per test of one model and calibrated
  space: each of the reference covariance's top principal directions'
  contribution to d, raw and calibrated, and the rest. A direction's
  contribution to d is :math:`d\,c_k/C` (:math:`d = C/\operatorname{SD}(s)`,
  :math:`C = \sum_k c_k`, :mod:`isoeat.diagnostics.mechanism`), so a panel's
  raw bars and rest add up to :math:`d_R` and its calibrated ones to :math:`d_W`.
* :func:`figure_severity` — across the models of a grid: the raw mean
  pairwise cosine (anisotropy severity) against the number of tests whose
  significance changed (Disappearing + Emerging), with Spearman's
  :math:`\rho` (:func:`isoeat.stats.rank.spearman`, scipy's definition) on
  the figure. Drawn only with at least :data:`MIN_SEVERITY_MODELS` models
  measured; :func:`severity_points` says why not otherwise.

Rendered with matplotlib's Agg canvas (no pyplot), PNG only (the report
embeds PNG), in this process.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any, Sequence

from .._io import atomic_write_bytes
from .mechanism_data import mechanism_records

__all__ = ["MIN_SEVERITY_MODELS", "figure_mechanism", "severity_points", "figure_severity", "write_aid_figures",
           "AID_PREFIXES", "aid_figure_names", "is_aid_figure"]

#: The severity plot needs at least this many models with a raw mean cosine (a rank correlation of 2 is ±1).
MIN_SEVERITY_MODELS = 3
#: File-name prefixes of the figures written here (the report shows them in its decision-aids section).
AID_PREFIXES = ("mechanism-", "severity-")
_RAW, _CAL = "#4a4a4a", "#3b8ad9"
_DPI = 150


def _figure(w: float, h: float) -> Any:
    from .figures import require_matplotlib

    require_matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=(w, h), layout="constrained")


def _bars(rec: dict, d: float, side: str) -> list[float]:
    """Contributions to d of the stored top directions and of the rest (``side``: "raw" or "calibrated")."""
    C = rec[f"contrast_{side}"]
    c = rec[f"c_{side}"]
    if not (math.isfinite(d) and C):
        return [float("nan")] * (len(c) + 1)
    parts = [d * ck / C for ck in c]
    return parts + [d - sum(parts)]


def figure_mechanism(res: Any, model: str, calibration: str) -> Any | None:
    """Bars of each top principal direction's contribution to d, raw and calibrated, one panel per test."""
    recs = mechanism_records(res, model, calibration)
    if not recs:
        return None
    n = len(recs)
    ncol = min(5, n)
    nrow = math.ceil(n / ncol)
    fig = _figure(2.3 * ncol + 0.4, 2.0 * nrow + 0.7)
    axes = fig.subplots(nrow, ncol, squeeze=False, sharey=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax, (test, row, rec) in zip(axes.flat, recs):
        k = len(rec["c_raw"])
        xs = list(range(k + 1))
        raw = _bars(rec, row["d_raw"], "raw")
        cal = _bars(rec, row["d_calibrated"], "calibrated")
        ax.bar([x - 0.2 for x in xs], raw, width=0.4, color=_RAW, label="raw")
        ax.bar([x + 0.2 for x in xs], cal, width=0.4, color=_CAL, label="calibrated")
        ax.axhline(0, color="#999999", lw=0.6)
        ax.set_xticks(xs, [str(i + 1) if i < k else "rest" for i in xs], fontsize=6.5)
        ax.tick_params(axis="y", labelsize=6.5)
        share = rec["share_raw"].get("3")
        share_txt = "" if share is None or not math.isfinite(share) else f", top-3 {round(100 * share) or 0:d}%"
        ax.set_title(f"{test} ({row['change'][0]}): d {row['d_raw']:.2f} -> {row['d_calibrated']:.2f}{share_txt}",
                     fontsize=7.5)
    axes.flat[0].legend(fontsize=6.5, frameon=False, loc="best")
    fig.supxlabel("principal direction k of the reference covariance (1 = most variance)", fontsize=8)
    fig.supylabel("contribution to d", fontsize=8)
    fig.suptitle(f"Why d moved: {model}, raw vs {calibration} (each bar d * c_k / C; a panel's bars add up to d)",
                 fontsize=9)
    return fig


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
    from ..stats.rank import spearman

    points, note = severity_points(res, calibration)
    if note:
        return None
    xs, ys = [p[1] for p in points], [p[2] for p in points]
    rho = spearman(xs, ys)
    fig = _figure(5.6, 3.8)
    ax = fig.subplots()
    ax.scatter(xs, ys, s=36, color=_CAL, zorder=3)
    for name, x, y in points:
        ax.annotate(name, (x, y), xytext=(4, 4), textcoords="offset points", fontsize=7)
    n_tests = len({r["test"] for r in res.comparisons})
    ax.set_xlabel("raw mean pairwise cosine (anisotropy severity)", fontsize=8)
    ax.set_ylabel(f"significance changes (D + E) of {n_tests} tests", fontsize=8)
    ax.set_ylim(-0.5, max(ys) + 1)
    ax.tick_params(labelsize=7)
    rho_txt = "undefined (a constant axis)" if not math.isfinite(rho) else f"{rho:.2f}"
    ax.set_title(f"Anisotropy severity vs changed results, raw vs {calibration}\n"
                 f"Spearman's rho = {rho_txt} (n = {len(points)} models)", fontsize=8.5)
    return fig


def _save_png(fig: Any, path: Path, dpi: int) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": "isoeat"}, pil_kwargs={"compress_level": 3})
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, buf.getvalue())
    return path


def aid_figure_names(res: Any) -> dict[tuple[str, str | None, str], str]:
    """File stems of the figures: ``("mechanism", model, cal)`` and ``("severity", None, cal)`` to a unique stem."""
    from .paper_tables import unique_names

    cals = [c["label"] for c in res.calibrations if c["name"] != "none"]
    pairs = [(m["label"], c) for m in res.models for c in cals]
    names = {("mechanism", m, c): f"mechanism-{n}" for (m, c), n in zip(pairs, unique_names(pairs))}
    names.update({("severity", None, c): f"severity-{n}" for c, n in zip(cals, unique_names([(c,) for c in cals]))})
    return names


def write_aid_figures(res: Any, folder: str | Path, *, dpi: int | None = None) -> list[Path]:
    """Draw the mechanism figure of every (model, calibrated space) and the severity figure of every space (PNG).

    ``dpi``: default the config's ``report.dpi``, else 150 (as the other figures).
    """
    from .figures import check_dpi

    folder = Path(folder)
    rep = ((getattr(res, "experiment", None) or {}).get("config", {}) or {}).get("report", {}) or {}
    dpi = check_dpi(dpi if dpi is not None else (rep.get("dpi") or _DPI))
    out: list[Path] = []
    for (kind, model, cal), stem in aid_figure_names(res).items():
        fig = figure_mechanism(res, model, cal) if kind == "mechanism" else figure_severity(res, cal)
        if fig is not None:
            out.append(_save_png(fig, folder / f"{stem}.png", dpi))
    return out


def is_aid_figure(path: Path, names: Sequence[str] = AID_PREFIXES) -> bool:
    """Whether ``path`` is one of this module's figures (by its file name)."""
    return Path(path).name.startswith(tuple(names))
