"""Experiments: raw vs calibrated comparisons and change classification.

Every name is loaded on first access (PEP 562): importing a light submodule (``experiments.paper``, the
paper's values that ``isoeat reproduce --help`` reads) loads no numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - for type checkers and readers
    from .compare import CHANGE_CLASSES, Comparison, ComparisonRow, classify_change, compare_calibration

__all__ = ["CHANGE_CLASSES", "Comparison", "ComparisonRow", "classify_change", "compare_calibration"]


def __getattr__(name: str) -> Any:  # PEP 562
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import compare

    value = getattr(compare, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
