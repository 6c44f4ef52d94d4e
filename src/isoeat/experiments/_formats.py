"""Format versions of an experiment folder's records: the one home of what this isoeat reads.

An experiment folder holds three kinds of versioned records, each with a
``format_version``: ``experiment.json`` (:data:`EXPERIMENT_FORMAT`), the cells
(:data:`CELL_FORMAT`) and ``manifest.json`` (:data:`MANIFEST_FORMAT`). The rules:

* a record of a **newer** version than this isoeat reads is refused — by
  ``run`` and ``report`` alike — with one line naming the file, the version
  found (and the isoeat that wrote it, when recorded) and the version read; it
  is never rewritten;
* a record without a whole-number version >= 1 is **damaged**;
* a cell of an **older** version is not published: ``report`` lists it (one
  note), ``run`` recomputes it in this format (one line: :func:`upgrade_note`);
* a manifest written by **another isoeat version** of the same format is read,
  and named (:func:`manifest_note`); each run records its own version.

The runner and the reader call :func:`refuse_newer` (experiment and manifest), :func:`version_problem`,
:func:`check_cells` (``run`` and ``report``, before writing: no newer cell) and :func:`cell_problem` (one cell).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._errors import ExperimentMismatchError

__all__ = ["EXPERIMENT_FORMAT", "CELL_FORMAT", "MANIFEST_FORMAT", "CELL_FOLDERS", "read_record", "version_of",
           "version_problem", "refuse_newer", "check_cells", "cell_problem", "is_older_cell", "upgrade_note",
           "manifest_note"]

#: ``experiment.json`` (the folder's identity: normalised config, protocol)
EXPERIMENT_FORMAT = 1
#: every cell file (WEAT, metrics, anisotropy, similarity)
CELL_FORMAT = 1
#: ``manifest.json``
MANIFEST_FORMAT = 1
#: the folders of cell files
CELL_FOLDERS = ("cells", "metrics", "anisotropy", "similarity")


def read_record(path: Path) -> tuple[Any, str | None]:
    """``(value, None)``; ``(None, None)`` when ``path`` does not exist; ``(None, why)`` when it cannot be parsed."""
    try:
        return json.loads(path.read_text("utf-8")), None
    except FileNotFoundError:
        return None, None
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    except ValueError as exc:  # a truncated or edited file
        return None, f"not valid JSON: {exc}"
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"


def version_of(rec: Any) -> int | None:
    """The record's ``format_version`` when it is a whole number >= 1 (not a bool, not text), else None."""
    v = rec.get("format_version") if isinstance(rec, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 1 else None


def _by(rec: dict) -> str:
    v = rec.get("isoeat_version")
    return f" by isoeat {v}" if isinstance(v, str) and v else ""


def _this() -> str:
    from .. import __version__

    return __version__


def _newer(path: Path, rec: dict, what: str, reads: int) -> ExperimentMismatchError:
    return ExperimentMismatchError(
        f"{path}: written in {what} format {version_of(rec)}{_by(rec)}; this isoeat ({_this()}) reads {what} "
        f"format {reads}: open the folder with the isoeat that wrote it, or use another --out folder "
        "(isoeat never rewrites it)")


def version_problem(rec: dict) -> str | None:
    """Why a record's ``format_version`` makes it damaged (None: a whole number >= 1)."""
    if version_of(rec) is None:
        return f"format_version {rec.get('format_version')!r} is not a whole number >= 1"
    return None


def refuse_newer(out: Path, exp: dict, manifest: Any) -> None:
    """Refuse ``experiment.json`` or ``manifest.json`` written in a newer format than this isoeat reads.

    ``exp`` is the parsed identity record, ``manifest`` the parsed manifest (or
    None). Raises :class:`ExperimentMismatchError` naming the file, the version
    found, the isoeat that wrote it and the version read.
    """
    v = version_of(exp)
    if v is not None and v > EXPERIMENT_FORMAT:
        raise _newer(out / "experiment.json", exp, "experiment", EXPERIMENT_FORMAT)
    if isinstance(manifest, dict) and manifest.get("format") == "isoeat-manifest":
        mv = version_of(manifest)
        if mv is not None and mv > MANIFEST_FORMAT:
            raise _newer(out / "manifest.json", manifest, "manifest", MANIFEST_FORMAT)


def manifest_note(out: Path, manifest: Any, unreadable: str | None = None) -> str | None:
    """One line when the folder's manifest was written by another isoeat version, or cannot be read
    (``unreadable``: why, from :func:`read_record`); None otherwise."""
    if unreadable:
        return (f"{out / 'manifest.json'}: damaged ({unreadable}); what it records (earlier runs, model names, "
                "calibrator records, reference-SE) is not read")
    if not isinstance(manifest, dict):
        return None
    v = manifest.get("isoeat_version")
    if not isinstance(v, str) or v == _this():
        return None
    return (f"{out / 'manifest.json'}: written by isoeat {v}; this is isoeat {_this()} (the formats are the same; "
            "each run records the isoeat version that made it)")


def cell_problem(rec: Any) -> str | None:
    """Why a cell record is not of this format (None: it is), from its ``format_version`` alone."""
    if not isinstance(rec, dict) or rec.get("format") != "isoeat-cell" or "format_version" not in rec:
        return None  # not a cell record at all: the content checks call it damaged
    v = version_of(rec)
    if v == CELL_FORMAT:
        return None
    if v is not None and v > CELL_FORMAT:
        return (f"written in cell format {v} by a newer isoeat; this isoeat ({_this()}) reads cell format "
                f"{CELL_FORMAT}: not used")
    return (f"written in cell format {rec.get('format_version')!r} by an older isoeat: not used; "
            f"'isoeat run' recomputes it in format {CELL_FORMAT}")


def is_older_cell(rec: Any) -> bool:
    """A cell record of an older format (recomputed, with :func:`upgrade_note`, not silently)."""
    problem = cell_problem(rec)
    return problem is not None and "older" in problem


def _cell_files(out: Path) -> Iterable[Path]:
    for sub in CELL_FOLDERS:
        d = out / sub
        if d.is_dir() and not d.is_symlink():
            yield from sorted(p for p in d.rglob("*.json") if p.is_file() and not p.is_symlink())


def check_cells(out: Path) -> dict[str, Any]:
    """Refuse a folder holding a cell or a saved calibrator of a newer format (``run`` would replace what it
    cannot read).

    Returns the cells of an older format: path relative to ``out`` -> the version found.
    """
    cal_dir = out / "calibrators"
    if cal_dir.is_dir() and not cal_dir.is_symlink():
        from ..calibration.io import newer_format

        for p in sorted(q for q in cal_dir.rglob("*.npz") if q.is_file() and not q.is_symlink()):
            why = newer_format(p)
            if why:
                raise ExperimentMismatchError(f"{why} (isoeat never rewrites it: use another --out folder)")
    older: dict[str, Any] = {}
    for p in _cell_files(out):
        rec, _ = read_record(p)
        if is_older_cell(rec):
            older[str(p.relative_to(out))] = rec.get("format_version")
        v = version_of(rec)
        if v is not None and v > CELL_FORMAT and isinstance(rec, dict) and rec.get("format") == "isoeat-cell":
            raise ExperimentMismatchError(
                f"{p}: written in cell format {v} by a newer isoeat; this isoeat ({_this()}) reads cell format "
                f"{CELL_FORMAT}: open the folder with the isoeat that wrote it, or use another --out folder "
                "(isoeat never rewrites it)")
    return older


def upgrade_note(older: dict[str, Any], planned: Iterable[str]) -> str | None:
    """One line for the cells of an older format (``check_cells``) that a run recomputes (None: there are none)."""
    old = [older[p] for p in planned if p in older]
    if not old:
        return None
    found = ", ".join(sorted({repr(v) for v in old}))
    return (f"{len(old)} cell(s) written by an older isoeat (cell format {found}) are recomputed in cell format "
            f"{CELL_FORMAT}")
