r"""Permutation (partition) tests for the WEAT statistic.

Setting
-------
For target word :math:`w` the WEAT association is
:math:`s(w) = \operatorname{mean}_{a\in A}\cos(w,a) - \operatorname{mean}_{b\in B}\cos(w,b)`.
The caller passes the vector ``s`` of length :math:`n = |X| + |Y|` with the
:math:`n_x = |X|` X-words first.  The test statistic is

.. math::

    S = \sum_{i \in X} s_i - \sum_{i \in Y} s_i = 2\,T_{obs} - \Sigma,
    \qquad T_{obs} = \sum_{i < n_x} s_i, \quad \Sigma = \sum_i s_i .

Under the permutation null every split of the :math:`n` words into an X side
of size :math:`n_x` and a Y side of size :math:`n - n_x` is equally likely;
there are :math:`\binom{n}{n_x}` of them.  For a split with X side
:math:`I` (:math:`|I| = n_x`) the statistic is :math:`2 T_I - \Sigma` with
:math:`T_I = \sum_{i\in I} s_i`, a strictly increasing function of
:math:`T_I`.  All p-values are therefore counts of :math:`n_x`-subsets whose
sum reaches :math:`T_{obs}`:

* ``"greater"``: :math:`p = \#\{I : T_I \ge T_{obs} - \tau\} / \binom{n}{n_x}`
* ``"less"``: :math:`p = \#\{I : T_I \le T_{obs} + \tau\} / \binom{n}{n_x}`
* ``"two-sided"``: with the exact null mean
  :math:`m = E[T_I] = n_x \bar s`,
  :math:`p = \#\{I : |T_I - m| \ge |T_{obs} - m| - \tau\} / \binom{n}{n_x}`.
  For :math:`|X| = |Y|` this equals :math:`P[|S_I| \ge |S|]` (then
  :math:`S_I = 2(T_I - m)`); it is equally well defined for unequal sizes,
  where it measures the distance of the X-side sum from its null mean.

Ties: :math:`\tau = \mathrm{rtol} \cdot \sum_i |s_i|` (``rtol = 1e-9`` by
default).  Values within :math:`\tau` of the observed one count as reaching it,
so that floating-point noise never splits genuine ties.  The tolerance used is
reported in :attr:`PermutationResult.tolerance`.

Exact counting uses a meet-in-the-middle scheme (see :func:`exact_count`);
Monte Carlo sampling draws uniform random :math:`n_x`-subsets in vectorised
batches (see :func:`partition_test`).
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from isoeat._errors import ConfigError

__all__ = [
    "DEFAULT_EXACT_BUDGET",
    "PermutationResult",
    "clopper_pearson",
    "exact_cost",
    "exact_count",
    "partition_test",
]

_ALTERNATIVES = ("greater", "less", "two-sided")
_METHODS = ("auto", "exact", "monte-carlo")

# Fixed-point exponent: subset sums are computed exactly in int64 with
# |value| <= 2**_FIX_BITS (+ rounding), leaving headroom for the
# ``2 * (t - a) + label`` sort keys used when counting.
_FIX_BITS = 59


# ---------------------------------------------------------------------------
# result type
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PermutationResult:
    r"""Outcome of :func:`partition_test`.

    Attributes
    ----------
    p_value : float
        Exact: ``count / n_partitions``.  Monte Carlo:
        :math:`(k + 1) / (N + 1)` with :math:`k` = ``count`` and
        :math:`N` = ``n_permutations`` (never 0, valid p-value).
    p_method : str
        ``"exact"`` or ``"monte-carlo"``.
    alternative : str
        ``"greater"``, ``"less"`` or ``"two-sided"``.
    count : int
        Number of partitions (exact) or sampled permutations (Monte Carlo)
        whose statistic reaches the observed one (Python ``int``; may exceed
        the int64 range for large exact problems).
    n_partitions : int
        :math:`\binom{n}{n_x}`, the size of the permutation null (always set).
    n_permutations : int or None
        Number of random partitions actually sampled (Monte Carlo; can be
        below the requested number when sequential stopping triggered),
        ``None`` for exact results.
    ci_low, ci_high : float
        Clopper–Pearson interval for the true p-value from ``count /
        n_permutations`` (Monte Carlo); both equal ``p_value`` when exact.
    tolerance : float
        :math:`\tau = \mathrm{rtol}\sum_i|s_i|`, in the units of ``s``.
    stopped_early : bool
        True when sequential stopping ended the Monte Carlo run early.
    """

    p_value: float
    p_method: str
    alternative: str
    count: int
    n_partitions: int
    n_permutations: int | None
    ci_low: float
    ci_high: float
    tolerance: float
    stopped_early: bool

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a plain ``dict`` (JSON-friendly values)."""
        return asdict(self)


# ---------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Clopper-Pearson
# ---------------------------------------------------------------------------


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

    k = _as_int(k, "k")
    n = _as_int(n, "n")
    if n < 1:
        raise ConfigError(f"n must be >= 1, got {n}")
    if not 0 <= k <= n:
        raise ConfigError(f"k must satisfy 0 <= k <= n, got k={k}, n={n}")
    alpha = 1.0 - _check_confidence(confidence)
    low = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, alpha / 2.0))
    high = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1.0 - alpha / 2.0))
    return low, high


# ---------------------------------------------------------------------------
# exact counting: meet in the middle on exact fixed-point sums
# ---------------------------------------------------------------------------


def exact_cost(n: int, n_x: int) -> float:
    r"""Estimated operation count of the exact (meet-in-the-middle) method.

    With :math:`k = \min(n_x, n - n_x)` (the complement is counted when
    :math:`n_x > n/2`) and halves of sizes :math:`h = \lfloor n/2 \rfloor`,
    :math:`h' = n - h`, the estimate is

    .. math::

        \sum_{j \le \min(k, h)} \binom{h}{j} + \sum_{j \le \min(k, h')} \binom{h'}{j}
        + \sum_j N_j \log_2 N_j, \qquad N_j = \binom{h}{j} + \binom{h'}{k-j},

    i.e. the number of stored half-subset sums plus the sort work of the
    per-size counting passes (one tail; a two-sided test with :math:`n_x \ne
    n/2` does two counting passes).  Peak memory is roughly 8 bytes per stored
    sum plus 24 bytes per element of the largest :math:`N_j`.
    """
    n = _as_int(n, "n")
    n_x = _as_int(n_x, "n_x")
    if n < 1 or not 0 <= n_x <= n:
        raise ConfigError(f"exact_cost needs 0 <= n_x <= n and n >= 1; got n={n}, n_x={n_x}")
    k = min(n_x, n - n_x)
    h = n // 2
    hr = n - h
    build = sum(math.comb(h, j) for j in range(min(k, h) + 1))
    build += sum(math.comb(hr, j) for j in range(min(k, hr) + 1))
    work = 0.0
    for j in range(max(0, k - hr), min(k, h) + 1):
        nj = math.comb(h, j) + math.comb(hr, k - j)
        work += nj * math.log2(max(nj, 2))
    return float(build + work)


DEFAULT_EXACT_BUDGET: float = exact_cost(50, 25)
"""Default ``exact_budget``: every problem with ``n <= 50`` is counted exactly
(``C(50, 25) ~ 1.3e14`` partitions takes about 1-2 s and < 1 GiB); ``n = 64,
n_x = 32`` is far beyond it (its halves alone would need 2 x 2**32 sums)."""


def _exponent(s: np.ndarray) -> int | None:
    """An integer ``e`` with ``sum|s| < 2**e`` (None when ``s`` is all zeros).

    Computed from ``max|s|`` and ``n`` so that it neither overflows for huge
    nor underflows for subnormal inputs.
    """
    peak = float(np.max(np.abs(s)))
    if peak == 0.0:
        return None
    return math.frexp(peak)[1] + (s.size - 1).bit_length()


def _fixed_point(s: np.ndarray) -> tuple[np.ndarray, int]:
    """Scale ``s`` by ``2**shift`` so that sum|s| <= 2**_FIX_BITS, round to int64.

    Power-of-two scaling is exact in binary floating point, so integer-valued
    (or dyadic) inputs map to exact integers and their subset sums are exact.
    """
    e = _exponent(s)
    if e is None:
        return np.zeros(s.shape, dtype=np.int64), 0
    shift = _FIX_BITS - e
    return np.rint(np.ldexp(s, shift)).astype(np.int64), shift


def _scaled_threshold(thr: float, shift: int) -> float:
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(thr, shift))


def _sums_by_size(values: np.ndarray, kmax: int) -> list[np.ndarray]:
    """All subset sums of ``values`` grouped by subset size 0..min(kmax, len).

    Built iteratively in preallocated arrays: processing element ``v`` appends
    ``sums[k-1] + v`` to ``sums[k]`` (sizes in descending order), i.e.
    ``new_sums[k] = concat(sums[k], sums[k-1] + v)`` without reallocation.
    """
    h = len(values)
    top = min(kmax, h)
    out = [np.empty(math.comb(h, k), dtype=np.int64) for k in range(top + 1)]
    out[0][0] = 0
    filled = [1] + [0] * top
    for t, v in enumerate(values.tolist()):
        for k in range(min(t + 1, top), 0, -1):
            m = filled[k - 1]
            np.add(out[k - 1][:m], v, out=out[k][filled[k] : filled[k] + m])
            filled[k] += m
    return out


def _n_workers() -> int:
    """Worker threads for the exact counting passes (numpy sorts release the GIL)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def _count_pairs_ge(a: np.ndarray, b: np.ndarray, t: int, ramp: np.ndarray) -> int:
    """Number of pairs (i, j) with ``a[i] + b[j] >= t`` (exact, int64 inputs).

    Sort-merge counting: keys ``2 (t - a_i)`` (label 0) and ``2 b_j + 1``
    (label 1) are sorted together; ``b_j >= t - a_i`` iff the b-key sorts after
    the a-key.  The number of (b before a) pairs follows from the sum of the
    positions of the label-1 keys, so the whole pass is one sort plus two
    vectorised reductions.  ``ramp`` is ``arange(>= len(a) + len(b))``.
    """
    na, nb = a.size, b.size
    n = na + nb
    keys = np.empty(n, dtype=np.int64)
    q = keys[:na]
    np.subtract(np.int64(t), a, out=q)
    np.left_shift(q, 1, out=q)
    r = keys[na:]
    np.left_shift(b, 1, out=r)
    np.bitwise_or(r, 1, out=r)
    keys.sort()
    np.bitwise_and(keys, 1, out=keys)
    pos_sum = int(np.dot(keys, ramp[:n]))
    # pairs with the b-key before the a-key, i.e. b_j < t - a_i
    below = nb * (n - 1) - pos_sum - nb * (nb - 1) // 2
    return na * nb - below


def _count_ge_int(si: np.ndarray, k: int, thresholds: list[int]) -> list[int]:
    """For each integer ``t``: number of k-subsets of ``si`` with sum >= t."""
    n = si.size
    total = math.comb(n, k)
    pos = int(si[si > 0].sum())
    neg = int(si[si < 0].sum())
    results: list[int | None] = []
    pending: list[tuple[int, int]] = []
    for idx, t in enumerate(thresholds):
        if t > pos:  # no subset sum exceeds the sum of the positive values
            results.append(0)
        elif t <= neg:  # every subset sum is >= the sum of the negatives
            results.append(total)
        elif k == 0:
            results.append(1 if t <= 0 else 0)
        else:
            results.append(None)
            pending.append((idx, t))
    if not pending:
        return [int(r) for r in results]  # type: ignore[arg-type]

    if 2 * k > n:
        # complement: T_I >= t  <=>  T_{I^c} <= tot - t  <=>  not (T_{I^c} >= tot - t + 1)
        tot = int(si.sum())
        comp = _count_ge_int(si, n - k, [tot - t + 1 for _, t in pending])
        for (idx, _), c in zip(pending, comp):
            results[idx] = total - c
        return [int(r) for r in results]  # type: ignore[arg-type]

    h = n // 2
    hr = n - h
    js = range(max(0, k - hr), min(k, h) + 1)
    big = exact_cost(n, k) > 2e7
    workers = _n_workers() if big else 1
    if workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=2) as pool:
            fut_l = pool.submit(_sums_by_size, si[:h], k)
            right = _sums_by_size(si[h:], k)
            left = fut_l.result()
    else:
        left = _sums_by_size(si[:h], k)
        right = _sums_by_size(si[h:], k)
    lmin = {j: int(left[j].min()) for j in js}
    lmax = {j: int(left[j].max()) for j in js}
    rmin = {j: int(right[k - j].min()) for j in js}
    rmax = {j: int(right[k - j].max()) for j in js}
    ramp = np.arange(max(left[j].size + right[k - j].size for j in js), dtype=np.int64)

    def one(task: tuple[int, int]) -> int:
        t, j = task
        a = left[j]
        b = right[k - j]
        if lmax[j] + rmax[j] < t:
            return 0
        if lmin[j] + rmin[j] >= t:
            return a.size * b.size
        return _count_pairs_ge(a, b, t, ramp)

    # largest passes first so that the threads finish together
    tasks = [(t, j) for _, t in pending for j in js]
    order = sorted(range(len(tasks)), key=lambda i: -math.comb(h, tasks[i][1]))
    if workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            done = dict(zip(order, pool.map(one, [tasks[i] for i in order])))
    else:
        done = {i: one(tasks[i]) for i in order}
    per_threshold: dict[int, int] = {}
    for i, (t, _) in enumerate(tasks):
        per_threshold[t] = per_threshold.get(t, 0) + int(done[i])
    for idx, t in pending:
        results[idx] = per_threshold[t]
    return [int(r) for r in results]  # type: ignore[arg-type]


def exact_count(s: Any, n_x: int, threshold: float) -> int:
    r"""Exact number of ``n_x``-subsets of ``s`` whose sum is ``>= threshold``.

    .. math:: \#\{I \subseteq \{0..n-1\} : |I| = n_x,\ \textstyle\sum_{i\in I} s_i \ge \mathrm{threshold}\}

    Method (meet in the middle, never enumerating subsets one by one):

    1. ``s`` is scaled by a power of two so that :math:`\sum|s_i| < 2^{59}`
       and rounded to int64.  Subset sums are then *exact* integers (resolution
       at most :math:`2^{-58}\, n \max|s_i|`, below float64 summation error);
       for integer-valued or dyadic ``s`` nothing is rounded at all.
    2. If :math:`n_x > n/2` the complement (size :math:`n - n_x`) is counted.
    3. The values are split into halves L and R; all subset sums of each half
       are built per subset size, vectorised
       (``new_sums[k] = concat(sums[k], sums[k-1] + v)``).
    4. For each size :math:`j`, pairs (left subset of size :math:`j`, right
       subset of size :math:`n_x - j`) with sum :math:`\ge` threshold are
       counted with one sort of the merged keys (a sort-merge count, which is
       faster than ``np.searchsorted`` at this scale); one size is processed
       at a time, partial counts are summed into a Python ``int``.

    Parameters
    ----------
    s : array_like, shape (n,)
        Finite real values.
    n_x : int
        Subset size, ``0 <= n_x <= n``.
    threshold : float
        Compared with ``>=``; no tolerance is applied here.

    Returns
    -------
    int
        The count (Python ``int``, exact).
    """
    arr = _as_scores(s)
    n = arr.size
    n_x = _as_int(n_x, "n_x")
    if not 0 <= n_x <= n:
        raise ConfigError(f"n_x must satisfy 0 <= n_x <= n; got n_x={n_x}, n={n}")
    thr = float(threshold)
    if math.isnan(thr):
        raise ConfigError("threshold is NaN")
    si, shift = _fixed_point(arr)
    t_scaled = _scaled_threshold(thr, shift)
    bound = 2.0 ** (_FIX_BITS + 2)  # beyond every (rounded) subset sum
    if t_scaled > bound:
        return 0
    if t_scaled <= -bound:
        return math.comb(n, n_x)
    return _count_ge_int(si, n_x, [math.ceil(t_scaled)])[0]


def _exact_tail_count(s: np.ndarray, n_x: int, alternative: str, rtol: float) -> tuple[int, float]:
    """Exact count of partitions reaching the observed value, and tolerance."""
    n = s.size
    total = math.comb(n, n_x)
    with np.errstate(over="ignore"):
        tol = rtol * float(np.abs(s).sum())
    si, _ = _fixed_point(s)
    # the tolerance in fixed-point units: rtol * sum|s_i| on the scaled values
    tol_scaled = rtol * float(np.abs(si).sum())
    tol_i = math.floor(tol_scaled) if math.isfinite(tol_scaled) else 2 ** (_FIX_BITS + 8)
    t_obs = int(si[:n_x].sum())
    if alternative == "greater":
        return _count_ge_int(si, n_x, [t_obs - tol_i])[0], tol
    if alternative == "less":
        return total - _count_ge_int(si, n_x, [t_obs + tol_i + 1])[0], tol
    # two-sided, in integers: |n T - n_x tot| >= |n T_obs - n_x tot| - n tol
    tot = int(si.sum())
    centre = n_x * tot
    d = abs(n * t_obs - centre) - n * tol_i
    if d <= 0:
        return total, tol
    upper_t = -((-(centre + d)) // n)  # ceil((centre + d) / n)
    lower_t = (centre - d) // n  # floor((centre - d) / n); count T <= lower_t
    if 2 * n_x == n:
        # T_I <= lower_t  <=>  T_{I^c} >= tot - lower_t == upper_t: both tails equal
        upper = _count_ge_int(si, n_x, [upper_t])[0]
        return 2 * upper, tol
    upper, above_lower = _count_ge_int(si, n_x, [upper_t, lower_t + 1])
    return upper + (total - above_lower), tol


# ---------------------------------------------------------------------------
# Monte Carlo
# ---------------------------------------------------------------------------


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
) -> PermutationResult:
    n = s.size
    with np.errstate(over="ignore"):
        tol = rtol * float(np.abs(s).sum())
    n_partitions = math.comb(n, n_x)
    gen = np.random.default_rng(rng)
    e = _exponent(s)
    all_zero = e is None
    # power-of-two normalisation: sum|x| < 1, tolerance rtol * sum|x|
    x = np.zeros(n) if all_zero else np.ldexp(s, -e)
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
    band = 1e-5 + 4e-7 * n
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
        if math.isinf(hi) and hi < 0:
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
    return PermutationResult(
        p_value=(hits + 1) / (done + 1),
        p_method="monte-carlo",
        alternative=alternative,
        count=int(hits),
        n_partitions=n_partitions,
        n_permutations=int(done),
        ci_low=low,
        ci_high=high,
        tolerance=tol,
        stopped_early=stopped,
    )


# ---------------------------------------------------------------------------
# public entry point
# ---------------------------------------------------------------------------


def partition_test(
    s: Any,
    n_x: int,
    *,
    alternative: str = "greater",
    method: str = "auto",
    n_permutations: int = 100_000,
    rng: Any = None,
    rtol: float = 1e-9,
    exact_budget: float | None = None,
    sequential_alpha: float | None = None,
    confidence: float = 0.95,
    batch_size: int | None = None,
) -> PermutationResult:
    r"""Permutation test of the WEAT statistic over all X/Y partitions.

    Parameters
    ----------
    s : array_like, shape (n,)
        Per-word associations :math:`s(w)`, the :math:`n_x` X-words first.
        Must be finite.
    n_x : int
        :math:`|X|`; ``1 <= n_x <= n - 1``.  (Requiring at least two words per
        side is the WEAT caller's job.)
    alternative : {"greater", "less", "two-sided"}, default "greater"
        With :math:`T_I` the sum of ``s`` over an X side :math:`I`,
        :math:`T_{obs}` the observed one, :math:`m = n_x \bar s` the exact null
        mean and :math:`\tau` the tie tolerance, the p-value is the share of
        partitions with :math:`T_I \ge T_{obs} - \tau` ("greater"),
        :math:`T_I \le T_{obs} + \tau` ("less") or
        :math:`|T_I - m| \ge |T_{obs} - m| - \tau` ("two-sided"; for
        :math:`|X| = |Y|` this is :math:`P[|S_I| \ge |S|]`, for unequal sizes
        it is the distance of the X-side sum from its null mean).
    method : {"auto", "exact", "monte-carlo"}, default "auto"
        "auto" counts exactly when ``exact_cost(n, n_x) <= exact_budget`` or
        when :math:`\binom{n}{n_x} \le` ``n_permutations``; otherwise Monte
        Carlo.  "exact" beyond the budget raises :class:`ConfigError`.
    n_permutations : int, default 100_000
        Monte Carlo sample size (upper bound when stopping sequentially).
    rng : None, int or numpy.random.Generator
        Passed to :func:`numpy.random.default_rng`; global state is never
        used.  A Generator is advanced in place.  Results for a given seed also
        depend on ``batch_size`` (the draw layout).
    rtol : float, default 1e-9
        Relative tie tolerance: :math:`\tau = \mathrm{rtol}\sum_i|s_i|`.
    exact_budget : float, optional
        Maximum :func:`exact_cost` for exact counting; default
        :data:`DEFAULT_EXACT_BUDGET` (= ``exact_cost(50, 25)``: everything up
        to ``n = 50`` is exact).
    sequential_alpha : float, optional
        Monte Carlo only: stop after a batch as soon as the Clopper–Pearson
        interval (level ``confidence``) lies entirely above or entirely below
        this value; the number of permutations used is reported.
    confidence : float, default 0.95
        Level of the Clopper–Pearson interval.
    batch_size : int, optional
        Random partitions per vectorised batch (default ``max(1024, 2**20 //
        n)``).

    Returns
    -------
    PermutationResult
        Exact: :math:`p = c / \binom{n}{n_x}` with :math:`c` the count.
        Monte Carlo: :math:`N` uniform random partitions, :math:`k` of them
        reaching the observed value, :math:`p = (k + 1)/(N + 1)` and the
        Clopper–Pearson interval for the true p from :math:`k / N`.

    Raises
    ------
    ConfigError
        Invalid parameters, non-finite ``s``, or ``method="exact"`` beyond
        the budget.
    """
    arr = _as_scores(s)
    n = arr.size
    n_x = _check_n_x(n_x, n)
    _check_choice(alternative, "alternative", _ALTERNATIVES)
    _check_choice(method, "method", _METHODS)
    n_permutations = _as_int(n_permutations, "n_permutations")
    if n_permutations < 1:
        raise ConfigError(f"n_permutations must be >= 1, got {n_permutations}")
    try:
        rtol_f = float(rtol)
    except (TypeError, ValueError):
        raise ConfigError(f"rtol must be a non-negative number, got {rtol!r}") from None
    if not (math.isfinite(rtol_f) and rtol_f >= 0.0):
        raise ConfigError(f"rtol must be a finite number >= 0, got {rtol!r}")
    confidence = _check_confidence(confidence)
    if sequential_alpha is not None:
        try:
            sa = float(sequential_alpha)
        except (TypeError, ValueError):
            raise ConfigError(
                f"sequential_alpha must be None or a number in (0, 1), got {sequential_alpha!r}"
            ) from None
        if not 0.0 < sa < 1.0:
            raise ConfigError(f"sequential_alpha must be in (0, 1), got {sequential_alpha!r}")
        sequential_alpha = sa
    if batch_size is not None:
        batch_size = _as_int(batch_size, "batch_size")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
    if exact_budget is None:
        budget = DEFAULT_EXACT_BUDGET
    else:
        try:
            budget = float(exact_budget)
        except (TypeError, ValueError):
            raise ConfigError(f"exact_budget must be a number, got {exact_budget!r}") from None
        if math.isnan(budget) or budget < 0:
            raise ConfigError(f"exact_budget must be >= 0, got {exact_budget!r}")

    n_partitions = math.comb(n, n_x)
    cost = exact_cost(n, n_x)
    if method == "exact":
        if cost > budget:
            raise ConfigError(
                f"method='exact' would count C({n}, {n_x}) = {n_partitions} partitions "
                f"(estimated cost {cost:.3g} > exact_budget {budget:.3g}); "
                "use method='monte-carlo' or raise exact_budget"
            )
        use_exact = True
    elif method == "auto":
        use_exact = cost <= budget or n_partitions <= n_permutations
    else:
        use_exact = False

    if use_exact:
        count, tol = _exact_tail_count(arr, n_x, alternative, rtol_f)
        p = count / n_partitions
        return PermutationResult(
            p_value=p,
            p_method="exact",
            alternative=alternative,
            count=int(count),
            n_partitions=n_partitions,
            n_permutations=None,
            ci_low=p,
            ci_high=p,
            tolerance=tol,
            stopped_early=False,
        )
    return _monte_carlo(
        arr,
        n_x,
        alternative,
        n_permutations,
        rng,
        rtol_f,
        sequential_alpha,
        confidence,
        batch_size,
    )
