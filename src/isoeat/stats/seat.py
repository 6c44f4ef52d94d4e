r"""SEAT: the Sentence Encoder Association Test (May et al. 2019).

SEAT runs WEAT on sentence embeddings. Each stimulus word of a test is placed
into a semantically bleached template ("This is {}.", "{} is here.", ...);
targets and attributes are filled into the *same* template, the filled
sentences are embedded, and :func:`~isoeat.stats.weat.weat_from_vectors`
gives d and p for that template. Because effect sizes vary with the template,
every template's d and p are kept and summarised by the mean and the range of
d across templates, as the tutorial recommends (never one hand-picked
template), and by a random-effects summary over the templates
(:func:`across_templates`): the DerSimonian–Laird combination of
:func:`isoeat.stats.ceat.random_effects`, each template's d weighted by the
inverse of its within-template variance by the Hedges–Olkin formula

.. math::

    v_t = \frac{n_x + n_y}{n_x n_y} + \frac{d_t^2}{2 (n_x + n_y)}

(Hedges & Olkin 1985, eq. 5.15; the large-sample variance of a standardised
mean difference) plus the between-template variance :math:`\tau^2`. The
templates hold the same words, so their d are not independent: the summary's
interval treats them as if they were and is a description of the templates'
spread around a common value, not a test (each template's permutation p is).

Tests whose stimuli are already sentences (the ``sent-*`` files of the
sent-bias release, e.g. ``sent-weat6.jsonl``) are embedded as they are: one
WEAT, no templates.

With ``calibration`` (e.g. a ZCA whitener fitted on the encoder's sentence
embeddings of corpus sentences, paper §4.1), every embedding is transformed
before cosines are taken (paper §3.3, stage 2).

The command line (``isoeat seat``) is :mod:`isoeat.commands.seat`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import ConfigError
from .._random import spawn_seeds, stream
from .._surface import public, require_encoder
from .._types import Calibrator, SentenceEncoder, name_of, sentence_encoder_of, sentence_pooling_name_of
from .._validate import check_bool, check_choice, check_int, check_real
from .options import SEAT_MODES, IntervalOptions, PermutationOptions, ResultLabels, gather, own
from .results import ResultIdentity, WEATResult, records_frame
from .validity import check_test
from .weat import documents_calibration, resolve_calibration, weat_from_vectors

if TYPE_CHECKING:
    from ..wordsets import AssociationTest

__all__ = ["SEATResult", "SentenceOptions", "seat", "MODES", "across_templates", "template_variance",
           "TEMPLATE_VARIANCE"]

#: How each template's variance of d is computed for the random-effects summary (recorded as ``re_variance``).
TEMPLATE_VARIANCE = "hedges-olkin"

MODES = SEAT_MODES


@dataclass(frozen=True)
class SentenceOptions:
    """How SEAT makes its sentences and counts its templates (:func:`seat`'s ``sentences=``; each field is also
    accepted as a keyword of its own, ``seat(model, "W6", mode="templates")``).

    Attributes
    ----------
    templates : sequence of str or None
        Each with exactly one ``{}``; None: :data:`~isoeat.wordsets._templates.DEFAULT_TEMPLATES`.
    mode : {"auto", "templates", "sentences"}
        ``"auto"``: stimuli that all contain white space are sentences and
        are embedded as given; otherwise words go into templates.
    capitalize : bool
        Upper-case the first letter of sentences that start with the slot.
    alpha : float
        Level for counting significant templates.
    """

    templates: Sequence[str] | None = None
    mode: str = "auto"
    capitalize: bool = True
    alpha: float = 0.05


@dataclass(frozen=True, kw_only=True)
class SEATResult(ResultIdentity):
    """One SEAT on one encoder: a WEAT per template and their summary.

    The identity fields (test, model, calibration, seed, set sizes, dropped
    and case-folded words) are those of
    :class:`~isoeat.stats.results.ResultIdentity`; ``seed`` is the root seed
    the per-template seeds were spawned from, and a sentence encoder drops
    no word.

    Attributes
    ----------
    bias_type : str
    mode : str
        ``"templates"`` (words placed in templates) or ``"sentences"``
        (stimuli embedded as given; one result, no template).
    templates : tuple of str
        The templates, in the order of ``results`` (empty for ``"sentences"``).
    results : tuple of WEATResult
        One WEAT per template (d, p, p method, its own seed, ...).
    effect_size_mean, effect_size_min, effect_size_max : float
        Mean, smallest and largest d across templates.
    n_x, n_y : int
        Target set sizes (``n_a``, ``n_b``: attribute set sizes), the same in every template.
    alpha : float
        Level for :attr:`n_significant`.
    random_effects : MetaAnalysis or None
        The DerSimonian–Laird summary of d over the templates (:func:`across_templates`); None with fewer than two
        templates of finite d.
    pooling : str
        How the encoder pools a sentence's tokens into one vector (``"st: mean"``: sentence-transformers' Pooling
        module; ``"hf: mean"``, ``"hf: cls"``, ``"hf: last"``: the ``hf:`` encoder's ``sentence_pooling``; empty
        for an encoder that does not say).
    """

    bias_type: str
    mode: str
    templates: tuple[str, ...]
    results: tuple[WEATResult, ...]
    effect_size_mean: float
    effect_size_min: float
    effect_size_max: float
    n_x: int
    n_y: int
    alpha: float = 0.05
    random_effects: Any = None
    pooling: str = ""

    @property
    def effect_size_range(self) -> float:
        """Width of the range of d across templates (max − min)."""
        return float(self.effect_size_max - self.effect_size_min)

    @property
    def n_significant(self) -> int:
        """Templates with ``p < alpha``."""
        from ..labels import is_significant

        return sum(is_significant(r.p_value, self.alpha) for r in self.results)

    @property
    def p_values(self) -> tuple[float, ...]:
        return tuple(r.p_value for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        """The summary and the identity fields, with one record per template under ``per_template``."""
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
            **self._record(("seed", "n_x", "n_y", "n_a", "n_b", "dropped", "case_folded", "seed_stream")),
            **self._re_record(),  # the across-template summary and the pooling: added last (the columns before keep
            "pooling": self.pooling,  # their order)
            "per_template": self.records(),
        }

    def _re_record(self) -> dict[str, Any]:
        """The random-effects summary's fields (``re_*``; nan where there is none)."""
        re, nan = self.random_effects, float("nan")
        keys = ("ces", "se", "ci_low", "ci_high", "tau2", "q", "p_value")
        names = ("re_effect_size", "re_se", "re_ci_low", "re_ci_high", "re_tau2", "re_q", "re_p_value")
        out: dict[str, Any] = {n: (nan if re is None else float(getattr(re, k))) for n, k in zip(names, keys)}
        out["re_variance"] = TEMPLATE_VARIANCE
        return out

    def to_frame(self) -> Any:
        """The summary as a one-row :class:`pandas.DataFrame`, columns = :meth:`to_dict` keys (needs pandas).

        ``per_template`` holds the per-template records; ``records_frame(res.records())``
        (:func:`isoeat.stats.results.records_frame`) gives them one row each.
        """
        return records_frame([self.to_dict()])

    def records(self) -> list[dict[str, Any]]:
        """One tidy record per template (the WEAT fields plus ``template`` and ``mode``)."""
        out = []
        for i, r in enumerate(self.results):
            rec = {"template": self.templates[i] if self.templates else "", "mode": self.mode}
            rec.update(r.to_dict())
            rec["pooling"] = self.pooling
            out.append(rec)
        return out


def template_variance(d: Any, n_x: int, n_y: int) -> np.ndarray:
    r"""Within-template variance of d by Hedges & Olkin (1985): :math:`(n_x+n_y)/(n_x n_y) + d^2/(2(n_x+n_y))`.

    Examples
    --------
    >>> float(template_variance(1.0, 8, 8))
    0.28125
    """
    d = np.asarray(d, dtype=np.float64)
    return (n_x + n_y) / (n_x * n_y) + d**2 / (2.0 * (n_x + n_y))


def across_templates(results: Sequence[WEATResult]) -> Any:
    """The DerSimonian–Laird summary of the templates' d (:func:`isoeat.stats.ceat.random_effects`, with
    :func:`template_variance`), on the side of the templates' ``alternative``; None with fewer than two finite d."""
    from .ceat import random_effects

    ok = [r for r in results if np.isfinite(r.effect_size)]
    if len(ok) < 2:
        return None
    d = np.array([r.effect_size for r in ok], dtype=np.float64)
    v = np.array([float(template_variance(r.effect_size, r.n_x, r.n_y)) for r in ok])
    return random_effects(d, v, alternative=ok[0].alternative)


def _is_sentences(test: Any) -> bool:
    return all(any(c.isspace() for c in w.strip()) for ws in test.sets().values() for w in ws.words)


def _encoder_fn(model: Any) -> Callable[[list[str]], Any]:
    """The model's ``encode_sentences`` (or ``encode``), or a ConfigError naming the model."""
    fn = sentence_encoder_of(model)
    require_encoder(model, "seat", needs=("encode_sentences", "encode", "lookup"), example="minilm")
    if fn is None:
        raise ConfigError(
            f"SEAT needs a sentence encoder (st:NAME_OR_PATH, minilm) or a transformer (hf:NAME_OR_PATH); "
            f"{name_of(model, 'this model')} gives static word vectors only"
        )
    return fn


@public
@documents_calibration
def seat(
    model: SentenceEncoder,
    test: AssociationTest | str,
    *,
    calibration: Calibrator | str | None = None,
    rng: int | np.random.Generator | None = None,
    ddof: int = 1,
    allow_overlap: bool = False,
    force: bool = False,
    permutation: PermutationOptions | None = None,
    interval: IntervalOptions | None = None,
    sentences: SentenceOptions | None = None,
    **options: Any,
) -> SEATResult:
    """SEAT of ``test`` on a sentence encoder, per template, with mean and range of d.

    Parameters
    ----------
    model : SentenceEncoder
        Anything with ``encode_sentences`` or ``encode``
        (:class:`isoeat._types.SentenceEncoder`): ``load_model("st:minilm")``,
        any ``st:``/``hf:`` encoder.
    test : AssociationTest or str
        A test, a registered id (``"W6"``), or the path of a test file
        holding one test (isoeat's YAML/JSON or a sent-bias ``.jsonl``).
    calibration : see CALIBRATION_DOC
    rng : None, int or Generator, default None
        The root seed (the SEAT result's ``seed``; None: a fresh one, drawn
        from the operating system's entropy and recorded, so the result can be
        replayed with ``rng=result.seed``; ``isoeat seat`` passes ``--seed``,
        default 0); template ``t`` draws from
        the stream ``("seat", TEST, t)`` (:func:`isoeat._random.derive_seed`),
        recorded in each result. A Generator or SeedSequence: one child per template, spawned from it.
    ddof, permutation, interval, **options
        See :func:`~isoeat.stats.weat.weat_from_vectors` (``alternative``,
        ``method``, ``n_permutations``, interval options by name).
    allow_overlap : bool, default False
        As in :func:`~isoeat.stats.weat.weat`: stimuli shared between sets
        are refused unless ``True`` (then a warning).
    sentences : SentenceOptions, optional
        How the sentences are made and the templates counted (:class:`SentenceOptions`), or by name:
        ``templates`` (each with exactly one ``{}``; default
        :data:`~isoeat.wordsets._templates.DEFAULT_TEMPLATES`), ``mode`` (``"auto"``, ``"templates"``,
        ``"sentences"``; auto: stimuli that all contain white space are sentences, embedded as given),
        ``capitalize`` (default True: upper-case the first letter of sentences that start with the slot),
        ``alpha`` (default 0.05: the level for counting significant templates).

    Returns
    -------
    SEATResult
    """
    from ..wordsets import as_test

    test = as_test(test)
    stim = own(SentenceOptions, sentences, options, where="seat", name="sentences")
    permutation, interval, _ = gather(options, where="seat", permutation=permutation, interval=interval,
                                      others=tuple(f.name for f in fields(SentenceOptions)))
    mode = check_choice("mode", stim.mode, MODES)
    alpha = check_real("alpha", stim.alpha, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    encode = _encoder_fn(model)
    if mode == "auto":
        mode = "sentences" if _is_sentences(test) else "templates"
    sets = test.sets()
    check_test(test.id, words={role: list(ws.words) for role, ws in sets.items()},
               ddof=check_int("ddof", ddof, lo=0), allow_overlap=check_bool("allow_overlap", allow_overlap))
    templates_t, filled = _filled(sets, mode, stim)
    cal, cal_name = resolve_calibration(calibration, model, force=force)  # after the cheap checks: may fit
    texts = list(dict.fromkeys(s for f in filled for ss in f.values() for s in ss))
    vecs = np.asarray(encode(texts), dtype=np.float64)
    if cal is not None:
        vecs = cal.transform(vecs)
    row = {t: i for i, t in enumerate(texts)}
    # a Generator or SeedSequence: the templates' seeds are spawned from it; else one named stream per template
    given = isinstance(rng, (np.random.Generator, np.random.SeedSequence))
    seeds: list[Any] = spawn_seeds(rng, len(filled)) if given else []
    seed = None if given else stream(rng)[1]
    name = name_of(model)
    results = []
    for i, f in enumerate(filled):
        mats = {role: vecs[[row[s] for s in ss]] for role, ss in f.items()}
        key = ("seat", test.id, templates_t[i] if templates_t else "sentences")
        res = weat_from_vectors(
            mats["X"], mats["Y"], mats["A"], mats["B"], ddof=ddof, rng=seeds[i] if given else stream(seed, *key)[0],
            permutation=permutation, interval=interval,
            labels=ResultLabels(test=test.id, bias_type=test.bias_type, model=name, calibration=cal_name))
        results.append(res if given else replace(res, seed=seed, seed_stream=key))
    ds = np.array([r.effect_size for r in results], dtype=np.float64)
    finite = ds[np.isfinite(ds)]
    nan = float("nan")
    return SEATResult(
        test=test.id, bias_type=test.bias_type, model=name, calibration=cal_name, seed=seed,
        seed_stream=() if given else ("seat", test.id), mode=mode,
        templates=templates_t, results=tuple(results),
        effect_size_mean=float(finite.mean()) if finite.size else nan,
        effect_size_min=float(finite.min()) if finite.size else nan,
        effect_size_max=float(finite.max()) if finite.size else nan,
        n_x=results[0].n_x, n_y=results[0].n_y, n_a=results[0].n_a, n_b=results[0].n_b,
        alpha=float(alpha), random_effects=across_templates(results), pooling=sentence_pooling_name_of(model),
    )


def _filled(sets: dict[str, Any], mode: str, stim: SentenceOptions
            ) -> tuple[tuple[str, ...], list[dict[str, list[str]]]]:
    """The templates used (none in sentences mode) and, for each, every set's sentences."""
    if mode == "sentences":
        return (), [{role: list(ws.words) for role, ws in sets.items()}]
    from ..wordsets._templates import DEFAULT_TEMPLATES, fill_template, validate_templates

    templates_t = validate_templates(DEFAULT_TEMPLATES if stim.templates is None else stim.templates)
    return templates_t, [{role: [fill_template(t, w, capitalize=stim.capitalize) for w in ws.words]
                          for role, ws in sets.items()} for t in templates_t]
