"""Bounds of user parameters that more than one layer checks (each bound has one home)."""

from __future__ import annotations

__all__ = ["MIN_DPI", "MAX_DPI", "MAX_RESAMPLES"]

#: The resolution range of figures (``isoeat report --dpi``, a config's ``report.dpi``).
MIN_DPI, MAX_DPI = 10, 1200
#: The most bootstrap resamples any interval may ask for (``--bootstrap`` of weat, run, metric and similarity;
#: ``n_resamples``): each is a resample of every word or pair, and their replicates are kept (8 bytes each).
MAX_RESAMPLES = 10_000_000
