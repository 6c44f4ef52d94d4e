"""EAT-Maps (ML-EAT, Wolfe, Hiniker & Howe 2024) in the report of a folder of ``isoeat run --levels --out DIR``.

An EAT-Map of a test is, per space (raw beside calibrated): the four-quadrant summary (rows X, Y; columns A, B:
each block's mean cosine, and its z on the model's random-pair cosine) above the word x word heatmap (every target
word with every attribute word, the quadrants divided by white lines). Both come from the same data: the target x
attribute cosines stored in the folder's WEAT cells (the per-test heatmaps' data); ``tables/levels.csv`` adds the
pattern and the z-scores, and is used only where its block means equal the cells' (to their 6 stored decimals) and
its pattern, z-scores and Flat follow from its own Level-2 numbers and frame (a stale or edited file: the maps are
drawn without it and the section says so in one line). Drawn only for folders
that have a ``tables/levels.csv`` (``isoeat run --levels``).
"""

from __future__ import annotations

import csv
import html
import io
import math
from pathlib import Path
from typing import Any

import numpy as np

from .._io import atomic_write_bytes, check_inside

__all__ = [
    "EATMAP_PREFIX",
    "LEVELS_CSV",
    "block_means",
    "eat_map_section",
    "figure_eat_map",
    "is_eat_map",
    "read_levels",
    "write_eat_maps",
]

#: Where ``isoeat run --levels --out DIR`` writes the levels, relative to DIR.
LEVELS_CSV = Path("tables") / "levels.csv"
#: The EAT-Map figures' file-name prefix (``figures/eatmap-TEST.png``).
EATMAP_PREFIX = "eatmap-"
_MAX_BYTES = 10_000_000
_BLOCKS = ("xa", "xb", "ya", "yb")
#: How close a levels.csv block mean must be to the cells' (which store each cosine to 6 decimals: their mean is
#: off by at most 5e-7) to be the same data.
_MATCH = 1e-6


def block_means(cs: dict) -> dict[str, np.ndarray]:
    """The four blocks of a cell's stored cosines (``X_AB``, ``Y_AB``, the A words first) by name."""
    n_a = len(cs["A_words"])
    X, Y = np.asarray(cs["X_AB"], dtype=float), np.asarray(cs["Y_AB"], dtype=float)
    return {"xa": X[:, :n_a], "xb": X[:, n_a:], "ya": Y[:, :n_a], "yb": Y[:, n_a:]}


def read_levels(res: Any) -> tuple[dict[tuple[str, str], dict[str, Any]], str]:
    """``({(test, calibration): row}, note)`` of the folder's ``tables/levels.csv``: rows whose block means equal
    the cells' cosines (within :data:`_MATCH`); ``note`` says why rows were left out (a damaged, edited or stale
    file)."""
    path = Path(res.out) / LEVELS_CSV
    if not path.exists():
        return {}, ""
    try:
        check_inside(Path(res.out), path)
        if path.stat().st_size > _MAX_BYTES:
            return {}, f"{LEVELS_CSV} is over {_MAX_BYTES:,} bytes: not read"
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    except (OSError, UnicodeDecodeError, csv.Error, ValueError) as exc:
        return {}, f"{LEVELS_CSV} could not be read ({exc}); the EAT-Maps are drawn without it"
    model = res.models[0]["label"] if res.models else ""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    stale = []
    for r in rows:
        try:
            key = (str(r["test"]), str(r["calibration"]))
            means = {b: float(r[f"l3_{b}_mean"]) for b in _BLOCKS}
            z = {b: float(r[f"l3_{b}_z"]) if r.get(f"l3_{b}_z") not in (None, "") else math.nan for b in _BLOCKS}
            pattern = str(r["pattern"])
        except (KeyError, ValueError, TypeError):
            stale.append(str(r.get("test", "?")))
            continue
        cs = res.cosines(model, key[1], key[0])
        blocks = block_means(cs) if cs and cs.get("X_AB") and cs.get("Y_AB") else None
        if (
            blocks is None
            or any(abs(float(blocks[b].mean()) - means[b]) > _MATCH for b in _BLOCKS)
            or not _consistent(r, means, z, getattr(res, "alpha", None))
        ):
            stale.append(f"{key[0]} ({key[1]})")
            continue
        out[key] = {"pattern": pattern, "z": z, "cosine_flat": r.get("cosine_flat", "")}
    note = (
        (
            f"{LEVELS_CSV}: {len(stale)} row(s) do not match the folder's cells or their own Level-2 numbers and "
            f"frame, and are left out "
            f"({', '.join(stale[:5])}{' ...' if len(stale) > 5 else ''})"
        )
        if stale
        else ""
    )
    return out, note


def _consistent(r: dict[str, Any], means: dict[str, float], z: dict[str, float], alpha: Any) -> bool:
    """Whether a levels.csv row agrees with itself: its pattern is the call of its Level-2 numbers at its alpha
    (the folder's), each z is (block mean - frame mean) / frame SD, and Flat is the rule on those z (an edited
    pattern, z or Flat beside untouched block means is not the folder's data)."""
    from ..labels import cosine_flat, eat_pattern

    try:
        a = float(r["alpha"])
        l2 = [float(r[k]) for k in ("l2x_d", "l2x_p", "l2y_d", "l2y_p")]
        mu, sd = float(r.get("frame_mean") or "nan"), float(r.get("frame_sd") or "nan")
    except (KeyError, ValueError, TypeError):
        return False
    if (alpha is not None and not math.isclose(a, float(alpha))) or str(r["pattern"]) != eat_pattern(
        l2[0], l2[1], l2[2], l2[3], a
    ):
        return False
    if not (math.isfinite(mu) and math.isfinite(sd) and sd > 0):  # no frame: no z and no Flat
        return all(math.isnan(z[b]) for b in _BLOCKS) and r.get("cosine_flat", "") in ("", "None")
    want = {b: (means[b] - mu) / sd for b in _BLOCKS}
    if any(not math.isclose(z[b], want[b], rel_tol=1e-9, abs_tol=1e-9) for b in _BLOCKS):
        return False
    return r.get("cosine_flat", "") == str(cosine_flat([want[b] for b in _BLOCKS]))


def figure_eat_map(res: Any, model: str, test: str, levels: dict[tuple[str, str], dict[str, Any]]) -> Any | None:
    """The EAT-Map of one test: per space a column, the 2 x 2 quadrant summary above the word x word heatmap."""
    from matplotlib.figure import Figure

    spaces = [(c["label"], res.cosines(model, c["label"], test)) for c in res.calibrations]
    spaces = [(c, cs) for c, cs in spaces if cs and cs.get("X_AB") and cs.get("Y_AB")]
    if not spaces:
        return None
    cs0 = spaces[0][1]
    words_t = list(cs0["X_words"]) + list(cs0["Y_words"])
    words_a = list(cs0["A_words"]) + list(cs0["B_words"])
    big = max(len(words_t), len(words_a)) > 30
    fs = 5.0 if big else 6.5
    cell = 0.12 if big else 0.18
    hm_h, hm_w = max(2.0, len(words_t) * cell), max(2.4, len(words_a) * cell)
    fig = Figure(figsize=(len(spaces) * (hm_w + 1.6) + 0.4, hm_h + 3.4), layout="constrained")
    grid = fig.add_gridspec(2, len(spaces), height_ratios=[2.2, hm_h])
    title = []
    for j, (cal, cs) in enumerate(spaces):
        blocks = block_means(cs)
        M = np.vstack([np.hstack([blocks["xa"], blocks["xb"]]), np.hstack([blocks["ya"], blocks["yb"]])])
        vmax = float(np.abs(M).max()) or 1.0
        lv = levels.get((test, cal))
        q = fig.add_subplot(grid[0, j])
        Q = np.array([[blocks["xa"].mean(), blocks["xb"].mean()], [blocks["ya"].mean(), blocks["yb"].mean()]])
        q.imshow(Q, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
        for (i, k), v in np.ndenumerate(Q):
            b = "xy"[i] + "ab"[k]
            zt = "" if lv is None or not math.isfinite(lv["z"][b]) else f"\nz {lv['z'][b]:+.2f}"
            q.text(k, i, f"{v:.3f}{zt}", ha="center", va="center", fontsize=8)
        q.set_xticks([0, 1], ["A", "B"], fontsize=8)
        q.set_yticks([0, 1], ["X", "Y"], fontsize=8)
        pat = "" if lv is None else f"; pattern {lv['pattern']}"
        q.set_title(f"{cal}: mean cosine per quadrant{pat}", fontsize=8)
        title.append(f"{cal} {lv['pattern']}" if lv is not None else cal)
        h = fig.add_subplot(grid[1, j])
        im = h.imshow(M, cmap="RdBu_r", vmin=-vmax, vmax=vmax, aspect="auto", interpolation="nearest")
        h.axvline(len(cs["A_words"]) - 0.5, color="white", linewidth=2)
        h.axhline(len(cs["X_words"]) - 0.5, color="white", linewidth=2)
        h.set_xticks(range(len(words_a)), words_a, rotation=90, fontsize=fs)
        h.set_yticks(range(len(words_t)), words_t if j == 0 else [""] * len(words_t), fontsize=fs)
        fig.colorbar(im, ax=h, shrink=0.6).ax.tick_params(labelsize=6)
    fig.suptitle(f"EAT-Map of {test} on {model} ({' | '.join(title)}): rows X then Y, columns A | B", fontsize=9)
    return fig


def is_eat_map(path: Path) -> bool:
    """Whether ``path`` is an EAT-Map figure (by its file name)."""
    return Path(path).name.startswith(EATMAP_PREFIX)


def write_eat_maps(res: Any, folder: str | Path, *, dpi: int = 150) -> list[Path]:
    """The EAT-Map of every test of a folder of ``isoeat run --levels`` (PNG; none for another folder)."""
    if not (Path(res.out) / LEVELS_CSV).exists() or not res.models:
        return []
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from .._names import file_name
    from ._render import literal_text

    levels, _ = read_levels(res)
    model = res.models[0]["label"]
    out = []
    for t in res.tests:
        fig = figure_eat_map(res, model, t["id"], levels)
        if fig is None:
            continue
        FigureCanvasAgg(fig)
        literal_text(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": "isoeat"})
        path = Path(folder) / f"{EATMAP_PREFIX}{file_name(t['id'])}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, buf.getvalue())
        out.append(path)
    return out


def eat_map_section(res: Any, blocks: list[str]) -> str:
    """The report's "EAT-Maps" HTML section (``blocks``: the figures' HTML), or ``""`` for a folder without levels."""
    if not (Path(res.out) / LEVELS_CSV).exists():
        return ""
    from ..labels import PATTERN_RULE, cosine_flat_rule

    _, note = read_levels(res)
    parts = [
        "<p class='note'>Per test, raw beside calibrated: the mean cosine of each quadrant (targets X, Y by "
        "attributes A, B; z on the model's random-pair cosine) above the cosine of every target word with "
        "every attribute word, from the same stored cosines. "
        + html.escape(PATTERN_RULE.format(alpha=getattr(res, "alpha", 0.05)))
        + " "
        + html.escape(cosine_flat_rule())
        + " See docs/reading-a-test.md.</p>"
    ]
    if note:
        parts.append(f"<p class='note'>{html.escape(note)}</p>")
    return "\n".join(parts + blocks)
