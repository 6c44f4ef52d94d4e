"""Alternative calibrations (center, pca-whiten, zca-shrinkage, abtt, rogue-standardize): formulas, contract, I/O."""

from __future__ import annotations

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, DataFormatError, DimensionMismatchError, NotFittedError, ZCAWhitener
from isoeat.calibration import (
    AllButTheTop,
    MeanCenterer,
    PCAWhitener,
    RogueStandardizer,
    ShrinkageZCAWhitener,
    calibration_names,
    fit_calibrator,
    load_calibrator,
    make_calibrator,
    save_calibrator,
)
from isoeat.calibration.alternatives import ledoit_wolf_shrinkage
from isoeat.stats.weat import cosine_matrix

ALTERNATIVES = {
    "center": MeanCenterer,
    "pca-whiten": PCAWhitener,
    "zca-shrinkage": ShrinkageZCAWhitener,
    "abtt": AllButTheTop,
    "rogue-standardize": RogueStandardizer,
}
INVERTIBLE = ("center", "pca-whiten", "zca-shrinkage", "rogue-standardize")


def _cloud(rng, n=2000, d=6):
    A = rng.normal(size=(d, d))
    return rng.normal(size=(n, d)) @ A + rng.normal(size=d) * 3


def test_registered_and_selectable():
    names = calibration_names()
    for name, cls in ALTERNATIVES.items():
        assert name in names
        assert type(make_calibrator(name)) is cls
        assert cls.__doc__ and "Reference" in cls.__doc__ or name == "center"


@pytest.mark.parametrize("name", list(ALTERNATIVES))
def test_contract(name, rng):
    cal = make_calibrator(name)
    assert not any(k.endswith("_") and not k.startswith("_") for k in vars(cal))  # __init__ only stores params
    assert cal.set_params(**cal.get_params()) is cal
    with pytest.raises(ConfigError, match="no parameter 'bogus'"):
        cal.set_params(bogus=1)
    with pytest.raises(NotFittedError):
        cal.transform(np.ones((2, 6)))
    X = _cloud(rng)
    assert cal.fit(X) is cal
    assert cal.n_samples_seen_ == 2000 and cal.n_features_in_ == 6 and cal.metadata_ == {}
    with pytest.raises(DimensionMismatchError, match="dimension 5.*dimension 6"):
        cal.transform(np.ones((2, 5)))
    Z = cal.transform(X[:40])
    assert Z.shape == (40, 6) and np.isfinite(Z).all()
    np.testing.assert_allclose(cal.transform(X).mean(axis=0), 0, atol=1e-9)  # all of them centre
    if name in INVERTIBLE:
        np.testing.assert_allclose(cal.inverse_transform(Z), X[:40], atol=1e-9)
    else:  # abtt: pseudo-inverse, exact on the image
        np.testing.assert_allclose(cal.transform(cal.inverse_transform(Z)), Z, atol=1e-9)
    cal._check_state()


@pytest.mark.parametrize("name", list(ALTERNATIVES))
def test_save_load_roundtrip(name, tmp_path, glove):
    cal = fit_calibrator(glove, name, n_reference=5000)
    path = save_calibrator(cal, tmp_path / f"{name}.npz")
    back = load_calibrator(path)
    assert type(back) is type(cal) and back.get_params() == cal.get_params()
    for k in cal._state_arrays:
        np.testing.assert_array_equal(np.asarray(getattr(back, k)), np.asarray(getattr(cal, k)))
    words = glove.lookup(["flower", "insect", "love", "war"]).vectors
    np.testing.assert_array_equal(back.transform(words), cal.transform(words))
    assert back.metadata_["calibration"] == name and back.metadata_["n"] == 5000
    assert back.metadata_["model_fingerprint"] == glove.fingerprint
    isoeat.calibration.check_compatible(back, glove)


@pytest.mark.parametrize("name,array", [("pca-whiten", "whitening_"), ("zca-shrinkage", "whitening_"),
                                        ("abtt", "components_"), ("rogue-standardize", "scale_")])
def test_tampered_files_refused(name, array, tmp_path, rng):
    cal = make_calibrator(name).fit(_cloud(rng))
    p = save_calibrator(cal, tmp_path / "c.npz")
    with np.load(p) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays[array] = arrays[array] * (-1.01 if name == "rogue-standardize" else 1.01)
    np.savez(tmp_path / "t.npz", **arrays)
    with pytest.raises(DataFormatError):
        load_calibrator(tmp_path / "t.npz")


def test_center_is_mean_subtraction(rng):
    X = _cloud(rng)
    Y = rng.normal(size=(7, 6))
    np.testing.assert_allclose(MeanCenterer().fit(X).transform(Y), Y - X.mean(axis=0), atol=1e-12)


def test_abtt_zero_components_is_center(rng, glove):
    X = _cloud(rng)
    np.testing.assert_allclose(AllButTheTop(n_components=0).fit(X).transform(X), MeanCenterer().fit(X).transform(X),
                               atol=1e-12)
    a = fit_calibrator(glove, "abtt", n_reference=20_000, n_components=0)
    c = fit_calibrator(glove, "center", n_reference=20_000)
    for t in ("W6", "W8"):
        assert isoeat.weat(glove, t, calibration=a, rng=0).effect_size == pytest.approx(
            isoeat.weat(glove, t, calibration=c, rng=0).effect_size, abs=1e-12)


def test_abtt_removes_top_components(rng):
    X = _cloud(rng, d=8)
    cal = AllButTheTop(n_components=2).fit(X)
    Xc = X - X.mean(axis=0)
    lam, U = np.linalg.eigh(np.cov(X, rowvar=False))
    top = U[:, ::-1][:, :2]
    np.testing.assert_allclose(cal.transform(X), Xc - Xc @ top @ top.T, atol=1e-9)
    np.testing.assert_allclose(cal.explained_variance_, lam[::-1][:2], rtol=1e-10)
    np.testing.assert_allclose(cal.transform(X) @ top, 0, atol=1e-9)  # nothing left along u1, u2
    assert cal.n_components_ == 2


def test_abtt_default_and_bad_components(rng):
    assert [AllButTheTop.default_components(d) for d in (50, 100, 300, 768, 1024)] == [1, 1, 3, 8, 10]
    assert AllButTheTop().fit(_cloud(rng)).n_components_ == 1
    with pytest.raises(ConfigError, match="n_components.*smaller than the dimension 6.*got 6"):
        AllButTheTop(n_components=6).fit(_cloud(rng))
    with pytest.raises(ConfigError, match="n_components"):
        AllButTheTop(n_components=-1).fit(_cloud(rng))
    with pytest.raises(ConfigError, match="n_components"):
        AllButTheTop(n_components=1.5).fit(_cloud(rng))


def test_pca_whitening_is_a_rotation_of_zca(rng):
    X = _cloud(rng)
    Y = rng.normal(size=(30, 6)) * 3
    for eps in (0.0, 1e-3, 0.3):
        z, p = ZCAWhitener(eps=eps).fit(X), PCAWhitener(eps=eps).fit(X)
        np.testing.assert_allclose(p.transform(Y) @ p.eigenvectors_.T, z.transform(Y), atol=1e-9)
        np.testing.assert_allclose(cosine_matrix(p.transform(Y), p.transform(Y)),
                                   cosine_matrix(z.transform(Y), z.transform(Y)), atol=1e-12)
    np.testing.assert_allclose(np.cov(PCAWhitener(eps=0).fit_transform(X), rowvar=False), np.eye(6), atol=1e-10)


def test_pca_and_zca_give_identical_weat_on_glove(glove, glove_zca):
    pca = fit_calibrator(glove, "pca-whiten", n_reference=100_000, eps=1e-3)
    for i in range(1, 11):
        kw = dict(method="monte-carlo", n_permutations=2000, rng=i)
        a = isoeat.weat(glove, f"W{i}", calibration=glove_zca, **kw)
        b = isoeat.weat(glove, f"W{i}", calibration=pca, **kw)
        assert b.calibration == "pca-whiten"
        assert abs(a.effect_size - b.effect_size) < 1e-10
        assert a.p_value == b.p_value


def test_shrinkage_zca_tends_to_zca(rng):
    X = _cloud(rng, n=300, d=10)
    Y = rng.normal(size=(20, 10))
    ref = ZCAWhitener(eps=1e-3).fit(X).transform(Y)
    np.testing.assert_allclose(ShrinkageZCAWhitener(eps=1e-3, shrinkage=0.0).fit(X).transform(Y), ref, atol=1e-12)
    gaps = [np.abs(ShrinkageZCAWhitener(eps=1e-3, shrinkage=s).fit(X).transform(Y) - ref).max()
            for s in (0.3, 1e-2, 1e-4, 1e-8)]
    assert all(a > b for a, b in zip(gaps, gaps[1:]))
    assert gaps[-1] / gaps[-2] < 2e-4 and gaps[-1] < 1e-6 * np.abs(ref).max() * 10  # O(rho)
    # rho = 1: the shrunk covariance is a multiple of I, so cosines are those of centring
    one = ShrinkageZCAWhitener(eps=1e-3, shrinkage=1.0).fit(X)
    cen = MeanCenterer().fit(X)
    np.testing.assert_allclose(cosine_matrix(one.transform(Y), one.transform(Y)),
                               cosine_matrix(cen.transform(Y), cen.transform(Y)), atol=1e-12)


def test_ledoit_wolf_intensity_matches_the_formula(rng):
    for n, d in ((40, 10), (300, 25), (25, 60)):
        X = _cloud(rng, n=n, d=d)
        Xc = X - X.mean(axis=0)
        S = Xc.T @ Xc / n
        mu = np.trace(S) / d
        delta2 = np.sum((S - mu * np.eye(d)) ** 2) / d
        beta2 = sum(np.sum((np.outer(x, x) - S) ** 2) for x in Xc) / d / n**2
        expect = min(beta2, delta2) / delta2
        assert ledoit_wolf_shrinkage(Xc) == pytest.approx(expect, rel=1e-9)
        fitted = ShrinkageZCAWhitener().fit(X)
        assert fitted.shrinkage_ == pytest.approx(expect, rel=1e-9)
        np.testing.assert_allclose((fitted.eigenvectors_ * fitted.eigenvalues_) @ fitted.eigenvectors_.T,
                                   fitted.shrunk_covariance_, atol=1e-10)
    sk = pytest.importorskip("sklearn.covariance")
    X = _cloud(rng, n=200, d=30)
    assert ledoit_wolf_shrinkage(X - X.mean(0)) == pytest.approx(sk.ledoit_wolf_shrinkage(X), rel=1e-10)


def test_shrinkage_helps_small_reference_samples(glove):
    # With few reference vectors the Ledoit-Wolf intensity is larger than with many.
    small = fit_calibrator(glove, "zca-shrinkage", n_reference=200)
    large = fit_calibrator(glove, "zca-shrinkage", n_reference=100_000)
    assert 0 < large.shrinkage_ < small.shrinkage_ < 1


def test_rogue_standardize_is_per_dimension_z_score(rng):
    X = _cloud(rng) * np.array([1, 10, 100, 1, 1, 0.1])
    cal = RogueStandardizer().fit(X)
    Y = rng.normal(size=(5, 6))
    np.testing.assert_allclose(cal.transform(Y), (Y - X.mean(0)) / X.std(0, ddof=1), atol=1e-12)
    np.testing.assert_allclose(cal.transform(X).std(0, ddof=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("name,params,match", [
    ("pca-whiten", {"eps": -1}, "eps must be"),
    ("zca-shrinkage", {"eps": float("nan")}, "eps must be"),
    ("zca-shrinkage", {"shrinkage": 1.5}, "shrinkage must be None.*got 1.5"),
    ("zca-shrinkage", {"shrinkage": "lw"}, "shrinkage must be"),
])
def test_bad_parameters_named(name, params, match, rng):
    with pytest.raises(ConfigError, match=match):
        make_calibrator(name, **params).fit(_cloud(rng))


def test_run_command_accepts_alternatives(capsys, glove):
    from isoeat.cli import main

    for name in ("abtt", "pca-whiten"):
        assert main(["run", "--calibration", name, "--tests", "W6,W9", "--reference-size", "20000"]) == 0
        out = capsys.readouterr().out
        assert "W6" in out and "W9" in out
    assert main(["run", "--calibration", "abtt", "--calibration-param", "n_components=50", "--tests", "W6"]) == 2
    assert "n_components" in capsys.readouterr().err


@pytest.mark.parametrize("name", list(ALTERNATIVES))
def test_fit_batches_equals_fit(name, rng):
    # streaming fit (contextual encoders stream their reference vectors) gives the same calibrator
    X = _cloud(rng, n=1500, d=7) + 40.0  # a large common offset, as in anisotropic spaces
    whole = make_calibrator(name).fit(X)
    parts = make_calibrator(name).fit_batches(iter([X[:1], X[1:500], X[500:500], X[500:]]))
    assert parts.n_samples_seen_ == 1500 and parts.n_features_in_ == 7
    for k in whole._state_arrays:
        np.testing.assert_allclose(np.asarray(getattr(parts, k)), np.asarray(getattr(whole, k)), rtol=1e-8,
                                   atol=1e-9, err_msg=k)
    Y = rng.normal(size=(5, 7))
    np.testing.assert_allclose(parts.transform(Y), whole.transform(Y), rtol=1e-7, atol=1e-9)


def test_fit_calibrator_streams_for_contextual_encoders(glove):
    class Streaming:
        name, fingerprint, dim = "streaming", "s", glove.dim

        def reference_batches(self, n, **_):
            X = np.asarray(glove.vectors[:n], dtype=np.float64)
            return iter([X[i:i + 700] for i in range(0, n, 700)]), f"{n} rows in batches"

    for name in ALTERNATIVES:
        streamed = fit_calibrator(Streaming(), name, n_reference=3000)
        direct = fit_calibrator(glove, name, n_reference=3000)
        Y = glove.lookup(["flower", "war"]).vectors
        np.testing.assert_allclose(streamed.transform(Y), direct.transform(Y), rtol=1e-7, atol=1e-9)
        assert streamed.metadata_["n"] == 3000
