"""Argument types and option groups shared by the ``isoeat`` sub-commands (public).

Every command module in :mod:`isoeat.commands` builds its parser and reads its
arguments with these helpers, so an option means the same thing, with the same
default and the same validation, in every command.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._validate import check_int, check_real
from .backends._precision import CUDA_DTYPES, DEFAULT_DTYPE, DTYPES, check_dtype_device

__all__ = [
    "FORMATS", "examples", "positive_int", "nonneg_int", "float_in", "add_calibration_options", "add_stat_options",
    "add_model_options", "add_eps_options", "eps_params", "model_options", "ClusterLookup", "check_option_effects",
    "load_model_from_args", "weat_kwargs",
    "calibration_params", "parse_calibration_params", "calibrator_from_args", "given_options", "check_whitener_options",
]

FORMATS = ("table", "json", "csv")


def _argument(name: str, parse: Any, check: Any, what: str) -> Any:
    """An argparse ``type=`` that parses the text, then validates it with :mod:`isoeat._validate`."""
    from ._errors import ConfigError

    def convert(text: str) -> Any:
        try:
            value = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be {what}, got {text!r}") from None
        try:
            return check(value)
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert


def _whole(text: str) -> int:
    return int(text.replace("_", "").replace(",", ""))


def _bytes_arg(name: str) -> Any:
    from ._validate import check_bytes

    return _argument(name, str, lambda v: check_bytes(name, v), "a size")


def positive_int(name: str) -> Any:
    """``type=`` for a whole number >= 1 (``100_000`` and ``100,000`` accepted)."""
    return _argument(name, _whole, lambda v: check_int(name, v, lo=1), "a whole number")


def nonneg_int(name: str) -> Any:
    """``type=`` for a whole number >= 0."""
    return _argument(name, _whole, lambda v: check_int(name, v, lo=0), "a whole number")


def resamples(name: str) -> Any:
    """``type=`` for a number of bootstrap resamples: a whole number from 0 to ``_limits.MAX_RESAMPLES``."""
    from ._limits import MAX_RESAMPLES

    return _argument(name, _whole, lambda v: check_int(name, v, lo=0, hi=MAX_RESAMPLES), "a whole number")


def float_in(name: str, lo: float, hi: float, lo_open: bool = False, hi_open: bool = False) -> Any:
    """``type=`` for a number in an interval (open or closed at either end; ``hi=inf`` for none)."""
    upper = None if hi == float("inf") else hi
    return _argument(name, float, lambda v: check_real(name, v, lo=lo, hi=upper, lo_open=lo_open, hi_open=hi_open),
                     "a number")


def examples(*lines: str) -> str:
    """A command's ``--help`` epilog: example command lines, printed as written (see ``isoeat.cli``)."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def add_eps_options(p: argparse.ArgumentParser) -> None:
    """``--eps E`` (absolute, the paper's) or ``--eps-relative R`` (ε = R · mean eigenvalue): one or the other."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--eps", type=float_in("--eps", 0, float("inf")), default=1e-3,
                   help="regulariser added to the eigenvalues of the reference covariance, absolute as in the paper "
                        "(default 1e-3)")
    g.add_argument("--eps-relative", type=float_in("--eps-relative", 0, float("inf")), default=None, metavar="R",
                   help="instead of --eps: epsilon = R times the mean eigenvalue of the reference covariance, the "
                        "same share of the spectrum whatever the scale of the vectors (default: not used, --eps)")


def eps_params(args: argparse.Namespace) -> dict[str, Any]:
    """``--eps``/``--eps-relative`` as calibrator parameters: ``{"eps": E}`` or ``{"eps": R, "eps_mode": "relative"}``."""
    r = getattr(args, "eps_relative", None)
    if r is not None:
        return {"eps": r, "eps_mode": "relative"}
    return {"eps": args.eps}


def add_calibration_options(p: argparse.ArgumentParser, *, sentences: bool = False, saved: bool = True) -> None:
    """How the calibrator is obtained: fitted (--eps, --calibration-param, --reference-*) or loaded.

    ``sentences``: the model is a sentence encoder (``isoeat seat``), whose reference sample is sentences;
    ``saved=False`` leaves out loading a saved calibrator (--whitener, --force), for ``isoeat whiten``.
    """
    add_eps_options(p)
    p.set_defaults(_fits_calibrator=True)  # check_option_effects: these options only say how to fit one
    p.add_argument("--calibration-param", action="append", default=[], metavar="KEY=VALUE",
                   help="extra calibrator parameter, e.g. --calibration-param n_components=5 (repeatable; "
                        "default: none)")
    if sentences:
        size_help = ("reference sentences the calibrator is fitted on: N sentences sampled (seeded) from the "
                     "encoder's corpus, gensim-wiki, or from --reference-text, and embedded (default 100000)")
        text_help = "take the reference sentences from this text instead of the encoder's corpus"
    else:
        size_help = ("size of the reference sample the calibrator is fitted on: the N most frequent words of a "
                     "static model, N corpus sentences of a contextual one (default 100000)")
        text_help = ("take the reference sample from this text instead: its words by frequency (static models) "
                     "or its sentences (contextual models)")
    p.add_argument("--reference-size", type=positive_int("--reference-size"), default=100_000, metavar="N",
                   help=size_help)
    p.add_argument("--reference-text", metavar="PATH", help=text_help)
    if not saved:
        return
    p.add_argument("--whitener", "--calibrator", dest="whitener", metavar="FILE",
                   help="use a calibrator saved with 'isoeat whiten' instead of fitting one")
    p.add_argument("--force", action="store_true",
                   help="apply a saved calibrator even if it was fitted on another model")


def add_stat_options(p: argparse.ArgumentParser, *, sentences: bool = False) -> None:
    """The statistics, calibrator, interval and output options of the association tests (weat, scweat, run, seat)."""
    p.add_argument("--permutations", type=positive_int("--permutations"), default=100_000, metavar="N",
                   help="Monte Carlo permutations where p is not exact (default 100000)")
    p.add_argument("--seed", type=nonneg_int("--seed"), default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--alternative", choices=("greater", "less", "two-sided"), default="greater",
                   help="permutation test alternative (default greater: P[S_i >= S])")
    p.add_argument("--method", choices=("auto", "exact", "certified", "monte-carlo"), default="auto",
                   help="p-value method (default auto: exact when feasible, else a certified bracket, else Monte Carlo)")
    p.add_argument("--ddof", type=nonneg_int("--ddof"), default=1,
                   help="delta degrees of freedom of the SD in d (default 1, as Caliskan et al.)")
    p.add_argument("--min-coverage", type=float_in("--min-coverage", 0, 1), default=0.8, metavar="F",
                   help="error when a set keeps less than this share of its words (default 0.8)")
    add_calibration_options(p, sentences=sentences)
    p.add_argument("--ci", action="store_true",
                   help="a confidence interval on d, by the method whose coverage the coverage study measured "
                        "(see --ci-estimand, --ci-method; default: no interval)")
    p.add_argument("--ci-estimand", choices=("given-attributes", "populations"), default="given-attributes",
                   help="what the interval estimates: given-attributes, the effect given these attribute words "
                        "(targets random; default given-attributes), or populations, the effect over the "
                        "populations both word sets were drawn from (targets and attributes random)")
    p.add_argument("--ci-method", choices=("auto", "noncentral-t", "jackknife", "bca", "percentile"),
                   default="auto", help="interval method (default auto: noncentral-t given the attributes, "
                                        "jackknife over the populations; bootstrap methods are flagged where "
                                        "they undercover)")
    p.add_argument("--ci-level", type=float_in("--ci-level", 0, 1, True, True), default=0.95, metavar="L",
                   help="confidence level of the interval on d (default 0.95)")
    p.add_argument("--bootstrap", type=resamples("--bootstrap"), default=0, metavar="N",
                   help="resamples of the bootstrap methods (percentile, bca); N > 0 also asks for an interval "
                        "(default 0; a bootstrap method without it draws 10000)")
    p.add_argument("--resample-attributes", action="store_true",
                   help="older spelling of --ci-estimand populations")
    p.add_argument("--stop-early", action="store_true",
                   help="Monte Carlo: stop once the 95%% interval on p lies clear of alpha (the command's --alpha, "
                        "else 0.05)")
    p.add_argument("--exact-memory", type=_bytes_arg("--exact-memory"), default=None, metavar="SIZE",
                   help="memory budget of exact counting, e.g. 512MiB (default 2GiB); over it, auto falls back "
                        "to Monte Carlo and says so, exact refuses")
    p.add_argument("--allow-overlap", action="store_true",
                   help="measure tests whose sets share words (refused by default), with a warning")
    p.add_argument("--format", choices=FORMATS, default="table", help="output format (default table)")


def add_model_options(p: argparse.ArgumentParser, *, cluster: bool = True) -> None:
    """How a model is read: vector files (--duplicates, --allow-pickle) and contextual models (hf:, st:, minilm).

    ``cluster=False`` leaves out ``--scheduler``/``--scheduler-timeout`` (commands that do not run on Dask).
    """
    v = p.add_argument_group("vector files")
    v.add_argument("--duplicates", choices=("error", "first", "last"), default=None,
                   help="a word listed twice in a vector file: an error (default), or keep its first or last vector")
    v.add_argument("--allow-pickle", action="store_true",
                   help="allow gensim:PATH.kv files, which are Python pickles: loading one runs code from the file; "
                        "only for files you trust")
    g = p.add_argument_group("contextual models (hf:, st:, minilm)")
    g.add_argument("--corpus", metavar="SPEC",
                   help="context and reference corpus: auto (default: the largest present offline, named in every "
                        "result), wikitext-103, enwiki-sample, wikitext-2, gensim-wiki, or a text file or folder")
    g.add_argument("--layer", type=int, metavar="L", help="hidden layer (default last; negative counts from the end)")
    g.add_argument("--contexts", type=positive_int("--contexts"), metavar="K", dest="contexts_per_word",
                   help="sentences per word for aggregation (default 20)")
    g.add_argument("--missing", choices=("fallback", "drop"),
                   help="a word in no sentence: encode it in a template (fallback, default) or drop it")
    g.add_argument("--reference-unit", choices=("word", "sentence"),
                   help="reference vectors for whitening: word occurrences (default) or sentences")
    g.add_argument("--occurrences", choices=("first", "all"),
                   help="hf: models: pool the first occurrence of a word in each context sentence (default) or all")
    g.add_argument("--device", metavar="DEV", help="cpu, cuda, cuda:1 (default: cuda when present)")
    g.add_argument("--allow-fallback", action="store_true",
                   help="accept a contextual model's results although more than 10%% of the stimulus words had no "
                        "corpus context (they stay marked; without it such a command exits 3)")
    add_dtype_option(g)
    g.add_argument("--cache-dir", metavar="DIR", help="embedding cache (default $ISOEAT_CACHE_DIR or ~/.cache/isoeat)")
    g.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    if not cluster:
        return
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler (tcp://HOST:8786 or a scheduler .json file): fit ZCA and encode the test "
                        "words on the cluster (pip install \"isoeat[distributed]\")")
    g.add_argument("--scheduler-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="seconds to wait for the scheduler (default 10)")


def model_options(args: argparse.Namespace) -> dict[str, Any]:
    from .corpora import resolve_auto_corpus

    opts = {k: getattr(args, k, None) for k in
            ("corpus", "layer", "contexts_per_word", "missing", "reference_unit", "device", "cache_dir")}
    opts["corpus"] = resolve_auto_corpus(opts["corpus"])  # "auto" as the corpus it chose: what results record
    if getattr(args, "occurrences", None):
        opts["occurrences"] = args.occurrences
    opts.update(dtype_option(getattr(args, "dtype", None), opts.get("device")))
    if getattr(args, "no_cache", False):
        opts["use_cache"] = False
    if getattr(args, "duplicates", None):
        opts["duplicates"] = args.duplicates
    if getattr(args, "allow_pickle", False):
        opts["allow_pickle"] = True
    return opts


def add_dtype_option(p: Any) -> None:
    """``--dtype``: the precision of a contextual model's forward pass (:mod:`isoeat.backends._precision`)."""
    p.add_argument("--dtype", choices=DTYPES, default=None,
                   help="precision of the model's forward pass: float32 (default, the published protocol), or, opt-in "
                        "and faster on a GPU, tf32 (CUDA only), bfloat16, float16 (CUDA only); statistics are still "
                        "accumulated in float64, and results of one precision are never reused for another")


def dtype_option(dtype: str | None, device: str | None) -> dict[str, Any]:
    """``--dtype`` as a model keyword: ``{}`` for none or float32 (the default, so its results keep their
    identity), else ``{"dtype": dtype}``; tf32 and float16 off CUDA refused before any model loads, naming
    ``--dtype``."""
    if dtype in (None, DEFAULT_DTYPE):
        return {}
    if dtype in CUDA_DTYPES:
        from .backends._hf import select_device

        check_dtype_device(dtype, select_device(device), name="--dtype")
    return {"dtype": dtype}


class ClusterLookup:
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

    opts = model_options(args)
    model = load_model(args.model, **opts)
    client = getattr(args, "_client", None)
    if client is not None:
        return ClusterLookup(model, client, args.model, {k: v for k, v in opts.items() if v is not None})
    return model


def weat_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """Options shared by `weat` and `run`, as keyword arguments of isoeat.weat."""
    if getattr(args, "calibration", None) == "none":
        calibration_params(args)  # refuses --calibration-param on the raw space
    kw: dict[str, Any] = dict(
        ddof=args.ddof, alternative=args.alternative, method=args.method, n_permutations=args.permutations,
        min_coverage=args.min_coverage, bootstrap=args.bootstrap, ci_method=args.ci_method,
        ci_level=args.ci_level, resample_attributes=args.resample_attributes, ci=args.ci,
        ci_estimand=args.ci_estimand,
    )
    if args.stop_early:
        kw["sequential_alpha"] = getattr(args, "alpha", 0.05)
    if getattr(args, "exact_memory", None) is not None:
        kw["exact_memory"] = args.exact_memory
    if getattr(args, "allow_overlap", False):
        kw["allow_overlap"] = True
    return kw


def parse_calibration_params(items: list[str] | None, name: str, *, refuse: dict[str, str] | None = None
                             ) -> dict[str, Any]:
    """``--calibration-param KEY=VALUE`` items as keyword arguments of calibration ``name``.

    Values are read as JSON where they parse (``5``, ``0.1``, ``true``), else
    kept as text; keys are checked against the calibrator's parameters (with a
    suggestion), each given once; ``refuse`` maps keys that have their own
    option to the message that says so.
    """
    import json

    from ._errors import ConfigError
    from ._validate import suggest
    from .calibration import make_calibrator

    items = items or []
    if items and name == "none":
        raise ConfigError("--calibration-param: the raw space (--calibration none) takes no parameters")
    accepted = make_calibrator(name).get_params() if name != "none" else {}
    params: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--calibration-param expects KEY=VALUE, got {item!r}")
        if key in (refuse or {}):
            raise ConfigError(f"--calibration-param: {refuse[key]}")  # type: ignore[index]
        if key in params:
            raise ConfigError(f"--calibration-param: {key!r} given more than once")
        if key not in accepted:
            hint = suggest(key, list(accepted))
            raise ConfigError(f"--calibration-param: calibration {name!r} has no parameter {key!r}"
                              f"{'; ' + hint if hint else ''} (parameters: {', '.join(accepted) or 'none'})")
        try:
            params[key] = json.loads(value)
        except ValueError:
            params[key] = value
    return params


def calibration_params(args: argparse.Namespace) -> dict[str, Any]:
    """``--eps``/``--eps-relative`` and ``--calibration-param KEY=VALUE`` as calibrator keyword arguments."""
    from .calibration import make_calibrator

    name = getattr(args, "calibration", "zca")
    params: dict[str, Any] = {}
    if name != "none" and "eps" in make_calibrator(name).get_params():
        params.update(eps_params(args))
    given = parse_calibration_params(getattr(args, "calibration_param", []), name,
                                     refuse={"eps_mode": "use --eps-relative R for a relative epsilon"})
    if "eps" in given:  # --calibration-param eps=E is absolute, whatever --eps-relative says
        params.pop("eps_mode", None)
    params.update(given)
    return params


def given_options(args: argparse.Namespace) -> set[str]:
    """Destinations of the options given on the command line (those that differ from their default)."""
    parser = getattr(args, "_parser", None)
    if parser is None:
        return set()
    return {k for k, v in vars(args).items() if not k.startswith("_") and v != parser.get_default(k)}


#: Options that say how to fit a calibrator: meaningless next to ``--whitener FILE``.
_FIT_OPTIONS = ("eps", "eps_relative", "calibration_param", "reference_size", "reference_text")


def check_whitener_options(args: argparse.Namespace, calibrator: Any) -> None:
    """Refuse fitting options next to ``--whitener FILE`` and a ``--calibration`` the file does not hold."""
    from ._errors import ConfigError

    given = given_options(args)
    unused = ["--" + k.replace("_", "-") for k in _FIT_OPTIONS if k in given]
    if unused:
        raise ConfigError(f"{', '.join(unused)}: not used with --whitener {args.whitener} (the calibrator is "
                          "loaded as saved); drop them, or drop --whitener to fit a new one")
    name = getattr(calibrator, "name", None)
    if "calibration" in given and args.calibration not in ("none", name):
        raise ConfigError(f"--calibration {args.calibration}, but --whitener {args.whitener} holds a {name} "
                          f"calibrator; drop --calibration or give a {args.calibration} file")


def _opts(keys: list[str]) -> str:
    return ", ".join("--" + k.replace("_", "-") for k in keys)


def check_option_effects(args: argparse.Namespace) -> None:
    """Refuse options that would change nothing, in one line saying why (``cli`` calls it before any command).

    For commands that fit a calibrator (their parser used :func:`add_calibration_options`):

    * with ``--calibration none`` and no ``--whitener``, nothing is fitted:
      ``--eps``, ``--eps-relative``, ``--calibration-param``, ``--reference-size``
      and ``--reference-text`` have no effect (``anisotropy`` keeps the
      reference options: they also choose the vectors it measures);
    * a calibration without an epsilon (``center``, ``abtt``,
      ``rogue-standardize``): ``--eps`` and ``--eps-relative`` have none;
    * ``--force`` only lets a ``--whitener FILE`` fitted on another model be
      applied: without ``--whitener`` it has none;
    * ``--eps``/``--eps-relative`` beside ``--calibration-param eps=E``: two
      settings of one epsilon (the parameter would win unsaid).

    For every command with ``--method`` and ``--permutations``: ``exact`` and
    ``certified`` count partitions and sample none, so ``--permutations`` has no effect.

    A command may add its own rules as the parser default ``_check_effects``
    (a function of ``args``). Options left at their default count as not given
    (:func:`given_options`).
    """
    from ._errors import ConfigError

    given = given_options(args)
    if getattr(args, "_fits_calibrator", False):
        name = getattr(args, "calibration", None)
        whitener = getattr(args, "whitener", None)
        if "force" in given and not whitener:
            raise ConfigError("--force: no effect without --whitener FILE (it lets a calibrator saved for another "
                              "model be applied; a calibrator fitted here is this model's); drop it")
        if name == "none" and not whitener:
            fit = [k for k in _FIT_OPTIONS if k in given
                   and not (getattr(args, "_reference_measured", False) and k.startswith("reference_"))]
            if fit:
                raise ConfigError(f"{_opts(fit)}: no effect with --calibration none (the raw space is measured as "
                                  f"given and nothing is fitted); drop {'it' if len(fit) == 1 else 'them'}, or name "
                                  "a calibration (e.g. --calibration zca)")
        elif name is not None and not whitener:
            from .calibration import make_calibrator

            eps = [k for k in ("eps", "eps_relative") if k in given]
            accepted = make_calibrator(name).get_params()
            if eps and "eps" not in accepted:
                raise ConfigError(f"{_opts(eps)}: calibration {name!r} has no epsilon (its parameters: "
                                  f"{', '.join(accepted) or 'none'}); drop {_opts(eps)}")
            set_eps = [i for i in getattr(args, "calibration_param", None) or [] if i.partition("=")[0] == "eps"]
            if eps and set_eps:
                raise ConfigError(f"{_opts(eps)} and --calibration-param {set_eps[0]} both set epsilon; give one")
    method = getattr(args, "method", None)
    if method in ("exact", "certified") and "permutations" in given:
        raise ConfigError(f"--permutations: no effect with --method {method} (it counts partitions, it samples "
                          "none; --permutations sets the Monte Carlo sample of --method monte-carlo or auto); "
                          "drop it")
    own = getattr(args, "_check_effects", None)
    if own is not None:
        own(args)

def npz_out(value: Any, option: str, what: str) -> Any:
    """The ``.npz`` file an output option names, checked before anything is computed: not a folder, not a
    device, FIFO or socket, named ``*.npz`` (so the file written is the file named, and the one said)."""
    from pathlib import Path

    from ._errors import ConfigError

    out = Path(value)
    if out.is_dir():
        raise ConfigError(f"{option} {out}: is a folder; give the {what}'s file name, e.g. {out / 'name.npz'}")
    if out.exists() and not out.is_file():
        raise ConfigError(f"{option} {out}: is not a regular file (a device, FIFO or socket); give a file name "
                          "ending in .npz")
    if out.suffix.lower() != ".npz":
        raise ConfigError(f"{option} {out}: the {what} is saved as .npz; give a name ending in .npz")
    return out


def calibrator_mark(cal: Any) -> str:
    """The mark printed under a table whose calibrator's model cannot be verified ("" when it can).

    A calibrator file without a model fingerprint is applied with a warning
    (:func:`isoeat.calibration.check_compatible`); the table says so too.
    """
    meta = getattr(cal, "metadata_", None) or {}
    if not meta.get("model_check"):
        return ""
    source = getattr(cal, "_source_path", None)
    return f"! model not verified: {source or 'the calibrator'} records no model fingerprint (see the warning)"


def calibrator_from_args(args: argparse.Namespace, model: Any) -> Any:
    """The calibrator a command asked for: loaded with --whitener, else fitted."""
    from .calibration import fit_calibrator, load_calibrator

    if args.whitener:
        cal = load_calibrator(args.whitener)
        check_whitener_options(args, cal)
        return cal
    kwargs = {"text": args.reference_text} if args.reference_text else {}
    client = getattr(args, "_client", None)
    if client is not None:
        from .distributed import fit_calibrator_distributed

        opts = {k: v for k, v in model_options(args).items() if v is not None}
        return fit_calibrator_distributed(
            args.model, client=client, calibration=args.calibration, n_reference=args.reference_size,
            corpus=opts.get("corpus"), unit=opts.get("reference_unit"), model_options=opts,
            reference_kwargs=kwargs or None, **calibration_params(args),
        )
    return fit_calibrator(model, args.calibration, n_reference=args.reference_size, reference_kwargs=kwargs,
                          **calibration_params(args))


#: The exit status of a command whose contextual model left too many stimulus words without a corpus context.
FALLBACK_EXIT = 3


def fallback_gate(args: argparse.Namespace, results: Any, corpus: str = "") -> int:
    """0, or :data:`FALLBACK_EXIT` with one line on stderr when more than 10% of the stimulus words of a
    contextual model's results fell back to the template and ``--allow-fallback`` was not given.

    ``results``: one result (or record) per test of one space. The results are printed and marked either way.
    """
    from .labels import FALLBACK_WARN_SHARE, fallback_counts, too_many_fallbacks
    from .reporting.tables import corpus_advice

    k, n, _ = fallback_counts(list(results))
    if not too_many_fallbacks(k, n) or getattr(args, "allow_fallback", False):
        return 0
    where = f" of corpus {corpus}" if corpus else ""
    sys.stderr.write(f"isoeat: {k} of {n} stimulus words ({100 * k / n:.1f}%, over {FALLBACK_WARN_SHARE:.0%}) had no "
                     f"context{where}: the results are marked; {corpus_advice(corpus)}; or --allow-fallback to "
                     "accept them (exit 3)\n")
    return FALLBACK_EXIT
