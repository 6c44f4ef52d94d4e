"""The one engine: every command that measures a model raw and calibrated computes its cells here.

A *cell* is one measurement of one model in one space: a WEAT of one test,
the configured bias metrics of one test, the anisotropy of one frame, a
similarity benchmark. Every command is a plan builder and a summariser over
this engine:

* ``isoeat run`` (quick and grid) and ``isoeat reproduce``: the runner
  (:mod:`isoeat.experiments.runner`) plans cells from a config, keeps them in a
  folder and asks an :class:`Engine` per model to compute the missing ones;
* :func:`isoeat.compare_calibration`: raw and calibrated WEAT cells of a battery,
  in memory (:mod:`isoeat.experiments.compare`);
* :func:`isoeat.experiments.sensitivity.sensitivity_analysis`: WEAT cells of
  the calibrated space under other ε, reference sizes, reference sources and
  calibrations, each space a :class:`~isoeat.calibration.sample.ReferenceSpec`
  and a calibration.

What makes a cell the same cell wherever it is reached:

* its **space**: a calibration fitted by :meth:`Engine.fit` on the reference
  sample a :class:`~isoeat.calibration.sample.ReferenceSpec` names (each
  distinct sample drawn once, each calibrator fitted once; the spec is recorded
  in the calibrator's ``metadata_["reference_spec"]``, and the isotropy check
  samples from that same pool);
* its **seed**: the root seed of the run; the cell draws from its own named
  stream of it (:mod:`isoeat._random`), the same in every space;
* its **computation**: :meth:`Engine.weat_cell`, :meth:`Engine.metrics_cell`,
  :meth:`Engine.anisotropy_cell`, :meth:`Engine.similarity_cell` — the only
  code that computes a cell.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError, IsoeatError
from .._io import atomic_write_bytes
from ..backends.cache import BracketStore
from ..calibration.sample import ReferenceSpec
from ..stats._certified import set_bracket_store

#: The engine's slow certified brackets are kept in the embedding cache by content (the statistics take any
#: store and import no backend: ``stats._certified.set_bracket_store``).
set_bracket_store(BracketStore())

__all__ = ["Engine", "CachedEncoder", "metric_options", "space_key"]


class CachedEncoder:
    """Forwards to a model, memoising ``lookup`` so contextual encoders embed each word set once per plan."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._cache: dict[tuple[str, ...], Any] = {}

    def lookup(self, words: Iterable[str]) -> Any:
        key = tuple(words)
        if key not in self._cache:
            self._cache[key] = self._model.lookup(key)
        return self._cache[key]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def space_key(name: str, params: Mapping[str, Any], reference: ReferenceSpec | None) -> str:
    """The content key of a space: its calibration, parameters and reference sample."""
    from .._records import content_hash

    return content_hash({"calibration": name, "params": dict(params),
                         "reference": reference.key() if reference is not None else None}, None)


def metric_options(method: str, n_permutations: int) -> dict[str, Any]:
    """Options of the bias metrics in a plan: the WEAT cells' ``method`` and ``n_permutations``; p two-sided.

    WEAT's one-sided ``alternative`` is not passed on: RND's orientation is the
    opposite of the other signed metrics', so the metrics keep their two-sided
    default, as ``isoeat metric`` does. Pairs: each test's own, else A and B
    zipped, else the gender defaults (:mod:`isoeat.metrics._pairs`).
    """
    return {"alternative": "two-sided", "method": method, "n_permutations": n_permutations}


class Engine:
    """One model's cells: each reference sample drawn once, each calibrator fitted once, each cell by one rule.

    Parameters
    ----------
    model : Encoder
        Wrapped in :class:`CachedEncoder` (a word set is looked up once per engine).
    seed : int
        The run's root seed: every cell draws from its own named stream of it.
    weat_kwargs : mapping, optional
        :func:`isoeat.weat` options shared by every WEAT cell (``ddof``,
        ``alternative``, ``method``, ``n_permutations``, ``min_coverage``, intervals, ...).
    force : bool, default False
        Apply a calibrator fitted on another model.
    """

    def __init__(self, model: Any, *, seed: int, weat_kwargs: Mapping[str, Any] | None = None,
                 force: bool = False) -> None:
        self.model = model if isinstance(model, CachedEncoder) else CachedEncoder(model)
        self.seed = int(seed)
        self.weat_kwargs = dict(weat_kwargs or {})
        self.force = bool(force)
        self._samples: dict[tuple[str, str], tuple[np.ndarray, str]] = {}  # fixed ones (pools); the last drawn one
        self._fits: dict[str, Any] = {}

    # -- spaces ---------------------------------------------------------------------------------------
    def sample(self, spec: ReferenceSpec) -> tuple[np.ndarray, str]:
        """The reference vectors ``spec`` names and their description.

        A fixed sample (a pool) is read once per engine; a subset or bootstrap
        draw indexes into its pool's fixed sample; the last drawn sample is kept
        (a plan draws each sample once and fits its calibrations in a row).
        """
        from .._records import canonical_json
        from ..calibration.sample import reference_sample

        key = (spec.draw, canonical_json(spec.key()))
        if key not in self._samples:
            pool = None
            if spec.draw in ("subset", "bootstrap"):
                pool = self.sample(ReferenceSpec(size=spec.pool or spec.size, text=spec.text))
            if spec.draw != "fixed":
                for k in [k for k in self._samples if k[0] != "fixed"]:
                    del self._samples[k]
            self._samples[key] = reference_sample(self.model, spec, pool)
        return self._samples[key]

    def fit(self, name: str, params: Mapping[str, Any] | None = None,
            reference: ReferenceSpec | None = None, *, remember: bool = True) -> Any:
        """The calibrator ``name`` with ``params`` fitted on ``reference`` (default: the paper's 100,000).

        A fixed sample is fitted as :func:`isoeat.fit_calibrator` does
        (contextual encoders stream their reference, statistics cached per
        chunk); a drawn sample (subset, bootstrap, encoder) is drawn once by
        :meth:`sample` and every calibration of it fitted on the same rows. The
        spec goes into ``metadata_["reference_spec"]``. ``remember=False``: not
        kept (a sweep fits many calibrators once each).
        """
        from ..calibration import fit_calibrator, make_calibrator
        from ..calibration.registry import calibrator_metadata
        from ..calibration.sample import reference_kwargs

        params = dict(params or {})
        reference = reference or ReferenceSpec()
        key = space_key(name, params, reference)
        if key in self._fits:
            return self._fits[key]
        if reference.draw == "fixed":
            cal = fit_calibrator(self.model, name, n_reference=reference.size,
                                 reference_kwargs=reference_kwargs(reference), **params)
        else:
            X, desc = self.sample(reference)
            cal = make_calibrator(name, **params).fit(X)
            cal.metadata_ = calibrator_metadata(cal, name, self.model, desc, int(X.shape[0]), int(X.shape[1]))
        cal.metadata_ = {**(getattr(cal, "metadata_", {}) or {}), "reference_spec": reference.key()}
        if remember:
            self._fits[key] = cal
        return cal

    # -- cells ----------------------------------------------------------------------------------------
    def weat(self, test: Any, calibrator: Any = None) -> Any:
        """:func:`isoeat.weat` of ``test`` in ``calibrator``'s space (None: raw) with the engine's seed and options."""
        from ..stats.weat import weat

        return weat(self.model, test, calibration=calibrator, rng=self.seed, force=self.force, **self.weat_kwargs)

    def weat_cell(self, test: Any, calibrator: Any = None) -> dict[str, Any]:
        """A WEAT cell's payload: the result with its s-values, the cosine matrices and, calibrated, the mechanism."""
        res = self.weat(test, calibrator)
        payload = {"result": res.to_dict(scores=True), "cosines": _cosines(self.model, test, calibrator)}
        if calibrator is not None:  # why d moved: the raw contrast along the reference's principal directions
            from ..diagnostics.mechanism import mechanism_from_vectors

            sets = {role: self.model.lookup(ws.words).vectors for role, ws in test.sets().items()}
            payload["mechanism"] = mechanism_from_vectors(sets, calibrator)
        return payload

    def metrics_cell(self, test: Any, calibrator: Any, names: Sequence[str], options: Mapping[str, Any]
                     ) -> dict[str, Any]:
        """Every metric of ``names`` on ``test`` in ``calibrator``'s space.

        Metric ``m`` draws from the stream ``("metric", m, TEST)`` of the
        engine's seed (so its numbers do not depend on which others are listed;
        ``isoeat metric --seed SEED`` replays it). A metric that cannot be
        computed on the test (no defining pairs, a pair word missing) is
        recorded with its error; the others are kept.
        """
        from ..metrics.api import metric
        from ..metrics.registry import METRICS

        kw = {k: self.weat_kwargs[k] for k in ("min_coverage", "allow_overlap") if k in self.weat_kwargs}
        records: list[dict[str, Any]] = []
        for name in names:
            spec = METRICS.get(name)
            try:
                res = metric(self.model, spec.name, test, calibration=calibrator, rng=self.seed, force=self.force,
                             **kw, **{k: v for k, v in options.items() if k in spec.options})
                records.append(res.to_dict(scores=True))
            except IsoeatError as exc:
                records.append({"metric": spec.name, "test": test.id, "seed": self.seed,
                                "error": {"type": type(exc).__name__, "message": str(exc), "user_error": True}})
        return {"result": {"test": test.id, "metrics": records}}

    def anisotropy_cell(self, calibrator: Any, pool: ReferenceSpec, *, sample: int, components: int,
                        heatmap_size: int, heatmap: Path | None = None, frame: str = "reference") -> dict[str, Any]:
        """The anisotropy of ``sample`` vectors drawn from ``frame`` (``reference``: from ``pool``, the
        calibrator's own reference sample; ``paper``: tokens of the reference corpus, the paper's protocol).

        The rows come from the stream ``("anisotropy", FRAME)`` of the
        engine's seed: the same rows in every space. With ``heatmap`` the
        top-left ``heatmap_size`` block of the cosine matrix is written there (npz).
        """
        from ..diagnostics import anisotropy

        res = anisotropy(self.model, calibrator, n_samples=sample, top_k=components, rng=self.seed,
                         frame=frame, reference=pool, matrix_size=heatmap_size, return_matrix=True,
                         force=self.force)
        rec = res.to_dict()
        mat = getattr(res, "cosine_matrix", None)
        if mat is not None and heatmap is not None:
            k = min(heatmap_size, mat.shape[0])  # mutation: equivalent[const 0 -> 1] (the cosine matrix is square)
            buf = io.BytesIO()
            np.savez_compressed(buf, cosine=np.asarray(mat[:k, :k], dtype=np.float32))
            atomic_write_bytes(heatmap, buf.getvalue())
            rec["heatmap_file"] = heatmap.name
            rec["heatmap_size"] = int(k)
        return {"result": rec}

    def similarity_cell(self, benchmark: str, calibrator: Any, n_resamples: int) -> dict[str, Any]:
        """Spearman ρ raw and calibrated on ``benchmark``, with the paired bootstrap of the change."""
        from .. import similarity as sim

        fn = getattr(sim, "compare_similarity", None)
        if fn is None:
            raise ConfigError("similarity: isoeat.similarity has no compare_similarity() in this installation")
        comp = fn(self.model, benchmark, calibrator, n_resamples=n_resamples, rng=self.seed, force=self.force)
        raw, cal, boot = comp.raw, comp.calibrated, comp.bootstrap
        rec = {
            "benchmark": benchmark, "benchmark_title": getattr(raw, "title", benchmark),
            "kind": getattr(raw, "kind", ""), "source": getattr(raw, "source", ""), "n_pairs": raw.n_pairs,
            "n_total": raw.n_total, "coverage": raw.coverage, "n_missing": len(getattr(raw, "missing", ()) or ()),
            "rho_raw": raw.spearman, "rho_calibrated": cal.spearman, "delta": cal.spearman - raw.spearman,
            "ci_low": boot.ci_low if boot else None, "ci_high": boot.ci_high if boot else None,
            "ci_level": boot.ci_level if boot else None, "p_value": boot.p_value if boot else None,
            "n_resamples": boot.n_resamples if boot else 0, "n_valid_resamples": boot.n_valid if boot else 0,
            "seed": boot.seed if boot else None, "method": getattr(raw, "method", ""),
        }
        return {"result": rec, "detail": comp.to_dict()}


def _cosines(model: Any, test: Any, calibrator: Any) -> dict[str, Any]:
    """Target x attribute cosine matrices of a test in one space (the tutorial's per-test heatmap)."""
    from .._cosine import cosine_matrix

    out: dict[str, Any] = {}
    vecs: dict[str, np.ndarray] = {}
    for role, ws in test.sets().items():
        lk = model.lookup(ws.words)
        out[f"{role}_words"] = list(lk.found)
        out[f"{role}_name"] = ws.name
        v = lk.vectors
        if calibrator is not None and len(v):
            v = calibrator.transform(v)
        vecs[role] = v
    for t in "XY":
        if len(vecs[t]) and len(vecs["A"]) and len(vecs["B"]):
            M = np.concatenate([cosine_matrix(vecs[t], vecs["A"]), cosine_matrix(vecs[t], vecs["B"])], axis=1)
            out[f"{t}_AB"] = np.round(M, 6).tolist()
    return out
