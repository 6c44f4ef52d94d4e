"""The summary of paper §5.3–5.5: counts and shares of change classes, overall and broken down.

Input rows are tidy comparison records (one per model x calibrated space x
test) with at least ``model``, ``family``, ``bias_type``, ``change``,
``delta_d``, ``p_raw``, ``p_calibrated`` (and optionally ``change_holm`` /
``change_bh``, the classes under Holm/BH-adjusted p). Conventions, as the paper:

* **change classes** at α on unadjusted p: Stable, Disappearing (significant →
  not), Emerging (not → significant);
* **substantial shift**: a Stable case significant in *both* spaces with
  :math:`|\\Delta d| > 0.5` (§5.3: 7 of the 48 Stable cases);
* **changed or shifted**: Disappearing + Emerging + substantial shifts
  (§5.3: 29 of 70, 41.4%);
* ``share`` is a count over the rows of its group; ``share_of_class`` is the
  group's part of all cases of that class (§5.5: race holds 8 of the 12
  Disappearing cases, 66.7%).

Examples
--------
>>> rows = [dict(model="m", family="static", bias_type="Race", change="Disappearing", delta_d=-0.7,
...              p_raw=0.001, p_calibrated=0.2)]
>>> summarize(rows)["overall"]["Disappearing"]
1
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from ..labels import is_significant, opposite_signs

__all__ = ["summarize", "count_block", "CLASSES", "FAMILY_ORDER", "BIAS_ORDER", "bias_group"]

CLASSES = ("Stable", "Disappearing", "Emerging")
FAMILY_ORDER = ("static", "contextualized", "contrastive", "supervised-contrastive")
BIAS_ORDER = ("Valence", "Race", "Gender", "Health", "Age")


def bias_group(bias_type: str) -> str:
    """The panel of the paper's Figure 4: Valence, Race, Gender, or Other (Health & Age and anything else)."""
    b = (bias_type or "").strip().lower()
    for name in ("Valence", "Race", "Gender"):
        if b == name.lower():
            return name
    return "Other"


def _is_sig(p: Any, alpha: float) -> bool:
    try:
        return is_significant(float(p), alpha)
    except (TypeError, ValueError):
        return False


def _finite(x: Any) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def count_block(rows: Sequence[dict[str, Any]], alpha: float = 0.05, *, totals: dict[str, int] | None = None,
                change_key: str = "change") -> dict[str, Any]:
    """Counts and shares of change classes for one group of rows.

    Returns ``n``, a count and a ``share`` per class, ``stable_large_shift``
    (Stable, significant in both spaces, |Δd| > 0.5), ``changed_or_shifted``,
    ``sign_reversal``, ``mean_abs_delta_d``, and, when ``totals`` (the
    all-rows count per class) is given, ``share_of_class`` per class.
    """
    n = len(rows)
    out: dict[str, Any] = {"n": n}
    for c in CLASSES:
        k = sum(1 for r in rows if r.get(change_key) == c)
        out[c] = k
        out[f"{c}_share"] = k / n if n else float("nan")
        if totals is not None:
            out[f"{c}_share_of_class"] = k / totals[c] if totals.get(c) else float("nan")
    large = [
        r for r in rows
        if r.get(change_key) == "Stable" and _is_sig(r.get("p_raw"), alpha) and _is_sig(r.get("p_calibrated"), alpha)
        and _finite(r.get("delta_d")) and abs(float(r["delta_d"])) > 0.5
    ]
    out["stable_large_shift"] = len(large)
    out["changed_or_shifted"] = out["Disappearing"] + out["Emerging"] + len(large)
    out["changed_or_shifted_share"] = out["changed_or_shifted"] / n if n else float("nan")
    out["significance_changed"] = out["Disappearing"] + out["Emerging"]
    out["significance_changed_share"] = out["significance_changed"] / n if n else float("nan")
    out["sign_reversal"] = sum(
        1 for r in rows
        if _finite(r.get("d_raw")) and _finite(r.get("d_calibrated"))
        and opposite_signs(float(r["d_raw"]), float(r["d_calibrated"]))
    )
    dd = [abs(float(r["delta_d"])) for r in rows if _finite(r.get("delta_d"))]
    out["mean_abs_delta_d"] = sum(dd) / len(dd) if dd else float("nan")
    return out


def _ordered(values: Iterable[str], order: Sequence[str]) -> list[str]:
    vals = list(dict.fromkeys(values))
    known = [v for v in order if v in vals]
    return known + [v for v in vals if v not in order]


def summarize(rows: Sequence[dict[str, Any]], alpha: float = 0.05) -> dict[str, Any]:
    """The §5.3–5.5 summary of one calibrated space's comparison rows.

    Returns a dict with ``overall`` (see :func:`count_block`), ``by_bias``
    (per bias type, in the paper's order), ``by_bias_group`` (Valence, Race,
    Gender, Other — the panels of Figure 4), ``by_family`` (static,
    contextualized, contrastive), ``by_model`` (§5.4: changes per model), and
    ``adjusted`` (the overall counts when the classes use Holm- or
    BH-adjusted p, for the rows that carry them).
    """
    rows = list(rows)
    overall = count_block(rows, alpha)
    totals = {c: overall[c] for c in CLASSES}

    def groups(key, order):
        names = _ordered((key(r) for r in rows), order)
        return [{"group": g, **count_block([r for r in rows if key(r) == g], alpha, totals=totals)} for g in names]

    out: dict[str, Any] = {
        "alpha": alpha,
        "overall": overall,
        "by_bias": groups(lambda r: r.get("bias_type") or "?", BIAS_ORDER),
        "by_bias_group": groups(lambda r: bias_group(r.get("bias_type", "")), ("Valence", "Race", "Gender", "Other")),
        "by_family": groups(lambda r: r.get("family") or "?", FAMILY_ORDER),
        "by_model": groups(lambda r: r.get("model") or "?", ()),
        "adjusted": {},
    }
    for method in ("holm", "bh"):
        key = f"change_{method}"
        if rows and all(r.get(key) in CLASSES for r in rows):
            adj_rows = [{**r, "p_raw": r.get(f"p_{method}_raw"), "p_calibrated": r.get(f"p_{method}_calibrated")}
                        for r in rows]
            out["adjusted"][method] = count_block(adj_rows, alpha, change_key=key)
    return out
