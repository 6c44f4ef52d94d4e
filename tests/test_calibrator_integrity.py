"""Saved calibrators are verified by content; fit forgets earlier fits; parameters are refused early."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, DataFormatError, IsoeatWarning
from isoeat.calibration import (
    CALIBRATORS,
    calibration_names,
    check_compatible,
    load_calibrator,
    make_calibrator,
    save_calibrator,
)
from isoeat.calibration import io as cal_io

NAMES = list(CALIBRATORS.names())


def _cloud(rng, n=600, d=6, shift=0.0):
    A = rng.normal(size=(d, d))
    return rng.normal(size=(n, d)) @ A + rng.normal(size=d) * 3 + shift


def _arrays(p):
    with np.load(p) as npz:
        return {k: npz[k] for k in npz.files}


def _rewrite(p, arrays):
    p.unlink()
    with open(p, "wb") as fh:
        np.savez(fh, **arrays)


def _fitted(name, rng):
    params = {"n_components": 2} if name == "abtt" else {}
    return make_calibrator(name, **params).fit(_cloud(rng))


# --- 1. content hash ------------------------------------------------------------------------------
def test_mean_shift_in_saved_glove_whitener_is_refused(tmp_path, glove):
    w = isoeat.fit_calibrator(glove, "zca", n_reference=5000)
    p = save_calibrator(w, tmp_path / "w.npz")
    arrays = _arrays(p)
    arrays["mean_"] = arrays["mean_"] + 3.0  # consistent with every other array: only a content hash sees it
    _rewrite(p, arrays)
    with pytest.raises(DataFormatError) as info:
        load_calibrator(p)
    msg = str(info.value)
    assert str(p) in msg and "mean_" in msg and "\n" not in msg


@pytest.mark.parametrize("name", NAMES)
def test_every_array_is_verified(name, tmp_path, rng):
    cal = _fitted(name, rng)
    p = save_calibrator(cal, tmp_path / "c.npz")
    for array in type(cal)._state_arrays:
        arrays = _arrays(p)
        a = np.array(arrays[array], dtype=np.float64)
        a.flat[0] = a.flat[0] + (1e-9 if a.flat[0] == 0 else abs(a.flat[0]) * 1e-9)  # a tiny, consistent-looking change
        arrays[array] = a
        q = tmp_path / f"t_{array}.npz"
        with open(q, "wb") as fh:
            np.savez(fh, **arrays)
        with pytest.raises(DataFormatError, match=f"{q.name}.*{array}"):
            load_calibrator(q)


@pytest.mark.parametrize("name", NAMES)
def test_dtype_change_is_refused(name, tmp_path, rng):
    cal = _fitted(name, rng)
    p = save_calibrator(cal, tmp_path / "c.npz")
    arrays = _arrays(p)
    arrays["mean_"] = arrays["mean_"].astype(np.float32).astype(np.float64).astype(np.float32)
    _rewrite(p, arrays)
    with pytest.raises(DataFormatError, match="mean_"):
        load_calibrator(p)


def test_metadata_change_is_refused(tmp_path, glove):
    w = isoeat.fit_calibrator(glove, "zca", n_reference=2000)
    p = save_calibrator(w, tmp_path / "w.npz")
    arrays = _arrays(p)
    meta = json.loads(str(arrays["metadata_json"]))
    meta["model_fingerprint"] = "0" * 16  # pretend it belongs to another model
    arrays["metadata_json"] = np.array(json.dumps(meta, sort_keys=True))
    _rewrite(p, arrays)
    with pytest.raises(DataFormatError, match="w.npz.*metadata"):
        load_calibrator(p)
    arrays = _arrays(p)
    meta["params"] = {"eps": 0.5}
    arrays["metadata_json"] = np.array(json.dumps(meta, sort_keys=True))
    _rewrite(p, arrays)
    with pytest.raises(DataFormatError, match="metadata"):
        load_calibrator(p)


def test_roundtrip_verifies_silently(tmp_path, rng):
    for name in NAMES:
        cal = _fitted(name, rng)
        p = save_calibrator(cal, tmp_path / f"{name}.npz")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            back = load_calibrator(p)
        assert cal_io.calibrator_digest(back) == cal_io.calibrator_digest(cal)


def _as_old_file(p):
    """What isoeat wrote before content hashes: no hash entry, format_version 1."""
    arrays = _arrays(p)
    arrays.pop("content_sha256")
    meta = json.loads(str(arrays["metadata_json"]))
    meta["format_version"] = 1
    arrays["metadata_json"] = np.array(json.dumps(meta, sort_keys=True))
    _rewrite(p, arrays)


def test_old_file_without_hash_loads_with_warning(tmp_path, rng):
    cal = _fitted("zca", rng)
    p = save_calibrator(cal, tmp_path / "old.npz")
    _as_old_file(p)
    with pytest.warns(IsoeatWarning, match="old.npz.*cannot be verified"):
        back = load_calibrator(p)
    np.testing.assert_array_equal(back.whitening_, cal.whitening_)
    with pytest.raises(DataFormatError, match="old.npz.*cannot be verified"):
        load_calibrator(p, require_hash=True)
    # the structural checks still run on old files
    arrays = _arrays(p)
    arrays["whitening_"] = arrays["whitening_"] * 1.01
    _rewrite(p, arrays)
    with pytest.warns(IsoeatWarning), pytest.raises(DataFormatError, match="tampered"):
        load_calibrator(p)


def test_new_file_with_hash_removed_is_refused(tmp_path, rng):
    p = save_calibrator(_fitted("zca", rng), tmp_path / "c.npz")
    arrays = _arrays(p)
    arrays.pop("content_sha256")
    _rewrite(p, arrays)
    with pytest.raises(DataFormatError, match="c.npz.*content hash"):
        load_calibrator(p)


def test_garbled_hash_record_is_refused(tmp_path, rng):
    p = save_calibrator(_fitted("center", rng), tmp_path / "c.npz")
    arrays = _arrays(p)
    arrays["content_sha256"] = np.array("not json")
    _rewrite(p, arrays)
    with pytest.raises(DataFormatError, match="c.npz.*content hash"):
        load_calibrator(p)


# --- calibrator_digest ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_calibrator_digest_sees_every_array_and_param(name, rng):
    X = _cloud(rng)
    params = {"n_components": 2} if name == "abtt" else {}
    a = make_calibrator(name, **params).fit(X)
    b = make_calibrator(name, **params).fit(X.copy())
    d = cal_io.calibrator_digest(a)
    assert isinstance(d, str) and len(d) == 64 and d == cal_io.calibrator_digest(b)
    for array in type(a)._state_arrays:
        c = make_calibrator(name, **params).fit(X)
        v = np.array(getattr(c, array), dtype=np.float64)
        v.flat[-1] += 1e-12 * max(1.0, abs(v.flat[-1]))
        setattr(c, array, v if v.ndim else float(v))
        assert cal_io.calibrator_digest(c) != d, array
    if "eps" in a.get_params():
        assert cal_io.calibrator_digest(make_calibrator(name, **params, eps=0.5).fit(X)) != d


def test_calibrator_digest_matches_the_runner_key():
    # the experiment runner keys reuse by this digest; its private copy must give the same keys
    cells = pytest.importorskip("isoeat.experiments.cells")
    rng = np.random.default_rng(0)
    for name in NAMES:
        cal = _fitted(name, rng)
        assert cal_io.calibrator_digest(cal) == cells.calibrator_digest(cal)


def test_calibrator_digest_refuses_unfitted():
    with pytest.raises(isoeat.NotFittedError):
        cal_io.calibrator_digest(make_calibrator("zca"))


# --- 2. fit forgets the previous fit ----------------------------------------------------------------
class _Model:
    def __init__(self, name, X):
        self.name, self.fingerprint, self.dim, self._X = name, "fp-" + name, X.shape[1], X

    def reference_vectors(self, n, **_):
        return self._X[:n], f"{n} rows of {self.name}"


REFITS = [(n, how) for n in NAMES for how in ("fit", "fit_batches", "partial_fit")
          if how != "partial_fit" or hasattr(CALIBRATORS.get(n), "partial_fit")]


@pytest.mark.parametrize("name,how", REFITS, ids=[f"{n}-{h}" for n, h in REFITS])
def test_refit_leaves_nothing_of_the_first_fit(name, how, rng):
    A, B = _Model("A", _cloud(rng, n=500)), _Model("B", _cloud(rng, n=400, shift=5.0))
    params = {"n_components": 2} if name == "abtt" else {}
    cal = isoeat.calibration.fit_calibrator(A, name, n_reference=500, **params)
    assert cal.metadata_["model_fingerprint"] == "fp-A"
    cal.extra_ = "left over"  # any fitted attribute, even one isoeat does not know
    if how == "fit_batches":
        cal.fit_batches(iter([B._X[:100], B._X[100:]]))
    elif how == "partial_fit":
        cal.partial_fit(B._X[:200])
        cal.partial_fit(B._X[200:])
    else:
        cal.fit(B._X)
    fresh = make_calibrator(name, **params).fit(B._X)
    assert cal.metadata_ == {} and not hasattr(cal, "extra_")
    assert cal.n_samples_seen_ == 400
    for k in type(cal)._state_arrays:
        np.testing.assert_allclose(np.asarray(getattr(cal, k)), np.asarray(getattr(fresh, k)), rtol=1e-8, atol=1e-9)
    assert sorted(k for k in vars(cal) if k.endswith("_") and not k.startswith("_")) == \
        sorted(k for k in vars(fresh) if k.endswith("_") and not k.startswith("_"))


def test_refit_on_other_model_checks_against_the_new_model(rng):
    A, B = _Model("A", _cloud(rng, n=500)), _Model("B", _cloud(rng, n=500, shift=5.0))
    cal = isoeat.calibration.fit_calibrator(A, "zca", n_reference=500)
    cal.fit(B._X)  # refitted by hand: no provenance any more, so nothing is claimed about A
    check_compatible(cal, B)
    assert "model_fingerprint" not in cal.metadata_


# --- 4. parameters refused when the calibrator is made ------------------------------------------------
BAD_PARAMS = [
    ("zca", {"eps": True}, "eps must be a finite number >= 0, got True (bool)"),
    ("zca", {"eps": "abc"}, "eps must be a finite number >= 0, got 'abc'"),
    ("zca", {"eps": float("nan")}, "eps must be a finite number >= 0, got nan"),
    ("pca-whiten", {"eps": False}, "eps must be"),
    ("zca-shrinkage", {"eps": "1e-3"}, "eps must be"),
    ("zca-shrinkage", {"shrinkage": True}, "shrinkage must be None"),
    ("zca-shrinkage", {"shrinkage": float("nan")}, "shrinkage must be None"),
    ("abtt", {"n_components": True}, "n_components must be"),
    ("abtt", {"n_components": "3"}, "n_components must be"),
    ("abtt", {"n_components": 2.0}, "n_components must be"),
]


@pytest.mark.parametrize("name,params,match", BAD_PARAMS, ids=[f"{n}-{p}" for n, p, _ in BAD_PARAMS])
def test_make_calibrator_refuses_bad_params(name, params, match):
    with pytest.raises(ConfigError) as info:
        make_calibrator(name, **params)
    assert match in str(info.value) and "\n" not in str(info.value)
    cal = make_calibrator(name)
    with pytest.raises(ConfigError, match=match.split(",")[0]):
        cal.set_params(**params)


def test_good_params_still_accepted():
    assert make_calibrator("zca", eps=0).get_params() == {"eps": 0, "eps_mode": "absolute"}
    assert make_calibrator("zca", eps=np.float32(1e-3)).eps == np.float32(1e-3)
    assert make_calibrator("abtt", n_components=np.int64(3)).n_components == 3
    assert make_calibrator("zca-shrinkage", shrinkage=None).shrinkage is None
    assert set(calibration_names()) >= {"none", *NAMES}


def test_config_refuses_bool_eps_at_parse_time(tmp_path):
    from isoeat.experiments.config import load_config

    p = tmp_path / "c.yaml"
    p.write_text("models: [glove-6b-50d]\ntests: [W6]\ncalibrations: [none, {name: zca, params: {eps: true}}]\n")
    with pytest.raises(ConfigError, match=r"calibrations\[1\]\.params.*eps must be a finite number >= 0, got True"):
        load_config(p)
