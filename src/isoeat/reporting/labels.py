"""Point labels that overlap neither each other nor the markers: a small deterministic label-repel.

Used by Figure 4, where points of nearby effect sizes (W4 and W5, W9 and W10 on
GloVe) put their labels on top of one another with a fixed offset. Each label
tries offsets at growing distances in eight directions and takes the first
whose text box, in pixels of the laid-out figure, touches no label placed
before it, no marker and stays inside the axes; when none is free, the one of
least overlap. A label moved off its point gets a thin leader line.
No dependency beyond matplotlib; the same input always gives the same picture.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["place_labels", "figure_renderer"]

#: Directions tried, in order (degrees): upper right first, as the fixed offset drawn before.
_ANGLES = (35, -35, 145, -145, 0, 180, 90, -90)
#: Distances from the marker's edge tried, in points.
_STEPS = (1.5, 5.0, 9.0, 14.0, 20.0, 28.0, 38.0)
_PAD = 1.0  # points kept free around every box


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def place_labels(ax: Any, items: Sequence[tuple[str, float, float]], *, fontsize: float = 7,
                 marker_pt: float = 7.0) -> list[Any]:
    """Annotate ``(text, x, y)`` points of ``ax`` without overlaps; returns the annotations.

    Call after the figure's layout is final (``fig.draw_without_rendering()``
    for a constrained layout): positions are computed in pixels. The labels are
    kept out of the layout (``set_in_layout(False)``), so placing them does not
    move the axes they were placed in. ``marker_pt`` is the marker's size in
    points (``sqrt(s)`` of a scatter).
    """
    fig = ax.figure
    renderer = figure_renderer(fig)
    px = fig.dpi / 72.0
    pad = _PAD * px
    half = marker_pt / 2 * px + pad
    anchors = [tuple(ax.transData.transform((x, y))) for _, x, y in items]
    obstacles = [(u - half, v - half, u + half, v + half) for u, v in anchors]
    frame = ax.bbox.extents
    sizes = []
    for text, _, _ in items:
        t = ax.text(0, 0, text, fontsize=fontsize)
        e = t.get_window_extent(renderer)
        t.remove()
        sizes.append((e.width, e.height))
    placed = []
    for (text, x, y), (u, v), (w, h) in zip(items, anchors, sizes):
        best: tuple | None = None
        for step in _STEPS:
            r = marker_pt / 2 + step
            for ang in _ANGLES:
                c, s = math.cos(math.radians(ang)), math.sin(math.radians(ang))
                ha = "left" if c > 0.3 else "right" if c < -0.3 else "center"
                va = "bottom" if s > 0.3 else "top" if s < -0.3 else "center"
                ox, oy = u + r * c * px, v + r * s * px
                x0 = ox if ha == "left" else ox - w if ha == "right" else ox - w / 2
                y0 = oy if va == "bottom" else oy - h if va == "top" else oy - h / 2
                box = (x0 - pad, y0 - pad, x0 + w + pad, y0 + h + pad)
                cost = sum(_overlap(box, o) for o in obstacles)
                inside = frame[0] <= box[0] and box[2] <= frame[2] and frame[1] <= box[1] and box[3] <= frame[3]
                cost += 0.0 if inside else w * h
                if best is None or cost < best[0]:
                    best = (cost, r * c, r * s, ha, va, box, step)
                if cost == 0.0:
                    break
            if best is not None and best[0] == 0.0:
                break
        assert best is not None  # the first candidate always becomes the best
        _, dx, dy, ha, va, box, step = best
        obstacles.append(box)
        arrow = None if step == _STEPS[0] else dict(arrowstyle="-", linewidth=0.5, color="#777777", shrinkA=0,
                                                    shrinkB=marker_pt / 2)
        a = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va, fontsize=fontsize,
                        arrowprops=arrow, zorder=4)
        a.set_in_layout(False)
        placed.append(a)
    return placed


def figure_renderer(fig: Any) -> Any:
    """An Agg renderer of ``fig`` (its canvas's, or a new Agg canvas's for a bare ``Figure``), to measure text."""
    get = getattr(fig.canvas, "get_renderer", None)
    if get is None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        get = FigureCanvasAgg(fig).get_renderer
    return get()
