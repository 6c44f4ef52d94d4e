"""The cells of an experiment grid: planning (seeds, files, content hashes) and the folder's model adapters.

A cell is one unit of work: a WEAT in one (model, calibration) space, the
configured bias metrics of one test in one space, an anisotropy
measurement, or a similarity benchmark. :func:`plan_cells` lays
them out with their seed streams (see :mod:`isoeat.experiments.runner` for the
seed rule) and the hash of every input that determines them; the engine
(:mod:`isoeat.experiments.engine`) computes them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import ConfigError, IsoeatError
from .._records import content_hash
from .._types import CorpusModel, fingerprint_of, kind_of, streams_reference
from ..calibration.io import calibrator_digest  # noqa: F401 - part of this module's API (cell hashes)
from ._formats import CELL_FORMAT  # the one home of the format versions
from ._store import read_json, slug
from .config import ExperimentConfig, ModelSpec, test_hash
from .engine import metric_options

__all__ = ["Cell", "plan_cells", "check_labels", "calibrator_digest", "calibration_request", "reference_content",
           "CELL_FORMAT", "load_model_for", "calibrator_for", "given_calibrator", "reference_spec", "reference_corpus",
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
        h = content_hash({"protocol": protocol, "model": model_identity(m), "calibration": c.to_dict(), "seed": seed,
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
                        metrics=list(config.metrics),
                        options=metric_options(config.settings.method, config.settings.permutations))
        if config.anisotropy:
            for c in config.calibrations:  # raw and calibrated measured on the same sample (one stream)
                add("anisotropy", m, c, "anisotropy", ("anisotropy", config.anisotropy.frame),
                    out / "anisotropy" / mdir / f"{slug(c.label)}.json", anisotropy=True)
        for b in benches:
            for c in config.calibrated:
                add("similarity", m, c, b, ("similarity", b),
                    out / "similarity" / mdir / slug(c.label) / f"{slug(b)}.json", benchmark=b)
    return cells


def check_labels(config: ExperimentConfig, also: Mapping[str, Iterable[str]] | None = None) -> None:
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


def reference_spec(mspec: ModelSpec, config: ExperimentConfig, model: Any = None, *,
                   for_check: bool = False) -> Any:
    """The reference sample of a grid's calibrators for ``mspec`` (:class:`~isoeat.calibration.sample.ReferenceSpec`).

    ``settings.reference.size`` vectors of the model's own reference, or of the
    configured corpus file's words (static vectors; a contextual encoder reads
    the corpus as its sentences). ``for_check``: the isotropy check's pool — the
    same sample; for a contextual encoder the word vectors of its first
    ``anisotropy.sample`` sentences (the same sentences the calibrator starts
    with: a pool of ``size`` sentences' word vectors would not fit in memory).
    """
    from ..calibration.sample import ReferenceSpec

    r = config.settings.reference
    # auto: the pool it draws its shards from (a fitted calibrator records the sample it used)
    size = r.max_size if isinstance(r.size, str) else int(r.size)
    static = mspec.is_static if model is None else not _contextual(model)
    if for_check and not static and config.anisotropy is not None:
        size = min(size, config.anisotropy.sample)
    text = _corpus_file(config.settings.reference.corpus) if static else None
    return ReferenceSpec(size=size, text=text)


def _contextual(model: Any) -> bool:
    return streams_reference(model)  # the one question (_types): an encoder that streams its reference


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
    try:
        from ..backends._registry import spec_kind

        if spec_kind(spec) == "sentence":
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
    if kind_of(model) != "transformer" or not isinstance(model, CorpusModel):
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


def _recorded(meta: dict) -> dict[str, Any]:
    """The manifest's record of a calibrator's metadata: :data:`_RECORDED`, the reference size asked for and a
    contextual reference's sentences where known (the protocol column reads them)."""
    return {**{k: meta.get(k) for k in _RECORDED},
            **{k: meta[k] for k in ("reference_units", "reference_asked") if meta.get(k) is not None}}


def model_identity(mspec: ModelSpec) -> dict[str, Any]:
    """What a grid says of a model: its spec, load options, layer and contexts per word (part of every cell's
    identity, and of a contextual encoder's calibrator request)."""
    return {"spec": mspec.spec, "options": mspec.options, "layer": mspec.layer,
            "contexts_per_word": mspec.contexts_per_word}


def model_corpus_content(model: Any) -> str | None:
    """The content of the corpus an encoder reads its reference sentences from (its own ``corpus`` option, else
    ``settings.reference.corpus``, as :func:`load_model_for` passes it): ``fingerprint`` and ``source_sha256``, as
    :func:`corpus_content`; None for a model without a corpus. Loads the corpus, and raises where it cannot be
    read (the protocol check reads the property too)."""
    if not isinstance(model, CorpusModel):
        return None
    corp = model.corpus
    return f"{getattr(corp, 'fingerprint', None)}|{getattr(corp, 'source_sha256', None)}"


def calibration_request(model: Any, mspec: ModelSpec, cspec: Any, config: ExperimentConfig) -> str:
    """The hash of everything a fitted calibrator depends on: computed before fitting, so it keys reuse.

    The calibration and its parameters, the reference size and how the
    reference vectors are drawn, the model's content fingerprint and the
    content of the reference corpus file; for a contextual encoder also its :func:`model_identity` (its load
    options: the reference unit, occurrences, its corpus) and the content of the corpus it reads its reference
    sentences from: a change to any of them means a new calibrator, and the calibrated cells computed with the
    old one are stale. Raises where the encoder's corpus cannot be read.
    """
    request = {"calibration": cspec.name, "params": cspec.params,
               "reference": reference_spec(mspec, config, model).key(),
               "model_fingerprint": fingerprint_of(model), "reference_sha256": reference_content(config)}
    if streams_reference(model):  # an encoder's reference vectors also depend on how it was loaded (unit,
        # occurrences, corpus...) and on its corpus's content; static models keep their request as before
        request["model"] = model_identity(mspec)
        request["model_corpus"] = model_corpus_content(model)
    route = config_route(config, mspec).key(model, cspec.name, config.tests)
    if route is not None:  # a sharded fit (reference-SE, auto, a contextual model's redraws); a plain one as before
        request["route"] = route
    return content_hash(request)


def config_route(config: ExperimentConfig, mspec: ModelSpec) -> Any:
    """The calibrator route (:class:`~isoeat.experiments.route.Route`) of ``mspec``'s calibrators in ``config``."""
    from .route import Route

    text = _corpus_file(config.settings.reference.corpus) if mspec.is_static else None
    return Route.of_settings(config.settings, text)


def _redraws_wanted(meta: dict, replicates: int, tests: Any) -> bool:
    """A saved plain-fit calibrator lacks the stability redraws the config now asks for (of every test)."""
    if not replicates:
        return False
    if meta.get("reference_replicates_note"):
        return False
    got = meta.get("reference_replicate_d")
    return not (isinstance(got, dict) and meta.get("reference_replicates") == replicates
                and all(t.id in got for t in tests))


def calibrator_for(engine: Any, mspec: ModelSpec, cspec: Any, config: ExperimentConfig, out: Path,
                   overwrite: str, log: Callable[[str], None], record: dict) -> Any:
    """Load the saved calibrator of (model, calibration) when it still fits, else fit it (``engine.fit``) and
    save it."""
    from ..calibration import load_calibrator, save_calibrator

    model = engine.model
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
                route = config_route(config, mspec)
                if _redraws_wanted(meta, route.replicates(model, cspec.name), config.tests):
                    from .route import with_redraws  # a grown grid: the new tests' redraws too (the same rows)

                    cal = with_redraws(engine, cal, config.tests, cspec.name, cspec.params, route,
                                       _fit_options(config, log))
                    save_calibrator(cal, path)
                    meta = cal.metadata_
                record.update(path=str(path.relative_to(out)), reused=True, seconds=time.perf_counter() - t0,
                              **_route_record(meta))
                log(f"{mspec.label}: reusing calibrator {cspec.label} ({path.relative_to(out)})")
                return cal
            log(f"{mspec.label}: saved calibrator {cspec.label} does not match this config; refitting")
        except IsoeatError as exc:
            log(f"{mspec.label}: saved calibrator {cspec.label} unusable ({exc}); refitting")
    from .route import fit_route

    cal, _ = fit_route(engine, config.tests, cspec.name, cspec.params, config_route(config, mspec),
                       reference_spec(mspec, config, model), _fit_options(config, log))
    cal.metadata_ = {**(getattr(cal, "metadata_", {}) or {}), "request_hash": req_hash}
    save_calibrator(cal, path)
    record.update(path=str(path.relative_to(out)), reused=False, seconds=time.perf_counter() - t0,
                  **_route_record(cal.metadata_))
    return cal


def _fit_options(config: ExperimentConfig, log: Callable[[str], None]) -> Any:
    """The cells' WEAT options as the calibrator route's :class:`~isoeat.experiments.route.FitOptions`."""
    from .route import FitOptions

    s = config.settings
    p_kwargs = {k: v for k, v in s.weat_kwargs().items() if k in ("alternative", "method", "n_permutations",
                                                                    "exact_memory")}
    return FitOptions(alpha=s.alpha, ddof=s.ddof, min_coverage=s.min_coverage, p_kwargs=p_kwargs, log=log)


def _route_record(meta: dict) -> dict[str, Any]:
    """The manifest's record of a calibrator: :func:`_recorded`, and its reference-SE, size used and redraws."""
    sharded = "reference_mode" in meta  # fit_reference's: the sample it used is the isotropy check's pool too
    return {**_recorded(meta), **{k: v for k, v in meta.items()
                                  if k.startswith("reference_") and (sharded or k != "reference_spec")}}


def given_calibrator(calibrator: Any, model: Any, mspec: ModelSpec, cspec: Any, out: Path, force: bool,
                     record: dict) -> Any:
    """A calibrator handed to the run (``--whitener FILE``, a cluster fit): checked, saved with the run, recorded."""
    from ..calibration import check_compatible, save_calibrator

    check_compatible(calibrator, model, force=force)
    path = out / "calibrators" / slug(mspec.label) / f"{slug(cspec.label)}.npz"
    save_calibrator(calibrator, path)
    meta = getattr(calibrator, "metadata_", {}) or {}
    record.update(path=str(path.relative_to(out)), reused=False, given=True, seconds=0.0,
                  **_route_record(meta))  # and the reference-SE, the size used
    return calibrator
