"""Every requested hidden-state layer of an ``hf:`` model from the same forward passes.

A :class:`LayerSweep` holds one *view* per requested layer: a
:class:`~isoeat.backends.transformer.TransformerEncoder` at that layer that
shares the loaded model, tokenizer, corpus and cache of the encoder it came
from. Whenever a view has to run the model (word contexts for
:meth:`lookup`, reference chunks for :meth:`reference_statistics`), the
sweep runs it once with ``output_hidden_states=True`` and pools the same
tokens in every requested layer; each view then finds its layer's results in
its memory (and in the on-disk cache, keyed by layer, so a later single-layer
run of any of these layers reuses them). A view is an ordinary encoder for
everything else (calibration, WEAT, the runner), so the numbers of a sweep
are those of separate single-layer runs.

What is shared: word vectors (``lookup``), reference statistics (the
covariance accumulators of ``reference_statistics``, which ZCA and the other
calibrators with ``from_statistics`` are fitted on) and the reference vectors
of ``reference_vectors`` (the anisotropy samples; the other layers' matrices
wait in the sweep until their view takes them). What is not (each view runs
its own passes, as a single-layer encoder would): ``reference_batches``
(calibrators fitted on the streamed vectors themselves), ``encode_sentences``,
``context_vectors`` (CEAT) and fallback templates.

Memory: the pooled states of one pass are ``len(layers) x rows x dim``; the
sweep splits words and reference chunks into groups whose pooled states and
accumulators fit :data:`LAYERS_MEMORY` (checked before anything is pooled).
Shared reference vectors are kept only when every layer's matrix of the
sample fits :data:`VECTORS_MEMORY` (float32); otherwise each view computes its
own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._errors import ConfigError, DataFormatError

__all__ = ["LAYERS_MEMORY", "VECTORS_MEMORY", "LayerSweep", "check_rows", "parse_layers", "sweep_bytes"]

#: Memory budget (bytes) of the pooled states and accumulators of a sweep; read at call time.
LAYERS_MEMORY = 2 * 2**30

#: Memory budget (bytes) of the reference vectors a sweep keeps for its views (float32, every layer's matrix
#: of one sample): from the statistics pass for the isotropy check of the same sentences, or from a shared
#: ``reference_vectors`` pass; read at call time.
VECTORS_MEMORY = 2 * 2**30

# bytes per pooled row and layer: float32 sums (torch), float32 means (numpy), float64 sentence means and copies
_ROW_BYTES = 4 + 4 + 8 + 8


def parse_layers(spec: Any, n_layers: int, *, name: str = "layers") -> tuple[int, ...]:
    """The hidden-state indices a ``layers`` value asks for, checked against the model.

    Parameters
    ----------
    spec : "all", str "0,6,12", int or sequence of int
        ``"all"``: every hidden state, ``0`` (the embedding output) to
        ``n_layers``. Indices are ``0 .. n_layers``; negative ones are refused
        (say which layer you mean), and so are repeats.
    n_layers : int
        The model's number of transformer layers (``num_hidden_layers``).
    name : str
        The parameter named in errors (``"--layers"`` for the CLI).

    Returns
    -------
    tuple of int, in the order given.

    Examples
    --------
    >>> parse_layers("all", 2)
    (0, 1, 2)
    >>> parse_layers("2,0", 6)
    (2, 0)
    """
    n_layers = int(n_layers)
    if isinstance(spec, str):
        text = spec.strip()
        if text.lower() == "all":
            return tuple(range(n_layers + 1))
        parts = [p.strip() for p in text.split(",")]
        items: list[Any] = []
        for p in parts:
            try:
                items.append(int(p))
            except ValueError:
                raise ConfigError(f"{name} must be 'all' or comma-separated layer indices (e.g. 0,3,{n_layers}), "
                                  f"got {spec!r}") from None
    elif isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        items = [int(spec)]
    elif isinstance(spec, (list, tuple)):
        items = list(spec)
    else:
        raise ConfigError(f"{name} must be 'all', a layer index or a list of them, got {spec!r}")
    if not items:
        raise ConfigError(f"{name}: no layer given")
    out: list[int] = []
    for x in items:
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
            raise ConfigError(f"{name}: layer indices are whole numbers, got {x!r}")
        if not 0 <= int(x) <= n_layers:
            raise ConfigError(f"{name}: layer {int(x)} is out of range for this model: 0 (the embedding output) to "
                              f"{n_layers} (its {n_layers} layers)")
        if int(x) in out:
            raise ConfigError(f"{name}: layer {int(x)} given twice")
        out.append(int(x))
    return tuple(out)


def sweep_bytes(n_layers: int, n_rows: int, dim: int) -> int:
    """Bytes of the pooled states of ``n_rows`` rows in ``n_layers`` layers and their accumulators."""
    return int(n_layers) * (int(n_rows) * int(dim) * _ROW_BYTES + 2 * int(dim) * int(dim) * 8)


def check_rows(n_layers: int, n_rows: int, dim: int, what: str) -> None:
    """Refuse to pool ``n_rows`` rows in ``n_layers`` layers when that exceeds :data:`LAYERS_MEMORY`."""
    need = sweep_bytes(n_layers, n_rows, dim)
    if need > LAYERS_MEMORY:
        raise ConfigError(f"layers: {n_rows} rows of {what} in {n_layers} layers need {need} bytes, over the memory "
                          f"budget of {LAYERS_MEMORY} bytes (isoeat.backends._layers.LAYERS_MEMORY); ask for fewer "
                          "layers")


def _groups(rows: Sequence[int], n_layers: int, dim: int, budget: int, what: str) -> Iterator[slice]:
    """Consecutive slices of items whose rows (``rows[i]`` per item) fit ``budget`` together."""
    fixed = sweep_bytes(n_layers, 0, dim)
    per_row = sweep_bytes(n_layers, 1, dim) - fixed
    if fixed + per_row > budget:
        raise ConfigError(f"layers: {n_layers} layers of a {dim}-dimensional model need {fixed + per_row} bytes "
                          f"for {what}, over the memory budget of {budget} bytes (isoeat.backends._layers."
                          "LAYERS_MEMORY); ask for fewer layers")
    start, used = 0, fixed
    for i, r in enumerate(rows):
        need = max(int(r), 1) * per_row
        if fixed + need > budget:
            raise ConfigError(f"layers: one item of {what} has {r} rows: {fixed + need} bytes in {n_layers} layers, "
                              f"over the memory budget of {budget} bytes (isoeat.backends._layers.LAYERS_MEMORY); "
                              "ask for fewer layers")
        if used + need > budget and i > start:
            yield slice(start, i)
            start, used = i, fixed
        used += need
    if start < len(rows):
        yield slice(start, len(rows))


class LayerSweep:
    """One view per requested layer of an ``hf:`` encoder, all fed by the same forward passes.

    Parameters
    ----------
    encoder : TransformerEncoder
        The encoder whose model, corpus, cache and settings the views share
        (its own ``layer`` is not used).
    layers : "all", str, int or sequence of int
        See :func:`parse_layers`.

    Examples
    --------
    >>> sweep = load_model("minilm").layer_sweep("all")  # doctest: +SKIP
    >>> {layer: view.lookup(["doctor"]).vectors[0, :2] for layer, view in sweep.items()}  # doctest: +SKIP
    """

    def __init__(self, encoder: Any, layers: Any, *, name: str = "layers") -> None:
        if encoder.n_layers is None:
            encoder._load()
        self.base = encoder
        self.layers = parse_layers(layers, encoder.n_layers, name=name)
        self.views = {layer: encoder._layer_view(layer, self) for layer in self.layers}
        self.forward_passes = 0  # calls that ran the model for every layer (tests read it)
        self._vectors: dict[tuple, tuple[np.ndarray, int]] = {}  # reference vectors waiting for their view

    def __getitem__(self, layer: int) -> Any:
        return self.views[layer]

    def __len__(self) -> int:
        return len(self.layers)

    def items(self) -> list[tuple[int, Any]]:
        """``(layer, view)`` pairs in the order asked for."""
        return [(layer, self.views[layer]) for layer in self.layers]

    def __repr__(self) -> str:
        return f"LayerSweep({self.base.name!r}, layers={list(self.layers)})"

    # -- word vectors ------------------------------------------------------
    def word_results(self, view: Any, words: Sequence[str]) -> dict[str, Any]:
        """Aggregated vectors of ``words`` in every layer; the other views keep theirs, ``view`` gets its own."""
        budget = LAYERS_MEMORY
        # an estimate (one row per context sentence; more with occurrences="all"): the rows are checked again,
        # exactly, before they are pooled
        rows = [view.contexts_per_word] * len(words)
        mine: dict[str, Any] = {}
        for part in _groups(rows, len(self.layers), view.dim, budget, "word contexts"):
            chunk = list(words[part])
            by_layer = view._aggregate_layers(chunk, self.layers)
            self.forward_passes += 1
            for layer, results in by_layer.items():
                if layer == view.layer:
                    mine.update(results)
                    continue
                other = self.views[layer]
                for w, r in results.items():
                    if w in other._memo:
                        continue
                    r.extra.pop("contexts", None)
                    other._put_word(w, r)
                    other._memo[w] = r
        return mine

    # -- reference statistics ------------------------------------------------
    def reference_statistics(self, view: Any, sents: Sequence[str], unit: str) -> tuple[Any, int]:
        """Merged covariance statistics of the reference sentences in every layer (cached per chunk and layer).

        Per chunk: every layer's statistics from the cache; else from the
        reference vectors of the same sentences that every layer already holds
        (:meth:`reference_vectors` ran first); else from one pass, whose
        vectors are then kept for :meth:`reference_vectors` when every layer's
        fit :data:`VECTORS_MEMORY`.
        """
        from ..calibration.moments import CovarianceAccumulator
        from ._contextual import _stats_hit, _texts_digest

        mkey = (unit, _texts_digest(sents), len(sents), view.chunk_size)  # chunks line up by position
        if mkey in view._stats_memo:
            return view._stats_memo[mkey]
        dim, kind = view.dim, view._stats_kind
        parts: dict[int, list[Any]] = {layer: [] for layer in self.layers}
        known = {layer: self._known_vectors(layer, mkey, sents, unit) for layer in self.layers}
        n_chunks = -(-len(sents) // view.chunk_size)
        kept: dict[int, list[tuple[np.ndarray, int]]] | None = None
        if any(k is None or len(k) != n_chunks for k in known.values()):
            known = {}
            rows = [view._reference_rows(s, unit) for s in sents]
            self._check_rows(view, sents, rows, unit)
            if len(self.layers) * sum(rows) * dim * 4 <= VECTORS_MEMORY:  # float32 vectors of every layer
                kept = {layer: [] for layer in self.layers}
        n_trunc = 0
        with view._progress(len(sents), f"reference statistics ({unit}), {len(self.layers)} layers") as bar:
            for i, chunk in enumerate(view._chunks(sents)):
                vkeys = {layer: v._reference_key(chunk, unit) for layer, v in self.items()}  # the vectors' keys
                keys = {layer: {**key, "kind": kind} for layer, key in vkeys.items()}
                hits = {layer: view.cache.get(kind, key) for layer, key in keys.items()}
                if all(_stats_hit(h, dim) for h in hits.values()):
                    for layer, h in hits.items():
                        parts[layer].append(CovarianceAccumulator.from_arrays(h))
                    n_trunc += int(next(iter(hits.values())).get("truncated", 0))
                    bar.skip(len(chunk))
                    kept = None
                    continue
                accs = {layer: CovarianceAccumulator(dim) for layer in self.layers}
                if known:
                    nt = known[view.layer][i][1]
                    for layer in self.layers:
                        accs[layer].update(known[layer][i][0])
                    bar.skip(len(chunk))
                else:  # kept: the chunk's vectors too (and cached, as a single-layer pass caches them)
                    nt, vecs = self._pool_chunk(view, chunk, unit, bar, vkeys if kept is not None else None,
                                                each=lambda layer, v: accs[layer].update(v))  # noqa: B023 - called in the pass
                    if kept is not None:
                        for layer in self.layers:
                            kept[layer].append((vecs[layer], nt))
                n_trunc += nt
                for layer, acc in accs.items():
                    view.cache.put(kind, keys[layer], {**acc.to_arrays(), "truncated": np.int64(nt)})
                    parts[layer].append(acc)
        for layer, v in self.items():
            acc = CovarianceAccumulator.merge_all(parts[layer])
            if acc.n < 2:
                raise DataFormatError(f"reference statistics: need at least 2 vectors, got {acc.n}")
            v._stats_memo[mkey] = (acc, n_trunc)
        if kept is not None:
            self._vectors.clear()  # the newest sample replaces any that nobody took
            for layer in self.layers:
                self._vectors[(layer, mkey)] = kept[layer]
        return view._stats_memo[mkey]

    def _check_rows(self, view: Any, sents: Sequence[str], rows: Sequence[int], unit: str) -> None:
        """Refuse, before any pass, a sample with a sentence whose pooled states alone exceed the budget (else
        the chunks before it would be pooled first, minutes of work on a real model, and then the error).

        ``rows`` are the sentences' words; a sentence with more words than fit
        is tokenized to count the rows it really pools (truncation drops some),
        as :meth:`_chunk_groups` counts them.
        """
        fixed = sweep_bytes(len(self.layers), 0, view.dim)
        fit = (LAYERS_MEMORY - fixed) // (sweep_bytes(len(self.layers), 1, view.dim) - fixed)
        for s, r in zip(sents, rows):
            if r > fit or fit < 1:
                seq = view._reference_seqs([s], unit)[0][0]
                r = len(np.unique(seq.assign[seq.assign >= 0]))
                list(_groups([r], len(self.layers), view.dim, LAYERS_MEMORY, "reference sentences"))  # over: raises

    def forget_others(self, view: Any) -> None:
        """Drop the reference vectors every view but ``view`` keeps (their layer's cells are done, in a run):
        a sweep holds at most one view's matrix besides the vectors waiting in it."""
        for v in self.views.values():
            if v is not view:
                v.__dict__.pop("_vectors_memo", None)

    def _known_vectors(self, layer: int, mkey: tuple, sents: Sequence[str],
                       unit: str) -> list[tuple[np.ndarray, int]] | None:
        """The per-chunk reference vectors of ``sents`` that ``layer`` already holds (waiting, or its view's)."""
        waiting = self._vectors.get((layer, mkey))
        if waiting is not None:
            return waiting
        v = self.views[layer]
        return v.__dict__.get("_vectors_memo", {}).get(v._vectors_key(sents, unit))

    def reference_vectors(self, view: Any, sents: Sequence[str],
                          unit: str) -> list[tuple[np.ndarray, int]] | None:
        """Per-chunk reference vectors of ``sents`` in ``view``'s layer, pooled in every layer from the same passes.

        The other layers' vectors wait in the sweep (float32) until their view
        asks for them, once; every chunk this pass encodes is also cached on
        disk per layer, as a single-layer encoder caches it (vectors kept from
        the statistics pass are not written again). None (the view then runs its own
        passes) when the vectors of every layer would exceed
        :data:`VECTORS_MEMORY`, checked before anything is pooled; vectors of
        another sample that nobody took are dropped when both would not fit.
        """
        from ._contextual import _texts_digest, _vectors_hit

        mkey = (unit, _texts_digest(sents), len(sents), view.chunk_size)  # chunks line up by position
        waiting = self._vectors.pop((view.layer, mkey), None)
        if waiting is not None:
            return waiting
        dim = view.dim
        rows = [view._reference_rows(s, unit) for s in sents]
        need = len(self.layers) * sum(rows) * dim * 4
        if need > VECTORS_MEMORY:
            return None
        self._check_rows(view, sents, rows, unit)
        if need + sum(v.nbytes for chunks in self._vectors.values() for v, _ in chunks) > VECTORS_MEMORY:
            self._vectors.clear()  # vectors of another sample nobody took: their views will run their own passes
        kind = "hf-reference"
        parts: dict[int, list[tuple[np.ndarray, int]]] = {layer: [] for layer in self.layers}
        with view._progress(len(sents), f"reference ({unit}), {len(self.layers)} layers") as bar:
            for chunk in view._chunks(sents):
                keys = {layer: v._reference_key(chunk, unit) for layer, v in self.items()}
                hits = {layer: view.cache.get(kind, key) for layer, key in keys.items()}
                if all(_vectors_hit(h, dim) for h in hits.values()):
                    for layer, h in hits.items():
                        parts[layer].append((np.asarray(h["vectors"], dtype=np.float32), int(h.get("truncated", 0))))
                    bar.skip(len(chunk))
                    continue
                nt, vecs = self._pool_chunk(view, chunk, unit, bar, keys)
                for layer in self.layers:
                    parts[layer].append((vecs[layer], nt))
        for layer in self.layers:
            if layer != view.layer:
                self._vectors[(layer, mkey)] = parts[layer]
        return parts[view.layer]

    def _pool_chunk(self, view: Any, chunk: Sequence[str], unit: str, bar: Any, keys: dict[int, Any] | None, *,
                    each: Any = None) -> tuple[int, dict[int, np.ndarray] | None]:
        """Pool one reference chunk in every layer: its truncations, and with ``keys`` its vectors per layer.

        ``each(layer, vectors)`` sees every group's vectors as they are pooled
        (the statistics pass streams them into its accumulators). With
        ``keys`` (each layer's ``hf-reference`` key of the chunk), each
        layer's vectors of the whole chunk, in its row order, are returned and
        cached under its key, as a single-layer pass caches them; with None,
        nothing is kept (a group's states at a time) and None is returned.
        """
        keep = keys is not None
        nt, groups = self._chunk_groups(view, chunk, unit, bar)
        got: dict[int, list[np.ndarray]] = {layer: [] for layer in self.layers}
        order: list[np.ndarray] = []
        for vecs, ids in groups:
            order.append(ids)
            for layer, v in zip(self.layers, vecs):
                if each is not None:
                    each(layer, v)
                if keep:
                    got[layer].append(v)
        if not keep:
            return nt, None
        out = {}
        for layer in self.layers:
            out[layer] = np.ascontiguousarray(_in_row_order(got[layer], order))
            view.cache.put("hf-reference", keys[layer], {"vectors": out[layer], "truncated": np.int64(nt)})
        return nt, out

    def _chunk_groups(self, view: Any, chunk: Sequence[str], unit: str,
                      bar: Any) -> tuple[int, Iterator[tuple[list[np.ndarray], np.ndarray]]]:
        """One chunk of reference sentences pooled in every layer: its truncations, and its groups.

        The chunk is tokenized once and cut into the length-sorted batches a
        single-layer encoder runs (:func:`~isoeat.backends._pooling.length_batches`
        over the whole chunk), so the sweep pads no more tokens than one
        layer's pass; a group is a run of consecutive batches whose pooled
        states fit :data:`LAYERS_MEMORY` (a batch that alone would not is
        split, and then a sentence that alone would not is refused), checked
        before anything is pooled. Each group yields its vectors per layer
        (float32, the rows that have tokens) and their row numbers in the
        chunk (:func:`_in_row_order` puts the groups back in the chunk's order).
        """
        from ._pooling import _Seq, length_batches

        seqs, nt, _ = view._reference_seqs(chunk, unit)
        rows_of = [np.unique(s.assign[s.assign >= 0]) for s in seqs]
        batches = list(length_batches([len(s.ids) for s in seqs], view.batch_size, view.max_tokens_per_batch))
        n_layers, dim = len(self.layers), view.dim
        fixed = sweep_bytes(n_layers, 0, dim)
        per_row = sweep_bytes(n_layers, 1, dim) - fixed
        items: list[tuple[int, list[int]]] = []  # (batch, its sequences): whole batches where they fit
        for b, batch in enumerate(batches):
            if fixed + sum(len(rows_of[i]) for i in batch) * per_row <= LAYERS_MEMORY:
                items.append((b, batch))
            else:
                items.extend((b, [i]) for i in batch)
        parts = list(_groups([sum(len(rows_of[i]) for i in idx) for _, idx in items], n_layers, dim, LAYERS_MEMORY,
                             "reference sentences"))

        def pooled() -> Iterator[tuple[list[np.ndarray], np.ndarray]]:
            for part in parts:
                runs: list[tuple[int, list[int]]] = []  # the pieces of one batch in a group run as that batch
                for b, idx in items[part]:
                    if runs and runs[-1][0] == b:
                        runs[-1][1].extend(idx)
                    else:
                        runs.append((b, list(idx)))
                members = [i for _, idx in runs for i in idx]
                ids = np.unique(np.concatenate([rows_of[i] for i in members] + [np.zeros(0, dtype=np.int64)]))
                sub = []
                for i in members:
                    a = seqs[i].assign
                    local = np.where(a >= 0, np.searchsorted(ids, np.where(a >= 0, a, 0)), -1)
                    sub.append(_Seq(seqs[i].ids, local.astype(np.int64), seqs[i].truncated))
                at, local_batches = 0, []
                for _, idx in runs:
                    local_batches.append(list(range(at, at + len(idx))))
                    at += len(idx)
                view._bar = bar
                try:
                    means, counts = view._pool_layers(sub, len(ids), f"reference ({unit})", self.layers,
                                                      batches=local_batches)
                finally:
                    view._bar = None
                self.forward_passes += 1
                keep = counts > 0  # every row of ids has a token; a copy per layer, freed as each view takes it
                yield [m[keep] for m in means], ids[keep]  # float32: the accumulator reads them as float64 exactly

        return nt, pooled()


def _in_row_order(parts: Sequence[np.ndarray], ids: Sequence[np.ndarray]) -> np.ndarray:
    """The groups' vectors ``parts`` (rows numbered ``ids``) as one matrix in the chunk's row order."""
    if len(parts) == 1:
        return parts[0] if np.all(np.diff(ids[0]) > 0) else parts[0][np.argsort(ids[0], kind="stable")]
    order = np.argsort(np.concatenate(ids), kind="stable")
    return np.concatenate(parts, axis=0)[order]
