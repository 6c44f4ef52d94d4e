"""Bad-input catalogue (static model files): unsafe paths (FIFOs, devices),
unbounded input (huge lines, lying headers), broken gzip, duplicate words and
pickles. Each case ends in a one-line isoeat error, exit 2, a message naming
the file (and line or word), no traceback, nothing written, and no code from
the file run.

Each case is (name, files to create, CLI args, expected substring); ``{d}`` in
args is the temporary folder. Special file contents: ``"FIFO"`` makes a named
pipe, ``("PICKLE",)`` a pickle that would create ``{d}/pwned`` when loaded.
"""

from __future__ import annotations

import gzip
import os
import pickle
import struct

import numpy as np
import pytest

from isoeat.cli import main


def _w2v_bin(header, rows):
    out = header.encode() + b"\n"
    for w, v in rows:
        out += w.encode() + b" " + struct.pack(f"<{len(v)}f", *v) + b"\n"
    return out


_GOOD_BIN = _w2v_bin("2 3", [("he", (1, 2, 3)), ("she", (3, 2, 1))])


class _Marker:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


CASES = [
    ("model is a FIFO", {"v.txt": "FIFO"}, ["--model", "{d}/v.txt"], "v.txt: not a regular file (a FIFO); expected a vector file"),
    ("prefixed model is a FIFO", {"v.txt": "FIFO"}, ["--model", "glove:{d}/v.txt"], "v.txt: not a regular file (a FIFO)"),
    ("model is a device", {}, ["--model", "glove:/dev/zero"], "/dev/zero: not a regular file (a character device)"),
    ("npy vocabulary is a FIFO", {"m.npy": np.eye(2), "m.vocab": "FIFO"}, ["--model", "npy:{d}/m.npy"],
     "m.vocab: not a regular file (a FIFO); expected a vocabulary file"),
    ("vector line over 1 MiB", {"v.txt": "he 1 2\nshe " + "1 " * 600_000 + "\n"}, ["--model", "glove:{d}/v.txt"],
     "v.txt:2: line longer than 1 MiB"),
    ("w2v binary header count too big", {"v.bin": _w2v_bin("99999999999999 3", [("he", (1, 2, 3))])}, ["--model", "{d}/v.bin"],
     "v.bin: file ends after 1 of the 99999999999999 vectors its header announces (they need at least"),
    ("w2v binary header dim too big", {"v.bin": b"1 99999999999999999999\nhe " + b"\0" * 12}, ["--model", "{d}/v.bin"],
     "v.bin:1: header announces 1 vectors of dimension 99999999999999999999 but the file has 38 bytes: not even one vector fits"),
    ("w2v text header dim too big", {"v.vec": "1 99999999999999999999\nhe 1 2\n"}, ["--model", "{d}/v.vec"],
     "v.vec:1: header gives dimension 99999999999999999999, not a plausible vector size"),
    ("w2v binary gz truncated", {"v.bin.gz": gzip.compress(_GOOD_BIN)[:-12]}, ["--model", "{d}/v.bin.gz"],
     "v.bin.gz: the gzip stream is truncated"),
    ("glove gz truncated", {"v.txt.gz": gzip.compress(b"he 1 2\nshe 2 1\n" * 40)[:-12]}, ["--model", "glove:{d}/v.txt.gz"],
     "v.txt.gz: the gzip stream is truncated"),
    ("gz name, not gzip", {"v.txt.gz": "he 1 2\nshe 2 1\n"}, ["--model", "{d}/v.txt.gz"],
     "v.txt.gz: not a gzip file despite its .gz name (it starts with bytes b'he')"),
    ("binary gz name, not gzip", {"v.bin.gz": _GOOD_BIN}, ["--model", "{d}/v.bin.gz"], "v.bin.gz: not a gzip file despite its .gz name"),
    ("npy with 0 columns", {"m.npy": np.zeros((2, 0), dtype=np.float32), "m.vocab": "he\nshe\n"}, ["--model", "npy:{d}/m.npy"],
     "the matrix has 0 columns"),
    ("glove duplicate word", {"v.txt": "he 1 2\nshe 2 1\nhe 3 3\n"}, ["--model", "glove:{d}/v.txt"],
     "v.txt:3: word 'he' appears again (first on line 1)"),
    ("w2v text duplicate after NFC", {"v.vec": "2 2\ncaf\u00e9 1 2\ncafe\u0301 2 1\n"}, ["--model", "{d}/v.vec"],
     "v.vec:3: word 'caf\u00e9' appears again (first on line 2) after Unicode NFC normalisation"),
    ("w2v binary duplicate word", {"v.bin": _w2v_bin("2 3", [("he", (1, 2, 3)), ("he", (3, 2, 1))])}, ["--model", "{d}/v.bin"],
     "v.bin: entry 2: word 'he' appears again (first in entry 1)"),
    ("npy vocabulary duplicate word", {"m.npy": np.eye(3), "m.vocab": "he\nshe\nhe\n"}, ["--model", "npy:{d}/m.npy"],
     "m.vocab:3: word 'he' appears again (first on line 1)"),
    ("bare .kv pickle", {"x.kv": ("PICKLE",)}, ["--model", "{d}/x.kv"],
     "x.kv: gensim .kv files are Python pickles: loading one runs code from the file; pass --allow-pickle only for files you trust"),
    ("gensim: pickle without opt-in", {"x.kv": ("PICKLE",)}, ["--model", "gensim:{d}/x.kv"],
     "x.kv: gensim .kv files are Python pickles"),
]


def _materialise(d, files):
    for name, content in files.items():
        p = d / name
        if isinstance(content, np.ndarray):
            np.save(p, content)
        elif content == "FIFO":
            os.mkfifo(p)
        elif content == ("PICKLE",):
            p.write_bytes(pickle.dumps(_Marker(str(d / "pwned"))))
        elif isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")


def _snapshot(d):
    return {str(p): (p.read_bytes() if p.is_file() else "other") for p in d.rglob("*")}


@pytest.mark.parametrize("name, files, args, expected", CASES, ids=[c[0] for c in CASES])
def test_bad_model_file_gives_one_line_error(tmp_path, capsys, monkeypatch, glove, name, files, args, expected):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    _materialise(tmp_path, files)
    argv = ["weat", *[a.replace("{d}", str(tmp_path)) for a in args], "--test", "W6"]
    before = _snapshot(tmp_path)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, (name, err)
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1, err
    assert expected in err, err
    assert "Traceback" not in err
    assert _snapshot(tmp_path) == before  # nothing written, and the pickle never ran
    assert not (tmp_path / "pwned").exists()


def test_catalogue_size():
    assert len(CASES) >= 15
    assert len({c[0] for c in CASES}) == len(CASES)
