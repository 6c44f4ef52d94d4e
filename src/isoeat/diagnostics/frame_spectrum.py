r"""The covariance spectrum of a whole sampling frame (top-PC share, IsoScore), exactly, or a sample's with its SE.

The isotropy check's top-PC share :math:`\lambda_1/\sum_j\lambda_j` and the
IsoScore are functions of the eigenvalues of the *centred* covariance of the
vectors (:func:`isoeat.diagnostics.anisotropy.explained_variance_ratio`, the
paper's Figure 2). Computed on 2,000 sampled vectors they are estimates with
sampling error; the frame's covariance is :math:`d \times d`, so the frame's
own figures are exact in one pass over its rows (weights :math:`w_i`: the
copies of a row in a token frame), :math:`O(Nd^2)` time and :math:`O(d^2)`
memory, within the same :data:`~isoeat.diagnostics.frame_cosine.EXACT_BUDGET`
as the exact mean cosine:

.. math::

    W = \sum_i w_i,\qquad \mu = \frac1W\sum_i w_i x_i,\qquad
    \Sigma = \frac{1}{W-1}\sum_i w_i (x_i - \mu)(x_i - \mu)^\top

(accumulated about the first block's mean, which leaves :math:`\Sigma`
unchanged and keeps the sums small). The ratios are scale-free, so the
:math:`W-1` is the sample covariance's convention and changes nothing.

Beyond the budget the sample's figures stand, and the top-PC share
:math:`r = \lambda_1/\operatorname{tr}\Sigma` carries a delta-method SE from
its influence function (:math:`v_1` the top eigenvector, :math:`x` centred):

.. math::

    \operatorname{IF}(x) = \frac{(v_1^\top x)^2 - \lambda_1 - r\,(\lVert x\rVert^2 - \operatorname{tr}\Sigma)}
                                {\operatorname{tr}\Sigma},
    \qquad \mathrm{SE}(r) = \sqrt{\frac{\operatorname{Var}\operatorname{IF}}{n}\cdot\frac{N - n}{N - 1}}

(the second factor: sampling without replacement from a frame of :math:`N`).
The isotropy check marks its verdict *borderline* when the threshold lies
within 2 SE of a sampled share (:mod:`isoeat.diagnostics.isotropy_check`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import DataFormatError
from .frame_cosine import within_budget

__all__ = ["frame_covariance", "top_pc_share_se", "FrameSpectrum", "frame_spectrum"]


def frame_covariance(blocks: Iterable[tuple[np.ndarray, np.ndarray | None]], transform: Any = None) -> np.ndarray:
    """The centred covariance (``W - 1``) of every row of ``blocks`` (``(rows, weights or None)`` pairs).

    ``transform`` (a calibrator) is applied to each block first.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 3.0]])
    >>> bool(np.allclose(frame_covariance([(X[:2], None), (X[2:], None)]), np.cov(X.T)))
    True
    >>> bool(np.allclose(frame_covariance([(X[:2], np.array([2, 1]))]), np.cov(X[[0, 0, 1]].T)))
    True
    """
    W = 0.0
    shift = s = S = None
    for X, w in blocks:
        X = np.asarray(X, dtype=np.float64)
        if transform is not None:
            X = np.asarray(transform.transform(X), dtype=np.float64)
        if shift is None:
            shift = X.mean(axis=0)
            s, S = np.zeros(X.shape[1]), np.zeros((X.shape[1], X.shape[1]))
        Y = X - shift
        wt = np.ones(len(Y)) if w is None else np.asarray(w, dtype=np.float64)
        s += wt @ Y
        V = Y * np.sqrt(wt)[:, None]
        S += V.T @ V
        W += float(wt.sum())
    if s is None or S is None or W < 2:
        raise DataFormatError(f"a frame needs at least 2 vectors for a covariance, got {int(W)}")
    return (S - np.outer(s, s) / W) / (W - 1.0)


def top_pc_share_se(X: np.ndarray, frame_size: int | None = None) -> float:
    """Delta-method SE of the top-PC share of the sample ``X`` (module docstring); NaN below 3 rows.

    ``frame_size``: the frame the rows were drawn from without replacement (the
    finite-population factor; ``None``: an infinite one).
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 3:
        return math.nan
    Xc = X - X.mean(axis=0)
    lam, vec = np.linalg.eigh(Xc.T @ Xc / (n - 1))
    tr = float(lam.sum())
    if tr <= 0:
        return math.nan
    r = float(lam[-1]) / tr
    infl = ((Xc @ vec[:, -1]) ** 2 - lam[-1] - r * (np.einsum("ij,ij->i", Xc, Xc) - tr)) / tr
    fpc = 1.0 if not frame_size or frame_size <= 1 else max(frame_size - n, 0) / (frame_size - 1)
    return math.sqrt(float(np.var(infl, ddof=1)) / n * fpc)


@dataclass(frozen=True)
class FrameSpectrum:
    """How a result's IsoScore and top-PC share were obtained (:func:`frame_spectrum`).

    Attributes
    ----------
    method : str
        ``"exact"`` (the frame's covariance; or the sample is the whole frame) or ``"sampled"``.
    eigenvalues : numpy.ndarray or None
        The frame's covariance eigenvalues, decreasing (None: keep the sample's).
    top_pc_share_se : float
        0 when exact, else :func:`top_pc_share_se` of the sample.
    """

    method: str
    eigenvalues: np.ndarray | None
    top_pc_share_se: float


def frame_spectrum(pop: Any, sample: np.ndarray, calibration: Any = None) -> FrameSpectrum:
    """The covariance spectrum of the frame ``pop`` (a :class:`~isoeat.diagnostics.frames.FramePopulation`)
    where it is within the budget, else the SE of the ``sample``'s top-PC share (``sample`` already transformed)."""
    n, dim = sample.shape
    if pop.count <= n:  # the sample is the whole frame
        return FrameSpectrum("exact", None, 0.0)
    if not within_budget(pop.count, dim):
        return FrameSpectrum("sampled", None, top_pc_share_se(sample, pop.count))
    lam = np.clip(np.linalg.eigvalsh(frame_covariance(pop.blocks(), calibration))[::-1], 0.0, None)
    return FrameSpectrum("exact", lam, 0.0)
