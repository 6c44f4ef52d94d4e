"""The core commands: ``isoeat tests``, ``weat``, ``scweat`` and ``whiten``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._errors import ConfigError
from .._types import ContextEncoder, corpus_name_of
from ..cliargs import (
    add,
    add_calibration_options,
    add_model_options,
    add_stat_options,
    calibrator_from_args,
    calibrator_mark,
    examples,
    fallback_gate,
    given_options,
    load_model_from_args,
    npz_out,
    weat_kwargs,
)
from ..labels import dropped_label
from ._conventions import add_explain, convention_kwargs, footer
from ._criterion import add_criterion_options, check_criterion_args, run_criterion

__all__ = ["register", "COMMANDS"]


def _association_options(p: argparse.ArgumentParser) -> None:
    """Model, calibration and statistics options of ``weat`` and ``scweat``."""
    add(p, "--model", "--calibration", "--alpha")
    add_stat_options(p)
    add_model_options(p)


_RAW_BESIDE = ("Prints the raw space beside the calibrated one (default zca, fitted on the model's reference "
               "sample; --calibration none: raw only) and the change class: Stable, Disappearing or Emerging "
               "significance at --alpha, as 'isoeat run' does.")


def register(sub: Any, add_stat_options_: Any = None) -> None:
    """Add the ``tests``, ``weat``, ``scweat`` and ``whiten`` parsers."""
    p = sub.add_parser("tests",
                       description="The built-in association tests: W1..W10 (Caliskan et al. 2017, the default "
                                   "battery) and the library's tests composed from published lists, each with its "
                                   "set sizes, licence and source (--show ID: the lists and full provenance; "
                                   "docs/library.md). Any command's --test takes these ids or a "
                                   "YAML/JSON file of your own (FILE: all its tests; FILE:ID: one): --template "
                                   "prints a commented example of one, --format yaml|json prints tests as one "
                                   "(docs/test-files.md).",
                       epilog=examples("isoeat tests",
                                       "isoeat tests --template                  # '> my.yaml', edit, then: isoeat "
                                       "weat --test my.yaml",
                                       "isoeat tests --show W6                   # W6's lists and provenance",
                                       "isoeat tests --show W6,W7 --format yaml  # W6 and W7 as a test file",
                                       "isoeat tests --show my.yaml              # check a file: its tests' lists"))
    add(p, "--format")
    p.add_argument("--show", metavar="IDS|FILES", default=None,
                   help="the tests shown in full (their lists and provenance; with --format json|yaml|csv: those "
                        "tests): ids and/or test files, comma-separated, as --test takes them (default: a table of "
                        "every registered test, the built-in W1..W10 first)")
    p.add_argument("--template", action="store_true",
                   help="print a commented YAML test file of two tests (every key) and nothing else: the layout "
                        "--test FILE reads (default: off)")

    p = sub.add_parser("weat",
                       description="WEAT (Caliskan et al. 2017): effect size d and permutation p of the tests you "
                                   "name, with every option of the statistics (p method, intervals on d). "
                                   + _RAW_BESIDE + " For the whole battery, a results folder and a report, use "
                                   "'isoeat run'.",
                       epilog=examples("isoeat weat --test W6                          # raw and ZCA-whitened",
                                       "isoeat weat --test W6 --calibration none --ci  # the raw space, interval on d",
                                       "isoeat weat --test my.yaml:math-arts-gender    # one test of your file (isoeat "
                                       "tests --template)"))
    add(p, "--test", "--convention")
    add(p, "--levels")
    _association_options(p)
    add(p, "--audit")
    add_explain(p)

    p = sub.add_parser("scweat",
                       description="SC-WEAT: the effect size of each single word (not a set) against the two "
                                   "attribute sets A and B of a test, with its permutation p. " + _RAW_BESIDE,
                       epilog=examples("isoeat scweat --words nurse,engineer --attributes W7",
                                       "isoeat scweat --words nurse,engineer --attributes W7 --calibration none",
                                       "isoeat scweat --words 'new york,los angeles' --attributes W7  # phrases",
                                       "isoeat scweat --criterion occupations --attributes W7  # criterion validity"))
    add(p, "--words", "--convention")
    add_criterion_options(p)
    p.add_argument("--attributes", required=True, metavar="TEST",
                   help="the one test whose attribute sets A and B are used: an id (e.g. W6: career vs family), a "
                        "test file of one test, or FILE:ID (required; a test file's layout: isoeat tests --template)")
    _association_options(p)

    p = sub.add_parser("whiten",
                       description="Fit a calibrator (the ZCA whitener by default, or another --calibration) on "
                                   "the model's reference sample and save it as .npz with its metadata (no pickle), "
                                   "to apply later with --calibrator FILE in any command.",
                       epilog=examples("isoeat whiten --save glove.npz",
                                       "isoeat weat --test W6 --calibrator glove.npz   # reuse it"))
    add(p, "--model")
    add(p, "--save")
    add(p, "--calibration")
    add_calibration_options(p, saved=False)
    add_model_options(p)


def _cmd_tests(args: argparse.Namespace) -> int:
    from ..reporting.tables import _render, records_to_csv
    from ..wordsets import list_tests, resolve_tests
    from ..wordsets._format import TEMPLATE, dump_tests
    from ..wordsets._library import describe_test

    if args.template:
        given = [o for o, v in (("--show", args.show is not None), ("--format", args.format != "table")) if v]
        if given:
            raise ConfigError(f"--template prints the commented YAML template and nothing else: drop "
                              f"{' and '.join(given)} (--format yaml|json prints tests as a test file)")
        sys.stdout.write(TEMPLATE)
        return 0
    tests = list_tests() if args.show is None else resolve_tests(args.show)
    if args.format in ("json", "yaml"):
        sys.stdout.write(dump_tests(tests, args.format))
        return 0
    if args.format == "csv":
        sys.stdout.write(records_to_csv([_test_record(t) for t in tests]))
        return 0
    if args.show is not None:  # the tests named: every list and the full provenance
        print("\n\n".join(describe_test(t) for t in tests))
        return 0
    rows = [[t.id, t.bias_type, "/".join(str(n) for n in t.sizes), t.licence or "(not stated)",
             t.reference or str(t.source), t.title] for t in tests]
    print(_render(["ID", "Bias", "|X|/|Y|/|A|/|B|", "Licence", "Source", "Name"], rows, align_left=6))
    print("--show ID: the lists and full provenance of a test; the default battery (no --test) is W1..W10; "
          "where the lists come from and their licences: docs/library.md")
    return 0


def _test_record(t: Any) -> dict[str, Any]:
    """One row of ``isoeat tests --format csv``: the test's names, sizes and provenance fields."""
    return {"id": t.id, "bias_type": t.bias_type, "title": t.title, "X": t.X.name, "Y": t.Y.name, "A": t.A.name,
            "B": t.B.name, "n_x": len(t.X), "n_y": len(t.Y), "n_a": len(t.A), "n_b": len(t.B),
            "reference": t.reference, "licence": t.licence, "lists_from": t.lists_from, "composed": t.composed,
            "citation": t.citation}


def _check_weat_views(args: argparse.Namespace) -> None:
    """``weat``'s views that do not combine, refused before any work: ``--explain`` (every convention, raw) with
    ``--levels``/``--audit``; ``--levels``/``--audit`` under a peer's convention (they follow isoeat's
    definitions); ``--levels`` with ``--audit`` as CSV (one kind of row per file: use JSON for both)."""
    views = [o for o, on in (("--levels", args.levels), ("--audit", args.audit)) if on]
    if views and args.explain:
        raise ConfigError(f"--explain prints one table of every convention; it does not take {' or '.join(views)}: "
                          "run them separately")
    if views and getattr(args, "convention", "isoeat") != "isoeat":
        raise ConfigError(f"{' and '.join(views)} follow isoeat's definitions; --convention {args.convention} "
                          "changes the WEAT's d only: drop one of them")
    if len(views) == 2 and args.format == "csv":
        raise ConfigError("--levels and --audit with --format csv: a CSV holds one kind of row; use --format json "
                          "(both in each record) or one of them")


def _cmd_weat(args: argparse.Namespace) -> int:
    from ..labels import protocol_text
    from ..reporting.tables import emit_records, protocol_footer, weat_table
    from ..stats.results import with_suggestions
    from ..stats.weat import weat
    from ..wordsets import resolve_tests
    from ._spaces import change_lines, space_protocols, wants_calibrator

    _check_weat_views(args)
    if args.explain:
        from ._conventions import explain

        return explain(args)
    tests = resolve_tests(args.test)
    model = load_model_from_args(args)
    cal = calibrator_from_args(args, model) if wants_calibrator(args) else None
    # --seed is the seed each result records: `isoeat weat --test T --seed <seed of a result>` replays it; raw and
    # calibrated draw from the same named stream (common random numbers), each as its own command did before
    kw = {**weat_kwargs(args), **convention_kwargs(args)}
    per_space = [[weat(model, t, calibration=c, rng=args.seed, force=args.force, **kw) for t in tests]
                 for c in ([None] if cal is None else [None, cal])]
    results = [r for pair in zip(*per_space) for r in pair]  # test by test: raw, then calibrated
    contexts = isinstance(model, ContextEncoder)
    corpus = corpus_name_of(model) if contexts else ""
    departures = space_protocols(per_space, cal, model, args.permutations)
    # every record says whether it is the paper's protocol (as isoeat run's), and the corpus its contexts came from
    records = [{**r.to_dict(), "protocol": protocol_text(departures[i % len(per_space)])}
               for i, r in enumerate(results)]
    if contexts:
        records = [{**rec, "corpus": corpus} for rec in records]
    levels = None
    if args.levels:  # the ML-EAT levels of the same tests, lookups and WEATs (commands/_levels.py)
        from ._levels import weat_levels, with_levels

        levels = weat_levels(args, model, tests, per_space, cal)
        records = with_levels(records, levels)
    from ._audit import run_audit

    # the audit's full test is the table's (the same results, not computed again)
    audits = run_audit(args, model, tests, cal, {t.id: list(rs) for t, rs in zip(tests, zip(*per_space))}) \
        if args.audit else []
    if audits:  # json: each record's audit (its test and space); csv: the audit's rows, one per left-out word
        from ..reporting.audit_text import audit_records

        records = ([{**rec, "audit": a.to_dict()} for rec, a in zip(records, (a for pair in audits for a in pair))]
                   if args.format == "json" else audit_records([a for pair in audits for a in pair]))
    if not emit_records(records, args.format):
        print(weat_table(results, alpha=args.alpha, contexts=contexts, corpus=corpus))
        if cal is not None:
            print("\n".join(change_lines([(r.test, r.to_dict(), c.to_dict()) for r, c in zip(*per_space)],
                                         results[1].calibration, args.alpha)))
        for line in protocol_footer(departures[-1]) + footer(results):
            print(line)
        if calibrator_mark(cal):
            print(calibrator_mark(cal))
        if levels is not None:
            from ..reporting.levels_table import levels_table

            print("\n" + levels_table(levels, args.alpha))
        for r in per_space[0]:
            if r.dropped:
                print(f"{r.test}: {dropped_label(corpus)}: {', '.join(with_suggestions(r.dropped, r.suggestions))}")
        if audits:
            from ..reporting.audit_text import audit_text

            print("\n" + "\n\n".join(audit_text(pair) for pair in audits))
    return fallback_gate(args, per_space[-1], corpus) if contexts else 0


def _cmd_scweat(args: argparse.Namespace) -> int:
    from ..labels import protocol_text
    from ..reporting.tables import (
        _render,
        ci_footer,
        embedded_footer,
        emit_records,
        format_ci,
        format_count,
        format_d,
        format_p,
        protocol_footer,
        reach_footer,
        undefined_footer,
    )
    from ..stats.results import with_suggestions
    from ..stats.weat import sc_weat
    from ..wordsets import as_test
    from ._spaces import change_lines, space_protocols, wants_calibrator

    unused = [f"--{k.replace('_', '-')}" for k in ("bootstrap", "resample_attributes", "ci_estimand")
              if k in given_options(args)]
    if unused:
        raise ConfigError(f"{', '.join(unused)}: SC-WEAT has no bootstrap interval and one estimand (given-word); "
                          "these options apply to 'isoeat weat' and 'isoeat run': drop them (--ci gives SC-WEAT's "
                          "noncentral-t interval)")
    check_criterion_args(args)
    test = as_test(args.attributes, argument="--attributes")  # one test: a file of several names one as FILE:ID
    model = load_model_from_args(args)
    cal = calibrator_from_args(args, model) if wants_calibrator(args) else None
    if args.criterion is not None:
        if getattr(args, "convention", "isoeat") != "isoeat":
            raise ConfigError(f"--convention {args.convention}: applies to the SC-WEAT table, not to --criterion "
                              "(criterion validity correlates isoeat's SC-WEAT effects); drop one of them")
        return run_criterion(args, test, model, cal)
    per_space = [sc_weat(model, args.words, test, calibration=c, **{"ddof": args.ddof, **convention_kwargs(args)},
                         alternative=args.alternative, method=args.method, n_permutations=args.permutations,
                         rng=args.seed, min_coverage=args.min_coverage, force=args.force, ci=args.ci,
                         ci_method=args.ci_method, ci_level=args.ci_level)
                 for c in ([None] if cal is None else [None, cal])]
    results = [r for pair in zip(*per_space) for r in pair]  # word by word: raw, then calibrated
    departures = space_protocols(per_space, cal, model, args.permutations)
    recs = [{**r.to_dict(), "A": test.A.name, "B": test.B.name,
             "protocol": protocol_text(departures[i % len(per_space)])} for i, r in enumerate(results)]
    if not emit_records(recs, args.format):
        spaces = " and ".join(dict.fromkeys(rec["calibration"] for rec in recs))
        print(f"SC-WEAT on {model.name} ({spaces}): A = {test.A.name}, B = {test.B.name} (from {test.id})")
        with_ci = any(r.effect_size_ci is not None for r in results)
        print(_render(["Word", "Calibration", "d"] + (["CI on d"] if with_ci else []) + ["p", "p method", "N"],
                      [[r.word, r.calibration, format_d(r.effect_size)]
                       + ([format_ci(r.effect_size_ci)] if with_ci else [])
                       + [format_p(r.p_value), r.p_method, format_count(r.n_permutations)] for r in results],
                      align_left=2))
        if with_ci:
            print(ci_footer([r.effect_size_ci for r in results], [f"{r.word} {r.calibration}" for r in results],
                            results[0].alternative))
        reach = reach_footer(results, [r.word for r in results], args.alpha)
        if reach:
            print(reach)
        undefined = undefined_footer(results, [f"{r.word} ({r.calibration})" for r in results])
        if undefined:
            print(undefined)
        if embedded_footer(per_space[0]):
            print(embedded_footer(per_space[0]))
        if cal is not None:
            print("\n".join(change_lines([(r.word, r.to_dict(), c.to_dict()) for r, c in zip(*per_space)],
                                         per_space[1][0].calibration, args.alpha, "Word")))
        if results[0].dropped:
            corpus = corpus_name_of(model) if isinstance(model, ContextEncoder) else ""
            print(f"{dropped_label(corpus)}: " + ", ".join(with_suggestions(results[0].dropped,
                                                                            results[0].suggestions)))
        for line in protocol_footer(departures[-1]) + footer(results):
            print(line)
        if calibrator_mark(cal):
            print(calibrator_mark(cal))
    return 0


def _cmd_whiten(args: argparse.Namespace) -> int:
    from ..calibration import save_calibrator
    from ..calibration.registry import params_text

    if not args.save:
        raise ConfigError("--save FILE.npz is required: the file the calibrator is saved to")
    npz_out(args.save, "--save", "calibrator")
    args.whitener = None
    model = load_model_from_args(args)
    w = calibrator_from_args(args, model)
    path = save_calibrator(w, args.save)
    label = "ZCA whitener" if w.name == "zca" else f"{w.name} calibrator"
    shown = params_text(w.get_params(), getattr(w, "eps_", None))
    print(f"saved {label} for {model.name} (dim {w.n_features_in_}, n={w.n_samples_seen_}"
          f"{', ' + shown if shown else ''}) to {path}")
    return 0


COMMANDS = {"tests": _cmd_tests, "weat": _cmd_weat, "scweat": _cmd_scweat, "whiten": _cmd_whiten}
