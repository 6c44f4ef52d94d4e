"""Benchmark of reading a large test file: ``isoeat.resolve_tests(FILE)`` on a file of many small tests.

A test file is at most 16 MiB; a file of N four-set tests (two words a set) is read, its ids checked for
repeats (in any case or only looking alike) and against the built-in ids. The check of ids selected twice
used ``list.count`` per id (quadratic: 10,000 tests spent 4 s in it, 50,000 about 100 s on a 2-core
machine); it now counts once. Prints the seconds for N = 5,000 and N = 50,000 and their ratio per test.

Targets (a quiet 2-core machine; exit status 1 naming each missed target): 50,000 tests read in <= 20 s, and
the time per test at 50,000 at most 3 times that at 5,000 (linear, not quadratic: quadratic gives about 10).
``--quick``: 2,000 and 20,000 tests, timings printed, targets checked too.
``--json PATH`` writes the figures for tools/perf_table.py.

Usage:  python benchmarks/library_load.py [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import _bench

SECONDS_LARGE = 20.0
RATIO = 3.0


def rows(f: dict) -> list[dict]:
    small, large = f["small"], f["large"]
    per_small, per_large = small[1] / small[0], large[1] / large[0]
    ratio = per_large / per_small
    return [
        _bench.row(f"read {small[0]:,} tests", f"{small[1]:.2f} s", small[1], "s", _bench.NO_TARGET, True),
        _bench.row(
            f"read {large[0]:,} tests",
            f"{large[1]:.2f} s",
            large[1],
            "s",
            f"<= {SECONDS_LARGE:g} s",
            large[1] <= SECONDS_LARGE,
        ),
        _bench.row(
            "time per test, large / small", f"{ratio:.2f}", ratio, "x", f"<= {RATIO:g} (linear)", ratio <= RATIO
        ),
    ]


def check(figures: dict) -> list[str]:
    """The targets missed by ``figures`` (empty when all are met)."""
    return _bench.missed(rows(figures))


def _read(folder: Path, n: int) -> float:
    from isoeat.wordsets import resolve_tests

    tests = [{"id": f"t{i}", **{r: [f"{r.lower()}{i}a", f"{r.lower()}{i}b"] for r in "XYAB"}} for i in range(n)]
    f = folder / f"tests{n}.json"
    f.write_text(json.dumps(tests, indent=0), "utf-8")  # one key a line: under the 1 MiB line limit
    t0 = time.perf_counter()
    got = resolve_tests(str(f))
    seconds = time.perf_counter() - t0
    assert len(got) == n, len(got)
    return seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2,000 and 20,000 tests")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    run = _bench.Run("library_load", quick=args.quick, quick_checks=True)
    sizes = (2_000, 20_000) if args.quick else (5_000, 50_000)
    with tempfile.TemporaryDirectory() as tmp:
        _read(Path(tmp), 200)  # warm: the registry and the built-in tests load once
        figures = {"small": (sizes[0], _read(Path(tmp), sizes[0])), "large": (sizes[1], _read(Path(tmp), sizes[1]))}
    return run.finish(rows(figures), args.json)


if __name__ == "__main__":
    sys.exit(main())
