"""The caches that make ``isoeat run`` fast (issue 41, item 6): each gives exactly what it replaces, and is
read again when what it was keyed by changes."""

from __future__ import annotations

import os

import numpy as np
import pytest

from isoeat.backends.cache import WordListCache, file_stamp
from isoeat.backends.static import StaticVectors


def _files(tmp_path, words):
    """A vocabulary file and a matrix file, stamped as written a minute ago (not racy)."""
    vocab, matrix = tmp_path / "v.txt", tmp_path / "m.npy"
    vocab.write_text("\n".join(words) + "\n", encoding="utf-8")
    np.save(matrix, np.arange(len(words) * 3, dtype=np.float64).reshape(len(words), 3))
    for f in (vocab, matrix):
        os.utime(f, ns=(f.stat().st_mtime_ns - 60 * 10**9,) * 2)
    return vocab, matrix


def _load(vocab, matrix, calls, **kwargs):
    def read_words():
        calls.append(1)
        return vocab.read_text(encoding="utf-8").splitlines()

    stamps = [file_stamp(matrix), file_stamp(vocab)]
    return StaticVectors.from_stamped_files(read_words, np.load(matrix, mmap_mode="r"), file_stamps=stamps,
                                            name="toy", **kwargs)


def test_word_list_cache_gives_the_model_read_from_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    vocab, matrix = _files(tmp_path, ["the", "Cat", "sat", "on", "mat"])
    calls: list[int] = []
    first = _load(vocab, matrix, calls)
    second = _load(vocab, matrix, calls)
    assert calls == [1]  # the second load read no word file
    # the reference: the constructor on the words as read (what every load did before the cache)
    plain = StaticVectors(vocab.read_text(encoding="utf-8").splitlines(), np.load(matrix), name="toy")
    for m in (first, second):
        assert m.words == plain.words and list(m._index.items()) == list(plain._index.items())
        assert m.lowercase_fallback == plain.lowercase_fallback and m.fingerprint == plain.fingerprint
        assert {k: v for k, v in m.describe().items()} == plain.describe()
    assert second.lookup(["Cat", "mat", "dog"]).missing == ("dog",)


def test_word_list_cache_reads_again_when_a_file_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    vocab, matrix = _files(tmp_path, ["a", "b", "c"])
    calls: list[int] = []
    _load(vocab, matrix, calls)
    vocab.write_text("x\ny\nz\n", encoding="utf-8")  # same size, new content and stamp
    assert _load(vocab, matrix, calls).words == ("x", "y", "z")
    assert calls == [1, 1]


@pytest.mark.parametrize("words", [["cafe\u0301", "b"], ["a", "a"]], ids=["not-nfc", "duplicate"])
def test_word_list_cache_stores_only_a_clean_vocabulary(tmp_path, monkeypatch, words):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    vocab, matrix = _files(tmp_path, words)
    calls: list[int] = []
    for _ in range(2):
        with pytest.warns(Warning) if words[0] != "a" else _nothing():
            _load(vocab, matrix, calls, duplicates="first")
    assert calls == [1, 1]  # read each time: its warning and duplicate report come from reading


def test_word_list_cache_racy_or_disabled_stores_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    stamps = [{**file_stamp(__file__), "racy": True}]
    assert not WordListCache().put(stamps, {"model": "m"}, ("a",))
    monkeypatch.setenv("ISOEAT_NO_CACHE", "1")
    assert not WordListCache().put([file_stamp(__file__)], {"model": "m"}, ("a",))


def test_word_list_cache_refuses_a_wrong_count_or_a_bad_entry(tmp_path):
    c = WordListCache(tmp_path)
    stamps = [{**file_stamp(__file__), "racy": False}]
    assert c.put(stamps, {"model": "m"}, ("a", "b"))
    assert c.get(stamps, {"model": "m"}, 3) is None  # the matrix has another number of rows: read the file
    path = c.cache.path(c.KIND, c._parts(stamps, {"model": "m"}))
    path.write_bytes(b"not a zip")
    assert c.get(stamps, {"model": "m"}, 2) is None and not path.exists()


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
