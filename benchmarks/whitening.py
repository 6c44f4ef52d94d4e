"""Whitening-statistics benchmark: streaming covariance vs one BLAS call, and distributed encoding.

1. Synthetic 100,000 x 768 float64: streaming ``CovarianceAccumulator`` in batches of
   10,000 vs one ``Xc.T @ Xc`` BLAS call on the materialised, centred matrix,
   with peak memory of each, measured in fresh subprocesses with tracemalloc
   (numpy reports its allocations to it) and ru_maxrss.
2. Real MiniLM reference vectors (unit=word) of a few thousand gensim-wiki sentences:
   the same comparison on them (and the encoding time, which dominates).
3. Encoding reference sentences: a LocalCluster of 2 worker processes (1 thread
   each) vs this process alone (torch with all cores), same shards, same result.

Targets (on a quiet 2-core machine; the script exits with status 1 when one is
missed and names it; the load average is printed before and after):

* 1: streaming <= 1.5x the single BLAS call (best of 5, interleaved), and its
  peak traced memory O(d^2) + a batch: <= (4 d^2 + 3 batch x d) x 8 bytes
  (194 MiB at d = 768, batch 10,000; the data are 586 MiB);
* 2: the same ratio, streaming <= 1.5x ``X.T @ X`` (best of 9, interleaved),
  and the streamed covariance within 1e-10 (relative to its largest entry) of
  numpy.cov; the encoding rate is printed, no target;
* 3: every way of encoding gives the same whitening matrix as the first
  (relative difference <= 1e-10: same shards, merged in order); the speed-up
  is reported, no target (two cores gain little from two workers).

``--quick`` is a smoke run (20,000 synthetic rows, 200 sentences): timings
printed, not checked. ``--json PATH`` writes the figures for tools/perf_table.py.

Run: python benchmarks/whitening.py [--quick] [--sentences N] [--cluster-sentences N] [--json PATH]
OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, when set, slow a current numpy: the
script prints them and the BLAS kernel (threadpoolctl) so timings can be read.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

import _bench

N, D, BATCH = 100_000, 768, 10_000
REPEATS = 5
STREAM_RATIO = 1.5
COV_RTOL = 1e-10
W_RTOL = 1e-10


def peak_bound(d: int, batch: int) -> int:
    """Bytes allowed to the streaming accumulator's peak: a few d x d matrices and three batch-sized arrays."""
    return (4 * d * d + 3 * batch * d) * 8


def rows(f: dict) -> list[dict]:
    """The figures against the targets (pure: ``f`` is what :func:`main` measured)."""
    out = []
    if "synthetic" in f:
        y = f["synthetic"]
        ratio = y["stream_s"] / y["blas_s"]
        out.append(_bench.row(f"streaming covariance, {y['n']:,} x {y['d']} (batches of {y['batch']:,}) "
                              "vs one X.T @ X", f"{ratio:.2f}x ({y['stream_s']:.3f} s vs {y['blas_s']:.3f} s)",
                              round(ratio, 2), "x BLAS", f"<= {STREAM_RATIO:g}x", ratio <= STREAM_RATIO))
        bound = peak_bound(y["d"], y["batch"])
        out.append(_bench.row("streaming covariance, peak traced memory",
                              f"{y['stream_peak'] / 2**20:.0f} MiB (data {y['n'] * y['d'] * 8 / 2**20:.0f} MiB)",
                              round(y["stream_peak"] / 2**20, 1), "MiB",
                              f"<= {bound / 2**20:.0f} MiB (O(d^2) + a batch)", y["stream_peak"] <= bound))
    if "minilm" in f:
        m = f["minilm"]
        ratio = m["stream_s"] / m["blas_s"]
        out.append(_bench.row(f"MiniLM reference vectors ({m['n']:,} x {m['d']}): streaming vs one X.T @ X",
                              f"{ratio:.2f}x ({m['stream_s']:.4f} s vs {m['blas_s']:.4f} s)", round(ratio, 2),
                              "x BLAS", f"<= {STREAM_RATIO:g}x", ratio <= STREAM_RATIO))
        out.append(_bench.row(f"MiniLM reference vectors ({m['n']:,} x {m['d']}): streamed vs numpy.cov",
                              f"max relative difference {m['err']:.1e}", m["err"], "", f"<= {COV_RTOL:g}",
                              m["err"] <= COV_RTOL))
        out.append(_bench.row(f"MiniLM encoding, {m['sentences']:,} sentences", f"{m['rate']:.0f} vectors/s",
                              round(m["rate"], 1), "vectors/s", _bench.NO_TARGET, True))
    for c in f.get("cluster", []):
        out.append(_bench.row(f"encoding {c['sentences']:,} sentences: {c['run']}",
                              f"{c['seconds']:.1f} s ({c['speedup']:.2f}x the 1-process run)", round(c["speedup"], 2),
                              "x", _bench.NO_TARGET, True))
        if c.get("w_diff") is not None:
            out.append(_bench.row(f"same whitening matrix: {c['run']}", f"relative difference {c['w_diff']:.1e}",
                                  c["w_diff"], "", f"<= {W_RTOL:g}", c["w_diff"] <= W_RTOL))
    return out


def check(figures: dict) -> list[str]:
    """The targets missed by ``figures`` (empty when all are met)."""
    return _bench.missed(rows(figures))


def _child(mode: str, n: int, d: int, batch: int) -> dict:
    """Runs in a fresh process: build data, time one method, report peaks."""
    import resource
    import tracemalloc

    from isoeat.calibration.moments import CovarianceAccumulator

    def gen(i, rows):  # batch i of the synthetic data, deterministic, anisotropic
        rng = np.random.default_rng([7, i])
        return rng.standard_normal((rows, d)) * np.linspace(3.0, 0.1, d) + 1.0

    tracemalloc.start()
    if mode == "blas":
        X = np.concatenate([gen(i, batch) for i in range(n // batch)])  # materialised (n, d)
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        t0 = time.perf_counter()
        mean = X.mean(axis=0)
        Xc = X - mean
        _ = Xc.T @ Xc
        t_total = time.perf_counter() - t0
        t1 = time.perf_counter()
        _ = X.T @ X  # the single BLAS call alone, uncentred (timed, not used)
        t_blas = time.perf_counter() - t1
        peak = tracemalloc.get_traced_memory()[1]
        return {"mode": mode, "time_s": t_blas, "time_centred_s": t_total, "peak_mb": peak / 2**20,
                "peak_above_data_mb": (peak - base) / 2**20,
                "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if mode == "time":  # one materialised matrix; methods interleaved, best of `repeats` (noisy VM)
        X = np.concatenate([gen(i, batch) for i in range(n // batch)])
        best = {"blas": 1e9, "centred": 1e9, "stream": 1e9}
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            X.T @ X
            best["blas"] = min(best["blas"], time.perf_counter() - t0)
            t0 = time.perf_counter()
            Xc = X - X.mean(axis=0)
            Xc.T @ Xc
            del Xc
            best["centred"] = min(best["centred"], time.perf_counter() - t0)
            t0 = time.perf_counter()
            acc = CovarianceAccumulator()
            for i in range(0, n, batch):
                acc.update(X[i:i + batch])
            best["stream"] = min(best["stream"], time.perf_counter() - t0)
        return {"mode": mode, **best}
    # streaming with batches generated on the fly: never more than one batch in memory
    acc = CovarianceAccumulator()
    t_upd = 0.0
    for i in range(n // batch):
        b = gen(i, batch)
        t0 = time.perf_counter()
        acc.update(b)
        t_upd += time.perf_counter() - t0
        del b
    peak = tracemalloc.get_traced_memory()[1]
    return {"mode": mode, "time_s": t_upd, "peak_mb": peak / 2**20,
            "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _run_child(mode: str, n: int, d: int, batch: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", mode, str(n), str(d), str(batch)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _table(title: str, header: list[str], rows: list[list[str]]) -> None:
    w = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    print("  ".join(str(h).ljust(w[i]) for i, h in enumerate(header)))
    print("  ".join("-" * x for x in w))
    for r in rows:
        print("  ".join(str(c).ljust(w[i]) for i, c in enumerate(r)))


def synthetic(n: int, d: int, batch: int) -> dict:
    best = {m: _run_child(m, n, d, batch) for m in ("time", "blas", "stream")}
    tm = best["time"]
    t_blas = tm["blas"]
    data_mb = n * d * 8 / 2**20
    target_mb = peak_bound(d, batch) / 2**20
    rows = [
        ["X.T @ X (materialised, 1 BLAS call)", f"{t_blas:.3f}", "1.00",
         f"{best['blas']['peak_mb']:.0f} (data {data_mb:.0f})", f"{best['blas']['maxrss_mb']:.0f}"],
        ["centred: Xc = X - mean; Xc.T @ Xc", f"{tm['centred']:.3f}", f"{tm['centred'] / t_blas:.2f}", "", ""],
        [f"streaming accumulator, batch {batch}", f"{tm['stream']:.3f}", f"{tm['stream'] / t_blas:.2f}",
         f"{best['stream']['peak_mb']:.0f} (batches made on the fly)", f"{best['stream']['maxrss_mb']:.0f}"],
    ]
    _table(f"1. synthetic {n:,} x {d} float64 (time: best of {REPEATS}, interleaved; target: streaming <= 1.5x, "
           f"peak ~ O(d^2)+batch = {target_mb:.0f} MB)",
           ["method", "time s", "x BLAS", "peak traced MB", "max RSS MB"], rows)
    return {"n": n, "d": d, "batch": batch, "stream_s": tm["stream"], "blas_s": t_blas,
            "stream_peak": best["stream"]["peak_mb"] * 2**20}


def minilm(n_sentences: int, batch: int) -> dict:
    import tracemalloc

    import isoeat

    model = isoeat.load_model("minilm", use_cache=False, progress=False, device="cpu")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batches, desc = model.reference_batches(n_sentences, unit="word", corpus="gensim-wiki", seed=0)
        parts = list(batches)
    t_enc = time.perf_counter() - t0
    X = np.concatenate(parts)
    n, d = X.shape
    reps = 9  # interleaved, best of: this VM's timings are noisy
    tbs, tss = [], []
    for _ in range(reps):
        tbs.append(_timed(lambda: X.T @ X))
        tss.append(_timed(lambda: _stream(X, batch)))
    tb, ts = min(tbs), min(tss)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    _stream(X, batch)
    peak_s = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.reset_peak()
    _ = X.T @ X
    peak_b = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    acc = _stream(X, batch)
    err = float(np.abs(acc.covariance() - np.cov(X, rowvar=False)).max() / np.abs(np.cov(X, rowvar=False)).max())
    _table(f"2. MiniLM reference vectors: {n:,} word vectors x {d} from {n_sentences} gensim-wiki sentences "
           f"(encoding {t_enc:.1f} s, {n / t_enc:.0f} vectors/s)",
           ["method", "time s", "x BLAS", "extra peak MB (beyond X)"],
           [["X.T @ X", f"{tb:.4f}", "1.00", f"{peak_b / 2**20:.1f}"],
            [f"streaming, batch {batch}", f"{ts:.4f}", f"{ts / tb:.2f}", f"{peak_s / 2**20:.1f}"]])
    print(f"   streamed covariance vs numpy.cov: max relative difference {err:.1e}")
    return {"n": n, "d": d, "sentences": n_sentences, "err": err, "rate": n / t_enc, "stream_s": ts, "blas_s": tb}


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _stream(X, batch):
    from isoeat.calibration.moments import CovarianceAccumulator

    acc = CovarianceAccumulator()
    for i in range(0, X.shape[0], batch):
        acc.update(X[i:i + batch])
    return acc


def cluster(n_sentences: int, shards: int) -> list[dict]:
    from distributed import Client, LocalCluster

    from isoeat.distributed import plan_reference_shards, run_plan

    opts = {"use_cache": False, "progress": False, "device": "cpu"}
    plan = plan_reference_shards("minilm", n_reference=n_sentences, corpus="gensim-wiki", shards=shards,
                                 unit="word", model_options=opts)
    warm = plan_reference_shards("minilm", n_reference=8, corpus="gensim-wiki", shards=2, unit="word",
                                 model_options=opts)
    import torch

    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm.fit_local()  # load the model here first
        t0 = time.perf_counter()
        ref = plan.fit_local()
        t1 = time.perf_counter() - t0
        rows.append([f"1 process (torch {torch.get_num_threads()} threads)", f"{t1:.1f}", "1.00", "-", "-"])
        figs = [{"run": rows[-1][0], "sentences": n_sentences, "seconds": t1, "speedup": 1.0, "w_diff": None}]
        nthr = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            t0 = time.perf_counter()
            ref1 = plan.fit_local()
            t1b = time.perf_counter() - t0
        finally:
            torch.set_num_threads(nthr)
        d1 = float(np.abs(ref1.whitening_ - ref.whitening_).max() / np.abs(ref.whitening_).max())
        rows.append(["1 process (torch 1 thread)", f"{t1b:.1f}", f"{t1 / t1b:.2f}", "-", f"{d1:.1e}"])
        figs.append({"run": rows[-1][0], "sentences": n_sentences, "seconds": t1b, "speedup": t1 / t1b, "w_diff": d1})
        for k in (1, 2):
            t0 = time.perf_counter()
            with LocalCluster(n_workers=k, threads_per_worker=1, processes=True, dashboard_address=":0") as lc, \
                    Client(lc) as c:
                run_plan(c, warm)  # each worker loads the model once
                t_start = time.perf_counter() - t0
                t0 = time.perf_counter()
                w = run_plan(c, plan)
                tk = time.perf_counter() - t0
            diff = float(np.abs(w.whitening_ - ref.whitening_).max() / np.abs(ref.whitening_).max())
            rows.append([f"LocalCluster {k} worker(s) x 1 thread", f"{tk:.1f}", f"{t1 / tk:.2f}", f"{t_start:.1f}",
                         f"{diff:.1e}"])
            figs.append({"run": rows[-1][0], "sentences": n_sentences, "seconds": tk, "speedup": t1 / tk,
                         "w_diff": diff})
    _table(f"3. encoding {n_sentences} reference sentences (unit=word, {shards} shards, MiniLM, {os.cpu_count()} cores)",
           ["run", "time s", "speed-up vs 1st row", "start+load s", "W rel. diff"], rows)
    return figs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (CI smoke run)")
    ap.add_argument("--sentences", type=int, default=2000, help="MiniLM sentences for part 2 (default 2000)")
    ap.add_argument("--cluster-sentences", type=int, default=1000, help="sentences for part 3 (default 1000)")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: synthetic,minilm,cluster")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    run = _bench.Run("whitening", quick=args.quick)
    try:
        from threadpoolctl import threadpool_info

        blas = [f"{i['internal_api']} {i.get('architecture', '?')} {i['num_threads']} thr" for i in threadpool_info()
                if i["user_api"] == "blas"]
    except ImportError:
        blas = ["threadpoolctl not installed"]
    print(f"numpy {np.__version__}; BLAS: {', '.join(blas)}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')} "
          f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE')}; {os.cpu_count()} cores")
    skip = set(filter(None, args.skip.split(",")))
    n, sent, csent = (N, args.sentences, args.cluster_sentences) if not args.quick else (20_000, 200, 200)
    figures: dict = {}
    if "synthetic" not in skip:
        figures["synthetic"] = synthetic(n, D, BATCH)
    if "minilm" not in skip:
        figures["minilm"] = minilm(sent, BATCH)
    if "cluster" not in skip:
        figures["cluster"] = cluster(csent, shards=8)
    return run.finish(rows(figures), args.json)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        mode, n, d, batch = sys.argv[2], *map(int, sys.argv[3:6])
        print(json.dumps(_child(mode, n, d, batch)))
    else:
        sys.exit(main())
