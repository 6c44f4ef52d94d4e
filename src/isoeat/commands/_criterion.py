"""``isoeat scweat --criterion``: criterion validity (WEFAT), raw beside calibrated, as a table, records or figure."""

from __future__ import annotations

import argparse
from typing import Any

from .._errors import ConfigError

__all__ = ["add_criterion_options", "run_criterion"]


def add_criterion_options(p: argparse.ArgumentParser) -> None:
    """``--criterion`` and ``--criterion-figure`` of ``scweat``."""
    p.add_argument(
        "--criterion",
        metavar="FILE.csv|occupations",
        default=None,
        help="criterion validity (WEFAT, Caliskan et al. 2017): correlate each word's SC-WEAT d with a "
        "real-world value, Pearson r and Spearman rho with Fisher-z intervals, raw beside "
        "calibrated; a CSV with the columns word,value (its words are the target words), or "
        "occupations: the bundled share of women in 40 occupations (BLS 2017 via Zhao et al. 2018) "
        "(default: none; docs/criterion.md)",
    )
    p.add_argument(
        "--criterion-figure",
        metavar="PATH",
        default=None,
        help="with --criterion: also write the scatter of d against the value, one panel per space "
        "(.png, .pdf or .svg; default: none)",
    )


def check_criterion_args(args: argparse.Namespace) -> None:
    """``--words`` xor ``--criterion``; ``--criterion-figure`` only with ``--criterion``."""
    if args.criterion is None:
        if args.criterion_figure:
            raise ConfigError("--criterion-figure draws the criterion scatter: give --criterion FILE.csv|occupations")
        if not args.words:
            raise ConfigError("give the target words: --words w1,w2,... or --criterion FILE.csv|occupations")
    elif args.words:
        raise ConfigError("--words and --criterion: the criterion file names the target words; drop --words")
    elif args.ci or args.ci_method != "auto":
        raise ConfigError(
            "--ci and --ci-method ask for an interval on each word's d, which --criterion does not print: its "
            "intervals are on r and rho (Fisher z; --ci-level sets their level); drop them"
        )


def _rows(results: list[Any]) -> list[list[str]]:
    from ..reporting.tables import format_p

    def num(x: float) -> str:
        return "-" if x != x else f"{x:+.3f}"

    def ci(lo: float, hi: float) -> str:
        return "-" if lo != lo else f"[{num(lo)}, {num(hi)}]"

    return [
        [
            r.calibration,
            str(r.n),
            num(r.pearson_r),
            ci(r.pearson_ci_low, r.pearson_ci_high),
            format_p(r.pearson_p),
            num(r.spearman_rho),
            ci(r.spearman_ci_low, r.spearman_ci_high),
            format_p(r.spearman_p),
        ]
        for r in results
    ]


def _footer(results: list[Any], crit: Any) -> list[str]:
    from ..reporting.tables import embedded_footer

    r0 = results[0]
    lines = [
        f"Intervals {r0.ci_level:.0%}, Fisher z: Pearson SE 1/sqrt(n-3), Spearman SE sqrt((1+rho^2/2)/(n-3)) "
        "(Bonett-Wright); p two-sided, t on n-2 df. d > 0: closer to "
        f"{r0.attribute_a} than to {r0.attribute_b}."
    ]
    lines.append(f"{r0.ci_coverage}.")
    lines += [f"{r.calibration}: r and rho undefined: {r.undefined}." for r in results if r.undefined]
    if r0.missing:
        lines.append(f"Not in {r0.model} (not correlated, {len(r0.missing)} of {len(crit)}): " + ", ".join(r0.missing))
    for r in results:
        if r.undefined_words:
            lines.append(f"{r.calibration}: SC-WEAT d undefined (not correlated): {', '.join(r.undefined_words)}")
    foot = embedded_footer([{"embedded": r0.embedded}])
    if foot:
        lines.append(foot)
    if crit.source:
        lines.append(f"Criterion: {crit.value}. Source: {crit.source}. Cite: {crit.citation}")
    return lines


def run_criterion(args: argparse.Namespace, test: Any, model: Any, cal: Any) -> int:
    """Criterion validity in the raw space and, with a calibrator, the calibrated one; printed or emitted."""
    from ..labels import protocol_text
    from ..reporting.tables import _render, emit_records, protocol_footer
    from ..stats.criterion import criterion_validity
    from ..wordsets.criteria import load_criterion
    from ._spaces import space_protocols

    crit = load_criterion(args.criterion)
    results = [
        criterion_validity(
            model,
            crit,
            test,
            calibration=c,
            rng=args.seed,
            ddof=args.ddof,
            ci_level=args.ci_level,
            min_coverage=args.min_coverage,
            force=args.force,
            alternative=args.alternative,
            method=args.method,
            n_permutations=args.permutations,
        )
        for c in ([None] if cal is None else [None, cal])
    ]
    if args.criterion_figure:
        from ..reporting._glyphs import glyphs_for
        from ..reporting.criterion_figure import write_criterion_figure

        with glyphs_for([*results[0].words, results[0].model]):
            write_criterion_figure(results, args.criterion_figure, value_label=crit.value)
    departures = space_protocols([[]] * len(results), cal, model, args.permutations)
    recs = [{**r.to_dict(), "protocol": protocol_text(departures[i])} for i, r in enumerate(results)]
    if emit_records(recs, args.format):
        return 0
    r0 = results[0]
    what = f" ({crit.value})" if crit.source else ""
    print(
        f"Criterion validity on {r0.model}: SC-WEAT d of each word of {crit.name} against its value{what}; "
        f"A = {r0.attribute_a}, B = {r0.attribute_b} (from {r0.test})"
    )
    print(
        _render(
            [
                "Calibration",
                "n",
                "Pearson r",
                f"{r0.ci_level:.0%} CI",
                "p",
                "Spearman rho",
                f"{r0.ci_level:.0%} CI",
                "p",
            ],
            _rows(results),
            align_left=1,
        )
    )
    for line in _footer(results, crit) + protocol_footer(departures[-1]):
        print(line)
    if args.criterion_figure:
        print(f"figure: {args.criterion_figure}")
    return 0
