r"""``isoeat seat``: the Sentence Encoder Association Test (May et al. 2019).

SEAT runs WEAT on sentence embeddings. Each stimulus word of a test is placed
into a semantically bleached template ("This is {}.", "{} is here.", ...);
targets and attributes are filled into the *same* template, the filled
sentences are embedded, and :func:`~isoeat.stats.weat.weat_from_vectors`
gives d and p for that template. Because effect sizes vary with the template,
every template's d and p are kept and summarised by the mean and the range of
d across templates, as the tutorial recommends (never one hand-picked
template).

Tests whose stimuli are already sentences (the ``sent-*`` files of the
sent-bias release, e.g. ``sent-weat6.jsonl``) are embedded as they are: one
WEAT, no templates.

With ``calibration`` (e.g. a ZCA whitener fitted on the encoder's sentence
embeddings of corpus sentences, paper §4.1), every embedding is transformed
before cosines are taken (paper §3.3, stage 2).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .._errors import ConfigError
from ..backends.sentence import DEFAULT_TEMPLATES, fill_template, load_templates, validate_templates
from ..stats.weat import WEATResult, weat_from_vectors

__all__ = ["SEATResult", "seat", "register", "COMMANDS", "MODES"]

MODES = ("auto", "templates", "sentences")


@dataclass(frozen=True)
class SEATResult:
    """One SEAT on one encoder: a WEAT per template and their summary.

    Attributes
    ----------
    test, bias_type, model, calibration : str
    mode : str
        ``"templates"`` (words placed in templates) or ``"sentences"``
        (stimuli embedded as given; one result, no template).
    templates : tuple of str
        The templates, in the order of ``results`` (empty for ``"sentences"``).
    results : tuple of WEATResult
        One WEAT per template (d, p, p method, ...).
    effect_size_mean, effect_size_min, effect_size_max : float
        Mean, smallest and largest d across templates.
    alpha : float
        Level for :attr:`n_significant`.
    """

    test: str
    bias_type: str
    model: str
    calibration: str
    mode: str
    templates: tuple[str, ...]
    results: tuple[WEATResult, ...]
    effect_size_mean: float
    effect_size_min: float
    effect_size_max: float
    alpha: float = 0.05

    @property
    def effect_size_range(self) -> float:
        """Width of the range of d across templates (max − min)."""
        return float(self.effect_size_max - self.effect_size_min)

    @property
    def n_significant(self) -> int:
        """Templates with ``p < alpha``."""
        return sum(r.p_value < self.alpha for r in self.results)

    @property
    def p_values(self) -> tuple[float, ...]:
        return tuple(r.p_value for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "bias_type": self.bias_type,
            "model": self.model,
            "calibration": self.calibration,
            "mode": self.mode,
            "n_templates": len(self.templates),
            "effect_size_mean": self.effect_size_mean,
            "effect_size_min": self.effect_size_min,
            "effect_size_max": self.effect_size_max,
            "effect_size_range": self.effect_size_range,
            "alpha": self.alpha,
            "n_significant": self.n_significant,
            "per_template": self.records(),
        }

    def records(self) -> list[dict[str, Any]]:
        """One tidy record per template (the WEAT fields plus ``template`` and ``mode``)."""
        out = []
        for i, r in enumerate(self.results):
            rec = {"template": self.templates[i] if self.templates else "", "mode": self.mode}
            rec.update(r.to_dict())
            out.append(rec)
        return out


def _is_sentences(test: Any) -> bool:
    return all(any(c.isspace() for c in w.strip()) for ws in test.sets().values() for w in ws.words)


def _encoder_fn(model: Any) -> Any:
    fn = getattr(model, "encode_sentences", None) or getattr(model, "encode", None)
    if fn is None or not callable(fn):
        raise ConfigError(
            f"SEAT needs a sentence encoder (st:NAME_OR_PATH, minilm) or a transformer (hf:NAME_OR_PATH); "
            f"{getattr(model, 'name', 'this model')} gives static word vectors only"
        )
    return fn


def seat(
    model: Any,
    test: Any,
    *,
    templates: Sequence[str] | None = None,
    calibration: Any = None,
    mode: str = "auto",
    capitalize: bool = True,
    alpha: float = 0.05,
    rng: Any = 0,
    force: bool = False,
    ddof: int = 1,
    alternative: str = "greater",
    method: str = "auto",
    n_permutations: int = 100_000,
    **weat_kwargs: Any,
) -> SEATResult:
    """SEAT of ``test`` on a sentence encoder, per template, with mean and range of d.

    Parameters
    ----------
    model : encoder with ``encode_sentences`` (or ``encode``)
        ``load_model("st:minilm")``, any ``st:``/``hf:`` encoder.
    test : AssociationTest or str
        A test or registered id (``"W6"``), or a test loaded from a
        sent-bias file.
    templates : sequence of str, optional
        Each with exactly one ``{}``; default :data:`~isoeat.backends.sentence.DEFAULT_TEMPLATES`.
    calibration : fitted calibrator, optional
        Applied to every sentence embedding (dimension and model fingerprint
        are checked; ``force`` skips the fingerprint check).
    mode : {"auto", "templates", "sentences"}
        ``"auto"``: stimuli that all contain white space are sentences and
        are embedded as given; otherwise words go into templates.
    capitalize : bool, default True
        Upper-case the first letter of sentences that start with the slot.
    alpha : float, default 0.05
        Level for counting significant templates.
    rng : None, int or Generator, default 0
        One child seed per template (``SeedSequence.spawn``), recorded in each result.
    ddof, alternative, method, n_permutations, **weat_kwargs
        See :func:`~isoeat.stats.weat.weat_from_vectors`.

    Returns
    -------
    SEATResult
    """
    from ..calibration import check_compatible
    from ..wordsets import get_test

    if isinstance(test, str):
        test = get_test(test)
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must lie in (0, 1), got {alpha!r}")
    encode = _encoder_fn(model)
    if calibration is not None:
        check_compatible(calibration, model, force=force)
    if mode == "auto":
        mode = "sentences" if _is_sentences(test) else "templates"
    sets = test.sets()
    if mode == "sentences":
        templates_t: tuple[str, ...] = ()
        filled = [{role: list(ws.words) for role, ws in sets.items()}]
    else:
        templates_t = validate_templates(DEFAULT_TEMPLATES if templates is None else templates)
        filled = [{role: [fill_template(t, w, capitalize=capitalize) for w in ws.words] for role, ws in sets.items()}
                  for t in templates_t]
    texts = list(dict.fromkeys(s for f in filled for ss in f.values() for s in ss))
    vecs = np.asarray(encode(texts), dtype=np.float64)
    if calibration is not None:
        vecs = calibration.transform(vecs)
    row = {t: i for i, t in enumerate(texts)}
    if isinstance(rng, np.random.Generator):
        root = np.random.SeedSequence(int(rng.integers(0, 2**63)))
    elif rng is None:
        root = np.random.SeedSequence()
    else:
        if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0:
            raise ConfigError(f"rng (seed) must be None, a non-negative int or a Generator, got {rng!r}")
        root = np.random.SeedSequence(int(rng))
    seeds = root.spawn(len(filled))
    cal_name = "none" if calibration is None else str(getattr(calibration, "name", "calibrated"))
    results = []
    for i, f in enumerate(filled):
        mats = {role: vecs[[row[s] for s in ss]] for role, ss in f.items()}
        results.append(weat_from_vectors(
            mats["X"], mats["Y"], mats["A"], mats["B"], ddof=ddof, alternative=alternative, method=method,
            n_permutations=n_permutations, rng=int(seeds[i].generate_state(1)[0]), test=test.id,
            bias_type=test.bias_type, model=getattr(model, "name", ""), calibration=cal_name, **weat_kwargs,
        ))
    ds = np.array([r.effect_size for r in results], dtype=np.float64)
    finite = ds[np.isfinite(ds)]
    nan = float("nan")
    return SEATResult(
        test=test.id, bias_type=test.bias_type, model=getattr(model, "name", ""), calibration=cal_name, mode=mode,
        templates=templates_t, results=tuple(results),
        effect_size_mean=float(finite.mean()) if finite.size else nan,
        effect_size_min=float(finite.min()) if finite.size else nan,
        effect_size_max=float(finite.max()) if finite.size else nan,
        alpha=float(alpha),
    )


# ----------------------------------------------------------------------------
# command line
# ----------------------------------------------------------------------------

_MINILM = {"minilm", "all-minilm-l6-v2", "minilm-l6", "hf:minilm"}


def register(subparsers: Any, add_stat_options: Any) -> None:
    """Add ``isoeat seat`` to the CLI."""
    from ..calibration import calibration_names

    p = subparsers.add_parser(
        "seat",
        help="SEAT: WEAT on sentence embeddings of the words placed in templates (May et al. 2019)",
        description="Sentence Encoder Association Test: per-template d and p, with the mean and range of d "
                    "across templates. Sentence stimuli (sent-bias 'sent-*' files) are embedded as given.",
    )
    p.add_argument("--model", default="minilm",
                   help="st:NAME_OR_PATH (sentence-transformers), hf:NAME_OR_PATH (mean-pooled hidden states) "
                        "or minilm (the bundled all-MiniLM-L6-v2 as a sentence encoder; default)")
    p.add_argument("--test", required=True, metavar="ID|FILE",
                   help="test id (W1..W10), comma-separated ids, or a YAML/JSON/sent-bias .jsonl file")
    p.add_argument("--templates", metavar="FILE",
                   help="templates, one per line, each with one {} (default: 8 bleached templates after May et al.)")
    p.add_argument("--mode", choices=MODES, default="auto",
                   help="auto (default): sentence stimuli as given, words into templates")
    p.add_argument("--calibration", choices=calibration_names(), default="none",
                   help="calibrate the sentence embeddings before measuring (default none)")
    p.add_argument("--alpha", type=float, default=0.05, help="level for counting significant templates (0.05)")
    p.add_argument("--no-normalize", dest="normalize", action="store_false",
                   help="st: models: keep raw (unnormalised) sentence embeddings")
    p.add_argument("--no-capitalize", dest="capitalize", action="store_false",
                   help="do not upper-case a sentence-initial stimulus ('{} is here.')")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:N (default: cuda when present)")
    p.add_argument("--batch-size", type=int, default=64, metavar="N", help="sentences per forward pass (64)")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="embedding cache folder (default $ISOEAT_CACHE_DIR or ~/.cache/isoeat)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the embedding cache")
    add_stat_options(p)


def _load_encoder(args: argparse.Namespace) -> Any:
    from ..backends import load_model

    spec = args.model.strip()
    common: dict[str, Any] = {"cache_dir": args.cache_dir, "use_cache": False if args.no_cache else None,
                              "device": args.device, "batch_size": args.batch_size}
    if args.batch_size < 1:
        raise ConfigError(f"--batch-size must be at least 1, got {args.batch_size}")
    if spec.lower() in _MINILM or spec.lower() == "st:minilm":
        spec = "st:minilm"
    if spec.lower().startswith("st:"):
        return load_model(spec, normalize_embeddings=args.normalize, seed=args.seed, **common)
    if spec.lower().startswith("hf:"):
        return load_model(spec, seed=args.seed, reference_unit="sentence", **common)
    model = load_model(spec, cache_dir=args.cache_dir)
    _encoder_fn(model)
    return model


def _calibrator(args: argparse.Namespace, model: Any) -> Any:
    from ..calibration import fit_calibrator, load_calibrator
    from ..cliargs import calibration_params

    if args.whitener:
        return load_calibrator(args.whitener)
    if args.calibration == "none":
        return None
    kwargs: dict[str, Any] = {"unit": "sentence"}
    if args.reference_text:
        kwargs["text"] = args.reference_text
    return fit_calibrator(model, args.calibration, n_reference=args.reference_size, reference_kwargs=kwargs,
                          **calibration_params(args))


def _table(res: SEATResult) -> str:
    from ..reporting.tables import _render, format_d, format_p

    rows = []
    for i, r in enumerate(res.results):
        label = res.templates[i] if res.templates else "(sentences as given)"
        rows.append([label, format_d(r.effect_size), format_p(r.p_value), r.p_method,
                     f"{r.n_x}/{r.n_y}/{r.n_a}/{r.n_b}"])
    body = _render(["Template", "d", "p", "p method", "|X|/|Y|/|A|/|B|"], rows, align_left=1)
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
    return "\n".join(lines)


def _cmd_seat(args: argparse.Namespace) -> int:
    from ..cliargs import weat_kwargs
    from ..reporting.tables import records_to_csv, to_json
    from ..wordsets import resolve_tests

    if not 0.0 < args.alpha < 1.0:
        raise ConfigError(f"--alpha must lie in (0, 1), got {args.alpha}")
    tests = resolve_tests(args.test)
    templates = load_templates(args.templates) if args.templates else None
    model = _load_encoder(args)
    cal = calibrator_from_args(args, model)
    kw = weat_kwargs(args)
    kw.pop("min_coverage", None)
    seeds = np.random.SeedSequence(args.seed).spawn(len(tests))
    results = [
        seat(model, t, templates=templates, calibration=cal, mode=args.mode, capitalize=args.capitalize,
             alpha=args.alpha, rng=int(seeds[i].generate_state(1)[0]), force=args.force, **kw)
        for i, t in enumerate(tests)
    ]
    if args.format == "json":
        sys.stdout.write(to_json([r.to_dict() for r in results]))
    elif args.format == "csv":
        sys.stdout.write(records_to_csv([rec for r in results for rec in r.records()]))
    else:
        print("\n\n".join(_table(r) for r in results))
        if cal is not None:
            meta = getattr(cal, "metadata_", {}) or {}
            print(f"calibrator: {cal.name}, n={meta.get('n', '?')}; reference: {meta.get('reference', '?')}")
    return 0


COMMANDS = {"seat": _cmd_seat}
