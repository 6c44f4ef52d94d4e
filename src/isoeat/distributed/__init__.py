"""Scale-out on Dask (``pip install "isoeat[distributed]"``; issue 7).

* :func:`fit_calibrator_distributed`: the reference sample is drawn on the
  driver exactly as the single-process path draws it, cut into ordered
  shards; each worker encodes its shards with a model it loaded once, and
  returns count/mean/co-moment arrays (:class:`~isoeat.calibration.moments.CovarianceAccumulator`);
  the partial statistics are tree-reduced in shard order into one whitener.
* :func:`encode_words_distributed`: test-word lookups (aggregated contextual
  vectors) on the workers.

Dask is imported only when a client is opened or a plan is run, never by
``import isoeat`` nor by ``import isoeat.distributed``.
"""

from ._api import (
    DEFAULT_ROWS_PER_SHARD,
    DEFAULT_SENTENCES_PER_SHARD,
    INSTALL_LINE,
    SchedulerUnreachableError,
    ShardPlan,
    connect,
    encode_words_distributed,
    fit_calibrator_distributed,
    plan_reference_shards,
    require_dask,
    run_plan,
    worker_model_loads,
)
from ._worker import clear_model_cache, model_load_counts

__all__ = [
    "fit_calibrator_distributed",
    "encode_words_distributed",
    "plan_reference_shards",
    "run_plan",
    "ShardPlan",
    "connect",
    "require_dask",
    "worker_model_loads",
    "model_load_counts",
    "clear_model_cache",
    "SchedulerUnreachableError",
    "INSTALL_LINE",
    "DEFAULT_SENTENCES_PER_SHARD",
    "DEFAULT_ROWS_PER_SHARD",
]
