"""The embedding cache: keys, atomic npz entries, corrupt files, and hits/invalidation
through the hf: and st: encoders (every key part changes the entry)."""

from __future__ import annotations

import json
import os
import shutil
import zipfile

import numpy as np
import pytest

from isoeat import ConfigError, IsoeatWarning
from isoeat.backends.cache import CACHE_FORMAT, EmbeddingCache, _canonical, cache_key, default_cache_dir

# ----------------------------------------------------------------------------
# the store itself (no torch)
# ----------------------------------------------------------------------------


def test_key_is_canonical_and_sensitive():
    a = {"model": "abc", "layer": 6, "word": "doctor", "seed": 0}
    assert cache_key(a) == cache_key(dict(reversed(list(a.items()))))
    for k, v in [("model", "abd"), ("layer", 5), ("word", "Doctor"), ("seed", 1)]:
        assert cache_key({**a, k: v}) != cache_key(a)
    assert cache_key({**a, "extra": None}) != cache_key(a)
    assert len(cache_key(a)) == 64
    with pytest.raises(ConfigError):
        cache_key({"x": object()})
    with pytest.raises(ConfigError):
        cache_key({"x": float("nan")})


def test_roundtrip_atomic_and_layout(tmp_path):
    c = EmbeddingCache(tmp_path, enabled=True)
    parts = {"word": "doctor", "layer": 6}
    assert c.get("hf-word", parts) is None and c.misses == 1
    v = np.arange(6, dtype=np.float64).reshape(2, 3)
    path = c.put("hf-word", parts, {"vector": v, "n": np.int64(3)})
    assert path.suffix == ".npz" and path.parent.parent.name == "hf-word"
    assert path.parent.parent.parent == tmp_path / "embeddings"
    got = c.get("hf-word", parts)
    np.testing.assert_array_equal(got["vector"], v)
    assert int(got["n"]) == 3 and c.hits == 1 and c.writes == 1
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temporary files left
    # the key record is in the file and the file loads without pickles
    with np.load(path, allow_pickle=False) as npz:
        assert f'"cache_format":{CACHE_FORMAT}' in str(npz["__key__"])
    assert c.clear() == 1 and c.get("hf-word", parts) is None


def test_disabled_cache_neither_reads_nor_writes(tmp_path, monkeypatch):
    c = EmbeddingCache(tmp_path, enabled=False)
    assert c.put("k", {"a": 1}, {"v": np.ones(2)}) is None
    assert not (tmp_path / "embeddings").exists()
    monkeypatch.setenv("ISOEAT_NO_CACHE", "1")
    assert EmbeddingCache(tmp_path).enabled is False
    monkeypatch.delenv("ISOEAT_NO_CACHE")
    assert EmbeddingCache(tmp_path).enabled is True


def test_default_folder_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "here"))
    assert default_cache_dir() == tmp_path / "here" and EmbeddingCache().root == tmp_path / "here"
    monkeypatch.delenv("ISOEAT_CACHE_DIR")
    assert default_cache_dir().parts[-2:] == (".cache", "isoeat")


@pytest.mark.parametrize("damage", ["truncate", "garbage", "pickle", "wrong-key", "nan", "no-key"])
def test_corrupt_file_warns_and_recomputes(tmp_path, damage):
    c = EmbeddingCache(tmp_path, enabled=True)
    parts = {"word": "nurse"}
    path = c.put("hf-word", parts, {"vector": np.ones(4)})
    record = _canonical({"cache_format": CACHE_FORMAT, **parts})
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:40])
    elif damage == "garbage":
        path.write_bytes(b"this is not a zip file at all")
    elif damage == "pickle":  # a valid key record, but an object array (needs pickle to load)
        with open(path, "wb") as fh:
            np.savez(fh, vector=np.array([{"evil": 1}], dtype=object), __key__=np.array(record))
    elif damage == "wrong-key":
        other = c.put("hf-word", {"word": "doctor"}, {"vector": np.zeros(4)})
        shutil.copyfile(other, path)  # a valid file, under another key's name
    elif damage == "nan":
        with open(path, "wb") as fh:
            np.savez(fh, vector=np.full(4, np.nan), __key__=np.array(record))
    elif damage == "no-key":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("vector.npy", b"")
    with pytest.warns(IsoeatWarning, match="corrupt.*recomputing"):
        assert c.get("hf-word", parts) is None
    assert c.corrupt == 1 and not path.exists()
    c.put("hf-word", parts, {"vector": np.full(4, 2.0)})  # recomputed and stored again
    np.testing.assert_array_equal(c.get("hf-word", parts)["vector"], np.full(4, 2.0))


def test_object_arrays_are_refused(tmp_path):
    c = EmbeddingCache(tmp_path, enabled=True)
    with pytest.raises(ConfigError, match="no pickles"):
        c.put("k", {"a": 1}, {"v": np.array([{"x": 1}], dtype=object)})


def test_unwritable_cache_warns_and_continues(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    c = EmbeddingCache(blocker, enabled=True)  # root is a file: nothing can be written under it
    with pytest.warns(IsoeatWarning, match="cannot write the embedding cache"):
        assert c.put("k", {"a": 1}, {"v": np.ones(2)}) is None


# ----------------------------------------------------------------------------
# through the encoders (tiny random models; torch needed)
# ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    pytest.importorskip("torch")
    from test_transformer import build_tiny

    root = tmp_path_factory.mktemp("tiny-cache")
    return {"bert": build_tiny(root / "bert", "bert-uncased"), "bert2": build_tiny(root / "bert2", "bert-uncased", seed=1)}


@pytest.fixture(scope="module")
def corpora():
    from isoeat.corpora import Corpus
    from test_transformer import CORPUS

    return {"a": Corpus.from_sentences(CORPUS, name="a"),
            "b": Corpus.from_sentences(CORPUS + ["The quokka slept in the shade of a tall tree all day."], name="b")}


def _enc(folder, corpus, cache_dir, **kw):
    from isoeat.backends.transformer import TransformerEncoder

    kw.setdefault("progress", False)
    kw.setdefault("device", "cpu")
    return TransformerEncoder(str(folder), corpus=corpus, cache_dir=cache_dir, use_cache=True, **kw)


def _no_model(monkeypatch):
    from isoeat.backends.transformer import TransformerEncoder

    def boom(self, *a, **k):
        raise AssertionError("the model ran although the cache should have answered")

    monkeypatch.setattr(TransformerEncoder, "_pool", boom)
    monkeypatch.setattr(TransformerEncoder, "_load", boom)


WORDS = ["quokka", "flowers", "piano"]


def test_second_identical_run_does_not_run_the_model(tiny, corpora, tmp_path, monkeypatch):
    first = _enc(tiny["bert"], corpora["a"], tmp_path)
    with pytest.warns(IsoeatWarning, match="no context"):
        lk1 = first.lookup(WORDS)
    ref1 = np.concatenate(list(first.reference_batches(4)[0]))
    stats1, _ = first.reference_statistics(4)
    sen1 = first.encode_sentences(["A short sentence to embed here today."])
    _no_model(monkeypatch)
    second = _enc(tiny["bert"], corpora["a"], tmp_path)
    with pytest.warns(IsoeatWarning, match="no context"):
        lk2 = second.lookup(WORDS)
    np.testing.assert_array_equal(lk1.vectors, lk2.vectors)
    assert lk2.fallback == ("piano",) and lk2.n_contexts == lk1.n_contexts
    assert second.last_report["cache_hits"] == 3
    np.testing.assert_array_equal(np.concatenate(list(second.reference_batches(4)[0])), ref1)
    stats2, _ = second.reference_statistics(4)
    assert stats2.n == stats1.n == ref1.shape[0]
    np.testing.assert_array_equal(stats2.comoment, stats1.comoment)
    np.testing.assert_array_equal(second.encode_sentences(["A short sentence to embed here today."]), sen1)
    assert second.cache.writes == 0


@pytest.mark.parametrize("change", ["model", "layer", "corpus", "seed", "contexts_per_word", "max_length", "word"])
def test_any_key_part_change_recomputes(change, tiny, corpora, tmp_path):
    base = dict(folder=tiny["bert"], corpus=corpora["a"], layer=-1, seed=0, contexts_per_word=20, max_length=None)
    _enc(base.pop("folder"), base.pop("corpus"), tmp_path, **base).lookup(["quokka"])
    kw = dict(layer=-1, seed=0, contexts_per_word=20, max_length=None)
    folder, corpus, word = tiny["bert"], corpora["a"], "quokka"
    if change == "model":
        folder = tiny["bert2"]
    elif change == "layer":
        kw["layer"] = 1
    elif change == "corpus":
        corpus = corpora["b"]
    elif change == "seed":
        kw["seed"] = 1
    elif change == "contexts_per_word":
        kw["contexts_per_word"] = 1
    elif change == "max_length":
        kw["max_length"] = 60
    elif change == "word":
        word = "fox"
    m = _enc(folder, corpus, tmp_path, **kw)
    m.lookup([word])
    assert m.last_report["cache_hits"] == 0 and m.cache.writes == 1


def test_reference_cache_keyed_by_unit_and_sentences(tiny, corpora, tmp_path):
    m = _enc(tiny["bert"], corpora["a"], tmp_path, chunk_size=2)
    list(m.reference_batches(4)[0])
    assert m.cache.writes == 2
    list(m.reference_batches(4, unit="sentence")[0])  # another unit
    assert m.cache.writes == 4
    list(m.reference_batches(4, seed=7)[0])  # other sentences
    assert m.cache.writes > 4
    before = m.cache.writes
    list(m.reference_batches(2)[0])  # a prefix sample: the first chunk is the same sentences
    assert m.cache.writes == before and m.cache.hits >= 1


def test_corrupt_entry_is_recomputed_through_the_encoder(tiny, corpora, tmp_path):
    m = _enc(tiny["bert"], corpora["a"], tmp_path)
    v = m.lookup(["quokka"]).vectors
    files = list((tmp_path / "embeddings" / "hf-word").rglob("*.npz"))
    assert len(files) == 1
    files[0].write_bytes(b"\x00garbage")
    fresh = _enc(tiny["bert"], corpora["a"], tmp_path)
    with pytest.warns(IsoeatWarning, match="corrupt"):
        v2 = fresh.lookup(["quokka"]).vectors
    np.testing.assert_allclose(v, v2, rtol=1e-6)
    assert fresh.cache.writes == 1


def test_no_cache_switch(tiny, corpora, tmp_path):
    m = _enc(tiny["bert"], corpora["a"], tmp_path)
    m.cache.enabled = False
    m.lookup(["quokka"])
    assert not (tmp_path / "embeddings").exists()


# --------------------------------------------------------------------------- fingerprint cache
def _stamps(tmp_path, mtime=1_600_000_000):
    from isoeat.backends.cache import file_stamp

    p = tmp_path / "m.npy"
    if not p.exists():
        p.write_bytes(b"x")
    os.utime(p, (mtime, mtime))
    return [file_stamp(p)]


def test_fingerprint_cache_roundtrip_and_keys(tmp_path):
    from isoeat.backends.cache import FingerprintCache

    c = FingerprintCache(tmp_path / "c", enabled=True)
    s = _stamps(tmp_path)
    assert c.get(s, {"name": "a"}) is None and c.put(s, {"name": "a"}, "f1")
    assert c.get(s, {"name": "a"}) == "f1" and c.get(s, {"name": "b"}) is None
    assert c.get(_stamps(tmp_path, mtime=1_600_000_001), {"name": "a"}) is None  # touched: another key
    assert c.path.read_text().startswith("{")


def test_fingerprint_cache_skips_racy_files_and_obeys_switches(tmp_path, monkeypatch):
    from isoeat.backends.cache import FingerprintCache, file_stamp

    p = tmp_path / "fresh.npy"
    p.write_bytes(b"x")  # modified just now: a write within the same clock tick could keep its stamp
    c = FingerprintCache(tmp_path / "c", enabled=True)
    assert file_stamp(p)["racy"] and not c.put([file_stamp(p)], {}, "f") and not c.path.exists()
    monkeypatch.setenv("ISOEAT_NO_CACHE", "1")
    off = FingerprintCache(tmp_path / "c")
    assert not off.enabled and not off.put(_stamps(tmp_path), {}, "f") and off.get(_stamps(tmp_path), {}) is None
    with pytest.raises(ConfigError, match="enabled must be true or false"):
        FingerprintCache(tmp_path, enabled="yes")


def test_fingerprint_cache_is_bounded(tmp_path, monkeypatch):
    from isoeat.backends.cache import FingerprintCache

    monkeypatch.setattr(FingerprintCache, "MAX_ENTRIES", 3)
    c = FingerprintCache(tmp_path / "c", enabled=True)
    s = _stamps(tmp_path)
    for i in range(5):
        assert c.put(s, {"i": i}, f"f{i}")
    assert c.get(s, {"i": 0}) is None and c.get(s, {"i": 4}) == "f4"
    assert len(json.loads(c.path.read_text())["entries"]) == 3
