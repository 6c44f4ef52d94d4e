"""The adversary of the test library (issue 42 item 1): what a demanding user and a hostile file did to it.

Each test was written failing, against the library as merged, before its fix. Expected values come from the
test's own construction (a file written here, with lists chosen to differ from or equal a built-in's), never
from the program's output.
"""

from __future__ import annotations

import json

import pytest

from isoeat._errors import DataFormatError
from isoeat.cli import main
from isoeat.wordsets import get_test, load_tests_from_file, resolve_tests
from isoeat.wordsets._library import describe_test

# four words per set, none of them W6's: a user's own test
_OWN = "X: [math, algebra]\nY: [poetry, art]\nA: [male, man]\nB: [female, woman]\n"


def _one_line_error(capsys, argv: list[str], *needles: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


# --- 1. a user's test under a built-in's id ------------------------------------------------------------------
# Before: `id: W6` with lists of the user's own was measured and printed as "W6", the same row label as the
# built-in W6 (Caliskan et al. 2017); a report, a paper table or a reader could not tell them apart.
@pytest.mark.parametrize(
    "test_id, builtin",
    [
        ("W6", "W6"),
        ("w6", "W6"),  # ids are case-insensitive (the registry's rule)
        ("Ｗ6", "W6"),  # full-width W: the same id after NFKC (look_alike_key)
        ("W6\u200b", "W6"),  # a zero-width space (category Cf) after it: prints as W6
        ("occupations-Bolukbasi", "occupations-bolukbasi"),  # a library test
    ],
)
def test_a_file_test_under_a_builtin_id_with_other_lists_is_refused(tmp_path, capsys, test_id, builtin):
    f = tmp_path / "mine.yaml"
    f.write_text(f"id: {json.dumps(test_id)}\n{_OWN}", "utf-8")
    with pytest.raises(DataFormatError, match=f"built-in test {builtin}"):
        load_tests_from_file(f)
    _one_line_error(capsys, ["weat", "--test", str(f), "--calibration", "none"], str(f), builtin)


def test_a_sent_bias_file_whose_stem_is_a_builtin_id_is_refused(tmp_path):
    # sent-bias layout: the id is the file's stem; w6.jsonl with other lists would be printed as W6
    sets = {k: {"category": k, "examples": [f"{k}a", f"{k}b"]} for k in ("targ1", "targ2", "attr1", "attr2")}
    f = tmp_path / "w6.jsonl"
    f.write_text(json.dumps(sets), "utf-8")
    with pytest.raises(DataFormatError, match="built-in test W6"):
        load_tests_from_file(f)


def test_a_builtin_written_to_a_file_keeps_its_id_when_its_lists_are_unchanged(tmp_path, capsys):
    # the documented round trip (isoeat tests --show W6 --format yaml > w6.yaml): the same lists, the same test
    f = tmp_path / "w6.yaml"
    assert main(["tests", "--show", "W6", "--format", "yaml"]) == 0
    text = capsys.readouterr().out
    f.write_text(text.replace("title: Male vs. female names", "title: my copy"), "utf-8")
    (back,) = load_tests_from_file(f)
    assert back.id == "W6" and back.sets() == get_test("W6").sets()
    # one word changed: no longer W6's lists
    f.write_text(text.replace("- Bill", "- William").replace(", Bill]", ", William]"), "utf-8")
    with pytest.raises(DataFormatError, match=r"built-in test W6.*X.*Bill"):
        load_tests_from_file(f)


# --- 2. --show prints a file's text fields as they are ----------------------------------------------------------
# Before: title, licence, citation, ... went to the terminal raw: ESC sequences (clear the screen, colour) and
# bidi overrides (U+202E turns "MIT" around) printed as something else; ids, set names and words were refused.
def test_show_writes_control_characters_and_bidi_overrides_as_escapes(tmp_path, capsys):
    f = tmp_path / "mine.yaml"
    f.write_text(
        'id: mine\ntitle: "T\\x1b[2Jitle"\nlicence: "MIT\\u202eTIM"\ncitation: "a\\x00b"\n'
        'provenance: ["p\\x07q"]\nbias_type: "Gen\\x1bder"\n' + _OWN,
        "utf-8",
    )
    assert main(["tests", "--show", str(f)]) == 0
    out = capsys.readouterr().out
    for raw in ("\x1b", "\u202e", "\x00", "\x07"):
        assert raw not in out
    for escaped in ("T\\x1b[2Jitle", "MIT\\u202eTIM", "a\\x00b", "p\\x07q", "Gen\\x1bder"):
        assert escaped in out
    # the Python API prints the same text
    (t,) = load_tests_from_file(f)
    assert "\x1b" not in describe_test(t) and "MIT\\u202eTIM" in describe_test(t)


# --- 3. the CSV listing given back ------------------------------------------------------------------------------
# Before: `isoeat tests --format csv > t.csv; isoeat weat --test t.csv` said "neither valid JSON nor valid YAML".
def test_the_csv_listing_given_back_to_test_is_refused_saying_why(tmp_path, capsys):
    f = tmp_path / "tests.csv"
    assert main(["tests", "--format", "csv"]) == 0
    f.write_text(capsys.readouterr().out, "utf-8")
    _one_line_error(capsys, ["weat", "--test", str(f)], str(f), "--format yaml", "no words")
    with pytest.raises(DataFormatError, match="no words"):
        load_tests_from_file(f)
    g = tmp_path / "tests.txt"  # the same listing under another name: known by its header
    g.write_text(f.read_text("utf-8"), "utf-8")
    _one_line_error(capsys, ["tests", "--show", str(g)], str(g), "CSV listing", "no words")


# --- 4. WEATHub rows that all lack a column ---------------------------------------------------------------------
# Before: a row (or every row) lacking one *.examples column was not seen as WEATHub and was refused with
# "missing key(s) X, Y, A, B; ... isoeat format or sent-bias format": the missing column was not named.
_ROW = {
    "language": "en",
    "weat": "WEAT1",
    "targ1.examples": ["rose", "tulip"],
    "targ2.examples": ["ant", "flea"],
    "attr1.examples": ["love", "peace"],
    "attr2.examples": ["war", "filth"],
}


@pytest.mark.parametrize("name", ["one.json", "rows.jsonl"])
def test_weathub_rows_lacking_a_column_name_it(tmp_path, capsys, name):
    row = {k: v for k, v in _ROW.items() if k != "attr2.examples"}
    f = tmp_path / name
    f.write_text(json.dumps(row) + ("\n" + json.dumps({**row, "language": "fr"}) if name.endswith("l") else ""))
    with pytest.raises(DataFormatError, match=r"\(row 1\): missing column\(s\) attr2\.examples"):
        load_tests_from_file(f)
    _one_line_error(capsys, ["tests", "--show", str(f)], "attr2.examples")


# --- 5. many tests in one file ----------------------------------------------------------------------------------
def test_ids_selected_twice_are_found_among_many(tmp_path):
    # the check of ids selected twice was quadratic (list.count per id: 10,000 tests took 4 s of it, 50,000 about
    # 100 s); its result is checked here, its time in benchmarks/library_load.py
    tests = [{"id": f"t{i}", **{r: [f"{r}{i}a", f"{r}{i}b"] for r in "XYAB"}} for i in range(300)]
    f = tmp_path / "many.json"
    f.write_text(json.dumps(tests, indent=0), "utf-8")
    assert len(resolve_tests(str(f))) == 300
    with pytest.raises(Exception, match="selected more than once: t7"):
        resolve_tests([str(f), f"{f}:t7"])


def test_library_load_benchmark_targets_at_their_bounds():
    # the bounds of benchmarks/library_load.py's docstring: 50,000 tests in 20 s, per-test time ratio 3
    import importlib.util
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(bench))
    try:
        spec = importlib.util.spec_from_file_location("bench_library_load", bench / "library_load.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(bench))
    at = {"small": (5_000, 2.0), "large": (50_000, 20.0)}  # 0.4 ms per test both: ratio 1
    assert mod.check(at) == []
    assert [m.split(":")[0] for m in mod.check({**at, "large": (50_000, 20.001)})] == ["read 50,000 tests"]
    ratio3 = {"small": (5_000, 0.5), "large": (50_000, 15.0)}  # 0.1 ms vs 0.3 ms per test: exactly 3
    assert mod.check(ratio3) == []
    assert [m.split(":")[0] for m in mod.check({**ratio3, "large": (50_000, 15.001)})] == [
        "time per test, large / small"
    ]


# --- 6. provenance in a results folder --------------------------------------------------------------------------
# Before: a run folder's manifest named each test's source and word-list hash, not its licence; a result record
# names the test and isoeat_version (which pins the library's lists), the manifest now says where they come from.
def test_a_run_folder_manifest_states_each_tests_reference_and_licence(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["run", "--tests", "occupations-w7terms,W6", "--permutations", "100", "--out", str(out), "-q"]
    assert main(argv) == 0
    capsys.readouterr()
    tests = json.loads((out / "manifest.json").read_text("utf-8"))["tests"]
    # the values stated in library.json and weat.json (read here with get_test, not from the folder)
    for test_id in ("occupations-w7terms", "W6"):
        t = get_test(test_id)
        assert tests[test_id]["licence"] == t.licence and tests[test_id]["reference"] == t.reference
    assert tests["occupations-w7terms"]["licence"] == "MIT AND none-stated"


# --- 7. licences of the composed tests, derived from where each set's words are found ----------------------------
def test_each_composed_tests_licence_is_that_of_the_files_its_sets_come_from():
    # derived here, independently of the licence field: a set equal to a set of the built-in W1..W10 (weat.json,
    # Caliskan et al.'s lists: none-stated), else all its words in debiaswe's files (MIT), else in gn_glove's
    # (Apache-2.0); the licence must name exactly those (a mix of MIT lists with W-sets must say both)
    from importlib import resources

    from isoeat.wordsets._library import library_tests, licence_parts

    data = resources.files("isoeat.wordsets").joinpath("data/third_party")

    def words_of(value) -> set[str]:
        if isinstance(value, str):
            return {value}
        if isinstance(value, dict):
            return set().union(*(words_of(v) for v in value.values()), set())
        if isinstance(value, list):
            return set().union(*(words_of(v) for v in value), set())
        return set()

    debiaswe = set().union(
        *(
            words_of(json.loads(f.read_text("utf-8")))
            for f in data.joinpath("debiaswe").iterdir()
            if f.name.endswith(".json")
        )
    )
    gn_glove = set().union(
        *(set(f.read_text("utf-8").split()) for f in data.joinpath("gn_glove").iterdir() if f.name.endswith(".txt"))
    )
    w_sets = {frozenset(ws.words) for t in resolve_tests(None) for ws in t.sets().values()}
    for t in library_tests().values():
        want = set()
        for role, ws in t.sets().items():
            if frozenset(ws.words) in w_sets:
                want.add("none-stated")
            elif set(ws.words) <= debiaswe:
                want.add("MIT")
            elif set(ws.words) <= gn_glove:
                want.add("Apache-2.0")
            else:
                raise AssertionError(f"{t.id} {role}: words from no bundled file nor W-set")
        assert set(licence_parts(t.licence)) == want, t.id


# --- 8. a bad WEATHub row after blank lines: its line named too ---------------------------------------------------
# Before: "(row 2)" only, while the row was on line 5 of the file (blank lines are skipped, not counted as rows).
def test_a_bad_weathub_row_after_blank_lines_names_its_line(tmp_path):
    f = tmp_path / "weathub.jsonl"
    bad = {**_ROW, "language": "fr", "attr2.examples": ["war", "war"]}
    f.write_text("\n" + json.dumps(_ROW) + "\n\n\n" + json.dumps(bad) + "\n", "utf-8")  # rows on lines 2 and 5
    with pytest.raises(DataFormatError, match=r"weathub\.jsonl \(row 2, line 5\).*duplicate word"):
        load_tests_from_file(f)


def test_a_config_naming_a_file_test_under_a_builtin_id_is_refused(tmp_path):
    import isoeat

    (tmp_path / "mine.yaml").write_text(f"id: W7\n{_OWN}", "utf-8")
    (tmp_path / "c.yaml").write_text("models: [glove-6b-50d]\ntests: [mine.yaml]\n", "utf-8")
    with pytest.raises(isoeat.IsoeatError, match=r"tests\[0\].*built-in test W7"):
        isoeat.load_config(tmp_path / "c.yaml")


# --- 9. the same through the Python API: a hand-built test under a built-in id -------------------------------------
# Before: isoeat.weat(model, AssociationTest(id="W6", <other lists>)) gave a result labelled W6, and the test's
# source defaulted to "builtin": a run folder would even record it as the built-in W6.
def test_a_hand_built_test_under_a_builtin_id_with_other_lists_is_refused():
    import dataclasses

    import isoeat
    from isoeat.wordsets import AssociationTest, WordSet, as_test, as_tests

    mine = AssociationTest(
        id="w6",
        bias_type="Gender",
        X=WordSet("X", ("math", "algebra")),
        Y=WordSet("Y", ("poetry", "art")),
        A=WordSet("A", ("male", "man")),
        B=WordSet("B", ("female", "woman")),
    )
    with pytest.raises(isoeat.ConfigError, match=r"^test: test id 'w6' names the built-in test W6"):
        as_test(mine)
    with pytest.raises(isoeat.ConfigError, match=r"^tests\[1\]: test id 'w6' names the built-in test W6"):
        as_tests(["W7", mine])
    shorter = dataclasses.replace(get_test("W6"), A=WordSet("Career", get_test("W6").A.words[:4]))
    with pytest.raises(isoeat.ConfigError, match=r"A: 'salary' not in this test's"):
        as_test(shorter)
    # the built-in itself, an equal copy of it, and the API's own X/Y swap (d negated, as asked) pass
    assert as_test(get_test("W4").swapped_targets()).X == get_test("W4").Y
    assert as_test(get_test("W6")) is get_test("W6")
    assert as_test(dataclasses.replace(get_test("W6"), title="copy")).id == "W6"
