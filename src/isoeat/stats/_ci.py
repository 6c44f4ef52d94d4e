"""The record of a confidence interval on an effect size (see :mod:`isoeat.stats.intervals`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ConfidenceInterval", "BOOTSTRAP_METHODS"]

#: Interval methods that resample (their intervals record ``n_resamples``).
BOOTSTRAP_METHODS = ("percentile", "bca")

#: Record columns of an interval, after the prefix (``effect_size_ci_low``, ...), in record order,
#: with the value each column holds when no interval was computed.
_FLAT_EMPTY: dict[str, Any] = {
    "low": math.nan, "high": math.nan, "method": "", "level": math.nan, "resamples": 0, "note": "",
    "estimand": "", "estimate": math.nan, "warning": "",
}
_ATTRIBUTES_SUFFIX = "+attributes"


@dataclass(frozen=True)
class ConfidenceInterval:
    """A confidence interval on an effect size, with what it estimates and how.

    Attributes
    ----------
    low, high : float
        End points (``nan`` when no honest interval exists: ``note`` says why).
    level : float
        Nominal two-sided coverage, e.g. 0.95.
    method : str
        ``"noncentral-t"``, ``"jackknife"``, ``"percentile"`` or ``"bca"``
        (a BCa request that fell back to percentile says so in ``note``).
    n_resamples : int
        Bootstrap replicates drawn (0 for the analytic methods).
    estimand : str
        ``"given-attributes"`` (targets random, the attribute words fixed) or
        ``"populations"`` (targets and attributes random); see
        :mod:`isoeat.stats.intervals`.
    note : str
        Why the interval is missing, why BCa fell back, or how many undefined
        replicates were dropped; empty otherwise.
    estimate : float
        Point estimate of the estimand where it is not the result's ``d``
        (``populations``: the attribute-noise-corrected estimate of
        :func:`population_d`); ``nan`` otherwise.
    warning : str
        Non-empty when the coverage study did not establish this method's
        coverage at these set sizes (:func:`coverage_warning`): the interval
        is then shown flagged.

    Examples
    --------
    >>> ci = ConfidenceInterval(low=0.4, high=1.6, level=0.95, method="bca", n_resamples=1000,
    ...                         estimand="populations")
    >>> ci.label, ci.resample_attributes
    ('bca+attributes', True)
    >>> ConfidenceInterval.from_flat(ConfidenceInterval.flat(ci, "d_ci"), "d_ci") == ci
    True
    >>> ConfidenceInterval.flat(None, "d_ci")["d_ci_resamples"]
    0
    """

    low: float
    high: float
    level: float
    method: str
    n_resamples: int = 0
    estimand: str = "given-attributes"
    note: str = ""
    estimate: float = math.nan
    warning: str = ""

    @property
    def resample_attributes(self) -> bool:
        """Whether the attribute words were resampled too (a bootstrap for the ``populations`` estimand)."""
        return self.estimand == "populations" and self.method in BOOTSTRAP_METHODS

    @property
    def label(self) -> str:
        """``method``, with ``"+attributes"`` when the attribute words were resampled too."""
        return self.method + (_ATTRIBUTES_SUFFIX if self.resample_attributes else "")

    @property
    def flagged(self) -> bool:
        """Whether the interval is shown with a warning (coverage not established, or none computed)."""
        return bool(self.warning) or not (math.isfinite(self.low) and math.isfinite(self.high))

    @staticmethod
    def flat(ci: ConfidenceInterval | None, prefix: str) -> dict[str, Any]:
        """The record columns ``PREFIX_low, _high, _method, _level, _resamples, _note, _estimand, _estimate, _warning``.

        ``None`` (no interval computed) gives ``nan`` numbers, empty strings
        and 0 resamples. ``_method`` is :attr:`label`.
        """
        if ci is None:
            return {f"{prefix}_{k}": v for k, v in _FLAT_EMPTY.items()}
        values = {"low": ci.low, "high": ci.high, "method": ci.label, "level": ci.level,
                  "resamples": ci.n_resamples, "note": ci.note, "estimand": ci.estimand,
                  "estimate": ci.estimate, "warning": ci.warning}
        return {f"{prefix}_{k}": values[k] for k in _FLAT_EMPTY}

    @classmethod
    def from_flat(cls, record: Mapping[str, Any], prefix: str) -> ConfidenceInterval | None:
        """Read back what :meth:`flat` wrote (JSON ``null`` for a number reads as ``nan``).

        Returns ``None`` when the record holds no interval (no resamples and
        no method). Records written before estimands were named read as
        ``given-attributes``, or ``populations`` when the method carries
        ``"+attributes"``.
        """
        col = {k: record.get(f"{prefix}_{k}") for k in _FLAT_EMPTY}
        if not col["resamples"] and not col["method"]:
            return None
        label = str(col["method"] or "")
        with_attributes = label.endswith(_ATTRIBUTES_SUFFIX)

        def number(v: Any) -> float:
            return math.nan if v is None else float(v)

        estimand = str(col["estimand"] or ("populations" if with_attributes else "given-attributes"))
        return cls(
            low=number(col["low"]), high=number(col["high"]), level=number(col["level"]),
            method=label[: -len(_ATTRIBUTES_SUFFIX)] if with_attributes else label,
            n_resamples=int(col["resamples"] or 0), estimand=estimand, note=str(col["note"] or ""),
            estimate=number(col["estimate"]), warning=str(col["warning"] or ""),
        )
