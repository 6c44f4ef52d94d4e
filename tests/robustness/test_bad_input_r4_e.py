"""Bad-input catalogue, round 4 (issue 40), group E: labels that look alike or hide characters, unknown keys
inside word-set files, did-you-mean without a bound, and the Python entry points given a dict or no path.

CLI cases end in a one-line isoeat error, exit 2, a message naming the problem (file, key or label), no
traceback and nothing written. Library cases raise one ConfigError line naming the parameter.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import isoeat

from ._oneline import assert_one_line_error

SETS = "X: [he, him]\nY: [she, her]\nA: [work, job]\nB: [home, kid]\n"
BASE = "tests: [W6]\ncalibrations: [none]\nsettings: {permutations: 100}\n"


def _models(*labels: str) -> str:
    """A config with one glove-6b-50d entry per label (YAML double-quoted: \\u escapes are read by YAML)."""
    return "models: [" + ", ".join(f'{{spec: glove-6b-50d, label: "{lab}"}}' for lab in labels) + "]\n" + BASE


def _run(name="c.yaml"):
    return ["run", "{d}/" + name, "--out", "{d}/o"]


def _weat(name="t.yaml"):
    return ["weat", "--test", "{d}/" + name]


_SENT = {"targ1": {"category": "Men", "examples": ["he", "him"]}, "targ2": {"category": "Women", "examples": ["she", "her"]},
         "attr1": {"category": "Work", "examples": ["work", "job"]}, "attr2": {"category": "Home", "examples": ["home", "kid"]}}


def _sent(**change):
    data = json.loads(json.dumps(_SENT))
    for k, v in change.items():
        if isinstance(v, dict) and k in data:
            data[k].update(v)
        else:
            data[k] = v
    return json.dumps(data)


# --- 16: labels that look alike, labels that hide characters ------------------------------------------------
LABEL_CASES = [
    ("label zero-width space twin", {"c.yaml": _models("GloVe", "GloVe\\u200b")}, _run(),
     "model labels 'GloVe' and 'GloVe\\u200b' look alike"),
    ("label NFD twin", {"c.yaml": _models("caf\\u00e9", "cafe\\u0301")}, _run(), "model labels 'caf\\xe9' and 'cafe\\u0301' look alike"),
    ("label full-width twin", {"c.yaml": _models("GloVe", "\\uff27loVe")}, _run(), "model labels 'GloVe' and '\\uff27loVe' look alike"),
    ("label soft-hyphen and case twin", {"c.yaml": _models("glove", "GLO\\u00adVE")}, _run(), "look alike"),
    ("label right-to-left override", {"c.yaml": _models("glove\\u202efdp.exe")}, _run(),
     "model label 'glove\\u202efdp.exe' contains U+202E"),
    ("label bidi isolate", {"c.yaml": _models("a\\u2067b")}, _run(), "contains U+2067"),
    ("label NUL", {"c.yaml": _models("glo\\0ve")}, _run(), "model label 'glo\\x00ve' contains U+0000"),
    ("label escape sequence", {"c.yaml": _models("\\e[31mred")}, _run(), "contains U+001B"),
    ("test id right-to-left override", {"t.yaml": 'id: "W\\u202e6"\n' + SETS}, _weat(), "t.yaml: test id 'W\\u202e6' contains U+202E"),
    ("word with NUL", {"t.yaml": SETS.replace("job", '"j\\0ob"')}, _weat(), "t.yaml: test 't': word set 'A': word 'j\\x00ob' contains U+0000"),
    ("set name with bidi override", {"t.yaml": SETS.replace("X: [he, him]", 'X: {name: "Men\\u202e", words: [he, him]}')}, _weat(),
     "t.yaml: test 't': word set name 'Men\\u202e' contains U+202E"),
    ("test id control character", {"t.yaml": 'id: "W\\t6"\n' + SETS}, _weat(), "t.yaml: test id 'W\\t6' contains U+0009"),
]

# --- 17: unknown keys inside a word-set file ----------------------------------------------------------------------
WORDSET_KEY_CASES = [
    ("word-set set unknown key", {"t.yaml": SETS.replace("X: [he, him]", "X: {name: Men, words: [he, him], nmae: M}")},
     _weat(), "t.yaml: test 't': set 'X': unknown key(s) ['nmae']; did you mean 'name'?"),
    ("word-set set extra key beside words", {"t.yaml": SETS.replace("A: [work, job]", "A: {words: [work, job], weight: 2}")},
     _weat(), "set 'A': unknown key(s) ['weight']"),
    ("word-set set words and examples", {"t.yaml": SETS.replace("A: [work, job]", "A: {words: [work, job], examples: [pay]}")},
     _weat(), "set 'A': give 'words' or 'examples', not both"),
    ("word-set top-level typo", {"t.yaml": SETS + "citaton: me\n"}, _weat(), "unknown key(s) ['citaton']; did you mean 'citation'?"),
    ("word-set tests list unknown key", {"t.yaml": "tests:\n- " + SETS.replace("\n", "\n  ").rstrip() + "\ntest: 1\n"}, _weat(),
     "t.yaml: unknown key(s) ['test']; did you mean 'tests'?"),
    ("sent-bias unknown top-level key", {"t.jsonl": _sent(bias_typ="gender")}, _weat("t.jsonl"),
     "t.jsonl: test 't': unknown key(s) ['bias_typ']; did you mean 'bias_type'?"),
    ("sent-bias set unknown key", {"t.jsonl": _sent(attr1={"exampels": ["pay"]})}, _weat("t.jsonl"),
     "set 'attr1': unknown key(s) ['exampels']; did you mean 'examples'?"),
]


@pytest.mark.parametrize("name, files, args, expected", LABEL_CASES + WORDSET_KEY_CASES,
                         ids=[c[0] for c in LABEL_CASES + WORDSET_KEY_CASES])
def test_bad_input_gives_one_line_error(tmp_path, capsys, monkeypatch, name, files, args, expected):
    assert_one_line_error(tmp_path, capsys, monkeypatch, name, files, args, expected)


def test_the_documented_word_set_keys_still_load(tmp_path):
    (tmp_path / "t.yaml").write_text("id: mine\nbias_type: Gender\ncitation: me\ntitle: T\nprovenance: p\n"
                                     "pairs: [[he, she], [him, her]]\nX: {name: Men, words: [he, him]}\nY: [she, her]\n"
                                     "A: {category: Work, examples: [work, job]}\nB: [home, kid]\n", encoding="utf-8")
    (tmp_path / "s.jsonl").write_text(_sent(bias_type="Gender"), encoding="utf-8")
    (tmp_path / "w.yaml").write_text("tests:\n- " + SETS.replace("\n", "\n  ").rstrip() + "\n", encoding="utf-8")
    t, = isoeat.load_tests_from_file(tmp_path / "t.yaml")
    assert (t.X.name, t.A.name, t.A.words, t.citation) == ("Men", "Work", ("work", "job"), "me")
    s, = isoeat.load_tests_from_file(tmp_path / "s.jsonl")
    assert (s.bias_type, s.X.name, s.B.words) == ("Gender", "Men", ("home", "kid"))
    assert len(isoeat.load_tests_from_file(tmp_path / "w.yaml")) == 1


def test_distinct_labels_are_still_distinct():
    from isoeat._names import check_distinct

    # labels a reader tells apart stay allowed (escaped labels that differ in case keep two hashed file names)
    check_distinct(["GloVe", "GloVe-2", "glove_x", "Δ", "日本語", "café-2", "z 1", "Z 1"], "model labels")
    with pytest.raises(isoeat.ConfigError, match="differ only in case"):
        check_distinct(["GloVe", "glove"], "model labels")


# --- 20: did-you-mean bounded across the dropped words of a test ------------------------------------------------
# (name, words missing from X, calls of suggest_words expected, "first N" note expected); SUGGEST_WORDS = 20
SUGGEST_CASES = [
    ("suggestions below the cap", 19, 19, False),
    ("suggestions at the cap", 20, 20, False),
    ("suggestions one past the cap", 21, 20, True),
    ("suggestions for 100 dropped words", 100, 20, True),
]


def _toy():
    from isoeat.backends.static import StaticVectors

    words = ["he", "him", "she", "her", "work", "job", "home", "kid"]
    rng = np.random.default_rng(0)
    return StaticVectors(words, rng.normal(size=(len(words), 8)), name="toy")


@pytest.mark.parametrize("name, n_missing, calls, note", SUGGEST_CASES, ids=[c[0] for c in SUGGEST_CASES])
def test_did_you_mean_has_a_budget_per_test(monkeypatch, name, n_missing, calls, note):
    import isoeat.backends.static as static
    from isoeat._validate import SUGGEST_WORDS
    from isoeat.stats.results import with_suggestions
    from isoeat.wordsets import AssociationTest, WordSet

    assert SUGGEST_WORDS == 20
    seen: list[str] = []
    real = static.suggest_words
    monkeypatch.setattr(static, "suggest_words", lambda w, rank, **kw: (seen.append(w), real(w, rank, **kw))[1])
    # missing words split over two roles: the budget is shared by the test's sets, in role order
    miss = [f"hex{i}" for i in range(n_missing)]
    x_miss, b_miss = miss[: n_missing // 2], miss[n_missing // 2:]
    test = AssociationTest("T", "Custom", WordSet("X", ("he", "him", *x_miss)), WordSet("Y", ("she", "her")),
                           WordSet("A", ("work", "job")), WordSet("B", ("home", "kid", *b_miss)))
    r = isoeat.weat(_toy(), test, min_coverage=0.0, n_permutations=10, rng=0)
    assert len(r.dropped) == n_missing
    assert len(seen) == calls  # each lookup of a word's near entries counted once
    assert seen == [w for w in miss][:calls]
    shown = with_suggestions(r.dropped, r.suggestions)
    assert shown[-1] == ("(suggestions for the first 20)" if note else shown[-1])
    assert ("(suggestions for the first 20)" in shown) is note


def test_sc_weat_target_words_have_the_budget_too(monkeypatch):
    import isoeat.backends.static as static

    seen: list[str] = []
    real = static.suggest_words
    monkeypatch.setattr(static, "suggest_words", lambda w, rank, **kw: (seen.append(w), real(w, rank, **kw))[1])
    from isoeat.wordsets import WordSet

    with pytest.raises(isoeat.CoverageError, match=r"\(suggestions for the first 20\)"):
        isoeat.sc_weat(_toy(), [f"hex{i}" for i in range(50)], (WordSet("A", ("work", "job")), WordSet("B", ("home", "kid"))))
    assert len(seen) == 20


# --- 22: the public entry points given a mapping, or no path at all ---------------------------------------------
API_CASES = [
    ("load_config of a number", "load_config", (3,), "load_config: path must be a path (str or os.PathLike) or a mapping"),
    ("load_config of bytes", "load_config", (b"c.yaml",), "load_config: path must be a path"),
    ("load_config of a list", "load_config", (["c.yaml"],), "got ['c.yaml'] (list)"),
    ("load_experiment of a mapping", "load_experiment", ({"models": []},), "load_experiment: out must be a path"),
    ("load_tests_from_file of None", "load_tests_from_file", (None,), "load_tests_from_file: path must be a path"),
    ("load_calibrator of a number", "load_calibrator", (1,), "path must be a path (str or os.PathLike) of a calibrator .npz file, got 1 (int)"),
    ("load_whitener of a list", "load_whitener", (["w.npz"],), "path must be a path (str or os.PathLike) of a calibrator .npz file, got ['w.npz'] (list)"),
    ("save_calibrator to None", "save_calibrator", ("CAL", None), "path must be a path (str or os.PathLike) of a .npz file to write"),
    ("save_calibrator to an empty path", "save_calibrator", ("CAL", ""), "path must be a path (str or os.PathLike) of a .npz file to write, got ''"),
    ("run_experiment of None", "run_experiment", (None, "OUT"), "run_experiment: config must be an ExperimentConfig, a mapping"),
    ("run_experiment out of None", "run_experiment", ({"models": ["glove-6b-50d"], "tests": ["W6"]}, None),
     "run_experiment: out must be a path"),
    ("run_experiment of a bad mapping", "run_experiment", ({"modles": ["glove-6b-50d"], "tests": ["W6"]}, "OUT"),
     "modles: unknown key; did you mean 'models'?"),
]


def _calibrator():
    return isoeat.fit_calibrator(_toy(), "center")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name, fn, args, expected", API_CASES, ids=[c[0] for c in API_CASES])
def test_entry_point_refuses_in_one_line(tmp_path, name, fn, args, expected):
    args = tuple(str(tmp_path / "o") if a == "OUT" else _calibrator() if a == "CAL" else a for a in args)
    with pytest.raises(isoeat.ConfigError) as info:
        getattr(isoeat, fn)(*args)
    assert expected in str(info.value) and "\n" not in str(info.value), str(info.value)
    assert not (tmp_path / "o").exists()


def test_run_experiment_takes_a_mapping_as_the_file_would_be_read(tmp_path, glove):
    cfg = {"models": ["glove-6b-50d"], "tests": ["W6"], "calibrations": ["none"], "settings": {"permutations": 100}}
    (tmp_path / "c.yaml").write_text(json.dumps(cfg), encoding="utf-8")  # JSON is YAML
    from_dict = isoeat.run_experiment(cfg, tmp_path / "a", progress=False)
    from_file = isoeat.run_experiment(tmp_path / "c.yaml", tmp_path / "b", progress=False)
    assert from_dict.ok and from_file.ok
    d_dict = isoeat.load_experiment(tmp_path / "a").weat[0]["effect_size"]
    d_file = isoeat.load_experiment(tmp_path / "b").weat[0]["effect_size"]
    # independent check: WEAT d of W6 on the raw vectors, from scratch (Caliskan et al. 2017, eq. 2; ddof=1)
    t = isoeat.get_test("W6")
    unit = {w: v / np.linalg.norm(v) for w, v in zip(
        [*t.X.words, *t.Y.words, *t.A.words, *t.B.words],
        glove.lookup([*t.X.words, *t.Y.words, *t.A.words, *t.B.words]).vectors)}
    A = np.array([unit[w] for w in t.A.words])
    B = np.array([unit[w] for w in t.B.words])
    s = {w: (A @ unit[w]).mean() - (B @ unit[w]).mean() for w in [*t.X.words, *t.Y.words]}
    sx, sy = [s[w] for w in t.X.words], [s[w] for w in t.Y.words]
    d = (np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=1)
    assert d_dict == d_file == pytest.approx(d, abs=1e-9)


def test_a_hidden_character_in_a_label_prints_as_its_escape():
    # labels from the Python API (a model's name) reach the tables without the config's checks
    from isoeat.backends.static import StaticVectors
    from isoeat.reporting.html import _e
    from isoeat.reporting.tables import weat_table
    from isoeat.wordsets import AssociationTest, WordSet

    words = ["he", "him", "she", "her", "work", "job", "home", "kid"]
    model = StaticVectors(words, np.random.default_rng(0).normal(size=(8, 8)), name="toy\u202eexe\x00")
    test = AssociationTest("T", "Custom", WordSet("X", ("he", "him")), WordSet("Y", ("she", "her")),
                           WordSet("A", ("work", "job")), WordSet("B", ("home", "kid")))
    table = weat_table([isoeat.weat(model, test, n_permutations=10, rng=0)])
    assert "toy\\u202eexe\\x00" in table and "\u202e" not in table and "\x00" not in table
    assert _e("<b>\u2067x") == "&lt;b&gt;\\u2067x"
