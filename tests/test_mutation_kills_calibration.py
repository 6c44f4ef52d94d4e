"""Tests that kill the surviving mutants of the calibration modules.

Modules: ``calibration/alternatives.py``, ``_base.py``, ``_shrinkage.py``,
``io.py`` and ``registry.py`` (``tools/mutation.py``, ``docs/mutation.md``).
Expected values are worked by hand on tiny inputs whose moments are exact, or
recomputed from scratch with numpy from the formulas in the docstrings
(ZCA/PCA: :math:`W = U(\\Lambda+\\varepsilon)^{-1/2}[U^\\top]`, ABTT: remove the
top :math:`D` principal directions, rogue: per-dimension z-scores,
Ledoit–Wolf 2004: :math:`\\rho = \\min(\\bar\\beta^2, \\delta^2)/\\delta^2`).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, DataFormatError, IsoeatWarning
from isoeat.calibration import (
    AllButTheTop,
    MeanCenterer,
    PCAWhitener,
    RogueStandardizer,
    load_calibrator,
    save_calibrator,
)


def _old_file(tmp_path, cal, name="old.npz", **replace):
    """``cal`` saved, then rewritten as a file from before content hashes (format_version 1) with arrays replaced.

    Such files are loaded with a warning and only their consistency checks (``_check_state``) guard them.
    """
    p = save_calibrator(cal, tmp_path / "fitted.npz")
    with np.load(p) as npz:
        arrays = {k: npz[k] for k in npz.files if k != "content_sha256"}
    meta = json.loads(str(arrays["metadata_json"]))
    meta["format_version"] = 1
    arrays["metadata_json"] = np.array(json.dumps(meta))
    arrays.update(replace)
    out = tmp_path / name
    np.savez(out, **arrays)
    return out


def _load_old(path):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*saved before isoeat recorded content hashes.*")
        return load_calibrator(path)


# ---------------------------------------------------------------------------
# center
# ---------------------------------------------------------------------------


def test_center_needs_one_reference_vector_and_one_is_enough():
    with pytest.raises(DataFormatError, match="need at least 1 sample"):
        MeanCenterer().fit(np.zeros((0, 3)))
    c = MeanCenterer().fit(np.array([[1.0, -2.0, 4.0]]))
    np.testing.assert_array_equal(c.mean_, [1.0, -2.0, 4.0])
    np.testing.assert_array_equal(c.transform([[2.0, 0.0, 4.0]]), [[1.0, 2.0, 0.0]])
    assert c.n_samples_seen_ == 1


def test_center_fit_batches_needs_one_vector_and_one_is_enough():
    with pytest.raises(DataFormatError, match="need at least 1 vectors, got 0"):
        MeanCenterer().fit_batches([])
    with pytest.raises(DataFormatError, match="need at least 1 vectors, got 0"):
        MeanCenterer().fit_batches([np.zeros((0, 2))])
    c = MeanCenterer().fit_batches([np.array([3.0, 5.0])])
    np.testing.assert_array_equal(c.mean_, [3.0, 5.0])
    assert (c.n_samples_seen_, c.n_features_in_) == (1, 2)


# ---------------------------------------------------------------------------
# pca-whiten
# ---------------------------------------------------------------------------


def test_pca_eps_zero_refuses_an_exact_zero_eigenvalue_only():
    # second column constant: covariance diag(1, 0) exactly (n = 3 > d = 2: no singular-sample warning)
    X = np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ConfigError, match="pca-whiten: eps=0 but the covariance has a zero eigenvalue"):
            PCAWhitener(eps=0).fit(X)
        # eps > 0 carries the zero direction: W = U diag(1/sqrt(1 + eps), 1/sqrt(eps)), U = I here
        w = PCAWhitener(eps=1e-3).fit(X)
        np.testing.assert_allclose(np.abs(w.whitening_), np.diag([1 / np.sqrt(1.001), 1 / np.sqrt(1e-3)]),
                                   atol=1e-15)
        # eps = 0 with a full-rank covariance diag(1/4, 1/9) (all eigenvalues < 1): W = diag(2, 3)
        Y = np.array([[0.5, 0.0], [-0.5, 0.0], [0.0, 1 / 3], [0.0, -1 / 3]]) * np.sqrt(1.5)
        w = PCAWhitener(eps=0).fit(Y)
        np.testing.assert_allclose(np.sort(np.abs(w.whitening_).sum(axis=0)), [2.0, 3.0], rtol=1e-12)


# ---------------------------------------------------------------------------
# abtt
# ---------------------------------------------------------------------------


def test_abtt_default_for_one_dimension_removes_nothing():
    # max(1, round(1/100)) = 1 but D < d = 1 forces D = 0: only the mean is removed
    X = np.array([[1.0], [2.0], [6.0]])
    a = AllButTheTop().fit(X)
    assert a.n_components_ == 0 and a.components_.shape == (0, 1)
    np.testing.assert_allclose(a.transform([[4.0], [0.0]]), [[1.0], [-3.0]])


def test_abtt_one_component_removes_the_top_direction():
    # four points with covariance (n-1) diag(9, 1) exactly and mean (1, 2): the top direction is e1
    a_, b_ = np.sqrt(1.5 * 9.0), np.sqrt(1.5 * 1.0)
    X = np.array([[a_, 0.0], [-a_, 0.0], [0.0, b_], [0.0, -b_]]) + [1.0, 2.0]
    a = AllButTheTop(n_components=1).fit(X)
    np.testing.assert_allclose(np.abs(a.components_), [[1.0, 0.0]], atol=1e-15)
    np.testing.assert_allclose(a.explained_variance_, [9.0], rtol=1e-12)
    # x - mu = (4, 3) - (1, 2) = (3, 1); removing e1 leaves (0, 1)
    np.testing.assert_allclose(a.transform([[4.0, 3.0]]), [[0.0, 1.0]], atol=1e-12)


def _abtt_fitted(D, d=3):
    X = np.random.default_rng(0).normal(size=(40, d)) * np.arange(d, 0, -1)
    return AllButTheTop(n_components=D).fit(X)


def test_abtt_file_with_no_component_stored_flat_loads(tmp_path):
    a = AllButTheTop(n_components=0).fit(np.random.default_rng(1).normal(size=(20, 3)))
    back = _load_old(_old_file(tmp_path, a, components_=np.zeros(0)))  # shape (0,) rather than (0, 3)
    assert back.components_.shape == (0, 3) and back.n_components_ == 0
    np.testing.assert_allclose(back.transform([[1.0, 2.0, 3.0]]), [[1.0, 2.0, 3.0] - a.mean_])


def test_abtt_file_removing_every_dimension_is_refused(tmp_path):
    a = AllButTheTop().fit(np.random.default_rng(1).normal(size=(20, 2)))  # n_components None
    p = _old_file(tmp_path, a, components_=np.eye(2), explained_variance_=np.array([2.0, 1.0]))
    with pytest.raises(DataFormatError, match="2 removed components for dimension 2"):
        _load_old(p)
    # one dimension less is fine
    p = _old_file(tmp_path, a, name="ok.npz", components_=np.eye(2)[:1], explained_variance_=np.array([2.0]))
    assert _load_old(p).n_components_ == 1


@pytest.mark.parametrize("delta, ok", [(0.7e-8, True), (1.3e-8, False)])
def test_abtt_orthonormality_tolerance_is_1e_8(tmp_path, delta, ok):
    # rows u1 = e1, u2 = (delta, sqrt(1 - delta^2), 0): unit norm, u1 . u2 = delta (off-diagonal: atol only)
    C = np.array([[1.0, 0.0, 0.0], [delta, np.sqrt(1 - delta * delta), 0.0]])
    p = _old_file(tmp_path, _abtt_fitted(2), components_=C)
    if ok:
        np.testing.assert_array_equal(_load_old(p).components_, C)
    else:
        with pytest.raises(DataFormatError, match="not orthonormal"):
            _load_old(p)


# ---------------------------------------------------------------------------
# rogue-standardize
# ---------------------------------------------------------------------------


def test_rogue_two_samples_are_enough_one_is_not():
    with pytest.raises(DataFormatError, match="need at least 2 samples .* got 1"):
        RogueStandardizer().fit(np.array([[1.0, 4.0]]))
    r = RogueStandardizer().fit(np.array([[1.0, 4.0], [3.0, 10.0]]))
    # mean (2, 7); sd (n-1) = |x1 - x2| / sqrt(2) = (sqrt(2), 3 sqrt(2))
    np.testing.assert_allclose(r.mean_, [2.0, 7.0])
    np.testing.assert_allclose(r.scale_, [np.sqrt(2.0), 3 * np.sqrt(2.0)], rtol=1e-15)


def test_rogue_constant_dimension_is_only_centred():
    X = np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0]])  # second column constant: sd exactly 0
    with pytest.warns(IsoeatWarning, match="1 dimension\\(s\\) are constant"):
        r = RogueStandardizer().fit(X)
    np.testing.assert_array_equal(r.scale_, [1.0, 1.0])  # sd of (1, 2, 3) is 1; the constant one keeps 1
    np.testing.assert_array_equal(r.transform([[4.0, 7.0]]), [[2.0, 2.0]])


def test_rogue_loaded_scale_must_be_positive(tmp_path):
    # sd (0.5, 0.25) < 1: a file of small, positive scales loads as it was saved
    X = np.array([[0.0, 0.0], [0.5, 0.25], [1.0, 0.5]])
    r = RogueStandardizer().fit(X)
    back = load_calibrator(save_calibrator(r, tmp_path / "r.npz"))
    np.testing.assert_allclose(back.scale_, [0.5, 0.25], rtol=1e-15)
    for bad in ([0.5, 0.0], [0.5, -1.0]):
        with pytest.raises(DataFormatError, match="scale_ has non-positive entries"):
            _load_old(_old_file(tmp_path, r, scale_=np.array(bad)))
    assert _load_old(_old_file(tmp_path, r, scale_=np.array([0.5, 1e-300]))).scale_[1] == 1e-300


# ---------------------------------------------------------------------------
# zca-shrinkage
# ---------------------------------------------------------------------------


def _diag_cloud(var_a: float, var_b: float) -> np.ndarray:
    """Four 2-D points, mean 0, covariance (n-1) diag(var_a, var_b) (exactly zero off the diagonal)."""
    a, b = np.sqrt(1.5 * var_a), np.sqrt(1.5 * var_b)  # 2 a^2 / 3 = var_a
    return np.array([[a, 0.0], [-a, 0.0], [0.0, b], [0.0, -b]])


def test_ledoit_wolf_of_an_isotropic_sample_is_0():
    # S (1/n) = diag(1/2, 1/2) = mean eigenvalue times I: delta^2 = ||S - I/2||^2 = 0 and rho is 0 by definition
    from isoeat.calibration.alternatives import ledoit_wolf_shrinkage

    assert ledoit_wolf_shrinkage(np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])) == 0.0


def test_ledoit_wolf_small_delta_is_not_cut_to_0():
    # S = diag(0.5, 0.125): mu = 0.3125, delta^2 = ((0.1875)^2 + (0.1875)^2) / 2 = 0.03515625 (< 1);
    # sum ||x||^4 = 2 + 2 * 0.0625 = 2.125, ||S||_F^2 = 0.265625, beta^2 = (2.125 - 4 * 0.265625) / 32
    # = 0.033203125 < delta^2: rho = 0.033203125 / 0.03515625 = 17 / 18
    from isoeat.calibration.alternatives import ledoit_wolf_shrinkage

    Xc = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.5], [0.0, -0.5]])
    assert ledoit_wolf_shrinkage(Xc) == pytest.approx(17 / 18, rel=1e-14)


def test_shrinkage_0_is_zca_and_keeps_its_singular_checks():
    from isoeat.calibration import ShrinkageZCAWhitener

    rng = np.random.default_rng(3)
    X3 = rng.normal(size=(3, 3))  # n = d
    with pytest.warns(IsoeatWarning, match="zca-shrinkage: only 3 reference vectors for dimension 3"):
        ShrinkageZCAWhitener(shrinkage=0).fit(X3)
    with pytest.warns(IsoeatWarning), pytest.raises(ConfigError, match="singular"):
        ShrinkageZCAWhitener(eps=0, shrinkage=0).fit(X3)
    # any rho > 0 (1 included) makes the shrunk covariance regular: no warning, eps = 0 allowed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for rho in (0.5, 1.0):
            w = ShrinkageZCAWhitener(eps=0, shrinkage=rho).fit(X3)
            S = np.cov(X3, rowvar=False)
            target = (1 - rho) * S + rho * np.trace(S) / 3 * np.eye(3)
            np.testing.assert_allclose(w.whitening_ @ target @ w.whitening_, np.eye(3), atol=1e-9)


def test_shrinkage_eps_zero_refuses_an_exact_zero_eigenvalue_only():
    from isoeat.calibration import ShrinkageZCAWhitener

    X = np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0]])  # covariance diag(1, 0) exactly, n > d
    with pytest.raises(ConfigError, match="zca-shrinkage: eps=0 but the shrunk covariance has a zero eigenvalue"):
        ShrinkageZCAWhitener(eps=0, shrinkage=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # rho = 1/2: shrunk eigenvalues 0.5 * (1, 0) + 0.5 * 0.5 = (0.75, 0.25)
        w = ShrinkageZCAWhitener(eps=0, shrinkage=0.5).fit(X)
        np.testing.assert_allclose(np.sort(w.eigenvalues_), [0.25, 0.75], rtol=1e-14)
        w = ShrinkageZCAWhitener(eps=1e-3, shrinkage=0).fit(X)
        np.testing.assert_allclose(np.sort(np.diag(w.whitening_)), [1 / np.sqrt(1.001), 1 / np.sqrt(1e-3)])


@pytest.mark.parametrize("rho", [0.0, 0.7, 1.0])
def test_shrinkage_files_at_the_ends_of_0_1_load(tmp_path, rho):
    from isoeat.calibration import ShrinkageZCAWhitener

    w = ShrinkageZCAWhitener(shrinkage=rho).fit(_diag_cloud(4.0, 9.0))
    back = load_calibrator(save_calibrator(w, tmp_path / "s.npz"))
    assert back.shrinkage_ == rho


@pytest.mark.parametrize("rho", [-0.1, 1.1])
def test_shrinkage_files_outside_0_1_are_refused(tmp_path, rho):
    from isoeat.calibration import ShrinkageZCAWhitener

    w = ShrinkageZCAWhitener(shrinkage=0.5).fit(_diag_cloud(4.0, 9.0))
    with pytest.raises(DataFormatError, match=r"shrinkage_ .* outside \[0, 1\]"):
        _load_old(_old_file(tmp_path, w, shrinkage_=np.array(rho)))


def _tampered_shrinkage_cov(tmp_path, var_a, var_b, i, j, delta):
    """A shrinkage-0 whitener whose saved covariance entry (i, j) moved by ``delta`` (eigendecomposition kept)."""
    from isoeat.calibration import ShrinkageZCAWhitener

    w = ShrinkageZCAWhitener(shrinkage=0).fit(_diag_cloud(var_a, var_b))
    cov = w.covariance_.copy()
    assert cov[0, 1] == 0.0
    cov[i, j] += delta
    return _load_old(_old_file(tmp_path, w, covariance_=cov))


def test_shrinkage_eigendecomposition_tolerance_absolute_part(tmp_path):
    # target = covariance = diag(4, 9); off the diagonal only atol = 1e-9 * max(1, 9) = 9e-9 applies
    _tampered_shrinkage_cov(tmp_path, 4.0, 9.0, 0, 1, 8e-9)
    with pytest.raises(DataFormatError, match="inconsistent with the shrunk covariance"):
        _tampered_shrinkage_cov(tmp_path, 4.0, 9.0, 0, 1, 10e-9)
    # target diag(0.01, 0.04): atol = 1e-9 * max(1, 0.04) = 1e-9
    _tampered_shrinkage_cov(tmp_path, 0.01, 0.04, 0, 1, 0.7e-9)
    with pytest.raises(DataFormatError, match="inconsistent with the shrunk covariance"):
        _tampered_shrinkage_cov(tmp_path, 0.01, 0.04, 0, 1, 1.3e-9)


def test_shrinkage_eigendecomposition_tolerance_relative_part(tmp_path):
    # diagonal entry 9: tolerance 9e-9 + 1e-7 * 9 = 9.09e-7
    k = 1
    _tampered_shrinkage_cov(tmp_path, 4.0, 9.0, k, k, 7e-7)
    with pytest.raises(DataFormatError, match="inconsistent with the shrunk covariance"):
        _tampered_shrinkage_cov(tmp_path, 4.0, 9.0, k, k, 11e-7)


# ---------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------


def test_unknown_calibration_suggests_names_at_similarity_0_4_and_above():
    from isoeat.calibration import make_calibrator

    # difflib ratio 2M/T: "zq" vs "zca" = 2 * 1 / 5 = 0.4 (suggested); "qqqqqz" vs "zca" = 2 / 9 (not)
    with pytest.raises(isoeat.UnknownNameError, match="unknown calibration 'zq'; did you mean zca\\?"):
        make_calibrator("zq")
    with pytest.raises(isoeat.UnknownNameError, match=r"unknown calibration 'qqqqqz' \(known: none, zca"):
        make_calibrator("qqqqqz")


def test_register_calibrator_needs_a_name_and_is_idempotent():
    from isoeat.calibration import CALIBRATORS, register_calibrator

    for bad in ("", 5, None):
        cls = type("Bad", (), {} if bad is None else {"name": bad})
        with pytest.raises(ConfigError, match="has no 'name' class attribute"):
            register_calibrator(cls)
    before = CALIBRATORS.names()
    assert register_calibrator(MeanCenterer) is MeanCenterer  # the same class again: a no-op
    assert CALIBRATORS.names() == before
    with pytest.raises(ConfigError, match="'center' is already registered"):
        register_calibrator(type("Other", (), {"name": "center"}))


class _VectorModel:
    """A model that only hands out reference vectors (as static models do), recording what was asked."""

    name, fingerprint = "fake", "f00"

    def __init__(self, X):
        self.X, self.dim, self.asked = np.asarray(X, dtype=float), np.shape(X)[1], []

    def reference_vectors(self, n, **kw):
        self.asked.append(("vectors", n, kw))
        return self.X[:n], f"first {min(n, len(self.X))} rows"


class _BatchModel(_VectorModel):
    def reference_batches(self, n, **kw):
        self.asked.append(("batches", n, kw))
        return iter([self.X[:3], self.X[3:n]]), "two batches"


class _StatsModel(_VectorModel):
    def reference_statistics(self, n, **kw):
        from isoeat.calibration.moments import CovarianceAccumulator

        self.asked.append(("statistics", n, kw))
        return CovarianceAccumulator().update(self.X[:n]), "merged statistics"


def _seven_by_three():
    return np.random.default_rng(5).normal(size=(7, 3)) + [1.0, -2.0, 0.5]


def test_fit_calibrator_reads_100000_reference_vectors_by_default_and_records_n_and_dim():
    from isoeat.calibration import fit_calibrator

    X = _seven_by_three()
    m = _VectorModel(X)
    cal = fit_calibrator(m, "center")
    assert m.asked == [("vectors", 100_000, {})]
    assert (cal.metadata_["n"], cal.metadata_["dim"]) == (7, 3)  # n x d of the vectors, not the other way round
    assert cal.metadata_["reference"] == "first 7 rows" and cal.metadata_["model_fingerprint"] == "f00"
    np.testing.assert_allclose(cal.mean_, X.mean(axis=0))
    m = _VectorModel(X)
    fit_calibrator(m, "center", n_reference=5, reference_kwargs={"text": "t.txt"})
    assert m.asked == [("vectors", 5, {"text": "t.txt"})]


def test_fit_calibrator_streams_batches_and_statistics_without_kwargs():
    from isoeat.calibration import fit_calibrator

    X = _seven_by_three()
    m = _BatchModel(X)
    cal = fit_calibrator(m, "rogue-standardize")
    assert m.asked == [("batches", 100_000, {})]
    assert (cal.metadata_["n"], cal.metadata_["dim"]) == (7, 3)
    np.testing.assert_allclose(cal.scale_, X.std(axis=0, ddof=1), rtol=1e-12)
    m = _StatsModel(X)
    cal = fit_calibrator(m, "zca")  # ZCA can be built from merged statistics
    assert m.asked == [("statistics", 100_000, {})]
    assert (cal.metadata_["n"], cal.metadata_["dim"], cal.metadata_["reference"]) == (7, 3, "merged statistics")
    np.testing.assert_allclose(cal.covariance_, np.cov(X, rowvar=False), rtol=1e-12)
    m = _StatsModel(X)
    cal = fit_calibrator(m, "center")  # no from_statistics: the model's reference vectors are used
    assert m.asked == [("vectors", 100_000, {})] and cal.metadata_["reference"] == "first 7 rows"


def test_shrinkage_default_eps_is_1e_3():
    from isoeat.calibration import ShrinkageZCAWhitener

    assert ShrinkageZCAWhitener().get_params() == {"eps": 1e-3, "shrinkage": None, "eps_mode": "absolute"}
    # rho = 0 on covariance diag(4, 9): W = diag(1 / sqrt(4 + 1e-3), 1 / sqrt(9 + 1e-3))
    w = ShrinkageZCAWhitener(shrinkage=0).fit(_diag_cloud(4.0, 9.0))
    assert w.eps_ == 1e-3
    np.testing.assert_allclose(np.diag(w.whitening_), [1 / np.sqrt(4.001), 1 / np.sqrt(9.001)], rtol=1e-12)


# ---------------------------------------------------------------------------
# _base: streamed moments, the fitted-state check, the dimension hook
# ---------------------------------------------------------------------------


def _lw_from_scratch(X):
    """Ledoit & Wolf (2004) rho from the definitions: S = (1/n) sum x x^T on centred rows, ||A||^2 = tr(A A^T) / d,
    delta^2 = ||S - mu I||^2, beta^2 = (1/n^2) sum_k ||x_k x_k^T - S||^2, rho = min(beta^2, delta^2) / delta^2."""
    Xc = X - X.mean(axis=0)
    n, d = Xc.shape
    S = Xc.T @ Xc / n
    mu = np.trace(S) / d
    delta2 = np.sum((S - mu * np.eye(d)) ** 2) / d
    beta2 = sum(np.sum((np.outer(x, x) - S) ** 2) / d for x in Xc) / n**2
    return min(beta2, delta2) / delta2


def test_streamed_ledoit_wolf_matches_the_definition_on_a_small_sample():
    from isoeat.calibration import ShrinkageZCAWhitener

    # six 2-D rows far from the first batch's mean (the shift of the fourth-moment sums): every term counts
    X = np.array([[1.0, 2.0], [3.0, 1.0], [10.0, -4.0], [12.0, -1.0], [9.0, -3.0], [14.0, -6.0]])
    rho = _lw_from_scratch(X)
    assert 0.05 < rho < 0.95  # not capped at either end
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # an empty leading batch, a single row given as a 1-D vector, then the rest
        w = ShrinkageZCAWhitener().fit_batches([np.zeros((0, 2)), X[0], X[1:2], X[2:]])
    assert w.shrinkage_ == pytest.approx(rho, rel=1e-12)
    assert ShrinkageZCAWhitener().fit(X).shrinkage_ == pytest.approx(rho, rel=1e-12)


@pytest.mark.parametrize("bad", [np.float64(5.0), np.ones((2, 2, 2))])
def test_batches_must_be_rows(bad):
    from isoeat.calibration import ShrinkageZCAWhitener

    for cal in (PCAWhitener(), ShrinkageZCAWhitener()):
        with pytest.raises(DataFormatError, match=r"batch must be a 2-D array \(rows, dim\), got shape"):
            cal.fit_batches([np.ones((3, 2)), bad])


def test_batch_fits_need_two_vectors_and_two_are_enough():
    X = np.array([[1.0, 4.0], [3.0, 10.0]])
    with pytest.raises(DataFormatError, match="need at least 2 vectors, got 1"):
        RogueStandardizer().fit_batches([X[:1]])
    r = RogueStandardizer().fit_batches([X[:1], X[1:]])
    np.testing.assert_allclose(r.scale_, [np.sqrt(2.0), 3 * np.sqrt(2.0)], rtol=1e-15)


def test_huge_finite_vectors_stream_without_overflow_warnings():
    # |x| ~ 1e80: the covariance (~1e160) is finite, a fourth moment (~1e320) is not; only Ledoit-Wolf needs one
    X = np.random.default_rng(0).normal(size=(10, 3)) * 1e80
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for cal in (MeanCenterer(), PCAWhitener(), AllButTheTop(n_components=1), RogueStandardizer()):
            cal.fit_batches([X[:5], X[5:]])
            assert cal.n_samples_seen_ == 10


def test_partly_fitted_state_is_not_fitted():
    for cal in (PCAWhitener().fit(_diag_cloud(4.0, 9.0)), AllButTheTop(n_components=1).fit(_diag_cloud(4.0, 9.0))):
        del cal.n_features_in_  # the arrays are there, the fitted dimension is not
        with pytest.raises(isoeat.NotFittedError, match="is not fitted yet"):
            cal.transform([[1.0, 2.0]])
    cal = PCAWhitener()
    cal.n_features_in_ = 2  # the dimension is there, the arrays are not
    with pytest.raises(isoeat.NotFittedError, match="is not fitted yet"):
        cal.transform([[1.0, 2.0]])


def test_abtt_components_are_checked_against_the_dimension_not_the_sample_size():
    X = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0]])  # n = 2 rows of dimension d = 3: D = 2 < d is allowed
    a = AllButTheTop(n_components=2).fit(X)
    assert a.n_components_ == 2
    with pytest.raises(ConfigError, match=r"smaller than the dimension 3 \(allowed 0..2\), got 3"):
        AllButTheTop(n_components=3).fit(np.random.default_rng(0).normal(size=(10, 3)))


# ---------------------------------------------------------------------------
# io: saving, the content record, the header checks, compatibility
# ---------------------------------------------------------------------------


def _npz_members(path):
    with np.load(path) as npz:
        return {k: npz[k] for k in npz.files}


def test_save_appends_npz_and_refuses_unfitted(tmp_path):
    from isoeat import ZCAWhitener

    with pytest.raises(ConfigError, match="cannot save an unfitted calibrator"):
        save_calibrator(ZCAWhitener(), tmp_path / "w.npz")
    c = MeanCenterer().fit(np.ones((2, 2)))
    assert save_calibrator(c, tmp_path / "c") == tmp_path / "c.npz" and (tmp_path / "c.npz").is_file()
    assert save_calibrator(c, tmp_path / "c.bin") == tmp_path / "c.bin.npz"
    assert save_calibrator(c, tmp_path / "d.npz") == tmp_path / "d.npz" and not (tmp_path / "d.npz.npz").exists()


def test_saved_records_are_canonical_json_of_format_version_2(tmp_path):
    from isoeat.calibration import fit_calibrator

    cal = fit_calibrator(_VectorModel(_seven_by_three()), "zca")  # provenance keys in insertion order
    members = _npz_members(save_calibrator(cal, tmp_path / "z.npz"))
    meta_json, record = str(members["metadata_json"]), str(members["content_sha256"])
    # canonical JSON (isoeat._records: keys sorted, compact): the bytes do not depend on the order attributes were set
    canonical = dict(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert meta_json == json.dumps(json.loads(meta_json), **canonical)
    assert record == json.dumps(json.loads(record), **canonical)
    assert list(json.loads(record)["arrays"]) == sorted(cal._state_arrays)
    meta = json.loads(meta_json)
    assert (meta["format"], meta["format_version"]) == ("isoeat-calibrator", 2)
    # provenance from metadata_ travels with the file
    back = load_calibrator(tmp_path / "z.npz")
    assert back.metadata_["model_fingerprint"] == "f00" and back.metadata_["reference"] == "first 7 rows"


def test_a_version_2_file_without_its_record_is_refused(tmp_path):
    p = save_calibrator(MeanCenterer().fit(np.ones((2, 2))), tmp_path / "c.npz")
    members = _npz_members(p)
    del members["content_sha256"]
    meta = json.loads(str(members["metadata_json"]))
    meta["format_version"] = 2
    members["metadata_json"] = np.array(json.dumps(meta))
    np.savez(tmp_path / "stripped.npz", **members)
    with pytest.raises(DataFormatError, match="content hash record .* is missing though format_version is 2"):
        load_calibrator(tmp_path / "stripped.npz")


def test_calibrator_digest_does_not_depend_on_the_order_of_parameters():
    from isoeat.calibration import calibrator_digest

    class Ordered(MeanCenterer):
        order = ("a", "b")

        def get_params(self, deep=True):
            return {k: {"a": 1, "b": 2}[k] for k in self.order}

    one, two = Ordered().fit(np.ones((2, 2))), Ordered().fit(np.ones((2, 2)))
    two.order = ("b", "a")
    assert calibrator_digest(one) == calibrator_digest(two)


@pytest.mark.parametrize("dim, ok", [(0, False), (1, True), (100_000, True), (100_001, False)])
def test_plausible_dimensions_are_1_to_100000(tmp_path, dim, ok):
    c = MeanCenterer().fit(np.zeros((1, dim)))
    p = save_calibrator(c, tmp_path / "c.npz")
    if ok:
        assert load_calibrator(p).mean_.shape == (dim,)
    else:
        with pytest.raises(DataFormatError, match=f"(metadata gives dimension {dim}, not a plausible|metadata field 'dim' must be a positive integer, got {dim})"):
            load_calibrator(p)


def _center_file_with_mean(tmp_path, mean):
    """A hashed center file for dimension 2 whose mean_ was replaced (the record is left as saved)."""
    p = save_calibrator(MeanCenterer().fit(np.ones((2, 2))), tmp_path / "c.npz")
    members = _npz_members(p)
    members["mean_"] = mean
    np.savez(tmp_path / "t.npz", **members)
    return tmp_path / "t.npz"


@pytest.mark.parametrize("mean", [np.ones((2, 2, 2)), np.ones((1, 1, 1)), np.array([b"x" * 17] * 2, dtype="S17"),
                                  np.ones((3,))])
def test_headers_beyond_a_calibrator_are_refused_before_loading(tmp_path, mean):
    # more than 2 axes (even small ones), an item of more than 16 bytes, or an axis longer than the dimension
    with pytest.raises(DataFormatError, match=r"(mean_ announces shape .* refused before loading|metadata field 'dim' is 2, but mean_ has shape)"):
        load_calibrator(_center_file_with_mean(tmp_path, mean))


@pytest.mark.parametrize("mean", [np.ones((2,), dtype=np.complex128), np.ones((2, 2))])
def test_headers_within_bounds_are_read_and_then_verified(tmp_path, mean):
    # 16-byte items and two axes of at most the dimension pass the header check; the content hash then refuses them
    # (a second axis is now refused first by the metadata check: dim 2 is not the shape (2, 2))
    with pytest.raises(DataFormatError, match="(mean_ do not match the content hash|metadata field 'dim' is 2, but "
                                              "mean_ has shape)"):
        load_calibrator(_center_file_with_mean(tmp_path, mean))


def test_object_arrays_are_never_unpickled(tmp_path):
    p = save_calibrator(MeanCenterer().fit(np.ones((2, 2))), tmp_path / "c.npz")
    members = _npz_members(p)
    members["metadata_json"] = np.array(str(members["metadata_json"]), dtype=object)  # a pickled str
    np.savez(tmp_path / "pickled.npz", **members)
    with pytest.raises(DataFormatError, match="never contain pickles"):
        load_calibrator(tmp_path / "pickled.npz")


def test_check_compatible_compares_fingerprints_unless_forced():
    from isoeat import FingerprintMismatchError
    from isoeat.calibration import check_compatible, fit_calibrator

    cal = fit_calibrator(_VectorModel(_seven_by_three()), "center")  # fingerprint "f00"
    same = _VectorModel(_seven_by_three())
    check_compatible(cal, same)
    other = _VectorModel(_seven_by_three())
    other.fingerprint = "f01"
    with pytest.raises(FingerprintMismatchError, match="fingerprint f00.*fingerprint f01"):
        check_compatible(cal, other)
    check_compatible(cal, other, force=True)


def test_fit_whitener_defaults():
    from isoeat.calibration import fit_whitener

    m = _VectorModel(_seven_by_three())
    with pytest.warns(DeprecationWarning, match="fit_whitener is deprecated; use fit_calibrator"):
        w = fit_whitener(m)
    assert m.asked == [("vectors", 100_000, {})] and w.eps == 1e-3 and w.metadata_["eps"] == 1e-3
    m = _VectorModel(_seven_by_three())
    with pytest.warns(DeprecationWarning):
        fit_whitener(m, n_reference=6, eps=0.5, text="t.txt")
    assert m.asked == [("vectors", 6, {"text": "t.txt"})]


def test_eigenvector_signs_make_the_largest_component_positive():
    from isoeat.calibration import ShrinkageZCAWhitener

    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 4)) @ rng.normal(size=(4, 4))
    # precondition: numpy's own eigenvectors (descending order) have a column whose largest entry is negative
    U = np.linalg.eigh(np.cov(X, rowvar=False))[1][:, ::-1]
    assert (U[np.argmax(np.abs(U), axis=0), np.arange(4)] < 0).any()

    def largest_entries(cols):
        return cols[np.argmax(np.abs(cols), axis=0), np.arange(cols.shape[1])]

    for V in (PCAWhitener().fit(X).eigenvectors_, ShrinkageZCAWhitener().fit(X).eigenvectors_,
              AllButTheTop(n_components=3).fit(X).components_.T):
        assert (largest_entries(V) > 0).all()
        np.testing.assert_allclose(np.abs(V), np.abs(U[:, :V.shape[1]]), atol=1e-10)  # same vectors up to sign
