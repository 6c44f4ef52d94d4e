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

Ties: :math:`\tau = \mathrm{rtol} \cdot \sum_i |s_i|` (``rtol = 1e-12`` by
default, :data:`DEFAULT_RTOL`: the scale of float64 rounding, see there).  Values within :math:`\tau` of the
observed one count as reaching it, so that floating-point noise never splits genuine ties.  The tolerance used is
reported in :attr:`PermutationResult.tolerance`.

Exact counting uses a meet-in-the-middle scheme (see :func:`exact_count`,
implemented in :mod:`isoeat.stats._exact`); beyond it, a certified bracket
:math:`p_{low} \le p \le p_{high}` comes from counting rounded subset sums
(:mod:`isoeat.stats._certified`, which derives the bound); Monte Carlo sampling
draws uniform random :math:`n_x`-subsets in vectorised batches
(:mod:`isoeat.stats._montecarlo`).
This module holds the result type and the public entry point
:func:`partition_test`; the names above are re-exported here.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from isoeat._errors import ConfigError, IsoeatWarning
from isoeat._validate import check_choice, check_int, check_real

from ._certified import DEFAULT_ABS_WIDTH, DEFAULT_REL_WIDTH, CertifiedCount, certified_tail_count
from ._checks import _as_scores, _check_level, _check_n_x
from ._exact import (
    DEFAULT_EXACT_BUDGET,
    DEFAULT_EXACT_MEMORY,
    DEFAULT_RTOL,
    _exact_tail_count,
    describe_bytes,
    exact_cost,
    exact_count,
    exact_memory_bytes,
)
from ._montecarlo import _monte_carlo, _random_subset_masks, clopper_pearson  # noqa: F401 (_random_subset_masks re-exported)

if TYPE_CHECKING:
    from .options import PermutationOptions

__all__ = [
    "DEFAULT_EXACT_BUDGET",
    "DEFAULT_EXACT_MEMORY",
    "FALLBACK_PERMUTATIONS",
    "DEFAULT_RTOL",
    "PermutationResult",
    "clopper_pearson",
    "exact_cost",
    "exact_count",
    "exact_memory_bytes",
    "partition_test",
]

_ALTERNATIVES = ("greater", "less", "two-sided")
_METHODS = ("auto", "exact", "certified", "monte-carlo")

#: Random partitions drawn when ``method="auto"`` was asked for an exact count
#: (``n_permutations`` >= the number of partitions) that does not fit in ``exact_memory``.
FALLBACK_PERMUTATIONS = 1_000_000
#: The most Monte Carlo permutations one test may ask for (time grows linearly: about 0.1 s per million on 2 cores).
MAX_MONTE_CARLO = 1_000_000_000


# ---------------------------------------------------------------------------
# result type
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PermutationResult:
    r"""Outcome of :func:`partition_test`.

    Attributes
    ----------
    p_value : float
        Exact: ``count / n_partitions``.  Certified: ``ci_high``, the upper
        end of the bracket (conservative: the exact p is never above it).
        Monte Carlo: :math:`(k + 1) / (N + 1)` with :math:`k` = ``count`` and
        :math:`N` = ``n_permutations`` (never 0, valid p-value).
    p_method : str
        ``"exact"``, ``"certified"`` or ``"monte-carlo"``.
    alternative : str
        ``"greater"``, ``"less"`` or ``"two-sided"``.
    count : int
        Number of partitions (exact) or sampled permutations (Monte Carlo)
        whose statistic reaches the observed one (Python ``int``; may exceed
        the int64 range for large exact problems); certified: the upper bound
        on that number of partitions.
    n_partitions : int
        :math:`\binom{n}{n_x}`, the size of the permutation null (always set).
    n_permutations : int or None
        Number of random partitions actually sampled (Monte Carlo; can be
        below the requested number when sequential stopping triggered),
        ``None`` for exact and certified results.
    ci_low, ci_high : float
        Clopper–Pearson interval for the true p-value from ``count /
        n_permutations`` (Monte Carlo); both equal ``p_value`` when exact;
        certified: the bracket, which holds the exact p with certainty
        (rounded outwards to floats).
    tolerance : float
        :math:`\tau = \mathrm{rtol}\sum_i|s_i|`, in the units of ``s``.
    stopped_early : bool
        True when sequential stopping ended the Monte Carlo run early.
    note : str
        Why the method differs from what was asked, or which one ``"auto"``
        chose beyond exact counting and why (exact counting would exceed
        ``exact_budget`` or ``exact_memory``; the certified bracket could not
        reach its width in ``exact_memory``); for certified results also the
        resolution; empty for plain exact and Monte Carlo results.
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
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a plain ``dict`` (JSON-friendly values)."""
        return asdict(self)



def _result(
    alternative: str,
    n_partitions: int,
    tolerance: float,
    count: int,
    p_value: float,
    n_permutations: int | None = None,
    ci: tuple[float, float] | None = None,
    stopped_early: bool = False,
    note: str = "",
    p_method: str | None = None,
) -> PermutationResult:
    """The one constructor of :class:`PermutationResult`, so every path fills the same fields.

    ``n_permutations=None`` marks an exact result (``p_method="exact"``, the
    interval collapsed to ``p_value``) unless ``p_method`` says otherwise
    (``"certified"``, with ``ci`` the bracket); otherwise a Monte Carlo one.
    """
    low, high = (p_value, p_value) if ci is None else ci
    return PermutationResult(
        p_value=p_value,
        p_method=p_method or ("exact" if n_permutations is None else "monte-carlo"),
        alternative=alternative,
        count=int(count),
        n_partitions=n_partitions,
        n_permutations=n_permutations,
        ci_low=low,
        ci_high=high,
        tolerance=tolerance,
        stopped_early=stopped_early,
        note=note,
    )


def _p_outward(count: int, total: int, up: bool) -> float:
    """``count / total`` as a float rounded outwards (down for a lower end, up for an upper end)."""
    exact = Fraction(count, total)
    p = float(exact)
    if up and Fraction(p) < exact:
        p = math.nextafter(p, math.inf)
    elif not up and Fraction(p) > exact:
        p = math.nextafter(p, -math.inf)
    return p


def _narrower_than_sampling(cert: CertifiedCount, n_permutations: int, confidence: float) -> bool:
    """True when the bracket is narrower than the Clopper–Pearson interval Monte Carlo would likely give.

    That interval is computed for ``k = round(N p)`` hits out of ``N = n_permutations``, with ``p`` the
    bracket's midpoint: a bracket that misses its width target is still returned by ``"auto"`` when
    sampling would (most likely) say less.
    """
    mid = Fraction(cert.low + cert.high, 2 * cert.total)
    low, high = clopper_pearson(round(mid * n_permutations), n_permutations, confidence)
    return Fraction(cert.high - cert.low, cert.total) < Fraction(high) - Fraction(low)


def _certified_result(alternative: str, cert: CertifiedCount, why: str, sampled: int | None = None,
                      confidence: float = 0.95) -> PermutationResult:
    """A certified bracket as a result: ``p_value`` its upper end, ``ci`` the bracket, ``count`` the upper count.

    ``sampled``: the bracket missed its target and is returned because it is narrower than the
    interval of that many Monte Carlo permutations would be (the note says so).
    """
    low = _p_outward(cert.low, cert.total, up=False)
    high = _p_outward(cert.high, cert.total, up=True)
    if cert.bits is None:
        how = "certified: every partition reaches the observed value" if cert.low == cert.total else "certified"
    else:
        how = (f"certified bracket from subset sums rounded to 2**{-cert.bits} "
               f"(tables of {describe_bytes(cert.memory)})")
    if not cert.reached:
        how += (f"; wider than the target (relative width {DEFAULT_REL_WIDTH:g} or {DEFAULT_ABS_WIDTH:g} in p): "
                f"{cert.reason}")
        if sampled is not None:
            how += f"; narrower than the {confidence:g} interval of {sampled:,} Monte Carlo permutations would be"
    return _result(alternative, cert.total, cert.tolerance, cert.high, high, ci=(low, high),
                   note=f"{why}: {how}" if why else how, p_method="certified")


# ---------------------------------------------------------------------------
# public entry point
# ---------------------------------------------------------------------------


def partition_test(s: Any, n_x: int, *, rng: Any = None, options: Any = None, **fields: Any) -> PermutationResult:
    r"""Permutation test of the WEAT statistic over all X/Y partitions.

    Parameters
    ----------
    s : array_like, shape (n,)
        Per-word associations :math:`s(w)`, the :math:`n_x` X-words first.
        Must be finite.
    n_x : int
        :math:`|X|`; ``1 <= n_x <= n - 1``.  (Requiring at least two words per
        side is the WEAT caller's job.)
    rng : None, int or numpy.random.Generator
        Passed to :func:`numpy.random.default_rng`; global state is never
        used.  A Generator is advanced in place.  Results for a given seed also
        depend on ``batch_size`` (the draw layout).
    options : PermutationOptions, optional
        The options below as one object (:class:`~isoeat.stats.options.PermutationOptions`);
        each may also be given by name, as here.
    alternative : {"greater", "less", "two-sided"}, default "greater"
        With :math:`T_I` the sum of ``s`` over an X side :math:`I`,
        :math:`T_{obs}` the observed one, :math:`m = n_x \bar s` the exact null
        mean and :math:`\tau` the tie tolerance, the p-value is the share of
        partitions with :math:`T_I \ge T_{obs} - \tau` ("greater"),
        :math:`T_I \le T_{obs} + \tau` ("less") or
        :math:`|T_I - m| \ge |T_{obs} - m| - \tau` ("two-sided"; for
        :math:`|X| = |Y|` this is :math:`P[|S_I| \ge |S|]`, for unequal sizes
        it is the distance of the X-side sum from its null mean).
    method : {"auto", "exact", "certified", "monte-carlo"}, default "auto"
        "auto" counts exactly when ``exact_cost(n, n_x) <= exact_budget`` or
        when :math:`\binom{n}{n_x} \le` ``n_permutations`` (and the count fits
        in ``exact_memory``); otherwise it brackets p with certainty
        ("certified") when a bracket of relative width
        :data:`~isoeat.stats._certified.DEFAULT_REL_WIDTH` (1e-3 of p, or
        1e-12 absolute for tiny p) fits in ``exact_memory`` (or, failing
        that, when the narrowest bracket that fits is still narrower than the
        Clopper–Pearson interval ``n_permutations`` random partitions would
        likely give); otherwise Monte Carlo. ``note`` says which and why.  "exact" beyond the budget raises
        :class:`ConfigError`; "certified" returns the narrowest bracket that
        fits (``note`` says when it is wider than the target) and raises when
        none does.
    n_permutations : int, default 100_000
        Monte Carlo sample size (upper bound when stopping sequentially).
    rtol : float, default 1e-12
        Relative tie tolerance: :math:`\tau = \mathrm{rtol}\sum_i|s_i|`
        (:data:`DEFAULT_RTOL` explains the scale).
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
        n)``). Monte Carlo memory is one batch, whatever ``n_permutations``.
    exact_memory : int, optional
        Memory budget in bytes for exact counting (default
        :data:`DEFAULT_EXACT_MEMORY`, 2 GiB), compared with
        :func:`exact_memory_bytes` before anything is allocated. Over it,
        ``method="exact"`` raises; ``method="auto"`` brackets p instead
        (certified) or, when that does not fit either, runs Monte Carlo
        (with :data:`FALLBACK_PERMUTATIONS` random partitions when
        ``n_permutations`` asked for at least as many as there are
        partitions), warns and says so in ``note``. The same budget bounds
        the certified bracket's tables
        (:func:`~isoeat.stats._certified.certified_memory_bytes`, also
        checked before allocating).

    Returns
    -------
    PermutationResult
        Exact: :math:`p = c / \binom{n}{n_x}` with :math:`c` the count.
        Certified: ``ci_low <= c / C(n, n_x) <= ci_high`` guaranteed,
        ``p_value = ci_high``.  Monte Carlo: :math:`N` uniform random partitions, :math:`k` of them
        reaching the observed value, :math:`p = (k + 1)/(N + 1)` and the
        Clopper–Pearson interval for the true p from :math:`k / N`.

    Raises
    ------
    ConfigError
        Invalid parameters, non-finite ``s``, ``method="exact"`` beyond
        the budget, or ``method="certified"`` when no bracket fits in
        ``exact_memory``.
    """
    from .options import gather

    o, _, _ = gather(fields, where="partition_test", permutation=options, takes=("permutation",))
    return _partition_test(s, n_x, rng, o)


#: said when ``method="auto"`` counted p although early stopping was asked for (it stops only a sampled p)
_COUNTED = ("method='auto' counted p (no Monte Carlo sample to stop): early stopping (--stop-early) stopped nothing "
            "where p was counted")


def _partition_test(s: Any, n_x: int, rng: Any, o: PermutationOptions) -> PermutationResult:
    """:func:`partition_test` with its options gathered in one :class:`PermutationOptions` (checked here)."""
    alternative, method, n_permutations = o.alternative, o.method, o.n_permutations
    rtol = DEFAULT_RTOL if o.rtol is None else o.rtol
    exact_budget, sequential_alpha, confidence = o.exact_budget, o.sequential_alpha, o.confidence
    batch_size, exact_memory = o.batch_size, o.exact_memory
    arr = _as_scores(s)
    n = arr.size
    n_x = _check_n_x(n_x, n)
    check_choice("alternative", alternative, _ALTERNATIVES)
    check_choice("method", method, _METHODS)
    n_permutations = check_int("n_permutations", n_permutations, lo=1)
    rtol_f = check_real("rtol", rtol, lo=0.0)
    confidence = _check_level("confidence", confidence)
    if sequential_alpha is not None:
        sequential_alpha = _check_level("sequential_alpha", sequential_alpha)
    if batch_size is not None:
        batch_size = check_int("batch_size", batch_size, lo=1)
    budget = (DEFAULT_EXACT_BUDGET if exact_budget is None
              else check_real("exact_budget", exact_budget, lo=0.0, finite=False))

    mem_budget = DEFAULT_EXACT_MEMORY if exact_memory is None else check_int("exact_memory", exact_memory, lo=0)
    from .options import ineffective

    for name, why in ineffective(method, stop_early=sequential_alpha is not None,
                                 exact_memory=exact_memory is not None):
        name = "sequential_alpha" if name == "stop_early" else name
        raise ConfigError(f"{name}: no effect with method={method!r} ({why}); drop it")

    n_partitions = math.comb(n, n_x)
    cost = exact_cost(n, n_x)
    if method == "exact" and cost > budget:
        raise ConfigError(
            f"method='exact' would count C({n}, {n_x}) = {n_partitions} partitions "
            f"(estimated cost {cost:.3g} > exact_budget {budget:.3g}); "
            "use method='monte-carlo' or raise exact_budget"
        )
    use_exact = method == "exact" or (method == "auto" and (cost <= budget or n_partitions <= n_permutations))
    note = ""
    why = ""  # why "auto" goes beyond exact counting
    if use_exact:
        need = exact_memory_bytes(n, n_x)
        if need > mem_budget:
            over = (f"exact counting of C({n}, {n_x}) partitions would need about {describe_bytes(need)} "
                    f"> exact_memory {describe_bytes(mem_budget)}")
            if method == "exact":
                raise ConfigError(f"method='exact': {over}; use method='monte-carlo' or raise exact_memory")
            why = over
    elif method == "auto":
        why = f"exact counting of C({n}, {n_x}) partitions is beyond exact_budget (cost {cost:.3g} > {budget:.3g})"

    counted = method == "auto" and sequential_alpha is not None  # auto decided: say when it stopped nothing
    if use_exact and not why:
        if counted:
            warnings.warn(_COUNTED, IsoeatWarning, stacklevel=2)
        count, tol = _exact_tail_count(arr, n_x, alternative, rtol_f)
        return _result(alternative, n_partitions, tol, count, count / n_partitions)
    if method in ("auto", "certified"):
        cert = certified_tail_count(arr, n_x, alternative, rtol_f, mem_budget)  # kept by content when slow
        sampled = FALLBACK_PERMUTATIONS if n_permutations >= n_partitions else n_permutations
        if cert.reached or (cert.bits is not None and (
                method == "certified" or _narrower_than_sampling(cert, sampled, confidence))):
            res = _certified_result(alternative, cert, why, sampled if method == "auto" else None, confidence)
            if counted:
                warnings.warn(_COUNTED, IsoeatWarning, stacklevel=2)
            if use_exact:  # an exact count was asked for (n_permutations >= partitions) and did not fit
                warnings.warn(res.note, IsoeatWarning, stacklevel=2)
            return res
        if method == "certified":
            raise ConfigError(f"method='certified': {cert.reason}; use method='monte-carlo' or raise exact_memory")
        n_permutations = sampled
        note = (f"{why}; no certified bracket of relative width {DEFAULT_REL_WIDTH:g} ({cert.reason}): "
                f"Monte Carlo with {n_permutations} random partitions instead")
        if use_exact:
            warnings.warn(note, IsoeatWarning, stacklevel=2)
    if n_permutations > MAX_MONTE_CARLO:  # a time budget: the draws are bounded in memory, not in time
        raise ConfigError(
            f"n_permutations: at most {MAX_MONTE_CARLO:,} Monte Carlo permutations (got {n_permutations:,}; time "
            f"grows linearly, about 0.1 s per million); ask for at least C({n}, {n_x}) = {n_partitions:,} to count "
            "exactly where that fits in exact_memory")
    mc = _monte_carlo(arr, n_x, alternative, n_permutations, rng, rtol_f, sequential_alpha, confidence, batch_size)
    return _result(
        alternative,
        n_partitions,
        mc.tolerance,
        mc.hits,
        (mc.hits + 1) / (mc.n_permutations + 1),
        n_permutations=mc.n_permutations,
        ci=(mc.ci_low, mc.ci_high),
        stopped_early=mc.stopped_early,
        note=note,
    )
