"""Settings of a sensitivity analysis that cannot vary, refused before any work (issue 32: no quiet losses)."""

from __future__ import annotations

from typing import Any

from .._errors import ConfigError
from .._types import name_of, streams_reference

__all__ = ["check_draw", "DEFAULT_EPS_GRID", "DEFAULT_REFERENCE_SIZES", "DEFAULT_REPEATS", "MAX_SWEEP_CELLS",
           "DEFAULT_PERMUTATIONS", "DEFAULT_EXACT_MAX_N", "DRAWS"]

#: ε values swept by default (paper: 1e-3).
DEFAULT_EPS_GRID: tuple[float, ...] = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)
#: reference sample sizes swept by default (paper: 100,000).
DEFAULT_REFERENCE_SIZES: tuple[int, ...] = (1_000, 3_000, 10_000, 30_000, 100_000)
#: reference draws per setting.
DEFAULT_REPEATS = 10
#: the most cells a sweep may hold (settings x repeats; each a calibrator fit and every test measured), checked
#: before a cell is made: the default sweep holds 110
MAX_SWEEP_CELLS = 10_000
#: Monte Carlo permutations where p is not exact (the WEAT default, so the raw and default rows are the
#: cells of ``isoeat run`` with the same seed).
DEFAULT_PERMUTATIONS = 100_000
#: p is counted exactly up to the library's budget (None: exact up to |X| + |Y| = 50, certified beyond).
DEFAULT_EXACT_MAX_N = None

DRAWS = ("auto", "bootstrap", "subset", "encoder", "fixed")


def check_draw(model: Any, draw: str) -> None:
    """Refuse ``draw="encoder"`` for a model whose reference sample ignores the draw's seed.

    ``"encoder"`` asks the model for a new reference sample per repeat
    (``model.reference_vectors(n, seed=s)``); only encoders that sample
    reference sentences (those with ``reference_batches``) honour the seed.
    Static vectors return the same top rows every time, so the repeats would
    be identical and their band zero-wide behind a robust/fragile verdict.
    """
    if draw == "encoder" and not streams_reference(model):
        name = name_of(model, "the model")
        raise ConfigError(f"draw='encoder' (--draw encoder) re-samples an encoder's reference sentences, but {name} "
                          "is static vectors: its reference sample is the same top rows in every repeat, so the "
                          "repeats could not vary; use draw='bootstrap' or 'subset' (resampled reference rows), "
                          "or 'fixed' (one deterministic draw)")
