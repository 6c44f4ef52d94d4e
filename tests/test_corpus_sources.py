"""Corpus sources: content fingerprints of the bytes read, regular files only, bounded line length.

A stored result (a calibrator fitted on a reference corpus) may be reused only
while the corpus *content* is unchanged: every corpus exposes the SHA-256 of
the bytes of its source file(s) (``source_sha256``), and the reference
metadata of the contextual encoders carries it as ``corpus_sha256``.
"""

from __future__ import annotations

import hashlib
import os
import tracemalloc

import pytest

from isoeat import DataFormatError, IsoeatError
from isoeat.corpora import Corpus, file_sha256, load_corpus

LINE = "The doctor said that the quokka would recover in a few days at the hospital.\n"
OTHER = "Many flowers grew in the garden of the old family house during the summer.\n"


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- fingerprints
def test_corpus_exposes_the_sha256_of_its_file(tmp_path):
    f = _write(tmp_path / "ref.txt", LINE * 3)
    c = load_corpus(str(f), splitter="regex", cache=False)
    assert c.source_sha256 == hashlib.sha256(f.read_bytes()).hexdigest()
    assert c.describe()["source_sha256"] == c.source_sha256
    assert file_sha256(f) == c.source_sha256


def test_rewritten_file_gets_a_new_fingerprint_even_with_same_size_and_mtime(tmp_path):
    f = _write(tmp_path / "ref.txt", LINE * 3)
    st = f.stat()
    first = load_corpus(str(f), splitter="regex").source_sha256
    # same size, same mtime, new inode (an editor's save-by-rename): the cache must not answer
    tmp = _write(tmp_path / "ref.new", LINE.replace("doctor", "nurses") * 3)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, f)
    assert f.stat().st_size == st.st_size and f.stat().st_mtime_ns == st.st_mtime_ns
    second = load_corpus(str(f), splitter="regex")
    assert second.source_sha256 == hashlib.sha256(f.read_bytes()).hexdigest() != first
    assert second.contexts("nurses").found


def test_folder_fingerprint_covers_every_file_and_its_name(tmp_path):
    d = tmp_path / "corpus"
    d.mkdir()
    _write(d / "a.txt", LINE)
    _write(d / "b.txt", OTHER)
    fp = load_corpus(str(d), splitter="regex", cache=False).source_sha256
    os.rename(d / "b.txt", d / "c.txt")
    assert load_corpus(str(d), splitter="regex", cache=False).source_sha256 != fp


def test_file_sha256_is_cached_by_path_size_mtime_and_inode(tmp_path, monkeypatch):
    import isoeat.corpora._files as files

    f = _write(tmp_path / "ref.txt", LINE)
    opened = []
    real_open = files._open_raw
    monkeypatch.setattr(files, "_open_raw", lambda p: opened.append(p) or real_open(p))
    a = file_sha256(f)
    b = file_sha256(f)
    assert a == b and len(opened) == 1


def test_sentences_in_memory_have_a_content_fingerprint():
    a = Corpus.from_sentences([LINE.strip()])
    b = Corpus.from_sentences([OTHER.strip()])
    assert len(a.source_sha256) == 64 and a.source_sha256 != b.source_sha256


def test_contextual_reference_metadata_carries_the_corpus_sha256(tmp_path):
    from isoeat.backends.transformer import TransformerEncoder

    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 2}')
    m = TransformerEncoder(str(folder), use_cache=False, progress=False)
    f = _write(tmp_path / "ref.txt", LINE * 3)
    meta = m.reference_metadata(10, text=str(f))
    assert meta["corpus_sha256"] == hashlib.sha256(f.read_bytes()).hexdigest()
    _write(f, OTHER * 4)
    assert m.reference_metadata(10, text=str(f))["corpus_sha256"] == hashlib.sha256(f.read_bytes()).hexdigest()
    assert m.reference_metadata(10, corpus=[LINE.strip()])["corpus_sha256"] == Corpus.from_sentences(
        [LINE.strip()]).source_sha256


# ----------------------------------------------------------------------------- regular files, bounded lines
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_refused_before_opening(tmp_path):
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    with pytest.raises(IsoeatError, match=r"pipe.txt: not a regular file \(a FIFO\); expected a corpus file"):
        load_corpus(str(fifo), cache=False)
    with pytest.raises(IsoeatError, match=r"not a regular file \(a FIFO\)"):
        file_sha256(fifo)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_device_is_refused(tmp_path):
    with pytest.raises(IsoeatError, match=r"/dev/zero: not a regular file \(a character device\)"):
        load_corpus("text:/dev/zero", cache=False)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_inside_a_folder_is_refused(tmp_path):
    d = tmp_path / "corpus"
    d.mkdir()
    _write(d / "a.txt", LINE)
    os.mkfifo(d / "b.txt")
    with pytest.raises(IsoeatError, match=r"b.txt: not a regular file \(a FIFO\)"):
        load_corpus(str(d), cache=False)


def test_a_line_over_the_limit_is_an_error_naming_file_and_line(tmp_path, monkeypatch):
    import isoeat.corpora._files as files

    monkeypatch.setattr(files, "MAX_LINE_BYTES", 200)
    f = _write(tmp_path / "long.txt", LINE + ("word " * 100) + "\n" + LINE)
    with pytest.raises(DataFormatError, match=r"long.txt:2: line longer than 200 bytes"):
        load_corpus(str(f), splitter="regex", cache=False)


def test_a_huge_single_line_is_refused_without_being_held_in_memory(tmp_path):
    f = tmp_path / "one-line.txt"
    with open(f, "wb") as fh:
        for _ in range(24):
            fh.write(b"word " * 200_000)  # 24 MB, no newline
    tracemalloc.start()
    try:
        with pytest.raises(DataFormatError, match=r"one-line.txt:1: line longer than 1 MiB"):
            load_corpus(str(f), splitter="regex", cache=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak


def test_empty_file_says_so_and_blank_file_does_not(tmp_path):
    e = _write(tmp_path / "empty.txt", "")
    with pytest.raises(DataFormatError, match="empty.txt: no usable sentences.*the file is empty"):
        load_corpus(str(e), cache=False)
    b = _write(tmp_path / "blank.txt", "\n\n   \n")
    with pytest.raises(DataFormatError) as ei:
        load_corpus(str(b), cache=False)
    assert "no usable sentences" in str(ei.value) and "is empty" not in str(ei.value)
