"""The reference statistics pass of ``hf:`` encoders, bound by the forward pass.

The paper's protocol fits ZCA on the word-occurrence vectors of up to 100,000
reference sentences (§4.1). What that needs from the model is, per cache
chunk of sentences, the count, mean and co-moment of the pooled vectors
(:class:`~isoeat.calibration.moments.CovarianceAccumulator`), not the vectors.
:func:`statistics_pass` computes them with two workers:

* the host (a background thread, :func:`prefetched`): tokenizes a *window*
  of chunks, assigns tokens to output rows
  (:meth:`~isoeat.backends.transformer.TransformerEncoder._reference_seqs`),
  sorts the window's sequences by length into batches
  (:func:`~isoeat.backends._pooling.length_batches`) and pads each batch
  (:func:`~isoeat.backends._pooling.pad_batch`; pinned memory on CUDA), while
* the device (the calling thread) runs the forward pass of the batches before
  it at the encoder's precision (:mod:`._precision`), gathers the assigned
  tokens' states at positions computed on the host (no device-to-host
  synchronisation per batch) and adds them into a float32 buffer of the
  window's rows; at the end of the window, per chunk, it divides the sums by
  the token counts (the pooled vectors), accumulates their float64 statistics
  on the device (:class:`~isoeat.calibration.moments.DeviceAccumulator`) and
  moves ``n``, the mean and the co-moment to the host. The vectors move only
  when ``keep`` asks for them.

On CPU a window is one chunk, so the batches, the pooled vectors (float32,
bit for bit) and the statistics (float64, to rounding) are those of the
chunk-by-chunk pass that ``reference_vectors`` runs. On CUDA a window holds
up to :data:`WINDOW_SENTENCES` sentences (and its row buffer at most
:data:`WINDOW_MEMORY` bytes), sorted by length together, so batches of the
device's size pad few tokens; each chunk's statistics are still its own (the
cache stays per chunk).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._pooling import _Seq, length_batches, pad_batch

__all__ = ["WINDOW_MEMORY", "WINDOW_SENTENCES", "prefetched", "statistics_pass", "window_sentences", "windows"]

#: Sentences a CUDA pass sorts into batches together (a window of whole chunks; on CPU a window is one chunk).
WINDOW_SENTENCES = 8192
#: Bytes of a window's float32 row buffer on the device (a window is cut before it would exceed them; a chunk
#: alone may). Read at call time.
WINDOW_MEMORY = 1 << 30


@dataclass
class _Batch:
    ids: Any  # (b, L) int64: numpy, or a pinned tensor on CUDA
    mask: Any
    pos: Any  # flat positions of the pooled tokens
    rows: Any  # their window rows
    n: int  # sequences
    sentences: np.ndarray  # their positions in the pass's sentences (chunks concatenated)


@dataclass
class _Window:
    chunks: list[int]  # indices into the pass's chunk list
    starts: list[int]  # first window row of each chunk, and the end
    truncated: list[int]  # truncated sentences of each chunk
    counts: np.ndarray  # (rows,) float32: tokens pooled into each window row
    batches: list[_Batch]
    sentences: int


def _window(enc: Any, parts: list[tuple[int, list[_Seq], int, int, int]], pin: bool) -> _Window:
    """One window from its tokenized chunks ``(index, sequences, truncated, rows, first sentence)``: rows
    renumbered, batched, padded."""
    seqs: list[_Seq] = []
    starts = [0]
    where = np.concatenate([np.arange(p[4], p[4] + len(p[1])) for p in parts])
    for _, chunk_seqs, _, n_rows, _ in parts:
        off = starts[-1]
        for s in chunk_seqs:
            seqs.append(s if off == 0 else _Seq(s.ids, np.where(s.assign >= 0, s.assign + off, -1), s.truncated))
        starts.append(off + n_rows)
    assigned = [s.assign[s.assign >= 0] for s in seqs]
    counts = np.bincount(np.concatenate(assigned + [np.zeros(0, dtype=np.int64)]),
                         minlength=starts[-1]).astype(np.float32)
    batches = []
    for b in length_batches([len(s.ids) for s in seqs], enc.batch_size, enc.max_tokens_per_batch):
        arrays = pad_batch(seqs, b, enc._pad_id)
        if pin:
            arrays = tuple(enc._torch.from_numpy(a).pin_memory() for a in arrays)
        batches.append(_Batch(*arrays, n=len(b), sentences=where[b]))
    return _Window([p[0] for p in parts], starts, [p[2] for p in parts], counts, batches, len(seqs))


def window_sentences(enc: Any) -> int:
    """Sentences sorted into batches together by ``enc`` (loaded): :data:`WINDOW_SENTENCES` on CUDA, else 1 (a
    window is then one chunk)."""
    return WINDOW_SENTENCES if str(enc.device).startswith("cuda") else 1


def windows(enc: Any, chunks: Sequence[Sequence[str]], unit: str, *, sentences: int | None = None,
            pin: bool | None = None) -> Iterator[_Window]:
    """Tokenized, batched windows of whole chunks: up to ``sentences`` sentences (default
    :func:`window_sentences`) and :data:`WINDOW_MEMORY` bytes of row buffer; ``pin``: batches in pinned memory
    (default: on CUDA)."""
    cuda = str(enc.device).startswith("cuda")
    sentences = window_sentences(enc) if sentences is None else int(sentences)
    pin = cuda if pin is None else bool(pin)
    memory = WINDOW_MEMORY
    parts: list[tuple[int, list[_Seq], int, int, int]] = []
    n_sent = n_rows = first = 0
    row_bytes = 4 * enc.dim
    for i, chunk in enumerate(chunks):
        seqs, nt, rows = enc._reference_seqs(chunk, unit)
        if parts and (n_rows + rows) * row_bytes > memory:
            yield _window(enc, parts, pin)
            parts, n_sent, n_rows = [], 0, 0
        parts.append((i, seqs, nt, rows, first))
        first += len(chunk)
        n_sent += len(chunk)
        n_rows += rows
        if n_sent >= sentences:  # full: handed over before the next chunk is tokenized
            yield _window(enc, parts, pin)
            parts, n_sent, n_rows = [], 0, 0
    if parts:
        yield _window(enc, parts, pin)


def prefetched(items: Iterable[Any], depth: int = 2, *, name: str = "isoeat-prefetch") -> Iterator[Any]:
    """The items of ``items``, produced ahead by a background thread (at most ``depth`` waiting).

    An exception of the producer is raised here, at the item it stopped at;
    closing this generator (or an exception in the consumer) stops the
    producer after the item it is making, and waits for it.

    Examples
    --------
    >>> list(prefetched(x * x for x in range(4)))
    [0, 1, 4, 9]
    """
    q: queue.Queue = queue.Queue(maxsize=max(1, int(depth)))
    stop = threading.Event()

    def put(item: tuple[str, Any]) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for x in items:
                if not put(("item", x)):
                    return
            put(("done", None))
        except BaseException as exc:  # handed to the consumer, raised there
            put(("error", exc))

    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    try:
        while True:
            kind, x = q.get()
            if kind == "item":
                yield x
            elif kind == "done":
                return
            else:
                raise x
    finally:
        stop.set()
        worker.join()


def statistics_pass(
    enc: Any, chunks: Sequence[Sequence[str]], unit: str, *, keep: bool, bar: Any, prefetch: bool = True,
    window: int | None = None,
) -> Iterator[tuple[int, Any, int, np.ndarray | None]]:
    """Per chunk of ``chunks``: ``(index, CovarianceAccumulator, truncated sentences, vectors or None)``.

    ``enc`` is a loaded :class:`~isoeat.backends.transformer.TransformerEncoder`.
    The vectors (``(rows with a token, dim)`` float32, in row order) come back
    only with ``keep``. ``bar.update(k, work=c)`` is called after each batch of ``k``
    sentences of ``c`` characters. ``prefetch``: tokenize ahead in a background thread;
    ``window``: sentences sorted into batches together (default
    :func:`window_sentences`: one chunk on CPU).
    """
    from ..calibration.moments import DeviceAccumulator

    torch, device, dim = enc._torch, enc.device, enc.dim
    cuda = str(device).startswith("cuda")
    produce = windows(enc, chunks, unit, sentences=window)
    source = prefetched(produce, name="isoeat-reference-tokenizer") if prefetch else produce
    hidden = enc._hidden()
    chars = np.array([len(s) for c in chunks for s in c] or [0], dtype=np.float64)  # a batch's work, for the ETA

    def to_device(a: Any) -> Any:
        return (a if isinstance(a, torch.Tensor) else torch.from_numpy(a)).to(device, non_blocking=cuda)

    try:
        for w in source:
            out = []
            with torch.inference_mode(), enc._precision():
                sums = torch.zeros((max(w.starts[-1], 1), dim), dtype=torch.float32, device=device)
                for b in w.batches:
                    states = hidden(to_device(b.ids), to_device(b.mask))
                    sums.index_add_(0, to_device(b.rows),
                                    states.reshape(-1, dim).index_select(0, to_device(b.pos)).float())
                    bar.update(b.n, work=float(chars[b.sentences].sum()))
                counts = torch.from_numpy(w.counts).to(device)
                for k, i in enumerate(w.chunks):
                    lo, hi = w.starts[k], w.starts[k + 1]
                    sel = torch.from_numpy(np.flatnonzero(w.counts[lo:hi] > 0) + lo).to(device)
                    means = sums.index_select(0, sel) / counts.index_select(0, sel)[:, None]
                    acc = DeviceAccumulator(dim, torch, device).update(means).to_host()
                    out.append((i, acc, w.truncated[k], means.cpu().numpy() if keep else None))
            yield from out
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()
