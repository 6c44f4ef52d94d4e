"""The cells of an experiment grid: planning (seeds, files, content hashes) and computing one cell.

A cell is one unit of work: a WEAT in one (model, calibration) space, the
configured bias metrics of one test in one space, an anisotropy
measurement, or a similarity benchmark. :func:`plan_cells` lays
them out with their seeds (see :mod:`isoeat.experiments.runner` for the seed
rule) and the hash of every input that determines them; the ``run_*_cell``
functions compute one and return its JSON payload.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from .._errors import ConfigError, IsoeatError
from .._io import atomic_write_bytes
from ..calibration.io import calibrator_digest  # noqa: F401 - part of this module's API (cell hashes)
from .._records import content_hash
from ._store import read_json, slug
from ._formats import CELL_FORMAT  # the one home of the format versions
from .config import ExperimentConfig, ModelSpec, test_hash

__all__ = ["Cell", "plan_cells", "calibrator_digest", "calibration_request", "reference_content", "CELL_FORMAT",
           "CachedEncoder", "load_model_for", "calibrator_for",
           "run_weat_cell", "run_metric_cell", "run_anisotropy_cell", "run_similarity_cell", "reference_corpus",
           "corpus_content", "stale_cell"]


@dataclass
class Cell:
    """One unit of work of the grid (planned from the config)."""

    kind: str  # "weat" | "metrics" | "anisotropy" | "similarity"
    model: str
    calibration: str
    item: str  # test id, "anisotropy" or benchmark name
    seed: int  # the run's root seed: every cell draws from its own named stream of it (isoeat._random)
    stream: tuple[str, ...]
    path: Path
    cell_hash: str
    extra: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.model}/{self.calibration}/{self.item}" + ("/metrics" if self.kind == "metrics" else "")

    @property
    def label(self) -> str:
        return f"{self.model} {self.calibration} {self.item}" + (" metrics" if self.kind == "metrics" else "")


def plan_cells(config: ExperimentConfig, out: Path, given: dict[tuple[str, str], str] | None = None) -> list[Cell]:
    """Every cell of the grid with its seed, file and content hash, in run order.

    ``given`` maps ``(model label, calibration label)`` to the
    :func:`calibrator_digest` of a calibrator handed to the run; it enters the
    hash of that space's cells, so a different calibrator never reuses them.
    """
    s = config.settings
    check_labels(config)
    benches = list(config.similarity.benchmarks) if config.similarity else []
    seed = s.seed
    protocol = config.protocol_hash()
    cells: list[Cell] = []

    def add(kind: str, m: Any, c: Any, item: str, stream: tuple[str, ...], path: Path, extra: dict | None = None,
            **key: Any) -> None:
        mid = {"spec": m.spec, "options": m.options, "layer": m.layer, "contexts_per_word": m.contexts_per_word}
        h = content_hash({"protocol": protocol, "model": mid, "calibration": c.to_dict(), "seed": seed,
                          "stream": list(stream), "format": CELL_FORMAT, **key, **_given_key(given, m.label, c.label)})
        cells.append(Cell(kind, m.label, c.label, item, seed, stream, path, h, extra or {}))

    for m in config.models:
        mdir = slug(m.label)
        for c in config.calibrations:
            cdir = slug(c.label)
            for t in config.tests:
                add("weat", m, c, t.id, ("weat", t.id), out / "cells" / mdir / cdir / f"{slug(t.id)}.json",
                    {"test": t}, test=test_hash(t))
                if config.metrics:
                    add("metrics", m, c, t.id, ("metric", "*", t.id),
                        out / "metrics" / mdir / cdir / f"{slug(t.id)}.json", {"test": t}, test=test_hash(t),
                        metrics=list(config.metrics), options=metric_options(config))
        if config.anisotropy:
            for c in config.calibrations:  # raw and calibrated measured on the same sample (one stream)
                add("anisotropy", m, c, "anisotropy", ("anisotropy", "reference"),
                    out / "anisotropy" / mdir / f"{slug(c.label)}.json", anisotropy=True)
        for b in benches:
            for c in config.calibrated:
                add("similarity", m, c, b, ("similarity", b), out / "similarity" / mdir / slug(c.label) / f"{slug(b)}.json",
                    benchmark=b)
    return cells


def check_labels(config: ExperimentConfig, also: dict[str, Iterable[str]] | None = None) -> None:
    """Refuse labels whose file names would be one file on a case-insensitive disk (``also``: a folder's own)."""
    from .._names import check_distinct

    also = also or {}
    check_distinct([*also.get("models", ()), *(m.label for m in config.models)], "model labels")
    check_distinct([*also.get("calibrations", ()), *(c.label for c in config.calibrations)], "calibration labels")
    check_distinct([*also.get("tests", ()), *(t.id for t in config.tests)], "test ids")
    if config.similarity:
        check_distinct(config.similarity.benchmarks, "similarity benchmarks")


def _given_key(given: dict[tuple[str, str], str] | None, model: str, calibration: str) -> dict[str, str]:
    """The content digest of a calibrator handed to the run, for every cell of its space (WEAT, anisotropy, ...)."""
    digest = (given or {}).get((model, calibration))
    return {"calibrator_sha256": digest} if digest else {}


class CachedEncoder:
    """Forwards to a model, memoising ``lookup`` so contextual encoders embed each word set once per grid."""

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


def _cosines(model: Any, test: Any, calibrator: Any) -> dict[str, Any]:
    """Target x attribute cosine matrices of a test in one space (the tutorial's per-test heatmap)."""
    from ..stats.weat import cosine_matrix

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


# =========================================================================== model, calibrator and corpus adapters
def _corpus_file(spec: str | None) -> str | None:
    """The text file behind a corpus spec (``PATH`` or ``FORMAT:PATH``), or None (a named corpus, a folder)."""
    if not spec:
        return None
    if Path(spec).is_file():
        return spec
    prefix, sep, rest = spec.partition(":")
    if sep and len(prefix) > 1 and Path(rest).is_file():
        return rest
    return None


def _reference_kwargs(mspec: ModelSpec, config: ExperimentConfig, model: Any) -> dict[str, Any]:
    """Keyword arguments of ``model.reference_vectors`` for the configured reference corpus."""
    corpus = config.settings.reference.corpus
    if not corpus:
        return {}
    if getattr(model, "kind", "static") == "static" or not hasattr(model, "reference_batches"):
        # static vectors: the vocabulary of a text, by frequency in it
        f = _corpus_file(corpus)
        return {"text": f} if f else {}
    return {}


_CORPORA: dict[tuple, Any] = {}


def reference_corpus(config: ExperimentConfig) -> Any:
    """The configured reference corpus, loaded once per process (None: each encoder's default)."""
    spec = config.settings.reference.corpus
    if not spec:
        return None
    key = (spec, config.settings.reference.sentences, config.settings.seed, reference_content(config))
    if key not in _CORPORA:
        try:
            from ..corpora import load_corpus
        except ImportError:  # pragma: no cover - corpora ships with isoeat
            return spec
        _CORPORA[key] = load_corpus(spec, max_sentences=config.settings.reference.sentences,
                                    seed=config.settings.seed)
    return _CORPORA[key]


def _encoder_class(spec: str) -> Any:
    low = spec.strip().lower()
    try:
        if low.startswith("st:"):
            from ..backends.sentence import SentenceEncoder

            return SentenceEncoder
        from ..backends.transformer import TransformerEncoder

        return TransformerEncoder
    except ImportError:  # pragma: no cover - an older isoeat without contextual encoders
        return None


def load_model_for(mspec: ModelSpec, config: ExperimentConfig) -> Any:
    """``load_model`` with the model's options, plus layer/contexts/corpus/seed for contextual encoders.

    Only the keywords the encoder class accepts are passed (a sentence
    encoder has no ``layer``); ``options`` from the config always win.
    """
    from ..backends import load_model

    kwargs = model_kwargs(mspec, config)
    try:
        return load_model(mspec.spec, **kwargs)
    except TypeError as exc:
        raise ConfigError(f"model {mspec.label!r} ({mspec.spec}): {exc}") from None


def model_kwargs(mspec: ModelSpec, config: ExperimentConfig) -> dict[str, Any]:
    """The keyword arguments :func:`load_model_for` passes to ``load_model`` for ``mspec``."""
    import inspect

    kwargs = dict(mspec.options)
    if not mspec.is_static:
        s = config.settings
        wanted = {
            "layer": mspec.layer if mspec.layer is not None else s.layer,
            "contexts_per_word": mspec.contexts_per_word if mspec.contexts_per_word is not None
            else s.contexts_per_word,
            "corpus": reference_corpus(config),
            "seed": s.seed,
            "progress": False,
        }
        cls = _encoder_class(mspec.spec)
        try:
            accepted = set(inspect.signature(cls.__init__).parameters) if cls is not None else set()
        except (TypeError, ValueError):  # pragma: no cover
            accepted = set()
        for k, v in wanted.items():
            if v is not None and k not in kwargs and k in accepted:
                kwargs[k] = v
    return kwargs


def corpus_content(model: Any) -> str | None:
    """The content of the corpus a contextual encoder aggregates its word vectors over, or None.

    A ``hf:`` word vector is the mean of the word's vectors in its corpus contexts, so a finished cell is
    reused only while this is unchanged: the corpus's ``fingerprint`` (its sentences and settings) and
    ``source_sha256`` (the bytes read). None for static vectors and sentence encoders, whose vectors do not
    depend on a corpus. Loads the corpus (it is needed to check finished cells).
    """
    if getattr(model, "kind", None) != "transformer" or not hasattr(model, "corpus"):
        return None
    corp = model.corpus
    return f"{getattr(corp, 'fingerprint', None)}|{getattr(corp, 'source_sha256', None)}"


def stale_cell(cell: Cell, fingerprint: str | None, requests: dict[str, str], log: Callable[[str], None],
           corpus: str | None = None) -> bool:
    """A finished cell whose model content, corpus contexts (``corpus``: ``cells.corpus_content``, None:
    none) or calibrator inputs changed since it was computed."""
    rec = read_json(cell.path)
    if not isinstance(rec, dict) or rec.get("status") != "ok":
        return False  # failed cells are kept or retried by --overwrite, not here
    if fingerprint and rec.get("model_fingerprint") != fingerprint:
        log(f"{cell.key}: computed on another version of the model (its content changed); recomputing")
        return True
    if corpus is not None and rec.get("corpus_fingerprint") != corpus:
        log(f"{cell.key}: computed on other corpus contexts (or before they were recorded); recomputing")
        return True
    want = requests.get(cell.calibration)
    got = (rec.get("calibrator") or {}).get("request_hash") if isinstance(rec.get("calibrator"), dict) else None
    if want is not None and got != want:
        log(f"{cell.key}: its calibrator's inputs changed (reference corpus, size, parameters or model); "
            "recomputing")
        return True
    return False


def reference_content(config: ExperimentConfig) -> str | None:
    """SHA-256 of the configured reference corpus file or folder (None: a named corpus or the model's default)."""
    from .manifest import file_fingerprint

    spec = config.settings.reference.corpus
    if not spec:
        return None
    path = _corpus_file(spec) or (spec if Path(spec).is_dir() else None)
    if path is None:
        prefix, sep, rest = spec.partition(":")
        path = rest if sep and Path(rest).exists() else None
    return file_fingerprint(path).get("sha256") if path else None


#: What the manifest's ``calibrators`` record keeps of a calibrator's metadata (ε: the absolute one used, its mode).
_RECORDED = ("reference", "n", "dim", "model_fingerprint", "params", "eps", "eps_mode", "eps_relative", "model_check")


def calibration_request(model: Any, mspec: ModelSpec, cspec: Any, config: ExperimentConfig) -> str:
    """The hash of everything a fitted calibrator depends on: computed before fitting, so it keys reuse.

    The calibration and its parameters, the reference size and how the
    reference vectors are drawn, the model's content fingerprint and the
    content of the reference corpus file: a change to any of them means a new
    calibrator, and the calibrated cells computed with the old one are stale.
    """
    request = {"calibration": cspec.name, "params": cspec.params, "n_reference": config.settings.reference.size,
               "reference_kwargs": _reference_kwargs(mspec, config, model),
               "model_fingerprint": getattr(model, "fingerprint", None)}
    content = reference_content(config)
    if content is not None:  # absent key: requests of earlier versions keep their hash
        request["reference_sha256"] = content
    return content_hash(request)


def calibrator_for(model: Any, mspec: ModelSpec, cspec: Any, config: ExperimentConfig, out: Path,
                overwrite: str, log: Callable[[str], None], record: dict) -> Any:
    """Load the saved calibrator of (model, calibration) when it still fits, else fit and save it."""
    from ..calibration import fit_calibrator, load_calibrator, save_calibrator

    s = config.settings
    ref_kw = _reference_kwargs(mspec, config, model)
    req_hash = calibration_request(model, mspec, cspec, config)
    path = out / "calibrators" / slug(mspec.label) / f"{slug(cspec.label)}.npz"
    t0 = time.perf_counter()
    if path.exists() and overwrite != "all":
        try:
            cal = load_calibrator(path, require_hash=True)  # one saved before content hashes: refit
            meta = getattr(cal, "metadata_", {}) or {}
            if meta.get("request_hash") == req_hash:
                from ..calibration import check_compatible

                check_compatible(cal, model)
                record.update(path=str(path.relative_to(out)), reused=True, seconds=time.perf_counter() - t0,
                              **{k: meta.get(k) for k in _RECORDED})
                log(f"{mspec.label}: reusing calibrator {cspec.label} ({path.relative_to(out)})")
                return cal
            log(f"{mspec.label}: saved calibrator {cspec.label} does not match this config; refitting")
        except IsoeatError as exc:
            log(f"{mspec.label}: saved calibrator {cspec.label} unusable ({exc}); refitting")
    cal = fit_calibrator(model, cspec.name, n_reference=s.reference.size, reference_kwargs=ref_kw, **cspec.params)
    cal.metadata_ = {**(getattr(cal, "metadata_", {}) or {}), "request_hash": req_hash}
    save_calibrator(cal, path)
    meta = cal.metadata_
    record.update(path=str(path.relative_to(out)), reused=False, seconds=time.perf_counter() - t0,
                  **{k: meta.get(k) for k in _RECORDED})
    return cal


def given_calibrator(calibrator: Any, model: Any, mspec: ModelSpec, cspec: Any, out: Path, force: bool,
                     record: dict) -> Any:
    """A calibrator handed to the run (``--whitener FILE``, a cluster fit): checked, saved with the run, recorded."""
    from ..calibration import check_compatible, save_calibrator

    check_compatible(calibrator, model, force=force)
    path = out / "calibrators" / slug(mspec.label) / f"{slug(cspec.label)}.npz"
    save_calibrator(calibrator, path)
    meta = getattr(calibrator, "metadata_", {}) or {}
    record.update(path=str(path.relative_to(out)), reused=False, given=True, seconds=0.0,
                  **{k: meta.get(k) for k in _RECORDED},
                  **{k: v for k, v in meta.items() if k.startswith("reference_")})  # reference-SE, size used
    return calibrator


def run_weat_cell(cell: Cell, model: Any, calibrator: Any, config: ExperimentConfig, *,
                  force: bool = False) -> dict[str, Any]:
    from ..stats.weat import weat

    test = cell.extra["test"]
    res = weat(model, test, calibration=calibrator, rng=cell.seed, force=force, **config.settings.weat_kwargs())
    payload = {"result": res.to_dict(scores=True), "cosines": _cosines(model, test, calibrator)}
    if calibrator is not None:  # why d moved: the raw contrast along the reference's principal directions
        from ..diagnostics.mechanism import mechanism_from_vectors

        sets = {role: model.lookup(ws.words).vectors for role, ws in test.sets().items()}
        payload["mechanism"] = mechanism_from_vectors(sets, calibrator)
    return payload


def metric_options(config: ExperimentConfig) -> dict[str, Any]:
    """Options of the grid's metrics from the settings: ``permutations`` and ``method``; p two-sided.

    ``settings.alternative`` (WEAT's one-sided default) is not passed on: RND's
    orientation is the opposite of the other signed metrics', so the metrics
    keep their two-sided default. Pairs: each test's own, else A and B zipped,
    else the gender defaults (:mod:`isoeat.metrics._pairs`).
    """
    s = config.settings
    return {"alternative": "two-sided", "method": s.method, "n_permutations": s.permutations}


def run_metric_cell(cell: Cell, model: Any, calibrator: Any, config: ExperimentConfig, *,
                    force: bool) -> dict[str, Any]:
    """Every configured metric on the cell's test in the cell's space (the model and calibrator the WEAT cells use).

    Metric ``m`` draws from the stream ``("metric", m, TEST)`` of the run's seed (so its numbers do
    not depend on which others are listed; ``isoeat.metric(..., rng=seed)`` replays it, as does
    ``isoeat metric --seed SEED``). A
    metric that cannot be computed on the test (no defining pairs, a pair word
    missing) is recorded with its error; the others are kept.
    """
    from ..metrics.api import metric
    from ..metrics.registry import METRICS

    test, opts = cell.extra["test"], metric_options(config)
    records: list[dict[str, Any]] = []
    for name in config.metrics:
        spec = METRICS.get(name)
        seed = cell.seed
        try:
            res = metric(model, spec.name, test, calibration=calibrator, rng=seed, force=force,
                         min_coverage=config.settings.min_coverage, allow_overlap=config.settings.allow_overlap,
                         **{k: v for k, v in opts.items() if k in spec.options})
            records.append(res.to_dict(scores=True))
        except IsoeatError as exc:
            records.append({"metric": spec.name, "test": test.id, "seed": seed,
                            "error": {"type": type(exc).__name__, "message": str(exc), "user_error": True}})
    return {"result": {"test": test.id, "metrics": records}}


def run_anisotropy_cell(cell: Cell, model: Any, calibrator: Any, mspec: ModelSpec,
                         config: ExperimentConfig, out: Path) -> dict[str, Any]:
    from ..diagnostics import anisotropy  # type: ignore[import-not-found]

    spec = config.anisotropy
    assert spec is not None
    # static vectors: sample from the top reference.size rows (the ZCA reference); contextual encoders: from
    # the word vectors of `sample` reference sentences (a pool of reference.size sentences would not fit in memory)
    pool = config.settings.reference.size if mspec.is_static else min(config.settings.reference.size, spec.sample)
    res = anisotropy(model, calibrator, n_samples=spec.sample, top_k=spec.components, rng=cell.seed,
                     reference_size=pool, matrix_size=spec.heatmap_size,
                     reference_kwargs=_reference_kwargs(mspec, config, model), return_matrix=True)
    rec = res.to_dict()
    mat = getattr(res, "cosine_matrix", None)
    if mat is not None:
        k = min(spec.heatmap_size, mat.shape[0])
        npz = cell.path.with_suffix(".npz")
        import io

        buf = io.BytesIO()
        np.savez_compressed(buf, cosine=np.asarray(mat[:k, :k], dtype=np.float32))
        atomic_write_bytes(npz, buf.getvalue())
        rec["heatmap_file"] = npz.name
        rec["heatmap_size"] = int(k)
    return {"result": rec}


def run_similarity_cell(cell: Cell, model: Any, calibrator: Any, config: ExperimentConfig) -> dict[str, Any]:
    from .. import similarity as sim  # type: ignore[attr-defined]

    spec = config.similarity
    assert spec is not None
    fn = getattr(sim, "compare_similarity", None)
    if fn is None:
        raise ConfigError("similarity: isoeat.similarity has no compare_similarity() in this installation")
    comp = fn(model, cell.item, calibrator, n_resamples=spec.bootstrap, rng=cell.seed)
    raw, cal, boot = comp.raw, comp.calibrated, comp.bootstrap
    rec = {
        "benchmark": cell.item, "benchmark_title": getattr(raw, "title", cell.item), "kind": getattr(raw, "kind", ""),
        "source": getattr(raw, "source", ""), "n_pairs": raw.n_pairs, "n_total": raw.n_total,
        "coverage": raw.coverage, "n_missing": len(getattr(raw, "missing", ()) or ()),
        "rho_raw": raw.spearman, "rho_calibrated": cal.spearman, "delta": cal.spearman - raw.spearman,
        "ci_low": boot.ci_low if boot else None, "ci_high": boot.ci_high if boot else None,
        "ci_level": boot.ci_level if boot else None, "p_value": boot.p_value if boot else None,
        "n_resamples": boot.n_resamples if boot else 0, "n_valid_resamples": boot.n_valid if boot else 0,
        "seed": boot.seed if boot else None, "method": getattr(raw, "method", ""),
    }
    return {"result": rec, "detail": comp.to_dict()}
