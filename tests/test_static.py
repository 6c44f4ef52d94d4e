"""Static vector readers, lookup and case policy, on real and hand-made files."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

import isoeat
from isoeat import DataFormatError, IsoeatFileNotFoundError, UnknownNameError
from isoeat.backends.static import read_glove_text, read_word2vec_binary, read_word2vec_text

WORDS = ["the", "cat", "Dog", "new york"]
MAT = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5], [0.0, 2.0, 1.0], [3.0, 1.0, -2.0]], dtype=np.float32)


def _write_glove(path, words=WORDS, mat=MAT):
    path.write_text("".join(f"{w} {' '.join(repr(float(x)) for x in row)}\n" for w, row in zip(words, mat)))


def _write_w2v_bin(path, words=WORDS, mat=MAT, count=None):
    with open(path, "wb") as fh:
        fh.write(f"{count or len(words)} {mat.shape[1]}\n".encode())
        for w, row in zip(words, mat):
            fh.write(w.encode() + b" " + struct.pack(f"<{len(row)}f", *row) + b"\n")


def test_glove_6b_50d_is_the_real_vectors(glove):
    # Reference: first line of Stanford's glove.6B.50d.txt: "the 0.418 0.24968 -0.41242 0.1217 0.34527 ..."
    assert len(glove) == 400_000 and glove.dim == 50
    assert glove.words[:5] == ("the", ",", ".", "of", "to")
    np.testing.assert_allclose(glove.lookup(["the"]).vectors[0, :5], [0.418, 0.24968, -0.41242, 0.1217, 0.34527], rtol=1e-6)
    assert glove.lowercase_fallback  # GloVe 6B is lowercase
    assert not isinstance(glove.vectors, np.ndarray) or isinstance(glove.vectors, np.memmap)


def test_case_fallback_reported(glove):
    lk = glove.lookup(["Adam", "adam", "Zzzqqq"])
    assert lk.found == ("Adam", "adam") and lk.missing == ("Zzzqqq",)
    assert lk.case_folded == (("Adam", "adam"),)
    np.testing.assert_array_equal(lk.vectors[0], lk.vectors[1])
    assert lk.coverage == pytest.approx(2 / 3)


def test_glove_text_reader(tmp_path):
    p = tmp_path / "v.txt"
    _write_glove(p)
    m = isoeat.load_model(str(p))
    assert m.words == tuple(WORDS) and m.dim == 3
    np.testing.assert_allclose(m.lookup(["new york"]).vectors[0], MAT[3])
    # mixed-case vocabulary: no lowercase fallback by default
    assert not m.lowercase_fallback and m.lookup(["CAT"]).missing == ("CAT",)
    lk = isoeat.load_model(f"glove:{p}", lowercase_fallback=True).lookup(["CAT", "dog"])
    assert lk.found == ("CAT",) and lk.case_folded == (("CAT", "cat"),) and lk.missing == ("dog",)


def test_word2vec_text_and_gz(tmp_path):
    p = tmp_path / "v.vec.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(f"{len(WORDS)} 3\n")
        for w, row in zip(WORDS[:3], MAT[:3]):
            fh.write(f"{w} {' '.join(map(str, row))}\n")
    with pytest.raises(DataFormatError, match="header announces 4 vectors, file has 3"):
        isoeat.load_model(str(p))


def test_word2vec_binary_agrees_with_gensim(tmp_path):
    gensim = pytest.importorskip("gensim")
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=3)
    kv.add_vectors(WORDS[:3], MAT[:3])
    p = tmp_path / "v.bin"
    kv.save_word2vec_format(str(p), binary=True)
    words, mat = read_word2vec_binary(p)
    assert words == WORDS[:3]
    np.testing.assert_array_equal(mat, MAT[:3])
    # the same through gensim's .kv format and word2vec text
    kv.save(str(tmp_path / "v.kv"))
    m = isoeat.load_model(f"gensim:{tmp_path / 'v.kv'}", allow_pickle=True)  # pickles need the explicit opt-in
    np.testing.assert_array_equal(m.lookup(["cat"]).vectors[0], MAT[1])
    kv.save_word2vec_format(str(tmp_path / "v.w2v.txt"), binary=False)
    w2, m2 = read_word2vec_text(tmp_path / "v.w2v.txt")
    assert w2 == WORDS[:3]
    np.testing.assert_allclose(m2, MAT[:3], rtol=1e-6)
    del gensim


def test_npy_with_vocab(tmp_path):
    np.save(tmp_path / "m.npy", MAT)
    (tmp_path / "m.vocab").write_text("\n".join(WORDS) + "\n")
    m = isoeat.load_model(f"npy:{tmp_path / 'm.npy'}")
    np.testing.assert_array_equal(m.lookup(["Dog"]).vectors[0], MAT[2])
    (tmp_path / "other.txt").write_text("\n".join(WORDS) + "\n")
    np.save(tmp_path / "n.npy", MAT)
    m2 = isoeat.load_model(f"npy:{tmp_path / 'n.npy'},{tmp_path / 'other.txt'}")
    assert len(m2) == 4


def test_npy_refuses_object_arrays(tmp_path):
    np.save(tmp_path / "o.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (tmp_path / "o.vocab").write_text("a\n")
    with pytest.raises(DataFormatError, match="not a plain .npy"):
        isoeat.load_model(str(tmp_path / "o.npy"))


@pytest.mark.parametrize(
    "text, match",
    [
        ("a 1 2 3\nb 1 2\n", r"v\.txt:2: word 'b' has 2 values, expected 3"),
        ("a 1 2 3\nb 1 x 3\n", r"v\.txt:2: word 'b': 'x' is not a number"),
        ("a 1 2 3\nb 1 nan 3\n", r"v\.txt:2: word 'b' has NaN or inf"),
        ("a 1 2 3\nb 1 inf 3\n", r"v\.txt:2: word 'b' has NaN or inf"),
    ],
)
def test_malformed_glove_lines(tmp_path, text, match):
    p = tmp_path / "v.txt"
    p.write_text(text)
    with pytest.raises(DataFormatError, match=match):
        isoeat.load_model(f"glove:{p}")


def test_non_utf8_names_line(tmp_path):
    p = tmp_path / "v.txt"
    p.write_bytes(b"a 1 2\nb\xff 1 2\n")
    with pytest.raises(DataFormatError, match=r"v\.txt:2: not valid UTF-8"):
        read_glove_text(p)


def test_truncated_and_lying_binary(tmp_path):
    p = tmp_path / "v.bin"
    _write_w2v_bin(p, count=10)
    with pytest.raises(DataFormatError, match="ends after 4 of the 10 vectors"):
        isoeat.load_model(str(p))
    data = (tmp_path / "v.bin").read_bytes()
    (tmp_path / "t.bin").write_bytes(data[:-10])
    with pytest.raises(DataFormatError, match="ends inside vector|ends after"):
        isoeat.load_model(str(tmp_path / "t.bin"))


def test_empty_and_missing_files(tmp_path):
    (tmp_path / "e.txt").write_text("")
    with pytest.raises(DataFormatError, match="file is empty"):
        isoeat.load_model(str(tmp_path / "e.txt"))
    with pytest.raises(UnknownNameError, match="no such file"):
        isoeat.load_model(str(tmp_path / "missing.txt"))
    with pytest.raises(IsoeatFileNotFoundError, match="no such file"):
        isoeat.load_model(f"glove:{tmp_path / 'missing.txt'}")


def test_unknown_model_suggests():
    with pytest.raises(UnknownNameError, match="did you mean glove-6b-50d"):
        isoeat.load_model("glove-6b-5Od")


def test_zero_vector_refused_at_lookup(tmp_path):
    p = tmp_path / "v.txt"
    p.write_text("a 1 2\nb 0 0\n")
    m = isoeat.load_model(f"glove:{p}")
    with pytest.raises(DataFormatError, match="vector of 'b' is all zeros"):
        m.lookup(["a", "b"])


def test_reference_vectors(glove, tmp_path):
    vecs, desc = glove.reference_vectors(1000)
    assert vecs.shape == (1000, 50) and "top 1000" in desc
    np.testing.assert_array_equal(vecs[0], glove.lookup(["the"]).vectors[0])
    text = tmp_path / "ref.txt"
    text.write_text("The cat sat. The cat ran! A dog ran.\n")
    vecs, desc = glove.reference_vectors(3, text=text)
    assert vecs.shape == (3, 50) and "ref.txt" in desc


def test_fingerprint_stable_and_sensitive(tmp_path):
    p = tmp_path / "v.txt"
    _write_glove(p)
    a = isoeat.load_model(str(p)).fingerprint
    assert a == isoeat.load_model(str(p)).fingerprint
    m2 = MAT.copy()
    m2[0, 0] += 1
    _write_glove(p, mat=m2)
    assert isoeat.load_model(str(p)).fingerprint != a
