"""``isoeat sensitivity``: robustness of calibrated WEAT to ε, reference size and reference corpus.

Prints the per-test summary (d raw and at the default setting, the range of
d over the sweep, the share of cells whose significance agrees with the
default, the verdict); with ``--out DIR`` also writes ``sensitivity.csv``,
``sensitivity.json`` (one row per test, setting and repeat),
``sensitivity-summary.json``, ``sensitivity_by_test.csv/json`` and the
figures ``sensitivity_eps.png/pdf``, ``sensitivity_reference_size.png/pdf``
(and ``sensitivity_reference``/``sensitivity_calibration`` when swept).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import time
import warnings
from pathlib import Path
from typing import Any

__all__ = ["register", "COMMANDS"]

_NONE = ("none", "-", "off")


def _split(text: str | None, option: str) -> list[str] | None:
    """``None`` when the option was not given, ``[]`` for 'none', else the comma-separated items."""
    from .._errors import ConfigError

    if text is None:
        return None
    t = text.strip()
    if t.lower() in _NONE:
        return []
    items = [s.strip() for s in t.split(",")]
    if not t or any(not s for s in items):
        raise ConfigError(f"{option}: empty list or empty item in {text!r} (give comma-separated values, "
                          f"or 'none' to skip this sweep)")
    return items


def _parse_list(text: str | None, option: str, parse: Any, what: str, check: Any, rule: str) -> list | None:
    """A comma-separated option as a list: each item parsed, then checked (one-line errors name the item)."""
    from .._errors import ConfigError

    items = _split(text, option)
    if items is None:
        return None
    out = []
    for s in items:
        try:
            v = parse(s)
        except ValueError:
            raise ConfigError(f"{option}: {s!r} is not {what} (in {text!r})") from None
        if not check(v):
            raise ConfigError(f"{option}: {rule}, got {s!r}")
        out.append(v)
    return out


def _whole(s: str) -> int:
    f = float(s.replace("_", ""))
    if not math.isfinite(f) or f != int(f):
        return -1  # refused by the check below with the sizes message
    return int(f)


def _parse_floats(text: str | None, option: str) -> list[float] | None:
    return _parse_list(text, option, float, "a number", lambda v: math.isfinite(v) and v > 0,
                       "ε must be a finite number > 0")


def _parse_ints(text: str | None, option: str) -> list[int] | None:
    return _parse_list(text, option, _whole, "a whole number", lambda v: v >= 2, "sizes must be whole numbers >= 2")


def _params(items: list[str], name: str) -> dict[str, Any]:
    from ..cliargs import parse_calibration_params

    return parse_calibration_params(items, name, refuse={"eps": "give ε with --default-eps (and the sweep with --eps)",
                                                         "eps_mode": "give a relative sweep with --eps-relative LIST"})


def register(subparsers: Any, add_stat_options: Any) -> None:
    """Add the ``sensitivity`` parser (its own options; the shared stat options do not fit a sweep)."""
    from ..cliargs import add, examples, float_in, positive_int
    from ..experiments._sensitivity_checks import (  # the defaults (light: --help loads no numpy)
        DEFAULT_EXACT_MAX_N,
        DEFAULT_REFERENCE_SIZES,
        DEFAULT_REPEATS,
        DRAWS,
    )

    p = subparsers.add_parser(
        "sensitivity",
        description="Re-run the calibrated WEAT battery while varying one choice at a time around the default "
                    "(ZCA, eps=1e-3, the 100,000 most frequent words), and report per test the spread of d, "
                    "the share of settings whose significance agrees with the default, and a verdict.",
        epilog=examples("isoeat sensitivity --test W6,W7                       # eps and reference-size sweeps",
                        "isoeat sensitivity --eps-relative 1e-4,1e-3,1e-2 --reference-sizes none"),
    )
    add(p, "--model", "--test", "--calibration", "--calibration-param")
    add(p, "--eps", "--eps-relative", group=p.add_mutually_exclusive_group())
    p.add_argument("--eps-mode", choices=("absolute", "relative"), default="absolute", help=argparse.SUPPRESS)
    p.add_argument("--reference-sizes", default=None, metavar="LIST",
                   help="reference sample sizes to sweep, or 'none' "
                        f"(default {','.join(str(n) for n in DEFAULT_REFERENCE_SIZES)})")
    add(p, "--reference-text")
    p.add_argument("--calibrations", default=None, metavar="NAMES",
                   help="other calibrations to compare at the default setting, e.g. center,abtt "
                        "(default: none)")
    p.add_argument("--repeats", type=positive_int("--repeats"), default=DEFAULT_REPEATS, metavar="R",
                   help=f"reference draws per setting (default {DEFAULT_REPEATS})")
    p.add_argument("--draw", choices=DRAWS, default="auto",
                   help="how a repeat draws its reference sample: bootstrap (from the pool with replacement), "
                        "subset (without replacement), encoder (the encoder re-samples its reference sentences), "
                        "fixed (deterministic, 1 repeat); default auto: bootstrap for static vectors, encoder "
                        "for contextual encoders")
    p.add_argument("--default-eps", type=float_in("--default-eps", 0, float("inf"), lo_open=True), default=1e-3,
                   metavar="E", help="eps of the default setting (default 1e-3, paper eq. 11)")
    p.add_argument("--default-size", type=positive_int("--default-size"), default=100_000, metavar="N",
                   help="reference size of the default setting (default 100000)")
    p.add_argument("--default-reference", default="top", metavar="SOURCE",
                   help="reference source of the default setting: top or a text path (default top)")
    add(p, "--alpha")
    p.add_argument("--agreement", type=float_in("--agreement", 0, 1), default=0.9, metavar="F",
                   help="verdict: robust needs this share of cells agreeing in significance (default 0.9)")
    p.add_argument("--max-shift", type=float_in("--max-shift", 0, float("inf"), lo_open=True), default=0.5,
                   metavar="X", help="verdict: robust needs every |d - d_default| <= X (default 0.5)")
    add(p, "--permutations")
    p.add_argument("--exact-max-n", type=positive_int("--exact-max-n"), default=DEFAULT_EXACT_MAX_N, metavar="N",
                   help="count p exactly when |X|+|Y| <= N (default: the budget of every other command, exact "
                        "up to 50 words, certified beyond)")
    add(p, "--method", "--alternative", "--ddof", "--min-coverage", "--seed", "--format", "--out", "--no-figures",
        "--force")
    p.set_defaults(_check_effects=_check_effects)


def eps_sweep(args: argparse.Namespace) -> tuple[Any, str]:
    """The ε sweep as (text of the list, mode): ``--eps-relative LIST``, else ``--eps LIST`` with the older
    ``--eps-mode`` (absolute by default)."""
    if getattr(args, "eps_relative", None) is not None:
        return args.eps_relative, "relative"
    return args.eps, args.eps_mode


def _check_effects(args: argparse.Namespace) -> None:
    """The sweep's options that would change nothing (``cliargs.check_option_effects`` calls it)."""
    from .._errors import ConfigError
    from ..calibration import make_calibrator
    from ..cliargs import given_options

    given = given_options(args)
    has_eps = "eps" in make_calibrator(args.calibration).get_params()
    text, _ = eps_sweep(args)
    sweep = ("eps" in given or "eps_relative" in given) and str(text).strip().lower() != "none"
    if not has_eps:
        eps = [o for o, k in (("--eps", "eps"), ("--eps-relative", "eps_relative"), ("--eps-mode", "eps_mode"),
                              ("--default-eps", "default_eps"))
               if k in given and (k not in ("eps", "eps_relative") or sweep)]
        if eps:
            raise ConfigError(f"{', '.join(eps)}: calibration {args.calibration!r} has no epsilon, so every "
                              f"setting of the sweep would be the same; drop {', '.join(eps)}")
    elif "eps_mode" in given and "eps_relative" in given:
        raise ConfigError("--eps-mode: the older spelling of --eps-relative LIST; give one of them")
    elif "eps_mode" in given and "eps" in given and not sweep:
        raise ConfigError("--eps-mode: no effect with --eps none (no epsilon sweep); drop it, or give the "
                          "epsilons to sweep")


def _fmt(v: float, spec: str = ".2f") -> str:
    return "nan" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def firm_marks(model: Any, tests: Any, res: Any, args: argparse.Namespace) -> dict[str, str]:
    """The ``Firm`` mark that ``isoeat run`` gives each test's default calibrated cell (``firm`` /
    ``borderline (k/R)`` / ``unstable (k/R)``), by the same engine
    (:func:`~isoeat.experiments.compare.compare_calibration`, its stability redraws); empty where
    run gives none (a contextual model, a default reference other than the model's own) or where its default cell
    is not the sweep's (another d): a mark is never shown beside a d it was not computed for."""
    import math as _math

    from .._errors import IsoeatError
    from .._types import streams_reference
    from ..experiments.compare import compare_calibration
    from ..labels import holds_mark

    d = res.default
    if d.get("reference") != "top" or streams_reference(model):
        return {}
    params = dict(res.calibrator_metadata.get("params") or {})
    if isinstance(d.get("eps"), float) and _math.isfinite(d["eps"]):
        params["eps"] = d["eps"]
    po = res.p_options
    try:
        comp = compare_calibration(model, tests, calibration={res.calibration: params},
                                   n_reference=int(d["n_reference_used"]), alpha=args.alpha, rng=args.seed,
                                   method=po["method"], n_permutations=po["n_permutations"],
                                   alternative=po["alternative"], ddof=po["ddof"], min_coverage=args.min_coverage)
    except (IsoeatError, ValueError):  # no marks rather than no table
        return {}
    default_d = {s.test: s.d_default for s in res.summary}
    return {r.test: holds_mark(r.replicates_same, r.replicates) for r in comp.rows
            if r.replicates and r.test in default_d
            and abs(float(r.calibrated.effect_size) - float(default_d[r.test])) <= 1e-9}


def firm_line(s: Any, mark: str | None) -> str:
    """One test's verdict beside its Firm mark: they answer different questions, said where they differ."""
    if mark is None:
        return f"{s.test} fragile: {s.reason}" if s.verdict == "fragile" else ""
    firm = mark == "firm"
    if (s.verdict == "robust") == firm:
        return (f"{s.test} fragile: {s.reason}; Firm: {mark} too (isoeat run)" if not firm else "")
    why = ("it asks whether a fresh draw of the default reference keeps the call, this sweep whether other eps "
           "and reference sizes do")
    return (f"{s.test} {s.verdict}" + (f": {s.reason}" if s.verdict == "fragile" else "")
            + f"; Firm: {mark} in isoeat run: {why}.")


def summary_table(res: Any, firm: dict[str, str] | None = None) -> str:
    """The per-test summary as text (``firm``: :func:`firm_marks`, a ``Firm`` column and the lines that relate it
    to the verdict)."""
    from ..reporting.tables import _render, format_p

    kinds = [(k, label) for k, label in (("eps", "ag_eps"), ("reference_size", "ag_n"), ("reference", "ag_ref"),
                                          ("calibration", "ag_cal"))
             if any(r.kind == k for r in res.rows)]
    firm = firm or {}
    header = ["ID", "Bias", "d_raw", "p_raw", "d_def", "p_def", "d_min", "d_max", "SD", "max|Δd|", "agree",
              *(label for _, label in kinds), "Verdict", *(["Firm"] if firm else [])]

    def pct(v: float) -> str:
        return "nan" if math.isnan(v) else f"{v:.0%}"

    rows = []
    for s in res.summary:
        rows.append([s.test, s.bias_type, _fmt(s.d_raw), format_p(s.p_raw), _fmt(s.d_default),
                     format_p(s.p_default), _fmt(s.d_min), _fmt(s.d_max), _fmt(s.d_sd), _fmt(s.max_abs_shift),
                     pct(s.share_agree), *(pct(getattr(s, f"share_agree_{k}")) for k, _ in kinds), s.verdict,
                     *([firm.get(s.test, "-")] if firm else [])])
    d = res.default
    eps = "" if isinstance(d["eps"], float) and math.isnan(d["eps"]) else f"eps={d['eps']:g}, "
    head = (f"{res.model}: sensitivity of {res.calibration}-calibrated WEAT; default {eps}n={d['n_reference_used']:,}, "
            f"reference {d['reference']}; {res.sweep['repeats']} draw(s) per setting ({res.sweep['draw']})")
    sw = res.sweep
    parts = []
    if sw["eps"]:
        parts.append(f"eps {', '.join(f'{e:g}' for e in sw['eps'])} ({sw['eps_mode']})")
    if sw["reference_sizes"]:
        parts.append(f"reference size {', '.join(f'{n:,}' for n in sw['reference_sizes'])}")
    if sw["references"]:
        parts.append(f"reference {', '.join(sw['references'])}")
    if sw["calibrations"]:
        parts.append(f"calibration {', '.join(sw['calibrations'])}")
    fragile = [s.test for s in res.summary if s.verdict == "fragile"]
    lines = [head, "", _render(header, rows, align_left=2), "",
             f"Swept: {'; '.join(parts)}.",
             f"Rule: {res.rule}.",
             f"{_p_line(res)}; d_def/p_def: the default setting; "
             f"d_min..max, SD, max|Δd|, agree: over the sweep's cells; ag_*: agreement within one swept choice."]
    if firm:
        lines.append("Firm: the mark isoeat run gives the default cell (yes: the calibrated call is the same in at "
                     "least 95% of redraws of the default reference sample).")
    lines += [line for line in (firm_line(s, firm.get(s.test) if firm else None) for s in res.summary) if line]
    if not fragile:
        lines.append("All tests robust under this sweep.")
    for n in res.notes:
        lines.append(f"note: {n}")
    return "\n".join(lines)


def _p_line(res: Any) -> str:
    """How the rows' p-values were obtained, from the rows themselves (a rule could claim exact for a certified p)."""
    tests: dict[str, list[str]] = {}
    for r in res.rows:
        seen = tests.setdefault(r.p_method, [])
        if r.test not in seen:
            seen.append(r.test)
    said = {"exact": "exact",
            "certified": "certified (the upper end of a bracket that holds the exact p)",
            "monte-carlo": f"Monte Carlo ({res.p_options['n_permutations']:,} permutations, p = (k+1)/(N+1))"}
    return "p: " + "; ".join(f"{said.get(m, m)} for {', '.join(t)}" for m, t in tests.items())


def _run(model: Any, tests: Any, args: argparse.Namespace, eps: Any, sizes: Any, refs: Any, cals: Any,
         params: dict[str, Any], progress: Any) -> Any:
    from ..experiments.sensitivity import DEFAULT_EPS_GRID, DEFAULT_REFERENCE_SIZES, sensitivity_analysis

    return sensitivity_analysis(
        model, tests,
        calibration=args.calibration, calibration_params=params,
        eps=DEFAULT_EPS_GRID if eps is None else eps, eps_mode=eps_sweep(args)[1],
        reference_sizes=DEFAULT_REFERENCE_SIZES if sizes is None else sizes,
        references=refs or None, calibrations=cals or None,
        repeats=args.repeats, draw=args.draw,
        default_eps=args.default_eps, n_reference=args.default_size, default_reference=args.default_reference,
        alpha=args.alpha, rng=args.seed, n_permutations=args.permutations, exact_max_n=args.exact_max_n,
        method=args.method, alternative=args.alternative, ddof=args.ddof, min_coverage=args.min_coverage,
        agreement_threshold=args.agreement, max_shift=args.max_shift, progress=progress,
    )


def _check_early(refs: list[str] | None, cals: list[str] | None, default_reference: str) -> None:
    """Refuse unknown calibrations and missing reference texts before loading the model."""
    from ..calibration import make_calibrator

    for name in cals or []:
        make_calibrator(name)
    from ..experiments.sensitivity import reference_text

    for src, option in [*((r, "--reference-text") for r in refs or []), (default_reference, "--default-reference")]:
        if src != "top":
            reference_text(src, option)


def _write(args: argparse.Namespace, res: Any, figures: bool) -> list:
    from ..reporting.tables import write_outputs

    written: list = []
    if args.out:
        written += write_outputs(args.out, "sensitivity", res.records(), extra=res.to_dict(rows=False))
        written += write_outputs(args.out, "sensitivity_by_test", res.summary_records())
        if figures:
            from ..reporting._glyphs import glyphs_for
            from ..reporting.sensitivity_plots import save_sensitivity_figures

            with glyphs_for(str(r.get("test", "")) for r in res.records()):  # a test id the font lacks: said once
                written += save_sensitivity_figures(res, args.out)
    return written


def _cmd_sensitivity(args: argparse.Namespace) -> int:
    from .._errors import IsoeatWarning
    from ..backends import load_model
    from ..reporting.tables import emit_records
    from ..wordsets import resolve_tests

    t0 = time.perf_counter()
    eps = _parse_floats(eps_sweep(args)[0], "--eps-relative" if args.eps_relative is not None else "--eps")
    sizes = _parse_ints(args.reference_sizes, "--reference-sizes")
    whole = str(args.reference_text or "").strip()  # a path with a comma: taken whole where it exists
    refs = [whole] if "," in whole and Path(whole).expanduser().is_file() else _split(args.reference_text,
                                                                                     "--reference-text")
    cals = _split(args.calibrations, "--calibrations")
    params = _params(args.calibration_param, args.calibration)
    _check_early(refs, cals, args.default_reference)
    figures = bool(args.out) and not args.no_figures
    if figures:
        from ..reporting.sensitivity_plots import require_matplotlib

        require_matplotlib()  # fail before the work, not after
    tests = resolve_tests(args.test)
    model = load_model(args.model)
    from .._progress import terminal_progress

    progress = terminal_progress()
    with contextlib.ExitStack() as stack:
        if args.out:  # claimed before the work: a folder that cannot be written is refused at once
            from ..experiments.lock import claimed_folder

            stack.enter_context(claimed_folder(args.out, "sensitivity", force=args.force))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IsoeatWarning)  # caps and fit warnings are printed as notes
            res = _run(model, tests, args, eps, sizes, refs, cals, params, progress)
        written = _write(args, res, figures)
    if args.format in ("json", "csv"):
        for n in res.notes:
            sys.stderr.write(f"isoeat: note: {n}\n")
    if args.format in ("json", "csv"):
        emit_records(res.to_dict() if args.format == "json" else res.records(), args.format)
    else:
        print(summary_table(res, firm_marks(model, tests, res, args)))
        print(f"({len(res.rows):,} rows, {time.perf_counter() - t0:.1f} s"
              + (f"; written to {args.out}: {', '.join(p.name for p in written)})" if args.out else ")"))
    return 0


COMMANDS = {"sensitivity": _cmd_sensitivity}
