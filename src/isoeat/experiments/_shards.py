"""How many shards a contextual reference gives (:mod:`isoeat.experiments.reference`): its shards end at the
ends of its encoding chunks, so the count asked for is checked against the count the stream gives, from the
corpus's sentence count, before anything is encoded (``--reference-shards`` with ``--reference-size``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import ConfigError
from .._types import ChunkedReference

__all__ = ["chunked_shards", "reference_chunks", "check_chunks"]


def chunked_shards(total: int, chunk: int, shards: int) -> int:
    """The shards :func:`_shard_stream` cuts a contextual reference of ``total`` sentences into, encoded in
    chunks of ``chunk`` sentences, when ``shards`` are asked for.

    A shard ends at the end of the chunk that reaches the next multiple of ceil(total / shards) sentences (one
    shard per chunk at most), and the chunks after the last such end make one more shard.

    >>> chunked_shards(300, 1024, 200), chunked_shards(4096, 1024, 4), chunked_shards(3000, 1024, 4)
    (1, 4, 3)
    """
    size = max(1, -(-total // shards))
    ends = np.minimum(np.arange(1, -(-total // chunk) + 1, dtype=np.int64) * chunk, total)
    crossed = np.diff(ends // size, prepend=0) > 0
    if not crossed.size:
        return 0
    return int(crossed.sum()) + int(not crossed[-1])


def reference_chunks(model: Any, n: int, reference_kwargs: dict | None = None) -> tuple[int, int] | None:
    """``(sentences, chunk size)`` of a contextual model's reference of ``n`` sentences (read from the corpus,
    nothing encoded), or None for a reference not encoded in chunks (static vectors)."""
    if not isinstance(model, ChunkedReference) or model.chunk_size is None:
        return None
    meta = model.reference_metadata(int(n), **dict(reference_kwargs or {}))
    return int(meta["n_sentences"]), int(model.chunk_size)


def check_chunks(shards: int, chunks: tuple[int, int], name: str, size_name: str, size: Any, max_shards: int) -> None:
    """``shards`` a contextual reference of ``chunks`` = (sentences, chunk size) gives exactly, else one line
    naming ``name`` and ``size_name`` (the size asked for: ``size``) and the largest count allowed (at most
    ``max_shards``)."""
    total, chunk = chunks
    if chunked_shards(total, chunk, shards) == shards:
        return
    top = 1  # the largest L such that every count from 2 to L is given exactly
    while top < max_shards and chunked_shards(total, chunk, top + 1) == top + 1:
        top += 1
    given = f" with {size_name} {size}" if size is not None else ""
    fits = (f"at most {top} shards (every count from 2 to {top}), not {shards}" if top >= 2 else
            f"at most 1 shard, not {shards} (a reference-SE needs at least 2)")
    other = f"use {name} {top} or fewer, or" if top >= 2 else "use"
    corpus = ", from a corpus that has as many sentences" if size is not None and total < int(size) else ""
    raise ConfigError(f"{name} {shards}{given}: a contextual reference is cut into shards at the ends of its encoding "
                      f"chunks ({chunk:,} sentences each), so its {total:,} sentences give {fits}; {other} "
                      f"{size_name} {shards * chunk} ({shards} chunks{corpus})")
