"""Files of an experiment folder.

Names (:mod:`isoeat._names`), records (:mod:`isoeat._records`), links (:mod:`isoeat._io`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .._errors import ExperimentMismatchError, UnsafePathError
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
           "record_digest", "same_protocol", "OWNED", "check_owned"]

#: Paths in DIR that the runner and ``isoeat report`` own (``--overwrite all`` removes them).
OWNED = (
    "experiment.json", "config.yaml", "manifest.json", "cells", "metrics", "anisotropy", "similarity", "calibrators",
    "results.csv", "results.json", "comparison.csv", "comparison.json", "anisotropy.csv", "similarity.csv",
    "metrics.csv", "metrics.json", "metric_comparison.csv", "metric_comparison.json",
    "summary.json", "failures.json", "tables", "figures", "report.html",
)
#: The owned folders whose entries ``isoeat report`` writes (figures/tests/, ...): a link inside them is refused too.
_WRITTEN_FOLDERS = ("tables", "figures")


def _linked_out(out: Path, path: Path) -> UnsafePathError:
    return UnsafePathError(f"{path}: is a link leading out of the folder; isoeat reads and writes only inside {out}: "
                           "remove the link")


def check_owned(out: Path) -> None:
    """Refuse a folder whose owned paths would make isoeat read or write outside it, before anything is written:
    the one check of ``isoeat run`` and ``isoeat report``.

    Raises
    ------
    UnsafePathError
        An owned path (:data:`OWNED`) that is a link or leads out of the folder, or a link inside ``tables/``
        or ``figures/`` (a report writes through every level).
    ExperimentMismatchError
        A folder where isoeat writes a file (``manifest.json/``, ...).
    """
    base = out.resolve()
    for name in OWNED:  # an owned path linked elsewhere would make isoeat read and write outside the folder
        p = out / name
        if p.is_symlink() or (p.exists() and base not in p.resolve().parents):
            raise _linked_out(out, p)
        if "." in name and p.is_dir():  # a file of isoeat's (manifest.json, ...) that is a folder
            raise ExperimentMismatchError(f"{p}: is a folder where isoeat writes a file; move it away, or "
                                          "use another --out folder")
    for sub in _WRITTEN_FOLDERS:
        for root, dirs, files in os.walk(out / sub):  # links are listed, never entered
            for name in sorted(dirs + files):
                if (Path(root) / name).is_symlink():
                    raise _linked_out(out, Path(root) / name)


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
