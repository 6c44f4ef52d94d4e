"""Fit calibrators for a model, save them as ``.npz`` (no pickle), load them back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import (
    ConfigError,
    DataFormatError,
    DimensionMismatchError,
    FingerprintMismatchError,
    IsoeatFileNotFoundError,
)
from .._io import atomic_write_with
from .registry import CALIBRATORS, fit_calibrator
from .zca import ZCAWhitener

__all__ = [
    "fit_whitener",
    "save_calibrator",
    "load_calibrator",
    "save_whitener",
    "load_whitener",
    "check_compatible",
]

_FORMAT = "isoeat-calibrator"
_OLD_FORMAT = "isoeat-whitener"


def fit_whitener(model: Any, *, n_reference: int = 100_000, eps: float = 1e-3, **reference_kwargs: Any) -> ZCAWhitener:
    """Stage 1 of the pipeline (paper §3.3): fit ZCA on the model's reference vectors.

    Parameters
    ----------
    model : Encoder
        Any encoder with ``reference_vectors(n, **kwargs)`` and ``fingerprint``.
    n_reference : int, default 100_000
        Reference sample size (paper §4.1).
    eps : float, default 1e-3
    **reference_kwargs
        Passed to ``model.reference_vectors`` (e.g. ``text=PATH``).
    """
    return fit_calibrator(model, "zca", n_reference=n_reference, reference_kwargs=reference_kwargs, eps=eps)


def check_compatible(calibrator: Any, model: Any, *, force: bool = False) -> None:
    """Refuse a calibrator fitted on another dimension, or (unless ``force``) another model."""
    dim = getattr(model, "dim", None)
    if dim is not None and hasattr(calibrator, "n_features_in_") and dim != calibrator.n_features_in_:
        raise DimensionMismatchError(
            f"calibrator fitted on dimension {calibrator.n_features_in_} cannot be applied to "
            f"{getattr(model, 'name', 'model')} (dimension {dim})"
        )
    meta = getattr(calibrator, "metadata_", {}) or {}
    fp_w = meta.get("model_fingerprint")
    fp_m = getattr(model, "fingerprint", None)
    if fp_w and fp_m and fp_w != fp_m and not force:
        raise FingerprintMismatchError(
            f"calibrator was fitted on model {meta.get('model')!r} (fingerprint {fp_w}), "
            f"not on {getattr(model, 'name', 'this model')!r} (fingerprint {fp_m}); pass force=True "
            "(--force) to apply it anyway"
        )


def save_calibrator(calibrator: Any, path: str | Path) -> Path:
    """Write a fitted calibrator to ``path`` (``.npz``) atomically.

    The archive holds the calibrator's fitted arrays (``_state_arrays``) and a
    JSON string with its class name, parameters and provenance (model
    fingerprint, reference description, n, dim); nothing is pickled.
    """
    arrays_names = getattr(type(calibrator), "_state_arrays", None)
    if arrays_names is None or not all(hasattr(calibrator, k) for k in arrays_names):
        raise ConfigError("cannot save an unfitted calibrator (call fit first)")
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    meta = {
        "format": _FORMAT,
        "format_version": 1,
        "calibration": calibrator.name,
        "params": calibrator.get_params(),
        "dim": int(calibrator.n_features_in_),
        "n": int(calibrator.n_samples_seen_),
        **{k: v for k, v in (getattr(calibrator, "metadata_", {}) or {}).items()
           if k not in {"dim", "n", "params", "calibration"}},
    }
    arrays = {k: np.asarray(getattr(calibrator, k), dtype=np.float64) for k in arrays_names}
    arrays["metadata_json"] = np.array(json.dumps(meta, sort_keys=True, default=float))
    atomic_write_with(path, lambda fh: np.savez(fh, **arrays))
    return path


def load_calibrator(path: str | Path) -> Any:
    """Read a calibrator written by :func:`save_calibrator` (``allow_pickle=False``)."""
    path = Path(path)
    if not path.exists():
        raise IsoeatFileNotFoundError(f"{path}: no such calibrator file")
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise IsoeatFileNotFoundError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if magic != b"PK\x03\x04":
        raise DataFormatError(f"{path}: cannot read as .npz (not a zip archive: a calibrator is an .npz file)")
    try:
        with np.load(path, allow_pickle=False) as npz:
            files = set(npz.files)
            if "metadata_json" not in files:
                raise DataFormatError(f"{path}: not an isoeat calibrator (missing metadata_json)")
            meta = json.loads(str(npz["metadata_json"]))
            if not isinstance(meta, dict):
                raise DataFormatError(f"{path}: metadata is not a JSON object")
            name = meta.get("calibration", "zca")
            if name not in CALIBRATORS:
                raise DataFormatError(f"{path}: unknown calibration {name!r} in metadata")
            cls = CALIBRATORS.get(name)
            missing = [k for k in cls._state_arrays if k not in files]
            if missing:
                raise DataFormatError(f"{path}: not an isoeat calibrator (missing {', '.join(missing)})")
            arrays = {k: np.array(npz[k]) for k in cls._state_arrays}
    except DataFormatError:
        raise
    except ValueError as exc:
        raise DataFormatError(f"{path}: refused ({exc}); calibrator files never contain pickles") from None
    except Exception as exc:
        raise DataFormatError(f"{path}: cannot read as .npz ({exc})") from None
    if meta.get("format") not in (_FORMAT, _OLD_FORMAT):
        raise DataFormatError(f"{path}: metadata format is {meta.get('format')!r}, expected {_FORMAT!r}")
    if not all(np.isfinite(a).all() for a in arrays.values()):
        raise DataFormatError(f"{path}: arrays contain NaN or inf")
    params = meta.get("params") or ({"eps": meta["eps"]} if "eps" in meta else {})
    try:
        cal = cls(**params)
    except TypeError as exc:
        raise DataFormatError(f"{path}: parameters {params} do not fit {cls.__name__} ({exc})") from None
    for k, v in arrays.items():
        setattr(cal, k, v)
    try:
        cal.n_features_in_ = int(meta["dim"])
        cal.n_samples_seen_ = int(meta["n"])
    except (KeyError, TypeError, ValueError):
        raise DataFormatError(f"{path}: metadata lacks a valid 'dim' and 'n'") from None
    if "eps" in params:
        cal.eps_ = float(params["eps"])
    check = getattr(cal, "_check_state", None)
    if check is not None:
        try:
            check()
        except DataFormatError as exc:
            raise DataFormatError(f"{path}: {exc}") from None
    cal.metadata_ = {k: v for k, v in meta.items() if k not in {"format", "format_version"}}
    return cal


#: ZCA-specific names kept for readability in user code.
save_whitener = save_calibrator
load_whitener = load_calibrator
