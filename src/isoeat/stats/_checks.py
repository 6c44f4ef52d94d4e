"""Parameter checks shared by the statistics modules.

Scalar parameters go through :mod:`isoeat._validate` (one validator per kind
of parameter); this module only adds the checks that are specific to the
statistics: the score vector ``s`` and the size of the X side.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from isoeat._errors import ConfigError
from isoeat._validate import check_int, check_real


def _as_scores(s: Any) -> np.ndarray:
    try:
        arr = np.asarray(s, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"s must be a 1-D array of real numbers: {exc}") from None
    if arr.ndim != 1:
        raise ConfigError(f"s must be 1-D, got shape {arr.shape}")
    if arr.size < 2:
        raise ConfigError(f"s must contain at least 2 values, got {arr.size}")
    if np.isnan(arr).any():
        raise ConfigError(
            f"s contains NaN at positions {np.flatnonzero(np.isnan(arr))[:10].tolist()}"
        )
    if np.isinf(arr).any():
        raise ConfigError(
            "s contains infinite values at positions "
            f"{np.flatnonzero(np.isinf(arr))[:10].tolist()}"
        )
    return arr


def _check_n_x(n_x: Any, n: int) -> int:
    """``n_x`` with both sides of the partition non-empty: ``1 <= n_x <= n - 1``."""
    n_x = check_int("n_x", n_x)
    if n_x < 1 or n - n_x < 1:
        raise ConfigError(
            f"n_x must satisfy 1 <= n_x <= n - 1 (both sides non-empty); got n_x={n_x}, n={n}"
        )
    return n_x


def _check_level(name: str, value: Any) -> float:
    """A two-sided confidence level in the open interval (0, 1)."""
    return check_real(name, value, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
