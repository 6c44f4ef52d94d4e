"""``--levels`` of ``isoeat weat``: the ML-EAT levels of the tests just measured, from the same lookups and WEATs."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["weat_levels", "with_levels"]


def weat_levels(args: argparse.Namespace, model: Any, tests: list[Any], per_space: list[list[Any]], cal: Any
                ) -> list[list[Any]]:
    """The levels of ``tests`` per space (``per_space``: their WEATs, raw then calibrated by ``cal``), at
    ``--alpha``, z on frame ``paper`` (the isotropy check's), Level-2 p by the command's ``--method`` and budgets."""
    from ..diagnostics.levels import frame_moments, levels_of
    from ..stats.options import PermutationOptions
    from .._random import stream

    perm = PermutationOptions(method=args.method, n_permutations=args.permutations,
                              exact_memory=getattr(args, "exact_memory", None))
    root = stream(args.seed)[1]
    frames = frame_moments(model, cal, getattr(args, "frame", "paper"), rng=root)
    return levels_of(model, tests, per_space, cal, alpha=args.alpha, frames=frames, rng=root, permutation=perm,
                     min_coverage=args.min_coverage)


def with_levels(records: list[dict[str, Any]], levels: list[list[Any]]) -> list[dict[str, Any]]:
    """``records`` (test by test, each space in turn, as ``weat`` prints them) with each one's level fields added
    (``l2x_d`` ... ``pattern``, the z-scores, ``cosine_flat``, the frame's mean and SD, ``pattern_changed``)."""
    from ..reporting.levels_table import levels_rows

    rows = levels_rows(levels)
    out = []
    for rec, lv in zip(records, rows):
        out.append({**rec, **{k: v for k, v in lv.items() if k not in rec and k != "alpha"}})
    return out
