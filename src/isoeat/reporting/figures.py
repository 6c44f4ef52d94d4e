r"""The paper's figures from an experiment's tidy results (matplotlib, Agg, PNG and PDF).

* **Figure 1**: pairwise cosine heatmaps of sampled reference vectors, before and after calibration.
* **Figure 2**: explained-variance ratio of the top principal components (log scale), before and after.
* **Figure 3**: models x tests; each cell split by its anti-diagonal, raw :math:`d` in the upper-left
  triangle and calibrated :math:`d` in the lower-right, significant ones bold with an asterisk and a border.
* **Figure 4**: calibrated vs raw :math:`d` by bias type; colour = change class, marker = model family.
* **Per-test heatmaps** (the tutorial's figure): cosine of every target word with every attribute
  word, X and Y side by side, A | B separated by a white line, one row per space.

matplotlib is imported lazily and only through its object-oriented API
(``matplotlib.figure.Figure``), so no global pyplot state or backend is touched.
Missing matplotlib raises :class:`~isoeat.MissingDependencyError` with the pip line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import MissingDependencyError
from .._limits import MAX_DPI, MIN_DPI  # noqa: F401 - resolutions accepted by write_figures (one home)
from ..labels import is_significant
from ._render import _RC, CpuProbe, Entry, PngOnly, _jobs, _save, draw_all, fix_layout, literal_text  # noqa: F401 - _save too
from .heatmap_plan import _space_title

__all__ = [
    "require_matplotlib",
    "figure_cosine_heatmaps",
    "figure_explained_variance",
    "figure_effect_sizes",
    "figure_scatter",
    "figure_test_heatmap",
    "write_figures",
    "figure_plan",
    "check_dpi",
    "fix_layout",
    "MIN_DPI",
    "MAX_DPI",
    "CHANGE_COLORS",
    "FAMILY_MARKERS",
]

#: Colours of the paper's Figure 4: Disappearing red, Stable pink, Emerging blue.
CHANGE_COLORS = {"Disappearing": "#d62728", "Stable": "#f4a3c1", "Emerging": "#1f5fbf"}
#: Markers of the paper's Figure 4: circle static, triangle contextualized, square contrastive.
FAMILY_MARKERS = {"static": "o", "contextualized": "^", "contrastive": "s"}
_FAMILY_ORDER = ("static", "contextualized", "contrastive")
_BIAS_ORDER = ("Valence", "Race", "Gender", "Health", "Age")
_CLIP = 1.5
#: Largest figure drawn, in pixels: per side (Agg's own limit is 2**16) and in all (about 400 MB of RGBA).
MAX_SIDE_PIXELS, MAX_PIXELS = 2**15, 100_000_000


def require_matplotlib() -> Any:
    """Import matplotlib (Agg-safe, no pyplot) or raise MissingDependencyError with the pip line."""
    try:
        import matplotlib
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError:
        raise MissingDependencyError(
            'figures need matplotlib: pip install "isoeat[plot]" (or pip install matplotlib)'
        ) from None
    return matplotlib


def _figure(w: float, h: float, layout: str | None = "constrained") -> Any:
    """A bare ``Figure`` (no pyplot) on its own Agg canvas, which keeps one renderer for layout, text sizes and PNG."""
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), layout=layout)
    FigureCanvasAgg(fig)
    return fig


def _models_in_family_order(res: Any, present: set[str]) -> list[dict]:
    ms = [m for m in res.models if m["label"] in present]
    return sorted(ms, key=lambda m: (_FAMILY_ORDER.index(m["family"]) if m["family"] in _FAMILY_ORDER else 9,
                                     res.models.index(m)))


# --------------------------------------------------------------------------- Figure 1
def figure_cosine_heatmaps(res: Any) -> Any | None:
    """Figure 1: one row per model, one column per space; shared colour bar (cosine, -1..1)."""
    items = [(m, c) for m in res.models for c in res.calibrations if res.heatmap(m["label"], c["label"]) is not None]
    if not items:
        return None
    models = [m for m in res.models if any(i[0] is m for i in items)]
    cals = [c for c in res.calibrations if any(i[1] is c for i in items)]
    fig = _figure(2.6 * len(cals) + 1.2, 2.5 * len(models) + 0.6)
    axes = fig.subplots(len(models), len(cals), squeeze=False)
    im = None
    for i, m in enumerate(models):
        for j, c in enumerate(cals):
            ax = axes[i][j]
            M = res.heatmap(m["label"], c["label"])
            if M is None:
                ax.set_axis_off()
                continue
            im = ax.imshow(M, cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
            a = next((a for a in res.anisotropy if a["model"] == m["label"] and a["calibration"] == c["label"]), {})
            ax.set_title(f"{m['label']} — {_space_title(res, c['label'])}\n"
                         f"mean cos {a.get('mean_cosine', float('nan')):.3f}"
                         f" ± {a.get('sd_cosine', float('nan')):.3f}", fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
            if j == 0:
                ax.set_ylabel(f"{M.shape[0]} sampled vectors", fontsize=8)
    if im is not None:
        cb = fig.colorbar(im, ax=axes, shrink=0.8, aspect=30)
        cb.set_label("cosine similarity")
    n = res.anisotropy[0].get("n_samples", "?") if res.anisotropy else "?"
    shown = res.heatmap(models[0]["label"], cals[0]["label"])
    _title(fig, f"Figure 1: pairwise cosine similarity of sampled reference vectors, before and after calibration "
           f"(mean ± SD over all {n} vectors; the first {shown.shape[0]} shown)", 2.6 * len(cals) + 1.2)
    return literal_text(fig)  # labels are data: a name with two $ signs is drawn as written


# --------------------------------------------------------------------------- Figure 2
def figure_explained_variance(res: Any) -> Any | None:
    """Figure 2: explained-variance ratio of the top components (log y), one panel per space."""
    if not res.anisotropy:
        return None
    cals = [c for c in res.calibrations if any(a["calibration"] == c["label"] for a in res.anisotropy)]
    fig = _figure(4.2 * len(cals) + 0.5, 3.6)
    axes = fig.subplots(1, len(cals), squeeze=False, sharey=True)[0]
    cmap = _colors(len(res.models))
    minors: list[Any] = []
    for j, c in enumerate(cals):
        ax = axes[j]
        for k, m in enumerate(res.models):
            a = next((a for a in res.anisotropy if a["model"] == m["label"] and a["calibration"] == c["label"]), None)
            if not a or not a.get("explained_variance_ratio"):
                continue
            evr = np.asarray(a["explained_variance_ratio"], dtype=float)
            ax.plot(np.arange(1, len(evr) + 1), evr, marker=FAMILY_MARKERS.get(m["family"], "o"), markersize=3,
                    linewidth=1.3, color=cmap[k], label=f"{m['label']} ({m['family']})")
            dim = a.get("dim")
            if dim and j == 0 and k == 0:
                pass
        ax.set_yscale("log")
        _plain_log_labels(ax.yaxis)
        ax.set_xlabel("principal component (rank)")
        ax.set_title(_space_title(res, c["label"]), fontsize=10)
        ax.grid(True, which="both", alpha=0.25)
        minors.append(ax)
        dims = {a.get("dim") for a in res.anisotropy if a.get("dim")}
        for d in dims:
            ax.axhline(1.0 / d, color="grey", linestyle=":", linewidth=1)
        if j == 0:
            ax.set_ylabel("explained variance ratio (log scale)")
    _light_minor_ticks(minors, alpha=0.25)
    axes[-1].legend(fontsize=8, loc="upper right")
    k = res.anisotropy[0].get("top_k", "")
    _title(fig, f"Figure 2: explained variance ratio of the top {k} principal components of the sampled reference "
           "vectors, before and after calibration (dotted: 1/dim, a perfectly isotropic space)", 4.2 * len(cals) + 0.5)
    return literal_text(fig)  # labels are data: a name with two $ signs is drawn as written


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _power_label(x: float) -> str:
    """``x`` as plain text m×10ⁿ with Unicode superscripts: ``10⁻²``, ``2×10⁻³`` (m to 3 significant digits).

    Examples
    --------
    >>> _power_label(0.002), _power_label(1.0)
    ('2×10⁻³', '10⁰')
    """
    if not (x > 0 and math.isfinite(x)):
        return ""
    e = math.floor(math.log10(x))
    m = float(f"{x / 10.0 ** e:.3g}")
    if m >= 10:  # 9.9999... rounded up
        m, e = m / 10, e + 1
    exp = str(e).translate(_SUPERSCRIPT)
    return f"10{exp}" if m == 1 else f"{m:g}×10{exp}"


def _plain_log_labels(axis: Any) -> None:
    """Label a log ``axis`` as matplotlib would (same ticks labelled), in plain text instead of mathtext.

    matplotlib's log labels are mathtext (``$\\mathdefault{10^{-2}}$``), parsed on
    every layout and draw of every format: a sixth of Figure 2's time.
    """
    from matplotlib.ticker import LogFormatter

    class PlainLogFormatter(LogFormatter):
        def __call__(self, x: float, pos: Any = None) -> str:
            return _power_label(x) if super().__call__(x, pos) else ""

    axis.set_major_formatter(PlainLogFormatter())
    axis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))


def _light_minor_ticks(axes: Sequence[Any], alpha: float) -> None:
    """The minor ticks and minor gridlines of the log y axes ``axes`` as two artists each, where matplotlib labels
    none of them.

    matplotlib makes a tick object per minor tick (two marks, a gridline, two labels), updated at every layout and
    every draw: 8 per decade, half of Figure 2's time. Where its own minor formatter labels none of them (a view
    over more than one decade: ``LogFormatter.minor_thresholds``), the marks and gridlines are the whole of them:
    drawn here at the places its minor locator gives inside the limits, with the marker, size, width and colour of
    its tick marks and the grid's line, at the axis's z-order. Where a minor tick would be labelled, matplotlib's
    ticks stay. All axes are read before any is changed (axes sharing y share their locators). How many decades
    apart matplotlib puts its major ticks (minor ticks only where they are one apart) depends on the axis's length
    once laid out: :func:`~isoeat.reporting._render.fix_layout` runs :func:`_light_ticks_hold` after the layout.
    """
    import matplotlib as mpl
    from matplotlib.lines import Line2D
    from matplotlib.markers import TICKLEFT
    from matplotlib.ticker import NullLocator

    places = []
    for ax in axes:
        lo, hi = sorted(ax.get_ylim())
        if not (lo > 0 and math.isfinite(hi)):
            return
        ys = [float(y) for y in ax.yaxis.get_minorticklocs() if lo * (1 - 1e-10) <= y <= hi * (1 + 1e-10)]
        fmt = ax.yaxis.get_minor_formatter()
        fmt.set_locs(ys)
        if not ys or any(fmt(y, k) for k, y in enumerate(ys)):
            return
        places.append((ys, ax.yaxis.get_minor_locator()))
    rc = mpl.rcParams
    drawn = []
    for ax, (ys, locator) in zip(axes, places):
        ax.yaxis.set_minor_locator(NullLocator())
        z = ax.yaxis.get_zorder()
        tr = ax.get_yaxis_transform()  # x in axes fractions, y in data
        lines = [ax.add_line(Line2D([v for _ in ys for v in (0.0, 1.0, np.nan)],
                                    [v for y in ys for v in (y, y, np.nan)], transform=tr, color=rc["grid.color"],
                                    linewidth=rc["grid.linewidth"], linestyle=rc["grid.linestyle"], alpha=alpha,
                                    zorder=z)),
                 ax.add_line(Line2D([0.0] * len(ys), ys, transform=tr, linestyle="none", marker=TICKLEFT,
                                    markersize=rc["ytick.minor.size"], markeredgewidth=rc["ytick.minor.width"],
                                    color=rc["ytick.color"], clip_on=False, zorder=z))]
        drawn.append((ax, locator, ys, lines))
    fig = axes[0].figure
    fig._isoeat_after_layout = [*getattr(fig, "_isoeat_after_layout", []), lambda: _light_ticks_hold(drawn)]


def _light_ticks_hold(drawn: Sequence[tuple[Any, Any, list[float], list[Any]]]) -> None:
    """After the layout: each axis whose minor locator, on the laid-out axis, gives other minor ticks than the light
    ones drawn (its major ticks now more than a decade apart: none) gets matplotlib's own ticks back."""
    for ax, locator, ys, lines in drawn:
        lo, hi = sorted(ax.get_ylim())
        if [float(y) for y in locator() if lo * (1 - 1e-10) <= y <= hi * (1 + 1e-10)] != ys:
            ax.yaxis.set_minor_locator(locator)
            for line in lines:
                line.remove()


def _title(fig: Any, text: str, width_in: float, fontsize: float = 10) -> None:
    """A suptitle wrapped to the figure width."""
    import textwrap

    chars = max(40, int(width_in * 72 / (fontsize * 0.55)))
    fig.suptitle("\n".join(textwrap.wrap(text, chars)), fontsize=fontsize)


def _colors(n: int) -> list:
    require_matplotlib()
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return [cmap(i % 10) for i in range(max(n, 1))]


# --------------------------------------------------------------------------- Figure 3
def figure_effect_sizes(res: Any, calibration: str) -> Any | None:
    """Figure 3: models x tests, each cell split: raw d upper-left, calibrated d lower-right."""
    rows = {(r["model"], r["test"]): r for r in res.comparisons if r["calibration"] == calibration}
    if not rows:
        return None
    require_matplotlib()
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.patches import Polygon

    models = _models_in_family_order(res, {k[0] for k in rows})
    test_ids = [t["id"] for t in res.tests if any(k[1] == t["id"] for k in rows)]
    bias = {t["id"]: t.get("bias_type") or "" for t in res.tests}
    test_ids.sort(key=lambda t: (_BIAS_ORDER.index(bias[t]) if bias[t] in _BIAS_ORDER else 9,
                                 [x["id"] for x in res.tests].index(t)))
    nm, nt = len(models), len(test_ids)
    fig = _figure(max(1.05 * nt + 2.6, 5.0), 0.95 * nm + (1.9 if nm <= 3 else 1.4))
    ax = fig.add_subplot(1, 1, 1)
    cmap = colormaps["RdBu_r"]
    norm = Normalize(-_CLIP, _CLIP)
    alpha = res.alpha
    for i, m in enumerate(models):
        for j, tid in enumerate(test_ids):
            r = rows.get((m["label"], tid))
            if r is None:
                ax.add_patch(Polygon([(j, i), (j + 1, i), (j + 1, i + 1), (j, i + 1)], closed=True,
                                     facecolor="#eeeeee", edgecolor="white"))
                ax.text(j + 0.5, i + 0.5, "n/a", ha="center", va="center", fontsize=8, color="#777777")
                continue
            tri = {
                "raw": ([(j, i), (j + 1, i), (j, i + 1)], (j + 0.3, i + 0.32), r["d_raw"], r["p_raw"]),
                "cal": ([(j + 1, i), (j + 1, i + 1), (j, i + 1)], (j + 0.7, i + 0.72), r["d_calibrated"],
                        r["p_calibrated"]),
            }
            for verts, (tx, ty), d, p in tri.values():
                finite = d is not None and math.isfinite(d)
                sig = p is not None and is_significant(p, alpha)
                face = cmap(norm(max(-_CLIP, min(_CLIP, d)))) if finite else "#dddddd"
                ax.add_patch(Polygon(verts, closed=True, facecolor=face, edgecolor="white", linewidth=1.0))
                if sig:
                    ax.add_patch(Polygon(_inset(verts, 0.03), closed=True, fill=False, edgecolor="black",
                                         linewidth=1.0))
                dark = finite and abs(d) > 0.95
                ax.text(tx, ty, (f"{d:.2f}" if finite else "nan") + ("*" if sig else ""), ha="center", va="center",
                        fontsize=8.5, fontweight="bold" if sig else "normal", color="white" if dark else "black")
    ax.set_xlim(0, nt)
    ax.set_ylim(nm, 0)
    ax.set_aspect("equal")
    ax.set_xticks(np.arange(nt) + 0.5)
    ax.set_xticklabels([f"{t}\n{bias[t]}" for t in test_ids], fontsize=9)
    ax.set_yticks(np.arange(nm) + 0.5)
    ax.set_yticklabels([f"{m['label']}\n({m['family']})" for m in models], fontsize=9)
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    # separators between families and between bias types
    for i in range(1, nm):
        if models[i]["family"] != models[i - 1]["family"]:
            ax.axhline(i, color="black", linewidth=2)
    for j in range(1, nt):
        if bias[test_ids[j]] != bias[test_ids[j - 1]]:
            ax.axvline(j, color="black", linewidth=2)
    few = nm <= 3
    cb = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.6 if few else 0.85,
                      aspect=40 if few else 25, location="bottom" if few else "right", pad=0.02)
    cb.set_label(f"effect size d (colour clipped to ±{_CLIP})")
    title = _space_title(res, calibration)
    _title(fig, f"Figure 3: WEAT effect sizes, raw d (upper-left triangle of each cell) vs {title} d "
           f"(lower-right). Bold with * and bordered: p < {alpha:g}.", max(1.05 * nt + 2.6, 5.0))
    return literal_text(fig)  # labels are data: a name with two $ signs is drawn as written


def _inset(verts: list[tuple[float, float]], f: float) -> list[tuple[float, float]]:
    cx = sum(v[0] for v in verts) / 3
    cy = sum(v[1] for v in verts) / 3
    return [(x + (cx - x) * f * 4, y + (cy - y) * f * 4) for x, y in verts]


# --------------------------------------------------------------------------- Figure 4
def figure_scatter(res: Any, calibration: str) -> Any | None:
    """Figure 4: calibrated d against raw d, one panel per bias group (Valence, Race, Gender, Other)."""
    rows = [r for r in res.comparisons if r["calibration"] == calibration
            and all(v is not None and math.isfinite(v) for v in (r["d_raw"], r["d_calibrated"]))]
    if not rows:
        return None
    require_matplotlib()
    from matplotlib.lines import Line2D

    def group(b: str) -> str:
        b = (b or "").strip().lower()
        return {"valence": "Valence", "race": "Race", "gender": "Gender"}.get(b, "Other")

    groups = [g for g in ("Valence", "Race", "Gender", "Other") if any(group(r["bias_type"]) == g for r in rows)]
    ncols = 2 if len(groups) > 1 else 1
    nrows = math.ceil(len(groups) / ncols)
    fig = _figure(4.4 * ncols + 1.6, 4.0 * nrows + 0.4)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    lim = max(1.0, max(max(abs(r["d_raw"]), abs(r["d_calibrated"])) for r in rows)) * 1.1
    letters = "abcd"
    labelled: list[tuple[Any, list[tuple[str, float, float]]]] = []
    for k, g in enumerate(groups):
        ax = axes[k // ncols][k % ncols]
        pts = [r for r in rows if group(r["bias_type"]) == g]
        ax.plot([-lim, lim], [-lim, lim], color="grey", linestyle="--", linewidth=1, zorder=1)
        ax.axhline(0, color="#cccccc", linewidth=0.8, zorder=0)
        ax.axvline(0, color="#cccccc", linewidth=0.8, zorder=0)
        for r in pts:
            ax.scatter(r["d_raw"], r["d_calibrated"], s=48, marker=FAMILY_MARKERS.get(r.get("family"), "o"),
                       c=CHANGE_COLORS.get(r["change"], "grey"), edgecolors="black", linewidths=0.6, zorder=3)
        if len(pts) <= 14:
            labelled.append((ax, [(f"{r['test']} {r['model']}" if len(res.models) > 1 else r["test"],
                                   r["d_raw"], r["d_calibrated"]) for r in pts]))
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.grid(True, alpha=0.2)
        tests = sorted({r["test"] for r in pts}, key=lambda t: [x["id"] for x in res.tests].index(t))
        ax.set_title(f"({letters[k]}) {g}" + (f" ({', '.join(tests)})" if len(tests) <= 4 else ""), fontsize=10)
        ax.set_xlabel("d raw")
        ax.set_ylabel(f"d {_space_title(res, calibration)}")
    for k in range(len(groups), nrows * ncols):
        axes[k // ncols][k % ncols].set_axis_off()
    handles = [Line2D([], [], marker="o", linestyle="", markerfacecolor=c, markeredgecolor="black", markersize=8,
                      label=name) for name, c in CHANGE_COLORS.items()]
    fams = [f for f in _FAMILY_ORDER if any(r.get("family") == f for r in rows)]
    handles += [Line2D([], [], marker=FAMILY_MARKERS[f], linestyle="", markerfacecolor="white",
                       markeredgecolor="black", markersize=8, label=f) for f in fams]
    fig.legend(handles=handles, loc="outside right center", fontsize=8, title="change / family", title_fontsize=8)
    _title(fig, f"Figure 4: WEAT effect size d after ({_space_title(res, calibration)}) vs before calibration, by bias "
           "type. Above the diagonal: larger after calibration (underestimated raw); below: smaller (overestimated).",
           4.4 * ncols + 1.6)
    if labelled:
        from .labels import place_labels

        fix_layout(fig)  # the constrained layout fixes the axes; labels are then placed in pixels
        for ax, items in labelled:
            place_labels(ax, items, fontsize=7, marker_pt=48 ** 0.5)
    return literal_text(fig)  # labels are data: a name with two $ signs is drawn as written


# --------------------------------------------------------------------------- per-test heatmaps (tutorial)
def figure_test_heatmap(res: Any, model: str, test: str) -> Any | None:
    """Cosine of each target word (rows) with each attribute word (columns, A | B), X and Y side by side.

    One row of panels per space (raw, then each calibration), each with its own
    symmetric colour scale and colour bar; the attribute words label the
    columns once, under the last row. Laid out by hand in inches by
    :func:`~isoeat.reporting.heatmap_plan.heatmap_plan` (word labels make
    automatic layout slow; the report's direct renderer draws the same plan),
    labels as plain text (see :func:`_word_labels`).
    """
    from .heatmap_plan import heatmap_plan

    plan = heatmap_plan(res, model, test)
    return None if plan is None else _heatmap_figure(plan)


def _heatmap_figure(plan: Any) -> Any:
    """The matplotlib Figure of a :class:`~isoeat.reporting.heatmap_plan.HeatmapPlan`."""
    from .heatmap_plan import BAR_LABEL_PT, BAR_TICK_PT, EDGE, FOOTER_PT, PANEL_TITLE_PT, TITLE_PT, heatmap_cmap

    width, height = plan.width, plan.height
    fig = _figure(width, height, layout=None)

    def box(b: tuple[float, float, float, float]) -> list[float]:
        x, y_top, w, h = b
        return [x / width, 1 - (y_top + h) / height, w / width, h / height]

    ims = []
    for p in plan.panels:
        ax = fig.add_axes(box(p.box))
        ims.append(_cells(ax, p.cells, cmap=heatmap_cmap(), vmin=-p.vmax, vmax=p.vmax, aspect="auto"))
        ax.axvline(p.split - 0.5, color="white", linewidth=2.5)
        _word_labels(ax, p.rows, p.cols, plan.fs)
        ax.set_title(p.title, fontsize=PANEL_TITLE_PT, pad=4)
    for k, bar in enumerate(plan.bars):
        cb = fig.colorbar(ims[2 * k], cax=fig.add_axes(box(bar.box)))
        cb.ax.tick_params(labelsize=BAR_TICK_PT)
        cb.set_label(bar.label, fontsize=BAR_LABEL_PT)
    fig.text(plan.footer_x / width, EDGE / height, plan.footer, fontsize=FOOTER_PT, va="bottom")
    fig.text(0.5, 1 - EDGE / height, "\n".join(plan.title), ha="center", va="top", fontsize=TITLE_PT)
    return literal_text(fig)  # labels are data: a name with two $ signs is drawn as written


def _cells(ax: Any, M: np.ndarray, **kw: Any) -> Any:
    """``imshow`` of a small matrix with each cell a block of k x k pixels (k up to 16, the image up to 256 px a side).

    With ``interpolation="nearest"`` the PDF backend resamples the image to the
    page's resolution (most of a heatmap's PDF time and size); ``"none"`` embeds
    it as it is, which some PDF viewers smooth when they enlarge it: as blocks
    of k x k pixels the smoothing stays within the outer 1/k of a cell. PNG
    (Agg resamples either way, nearest) is unchanged. Matrices too large for
    k >= 2 are drawn with ``"nearest"``. Returns the mappable of the colour bar
    (``cmap``, ``vmin`` and ``vmax`` are required): the image itself holds
    RGBA bytes, each cell coloured once before it is blown up.
    """
    from .heatmap_plan import block_pixels

    n_r, n_c = M.shape
    k = block_pixels(n_r, n_c)
    if k < 2:
        return ax.imshow(M, interpolation="nearest", **kw)
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    # coloured per cell, then blown up: the colour map runs on n_r x n_c values, not on the k^2 times larger image,
    # and Agg and PDF take RGBA bytes as they are (the same pixels: each block is one value)
    sm = ScalarMappable(Normalize(kw.pop("vmin"), kw.pop("vmax")), kw.pop("cmap"))
    rgba = sm.to_rgba(M, bytes=True)
    blocks = np.repeat(np.repeat(rgba, k, axis=0), k, axis=1)
    ax.imshow(blocks, interpolation="none", extent=(-0.5, n_c - 0.5, n_r - 0.5, -0.5), **kw)
    sm.set_array(M)
    return sm  # the colour bar's mappable


def _word_labels(ax: Any, rows: Sequence[str], cols: Sequence[str], fs: float) -> None:
    """Row and column word labels beside the image: one multi-line text per side, one line per cell.

    Not tick labels: a matplotlib Tick carries two marker lines, a grid line and
    two texts, and building and drawing some 150 of them per heatmap was most of
    the report's time; one text object per side, its line spacing set so that
    line k is centred on cell k (a fixed spacing gives every line the same
    height, the word centred in it), draws the same labels at a third of the cost.
    """
    from matplotlib.transforms import offset_copy

    from .labels import figure_renderer

    ax.set_xticks([])
    ax.set_yticks([])
    fig = ax.figure
    w_in, h_in = (float(v) for v in ax.get_position().size * fig.get_size_inches())
    renderer = figure_renderer(fig)
    for words, along, size_in in ((rows, "y", h_in), (cols, "x", w_in)):
        if not words:
            continue
        n = len(words)
        probe = fig.text(0, 0, "\n".join(["lp"] * n), fontsize=fs, linespacing=1.0)
        line_px = probe.get_window_extent(renderer).height / n  # one line at spacing 1, in pixels
        probe.remove()
        spacing = size_in * fig.dpi / n / line_px
        if along == "y":
            tr = offset_copy(ax.transAxes, fig=fig, x=-2.5, y=0, units="points")
            ax.text(0, 0.5, "\n".join(words), transform=tr, ha="right", va="center", multialignment="right",
                    fontsize=fs, linespacing=spacing, parse_math=False)  # words are data, never mathtext
        else:
            tr = offset_copy(ax.transAxes, fig=fig, x=0, y=-2.5, units="points")
            ax.text(0.5, 0, "\n".join(words), transform=tr, ha="center", va="top", rotation=90,
                    multialignment="right", fontsize=fs, linespacing=spacing, parse_math=False)


def _test_heatmap(res: Any, model: str, test: str, formats: Sequence[str]) -> Any | None:
    from ._heatmap_draw import direct_heatmap
    from .heatmap_plan import heatmap_plan

    plan = heatmap_plan(res, model, test)  # the cells read once, whichever renderer draws them
    if plan is None:
        return None
    direct = direct_heatmap(plan, formats) if formats else None
    return direct if direct is not None else _heatmap_figure(plan)


# --------------------------------------------------------------------------- all of them
def check_dpi(dpi: Any) -> int:
    """``dpi`` as an int in [:data:`MIN_DPI`, :data:`MAX_DPI`], else :class:`~isoeat.InvalidValueError`."""
    from .._validate import check_int

    return check_int("dpi", dpi, lo=MIN_DPI, hi=MAX_DPI)


def _check_pixels(fig: Any, path: Path, dpi: int) -> None:
    from .._errors import ConfigError

    w, h = (int(round(float(x) * dpi)) for x in fig.get_size_inches())
    if max(w, h) > MAX_SIDE_PIXELS or w * h > MAX_PIXELS:
        raise ConfigError(f"{path}: the figure would be {w:,} x {h:,} pixels at {dpi} dpi (at most "
                          f"{MAX_SIDE_PIXELS:,} per side and {MAX_PIXELS:,} in all); use a lower dpi")


def figure_plan(res: Any, *, test_heatmaps: Any = "all", formats: Sequence[str] = ()) -> list[tuple[str, Any]]:
    """``(name, draw)`` for every figure :func:`write_figures` may write; ``draw()`` returns a Figure or None.

    With ``formats`` that :mod:`~isoeat.reporting._heatmap_draw` draws (PNG, PDF), a per-test heatmap whose texts
    are printable ASCII is a :class:`~isoeat.reporting._heatmap_draw.DirectHeatmap` (the same layout, drawn
    without matplotlib); the others are matplotlib Figures.

    Names: ``fig1_cosine_heatmaps``, ``fig2_explained_variance``, ``fig3_effect_sizes-CAL``,
    ``fig4_scatter-CAL`` and ``tests/MODEL-TEST``, with labels made file names by
    :func:`~isoeat.reporting.paper_tables.unique_names` (labels such as ``z 1`` and
    ``z_1`` get different names).
    """
    return [(name, draw) for name, draw, _ in _weighed_plan(res, test_heatmaps, formats)]


#: Rough CPU seconds of drawing a figure as PNG and PDF (2-core machine of 2026, paper_glove, 150 dpi): used only
#: to share the figures fairly between the drawing processes (:func:`isoeat.reporting._render.shares`). A per-test
#: heatmap: a fixed part and a part per cell (targets by attributes, in every space).
_WEIGHT = {"fig1": 0.25, "fig2": 0.35, "fig3": 0.25, "fig4": 0.55, "aid": 0.15}
_HEATMAP_WEIGHT, _CELL_WEIGHT = 0.02, 1.6e-5


def _heatmap_cells(res: Any, model: str, test: str) -> int:
    """The cells of a per-test heatmap: (targets) x (attributes) of each of the model's spaces."""
    return sum(((r.get("n_x") or 0) + (r.get("n_y") or 0)) * ((r.get("n_a") or 0) + (r.get("n_b") or 0))
               for r in getattr(res, "weat", ()) if r.get("model") == model and r.get("test") == test)


def _weighed_plan(res: Any, test_heatmaps: Any, formats: Sequence[str]) -> list[tuple[str, Any, float]]:
    """:func:`figure_plan` with each figure's weight (``_WEIGHT``)."""
    from .._names import unique_names
    from .paper_tables import calibration_names

    plan: list[tuple[str, Any, float]] = [
        ("fig1_cosine_heatmaps", lambda: figure_cosine_heatmaps(res), _WEIGHT["fig1"]),
        ("fig2_explained_variance", lambda: figure_explained_variance(res), _WEIGHT["fig2"])]
    cal_file = calibration_names(res)
    for c in res.calibrations:
        if c["name"] != "none":
            lab = c["label"]
            plan.append((f"fig3_effect_sizes-{cal_file[lab]}", lambda lab=lab: figure_effect_sizes(res, lab),
                         _WEIGHT["fig3"]))
            plan.append((f"fig4_scatter-{cal_file[lab]}", lambda lab=lab: figure_scatter(res, lab), _WEIGHT["fig4"]))
    if test_heatmaps != "none":
        ids = [t["id"] for t in res.tests] if test_heatmaps == "all" else list(test_heatmaps)
        pairs = [(m["label"], tid) for m in res.models for tid in ids]
        for (model, tid), name in zip(pairs, unique_names(pairs)):
            plan.append((f"tests/{name}", lambda model=model, tid=tid: _test_heatmap(res, model, tid, formats),
                         _HEATMAP_WEIGHT + _CELL_WEIGHT * _heatmap_cells(res, model, tid)))
    return plan


def write_figures(res: Any, folder: str | Path, *, formats: Sequence[str] | None = None,
                  dpi: int | None = None, test_heatmaps: Any = None, jobs: int | None = None,
                  progress: bool | None = None, extra: Sequence[tuple[str, Any]] = ()) -> list[Path]:
    """Draw every figure the results support into ``folder``; returns the files written.

    Names as in :func:`figure_plan`; one file per format (default from the
    config's ``report`` section: PNG and PDF at 150 dpi). ``dpi`` must lie in
    [:data:`MIN_DPI`, :data:`MAX_DPI`] and no figure may exceed
    :data:`MAX_SIDE_PIXELS` per side or :data:`MAX_PIXELS` in all: every figure
    is built and checked before any file is written, and ``folder`` is created
    only when there is a figure to write. Each figure is built once and rendered
    once per format, the figures shared between ``jobs`` processes, each building
    and drawing its share (:func:`isoeat.reporting._render.draw_all`; default:
    ``ISOEAT_REPORT_JOBS``, else the cores left idle,
    :func:`~isoeat.reporting._render.idle_cores`; 1: all in this process; more
    only where the system can fork), with a progress stage counting the figures
    (``progress``: None follows ``--quiet`` and ``$ISOEAT_PROGRESS``, as every
    long step of isoeat does). ``extra``: ``(name, draw)`` of figures the caller
    adds (the decision aids: ``draw`` a zero-argument callable that builds a
    Figure or gives None, or a built Figure), drawn with the others as PNG only,
    never kept (their files follow the plan's).

    Raises
    ------
    InvalidValueError
        ``dpi`` out of range.
    ConfigError
        A figure would be too large at this ``dpi`` (the message names it).
    """
    require_matplotlib()
    probe = CpuProbe()
    folder = Path(folder)
    rep = (res.experiment.get("config", {}) or {}).get("report", {}) or {}
    formats = tuple(dict.fromkeys(formats or rep.get("figure_formats") or ("png", "pdf")))  # each format once
    dpi = check_dpi(dpi if dpi is not None else (rep.get("dpi") or 150))
    sel = test_heatmaps if test_heatmaps is not None else rep.get("test_heatmaps", "all")
    from matplotlib import rc_context

    from ._figure_memo import FigureMemo

    memo = FigureMemo(res, folder, formats, dpi)  # figures drawn into this folder before from these very inputs
    plan = _weighed_plan(res, sel, formats)
    kept = {name for name, _, _ in plan if memo.kept(name)}  # its files are there, with the bytes drawing them gives
    entries = [Entry(name, draw, False, weight) for name, draw, weight in plan if name not in kept]
    planned = len(entries)
    entries += [Entry(name, draw if callable(draw) else (lambda fig=draw: fig), True, _WEIGHT["aid"])
                for name, draw in extra]
    if jobs is None:  # the drawing processes: the cores others keep busy
        jobs = _jobs(None, len(entries), probe)
    with rc_context({"figure.dpi": dpi, **_RC}):  # built at the resolution they are saved at, measured as drawn
        drawn = draw_all(entries, folder, formats, dpi, max(1, min(jobs, len(entries) // 2)), _check_pixels,
                         progress)
    done = {e.name for e, files in zip(entries[:planned], drawn) if files is not None}
    memo.record([e.name for e in entries[:planned] if e.name in done])
    return [p for name, _, _ in plan if name in done or name in kept for p in memo.paths(name)] + \
        [folder / f"{e.name}.png" for e, files in zip(entries[planned:], drawn[planned:]) if files is not None]
