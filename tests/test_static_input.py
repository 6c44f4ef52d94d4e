"""Static model input: content fingerprints (and their cache), readers that do
not silently change meaning (BOM, NFC, duplicates), bounded and safe input,
and no pickle without an explicit opt-in."""

from __future__ import annotations

import gzip
import json
import os
import pickle
import struct
import threading
import time
import warnings

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, DataFormatError, IsoeatError, IsoeatWarning
from isoeat.backends import static as static_mod
from isoeat.backends.static import StaticVectors, read_glove_text, read_word2vec_text

PAST = 1_600_000_000  # a fixed mtime in the past (so the fingerprint cache may store the entry)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(d))
    monkeypatch.delenv("ISOEAT_NO_CACHE", raising=False)
    return d


def _npy_model(d, mat, words, name="m"):
    np.save(d / f"{name}.npy", mat)
    (d / f"{name}.vocab").write_text("\n".join(words) + "\n", encoding="utf-8")
    for suffix in (".npy", ".vocab"):
        os.utime(d / f"{name}{suffix}", (PAST, PAST))
    return f"npy:{d / f'{name}.npy'}"


def _big(n=3000, dim=6):
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, dim)).astype(np.float32), [f"w{i}" for i in range(n)]


# --------------------------------------------------------------------------- fingerprint
def test_fingerprint_sees_a_change_in_any_row(tmp_path, cache_dir):
    mat, words = _big()
    spec = _npy_model(tmp_path, mat, words)
    a = isoeat.load_model(spec).fingerprint
    changed = mat.copy()
    changed[1, 3] += 0.5  # row 1 is not among 1,024 evenly spaced rows of 3,000
    spec2 = _npy_model(tmp_path, changed, words, name="m2")
    assert isoeat.load_model(spec2).fingerprint != a
    assert StaticVectors(words, changed).fingerprint != StaticVectors(words, mat).fingerprint


def test_fingerprint_sees_one_word_of_the_vocabulary(tmp_path, cache_dir):
    mat, words = _big()
    a = isoeat.load_model(_npy_model(tmp_path, mat, words)).fingerprint
    other = list(words)
    other[1] = "renamed"
    assert isoeat.load_model(_npy_model(tmp_path, mat, other, name="m2")).fingerprint != a


def test_fingerprint_cache_warm_and_touched(tmp_path, cache_dir, monkeypatch):
    mat, words = _big()
    spec = _npy_model(tmp_path, mat, words)
    calls = []
    real = static_mod.content_fingerprint

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(static_mod, "content_fingerprint", counting)
    a = isoeat.load_model(spec).fingerprint
    assert len(calls) == 1 and (cache_dir / "fingerprints.json").is_file()
    assert isoeat.load_model(spec).fingerprint == a and len(calls) == 1  # warm: served from the cache
    os.utime(tmp_path / "m.npy", (PAST + 10, PAST + 10))  # touched, content unchanged
    assert isoeat.load_model(spec).fingerprint == a and len(calls) == 2  # recomputed, same value
    # a fresh file (mtime within the racy window) is hashed but not cached
    mat2, _ = _big()
    np.save(tmp_path / "m.npy", mat2 + 1)
    b = isoeat.load_model(spec).fingerprint
    assert b != a and len(calls) == 3
    assert isoeat.load_model(spec).fingerprint == b and len(calls) == 4


def test_fingerprint_cache_cannot_be_written(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(blocker))
    mat, words = _big(50)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fp = isoeat.load_model(_npy_model(tmp_path, mat, words)).fingerprint
    assert fp == StaticVectors(words, mat).fingerprint


def test_fingerprint_cache_corrupt_file_is_ignored(tmp_path, cache_dir):
    cache_dir.mkdir()
    (cache_dir / "fingerprints.json").write_text("{not json")
    mat, words = _big(50)
    fp = isoeat.load_model(_npy_model(tmp_path, mat, words)).fingerprint
    assert fp == StaticVectors(words, mat).fingerprint
    assert json.loads((cache_dir / "fingerprints.json").read_text())["entries"]


# --------------------------------------------------------------------------- BOM, NFC, duplicates
def test_bom_is_stripped_from_vector_and_vocabulary_files(tmp_path):
    p = tmp_path / "v.txt"
    p.write_bytes("\ufeffhe 1 2\nshe 2 1\n".encode())
    assert "he" in isoeat.load_model(f"glove:{p}")
    v = tmp_path / "v.vec"
    v.write_bytes("\ufeff2 2\nhe 1 2\nshe 2 1\n".encode())
    assert isoeat.load_model(str(v)).words == ("he", "she")
    np.save(tmp_path / "m.npy", np.eye(2))
    (tmp_path / "m.vocab").write_bytes("\ufeffhe\nshe\n".encode())
    assert "he" in isoeat.load_model(f"npy:{tmp_path / 'm.npy'}")


def test_words_are_normalised_to_nfc_and_reported(tmp_path):
    p = tmp_path / "v.txt"
    p.write_text("cafe\u0301 1 2\nthe 2 1\n", encoding="utf-8")
    with pytest.warns(IsoeatWarning, match=r"1 word\(s\) .*not in Unicode NFC.*'cafe\\u0301'"):
        m = isoeat.load_model(f"glove:{p}")
    assert m.words[0] == "caf\u00e9"
    d = m.describe()["unicode_normalized"]
    assert d["count"] == 1 and d["examples"] == [["cafe\u0301", "caf\u00e9"]]
    lk = m.lookup(["cafe\u0301", "caf\u00e9"])  # NFD and NFC queries both match
    assert lk.found == ("cafe\u0301", "caf\u00e9") and not lk.missing
    with pytest.warns(IsoeatWarning, match="not in Unicode NFC"):
        assert read_glove_text(p)[0][0] == "caf\u00e9"


def test_nfd_query_matches_nfc_vocabulary():
    m = StaticVectors(["caf\u00e9", "x"], np.eye(2))
    assert m.lookup(["cafe\u0301"]).found == ("cafe\u0301",)
    assert "cafe\u0301" in m and m.describe()["unicode_normalized"]["count"] == 0


def test_duplicate_words_are_an_error_by_default(tmp_path):
    p = tmp_path / "v.txt"
    p.write_text("a 1 2\nb 1 1\na 2 1\n")
    with pytest.raises(DataFormatError, match=r"v\.txt:3: word 'a' appears again \(first on line 1\)"):
        isoeat.load_model(f"glove:{p}")
    with pytest.raises(DataFormatError, match=r"v\.txt:3: word 'a' appears again"):
        read_glove_text(p)
    first = isoeat.load_model(f"glove:{p}", duplicates="first")
    last = isoeat.load_model(f"glove:{p}", duplicates="last")
    np.testing.assert_array_equal(first.lookup(["a"]).vectors[0], [1, 2])
    np.testing.assert_array_equal(last.lookup(["a"]).vectors[0], [2, 1])
    assert first.describe()["duplicates"] == {"policy": "first", "count": 1, "examples": ["a"]}
    assert first.fingerprint != last.fingerprint  # the same file means different vectors
    with pytest.raises(ConfigError, match="duplicates must be one of error, first, last; got 'frist'"):
        isoeat.load_model(f"glove:{p}", duplicates="frist")


def test_duplicates_after_normalisation_and_in_npy_vocabularies(tmp_path):
    p = tmp_path / "v.vec"
    p.write_text("2 2\ncaf\u00e9 1 2\ncafe\u0301 2 1\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"v\.vec:3: word 'caf\u00e9' appears again \(first on line 2\)"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IsoeatWarning)
            read_word2vec_text(p)
    np.save(tmp_path / "m.npy", np.eye(3))
    (tmp_path / "m.vocab").write_text("x\ny\nx\n")
    with pytest.raises(DataFormatError, match=r"m\.vocab:3: word 'x' appears again \(first on line 1\)"):
        isoeat.load_model(f"npy:{tmp_path / 'm.npy'}")
    with pytest.raises(DataFormatError, match=r"mem: row 2: word 'x' appears again \(first in row 1\)"):
        StaticVectors(["x", "x"], np.eye(2), name="mem")
    assert len(StaticVectors(["x", "x"], np.eye(2), duplicates="first")) == 2


def test_duplicates_in_word2vec_binary(tmp_path):
    p = tmp_path / "v.bin"
    with open(p, "wb") as fh:
        fh.write(b"2 2\n")
        for w, v in (("a", (1, 2)), ("a", (2, 1))):
            fh.write(w.encode() + b" " + struct.pack("<2f", *v) + b"\n")
    with pytest.raises(DataFormatError, match=r"v\.bin: entry 2: word 'a' appears again \(first in entry 1\)"):
        isoeat.load_model(str(p))


# --------------------------------------------------------------------------- bounded and safe input
def _writer_for(fifo, payload, stop):
    """Feeds the FIFO if anyone opens it for reading (so old code would not hang forever)."""
    deadline = time.time() + 5
    while time.time() < deadline and not stop.is_set():
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            time.sleep(0.05)
            continue
        os.write(fd, payload)
        os.close(fd)
        return


@pytest.mark.parametrize("spec", ["{p}", "glove:{p}"])
def test_fifo_is_refused_before_opening(tmp_path, spec):
    fifo = tmp_path / "v.txt"
    os.mkfifo(fifo)
    stop = threading.Event()
    t = threading.Thread(target=_writer_for, args=(fifo, b"he 1 2\nshe 2 1\n", stop), daemon=True)
    t.start()
    try:
        with pytest.raises(IsoeatError, match=r"v\.txt: not a regular file"):
            isoeat.load_model(spec.format(p=fifo))
    finally:
        stop.set()
        t.join()


@pytest.mark.parametrize("dev", ["/dev/null", "/dev/zero"])
def test_devices_are_refused(dev):
    if not os.path.exists(dev):
        pytest.skip(f"no {dev}")
    with pytest.raises(IsoeatError, match="not a regular file"):
        isoeat.load_model(f"glove:{dev}")
    with pytest.raises(IsoeatError, match="not a regular file"):
        isoeat.load_model(dev)


def test_line_length_is_bounded(tmp_path):
    p = tmp_path / "v.txt"
    p.write_text("a 1 2\nb " + "1.5 " * 300_000 + "\n")
    with pytest.raises(DataFormatError, match=r"v\.txt:2: line longer than 1 MiB"):
        isoeat.load_model(f"glove:{p}")


def test_binary_header_is_checked_against_the_file_size(tmp_path):
    p = tmp_path / "v.bin"
    p.write_bytes(b"99999999999999 300\nhe " + struct.pack("<300f", *range(300)))
    need = f"{99999999999999 * (4 * 300 + 2):,}"
    with pytest.raises(DataFormatError, match=r"v\.bin: file ends after 1 of the 99999999999999 vectors its header "
                                              rf"announces \(they need at least {need} bytes; the file has 1,222 bytes\)"):
        isoeat.load_model(str(p))
    p.write_bytes(b"1 99999999999999999999\nhe " + b"\0" * 40)
    with pytest.raises(DataFormatError, match=r"v\.bin:1: header announces 1 vectors of dimension 99999999999999999999"):
        isoeat.load_model(str(p))
    g = tmp_path / "v.bin.gz"
    g.write_bytes(gzip.compress(b"99999999999999 300\nhe " + b"\0" * 1200))
    with pytest.raises(DataFormatError, match=r"v\.bin\.gz: file ends after 1 of the 99999999999999 vectors"):
        isoeat.load_model(str(g))


def test_text_header_with_absurd_dimension(tmp_path):
    p = tmp_path / "v.vec"
    p.write_text("1 99999999999999999999\nhe 1 2\n")
    with pytest.raises(DataFormatError, match=r"v\.vec:1: header gives dimension 99999999999999999999"):
        isoeat.load_model(str(p))


def test_truncated_bin_gz(tmp_path):
    raw = b"2 3\n" + b"".join(w + b" " + struct.pack("<3f", 1, 2, 3) + b"\n" for w in (b"he", b"she"))
    g = tmp_path / "v.bin.gz"
    g.write_bytes(gzip.compress(raw)[:-12])
    with pytest.raises(DataFormatError, match=r"v\.bin\.gz: the gzip stream is truncated"):
        isoeat.load_model(str(g))
    t = tmp_path / "v.txt.gz"
    t.write_bytes(gzip.compress(b"he 1 2\nshe 2 1\n" * 50)[:-12])
    with pytest.raises(DataFormatError, match=r"v\.txt\.gz: the gzip stream is truncated"):
        isoeat.load_model(f"glove:{t}")


@pytest.mark.parametrize("spec", ["{p}", "glove:{p}", "word2vec:{p}"])
def test_gz_name_without_gzip_content(tmp_path, spec):
    p = tmp_path / "v.txt.gz"
    p.write_text("he 1 2\n")
    with pytest.raises(DataFormatError, match=r"v\.txt\.gz: not a gzip file despite its \.gz name"):
        isoeat.load_model(spec.format(p=p))


def test_npy_with_zero_columns(tmp_path):
    np.save(tmp_path / "m.npy", np.zeros((2, 0), dtype=np.float32))
    (tmp_path / "m.vocab").write_text("a\nb\n")
    with pytest.raises(DataFormatError, match="0 columns"):
        isoeat.load_model(f"npy:{tmp_path / 'm.npy'}")


# --------------------------------------------------------------------------- no pickle by default
class _Marker:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.mark.parametrize("spec", ["{p}", "gensim:{p}"])
def test_pickle_kv_refused_without_opt_in(tmp_path, spec):
    marker = tmp_path / "pwned"
    p = tmp_path / "x.kv"
    p.write_bytes(pickle.dumps(_Marker(str(marker))))
    with pytest.raises(ConfigError, match=r"x\.kv: gensim \.kv files are Python pickles: loading one runs code "
                                          r"from the file; pass --allow-pickle only for files you trust"):
        isoeat.load_model(spec.format(p=p))
    assert not marker.exists()
    if spec == "{p}":  # a bare path needs the explicit gensim: prefix even with the opt-in
        with pytest.raises(ConfigError, match="gensim:"):
            isoeat.load_model(str(p), allow_pickle=True)
        assert not marker.exists()


def test_allow_pickle_is_a_checked_flag(tmp_path):
    with pytest.raises(ConfigError, match="allow_pickle must be true or false, got 'yes'"):
        isoeat.load_model("gensim:/nonexistent/x.kv", allow_pickle="yes")
    p = tmp_path / "v.txt"
    p.write_text("he 1 2\nshe 2 1\n")
    assert len(isoeat.load_model(f"glove:{p}", allow_pickle=False)) == 2  # harmless for other formats


def test_gensim_kv_loads_with_opt_in(tmp_path):
    pytest.importorskip("gensim")
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=2)
    kv.add_vectors(["he", "she"], np.array([[1, 2], [2, 1]], dtype=np.float32))
    kv.save(str(tmp_path / "v.kv"))
    m = isoeat.load_model(f"gensim:{tmp_path / 'v.kv'}", allow_pickle=True)
    np.testing.assert_array_equal(m.lookup(["she"]).vectors[0], [2, 1])
