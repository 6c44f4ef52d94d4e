r"""Monte Carlo sampling for :func:`~isoeat.stats.permutation.partition_test`.

Uniform random :math:`n_x`-subsets are drawn in vectorised batches (selection
sampling over the :math:`n` positions, never a loop over permutations); their
sums are screened in float32 and re-checked in float64 near the threshold, so
the hit count is exact for the drawn subsets.  The interval on the true p is
Clopper–Pearson (:func:`clopper_pearson`), which also drives sequential
stopping.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from isoeat._errors import ConfigError
from isoeat._random import as_generator
from isoeat._validate import check_int

from ._checks import _check_level
from ._exact import _exponent

__all__ = ["clopper_pearson"]


class _MonteCarloCount(NamedTuple):
    """Raw outcome of :func:`_monte_carlo`; :func:`~isoeat.stats.permutation.partition_test` builds the result."""

    hits: int
    n_permutations: int
    ci_low: float
    ci_high: float
    tolerance: float
    stopped_early: bool


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    r"""Clopper–Pearson (exact binomial) confidence interval for a proportion.

    Parameters
    ----------
    k : int
        Number of successes, :math:`0 \le k \le n`.
    n : int
        Number of trials, :math:`n \ge 1`.
    confidence : float, default 0.95
        Two-sided level :math:`1 - \alpha`.

    Returns
    -------
    (low, high) : tuple of float
        :math:`\mathrm{low} = B^{-1}(\alpha/2;\, k, n-k+1)` (0 when
        :math:`k = 0`) and :math:`\mathrm{high} = B^{-1}(1-\alpha/2;\, k+1,
        n-k)` (1 when :math:`k = n`), where :math:`B^{-1}` is the beta
        quantile function (computed with ``scipy.special.betaincinv``, the
        function behind ``scipy.stats.beta.ppf``, which is cheaper to import).
    """
    from scipy.special import betaincinv

    k = check_int("k", k)
    n = check_int("n", n)
    if n < 1:
        raise ConfigError(f"n must be >= 1, got {n}")
    if not 0 <= k <= n:
        raise ConfigError(f"k must satisfy 0 <= k <= n, got k={k}, n={n}")
    alpha = 1.0 - _check_level("confidence", confidence)
    low = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, alpha / 2.0))
    high = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1.0 - alpha / 2.0))
    return low, high



def _random_subset_masks(n: int, n_x: int, batch: int, bitgen: Any) -> np.ndarray:
    """``(n, batch)`` float32 0/1 matrix; every column has exactly ``n_x`` ones.

    Columns are uniform random ``n_x``-subsets drawn with selection sampling
    (Knuth's Algorithm S), vectorised over the batch: position ``i`` is taken
    with probability ``need / (n - i)`` where ``need`` is the number of slots
    still open in that column.  The loop runs over the ``n`` positions, never
    over permutations.  Uniforms are the top 24 bits of 32-bit halves of the
    bit generator's raw output (``u = x / 2**24``); the rounding of
    ``u * (n - i)`` can never break the exact-size invariant (``u < 1`` implies
    ``fl(u r) < r``), and perturbs each inclusion probability by < 1e-7.
    """
    raw = bitgen.random_raw((n * batch + 1) // 2)
    bits = raw.view(np.uint32)[: n * batch].reshape(n, batch)
    np.right_shift(bits, 8, out=bits)
    u = bits.view(np.float32)
    need = np.full(batch, n_x, dtype=np.float32)
    for i in range(n):
        row = u[i]
        np.multiply(bits[i], np.float32((n - i) / 2.0**24), out=row, dtype=np.float32, casting="unsafe")
        np.less(row, need, out=row)
        np.subtract(need, row, out=need)
    return u


def _mc_hits(
    s: np.ndarray, s32: np.ndarray, mask: np.ndarray, hi: float, lo: float, band: float
) -> int:
    """Count columns with ``T >= hi`` or ``T <= lo`` (T = s @ mask), exactly.

    A float32 product screens the columns; those within ``band`` of a threshold
    (where float32 rounding could matter) are recomputed in float64.
    """
    t32 = s32 @ mask
    sure = int(np.count_nonzero((t32 >= hi + band) | (t32 <= lo - band)))
    amb = ((t32 > hi - band) & (t32 < hi + band)) | ((t32 > lo - band) & (t32 < lo + band))
    if amb.any():
        t64 = s @ mask[:, amb].astype(np.float64)
        sure += int(np.count_nonzero((t64 >= hi) | (t64 <= lo)))
    return sure


def _monte_carlo(
    s: np.ndarray,
    n_x: int,
    alternative: str,
    n_permutations: int,
    rng: Any,
    rtol: float,
    sequential_alpha: float | None,
    confidence: float,
    batch_size: int | None,
) -> _MonteCarloCount:
    """Sample ``n_permutations`` random partitions (fewer when stopping sequentially) and count hits."""
    n = s.size
    with np.errstate(over="ignore"):
        tol = rtol * float(np.abs(s).sum())
    gen = as_generator(rng)
    e = _exponent(s)
    all_zero = e is None
    # power-of-two normalisation: sum|x| < 1, tolerance rtol * sum|x|
    x = np.zeros(n) if e is None else np.ldexp(s, -e)
    rtol_n = rtol * float(np.abs(x).sum())
    t_obs = float(np.sum(x[:n_x]))
    if alternative == "greater":
        hi, lo = t_obs - rtol_n, -math.inf
    elif alternative == "less":
        hi, lo = math.inf, t_obs + rtol_n
    else:
        m = n_x * float(np.mean(x))
        d = abs(t_obs - m) - rtol_n
        if d <= 0 or all_zero:
            hi, lo = -math.inf, math.inf  # every partition reaches it
        else:
            hi, lo = m + d, m - d
    # |T32 - T| <= (n + 1) 2**-24 sum|x| < 4e-6 for n <= 64; generous margin.
    band = 1e-5 + 4e-7 * n  # mutation: equivalent[const 1e-5 -> 5e-06, const 4e-7 -> 2e-07] (halved, the band still exceeds the float32 error bound (n + 1) 2**-24 sum|x|: the float64 recheck gives the same count)
    x32 = x.astype(np.float32)
    if batch_size is None:
        batch_size = max(1024, (1 << 20) // n)
    batch_size = min(batch_size, n_permutations)
    bitgen = gen.bit_generator

    hits = 0
    done = 0
    stopped = False
    while done < n_permutations:
        b = min(batch_size, n_permutations - done)
        if math.isinf(hi) and hi < 0:  # mutation: equivalent[cmp < -> <=, const 0 -> 1] (hi is infinite here: -inf < 0, <= 0 and < 1 alike, +inf none of them)
            hits += b  # all partitions reach the observed value; nothing to sample
        else:
            mask = _random_subset_masks(n, n_x, b, bitgen)
            hits += _mc_hits(x, x32, mask, hi, lo, band)
        done += b
        if sequential_alpha is not None and done < n_permutations:
            low, high = clopper_pearson(hits, done, confidence)
            if low > sequential_alpha or high < sequential_alpha:
                stopped = True
                break
    low, high = clopper_pearson(hits, done, confidence)
    return _MonteCarloCount(int(hits), int(done), low, high, tol, stopped)
