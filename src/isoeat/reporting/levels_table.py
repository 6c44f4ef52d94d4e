"""The ML-EAT levels as a text table and as records (``isoeat weat --levels``, ``isoeat run --levels``).

One row per test and space: Level 1 (d, p), Level 2 (d and two-sided p of X and of Y over A and B), Level 3 (each
block's mean cosine as a z-score on the frame's random-pair cosine), the anisotropy rule (``Flat``) and the
pattern, a ``*`` where calibration changed it. The rules under the table are :mod:`isoeat.labels`'.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..labels import PATTERN_RULE, cosine_flat_rule, pattern_changed
from .tables import _render, format_d, format_p

__all__ = ["LEVELS_COLUMNS", "levels_rows", "levels_table"]

#: The columns of ``levels.csv`` beyond a :class:`~isoeat.stats.levels.LevelsResult`'s own fields.
LEVELS_COLUMNS = ("pattern_raw", "pattern_changed")


def _z(v: float) -> str:
    return "-" if v is None or not math.isfinite(v) else f"{v:+.2f}"


def _flat(v: Any) -> str:
    return "-" if v is None else ("yes" if v else "no")


def levels_rows(per_space: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    """The records of ``per_space`` (space 0 raw, then calibrated; one :class:`LevelsResult` per test each), test by
    test, each with ``pattern_raw`` and ``pattern_changed`` (vs the raw space: False in the raw row)."""
    out = []
    for i, raw in enumerate(per_space[0]):
        for space in per_space:
            r = space[i]
            out.append(
                {**r.to_dict(), "pattern_raw": raw.pattern, "pattern_changed": pattern_changed(raw.pattern, r.pattern)}
            )
    return out


def levels_table(per_space: Sequence[Sequence[Any]], alpha: float) -> str:
    """The levels table of ``per_space`` (as :func:`levels_rows`), its frame line and its rules."""
    rows = []
    changed = 0
    for i, raw in enumerate(per_space[0]):
        for s, space in enumerate(per_space):
            r = space[i]
            moved = s > 0 and pattern_changed(raw.pattern, r.pattern)
            changed += int(moved)
            rows.append(
                [
                    r.test,
                    r.calibration,
                    format_d(r.effect_size),
                    format_p(r.p_value),
                    format_d(r.l2x_d),
                    format_p(r.l2x_p),
                    format_d(r.l2y_d),
                    format_p(r.l2y_p),
                    *(_z(v) for v in r.block_z.values()),
                    _flat(r.cosine_flat),
                    r.pattern + (" *" if moved else ""),
                ]
            )
    head = [
        "ID",
        "Space",
        "L1 d",
        "L1 p",
        "L2X d",
        "L2X p",
        "L2Y d",
        "L2Y p",
        "z XA",
        "z XB",
        "z YA",
        "z YB",
        "Flat",
        "Pattern",
    ]
    lines = [
        "ML-EAT levels (Wolfe, Hiniker & Howe 2024; docs/reading-a-test.md)",
        "",
        _render(head, rows, align_left=2, last_left=True),
        "",
    ]
    frames = [(space[0].calibration, space[0]) for space in per_space if space]
    if frames and frames[0][1].frame:
        shown = "; ".join(f"{c}: mean {r.frame_mean:.3f}, SD {r.frame_sd:.3f}" for c, r in frames)
        lines.append(
            f"z: a block's mean cosine minus the model's random-pair cosine, in its SDs (frame "
            f"{frames[0][1].frame}: mean and SD of its pairwise cosines; {shown})."
        )
        lines.append(cosine_flat_rule())
    lines.append(
        "L2: each of X, Y over the attribute words A and B (d with ddof 1; p two-sided, "
        f"{'/'.join(dict.fromkeys(r.l2_p_method for space in per_space for r in space))}). "
        + PATTERN_RULE.format(alpha=alpha)
    )
    if len(per_space) > 1:
        n = len(per_space[0])
        lines.append(f"Pattern changed by {per_space[1][0].calibration} in {changed} of {n} test{'s' * (n != 1)}.")
    return "\n".join(lines)
