"""A calibrator file's metadata: every field checked by name, and a file that cannot say its model says so aloud.

The content hash of a calibrator file detects changes, but whoever edits the
metadata can compute it again ("re-sealing"). So the metadata is also checked
field by field, and a file without a model fingerprint (a format-1 file, or
one whose fingerprint was removed) is applied only with a loud warning and a
mark in the output and the records.

The re-sealing below writes the content record from its documented layout
(``calibration/io.py``: SHA-256 of ``"NAME:DTYPE:SHAPE"`` then the bytes of
each array; SHA-256 of the metadata string) without isoeat's own code.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

import isoeat
from isoeat import DataFormatError, IsoeatWarning
from isoeat.calibration import load_calibrator, save_calibrator
from isoeat.cli import main


def _sha(name: str, a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    h = hashlib.sha256(f"{name}:{a.dtype.str}:{a.shape}".encode())
    h.update(a.tobytes())
    return h.hexdigest()


def reseal(src, dst, edit) -> None:
    """Edit the metadata of ``src`` and write ``dst`` with a content record that matches the edit."""
    with np.load(src) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(str(arrays.pop("metadata_json")))
    arrays.pop("content_sha256")
    edit(meta)
    text = json.dumps(meta)  # NaN written as the token NaN: the file says what it says
    record = {"algorithm": "sha256", "arrays": {k: _sha(k, a) for k, a in arrays.items()},
              "metadata_json": hashlib.sha256(text.encode()).hexdigest()}
    arrays["content_sha256"] = np.array(json.dumps(record))
    arrays["metadata_json"] = np.array(text)
    with open(dst, "wb") as fh:
        np.savez(fh, **arrays)


@pytest.fixture(scope="module")
def saved(tmp_path_factory, glove):
    d = tmp_path_factory.mktemp("cal")
    return save_calibrator(isoeat.fit_calibrator(glove, "zca", n_reference=2000), d / "w.npz")


def _set(key, value):
    def edit(meta):
        *path, last = key.split(".")
        target = meta
        for k in path:
            target = target[k]
        target[last] = value
    return edit


def _drop(key):
    return lambda meta: meta.pop(key)


BAD_FIELDS = [
    ("params.eps", _set("params.eps", "abc"), "metadata field 'params.eps' must be a finite number >= 0, got 'abc'"),
    ("params.eps nan", _set("params.eps", float("nan")), "metadata field 'params.eps' must be a finite number >= 0"),
    ("params.eps negative", _set("params.eps", -1.0), "metadata field 'params.eps' must be a finite number >= 0, got -1"),
    ("params.eps bool", _set("params.eps", True), "metadata field 'params.eps' must be a finite number >= 0"),
    ("params.eps_mode", _set("params.eps_mode", "weird"), "metadata field 'params.eps_mode' must be one of"),
    ("params unknown", _set("params.foo", 1), "metadata field 'params': ZCAWhitener has no parameter 'foo'"),
    ("params not a mapping", _set("params", [1]), "metadata field 'params' must be a mapping"),
    ("eps top level", _set("eps", "abc"), "metadata field 'eps' must be a finite number >= 0, got 'abc'"),
    ("n negative", _set("n", -5), "metadata field 'n' must be a positive integer, got -5"),
    ("n zero", _set("n", 0), "metadata field 'n' must be a positive integer, got 0"),
    ("n fraction", _set("n", 2.5), "metadata field 'n' must be a positive integer, got 2.5"),
    ("n text", _set("n", "x"), "metadata field 'n' must be a positive integer, got 'x'"),
    ("dim smaller", _set("dim", 40), "metadata field 'dim' is 40, but mean_ has shape (50,)"),
    ("dim larger", _set("dim", 60), "metadata field 'dim' is 60, but mean_ has shape (50,)"),
    ("dim fraction", _set("dim", 50.5), "metadata field 'dim' must be a positive integer"),
    ("model_fingerprint number", _set("model_fingerprint", 5), "metadata field 'model_fingerprint' must be text"),
    ("model number", _set("model", 5), "metadata field 'model' must be text"),
    ("format_version text", _set("format_version", "2"), "metadata field 'format_version' must be a positive integer"),
    ("format_version newer", _set("format_version", 3),
     f"written in calibrator format 3 by isoeat {isoeat.__version__}; this isoeat ({isoeat.__version__}) reads "
     "calibrator formats 1 to 2"),
    ("format other", _set("format", "other"), "metadata field 'format' is 'other', expected 'isoeat-calibrator'"),
    ("calibration number", _set("calibration", 3), "metadata field 'calibration' is 3, not a known calibration"),
    ("calibration other", _set("calibration", "center"),
     "metadata field 'calibration' is 'center', but the file holds the arrays of another calibration"),
]


@pytest.mark.parametrize("name, edit, expected", BAD_FIELDS, ids=[c[0] for c in BAD_FIELDS])
def test_resealed_metadata_with_invalid_values_is_refused_naming_the_field(saved, tmp_path, name, edit, expected):
    p = tmp_path / "edited.npz"
    reseal(saved, p, edit)
    with pytest.raises(DataFormatError) as info:
        load_calibrator(p)
    msg = str(info.value)
    assert msg.startswith(f"{p}: ") and expected in msg and "\n" not in msg, msg
    assert "pickle" not in msg


def test_an_unedited_reseal_still_loads(saved, tmp_path):  # the helper itself is faithful
    p = tmp_path / "same.npz"
    reseal(saved, p, lambda meta: None)
    np.testing.assert_array_equal(load_calibrator(p).whitening_, load_calibrator(saved).whitening_)


@pytest.mark.parametrize("edit", [_drop("model_fingerprint"), _set("model_fingerprint", None),
                                  _set("model_fingerprint", "")], ids=["absent", "null", "empty"])
def test_a_calibrator_without_fingerprint_is_applied_only_with_a_warning(saved, tmp_path, glove, edit):
    p = tmp_path / "nofp.npz"
    reseal(saved, p, edit)
    cal = load_calibrator(p)
    with pytest.warns(IsoeatWarning, match=r"nofp\.npz.*no model fingerprint.*cannot tell"):
        isoeat.calibration.check_compatible(cal, glove)
    with pytest.warns(IsoeatWarning, match="no model fingerprint"):
        isoeat.weat(glove, "W6", calibration=cal, rng=0)


def test_a_fingerprinted_calibrator_is_applied_silently(saved, glove, recwarn):
    isoeat.calibration.check_compatible(load_calibrator(saved), glove)
    assert not [w for w in recwarn if issubclass(w.category, IsoeatWarning)]


def test_a_calibrator_fitted_in_memory_claims_nothing(glove, recwarn):
    X = glove.lookup(list(glove.words[:500])).vectors
    isoeat.weat(glove, "W6", calibration=isoeat.ZCAWhitener().fit(X), rng=0)
    assert not [w for w in recwarn if issubclass(w.category, IsoeatWarning)]


@pytest.mark.filterwarnings("always::isoeat._errors.IsoeatWarning")  # the CLI prints them as one line
@pytest.mark.parametrize("argv", [["weat", "--test", "W6"], ["run", "--tests", "W6", "--no-progress"]],
                         ids=["weat", "run"])
def test_the_cli_says_once_that_it_cannot_tell_and_marks_the_output(saved, tmp_path, capsys, argv):
    p = tmp_path / "nofp.npz"
    reseal(saved, p, _drop("model_fingerprint"))
    out = tmp_path / "o"
    extra = ["--out", str(out)] if argv[0] == "run" else []
    assert main([*argv, "--whitener", str(p), *extra]) == 0
    captured = capsys.readouterr()
    warned = [ln for ln in captured.err.splitlines() if "no model fingerprint" in ln]
    assert len(warned) == 1 and warned[0].startswith("isoeat: warning: ") and str(p) in warned[0], captured.err
    assert "model not verified" in captured.out  # the mark in the printed output
    if argv[0] == "run":
        manifest = json.loads((out / "manifest.json").read_text())
        cal = next(iter(manifest["calibrators"].values()))
        assert cal["model_check"].startswith("not verified")
        cell = json.loads(next((out / "cells").rglob("zca/W6.json")).read_text())
        assert any("no model fingerprint" in w for w in cell["warnings"])
