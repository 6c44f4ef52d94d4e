"""Embedding bias metrics beyond WEAT, each raw and calibrated (issue 17).

MAC (Manzini et al. 2019), RND (Garg et al. 2018), ECT (Dev & Phillips
2019), RIPA (Ethayarajh et al. 2019), SemAxis (An et al. 2018), direct bias
(Bolukbasi et al. 2016), NAS (Caliskan et al. 2017, as in R's sweater) and
RNSB (Sweeney & Najafian 2019). ``calibration=`` means
what it means in :func:`isoeat.weat`.

* :func:`isoeat.metric` — one metric on one test (:func:`metric`);
* ``isoeat.metrics(model, names, tests, ...)`` — several (this package is
  callable: it runs :func:`run_metrics`);
* :func:`metric_from_vectors` — from matrices of vectors;
* :data:`METRICS`, :func:`metric_names` — the registry;
* :mod:`isoeat.metrics.formulas` — the formulas, with their citations.

Roles, signs, p-values and the conventions that differ from WEFE and sweater
are written down in ``docs/metrics.md``.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ._pairs import GENDER_PAIRS
from ._result import MetricResult
from .api import metric, metric_from_vectors, run_metrics
from .registry import METRICS, MetricSpec, metric_names

__all__ = ["metric", "run_metrics", "metric_from_vectors", "MetricResult", "MetricSpec", "METRICS", "metric_names",
           "GENDER_PAIRS"]


class _CallableModule(types.ModuleType):
    """``isoeat.metrics`` is this package and, called, :func:`run_metrics` (so both spellings of the issue hold)."""

    def __call__(self, *args: Any, **kwargs: Any) -> list[MetricResult]:
        return run_metrics(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
