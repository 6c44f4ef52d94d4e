"""The result record of every bias metric (:func:`isoeat.metric`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..stats.results import ResultIdentity, _from_record

__all__ = ["MetricResult"]


@dataclass(frozen=True, kw_only=True)
class MetricResult(ResultIdentity):
    r"""One bias metric on one test in one embedding space.

    The identity fields (test, model, calibration, seed, attribute set sizes,
    dropped and case-folded words) are those of
    :class:`~isoeat.stats.results.ResultIdentity`; the same fields are filled
    for every metric, ``nan`` / ``""`` / ``()`` where a metric has no such
    quantity.

    Attributes
    ----------
    metric : str
        Registered metric name (``"mac"``, ``"ripa"``, ...; see :func:`isoeat.metric_names`).
    bias_type : str
    estimate : float
        The metric's headline value (its formula: :mod:`isoeat.metrics.formulas`).
        Signed metrics: :math:`\operatorname{mean}_X f - \operatorname{mean}_Y f`
        of the per-word values.
    signed : bool
        The estimate changes sign when X and Y are swapped.
    p_value : float
        Permutation p over the partitions of :math:`X\cup Y` (signed metrics),
        Spearman's test of :math:`\rho = 0` (ECT), ``nan`` where the
        literature defines none (MAC, direct bias, RNSB).
    p_method : str
        ``"exact"``, ``"certified"`` (``p_value`` the upper end of a bracket
        that holds the exact p), ``"monte-carlo"``, ``"spearman-t"`` or ``"none"``.
    alternative : str
        Of the permutation or Spearman test (``""`` without one).
    n_permutations, n_partitions : int
        As in :class:`~isoeat.WEATResult` (0 without a permutation test).
    n_x, n_y : int
        Target set sizes actually used (``n_a``, ``n_b``: the poles).
    words : tuple of str
        The target words scored, X words first (only in the record with ``scores=True``).
    per_word : tuple of float
        The per-word values, aligned with ``words``; empty for ECT.
    pairs : tuple of str
        Defining pairs used (``"she-he"``), word-pair metrics only.
    pairs_source : str
        ``"given"``, ``"test"``, ``"zip(A,B)"`` or ``"gender-default"`` (see
        :mod:`isoeat.metrics._pairs`); ``""`` for other metrics.
    settings : str
        Metric parameters that shape the value (``"c=1"``, ``"C=1"``).
    note : str
        What a reader must know (pairs derived by zipping, an undefined value, ...).
    ci_low, ci_high : float
        Interval on the estimate (``ci=True`` or ``bootstrap=N``): the target
        words are the random sample (within X and within Y), the poles and
        pairs held fixed (estimand: the metric given these attribute words);
        ``nan`` without one (:mod:`isoeat.metrics.intervals`).
    ci_level : float
        Confidence level of the interval (``nan`` without one).
    ci_method : str
        ``"welch-t"``, ``"jackknife-z"`` (ECT) or ``"percentile"`` (``""`` without an interval).
    ci_coverage_low, ci_coverage_high : float
        The coverage ``benchmarks/coverage.py`` measured for this method at
        these set sizes (:mod:`isoeat.stats.coverage_study`); ``nan`` where it
        did not (another level; the note says so).
    ci_resamples : int
        Bootstrap resamples whose estimate was defined (0 without a bootstrap).
    """

    metric: str
    bias_type: str = ""
    estimate: float
    signed: bool
    p_value: float = float("nan")
    p_method: str = "none"
    alternative: str = ""
    n_permutations: int = 0
    n_partitions: int = 0
    n_x: int
    n_y: int
    pairs: tuple[str, ...] = ()
    pairs_source: str = ""
    settings: str = ""
    note: str = ""
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    ci_level: float = float("nan")
    ci_resamples: int = 0
    ci_method: str = ""
    ci_coverage_low: float = float("nan")
    ci_coverage_high: float = float("nan")
    words: tuple[str, ...] = field(default=(), repr=False)
    per_word: tuple[float, ...] = field(default=(), repr=False)

    #: Record columns in file order (``words`` and ``per_word`` follow with ``scores=True``).
    _COLUMNS: ClassVar[tuple[str, ...]] = (
        "metric", "test", "bias_type", "model", "calibration", "estimate", "signed", "p_value", "p_method",
        "alternative", "n_permutations", "n_partitions", "n_x", "n_y", "n_a", "n_b", "pairs", "pairs_source",
        "settings", "note", "dropped", "case_folded", "seed", "ci_low", "ci_high", "ci_level", "ci_resamples",
        "seed_stream", "suggestions", "ci_method", "ci_coverage_low", "ci_coverage_high", "embedded",
    )

    def to_dict(self, *, scores: bool = False) -> dict[str, Any]:
        """A flat JSON-ready record (tuples become lists; ``words``/``per_word`` only if ``scores``)."""
        return self._record(self._COLUMNS + (("words", "per_word") if scores else ()))

    def to_frame(self, *, scores: bool = False) -> Any:
        """This result as a one-row :class:`pandas.DataFrame`, columns = :meth:`to_dict` keys (needs pandas)."""
        from ..stats.results import records_frame

        return records_frame([self.to_dict(scores=scores)])

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> MetricResult:
        """The result a :meth:`to_dict` record came from (lists become tuples, JSON null reads as nan).

        Examples
        --------
        >>> r = MetricResult(metric="mac", test="T", model="", calibration="none", estimate=0.5, signed=False,
        ...                  n_x=2, n_y=2, n_a=2, n_b=2, words=("a", "b"), per_word=(0.4, 0.6))
        >>> MetricResult.from_dict(r.to_dict(scores=True)) == r
        True
        """
        return _from_record(cls, record)
