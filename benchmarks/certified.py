"""Benchmark of certified p-values: W3 on GloVe 6B 50d and a user-sized test.

Targets (on a quiet 2-core machine; the script exits with status 1 when one is
missed and names it):

* W3 (C(64, 32) ~ 1.8e18 partitions), raw and ZCA-whitened, glove-6b-50d:
  ``method="auto"`` returns a certified bracket (p_method "certified") of
  relative width <= 1e-3, in <= 10 s and <= 1 GiB peak traced memory each;
* that bracket lies inside the 95% Clopper-Pearson interval of 10**7 Monte
  Carlo permutations of the same s-vector (``--permutations``; seed 0);
* user-sized tests, 100 + 100 vocabulary words as targets against W1's
  pleasant/unpleasant attributes: drawn at random (``--seeds``; no bias, p
  anywhere) and drawn with a bias towards pleasant X and unpleasant Y
  (``--biased-seeds``; p around 1e-8, where a bracket of relative width 1e-3
  would need more than the budget): certified, or refused with a note and
  Monte Carlo instead, within the memory budget (2 GiB), in a child process
  under an address-space limit of its start-up size + 3 GiB: never killed.

Times are wall-clock on a shared machine: the load average is printed before
and after. Peak memory is the peak of numpy's traced allocations
(tracemalloc) during the call; the process's maximum resident size
(getrusage) is printed beside it.

``--quick`` is a smoke run (10**5 permutations, one random user test): its
timings are printed, not checked. ``--json PATH`` writes the figures for
tools/perf_table.py.

Usage:  python benchmarks/certified.py [--permutations 10000000] [--seeds 1 2] [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
import tracemalloc

import numpy as np

import _bench

REL_WIDTH = 1e-3
MAX_SECONDS = 10.0
MAX_PEAK = 2**30

CHILD = textwrap.dedent("""
    import json, resource, sys, time, tracemalloc
    import numpy as np
    from isoeat.stats.permutation import partition_test

    def vm_bytes():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))

    s = np.load(sys.argv[1])
    limit = vm_bytes() + 3 * 2**30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    tracemalloc.start()
    t0 = time.perf_counter()
    r = partition_test(s, s.size // 2, n_permutations=100_000, rng=0)
    dt = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    print(json.dumps(dict(method=r.p_method, p=r.p_value, low=r.ci_low, high=r.ci_high, note=r.note, seconds=dt,
                          traced_peak=peak, maxrss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)))
""")


def s_vector(model, test, calibrator=None):
    import isoeat

    r = isoeat.weat(model, test, calibration=calibrator, method="monte-carlo", n_permutations=1, rng=0)
    return np.array(r.s_x + r.s_y), len(r.s_x)


def user_s_vector(model, seed: int, bias: float = 0.0) -> np.ndarray:
    """s-values of 100 + 100 vocabulary rows (ranks 1,000-50,000) against W1's attributes.

    ``bias = 0``: 200 random rows. Otherwise X and Y are drawn from a pool of 2,000 random rows with
    weights ``exp(+-bias z)``, z the standardised association of each row: a biased user test.
    """
    import isoeat
    from isoeat.stats.weat import weat_from_vectors

    t = isoeat.get_test("W1")
    A, B = model.lookup(t.A.words).vectors, model.lookup(t.B.words).vectors
    rng = np.random.default_rng(seed)
    rows = rng.choice(np.arange(1_000, 50_000), size=200 if bias == 0 else 2_000, replace=False)
    r = weat_from_vectors(model.vectors[rows[:100]], model.vectors[rows[100:]], A, B, method="monte-carlo",
                          n_permutations=1, rng=0)
    s = np.array(r.s_x + r.s_y)
    if bias == 0:
        return s
    z = (s - s.mean()) / s.std()
    x = rng.choice(s.size, 100, replace=False, p=np.exp(bias * z) / np.exp(bias * z).sum())
    rest = np.setdiff1d(np.arange(s.size), x)
    w = np.exp(-bias * z[rest])
    y = rng.choice(rest, 100, replace=False, p=w / w.sum())
    return np.concatenate([s[x], s[y]])


def rows(f: dict) -> list[dict]:
    """The figures against the targets (pure: ``f`` is what :func:`main` measured)."""
    out = []
    for name, w in f["w3"].items():
        mib = w["peak"] / 2**20
        out.append(_bench.row(f"W3 certified p (auto), {name}",
                              f"{w['method']}, width {w['width']:.1e}, {w['seconds']:.2f} s, {mib:.0f} MiB traced",
                              round(w["seconds"], 3), "s",
                              f"certified, width <= {REL_WIDTH:g}, <= {MAX_SECONDS:g} s, <= {MAX_PEAK / 2**30:g} GiB",
                              w["method"] == "certified" and w["width"] <= REL_WIDTH and w["seconds"] <= MAX_SECONDS
                              and w["peak"] <= MAX_PEAK))
        out.append(_bench.row(f"W3 {name}: bracket inside the 95% interval of {f['permutations']:,} permutations",
                              "inside" if w["inside"] else "OUTSIDE", None, "", "inside", w["inside"]))
    for u in f["user"]:
        if u["returncode"] != 0:
            measured, ok = f"killed or failed (exit {u['returncode']})", False
        else:
            explained = u["method"] == "certified" or (u["method"] == "monte-carlo" and "certified" in u["note"])
            measured = (f"{u['method']} in {u['seconds']:.1f} s, {u['traced_peak'] / 2**20:.0f} MiB traced, "
                        f"max RSS {u['maxrss'] / 2**20:.0f} MiB")
            ok = explained
        out.append(_bench.row(f"user test 100 + 100 words, {u['label']}", measured, u.get("seconds"), "s",
                              "certified or refused with a note, never killed", ok))
    return out


def check(figures: dict) -> list[str]:
    """The targets missed by ``figures`` (empty when all are met)."""
    return _bench.missed(rows(figures))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--permutations", type=int, default=None, help="Monte Carlo permutations (default 10**7)")
    ap.add_argument("--seeds", type=int, nargs="+", default=None, help="random user tests (default 1 2)")
    ap.add_argument("--biased-seeds", type=int, nargs="*", default=None, help="biased user tests (default 5)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 10**5 permutations, one user test")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    if args.permutations is None:
        args.permutations = 100_000 if args.quick else 10_000_000
    if args.seeds is None:
        args.seeds = [1] if args.quick else [1, 2]
    if args.biased_seeds is None:
        args.biased_seeds = [] if args.quick else [5]
    run = _bench.Run("certified", quick=args.quick)

    import isoeat
    from isoeat.stats.permutation import partition_test

    model = isoeat.load_model("glove-6b-50d")
    zca = isoeat.fit_calibrator(model, "zca", n_reference=100_000, eps=1e-3)
    partition_test(np.arange(70.0), 35, method="certified")  # warm imports
    figures: dict = {"permutations": args.permutations, "w3": {}, "user": []}

    print(f"(a) W3 certified (auto), targets: relative width <= {REL_WIDTH:g}, <= {MAX_SECONDS:g} s, "
          f"<= {MAX_PEAK / 2**30:g} GiB traced peak; inside the 95% interval of {args.permutations:,} permutations")
    for name, cal in (("raw", None), ("zca", zca)):
        s, n_x = s_vector(model, "W3", cal)
        tracemalloc.start()
        t0 = time.perf_counter()
        r = partition_test(s, n_x)
        dt = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        width = (r.ci_high - r.ci_low) / r.ci_low if r.ci_low > 0 else float("inf")
        t1 = time.perf_counter()
        mc = partition_test(s, n_x, method="monte-carlo", n_permutations=args.permutations, rng=0)
        dmc = time.perf_counter() - t1
        inside = mc.ci_low <= r.ci_low and r.ci_high <= mc.ci_high
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
        print(f"    {name}: {r.p_method} p in [{r.ci_low:.6e}, {r.ci_high:.6e}] (p = {r.p_value:.6e}), "
              f"relative width {width:.2e}; {dt:.2f} s, traced peak {peak / 2**20:.0f} MiB "
              f"(process max RSS so far {rss:.0f} MiB)")
        print(f"         {r.note}")
        print(f"         Monte Carlo {mc.n_permutations:,}: p = {mc.p_value:.6e}, 95% [{mc.ci_low:.6e}, "
              f"{mc.ci_high:.6e}] in {dmc:.1f} s: bracket {'inside' if inside else 'OUTSIDE'}")
        figures["w3"][name] = {"method": r.p_method, "width": width, "seconds": dt, "peak": peak,
                               "inside": bool(inside)}

    print("(b) user-sized tests, 100 + 100 words (W1 attributes), default budget 2 GiB, "
          "child process limited to its start-up address space + 3 GiB")
    cases = [(seed, 0.0) for seed in args.seeds] + [(seed, 0.5) for seed in args.biased_seeds]
    with tempfile.TemporaryDirectory() as tmp:
        for seed, bias in cases:
            path = os.path.join(tmp, f"s{seed}-{bias}.npy")
            np.save(path, user_s_vector(model, seed, bias))
            label = f"seed {seed}" + (f" biased ({bias:g})" if bias else " random")
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", CHILD, path], capture_output=True, text=True)
            wall = time.perf_counter() - t0
            if out.returncode != 0:
                print(f"    {label}: child exited with {out.returncode} after {wall:.1f} s")
                print(textwrap.indent(out.stderr[-1500:], "         "))
                figures["user"].append({"label": label, "returncode": out.returncode})
                continue
            res = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"    {label}: {res['method']} p = {res['p']:.6g} in [{res['low']:.6g}, {res['high']:.6g}]; "
                  f"{res['seconds']:.1f} s, traced peak {res['traced_peak'] / 2**20:.0f} MiB, "
                  f"child max RSS {res['maxrss'] / 2**20:.0f} MiB")
            print(f"         {res['note']}")
            figures["user"].append({"label": label, "returncode": 0, **res})

    return run.finish(rows(figures), args.json)


if __name__ == "__main__":
    sys.exit(main())
