"""One test-file format (issues 42 item 2 and 44): the template, several tests per file, FILE:ID, and the
output of ``isoeat tests --format json|yaml`` read back as it is.

The expected d of the round trip is computed here from scratch (numpy on the model's vectors: Caliskan et al.'s
effect size, mean of s over X minus mean over Y, over the sample SD of s on X ∪ Y, ddof=1), not taken from
isoeat's output.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import isoeat
from isoeat.cli import main
from isoeat.wordsets import get_test, load_tests_from_file, resolve_tests
from isoeat.wordsets._library import library_tests

ONE = {"X": ["he", "him"], "Y": ["she", "her"], "A": ["work", "job"], "B": ["home", "kid"]}


def _d(model, test) -> float:
    """WEAT effect size from the vectors (Caliskan et al. 2017, eq. in §Methods; sample SD, ddof=1)."""
    def unit(words):
        v = model.lookup(words).vectors
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    X, Y, A, B = (unit(test.sets()[r].words) for r in "XYAB")
    s = lambda W: (W @ A.T).mean(axis=1) - (W @ B.T).mean(axis=1)  # noqa: E731 - the paper's s(w, A, B)
    sx, sy = s(X), s(Y)
    return float((sx.mean() - sy.mean()) / np.concatenate([sx, sy]).std(ddof=1))


def _out(capsys, argv) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


# --- 1: the template ---------------------------------------------------------------------------------------
def test_template_is_commented_and_loads_back_as_is(tmp_path, capsys, glove):
    text = _out(capsys, ["tests", "--template"])
    assert text.startswith("# ") and text.count("\n#") >= 10  # commented
    for key in ("id:", "bias_type:", "title:", "citation:", "provenance:", "pairs:", "name:", "words:"):
        assert key in text, key  # every optional key is shown
    f = tmp_path / "t.yaml"
    f.write_text(text)
    tests = load_tests_from_file(f)
    assert [t.id for t in tests] == ["math-arts-gender", "flowers-insects"]
    assert tests[0].X.name == "Math" and tests[0].pairs == (("man", "woman"), ("boy", "girl"))
    assert tests[1].X.name == "X" and tests[1].bias_type == "Custom"
    # every word of the template is in the bundled model, so the example measures what it shows
    for t in tests:
        assert all(not glove.lookup(ws.words).missing for ws in t.sets().values()), t.id
    out = _out(capsys, ["weat", "--test", str(f), "--calibration", "none", "--format", "json"])
    assert [r["test"] for r in json.loads(out)] == ["math-arts-gender", "flowers-insects"]


def test_help_of_every_command_taking_a_test_file_points_to_the_template(capsys):
    for cmd in ("weat", "scweat", "run", "seat", "ceat", "metric", "sensitivity"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        assert "isoeat tests --template" in " ".join(capsys.readouterr().out.split()), cmd


# --- 2: several tests per file, FILE:ID --------------------------------------------------------------------
def test_a_top_level_list_holds_several_tests(tmp_path):
    f = tmp_path / "two.json"
    f.write_text(json.dumps([{"id": "a", **ONE}, ONE]))
    tests = load_tests_from_file(f)
    assert [t.id for t in tests] == ["a", "two-2"]  # an item without an id is STEM-i, as under tests:


def test_the_tests_key_and_the_list_give_the_same_tests(tmp_path):
    (tmp_path / "l.yaml").write_text(json.dumps([{"id": "a", **ONE}, {"id": "b", **ONE}]))
    (tmp_path / "m.yaml").write_text(json.dumps({"tests": [{"id": "a", **ONE}, {"id": "b", **ONE}]}))
    lst, mapping = (load_tests_from_file(tmp_path / n) for n in ("l.yaml", "m.yaml"))
    assert [(t.id, t.sets()) for t in lst] == [(t.id, t.sets()) for t in mapping]


def test_file_colon_id_names_one_test(tmp_path, capsys):
    f = tmp_path / "two.yaml"
    f.write_text(json.dumps([{"id": "Career", **ONE}, {"id": "other", **ONE}]))
    assert [t.id for t in resolve_tests(f"{f}:career")] == ["Career"]  # ids are case-insensitive
    assert [t.id for t in resolve_tests(f"W6,{f}:other")] == ["W6", "other"]
    assert isoeat.wordsets.as_test(f"{f}:other").id == "other"
    assert [t.id for t in isoeat.wordsets.as_tests([f"{f}:other", "W1"])] == ["other", "W1"]
    out = _out(capsys, ["weat", "--test", f"{f}:other", "--calibration", "none", "--format", "json"])
    assert [r["test"] for r in json.loads(out)] == ["other"]


def test_a_file_named_with_a_colon_is_still_a_file(tmp_path):
    f = tmp_path / "a:b.yaml"
    f.write_text(json.dumps({"id": "x", **ONE}))
    assert [t.id for t in resolve_tests(str(f))] == ["x"]


def test_scweat_attributes_names_the_one_test_of_a_file(tmp_path, capsys):
    f = tmp_path / "two.yaml"
    f.write_text(json.dumps([{"id": "a", **ONE, "A": ["career", "salary"]}, {"id": "b", **ONE}]))
    out = _out(capsys, ["scweat", "--words", "nurse", "--attributes", f"{f}:b", "--calibration", "none",
                        "--format", "json"])
    (rec,) = json.loads(out)
    assert rec["A"] == "A" and rec["test"] == "b"


# --- 3: tests --format json|yaml read back ------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_builtin_tests_round_trip_with_the_same_words_and_d(tmp_path, capsys, glove, fmt):
    f = tmp_path / f"w.{fmt}"
    f.write_text(_out(capsys, ["tests", "--format", fmt]))
    back = load_tests_from_file(f)
    builtin = resolve_tests(None) + list(library_tests().values())  # W1..W10, then the library (docs/library.md)
    assert [t.id for t in back][:10] == [f"W{i}" for i in range(1, 11)]
    assert [t.id for t in back] == [t.id for t in builtin]
    for b, t in zip(back, builtin):
        assert (b.id, b.bias_type, b.title, b.citation, b.provenance, b.pairs) == \
               (t.id, t.bias_type, t.title, t.citation, t.provenance, t.pairs)
        assert b.sets() == t.sets()  # names and words, in order
        assert b.source.startswith(str(f))
        assert _d(glove, b) == pytest.approx(_d(glove, t), abs=0)
        d = isoeat.weat(glove, b, method="monte-carlo", n_permutations=100, rng=0).effect_size
        assert d == pytest.approx(_d(glove, t), rel=1e-9, abs=1e-12)
    # and printed again, the same text (a fixed point), but for nothing
    again = _out(capsys, ["tests", "--show", str(f), "--format", fmt])
    assert again == f.read_text()


def test_show_selects_tests_and_files(tmp_path, capsys):
    text = _out(capsys, ["tests", "--show", "W6,w7", "--format", "yaml"])
    f = tmp_path / "w.yaml"
    f.write_text(text)
    assert [t.id for t in load_tests_from_file(f)] == ["W6", "W7"]
    assert load_tests_from_file(f)[0].sets() == get_test("W6").sets()
    table = _out(capsys, ["tests", "--show", str(f)])
    assert "W6" in table and "W7" in table and "W1 " not in table


def test_yaml_output_quotes_words_yaml_would_read_otherwise(tmp_path, capsys):
    f = tmp_path / "odd.json"
    f.write_text(json.dumps({"id": "odd", "X": ["null", "~"], "Y": ["yes", "1e3"], "A": ["#tag", "a: b"],
                             "B": ["- x", "'q'"]}))
    out = _out(capsys, ["tests", "--show", str(f), "--format", "yaml"])
    g = tmp_path / "odd.yaml"
    g.write_text(out)
    assert load_tests_from_file(g)[0].sets() == load_tests_from_file(f)[0].sets()


def test_old_json_output_with_source_still_loads(tmp_path):
    old = [{**get_test("W6").to_dict()}]  # what `isoeat tests --format json` printed before: source included
    f = tmp_path / "old.json"
    f.write_text(json.dumps(old))
    (t,) = load_tests_from_file(f)
    assert t.sets() == get_test("W6").sets() and t.source.startswith(str(f))  # the file read, not "builtin"


def test_a_config_names_one_test_of_a_file_relative_to_itself(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "two.yaml").write_text(json.dumps([{"id": "a", **ONE}, {"id": "b", **ONE}]))
    (tmp_path / "c.yaml").write_text("models: [glove-6b-50d]\ntests: [W6, 'sub/two.yaml:B']\n")
    assert [t.id for t in isoeat.load_config(tmp_path / "c.yaml").tests] == ["W6", "b"]
    (tmp_path / "d.yaml").write_text("models: [glove-6b-50d]\ntests: ['sub/two.yaml']\n")
    assert [t.id for t in isoeat.load_config(tmp_path / "d.yaml").tests] == ["a", "b"]
    (tmp_path / "e.yaml").write_text("models: [glove-6b-50d]\ntests: ['sub/two.yaml:c']\n")
    with pytest.raises(isoeat.ConfigError, match=r"tests\[0\].*no test with id 'c' in this file \(it holds a, b\)"):
        isoeat.load_config(tmp_path / "e.yaml")
