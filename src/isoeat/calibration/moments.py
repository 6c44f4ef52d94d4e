r"""Mergeable first and second moments (Chan, Golub & LeVeque 1979).

A :class:`CovarianceAccumulator` holds the count :math:`n`, the mean
:math:`\mu` and the co-moment matrix :math:`M = \sum_i (x_i-\mu)(x_i-\mu)^\top`
of the vectors it has seen, in float64. Two accumulators over disjoint data
merge exactly (up to rounding) with the pairwise update

.. math::

    n = n_a + n_b,\quad \delta = \mu_b - \mu_a,\quad
    \mu = \mu_a + \delta\,\frac{n_b}{n},\quad
    M = M_a + M_b + \delta\delta^\top \frac{n_a n_b}{n},

so statistics computed on any partition of the data (batches, shards,
workers) give the same covariance :math:`\Sigma = M/(n-1)`. Memory is
:math:`O(d^2)` whatever :math:`n` is.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from .._errors import ConfigError, DataFormatError, DimensionMismatchError

__all__ = ["CovarianceAccumulator"]


class CovarianceAccumulator:
    """Streaming, mergeable mean and covariance.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3))
    >>> acc = CovarianceAccumulator().update(X[:30]).merge(CovarianceAccumulator().update(X[30:]))
    >>> np.allclose(acc.covariance(), np.cov(X, rowvar=False))
    True
    """

    def __init__(self, dim: int | None = None) -> None:
        self.n = 0
        self.dim = dim
        self.mean = None if dim is None else np.zeros(dim)
        self.comoment = None if dim is None else np.zeros((dim, dim))

    def _init(self, d: int) -> None:
        self.dim = d
        self.mean = np.zeros(d)
        self.comoment = np.zeros((d, d))

    def update(self, batch: Any) -> "CovarianceAccumulator":
        """Add the rows of ``batch`` (shape ``(b, dim)``); an empty batch is a no-op."""
        X = np.asarray(batch, dtype=np.float64)
        if X.ndim == 1:
            X = X[None, :]
        if X.ndim != 2:
            raise DataFormatError(f"batch must be a 2-D array (rows, dim), got shape {X.shape}")
        if X.shape[0] == 0:
            return self
        if self.dim is None:
            self._init(X.shape[1])
        if X.shape[1] != self.dim:
            raise DimensionMismatchError(f"batch has dimension {X.shape[1]}, the accumulator has {self.dim}")
        if not np.isfinite(X).all():
            raise DataFormatError("batch contains NaN or inf values")
        other = CovarianceAccumulator()
        other.n = X.shape[0]
        other.dim = X.shape[1]
        other.mean = X.mean(axis=0)
        Xc = X - other.mean
        other.comoment = Xc.T @ Xc
        return self.merge(other)

    def merge(self, other: "CovarianceAccumulator") -> "CovarianceAccumulator":
        """Fold ``other`` into this accumulator (in place) and return self."""
        if not isinstance(other, CovarianceAccumulator):
            raise ConfigError(f"can only merge a CovarianceAccumulator, got {type(other).__name__}")
        if other.n == 0:
            return self
        if self.n == 0:
            self.n, self.dim = other.n, other.dim
            self.mean, self.comoment = other.mean.copy(), other.comoment.copy()
            return self
        if other.dim != self.dim:
            raise DimensionMismatchError(f"cannot merge statistics of dimension {other.dim} into {self.dim}")
        n = self.n + other.n
        delta = other.mean - self.mean
        self.mean = self.mean + delta * (other.n / n)
        self.comoment = self.comoment + other.comoment + np.outer(delta, delta) * (self.n * other.n / n)
        self.n = n
        return self

    @classmethod
    def from_batches(cls, batches: Iterable[Any]) -> "CovarianceAccumulator":
        acc = cls()
        for b in batches:
            acc.update(b)
        return acc

    @classmethod
    def merge_all(cls, parts: Iterable["CovarianceAccumulator"]) -> "CovarianceAccumulator":
        """Pairwise (tree) reduction of partial statistics."""
        parts = [p for p in parts if p.n > 0]  # mutation: equivalent[cmp > -> >=] (merging an empty part is a no-op)
        if not parts:
            return cls()
        while len(parts) > 1:
            nxt = [parts[i].merge(parts[i + 1]) if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
            parts = nxt
        return parts[0]

    def covariance(self, ddof: int = 1) -> np.ndarray:
        """:math:`M/(n-\\mathrm{ddof})` (``ddof=1``: the sample covariance of eq. 7)."""
        if self.n - ddof <= 0:
            raise DataFormatError(f"need more than {ddof} vectors for a covariance, have {self.n}")
        return self.comoment / (self.n - ddof)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """``{"n", "mean", "comoment"}`` for saving or sending between processes."""
        return {"n": np.array(self.n), "mean": self.mean, "comoment": self.comoment}

    @classmethod
    def from_arrays(cls, arrays: dict[str, Any]) -> "CovarianceAccumulator":
        acc = cls()
        acc.n = int(arrays["n"])
        acc.mean = np.asarray(arrays["mean"], dtype=np.float64)
        acc.comoment = np.asarray(arrays["comoment"], dtype=np.float64)
        acc.dim = acc.mean.shape[0]
        return acc
