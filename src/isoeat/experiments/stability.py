"""Whether each calibrated conclusion holds within the reference sample's own error (issue 32, item 6).

A calibrated d depends on the reference sample the calibrator was fitted on.
The reference sample is split into ``K`` shards (as for the reference-SE,
:mod:`isoeat.experiments.reference`: a static model's top-``N`` rows in the
seeded order of the stream ``("reference-shards",)``; a contextual encoder's
encoding chunks), and **R redraws** of it are the group bootstrap of those
shards: each redraw takes ``K`` shards with replacement (the multinomial
counts ``w_i`` from the stream ``("reference-replicates",)`` of the run's seed)
and merges their statistics,

.. math::

    n = \\sum_i w_i n_i,\\quad \\mu = \\frac1n\\sum_i w_i n_i \\mu_i,\\quad
    M = \\sum_i w_i M_i + \\sum_i w_i n_i (\\mu_i - \\mu)(\\mu_i - \\mu)^\\top,

then refits the calibrator (``from_statistics``) and recomputes d of every
test. Unlike the delete-one-shard refits of the jackknife (whose spread is
:math:`1/\\sqrt{K-1}` of the sampling spread), bootstrap redraws are
approximate draws from the sampling distribution of the reference sample
(Efron & Tibshirani 1993, §6; groups resampled as units), so the share of
redraws that give a call its own value is read directly.

The call at a redraw is ``p < alpha`` with the cell's p moved to the
redraw's d along the permutation null's slope (:func:`isoeat.labels.shifted_p`):
no permutation test is rerun, so the marks cost R eigendecompositions and R
d's per test. The rule (:func:`isoeat.labels.call_holds`): a call holds when
at least 95% of the redraws agree. Its track record against fresh reference
draws with every p recomputed by the cell's own method is measured by
``benchmarks/stability.py`` (docs/reference-size.md).

**Across corpora.** A contextual model reads its stimulus words' contexts and
its reference sample from a corpus; where one experiment holds the same model
on several corpora (``isoeat run --across-corpora``, or a config listing the
model once per corpus), :func:`folder_corpora` marks every comparison row with
whether its raw call, calibrated call and change class are the same on every
corpus (:func:`isoeat.labels.corpora_agreement`). A corpus whose stimulus words
fell back to the template beyond the gate (:func:`isoeat.labels.too_many_fallbacks`)
is left out of the vote, and named.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._types import dim_of, streams_reference

__all__ = ["DEFAULT_REPLICATES", "STABILITY_SHARDS", "MAX_REPLICATES", "check_replicates", "redraw_statistics",
           "redraw_weights", "redraw_d", "cached_redraw_d", "StabilityFit", "RedrawPlan", "fit_stability",
           "row_stability", "stability_columns", "folder_stability", "CORPORA_COLUMNS", "MAX_CORPORA",
           "corpus_groups", "folder_corpora"]

from ..labels import CORPORA_COLUMNS, MAX_CORPORA  # noqa: F401 - the across-corpora marks, defined with their rule
from .reference import (  # noqa: F401 - re-exported: the redraws live beside the shards they resample
    DEFAULT_REPLICATES,
    MAX_REPLICATES,
    MIN_REDRAW_SHARDS,
    check_replicates,
    redraw_d,
    redraw_metadata,
    redraw_note,
    redraw_statistics,
    redraw_weights,
)

#: Shards of the static default (the redraws' groups: 1,000 rows each of the default 100,000).
STABILITY_SHARDS = 100


@dataclass(frozen=True)
class StabilityFit:
    """The redraws of one reference sample: d of each test on each redraw, and how they were made."""

    replicate_d: dict[str, tuple[float, ...]]
    replicates: int
    shards: int
    seconds: float

    def metadata(self) -> dict[str, Any]:
        """The fields recorded in the calibrator's ``metadata_`` (and so in the run's manifest); too few shards
        (fewer than :data:`MIN_REDRAW_SHARDS`): no redraws, the note that says why."""
        if not self.replicates:
            return {"reference_replicates_note": redraw_note(self.shards)}
        return redraw_metadata(self.replicate_d, self.replicates, self.shards)


@dataclass(frozen=True)
class RedrawPlan:
    """What the redraws resample: the top ``size`` rows (or units) of the reference in ``shards`` shards, drawn
    ``replicates`` times from the stream ``("reference-replicates",)`` of ``seed`` (the run's seed).

    Examples
    --------
    >>> RedrawPlan(size=60, shards=30, replicates=25).seed
    0
    """

    size: int = 100_000
    shards: int = STABILITY_SHARDS
    replicates: int = DEFAULT_REPLICATES
    seed: int = 0


def fit_stability(model: Any, tests: Sequence[Any], plan: RedrawPlan | None = None, *, calibration: str = "zca",
                  params: dict | None = None, reference_kwargs: dict | None = None, ddof: int = 1,
                  min_coverage: float = 0.8) -> StabilityFit:
    """The redraws of a fixed-size reference sample of ``model`` (its rows in ``plan.shards`` shards; no jackknife).

    The shards are those of :func:`~isoeat.experiments.reference.fit_reference` for the same size, shards and
    seed (``plan``: :class:`RedrawPlan`, default its defaults); a contextual model's reference is encoded again
    (use ``fit_reference(..., replicates=R)`` instead, which keeps the shards of its one pass). The redraws' d
    are kept in the cache by content (:func:`cached_redraw_d`).
    """
    plan = plan or RedrawPlan()
    size, shards, seed = plan.size, plan.shards, plan.seed
    from ..calibration import make_calibrator
    from .reference import _one_blas_thread, _shard_stream, _test_vectors, check_shards

    t0 = time.perf_counter()
    replicates = check_replicates(plan.replicates)
    static = not streams_reference(model)
    if static:  # a small reference: shards of at least 2 rows
        shards = max(2, min(int(shards), int(size) // 2))
    shards = check_shards(shards, dim_of(model), rows=int(size) if static else None)
    cal = make_calibrator(calibration, **(params or {}))
    vectors = _test_vectors(model, tests, min_coverage)
    stream, _, _, _ = _shard_stream(model, int(size), shards, dict(reference_kwargs or {}), seed)
    with _one_blas_thread():  # shards of small matrices: BLAS threads only contend
        parts = [acc for acc, _ in stream]
    if len(parts) < MIN_REDRAW_SHARDS:  # a small reference: no marks from a handful of shards, and a note
        return StabilityFit(replicate_d={}, replicates=0, shards=len(parts), seconds=time.perf_counter() - t0)
    reps = cached_redraw_d(parts, cal, vectors, replicates, seed, ddof)
    return StabilityFit(replicate_d=reps, replicates=replicates, shards=len(parts),
                        seconds=time.perf_counter() - t0)


def _redraw_key(parts: Sequence[Any], calibrator: Any, vectors: dict[str, dict[str, Any]], replicates: int,
                seed: int, ddof: int) -> dict[str, Any] | None:
    """Everything a redraw's d depends on, as cache key parts (None where something is not plain data)."""
    import hashlib
    import sys

    import numpy as np

    from .._records import canonical_json
    from ..backends.cache import code_digest

    h = hashlib.sha256()
    for s in parts:  # the shards' statistics, byte for byte
        h.update(f"{s.n}:{s.dim}|".encode())
        h.update(np.ascontiguousarray(s.mean, dtype=np.float64).tobytes())
        h.update(np.ascontiguousarray(s.comoment, dtype=np.float64).tobytes())
    for t, roles in vectors.items():
        for role, v in roles.items():
            a = np.ascontiguousarray(v)
            h.update(f"|{t}/{role}:{a.dtype.str}:{a.shape}|".encode())
            h.update(a.tobytes())
    code = code_digest()  # isoeat's code
    name = type(calibrator).__module__
    if not name.startswith("isoeat."):  # a calibrator registered from elsewhere: its module's bytes too
        file = getattr(sys.modules.get(name), "__file__", None)
        if not file:
            return None
        with open(file, "rb") as fh:
            code = hashlib.sha256(code.encode() + fh.read()).hexdigest()
    try:
        params = canonical_json(calibrator.get_params())
    except (TypeError, ValueError):
        return None
    return {"redraws": 1, "inputs": h.hexdigest(), "tests": list(vectors), "code": code,
            "calibrator": f"{type(calibrator).__module__}.{type(calibrator).__qualname__}", "params": params,
            "replicates": int(replicates), "seed": int(seed), "ddof": int(ddof), "numpy": np.__version__}


def cached_redraw_d(parts: Sequence[Any], calibrator: Any, vectors: dict[str, dict[str, Any]], replicates: int,
                    seed: int, ddof: int = 1) -> dict[str, tuple[float, ...]]:
    """:func:`~isoeat.experiments.reference.redraw_d`, kept in the embedding cache (kind ``redraws``) by content.

    The key holds every input byte for byte (the shards' statistics, the tests' raw vectors, the calibrator's
    type and parameters, ``replicates``, ``seed``, ``ddof``), the bytes of isoeat's code
    (:func:`~isoeat.backends.cache.code_digest`) and numpy's version: a stored entry is what
    :func:`redraw_d` would return here, float for float.
    ``$ISOEAT_NO_CACHE`` (or an unreadable cache) computes them.
    """
    import numpy as np

    from ..backends.cache import EmbeddingCache, quiet_get, quiet_put

    key = _redraw_key(parts, calibrator, vectors, replicates, seed, ddof)
    cache = EmbeddingCache()
    if key is None or not cache.enabled:
        return redraw_d(parts, calibrator, vectors, replicates, seed, ddof)
    found = quiet_get(cache, "redraws", key)
    if found is not None and found.get("d") is not None and found["d"].shape == (len(vectors), replicates):
        return {t: tuple(float(x) for x in row) for t, row in zip(vectors, found["d"])}
    reps = redraw_d(parts, calibrator, vectors, replicates, seed, ddof)
    d = np.array([reps[t] for t in vectors], dtype=np.float64).reshape(len(vectors), replicates)
    if np.isfinite(d).all():  # the cache holds finite arrays only
        quiet_put(cache, "redraws", key, {"d": d})
    return reps


def row_stability(calibrated: Any, replicate_d: Sequence[float] | None, alpha: float) -> tuple[int, int] | None:
    """``(same, total)`` of one calibrated result (:func:`isoeat.labels.replicate_agreement`), None without redraws."""
    from ..labels import replicate_agreement

    if not replicate_d:
        return None
    p, d = float(calibrated.p_value), float(calibrated.effect_size)
    if not (math.isfinite(p) and math.isfinite(d)):
        return None
    floor = getattr(calibrated, "p_floor", None)  # the null's discreteness: a redraw's p is never below it
    return replicate_agreement(p, d, replicate_d, int(calibrated.n_x), int(calibrated.n_y), alpha,
                               alternative=calibrated.alternative, ddof=int(calibrated.ddof),
                               p_floor=floor if isinstance(floor, float) else None)


def stability_columns(agreement: tuple[int, int] | None) -> dict[str, Any]:
    """The record columns of one comparison: ``call_holds``, ``class_holds`` (the same: the raw call needs no
    reference), ``replicate_share`` ("k/R"), ``replicates`` and ``firm`` (the level of the ``Firm`` mark,
    :func:`isoeat.labels.firm_level`: ``firm``, ``borderline`` or ``unstable``); empty without redraws.

    Examples
    --------
    >>> stability_columns((94, 100))["call_holds"], stability_columns((94, 100))["firm"], stability_columns(None)
    (False, 'borderline', {})
    """
    from ..labels import call_holds, firm_level

    if agreement is None:
        return {}
    same, total = agreement
    holds = call_holds(same, total)
    return {"call_holds": holds, "class_holds": holds, "replicate_share": f"{same}/{total}", "replicates": total,
            "firm": firm_level(same, total)}


def folder_stability(comparisons: list[dict], weat: list[dict], manifest: dict, alpha: float) -> None:
    """Add :func:`stability_columns` to an experiment folder's comparison rows (in place), from the redraws its
    manifest records for each calibrator (``reference_replicate_d``; none recorded: no columns)."""
    from ..stats.results import WEATResult

    found = manifest.get("calibrators")
    cals: dict = found if isinstance(found, dict) else {}
    index = {(r["model"], r["calibration"], r["test"]): r for r in weat}
    for row in comparisons:
        meta = cals.get(f"{row['model']}/{row['calibration']}")
        redraws = (meta or {}).get("reference_replicate_d") if isinstance(meta, dict) else None
        rec = index.get((row["model"], row["calibration"], row["test"]))
        if isinstance(redraws, dict) and rec is not None:
            # the record as a result: its p_floor (the null's discreteness) bounds each redraw's p
            row.update(stability_columns(row_stability(WEATResult.from_dict(rec), redraws.get(row["test"]), alpha)))




def _group_key(m: dict) -> str:
    from .._records import canonical_json

    options = {k: v for k, v in (m.get("options") or {}).items() if k != "corpus"}
    return canonical_json([m.get("spec"), m.get("family"), m.get("layer"), m.get("contexts_per_word"), options])


def corpus_groups(models: Sequence[dict]) -> list[list[dict]]:
    """The models of a grid that differ only in their corpus, in groups of two or more distinct corpora.

    ``models``: the folder's model entries (``spec``, ``label``, ``family``, ``layer``, ``contexts_per_word``,
    ``options``, ``corpus``: the one the manifest recorded, else ``options["corpus"]``, and ``corpus_fingerprint``
    where the manifest recorded the corpus's content). Static models read no corpus and form no group; of two
    models on one corpus (the same content, however spelled) the first listed stands for it.
    """
    groups: dict[str, dict[str, dict]] = {}
    for m in models:
        corpus = m.get("corpus") or (m.get("options") or {}).get("corpus")
        if m.get("family") in (None, "static") or not corpus:
            continue
        same = str(m.get("corpus_fingerprint") or corpus)
        groups.setdefault(_group_key(m), {}).setdefault(same, {**m, "corpus": str(corpus)})
    return [list(g.values()) for g in groups.values() if len(g) > 1]


def folder_corpora(comparisons: list[dict], weat: list[dict], models: Sequence[dict], alpha: float,
                   raw_label: str = "none") -> None:
    """Add the across-corpora marks (:data:`CORPORA_COLUMNS`) to the comparison rows of every model in a
    :func:`corpus_groups` group (in place).

    A corpus over the template-fallback gate (its raw records' stimulus words), or without a result for the
    test (its cell failed), is left out of the vote and named in ``corpora_left_out`` (a list, as ``corpora``);
    with fewer than two corpora voting, no marks. ``corpora_share`` is ``k/n``:
    the ``k`` of ``n`` voting corpora (this one included) on which both calls have their values here. Every
    row of a group gets the columns (None where it casts no vote: its corpus is left out, or no other voted).
    """
    from ..labels import corpora_agreement, fallback_counts, too_many_fallbacks

    index = {(r["model"], r["calibration"], r["test"]): r for r in comparisons}
    for group in corpus_groups(models):
        voters, left_out = [], []
        for m in group:
            k, n, _ = fallback_counts([r for r in weat if r.get("model") == m["label"]
                                       and r.get("calibration") == raw_label])
            if too_many_fallbacks(k, n):
                left_out.append(f"{m['corpus']} ({k} of {n} stimulus words, {k / n:.0%}, fell back to the template)")
            else:
                voters.append(m)
        labels = [m["label"] for m in voters]
        members = {m["label"] for m in group}
        for (model, cal, test), row in index.items():
            if model not in members:
                continue
            voting = [m for m in voters if (m["label"], cal, test) in index]
            failed = [f"{m['corpus']} (no result for {test}: its cell failed)" for m in voters if m not in voting]
            row.update(dict.fromkeys(CORPORA_COLUMNS[:4]), corpora=[m["corpus"] for m in voting],
                       corpora_left_out=left_out + failed)  # a left-out corpus's rows: no marks, the names
            others = [index[(m["label"], cal, test)] for m in voting if m["label"] != model]
            if model not in labels or not others:
                continue
            agree = corpora_agreement((row["p_raw"], row["p_calibrated"]),
                                      [(o["p_raw"], o["p_calibrated"]) for o in others], alpha)
            row.update({"raw_call_holds_corpora": agree["raw_call"], "call_holds_corpora": agree["call"],
                        "class_holds_corpora": agree["class"], "corpora_share": f"{agree['same']}/{agree['total']}"})
