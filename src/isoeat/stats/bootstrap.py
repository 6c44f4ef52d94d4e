r"""Bootstrap confidence intervals for the WEAT effect size.

Effect size (Caliskan et al. 2017):

.. math::

    d = \frac{\operatorname{mean}_{x\in X} s(x) - \operatorname{mean}_{y\in Y} s(y)}
             {\operatorname{sd}_{w \in X\cup Y} s(w)},
    \qquad
    s(w) = \operatorname{mean}_{a\in A}\cos(w,a) - \operatorname{mean}_{b\in B}\cos(w,b),

with the standard deviation taken over the pooled target words with ``ddof``
degrees-of-freedom correction (``ddof=1``: sample SD).

Resampling scheme of :func:`bootstrap_effect_size`: each replicate draws the X
words with replacement from X and, independently, the Y words with replacement
from Y (group sizes fixed).  With ``attribute_cos`` the attribute words are
resampled too: each replicate also draws |A| columns of A and |B| columns of B
with replacement and recomputes every :math:`s(w)` from the cosine matrices, so
the interval reflects the uncertainty due to the choice of attribute words as
well.  Everything is vectorised over replicates (processed in chunks to bound
memory); attribute resampling uses multinomial column weights, i.e.
:math:`\operatorname{mean}_{a\in A^*}\cos(w,a) = \cos(w,A)\,c_A/|A|` with
:math:`c_A` the multiplicities of the drawn columns.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from isoeat._errors import ConfigError
from isoeat._limits import MAX_RESAMPLES
from isoeat._random import as_generator
from isoeat._validate import check_choice, check_int

from ._checks import _check_level
from ._ci import ConfidenceInterval

__all__ = ["BootstrapResult", "ConfidenceInterval", "effect_size", "bootstrap_effect_size", "min_resamples"]

_METHODS = ("percentile", "bca")
_CHUNK_ELEMENTS = 1 << 22  # ~32 MiB of float64 per working array  # mutation: equivalent[const 22] (chunk size)


#: Resampled values that must lie beyond each end of a percentile interval (see :func:`min_resamples`).
MIN_TAIL = 5


def min_resamples(level: float) -> int:
    r"""Fewest bootstrap replicates for a two-sided ``level`` interval: :math:`\lceil 2\,m/(1-\mathrm{level})\rceil`.

    With :math:`B` replicates each tail beyond the interval holds
    :math:`B(1-\mathrm{level})/2` of them; requiring at least ``MIN_TAIL``
    (= 5) keeps both ends away from the extreme replicates (a 95% interval
    from 1 replicate is a point that may exclude the estimate). 95%: 200,
    90%: 100, 99%: 1000. (Efron & Tibshirani recommend 1000-2000 for
    intervals; this is the floor below which the interval is refused.)

    Examples
    --------
    >>> min_resamples(0.95), min_resamples(0.99)
    (200, 1000)
    """
    return math.ceil(round(2 * MIN_TAIL / (1.0 - level), 6))


@dataclass(frozen=True)
class BootstrapResult:
    """Bootstrap confidence interval of the WEAT effect size.

    Attributes
    ----------
    estimate : float
        Effect size of the original data.
    ci_low, ci_high : float
        Interval end points (NaN when the effect size is undefined).
    confidence : float
        Nominal two-sided coverage.
    method : str
        Interval method actually used: ``"percentile"`` or ``"bca"``.  When
        BCa was requested but is degenerate this is ``"percentile"`` and
        ``note`` says why.
    n_resamples : int
        Number of bootstrap replicates drawn.
    resample_attributes : bool
        Whether attribute words were resampled as well.
    note : str or None
        Reason for a BCa fallback, or for dropped undefined replicates.
    """

    estimate: float
    ci_low: float
    ci_high: float
    confidence: float
    method: str
    n_resamples: int
    resample_attributes: bool
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a plain ``dict``."""
        return asdict(self)

    def interval(self) -> ConfidenceInterval:
        """The interval alone, as results hold it."""
        return ConfidenceInterval(
            low=float(self.ci_low), high=float(self.ci_high), level=float(self.confidence), method=self.method,
            n_resamples=int(self.n_resamples), note=self.note or "",
            estimand="populations" if self.resample_attributes else "given-attributes",
        )


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _vector(values: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{name} must be a 1-D array of numbers: {exc}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ConfigError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ConfigError(f"{name} contains NaN or infinite values")
    return arr


def _d_rows(x: np.ndarray, y: np.ndarray, ddof: int) -> np.ndarray:
    """Effect size per row of ``x`` (r, n_x) and ``y`` (r, n_y); NaN if SD is 0."""
    pooled = np.concatenate([x, y], axis=1)
    n = pooled.shape[1]
    diff = x.mean(axis=1) - y.mean(axis=1)
    if n - ddof <= 0:
        return np.full(diff.shape, np.nan)
    centred = pooled - pooled.mean(axis=1, keepdims=True)
    sd = np.sqrt(np.einsum("ij,ij->i", centred, centred) / (n - ddof))
    with np.errstate(divide="ignore", invalid="ignore"):
        d = diff / sd
    d[~(sd > 0)] = np.nan
    return d


def effect_size(s_x: Any, s_y: Any, ddof: int = 1) -> float:
    r"""WEAT effect size of the per-word associations.

    .. math::

        d = \frac{\bar s_X - \bar s_Y}{\sqrt{\frac{1}{n - \mathrm{ddof}}
            \sum_{w \in X \cup Y} (s_w - \bar s_{X\cup Y})^2}}

    Parameters
    ----------
    s_x, s_y : array_like
        :math:`s(w)` of the X and of the Y target words (finite).
    ddof : int, default 1
        Delta degrees of freedom of the pooled standard deviation. Caliskan
        et al. (2017) use the sample SD (``ddof=1``); several other tools use
        ``ddof=0``, which gives :math:`d` larger by :math:`\sqrt{n/(n-1)}`.

    Returns
    -------
    float
        ``d``; NaN when the pooled standard deviation is 0 (all values equal)
        or undefined (``n <= ddof``).
    """
    x = _vector(s_x, "s_x")
    y = _vector(s_y, "s_y")
    return float(_d_rows(x[None, :], y[None, :], check_int("ddof", ddof, lo=0))[0])


def _check_attribute_cos(attribute_cos: Any, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    try:
        mats = tuple(np.asarray(m, dtype=np.float64) for m in attribute_cos)
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"attribute_cos must be (cos_XA, cos_XB, cos_YA, cos_YB) matrices: {exc}"
        ) from None
    if len(mats) != 4 or any(m.ndim != 2 for m in mats):
        raise ConfigError("attribute_cos must be four 2-D matrices (cos_XA, cos_XB, cos_YA, cos_YB)")
    cxa, cxb, cya, cyb = mats
    if cxa.shape[0] != x.size or cxb.shape[0] != x.size:
        raise ConfigError(
            f"attribute_cos: cos_XA/cos_XB need {x.size} rows (one per X word), got "
            f"{cxa.shape[0]} and {cxb.shape[0]}"
        )
    if cya.shape[0] != y.size or cyb.shape[0] != y.size:
        raise ConfigError(
            f"attribute_cos: cos_YA/cos_YB need {y.size} rows (one per Y word), got "
            f"{cya.shape[0]} and {cyb.shape[0]}"
        )
    if cxa.shape[1] != cya.shape[1] or cxb.shape[1] != cyb.shape[1] or cxa.shape[1] == 0 or cxb.shape[1] == 0:
        raise ConfigError(
            "attribute_cos: cos_XA and cos_YA (resp. cos_XB and cos_YB) need the same, "
            f"non-zero number of columns; got {cxa.shape[1]}, {cya.shape[1]} "
            f"(A) and {cxb.shape[1]}, {cyb.shape[1]} (B)"
        )
    if not all(np.all(np.isfinite(m)) for m in mats):
        raise ConfigError("attribute_cos contains NaN or infinite values")
    sx = cxa.mean(axis=1) - cxb.mean(axis=1)
    sy = cya.mean(axis=1) - cyb.mean(axis=1)
    if not (np.allclose(sx, x, rtol=1e-5, atol=1e-7) and np.allclose(sy, y, rtol=1e-5, atol=1e-7)):
        raise ConfigError(
            "attribute_cos is inconsistent with s_x/s_y: row means of cos_*A minus "
            "cos_*B must reproduce the given associations"
        )
    return mats


def _replicates(
    x: np.ndarray,
    y: np.ndarray,
    ddof: int,
    n_resamples: int,
    gen: np.random.Generator,
    mats: tuple[np.ndarray, ...] | None,
) -> np.ndarray:
    nx, ny = x.size, y.size
    width = nx + ny  # mutation: equivalent (width only sizes the chunk)
    if mats is not None:
        n_a, n_b = mats[0].shape[1], mats[1].shape[1]
        width += n_a + n_b  # mutation: equivalent (width only sizes the chunk)
    chunk = max(1, min(n_resamples, _CHUNK_ELEMENTS // max(1, 2 * width)))  # mutation: equivalent (chunk size)
    out = np.empty(n_resamples)
    done = 0
    while done < n_resamples:
        r = min(chunk, n_resamples - done)
        ix = gen.integers(0, nx, size=(r, nx))
        iy = gen.integers(0, ny, size=(r, ny))
        if mats is None:
            xb = x[ix]
            yb = y[iy]
        else:
            cxa, cxb, cya, cyb = mats
            # multiplicities of the drawn attribute columns (= draws with replacement)
            wa = gen.multinomial(n_a, np.full(n_a, 1.0 / n_a), size=r).T / n_a  # (n_a, r)
            wb = gen.multinomial(n_b, np.full(n_b, 1.0 / n_b), size=r).T / n_b
            s_all_x = cxa @ wa - cxb @ wb  # (nx, r): s of every X word under each replicate
            s_all_y = cya @ wa - cyb @ wb
            xb = np.take_along_axis(s_all_x, ix.T, axis=0).T
            yb = np.take_along_axis(s_all_y, iy.T, axis=0).T
        out[done : done + r] = _d_rows(xb, yb, ddof)
        done += r
    return out


def _jackknife(x: np.ndarray, y: np.ndarray, ddof: int) -> np.ndarray:
    """Leave-one-target-word-out effect sizes (X words first, then Y words)."""
    vals = []
    if x.size > 1:
        keep = ~np.eye(x.size, dtype=bool)
        xs = np.broadcast_to(x, (x.size, x.size))[keep].reshape(x.size, x.size - 1)
        vals.append(_d_rows(xs, np.broadcast_to(y, (x.size, y.size)), ddof))
    if y.size > 1:
        keep = ~np.eye(y.size, dtype=bool)
        ys = np.broadcast_to(y, (y.size, y.size))[keep].reshape(y.size, y.size - 1)
        vals.append(_d_rows(np.broadcast_to(x, (y.size, x.size)), ys, ddof))
    return np.concatenate(vals) if vals else np.empty(0)  # mutation: equivalent[const] (< 2 values either way)


def _bca_levels(reps: np.ndarray, estimate: float, jack: np.ndarray,
                levels: tuple[float, float]) -> tuple[tuple[float, float] | None, str | None]:
    """The BCa quantile levels of the percentile ``levels`` (Efron 1987), from the replicates and the
    jackknife values; else None and why the percentile interval is used instead."""
    from scipy.special import ndtr, ndtri

    z0 = float(ndtri(np.count_nonzero(reps < estimate) / reps.size))
    jack = jack[np.isfinite(jack)]
    if not math.isfinite(z0):
        return None, "BCa bias correction infinite (all replicates on one side of the estimate)"
    if jack.size < 2:
        return None, "BCa acceleration undefined (fewer than 2 jackknife values)"
    dev = jack.mean() - jack
    denom = 6.0 * float(np.sum(dev**2)) ** 1.5
    accel = float(np.sum(dev**3)) / denom if denom > 0 else math.nan
    if not math.isfinite(accel):
        return None, "BCa acceleration undefined (identical jackknife values)"
    # Past the pole of w / (1 - a w) (a w >= 1) the levels wrap round: the interval would
    # come out inverted, so that level is NaN and the interval falls back to percentile.
    # (A level is in [0, 1] exactly when it is finite: ndtr of a finite number, or NaN.)
    ws = [z0 + float(ndtri(q)) for q in levels]
    adj = [float(ndtr(z0 + w / (1.0 - accel * w))) if accel * w < 1.0 else math.nan for w in ws]
    if all(math.isfinite(a) and 0.0 <= a <= 1.0 for a in adj):  # mutation: equivalent[bool] (ndtr or NaN)
        return (adj[0], adj[1]), None
    return None, "BCa transformation not monotone (1 - a(z0 + z_q) <= 0 at a level)"


# ---------------------------------------------------------------------------
# public
# ---------------------------------------------------------------------------


def bootstrap_effect_size(
    s_x: Any,
    s_y: Any,
    *,
    ddof: int = 1,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    method: str = "percentile",
    rng: Any = None,
    attribute_cos: tuple[Any, Any, Any, Any] | None = None,
) -> BootstrapResult:
    r"""Bootstrap confidence interval for the WEAT effect size :math:`d`.

    Parameters
    ----------
    s_x, s_y : array_like
        Per-word associations of the X and Y target words.
    ddof : int, default 1
        Passed to :func:`effect_size`.
    n_resamples : int, default 10_000
        Number of bootstrap replicates :math:`B \ge 1`.
    confidence : float, default 0.95
        Two-sided level :math:`1 - \alpha`, in (0, 1).
    method : {"percentile", "bca"}, default "percentile"
        ``"percentile"``: the :math:`\alpha/2` and :math:`1-\alpha/2`
        quantiles of the replicates :math:`d^*_b`.

        ``"bca"`` (bias-corrected and accelerated, Efron 1987): with
        :math:`\hat z_0 = \Phi^{-1}(\#\{d^*_b < \hat d\}/B)` and the jackknife
        acceleration over target words
        :math:`\hat a = \sum_i (\bar d_{(\cdot)} - d_{(i)})^3 /
        \bigl(6\,[\sum_i (\bar d_{(\cdot)} - d_{(i)})^2]^{3/2}\bigr)`,
        the quantile levels become
        :math:`\Phi\bigl(\hat z_0 + (\hat z_0 + z_q)/(1 - \hat a(\hat z_0 +
        z_q))\bigr)` for :math:`q = \alpha/2, 1-\alpha/2`.  If
        :math:`\hat z_0` or :math:`\hat a` is not finite (e.g. all replicates
        on one side of :math:`\hat d`, or identical jackknife values), or if
        :math:`\hat a(\hat z_0 + z_q) \ge 1` at a level (past the pole of
        the formula the levels wrap round and the interval would come out
        inverted), the percentile interval is returned, ``method="percentile"``
        and the reason in ``note``.
    rng : None, int or numpy.random.Generator
        Passed to :func:`numpy.random.default_rng` (global state untouched).
    attribute_cos : (cos_XA, cos_XB, cos_YA, cos_YB), optional
        Cosine matrices (targets x attributes).  When given, every replicate
        also resamples the A and B attribute words with replacement and
        recomputes :math:`s` from the matrices.  Their row means must reproduce
        ``s_x`` and ``s_y``.  (With BCa, the acceleration is still the
        jackknife over target words only; attribute words do not enter it.)

    Returns
    -------
    BootstrapResult
        Replicates with zero pooled SD (undefined :math:`d`) are dropped and
        counted in ``note``; if the estimate itself is undefined the interval
        is NaN.
    """
    x = _vector(s_x, "s_x")
    y = _vector(s_y, "s_y")
    ddof = check_int("ddof", ddof, lo=0)
    n_resamples = check_int("n_resamples", n_resamples, lo=1, hi=MAX_RESAMPLES)
    conf = _check_level("confidence", confidence)
    check_choice("method", method, _METHODS)
    mats = None if attribute_cos is None else _check_attribute_cos(attribute_cos, x, y)
    gen = as_generator(rng)

    estimate = float(_d_rows(x[None, :], y[None, :], ddof)[0])
    base: dict[str, Any] = dict(estimate=estimate, confidence=conf, n_resamples=n_resamples,
                                resample_attributes=mats is not None)
    if not math.isfinite(estimate):
        return BootstrapResult(ci_low=math.nan, ci_high=math.nan, method=method,
                               note="effect size undefined (zero pooled standard deviation)", **base)

    reps = _replicates(x, y, ddof, n_resamples, gen, mats)
    finite = np.isfinite(reps)
    notes = []
    if not finite.all():
        notes.append(f"{int((~finite).sum())} replicates with zero pooled SD dropped")
        reps = reps[finite]
    if reps.size == 0:
        return BootstrapResult(ci_low=math.nan, ci_high=math.nan, method=method, note="; ".join(notes), **base)

    alpha = 1.0 - conf
    levels = (alpha / 2.0, 1.0 - alpha / 2.0)
    used = "percentile"
    if method == "bca":
        bca, reason = _bca_levels(reps, estimate, _jackknife(x, y, ddof), levels)
        if bca is not None:
            levels, used = bca, "bca"
        else:
            notes.append(f"fell back to percentile: {reason}")
    low, high = np.quantile(reps, levels)
    return BootstrapResult(ci_low=float(low), ci_high=float(high), method=used,
                           note="; ".join(notes) if notes else None, **base)
