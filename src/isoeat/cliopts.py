"""The one option table of the ``isoeat`` command (public): every long option shared by two commands, once.

Each entry (:class:`Option`) holds an option's spellings, its ``add_argument``
keywords (destination, type, default, choices, help) and its meaning in one
sentence. Every command takes its shared options from here (:func:`add`; the
groups of :mod:`isoeat.cliargs` are views of this table), so ``--seed`` or
``--calibration`` is one option, with one default and one meaning, in every
command. Where a command needs another default or help, :data:`DEVIATIONS`
lists it with its reason, and the reason is printed in that command's
``--help``. Older spellings (:data:`OLD_SPELLINGS`) are still accepted, hidden
from ``--help``. ``tests/test_option_table.py`` builds every command's parser
and fails when one long option differs between two commands outside this list.

The argument types (:func:`positive_int`, :func:`float_in`, ...) live here too:
they turn text into checked values with one-line errors naming the option.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ._validate import check_int, check_real

__all__ = [
    "Option", "Deviation", "table", "add", "command_of", "DEVIATIONS", "OLD_SPELLINGS", "FORMATS",
    "positive_int", "nonneg_int", "resamples", "float_in", "size_arg", "size_or_auto",
]

FORMATS = ("table", "json", "csv")


# --------------------------------------------------------------------------- argument types
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


def size_arg(name: str) -> Any:
    """``type=`` for a memory size such as ``512MiB``."""
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


def size_or_auto(name: str) -> Any:
    """``type=`` for a whole number >= 1 or the word ``auto`` (``run --reference-size auto``)."""
    whole = positive_int(name)

    def convert(text: str) -> int | str:
        if text == "auto":
            return "auto"
        try:
            return whole(text)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number >= 1 or 'auto', got {text!r}") from None

    return convert


# --------------------------------------------------------------------------- the table
@dataclass(frozen=True)
class Option:
    """One long option: its spellings, its ``add_argument`` keywords and what it means."""

    flags: tuple[str, ...]
    kwargs: dict[str, Any]
    meaning: str
    hidden: tuple[str, ...] = ()  # older spellings: accepted, not shown in --help


@dataclass(frozen=True)
class Deviation:
    """One command's departure from an option's table entry, and why (the reason is printed in its --help)."""

    reason: str
    changes: dict[str, Any] = field(default_factory=dict)


#: Older spellings still accepted, hidden from --help: (command, spelling to use) -> older spelling
#: (CHANGELOG says so). ``--whitener`` (for ``--calibrator``) is accepted by every command that loads a calibrator;
#: sensitivity's ``--eps-mode relative`` (now ``--eps-relative LIST``) is kept by that command itself.
OLD_SPELLINGS: dict[tuple[str, str], str] = {
    ("whiten-distributed", "--scheduler-timeout"): "--timeout",
    ("whiten-distributed", "--reference-unit"): "--unit",
    ("whiten-distributed", "--reference-shards"): "--shards",
    ("whiten-distributed", "--save"): "--out",
    ("whiten", "--save"): "--out",
    ("sensitivity", "--reference-text"): "--reference",
    ("sensitivity", "--eps-relative"): "--eps-mode",
}

_CORPORA = "auto (default: the largest present offline, named in every result), wikitext-103, enwiki-sample, " \
           "wikitext-2, gensim-wiki, or a text file or folder"


def _o(flags: str | tuple[str, ...], meaning: str, hidden: tuple[str, ...] = (), **kw: Any) -> Option:
    """One table entry: its spellings (the first one shown), its meaning, its ``add_argument`` keywords."""
    return Option((flags,) if isinstance(flags, str) else flags, kw, meaning, hidden)


@lru_cache(maxsize=1)
def table() -> dict[str, Option]:
    """The shared long options by their spelling (built once, so every command shares each argument type)."""
    entries = [*_common_options(), *_statistics_options(), *_calibration_options(), *_model_options(),
               *_output_options()]
    return {e.flags[0]: e for e in entries}


def _common_options() -> list[Option]:
    """What every measuring command takes: the model, the tests, the calibration, the seed, the output, alpha."""
    return [
        _o("--model", "the model measured", default="glove-6b-50d", help="model spec (default glove-6b-50d)"),
        _o(("--test", "--tests"), "the association tests measured", dest="test", default=None,
          metavar="IDS|FILES",
          help="test ids (W1..W10, or any id isoeat tests lists) and/or YAML/JSON files (FILE: all its tests, "
               "FILE:ID: one), comma-separated "
               "(default: the ten built-in tests W1..W10; a test file's layout: isoeat tests --template)"),
        _o("--words", "words given one by one", required=True,
           help="comma-separated target words, e.g. nurse,engineer"),
        _o("--calibration", "the calibration compared with the raw space", choices=CALIBRATIONS,
          default="zca", help="calibration measured beside the raw space, as the paper recommends (default zca; "
                              "none: the raw space only)"),
        _o("--seed", "the root seed of every random draw", type=nonneg_int("--seed"), default=0, metavar="S",
          help="random seed: every draw comes from a named stream of it, so --seed S replays a result (default 0)"),
        _o("--format", "what stdout holds", choices=FORMATS, default="table", help="output format (default table)"),
        _o("--alpha", "the significance level (p < alpha)", type=float_in("--alpha", 0, 1, True, True), default=0.05,
          help="significance level (p < alpha) of the stars, change classes and counts (default 0.05)"),
    ]


def _statistics_options() -> list[Option]:
    """The permutation p, the effect size's SD, coverage and the intervals."""
    return [
        _o("--permutations", "Monte Carlo permutations", type=positive_int("--permutations"), default=100_000,
          metavar="N", help="Monte Carlo permutations where p is not exact (default 100000)"),
        _o("--alternative", "the side of the permutation p", choices=("greater", "less", "two-sided"),
          default="greater", help="permutation test alternative (default greater: P[S_i >= S], as Caliskan et al.)"),
        _o("--method", "how p is computed", choices=("auto", "exact", "certified", "monte-carlo"), default="auto",
          help="p-value method (default auto: exact when feasible, else a certified bracket, else Monte Carlo)"),
        _o("--rnsb-c", "RNSB's inverse L2 strength", type=float_in("--rnsb-c", 0, float("inf"), lo_open=True),
          default=1.0, metavar="C", help="RNSB logistic regression inverse L2 strength (default 1)"),
        _o("--ddof", "the SD's delta degrees of freedom", type=nonneg_int("--ddof"), default=1,
          help="delta degrees of freedom of the SD in d (default 1, as Caliskan et al.)"),
        _o("--min-coverage", "the share of words a set must keep", type=float_in("--min-coverage", 0, 1),
          default=0.8, metavar="F", help="error when a set keeps less than this share of its words (default 0.8)"),
        _o("--ci", "ask for an interval", action="store_true",
          help="a confidence interval on each effect, by the method whose coverage the coverage study measured "
               "(see --ci-method; default: no interval)"),
        _o("--ci-estimand", "what the interval estimates", choices=("given-attributes", "populations"),
          default="given-attributes",
          help="what the interval estimates: given-attributes, the effect given these attribute words (targets "
               "random; default given-attributes), or populations, the effect over the populations both word sets "
               "were drawn from (targets and attributes random)"),
        _o("--ci-method", "the interval's method", choices=("auto", "noncentral-t", "jackknife", "bca", "percentile"),
          default="auto", help="interval method (default auto: noncentral-t given the attributes, jackknife over the "
                               "populations; bootstrap methods are flagged where they undercover)"),
        _o("--ci-level", "the interval's level", type=float_in("--ci-level", 0, 1, True, True), default=0.95,
          metavar="L", help="confidence level of the intervals (default 0.95)"),
        _o("--bootstrap", "bootstrap resamples", type=resamples("--bootstrap"), default=0, metavar="N",
          help="resamples of the bootstrap methods (percentile, bca); N > 0 also asks for an interval (default 0; "
               "a bootstrap method without it draws 10000)"),
        _o("--resample-attributes", "older spelling of --ci-estimand populations", action="store_true",
          help="older spelling of --ci-estimand populations"),
        _o("--stop-early", "sequential Monte Carlo", action="store_true",
          help="Monte Carlo: stop once the 95%% interval on p lies clear of alpha (the command's --alpha, else "
               "0.05)"),
        _o("--exact-memory", "the memory budget of exact counting", type=size_arg("--exact-memory"), default=None,
          metavar="SIZE", help="memory budget of exact counting, e.g. 512MiB (default 2GiB); over it, auto falls "
                               "back to Monte Carlo and says so, exact refuses"),
        _o("--audit", "the word-list audit", action="store_true",
          help="the word-list audit of each test, raw beside calibrated (docs/word-list-audit.md): frequency "
               "balance of the sets (median ln frequency rank, the targets' gap, Spearman rho of word score and ln "
               "rank), set coherence against random pairs, and d and p with each word left out, flagging words "
               "whose removal changes the sign or the significance at --alpha; weat prints it after the table "
               "(--format json: each record's 'audit'; csv: one row per left-out word instead of the table's), "
               "run --out DIR writes it to DIR/tables/audit.json and audit.csv for 'isoeat report' (default: off)"),
        _o("--allow-overlap", "measure sets that share words", action="store_true",
          help="measure tests whose sets share words (refused by default), with a warning"),
        _o("--convention", "whose conventions d and p follow", type=_convention, default="isoeat", metavar="NAME",
          help="whose conventions d and p follow (default isoeat): caliskan, wefe, sent-bias, ceat-code, ml-eat, "
               "responsibly; d by the peer's definition, p isoeat's exact p on its side (docs/conventions.md)"),
    ]


def _convention(text: str) -> str:
    """``type=`` of ``--convention``: a registered convention's name (did-you-mean otherwise)."""
    from ._errors import ConfigError
    from .stats.conventions import get_convention

    try:
        return get_convention(text).name
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _calibration_options() -> list[Option]:
    """How the calibrator is fitted (epsilon, parameters, the reference sample) or loaded."""
    return [
        _o("--eps", "the regulariser added to the eigenvalues", type=float_in("--eps", 0, float("inf")), default=1e-3,
          help="regulariser added to the eigenvalues of the reference covariance, absolute as in the paper "
               "(default 1e-3)"),
        _o("--eps-relative", "epsilon as a share of the mean eigenvalue",
          type=float_in("--eps-relative", 0, float("inf")), default=None, metavar="R",
          help="instead of --eps: epsilon = R times the mean eigenvalue of the reference covariance, the same share "
               "of the spectrum whatever the scale of the vectors (default: not used, --eps)"),
        _o("--calibration-param", "an extra calibrator parameter", action="append", default=[], metavar="KEY=VALUE",
          help="extra calibrator parameter, e.g. --calibration-param n_components=5 (repeatable; default: none)"),
        _o("--reference-size", "the size of the calibrator's reference sample", type=positive_int("--reference-size"),
          default=100_000, metavar="N",
          help="size of the reference sample the calibrator is fitted on: the N most frequent words of a static "
               "model, N corpus sentences of a contextual one (default 100000)"),
        _o("--reference-text", "where the reference sample comes from", metavar="PATH",
          help="take the reference sample from this text instead: its words by frequency (static models) or its "
               "sentences (contextual models)"),
        _o("--reference-shards", "the shards the reference sample is split into",
          type=positive_int("--reference-shards"), default=None, metavar="K", nargs="?", const=DEFAULT_SHARDS,
          help="split the reference sample into K shards (2 to 200, each one more refit: their time is estimated and "
               "checked first) and print each calibrated d's jackknife standard error due to the reference sample "
               f"(SE_ref); K alone: {DEFAULT_SHARDS}, whose SE is itself within about +-10%%; default: none for a "
               "fixed size, always with --reference-size auto"),
        _o("--calibrator", "a saved calibrator applied instead of a fitted one", hidden=("--whitener",),
          dest="whitener", metavar="FILE",
          help="use a calibrator saved with 'isoeat whiten' (the ZCA whitener or another calibrator) instead of "
               "fitting one"),
        _o("--force", "apply a calibrator saved for another model", action="store_true",
          help="apply a saved calibrator even if it was fitted on another model"),
    ]


def _model_options() -> list[Option]:
    """How a model is read, where its contexts come from, where and how it runs, its cache, a cluster."""
    from .backends._precision import DTYPES

    return [
        _o("--duplicates", "a word listed twice in a vector file", choices=("error", "first", "last"), default=None,
          help="a word listed twice in a vector file: an error (default), or keep its first or last vector"),
        _o("--allow-pickle", "load pickled vectors or weights", action="store_true",
          help="allow gensim:PATH.kv files and hf:/st: model folders whose weights are pytorch_model.bin, which are "
               "Python pickles: loading one runs code from the file; only for files you trust (default: refused)"),
        _o("--corpus", "the contexts' and reference sample's corpus", metavar="SPEC",
          help=f"context and reference corpus of contextual models and sentence encoders: {_CORPORA}"),
        _o("--layer", "the hidden layer", type=int, metavar="L",
          help="hidden layer (default last; negative counts from the end)"),
        _o("--contexts", "corpus sentences per word", type=positive_int("--contexts"), metavar="K",
          dest="contexts_per_word", help="sentences per word for aggregation (default 20)"),
        _o("--missing", "a word in no corpus sentence", choices=("fallback", "drop"),
          help="a word in no sentence: encode it in a template (fallback, default) or drop it"),
        _o("--reference-unit", "the unit of a contextual reference sample",
          choices=("word", "sentence"),
          help="reference vectors of a contextual model: word occurrences (default) or sentences"),
        _o("--occurrences", "which occurrences are pooled", choices=("first", "all"),
          help="hf: models: pool the first occurrence of a word in each context sentence (default) or all"),
        _o("--device", "where the model runs", metavar="DEV", help="cpu, cuda, cuda:1 (default: cuda when present)"),
        _o("--allow-fallback", "accept results with many template fallbacks", action="store_true",
          help="accept a contextual model's results although more than 10%% of the stimulus words had no corpus "
               "context (they stay marked; without it such a command exits 3)"),
        _o("--dtype", "the forward pass's precision", choices=DTYPES, default=None,
          help="precision of the model's forward pass: float32 (default, the published protocol), or, opt-in and "
               "faster on a GPU, tf32 (CUDA only), bfloat16, float16 (CUDA only); statistics are still accumulated "
               "in float64, and results of one precision are never reused for another"),
        _o("--batch-size", "sentences per forward pass", type=positive_int("--batch-size"), default=64, metavar="N",
          help="sentences per forward pass (default 64)"),
        _o("--cache-dir", "the embedding cache's folder", metavar="DIR",
          help="embedding cache (default $ISOEAT_CACHE_DIR or ~/.cache/isoeat)"),
        _o("--no-cache", "bypass the embedding cache", action="store_true",
          help="do not read or write the embedding cache"),
        _o("--scheduler", "a Dask scheduler", metavar="ADDRESS",
          help="Dask scheduler (tcp://HOST:8786 or a scheduler .json file): the reference sample (and the test "
               "words) are encoded on the cluster (pip install \"isoeat[distributed]\")"),
        _o("--scheduler-timeout", "seconds to reach the scheduler",
          type=float_in("--scheduler-timeout", 0, float("inf"), lo_open=True), default=10.0, metavar="SECONDS",
          help="seconds to wait for the scheduler (default 10)"),
    ]


def _output_options() -> list[Option]:
    """What is written: the anisotropy frame, the output folder, the calibrator file, recomputation, figures."""
    return [
        _o("--frame", "the vectors an anisotropy figure is computed on", default="paper", metavar="FRAME",
          help="which vectors anisotropy is measured on (default paper, the paper's Table 2 protocol: vocabulary "
               "items of the reference corpus for a static model, WikiText-103 where present, else WikiText-2, else "
               "the largest offline corpus; a contextual model's reference sample); reference (the calibrator's "
               "reference pool), vocabulary-top:N, vocabulary-all, corpus-types:TEXT or corpus-tokens:TEXT"),
        _o("--out", "the output folder", metavar="DIR",
          help="output folder, written atomically and locked (default: none, stdout only)"),
        _o("--levels", "the ML-EAT levels of each test", action="store_true",
          help="add the ML-EAT levels of each test (Wolfe et al. 2024; docs/reading-a-test.md): Level 2 (X and Y "
               "each over A and B), Level 3 (the four cosine blocks, z on the model's random-pair cosine), the "
               "pattern raw beside calibrated (default: off)"),
        _o("--save", "the calibrator file written", metavar="FILE.npz",
          help="where to save the calibrator (a .npz file; --out, its older spelling, still works)"),
        _o("--overwrite", "which finished cells are recomputed", choices=("never", "failed", "all"), default="never",
          help="finished cells in the output folder: never recompute them (default never: resume), recompute the "
               "failed ones, or all"),
        _o("--no-figures", "tables only", action="store_true", help="tables only: no figures (no matplotlib needed)"),
    ]


#: the interval methods of the other metrics (``isoeat.metrics.registry.CI_METHODS``; the option test checks it)
METRIC_CI_METHODS = ("auto", "studentized", "welch-t", "jackknife-z", "percentile")


#: every ``--calibration`` value (``isoeat.calibration.calibration_names()``; the option test checks it): the
#: table loads no calibrator, so that ``isoeat COMMAND --help`` loads no numpy
CALIBRATIONS = ("none", "zca", "center", "pca-whiten", "zca-shrinkage", "abtt", "rogue-standardize")

#: ``seat --pooling`` choices (``isoeat.backends._pooling.SENTENCE_POOLINGS``; the option test checks it)
SEAT_POOLINGS = ("mean", "cls", "last")

#: ``--reference-shards``' default (``isoeat.experiments.reference.DEFAULT_SHARDS``; the option test checks it)
DEFAULT_SHARDS = 100


def _calibrators() -> tuple[str, ...]:
    """The calibrations, less ``none`` (choices of a command that needs a calibrated space)."""
    return CALIBRATIONS[1:]


_SENTENCES = "a sentence encoder's reference sample is sentences"
_SEAT_CEAT = "sentence encoders and CEAT default to the bundled all-MiniLM-L6-v2"

#: option -> command -> its departure from the table, with the reason printed in that command's --help.
DEVIATIONS: dict[str, dict[str, Deviation]] = {
    "--model": {
        **{c: Deviation(_SEAT_CEAT, {"default": "minilm", "help": (
            f"{'st:NAME_OR_PATH (sentence-transformers), ' if c == 'seat' else ''}hf:NAME_OR_PATH or minilm "
            f"(default minilm: {_SEAT_CEAT})")}) for c in ("seat", "ceat")},
        "reproduce": Deviation("reproduce binds the paper's models to local files", {
            "dest": "model_map", "action": "append", "default": [], "metavar": "NAME=SPEC", "help": (
                "bind one of the paper's seven models (GloVe, word2vec, GPT-2, BERT, RoBERTa, unsup-BERT, "
                "unsup-RoBERTa, or a name such as glove-6b-100d, bert-base-cased) to a local file (glove:PATH, "
                "word2vec:PATH, ...) or folder (hf:FOLDER); repeatable (default: none; reproduce binds the paper's "
                "models to local files, --models says which run)")}),
    },
    "--test": {
        c: Deviation("required here: name the tests to measure", {"required": True, "help": (
            "test ids (W1..W10, or any id isoeat tests lists) and/or YAML/JSON files (FILE: all its tests, "
            "FILE:ID: one), comma-separated "
            f"{'(or sent-bias .jsonl files) ' if c == 'seat' else ''}(required here: name the tests to measure; "
            "a test file's layout: isoeat tests --template)")})
        for c in ("weat", "seat", "ceat", "ngroup")
    },
    "--calibration": {
        "whiten": Deviation("whiten fits and saves one calibrator; it measures nothing", {
            "choices": _calibrators, "help": "calibrator to fit (default zca; whiten fits and saves one calibrator; it "
                                     "measures nothing)"}),
        **{c: Deviation("none is refused: this command compares raw with one calibration", {
            "choices": _calibrators,
            "help": "calibration measured beside the raw space (default zca; none is refused: this command compares "
                    "raw with one calibration)"}) for c in ("run", "sensitivity")},
    },
    "--alternative": {
        "metric": Deviation("the other metrics have no published direction", {
            "default": "two-sided", "help": "permutation p alternative (default two-sided: the other metrics have no "
                                            "published direction)"}),
        "ceat": Deviation("Guo & Caliskan's text is two-sided", {
            "default": "two-sided", "help": "side of the combined p: two-sided (default two-sided: Guo & Caliskan's "
                                            "text is two-sided), greater (their released code: P[Z >= CES/SE]) or "
                                            "less"}),
    },
    "--ci-method": {
        "metric": Deviation("each metric has its own interval methods (docs/metrics.md)", {
            "choices": METRIC_CI_METHODS,
            "help": "the interval: auto (welch-t; ECT: jackknife-z), welch-t, jackknife-z or percentile (the "
                    "bootstrap of earlier versions, which undercovers; default auto; each metric has its own interval "
                    "methods (docs/metrics.md))"}),
    },
    "--bootstrap": {
        "ceat": Deviation("CEAT's published interval covers the draws only; this one also the contexts", {
            "default": 1000, "help": "bootstrap replicates of the contexts interval: each word's contexts resampled "
                                     "with replacement and the published procedure rerun, printed as 95%% CI "
                                     "(contexts) beside the draw-level one (default 1000, 0: none; CEAT's published "
                                     "interval covers the draws only; this one also the contexts)"}),
        "similarity": Deviation("the change in rho has no other interval: the paper's paired bootstrap", {
            "default": 10_000, "help": "paired bootstrap resamples of the pairs for the change in rho (default "
                                       "10000, 0: none; the change in rho has no other interval: the paper's paired "
                                       "bootstrap)"}),
    },
    "--min-coverage": {
        "similarity": Deviation("a benchmark is scored on the pairs it covers, as the paper does", {
            "default": 0.0, "help": "error when fewer than this share of a benchmark's pairs are usable (default 0: "
                                    "a benchmark is scored on the pairs it covers, as the paper does)"}),
    },
    "--reference-size": {
        **{c: Deviation(_SENTENCES, {"help": (
            "reference sentences the calibrator is fitted on: N sentences sampled (seeded) from the encoder's corpus "
            f"or from --reference-text, and embedded (default 100000; {_SENTENCES})")}) for c in ("seat", "ceat")},
        "run": Deviation("run alone can grow the sample until the reference-SE is small enough", {
            "type": size_or_auto("--reference-size"), "help": (
                "size of the reference sample the calibrator is fitted on: the N most frequent words of a static "
                "model, N corpus sentences of a contextual one (default 100000); auto: encode reference shards "
                "until every calibrated d has reference-SE < --reference-tolerance and no change class flipped over "
                "the last 2 shards, capped at --reference-max (docs/reference-size.md; run alone can grow the "
                "sample until the reference-SE is small enough)")}),
    },
    "--reference-text": {
        **{c: Deviation(_SENTENCES, {"help": "take the reference sentences from this text instead of the encoder's "
                                             f"corpus ({_SENTENCES})"}) for c in ("seat", "ceat")},
        "sensitivity": Deviation("sensitivity sweeps the reference: a list of sources", {
            "metavar": "SOURCES", "help": "reference sources to compare: 'top' (vocabulary top) and/or text paths, "
                                          "comma-separated (default: no reference sweep; sensitivity sweeps the "
                                          "reference: a list of sources)"}),
    },
    "--eps": {
        "sensitivity": Deviation("sensitivity sweeps epsilon: a list", {
            "type": None, "default": None, "metavar": "LIST", "help": (
                "eps values to sweep, comma-separated, > 0, or 'none' (default 1e-06,1e-05,0.0001,0.001,0.01,0.1; "
                "sensitivity sweeps epsilon: a list; --default-eps sets the default setting's)")}),
    },
    "--eps-relative": {
        "sensitivity": Deviation("sensitivity sweeps epsilon: the sweep's values are relative", {
            "type": None, "default": None, "metavar": "LIST", "help": (
                "instead of --eps: the eps values to sweep, each times the mean eigenvalue tr(S)/d of the reference "
                "sample (default: not used, --eps; sensitivity sweeps epsilon: the sweep's values are relative)")}),
    },
    "--force": {
        "export": Deviation("here --force is about the output, not a calibrator", {
            "help": "replace existing output files (default: refused, nothing written; here --force is about the "
                    "output, not a calibrator)"}),
        "sensitivity": Deviation("sensitivity loads no calibrator: --force is about its folder", {
            "help": "with --out: write into a folder that holds files isoeat did not write, beside them (default: "
                    "refused; sensitivity loads no calibrator: --force is about its folder)"}),
    },
    "--words": {
        "scweat": Deviation("required unless --criterion names them", {
            "required": False, "default": None,
            "help": "comma-separated target words, e.g. nurse,engineer; a phrase of several words ('new york') is one "
                    "word (default: none; required unless --criterion names them)"}),
        "export": Deviation("or a file of words, one a line", {
            "required": False, "default": None, "metavar": "WORDS|FILE",
            "help": "the words whose vectors are written, comma-separated, or a file of words, one a line "
                    "(default: none; give --words or --top)"}),
    },
    "--out": {
        "export": Deviation("here a file: X.npy (and its vocabulary X.vocab) or X.txt (GloVe text)", {
            "required": True, "metavar": "FILE", "help": "the file written (required; here a file: X.npy (and its "
                                                        "vocabulary X.vocab) or X.txt (GloVe text))"}),
        "reproduce": Deviation("reproduce always writes its resumable folder", {
            "default": "isoeat-reproduce", "help": "experiment folder (default isoeat-reproduce, in the current "
                                                   "folder; reproduce always writes its resumable folder)"}),
    },
    "--format": {
        "tests": Deviation("json and yaml are test files that --test reads back", {
            "choices": ("table", "json", "yaml", "csv"), "help": "output format (default table; json and yaml are "
                                                                 "test files that --test reads back)"}),
        "cache": Deviation("the cache's listing has no CSV rows", {
            "choices": ("table", "json"), "help": "output format (default table; the cache's listing has no CSV "
                                                  "rows)"}),
    },
    "--reference-shards": {
        "whiten-distributed": Deviation("here the shards only share the work: the fit does not depend on K", {
            "nargs": None, "const": None, "help": "number of shards the reference sample is split into (default: one "
                                                  "per 1024 sentences or 10000 rows; here the shards only share the "
                                                  "work: the fit does not depend on K)"}),
    },
    "--scheduler": {
        "whiten-distributed": Deviation("or --local-workers N: a cluster started here", {
            "help": "Dask scheduler (tcp://HOST:8786 or a scheduler .json file) whose workers encode the reference "
                    "sample (default: none; or --local-workers N: a cluster started here)"}),
    },
}


def command_of(parser: argparse.ArgumentParser) -> str:
    """The sub-command a parser belongs to (``isoeat weat`` -> ``weat``)."""
    return parser.prog.split()[-1]


def spec(name: str, command: str) -> dict[str, Any]:
    """The ``add_argument`` keywords of option ``name`` in ``command``: the table's, with its deviation applied."""
    entry = table()[name]
    kw = dict(entry.kwargs)
    dev = DEVIATIONS.get(name, {}).get(command)
    if dev is not None:
        kw.update(dev.changes)
        if dev.reason not in kw.get("help", ""):
            raise AssertionError(f"{name} in {command}: the help must state the deviation's reason")
    if kw.get("choices") is None:
        kw.pop("choices", None)
    if callable(kw.get("choices")):
        kw["choices"] = kw["choices"]()
    for key in ("type", "nargs", "const"):
        if key in kw and kw[key] is None:
            kw.pop(key)
    return kw


def add(parser: argparse.ArgumentParser, *names: str, group: Any = None, command: str | None = None) -> None:
    """Add the shared options ``names`` (``"--seed"``, ...) to ``parser`` (or to ``group`` of it) from the table.

    Each older spelling of an option (:data:`OLD_SPELLINGS`) is added beside it, hidden from ``--help``, with
    the same destination and type. ``command``: the command's name when ``parser`` is not its own parser.
    """
    command = command or command_of(parser)
    target = group if group is not None else parser
    for name in names:
        entry = table()[name]
        kw = spec(name, command)
        target.add_argument(*entry.flags, **kw)
        old = entry.hidden + tuple(v for (c, n), v in OLD_SPELLINGS.items() if c == command and n == name
                                   and v != "--eps-mode")
        if old:
            dest = kw.get("dest") or name[2:].replace("-", "_")
            hidden = {k: v for k, v in kw.items() if k not in ("help", "required", "dest")}
            target.add_argument(*old, dest=dest, help=argparse.SUPPRESS, **hidden)
