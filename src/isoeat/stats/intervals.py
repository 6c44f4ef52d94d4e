r"""Confidence intervals on the WEAT effect size, for a stated estimand.

An interval is a statement about a population quantity, so it must say which
one. Write :math:`\pi = n_X/(n_X+n_Y)` for the design's share of X words and,
for a per-word association :math:`a(w)`,

.. math::

    \theta[a] = \frac{\mu_X - \mu_Y}
                     {\sqrt{\pi\,\sigma_X^2 + (1-\pi)\,\sigma_Y^2 + \pi(1-\pi)(\mu_X-\mu_Y)^2}},

with :math:`\mu_G, \sigma^2_G` the mean and variance of :math:`a(w)` over the
population the words of target set :math:`G` were drawn from. This is the
value the WEAT :math:`d` tends to when both target sets grow in the design's
proportions (the denominator is the SD of the pooled population). Two
estimands (see ``docs/intervals.md``):

``"given-attributes"``
    :math:`\theta_A = \theta[s(\cdot, A, B)]`: the effect *given these
    attribute words*. Targets are the random sample, A and B are fixed: the
    usual reading of a WEAT.
``"populations"``
    :math:`\theta_\infty = \theta[s_\infty]` with
    :math:`s_\infty(w) = \mathrm E_{a}\cos(w,a) - \mathrm E_{b}\cos(w,b)`, the
    expectations over the populations A and B were drawn from: the effect
    over *the populations both word sets were drawn from* (targets and
    attributes random). With few attribute words :math:`\theta_A` is
    attenuated against :math:`\theta_\infty`: every target word's
    :math:`s(w)` carries the noise of the particular attribute words, which
    inflates the pooled SD.

Methods (chosen by the coverage study in ``benchmarks/coverage.py``):

``"noncentral-t"`` (estimand ``given-attributes``)
    With :math:`D = \bar s_X - \bar s_Y`, the within-set pooled variance
    :math:`S_w^2` and :math:`t = D / (S_w\sqrt{1/n_X + 1/n_Y})`, :math:`t`
    follows a noncentral :math:`t_{n-2}` with noncentrality
    :math:`\lambda = \delta/\sqrt{1/n_X+1/n_Y}`, :math:`\delta =
    (\mu_X-\mu_Y)/\sigma` (normal s-values with a common variance).
    Inverting its CDF gives limits :math:`\lambda_{lo}, \lambda_{hi}`
    (exact coverage under that model), mapped monotonically to the estimand:
    :math:`\theta = \delta/\sqrt{1+\pi(1-\pi)\delta^2}`.
``"jackknife"`` (estimand ``populations``)
    The estimate removes the attribute noise from the within-set variance:
    :math:`\hat\sigma^2 = S_w^2 - \hat N`, with :math:`\hat N` the pooled
    :math:`\mathrm{MS}_{GA}/|A| + \mathrm{MS}_{GB}/|B|` and
    :math:`\mathrm{MS}_{GA}` the word × attribute interaction mean square of
    the cosines of target set :math:`G` with A (double-centred sum of
    squares over :math:`(n_G-1)(|A|-1)`), an unbiased estimate of the
    variance the choice of A adds to :math:`s(w)`;
    :math:`\hat\theta_\infty = D/\sqrt{\hat\sigma^2 + \pi(1-\pi)D^2}`.
    Its variance is the sum of the four delete-one jackknife variances (X, Y,
    A and B words, which the crossed design makes additive to first order),
    and the interval is :math:`\hat\theta_\infty \pm t_{q,\nu}\,\mathrm{SE}`
    with :math:`\nu = \min(n_X+n_Y, |A|+|B|) - 2`, cut to the estimand's
    range :math:`|\theta| < 1/\sqrt{\pi(1-\pi)}` (2 for equal sets).
``"percentile"``, ``"bca"``
    Bootstrap intervals of :mod:`isoeat.stats.bootstrap` (target words
    resampled; with ``populations`` the attribute words too). Kept for
    comparison: the study measures their coverage below the nominal level at
    WEAT's set sizes, so they are flagged there.

Where the study finds a method's coverage outside [0.93, 0.97] at 95%, its
intervals carry a ``warning`` (see :func:`coverage_warning`) and are shown
flagged, not as if they held.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import ConfigError
from ._ci import BOOTSTRAP_METHODS, ConfidenceInterval

__all__ = [
    "ConfidenceInterval", "interval_on_d", "ESTIMANDS", "INTERVAL_METHODS", "DEFAULT_METHOD", "BOOTSTRAP_METHODS",
    "population_d", "noncentral_t_limits", "jackknife_population_interval", "coverage_warning", "resolve_method",
    "IntervalRequest", "check_interval_options",
]

#: The estimands of an interval on d (see the module docstring); ``given-word`` is SC-WEAT's.
ESTIMANDS = ("given-attributes", "populations", "given-word")
#: Methods per estimand; the first is the default, chosen by the coverage study.
INTERVAL_METHODS: dict[str, tuple[str, ...]] = {
    "given-attributes": ("noncentral-t", "bca", "percentile"),
    "populations": ("jackknife", "bca", "percentile"),
    "given-word": ("noncentral-t",),
}
ALL_METHODS = ("auto", "noncentral-t", "jackknife", "bca", "percentile")
DEFAULT_METHOD = {e: m[0] for e, m in INTERVAL_METHODS.items()}


def resolve_method(estimand: str, method: str) -> str:
    """The method ``"auto"`` stands for under ``estimand``; a method the estimand does not offer is an error."""
    if method == "auto":
        return DEFAULT_METHOD[estimand]
    if method not in INTERVAL_METHODS[estimand]:
        raise ConfigError(
            f"ci_method {method!r} does not estimate {estimand!r}; choose one of "
            f"{', '.join(('auto',) + INTERVAL_METHODS[estimand])}")
    return method


def _theta_from_delta(delta: np.ndarray, share: float) -> np.ndarray:
    """:math:`\\theta = \\delta/\\sqrt{1+\\pi(1-\\pi)\\delta^2}` (monotone, odd)."""
    return delta / np.sqrt(1.0 + share * (1.0 - share) * delta**2)


def _nct_noncentrality(df: int, p: float, t: np.ndarray) -> np.ndarray:
    """The noncentrality :math:`\\lambda` with :math:`P(T_{df,\\lambda} \\le t) = p`, for each (finite) ``t``.

    ``scipy.special.nctdtrinc`` (cdflib) is fast but its search can stop far
    from the root: near :math:`t = 0` it returns the :math:`t = 0` answer
    (for :math:`p` in about (0.3, 0.75) a value of the wrong sign), and at
    levels of 0.99 and above it misses by up to 10% of the tail probability.
    Each of its answers is checked with the CDF and solved again by bisection
    (``brentq``) where its tail probability is off by more than 1e-5 of itself.
    """
    from scipy.optimize import brentq
    from scipy.special import nctdtr, nctdtrinc

    lam = np.asarray(nctdtrinc(df, p, t), dtype=np.float64)
    tail = min(p, 1.0 - p)
    off = ~(np.abs(nctdtr(df, lam, t) - p) <= 1e-5 * tail)  # NaN counts as off
    for i in np.flatnonzero(off):
        ti = float(t.flat[i])

        def gap(x: float) -> float:  # decreases in x; nctdtr is NaN far in a tail, where the CDF is 0 or 1
            c = float(nctdtr(df, x, ti))  # noqa: B023 - gap is called only within this iteration
            return (c if c == c else float(x < ti)) - p  # noqa: B023 - (brentq below)

        lo, hi = -abs(ti) - 10.0, abs(ti) + 10.0
        for _ in range(20):  # widen the bracket up to |lambda| ~ 1e7
            if gap(lo) > 0.0 > gap(hi):  # mutation: equivalent[cmp > -> >=] (gap 0 at an end: that end is a root; the original widens once more and brentq returns the same root to its tolerance, as nctdtr decreases strictly)
                lam.flat[i] = brentq(gap, lo, hi, xtol=1e-12)  # mutation: equivalent[const 1e-12] (solver tolerance: moves lambda by < 1e-12, below the 1e-5 tail accuracy accepted from cdflib)
                break
            lo, hi = 2.0 * lo, 2.0 * hi
        else:
            lam.flat[i] = math.nan
    return lam


def noncentral_t_limits(d_within: Any, n_x: int, n_y: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Noncentral-t limits for the ``given-attributes`` estimand.

    Parameters
    ----------
    d_within : array_like
        :math:`D/S_w` (mean difference over the within-set pooled SD), one
        value per replicate.
    n_x, n_y : int
        Target set sizes (both at least 2).
    level : float
        Two-sided level in (0, 1).

    Returns
    -------
    low, high : ndarray
        Limits on :math:`\theta_A`; NaN where ``d_within`` is not finite.

    Examples
    --------
    With 8 + 8 words and :math:`D/S_w = 0` the interval is symmetric about 0:

    >>> lo, hi = noncentral_t_limits([0.0], 8, 8, 0.95)
    >>> round(float(lo[0]), 4) == -round(float(hi[0]), 4)
    True
    """
    dw = np.asarray(d_within, dtype=np.float64)
    scale = math.sqrt(1.0 / n_x + 1.0 / n_y)
    df = n_x + n_y - 2
    alpha = 1.0 - level
    t = dw / scale
    ok = np.isfinite(t)
    lam_lo = np.full(t.shape, np.nan)
    lam_hi = np.full(t.shape, np.nan)
    lam_lo[ok] = _nct_noncentrality(df, 1.0 - alpha / 2.0, t[ok])
    lam_hi[ok] = _nct_noncentrality(df, alpha / 2.0, t[ok])
    share = n_x / (n_x + n_y)
    return _theta_from_delta(lam_lo * scale, share), _theta_from_delta(lam_hi * scale, share)


def d_within(s_x: np.ndarray, s_y: np.ndarray) -> np.ndarray:
    """:math:`D/S_w` over the last axis (NaN where the within-set SD is 0)."""
    nx, ny = s_x.shape[-1], s_y.shape[-1]
    diff = s_x.mean(axis=-1) - s_y.mean(axis=-1)
    sw2 = ((nx - 1) * s_x.var(axis=-1, ddof=1) + (ny - 1) * s_y.var(axis=-1, ddof=1)) / (nx + ny - 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = diff / np.sqrt(sw2)
    return np.where(sw2 > 0, out, np.nan)


def _interaction_ms(c: np.ndarray) -> np.ndarray:
    """Word x attribute interaction mean square of ``c`` (..., words, attributes).

    The double-centred sum of squares
    :math:`\\sum_{ij}(c_{ij} - \\bar c_{i\\cdot} - \\bar c_{\\cdot j} + \\bar c)^2
    = \\sum c_{ij}^2 - \\sum_i c_{i\\cdot}^2/k - \\sum_j c_{\\cdot j}^2/r + c_{\\cdot\\cdot}^2/(rk)`
    (sums over rows and columns), over :math:`(r-1)(k-1)`; values are centred on
    their grand mean first so that the subtraction loses no precision.
    """
    r, k = c.shape[-2:]
    c = c - c.mean(axis=(-2, -1), keepdims=True)
    rows, cols = c.sum(axis=-1), c.sum(axis=-2)
    ss = (np.einsum("...ij,...ij->...", c, c) - np.einsum("...i,...i->...", rows, rows) / k
          - np.einsum("...j,...j->...", cols, cols) / r)  # the grand total is 0 after centring
    return np.maximum(ss, 0.0) / ((r - 1) * (k - 1))


def population_d(cxa: np.ndarray, cxb: np.ndarray, cya: np.ndarray, cyb: np.ndarray) -> np.ndarray:
    r"""Estimate of :math:`\theta_\infty` from the four cosine matrices (leading axes broadcast).

    ``cxa`` is (..., n_X, |A|), ``cxb`` (..., n_X, |B|), ``cya`` (..., n_Y, |A|),
    ``cyb`` (..., n_Y, |B|); each set needs at least 2 words. NaN where the
    attribute-free within-set variance estimate is not positive (the
    attribute noise accounts for all the spread of s: no honest estimate).
    """
    nx, na = cxa.shape[-2:]
    ny, nb = cya.shape[-2], cxb.shape[-1]
    sx = cxa.mean(axis=-1) - cxb.mean(axis=-1)
    sy = cya.mean(axis=-1) - cyb.mean(axis=-1)
    diff = sx.mean(axis=-1) - sy.mean(axis=-1)
    vx = sx.var(axis=-1, ddof=1) - _interaction_ms(cxa) / na - _interaction_ms(cxb) / nb
    vy = sy.var(axis=-1, ddof=1) - _interaction_ms(cya) / na - _interaction_ms(cyb) / nb
    sig2 = ((nx - 1) * vx + (ny - 1) * vy) / (nx + ny - 2)
    share = nx / (nx + ny)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = diff / np.sqrt(sig2 + share * (1.0 - share) * diff**2)
    return np.where(sig2 > 0, out, np.nan)


def _jackknife_var(values: np.ndarray) -> np.ndarray:
    """Delete-one jackknife variance over axis 0."""
    n = values.shape[0]
    return (n - 1) / n * np.sum((values - values.mean(axis=0)) ** 2, axis=0)


def _loo(n: int) -> np.ndarray:
    """Index rows of the delete-one copies: row i lists 0..n-1 without i."""
    return np.nonzero(~np.eye(n, dtype=bool))[1].reshape(n, n - 1)


def _rows_out(m: np.ndarray) -> np.ndarray:
    """Delete-one copies over the word axis of ``m`` (..., n, k), on a new first axis."""
    return np.moveaxis(m[..., _loo(m.shape[-2]), :], -3, 0)


def _cols_out(m: np.ndarray) -> np.ndarray:
    """Delete-one copies over the attribute axis of ``m`` (..., n, k), on a new first axis."""
    return np.moveaxis(m[..., _loo(m.shape[-1])], -2, 0)


def jackknife_population_limits(
    cxa: np.ndarray, cxb: np.ndarray, cya: np.ndarray, cyb: np.ndarray, level: float,
) -> tuple[np.ndarray, ...]:
    r"""Estimate, standard error and limits of :math:`\theta_\infty` (method ``"jackknife"``).

    The cosine matrices may carry leading batch axes (one interval each).
    Returns ``(estimate, se, low, high)``; NaN where the estimate or a
    delete-one estimate is undefined (see :func:`population_d`), and
    everywhere when a set has fewer than 3 words (a delete-one copy needs 2).
    The limits are cut at the values :math:`\theta_\infty` can take,
    :math:`\pm 1/\sqrt{\pi(1-\pi)}` (2 for equal sets).
    """
    from scipy.special import stdtrit

    nx, na = cxa.shape[-2:]
    ny, nb = cya.shape[-2], cxb.shape[-1]
    est = population_d(cxa, cxb, cya, cyb)
    if min(nx, ny, na, nb) < 3:
        nan = np.full(np.shape(est), np.nan)
        return nan, nan, nan, nan
    var = (
        _jackknife_var(population_d(_rows_out(cxa), _rows_out(cxb), cya, cyb))
        + _jackknife_var(population_d(cxa, cxb, _rows_out(cya), _rows_out(cyb)))
        + _jackknife_var(population_d(_cols_out(cxa), cxb, _cols_out(cya), cyb))
        + _jackknife_var(population_d(cxa, _cols_out(cxb), cya, _cols_out(cyb)))
    )  # NaN wherever a delete-one estimate is undefined
    se = np.sqrt(var) + 0.0 * est  # mutation: equivalent[arith + -> -] (0.0 * est is +-0 or NaN: adding or subtracting it gives the same)
    q = float(stdtrit(min(nx + ny, na + nb) - 2, 0.5 + level / 2.0))
    share = nx / (nx + ny)
    bound = 1.0 / math.sqrt(share * (1.0 - share))  # |theta| < bound: the estimand's range
    return est, se, np.maximum(est - q * se, -bound), np.minimum(est + q * se, bound)


def jackknife_population_interval(
    cxa: Any, cxb: Any, cya: Any, cyb: Any, level: float,
) -> tuple[float, float, float, float]:
    """:func:`jackknife_population_limits` of one test, as floats."""
    a, b, c, d = (np.asarray(m, dtype=np.float64) for m in (cxa, cxb, cya, cyb))
    return tuple(float(v) for v in jackknife_population_limits(a, b, c, d, level))  # type: ignore[return-value]  # 4 limits


#: Smallest set sizes (targets per set, attributes per set) from which the coverage study
#: (``benchmarks/coverage.py``, docs/intervals.md) found each method inside [0.93, 0.97] at 95% on every
#: cell of its grid (targets 6-32, attributes 7-25, effects 0-1.5, three scenarios, 2,000 data sets a
#: cell). For ``given-word`` (SC-WEAT) the sizes are those of A and B, the sample. A method or size not
#: listed is shown with a warning.
COVERED_FROM: dict[tuple[str, str], tuple[int, int]] = {
    ("given-attributes", "noncentral-t"): (6, 7),  # 0.935-0.969 everywhere on the grid
    ("given-word", "noncentral-t"): (6, 0),  # the same two-sample noncentral-t (s-values scenario)
    ("populations", "jackknife"): (16, 25),  # 0.936-0.962 there; 0.96-0.99 with 7-8 attributes, 0.915-0.942
}                                            # with 6-8 targets and 25 attributes


def coverage_warning(estimand: str, method: str, n_x: int, n_y: int, n_a: int, n_b: int) -> str:
    """Why an interval's coverage is not established at these sizes ("" when the coverage study covers them).

    The warning quotes what the study measured for the method at the design's
    set sizes (:func:`isoeat.stats.coverage_study.d_coverage`).

    Examples
    --------
    >>> coverage_warning("given-attributes", "noncentral-t", 8, 8, 8, 8)
    ''
    >>> coverage_warning("populations", "jackknife", 8, 8, 8, 8)[:60]
    'coverage of the jackknife interval (populations) is establis'
    """
    from .coverage_study import coverage_text, d_coverage

    lo = COVERED_FROM.get((estimand, method))
    if lo is not None:
        nt, natt = lo
        if min(n_x, n_y) >= nt and min(n_a, n_b) >= natt:
            return ""
        need = f"{nt} target and {natt} attribute words" if natt else f"{nt} words"
        head = f"coverage of the {method} interval ({estimand}) is established only from {need} per set"
    else:
        head = (f"the {method} interval ({estimand}) is not the default ({DEFAULT_METHOD[estimand]}, which covers "
                "within [0.93, 0.97])")
    m = d_coverage(estimand, method, n_x, n_y, n_a, n_b)
    if math.isnan(m.low):
        return f"{head}; its coverage at these sizes is not measured (coverage study, docs/intervals.md)"
    return (f"{head}; measured coverage {coverage_text(m)} at {m.sizes}" + (f" ({m.note})" if m.note else "")
            + f" ({m.source}; docs/intervals.md)")


#: Memory budget of the populations jackknife (its delete-one copies grow as n^2 k); checked before allocating.
JACKKNIFE_MEMORY = 2 << 30


def interval_on_d(
    s_x: Any,
    s_y: Any,
    attribute_cos: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None,
    request: IntervalRequest,
    *,
    ddof: int = 1,
    rng: Any = None,
) -> ConfidenceInterval:
    """The interval on d of one test, as ``request`` says, with its coverage warning.

    ``s_x``, ``s_y`` are the two samples d compares (WEAT and SEAT: the
    target words' s-values; SC-WEAT: the word's cosines with A and with B).
    ``attribute_cos`` = (cos_XA, cos_XB, cos_YA, cos_YB) is needed for the
    ``populations`` estimand. Inputs are assumed validated by the caller.
    """
    s_x = np.asarray(s_x, dtype=np.float64)
    s_y = np.asarray(s_y, dtype=np.float64)
    n_x, n_y = s_x.size, s_y.size
    n_a, n_b = (attribute_cos[0].shape[1], attribute_cos[1].shape[1]) if attribute_cos is not None else (n_x, n_y)
    used, estimand = request.method, request.estimand
    base: dict[str, Any] = dict(level=request.level, method=used, estimand=estimand,
                warning=coverage_warning(estimand, used, n_x, n_y, n_a, n_b))
    if used in BOOTSTRAP_METHODS:
        from .bootstrap import bootstrap_effect_size

        b = bootstrap_effect_size(
            s_x, s_y, ddof=ddof, n_resamples=request.n_resamples, confidence=request.level, method=used, rng=rng,
            attribute_cos=attribute_cos if estimand == "populations" else None,
        )
        return ConfidenceInterval(low=float(b.ci_low), high=float(b.ci_high), n_resamples=request.n_resamples,
                                  note=b.note or "", **{**base, "method": b.method})
    if used == "noncentral-t":
        dw = float(d_within(s_x, s_y))
        if not math.isfinite(dw):
            return ConfidenceInterval(low=math.nan, high=math.nan, note=(
                "no interval: the within-set SD is 0 (the values of each set are all alike)"), **base)
        lo, hi = noncentral_t_limits(np.array([dw]), n_x, n_y, request.level)
        return ConfidenceInterval(low=float(lo[0]), high=float(hi[0]), **base)
    if attribute_cos is None:
        raise ConfigError("the populations estimand needs the cosine matrices of the targets with the attributes")
    big_t, big_a = max(n_x, n_y), max(n_a, n_b)
    need = 48 * (big_t * big_t * big_a + big_a * big_a * big_t)  # delete-one copies and their working arrays
    if need > JACKKNIFE_MEMORY:
        return ConfidenceInterval(low=math.nan, high=math.nan, note=(
            f"no interval: the jackknife over {n_x}+{n_y} target and {n_a}+{n_b} attribute words needs about "
            f"{need / 2**30:.1f} GiB, over its {JACKKNIFE_MEMORY / 2**30:g} GiB budget"), **base)
    est, _se, lo_, hi_ = jackknife_population_interval(*attribute_cos, request.level)
    note = ""
    if min(n_x, n_y, n_a, n_b) < 3:
        note = "no interval: the populations estimand needs at least 3 words in every set"
    elif not math.isfinite(hi_):
        note = ("no interval: the attribute words' noise accounts for all the spread of s within the target sets "
                "(here or with one word left out), so the effect over the populations cannot be separated from it")
    return ConfidenceInterval(low=lo_, high=hi_, estimate=est, note=note, **base)


@dataclass(frozen=True)
class IntervalRequest:
    """Checked interval options of one call: what to estimate, how, at which level, with how many resamples."""

    estimand: str
    method: str
    level: float
    n_resamples: int


#: Bootstrap replicates when a bootstrap method is asked for without ``bootstrap=N``.
DEFAULT_RESAMPLES = 10_000


def check_interval_options(
    ci: Any, bootstrap: Any, ci_method: Any, ci_level: Any, ci_estimand: Any, resample_attributes: Any = False,
) -> IntervalRequest | None:
    """Validate the interval options shared by WEAT, SC-WEAT and SEAT; ``None`` when no interval is asked for.

    An interval is computed when ``ci`` is true or ``bootstrap > 0``
    (``bootstrap`` also sets the replicates of the bootstrap methods: 0 or at
    least :func:`~isoeat.stats.bootstrap.min_resamples` for the level).
    ``resample_attributes=True`` is the older spelling of
    ``ci_estimand="populations"``. ``ci_method="auto"`` is the estimand's
    default (:data:`DEFAULT_METHOD`); a method that does not estimate the
    estimand is a :class:`~isoeat.ConfigError` whether or not an interval is
    asked for (as in an experiment file's ``settings``).
    """
    from .._validate import check_bool, check_choice, check_int, check_real
    from .bootstrap import MIN_TAIL, min_resamples

    ci = check_bool("ci", ci)
    from .._limits import MAX_RESAMPLES

    bootstrap = check_int("bootstrap", bootstrap, lo=0, hi=MAX_RESAMPLES)
    check_choice("ci_method", ci_method, ALL_METHODS)
    level = check_real("ci_level", ci_level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    check_choice("ci_estimand", ci_estimand, ESTIMANDS)
    estimand = "populations" if check_bool("resample_attributes", resample_attributes) else ci_estimand
    need = min_resamples(level)
    if 0 < bootstrap < need:
        from .._errors import InvalidValueError

        raise InvalidValueError(
            "bootstrap", f"0 (no interval) or at least {need} for a {level:g} interval "
            f"({MIN_TAIL} resampled values beyond each end)", repr(bootstrap))
    method = resolve_method(estimand, ci_method)  # a contradiction is refused even when no interval is asked for
    if not (ci or bootstrap):
        _refuse_unused(level, ci_method, estimand)
        return None
    n = (bootstrap or max(DEFAULT_RESAMPLES, need)) if method in BOOTSTRAP_METHODS else 0
    return IntervalRequest(estimand=estimand, method=method, level=level, n_resamples=n)


def _refuse_unused(level: float, ci_method: str, estimand: str) -> None:
    """Interval options that differ from their defaults while no interval is asked for: a one-line error.

    ``ci_level=0.9`` without ``ci=True`` would otherwise print no interval and say nothing.
    """
    unused = [name for name, given in (("ci_level (--ci-level)", level != 0.95),
                                       ("ci_method (--ci-method)", ci_method != "auto"),
                                       ("ci_estimand (--ci-estimand, --resample-attributes)",
                                        estimand == "populations"))
              if given]
    if unused:
        from .._errors import ConfigError

        raise ConfigError(f"{', '.join(unused)} given but no interval asked for: add ci=True (--ci), or drop "
                          f"{'them' if len(unused) > 1 else 'it'}")
