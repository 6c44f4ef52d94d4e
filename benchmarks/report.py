"""Benchmark of ``isoeat report DIR --html`` on the paper_glove example (one model, W1-W10, raw vs ZCA).

Target (the script exits with status 1 when it is missed):

* ``isoeat report DIR --html`` on the folder written by
  ``isoeat run examples/paper_glove.yaml --out DIR`` (12 tables in three
  formats, Figures 1-4 and 10 per-test heatmaps as PNG and PDF, report.html)
  takes <= 10 s of CPU time, median of ``--repeats`` runs: user + system time of
  the command and of every process it starts (getrusage of the children). Each run
  reports a fresh copy of the folder without its figures, so every figure is drawn.

The wall time is printed beside it: on a quiet 2-core machine it is about the
CPU time, or less when the figures render in two processes
(``ISOEAT_REPORT_JOBS``, ``--jobs``); on a shared machine it is longer, so the
load average is printed before and after, and the target is on CPU time.

Usage:  python benchmarks/report.py [--dir DIR] [--repeats 3] [--jobs N] [--json PATH]

Without ``--dir`` (or when DIR holds no finished run) the experiment is run
first (about 10-30 s, not timed), into a temporary folder unless ``--dir`` names one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _bench

MAX_CPU_SECONDS = 10.0
CONFIG = Path(__file__).resolve().parent.parent / "examples" / "paper_glove.yaml"


def rows(f: dict) -> list[dict]:
    """The figures against the target (pure: ``f`` holds the medians and the target)."""
    return [_bench.row("isoeat report --html, paper_glove (1 model, W1-W10, raw vs ZCA): median CPU",
                       f"{f['cpu']:.2f} s CPU, {f['wall']:.2f} s wall (median of {f['repeats']})", round(f["cpu"], 3),
                       "s", f"<= {f['target']:g} s CPU", f["cpu"] <= f["target"])]


def check(figures: dict) -> list[str]:
    """The targets missed by ``figures`` (empty when all are met)."""
    return _bench.missed(rows(figures))


def isoeat(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "isoeat.cli", *args], capture_output=True, text=True, env=env)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=None, help="experiment folder to reuse (run there first if empty)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of 'isoeat report DIR --html' (default 3)")
    ap.add_argument("--jobs", type=int, default=None, help="ISOEAT_REPORT_JOBS for the runs (default: as set)")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    tmp = None
    out = args.dir
    if out is None:
        tmp = tempfile.TemporaryDirectory(prefix="isoeat-bench-report-")
        out = Path(tmp.name) / "paper-glove"
    if not (out / "comparison.json").exists():
        t0 = time.perf_counter()
        r = isoeat("run", str(CONFIG), "--out", str(out), "--quiet")
        if r.returncode != 0:
            print(r.stderr[-2000:])
            return 1
        print(f"built {out} with 'isoeat run {CONFIG.name}' in {time.perf_counter() - t0:.1f} s (not timed below)")
    env = dict(os.environ)
    if args.jobs is not None:
        env["ISOEAT_REPORT_JOBS"] = str(args.jobs)
    run = _bench.Run("report")
    walls, cpus = [], []
    copies = tempfile.TemporaryDirectory(prefix="isoeat-bench-report-runs-")
    for i in range(args.repeats):
        # each run on a fresh copy of the folder without its figures: every figure drawn (a report of the same
        # folder again keeps the figures it drew: reporting/_figure_memo.py; benchmarks/speed.py times that case)
        run_dir = Path(copies.name) / f"run-{i}"
        shutil.copytree(out, run_dir, ignore=shutil.ignore_patterns("figures", "report.html"))
        c0, t0 = _bench.children_cpu(), time.perf_counter()
        r = isoeat("report", str(run_dir), "--html", env=env)
        wall, cpu = time.perf_counter() - t0, _bench.children_cpu() - c0
        if r.returncode != 0:
            print(r.stderr[-2000:])
            return 1
        walls.append(wall)
        cpus.append(cpu)
        print(f"  run {i + 1}: wall {wall:.2f} s, CPU {cpu:.2f} s ({r.stdout.strip().splitlines()[-1]})")
    copies.cleanup()
    if tmp is not None:
        tmp.cleanup()
    return run.finish(rows({"cpu": statistics.median(cpus), "wall": statistics.median(walls),
                            "repeats": args.repeats, "target": MAX_CPU_SECONDS}), args.json)


if __name__ == "__main__":
    sys.exit(main())
