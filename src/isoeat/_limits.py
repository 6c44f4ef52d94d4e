"""Bounds of user parameters that more than one layer checks (each bound has one home)."""

from __future__ import annotations

__all__ = ["MIN_DPI", "MAX_DPI"]

#: The resolution range of figures (``isoeat report --dpi``, a config's ``report.dpi``).
MIN_DPI, MAX_DPI = 10, 1200
