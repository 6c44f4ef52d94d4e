"""``isoeat metric``: other bias metrics (MAC, RND, ECT, RIPA, SemAxis, direct bias, NAS, RNSB), raw vs calibrated."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from .._errors import ConfigError
from ..cliargs import (
    add_calibration_options,
    add_model_options,
    calibration_params,
    calibrator_from_args,
    calibrator_mark,
    float_in,
    given_options,
    load_model_from_args,
)

__all__ = ["register", "COMMANDS"]

#: Command-line option -> metric option (only options given on the command line are passed on).
_OPTIONS = {"alternative": "alternative", "method": "method", "permutations": "n_permutations", "pairs": "pairs",
            "c": "c", "rnsb_c": "C", "ci": "ci", "ci_method": "ci_method", "bootstrap": "bootstrap",
            "ci_level": "ci_level"}


def register(sub: Any, add_stat_options_: Any = None) -> None:
    """Add the ``metric`` parser."""
    from ..cliargs import add, examples

    p = sub.add_parser("metric",
                       description="Bias metrics other than WEAT (MAC, RND, ECT, RIPA, SemAxis, direct bias, NAS, "
                                   "RNSB) on the built-in tests or yours, raw beside calibrated (default zca; none: "
                                   "raw only), with a table of the conclusions calibration changes (docs/metrics.md). "
                                   "'isoeat run --metrics' measures them beside the WEAT battery in one folder.",
                       epilog=examples("isoeat metric mac,ripa --test W6", "isoeat metric all --calibration none",
                                       "isoeat metric rnd,ripa --test W6 --ci   # + intervals, with their coverage"))
    p.add_argument("names", metavar="NAME[,NAME...]",
                   help="metrics: mac, rnd, ect, ripa, semaxis, direct-bias, nas, rnsb, or all")
    add(p, "--test", "--model", "--calibration", "--seed", "--permutations", "--alternative", "--method")
    p.add_argument("--pairs", metavar="gender|W1:W2,...",
                   help="defining pairs of RIPA, direct bias, SemAxis: 'gender' (Bolukbasi et al.'s ten) or "
                        "she:he,woman:man (default: the test's pairs, else A and B zipped)")
    p.add_argument("--c", type=float_in("--c", 0, float("inf")), default=1.0,
                   help="the c of DirectBias_c (default 1)")
    add(p, "--rnsb-c")
    add(p, "--ci", "--ci-method", "--bootstrap", "--ci-level", "--min-coverage", "--allow-overlap", "--alpha",
        "--format")
    add_calibration_options(p)
    add_model_options(p)


def _pairs(text: str) -> Any:
    if text == "gender":
        return text
    pairs = []
    for item in (t.strip() for t in text.split(",") if t.strip()):
        a, sep, b = item.partition(":")
        if not sep or not a.strip() or not b.strip():
            raise ConfigError(f"--pairs: expected 'gender' or word:word pairs separated by commas, got {item!r}")
        pairs.append((a.strip(), b.strip()))
    if not pairs:
        raise ConfigError("--pairs: give 'gender' or at least one word:word pair")
    from ..metrics._pairs import check_pairs

    return list(check_pairs(pairs, "--pairs"))


def _options(args: argparse.Namespace) -> dict[str, Any]:
    given = given_options(args)
    opts = {_OPTIONS[k]: getattr(args, k) for k in _OPTIONS if k in given}
    if "pairs" in opts:
        opts["pairs"] = _pairs(opts["pairs"])
    return opts


def _p_footer(results: list[Any]) -> str:
    """How the permutation p-values of ``results`` were obtained, in one line."""
    methods = {r.p_method for r in results}
    n = next((r.n_permutations for r in results if r.p_method == "monte-carlo"), None)
    parts = [text for method, text in (
        ("exact", "exact where counting is cheap"),
        ("certified", "certified (p = the upper end of a bracket that holds the exact p)"),
        ("monte-carlo", f"sampled partitions of X+Y (p = (k+1)/(N+1), N = {n or 0:,})"),
    ) if method in methods]
    return "p: " + ", else ".join(parts) + "."


def _table(spec: Any, raw: list[Any], cal: list[Any] | None, alpha: float) -> str:
    from ..labels import classify_change, opposite_signs
    from ..metrics.intervals import ci_footer, ci_header
    from ..reporting.tables import _render, format_p

    has_p = spec.p_value != "none"
    space = cal[0].calibration if cal else None
    p_what = {"permutation": f"permutation p over target words, {raw[0].alternative or 'two-sided'}",
              "spearman": "p: Spearman's test of rho = 0, two-sided", "none": "no p-value"}[spec.p_value]
    head = (f"{spec.name.upper()}: {spec.title} ({spec.citation})\n"
            f"{'signed' if spec.signed else 'unsigned'}: {spec.direction}; {p_what}")
    has_ci = any(r.ci_method for r in raw + (cal or []))
    ci_head = [ci_header(raw + (cal or []))] if has_ci else []
    header = ["Test", "Bias", "Raw"] + ci_head + (["p"] if has_p else [])
    if cal:
        header += [str(space).upper()] + ci_head + (["p"] if has_p else []) + ["Change"] + (["Chg"] if has_p else [])
        header += ["Flags"] if spec.signed else []
    rows = []
    for i, r in enumerate(raw):
        row = [r.test, r.bias_type, f"{r.estimate:.3f}"] + ([_ci(r)] if has_ci else []) + (
            [format_p(r.p_value)] if has_p else [])
        if cal:
            c = cal[i]
            delta = c.estimate - r.estimate
            flag = "sign reversal" if opposite_signs(r.estimate, c.estimate) else "-"
            row += [f"{c.estimate:.3f}"] + ([_ci(c)] if has_ci else []) + ([format_p(c.p_value)] if has_p else [])
            row += [f"{delta:+.3f}" if math.isfinite(delta) else "nan"]
            row += [classify_change(r.p_value, c.p_value, alpha)[0]] if has_p else []
            row += [flag] if spec.signed else []
        rows.append(row)
    lines = [head, _render(header, rows)]
    notes = sorted({r.note for r in raw if r.note})
    lines += [f"note: {n}" for n in notes[:3]] + ([f"note: ... ({len(notes) - 3} more)"] if len(notes) > 3 else [])
    if spec.p_value == "permutation":
        lines.append(_p_footer(raw + (cal or [])))
    if has_p and cal:
        lines.append(f"Chg at alpha = {alpha:g}: S=Stable, D=Disappearing, E=Emerging (p < alpha is significant).")
    if has_ci:
        lines.append(ci_footer(raw + (cal or [])))
    return "\n".join(lines)


def _ci(r: Any) -> str:
    return f"[{r.ci_low:.3f}, {r.ci_high:.3f}]" if math.isfinite(r.ci_low) else "-"


def _cmd_metric(args: argparse.Namespace) -> int:
    from ..metrics.api import select_metrics
    from ..metrics.registry import METRICS
    from ..reporting.tables import emit_records
    from ..wordsets import resolve_tests

    specs = select_metrics(args.names)
    opts = _options(args)
    tests = resolve_tests(args.test)
    model = load_model_from_args(args)
    if args.calibration == "none" and not args.whitener:
        calibration_params(args)  # refuses --calibration-param on the raw space
        cal = None
    else:
        cal = calibrator_from_args(args, model)
    common = dict(rng=args.seed, min_coverage=args.min_coverage, allow_overlap=args.allow_overlap)
    names, raw, calibrated, failed = _each_metric(specs, opts, model, tests, cal, args.force, common)
    results = raw + (calibrated or [])
    from ..labels import protocol_text
    from ._spaces import space_protocols

    departures = space_protocols([raw] + ([calibrated] if calibrated else []), cal, model, args.permutations)
    if args.format in ("json", "csv"):  # every record says whether it is the paper's protocol (as isoeat run's)
        emit_records([{**r.to_dict(scores=args.format == "json"),
                       "protocol": protocol_text(departures[0 if i < len(raw) else 1])}
                      for i, r in enumerate(results)], args.format)
        return _failed(failed)
    spaces = f"raw vs {calibrated[0].calibration}" if calibrated else "raw only (--calibration none)"
    print(f"{model.name}: {spaces}; seed {args.seed}; X, Y = target words measured, A, B = poles")
    for j, spec in enumerate(METRICS.get(n) for n in names):
        pick = slice(j, None, len(names))
        print()
        print(_table(spec, raw[pick], calibrated[pick] if calibrated else None, args.alpha))
    from ..stats.results import with_suggestions

    dropped: dict[str, list[str]] = {}
    for r in raw:
        dropped.setdefault(r.test, [])
        dropped[r.test] += [w for w in with_suggestions(r.dropped, r.suggestions) if w not in dropped[r.test]]
    if any(dropped.values()):
        from .._types import ContextEncoder, corpus_name_of
        from ..labels import dropped_label

        corpus = corpus_name_of(model) if isinstance(model, ContextEncoder) else ""
        print()
        for t, d in dropped.items():
            if d:
                print(f"{t}: {dropped_label(corpus)}: {', '.join(d)}")
    from ..reporting.tables import embedded_footer, protocol_footer

    phrases = embedded_footer(raw, [r.test for r in raw])
    if phrases:
        print(phrases)
    for line in protocol_footer(departures[-1]):
        print(line)
    if cal is not None and calibrator_mark(cal):
        print(calibrator_mark(cal))
    return _failed(failed)


def _each_metric(specs: list[Any], opts: dict[str, Any], model: Any, tests: list[Any], cal: Any, force: bool,
                 common: dict) -> tuple[list[str], list[Any], list[Any] | None, list[str]]:
    """Each metric on every test, raw and calibrated: a metric that fails is named and the others go on.

    Returns the metrics computed, their raw and calibrated results (tests outer, metrics inner, as
    :func:`~isoeat.metrics.api.run_metrics` orders them) and one line per failed metric. When every metric
    fails, the first failure is raised (one line, exit 2).
    """
    from .._errors import IsoeatError
    from ..experiments.engine import CachedEncoder
    from ..metrics.api import run_metrics
    from ..metrics.registry import check_options

    try:  # an option that applies to none of them: one line, in the command line's spelling, before anything runs
        check_options(specs, opts)
    except IsoeatError as exc:
        text = str(exc)
        for flag, key in _OPTIONS.items():
            text = text.replace(f"option {key!r}", f"--{flag.replace('_', '-')}")
        raise ConfigError(text) from None
    cached = CachedEncoder(model)  # each test's words looked up once for all the metrics
    done: dict[str, tuple[list[Any], list[Any] | None]] = {}
    failed: list[str] = []
    first: IsoeatError | None = None
    for spec in specs:
        n, kw = spec.name, {**common, **{k: v for k, v in opts.items() if k in spec.options}}
        try:
            raw = run_metrics(cached, [n], tests, **kw)
            cal_res = run_metrics(cached, [n], tests, calibration=cal, force=force, **kw) if cal else None
        except IsoeatError as exc:
            first = first or exc
            failed.append(str(exc))
            continue
        done[n] = (raw, cal_res)
    if not done:
        assert first is not None
        raise first
    ok = list(done)
    raw_all = [done[n][0][i] for i in range(len(tests)) for n in ok]
    cal_all = [done[n][1][i] for i in range(len(tests)) for n in ok] if cal else None  # type: ignore[index]
    return ok, raw_all, cal_all, failed


def _failed(failed: list[str]) -> int:
    """Exit status 0, or 1 with one stderr line per metric that could not be computed."""
    for line in failed:
        sys.stderr.write(f"isoeat: metric failed: {line}\n")
    return 1 if failed else 0


COMMANDS = {"metric": _cmd_metric}
