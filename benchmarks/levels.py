"""Benchmark of the ML-EAT levels' and the word-list audit's cost: ``isoeat run --levels`` and
``isoeat run --audit`` against ``isoeat run`` (issue 43: each adds at most 20%).

Targets (the script exits with status 1 when one is missed):

* ``isoeat run --levels`` (the default job, W1-W10 on the bundled GloVe 6B 50d, raw vs ZCA, plus Levels 2 and 3
  of every test in both spaces and the levels table) takes <= 1.2x the CPU time of ``isoeat run``, median of
  ``--repeats`` interleaved pairs, after one untimed run of each (the protocol of ``benchmarks/speed.py``: its
  caches warm, here the exact Level-2 counts too, which are kept by content in the embedding cache as the
  certified brackets are). CPU time (user + system of the command) is the measure: the levels add computation,
  not waiting, and on a quiet 2-core machine wall time is about CPU time; the wall times are printed beside.
* ``isoeat run --audit`` (the word-list audit of every test in both spaces, written to the folder) <= 1.2x the
  CPU time of ``isoeat run``, by the same protocol (the left-out rows are kept by content in the embedding cache
  as the exact counts are). Every run of the three writes into a fresh ``--out`` folder (``--audit`` needs one).

Printed, no target: the cold cost, one run of each with an empty embedding cache (the first ``--levels`` run
on a machine counts the 8 exact two-sided Level-2 p-values of 50 attribute words per space, about 1.5 s each;
the first ``--audit`` run computes about 600 left-out tests per space).

Usage:  python benchmarks/levels.py [--repeats 5] [--quick] [--json PATH]

``--quick``: 2 pairs, a smoke run (its misses are shown but do not set the exit status).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import _bench

MAX_RATIO = 1.2


def rows(f: dict) -> list[dict]:
    """The figures against the target (pure: ``f`` holds the medians)."""
    ratio = f["levels"]["cpu"] / f["run"]["cpu"]
    cold = f.get("cold")
    out = [
        _bench.row("isoeat run --levels / isoeat run (W1-W10, GloVe 6B 50d, warm): median CPU ratio",
                   f"{ratio:.3f}x (levels {f['levels']['cpu']:.2f} s CPU, {f['levels']['wall']:.2f} s wall; run "
                   f"{f['run']['cpu']:.2f} s CPU, {f['run']['wall']:.2f} s wall; median of {f['n']})",
                   round(ratio, 4), "x", f"<= {MAX_RATIO:g}x", ratio <= MAX_RATIO),
    ]
    if "audit" in f:
        a = f["audit"]["cpu"] / f["run"]["cpu"]
        out.append(_bench.row("isoeat run --audit / isoeat run (W1-W10, GloVe 6B 50d, warm): median CPU ratio",
                              f"{a:.3f}x (audit {f['audit']['cpu']:.2f} s CPU, {f['audit']['wall']:.2f} s wall; "
                              f"median of {f['n']})", round(a, 4), "x", f"<= {MAX_RATIO:g}x", a <= MAX_RATIO))
    if cold:
        if "audit" in cold:
            out.append(_bench.row("cold (empty embedding cache): isoeat run --audit / isoeat run, CPU",
                                  f"{cold['audit'] / cold['run']:.2f}x (audit {cold['audit']:.2f} s CPU)",
                                  round(cold["audit"] / cold["run"], 3), "x", _bench.NO_TARGET, True))
        out.append(_bench.row("cold (empty embedding cache): isoeat run --levels / isoeat run, CPU",
                              f"{cold['levels'] / cold['run']:.2f}x (levels {cold['levels']:.2f} s, run "
                              f"{cold['run']:.2f} s CPU)", round(cold["levels"] / cold["run"], 3), "x",
                              _bench.NO_TARGET, True))
    return out


def check(figures: dict) -> list[str]:
    """The targets missed by ``figures`` (empty when all are met)."""
    return _bench.missed(rows(figures))


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(*args: str, env: dict) -> tuple[float, float]:
    """``(wall, CPU)`` seconds of ``isoeat ARGS``; exits on failure."""
    c0, t0 = _children_cpu(), time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "isoeat.cli", *args], capture_output=True, text=True, env=env)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if r.returncode != 0:
        sys.exit(f"isoeat {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="interleaved timed pairs (default 5)")
    ap.add_argument("--quick", action="store_true", help="2 pairs; the target shown, not enforced")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    n = 2 if args.quick else max(1, args.repeats)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    bench = _bench.Run("levels", quick=args.quick)
    kinds = {"run": (), "levels": ("--levels",), "audit": ("--audit",)}
    with tempfile.TemporaryDirectory(prefix="isoeat-bench-levels-") as tmp:
        count = iter(range(10**6))

        def one(kind: str, e: dict) -> tuple[float, float]:  # a fresh folder each time
            return timed("run", *kinds[kind], "--out", os.path.join(tmp, f"out{next(count)}"), env=e)

        cache = os.path.join(tmp, "cache")
        cold = {k: one(k, {**env, "ISOEAT_CACHE_DIR": cache})[1] for k in kinds}
        print(f"cold (empty cache): run {cold['run']:.2f} s CPU, --levels {cold['levels']:.2f} s, --audit "
              f"{cold['audit']:.2f} s", flush=True)
        for k in kinds:  # untimed: bytecode and the caches
            one(k, env)
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
        for i in range(n):
            for k in kinds:
                times[k].append(one(k, env))
            print(f"  round {i + 1}: " + "; ".join(f"{k} {times[k][-1][0]:.2f} s wall, {times[k][-1][1]:.2f} s CPU"
                                                   for k in kinds), flush=True)
    figures = {k: {"wall": statistics.median(w for w, _ in v), "cpu": statistics.median(c for _, c in v)}
               for k, v in times.items()}
    figures.update(n=n, cold=cold)
    return bench.finish(rows(figures), args.json)


if __name__ == "__main__":
    sys.exit(main())
