"""Tests for isoeat.stats.intervals and isoeat.stats._ci (intervals on d with a stated estimand).

Provenance of the expected values (never the program's own output):

* noncentral-t limits: found here by ``scipy.optimize.brentq`` on ``scipy.stats.nct.cdf``
  (not ``scipy.special.nctdtrinc``, which the library uses), then mapped by hand,
  theta = delta / sqrt(1 + pi (1 - pi) delta^2) with delta = lambda sqrt(1/nX + 1/nY). At
  D/Sw = 0 the limits have a closed form: P(T <= 0 | lambda) = Phi(-lambda) for any df, so
  lambda = -/+ z_{1-alpha/2} (``scipy.stats.norm.ppf``).
* d_within, population_d: explicit loops over words and attributes (two-way ANOVA
  interaction SS / ((r-1)(k-1)), within-set pooled variance), written from the formulas of
  the module docstring; a cosine matrix built as row effect + column effect has no
  interaction, so the estimate must be the plain D / sqrt(Sw^2 + pi(1-pi) D^2).
* jackknife: a delete-one jackknife with ``np.delete`` over each of the four sets, the sum
  of the four variances, and ``scipy.stats.t.ppf`` with df = min(nX+nY, |A|+|B|) - 2.
* coverage: seeded normal s-values whose true theta is computed from the mixture's
  moments, E[a^2] - E[a]^2, not from the delta formula.
* labels (coverage_warning, check_interval_options, flags): at their exact boundaries, with
  the sizes of the coverage study written out here (benchmarks/coverage.py, COVERED_FROM's
  comments).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from isoeat._errors import ConfigError, IsoeatError
from isoeat.stats import intervals as iv
from isoeat.stats._ci import ConfidenceInterval
from isoeat.stats.intervals import (
    check_interval_options,
    coverage_warning,
    d_within,
    jackknife_population_interval,
    jackknife_population_limits,
    noncentral_t_limits,
    population_d,
)


# --------------------------------------------------------------------------- independent references
def _theta(delta: float, share: float) -> float:
    return delta / math.sqrt(1.0 + share * (1.0 - share) * delta * delta)


def _lam_root(t: float, df: int, p: float) -> float:
    """lambda with nct.cdf(t, df, lambda) = p (the cdf decreases in lambda), by brentq on a widening bracket."""
    def f(lam):
        return stats.nct.cdf(t, df, lam) - p

    k = 5.0
    while not (f(t - k) > 0 > f(t + k)):
        k *= 2.0
        assert k < 1e3
    return optimize.brentq(f, t - k, t + k, xtol=1e-13, rtol=1e-13)


def _nct_ref(dw: float, nx: int, ny: int, level: float) -> tuple[float, float]:
    scale = math.sqrt(1.0 / nx + 1.0 / ny)
    df = nx + ny - 2
    t = dw / scale
    alpha = 1.0 - level
    lam_lo = _lam_root(t, df, 1.0 - alpha / 2.0)
    lam_hi = _lam_root(t, df, alpha / 2.0)
    share = nx / (nx + ny)
    return _theta(lam_lo * scale, share), _theta(lam_hi * scale, share)


def _mean(v):
    return sum(v) / len(v)


def _var1(v):
    m = _mean(v)
    return sum((x - m) ** 2 for x in v) / (len(v) - 1)


def _dw_loop(sx, sy) -> float:
    nx, ny = len(sx), len(sy)
    sw2 = ((nx - 1) * _var1(sx) + (ny - 1) * _var1(sy)) / (nx + ny - 2)
    return (_mean(sx) - _mean(sy)) / math.sqrt(sw2)


def _ms_loop(c) -> float:
    """Two-way ANOVA (rows x columns, one value per cell) interaction mean square."""
    r, k = len(c), len(c[0])
    grand = sum(c[i][j] for i in range(r) for j in range(k)) / (r * k)
    row = [sum(c[i][j] for j in range(k)) / k for i in range(r)]
    col = [sum(c[i][j] for i in range(r)) / r for j in range(k)]
    ss = 0.0
    for i in range(r):
        for j in range(k):
            ss += (c[i][j] - row[i] - col[j] + grand) ** 2
    return ss / ((r - 1) * (k - 1))


def _s_loop(ca, cb):
    return [_mean(list(ca[i])) - _mean(list(cb[i])) for i in range(len(ca))]


def _pop_d_loop(cxa, cxb, cya, cyb) -> float:
    cxa, cxb, cya, cyb = (np.asarray(m).tolist() for m in (cxa, cxb, cya, cyb))
    nx, ny, na, nb = len(cxa), len(cya), len(cxa[0]), len(cxb[0])
    sx, sy = _s_loop(cxa, cxb), _s_loop(cya, cyb)
    vx = _var1(sx) - _ms_loop(cxa) / na - _ms_loop(cxb) / nb
    vy = _var1(sy) - _ms_loop(cya) / na - _ms_loop(cyb) / nb
    sig2 = ((nx - 1) * vx + (ny - 1) * vy) / (nx + ny - 2)
    if not sig2 > 0:
        return math.nan
    diff = _mean(sx) - _mean(sy)
    pi = nx / (nx + ny)
    return diff / math.sqrt(sig2 + pi * (1 - pi) * diff * diff)


def _jk_var(values) -> float:
    n = len(values)
    m = _mean(values)
    return (n - 1) / n * sum((v - m) ** 2 for v in values)


def _jackknife_ref(cxa, cxb, cya, cyb, level):
    nx, na = cxa.shape
    ny, nb = cya.shape[0], cxb.shape[1]
    est = _pop_d_loop(cxa, cxb, cya, cyb)
    var = (
        _jk_var([_pop_d_loop(np.delete(cxa, i, 0), np.delete(cxb, i, 0), cya, cyb) for i in range(nx)])
        + _jk_var([_pop_d_loop(cxa, cxb, np.delete(cya, i, 0), np.delete(cyb, i, 0)) for i in range(ny)])
        + _jk_var([_pop_d_loop(np.delete(cxa, j, 1), cxb, np.delete(cya, j, 1), cyb) for j in range(na)])
        + _jk_var([_pop_d_loop(cxa, np.delete(cxb, j, 1), cya, np.delete(cyb, j, 1)) for j in range(nb)])
    )
    se = math.sqrt(var)
    q = stats.t.ppf(0.5 + level / 2.0, min(nx + ny, na + nb) - 2)
    # theta = D / sqrt(sigma^2 + pi(1-pi) D^2) with sigma^2 >= 0 never exceeds 1/sqrt(pi(1-pi)) in size
    pi = nx / (nx + ny)
    bound = 1.0 / math.sqrt(pi * (1 - pi))
    return est, se, max(est - q * se, -bound), min(est + q * se, bound)


def _crossed(nx, ny, na, nb, seed, effect=0.8, noise=0.3):
    """Cosine-like blocks with word, attribute and interaction effects (a WEAT-shaped data set)."""
    rng = np.random.default_rng(seed)
    rx = rng.normal(effect / 2, 1.0, nx)
    ry = rng.normal(-effect / 2, 1.0, ny)
    va, vb = rng.normal(0, 0.5, na), rng.normal(0, 0.5, nb)
    cxa = rx[:, None] / 2 + va[None, :] + rng.normal(0, noise, (nx, na))
    cxb = -rx[:, None] / 2 + vb[None, :] + rng.normal(0, noise, (nx, nb))
    cya = ry[:, None] / 2 + va[None, :] + rng.normal(0, noise, (ny, na))
    cyb = -ry[:, None] / 2 + vb[None, :] + rng.normal(0, noise, (ny, nb))
    return cxa, cxb, cya, cyb


# --------------------------------------------------------------------------- 1. noncentral-t limits
@pytest.mark.parametrize("dw, nx, ny, level", [
    (0.0, 8, 8, 0.95), (1.0, 8, 8, 0.95), (-0.6, 8, 8, 0.90), (2.5, 8, 8, 0.99),
    (0.7, 6, 11, 0.95), (-1.3, 25, 9, 0.95), (0.4, 32, 25, 0.80),
])
def test_noncentral_t_limits_match_brentq_on_nct_cdf(dw, nx, ny, level):
    lo, hi = noncentral_t_limits(np.array([dw]), nx, ny, level)
    ref_lo, ref_hi = _nct_ref(dw, nx, ny, level)
    # 1e-6: nctdtrinc (cdflib) solves to about 1e-5 relative in the tail probability (at t = 5, df = 14,
    # p = 0.005 its lambda has cdf 0.00499995), which moves theta by ~2e-7
    assert lo[0] == pytest.approx(ref_lo, abs=1e-6)
    assert hi[0] == pytest.approx(ref_hi, abs=1e-6)
    assert lo[0] < hi[0]


@pytest.mark.parametrize("nx, ny, level", [(8, 8, 0.95), (6, 11, 0.95), (16, 25, 0.99), (3, 2, 0.5), (8, 8, 0.3),
                                            (4, 9, 0.999)])
def test_noncentral_t_limits_at_zero_are_the_normal_quantiles(nx, ny, level):
    # t = 0: P(T <= 0 | lambda) = P(Z <= -lambda) = Phi(-lambda) for every df, so lambda = -/+ z_{1-alpha/2}.
    z = stats.norm.ppf(0.5 + level / 2.0)
    scale = math.sqrt(1.0 / nx + 1.0 / ny)
    expect = _theta(z * scale, nx / (nx + ny))
    lo, hi = noncentral_t_limits([0.0], nx, ny, level)
    assert lo[0] == pytest.approx(-expect, rel=1e-6)
    assert hi[0] == pytest.approx(expect, rel=1e-6)


@pytest.mark.parametrize("dw, nx, ny, level", [
    (0.0, 8, 8, 0.2), (0.0, 3, 3, 0.4), (0.0, 16, 16, 1e-9),  # cdflib returned -0.33 for both ends at 1e-9
    (-0.025, 3, 3, 0.99), (-0.125, 8, 8, 0.999), (0.05, 12, 9, 0.999), (0.3, 8, 8, 0.9999),
    (-0.4, 5, 7, 0.999999),
    (0.03, 6, 7, 0.9999), (-0.02, 8, 8, 0.9999),  # upper-tail misses of ~1e-6 in p: 0.007-0.009 in theta
])
def test_noncentral_t_limits_where_nctdtrinc_stops_short(dw, nx, ny, level):
    # scipy.special.nctdtrinc (cdflib) returns the t = 0 answer near t = 0 (for p in about (0.3, 0.75) with
    # the wrong sign) and misses by up to 10% of the tail probability at levels >= 0.99: these are such cells.
    lo, hi = noncentral_t_limits([dw], nx, ny, level)
    ref_lo, ref_hi = _nct_ref(dw, nx, ny, level)
    assert lo[0] == pytest.approx(ref_lo, abs=1e-6)
    assert hi[0] == pytest.approx(ref_hi, abs=1e-6)
    assert lo[0] <= hi[0]


def test_noncentral_t_limits_batch_with_stuck_cells_matches_one_by_one():
    dws = np.array([-0.02, 0.0, 0.5, 1.7, np.nan, 0.01])
    lo, hi = noncentral_t_limits(dws, 6, 9, 0.999)
    for i, dw in enumerate(dws):
        if math.isnan(dw):
            assert math.isnan(lo[i]) and math.isnan(hi[i])
            continue
        ref_lo, ref_hi = _nct_ref(dw, 6, 9, 0.999)
        assert (lo[i], hi[i]) == pytest.approx((ref_lo, ref_hi), abs=1e-6)


@pytest.mark.parametrize("df", [2, 14])
def test_noncentrality_repair_finds_the_root_wherever_cdflib_fails(monkeypatch, df):
    # Make every cdflib answer wrong (0): each element then goes through the check-and-solve path, which
    # must find the root however far it lies (df = 2, t = 20, p = 0.0005 needs lambda ~ 55: the first
    # bracket, |t| + 10, is too narrow).
    import scipy.special

    monkeypatch.setattr(scipy.special, "nctdtrinc", lambda df, p, t: np.zeros(np.shape(t)))
    from scipy import integrate, special

    log_norm = (df / 2) * math.log(2) + math.lgamma(df / 2)

    def cdf(ti, lam):  # P(T <= t) = E_V[Phi(t sqrt(V/df) - lambda)], V ~ chi2(df): not scipy's nct
        def f(v):
            return special.ndtr(ti * math.sqrt(v / df) - lam) * math.exp((df / 2 - 1) * math.log(v) - v / 2 - log_norm)
        return integrate.quad(f, 0, np.inf, epsabs=1e-13, epsrel=1e-10, limit=200)[0]

    t = np.array([-20.0, -3.0, -0.01, 0.0, 0.5, 20.0])
    for p in (0.0005, 0.4, 0.9995):
        lam = iv._nct_noncentrality(df, p, t)
        for ti, li in zip(t, lam):
            assert cdf(ti, li) == pytest.approx(p, rel=1e-6), (ti, p)
    assert iv._nct_noncentrality(2, 0.0005, np.array([20.0]))[0] > 30  # beyond the first bracket


def test_noncentral_t_limits_odd_in_d_within():
    # Reversing X and Y reverses the interval: limits(-dw) = -reversed(limits(dw)).
    dws = np.array([0.3, 1.1, 2.0])
    lo, hi = noncentral_t_limits(dws, 7, 12, 0.95)
    lo_m, hi_m = noncentral_t_limits(-dws, 7, 12, 0.95)
    np.testing.assert_allclose(lo_m, -hi, atol=1e-6)
    np.testing.assert_allclose(hi_m, -lo, atol=1e-6)


def test_noncentral_t_limits_nan_in_nan_out():
    lo, hi = noncentral_t_limits(np.array([np.nan, np.inf, -np.inf, 0.5]), 8, 8, 0.95)
    assert np.isnan(lo[:3]).all() and np.isnan(hi[:3]).all()
    assert np.isfinite(lo[3]) and np.isfinite(hi[3])


def test_noncentral_t_limits_widen_with_the_level():
    levels = [0.5, 0.8, 0.9, 0.95, 0.99, 0.999]
    got = [noncentral_t_limits([0.9], 8, 10, lv) for lv in levels]
    lows = [float(g[0][0]) for g in got]
    highs = [float(g[1][0]) for g in got]
    assert all(a > b for a, b in zip(lows, lows[1:]))
    assert all(a < b for a, b in zip(highs, highs[1:]))
    # theta is bounded by 1/sqrt(pi(1-pi)) = 2 at pi = 1/2 ... here pi = 8/18
    bound = 1.0 / math.sqrt((8 / 18) * (10 / 18))
    assert all(-bound < lo < hi < bound for lo, hi in zip(lows, highs))


# --------------------------------------------------------------------------- 2. d_within and population_d
def test_d_within_matches_loop():
    rng = np.random.default_rng(1)
    sx, sy = rng.normal(0.4, 1, 7), rng.normal(0, 2, 12)
    assert float(d_within(sx, sy)) == pytest.approx(_dw_loop(sx.tolist(), sy.tolist()), rel=1e-12)
    # batched over a leading axis
    bx, by = rng.normal(size=(4, 5)), rng.normal(size=(4, 9))
    np.testing.assert_allclose(d_within(bx, by), [_dw_loop(a.tolist(), b.tolist()) for a, b in zip(bx, by)],
                               rtol=1e-12)


def test_d_within_nan_when_both_sets_constant():
    assert np.isnan(d_within(np.full(4, 0.3), np.full(5, 0.1)))


def test_interaction_mean_square_matches_anova_loop():
    rng = np.random.default_rng(2)
    c = rng.normal(size=(6, 4)) + 100.0  # a large offset: the centring must keep precision
    assert float(iv._interaction_ms(c)) == pytest.approx(_ms_loop(c.tolist()), rel=1e-9)


@pytest.mark.parametrize("sizes, seed", [((8, 8, 8, 8), 3), ((6, 11, 7, 9), 4), ((25, 16, 25, 8), 5)])
def test_population_d_matches_loop(sizes, seed):
    mats = _crossed(*sizes, seed=seed)
    ref = _pop_d_loop(*mats)
    assert math.isfinite(ref)
    assert float(population_d(*mats)) == pytest.approx(ref, rel=1e-10)


def test_population_d_batched_matches_loop():
    reps = [_crossed(7, 9, 8, 6, seed=s) for s in range(5)]
    stacked = [np.stack([r[i] for r in reps]) for i in range(4)]
    np.testing.assert_allclose(population_d(*stacked), [_pop_d_loop(*r) for r in reps], rtol=1e-10)


def test_population_d_without_interaction_is_the_plain_formula():
    # c_ij = row_i + col_j exactly: every interaction SS is 0, so the estimate uses the plain Sw^2.
    rng = np.random.default_rng(6)
    nx, ny, na, nb = 7, 10, 5, 6
    ua, ub = rng.normal(size=na), rng.normal(size=nb)
    rxa, rxb, rya, ryb = rng.normal(1, 1, nx), rng.normal(0, 1, nx), rng.normal(0, 1, ny), rng.normal(0, 1, ny)
    cxa, cxb = rxa[:, None] + ua, rxb[:, None] + ub
    cya, cyb = rya[:, None] + ua, ryb[:, None] + ub
    # s(w) = row_A(w) - row_B(w) + mean(ua) - mean(ub), by hand
    sx = (rxa - rxb + ua.mean() - ub.mean()).tolist()
    sy = (rya - ryb + ua.mean() - ub.mean()).tolist()
    sw2 = ((nx - 1) * _var1(sx) + (ny - 1) * _var1(sy)) / (nx + ny - 2)
    D = _mean(sx) - _mean(sy)
    pi = nx / (nx + ny)
    expect = D / math.sqrt(sw2 + pi * (1 - pi) * D * D)
    assert float(population_d(cxa, cxb, cya, cyb)) == pytest.approx(expect, rel=1e-9)


def test_population_d_nan_when_attribute_noise_explains_all_spread():
    # Rows of cxa have the same mean (s constant within X and Y) but interact with the attributes:
    # Sw^2 = 0 while the interaction mean squares are positive, so the corrected variance is < 0.
    cxa = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.5, 0.5, 0.5]])
    cxb = np.zeros((3, 2))
    cya = cxa[[1, 2, 0]] - 0.2
    cyb = np.zeros((3, 2))
    assert math.isnan(_pop_d_loop(cxa, cxb, cya, cyb))
    assert np.isnan(population_d(cxa, cxb, cya, cyb))
    # and a case with Sw^2 > 0 but smaller than the attribute noise: still no estimate
    rng = np.random.default_rng(7)
    cxa2 = rng.normal(0, 1.0, (6, 3)) + rng.normal(0, 0.01, 6)[:, None]
    cya2 = rng.normal(0, 1.0, (6, 3)) + 0.5
    cxa2 -= cxa2.mean(axis=1, keepdims=True) - rng.normal(0, 0.01, 6)[:, None]  # row means: tiny spread
    cya2 -= cya2.mean(axis=1, keepdims=True) - 0.5 - rng.normal(0, 0.01, 6)[:, None]
    cxb2, cyb2 = np.zeros((6, 2)), np.zeros((6, 2))
    sx, sy = _s_loop(cxa2.tolist(), cxb2.tolist()), _s_loop(cya2.tolist(), cyb2.tolist())
    sig2 = (5 * (_var1(sx) - _ms_loop(cxa2.tolist()) / 3) + 5 * (_var1(sy) - _ms_loop(cya2.tolist()) / 3)) / 10
    assert _var1(sx) > 0 and sig2 < 0  # the construction
    assert np.isnan(population_d(cxa2, cxb2, cya2, cyb2))


def test_population_d_nan_at_exactly_zero_corrected_variance():
    # Binary fractions, so every mean and sum below is exact: the rows of each block are equal (s is constant
    # within X and within Y, Sw^2 = 0) and every block is row + column effects (interaction SS = 0), so the
    # corrected variance is exactly 0: not positive, no estimate (d / sqrt(pi(1-pi) d^2) would read +-2).
    cxa = np.tile([0.5, 0.25, 0.75, 0.5], (4, 1))
    cxb = np.tile([0.25, 0.5, 0.25, 0.5], (4, 1))
    cya, cyb = cxa - 0.125, cxb + 0.125
    assert _var1(_s_loop(cxa.tolist(), cxb.tolist())) == 0.0 and _ms_loop(cxa.tolist()) == 0.0
    assert np.isnan(population_d(cxa, cxb, cya, cyb))


def test_population_d_removes_the_attribute_noise_on_average():
    # What it estimates: cos(w, a) = u_w + e_wa (A), e'_wb (B); the words' u ~ N(mu_G, 1); the
    # interaction noise e has SD 2, so with 8 attributes s(w) carries attribute noise of variance
    # 4/8 + 4/8 = 1 (the plain d is attenuated). Truth over the populations: (mu_X - mu_Y) / sqrt(1 + D^2/4).
    rng = np.random.default_rng(8)
    R, n, k, mu = 200, 200, 8, 1.0
    truth = mu / math.sqrt(1 + mu * mu / 4)
    ux, uy = rng.normal(mu, 1, (R, n)), rng.normal(0, 1, (R, n))
    cxa = ux[..., None] + rng.normal(0, 2, (R, n, k))
    cya = uy[..., None] + rng.normal(0, 2, (R, n, k))
    cxb, cyb = rng.normal(0, 2, (R, n, k)), rng.normal(0, 2, (R, n, k))
    est = population_d(cxa, cxb, cya, cyb)
    assert abs(est.mean() - truth) < 0.01
    sx = cxa.mean(-1) - cxb.mean(-1)
    sy = cya.mean(-1) - cyb.mean(-1)
    plain_w = d_within(sx, sy)
    plain = plain_w / np.sqrt(1 + plain_w ** 2 / 4)
    assert plain.mean() < truth - 0.1  # attenuated, so the check above is not vacuous


# --------------------------------------------------------------------------- 3. jackknife
@pytest.mark.parametrize("sizes, seed, level", [((8, 8, 8, 8), 10, 0.95), ((6, 9, 7, 5), 11, 0.9),
                                               ((16, 12, 25, 20), 12, 0.99)])
def test_jackknife_matches_delete_one_loop(sizes, seed, level):
    mats = _crossed(*sizes, seed=seed)
    ref = _jackknife_ref(*mats, level)
    got = jackknife_population_interval(*mats, level)
    assert all(math.isfinite(v) for v in ref)
    assert got == pytest.approx(ref, rel=1e-9)


def test_jackknife_batched_equals_per_test():
    reps = [_crossed(7, 6, 5, 8, seed=20 + s) for s in range(4)]
    stacked = [np.stack([r[i] for r in reps]) for i in range(4)]
    est, se, lo, hi = jackknife_population_limits(*stacked, 0.95)
    for b, r in enumerate(reps):
        one = jackknife_population_interval(*r, 0.95)
        assert (est[b], se[b], lo[b], hi[b]) == pytest.approx(one, rel=1e-12)
        assert one == pytest.approx(_jackknife_ref(*r, 0.95), rel=1e-9)


def test_jackknife_limits_stay_where_theta_can_be():
    # Few words and a large effect: the Wald interval est +- q se reaches past 1/sqrt(pi(1-pi)), a value
    # theta_infinity cannot take (W9 on GloVe printed "1.44 [-2.14, 5.02]" at 99.9%); the limit is the bound.
    mats = _crossed(4, 6, 4, 3, seed=3, effect=3.0, noise=0.3)
    est, se, lo, hi = jackknife_population_interval(*mats, 0.999)
    pi = 4 / 10
    bound = 1.0 / math.sqrt(pi * (1 - pi))
    q = stats.t.ppf(0.9995, min(10, 7) - 2)
    assert est + q * se > bound  # the construction: the plain Wald limit is out of range
    assert hi == pytest.approx(bound, rel=1e-15) and -bound <= lo < est
    assert (est, se, lo, hi) == pytest.approx(_jackknife_ref(*mats, 0.999), rel=1e-9)


def test_jackknife_at_exactly_zero_effect():
    # Y's rows are X's in reverse order and every value is a multiple of 1/64 (sums and means over 4 are
    # exact): D = 0 exactly, so the estimate is 0 and the interval is symmetric about it, with a finite SE.
    rng = np.random.default_rng(50)
    cxa, cxb = np.round(rng.normal(0, 1, (4, 4)) * 64) / 64, np.round(rng.normal(0, 1, (4, 4)) * 64) / 64
    cya, cyb = cxa[::-1].copy(), cxb[::-1].copy()
    est, se, lo, hi = jackknife_population_interval(cxa, cxb, cya, cyb, 0.95)
    assert est == 0.0 and math.isfinite(se) and se > 0 and lo == -hi
    assert (est, se, lo, hi) == pytest.approx(_jackknife_ref(cxa, cxb, cya, cyb, 0.95), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("which", range(4))
def test_jackknife_needs_three_words_in_every_set(which):
    sizes = [5, 5, 5, 5]
    sizes[which] = 2
    mats = _crossed(*sizes, seed=30 + which)
    assert all(math.isnan(v) for v in jackknife_population_interval(*mats, 0.95))
    sizes[which] = 3  # the boundary: 3 words is enough
    mats = _crossed(*sizes, seed=30 + which)
    ref = _jackknife_ref(*mats, 0.95)
    got = jackknife_population_interval(*mats, 0.95)
    assert got == pytest.approx(ref, rel=1e-9, nan_ok=True)


# --------------------------------------------------------------------------- 4. coverage
@pytest.mark.parametrize("delta", [0.0, 1.0])
def test_noncentral_t_coverage_of_theta(delta):
    # 1500 seeded data sets of normal s-values, 8 vs 8, common SD 1: X ~ N(delta, 1), Y ~ N(0, 1).
    rng = np.random.default_rng(2024 + int(10 * delta))
    R, n = 1500, 8
    sx, sy = rng.normal(delta, 1.0, (R, n)), rng.normal(0.0, 1.0, (R, n))
    # truth: mean difference over the SD of the pooled (mixture) population, from its moments
    pi, mx, my = 0.5, delta, 0.0
    ea2 = pi * (1 + mx * mx) + (1 - pi) * (1 + my * my)
    ea = pi * mx + (1 - pi) * my
    truth = (mx - my) / math.sqrt(ea2 - ea * ea)
    dw = (sx.mean(1) - sy.mean(1)) / np.sqrt((sx.var(1, ddof=1) + sy.var(1, ddof=1)) / 2)
    lo, hi = noncentral_t_limits(dw, n, n, 0.95)
    cover = float(np.mean((lo <= truth) & (truth <= hi)))
    assert 0.93 <= cover <= 0.97, cover


# --------------------------------------------------------------------------- 5. coverage warnings
#: The sizes from which the coverage study (benchmarks/coverage.py) found each default inside [0.93, 0.97].
STUDY_SIZES = {("given-attributes", "noncentral-t"): (6, 7), ("given-word", "noncentral-t"): (6, 0),
               ("populations", "jackknife"): (16, 25)}


def test_covered_from_is_the_study_table():
    assert iv.COVERED_FROM == STUDY_SIZES


@pytest.mark.parametrize("key", sorted(STUDY_SIZES))
def test_coverage_warning_at_its_boundaries(key):
    estimand, method = key
    nt, na = STUDY_SIZES[key]
    assert coverage_warning(estimand, method, nt, nt, na, na) == ""
    assert coverage_warning(estimand, method, nt + 5, nt + 1, na + 3, na + 9) == ""
    one_less = [(nt - 1, nt, na, na), (nt, nt - 1, na, na)]
    if na > 0:
        one_less += [(nt, nt, na - 1, na), (nt, nt, na, na - 1)]
    for sizes in one_less:
        msg = coverage_warning(estimand, method, *sizes)
        assert msg and method in msg and estimand in msg, sizes
        assert str(nt) in msg


@pytest.mark.parametrize("estimand, method", [("given-attributes", "percentile"), ("given-attributes", "bca"),
                                              ("populations", "bca"), ("populations", "percentile")])
def test_coverage_warning_for_methods_outside_the_study(estimand, method):
    # issue 35: the warning quotes what the study measured at the design's sizes, not "not established"
    from isoeat.stats.coverage_study import D_COVERAGE, D_STUDY, coverage_text, d_coverage

    msg = coverage_warning(estimand, method, 8, 8, 8, 8)
    m = d_coverage(estimand, method, 8, 8, 8, 8)
    assert (m.low, m.high) == D_COVERAGE[(estimand, method)][(8, 8)]
    assert "is not the default" in msg and method in msg and estimand in msg
    assert f"measured coverage {coverage_text(m)} at 8 target and 8 attribute words per set" in msg
    assert D_STUDY[(estimand, method)] in msg
    far = coverage_warning(estimand, method, 100, 100, 100, 100)
    assert "outside the study's" in far and "measured coverage" in far


# --------------------------------------------------------------------------- 6. check_interval_options
def _opts(**kw):
    base = dict(ci=False, bootstrap=0, ci_method="auto", ci_level=0.95, ci_estimand="given-attributes",
                resample_attributes=False)
    base.update(kw)
    return check_interval_options(**base)


def test_no_interval_without_ci_or_bootstrap():
    assert _opts() is None
    # interval options without an interval are refused, not ignored (tests/test_intervals_surface.py)
    with pytest.raises(ConfigError, match="no interval asked for"):
        _opts(ci_method="bca", ci_estimand="populations")


def test_default_methods_per_estimand():
    r = _opts(ci=True)
    assert (r.estimand, r.method, r.n_resamples, r.level) == ("given-attributes", "noncentral-t", 0, 0.95)
    r = _opts(ci=True, ci_estimand="populations")
    assert (r.estimand, r.method, r.n_resamples) == ("populations", "jackknife", 0)
    assert _opts(ci=True, ci_estimand="given-word").method == "noncentral-t"


def test_resample_attributes_means_populations():
    r = _opts(ci=True, resample_attributes=True)
    assert r.estimand == "populations" and r.method == "jackknife"


@pytest.mark.parametrize("kw", [dict(ci_method="jackknife"), dict(ci_method="noncentral-t", ci_estimand="populations"),
                                dict(ci_method="noncentral-t", resample_attributes=True),
                                dict(ci_method="bca", ci_estimand="given-word")])
def test_method_that_does_not_estimate_the_estimand_is_refused(kw):
    with pytest.raises(ConfigError, match="ci_method"):
        _opts(ci=True, **kw)
    # also without an interval asked for (isoeat weat --ci-method jackknife printed no interval and no error,
    # while the same settings in an experiment file are refused)
    with pytest.raises(ConfigError, match="ci_method"):
        _opts(**kw)


def test_bootstrap_method_without_n_draws_ten_thousand():
    r = _opts(ci=True, ci_method="bca")
    assert (r.method, r.n_resamples) == ("bca", 10_000)
    r = _opts(bootstrap=500, ci_method="percentile", ci_estimand="populations")
    assert (r.method, r.n_resamples, r.estimand) == ("percentile", 500, "populations")
    # bootstrap > 0 asks for an interval, by the default (analytic) method: no resamples recorded
    r = _opts(bootstrap=500)
    assert (r.method, r.n_resamples) == ("noncentral-t", 0)


@pytest.mark.parametrize("level, need", [(0.95, 200), (0.90, 100), (0.99, 1000), (0.8, 50)])
def test_bootstrap_below_the_floor_is_refused_at_exactly_one_less(level, need):
    # need = ceil(2 * 5 / (1 - level)): 5 resampled values beyond each end
    assert need == math.ceil(round(2 * 5 / (1 - level), 9))
    with pytest.raises(IsoeatError, match="bootstrap"):
        _opts(bootstrap=need - 1, ci_method="percentile", ci_level=level)
    r = _opts(bootstrap=need, ci_method="percentile", ci_level=level)
    assert r.n_resamples == need


def test_level_and_bootstrap_bounds():
    for level in (0.0, 1.0):  # open interval: a 0% or 100% interval is not an interval
        with pytest.raises(IsoeatError, match="ci_level"):
            _opts(ci=True, ci_level=level)
    with pytest.raises(IsoeatError, match="bootstrap"):
        _opts(bootstrap=1, ci_method="percentile")  # 1 resample: far below 200 at 95%
    r = _opts(ci=True)
    with pytest.raises(AttributeError):
        r.level = 0.5  # a checked request cannot be changed afterwards


# --------------------------------------------------------------------------- 7. the record
def test_flat_round_trip_with_estimate_and_warning():
    ci = ConfidenceInterval(low=-0.25, high=1.5, level=0.9, method="jackknife", estimand="populations",
                            estimate=0.7, warning="coverage of x", note="")
    flat = ConfidenceInterval.flat(ci, "d_ci")
    assert flat["d_ci_estimate"] == 0.7 and flat["d_ci_warning"] == "coverage of x"
    assert flat["d_ci_method"] == "jackknife" and flat["d_ci_estimand"] == "populations"
    assert ConfidenceInterval.from_flat(flat, "d_ci") == ci
    boot = ConfidenceInterval(low=0.1, high=0.9, level=0.95, method="bca", n_resamples=2000,
                              estimand="populations", note="2 undefined replicates dropped")
    flat = ConfidenceInterval.flat(boot, "p")
    assert flat["p_method"] == "bca+attributes"
    back = ConfidenceInterval.from_flat(flat, "p")
    assert back == boot and math.isnan(back.estimate)
    # JSON null for numbers reads as nan
    nulls = {**ConfidenceInterval.flat(ci, "q"), "q_low": None, "q_high": None, "q_estimate": None}
    back = ConfidenceInterval.from_flat(nulls, "q")
    assert math.isnan(back.low) and math.isnan(back.high) and math.isnan(back.estimate)


def test_no_interval_round_trip():
    flat = ConfidenceInterval.flat(None, "d_ci")
    assert ConfidenceInterval.from_flat(flat, "d_ci") is None


def test_old_record_reads_as_populations_percentile():
    old = {"d_ci_low": 0.2, "d_ci_high": 1.1, "d_ci_method": "percentile+attributes", "d_ci_level": 0.95,
           "d_ci_resamples": 1000, "d_ci_note": ""}
    ci = ConfidenceInterval.from_flat(old, "d_ci")
    assert (ci.estimand, ci.method, ci.n_resamples, ci.low, ci.high) == ("populations", "percentile", 1000, 0.2, 1.1)
    assert ci.warning == "" and math.isnan(ci.estimate) and ci.resample_attributes
    plain = ConfidenceInterval.from_flat({**old, "d_ci_method": "bca"}, "d_ci")
    assert (plain.estimand, plain.method) == ("given-attributes", "bca")


def test_flagged():
    ok = ConfidenceInterval(low=0.1, high=0.5, level=0.95, method="noncentral-t")
    assert not ok.flagged
    with pytest.raises(AttributeError):
        ok.warning = "w"  # a record: frozen, so a result cannot lose or gain its flag afterwards
    assert ConfidenceInterval(low=0.1, high=0.5, level=0.95, method="bca", warning="w").flagged
    assert ConfidenceInterval(low=math.nan, high=0.5, level=0.95, method="noncentral-t").flagged
    assert ConfidenceInterval(low=0.1, high=math.inf, level=0.95, method="noncentral-t").flagged


# --------------------------------------------------------------------------- 8. wiring into WEAT and SC-WEAT
def _unit(M):
    return M / np.linalg.norm(M, axis=1, keepdims=True)


def _vectors(nx=8, ny=8, na=8, nb=8, seed=40, dim=20):
    rng = np.random.default_rng(seed)
    axis = np.zeros(dim)
    axis[0] = 1.0
    X = rng.normal(size=(nx, dim)) + 0.8 * axis
    Y = rng.normal(size=(ny, dim)) - 0.8 * axis
    A = rng.normal(size=(na, dim)) + 1.5 * axis
    B = rng.normal(size=(nb, dim)) - 1.5 * axis
    return X, Y, A, B


def _cos_blocks(X, Y, A, B):
    X, Y, A, B = (_unit(M) for M in (X, Y, A, B))
    return X @ A.T, X @ B.T, Y @ A.T, Y @ B.T


def test_weat_interval_is_noncentral_t_on_the_s_values():
    from isoeat.stats.weat import weat_from_vectors

    X, Y, A, B = _vectors()
    cxa, cxb, cya, cyb = _cos_blocks(X, Y, A, B)
    sx, sy = _s_loop(cxa.tolist(), cxb.tolist()), _s_loop(cya.tolist(), cyb.tolist())
    lo, hi = _nct_ref(_dw_loop(sx, sy), 8, 8, 0.9)
    r = weat_from_vectors(X, Y, A, B, ci=True, ci_level=0.9, rng=0)
    ci = r.effect_size_ci
    assert (ci.estimand, ci.method, ci.level, ci.warning) == ("given-attributes", "noncentral-t", 0.9, "")
    assert ci.low == pytest.approx(lo, abs=1e-6) and ci.high == pytest.approx(hi, abs=1e-6)
    assert math.isnan(ci.estimate)


def test_weat_populations_estimate_is_the_corrected_d():
    from isoeat.stats.weat import weat_from_vectors

    X, Y, A, B = _vectors(nx=9, ny=7, na=6, nb=8, seed=41)
    blocks = _cos_blocks(X, Y, A, B)
    est, _, lo, hi = _jackknife_ref(*blocks, 0.95)
    r = weat_from_vectors(X, Y, A, B, ci=True, ci_estimand="populations", rng=0)
    ci = r.effect_size_ci
    assert (ci.estimand, ci.method) == ("populations", "jackknife")
    assert ci.estimate == pytest.approx(est, rel=1e-9)
    assert (ci.low, ci.high) == pytest.approx((lo, hi), rel=1e-9)
    assert ci.warning  # 7-9 targets and 6-8 attributes: below the study's 16 and 25
    r2 = weat_from_vectors(X, Y, A, B, ci=True, resample_attributes=True, rng=0)
    assert r2.effect_size_ci == ci


def test_sc_weat_interval_is_noncentral_t_on_the_cosines():
    from isoeat.stats.weat import sc_weat_from_vectors

    rng = np.random.default_rng(42)
    w = rng.normal(size=10)
    A, B = rng.normal(size=(7, 10)) + 0.6 * w, rng.normal(size=(9, 10))
    u = w / np.linalg.norm(w)
    ca, cb = (_unit(A) @ u).tolist(), (_unit(B) @ u).tolist()
    lo, hi = _nct_ref(_dw_loop(ca, cb), 7, 9, 0.95)
    r = sc_weat_from_vectors(w, A, B, ci=True, rng=0)
    ci = r.effect_size_ci
    assert (ci.estimand, ci.method, ci.warning) == ("given-word", "noncentral-t", "")
    assert ci.low == pytest.approx(lo, abs=1e-6) and ci.high == pytest.approx(hi, abs=1e-6)
    # 5 words in A: below the study's 6 -> a warning
    r5 = sc_weat_from_vectors(w, A[:5], B, ci=True, rng=0)
    assert r5.effect_size_ci.warning
    assert sc_weat_from_vectors(w, A, B, rng=0).effect_size_ci is None


@pytest.mark.parametrize("kw", [dict(bootstrap=1000), dict(resample_attributes=True),
                                dict(ci_estimand="populations")])
def test_sc_weat_refuses_weat_interval_options_by_name(kw):
    from isoeat.stats.weat import sc_weat, sc_weat_from_vectors

    (name,) = kw
    with pytest.raises(ConfigError, match=name):
        sc_weat(None, ["doctor"], "W6", ci=True, **kw)
    rng = np.random.default_rng(0)
    with pytest.raises(ConfigError, match=name):
        sc_weat_from_vectors(rng.normal(size=5), rng.normal(size=(4, 5)), rng.normal(size=(4, 5)), ci=True, **kw)


def test_weat_warning_uses_the_attribute_set_sizes():
    from isoeat.stats.weat import weat_from_vectors

    # 8 targets per set (the study covers 6), 6 attribute words in A (it covers 7): flagged, and only for A's size
    X, Y, A, B = _vectors(nx=8, ny=8, na=6, nb=9, seed=43)
    ci = weat_from_vectors(X, Y, A, B, ci=True, rng=0).effect_size_ci
    assert ci.warning and "7 attribute words" in ci.warning
    X, Y, A, B = _vectors(nx=8, ny=8, na=9, nb=6, seed=43)  # and for B's
    assert "7 attribute words" in weat_from_vectors(X, Y, A, B, ci=True, rng=0).effect_size_ci.warning
    X, Y, A, B = _vectors(nx=8, ny=8, na=7, nb=9, seed=43)
    assert weat_from_vectors(X, Y, A, B, ci=True, rng=0).effect_size_ci.warning == ""
    # SC-WEAT: the sample is A and B (6 words each covered), whatever the vectors' dimension
    rng = np.random.default_rng(44)
    w, A6, B5 = rng.normal(size=12), rng.normal(size=(6, 12)), rng.normal(size=(5, 12))
    from isoeat.stats.weat import sc_weat_from_vectors

    assert sc_weat_from_vectors(w, A6, B5, ci=True, rng=0).effect_size_ci.warning
    assert sc_weat_from_vectors(w, A6, np.vstack([B5, rng.normal(size=12)]), ci=True, rng=0).effect_size_ci.warning == ""


def test_populations_notes_say_why_there_is_no_interval():
    req = iv.IntervalRequest(estimand="populations", method="jackknife", level=0.95, n_resamples=0)
    mats = _crossed(5, 5, 2, 5, seed=60)  # 2 words in A
    s_x = mats[0].mean(1) - mats[1].mean(1)
    s_y = mats[2].mean(1) - mats[3].mean(1)
    ci = iv.interval_on_d(s_x, s_y, mats, req)
    assert math.isnan(ci.low) and "at least 3 words" in ci.note and ci.flagged
    cxa = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.5, 0.5, 0.5]])  # attribute noise only (see above)
    mats = (cxa, np.zeros((3, 3)), cxa[[1, 2, 0]] - 0.2, np.zeros((3, 3)))
    ci = iv.interval_on_d(np.zeros(3), np.full(3, -0.2), mats, req)
    assert math.isnan(ci.high) and "noise accounts for all the spread" in ci.note
    mats = _crossed(6, 6, 5, 5, seed=61)
    s_x, s_y = mats[0].mean(1) - mats[1].mean(1), mats[2].mean(1) - mats[3].mean(1)
    ci = iv.interval_on_d(s_x, s_y, mats, req)
    assert math.isfinite(ci.low) and ci.note == ""


def test_given_attributes_bootstrap_does_not_resample_the_attributes():
    # Two data sets with the same s-values but different attribute structure: a bootstrap of the targets only
    # (given-attributes) gives the same interval from the same seed; over the populations it does not.
    cxa, cxb, cya, cyb = _crossed(8, 8, 8, 8, seed=70)
    rng = np.random.default_rng(71)
    shuffle = rng.normal(0, 0.5, (8, 8))
    shuffle -= shuffle.mean(axis=1, keepdims=True)  # rows sum to 0: s-values unchanged
    other = (cxa + shuffle, cxb, cya + shuffle[::-1], cyb)
    s_x, s_y = cxa.mean(1) - cxb.mean(1), cya.mean(1) - cyb.mean(1)
    np.testing.assert_allclose(other[0].mean(1) - other[1].mean(1), s_x, atol=1e-12)
    given = iv.IntervalRequest(estimand="given-attributes", method="percentile", level=0.9, n_resamples=400)
    pops = iv.IntervalRequest(estimand="populations", method="percentile", level=0.9, n_resamples=400)
    a = iv.interval_on_d(s_x, s_y, (cxa, cxb, cya, cyb), given, rng=5)
    b = iv.interval_on_d(s_x, s_y, other, given, rng=5)
    assert (a.low, a.high) == pytest.approx((b.low, b.high), abs=1e-9)
    c = iv.interval_on_d(s_x, s_y, (cxa, cxb, cya, cyb), pops, rng=5)
    e = iv.interval_on_d(s_x, s_y, other, pops, rng=5)
    assert (c.low, c.high) != pytest.approx((e.low, e.high), abs=1e-6)
    assert a.n_resamples == 400 and a.warning and c.estimand == "populations"


def test_bootstrap_note_is_kept():
    req = iv.IntervalRequest(estimand="given-attributes", method="percentile", level=0.9, n_resamples=200)
    ci = iv.interval_on_d(np.full(4, 0.3), np.full(5, 0.3), None, req, rng=0)  # zero pooled SD: d undefined
    assert math.isnan(ci.low) and "undefined" in ci.note


# --------------------------------------------------------------------------- 9. config
def _cfg(**settings):
    from isoeat.experiments.config import parse_config

    return parse_config({"models": ["glove-6b-50d"], "tests": ["W6"], "settings": settings})


def test_config_parses_ci_settings():
    cfg = _cfg(ci=True, ci_estimand="populations")
    assert cfg.settings.ci is True and cfg.settings.ci_estimand == "populations"
    kw = cfg.settings.weat_kwargs()
    assert kw["ci"] is True and kw["ci_estimand"] == "populations" and kw["ci_method"] == "auto"
    assert "ci" not in _cfg().settings.weat_kwargs()


def test_config_method_that_does_not_estimate_the_default_estimand():
    with pytest.raises(ConfigError) as exc:
        _cfg(ci=True, ci_method="jackknife")
    msg = str(exc.value)
    assert "settings.ci_method" in msg and "\n" not in msg
    _cfg(ci=True, ci_method="jackknife", ci_estimand="populations")  # fine with its estimand


def test_protocol_without_interval_keeps_the_old_hash():
    p = _cfg().protocol()["settings"]
    assert p["ci_method"] == "percentile"
    assert "ci" not in p and "ci_estimand" not in p
    # a method named without any interval decides nothing either
    assert _cfg(ci_method="bca").protocol() == _cfg().protocol()


def test_protocol_with_interval_differs():
    plain, with_ci = _cfg(), _cfg(ci=True)
    assert with_ci.protocol() != plain.protocol()
    assert with_ci.protocol_hash() != plain.protocol_hash()
    assert _cfg(ci=True, ci_estimand="populations").protocol() != with_ci.protocol()
    assert with_ci.protocol()["settings"]["ci_method"] == "auto"


# --------------------------------------------------------------------------- 10. tables
def test_format_ci():
    from isoeat.reporting.tables import format_ci

    assert format_ci(None) == "-"
    assert format_ci(ConfidenceInterval(low=math.nan, high=math.nan, level=0.95, method="jackknife",
                                        estimand="populations", estimate=0.4)) == "-"
    assert format_ci(ConfidenceInterval(low=-0.123, high=1.456, level=0.95, method="noncentral-t")) == "[-0.12, 1.46]"
    pop = ConfidenceInterval(low=0.2, high=1.8, level=0.95, method="jackknife", estimand="populations",
                             estimate=1.04)
    assert format_ci(pop) == "1.04 [0.20, 1.80]"
    flagged = ConfidenceInterval(low=0.2, high=1.8, level=0.95, method="jackknife", estimand="populations",
                                 estimate=1.04, warning="coverage ...")
    assert format_ci(flagged) == "1.04 [0.20, 1.80]!"


def test_ci_footer_groups_warnings_and_lists_missing():
    from isoeat.reporting.tables import ci_footer

    w = "coverage of the jackknife interval (populations) is established only from 16 target and 25 attribute words"
    a = ConfidenceInterval(low=0.1, high=0.9, level=0.95, method="jackknife", estimand="populations",
                           estimate=0.5, warning=w)
    b = ConfidenceInterval(low=0.3, high=1.2, level=0.95, method="jackknife", estimand="populations",
                           estimate=0.7, warning=w)
    c = ConfidenceInterval(low=math.nan, high=math.nan, level=0.95, method="jackknife", estimand="populations",
                           note="no interval: the attribute words' noise accounts for all the spread", warning=w)
    ok = ConfidenceInterval(low=0.3, high=1.2, level=0.95, method="jackknife", estimand="populations",
                            estimate=0.7)
    boot = ConfidenceInterval(low=0.2, high=1.0, level=0.95, method="bca", n_resamples=2000,
                              note="3 undefined replicates dropped")
    text = ci_footer([a, b, None, c, ok, boot], ["W6", "W7", "W8", "W9", "W1", "W2"])
    lines = text.splitlines()
    warn_lines = [ln for ln in lines if ln.startswith("!")]
    assert warn_lines == [f"! {w} (W6, W7, W9)."]
    assert "- W9: no interval: the attribute words' noise accounts for all the spread." in lines
    # only a missing interval's note is listed (a present interval's note, e.g. dropped replicates, is not)
    assert [ln for ln in lines if ln.startswith("- ")] == [
        "- W9: no interval: the attribute words' noise accounts for all the spread."]
    assert sum(ln.startswith("CI: 95% interval") for ln in lines) == 2
    assert "CI: 95% interval on the effect given these attribute words (targets random): estimand " \
           "given-attributes (bca, 2,000 resamples)." in lines
    assert sum("estimand populations (jackknife)." in ln for ln in lines) == 1
    assert ci_footer([None, None], ["a", "b"]) == ""


def test_the_jackknife_warning_quotes_its_measured_coverage_where_it_is_flagged():
    msg = coverage_warning("populations", "jackknife", 8, 8, 8, 8)
    assert "established only from 16 target and 25 attribute words" in msg
    assert "measured coverage 0.954-0.975 at 8 target and 8 attribute words per set" in msg


def test_d_coverage_lookup_brackets_sizes_and_says_when_outside(monkeypatch):
    from isoeat.stats import coverage_study as cs

    rows = {(8, 8): (0.84, 0.91), (16, 8): (0.88, 0.94), (8, 25): (0.83, 0.93), (16, 25): (0.89, 0.93)}
    monkeypatch.setitem(cs.D_COVERAGE, ("given-attributes", "percentile"), rows)
    at = cs.d_coverage("given-attributes", "percentile", 16, 20, 12, 20)      # targets 16, attributes 8-25
    assert (at.low, at.high, at.note) == (0.88, 0.94, "")
    assert at.sizes == "16 target and 8-25 attribute words per set"
    low = cs.d_coverage("given-attributes", "percentile", 6, 6, 8, 8)
    assert (low.low, low.high) == (0.84, 0.91) and "6 target words per set is outside the study's 8-16" in low.note
    assert math.isnan(cs.d_coverage("given-word", "percentile", 8, 8, 8, 8).low)
