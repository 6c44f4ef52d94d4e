"""The rows of a sensitivity analysis (:func:`isoeat.experiments.sensitivity.sensitivity_analysis`): per test,
the raw row, the default row, then one per sweep cell, each a
:class:`~isoeat.experiments._sensitivity_records.SensitivityRow`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._sensitivity_records import SensitivityRow
from ._verdicts import agrees, is_significant


def _rows(model_name: str, tests: Sequence[Any], cells: Sequence[Any], cell_out: dict, raw_res: list,
          def_res: list, plan: Any, base: Any, rule: Any, n_default: int) -> list[SensitivityRow]:
    """The result rows: per test, the raw row, the default row, then one per sweep cell."""
    nan = float("nan")

    def make_row(j: int, res: Any, sp: _Space) -> SensitivityRow:
        d0 = def_res[j]
        eps, sizes = sp.eps, sp.sizes
        return SensitivityRow(
            model=model_name, calibration=sp.calibration, test=res.test, bias_type=res.bias_type, kind=sp.kind,
            setting=sp.setting, value=_value(sp.kind, eps[0], sizes[0]), eps=float(eps[0]), eps_mode=eps[1],
            eps_effective=float(eps[2]), reference=sp.reference, n_requested=int(sizes[0]),
            n_reference=int(sizes[1]), draw=sp.draw, repeat=int(sp.repeat), effect_size=float(res.effect_size),
            statistic=float(res.statistic), p_value=float(res.p_value), p_method=res.p_method,
            n_permutations=int(res.n_permutations), p_ci_low=float(res.p_ci_low), p_ci_high=float(res.p_ci_high),
            significant=is_significant(res.p_value, rule.alpha),
            agrees_with_default=agrees(res.p_value, d0.p_value, rule.alpha),
            delta_d=float(res.effect_size - d0.effect_size), reference_seed=sp.reference_seed, seed=res.seed,
            n_x=res.n_x, n_y=res.n_y, n_a=res.n_a, n_b=res.n_b,
        )

    d_eps = (base.eps, "absolute", base.eps) if plan.has_eps else (nan, "", nan)
    raw = _Space("raw", "none", (nan, "", nan), "", (0, 0), "", 0, None, "none")
    default = _Space("default", "default", d_eps, base.reference, (base.size, n_default), "fixed", 0, None,
                     base.calibration)
    rows: list[SensitivityRow] = []
    for j in range(len(tests)):
        rows.append(make_row(j, raw_res[j], raw))
        rows.append(make_row(j, def_res[j], default))
        for i, c in enumerate(cells):
            res_list, eps_eff, n_used, ref_seed = cell_out[i]
            rows.append(make_row(j, res_list[j], _Space(c.kind, c.setting, (c.eps, c.eps_mode, eps_eff), c.source,
                                                        (c.n_requested, n_used), plan.draw, c.repeat, ref_seed,
                                                        c.calibration)))
    return rows


@dataclass(frozen=True)
class _Space:
    """What a sensitivity row says of its space: kind and setting, ε (value, mode, effective), reference, sizes
    (requested, used), draw, repeat, reference seed and calibration."""

    kind: str
    setting: str
    eps: tuple[float, str, float]
    reference: str
    sizes: tuple[int, int]
    draw: str
    repeat: int
    reference_seed: int | None
    calibration: str


def _value(kind: str, eps: float, n: int) -> float:
    if kind == "eps":
        return float(eps)
    if kind == "reference_size":
        return float(n)
    return float("nan")
