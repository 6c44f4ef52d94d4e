r"""Anisotropy diagnostics: how unevenly an embedding space uses its directions.

Experiment 1 of the paper (§4.3, Table 2, Figures 1–2) measures anisotropy by
the mean and standard deviation of the pairwise cosine similarities among
:math:`N` (2,000) randomly sampled vectors, before and after calibration, and
shows the explained-variance ratio of the top principal components. This
module computes those numbers and two further isotropy measures from the
literature, so that users can compare:

* **Mean / SD of pairwise cosine.** For unit-normalised rows
  :math:`u_i = x_i/\lVert x_i\rVert` of the sample, over the
  :math:`N(N-1)` off-diagonal entries :math:`c_{ij} = u_i^\top u_j`,
  :math:`i \ne j`:

  .. math::

      \bar c = \frac{1}{N(N-1)}\sum_{i\ne j} c_{ij},\qquad
      \operatorname{SD} = \Big(\frac{1}{N(N-1)}\sum_{i\ne j} c_{ij}^2 - \bar c^{\,2}\Big)^{1/2}

  (population SD, ``ddof=0``; every unordered pair counted once or twice gives
  the same two numbers). An isotropic space gives :math:`\bar c \approx 0`
  (Ethayarajh 2019).

* **Explained-variance ratio.** Eigenvalues :math:`\lambda_1\ge\dots\ge\lambda_d`
  of the sample covariance (``ddof=1``), :math:`\lambda_k/\sum_j\lambda_j`
  for the top :math:`k` (default 50) components — the data of the paper's
  Figure 2. Whitening flattens this curve towards :math:`1/d`.

* **IsoScore** (Rudman, Gillman, Rayne & Eickhoff 2022, Algorithm 1). With
  :math:`n = d` the ambient dimension: reorient the points by PCA, take the
  variance vector :math:`\Sigma_D` of the reoriented points (this is the
  vector of covariance eigenvalues), normalise it to norm :math:`\sqrt n`,
  :math:`\hat\Sigma_D = \sqrt n\,\Sigma_D/\lVert\Sigma_D\rVert`, measure the
  isotropy defect

  .. math::

      \delta(X) = \frac{\lVert \hat\Sigma_D - \mathbf 1\rVert}{\sqrt{2(n-\sqrt n)}}

  and map it to the score

  .. math::

      \iota(X) = \frac{\big(n - \delta(X)^2 (n-\sqrt n)\big)^2 - n}{n(n-1)} \in [0, 1],

  which is 1 when all :math:`n` directions carry equal variance and 0 when a
  single direction carries it all. It is invariant to rotation, translation
  and global scale.

* **Partition-function ratio** (Mu & Viswanath 2018, "All-but-the-Top",
  following Arora et al. 2016). For the sample :math:`W` (rows :math:`w`,
  vectors as given, *not* centred or normalised),
  :math:`Z(c) = \sum_w \exp(c^\top w)` and

  .. math::

      I(W) = \frac{\min_{\lVert c\rVert=1} Z(c)}{\max_{\lVert c\rVert=1} Z(c)}
           \approx \frac{\min_{c\in C} Z(c)}{\max_{c\in C} Z(c)},

  with :math:`C = \{\pm u_1, \dots, \pm u_d\}` the eigenvectors of
  :math:`W^\top W` and their negatives. Mu & Viswanath take :math:`c` over the
  eigenvectors; the sign of an eigenvector is arbitrary, so isoeat uses both
  signs, which makes the value well defined (common re-implementations use
  whatever sign the eigensolver returns). :math:`I(W)` lies in :math:`(0,1]`,
  1 for an isotropic space; it depends on the scale of the vectors (it is not
  invariant to multiplying all vectors by a constant), so compare it within a
  space rather than across spaces with different norms. Computed in log space
  (log-sum-exp), so large norms do not overflow.

References
----------
Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
Mu, J., & Viswanath, P. (2018). All-but-the-Top: Simple and effective postprocessing
for word representations. ICLR.
Arora, S., Li, Y., Liang, Y., Ma, T., & Risteski, A. (2016). A latent variable model
approach to PMI-based word embeddings. TACL.
Rudman, W., Gillman, N., Rayne, T., & Eickhoff, C. (2022). IsoScore: Measuring the
uniformity of embedding space utilization. Findings of ACL.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._cosine import unit_rows
from .._errors import ConfigError, DataFormatError
from .._random import stream
from .._surface import checked_bind, public, require_encoder
from .._types import VocabularyModel, name_of
from .._validate import check_bool, check_int
from ..stats.options import own
from ..stats.weat import resolve_calibration
from .frames import check_frame_for, sample_reference  # noqa: F401 - sample_reference re-exported (frame "reference")

__all__ = [
    "AnisotropyResult",
    "AnisotropySettings",
    "anisotropy",
    "anisotropy_from_vectors",
    "compare_anisotropy",
    "sample_reference",
    "pairwise_cosine",
    "cosine_stats",
    "explained_variance_ratio",
    "isoscore",
    "partition_ratio",
]


def _as_matrix(X: Any, what: str = "vectors") -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise DataFormatError(f"{what}: expected a 2-D array (n_samples, dim), got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise DataFormatError(f"{what}: empty array of shape {X.shape}")
    if not np.isfinite(X).all():
        raise DataFormatError(f"{what}: contains NaN or inf values")
    return X


def _unit_rows(X: np.ndarray) -> np.ndarray:
    return unit_rows(X, "vectors", DataFormatError)


#: rows per block when pairwise cosines are summed without the d x d Gram matrix (N <= d): memory block x N
_BLOCK_ROWS = 1024


def _cosine_corner(U: np.ndarray, k: int) -> np.ndarray:
    """The top-left ``k x k`` block of the cosine matrix of unit rows ``U`` (ones on the diagonal)."""
    V = U[:k]
    C = V @ V.T
    np.fill_diagonal(C, 1.0)
    return C


def pairwise_cosine(X: Any) -> np.ndarray:
    r"""The :math:`N\times N` matrix of cosine similarities :math:`c_{ij}` (paper Figure 1).

    Parameters
    ----------
    X : array_like, shape (N, d)

    Returns
    -------
    numpy.ndarray, shape (N, N)
        Symmetric, with ones on the diagonal (up to rounding).

    Examples
    --------
    >>> pairwise_cosine([[1.0, 0.0], [1.0, 1.0]]).round(3)
    array([[1.   , 0.707],
           [0.707, 1.   ]])
    """
    U = _unit_rows(_as_matrix(X))
    C = U @ U.T
    np.fill_diagonal(C, 1.0)
    return C


def cosine_stats(X: Any) -> tuple[float, float]:
    r"""Mean and SD (``ddof=0``) of the off-diagonal pairwise cosines.

    .. math::

        \bar c = \frac{\lVert\sum_i u_i\rVert^2 - N}{N(N-1)},\qquad
        \overline{c^2} = \frac{\lVert U^\top U\rVert_F^2 - N}{N(N-1)},\qquad
        \operatorname{SD} = \sqrt{\overline{c^2} - \bar c^{\,2}}

    for unit rows :math:`u_i` (rows of :math:`U`). When :math:`d < N` the
    :math:`d\times d` Gram matrix :math:`U^\top U` is used, so memory is
    :math:`O(Nd + d^2)` and time :math:`O(Nd^2)`; otherwise the rows of the
    :math:`N\times N` matrix are summed a block of rows at a time (memory
    :math:`O(Nd + bN)`, :math:`b` = 1024 rows), never the whole matrix. The
    diagonal is excluded.

    Parameters
    ----------
    X : array_like, shape (N, d), N >= 2

    Returns
    -------
    mean, sd : float

    Examples
    --------
    >>> cosine_stats([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # doctest: +ELLIPSIS
    (0.4714..., 0.3333...)
    """
    X = _as_matrix(X)
    n, d = X.shape
    if n < 2:
        raise ConfigError(f"need at least 2 vectors for pairwise cosines, got {n}")
    U = _unit_rows(X)
    sq = np.einsum("ij,ij->i", U, U)  # 1 up to rounding; subtract exactly what was added
    if d < n:
        s = U.sum(axis=0)
        total = float(s @ s) - float(sq.sum())
        G = U.T @ U
        total_sq = float(np.einsum("ij,ij->", G, G)) - float((sq**2).sum())
    else:
        total, total_sq = _blockwise_sums(U)
    m = n * (n - 1)
    mean = total / m
    var = max(total_sq / m - mean * mean, 0.0)
    return mean, math.sqrt(var)


def _blockwise_sums(U: np.ndarray) -> tuple[float, float]:
    """Off-diagonal sums of :math:`c_{ij}` and :math:`c_{ij}^2` over rows blocks of :math:`UU^\top`."""
    total = total_sq = 0.0
    for i in range(0, U.shape[0], _BLOCK_ROWS):
        C = U[i:i + _BLOCK_ROWS] @ U.T
        diag = C[np.arange(C.shape[0]), np.arange(i, i + C.shape[0])]
        total += float(C.sum()) - float(diag.sum())
        total_sq += float(np.einsum("ij,ij->", C, C)) - float((diag**2).sum())
    return total, total_sq


def _covariance_eigenvalues(X: np.ndarray) -> np.ndarray:
    n = X.shape[0]
    if n < 2:
        raise ConfigError(f"need at least 2 vectors for a covariance, got {n}")
    Xc = X - X.mean(axis=0)
    d = X.shape[1]
    if n < d:  # the n x n Gram matrix has the covariance's nonzero eigenvalues; the other d - n are 0
        lam = np.linalg.eigvalsh((Xc @ Xc.T) / (n - 1))[::-1]
        lam = np.concatenate([lam, np.zeros(d - n)])
    else:
        lam = np.linalg.eigvalsh((Xc.T @ Xc) / (n - 1))[::-1]
    return np.clip(lam, 0.0, None)


def explained_variance_ratio(X: Any, k: int | None = 50) -> np.ndarray:
    r"""Explained-variance ratio :math:`\lambda_i/\sum_j\lambda_j` of the top ``k`` components.

    Eigenvalues of the sample covariance (``ddof=1``) in decreasing order
    (paper Figure 2).

    Parameters
    ----------
    X : array_like, shape (N, d)
    k : int or None, default 50
        How many components; ``None`` or ``k > d`` gives all ``d``.

    Returns
    -------
    numpy.ndarray, shape (min(k, d),)

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(5000, 4)) * [2.0, 1.0, 1.0, 1.0]
    >>> explained_variance_ratio(X).round(1)
    array([0.6, 0.1, 0.1, 0.1])
    """
    X = _as_matrix(X)
    if k is not None:
        k = check_int("k", k, lo=1)
    return _ratio_from_eigenvalues(_covariance_eigenvalues(X), k)


def _ratio_from_eigenvalues(lam: np.ndarray, k: int | None) -> np.ndarray:
    """:func:`explained_variance_ratio` from the covariance eigenvalues ``lam`` (decreasing)."""
    total = lam.sum()
    if total <= 0:
        raise DataFormatError("all vectors are identical (zero variance); explained variance is undefined")
    ratio = lam / total
    return ratio if k is None else ratio[: int(k)]


def isoscore(X: Any) -> float:
    r"""IsoScore :math:`\iota(X)\in[0,1]` (Rudman et al. 2022, Algorithm 1).

    Steps (with :math:`n = d`, the ambient dimension): PCA-reorient the
    points; :math:`\Sigma_D` = variances of the reoriented coordinates (the
    covariance eigenvalues); :math:`\hat\Sigma_D = \sqrt n\,\Sigma_D/\lVert\Sigma_D\rVert`;
    :math:`\delta = \lVert\hat\Sigma_D - \mathbf 1\rVert/\sqrt{2(n-\sqrt n)}`;
    :math:`\iota = ((n-\delta^2(n-\sqrt n))^2 - n)/(n(n-1))`.

    Parameters
    ----------
    X : array_like, shape (N, d), d >= 2, N >= 2

    Returns
    -------
    float
        1 for isotropic data (equal variance in every direction), 0 when one
        direction holds all the variance. :math:`k = \iota(n-1)+1` is the
        paper's "number of dimensions uniformly used".

    References
    ----------
    Rudman, W., Gillman, N., Rayne, T., & Eickhoff, C. (2022). IsoScore: Measuring
    the uniformity of embedding space utilization. Findings of ACL, 3325–3339.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> round(isoscore(rng.normal(size=(20000, 5))), 2)
    1.0
    >>> round(isoscore(np.outer(rng.normal(size=100), [1.0, 2.0, 3.0])), 6)
    0.0
    """
    X = _as_matrix(X)
    if X.shape[1] < 2:
        raise ConfigError("IsoScore needs dimension d >= 2")
    return _isoscore_from_eigenvalues(_covariance_eigenvalues(X))


def _isoscore_from_eigenvalues(lam: np.ndarray) -> float:
    """:func:`isoscore` from the covariance eigenvalues ``lam`` (all ``d`` of them, ``d >= 2``)."""
    n = lam.shape[0]
    norm = np.linalg.norm(lam)
    if norm == 0:
        raise DataFormatError("all vectors are identical (zero variance); IsoScore is undefined")
    sigma = math.sqrt(n) * lam / norm
    delta = float(np.linalg.norm(sigma - 1.0)) / math.sqrt(2.0 * (n - math.sqrt(n)))
    score = ((n - delta**2 * (n - math.sqrt(n))) ** 2 - n) / (n * (n - 1))
    return float(min(max(score, 0.0), 1.0))


def _logsumexp_both(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise log(sum(exp(a))) and log(sum(exp(-a))) without overflow, in one scratch array."""
    hi, lo = a.max(axis=0), a.min(axis=0)
    buf = np.subtract(a, hi)
    np.exp(buf, out=buf)
    pos = np.log(buf.sum(axis=0)) + hi
    np.subtract(lo, a, out=buf)  # -a - max(-a)
    np.exp(buf, out=buf)
    return pos, np.log(buf.sum(axis=0)) - lo


def partition_ratio(X: Any) -> float:
    r"""Partition-function isotropy :math:`I(W)` of Mu & Viswanath (2018).

    .. math::

        I(W) = \frac{\min_{c\in C} Z(c)}{\max_{c\in C} Z(c)},\qquad
        Z(c) = \sum_{w} \exp(c^\top w),\qquad C = \{\pm u_1,\dots,\pm u_d\}

    where :math:`u_j` are the eigenvectors of :math:`W^\top W` (uncentred
    second-moment matrix; rows of ``X`` as given). Both signs of every
    eigenvector are used, so the value does not depend on the eigensolver's
    arbitrary signs. Evaluated as :math:`\exp(\min\log Z - \max\log Z)` with
    log-sum-exp.

    Parameters
    ----------
    X : array_like, shape (N, d)

    Returns
    -------
    float in (0, 1]

    References
    ----------
    Mu, J., & Viswanath, P. (2018). All-but-the-Top: Simple and effective
    postprocessing for word representations. ICLR. (Definition after Arora et al. 2016.)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> partition_ratio(rng.normal(size=(20000, 3)) * 0.1) > 0.95
    True
    >>> partition_ratio(rng.normal(size=(2000, 3)) * 0.1 + [3.0, 0.0, 0.0]) < 0.01  # about exp(-6)
    True
    """
    X = _as_matrix(X)
    _, vecs = np.linalg.eigh(X.T @ X)
    proj = X @ vecs  # (N, d): c^T w for c = u_j
    log_z = np.concatenate(_logsumexp_both(proj))
    return float(np.exp(log_z.min() - log_z.max()))


@dataclass(frozen=True)
class AnisotropyResult:
    """Anisotropy of one embedding space (raw or calibrated) on one sample.

    Attributes
    ----------
    model, calibration : str
        Model name; ``"none"`` or the calibrator's name.
    mean_cosine, sd_cosine : float
        Mean and population SD of the off-diagonal pairwise cosines (Table 2): over every pair of the
        frame's ``frame_size`` vectors when ``cosine_method`` is ``"exact"``
        (:mod:`~isoeat.diagnostics.frame_cosine`), else over the ``n_samples`` sampled vectors.
    cosine_method : str
        ``"exact"`` or ``"sampled"`` (the frame is over
        :data:`~isoeat.diagnostics.frame_cosine.EXACT_BUDGET`).
    frame_size : int
        Vectors in the frame the sample was drawn from.
    mean_cosine_se : float
        SE of ``mean_cosine``: 0 when exact, else estimated from the sample.
    sample_mean_cosine, sample_sd_cosine : float
        The same two figures over the ``n_samples`` sampled vectors (the paper's protocol, §4.3).
    sample_mean_cosine_se : float
        SD of ``sample_mean_cosine`` over samples of ``n_samples`` from the frame
        (exact formula when the frame was summed; 0 when the sample is the frame).
    spectrum_method : str
        How ``isoscore`` and ``explained_variance_ratio`` were obtained: ``"exact"`` (the covariance of the
        whole frame, :mod:`~isoeat.diagnostics.frame_spectrum`, within the same budget as the mean cosine;
        or the sample is the frame) or ``"sampled"`` (the sample's).
    top_pc_share_se : float
        SE of the top-PC share ``explained_variance_ratio[0]``: 0 when exact, else the delta method.
    sample_isoscore, sample_top_pc_share : float
        The two figures of the ``n_samples`` sampled vectors.
    n_samples : int
        :math:`N`, the vectors actually used.
    n_requested : int
        The :math:`N` asked for (larger than ``n_samples`` when the pool was smaller).
    dim : int
    isoscore : float
        Rudman et al. (2022).
    partition_ratio : float
        :math:`I(W)` of Mu & Viswanath (2018), eigenvectors of :math:`W^\\top W` with both signs.
    explained_variance_ratio : tuple of float
        Top ``top_k`` ratios (Figure 2).
    top_k : int
        Number of ratios kept (``min(top_k, dim)``).
    sampling : str
        How the vectors were drawn.
    frame : str
        The frame the vectors were drawn from (:data:`~isoeat.diagnostics.frames.FRAMES`).
    seed : int or None
    cosine_matrix : numpy.ndarray or None
        The :math:`N\\times N` matrix (Figure 1) when asked for; not in :meth:`to_dict`.
    """

    model: str
    calibration: str
    mean_cosine: float
    sd_cosine: float
    n_samples: int
    n_requested: int
    dim: int
    isoscore: float
    partition_ratio: float
    explained_variance_ratio: tuple[float, ...]
    top_k: int
    sampling: str
    seed: int | None
    cosine_matrix: np.ndarray | None = field(default=None, repr=False, compare=False)
    cosine_method: str = "exact"
    frame_size: int = 0
    mean_cosine_se: float = 0.0
    sample_mean_cosine: float = math.nan
    sample_sd_cosine: float = math.nan
    sample_mean_cosine_se: float = 0.0
    frame: str = "reference"
    spectrum_method: str = "exact"
    top_pc_share_se: float = 0.0
    sample_isoscore: float = math.nan
    sample_top_pc_share: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        """Plain fields (the cosine matrix left out) for JSON/CSV."""
        return {
            "model": self.model,
            "calibration": self.calibration,
            "mean_cosine": self.mean_cosine,
            "sd_cosine": self.sd_cosine,
            "n_samples": self.n_samples,
            "n_requested": self.n_requested,
            "dim": self.dim,
            "isoscore": self.isoscore,
            "partition_ratio": self.partition_ratio,
            "top_k": self.top_k,
            "explained_variance_ratio": list(self.explained_variance_ratio),
            "sampling": self.sampling,
            "frame": self.frame,
            "seed": self.seed,
            "cosine_method": self.cosine_method,
            "frame_size": self.frame_size,
            "mean_cosine_se": self.mean_cosine_se,
            "sample_mean_cosine": self.sample_mean_cosine,
            "sample_sd_cosine": self.sample_sd_cosine,
            "sample_mean_cosine_se": self.sample_mean_cosine_se,
            "spectrum_method": self.spectrum_method,
            "top_pc_share_se": self.top_pc_share_se,
            "sample_isoscore": self.sample_isoscore,
            "sample_top_pc_share": self.sample_top_pc_share,
        }

    def to_frame(self) -> Any:
        """This result as a one-row :class:`pandas.DataFrame`, columns = :meth:`to_dict` keys (needs pandas)."""
        from ..stats.results import records_frame

        return records_frame([self.to_dict()])


def anisotropy_from_vectors(
    X: Any,
    *,
    top_k: int = 50,
    model: str = "vectors",
    calibration: str = "none",
    sampling: str = "vectors as given",
    seed: int | None = None,
    n_requested: int | None = None,
    return_matrix: bool = False,
    matrix_size: int | None = None,
) -> AnisotropyResult:
    """All anisotropy measures of the rows of ``X``.

    Parameters
    ----------
    X : array_like, shape (N, d)
    top_k : int, default 50
        Explained-variance ratios kept.
    model, calibration, sampling, seed, n_requested
        Recorded in the result.
    return_matrix : bool, default False
        Also keep the :math:`N\\times N` cosine matrix (Figure 1).
    matrix_size : int, optional
        With ``return_matrix``: keep only the top-left ``matrix_size`` square
        of that matrix (the cosines among the first ``matrix_size`` vectors,
        all a heatmap shows); only that block is ever built, so memory stays
        :math:`O(Nd + k^2)` whatever :math:`N`. ``None``: the whole matrix
        (:math:`8N^2` bytes).

    Returns
    -------
    AnisotropyResult

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(500, 8))
    >>> r = anisotropy_from_vectors(X + 5.0)  # a shared offset: strongly anisotropic
    >>> bool(r.mean_cosine > 0.9)
    True
    """
    X = _as_matrix(X)
    top_k = check_int("top_k", top_k, lo=1)
    return_matrix = check_bool("return_matrix", return_matrix)
    if matrix_size is not None:
        matrix_size = check_int("matrix_size", matrix_size, lo=1)
    mean, sd = cosine_stats(X)
    n, d = X.shape
    lam = _covariance_eigenvalues(X)  # one eigendecomposition for the explained variance and the IsoScore
    evr = _ratio_from_eigenvalues(lam, top_k)
    return AnisotropyResult(
        model=model,
        calibration=calibration,
        mean_cosine=mean,
        sd_cosine=sd,
        n_samples=n,
        n_requested=n if n_requested is None else int(n_requested),
        dim=d,
        isoscore=_isoscore_from_eigenvalues(lam) if d >= 2 else float("nan"),
        partition_ratio=partition_ratio(X),
        explained_variance_ratio=tuple(float(v) for v in evr),
        top_k=len(evr),
        sampling=sampling,
        seed=seed,
        cosine_matrix=_result_matrix(X, return_matrix, matrix_size),
        frame_size=n,
        sample_mean_cosine=mean, sample_sd_cosine=sd,
        sample_isoscore=_isoscore_from_eigenvalues(lam) if d >= 2 else float("nan"),
        sample_top_pc_share=float(evr[0]),
    )


def _result_matrix(X: np.ndarray, keep: bool, size: int | None) -> np.ndarray | None:
    if not keep:
        return None
    return pairwise_cosine(X) if size is None else _cosine_corner(_unit_rows(X), size)


def _cal_name(calibration: Any) -> str:
    return getattr(calibration, "name", type(calibration).__name__.lower())


@dataclass(frozen=True)
class AnisotropySettings:
    """What :func:`compare_anisotropy` samples and measures, and what it returns (``settings=``, or each field by
    name: ``compare_anisotropy(m, n_samples=500)``).

    Attributes
    ----------
    n_samples : int
        :math:`N` (paper §4.3), default 2000.
    top_k : int
        The top principal components of the explained variance, default 50.
    frame : str
        Which vectors are sampled (:mod:`isoeat.diagnostics.frames`), default ``"paper"``.
    return_matrix : bool
        Keep each space's cosine matrix (default False).
    matrix_size : int or None
        With ``return_matrix``, only its top-left ``matrix_size`` square.
    """

    n_samples: int = 2000
    top_k: int = 50
    frame: str = "paper"
    return_matrix: bool = False
    matrix_size: int | None = None


@public
def compare_anisotropy(
    model: Any,
    calibration: Any = None,
    *,
    rng: Any = None,
    n_reference: int = 100_000,
    reference_kwargs: dict | None = None,
    force: bool = False,
    reference: Any = None,
    settings: AnisotropySettings | None = None,
    **options: Any,
) -> tuple[AnisotropyResult, ...]:
    """Anisotropy of the raw space and, when given, of the calibrated space on the *same* sample.

    Parameters
    ----------
    model : Encoder
    calibration : None, str, fitted calibrator or one-entry mapping, optional
        As in :func:`isoeat.weat` (a name is fitted here on ``n_reference`` reference vectors); checked with
        :func:`~isoeat.calibration.check_compatible` (``force`` skips the fingerprint check).
    n_samples : int, default 2000
        :math:`N` (paper §4.3). More than the pool holds: all are used, with a warning.
    top_k : int, default 50
    rng : None, int or numpy.random.Generator
        The root seed; the sample is drawn from the stream ``("anisotropy", FRAME)``
        (:func:`isoeat._random.derive_seed`), the same in every command, and
        recorded as ``seed``. A Generator is used as given.
    n_reference : int, default 100_000
        Pool size (see :func:`sample_reference`); ``reference_size=`` is its deprecated spelling.
    reference_kwargs : dict, optional
    force : bool, default False
    return_matrix : bool, default False
    matrix_size : int, optional
        With ``return_matrix``, keep (and build) only the top-left
        ``matrix_size`` square of each cosine matrix; see
        :func:`anisotropy_from_vectors`.
    frame : str, default "paper"
        Which vectors are sampled (:mod:`isoeat.diagnostics.frames`): ``paper`` (the paper's
        protocol: vocabulary items of the reference corpus for a static model, the reference
        sample for a contextual one), ``reference`` (the calibrator's pool), ``vocabulary-top:N``,
        ``vocabulary-all``, ``corpus-types:TEXT`` or ``corpus-tokens:TEXT``; in ``frame`` and ``sampling``.
    reference : ReferenceSpec, optional
        Frame ``reference`` only: the pool as a calibrator's reference sample
        (:func:`sample_reference`), instead of ``n_reference``/``reference_kwargs``.
    settings : AnisotropySettings, optional
        ``n_samples``, ``top_k``, ``frame``, ``return_matrix``, ``matrix_size`` as one object
        (:class:`AnisotropySettings`); each is also a keyword of its own (``**options``), as documented above.

    Returns
    -------
    tuple of AnisotropyResult
        ``(raw,)`` or ``(raw, calibrated)``.

    Examples
    --------
    >>> import isoeat  # doctest: +SKIP
    >>> m = isoeat.load_model("glove-6b-50d")  # doctest: +SKIP
    >>> raw, zca = compare_anisotropy(m, isoeat.fit_calibrator(m, "zca"), rng=0)  # doctest: +SKIP
    """
    chosen = own(AnisotropySettings, settings, options, where="compare_anisotropy", name="settings", last=True)
    require_encoder(model, "compare_anisotropy", needs=("reference_vectors",))
    check_frame_for(model, chosen.frame)  # a frame the model has not: refused before a calibrator is fitted
    cal = resolve_calibration(calibration, model, force=force, n_reference=n_reference,
                              reference_kwargs=reference_kwargs)[0]
    return _anisotropy_results(model, cal, chosen, rng=rng, reference_size=n_reference,
                               reference_kwargs=reference_kwargs, reference=reference, force=force)


def _anisotropy_results(model: Any, calibration: Any, settings: AnisotropySettings, *, rng: Any,
                        reference_size: int, reference_kwargs: dict | None, reference: Any, force: bool,
                        raw: bool = True) -> tuple[AnisotropyResult, ...]:
    """:func:`compare_anisotropy`; ``raw=False`` with a calibrator measures only the calibrated space."""
    n_samples, frame = settings.n_samples, settings.frame
    if calibration is not None:
        from ..calibration import check_compatible

        check_compatible(calibration, model, force=force)
    from .frame_cosine import with_frame
    from .frames import FramePopulation, frame_or_pool, sample_frame

    # the sample of a frame comes from its named stream: every command draws the same rows for the same seed
    rng, root = stream(rng, "anisotropy", frame)
    pooled = frame == "reference" or (frame == "paper" and not isinstance(model, VocabularyModel))  # contextual: pool
    pop, why = (None, "") if pooled else frame_or_pool(model, frame, n_samples)
    if pop is None:
        if reference is not None:  # the calibrator's own reference sample (its ReferenceSpec)
            from ..calibration.sample import reference_sample

            pool = reference_sample(model, reference)
        else:
            pool = model.reference_vectors(reference_size, **(reference_kwargs or {}))
        X, desc, seed = sample_reference(model, n_samples, rng=rng, pool=pool)
        pop = FramePopulation(pool[0], None, None, len(pool[0]), "reference pool")
        if frame == "paper" and not why:
            desc = "frame paper (the reference sample's vectors)" + desc[len("frame reference"):]
        desc = f"{why}; {desc}" if why else desc
    else:
        X, desc, seed = sample_frame(model, frame, n_samples, rng=rng, population=pop)
    if root is not None:
        seed = root
        desc = desc.replace(f"seed {rng}", f"seed {root}, stream anisotropy/{frame}")
    name = name_of(model, "model")
    common: dict[str, Any] = dict(top_k=settings.top_k, model=name, sampling=desc, seed=seed, n_requested=n_samples,
                                  return_matrix=settings.return_matrix, matrix_size=settings.matrix_size)
    used = "reference" if why else frame  # the frame measured: the pool where paper could not be
    out = [_with_spectrum(with_frame(anisotropy_from_vectors(X, calibration="none", **common), pop, X, None, used),
                          pop, X, None)] if raw or calibration is None else []
    if calibration is not None:
        Z = np.asarray(calibration.transform(X), dtype=np.float64)
        out.append(_with_spectrum(with_frame(anisotropy_from_vectors(Z, calibration=_cal_name(calibration), **common),
                                             pop, Z, calibration, used), pop, Z, calibration))
    return tuple(out)


def _with_spectrum(res: AnisotropyResult, pop: Any, sample: np.ndarray, calibration: Any) -> AnisotropyResult:
    """``res`` with its IsoScore and explained variance over the whole frame where that is cheap
    (:func:`~isoeat.diagnostics.frame_spectrum.frame_spectrum`), else the sample's with the top-PC share's SE."""
    from dataclasses import replace

    from .frame_spectrum import frame_spectrum

    f = frame_spectrum(pop, sample, calibration)
    if f.eigenvalues is None:
        return replace(res, spectrum_method=f.method, top_pc_share_se=f.top_pc_share_se)
    lam = f.eigenvalues
    return replace(res, spectrum_method=f.method, top_pc_share_se=0.0,
                   explained_variance_ratio=tuple(float(v) for v in _ratio_from_eigenvalues(lam, res.top_k)),
                   isoscore=_isoscore_from_eigenvalues(lam) if lam.size >= 2 else float("nan"))


def anisotropy(model: Any, calibration: Any = None, **options: Any) -> AnisotropyResult:
    """Anisotropy of one space: raw (``calibration=None``) or calibrated.

    With the same integer ``rng`` the raw and the calibrated call draw the
    same sample; use :func:`compare_anisotropy` to get both from one draw.

    Parameters
    ----------
    model, calibration
        As in :func:`compare_anisotropy`.
    **options
        The keyword options of :func:`compare_anisotropy` (``n_samples``, ``top_k``, ``rng``, ``n_reference``,
        ``reference_kwargs``, ``force``, ``return_matrix``, ``matrix_size``, ``frame``; same defaults; an unknown
        one is a :class:`~isoeat.ConfigError`). Only the space asked for is measured.

    Returns
    -------
    AnisotropyResult
        The calibrated space when ``calibration`` is given, else the raw one.
    """
    import inspect

    # compare_anisotropy's options and defaults; the raw space, which it also measures, is not computed
    bound = checked_bind(inspect.signature(compare_anisotropy), "anisotropy", model, calibration, **options)
    bound.apply_defaults()
    a = dict(bound.arguments)
    chosen = own(AnisotropySettings, a["settings"], dict(a["options"]), where="anisotropy", name="settings",
                 last=True)
    size, kw, force = a["n_reference"], a["reference_kwargs"], a["force"]
    cal = resolve_calibration(calibration, model, force=force, n_reference=size, reference_kwargs=kw)[0]
    return _anisotropy_results(model, cal, chosen, rng=a["rng"], reference_size=size, reference_kwargs=kw,
                               reference=a["reference"], force=force, raw=False)[-1]
