"""Calibrators that make an embedding space isotropic before measuring."""

from .io import check_compatible, fit_whitener, load_whitener, save_whitener
from .zca import ZCAWhitener

__all__ = ["ZCAWhitener", "fit_whitener", "save_whitener", "load_whitener", "check_compatible", "CALIBRATIONS"]

#: Names accepted by ``--calibration``.
CALIBRATIONS = ("none", "zca")
