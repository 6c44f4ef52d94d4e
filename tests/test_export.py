"""``isoeat export`` / ``isoeat.export_vectors`` (issue 44): a model's vectors for words or its top rows, written
to ``.npy`` + vocabulary or GloVe text, read back by ``load_model("npy:...")`` / ``glove:`` with identical vectors.

The expected vectors are the model's own rows, read here by index from its matrix (``model.vectors[i]``), never
through the exporter.
"""

from __future__ import annotations

import numpy as np
import pytest

import isoeat
from isoeat.backends import _export
from isoeat.cli import main


def _toy(n=7, dim=3, dtype=np.float32, words=None):
    rng = np.random.default_rng(0)
    words = words or [f"w{i}" for i in range(n)]
    return isoeat.StaticVectors(words, rng.normal(size=(len(words), dim)).astype(dtype), name="toy")


def _listing(d):
    return sorted(p.name for p in d.iterdir())


def test_npy_export_of_words_loads_back_identical(tmp_path, glove):
    out = tmp_path / "jobs.npy"
    done = isoeat.export_vectors(glove, out, words=["nurse", "Engineer", "doctor", "nurse"])
    # each row once, in the order asked; "Engineer" is found by the lowercase fallback: written as its entry
    assert done["rows"] == 3 and done["vocabulary"] == str(tmp_path / "jobs.vocab") and done["missing"] == []
    back = isoeat.load_model(f"npy:{out}")
    rows = [glove.words.index(w) for w in ("nurse", "engineer", "doctor")]
    assert back.words == ("nurse", "engineer", "doctor")
    assert back.vectors.dtype == glove.vectors.dtype
    assert np.array_equal(back.vectors, np.asarray(glove.vectors)[rows])
    assert _listing(tmp_path) == ["jobs.npy", "jobs.vocab"]  # no temporary left


def test_glove_text_export_of_the_top_rows_loads_back_identical(tmp_path, glove):
    out = tmp_path / "top.txt"
    assert isoeat.export_vectors(glove, out, top=2000)["spec"] == f"glove:{out}"
    back = isoeat.load_model(f"glove:{out}")
    assert back.words == glove.words[:2000]
    assert np.array_equal(back.vectors, np.asarray(glove.vectors)[:2000])
    assert out.read_text().startswith("the 0.418 0.24968 ")  # shortest decimals: GloVe's own text for its rows


@pytest.mark.parametrize("n", [2, 3, 4, 6, 7])  # chunks of 3 rows: one short, one exact, one over, two, two over
@pytest.mark.parametrize("suffix", [".npy", ".txt"])
def test_chunk_boundaries(tmp_path, monkeypatch, n, suffix):
    monkeypatch.setattr(_export, "CHUNK_ROWS", 3)
    model = _toy(7)
    out = tmp_path / f"v{suffix}"
    isoeat.export_vectors(model, out, top=n)
    back = isoeat.load_model(f"{'npy' if suffix == '.npy' else 'glove'}:{out}")
    assert back.words == model.words[:n] and np.array_equal(back.vectors, model.vectors[:n])
    words = [model.words[i] for i in (6, 0, 3, 5, 1, 2, 4)][:n]
    isoeat.export_vectors(model, out, words=words, force=True)
    back = isoeat.load_model(f"{'npy' if suffix == '.npy' else 'glove'}:{out}")
    assert list(back.words) == words
    assert np.array_equal(back.vectors, model.vectors[[model.words.index(w) for w in words]])


def test_top_at_the_vocabulary_size_and_one_beyond(tmp_path):
    model = _toy(5)
    isoeat.export_vectors(model, tmp_path / "all.npy", top=5)
    assert np.array_equal(np.load(tmp_path / "all.npy"), model.vectors)
    with pytest.raises(isoeat.ConfigError, match="top: 6 rows asked, but toy has 5; nothing written"):
        isoeat.export_vectors(model, tmp_path / "more.npy", top=6)
    with pytest.raises(isoeat.ConfigError, match="top"):
        isoeat.export_vectors(model, tmp_path / "none.npy", top=0)
    assert _listing(tmp_path) == ["all.npy", "all.vocab"]


def test_float64_keeps_every_bit_in_npy_and_is_refused_in_text(tmp_path):
    model = _toy(4, dtype=np.float64)
    assert not np.array_equal(model.vectors.astype(np.float32).astype(np.float64), model.vectors)
    isoeat.export_vectors(model, tmp_path / "v.npy", top=4)
    back = isoeat.load_model(f"npy:{tmp_path / 'v.npy'}")
    assert back.vectors.dtype == np.float64 and np.array_equal(back.vectors, model.vectors)
    with pytest.raises(isoeat.ConfigError, match="GloVe text is read back as float32.*write .npy"):
        isoeat.export_vectors(model, tmp_path / "v.txt", top=4)
    assert not (tmp_path / "v.txt").exists() and _listing(tmp_path) == ["v.npy", "v.vocab"]
    # float64 values that float32 holds exactly are written
    exact = isoeat.StaticVectors(["a", "b"], np.array([[0.5, -2.0], [0.25, 1.0]]), name="exact")
    isoeat.export_vectors(exact, tmp_path / "e.txt", top=2)
    assert np.array_equal(isoeat.load_model(f"glove:{tmp_path / 'e.txt'}").vectors, exact.vectors)


def test_existing_output_is_kept_without_force_and_replaced_with_it(tmp_path):
    model = _toy(4)
    out = tmp_path / "v.npy"
    isoeat.export_vectors(model, out, top=2)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for existing in (out, tmp_path / "v.vocab"):  # the matrix or only its vocabulary
        if existing.name == "v.vocab":
            out.unlink()
        with pytest.raises(isoeat.ConfigError, match=f"{existing.name} exists; nothing written"):
            isoeat.export_vectors(model, out, top=3)
    assert (tmp_path / "v.vocab").read_bytes() == before["v.vocab"]
    isoeat.export_vectors(model, out, top=3, force=True)
    assert np.array_equal(np.load(out), model.vectors[:3])


def test_a_word_that_cannot_be_a_line_writes_nothing(tmp_path):
    model = _toy(words=["a", "b c", "x 1.5", "tab\tword"])
    isoeat.export_vectors(model, tmp_path / "ok.txt", words=["a", "b c", "tab\tword"])  # GloVe reads these back
    assert isoeat.load_model(f"glove:{tmp_path / 'ok.txt'}").words == ("a", "b c", "tab\tword")
    with pytest.raises(isoeat.ConfigError, match="'x 1.5' holds a space followed by a number"):
        isoeat.export_vectors(model, tmp_path / "bad.txt", top=4)
    with pytest.raises(isoeat.ConfigError, match="'tab\\\\tword' holds a tab"):
        isoeat.export_vectors(model, tmp_path / "bad.npy", top=4)
    assert _listing(tmp_path) == ["ok.txt"]  # neither file of the pair, no temporary


def test_missing_words_refused_or_skipped(tmp_path, glove):
    with pytest.raises(isoeat.CoverageError, match="not in the vocabulary of glove-6b-50d: 'zzqxv'; nothing written"):
        isoeat.export_vectors(glove, tmp_path / "m.npy", words=["nurse", "zzqxv"])
    done = isoeat.export_vectors(glove, tmp_path / "m.npy", words=["nurse", "zzqxv"], skip_missing=True)
    assert done["rows"] == 1 and done["missing"] == ["zzqxv"]
    with pytest.raises(isoeat.CoverageError, match="no word of the list is in it"):
        isoeat.export_vectors(glove, tmp_path / "n.npy", words=["zzqxv"], skip_missing=True)


def test_api_misuse_is_one_line(tmp_path):
    model = _toy(3)
    for kw, text in (({}, "give words=[...] or top=N"), ({"words": ["w1"], "top": 1}, "give words=[...] or top=N"),
                     ({"words": []}, "words must be a non-empty list"), ({"words": [3]}, "words[0] must be")):
        with pytest.raises(isoeat.ConfigError, match=text.replace("[", r"\[").replace("]", r"\]")):
            isoeat.export_vectors(model, tmp_path / "v.npy", **kw)
    with pytest.raises(isoeat.ConfigError, match="model must be a model with a vocabulary"):
        isoeat.export_vectors(None, tmp_path / "v.npy", top=1)
    with pytest.raises(isoeat.ConfigError, match="give a name ending in .npy"):
        isoeat.export_vectors(model, tmp_path / "v.bin", top=1)
    assert "export_vectors" in isoeat.__all__ and _listing(tmp_path) == []


def test_cli_export_words_from_a_file_and_the_message(tmp_path, capsys, glove):
    (tmp_path / "words.txt").write_text("nurse\n\nEngineer\t12\nzzqxv\n")
    out = tmp_path / "w.npy"
    assert main(["export", "--words", str(tmp_path / "words.txt"), "--skip-missing", "--out", str(out)]) == 0
    cap = capsys.readouterr()
    assert f"load them with --model npy:{out}" in cap.out and "2 word(s) (dim 50, float32)" in cap.out
    assert "not in the vocabulary (not written): zzqxv" in cap.err
    back = isoeat.load_model(f"npy:{out}")
    assert back.words == ("nurse", "engineer")
    assert np.array_equal(back.vectors, np.asarray(glove.vectors)[[glove.words.index("nurse"),
                                                                   glove.words.index("engineer")]])


def test_cli_force_replaces_an_existing_export(tmp_path, capsys, glove):
    out = tmp_path / "v.txt"
    assert main(["export", "--top", "2", "--out", str(out)]) == 0
    assert main(["export", "--top", "3", "--out", str(out)]) == 2  # refused: the two rows are still there
    assert "v.txt exists; nothing written" in capsys.readouterr().err
    assert isoeat.load_model(f"glove:{out}").words == glove.words[:2]
    assert main(["export", "--top", "3", "--out", str(out), "--force"]) == 0
    assert isoeat.load_model(f"glove:{out}").words == glove.words[:3]
