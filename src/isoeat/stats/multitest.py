r"""Multiple-testing corrections (adjusted p-values).

Both corrections return adjusted p-values in the order of the input, capped at
1 and monotone in the raw p-values exactly as
``statsmodels.stats.multitest.multipletests`` computes them.

Missing values: NaN inputs are passed through as NaN and are *excluded from the
family*: the family size :math:`m` is the number of non-NaN p-values, as if the
NaN tests had not been run (for example a test skipped for lack of vocabulary
coverage).

With :math:`p_{(1)} \le \dots \le p_{(m)}` the sorted non-NaN p-values:

* Holm (step-down, family-wise error rate):
  :math:`\tilde p_{(i)} = \min\{1, \max_{j \le i} (m - j + 1)\, p_{(j)}\}`.
* Benjamini–Hochberg (step-up, false discovery rate):
  :math:`\tilde p_{(i)} = \min\{1, \min_{j \ge i} \tfrac{m}{j}\, p_{(j)}\}`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from isoeat._errors import ConfigError
from isoeat._validate import check_choice

__all__ = ["holm", "benjamini_hochberg", "adjust", "METHODS"]

METHODS = ("holm", "bh")


def _prepare(pvalues: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    try:
        p = np.asarray(pvalues, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"pvalues must be an array of numbers: {exc}") from None
    flat = p.reshape(-1)
    valid = ~np.isnan(flat)
    vals = flat[valid]
    if np.any((vals < 0.0) | (vals > 1.0)):
        bad = vals[(vals < 0.0) | (vals > 1.0)][:5].tolist()
        raise ConfigError(f"pvalues must lie in [0, 1] (or be NaN); got {bad}")
    return p, valid, vals


def _finish(p: np.ndarray, valid: np.ndarray, adjusted: np.ndarray) -> np.ndarray:
    out = np.full(p.size, np.nan)
    out[valid] = adjusted
    return out.reshape(p.shape)


def _adjusted(pvalues: Any, step: Callable[[np.ndarray, int], np.ndarray]) -> np.ndarray:
    """Sort the non-NaN p-values, apply ``step(sorted_p, m)``, cap at 1, restore input order and NaN."""
    p, valid, vals = _prepare(pvalues)
    m = vals.size
    if m == 0:  # mutation: equivalent[const 0 -> 1] (general path: same for m = 0, 1)
        return _finish(p, valid, vals)
    order = np.argsort(vals, kind="stable")
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, step(vals[order], m))
    return _finish(p, valid, adjusted)


def _holm_step(sorted_p: np.ndarray, m: int) -> np.ndarray:
    factors = m - np.arange(m)  # m, m-1, ..., 1
    return np.maximum.accumulate(factors * sorted_p)


def _bh_step(sorted_p: np.ndarray, m: int) -> np.ndarray:
    scaled = sorted_p * (m / np.arange(1, m + 1))
    return np.minimum.accumulate(scaled[::-1])[::-1]


def _family_doc(func: Callable[..., Any]) -> Callable[..., Any]:
    """Fill the ``Parameters`` section that both corrections share into ``func.__doc__``."""
    if func.__doc__:  # None under python -OO
        func.__doc__ = func.__doc__.replace("    <pvalues>\n", _PVALUES_DOC)
    return func


_PVALUES_DOC = """    Parameters
    ----------
    pvalues : array_like
        Raw p-values in [0, 1]; NaN entries are returned as NaN and do not
        count towards the family size :math:`m`.
"""


@_family_doc
def holm(pvalues: Any) -> np.ndarray:
    r"""Holm step-down adjusted p-values.

    .. math::

        \tilde p_{(i)} = \min\Bigl\{1,\ \max_{j \le i}\,(m - j + 1)\,p_{(j)}\Bigr\}

    <pvalues>

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, same shape and order as the input.
    """
    return _adjusted(pvalues, _holm_step)


@_family_doc
def benjamini_hochberg(pvalues: Any) -> np.ndarray:
    r"""Benjamini–Hochberg step-up adjusted p-values (false discovery rate).

    .. math::

        \tilde p_{(i)} = \min\Bigl\{1,\ \min_{j \ge i}\,\frac{m}{j}\,p_{(j)}\Bigr\}

    <pvalues>

    Returns
    -------
    numpy.ndarray
        Adjusted p-values ("q-values"), same shape and order as the input.
    """
    return _adjusted(pvalues, _bh_step)


def adjust(pvalues: Any, method: str = "holm") -> np.ndarray:
    """Adjusted p-values with ``method`` ``"holm"`` (:func:`holm`) or ``"bh"``
    (:func:`benjamini_hochberg`); NaN entries pass through and are excluded
    from the family size."""
    method = check_choice("method", method, METHODS)
    return holm(pvalues) if method == "holm" else benjamini_hochberg(pvalues)
