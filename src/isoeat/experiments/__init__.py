"""Experiments: raw vs calibrated comparisons and change classification."""

from .compare import CHANGE_CLASSES, Comparison, ComparisonRow, classify_change, compare_calibration

__all__ = ["CHANGE_CLASSES", "Comparison", "ComparisonRow", "classify_change", "compare_calibration"]
