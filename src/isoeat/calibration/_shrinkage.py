r"""Shrinkage ZCA: ZCA whitening of a Ledoit–Wolf shrunk covariance (``zca-shrinkage``).

Part of :mod:`isoeat.calibration.alternatives`, which re-exports and registers it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import ConfigError, DataFormatError
from ._base import (
    _as_matrix,
    _batch_moments,
    _check_eps,
    _check_eps_mode,
    _check_shrinkage,
    _eigh_desc,
    _moments,
    _warn_singular,
    _Whitener,
    check_condition,
    refit_naming_row,
)

__all__ = ["ShrinkageZCAWhitener", "ledoit_wolf_shrinkage"]


def ledoit_wolf_shrinkage(Xc: np.ndarray) -> float:
    r"""Ledoit & Wolf (2004) optimal shrinkage intensity toward :math:`\bar\lambda I`.

    For centred data :math:`x_1..x_n \in\mathbb{R}^d`, :math:`S = \frac1n\sum_k x_kx_k^\top`,
    :math:`\bar\lambda = \operatorname{tr}S/d` and :math:`\|A\|^2 = \operatorname{tr}(AA^\top)/d`:

    .. math::

        \delta^2 = \|S-\bar\lambda I\|^2,\quad
        \bar\beta^2 = \frac{1}{n^2}\sum_k \|x_kx_k^\top - S\|^2
                    = \frac{1}{n^2 d}\Big(\sum_k\|x_k\|^4 - n\,\|S\|_F^2\Big),\quad
        \rho = \frac{\min(\bar\beta^2, \delta^2)}{\delta^2}

    (Ledoit & Wolf 2004, Lemma 3.2–3.4 and Theorem 3.2; the same estimator as
    ``sklearn.covariance.ledoit_wolf_shrinkage``). Returns 0 when :math:`\delta^2 = 0`.
    """
    n, d = Xc.shape
    sq = np.einsum("ij,ij->i", Xc, Xc)
    return _lw_from_moments((Xc.T @ Xc) / n, n, float(np.sum(sq * sq)))


def _lw_from_moments(S: np.ndarray, n: int, fourth: float) -> float:
    r"""Ledoit–Wolf intensity from the 1/n covariance ``S`` and :math:`\sum_k\|x_k-\mu\|^4`."""
    d = S.shape[0]  # mutation: equivalent[const 0 -> 1] (S is square)
    mu = float(np.trace(S)) / d
    ss = float(np.sum(S * S))
    delta2 = (ss - 2.0 * mu * float(np.trace(S)) + d * mu * mu) / d
    beta2 = (fourth - n * ss) / (n * n * d)
    beta2 = min(max(beta2, 0.0), delta2)
    return 0.0 if delta2 <= 0 else beta2 / delta2


class ShrinkageZCAWhitener(_Whitener):
    r"""ZCA whitening of a Ledoit–Wolf shrunk covariance.

    .. math::

        \Sigma_\rho = (1-\rho)\,\Sigma + \rho\,\bar\lambda I,\qquad
        \bar\lambda = \operatorname{tr}\Sigma/d,\qquad
        W = \Sigma_\rho^{\,\prime\,-1/2} = U\big((1-\rho)\Lambda+\rho\bar\lambda+\varepsilon\big)^{-1/2}U^\top,
        \qquad z = W(x-\mu)

    Shrinking toward the scaled identity keeps the eigenvectors of
    :math:`\Sigma` and pulls its eigenvalues toward their mean, so small
    reference samples give a better-conditioned whitening. With
    ``shrinkage=None`` :math:`\rho` is the analytic optimum of Ledoit & Wolf
    (2004) (:func:`ledoit_wolf_shrinkage`, computed on the :math:`1/n`
    covariance as in their paper; it is then applied to the :math:`n-1`
    covariance used by ZCA, so that :math:`\rho = 0` is exactly plain ZCA).
    :math:`\rho\to 0` gives :class:`~isoeat.ZCAWhitener`; :math:`\rho = 1`
    gives centring and a uniform rescaling (cosines as after ``center``).

    Reference: O. Ledoit, M. Wolf (2004), "A well-conditioned estimator for
    large-dimensional covariance matrices", *Journal of Multivariate
    Analysis* 88(2):365–411.

    Parameters
    ----------
    eps : float, default 1e-3
        Added to the shrunk eigenvalues before the inverse square root.
    shrinkage : float in [0, 1] or None, default None
        Fixed :math:`\rho`; ``None`` uses the Ledoit–Wolf optimum.
    eps_mode : {"absolute", "relative"}, default "absolute"
        ``"relative"``: ε is ``eps`` times the mean eigenvalue :math:`\bar\lambda`.

    Attributes
    ----------
    mean_, covariance_ : ndarray
        Reference mean and (unshrunk, :math:`n-1`) covariance.
    shrinkage_ : float
        :math:`\rho` used.
    eigenvalues_ : ndarray of shape (dim,)
        Eigenvalues of the shrunk covariance, descending.
    eigenvectors_, whitening_ : ndarray of shape (dim, dim)
    """

    name = "zca-shrinkage"
    _params = ("eps", "shrinkage", "eps_mode")
    _validators = {"eps": _check_eps, "shrinkage": _check_shrinkage, "eps_mode": _check_eps_mode}
    _state_arrays = ("mean_", "covariance_", "shrinkage_", "eigenvalues_", "eigenvectors_", "whitening_")

    def __init__(self, eps: float = 1e-3, shrinkage: float | None = None, eps_mode: str = "absolute") -> None:
        self.eps = eps
        self.shrinkage = shrinkage
        self.eps_mode = eps_mode

    def _validate_shrinkage(self) -> float | None:
        return _check_shrinkage(self.shrinkage)

    def fit(self, X: Any, y: Any = None) -> ShrinkageZCAWhitener:
        """Fit on the reference vectors ``X`` (rows); forgets any earlier fit."""
        _check_eps(self.eps)
        fixed = self._validate_shrinkage()
        self._reset()
        X = _as_matrix(X, "reference vectors")
        mean, Xc, cov = _moments(X)
        rho = ledoit_wolf_shrinkage(Xc) if fixed is None else fixed
        return refit_naming_row(lambda: self._fit_moments(mean, cov, X.shape[0], rho), X, mean)

    def fit_batches(self, batches: Any) -> ShrinkageZCAWhitener:
        """Fit from an iterable of batches without materialising the n×d matrix (one pass); forgets any earlier fit."""
        _check_eps(self.eps)
        fixed = self._validate_shrinkage()
        self._reset()
        bm = _batch_moments(batches, fourth=fixed is None)
        n, mean, comoment = bm.acc.moments()
        rho = None if fixed is not None else _lw_from_moments(comoment / n, n, bm.centred_fourth())
        return self._fit_moments(mean.copy(), bm.acc.covariance(), n, rho)

    def _fit_moments(self, mean: np.ndarray, cov: np.ndarray, n: int, rho: float | None) -> ShrinkageZCAWhitener:
        eps = _check_eps(self.eps)
        fixed = self._validate_shrinkage()
        rho = fixed if fixed is not None else float(rho)  # type: ignore[arg-type]  # callers pass rho unless fixed
        d = cov.shape[0]  # mutation: equivalent[const 0 -> 1] (cov is square)
        cov = (cov + cov.T) / 2.0
        if rho == 0:
            _warn_singular(n, d, eps, "zca-shrinkage")
        evals, evecs = _eigh_desc(cov)
        shrunk = (1.0 - rho) * evals + rho * float(np.trace(cov)) / d
        eps = self._eps_for(evals)  # relative: to the mean eigenvalue of the covariance (the shrunk one's too)
        if eps == 0 and shrunk.min() <= 0:
            raise ConfigError("zca-shrinkage: eps=0 but the shrunk covariance has a zero eigenvalue; use eps > 0")
        check_condition(shrunk, eps, "zca-shrinkage")  # shrunk is descending, as evals (1 - rho >= 0)
        self.mean_, self.covariance_ = mean, cov
        self.shrinkage_ = float(rho)
        self.eigenvalues_, self.eigenvectors_ = shrunk, evecs
        self.whitening_ = (evecs / np.sqrt(shrunk + eps)) @ evecs.T
        self.eps_ = eps
        self._finish_fit(n, d)
        return self

    @property
    def shrunk_covariance_(self) -> np.ndarray:
        """:math:`(1-\\rho)\\Sigma + \\rho\\bar\\lambda I`."""
        d = self.covariance_.shape[0]  # mutation: equivalent[const 0 -> 1] (square once fitted or loaded)
        return (1.0 - self.shrinkage_) * self.covariance_ + self.shrinkage_ * np.trace(self.covariance_) / d * np.eye(d)

    def _check_state(self) -> None:
        d = self.n_features_in_
        self.shrinkage_ = float(np.asarray(self.shrinkage_))
        self._check_shapes(mean_=(d,), eigenvalues_=(d,), covariance_=(d, d), eigenvectors_=(d, d),
                           whitening_=(d, d))
        if not 0.0 <= self.shrinkage_ <= 1.0:
            raise DataFormatError(f"shrinkage_ {self.shrinkage_} outside [0, 1]")
        U, lam = self.eigenvectors_, self.eigenvalues_
        target = self.shrunk_covariance_
        if not np.allclose((U * lam) @ U.T, target, rtol=1e-7, atol=1e-9 * max(1.0, float(np.abs(target).max()))):
            raise DataFormatError("eigendecomposition is inconsistent with the shrunk covariance (tampered?)")
        self._check_whitening((U / np.sqrt(lam + self.eps_)) @ U.T)
