r"""Ranks and Spearman's ρ: the one home of rank statistics in isoeat.

Average ranks for ties (1-based; a tie group gets the mean of the ranks it
spans), as :func:`scipy.stats.rankdata` with ``method="average"``, and
Spearman's ρ as the Pearson correlation of those ranks, as
:func:`scipy.stats.spearmanr`:

.. math::

    \rho = \operatorname{corr}\big(\operatorname{rank}(x), \operatorname{rank}(y)\big)

:func:`tie_groups` is the shared first step (one stable sort, one pass over
the tie groups); the paired bootstrap
(:mod:`isoeat.similarity.bootstrap`) builds its resampled ranks on it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._errors import ConfigError, DataFormatError

__all__ = ["tie_groups", "rankdata", "spearman"]


def tie_groups(x: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stable sort order, tie groups' starts (in sorted order) and each element's group.

    Parameters
    ----------
    x : array_like, shape (n,)

    Returns
    -------
    order : numpy.ndarray of intp
        ``np.argsort(x, kind="stable")``.
    starts : numpy.ndarray of intp
        Sorted position where each group of equal values begins (ascending).
    group : numpy.ndarray of intp
        ``group[i]``: index of the group of ``x[i]`` (0 for the smallest value).

    Examples
    --------
    >>> order, starts, group = tie_groups([10, 30, 20, 20])
    >>> starts.tolist(), group.tolist()
    ([0, 1, 3], [0, 2, 1, 1])
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    order = np.argsort(x, kind="stable")
    xs = x[order]
    new = np.empty(len(x), dtype=bool)
    new[:1] = True
    new[1:] = xs[1:] != xs[:-1]
    group = np.empty(len(x), dtype=np.intp)
    group[order] = np.cumsum(new) - 1
    return order, np.flatnonzero(new), group


def rankdata(x: Any) -> np.ndarray:
    """Average ranks (1-based; ties get the mean of their ranks), as ``scipy.stats.rankdata``.

    Examples
    --------
    >>> rankdata([10, 30, 20, 20]).tolist()
    [1.0, 4.0, 2.5, 2.5]
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    _, starts, group = tie_groups(x)
    ends = np.append(starts[1:], len(x))
    avg = (starts + ends + 1) / 2.0  # mean of the 1-based ranks starts+1 .. ends
    return avg[group]


def spearman(x: Any, y: Any) -> float:
    """Spearman's ρ: Pearson correlation of average ranks.

    Parameters
    ----------
    x, y : array_like, shape (n,), n >= 2

    Returns
    -------
    float

    Raises
    ------
    DataFormatError
        Either input is constant (ρ undefined) or not finite.

    Examples
    --------
    >>> round(spearman([1, 2, 3, 4], [10, 20, 40, 30]), 6)
    0.8
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if len(x) != len(y):
        raise ConfigError(f"x and y must have the same length, got {len(x)} and {len(y)}")
    if len(x) < 2:
        raise ConfigError(f"Spearman's rho needs at least 2 pairs, got {len(x)}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise DataFormatError("Spearman's rho: inputs contain NaN or inf")
    rx = rankdata(x)
    ry = rankdata(y)
    rx -= rx.mean()
    ry -= ry.mean()
    den = math.sqrt(float(rx @ rx) * float(ry @ ry))
    if den == 0:
        raise DataFormatError("Spearman's rho is undefined: one of the inputs is constant")
    return float(rx @ ry) / den
