"""Bad-input catalogue, group G (issues 42 item 2 and 44): test files of several tests, FILE:ID, the tests
command's --template and --show, and isoeat export.

CLI cases end in a one-line isoeat error, exit 2, a message naming the problem (file, item, id or option), no
traceback and nothing written.
"""

from __future__ import annotations

import json

import pytest

from ._oneline import assert_one_line_error

ONE = {"X": ["he", "him"], "Y": ["she", "her"], "A": ["work", "job"], "B": ["home", "kid"]}


def _weat(name="t.json", test_id=""):
    return ["weat", "--test", "{d}/" + name + (f":{test_id}" if test_id else ""), "--calibration", "none"]


def _two(*ids):
    return json.dumps([{"id": i, **ONE} for i in ids])


# --- several tests per file, FILE:ID, --attributes ------------------------------------------------------------
TEST_FILE_CASES = [
    ("list of tests with one id twice", {"t.json": _two("a", "a")}, _weat(),
     "t.json ([1]): test id 'a' is also the id of [0] ('a'); the ids of a file's tests must differ"),
    ("list of tests with ids differing in case", {"t.json": _two("Career", "career")}, _weat(),
     "t.json ([1]): test id 'career' is also the id of [0] ('Career')"),
    ("tests key with one id twice", {"t.json": json.dumps({"tests": [{"id": "a", **ONE}, {"id": "A", **ONE}]})},
     _weat(), "t.json (tests[1]): test id 'A' is also the id of tests[0] ('a')"),
    ("empty list of tests", {"t.json": "[]"}, _weat(), "t.json: the list of tests is empty"),
    ("list item not a mapping", {"t.json": json.dumps([{"id": "a", **ONE}, 3])}, _weat(),
     "t.json ([1]): expected a mapping with keys X, Y, A, B (one test), got 3"),
    ("list item a nested tests list", {"t.json": json.dumps([{"tests": [ONE]}])}, _weat(),
     "t.json ([0]): expected a mapping with keys X, Y, A, B (one test), got a nested 'tests' list"),
    ("list item with an unknown key", {"t.json": json.dumps([{"id": "a", **ONE, "titel": "x"}])}, _weat(),
     "t.json ([0]): unknown key(s) ['titel']; did you mean 'title'?"),
    ("FILE:ID of an id the file lacks", {"t.json": _two("career", "science")}, _weat(test_id="sience"),
     "t.json: no test with id 'sience' in this file (it holds career, science); did you mean science?"),
    ("scweat attributes of a file of two tests", {"t.json": _two("a", "b")},
     ["scweat", "--words", "nurse", "--attributes", "{d}/t.json", "--calibration", "none"],
     "--attributes: {d}/t.json holds 2 tests (a, b); name one as FILE:ID ('{d}/t.json:a')"),
    ("scweat attributes of two ids", {}, ["scweat", "--words", "nurse", "--attributes", "W6,W7",
                                          "--calibration", "none"], "unknown test id 'W6,W7'"),
    ("tests template with a format", {}, ["tests", "--template", "--format", "json"],
     "--template prints the commented YAML template and nothing else: drop --format"),
    ("tests template with show", {}, ["tests", "--template", "--show", "W6"], "drop --show"),
    ("tests show of an unknown id", {}, ["tests", "--show", "W66"], "unknown test id 'W66'"),
]


def _export(*args):
    return ["export", *args]


# --- isoeat export ---------------------------------------------------------------------------------------------
EXPORT_CASES = [
    ("export over an existing matrix", {"v.npy": "old"}, _export("--top", "3", "--out", "{d}/v.npy"),
     "{d}/v.npy exists; nothing written"),
    ("export over an existing vocabulary", {"v.vocab": "old"}, _export("--top", "3", "--out", "{d}/v.npy"),
     "{d}/v.vocab exists; nothing written"),
    ("export over an existing text file", {"v.txt": "old"}, _export("--top", "3", "--out", "{d}/v.txt"),
     "{d}/v.txt exists; nothing written"),
    ("export to an unknown suffix", {}, _export("--top", "3", "--out", "{d}/v.bin"),
     "give a name ending in .npy (matrix, with its vocabulary in a v.vocab beside it) or .txt (GloVe text)"),
    ("export to a folder", {"f.npy/keep": "x"}, _export("--top", "3", "--out", "{d}/f.npy"),
     "{d}/f.npy is a folder or not a regular file"),
    ("export top beyond the vocabulary", {}, _export("--top", "400001", "--out", "{d}/v.npy"),
     "top: 400,001 rows asked, but glove-6b-50d has 400,000; nothing written"),
    ("export words and top", {}, _export("--words", "nurse", "--top", "3", "--out", "{d}/v.npy"),
     "give --words WORDS|FILE or --top N (one of them)"),
    ("export neither words nor top", {}, _export("--out", "{d}/v.npy"), "give --words WORDS|FILE or --top N"),
    ("export a word not in the vocabulary", {}, _export("--words", "nurse,zzqxv", "--out", "{d}/v.npy"),
     "not in the vocabulary of glove-6b-50d: 'zzqxv'; nothing written"),
    ("export words file missing", {}, _export("--words", "{d}/w.txt", "--out", "{d}/v.npy"),
     "--words {d}/w.txt: no such file"),
    ("export words file empty", {"w.txt": "\n \n"}, _export("--words", "{d}/w.txt", "--out", "{d}/v.npy"),
     "the file holds no word"),
    ("export words only commas", {}, _export("--words", ",,", "--out", "{d}/v.npy"), "no word given"),
]


def _one_line_error(tmp_path, capsys, monkeypatch, name, files, args, expected):
    assert_one_line_error(tmp_path, capsys, monkeypatch, name, files, args, expected)


@pytest.mark.parametrize("name, files, args, expected", TEST_FILE_CASES, ids=[c[0] for c in TEST_FILE_CASES])
def test_bad_test_file_gives_one_line_error(tmp_path, capsys, monkeypatch, name, files, args, expected):
    _one_line_error(tmp_path, capsys, monkeypatch, name, files, args, expected)


@pytest.mark.parametrize("name, files, args, expected", EXPORT_CASES, ids=[c[0] for c in EXPORT_CASES])
def test_bad_export_gives_one_line_error(tmp_path, capsys, monkeypatch, name, files, args, expected):
    _one_line_error(tmp_path, capsys, monkeypatch, name, files, args, expected)
