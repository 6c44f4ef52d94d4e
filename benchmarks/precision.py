"""What a reduced-precision forward pass does to the numbers: d, p and change classes of W1-W10 under --dtype.

Runs the paper's pipeline (compare_calibration: ZCA, eps 1e-3, word-unit reference vectors, W1-W10, 20
contexts per word, seed 0, 10,000 permutations) on the real all-MiniLM-L6-v2 once per dtype, float32 first (the
published protocol), with the embedding cache off so that every vector is computed at its precision, and prints
per test and dtype d raw, d ZCA, p raw, p ZCA and the change class, the largest |d - d_float32| over the tests
(raw and ZCA) and the tests whose change class or raw/ZCA significance differs from float32. It also prints the
wall time of each dtype's run (CPU: a loaded machine inflates it; the load average is printed).

Target (the tolerance docs/encoders.md states, and tests/test_refpass.py checks on a subset): for each reduced
precision, every |d - d_float32| <= 0.05 (raw and ZCA) and no change class differs from float32. The script exits
1 naming each miss.

Defaults fit a CPU session (1,000 reference sentences of --corpus; a few minutes per dtype on 2 cores); the
paper's 100,000 reference sentences are --reference 100000 (on a GPU). On CPU the dtypes are float32 and
bfloat16 (tf32 and float16 need CUDA). ``--quick`` is a smoke run (W7 only, 100 reference sentences, 5 contexts).
``--json PATH`` writes the figures for tools/perf_table.py.

Usage:  python benchmarks/precision.py [--dtypes float32,bfloat16] [--tests W1,...,W10] [--reference 1000]
                                       [--contexts 20] [--corpus enwiki-sample] [--device cpu] [--quick]
                                       [--json PATH]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import _bench

D_TOLERANCE = 0.05


def rows(f: dict) -> list[dict]:
    """The figures against the targets (pure: ``f`` is what :func:`main` measured)."""
    base = f["results"]["float32"]
    out = []
    for dtype, res in f["results"].items():
        if dtype == "float32":
            continue
        worst, where = 0.0, "-"
        flips = []
        for test, r in res.items():
            b = base[test]
            for key in ("d_raw", "d_calibrated"):
                dd = abs(r[key] - b[key])
                if dd > worst:
                    worst, where = dd, f"{test} {'raw' if key == 'd_raw' else 'ZCA'}"
            if r["change"] != b["change"]:
                flips.append(f"{test} ({b['change']} -> {r['change']})")
        out.append(_bench.row(f"{dtype} vs float32, largest |d - d_float32| over {len(res)} tests, raw and ZCA",
                              f"{worst:.4f} ({where})", round(worst, 5), "d", f"<= {D_TOLERANCE:g}",
                              worst <= D_TOLERANCE))
        out.append(_bench.row(f"{dtype} vs float32, change classes that differ", ", ".join(flips) or "none",
                              len(flips), "tests", "none", not flips))
        out.append(_bench.row(f"{dtype} run time / float32 run time",
                              f"{f['seconds'][dtype] / f['seconds']['float32']:.2f} ({f['seconds'][dtype]:.0f} s vs "
                              f"{f['seconds']['float32']:.0f} s)", round(f["seconds"][dtype] / f["seconds"]["float32"], 3),
                              "x", _bench.NO_TARGET, True))
    return out


def check(figures: dict) -> list[str]:
    """The targets missed by ``figures`` (empty when all are met)."""
    return _bench.missed(rows(figures))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtypes", default="float32,bfloat16", help="comma-separated, float32 first (default "
                                                                 "float32,bfloat16)")
    ap.add_argument("--tests", default=None, help="tests (default W1..W10; --quick W7)")
    ap.add_argument("--model", default="minilm", help="hf: spec (default minilm)")
    ap.add_argument("--reference", type=int, default=None, help="reference sentences (default 1000; --quick 100)")
    ap.add_argument("--contexts", type=int, default=None, help="contexts per word (default 20; --quick 5)")
    ap.add_argument("--corpus", default="enwiki-sample", help="corpus of contexts and reference (default "
                                                              "enwiki-sample)")
    ap.add_argument("--permutations", type=int, default=10_000, help="Monte Carlo permutations (default 10000)")
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    ap.add_argument("--quick", action="store_true", help="smoke run: W7, small sizes, targets not checked")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    if not dtypes or dtypes[0] != "float32":
        ap.error("--dtypes: float32 first (the reference the others are compared with)")
    tests = (args.tests or ("W7" if args.quick else ",".join(f"W{i}" for i in range(1, 11)))).split(",")
    args.reference = args.reference or (100 if args.quick else 1000)
    args.contexts = args.contexts or (5 if args.quick else 20)
    run = _bench.Run("precision", quick=args.quick)

    import isoeat
    from isoeat.corpora import load_corpus
    from isoeat.experiments.compare import compare_calibration

    corpus = load_corpus(args.corpus)
    print(f"model {args.model}; corpus {corpus.name} ({len(corpus):,} sentences); {args.reference:,} reference "
          f"sentences (unit=word), {args.contexts} contexts per word, {args.permutations:,} permutations, seed 0; "
          f"tests {','.join(tests)}")
    results, seconds = {}, {}
    for dtype in dtypes:
        model = isoeat.load_model(args.model, corpus=corpus, dtype=dtype, device=args.device, use_cache=False,
                                  progress=False, contexts_per_word=args.contexts)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            comp = compare_calibration(model, tests, n_reference=args.reference, n_permutations=args.permutations,
                                       rng=0)
        seconds[dtype] = time.perf_counter() - t
        results[dtype] = {r.test: {k: r.to_dict()[k] for k in ("d_raw", "d_calibrated", "p_raw", "p_calibrated",
                                                                "change")} for r in comp.rows}
        print(f"\n{dtype}: {seconds[dtype]:.0f} s (load average {_bench.load()[0]:.1f})")
        print(f"{'test':5s} {'d raw':>8s} {'d ZCA':>8s} {'p raw':>8s} {'p ZCA':>8s}  change       "
              f"{'Δd raw':>8s} {'Δd ZCA':>8s}")
        for test, r in results[dtype].items():
            b = results["float32"][test]
            print(f"{test:5s} {r['d_raw']:8.4f} {r['d_calibrated']:8.4f} {r['p_raw']:8.4f} {r['p_calibrated']:8.4f}  "
                  f"{r['change']:12s} {r['d_raw'] - b['d_raw']:+8.4f} {r['d_calibrated'] - b['d_calibrated']:+8.4f}",
                  flush=True)
    return run.finish(rows({"results": results, "seconds": seconds}), args.json)


if __name__ == "__main__":
    sys.exit(main())
