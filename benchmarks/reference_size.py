"""Benchmark of the reference-SE and ``--reference-size auto``.

For each model, the ten standard WEATs are calibrated with ZCA (eps = 1e-3)
twice: on the fixed-size reference (``--max``, split into 10 shards for its
reference-SE) and with ``size="auto"`` (shards of max/20, stop when every
reference-SE < tolerance and no change class flipped over the last 2 shards,
capped at ``--max``). It prints the reference size used, the fit times, and
for every test the fixed-size d, the auto d, its reported reference-SE and
|Δd| / SE.

Targets (the script exits with status 1 when one is missed):

* every auto calibrated d lies within 3 of its reported reference-SE of the
  fixed-size d (|Δd| <= 3 SE). The count within 1 SE is printed as well: when
  the auto sample is a third of the fixed one, Δd has a standard deviation of
  about 0.8 SE, so about a quarter of the tests are expected outside 1 SE;
  "every test within 1 SE" is not a sound target and is only reported;
* the change classes of the auto fit equal those of the fixed-size fit.

Models: ``glove-6b-50d`` (static: the top ``--max`` words, default 100,000,
in a seeded random order) always; ``--model minilm`` adds all-MiniLM-L6-v2 on
gensim-wiki sentences, or ``--corpus`` (``enwiki-sample`` holds enough for the
paper's 100,000) (``--minilm-max``, default 20,000 sentences; the paper's
100,000 takes many minutes on 2 CPU cores), each fit with a model instance of
its own and an empty embedding cache (a temporary folder), so both fits encode
their reference sentences and the times compare; the test words are looked up
before the clock starts, and the encoding chunks are max/20 sentences so auto
can stop at any shard. Times are
wall-clock on a shared machine: the load average is printed before and after.

``--shards K,K,...`` instead times fixed-size fits of GloVe (``--max`` rows,
W6 and W7) with K shards against the refit-time estimate that bounds
``--reference-shards`` (:func:`isoeat.experiments.reference.refit_seconds`);
target: no measured time above ``SHARDS_SLACK`` x the estimate (the estimate
refuses before encoding, so it must not understate).

Usage:  python benchmarks/reference_size.py [--model minilm] [--max 100000] [--minilm-max 20000] [--corpus NAME]
                                            [--tolerance 0.02 [--tolerance 0.1]] [--shards 10,50,100,200]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
import warnings

def isoeat_warning():
    from isoeat import IsoeatWarning

    return IsoeatWarning


WITHIN = 3.0  # target: |d_auto - d_fixed| <= WITHIN * reported reference-SE
SHARDS_SLACK = 2.0  # target: a fit with K shards takes at most SHARDS_SLACK x refit_seconds(d, K)


def shard_times(model, tests, size: int, ks: list[int]) -> list[str]:
    """Measured fit time with K shards against the estimate of the K refits."""
    from isoeat.experiments.reference import fit_reference, refit_seconds

    missed = []
    print(f"{'K':>5} {'measured s':>11} {'estimated s':>12} {'ratio':>6}")
    for k in ks:
        t0 = time.perf_counter()
        fit_reference(model, tests, size=size, shards=k, max_seconds=float("inf"))
        took = time.perf_counter() - t0
        est = refit_seconds(model.dim, k)
        print(f"{k:5d} {took:11.2f} {est:12.2f} {took / est:6.2f}", flush=True)
        if took > SHARDS_SLACK * est:
            missed.append(f"--reference-shards {k}: {took:.1f} s measured > {SHARDS_SLACK:g} x {est:.1f} s estimated")
    return missed


def _fit(model, tests, size, args, max_size, tolerance=0.02):
    from isoeat.experiments.compare import classify_change
    from isoeat.experiments.reference import fit_reference

    t0 = time.perf_counter()
    fit = fit_reference(model, tests, size=size, shards=10, tolerance=tolerance, max_size=max_size,
                        seed=0, p_kwargs={"n_permutations": 100_000}, classify=classify_change,
                        log=(lambda m: print("  " + m, flush=True)) if args.verbose else None)
    return fit, time.perf_counter() - t0


def _classes(model, tests, calibrator):
    from isoeat.experiments.compare import classify_change
    from isoeat.stats.weat import weat

    out = {}
    for i, t in enumerate(tests):
        raw = weat(model, t, rng=i, n_permutations=100_000)
        cal = weat(model, t, calibration=calibrator, rng=i, n_permutations=100_000)
        out[t.id] = classify_change(raw.p_value, cal.p_value, 0.05)
    return out


def _warm(model, tests):
    """Look the test words up once (contextual encoders cache them), so the fit times are reference times."""
    for t in tests:
        for ws in t.sets().values():
            model.lookup(ws.words)
    return model


def bench(label, make_model, tests, max_size, args) -> list[str]:
    """Fixed vs auto at each tolerance (a fresh model instance, and cache, per fit); returns the targets missed."""
    print(f"\n== {label}: fixed {max_size:,} in 10 shards", flush=True)
    m_fixed = _warm(make_model("fixed"), tests)
    fixed, t_fixed = _fit(m_fixed, tests, max_size, args, max_size)
    c_fixed = _classes(m_fixed, tests, fixed.calibrator)
    print(f"fixed: {fixed.size:,} {fixed.unit} in {t_fixed:.1f} s")
    missed = []
    for tol in args.tolerance:
        print(f"-- auto: tolerance {tol:g}, cap {max_size:,}", flush=True)
        m_auto = _warm(make_model(f"auto-{tol:g}"), tests)
        auto, t_auto = _fit(m_auto, tests, "auto", args, max_size, tol)
        c_auto = _classes(m_auto, tests, auto.calibrator)
        print(f"auto: {auto.size:,} {auto.unit} ({auto.shards} shards, stopped: {auto.stopped}) in {t_auto:.1f} s; "
              f"{fixed.size / auto.size:.2f}x fewer than fixed {fixed.size:,} ({t_fixed:.1f} s), "
              f"time saved {t_fixed - t_auto:+.1f} s")
        missed += _compare(f"{label} tolerance {tol:g}", tests, fixed, auto, c_fixed, c_auto)
    return missed


def _compare(label, tests, fixed, auto, c_fixed, c_auto) -> list[str]:
    print(f"{'test':5} {'d_fixed':>8} {'SE_fixed':>8} {'d_auto':>8} {'SE_auto':>8} {'|dd|/SE':>8}  class fixed/auto")
    missed, within1, worst = [], 0, 0.0
    for t in tests:
        i = t.id
        ratio = abs(auto.d[i] - fixed.d[i]) / auto.reference_se[i]
        within1 += ratio <= 1.0
        worst = max(worst, ratio)
        print(f"{i:5} {fixed.d[i]:8.4f} {fixed.reference_se[i]:8.4f} {auto.d[i]:8.4f} {auto.reference_se[i]:8.4f} "
              f"{ratio:8.2f}  {c_fixed[i]}/{c_auto[i]}")
        if ratio > WITHIN:
            missed.append(f"{label} {i}: |d_auto - d_fixed| = {ratio:.2f} SE > {WITHIN:g} SE")
        if c_fixed[i] != c_auto[i]:
            missed.append(f"{label} {i}: change class {c_auto[i]} (auto) != {c_fixed[i]} (fixed)")
    print(f"within 1 SE: {within1}/{len(tests)}; within {WITHIN:g} SE: "
          f"{sum(abs(auto.d[t.id] - fixed.d[t.id]) <= WITHIN * auto.reference_se[t.id] for t in tests)}"
          f"/{len(tests)}; largest |dd|/SE {worst:.2f}; max SE auto {max(auto.reference_se.values()):.4f}, "
          f"fixed {max(fixed.reference_se.values()):.4f}", flush=True)
    return missed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("glove", "minilm"), action="append", default=None,
                    help="models to run (default glove; repeat for both)")
    ap.add_argument("--max", type=int, default=100_000, help="static reference size and cap (default 100000)")
    ap.add_argument("--minilm-max", type=int, default=20_000, help="MiniLM reference sentences (default 20000)")
    ap.add_argument("--corpus", default="gensim-wiki",
                    help="MiniLM's reference corpus: a named corpus or PATH (default gensim-wiki, 17,162 sentences; "
                         "enwiki-sample has 204,061, enough for the paper's 100,000)")
    ap.add_argument("--tolerance", type=float, action="append", default=None,
                    help="auto: largest reference-SE; repeat for several (default 0.02)")
    ap.add_argument("--verbose", action="store_true", help="print every auto step")
    ap.add_argument("--shards", default=None, metavar="K,K,...",
                    help="time fixed-size GloVe fits with these shard counts against their estimate instead")
    args = ap.parse_args(argv)
    args.tolerance = args.tolerance or [0.02]
    warnings.simplefilter("ignore", isoeat_warning())  # words encoded in a template: said once by isoeat run
    import isoeat
    from isoeat.wordsets import resolve_tests

    print(f"isoeat {isoeat.__version__}; {platform.platform()}; {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.2f}")
    if args.shards:
        missed = shard_times(isoeat.load_model("glove-6b-50d"), resolve_tests("W6,W7"), args.max,
                             [int(k) for k in args.shards.split(",")])
        print(f"\nload average {os.getloadavg()[0]:.2f}")
        print("TARGETS MISSED:\n  " + "\n  ".join(missed) if missed else "all targets met")
        return 1 if missed else 0
    tests = resolve_tests(None)
    missed: list[str] = []
    glove = None
    with tempfile.TemporaryDirectory(prefix="isoeat-refbench-") as tmp:
        for name in args.model or ["glove"]:
            if name == "glove":
                glove = glove or isoeat.load_model("glove-6b-50d")
                missed += bench("glove-6b-50d", lambda _: glove, tests, args.max, args)
            else:
                n = args.minilm_max
                missed += bench(f"minilm ({args.corpus} sentences)",
                                lambda which: isoeat.load_model("minilm", cache_dir=os.path.join(tmp, which),
                                                                corpus=args.corpus, chunk_size=max(1, n // 20)),
                                tests, n, args)
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    if missed:
        print("TARGETS MISSED:\n  " + "\n  ".join(missed))
        return 1
    print("all targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
