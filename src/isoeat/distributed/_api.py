"""Driver side: plan the shards, run them on a Dask cluster, tree-reduce, fit."""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import ConfigError, DataFormatError, IsoeatWarning, MissingDependencyError, SchedulerUnreachableError
from .._types import fingerprint_of, name_of, reference_unit_of, streams_reference
from .._validate import check_choice, check_int, check_real
from ..calibration.moments import CovarianceAccumulator
from . import _worker

__all__ = ["INSTALL_LINE", "SchedulerUnreachableError", "require_dask", "connect", "ShardPlan", "ReferenceSample",
           "plan_reference_shards", "fit_calibrator_distributed", "encode_words_distributed",
           "worker_model_loads", "DEFAULT_SENTENCES_PER_SHARD", "DEFAULT_ROWS_PER_SHARD"]

INSTALL_LINE = 'pip install "isoeat[distributed]"'
#: Default shard sizes (a shard is one task); independent of the number of workers, so the
#: result of a run does not depend on the cluster it ran on.
DEFAULT_SENTENCES_PER_SHARD = 1024
DEFAULT_ROWS_PER_SHARD = 10_000


def require_dask() -> Any:
    """Import ``dask.distributed`` or raise :class:`~isoeat.MissingDependencyError` with the pip line."""
    try:
        import distributed
    except ImportError:
        raise MissingDependencyError(
            f"distributed execution needs dask and distributed: {INSTALL_LINE}"
        ) from None
    return distributed


class _Connection:
    """A client to use, and whether we made it (then we close it)."""

    def __init__(self, client: Any, owned: bool, address: str) -> None:
        self.client, self.owned, self.address = client, owned, address

    def __enter__(self) -> Any:
        return self.client

    def __exit__(self, *exc: Any) -> None:
        if self.owned:
            self.client.close()


def connect(client: Any = None, scheduler: str | None = None, *, timeout: float = 10.0) -> _Connection:
    """A context manager giving a ``distributed.Client``.

    ``client``: used as it is (not closed). ``scheduler``: an address such as
    ``tcp://10.0.0.5:8786`` (or a scheduler file path ending in ``.json``); a
    client is opened with ``timeout`` seconds to connect and closed at the end.
    An unreachable scheduler raises :class:`SchedulerUnreachableError` naming
    the address and the timeout.
    """
    if client is not None and scheduler is not None:
        raise ConfigError("give a Dask client or a scheduler address, not both")
    if client is not None:
        if not hasattr(client, "submit") or not hasattr(client, "gather"):
            raise ConfigError(f"client must be a dask.distributed.Client, got {type(client).__name__}")
        return _Connection(client, False, str(getattr(client.scheduler, "address", "?")))
    if scheduler is None:
        raise ConfigError("give a Dask client (client=) or a scheduler address (scheduler=)")
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ConfigError(f"scheduler must be an address such as tcp://HOST:8786, got {scheduler!r}")
    timeout = check_real("timeout (seconds)", timeout, lo=0, lo_open=True, finite=False)
    distributed = require_dask()
    kwargs: dict[str, Any] = {"timeout": timeout, "set_as_default": False}
    if scheduler.endswith(".json"):
        kwargs["scheduler_file"] = scheduler
    else:
        kwargs["address"] = scheduler
    t0 = time.monotonic()
    try:
        c = distributed.Client(**kwargs)
    except (OSError, TimeoutError, ValueError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SchedulerUnreachableError(
            f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s "
            f"(gave up after {time.monotonic() - t0:.1f} s: {why})"
        ) from None
    return _Connection(c, True, scheduler)


# -- planning -------------------------------------------------------------------------------------------
@dataclass
class ShardPlan:
    """The ordered shards of one reference sample, and what they were drawn from.

    ``shards`` are plain dicts (the task payloads); ``meta`` is recorded in
    the fitted calibrator's ``metadata_["distributed"]``.
    """

    model_spec: str
    model_options: dict[str, Any]
    shards: list[dict[str, Any]]
    description: str
    meta: dict[str, Any] = field(default_factory=dict)
    model_name: str = "?"
    model_fingerprint: Any = None

    def __len__(self) -> int:
        return len(self.shards)

    def local_statistics(self) -> Iterator[dict[str, Any]]:
        """Each shard's packed statistics computed in this process, in shard order (the reference run)."""
        for s in self.shards:
            yield _worker.shard_statistics(self.model_spec, self.model_options, s)

    def fit_local(self, calibration: str = "zca", **params: Any) -> Any:
        """The single-process result on the same shards: ``merge_all`` of the shard statistics in order."""
        parts = [_worker.unpack(p) for p in self.local_statistics()]
        acc = CovarianceAccumulator.merge_all(parts)
        return _finish(self, acc, calibration, params, workers=0, address="in-process",
                       empty=[i for i, p in enumerate(parts) if p.n == 0])


def _split(n_items: int, shards: Any, default_size: int) -> list[tuple[int, int]]:
    if shards is None:
        k = max(1, math.ceil(n_items / default_size))
    else:
        k = check_int("shards", shards, lo=1)
    bounds = np.linspace(0, n_items, k + 1).round().astype(int)
    return [(int(bounds[i]), int(bounds[i + 1])) for i in range(k)]


def _resolve_corpus(model: Any, corpus: Any, seed: int) -> Any:
    if corpus is None:
        return model.corpus
    if hasattr(corpus, "sample") and hasattr(corpus, "fingerprint"):
        return corpus
    from ..corpora import Corpus, load_corpus

    if isinstance(corpus, (list, tuple)):
        return Corpus.from_sentences(list(corpus), name="sentences", seed=seed)
    return load_corpus(str(corpus), seed=seed)


def plan_reference_shards(
    model_spec: str,
    *,
    n_reference: int = 100_000,
    corpus: Any = None,
    shards: int | None = None,
    unit: str | None = None,
    seed: int = 0,
    model_options: dict[str, Any] | None = None,
    reference_kwargs: dict[str, Any] | None = None,
) -> ShardPlan:
    """Draw the reference sample as the single-process path does and cut it into ordered shards.

    Contextual models (with ``reference_batches``): the ``n_reference``
    sentences of ``corpus.sample(n_reference, rng=seed)`` (``corpus``
    default: the model's own, ``auto`` (the largest present offline) unless set in
    ``model_options``), split into ``shards`` contiguous parts (default:
    one per 1024 sentences). Static models: row ranges of
    ``reference_vectors(n_reference)`` (default: one per 10,000 rows); each
    worker reads its rows from its own copy of the model.
    """
    from ..backends import load_model

    if not isinstance(model_spec, str) or not model_spec.strip():
        raise ConfigError(f"model_spec must be a model spec string (e.g. 'minilm'), got {model_spec!r}")
    n_reference = check_int("n_reference", n_reference, lo=1)
    seed = check_int("seed", seed, lo=0)
    options = dict(model_options or {})
    model = load_model(model_spec, **options)  # contextual encoders load no weights here
    ref_kwargs = dict(reference_kwargs or {})
    if unit is not None:
        unit = check_choice("unit", unit, ("word", "sentence"))
    if streams_reference(model):
        if "text" in ref_kwargs:
            if corpus is not None:
                raise ConfigError("give the reference corpus as corpus= or reference_kwargs text=, not both")
            corpus = ref_kwargs.pop("text")
        if ref_kwargs:
            raise ConfigError(f"reference_kwargs not used by the distributed path: {', '.join(ref_kwargs)}")
        corp = _resolve_corpus(model, corpus, int(seed))
        if len(corp) == 0:
            raise DataFormatError(f"corpus {getattr(corp, 'name', '?')}: no usable sentences")
        sents = tuple(corp.sample(int(n_reference), rng=int(seed)))
        unit_used = unit or reference_unit_of(model)
        parts = _split(len(sents), shards, DEFAULT_SENTENCES_PER_SHARD)
        name, cfp, sha = getattr(corp, "name", "?"), corp.fingerprint, getattr(corp, "source_sha256", None)
        payloads = [{"kind": "sentences", "index": i, "sentences": sents[a:b], "unit": unit,
                     "seed": int(seed), "corpus_name": name, "corpus_fingerprint": cfp, "corpus_sha256": sha}
                    for i, (a, b) in enumerate(parts)]
        meta = {"corpus": name, "corpus_fingerprint": cfp, "corpus_sha256": sha, "unit": unit_used,
                "seed": int(seed), "n_requested": int(n_reference), "n_sentences": len(sents),
                "shard_sizes": [b - a for a, b in parts]}
        desc = (f"unit={unit_used}: reference vectors of {len(sents)} sentences sampled (seed {seed}) from corpus "
                f"{name} (fingerprint {cfp}) by {name_of(model, model_spec)}, in {len(parts)} shards")
        if len(sents) < n_reference:
            desc += f" (asked for {n_reference}; the corpus has {len(sents)})"
    else:
        if corpus is not None or unit is not None:
            raise ConfigError(
                f"corpus= and unit= apply to contextual models; {model_spec!r} is static (its reference vectors "
                "are vocabulary rows; use reference_kwargs={'text': PATH} for a reference text)"
            )
        if "text" in ref_kwargs:
            vecs, desc = model.reference_vectors(int(n_reference), **ref_kwargs)
            m = int(vecs.shape[0])
            del vecs
        else:
            m = min(int(n_reference), len(model))
            desc = f"top {m} vocabulary rows by frequency of {model.name}"
            if m < n_reference:
                desc += f" (asked for {n_reference}; the vocabulary has {len(model)})"
        parts = _split(m, shards, DEFAULT_ROWS_PER_SHARD)
        payloads = [{"kind": "rows", "index": i, "start": a, "stop": b, "reference_kwargs": ref_kwargs}
                    for i, (a, b) in enumerate(parts)]
        meta = {"corpus": None, "corpus_fingerprint": None, "corpus_sha256": None, "unit": "vocabulary-row",
                "seed": None, "n_requested": int(n_reference), "n_rows": m, "shard_sizes": [b - a for a, b in parts]}
        desc = f"{desc}, in {len(parts)} shards"
    meta["shards"] = len(parts)
    return ShardPlan(model_spec, options, payloads, desc, meta, name_of(model, model_spec),
                     fingerprint_of(model))


# -- running ---------------------------------------------------------------------------------------------
def _tree_reduce(client: Any, futures: list[Any], token: str) -> Any:
    """Pairwise reduction on the cluster, in shard order: (0,1), (2,3), ...; an odd last one moves up."""
    level = 0
    while len(futures) > 1:
        nxt = []
        for i in range(0, len(futures), 2):
            if i + 1 < len(futures):
                nxt.append(client.submit(_worker.merge_packed, futures[i], futures[i + 1],
                                         key=f"isoeat-merge-{token}-{level}-{i // 2}"))
            else:
                nxt.append(futures[i])
        futures = nxt
        level += 1
    return futures[0]


def _n_workers(client: Any) -> int:
    try:
        return len(client.scheduler_info(n_workers=-1)["workers"])
    except TypeError:  # older distributed
        return len(client.scheduler_info()["workers"])


def _finish(plan: ShardPlan, acc: CovarianceAccumulator, calibration: str, params: dict[str, Any], *,
            workers: int, address: str, empty: list[int]) -> Any:
    from .. import __version__
    from ..calibration import CALIBRATORS

    if empty:
        warnings.warn(f"{len(empty)} shard(s) gave no reference vectors (shard(s) {', '.join(map(str, empty[:10]))}"
                      + (" ..." if len(empty) > 10 else "") + ")", IsoeatWarning, stacklevel=3)
    if acc.n < 2:
        raise DataFormatError(f"the {len(plan)} shard(s) gave {acc.n} reference vector(s); need at least 2")
    cal_cls: Any = CALIBRATORS[calibration]  # a calibration with mergeable statistics (checked by the plan)
    cal = cal_cls.from_statistics(acc, **params)
    cal.metadata_ = {
        "calibration": calibration,
        "params": dict(cal.get_params()),
        "model": plan.model_name,
        "model_fingerprint": plan.model_fingerprint,
        "reference": plan.description,
        "n": int(acc.n),
        "dim": int(acc.dim or 0),  # set: at least 2 vectors were merged
        "isoeat_version": __version__,
        "distributed": {**plan.meta, "workers": int(workers), "scheduler": address, "empty_shards": list(empty),
                        "reduction": "pairwise tree in shard order (Chan-Golub-LeVeque)"},
    }
    from ..calibration.registry import eps_metadata

    cal.metadata_.update(eps_metadata(cal))
    return cal


def _check_calibration(calibration: str, params: dict[str, Any]) -> None:
    from ..calibration import CALIBRATORS, make_calibrator

    make_calibrator(calibration, **params)  # unknown names and parameters fail here, before any work
    if not hasattr(CALIBRATORS[calibration], "from_statistics"):
        ok = sorted(n for n, c in CALIBRATORS.items() if hasattr(c, "from_statistics"))
        raise ConfigError(
            f"calibration {calibration!r} cannot be fitted from merged mean/covariance statistics; "
            f"distributed fitting supports: {', '.join(ok)}"
        )


@dataclass(frozen=True)
class ReferenceSample:
    """The reference sample of a distributed fit besides its size: what :func:`plan_reference_shards` takes
    (``corpus``, ``shards``, ``unit``, ``seed``, ``model_options``, ``reference_kwargs``)."""

    corpus: Any = None
    shards: int | None = None
    unit: str | None = None
    seed: int = 0
    model_options: dict[str, Any] | None = None
    reference_kwargs: dict[str, Any] | None = None

    @classmethod
    def take(cls, options: dict[str, Any], base: ReferenceSample | None = None) -> ReferenceSample:
        """``base`` (default: the defaults) with its fields given by name in ``options`` (removed from it)."""
        from dataclasses import fields, replace

        if base is not None and not isinstance(base, cls):
            raise ConfigError(f"sample must be a ReferenceSample, got {type(base).__name__}")
        return replace(base or cls(), **{f.name: options.pop(f.name) for f in fields(cls) if f.name in options})


def fit_calibrator_distributed(
    model_spec: str,
    *,
    client: Any = None,
    scheduler: str | None = None,
    calibration: str = "zca",
    n_reference: int = 100_000,
    sample: ReferenceSample | None = None,
    timeout: float = 10.0,
    retries: int = 0,
    **params: Any,
) -> Any:
    """Fit a calibrator (ZCA) on a Dask cluster: shards encoded on workers, statistics tree-reduced.

    Parameters
    ----------
    model_spec : str
        What each worker passes to :func:`isoeat.load_model` (with
        ``model_options``); it must name the same files on every worker.
    client : dask.distributed.Client, optional
        A connected client (left open). Or ``scheduler``: an address
        (``tcp://HOST:8786``) or scheduler-file path; a client is opened
        with ``timeout`` seconds to connect, and closed at the end.
        With neither, every shard runs here, one after the other (the
        single-process reference run on the same shards).
    calibration : str
        A calibrator that can be fitted from merged statistics (``"zca"``).
    n_reference : int
        The reference size (see :func:`plan_reference_shards`).
    sample : ReferenceSample, optional
        The rest of the reference sample (:class:`ReferenceSample`), also by name: ``corpus``, ``shards``,
        ``unit``, ``seed``, ``model_options``, ``reference_kwargs`` (see :func:`plan_reference_shards`).
    retries : int
        Extra attempts for a shard task that raised (a worker that dies is
        always rescheduled by Dask, up to ``distributed.scheduler.allowed-failures``).
    **params
        Calibrator parameters (``eps=1e-3``).

    Returns
    -------
    The fitted calibrator; ``metadata_`` is that of
    :func:`~isoeat.calibration.fit_calibrator` plus ``"distributed"``: shards,
    shard sizes, workers, scheduler, corpus and its fingerprint, unit, seed,
    empty shards. The result does not depend on the number of workers.
    """
    params = dict(params)
    ref = ReferenceSample.take(params, sample)  # the rest are the calibrator's parameters
    _check_calibration(calibration, params)
    retries = check_int("retries", retries, lo=0)
    local = client is None and scheduler is None
    if not local and client is None:
        require_dask()
    plan = plan_reference_shards(model_spec, n_reference=n_reference, corpus=ref.corpus, shards=ref.shards,
                                 unit=ref.unit, seed=ref.seed, model_options=ref.model_options,
                                 reference_kwargs=ref.reference_kwargs)
    if local:
        return plan.fit_local(calibration, **params)
    with connect(client, scheduler, timeout=timeout) as c:
        return run_plan(c, plan, calibration, retries=retries, address=scheduler, **params)


def run_plan(client: Any, plan: ShardPlan, calibration: str = "zca", *, retries: int = 0,
             address: str | None = None, **params: Any) -> Any:
    """Run a :class:`ShardPlan` on ``client``: one task per shard, tree reduction, then fit."""
    from dask.base import tokenize

    token = tokenize(plan.model_spec, plan.model_options, plan.meta, time.time_ns())[:12]
    futures = [client.submit(_worker.shard_statistics, plan.model_spec, plan.model_options, s,
                             key=f"isoeat-shard-{token}-{s['index']}", retries=retries)
               for s in plan.shards]
    root = _tree_reduce(client, futures, token)
    try:
        packed = root.result()
    finally:
        for f in futures:
            f.release()
    acc = _worker.unpack(packed)
    empty = sorted(packed.get("empty", []))
    addr = address or str(getattr(client.scheduler, "address", "?"))
    return _finish(plan, acc, calibration, params, workers=_n_workers(client), address=addr, empty=empty)


def worker_model_loads(client: Any) -> dict[str, dict[str, int]]:
    """``{worker address: {model key: times loaded}}``: each should be 1 (models load once per worker)."""
    return client.run(_worker.model_load_counts)


# -- word vectors ----------------------------------------------------------------------------------------
def encode_words_distributed(
    model_spec: str,
    words: Sequence[str],
    *,
    client: Any = None,
    scheduler: str | None = None,
    model_options: dict[str, Any] | None = None,
    shards: int | None = None,
    timeout: float = 10.0,
    retries: int = 0,
) -> Any:
    """Look ``words`` up on the workers (aggregated contextual vectors are computed there).

    The distinct words are split into ``shards`` (default: one per worker)
    and each worker runs ``model.lookup`` on its part with its cached model.
    Returns a :class:`~isoeat.backends.base.Lookup` (a ``ContextualLookup``
    for ``hf:`` models) in the order of ``words``, as ``model.lookup(words)``
    would. ``truncated`` counts truncated contexts once per distinct word.
    """
    from ..backends.base import Lookup

    words = tuple(words)
    for w in words:
        if not isinstance(w, str) or not w.strip():
            raise ConfigError(f"words must be non-empty strings, got {w!r}")
    uniq = list(dict.fromkeys(words))
    options = dict(model_options or {})
    if client is None and scheduler is None:
        results = [_worker.lookup_words(model_spec, options, uniq)] if uniq else []
        n_workers = 1
    else:
        with connect(client, scheduler, timeout=timeout) as c:
            n_workers = max(1, _n_workers(c))
            k = n_workers if shards is None else shards
            parts = [p for p in (uniq[a:b] for a, b in _split(len(uniq), k, 1)) if p]
            futs = [c.submit(_worker.lookup_words, model_spec, options, p, retries=retries, pure=False)
                    for p in parts]
            results = c.gather(futs)
    fps = {r["fingerprint"] for r in results}
    if len(fps) > 1:
        from .._errors import FingerprintMismatchError

        raise FingerprintMismatchError(f"workers encoded the words with different models (fingerprints "
                                       f"{', '.join(sorted(map(str, fps)))})")
    dims = {r["dim"] for r in results}
    if len(dims) > 1:
        from .._errors import DimensionMismatchError

        raise DimensionMismatchError(f"workers returned vectors of dimensions {sorted(dims)}")
    dim = dims.pop() if dims else 0
    vec: dict[str, np.ndarray] = {}
    folded: dict[str, str] = {}
    how: dict[str, str] = {}
    gaps: dict[str, str] = {}
    fb: set[str] = set()
    nctx: dict[str, int] = {}
    contextual = any(r["contextual"] for r in results)
    truncated = 0
    for r in results:
        vec.update(r["vectors"])
        folded.update(r["case_folded"])
        how.update(r.get("embedded", {}))
        gaps.update(r.get("missing_parts", {}))
        fb.update(r["fallback"])
        nctx.update(r["n_contexts"])
        truncated += r["truncated"]
    found = tuple(w for w in words if w in vec)
    mat = np.vstack([vec[w] for w in found]) if found else np.zeros((0, dim))
    missing = tuple(w for w in words if w not in vec)
    case_folded = tuple((w, folded[w]) for w in words if w in folded)
    if contextual:
        from ..backends.transformer import ContextualLookup

        return ContextualLookup(words, mat, found, missing, case_folded,
                                fallback=tuple(w for w in found if w in fb),
                                n_contexts=tuple(int(nctx.get(w, 1)) for w in found), truncated=truncated)
    return Lookup(words, mat, found, missing, case_folded, tuple((w, how[w]) for w in found if w in how),
                  tuple((w, gaps[w]) for w in missing if w in gaps))
