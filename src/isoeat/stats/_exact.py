r"""Exact counting for :func:`~isoeat.stats.permutation.partition_test`: meet in the middle.

Subset sums are computed exactly in fixed point (int64) and counted per subset
size with one sort-merge pass each, over only the half-subset sums that can
reach the threshold; see :func:`exact_count` for the method and
:func:`exact_cost` for the cost model that decides when counting is feasible.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from isoeat._errors import ConfigError
from isoeat._validate import check_int

from ._checks import _as_scores

__all__ = ["DEFAULT_EXACT_BUDGET", "DEFAULT_EXACT_MEMORY", "DEFAULT_RTOL", "exact_cost", "exact_count",
           "exact_memory_bytes"]

DEFAULT_RTOL: float = 1e-12
r"""Default relative tie tolerance: :math:`\tau = 10^{-12}\sum_i|s_i|`.

Why this scale: a float64 sum of :math:`m` terms is off by at most
:math:`(m-1)\,u\sum|s_i|` (Higham, *Accuracy and Stability of Numerical
Algorithms*, §4.2; :math:`u = 2^{-53} \approx 1.1\times10^{-16}`), i.e. below
:math:`10^{-14}\sum|s|` for every WEAT-sized problem (:math:`n \le 90`) and
below :math:`\tau` up to :math:`n \approx 9000`; the per-word scores
:math:`s` carry round-off of the same order from their cosines. So values
equal up to rounding (duplicated words, ``0.1 + 0.2`` vs ``0.3``) are ties,
while partitions that differ by more than rounding are not: in the ten
standard tests on GloVe 6B 50d, raw and ZCA-whitened, no partition lies
below the observed sum by less than :math:`10^{-11}\sum|s|`, and none other
than the observed one within :math:`10^{-13}\sum|s|` either side.
(Equal values permuted give bit-identical sums in the fixed-point counter, so
they are ties whatever the tolerance.) Earlier versions used
:math:`10^{-9}`, about :math:`10^5` times the rounding error, and counted some
near misses as ties (79 extra partitions in W1 on raw GloVe).
"""

# Fixed-point exponent: subset sums are computed exactly in int64 with
# |value| <= 2**_FIX_BITS (+ rounding), leaving headroom for the
# ``2 * (t - a) + label`` sort keys used when counting.
_FIX_BITS = 59


def exact_cost(n: int, n_x: int) -> float:
    r"""Estimated operation count of the exact (meet-in-the-middle) method.

    With :math:`k = \min(n_x, n - n_x)` (the complement is counted when
    :math:`n_x > n/2`) and halves of sizes :math:`h = \lfloor n/2 \rfloor`,
    :math:`h' = n - h`, the estimate is

    .. math::

        \sum_{j \le \min(k, h)} \binom{h}{j} + \sum_{j \le \min(k, h')} \binom{h'}{j}
        + \sum_j N_j \log_2 N_j, \qquad N_j = \binom{h}{j} + \binom{h'}{k-j},

    i.e. the number of half-subset sums plus the sort work of the per-size
    counting passes (one tail; a two-sided test with :math:`n_x \ne n/2` does
    two counting passes).  It is the worst case: a pass builds and sorts only
    the sums that can reach the threshold (:math:`a \ge t - \max b` and
    :math:`b \ge t - \max a`), which in a tail is a small fraction (W1 on raw
    GloVe 6B 50d: 4% of :math:`\sum_j N_j`; W2: below 0.01%).
    """
    k, h, hr = _halves(n, n_x)
    if _beyond_floats(n, k):
        return math.inf
    build = sum(math.comb(h, j) for j in range(min(k, h) + 1))
    build += sum(math.comb(hr, j) for j in range(min(k, hr) + 1))
    work = 0.0
    for j in range(max(0, k - hr), min(k, h) + 1):
        nj = math.comb(h, j) + math.comb(hr, k - j)
        if nj > _FLOAT_SAFE:  # mutation: equivalent[cmp > -> >=] (at nj == 2**1000 the build sum, which holds both terms of nj and one more, is above 2**1000: inf either way)
            return math.inf  # beyond any budget; a float would overflow
        work += nj * math.log2(max(nj, 2))
    return float(build + work) if build < _FLOAT_SAFE else math.inf


_FLOAT_SAFE = 2**1000  # Python ints above this are not converted to float (OverflowError near 1.8e308)

#: Bytes per stored half-subset sum, and per element of a counting pass (keys, sort buffer).
_SUM_BYTES = 8
_PASS_BYTES = 16


def _beyond_floats(n: int, k: int) -> bool:
    """True when the largest counting pass surely holds more than 2**1000 sums (cheap, in log space).

    ``C(n, k) = sum_j C(h, j) C(h', k-j) <= (k+1) max_j N_j**2``, so
    ``log2 C(n, k) > 2001 + log2(k+1)`` implies ``max_j N_j > 2**1000``.
    """
    log2_comb = (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)) / math.log(2)
    return log2_comb > 2001 + math.log2(k + 1)  # mutation: equivalent[cmp > -> >=] (float equality of the two sides is not attained: near the boundary the estimate moves in steps far above one ulp; none for k <= 3000 within 300 of each crossing n)


def _halves(n: Any, n_x: Any) -> tuple[int, int, int]:
    """``(k, h, h')``: the counted subset size ``min(n_x, n - n_x)`` and the two half sizes."""
    n = check_int("n", n)
    n_x = check_int("n_x", n_x)
    if n < 1 or not 0 <= n_x <= n:
        raise ConfigError(f"exact_cost needs 0 <= n_x <= n and n >= 1; got n={n}, n_x={n_x}")
    h = n // 2
    return min(n_x, n - n_x), h, n - h


def exact_memory_bytes(n: int, n_x: int, workers: int | None = None) -> int:
    r"""Memory budget, in bytes, of exact counting (a Python ``int``: never overflows).

    The budget that ``exact_memory`` is compared with, before anything is
    allocated: what a counter keeping every half-subset sum (8 bytes each, all
    sizes up to :math:`k`), a ramp of the largest pass :math:`\max_j N_j` (8
    bytes each) and, per counting thread, the keys and the sort buffer of one
    pass (16 bytes per element) would hold:

    .. math::

        8 \sum_{j\le k}\Bigl[\binom{h}{j} + \binom{h'}{j}\Bigr]
        + (8 + 16\,w)\,\max_j N_j .

    It is an upper bound of what the counter allocates (checked on traced
    memory in the tests): it keeps the subset sums of four quarters (a few
    thousand each) and one pass's keys at a time (at most
    :math:`8 \max_j N_j` bytes, only the sums that can reach the threshold),
    plus at most 8 MiB of temporaries, in one thread; the budget is kept as
    it was so that ``exact_memory`` chooses between counting and bracketing
    as before.  ``workers`` (:math:`w`) defaults to ``min(4, CPUs)``.
    ``n = 50, n_x = 25`` gives about 0.9 GiB (the counter needs at most about
    100 MiB); ``n = 64, n_x = 32`` about 110 GiB.
    Beyond float range (:math:`\max_j N_j > 2^{1000}`) a lower bound is returned.
    """
    k, h, hr = _halves(n, n_x)
    if _beyond_floats(n, k):
        return (_SUM_BYTES + _PASS_BYTES) * _FLOAT_SAFE  # a lower bound: beyond any machine
    build = sum(math.comb(h, j) for j in range(min(k, h) + 1)) + sum(math.comb(hr, j) for j in range(min(k, hr) + 1))
    peak = max(math.comb(h, j) + math.comb(hr, k - j) for j in range(max(0, k - hr), min(k, h) + 1))
    w = _n_workers() if workers is None else workers
    return _SUM_BYTES * build + (_SUM_BYTES + _PASS_BYTES * w) * peak


DEFAULT_EXACT_MEMORY: int = 2 * 2**30
"""Default ``exact_memory``: 2 GiB for exact counting (see :func:`exact_memory_bytes`)."""


def describe_bytes(b: float) -> str:
    """``"1.5 GiB"``, ``"300 MiB"``, ... (binary units; huge values in scientific notation).

    Examples
    --------
    >>> describe_bytes(3 * 2**29), describe_bytes(2**20)
    ('1.5 GiB', '1 MiB')
    """
    if b >= _FLOAT_SAFE:
        return "more than 1e300 bytes"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{int(b)} bytes"


DEFAULT_EXACT_BUDGET: float = exact_cost(50, 25)
"""Default ``exact_budget``: every problem with ``n <= 50`` is counted exactly
(``C(50, 25) ~ 1.3e14`` partitions takes at most about 1.5 s and 100 MiB, a
tail far less: W2 on GloVe 6B 50d about 0.01 s); ``n = 64,
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
        return np.zeros(s.shape, dtype=np.int64), 0  # mutation: equivalent[const 0 -> 1] (all sums are 0; a threshold scaled by 2 keeps its sign: ceil(2t) <= 0 iff t <= 0)
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
    """The ``workers`` of :func:`exact_memory_bytes`: this process's CPUs, at most 4."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        cpus = os.cpu_count() or 1  # mutation: equivalent[const 1 -> 0] (max(1, ...) below turns 0 into 1 as well)
    return max(1, min(4, cpus))  # mutation: equivalent[const 1 -> 0] (cpus >= 1: an affinity set is never empty, cpu_count() or 1 is >= 1)


#: Most keys built by one vectorised step of :meth:`_HalfSums.fill` (bounds its index buffer: 8 bytes each).
_CHUNK = 1 << 20  # mutation: equivalent[const 20 -> 21] (the chunk size changes how many keys one step builds, not which)

#: Halves of at most this many values are not split into quarters (one table holds all their sums).
_SPLIT_MIN = 16


class _HalfSums:
    """All subset sums of one half of the values, by size, without storing them.

    The half is split into two quarters P and Q whose subset sums are kept
    sorted, per size (at most C(16, 8) = 12,870 each for n <= 64).  The sums of
    size ``j`` of the half are the sums ``p + q`` over the *blocks* ``p in P[j1]``,
    ``q in Q[j - j1]``; a block is a matrix with sorted rows, so the sums
    reaching a bound are, row by row, a suffix found with ``searchsorted``.
    """

    def __init__(self, values: np.ndarray, kmax: int) -> None:
        q = values.size // 2 if values.size > _SPLIT_MIN else 0  # mutation: equivalent (whether and where a half is split changes only the work: the quarters' sums make up the half's sums for any split)
        self.p = _sums_by_size(values[:q], kmax)
        self.q = _sums_by_size(values[q:], kmax)
        for x in self.p + self.q:
            x.sort()

    def blocks(self, j: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """The (P rows, Q columns) pairs whose sums are the half's sums of size ``j``."""
        lo = max(0, j - (len(self.q) - 1))
        return [(self.p[j1], self.q[j - j1]) for j1 in range(lo, min(j, len(self.p) - 1) + 1)]

    def size(self, j: int) -> int:
        """The number of sums of size ``j``."""
        return sum(p.size * q.size for p, q in self.blocks(j))

    def low(self, j: int) -> int:
        """The smallest sum of size ``j``."""
        return min(int(p[0]) + int(q[0]) for p, q in self.blocks(j))

    def high(self, j: int) -> int:
        """The largest sum of size ``j``."""
        return max(int(p[-1]) + int(q[-1]) for p, q in self.blocks(j))

    def count_ge(self, j: int, c: int) -> int:
        """Number of sums of size ``j`` that are ``>= c``."""
        total = 0
        for p, q in self.blocks(j):
            total += q.size * p.size - int(np.searchsorted(q, np.int64(c) - p).sum())
        return total

    def fill(self, j: int, c: int, out: np.ndarray, scale: int, offset: int) -> None:
        """Write ``scale * x + offset`` for every sum ``x >= c`` of size ``j`` into ``out`` (sized by count_ge).

        Row by row, a block's sums ``>= c`` are ``p + q[start:]``; the runs are
        written in chunks of at most ``_CHUNK`` keys (a whole row at least)
        through one index buffer: first the column indices, then the row values
        (both a cumulative sum of their steps).
        """
        pos = 0
        for p, q in self.blocks(j):
            m = q.size
            start = np.searchsorted(q, np.int64(c) - p)  # first column reaching c, per row (non-increasing)
            first = int(np.count_nonzero(start == m))  # rows with no such column come first
            start = start[first:]
            if start.size == 0:
                continue
            rows = p[first:] * scale + offset
            ends = np.cumsum(m - start)  # end of each row's run in the output
            r0 = 0
            while r0 < start.size:
                base = int(ends[r0 - 1]) if r0 else 0
                limit = base + _CHUNK  # mutation: equivalent[arith + -> -] (a limit below base gives one row per chunk: smaller chunks, the same keys)
                r1 = max(r0 + 1, int(np.searchsorted(ends, limit, side="right")))
                size = int(ends[r1 - 1]) - base
                cuts = ends[r0:r1 - 1] - base  # where the runs of rows r0 + 1 .. r1 - 1 begin
                dst = out[pos:pos + size]
                idx = np.ones(size, dtype=np.int64)  # columns start[r0], ..., m - 1, start[r0 + 1], ..., m - 1, ...
                idx[0] = start[r0]
                idx[cuts] = start[r0 + 1:r1] - (m - 1)
                np.cumsum(idx, out=idx)
                np.take(q, idx, out=dst)
                dst *= scale
                idx.fill(0)  # row values: rows[r0] over its run, then rows[r0 + 1], ...
                idx[0] = rows[r0]
                idx[cuts] = np.diff(rows[r0:r1])
                np.cumsum(idx, out=idx)
                dst += idx
                pos += size
                r0 = r1
        assert pos == out.size, (pos, out.size)


def _count_pairs_ge(left: _HalfSums, j: int, right: _HalfSums, i: int, t: int) -> int:
    """Number of pairs (left sum of size j, right sum of size i) with ``a + b >= t`` (exact).

    Only sums that can reach ``t`` are built: ``a >= t - max b`` and
    ``b >= t - max a`` (every pair reaching ``t`` has both).  Sort-merge
    counting on them: keys ``2 (t - a)`` (label 0) and ``2 b + 1`` (label 1)
    are sorted together; ``b >= t - a`` iff the b-key sorts after the a-key.
    The number of (b before a) pairs follows from the sum of the positions of
    the label-1 keys, so the pass is one sort plus vectorised reductions.
    """
    amax, bmax = left.high(j), right.high(i)
    if amax + bmax < t:
        return 0
    if left.low(j) + right.low(i) >= t:  # mutation: equivalent[cmp >= -> >] (shortcut: at equality the sort-merge count also counts every pair)
        return left.size(j) * right.size(i)
    na = left.count_ge(j, t - bmax)
    nb = right.count_ge(i, t - amax)
    n = na + nb
    keys = np.empty(n, dtype=np.int64)
    left.fill(j, t - bmax, keys[:na], -2, 2 * t)
    right.fill(i, t - amax, keys[na:], 2, 1)
    keys.sort()
    np.bitwise_and(keys, 1, out=keys)
    ramp = np.arange(min(n, _CHUNK), dtype=np.int64)
    pos_sum = 0
    for s0 in range(0, n, _CHUNK):  # mutation: equivalent[const 0 -> 1] (position 0 adds 0 to the sum; chunks from 1 on cover every other position once)
        seg = keys[s0:s0 + _CHUNK]
        pos_sum += int(np.dot(seg, ramp[:seg.size])) + s0 * int(seg.sum())
    # pairs with the b-key before the a-key, i.e. b_j < t - a_i
    below = nb * (n - 1) - pos_sum - nb * (nb - 1) // 2
    return na * nb - below


def _count_ge_int(si: np.ndarray, k: int, thresholds: list[int]) -> list[int]:
    """For each integer ``t``: number of k-subsets of ``si`` with sum >= t."""
    n = si.size
    total = math.comb(n, k)
    pos = int(si[si > 0].sum())  # mutation: equivalent[cmp > -> >=] (zeros add nothing to the sum)
    neg = int(si[si < 0].sum())  # mutation: equivalent[cmp < -> <=, const 0 -> 1] (integers: si < 1 is si <= 0; zeros add nothing to the sum)
    results: list[int | None] = []
    pending: list[tuple[int, int]] = []
    for idx, t in enumerate(thresholds):
        if t > pos:  # no subset sum exceeds the sum of the positive values
            results.append(0)
        elif t <= neg:  # mutation: equivalent[cmp <= -> <] (every subset sum is >= the sum of the negatives; shortcut: at t == neg the general count is also total)
            results.append(total)
        elif k == 0:
            results.append(1 if t <= 0 else 0)
        else:
            results.append(None)
            pending.append((idx, t))
    if not pending:
        return [int(r) for r in results]  # type: ignore[arg-type]

    if 2 * k > n:  # mutation: equivalent[arith, cmp > -> <] (the complement is a cost shortcut: the direct count is the same number)
        # complement: T_I >= t  <=>  T_{I^c} <= tot - t  <=>  not (T_{I^c} >= tot - t + 1)
        tot = int(si.sum())
        comp = _count_ge_int(si, n - k, [tot - t + 1 for _, t in pending])
        for (idx, _), c in zip(pending, comp):
            results[idx] = total - c
        return [int(r) for r in results]  # type: ignore[arg-type]

    h = n // 2
    hr = n - h  # mutation: equivalent[arith] (k <= n/2 <= h' here, so max(0, k - h') is 0 either way)
    js = range(max(0, k - hr), min(k, h) + 1)
    left = _HalfSums(si[:h], k)
    right = _HalfSums(si[h:], k)
    tasks = [(t, j) for _, t in pending for j in js]
    done = {i: _count_pairs_ge(left, j, right, k - j, t) for i, (t, j) in enumerate(tasks)}
    per_threshold: dict[int, int] = {}
    for i, (t, _) in enumerate(tasks):
        per_threshold[t] = per_threshold.get(t, 0) + int(done[i])
    for idx, t in pending:
        results[idx] = per_threshold[t]
    return [int(r) for r in results]  # type: ignore[arg-type]


def exact_count(s: Any, n_x: int, threshold: float, *, exact_memory: int = DEFAULT_EXACT_MEMORY) -> int:
    r"""Exact number of ``n_x``-subsets of ``s`` whose sum is ``>= threshold``.

    .. math:: \#\{I \subseteq \{0..n-1\} : |I| = n_x,\ \textstyle\sum_{i\in I} s_i \ge \mathrm{threshold}\}

    Method (meet in the middle, never enumerating subsets one by one):

    1. ``s`` is scaled by a power of two so that :math:`\sum|s_i| < 2^{59}`
       and rounded to int64.  Subset sums are then *exact* integers (resolution
       at most :math:`2^{-58}\, n \max|s_i|`, below float64 summation error);
       for integer-valued or dyadic ``s`` nothing is rounded at all.
    2. If :math:`n_x > n/2` the complement (size :math:`n - n_x`) is counted.
    3. The values are split into halves L and R, each half into two quarters;
       all subset sums of each quarter are built per subset size, vectorised
       (``new_sums[k] = concat(sums[k], sums[k-1] + v)``), and sorted.  A
       half's sums of size :math:`j` are the sums of a quarter's size
       :math:`j_1` and the other's :math:`j - j_1`: matrices with sorted rows.
    4. For each size :math:`j`, pairs (left subset of size :math:`j`, right
       subset of size :math:`n_x - j`) with sum :math:`\ge` threshold are
       counted with one sort of the merged keys (a sort-merge count).  Only
       the sums that can be part of such a pair are built: left sums
       :math:`a \ge t - \max b` and right sums :math:`b \ge t - \max a`
       (row by row a suffix, found with ``np.searchsorted``); every pair
       reaching :math:`t` has both, so the count is unchanged.  One size is
       processed at a time, partial counts are summed into a Python ``int``.

    Parameters
    ----------
    s : array_like, shape (n,)
        Finite real values.
    n_x : int
        Subset size, ``0 <= n_x <= n``.
    threshold : float
        Compared with ``>=``; no tolerance is applied here.
    exact_memory : int, default :data:`DEFAULT_EXACT_MEMORY`
        Refuse (:class:`~isoeat.ConfigError`) a problem whose
        :func:`exact_memory_bytes` exceeds this many bytes.

    Returns
    -------
    int
        The count (Python ``int``, exact).
    """
    arr = _as_scores(s)
    n = arr.size
    n_x = check_int("n_x", n_x)
    if not 0 <= n_x <= n:
        raise ConfigError(f"n_x must satisfy 0 <= n_x <= n; got n_x={n_x}, n={n}")
    thr = float(threshold)
    if math.isnan(thr):
        raise ConfigError("threshold is NaN")
    need = exact_memory_bytes(n, n_x)
    if need > check_int("exact_memory", exact_memory, lo=0):
        raise ConfigError(
            f"exact_count of C({n}, {n_x}) partitions would need about {describe_bytes(need)} "
            f"> exact_memory {describe_bytes(exact_memory)}"
        )
    si, shift = _fixed_point(arr)
    t_scaled = _scaled_threshold(thr, shift)
    bound = 2.0 ** (_FIX_BITS + 2)  # mutation: equivalent[const 2 -> 3] (beyond every (rounded) subset sum; every |rounded subset sum| < 2**60: t > pos or t <= neg counts as the bound does)
    if t_scaled > bound:  # mutation: equivalent[cmp > -> >=] (every |rounded subset sum| < 2**60: _count_ge_int's t > pos gives 0 too)
        return 0
    if t_scaled <= -bound:  # mutation: equivalent[cmp <= -> <] (every |rounded subset sum| < 2**60: _count_ge_int's t <= neg gives the total too)
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
    tol_i = math.floor(tol_scaled) if math.isfinite(tol_scaled) else 2 ** (_FIX_BITS + 8)  # mutation: equivalent[const 2 -> 3, const 8 -> 9] (any tol >= 2**61 exceeds every |T - T_obs|: all ties)
    t_obs = int(si[:n_x].sum())
    if alternative == "greater":
        return _count_ge_int(si, n_x, [t_obs - tol_i])[0], tol
    if alternative == "less":
        return total - _count_ge_int(si, n_x, [t_obs + tol_i + 1])[0], tol
    # two-sided, in integers: |n T - n_x tot| >= |n T_obs - n_x tot| - n tol
    tot = int(si.sum())
    centre = n_x * tot
    d = abs(n * t_obs - centre) - n * tol_i
    if d <= 0:  # mutation: equivalent[const 0 -> 1] (d = 1 needs n_x tot % n != 0, then no n T equals n_x tot: all counted)
        return total, tol
    upper_t = -((-(centre + d)) // n)  # ceil((centre + d) / n)
    lower_t = (centre - d) // n  # floor((centre - d) / n); count T <= lower_t
    if 2 * n_x == n:  # mutation: equivalent[arith] (symmetric shortcut: the general two-tail count is the same number)
        # T_I <= lower_t  <=>  T_{I^c} >= tot - lower_t == upper_t: both tails equal
        upper = _count_ge_int(si, n_x, [upper_t])[0]
        return 2 * upper, tol
    upper, above_lower = _count_ge_int(si, n_x, [upper_t, lower_t + 1])
    return upper + (total - above_lower), tol

