"""The test library (issue 42 item 1): provenance of every built-in test, the bundled lists, the readers.

Expected values come from outside the program: the upstream files' SHA-256 (``git show COMMIT:PATH | sha256sum``
on the upstream repositories, commits named in NOTICE.md), the composition rules re-derived here from the
bundled upstream files with plain ``json``, and W1..W10 as committed before the library
(``tests/_weat_head_lists.py``).
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from pathlib import Path

import pytest

from _weat_head_lists import W_TESTS
from isoeat._errors import DataFormatError
from isoeat.cli import main
from isoeat.wordsets import get_test, list_tests, load_tests_from_file, resolve_tests
from isoeat.wordsets._library import BUNDLED_FILES, LICENCES, library_tests, licence_parts

ROOT = Path(__file__).resolve().parents[1]
DATA = resources.files("isoeat.wordsets").joinpath("data")
#: The licences the brief allows a built-in list to carry (MIT: debiaswe; Apache-2.0: gn_glove; none-stated:
#: the lists printed in Caliskan et al. 2017's supplement, whose authors state no licence).
ALLOWED = {"MIT", "Apache-2.0", "none-stated"}
#: SHA-256 of the upstream files, computed with `git show COMMIT:PATH | sha256sum` on the upstream repositories
#: tolga-b/debiaswe @ 6bb03ee2a0d7214339e513ca71cd0a99069dc29c and uclanlp/gn_glove @ 7e0c7cabb67875bef7...
UPSTREAM_SHA256_PREFIX = {
    "third_party/debiaswe/LICENSE": "be45f9c3b9b5e15d",
    "third_party/debiaswe/definitional_pairs.json": "f2387fdd4ae4d956",
    "third_party/debiaswe/equalize_pairs.json": "b6e7dda64461e782",
    "third_party/debiaswe/gender_specific_full.json": "300068da1885e9dc",
    "third_party/debiaswe/gender_specific_seed.json": "9802a524c932d9f0",
    "third_party/debiaswe/professions.json": "32cc82c7761e7cfb",
    "third_party/gn_glove/LICENSE": "af87d99dbbe2d123",
    "third_party/gn_glove/female_word_file.txt": "5f0803f056de3fbc",
    "third_party/gn_glove/male_word_file.txt": "d431679ce3ef4134",
}
LIBRARY_IDS = [
    "bolukbasi-career-family",
    "bolukbasi-math-arts",
    "bolukbasi-science-arts",
    "gnglove-career-family",
    "gnglove-math-arts",
    "gnglove-science-arts",
    "occupations-bolukbasi",
    "occupations-gnglove",
    "occupations-w7terms",
    "occupations-w8terms",
]


def bundled_text(name: str) -> str:
    """A bundled third-party file as the installed package holds it."""
    return DATA.joinpath(name).read_text("utf-8")


def _out(capsys, argv: list[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def _builtins():
    return resolve_tests(None) + list(library_tests().values())


# --- provenance of every built-in test --------------------------------------------------------------------------
def test_every_builtin_test_carries_source_lists_licence_and_citation():
    tests = _builtins()
    assert len(tests) >= 20
    assert LICENCES == tuple(sorted(ALLOWED, key=["MIT", "Apache-2.0", "none-stated"].index))
    for t in tests:
        for field in ("reference", "citation", "lists_from", "licence", "title", "bias_type"):
            assert getattr(t, field).strip(), (t.id, field)
        assert licence_parts(t.licence) and set(licence_parts(t.licence)) <= ALLOWED, (t.id, t.licence)
        if t.id in W_TESTS:
            assert t.composed == "" and t.licence == "none-stated"  # the authors' own tests, not composed
        else:  # a composed test says so, in its own field and in its source
            assert t.composed.startswith("composed by isoeat from ") and "not a test published" in t.composed
            assert t.reference.startswith("composed: ")


def test_isoeat_tests_lists_at_least_20_tests_with_licence_and_source(capsys):
    out = _out(capsys, ["tests"]).splitlines()
    rows = [line for line in out[2:] if re.match(r"^\S+\s+\S+\s+\d+/\d+/\d+/\d+\s", line)]
    assert len(rows) >= 20
    for t in _builtins():
        (row,) = [r for r in rows if r.split()[0] == t.id]
        assert "/".join(str(n) for n in t.sizes) in row and t.licence in row and t.reference in row


def test_the_default_battery_is_still_w1_to_w10():
    from isoeat.experiments.config import parse_config

    ids = [f"W{i}" for i in range(1, 11)]
    assert [t.id for t in resolve_tests(None)] == ids
    assert [t.id for t in parse_config({"models": ["glove-6b-50d"]}).tests] == ids
    assert [t.id for t in list_tests()][:20] == ids + LIBRARY_IDS


def test_w1_to_w10_unchanged_from_their_lists_before_the_library():
    for test_id, want in W_TESTS.items():
        t = get_test(test_id)
        assert (t.bias_type, t.title, t.citation) == (want["bias_type"], want["title"], want["citation"])
        digest = hashlib.sha256(json.dumps(list(t.provenance), ensure_ascii=False).encode()).hexdigest()
        assert digest == want["provenance_sha256"]
        for role in "XYAB":
            ws = getattr(t, role)
            assert (ws.name, ws.words) == want[role], (test_id, role)


# --- the bundled files ------------------------------------------------------------------------------------------
def test_bundled_files_are_the_upstream_bytes_and_every_one_is_registered():
    on_disk = {
        str(p.relative_to(ROOT / "src/isoeat/wordsets/data"))
        for p in (ROOT / "src/isoeat/wordsets/data/third_party").rglob("*")
        if p.is_file()
    }
    assert on_disk == set(BUNDLED_FILES) == set(UPSTREAM_SHA256_PREFIX)
    for name, prefix in UPSTREAM_SHA256_PREFIX.items():
        assert hashlib.sha256(DATA.joinpath(name).read_bytes()).hexdigest().startswith(prefix), name
    assert bundled_text("third_party/debiaswe/LICENSE").startswith("MIT License")
    assert "Copyright (c) 2016 Tolga" in bundled_text("third_party/debiaswe/LICENSE")
    assert "Apache License" in bundled_text("third_party/gn_glove/LICENSE")
    assert "Version 2.0, January 2004" in bundled_text("third_party/gn_glove/LICENSE")


def test_notice_lists_every_bundled_file_with_its_licence():
    notice = (ROOT / "NOTICE.md").read_text("utf-8").splitlines()
    for name, (licence, upstream) in {**BUNDLED_FILES, "library.json": ("MIT", ""), "weat.json": ("", "")}.items():
        rows = [line for line in notice if f"isoeat/wordsets/data/{name}`" in line]
        assert len(rows) == 1, name
        assert licence in rows[0] and upstream.split(" @ ")[0] in rows[0], name
    assert "CC BY-NC 4.0" in "\n".join(notice) and "GPL-3.0" in "\n".join(notice)  # the lists read, not shipped


def test_pyproject_ships_the_third_party_folder():
    assert '"wordsets/data/third_party/*/*"' in (ROOT / "pyproject.toml").read_text("utf-8")


# --- the composed lists, re-derived from the bundled upstream files ---------------------------------------------
def _upstream():
    pairs = json.loads(bundled_text("third_party/debiaswe/definitional_pairs.json"))
    prof = json.loads(bundled_text("third_party/debiaswe/professions.json"))
    gn = {}
    for side in ("male", "female"):
        words = [w for w in bundled_text(f"third_party/gn_glove/{side}_word_file.txt").split("\n") if w.strip()]
        gn[side] = tuple(dict.fromkeys(words))  # repeated lines kept once, first occurrence first
    return pairs, prof, gn


def test_composed_lists_follow_their_stated_rules():
    pairs, prof, gn = _upstream()
    # debiaswe's pairs are [female, male] (its file: ["woman", "man"], ...)
    male, female = tuple(p[1] for p in pairs), tuple(p[0] for p in pairs)
    assert male[:3] == ("man", "boy", "he") and female[-1] == "Mary"
    occ_m = tuple(w for w, d, s in prof if s >= 0.8 and -0.2 <= d <= 0.2 and "_" not in w)
    occ_f = tuple(w for w, d, s in prof if s <= -0.8 and -0.2 <= d <= 0.2 and "_" not in w)
    assert (len(gn["male"]), len(gn["female"])) == (207, 202)  # 222 lines each, repeated words once
    gender = {
        "bolukbasi": (male, female),
        "gnglove": (gn["male"], gn["female"]),
        "w7terms": (get_test("W7").A.words, get_test("W7").B.words),
        "w8terms": (get_test("W8").A.words, get_test("W8").B.words),
    }
    for src in ("bolukbasi", "gnglove"):
        t = get_test(f"{src}-career-family")
        assert (t.X.words, t.Y.words) == gender[src] and t.A == get_test("W6").A and t.B == get_test("W6").B
        for wid, name in (("W7", "math-arts"), ("W8", "science-arts")):
            t = get_test(f"{src}-{name}")
            assert t.X == get_test(wid).X and t.Y == get_test(wid).Y and (t.A.words, t.B.words) == gender[src]
    for src, (a, b) in gender.items():
        t = get_test(f"occupations-{src}")
        assert (t.X.words, t.Y.words, t.A.words, t.B.words) == (occ_m, occ_f, a, b)


def test_library_json_is_what_the_composer_writes():
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools/compose_library.py"), "--check"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_occupation_thresholds_at_their_boundaries():
    _, prof, _ = _upstream()
    scores = {w: (d, s) for w, d, s in prof}
    t = get_test("occupations-bolukbasi")
    # stereotypical exactly 0.8 / -0.8: in; 0.7 / -0.7: out
    assert scores["assassin"] == (0.1, 0.8) and "assassin" in t.X.words
    assert scores["ambassador"] == (0.0, 0.7) and "ambassador" not in t.X.words
    assert scores["teacher"] == (0.0, -0.8) and "teacher" in t.Y.words
    assert scores["stylist"] == (-0.2, -0.7) and "stylist" not in t.Y.words
    # definitional exactly -0.2 / 0.2: in; beyond: out (ballerina: -0.5)
    assert scores["hairdresser"] == (-0.2, -0.8) and "hairdresser" in t.Y.words
    assert scores["ballplayer"] == (0.2, 0.8) and "ballplayer" in t.X.words
    assert scores["ballerina"][0] == -0.5 and "ballerina" not in t.Y.words
    assert "registered_nurse" not in t.Y.words and "nurse" in t.Y.words  # phrase tokens left out
    assert (len(t.X), len(t.Y)) == (30, 10)


# --- round trips and --show -------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_format_output_round_trips_every_test_identically(tmp_path, capsys, fmt):
    f = tmp_path / f"all.{fmt}"
    f.write_text(_out(capsys, ["tests", "--format", fmt]), "utf-8")
    back = resolve_tests(str(f))
    builtins = _builtins()
    assert [t.id for t in back] == [t.id for t in builtins]
    for b, t in zip(back, builtins):
        assert {**b.to_dict(), "source": ""} == {**t.to_dict(), "source": ""}, t.id
        assert b.source.startswith(str(f))
    again = _out(capsys, ["tests", "--show", str(f), "--format", fmt])
    assert again == f.read_text("utf-8")  # a fixed point


def test_a_library_test_from_its_file_gives_the_same_d(tmp_path, capsys):
    f = tmp_path / "all.json"
    f.write_text(_out(capsys, ["tests", "--format", "json"]), "utf-8")
    argv = ["weat", "--calibration", "none", "--permutations", "200", "--seed", "3", "--format", "json"]
    (by_id,) = json.loads(_out(capsys, [*argv, "--test", "occupations-bolukbasi"]))
    (by_file,) = json.loads(_out(capsys, [*argv, "--test", f"{f}:occupations-bolukbasi"]))
    assert by_file["effect_size"] == by_id["effect_size"] and by_file["p_value"] == by_id["p_value"]


def test_show_prints_every_list_and_the_full_provenance(capsys):
    for test_id in ("W6", "occupations-gnglove"):
        t = get_test(test_id)
        out = _out(capsys, ["tests", "--show", test_id])
        flat = " ".join(out.split())  # the lists are wrapped at spaces only
        for role, ws in t.sets().items():
            assert f"{role} ({len(ws)}) {ws.name}: {', '.join(ws.words)}" in flat
        for value in (t.reference, t.citation, t.lists_from, t.licence, *t.provenance):
            assert " ".join(value.split()) in flat
        assert ("Composed" in out) == bool(t.composed) and " ".join(t.composed.split()) in flat


def test_show_a_user_file_says_what_it_does_not_state(tmp_path, capsys):
    f = tmp_path / "mine.yaml"
    f.write_text("id: mine\nX: [rose]\nY: [ant]\nA: [love]\nB: [war]\n", "utf-8")
    out = _out(capsys, ["tests", "--show", str(f)])
    assert "Licence     (not stated)" in out and f"File        {f}" in out


def test_csv_carries_the_provenance_columns(capsys):
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(_out(capsys, ["tests", "--format", "csv"]))))
    assert len(rows) >= 20
    by_id = {r["id"]: r for r in rows}
    t = get_test("gnglove-math-arts")
    assert by_id[t.id]["licence"] == t.licence and by_id[t.id]["composed"] == t.composed
    assert by_id[t.id]["n_a"] == "207"


def test_provenance_fields_must_be_text(tmp_path):
    g = tmp_path / "bad.json"
    g.write_text(json.dumps({"id": "t", "licence": 3, "X": ["rose"], "Y": ["ant"], "A": ["love"], "B": ["war"]}))
    with pytest.raises(DataFormatError, match=r"bad\.json: test 't': licence: expected a string, got 3"):
        load_tests_from_file(g)
    f = tmp_path / "bad.yaml"
    f.write_text("id: t\nlicense: MIT\nX: [rose]\nY: [ant]\nA: [love]\nB: [war]\n", "utf-8")
    with pytest.raises(DataFormatError, match=r"unknown key\(s\) \['license'\].*did you mean 'licence'"):
        load_tests_from_file(f)


# --- readers for lists that cannot be bundled -------------------------------------------------------------------
_ROW = {
    "language": "en",
    "weat": "WEAT1",
    "targ1.category": "Flowers",
    "targ1.examples": ["rose", "tulip"],
    "targ2.category": "Insects",
    "targ2.examples": ["ant", "wasp"],
    "attr1.category": "Pleasant",
    "attr1.examples": ["love", "peace"],
    "attr2.category": "Unpleasant",
    "attr2.examples": ["hatred", "war"],
}


def test_weathub_rows_are_read_from_a_json_lines_file(tmp_path):
    de = {**_ROW, "language": "de", "targ1.examples": ["Rose", "Tulpe"], "split": "original_weat"}
    f = tmp_path / "weathub.jsonl"
    f.write_text(json.dumps(_ROW) + "\n\n" + json.dumps(de) + "\n", "utf-8")
    en, de_test = load_tests_from_file(f)
    assert (en.id, de_test.id) == ("WEAT1-en", "WEAT1-de")
    assert (en.X.name, en.X.words, en.B.name, en.B.words) == (
        "Flowers",
        ("rose", "tulip"),
        "Unpleasant",
        ("hatred", "war"),
    )
    assert de_test.X.words == ("Rose", "Tulpe")
    assert en.licence.startswith("CC-BY-4.0") and "Mukherjee" in en.citation and "EMNLP" in en.citation
    assert de_test.provenance == ("WEATHub columns not read: ['split']",)
    one = load_tests_from_file(tmp_path / "one.json") if (tmp_path / "one.json").write_text(json.dumps(_ROW)) else None
    assert one is not None and one[0].id == "WEAT1-en"


@pytest.mark.parametrize(
    "text, message",
    [
        (json.dumps(_ROW) + "\n{oops\n", r"weathub\.jsonl:2: invalid JSON line"),
        (
            json.dumps({k: v for k, v in _ROW.items() if k != "attr2.examples"}) + "\n" + json.dumps(_ROW),
            r"weathub\.jsonl \(row 1\): missing column\(s\) attr2\.examples",
        ),
        (
            json.dumps(_ROW) + "\n" + json.dumps(_ROW),
            r"weathub\.jsonl \(row 2\): test id 'WEAT1-en' is also the id of row 1",
        ),
        (json.dumps({**_ROW, "attr2.examples": ["war", "war"]}), r"\(row 1\).*duplicate word\(s\) \['war'\]"),
    ],
)
def test_bad_weathub_rows_are_one_line_errors(tmp_path, capsys, text, message):
    f = tmp_path / "weathub.jsonl"
    f.write_text(text + "\n", "utf-8")
    with pytest.raises(DataFormatError, match=message):
        load_tests_from_file(f)
    assert main(["tests", "--show", str(f)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and str(f) in err


def test_the_sent_bias_and_weathub_github_layout_is_read_and_a_repeated_word_refused(tmp_path):
    # the layout of sent-bias (CC BY-NC 4.0) and of WEATHub's GitHub files (GPL-3.0): the user's own copy
    sets = {
        "targ1": {"category": "Male adjectives", "examples": ["brave", "skilled"]},
        "targ2": {"category": "Female adjectives", "examples": ["shy", "sweet"]},
        "attr1": {"category": "Male terms", "examples": ["man", "boy"]},
        "attr2": {"category": "Female terms", "examples": ["woman", "girl"]},
    }
    f = tmp_path / "weat16.json"
    f.write_text(json.dumps(sets), "utf-8")
    (t,) = load_tests_from_file(f)
    assert (t.id, t.X.name, t.X.words, t.B.words) == (
        "weat16",
        "Male adjectives",
        ("brave", "skilled"),
        ("woman", "girl"),
    )
    sets["attr2"]["examples"] = ["woman", "woman", "girl"]  # as WEATHub's data/en_india/weat16.json has it
    f.write_text(json.dumps(sets), "utf-8")
    with pytest.raises(DataFormatError, match=r"weat16\.json.*duplicate word\(s\) \['woman'\]"):
        load_tests_from_file(f)
