r"""Certified p-values for :func:`~isoeat.stats.permutation.partition_test`: bounds from rounded sums.

When the partitions are too many to count exactly by meet in the middle
(:mod:`isoeat.stats._exact`), their number can still be *bracketed* with a
guarantee, at a cost set by a resolution instead of by :math:`\binom{n}{n_x}`.

Derivation
----------
Let :math:`k` be the counted subset size and :math:`\delta = 2^{-b}`. Each
value is rounded to the grid, :math:`r_i = \mathrm{round}(s_i/\delta)` (an
integer; power-of-two scaling is exact, so :math:`r_i` is the exactly rounded
value), leaving the residual :math:`e_i = s_i - \delta r_i`,
:math:`|e_i| \le \delta/2`, computed exactly in rationals. For every
:math:`k`-subset :math:`I`, with :math:`R_I = \sum_{i\in I} r_i`,

.. math::

    T_I = \delta R_I + \sum_{i\in I} e_i, \qquad
    e_{lo} \le \sum_{i\in I} e_i \le e_{hi},

where :math:`e_{lo}` (:math:`e_{hi}`) is the sum of the :math:`k` smallest
(largest) residuals; both lie within :math:`\pm k\delta/2`, and together they
span about :math:`k\delta/2` rather than the :math:`k\delta` of the generic
bound. The values are counted in two halves (below), and the bound is taken
per number :math:`j` of values a subset takes from the first half:
:math:`e_{lo}(j)` is the sum of the :math:`j` smallest residuals of the first
half and the :math:`k - j` smallest of the second (likewise :math:`e_{hi}(j)`),
never wider than the global one. Hence, for a threshold :math:`t` and each
:math:`j` (:math:`e_{lo}, e_{hi}` standing for :math:`e_{lo}(j), e_{hi}(j)`),

* :math:`R_I \ge \lceil (t - e_{lo})/\delta \rceil \Rightarrow T_I \ge t`
  and :math:`T_I \ge t \Rightarrow R_I \ge \lceil (t - e_{hi})/\delta \rceil`, so

  .. math:: \#\{R_I \ge \lceil (t-e_{lo})/\delta\rceil\} \le \#\{T_I \ge t\}
            \le \#\{R_I \ge \lceil (t-e_{hi})/\delta\rceil\};

* likewise :math:`\#\{R_I \le \lfloor (t-e_{hi})/\delta\rfloor\} \le
  \#\{T_I \le t\} \le \#\{R_I \le \lfloor (t-e_{lo})/\delta\rfloor\}`.

The thresholds are those of :func:`~isoeat.stats.permutation.partition_test`,
computed exactly in rationals from the float inputs: :math:`t = T_{obs} - \tau`
("greater", a count of :math:`T_I \ge t`), :math:`t = T_{obs} + \tau` ("less",
:math:`T_I \le t`), and for "two-sided" with :math:`m = n_x\bar s` and
:math:`d = |T_{obs} - m| - \tau`: all partitions when :math:`d \le 0`, else
the two disjoint tails :math:`T_I \ge m + d` and :math:`T_I \le m - d`, whose
brackets add. :math:`\tau` is the reported tolerance (the float
``rtol * sum|s|``), :math:`T_{obs}` and :math:`m` are exact. When
:math:`n_x > n/2` the complement (size :math:`n - n_x`) is counted:
:math:`T_I \ge t \iff T_{I^c} \le \Sigma - t`. When every residual is zero
(integer or dyadic data on a fine enough grid) the two ends meet: the count is
exact.

Counting rounded sums
---------------------
The :math:`n` values are split into two halves: the lower and the upper half of
the sorted values (a narrower spread in each half means narrower tables), or,
for problems of at most :math:`10^{13}` partitions, the observed counted side
and the rest: then :math:`e_{lo}(k) = e_{hi}(k)` for the observed subset itself
and the bounds of its near neighbours (few values swapped) are only a few
:math:`\delta` wide, so the few partitions at the top of a small test are told
apart (large problems meet the absolute width 1e-12 instead). For each half a
dynamic programme over (subset size, rounded sum) gives the number of
:math:`j`-subsets per sum, one ``float64`` array per size (the in-place update
``C_j[v + r] += C_{j-1}[v]``, sizes in descending order, per element). The two
halves are combined per size with a tail cumulative sum and one dot product,
at the integer thresholds of that size.

Counts are ``float64``: every operation on non-negative numbers multiplies the
exact value by :math:`(1 + \epsilon)`, :math:`|\epsilon| \le u = 2^{-53}`, so a
value reached through at most :math:`D` roundings is within relative
:math:`\gamma_D = Du/(1 - Du)` of the exact integer (Higham, *Accuracy and
Stability of Numerical Algorithms*, §3.1 and §4.2; any summation order of
:math:`L` terms puts each term through at most :math:`L - 1` additions, so the
bound holds for numpy's pairwise sums and ``einsum`` dot products alike). :math:`D`
counts the programme's steps (one addition per element), the cumulative sum,
the product, the dot product and the sum over sizes. The integer bounds are then
:math:`\lceil \tilde c/(1+\gamma_D)\rceil` and :math:`\lfloor \tilde c/(1-\gamma_D)\rfloor`:
the bracket stays certified whatever the size of the counts (below
:math:`2^{1000}`, the float range; larger problems are refused).

Refinement and memory
---------------------
The resolution is refined (:math:`b` increased, i.e. :math:`\delta` halved at
least once per step, by more when the width measured predicts it) until the
bracket's width is at most ``rel_width`` times its lower end (so at most
``rel_width`` times the true p) or at most ``abs_width`` in p; every bracket
computed is certified, so their intersection is reported. The tables' size is
known from the rounded values before anything is allocated
(:func:`certified_memory_bytes`); a resolution whose tables exceed the budget
is not run, and a problem whose predicted need (a normal approximation of the
null distribution of :math:`T_I`) exceeds it many times over is refused
without running.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from isoeat._errors import ConfigError

from ._exact import describe_bytes

__all__ = ["DEFAULT_ABS_WIDTH", "DEFAULT_REL_WIDTH", "CertifiedCount", "certified_bracket", "certified_memory_bytes",
           "certified_tail_count", "set_bracket_store"]

DEFAULT_REL_WIDTH: float = 1e-3
"""Target relative width of a certified bracket: ``p_high - p_low <= 1e-3 * p_low``."""
DEFAULT_ABS_WIDTH: float = 1e-12
"""Target absolute width of a certified bracket (for tiny p): ``p_high - p_low <= 1e-12``."""

_U = Fraction(1, 2**53)  # unit roundoff of float64
_BYTES = 8  # one float64 count
_TEMPS = 3  # temporary arrays of the largest table while combining (tail sums, copies of reversed views)
_MAX_PASSES = 1 << 20  # (element, size) updates of the programme: a Python-level loop, refused beyond
_FLOAT_LIMIT = 2**1000  # counts must stay in float range
_MAX_BITS = 1075  # on a grid of 2**-1075 no float is rounded (every float is a multiple of 2**-1074)
_SMALL = 10**13  # problems with at most this many partitions split by the observed sides (see _Problem)
_PREDICT_SLACK = 4  # refuse without running when the predicted tables exceed the budget this many times


class CertifiedCount(NamedTuple):
    """Outcome of :func:`_certified_tail_count`: ``low <= count <= high`` is guaranteed."""

    low: int
    high: int
    total: int
    tolerance: float
    bits: int | None  # resolution 2**-bits of the finest tables run; None when none ran
    reached: bool  # the width target was met
    memory: int  # estimated bytes of the finest tables run (0 when none ran)
    reason: str  # why the target was not met ("" when it was)


# ---------------------------------------------------------------------------
# the problem in exact arithmetic
# ---------------------------------------------------------------------------


class _Problem:
    """The counted size ``k`` and the tail queries ``(direction, t)`` with exact thresholds ``t``.

    ``queries is None`` means that every partition reaches the observed value.
    """

    def __init__(self, s: np.ndarray, n_x: int, alternative: str, rtol: float, split: str = "auto") -> None:
        n = s.size
        self.s = s
        self.n = n
        self.total = math.comb(n, n_x)
        with np.errstate(over="ignore"):
            self.tolerance = rtol * float(np.abs(s).sum())
        complement = 2 * n_x > n
        self.k = n - n_x if complement else n_x
        self.frac = [Fraction(v) for v in s.tolist()]
        if split == "auto":
            split = "observed" if self.total <= _SMALL else "sorted"  # mutation: equivalent[cmp <= -> <] (no C(n, k) equals 10**13 but C(10**13, 1), 80 TB of values: Sylvester-Schur leaves k <= 4, none fits)
        if split == "observed":
            # the observed counted side, then the rest: the residual bounds of _bracket_at are per
            # number j taken from the first half, exact for the observed subset itself (j = k), within
            # about 2 (k - j) delta for subsets near it, so a small count can be resolved exactly
            x_side, y_side = self.frac[:n_x], self.frac[n_x:]
            self.halves = (y_side, x_side) if complement else (x_side, y_side)
            self.float_halves = (s[n_x:], s[:n_x]) if complement else (s[:n_x], s[n_x:])
        else:
            # lower and upper half of the sorted values: narrower tables
            order = sorted(self.frac)
            self.halves = (order[:n // 2], order[n // 2:])
            self.float_halves = (np.sort(s)[:n // 2], np.sort(s)[n // 2:])
        self.queries: list[tuple[str, Fraction]] | None = None
        if not math.isfinite(self.tolerance):
            return  # every difference is within the tolerance
        tau = Fraction(self.tolerance)
        t_obs = sum(self.frac[:n_x], Fraction(0))
        if alternative == "greater":
            qs = [("ge", t_obs - tau)]
        elif alternative == "less":
            qs = [("le", t_obs + tau)]
        else:
            m = Fraction(n_x) * sum(self.frac, Fraction(0)) / n
            d = abs(t_obs - m) - tau
            if d <= 0:  # mutation: equivalent[cmp <= -> <] (at d = 0 the two tails cover every partition; clipped to the total)
                return
            qs = [("ge", m + d), ("le", m - d)]
        if complement:
            total_sum = sum(self.frac, Fraction(0))
            qs = [("le" if way == "ge" else "ge", total_sum - t) for way, t in qs]
        self.queries = qs


# ---------------------------------------------------------------------------
# tables of rounded subset sums
# ---------------------------------------------------------------------------


def _half_plan(vals: list[int], kmax: int) -> tuple[list[int], list[int]]:
    """For ascending ints: per size j <= kmax, the smallest j-subset sum and the table width."""
    top = min(kmax, len(vals))
    lo = [0] * (top + 1)
    hi = [0] * (top + 1)
    for j in range(1, top + 1):
        lo[j] = lo[j - 1] + vals[j - 1]
        hi[j] = hi[j - 1] + vals[len(vals) - j]
    return lo, [hi[j] - lo[j] + 1 for j in range(top + 1)]


def _plan_bytes(halves: tuple[list[int], list[int]], k: int) -> int:
    """Bytes of the tables of both (ascending) halves and of the temporaries."""
    widths = [w for half in halves for w in _half_plan(half, k)[1]]
    return _BYTES * (sum(widths) + _TEMPS * max(widths))


def _half_tables(vals: list[int], kmax: int) -> list[tuple[int, np.ndarray]]:
    """Per size j <= kmax: (smallest j-subset sum, counts of j-subsets per sum from it) of ascending ints."""
    lo, widths = _half_plan(vals, kmax)
    tabs = [np.zeros(w) for w in widths]
    tabs[0][0] = 1.0
    # entries of tabs[j] from filled[j] on are still zero; each is set (>= 1) before it is first read
    filled = [1] + [0] * (  # mutation: equivalent[const 0 -> 1] (initial values are overwritten before being read)
        len(widths) - 1)  # mutation: equivalent[arith - -> +, const 1 -> 0] (one entry more, never read)
    for t, v in enumerate(vals):
        for j in range(min(t + 1, len(widths) - 1), 0, -1):
            m = filled[j - 1]
            start = lo[j - 1] + v - lo[j]  # >= 0: values ascend, so v >= vals[j - 1]
            dst = tabs[j][start:start + m]
            np.add(dst, tabs[j - 1][:m], out=dst)
            filled[j] = max(filled[j], start + m)
    return list(zip(lo, tabs))


def _count_ge(left: list[tuple[int, np.ndarray]], right: list[tuple[int, np.ndarray]], k: int,
              thresholds: dict[int, list[int]]) -> list[float]:
    """Approximate (float) counts of k-subsets whose rounded sum reaches the thresholds.

    ``left[j]`` / ``right[m]``: (sum at index 0, counts) of the j- / m-subsets of each half;
    ``thresholds[j]``: for left size j, the q-th threshold ``a``; the q-th result counts the
    pairs (left j-subset, right (k-j)-subset) whose sum is ``>= thresholds[j][q]``, summed over j.
    """
    out: list[float] = []
    for j, ts in thresholds.items():
        al, cl = left[j]
        ar, cr = right[k - j]
        wl, wr = cl.size, cr.size
        # back[x] = #{right (k-j)-subsets with index >= wr - 1 - x}; contiguous, so the dot products below
        # pair cl[u] with back[wr - 1 - c + u] on two forward slices
        back = np.cumsum(cr[::-1])
        tot = float(back[-1])
        out += [0.0] * (len(ts) - len(out))
        for q, a in enumerate(ts):
            c = min(max(a - al - ar, 0), wl + wr)  # left index u pairs with the right indices >= c - u
            part = 0.0
            if c < wl:  # mutation: equivalent[cmp < -> <=] (at c = wl the slice is empty and adds 0.0)
                part += float(cl[max(c, 0):].sum()) * tot
            u0, u1 = max(0, c - wr + 1), min(wl, c)
            if u0 < u1:  # mutation: equivalent[cmp < -> <=] (at u0 = u1 both slices are empty: a dot product of 0.0)
                off = wr - 1 - c
                part += float(np.einsum("i,i->", cl[u0:u1], back[off + u0:off + u1]))  # not np.dot: BLAS stalls if busy
            out[q] += part
    return out


def _depth(n: int, halves: list[list[tuple[int, np.ndarray]]], k: int) -> int:
    """An upper bound on the roundings any computed count of :func:`_count_ge` went through.

    A table entry of a half of :math:`h` values went through at most :math:`h` additions (one per
    value); the right factor then through a cumulative sum of at most :math:`w` terms, the product
    through one multiplication, the sum over left indices through at most :math:`w` more additions,
    and the sum over sizes through at most :math:`2(k + 1)` more: :math:`n + 2w + 2(k + 1) + 3`
    with :math:`w` the widest table; 8 is added for good measure.
    """
    w = max(arr.size for half in halves for _, arr in half)
    return n + 2 * w + 2 * (k + 1) + 8


def _certify(approx: float, gamma: Fraction, total: int) -> tuple[int, int]:
    """Integer bounds on an exact count whose float value is ``approx`` within relative ``gamma``."""
    c = Fraction(approx)
    low = math.ceil(c / (1 + gamma))
    high = math.floor(c / (1 - gamma))
    return max(0, min(low, total)), max(0, min(high, total))


class _Rounded(NamedTuple):
    """The two halves at one resolution: ascending rounded values and residual-sum bounds per size."""

    values: tuple[list[int], list[int]]
    e_lo: tuple[list[Fraction], list[Fraction]]  # e_lo[h][j]: sum of the j smallest residuals of half h
    e_hi: tuple[list[Fraction], list[Fraction]]  # e_hi[h][j]: sum of the j largest


def _rounded(prob: _Problem, bits: int) -> _Rounded:
    """Round each half to the grid 2**-bits (exactly, ties to even) and bound its residual sums."""
    scale = Fraction(2) ** bits
    values, e_lo, e_hi = [], [], []
    for half in prob.halves:
        r = [round(f * scale) for f in half]
        res = sorted(f - Fraction(ri) / scale for f, ri in zip(half, r))
        top = min(prob.k, len(res))
        lo, hi = [Fraction(0)], [Fraction(0)]
        for j in range(top):
            lo.append(lo[-1] + res[j])
            hi.append(hi[-1] + res[len(res) - 1 - j])
        values.append(sorted(r))
        e_lo.append(lo)
        e_hi.append(hi)
    return _Rounded((values[0], values[1]), (e_lo[0], e_lo[1]), (e_hi[0], e_hi[1]))


def _bracket_at(prob: _Problem, bits: int, memory: int) -> tuple[int, int, int] | None:
    """Certified (low, high) count at resolution 2**-bits and the tables' bytes; None over ``memory``."""
    if prob.queries is None:
        return prob.total, prob.total, 0  # mutation: equivalent[const 0 -> 1] (bytes unread here: _certified_tail_count returns before)
    rd = _rounded(prob, bits)
    k = prob.k
    need = _plan_bytes(rd.values, k)
    if need > memory:
        return None
    scale = Fraction(2) ** bits
    tables = [_half_tables(vals, k) for vals in rd.values]
    depth = _depth(prob.n, tables, k)
    gamma = depth * _U / (1 - depth * _U)
    # each half holds at least k values (k <= n/2), so js is 0..k; either half's length gives the same
    js = range(max(0, k - len(rd.values[1])),  # mutation: equivalent[const 1 -> 0] (k - len(half) <= 0 for both)
               min(k, len(rd.values[0])) + 1)  # mutation: equivalent[const 0 -> 1] (min(k, len(half)) = k for both)
    low = high = 0
    for way, t in prob.queries:
        # residual sum of a k-subset with j values from the first half: within [lo_j, hi_j]
        lo_j = {j: rd.e_lo[0][j] + rd.e_lo[1][k - j] for j in js}
        hi_j = {j: rd.e_hi[0][j] + rd.e_hi[1][k - j] for j in js}
        if way == "ge":  # #{R >= ceil((t - lo)/delta)} <= #{T >= t} <= #{R >= ceil((t - hi)/delta)}
            ths = {j: [math.ceil((t - lo_j[j]) * scale), math.ceil((t - hi_j[j]) * scale)] for j in js}
            strict, loose = _count_ge(tables[0], tables[1], k, ths)
        else:  # #{R <= floor((t - hi)/delta)} <= #{T <= t} <= #{R <= floor((t - lo)/delta)}, as -R >= -a
            ths = {j: [-math.floor((t - hi_j[j]) * scale), -math.floor((t - lo_j[j]) * scale)] for j in js}
            flipped = [[(-(a + tab.size - 1), tab[::-1]) for a, tab in half] for half in tables]
            strict, loose = _count_ge(flipped[0], flipped[1], k, ths)
        low += _certify(strict, gamma, prob.total)[0]
        high += _certify(loose, gamma, prob.total)[1]
    return min(low, prob.total), min(high, prob.total), need


# ---------------------------------------------------------------------------
# planning: memory, predicted resolution
# ---------------------------------------------------------------------------


def certified_memory_bytes(s: Any, n_x: int, bits: int) -> int:
    r"""Bytes of the count tables of a certified bracket at resolution :math:`2^{-\text{bits}}`.

    The values are rounded to the grid and split into the X side and the Y
    side (the counted side first when :math:`n_x > n/2`); per side and per
    subset size :math:`j \le \min(n_x, n - n_x)` one ``float64`` array as wide
    as the range of the rounded :math:`j`-subset sums, plus three temporaries
    as large as the largest of them. Computed from the rounded values alone,
    before anything is allocated.
    """
    from ._checks import _as_scores, _check_n_x

    arr = _as_scores(s)
    prob = _Problem(arr, _check_n_x(n_x, arr.size), "greater", 0.0)  # mutation: equivalent[const 0.0 -> 1.0] (the tolerance sets only the queries; the table sizes read the halves and k)
    return _plan_bytes(_rounded(prob, int(bits)).values, prob.k)


def _predicted_bits(prob: _Problem, rel_width: float, abs_width: float) -> int:
    """The resolution at which a normal approximation of the null predicts the width target met."""
    n, k = prob.n, prob.k
    peak = float(np.max(np.abs(prob.s)))
    if peak == 0.0:
        return 0
    e = math.frexp(peak)[1]
    x = np.ldexp(prob.s, -e)  # |x| < 1: the moments below cannot overflow; bits for s = bits for x - e
    mean = float(np.mean(x))
    sd = math.sqrt(k * (n - k) / (n * (n - 1)) * float(np.sum((x - mean) ** 2)))
    spread = float(np.max(x) - np.min(x))
    coarse = 4 - math.frexp(spread)[1] if spread > 0 else 0  # 16 grid steps across the values
    delta = 0.0  # mutation: equivalent[const 0.0 -> 1.0] (kept only without sd or density; then bits = max(coarse, -log2 delta) and coarse >= 0 = -log2 1: 3 or more for |x| < 1 with a spread, 0 without)
    if sd > 0.0:
        mu = k * mean
        p = dens = 0.0
        for way, t in prob.queries or []:
            z = (math.ldexp(float(t), -e) - mu) / sd * (1 if way == "ge" else -1)  # mutation: equivalent[arith * -> /] (the last factor is +-1: dividing by it is multiplying by it)
            p += 0.5 * math.erfc(z / math.sqrt(2))
            dens += math.exp(-0.5 * z * z) / (sd * math.sqrt(2 * math.pi))
        span = max(k * (n - k) / n / 2, 1.0)  # typical residual span (hi - lo) near the threshold, in grid steps
        if dens > 0.0:
            delta = max(rel_width * p, abs_width) / (dens * span)
    bits = max(coarse, math.ceil(-math.log2(delta))) if delta > 0.0 else coarse
    return min(_MAX_BITS, bits - e)


def _plan_estimate(prob: _Problem, bits: int) -> int:
    """Float estimate of :func:`certified_memory_bytes` (no rationals: cheap for any n)."""
    widths = []
    for half in prob.float_halves:
        r = np.sort(np.ldexp(half, bits))
        top = min(prob.k, r.size)
        cum = np.concatenate([[0.0], np.cumsum(r)])
        j = np.arange(top + 1)
        widths.append((cum[-1] - cum[r.size - j]) - cum[j] + j + 1)
    w = np.concatenate(widths)
    with np.errstate(invalid="ignore", over="ignore"):
        total = _BYTES * (float(w.sum()) + _TEMPS * float(w.max()))
    return int(total) if math.isfinite(total) and total < 2.0**200 else 2**200  # mutation: equivalent[cmp < -> <=] (at total = 2.0**200 both give 2**200)


def _feasible(n: int, k: int) -> str:
    """Why no certified bracket is attempted at all ("" when one is); cheap, before any rational."""
    passes = n * (k + 1)
    if passes > _MAX_PASSES:
        return f"{n} values with subsets of {k}: {passes:,} table updates, beyond {_MAX_PASSES:,}"
    if math.comb(n, k) > _FLOAT_LIMIT:  # mutation: equivalent[cmp > -> >=] (no C(n, k) is 2**1000 within the update limit: k = 1 gives n <= 2**19; k = 2, 3 by parity; k >= 4, n >= 2k: Erdos, no binomial coefficient is a perfect power)
        return f"C({n}, {k}) exceeds 2**1000, beyond float counts"
    return ""


# ---------------------------------------------------------------------------
# entry points
# ---------------------------------------------------------------------------


def certified_bracket(s: Any, n_x: int, bits: int, *, alternative: str = "greater", rtol: float = 1e-12,
                      memory: int | None = None) -> tuple[int, int]:
    r"""Certified bounds ``(low, high)`` on the partition count at one resolution :math:`2^{-\text{bits}}`.

    ``low <= c <= high`` where ``c`` is the count of
    :func:`~isoeat.stats.permutation.partition_test` (same alternative and
    tolerance); the p bracket is ``(low / C(n, n_x), high / C(n, n_x))``.
    Raises :class:`~isoeat.ConfigError` when the tables would exceed ``memory``
    bytes (default: no limit).
    """
    from ._checks import _as_scores, _check_n_x

    arr = _as_scores(s)
    prob = _Problem(arr, _check_n_x(n_x, arr.size), alternative, rtol)
    limit = 2**62 if memory is None else int(memory)
    out = _bracket_at(prob, int(bits), limit)
    if out is None:
        raise ConfigError(f"certified tables at resolution 2**{-int(bits)} would need about "
                          f"{describe_bytes(certified_memory_bytes(arr, n_x, bits))} > {describe_bytes(limit)}")
    return out[0], out[1]


def _reached(low: int, high: int, total: int, rel_width: float, abs_width: float) -> bool:
    """The width target: ``high - low <= rel_width * low`` (so <= rel_width * the true count) or tiny in p."""
    return high - low <= max(rel_width * low, abs_width * total)


def _finest_fitting(prob: _Problem, above: int, below: int, memory: int) -> int | None:
    """The finest resolution bits in (above, below) whose tables fit in ``memory`` (None if none does)."""
    for b in range(below - 1, above, -1):
        if _plan_bytes(_rounded(prob, b).values, prob.k) <= memory:
            return b
    return None


def _certified_tail_count(s: np.ndarray, n_x: int, alternative: str, rtol: float, memory: int,
                          rel_width: float = DEFAULT_REL_WIDTH,
                          abs_width: float = DEFAULT_ABS_WIDTH) -> CertifiedCount:
    """Refine the resolution until the bracket meets the width target or the next tables exceed ``memory``."""
    why = _feasible(s.size, min(n_x, s.size - n_x))
    if why:
        with np.errstate(over="ignore"):
            tol = rtol * float(np.abs(s).sum())
        return CertifiedCount(0, math.comb(s.size, n_x), math.comb(s.size, n_x), tol, None, False, 0, why)
    prob = _Problem(s, n_x, alternative, rtol)
    total, tol = prob.total, prob.tolerance
    if prob.queries is None:
        return CertifiedCount(total, total, total, tol, None, True, 0, "")
    target = _predicted_bits(prob, rel_width, abs_width)
    predicted = _plan_estimate(prob, target)
    if predicted > _PREDICT_SLACK * memory:
        return CertifiedCount(0, total, total, tol, None, False, 0,
                              f"a bracket of relative width {rel_width:g} would need tables of about "
                              f"{describe_bytes(predicted)} > {describe_bytes(memory)} (predicted)")
    bits = target - 3  # a cheap first pass (about 1/8 of the predicted tables) measures the width
    low, high, done, need = 0, total, None, 0
    while True:
        out = _bracket_at(prob, bits, memory)
        if out is None:
            fits = _finest_fitting(prob, bits - 8 if done is None else done, bits, memory)
            if fits is None:
                return CertifiedCount(low, high, total, tol, done, False, need,
                                      f"a narrower bracket needs tables of about "
                                      f"{describe_bytes(certified_memory_bytes(s, n_x, bits))} "
                                      f"> {describe_bytes(memory)}")
            bits = fits
            continue
        low, high, done, need = max(low, out[0]), min(high, out[1]), bits, out[2]
        if _reached(low, high, total, rel_width, abs_width):
            return CertifiedCount(low, high, total, tol, bits, True, need, "")
        if bits >= _MAX_BITS:
            return CertifiedCount(low, high, total, tol, bits, False, need, f"resolution 2**{-_MAX_BITS} reached")
        goal = max(rel_width * low, abs_width * total)
        bits = min(_MAX_BITS, bits + min(12, max(1, math.ceil(math.log2(1.25 * (high - low) / goal)))))  # mutation: equivalent[const 1 -> 0] (not reached: high - low > goal, so the log2 is > 0.32 and its ceiling >= 1)


#: A bracket that took at least this long is kept in the bracket store (kind ``certified``) by content.
CACHE_SECONDS = 0.05

#: Where slow brackets are kept: ``None`` (computed every time) or an object with ``code()`` (a digest of
#: isoeat's code), ``get(key)`` (the stored record or None) and ``put(key, record)``. The statistics never
#: import the backends (they take any encoder, and any store): the engine installs the embedding cache here
#: (:func:`set_bracket_store`, called by :mod:`isoeat.experiments.engine`).
_STORE: Any = None


def set_bracket_store(store: Any) -> Any:
    """Install ``store`` (see :data:`_STORE`; ``None``: none) for :func:`certified_tail_count`; returns the old one."""
    global _STORE
    old, _STORE = _STORE, store
    return old


def bracket_store() -> Any:
    """The installed store (:data:`_STORE`; ``None``: none): Level 2 of :mod:`isoeat.stats.levels` keeps its slow
    exact counts there too, under keys of its own."""
    return _STORE


def _cache_key(s: np.ndarray, n_x: int, alternative: str, rtol: float, memory: int, code: str) -> dict[str, Any]:
    import hashlib

    h = hashlib.sha256(np.ascontiguousarray(s, dtype=np.float64).tobytes())
    return {"certified": 1, "values": h.hexdigest(), "n": int(s.size), "n_x": int(n_x), "alternative": alternative,
            "rtol": float(rtol).hex(), "memory": int(memory), "rel_width": DEFAULT_REL_WIDTH.hex(),
            "abs_width": DEFAULT_ABS_WIDTH.hex(), "code": code}


def certified_tail_count(s: np.ndarray, n_x: int, alternative: str, rtol: float, memory: int) -> CertifiedCount:
    """:func:`_certified_tail_count` at the default widths, kept in the installed bracket store by content.

    A bracket whose tables took :data:`CACHE_SECONDS` or more (about 0.4 s for the 64 values of a test of
    16 words a side) is stored under every input byte for byte (the values, ``n_x``, ``alternative``,
    ``rtol``, ``memory``, the widths) and the digest of isoeat's code: a stored entry is what the
    computation gives, field for field. Without a store (:func:`set_bracket_store`) it is computed.
    """
    import json
    import time

    store = _STORE
    if store is None:
        return _certified_tail_count(s, n_x, alternative, rtol, memory)
    key = _cache_key(s, n_x, alternative, rtol, memory, store.code())
    found = store.get(key)
    if found is not None:
        try:
            low, high, total, tol, bits, reached, need, reason = json.loads(str(found))
            return CertifiedCount(int(low, 16), int(high, 16), int(total, 16), float.fromhex(tol),
                                  None if bits is None else int(bits), bool(reached), int(need, 16), str(reason))
        except (ValueError, TypeError):  # not a record this code wrote: computed again
            pass
    t0 = time.perf_counter()
    out = _certified_tail_count(s, n_x, alternative, rtol, memory)
    if time.perf_counter() - t0 >= CACHE_SECONDS:  # counts in hex: exact, and of any size (str() stops at 4,300 digits)
        store.put(key, json.dumps([f"{out.low:x}", f"{out.high:x}", f"{out.total:x}", float(out.tolerance).hex(),
                                   out.bits, bool(out.reached), f"{out.memory:x}", out.reason]))
    return out
