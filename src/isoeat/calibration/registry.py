"""Calibrator registry: names accepted by ``--calibration`` and ``fit_calibrator``.

A calibrator is a class following the scikit-learn estimator contract:
``__init__`` only stores parameters, ``fit(X)`` returns self, learned state
ends in ``_``, ``transform``/``inverse_transform`` check fitted state and
dimension. It declares:

* ``name`` (class attribute): the registry name, e.g. ``"zca"``;
* ``_state_arrays`` (class attribute): names of the fitted arrays that
  :func:`~isoeat.calibration.save_calibrator` writes and hashes;
* optionally ``validate_params(params)`` (classmethod), called by
  :func:`make_calibrator`, raising ``ConfigError`` for a bad parameter
  (the shared base class ``calibration._base._Calibrator`` provides it);
* optionally ``_check_state(self)``, called after loading, raising
  ``DataFormatError`` when the arrays are inconsistent (tampered files).
"""

from __future__ import annotations

from typing import Any

from .._errors import ConfigError, DataFormatError
from .._registry import Registry
from .._types import ChunkedReference, fingerprint_of, layer_of, name_of
from ._base import _Calibrator
from .zca import ZCAWhitener

__all__ = ["CALIBRATORS", "register_calibrator", "make_calibrator", "fit_calibrator", "calibration_names",
           "calibrator_metadata"]

#: name -> calibrator class (a :class:`~isoeat._registry.Registry`; read it like a mapping)
CALIBRATORS: Registry[type[_Calibrator]] = Registry("calibration", {"zca": ZCAWhitener}, cutoff=0.4)


def register_calibrator(cls: type) -> type:
    """Add a calibrator class under ``cls.name`` (refuses another class under a taken name)."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{cls!r} has no 'name' class attribute")
    return CALIBRATORS.register(name, cls, same_ok=True)


def calibration_names() -> tuple[str, ...]:
    """``("none", "zca", ...)``: every value ``--calibration`` accepts."""
    return ("none", *CALIBRATORS.names())


def make_calibrator(name: str, **params: Any) -> Any:
    """An unfitted calibrator by name, e.g. ``make_calibrator("zca", eps=1e-3)``.

    The parameters are checked here (``cls.validate_params``), before anything
    is fitted: ``eps=True``, ``eps="abc"`` or ``eps=nan`` raise a one-line
    :class:`~isoeat.ConfigError` naming the parameter, so an experiment file
    is refused when it is read rather than in every cell of the run.
    """
    if name not in CALIBRATORS:
        raise CALIBRATORS.unknown(name, names=calibration_names())
    cls = CALIBRATORS.get(name)
    validate = getattr(cls, "validate_params", None)
    if validate is not None:
        validate(params)
    try:
        return cls(**params)
    except TypeError as exc:
        raise ConfigError(f"calibration {name!r}: {exc}") from None


def fit_calibrator(
    model: Any, name: str = "zca", *, n_reference: int = 100_000, reference_kwargs: dict[str, Any] | None = None,
    **params: Any,
) -> Any:
    """Stage 1 of the pipeline (paper §3.3) for any registered calibrator.

    Fits ``make_calibrator(name, **params)`` on ``model.reference_vectors(n_reference)``
    and records provenance in ``metadata_``: calibration name and parameters,
    model name and fingerprint, reference description, n, dim, isoeat version.
    """
    cal = make_calibrator(name, **params)
    from .._progress import purpose

    with purpose(f"fitting {name}"):  # named by the announcement of a long reference pass
        return _fit(cal, model, name, n_reference, reference_kwargs)


def _fit(cal: Any, model: Any, name: str, n_reference: int, reference_kwargs: dict[str, Any] | None) -> Any:
    """:func:`fit_calibrator`'s fit of the made calibrator ``cal``."""
    from .._types import StatisticsReference, streams_reference

    if isinstance(model, StatisticsReference) and hasattr(type(cal), "from_statistics"):
        # mergeable statistics (cached per chunk by contextual encoders): O(d^2) numbers per chunk
        stats, description = model.reference_statistics(n_reference, **(reference_kwargs or {}))
        cal = type(cal).from_statistics(stats, **cal.get_params())
        n_seen, dim = int(cal.n_samples_seen_), int(cal.n_features_in_)
    elif streams_reference(model):
        # contextual encoders stream their reference vectors: no n x d matrix in memory
        batches, description = model.reference_batches(n_reference, **(reference_kwargs or {}))
        if hasattr(cal, "fit_batches"):
            cal.fit_batches(batches)
        else:
            import numpy as np

            cal.fit(np.concatenate([np.asarray(b, dtype=np.float64) for b in batches]))
        n_seen, dim = int(cal.n_samples_seen_), int(cal.n_features_in_)
    else:
        vecs, description = model.reference_vectors(n_reference, **(reference_kwargs or {}))
        try:
            cal.fit(vecs)
        except DataFormatError as exc:  # name the sample a reference row belongs to
            if not getattr(exc, "ill_conditioned", False):
                raise
            raise DataFormatError(f"{exc} (reference sample: {description})") from None
        n_seen, dim = int(vecs.shape[0]), int(vecs.shape[1])
    cal.metadata_ = calibrator_metadata(cal, name, model, description, n_seen, dim)
    cal.metadata_["reference_asked"] = int(n_reference)  # a small model, text or corpus gives fewer: the protocol
    units = _reference_units(model, n_reference, reference_kwargs)
    if units is not None:  # a contextual reference's sentences (n counts its word vectors): the protocol reads it
        cal.metadata_["reference_units"] = units
    return cal


def _reference_units(model: Any, n_reference: int, reference_kwargs: dict[str, Any] | None) -> int | None:
    """The sentences of a contextual encoder's reference (a short corpus gives fewer than asked); None: static."""
    if not isinstance(model, ChunkedReference):
        return None
    found = model.reference_metadata(n_reference, **(reference_kwargs or {})).get("n_sentences")
    return int(found) if isinstance(found, int) else None


def calibrator_metadata(cal: Any, name: str, model: Any, description: str, n_seen: int, dim: int) -> dict[str, Any]:
    """The provenance a fitted calibrator records in ``metadata_`` (name, parameters, model, reference, n, dim)."""
    from .. import __version__

    meta = {
        "calibration": name,
        "params": {k: v for k, v in cal.get_params().items()},
        "model": name_of(model, "?"),
        "model_fingerprint": fingerprint_of(model),
        "reference": description,
        "n": n_seen,
        "dim": dim,
        "isoeat_version": __version__,
    }
    layer = layer_of(model)
    if layer is not None:  # checked against the model a saved calibrator is applied to (check_compatible)
        meta["layer"] = layer
    meta.update(eps_metadata(cal))
    return meta


def eps_metadata(cal: Any) -> dict[str, Any]:
    """What a fitted calibrator records of its ε: ``eps`` (the absolute ε used), ``eps_mode``, and for a
    relative ε the factor given (``eps_relative``); nothing for calibrators without ``eps``."""
    params = cal.get_params()
    if "eps" not in params:
        return {}
    out: dict[str, Any] = {"eps": float(getattr(cal, "eps_", params["eps"]))}
    if params.get("eps_mode", "absolute") == "relative":
        out.update(eps_mode="relative", eps_relative=float(params["eps"]))
    else:
        out["eps_mode"] = "absolute"
    return out


def eps_text(params: dict[str, Any], eps_used: float | None = None) -> str:
    """ε as headers print it: ``eps=0.001``, or ``eps=0.001 x mean eigenvalue (= 2.3e-05)`` for a relative one.

    >>> eps_text({"eps": 0.01, "eps_mode": "relative"}, 0.005)
    'eps=0.01 x mean eigenvalue (= 0.005)'
    >>> eps_text({"eps": 0.001})
    'eps=0.001'
    """
    if "eps" not in params:
        return ""
    if params.get("eps_mode") == "relative":
        used = f" (= {eps_used:.3g})" if eps_used is not None else ""
        return f"eps={params['eps']:g} x mean eigenvalue{used}"
    return f"eps={params['eps']:g}"


def params_text(params: dict[str, Any], eps_used: float | None = None) -> str:
    """A calibrator's parameters as headers print them: ``eps=0.001, n_components=5``; a relative ε as
    :func:`eps_text` says it; ``eps_mode`` itself is not repeated.

    >>> params_text({"eps": 0.01, "eps_mode": "relative"}, 0.005)
    'eps=0.01 x mean eigenvalue (= 0.005)'
    >>> params_text({"eps": 0.001, "eps_mode": "absolute", "shrinkage": None})
    'eps=0.001, shrinkage=None'
    """
    shown = []
    for k, v in params.items():
        if k == "eps" and params.get("eps_mode") == "relative":
            shown.append(eps_text(params, eps_used))
        elif k != "eps_mode":
            shown.append(f"{k}={v}")
    return ", ".join(shown)
