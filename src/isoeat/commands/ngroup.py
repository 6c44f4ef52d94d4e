"""``isoeat ngroup``: tests of k >= 2 target groups (Generalized WEAT, SAME, multiclass MAC and RNSB), raw vs
calibrated."""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..cliargs import (
    add_calibration_options,
    add_model_options,
    calibration_params,
    calibrator_from_args,
    calibrator_mark,
    load_model_from_args,
)

__all__ = ["register", "COMMANDS"]


def register(sub: Any, add_stat_options_: Any = None) -> None:
    """Add the ``ngroup`` parser."""
    from ..cliargs import add, examples

    p = sub.add_parser(
        "ngroup",
        description="Tests of k >= 2 named target groups and m >= 2 named attribute sets (a test "
        "file with targets: and attributes:; a two-group test is k = m = 2): Generalized "
        "WEAT (k = m), SAME, multiclass MAC and RNSB (m = 2), raw beside calibrated "
        "(default zca; none: raw only), with permutation p over the groups' labels where "
        "the statistic has one (docs/ngroup.md).",
        epilog=examples(
            "isoeat ngroup --test religion.yaml",
            "isoeat ngroup --test religion.yaml --statistics same,mac --calibration none",
            "isoeat ngroup --test W6 --statistics gweat   # k = 2: WEAT's p",
        ),
    )
    add(p, "--test", "--model", "--calibration", "--seed", "--permutations", "--alternative", "--method")
    p.add_argument(
        "--statistics",
        default="all",
        metavar="NAME[,NAME...]",
        help="gweat, same, mac, rnsb, or all (default all: a statistic the test's shape does not allow "
        "is shown as undefined)",
    )
    add(p, "--rnsb-c", "--min-coverage", "--alpha", "--format")
    add_calibration_options(p)
    add_model_options(p)


def _options(args: argparse.Namespace) -> dict[str, Any]:
    return dict(alternative=args.alternative, method=args.method, n_permutations=args.permutations, C=args.rnsb_c)


def _table(test: str, raw: list[Any], cal: list[Any] | None, alpha: float) -> str:
    from ..labels import classify_change
    from ..metrics.ngroup import NGROUP_STATISTICS
    from ..reporting.tables import _render, format_p

    r0 = raw[0]
    groups = ", ".join(f"{g} {n}" for g, n in zip(r0.groups, r0.group_sizes))
    attrs = ", ".join(f"{a} {n}" for a, n in zip(r0.attributes, r0.attribute_sizes))
    head = f"{test} ({r0.bias_type}): {r0.k} target groups ({groups}) x {r0.m} attribute sets ({attrs})"
    ci = "p 95% CI"

    def interval(r: Any) -> str:  # a sampled p's Clopper-Pearson interval; "exact" where p was counted
        if r.p_method == "monte-carlo":
            return f"[{format_p(r.p_ci_low)}, {format_p(r.p_ci_high)}]"
        return "-" if r.p_method == "none" else r.p_method

    header = ["Statistic", "Raw", "p", ci] + (
        [str(cal[0].calibration).upper(), "p", ci, "Change", "Chg"] if cal else []
    )
    rows, notes = [], []
    for i, r in enumerate(raw):
        est = f"{r.estimate:.4f}" if math.isfinite(r.estimate) else "-"
        row = [NGROUP_STATISTICS[r.statistic][0], est, format_p(r.p_value), interval(r)]
        if cal:
            c = cal[i]
            delta = c.estimate - r.estimate
            has_p = math.isfinite(r.p_value) and math.isfinite(c.p_value)
            row += [
                f"{c.estimate:.4f}" if math.isfinite(c.estimate) else "-",
                format_p(c.p_value),
                interval(c),
                f"{delta:+.4f}" if math.isfinite(delta) else "-",
                classify_change(r.p_value, c.p_value, alpha)[0] if has_p else "-",
            ]
        rows.append(row)
        if r.note:
            notes.append(f"note: {r.statistic}: {r.note}")
    lines = [head, _render(header, rows, align_left=1)] + notes
    every = raw + (cal or [])
    sampled = [r for r in every if r.p_method == "monte-carlo"]
    if any(r.p_method != "none" for r in every):
        how = (
            "exact (every assignment counted)"
            if not sampled
            else (
                f"sampled: {sampled[0].n_permutations:,} random assignments of {sampled[0].n_assignments:,}, "
                "p = (k+1)/(N+1)"
            )
        )
        lines.append(
            f"p: permutation of the target words over the groups, {how}; GWEAT {r0.alternative or 'greater'}"
            ", SAME greater; MAC and RNSB pool the groups and have none."
        )
    if cal:
        lines.append(f"Chg at alpha = {alpha:g}: S=Stable, D=Disappearing, E=Emerging (p < alpha is significant).")
    dropped = sorted({d for r in raw for d in r.dropped})
    if dropped:
        lines.append(f"not in the vocabulary (dropped): {', '.join(dropped)}")
    return "\n".join(lines)


def _cmd_ngroup(args: argparse.Namespace) -> int:
    from ..experiments.engine import CachedEncoder
    from ..labels import protocol_text
    from ..metrics.ngroup import _select, ngroup
    from ..reporting.tables import emit_records, protocol_footer
    from ..wordsets import as_ngroup_tests
    from ._spaces import space_protocols

    _select(args.statistics)
    tests = as_ngroup_tests(args.test)
    model = load_model_from_args(args)
    if args.calibration == "none" and not args.whitener:
        calibration_params(args)  # refuses --calibration-param on the raw space
        cal = None
    else:
        cal = calibrator_from_args(args, model)  # one calibrator fit for every test
    cached = CachedEncoder(model)  # each test's words looked up once for both spaces
    common = dict(
        statistics=args.statistics, rng=args.seed, min_coverage=args.min_coverage, force=args.force, **_options(args)
    )
    raw = ngroup(cached, tests, **common)
    calibrated = ngroup(cached, tests, calibration=cal, **common) if cal is not None else None
    # the paper's protocol and where these spaces depart from it (reference size, eps, permutations), as weat
    departures = space_protocols([raw] + ([calibrated] if calibrated else []), cal, model, args.permutations)
    if args.format in ("json", "csv"):
        emit_records(
            [
                {**r.to_dict(scores=args.format == "json"), "protocol": protocol_text(departures[i >= len(raw)])}
                for i, r in enumerate(raw + (calibrated or []))
            ],
            args.format,
        )
        return 0
    spaces = f"raw vs {calibrated[0].calibration}" if calibrated else "raw only (--calibration none)"
    print(f"{model.name}: {spaces}; seed {args.seed}")
    per = len(raw) // len(tests)
    for j, t in enumerate(tests):
        pick = slice(j * per, (j + 1) * per)
        print()
        print(_table(t.id, raw[pick], calibrated[pick] if calibrated else None, args.alpha))
    if cal is not None and calibrator_mark(cal):
        print(calibrator_mark(cal))
    for line in protocol_footer(departures[-1]):
        print(line)
    return 0


COMMANDS = {"ngroup": _cmd_ngroup}
