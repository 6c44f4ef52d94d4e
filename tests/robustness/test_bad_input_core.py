"""Bad-input catalogue (core): every case ends in a one-line isoeat error, exit 2,
a message naming the problem, no traceback, and nothing half-written.

Each case is (name, files to create, CLI args, expected substring). Files are
created in a temporary folder; ``{d}`` in args is replaced by its path.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from isoeat.cli import main

GOOD_TEST = json.dumps({"id": "t", "X": ["he", "him"], "Y": ["she", "her"], "A": ["work", "job"], "B": ["home", "kid"]})


def _w2v_bin(count_header, rows):
    out = f"{count_header} 3\n".encode()
    for w, v in rows:
        out += w.encode() + b" " + struct.pack("<3f", *v) + b"\n"
    return out


CASES = [
    # --- vector files -------------------------------------------------------
    ("glove truncated line", {"v.txt": "he 1 2 3\nshe 1 2\n"}, ["--model", "glove:{d}/v.txt"], "v.txt:2: word 'she' has 2 values, expected 3"),
    ("glove mixed dimensions", {"v.txt": "he 1 2\nshe 1 2 3 4\n"}, ["--model", "glove:{d}/v.txt"], "v.txt:2"),
    ("glove not a number", {"v.txt": "he 1 2\nshe 1 zz\n"}, ["--model", "glove:{d}/v.txt"], "'zz' is not a number"),
    ("glove NaN", {"v.txt": "he 1 2\nshe nan 2\n"}, ["--model", "glove:{d}/v.txt"], "v.txt:2: word 'she' has NaN or inf"),
    ("glove inf", {"v.txt": "he 1 2\nshe 1 -inf\n"}, ["--model", "glove:{d}/v.txt"], "NaN or inf"),
    ("glove non-UTF-8", {"v.txt": b"he 1 2\nsh\xe9 1 2\n"}, ["--model", "glove:{d}/v.txt"], "v.txt:2: not valid UTF-8"),
    ("empty vector file", {"v.txt": ""}, ["--model", "glove:{d}/v.txt"], "file is empty"),
    ("only blank lines", {"v.txt": "\n\n"}, ["--model", "glove:{d}/v.txt"], "no vectors found"),
    ("w2v text header lies", {"v.vec": "5 2\nhe 1 2\nshe 2 1\n"}, ["--model", "{d}/v.vec"], "header announces 5 vectors, file has 2"),
    ("w2v text no header", {"v.vec": "he 1 2\n"}, ["--model", "fasttext:{d}/v.vec"], "expected a header 'count dim'"),
    ("w2v binary lying header", {"v.bin": _w2v_bin(9, [("he", (1, 2, 3))])}, ["--model", "{d}/v.bin"], "ends after 1 of the 9 vectors"),
    ("w2v binary bad header", {"v.bin": b"abc\n"}, ["--model", "{d}/v.bin"], "expected a header 'count dim'"),
    ("w2v binary truncated vector", {"v.bin": _w2v_bin(1, [("he", (1, 2, 3))])[:-6]}, ["--model", "{d}/v.bin"], "ends inside vector 1"),
    ("npy without vocabulary", {"m.npy": np.eye(3)}, ["--model", "npy:{d}/m.npy"], "no vocabulary file"),
    ("npy vocabulary too short", {"m.npy": np.eye(3), "m.vocab": "a\nb\n"}, ["--model", "npy:{d}/m.npy"], "m.vocab: the vocabulary has 2 entries but the matrix"),
    ("npy object array", {"m.npy": "OBJECT", "m.vocab": "a\n"}, ["--model", "npy:{d}/m.npy"], "not a plain .npy"),
    ("npy not a matrix", {"m.npy": np.arange(3.0), "m.vocab": "a\nb\nc\n"}, ["--model", "npy:{d}/m.npy"], "2-D matrix"),
    ("model path is a folder", {"sub/x": "1"}, ["--model", "{d}/sub"], "is a folder"),
    ("model missing", {}, ["--model", "{d}/nope.txt"], "no such file"),
    ("model spec unknown", {}, ["--model", "glove-6b-100d"], "did you mean glove-6b-50d"),
    ("zero vector in test", {"v.txt": "he 0 0\nhim 1 1\nshe 1 2\nher 2 1\nwork 1 0\njob 0 1\nhome 1 3\nkid 3 1\n", "t.json": GOOD_TEST},
     ["--model", "glove:{d}/v.txt", "--test", "{d}/t.json"], "vector of 'he' is all zeros"),
    # --- word-set files -----------------------------------------------------
    ("test missing key", {"t.json": '{"X": ["a","b"], "Y": ["c","d"], "A": ["e","f"]}'}, ["--test", "{d}/t.json"], "missing key(s) B"),
    ("test empty set", {"t.json": '{"X": [], "Y": ["c","d"], "A": ["e","f"], "B": ["g","h"]}'}, ["--test", "{d}/t.json"], "set 'X' (X) is empty"),
    ("test non-string word", {"t.json": '{"X": ["a", 7], "Y": ["c","d"], "A": ["e","f"], "B": ["g","h"]}'}, ["--test", "{d}/t.json"], "item 2: expected a string, got 7"),
    ("test duplicate word", {"t.json": '{"X": ["a","a"], "Y": ["c","d"], "A": ["e","f"], "B": ["g","h"]}'}, ["--test", "{d}/t.json"], "duplicate word(s) ['a']"),
    ("test unknown key", {"t.json": '{"X": ["a","b"], "Y": ["c","d"], "A": ["e","f"], "B": ["g","h"], "C": []}'}, ["--test", "{d}/t.json"], "unknown key(s) ['C']"),
    ("test invalid JSON", {"t.json": '{"X": ["a",\n'}, ["--test", "{d}/t.json"], "t.json:2: invalid JSON"),
    ("test invalid YAML", {"t.yaml": "X: [a, b\nY: c\n"}, ["--test", "{d}/t.yaml"], "invalid YAML"),
    ("test YAML not a mapping", {"t.yaml": "- a\n- b\n"}, ["--test", "{d}/t.yaml"], "expected a mapping"),
    ("test empty file", {"t.json": ""}, ["--test", "{d}/t.json"], "file is empty"),
    ("test file missing", {}, ["--test", "{d}/none.yaml"], "no such file"),
    ("test non-UTF-8", {"t.json": b'{"X": ["\xff"]}'}, ["--test", "{d}/t.json"], "not valid UTF-8"),
    ("sent-bias examples not a list", {"t.jsonl": json.dumps({k: {"category": k, "examples": "abc"} for k in ("targ1", "targ2", "attr1", "attr2")})},
     ["--test", "{d}/t.jsonl"], "'words' must be a list"),
    ("low coverage", {"t.json": json.dumps({"X": ["he", "qqqzz1", "qqqzz2"], "Y": ["she", "her", "woman"], "A": ["work", "job"], "B": ["home", "kid"]})},
     ["--test", "{d}/t.json"], "33% coverage; minimum 80%"),
    ("unknown test id", {}, ["--test", "W0"], "unknown test id 'W0'"),
    # --- calibrator files ---------------------------------------------------
    ("calibrator missing", {}, ["--test", "W6", "--whitener", "{d}/w.npz"], "no such calibrator file"),
    ("calibrator not npz", {"w.npz": "hello"}, ["--test", "W6", "--whitener", "{d}/w.npz"], "cannot read as .npz"),
    ("calibrator without metadata", {"w.npz": ("NPZ", {"mean_": np.zeros(50)})}, ["--test", "W6", "--whitener", "{d}/w.npz"], "missing metadata_json"),
    ("calibrator with pickle", {"w.npz": ("NPZ", {"metadata_json": np.array([{"a": 1}], dtype=object)})}, ["--test", "W6", "--whitener", "{d}/w.npz"], "never contain pickles"),
    ("calibrator wrong dimension", {"w.npz": "ZCA3"}, ["--test", "W6", "--whitener", "{d}/w.npz"], "dimension 3"),
    ("calibrator tampered", {"w.npz": "ZCA50TAMPERED"}, ["--test", "W6", "--whitener", "{d}/w.npz"], "tampered"),
    # --- CLI arguments ------------------------------------------------------
    ("bad calibration param", {}, ["--test", "W6", "--calibration", "zca", "--calibration-param", "foo=1"], "has no parameter 'foo'"),
    ("calibration param syntax", {}, ["--test", "W6", "--calibration", "zca", "--calibration-param", "eps"], "expects KEY=VALUE"),
    ("exact beyond budget", {}, ["--test", "W3", "--method", "exact"], "monte-carlo"),
    ("calibration param on raw space", {}, ["--test", "W6", "--calibration", "none", "--calibration-param", "eps=1"],
     "--calibration-param: no effect with --calibration none"),
    ("calibration param twice", {}, ["--test", "W6", "--calibration", "zca", "--calibration-param", "eps=1",
                                     "--calibration-param", "eps=2"], "given more than once"),
]


def _materialise(d, files):
    for name, content in files.items():
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        elif isinstance(content, np.ndarray):
            np.save(p, content)
        elif content == "OBJECT":
            np.save(p, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        elif isinstance(content, tuple) and content[0] == "NPZ":
            with open(p, "wb") as fh:
                np.savez(fh, **content[1])
        elif isinstance(content, str) and content.startswith("ZCA"):
            import isoeat

            dim = int(content[3:].replace("TAMPERED", ""))
            w = isoeat.ZCAWhitener().fit(np.random.default_rng(0).normal(size=(200, dim)))
            isoeat.save_calibrator(w, p)
            if content.endswith("TAMPERED"):
                with np.load(p) as npz:
                    arrays = {k: npz[k] for k in npz.files}
                arrays["whitening_"] = arrays["whitening_"] + 0.01
                p.unlink()
                with open(p, "wb") as fh:
                    np.savez(fh, **arrays)
        else:
            p.write_text(content)


@pytest.mark.parametrize("name, files, args, expected", CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_one_line_error(tmp_path, capsys, glove, name, files, args, expected):
    _materialise(tmp_path, files)
    argv = [a.replace("{d}", str(tmp_path)) for a in args]
    if "--test" not in argv:
        argv += ["--test", "W6"]
    out_dir = tmp_path / "out"
    before = set(tmp_path.rglob("*"))
    code = main(["weat", *argv])
    err = capsys.readouterr().err
    assert code == 2, (name, err)
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1, err
    assert expected in err, err
    assert "Traceback" not in err
    assert set(tmp_path.rglob("*")) == before and not out_dir.exists()  # nothing written


def test_catalogue_size():
    assert len(CASES) >= 40
    assert len({c[0] for c in CASES}) == len(CASES)


def test_run_refuses_bad_args_without_writing(tmp_path, capsys, glove):
    out = tmp_path / "out"
    code = main(["run", "--tests", "W6,W99", "--out", str(out)])
    assert code == 2 and "unknown test id 'W99'" in capsys.readouterr().err
    assert not out.exists()
