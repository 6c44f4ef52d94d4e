"""Bad-input catalogue (the last mile of trust, issue 31): folders and calibrators of another version or edited,
environment variables pointing nowhere, unbounded parameters, resource limits, late signals, and messages that
named the wrong thing.

* FOLDER_CASES: an experiment folder whose ``experiment.json``, manifest or a cell is of another format
  version, unversioned or truncated: ``run`` and ``report`` end in one line naming the file and the versions,
  and not a byte of the folder changes.
* CALIBRATOR_CASES: a calibrator file whose metadata was edited and re-sealed (its content hash recomputed):
  refused naming the field (library: ``load_calibrator``).
* ENV_CASES: a variable with a value isoeat does not accept; ENV_PATH_CASES: a folder variable pointing nowhere
  while other data is reachable (library): one line naming the variable, never other data instead.
* CLI_CASES: bounds checked before anything is encoded, and messages that name the real cause, option and file.
* RESOURCE_CASES: a command under an address-space limit far too small (``prlimit --as``): it succeeds or ends
  in one line naming what ran out; never a traceback, never a hang.
* SIGNAL_CASES: SIGTERM sent at an exact call of a run's last steps (counted from the end of a whole run): the
  manifest never says ``running``.

CLI cases end in a one-line isoeat error, exit 2, nothing written or changed in the temporary folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import isoeat
from isoeat import DataFormatError, IsoeatError, IsoeatWarning
from isoeat.cli import main
from isoeat.experiments import _formats
from isoeat.experiments import runner as R

from .test_bad_input_more import _assert_one_line_error, _snapshot
from .test_bad_input_wordsets import _materialise

SRC = Path(isoeat.__file__).resolve().parent.parent
PRLIMIT = shutil.which("prlimit")
NOWHERE = "/nonexistent-isoeat/folder"
V = isoeat.__version__


# --------------------------------------------------------------------------- artefacts
@pytest.fixture(scope="module")
def trust_artefacts(tmp_path_factory, glove):
    """A finished experiment folder (two tests, raw and ZCA) and a fitted calibrator file."""
    d = tmp_path_factory.mktemp("trust")
    (d / "c.yaml").write_text("name: trust\nmodels: [glove-6b-50d]\ntests: [W6, W7]\ncalibrations: [none, zca]\n"
                              "settings: {permutations: 500, reference: {size: 2000}}\n")
    assert main(["run", str(d / "c.yaml"), "--out", str(d / "exp"), "-q"]) == 0
    isoeat.save_calibrator(isoeat.fit_calibrator(glove, "zca", n_reference=2000), d / "w.npz")
    return d


def edit_record(p: Path, sealed: bool = False, **changes) -> None:
    """Change fields of a JSON record file; ``sealed``: with its content hash recomputed (as isoeat seals)."""
    from isoeat._records import seal

    rec = json.loads(p.read_text())
    rec.update(changes)
    if sealed:
        rec.pop("content_sha256", None)
        rec = seal(rec)
    p.write_text(json.dumps(rec))


def _truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


_CELL = "cells/glove-6b-50d/zca/W7.json"
_CAL = "calibrators/glove-6b-50d/zca.npz"

#: (name, how the folder is changed, command ("run" | "report"), expected text; "{exp}" is the folder)
FOLDER_CASES = [
    ("experiment newer, report", lambda e: edit_record(e / "experiment.json", format_version=2, isoeat_version="9.0"),
     "report", "experiment.json: written in experiment format 2 by isoeat 9.0; this isoeat"),
    ("experiment newer, run", lambda e: edit_record(e / "experiment.json", format_version=2, isoeat_version="9.0"),
     "run", "reads experiment format 1"),
    ("experiment unversioned, report", lambda e: edit_record(e / "experiment.json", format_version=None),
     "report", "experiment.json: damaged (format_version None is not a whole number >= 1)"),
    ("experiment version text, run", lambda e: edit_record(e / "experiment.json", format_version="1"),
     "run", "experiment.json: damaged (format_version '1' is not a whole number >= 1)"),
    ("experiment truncated, report", lambda e: _truncate(e / "experiment.json"), "report",
     "experiment.json: damaged (not valid JSON"),
    ("experiment truncated, run", lambda e: _truncate(e / "experiment.json"), "run",
     "experiment.json: damaged (not valid JSON"),
    ("manifest newer, report", lambda e: edit_record(e / "manifest.json", format_version=2), "report",
     "manifest.json: written in manifest format 2"),
    ("manifest newer, run", lambda e: edit_record(e / "manifest.json", format_version=2), "run",
     "reads manifest format 1"),
    ("cell newer, run", lambda e: edit_record(e / _CELL, sealed=True, format_version=2), "run",
     "W7.json: written in cell format 2 by a newer isoeat; this isoeat"),
    ("cell newer unsealed, run", lambda e: edit_record(e / _CELL, format_version=7), "run",
     "reads cell format 1"),
    ("manifest a folder, run", lambda e: ((e / "manifest.json").unlink(), (e / "manifest.json").mkdir()), "run",
     "manifest.json: is a folder where isoeat writes a file"),
    ("results a folder, run", lambda e: ((e / "results.json").unlink(), (e / "results.json").mkdir()), "run",
     "results.json: is a folder where isoeat writes a file"),
    ("saved calibrator newer, run", lambda e: reseal(e / _CAL, e / _CAL, _set("format_version", 3)), "run",
     "zca.npz: written in calibrator format 3"),
]


@pytest.mark.parametrize("name, change, command, expected", FOLDER_CASES, ids=[c[0] for c in FOLDER_CASES])
def test_a_folder_of_another_version_is_refused_and_kept(tmp_path, capsys, trust_artefacts, name, change, command,
                                                         expected):
    exp = tmp_path / "exp"
    shutil.copytree(trust_artefacts / "exp", exp)
    change(exp)
    before = _snapshot(tmp_path)
    argv = ["report", str(exp)] if command == "report" else ["run", str(trust_artefacts / "c.yaml"), "--out", str(exp)]
    code = main(argv)
    err = capsys.readouterr().err
    _assert_one_line_error(code, err, expected, name)
    assert _snapshot(tmp_path) == before  # never rewritten


# --------------------------------------------------------------------------- calibrator metadata, re-sealed
def _sha(name: str, a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    h = hashlib.sha256(f"{name}:{a.dtype.str}:{a.shape}".encode())
    h.update(a.tobytes())
    return h.hexdigest()


def reseal(src: Path, dst: Path, edit) -> None:
    """Edit the metadata of ``src`` and write ``dst`` with a content record that matches the edit.

    The record is written from its documented layout (``calibration/io.py``: SHA-256 of ``"NAME:DTYPE:SHAPE"``
    then the bytes of each array; SHA-256 of the metadata string), not with isoeat's own code.
    """
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


def _set(key, value):
    def edit(meta):
        *path, last = key.split(".")
        target = meta
        for k in path:
            target = target[k]
        target[last] = value
    return edit


CALIBRATOR_CASES = [
    ("params.eps text", _set("params.eps", "abc"), "metadata field 'params.eps' must be a finite number >= 0, got 'abc'"),
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
     f"written in calibrator format 3 by isoeat {V}; this isoeat ({V}) reads calibrator formats 1 to 2"),
    ("format other", _set("format", "other"), "metadata field 'format' is 'other', expected 'isoeat-calibrator'"),
    ("calibration number", _set("calibration", 3), "metadata field 'calibration' is 3, not a known calibration"),
    ("calibration other", _set("calibration", "center"),
     "metadata field 'calibration' is 'center', but the file holds the arrays of another calibration"),
]


@pytest.mark.parametrize("name, edit, expected", CALIBRATOR_CASES, ids=[c[0] for c in CALIBRATOR_CASES])
def test_resealed_calibrator_metadata_is_refused_naming_the_field(trust_artefacts, tmp_path, name, edit, expected):
    p = tmp_path / "edited.npz"
    reseal(trust_artefacts / "w.npz", p, edit)
    with pytest.raises(DataFormatError) as info:
        isoeat.load_calibrator(p)
    msg = str(info.value)
    assert msg.startswith(f"{p}: ") and expected in msg and "\n" not in msg, msg
    assert "pickle" not in msg


def test_an_unedited_reseal_still_loads(trust_artefacts, tmp_path):  # the re-sealing itself is faithful
    p = tmp_path / "same.npz"
    reseal(trust_artefacts / "w.npz", p, lambda meta: None)
    np.testing.assert_array_equal(isoeat.load_calibrator(p).whitening_,
                                  isoeat.load_calibrator(trust_artefacts / "w.npz").whitening_)


# --------------------------------------------------------------------------- a calibrator that cannot say its model
# A file without a model fingerprint (format 1, or the fingerprint removed and the file re-sealed) is applied
# only with one warning and a mark in the output and the records; a calibrator fitted in memory claims nothing.
def _drop(key):
    return lambda meta: meta.pop(key)


@pytest.mark.parametrize("edit", [_drop("model_fingerprint"), _set("model_fingerprint", None),
                                  _set("model_fingerprint", "")], ids=["absent", "null", "empty"])
def test_a_calibrator_without_fingerprint_is_applied_only_with_a_warning(trust_artefacts, tmp_path, glove, edit):
    p = tmp_path / "nofp.npz"
    reseal(trust_artefacts / "w.npz", p, edit)
    cal = isoeat.load_calibrator(p)
    with pytest.warns(IsoeatWarning, match=r"nofp\.npz.*no model fingerprint.*cannot tell"):
        isoeat.calibration.check_compatible(cal, glove)
    with pytest.warns(IsoeatWarning, match="no model fingerprint"):
        isoeat.weat(glove, "W6", calibration=cal, rng=0)


def test_a_fingerprinted_calibrator_is_applied_silently(trust_artefacts, glove, recwarn):
    isoeat.calibration.check_compatible(isoeat.load_calibrator(trust_artefacts / "w.npz"), glove)
    assert not [w for w in recwarn if issubclass(w.category, IsoeatWarning)]


def test_a_calibrator_fitted_in_memory_claims_nothing(glove, recwarn):
    X = glove.lookup(list(glove.words[:500])).vectors
    isoeat.weat(glove, "W6", calibration=isoeat.ZCAWhitener().fit(X), rng=0)
    assert not [w for w in recwarn if issubclass(w.category, IsoeatWarning)]


@pytest.mark.filterwarnings("always::isoeat._errors.IsoeatWarning")  # the CLI prints them as one line
@pytest.mark.parametrize("argv", [["weat", "--test", "W6"], ["run", "--tests", "W6", "--no-progress"]],
                         ids=["weat", "run"])
def test_the_cli_says_once_that_it_cannot_tell_and_marks_the_output(trust_artefacts, tmp_path, capsys, argv):
    p = tmp_path / "nofp.npz"
    reseal(trust_artefacts / "w.npz", p, _drop("model_fingerprint"))
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


# --------------------------------------------------------------------------- environment variables
ENV_CASES = [
    ("ISOEAT_PROGRESS unknown", "ISOEAT_PROGRESS", "sometimes", ["weat", "--test", "W6"],
     "$ISOEAT_PROGRESS must be one of auto, bar, log"),
    ("ISOEAT_NO_CACHE unknown", "ISOEAT_NO_CACHE", "maybe", ["cache", "info"], "$ISOEAT_NO_CACHE must be one of 1"),
    ("ISOEAT_OFFLINE unknown", "ISOEAT_OFFLINE", "perhaps", ["reproduce", "--list"], "$ISOEAT_OFFLINE must be one of"),
    ("ISOEAT_REPORT_JOBS text", "ISOEAT_REPORT_JOBS", "two", ["weat", "--test", "W6"],
     "$ISOEAT_REPORT_JOBS must be a whole number from 1 to 64, got 'two'"),
    ("ISOEAT_REPORT_JOBS zero", "ISOEAT_REPORT_JOBS", "0", ["weat", "--test", "W6"], "from 1 to 64, got '0'"),
    ("ISOEAT_REPORT_JOBS huge", "ISOEAT_REPORT_JOBS", "100000", ["weat", "--test", "W6"], "got '100000'"),
    ("ISOEAT_CACHE_MAX unknown", "ISOEAT_CACHE_MAX", "lots", ["cache", "info"], "$ISOEAT_CACHE_MAX must be a size"),
    ("ISOEAT_WIKITEXT103 nowhere, auto", "ISOEAT_WIKITEXT103", NOWHERE, ["reproduce", "--list"],
     f"$ISOEAT_WIKITEXT103={NOWHERE}: no such file or folder"),
    ("ISOEAT_DATA_DIR nowhere, benchmark", "ISOEAT_DATA_DIR", NOWHERE, ["similarity", "--benchmark", "men"],
     f"$ISOEAT_DATA_DIR={NOWHERE}: no such file or folder"),
]


@pytest.mark.parametrize("name, var, value, args, expected", ENV_CASES, ids=[c[0] for c in ENV_CASES])
def test_a_variable_isoeat_cannot_use_is_one_line(tmp_path, capsys, monkeypatch, glove, name, var, value, args,
                                                  expected):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path.parent / f"{tmp_path.name}-cache"))  # not in the snapshot
    monkeypatch.setenv(var, value)
    before = _snapshot(tmp_path)
    code = main(args)
    _assert_one_line_error(code, capsys.readouterr().err, expected, name)
    assert _snapshot(tmp_path) == before


def _corpus(spec):
    def read():
        from isoeat.corpora import load_corpus

        return load_corpus(spec, cache=False, max_sentences=10)
    return read


def _offline():
    from isoeat.corpora import offline_corpora

    return offline_corpora()


ENV_PATH_CASES = [
    ("data dir for a named corpus", "ISOEAT_DATA_DIR", NOWHERE, _corpus("wikitext-2")),
    ("data dir for the auto corpus", "ISOEAT_DATA_DIR", NOWHERE, _offline),
    ("data dir a file for a named corpus", "ISOEAT_DATA_DIR", "FILE", _corpus("wikitext-2")),
    ("shared data for a named corpus", "ISOEAT_SHARED_DATA", NOWHERE, _corpus("enwiki-sample")),
    ("wikitext-103 named", "ISOEAT_WIKITEXT103", NOWHERE, _corpus("wikitext-103")),
    ("wikitext-103 empty folder for auto", "ISOEAT_WIKITEXT103", "EMPTY", _offline),
    ("wikitext-2 named", "ISOEAT_WIKITEXT2", NOWHERE, _corpus("wikitext-2")),
    ("wikitext-2 for auto", "ISOEAT_WIKITEXT2", NOWHERE, _offline),
]


@pytest.mark.parametrize("name, var, value, read", ENV_PATH_CASES, ids=[c[0] for c in ENV_PATH_CASES])
def test_a_folder_variable_pointing_nowhere_is_never_replaced(tmp_path, monkeypatch, shared_data, name, var, value,
                                                              read):
    monkeypatch.setenv("ISOEAT_SHARED_DATA", str(shared_data))  # other data is reachable: it must not be used
    if value == "EMPTY":
        value = str(tmp_path)
    elif value == "FILE":
        (tmp_path / "f").write_text("x")
        value = str(tmp_path / "f")
    monkeypatch.setenv(var, value)
    with pytest.raises(IsoeatError) as info:
        read()
    msg = str(info.value)
    assert f"${var}" in msg and value in msg and "\n" not in msg, msg


# --------------------------------------------------------------------------- bounds and messages (CLI)
_ONE_WORD = "id: ONE\nbias_type: x\nX: [doctor]\nY: [nurse, teacher]\nA: [he, him]\nB: [she, her]\n"
_ONE_FOUND = "id: ONEF\nbias_type: x\nX: [doctor, qqzzxa, qqzzxb]\nY: [nurse, teacher]\nA: [he, him]\nB: [she, her]\n"

CLI_CASES = [
    ("one-word set", {"one.yaml": _ONE_WORD}, ["weat", "--test", "{d}/one.yaml"],
     "set X (X) has 1 word(s): doctor; a set needs at least 2"),
    ("one word found, coverage met", {"f.yaml": _ONE_FOUND}, ["weat", "--test", "{d}/f.yaml", "--min-coverage", "0.3"],
     "only 1 of its 3 words in the vocabulary of glove-6b-50d; a set needs at least 2"),
    ("matrix-out a folder", {"m/.keep": ""}, ["anisotropy", "--samples", "200", "--matrix-out", "{d}/m"],
     "--matrix-out {d}/m: is a folder"),
    ("matrix-out not .npz", {}, ["anisotropy", "--samples", "200", "--matrix-out", "{d}/cos"],
     "--matrix-out {d}/cos: the matrix file is saved as .npz"),
    ("whiten-distributed out a folder", {"m/.keep": ""}, ["whiten-distributed", "--local-workers", "1", "--save", "{d}/m"],
     "--save {d}/m: is a folder"),
    ("semaxis pairs cancel", {}, ["metric", "semaxis", "--test", "W6", "--pairs", "he:she,she:he"],
     "--pairs: pairs[1] ('she', 'he') contradicts pairs[0] ('he', 'she')"),  # refused before the axis cancels
    ("rnsb huge C", {}, ["metric", "rnsb", "--test", "W6", "--rnsb-c", "1e9"],
     "the pole words A and B are linearly separable, so with C = 1e+09"),
    ("metric option by its flag", {}, ["metric", "mac", "--test", "W6", "--rnsb-c", "3"],
     "--rnsb-c does not apply to mac (it applies to rnsb)"),
    ("reference-max too small", {}, ["run", "--tests", "W6", "--reference-size", "auto", "--reference-max", "10"],
     "--reference-max must be a whole number >= 40, got 10"),
    ("reference-shards over the maximum", {}, ["run", "--tests", "W6", "--reference-shards", "2000"],
     "--reference-shards must be from 2 to 200, got 2000"),
    ("reference-shards of one row", {}, ["run", "--tests", "W6", "--reference-size", "300", "--reference-shards", "151"],
     "--reference-shards 151: the 300 reference rows give shards of fewer than 2 rows; use at most 150 shards"),
    ("sensitivity reference a FIFO", {"fifo": "FIFO"}, ["sensitivity", "--tests", "W6", "--reference", "top,{d}/fifo"],
     "--reference-text: {d}/fifo: not a regular file (a FIFO)"),
    ("sensitivity reference a folder", {"f/.keep": ""}, ["sensitivity", "--tests", "W6", "--reference", "top,{d}/f"],
     "--reference-text: {d}/f: is a folder"),
    ("reproduce list, corpus nowhere", {}, ["reproduce", "--list", "--corpus", NOWHERE],
     f"--corpus {NOWHERE}: no such file or folder"),
    ("npy spec with a comma", {}, ["weat", "--test", "W6", "--model", "npy:{d}/m,64.npy,{d}/vocab"],
     "npy:{d}/m,64.npy,{d}/vocab: no matrix file found at any comma (tried '{d}/m', '{d}/m,64.npy'"),
    ("sensitivity repeats unbounded", {}, ["sensitivity", "--tests", "W6", "--repeats", "100000000"],
     "--repeats 100000000 x 11 settings make 1,100,000,000 cells"),
    ("config bootstrap unbounded", {"c.yaml": "models: [glove-6b-50d]\ntests: [W6]\nsettings: {bootstrap: 100000000}\n"},
     ["run", "{d}/c.yaml", "--out", "{d}/o"], "settings.bootstrap: expected a whole number in [0, 10000000], got 100000000"),
    ("config similarity bootstrap unbounded",
     {"c.yaml": "models: [glove-6b-50d]\ntests: [W6]\nsimilarity: {benchmarks: [ws353], bootstrap: 100000000}\n"},
     ["run", "{d}/c.yaml", "--out", "{d}/o"], "similarity.bootstrap: expected a whole number in [0, 10000000]"),
    ("ceat one draw", {}, ["ceat", "--test", "W6", "--draws", "1"], "--draws must be at least 2"),
    ("ceat ddof of all targets", {}, ["ceat", "--test", "W6", "--ddof", "16"],
     "--ddof 16: must be below the 16 target words of W6"),
    ("ceat static model", {}, ["ceat", "--test", "W6", "--model", "glove-6b-50d"],
     "CEAT needs a contextual model (hf:NAME or minilm); glove-6b-50d gives one vector per word"),
]


@pytest.mark.parametrize("name, files, args, expected", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_a_bound_or_a_cause_is_named_in_one_line(tmp_path, capsys, monkeypatch, glove, name, files, args, expected):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path.parent / f"{tmp_path.name}-cache"))  # not in the snapshot
    _materialise(tmp_path, files)
    before = _snapshot(tmp_path) if "FIFO" not in files.values() else None
    code = main([a.replace("{d}", str(tmp_path)) for a in args])
    err = capsys.readouterr().err
    _assert_one_line_error(code, err, expected.replace("{d}", str(tmp_path)), name)
    assert "contexts_per_word" not in err and "are the pole words" not in err and "all associations equal" not in err
    if before is not None:
        assert _snapshot(tmp_path) == before


# --------------------------------------------------------------------------- resource limits (prlimit)
RESOURCE_CASES = [(f"weat under {mb} MB", mb, ["weat", "--test", "W6"]) for mb in (100, 150, 200, 250, 300, 350, 400,
                                                                                 500, 700, 800)]
RESOURCE_CASES += [(f"run under {mb} MB", mb, ["run", "--tests", "W6", "--reference-size", "2000"])
                   for mb in (300, 500, 700)]
RESOURCE_CASES += [(f"report under {mb} MB", mb, ["report", "{exp}"]) for mb in (400, 700)]


@pytest.mark.skipif(PRLIMIT is None, reason="prlimit is not installed")
@pytest.mark.parametrize("name, mb, argv", RESOURCE_CASES, ids=[c[0] for c in RESOURCE_CASES])
def test_a_memory_limit_ends_in_one_line(tmp_path, trust_artefacts, name, mb, argv):
    exp = tmp_path / "exp"
    shutil.copytree(trust_artefacts / "exp", exp)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
               ISOEAT_CACHE_DIR=str(tmp_path / "cache"), MPLCONFIGDIR=str(tmp_path / "mpl"))
    try:
        proc = subprocess.run([PRLIMIT, f"--as={mb * 1_000_000}", sys.executable, "-m", "isoeat.cli",
                               *[a.replace("{exp}", str(exp)) for a in argv]],
                              capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name}: hung (no answer in 240 s)")
    if proc.returncode == 0:
        return  # the limit sufficed this time: nothing to say
    err = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert len(err) == 1 and err[0].startswith("isoeat: error: ") and proc.returncode == 2, proc.stderr[-3000:]
    assert any(w in err[0] for w in ("out of memory", "cannot load", "disk")), err[0]


# --------------------------------------------------------------------------- a late SIGTERM
#: (name, function the runner calls, which call counted from the last one of a whole run: 0 = the last one)
SIGNAL_CASES = [
    ("sigterm at the final manifest write", "write_manifest", 0),
    ("sigterm at the first manifest write", "write_manifest", 1),
    ("sigterm building the final manifest", "_build_manifest", 0),
    ("sigterm counting the cells, last", "_cell_states", 0),
    ("sigterm counting the cells, last but one", "_cell_states", 1),
    ("sigterm counting the cells, last but two", "_cell_states", 2),
    ("sigterm writing the tables", "write_results", 0),
    ("sigterm at the last time stamp", "now_iso", 0),
    ("sigterm at the last time stamp but one", "now_iso", 1),
    ("sigterm at the last time stamp but two", "now_iso", 2),
    ("sigterm at the last time stamp but three", "now_iso", 3),
    ("sigterm while swapping results in", "swap_in", 0),
]
_QUICK = ["run", "--tests", "W6", "--reference-size", "2000", "--permutations", "500", "--no-progress"]


def _sigterm_at(monkeypatch, name: str, call: int | None) -> list[int]:
    """Count the calls of ``runner.name``; send SIGTERM to this process just before the ``call``-th (1-based)."""
    real = getattr(R, name)
    calls = [0]

    def wrapped(*a, **kw):
        calls[0] += 1
        if calls[0] == call:
            os.kill(os.getpid(), signal.SIGTERM)
        return real(*a, **kw)

    monkeypatch.setattr(R, name, wrapped)
    return calls


def _last_run(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())["runs"][-1]


@pytest.mark.parametrize("name, function, from_end", SIGNAL_CASES, ids=[c[0] for c in SIGNAL_CASES])
def test_a_late_sigterm_never_leaves_running(tmp_path, glove, monkeypatch, capsys, name, function, from_end):
    old = signal.getsignal(signal.SIGTERM)
    try:
        extra = ["--overwrite", "all"] if function == "swap_in" else []  # only a replacement swaps
        if extra:
            assert main([*_QUICK, "--out", str(tmp_path / "whole")]) == 0
            assert main([*_QUICK, "--out", str(tmp_path / "o")]) == 0
        calls = _sigterm_at(monkeypatch, function, None)  # a whole run first: how many calls it makes
        assert main([*_QUICK, "--out", str(tmp_path / "whole"), *extra]) == 0
        monkeypatch.undo()
        target = calls[0] - from_end
        assert target >= 1, f"{function} is called {calls[0]} times"
        out = tmp_path / "o"
        before = (out / "results.json").read_text() if extra else None
        calls = _sigterm_at(monkeypatch, function, target)
        code = main([*_QUICK, "--out", str(out), *extra])
        assert calls[0] >= target and code in (0, 130)
        run = _last_run(out)
        assert run["status"] in ("finished", "interrupted"), run
        assert not (out / ".isoeat.lock").exists()  # the lock is released
        if run["status"] == "finished":
            assert json.loads((out / "results.json").read_text())  # the results are whole
        if before is not None:  # a replacement cut short or finished: the folder is whole either way
            assert (out / "results.json").read_text() == before
            assert not list(out.glob(".isoeat-staging-*")) and not list(out.glob(".isoeat-old-*"))
        monkeypatch.undo()
        assert main([*_QUICK, "--out", str(out)]) == 0  # and the next run goes on from there
        assert _last_run(out)["status"] == "finished"
    finally:
        signal.signal(signal.SIGTERM, old)


TOTAL_CASES = (len(FOLDER_CASES) + len(CALIBRATOR_CASES) + len(ENV_CASES) + len(ENV_PATH_CASES) + len(CLI_CASES)
               + len(RESOURCE_CASES) + len(SIGNAL_CASES))


def test_catalogue_size():
    names = [c[0] for c in FOLDER_CASES + CALIBRATOR_CASES + ENV_CASES + ENV_PATH_CASES + CLI_CASES + RESOURCE_CASES
             + SIGNAL_CASES]
    assert len(set(names)) == len(names) and TOTAL_CASES >= 80
    assert _formats.CELL_FORMAT == 1  # the cases above write format 2 as "newer": revise them when it moves
