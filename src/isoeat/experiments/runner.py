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
import traceback
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
from .._types import DescribedModel, fingerprint_of, kind_of, loaded_corpus_of, name_of
from .._validate import check_path
from ..diagnostics.frames import paper_variables, parse_frame
from ._formats import (
    EXPERIMENT_FORMAT,
    MANIFEST_FORMAT,
    check_cells,
    is_older_cell,
    manifest_note,
    read_record,
    refuse_newer,
    upgrade_note,
    version_problem,
)
from ._signals import SignalGate
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
from .config import ExperimentConfig, as_config, family_from_kind, test_hash
from .engine import Engine, metric_options
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

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted

    def line(self) -> str:
        return (f"{self.total} cells: {self.computed} computed, {self.reused} reused from earlier runs, "
                f"{len(self.failed)} failed ({self.seconds:.1f} s); results in {self.out}")


def _error_record(exc: BaseException, stage: str) -> dict[str, Any]:
    rec = {"type": type(exc).__name__, "message": str(exc), "stage": stage, "user_error": isinstance(exc, IsoeatError)}
    if not isinstance(exc, IsoeatError):
        rec["traceback"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]
    return rec


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
        previous_manifest = prev if isinstance(prev, dict) else {}
        _say(manifest_note(out, previous_manifest or None, prev_why), notes)
        work.mkdir(parents=True, exist_ok=True)
        _write_identity(work, config, old if same else None)
        cells = plan_cells(config, work, {k: calibrator_digest(v) for k, v in (calibration or {}).items()})
        _say(upgrade_note(older, (str(c.path.relative_to(work)) for c in cells)), notes)
        prog = progress_bar(len(cells), "", progress, prefix="isoeat run")
        old_runs = previous_manifest.get("runs")
        runs = [dict(r, status="interrupted") if r.get("status") == "running" else r  # we hold the lock
                for r in (old_runs if isinstance(old_runs, list) else []) if isinstance(r, dict)]
        this_run: dict[str, Any] = {
            "run_id": run_id, "started": started, "ended": None, "status": "running",
            "argv": list(argv) if argv is not None else None, "overwrite": overwrite,
            "pid": os.getpid(), "host": socket.gethostname(), "isoeat_version": __version__, "computed": 0,
            "reused": 0, "failed": 0, "notes": notes}
        runs.append(this_run)
        models_meta = _mapping(previous_manifest.get("models"))
        cal_meta = _mapping(previous_manifest.get("calibrators"))
        manifest_args: dict[str, Any] = dict(config=config, runs=runs, models=models_meta, calibrators=cal_meta,
                                             out=work)
        computed = reused = 0
        status = "interrupted"  # until the work is done, whatever stops it
        try:
            write_manifest(work, _build_manifest(**manifest_args, cells=cells))
            computed, reused = _run_cells(config, cells, work, overwrite, prog, log, run_id, models_meta, cal_meta,
                                          dict(models or {}), dict(calibration or {}), force)
            if write_tables:
                try:
                    # the calibrators' records first: the tidy files read them (the stability marks' redraws)
                    write_manifest(work, _build_manifest(**manifest_args, cells=cells))
                    write_results(work)
                except IsoeatError as exc:  # pragma: no cover - defensive
                    log(f"could not write tables: {exc}")
            status = "finished"
            gate.close()
        except BaseException as exc:  # SIGTERM (as KeyboardInterrupt), disk full, ...: the record says so
            gate.close()
            status = "interrupted"
            this_run["reason"] = f"{type(exc).__name__}: {exc}"[:300]
            raise
        finally:
            gate.close()
            prog.close()
            states = _cell_states(cells)
            failed = [s for s in states if s.get("status") == "failed"]
            this_run.update(ended=now_iso(), status=status, computed=computed, reused=reused,
                            failed=sum(1 for s in failed if s.get("run_id") == run_id),
                            seconds=round(time.perf_counter() - t_start, 3))
            try:
                write_manifest(work, _build_manifest(**manifest_args, cells=cells))
            except OSError:  # disk full: the next run marks this one interrupted
                pass
            if staged and status != "finished":
                import shutil

                shutil.rmtree(work, ignore_errors=True)
        if staged:
            if failed:
                import shutil

                shutil.rmtree(work, ignore_errors=True)
                log(f"{out}: {len(failed)} cell(s) failed; the old results are kept unchanged")
            else:
                kept = swap_in(work, out, run_id, OWNED)
                if kept.exists():
                    log(f"{out}: the replaced results are kept in {kept.name} (remove it when you no longer need it)")
    return RunSummary(out=out, run_id=run_id, total=len(cells), computed=computed, reused=reused,
                      failed=[{"key": f.get("key"), "kind": f.get("kind"), **(f.get("error") or {})} for f in failed],
                      seconds=time.perf_counter() - t_start, interrupted=status == "interrupted",
                      kept_old=staged and bool(failed))


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


def _cell_states(cells: list[Cell]) -> list[dict[str, Any]]:
    out = []
    for c in cells:
        rec = read_json(c.path) if c.path.exists() else None
        if rec and cell_is_whole(rec, c.kind):
            out.append({"key": c.key, "kind": c.kind, "status": rec.get("status"), "run_id": rec.get("run_id"),
                        "seed": rec.get("seed"), "seed_stream": rec.get("seed_stream"),
                        "duration_s": rec.get("duration_s"), "started": rec.get("started"),
                        "ended": rec.get("ended"), "error": rec.get("error")})
        else:
            out.append({"key": c.key, "kind": c.kind, "status": "pending", "seed": c.seed,
                        "seed_stream": list(c.stream)})
    return out


def _needs_run(cell: Cell, overwrite: str, log: Callable[[str], None]) -> bool:
    if overwrite == "all" or not cell.path.exists():
        return True
    rec = read_json(cell.path)
    if not cell_is_whole(rec, cell.kind) or rec.get("format_version") != CELL_FORMAT:
        if rec and not is_older_cell(rec):  # older formats: one line for all (_formats.upgrade_note)
            log(f"{cell.key}: its file is damaged or was edited (its content does not match its hash); recomputing")
        return True
    if rec.get("cell_hash") != cell.cell_hash:
        log(f"{cell.key}: its inputs changed since it was computed (test words, model options, seed or the "
            "calibrator given to the run); recomputing")
        return True
    if rec.get("status") == "failed":
        return overwrite == "failed"
    return rec.get("status") != "ok"


def _run_cells(config: ExperimentConfig, cells: list[Cell], out: Path, overwrite: str, prog: Progress,
               log: Callable[[str], None], run_id: str, models_meta: dict, cal_meta: dict,
               given_models: dict, given_calibrators: dict, force: bool) -> tuple[int, int]:
    from .layers import SharedLayers

    computed = reused = 0
    shared = SharedLayers(config, skip=given_models)  # entries that differ only in their layer: one sweep
    for mspec in config.models:
        mcells = [c for c in cells if c.model == mspec.label]
        if not mcells:
            continue
        pending = [c for c in mcells if _needs_run(c, overwrite, log)]
        # the model is loaded even when every cell is finished: finished cells are checked against its content
        prog.show(f"loading {mspec.label}")
        t0 = time.perf_counter()
        try:
            model = given_models.get(mspec.label) or shared.get(mspec.label) or load_model_for(mspec, config)
        except Exception as exc:  # noqa: BLE001 - recorded per cell, the grid goes on
            log(f"{mspec.label}: cannot load ({type(exc).__name__}: {exc})")
            kept = len(mcells) - len(pending)
            reused += kept
            prog.advance(f"{mspec.label}: {kept} finished cells kept", n=kept)
            computed += _fail_cells(pending, _error_record(exc, "load model"), run_id, None, prog)
            continue
        load_s = time.perf_counter() - t0
        try:
            desc = model.describe() if isinstance(model, DescribedModel) else {"name": name_of(model, mspec.spec)}
        except Exception as exc:  # noqa: BLE001 - a description never fails a run
            desc = {"name": name_of(model, mspec.spec), "describe_error": str(exc)}
        family = mspec.family
        kind_family = family_from_kind(kind_of(model))
        if not mspec.family_given and family == "static" and kind_family not in (None, "static"):
            family = kind_family  # a path or spec that turned out to be a contextual encoder
        models_meta[mspec.label] = {**jsonable(desc), "spec": mspec.spec, "label": mspec.label, "family": family,
                                    "load_seconds": round(load_s, 3), "loaded_by_run": run_id}
        fp = fingerprint_of(model)
        try:
            corpus_fp = corpus_content(model)
        except Exception as exc:  # noqa: BLE001 - the cells that need it fail below; finished ones are kept
            corpus_fp = None
            log(f"{mspec.label}: corpus unreadable ({exc}); finished cells kept, unchecked against it")
        try:
            requests = {cs.label: calibration_request(model, mspec, cs, config) for cs in config.calibrations
                        if cs.name != "none" and (mspec.label, cs.label) not in given_calibrators}
        except Exception as exc:  # noqa: BLE001 - a fit needing it fails its cells below; finished ones are kept
            requests = {}
            log(f"{mspec.label}: calibrator inputs unreadable ({exc}); finished cells kept, unchecked against them")
        pending_ids = {id(c) for c in pending}
        todo = pending + [c for c in mcells if id(c) not in pending_ids and stale_cell(c, fp, requests, log, corpus_fp)]
        skipped = len(mcells) - len(todo)
        if skipped:
            reused += skipped
            prog.advance(f"{mspec.label}: {skipped} finished cells reused", n=skipped)
        if not todo:
            del model
            continue
        engine = Engine(model, seed=config.settings.seed, weat_kwargs=config.settings.weat_kwargs(), force=force)
        # the isotropy check samples the pool the model's calibrators are fitted on (a given one: its own)
        pool = _pool(config, mspec, [given_calibrators.get((mspec.label, cs.label)) for cs in config.calibrations])
        for cspec in config.calibrations:
            ccells = [c for c in todo if c.calibration == cspec.label]
            if not ccells:
                continue
            calibrator = None
            cal_record: dict[str, Any] = {}
            if cspec.name != "none":
                prog.show(f"{mspec.label}: fitting {cspec.label}")
                try:
                    given = given_calibrators.get((mspec.label, cspec.label))
                    if given is not None:
                        calibrator = given_calibrator(given, model, mspec, cspec, out, force, cal_record)
                    else:
                        calibrator = calibrator_for(engine, mspec, cspec, config, out, overwrite, log, cal_record)
                    cal_meta[f"{mspec.label}/{cspec.label}"] = jsonable(cal_record)
                except Exception as exc:  # noqa: BLE001
                    log(f"{mspec.label}: calibrator {cspec.label} failed ({type(exc).__name__}: {exc})")
                    computed += _fail_cells(ccells, _error_record(exc, f"fit calibrator {cspec.label}"), run_id,
                                            fp, prog)
                    continue
            cal_info = {"label": cspec.label, "name": cspec.name, "params": cspec.params,
                        **({k: cal_record.get(k) for k in ("reference", "n", "path")} if cal_record else {}),
                        **({"request_hash": requests[cspec.label]} if cspec.label in requests else {})}
            for c in ccells:
                prog.show(c.label)
                t1 = time.perf_counter()
                started = now_iso()
                try:
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always", IsoeatWarning)
                        payload = compute_cell(engine, c, calibrator, config, pool)
                    payload["warnings"] = [str(w.message) for w in caught if issubclass(w.category, IsoeatWarning)]
                    payload["calibrator"] = cal_info
                    payload["family"] = family
                    if corpus_fp is not None:
                        payload["corpus_fingerprint"] = corpus_fp
                    status, err = "ok", None
                except Exception as exc:  # noqa: BLE001 - one failing cell never stops the grid
                    payload, status, err = ({"calibrator": cal_info, "family": family}, "failed",
                                            _error_record(exc, c.kind))
                dt = time.perf_counter() - t1
                _write_cell(c, run_id, status, payload, err, dt, fp, started)
                computed += 1
                prog.advance(c.label, seconds=dt)
        # describe again: contextual encoders load their corpus lazily (its fingerprint is known only now)
        try:
            desc = model.describe() if isinstance(model, DescribedModel) else {}
            models_meta[mspec.label].update(jsonable(desc))
            corp = loaded_corpus_of(model)  # never loads it
            if corp is not None and hasattr(corp, "describe"):
                models_meta[mspec.label]["corpus_description"] = jsonable(corp.describe())
        except Exception:  # noqa: BLE001 - a manifest never fails a run
            pass
        del engine, model
    return computed, reused


def compute_cell(engine: Engine, cell: Cell, calibrator: Any, config: ExperimentConfig, pool: Any) -> dict:
    """One cell of the grid, by the engine (``pool``: the reference sample the isotropy check draws from)."""
    s = config.settings
    if cell.kind == "weat":
        return engine.weat_cell(cell.extra["test"], calibrator)
    if cell.kind == "metrics":
        return engine.metrics_cell(cell.extra["test"], calibrator, config.metrics,
                                   metric_options(s.method, s.permutations))
    if cell.kind == "anisotropy":
        a = config.anisotropy
        assert a is not None
        return engine.anisotropy_cell(calibrator, pool, sample=a.sample, components=a.components,
                                      heatmap_size=a.heatmap_size, heatmap=cell.path.with_suffix(".npz"), frame=a.frame)
    assert config.similarity is not None
    return engine.similarity_cell(cell.item, calibrator, config.similarity.bootstrap)


def _pool(config: ExperimentConfig, mspec: Any, given: list[Any]) -> Any:
    """The reference sample of the model's calibrators: a given calibrator's recorded one, else the config's."""
    from ..calibration.sample import ReferenceSpec

    for cal in given:
        spec = (getattr(cal, "metadata_", None) or {}).get("reference_spec") if cal is not None else None
        if isinstance(spec, dict):
            try:
                return ReferenceSpec.from_key(spec)
            except (IsoeatError, KeyError, TypeError, ValueError):
                break  # a spec this isoeat cannot read: the config's sample
    return reference_spec(mspec, config, for_check=True)


def _fail_cells(cells: list[Cell], err: dict, run_id: str, fingerprint: str | None, prog: Progress) -> int:
    """Record every cell of a stage that could not start (model or calibrator failed) as failed."""
    for c in cells:
        _write_cell(c, run_id, "failed", {}, err, 0.0, fingerprint, None)
        prog.advance(c.label, seconds=0.0)
    return len(cells)


def _write_cell(cell: Cell, run_id: str, status: str, payload: dict, error: dict | None, seconds: float,
                fingerprint: str | None, started: str | None) -> None:
    from .._version import __version__

    rec = {
        "format": "isoeat-cell", "format_version": CELL_FORMAT, "kind": cell.kind,
        "key": {"model": cell.model, "calibration": cell.calibration, "item": cell.item},
        "status": status, "cell_hash": cell.cell_hash, "seed": cell.seed, "seed_stream": list(cell.stream),
        "model_fingerprint": fingerprint, "run_id": run_id, "isoeat_version": __version__,
        "started": started or now_iso(), "ended": now_iso(), "duration_s": round(seconds, 6), **payload,
    }
    if cell.kind in ("weat", "metrics"):
        rec["test_sha256"] = test_hash(cell.extra["test"])
    if error:
        rec["error"] = error
    write_json(cell.path, seal(rec), compact=True)


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
        tests[t.id] = {"source": t.source, "words_sha256": test_hash(t)}
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
