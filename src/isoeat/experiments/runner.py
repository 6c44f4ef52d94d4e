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
    anisotropy/MODEL/CAL.json  one anisotropy cell (+ .npz: cosine heatmap block, explained variance)
    similarity/MODEL/CAL/BENCH.json
    calibrators/MODEL/CAL.npz  fitted calibrators, reused by later runs (model fingerprint checked)
    results.csv|json           tidy WEAT records, one per cell
    comparison.csv|json        one row per model x calibrated space x test: d, p raw and calibrated, change
    anisotropy.csv, similarity.csv, summary.json, failures.json
    tables/                    Table A1/2/3 and the summary in CSV, Markdown and LaTeX

Seeds: for every model the same root ``SeedSequence(settings.seed)`` is
spawned into one child per WEAT cell, at index ``test_index * n_calibrations
+ calibration_index`` (with ``calibrations: [none, zca]`` these are exactly
the seeds of ``isoeat run --seed S`` and :func:`isoeat.compare_calibration`),
then one child for the anisotropy sample (shared by all calibrations of the
model, so raw and calibrated are measured on the same vectors) and one per
similarity benchmark. Every cell records its seed and spawn index.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import socket
import sys
import time
import traceback
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .._errors import ConfigError, IsoeatError, IsoeatWarning
from .._io import atomic_write_bytes, atomic_write_text
from .config import ExperimentConfig, ModelSpec, family_from_kind, load_config, test_hash
from .manifest import environment, file_fingerprint, now_iso, package_versions, read_manifest, write_manifest

__all__ = [
    "ExperimentLockedError",
    "ExperimentMismatchError",
    "ExperimentNotFoundError",
    "RunSummary",
    "ExperimentResults",
    "DirLock",
    "run_experiment",
    "run_from_cli",
    "load_experiment",
    "OVERWRITE",
    "CELL_FORMAT",
]

OVERWRITE = ("never", "failed", "all")
CELL_FORMAT = 1
LOCK_NAME = ".isoeat.lock"
EXPERIMENT_NAME = "experiment.json"
#: Paths in DIR that the runner and ``isoeat report`` own (``--overwrite all`` removes them).
OWNED = (
    "experiment.json", "config.yaml", "manifest.json", "cells", "anisotropy", "similarity", "calibrators",
    "results.csv", "results.json", "comparison.csv", "comparison.json", "anisotropy.csv", "similarity.csv",
    "summary.json", "failures.json", "tables", "figures", "report.html",
)


class ExperimentLockedError(IsoeatError):
    """Another run holds the output folder."""


class ExperimentMismatchError(IsoeatError):
    """The output folder holds another experiment's results."""


class ExperimentNotFoundError(IsoeatError):
    """A folder is not an experiment folder (no ``experiment.json``)."""


# =========================================================================== small helpers
def _slug(text: str) -> str:
    """A file-name-safe form of a label; a short hash keeps altered names distinct."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "x"
    if safe != text:
        import hashlib

        safe = f"{safe[:60]}-{hashlib.sha256(text.encode()).hexdigest()[:6]}"
    return safe


def _jsonable(obj: Any) -> Any:
    from ..reporting.tables import to_json

    return json.loads(to_json(obj))


def _clean(x: Any) -> Any:
    """NaN/inf -> None and numpy scalars -> Python, recursively (strict JSON)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        if x and all(type(v) is float for v in x[:8]) and all(type(v) is float and math.isfinite(v) for v in x):
            return list(x)
        return [_clean(v) for v in x]
    if isinstance(x, np.generic):
        return _clean(x.item())
    if isinstance(x, np.ndarray):
        return _clean(x.tolist())
    return x


def _write_json(path: Path, obj: Any, *, compact: bool = False) -> None:
    """Strict JSON (NaN written as null), atomically; ``compact`` for the per-cell files (fast C encoder)."""
    text = json.dumps(_clean(obj), separators=(",", ":") if compact else None, indent=None if compact else 2,
                      allow_nan=False, default=str)
    atomic_write_text(path, text + "\n")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        warnings.warn(f"{path}: unreadable ({exc}); treated as missing", IsoeatWarning, stacklevel=2)
        return None


def _nan(v: Any) -> float:
    return float("nan") if v is None else float(v)


def _fmt_duration(s: float) -> str:
    if not math.isfinite(s):
        return "?"
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


# =========================================================================== lock
def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    try:  # a zombie (killed, not yet reaped) holds nothing
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
        if state in (b"Z", b"X"):
            return False
    except (OSError, IndexError):
        pass
    return True


def _proc_start(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


class DirLock:
    """An exclusive lock on an output folder: ``DIR/.isoeat.lock`` created with ``O_EXCL``.

    The file holds the PID, host name, process start tick and start time. A
    second run on the same folder is refused (:class:`ExperimentLockedError`).
    A stale lock — its PID dead (or reused by another process) on this same
    host — is taken over with an :class:`~isoeat.IsoeatWarning`. A lock from
    another host is never taken over automatically (remove the file by hand
    when that run is gone).
    """

    def __init__(self, out_dir: str | Path, run_id: str = "") -> None:
        self.path = Path(out_dir) / LOCK_NAME
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.held = False

    def _payload(self) -> bytes:
        return json.dumps({
            "pid": os.getpid(), "host": socket.gethostname(), "pid_start": _proc_start(os.getpid()),
            "started": now_iso(), "run_id": self.run_id,
        }).encode()

    def _create(self) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        try:
            os.write(fd, self._payload())
            os.fsync(fd)
        finally:
            os.close(fd)
        return True

    def acquire(self) -> "DirLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(3):
            if self._create():
                self.held = True
                return self
            try:
                info = json.loads(self.path.read_text("utf-8") or "{}")
            except FileNotFoundError:
                continue  # released meanwhile: try again
            except (OSError, ValueError):
                info = {}
            host, pid = info.get("host"), info.get("pid")
            same_host = host == socket.gethostname()
            stale = False
            if same_host and isinstance(pid, int):
                stale = not _pid_alive(pid)
                if not stale and info.get("pid_start") and _proc_start(pid) not in (None, info.get("pid_start")):
                    stale = True  # the PID was reused by another process
            elif not info:
                # unreadable lock file: stale only if old (a writer may be between create and write)
                try:
                    stale = time.time() - self.path.stat().st_mtime > 10
                except FileNotFoundError:
                    continue
            if not stale:
                since = info.get("started", "?")
                who = f"pid {pid} on {host}" if info else "an unknown process"
                raise ExperimentLockedError(
                    f"{self.path.parent}: another isoeat run ({who}, since {since}) is using this folder; "
                    f"wait for it to finish, or remove {self.path} if that run is gone"
                )
            warnings.warn(
                f"{self.path}: taking over a stale lock (pid {pid} on {host} is no longer running; "
                f"started {info.get('started', '?')})", IsoeatWarning, stacklevel=2,
            )
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
        raise ExperimentLockedError(f"{self.path}: could not acquire the lock (another run keeps taking it)")

    def release(self) -> None:
        if not self.held:
            return
        try:
            info = json.loads(self.path.read_text("utf-8"))
            if info.get("pid") == os.getpid() and info.get("run_id") == self.run_id:
                os.unlink(self.path)
        except (OSError, ValueError):
            pass
        self.held = False

    def __enter__(self) -> "DirLock":
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()


# =========================================================================== progress
class Progress:
    """Cells done/total with elapsed time and ETA on stderr (one rewritten line)."""

    def __init__(self, total: int, enabled: bool, stream: Any = None) -> None:
        self.total = total
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.done = 0
        self.computed = 0
        self.compute_time = 0.0
        self.t0 = time.perf_counter()
        self._width = 0

    def advance(self, label: str, *, seconds: float | None = None, n: int = 1) -> None:
        self.done += n
        if seconds is not None:
            self.computed += n
            self.compute_time += seconds
        self.show(label)

    def show(self, label: str) -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.t0
        left = self.total - self.done
        eta = (self.compute_time / self.computed) * left if self.computed else float("nan")
        pct = 100.0 * self.done / self.total if self.total else 100.0
        text = (f"isoeat run: [{self.done}/{self.total}] {pct:3.0f}%  elapsed {_fmt_duration(elapsed)}  "
                f"ETA {_fmt_duration(eta) if left else '0:00'}  {label}")
        if len(text) > 110:
            text = text[:107] + "..."
        pad = max(self._width - len(text), 0)
        self._width = len(text)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\n")
            self.stream.flush()


def _progress_enabled(flag: bool | None) -> bool:
    if flag is not None:
        return bool(flag)
    env = os.environ.get("ISOEAT_PROGRESS")
    if env is not None:
        return env.strip().lower() not in ("", "0", "false", "no", "off")
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


# =========================================================================== cells
@dataclass
class Cell:
    """One unit of work of the grid (planned from the config)."""

    kind: str  # "weat" | "anisotropy" | "similarity"
    model: str
    calibration: str
    item: str  # test id, "anisotropy" or benchmark name
    seed: int
    spawn_index: int
    path: Path
    cell_hash: str
    extra: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.model}/{self.calibration}/{self.item}"

    @property
    def label(self) -> str:
        return f"{self.model} {self.calibration} {self.item}"


def _seed_of(children: list, index: int) -> int:
    """The integer seed of spawned child ``index`` (as :func:`isoeat.compare_calibration` draws it)."""
    return int(children[index].generate_state(1)[0])


def plan_cells(config: ExperimentConfig, out: Path) -> list[Cell]:
    """Every cell of the grid with its seed, file and content hash, in run order."""
    from .config import _sha

    s = config.settings
    n_cal, n_test = len(config.calibrations), len(config.tests)
    benches = list(config.similarity.benchmarks) if config.similarity else []
    n_children = n_test * n_cal + 1 + len(benches)
    children = np.random.SeedSequence(s.seed).spawn(n_children)
    protocol = config.protocol_hash()
    cells: list[Cell] = []
    for m in config.models:
        mdir = _slug(m.label)
        mid = {"spec": m.spec, "options": m.options, "layer": m.layer, "contexts_per_word": m.contexts_per_word}
        for ci, c in enumerate(config.calibrations):
            cdir = _slug(c.label)
            for ti, t in enumerate(config.tests):
                idx = ti * n_cal + ci
                seed = _seed_of(children, idx)
                h = _sha({"protocol": protocol, "model": mid, "calibration": c.to_dict(), "test": test_hash(t),
                          "seed": seed, "format": CELL_FORMAT})
                cells.append(Cell("weat", m.label, c.label, t.id, seed, idx,
                                  out / "cells" / mdir / cdir / f"{_slug(t.id)}.json", h, {"test": t}))
        if config.anisotropy:
            idx = n_test * n_cal
            seed = _seed_of(children, idx)
            for c in config.calibrations:
                h = _sha({"protocol": protocol, "model": mid, "calibration": c.to_dict(), "anisotropy": True,
                          "seed": seed, "format": CELL_FORMAT})
                cells.append(Cell("anisotropy", m.label, c.label, "anisotropy", seed, idx,
                                  out / "anisotropy" / mdir / f"{_slug(c.label)}.json", h))
        for bi, b in enumerate(benches):
            idx = n_test * n_cal + 1 + bi
            seed = _seed_of(children, idx)
            for c in config.calibrated:
                h = _sha({"protocol": protocol, "model": mid, "calibration": c.to_dict(), "benchmark": b,
                          "seed": seed, "format": CELL_FORMAT})
                cells.append(Cell("similarity", m.label, c.label, b, seed, idx,
                                  out / "similarity" / mdir / _slug(c.label) / f"{_slug(b)}.json", h))
    return cells


class _CachedEncoder:
    """Forwards to a model, memoising ``lookup`` so contextual encoders embed each word set once per grid."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._cache: dict[tuple[str, ...], Any] = {}

    def lookup(self, words: Iterable[str]) -> Any:
        key = tuple(words)
        if key not in self._cache:
            self._cache[key] = self._model.lookup(key)
        return self._cache[key]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def _cosines(model: Any, test: Any, calibrator: Any) -> dict[str, Any]:
    """Target x attribute cosine matrices of a test in one space (the tutorial's per-test heatmap)."""
    from ..stats.weat import cosine_matrix

    out: dict[str, Any] = {}
    vecs: dict[str, np.ndarray] = {}
    for role, ws in test.sets().items():
        lk = model.lookup(ws.words)
        out[f"{role}_words"] = list(lk.found)
        out[f"{role}_name"] = ws.name
        v = lk.vectors
        if calibrator is not None and len(v):
            v = calibrator.transform(v)
        vecs[role] = v
    for t in "XY":
        if len(vecs[t]) and len(vecs["A"]) and len(vecs["B"]):
            M = np.concatenate([cosine_matrix(vecs[t], vecs["A"]), cosine_matrix(vecs[t], vecs["B"])], axis=1)
            out[f"{t}_AB"] = np.round(M, 6).tolist()
    return out


# =========================================================================== model, calibrator and corpus adapters
def _corpus_file(spec: str | None) -> str | None:
    """The text file behind a corpus spec (``PATH`` or ``FORMAT:PATH``), or None (a named corpus, a folder)."""
    if not spec:
        return None
    if Path(spec).is_file():
        return spec
    prefix, sep, rest = spec.partition(":")
    if sep and len(prefix) > 1 and Path(rest).is_file():
        return rest
    return None


def _reference_kwargs(mspec: ModelSpec, config: ExperimentConfig, model: Any) -> dict[str, Any]:
    """Keyword arguments of ``model.reference_vectors`` for the configured reference corpus."""
    corpus = config.settings.reference.corpus
    if not corpus:
        return {}
    if getattr(model, "kind", "static") == "static" or not hasattr(model, "reference_batches"):
        # static vectors: the vocabulary of a text, by frequency in it
        f = _corpus_file(corpus)
        return {"text": f} if f else {}
    return {}


_CORPORA: dict[tuple, Any] = {}


def _reference_corpus(config: ExperimentConfig) -> Any:
    """The configured reference corpus, loaded once per process (None: each encoder's default)."""
    spec = config.settings.reference.corpus
    if not spec:
        return None
    key = (spec, config.settings.reference.sentences, config.settings.seed)
    if key not in _CORPORA:
        try:
            from ..corpora import load_corpus
        except ImportError:  # pragma: no cover - corpora ships with isoeat
            return spec
        _CORPORA[key] = load_corpus(spec, max_sentences=config.settings.reference.sentences,
                                    seed=config.settings.seed)
    return _CORPORA[key]


def _encoder_class(spec: str) -> Any:
    low = spec.strip().lower()
    try:
        if low.startswith("st:"):
            from ..backends.sentence import SentenceEncoder

            return SentenceEncoder
        from ..backends.transformer import TransformerEncoder

        return TransformerEncoder
    except ImportError:  # pragma: no cover - an older isoeat without contextual encoders
        return None


def _load_model(mspec: ModelSpec, config: ExperimentConfig) -> Any:
    """``load_model`` with the model's options, plus layer/contexts/corpus/seed for contextual encoders.

    Only the keywords the encoder class accepts are passed (a sentence
    encoder has no ``layer``); ``options`` from the config always win.
    """
    import inspect

    from ..backends import load_model

    kwargs = dict(mspec.options)
    if not mspec.is_static:
        s = config.settings
        wanted = {
            "layer": mspec.layer if mspec.layer is not None else s.layer,
            "contexts_per_word": mspec.contexts_per_word if mspec.contexts_per_word is not None
            else s.contexts_per_word,
            "corpus": _reference_corpus(config),
            "seed": s.seed,
            "progress": False,
        }
        cls = _encoder_class(mspec.spec)
        try:
            accepted = set(inspect.signature(cls.__init__).parameters) if cls is not None else set()
        except (TypeError, ValueError):  # pragma: no cover
            accepted = set()
        for k, v in wanted.items():
            if v is not None and k not in kwargs and k in accepted:
                kwargs[k] = v
    try:
        return load_model(mspec.spec, **kwargs)
    except TypeError as exc:
        raise ConfigError(f"model {mspec.label!r} ({mspec.spec}): {exc}") from None


def _calibrator(model: Any, mspec: ModelSpec, cspec: Any, config: ExperimentConfig, out: Path,
                overwrite: str, log: Callable[[str], None], record: dict) -> Any:
    """Load the saved calibrator of (model, calibration) when it still fits, else fit and save it."""
    from ..calibration import fit_calibrator, load_calibrator, save_calibrator
    from .config import _sha

    s = config.settings
    ref_kw = _reference_kwargs(mspec, config, model)
    request = {"calibration": cspec.name, "params": cspec.params, "n_reference": s.reference.size,
               "reference_kwargs": ref_kw, "model_fingerprint": getattr(model, "fingerprint", None)}
    req_hash = _sha(request)
    path = out / "calibrators" / _slug(mspec.label) / f"{_slug(cspec.label)}.npz"
    t0 = time.perf_counter()
    if path.exists() and overwrite != "all":
        try:
            cal = load_calibrator(path)
            meta = getattr(cal, "metadata_", {}) or {}
            if meta.get("request_hash") == req_hash:
                from ..calibration import check_compatible

                check_compatible(cal, model)
                record.update(path=str(path.relative_to(out)), reused=True, seconds=time.perf_counter() - t0,
                              **{k: meta.get(k) for k in ("reference", "n", "dim", "model_fingerprint", "params")})
                log(f"{mspec.label}: reusing calibrator {cspec.label} ({path.relative_to(out)})")
                return cal
            log(f"{mspec.label}: saved calibrator {cspec.label} does not match this config; refitting")
        except IsoeatError as exc:
            log(f"{mspec.label}: saved calibrator {cspec.label} unusable ({exc}); refitting")
    cal = fit_calibrator(model, cspec.name, n_reference=s.reference.size, reference_kwargs=ref_kw, **cspec.params)
    cal.metadata_ = {**(getattr(cal, "metadata_", {}) or {}), "request_hash": req_hash}
    save_calibrator(cal, path)
    meta = cal.metadata_
    record.update(path=str(path.relative_to(out)), reused=False, seconds=time.perf_counter() - t0,
                  **{k: meta.get(k) for k in ("reference", "n", "dim", "model_fingerprint", "params")})
    return cal


def _run_weat_cell(cell: Cell, model: Any, calibrator: Any, config: ExperimentConfig) -> dict[str, Any]:
    from ..stats.weat import weat

    test = cell.extra["test"]
    res = weat(model, test, calibration=calibrator, rng=cell.seed, **config.settings.weat_kwargs())
    return {"result": res.to_dict(scores=True), "cosines": _cosines(model, test, calibrator)}


def _run_anisotropy_cell(cell: Cell, model: Any, calibrator: Any, mspec: ModelSpec,
                         config: ExperimentConfig, out: Path) -> dict[str, Any]:
    from ..diagnostics import anisotropy  # type: ignore[import-not-found]

    spec = config.anisotropy
    assert spec is not None
    # static vectors: sample from the top reference.size rows (the ZCA reference); contextual encoders: from
    # the word vectors of `sample` reference sentences (a pool of reference.size sentences would not fit in memory)
    pool = config.settings.reference.size if mspec.is_static else min(config.settings.reference.size, spec.sample)
    res = anisotropy(model, calibrator, n_samples=spec.sample, top_k=spec.components, rng=cell.seed,
                     reference_size=pool,
                     reference_kwargs=_reference_kwargs(mspec, config, model), return_matrix=True)
    rec = res.to_dict()
    mat = getattr(res, "cosine_matrix", None)
    if mat is not None:
        k = min(spec.heatmap_size, mat.shape[0])
        npz = cell.path.with_suffix(".npz")
        import io

        buf = io.BytesIO()
        np.savez_compressed(buf, cosine=np.asarray(mat[:k, :k], dtype=np.float32))
        atomic_write_bytes(npz, buf.getvalue())
        rec["heatmap_file"] = npz.name
        rec["heatmap_size"] = int(k)
    return {"result": rec}


def _run_similarity_cell(cell: Cell, model: Any, calibrator: Any, config: ExperimentConfig) -> dict[str, Any]:
    from .. import similarity as sim  # type: ignore[attr-defined]

    spec = config.similarity
    assert spec is not None
    fn = getattr(sim, "compare_similarity", None)
    if fn is None:
        raise ConfigError("similarity: isoeat.similarity has no compare_similarity() in this installation")
    comp = fn(model, cell.item, calibrator, n_resamples=spec.bootstrap, rng=cell.seed)
    raw, cal, boot = comp.raw, comp.calibrated, comp.bootstrap
    rec = {
        "benchmark": cell.item, "benchmark_title": getattr(raw, "title", cell.item), "kind": getattr(raw, "kind", ""),
        "source": getattr(raw, "source", ""), "n_pairs": raw.n_pairs, "n_total": raw.n_total,
        "coverage": raw.coverage, "n_missing": len(getattr(raw, "missing", ()) or ()),
        "rho_raw": raw.spearman, "rho_calibrated": cal.spearman, "delta": cal.spearman - raw.spearman,
        "ci_low": boot.ci_low if boot else None, "ci_high": boot.ci_high if boot else None,
        "ci_level": boot.ci_level if boot else None, "p_value": boot.p_value if boot else None,
        "n_resamples": boot.n_resamples if boot else 0, "n_valid_resamples": boot.n_valid if boot else 0,
        "seed": boot.seed if boot else None, "method": getattr(raw, "method", ""),
    }
    return {"result": rec, "detail": comp.to_dict()}


# =========================================================================== identity of an output folder
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
    a, b = _flatten(_jsonable(old)), _flatten(_jsonable(new))
    diffs = [f"{k}: {a.get(k)!r} in the folder, {b.get(k)!r} in this config"
             for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    more = f" (and {len(diffs) - limit} more)" if len(diffs) > limit else ""
    return "; ".join(diffs[:limit]) + more


def _check_folder(out: Path, config: ExperimentConfig, overwrite: str) -> dict | None:
    """Refuse a folder holding another experiment (unless ``overwrite == 'all'``); return the old record."""
    exp = _read_json(out / EXPERIMENT_NAME)
    if exp is None:
        others = sorted(p.name for p in out.iterdir() if p.name != LOCK_NAME) if out.exists() else []
        if others and overwrite != "all":
            shown = ", ".join(others[:5]) + (" ..." if len(others) > 5 else "")
            raise ExperimentMismatchError(
                f"{out}: the folder is not empty and holds no isoeat experiment ({shown}); "
                "use a new or empty folder, or pass --overwrite all to write into it"
            )
        return None
    if exp.get("protocol_hash") != config.protocol_hash():
        if overwrite != "all":
            raise ExperimentMismatchError(
                f"{out}: holds the results of another experiment "
                f"({exp.get('name', '?')!r}; differs in {_protocol_diff(exp.get('protocol', {}), config.protocol())}); "
                "use another --out folder, or --overwrite all to replace those results"
            )
    return exp


def _remove_stale_temporaries(out: Path) -> None:
    """Temporary files a killed run left behind in the folders only runs write (we hold the lock)."""
    for sub in ("cells", "anisotropy", "similarity", "calibrators"):
        d = out / sub
        if d.is_dir():
            for p in d.rglob(".*.tmp"):
                try:
                    p.unlink()
                except OSError:
                    pass


def _clear_owned(out: Path) -> None:
    import shutil

    for name in OWNED:
        p = out / name
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif p.exists() or p.is_symlink():
            p.unlink()


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


def run_experiment(
    config: ExperimentConfig | str | Path,
    out: str | Path,
    *,
    overwrite: str = "never",
    progress: bool | None = None,
    log: Callable[[str], None] | None = None,
    write_tables: bool = True,
    argv: Sequence[str] | None = None,
) -> RunSummary:
    """Run (or resume) an experiment grid into ``out``.

    Parameters
    ----------
    config : ExperimentConfig or path of a YAML file
    out : path
        Output folder (created). A folder holding another experiment (another
        protocol: settings, calibrations, anisotropy or similarity settings) is
        refused unless ``overwrite="all"``; the same protocol with more or other
        models or tests extends the experiment.
    overwrite : {"never", "failed", "all"}
        ``never`` (default): reuse every finished cell, ok or failed;
        ``failed``: recompute the failed ones; ``all``: recompute everything
        (and refit calibrators).
    progress : bool, optional
        Progress line on stderr; default: when stderr is a terminal
        (``ISOEAT_PROGRESS=1``/``0`` overrides).
    log : callable, optional
        Receives one-line notes (model loaded, calibrator reused, ...).
    write_tables : bool, default True
        Write the tidy files and ``tables/`` at the end.

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
    if not isinstance(config, ExperimentConfig):
        config = load_config(config)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: exists and is not a folder")
    user_log = log or (lambda msg: None)
    notes: list[str] = []

    def log(msg: str) -> None:  # every note also goes to the manifest's run record
        notes.append(msg)
        user_log(msg)

    run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
    t_start = time.perf_counter()
    started = now_iso()
    with DirLock(out, run_id):
        old = _check_folder(out, config, overwrite)
        if old is not None and old.get("protocol_hash") != config.protocol_hash():
            log(f"{out}: replacing another experiment's results (--overwrite all)")
            _clear_owned(out)
            old = None
        _remove_stale_temporaries(out)
        previous_manifest = read_manifest(out) or {}
        _write_identity(out, config, old)
        cells = plan_cells(config, out)
        prog = Progress(len(cells), _progress_enabled(progress))
        runs = list(previous_manifest.get("runs", []))
        this_run = {"run_id": run_id, "started": started, "ended": None, "status": "running",
                    "argv": list(argv) if argv is not None else None, "overwrite": overwrite,
                    "pid": os.getpid(), "host": socket.gethostname(), "computed": 0, "reused": 0, "failed": 0,
                    "notes": notes}
        runs.append(this_run)
        models_meta = dict(previous_manifest.get("models", {}))
        cal_meta = dict(previous_manifest.get("calibrators", {}))
        manifest_args = dict(config=config, runs=runs, models=models_meta, calibrators=cal_meta, out=out)
        write_manifest(out, _build_manifest(**manifest_args, cells=cells))
        computed = reused = 0
        interrupted = False
        try:
            computed, reused = _run_cells(config, cells, out, overwrite, prog, log, run_id, models_meta, cal_meta)
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            prog.close()
            states = _cell_states(cells)
            failed = [s for s in states if s.get("status") == "failed"]
            this_run.update(ended=now_iso(), status="interrupted" if interrupted else "finished",
                            computed=computed, reused=reused,
                            failed=sum(1 for s in failed if s.get("run_id") == run_id),
                            seconds=round(time.perf_counter() - t_start, 3))
            if not interrupted and write_tables:
                try:
                    write_results(out)
                except IsoeatError as exc:  # pragma: no cover - defensive
                    log(f"could not write tables: {exc}")
            write_manifest(out, _build_manifest(**manifest_args, cells=cells))
    return RunSummary(out=out, run_id=run_id, total=len(cells), computed=computed, reused=reused,
                      failed=[{"key": f.get("key"), "kind": f.get("kind"), **(f.get("error") or {})} for f in failed],
                      seconds=time.perf_counter() - t_start, interrupted=interrupted)


def _write_identity(out: Path, config: ExperimentConfig, old: dict | None) -> None:
    from .. import __version__

    rec = {
        "format": "isoeat-experiment", "format_version": 1, "name": config.name,
        "protocol_hash": config.protocol_hash(), "protocol": config.protocol(),
        "config": config.to_dict(), "config_source": config.source,
        "created": (old or {}).get("created") or now_iso(), "updated": now_iso(), "isoeat_version": __version__,
    }
    _write_json(out / EXPERIMENT_NAME, rec)
    if config.text is not None:
        atomic_write_text(out / "config.yaml", config.text)


def _cell_states(cells: list[Cell]) -> list[dict[str, Any]]:
    out = []
    for c in cells:
        rec = _read_json(c.path) if c.path.exists() else None
        if rec:
            out.append({"key": c.key, "kind": c.kind, "status": rec.get("status"), "run_id": rec.get("run_id"),
                        "seed": rec.get("seed"), "duration_s": rec.get("duration_s"), "started": rec.get("started"),
                        "ended": rec.get("ended"), "error": rec.get("error")})
        else:
            out.append({"key": c.key, "kind": c.kind, "status": "pending", "seed": c.seed})
    return out


def _needs_run(cell: Cell, overwrite: str, log: Callable[[str], None]) -> bool:
    if overwrite == "all" or not cell.path.exists():
        return True
    rec = _read_json(cell.path)
    if not rec or rec.get("format_version") != CELL_FORMAT:
        return True
    if rec.get("cell_hash") != cell.cell_hash:
        log(f"{cell.key}: its inputs changed since it was computed (test words, model options or seed); recomputing")
        return True
    if rec.get("status") == "failed":
        return overwrite == "failed"
    return rec.get("status") != "ok"


def _run_cells(config: ExperimentConfig, cells: list[Cell], out: Path, overwrite: str, prog: Progress,
               log: Callable[[str], None], run_id: str, models_meta: dict, cal_meta: dict) -> tuple[int, int]:
    computed = reused = 0
    for mspec in config.models:
        mcells = [c for c in cells if c.model == mspec.label]
        todo = [c for c in mcells if _needs_run(c, overwrite, log)]
        skipped = len(mcells) - len(todo)
        if skipped:
            reused += skipped
            prog.advance(f"{mspec.label}: {skipped} finished cells reused", n=skipped)
        if not todo:
            continue
        prog.show(f"loading {mspec.label}")
        t0 = time.perf_counter()
        try:
            model = _load_model(mspec, config)
        except Exception as exc:  # noqa: BLE001 - recorded per cell, the grid goes on
            err = _error_record(exc, "load model")
            log(f"{mspec.label}: cannot load ({type(exc).__name__}: {exc})")
            for c in todo:
                _write_cell(c, run_id, "failed", {}, err, 0.0, None, None)
                computed += 1
                prog.advance(c.label, seconds=0.0)
            continue
        load_s = time.perf_counter() - t0
        try:
            desc = model.describe() if hasattr(model, "describe") else {"name": getattr(model, "name", mspec.spec)}
        except Exception as exc:  # noqa: BLE001 - a description never fails a run
            desc = {"name": getattr(model, "name", mspec.spec), "describe_error": str(exc)}
        family = mspec.family
        kind_family = family_from_kind(getattr(model, "kind", None))
        if not mspec.family_given and family == "static" and kind_family not in (None, "static"):
            family = kind_family  # a path or spec that turned out to be a contextual encoder
        models_meta[mspec.label] = {**_jsonable(desc), "spec": mspec.spec, "label": mspec.label, "family": family,
                                    "load_seconds": round(load_s, 3), "loaded_by_run": run_id}
        fp = getattr(model, "fingerprint", None)
        # finished cells computed on another version of the model's file are stale
        todo_ids = {id(c) for c in todo}
        for c in mcells:
            if id(c) in todo_ids:
                continue
            rec = _read_json(c.path) or {}
            if fp and rec.get("model_fingerprint") and rec.get("model_fingerprint") != fp:
                log(f"{c.key}: computed on another version of the model (fingerprint changed); recomputing")
                todo.append(c)
                reused -= 1
                prog.done -= 1
        cached = _CachedEncoder(model)
        for cspec in config.calibrations:
            ccells = [c for c in todo if c.calibration == cspec.label]
            if not ccells:
                continue
            calibrator = None
            cal_record: dict[str, Any] = {}
            if cspec.name != "none":
                prog.show(f"{mspec.label}: fitting {cspec.label}")
                try:
                    calibrator = _calibrator(model, mspec, cspec, config, out, overwrite, log, cal_record)
                    cal_meta[f"{mspec.label}/{cspec.label}"] = _jsonable(cal_record)
                except Exception as exc:  # noqa: BLE001
                    err = _error_record(exc, f"fit calibrator {cspec.label}")
                    log(f"{mspec.label}: calibrator {cspec.label} failed ({type(exc).__name__}: {exc})")
                    for c in ccells:
                        _write_cell(c, run_id, "failed", {}, err, 0.0, fp, None)
                        computed += 1
                        prog.advance(c.label, seconds=0.0)
                    continue
            cal_info = {"label": cspec.label, "name": cspec.name, "params": cspec.params,
                        **({k: cal_record.get(k) for k in ("reference", "n", "path")} if cal_record else {})}
            for c in ccells:
                prog.show(c.label)
                t1 = time.perf_counter()
                started = now_iso()
                try:
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always", IsoeatWarning)
                        if c.kind == "weat":
                            payload = _run_weat_cell(c, cached, calibrator, config)
                        elif c.kind == "anisotropy":
                            payload = _run_anisotropy_cell(c, cached, calibrator, mspec, config, out)
                        else:
                            payload = _run_similarity_cell(c, cached, calibrator, config)
                    payload["warnings"] = [str(w.message) for w in caught if issubclass(w.category, IsoeatWarning)]
                    payload["calibrator"] = cal_info
                    payload["family"] = family
                    status, err = "ok", None
                except Exception as exc:  # noqa: BLE001 - one failing cell never stops the grid
                    payload, status, err = {"calibrator": cal_info, "family": family}, "failed", _error_record(exc, c.kind)
                dt = time.perf_counter() - t1
                _write_cell(c, run_id, status, payload, err, dt, fp, started)
                computed += 1
                prog.advance(c.label, seconds=dt)
        # describe again: contextual encoders load their corpus lazily (its fingerprint is known only now)
        try:
            desc = model.describe() if hasattr(model, "describe") else {}
            models_meta[mspec.label].update(_jsonable(desc))
            corp = getattr(model, "_corpus", None)
            if corp is not None and hasattr(corp, "describe"):
                models_meta[mspec.label]["corpus_description"] = _jsonable(corp.describe())
        except Exception:  # noqa: BLE001 - a manifest never fails a run
            pass
        del cached, model
    return computed, reused


def _write_cell(cell: Cell, run_id: str, status: str, payload: dict, error: dict | None, seconds: float,
                fingerprint: str | None, started: str | None) -> None:
    rec = {
        "format": "isoeat-cell", "format_version": CELL_FORMAT, "kind": cell.kind,
        "key": {"model": cell.model, "calibration": cell.calibration, "item": cell.item},
        "status": status, "cell_hash": cell.cell_hash, "seed": cell.seed, "spawn_index": cell.spawn_index,
        "model_fingerprint": fingerprint, "run_id": run_id, "started": started or now_iso(), "ended": now_iso(),
        "duration_s": round(seconds, 6), **payload,
    }
    if cell.kind == "weat":
        rec["test_sha256"] = test_hash(cell.extra["test"])
    if error:
        rec["error"] = error
    _write_json(cell.path, rec, compact=True)


def _build_manifest(*, config: ExperimentConfig, runs: list, models: dict, calibrators: dict, out: Path,
                    cells: list[Cell]) -> dict[str, Any]:
    from .. import __version__

    corpora: dict[str, Any] = {}
    corpus = config.settings.reference.corpus
    if corpus:
        key = (corpus, config.settings.reference.sentences, config.settings.seed)
        loaded = _CORPORA.get(key)
        if loaded is not None and hasattr(loaded, "describe"):
            try:
                corpora["reference"] = _jsonable(loaded.describe())
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
        "format": "isoeat-manifest", "format_version": 1,
        "isoeat_version": __version__,
        "written": now_iso(),
        "environment": environment(),
        "packages": package_versions(),
        "experiment": {"name": config.name, "protocol_hash": config.protocol_hash(), "config_source": config.source},
        "config": config.to_dict(),
        "seeds": {
            "root": config.settings.seed,
            "rule": "numpy SeedSequence(root).spawn(n); WEAT cell index = test_index * n_calibrations + "
                    "calibration_index (same for every model); then anisotropy, then one per similarity benchmark",
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


# =========================================================================== reading results back
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
        One row per model x calibrated space x test (see :func:`comparison_rows`).
    anisotropy, similarity : list of dict
    failures : list of dict
    summary : dict
        Calibration label -> :func:`isoeat.experiments.summary.summarize` output.
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

    @property
    def alpha(self) -> float:
        return float(self.experiment["config"]["settings"]["alpha"])

    @property
    def settings(self) -> dict:
        return self.experiment["config"]["settings"]

    def cosines(self, model: str, calibration: str, test: str) -> dict | None:
        """The stored target x attribute cosines of one WEAT cell (None when absent)."""
        for r in self.weat:
            if r["model"] == model and r["calibration"] == calibration and r["test"] == test:
                rec = _read_json(self.out / r["cell"]) or {}
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


_FLOAT_FIELDS = ("effect_size", "statistic", "p_value", "p_ci_low", "p_ci_high", "tolerance", "effect_size_ci_low",
                 "effect_size_ci_high", "effect_size_ci_level", "p_holm", "p_bh")


def comparison_rows(weat_records: list[dict], calibrations: list[dict], alpha: float) -> list[dict]:
    """Raw vs each calibrated space, per model and test: d, p (and adjusted), change class and flags."""
    from .compare import classify_change

    index = {(r["model"], r["calibration"], r["test"]): r for r in weat_records}
    raw_label = next((c["label"] for c in calibrations if c["name"] == "none"), "none")
    rows = []
    for (model, cal, test), rc in index.items():
        if cal == raw_label:
            continue
        rr = index.get((model, raw_label, test))
        if rr is None:
            continue
        dd = rc["effect_size"] - rr["effect_size"]
        row = {
            "model": model, "family": rr.get("family"), "calibration": cal,
            "calibration_name": rc.get("calibration_name"), "test": test, "bias_type": rr.get("bias_type"),
            "d_raw": rr["effect_size"], "p_raw": rr["p_value"], "p_method_raw": rr.get("p_method"),
            "d_calibrated": rc["effect_size"], "p_calibrated": rc["p_value"],
            "p_method_calibrated": rc.get("p_method"),
            "p_holm_raw": rr.get("p_holm"), "p_holm_calibrated": rc.get("p_holm"),
            "p_bh_raw": rr.get("p_bh"), "p_bh_calibrated": rc.get("p_bh"),
            "sig_raw": bool(rr["p_value"] < alpha), "sig_calibrated": bool(rc["p_value"] < alpha),
            "change": classify_change(rr["p_value"], rc["p_value"], alpha),
            "delta_d": dd,
            "large_shift": bool(math.isfinite(dd) and abs(dd) > 0.5),
            "sign_reversal": bool(math.isfinite(rr["effect_size"]) and math.isfinite(rc["effect_size"])
                                  and rr["effect_size"] * rc["effect_size"] < 0),
        }
        for m in ("holm", "bh"):
            a, b = row[f"p_{m}_raw"], row[f"p_{m}_calibrated"]
            if a is not None and b is not None and math.isfinite(a) and math.isfinite(b):
                row[f"change_{m}"] = classify_change(a, b, alpha)
        rows.append(row)
    return rows


def _adjust(records: list[dict]) -> None:
    """Holm and BH adjusted p across the tests of each (model, calibration) — one family each."""
    from ..stats.multitest import benjamini_hochberg, holm

    groups: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        groups.setdefault((r["model"], r["calibration"]), []).append(r)
    for rs in groups.values():
        p = np.array([r["p_value"] for r in rs], dtype=np.float64)
        ok = np.isfinite(p)
        if ok.sum() == 0:
            continue
        ph, pb = np.full(len(p), np.nan), np.full(len(p), np.nan)
        ph[ok], pb[ok] = holm(p[ok]), benjamini_hochberg(p[ok])
        for r, a, b in zip(rs, ph, pb):
            r["p_holm"], r["p_bh"] = float(a), float(b)


def load_experiment(out: str | Path) -> ExperimentResults:
    """Read an experiment folder's cells into tidy records (no recomputation).

    Raises
    ------
    ExperimentNotFoundError
        ``out`` has no ``experiment.json``.
    """
    from .summary import summarize

    out = Path(out)
    exp = _read_json(out / EXPERIMENT_NAME)
    if not exp:
        raise ExperimentNotFoundError(
            f"{out}: not an isoeat experiment folder (no {EXPERIMENT_NAME}); run 'isoeat run CONFIG.yaml --out {out}' first"
        )
    cfg = exp["config"]
    manifest = read_manifest(out) or {}
    alpha = float(cfg["settings"]["alpha"])
    mmeta = manifest.get("models", {})
    models = []
    for m in cfg["models"]:
        fam = (mmeta.get(m["label"]) or {}).get("family") or m["family"]
        models.append({**m, "family": fam, "name": (mmeta.get(m["label"]) or {}).get("name", m["spec"]),
                       "fingerprint": (mmeta.get(m["label"]) or {}).get("fingerprint")})
    family_of = {m["label"]: m["family"] for m in models}
    cal_name = {c["label"]: c["name"] for c in cfg["calibrations"]}
    weat_recs: list[dict] = []
    failures: list[dict] = []
    aniso: list[dict] = []
    sims: list[dict] = []
    mdirs = {m["label"]: _slug(m["label"]) for m in cfg["models"]}
    cdirs = {c["label"]: _slug(c["label"]) for c in cfg["calibrations"]}
    for m in cfg["models"]:
        for c in cfg["calibrations"]:
            for t in cfg["tests"]:
                p = out / "cells" / mdirs[m["label"]] / cdirs[c["label"]] / f"{_slug(t['id'])}.json"
                rec = _read_json(p) if p.exists() else None
                if not rec:
                    continue
                if rec.get("status") != "ok":
                    failures.append({"kind": "weat", "model": m["label"], "calibration": c["label"], "item": t["id"],
                                     "cell": str(p.relative_to(out)), **(rec.get("error") or {})})
                    continue
                r = dict(rec["result"])
                for k in _FLOAT_FIELDS:
                    if k in r:
                        r[k] = _nan(r[k])
                r.update(model=m["label"], model_name=r.get("model"), family=family_of[m["label"]],
                         calibration=c["label"], calibration_name=cal_name[c["label"]], seed=rec.get("seed"),
                         cell=str(p.relative_to(out)), duration_s=rec.get("duration_s"),
                         warnings=rec.get("warnings", []))
                weat_recs.append(r)
            if cfg.get("anisotropy"):
                p = out / "anisotropy" / mdirs[m["label"]] / f"{cdirs[c['label']]}.json"
                rec = _read_json(p) if p.exists() else None
                if rec and rec.get("status") == "ok":
                    a = dict(rec["result"])
                    a.update(model=m["label"], model_name=a.get("model"), family=family_of[m["label"]],
                             calibration=c["label"], calibration_name=cal_name[c["label"]])
                    if a.get("heatmap_file"):
                        a["heatmap_path"] = str((p.parent / a["heatmap_file"]).relative_to(out))
                    aniso.append(a)
                elif rec:
                    failures.append({"kind": "anisotropy", "model": m["label"], "calibration": c["label"],
                                     "item": "anisotropy", "cell": str(p.relative_to(out)), **(rec.get("error") or {})})
            if cfg.get("similarity") and c["name"] != "none":
                for b in cfg["similarity"]["benchmarks"]:
                    p = out / "similarity" / mdirs[m["label"]] / cdirs[c["label"]] / f"{_slug(b)}.json"
                    rec = _read_json(p) if p.exists() else None
                    if rec and rec.get("status") == "ok":
                        s = dict(rec["result"])
                        s.update(model=m["label"], family=family_of[m["label"]], calibration=c["label"],
                                 calibration_name=cal_name[c["label"]], benchmark=b)
                        sims.append(s)
                    elif rec:
                        failures.append({"kind": "similarity", "model": m["label"], "calibration": c["label"],
                                         "item": b, "cell": str(p.relative_to(out)), **(rec.get("error") or {})})
    _adjust(weat_recs)
    comps = comparison_rows(weat_recs, cfg["calibrations"], alpha)
    summary = {c["label"]: summarize([r for r in comps if r["calibration"] == c["label"]], alpha)
               for c in cfg["calibrations"] if c["name"] != "none"}
    return ExperimentResults(out=out, experiment=exp, manifest=manifest, weat=weat_recs, comparisons=comps,
                             anisotropy=aniso, similarity=sims, failures=failures, summary=summary, models=models,
                             tests=cfg["tests"], calibrations=cfg["calibrations"])


_TIDY_DROP = ("s_x", "s_y", "cell", "duration_s", "warnings")


def write_results(out: str | Path, results: ExperimentResults | None = None) -> list[Path]:
    """Write the tidy files (results, comparison, anisotropy, similarity, summary, failures) and ``tables/``."""
    from ..reporting.paper_tables import write_tables
    from ..reporting.tables import records_to_csv, to_json

    out = Path(out)
    res = results or load_experiment(out)
    written: list[Path] = []

    def both(stem: str, records: list[dict]) -> None:
        atomic_write_text(out / f"{stem}.csv", records_to_csv(records))
        atomic_write_text(out / f"{stem}.json", to_json(records))
        written.extend([out / f"{stem}.csv", out / f"{stem}.json"])

    both("results", [{k: v for k, v in r.items() if k not in _TIDY_DROP} for r in res.weat])
    both("comparison", res.comparisons)
    if res.anisotropy:
        atomic_write_text(out / "anisotropy.csv", records_to_csv(
            [{**{k: v for k, v in a.items() if k != "explained_variance_ratio"},
              "explained_variance_ratio": a.get("explained_variance_ratio")} for a in res.anisotropy]))
        written.append(out / "anisotropy.csv")
    if res.similarity:
        atomic_write_text(out / "similarity.csv", records_to_csv(res.similarity))
        written.append(out / "similarity.csv")
    atomic_write_text(out / "summary.json", to_json(res.summary))
    atomic_write_text(out / "failures.json", to_json(res.failures))
    written += [out / "summary.json", out / "failures.json"]
    written += write_tables(res, out / "tables")
    return written


# =========================================================================== CLI
_CLI_KEEP = {"command", "config", "out", "overwrite", "format", "progress"}


def _explicit_options(args: Any) -> list[str]:
    """Options of ``isoeat run`` given on the command line that a CONFIG makes meaningless."""
    from ..cli import build_parser

    defaults = vars(build_parser().parse_args(["run"]))
    bad = []
    for k, v in vars(args).items():
        if k in _CLI_KEEP or k not in defaults:
            continue
        if v != defaults[k]:
            bad.append("--" + k.replace("_", "-"))
    return bad


def run_from_cli(args: Any) -> int:
    """``isoeat run CONFIG.yaml --out DIR [--overwrite never|failed|all]``: 0 ok, 1 failed cells, 2 user error."""
    from ..reporting.tables import to_json

    bad = _explicit_options(args)
    if bad:
        raise ConfigError(f"{', '.join(bad)}: not used with a CONFIG file; set these in the file's 'settings' "
                          "(see docs/experiments.md)")
    if not getattr(args, "out", None):
        raise ConfigError("isoeat run CONFIG.yaml needs --out DIR (where cells, tables and the manifest go)")
    config = load_config(args.config)
    progress = getattr(args, "progress", None)
    notes: list[str] = []

    def log(msg: str) -> None:
        notes.append(msg)
        if _progress_enabled(progress):
            sys.stderr.write("\r" + msg + "\n")

    def on_term(signum: int, frame: Any) -> None:  # release the lock and keep finished cells on SIGTERM
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_term) if hasattr(signal, "SIGTERM") else None
    try:
        summary = run_experiment(config, args.out, overwrite=args.overwrite, progress=progress, log=log,
                                 argv=sys.argv[1:])
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    res = load_experiment(args.out)
    fmt = getattr(args, "format", "table")
    if fmt == "json":
        sys.stdout.write(to_json(res.comparisons))
    elif fmt == "csv":
        from ..reporting.tables import records_to_csv

        sys.stdout.write(records_to_csv(res.comparisons))
    else:
        for text in _comparison_texts(res):
            print(text)
            print()
        print(f"{config.name}: {summary.line()}")
        print(f"tables: {Path(args.out) / 'tables'}; figures and report: isoeat report {args.out} --html")
    if summary.failed:
        sys.stderr.write(f"isoeat: {len(summary.failed)} cell(s) failed:\n")
        for f in summary.failed[:20]:
            sys.stderr.write(f"  {f['key']}: {f.get('type')}: {f.get('message')}\n")
        if len(summary.failed) > 20:
            sys.stderr.write(f"  ... and {len(summary.failed) - 20} more (see {Path(args.out) / 'failures.json'})\n")
        sys.stderr.write("rerun with --overwrite failed to retry them\n")
        return 1
    return 0


def _comparison_texts(res: ExperimentResults) -> list[str]:
    """The `isoeat run` text table (Table A1 layout) for every model and calibrated space."""
    from ..reporting.tables import comparison_table
    from .compare import Comparison, ComparisonRow

    texts = []
    by_key = {(r["model"], r["calibration"], r["test"]): r for r in res.weat}
    raw = next((c["label"] for c in res.calibrations if c["name"] == "none"), "none")
    adjust = res.settings.get("adjust", "holm")
    for m in res.models:
        for c in res.calibrations:
            if c["name"] == "none":
                continue
            rows = []
            for row in res.comparisons:
                if row["model"] != m["label"] or row["calibration"] != c["label"]:
                    continue
                rr, rc = by_key[(m["label"], raw, row["test"])], by_key[(m["label"], c["label"], row["test"])]
                rows.append(ComparisonRow(
                    test=row["test"], bias_type=row["bias_type"] or "", raw=_to_result(rr), calibrated=_to_result(rc),
                    change=row["change"], delta_d=row["delta_d"], large_shift=row["large_shift"],
                    sign_reversal=row["sign_reversal"]))
            if not rows:
                continue
            cal_meta = (res.manifest.get("calibrators", {}) or {}).get(f"{m['label']}/{c['label']}", {})
            meta = {"params": c.get("params") or {}, "reference": cal_meta.get("reference")} if cal_meta else {}
            comp = Comparison(model=m["label"], calibration=c["name"] if c["label"] == c["name"] else c["label"],
                              alpha=res.alpha, rows=tuple(rows), calibrator_metadata=meta)
            texts.append(comparison_table(comp, adjust=adjust))
    return texts


def _to_result(rec: dict) -> Any:
    from dataclasses import fields

    from ..stats.weat import WEATResult

    names = {f.name for f in fields(WEATResult)}
    kw = {k: v for k, v in rec.items() if k in names}
    kw["model"] = rec.get("model_name") or rec.get("model", "")
    for k in ("dropped", "case_folded", "s_x", "s_y"):
        if k in kw:
            kw[k] = tuple(kw[k] or ())
    return WEATResult(**kw)
