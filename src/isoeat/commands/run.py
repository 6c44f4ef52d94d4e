"""``isoeat run``: every test raw vs calibrated, through the one experiment engine.

Two ways in, one engine. ``isoeat run CONFIG.yaml --out DIR`` runs the grid a
config describes; ``isoeat run [--model ...] [--tests ...] [--out DIR]`` builds
the one-model grid from its options (raw and one calibration) and runs it the
same way: the cells are computed by :mod:`isoeat.experiments.runner`, the
comparison rows, change classes, flags and Holm/BH families come from
:mod:`isoeat.experiments.compare`, and ``--out DIR`` is an experiment folder
(identity file, lock, cells, manifest, tables) that ``isoeat report DIR`` reads.
Without ``--out`` the folder is a temporary one, removed afterwards.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..cliargs import (
    add,
    add_model_options,
    add_stat_options,
    calibration_params,
    calibrator_from_args,
    examples,
    float_in,
    load_model_from_args,
    model_options,
    positive_int,
)
from ..labels import MAX_CORPORA

__all__ = ["register", "COMMANDS", "quick_config"]

#: Options that still mean something next to a CONFIG file.
_CONFIG_KEEP = {"command", "config", "out", "overwrite", "format", "progress", "allow_fallback"}


def register(sub: Any, add_stat_options_: Any = None) -> None:
    """Add the ``run`` parser."""
    p = sub.add_parser("run",
                       description="The paper's comparison (Table A1): every test (default W1..W10) on one model, "
                                   "raw beside calibrated (default zca), with d, p, Holm-adjusted p, Cohen's "
                                   "magnitude, the change class and flags, and the isotropy check. Results go to "
                                   "an experiment folder (--out DIR: cells, results.csv/json, comparison.csv/json, "
                                   "tables, manifest; resumable; then 'isoeat report DIR'), a temporary one "
                                   "without --out. With CONFIG.yaml: a grid of models x tests x calibrations.",
                       epilog=examples("isoeat run                                 # W1..W10, glove-6b-50d, raw vs zca",
                                       "isoeat run --test W6,W7 --calibration abtt --out results/",
                                       "isoeat run --test W1,W6 --metrics rnd,ripa,ect    # + other metrics",
                                       "isoeat run --model minilm --test W6,W7 --layers all --out res/   # every layer",
                                       "isoeat run examples/paper_glove.yaml --out results/   # a grid from a config"))
    p.add_argument("config", nargs="?", metavar="CONFIG.yaml",
                   help="an experiment grid (models x tests x calibrations); without it, the quick default run")
    add(p, "--overwrite")
    add(p, "--levels")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="cells done/total and ETA for every stage, short ones too (default: a bar on a terminal, "
                        "else a log line every 10 s of a long stage; --no-progress or --quiet: none)")
    add(p, "--model", "--test", "--calibration")
    p.add_argument("--metrics", default=None, metavar="NAME[,NAME...]",
                   help="other bias metrics measured beside WEAT, raw and calibrated, with a table of the "
                        "conclusions calibration changes: mac, rnd, ect, ripa, semaxis, direct-bias, nas, rnsb or "
                        "all (default: none, WEAT only; in a CONFIG: the 'metrics' key)")
    add(p, "--alpha")
    p.add_argument("--adjust", choices=("holm", "bh", "none"), default="holm",
                   help="adjusted p shown next to p in the table (default holm; files carry both)")
    p.add_argument("--layers", metavar="all|L,L,...", default=None,
                   help="hf: models (minilm): every listed hidden-state layer (0 = embedding output; all = 0 to the "
                        "last) from the same forward passes, with a layer profile (anisotropy and d raw vs "
                        "calibrated per layer; tables/layers.csv, figures/layers.png in --out); default: none, "
                        "the one layer of --layer")
    add(p, "--frame", "--out", "--audit")
    add_stat_options(p)

    r = p.add_argument_group("reference uncertainty (docs/reference-size.md)")
    add(p, "--reference-shards", group=r)
    r.add_argument("--reference-tolerance", type=float_in("--reference-tolerance", 0, float("inf"), True), default=0.02,
                   metavar="T", help="--reference-size auto: the largest SE_ref accepted (default 0.02)")
    r.add_argument("--reference-max", type=positive_int("--reference-max"), default=100_000, metavar="N",
                   help="--reference-size auto: the cap on the reference size (default 100000)")
    r.add_argument("--stability", type=_stability_arg, default="auto", metavar="auto|off|R",
                   help="the Firm column: whether each calibrated call and change class holds in >= 95%% of R "
                        "redraws of the reference sample (the bootstrap of its shards); auto (default): R = 100 "
                        "for static models, and with --reference-shards or --reference-size auto; contextual "
                        "models only on request: --stability R (or --reference-shards), which also splits their "
                        "reference into shards; off: no marks")
    add_model_options(p)
    p.add_argument("--across-corpora", nargs="?", const="present", default=None, metavar="SOURCES", action="append",
                   help="contextual models: run the same protocol on other corpora too (each its own contexts and "
                        "reference sample) and mark whether each call and change class holds on all of them "
                        "(the Corpora column, and a table of every corpus); alone: every corpus present offline; "
                        f"or names and paths, comma-separated or the option repeated (a path with a comma is "
                        f"taken whole where it exists; at most {MAX_CORPORA - 1} besides --corpus); "
                        "default: none. A corpus over the 10%% template-fallback gate is shown but does not vote")




def _stability_arg(text: str) -> int | str:
    if text in ("auto", "off"):
        return text
    try:
        return positive_int("--stability")(text)
    except (argparse.ArgumentTypeError, ValueError):
        raise argparse.ArgumentTypeError(f"--stability must be auto, off or a whole number of redraws (2 to 1000), "
                                         f"got {text!r}") from None


def _other_corpora(args: argparse.Namespace, model: Any) -> tuple[tuple[str, str], ...]:
    """``--across-corpora``: the ``(label, corpus)`` of each corpus besides the run's own, checked before anything
    is encoded (a named corpus must be present offline; a path must exist)."""
    from pathlib import PurePath

    from .._errors import ConfigError, IsoeatError
    from .._types import CorpusModel, name_of, streams_reference
    from ..backends._contextual import DEFAULT_CORPUS
    from ..corpora import NAMED_CORPORA, corpus_list, load_corpus, offline_corpora, resolve_corpus_spec

    if args.across_corpora is None:
        return ()
    items = [str(i) for i in args.across_corpora]
    config = next((i for i in items if i.lower().endswith((".yaml", ".yml"))), None)
    if config is not None:
        raise ConfigError(f"--across-corpora: {config!r} looks like a CONFIG file, read as the list of "
                          "corpora; a CONFIG lists the model once per corpus under 'models' instead")
    if not streams_reference(model):
        raise ConfigError("--across-corpora: a static model's vectors, and its reference sample (the vocabulary's "
                          "top words, the paper's protocol), read no corpus; to compare reference texts: isoeat "
                          "sensitivity --reference-text top,PATH")
    given = [opt for opt, on in (("--calibrator", bool(args.whitener)), ("--reference-text", bool(args.reference_text)),
                                 ("--scheduler", getattr(args, "_client", None) is not None)) if on]
    if given:
        raise ConfigError(f"--across-corpora: fits a calibrator on each corpus's own reference sample; not with "
                          f"{', '.join(given)}")
    present = [c["name"] for c in offline_corpora()]

    split = any("," in i for i in items)

    def resolved(spec: str) -> str:  # a named corpus must be present here too
        try:
            corpus = resolve_corpus_spec(spec, "--across-corpora")
        except ConfigError as exc:
            if not split:
                raise
            raise ConfigError(f"{exc}; the list was split at its commas (a path with a comma is taken whole only "
                              "where it exists; or repeat --across-corpora)") from None
        if corpus in NAMED_CORPORA and corpus not in present:
            raise ConfigError(f"--across-corpora: corpus {corpus} is not present offline (present: "
                              f"{', '.join(present) or 'none'}; or give a file or folder)")
        return corpus

    own = resolve_corpus_spec(args.corpus or DEFAULT_CORPUS)  # no --corpus: the model's default
    wanted = [c for i in items for c in (present if i == "present" else corpus_list([i], "--across-corpora"))]
    others = list(dict.fromkeys(c for c in map(resolved, wanted) if c != own))
    if not others:
        raise ConfigError(f"--across-corpora: no corpus besides this run's ({own}); present offline: "
                          f"{', '.join(present) or 'none'}; name others, e.g. --across-corpora wikitext-2,PATH")
    if len(others) > MAX_CORPORA - 1:
        raise ConfigError(f"--across-corpora: {len(others)} corpora besides {own}; at most {MAX_CORPORA - 1} (each "
                          "is a whole run of the model)")
    # each read now (a corpus without usable sentences is an error here, not a failed cell later), and one
    # vote per content: a file named twice, or as FORMAT:PATH and PATH, is one corpus
    seen = {str(getattr(model.corpus if isinstance(model, CorpusModel) else None, "fingerprint", own))}
    distinct = []
    for corpus in others:
        try:
            fingerprint = str(load_corpus(corpus).fingerprint)
        except IsoeatError as exc:
            raise ConfigError(f"--across-corpora: {exc}") from None
        if fingerprint not in seen:
            seen.add(fingerprint)
            distinct.append(corpus)
    if not distinct:
        raise ConfigError(f"--across-corpora: every corpus named has the content of this run's ({own})")
    others = distinct
    label = name_of(model) or args.model
    out: list[tuple[str, str]] = []
    for corpus in others:
        short = corpus if corpus in NAMED_CORPORA else PurePath(corpus).name
        lab, n = f"{label}[{short}]", 2
        while lab in {x for x, _ in out}:
            lab, n = f"{label}[{short}#{n}]", n + 1
        out.append((lab, corpus))
    return tuple(out)


def _explicit_options(args: argparse.Namespace) -> list[str]:
    """Options given on the command line that a CONFIG file makes meaningless."""
    parser = getattr(args, "_parser", None)
    if parser is None:
        return []
    from ..cliargs import option_names

    names = option_names(parser)
    bad = []
    for k, v in vars(args).items():
        if k in _CONFIG_KEEP or k.startswith("_"):
            continue
        if v != parser.get_default(k):
            bad.append(names.get(k, "--" + k.replace("_", "-")))
    return bad


def _split_tests(spec: str | None) -> list[str] | None:
    if spec is None:
        return None
    return [s.strip() for s in spec.split(",") if s.strip()]


def quick_config(args: argparse.Namespace, model: Any, calibrator: Any, layers: tuple[int, ...] = (),
                 corpora: tuple[tuple[str, str], ...] = ()) -> Any:
    """The one-model experiment that ``isoeat run`` without a CONFIG runs: raw and ``calibrator``'s space.

    With ``layers`` (``--layers``) the grid has one model per layer (label ``NAME@L<layer>``), each with its
    own calibrator fitted by the runner (``calibrator`` is None). With ``corpora`` (``--across-corpora``:
    ``(label, corpus)`` pairs) the model on each other corpus follows the first, its calibrator fitted by the
    runner on that corpus's reference sample.
    """
    from .._errors import ConfigError
    from .._types import name_of
    from ..experiments.config import parse_config

    params = calibration_params(args)
    name = getattr(calibrator, "name", args.calibration)
    if calibrator is None:
        pass
    elif args.whitener or getattr(args, "_client", None) is not None:
        # a given calibrator: its own parameters, and its content in the cell hashes (see run_experiment)
        params = dict(calibrator.get_params() if hasattr(calibrator, "get_params") else {})
    # epsilon goes into the settings (absolute, or relative: settings.eps_relative), the rest to the calibration
    eps = params.get("eps", args.eps)
    eps_setting = {"eps_relative": eps} if params.get("eps_mode") == "relative" else {"eps": eps}
    params = {k: v for k, v in params.items() if k not in ("eps", "eps_mode")}
    options = {k: v for k, v in model_options(args).items() if v is not None}
    tests = _split_tests(args.test)
    settings: dict[str, Any] = {
        "permutations": args.permutations, "method": args.method, "alternative": args.alternative,
        "ddof": args.ddof, "alpha": args.alpha, "seed": args.seed, **eps_setting, "min_coverage": args.min_coverage,
        "adjust": args.adjust, "bootstrap": args.bootstrap, "ci_method": args.ci_method, "ci_level": args.ci_level,
        "stop_early": bool(args.stop_early), "resample_attributes": bool(args.resample_attributes),
        "ci": bool(args.ci), "ci_estimand": args.ci_estimand,
        "allow_overlap": bool(args.allow_overlap),
        **({"exact_memory": args.exact_memory} if args.exact_memory is not None else {}),
        "reference": {"size": args.reference_size, **({"corpus": args.reference_text} if args.reference_text else {}),
                      **_route_options(args, calibrator)},
        "stability": args.stability if calibrator is None else "off",
    }
    label = name_of(model) or args.model
    models = [{"spec": args.model, "label": label, "options": options}] if not layers else [
        {"spec": args.model, "label": layer_label(label, layer), "options": {**options, "layer": layer}}
        for layer in layers]
    models += [{"spec": args.model, "label": lab, "options": {**options, "corpus": corpus}} for lab, corpus in corpora]
    data = {
        "name": "isoeat-run",
        "description": "isoeat run without a config: one model, raw vs one calibration"
                       + (f", layers {','.join(map(str, layers))}" if layers else ""),
        "models": models,
        "calibrations": ["none", {"name": name, **({"params": params} if params else {})}],
        "settings": settings,
        # the isotropy check printed under the table (paper §6.1): Table 2's measures of both spaces
        "anisotropy": {"sample": 2000, "components": 50, "frame": args.frame},
        **({"tests": tests} if tests is not None else {}),
        **({"metrics": args.metrics} if getattr(args, "metrics", None) else {}),
    }
    try:
        return parse_config(data, source=None, base_dir=Path.cwd())
    except ConfigError as exc:  # the one key an option fills that the user may misspell
        if str(exc).startswith("metrics"):
            raise ConfigError("--" + str(exc)) from None
        raise


def _route_options(args: argparse.Namespace, calibrator: Any) -> dict[str, Any]:
    """The reference settings of the calibrator route (shards, ``auto``'s tolerance and cap) the options give;
    none for a calibrator fitted before the run (``--whitener``, ``--scheduler``: its own record says them)."""
    if calibrator is not None:
        return {}
    out: dict[str, Any] = {}
    if args.reference_shards is not None:
        out["shards"] = args.reference_shards
    if args.reference_size == "auto":
        out.update(tolerance=args.reference_tolerance, max_size=args.reference_max)
    return out


def layer_label(label: str, layer: int) -> str:
    """The model label of one layer in a ``--layers`` run."""
    return f"{label}@L{layer}"


def _print_failures(summary: Any, out: Path | None) -> None:
    sys.stderr.write(f"isoeat: {len(summary.failed)} cell(s) failed:\n")
    for f in summary.failed[:20]:
        sys.stderr.write(f"  {f['key']}: {f.get('type')}: {f.get('message')}\n")
    if len(summary.failed) > 20:
        where = f" (see {out / 'failures.json'})" if out else ""
        sys.stderr.write(f"  ... and {len(summary.failed) - 20} more{where}\n")
    if out:
        from ..reporting.tables import retry_advice

        sys.stderr.write(retry_advice(summary.failed) + "\n")


def _run(config: Any, out: Path, args: argparse.Namespace, **given: Any) -> Any:
    """run_experiment with SIGTERM turned into an interruption (finished cells kept, lock released)."""
    from .._progress import progress_mode
    from ..experiments.runner import run_experiment

    progress = getattr(args, "progress", None)

    def log(msg: str) -> None:
        mode = progress_mode(progress)
        if mode:  # a note ends the bar's line; in a log it is a line of its own
            sys.stderr.write(("\r" if mode == "bar" else "") + msg + "\n")

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_term) if hasattr(signal, "SIGTERM") else None
    try:
        return run_experiment(config, out, overwrite=args.overwrite, progress=progress, log=log,
                              argv=sys.argv[1:], **given)
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


def comparisons(res: Any) -> list[Any]:
    """One :class:`~isoeat.experiments.compare.Comparison` per model and calibrated space of a folder."""
    from ..experiments.compare import Comparison, ComparisonRow, result_from_record
    from ..experiments.stability import CORPORA_COLUMNS, row_stability

    out = []
    by_key = {(r["model"], r["calibration"], r["test"]): r for r in res.weat}
    raw = next((c["label"] for c in res.calibrations if c["name"] == "none"), "none")
    for m in res.models:
        for c in res.calibrations:
            if c["name"] == "none":
                continue
            cal_meta = (res.manifest.get("calibrators", {}) or {}).get(f"{m['label']}/{c['label']}", {})
            ref_se = cal_meta.get("reference_se") or {}
            redraws = cal_meta.get("reference_replicate_d") or {}
            rows = []
            for row in res.comparisons:
                if row["model"] != m["label"] or row["calibration"] != c["label"]:
                    continue
                rr, rc = by_key[(m["label"], raw, row["test"])], by_key[(m["label"], c["label"], row["test"])]
                cal_res = result_from_record(rc)
                agree = row_stability(cal_res, redraws.get(row["test"]), res.alpha)
                rows.append(ComparisonRow(
                    test=row["test"], bias_type=row["bias_type"] or "", raw=result_from_record(rr),
                    calibrated=cal_res, change=row["change"], delta_d=row["delta_d"],
                    large_shift=row["large_shift"], sign_reversal=row["sign_reversal"],
                    reference_se=ref_se.get(row["test"]), replicates_same=None if agree is None else agree[0],
                    replicates=None if agree is None else agree[1],
                    across_corpora={k: row[k] for k in CORPORA_COLUMNS} if "corpora" in row else None))
            if not rows:
                continue
            meta = {"params": c.get("params") or {}, "reference": cal_meta.get("reference"),
                    **{k: cal_meta[k] for k in ("eps", "eps_mode", "model_check") if cal_meta.get(k) is not None},
                    **{k: v for k, v in cal_meta.items() if k.startswith("reference_") and k != "reference_steps"}
                    } if cal_meta else {}
            out.append(Comparison(model=m["label"], calibration=c["name"] if c["label"] == c["name"] else c["label"],
                                  alpha=res.alpha, rows=tuple(rows), calibrator_metadata=meta,
                                  contexts=m.get("family") not in (None, "static"),
                                  departures=res.departures(m["label"], c["label"]),
                                  raw_departures=res.departures(m["label"], raw),
                                  corpus=str(m.get("corpus") or "")))
    return out


def corpus_comparisons(res: Any, comps: list[Any]) -> list[list[Any]]:
    """The comparisons of each model the folder holds on several corpora (one list per model and calibration,
    in the grid's order: the first is the run's own corpus)."""
    from ..experiments.stability import corpus_groups

    out = []
    for group in corpus_groups(res.models):
        labels = [m["label"] for m in group]
        for cal in dict.fromkeys(c.calibration for c in comps if c.model in labels):
            found = {c.model: c for c in comps if c.model in labels and c.calibration == cal}
            if len(found) > 1:
                out.append([found[lab] for lab in labels if lab in found])
    return out


def isotropy_check_lines(res: Any, comp: Any) -> list[str]:
    """The isotropy check of ``comp``'s model (raw space, and ``comp``'s calibrated space) from the folder's cells."""
    from ..diagnostics.isotropy_check import isotropy_lines, space_records

    raw_label = next((c["label"] for c in res.calibrations if c["name"] == "none"), "none")
    raw, cal = space_records(res.anisotropy, comp.model, raw_label, comp.calibration)
    return isotropy_lines(comp.model, raw, cal, comp.calibration)


def _print(res: Any, fmt: str, adjust: str, shown: set[str] | None = None) -> list[Any]:
    """Print the folder's comparisons (``shown``: only these models' full tables; None: every model's), then,
    where the grid holds a model on several corpora, their table side by side."""
    from ..reporting.tables import comparison_table, corpora_table, emit_records, metric_comparison_table

    comps = comparisons(res)
    if fmt in ("json", "csv"):
        emit_records([rec for comp in comps for rec in comp.records()], fmt)
        return comps
    for i, comp in enumerate(c for c in comps if shown is None or c.model in shown):
        if i:
            print()
        print(comparison_table(comp, adjust=adjust))
        print()
        print("\n".join(isotropy_check_lines(res, comp)))
    for group in corpus_comparisons(res, comps):
        print()
        print(corpora_table(group))
    if res.metric_comparisons:  # `metrics:` in the config: which conclusions calibration changes, per metric
        print()
        print(metric_comparison_table(res.metric_comparisons, res.alpha))
    return comps


def _calibrator(args: argparse.Namespace, model: Any) -> tuple[Any, argparse.Namespace]:
    """The run's calibrator when it is fitted before the run (``--whitener``, ``--scheduler``, a contextual model's
    ``--reference-text``), else None: the runner fits it by the calibrator route (:mod:`isoeat.experiments.route`)
    from the config's settings, as a CONFIG's. The reference options are checked here, before anything is encoded.
    """
    from .._errors import ConfigError
    from .._types import dim_of, streams_reference
    from ..experiments.compare import stability_replicates

    auto = args.reference_size == "auto"
    given = bool(args.whitener) or getattr(args, "_client", None) is not None
    replicates = stability_replicates(args.stability, model, given or None, args.calibration,
                                      auto or args.reference_shards is not None)
    contextual = streams_reference(model)
    sharded = auto or args.reference_shards is not None or bool(replicates and contextual)
    if not auto:
        for opt, default in (("reference_tolerance", 0.02), ("reference_max", 100_000)):
            if getattr(args, opt) != default:
                raise ConfigError(f"--{opt.replace('_', '-')}: only used with --reference-size auto")
    if auto:
        from ..experiments.reference import check_auto_max

        check_auto_max(args.reference_max, "--reference-max")
    if args.reference_shards is not None or (contextual and sharded and not auto):  # before anything is
        # encoded: bounded, the refits estimated, and a contextual reference able to give them (whole chunks)
        from ..experiments.reference import DEFAULT_SHARDS, check_shards, reference_chunks

        kw = {"text": args.reference_text} if args.reference_text else {}
        chunks = reference_chunks(model, args.reference_size, kw) if contextual and not auto else None
        name = "--reference-shards" if args.reference_shards is not None else "--stability's --reference-shards"
        check_shards(args.reference_shards or DEFAULT_SHARDS, dim_of(model), name=name,
                     rows=None if contextual or auto else args.reference_size, chunks=chunks,
                     size_name="--reference-size", size=args.reference_size)
    if auto and args.reference_shards is not None:
        raise ConfigError("--reference-shards: --reference-size auto chooses its shards (the cap in 20); drop it")
    if sharded and given:
        raise ConfigError("--reference-size auto and --reference-shards fit the calibrator here; not with "
                          "--whitener or --scheduler")
    if sharded:
        from ..calibration import make_calibrator

        if not hasattr(type(make_calibrator(args.calibration)), "from_statistics"):
            raise ConfigError(f"reference-SE and --reference-size auto need a calibration fitted from mergeable "
                              f"statistics (zca); {args.calibration!r} is not")
    if given:
        return calibrator_from_args(args, model), args
    if contextual and args.reference_text:  # the encoder reads this text as its reference: fitted here
        return _fit_here(args, model, replicates, sharded)
    return None, args


def _fit_here(args: argparse.Namespace, model: Any, replicates: int, sharded: bool) -> tuple[Any, argparse.Namespace]:
    """A contextual model's calibrator on ``--reference-text``, by the calibrator route, handed to the run."""
    from ..experiments.engine import Engine
    from ..experiments.reference import ReferenceOptions
    from ..experiments.route import FitOptions, Route, fit_route
    from ..wordsets import resolve_tests

    def log(msg: str) -> None:
        from .._progress import progress_enabled

        if progress_enabled(getattr(args, "progress", None)):
            sys.stderr.write(msg + "\n")

    if not sharded:
        return calibrator_from_args(args, model), args
    from ..cliargs import weat_kwargs

    kw = weat_kwargs(args)
    route = Route(size=args.reference_size, reference=ReferenceOptions(
        shards=args.reference_shards, tolerance=args.reference_tolerance, max_size=args.reference_max),
        stability=args.stability, text=args.reference_text)
    options = FitOptions(alpha=args.alpha, ddof=args.ddof, min_coverage=args.min_coverage, log=log,
                         p_kwargs={k: kw[k] for k in ("alternative", "method", "n_permutations", "exact_memory")
                                   if k in kw})
    cal, _ = fit_route(Engine(model, seed=args.seed), resolve_tests(args.test), args.calibration,
                       calibration_params(args), route, None, options)
    used = argparse.Namespace(**vars(args))
    used.reference_size = cal.metadata_.get("reference_size", args.reference_size)
    return cal, used


def _check_calibration_params(args: argparse.Namespace, model: Any) -> None:
    """The calibration's parameters against the model's dimension, before any cell runs (the runner fits it,
    where a bad one would fail every calibrated cell instead of ending in one line)."""
    if args.calibration == "none" or args.whitener:
        return
    from .._types import dim_of
    from ..calibration import make_calibrator
    from ..calibration._base import _MomentCalibrator

    cal = make_calibrator(args.calibration, **calibration_params(args))
    dim = dim_of(model)
    if isinstance(cal, _MomentCalibrator) and dim is not None:
        cal.check_dimension(int(dim))


def _cmd_run(args: argparse.Namespace) -> int:
    import contextlib

    with contextlib.ExitStack() as stack:
        return _run_command(args, stack)


def _run_command(args: argparse.Namespace, stack: Any) -> int:
    """``isoeat run``; the quick run of static vectors enters one BLAS thread into ``stack`` (many small products,
    where a second OpenBLAS thread only spins: 1.5 s of CPU became 1.2 s for the default job, numbers unchanged)."""
    from .._errors import ConfigError
    from ..experiments.config import load_config
    from ..experiments.runner import load_experiment
    from ._audit import check_run_audit, write_run_audit

    t0 = time.perf_counter()
    check_run_audit(args)  # --audit: the quick run into a folder only, said before anything runs
    given: dict[str, Any] = {}
    sweep = None
    if args.levels and (args.config or args.layers is not None):
        raise ConfigError("--levels: the quick run of one model (no CONFIG, no --layers); 'isoeat weat --levels' "
                          "gives the levels of any test")
    if args.levels and getattr(args, "format", "table") != "table" and not args.out:
        raise ConfigError(f"--levels --format {args.format}: the levels go to DIR/tables/levels.csv: give --out DIR "
                          f"(or 'isoeat weat --levels --format {args.format}': its records carry them)")
    if args.config:
        bad = _explicit_options(args)
        if "--across-corpora" in bad:
            raise ConfigError("--across-corpora: not with a CONFIG file; a CONFIG lists the model once per corpus "
                              "under 'models' (options: {corpus: ...}), and its folder gets the same marks "
                              "(docs/experiments.md)")
        if bad:
            raise ConfigError(f"{', '.join(bad)}: not used with a CONFIG file; set these in the file's 'settings' "
                              "(see docs/experiments.md)")
        if not args.out:
            raise ConfigError("isoeat run CONFIG.yaml needs --out DIR (where cells, tables and the manifest go)")
        config = load_config(args.config)
        adjust = config.settings.adjust
    else:
        model = _quick_model(args, stack)
    if not args.config and args.layers is not None:
        sweep = _layer_sweep(args, model)
        config = quick_config(args, model, None, sweep.layers)
        given = {"models": {m.label: sweep[layer] for m, layer in zip(config.models, sweep.layers)}}
        adjust = args.adjust
    elif not args.config:
        corpora = _other_corpora(args, model)  # checked before the calibrator is fitted
        calibrator, args = _calibrator(args, model)  # None: the runner fits it, by the one calibrator route
        if args.whitener:  # another model's calibrator is a user error, said before any folder is written
            from ..calibration import check_compatible

            check_compatible(calibrator, model, force=bool(args.force))
        config = quick_config(args, model, calibrator, corpora=corpora)
        label = config.models[0].label
        given = {"models": {label: model}, "force": bool(args.force),
                 **({"calibration": {(label, config.calibrations[1].label): calibrator}} if calibrator is not None
                    else {})}
        adjust = args.adjust
    with tempfile.TemporaryDirectory(prefix="isoeat-run-") as tmp:
        out = Path(args.out) if args.out else Path(tmp) / "run"
        summary = _run(config, out, args, **given)
        if summary.kept_old:
            _print_failures(summary, None)
            sys.stderr.write(f"isoeat: --overwrite all: nothing replaced; {out} still holds its earlier results\n")
            return 1
        res = summary.results or load_experiment(out)  # what the run wrote, not read again
        shown = {config.models[0].label} if getattr(args, "across_corpora", None) else None
        comps = _print(res, getattr(args, "format", "table"), adjust, shown)
        if sweep is not None:
            _layer_profile(res, out, sweep, config, args)
        if getattr(args, "audit", False) and not summary.failed:
            n = len(write_run_audit(args, model, out, config, comps))
            if getattr(args, "format", "table") == "table":
                print(f"word-list audit: {n} test x space audits in {out / 'tables' / 'audit.json'} (and audit.csv); "
                      f"isoeat report {out} --html shows them")
        if getattr(args, "levels", False) and comps:  # the quick run's ML-EAT levels, tables/levels.csv
            from ._levels import run_levels

            run_levels(res, out, comps, model, args)
    if getattr(args, "format", "table") == "table":
        if args.config:
            print()
            print(f"{config.name}: {summary.line()}")
            print(f"tables: {out / 'tables'}; figures and report: isoeat report {out} --html")
        else:
            reused = f"; {summary.reused} of {summary.total} cells reused" if summary.reused else ""
            where = f"; written to {args.out}{reused}; report: isoeat report {args.out} --html" if args.out else ""
            print(f"({time.perf_counter() - t0:.1f} s{where})")
    if summary.failed:
        _print_failures(summary, Path(args.out) if args.out else None)
        return 1
    from ..cliargs import fallback_gate

    # --across-corpora: the gate is the run's own corpus's (another over it is shown, and left out of the vote)
    gated = [c for c in comps if c.contexts and (shown is None or c.model in shown)]
    return max([fallback_gate(args, [r.raw for r in c.rows], c.corpus) for c in gated], default=0)


def _quick_model(args: argparse.Namespace, stack: Any) -> Any:
    """The quick run's model, its tests, frame and calibration options checked before anything is encoded; static
    vectors enter one BLAS thread into ``stack``."""
    from .._types import VocabularyModel
    from ..diagnostics.frames import check_frame_for
    from ..wordsets import resolve_tests

    resolve_tests(args.test)  # unknown ids and bad files: the same one-line errors as every command
    if args.layers is not None:
        _check_layer_options(args)
    model = load_model_from_args(args)
    if isinstance(model, VocabularyModel):
        from .._resources import one_blas_thread

        stack.enter_context(one_blas_thread())
    check_frame_for(model, args.frame)  # the isotropy check's frame, before anything is encoded
    _check_calibration_params(args, model)
    return model


def _check_layer_options(args: argparse.Namespace) -> None:
    """``--layers``: refuse the options that mean one layer or one calibrator (before the model loads)."""
    from .._errors import ConfigError

    clash = [opt for opt, on in (("--layer", args.layer is not None), ("--whitener", bool(args.whitener)),
                                 ("--scheduler", getattr(args, "scheduler", None) is not None),
                                 ("--reference-shards", args.reference_shards is not None),
                                 ("--stability R", not isinstance(args.stability, str)),
                                 ("--reference-size auto", args.reference_size == "auto"),
                                 ("--across-corpora", getattr(args, "across_corpora", None) is not None)) if on]
    if clash:
        raise ConfigError(f"--layers: not with {', '.join(clash)} (each layer gets its own calibrator, fitted on "
                          "the reference sample of the same forward passes); drop one of them")


def _layer_sweep(args: argparse.Namespace, model: Any) -> Any:
    """The sweep of the layers ``--layers`` asks for (checked against the model's layers)."""
    from .._errors import ConfigError
    from .._types import LayeredModel, kind_of

    if not isinstance(model, LayeredModel):
        raise ConfigError(f"--layers: only hf: models (and minilm) have layers; {args.model!r} is a "
                          f"{kind_of(model)} model")
    return model.layer_sweep(args.layers, name="--layers")


def _layer_profile(res: Any, out: Path, sweep: Any, config: Any, args: argparse.Namespace) -> None:
    """Print the layer profile; with ``--out``, write tables/layers.csv and figures/layers.png."""
    from ..calibration import load_calibrator
    from ..experiments._store import slug
    from ..experiments.layers import profile_rows, profile_table, test_words, word_anisotropy, write_profile
    from ..wordsets import resolve_tests

    layer_of = {m.label: layer for m, layer in zip(config.models, sweep.layers)}
    cal_label = config.calibrations[1].label
    words = test_words(resolve_tests(args.test))
    comps, aniso = {}, {}
    for comp in comparisons(res):
        layer = layer_of[comp.model]
        cal = load_calibrator(out / "calibrators" / slug(comp.model) / f"{slug(cal_label)}.npz")
        comps[layer] = comp
        aniso[layer] = word_anisotropy(sweep[layer].lookup(words).vectors, cal)
    rows = profile_rows({layer: comps[layer] for layer in sweep.layers if layer in comps}, aniso,
                        model=sweep.base.name)
    if getattr(args, "format", "table") == "table":
        print()
        print(profile_table(rows))
    if args.out:
        write_profile(rows, out / "tables" / "layers.csv")
        try:
            from ..reporting.layer_figure import write_layer_figure

            write_layer_figure(rows, out / "figures" / "layers.png")
        except ImportError:  # matplotlib is optional: the table and the CSV are enough
            pass


COMMANDS = {"run": _cmd_run}
