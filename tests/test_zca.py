"""ZCA whitening: formulas of paper eq. 7-11, contract, save/load."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import isoeat
from isoeat import (
    DataFormatError,
    DimensionMismatchError,
    FingerprintMismatchError,
    IsoeatWarning,
    NotFittedError,
    ZCAWhitener,
)
from isoeat.calibration import check_compatible


def _cloud(rng, n=2000, d=6):
    A = rng.normal(size=(d, d))
    return rng.normal(size=(n, d)) @ A + rng.normal(size=d) * 3


def test_whitened_covariance_is_identity_up_to_eps_shrinkage(rng):
    X = _cloud(rng)
    for eps in (0.0, 1e-3, 0.5):
        w = ZCAWhitener(eps=eps).fit(X)
        Z = w.transform(X)
        cov = np.cov(Z, rowvar=False)  # n-1, as eq. 7
        lam, U = w.eigenvalues_, w.eigenvectors_
        np.testing.assert_allclose(cov, (U * (lam / (lam + eps))) @ U.T, atol=1e-10)
        np.testing.assert_allclose(cov, w.whitened_covariance(), atol=1e-10)
        np.testing.assert_allclose(Z.mean(axis=0), 0, atol=1e-10)
    np.testing.assert_allclose(np.cov(ZCAWhitener(eps=0).fit_transform(X), rowvar=False), np.eye(6), atol=1e-10)


def test_matches_independent_matrix_power(rng):
    from scipy.linalg import fractional_matrix_power

    X = _cloud(rng)
    w = ZCAWhitener(eps=1e-3).fit(X)
    S = np.cov(X, rowvar=False)
    W = np.real(fractional_matrix_power(S + 1e-3 * np.eye(6), -0.5))
    np.testing.assert_allclose(w.whitening_, W, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(w.whitening_, w.whitening_.T, atol=1e-14)  # symmetric (zero-phase)
    np.testing.assert_allclose(w.mean_, X.mean(axis=0))


def test_zca_is_the_whitening_closest_to_identity(rng):
    # Kessy et al. (2018): among whitening matrices ZCA minimises E||z - x||^2 (centred data, unit scale).
    X = _cloud(rng, d=4)
    X = (X - X.mean(0)) / X.std(0)
    w = ZCAWhitener(eps=0).fit(X)
    Z = w.transform(X)
    pca = X @ (w.eigenvectors_ / np.sqrt(w.eigenvalues_))  # PCA whitening: also identity covariance
    assert np.mean((Z - X) ** 2) < np.mean((pca - X) ** 2)


def test_inverse_transform_roundtrip(rng):
    X = _cloud(rng)
    w = ZCAWhitener().fit(X)
    np.testing.assert_allclose(w.inverse_transform(w.transform(X[:50])), X[:50], atol=1e-9)


def test_contract(rng):
    w = ZCAWhitener(eps=0.01)
    assert w.get_params() == {"eps": 0.01, "eps_mode": "absolute"} and not hasattr(w, "mean_")  # __init__ only stores
    assert w.fit(_cloud(rng)) is w
    assert w.n_samples_seen_ == 2000 and w.n_features_in_ == 6
    with pytest.raises(NotFittedError):
        ZCAWhitener().transform(np.ones((2, 6)))
    with pytest.raises(DimensionMismatchError, match="dimension 5.*dimension 6"):
        w.transform(np.ones((2, 5)))
    with pytest.raises(isoeat.ConfigError, match="eps must be"):
        ZCAWhitener(eps=-1).fit(np.ones((3, 2)))


def test_few_reference_vectors_warns(rng):
    with pytest.warns(IsoeatWarning, match="eps=0.001 carries the fit"):
        ZCAWhitener().fit(rng.normal(size=(4, 10)))


def test_save_load_roundtrip(tmp_path, glove):
    w = isoeat.fit_calibrator(glove, "zca", n_reference=5000)
    p = isoeat.save_whitener(w, tmp_path / "w.npz")
    w2 = isoeat.load_whitener(p)
    for k in ("mean_", "whitening_", "eigenvalues_", "eigenvectors_"):
        np.testing.assert_array_equal(getattr(w, k), getattr(w2, k))
    assert w2.metadata_["model_fingerprint"] == glove.fingerprint
    assert w2.metadata_["n"] == 5000 and w2.metadata_["dim"] == 50 and w2.metadata_["eps"] == 1e-3
    assert "top 5000" in w2.metadata_["reference"]
    check_compatible(w2, glove)


def test_refuses_other_model_and_dimension(tmp_path, glove):
    w = isoeat.fit_calibrator(glove, "zca", n_reference=2000)
    other = isoeat.StaticVectors(list(glove.words[:3000]), np.asarray(glove.vectors[:3000]) * 2, name="other")
    with pytest.raises(FingerprintMismatchError, match="force=True"):
        check_compatible(w, other)
    check_compatible(w, other, force=True)
    small = isoeat.StaticVectors(["a", "b"], np.eye(2), name="small")
    with pytest.raises(DimensionMismatchError, match="dimension 50"):
        check_compatible(w, small, force=True)


def test_tampered_and_pickled_files_refused(tmp_path, rng):
    w = ZCAWhitener().fit(_cloud(rng))
    p = isoeat.save_whitener(w, tmp_path / "w.npz")
    with np.load(p) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["whitening_"] = arrays["whitening_"] * 1.01
    np.savez(tmp_path / "t.npz", **arrays)
    with pytest.raises(DataFormatError, match="tampered"):
        isoeat.load_whitener(tmp_path / "t.npz")
    arrays["metadata_json"] = np.array([{"evil": 1}], dtype=object)
    np.savez(tmp_path / "pk.npz", **arrays)
    with pytest.raises(DataFormatError, match="pickle"):
        isoeat.load_whitener(tmp_path / "pk.npz")
    np.savez(tmp_path / "m.npz", mean_=np.zeros(3))
    with pytest.raises(DataFormatError, match="not an isoeat calibrator"):
        isoeat.load_whitener(tmp_path / "m.npz")


def test_glove_reference_anisotropy_removed(glove, glove_zca):
    # Raw GloVe reference vectors share a mean direction; whitened they are centred with covariance ~ I.
    X, _ = glove.reference_vectors(100_000)
    Z = glove_zca.transform(X)
    assert np.linalg.norm(X.mean(0)) > 0.1
    np.testing.assert_allclose(Z.mean(0), 0, atol=1e-9)
    cov = np.cov(Z, rowvar=False)
    lam = glove_zca.eigenvalues_
    np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(cov))[::-1], lam / (lam + 1e-3), atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.all(lam > 0)
