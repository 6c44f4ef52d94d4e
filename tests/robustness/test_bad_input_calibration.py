"""Bad-input catalogue (calibration, diagnostics, similarity): calibrator parameters, changed calibrator
files, anisotropy and similarity parameters, benchmark names.

Library cases raise an IsoeatError subclass with a one-line message that names the parameter, file or
name and what was received. The CLI case ends in a one-line isoeat error, exit 2, nothing written.

Counts: LIBRARY_CASES + CLI_CASES = TOTAL_CASES bad-input cases.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from isoeat import ConfigError, DataFormatError, IsoeatError, UnknownNameError


def _zca_file(d, name="w.npz", dim=50):
    from isoeat import ZCAWhitener, save_calibrator

    w = ZCAWhitener().fit(np.random.default_rng(0).normal(size=(200, dim)))
    return save_calibrator(w, d / name)


def _rewrite(p, change):
    with np.load(p) as npz:
        arrays = {k: npz[k] for k in npz.files}
    change(arrays)
    p.unlink()
    with open(p, "wb") as fh:
        np.savez(fh, **arrays)
    return p


def _shift_mean(d):
    def change(a):
        a["mean_"] = a["mean_"] + 3.0
    return _rewrite(_zca_file(d), change)


def _edit_fingerprint(d):
    def change(a):
        meta = json.loads(str(a["metadata_json"]))
        meta["model_fingerprint"] = "f" * 16
        a["metadata_json"] = np.array(json.dumps(meta, sort_keys=True))
    return _rewrite(_zca_file(d), change)


def _drop_hash(d):
    return _rewrite(_zca_file(d), lambda a: a.pop("content_sha256"))


def _load(make):
    def run(d):
        from isoeat import load_calibrator

        return load_calibrator(make(d))
    return run


def _make(name, **params):
    def run(d):
        from isoeat.calibration import make_calibrator

        return make_calibrator(name, **params)
    return run


def _config_eps_true(d):
    from isoeat.experiments.config import load_config

    (d / "c.yaml").write_text("models: [glove-6b-50d]\ntests: [W6]\n"
                              "calibrations: [none, {name: zca, params: {eps: true}}]\n")
    return load_config(d / "c.yaml")


def _bootstrap(**kw):
    def run(d):
        from isoeat.similarity import paired_bootstrap_spearman

        g = np.arange(10.0)
        return paired_bootstrap_spearman(g, g + np.sin(g), g + np.cos(g), **kw)
    return run


def _vectors():
    return np.random.default_rng(0).normal(size=(20, 4))


def _aniso(**kw):
    def run(d):
        from isoeat.diagnostics import anisotropy_from_vectors

        return anisotropy_from_vectors(_vectors(), **kw)
    return run


def _evr(k):
    def run(d):
        from isoeat.diagnostics import explained_variance_ratio

        return explained_variance_ratio(_vectors(), k)
    return run


def _benchmark(spec, **kw):
    def run(d):
        from isoeat.similarity import load_benchmark

        if spec == "FILE":
            (d / "b.txt").write_text("word1\tword2\tscore\nman\twoman\t3.0\n")
            return load_benchmark(d / "b.txt", **kw)
        return load_benchmark(spec, **kw)
    return run


def _evaluate(**kw):
    def run(d):
        from isoeat.similarity import evaluate_similarity

        return evaluate_similarity(None, "ws353", **kw)
    return run


def _compare(**kw):
    def run(d):
        from isoeat.similarity import compare_similarity

        return compare_similarity(None, "ws353", object(), **kw)
    return run


LIBRARY_CASES = [
    # --- calibrator parameters (refused when the calibrator is made, before any fit) -------------
    ("zca eps bool", _make("zca", eps=True), ConfigError, "eps must be a finite number >= 0, got True (bool)"),
    ("zca eps string", _make("zca", eps="abc"), ConfigError, "eps must be a finite number >= 0, got 'abc'"),
    ("zca eps NaN", _make("zca", eps=float("nan")), ConfigError, "eps must be a finite number >= 0, got nan"),
    ("pca eps negative", _make("pca-whiten", eps=-1), ConfigError, "eps must be a finite number >= 0, got -1"),
    ("shrinkage string", _make("zca-shrinkage", shrinkage="lw"), ConfigError,
     "shrinkage must be None (Ledoit-Wolf optimum) or a number in [0, 1], got 'lw'"),
    ("shrinkage out of range", _make("zca-shrinkage", shrinkage=1.5), ConfigError, "shrinkage must be None"),
    ("abtt components bool", _make("abtt", n_components=True), ConfigError,
     "n_components must be None or a non-negative integer, got True (bool)"),
    ("abtt components float", _make("abtt", n_components=2.0), ConfigError, "n_components must be None or"),
    ("calibrator unknown parameter", _make("zca", epsilon=1), ConfigError, "ZCAWhitener has no parameter 'epsilon'"),
    ("config calibration eps true", _config_eps_true, ConfigError,
     "calibrations[1].params: eps must be a finite number >= 0, got True"),
    # --- calibrator files changed after saving ---------------------------------------------------
    ("calibrator mean shifted", _load(_shift_mean), DataFormatError, "mean_ do not match the content hash"),
    ("calibrator fingerprint edited", _load(_edit_fingerprint), DataFormatError,
     "metadata_json do not match the content hash"),
    ("calibrator hash removed", _load(_drop_hash), DataFormatError, "content hash record (content_sha256) is missing"),
    # --- anisotropy ----------------------------------------------------------------------------
    ("anisotropy top_k zero", _aniso(top_k=0), ConfigError, "top_k must be a positive integer, got 0"),
    ("anisotropy top_k bool", _aniso(top_k=True), ConfigError, "top_k must be a positive integer, got True (bool)"),
    ("anisotropy matrix_size zero", _aniso(return_matrix=True, matrix_size=0), ConfigError,
     "matrix_size must be a positive integer, got 0"),
    ("anisotropy return_matrix int", _aniso(return_matrix=300), ConfigError,
     "return_matrix must be true or false, got 300 (int)"),
    ("explained variance k float", _evr(2.5), ConfigError, "k must be a positive integer, got 2.5 (float)"),
    # --- similarity ----------------------------------------------------------------------------
    ("bootstrap ci_level out of range", _bootstrap(ci_level=1.5), ConfigError,
     "ci_level must be a number in (0, 1), got 1.5"),
    ("bootstrap n_resamples bool", _bootstrap(n_resamples=True), ConfigError,
     "n_resamples must be an integer in [1, 10000000], got True (bool)"),
    ("similarity min_coverage out of range", _evaluate(min_coverage=1.5), ConfigError,
     "min_coverage must be a number in [0, 1], got 1.5"),
    ("similarity n_resamples negative", _compare(n_resamples=-1), ConfigError,
     "n_resamples must be an integer in [0, 10000000], got -1"),
    ("benchmark unknown name (library)", _benchmark("wordsim-353x"), UnknownNameError,
     "unknown benchmark 'wordsim-353x'; did you mean ws353?"),
    ("benchmark bad kind", _benchmark("FILE", kind="words"), ConfigError,
     "kind must be one of word, sentence; got 'words'; did you mean 'word'?"),
]


@pytest.mark.parametrize("name, run, error, expected", LIBRARY_CASES, ids=[c[0] for c in LIBRARY_CASES])
def test_bad_input_raises_one_line_error(tmp_path, name, run, error, expected):
    with pytest.raises(error) as info:
        run(tmp_path)
    msg = str(info.value)
    assert isinstance(info.value, IsoeatError)
    assert expected in msg, msg
    assert "\n" not in msg


CLI_CASES = [
    ("whitener with shifted mean", _shift_mean, "mean_ do not match the content hash recorded"),
    ("whitener with edited fingerprint", _edit_fingerprint, "metadata_json do not match"),
]


@pytest.mark.parametrize("name, make, expected", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_changed_calibrator_file_refused_by_the_cli(tmp_path, capsys, glove, name, make, expected):
    from isoeat.cli import main

    p = make(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    code = main(["weat", "--test", "W6", "--whitener", str(p)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1, err
    assert expected in err and str(p) in err
    assert "Traceback" not in err
    assert sorted(tmp_path.rglob("*")) == before


TOTAL_CASES = len(LIBRARY_CASES) + len(CLI_CASES)


def test_catalogue_size():
    names = [c[0] for c in LIBRARY_CASES + CLI_CASES]
    assert len(set(names)) == len(names) and TOTAL_CASES >= 25
