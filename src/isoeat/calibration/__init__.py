"""Calibrators that make an embedding space isotropic before measuring."""

from . import io as _io
from . import registry as _registry
from .io import (
    calibrator_digest,
    check_compatible,
    fit_whitener,
    load_calibrator,
    load_whitener,
    save_calibrator,
    save_whitener,
)
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
    *_registry.__all__,
    *_io.__all__,
]
