"""Unit rows and cosine similarity: the one home of both (every metric, test and diagnostic uses them).

Cosine is taken on the vectors as given (after calibration when one is
applied), safely for any finite scale: :func:`unit_rows` scales each row by
a power of two before normalising, so a vector times 1e200 or 1e-170 gives
the same cosines as the vector itself; an all-zero or non-finite row is an
error that names the row, never a silent NaN.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._errors import ConfigError, IsoeatError

__all__ = ["unit_rows", "unit_vector", "cosine_matrix", "row_cosines"]


def unit_rows(M: Any, name: str = "M", error: type[IsoeatError] = ConfigError) -> np.ndarray:
    """The rows of ``M`` scaled to unit length, safely for any finite scale.

    Each row is first multiplied by a power of two that brings its largest
    absolute entry into [0.5, 1) (exact in binary floating point), so that its
    norm neither overflows (a vector times 1e200) nor underflows (times
    1e-170); for rows of ordinary scale the result is bit-identical to
    ``M / norm(M)``.

    Raises
    ------
    ConfigError (or ``error``)
        A row that is all zeros or holds NaN/inf (the message names ``name`` and the row).

    Examples
    --------
    >>> unit_rows(np.array([[3e300, 4e300], [3.0, 4.0]]))
    array([[0.6, 0.8],
           [0.6, 0.8]])
    """
    M = np.asarray(M, dtype=np.float64)
    finite = np.isfinite(M).all(axis=1)
    if not finite.all():
        raise error(f"cosine is undefined for a vector that is not finite ({name} row {int(np.argmin(finite))})")
    peak = np.abs(M).max(axis=1, initial=0.0)
    if (peak == 0).any():
        raise error(f"cosine is undefined for an all-zero vector ({name} row {int(np.argmax(peak == 0))})")
    scaled = np.ldexp(M, -np.frexp(peak)[1][:, None])
    return scaled / np.linalg.norm(scaled, axis=1, keepdims=True)


def cosine_matrix(U: np.ndarray, V: np.ndarray) -> np.ndarray:
    r"""Pairwise cosine similarities :math:`\cos(u_i, v_j)`, shape ``(len(U), len(V))``.

    Right for any finite, non-zero vectors, however large or small (see
    :func:`unit_rows`); an all-zero or non-finite row is a :class:`~isoeat.ConfigError`.
    """
    return unit_rows(U, "first matrix") @ unit_rows(V, "second matrix").T


def unit_vector(v: Any, name: str = "v", error: type[IsoeatError] = ConfigError) -> np.ndarray:
    """One vector scaled to unit length (:func:`unit_rows` of a single row)."""
    return unit_rows(np.asarray(v, dtype=np.float64).reshape(1, -1), name, error)[0]


def row_cosines(U: Any, V: Any, name: str = "M", error: type[IsoeatError] = ConfigError) -> np.ndarray:
    r""":math:`\cos(u_i, v_i)` of matching rows, shape ``(len(U),)``.

    Examples
    --------
    >>> row_cosines(np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([[1.0, 1.0], [0.0, -1e-200]]))
    array([ 0.70710678, -1.        ])
    """
    return np.einsum("ij,ij->i", unit_rows(U, name, error), unit_rows(V, name, error))
