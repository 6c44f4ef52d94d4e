"""Calibrators that make an embedding space isotropic before measuring."""

from .alternatives import (  # registers them
    AllButTheTop,
    MeanCenterer,
    PCAWhitener,
    RogueStandardizer,
    ShrinkageZCAWhitener,
)
from .io import (
    NOT_VERIFIED,
    calibrator_digest,
    check_compatible,
    fit_whitener,
    load_calibrator,
    load_whitener,
    save_calibrator,
    save_whitener,
    unverified_model,
)
from .registry import (
    CALIBRATORS,
    calibration_names,
    calibrator_metadata,
    fit_calibrator,
    make_calibrator,
    register_calibrator,
)
from .zca import ZCAWhitener

# spelt out (not spread from the submodules' lists) so that type checkers see the public API
__all__ = [
    "ZCAWhitener",
    "MeanCenterer",
    "PCAWhitener",
    "ShrinkageZCAWhitener",
    "AllButTheTop",
    "RogueStandardizer",
    # registry
    "CALIBRATORS",
    "register_calibrator",
    "make_calibrator",
    "fit_calibrator",
    "calibration_names",
    "calibrator_metadata",
    # io
    "fit_whitener",
    "save_calibrator",
    "load_calibrator",
    "save_whitener",
    "load_whitener",
    "check_compatible",
    "unverified_model",
    "calibrator_digest",
    "NOT_VERIFIED",
]
