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

from .._errors import ConfigError, DataFormatError, DimensionMismatchError, IsoeatWarning, NotFittedError
from .registry import register_calibrator
from .zca import _as_matrix

__all__ = ["MeanCenterer", "PCAWhitener", "ShrinkageZCAWhitener", "AllButTheTop", "RogueStandardizer"]


def _check_eps(eps: Any, cls: str) -> float:
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)) or not np.isfinite(eps) \
            or eps < 0:
        raise ConfigError(f"{cls}: eps must be a finite number >= 0, got {eps!r}")
    return float(eps)


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

    def __init__(self, fourth: bool = False) -> None:
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
        acc, n = self.acc, self.acc.n
        nu = acc.mean - self.shift
        c = float(nu @ nu)
        T = acc.comoment + n * np.outer(nu, nu)
        return float(self.q - 4.0 * (self.v @ nu) + 4.0 * (nu @ T @ nu) + 2.0 * c * np.trace(T) - 3.0 * n * c * c)


def _batch_moments(batches: Any, fourth: bool = False, min_n: int = 2) -> _BatchMoments:
    bm = _BatchMoments(fourth)
    for b in batches:
        bm.update(b)
    if bm.acc.n < min_n:
        raise DataFormatError(f"reference batches: need at least {min_n} vectors, got {bm.acc.n}")
    return bm


def _eigh_desc(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending, round-off clipped to 0) and eigenvectors with a fixed sign."""
    evals, evecs = np.linalg.eigh(cov)
    order = np.argsort(evals)[::-1]
    evals = np.clip(evals[order], 0.0, None)
    evecs = evecs[:, order]
    pivot = np.argmax(np.abs(evecs), axis=0)
    signs = np.sign(evecs[pivot, np.arange(evecs.shape[1])])
    signs[signs == 0] = 1.0
    return evals, evecs * signs


def _warn_singular(n: int, d: int, eps: float, cls: str) -> None:
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
    """Shared plumbing: parameters, fitted-state and dimension checks, repr."""

    name = ""
    _params: tuple[str, ...] = ()
    _state_arrays: tuple[str, ...] = ()

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self._params}

    def set_params(self, **params: Any) -> "_Calibrator":
        for k, v in params.items():
            if k not in self._params:
                raise ConfigError(
                    f"{type(self).__name__} has no parameter {k!r} (parameters: {', '.join(self._params) or 'none'})"
                )
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get_params().items())})"

    def _finish_fit(self, n: int, d: int) -> None:
        self.n_samples_seen_ = int(n)
        self.n_features_in_ = int(d)
        if not hasattr(self, "metadata_"):
            self.metadata_: dict[str, Any] = {}

    def _check(self, X: Any, what: str) -> np.ndarray:
        if not all(hasattr(self, k) for k in self._state_arrays) or not hasattr(self, "n_features_in_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit(reference_vectors) first")
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
        return self.fit(X).transform(X)


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

    def fit(self, X: Any, y: Any = None) -> "MeanCenterer":
        X = _as_matrix(X, "reference vectors")
        if X.shape[0] < 1:
            raise DataFormatError("reference vectors: need at least 1 sample")
        self.mean_ = X.mean(axis=0)
        self._finish_fit(*X.shape)
        return self

    def fit_batches(self, batches: Any) -> "MeanCenterer":
        """Fit from an iterable of batches without materialising the n×d matrix."""
        bm = _batch_moments(batches, min_n=1)
        self.mean_ = bm.acc.mean.copy()
        self._finish_fit(bm.acc.n, bm.acc.dim)
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


class PCAWhitener(_Calibrator):
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
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)) @ np.diag([5.0, 1.0, 0.2])
    >>> Z = PCAWhitener(eps=0).fit_transform(X)
    >>> np.allclose(np.cov(Z, rowvar=False), np.eye(3))
    True
    """

    name = "pca-whiten"
    _params = ("eps",)
    _state_arrays = ("mean_", "covariance_", "eigenvalues_", "eigenvectors_", "whitening_")

    def __init__(self, eps: float = 1e-3) -> None:
        self.eps = eps

    def fit(self, X: Any, y: Any = None) -> "PCAWhitener":
        X = _as_matrix(X, "reference vectors")
        mean, _, cov = _moments(X)
        return self._fit_moments(mean, cov, X.shape[0])

    def fit_batches(self, batches: Any) -> "PCAWhitener":
        """Fit from an iterable of batches without materialising the n×d matrix."""
        bm = _batch_moments(batches)
        return self._fit_moments(bm.acc.mean.copy(), bm.acc.covariance(), bm.acc.n)

    def _fit_moments(self, mean: np.ndarray, cov: np.ndarray, n: int) -> "PCAWhitener":
        eps = _check_eps(self.eps, "pca-whiten")
        d = cov.shape[0]
        cov = (cov + cov.T) / 2.0
        _warn_singular(n, d, eps, "pca-whiten")
        evals, evecs = _eigh_desc(cov)
        if eps == 0 and evals.min() <= 0:
            raise ConfigError("pca-whiten: eps=0 but the covariance has a zero eigenvalue; use eps > 0")
        self.mean_, self.covariance_, self.eigenvalues_, self.eigenvectors_ = mean, cov, evals, evecs
        self.whitening_ = evecs / np.sqrt(evals + eps)
        self.eps_ = eps
        self._finish_fit(n, d)
        return self

    def transform(self, X: Any) -> np.ndarray:
        """:math:`z = (\\Lambda+\\varepsilon)^{-1/2}U^\\top(x-\\mu)` for each row."""
        return (self._check(X, "vectors") - self.mean_) @ self.whitening_

    def inverse_transform(self, Z: Any) -> np.ndarray:
        """:math:`x = U(\\Lambda+\\varepsilon)^{1/2}z + \\mu`."""
        Z = self._check(Z, "whitened vectors")
        return (Z * np.sqrt(self.eigenvalues_ + self.eps_)) @ self.eigenvectors_.T + self.mean_

    def _check_state(self) -> None:
        d = self.n_features_in_
        self._check_shapes(mean_=(d,), eigenvalues_=(d,), covariance_=(d, d), eigenvectors_=(d, d),
                           whitening_=(d, d))
        expect = self.eigenvectors_ / np.sqrt(self.eigenvalues_ + self.eps_)
        scale = max(1.0, float(np.abs(expect).max()))
        if not np.allclose(expect, self.whitening_, rtol=1e-8, atol=1e-10 * scale):
            raise DataFormatError("whitening matrix is inconsistent with its eigendecomposition (tampered?)")


# ---------------------------------------------------------------------------
# zca-shrinkage
# ---------------------------------------------------------------------------


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
    d = S.shape[0]
    mu = float(np.trace(S)) / d
    ss = float(np.sum(S * S))
    delta2 = (ss - 2.0 * mu * float(np.trace(S)) + d * mu * mu) / d
    beta2 = (fourth - n * ss) / (n * n * d)
    beta2 = min(max(beta2, 0.0), delta2)
    return 0.0 if delta2 <= 0 else beta2 / delta2


class ShrinkageZCAWhitener(_Calibrator):
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
    _params = ("eps", "shrinkage")
    _state_arrays = ("mean_", "covariance_", "shrinkage_", "eigenvalues_", "eigenvectors_", "whitening_")

    def __init__(self, eps: float = 1e-3, shrinkage: float | None = None) -> None:
        self.eps = eps
        self.shrinkage = shrinkage

    def _validate_shrinkage(self) -> float | None:
        s = self.shrinkage
        if s is None:
            return None
        if isinstance(s, bool) or not isinstance(s, (int, float, np.integer, np.floating)) or not 0.0 <= s <= 1.0:
            raise ConfigError(f"zca-shrinkage: shrinkage must be None (Ledoit-Wolf optimum) or a number in [0, 1], "
                              f"got {s!r}")
        return float(s)

    def fit(self, X: Any, y: Any = None) -> "ShrinkageZCAWhitener":
        _check_eps(self.eps, "zca-shrinkage")
        fixed = self._validate_shrinkage()
        X = _as_matrix(X, "reference vectors")
        mean, Xc, cov = _moments(X)
        rho = ledoit_wolf_shrinkage(Xc) if fixed is None else fixed
        return self._fit_moments(mean, cov, X.shape[0], rho)

    def fit_batches(self, batches: Any) -> "ShrinkageZCAWhitener":
        """Fit from an iterable of batches without materialising the n×d matrix (one pass)."""
        fixed = self._validate_shrinkage()
        bm = _batch_moments(batches, fourth=fixed is None)
        acc = bm.acc
        rho = None if fixed is not None else _lw_from_moments(acc.comoment / acc.n, acc.n, bm.centred_fourth())
        return self._fit_moments(acc.mean.copy(), acc.covariance(), acc.n, rho)

    def _fit_moments(self, mean: np.ndarray, cov: np.ndarray, n: int, rho: float | None) -> "ShrinkageZCAWhitener":
        eps = _check_eps(self.eps, "zca-shrinkage")
        fixed = self._validate_shrinkage()
        rho = fixed if fixed is not None else float(rho)
        d = cov.shape[0]
        cov = (cov + cov.T) / 2.0
        if rho == 0:
            _warn_singular(n, d, eps, "zca-shrinkage")
        evals, evecs = _eigh_desc(cov)
        shrunk = (1.0 - rho) * evals + rho * float(np.trace(cov)) / d
        if eps == 0 and shrunk.min() <= 0:
            raise ConfigError("zca-shrinkage: eps=0 but the shrunk covariance has a zero eigenvalue; use eps > 0")
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
        d = self.covariance_.shape[0]
        return (1.0 - self.shrinkage_) * self.covariance_ + self.shrinkage_ * np.trace(self.covariance_) / d * np.eye(d)

    def transform(self, X: Any) -> np.ndarray:
        """:math:`z = W(x-\\mu)` for each row."""
        return (self._check(X, "vectors") - self.mean_) @ self.whitening_

    def inverse_transform(self, Z: Any) -> np.ndarray:
        """:math:`x = W^{-1}z + \\mu`."""
        Z = self._check(Z, "whitened vectors")
        unwhiten = (self.eigenvectors_ * np.sqrt(self.eigenvalues_ + self.eps_)) @ self.eigenvectors_.T
        return Z @ unwhiten + self.mean_

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
        expect = (U / np.sqrt(lam + self.eps_)) @ U.T
        if not np.allclose(expect, self.whitening_, rtol=1e-8, atol=1e-10 * max(1.0, float(np.abs(expect).max()))):
            raise DataFormatError("whitening matrix is inconsistent with its eigendecomposition (tampered?)")


# ---------------------------------------------------------------------------
# abtt
# ---------------------------------------------------------------------------


class AllButTheTop(_Calibrator):
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
    _state_arrays = ("mean_", "components_", "explained_variance_")

    def __init__(self, n_components: int | None = None) -> None:
        self.n_components = n_components

    @staticmethod
    def default_components(dim: int) -> int:
        """:math:`\\max(1, \\operatorname{round}(d/100))` (Mu & Viswanath 2018: :math:`D \\approx d/100`)."""
        return max(1, int(np.floor(dim / 100.0 + 0.5)))

    def _validate_components(self, d: int) -> int:
        D = self.n_components
        if D is None:
            D = self.default_components(d)
            return min(D, d - 1)
        if isinstance(D, bool) or not isinstance(D, (int, np.integer)) or D < 0:
            raise ConfigError(f"abtt: n_components (D) must be None or an integer in [0, dim), got {D!r}")
        if D >= d:
            raise ConfigError(
                f"abtt: n_components (D) must be smaller than the dimension {d} (allowed 0..{d - 1}), got {D}"
            )
        return int(D)

    def fit(self, X: Any, y: Any = None) -> "AllButTheTop":
        X = _as_matrix(X, "reference vectors")
        self._validate_components(X.shape[1])
        mean, _, cov = _moments(X)
        return self._fit_moments(mean, cov, X.shape[0])

    def fit_batches(self, batches: Any) -> "AllButTheTop":
        """Fit from an iterable of batches without materialising the n×d matrix."""
        bm = _batch_moments(batches)
        return self._fit_moments(bm.acc.mean.copy(), bm.acc.covariance(), bm.acc.n)

    def _fit_moments(self, mean: np.ndarray, cov: np.ndarray, n: int) -> "AllButTheTop":
        d = cov.shape[0]
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

    def fit(self, X: Any, y: Any = None) -> "RogueStandardizer":
        X = _as_matrix(X, "reference vectors")
        n = X.shape[0]
        if n < 2:
            raise DataFormatError(
                f"reference vectors: need at least 2 samples to estimate a standard deviation, got {n}"
            )
        return self._fit_moments(X.mean(axis=0), X.std(axis=0, ddof=1), n)

    def fit_batches(self, batches: Any) -> "RogueStandardizer":
        """Fit from an iterable of batches without materialising the n×d matrix."""
        bm = _batch_moments(batches)
        return self._fit_moments(bm.acc.mean.copy(), np.sqrt(np.diag(bm.acc.covariance())), bm.acc.n)

    def _fit_moments(self, mean: np.ndarray, sd: np.ndarray, n: int) -> "RogueStandardizer":
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
