"""Bad-input catalogue (word sets and configs): YAML that changes meaning, YAML bombs, deep files,
duplicate keys, FIFOs and folders where a file is expected.

Each case is (name, files to create, CLI args, expected substring); ``{d}`` in
args is the temporary folder. Every case ends in a one-line isoeat error, exit 2,
a message naming the file (and line or key), no traceback, in under a few
seconds, with nothing written.
"""

from __future__ import annotations

import hashlib
import os
import time

import pytest

from isoeat.cli import main

SETS = "X: [he, him]\nY: [she, her]\nA: [work, job]\nB: [home, kid]\n"
CFG = "models: [glove-6b-50d]\ntests: [W6]\ncalibrations: [none]\nsettings: {permutations: 100}\n"
LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))
DEEP = "X: " + "[" * 3000 + "]" * 3000 + "\nY: [a]\nA: [b]\nB: [c]\n"


def _weat(name):
    return ["weat", "--test", "{d}/" + name]


def _run(name):
    return ["run", "{d}/" + name, "--out", "{d}/o"]


CASES = [
    # --- word-set files (isoeat weat --test FILE) ------------------------------
    ("word-set alias bomb", {"t.yaml": SETS + "citation: *i\n" + LAUGHS}, _weat("t.yaml"), "t.yaml:5: YAML aliases are not allowed"),
    ("word-set alias in a word list", {"t.yaml": "X: &x [he, him]\nY: *x\nA: [work, job]\nB: [home, kid]\n"}, _weat("t.yaml"),
     "t.yaml:2: YAML aliases are not allowed (*x)"),
    ("word-set deep YAML", {"t.yaml": DEEP}, _weat("t.yaml"), "nested more than 64 levels deep"),
    ("word-set deep JSON", {"t.json": '{"X": ' + "[" * 3000 + "]" * 3000 + "}"}, _weat("t.json"), "nested more than 64 levels deep"),
    ("word-set duplicate YAML key", {"t.yaml": SETS + "A: [pay, wage]\n"}, _weat("t.yaml"), "t.yaml:5: duplicate key 'A' (line 5; first on line 3)"),
    ("word-set duplicate JSON key", {"t.json": '{"X": ["a"], "X": ["b"], "Y": ["c"], "A": ["d"], "B": ["e"]}'}, _weat("t.json"),
     "t.json: duplicate key 'X'"),
    ("word-set JSON number word", {"t.json": '{"id": "mine", "X": [1, 2], "Y": ["c"], "A": ["d"], "B": ["e"]}'}, _weat("t.json"),
     "t.json: test 'mine': set 'X' (X), item 1: expected a string, got 1 (int)"),
    ("word-set null word", {"t.yaml": SETS.replace("job", "null")}, _weat("t.yaml"), "item 2: expected a string, got None"),
    ("word-set citation not text", {"t.json": '{"citation": {"a": 1}, "X": ["a"], "Y": ["c"], "A": ["d"], "B": ["e"]}'},
     _weat("t.json"), "citation: expected a string, got {'a': 1} (dict)"),
    ("word-set is a folder", {"t.yaml/x": "1"}, _weat("t.yaml"), "t.yaml: is a folder, expected a word-set or config file"),
    ("word-set is a FIFO", {"t.yaml": "FIFO"}, _weat("t.yaml"), "t.yaml: not a regular file (a FIFO); expected a word-set or config file"),
    # --- experiment configs (isoeat run CONFIG --out DIR) ----------------------
    ("config alias bomb", {"c.yaml": LAUGHS + CFG}, _run("c.yaml"), "c.yaml: YAML aliases are not allowed (*a) (line 2)"),
    ("config merge key", {"c.yaml": "base: &b {permutations: 100}\n" + CFG.replace("{permutations: 100}", "{<<: *b}")}, _run("c.yaml"),
     "YAML aliases are not allowed (*b)"),
    ("config is a FIFO", {"c.yaml": "FIFO"}, _run("c.yaml"), "c.yaml: not a regular file (a FIFO); expected a config file"),
    ("config is a folder", {"c.yaml/x": "1"}, _run("c.yaml"), "c.yaml: is a folder, expected a config file"),
    ("config duplicate nested key", {"c.yaml": CFG.replace("{permutations: 100}", "{seed: 1, seed: 2}")}, _run("c.yaml"),
     "duplicate key 'seed'"),
    ("config quoted number", {"c.yaml": CFG.replace("100}", "'100'}")}, _run("c.yaml"),
     "settings.permutations: expected a whole number >= 1, got '100'"),
    ("config ambiguous option", {"c.yaml": CFG.replace("[glove-6b-50d]", "[{spec: glove-6b-50d, options: {lowercase_fallback: 'no'}}]")},
     _run("c.yaml"), "models[0].options.lowercase_fallback: 'no' is ambiguous here"),
    ("config null name", {"c.yaml": "name: null\n" + CFG}, _run("c.yaml"), "c.yaml: name: expected a non-empty string, got None"),
    ("config dpi too high", {"c.yaml": CFG + "report: {dpi: 100000}\n"}, _run("c.yaml"), "report.dpi: expected a whole number in [50, 1200], got 100000"),
    ("config deep", {"c.yaml": "models: " + "[" * 3000 + "]" * 3000 + "\n"}, _run("c.yaml"), "nested more than 64 levels deep"),
]


def _materialise(d, files):
    for name, content in files.items():
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if content == "FIFO":
            os.mkfifo(p)
        else:
            p.write_text(content, encoding="utf-8")


def _snapshot(d):
    return {str(p): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "other") for p in d.rglob("*")}


@pytest.mark.parametrize("name, files, args, expected", CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_one_line_error(tmp_path, capsys, monkeypatch, name, files, args, expected):
    if any(c == "FIFO" for c in files.values()) and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    _materialise(tmp_path, files)
    argv = [a.replace("{d}", str(tmp_path)) for a in args]
    before = _snapshot(tmp_path)
    t0 = time.perf_counter()
    code = main(argv)
    seconds = time.perf_counter() - t0
    err = capsys.readouterr().err
    assert code == 2, (name, err)
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1 and len(err) < 500, err
    assert expected in err, err
    assert "Traceback" not in err
    assert seconds < 10, (name, seconds)
    assert _snapshot(tmp_path) == before  # nothing written


def test_catalogue_size():
    assert len(CASES) >= 20
    assert len({c[0] for c in CASES}) == len(CASES)
