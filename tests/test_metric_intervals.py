"""Intervals on the bias metrics: the percentile bootstrap over the target words (``ci_method="percentile"``).

Expected values are computed here from scratch: MAC from its formula (Manzini et al. 2019: per target word
the mean cosine distance to A and to B, averaged), resampled with numpy's own generator, quantiles by
numpy. The two bootstraps use different random draws, so they agree within Monte Carlo error only (20,000
resamples each: the standard error of a 2.5% quantile is a few thousandths of the spread here).
"""

from __future__ import annotations

import numpy as np
import pytest

import isoeat
from isoeat.cli import main
from isoeat.metrics.api import metric_from_vectors
from isoeat.metrics.registry import MAX_BOOTSTRAP


def _sets(seed=5, n=10, dim=6):
    g = np.random.default_rng(seed)
    a = g.standard_normal(dim)
    X = g.standard_normal((n, dim)) + a
    Y = g.standard_normal((n, dim)) - a
    A = g.standard_normal((8, dim)) + 2 * a
    B = g.standard_normal((8, dim)) - 2 * a
    return X, Y, A, B


def _mac_by_hand(T, A, B):
    def cos(U, V):
        U = U / np.linalg.norm(U, axis=1, keepdims=True)
        V = V / np.linalg.norm(V, axis=1, keepdims=True)
        return U @ V.T

    return float(np.mean(0.5 * ((1 - cos(T, A)).mean(axis=1) + (1 - cos(T, B)).mean(axis=1))))


def test_mac_interval_agrees_with_a_bootstrap_written_here():
    X, Y, A, B = _sets()
    r = metric_from_vectors("mac", X, Y, A, B, rng=1, bootstrap=20_000, ci_method="percentile")
    g = np.random.default_rng(99)
    reps = [_mac_by_hand(np.vstack([X[g.integers(0, 10, 10)], Y[g.integers(0, 10, 10)]]), A, B)
            for _ in range(20_000)]
    lo, hi = np.quantile(reps, [0.025, 0.975])
    spread = hi - lo
    assert r.estimate == pytest.approx(_mac_by_hand(np.vstack([X, Y]), A, B), abs=1e-12)
    assert r.ci_low == pytest.approx(lo, abs=0.03 * spread) and r.ci_high == pytest.approx(hi, abs=0.03 * spread)
    assert r.ci_level == 0.95 and r.ci_resamples == 20_000
    # a 90% interval lies inside the 95% one (same seed, same draws)
    r90 = metric_from_vectors("mac", X, Y, A, B, rng=1, bootstrap=20_000, ci_level=0.9, ci_method="percentile")
    assert r.ci_low < r90.ci_low < r90.ci_high < r.ci_high


def test_constant_targets_give_a_point_interval():
    X, Y, A, B = _sets()
    X[:] = X[0]
    Y[:] = Y[0]          # every resample is the original sets: the interval is the estimate
    for method in ("percentile", "welch-t"):
        r = metric_from_vectors("rnd", X, Y, A, B, rng=0, bootstrap=500, ci_method=method)
        assert r.ci_low == pytest.approx(r.estimate, abs=1e-12) and r.ci_high == pytest.approx(r.estimate, abs=1e-12)


def test_resamples_stay_within_each_target_set():
    # X far on one side, Y on the other: a resample mixing them would move RND's sign; none does
    X, Y, A, B = _sets()
    r = metric_from_vectors("semaxis", X + 5 * A.mean(0), Y + 5 * B.mean(0), A, B, rng=0, bootstrap=2000,
                            ci_method="percentile")
    assert np.sign(r.ci_low) == np.sign(r.ci_high) == np.sign(r.estimate)


def test_reproducible_by_seed_and_different_across_seeds():
    X, Y, A, B = _sets()
    kw = dict(bootstrap=400, ci_method="percentile")
    a = metric_from_vectors("nas", X, Y, A, B, rng=3, **kw)
    b = metric_from_vectors("nas", X, Y, A, B, rng=3, **kw)
    c = metric_from_vectors("nas", X, Y, A, B, rng=4, **kw)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high) and (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)


def test_no_interval_by_default_and_its_columns():
    X, Y, A, B = _sets()
    r = metric_from_vectors("mac", X, Y, A, B, rng=0)
    assert np.isnan(r.ci_low) and np.isnan(r.ci_level) and r.ci_resamples == 0
    rec = r.to_dict()
    assert [k for k in rec if k.startswith("ci_")] == ["ci_low", "ci_high", "ci_level", "ci_resamples", "ci_method",
                                                        "ci_coverage_low", "ci_coverage_high"]
    assert r.ci_method == "" and np.isnan(r.ci_coverage_low)


@pytest.mark.parametrize("kwargs, message", [
    ({"bootstrap": 199}, "at least 200"),                       # 95%: 5 resamples beyond each end
    ({"bootstrap": 99, "ci_level": 0.9}, "at least 100"),
    ({"bootstrap": MAX_BOOTSTRAP + 1}, "bootstrap"),
    ({"ci_level": 0.9}, "no interval asked for"),
    ({"bootstrap": -1}, "bootstrap"),
])
def test_bad_interval_options_are_refused(kwargs, message):
    X, Y, A, B = _sets()
    with pytest.raises(isoeat.ConfigError, match=message):
        metric_from_vectors("mac", X, Y, A, B, **kwargs)


def test_boundaries_accepted():
    X, Y, A, B = _sets()
    kw = dict(ci_method="percentile")
    assert metric_from_vectors("mac", X, Y, A, B, bootstrap=200, **kw).ci_resamples == 200
    assert metric_from_vectors("mac", X, Y, A, B, bootstrap=100, ci_level=0.9, **kw).ci_resamples == 100


def test_rnsb_takes_no_interval():
    X, Y, A, B = _sets()
    with pytest.raises(isoeat.ConfigError, match="does not apply to rnsb"):
        metric_from_vectors("rnsb", X, Y, A, B, bootstrap=1000)


def test_cli_prints_the_interval_columns(glove, capsys):
    assert main(["metric", "mac,rnd", "--test", "W6", "--bootstrap", "200", "--ci-method", "percentile",
                 "--calibration", "none"]) == 0
    out = capsys.readouterr().out
    assert "CI cov 0." in out and "CI over the target words (percentile bootstrap (200 resamples))" in out
    assert main(["metric", "mac", "--test", "W6", "--ci-level", "0.9", "--calibration", "none"]) == 2
    assert "no interval asked for" in capsys.readouterr().err
