"""Word-set files and experiment configs: every word stays a word, no YAML bombs, no FIFOs, bounded messages."""

from __future__ import annotations

import json
import os
import time
import unicodedata

import pytest

import isoeat
from isoeat import ConfigError, DataFormatError, IsoeatFileNotFoundError
from isoeat.experiments.config import load_config, parse_config
from isoeat.wordsets import load_tests_from_file

SETS = "X: [he, him]\nY: [she, her]\nA: [work, job]\nB: [home, kid]\n"


def _load(tmp_path, text, name="t.yaml"):
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return load_tests_from_file(p)


def _config(tmp_path, text, name="exp.yaml"):
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return load_config(p)


# --------------------------------------------------------------------------- every word stays a word
def test_yaml_words_are_never_booleans_numbers_or_nulls(tmp_path):
    (t,) = _load(tmp_path, "id: null\nbias_type: yes\nX: [no, on]\nY: [off, yes]\nA: [2019, 1e3]\n"
                           "B: [0x1F, '007', 2019-01-01]\ncitation: 3.0\ntitle: true\n")
    assert t.id == "t" and t.bias_type == "yes" and t.citation == "3.0" and t.title == "true"
    assert t.X.words == ("no", "on") and t.Y.words == ("off", "yes")
    assert t.A.words == ("2019", "1e3") and t.B.words == ("0x1F", "007", "2019-01-01")
    for ws in t.sets().values():
        assert all(type(w) is str for w in ws.words)


def test_json_non_string_word_names_file_test_and_set(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"id": "mine", "X": {"name": "Male", "words": [1, 2]}, "Y": ["a", "b"],
                             "A": ["c", "d"], "B": ["e", "f"]}))
    with pytest.raises(DataFormatError) as info:
        load_tests_from_file(p)
    msg = str(info.value)
    assert "t.json" in msg and "mine" in msg and "'X' (Male)" in msg and "item 1" in msg


@pytest.mark.parametrize("name, text", [
    ("t.yaml", "X: [a, b]\nY: [c, d]\nA: [e, f]\nB: [g, h]\nX: [i, j]\n"),
    ("t.json", '{"X": ["a", "b"], "Y": ["c", "d"], "A": ["e", "f"], "B": ["g", "h"], "X": ["i", "j"]}'),
    ("t.json", '{"X": {"name": "M", "words": ["a"], "words": ["b", "c"]}, "Y": ["c", "d"], "A": ["e"], "B": ["g"]}'),
])
def test_duplicate_keys_in_word_set_files_are_refused(tmp_path, name, text):
    with pytest.raises(DataFormatError, match=r"duplicate key '(X|words)'"):
        _load(tmp_path, text, name)


def test_bom_is_stripped_and_words_are_nfc(tmp_path):
    nfd = unicodedata.normalize("NFD", "café")
    with pytest.warns(isoeat.IsoeatWarning, match="NFC"):
        (t,) = _load(tmp_path, ("\ufeff" + SETS.replace("job", nfd)).encode("utf-8"))
    assert t.A.words == ("work", "café") and unicodedata.is_normalized("NFC", t.A.words[1])
    (t,) = _load(tmp_path, ("\ufeff" + json.dumps({"X": ["a", "b"], "Y": ["c", "d"], "A": ["e"], "B": ["f"]})), "t.json")
    assert t.X.words == ("a", "b")


def test_metadata_must_be_text(tmp_path):
    with pytest.raises(DataFormatError, match=r"citation: expected a string"):
        _load(tmp_path, '{"citation": [1, 2], "X": ["a"], "Y": ["b"], "A": ["c"], "B": ["d"]}', "t.json")


# --------------------------------------------------------------------------- YAML bombs, deep files, FIFOs
_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))


def test_word_set_alias_bomb_is_refused_quickly(tmp_path):
    text = "X: [he, him]\nY: [she, her]\nA: [work, job]\nB: [home, kid]\ncitation: *i\n" + _LAUGHS
    t0 = time.perf_counter()
    with pytest.raises(DataFormatError) as info:
        _load(tmp_path, text)
    assert time.perf_counter() - t0 < 2
    msg = str(info.value)
    assert "t.yaml:" in msg and "alias" in msg and "\n" not in msg and len(msg) < 300


def test_config_alias_bomb_is_refused_quickly(tmp_path):
    t0 = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        _config(tmp_path, _LAUGHS + "models: *i\n")
    assert time.perf_counter() - t0 < 2
    msg = str(info.value)
    assert "exp.yaml" in msg and "alias" in msg and "line" in msg and len(msg) < 300


def test_config_error_message_is_bounded_for_a_huge_value():
    bomb: list = ["x"] * 10
    for _ in range(9):  # 10**10 leaves, shared: repr() of it would never finish
        bomb = [bomb] * 10
    t0 = time.perf_counter()
    for settings in ({"permutations": bomb}, {"stop_early": bomb}, {"method": bomb}, {"alpha": {"a": bomb}}):
        with pytest.raises(ConfigError) as info:
            parse_config({"models": ["glove-6b-50d"], "tests": ["W6"], "settings": settings})
        msg = str(info.value)
        assert len(msg) < 300 and ("(list)" in msg or "(dict)" in msg), msg
    with pytest.raises(ConfigError) as info:
        parse_config({"models": ["glove-6b-50d"], "tests": ["W6"], "settings": {"x" * 10**6: 1}})
    assert len(str(info.value)) < 600
    assert time.perf_counter() - t0 < 2


@pytest.mark.parametrize("name", ["deep.yaml", "deep.json"])
def test_deep_word_set_file_is_one_line_error(tmp_path, name):
    text = '{"X": ' + "[" * 5000 + "]" * 5000 + ', "Y": ["a"], "A": ["b"], "B": ["c"]}'
    with pytest.raises(DataFormatError, match="nest"):
        _load(tmp_path, text, name)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "t.yaml"
    os.mkfifo(fifo)
    with pytest.raises(IsoeatFileNotFoundError, match="FIFO"):
        load_tests_from_file(fifo)
    with pytest.raises(IsoeatFileNotFoundError, match="FIFO"):
        load_config(fifo)


def test_config_folder_is_named_as_a_folder(tmp_path):
    with pytest.raises(IsoeatFileNotFoundError, match="is a folder"):
        load_config(tmp_path)


# --------------------------------------------------------------------------- configs: strings stay strings, numbers parse
def test_config_strings_stay_strings_and_numbers_parse(tmp_path):
    (tmp_path / "t.yaml").write_text(SETS)
    cfg = _config(tmp_path, "name: 2019\ndescription: yes\nmodels: [{spec: glove-6b-50d, label: on}]\n"
                            "tests: [t.yaml]\ncalibrations: [none, zca]\n"
                            "settings: {permutations: 1000, eps: 1e-3, alpha: 0.05, seed: 0, stop_early: true, "
                            "layer: -1, reference: {size: 100_000}, ci_level: .95, resample_attributes: false}\n")
    assert cfg.name == "2019" and cfg.description == "yes" and cfg.models[0].label == "on"
    s = cfg.settings
    assert (s.permutations, s.eps, s.alpha, s.seed, s.stop_early, s.layer, s.reference.size, s.ci_level) == (
        1000, 1e-3, 0.05, 0, True, -1, 100_000, 0.95)
    assert type(s.permutations) is int and type(s.eps) is float and s.resample_attributes is False


def test_config_options_keep_their_types_and_refuse_yaml11_booleans(tmp_path):
    cfg = _config(tmp_path, "models: [{spec: glove-6b-50d, options: {lowercase_fallback: false, top: 3}}]\ntests: [W6]\n")
    assert cfg.models[0].options == {"lowercase_fallback": False, "top": 3}
    for value in ("no", '"no"', "on", "Off"):
        with pytest.raises(ConfigError, match=r"models\[0\]\.options\.lowercase_fallback: .*true or false"):
            _config(tmp_path, f"models: [{{spec: glove-6b-50d, options: {{lowercase_fallback: {value}}}}}]\ntests: [W6]\n")


def test_config_same_protocol_as_before_for_usual_files(tmp_path):
    text = ("models: [glove-6b-50d]\ntests: [W6]\ncalibrations: [none, {name: zca, params: {eps: 0.01}}]\n"
            "settings: {permutations: 100000, seed: 0, alpha: 0.05, eps: 0.001, stop_early: no}\n")
    cfg = _config(tmp_path, text)
    same = parse_config({"models": ["glove-6b-50d"], "tests": ["W6"],
                         "calibrations": ["none", {"name": "zca", "params": {"eps": 0.01}}],
                         "settings": {"permutations": 100000, "seed": 0, "alpha": 0.05, "eps": 0.001,
                                      "stop_early": False}})
    assert cfg.protocol_hash() == same.protocol_hash()
    assert cfg.calibrations[1].params == {"eps": 0.01}


def test_config_duplicate_key_and_bom(tmp_path):
    cfg = _config(tmp_path, "\ufeffmodels: [glove-6b-50d]\ntests: [W6]\n")
    assert not cfg.text.startswith("\ufeff")
    with pytest.raises(ConfigError, match=r"duplicate key 'seed' \(line 4; first on line 3\)"):
        _config(tmp_path, "models: [glove-6b-50d]\nsettings:\n  seed: 1\n  seed: 2\n")
