"""Parameter checks shared by the permutation test modules (one home per kind of parameter)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from isoeat._errors import ConfigError


def _as_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    return int(value)


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


def _check_choice(value: Any, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ConfigError(
            f"{name} must be one of {', '.join(repr(a) for a in allowed)}; got {value!r}"
        )
    return value


def _check_n_x(n_x: Any, n: int) -> int:
    n_x = _as_int(n_x, "n_x")
    if n_x < 1 or n - n_x < 1:
        raise ConfigError(
            f"n_x must satisfy 1 <= n_x <= n - 1 (both sides non-empty); got n_x={n_x}, n={n}"
        )
    return n_x


def _check_confidence(confidence: Any) -> float:
    try:
        c = float(confidence)
    except (TypeError, ValueError):
        raise ConfigError(f"confidence must be a number in (0, 1), got {confidence!r}") from None
    if not 0.0 < c < 1.0:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence!r}")
    return c

