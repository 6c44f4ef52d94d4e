"""ZCA whitening (paper §3.2, eq. 7–11) under the scikit-learn estimator contract."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import ConfigError, DataFormatError, NotFittedError
from ._base import (
    _as_matrix,
    _check_eps,
    _check_eps_mode,
    _eigh_desc,
    _moments,
    _warn_singular,
    _Whitener,
    check_condition,
    refit_naming_row,
)

__all__ = ["ZCAWhitener"]


class ZCAWhitener(_Whitener):
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
    eps_mode : {"absolute", "relative"}, default "absolute"
        ``"relative"``: the ε added is ``eps`` times the mean eigenvalue of the
        reference covariance (``eps_`` holds the absolute value used).

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
        by :func:`isoeat.calibration.fit_calibrator` and saved with the calibrator.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)) @ np.diag([5.0, 1.0, 0.2])
    >>> Z = ZCAWhitener(eps=0).fit_transform(X)
    >>> np.allclose(np.cov(Z, rowvar=False), np.eye(3))
    True
    """

    name = "zca"
    # parameters (eps, eps_mode), their validation, __init__ and the fitted arrays: those of _Whitener

    def _validate_eps(self) -> float:
        _check_eps_mode(getattr(self, "eps_mode", "absolute"))
        return _check_eps(self.eps)

    def fit(self, X: Any, y: Any = None) -> ZCAWhitener:
        """Estimate mean, covariance (n−1) and the whitening matrix from ``X``; forgets any earlier fit."""
        eps = self._validate_eps()
        self._reset()
        X = _as_matrix(X, "reference vectors")
        mean, _, cov = _moments(X)
        return refit_naming_row(lambda: self._set_from_moments(mean, cov, X.shape[0], eps), X, mean)

    def partial_fit(self, X: Any, y: Any = None) -> ZCAWhitener:
        """Add a batch of reference vectors and refit from the running statistics.

        The statistics are a :class:`~isoeat.calibration.moments.CovarianceAccumulator`
        (Chan, Golub & LeVeque pairwise update), so fitting batch by batch gives
        the same whitener as :meth:`fit` on all rows at once, with memory
        :math:`O(d^2)` whatever the number of rows. The first ``partial_fit``
        after construction or after :meth:`fit` starts afresh (every fitted
        attribute, ``metadata_`` included, is forgotten); later calls add to it.
        """
        from .moments import CovarianceAccumulator

        eps = self._validate_eps()
        acc = getattr(self, "_accumulator", None)
        if acc is None:
            self._reset()
            acc = self._accumulator = CovarianceAccumulator()
        acc.update(X)
        if acc.n < 2:
            return self
        self._streaming = True  # no few-samples warning for intermediate batches
        try:
            return self._set_from_moments(acc.moments()[1].copy(), acc.covariance(), acc.n, max(eps, 0.0))
        finally:
            self._streaming = False

    @classmethod
    def from_statistics(cls, statistics: Any, eps: float = 1e-3, eps_mode: str = "absolute") -> ZCAWhitener:
        """A fitted whitener from merged statistics (a ``CovarianceAccumulator``)."""
        w = cls(eps=eps, eps_mode=eps_mode)
        eps = w._validate_eps()
        if statistics.n < 2:
            raise DataFormatError(f"need at least 2 reference vectors, the statistics hold {statistics.n}")
        w._accumulator = statistics
        return w._set_from_moments(statistics.mean.copy(), statistics.covariance(), statistics.n, eps)

    def fit_batches(self, batches: Any) -> ZCAWhitener:
        """Fit from an iterable of batches without materialising the n×d matrix; forgets any earlier fit."""
        from .moments import CovarianceAccumulator

        eps = self._validate_eps()
        self._reset()
        acc = CovarianceAccumulator.from_batches(batches)
        if acc.n < 2:
            raise DataFormatError(f"reference batches: need at least 2 vectors, got {acc.n}")
        self._accumulator = acc
        return self._set_from_moments(acc.moments()[1].copy(), acc.covariance(), acc.n, eps)

    def _set_from_moments(self, mean: np.ndarray, cov: np.ndarray, n: int, eps: float) -> ZCAWhitener:
        d = cov.shape[0]  # mutation: equivalent[const 0 -> 1] (cov is square)
        streaming = getattr(self, "_streaming", False)
        if not streaming:
            _warn_singular(n, d, eps, "zca")
        cov = (cov + cov.T) / 2.0
        evals, evecs = _eigh_desc(cov, fix_signs=False)
        eps = self._eps_for(evals) if eps > 0 else eps
        try:
            if eps == 0 and evals.min() <= 0:
                raise ConfigError("zca: eps=0 but the covariance has a zero eigenvalue; use eps > 0")
            check_condition(evals, eps, "zca")
        except (ConfigError, DataFormatError) as exc:
            if not (streaming and eps == 0):
                raise
            return self._unfitted(exc)  # an early partial_fit with eps=0 may be singular: later batches may fix it
        self.__dict__.pop("_unfitted_because", None)
        scale = 1.0 / np.sqrt(evals + eps)
        self.mean_ = mean
        self.covariance_ = cov
        self.eigenvalues_ = evals
        self.eigenvectors_ = evecs
        self.whitening_ = (evecs * scale) @ evecs.T
        self.eps_ = eps
        self._finish_fit(n, d)
        return self

    def _unfitted(self, exc: Exception) -> ZCAWhitener:
        """Drop the fitted arrays (the statistics stay), saying why when it is used: a streamed eps=0 fit."""
        for k in self._state_arrays:
            self.__dict__.pop(k, None)
        self._unfitted_because = f"{exc} (after {self._accumulator.n} streamed reference vectors)"
        return self

    def _check_state(self) -> None:
        """After loading: W must equal U (Λ+ε)^(-1/2) U^T for the stored U, Λ, ε."""
        d = self.n_features_in_
        self._check_shapes(mean_=(d,), eigenvalues_=(d,), covariance_=(d, d), eigenvectors_=(d, d),
                           whitening_=(d, d))
        self._check_whitening((self.eigenvectors_ / np.sqrt(self.eigenvalues_ + self.eps_)) @ self.eigenvectors_.T)

    def whitened_covariance(self) -> np.ndarray:
        """Covariance of the whitened reference vectors, :math:`U\\Lambda(\\Lambda+\\varepsilon)^{-1}U^\\top`."""
        if not hasattr(self, "whitening_"):
            raise NotFittedError("this ZCAWhitener is not fitted yet")
        shrink = self.eigenvalues_ / (self.eigenvalues_ + self.eps_)
        return (self.eigenvectors_ * shrink) @ self.eigenvectors_.T
