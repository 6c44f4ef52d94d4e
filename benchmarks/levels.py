"""Benchmark of the ML-EAT levels' cost: ``isoeat run --levels`` against ``isoeat run``.

Target (the script exits with status 1 when it is missed):

* ``isoeat run --levels`` (the default job, W1-W10 on the bundled GloVe 6B 50d, raw vs ZCA, plus Levels 2 and 3
  of every test in both spaces and the levels table) takes <= 1.2x the CPU time of ``isoeat run``, median of
  ``--repeats`` interleaved pairs, after one untimed run of each (the protocol of ``benchmarks/speed.py``: its
  caches warm, here the exact Level-2 counts too, which are kept by content in the embedding cache as the
  certified brackets are). CPU time (user + system of the command) is the measure: the levels add computation,
  not waiting, and on a quiet 2-core machine wall time is about CPU time; the wall times are printed beside.

* ``isoeat run --levels --audit --out DIR`` (the levels and the word-list audit of every test, written to the
  folder) takes <= 1.2x the CPU time of ``isoeat run --out DIR``, the same protocol (the levels and the audit together
  add at most 20% to the run's time; the audit's left-out d and p are kept by content in the embedding cache,
  as the Level-2 counts are, and each batch's records are read back as one bundle, ``stats/_bundle.py``).

Printed, no target: the cold cost, one pair with an empty embedding cache (the first ``--levels`` run on a
machine counts the 8 exact two-sided Level-2 p-values of 50 attribute words per space, about 1.5 s each).

Usage:  python benchmarks/levels.py [--repeats 5] [--quick] [--json PATH]

``--quick``: 2 pairs, a smoke run (its misses are shown but do not set the exit status).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

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
    if "both" in f:
        both = f["both"]["cpu"] / f["run_out"]["cpu"]
        out.append(_bench.row("isoeat run --levels --audit --out / isoeat run --out (W1-W10, warm): median CPU ratio",
                              f"{both:.3f}x (levels + audit {f['both']['cpu']:.2f} s CPU, {f['both']['wall']:.2f} s "
                              f"wall; run {f['run_out']['cpu']:.2f} s CPU, {f['run_out']['wall']:.2f} s wall; median "
                              f"of {f['n']})", round(both, 4), "x", f"<= {MAX_RATIO:g}x", both <= MAX_RATIO))
    if cold:
        out.append(_bench.row("cold (empty embedding cache): isoeat run --levels / isoeat run, CPU",
                              f"{cold['levels'] / cold['run']:.2f}x (levels {cold['levels']:.2f} s, run "
                              f"{cold['run']:.2f} s CPU)", round(cold["levels"] / cold["run"], 3), "x",
                              _bench.NO_TARGET, True))
    return out


def check(figures: dict) -> list[str]:
    """The targets missed by ``figures`` (empty when all are met)."""
    return _bench.missed(rows(figures))


timed = _bench.timed_isoeat


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="interleaved timed pairs (default 5)")
    ap.add_argument("--quick", action="store_true", help="2 pairs; the target shown, not enforced")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    n = 2 if args.quick else max(1, args.repeats)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    bench = _bench.Run("levels", quick=args.quick)
    with tempfile.TemporaryDirectory(prefix="isoeat-bench-levels-") as tmp:
        cold_env = {**env, "ISOEAT_CACHE_DIR": tmp}
        cold = {"run": timed("run", env=cold_env)[1], "levels": timed("run", "--levels", env=cold_env)[1]}
        print(f"cold (empty cache {tmp}): run {cold['run']:.2f} s CPU, run --levels {cold['levels']:.2f} s CPU",
              flush=True)
    folders = tempfile.TemporaryDirectory(prefix="isoeat-bench-levels-out-")
    made = iter(range(10**6))

    def fresh() -> str:
        return os.path.join(folders.name, f"run{next(made)}")

    timed("run", env=env)  # untimed: bytecode and the caches
    timed("run", "--levels", env=env)
    timed("run", "--levels", "--audit", "--out", fresh(), env=env)
    base, lev, base_out, both = [], [], [], []
    for i in range(n):
        base.append(timed("run", env=env))
        lev.append(timed("run", "--levels", env=env))
        base_out.append(timed("run", "--out", fresh(), env=env))
        both.append(timed("run", "--levels", "--audit", "--out", fresh(), env=env))
        print(f"  pair {i + 1}: run {base[-1][0]:.2f} s wall, {base[-1][1]:.2f} s CPU; --levels {lev[-1][0]:.2f} s "
              f"wall, {lev[-1][1]:.2f} s CPU; run --out {base_out[-1][1]:.2f} s CPU; --levels --audit --out "
              f"{both[-1][1]:.2f} s CPU", flush=True)
    folders.cleanup()

    def med(xs: list[tuple[float, float]]) -> dict[str, float]:
        return {"wall": statistics.median(w for w, _ in xs), "cpu": statistics.median(c for _, c in xs)}

    figures = {"run": med(base), "levels": med(lev), "run_out": med(base_out), "both": med(both), "n": n,
               "cold": cold}
    return bench.finish(rows(figures), args.json)


if __name__ == "__main__":
    sys.exit(main())
