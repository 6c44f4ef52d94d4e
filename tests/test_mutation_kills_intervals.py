"""Tests written to kill survivors of tools/mutation.py in stats/intervals.py, stats/_ci.py and stats/bootstrap.py.

Expected values are derived by hand or from scratch in the test: the BCa
quantile levels from Efron's formula (the docstring of
``bootstrap_effect_size``) on the same replicates, jackknife values by
explicit delete-one loops, record columns by hand.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.special import ndtr, ndtri

from isoeat.stats._ci import ConfidenceInterval
from isoeat.stats.bootstrap import _replicates, bootstrap_effect_size, effect_size

# ---------------------------------------------------------------------------
# bootstrap: BCa levels at 0 and 1, and past the pole of w / (1 - a w)
# ---------------------------------------------------------------------------


def _d(x, y):
    """Effect size from scratch: mean difference over the pooled SD (ddof 1)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    pooled = np.concatenate([x, y])
    sd = math.sqrt(sum((v - pooled.mean()) ** 2 for v in pooled) / (pooled.size - 1))
    return (x.mean() - y.mean()) / sd


def _bca_parts(x, y, n, seed, confidence):
    """Replicates (the same draws), z0, the acceleration and w = z0 + z_q at both levels, from the formula."""
    est = effect_size(x, y)  # the same rounding as the estimate the replicates are compared with
    reps = _replicates(np.array(x, float), np.array(y, float), 1, n, np.random.default_rng(seed), None)
    z0 = float(ndtri(np.mean(reps < est)))
    jack = np.array([_d(np.delete(x, i), y) for i in range(len(x))] + [_d(x, np.delete(y, i)) for i in range(len(y))])
    u = jack.mean() - jack
    a = float(np.sum(u**3) / (6 * np.sum(u**2) ** 1.5))
    alpha = 1 - confidence
    ws = [z0 + float(ndtri(q)) for q in (alpha / 2, 1 - alpha / 2)]
    return reps, z0, a, ws


# One X word far out: leaving it out moves d far below the other delete-one values, so the acceleration is
# near its bound -1/6 (about -0.117 here); at extreme levels a * (z0 + z_q) reaches 1 at the lower level.
X_OUT, Y_OUT = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 20.0], [0.0, 0.1, 0.2, 0.3]


def test_bca_lower_level_exactly_zero_is_kept_and_gives_the_smallest_replicate():
    conf = 1 - 2e-12
    reps, z0, a, ws = _bca_parts(X_OUT, Y_OUT, 2000, 1, conf)
    assert 0.5 < a * ws[0] < 1.0 and a * ws[1] < 1.0  # both levels before the pole
    levels = [float(ndtr(z0 + w / (1 - a * w))) for w in ws]
    assert levels[0] == 0.0 and 0.0 < levels[1] < 1.0  # z0 + w/(1 - a w) is about -72: ndtr underflows to 0
    r = bootstrap_effect_size(X_OUT, Y_OUT, n_resamples=2000, confidence=conf, rng=1, method="bca")
    assert r.method == "bca" and r.note is None
    assert r.ci_low == reps.min()
    assert r.ci_high == pytest.approx(float(np.quantile(reps, levels[1])), rel=1e-12)


def test_bca_upper_level_exactly_one_is_kept_and_gives_the_largest_replicate():
    x, y, conf = [0.0, 0.1, 0.2, 0.3, 50.0], [0.0, 0.1, 0.2, 0.3], 0.999999
    reps, z0, a, ws = _bca_parts(x, y, 2000, 1, conf)
    assert 0.5 < a * ws[1] < 1.0 and a * ws[0] < 1.0
    levels = [float(ndtr(z0 + w / (1 - a * w))) for w in ws]
    assert levels[1] == 1.0 and 0.0 < levels[0] < 1.0  # z0 + w/(1 - a w) is about 10: ndtr rounds to 1
    r = bootstrap_effect_size(x, y, n_resamples=2000, confidence=conf, rng=1, method="bca")
    assert r.method == "bca" and r.note is None
    assert r.ci_high == reps.max()
    assert r.ci_low == pytest.approx(float(np.quantile(reps, levels[0])), rel=1e-12)


def test_bca_past_the_pole_falls_back_instead_of_an_inverted_interval():
    # Bug found by the mutation check: with a (z0 + z_q) > 1 the formula maps the lower level to 1.0
    # (w / (1 - a w) changes sign past the pole), and the "BCa" interval came out inverted (low > high).
    conf = 1 - 1e-15
    reps, z0, a, ws = _bca_parts(X_OUT, Y_OUT, 2000, 1, conf)
    assert a * ws[0] > 1.0 > a * ws[1]
    assert float(ndtr(z0 + ws[0] / (1 - a * ws[0]))) > float(ndtr(z0 + ws[1] / (1 - a * ws[1])))  # inverted
    r = bootstrap_effect_size(X_OUT, Y_OUT, n_resamples=2000, confidence=conf, rng=1, method="bca")
    assert r.method == "percentile"
    assert r.note == "fell back to percentile: BCa transformation not monotone (1 - a(z0 + z_q) <= 0 at a level)"
    alpha = 1 - conf
    np.testing.assert_allclose([r.ci_low, r.ci_high], np.quantile(reps, [alpha / 2, 1 - alpha / 2]), rtol=1e-12)
    assert r.ci_low <= r.estimate <= r.ci_high


def test_bca_upper_level_past_the_pole_falls_back_too():
    # A Y word far below the rest: leaving it out lowers d, so the acceleration is positive (about 0.14)
    # and the upper level passes the pole, a * w > 1 with w > 0.
    x, y, conf = [0.0, 0.1, 0.2, 0.3], [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, -20.0], 1 - 1e-15
    reps, z0, a, ws = _bca_parts(x, y, 2000, 1, conf)
    assert a * ws[1] > 1.0 > a * ws[0]
    r = bootstrap_effect_size(x, y, n_resamples=2000, confidence=conf, rng=1, method="bca")
    assert r.method == "percentile" and "not monotone" in r.note
    alpha = 1 - conf
    np.testing.assert_allclose([r.ci_low, r.ci_high], np.quantile(reps, [alpha / 2, 1 - alpha / 2]), rtol=1e-12)
