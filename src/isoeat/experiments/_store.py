"""JSON files of an experiment folder: strict JSON written atomically, read forgivingly, safe names."""

from __future__ import annotations

import json
import math
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import IsoeatWarning
from .._io import atomic_write_text

__all__ = ["slug", "jsonable", "clean", "write_json", "read_json", "nan_of", "check_inside", "seal", "is_sealed",
           "record_digest"]


def slug(text: str) -> str:
    """A file-name-safe form of a label; a short hash keeps altered names distinct."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "x"
    if safe != text:
        import hashlib

        safe = f"{safe[:60]}-{hashlib.sha256(text.encode()).hexdigest()[:6]}"
    return safe


def jsonable(obj: Any) -> Any:
    from ..reporting.tables import to_json

    return json.loads(to_json(obj))


def clean(x: Any) -> Any:
    """NaN/inf -> None and numpy scalars -> Python, recursively (strict JSON)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        if x and all(type(v) is float for v in x[:8]) and all(type(v) is float and math.isfinite(v) for v in x):
            return list(x)
        return [clean(v) for v in x]
    if isinstance(x, np.generic):
        return clean(x.item())
    if isinstance(x, np.ndarray):
        return clean(x.tolist())
    return x


def write_json(path: Path, obj: Any, *, compact: bool = False) -> None:
    """Strict JSON (NaN written as null), atomically; ``compact`` for the per-cell files (fast C encoder)."""
    text = json.dumps(clean(obj), separators=(",", ":") if compact else None, indent=None if compact else 2,
                      allow_nan=False, default=str)
    atomic_write_text(path, text + "\n")


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        warnings.warn(f"{path}: unreadable ({exc}); treated as missing", IsoeatWarning, stacklevel=2)
        return None


def nan_of(v: Any) -> float:
    return float("nan") if v is None else float(v)


def check_inside(root: Path, path: Path) -> Path:
    """``path`` if it resolves inside ``root``; a symlink leading out of the folder is refused.

    Raises
    ------
    UnsafePathError
        Naming the path and where it leads.
    """
    from .._errors import UnsafePathError

    target = path.resolve()
    base = root.resolve()
    if target != base and base not in target.parents:
        raise UnsafePathError(f"{path}: leads out of the run folder (to {target}); isoeat reads only files inside "
                              f"{root}: remove the link")
    return path


#: The key of a cell file's content hash.
CONTENT_KEY = "content_sha256"


def record_digest(rec: dict) -> str:
    """SHA-256 of a record as strict JSON (sorted keys, NaN as null), without its own ``content_sha256``.

    A float written by :func:`json.dumps` reads back to the same float, so a
    record read from its file hashes to the value computed before writing it.
    """
    import hashlib

    body = {k: v for k, v in rec.items() if k != CONTENT_KEY}
    text = json.dumps(clean(body), sort_keys=True, separators=(",", ":"), allow_nan=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seal(rec: dict) -> dict:
    """``rec`` with its content hash, so a changed or hand-edited file is noticed when read back."""
    return {**rec, CONTENT_KEY: record_digest(rec)}


def is_sealed(rec: Any) -> bool:
    """True when ``rec`` carries a content hash that matches its content."""
    return isinstance(rec, dict) and rec.get(CONTENT_KEY) == record_digest(rec)
