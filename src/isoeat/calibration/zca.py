"""ZCA whitening (paper §3.2, eq. 7–11) under the scikit-learn estimator contract."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._errors import ConfigError, DataFormatError, DimensionMismatchError, IsoeatWarning, NotFittedError
from .._validate import check_real

__all__ = ["ZCAWhitener"]


def _as_matrix(X: Any, what: str) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[None, :]
    if X.ndim != 2:
        raise DataFormatError(f"{what}: expected a 2-D array (n_samples, dim), got shape {X.shape}")
    if not np.isfinite(X).all():
        raise DataFormatError(f"{what}: contains NaN or inf values")
    return X


class ZCAWhitener:
    r"""Zero-phase component analysis whitening.

    Fitted on reference vectors :math:`x_1..x_n \in \mathbb{R}^d`:

    .. math::

        \mu = \frac{1}{n}\sum_i x_i,\qquad
        \Sigma = \frac{1}{n-1}\sum_i (x_i-\mu)(x_i-\mu)^\top = U\Lambda U^\top

        W = U(\Lambda+\varepsilon I)^{-1/2}U^\top,\qquad z = W(x-\mu)

    (paper eq. 7–11; Kessy, Lewin & Strimmer 2018). Among whitening matrices
    ZCA is the one closest to the identity, so it moves vectors least. With
    :math:`\varepsilon>0` the whitened reference covariance is
    :math:`U\,\Lambda(\Lambda+\varepsilon I)^{-1}U^\top` rather than exactly
    :math:`I`.

    Parameters
    ----------
    eps : float, default 1e-3
        Added to every eigenvalue before the inverse square root (paper eq. 11).

    Attributes
    ----------
    mean_ : ndarray of shape (dim,)
    covariance_ : ndarray of shape (dim, dim)
    eigenvalues_ : ndarray of shape (dim,)
        Eigenvalues of the covariance, descending (negative round-off clipped to 0).
    eigenvectors_ : ndarray of shape (dim, dim)
        Columns are the eigenvectors, in the order of ``eigenvalues_``.
    whitening_ : ndarray of shape (dim, dim)
        :math:`W` (symmetric).
    n_samples_seen_ : int
    n_features_in_ : int
    metadata_ : dict
        Free-form provenance (model fingerprint, reference description), set
        by :func:`isoeat.calibration.fit_whitener` and saved with the whitener.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)) @ np.diag([5.0, 1.0, 0.2])
    >>> Z = ZCAWhitener(eps=0).fit_transform(X)
    >>> np.allclose(np.cov(Z, rowvar=False), np.eye(3))
    True
    """

    name = "zca"
    _state_arrays = ("mean_", "covariance_", "eigenvalues_", "eigenvectors_", "whitening_")

    def __init__(self, eps: float = 1e-3) -> None:
        self.eps = eps

    # scikit-learn style parameter access
    def get_params(self, deep: bool = True) -> dict[str, Any]:  # mutation: equivalent[const] (deep is unused)
        return {"eps": self.eps}

    def set_params(self, **params: Any) -> "ZCAWhitener":
        for k, v in params.items():
            if k != "eps":
                raise ConfigError(f"ZCAWhitener has no parameter {k!r} (parameters: eps)")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        return f"ZCAWhitener(eps={self.eps!r})"

    def _validate_eps(self) -> float:
        return check_real("eps", self.eps, lo=0)

    def fit(self, X: Any, y: Any = None) -> "ZCAWhitener":
        """Estimate mean, covariance (n−1) and the whitening matrix from ``X``."""
        eps = self._validate_eps()
        X = _as_matrix(X, "reference vectors")
        n, d = X.shape
        if n < 2:
            raise DataFormatError(f"reference vectors: need at least 2 samples to estimate a covariance, got {n}")
        mean = X.mean(axis=0)
        Xc = X - mean
        cov = (Xc.T @ Xc) / (n - 1)
        self._accumulator = None
        return self._set_from_moments(mean, cov, n, eps)

    def partial_fit(self, X: Any, y: Any = None) -> "ZCAWhitener":
        """Add a batch of reference vectors and refit from the running statistics.

        The statistics are a :class:`~isoeat.calibration.moments.CovarianceAccumulator`
        (Chan, Golub & LeVeque pairwise update), so fitting batch by batch gives
        the same whitener as :meth:`fit` on all rows at once, with memory
        :math:`O(d^2)` whatever the number of rows.
        """
        from .moments import CovarianceAccumulator

        eps = self._validate_eps()
        acc = getattr(self, "_accumulator", None)
        if acc is None:
            acc = self._accumulator = CovarianceAccumulator()
        acc.update(X)
        if acc.n < 2:
            return self
        self._streaming = True  # no few-samples warning for intermediate batches
        try:
            return self._set_from_moments(acc.mean.copy(), acc.covariance(), acc.n, max(eps, 0.0))
        finally:
            self._streaming = False

    @classmethod
    def from_statistics(cls, statistics: Any, eps: float = 1e-3) -> "ZCAWhitener":
        """A fitted whitener from merged statistics (a ``CovarianceAccumulator``)."""
        w = cls(eps=eps)
        eps = w._validate_eps()
        if statistics.n < 2:
            raise DataFormatError(f"need at least 2 reference vectors, the statistics hold {statistics.n}")
        w._accumulator = statistics
        return w._set_from_moments(statistics.mean.copy(), statistics.covariance(), statistics.n, eps)

    def fit_batches(self, batches: Any) -> "ZCAWhitener":
        """Fit from an iterable of batches without materialising the n×d matrix."""
        from .moments import CovarianceAccumulator

        self._accumulator = None
        acc = CovarianceAccumulator.from_batches(batches)
        if acc.n < 2:
            raise DataFormatError(f"reference batches: need at least 2 vectors, got {acc.n}")
        self._accumulator = acc
        return self._set_from_moments(acc.mean.copy(), acc.covariance(), acc.n, self._validate_eps())

    def _set_from_moments(self, mean: np.ndarray, cov: np.ndarray, n: int, eps: float) -> "ZCAWhitener":
        d = cov.shape[0]  # mutation: equivalent[const 0 -> 1] (cov is square)
        if n <= d and not getattr(self, "_streaming", False):
            warnings.warn(
                f"only {n} reference vectors for dimension {d}: the covariance is singular "
                f"and eps={eps:g} carries the fit of the missing directions",
                IsoeatWarning,
                stacklevel=3,
            )
        if eps == 0 and n <= d and not getattr(self, "_streaming", False):
            raise ConfigError("eps=0 with fewer reference vectors than dimensions: the covariance is singular")
        cov = (cov + cov.T) / 2.0
        evals, evecs = np.linalg.eigh(cov)
        order = np.argsort(evals)[::-1]
        evals = np.clip(evals[order], 0.0, None)
        evecs = evecs[:, order]
        if eps == 0 and evals.min() <= 0 and not getattr(self, "_streaming", False):
            raise ConfigError("eps=0 but the covariance has a zero eigenvalue; use eps > 0")
        scale = 1.0 / np.sqrt(evals + eps)
        self.mean_ = mean
        self.covariance_ = cov
        self.eigenvalues_ = evals
        self.eigenvectors_ = evecs
        self.whitening_ = (evecs * scale) @ evecs.T
        self.n_samples_seen_ = int(n)
        self.n_features_in_ = int(d)
        self.eps_ = eps
        if not hasattr(self, "metadata_"):
            self.metadata_: dict[str, Any] = {}
        return self

    def _check(self, X: Any, what: str) -> np.ndarray:
        if not hasattr(self, "whitening_"):
            raise NotFittedError("this ZCAWhitener is not fitted yet: call fit(reference_vectors) first")
        X = _as_matrix(X, what)
        if X.shape[1] != self.n_features_in_:
            raise DimensionMismatchError(
                f"{what} have dimension {X.shape[1]}, but the whitener was fitted on dimension "
                f"{self.n_features_in_}"
            )
        return X

    def transform(self, X: Any) -> np.ndarray:
        """:math:`z = W(x-\\mu)` for each row ``x`` of ``X``."""
        X = self._check(X, "vectors")
        return (X - self.mean_) @ self.whitening_  # W is symmetric

    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray:
        return self.fit(X).transform(X)

    def inverse_transform(self, Z: Any) -> np.ndarray:
        """:math:`x = W^{-1}z + \\mu` with :math:`W^{-1} = U(\\Lambda+\\varepsilon I)^{1/2}U^\\top`."""
        Z = self._check(Z, "whitened vectors")
        unwhiten = (self.eigenvectors_ * np.sqrt(self.eigenvalues_ + self.eps_)) @ self.eigenvectors_.T
        return Z @ unwhiten + self.mean_

    def _check_state(self) -> None:
        """After loading: W must equal U (Λ+ε)^(-1/2) U^T for the stored U, Λ, ε."""
        d = self.n_features_in_
        if not (self.mean_.shape == (d,) and self.eigenvalues_.shape == (d,)
                and all(a.shape == (d, d) for a in (self.covariance_, self.eigenvectors_, self.whitening_))):
            raise DataFormatError(f"array shapes do not match the recorded dimension {d}")
        expect = (self.eigenvectors_ / np.sqrt(self.eigenvalues_ + self.eps_)) @ self.eigenvectors_.T
        scale = max(1.0, float(np.abs(expect).max()))
        if not np.allclose(expect, self.whitening_, rtol=1e-8, atol=1e-10 * scale):
            raise DataFormatError("whitening matrix is inconsistent with its eigendecomposition (tampered?)")

    def whitened_covariance(self) -> np.ndarray:
        """Covariance of the whitened reference vectors, :math:`U\\Lambda(\\Lambda+\\varepsilon)^{-1}U^\\top`."""
        if not hasattr(self, "whitening_"):
            raise NotFittedError("this ZCAWhitener is not fitted yet")
        shrink = self.eigenvalues_ / (self.eigenvalues_ + self.eps_)
        return (self.eigenvectors_ * shrink) @ self.eigenvectors_.T
