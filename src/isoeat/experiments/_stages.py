"""The stages of one run of the grid (:func:`isoeat.experiments.runner.run_experiment`): per model, load it, check
its finished cells, fit its calibrators (the calibrator route, :mod:`isoeat.experiments.route`), then compute and
write each cell. :class:`_RunContext` is what every stage of one run shares."""

from __future__ import annotations

import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import IsoeatError, IsoeatWarning
from .._progress import Progress
from .._types import DescribedModel, fingerprint_of, kind_of, loaded_corpus_of, name_of
from ._formats import is_older_cell
from ._store import jsonable, read_json, seal, write_json
from .cells import (
    CELL_FORMAT,
    Cell,
    calibration_request,
    calibrator_for,
    corpus_content,
    given_calibrator,
    load_model_for,
    reference_spec,
    stale_cell,
)
from .config import ExperimentConfig, family_from_kind, test_hash
from .engine import Engine, metric_options
from .manifest import now_iso
from .results import cell_is_whole


def _error_record(exc: BaseException, stage: str) -> dict[str, Any]:
    rec = {"type": type(exc).__name__, "message": str(exc), "stage": stage, "user_error": isinstance(exc, IsoeatError)}
    if not isinstance(exc, IsoeatError):
        rec["traceback"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]
    return rec


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


@dataclass
class _RunContext:
    """What every stage of one run shares (the parameter object of :func:`_run_cells`)."""

    config: ExperimentConfig
    out: Path
    overwrite: str
    prog: Progress
    log: Callable[[str], None]
    run_id: str
    models_meta: dict
    cal_meta: dict
    given_models: dict
    given_calibrators: dict
    force: bool
    #: what computes a cell (the runner passes its module's ``compute_cell``, looked up at each call)
    compute: Callable[..., dict] | None = None


def _run_cells(ctx: _RunContext, cells: list[Cell]) -> tuple[int, int]:
    """Every model's cells, one model at a time: load it, check its finished cells, fit its calibrators, compute."""
    from .layers import SharedLayers

    computed = reused = 0
    shared = SharedLayers(ctx.config, skip=ctx.given_models)  # entries that differ only in their layer: one sweep
    for mspec in ctx.config.models:
        mcells = [c for c in cells if c.model == mspec.label]
        if mcells:
            c, r = _run_model(ctx, mspec, mcells, shared)
            computed, reused = computed + c, reused + r
    return computed, reused


def _run_model(ctx: _RunContext, mspec: Any, mcells: list[Cell], shared: Any) -> tuple[int, int]:
    """One model's cells: ``(computed, reused)``."""
    config, log, prog = ctx.config, ctx.log, ctx.prog
    pending = [c for c in mcells if _needs_run(c, ctx.overwrite, log)]
    # the model is loaded even when every cell is finished: finished cells are checked against its content
    prog.show(f"loading {mspec.label}")
    t0 = time.perf_counter()
    try:
        model = ctx.given_models.get(mspec.label) or shared.get(mspec.label) or load_model_for(mspec, config)
    except Exception as exc:  # noqa: BLE001 - recorded per cell, the grid goes on
        log(f"{mspec.label}: cannot load ({type(exc).__name__}: {exc})")
        kept = len(mcells) - len(pending)
        prog.advance(f"{mspec.label}: {kept} finished cells kept", n=kept)
        return _fail_cells(pending, _error_record(exc, "load model"), ctx.run_id, None, prog), kept
    family = _describe_model(ctx, mspec, model, time.perf_counter() - t0)
    fp = fingerprint_of(model)
    try:
        corpus_fp = corpus_content(model)
    except Exception as exc:  # noqa: BLE001 - the cells that need it fail below; finished ones are kept
        corpus_fp = None
        log(f"{mspec.label}: corpus unreadable ({exc}); finished cells kept, unchecked against it")
    try:
        requests = {cs.label: calibration_request(model, mspec, cs, config) for cs in config.calibrations
                    if cs.name != "none" and (mspec.label, cs.label) not in ctx.given_calibrators}
    except Exception as exc:  # noqa: BLE001 - a fit needing it fails its cells below; finished ones are kept
        requests = {}
        log(f"{mspec.label}: calibrator inputs unreadable ({exc}); finished cells kept, unchecked against them")
    pending_ids = {id(c) for c in pending}
    todo = pending + [c for c in mcells if id(c) not in pending_ids and stale_cell(c, fp, requests, log, corpus_fp)]
    skipped = len(mcells) - len(todo)
    if skipped:
        prog.advance(f"{mspec.label}: {skipped} finished cells reused", n=skipped)
    if not todo:
        return 0, skipped
    engine = Engine(model, seed=config.settings.seed, weat_kwargs=config.settings.weat_kwargs(), force=ctx.force)
    fitted, failed, computed = _fit_calibrators(ctx, engine, mspec, todo, fp)
    # the isotropy check samples the pool the model's calibrators are fitted on (a given one, or a sharded fit:
    # the sample it recorded)
    pool = _pool(config, mspec, [ctx.given_calibrators.get((mspec.label, cs.label)) or
                                 _sharded(fitted.get(cs.label, (None, {}))[0]) for cs in config.calibrations])
    base = {"family": family, **({"corpus_fingerprint": corpus_fp} if corpus_fp is not None else {})}
    for cspec in config.calibrations:
        if cspec.label in failed:
            continue
        calibrator, cal_record = fitted.get(cspec.label, (None, {}))
        cal_info = {"label": cspec.label, "name": cspec.name, "params": cspec.params,
                    **({k: cal_record.get(k) for k in ("reference", "n", "path")} if cal_record else {}),
                    **({"request_hash": requests[cspec.label]} if cspec.label in requests else {})}
        for c in (c for c in todo if c.calibration == cspec.label):
            _compute_and_write(ctx, engine, c, calibrator, pool, {**base, "calibrator": cal_info}, fp)
            computed += 1
    _describe_again(ctx, mspec, model)
    del engine, model
    return computed, skipped


def _sharded(calibrator: Any) -> Any:
    """A calibrator fitted by the sharded route (its recorded sample is the isotropy check's pool), else None."""
    meta = getattr(calibrator, "metadata_", None) or {}
    return calibrator if "reference_mode" in meta else None


def _fit_calibrators(ctx: _RunContext, engine: Engine, mspec: Any, todo: list[Cell], fp: str | None
                     ) -> tuple[dict[str, tuple[Any, dict]], set[str], int]:
    """The calibrators ``todo`` needs (by calibration label, with their manifest record), the labels whose fit
    failed (their cells recorded as failed), and how many cells that was."""
    config = ctx.config
    fitted: dict[str, tuple[Any, dict]] = {}
    failed: set[str] = set()
    computed = 0
    wanted = {c.calibration for c in todo}
    for cspec in config.calibrations:
        if cspec.name == "none" or cspec.label not in wanted:
            continue
        ccells = [c for c in todo if c.calibration == cspec.label]
        ctx.prog.show(f"{mspec.label}: fitting {cspec.label}")
        cal_record: dict[str, Any] = {}
        try:
            given = ctx.given_calibrators.get((mspec.label, cspec.label))
            if given is not None:
                calibrator = given_calibrator(given, engine.model, mspec, cspec, ctx.out, ctx.force, cal_record)
            else:
                calibrator = calibrator_for(engine, mspec, cspec, config, ctx.out, ctx.overwrite, ctx.log,
                                            cal_record)
            ctx.cal_meta[f"{mspec.label}/{cspec.label}"] = jsonable(cal_record)
            fitted[cspec.label] = (calibrator, cal_record)
        except Exception as exc:  # noqa: BLE001
            ctx.log(f"{mspec.label}: calibrator {cspec.label} failed ({type(exc).__name__}: {exc})")
            computed += _fail_cells(ccells, _error_record(exc, f"fit calibrator {cspec.label}"), ctx.run_id, fp,
                                    ctx.prog)
            failed.add(cspec.label)
    return fitted, failed, computed


def _compute_and_write(ctx: _RunContext, engine: Engine, c: Cell, calibrator: Any, pool: Any, extra: dict,
                       fp: str | None) -> None:
    """One cell computed (its IsoeatWarnings kept) and written, ok or failed."""
    ctx.prog.show(c.label)
    t1 = time.perf_counter()
    started = now_iso()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", IsoeatWarning)
            payload = (ctx.compute or compute_cell)(engine, c, calibrator, ctx.config, pool)
        payload["warnings"] = [str(w.message) for w in caught if issubclass(w.category, IsoeatWarning)]
        payload.update(extra)
        status, err = "ok", None
    except Exception as exc:  # noqa: BLE001 - one failing cell never stops the grid
        payload, status, err = ({"calibrator": extra["calibrator"], "family": extra["family"]}, "failed",
                                _error_record(exc, c.kind))
    dt = time.perf_counter() - t1
    _write_cell(c, ctx.run_id, status, payload, err, dt, fp, started)
    ctx.prog.advance(c.label, seconds=dt)


def _describe_model(ctx: _RunContext, mspec: Any, model: Any, load_s: float) -> str:
    """The manifest's record of a loaded model; returns its family (a spec that turned out contextual: its kind's)."""
    try:
        desc = model.describe() if isinstance(model, DescribedModel) else {"name": name_of(model, mspec.spec)}
    except Exception as exc:  # noqa: BLE001 - a description never fails a run
        desc = {"name": name_of(model, mspec.spec), "describe_error": str(exc)}
    family = mspec.family
    kind_family = family_from_kind(kind_of(model))
    if not mspec.family_given and family == "static" and kind_family not in (None, "static"):
        family = kind_family  # a path or spec that turned out to be a contextual encoder
    ctx.models_meta[mspec.label] = {**jsonable(desc), "spec": mspec.spec, "label": mspec.label, "family": family,
                                    "load_seconds": round(load_s, 3), "loaded_by_run": ctx.run_id}
    return family


def _describe_again(ctx: _RunContext, mspec: Any, model: Any) -> None:
    """Describe again: contextual encoders load their corpus lazily (its fingerprint is known only now)."""
    try:
        desc = model.describe() if isinstance(model, DescribedModel) else {}
        ctx.models_meta[mspec.label].update(jsonable(desc))
        corp = loaded_corpus_of(model)
        if corp is not None and hasattr(corp, "describe"):
            ctx.models_meta[mspec.label]["corpus_description"] = jsonable(corp.describe())
    except Exception:  # noqa: BLE001 - a manifest never fails a run
        pass


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
