"""Benchmark of the bias metrics: all eight x the ten tests W1..W10 x raw and ZCA on glove-6b-50d.

Times the whole job from the first line of this script (imports included):
importing isoeat, loading the bundled GloVe,
fitting ZCA on the 100,000 most frequent words, then ``isoeat.metrics`` raw
and whitened (permutation p-values as by default: exact when cheap, else
100,000 sampled partitions; ``--method certified`` for the bracket that
holds the exact p, for comparison). Prints the time of each stage. A
benchmark, not a timed test.

Target: the whole job in <= 5 s (``--target``) on a quiet 2-core machine; the
script exits with status 1 and says so when it is missed. The load average is
printed before and after. ``--quick`` is a smoke run (1,000 permutations,
total not checked); ``--json PATH`` writes the figures for tools/perf_table.py.

Usage:  python benchmarks/metrics.py [--target 5] [--permutations 100000] [--method auto|certified]
                                     [--quick] [--json PATH]
"""

from __future__ import annotations

import time

START = time.perf_counter()

import argparse  # noqa: E402
import sys  # noqa: E402

import _bench  # noqa: E402


def rows(f: dict) -> list[dict]:
    """The figures against the target (pure: ``f`` is what :func:`main` measured)."""
    out = [_bench.row(name, f"{sec:.2f} s", round(sec, 3), "s", _bench.NO_TARGET, True) for name, sec in f["stages"]]
    out.append(_bench.row("all eight metrics x W1-W10 x raw and ZCA, from the first line (imports included)",
                          f"{f['total']:.2f} s (CPU {f['cpu']:.2f} s)", round(f["total"], 3), "s",
                          f"<= {f['target']:g} s", f["total"] <= f["target"]))
    return out


def check(figures: dict) -> list[str]:
    """The targets missed by ``figures`` (empty when all are met)."""
    return _bench.missed(rows(figures))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", type=float, default=5.0, help="seconds allowed in all (default 5)")
    ap.add_argument("--permutations", type=int, default=None, help="default 100000; --quick 1000")
    ap.add_argument("--quick", action="store_true", help="smoke run: 1,000 permutations, total not checked")
    _bench.add_json_option(ap)
    ap.add_argument("--method", default="auto", help="permutation p method (default auto: exact when cheap, "
                                                    "else Monte Carlo; certified: slower, for comparison)")
    args = ap.parse_args()
    args.permutations = args.permutations or (1_000 if args.quick else 100_000)
    run = _bench.Run("metrics", quick=args.quick)

    stages = []
    t = time.perf_counter()
    import isoeat

    stages.append(("import isoeat", time.perf_counter() - t))

    t = time.perf_counter()
    model = isoeat.load_model("glove-6b-50d")
    stages.append(("load glove-6b-50d", time.perf_counter() - t))
    t = time.perf_counter()
    zca = isoeat.fit_calibrator(model, "zca", n_reference=100_000, eps=1e-3)
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
    return run.finish(rows({"stages": stages, "total": total, "cpu": cpu, "target": args.target}), args.json)


if __name__ == "__main__":
    sys.exit(main())
