"""``isoeat seat``: the command line of the Sentence Encoder Association Test (May et al. 2019).

The statistics (:func:`seat`, :class:`SEATResult`) live in
:mod:`isoeat.stats.seat` and are importable from here too.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .._errors import ConfigError
from ..cliopts import SEAT_POOLINGS as SENTENCE_POOLINGS
from ..stats.options import SEAT_MODES as MODES

if TYPE_CHECKING:  # the statistics load numpy: imported when the command runs (``--help`` loads none)
    from ..stats.seat import SEATResult, seat

__all__ = ["SEATResult", "seat", "register", "COMMANDS", "MODES"]


def __getattr__(name: str) -> Any:  # PEP 562: ``seat`` and ``SEATResult`` importable from here, loaded on use
    if name in ("seat", "SEATResult"):
        from ..stats import seat as _stats_seat

        return getattr(_stats_seat, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------
# command line
# ----------------------------------------------------------------------------

_MINILM = {"minilm", "all-minilm-l6-v2", "minilm-l6", "hf:minilm"}


def register(subparsers: Any, add_stat_options: Any) -> None:
    """Add ``isoeat seat`` to the CLI."""
    from ..cliargs import add, examples
    from ..cliargs import add_stat_options as stat_options

    p = subparsers.add_parser(
        "seat",
        description="Sentence Encoder Association Test: per-template d and p, with the mean and range of d "
                    "across templates. Sentence stimuli (sent-bias 'sent-*' files) are embedded as given. "
                    "Prints the raw sentence embeddings beside the calibrated ones (default zca, fitted on 100000 "
                    "corpus sentences; --calibration none: raw only) and each template's change class "
                    "(Stable, Disappearing, Emerging at --alpha).",
        epilog=examples("isoeat seat --model minilm --test W6                      # raw and ZCA-whitened",
                        "isoeat seat --model minilm --test W6 --calibration none   # the raw embeddings only"),
    )
    add(p, "--model", "--test")
    p.add_argument("--templates", metavar="FILE",
                   help="templates, one per line, each with one {} (default: 8 bleached templates after May et al.)")
    p.add_argument("--mode", choices=MODES, default="auto",
                   help="auto (default): sentence stimuli as given, words into templates")
    add(p, "--calibration", "--alpha")
    p.add_argument("--no-normalize", dest="normalize", action="store_false",
                   help="st: models: keep raw (unnormalised) sentence embeddings (default: unit length)")
    p.add_argument("--no-capitalize", dest="capitalize", action="store_false",
                   help="do not upper-case a sentence-initial stimulus ('{} is here.'; default: upper-cased)")
    p.add_argument("--pooling", choices=SENTENCE_POOLINGS, default=None,
                   help="hf: models: how a sentence's token states become its vector: mean (the attention-mask mean, "
                        "special tokens included), cls (the first token's state) or last (the last token's); st: "
                        "models pool as their Pooling module says, recorded in every result (default: mean for hf:)")
    add(p, "--device", "--dtype", "--corpus", "--batch-size", "--cache-dir", "--no-cache", "--allow-pickle")
    stat_options(p)


def _load_encoder(args: argparse.Namespace) -> Any:
    from ..backends import load_model
    from ..backends._registry import spec_kind
    from ..cliargs import dtype_option

    spec = args.model.strip()
    common: dict[str, Any] = {"cache_dir": args.cache_dir, "use_cache": False if args.no_cache else None,
                              "device": args.device, "batch_size": args.batch_size,
                              "allow_pickle": args.allow_pickle, **({"corpus": args.corpus} if args.corpus else {}),
                              **dtype_option(args.dtype, args.device)}
    if args.batch_size < 1:
        raise ConfigError(f"--batch-size must be at least 1, got {args.batch_size}")
    if spec.lower() in _MINILM or spec.lower() == "st:minilm":
        spec = "st:minilm"
    pooling = getattr(args, "pooling", None)  # a Namespace built by hand (the API's tests) may not have it
    if pooling is not None and spec_kind(spec) != "transformer":
        raise ConfigError(f"--pooling {pooling}: applies to hf: models; {spec} pools as its own configuration "
                          "says (an st: model: its Pooling module, recorded as each result's pooling): drop --pooling")
    if spec_kind(spec) == "sentence":
        return load_model(spec, normalize_embeddings=args.normalize, seed=args.seed, **common)
    if spec_kind(spec) == "transformer":  # hf:, and mpnet by any of its names (minilm is st:minilm above)
        return load_model(spec, seed=args.seed, reference_unit="sentence", sentence_pooling=pooling or "mean",
                          **common)
    model = load_model(spec, cache_dir=args.cache_dir, allow_pickle=args.allow_pickle)
    from ..stats.seat import _encoder_fn

    _encoder_fn(model)
    return model


def _calibrator(args: argparse.Namespace, model: Any) -> Any:
    from ..calibration import fit_calibrator, load_calibrator
    from ..cliargs import calibration_params

    if args.whitener:
        from ..calibration import check_compatible

        cal = load_calibrator(args.whitener)
        check_compatible(cal, model, force=bool(getattr(args, "force", False)))  # another model: before encoding
        return cal
    if args.calibration == "none":
        return None
    kwargs: dict[str, Any] = {"unit": "sentence"}
    if args.reference_text:
        kwargs["text"] = args.reference_text
    return fit_calibrator(model, args.calibration, n_reference=args.reference_size, reference_kwargs=kwargs,
                          **calibration_params(args))


def _table(res: SEATResult) -> str:
    from ..reporting.tables import _render, ci_footer, format_ci, format_d, format_p, reach_footer, undefined_footer

    rows = []
    labels = []
    with_ci = any(r.effect_size_ci is not None for r in res.results)
    for i, r in enumerate(res.results):
        label = res.templates[i] if res.templates else "(sentences as given)"
        labels.append(label)
        rows.append([label, format_d(r.effect_size)] + ([format_ci(r.effect_size_ci)] if with_ci else [])
                    + [format_p(r.p_value), r.p_method, f"{r.n_x}/{r.n_y}/{r.n_a}/{r.n_b}"])
    body = _render(["Template", "d"] + (["CI on d"] if with_ci else []) + ["p", "p method", "|X|/|Y|/|A|/|B|"],
                   rows, align_left=1)
    if with_ci:
        body += "\n" + ci_footer([r.effect_size_ci for r in res.results], labels)
    undefined = undefined_footer(res.results, labels)  # a template whose d is undefined: "-" and why
    if undefined:
        body += "\n" + undefined
    t0 = res.results[0]
    head = (f"SEAT {res.test} ({res.bias_type or 'custom'}) on {res.model}, calibration {res.calibration}: "
            f"{res.mode}")
    lines = [head, body]
    if len(res.results) > 1:
        lines.append(
            f"mean d = {format_d(res.effect_size_mean)} across {len(res.results)} templates "
            f"(range {format_d(res.effect_size_min)} to {format_d(res.effect_size_max)}, "
            f"width {format_d(res.effect_size_range)}); p < {res.alpha:g} in {res.n_significant} of "
            f"{len(res.results)}"
        )
    if t0.p_method == "monte-carlo":
        lines.append(f"(Monte Carlo p with {t0.n_permutations:,} permutations)")
    elif t0.p_method == "certified":
        lines.append("(certified p: the upper end of a bracket that holds the exact p)")
    every = all(not r.can_reach(res.alpha) for r in res.results) and len(res.results) > 1
    reach = reach_footer(res.results, ["every template"] * len(labels) if every else labels, res.alpha)
    if reach:
        lines.append(reach)
    return "\n".join(lines)


ACROSS_NOTE = ("RE d: DerSimonian-Laird random-effects mean of the templates' d (isoeat.stats.ceat.random_effects), "
               "each template's variance of d by Hedges & Olkin: (nx+ny)/(nx*ny) + d^2/(2(nx+ny)); tau^2: the "
               "between-template variance, Q: Cochran's. The templates share their words, so the interval treats "
               "dependent d as independent: a summary of the templates' spread, not a test (each template's p is).")


def across_table(results: list[SEATResult]) -> str:
    """The across-template summary of SEAT results (test by test, raw then calibrated): mean, range and the
    random-effects summary of d, the pooling, and the count of significant templates."""
    from ..reporting.tables import _render, format_d

    rows = []
    for r in results:
        re = r.random_effects
        ci = "-" if re is None else f"[{format_d(re.ci_low)}, {format_d(re.ci_high)}]"
        rows.append([r.test, r.calibration, r.pooling or "-", str(len(r.results)), format_d(r.effect_size_mean),
                     f"{format_d(r.effect_size_min)} to {format_d(r.effect_size_max)}",
                     "-" if re is None else format_d(re.ces), ci, "-" if re is None else f"{re.tau2:.3f}",
                     "-" if re is None else f"{re.q:.2f}", f"{r.n_significant} of {len(r.results)}"])
    alpha = results[0].alpha
    return "\n".join(["Across templates:", _render(
        ["Test", "Space", "Pooling", "Templates", "mean d", "range", "RE d", "RE 95% CI", "tau^2", "Q",
         f"p < {alpha:g}"], rows, align_left=3), ACROSS_NOTE])


def _cmd_seat(args: argparse.Namespace) -> int:
    from ..backends.sentence import load_templates
    from ..cliargs import calibrator_mark, weat_kwargs
    from ..labels import protocol_text
    from ..reporting.tables import emit_records, protocol_footer
    from ..stats.seat import seat
    from ..wordsets import resolve_tests
    from ._spaces import space_protocols

    tests = resolve_tests(args.test)
    templates = load_templates(args.templates) if args.templates else None
    model = _load_encoder(args)
    cal = _calibrator(args, model)
    kw = weat_kwargs(args)
    kw.pop("min_coverage", None)
    # --seed is the root seed each result records, so `--seed <recorded seed>` replays it; the raw space beside the
    # calibrated one, each computed as the one space of earlier versions was
    per_space = [[seat(model, t, templates=templates, calibration=c, mode=args.mode, capitalize=args.capitalize,
                       alpha=args.alpha, rng=args.seed, force=args.force, **kw) for t in tests]
                 for c in ([None] if cal is None else [None, cal])]
    results = [r for pair in zip(*per_space) for r in pair]  # test by test: raw, then calibrated
    # every record says whether it is the paper's protocol (as weat's, scweat's and run's): the reference the
    # calibrator's fit really used, its eps, the permutations where a template's p was sampled
    departures = space_protocols([[x for r in rs for x in r.results] for rs in per_space], cal, model,
                                 args.permutations)
    protocols = [protocol_text(departures[i % len(per_space)]) for i in range(len(results))]
    if args.format in ("json", "csv"):
        emit_records([{**r.to_dict(), "protocol": p} for r, p in zip(results, protocols)] if args.format == "json"
                     else [{**rec, "protocol": p} for r, p in zip(results, protocols) for rec in r.records()],
                     args.format)
    else:
        print("\n\n".join(_table(r) for r in results))
        if any(len(r.results) > 1 for r in results):
            print("\n" + across_table([r for r in results if len(r.results) > 1]))
        for line in protocol_footer(departures[-1]):
            print(line)
        if cal is not None:
            from ._spaces import change_lines

            pairs = [(f"{raw.test} {raw.templates[i] if raw.templates else '(as given)'}", a.to_dict(), b.to_dict())
                     for raw, calibrated in zip(*per_space)
                     for i, (a, b) in enumerate(zip(raw.results, calibrated.results))]
            print("\n".join(change_lines(pairs, per_space[1][0].calibration, args.alpha, "Test, template")))
            meta = getattr(cal, "metadata_", {}) or {}
            print(f"calibrator: {cal.name}, n={meta.get('n', '?')}; reference: {meta.get('reference', '?')}")
            if calibrator_mark(cal):
                print(calibrator_mark(cal))
    return 0


COMMANDS = {"seat": _cmd_seat}
