r"""Alternative calibrations to ZCA whitening, under the same estimator contract.

The paper (§6.3) sets aside other corrections of anisotropy; an auditor who
reports a ZCA-calibrated WEAT should be able to show what they give. Each
class here is registered under its ``name`` and is selectable wherever
``zca`` is (``--calibration``, :func:`~isoeat.calibration.fit_calibrator`,
:func:`~isoeat.calibration.save_calibrator`/``load_calibrator``).

=====================  ========================================================  ==============
name                   transform of a vector :math:`x`                           reference
=====================  ========================================================  ==============
``center``             :math:`x-\mu`                                             (mean removal)
``pca-whiten``         :math:`(\Lambda+\varepsilon I)^{-1/2}U^\top(x-\mu)`        Kessy et al. 2018
``zca-shrinkage``      ZCA on :math:`(1-\rho)\Sigma+\rho\,\bar\lambda I`          Ledoit & Wolf 2004
``abtt``               :math:`\tilde x-\sum_{i\le D}(u_i^\top\tilde x)u_i`,        Mu & Viswanath 2018
                       :math:`\tilde x=x-\mu`
``rogue-standardize``  :math:`(x_j-\mu_j)/\sigma_j` per dimension                 Timkey & van Schijndel 2021
=====================  ========================================================  ==============

Conventions shared with :class:`~isoeat.ZCAWhitener`: :math:`\mu` is the mean
of the reference vectors, :math:`\Sigma` their covariance with :math:`n-1`,
:math:`\Sigma = U\Lambda U^\top` with eigenvalues in descending order. Row
vectors in code: ``transform(X)`` maps each row. Eigenvector signs are fixed
(largest-magnitude component positive) so fitted coordinates are reproducible.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._errors import ConfigError, DataFormatError, IsoeatWarning
from ._base import (
    _as_matrix,
    _batch_moments,
    _Calibrator,
    _check_components,
    _check_eps,
    _eigh_desc,
    _MomentCalibrator,
    _warn_singular,
    _Whitener,
    check_condition,
)
from ._shrinkage import ShrinkageZCAWhitener, ledoit_wolf_shrinkage  # noqa: F401 (re-exported)
from .registry import register_calibrator

__all__ = ["MeanCenterer", "PCAWhitener", "ShrinkageZCAWhitener", "AllButTheTop", "RogueStandardizer"]


# ---------------------------------------------------------------------------
# center
# ---------------------------------------------------------------------------


class MeanCenterer(_Calibrator):
    r"""Mean removal only: :math:`z = x - \mu`.

    The first step of every other calibration here; on its own it removes the
    common direction that makes raw cosines all positive (the largest single
    source of anisotropy in static embeddings; Mu & Viswanath 2018, §2) but
    leaves the covariance untouched.

    Attributes
    ----------
    mean_ : ndarray of shape (dim,)
    n_samples_seen_, n_features_in_ : int

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [3.0, 6.0]])
    >>> MeanCenterer().fit_transform(X)
    array([[-1., -2.],
           [ 1.,  2.]])
    """

    name = "center"
    _params = ()
    _state_arrays = ("mean_",)

    def __init__(self) -> None:
        pass

    def fit(self, X: Any, y: Any = None) -> MeanCenterer:
        """Fit on the reference vectors ``X`` (rows); forgets any earlier fit."""
        self._reset()
        X = _as_matrix(X, "reference vectors")
        if X.shape[0] < 1:
            raise DataFormatError("reference vectors: need at least 1 sample")
        self.mean_ = X.mean(axis=0)
        self._finish_fit(*X.shape)
        return self

    def fit_batches(self, batches: Any) -> MeanCenterer:
        """Fit from an iterable of batches without materialising the n×d matrix; forgets any earlier fit."""
        self._reset()
        bm = _batch_moments(batches, min_n=1)
        n, mean, _ = bm.acc.moments()
        self.mean_ = mean.copy()
        self._finish_fit(n, mean.shape[0])
        return self

    def transform(self, X: Any) -> np.ndarray:
        """:math:`z = x - \\mu` for each row."""
        return self._check(X, "vectors") - self.mean_

    def inverse_transform(self, Z: Any) -> np.ndarray:
        """:math:`x = z + \\mu`."""
        return self._check(Z, "centred vectors") + self.mean_

    def _check_state(self) -> None:
        self._check_shapes(mean_=(self.n_features_in_,))


# ---------------------------------------------------------------------------
# pca-whiten
# ---------------------------------------------------------------------------


class PCAWhitener(_MomentCalibrator, _Whitener):
    r"""PCA whitening without truncation (Kessy, Lewin & Strimmer 2018).

    .. math::

        z = (\Lambda+\varepsilon I)^{-1/2}\,U^\top (x-\mu)

    with :math:`\Sigma = U\Lambda U^\top` the reference covariance (:math:`n-1`)
    and the same :math:`\varepsilon` as ZCA (paper eq. 11). PCA and ZCA
    whitening differ by the rotation :math:`U`: :math:`z_{ZCA} = U z_{PCA}`,
    so cosines, and therefore every WEAT result, are identical. PCA whitening
    expresses the vectors in principal-component coordinates; ZCA is the
    whitening closest to the original vectors.

    Reference: A. Kessy, A. Lewin, K. Strimmer (2018), "Optimal whitening and
    decorrelation", *The American Statistician* 72(4):309–314.

    Parameters
    ----------
    eps : float, default 1e-3
        Added to every eigenvalue before the inverse square root.

    Attributes
    ----------
    mean_, covariance_, eigenvalues_, eigenvectors_ : ndarray
        As :class:`~isoeat.ZCAWhitener` (eigenvector signs fixed: largest
        component positive).
    whitening_ : ndarray of shape (dim, dim)
        :math:`U(\Lambda+\varepsilon I)^{-1/2}`, applied as ``(x - mean_) @ whitening_``.

    Examples
    --------
    PCA-whitened vectors rotated by :math:`U` are the ZCA-whitened ones:

    >>> from isoeat.calibration import ZCAWhitener
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)) @ np.diag([5.0, 1.0, 0.2])
    >>> pca = PCAWhitener(eps=1e-3).fit(X)
    >>> np.allclose(pca.transform(X) @ pca.eigenvectors_.T, ZCAWhitener(eps=1e-3).fit_transform(X))
    True
    """

    name = "pca-whiten"
    # parameters (eps, eps_mode), their validation, __init__ and the fitted arrays: those of _Whitener

    def _fit_moments(self, mean: np.ndarray, cov: np.ndarray, n: int) -> PCAWhitener:
        eps = _check_eps(self.eps)
        d = cov.shape[0]  # mutation: equivalent[const 0 -> 1] (cov is square)
        cov = (cov + cov.T) / 2.0
        _warn_singular(n, d, eps, "pca-whiten")
        evals, evecs = _eigh_desc(cov)
        eps = self._eps_for(evals)
        if eps == 0 and evals.min() <= 0:
            raise ConfigError("pca-whiten: eps=0 but the covariance has a zero eigenvalue; use eps > 0")
        check_condition(evals, eps, "pca-whiten")
        self.mean_, self.covariance_, self.eigenvalues_, self.eigenvectors_ = mean, cov, evals, evecs
        self.whitening_ = evecs / np.sqrt(evals + eps)
        self.eps_ = eps
        self._finish_fit(n, d)
        return self

    def inverse_transform(self, Z: Any) -> np.ndarray:
        """:math:`x = U(\\Lambda+\\varepsilon)^{1/2}z + \\mu`."""
        Z = self._check(Z, "whitened vectors")
        return (Z * np.sqrt(self.eigenvalues_ + self.eps_)) @ self.eigenvectors_.T + self.mean_

    def _check_state(self) -> None:
        d = self.n_features_in_
        self._check_shapes(mean_=(d,), eigenvalues_=(d,), covariance_=(d, d), eigenvectors_=(d, d),
                           whitening_=(d, d))
        self._check_whitening(self.eigenvectors_ / np.sqrt(self.eigenvalues_ + self.eps_))


# ---------------------------------------------------------------------------
# abtt
# ---------------------------------------------------------------------------


class AllButTheTop(_MomentCalibrator):
    r"""All-but-the-top (Mu & Viswanath 2018): remove the mean and the top D principal components.

    .. math::

        \tilde x = x-\mu,\qquad z = \tilde x - \sum_{i=1}^{D}(u_i^\top\tilde x)\,u_i

    with :math:`u_1..u_D` the leading eigenvectors of the reference
    covariance. Mu & Viswanath found that a few dominating directions, shared
    by all words and encoding mostly frequency, distort cosine similarity, and
    suggested :math:`D \approx d/100`. Unlike whitening it leaves the
    remaining directions unscaled.

    Reference: J. Mu, P. Viswanath (2018), "All-but-the-Top: Simple and
    Effective Postprocessing for Word Representations", *ICLR 2018*.

    Parameters
    ----------
    n_components : int or None, default None
        :math:`D`, ``0 <= D < dim``. ``None``: :math:`\max(1, \operatorname{round}(d/100))`
        (their suggestion; 1 for 50–149 dimensions, 3 for 300, 8 for 768).
        ``D = 0`` is ``center``.

    Attributes
    ----------
    mean_ : ndarray of shape (dim,)
    components_ : ndarray of shape (D, dim)
        The removed directions :math:`u_i^\top` (rows, signs fixed).
    explained_variance_ : ndarray of shape (D,)
        Their eigenvalues.
    n_components_ : int
        :math:`D` used.

    Notes
    -----
    The projection is not invertible: ``inverse_transform`` is the
    Moore–Penrose pseudo-inverse, :math:`x = z + \mu` — it adds the mean back
    but cannot restore the removed components, so
    ``transform(inverse_transform(z)) == z`` for ``z`` in the image, while
    ``inverse_transform(transform(x))`` equals ``x`` only when ``x - mu`` has
    no component along :math:`u_1..u_D`.
    """

    name = "abtt"
    _params = ("n_components",)
    _validators = {"n_components": _check_components}
    _state_arrays = ("mean_", "components_", "explained_variance_")

    def __init__(self, n_components: int | None = None) -> None:
        self.n_components = n_components

    @staticmethod
    def default_components(dim: int) -> int:
        """:math:`\\max(1, \\operatorname{round}(d/100))` (Mu & Viswanath 2018: :math:`D \\approx d/100`)."""
        return max(1, int(np.floor(dim / 100.0 + 0.5)))

    def _validate_components(self, d: int) -> int:
        D = _check_components(self.n_components)
        if D is None:
            return min(self.default_components(d), d - 1)
        if D >= d:
            raise ConfigError(
                f"abtt: n_components (D) must be smaller than the dimension {d} (allowed 0..{d - 1}), got {D}"
            )
        return int(D)

    def _check_dim(self, d: int) -> None:
        self._validate_components(d)

    def _fit_moments(self, mean: np.ndarray, cov: np.ndarray, n: int) -> AllButTheTop:
        d = cov.shape[0]  # mutation: equivalent[const 0 -> 1] (cov is square)
        D = self._validate_components(d)
        evals, evecs = _eigh_desc((cov + cov.T) / 2.0)
        self.mean_ = mean
        self.components_ = np.ascontiguousarray(evecs[:, :D].T)
        self.explained_variance_ = evals[:D].copy()
        self._finish_fit(n, d)
        return self

    @property
    def n_components_(self) -> int:
        return int(np.asarray(self.components_).shape[0])

    def transform(self, X: Any) -> np.ndarray:
        """:math:`z = \\tilde x - \\sum_{i\\le D}(u_i^\\top\\tilde x)u_i`, :math:`\\tilde x = x-\\mu`."""
        Xc = self._check(X, "vectors") - self.mean_
        if self.n_components_ == 0:
            return Xc
        return Xc - (Xc @ self.components_.T) @ self.components_

    def inverse_transform(self, Z: Any) -> np.ndarray:
        """Pseudo-inverse :math:`x = z + \\mu` (the removed components are lost; see Notes)."""
        return self._check(Z, "calibrated vectors") + self.mean_

    def _check_state(self) -> None:
        d = self.n_features_in_
        C = np.asarray(self.components_, dtype=np.float64)
        if C.size == 0:
            C = C.reshape(0, d)
        self.components_ = C
        D = C.shape[0]
        self._check_shapes(mean_=(d,), components_=(D, d), explained_variance_=(D,))
        if D >= d:
            raise DataFormatError(f"{D} removed components for dimension {d}")
        if D and not np.allclose(C @ C.T, np.eye(D), atol=1e-8):
            raise DataFormatError("removed components are not orthonormal (tampered?)")
        if self.n_components is not None and int(self.n_components) != D:
            raise DataFormatError(f"n_components={self.n_components} but {D} components stored")


# ---------------------------------------------------------------------------
# rogue-standardize
# ---------------------------------------------------------------------------


class RogueStandardizer(_Calibrator):
    r"""Per-dimension standardisation (Timkey & van Schijndel 2021).

    .. math::

        z_j = \frac{x_j-\mu_j}{\sigma_j}

    with :math:`\sigma_j` the standard deviation of dimension :math:`j` over
    the reference vectors (:math:`n-1`; the divisor does not change cosines).
    Timkey & van Schijndel showed that a handful of "rogue" dimensions with
    very large variance dominate cosine similarity in transformer
    representations, and that standardising each dimension removes their
    grip. It rescales dimensions but, unlike whitening, does not decorrelate
    them.

    Reference: W. Timkey, M. van Schijndel (2021), "All Bark and No Bite:
    Rogue Dimensions in Transformer Language Models Obscure Representational
    Quality", *EMNLP 2021*, 4527–4546.

    Attributes
    ----------
    mean_ : ndarray of shape (dim,)
    scale_ : ndarray of shape (dim,)
        :math:`\sigma_j`; a dimension that is constant over the reference
        vectors keeps scale 1 (it is only centred) and a warning is issued.
    """

    name = "rogue-standardize"
    _params = ()
    _state_arrays = ("mean_", "scale_")

    def __init__(self) -> None:
        pass

    def fit(self, X: Any, y: Any = None) -> RogueStandardizer:
        """Fit on the reference vectors ``X`` (rows); forgets any earlier fit."""
        self._reset()
        X = _as_matrix(X, "reference vectors")
        n = X.shape[0]
        if n < 2:
            raise DataFormatError(
                f"reference vectors: need at least 2 samples to estimate a standard deviation, got {n}"
            )
        return self._fit_moments(X.mean(axis=0), X.std(axis=0, ddof=1), n)

    def fit_batches(self, batches: Any) -> RogueStandardizer:
        """Fit from an iterable of batches without materialising the n×d matrix; forgets any earlier fit."""
        self._reset()
        bm = _batch_moments(batches)
        return self._fit_moments(bm.acc.moments()[1].copy(), np.sqrt(np.diag(bm.acc.covariance())), bm.acc.n)

    def _fit_moments(self, mean: np.ndarray, sd: np.ndarray, n: int) -> RogueStandardizer:
        d = mean.shape[0]
        const = sd <= 0
        if const.any():
            warnings.warn(
                f"rogue-standardize: {int(const.sum())} dimension(s) are constant over the reference vectors "
                "and are only centred (scale 1)",
                IsoeatWarning,
                stacklevel=2,
            )
            sd = np.where(const, 1.0, sd)
        self.mean_, self.scale_ = mean, sd
        self._finish_fit(n, d)
        return self

    def transform(self, X: Any) -> np.ndarray:
        """:math:`z_j = (x_j-\\mu_j)/\\sigma_j` for each row."""
        return (self._check(X, "vectors") - self.mean_) / self.scale_

    def inverse_transform(self, Z: Any) -> np.ndarray:
        """:math:`x_j = \\sigma_j z_j + \\mu_j`."""
        return self._check(Z, "standardised vectors") * self.scale_ + self.mean_

    def _check_state(self) -> None:
        d = self.n_features_in_
        self._check_shapes(mean_=(d,), scale_=(d,))
        if not (np.asarray(self.scale_) > 0).all():
            raise DataFormatError("scale_ has non-positive entries (tampered?)")


for _cls in (MeanCenterer, PCAWhitener, ShrinkageZCAWhitener, AllButTheTop, RogueStandardizer):
    register_calibrator(_cls)
del _cls
