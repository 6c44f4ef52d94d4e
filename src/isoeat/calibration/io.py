"""Fit calibrators for a model, save them as ``.npz`` (no pickle), load them back, verified by content.

A saved calibrator holds its fitted arrays, a ``metadata_json`` string
(class, parameters, provenance) and a ``content_sha256`` record: the SHA-256
of every fitted array (name, dtype, shape and bytes) and of the metadata
string. :func:`load_calibrator` recomputes them and refuses a file whose
arrays or metadata changed after it was written. The hash detects changes
(a shifted mean, an edited fingerprint); it is not a signature: whoever can
rewrite the file can rewrite the record too.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import (
    ConfigError,
    DataFormatError,
    DimensionMismatchError,
    FingerprintMismatchError,
    InvalidValueError,
    IsoeatFileNotFoundError,
    IsoeatWarning,
    NotFittedError,
)
from .._io import atomic_write_with
from .._records import canonical_json, clean
from .._types import dim_of, fingerprint_of, layer_of, name_of
from .._validate import check_bool, check_int, check_path, check_real, show
from .._version import __version__
from ._base import effective_eps
from .registry import CALIBRATORS, fit_calibrator
from .zca import ZCAWhitener

__all__ = [
    "fit_whitener",
    "save_calibrator",
    "load_calibrator",
    "save_whitener",
    "load_whitener",
    "check_compatible",
    "unverified_model",
    "calibrator_digest",
    "NOT_VERIFIED",
]

_FORMAT = "isoeat-calibrator"
_OLD_FORMAT = "isoeat-whitener"
#: format_version 2 adds the content hash record; 1 (and the old format) had none
_FORMAT_VERSION = 2
_HASH_KEY = "content_sha256"


def _update_array(h: Any, name: str, a: Any) -> None:
    a = np.ascontiguousarray(np.asarray(a))
    h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
    h.update(a.tobytes())


def _array_sha256(name: str, a: Any) -> str:
    h = hashlib.sha256()
    _update_array(h, name, a)
    return h.hexdigest()


def calibrator_digest(calibrator: Any) -> str:
    """SHA-256 (hex) of a fitted calibrator's content: class name, parameters and every fitted array.

    Every array named in the class's ``_state_arrays`` enters whole, with its
    name, dtype and shape, so two calibrators have the same digest only if
    they would transform every vector identically. The experiment runner
    keys the reuse of stored results by it.

    Parameters
    ----------
    calibrator : fitted calibrator
        Any registered calibrator (``ZCAWhitener``, ``PCAWhitener``, ...) after ``fit`` or ``load_calibrator``.

    Returns
    -------
    str
        64 hexadecimal characters.

    Raises
    ------
    NotFittedError
        The calibrator is not fitted.

    Examples
    --------
    >>> from isoeat import ZCAWhitener
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> calibrator_digest(ZCAWhitener().fit(X)) == calibrator_digest(ZCAWhitener().fit(X.copy()))
    True
    """
    names = getattr(type(calibrator), "_state_arrays", None)
    if names is None or not all(hasattr(calibrator, k) for k in names):
        raise NotFittedError(f"this {type(calibrator).__name__} is not fitted yet: it has no content to hash")
    h = hashlib.sha256()
    params = calibrator.get_params() if hasattr(calibrator, "get_params") else {}
    h.update(canonical_json([type(calibrator).__name__, params]).encode())
    for name in names:
        _update_array(h, name, getattr(calibrator, name))
    return h.hexdigest()


def _content_record(arrays: dict[str, np.ndarray], metadata_json: str) -> str:
    """The ``content_sha256`` entry: per-array and metadata SHA-256, as a JSON string."""
    return canonical_json({
        "algorithm": "sha256",
        "arrays": {k: _array_sha256(k, a) for k, a in arrays.items()},
        "metadata_json": hashlib.sha256(metadata_json.encode()).hexdigest(),
    })


def _verify_content(path: Path, record: str | None, arrays: dict[str, np.ndarray], metadata_json: str,
                    meta: dict[str, Any], require_hash: bool) -> None:
    """Refuse a file whose arrays or metadata differ from its hash record; warn for files older than hashes."""
    if record is None:
        version = meta.get("format_version")
        if meta.get("format") == _FORMAT and not (isinstance(version, int) and version < _FORMAT_VERSION):
            raise DataFormatError(f"{path}: the content hash record ({_HASH_KEY}) is missing though format_version is "
                                  f"{version!r}: the file was changed after it was saved")
        if require_hash:
            raise DataFormatError(f"{path}: saved before isoeat recorded content hashes, so it cannot be verified "
                                  "(require_hash=True); fit the calibrator again")
        warnings.warn(f"{path}: saved before isoeat recorded content hashes: its arrays and metadata cannot be "
                      "verified; load it once and save_calibrator it again to add one", IsoeatWarning, stacklevel=3)
        return
    try:
        rec = json.loads(record)
        recorded, meta_sha = dict(rec["arrays"]), str(rec["metadata_json"])
    except (ValueError, KeyError, TypeError):
        raise DataFormatError(f"{path}: the content hash record ({_HASH_KEY}) is unreadable (changed or tampered?)"
                              ) from None
    bad = [k for k, a in arrays.items() if recorded.get(k) != _array_sha256(k, a)]
    bad += [k for k in recorded if k not in arrays]
    if meta_sha != hashlib.sha256(metadata_json.encode()).hexdigest():
        bad.append("metadata_json")
    if bad:
        raise DataFormatError(f"{path}: {', '.join(bad)} do not match the content hash recorded when the file was "
                              "saved (changed or tampered?)")


def fit_whitener(model: Any, *, n_reference: int = 100_000, eps: float = 1e-3, **reference_kwargs: Any) -> ZCAWhitener:
    """Deprecated: ``fit_calibrator(model, "zca", n_reference=n, eps=eps, reference_kwargs={...})`` (the same fit).

    Warns (:class:`DeprecationWarning`), then fits ZCA on the model's reference vectors (paper §3.3).

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
    from .._surface import deprecated_function

    deprecated_function("fit_whitener")
    return fit_calibrator(model, "zca", n_reference=n_reference, reference_kwargs=reference_kwargs, eps=eps)


#: The mark a calibrator loaded from a file without a model fingerprint carries (``metadata_["model_check"]``):
#: the run's records, the manifest and the printed tables show it.
NOT_VERIFIED = "not verified: the calibrator file records no model fingerprint"


def unverified_model(calibrator: Any, model: Any) -> str | None:
    """Why isoeat cannot tell whether ``calibrator`` was fitted on ``model`` (None: it can, or nothing is claimed).

    A calibrator fitted in memory on vectors (``ZCAWhitener().fit(X)``) claims no
    model: nothing to verify. One with provenance (``metadata_``: a fitted or
    loaded calibrator) is verified by its ``model_fingerprint`` against the
    model's ``fingerprint``; when either is missing (a format-1 file, metadata
    edited and re-sealed, an encoder without a fingerprint), isoeat cannot tell.
    """
    meta = getattr(calibrator, "metadata_", None) or {}
    if not meta:
        return None
    fp_w, fp_m = meta.get("model_fingerprint"), fingerprint_of(model)
    if fp_w and fp_m:
        return None
    source = getattr(calibrator, "_source_path", None)
    who = f"{source}: the calibrator" if source else "the calibrator"
    name = name_of(model, "this model")
    dim = dim_of(model)
    if not fp_w:
        return (f"{who} records no model fingerprint (a format-1 file, or its metadata was edited): isoeat cannot "
                f"tell which model it was fitted on; applied to {name!r} because the dimensions match"
                f"{f' ({dim})' if dim else ''}; refit it on this model to have it checked")
    return (f"{name!r} has no content fingerprint: isoeat cannot tell whether {who} (fitted on "
            f"{meta.get('model')!r}) belongs to it")


def recorded_layer(meta: dict[str, Any]) -> int | None:
    """The layer a calibrator's metadata records (``layer``; a file saved before it was recorded: the
    ``"; layer L of MODEL"`` of its reference description), else None."""
    import re

    layer = meta.get("layer")
    if isinstance(layer, int) and not isinstance(layer, bool):
        return layer
    m = re.search(r"; layer (\d+) of ", str(meta.get("reference") or ""))
    return int(m.group(1)) if m else None


def _mismatch(calibrator: Any, meta: dict[str, Any], model: Any, fp_w: str, fp_m: str) -> str:
    """Why a calibrator fitted on another model (or another layer of this one) is refused, in one line."""
    source = getattr(calibrator, "_source_path", None)
    who = f"{source}: the calibrator" if source else "the calibrator"
    name = name_of(model, "this model")
    fitted, here = recorded_layer(meta), layer_of(model)
    if fitted is not None and here is not None and fitted != here:
        return (f"{who} was fitted on layer {fitted} of {meta.get('model')}, and the model here is layer {here} of "
                f"{name}: load the model at layer={fitted}, or refit the calibrator on layer {here}; force=True "
                "applies it anyway")
    return (f"{who} was fitted on model {meta.get('model')!r} (fingerprint {fp_w}), not on {name!r} (fingerprint "
            f"{fp_m}); force=True applies it anyway")


def check_compatible(calibrator: Any, model: Any, *, force: bool = False) -> None:
    """Refuse a calibrator fitted on another dimension, or (unless ``force``) another model.

    Warns (:class:`~isoeat.IsoeatWarning`, see :func:`unverified_model`) when
    the calibrator has provenance but isoeat cannot tell whether it belongs to
    ``model``.
    """
    dim = dim_of(model)
    if dim is not None and hasattr(calibrator, "n_features_in_") and dim != calibrator.n_features_in_:
        raise DimensionMismatchError(
            f"calibrator fitted on dimension {calibrator.n_features_in_} cannot be applied to "
            f"{name_of(model, 'model')} (dimension {dim})"
        )
    meta = getattr(calibrator, "metadata_", {}) or {}
    fp_w = meta.get("model_fingerprint")
    fp_m = fingerprint_of(model)
    if fp_w and fp_m and fp_w != fp_m and not force:
        raise FingerprintMismatchError(_mismatch(calibrator, meta, model, fp_w, fp_m))
    why = unverified_model(calibrator, model)
    if why:
        warnings.warn(why, IsoeatWarning, stacklevel=2)


def save_calibrator(calibrator: Any, path: str | Path) -> Path:
    """Write a fitted calibrator to ``path`` (``.npz``) atomically.

    The archive holds the calibrator's fitted arrays (``_state_arrays``), a
    JSON string with its class name, parameters and provenance (model
    fingerprint, reference description, n, dim) and the SHA-256 of each of
    them (``content_sha256``), which :func:`load_calibrator` verifies;
    nothing is pickled. A name without ``.npz`` gets it; a folder (existing,
    or a name ending in a separator) or a device is refused in one line.
    """
    arrays_names = getattr(type(calibrator), "_state_arrays", None)
    if arrays_names is None or not all(hasattr(calibrator, k) for k in arrays_names):
        raise ConfigError("cannot save an unfitted calibrator (call fit first)")
    checked = check_path("path", path, requirement="a path (str or os.PathLike) of a .npz file to write")
    given, path = os.fspath(path), checked
    if path.is_dir() or given.endswith(("/", os.sep)):
        raise ConfigError(f"{given}: is a folder; give the calibrator's file name, e.g. {path / 'calibrator.npz'}")
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    if path.is_dir() or (path.exists() and not path.is_file()):
        raise ConfigError(f"{path}: exists and is not a regular file; give another file name for the calibrator")
    meta = {
        "format": _FORMAT,
        "format_version": _FORMAT_VERSION,
        "calibration": calibrator.name,
        "params": calibrator.get_params(),
        "dim": int(calibrator.n_features_in_),
        "n": int(calibrator.n_samples_seen_),
        **{k: v for k, v in (getattr(calibrator, "metadata_", {}) or {}).items()
           if k not in {"dim", "n", "params", "calibration"}},
    }
    meta.setdefault("isoeat_version", __version__)  # the fit's version, else the one that saves it
    # values typed Any: mypy would match np.savez's **kwds against its keyword allow_pickle (a bool)
    arrays: dict[str, Any] = {k: np.asarray(getattr(calibrator, k), dtype=np.float64) for k in arrays_names}
    meta_json = canonical_json(clean(meta))  # NaN (an undefined reference-SE, say) is written as null
    arrays[_HASH_KEY] = np.array(_content_record(arrays, meta_json))
    arrays["metadata_json"] = np.array(meta_json)
    atomic_write_with(path, lambda fh: np.savez(fh, **arrays))
    return path


def _check_array_headers(path: Path, npz: Any, names: Any, meta: dict[str, Any]) -> None:
    """Refuse arrays whose headers announce more than the calibrator's dimension allows (read headers only).

    A calibrator's arrays are vectors or square matrices of its dimension
    ``dim``; a small file may announce a gigantic shape (a zip bomb), so the
    shapes are checked from the ``.npy`` headers before anything is loaded.
    """
    dim = _field(path, "dim", meta.get("dim"), check_int, lo=1)
    if dim > 100_000:
        raise DataFormatError(f"{path}: metadata gives dimension {dim}, not a plausible embedding dimension")
    for name in names:
        with npz.zip.open(f"{name}.npy") as fh:
            version = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = read(fh)
        if name == "mean_" and tuple(shape) != (dim,):  # every calibrator centres: its mean has the dimension
            raise DataFormatError(f"{path}: metadata field 'dim' is {dim}, but mean_ has shape {tuple(shape)}")
        if len(shape) > 2 or any(int(s) > dim for s in shape) or dtype.itemsize > 16:
            raise DataFormatError(f"{path}: {name} announces shape {tuple(shape)} ({dtype}), more than a calibrator "
                                  f"of dimension {dim} holds; refused before loading")


def _field(path: Path, name: str, value: Any, check: Any, **bounds: Any) -> Any:
    """``check(name, value, **bounds)`` (a validator of :mod:`isoeat._validate`) with the file and field named."""
    try:
        return check(name, value, **bounds)
    except InvalidValueError as exc:
        raise DataFormatError(f"{path}: metadata field {name!r} must be {exc.detail()}") from None


def newer_format(path: str | Path) -> str | None:
    """Why a calibrator file cannot be read by this isoeat because a newer one wrote it (None: it is not newer).

    Reads only the metadata; a file that is not a calibrator, or not readable, is not *newer* (its loading
    says what it is).
    """
    try:
        with np.load(path, allow_pickle=False) as npz:
            meta = json.loads(str(npz["metadata_json"])) if "metadata_json" in npz.files else None
    except Exception:  # noqa: BLE001 - unreadable: load_calibrator says why
        return None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        return None
    try:
        _check_format(Path(path), meta)
    except DataFormatError as exc:
        return str(exc) if "reads calibrator formats" in str(exc) else None
    return None


def _check_format(path: Path, meta: dict[str, Any]) -> None:
    """The metadata's ``format`` and ``format_version``: this isoeat's, or an older one it reads."""
    fmt = meta.get("format")
    if fmt not in (_FORMAT, _OLD_FORMAT):
        raise DataFormatError(f"{path}: metadata field 'format' is {fmt!r}, expected {_FORMAT!r}")
    if fmt == _OLD_FORMAT:
        return
    version = _field(path, "format_version", meta.get("format_version"), check_int, lo=1)
    if version > _FORMAT_VERSION:
        from .. import __version__

        by = meta.get("isoeat_version")
        raise DataFormatError(
            f"{path}: written in calibrator format {version}{f' by isoeat {by}' if isinstance(by, str) else ''}; "
            f"this isoeat ({__version__}) reads calibrator formats 1 to {_FORMAT_VERSION}: load it with the isoeat "
            "that wrote it, or fit the calibrator again")


def _check_metadata(path: Path, meta: dict[str, Any], cls: Any) -> dict[str, Any]:
    """Every field the loader uses, checked by name (re-sealed metadata passes the content hash); the params."""
    _field(path, "n", meta.get("n"), check_int, lo=1)
    for key in ("model_fingerprint", "model", "reference", "isoeat_version"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise DataFormatError(f"{path}: metadata field {key!r} must be text, got {show(meta[key])}")
    if "eps" in meta:
        _field(path, "eps", meta["eps"], check_real, lo=0)
    params = meta.get("params") if "params" in meta else ({"eps": meta["eps"]} if "eps" in meta else {})
    if not isinstance(params, dict):
        raise DataFormatError(f"{path}: metadata field 'params' must be a mapping of parameter names to values, "
                              f"got {show(params)}")
    try:
        cls.validate_params(params)
    except InvalidValueError as exc:
        raise DataFormatError(f"{path}: metadata field 'params.{exc.parameter}' must be {exc.detail()}") from None
    except ConfigError as exc:
        raise DataFormatError(f"{path}: metadata field 'params': {exc}") from None
    return params


def load_calibrator(path: str | Path, *, require_hash: bool = False) -> Any:
    """Read a calibrator written by :func:`save_calibrator` (``allow_pickle=False``), verified by content.

    Parameters
    ----------
    path : str or Path
        The ``.npz`` file.
    require_hash : bool, default False
        Refuse files written before content hashes (format_version 1) instead
        of loading them with a warning.

    Raises
    ------
    DataFormatError
        Not a calibrator file, or its arrays or metadata differ from the
        SHA-256 recorded when it was saved (the message names the file and
        what does not match), or the arrays are inconsistent with each other.

    Warns
    -----
    IsoeatWarning
        A file written before isoeat recorded content hashes (format_version 1)
        cannot be verified; unless ``require_hash``, it is loaded (its arrays
        are still checked for consistency) with a warning.
    """
    require_hash = check_bool("require_hash", require_hash)
    path = check_path("path", path, requirement="a path (str or os.PathLike) of a calibrator .npz file")
    if not path.exists():
        raise IsoeatFileNotFoundError(f"{path}: no such calibrator file")
    from .._textio import check_regular_file

    check_regular_file(path, what="calibrator file (.npz)")  # a FIFO would block, a device never end
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise IsoeatFileNotFoundError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if magic != b"PK\x03\x04":
        raise DataFormatError(f"{path}: cannot read as .npz (not a zip archive: a calibrator is an .npz file)")
    cls, arrays, meta_json, meta, record = _read_npz(path)
    _verify_content(path, record, arrays, meta_json, meta, require_hash)
    params = _check_metadata(path, meta, cls)
    if not all(np.isfinite(a).all() for a in arrays.values()):
        raise DataFormatError(f"{path}: arrays contain NaN or inf")
    return _restore(path, cls, params, arrays, meta)


def _read_npz(path: Path) -> tuple[Any, dict[str, np.ndarray], str, dict[str, Any], str | None]:
    """A calibrator file's calibration class, state arrays, metadata (its JSON text and parsed) and recorded
    content hash (None in files written before content hashes), each checked as it is read; nothing pickled."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            files = set(npz.files)
            if "metadata_json" not in files:
                raise DataFormatError(f"{path}: not an isoeat calibrator (missing metadata_json)")
            meta_json = str(npz["metadata_json"])
            try:
                meta = json.loads(meta_json)
            except ValueError as exc:
                raise DataFormatError(f"{path}: metadata_json is not valid JSON ({exc})") from None
            if not isinstance(meta, dict):
                raise DataFormatError(f"{path}: metadata is not a JSON object")
            _check_format(path, meta)
            name = meta.get("calibration", "zca")
            if not isinstance(name, str) or name not in CALIBRATORS:
                raise DataFormatError(f"{path}: metadata field 'calibration' is {name!r}, not a known calibration "
                                      f"({', '.join(CALIBRATORS.names())})")
            cls = CALIBRATORS.get(name)
            missing = [k for k in cls._state_arrays if k not in files]
            if missing:
                raise DataFormatError(f"{path}: not an isoeat calibrator (missing {', '.join(missing)})")
            extra = sorted(files - set(cls._state_arrays) - {"metadata_json", _HASH_KEY})
            if extra:
                raise DataFormatError(f"{path}: metadata field 'calibration' is {name!r}, but the file holds the "
                                      f"arrays of another calibration ({', '.join(extra)} besides {name}'s)")
            _check_array_headers(path, npz, cls._state_arrays, meta)  # before a single array is loaded
            arrays = {k: np.array(npz[k]) for k in cls._state_arrays}
            record = str(npz[_HASH_KEY]) if _HASH_KEY in files else None
    except DataFormatError:
        raise
    except ValueError as exc:
        if "pickle" in str(exc):
            raise DataFormatError(f"{path}: refused (Python objects); calibrator files never contain pickles") from None
        raise DataFormatError(f"{path}: cannot read as .npz ({exc})") from None
    except Exception as exc:
        raise DataFormatError(f"{path}: cannot read as .npz ({exc})") from None
    return cls, arrays, meta_json, meta, record


def _restore(path: Path, cls: Any, params: dict[str, Any], arrays: dict[str, np.ndarray],
             meta: dict[str, Any]) -> Any:
    """The fitted calibrator a verified file describes: its parameters, its arrays, its sizes and metadata."""
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
    if "eps" in params:  # a relative eps: the absolute one used is the metadata's (else the rule on the covariance)
        relative = params.get("eps_mode") == "relative"
        cal.eps_ = float(params["eps"]) if not relative else float(meta["eps"]) if "eps" in meta else \
            effective_eps(params["eps"], "relative", np.linalg.eigvalsh(arrays["covariance_"]))
    check = getattr(cal, "_check_state", None)
    if check is not None:
        try:
            check()
        except DataFormatError as exc:
            raise DataFormatError(f"{path}: {exc}") from None
    cal.metadata_ = {k: v for k, v in meta.items() if k not in {"format", "format_version"}}
    if not cal.metadata_.get("model_fingerprint"):
        cal.metadata_["model_check"] = NOT_VERIFIED
    cal._source_path = str(path)  # named in the warnings of check_compatible (not saved)
    return cal


#: ZCA-specific names kept for readability in user code.
save_whitener = save_calibrator
load_whitener = load_calibrator
