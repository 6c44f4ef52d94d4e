r"""Why d moved (paper §5.4–5.5): how much of a WEAT's contrast lies along the directions ZCA shrinks.

WEAT's effect size is :math:`d = C/\operatorname{SD}_{X\cup Y}(s)` with the
*contrast*

.. math::

    C = \frac{1}{|X|}\sum_{x\in X} s(x) - \frac{1}{|Y|}\sum_{y\in Y} s(y),\qquad
    s(w) = \frac{1}{|A|}\sum_{a\in A}\cos(w,a) - \frac{1}{|B|}\sum_{b\in B}\cos(w,b).

The cosine is an inner product of unit vectors, :math:`\cos(w,a) = \hat w^\top\hat a`,
and an inner product decomposes exactly over any orthonormal basis
:math:`u_1,\dots,u_d`: :math:`\hat w^\top\hat a = \sum_k (\hat w^\top u_k)(\hat a^\top u_k)`.
Since :math:`C` is bilinear in the unit vectors,

.. math::

    C = \Delta_T^\top \Delta_{AB} = \sum_{k=1}^{d} c_k,\qquad
    c_k = (u_k^\top \Delta_T)\,(u_k^\top \Delta_{AB}),

    \Delta_T = \overline{\hat x}_X - \overline{\hat y}_Y,\qquad
    \Delta_{AB} = \overline{\hat a}_A - \overline{\hat b}_B,

the difference of the mean unit target vectors and of the mean unit attribute
vectors. isoeat takes :math:`u_k` to be the eigenvectors of the *reference
covariance* :math:`\Sigma = U\Lambda U^\top` that ZCA uses, ordered by
eigenvalue :math:`\lambda_1\ge\dots\ge\lambda_d`, so :math:`c_k` is the part of
the raw contrast carried by the :math:`k`-th principal direction of the
reference. The *share* of the top :math:`k` directions is
:math:`\sum_{j\le k} c_j / C` (it can exceed 1 or be negative: the :math:`c_j`
have signs and can cancel), and the *absolute share*
:math:`\sum_{j\le k}|c_j| / \sum_j |c_j|` lies in :math:`[0, 1]`.

ZCA, :math:`z = U(\Lambda+\varepsilon I)^{-1/2}U^\top(x-\mu)`, multiplies the
:math:`k`-th coordinate by :math:`(\lambda_k+\varepsilon)^{-1/2}`. Relative to
a direction of median variance :math:`\tilde\lambda` that is the *shrink
factor*

.. math::

    f_k = \sqrt{\frac{\tilde\lambda+\varepsilon}{\lambda_k+\varepsilon}},

below 1 for the high-variance directions (each coordinate's term of an inner
product is scaled by :math:`f_k^2`, before the renormalisation of the cosine).
The calibrated contrast :math:`C_W` is decomposed over the images of the
same directions, :math:`v_k = Wu_k/\lVert Wu_k\rVert` (:math:`W` the
calibrator's linear part: :math:`v_k = u_k` for ZCA, the :math:`k`-th axis for
PCA whitening), so :math:`c^W_k` shows what is left of each direction's part
after calibration (recorded as NaN when the images are not orthonormal). A raw contrast concentrated in the
top directions that whitening shrinks is the geometric reason a d falls (Disappearing); a contrast
hidden under them, in directions whitening restores, the reason it rises
(Emerging).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._cosine import unit_rows

__all__ = ["MECHANISM_TOP", "SHARE_KS", "contrast_components", "mechanism_from_vectors"]

#: Directions kept per test in the stored record (the figure's bars).
MECHANISM_TOP = 10
#: The k of the reported top-k shares.
SHARE_KS = (1, 3, 10)


def _unit_mean(V: np.ndarray) -> np.ndarray:
    return unit_rows(V, "vectors").mean(axis=0)


def contrast_components(X: Any, Y: Any, A: Any, B: Any, basis: Any) -> np.ndarray:
    r""":math:`c_k = (u_k^\top\Delta_T)(u_k^\top\Delta_{AB})` for every column :math:`u_k` of ``basis``.

    ``X, Y, A, B``: the word vectors (rows) of a test in one space; ``basis``:
    a :math:`d\times d` orthonormal matrix (columns :math:`u_k`). The sum of
    the result is the contrast :math:`C` (see the module docstring).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, Y, A, B = (rng.normal(size=(4, 3)) for _ in range(4))
    >>> c = contrast_components(X, Y, A, B, np.eye(3))
    >>> unit = lambda M: M / np.linalg.norm(M, axis=1, keepdims=True)
    >>> s = lambda W: (unit(W) @ unit(A).T).mean(1) - (unit(W) @ unit(B).T).mean(1)
    >>> bool(np.isclose(c.sum(), s(X).mean() - s(Y).mean()))
    True
    """
    U = np.asarray(basis, dtype=np.float64)
    dt = _unit_mean(X) - _unit_mean(Y)
    dab = _unit_mean(A) - _unit_mean(B)
    return (U.T @ dt) * (U.T @ dab)


def _shares(c: np.ndarray, ks: tuple[int, ...]) -> tuple[dict[str, float], dict[str, float]]:
    total, mass = float(c.sum()), float(np.abs(c).sum())
    signed = {str(k): (float(c[:k].sum()) / total if total != 0 else float("nan")) for k in ks}
    absolute = {str(k): (float(np.abs(c[:k]).sum()) / mass if mass > 0 else float("nan")) for k in ks}
    return signed, absolute


def mechanism_from_vectors(sets: dict[str, Any], calibrator: Any, *, top: int = MECHANISM_TOP) -> dict[str, Any] | None:
    r"""The mechanism record of one test: :math:`c_k` raw and calibrated along the reference's principal directions.

    Parameters
    ----------
    sets : dict
        ``{"X", "Y", "A", "B"}`` to raw word vectors (rows).
    calibrator : fitted calibrator
        With ``eigenvalues_`` and ``eigenvectors_`` of the reference covariance
        (ZCA and its variants) and ``transform``; ``None`` is returned for any
        other (no principal directions to decompose along).
    top : int
        Directions kept in the record (the top ``top`` by eigenvalue).

    Returns
    -------
    dict or None
        ``contrast_raw``/``contrast_calibrated`` (:math:`C`, :math:`C_W`),
        ``sum_check_raw`` (:math:`\sum_k c_k - C` over all :math:`d`
        directions, computed from :math:`s` directly: a rounding-size number),
        ``eigenvalues``, ``shrink`` (:math:`f_k`), ``c_raw``, ``c_calibrated``
        (the top ``top``), ``share_raw``/``share_calibrated`` and
        ``abs_share_raw``/``abs_share_calibrated`` at ``k`` in :data:`SHARE_KS`,
        ``eps``, ``dim``.
    """
    evals = getattr(calibrator, "eigenvalues_", None)
    evecs = getattr(calibrator, "eigenvectors_", None)
    if evals is None or evecs is None or any(len(sets[k]) < 1 for k in "XYAB"):
        return None
    evals = np.asarray(evals, dtype=np.float64)
    order = np.argsort(evals)[::-1]
    lam, U = evals[order], np.asarray(evecs, dtype=np.float64)[:, order]
    eps = float(getattr(calibrator, "eps_", getattr(calibrator, "eps", 0.0)) or 0.0)
    raw = {k: np.asarray(v, dtype=np.float64) for k, v in sets.items()}
    cal = {k: np.asarray(calibrator.transform(v), dtype=np.float64) for k, v in raw.items()}
    c_raw = contrast_components(raw["X"], raw["Y"], raw["A"], raw["B"], U)
    V = _image_basis(calibrator, U)
    c_cal = (contrast_components(cal["X"], cal["Y"], cal["A"], cal["B"], V) if V is not None
             else np.full(lam.size, np.nan))
    C = float(_s(raw, "X").mean() - _s(raw, "Y").mean())
    C_w = float(_s(cal, "X").mean() - _s(cal, "Y").mean())
    ks = tuple(k for k in SHARE_KS if k <= lam.size)
    share_raw, abs_raw = _shares(c_raw, ks)
    share_cal, abs_cal = _shares(c_cal, ks)
    med = float(np.median(lam))
    shrink = np.sqrt((med + eps) / np.maximum(lam + eps, np.finfo(float).tiny))
    n = min(int(top), lam.size)
    return {
        "contrast_raw": C, "contrast_calibrated": C_w, "sum_check_raw": float(c_raw.sum()) - C,
        "dim": int(lam.size), "eps": eps, "eigenvalues": lam[:n].tolist(), "shrink": shrink[:n].tolist(),
        "c_raw": c_raw[:n].tolist(), "c_calibrated": c_cal[:n].tolist(),
        "share_raw": share_raw, "share_calibrated": share_cal,
        "abs_share_raw": abs_raw, "abs_share_calibrated": abs_cal,
    }


def _image_basis(calibrator: Any, U: np.ndarray) -> np.ndarray | None:
    """The calibrated space's direction of each u_k: W u_k normalised (W the calibrator's linear part).

    ZCA maps u_k to a multiple of itself; PCA whitening to the k-th axis. The
    images must be orthonormal for the calibrated contrast to decompose
    exactly over them; None when they are not (or one vanishes).
    """
    d = U.shape[0]
    base = np.asarray(calibrator.transform(np.zeros((1, d))), dtype=np.float64)
    img = np.asarray(calibrator.transform(U.T), dtype=np.float64) - base  # row k: W u_k
    norms = np.linalg.norm(img, axis=1, keepdims=True)
    if img.shape != (d, d) or not np.all(norms > 0):
        return None
    V = (img / norms).T
    return V if np.allclose(V.T @ V, np.eye(d), atol=1e-8) else None


def _s(space: dict[str, np.ndarray], t: str) -> np.ndarray:
    """s(w) of the rows of ``space[t]`` straight from the cosines (the check on the decomposition)."""
    W = unit_rows(space[t], t)
    return (W @ unit_rows(space["A"], "A").T).mean(axis=1) - (W @ unit_rows(space["B"], "B").T).mean(axis=1)
