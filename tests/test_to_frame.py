"""``to_frame()`` on every result and comparison: a pandas DataFrame whose rows are the result's records and whose
columns are their keys, in order (the records being what the CSV files hold)."""

from __future__ import annotations

import numpy as np
import pytest

import isoeat
from isoeat.stats.ceat import ceat_from_contexts

pd = pytest.importorskip("pandas")


def _same(frame, records):
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == list(records[0]) and len(frame) == len(records)
    for i, rec in enumerate(records):
        for k, v in rec.items():
            got = frame.iloc[i][k]
            if v is None or (isinstance(v, float) and np.isnan(v)):  # pandas holds a missing number as NaN
                assert got is None or np.isnan(got), (k, got)
            elif not isinstance(v, (list, tuple, dict)):
                assert got == v, (k, got, v)


def test_metric_result(glove):
    r = isoeat.metric(glove, "mac", "W6")
    _same(r.to_frame(), [r.to_dict()])
    _same(r.to_frame(scores=True), [r.to_dict(scores=True)])


def test_anisotropy_result(glove):
    r = isoeat.anisotropy(glove, n_samples=200, rng=0)
    _same(r.to_frame(), [r.to_dict()])


def test_similarity_result_and_comparison(glove, glove_zca):
    r = isoeat.evaluate_similarity(glove, "ws353")
    _same(r.to_frame(), [r.to_dict()])
    c = isoeat.compare_similarity(glove, "ws353", glove_zca, n_resamples=50, rng=0)
    _same(c.to_frame(), c.records())
    assert list(c.to_frame()["calibration"]) == [rec["calibration"] for rec in c.records()]


def test_ceat_result():
    rng = np.random.default_rng(0)
    contexts = {role: [rng.normal(size=(3, 8)) + (1.0 if role in "XA" else 0.0) for _ in range(4)] for role in "XYAB"}
    (r,) = ceat_from_contexts(contexts, n_draws=20, rng=0)
    _same(r.to_frame(), r.records())
