"""Reference uncertainty and an adaptive reference size.

The reference sample a calibrator is fitted on is split into ``K`` shards.
Each shard's count, mean and co-moment are kept (a
:class:`~isoeat.calibration.moments.CovarianceAccumulator`, mergeable), so the
full fit and the ``K`` delete-one-shard fits come from the same vectors: no
extra forward passes. The **reference-SE** of a calibrated effect size is the
delete-a-group jackknife over the shards,

.. math::

    \\mathrm{SE}_{\\mathrm{ref}}(d) = \\sqrt{\\frac{K-1}{K}\\sum_{i=1}^{K}\\bigl(d_{(i)}-\\bar d_{(\\cdot)}\\bigr)^2},

where :math:`d_{(i)}` is d on the test words whitened by the calibrator
refitted (``from_statistics``) on the merged statistics of every shard but
``i``, and :math:`\\bar d_{(\\cdot)}` their mean (Efron & Tibshirani 1993,
§11; grouped jackknife). It estimates how much d would move were the
reference sample drawn again at the same size.

``size="auto"`` encodes shards in order (``max_size / 20`` units each) and
stops at the first shard, from the fifth on, after which every calibrated d
has reference-SE < ``tolerance`` and no change class (raw vs calibrated p at
``alpha``) flipped over the last two shards; else it stops at ``max_size``.

What a shard is:

* static vectors: the reference is the top-``N`` vocabulary rows (the most
  frequent words). Shards are a **seeded random order** of those rows
  (``seed``), not consecutive frequency blocks: the SE is then that of a
  random sample of frequent words, and in ``auto`` mode the words used are a
  random sample of the top ``max_size`` words, whose d approaches the
  fixed-size (top ``max_size``) d within its SE. Consecutive blocks would
  mix frequency bands, and the jackknife would measure the band, not the sample.
* contextual encoders: the reference sentences are already a seeded random
  sample of the corpus; shards are consecutive groups of its encoding chunks
  (``chunk_size`` sentences each), and the size is counted in sentences.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .._errors import ConfigError, IsoeatError
from .._resources import one_blas_thread as _one_blas_thread
from .._types import ChunkedReference, dim_of, streams_reference
from .._validate import check_int, check_real
from ..calibration import make_calibrator
from ..calibration.registry import calibrator_metadata
from ._fitoptions import DEFAULT_MEMORY, DEFAULT_REFIT_SECONDS, FitOptions, ReferenceFit
from ._shards import check_chunks, chunked_shards, reference_chunks  # noqa: F401 - re-exported

__all__ = [
    "DEFAULT_SHARDS", "DEFAULT_TOLERANCE", "DEFAULT_MAX_SIZE", "AUTO_SHARDS", "MIN_AUTO_SHARDS", "STABLE_SHARDS",
    "DEFAULT_MEMORY", "ReferenceOptions", "ReferenceFit", "jackknife_se", "leave_one_out", "calibrated_d",
    "fit_reference", "memory_needed", "se_precision", "chunked_shards", "reference_chunks",
    "finite_population_factor", "DEFAULT_REPLICATES",
    "MAX_REPLICATES", "MIN_REDRAW_SHARDS",
    "check_replicates", "redraw_weights", "redraw_statistics", "redraw_d", "redraw_metadata",
]

#: Shards of the reference-SE when none are named: the fewest measured whose SE is itself within +-10%
#: (CV 0.061-0.080 over W1-W10 on glove-6b-50d at K = 100, 0.089-0.112 at K = 50; benchmarks/reference_size.py
#: --precision, docs/reference-size.md).
DEFAULT_SHARDS = 100
DEFAULT_TOLERANCE = 0.02
DEFAULT_MAX_SIZE = 100_000
#: auto: the cap is encoded in this many shards at most
AUTO_SHARDS = 20
#: auto: never stop before this many shards (a jackknife over fewer is too noisy)
MIN_AUTO_SHARDS = 5
#: auto: no change class may flip over this many last shards
STABLE_SHARDS = 2
#: the most shards: each is one more refit, and the jackknife SE's own relative error, about
#: 1/sqrt(2(K-1)), is 5% at 200 (more shards buy little precision at a cost growing as K^2)
MAX_SHARDS = 200
#: the cost model of :func:`refit_seconds`, measured on a loaded 2-core machine (benchmarks/reference_size.py
#: --shards prints it against measured times): seconds per element of a merged d x d co-moment, per refit,
#: per d^3 of an eigendecomposition
MERGE_S, REFIT_S, EIG_S = 15e-9, 0.03, 8e-9


def refit_seconds(dim: int, shards: int) -> float:
    r"""Estimated seconds of the ``K`` delete-one-shard refits of a ``d``-dimensional calibrator.

    Each refit merges the other :math:`K-1` shards' statistics (:math:`d^2`
    each) and eigendecomposes the merged covariance (:math:`d^3`):

    .. math:: t \approx K(K-1)\,c_m d^2 + K\,(c_0 + c_e d^3)

    with the constants :data:`MERGE_S`, :data:`REFIT_S`, :data:`EIG_S`.

    Examples
    --------
    >>> round(refit_seconds(50, 2000))  # the 2,000 shards of issue 31 (136-211 s measured)
    212
    """
    return shards * (shards - 1) * MERGE_S * dim * dim + shards * (REFIT_S + EIG_S * dim ** 3)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min" if seconds < 7200 else \
        f"{seconds / 3600:.1f} h"


def shards_requirement() -> str:
    """Why ``--reference-shards`` / ``reference_shards`` goes from 2 to :data:`MAX_SHARDS`."""
    return (f"a jackknife leaves one shard out; each shard is one more refit, and at {MAX_SHARDS} shards the SE's "
            f"own relative error is already about {100 / math.sqrt(2 * (MAX_SHARDS - 1)):.0f}%")


def check_auto_max(max_size: Any, name: str = "reference maximum size") -> int:
    """The cap of ``size="auto"`` (``--reference-max``): it is encoded in :data:`AUTO_SHARDS` shards of at least
    2 rows each, so at least ``2 * AUTO_SHARDS``; one line naming ``name`` otherwise."""
    if isinstance(max_size, bool) or not isinstance(max_size, (int, np.integer)) or max_size < 2 * AUTO_SHARDS:
        raise ConfigError(f"{name} must be a whole number >= {2 * AUTO_SHARDS}, got {max_size!r} (--reference-size "
                          f"auto encodes it in up to {AUTO_SHARDS} shards of at least 2 rows each)")
    return int(max_size)


def check_shards(shards: Any, dim: int | None, *, rows: int | None = None, name: str = "reference shards",
                 max_seconds: float = DEFAULT_REFIT_SECONDS, chunks: tuple[int, int] | None = None,
                 size_name: str = "reference size", size: Any = None) -> int:
    """``shards`` checked before anything is encoded: 2 to :data:`MAX_SHARDS`, at least 2 of the ``rows``
    reference rows each, exactly ``shards`` of a contextual reference of ``chunks`` = ``(sentences, chunk size)``
    (:func:`reference_chunks`, :func:`chunked_shards`; ``size``: the size asked for, named as ``size_name``), and
    refits estimated (:func:`refit_seconds`) within ``max_seconds``.

    Raises
    ------
    ConfigError
        One line naming ``name``, the value, and the largest number of shards allowed.
    """
    if isinstance(shards, bool) or not isinstance(shards, (int, np.integer)) or not 2 <= shards <= MAX_SHARDS:
        raise ConfigError(f"{name} must be from 2 to {MAX_SHARDS}, got {shards!r} ({shards_requirement()})")
    shards = int(shards)
    if rows is not None and shards > rows // 2:
        raise ConfigError(f"{name} {shards}: the {rows} reference rows give shards of fewer than 2 rows; use at "
                          f"most {rows // 2} shards, or a larger reference")
    if chunks is not None:
        check_chunks(shards, chunks, name, size_name, size, MAX_SHARDS)
    if dim is not None:
        need = refit_seconds(int(dim), shards)
        if need > max_seconds:
            k = max((j for j in range(2, shards) if refit_seconds(int(dim), j) <= max_seconds), default=None)
            way = f"use at most {k} shards" if k else "use a smaller calibrator dimension"
            raise ConfigError(
                f"{name} {shards}: {shards} delete-one-shard refits of a {dim}x{dim} calibrator take about "
                f"{_duration(need)} on a 2-core machine (estimated: {shards * (shards - 1):,} merges, {shards} "
                f"eigendecompositions), over the budget of {_duration(max_seconds)}; {way}")
    return shards


@dataclass(frozen=True)
class ReferenceOptions:
    """How a fixed-size or ``auto`` reference sample is split and when ``auto`` stops (:func:`fit_reference`).

    ``shards``: a fixed size split into this many shards for the reference-SE
    (None: no SE); ``tolerance`` and ``max_size``: ``auto``'s stopping rule and cap.
    """

    shards: int | None = None
    tolerance: float = DEFAULT_TOLERANCE
    max_size: int = DEFAULT_MAX_SIZE

    #: their names as keywords (``isoeat.compare_calibration``) and options (``isoeat run --reference-*``)
    FLAT: ClassVar[dict[str, str]] = {"reference_shards": "shards", "reference_tolerance": "tolerance",
                                      "reference_max": "max_size"}

    @classmethod
    def take(cls, options: dict[str, Any], base: ReferenceOptions | None = None) -> ReferenceOptions:
        """``base`` (default: the defaults) updated with the flat keywords in ``options``, which are removed from it."""
        from dataclasses import replace

        if base is not None and not isinstance(base, cls):
            raise ConfigError(f"reference must be a ReferenceOptions, got {type(base).__name__}")
        mine = {field: options.pop(flat) for flat, field in cls.FLAT.items() if flat in options}
        return replace(base or cls(), **mine)


#: How much more one reference-SE varies than a variance on K-1 degrees of freedom would: the measured CV of
#: the SE over 1/sqrt(2(K-1)) was at most 1.22 over W1-W10 and K = 5, 10, 20, 50, 100 (glove-6b-50d, 100
#: reference samples of 100,000 rows; benchmarks/reference_size.py --precision, 2026-12-04), rounded up.
SE_SPREAD = 1.25


def se_precision(shards: int) -> float:
    r"""The relative precision of one reference-SE from ``shards`` shards: its coefficient of variation.

    A delete-a-group jackknife variance over :math:`K` groups has about
    :math:`K-1` degrees of freedom, so one SE varies around the true SD with
    CV :math:`\approx 1/\sqrt{2(K-1)}`; the statistic's own tails widen it
    by up to :data:`SE_SPREAD` (measured). Printed and recorded as
    ``reference_se_precision``: an SE of 0.020 with precision 0.10 is itself
    uncertain by about +-0.002 (one SD).

    Examples
    --------
    >>> round(se_precision(2) / SE_SPREAD, 4)
    0.7071
    """
    k = check_int("reference shards", shards, lo=2)
    return SE_SPREAD / math.sqrt(2.0 * (k - 1))


def finite_population_factor(used: int, population: int) -> float:
    r""":math:`\sqrt{1 - n/M}`: the SD of d over subsets of ``used`` of ``population`` rows drawn without
    replacement, relative to the (with-replacement) jackknife SE.

    ``--reference-size auto`` on a static model fits on the first shards of a
    seeded order of the top ``max_size`` rows: a subset of a finite
    population, whose d varies around the full (top ``max_size``) d by this
    factor times the SE of an independent sample (Cochran 1977, §2.6).

    Examples
    --------
    >>> round(finite_population_factor(60_000, 100_000), 4)
    0.6325
    >>> finite_population_factor(100_000, 100_000)
    0.0
    """
    return math.sqrt(max(0.0, 1.0 - used / population)) if population > 0 else 1.0


def jackknife_se(values: Sequence[float]) -> float:
    """Delete-one-group jackknife SE of the ``K`` leave-one-out estimates (NaN for K < 2).

    Examples
    --------
    >>> round(jackknife_se([1.0, 2.0, 3.0]), 6)  # sqrt(2/3 * 2)
    1.154701
    """
    v = np.asarray(values, dtype=np.float64)
    k = v.size
    if k < 2:
        return math.nan
    return float(np.sqrt((k - 1) / k * np.sum((v - v.mean()) ** 2)))


def memory_needed(dim: int, shards: int) -> int:
    """Bytes of the shard statistics plus the refits alive at once (co-moments, covariance, eigenvectors, W)."""
    return int((shards + 6) * dim * dim * 8 + shards * dim * 8)


def _check_memory(dim: int, shards: int, budget: int) -> None:
    need = memory_needed(dim, shards)
    if need > budget:
        raise ConfigError(
            f"reference-SE: {shards} shards of {dim}x{dim} statistics need {need / 2**20:.0f} MiB, over the "
            f"budget of {budget / 2**20:.0f} MiB; use fewer shards or a larger reference memory budget")


def leave_one_out(shards: Sequence[Any]) -> Iterator[Any]:
    """For each shard ``i``, the merged statistics of every other shard (the inputs are not changed)."""
    from ..calibration.moments import CovarianceAccumulator

    for i in range(len(shards)):
        yield CovarianceAccumulator.merge_all(
            [CovarianceAccumulator.from_arrays(s.to_arrays()) for j, s in enumerate(shards) if j != i])


def _merged(shards: Sequence[Any]) -> Any:
    from ..calibration.moments import CovarianceAccumulator

    return CovarianceAccumulator.merge_all([CovarianceAccumulator.from_arrays(s.to_arrays()) for s in shards])


def calibrated_d(vectors: dict[str, np.ndarray], calibrator: Any, ddof: int = 1) -> float:
    """d of one test from its raw vectors (roles X, Y, A, B), transformed by ``calibrator``."""
    from ..stats.bootstrap import effect_size
    from ..stats.weat import association_scores

    t = {role: calibrator.transform(v) for role, v in vectors.items()}
    return effect_size(association_scores(t["X"], t["A"], t["B"]), association_scores(t["Y"], t["A"], t["B"]),
                       ddof)


def _shard_stream(model: Any, n: int, k: int, reference_kwargs: dict, seed: Any
                  ) -> tuple[Iterator[tuple[Any, int]], str, str, int | None]:
    """``(iterator of (shard statistics, units so far), description, unit, population)``, encoding lazily.

    Shards of ceil(m / k) units, m the reference size available (at most ``n``: a small vocabulary or
    corpus gives fewer rows or sentences than asked for). ``population``: m for a static model (whose
    shards are drawn from those m rows without replacement), ``None`` for a contextual one (a sample of a corpus).
    """
    from ..calibration.moments import CovarianceAccumulator
    from ..calibration.sample import reference_sample

    if not streams_reference(model):
        vecs, desc = reference_sample(model, shuffled(n, reference_kwargs, seed))
        shard_size = max(1, -(-len(vecs) // k))

        def static() -> Iterator[tuple[Any, int]]:
            for start in range(0, len(vecs), shard_size):
                yield CovarianceAccumulator().update(vecs[start:start + shard_size]), min(start + shard_size, len(vecs))

        return static(), desc, "words", len(vecs)
    batches, desc = model.reference_batches(n, **reference_kwargs)
    total, chunk = None, None
    if isinstance(model, ChunkedReference) and model.chunk_size is not None:
        chunk = model.chunk_size
        total = int(model.reference_metadata(n, **reference_kwargs)["n_sentences"])
    shard_size = max(1, -(-(n if total is None else total) // k))

    def batched() -> Iterator[tuple[Any, int]]:
        acc, done, n_batches = CovarianceAccumulator(), 0, 0
        try:
            for b in batches:
                n_batches += 1
                b = np.asarray(b, dtype=np.float64)
                acc.update(b)
                before = done
                done = min(n_batches * int(chunk or 0), total) if total is not None else done + b.shape[0]
                if done // shard_size > before // shard_size and acc.n >= 2:
                    yield acc, done
                    acc = CovarianceAccumulator()
            if acc.n:
                yield acc, done
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()

    return batched(), desc, "sentences" if total is not None else "vectors", None


def shuffled(n: int, reference_kwargs: dict, seed: int, size: int | None = None) -> Any:
    """The static reference in shards: the top ``n`` rows in the random order of the stream ``("reference-shards",)``.

    Its first ``size`` rows (default all) are the sample a fit on that many
    shards' worth of rows saw: ``auto`` records that spec, and the isotropy
    check samples from it.
    """
    from ..calibration.sample import ReferenceSpec

    return ReferenceSpec(size=n if size is None else size, text=reference_kwargs.get("text"), draw="subset", pool=n,
                         seed=seed, stream=("reference-shards",))


def _test_vectors(model: Any, tests: Sequence[Any], min_coverage: float) -> dict[str, dict[str, np.ndarray]]:
    """Raw vectors per test (looked up once); a test the model cannot measure is left out (its cell says why)."""
    from ..stats.weat import _lookup_sets

    out = {}
    for t in tests:
        try:
            vecs, _, _ = _lookup_sets(model, t, min_coverage)
        except IsoeatError:
            continue
        out[t.id] = vecs
    return out


def _p_value(vectors: dict[str, np.ndarray], calibrator: Any, p_kwargs: dict, seed: int, test: str) -> float:
    """The p of ``test`` in one space, drawn from the WEAT stream ``("weat", TEST)`` of ``seed`` (as its cells)."""
    from .._random import derive_seed
    from ..stats.weat import weat_from_vectors

    v = vectors if calibrator is None else {r: calibrator.transform(x) for r, x in vectors.items()}
    return weat_from_vectors(v["X"], v["Y"], v["A"], v["B"], rng=derive_seed(seed, "weat", test), **p_kwargs).p_value


def fit_reference(
    model: Any,
    tests: Sequence[Any],
    *,
    calibration: str = "zca",
    params: dict[str, Any] | None = None,
    size: int | str = DEFAULT_MAX_SIZE,
    reference: ReferenceOptions | None = None,
    fit: FitOptions | None = None,
    seed: int = 0,
    replicates: int = 0,
    **options: Any,
) -> ReferenceFit:
    """Fit ``calibration`` on a sharded reference sample and report the reference-SE of each calibrated d.

    Parameters
    ----------
    model : Encoder
        A static model (``reference_vectors``) or a contextual one (``reference_batches``).
    tests : sequence of AssociationTest
    size : int or "auto"
        ``N``: the reference of the fixed-size fit, split into ``reference.shards``
        shards (default :data:`DEFAULT_SHARDS`). ``"auto"``: shards of ``max_size / 20`` encoded in order until
        every reference-SE < ``tolerance`` and no change class flipped over
        the last two shards (at least 5 shards), or ``max_size`` is reached.
    calibration, params
        A calibration that can be fitted from merged statistics
        (``from_statistics``: ``"zca"``) and its parameters.
    reference : ReferenceOptions, optional
        ``shards``, and ``auto``'s ``tolerance`` and ``max_size`` (:class:`ReferenceOptions`).
    fit : FitOptions, optional
        The WEAT options of ``auto``'s change classes and of the redraws (``alpha``, ``ddof``,
        ``min_coverage``, ``p_kwargs``, ``classify``: :func:`isoeat.experiments.compare.classify_change`, which
        :func:`~isoeat.experiments.compare.compare_calibration` and ``isoeat run`` pass), the reference's source
        (``reference_kwargs``), the budgets ``memory`` (bytes of the shard statistics and refits) and
        ``max_seconds`` (the refits' estimated time, :func:`refit_seconds`, checked with the number of shards by
        :func:`check_shards`), all checked before anything is encoded, and ``log``
        (:class:`~isoeat.experiments._fitoptions.FitOptions`).
    seed : int
        The run's root seed: a static model's rows are shuffled by its stream ``("reference-shards",)``
        (:func:`shuffled`), and ``auto``'s p-values come from the tests' WEAT streams.
    replicates : int
        Redraws of the reference sample for the stability marks (the group bootstrap of the shards used,
        :func:`redraw_d`); 0: none; none either when fewer than :data:`MIN_REDRAW_SHARDS` shards were used
        (``auto`` stopping early). Recorded in the calibrator's metadata.
    **options
        The fields of ``reference`` and ``fit`` by name (``shards=``, ``tolerance=``, ``max_size=``, ``alpha=``,
        ``ddof=``, ``p_kwargs=``, ``classify=``, ``reference_kwargs=``, ``memory=``, ``max_seconds=``, ...).
    """
    t0 = time.perf_counter()
    ref = replace(reference or ReferenceOptions(), **{k: options.pop(k) for k in ("shards", "tolerance", "max_size")
                                                      if k in options})
    ref = ref if ref.shards is not None else replace(ref, shards=DEFAULT_SHARDS)
    o = FitOptions.take(options, fit)
    auto = size == "auto"
    plan = _shard_plan(model, size, ref, o, auto)
    cal = make_calibrator(calibration, **(params or {}))
    if not hasattr(type(cal), "from_statistics"):
        raise ConfigError(f"reference-SE and --reference-size auto need a calibration fitted from mergeable "
                          f"statistics (zca); {calibration!r} is not")
    n, k_max = plan
    dim = dim_of(model)
    if dim is not None:
        _check_memory(int(dim), k_max, o.memory)
    vectors = _test_vectors(model, tests, o.min_coverage)
    p_kwargs = {"ddof": o.ddof, **o.p_kwargs}
    raw_p = {t: _p_value(v, None, p_kwargs, seed, t) for t, v in vectors.items()} if auto else {}
    stream, desc, unit, population = _shard_stream(model, n, k_max, dict(o.reference_kwargs), seed)
    rule = _AutoRule(cal=cal, vectors=vectors, raw_p=raw_p, p_kwargs=p_kwargs, seed=seed, fit=o,
                     tolerance=float(ref.tolerance), population=population, unit=unit)
    walk = _walk(stream, rule, auto)
    if len(walk.parts) < 2:
        raise ConfigError(f"reference-SE: the reference sample gave {len(walk.parts)} shard(s); need at least 2")
    if not auto:
        walk.d, walk.se = _evaluate(walk.parts, cal, vectors, o.ddof)
    fitted = type(cal).from_statistics(_merged(walk.parts), **cal.get_params())
    used = walk.used
    if auto:  # the header states the sample the fit used, not the pool it was cut from
        desc = _used_description(desc, unit, shuffled(n, dict(o.reference_kwargs), seed), used, population) \
            + f"; --reference-size auto: the first {used} {unit} ({walk.stopped})"
    fitted.metadata_ = calibrator_metadata(fitted, calibration, model, desc, int(fitted.n_samples_seen_),
                                           int(fitted.n_features_in_))
    result = ReferenceFit(calibrator=fitted, reference_se=walk.se, d=walk.d, size=int(used),
                          mode="auto" if auto else "fixed", shards=len(walk.parts), max_size=n,
                          tolerance=float(ref.tolerance), stopped=walk.stopped, unit=unit,
                          seconds=time.perf_counter() - t0, steps=tuple(walk.steps),
                          se_precision=se_precision(len(walk.parts)),
                          se_factor=finite_population_factor(int(used), population) if auto and population else 1.0,
                          population=population if auto else None)
    fitted.metadata_.update(result.metadata())
    if replicates:  # the stability marks' redraws of the same shards (too few shards: a note saying so)
        fitted.metadata_.update(_redraws(walk.parts, cal, vectors, check_replicates(replicates), seed, o.ddof))
    spec = _used_spec(unit, n, dict(o.reference_kwargs), seed, int(used))
    if spec is not None:
        fitted.metadata_["reference_spec"] = spec
    return result


def _shard_plan(model: Any, size: Any, ref: ReferenceOptions, o: FitOptions, auto: bool) -> tuple[int, int]:
    """The options checked before anything is encoded; ``(rows or sentences to encode at most, shards at most)``."""
    if not auto:
        size = check_int("reference size", size, lo=2)
    max_size = check_auto_max(ref.max_size) if auto else check_int("reference maximum size", ref.max_size, lo=2)
    check_real("reference tolerance", ref.tolerance, lo=0.0, lo_open=True)
    static = not streams_reference(model)
    check_shards(ref.shards, None, name="reference shards")  # a bad value, before the corpus is read
    chunks = None if auto or static else reference_chunks(model, int(size), o.reference_kwargs)
    shards = check_shards(ref.shards, None if auto else dim_of(model),
                          rows=int(size) if static and not auto else None, name="reference shards",
                          max_seconds=o.max_seconds, chunks=chunks, size=size)
    if auto and o.classify is None:
        raise ConfigError("reference size 'auto' needs classify= (isoeat.experiments.compare.classify_change)")
    return (max_size, AUTO_SHARDS) if auto else (int(size), shards)


def _used_spec(unit: str, n: int, kw: dict, seed: int, used: int) -> Any:
    """The sample the fit saw, for the isotropy check (a static model's first ``used`` shuffled rows; a contextual
    encoder's first ``used`` reference sentences, which are its sample of that size)."""
    from ..calibration.sample import ReferenceSpec

    if unit == "words":
        return shuffled(n, kw, seed, size=used).key()
    return ReferenceSpec(size=used, text=kw.get("text")).key() if unit == "sentences" else None


@dataclass
class _AutoRule:
    """What ``auto``'s stopping rule reads at each shard: the calibration, the tests' vectors and raw p, the
    p options and seed, the fit options, the tolerance, and a static reference's population and unit."""

    cal: Any
    vectors: dict
    raw_p: dict
    p_kwargs: dict
    seed: int
    fit: FitOptions
    tolerance: float
    population: int | None
    unit: str
    classes_at: dict[int, dict[str, str]] = field(default_factory=dict)  # change classes after k shards

    def classes(self, parts: list, k: int) -> dict[str, str]:
        if k not in self.classes_at:
            full = type(self.cal).from_statistics(_merged(parts[:k]), **self.cal.get_params())
            classify = self.fit.classify
            assert classify is not None  # _shard_plan: auto needs it
            self.classes_at[k] = {t: classify(self.raw_p[t], _p_value(v, full, self.p_kwargs, self.seed, t),
                                              self.fit.alpha) for t, v in self.vectors.items()}
        return self.classes_at[k]


@dataclass
class _Walk:
    """The shards encoded: their statistics, ``auto``'s steps, the last d and SE, why it stopped, the units used."""

    parts: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    se: dict = field(default_factory=dict)
    d: dict = field(default_factory=dict)
    stopped: str = "size"
    used: int = 0


def _walk(stream: Any, rule: _AutoRule, auto: bool) -> _Walk:
    """Encode the shards in order; ``auto``: stop when the SEs are below the tolerance and no class flipped."""
    w = _Walk()
    try:
        for acc, w.used in stream:
            w.parts.append(acc)
            if not auto or len(w.parts) < 2:
                continue
            w.d, se = _evaluate(w.parts, rule.cal, rule.vectors, rule.fit.ddof)
            w.se = _for_the_sample(se, w.used, rule.population)
            k = len(w.parts)
            w.steps.append({"size": w.used, "shards": k, "max_se": max(w.se.values(), default=math.nan)})
            if rule.fit.log:
                rule.fit.log(f"reference auto: {w.used} {rule.unit}, {k} shards, max reference-SE "
                             f"{w.steps[-1]['max_se']:.4f}")
            # the stopping rule: SE first (cheap), then no class flip over the last STABLE_SHARDS shards
            # (the whole population of a static model is the cap, not a stop: its corrected SE is 0 there)
            if k >= MIN_AUTO_SHARDS and w.steps[-1]["max_se"] < rule.tolerance and w.used != rule.population:
                for step in w.steps[-(STABLE_SHARDS + 1):]:
                    step.setdefault("classes", rule.classes(w.parts, step["shards"]))
                if _stable(w.steps, rule.tolerance):
                    w.stopped = "stable"
                    break
        else:
            w.stopped = "cap" if auto else "size"
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    return w


#: Redraws of the reference sample behind each mark (the rule's 95% is then 95 of 100).
DEFAULT_REPLICATES = 100
#: The fewest shards the redraws resample: a bootstrap of fewer groups is too coarse a picture of the sampling
#: distribution (``--reference-size auto`` stopping at 5-19 shards gives no marks; use ``--reference-shards``).
MIN_REDRAW_SHARDS = 20
def _used_description(desc: str, unit: str, spec: Any, used: int, population: int | None) -> str:
    """A static reference's description with the rows ``auto`` used of its shuffled pool (a corpus's: as it is)."""
    if unit != "words":
        return desc
    from ..calibration.sample import drawn_description

    return drawn_description(spec, int(used), int(population or used), desc.partition("; pool: ")[2])


def _redraws(parts: Sequence[Any], cal: Any, vectors: dict, replicates: int, seed: Any, ddof: int) -> dict[str, Any]:
    """The redraws' metadata, or with fewer than MIN_REDRAW_SHARDS shards the note that says why there are none."""
    if len(parts) < MIN_REDRAW_SHARDS:
        return {"reference_replicates_note": redraw_note(len(parts))}
    return redraw_metadata(redraw_d(parts, cal, vectors, replicates, seed, ddof), replicates, len(parts))


def redraw_note(shards: int) -> str:
    """Why a table has no ``Firm`` column although the marks were asked for (fewer than MIN_REDRAW_SHARDS shards)."""
    return (f"Firm: no marks: the reference sample gave {shards} shard(s) and the redraws need at least "
            f"{MIN_REDRAW_SHARDS} (a bootstrap of fewer groups is too coarse): --reference-shards "
            f"{MIN_REDRAW_SHARDS} or more, on a reference of at least {2 * MIN_REDRAW_SHARDS}, give them.")


#: The most redraws (each is one eigendecomposition and one d per test).
MAX_REPLICATES = 1000


def check_replicates(replicates: Any, name: str = "stability replicates") -> int:
    """``replicates`` checked: a whole number from 2 to :data:`MAX_REPLICATES` (one line naming ``name``)."""
    return check_int(name, replicates, lo=2, hi=MAX_REPLICATES)


def redraw_weights(shards: int, replicates: int, seed: int) -> np.ndarray:
    """``(replicates, shards)`` multinomial counts: each row draws ``shards`` shards with replacement.

    From the stream ``("reference-replicates",)`` of the run's ``seed``.

    Examples
    --------
    >>> w = redraw_weights(5, 3, 0)
    >>> w.shape, w.sum(axis=1).tolist()
    ((3, 5), [5, 5, 5])
    """
    from .._random import as_generator, derive_seed

    gen = as_generator(derive_seed(seed, "reference-replicates"))
    picks = gen.integers(0, shards, size=(replicates, shards))
    return np.stack([np.bincount(row, minlength=shards) for row in picks]) if replicates else \
        np.zeros((0, shards), dtype=np.int64)


def redraw_statistics(shards: Sequence[Any], weights: Sequence[int]) -> Any:
    """The merged statistics of ``weights[i]`` copies of each shard (a :class:`CovarianceAccumulator`).

    Examples
    --------
    >>> from isoeat.calibration.moments import CovarianceAccumulator
    >>> X = np.arange(24.0).reshape(8, 3) ** 1.5
    >>> parts = [CovarianceAccumulator().update(X[:3]), CovarianceAccumulator().update(X[3:])]
    >>> acc = redraw_statistics(parts, [2, 1])
    >>> Y = np.vstack([X[:3], X[:3], X[3:]])
    >>> acc.n, np.allclose(acc.covariance(), np.cov(Y, rowvar=False))
    (11, True)
    """
    from ..calibration.moments import CovarianceAccumulator

    w = np.asarray(weights, dtype=np.float64)
    ns = np.array([s.n for s in shards], dtype=np.float64) * w
    means = np.stack([s.mean for s in shards])
    n = ns.sum()
    mu = ns @ means / n
    dev = means - mu
    comoment = np.einsum("k,kij->ij", w, np.stack([s.comoment for s in shards])) + (dev * ns[:, None]).T @ dev
    acc = CovarianceAccumulator()
    acc.n, acc.dim, acc.mean, acc.comoment = int(round(n)), means.shape[1], mu, comoment
    return acc


def redraw_d(shards: Sequence[Any], calibrator: Any, vectors: dict[str, dict[str, np.ndarray]], replicates: int,
             seed: int, ddof: int = 1) -> dict[str, tuple[float, ...]]:
    """d of every test on each of ``replicates`` redraws of the reference (group bootstrap of ``shards``).

    ``calibrator``: an unfitted or fitted calibrator whose type has ``from_statistics`` (its parameters are
    used); ``vectors``: raw vectors per test and role (X, Y, A, B).
    """
    params = calibrator.get_params()
    out: dict[str, list[float]] = {t: [] for t in vectors}
    with _one_blas_thread():  # many small d x d eigendecompositions: threads only contend (2.3x slower, measured)
        for w in redraw_weights(len(shards), replicates, seed):
            cal = type(calibrator).from_statistics(redraw_statistics(shards, w), **params)
            for t, v in vectors.items():
                out[t].append(calibrated_d(v, cal, ddof))
    return {t: tuple(vals) for t, vals in out.items()}


def redraw_metadata(replicate_d: Mapping[str, Sequence[float]], replicates: int, shards: int) -> dict[str, Any]:
    """The redraws as recorded in a calibrator's ``metadata_`` (and so in the run's manifest)."""
    return {"reference_replicate_d": {t: [float(x) for x in v] for t, v in replicate_d.items()},
            "reference_replicates": int(replicates), "reference_replicate_shards": int(shards)}


def _for_the_sample(se: dict[str, float], used: int, population: int | None) -> dict[str, float]:
    """``auto`` on a static model: the SEs times :func:`finite_population_factor` (its shards are a subset of
    the ``population`` rows, drawn without replacement); unchanged for a contextual model."""
    if not population:
        return se
    f = finite_population_factor(used, population)
    return {t: v * f for t, v in se.items()}


def _evaluate(parts: Sequence[Any], cal: Any, vectors: dict, ddof: int
              ) -> tuple[dict[str, float], dict[str, float]]:
    """Full-fit d and delete-one-shard jackknife SE of every test over ``parts``."""
    params = cal.get_params()
    full = type(cal).from_statistics(_merged(parts), **params)
    d = {t: calibrated_d(v, full, ddof) for t, v in vectors.items()}
    loo: dict[str, list[float]] = {t: [] for t in vectors}
    for stats in leave_one_out(parts):
        w = type(cal).from_statistics(stats, **params)
        for t, v in vectors.items():
            loo[t].append(calibrated_d(v, w, ddof))
    return d, {t: jackknife_se(vals) for t, vals in loo.items()}


def _stable(steps: list[dict], tolerance: float) -> bool:
    """The stopping rule of ``auto``: at least 5 shards, every SE < tolerance, no class flip over the last 2 shards."""
    last = steps[-1]
    if last["shards"] < MIN_AUTO_SHARDS or len(steps) < STABLE_SHARDS + 1 or not last["max_se"] < tolerance:
        return False
    return all(s.get("classes") == last["classes"] for s in steps[-(STABLE_SHARDS + 1):])
