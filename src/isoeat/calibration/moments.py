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

:class:`DeviceAccumulator` is the same accumulator held in torch tensors on
the model's device (float64 whatever the vectors' dtype), so that a
contextual encoder's reference pass accumulates where the vectors are and
moves only :math:`(n, \mu, M)` to the host, once per chunk
(:meth:`DeviceAccumulator.to_host`). Both use one merge rule
(:func:`merge_moments`); they agree to rounding (about 1e-15 relative: the
float64 sums are taken in another order), tested to 1e-12.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._errors import ConfigError, DataFormatError, DimensionMismatchError

__all__ = ["CovarianceAccumulator", "DeviceAccumulator", "merge_moments"]


def merge_moments(a: tuple[int, Any, Any], b: tuple[int, Any, Any], outer: Any) -> tuple[int, Any, Any]:
    r"""The pairwise update of Chan, Golub & LeVeque (1979): ``(n, mean, M)`` of two disjoint parts merged.

    .. math::

        n = n_a + n_b,\quad \delta = \mu_b - \mu_a,\quad \mu = \mu_a + \delta\,\frac{n_b}{n},\quad
        M = M_a + M_b + \delta\delta^\top \frac{n_a n_b}{n}

    ``outer`` is the array library's outer product (``np.outer``, ``torch.outer``): the one rule for numpy and
    torch arrays. Both parts must be non-empty.

    Examples
    --------
    >>> X = np.arange(12.0).reshape(4, 3)
    >>> part = lambda Y: (len(Y), Y.mean(0), (Y - Y.mean(0)).T @ (Y - Y.mean(0)))
    >>> n, mu, M = merge_moments(part(X[:1]), part(X[1:]), np.outer)
    >>> n, np.allclose(mu, X.mean(0)), np.allclose(M / (n - 1), np.cov(X, rowvar=False))
    (4, True, True)
    """
    (na, ma, Ma), (nb, mb, Mb) = a, b
    n = na + nb
    delta = mb - ma
    return n, ma + delta * (nb / n), Ma + Mb + outer(delta, delta) * (na * nb / n)


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
        self.mean: NDArray[np.float64] | None = None if dim is None else np.zeros(dim)
        self.comoment: NDArray[np.float64] | None = None if dim is None else np.zeros((dim, dim))

    def moments(self) -> tuple[int, NDArray[np.float64], NDArray[np.float64]]:
        """``(n, mean, comoment)``: the statistics so far; a one-line error before the dimension is known."""
        if self.mean is None or self.comoment is None:
            raise DataFormatError("no vectors accumulated yet: the mean and co-moment are undefined")
        return self.n, self.mean, self.comoment

    def _init(self, d: int) -> None:
        self.dim = d
        self.mean = np.zeros(d)
        self.comoment = np.zeros((d, d))

    def update(self, batch: Any) -> CovarianceAccumulator:
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

    def merge(self, other: CovarianceAccumulator) -> CovarianceAccumulator:
        """Fold ``other`` into this accumulator (in place) and return self."""
        if not isinstance(other, CovarianceAccumulator):
            raise ConfigError(f"can only merge a CovarianceAccumulator, got {type(other).__name__}")
        if other.n == 0:
            return self
        if self.n == 0:
            self.n, self.dim = other.n, other.dim
            _, mean, comoment = other.moments()
            self.mean, self.comoment = mean.copy(), comoment.copy()
            return self
        if other.dim != self.dim:
            raise DimensionMismatchError(f"cannot merge statistics of dimension {other.dim} into {self.dim}")
        self.n, self.mean, self.comoment = merge_moments((self.n, self.mean, self.comoment),
                                                         (other.n, other.mean, other.comoment), np.outer)
        return self

    @classmethod
    def from_batches(cls, batches: Iterable[Any]) -> CovarianceAccumulator:
        acc = cls()
        for b in batches:
            acc.update(b)
        return acc

    @classmethod
    def merge_all(cls, parts: Iterable[CovarianceAccumulator]) -> CovarianceAccumulator:
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
        return self.moments()[2] / (self.n - ddof)

    def to_arrays(self) -> dict[str, NDArray[Any] | None]:
        """``{"n", "mean", "comoment"}`` for saving or sending between processes."""
        return {"n": np.array(self.n), "mean": self.mean, "comoment": self.comoment}

    @classmethod
    def from_arrays(cls, arrays: dict[str, Any]) -> CovarianceAccumulator:
        acc = cls()
        acc.n = int(arrays["n"])
        acc.mean = np.asarray(arrays["mean"], dtype=np.float64)
        acc.comoment = np.asarray(arrays["comoment"], dtype=np.float64)
        acc.dim = acc.mean.shape[0]
        return acc


class DeviceAccumulator:
    """:class:`CovarianceAccumulator` in torch float64 tensors on ``device``: no vector leaves the device.

    ``update(X)`` takes a ``(b, dim)`` tensor of any float dtype on the
    device (float32 pooled states, bfloat16, ...), upcast to float64 before
    anything is summed; :meth:`to_host` returns the equivalent
    :class:`CovarianceAccumulator` (one transfer of ``dim**2 + dim`` float64).
    Non-finite rows are refused there, as :meth:`CovarianceAccumulator.update`
    refuses them, without a device-to-host transfer per update.

    Examples
    --------
    >>> import torch  # doctest: +SKIP
    >>> X = np.random.default_rng(0).normal(size=(50, 4))  # doctest: +SKIP
    >>> acc = DeviceAccumulator(4, torch, "cpu").update(torch.from_numpy(X[:20]))  # doctest: +SKIP
    >>> host = acc.update(torch.from_numpy(X[20:])).to_host()  # doctest: +SKIP
    >>> np.allclose(host.covariance(), np.cov(X, rowvar=False))  # doctest: +SKIP
    True
    """

    def __init__(self, dim: int, torch: Any, device: Any) -> None:
        self.dim, self._torch, self.device = int(dim), torch, device
        self.n = 0
        self.mean = torch.zeros(self.dim, dtype=torch.float64, device=device)
        self.comoment = torch.zeros((self.dim, self.dim), dtype=torch.float64, device=device)
        self._finite = torch.ones((), dtype=torch.bool, device=device)

    def update(self, X: Any) -> DeviceAccumulator:
        """Add the rows of ``X`` (``(b, dim)`` tensor on the device; ``b`` may be 0)."""
        if X.ndim != 2 or X.shape[1] != self.dim:
            raise DimensionMismatchError(f"batch has shape {tuple(X.shape)}, the accumulator has dimension {self.dim}")
        b = int(X.shape[0])
        if b == 0:
            return self
        X = X.to(dtype=self._torch.float64)
        mean = X.mean(dim=0)
        Xc = X - mean
        part = (b, mean, Xc.T @ Xc)
        self._finite &= self._torch.isfinite(mean).all()
        if self.n == 0:
            self.n, self.mean, self.comoment = part
        else:
            self.n, self.mean, self.comoment = merge_moments((self.n, self.mean, self.comoment), part,
                                                             self._torch.outer)
        return self

    def merge(self, other: DeviceAccumulator) -> DeviceAccumulator:
        """Fold ``other`` (same device and dimension) into this accumulator and return self."""
        if other.dim != self.dim:
            raise DimensionMismatchError(f"cannot merge statistics of dimension {other.dim} into {self.dim}")
        if other.n == 0:
            return self
        self._finite &= other._finite
        if self.n == 0:
            self.n, self.mean, self.comoment = other.n, other.mean.clone(), other.comoment.clone()
            return self
        self.n, self.mean, self.comoment = merge_moments((self.n, self.mean, self.comoment),
                                                         (other.n, other.mean, other.comoment), self._torch.outer)
        return self

    def to_host(self) -> CovarianceAccumulator:
        """The statistics as a :class:`CovarianceAccumulator` (float64 numpy arrays)."""
        if not bool(self._finite.item()):
            raise DataFormatError("batch contains NaN or inf values")
        acc = CovarianceAccumulator(self.dim)
        if self.n:
            acc.n = self.n
            acc.mean = self.mean.cpu().numpy().astype(np.float64, copy=True)
            acc.comoment = self.comoment.cpu().numpy().astype(np.float64, copy=True)
        return acc
