"""tools/perf_table.py: the README's performance tables rewritten from the benchmarks' JSON output.

Every README and JSON document here is written by hand; the expected text is written out in full from the
format the tool's docstring states (block marker, a line of provenance, a four-column table), never taken from
the tool's own output. No benchmark is run and nothing is timed.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("perf_table", ROOT / "tools" / "perf_table.py")
pt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pt)

README = """# proj

## Performance

Prose before the tables stays.

<!-- perf-table:start -->
<!-- perf-table:bench alpha -->
**`benchmarks/alpha.py`**: an old run

| what | measured | target |
|---|---|---|
| alpha speed | 9 s | <= 10 s |

<!-- perf-table:bench beta -->
**`benchmarks/beta.py`**: an old run

| what | measured | target |
|---|---|---|
| beta size | 3 MiB | <= 4 MiB |

<!-- perf-table:end -->

## Next section
"""


def alpha_doc(**changes) -> dict:
    doc = {"benchmark": "alpha", "date": "2026-12-01T07:30:05Z", "machine": "Linux-x | AMD EPYC | 2 cores (2 usable)",
           "load_before": [0.1, 0.25, 0.5], "load_after": [0.75, 0.3, 0.5], "python": "3.11.7", "numpy": "2.4.6",
           "command": "python benchmarks/alpha.py --json out/alpha.json", "quick": False,
           "rows": [{"what": "alpha speed", "measured": "1.50 s", "value": 1.5, "unit": "s", "target": "<= 2 s",
                     "ok": True},
                    {"what": "alpha memory", "measured": "700 MiB", "value": 700, "unit": "MiB",
                     "target": "<= 600 MiB", "ok": False}],
           "missed": ["alpha memory: 700 MiB (target <= 600 MiB)"]}
    doc.update(changes)
    return doc


#: The README after rewriting with alpha_doc(): alpha's block from the JSON, beta kept and marked not rerun.
EXPECTED = """# proj

## Performance

Prose before the tables stays.

<!-- perf-table:start -->
<!-- perf-table:bench alpha -->
**`benchmarks/alpha.py`**: 2026-12-01 07:30 UTC; Linux-x | AMD EPYC | 2 cores (2 usable); load average 0.10 0.25 \
0.50 before, 0.75 0.30 0.50 after; Python 3.11.7, numpy 2.4.6; `python benchmarks/alpha.py --json out/alpha.json`

| what | measured | target | met |
|---|---|---|---|
| alpha speed | 1.50 s | <= 2 s | yes |
| alpha memory | 700 MiB | <= 600 MiB | **missed** |

<!-- perf-table:bench beta -->
**`benchmarks/beta.py`**: an old run (not rerun)

| what | measured | target |
|---|---|---|
| beta size | 3 MiB | <= 4 MiB |

<!-- perf-table:end -->

## Next section
"""


def test_rewrite_from_a_fixture_json() -> None:
    assert pt.rewrite(README, [alpha_doc()]) == EXPECTED


def test_a_missed_target_reads_missed_and_a_met_one_yes() -> None:
    out = pt.rewrite(README, [alpha_doc()])
    assert "| alpha memory | 700 MiB | <= 600 MiB | **missed** |" in out.splitlines()
    assert "| alpha speed | 1.50 s | <= 2 s | yes |" in out.splitlines()
    flipped = alpha_doc(rows=[dict(alpha_doc()["rows"][1], ok=True)])
    assert "| alpha memory | 700 MiB | <= 600 MiB | yes |" in pt.rewrite(README, [flipped]).splitlines()


def test_rewrite_is_idempotent() -> None:
    once = pt.rewrite(README, [alpha_doc()])
    assert pt.rewrite(once, [alpha_doc()]) == once
    # a block not rerun twice is marked once
    assert pt.rewrite(pt.rewrite(README, []), []) == pt.rewrite(README, [])
    assert pt.rewrite(README, []).count("(not rerun)") == 2


def test_without_json_every_figure_is_kept() -> None:
    """Nothing is invented: with no JSON file, only the provenance lines change (each gains "(not rerun)")."""
    out = pt.rewrite(README, [])
    changed = [(a, b) for a, b in zip(README.splitlines(), out.splitlines()) if a != b]
    assert changed == [("**`benchmarks/alpha.py`**: an old run", "**`benchmarks/alpha.py`**: an old run (not rerun)"),
                       ("**`benchmarks/beta.py`**: an old run", "**`benchmarks/beta.py`**: an old run (not rerun)")]


def test_a_new_benchmark_is_added_at_the_end_and_pipes_escaped() -> None:
    doc = alpha_doc(benchmark="gamma", command="python benchmarks/gamma.py --json g.json",
                    rows=[{"what": "a | b", "measured": "1 s", "target": "no target", "ok": True}])
    out = pt.rewrite(README, [doc])
    region = out[out.index(pt.START):out.index(pt.END)]
    assert region.index("perf-table:bench beta") < region.index("perf-table:bench gamma")
    assert "| a \\| b | 1 s | no target | yes |" in out.splitlines()


SWAPPED = README.replace(pt.START, "@@").replace(pt.END, pt.START).replace("@@", pt.END)


@pytest.mark.parametrize("text", [README.replace(pt.START + "\n", ""), README.replace(pt.END + "\n", ""),
                                  SWAPPED, README + pt.START + "\n" + pt.END + "\n"],
                         ids=["no start", "no end", "end before start", "two pairs"])
def test_markers_missing_is_one_line_error(tmp_path, capsys, text) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(text, encoding="utf-8")
    path = tmp_path / "alpha.json"
    path.write_text(json.dumps(alpha_doc()), encoding="utf-8")
    assert pt.main([str(path), "--readme", str(readme)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("perf_table: error: ") and pt.START in err
    assert readme.read_text(encoding="utf-8") == text  # untouched


@pytest.mark.parametrize("doc, words", [(alpha_doc(quick=True), "--quick"),
                                        ({"benchmark": "alpha"}, "not a benchmark's --json output"),
                                        (alpha_doc(rows=[{"what": "x"}]), "a row lacks")])
def test_a_bad_json_is_one_line_error(tmp_path, capsys, doc, words) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(README, encoding="utf-8")
    path = tmp_path / "alpha.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert pt.main([str(path), "--readme", str(readme)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and str(path) in err
    assert readme.read_text(encoding="utf-8") == README


def test_main_rewrites_the_file_and_twice_changes_nothing(tmp_path, capsys) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(README, encoding="utf-8")
    path = tmp_path / "alpha.json"
    path.write_text(json.dumps(alpha_doc()), encoding="utf-8")
    assert pt.main([str(path), "--readme", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == EXPECTED
    assert "1 missed target(s)" in capsys.readouterr().out
    assert pt.main([str(path), "--readme", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == EXPECTED


def test_the_repository_readme_has_one_block_per_benchmark() -> None:
    """The README's region parses, and each benchmark with a --json option has a block to rewrite."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    region = text[text.index(pt.START):text.index(pt.END)].splitlines()
    names = [m.group(1) for line in region if (m := pt.BENCH.match(line))]
    assert sorted(names) == ["certified", "corpora", "encoders", "layers", "levels", "metrics", "permutation", "report",
                             "speed", "suggest", "whitening"]
