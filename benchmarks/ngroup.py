"""Benchmark of the n-group tests: 3 target groups x 10 words on glove-6b-50d, raw and ZCA.

Two tests of the same three groups (docs/ngroup.md's word lists): one against 2 attribute sets of 10 words
(SAME, multiclass MAC and RNSB; Generalized WEAT undefined, k != m) and one against 3 (Generalized WEAT, SAME,
MAC; RNSB undefined, m != 2). Each test's four statistics are timed raw and calibrated, as ``isoeat ngroup`` runs
them (every permutation p as by default: 30!/(10!)^3 = 5.6e12 assignments, so 100,000 sampled ones), after the
model is loaded and ZCA fitted once (timed, no target).

Target: each test, raw and calibrated together, in <= 2 s (``--target``) on a quiet 2-core machine; the script
exits with status 1 and says so when one is missed. The load average is printed before and after. ``--quick`` is
a smoke run (1,000 permutations, not checked); ``--json PATH`` writes the figures for tools/perf_table.py.

Usage:  python benchmarks/ngroup.py [--target 2] [--permutations 100000] [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import _bench

#: the two tests of docs/ngroup.md (three religions, 10 words each, against regions and against valence)
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "religion.yaml"


def rows(f: dict) -> list[dict]:
    """The figures against the target (pure: ``f`` is what :func:`main` measured)."""
    out = [_bench.row(name, f"{sec:.2f} s", round(sec, 3), "s", _bench.NO_TARGET, True) for name, sec in f["stages"]]
    for name, sec, cpu in f["tests"]:
        out.append(
            _bench.row(
                f"{name}: 3 groups x 10 words, four statistics, raw and ZCA",
                f"{sec:.2f} s (CPU {cpu:.2f} s)",
                round(sec, 3),
                "s",
                f"<= {f['target']:g} s",
                sec <= f["target"],
            )
        )
    return out


def check(figures: dict) -> list[str]:
    """The targets missed by ``figures`` (empty when all are met)."""
    return _bench.missed(rows(figures))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", type=float, default=2.0, help="seconds allowed per test, raw and ZCA (default 2)")
    ap.add_argument("--permutations", type=int, default=None, help="default 100000; --quick 1000")
    ap.add_argument("--quick", action="store_true", help="smoke run: 1,000 permutations, not checked")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    n_perm = args.permutations or (1_000 if args.quick else 100_000)
    run = _bench.Run("ngroup", quick=args.quick)
    stages = []
    t = time.perf_counter()
    import isoeat
    from isoeat.experiments.engine import CachedEncoder

    model = isoeat.load_model("glove-6b-50d")
    stages.append(("import isoeat, load glove-6b-50d", time.perf_counter() - t))
    t = time.perf_counter()
    cal = isoeat.fit_calibrator(model, "zca")
    stages.append(("fit ZCA (once)", time.perf_counter() - t))
    tests = []
    for test in isoeat.load_ngroup_tests(EXAMPLE):
        name = test.id.removeprefix("religion-")
        cached = CachedEncoder(model)
        t, c = time.perf_counter(), time.process_time()
        for space in (None, cal):
            for r in isoeat.ngroup(cached, test, calibration=space, rng=0, n_permutations=n_perm):
                print(f"{name:8} {r.calibration:5} {r.statistic:6} {r.estimate:8.4f}  p {r.p_value:.4g} ({r.p_method})")
        tests.append((name, time.perf_counter() - t, time.process_time() - c))
    return run.finish(rows({"stages": stages, "tests": tests, "target": args.target}), args.json)


if __name__ == "__main__":
    sys.exit(main())
