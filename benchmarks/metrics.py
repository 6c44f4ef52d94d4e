"""Benchmark of the bias metrics: all eight x the ten tests W1..W10 x raw and ZCA on glove-6b-50d.

Times the whole job from the first line of this script (imports included):
importing isoeat, loading the bundled GloVe,
fitting ZCA on the 100,000 most frequent words, then ``isoeat.metrics`` raw
and whitened (permutation p-values as by default: exact when cheap, else
100,000 sampled partitions; ``--method certified`` for the bracket that
holds the exact p, for comparison). Prints the time of each stage and
exits with status 1 when the total exceeds the target (5 s on 2
cores). A benchmark, not a timed test.

Usage:  python benchmarks/metrics.py [--target 5] [--permutations 100000] [--method auto|certified]
"""

from __future__ import annotations

import time

START = time.perf_counter()

import argparse  # noqa: E402
import sys  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", type=float, default=5.0, help="seconds allowed in all (default 5)")
    ap.add_argument("--permutations", type=int, default=100_000)
    ap.add_argument("--method", default="auto", help="permutation p method (default auto: exact when cheap, "
                                                    "else Monte Carlo; certified: slower, for comparison)")
    args = ap.parse_args()

    stages = []
    t = time.perf_counter()
    import isoeat

    stages.append(("import isoeat", time.perf_counter() - t))

    t = time.perf_counter()
    model = isoeat.load_model("glove-6b-50d")
    stages.append(("load glove-6b-50d", time.perf_counter() - t))
    t = time.perf_counter()
    zca = isoeat.fit_whitener(model, n_reference=100_000, eps=1e-3)
    stages.append(("fit ZCA (100,000 reference words)", time.perf_counter() - t))

    results = []
    for label, cal in (("raw", None), ("zca", zca)):
        t = time.perf_counter()
        rs = isoeat.metrics(model, "all", None, calibration=cal, rng=0, n_permutations=args.permutations,
                            method=args.method)
        stages.append((f"metrics x tests, {label} ({len(rs)} results)", time.perf_counter() - t))
        results += rs
    total = time.perf_counter() - START
    cpu = time.process_time()

    width = max(len(s) for s, _ in stages)
    for name, sec in stages:
        print(f"{name:<{width}}  {sec:6.2f} s")
    names = sorted({r.metric for r in results})
    methods = sorted({r.p_method for r in results})
    print(f"{'total, from the first line':<{width}}  {total:6.2f} s  (target {args.target:g} s; CPU time "
          f"{cpu:.2f} s; {len(names)} metrics: {', '.join(names)}; p methods: {', '.join(methods)})")
    if total > args.target:
        print(f"over target: {total:.2f} s > {args.target:g} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
