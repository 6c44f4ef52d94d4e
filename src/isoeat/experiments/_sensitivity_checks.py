"""Settings of a sensitivity analysis that cannot vary, refused before any work (issue 32: no quiet losses)."""

from __future__ import annotations

from typing import Any

from .._errors import ConfigError
from .._types import name_of, streams_reference

__all__ = ["check_draw"]


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
