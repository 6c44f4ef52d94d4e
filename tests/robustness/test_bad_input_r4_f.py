"""Bad-input catalogue, round 4 (issue 40), group F: contextual models (hf:, st:, minilm).

Each CLI case ends in a one-line isoeat error (exit 2) naming the cause, with nothing written in the
temporary folder and **nothing encoded**: the embedding cache the command was given stays empty (every
forward pass of a contextual model is cached, so an entry there means a refusal came after encoding).

* 25: a frame that applies only to static vectors (``vocabulary-top:N``, ``vocabulary-all``,
  ``corpus-types:TEXT``, ``corpus-tokens:TEXT``) on a contextual model: refused up front (``anisotropy``,
  the quick ``run``, a config grid).
* 26: a calibrator fitted on another layer: refused before the test words are encoded, naming both layers.
* 27: a model folder whose weights are a pickle (``pytorch_model.bin``): isoeat's own line (refused by
  default, ``--allow-pickle`` opts in), never torch's text or its advice.
* 31: ``--reference-shards K`` that the contextual reference cannot give (its shards are whole encoding
  chunks): refused before encoding, naming both options and the largest K allowed.
* 32: words dropped for lack of a context (``--missing drop``) are said to have no context in the corpus,
  never to be out of the vocabulary.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

pytest.importorskip("transformers")

from isoeat.cli import main  # noqa: E402

# the CLI's own warnings (words in the template, a tiny reference) are not what these runs are about
pytestmark = pytest.mark.filterwarnings("ignore::isoeat._errors.IsoeatWarning")

# W6 words in context: John, Amy, office, executive, salary, family, wedding (25 of its 32 words have none)
from _w6_corpus import W6_SENTENCES as _SENTENCES  # noqa: E402 - the 12-sentence W6 corpus

CORPUS = "\n".join(_SENTENCES) + "\n"
_GRID = "models: [minilm]\ntests: [W6]\ncalibrations: [none]\nanisotropy: {frame: %s}\n"
_MINI = ["--model", "minilm", "--corpus", "{d}/c.txt"]

# (name, files, argv, expected substrings, forbidden substrings)
CLI_CASES = [
    # 25: static-only frames on a contextual model, refused before any encoding
    ("frame vocabulary-all on a contextual run", {"c.txt": CORPUS},
     ["run", *_MINI, "--tests", "W6", "--reference-size", "10", "--frame", "vocabulary-all"],
     ["--frame vocabulary-all", "static vector models", "minilm", "--frame reference"], []),
    ("frame corpus-types on contextual anisotropy", {"c.txt": CORPUS, "t.txt": "the cat sat\n"},
     ["anisotropy", *_MINI, "--reference-size", "10", "--frame", "corpus-types:{d}/t.txt"],
     ["--frame corpus-types", "static vector models", "minilm"], []),
    ("frame vocabulary-top in a contextual grid", {"c.yaml": _GRID % "vocabulary-top:100"},
     ["run", "{d}/c.yaml", "--out", "{d}/o"],
     ["anisotropy.frame", "vocabulary-top", "minilm", "static vector models"], []),
    # 26: a calibrator of another layer, refused before encoding, both layers named
    ("calibrator of another layer", {"c.txt": CORPUS, "l3.npz": "LAYER3"},
     ["weat", *_MINI, "--test", "W6", "--calibrator", "{d}/l3.npz"],
     ["l3.npz", "layer 3 of minilm", "layer 6", "--layer 3", "--force"], ["True"]),
    ("CEAT calibrator of another layer", {"c.txt": CORPUS, "l3.npz": "LAYER3"},
     ["ceat", *_MINI, "--test", "W6", "--calibrator", "{d}/l3.npz"],
     ["l3.npz", "layer 3 of minilm", "layer 6", "--layer 3"], ["True"]),
    # 27: pickled checkpoints: isoeat's line, not torch's
    ("hf pickled checkpoint", {"c.txt": CORPUS, "m": "PICKLED"},
     ["weat", "--model", "hf:{d}/m", "--corpus", "{d}/c.txt", "--test", "W6", "--calibration", "none"],
     ["pytorch_model.bin", "pickle", "--allow-pickle", "safetensors"], ["weights_only", "\x1b", "Weights only"]),
    ("hf pickle of objects, opted in", {"c.txt": CORPUS, "m": "PICKLED_OBJECTS"},
     ["weat", "--model", "hf:{d}/m", "--corpus", "{d}/c.txt", "--test", "W6", "--calibration", "none",
      "--allow-pickle"],
     ["pickle holds Python objects other than tensors (argparse.Namespace)", "safetensors"],
     ["weights_only", "\x1b", "Weights only", "add_safe_globals"]),
    ("st pickled checkpoint", {"m": "PICKLED"},
     ["seat", "--model", "st:{d}/m", "--test", "W6", "--calibration", "none"],
     ["pytorch_model.bin", "pickle", "--allow-pickle"], ["weights_only", "\x1b", "Weights only"]),
    # 31: shards a contextual reference cannot give (12 sentences: one chunk of 1,024)
    ("reference shards over the chunks", {"c.txt": CORPUS},
     ["run", *_MINI, "--tests", "W6", "--reference-size", "10", "--reference-shards", "2"],
     ["--reference-shards 2", "--reference-size 10", "1,024", "at most 1 shard"], []),
    # 32: dropped for lack of context, not out of the vocabulary (found only by looking the words up: no cache)
    ("dropped for lack of context", {"c.txt": CORPUS},
     ["weat", *_MINI, "--test", "W6", "--missing", "drop", "--calibration", "none", "--no-cache"],
     ["7 of 8 words have no context in corpus", "c.txt", "--missing drop"], ["vocabulary"]),
    ("one word left with a context", {"c.txt": CORPUS},
     ["weat", *_MINI, "--test", "W6", "--missing", "drop", "--calibration", "none", "--no-cache", "--min-coverage",
      "0.1"],
     ["only 1 of its 8 words with a context in corpus", "c.txt", "(no context: Paul, Mike"], ["vocabulary"]),
]


def _snapshot(d):
    return {str(p): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir") for p in d.rglob("*")}


def _pickle_folder(folder, source=None, objects=False):
    """A tiny BERT (``source``'s copy, else a new one) whose weights are a torch pickle (pytorch_model.bin),
    no safetensors; ``objects``: the pickle also holds a Python object (what torch's safe loader refuses)."""
    import argparse
    import shutil

    import torch
    from safetensors.torch import load_file

    from test_transformer import build_tiny

    if source is None:
        build_tiny(folder, "bert-cased")
    else:
        shutil.copytree(source, folder)
    st = folder / "model.safetensors"
    extra = {"args": argparse.Namespace(lr=1e-3)} if objects else {}
    torch.save({**load_file(str(st)), **extra}, folder / "pytorch_model.bin")
    st.unlink()
    return folder


@pytest.fixture(scope="module")
def layer3(tmp_path_factory):
    """A ZCA calibrator fitted on layer 3 of minilm (the tiny corpus, every sentence)."""
    d = tmp_path_factory.mktemp("layer3")
    (d / "c.txt").write_text(CORPUS)
    assert main(["whiten", "--model", "minilm", "--layer", "3", "--corpus", str(d / "c.txt"), "--reference-size",
                 "12", "--no-cache", "--save", str(d / "l3.npz")]) == 0
    return d / "l3.npz"


def _materialise(d, files, request):
    import shutil

    for name, content in files.items():
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if content == "LAYER3":
            shutil.copy(request.getfixturevalue("layer3"), p)
        elif content in ("PICKLED", "PICKLED_OBJECTS"):
            _pickle_folder(p, objects=content == "PICKLED_OBJECTS")
        else:
            p.write_text(content)


@pytest.mark.parametrize("name, files, args, expected, forbidden", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_contextual_bad_input_is_refused_up_front(tmp_path, capsys, monkeypatch, request, name, files, args,
                                                  expected, forbidden):
    if name.startswith("st"):
        pytest.importorskip("sentence_transformers")
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _materialise(tmp_path, files, request)
    capsys.readouterr()  # the set-up's own output (progress bars of save_pretrained)
    argv = [a.replace("{d}", str(tmp_path)) for a in args]
    before = _snapshot(tmp_path)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, (name, err)
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1, err
    for e in expected:
        assert e in err, (e, err)
    for f in forbidden:
        assert f not in err, (f, err)
    assert "Traceback" not in err
    assert _snapshot(tmp_path) == before  # nothing written
    assert not [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else True  # nothing encoded


# --- 27: --allow-pickle opts in, and the vectors are those of the same weights as safetensors --------------
def test_allow_pickle_loads_the_pickled_checkpoint_with_the_same_vectors(tmp_path):
    import isoeat
    from isoeat.corpora import Corpus
    from test_transformer import CORPUS as SENTS
    from test_transformer import build_tiny

    safe = build_tiny(tmp_path / "safe", "bert-cased", seed=3)
    pickled = _pickle_folder(tmp_path / "pickled", source=safe)  # the same tokenizer and weights, as a pickle
    corpus = Corpus.from_sentences(SENTS, name="hand-made")
    words = ["quokka", "doctor", "garden", "violin"]
    with pytest.raises(isoeat.ConfigError, match="pickle"):
        isoeat.load_model(f"hf:{pickled}", corpus=corpus, use_cache=False).lookup(words)
    ref = isoeat.load_model(f"hf:{safe}", corpus=corpus, use_cache=False).lookup(words).vectors
    got = isoeat.load_model(f"hf:{pickled}", corpus=corpus, use_cache=False, allow_pickle=True).lookup(words).vectors
    np.testing.assert_array_equal(got, ref)  # the same weights, read from the pickle


# --- 31: the rule is the stream's own count, at its boundary -----------------------------------------------
class _Chunked:
    """A contextual reference double: ``total`` sentences in chunks of ``chunk_size``, two rows per sentence."""

    def __init__(self, total, chunk_size):
        self.total, self.chunk_size, self.dim = total, chunk_size, 3

    def reference_metadata(self, n, **_):
        return {"n_sentences": min(n, self.total)}

    def reference_batches(self, n, **_):
        m = min(n, self.total)
        rng = np.random.default_rng(0)
        return (rng.normal(size=(2 * min(self.chunk_size, m - s), 3)) for s in range(0, m, self.chunk_size)), "x"


@pytest.mark.parametrize("total, chunk", [(10, 1024), (2048, 1024), (2049, 1024), (3000, 1024), (2000, 100),
                                          (1000, 7), (300, 64)])
def test_contextual_shard_limit_is_what_the_stream_gives(total, chunk):
    """K is accepted exactly when the shard stream (run here on a double, independently of the check) yields K
    shards; a refusal names the largest L such that every K from 2 to L yields K shards (L + 1 is refused)."""
    from isoeat import ConfigError
    from isoeat.experiments.reference import MAX_SHARDS, _shard_stream, check_shards

    def yielded(k):
        return sum(1 for _ in _shard_stream(_Chunked(total, chunk), total, k, {}, 0)[0])

    exact = {k for k in range(2, MAX_SHARDS + 1) if yielded(k) == k}
    largest = 1
    while largest + 1 in exact:
        largest += 1
    for k in range(2, MAX_SHARDS + 1):
        if k in exact:
            assert check_shards(k, None, chunks=(total, chunk)) == k
        else:
            with pytest.raises(ConfigError, match=f"at most {largest} shard"):
                check_shards(k, None, chunks=(total, chunk))
    if largest >= 2:  # the boundary: L passes, L + 1 does not
        assert check_shards(largest, None, chunks=(total, chunk)) == largest
    if largest < MAX_SHARDS:
        with pytest.raises(ConfigError):
            check_shards(largest + 1, None, chunks=(total, chunk))


# --- 32: the printed line under a table that kept enough words ------------------------------------------
def test_dropped_for_lack_of_context_is_said_so_under_the_table(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    # two words of each set in context (John, Paul; Amy, Lisa; office, executive, salary; family, wedding)
    extra = "Paul and Lisa cooked a large dinner for all of their friends at the weekend.\n"
    (tmp_path / "c.txt").write_text(CORPUS + extra * 3)
    assert main(["weat", "--model", "minilm", "--corpus", str(tmp_path / "c.txt"), "--test", "W6", "--missing",
                 "drop", "--calibration", "none", "--min-coverage", "0.1"]) == 0
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if "(dropped)" in ln]
    assert line.startswith(f"W6: no context in corpus {tmp_path / 'c.txt'} (dropped): ") and "X:Mike" in line, line
    assert "vocabulary" not in line


# --- 26: the layers named from the calibrator's record (and from the description of a file saved before it) -
class _Layered:
    name, dim = "hf:m", 4

    def __init__(self, layer, fingerprint):
        self.layer, self.fingerprint = layer, fingerprint

    def layer_sweep(self, layers, *, name="layers"):  # pragma: no cover - a LayeredModel by its methods
        raise NotImplementedError


def _cal(meta):
    from isoeat.calibration import ZCAWhitener

    cal = ZCAWhitener().fit(np.random.default_rng(0).normal(size=(20, 4)))
    cal.metadata_ = {"model": "hf:m", "model_fingerprint": "f-l3", **meta}
    return cal


LAYER_CASES = [
    ("layer recorded", {"layer": 3}, 5, "fitted on layer 3 of hf:m, and the model here is layer 5 of hf:m"),
    ("layer in an older file's description", {"reference": "unit=word: ...; layer 3 of hf:m (asked for 9)"}, 0,
     "fitted on layer 3 of hf:m, and the model here is layer 0 of hf:m"),
    ("same layer, other weights", {"layer": 3}, 3, "was fitted on model 'hf:m' (fingerprint f-l3), not on 'hf:m'"),
    ("no layer recorded", {}, 3, "was fitted on model 'hf:m' (fingerprint f-l3), not on 'hf:m'"),
]


@pytest.mark.parametrize("name, meta, layer, expected", LAYER_CASES, ids=[c[0] for c in LAYER_CASES])
def test_calibrator_of_another_layer_names_both(name, meta, layer, expected):
    from isoeat import FingerprintMismatchError
    from isoeat.calibration import check_compatible

    with pytest.raises(FingerprintMismatchError) as info:
        check_compatible(_cal(meta), _Layered(layer, "f-other"))
    assert expected in str(info.value) and "force=True" in str(info.value)
    check_compatible(_cal(meta), _Layered(layer, "f-other"), force=True)  # the way out it names
    check_compatible(_cal(meta), _Layered(layer, "f-l3"))  # the model it was fitted on


# --- 25: a grid's contextual models by every name (the one rule of backends.is_contextual_spec), not loaded ---
GRID_FRAME_CASES = [
    ("grid frame on mpnet", "mpnet", "vocabulary-all", "the contextual model mpnet"),
    ("grid frame on hf:", "hf:some/model", "corpus-tokens:t.txt", "the contextual model hf:some/model"),
    ("grid frame on st:minilm", "st:minilm", "vocabulary-top:10", "the contextual model st:minilm"),
]


@pytest.mark.parametrize("name, spec, frame, expected", GRID_FRAME_CASES, ids=[c[0] for c in GRID_FRAME_CASES])
def test_static_frame_in_a_grid_is_refused_when_the_config_is_read(name, spec, frame, expected):
    from isoeat import ConfigError
    from isoeat.experiments.config import parse_config

    with pytest.raises(ConfigError, match="anisotropy.frame") as info:
        parse_config({"models": [spec], "tests": ["W6"], "anisotropy": {"frame": frame}})
    assert expected in str(info.value)
    for ok in ("reference", "paper"):  # the frames a contextual model has
        parse_config({"models": [spec], "tests": ["W6"], "anisotropy": {"frame": ok}})
    parse_config({"models": ["glove-6b-50d"], "tests": ["W6"], "anisotropy": {"frame": frame}})  # static: fine
    parse_config({"models": [{"spec": spec, "layer": 1}], "tests": ["W6"]})  # a layer: a contextual model's option
