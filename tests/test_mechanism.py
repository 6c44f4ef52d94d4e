"""The mechanism decomposition (docs/diagnostics.md, "Why d moved"): C = sum_k c_k, exactly.

Expected values are computed here without isoeat: the contrast C by explicit
Python loops over word pairs (math.fsum of cosines from dot products), the
orthonormal basis by numpy's QR of a random matrix, the ZCA by numpy.linalg.eigh.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from isoeat.diagnostics.mechanism import contrast_components, mechanism_from_vectors


def _cos(u, v) -> float:
    return math.fsum(a * b for a, b in zip(u, v)) / math.sqrt(math.fsum(a * a for a in u) * math.fsum(b * b for b in v))


def _contrast_by_loops(X, Y, A, B) -> float:
    """C = mean_X s - mean_Y s, s(w) = mean_a cos(w, a) - mean_b cos(w, b), by loops."""
    def s(w):
        return math.fsum(_cos(w, a) for a in A) / len(A) - math.fsum(_cos(w, b) for b in B) / len(B)
    return math.fsum(s(x) for x in X) / len(X) - math.fsum(s(y) for y in Y) / len(Y)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_components_sum_to_the_contrast_in_any_orthonormal_basis(seed):
    rng = np.random.default_rng(seed)
    d = 12
    X, Y, A, B = (rng.normal(size=(n, d)) + 0.7 for n in (5, 7, 4, 6))  # unequal sizes, a shared offset
    basis, _ = np.linalg.qr(rng.normal(size=(d, d)))
    c = contrast_components(X, Y, A, B, basis)
    assert c.shape == (d,)
    assert abs(math.fsum(c) - _contrast_by_loops(X.tolist(), Y.tolist(), A.tolist(), B.tolist())) < 1e-12


class _ZCA:
    """A ZCA written here from numpy.linalg.eigh (not isoeat's), with eigenvalues_/eigenvectors_/eps_."""

    def __init__(self, R: np.ndarray, eps: float = 1e-3):
        self.mean_ = R.mean(axis=0)
        self.eigenvalues_, self.eigenvectors_ = np.linalg.eigh(np.cov(R, rowvar=False))
        self.eps_ = eps
        U, lam = self.eigenvectors_, self.eigenvalues_
        self.whitening_ = (U / np.sqrt(lam + eps)) @ U.T

    def transform(self, V):
        return (np.asarray(V) - self.mean_) @ self.whitening_.T


def _planted(rng: np.random.Generator, d: int = 20):
    """A reference with one dominant direction u (sd 10, the others 1), and a test whose bias lies along u only."""
    u = np.linalg.qr(rng.normal(size=(d, d)))[0][:, 0]
    R = rng.normal(size=(3000, d)) + 10.0 * rng.normal(size=(3000, 1)) * u
    noise = lambda n: rng.normal(size=(n, d))  # noqa: E731
    sets = {"X": noise(8) + 4 * u, "Y": noise(8) - 4 * u, "A": noise(8) + 4 * u, "B": noise(8) - 4 * u}
    return u, R, sets


def test_a_planted_dominant_direction_carrying_the_bias_has_top1_share_near_1():
    rng = np.random.default_rng(7)
    u, R, sets = _planted(rng)
    zca = _ZCA(R)
    rec = mechanism_from_vectors(sets, zca)
    # the top eigenvector of the reference is the planted direction (up to sign)
    top = zca.eigenvectors_[:, np.argmax(zca.eigenvalues_)]
    assert abs(top @ u) > 0.999
    assert rec["share_raw"]["1"] > 0.95 and rec["abs_share_raw"]["1"] > 0.9
    # ZCA shrinks that direction: the shrink factor is sqrt((median + eps) / (lambda_1 + eps)), about 1/10
    lam = np.sort(zca.eigenvalues_)[::-1]
    assert rec["shrink"][0] == pytest.approx(math.sqrt((np.median(lam) + 1e-3) / (lam[0] + 1e-3)), rel=1e-12)
    assert rec["shrink"][0] < 0.15
    # the decomposition of both contrasts is exact
    C = _contrast_by_loops(*(sets[k].tolist() for k in "XYAB"))
    assert rec["contrast_raw"] == pytest.approx(C, abs=1e-12)
    assert abs(math.fsum(contrast_components(*(sets[k] for k in "XYAB"), zca.eigenvectors_)) - C) < 1e-12
    Cw = _contrast_by_loops(*(zca.transform(sets[k]).tolist() for k in "XYAB"))
    assert rec["contrast_calibrated"] == pytest.approx(Cw, abs=1e-12)
    assert abs(rec["sum_check_raw"]) < 1e-12


def test_a_bias_orthogonal_to_the_dominant_direction_has_top1_share_near_0():
    rng = np.random.default_rng(8)
    u, R, _ = _planted(rng)
    v = np.linalg.qr(np.column_stack([u, rng.normal(size=u.size)]))[0][:, 1]  # orthogonal to u
    noise = lambda n: rng.normal(size=(n, u.size)) + 6 * u  # noqa: E731 - everything shares the dominant offset
    sets = {"X": noise(8) + 3 * v, "Y": noise(8) - 3 * v, "A": noise(8) + 3 * v, "B": noise(8) - 3 * v}
    rec = mechanism_from_vectors(sets, _ZCA(R))
    assert abs(rec["share_raw"]["1"]) < 0.1 and rec["abs_share_raw"]["1"] < 0.1


def test_record_fields_and_sizes():
    rng = np.random.default_rng(3)
    _, R, sets = _planted(rng, d=6)
    rec = mechanism_from_vectors(sets, _ZCA(R), top=4)
    assert rec["dim"] == 6 and len(rec["c_raw"]) == len(rec["eigenvalues"]) == len(rec["shrink"]) == 4
    assert list(rec["share_raw"]) == ["1", "3"]  # k = 10 > d is left out
    assert rec["eigenvalues"] == sorted(rec["eigenvalues"], reverse=True)


def test_calibrators_without_principal_directions_give_none():
    class Center:
        def transform(self, V):
            return V

    rng = np.random.default_rng(0)
    sets = {k: rng.normal(size=(3, 4)) for k in "XYAB"}
    assert mechanism_from_vectors(sets, Center()) is None
    assert mechanism_from_vectors({**sets, "A": np.zeros((0, 4))}, _ZCA(rng.normal(size=(50, 4)))) is None


def test_isoeat_zca_on_glove_agrees_with_the_weat_s_values(glove):
    """On the real vectors: C_raw = mean_X s - mean_Y s of isoeat.weat's s-values (W6)."""
    import isoeat

    zca = isoeat.ZCAWhitener().fit(glove.vectors[:5000])
    test = isoeat.get_test("W6")
    sets = {role: glove.lookup(ws.words).vectors for role, ws in test.sets().items()}
    rec = mechanism_from_vectors(sets, zca)
    res = isoeat.weat(glove, "W6")
    rd = res.to_dict(scores=True)
    assert rec["contrast_raw"] == pytest.approx(np.mean(rd["s_x"]) - np.mean(rd["s_y"]), abs=1e-12)
    assert abs(rec["sum_check_raw"]) < 1e-12


def test_pca_whitening_gives_the_zca_record(glove):
    """PCA whitening = ZCA rotated: same cosines, and direction k's image is the k-th axis, so the same c^W_k."""
    import isoeat

    ref = glove.vectors[:3000]
    zca = isoeat.make_calibrator("zca").fit(ref)
    pca = isoeat.make_calibrator("pca-whiten").fit(ref)
    test = isoeat.get_test("W5")
    sets = {role: glove.lookup(ws.words).vectors for role, ws in test.sets().items()}
    a, b = mechanism_from_vectors(sets, zca), mechanism_from_vectors(sets, pca)
    assert np.allclose(a["c_calibrated"], b["c_calibrated"], atol=1e-12, rtol=0)
    assert a["contrast_calibrated"] == pytest.approx(b["contrast_calibrated"], abs=1e-12)
    # and the calibrated components sum to the calibrated contrast (all d of them: the shares' denominators)
    assert a["share_calibrated"]["10"] == pytest.approx(sum(a["c_calibrated"]) / a["contrast_calibrated"], rel=1e-9)
