"""Raw beside calibrated for ``weat``, ``scweat`` and ``seat``: which spaces a command measures, and the change
table under their results (labels from :mod:`isoeat.labels`, as ``isoeat run`` prints them)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

__all__ = ["wants_calibrator", "change_lines", "space_protocols"]

_CHG = {"Stable": "S", "Disappearing": "D", "Emerging": "E"}


def wants_calibrator(args: argparse.Namespace) -> bool:
    """Whether the command measures a calibrated space beside the raw one."""
    return args.calibration != "none" or bool(getattr(args, "whitener", None))


def change_lines(pairs: Sequence[tuple[str, dict[str, Any], dict[str, Any]]], calibration: str,
                 alpha: float, what: str = "Test") -> list[str]:
    """The change table: one row per ``(name, raw record, calibrated record)`` (records with ``effect_size``
    and ``p_value``): d of both spaces (``*`` where p < alpha), Δd, the change class and the flags of
    :func:`isoeat.labels.compare_records`."""
    from ..labels import compare_records, is_significant
    from ..reporting.tables import _render, format_d

    rows = []
    for name, raw, cal in pairs:
        row = compare_records(raw, cal, alpha)
        flags = (["|dd|>0.5"] if row["large_shift"] else []) + (["sign"] if row["sign_reversal"] else [])
        marks = ["*" if is_significant(rec["p_value"], alpha) else " " for rec in (raw, cal)]
        delta = "-" if row["delta_d"] != row["delta_d"] else f"{row['delta_d']:+.2f}"  # d undefined: no dd
        rows.append([name, format_d(raw["effect_size"]) + marks[0], format_d(cal["effect_size"]) + marks[1],
                     "0.00" if delta in ("+0.00", "-0.00") else delta, _CHG.get(row["change"], row["change"]),
                     ",".join(flags) or "-"])
    table = _render([what, "d raw", f"d {calibration}", "dd", "Chg", "Flags"], rows, align_left=1, last_left=True)
    return ["", f"Raw vs {calibration}:", table,
            f"* p < {alpha:g}. Chg: S=Stable, D=Disappearing, E=Emerging (significance at --alpha {alpha:g}, "
            "as 'isoeat run'); dd = d " + calibration + " - d raw."]


def space_protocols(per_space: Sequence[Sequence[Any]], calibrator: Any, model: Any,
                    n_permutations: int | None) -> list[tuple[str, ...]]:
    """Each space's departures from the paper's protocol, raw first (it fits nothing), then ``calibrator``'s (the
    reference its fit really used, its ε): the rule of :func:`isoeat.experiments.compare.space_departures`, as
    ``isoeat run`` marks its records."""
    from ..experiments.compare import space_departures

    metas = [None, dict(getattr(calibrator, "metadata_", None) or {})]
    return [space_departures(meta, results, n_permutations, model) for meta, results in zip(metas, per_space)]
