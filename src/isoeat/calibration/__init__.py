"""Calibrators that make an embedding space isotropic before measuring."""

from .io import check_compatible, fit_whitener, load_calibrator, load_whitener, save_calibrator, save_whitener
from .registry import CALIBRATORS, calibration_names, fit_calibrator, make_calibrator, register_calibrator
from .zca import ZCAWhitener
from .alternatives import AllButTheTop, MeanCenterer, PCAWhitener, RogueStandardizer, ShrinkageZCAWhitener  # registers them

__all__ = [
    "ZCAWhitener",
    "MeanCenterer",
    "PCAWhitener",
    "ShrinkageZCAWhitener",
    "AllButTheTop",
    "RogueStandardizer",
    "CALIBRATORS",
    "calibration_names",
    "make_calibrator",
    "fit_calibrator",
    "register_calibrator",
    "fit_whitener",
    "save_calibrator",
    "load_calibrator",
    "save_whitener",
    "load_whitener",
    "check_compatible",
]
