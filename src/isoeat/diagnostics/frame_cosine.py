r"""Mean and SD of the pairwise cosines of a whole sampling frame, exactly, and the sampling SE of a sample's mean.

The paper's anisotropy figure (§4.3, Table 2) is the mean pairwise cosine of
2,000 vectors drawn from a frame. That figure estimates the mean over *all*
pairs of the frame, which the Gram identity gives exactly in
:math:`O(Nd^2)` time and :math:`O(bd + d^2)` memory (rows read :math:`b` at a
time). With unit rows :math:`u_i` (weights :math:`w_i`: the copies of a row,
for token frames; 1 otherwise), :math:`W = \sum_i w_i` vectors,
:math:`s = \sum_i w_i u_i` and :math:`G = \sum_i w_i u_i u_i^\top`, over the
:math:`W(W-1)` ordered pairs of distinct vectors:

.. math::

    \bar c = \frac{\lVert s\rVert^2 - \sum_i w_i\lVert u_i\rVert^2}{W(W-1)},\qquad
    \overline{c^2} = \frac{\lVert G\rVert_F^2 - \sum_i w_i\lVert u_i\rVert^4}{W(W-1)},\qquad
    \mathrm{SD} = \sqrt{\overline{c^2} - \bar c^{\,2}}.

(:math:`\lVert u_i\rVert = 1` up to rounding; what was added is subtracted.)

**The sampling SE of the sample's mean.** A sample of :math:`n` of the
:math:`W` vectors drawn without replacement gives the pair mean
:math:`U = T/\binom n2`, :math:`T = \sum_{\{p,q\}\subset S} h_{pq}`. With
:math:`h' = h - \bar c` (which shifts :math:`T` by a constant),
:math:`A' = \sum_{p<q} h'^2_{pq} = \binom W2\,\mathrm{SD}^2` and
:math:`r'_p = \sum_{q\ne p} h'_{pq}`, counting the pairs of pairs that share
two, one or no vector (inclusion probabilities
:math:`\pi_2 = \frac{n(n-1)}{W(W-1)}`, :math:`\pi_3 = \pi_2\frac{n-2}{W-2}`,
:math:`\pi_4 = \pi_3\frac{n-3}{W-3}`):

.. math::

    \operatorname{Var} T = (\pi_2 - 2\pi_3 + \pi_4)\,A' + (\pi_3 - \pi_4)\sum_p r'^2_p ,

exact for sampling without replacement (the tests check it against every
subset of small frames). :math:`\sum_p r_p^2 = s^\top G s - 2 s^\top t + \sum_i
w_i\lVert u_i\rVert^4` with :math:`t = \sum_i w_i\lVert u_i\rVert^2 u_i`, so
one pass over the rows gives everything. Beyond :data:`EXACT_BUDGET` the
frame is not summed; the SE of a sample's mean is then estimated from the
sample alone (:func:`sample_mean_se`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._cosine import unit_rows
from .._errors import DataFormatError

__all__ = ["EXACT_BUDGET", "CosineMoments", "cosine_moments", "pair_mean_variance", "sample_mean_se",
           "within_budget", "FrameCosine", "frame_cosine"]

#: Largest rows x d^2 (multiply-adds of the Gram matrix) for which a frame's pairwise cosines are summed
#: exactly: 100,000 rows at d = 1,000 (seconds on 2 cores); GloVe 50d's 400,000 rows cost 1e9.
EXACT_BUDGET = 1e11
#: Rows read at a time (memory: this many rows of the frame, and of its calibrated copy, as float64).
BLOCK_ROWS = 8192


def within_budget(rows: int, dim: int) -> bool:
    """Whether a frame of ``rows`` vectors of dimension ``dim`` is summed exactly (rows x dim^2 <= budget)."""
    return float(rows) * float(dim) ** 2 <= EXACT_BUDGET


@dataclass(frozen=True)
class CosineMoments:
    """One pass over a (weighted) set of unit rows: what the exact mean, SD and sampling SE need.

    Attributes
    ----------
    count : int
        :math:`W`, the vectors (a row with weight :math:`w` counts :math:`w` times).
    mean, sd : float
        Mean and population SD of the :math:`W(W-1)` off-diagonal pairwise cosines.
    sum_r2 : float
        :math:`\\sum_p r'^2_p`, the squared row sums of the centred cosines (see the module docstring).
    """

    count: int
    mean: float
    sd: float
    sum_r2: float


def cosine_moments(blocks: Iterable[tuple[np.ndarray, np.ndarray | None]], transform: Any = None) -> CosineMoments:
    """The moments of the pairwise cosines of every row of ``blocks`` (``(rows, weights or None)`` pairs).

    ``transform`` (a calibrator) is applied to each block before the rows are
    normalised. Memory: one block and four arrays of size :math:`d^2`.

    Examples
    --------
    >>> m = cosine_moments([(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), None)])
    >>> round(m.mean, 6), round(m.sd, 6), m.count
    (0.471405, 0.333333, 3)
    """
    W = 0.0
    s = G = t = None
    sq = sq4 = 0.0
    for X, w in blocks:
        X = np.asarray(X, dtype=np.float64)
        if transform is not None:
            X = np.asarray(transform.transform(X), dtype=np.float64)
        U = unit_rows(X, "frame", DataFormatError)
        n2 = np.einsum("ij,ij->i", U, U)
        if s is None:
            d = U.shape[1]
            s, t, G = np.zeros(d), np.zeros(d), np.zeros((d, d))
        if w is None:
            w = np.ones(len(U))
            G += U.T @ U  # a symmetric product (BLAS syrk), several times faster than a general one
        else:
            w = np.asarray(w, dtype=np.float64)
            V = U * np.sqrt(w)[:, None]
            G += V.T @ V
        s += w @ U
        t += (w * n2) @ U
        W += float(w.sum())
        sq += float(w @ n2)
        sq4 += float(w @ n2**2)
    if s is None or t is None or G is None or W < 2:  # s, t and G are set together
        raise DataFormatError(f"a frame needs at least 2 vectors for pairwise cosines, got {int(W)}")
    pairs = W * (W - 1.0)
    mean = (float(s @ s) - sq) / pairs
    mean_sq = (float(np.einsum("ij,ij->", G, G)) - sq4) / pairs
    sum_r2 = float(s @ G @ s) - 2.0 * float(s @ t) + sq4  # sum_p r_p^2 of the uncentred row sums
    sum_r2 -= W * (W - 1.0) ** 2 * mean * mean  # centred: r'_p = r_p - (W-1) mean
    return CosineMoments(int(round(W)), mean, math.sqrt(max(mean_sq - mean * mean, 0.0)), max(sum_r2, 0.0))


def pair_mean_variance(m: CosineMoments, n: int) -> float:
    """Variance of the mean pairwise cosine of ``n`` vectors drawn without replacement from the frame ``m``.

    Exact (the module docstring's formula); 0 when ``n`` is the whole frame.

    Examples
    --------
    Three vectors, samples of two: the pair mean is one of the three cosines, each with probability 1/3.

    >>> m = cosine_moments([(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), None)])
    >>> c = np.array([0.0, 2 ** -0.5, 2 ** -0.5])
    >>> bool(abs(pair_mean_variance(m, 2) - c.var()) < 1e-15)
    True
    """
    N = m.count
    n = int(n)
    if n >= N:
        return 0.0
    if n < 2:
        return math.nan
    p2 = n * (n - 1) / (N * (N - 1))
    p3 = p2 * (n - 2) / (N - 2) if N > 2 else 0.0
    p4 = p3 * (n - 3) / (N - 3) if N > 3 else 0.0
    a = N * (N - 1) / 2.0 * m.sd**2
    var_t = (p2 - 2.0 * p3 + p4) * a + (p3 - p4) * m.sum_r2
    return max(var_t, 0.0) / (n * (n - 1) / 2.0) ** 2


def sample_mean_se(X: np.ndarray, frame_count: int | None = None) -> float:
    r"""Estimated SE of the mean pairwise cosine of the sample ``X`` (rows), from the sample alone.

    The U-statistic variance :math:`\frac{4(n-2)}{n(n-1)}\zeta_1 + \frac{2}{n(n-1)}\zeta_2`
    with :math:`\hat\zeta_2 = \mathrm{SD}^2` of the sample's pairs and
    :math:`\hat\zeta_1` the variance over the sample of each vector's mean
    cosine with the others, less its own noise :math:`\hat\zeta_2/(n-1)`;
    the first term is multiplied by the finite-population factor
    :math:`(W-n)/(W-1)` when the frame's size ``frame_count`` is known. The
    tests check it against the spread of the mean over repeated samples.
    """
    U = unit_rows(np.asarray(X, dtype=np.float64), "sample", DataFormatError)
    n = U.shape[0]
    if n < 3:
        return math.nan
    m = cosine_moments([(U, None)])
    row_means = (U @ U.sum(axis=0) - 1.0) / (n - 1)  # each vector's mean cosine with the others
    zeta2 = m.sd**2
    zeta1 = max(float(np.var(row_means)) - zeta2 / (n - 1), 0.0)
    fpc = 1.0 if not frame_count or frame_count <= 1 else max(frame_count - n, 0) / (frame_count - 1)
    return math.sqrt(4.0 * (n - 2) / (n * (n - 1)) * zeta1 * fpc + 2.0 / (n * (n - 1)) * zeta2)


@dataclass(frozen=True)
class FrameCosine:
    """The mean and SD of pairwise cosine of a frame, how they were obtained, and the sample's SE.

    Attributes
    ----------
    method : str
        ``"exact"`` (every pair of the frame; the sample is the frame, or the
        frame was summed within :data:`EXACT_BUDGET`) or ``"sampled"`` (the
        sample's figures, the frame being over the budget).
    frame_size : int
        Vectors in the frame.
    mean, sd : float
        The frame's figures (exact) or the sample's (sampled).
    mean_se : float
        SE of ``mean``: 0 when exact, else :func:`sample_mean_se`.
    sample_mean_se : float
        SE of the sample's mean over samples of its size from the frame
        (exact formula when the frame was summed, else the estimate).
    """

    method: str
    frame_size: int
    mean: float
    sd: float
    mean_se: float
    sample_mean_se: float


def frame_cosine(blocks: Any, frame_size: int, sample: np.ndarray, sample_stats: tuple[float, float],
                 transform: Any = None) -> FrameCosine:
    """:class:`FrameCosine` of a frame of ``frame_size`` vectors read by ``blocks()`` (see :func:`cosine_moments`).

    ``sample`` holds the sampled vectors (after ``transform`` when one is
    given: the calibrated space) and ``sample_stats`` their mean and SD.
    """
    n, dim = sample.shape
    if frame_size <= n:  # the sample is the whole frame
        return FrameCosine("exact", n, sample_stats[0], sample_stats[1], 0.0, 0.0)
    if within_budget(frame_size, dim):
        m = cosine_moments(blocks(), transform)
        return FrameCosine("exact", m.count, m.mean, m.sd, 0.0, math.sqrt(pair_mean_variance(m, n)))
    se = sample_mean_se(sample, frame_size)
    return FrameCosine("sampled", frame_size, sample_stats[0], sample_stats[1], se, se)


def with_frame(res: Any, pop: Any, sample: np.ndarray, calibration: Any, frame: str) -> Any:
    """An :class:`~isoeat.diagnostics.anisotropy.AnisotropyResult` with its frame named and its mean and SD of
    pairwise cosine over the whole frame ``pop`` where that is cheap (exact; :func:`frame_cosine`)."""
    from dataclasses import replace

    f = frame_cosine(pop.blocks, pop.count, sample, (res.mean_cosine, res.sd_cosine), calibration)
    return replace(res, frame=frame, mean_cosine=f.mean, sd_cosine=f.sd, cosine_method=f.method,
                   frame_size=f.frame_size, mean_cosine_se=f.mean_se, sample_mean_cosine_se=f.sample_mean_se)
