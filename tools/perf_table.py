"""Rewrite the README's performance tables from the benchmarks' JSON output (``--json PATH``).

Usage:  python tools/perf_table.py out/*.json [--readme README.md]

The tables live between ``<!-- perf-table:start -->`` and ``<!-- perf-table:end -->``; inside, each
benchmark's block starts with ``<!-- perf-table:bench NAME -->``, then a line giving where its figures come from
(date, machine line, load average before and after, versions, the exact command), then its table. A benchmark
given a JSON file gets its block rewritten from that file, a missed target marked **missed**; a benchmark without
one keeps its block as it is, marked "(not rerun)"; a JSON file for a benchmark with no block adds one at the end.
Nothing here makes up a number: every figure is a benchmark's own text. A ``--quick`` smoke run is refused.
Running it twice with the same files gives the same README.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

START = "<!-- perf-table:start -->"
END = "<!-- perf-table:end -->"
BENCH = re.compile(r"^<!-- perf-table:bench ([\w.-]+) -->\s*$")
NOT_RERUN = "(not rerun)"
REQUIRED = ("benchmark", "date", "machine", "load_before", "load_after", "python", "numpy", "command", "rows")
ROW_KEYS = ("what", "measured", "target", "ok")


class PerfTableError(ValueError):
    """A problem with the README or a JSON file, said in one line."""


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _loads(values) -> str:
    return " ".join(f"{float(x):.2f}" for x in values)


def block(doc: dict) -> list[str]:
    """The lines of one benchmark's block, from its JSON document."""
    date = str(doc["date"]).replace("T", " ").rstrip("Z")[:16] + " UTC"
    head = (f"**`benchmarks/{doc['benchmark']}.py`**: {date}; {doc['machine']}; load average "
            f"{_loads(doc['load_before'])} before, {_loads(doc['load_after'])} after; Python {doc['python']}, "
            f"numpy {doc['numpy']}; `{doc['command']}`")
    lines = [f"<!-- perf-table:bench {doc['benchmark']} -->", head, "", "| what | measured | target | met |",
             "|---|---|---|---|"]
    for r in doc["rows"]:
        lines.append(f"| {_cell(r['what'])} | {_cell(r['measured'])} | {_cell(r['target'])} | "
                     f"{'yes' if r['ok'] else '**missed**'} |")
    lines.append("")
    return lines


def _split(region: list[str]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """Lines before the first block, and (name, lines) of each block."""
    pre: list[str] = []
    blocks: list[tuple[str, list[str]]] = []
    for line in region:
        m = BENCH.match(line)
        if m:
            blocks.append((m.group(1), [line]))
        elif blocks:
            blocks[-1][1].append(line)
        else:
            pre.append(line)
    return pre, blocks


def _mark_not_rerun(lines: list[str]) -> list[str]:
    out = list(lines)
    for i, line in enumerate(out[1:], 1):
        if line.strip():
            if not line.rstrip().endswith(NOT_RERUN):
                out[i] = line.rstrip() + " " + NOT_RERUN
            break
    return out


def check_doc(doc, source: str) -> dict:
    """``doc`` if it is a benchmark's full-run JSON document, else PerfTableError naming ``source``."""
    if not isinstance(doc, dict) or any(k not in doc for k in REQUIRED):
        raise PerfTableError(f"{source}: not a benchmark's --json output (needs {', '.join(REQUIRED)})")
    if doc.get("quick"):
        raise PerfTableError(f"{source}: a --quick smoke run; rerun the benchmark without --quick")
    if not re.fullmatch(r"[\w.-]+", str(doc["benchmark"])):
        raise PerfTableError(f"{source}: benchmark name {doc['benchmark']!r} is not a plain name")
    for r in doc["rows"]:
        if not isinstance(r, dict) or any(k not in r for k in ROW_KEYS):
            raise PerfTableError(f"{source}: a row lacks one of {', '.join(ROW_KEYS)}")
    return doc


def rewrite(text: str, docs: list[dict]) -> str:
    """``text`` (the README) with the blocks of ``docs`` rewritten and every other block marked not rerun."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip() == START]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise PerfTableError(f"the README needs one {START} line and one {END} line after it "
                             f"(found {len(starts)} and {len(ends)})")
    by_name: dict[str, dict] = {}
    for doc in docs:
        if doc["benchmark"] in by_name:
            raise PerfTableError(f"two JSON files for benchmark {doc['benchmark']!r}")
        by_name[doc["benchmark"]] = doc
    pre, blocks = _split(lines[starts[0] + 1:ends[0]])
    out = list(pre)
    seen = set()
    for name, blines in blocks:
        seen.add(name)
        out += block(by_name[name]) if name in by_name else _mark_not_rerun(blines)
    for name, doc in by_name.items():
        if name not in seen:
            if out and out[-1].strip():
                out.append("")
            out += block(doc)
    return "\n".join(lines[:starts[0] + 1] + out + lines[ends[0]:])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+", help="files written by the benchmarks' --json PATH")
    ap.add_argument("--readme", default=str(Path(__file__).resolve().parents[1] / "README.md"),
                    help="the file to rewrite (default: the repository's README.md)")
    args = ap.parse_args(argv)
    try:
        docs = []
        for path in args.json:
            try:
                doc = json.loads(Path(path).read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise PerfTableError(f"{path}: cannot read JSON ({e.__class__.__name__}: {e})") from None
            docs.append(check_doc(doc, path))
        readme = Path(args.readme)
        try:
            text = readme.read_text(encoding="utf-8")
        except OSError as e:
            raise PerfTableError(f"{readme}: cannot read ({e.strerror})") from None
        new = rewrite(text, docs)
    except PerfTableError as e:
        print(f"perf_table: error: {e}", file=sys.stderr)
        return 2
    if new != text:
        readme.write_text(new, encoding="utf-8")
    names = ", ".join(d["benchmark"] for d in docs)
    missed = sum(not r["ok"] for d in docs for r in d["rows"])
    print(f"{readme}: rewrote {names}" + (f"; {missed} missed target(s) shown" if missed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
