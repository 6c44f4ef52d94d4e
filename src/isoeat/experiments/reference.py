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
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np

from .._errors import ConfigError, IsoeatError
from .._validate import check_int, check_real

__all__ = [
    "DEFAULT_SHARDS", "DEFAULT_TOLERANCE", "DEFAULT_MAX_SIZE", "AUTO_SHARDS", "MIN_AUTO_SHARDS", "STABLE_SHARDS",
    "DEFAULT_MEMORY", "ReferenceFit", "jackknife_se", "leave_one_out", "calibrated_d", "fit_reference",
    "memory_needed", "se_precision", "finite_population_factor",
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
#: memory budget of the shard statistics and refits (checked before allocating)
DEFAULT_MEMORY = 2 * 2**30


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


@dataclass(frozen=True)
class ReferenceFit:
    """A calibrator fitted on a sharded reference sample, with the reference-SE of every calibrated d."""

    calibrator: Any
    reference_se: dict[str, float]
    d: dict[str, float]
    size: int
    mode: str
    shards: int
    max_size: int
    tolerance: float
    stopped: str
    unit: str
    seconds: float
    steps: tuple[dict, ...] = field(default=())
    #: the CV of one SE (:func:`se_precision` of the shards used)
    se_precision: float = math.nan
    #: the factor applied to the jackknife SE: :func:`finite_population_factor` under ``auto`` on a static model
    se_factor: float = 1.0
    #: ``auto`` on a static model: the rows its subset was drawn from
    population: int | None = None

    def metadata(self) -> dict[str, Any]:
        """The fields recorded in the calibrator's ``metadata_`` (and so in the run's manifest)."""
        return {"reference_se": dict(self.reference_se), "reference_size": self.size, "reference_mode": self.mode,
                "reference_shards": self.shards, "reference_max_size": self.max_size,
                "reference_tolerance": self.tolerance, "reference_stopped": self.stopped,
                "reference_unit": self.unit, "reference_steps": [dict(s) for s in self.steps],
                "reference_se_precision": self.se_precision, "reference_se_factor": self.se_factor,
                "reference_population": self.population}


def _shard_stream(model: Any, n: int, k: int, reference_kwargs: dict, seed: Any
                  ) -> tuple[Iterator[tuple[Any, int]], str, str, int | None]:
    """``(iterator of (shard statistics, units so far), description, unit, population)``, encoding lazily.

    Shards of ceil(m / k) units, m the reference size available (at most ``n``: a small vocabulary or
    corpus gives fewer rows or sentences than asked for). ``population``: m for a static model (whose
    shards are drawn from those m rows without replacement), ``None`` for a contextual one (a sample of a corpus).
    """
    from .._random import as_generator
    from ..calibration.moments import CovarianceAccumulator

    if not hasattr(model, "reference_batches"):
        vecs, desc = model.reference_vectors(n, **reference_kwargs)
        order = as_generator(seed).permutation(vecs.shape[0])
        shard_size = max(1, -(-len(order) // k))

        def static() -> Iterator[tuple[Any, int]]:
            for start in range(0, len(order), shard_size):
                rows = order[start:start + shard_size]
                yield CovarianceAccumulator().update(vecs[rows]), start + len(rows)

        return static(), desc + f"; shards: a seeded random order of these rows (seed {seed})", "words", len(order)
    batches, desc = model.reference_batches(n, **reference_kwargs)
    chunk = getattr(model, "chunk_size", None)
    total = None
    if chunk is not None and hasattr(model, "reference_metadata"):
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
                done = min(n_batches * chunk, total) if total is not None else done + b.shape[0]
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


def _p_value(vectors: dict[str, np.ndarray], calibrator: Any, p_kwargs: dict, rng: int) -> float:
    from ..stats.weat import weat_from_vectors

    v = vectors if calibrator is None else {r: calibrator.transform(x) for r, x in vectors.items()}
    return weat_from_vectors(v["X"], v["Y"], v["A"], v["B"], rng=rng, **p_kwargs).p_value


def fit_reference(
    model: Any,
    tests: Sequence[Any],
    *,
    calibration: str = "zca",
    params: dict[str, Any] | None = None,
    size: int | str = DEFAULT_MAX_SIZE,
    shards: int = DEFAULT_SHARDS,
    tolerance: float = DEFAULT_TOLERANCE,
    max_size: int = DEFAULT_MAX_SIZE,
    reference_kwargs: dict[str, Any] | None = None,
    seed: int = 0,
    alpha: float = 0.05,
    ddof: int = 1,
    min_coverage: float = 0.8,
    memory: int = DEFAULT_MEMORY,
    p_kwargs: dict[str, Any] | None = None,
    classify: Any = None,
    log: Any = None,
) -> ReferenceFit:
    """Fit ``calibration`` on a sharded reference sample and report the reference-SE of each calibrated d.

    Parameters
    ----------
    model : Encoder
        A static model (``reference_vectors``) or a contextual one (``reference_batches``).
    tests : sequence of AssociationTest
    size : int or "auto"
        ``N``: the reference of the fixed-size fit, split into ``shards``
        shards. ``"auto"``: shards of ``max_size / 20`` encoded in order until
        every reference-SE < ``tolerance`` and no change class flipped over
        the last two shards (at least 5 shards), or ``max_size`` is reached.
    calibration, params
        A calibration that can be fitted from merged statistics
        (``from_statistics``: ``"zca"``) and its parameters.
    seed : int
        Order of a static model's reference rows.
    alpha, p_kwargs
        ``auto`` only: significance level of the change classes, and
        :func:`~isoeat.stats.weat.weat_from_vectors` options of their p
        (``method``, ``n_permutations``, ``alternative``, ...).
    classify : callable
        ``auto`` only: ``classify(p_raw, p_calibrated, alpha)`` -> change class
        (:func:`isoeat.experiments.compare.classify_change`, which
        :func:`~isoeat.experiments.compare.compare_calibration` and ``isoeat run`` pass).
    memory : int
        Byte budget of the shard statistics and refits, checked before any is allocated.
    """
    from ..calibration import make_calibrator
    from ..calibration.registry import calibrator_metadata

    t0 = time.perf_counter()
    auto = size == "auto"
    if not auto:
        size = check_int("reference size", size, lo=2)
    max_size = check_int("reference maximum size", max_size, lo=2)
    tolerance = check_real("reference tolerance", tolerance, lo=0.0, lo_open=True)
    shards = check_int("reference shards", shards, lo=2)
    if auto and classify is None:
        raise ConfigError("reference size 'auto' needs classify= (isoeat.experiments.compare.classify_change)")
    cal = make_calibrator(calibration, **(params or {}))
    if not hasattr(type(cal), "from_statistics"):
        raise ConfigError(f"reference-SE and --reference-size auto need a calibration fitted from mergeable "
                          f"statistics (zca); {calibration!r} is not")
    n = max_size if auto else int(size)
    k_max = AUTO_SHARDS if auto else shards
    dim = getattr(model, "dim", None)
    if dim is not None:
        _check_memory(int(dim), k_max, memory)
    vectors = _test_vectors(model, tests, min_coverage)
    p_kwargs = {"ddof": ddof, **(p_kwargs or {})}
    raw_p = {t: _p_value(v, None, p_kwargs, rng=i) for i, (t, v) in enumerate(vectors.items())} if auto else {}
    stream, desc, unit, population = _shard_stream(model, n, k_max, dict(reference_kwargs or {}), seed)
    parts: list[Any] = []
    steps: list[dict] = []
    se: dict[str, float] = {}
    d: dict[str, float] = {}
    stopped, used = "size", 0
    classes_at: dict[int, dict[str, str]] = {}  # change classes after k shards, computed when needed

    def classes(k: int) -> dict[str, str]:
        if k not in classes_at:
            full = type(cal).from_statistics(_merged(parts[:k]), **cal.get_params())
            classes_at[k] = {t: classify(raw_p[t], _p_value(v, full, p_kwargs, rng=i), alpha)
                             for i, (t, v) in enumerate(vectors.items())}
        return classes_at[k]

    try:
        for acc, used in stream:
            parts.append(acc)
            if not auto or len(parts) < 2:
                continue
            d, se = _evaluate(parts, cal, vectors, ddof)
            se = _for_the_sample(se, used, population)
            k = len(parts)
            steps.append({"size": used, "shards": k, "max_se": max(se.values(), default=math.nan)})
            if log:
                log(f"reference auto: {used} {unit}, {k} shards, max reference-SE {steps[-1]['max_se']:.4f}")
            # the stopping rule: SE first (cheap), then no class flip over the last STABLE_SHARDS shards
            # (the whole population of a static model is the cap, not a stop: its corrected SE is 0 there)
            if k >= MIN_AUTO_SHARDS and steps[-1]["max_se"] < tolerance and used != population:
                for step in steps[-(STABLE_SHARDS + 1):]:
                    step.setdefault("classes", classes(step["shards"]))
                if _stable(steps, tolerance):
                    stopped = "stable"
                    break
        else:
            stopped = "cap" if auto else "size"
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    if len(parts) < 2:
        raise ConfigError(f"reference-SE: the reference sample gave {len(parts)} shard(s); need at least 2")
    if not auto:
        d, se = _evaluate(parts, cal, vectors, ddof)
    merged = _merged(parts)
    fitted = type(cal).from_statistics(merged, **cal.get_params())
    if auto:
        desc += f"; --reference-size auto: the first {used} {unit} ({stopped})"
    fitted.metadata_ = calibrator_metadata(fitted, calibration, model, desc, int(fitted.n_samples_seen_),
                                           int(fitted.n_features_in_))
    fit = ReferenceFit(calibrator=fitted, reference_se=se, d=d, size=int(used), mode="auto" if auto else "fixed",
                       shards=len(parts), max_size=n, tolerance=tolerance, stopped=stopped, unit=unit,
                       seconds=time.perf_counter() - t0, steps=tuple(steps), se_precision=se_precision(len(parts)),
                       se_factor=finite_population_factor(int(used), population) if auto and population else 1.0,
                       population=population if auto else None)
    fitted.metadata_.update(fit.metadata())
    return fit


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
