"""Relative ε (``eps_mode="relative"``, ``--eps-relative R``): ε = R · mean(λ) of the reference covariance.

Expected values are computed here from scratch (numpy.linalg.eigh of the sample covariance, n-1), never
from the calibrator's own arrays.
"""

from __future__ import annotations

import numpy as np
import pytest

from isoeat import ConfigError, ZCAWhitener
from isoeat.calibration import load_calibrator, make_calibrator, save_calibrator


def _cloud(rng, n=1500, d=5):
    # scales 1e-3 .. 1e2: an absolute eps of 1e-3 means something very different per scale
    A = rng.normal(size=(d, d)) @ np.diag([100.0, 10.0, 1.0, 0.1, 0.001])
    return rng.normal(size=(n, d)) @ A + rng.normal(size=d)


@pytest.mark.parametrize("r", [1e-3, 0.05, 1.0])
def test_whitened_diagonal_mean_is_mean_of_shrinkage_factors(rng, r):
    X = _cloud(rng)
    lam = np.linalg.eigh(np.cov(X, rowvar=False, ddof=1))[0]
    eps_abs = r * lam.mean()
    want = float(np.mean(lam / (lam + eps_abs)))
    w = ZCAWhitener(eps=r, eps_mode="relative").fit(X)
    Z = w.transform(X)
    got = float(np.mean(np.diag(np.cov(Z, rowvar=False, ddof=1))))
    assert got == pytest.approx(want, rel=1e-9)
    assert w.eps_ == pytest.approx(eps_abs, rel=1e-9)
    # the absolute reading of the same number is another calibration (here by far more than rounding)
    a = ZCAWhitener(eps=r).fit(X)
    assert float(np.mean(np.diag(np.cov(a.transform(X), rowvar=False)))) != pytest.approx(want, rel=1e-3)


def test_scale_free(rng):
    """Relative ε is scale-invariant: whitened vectors of c·X equal those of X (absolute ε is not)."""
    X = _cloud(rng)
    z1 = ZCAWhitener(eps=0.01, eps_mode="relative").fit_transform(X)
    z2 = ZCAWhitener(eps=0.01, eps_mode="relative").fit_transform(1000.0 * X)
    np.testing.assert_allclose(z1, z2, atol=1e-9)


@pytest.mark.parametrize("name", ["zca", "pca-whiten", "zca-shrinkage"])
def test_every_whitener_and_streamed_fits_agree(rng, name):
    X = _cloud(rng)
    lam = np.linalg.eigh(np.cov(X, rowvar=False, ddof=1))[0]
    full = make_calibrator(name, eps=0.02, eps_mode="relative").fit(X)
    assert full.eps_ == pytest.approx(0.02 * lam.mean(), rel=1e-9)
    streamed = make_calibrator(name, eps=0.02, eps_mode="relative").fit_batches([X[:700], X[700:]])
    assert streamed.eps_ == pytest.approx(full.eps_, rel=1e-9)


def test_bad_mode_is_one_line_error(rng):
    with pytest.raises(ConfigError, match="eps_mode must be one of absolute, relative; got 'relativ'"):
        make_calibrator("zca", eps_mode="relativ")
    with pytest.raises(ConfigError, match="eps_mode"):
        ZCAWhitener(eps_mode="x").fit(_cloud(rng))


def test_saved_and_loaded_keeps_mode_and_effective_eps(tmp_path, rng):
    from isoeat.calibration.registry import calibrator_metadata

    X = _cloud(rng)
    w = ZCAWhitener(eps=0.01, eps_mode="relative").fit(X)
    w.metadata_ = calibrator_metadata(w, "zca", object(), "test cloud", X.shape[0], X.shape[1])
    assert w.metadata_["eps_mode"] == "relative" and w.metadata_["eps_relative"] == 0.01
    assert w.metadata_["eps"] == pytest.approx(w.eps_)
    path = save_calibrator(w, tmp_path / "w.npz")
    back = load_calibrator(path)
    assert back.eps_ == pytest.approx(w.eps_) and back.get_params() == {"eps": 0.01, "eps_mode": "relative"}
    np.testing.assert_allclose(back.transform(X), w.transform(X))


# --------------------------------------------------------------------------- configs and cell hashes
_BASE = {"models": [{"spec": "glove-6b-50d", "label": "g"}], "tests": ["W6"], "calibrations": ["none", "zca"]}


def _hashes(cfg, tmp_path):
    from isoeat.experiments.cells import plan_cells

    return cfg.protocol_hash(), [c.cell_hash for c in plan_cells(cfg, tmp_path)]


def test_absolute_configs_keep_the_protocol_of_earlier_folders(tmp_path):
    from isoeat.experiments.config import parse_config
    from isoeat.experiments.runner import same_protocol

    # pinned: the hash isoeat computed at commit 63a1b5e (before eps_relative existed) for this very config, and
    # the protocol it recorded beside it; the protocol is compared by content, so such a folder is the same one
    old = {"protocol_hash": "5a2a996d1fa69520", "protocol": {
        "settings": {"permutations": 100000, "method": "auto", "alternative": "greater", "ddof": 1, "alpha": 0.05,
                     "seed": 0, "eps": 0.001, "min_coverage": 0.8, "bootstrap": 0, "ci_method": "percentile",
                     "ci_level": 0.95, "stop_early": False, "contexts_per_word": 20, "layer": -1,
                     "reference": {"corpus": None, "size": 100000, "sentences": 200000}},
        "calibrations": [{"name": "none", "label": "none", "params": {}},
                         {"name": "zca", "label": "zca", "params": {"eps": 0.001}}],
        "anisotropy": None, "similarity": None}}
    for settings in ({"eps": 0.001}, {"eps_relative": None}):
        cfg = parse_config({**_BASE, "settings": settings})
        assert same_protocol(old, cfg) and _hashes(cfg, tmp_path) == _hashes(parse_config(_BASE), tmp_path)
    assert not same_protocol(old, parse_config({**_BASE, "settings": {"eps_relative": 0.001}}))


def test_relative_config_never_reuses_absolute_cells(tmp_path):
    from isoeat.experiments.config import parse_config

    absolute = parse_config({**_BASE, "settings": {"eps": 0.001}})
    relative = parse_config({**_BASE, "settings": {"eps_relative": 0.001}})
    assert relative.settings.eps_relative == 0.001
    assert relative.calibration("zca").params == {"eps": 0.001, "eps_mode": "relative"}
    (pa, ca), (pr, cr) = _hashes(absolute, tmp_path), _hashes(relative, tmp_path)
    assert pa != pr and ca[1] != cr[1]
    assert _hashes(parse_config({**_BASE, "settings": {"eps_relative": 0.002}}), tmp_path)[1][1] != cr[1]


def test_config_refuses_both_and_bad_values():
    from isoeat.experiments.config import parse_config

    with pytest.raises(ConfigError, match="settings.eps_relative: give settings.eps .absolute. or settings.eps_relative"):
        parse_config({**_BASE, "settings": {"eps": 0.001, "eps_relative": 0.001}})
    with pytest.raises(ConfigError, match="settings.eps_relative"):
        parse_config({**_BASE, "settings": {"eps_relative": -1}})


# --------------------------------------------------------------------------- the command line
def _cli(*args, cwd):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "isoeat.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=dict(os.environ), timeout=300)


@pytest.mark.parametrize("command", ["whiten --out w.npz", "weat --test W6", "run --tests W6", "anisotropy",
                                     "whiten-distributed --out w.npz", "seat --test sent-weat6", "metric"])
def test_eps_and_eps_relative_exclude_each_other(tmp_path, command):
    proc = _cli(*command.split(), "--eps", "1e-3", "--eps-relative", "1e-3", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"isoeat {command.split()[0]}: error: argument --eps-relative: not allowed with argument --eps "
        f"(see 'isoeat {command.split()[0]} --help')"]


def test_run_with_eps_relative_records_and_prints_it(tmp_path, glove):
    X = glove.reference_vectors(3000)[0]
    lam = np.linalg.eigh(np.cov(np.asarray(X, dtype=np.float64), rowvar=False))[0]
    proc = _cli("run", "--tests", "W6", "--reference-size", "3000", "--eps-relative", "0.01", "--permutations", "1000",
                "--out", "res", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    want = 0.01 * lam.mean()
    assert f"eps=0.01 x mean eigenvalue (= {want:.3g})" in proc.stdout
    import json

    rec = json.loads((tmp_path / "res" / "manifest.json").read_text())["calibrators"]["glove-6b-50d/zca"]
    assert rec["eps_mode"] == "relative" and rec["eps_relative"] == 0.01
    assert rec["eps"] == pytest.approx(want, rel=1e-9)
    # the same folder with the absolute reading of 0.01 is another experiment: refused, never reused
    again = _cli("run", "--tests", "W6", "--reference-size", "3000", "--eps", "0.01", "--permutations", "1000",
                 "--out", "res", cwd=tmp_path)
    assert again.returncode != 0 and "eps_relative" in again.stderr and len(again.stderr.strip().splitlines()) == 1


def test_html_conventions_say_which_eps():
    from types import SimpleNamespace

    from isoeat.reporting.html import _conventions

    rel = _conventions(SimpleNamespace(settings={"eps": 0.001, "eps_relative": 0.01, "reference": {"size": 10}},
                                       manifest={}))
    assert "eps = 0.01 x the mean eigenvalue of the reference covariance" in rel and "eps = 0.001" not in rel
    absolute = _conventions(SimpleNamespace(settings={"eps": 0.001, "reference": {"size": 10}}, manifest={}))
    assert "eps = 0.001 (unless" in absolute


def test_a_calibrations_own_eps_stays_absolute_beside_settings_eps_relative():
    """settings.eps_relative is the ε of calibrations that give none; one's own ``params: {eps: E}`` is E itself."""
    from isoeat.experiments.config import parse_config

    cfg = {"name": "x", "models": [{"spec": "glove-6b-50d"}], "tests": ["W1"],
           "calibrations": ["none", {"name": "zca", "label": "zca-own", "params": {"eps": 0.01}},
                            {"name": "zca", "label": "zca-rel"}],
           "settings": {"eps_relative": 0.1}}
    got = {c.label: c.params for c in parse_config(cfg, source="t").calibrations}
    assert got["zca-own"] == {"eps": 0.01}  # absolute: no eps_mode
    assert got["zca-rel"] == {"eps": 0.1, "eps_mode": "relative"}
    cfg["calibrations"][1]["params"]["eps_mode"] = "relative"  # said relative in its own params: relative
    got = {c.label: c.params for c in parse_config(cfg, source="t").calibrations}
    assert got["zca-own"] == {"eps": 0.01, "eps_mode": "relative"}


def test_calibration_param_eps_stays_absolute_beside_eps_relative():
    import argparse

    from isoeat.cliargs import calibration_params

    args = argparse.Namespace(calibration="zca", eps=1e-3, eps_relative=0.1, calibration_param=["eps=0.01"])
    assert calibration_params(args) == {"eps": 0.01}
    args.calibration_param = []
    assert calibration_params(args) == {"eps": 0.1, "eps_mode": "relative"}


@pytest.mark.parametrize("name", ["zca", "pca-whiten", "zca-shrinkage"])
def test_relative_eps_that_overflows_is_refused(rng, name):
    """R · mean(λ) beyond the largest float: ε = inf would give W = 0 (every vector at the origin)."""
    X = rng.normal(size=(200, 4)) * 10.0  # mean eigenvalue about 100: 1e308 x 100 is inf
    with pytest.raises(ConfigError, match="overflows"):
        make_calibrator(name, eps=1e308, eps_mode="relative").fit(X)
    w = make_calibrator(name, eps=1e300, eps_mode="relative").fit(X)  # large but finite: accepted
    assert np.isfinite(w.eps_) and np.isfinite(w.whitening_).all()


@pytest.mark.parametrize("name", ["zca", "pca-whiten", "zca-shrinkage"])
def test_relative_whitener_fitted_and_saved_in_python_loads(tmp_path, rng, name):
    """fit() alone leaves metadata_ empty: the saved file has no metadata 'eps'; loading it still works and
    recovers the absolute eps = R x mean eigenvalue of the saved covariance (computed here with eigh)."""
    X = _cloud(rng, n=400)
    w = make_calibrator(name, eps=0.05, eps_mode="relative").fit(X)
    path = save_calibrator(w, tmp_path / f"{name}.npz")
    back = load_calibrator(path)
    want = 0.05 * float(np.mean(np.linalg.eigh(np.cov(X, rowvar=False, ddof=1))[0]))
    assert back.eps_ == pytest.approx(want, rel=1e-9) and back.get_params()["eps_mode"] == "relative"
    np.testing.assert_allclose(back.transform(X[:20]), w.transform(X[:20]), rtol=1e-10, atol=1e-12)


def test_sensitivity_refuses_eps_mode_as_a_calibration_param(rng, capsys):
    """eps_mode among the calibration's parameters made the default and the absolute sweep relative, unsaid."""
    import isoeat
    from isoeat.cli import main
    from isoeat.experiments.sensitivity import sensitivity_analysis

    words = sorted({w for s in isoeat.get_test("W6").sets().values() for w in s.words})
    tiny = isoeat.StaticVectors(words, rng.normal(size=(len(words), 5)), name="tiny")
    with pytest.raises(ConfigError, match="eps_mode"):
        sensitivity_analysis(tiny, ["W6"], calibration_params={"eps_mode": "relative"}, eps_mode="absolute",
                             reference_sizes=None, repeats=1, n_reference=20)
    assert main(["sensitivity", "--model", "glove-6b-50d", "--tests", "W6",
                 "--calibration-param", "eps_mode=relative"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--eps-relative LIST" in err


@pytest.mark.parametrize("name", ["zca", "pca-whiten", "zca-shrinkage"])
def test_relative_eps_on_a_zero_covariance_says_so(name):
    """Identical reference vectors: mean eigenvalue 0, so R x 0 = 0; the error named eps=0 ('use eps > 0') and
    partial_fit gave a NaN whitening matrix."""
    C = np.ones((50, 4))
    with pytest.raises(ConfigError, match="eps_relative=0.1: the reference covariance is zero"):
        make_calibrator(name, eps=0.1, eps_mode="relative").fit(C)
    if name == "zca":
        w = ZCAWhitener(eps=0.1, eps_mode="relative")
        with pytest.raises(ConfigError, match="covariance is zero"):
            w.partial_fit(C)
            w.partial_fit(C)
        assert not np.isnan(getattr(w, "whitening_", np.zeros(1))).any()


def test_a_calibrations_own_eps_keeps_its_label_and_order():
    """The own-eps rule (absolute) keeps eps first, so labels of name-twice grids stay those of earlier folders."""
    from isoeat.experiments.config import parse_config

    cfg = {"name": "x", "models": [{"spec": "glove-6b-50d"}], "tests": ["W1"],
           "calibrations": ["none", {"name": "zca-shrinkage", "params": {"shrinkage": 0.1, "eps": 0.01}},
                            {"name": "zca-shrinkage"}]}
    labels = [c.label for c in parse_config(cfg, source="t").calibrations]
    assert labels == ["none", "zca-shrinkage(eps=0.01,shrinkage=0.1)", "zca-shrinkage(eps=0.001)"]
