r"""Intervals on the bias metrics' estimates, with the coverage the study measured for each.

The estimand is the metric *given these attribute words*: the target words X
and Y are the random sample (each from its own population, sizes fixed), the
poles A, B and the defining pairs are held fixed, as WEAT's default estimand.
Methods (``ci_method``; ``"auto"`` is the metric's default, :func:`default_method`):

``"welch-t"`` (default for MAC, RND, RIPA, SemAxis; also for direct bias and NAS)
    Each of these estimates is a mean of per-word values :math:`t(w)` that
    depend on the word and the poles only (:attr:`MetricSpec.summands
    <isoeat.metrics.registry.MetricSpec>`): :math:`\hat\theta = \bar t_X - \bar t_Y`
    (signed metrics) or :math:`\hat\theta = \pi\bar t_X + (1-\pi)\bar t_Y`,
    :math:`\pi = n_X/n` (unsigned: the mean over :math:`X\cup Y`). With
    :math:`a_G = w_G^2 s_G^2/n_G` (:math:`w = 1` signed, :math:`\pi` and
    :math:`1-\pi` unsigned; :math:`s_G^2` the sample variance of
    :math:`t` over set :math:`G`),

    .. math::

        \hat\theta \pm t_{\nu,(1+L)/2}\sqrt{a_X + a_Y},\qquad
        \nu = \frac{(a_X + a_Y)^2}{a_X^2/(n_X-1) + a_Y^2/(n_Y-1)}

    (Welch 1947; Satterthwaite's degrees of freedom). It is also the
    stratified delete-one jackknife of :math:`\hat\theta` with a
    :math:`t_\nu` quantile: for a mean the two variances are equal.
``"studentized"`` (default for direct bias and NAS, whose per-word values are skewed)
    The bootstrap-t of the same estimate and SE (:func:`studentized_limits`):
    the :math:`t` quantiles replaced by those of the resampled
    :math:`(\hat\theta_b - \hat\theta)/\hat s_b`, which follow the skew.
``"jackknife-z"`` (ECT)
    ECT is Spearman's :math:`\rho` over :math:`X\cup Y`. With
    :math:`z = \operatorname{artanh}\hat\rho` and :math:`z_{(i)}` the value
    with word :math:`i` left out (:math:`n` copies), the delete-one jackknife
    variance :math:`v = \frac{n-1}{n}\sum_i (z_{(i)} - \bar z_{(\cdot)})^2`
    gives :math:`\tanh(z \pm t_{n-1,(1+L)/2}\sqrt v)` (Fisher's transform keeps
    the limits inside (-1, 1)). A delete-one :math:`|\rho| = 1` leaves no interval.
``"percentile"``
    The percentile bootstrap of earlier versions: ``bootstrap`` replicates
    (default :data:`~isoeat.stats.intervals.DEFAULT_RESAMPLES`) each draw
    :math:`n_X` rows of X and :math:`n_Y` of Y with replacement, the interval
    is the :math:`(1\mp L)/2` quantiles of the replicate estimates (Efron &
    Tibshirani 1993, ch. 13). It undercovers at these sizes (0.88-0.95 at 8 words
    per set): kept for comparison, labelled with its measured coverage.

The coverage of every method at 6-32 target words per set comes from
``benchmarks/coverage.py`` and is kept as data in
:mod:`isoeat.stats.coverage_study`; each interval records it
(``ci_coverage_low``, ``ci_coverage_high``) and tables print it where it is
not within [0.93, 0.97] at 95%.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .registry import CI_METHODS, Inputs, MetricSpec, default_method, resolve_ci_method

__all__ = ["CI_METHODS", "default_method", "resolve_ci_method", "metric_interval",
           "welch_limits", "studentized_limits", "jackknife_z_limits", "percentile_limits", "ci_header", "ci_footer"]

def welch_limits(t: np.ndarray, n_x: int, signed: bool, level: float) -> tuple[float, float, float]:
    r"""``(estimate, low, high)`` of the ``welch-t`` interval from the per-word values ``t`` (X first).

    Examples
    --------
    Two sets of three values, variances 1 and 4: SE = sqrt(1/3 + 4/3), and
    Satterthwaite's df = (5/3)^2 / ((1/3)^2/2 + (4/3)^2/2) = 2.94 (scipy's Welch t-test gives the same limits).

    >>> est, lo, hi = welch_limits(np.array([1.0, 2.0, 3.0, 0.0, 2.0, 4.0]), 3, True, 0.95)
    >>> est, round(hi - est, 4)
    (0.0, 4.1554)
    """
    from scipy.special import stdtrit

    t = np.asarray(t, dtype=np.float64)
    n = t.size
    tx, ty = t[:n_x], t[n_x:]
    wx, wy = (1.0, 1.0) if signed else (n_x / n, (n - n_x) / n)
    est = float(tx.mean() - ty.mean()) if signed else float(t.mean())
    ax, ay = wx * wx * tx.var(ddof=1) / tx.size, wy * wy * ty.var(ddof=1) / ty.size
    if ax + ay == 0.0:  # every value of each set alike: nothing varies
        return est, est, est
    df = (ax + ay) ** 2 / (ax * ax / (tx.size - 1) + ay * ay / (ty.size - 1))
    half = float(stdtrit(df, 0.5 + level / 2.0)) * math.sqrt(ax + ay)
    return est, est - half, est + half


#: Elements (resamples x words) drawn at a time by the studentized bootstrap: 8 MiB of indices.
_CHUNK = 1 << 20


def studentized_limits(t: np.ndarray, n_x: int, signed: bool, level: float, gen: np.random.Generator,
                       n_b: int) -> tuple[float, float, int]:
    r"""``(low, high, defined resamples)`` of the ``studentized`` (bootstrap-t) interval from the per-word values.

    With :math:`\hat\theta` and its Welch standard error :math:`\hat s`
    (:func:`welch_limits`), each of ``n_b`` resamples draws :math:`n_X` values
    of X and :math:`n_Y` of Y with replacement and gives
    :math:`T_b = (\hat\theta_b - \hat\theta)/\hat s_b`; the interval is
    :math:`[\hat\theta - q_{(1+L)/2}\hat s,\ \hat\theta - q_{(1-L)/2}\hat s]`
    with :math:`q` the quantiles of :math:`T_b` (Efron & Tibshirani 1993,
    §12.5; Hall 1988: second-order accurate, so skewed per-word values, which
    a t quantile ignores, are allowed for). Resamples whose :math:`\hat s_b = 0`
    are left out and counted. Memory: :data:`_CHUNK` indices at a time.
    """
    from ..stats.bootstrap import min_resamples

    t = np.asarray(t, dtype=np.float64)
    tx, ty = t[:n_x], t[n_x:]
    est, se = _welch_se(tx, ty, signed)
    if se == 0.0:
        return est, est, n_b
    stats_t = []
    rows = max(1, _CHUNK // t.size)
    for start in range(0, n_b, rows):
        b = min(rows, n_b - start)
        e_b, s_b = _welch_se(tx[gen.integers(0, tx.size, (b, tx.size))], ty[gen.integers(0, ty.size, (b, ty.size))],
                             signed)
        ok = s_b > 0
        stats_t.append((e_b[ok] - est) / s_b[ok])
    T = np.concatenate(stats_t)
    if T.size < min_resamples(level):
        return math.nan, math.nan, int(T.size)
    q_lo, q_hi = np.quantile(T, [(1 - level) / 2, (1 + level) / 2])
    return float(est - q_hi * se), float(est - q_lo * se), int(T.size)


def _welch_se(tx: np.ndarray, ty: np.ndarray, signed: bool) -> tuple[Any, Any]:
    """Estimate and Welch SE over the last axis (a difference of means, or the mean over both sets)."""
    nx, ny = tx.shape[-1], ty.shape[-1]
    wx, wy = (1.0, 1.0) if signed else (nx / (nx + ny), ny / (nx + ny))
    est = tx.mean(axis=-1) - ty.mean(axis=-1) if signed else wx * tx.mean(axis=-1) + wy * ty.mean(axis=-1)
    se = np.sqrt(wx * wx * tx.var(axis=-1, ddof=1) / nx + wy * wy * ty.var(axis=-1, ddof=1) / ny)
    return (float(est), float(se)) if np.ndim(est) == 0 else (est, se)


def jackknife_z_limits(spec: MetricSpec, inp: Inputs, opts: dict[str, Any], level: float
                       ) -> tuple[float, float, str]:
    """``(low, high, note)`` of the ``jackknife-z`` interval (ECT): delete-one jackknife of artanh(rho)."""
    from scipy.special import stdtrit

    n = len(inp.W)
    rho = spec.compute(inp, opts).estimate
    loo = np.empty(n)
    for i in range(n):
        keep = np.r_[0:i, i + 1:n]
        loo[i] = spec.compute(Inputs(inp.W[keep], inp.n_x - (i < inp.n_x), inp.A, inp.B, inp.P1, inp.P2),
                              opts).estimate
    if not (np.isfinite(loo).all() and abs(rho) < 1.0 and (np.abs(loo) < 1.0).all()):
        return math.nan, math.nan, ("no interval: rho is +-1 or undefined with a word left out (the jackknife "
                                    "of Fisher's z needs |rho| < 1)")
    z, zl = math.atanh(rho), np.arctanh(loo)
    se = math.sqrt((n - 1) / n * float(np.sum((zl - zl.mean()) ** 2)))
    half = float(stdtrit(n - 1, 0.5 + level / 2.0)) * se
    return math.tanh(z - half), math.tanh(z + half), ""


def percentile_limits(spec: MetricSpec, inp: Inputs, opts: dict[str, Any], gen: np.random.Generator,
                      n_b: int, level: float) -> tuple[float, float, int, str]:
    """``(low, high, defined resamples, note)`` of the percentile bootstrap over the target words.

    A metric with per-word summands resamples them (the same values a
    recomputation gives: each depends on its word and the poles only); ECT
    is recomputed on each resample. Undefined replicates are left out and
    counted; too few defined ones give no interval.
    """
    from ..stats.bootstrap import min_resamples

    n_x, n = inp.n_x, len(inp.W)
    rows = np.concatenate([gen.integers(0, n_x, (n_b, n_x)), n_x + gen.integers(0, n - n_x, (n_b, n - n_x))], axis=1)
    if spec.summands is not None:
        t = spec.summands(spec.compute(inp, opts), opts)[rows]
        vals = t[:, :n_x].mean(axis=1) - t[:, n_x:].mean(axis=1) if spec.signed else t.mean(axis=1)
    else:
        vals = np.array([spec.compute(Inputs(inp.W[r], n_x, inp.A, inp.B, inp.P1, inp.P2), opts).estimate
                         for r in rows])
    ok = vals[np.isfinite(vals)]
    if len(ok) < min_resamples(level):
        return math.nan, math.nan, len(ok), (f"no interval: {len(ok)} of {n_b} bootstrap resamples gave a defined "
                                             "estimate")
    lo, hi = np.quantile(ok, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi), len(ok), ""


def metric_interval(spec: MetricSpec, inp: Inputs, opts: dict[str, Any], gen: np.random.Generator
                    ) -> dict[str, Any]:
    """The interval fields of a :class:`~isoeat.metrics._result.MetricResult` (``_note``: a note, popped by the caller).

    ``ci_method`` is the method used, ``ci_coverage_low``/``ci_coverage_high``
    the coverage the study measured for it at these set sizes (NaN where it
    did not measure it: another level, or sizes off its grid, said in the note).
    """
    from ..stats.coverage_study import metric_coverage
    from ..stats.intervals import DEFAULT_RESAMPLES

    method, level = resolve_ci_method(spec, opts["ci_method"]), opts["ci_level"]
    n_x, n_y = inp.n_x, len(inp.W) - inp.n_x
    cov = metric_coverage(spec.name, method, n_x, n_y, level)
    out: dict[str, Any] = dict(ci_level=level, ci_method=method, ci_coverage_low=cov.low, ci_coverage_high=cov.high)
    notes = [cov.note] if cov.note else []
    if method in ("welch-t", "studentized"):
        assert spec.summands is not None  # resolve_ci_method offers these two methods only with summands
        t = spec.summands(spec.compute(inp, opts), opts)
        if not np.isfinite(t).all():
            notes.insert(0, "no interval: a per-word value is undefined")
        elif method == "welch-t":
            _, out["ci_low"], out["ci_high"] = welch_limits(t, n_x, spec.signed, level)
        else:
            n_b = opts["bootstrap"] or DEFAULT_RESAMPLES
            out["ci_low"], out["ci_high"], out["ci_resamples"] = studentized_limits(t, n_x, spec.signed, level, gen,
                                                                                   n_b)
            if not math.isfinite(out["ci_low"]):
                notes.insert(0, f"no interval: {out['ci_resamples']} of {n_b} resamples had a non-zero SE")
    elif method == "jackknife-z":
        out["ci_low"], out["ci_high"], note = jackknife_z_limits(spec, inp, opts, level)
        notes.insert(0, note)
    else:
        n_b = opts["bootstrap"] or DEFAULT_RESAMPLES
        out["ci_low"], out["ci_high"], out["ci_resamples"], note = percentile_limits(spec, inp, opts, gen, n_b, level)
        notes.insert(0, note)
    out["_note"] = "; ".join(n for n in notes if n)
    return out


_METHOD_TEXT = {
    "studentized": "studentized bootstrap of the per-word values ({n:,} resamples)",
    "welch-t": "Welch's t on the per-word values (Satterthwaite's df)",
    "jackknife-z": "delete-one jackknife of Fisher's z of rho, t quantile",
    "percentile": "percentile bootstrap ({n:,} resamples)",
}


def _measured(results: list[Any]) -> list[Any]:
    from ..stats.coverage_study import Measured

    return [Measured(r.ci_coverage_low, r.ci_coverage_high, "") for r in results if r.ci_method]


def ci_header(results: list[Any]) -> str:
    """The interval column's header: ``"95% CI"`` when the study measured every row's method inside the band
    at its sizes, else the measured coverage (``"CI cov 0.88-0.99"``); another level: ``"90% CI"`` (the footer says
    its coverage was not measured)."""
    from ..stats.coverage_study import LEVEL, covers

    level = next(r.ci_level for r in results if r.ci_method)
    if abs(level - LEVEL) > 1e-12:
        return f"{level:.0%} CI"
    meas = _measured(results)
    if all(not math.isnan(m.low) and covers(m) for m in meas):
        return f"{level:.0%} CI"
    known = [m for m in meas if not math.isnan(m.low)]
    if not known:
        return "CI cov n/a"
    return f"CI cov {min(m.low for m in known):.3f}-{max(m.high for m in known):.3f}"


def ci_footer(results: list[Any]) -> str:
    """One line under a metric's table: the method, the estimand and the coverage the study measured."""
    from ..stats.coverage_study import BAND, LEVEL, METRIC_STUDY, coverage_text, covers

    shown = [r for r in results if r.ci_method]
    methods = list(dict.fromkeys(r.ci_method for r in shown))
    n = max((r.ci_resamples for r in shown), default=0)
    how = ", ".join(_METHOD_TEXT[m].format(n=n) for m in methods)
    line = f"CI over the target words ({how}), poles and pairs fixed (the metric given these attribute words); "
    source = "; ".join(dict.fromkeys(METRIC_STUDY[k] for k in {(r.metric, r.ci_method) for r in shown}
                                     if k in METRIC_STUDY)) or "benchmarks/coverage.py"
    level = shown[0].ci_level
    if abs(level - LEVEL) > 1e-12:
        return line + f"coverage measured at the {LEVEL:.0%} level only, not at {level:.0%} ({source})."
    meas = _measured(shown)
    known = [m for m in meas if not math.isnan(m.low)]
    if not known:
        return line + "its coverage is not measured."
    cov = coverage_text(type(known[0])(min(m.low for m in known), max(m.high for m in known), ""))
    if all(covers(m) for m in meas):
        return line + f"measured coverage {cov} at these set sizes ({source})."
    return line + (f"measured coverage {cov} at these set sizes, not within [{BAND[0]:g}, {BAND[1]:g}]: "
                   f"labelled with it, not as {LEVEL:.0%} ({source}).")
