"""Track record of the stability marks (``Firm``): how often a call of each level flips under a fresh reference.

isoeat marks each calibrated significance call (and so each change class) by the estimated chance that a fresh
reference draw flips it, q = the share of R = 100 redraws of the reference sample (the group
bootstrap of its shards; each redraw's p moved from the cell's p along the permutation null's slope, its
deviation scaled by sqrt(2): :mod:`isoeat.experiments.stability`) whose call differs: ``firm`` (q <= 5%),
``borderline`` (5% < q <= 25%), ``unstable`` (q > 25%) (:data:`isoeat.labels.FIRM_LEVELS`). This script checks
every level against what it claims (:data:`isoeat.labels.FIRM_MEANING`), on glove-6b-50d and W1-W10, ZCA
(eps = 1e-3):

* the population is the top ``--pool`` rows (100,000: the protocol's reference pool); a **fresh reference
  draw** of size n is n rows drawn from it with replacement (as ``benchmarks/reference_size.py --precision``);
* for each n in ``--sizes`` (2,000 and 5,000 by default: smaller references give calls that do flip), F
  fresh draws are fitted and every test's calibrated p is recomputed by the cell's own method (exact,
  certified or Monte Carlo, from the test's WEAT stream): the truth;
* the first M of those draws play the user's sample: on each, the marks are computed as ``isoeat run`` does
  (K = 100 shards in a seeded order, R = 100 redraws), and compared with how often the other F - 1 fresh
  draws give the call another value (its flip rate). The same redraws are also read without the sqrt(2)
  scale of :data:`isoeat.labels.FRESH_DRAW_SCALE` (the measurement behind it; reported, no target).

Figures, per size and level: the (sample, test) pairs so marked, the tests they fall on, their mean flip rate
and its 95% Monte Carlo interval (mean +- 1.96 SE; the SE clustered by test, as the M samples of one test
share its words, and never below the SE of independent pairs; it holds the error of the F - 1 fresh draws
and of the M samples). Then the time the marks add to the default ``isoeat run`` (``--stability off`` vs the
default, median of 3 runs each).

Targets (exit 1 when missed): no level's interval lies wholly outside its stated band (FIRM_MEANING), at any
size; the mean flip rate of calls marked ``firm`` (all sizes) at most ``MAX_FLIP_YES``; at most
``MAX_UNSTABLE_YES`` of the clearly unstable calls (flip rate > 25%) marked ``firm``; the default run at most
``MAX_SLOWDOWN`` times the run without marks (a timing target, for a quiet 2-core machine; not checked under
``--quick``).

Sizes: the defaults (F = 200 fresh draws, M = 60 samples, two sizes: 600 (sample, test) pairs a size) take
about 3 CPU-minutes: 6 minutes of wall time at load average 4-8 on 2 cores, 27 at 8-13 (2026-12-07). The
Monte Carlo error is in every level's interval (printed); with 30-130 pairs in a level not marked firm it is
+-0.03 to +-0.17.

Usage:  python benchmarks/stability.py [--sizes 5000,2000] [--fresh 200] [--samples 60] [--quick]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import _bench

MAX_FLIP_YES = 0.05
MAX_UNSTABLE_YES = 0.10
MAX_SLOWDOWN = 1.5
UNSTABLE = 0.05  # a call whose flip rate under fresh draws exceeds this is not firm (reported)
CLEARLY = 0.25  # a call that flips in more than a quarter of fresh draws is clearly unstable (the target)


def fresh_calls(glove, tests, vectors, rows, seed=0):
    """d, p, calls of every test with the calibrator fitted on ``rows`` (p by the cell's method and stream)."""
    import numpy as np

    from isoeat._random import derive_seed
    from isoeat.calibration import make_calibrator
    from isoeat.stats.weat import weat_from_vectors

    cal = make_calibrator("zca", eps=1e-3).fit(np.asarray(glove.vectors[rows], dtype=np.float64))
    out = {}
    for t in tests:
        v = {r: cal.transform(x) for r, x in vectors[t.id].items()}
        res = weat_from_vectors(v["X"], v["Y"], v["A"], v["B"], rng=derive_seed(seed, "weat", t.id))
        out[t.id] = res
    return out


def level_stats(pairs: list[dict], level: str) -> dict:
    """The pairs marked ``level``: how many, the tests they fall on, the mean flip rate and its 95% interval
    (mean +- 1.96 SE, the SE clustered by test and never below the SE of independent pairs)."""
    import numpy as np

    sel = [p for p in pairs if p["level"] == level]
    if not sel:
        return {"pairs": 0, "tests": [], "mean": None, "lo": None, "hi": None}
    f = np.array([p["flip"] for p in sel])
    m = float(f.mean())
    groups = sorted({p["test"] for p in sel})
    n = len(f)
    pair_se = float(f.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.5
    sums = [sum(p["flip"] - m for p in sel if p["test"] == g) for g in groups]
    g = len(groups)
    cluster_se = float(np.sqrt(g / (g - 1) * sum(x * x for x in sums)) / n) if g > 1 else 0.0
    se = max(pair_se, cluster_se)
    return {"pairs": n, "tests": groups, "mean": m, "lo": max(0.0, m - 1.96 * se), "hi": min(1.0, m + 1.96 * se)}


def figures(sizes, pool, n_fresh, n_samples, replicates=100, shards=100, seed=0) -> dict:
    import numpy as np

    import isoeat
    from isoeat.experiments.reference import _test_vectors
    from isoeat.experiments.stability import RedrawPlan, fit_stability, row_stability
    from isoeat.labels import FIRM_LEVELS, call_holds, firm_level, is_significant, replicate_agreement
    from isoeat.wordsets import resolve_tests

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from reference_size import _Sample

    glove = isoeat.load_model("glove-6b-50d")
    tests = resolve_tests(None)
    vectors = _test_vectors(glove, tests, 0.8)
    gen = np.random.default_rng([seed, 32, 6])
    out = {"sizes": {}, "replicates": replicates, "shards": shards, "pool": pool, "fresh": n_fresh,
           "samples": n_samples}
    for n in sizes:
        t0 = time.perf_counter()
        draws = [np.sort(gen.integers(0, pool, n)) for _ in range(n_fresh)]
        res = [fresh_calls(glove, tests, vectors, rows) for rows in draws]
        calls = np.array([[is_significant(r[t.id].p_value, 0.05) for t in tests] for r in res])
        pairs = []
        for m in range(min(n_samples, n_fresh)):
            st = fit_stability(_Sample(glove, draws[m]), tests, RedrawPlan(
                size=n, shards=min(shards, n // 2), replicates=replicates, seed=int(gen.integers(2**31))))
            others = np.delete(calls, m, axis=0)
            for j, t in enumerate(tests):
                same, total = row_stability(res[m][t.id], st.replicate_d[t.id], 0.05)
                r = res[m][t.id]
                same1, _ = replicate_agreement(r.p_value, r.effect_size, st.replicate_d[t.id], r.n_x, r.n_y, 0.05,
                                               scale=1.0)  # the redraws unscaled: the rule without sqrt(2)
                flip = float((others[:, j] != calls[m, j]).mean())
                pairs.append({"test": t.id, "holds": call_holds(same, total), "same": same, "flip": flip,
                              "level": firm_level(same, total), "holds1": call_holds(same1, total)})
        unscaled = [p for p in pairs if p["holds1"]]
        yes = [p for p in pairs if p["holds"]]
        unstable = [p for p in pairs if p["flip"] > UNSTABLE]
        clearly = [p for p in pairs if p["flip"] > CLEARLY]
        out["sizes"][n] = {
            "pairs": len(pairs), "yes": len(yes),
            "flip_yes": float(np.mean([p["flip"] for p in yes])) if yes else 0.0,
            "unstable": len(unstable), "unstable_yes": sum(p["holds"] for p in unstable),
            "clearly": len(clearly), "clearly_yes": sum(p["holds"] for p in clearly),
            "clearly_yes1": sum(p["holds1"] for p in clearly), "pair_list": pairs,
            "yes1": len(unscaled), "flip_yes1": float(np.mean([p["flip"] for p in unscaled])) if unscaled else 0.0,
            "levels": {name: level_stats(pairs, name) for name, _ in FIRM_LEVELS},
            "seconds": time.perf_counter() - t0,
        }
        s = out["sizes"][n]
        print(f"n = {n:>6} ({n_fresh} fresh draws, {min(n_samples, n_fresh)} samples x {len(tests)} tests, "
              f"{s['seconds']:.0f} s):", flush=True)
        for name, v in s["levels"].items():
            if v["pairs"]:
                print(f"        {name:<10} {v['pairs']:>4} pairs ({', '.join(v['tests'])}): mean flip rate "
                      f"{v['mean']:.3f} [{v['lo']:.3f}, {v['hi']:.3f}]", flush=True)
            else:
                print(f"        {name:<10}    0 pairs", flush=True)
        print(f"        flip rate > {UNSTABLE:.0%}: {s['unstable']}, of them marked firm {s['unstable_yes']}; "
              f"> {CLEARLY:.0%}: {s['clearly']}, of them marked firm {s['clearly_yes']}", flush=True)
        print(f"        without the sqrt(2) scale: {s['yes1']}/{s['pairs']} marked firm, mean flip rate "
              f"{s['flip_yes1']:.4f}; flip rate > {CLEARLY:.0%} marked firm {s['clearly_yes1']}", flush=True)
    totals = out["sizes"].values()
    yes = sum(s["yes"] for s in totals)
    out["flip_yes"] = (sum(s["flip_yes"] * s["yes"] for s in totals) / yes) if yes else 0.0
    out["yes"] = yes
    for k in ("unstable", "unstable_yes", "clearly", "clearly_yes", "clearly_yes1", "yes1"):
        out[k] = sum(s[k] for s in totals)
    out["flip_yes1"] = (sum(s["flip_yes1"] * s["yes1"] for s in totals) / out["yes1"]) if out["yes1"] else 0.0
    out["levels"] = {n: s["levels"] for n, s in out["sizes"].items()}
    return out


def run_seconds(extra: list[str], repeats: int = 3) -> float:
    """Median wall time of ``isoeat run --format json`` (+ ``extra``) in a fresh process."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "isoeat.cli", "run", "--format", "json", *extra], check=True,
                       stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def level_rows(f: dict) -> list[dict]:
    """One row per size and level: its mean flip rate and 95% interval against the band it claims
    (:data:`isoeat.labels.FIRM_MEANING`); missed when the interval lies wholly outside the band (pure)."""
    from isoeat.labels import FIRM_MEANING

    out = []
    for n, levels in (f.get("levels") or {}).items():
        for name, v in levels.items():
            lo, hi = FIRM_MEANING[name]
            band = f"mean flip rate in [{lo:g}, {hi:g}] (interval overlaps)"
            if not v["pairs"]:
                out.append(_bench.row(f"n = {n}: calls marked {name}", "0 pairs", None, "share", _bench.NO_TARGET,
                                      True))
                continue
            ok = v["hi"] >= lo and v["lo"] <= hi
            out.append(_bench.row(f"n = {n}: calls marked {name} ({v['pairs']} pairs; {', '.join(v['tests'])})",
                                  f"{v['mean']:.3f} [{v['lo']:.3f}, {v['hi']:.3f}]", round(v["mean"], 4), "share",
                                  band, ok))
    return out


def rows(f: dict) -> list[dict]:
    """The figures against the targets (pure)."""
    out = level_rows(f)
    out.append(_bench.row(f"mean flip rate of calls marked firm ({f['yes']} pairs)", f"{f['flip_yes']:.4f}",
                          round(f["flip_yes"], 4), "share", f"<= {MAX_FLIP_YES}", f["flip_yes"] <= MAX_FLIP_YES))
    share = f["clearly_yes"] / f["clearly"] if f["clearly"] else 0.0
    out.append(_bench.row(f"clearly unstable calls (flip rate > {CLEARLY:.0%}) marked firm",
                          f"{f['clearly_yes']}/{f['clearly']}", round(share, 4), "share",
                          f"<= {MAX_UNSTABLE_YES}", share <= MAX_UNSTABLE_YES))
    loose = f["unstable_yes"] / f["unstable"] if f["unstable"] else 0.0
    out.append(_bench.row(f"calls flipping in more than {UNSTABLE:.0%} of fresh draws marked firm",
                          f"{f['unstable_yes']}/{f['unstable']}", round(loose, 4), "share", _bench.NO_TARGET, True))
    if "yes1" in f:
        out.append(_bench.row(f"without the sqrt(2) scale: mean flip rate of calls marked firm ({f['yes1']} pairs), "
                              f"clearly unstable marked firm", f"{f['flip_yes1']:.4f}, {f['clearly_yes1']}/{f['clearly']}",
                              round(f["flip_yes1"], 4), "share", _bench.NO_TARGET, True))
    if "slowdown" in f:
        out.append(_bench.row("default isoeat run / run with --stability off",
                              f"{f['with']:.2f} s / {f['without']:.2f} s = {f['slowdown']:.2f}x",
                              round(f["slowdown"], 3), "x", f"<= {MAX_SLOWDOWN}",
                              f.get("quick", False) or f["slowdown"] <= MAX_SLOWDOWN))
    return out


def check(f: dict) -> list[str]:
    return _bench.missed(rows(f))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="5000,2000")
    ap.add_argument("--pool", type=int, default=100_000)
    ap.add_argument("--fresh", type=int, default=200, help="fresh reference draws per size (the truth)")
    ap.add_argument("--samples", type=int, default=60, help="of them, samples marked as a user's run would be")
    ap.add_argument("--quick", action="store_true", help="smoke run: 2,000 words, 12 draws, 4 samples")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    run = _bench.Run("stability", quick=args.quick)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.quick:
        sizes, args.fresh, args.samples = [2000], 12, 4
    f = figures(sizes, args.pool, args.fresh, args.samples)
    f["without"] = run_seconds(["--stability", "off"], 1 if args.quick else 3)
    f["with"] = run_seconds([], 1 if args.quick else 3)
    f["slowdown"] = f["with"] / f["without"]
    f["quick"] = args.quick
    return run.finish(rows(f), args.json)


if __name__ == "__main__":
    sys.exit(main())
