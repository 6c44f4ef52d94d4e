"""Benchmark of the permutation engine on the real glove-6b-50d tests.

Prints, in one run:
  (a) exact p-values for every test where method="auto" picks exact, raw and
      ZCA-whitened: time per space and peak traced memory;
  (b) all ten tests at 100,000 Monte Carlo permutations (isoeat), total time;
  (c) at equal permutation counts: a plain Python loop over subset sums (the
      classic implementation), scipy.stats.permutation_test (independent,
      vectorised statistic) and isoeat's Monte Carlo, with the ratios.

Usage:  python benchmarks/permutation.py [--permutations 100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import random
import time
import tracemalloc

import numpy as np


def s_vectors(model, calibrator):
    """s-values (X first) and |X| for the ten tests, raw or whitened."""
    import isoeat

    out = {}
    for t in isoeat.list_tests()[:10]:
        r = isoeat.weat(model, t, calibration=calibrator, method="monte-carlo", n_permutations=1)
        out[t.id] = (np.array(r.s_x + r.s_y), len(r.s_x))
    return out


def classic_loop(s, n_x, n_perm, seed):
    """The classic implementation: one Python-level shuffle and sum per permutation."""
    rnd = random.Random(seed)
    vals = s.tolist()
    idx = list(range(len(vals)))
    obs = sum(vals[:n_x])
    hits = 0
    for _ in range(n_perm):
        rnd.shuffle(idx)
        if sum(vals[i] for i in idx[:n_x]) >= obs - 1e-9 * sum(abs(v) for v in vals):
            hits += 1
    return (hits + 1) / (n_perm + 1)


def scipy_perm(s, n_x, n_perm, seed):
    from scipy.stats import permutation_test

    res = permutation_test(
        (s[:n_x], s[n_x:]), lambda a, b, axis: a.sum(axis=axis) - b.sum(axis=axis),
        permutation_type="independent", n_resamples=n_perm, alternative="greater", vectorized=True,
        random_state=seed,
    )
    return res.pvalue


def best_of(fn, repeats):
    times = []
    out = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--permutations", type=int, default=100_000,
                    help="Monte Carlo permutations per test (default 100000)")
    ap.add_argument("--repeats", type=int, default=3, help="timings take the best of this many runs (default 3)")
    args = ap.parse_args()

    import isoeat
    from isoeat.stats.permutation import partition_test

    model = isoeat.load_model("glove-6b-50d")
    zca = isoeat.fit_whitener(model, n_reference=100_000)
    spaces = {"raw": s_vectors(model, None), "zca": s_vectors(model, zca)}
    partition_test(np.arange(6.0), 3, method="monte-carlo", n_permutations=10, rng=0)  # warm imports

    print("(a) exact p-values where method='auto' picks exact")
    for name, sv in spaces.items():
        tracemalloc.start()
        t0 = time.perf_counter()
        done = []
        for tid, (s, n_x) in sv.items():
            r = partition_test(s, n_x, method="auto", n_permutations=args.permutations, rng=0)
            if r.p_method == "exact":
                done.append(f"{tid}={r.p_value:.3g}")
        dt = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"    {name:>3}: {len(done)} tests exact in {dt:.2f} s, peak traced memory {peak / 2**20:.0f} MiB")
        print(f"         {' '.join(done)}")

    N = args.permutations
    print(f"(b) all ten tests at {N:,} Monte Carlo permutations (isoeat)")
    sv = spaces["raw"]

    def isoeat_all():
        return [partition_test(s, n_x, method="monte-carlo", n_permutations=N, rng=i).p_value
                for i, (s, n_x) in enumerate(sv.values())]

    t_iso, p_iso = best_of(isoeat_all, args.repeats)
    print(f"    isoeat: {t_iso:.3f} s total (best of {args.repeats})")

    print(f"(c) equal permutation counts ({N:,} per test, ten tests, raw space)")
    t_scipy, p_scipy = best_of(lambda: [scipy_perm(s, n_x, N, i) for i, (s, n_x) in enumerate(sv.values())], 1)
    t_loop, p_loop = best_of(lambda: [classic_loop(s, n_x, N, i) for i, (s, n_x) in enumerate(sv.values())], 1)
    print(f"    plain Python loop:               {t_loop:7.3f} s   ({t_loop / t_iso:5.1f}x isoeat's time)")
    print(f"    scipy.stats.permutation_test:    {t_scipy:7.3f} s   ({t_scipy / t_iso:5.1f}x isoeat's time)")
    print(f"    isoeat Monte Carlo:              {t_iso:7.3f} s")
    print("    p-values (loop / scipy / isoeat) agree within Monte Carlo error:")
    for tid, a, b, c in zip(sv, p_loop, p_scipy, p_iso):
        print(f"      {tid:>3}: {a:.5f} {b:.5f} {c:.5f}")
    se = max(math.sqrt(max(p, 1 / N) * (1 - p) / N) for p in p_iso)
    print(f"    (largest Monte Carlo standard error here: {se:.5f})")


if __name__ == "__main__":
    main()
