"""Raw vs calibrated WEAT for a battery of tests, with change classes (paper §4.3).

Change classes at significance level ``alpha`` (default 0.05):

* ``Stable``: significance unchanged;
* ``Disappearing``: significant raw, not significant after calibration;
* ``Emerging``: not significant raw, significant after calibration.

Flags: ``large_shift`` when :math:`|\\Delta d| > 0.5`, ``sign_reversal`` when
the raw and calibrated effect sizes have opposite, non-zero signs.

The other bias metrics (:mod:`isoeat.metrics`) get one more label,
:func:`metric_change`: whether calibration changes the metric's conclusion
(``changed`` / ``unchanged`` / ``no conclusion``), from the same two rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import ConfigError
from .._progress import progress_callback
from .._random import root_seed
from .._surface import public, require_encoder
from .._types import ContextEncoder, contexts_per_word_of, corpus_name_of, name_of
from ..labels import (  # noqa: F401 - re-exported: the one home of every label is isoeat.labels
    CHANGE_CLASSES,
    COHEN_BOUNDS,
    FALLBACK_WARN_SHARE,
    LARGE_SHIFT,
    MAGNITUDE_RULE,
    MAGNITUDES,
    METRIC_CHANGE_RULE,
    METRIC_CONCLUSIONS,
    SANITY_TESTS,
    change_flags,
    check_alpha,
    classify_change,
    cohen_magnitude,
    compare_records,
    fallback_counts,
    is_significant,
    metric_change,
    protocol_departures,
    protocol_text,
    reference_used,
    sanity_failures,
    too_many_fallbacks,
)
from ..stats.options import IntervalOptions, PermutationOptions, gather
from ..stats.weat import WEATResult, resolve_calibration
from .reference import ReferenceOptions
from .route import stability_replicates  # noqa: F401 - re-exported: compare_calibration(stability=), run --stability

__all__ = [
    "CHANGE_CLASSES", "LARGE_SHIFT", "is_significant", "classify_change", "change_flags", "adjust_family",
    "adjust_records", "compare_records", "comparison_rows", "result_from_record", "ComparisonRow", "Comparison",
    "compare_calibration", "METRIC_CONCLUSIONS", "METRIC_CHANGE_RULE", "metric_change", "metric_comparison_rows",
    "FALLBACK_WARN_SHARE", "fallback_counts", "too_many_fallbacks",
    "COHEN_BOUNDS", "MAGNITUDES", "cohen_magnitude", "MAGNITUDE_RULE", "stability_replicates",
]

def adjust_family(p_values: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Holm and Benjamini–Hochberg adjusted p across one family; NaN entries stay NaN and are not counted.

    One family is the battery of tests of one (model, space): change classes
    use the unadjusted p, as the paper; the adjusted ones are reported next to it.
    """
    from ..stats.multitest import benjamini_hochberg, holm

    p = np.asarray(p_values, dtype=np.float64)
    ph, pb = np.full(len(p), np.nan), np.full(len(p), np.nan)
    ok = np.isfinite(p)
    if ok.any():
        ph[ok], pb[ok] = holm(p[ok]), benjamini_hochberg(p[ok])
    return ph, pb


def adjust_records(records: list[dict], by: Sequence[str] = ("model", "calibration")) -> None:
    """Fill ``p_holm``/``p_bh`` in WEAT records, one family per value of the ``by`` keys (in place)."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault(tuple(r[k] for k in by), []).append(r)
    for rs in groups.values():
        ph, pb = adjust_family([r["p_value"] for r in rs])
        if not np.isfinite(ph).any():
            continue
        for r, a, b in zip(rs, ph, pb):
            r["p_holm"], r["p_bh"] = float(a), float(b)


def comparison_rows(weat_records: list[dict], calibrations: list[dict], alpha: float) -> list[dict]:
    """Raw vs each calibrated space, per model and test (the ``comparison.csv`` rows).

    ``weat_records`` carry ``model``, ``calibration`` (labels), ``test`` and the
    WEAT fields; ``calibrations`` are ``{"label", "name"}`` dicts, the raw
    space being the one named ``"none"``.
    """
    index = {(r["model"], r["calibration"], r["test"]): r for r in weat_records}
    raw_label = next((c["label"] for c in calibrations if c["name"] == "none"), "none")
    rows = []
    for (model, cal, test), rc in index.items():
        if cal == raw_label:
            continue
        rr = index.get((model, raw_label, test))
        if rr is None:
            continue
        rows.append({
            "model": model, "family": rr.get("family"), "calibration": cal,
            "calibration_name": rc.get("calibration_name"), "test": test, "bias_type": rr.get("bias_type"),
            **compare_records(rr, rc, alpha),
            # added last: a comparison.csv keeps its earlier columns in place
            "magnitude_raw": cohen_magnitude(rr["effect_size"]),
            "magnitude_calibrated": cohen_magnitude(rc["effect_size"]),
        })
    return rows


def metric_comparison_rows(metric_records: list[dict], calibrations: list[dict], alpha: float) -> list[dict]:
    """Metrics x calibrated spaces x tests: raw vs calibrated estimate and :func:`metric_change` (per model).

    ``metric_records`` are :class:`~isoeat.metrics.MetricResult` records with
    the runner's ``model`` and ``calibration`` labels; the raw space is the
    calibration named ``"none"``. Whether a metric has a p-value is the
    registry's (:data:`isoeat.metrics.registry.METRICS`), so a p-value metric
    whose estimate was undefined in one space counts as not significant there.
    """
    from ..metrics.registry import METRICS

    index = {(r["model"], r["calibration"], r["test"], r["metric"]): r for r in metric_records}
    raw_label = next((c["label"] for c in calibrations if c["name"] == "none"), "none")
    rows = []
    for (model, cal, test, name), rc in index.items():
        rr = index.get((model, raw_label, test, name))
        if cal == raw_label or rr is None:
            continue
        spec = METRICS.resolve(name)
        has_p = METRICS.get(spec).p_value != "none" if spec else "none" not in (rr.get("p_method"), rc.get("p_method"))
        rows.append({
            "model": model, "family": rr.get("family"), "calibration": cal,
            "calibration_name": rc.get("calibration_name"), "test": test, "bias_type": rr.get("bias_type"),
            "metric": name, "signed": bool(rr.get("signed")), "estimate_raw": rr["estimate"],
            "estimate_calibrated": rc["estimate"], "p_raw": rr.get("p_value"), "p_calibrated": rc.get("p_value"),
            "p_method_raw": rr.get("p_method"), "p_method_calibrated": rc.get("p_method"),
            **metric_change(rr["estimate"], _p(rr), rc["estimate"], _p(rc), signed=bool(rr.get("signed")),
                            has_p=has_p, alpha=alpha),
        })
    return rows


def _p(rec: dict) -> float:
    p = rec.get("p_value")
    return float("nan") if p is None else float(p)


def result_from_record(rec: dict) -> WEATResult:
    """A :class:`WEATResult` from a tidy record (a cell's ``result`` plus the runner's columns).

    The runner's ``model`` column is the model's label; the result's own name is ``model_name``.
    """
    return WEATResult.from_dict({**rec, "model": rec.get("model_name") or rec.get("model", "")})


@dataclass(frozen=True)
class ComparisonRow:
    """One test: its raw and calibrated results and what changed."""

    test: str
    bias_type: str
    raw: WEATResult
    calibrated: WEATResult
    change: str
    delta_d: float
    large_shift: bool
    sign_reversal: bool
    #: jackknife SE of the calibrated d due to the reference sample (None when not computed)
    reference_se: float | None = None
    #: the stability marks: how many of ``replicates`` redraws of the reference sample give the calibrated call
    #: its own value (:func:`isoeat.labels.replicate_agreement`; None when not computed)
    replicates_same: int | None = None
    replicates: int | None = None
    #: the across-corpora marks (:data:`~isoeat.experiments.stability.CORPORA_COLUMNS`), None when the run
    #: compared no corpora
    across_corpora: dict[str, Any] | None = None

    @property
    def call_holds(self) -> bool | None:
        """Whether the calibrated significance call holds within the reference sample's error
        (:func:`isoeat.labels.call_holds`); None when no redraws were made."""
        from ..labels import call_holds

        return None if self.replicates_same is None else call_holds(self.replicates_same, self.replicates or 0)

    @property
    def class_holds(self) -> bool | None:
        """The change class holds exactly when the calibrated call does (the raw call needs no reference)."""
        return self.call_holds

    def stability_columns(self) -> dict[str, Any]:
        """``call_holds``, ``class_holds``, ``replicate_share`` ("k/R"), ``replicates`` and ``firm`` (the level:
        :func:`isoeat.labels.firm_level`); empty when not computed."""
        from .stability import stability_columns

        return stability_columns(None if self.replicates_same is None
                                 else (self.replicates_same, int(self.replicates or 0)))

    def to_dict(self) -> dict[str, Any]:
        out = {
            "test": self.test,
            "bias_type": self.bias_type,
            "d_raw": self.raw.effect_size,
            "p_raw": self.raw.p_value,
            "p_method_raw": self.raw.p_method,
            "d_calibrated": self.calibrated.effect_size,
            "p_calibrated": self.calibrated.p_value,
            "p_method_calibrated": self.calibrated.p_method,
            "p_holm_raw": self.raw.p_holm,
            "p_bh_raw": self.raw.p_bh,
            "p_holm_calibrated": self.calibrated.p_holm,
            "p_bh_calibrated": self.calibrated.p_bh,
            "calibration": self.calibrated.calibration,
            "change": self.change,
            "delta_d": self.delta_d,
            "large_shift": self.large_shift,
            "sign_reversal": self.sign_reversal,
        }
        if self.reference_se is not None:
            out["reference_se"] = self.reference_se
        out["magnitude_raw"] = cohen_magnitude(self.raw.effect_size)
        out["magnitude_calibrated"] = cohen_magnitude(self.calibrated.effect_size)
        out.update(self.stability_columns())
        out.update(self.across_corpora or {})
        return out


class _Counts(dict):
    """:attr:`Comparison.summary`: a dict, also callable (``summary()`` returns it) for code written when
    ``summary`` was a method."""

    def __call__(self) -> _Counts:
        return self


@dataclass(frozen=True)
class Comparison:
    """Raw vs calibrated results for a battery of tests on one model."""

    model: str
    calibration: str
    alpha: float
    rows: tuple[ComparisonRow, ...]
    calibrator_metadata: dict
    #: The model encodes words in corpus contexts (a template when it finds none): tables report how many.
    contexts: bool = False
    #: Where the run departs from the paper's protocol (:func:`isoeat.labels.protocol_departures`).
    departures: tuple[str, ...] = ()
    #: The corpus a contextual model read its contexts and reference from ("" for static vectors).
    corpus: str = ""
    #: The raw space's departures (it fits nothing: no reference, no ε); None: those of ``departures``.
    raw_departures: tuple[str, ...] | None = None

    @property
    def fallback_exceeded(self) -> bool:
        """More than :data:`~isoeat.labels.FALLBACK_WARN_SHARE` of a contextual model's stimulus words fell back."""
        return self.contexts and too_many_fallbacks(*fallback_counts([r.raw for r in self.rows])[:2])

    def records(self) -> list[dict[str, Any]]:
        """Tidy records: one per (test, calibration), the JSON/CSV output."""
        out = []
        for row in self.rows:
            for res in (row.raw, row.calibrated):
                rec = res.to_dict()
                rec["change"] = row.change
                rec["magnitude"] = cohen_magnitude(res.effect_size)
                if row.reference_se is not None:  # the calibrated d's reference-SE (the raw space has none)
                    cal = res is row.calibrated
                    rec["reference_se"] = row.reference_se if cal else None
                    rec["reference_size"] = self.calibrator_metadata.get("reference_size") if cal else None
                    rec["reference_se_precision"] = (self.calibrator_metadata.get("reference_se_precision")
                                                     if cal else None)
                stab = row.stability_columns()
                if stab:  # the raw call does not depend on the reference sample: no mark of its own
                    cal = res is row.calibrated
                    rec.update(call_holds=stab["call_holds"] if cal else None, class_holds=stab["class_holds"],
                               replicate_share=stab["replicate_share"] if cal else None,
                               replicates=stab["replicates"] if cal else None, firm=stab["firm"] if cal else None)
                if row.across_corpora:  # each space's own call; the class and the corpora for both
                    cal = res is row.calibrated
                    marks = row.across_corpora
                    rec.update(call_holds_corpora=marks["call_holds_corpora" if cal else "raw_call_holds_corpora"],
                               **{k: marks[k] for k in ("class_holds_corpora", "corpora_share", "corpora",
                                                        "corpora_left_out")})
                raw_side = self.raw_departures if res is row.raw else None
                rec["protocol"] = protocol_text(self.departures if raw_side is None else raw_side)
                if self.contexts:  # the corpus and whether too many words fell back: in every record
                    rec["corpus"] = self.corpus
                    rec["fallback_exceeded"] = self.fallback_exceeded
                out.append(rec)
        return out

    @property
    def summary(self) -> _Counts:
        """The counts of the change classes, of |Δd| > 0.5 (``large_shift``) and of sign reversals: a dict that
        prints as one (``print(comparison.summary)``); calling it (``summary()``, the earlier spelling) gives it."""
        counts = _Counts({c: 0 for c in CHANGE_CLASSES})
        for r in self.rows:
            counts[r.change] += 1
        counts["large_shift"] = sum(r.large_shift for r in self.rows)
        counts["sign_reversal"] = sum(r.sign_reversal for r in self.rows)
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "calibration": self.calibration,
            "alpha": self.alpha,
            "summary": dict(self.summary),
            "calibrator": self.calibrator_metadata,
            "protocol": protocol_text(self.departures),
            "rows": [r.to_dict() for r in self.rows],
        }

    def to_frame(self) -> Any:
        """One row per test, columns = the keys of each row's ``to_dict()`` (the ``rows`` of :meth:`to_dict`).

        A :class:`pandas.DataFrame` (pandas imported on first use; without it, a
        :class:`~isoeat.MissingDependencyError` naming ``pip install pandas``).
        """
        from ..stats.results import records_frame

        return records_frame([r.to_dict() for r in self.rows])


def _row(raw: WEATResult, cal: WEATResult, alpha: float, reference_se: float | None = None,
         replicate_d: Sequence[float] | None = None) -> ComparisonRow:
    from .stability import row_stability

    cols = compare_records(raw.to_dict(), cal.to_dict(), alpha)
    agree = row_stability(cal, replicate_d, alpha)
    return ComparisonRow(test=raw.test, bias_type=raw.bias_type, raw=raw, calibrated=cal, change=cols["change"],
                         delta_d=cols["delta_d"], large_shift=cols["large_shift"],
                         sign_reversal=cols["sign_reversal"], reference_se=reference_se,
                         replicates_same=None if agree is None else agree[0],
                         replicates=None if agree is None else agree[1])


def _with_adjusted(results: list[WEATResult]) -> list[WEATResult]:
    """Fill ``p_holm``/``p_bh`` across one family of results."""
    from dataclasses import replace

    ph, pb = adjust_family([r.p_value for r in results])
    return [replace(r, p_holm=float(a), p_bh=float(b)) for r, a, b in zip(results, ph, pb)]


#: :func:`isoeat.weat`'s own options that :func:`compare_calibration` passes on by name.
_WEAT_OPTIONS = ("ddof", "min_coverage", "allow_overlap")


@public
def compare_calibration(
    model: Any,
    tests: Sequence[Any] | None = None,
    *,
    calibration: Any = "zca",
    n_reference: int | str = 100_000,
    alpha: float = 0.05,
    rng: Any = None,
    progress: Any = None,
    reference: ReferenceOptions | None = None,
    permutation: PermutationOptions | None = None,
    interval: IntervalOptions | None = None,
    stability: int | str = "auto",
    **options: Any,
) -> Comparison:
    """The paper's three-stage pipeline on a battery of tests, raw and calibrated.

    Stage 1 fits a calibrator (``calibration``, default ZCA with ε = 1e-3) on
    ``n_reference`` reference vectors of the model, unless ``calibration`` is
    already fitted; stage 2 transforms the test words; stage 3 computes
    d and p in both spaces. The cells are the engine's
    (:class:`~isoeat.experiments.engine.Engine`): the same numbers as
    ``isoeat run`` and :func:`isoeat.weat` for the same seed and options.

    Parameters
    ----------
    model : Encoder
    tests : sequence of AssociationTest, ids or test files, optional
        Default: the ten built-in WEATs. ``"W1,W6"`` and a file's path (all its tests) work too.
    calibration : str, fitted calibrator or mapping, default "zca"
        A registered calibration name (fitted here on ``n_reference``
        reference vectors of the model), ``{name: params}`` (that calibration
        with those parameters, e.g. ``{"zca": {"eps": 1e-2}}``), or an already
        fitted calibrator (``{label: calibrator}`` labels it) — the same meaning
        as in :func:`isoeat.weat`.
    n_reference : int or "auto", default 100_000
        Reference size of the fit. ``"auto"`` encodes shards of
        ``reference_max / 20`` until every calibrated d has reference-SE
        < ``reference_tolerance`` and no change class flipped over the last
        two shards, capped at ``reference_max`` (see
        :mod:`isoeat.experiments.reference` and docs/reference-size.md); the
        size used is ``calibrator_metadata["reference_size"]``.
    alpha : float, default 0.05
        Level of the change classes.
    rng : None or int, default None
        The root seed (None: a fresh one, drawn from the operating system's
        entropy and recorded in each result's ``seed``, so ``rng=seed``
        replays the comparison; ``isoeat run`` passes ``--seed``, default 0). Each WEAT draws from its own named
        stream of it, ``("weat", TEST)`` (raw and calibrated alike) (:func:`isoeat._random.derive_seed`), as in
        ``isoeat run`` and :func:`isoeat.weat`: the same test gives the same
        numbers whatever else is measured. Recorded in each result.
    progress : None, bool or callable
        Progress of the cells: None (a bar on a terminal, log lines otherwise), True/False, or a callable
        ``progress(done, total, label)`` called after each result (:data:`isoeat._progress.PROGRESS_DOC`).
    reference : ReferenceOptions, optional
        The reference-SE options (:class:`~isoeat.experiments.reference.ReferenceOptions`),
        also by name: ``reference_shards`` (split a fixed-size reference into
        this many shards and report each calibrated d's delete-one-shard
        jackknife SE, ``row.reference_se``; a static model's shards follow the
        stream ``("reference-shards",)`` of the root seed; default: no SE for a
        fixed size, ``"auto"`` always reports it), ``reference_tolerance``, ``reference_max``.
    permutation, interval : optional
        How p is computed and which interval on d (:func:`isoeat.weat`).
    stability : int, "auto" or "off", default "auto"
        The stability marks (``row.call_holds``, ``row.class_holds``): R redraws of the reference sample
        (the group bootstrap of its shards, :mod:`isoeat.experiments.stability`), a call holding when at least
        95% of them agree (:func:`isoeat.labels.call_holds`). ``"auto"``: R = 100 where it is cheap — a static
        model, or shards already made (``reference_shards``, ``n_reference="auto"``) — for a calibration
        fitted here from mergeable statistics (zca); none otherwise. An int R: always (a contextual model's
        reference is then split into shards, ``reference_shards`` or 100, with its reference-SE). ``"off"``: none.
    **options
        The fields of ``reference``, ``permutation`` and ``interval`` by name
        (``n_permutations=``, ``alternative=``, ``bootstrap=``, ``ci_method=``,
        ``sequential_alpha=``, ...), and :func:`isoeat.weat`'s ``ddof``,
        ``min_coverage``, ``allow_overlap``, ``force``. Older spellings:
        ``calibrator=`` (deprecated: ``calibration=``) and ``calibration_params=``
        (the parameters of a named calibration, e.g. ``{"eps": 1e-3}``; the same
        as ``calibration={name: params}``).

    Notes
    -----
    Holm and Benjamini–Hochberg adjusted p-values are computed across the
    battery, separately within the raw and within the calibrated space (each
    is one family of tests), and stored in ``p_holm``/``p_bh`` next to the
    unadjusted ``p_value``. Change classes use the unadjusted p, as the paper.
    """
    from ..wordsets import as_tests
    from .engine import Engine

    options = dict(options)
    calibration_params = options.pop("calibration_params", None)
    ref_o = ReferenceOptions.take(options, reference)
    force = options.pop("force", False)
    weat_opts = {k: options.pop(k) for k in _WEAT_OPTIONS if k in options}
    permutation, interval, _ = gather(options, where="compare_calibration", permutation=permutation,
                                      interval=interval, others=(*ReferenceOptions.FLAT, *_WEAT_OPTIONS, "force"))
    require_encoder(model, "compare_calibration")
    if isinstance(tests, (list, tuple)) and not tests:
        raise ConfigError("no tests given")
    tests = as_tests(tests)
    check_alpha(alpha)
    calibrator = None
    if isinstance(calibration, dict) and len(calibration) == 1 and isinstance(next(iter(calibration.values())),
                                                                              (dict, type(None))):
        if calibration_params is not None:
            raise ConfigError("compare_calibration: give the parameters once, in calibration={name: params} or "
                              "as calibration_params=")
        (calibration, calibration_params), = calibration.items()
    elif not isinstance(calibration, str):
        calibrator, _ = resolve_calibration(calibration, model, force=force)
        if calibrator is None:
            calibration = "none"
    reference_se: dict[str, float] = {}
    stability_replicates(stability, model, calibrator, calibration, n_reference == "auto" or
                         ref_o.shards is not None)  # checked before anything is fitted
    root = root_seed(rng)  # every WEAT draws from its own named stream of the root seed (isoeat._random)
    engine = Engine(model, seed=root, force=force,
                    weat_kwargs=dict(permutation=permutation, interval=interval, **weat_opts))
    if calibrator is None:
        if calibration == "none":
            raise ConfigError("calibration='none' compares the raw space with itself; give a calibration such as 'zca'")
        calibrator, reference_se = _fit(engine, tests, calibration, calibration_params, n_reference, ref_o,
                                        stability, alpha, weat_opts, permutation)
    pairs: list[tuple[WEATResult, WEATResult]] = []
    total = 2 * len(tests)
    progress = progress_callback(progress, "isoeat compare")
    for i, test in enumerate(tests):  # the cells of the plan: raw and calibrated WEAT of each test
        raw = engine.weat(test)
        if progress:
            progress(2 * i + 1, total, f"{test.id} raw")
        cal = engine.weat(test, calibrator)
        if progress:
            progress(2 * i + 2, total, f"{test.id} {cal.calibration}")
        pairs.append((raw, cal))
    raws = _with_adjusted([p[0] for p in pairs])
    cals = _with_adjusted([p[1] for p in pairs])
    meta = dict(getattr(calibrator, "metadata_", {}) or {})
    redraws = meta.get("reference_replicate_d") or {}
    rows = [_row(r, c, alpha, reference_se.get(r.test), redraws.get(r.test)) for r, c in zip(raws, cals)]
    return Comparison(
        model=name_of(model),
        calibration=getattr(calibrator, "name", "calibrated"),
        alpha=alpha,
        rows=tuple(rows),
        calibrator_metadata=meta,
        contexts=isinstance(model, ContextEncoder),
        **_departures(meta, permutation, rows, model),
        corpus=corpus_name_of(model) if isinstance(model, ContextEncoder) else "",
    )


def _fit(engine: Any, tests: Sequence[Any], calibration: str, params: dict | None, n_reference: int | str,
         ref_o: ReferenceOptions, stability: Any, alpha: float, weat_opts: dict, permutation: Any
         ) -> tuple[Any, dict[str, float]]:
    """:func:`compare_calibration`'s calibrator, by the one calibrator route (:mod:`isoeat.experiments.route`)."""
    from ..calibration.sample import ReferenceSpec
    from .route import FitOptions, Route, fit_route

    p = permutation
    route = Route(size=n_reference, reference=ref_o, stability=stability)
    options = FitOptions(alpha=alpha, ddof=weat_opts.get("ddof", 1), min_coverage=weat_opts.get("min_coverage", 0.8),
                         p_kwargs={"alternative": p.alternative, "method": p.method,
                                   "n_permutations": p.n_permutations})
    spec = None if n_reference == "auto" else ReferenceSpec(int(n_reference))
    return fit_route(engine, tests, calibration, params, route, spec, options)


def space_departures(meta: dict | None, results: Sequence[Any], n_permutations: int | None,
                     model: Any = None) -> tuple[str, ...]:
    """Where one space's results depart from the paper's protocol: its calibrator's reference (the size the fit
    really used, :func:`isoeat.labels.reference_used`) and ε (``meta``: its metadata; None: the raw space, which
    fits nothing), its permutations where a p was sampled, the contexts per word of a contextual ``model``."""
    meta = meta if isinstance(meta, dict) else None
    asked = meta.get("reference_asked") if meta is not None else None
    sampled = any(getattr(r, "p_method", None) == "monte-carlo" for r in results)
    contexts = contexts_per_word_of(model)
    return protocol_departures(
        reference_size=reference_used(meta) if meta is not None else None,
        reference_asked=asked if isinstance(asked, int) else None,
        eps=meta.get("eps") if meta is not None else None,
        eps_relative=meta is not None and meta.get("eps_mode") == "relative",
        permutations=n_permutations, sampled=sampled,
        contexts_per_word=contexts if isinstance(contexts, int) else None)


def _departures(meta: dict, permutation: Any, rows: Sequence[ComparisonRow], model: Any = None) -> dict[str, Any]:
    """Where a comparison departs from the paper's protocol (``departures``: its calibrator's reference and ε, its
    permutations; ``raw_departures``: the raw space's, which fits nothing)."""
    n = permutation.n_permutations
    return {"departures": space_departures(meta, [x for r in rows for x in (r.raw, r.calibrated)], n, model),
            "raw_departures": space_departures(None, [r.raw for r in rows], n, model)}
