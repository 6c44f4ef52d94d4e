r"""Shared plumbing of every calibrator (:class:`~isoeat.ZCAWhitener` and :mod:`~isoeat.calibration.alternatives`).

Input and parameter validation, reference moments (in memory and streamed),
the descending eigendecomposition, the singular-covariance warning, and the
base classes: :class:`_Calibrator` (the estimator contract's parameter,
fitted-state and dimension checks, and the reset of a refit) and
:class:`_Whitener` (:math:`z = W(x-\mu)` with :math:`W` built from
:math:`U` and :math:`\Lambda`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._errors import (
    ConfigError,
    DataFormatError,
    DimensionMismatchError,
    InvalidValueError,
    IsoeatWarning,
    NotFittedError,
)
from .._validate import check_choice, check_int, check_real, show


def _as_matrix(X: Any, what: str) -> np.ndarray:
    """``X`` as a finite float64 matrix (a single vector becomes one row)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[None, :]
    if X.ndim != 2:
        raise DataFormatError(f"{what}: expected a 2-D array (n_samples, dim), got shape {X.shape}")
    if not np.isfinite(X).all():
        raise DataFormatError(f"{what}: contains NaN or inf values")
    return X


# --------------------------------------------------------------------------- one validator per parameter
def _check_eps(eps: Any) -> float:
    """``eps`` (added to the eigenvalues): a finite number >= 0 (``True``, strings and NaN refused)."""
    return check_real("eps", eps, lo=0)


#: How ``eps`` is read: as ε itself, or relative to the mean eigenvalue of the reference covariance.
EPS_MODES = ("absolute", "relative")


def _check_eps_mode(mode: Any) -> str:
    """``eps_mode``: ``"absolute"`` (ε = eps, the paper) or ``"relative"`` (ε = eps · mean(λ))."""
    return check_choice("eps_mode", mode, EPS_MODES)


def effective_eps(eps: float, eps_mode: str, eigenvalues: np.ndarray) -> float:
    r"""The ε added to the eigenvalues: ``eps`` (absolute) or :math:`\text{eps}\cdot\bar\lambda` (relative).

    :math:`\bar\lambda = \operatorname{tr}\Sigma/d`, the mean eigenvalue of the reference covariance
    (round-off negatives clipped to 0), so a relative ε does not depend on the scale of the vectors.

    >>> effective_eps(0.01, "relative", np.array([3.0, 1.0]))
    0.02
    """
    eps = _check_eps(eps)
    if _check_eps_mode(eps_mode) == "absolute":
        return eps
    with np.errstate(over="ignore"):
        used = float(eps * np.mean(np.clip(eigenvalues, 0.0, None)))
    if used == 0 and eps > 0:  # not "eps=0 ... use eps > 0" for an eps that was given > 0
        raise ConfigError(f"eps_relative={eps:g}: the reference covariance is zero (every reference vector the same), "
                          "so a relative epsilon is 0; give an absolute --eps or other reference vectors")
    if not np.isfinite(used):  # W = 0 would map every vector to the origin
        raise ConfigError(f"eps_relative={eps:g} x the mean eigenvalue overflows (epsilon would be infinite); "
                                "give a smaller factor")
    return used


def _check_shrinkage(s: Any) -> float | None:
    """``shrinkage``: None (the Ledoit-Wolf optimum) or a number in [0, 1]."""
    if s is None:
        return None
    try:
        return check_real("shrinkage", s, lo=0, hi=1)
    except InvalidValueError:
        raise InvalidValueError("shrinkage", "None (Ledoit-Wolf optimum) or a number in [0, 1]", show(s)) from None


def _check_components(D: Any) -> int | None:
    """``n_components``: None (the default for the dimension) or an integer >= 0."""
    if D is None:
        return None
    try:
        return check_int("n_components", D, lo=0)
    except InvalidValueError:
        raise InvalidValueError("n_components", "None or a non-negative integer", show(D)) from None


def _moments(X: np.ndarray, min_n: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, centred data and covariance (n−1) of reference vectors."""
    n = X.shape[0]
    if n < min_n:
        raise DataFormatError(f"reference vectors: need at least {min_n} samples to estimate a covariance, got {n}")
    mean = X.mean(axis=0)
    Xc = X - mean
    cov = (Xc.T @ Xc) / (n - 1)
    return mean, Xc, (cov + cov.T) / 2.0


class _BatchMoments:
    r"""Streaming mean, covariance and (for Ledoit–Wolf) :math:`\sum_k\|x_k-\mu\|^4`.

    Mean and covariance come from :class:`~isoeat.calibration.moments.CovarianceAccumulator`
    (Chan et al. pairwise updates). The fourth-moment sum is accumulated on
    vectors shifted by the first batch's mean, :math:`y = x - m_0`, as
    :math:`q = \sum\|y\|^4` and :math:`v = \sum\|y\|^2 y`, and centred at the end:
    with :math:`\nu = \mu - m_0`, :math:`c = \|\nu\|^2` and :math:`T = \sum yy^\top`,
    :math:`\sum\|y-\nu\|^4 = q - 4v\cdot\nu + 4\nu^\top T\nu + 2c\,\mathrm{tr}T - 3nc^2`.
    """

    def __init__(self, fourth: bool = False) -> None:  # mutation: equivalent[const] (its one caller passes fourth)
        from .moments import CovarianceAccumulator

        self.acc = CovarianceAccumulator()
        self.fourth = fourth
        self.shift: np.ndarray | None = None
        self.q = 0.0
        self.v: np.ndarray | None = None

    def update(self, batch: Any) -> None:
        X = np.asarray(batch, dtype=np.float64)
        if X.ndim == 1:
            X = X[None, :]
        if X.ndim != 2 or X.shape[0] == 0:
            if X.ndim != 2:
                raise DataFormatError(f"batch must be a 2-D array (rows, dim), got shape {X.shape}")
            return
        self.acc.update(X)
        if self.fourth:
            if self.shift is None:
                self.shift = X.mean(axis=0)
                self.v = np.zeros(X.shape[1])
            Y = X - self.shift
            sq = np.einsum("ij,ij->i", Y, Y)
            self.q += float(np.sum(sq * sq))
            self.v += sq @ Y

    def centred_fourth(self) -> float:
        n, mean, comoment = self.acc.moments()
        assert self.shift is not None  # set with the first row, as the moments are
        nu = mean - self.shift
        c = float(nu @ nu)
        T = comoment + n * np.outer(nu, nu)
        return float(self.q - 4.0 * (self.v @ nu) + 4.0 * (nu @ T @ nu) + 2.0 * c * np.trace(T) - 3.0 * n * c * c)


def _batch_moments(batches: Any, fourth: bool = False, min_n: int = 2) -> _BatchMoments:
    bm = _BatchMoments(fourth)
    for b in batches:
        bm.update(b)
    if bm.acc.n < min_n:
        raise DataFormatError(f"reference batches: need at least {min_n} vectors, got {bm.acc.n}")
    return bm


def _eigh_desc(cov: np.ndarray, fix_signs: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending, round-off clipped to 0) and eigenvectors (sign fixed unless ``fix_signs=False``)."""
    evals, evecs = np.linalg.eigh(cov)
    order = np.argsort(evals)[::-1]
    evals = np.clip(evals[order], 0.0, None)
    evecs = evecs[:, order]
    if not fix_signs:
        return evals, evecs
    pivot = np.argmax(np.abs(evecs), axis=0)
    signs = np.sign(evecs[pivot, np.arange(evecs.shape[1])])  # mutation: equivalent[const 1 -> 0] (square)
    signs[signs == 0] = 1.0  # mutation: equivalent[const] (a unit eigenvector's largest entry is never 0)
    return evals, evecs * signs  # mutation: equivalent[arith] (signs are +-1: x / s == x * s)


#: Largest condition number :math:`(\lambda_{max}+\varepsilon)/(\lambda_{min}+\varepsilon)` of the regularised
#: reference covariance a whitener is fitted at (4.5e11): float64 rounding of the largest eigenvalue (machine
#: epsilon 2.2e-16 times it) then stays within 1e-4 of the smallest, so every direction is whitened to about
#: 1e-4 or better (measured on one extreme reference row: a calibrated d off by 3e-6 at a condition number
#: of 1e11, by 3e-3 at 1e15; tests/robustness/test_bad_input_r4_a.py).
CONDITION_MAX = 1e-4 / float(np.finfo(np.float64).eps)


def check_condition(evals: np.ndarray, eps: float, cls: str) -> None:
    """Refuse a regularised covariance whose smallest directions are lost to float64 rounding (one line).

    ``evals``: eigenvalues, descending, clipped at 0; ``eps``: the ε added. The error carries
    ``ill_conditioned = True`` so that a fit holding the rows can name the row behind it
    (:func:`dominant_row`).

    >>> check_condition(np.array([4.5e7, 1.0]), 1e-3, "zca")  # condition number 4.5e7: fine
    """
    top, low = float(evals[0]) + eps, max(float(evals[-1]), 0.0) + eps
    if low > 0 and top <= CONDITION_MAX * low:
        return
    kappa = f"{top / low:.3g}" if low > 0 else "infinite"
    exc = DataFormatError(
        f"{cls}: the reference covariance (largest eigenvalue {float(evals[0]):.3g}, smallest + eps "
        f"{low:.3g}) has condition number {kappa}, over {CONDITION_MAX:.3g}: float64 rounding of the largest "
        "direction swamps the smallest, so the calibrated vectors (and every d on them) would be wrong")
    exc.ill_conditioned = True  # type: ignore[attr-defined]
    raise exc


def dominant_row(X: np.ndarray, mean: np.ndarray) -> str:
    """The row of ``X`` farthest from ``mean``, said when it holds most of the spread (else a hint on eps)."""
    spread = np.einsum("ij,ij->i", X - mean, X - mean)
    i = int(np.argmax(spread))
    if spread[i] < 0.5 * float(np.sum(spread)):
        return "; no single reference vector causes it: give a larger eps (or eps_mode='relative')"
    centre = np.median(X, axis=0)  # robust: the mean has moved towards the row
    dist = np.sqrt(np.einsum("ij,ij->i", X - centre, X - centre))
    typical = float(np.median(dist))
    times = f", {dist[i] / typical:.3g} times the median row's" if typical > 0 else ""
    return (f"; reference row {i + 1} causes it (distance {dist[i]:.3g} from the median vector{times}): remove "
            "or fix that vector")


def refit_naming_row(fit: Callable[[], Any], X: np.ndarray, mean: np.ndarray) -> Any:
    """``fit()``, with the row behind an ill-conditioned covariance named (:func:`check_condition`)."""
    try:
        return fit()
    except DataFormatError as exc:
        if not getattr(exc, "ill_conditioned", False):
            raise
        named = DataFormatError(f"{exc}{dominant_row(X, mean)}")
        named.ill_conditioned = True  # type: ignore[attr-defined]
        raise named from None


def _warn_singular(n: int, d: int, eps: float, cls: str) -> None:
    """Warn when ``n <= d`` (singular covariance); refuse ``eps=0`` then."""
    if n <= d:
        warnings.warn(
            f"{cls}: only {n} reference vectors for dimension {d}: the covariance is singular "
            f"and eps={eps:g} carries the fit of the missing directions",
            IsoeatWarning,
            stacklevel=4,
        )
        if eps == 0:
            raise ConfigError(f"{cls}: eps=0 with fewer reference vectors than dimensions: the covariance is singular")


class _Calibrator:
    """Shared plumbing: parameters, fitted-state and dimension checks, refit reset, repr.

    A subclass declares ``name``, ``_params`` (constructor parameters),
    ``_validators`` (parameter -> validating function, used by
    :meth:`validate_params`, :meth:`set_params` and ``fit``) and
    ``_state_arrays`` (the fitted arrays that are saved and hashed).
    """

    name = ""
    _params: tuple[str, ...] = ()
    _validators: dict[str, Callable[[Any], Any]] = {}
    _state_arrays: tuple[str, ...] = ()
    # set on an instance, never on the class: by fit where there is an eps parameter, by load_calibrator
    eps_: float
    _source_path: str

    def get_params(self, deep: bool = True) -> dict[str, Any]:  # mutation: equivalent[const] (deep is unused)
        return {k: getattr(self, k) for k in self._params}

    @classmethod
    def validate_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        """Check constructor parameters (names and values) before anything is fitted; return them validated.

        Raises
        ------
        ConfigError
            An unknown parameter, or a value of the wrong type or range (``eps=True``,
            ``eps="abc"``, ``eps=nan``); the one-line message names the parameter.
        """
        out = {}
        for k, v in params.items():
            if k not in cls._params:
                raise ConfigError(
                    f"{cls.__name__} has no parameter {k!r} (parameters: {', '.join(cls._params) or 'none'})"
                )
            check = cls._validators.get(k)
            out[k] = check(v) if check is not None else v
        return out

    def set_params(self, **params: Any) -> _Calibrator:
        self.validate_params(params)
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get_params().items())})"

    def _reset(self) -> None:
        """Forget every fitted attribute (all names ending in ``_``, ``metadata_`` included) before a fresh fit."""
        for k in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            delattr(self, k)
        self.__dict__.pop("_accumulator", None)
        self.__dict__.pop("_unfitted_because", None)

    def _finish_fit(self, n: int, d: int) -> None:
        self.n_samples_seen_ = int(n)
        self.n_features_in_ = int(d)
        if not hasattr(self, "metadata_"):
            self.metadata_: dict[str, Any] = {}

    def _check(self, X: Any, what: str) -> np.ndarray:
        if not all(hasattr(self, k) for k in self._state_arrays) or not hasattr(self, "n_features_in_"):
            why = getattr(self, "_unfitted_because", None)
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: "
                                 + (why if why else "call fit(reference_vectors) first"))
        X = _as_matrix(X, what)
        if X.shape[1] != self.n_features_in_:
            raise DimensionMismatchError(
                f"{what} have dimension {X.shape[1]}, but the {self.name} calibrator was fitted on dimension "
                f"{self.n_features_in_}"
            )
        return X

    def _check_shapes(self, **shapes: tuple[int, ...]) -> None:
        for k, shape in shapes.items():
            a = np.asarray(getattr(self, k))
            if a.shape != shape:
                raise DataFormatError(f"{k} has shape {a.shape}, expected {shape} for dimension {self.n_features_in_}")

    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray:
        return self.fit(X).transform(X)  # type: ignore[attr-defined]


class _Whitener(_Calibrator):
    r"""A calibrator :math:`z = (x-\mu)\,W` whose :math:`W` comes from the eigendecomposition :math:`U, \Lambda`.

    Parameters ``eps`` (added to the eigenvalues) and ``eps_mode`` (``"absolute"``:
    ε = eps; ``"relative"``: ε = eps · mean(λ), :func:`effective_eps`); fitted state: ``mean_``,
    ``covariance_``, ``eigenvalues_``, ``eigenvectors_``, ``whitening_`` (saved)
    and ``eps_`` (the absolute ε used). ``inverse_transform`` assumes the zero-phase (symmetric)
    :math:`W = U(\Lambda+\varepsilon)^{-1/2}U^\top`; PCA whitening overrides it.
    """

    _params: tuple[str, ...] = ("eps", "eps_mode")
    _validators = {"eps": _check_eps, "eps_mode": _check_eps_mode}
    _state_arrays: tuple[str, ...] = ("mean_", "covariance_", "eigenvalues_", "eigenvectors_", "whitening_")

    def __init__(self, eps: float = 1e-3, eps_mode: str = "absolute") -> None:
        self.eps = eps
        self.eps_mode = eps_mode

    def _eps_for(self, eigenvalues: np.ndarray) -> float:
        """The absolute ε of this fit (``eps_mode`` read here: ``_params`` of subclasses may omit it)."""
        return effective_eps(self.eps, getattr(self, "eps_mode", "absolute"), eigenvalues)

    def transform(self, X: Any) -> np.ndarray:
        r""":math:`z = W(x-\mu)` for each row ``x`` of ``X``."""
        X = self._check(X, "vectors")
        return (X - self.mean_) @ self.whitening_  # type: ignore[attr-defined]  # W is symmetric

    def inverse_transform(self, Z: Any) -> np.ndarray:
        r""":math:`x = W^{-1}z + \mu` with :math:`W^{-1} = U(\Lambda+\varepsilon I)^{1/2}U^\top`."""
        Z = self._check(Z, "whitened vectors")
        U = self.eigenvectors_  # type: ignore[attr-defined]
        unwhiten = (U * np.sqrt(self.eigenvalues_ + self.eps_)) @ U.T  # type: ignore[attr-defined]
        return Z @ unwhiten + self.mean_  # type: ignore[attr-defined]

    def _check_whitening(self, expect: np.ndarray) -> None:
        """After loading: the stored ``whitening_`` must equal ``expect``, rebuilt from U, Λ and ε."""
        scale = max(1.0, float(np.abs(expect).max()))
        if not np.allclose(expect, self.whitening_, rtol=1e-8, atol=1e-10 * scale):  # type: ignore[attr-defined]
            raise DataFormatError("whitening matrix is inconsistent with its eigendecomposition (tampered?)")


class _MomentCalibrator(_Calibrator):
    """A calibrator fitted from the reference mean and covariance (:math:`n-1`) alone.

    Subclasses implement ``_fit_moments(mean, cov, n)``; ``_check_dim(d)``
    may refuse a dimension before any moment is computed.
    """

    def _check_dim(self, d: int) -> None:
        """Hook: validate parameters against the dimension ``d`` (nothing by default)."""

    def check_dimension(self, d: int) -> None:
        """Refuse, before any reference vector is read, parameters that cannot fit vectors of dimension ``d``
        (``abtt``'s ``n_components`` must be below it): a one-line ``ConfigError``, as ``fit`` would raise."""
        self._check_dim(int(d))

    def fit(self, X: Any, y: Any = None) -> Any:
        """Fit on the reference vectors ``X`` (rows); forgets any earlier fit."""
        self._reset()
        X = _as_matrix(X, "reference vectors")
        self._check_dim(X.shape[1])
        mean, _, cov = _moments(X)
        return refit_naming_row(lambda: self._fit_moments(mean, cov, X.shape[0]), X, mean)  # type: ignore[attr-defined]

    def fit_batches(self, batches: Any) -> Any:
        """Fit from an iterable of batches without materialising the n×d matrix; forgets any earlier fit."""
        self._reset()
        bm = _batch_moments(batches)
        return self._fit_moments(bm.acc.moments()[1].copy(), bm.acc.covariance(), bm.acc.n)  # type: ignore[attr-defined]
