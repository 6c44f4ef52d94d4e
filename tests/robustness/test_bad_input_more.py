"""Bad-input catalogue (more): experiment configs, similarity benchmarks, SEAT
templates, sensitivity lists, calibration parameters, calibrators of another
model, model folders, corpora and embedding caches.

CLI cases end in a one-line isoeat error, exit 2, a message naming the problem
(file, line, key or word), no traceback, and nothing written or changed in the
temporary folder. Library cases (corpora, where no CLI reads them directly)
raise IsoeatError naming the file. A corrupt cache entry warns and recomputes.

Counts (quoted in the README): CLI_CASES + TORCH_CASES + CORPUS_CASES + CACHE_CASES
= TOTAL_CASES bad-input cases.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import warnings

import numpy as np
import pytest

from isoeat import IsoeatError, IsoeatWarning
from isoeat.cli import main

GOOD = "models: [glove-6b-50d]\ntests: [W6]\ncalibrations: [none]\nsettings: {permutations: 100}\n"
OTHER = "name: first\nmodels: [glove-6b-50d]\ntests: [W6]\ncalibrations: [none]\nsettings: {permutations: 100}\n"


def _run(cfg_name, out="{d}/o"):
    return ["run", "{d}/" + cfg_name, "--out", out]


CLI_CASES = [
    # --- experiment configs (isoeat run CONFIG.yaml --out DIR) ----------------
    ("config unknown key", {"c.yaml": GOOD + "modles: [x]\n"}, _run("c.yaml"), "modles: unknown key; did you mean 'models'?"),
    ("config wrong type", {"c.yaml": "models: [glove-6b-50d]\ntests: [W6]\nsettings: {permutations: many}\n"}, _run("c.yaml"),
     "settings.permutations: expected a whole number >= 1, got 'many'"),
    ("config bad enum", {"c.yaml": "models: [glove-6b-50d]\ntests: [W6]\nsettings: {method: exakt}\n"}, _run("c.yaml"),
     "settings.method: expected one of auto, exact, certified, monte-carlo; got 'exakt'; did you mean 'exact'?"),
    ("config missing models", {"c.yaml": "tests: [W6]\n"}, _run("c.yaml"), "c.yaml: models: missing"),
    ("config test file missing", {"c.yaml": "models: [glove-6b-50d]\ntests: [nope/t.json]\n"}, _run("c.yaml"),
     "tests[0]: no such test file"),
    ("config duplicate key", {"c.yaml": "models: [glove-6b-50d]\ntests: [W6]\ntests: [W7]\n"}, _run("c.yaml"),
     "duplicate key 'tests' (line 3; first on line 2)"),
    ("config YAML syntax", {"c.yaml": "models: [glove-6b-50d\ntests: W6\n"}, _run("c.yaml"), "c.yaml: not valid YAML (line 2"),
    ("config empty", {"c.yaml": ""}, _run("c.yaml"), "c.yaml: the file is empty"),
    ("config missing file", {}, _run("nope.yaml"), "nope.yaml: no such config file"),
    ("config alpha out of range", {"c.yaml": "models: [glove-6b-50d]\ntests: [W6]\nsettings: {alpha: 2}\n"}, _run("c.yaml"),
     "settings.alpha: expected a number in (0, 1), got 2"),
    ("config unknown calibration", {"c.yaml": "models: [glove-6b-50d]\ntests: [W6]\ncalibrations: [zcaa]\n"}, _run("c.yaml"),
     "calibrations[0].name: expected one of"),
    ("config bad family", {"c.yaml": "models: [{spec: glove-6b-50d, family: statik}]\ntests: [W6]\n"}, _run("c.yaml"),
     "models[0].family: expected one of static, contextualized, contrastive, supervised-contrastive; got 'statik'; did you mean 'static'?"),
    ("config unknown model", {"c.yaml": "models: [glove-6b-5d]\ntests: [W6]\n"}, _run("c.yaml"),
     "models[0].spec: unknown model 'glove-6b-5d'; did you mean glove-6b-50d"),
    ("config model file missing", {"c.yaml": "models: ['glove:/nonexistent-isoeat/v.txt']\ntests: [W6]\n"}, _run("c.yaml"),
     "models[0].spec: no such file '/nonexistent-isoeat/v.txt'"),
    ("config duplicate label", {"c.yaml": "models: [glove-6b-50d, glove-6b-50d]\ntests: [W6]\n"}, _run("c.yaml"),
     "label(s) used more than once: glove-6b-50d"),
    ("config reference corpus missing", {"c.yaml": "models: [glove-6b-50d]\ntests: [W6]\nsettings: {reference: {corpus: nocorpus.txt}}\n"},
     _run("c.yaml"), "settings.reference.corpus: no such file or folder"),
    ("config boolean wrong type", {"c.yaml": "models: [glove-6b-50d]\ntests: [W6]\nsettings: {stop_early: yess}\n"}, _run("c.yaml"),
     "settings.stop_early: expected true or false, got 'yess'"),
    ("config non-UTF-8", {"c.yaml": b"models: [gl\xffove]\n"}, _run("c.yaml"), "c.yaml: cannot read"),
    ("config layer on static model", {"c.yaml": "models: [{spec: glove-6b-50d, layer: 3}]\ntests: [W6]\n"}, _run("c.yaml"),
     "models[0].layer: only applies to contextual encoders"),
    ("config duplicate test", {"c.yaml": "models: [glove-6b-50d]\ntests: [W6, W6]\n"}, _run("c.yaml"),
     "test id(s) selected more than once: W6"),
    ("config output holds another experiment", {"c.yaml": GOOD.replace("100", "200"), "prev": "EXPERIMENT"}, _run("c.yaml", "{d}/prev"),
     "holds the results of another experiment"),
    ("config out is a file", {"c.yaml": GOOD, "o": "not a folder"}, _run("c.yaml"), "exists and is not a folder"),
    ("config without --out", {"c.yaml": GOOD}, ["run", "{d}/c.yaml"], "needs --out DIR"),
    # --- similarity benchmark files ----------------------------------------
    ("benchmark malformed line", {"b.txt": "word1\tword2\tscore\nman\twoman\t3.0\nking\tqueen\n"},
     ["similarity", "--benchmark", "{d}/b.txt"], "b.txt:3: 2 field(s), expected 3"),
    ("benchmark no in-vocabulary pairs", {"b.txt": "word1\tword2\tscore\nqqzzx\tqqzzy\t3.0\nqqzzz\tqqzzw\t2.0\nqqaa\tqqbb\t1\n"},
     ["similarity", "--benchmark", "{d}/b.txt"], "none of the 3 pairs of b.txt has both words in the vocabulary"),
    ("benchmark constant scores", {"b.txt": "word1\tword2\tscore\nman\twoman\t3.0\nking\tqueen\t3.0\ncat\tdog\t3.0\n"},
     ["similarity", "--benchmark", "{d}/b.txt"], "human scores of the pairs used are equal"),
    ("benchmark score not a number", {"b.txt": "word1\tword2\tscore\nman\twoman\tabc\n"},
     ["similarity", "--benchmark", "{d}/b.txt"], "b.txt:2: score 'abc' (column 3) is not a finite number"),
    ("benchmark empty", {"b.txt": ""}, ["similarity", "--benchmark", "{d}/b.txt"], "b.txt: no word pairs found"),
    ("benchmark missing", {}, ["similarity", "--benchmark", "{d}/nob.txt"], "nob.txt: no such benchmark file"),
    ("benchmark non-UTF-8", {"b.txt": b"word1\tword2\tscore\nman\tw\xffman\t3.0\n"},
     ["similarity", "--benchmark", "{d}/b.txt"], "b.txt:2: not valid UTF-8"),
    ("benchmark unknown name", {}, ["similarity", "--benchmark", "ws3533"], "unknown benchmark 'ws3533'; did you mean ws353?"),
    # --- SEAT templates (read before any model is loaded) --------------------
    ("templates without slot", {"t.txt": "This is {}.\nNo slot here.\n"}, ["seat", "--test", "W6", "--templates", "{d}/t.txt"],
     "t.txt:2: template 'No slot here.' has 0 '{}' slots"),
    ("templates two slots", {"t.txt": "{} and {}.\n"}, ["seat", "--test", "W6", "--templates", "{d}/t.txt"], "t.txt:1: template"),
    ("templates duplicate", {"t.txt": "This is {}.\nThis is {}.\n"}, ["seat", "--test", "W6", "--templates", "{d}/t.txt"],
     "t.txt:2: duplicate template 'This is {}.' (first on line 1)"),
    ("templates none", {"t.txt": "# only a comment\n\n"}, ["seat", "--test", "W6", "--templates", "{d}/t.txt"], "t.txt: no templates"),
    ("templates missing", {}, ["seat", "--test", "W6", "--templates", "{d}/t.txt"], "t.txt: no such templates file"),
    # --- sensitivity lists ----------------------------------------------------
    ("sensitivity eps zero", {}, ["sensitivity", "--tests", "W6", "--eps", "0"], "--eps: ε must be a finite number > 0, got '0'"),
    ("sensitivity eps empty", {}, ["sensitivity", "--tests", "W6", "--eps", ""], "--eps: empty list or empty item"),
    ("sensitivity eps negative", {}, ["sensitivity", "--tests", "W6", "--eps", "1e-3,-1"], "got '-1'"),
    ("sensitivity sizes not a number", {}, ["sensitivity", "--tests", "W6", "--reference-sizes", "x"],
     "--reference-sizes: 'x' is not a whole number"),
    ("sensitivity sizes too small", {}, ["sensitivity", "--tests", "W6", "--reference-sizes", "1"], "sizes must be whole numbers >= 2"),
    ("sensitivity unknown calibration", {}, ["sensitivity", "--tests", "W6", "--calibrations", "zcaa"], "unknown calibration 'zcaa'"),
    # --- --calibration-param abuse -------------------------------------------
    ("calibration param not a number", {}, ["weat", "--test", "W6", "--calibration", "zca", "--calibration-param", "eps=abc"],
     "eps must be a finite number >= 0, got 'abc'"),
    ("calibration param negative", {}, ["weat", "--test", "W6", "--calibration", "zca", "--calibration-param", "eps=-1"],
     "eps must be a finite number >= 0, got -1"),
    ("calibration param empty key", {}, ["weat", "--test", "W6", "--calibration", "zca", "--calibration-param", "=1"],
     "--calibration-param expects KEY=VALUE, got '=1'"),
    # --- options that would change nothing (issue 32) --------------------------
    ("eps on the raw space", {}, ["weat", "--test", "W6", "--calibration", "none", "--eps", "0.5"],
     "--eps: no effect with --calibration none"),
    ("relative eps of center", {}, ["run", "--calibration", "center", "--eps-relative", "0.1"],
     "--eps-relative: calibration 'center' has no epsilon"),
    ("force without whitener", {}, ["metric", "ripa", "--test", "W7", "--force"], "--force: no effect without --calibrator"),
    ("eps twice", {}, ["weat", "--test", "W6", "--calibration", "zca", "--eps", "0.01", "--calibration-param", "eps=0.1"],
     "--eps and --calibration-param eps=0.1 both set epsilon"),
    ("sensitivity eps sweep of center", {}, ["sensitivity", "--calibration", "center", "--eps", "1e-3,1e-2"],
     "--eps: calibration 'center' has no epsilon"),
    ("sensitivity encoder draws of static vectors", {}, ["sensitivity", "--tests", "W6", "--draw", "encoder"],
     "--draw encoder re-samples an encoder's reference sentences, but glove-6b-50d is static"),
    ("contradictory defining pairs", {}, ["metric", "ripa", "--test", "W7", "--pairs", "she:he,he:she"],
     "--pairs: pairs[1] ('he', 'she') contradicts pairs[0] ('she', 'he')"),
    # --- calibrator of another model ----------------------------------------
    ("whitener of another model", {"w.npz": "OTHER_WHITENER"}, ["weat", "--test", "W6", "--whitener", "{d}/w.npz"],
     "calibrator was fitted on model 'glove:"),
]


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory, glove):
    """A finished experiment folder and a whitener of another (small) model."""
    d = tmp_path_factory.mktemp("artefacts")
    (d / "first.yaml").write_text(OTHER)
    assert main(["run", str(d / "first.yaml"), "--out", str(d / "exp")]) == 0
    rng = np.random.default_rng(0)
    (d / "small.txt").write_text("".join(f"w{i} " + " ".join(f"{x:.4f}" for x in rng.normal(size=50)) + "\n" for i in range(300)))
    assert main(["whiten", "--model", f"glove:{d / 'small.txt'}", "--out", str(d / "w.npz"), "--reference-size", "300"]) == 0
    return d


def _materialise(d, files, artefacts):
    for name, content in files.items():
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if content == "EXPERIMENT":
            shutil.copytree(artefacts / "exp", p)
        elif content == "OTHER_WHITENER":
            shutil.copy(artefacts / "w.npz", p)
        elif isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)


def _snapshot(d):
    return {str(p): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir") for p in d.rglob("*")}


def _assert_one_line_error(code, err, expected, name=""):
    assert code == 2, (name, err)
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1, err
    assert expected in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("name, files, args, expected", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_bad_input_gives_one_line_error(tmp_path, capsys, monkeypatch, artefacts, name, files, args, expected):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path.parent / f"{tmp_path.name}-cache"))  # not in the snapshot
    _materialise(tmp_path, files, artefacts)
    argv = [a.replace("{d}", str(tmp_path)) for a in args]
    before = _snapshot(tmp_path)
    code = main(argv)
    err = capsys.readouterr().err
    _assert_one_line_error(code, err, expected, name)
    assert _snapshot(tmp_path) == before  # nothing written, nothing changed, no output folder created


# --- model folders (hf:DIR, st:DIR, hub names while offline) --------------------------------------
_BERT_CONFIG = json.dumps({"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 1,
                           "intermediate_size": 8, "vocab_size": 10})
TORCH_CASES = [
    ("hf empty folder", {"m/.keep": ""}, "hf:{d}/m", "not a Hugging Face model folder (no config.json)"),
    ("st empty folder", {"m/.keep": ""}, "st:{d}/m", "not a Hugging Face model folder (no config.json); st:"),
    ("hf config without weights", {"m/config.json": _BERT_CONFIG}, "hf:{d}/m", "cannot load this folder as a model"),
    ("st config without weights", {"m/config.json": _BERT_CONFIG}, "st:{d}/m", "sentence-transformers cannot load this folder"),
    ("hf hub name offline", {}, "hf:isoeat-nobody/no-such-model-xyz", "pass the folder: hf:/path/to/DIR"),
]


@pytest.mark.parametrize("name, files, model, expected", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_bad_model_folder(tmp_path, capsys, monkeypatch, name, files, model, expected):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    if name.startswith("st"):
        pytest.importorskip("sentence_transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path.parent / f"{tmp_path.name}-cache"))  # not in the snapshot
    for n, c in files.items():
        (tmp_path / n).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / n).write_text(c)
    before = _snapshot(tmp_path)
    code = main(["weat", "--test", "W6", "--model", model.replace("{d}", str(tmp_path))])
    err = capsys.readouterr().err
    _assert_one_line_error(code, err, expected, name)
    if "{d}" in model:
        assert str(tmp_path / "m") in err  # the folder is named
    assert _snapshot(tmp_path) == before


# --- corpora (library: isoeat.corpora.load_corpus) ----------------------------------------------
LONG = "This is a perfectly fine sentence with many words in it .\n"
CORPUS_CASES = [
    ("corpus no usable sentences", {"a.txt": "short.\nalso short.\n"}, "text:{d}/a.txt", "a.txt: no usable sentences"),
    ("corpus missing path", {}, "text:{d}/none.txt", "none.txt: no such file or folder"),
    ("corpus missing plain path", {}, "{d}/none.txt", "none.txt: no such file or folder"),
    ("corpus non-UTF-8", {"b.txt": LONG.encode() + b"Another line h\xe9re that has enough tokens to be kept .\n"}, "text:{d}/b.txt",
     "b.txt:2: not valid UTF-8"),
    ("corpus wikitext empty", {"c.txt": ""}, "wikitext:{d}/c.txt", "c.txt: no usable sentences"),
    ("corpus wikiextractor markup only", {"e.txt": "<doc id=1>\nhi\n"}, "wikiextractor:{d}/e.txt", "e.txt: no usable sentences"),
    ("corpus non-UTF-8 in folder", {"f/ok.txt": LONG, "f/z.txt": b"\xff\xfe broken line with enough tokens here ok\n"}, "text:{d}/f",
     "z.txt:1: not valid UTF-8"),
]


@pytest.mark.parametrize("name, files, spec, expected", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_bad_corpus(tmp_path, name, files, spec, expected):
    from isoeat.corpora import load_corpus

    for n, c in files.items():
        p = tmp_path / n
        p.parent.mkdir(parents=True, exist_ok=True)
        (p.write_bytes if isinstance(c, bytes) else p.write_text)(c)
    before = _snapshot(tmp_path)
    with pytest.raises(IsoeatError) as info:
        load_corpus(spec.replace("{d}", str(tmp_path)), cache=False)
    assert expected in str(info.value)
    assert "\n" not in str(info.value)
    assert _snapshot(tmp_path) == before


# --- embedding cache: corrupt entries warn and recompute, never crash -----------------------------
def _truncate(p):
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _garbage(p):
    p.write_bytes(b"not a zip file at all")


def _empty(p):
    p.write_bytes(b"")


def _wrong_key(p):
    with np.load(p) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["__key__"] = np.array("{\"other\": 1}")
    with open(p, "wb") as fh:
        np.savez(fh, **arrays)


def _nan(p):
    with np.load(p) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["vectors"] = np.full((2, 3), np.nan)
    with open(p, "wb") as fh:
        np.savez(fh, **arrays)


def _pickle(p):
    with np.load(p) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["vectors"] = np.array([{"a": 1}], dtype=object)
    with open(p, "wb") as fh:
        np.savez(fh, **arrays)


CACHE_CASES = [("cache truncated", _truncate), ("cache garbage", _garbage), ("cache empty file", _empty),
               ("cache wrong key record", _wrong_key), ("cache NaN values", _nan), ("cache pickled entry", _pickle)]


@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("name, corrupt", CACHE_CASES, ids=[c[0] for c in CACHE_CASES])
def test_corrupt_cache_entry_warns_and_recomputes(tmp_path, name, corrupt):
    from isoeat.backends.cache import EmbeddingCache

    cache = EmbeddingCache(tmp_path, enabled=True)
    parts = {"model": "m", "word": "x"}
    p = cache.put("static", parts, {"vectors": np.ones((2, 3))})
    corrupt(p)
    with pytest.warns(IsoeatWarning, match="unreadable or corrupt"):
        assert cache.get("static", parts) is None
    assert cache.corrupt == 1 and not p.exists()  # the bad file is gone
    cache.put("static", parts, {"vectors": np.ones((2, 3))})  # recompute and store
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(cache.get("static", parts)["vectors"], np.ones((2, 3)))


TOTAL_CASES = len(CLI_CASES) + len(TORCH_CASES) + len(CORPUS_CASES) + len(CACHE_CASES)


def test_catalogue_size():
    assert TOTAL_CASES >= 30
    names = [c[0] for c in CLI_CASES + TORCH_CASES + CORPUS_CASES + CACHE_CASES]
    assert len(set(names)) == len(names)
