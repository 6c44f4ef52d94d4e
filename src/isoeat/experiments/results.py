"""Reading an experiment folder back: tidy records, comparisons, summaries, and the tidy files.

Nothing here recomputes a statistic: the WEAT records come from the cells'
JSON files and the comparison rows, change classes, flags and Holm/BH
families from :mod:`isoeat.experiments.compare` — the one home of every label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ExperimentNotFoundError
from .._io import atomic_write_text
from .._validate import check_path
from ..labels import fallback_counts, protocol_departures, protocol_text, reference_used, too_many_fallbacks
from ._formats import cell_problem, check_cells, manifest_note, read_record, refuse_newer, version_problem
from ._store import check_inside, check_owned, is_sealed, nan_of, read_json, slug
from .compare import adjust_records, comparison_rows, metric_comparison_rows
from .manifest import read_manifest

__all__ = ["ExperimentResults", "load_experiment", "read_experiment", "cell_is_whole", "write_results",
           "check_writable", "EXPERIMENT_NAME"]

EXPERIMENT_NAME = "experiment.json"
_FLOAT_FIELDS = ("effect_size", "statistic", "p_value", "p_ci_low", "p_ci_high", "tolerance", "effect_size_ci_low",
                 "effect_size_ci_high", "effect_size_ci_level", "effect_size_ci_estimate", "p_holm", "p_bh")


@dataclass
class ExperimentResults:
    """Tidy results of an experiment folder (what reporting reads).

    Attributes
    ----------
    out : Path
    experiment : dict
        ``experiment.json`` (normalised config, protocol).
    manifest : dict
    weat : list of dict
        One record per finished WEAT cell: the :class:`~isoeat.WEATResult`
        fields (``s_x``/``s_y`` included), plus ``model`` (label), ``model_name``,
        ``family``, ``calibration`` (label), ``calibration_name``, ``seed``,
        ``cell`` (path) and ``p_holm``/``p_bh`` across the tests of each
        (model, calibration).
    comparisons : list of dict
        One row per model x calibrated space x test (see :func:`isoeat.experiments.compare.comparison_rows`).
    anisotropy, similarity : list of dict
    failures : list of dict
    summary : dict
        Calibration label -> :func:`isoeat.experiments.summary.summarize` output.
    metrics : list of dict
        One :class:`~isoeat.metrics.MetricResult` record per finished metric
        (``metrics:`` in the config; ``per_word`` and ``words`` included) with the
        runner's ``model``, ``family``, ``calibration``, ``calibration_name``, ``cell``.
    metric_comparisons : list of dict
        Metrics x calibrated spaces x tests (:func:`isoeat.experiments.compare.metric_comparison_rows`).
    notes : list of str
        One line each about the folder's versions (:mod:`isoeat.experiments._formats`): cells of another
        format (not used, listed in ``failures``), a manifest written by another isoeat version.
    """

    out: Path
    experiment: dict
    manifest: dict
    weat: list[dict]
    comparisons: list[dict]
    anisotropy: list[dict]
    similarity: list[dict]
    failures: list[dict]
    summary: dict
    models: list[dict]
    tests: list[dict]
    calibrations: list[dict]
    metrics: list[dict] = field(default_factory=list)
    metric_comparisons: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def alpha(self) -> float:
        return float(self.experiment["config"]["settings"]["alpha"])

    @property
    def settings(self) -> dict:
        return self.experiment["config"]["settings"]

    def departures(self, model: str, calibration: str) -> tuple[str, ...]:
        """Where a (model, calibration) of the folder departs from the paper's protocol (``protocol`` column)."""
        return folder_departures(self.experiment["config"], self.manifest, model, calibration, self.weat)

    def cosines(self, model: str, calibration: str, test: str) -> dict | None:
        """The stored target x attribute cosines of one WEAT cell (None when absent)."""
        for r in self.weat:
            if r["model"] == model and r["calibration"] == calibration and r["test"] == test:
                rec = read_json(self.out / r["cell"]) or {}
                return rec.get("cosines")
        return None

    def heatmap(self, model: str, calibration: str) -> np.ndarray | None:
        """The stored pairwise-cosine block of an anisotropy cell (Figure 1), or None."""
        for a in self.anisotropy:
            if a["model"] == model and a["calibration"] == calibration and a.get("heatmap_path"):
                try:
                    with np.load(self.out / a["heatmap_path"], allow_pickle=False) as z:
                        return np.array(z["cosine"], dtype=np.float64)
                except (OSError, KeyError, ValueError):
                    return None
        return None


#: The failure record of a cell file that is not what isoeat wrote (a resume recomputes it).
DAMAGED = {"type": "DamagedCell", "message": "the cell file is damaged or was edited (its content does not match "
                                              "the hash isoeat recorded); a resume recomputes it", "user_error": True}


#: The failure type of a cell of another format (:mod:`isoeat.experiments._formats`): not used, not damaged.
FORMAT_TYPE = "CellFormat"


def _unused(rec: object) -> dict:
    """The failure record of a cell that is not published: of another format, else damaged."""
    problem = cell_problem(rec)
    return {"type": FORMAT_TYPE, "message": problem, "user_error": True} if problem else DAMAGED


def cell_is_whole(rec: object, kind: str) -> bool:
    """A cell record exactly as isoeat wrote it: its content hash matches, finished cells carry a ``result``.

    Any change to a cell file after it was written — a damaged file, a hand
    edit of a number — breaks the hash: a resume recomputes the cell and a
    report lists it as damaged; nothing of it is published.
    """
    if not isinstance(rec, dict) or not is_sealed(rec) or not isinstance(rec.get("status"), str):
        return False
    if rec["status"] == "ok":
        res = rec.get("result")
        return isinstance(res, dict) and (kind != "weat"
                                          or isinstance(res.get("effect_size"), (int, float, type(None))))
    return True


def read_experiment(out: Path) -> dict:
    """``DIR/experiment.json``, checked: a one-line error when it is missing, damaged or of a newer format."""
    exp, unreadable = read_record(check_inside(out, out / EXPERIMENT_NAME))
    if unreadable:
        raise ExperimentNotFoundError(f"{out / EXPERIMENT_NAME}: damaged ({unreadable}); restore it, or rerun into "
                                      "a new folder")
    if exp is None:
        raise ExperimentNotFoundError(
            f"{out}: not an isoeat experiment folder (no {EXPERIMENT_NAME}); run 'isoeat run --out {out}' "
            f"(or 'isoeat run CONFIG.yaml --out {out}') first"
        )
    if isinstance(exp, dict):
        check_inside(out, out / "manifest.json")
        refuse_newer(out, exp, read_manifest(out))
        problem = version_problem(exp)
        if problem:
            raise ExperimentNotFoundError(f"{out / EXPERIMENT_NAME}: damaged ({problem}); restore it, or rerun "
                                          "into a new folder")
    found = exp.get("config") if isinstance(exp, dict) else None
    cfg: dict = found if isinstance(found, dict) else {}
    ok = isinstance(found, dict) and all(isinstance(cfg.get(k), list) for k in ("models", "tests", "calibrations")) \
        and isinstance(cfg.get("settings"), dict) and "alpha" in cfg["settings"]
    if ok:
        ok = all(isinstance(m, dict) and {"label", "spec", "family"} <= set(m) for m in cfg["models"]) \
            and all(isinstance(t, dict) and "id" in t for t in cfg["tests"]) \
            and all(isinstance(c, dict) and {"label", "name"} <= set(c) for c in cfg["calibrations"])
    if not ok:
        raise ExperimentNotFoundError(
            f"{out / EXPERIMENT_NAME}: damaged (not the record isoeat writes: a 'config' with models, tests, "
            f"calibrations and settings); restore it, or rerun into a new folder"
        )
    return exp


def check_writable(out: Path) -> dict[str, Any]:
    """What ``isoeat run`` and ``isoeat report`` check before writing anything in a folder (under its lock): no
    owned path linked out of it (:func:`~isoeat.experiments._store.check_owned`), no cell or saved calibrator of
    a newer format, which would be rewritten without what it holds (:func:`~isoeat.experiments._formats.
    check_cells`). Returns the cells of an older format (path -> version)."""
    check_owned(out)
    return check_cells(out) if out.is_dir() else {}


def load_experiment(out: str | Path, *, manifest: dict | None = None) -> ExperimentResults:
    """Read an experiment folder's cells into tidy records (no recomputation).

    Parameters
    ----------
    out : str or Path
        The experiment folder.
    manifest : dict, optional
        The manifest the run holds in memory (the runner, as its cells are done): used instead of reading
        ``manifest.json`` back, so a run writes its manifest once per stage it records. Default: read it.

    Raises
    ------
    ExperimentNotFoundError
        ``out`` has no ``experiment.json``.
    """
    from .summary import summarize

    out = check_path("load_experiment: out", out)
    exp = read_experiment(out)
    cfg = exp["config"]
    if manifest is None:
        manifest_read, manifest_why = read_record(check_inside(out, out / "manifest.json"))
        manifest = manifest_read if isinstance(manifest_read, dict) else {}
    else:
        manifest_why = None
    alpha = float(cfg["settings"]["alpha"])
    mmeta = _as_dict(manifest.get("models"))
    models = []
    for m in cfg["models"]:
        meta = _as_dict(mmeta.get(m["label"]))
        models.append({**m, "family": meta.get("family") or m["family"], "name": meta.get("name", m["spec"]),
                       "fingerprint": meta.get("fingerprint"), "corpus": meta.get("corpus"),
                       "corpus_fingerprint": _as_dict(meta.get("corpus_description")).get("fingerprint")})
    family_of = {m["label"]: m["family"] for m in models}
    cal_name = {c["label"]: c["name"] for c in cfg["calibrations"]}
    weat_recs: list[dict] = []
    metric_recs: list[dict] = []
    failures: list[dict] = []
    aniso: list[dict] = []
    sims: list[dict] = []
    mdirs = {m["label"]: slug(m["label"]) for m in cfg["models"]}
    cdirs = {c["label"]: slug(c["label"]) for c in cfg["calibrations"]}
    for m in cfg["models"]:
        for c in cfg["calibrations"]:
            labels = dict(model=m["label"], family=family_of[m["label"]], calibration=c["label"],
                          calibration_name=cal_name[c["label"]])
            for t in cfg["tests"]:
                if cfg.get("metrics"):
                    _read_metric_cell(out, out / "metrics" / mdirs[m["label"]] / cdirs[c["label"]] /
                                      f"{slug(t['id'])}.json", t["id"], dict(labels), metric_recs, failures)
                p = check_inside(out, out / "cells" / mdirs[m["label"]] / cdirs[c["label"]] / f"{slug(t['id'])}.json")
                _read_weat_cell(out, p, t["id"], labels, weat_recs, failures)
            if cfg.get("anisotropy"):
                _read_anisotropy_cell(out, out / "anisotropy" / mdirs[m["label"]] / f"{cdirs[c['label']]}.json",
                                      labels, aniso, failures)
            if cfg.get("similarity") and c["name"] != "none":
                for b in cfg["similarity"]["benchmarks"]:
                    _read_similarity_cell(out, out / "similarity" / mdirs[m["label"]] / cdirs[c["label"]] /
                                          f"{slug(b)}.json", b, labels, sims, failures)
    notes = [n for n in [manifest_note(out, manifest, manifest_why)] if n]
    unused = [f["message"] for f in failures if f.get("type") == FORMAT_TYPE]
    notes += [f"{out}: {unused.count(m)} cell(s) {m} (listed in failures.json)" for m in dict.fromkeys(unused)]
    adjust_records(weat_recs)
    comps = comparison_rows(weat_recs, cfg["calibrations"], alpha)
    metric_comps = metric_comparison_rows(metric_recs, cfg["calibrations"], alpha)
    _mark_records(cfg, manifest, models, weat_recs, (*weat_recs, *comps, *metric_recs, *metric_comps))
    from .stability import folder_corpora, folder_stability

    folder_stability(comps, weat_recs, manifest, alpha)  # the stability marks, where the run made redraws
    raw_label = next((c["label"] for c in cfg["calibrations"] if c["name"] == "none"), "none")
    folder_corpora(comps, weat_recs, models, alpha, raw_label)  # and across corpora, where the grid has several
    summary = {c["label"]: summarize([r for r in comps if r["calibration"] == c["label"]], alpha)
               for c in cfg["calibrations"] if c["name"] != "none"}
    return ExperimentResults(out=out, experiment=exp, manifest=manifest, weat=weat_recs, comparisons=comps,
                             anisotropy=aniso, similarity=sims, failures=failures, summary=summary, models=models,
                             tests=cfg["tests"], calibrations=cfg["calibrations"], metrics=metric_recs,
                             metric_comparisons=metric_comps, notes=notes)


def _mark_records(cfg: dict, manifest: dict, models: list[dict], weat: list[dict], records: Sequence[dict]) -> None:
    """Every record says whether it is the paper's protocol (``protocol``: :func:`folder_departures`); a contextual
    model's records say too, as every command's do, the corpus its contexts came from and whether too many of its
    stimulus words fell back to the template (:func:`isoeat.labels.too_many_fallbacks` of the WEAT records of the
    same model and space)."""
    for rec in records:
        rec["protocol"] = protocol_text(folder_departures(cfg, manifest, rec["model"], rec["calibration"], weat))
    contextual = {m["label"]: str(m.get("corpus") or "") for m in models if m.get("family") not in (None, "static")}
    exceeded: dict[tuple[Any, Any], bool] = {}
    for rec in records:
        if rec.get("model") not in contextual:
            continue
        key = (rec["model"], rec.get("calibration"))
        if key not in exceeded:
            exceeded[key] = too_many_fallbacks(*fallback_counts(
                [r for r in weat if (r.get("model"), r.get("calibration")) == key])[:2])
        rec["corpus"], rec["fallback_exceeded"] = contextual[rec["model"]], exceeded[key]


def _as_dict(x: Any) -> dict:
    """``x`` where it is a dict (a record read from a file), else an empty one."""
    return x if isinstance(x, dict) else {}


def folder_departures(cfg: dict, manifest: dict, model: str, calibration: str, weat: list[dict]) -> tuple[str, ...]:
    """Where a (model, calibration) of a folder departs from the paper's protocol (:func:`isoeat.labels.
    protocol_departures`): the reference its calibrator used (the manifest's, else the settings'), ε, the
    permutations where a p was sampled, the contexts per word of a contextual model."""
    s = cfg.get("settings") or {}
    cals = _as_dict(manifest.get("calibrators"))
    meta = _as_dict(cals.get(f"{model}/{calibration}"))
    cal: dict = next((c for c in cfg.get("calibrations") or [] if c.get("label") == calibration), {})
    mspec: dict = next((m for m in cfg.get("models") or [] if m.get("label") == model), {})
    ref = s.get("reference") or {}
    fitted = cal.get("name") != "none"
    sampled = any(r.get("p_method") == "monte-carlo" for r in weat if r.get("model") == model
                  and r.get("calibration") == calibration)
    loaded = _as_dict(_as_dict(manifest.get("models")).get(model))
    contextual = (loaded.get("family") or mspec.get("family")) not in (None, "static")
    # the contexts the loaded model read (its own record), else the config's; a reference's size: what the fit
    # really used (a small model, a short text or corpus gives fewer rows than asked: labels.reference_used)
    contexts = loaded.get("contexts_per_word") or (mspec.get("options") or {}).get("contexts_per_word") \
        or mspec.get("contexts_per_word") or s.get("contexts_per_word")
    return protocol_departures(
        reference_size=reference_used(meta, ref.get("size")) if fitted else None,
        reference_asked=meta.get("reference_asked") if fitted else None,
        eps=(cal.get("params") or {}).get("eps", s.get("eps")) if fitted else None,
        eps_relative=fitted and ((cal.get("params") or {}).get("eps_mode") == "relative"),
        permutations=s.get("permutations"), sampled=sampled,
        contexts_per_word=contexts if contextual else None)


def _failure(out: Path, p: Path, kind: str, labels: dict, item: str, detail: dict) -> dict:
    """One ``failures`` record of a cell (its kind, model, calibration, item, path and why)."""
    return {"kind": kind, "model": labels["model"], "calibration": labels["calibration"], "item": item,
            "cell": str(p.relative_to(out)), **detail}


def _read_weat_cell(out: Path, p: Path, test: str, labels: dict, records: list[dict], failures: list[dict]) -> None:
    """One WEAT cell into a tidy record (its result's fields, the float fields as numbers), or a failure."""
    rec = read_json(p) if p.exists() else None
    if not rec:
        return
    if cell_problem(rec) or not cell_is_whole(rec, "weat"):
        failures.append(_failure(out, p, "weat", labels, test, _unused(rec)))
        return
    if rec.get("status") != "ok":
        failures.append(_failure(out, p, "weat", labels, test, rec.get("error") or {}))
        return
    r = dict(rec["result"])
    for k in _FLOAT_FIELDS:
        if k in r:
            r[k] = nan_of(r[k])
    r.update(model=labels["model"], model_name=r.get("model"), family=labels["family"],
             calibration=labels["calibration"], calibration_name=labels["calibration_name"], seed=rec.get("seed"),
             cell=str(p.relative_to(out)), duration_s=rec.get("duration_s"), warnings=rec.get("warnings", []))
    records.append(r)


def _read_anisotropy_cell(out: Path, p: Path, labels: dict, records: list[dict], failures: list[dict]) -> None:
    """One anisotropy cell into a record (its heatmap's path), or a failure."""
    rec = read_json(p) if p.exists() else None
    if rec and (cell_problem(rec) or not cell_is_whole(rec, "anisotropy")):
        rec = {"status": "failed", "error": _unused(rec)}
    if rec and rec.get("status") == "ok":
        a = dict(rec["result"])
        a.update(model=labels["model"], model_name=a.get("model"), family=labels["family"],
                 calibration=labels["calibration"], calibration_name=labels["calibration_name"])
        if a.get("heatmap_file"):
            a["heatmap_path"] = str((p.parent / a["heatmap_file"]).relative_to(out))
        records.append(a)
    elif rec:
        failures.append(_failure(out, p, "anisotropy", labels, "anisotropy", rec.get("error") or {}))


def _read_similarity_cell(out: Path, p: Path, bench: str, labels: dict, records: list[dict],
                          failures: list[dict]) -> None:
    """One similarity cell into a record, or a failure."""
    rec = read_json(p) if p.exists() else None
    if rec and (cell_problem(rec) or not cell_is_whole(rec, "similarity")):
        rec = {"status": "failed", "error": _unused(rec)}
    if rec and rec.get("status") == "ok":
        s = dict(rec["result"])
        s.update(model=labels["model"], family=labels["family"], calibration=labels["calibration"],
                 calibration_name=labels["calibration_name"], benchmark=bench)
        records.append(s)
    elif rec:
        failures.append(_failure(out, p, "similarity", labels, bench, rec.get("error") or {}))


def _read_metric_cell(out: Path, p: Path, test: str, labels: dict, records: list[dict], failures: list[dict]) -> None:
    """The metric records of one metrics cell (a failed or damaged cell, or a failed metric, goes to ``failures``)."""
    check_inside(out, p)
    rec = read_json(p) if p.exists() else None
    if not rec:
        return
    where = {"kind": "metrics", "model": labels["model"], "calibration": labels["calibration"], "item": test,
             "cell": str(p.relative_to(out))}
    whole = cell_is_whole(rec, "metrics") and not cell_problem(rec)
    res = _as_dict(rec.get("result")) if whole else {}
    if not whole or rec.get("status") != "ok" or not isinstance(res.get("metrics"), list):
        failures.append({**where,
                         **((rec.get("error") or {}) if whole and rec.get("status") != "ok" else _unused(rec))})
        return
    for r in res["metrics"]:
        if "error" in r:
            failures.append({**where, "item": f"{test} {r.get('metric')}", **r["error"]})
            continue
        r = dict(r)
        for k in ("estimate", "p_value"):
            r[k] = nan_of(r.get(k))
        r.update(model_name=r.get("model"), seed=r.get("seed"), cell=where["cell"], **labels)
        records.append(r)


_TIDY_DROP = ("s_x", "s_y", "cell", "duration_s", "warnings")


def write_results(out: str | Path | ExperimentResults, results: ExperimentResults | None = None) -> list[Path]:
    """Write the tidy files (results, comparison, anisotropy, similarity, summary, failures) and ``tables/``.

    ``out``: the folder (its cells read, unless ``results`` holds them already), or the results of a folder
    read once (the runner's: :attr:`~isoeat.experiments.runner.RunSummary.results`), written into theirs.
    """
    from .._version import versioned
    from ..reporting.paper_tables import write_tables
    from ..reporting.tables import records_to_csv, to_json

    if isinstance(out, ExperimentResults):
        results, folder = out, Path(out.out)
    else:
        folder = Path(out)
    out = folder
    res = results or load_experiment(folder)
    written: list[Path] = []

    def both(stem: str, records: list[dict]) -> None:
        atomic_write_text(out / f"{stem}.csv", records_to_csv(versioned(records)))
        atomic_write_text(out / f"{stem}.json", to_json(versioned(records)))
        written.extend([out / f"{stem}.csv", out / f"{stem}.json"])

    both("results", [{k: v for k, v in r.items() if k not in _TIDY_DROP} for r in res.weat])
    both("comparison", res.comparisons)
    if res.metrics:
        both("metrics", [{k: v for k, v in r.items() if k not in ("words", "per_word", "cell")} for r in res.metrics])
        both("metric_comparison", res.metric_comparisons)
    if res.anisotropy:
        atomic_write_text(out / "anisotropy.csv", records_to_csv(versioned(
            [{**{k: v for k, v in a.items() if k != "explained_variance_ratio"},
              "explained_variance_ratio": a.get("explained_variance_ratio")} for a in res.anisotropy])))
        written.append(out / "anisotropy.csv")
    if res.similarity:
        atomic_write_text(out / "similarity.csv", records_to_csv(versioned(res.similarity)))
        written.append(out / "similarity.csv")
    atomic_write_text(out / "summary.json", to_json(res.summary))
    atomic_write_text(out / "failures.json", to_json(res.failures))
    written += [out / "summary.json", out / "failures.json"]
    written += write_tables(res, out / "tables")
    return written
