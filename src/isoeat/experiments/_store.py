"""Files of an experiment folder.

Names (:mod:`isoeat._names`), records (:mod:`isoeat._records`), links (:mod:`isoeat._io`).
"""

from __future__ import annotations

from typing import Any

from .._io import check_inside  # noqa: F401 - re-exported
from .._names import file_name as slug  # noqa: F401 - the one file-name scheme (isoeat._names)
from .._records import (  # noqa: F401 - re-exported: the one home is isoeat._records
    CONTENT_KEY,
    clean,
    is_sealed,
    jsonable,
    nan_of,
    read_json,
    record_digest,
    seal,
    write_json,
)

__all__ = ["slug", "jsonable", "clean", "write_json", "read_json", "nan_of", "check_inside", "seal", "is_sealed",
           "record_digest", "same_protocol"]


def _flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            out.update(_flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = d
    return out


def _protocol_diff(old: dict, new: dict, limit: int = 4) -> str:
    a, b = _flatten(jsonable(old)), _flatten(jsonable(new))
    diffs = [f"{k}: {a.get(k)!r} in the folder, {b.get(k)!r} in this config"
             for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    more = f" (and {len(diffs) - limit} more)" if len(diffs) > limit else ""
    return "; ".join(diffs[:limit]) + more


def same_protocol(exp: dict, config: Any) -> bool:
    """Whether a folder's ``experiment.json`` holds ``config``'s protocol: by hash, or by the protocol itself.

    The protocol recorded in the folder is compared by content, so a folder written by an earlier isoeat,
    whose hash was computed another way, is still the same experiment when its protocol is.
    """
    return exp.get("protocol_hash") == config.protocol_hash() or jsonable(exp.get("protocol")) == jsonable(
        config.protocol())
