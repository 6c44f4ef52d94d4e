"""Fit a whitener for a model, save it as ``.npz`` (no pickle), load it back."""

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
from .zca import ZCAWhitener

__all__ = ["fit_whitener", "save_whitener", "load_whitener", "check_compatible"]

_FORMAT = "isoeat-whitener"
_ARRAYS = ("mean_", "covariance_", "eigenvalues_", "eigenvectors_", "whitening_")


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
    vecs, description = model.reference_vectors(n_reference, **reference_kwargs)
    w = ZCAWhitener(eps=eps).fit(vecs)
    from .. import __version__

    w.metadata_ = {
        "calibration": "zca",
        "model": getattr(model, "name", "?"),
        "model_fingerprint": getattr(model, "fingerprint", None),
        "reference": description,
        "n": int(w.n_samples_seen_),
        "eps": float(w.eps_),
        "dim": int(w.n_features_in_),
        "isoeat_version": __version__,
    }
    return w


def check_compatible(whitener: ZCAWhitener, model: Any, *, force: bool = False) -> None:
    """Refuse a whitener fitted on another dimension, or (unless ``force``) another model."""
    dim = getattr(model, "dim", None)
    if dim is not None and hasattr(whitener, "n_features_in_") and dim != whitener.n_features_in_:
        raise DimensionMismatchError(
            f"whitener fitted on dimension {whitener.n_features_in_} cannot be applied to "
            f"{getattr(model, 'name', 'model')} (dimension {dim})"
        )
    fp_w = getattr(whitener, "metadata_", {}).get("model_fingerprint")
    fp_m = getattr(model, "fingerprint", None)
    if fp_w and fp_m and fp_w != fp_m and not force:
        raise FingerprintMismatchError(
            f"whitener was fitted on model {whitener.metadata_.get('model')!r} (fingerprint {fp_w}), "
            f"not on {getattr(model, 'name', 'this model')!r} (fingerprint {fp_m}); pass force=True "
            "(--force) to apply it anyway"
        )


def save_whitener(whitener: ZCAWhitener, path: str | Path) -> Path:
    """Write ``path`` (``.npz``) atomically: the arrays plus JSON metadata.

    The metadata (format, eps, dim, n, model fingerprint, reference
    description) is stored as a JSON string inside the archive, so one file
    carries everything; nothing is pickled.
    """
    if not hasattr(whitener, "whitening_"):
        raise ConfigError("cannot save an unfitted whitener")
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_suffix(path.suffix + ".npz") if path.suffix else path.with_suffix(".npz")
    meta = {
        "format": _FORMAT,
        "format_version": 1,
        "class": type(whitener).__name__,
        "eps": float(whitener.eps_),
        "dim": int(whitener.n_features_in_),
        "n": int(whitener.n_samples_seen_),
        **{k: v for k, v in getattr(whitener, "metadata_", {}).items() if k not in {"eps", "dim", "n"}},
    }
    arrays = {k: np.asarray(getattr(whitener, k), dtype=np.float64) for k in _ARRAYS}
    arrays["metadata_json"] = np.array(json.dumps(meta, sort_keys=True))
    atomic_write_with(path, lambda fh: np.savez(fh, **arrays))
    return path


def load_whitener(path: str | Path) -> ZCAWhitener:
    """Read a whitener written by :func:`save_whitener` (``allow_pickle=False``)."""
    path = Path(path)
    if not path.exists():
        raise IsoeatFileNotFoundError(f"{path}: no such whitener file")
    try:
        with np.load(path, allow_pickle=False) as npz:
            files = set(npz.files)
            missing = [k for k in (*_ARRAYS, "metadata_json") if k not in files]
            if missing:
                raise DataFormatError(f"{path}: not an isoeat whitener (missing {', '.join(missing)})")
            meta = json.loads(str(npz["metadata_json"]))
            arrays = {k: np.array(npz[k]) for k in _ARRAYS}
    except DataFormatError:
        raise
    except ValueError as exc:
        raise DataFormatError(f"{path}: refused ({exc}); whitener files never contain pickles") from None
    except Exception as exc:
        raise DataFormatError(f"{path}: cannot read as .npz ({exc})") from None
    if meta.get("format") != _FORMAT:
        raise DataFormatError(f"{path}: metadata format is {meta.get('format')!r}, expected {_FORMAT!r}")
    d = int(meta.get("dim", -1))
    shapes_ok = (
        arrays["mean_"].shape == (d,)
        and arrays["eigenvalues_"].shape == (d,)
        and all(arrays[k].shape == (d, d) for k in ("covariance_", "eigenvectors_", "whitening_"))
    )
    if not shapes_ok:
        raise DataFormatError(f"{path}: array shapes do not match the recorded dimension {d}")
    if not all(np.isfinite(a).all() for a in arrays.values()):
        raise DataFormatError(f"{path}: arrays contain NaN or inf")
    w = ZCAWhitener(eps=float(meta["eps"]))
    for k, v in arrays.items():
        setattr(w, k, v)
    w.eps_ = float(meta["eps"])
    w.n_samples_seen_ = int(meta["n"])
    w.n_features_in_ = d
    # integrity: W must equal U (Λ+ε)^(-1/2) U^T for the stored U, Λ, ε
    expect = (w.eigenvectors_ / np.sqrt(w.eigenvalues_ + w.eps_)) @ w.eigenvectors_.T
    if not np.allclose(expect, w.whitening_, rtol=1e-8, atol=1e-10 * max(1.0, float(np.abs(expect).max()))):
        raise DataFormatError(f"{path}: whitening matrix is inconsistent with its eigendecomposition (tampered?)")
    w.metadata_ = {k: v for k, v in meta.items() if k not in {"format", "format_version", "class"}}
    return w
