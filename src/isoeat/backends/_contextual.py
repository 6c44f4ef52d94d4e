"""What the contextual encoders (``hf:`` and ``st:``) share besides loading.

:class:`_ContextualBase` holds the model folder and its fingerprint, the
reference corpus (loaded on first use), the embedding cache, and the
reference-vector API that calibration uses: :meth:`~_ContextualBase.reference_batches`
streams vectors of ``n`` seeded corpus sentences a chunk at a time,
:meth:`~_ContextualBase.reference_statistics` merges per-chunk covariance
statistics (each chunk cached), :meth:`~_ContextualBase.reference_vectors`
materialises the stream. A subclass says what one chunk's vectors are
(``_chunk_vectors``), how they are keyed in the cache (``_reference_key``),
which units it accepts (``_check_unit``) and how it describes them
(``_meta``, ``_reference_words``); it may compute the statistics of the
chunks not in the cache its own way (``_statistics_pass``, ``_moments``:
``hf:`` does, on the model's device).

Every contextual encoder has a ``dtype``, the precision of its forward pass
(:mod:`._precision`): in its ``describe()``, its name and fingerprint (unless
float32) and the ``model`` entry of every cache key (:attr:`_ContextualBase.model_key`).

The small validators and digests both backends use live here too.
"""

from __future__ import annotations

import contextlib
import math
import os
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from .._errors import ConfigError, DataFormatError, IsoeatWarning, MissingDependencyError
from .._progress import Progress, progress_bar
from .._validate import check_choice, check_int
from ..calibration.moments import CovarianceAccumulator
from ..corpora._files import texts_sha256 as _texts_digest  # noqa: F401  (the cache keys' text digest)
from ._hf import folder_fingerprint, resolve_model_folder
from ._precision import DEFAULT_DTYPE, check_dtype, precision
from ._precision import model_key as _model_key
from .cache import EmbeddingCache

#: Bytes of reference vectors an encoder keeps in memory between calls of ``reference_vectors`` (the last
#: matrix only); read at call time.
VECTORS_MEMO = 1 * 2**30

__all__ = ["DEFAULT_CORPUS", "check_template"]

#: Reference corpus for contexts and whitening statistics when none is given: the largest corpus present offline
#: (``corpora.offline_corpora``: WikiText-103 from ``$ISOEAT_WIKITEXT103``, the enwiki sample, WikiText-2,
#: gensim's Wikipedia sample), named wherever a result of the model is printed or written.
DEFAULT_CORPUS = "auto"


# ----------------------------------------------------------------------------
# validators and digests
# ----------------------------------------------------------------------------


def check_progress(progress: Any) -> bool | None:
    """``progress``: True, False or None (None: when stderr is a terminal or ``ISOEAT_PROGRESS=1``)."""
    return check_choice("progress", progress, (True, False, None))


def check_template(template: Any, *, name: str = "template") -> str:
    """A template must be a string with exactly one ``{}`` slot."""
    if not isinstance(template, str):
        raise ConfigError(f"{name} must be a string with one '{{}}' slot, got {template!r}")
    n = template.count("{}")
    if n != 1:
        raise ConfigError(
            f"{name} {template!r} must contain exactly one '{{}}' slot for the word (found {n})"
        )
    return template


# ----------------------------------------------------------------------------
# corpora and chunked statistics
# ----------------------------------------------------------------------------


def _as_corpus(corpus: Any, seed: int) -> Any:
    """A corpus object from a spec (``"gensim-wiki"``, a path), a list of sentences, or a corpus."""
    if corpus is None:
        corpus = DEFAULT_CORPUS
    if hasattr(corpus, "contexts") and hasattr(corpus, "fingerprint"):
        return corpus
    try:
        from ..corpora import Corpus, load_corpus
    except ImportError as exc:  # pragma: no cover - corpora ships with isoeat
        raise MissingDependencyError(f"reference corpora are not available: {exc}") from None
    if isinstance(corpus, (str, os.PathLike)):
        return load_corpus(str(corpus), seed=seed)
    if isinstance(corpus, (list, tuple)):
        return Corpus.from_sentences(list(corpus), seed=seed)
    raise ConfigError(
        f"corpus must be a corpus spec (e.g. {DEFAULT_CORPUS!r} or a path), a list of sentences or a "
        f"Corpus, got {type(corpus).__name__}"
    )


def _chars(texts: Sequence[str]) -> float:
    """The work of encoding ``texts`` for a weighed progress bar: their characters (the length sentence-transformers
    sorts by; a forward pass costs about its padded tokens)."""
    return float(sum(len(t) for t in texts))


def _stats_hit(hit: Any, dim: int) -> TypeGuard[dict[str, np.ndarray]]:
    """Whether a cache entry holds per-chunk statistics of dimension ``dim``."""
    return (hit is not None and {"n", "mean", "comoment"} <= set(hit) and hit["mean"].shape == (dim,)
            and hit["comoment"].shape == (dim, dim))


def _vectors_hit(hit: Any, dim: int) -> TypeGuard[dict[str, np.ndarray]]:
    """Whether a cache entry holds a chunk's reference vectors of dimension ``dim``."""
    return hit is not None and "vectors" in hit and hit["vectors"].ndim == 2 and hit["vectors"].shape[1] == dim


def _merged(parts: Sequence[Any]) -> Any:
    """The chunks' statistics merged in order; at least two vectors, or a one-line error."""
    acc = CovarianceAccumulator.merge_all(parts)
    if acc.n < 2:
        raise DataFormatError(f"reference statistics: need at least 2 vectors, got {acc.n}")
    return acc


@contextlib.contextmanager
def _in_background(name: str = "isoeat-cache-writer") -> Iterator[Any]:
    """``submit(fn, *args)``: run the calls in one background thread, in order, while the caller goes on (a
    reference pass writes each chunk's statistics, megabytes fsync'd to disk, while the device computes the next
    ones). On exit every call has finished, and the first error (a warning turned into one included) is raised
    here.

    Examples
    --------
    >>> done = []
    >>> with _in_background() as submit:
    ...     submit(done.append, 1)
    ...     submit(done.append, 2)
    >>> done
    [1, 2]
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix=name) as pool:  # its exit waits for every call
        futures: list[Any] = []
        yield lambda fn, *args: futures.append(pool.submit(fn, *args))
        for f in futures:  # not reached when the caller raised: its error is the one that propagates
            f.result()


class _Kept:
    """Reference vectors collected chunk by chunk, ``(vectors, truncations)`` by chunk index, while they fit
    ``budget`` bytes."""

    def __init__(self, budget: int) -> None:
        self.chunks: dict[int, tuple[np.ndarray, int]] = {}
        self.budget, self.bytes, self.over = int(budget), 0, False

    def add(self, i: int, vecs: np.ndarray | None, nt: int) -> None:
        """Keep chunk ``i``'s vectors (None: a pass that did not hand them back; nothing is kept then)."""
        if self.over:
            return
        if vecs is None:
            self.over, self.chunks = True, {}
            return
        self.chunks[i] = (vecs, int(nt))
        self.bytes += vecs.nbytes
        if self.bytes > self.budget:
            self.over, self.chunks = True, {}

    def complete(self, n_chunks: int) -> bool:
        """Whether every one of ``n_chunks`` chunks was computed (none read from the cache) and kept."""
        return not self.over and len(self.chunks) == n_chunks

    def in_order(self) -> list[tuple[np.ndarray, int]]:
        return [self.chunks[i] for i in sorted(self.chunks)]


def chunks_matrix(chunks: Sequence[tuple[np.ndarray, int]], name: str) -> np.ndarray:
    """The per-chunk reference vectors as one new ``(m, dim)`` float64 matrix."""
    parts = [np.asarray(v, dtype=np.float64) for v, _ in chunks if v.size]
    if not parts:
        raise DataFormatError(f"{name}: the reference sentences gave no vectors")
    return np.concatenate(parts, axis=0)


# ----------------------------------------------------------------------------
# the shared base class
# ----------------------------------------------------------------------------


class _ContextualBase:
    """Model folder, reference corpus, cache and streamed reference vectors of an ``hf:``/``st:`` encoder.

    A subclass calls :meth:`_init_source` from its ``__init__`` (after its
    own parameter checks, which set ``seed`` and ``chunk_size``), sets
    ``_dim`` (``None`` when the configs do not say), and defines ``kind``,
    ``fingerprint``, ``_load``, ``_settings`` (its entries of
    :meth:`describe`), ``_stats_kind`` (cache kind of per-chunk statistics),
    ``_truncation_note`` (the end of the truncation warning) and the
    reference hooks ``_check_unit``, ``_meta``, ``_reference_words``,
    ``_reference_key`` and ``_chunk_vectors``.
    """

    kind: str
    name: str
    seed: int
    chunk_size: int
    #: load weights saved as a pickle (``pytorch_model.bin``, read by torch's restricted unpickler):
    #: ``load_model`` with ``allow_pickle`` set to true, ``--allow-pickle``; refused otherwise, before torch is imported
    #: (:func:`~._hf.check_pickled_weights`)
    allow_pickle: bool = False
    _dim: int | None
    _stats_kind: str
    _truncation_note: str
    # set when the model is loaded (_torch, device) or on a layer view (_parent): read only after that
    _torch: Any
    device: Any
    _parent: Any
    #: The progress lines' clock (None: :func:`time.perf_counter`); tests drive it by hand.
    clock: Any = None

    if TYPE_CHECKING:
        @property
        def fingerprint(self) -> str: ...  # each subclass's own

    def _init_source(self, model: str, prefix: str, *, name: str | None, corpus: Any, device: Any,
                     progress: bool | None, cache_dir: str | os.PathLike | None, use_cache: bool | None,
                     folder: Path | None, source: str | None, dtype: Any = None) -> None:
        """Resolve the model folder and set what every contextual encoder holds (nothing is loaded)."""
        self._device_arg = device
        self.dtype = check_dtype(dtype)
        self.progress = check_progress(progress)
        self._bar: Progress | None = None  # the bar of the reference pass running now, if any
        if folder is None:
            folder, source = resolve_model_folder(model, prefix=prefix)
        self.folder = Path(folder)
        self.source = source or "local folder"
        self.name = name or f"{prefix}:{model}"
        if self.dtype != DEFAULT_DTYPE:  # a deviation from the protocol is named wherever the model is
            self.name += f" ({self.dtype})"
        self._corpus_arg = corpus
        self._corpus: Any = None
        self.cache = EmbeddingCache(cache_dir, enabled=use_cache)
        self._model: Any = None
        self._model_fp: str | None = None
        self.last_report: dict[str, Any] = {}

    # -- identity ------------------------------------------------------------
    @property
    def dim(self) -> int:
        """Vector dimension: from the folder's configs when they say, else from the loaded model."""
        if self._dim is None:
            self._load()
            self._dim = self._loaded_dim()
        return int(self._dim)  # type: ignore[arg-type]

    def describe(self) -> dict[str, Any]:
        """Name, kind, source folder, dimension, the encoder's settings and its fingerprints."""
        return {
            "name": self.name,
            "kind": self.kind,
            "source": f"{self.folder} ({self.source})",
            "dim": self.dim,
            **self._settings(),
            "dtype": self.dtype,
            "fingerprint": self.fingerprint,
            "model_fingerprint": self.model_fingerprint,
        }

    @property
    def model_fingerprint(self) -> str:
        """Hash of the model folder (configs, tokenizer, weights): the model alone."""
        if self._model_fp is None:
            self._model_fp = folder_fingerprint(self.folder)
        return self._model_fp

    @property
    def corpus_name(self) -> str:
        """The corpus this encoder reads, by name: the loaded corpus's, else its spec with ``auto`` resolved
        (without loading it)."""
        if self._corpus is not None:
            return str(getattr(self._corpus, "name", "sentences"))
        parent = getattr(self, "_parent", None)
        if parent is not None:  # a layer view reads its encoder's corpus
            return parent.corpus_name
        arg = DEFAULT_CORPUS if self._corpus_arg is None else self._corpus_arg
        if isinstance(arg, (str, os.PathLike)):
            from ..corpora import resolve_auto_corpus

            return str(resolve_auto_corpus(str(arg)))
        return str(getattr(arg, "name", "sentences"))

    @property
    def loaded_corpus(self) -> Any:
        """The reference corpus if it has been loaded, else None (reading it never triggers the load)."""
        return self._corpus

    @property
    def model_key(self) -> str:
        """The model entry of every embedding-cache key: :attr:`model_fingerprint`, and the forward pass's dtype
        unless float32 (:func:`isoeat.backends._precision.model_key`)."""
        return _model_key(self.model_fingerprint, self.dtype)

    def _dtype_tag(self) -> str:
        """What the fingerprint adds for the dtype: nothing for float32 (fingerprints of earlier versions)."""
        return "" if self.dtype == DEFAULT_DTYPE else f"|dtype={self.dtype}"

    def _precision(self) -> Any:
        """The forward passes' precision context (:func:`isoeat.backends._precision.precision`); model loaded."""
        return precision(self._torch, self.device, self.dtype)

    @property
    def corpus(self) -> Any:
        """The reference corpus (loaded on first use)."""
        if self._corpus is None and getattr(self, "_parent", None) is not None:
            self._corpus = self._parent.corpus  # a layer view shares its encoder's corpus
        if self._corpus is None:
            self._corpus = _as_corpus(self._corpus_arg, self.seed)
            if len(self._corpus) == 0:
                raise DataFormatError(f"corpus {getattr(self._corpus, 'name', '?')}: no usable sentences")
        return self._corpus

    # -- hooks ---------------------------------------------------------------
    def _load(self) -> None:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def _loaded_dim(self) -> int | None:
        """The dimension once the model is loaded (default: what ``_load`` set)."""
        return self._dim

    def _settings(self) -> dict[str, Any]:  # pragma: no cover - every subclass defines it
        """The encoder's own entries of :meth:`describe`."""
        raise NotImplementedError

    def _check_unit(self, unit: str | None) -> str:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def _meta(self, n: int, unit: str, corp: Any, seed: int,
              sents: Sequence[str]) -> dict[str, Any]:  # pragma: no cover - every subclass defines it
        """:meth:`_corpus_meta` plus the unit's pooling and the model's settings."""
        raise NotImplementedError

    @staticmethod
    def _corpus_meta(n: int, corp: Any, seed: int, sents: Sequence[str]) -> dict[str, Any]:
        """Where the reference sentences come from: corpus name, fingerprints, sample size, seed.

        ``corpus_sha256`` is the SHA-256 of the bytes of the corpus source
        (:attr:`isoeat.corpora.Corpus.source_sha256`; None for a corpus object
        without it): a stored calibrator may be reused only while it is unchanged.
        """
        return {"corpus": getattr(corp, "name", "?"), "corpus_fingerprint": corp.fingerprint,
                "corpus_sha256": getattr(corp, "source_sha256", None), "n_requested": n,
                "n_sentences": len(sents), "seed": seed}

    def _swept_statistics(self, sents: Sequence[str], unit: str) -> tuple[Any, int] | None:
        """Statistics computed with other layers (``hf:`` layer sweeps); None: compute them here."""
        return None

    def _reference_words(self, meta: dict[str, Any]) -> tuple[str, str]:  # pragma: no cover
        """What the vectors are, and what makes them (the middle and the end of the description)."""
        raise NotImplementedError

    def _reference_key(self, chunk: Sequence[str], unit: str) -> dict[str, Any]:  # pragma: no cover
        raise NotImplementedError

    def _chunk_vectors(self, chunk: Sequence[str], unit: str) -> tuple[np.ndarray, int]:  # pragma: no cover
        """Reference vectors of one chunk of sentences (float64) and its truncation count, cached."""
        raise NotImplementedError

    # -- progress --------------------------------------------------------------
    @contextlib.contextmanager
    def _progress(self, total: int, label: str, enabled: bool | None = None) -> Iterator[Progress]:
        """The one progress reporter (:func:`isoeat._progress.progress_bar`) for a long step.

        ``enabled`` defaults to the encoder's ``progress`` (None: when stderr
        is a terminal or ``ISOEAT_PROGRESS=1``). A step run inside a reference
        pass (one chunk) counts into the pass's bar instead of drawing its own.
        """
        if self._bar is not None:
            yield self._bar
            return
        with progress_bar(total, label, self.progress if enabled is None else enabled, clock=self.clock) as bar:
            yield bar

    def _announce(self, bar: Progress, sents: Sequence[str], corpus: str) -> None:
        """Before a long reference pass over ``sents`` of ``corpus``: once its first batches give a rate, one line
        with its size, its estimated time on this machine and how to get a shorter one
        (:attr:`isoeat._progress.Progress.announce`: only for a pass estimated at ``LONG_STEP`` seconds or more).
        The bar is weighed by the sentences' characters (:func:`_chars`), so that length-sorted batches, the costly
        ones first, do not skew the estimate and the ETA."""
        from .._progress import current_purpose, format_duration, pass_advice

        n = len(sents)
        if bar.work_total is None and bar.done == 0:
            bar.weigh(_chars(sents))

        def line(seconds: float) -> str:
            minute = bar.rate() * 60.0  # sentences encoded in about a minute, one significant digit
            step = 10 ** math.floor(math.log10(minute)) if minute >= 1 else 1
            smaller = int(max(1, min(n - 1, step * math.floor(minute / step)))) if minute >= 1 else 1
            return (f"isoeat: {current_purpose('reference pass')} on {n:,} reference sentences of corpus {corpus} "
                    f"(about {format_duration(seconds)} on this machine, from the first batches' rate); "
                    f"{pass_advice(smaller)}")

        bar.announce = line

    def _chunk_in_pass(self, bar: Progress, chunk: Sequence[str], unit: str) -> tuple[np.ndarray, int]:
        """:meth:`_chunk_vectors` of one chunk of a reference pass, counted in the pass's bar."""
        target = bar.done + len(chunk)
        start, work, self._bar = bar.done, bar.work_done, bar
        try:
            out = self._chunk_vectors(chunk, unit)
        finally:
            self._bar = None
        left = max(_chars(chunk) - (bar.work_done - work), 0.0)
        if bar.done == start:  # nothing counted: read from the cache (reused: not in the ETA's mean step)
            bar.skip(target - bar.done, work=left)
        elif target > bar.done:  # an encoder that counted part of it
            bar.update(target - bar.done, work=left)
        return out

    # -- reference vectors for calibration ------------------------------------
    def _reference_setup(self, n: Any, unit: str | None, corpus: Any, text: Any, seed: Any) -> tuple[Any, ...]:
        n = check_int("reference size 'n'", n, lo=1)
        unit = self._check_unit(unit)
        if corpus is not None and text is not None:
            raise ConfigError("give the reference corpus as corpus= or text=, not both")
        seed = self.seed if seed is None else check_int("seed", seed, lo=0)
        src = corpus if corpus is not None else text
        corp = self.corpus if src is None else _as_corpus(src, seed)
        sents = tuple(corp.sample(int(n), rng=seed))
        if not sents:
            raise DataFormatError(f"corpus {getattr(corp, 'name', '?')}: no usable sentences for reference vectors")
        return int(n), unit, corp, seed, sents

    def reference_metadata(self, n: int = 100_000, *, unit: str | None = None, corpus: Any = None,
                           text: Any = None, seed: int | None = None, **_: Any) -> dict[str, Any]:
        """What :meth:`reference_batches` would stream, as a dict (for manifests and reuse checks).

        Keys: ``unit``, ``pooling``, ``corpus``, ``corpus_fingerprint`` (the
        sampled sentences and settings), ``corpus_sha256`` (the bytes of the
        corpus source), ``n_requested``, ``n_sentences``, ``seed`` and the
        model's settings (``layer``, ``model``, ...).
        """
        return self._meta(*self._reference_setup(n, unit, corpus, text, seed))

    def _describe_reference(self, meta: dict[str, Any]) -> str:
        what, by = self._reference_words(meta)
        sha = f", sha256 {meta['corpus_sha256'][:16]}" if meta.get("corpus_sha256") else ""
        desc = (f"unit={meta['unit']}: {what} of {meta['n_sentences']} sentences sampled (seed {meta['seed']}) "
                f"from corpus {meta['corpus']} (fingerprint {meta['corpus_fingerprint']}{sha}){by}")
        if meta["n_sentences"] < meta["n_requested"]:
            desc += f" (asked for {meta['n_requested']}; the corpus has {meta['n_sentences']})"
        return desc

    def reference_batches(self, n: int = 100_000, *, unit: str | None = None, corpus: Any = None,
                          text: Any = None, seed: int | None = None, **_: Any) -> tuple[Iterator[np.ndarray], str]:
        """Stream reference vectors from ``n`` corpus sentences, a chunk at a time.

        Parameters
        ----------
        n : int, default 100_000
            Sentences (paper §4.1: up to 100,000 sentences for contextual models).
        unit : str, optional
            ``"word"`` or ``"sentence"`` for ``hf:`` models (default their
            ``reference_unit``); ``st:`` models give sentence embeddings only.
        corpus, text : corpus spec, Corpus or list of sentences, optional
            Another reference corpus than the encoder's (``text`` is the name
            the CLI's ``--reference-text`` uses).
        seed : int, optional
            Sampling seed (default the encoder's).

        Returns
        -------
        batches : iterator of ndarray (b, dim) float64
            One array per chunk of ``chunk_size`` sentences; each chunk is
            cached on disk (keyed by the model, its settings, the unit and the
            chunk's sentences), so a rerun does not run the model.
        description : str
            Unit, pooling, corpus name and fingerprint, number of sentences,
            seed and the model's settings (recorded in the whitener's metadata).
        """
        n, unit, corp, seed, sents = self._reference_setup(n, unit, corpus, text, seed)
        meta = self._meta(n, unit, corp, seed, sents)
        return self._reference_iter(sents, unit, getattr(corp, "name", "?")), self._describe_reference(meta)

    def _chunks(self, sents: Sequence[str]) -> Iterator[Sequence[str]]:
        for c0 in range(0, len(sents), self.chunk_size):
            yield sents[c0:c0 + self.chunk_size]

    def _warn_truncated(self, n_trunc: int) -> None:
        if n_trunc:
            warnings.warn(f"{self.name}: {n_trunc} reference sentence(s) {self._truncation_note}",
                          IsoeatWarning, stacklevel=3)

    def _reference_iter(self, sents: Sequence[str], unit: str, corpus: str = "?") -> Iterator[np.ndarray]:
        n_trunc = 0
        with self._progress(len(sents), f"reference ({unit})") as bar:
            self._announce(bar, sents, corpus)
            for chunk in self._chunks(sents):
                vecs, nt = self._chunk_in_pass(bar, chunk, unit)
                n_trunc += nt
                yield vecs
        self._warn_truncated(n_trunc)

    def reference_statistics(self, n: int = 100_000, *, unit: str | None = None, corpus: Any = None,
                             text: Any = None, seed: int | None = None, **_: Any) -> tuple[Any, str]:
        """Count, mean and co-moment of the :meth:`reference_batches` vectors, merged chunk by chunk.

        Returns ``(CovarianceAccumulator, description)``; feed it to
        ``ZCAWhitener.from_statistics``. Each chunk's statistics are cached,
        so a rerun reads ``O(d^2)`` numbers per chunk instead of every vector
        (and never runs the model). The chunks not in the cache come from the
        vectors kept by a ``reference_vectors`` of the same sentences, else
        from the encoder's statistics pass (``hf:``: pooled and accumulated on
        the model's device, :mod:`isoeat.backends._refpass`), which hands the
        vectors back (cached, and kept for ``reference_vectors``) only when
        the whole sample's fit :data:`VECTORS_MEMO`.
        """
        n, unit, corp, seed, sents = self._reference_setup(n, unit, corpus, text, seed)
        desc = self._describe_reference(self._meta(n, unit, corp, seed, sents))
        swept = self._swept_statistics(sents, unit)
        if swept is not None:  # one layer of a sweep: every layer's statistics from the same passes
            self._warn_truncated(swept[1])
            return swept[0], desc
        key = self._vectors_key(sents, unit)
        known = self.__dict__.setdefault("_vectors_memo", {}).get(key)  # the same sentences' vectors: no pass
        chunks = list(self._chunks(sents))
        parts: list[Any] = [None] * len(chunks)
        truncated = [0] * len(chunks)
        keys = [{**self._reference_key(chunk, unit), "kind": self._stats_kind} for chunk in chunks]
        with self._progress(len(sents), f"reference statistics ({unit})") as bar, _in_background() as submit:
            self._announce(bar, sents, getattr(corp, "name", "?"))
            for i, chunk in enumerate(chunks):  # cached statistics: O(d^2) numbers per chunk, no pass
                hit = self.cache.get(self._stats_kind, keys[i])
                if _stats_hit(hit, self.dim):
                    parts[i], truncated[i] = CovarianceAccumulator.from_arrays(hit), int(hit.get("truncated", 0))
                    bar.skip(len(chunk), work=_chars(chunk))
            todo = [i for i, p in enumerate(parts) if p is None]
            keep = _Kept(VECTORS_MEMO)  # every chunk's vectors, while they fit: for reference_vectors
            if known is not None:
                computed: Iterable[tuple[int, Any, int, Any]] = (
                    (j, self._moments(known[i][0]), known[i][1], None) for j, i in enumerate(todo))
            else:
                computed = self._statistics_pass([chunks[i] for i in todo], unit, bar=bar,
                                                 keep=self._keeps_vectors(sents, unit))
            for j, acc, nt, vecs in computed:
                i = todo[j]
                if known is None:
                    keep.add(i, vecs, nt)
                else:
                    bar.skip(len(chunks[i]), work=_chars(chunks[i]))
                submit(self.cache.put, self._stats_kind, keys[i], {**acc.to_arrays(), "truncated": np.int64(nt)})
                parts[i], truncated[i] = acc, nt
        acc = _merged(parts)
        if known is None and keep.complete(len(chunks)):
            self._remember_vectors(key, keep.in_order())
        self._warn_truncated(sum(truncated))
        return acc, desc

    def _moments(self, vecs: np.ndarray) -> Any:
        """The statistics of one chunk's vectors (a :class:`CovarianceAccumulator`)."""
        return CovarianceAccumulator(self.dim).update(vecs)

    def _keeps_vectors(self, sents: Sequence[str], unit: str) -> bool:
        """Whether a statistics pass over ``sents`` should hand back the vectors too (for ``reference_vectors``)."""
        return True

    def _statistics_pass(self, chunks: Sequence[Sequence[str]], unit: str, *, bar: Progress,
                         keep: bool) -> Iterator[tuple[int, Any, int, np.ndarray | None]]:
        """Per chunk ``j`` of ``chunks`` (none of them in the statistics cache): ``(j, statistics, truncated,
        vectors or None)``, in any order. Here: :meth:`_chunk_vectors` of each chunk (cached), then their
        statistics; ``hf:`` encoders run :func:`isoeat.backends._refpass.statistics_pass`."""
        for j, chunk in enumerate(chunks):
            vecs, nt = self._chunk_in_pass(bar, chunk, unit)
            yield j, self._moments(vecs), nt, vecs

    def _vectors_key(self, sents: Sequence[str], unit: str) -> str:
        """The memory key of the reference vectors of ``sents``: the whole reference key and the chunk size
        (the kept vectors are per chunk, read back by position), as JSON."""
        from .._records import canonical_json

        return canonical_json({**self._reference_key(sents, unit), "chunk_size": self.chunk_size})

    def _remember_vectors(self, key: str, chunks: list[tuple[np.ndarray, int]]) -> None:
        """Keep ``chunks`` (per chunk: vectors, truncations) under ``key``: the last sample only, up to VECTORS_MEMO."""
        memo = self.__dict__.setdefault("_vectors_memo", {})
        memo.clear()
        if sum(v.nbytes for v, _ in chunks) <= VECTORS_MEMO:
            memo[key] = chunks

    def _swept_vectors(self, sents: Sequence[str], unit: str) -> list[tuple[np.ndarray, int]] | None:
        """Per-chunk reference vectors computed with other layers (``hf:`` layer sweeps); None: compute them here."""
        return None

    def reference_vectors(self, n: int = 100_000, *, unit: str | None = None, corpus: Any = None,
                          text: Any = None, seed: int | None = None, **_: Any) -> tuple[np.ndarray, str]:
        """:meth:`reference_batches` materialised as one ``(m, dim)`` float64 matrix (small ``n`` only).

        The last sample's vectors are kept in memory (up to :data:`VECTORS_MEMO`
        bytes), keyed by the whole reference key (model, settings, unit and the
        sampled sentences' digest): the raw and the calibrated anisotropy of
        one space, and ZCA's statistics of the same sentences
        (:meth:`reference_statistics`, either way round), encode them once even
        without the disk cache. Each call returns a new matrix.
        """
        n, unit, corp, seed, sents = self._reference_setup(n, unit, corpus, text, seed)
        desc = self._describe_reference(self._meta(n, unit, corp, seed, sents))
        key = self._vectors_key(sents, unit)
        chunks = self.__dict__.setdefault("_vectors_memo", {}).get(key)
        if chunks is None:
            chunks = self._swept_vectors(sents, unit) or self._vectors_here(sents, unit, getattr(corp, "name", "?"))
            self._remember_vectors(key, chunks)
        self._warn_truncated(sum(nt for _, nt in chunks))
        return chunks_matrix(chunks, self.name), desc

    def _vectors_here(self, sents: Sequence[str], unit: str, corpus: str = "?") -> list[tuple[np.ndarray, int]]:
        """Every chunk's reference vectors and truncation count, in order."""
        with self._progress(len(sents), f"reference ({unit})") as bar:
            self._announce(bar, sents, corpus)
            return [self._chunk_in_pass(bar, chunk, unit) for chunk in self._chunks(sents)]
