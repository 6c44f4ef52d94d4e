"""Shared by the benchmarks: the machine line, the load average, rows of figures against targets, ``--json``.

A benchmark measures its figures, turns them into rows with a pure function of the figures (``rows(figures)``:
what, measured, value, unit, target, ok), and ends with :func:`Run.finish`, which prints every row, the load
average after the run and the missed targets, writes the JSON file that ``tools/perf_table.py`` reads, and gives
the exit status (1 when a target is missed). Timing targets are stated for a quiet 2-core machine; the load average
printed before and after says how quiet the machine was.

JSON written by ``--json PATH``::

    {"benchmark": "permutation", "date": "2026-12-01T07:30:00Z", "machine": "Linux-... | CPU model | 2 cores",
     "load_before": [0.1, 0.2, 0.3], "load_after": [...], "python": "3.12.1", "numpy": "2.1.0",
     "command": "python benchmarks/permutation.py --json out/permutation.json", "quick": false,
     "rows": [{"what": ..., "measured": ..., "value": 0.12, "unit": "s", "target": "<= 0.3 s", "ok": true}],
     "missed": ["..."]}
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

NO_TARGET = "no target"


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (else what platform knows)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    """One line: platform, CPU model, cores (visible and usable)."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{platform.platform()} | {cpu_model()} | {os.cpu_count()} cores ({usable} usable)"


def load() -> list[float]:
    """The 1, 5 and 15 minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


def load_text(values: list[float]) -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in values)


def row(what: str, measured: str, value: float | None, unit: str, target: str, ok: bool) -> dict:
    """One figure against its target (``target`` is text; ``NO_TARGET`` when there is none, then ``ok`` is True)."""
    return {"what": what, "measured": measured, "value": value, "unit": unit, "target": target, "ok": bool(ok)}


def missed(rows: list[dict]) -> list[str]:
    """The rows whose target is missed, one line each."""
    return [f"{r['what']}: {r['measured']} (target {r['target']})" for r in rows if not r["ok"]]


def add_json_option(ap) -> None:
    ap.add_argument("--json", metavar="PATH", default=None,
                    help="also write the figures, date, machine line, load average and command to PATH (JSON), "
                         "for tools/perf_table.py")


class Run:
    """One run of a benchmark: prints the machine line and load average now; :meth:`finish` ends it."""

    def __init__(self, name: str, quick: bool = False, quick_checks: bool = False):
        """``quick_checks``: the targets hold at the ``--quick`` sizes too (else a quick run's misses are shown but
        do not set the exit status)."""
        self.name = name
        self.quick = quick
        self.quick_checks = quick_checks
        self.date = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat().replace(
            "+00:00", "Z")
        self.command = "python " + shlex.join(sys.argv)
        self.load_before = load()
        print(f"# {machine()}")
        print(f"# {self.date}; start: {load_text(self.load_before)}"
              + ("; --quick: a smoke run, timing targets not checked" if quick and not quick_checks else ""),
              flush=True)

    def finish(self, rows: list[dict], json_path: str | None) -> int:
        """Print the rows, the load average and the missed targets; write JSON; the exit status (1: missed)."""
        import numpy as np

        load_after = load()
        w1 = max([4] + [len(r["what"]) for r in rows])
        w2 = max([8] + [len(r["measured"]) for r in rows])
        print(f"\n{'what':<{w1}}  {'measured':<{w2}}  target")
        for r in rows:
            flag = "" if r["ok"] else "   MISSED"
            print(f"{r['what']:<{w1}}  {r['measured']:<{w2}}  {r['target']}{flag}")
        print(f"# end: {load_text(load_after)}")
        bad = missed(rows)
        if json_path:
            doc = {"benchmark": self.name, "date": self.date, "machine": machine(), "load_before": self.load_before,
                   "load_after": load_after, "python": platform.python_version(), "numpy": np.__version__,
                   "command": self.command, "quick": self.quick, "rows": rows, "missed": bad}
            path = Path(json_path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
            print(f"# figures written to {path}")
        if bad:
            print("MISSED: " + "; ".join(bad))
            if self.quick and not self.quick_checks:
                print("(--quick: a smoke run at other sizes, so these do not set the exit status)")
                return 0
            return 1
        print("all targets met")
        return 0


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_isoeat(*args: str, env: dict) -> tuple[float, float]:
    """``(wall, CPU)`` seconds of ``isoeat ARGS`` run as a child (CPU: user + system of it and its children);
    exits naming the command on failure."""
    c0, t0 = children_cpu(), time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "isoeat.cli", *args], capture_output=True, text=True, env=env)
    wall, cpu = time.perf_counter() - t0, children_cpu() - c0
    if r.returncode != 0:
        sys.exit(f"isoeat {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return wall, cpu
