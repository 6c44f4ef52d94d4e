"""Result records of :func:`~isoeat.experiments.sensitivity.sensitivity_analysis`.

One :class:`SensitivityRow` per (test, setting, repeat), one
:class:`TestSensitivity` per test and the :class:`SensitivityResult` that
holds them; all are re-exported by :mod:`isoeat.experiments.sensitivity`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["SensitivityRow", "TestSensitivity", "SensitivityResult", "SWEEP_KINDS", "KINDS"]

SWEEP_KINDS = ("eps", "reference_size", "reference", "calibration")
KINDS = ("raw", "default", *SWEEP_KINDS)


class _Record:
    """``to_dict`` for the flat frozen records below (every field, in order)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class SensitivityRow(_Record):
    """One WEAT under one setting and one reference draw (a tidy record).

    Attributes
    ----------
    kind : str
        ``"raw"`` (uncalibrated), ``"default"`` (the reference setting),
        ``"eps"``, ``"reference_size"``, ``"reference"`` or ``"calibration"``.
    setting : str
        The value varied, as text (``"1e-05"``, ``"3000"``, ``"top"``, a path,
        ``"abtt"``); for raw and default rows ``"none"`` and ``"default"``.
    value : float
        The value varied as a number: nominal ε for ``eps`` rows, the
        requested size for ``reference_size`` rows, ``nan`` otherwise.
    eps, eps_effective : float
        Nominal ε and the ε handed to the calibrator (they differ in relative
        mode); ``nan`` when the calibration has no ε.
    reference : str
        ``"top"`` (the model's own reference: vocabulary top for static
        vectors) or the reference text path.
    n_requested, n_reference : int
        Reference sample size asked for, and the number of reference vectors
        the calibrator was fitted on (capped at the pool; for contextual
        encoders the vectors of the n sentences).
    draw : str
        ``"bootstrap"``, ``"subset"``, ``"encoder"`` or ``"fixed"``
        (deterministic; the raw row has ``""``).
    repeat : int
        Reference draw index (0 for raw and default rows).
    significant : bool
        ``p_value < alpha``.
    agrees_with_default : bool
        Same significance call as the default row of this test.
    delta_d : float
        ``effect_size - d_default``.
    reference_seed : int or None
        Seed of the reference draw (None when deterministic).
    seed : int or None
        Seed of the permutation p-value.
    """

    model: str
    calibration: str
    test: str
    bias_type: str
    kind: str
    setting: str
    value: float
    eps: float
    eps_mode: str
    eps_effective: float
    reference: str
    n_requested: int
    n_reference: int
    draw: str
    repeat: int
    effect_size: float
    statistic: float
    p_value: float
    p_method: str
    n_permutations: int
    p_ci_low: float
    p_ci_high: float
    significant: bool
    agrees_with_default: bool
    delta_d: float
    reference_seed: int | None
    seed: int | None
    n_x: int
    n_y: int
    n_a: int
    n_b: int


@dataclass(frozen=True)
class TestSensitivity(_Record):
    """Per-test summary of a sensitivity analysis.

    ``d_min``, ``d_max``, ``d_sd`` (``ddof=1``) and ``max_abs_shift``
    (:math:`\\max|d - d_{default}|`) run over the sweep's cells (settings ×
    repeats), not over the raw and default rows. ``share_agree`` is the share
    of those cells whose significance call equals the default's;
    ``share_agree_<kind>`` the same within one kind (``nan`` when the kind was
    not swept). ``sign_reversals`` counts cells where d has the opposite sign
    of the default d.
    """

    __test__ = False  # not a pytest class

    test: str
    bias_type: str
    d_raw: float
    p_raw: float
    significant_raw: bool
    d_default: float
    p_default: float
    significant_default: bool
    n_cells: int
    d_min: float
    d_max: float
    d_sd: float
    max_abs_shift: float
    sign_reversals: int
    share_agree: float
    share_agree_eps: float
    share_agree_reference_size: float
    share_agree_reference: float
    share_agree_calibration: float
    verdict: str
    reason: str


@dataclass(frozen=True)
class SensitivityResult:
    """Outcome of :func:`sensitivity_analysis`.

    Attributes
    ----------
    rows : tuple of SensitivityRow
        One per (test, setting, repeat), plus one ``raw`` and one ``default``
        row per test; in the order tests × (raw, default, sweep kinds ×
        settings × repeats).
    summary : tuple of TestSensitivity
        One per test, in test order.
    default : dict
        The default setting (calibration, eps, n, reference, draw).
    sweep : dict
        What was swept: ``eps``, ``eps_mode``, ``reference_sizes``,
        ``references``, ``calibrations``, ``repeats``, ``draw``.
    rule : str
        The verdict rule in words.
    notes : tuple of str
        Caps, skipped sweeps, calibrator warnings.
    """

    model: str
    calibration: str
    calibration_params: dict
    alpha: float
    default: dict
    sweep: dict
    seed: int | None
    rule: str
    agreement_threshold: float
    max_shift: float
    rows: tuple[SensitivityRow, ...]
    summary: tuple[TestSensitivity, ...]
    notes: tuple[str, ...] = ()
    calibrator_metadata: dict = field(default_factory=dict)
    p_options: dict = field(default_factory=dict)
    elapsed_s: float = float("nan")

    def records(self) -> list[dict[str, Any]]:
        """The rows as dicts (the CSV/JSON output)."""
        return [r.to_dict() for r in self.rows]

    def summary_records(self) -> list[dict[str, Any]]:
        return [s.to_dict() for s in self.summary]

    def verdicts(self) -> dict[str, str]:
        """``{test: "robust" | "fragile"}``."""
        return {s.test: s.verdict for s in self.summary}

    def to_frame(self) -> Any:
        """The rows as a tidy :class:`pandas.DataFrame` (pandas imported lazily)."""
        return _frame(self.records())

    def summary_frame(self) -> Any:
        """The per-test summary as a :class:`pandas.DataFrame`."""
        return _frame(self.summary_records())

    def to_dict(self, *, rows: bool = True) -> dict[str, Any]:
        out = {
            "model": self.model,
            "calibration": self.calibration,
            "calibration_params": dict(self.calibration_params),
            "alpha": self.alpha,
            "default": dict(self.default),
            "sweep": dict(self.sweep),
            "seed": self.seed,
            "rule": self.rule,
            "agreement_threshold": self.agreement_threshold,
            "max_shift": self.max_shift,
            "p_options": dict(self.p_options),
            "notes": list(self.notes),
            "calibrator": dict(self.calibrator_metadata),
            "elapsed_s": self.elapsed_s,
            "summary": self.summary_records(),
        }
        if rows:
            out["rows"] = self.records()
        return out


def _frame(records: list[dict[str, Any]]) -> Any:
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas ships with the dev environment
        from .._errors import MissingDependencyError

        raise MissingDependencyError('DataFrames need pandas: pip install pandas') from None
    return pd.DataFrame.from_records(records)

