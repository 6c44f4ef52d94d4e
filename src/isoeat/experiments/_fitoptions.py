"""The options and the result of a sharded calibrator fit (:func:`isoeat.experiments.reference.fit_reference`),
also the calibrator route's (:mod:`isoeat.experiments.route`): the parameter object, its fields taken by name,
and :class:`ReferenceFit` (re-exported by :mod:`isoeat.experiments.reference`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .._errors import ConfigError

__all__ = ["FitOptions", "ReferenceFit", "DEFAULT_MEMORY", "DEFAULT_REFIT_SECONDS"]

#: memory budget of the shard statistics and refits (checked before allocating)
DEFAULT_MEMORY = 2 * 2**30
#: the estimated seconds the K delete-one-shard refits may take (:func:`~isoeat.experiments.reference.
#: refit_seconds`), checked before encoding
DEFAULT_REFIT_SECONDS = 600.0


@dataclass(frozen=True)
class FitOptions:
    """How a sharded fit reads its reference and judges its tests.

    ``alpha``, ``ddof``, ``min_coverage`` and ``p_kwargs`` (``method``, ``n_permutations``, ``alternative``, ...):
    the cells' WEAT options, for ``auto``'s change classes and the redraws' d; ``classify``: ``classify(p_raw,
    p_calibrated, alpha)`` -> change class (``auto`` only; :func:`isoeat.labels.classify_change`);
    ``reference_kwargs``: the reference's source (``{"text": PATH}``); ``memory`` and ``max_seconds``: the budgets
    of the shard statistics and of the refits' estimated time, checked before anything is encoded; ``log``:
    receives one line per ``auto`` step.
    """

    alpha: float = 0.05
    ddof: int = 1
    min_coverage: float = 0.8
    p_kwargs: dict[str, Any] = field(default_factory=dict)
    classify: Callable[..., str] | None = None
    reference_kwargs: dict[str, Any] = field(default_factory=dict)
    memory: int = DEFAULT_MEMORY
    max_seconds: float = DEFAULT_REFIT_SECONDS
    log: Callable[[str], None] | None = None

    @classmethod
    def take(cls, options: dict[str, Any], base: FitOptions | None = None, where: str = "fit_reference"
             ) -> FitOptions:
        """``base`` (default: the defaults) updated with its fields given by name in ``options`` (removed from
        it); any other name left in ``options`` is a one-line error with a did-you-mean."""
        from .._validate import suggest

        if base is not None and not isinstance(base, cls):
            raise ConfigError(f"{where}: fit must be a FitOptions, got {type(base).__name__}")
        names = [f.name for f in fields(cls)]
        mine = {k: options.pop(k) for k in names if k in options}
        for k in ("p_kwargs", "reference_kwargs"):  # None meant "none" in the keywords
            if k in mine and mine[k] is None:
                mine[k] = {}
        if options:
            bad = next(iter(options))
            raise ConfigError(f"{where}: unknown keyword {bad!r}{suggest(bad, names)}")
        return replace(base or cls(), **mine)


@dataclass(frozen=True)
class ReferenceFit:
    """A calibrator fitted on a sharded reference sample, with the reference-SE of every calibrated d."""

    calibrator: Any
    reference_se: dict[str, float]
    d: dict[str, float]
    size: int
    mode: str
    shards: int
    max_size: int
    tolerance: float
    stopped: str
    unit: str
    seconds: float
    steps: tuple[dict, ...] = field(default=())
    #: the CV of one SE (:func:`se_precision` of the shards used)
    se_precision: float = math.nan
    #: the factor applied to the jackknife SE: :func:`finite_population_factor` under ``auto`` on a static model
    se_factor: float = 1.0
    #: ``auto`` on a static model: the rows its subset was drawn from
    population: int | None = None

    def metadata(self) -> dict[str, Any]:
        """The fields recorded in the calibrator's ``metadata_`` (and so in the run's manifest)."""
        return {"reference_se": dict(self.reference_se), "reference_size": self.size, "reference_mode": self.mode,
                "reference_shards": self.shards, "reference_max_size": self.max_size,
                "reference_tolerance": self.tolerance, "reference_stopped": self.stopped,
                "reference_unit": self.unit, "reference_steps": [dict(s) for s in self.steps],
                "reference_se_precision": self.se_precision, "reference_se_factor": self.se_factor,
                "reference_population": self.population,
                **({"reference_asked": self.max_size} if self.mode == "fixed" else {})}  # the size asked for
