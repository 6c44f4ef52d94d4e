"""Raw vs calibrated WEAT for a battery of tests, with change classes (paper §4.3).

Change classes at significance level ``alpha`` (default 0.05):

* ``Stable``: significance unchanged;
* ``Disappearing``: significant raw, not significant after calibration;
* ``Emerging``: not significant raw, significant after calibration.

Flags: ``large_shift`` when :math:`|\\Delta d| > 0.5`, ``sign_reversal`` when
the raw and calibrated effect sizes have opposite, non-zero signs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .._errors import ConfigError
from ..stats.weat import WEATResult, weat

__all__ = ["classify_change", "ComparisonRow", "Comparison", "compare_calibration", "CHANGE_CLASSES"]

CHANGE_CLASSES = ("Stable", "Disappearing", "Emerging")


def classify_change(p_raw: float, p_calibrated: float, alpha: float = 0.05) -> str:
    """``"Stable"``, ``"Disappearing"`` or ``"Emerging"`` (significance is ``p < alpha``).

    Examples
    --------
    >>> classify_change(0.001, 0.2)
    'Disappearing'
    """
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must lie in (0, 1), got {alpha!r}")
    raw, cal = p_raw < alpha, p_calibrated < alpha
    if raw and not cal:
        return "Disappearing"
    if cal and not raw:
        return "Emerging"
    return "Stable"


@dataclass(frozen=True)
class ComparisonRow:
    """One test: its raw and calibrated results and what changed."""

    test: str
    bias_type: str
    raw: WEATResult
    calibrated: WEATResult
    change: str
    delta_d: float
    large_shift: bool
    sign_reversal: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "bias_type": self.bias_type,
            "d_raw": self.raw.effect_size,
            "p_raw": self.raw.p_value,
            "p_method_raw": self.raw.p_method,
            "d_calibrated": self.calibrated.effect_size,
            "p_calibrated": self.calibrated.p_value,
            "p_method_calibrated": self.calibrated.p_method,
            "p_holm_raw": self.raw.p_holm,
            "p_bh_raw": self.raw.p_bh,
            "p_holm_calibrated": self.calibrated.p_holm,
            "p_bh_calibrated": self.calibrated.p_bh,
            "calibration": self.calibrated.calibration,
            "change": self.change,
            "delta_d": self.delta_d,
            "large_shift": self.large_shift,
            "sign_reversal": self.sign_reversal,
        }


@dataclass(frozen=True)
class Comparison:
    """Raw vs calibrated results for a battery of tests on one model."""

    model: str
    calibration: str
    alpha: float
    rows: tuple[ComparisonRow, ...]
    calibrator_metadata: dict

    def records(self) -> list[dict[str, Any]]:
        """Tidy records: one per (test, calibration), the JSON/CSV output."""
        out = []
        for row in self.rows:
            for res in (row.raw, row.calibrated):
                rec = res.to_dict()
                rec["change"] = row.change
                out.append(rec)
        return out

    def summary(self) -> dict[str, int]:
        counts = {c: 0 for c in CHANGE_CLASSES}
        for r in self.rows:
            counts[r.change] += 1
        counts["large_shift"] = sum(r.large_shift for r in self.rows)
        counts["sign_reversal"] = sum(r.sign_reversal for r in self.rows)
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "calibration": self.calibration,
            "alpha": self.alpha,
            "summary": self.summary(),
            "calibrator": self.calibrator_metadata,
            "rows": [r.to_dict() for r in self.rows],
        }


def _row(raw: WEATResult, cal: WEATResult, alpha: float) -> ComparisonRow:
    dd = cal.effect_size - raw.effect_size
    sign_rev = bool(
        np.isfinite(raw.effect_size)
        and np.isfinite(cal.effect_size)
        and raw.effect_size * cal.effect_size < 0
    )
    return ComparisonRow(
        test=raw.test,
        bias_type=raw.bias_type,
        raw=raw,
        calibrated=cal,
        change=classify_change(raw.p_value, cal.p_value, alpha),
        delta_d=float(dd),
        large_shift=bool(math.isfinite(dd) and abs(dd) > 0.5),
        sign_reversal=sign_rev,
    )


def _with_adjusted(results: list[WEATResult]) -> list[WEATResult]:
    """Fill ``p_holm``/``p_bh`` across one family of results."""
    from dataclasses import replace

    from ..stats.multitest import benjamini_hochberg, holm

    p = np.array([r.p_value for r in results], dtype=np.float64)
    ph, pb = holm(p), benjamini_hochberg(p)
    return [replace(r, p_holm=float(a), p_bh=float(b)) for r, a, b in zip(results, ph, pb)]


def compare_calibration(
    model: Any,
    tests: Sequence[Any] | None = None,
    *,
    calibrator: Any = None,
    calibration: str = "zca",
    calibration_params: dict[str, Any] | None = None,
    n_reference: int = 100_000,
    alpha: float = 0.05,
    n_permutations: int = 100_000,
    rng: Any = 0,
    alternative: str = "greater",
    method: str = "auto",
    ddof: int = 1,
    min_coverage: float = 0.8,
    force: bool = False,
    progress: Any = None,
    **weat_kwargs: Any,
) -> Comparison:
    """The paper's three-stage pipeline on a battery of tests, raw and calibrated.

    Stage 1 fits a calibrator (``calibration``, default ZCA with ε = 1e-3) on
    ``n_reference`` reference vectors of the model, unless ``calibrator`` is
    given already fitted; stage 2 transforms the test words; stage 3 computes
    d and p in both spaces.

    Parameters
    ----------
    model : Encoder
    tests : sequence of AssociationTest or ids, optional
        Default: the ten built-in WEATs.
    calibrator : fitted calibrator, optional
    calibration : str, default "zca"
        Registered calibration name, used when ``calibrator`` is None.
    calibration_params : dict, optional
        Its parameters, e.g. ``{"eps": 1e-3}``.
    rng : None, int or Generator, default 0
        Root of the randomness. One child seed per (test, space) is derived
        with ``numpy.random.SeedSequence.spawn`` and recorded in each result.
    progress : callable, optional
        Called as ``progress(done, total, label)`` after each result.
    **weat_kwargs
        Passed to :func:`isoeat.weat` (``bootstrap=``, ``ci_method=``,
        ``sequential_alpha=``, ...).

    Notes
    -----
    Holm and Benjamini–Hochberg adjusted p-values are computed across the
    battery, separately within the raw and within the calibrated space (each
    is one family of tests), and stored in ``p_holm``/``p_bh`` next to the
    unadjusted ``p_value``. Change classes use the unadjusted p, as the paper.
    """
    from ..calibration import fit_calibrator
    from ..wordsets import get_test, resolve_tests

    if tests is None:
        tests = resolve_tests(None)
    tests = [get_test(t) if isinstance(t, str) else t for t in tests]
    if not tests:
        raise ConfigError("no tests given")
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must lie in (0, 1), got {alpha!r}")
    if calibrator is None:
        calibrator = fit_calibrator(model, calibration, n_reference=n_reference, **(calibration_params or {}))
    if isinstance(rng, np.random.Generator):
        root = np.random.SeedSequence(int(rng.integers(0, 2**63)))
    elif rng is None:
        root = np.random.SeedSequence()
    else:
        if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0:
            raise ConfigError(f"rng (seed) must be None, a non-negative int or a Generator, got {rng!r}")
        root = np.random.SeedSequence(int(rng))
    children = root.spawn(2 * len(tests))
    pairs: list[tuple[WEATResult, WEATResult]] = []
    total = 2 * len(tests)
    for i, test in enumerate(tests):
        common = dict(
            ddof=ddof, alternative=alternative, method=method, n_permutations=n_permutations,
            min_coverage=min_coverage, **weat_kwargs,
        )
        raw = weat(model, test, rng=int(children[2 * i].generate_state(1)[0]), **common)
        if progress:
            progress(2 * i + 1, total, f"{test.id} raw")
        cal = weat(
            model, test, calibration=calibrator, force=force,
            rng=int(children[2 * i + 1].generate_state(1)[0]), **common,
        )
        if progress:
            progress(2 * i + 2, total, f"{test.id} {cal.calibration}")
        pairs.append((raw, cal))
    raws = _with_adjusted([p[0] for p in pairs])
    cals = _with_adjusted([p[1] for p in pairs])
    rows = [_row(r, c, alpha) for r, c in zip(raws, cals)]
    return Comparison(
        model=getattr(model, "name", ""),
        calibration=getattr(calibrator, "name", "calibrated"),
        alpha=alpha,
        rows=tuple(rows),
        calibrator_metadata=dict(getattr(calibrator, "metadata_", {})),
    )
