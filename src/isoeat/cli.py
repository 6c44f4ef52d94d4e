"""The ``isoeat`` command.

Every user mistake ends as one line ``isoeat: error: ...`` on stderr and exit
status 2; results go to stdout (and, with ``--out``, to files written
atomically).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Sequence

__all__ = ["main"]

FORMATS = ("table", "json", "csv")


def _positive_int(name: str):
    def parse(text: str) -> int:
        try:
            v = int(text.replace("_", "").replace(",", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number, got {text!r}") from None
        if v < 1:
            raise argparse.ArgumentTypeError(f"{name} must be at least 1, got {v}")
        return v
    return parse


def _nonneg_int(name: str):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number, got {text!r}") from None
        if v < 0:
            raise argparse.ArgumentTypeError(f"{name} must be >= 0, got {v}")
        return v
    return parse


def _float_in(name: str, lo: float, hi: float, lo_open: bool = False, hi_open: bool = False):
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        ok = (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
        if not ok:
            lb = "(" if lo_open else "["
            rb = ")" if hi_open else "]"
            raise argparse.ArgumentTypeError(f"{name} must lie in {lb}{lo:g}, {hi:g}{rb}, got {v:g}")
        return v
    return parse


def add_calibration_options(p: argparse.ArgumentParser) -> None:
    """How the calibrator is obtained: fitted (--eps, --calibration-param, --reference-*) or loaded."""
    p.add_argument("--eps", type=_float_in("--eps", 0, float("inf")), default=1e-3,
                   help="ZCA regulariser added to eigenvalues (default 1e-3)")
    p.add_argument("--calibration-param", action="append", default=[], metavar="KEY=VALUE",
                   help="extra calibrator parameter, e.g. --calibration-param n_components=5 (repeatable)")
    p.add_argument("--reference-size", type=_positive_int("--reference-size"), default=100_000, metavar="N",
                   help="reference vectors for fitting the calibrator (default 100000 most frequent words)")
    p.add_argument("--reference-text", metavar="PATH",
                   help="take the reference words from this text (by frequency) instead of the vocabulary top")
    p.add_argument("--whitener", "--calibrator", dest="whitener", metavar="FILE",
                   help="use a calibrator saved with 'isoeat whiten' instead of fitting one")
    p.add_argument("--force", action="store_true",
                   help="apply a saved calibrator even if it was fitted on another model")


def terminal_progress() -> Any:
    """A ``progress(done, total, label)`` printer for stderr when it is a terminal, else None."""
    if not sys.stderr.isatty():
        return None

    def progress(done: int, total: int, label: str) -> None:
        sys.stderr.write(f"\r[{done}/{total}] {label}      ")
        sys.stderr.flush()
        if done == total:
            sys.stderr.write("\n")

    return progress


def _add_stat_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--permutations", type=_positive_int("--permutations"), default=100_000, metavar="N",
                   help="Monte Carlo permutations where p is not exact (default 100000)")
    p.add_argument("--seed", type=_nonneg_int("--seed"), default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--alternative", choices=("greater", "less", "two-sided"), default="greater",
                   help="permutation test alternative (default greater: P[S_i >= S])")
    p.add_argument("--method", choices=("auto", "exact", "monte-carlo"), default="auto",
                   help="p-value method (default auto: exact when feasible)")
    p.add_argument("--ddof", type=_nonneg_int("--ddof"), default=1,
                   help="delta degrees of freedom of the SD in d (default 1, as Caliskan et al.)")
    p.add_argument("--min-coverage", type=_float_in("--min-coverage", 0, 1), default=0.8, metavar="F",
                   help="error when a set keeps less than this share of its words (default 0.8)")
    add_calibration_options(p)
    p.add_argument("--bootstrap", type=_nonneg_int("--bootstrap"), default=0, metavar="N",
                   help="bootstrap resamples for a confidence interval on d (default 0: none)")
    p.add_argument("--ci-method", choices=("percentile", "bca"), default="percentile",
                   help="bootstrap interval method (default percentile)")
    p.add_argument("--ci-level", type=_float_in("--ci-level", 0, 1, True, True), default=0.95, metavar="L",
                   help="confidence level of the interval on d (default 0.95)")
    p.add_argument("--resample-attributes", action="store_true",
                   help="bootstrap the attribute words too, not only the targets")
    p.add_argument("--stop-early", action="store_true",
                   help="Monte Carlo: stop once the 95%% interval on p lies clear of alpha (0.05)")
    p.add_argument("--format", choices=FORMATS, default="table", help="output format (default table)")


def _add_model_options(p: argparse.ArgumentParser) -> None:
    """Options of contextual models (hf:, st:, minilm); static models ignore them."""
    g = p.add_argument_group("contextual models (hf:, st:, minilm)")
    g.add_argument("--corpus", metavar="SPEC",
                   help="context and reference corpus: gensim-wiki (default), wikitext-103, wikitext-2, or a path")
    g.add_argument("--layer", type=int, metavar="L", help="hidden layer (default last; negative counts from the end)")
    g.add_argument("--contexts", type=_positive_int("--contexts"), metavar="K", dest="contexts_per_word",
                   help="sentences per word for aggregation (default 20)")
    g.add_argument("--missing", choices=("fallback", "drop"),
                   help="a word in no sentence: encode it in a template (fallback, default) or drop it")
    g.add_argument("--reference-unit", choices=("word", "sentence"),
                   help="reference vectors for whitening: word occurrences (default) or sentences")
    g.add_argument("--device", metavar="DEV", help="cpu, cuda, cuda:1 (default: cuda when present)")
    g.add_argument("--cache-dir", metavar="DIR", help="embedding cache (default $ISOEAT_CACHE_DIR or ~/.cache/isoeat)")
    g.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler (tcp://HOST:8786 or a scheduler .json file): fit ZCA and encode the test "
                        "words on the cluster (pip install \"isoeat[distributed]\")")
    g.add_argument("--scheduler-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="seconds to wait for the scheduler (default 10)")


def _model_options(args: argparse.Namespace) -> dict[str, Any]:
    opts = {k: getattr(args, k, None) for k in
            ("corpus", "layer", "contexts_per_word", "missing", "reference_unit", "device", "cache_dir")}
    if getattr(args, "no_cache", False):
        opts["use_cache"] = False
    return opts


class _ClusterLookup:
    """A model whose ``lookup`` runs on a Dask cluster (every other attribute is the local model's)."""

    def __init__(self, model: Any, client: Any, spec: str, options: dict[str, Any]) -> None:
        self._model, self._client, self._spec, self._options = model, client, spec, options

    def lookup(self, words: Any) -> Any:
        from .distributed import encode_words_distributed

        return encode_words_distributed(self._spec, list(words), client=self._client, model_options=self._options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def load_model_from_args(args: argparse.Namespace) -> Any:
    """``load_model(args.model, ...)`` with the contextual options a command was given.

    With ``--scheduler``, the returned model looks words up on the cluster.
    """
    from .backends import load_model

    opts = _model_options(args)
    model = load_model(args.model, **opts)
    client = getattr(args, "_client", None)
    if client is not None:
        return _ClusterLookup(model, client, args.model, {k: v for k, v in opts.items() if v is not None})
    return model


def _weat_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """Options shared by `weat` and `run`, as keyword arguments of isoeat.weat."""
    if getattr(args, "calibration", None) == "none":
        calibration_params(args)  # refuses --calibration-param on the raw space
    kw: dict[str, Any] = dict(
        ddof=args.ddof, alternative=args.alternative, method=args.method, n_permutations=args.permutations,
        min_coverage=args.min_coverage, bootstrap=args.bootstrap, ci_method=args.ci_method,
        ci_level=args.ci_level, resample_attributes=args.resample_attributes,
    )
    if args.stop_early:
        kw["sequential_alpha"] = getattr(args, "alpha", 0.05)
    return kw


def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    from .calibration import calibration_names

    parser = argparse.ArgumentParser(
        prog="isoeat",
        description="Embedding association tests (WEAT) raw and calibrated against anisotropy (ZCA whitening).",
    )
    parser.add_argument("--version", action="version", version=f"isoeat {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("tests", help="list the built-in tests with sizes and bias types")
    p.add_argument("--format", choices=FORMATS, default="table")

    p = sub.add_parser("weat", help="one WEAT on one model, raw or calibrated")
    p.add_argument("--model", default="glove-6b-50d", help="model spec (default glove-6b-50d)")
    p.add_argument("--test", required=True, help="test id (W1..W10) or a YAML/JSON file")
    p.add_argument("--calibration", choices=calibration_names(), default="none")
    _add_stat_options(p)
    _add_model_options(p)

    p = sub.add_parser("run", help="all tests raw vs ZCA-whitened, with change classes (paper Table A1)")
    p.add_argument("config", nargs="?", metavar="CONFIG.yaml",
                   help="an experiment grid (models x tests x calibrations); without it, the quick default run")
    p.add_argument("--overwrite", choices=("never", "failed", "all"), default="never",
                   help="with CONFIG: recompute finished cells? (default never: resume)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="with CONFIG: show cells done/total and ETA (default: when stderr is a terminal)")
    p.add_argument("--model", default="glove-6b-50d", help="model spec (default glove-6b-50d)")
    p.add_argument("--tests", default=None, metavar="IDS|PATHS",
                   help="comma-separated ids and/or files (default W1..W10)")
    p.add_argument("--calibration", choices=calibration_names()[1:], default="zca",
                   help="calibration compared with the raw space (default zca)")
    p.add_argument("--alpha", type=_float_in("--alpha", 0, 1, True, True), default=0.05)
    p.add_argument("--adjust", choices=("holm", "bh", "none"), default="holm",
                   help="adjusted p shown next to p in the table (default holm; files carry both)")
    p.add_argument("--out", metavar="DIR", help="also write results.csv, results.json, comparison.csv/json here")
    _add_stat_options(p)
    _add_model_options(p)

    p = sub.add_parser("scweat", help="single-category WEAT: target words against the attributes of a test")
    p.add_argument("--model", default="glove-6b-50d")
    p.add_argument("--words", required=True, help="comma-separated target words, e.g. nurse,engineer")
    p.add_argument("--attributes", required=True, metavar="TEST",
                   help="test id or file whose attribute sets A and B are used (e.g. W6: career vs family)")
    p.add_argument("--calibration", choices=calibration_names(), default="none")
    _add_stat_options(p)
    _add_model_options(p)

    p = sub.add_parser("whiten", help="fit a calibrator (default ZCA) on a model's reference vectors, save it (.npz)")
    p.add_argument("--model", default="glove-6b-50d")
    p.add_argument("--out", required=True, metavar="FILE")
    p.add_argument("--calibration", choices=calibration_names()[1:], default="zca")
    p.add_argument("--eps", type=_float_in("--eps", 0, float("inf")), default=1e-3)
    p.add_argument("--calibration-param", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--reference-size", type=_positive_int("--reference-size"), default=100_000, metavar="N")
    p.add_argument("--reference-text", metavar="PATH")
    _add_model_options(p)
    for mod in _command_modules():
        mod.register(sub, _add_stat_options)
    return parser


def _command_modules() -> list[Any]:
    """Sub-command modules of :mod:`isoeat.commands` (each has ``register`` and ``COMMANDS``)."""
    import importlib
    import pkgutil

    from . import commands

    return [importlib.import_module(f"{commands.__name__}.{m.name}")
            for m in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name)]


def calibration_params(args: argparse.Namespace) -> dict[str, Any]:
    """``--eps`` and ``--calibration-param KEY=VALUE`` as calibrator keyword arguments."""
    from ._errors import ConfigError
    from .calibration import make_calibrator

    name = getattr(args, "calibration", "zca")
    params: dict[str, Any] = {}
    accepted = make_calibrator(name).get_params() if name != "none" else {}
    if "eps" in accepted:
        params["eps"] = args.eps
    items = getattr(args, "calibration_param", []) or []
    if items and name == "none":
        raise ConfigError("--calibration-param: the raw space (--calibration none) takes no parameters")
    seen: set[str] = set()
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--calibration-param expects KEY=VALUE, got {item!r}")
        if key in seen:
            raise ConfigError(f"--calibration-param: {key!r} given more than once")
        seen.add(key)
        if key not in accepted:
            raise ConfigError(
                f"--calibration-param: calibration {name!r} has no parameter {key!r} "
                f"(parameters: {', '.join(accepted) or 'none'})"
            )
        try:
            import json

            params[key] = json.loads(value)
        except ValueError:
            params[key] = value
    return params


def _calibrator(args: argparse.Namespace, model: Any) -> Any:
    """The calibrator a command asked for: loaded with --whitener, else fitted."""
    from .calibration import fit_calibrator, load_calibrator

    if args.whitener:
        return load_calibrator(args.whitener)
    kwargs = {"text": args.reference_text} if args.reference_text else {}
    client = getattr(args, "_client", None)
    if client is not None:
        from .distributed import fit_calibrator_distributed

        opts = {k: v for k, v in _model_options(args).items() if v is not None}
        return fit_calibrator_distributed(
            args.model, client=client, calibration=args.calibration, n_reference=args.reference_size,
            corpus=opts.get("corpus"), unit=opts.get("reference_unit"), model_options=opts,
            reference_kwargs=kwargs or None, **calibration_params(args),
        )
    return fit_calibrator(model, args.calibration, n_reference=args.reference_size, reference_kwargs=kwargs,
                          **calibration_params(args))


def _cmd_tests(args: argparse.Namespace) -> int:
    from .reporting.tables import _render, records_to_csv, to_json
    from .wordsets import list_tests

    tests = list_tests()
    if args.format == "json":
        sys.stdout.write(to_json([t.to_dict() for t in tests]))
        return 0
    recs = [
        {"id": t.id, "bias_type": t.bias_type, "X": t.X.name, "Y": t.Y.name, "A": t.A.name, "B": t.B.name,
         "n_x": len(t.X), "n_y": len(t.Y), "n_a": len(t.A), "n_b": len(t.B)}
        for t in tests
    ]
    if args.format == "csv":
        sys.stdout.write(records_to_csv(recs))
        return 0
    rows = [[r["id"], r["bias_type"], r["X"], r["Y"], r["A"], r["B"],
             str(r["n_x"]), str(r["n_y"]), str(r["n_a"]), str(r["n_b"])] for r in recs]
    print(_render(["ID", "Bias", "Target X", "Target Y", "Attribute A", "Attribute B",
                   "|X|", "|Y|", "|A|", "|B|"], rows, align_left=6))
    return 0


def _cmd_weat(args: argparse.Namespace) -> int:
    from .reporting.tables import records_to_csv, to_json, weat_table
    from .stats.weat import weat
    from .wordsets import resolve_tests

    tests = resolve_tests(args.test)
    model = load_model_from_args(args)
    cal = _calibrator(args, model) if args.calibration != "none" or args.whitener else None
    import numpy as np

    seeds = np.random.SeedSequence(args.seed).spawn(len(tests))
    results = [
        weat(model, t, calibration=cal, rng=int(seeds[i].generate_state(1)[0]), force=args.force,
             **_weat_kwargs(args))
        for i, t in enumerate(tests)
    ]
    if args.format == "json":
        sys.stdout.write(to_json([r.to_dict() for r in results]))
    elif args.format == "csv":
        sys.stdout.write(records_to_csv([r.to_dict() for r in results]))
    else:
        print(weat_table(results))
        for r in results:
            if r.dropped:
                print(f"{r.test}: not in vocabulary (dropped): {', '.join(r.dropped)}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    if args.config:
        from .experiments.runner import run_from_cli

        return run_from_cli(args)
    from .experiments import compare_calibration
    from .reporting.tables import comparison_table, records_to_csv, to_json, write_outputs
    from .wordsets import resolve_tests

    t0 = time.perf_counter()
    tests = resolve_tests(args.tests)
    model = load_model_from_args(args)
    cal = _calibrator(args, model)
    comp = compare_calibration(
        model, tests, calibrator=cal, alpha=args.alpha, rng=args.seed, force=args.force,
        progress=terminal_progress(),
        **_weat_kwargs(args),
    )
    records = comp.records()
    if args.out:
        write_outputs(args.out, "results", records)
        write_outputs(args.out, "comparison", [r.to_dict() for r in comp.rows], extra=comp.to_dict())
    if args.format == "json":
        sys.stdout.write(to_json(records))
    elif args.format == "csv":
        sys.stdout.write(records_to_csv(records))
    else:
        print(comparison_table(comp, adjust=args.adjust))
        print(f"({time.perf_counter() - t0:.1f} s" + (f"; written to {args.out})" if args.out else ")"))
    return 0


def _cmd_scweat(args: argparse.Namespace) -> int:
    from .reporting.tables import _render, format_d, format_p, records_to_csv, to_json
    from .stats.weat import sc_weat
    from .wordsets import resolve_tests

    (test,) = resolve_tests(args.attributes)[:1]
    model = load_model_from_args(args)
    cal = _calibrator(args, model) if args.calibration != "none" or args.whitener else None
    results = sc_weat(model, args.words, test, calibration=cal, ddof=args.ddof, alternative=args.alternative,
                      method=args.method, n_permutations=args.permutations, rng=args.seed,
                      min_coverage=args.min_coverage, force=args.force)
    recs = [{**r.to_dict(), "model": model.name, "calibration": cal.name if cal is not None else "none",
             "A": test.A.name, "B": test.B.name} for r in results]
    if args.format == "json":
        sys.stdout.write(to_json(recs))
    elif args.format == "csv":
        sys.stdout.write(records_to_csv(recs))
    else:
        print(f"SC-WEAT on {model.name} ({recs[0]['calibration']}): A = {test.A.name}, B = {test.B.name} "
              f"(from {test.id})")
        print(_render(["Word", "d", "p", "p method", "N"],
                      [[r.word, format_d(r.effect_size), format_p(r.p_value), r.p_method,
                        f"{r.n_permutations:,}"] for r in results], align_left=1))
    return 0


def _cmd_whiten(args: argparse.Namespace) -> int:
    from .calibration import save_calibrator

    args.whitener = None
    model = load_model_from_args(args)
    w = _calibrator(args, model)
    path = save_calibrator(w, args.out)
    label = "ZCA whitener" if w.name == "zca" else f"{w.name} calibrator"
    print(f"saved {label} for {model.name} (dim {w.n_features_in_}, n={w.n_samples_seen_}, "
          f"{', '.join(f'{k}={v}' for k, v in w.get_params().items())}) to {path}")
    return 0


def _one_line_warnings() -> Any:
    """Print isoeat's own warnings as ``isoeat: warning: ...`` (no source lines); returns the old hook."""
    import warnings

    from ._errors import IsoeatWarning

    default = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001
        if issubclass(category, IsoeatWarning):
            sys.stderr.write(f"isoeat: warning: {message}\n")
        else:
            default(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    return default


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    import warnings

    previous = _one_line_warnings()
    try:
        return _main(argv)
    finally:
        warnings.showwarning = previous


def _main(argv: Sequence[str] | None) -> int:
    from ._errors import IsoeatError

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # bare `isoeat` shows help; `isoeat run` is the main job
        parser.print_help()
        return 0
    handlers = {"tests": _cmd_tests, "weat": _cmd_weat, "run": _cmd_run, "scweat": _cmd_scweat, "whiten": _cmd_whiten}
    for mod in _command_modules():
        handlers.update(mod.COMMANDS)
    try:
        if getattr(args, "scheduler", None) and args.command in {"weat", "run", "scweat", "whiten"}:
            from .distributed import connect

            with connect(scheduler=args.scheduler, timeout=args.scheduler_timeout) as client:
                args._client = client
                return handlers[args.command](args)
        return handlers[args.command](args)
    except IsoeatError as exc:
        sys.stderr.write(f"isoeat: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("isoeat: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # disk full, permission denied, read-only file system, ...
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        sys.stderr.write(f"isoeat: error: {where}{exc.strerror or exc}\n")
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
