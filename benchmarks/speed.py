"""Benchmark of the first answer: ``isoeat run`` (the default job) and ``isoeat report`` against the grid it reports.

Targets (the script exits with status 1 when one is missed):

* ``isoeat run`` (the default job: W1-W10 on the bundled GloVe 6B 50d, raw vs
  ZCA, Firm marks, isotropy check) takes <= 1.5 s wall, median of ``--repeats``
  runs, after one untimed run (its caches: the word list of the bundled GloVe,
  the stability redraws, the certified brackets and the reference text's
  counts, each kept by content; and Python's bytecode);
* ``isoeat report DIR`` on the folder of ``isoeat run examples/paper_glove.yaml
  --out DIR`` takes <= 1x the wall time of that grid, median of the ratios of
  ``--repeats`` pairs, each grid run into a fresh folder: the first report of
  a grid (every figure drawn);
* ``isoeat report DIR`` again on the same folder (figures drawn from the same
  inputs are kept: :mod:`isoeat.reporting._figure_memo`) takes <= 1x its grid.

CPU time (user + system of the command and its children) is printed beside each
wall time, with the load average before and after: the targets are stated for a
quiet 2-core machine, where wall time is about CPU time. On a shared machine
compare the CPU columns and the ratios, not the wall seconds.

Bytecode: the timed commands run with ``PYTHONDONTWRITEBYTECODE`` removed, as an
installed package runs (with it set, every run compiles isoeat's ~300 modules
again: ~0.4 s).

Usage:  python benchmarks/speed.py [--repeats 7] [--quick] [--json PATH]

``--quick``: 3 runs and 1 grid/report pair, a smoke run (its misses are shown but do not set the exit status).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import _bench

MAX_RUN_SECONDS = 1.5
MAX_REPORT_RATIO = 1.0
CONFIG = Path(__file__).resolve().parent.parent / "examples" / "paper_glove.yaml"


def rows(f: dict) -> list[dict]:
    """The figures against the targets (pure: ``f`` holds the medians)."""
    run, first, again = f["run"], f["first"], f["again"]
    return [
        _bench.row("isoeat run (default job, GloVe 6B 50d W1-W10): median wall",
                   f"{run['wall']:.2f} s wall, {run['cpu']:.2f} s CPU (median of {run['n']})", round(run["wall"], 3),
                   "s", f"<= {MAX_RUN_SECONDS:g} s", run["wall"] <= MAX_RUN_SECONDS),
        _bench.row("isoeat report / its grid (paper_glove, first report): median wall ratio",
                   f"{first['ratio']:.2f}x (report {first['wall']:.2f} s / grid {first['grid']:.2f} s wall; "
                   f"CPU {first['cpu_ratio']:.2f}x)", round(first["ratio"], 3), "x",
                   f"<= {MAX_REPORT_RATIO:g}x", first["ratio"] <= MAX_REPORT_RATIO),
        _bench.row("isoeat report again / its grid (figures kept): median wall ratio",
                   f"{again['ratio']:.2f}x (report {again['wall']:.2f} s / grid {again['grid']:.2f} s wall; "
                   f"CPU {again['cpu_ratio']:.2f}x)", round(again["ratio"], 3), "x",
                   f"<= {MAX_REPORT_RATIO:g}x", again["ratio"] <= MAX_REPORT_RATIO),
    ]


def check(figures: dict) -> list[str]:
    """The targets missed by ``figures`` (empty when all are met)."""
    return _bench.missed(rows(figures))


timed = _bench.timed_isoeat


def _pairs(n: int, env: dict, root: Path) -> tuple[dict, dict]:
    """``n`` grids into fresh folders, each reported twice: the median ratios (first report, report again)."""
    first, again = [], []
    for i in range(n):
        out = root / f"grid-{i}"
        g = timed("run", str(CONFIG), "--out", str(out), "--quiet", env=env)
        r1 = timed("report", str(out), env=env)
        r2 = timed("report", str(out), env=env)
        first.append((g, r1))
        again.append((g, r2))
        print(f"  pair {i + 1}: grid {g[0]:.2f} s ({g[1]:.2f} CPU), report {r1[0]:.2f} s ({r1[1]:.2f} CPU), "
              f"again {r2[0]:.2f} s ({r2[1]:.2f} CPU)", flush=True)

    def summary(pairs: list) -> dict:
        return {"ratio": statistics.median(r[0] / g[0] for g, r in pairs),
                "cpu_ratio": statistics.median(r[1] / g[1] for g, r in pairs),
                "wall": statistics.median(r[0] for _, r in pairs), "grid": statistics.median(g[0] for g, _ in pairs)}

    return summary(first), summary(again)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7, help="timed runs of 'isoeat run' (default 7; pairs: 3)")
    ap.add_argument("--quick", action="store_true", help="3 runs, 1 grid/report pair; targets shown, not enforced")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    n_runs = 3 if args.quick else max(1, args.repeats)
    n_pairs = 1 if args.quick else 3
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    bench = _bench.Run("speed", quick=args.quick)
    with tempfile.TemporaryDirectory(prefix="isoeat-bench-speed-") as tmp:
        w, c = timed("run", env=env)  # untimed: bytecode and the caches
        print(f"warm-up 'isoeat run': {w:.2f} s wall, {c:.2f} s CPU (not counted)", flush=True)
        walls, cpus = [], []
        for i in range(n_runs):
            w, c = timed("run", env=env)
            walls.append(w)
            cpus.append(c)
            print(f"  run {i + 1}: {w:.2f} s wall, {c:.2f} s CPU", flush=True)
        first, again = _pairs(n_pairs, env, Path(tmp))
    figures = {"run": {"wall": statistics.median(walls), "cpu": statistics.median(cpus), "n": n_runs},
               "first": first, "again": again}
    return bench.finish(rows(figures), args.json)


if __name__ == "__main__":
    sys.exit(main())
