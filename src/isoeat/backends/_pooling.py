"""Subword pooling for ``hf:`` models: which tokens belong to which word, truncation, batched pooling.

A word's tokens are found with the tokenizer's offset mapping: every token
whose character span overlaps the word's span (:func:`assign_tokens`), so
WordPiece ``##`` pieces and byte-level BPE tokens that carry the word's
leading space (``Ġword``) both count, while special tokens never do. A
sequence longer than the model's maximum is cut around the word (one word
per sentence) or from the end (:func:`truncate_sequence`). :func:`pool_rows`
runs the model once per length-bucketed batch and sums each output row's
token states. Pure numpy apart from :func:`pool_rows`, which receives torch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SENTENCE_POOLINGS", "keep_one_token",
           "assign_tokens", "truncate_sequence", "encode_sequences", "encode_flat", "length_batches", "pad_batch",
           "pool_rows", "pool_rows_layers"]


#: How an ``hf:`` encoder pools a whole text (``sentence_pooling``): the attention-mask mean of every token's state
#: (specials included, as sentence-transformers' mean pooling), the first token's ([CLS] for BERT-style models) or
#: the last token's of the (truncated) sequence ([SEP] for BERT-style tokenizers, the final token for GPT-style ones).
SENTENCE_POOLINGS = ("mean", "cls", "last")


@dataclass
class _Seq:
    ids: np.ndarray  # int64 (L,)
    assign: np.ndarray  # int64 (L,)
    truncated: bool = False


def keep_one_token(seqs: list[_Seq], how: str) -> list[_Seq]:
    """Sentence sequences (every token assigned to its row) pooled by one token: ``how`` ``"cls"`` keeps the first
    token's assignment, ``"last"`` the last one's; ``"mean"`` leaves them as they are. In place; returns ``seqs``.

    Examples
    --------
    >>> s = [_Seq(np.array([101, 7, 8, 102]), np.array([0, 0, 0, 0]))]
    >>> keep_one_token(s, "last")[0].assign.tolist()
    [-1, -1, -1, 0]
    """
    if how == "mean":
        return seqs
    for s in seqs:
        keep = np.full_like(s.assign, -1)
        j = 0 if how == "cls" else len(s.assign) - 1
        keep[j] = s.assign[j]
        s.assign = keep
    return seqs


def assign_tokens(
    offsets: np.ndarray, special: np.ndarray, spans: np.ndarray, rows: np.ndarray
) -> np.ndarray:
    """Which output row each token is pooled into, ``-1`` for none.

    Parameters
    ----------
    offsets : ndarray (L, 2)
        Character span ``[start, end)`` of each token (the tokenizer's offset mapping).
    special : ndarray (L,) of bool
        Special tokens ([CLS], <s>, ...) are never assigned.
    spans : ndarray (k, 2)
        Character spans of the words, sorted by start and not overlapping.
    rows : ndarray (k,)
        Output row of each span.

    A token belongs to the first span it overlaps (``start < span_end`` and
    ``end > span_start``); zero-length tokens belong to none.

    Examples
    --------
    >>> offs = np.array([[0, 0], [0, 3], [4, 6], [6, 9], [9, 10], [0, 0]])
    >>> spec = np.array([1, 0, 0, 0, 0, 1], bool)
    >>> assign_tokens(offs, spec, np.array([[4, 9]]), np.array([7])).tolist()
    [-1, -1, 7, 7, -1, -1]
    """
    L = offsets.shape[0]
    out = np.full(L, -1, dtype=np.int64)
    k = spans.shape[0]
    if k == 0 or L == 0:
        return out
    ts, te = offsets[:, 0], offsets[:, 1]
    j = np.searchsorted(spans[:, 1], ts, side="right")  # first span ending after the token starts
    jj = np.minimum(j, k - 1)
    ok = (~special) & (te > ts) & (j < k) & (spans[jj, 0] < te)
    out[ok] = rows[jj[ok]]
    return out


def truncate_sequence(ids: np.ndarray, assign: np.ndarray, special: np.ndarray, max_len: int,
                      focus: bool) -> tuple[np.ndarray, np.ndarray]:
    """Cut a too-long sequence to ``max_len`` tokens, keeping its leading and trailing special tokens.

    With ``focus`` the kept window of content tokens is centred on the
    assigned tokens (one word per sentence); otherwise the end is cut. When
    the special tokens alone fill the budget, the first ``max_len`` tokens
    are kept.
    """
    L = ids.shape[0]
    content = np.flatnonzero(~special)
    first, last = (int(content[0]), int(content[-1])) if content.size else (0, L - 1)
    prefix = np.arange(0, first)
    suffix = np.arange(last + 1, L)
    budget = max_len - prefix.size - suffix.size
    if budget < 1:
        prefix, suffix, budget = np.arange(0), np.arange(0), max_len
    start = first
    if focus:
        tp = np.flatnonzero(assign >= 0)
        if tp.size:
            lo, hi = int(tp[0]), int(tp[-1]) + 1
            start = lo - max(0, (budget - (hi - lo)) // 2)
            start = max(first, min(start, last + 1 - budget))
    keep = np.concatenate([prefix, np.arange(start, start + budget), suffix])
    return ids[keep], assign[keep]


def encode_sequences(encodings: Sequence[Any], jobs: Sequence[Any], mode: str,
                     max_len: int) -> tuple[list[_Seq], int]:
    """Assign the tokens of each ``tokenizers`` encoding to output rows, and truncate.

    ``mode="focus"``: ``jobs[i]`` is ``(start, end, row)``, one word per
    sentence, truncation centred on it. ``mode="focus-words"``: ``jobs[i]``
    is ``(spans (k,2), rows (k,))``, the occurrences of one word, truncation
    centred on them. ``mode="words"``: ``jobs[i]`` is ``(spans (k,2), rows (k,))``,
    truncation from the end. ``mode="all"``: ``jobs[i]`` is the row; every
    token (specials too) is pooled.

    Returns the sequences and how many were truncated.
    """
    seqs: list[_Seq] = []
    n_trunc = 0
    for enc, job in zip(encodings, jobs):
        ids = np.asarray(enc.ids, dtype=np.int64)
        L = ids.shape[0]
        special = np.asarray(enc.special_tokens_mask, dtype=bool)
        if mode == "all":
            assign = np.full(L, int(job), dtype=np.int64)
        else:
            offs = np.asarray(enc.offsets, dtype=np.int64).reshape(L, 2)
            if mode == "focus":
                s, e, row = job
                assign = assign_tokens(offs, special, np.array([[s, e]], dtype=np.int64),
                                       np.array([row], dtype=np.int64))
            else:
                spans, rows = job
                assign = assign_tokens(offs, special, spans, rows)
        truncated = L > max_len
        if truncated:
            n_trunc += 1
            ids, assign = truncate_sequence(ids, assign, special, max_len, mode.startswith("focus"))
        seqs.append(_Seq(ids, assign, truncated))
    return seqs, n_trunc


def encode_flat(encodings: Sequence[Any], max_len: int, *, texts: Sequence[str] | None = None,
                spans: np.ndarray | None = None, span_text: np.ndarray | None = None) -> tuple[list[_Seq], int]:
    """:func:`encode_sequences` for a whole chunk of reference sentences at once, vectorised.

    ``mode="words"`` (``spans`` given): ``spans (k, 2)`` are the character
    spans of the chunk's words, ``span_text (k,)`` the sentence of each, in
    sentence order then by start; output row ``i`` is span ``i``, truncation
    from the end. ``mode="all"`` (no ``spans``): sentence ``i``'s tokens,
    specials too, all go to row ``i``. The tokens, offsets and special masks
    of every sentence are read into three flat arrays, and every token is
    assigned with one :func:`numpy.searchsorted` in chunk coordinates
    (sentence ``i`` starts at ``sum(len(texts[:i]) + 1)``, so a token can only
    overlap its own sentence's words): the rule of :func:`assign_tokens`,
    applied to all sentences at once. Returns the sequences and how many
    were truncated, equal to what :func:`encode_sequences` gives.
    """
    from itertools import chain

    n = len(encodings)
    ids_lists = [e.ids for e in encodings]
    lengths = np.fromiter(map(len, ids_lists), dtype=np.int64, count=n)
    total = int(lengths.sum())
    ids = np.fromiter(chain.from_iterable(ids_lists), dtype=np.int64, count=total)
    ends = np.cumsum(lengths)
    seq_of = np.repeat(np.arange(n, dtype=np.int64), lengths)
    special = np.fromiter(chain.from_iterable(e.special_tokens_mask for e in encodings), dtype=np.int64,
                          count=total).astype(bool)
    if spans is None:
        assign = seq_of.copy()
    else:
        offs = np.fromiter(chain.from_iterable(chain.from_iterable(e.offsets for e in encodings)), dtype=np.int64,
                           count=2 * total).reshape(total, 2)
        base = np.concatenate([[0], np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=n) + 1)[:-1]])
        tokens = offs + base[seq_of][:, None]
        words = np.asarray(spans, dtype=np.int64).reshape(-1, 2) + base[np.asarray(span_text, dtype=np.int64)][:, None]
        assign = assign_tokens(tokens, special, words, np.arange(words.shape[0], dtype=np.int64))
    seqs: list[_Seq] = []
    n_trunc = 0
    start = 0
    for i in range(n):
        end = int(ends[i])
        s_ids, s_assign = ids[start:end], assign[start:end]
        truncated = end - start > max_len
        if truncated:
            n_trunc += 1
            s_ids, s_assign = truncate_sequence(s_ids, s_assign, special[start:end], max_len, False)
        seqs.append(_Seq(s_ids, s_assign, truncated))
        start = end
    return seqs, n_trunc


def length_batches(lengths: Sequence[int], batch_size: int, max_tokens: int) -> Iterator[list[int]]:
    """Length-bucketed batches of indices: sort by length, cut at ``batch_size`` or the padded-token budget."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batch: list[int] = []
    for i in order:
        L = lengths[i]
        if batch and (len(batch) >= batch_size or (len(batch) + 1) * L > max_tokens):
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


def pad_batch(seqs: Sequence[_Seq], batch: Sequence[int],
              pad_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One batch as the model reads it, and where its pooled tokens are.

    Returns ``ids`` and ``mask`` ``(b, Lmax)`` int64 (right padding with
    ``pad_id``), ``pos``: the flat positions (in ``ids.reshape(-1)``) of the
    tokens assigned to an output row, in row-major order, and ``rows``: the row
    of each. Gathering the states at ``pos`` and adding them into ``rows``
    needs no device-to-host synchronisation (the positions are known here).

    Examples
    --------
    >>> seqs = [_Seq(np.array([5, 6, 7]), np.array([-1, 0, -1])), _Seq(np.array([5, 8]), np.array([-1, 1]))]
    >>> ids, mask, pos, rows = pad_batch(seqs, [0, 1], pad_id=0)
    >>> ids.tolist(), mask.tolist(), pos.tolist(), rows.tolist()
    ([[5, 6, 7], [5, 8, 0]], [[1, 1, 1], [1, 1, 0]], [1, 4], [0, 1])
    """
    Lmax = max(len(seqs[i].ids) for i in batch)
    ids = np.full((len(batch), Lmax), pad_id, dtype=np.int64)
    mask = np.zeros((len(batch), Lmax), dtype=np.int64)
    assign = np.full((len(batch), Lmax), -1, dtype=np.int64)
    for r, i in enumerate(batch):
        L = len(seqs[i].ids)
        ids[r, :L] = seqs[i].ids
        mask[r, :L] = 1
        assign[r, :L] = seqs[i].assign
    flat = assign.reshape(-1)
    pos = np.flatnonzero(flat >= 0)
    return ids, mask, pos, flat[pos]


def pool_rows(hidden: Callable[[Any, Any], Any], torch: Any, seqs: Sequence[_Seq], n_rows: int, *, dim: int,
              device: str, pad_id: int, batches: Iterator[list[int]], bar: Any) -> tuple[np.ndarray, np.ndarray]:
    """Forward every sequence once; per output row the mean of its tokens' states, and the count.

    ``hidden(input_ids, attention_mask)`` runs the model and returns the
    chosen layer's states ``(b, L, dim)``; ``bar.update(k)`` is called after
    each batch of ``k`` sequences (an open :class:`isoeat._progress.Progress`).
    Returns ``(means (n_rows, dim) float32, counts (n_rows,))``; rows with
    no token have count 0 and a zero vector.
    """
    means, counts = pool_rows_layers(lambda ids, mask: (hidden(ids, mask),), torch, seqs, n_rows, n_layers=1,
                                     dim=dim, device=device, pad_id=pad_id, batches=batches, bar=bar)
    return means[0], counts


def pool_rows_layers(hidden: Callable[[Any, Any], Any], torch: Any, seqs: Sequence[_Seq], n_rows: int, *,
                     n_layers: int, dim: int, device: str, pad_id: int, batches: Iterator[list[int]],
                     bar: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pool_rows` for several layers from the same forward passes.

    ``hidden(input_ids, attention_mask)`` returns a sequence of ``n_layers``
    state tensors ``(b, L, dim)`` of one forward pass (e.g. chosen entries of
    ``hidden_states``). Each layer's rows are pooled exactly as
    :func:`pool_rows` pools one layer. Returns ``(means (n_layers, n_rows,
    dim) float32, counts (n_rows,))``; the caller checks the
    ``n_layers * n_rows * dim`` floats against its memory budget first.
    """
    # (layers, rows, dim): one index_add_ per layer and batch, into that layer's contiguous block, so the means
    # are divided in place and handed over without a transposed copy
    sums = torch.zeros((n_layers, max(n_rows, 1), dim), dtype=torch.float32, device=device)
    counts = torch.zeros(max(n_rows, 1), dtype=torch.float32, device=device)
    with torch.inference_mode():
        for batch in batches:
            ids, mask, pos, rows = pad_batch(seqs, batch, pad_id)
            states = hidden(torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device))
            pos, idx = torch.from_numpy(pos).to(device), torch.from_numpy(rows).to(device)
            for layer, H in enumerate(states):
                sums[layer].index_add_(0, idx, H.reshape(-1, dim).index_select(0, pos).float())
            counts.index_add_(0, idx, torch.ones_like(idx, dtype=torch.float32))
            bar.update(len(batch))
    counts = counts[:n_rows]
    means = sums[:, :n_rows]
    means /= counts.clamp(min=1.0)[None, :, None]
    return means.cpu().numpy(), counts.cpu().numpy().astype(np.int64)
