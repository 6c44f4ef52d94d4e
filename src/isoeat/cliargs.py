"""Argument types and option groups shared by the ``isoeat`` sub-commands (public).

Every command module in :mod:`isoeat.commands` builds its parser and reads its
arguments with these helpers, so an option means the same thing, with the same
default and the same validation, in every command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from .backends._precision import CUDA_DTYPES, DEFAULT_DTYPE, check_dtype_device

__all__ = [
    "FORMATS", "examples", "positive_int", "nonneg_int", "float_in", "add_calibration_options", "add_stat_options",
    "add_model_options", "add_eps_options", "eps_params", "model_options", "ClusterLookup", "check_option_effects",
    "load_model_from_args", "weat_kwargs",
    "calibration_params", "parse_calibration_params", "calibrator_from_args", "given_options", "check_whitener_options",
]

from .cliopts import FORMATS, add, float_in, nonneg_int, positive_int, resamples  # noqa: F401 - public here too


def examples(*lines: str) -> str:
    """A command's ``--help`` epilog: example command lines, printed as written (see ``isoeat.cli``)."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def add_eps_options(p: argparse.ArgumentParser) -> None:
    """``--eps E`` (absolute, the paper's) or ``--eps-relative R`` (ε = R · mean eigenvalue): one or the other."""
    add(p, "--eps", "--eps-relative", group=p.add_mutually_exclusive_group())


def eps_params(args: argparse.Namespace) -> dict[str, Any]:
    """``--eps``/``--eps-relative`` as calibrator parameters: ``{"eps": E}`` or
    ``{"eps": R, "eps_mode": "relative"}``."""
    r = getattr(args, "eps_relative", None)
    if r is not None:
        return {"eps": r, "eps_mode": "relative"}
    return {"eps": args.eps}


def add_calibration_options(p: argparse.ArgumentParser, *, saved: bool = True, **_: Any) -> None:
    """How the calibrator is obtained: fitted (--eps, --calibration-param, --reference-*) or loaded (a view of
    :mod:`isoeat.cliopts`; a sentence encoder's reference help is the table's deviation for ``seat``/``ceat``).

    ``saved=False`` leaves out loading a saved calibrator (--calibrator, --force), for ``isoeat whiten``.
    """
    add_eps_options(p)
    p.set_defaults(_fits_calibrator=True)  # check_option_effects: these options only say how to fit one
    add(p, "--calibration-param", "--reference-size", "--reference-text")
    if saved:
        add(p, "--calibrator", "--force")


def add_stat_options(p: argparse.ArgumentParser, **_: Any) -> None:
    """The statistics, calibrator, interval and output options of the association tests (weat, scweat, run, seat):
    a view of :mod:`isoeat.cliopts`."""
    add(p, "--permutations", "--seed", "--alternative", "--method", "--ddof", "--min-coverage")
    add_calibration_options(p)
    add(p, "--ci", "--ci-estimand", "--ci-method", "--ci-level", "--bootstrap", "--resample-attributes",
        "--stop-early", "--exact-memory", "--allow-overlap", "--format")


def add_model_options(p: argparse.ArgumentParser, *, cluster: bool = True) -> None:
    """How a model is read: vector files (--duplicates, --allow-pickle) and contextual models (hf:, st:, minilm),
    a view of :mod:`isoeat.cliopts`.

    ``cluster=False`` leaves out ``--scheduler``/``--scheduler-timeout`` (commands that do not run on Dask).
    """
    add(p, "--duplicates", "--allow-pickle", group=p.add_argument_group("vector files"))
    g = p.add_argument_group("contextual models (hf:, st:, minilm)")
    add(p, "--corpus", "--layer", "--contexts", "--missing", "--reference-unit", "--occurrences", "--device",
        "--allow-fallback", "--dtype", "--cache-dir", "--no-cache", group=g)
    if cluster:
        add(p, "--scheduler", "--scheduler-timeout", group=g)


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


def add_dtype_option(p: Any, parser: argparse.ArgumentParser | None = None) -> None:
    """``--dtype``: the precision of a contextual model's forward pass (:mod:`isoeat.backends._precision`)."""
    add(parser or p, "--dtype", group=p if parser is not None else None)


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
        raise ConfigError(f"{', '.join(unused)}: not used with --calibrator {args.whitener} (the calibrator is "
                          "loaded as saved); drop them, or drop --calibrator to fit a new one")
    name = getattr(calibrator, "name", None)
    if "calibration" in given and args.calibration not in ("none", name):
        raise ConfigError(f"--calibration {args.calibration}, but --calibrator {args.whitener} holds a {name} "
                          f"calibrator; drop --calibration or give a {args.calibration} file")


def _opts(keys: Sequence[str]) -> str:
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

    For every command with ``--method``: ``exact`` and ``certified`` count partitions and
    sample none, so ``--permutations`` and ``--stop-early`` have no effect; ``monte-carlo``
    counts none, so ``--exact-memory`` has none (the rule of
    :func:`isoeat.stats.options.ineffective`; under ``auto`` each may matter).

    ``--calibration none`` beside ``--calibrator FILE`` contradict each other (the raw
    space only, or a calibrated space beside it): refused, whatever the command.

    A command may add its own rules as the parser default ``_check_effects``
    (a function of ``args``). Options left at their default count as not given
    (:func:`given_options`).
    """
    from ._errors import ConfigError

    given = given_options(args)
    whitener = getattr(args, "whitener", None)
    if whitener and getattr(args, "calibration", None) == "none":
        raise ConfigError(f"--calibration none and --calibrator {whitener} contradict each other (the raw space only, "
                          "or the space the calibrator makes beside it); drop one")
    if getattr(args, "_fits_calibrator", False):
        name = getattr(args, "calibration", None)
        if "force" in given and not whitener:
            raise ConfigError("--force: no effect without --calibrator FILE (it lets a calibrator saved for another "
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
    typed = getattr(args, "_spellings", {})  # the options typed on the command line (cli._OneSpelling)
    if getattr(args, "resample_attributes", False) and "ci_estimand" in typed and args.ci_estimand != "populations":
        raise ConfigError(f"--resample-attributes (the older spelling of --ci-estimand populations) and "
                          f"--ci-estimand {args.ci_estimand} contradict each other; give one")
    method = getattr(args, "method", None)
    if method is not None:
        from .stats.options import ineffective

        for name, why in ineffective(method, stop_early="stop_early" in given, exact_memory="exact_memory" in given,
                                     permutations="permutations" in given):
            raise ConfigError(f"--{name.replace('_', '-')}: no effect with --method {method} "
                              f"({why.replace('method ', '--method ')}); drop it")
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
        from .calibration import check_compatible

        cal = load_calibrator(args.whitener)
        check_whitener_options(args, cal)
        check_compatible(cal, model, force=bool(getattr(args, "force", False)))  # another model or layer: said
        return cal  # before any word is encoded
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


#: Python parameter names whose option is spelled otherwise (the rest: the option of the same destination).
PARAMETER_OPTIONS = {
    "n_permutations": "--permutations", "n_reference": "--reference-size", "n_samples": "--samples",
    "n_resamples": "--bootstrap", "n_draws": "--draws", "contexts_per_word": "--contexts", "n_contexts": "--contexts",
    "sequential_alpha": "--alpha", "unit": "--reference-unit", "shards": "--reference-shards",
    "agreement_threshold": "--agreement", "eps_mode": "--eps-relative", "whitener": "--calibrator",
    "calibrator": "--calibrator",
}

#: Python names that are also calibrator parameters (``--calibration-param eps_mode``, listed among a calibration's
#: parameters): never rewritten as an option outside ``name=value`` and ``name must``.
_LITERAL = ("eps_mode",)

#: Library phrases that name something the command line sets otherwise (or not at all).
_PHRASES = (
    (r"use method='monte-carlo' or raise exact_budget", "use --method monte-carlo, or --method auto (a certified "
                                                         "bracket on p)"),
    (r"raise exact_budget", "use --method auto or monte-carlo"),
    (r"\bexact_budget\b", "the exact-counting budget"),
    (r"^frame (\S+) N must", r"--frame \1:N: N must"),
)


def _big_numbers(text: str) -> str:
    """Whole numbers of more than 30 digits (a binomial of thousands of words) as ``2.33e+618``; shorter ones,
    such as a value read from a file, are shown as they are."""
    import re
    from decimal import Decimal

    return re.sub(r"(?<![\w.])\d{31,}(?![\w.])", lambda m: f"{Decimal(m.group(0)):.2e}".replace("E", "e"), text)


def option_names(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Destination -> the long option as ``--help`` shows it (``contexts_per_word`` -> ``--contexts``,
    ``whitener`` -> ``--calibrator``)."""
    return {a.dest: next(f for f in a.option_strings if f.startswith("--")) for a in parser._actions
            if any(f.startswith("--") for f in a.option_strings) and a.help != argparse.SUPPRESS}


def cli_message(text: str, parser: argparse.ArgumentParser | None) -> str:
    """A library message as the command line says it: Python parameters named by the command's options
    (``duplicates='first'`` -> ``--duplicates first``, ``n_samples must`` -> ``--samples must``), huge whole numbers
    in scientific notation, no Python phrase the command line cannot act on. Names the command has no option for
    are left as they are."""
    import re

    options: dict[str, str] = {}
    switches: set[str] = set()  # destinations of options that take no value (--force, --ci)
    if parser is not None:
        options = option_names(parser)
        flags = set(options.values())
        options.update({k: v for k, v in PARAMETER_OPTIONS.items() if v in flags})
        switches = {a.dest for a in parser._actions if a.nargs == 0}
    for pattern, repl in _PHRASES:
        text = re.sub(pattern, repl, text)
    if options:
        def assigned(m: re.Match[str]) -> str:  # name=value as the option; a switch takes no value
            name, value = m.group(1), m.group(3)
            if name in switches and value in ("True", "False", "true", "false"):
                return options[name] if value in ("True", "true") else f"without {options[name]}"
            return f"{options[name]} {value}"

        names = "|".join(sorted(map(re.escape, options), key=len, reverse=True))
        text = re.sub(rf"(?<![\w-])({names})='([^']+)' or '([^']+)'",
                      lambda m: f"{options[m.group(1)]} {m.group(2)} or {m.group(3)}", text)
        text = re.sub(rf"(?<![\w-])(?<!--calibration-param )({names})=(['\"]?)([^'\",;)\s]+)\2", assigned, text)
        text = re.sub(r"(--([\w-]+) [^\s()]+) \(--\2(?: [^\s()]+)?\)", r"\1", text)  # said twice: once
        text = re.sub(r"(--([\w-]+)) \(--\2(?![\w-])[^()]*\)", r"\1", text)  # a switch said twice: once
        text = re.sub(rf"(?<![\w-])({names}) \((--[\w-]+)\)",
                      lambda m: m.group(2) if options[m.group(1)] == m.group(2) else m.group(0), text)
        text = re.sub(rf"(?<![\w-])({names})(?= (?:must|is|expects)\b)", lambda m: options[m.group(1)], text)
        text = re.sub(rf"\b(?:option|keyword) '({names})'", lambda m: options[m.group(1)], text)
        python = "|".join(sorted((re.escape(k) for k in options if "_" in k and k not in _LITERAL), key=len,
                                 reverse=True))
        if python:  # a Python name (n_permutations, exact_memory) anywhere else: the option
            text = re.sub(rf"(?<![\w./\\'-])(?<!--calibration-param )({python})(?![\w/\\'=-])",
                          lambda m: options[m.group(1)], text)
    return _big_numbers(text)
