"""Figures a folder already holds, drawn from the same inputs: kept instead of drawn again (issue 41, item 6).

Drawing the figures is most of ``isoeat report`` (matplotlib: building, laying
out and rasterising ~30 files); reporting the same folder again (after
``isoeat run`` reused every cell, or to add ``--html``) drew every one anew. A
figure's files are a function of its inputs: the experiment's results (every
field of :class:`~isoeat.experiments.results.ExperimentResults`, byte for byte
as canonical JSON), the figure's name, the formats and dpi, the matplotlib
settings in force (fonts included), the versions of matplotlib and Pillow and
the bytes of isoeat's own code. After drawing, :class:`FigureMemo` records the
SHA-256 of each file written under a key made of all of that and the folder's
resolved path (in the embedding cache, kind ``figures``: nothing is added to
the folder); the next report of the same inputs into the same folder keeps a
figure whose files are all there with those very bytes, and draws the others.
Any change (a result, a setting, a file edited or deleted, isoeat upgraded)
draws again, so a kept file is the file drawing would write.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._records import digest_json

__all__ = ["FigureMemo"]



def _plain(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return {"__array__": obj.dtype.str, "shape": list(obj.shape), "data": obj.tolist()}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    raise TypeError(f"not plain data: {type(obj).__name__}")


def results_digest(res: Any) -> str | None:
    """SHA-256 of every field of ``res`` as canonical JSON (floats exactly: JSON writes their shortest repr);
    None where a field is not plain data (then nothing is kept)."""
    if not is_dataclass(res):
        return None
    try:
        doc = {f.name: getattr(res, f.name) for f in fields(res)}
        text = digest_json(doc, _plain)
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _file_sha(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            h = hashlib.sha256()
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
            return h.hexdigest()
    except OSError:
        return None


class FigureMemo:
    """The figures of one report: :meth:`kept` says which need no drawing, :meth:`record` notes those drawn."""

    KIND = "figures"

    def __init__(self, res: Any, folder: Path, formats: Sequence[str], dpi: int) -> None:
        from ..backends.cache import EmbeddingCache, code_digest, quiet_get

        self.folder, self.formats = Path(folder), tuple(formats)
        self.cache = EmbeddingCache()
        self.key: dict[str, Any] | None = None
        self.files: dict[str, dict[str, str]] = {}
        digest = results_digest(res) if self.cache.enabled else None
        if digest is None:
            return
        import matplotlib
        import PIL
        from matplotlib import rcParams

        fonts = {k: rcParams[k] for k in sorted(rcParams.keys()) if k.startswith(("font.", "text.", "figure.",
                                                                                   "savefig.", "pdf.", "svg."))}
        try:
            settings = digest_json(fonts, repr)
        except (TypeError, ValueError):
            return
        self.key = {"figure_memo": 1, "folder": str(self.folder.resolve()), "results": digest,
                    "formats": list(self.formats), "dpi": int(dpi), "code": code_digest(),
                    "matplotlib": matplotlib.__version__, "pillow": PIL.__version__,
                    "settings": hashlib.sha256(settings.encode()).hexdigest()}
        found = quiet_get(self.cache, self.KIND, self.key)
        if found is not None and "record" in found:
            try:
                files = json.loads(str(found["record"]))
                self.files = files if isinstance(files, dict) else {}
            except ValueError:
                self.files = {}

    def paths(self, name: str) -> list[Path]:
        """The files of figure ``name``, one per format, in the order written."""
        return [self.folder / f"{name}.{fmt}" for fmt in self.formats]

    def kept(self, name: str) -> bool:
        """Whether every file of ``name`` is there with the bytes recorded when it was drawn from these inputs."""
        want = self.files.get(name)
        if not isinstance(want, dict) or set(want) != set(self.formats):
            return False
        return all(_file_sha(p) == want[fmt] for fmt, p in zip(self.formats, self.paths(name)))

    def record(self, names: Sequence[str]) -> None:
        """Note the files of ``names`` as just drawn (with the ones kept) for the next report."""
        if self.key is None:
            return
        from ..backends.cache import quiet_put

        for name in names:
            shas = {fmt: _file_sha(p) for fmt, p in zip(self.formats, self.paths(name))}
            if all(shas.values()):
                self.files[name] = {k: str(v) for k, v in shas.items()}
            else:
                self.files.pop(name, None)
        quiet_put(self.cache, self.KIND, self.key, {"record": np.array(digest_json(self.files))})
