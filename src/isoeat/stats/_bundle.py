"""One read instead of many: the bracket-store records that one command reads, kept together as well.

The word-list audit keeps each test's left-out rows, and Level 2 of the ML-EAT levels its exact counts, in the
bracket store (:func:`~isoeat.stats._certified.bracket_store`, the embedding cache): one small file per record,
each read back by its key (every input byte for byte and the digest of isoeat's code). A warm
``isoeat run --levels --audit`` reads 60 such files, and recounts the quick Level-2 p-values that were never kept
(each under :data:`~isoeat.stats._certified.CACHE_SECONDS`).

:func:`bundled` installs, around one such batch, a store that answers from a bundle: one store entry (kind
``certified``) holding ``{canonical key text: record}`` for every record the batch read, kept or computed
last time. A record is answered from the bundle only under the very text of its key
(:func:`isoeat._records.canonical_json` of the same key the record's own entry has, the code digest included),
so the bundle gives exactly what the record's own entry or its computation gives; the bundle's own key (the
batch's name, a context, the code digest) only says which bundle to read, and a stale bundle is a miss, never a
wrong record. After the batch, the bundle is written again when it changed (the records this batch read, no
more: it never grows past one batch). Nothing is bundled without a store, or inside another bundle.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .._records import canonical_json
from ._certified import bracket_store, set_bracket_store

__all__ = ["BundledStore", "bundled"]


class BundledStore:
    """A bracket store that answers from ``loaded`` (``{canonical key text: record}``) first, then from ``inner``,
    and notes every record given or kept (``used``)."""

    def __init__(self, inner: Any, loaded: dict[str, str]) -> None:
        self.inner, self.loaded = inner, loaded
        self.used: dict[str, str] = {}

    def code(self) -> str:
        return str(self.inner.code())

    def get(self, key: Any) -> str | None:
        """The record under ``key``: the bundle's, else the inner store's (or None)."""
        text = canonical_json(key)
        found = self.loaded.get(text)
        if found is None:
            got = self.inner.get(key)
            found = None if got is None else str(got)
        if found is not None:
            self.used[text] = found
        return found

    def put(self, key: Any, record: str) -> None:
        """Keep ``record`` under ``key`` in the inner store, and in the bundle."""
        self.inner.put(key, record)
        self.used[canonical_json(key)] = str(record)

    def keep(self, key: Any, record: str) -> None:
        """Keep ``record`` in the bundle only (a record quick to compute: not worth a file of its own)."""
        self.used[canonical_json(key)] = str(record)


def _read(found: Any) -> dict[str, str]:
    try:
        loaded = json.loads(str(found)) if found is not None else {}
    except ValueError:  # not a bundle this code wrote: read as empty, written again
        return {}
    if not isinstance(loaded, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in loaded.items()):
        return {}
    return loaded


@contextmanager
def bundled(name: str, context: Any) -> Iterator[Any]:
    """Answer the installed bracket store's reads from one bundle, for the ``with`` block (see the module).

    Parameters
    ----------
    name : str
        The batch (``"levels"``, ``"audit"``).
    context : JSON value
        What the batch is about (the tests, the model): with ``name`` and the code digest, which bundle to read.
        It decides no record: a bundle read for another batch answers nothing it does not hold under the exact key.

    Yields
    ------
    The bundled store, or None where nothing is bundled (no store installed, or already inside a bundle).
    """
    store = bracket_store()
    if store is None or isinstance(store, BundledStore):
        yield None
        return
    key = {"bundle": name, "context": context, "code": store.code()}
    loaded = _read(store.get(key))
    here = BundledStore(store, loaded)
    set_bracket_store(here)
    try:
        yield here
    finally:
        set_bracket_store(store)
    if here.used != loaded:
        store.put(key, canonical_json(here.used))
