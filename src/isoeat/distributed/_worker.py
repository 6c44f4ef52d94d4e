"""What runs on a Dask worker: the per-process model cache and the shard tasks.

Everything here is a plain module-level function so that Dask sends it by
reference (``isoeat.distributed._worker.shard_statistics``), never a pickled
model: a task carries a model spec, its options and the shard (sentences or a
row range) and returns plain numpy arrays (:func:`pack`). Each worker process
loads a model once, on its first task for that (spec, options), and keeps it
in :data:`_MODELS` for every later task; :func:`model_load_counts` (run with
``client.run``) says how often each worker loaded what.

Importing this module imports neither Dask nor torch.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._errors import DataFormatError, DimensionMismatchError, FingerprintMismatchError
from .._types import VocabularyModel, fingerprint_of
from ..calibration.moments import CovarianceAccumulator

__all__ = ["get_model", "model_load_counts", "clear_model_cache", "shard_statistics", "merge_packed", "pack",
           "unpack", "lookup_words", "KILL_ONCE_ENV"]

#: Testing aid: when set to a path, the first shard task of any worker that finds no file there
#: creates it and ends its worker process abruptly (``os._exit``), to exercise Dask's rescheduling.
KILL_ONCE_ENV = "ISOEAT_DISTRIBUTED_KILL_ONCE"

#: Models kept per worker process (least recently used dropped beyond this).
MAX_CACHED_MODELS = 4

_LOCK = threading.Lock()
_MODELS: OrderedDict[str, tuple[Any, threading.Lock]] = OrderedDict()
_LOAD_COUNTS: dict[str, int] = {}


def model_key(spec: str, options: dict[str, Any] | None) -> str:
    """The cache key of a (spec, options) pair: JSON with sorted keys."""
    from .._records import canonical_json

    return canonical_json([spec, options or {}])


def get_model(spec: str, options: dict[str, Any] | None = None) -> tuple[Any, threading.Lock]:
    """The model for ``(spec, options)`` in this process, loaded on first use, and its use lock.

    The lock serialises use of one model object by the threads of a worker
    (encoders keep memo tables and are not meant for concurrent calls).
    """
    key = model_key(spec, options)
    with _LOCK:
        hit = _MODELS.get(key)
        if hit is not None:
            _MODELS.move_to_end(key)
            return hit
        from ..backends import load_model

        model = load_model(spec, **(options or {}))
        entry = (model, threading.Lock())
        _MODELS[key] = entry
        _LOAD_COUNTS[key] = _LOAD_COUNTS.get(key, 0) + 1
        while len(_MODELS) > MAX_CACHED_MODELS:
            _MODELS.popitem(last=False)
        return entry


def model_load_counts() -> dict[str, int]:
    """How many times this process loaded each (spec, options) key (for ``client.run``)."""
    with _LOCK:
        return dict(_LOAD_COUNTS)


def clear_model_cache() -> int:
    """Drop this process's cached models (e.g. ``client.run(clear_model_cache)``); returns how many."""
    with _LOCK:
        n = len(_MODELS)
        _MODELS.clear()
        return n


# -- packed statistics: what travels between processes --------------------------------------------
def pack(acc: CovarianceAccumulator, first: int, last: int, fingerprint: Any = None) -> dict[str, Any]:
    """``acc`` as plain arrays plus the shard range ``[first, last]`` it covers (and the model fingerprint)."""
    arrays: dict[str, Any] = ({"n": np.array(0), "mean": np.zeros(0), "comoment": np.zeros((0, 0))} if acc.n == 0
                              else dict(acc.to_arrays()))
    return {**arrays, "first": int(first), "last": int(last), "fingerprint": fingerprint,
            "empty": [] if acc.n else [int(first)] if first == last else []}


def unpack(packed: dict[str, Any]) -> CovarianceAccumulator:
    if int(packed["n"]) == 0:
        return CovarianceAccumulator()
    return CovarianceAccumulator.from_arrays(packed)


def merge_packed(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Merge the statistics of two adjacent shard ranges (``a`` before ``b``)."""
    fa, fb = a.get("fingerprint"), b.get("fingerprint")
    if fa is not None and fb is not None and fa != fb:
        raise FingerprintMismatchError(
            f"shards {a['first']}-{a['last']} and {b['first']}-{b['last']} were encoded by different models "
            f"(fingerprints {fa} and {fb}): do all workers see the same model files?"
        )
    acc_a, acc_b = unpack(a), unpack(b)
    if acc_a.n and acc_b.n and acc_a.dim != acc_b.dim:
        raise DimensionMismatchError(
            f"shards {a['first']}-{a['last']} give vectors of dimension {acc_a.dim} but shards "
            f"{b['first']}-{b['last']} give dimension {acc_b.dim}"
        )
    acc = acc_a.merge(acc_b)
    out = pack(acc, a["first"], b["last"], fa if fa is not None else fb)
    out["empty"] = list(a.get("empty", [])) + list(b.get("empty", []))
    return out


# -- shard tasks --------------------------------------------------------------------------------------
class ShardCorpus:
    """A corpus whose sample is exactly the shard's sentences, in order.

    Handed to an encoder's ``reference_batches(corpus=...)`` so that the
    worker encodes the sentences the driver drew, with the encoder's own
    chunking, pooling and unit.
    """

    def __init__(self, sentences: Sequence[str], name: str, fingerprint: str,
                 source_sha256: str | None = None) -> None:
        self.sentences = tuple(sentences)
        self.name = name
        self.fingerprint = fingerprint
        self.source_sha256 = source_sha256

    def __len__(self) -> int:
        return len(self.sentences)

    def contexts(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - never used for references
        raise NotImplementedError("a shard corpus only serves reference sentences")

    def sample(self, n: int, *, rng: Any = None) -> tuple[str, ...]:
        return self.sentences[: int(n)]


def _maybe_kill() -> None:
    marker = os.environ.get(KILL_ONCE_ENV)
    if marker:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.close(fd)
        os._exit(1)


def _shard_batches(model: Any, shard: dict[str, Any]) -> Iterator[np.ndarray]:
    kind = shard["kind"]
    if kind == "rows":
        start, stop = int(shard["start"]), int(shard["stop"])
        if stop <= start:
            return iter(())
        ref_kwargs = shard.get("reference_kwargs") or {}
        if ref_kwargs or not isinstance(model, VocabularyModel):
            vecs, _ = model.reference_vectors(stop, **ref_kwargs)
            vecs = np.asarray(vecs[start:stop], dtype=np.float64)
        else:
            vecs = np.asarray(model.vectors[start:stop], dtype=np.float64)
            vecs = vecs[np.isfinite(vecs).all(axis=1)]  # as StaticVectors.reference_vectors does
        return iter((vecs,))
    if kind == "sentences":
        sents = tuple(shard["sentences"])
        if not sents:
            return iter(())
        corp = ShardCorpus(sents, shard.get("corpus_name", "shard"), shard.get("corpus_fingerprint", "shard"),
                           shard.get("corpus_sha256"))
        kwargs: dict[str, Any] = {"corpus": corp}
        if shard.get("unit") is not None:
            kwargs["unit"] = shard["unit"]
        if shard.get("seed") is not None:
            kwargs["seed"] = shard["seed"]
        batches, _ = model.reference_batches(len(sents), **kwargs)
        return batches
    raise DataFormatError(f"unknown shard kind {kind!r}")  # pragma: no cover


def shard_statistics(spec: str, options: dict[str, Any] | None, shard: dict[str, Any]) -> dict[str, Any]:
    """Task: encode one shard with the worker's cached model and return its packed statistics."""
    _maybe_kill()
    model, lock = get_model(spec, options)
    acc = CovarianceAccumulator()
    index = int(shard["index"])
    with lock:
        for batch in _shard_batches(model, shard):
            b = np.asarray(batch, dtype=np.float64)
            if b.ndim == 2 and b.shape[0] and acc.n and b.shape[1] != acc.dim:
                raise DimensionMismatchError(
                    f"shard {index}: a batch has dimension {b.shape[1]}, earlier batches {acc.dim}"
                )
            acc.update(b)
        fp = fingerprint_of(model)
    out = pack(acc, index, index, fp)
    return out


def lookup_words(spec: str, options: dict[str, Any] | None, words: Sequence[str]) -> dict[str, Any]:
    """Task: look ``words`` up with the worker's cached model; per-word results as plain data."""
    model, lock = get_model(spec, options)
    with lock:
        lk = model.lookup(list(words))
        fp = fingerprint_of(model)
        dim = int(model.dim)
    vec = {w: np.asarray(v, dtype=np.float64) for w, v in zip(lk.found, lk.vectors)}
    n_ctx = dict(zip(lk.found, getattr(lk, "n_contexts", ()) or ()))
    return {
        "vectors": vec,
        "case_folded": dict(lk.case_folded),
        "embedded": dict(getattr(lk, "embedded", ())),  # phrases of static vectors (backends/_phrases.py)
        "missing_parts": dict(getattr(lk, "missing_parts", ())),
        "fallback": list(getattr(lk, "fallback", ())),
        "n_contexts": n_ctx,
        "truncated": int(getattr(lk, "truncated", 0)),
        "contextual": hasattr(lk, "n_contexts"),
        "fingerprint": fp,
        "dim": dim,
    }
