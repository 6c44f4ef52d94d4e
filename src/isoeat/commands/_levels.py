"""``--levels`` of ``isoeat weat``: the ML-EAT levels of the tests just measured, from the same lookups and WEATs."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["weat_levels", "with_levels"]


def weat_levels(
    args: argparse.Namespace, model: Any, tests: list[Any], per_space: list[list[Any]], cal: Any
) -> list[list[Any]]:
    """The levels of ``tests`` per space (``per_space``: their WEATs, raw then calibrated by ``cal``), at
    ``--alpha``, z on frame ``paper`` (the isotropy check's), Level-2 p by the command's ``--method`` and budgets."""
    from .._random import stream
    from ..diagnostics.levels import frame_moments, levels_of
    from ..stats._certified import bracket_store, set_bracket_store
    from ..stats.options import PermutationOptions

    if bracket_store() is None:  # slow exact Level-2 counts kept by content, as 'isoeat run' keeps them
        from ..backends.cache import BracketStore

        set_bracket_store(BracketStore())
    perm = PermutationOptions(
        method=args.method, n_permutations=args.permutations, exact_memory=getattr(args, "exact_memory", None)
    )
    root = stream(args.seed)[1]
    size = getattr(args, "reference_size", None)
    frames = frame_moments(
        model, cal, getattr(args, "frame", "paper"), rng=root, n_reference=size if isinstance(size, int) else 100_000
    )
    return levels_of(
        model,
        tests,
        per_space,
        cal,
        alpha=args.alpha,
        frames=frames,
        rng=root,
        permutation=perm,
        min_coverage=args.min_coverage,
    )


def with_levels(records: list[dict[str, Any]], levels: list[list[Any]]) -> list[dict[str, Any]]:
    """``records`` (test by test, each space in turn, as ``weat`` prints them) with each one's level fields added
    (``l2x_d`` ... ``pattern``, the z-scores, ``cosine_flat``, the frame's mean and SD, ``pattern_changed``)."""
    from ..reporting.levels_table import levels_rows

    rows = levels_rows(levels)
    out = []
    for rec, lv in zip(records, rows):
        out.append({**rec, **{k: v for k, v in lv.items() if k not in rec and k != "alpha"}})
    return out


def run_levels(res: Any, out: Any, comps: list[Any], model: Any, args: argparse.Namespace) -> list[list[Any]]:
    """``isoeat run --levels`` (the quick run): the levels of every test of the run's comparison, Level 1 its cells'
    WEATs, z on the frame moments its isotropy check recorded (``anisotropy.csv``), the calibrated space by the
    calibrator it saved; prints the levels table and writes ``tables/levels.csv`` in the run folder."""
    from .._io import atomic_write_text
    from .._random import stream
    from .._records import records_to_csv
    from .._resources import one_blas_thread
    from ..calibration import load_calibrator
    from ..diagnostics.isotropy_check import space_records
    from ..diagnostics.levels import frame_label, levels_of
    from ..experiments._store import slug
    from ..reporting.levels_table import levels_rows, levels_table
    from ..stats.options import PermutationOptions
    from ..wordsets import resolve_tests

    comp = comps[0]
    cal_label = next(c["label"] for c in res.calibrations if c["name"] != "none")
    raw_label = next((c["label"] for c in res.calibrations if c["name"] == "none"), "none")
    cal = load_calibrator(out / "calibrators" / slug(comp.model) / f"{slug(cal_label)}.npz")
    raw_rec, cal_rec = space_records(res.anisotropy, comp.model, raw_label, cal_label)
    frames = None
    if raw_rec is not None and cal_rec is not None:
        frames = [
            (
                frame_label(str(r["frame"]), str(r.get("cosine_method")), r.get("frame_size"), r.get("n_samples")),
                float(r["mean_cosine"]),
                float(r["sd_cosine"]),
            )
            for r in (raw_rec, cal_rec)
        ]
    tests = {t.id: t for t in resolve_tests(args.test)}
    rows = [r for r in comp.rows if r.test in tests]
    perm = PermutationOptions(
        method=args.method, n_permutations=args.permutations, exact_memory=getattr(args, "exact_memory", None)
    )
    with one_blas_thread():  # many small products: BLAS threads only contend
        levels = levels_of(
            model,
            [tests[r.test] for r in rows],
            [[r.raw for r in rows], [r.calibrated for r in rows]],
            cal,
            alpha=res.alpha,
            frames=frames,
            rng=stream(args.seed)[1],
            permutation=perm,
            min_coverage=args.min_coverage,
        )
    if getattr(args, "format", "table") == "table":
        print()
        print(levels_table(levels, res.alpha))
    path = out / "tables" / "levels.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, records_to_csv(levels_rows(levels)))
    return levels
