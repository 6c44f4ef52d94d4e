"""The experiment runner: a resumable grid of models x calibrations x tests.

``isoeat run CONFIG.yaml --out DIR`` (or :func:`run_experiment`) computes one
*cell* per (model, calibration, test) — ``isoeat.weat`` in that space — plus,
when the config asks, one anisotropy cell per (model, calibration) and one
similarity cell per (model, calibration, benchmark). Each cell is written to
its own JSON file, atomically, as soon as it finishes; a rerun skips the
finished ones, so a crashed or killed run resumes where it stopped.

Layout of ``DIR``::

    experiment.json            the normalised config and its protocol hash (identity of the experiment)
    config.yaml                the config file as given
    manifest.json              versions, fingerprints, seeds, runs, per-cell durations (see manifest.py)
    .isoeat.lock               present while a run holds the folder (PID, host)
    cells/MODEL/CAL/TEST.json  one WEAT cell (result with s-values, target x attribute cosines, seed, timing)
    metrics/MODEL/CAL/TEST.json the configured bias metrics of one test in one space (``metrics:``)
    anisotropy/MODEL/CAL.json  one anisotropy cell (+ .npz: cosine heatmap block, explained variance)
    similarity/MODEL/CAL/BENCH.json
    calibrators/MODEL/CAL.npz  fitted calibrators, reused by later runs (model fingerprint checked)
    results.csv|json           tidy WEAT records, one per cell
    comparison.csv|json        one row per model x calibrated space x test: d, p raw and calibrated, change
    metrics.csv|json, metric_comparison.csv|json   metric records; metrics x calibrated spaces x tests
    anisotropy.csv, similarity.csv, summary.json, failures.json
    tables/                    Table A1/2/3 and the summary in CSV, Markdown and LaTeX

Seeds: every cell draws from its own *named stream* of the root seed
``settings.seed`` (:func:`isoeat._random.derive_seed`): a WEAT from
``("weat", TEST)``, a metric from ``("metric", METRIC, TEST)``, the
anisotropy sample from ``("anisotropy", FRAME)``, a similarity bootstrap
from ``("similarity", BENCHMARK)``. The name holds no space: raw and every
calibrated space draw the same permutations and the same sample (common
random numbers), so a change between them is the calibration's alone. A
stream does not depend on the other cells of the grid, so the same cell
gives the same numbers in ``isoeat run``, ``isoeat weat --seed S``,
:func:`isoeat.compare_calibration` and every other command with the same
seed. Every cell records the root seed and its stream.
"""


from __future__ import annotations

import os
import socket
import time
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import __version__
from .._errors import (  # noqa: F401 - re-exported: isoeat.experiments.runner.Experiment*Error
    ConfigError,
    ExperimentLockedError,
    ExperimentMismatchError,
    ExperimentNotFoundError,
    IsoeatError,
    IsoeatWarning,
    UnsafePathError,
)
from .._io import atomic_write_text
from .._progress import Progress, progress_bar
from .._surface import public
from .._validate import check_path
from ..diagnostics.frames import paper_variables, parse_frame
from ._formats import (
    EXPERIMENT_FORMAT,
    MANIFEST_FORMAT,
    check_cells,
    manifest_note,
    read_record,
    refuse_newer,
    upgrade_note,
    version_problem,
)
from ._signals import SignalGate
from ._stages import _cell_states, _run_cells, _RunContext, compute_cell  # noqa: F401 - compute_cell: this module's API
from ._staging import SCRATCH, is_scratch, make_scratch, recover_scratch, swap_in
from ._store import OWNED, _protocol_diff, check_owned, jsonable, read_json, same_protocol, seal, write_json  # noqa: F401
from .cells import (  # noqa: F401 - plan_cells and Cell are part of this module's API
    _CORPORA,
    CELL_FORMAT,
    Cell,
    calibration_request,
    calibrator_digest,
    calibrator_for,
    check_labels,
    corpus_content,
    given_calibrator,
    load_model_for,
    plan_cells,
    reference_content,
    reference_spec,
    stale_cell,
)
from .config import ExperimentConfig, as_config, test_hash
from .lock import LOCK_NAME, DirLock
from .manifest import environment, file_fingerprint, now_iso, package_versions, read_manifest, write_manifest
from .results import EXPERIMENT_NAME, ExperimentResults, cell_is_whole, load_experiment, write_results  # noqa: F401

__all__ = [
    "ExperimentLockedError",
    "ExperimentMismatchError",
    "ExperimentNotFoundError",
    "RunSummary",
    "ExperimentResults",
    "DirLock",
    "Progress",
    "plan_cells",
    "run_experiment",
    "load_experiment",
    "write_results",
    "OVERWRITE",
    "CELL_FORMAT",
]

OVERWRITE = ("never", "failed", "all")


# =========================================================================== identity of an output folder
def _check_folder(out: Path, config: ExperimentConfig, overwrite: str) -> dict | None:
    """Refuse a folder holding another experiment (unless ``overwrite == 'all'``); return the old record."""
    check_owned(out)  # no owned path linked out of the folder (the one check of run and report)
    exp, unreadable = read_record(out / EXPERIMENT_NAME)
    if exp is not None and not (isinstance(exp, dict) and exp.get("format") == "isoeat-experiment"):
        raise ExperimentMismatchError(
            f"{out / EXPERIMENT_NAME}: not a file isoeat wrote; isoeat never replaces such files: use a new or "
            "empty folder"
        )
    if exp is not None:
        refuse_newer(out, exp, read_manifest(out))  # never rewrite what this isoeat cannot read
    damage = unreadable or (version_problem(exp) or ("not the record isoeat writes" if not isinstance(
        exp.get("config"), dict) else None) if exp is not None else None)
    if damage:
        if overwrite != "all":
            raise ExperimentMismatchError(
                f"{out / EXPERIMENT_NAME}: damaged ({damage}); use another --out folder, "
                "or --overwrite all to replace this folder's results"
            )
        return {"protocol_hash": None, "damaged": True}
    if exp is None:
        others = sorted(p.name for p in out.iterdir() if p.name != LOCK_NAME and not is_scratch(p)) \
            if out.exists() else []
        clash = [n for n in others if n in OWNED]
        if clash:
            raise ExperimentMismatchError(
                f"{out}: holds {', '.join(clash[:5])}, which isoeat did not write (the folder has no "
                f"{EXPERIMENT_NAME}); isoeat never replaces such files: use a new or empty folder"
            )
        if others and overwrite != "all":
            shown = ", ".join(others[:5]) + (" ..." if len(others) > 5 else "")
            raise ExperimentMismatchError(
                f"{out}: the folder is not empty and holds no isoeat experiment ({shown}); "
                "use a new or empty folder, or pass --overwrite all to write beside those files"
            )
        return None
    if not same_protocol(exp, config):
        if overwrite != "all":
            raise ExperimentMismatchError(
                f"{out}: holds the results of another experiment "
                f"({exp.get('name', '?')!r}; differs in {_protocol_diff(exp.get('protocol', {}), config.protocol())}); "
                "use another --out folder, or --overwrite all to replace those results"
            )
    return exp


def _preflight(config: ExperimentConfig) -> None:
    """What is refused before anything is written: labels that would share a file (``check_labels``), and, where
    the isotropy check reads frame ``paper``, a corpus variable set but naming no text (``paper_variables``)."""
    check_labels(config)
    if config.anisotropy is not None and parse_frame(config.anisotropy.frame)[0] == "paper":
        paper_variables()  # one line naming the variable, never the reference pool instead


def _folder_labels(exp: dict) -> dict[str, list[str]]:
    """The model labels, calibration labels, test ids and benchmarks a folder's ``experiment.json`` holds."""
    found = exp.get("config")
    cfg: dict = found if isinstance(found, dict) else {}

    def labels(key: str, field: str) -> list[str]:
        got = cfg.get(key)
        items: list = got if isinstance(got, list) else []
        return [str(x.get(field)) for x in items if isinstance(x, dict) and x.get(field) is not None]

    return {"models": labels("models", "label"), "calibrations": labels("calibrations", "label"),
            "tests": labels("tests", "id")}


def _remove_stale_temporaries(out: Path) -> None:
    """Temporary files (``.NAME.XXXX.tmp``) a killed run left behind anywhere in the folder (we hold the lock)."""
    candidates = list(out.glob(".*.tmp"))
    for sub in ("cells", "metrics", "anisotropy", "similarity", "calibrators", "tables", "figures"):
        d = out / sub
        if d.is_dir():
            candidates += d.rglob(".*.tmp")
    for p in candidates:
        try:
            if p.is_file() and not p.is_symlink():
                p.unlink()
        except OSError:
            pass


def _mapping(x: Any) -> dict:
    """A manifest section as a dict of dicts (a damaged section reads as empty)."""
    return {k: v for k, v in x.items() if isinstance(v, dict)} if isinstance(x, dict) else {}


# =========================================================================== the run
@dataclass
class RunSummary:
    """What one invocation did."""

    out: Path
    run_id: str
    total: int
    computed: int
    reused: int
    failed: list[dict[str, Any]]
    seconds: float
    interrupted: bool = False
    kept_old: bool = False  #: ``--overwrite all`` failed: the folder still holds the earlier results
    #: what the run wrote (its tidy records, tables' source and final manifest), read once from its cells to
    #: write the tables; None without ``write_tables`` or when nothing was published (``kept_old``)
    results: ExperimentResults | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted

    def line(self) -> str:
        return (f"{self.total} cells: {self.computed} computed, {self.reused} reused from earlier runs, "
                f"{len(self.failed)} failed ({self.seconds:.1f} s); results in {self.out}")


@public
def run_experiment(
    config: ExperimentConfig | str | Path,
    out: str | Path,
    *,
    overwrite: str = "never",
    progress: Any = None,
    log: Callable[[str], None] | None = None,
    write_tables: bool = True,
    argv: Sequence[str] | None = None,
    models: Mapping[str, Any] | None = None,
    calibration: Mapping[tuple[str, str], Any] | None = None,
    force: bool = False,
) -> RunSummary:
    """Run (or resume) an experiment grid into ``out``.

    Parameters
    ----------
    config : ExperimentConfig, mapping of a config file's keys (checked as the file is), or path of a YAML file
    out : path
        Output folder (created). A folder holding another experiment (another
        protocol: settings, calibrations, anisotropy or similarity settings) is
        refused unless ``overwrite="all"``; the same protocol with more or other
        models or tests extends the experiment.
    overwrite : {"never", "failed", "all"}
        ``never`` (default): reuse every finished cell, ok or failed;
        ``failed``: recompute the failed ones; ``all``: recompute everything
        (and refit calibrators).
    progress : None, bool or callable
        Cells done/total and ETA on stderr; default: a bar on a terminal, log
        lines every 10 s otherwise (``--quiet``, ``$ISOEAT_PROGRESS`` override);
        a callable ``progress(done, total, label)`` is called after each cell
        instead (:data:`isoeat._progress.PROGRESS_DOC`).
    log : callable, optional
        Receives one-line notes (model loaded, calibrator reused, ...).
    write_tables : bool, default True
        Write the tidy files and ``tables/`` at the end.
    argv : sequence of str, optional
        The command line, recorded in the manifest.
    models : mapping, optional
        Already loaded encoders by model label (``isoeat run`` without a
        config passes the one it loaded); other models are loaded from their spec.
    calibration : mapping, optional
        Already fitted calibrators by ``(model label, calibration label)``
        (a saved one given with ``--whitener``, or one fitted on a cluster);
        the config's other calibrations are fitted, or reused from
        ``out/calibrators/`` when their request is unchanged.
        ``calibrators=`` is its deprecated spelling.
    force : bool, default False
        Apply a given calibrator even if it was fitted on another model.

    Returns
    -------
    RunSummary
        ``failed`` lists the failed cells (this run's and earlier ones kept).

    Raises
    ------
    ExperimentLockedError, ExperimentMismatchError, ConfigError
    """
    if overwrite not in OVERWRITE:
        raise ConfigError(f"overwrite must be one of {', '.join(OVERWRITE)}; got {overwrite!r}")
    config = as_config(config, "run_experiment: config")
    out = check_path("run_experiment: out", out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: exists and is not a folder")
    _preflight(config)  # labels that would share a file, corpus variables naming no text: before anything is written
    user_log = log or (lambda msg: None)
    notes: list[str] = []

    def note(msg: str) -> None:  # every note also goes to the manifest's run record
        notes.append(msg)
        user_log(msg)

    log = note

    run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
    t_start = time.perf_counter()
    started = now_iso()
    with DirLock(out, run_id), SignalGate() as gate:  # a signal after the work waits for the records (_signals)
        folder = _open_folder(out, config, overwrite, run_id, log, notes)
        work = folder.work
        cells = plan_cells(config, work, {k: calibrator_digest(v) for k, v in (calibration or {}).items()})
        _say(upgrade_note(folder.older, (str(c.path.relative_to(work)) for c in cells)), notes)
        prog = progress_bar(len(cells), "", progress, prefix="isoeat run")
        runs, this_run = _run_records(folder.previous, run_id, started, argv, overwrite, notes)
        ctx = _RunContext(config, work, overwrite, prog, log, run_id, _mapping(folder.previous.get("models")),
                          _mapping(folder.previous.get("calibrators")), dict(models or {}), dict(calibration or {}),
                          force, compute=lambda *a: compute_cell(*a))  # this module's, as patched
        done = _execute(ctx, cells, gate, runs, this_run, write_tables=write_tables, t_start=t_start,
                        staged=folder.staged)
        failed = done["failed"]
        if folder.staged:
            _publish(out, work, failed, run_id, log)
    results = done["results"]
    return RunSummary(out=out, run_id=run_id, total=len(cells), computed=done["computed"], reused=done["reused"],
                      failed=[{"key": f.get("key"), "kind": f.get("kind"), **(f.get("error") or {})} for f in failed],
                      seconds=time.perf_counter() - t_start, interrupted=done["status"] == "interrupted",
                      kept_old=folder.staged and bool(failed),
                      results=None if folder.staged and failed else
                      (replace(results, out=out) if results is not None else None))


@dataclass
class _Folder:
    """The output folder as a run found it: its identity record (``old``), whether it holds the same protocol,
    whether the run computes into a staging folder (``work``), its manifest and its cells of older formats."""

    old: dict | None
    same: bool
    staged: bool
    work: Path
    previous: dict
    older: dict


def _open_folder(out: Path, config: ExperimentConfig, overwrite: str, run_id: str, log: Callable[[str], None],
                 notes: list[str]) -> _Folder:
    """Check the folder (under its lock), recover what a killed run left, and write the run's identity file."""
    old = _check_folder(out, config, overwrite)
    if old is not None and same_protocol(old, config):  # the grid grows: its labels join the folder's
        check_labels(config, _folder_labels(old))
    older = check_cells(out) if out.is_dir() else {}  # a newer cell is refused before anything is written
    recover_scratch(out, log)
    _remove_stale_temporaries(out)
    same = old is not None and same_protocol(old, config)
    staged = overwrite == "all" and old is not None
    work = make_scratch(out / f"{SCRATCH}staging-{run_id}", "staging") if staged else out
    if staged:
        log(f"{out}: --overwrite all: computing every cell anew; the old results stay until all succeed")
    prev, prev_why = read_record(out / "manifest.json") if same else (None, None)
    previous = prev if isinstance(prev, dict) else {}
    _say(manifest_note(out, previous or None, prev_why), notes)
    work.mkdir(parents=True, exist_ok=True)
    _write_identity(work, config, old if same else None)
    return _Folder(old=old, same=same, staged=staged, work=work, previous=previous, older=older)


def _run_records(previous: dict, run_id: str, started: str, argv: Sequence[str] | None, overwrite: str,
                 notes: list[str]) -> tuple[list[dict], dict[str, Any]]:
    """The manifest's runs: the earlier ones (one found running is marked interrupted: we hold the lock) and this."""
    old_runs = previous.get("runs")
    runs = [dict(r, status="interrupted") if r.get("status") == "running" else r
            for r in (old_runs if isinstance(old_runs, list) else []) if isinstance(r, dict)]
    this_run: dict[str, Any] = {
        "run_id": run_id, "started": started, "ended": None, "status": "running",
        "argv": list(argv) if argv is not None else None, "overwrite": overwrite,
        "pid": os.getpid(), "host": socket.gethostname(), "isoeat_version": __version__, "computed": 0,
        "reused": 0, "failed": 0, "notes": notes}
    runs.append(this_run)
    return runs, this_run


def _execute(ctx: _RunContext, cells: list[Cell], gate: SignalGate, runs: list[dict], this_run: dict, *,
             write_tables: bool, t_start: float, staged: bool) -> dict[str, Any]:
    """The cells, the tidy files and tables, and the manifest: written when the run starts (a run cut short is
    found "running") and when it ends, whatever ends it (the run's status); the tables read the calibrators'
    records from the manifest in memory."""
    work = ctx.out
    manifest_args: dict[str, Any] = dict(config=ctx.config, runs=runs, models=ctx.models_meta,
                                         calibrators=ctx.cal_meta, out=work)
    computed = reused = 0
    results: ExperimentResults | None = None
    status = "interrupted"  # until the work is done, whatever stops it
    try:
        write_manifest(work, _build_manifest(**manifest_args, cells=cells))
        computed, reused = _run_cells(ctx, cells)
        if write_tables:
            try:
                # the calibrators' records (the stability marks' redraws) from the manifest in memory: it is
                # written once more, when the run ends
                results = load_experiment(work, manifest=_build_manifest(**manifest_args, cells=cells))
                write_results(results)
            except IsoeatError as exc:  # pragma: no cover - defensive
                ctx.log(f"could not write tables: {exc}")
        status = "finished"
        gate.close()
    except BaseException as exc:  # SIGTERM (as KeyboardInterrupt), disk full, ...: the record says so
        gate.close()
        status = "interrupted"
        this_run["reason"] = f"{type(exc).__name__}: {exc}"[:300]
        raise
    finally:
        gate.close()
        ctx.prog.close()
        failed = [s for s in _cell_states(cells) if s.get("status") == "failed"]
        this_run.update(ended=now_iso(), status=status, computed=computed, reused=reused,
                        failed=sum(1 for s in failed if s.get("run_id") == ctx.run_id),
                        seconds=round(time.perf_counter() - t_start, 3))
        final = _build_manifest(**manifest_args, cells=cells)
        try:
            write_manifest(work, final)
        except OSError:  # disk full: the next run marks this one interrupted
            pass
        if staged and status != "finished":
            import shutil

            shutil.rmtree(work, ignore_errors=True)
    return {"status": status, "computed": computed, "reused": reused, "failed": failed,
            "results": replace(results, manifest=final) if results is not None else None}


def _publish(out: Path, work: Path, failed: list[dict], run_id: str, log: Callable[[str], None]) -> None:
    """``--overwrite all``: swap the staged results in when every cell succeeded, else keep the old ones."""
    import shutil

    if failed:
        shutil.rmtree(work, ignore_errors=True)
        log(f"{out}: {len(failed)} cell(s) failed; the old results are kept unchanged")
        return
    kept = swap_in(work, out, run_id, OWNED)
    if kept.exists():
        log(f"{out}: the replaced results are kept in {kept.name} (remove it when you no longer need it)")


def _say(note: str | None, notes: list[str]) -> None:
    """A note about the folder's versions: always shown (a warning, whatever the progress mode), and recorded."""
    if note:
        notes.append(note)
        warnings.warn(note, IsoeatWarning, stacklevel=3)


def _write_identity(out: Path, config: ExperimentConfig, old: dict | None) -> None:
    rec = {
        "format": "isoeat-experiment", "format_version": EXPERIMENT_FORMAT, "name": config.name,
        "protocol_hash": config.protocol_hash(), "protocol": config.protocol(),
        "config": config.to_dict(), "config_source": config.source,
        "created": (old or {}).get("created") or now_iso(), "updated": now_iso(), "isoeat_version": __version__,
    }
    write_json(out / EXPERIMENT_NAME, rec)
    if config.text is not None:
        atomic_write_text(out / "config.yaml", config.text)


def _build_manifest(*, config: ExperimentConfig, runs: list, models: dict, calibrators: dict, out: Path,
                    cells: list[Cell]) -> dict[str, Any]:
    corpora: dict[str, Any] = {}
    corpus = config.settings.reference.corpus
    if corpus:
        key = (corpus, config.settings.reference.sentences, config.settings.seed, reference_content(config))
        loaded = _CORPORA.get(key)
        if loaded is not None and hasattr(loaded, "describe"):
            try:
                corpora["reference"] = jsonable(loaded.describe())
            except Exception:  # noqa: BLE001 - a manifest never fails a run
                corpora["reference"] = {"name": corpus}
        elif Path(corpus).is_file():
            corpora["reference"] = file_fingerprint(corpus)
        else:
            corpora["reference"] = {"name": corpus}
    if config.similarity:
        bench: dict[str, Any] = {}
        for b in config.similarity.benchmarks:
            try:
                from ..similarity import find_benchmark_file

                f = Path(b) if Path(b).is_file() else find_benchmark_file(b)
                bench[b] = file_fingerprint(f)
            except Exception as exc:  # noqa: BLE001
                bench[b] = {"name": b, "error": str(exc)}
        corpora["benchmarks"] = bench
    tests = {}
    for t in config.tests:
        tests[t.id] = {"source": t.source, "words_sha256": test_hash(t),  # where the lists come from, their licence
                       **{k: getattr(t, k) for k in ("reference", "licence") if getattr(t, k, "")}}
        if t.source != "builtin" and Path(str(t.source)).exists():
            tests[t.id]["file"] = file_fingerprint(t.source)
    states = _cell_states(cells)
    durations = [s.get("duration_s") or 0.0 for s in states if s.get("status") in ("ok", "failed")]
    return {
        "format": "isoeat-manifest", "format_version": MANIFEST_FORMAT,
        "isoeat_version": __version__,
        "written": now_iso(),
        "environment": environment(),
        "packages": package_versions(),
        "experiment": {"name": config.name, "protocol_hash": config.protocol_hash(), "config_source": config.source},
        "config": config.to_dict(),
        "seeds": {
            "root": config.settings.seed,
            "rule": "named streams: the stream NAME of root seed S is numpy SeedSequence(S, spawn_key=the "
                    "eight little-endian 32-bit words of SHA-256 of NAME as a compact JSON array); a WEAT: "
                    "(weat, TEST); a metric: (metric, METRIC, TEST); the anisotropy sample: (anisotropy, FRAME); "
                    "a similarity bootstrap: (similarity, BENCHMARK); the same in every space (common random numbers)",
        },
        "models": models,
        "calibrators": calibrators,
        "corpora": corpora,
        "tests": tests,
        "runs": runs,
        "cells": {
            "total": len(states),
            "ok": sum(1 for s in states if s["status"] == "ok"),
            "failed": sum(1 for s in states if s["status"] == "failed"),
            "pending": sum(1 for s in states if s["status"] == "pending"),
            "compute_seconds": round(float(sum(durations)), 3),
            "list": states,
        },
    }
