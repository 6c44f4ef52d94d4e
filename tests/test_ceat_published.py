"""CEAT as Guo & Caliskan (2021) publish it: the per-draw variance, the combination and the sidedness.

The expected values here are derived independently of isoeat: the published variance from its definition
(supplement §8.3: "V_i is the square of std_dev_{w in X u Y} s(w, A, B)", their ``code/ceat.py``:
``np.std(s, ddof=1) ** 2``) written with the standard library's ``statistics.variance``; the random-effects
combination in the supplement's own form (``Q = sum W ES^2 - (sum W ES)^2 / sum W``, not isoeat's centred
form); p from scipy's normal distribution (their code: ``scipy.stats.norm.sf(z)``); and a hand example.
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from isoeat._errors import ConfigError
from isoeat.stats.ceat import ceat_from_contexts, draw_indices, log10_normal_p, random_effects

norm = pytest.importorskip("scipy.stats").norm


def _contexts(seed=0, dim=5, n=3):
    g = np.random.default_rng(seed)
    return {r: [g.normal(size=(int(g.integers(1, 5)), dim)) + (1.0 if r in "XA" else 0.0) for _ in range(n)]
            for r in "XYAB"}


def _cos(u, w):
    return float(np.dot(u, w) / (np.linalg.norm(u) * np.linalg.norm(w)))


def _scores(ctx, idx, i):
    """s(w, A, B) of the targets X then Y in draw ``i``, with plain loops."""
    picks, col = {}, 0
    for r in "XYAB":
        picks[r] = [a[idx[i, col + j]] for j, a in enumerate(ctx[r])]
        col += len(ctx[r])

    def s(w):
        return (sum(_cos(w, a) for a in picks["A"]) / len(picks["A"])
                - sum(_cos(w, b) for b in picks["B"]) / len(picks["B"]))

    return [s(x) for x in picks["X"]], [s(y) for y in picks["Y"]]


def published_ceat(ctx, n_draws, seed, ddof=1):
    """Guo & Caliskan's procedure written from the supplement (§8.3), loops and the standard library only."""
    counts = [a.shape[0] for r in "XYAB" for a in ctx[r]]
    idx, _ = draw_indices(counts, n_draws, rng=seed)  # the same draws isoeat takes with this seed
    es, var = [], []
    for i in range(n_draws):
        sx, sy = _scores(ctx, idx, i)
        sd2 = statistics.variance(sx + sy) if ddof == 1 else statistics.pvariance(sx + sy)
        es.append((statistics.fmean(sx) - statistics.fmean(sy)) / math.sqrt(sd2))
        var.append(sd2)  # V_i: the square of the SD in ES_i's denominator
    w = [1 / v for v in var]
    q = sum(wi * e * e for wi, e in zip(w, es)) - sum(wi * e for wi, e in zip(w, es)) ** 2 / sum(w)
    c = sum(w) - sum(wi * wi for wi in w) / sum(w)
    tau2 = (q - (n_draws - 1)) / c if q >= n_draws - 1 else 0.0
    ws = [1 / (v + tau2) for v in var]
    ces = sum(wi * e for wi, e in zip(ws, es)) / sum(ws)
    se = math.sqrt(1 / sum(ws))
    return {"es": es, "var": var, "q": q, "tau2": tau2, "ces": ces, "se": se, "z": ces / se}


def test_the_default_variance_is_the_published_one_from_its_definition():
    ctx = _contexts(3, dim=3)
    (r,) = ceat_from_contexts(ctx, n_draws=40, rng=3)
    want = published_ceat(ctx, 40, 3)
    assert r.variance == "published"
    np.testing.assert_allclose(r.effect_sizes, want["es"], rtol=1e-10)
    np.testing.assert_allclose(r.variances, want["var"], rtol=1e-10)
    assert want["tau2"] > 0  # the example exercises the random-effects branch
    m = r.meta
    assert (m.q, m.tau2, m.ces, m.se) == pytest.approx((want["q"], want["tau2"], want["ces"], want["se"]), rel=1e-9)
    # the supplement's two-tailed p, 2 (1 - Phi(|CES / SE|)), by scipy
    assert m.alternative == "two-sided"
    assert m.p_value == pytest.approx(2 * norm.sf(abs(want["z"])), rel=1e-9)
    assert m.log10_p == pytest.approx(math.log10(2 * norm.sf(abs(want["z"]))), abs=1e-9)


def test_published_variance_follows_ddof_as_the_effect_size_does():
    ctx = _contexts(2)
    (r,) = ceat_from_contexts(ctx, n_draws=15, rng=1, ddof=0)
    want = published_ceat(ctx, 15, 1, ddof=0)
    np.testing.assert_allclose(r.variances, want["var"], rtol=1e-10)
    np.testing.assert_allclose(r.effect_sizes, want["es"], rtol=1e-10)


def test_hedges_olkin_is_a_named_option():
    ctx = _contexts(3)
    (r,) = ceat_from_contexts(ctx, n_draws=20, rng=0, variance="hedges-olkin")
    assert r.variance == "hedges-olkin"
    n = 3 + 3
    want = [n / 9 + d * d / (2 * n) for d in r.effect_sizes]  # (nX + nY)/(nX nY) + d^2 / (2 (nX + nY))
    np.testing.assert_allclose(r.variances, want, rtol=1e-12)
    (pub,) = ceat_from_contexts(ctx, n_draws=20, rng=0)
    assert pub.effect_sizes == r.effect_sizes and pub.variances != r.variances  # same draws, other weights


def _hand_contexts():
    """One context per word, 2-d: s = (1, 0) for X and (-1, 0) for Y in every draw.

    A = {(1,0), (1,0)}, B = {(0,1), (0,1)}; x1 = (1,0): s = 1 - 0; x2 = y2 = (1,1): s = cos 45° - cos 45° = 0;
    y1 = (0,1): s = 0 - 1.
    """
    e1, e2, diag = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), np.array([[1.0, 1.0]])
    return {"X": [e1, diag], "Y": [e2, diag], "A": [e1, e1], "B": [e2, e2]}


def test_a_hand_example():
    # s = (1, 0 | -1, 0): mean X - mean Y = 1; sample variance over X u Y = (1 + 0 + 1 + 0) / 3 = 2/3
    # d = 1 / sqrt(2/3) = sqrt(3/2); V = 2/3 in every draw; 10 identical draws: Q = 0, tau^2 = 0,
    # CES = sqrt(3/2), SE = sqrt((2/3) / 10) = sqrt(1/15), z = sqrt(3/2 * 15) = sqrt(22.5)
    (r,) = ceat_from_contexts(_hand_contexts(), n_draws=10, rng=0)
    assert r.variances == pytest.approx((2 / 3,) * 10, rel=1e-12)
    m = r.meta
    assert m.q == pytest.approx(0.0, abs=1e-9) and m.tau2 == 0.0
    assert m.ces == pytest.approx(math.sqrt(1.5), rel=1e-12)
    assert m.se == pytest.approx(math.sqrt(1 / 15), rel=1e-12)
    z = math.sqrt(22.5)
    assert m.p_value == pytest.approx(2 * norm.sf(z), rel=1e-9)   # 2.10e-6
    assert m.p_value == pytest.approx(2.1014359560e-6, rel=1e-9)  # mpmath: 2 * ncdf(-sqrt(22.5))
    # Hedges-Olkin: (2 + 2)/(2 * 2) + (3/2) / (2 * 4) = 1.1875, SE = sqrt(1.1875 / 10)
    (ho,) = ceat_from_contexts(_hand_contexts(), n_draws=10, rng=0, variance="hedges-olkin")
    assert ho.variances == pytest.approx((1.1875,) * 10, rel=1e-12)
    assert ho.meta.se == pytest.approx(math.sqrt(0.11875), rel=1e-12)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_sidedness_is_selectable(alternative):
    (r,) = ceat_from_contexts(_hand_contexts(), n_draws=10, rng=0, alternative=alternative)
    z = math.sqrt(22.5)
    want = {"two-sided": 2 * norm.sf(abs(z)), "greater": norm.sf(z), "less": norm.cdf(z)}[alternative]
    assert r.meta.alternative == alternative and r.alternative == alternative
    assert r.meta.p_value == pytest.approx(want, rel=1e-9)
    assert r.meta.log10_p == pytest.approx(math.log10(want), abs=1e-9)
    assert r.to_dict()["alternative"] == alternative and r.records()[0]["alternative"] == alternative
    assert r.to_dict()["variance"] == "published" and r.records()[0]["variance"] == "published"


def test_the_released_code_is_one_sided_greater():
    # their code/ceat.py: p_value = scipy.stats.norm.sf(z) with z = CES / sqrt(v): the upper tail
    m = random_effects([0.2, 0.5, 0.9, 0.4], [0.04, 0.09, 0.05, 0.02], alternative="greater")
    assert m.p_value == pytest.approx(norm.sf(m.ces / m.se), rel=1e-12)
    neg = random_effects([-0.2, -0.5, -0.9, -0.4], [0.04, 0.09, 0.05, 0.02], alternative="greater")
    assert neg.p_value == pytest.approx(norm.sf(neg.ces / neg.se), rel=1e-12) and neg.p_value > 0.5


def test_log10_of_one_sided_p_beyond_the_float_range():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    for z in (-60.0, -39.0, -3.0, -0.2, 0.0, 0.2, 3.0, 36.0, 39.0, 60.0, 400.0):
        upper = mpmath.ncdf(-mpmath.mpf(z))      # P[Z >= z]
        lower = mpmath.ncdf(mpmath.mpf(z))       # P[Z <= z]
        tol = 2e-12 + 1e-15 * abs(float(mpmath.log10(min(upper, lower))))
        assert log10_normal_p(z, "greater") == pytest.approx(float(mpmath.log10(upper)), rel=0, abs=tol)
        assert log10_normal_p(z, "less") == pytest.approx(float(mpmath.log10(lower)), rel=0, abs=tol)
        both = float(mpmath.log10(2 * mpmath.ncdf(-abs(mpmath.mpf(z)))))
        assert log10_normal_p(z, "two-sided") == pytest.approx(both, rel=0, abs=tol)


def test_bad_names_are_refused_with_a_suggestion():
    with pytest.raises(ConfigError, match=r"variance .*did you mean 'hedges-olkin'"):
        ceat_from_contexts(_contexts(), n_draws=5, rng=0, variance="hedges-olkn")
    with pytest.raises(ConfigError, match=r"alternative .*did you mean 'two-sided'"):
        ceat_from_contexts(_contexts(), n_draws=5, rng=0, alternative="two-sidd")
    with pytest.raises(ConfigError, match="alternative"):
        random_effects([0.1, 0.2], [0.1, 0.1], alternative="both")


def test_the_table_names_the_variance_and_the_sidedness():
    from isoeat.commands.ceat import _table

    res = ceat_from_contexts(_contexts(4), n_draws=12, rng=0, test="T", model="m")
    text = _table(res)
    assert "within-draw variance: published (Guo & Caliskan 2021" in text
    assert "p: two-sided" in text
    res = ceat_from_contexts(_contexts(4), n_draws=12, rng=0, test="T", model="m", variance="hedges-olkin",
                             alternative="greater")
    text = _table(res)
    assert "within-draw variance: hedges-olkin (not the published procedure" in text
    assert "p: one-sided (greater" in text
