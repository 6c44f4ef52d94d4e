"""``isoeat ceat``: the Contextualized Embedding Association Test (Guo & Caliskan 2021), raw beside calibrated.

The statistics (:func:`ceat`, :class:`CEATResult`) live in
:mod:`isoeat.stats.ceat`.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from .._errors import ConfigError
from .._types import corpus_name_of
from ..stats.options import CEAT_DRAWS as DEFAULT_DRAWS
from ..stats.options import CEAT_VARIANCES as VARIANCES

if TYPE_CHECKING:  # the statistics load numpy: imported when the command runs (``--help`` loads none)
    from ..stats.ceat import CEATResult

__all__ = ["register", "COMMANDS"]


def register(subparsers: Any, add_stat_options: Any) -> None:
    """Add ``isoeat ceat`` to the CLI."""
    from ..cliargs import add, add_calibration_options, examples, positive_int

    p = subparsers.add_parser(
        "ceat",
        description="Contextualized Embedding Association Test: N draws of one context vector per word, the "
                    "effect size d of each draw, and their DerSimonian-Laird random-effects combination (CES, "
                    "SE, 95% interval, p, tau^2). By default as Guo & Caliskan (2021) publish it: each draw's "
                    "variance is the sample variance of s(w,A,B) over X and Y, and p is two-sided (--variance, "
                    "--alternative). Raw and calibrated from the same draws; the calibrator is fitted on "
                    "sentence-level reference vectors (mean-pooled hidden states of corpus sentences).",
        epilog=examples("isoeat ceat --model minilm --test W6                      # raw and ZCA (default)",
                        "isoeat ceat --model minilm --test W6 --draws 1000 --reference-size 2000 --seed 1",
                        "isoeat ceat --model hf:bert-base-cased --test W7 --calibration none --format json",
                        "isoeat ceat --model minilm --test W6 --figure w6-ceat.png   # a forest figure of the draws",
                        "isoeat ceat --model minilm --test W6 --variance hedges-olkin --alternative greater"),
    )
    add(p, "--model", "--test", "--calibration")
    p.add_argument("--draws", type=positive_int("--draws"), default=DEFAULT_DRAWS, metavar="N",
                   help=f"draws of one context vector per word (default {DEFAULT_DRAWS})")
    add(p, "--seed", "--ddof", "--bootstrap")
    p.add_argument("--variance", choices=VARIANCES, default="published",
                   help="each draw's variance in the random-effects combination: published (Guo & Caliskan "
                        "2021: the sample variance of s(w,A,B) over X and Y) or hedges-olkin (the sampling "
                        "variance of d; see docs/encoders.md) (default published)")
    add(p, "--alternative", "--corpus", "--contexts", "--layer", "--missing", "--allow-fallback", "--allow-pickle",
        "--device", "--dtype", "--batch-size", "--cache-dir", "--no-cache")
    add_calibration_options(p)
    p.add_argument("--figure", metavar="PATH",
                   help="also write a forest-style figure of the draws (.png, .pdf or .svg; one test per run; "
                        "default: none)")
    add(p, "--format")


def _load(args: argparse.Namespace) -> Any:
    from ..backends import load_model
    from ..backends._registry import spec_kind
    from ..cliargs import dtype_option

    spec = args.model.strip()
    if spec_kind(spec) == "sentence":
        raise ConfigError("CEAT needs word vectors in context: use hf:NAME or minilm, not an st: sentence encoder")
    if spec_kind(spec) == "static":  # said before loading, and not as an option the user never gave
        raise ConfigError(f"CEAT needs a contextual model (hf:NAME or minilm); {spec} gives one vector per word")
    # the table's options say "default" by None: CEAT's defaults, as before (20 contexts, the last layer, fallback)
    model = load_model(spec, corpus=args.corpus, contexts_per_word=args.contexts_per_word or 20,
                       layer=-1 if args.layer is None else args.layer, missing=args.missing or "fallback",
                       seed=args.seed, device=args.device, batch_size=args.batch_size,
                       cache_dir=args.cache_dir, use_cache=False if args.no_cache else None,
                       allow_pickle=args.allow_pickle, **dtype_option(args.dtype, args.device))
    from .._types import ContextEncoder

    if not isinstance(model, ContextEncoder):
        raise ConfigError(f"CEAT needs a contextual model (hf:NAME or minilm); {spec} gives one vector per word")
    return model


def _calibrator(args: argparse.Namespace, model: Any) -> Any:
    from ..calibration import fit_calibrator, load_calibrator
    from ..cliargs import calibration_params, check_whitener_options

    if args.whitener:
        from ..calibration import check_compatible

        cal = load_calibrator(args.whitener)
        check_whitener_options(args, cal)
        check_compatible(cal, model, force=bool(getattr(args, "force", False)))  # another layer: before encoding
        return cal
    if args.calibration == "none":
        return None
    kwargs: dict[str, Any] = {"unit": "sentence"}
    if args.reference_text:
        kwargs["text"] = args.reference_text
    return fit_calibrator(model, args.calibration, n_reference=args.reference_size, reference_kwargs=kwargs,
                          **calibration_params(args))


def _p_text(meta: Any) -> str:
    """``format_p``, or ``m.me-E`` from log10 p where p is below 1e-300 (never a bare 0)."""
    from ..reporting.tables import format_p

    if meta.p_value >= 1e-300:
        return format_p(meta.p_value)
    e = math.floor(meta.log10_p)
    m = 10 ** (meta.log10_p - e)
    if round(m, 1) >= 10:
        m, e = m / 10, e + 1
    return f"{m:.1f}e{e}"


#: What each ``--variance`` means, as the table's footer states it.
VARIANCE_TEXT = {
    "published": "published (Guo & Caliskan 2021, suppl. 8.3 and their code: the sample variance of "
                 "s(w,A,B) over X and Y per draw, ddof {ddof})",
    "hedges-olkin": "hedges-olkin (not the published procedure: Hedges & Olkin's sampling variance of d, "
                    "(nX+nY)/(nX nY) + d^2/(2(nX+nY)); Guo & Caliskan use the variance of s over X and Y)",
}
#: What each ``--alternative`` means.
ALTERNATIVE_TEXT = {
    "two-sided": "two-sided, 2(1 - Phi(|CES/SE|)), as the paper's text (their released code is one-sided: "
                 "--alternative greater)",
    "greater": "one-sided (greater: 1 - Phi(CES/SE), as Guo & Caliskan's released code computes it; the paper's "
               "text is two-sided)",
    "less": "one-sided (less: Phi(CES/SE); the paper's text is two-sided)",
}


def method_lines(result: CEATResult, ddof: int = 1) -> list[str]:
    """The footer naming the within-draw variance and the side of p (``--variance``, ``--alternative``)."""
    return [f"within-draw variance: {VARIANCE_TEXT[result.variance].format(ddof=ddof)}",
            f"p: {ALTERNATIVE_TEXT[result.alternative]}"]


def _contexts_cell(r: CEATResult) -> str:
    c = r.contexts
    return "-" if c is None or c.low != c.low else f"[{c.low:.3f}, {c.high:.3f}]"


def estimand_lines(results: list[CEATResult]) -> list[str]:
    """What each interval covers: the published (draw-level) SE, interval and p, and the contexts interval."""
    lines = ["SE, 95% CI, p (draws): Guo & Caliskan's random-effects combination, draw-level: they cover the choice "
             "of draws from these contexts only, not the sampling of the contexts (another sample of sentences gives "
             "another CES), so p can be astronomically small while the CES moves by more than its CI between corpora."]
    c = results[0].contexts
    if c is None:
        lines.append("95% CI (contexts): not computed (--bootstrap 0).")
        return lines
    ses = ", ".join(f"{r.calibration if r.calibration != 'none' else 'raw'} {r.contexts.se:.3f}"
                    for r in results if r.contexts is not None)
    lines.append(f"95% CI (contexts): {c.method} interval of {c.n_boot} bootstrap replicates, each word's n "
                 "contexts resampled n - 1 times with replacement and the published procedure rerun "
                 "(isoeat.stats.ceat_contexts): it also "
                 f"covers the sampling of the contexts; SE over replicates: {ses}.")
    one = [w for w, k in results[0].n_contexts.items() if k == 1]
    if one:  # a resample of one context is that context: its sampling is outside the interval
        lines.append(f"95% CI (contexts) leaves out the sampling of {len(one)} word(s) with one context: "
                     f"{', '.join(one)}.")
    return lines


def _table(results: list[CEATResult], ddof: int = 1, corpus: str = "") -> str:
    from ..reporting.tables import _render, fallback_footer

    r0 = results[0]
    rows = [[r.calibration if r.calibration != "none" else "raw", f"{r.meta.ces:.3f}", f"{r.meta.se:.4f}",
             f"[{r.meta.ci_low:.3f}, {r.meta.ci_high:.3f}]", _p_text(r.meta), _contexts_cell(r), f"{r.meta.tau2:.4f}",
             f"{r.meta.q:.1f}", str(r.meta.n)] for r in results]
    head = (f"CEAT {r0.test} on {r0.model}: {r0.meta.n} draws (seed {r0.seed}) of one context per word; "
            f"|X|/|Y|/|A|/|B| = {r0.n_x}/{r0.n_y}/{r0.n_a}/{r0.n_b}")
    ctx = sorted(r0.n_contexts.values())
    lines = [head, _render(["Space", "CES", "SE (draws)", "95% CI (draws)", "p (draws)", "95% CI (contexts)",
                            "tau^2", "Q", "N"], rows, align_left=1),
             f"contexts per word: {ctx[0]} to {ctx[-1]} (median {ctx[len(ctx) // 2]})",
             *estimand_lines(results), *method_lines(r0, ddof)]
    lines += [line for line in fallback_footer([r0], contexts=True, corpus=corpus)
              if not line.startswith("No corpus context")]
    if r0.fallback:
        lines.append(f"no context in the corpus, one template vector in every draw: {', '.join(r0.fallback)}")
    if r0.dropped:
        lines.append(f"dropped (no context): {', '.join(r0.dropped)}")
    return "\n".join(lines)


def _check_early(args: argparse.Namespace, tests: list[Any]) -> None:
    """``--draws``, ``--ddof`` and ``--bootstrap`` against what CEAT needs, before a model is loaded or a word
    encoded."""
    from ..stats.ceat_contexts import check_context_work

    if args.draws < 2:
        raise ConfigError(f"--draws must be at least 2 (the random-effects combination needs two draws to "
                          f"estimate their spread), got {args.draws}")
    if args.bootstrap == 1:
        raise ConfigError("--bootstrap must be 0 (no contexts interval) or at least 2 replicates, got 1")
    for t in tests:
        if args.bootstrap:
            check_context_work(args.bootstrap, args.draws, len(t.X.words) + len(t.Y.words),
                               len(t.A.words) + len(t.B.words))
    for t in tests:
        n = len(t.X.words) + len(t.Y.words)
        if args.ddof >= n:
            raise ConfigError(f"--ddof {args.ddof}: must be below the {n} target words of {t.id} (|X| + |Y|) whose "
                              "associations each draw's standard deviation pools")


def _cmd_ceat(args: argparse.Namespace) -> int:
    from ..cliargs import calibrator_mark
    from ..labels import protocol_text
    from ..reporting.tables import emit_records, protocol_footer
    from ..stats.ceat import ceat
    from ..wordsets import resolve_tests
    from ._spaces import space_protocols

    tests = resolve_tests(args.test)
    if args.figure and len(tests) > 1:
        raise ConfigError("--figure draws one test: give one --test, or run once per test")
    _check_early(args, tests)
    model = _load(args)
    cal = _calibrator(args, model)
    cals = {getattr(cal, "name", args.calibration): cal} if cal is not None else {}
    results = [ceat(model, t, calibration=cals, n_draws=args.draws, rng=args.seed, ddof=args.ddof,
                    variance=args.variance, alternative=args.alternative, bootstrap=args.bootstrap) for t in tests]
    if args.figure:
        from ..reporting._glyphs import glyphs_for
        from ..reporting.ceat_figure import write_ceat_figure

        r0 = results[0][0]
        with glyphs_for([r0.test, r0.model, *r0.n_contexts]):  # words or labels the font lacks: said once
            write_ceat_figure(results[0], args.figure)
    corpus = corpus_name_of(model)
    # every record says whether it is the paper's protocol (as weat's and run's: contexts per word, the reference
    # the calibrator's fit really used, its eps; CEAT samples no permutations), raw first, then calibrated
    departures = space_protocols([[]] * (1 + len(cals)), cal, model, None)
    spaces = [protocol_text(d) for d in departures]
    if args.format in ("json", "csv"):  # the corpus the contexts came from, in every record
        emit_records([{**r.to_dict(draws=True), "corpus": corpus, "protocol": spaces[j]}
                      for rs in results for j, r in enumerate(rs)]
                     if args.format == "json" else
                     [{**rec, "corpus": corpus, "protocol": spaces[j]} for rs in results for j, r in enumerate(rs)
                      for rec in r.records()], args.format)
    else:
        print("\n\n".join(_table(rs, args.ddof, corpus) for rs in results))
        for line in protocol_footer(departures[-1]):
            print(line)
        if cal is not None:
            meta = getattr(cal, "metadata_", {}) or {}
            print(f"calibrator: {getattr(cal, 'name', '?')}, n={meta.get('n', '?')}; "
                  f"reference: {meta.get('reference', '?')}")
            if calibrator_mark(cal):
                print(calibrator_mark(cal))
    from ..cliargs import fallback_gate

    return fallback_gate(args, [rs[0] for rs in results], corpus)


COMMANDS = {"ceat": _cmd_ceat}
