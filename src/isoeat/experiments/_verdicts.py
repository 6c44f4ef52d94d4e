r"""The robust/fragile verdict of a sensitivity analysis, as small pure functions.

The rule (module docstring of :mod:`isoeat.experiments.sensitivity` and
``docs/sensitivity.md``), for one test over the sweep's cells (settings ×
repeats; the raw and default rows are not cells):

* a result is **significant** when :math:`p < \alpha` — strictly: ``p == alpha``
  is not significant, and neither is an undefined (NaN) p;
* a cell **agrees** with the default when both significance calls are equal;
* the test is **robust** when the share of agreeing cells is at least
  ``agreement_threshold`` (the share itself, ``>=``) **and** every cell's d is
  defined and departs from the default d by at most ``max_shift``
  (:math:`|d - d_{default}| \le` ``max_shift``); otherwise **fragile**, with
  each failing criterion named. No cells (share undefined) is fragile.

``sign_reversals`` counts cells whose d has the strictly opposite sign of the
default d (a d of exactly 0 reverses nothing); it is reported, not part of the
verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..labels import is_significant, opposite_signs
from ._sensitivity_records import SWEEP_KINDS, TestSensitivity

__all__ = ["is_significant", "agrees", "agreement_share", "max_abs_shift", "sign_reversals", "verdict"]


def agrees(p_value: float, p_default: float, alpha: float) -> bool:
    """Whether a cell's significance call equals the default's."""
    return is_significant(p_value, alpha) == is_significant(p_default, alpha)


def agreement_share(flags: Sequence[bool]) -> float:
    """Share of True among ``flags``; NaN when there are none."""
    a = np.asarray(flags, dtype=bool)
    return float(a.mean()) if a.size else float("nan")


def _finite(d: Any) -> np.ndarray:
    d = np.asarray(d, dtype=np.float64)
    return d[np.isfinite(d)]


def max_abs_shift(d: Any, d_default: float) -> float:
    """:math:`\\max|d - d_{default}|` over the defined (finite) d; NaN when there is none."""
    shift = np.abs(_finite(d) - d_default)
    return float(shift.max()) if shift.size else float("nan")


def sign_reversals(d: Any, d_default: float) -> int:
    """Number of defined d whose sign is strictly opposite to ``d_default``'s."""
    return sum(opposite_signs(float(x), float(d_default)) for x in np.asarray(d, dtype=np.float64).ravel())


def verdict(
    share_agree: float,
    max_shift_seen: float,
    n_cells: int,
    all_defined: bool,
    agreement_threshold: float,
    max_shift: float,
) -> tuple[str, str]:
    """``("robust" | "fragile", reason)`` by the rule of the module docstring.

    Parameters
    ----------
    share_agree : float
        :func:`agreement_share` of the cells (NaN: no cells).
    max_shift_seen : float
        :func:`max_abs_shift` of the cells.
    n_cells : int
        Number of cells (for the reason).
    all_defined : bool
        Every cell's d is finite.
    agreement_threshold, max_shift : float
        The rule's thresholds.
    """
    failing = []
    if not share_agree >= agreement_threshold:
        failing.append(f"significance agrees with the default in {share_agree:.0%} of {n_cells} cells "
                       f"(< {agreement_threshold:.0%})")
    if not max_shift_seen <= max_shift or not all_defined:
        failing.append(f"d moves up to {max_shift_seen:.2f} from the default (> {max_shift:g})")
    if failing:
        return "fragile", "; ".join(failing)
    return "robust", (f"significance agrees in {share_agree:.0%} of {n_cells} cells; "
                      f"max |d - d_default| = {max_shift_seen:.2f} <= {max_shift:g}")


def _summarise(rows: Sequence[Any], test: str, alpha: float, thr: float, max_shift: float) -> TestSensitivity:
    """The :class:`TestSensitivity` of ``test`` from its raw, default and sweep rows."""
    mine = [r for r in rows if r.test == test]
    raw = next(r for r in mine if r.kind == "raw")
    default = next(r for r in mine if r.kind == "default")
    sweep = [r for r in mine if r.kind in SWEEP_KINDS]
    d = np.array([r.effect_size for r in sweep], dtype=np.float64)
    finite = _finite(d)
    shift = max_abs_shift(d, default.effect_size)
    share = agreement_share([r.agrees_with_default for r in sweep])
    label, reason = verdict(share, shift, len(sweep), finite.size == d.size, thr, max_shift)

    def share_of(kind: str) -> float:
        return agreement_share([r.agrees_with_default for r in sweep if r.kind == kind])

    nan = float("nan")
    return TestSensitivity(
        test=test,
        bias_type=default.bias_type,
        d_raw=raw.effect_size,
        p_raw=raw.p_value,
        significant_raw=is_significant(raw.p_value, alpha),
        d_default=default.effect_size,
        p_default=default.p_value,
        significant_default=is_significant(default.p_value, alpha),
        n_cells=len(sweep),
        d_min=float(finite.min()) if finite.size else nan,
        d_max=float(finite.max()) if finite.size else nan,
        d_sd=float(finite.std(ddof=1)) if finite.size > 1 else nan,
        max_abs_shift=shift,
        sign_reversals=sign_reversals(d, default.effect_size),
        share_agree=share,
        share_agree_eps=share_of("eps"),
        share_agree_reference_size=share_of("reference_size"),
        share_agree_reference=share_of("reference"),
        share_agree_calibration=share_of("calibration"),
        verdict=label,
        reason=reason,
    )
