#!/usr/bin/env python
"""AST-based mutation check for isoeat (run on demand, not in CI; stdlib only).

For every mutant of a module, a temporary copy of ``src/`` receives the mutated
file and the module's test files are run against it with ``python -m pytest
-x -q -p no:cacheprovider`` (the copy first on ``PYTHONPATH``).  A mutant is
*killed* when the tests fail, *timeout* when they run past the per-mutant
limit (both count as caught) and *survived* when they pass.  The source tree
is never modified.

Operators
---------
cmp     comparison swaps: ``<`` -> ``<=``, ``>``; ``<=`` -> ``<``; ``>`` -> ``>=``, ``<``;
        ``>=`` -> ``>``; ``==`` <-> ``!=``
bool    ``and`` <-> ``or`` (every operator of one boolean expression)
not     removal of ``not``
const   ``True`` <-> ``False``; integers ``0`` <-> ``1``, otherwise ``c`` -> ``c + 1``;
        floats ``0.0`` -> ``1.0``, otherwise ``c`` -> ``c / 2`` (``0.5`` -> ``0.25``)
arith   ``+`` <-> ``-``, ``*`` <-> ``/`` (also in augmented assignments)
abs     ``abs(x)`` -> ``x``

Not mutated: docstrings and other strings, type annotations, ``__repr__`` /
``__str__``, message code (the expression of a ``raise``, ``warnings.warn(...)``
and ``logging``/``logger`` calls, f-strings), and every mutant on a line that
ends with ``# mutation: equivalent (reason)`` (counted as *skipped*).  The
pragma can name the operators it covers, by prefix of the names above:
``# mutation: equivalent[const 0 -> 1] (reason)`` skips only that mutant of the
line, ``# mutation: equivalent[cmp, arith] (reason)`` only comparison and
arithmetic mutants.  A reason in parentheses is required.

Examples
--------
::

    python tools/mutation.py --module src/isoeat/stats/multitest.py
    python tools/mutation.py --module src/isoeat/calibration/zca.py --lines 120-170 --list
    python tools/mutation.py --module src/isoeat/stats/bootstrap.py --max-mutants 40 --jobs 2

Exit status: 0 when no mutant survived, 1 when some did, 2 on a usage error
or a failing baseline.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures as cf
import copy
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Module (path relative to the repository root) -> test files run for its
#: mutants, fastest and most targeted first (pytest stops at the first failure).
TEST_MAP: dict[str, list[str]] = {
    # the one homes of issue 30: every label, the file-name scheme, cosine, seeds, record keys, the engine
    "src/isoeat/labels.py": ["tests/test_mutation_kills_labels.py", "tests/test_labels_compare.py",
                             "tests/test_mutation_kills_compare.py",
                             "tests/test_labels.py::test_engine_labels_every_case_at_its_boundary",
                             "tests/test_mutation_kills_verdicts.py", "tests/test_stability.py",
                             "tests/test_protocol.py", "tests/test_across_corpora.py"],
    "src/isoeat/_names.py": ["tests/test_names.py",
                             "tests/test_one_engine.py::test_labels_that_differ_only_in_case_are_refused_before_anything_is_written"],
    "src/isoeat/_cosine.py": ["tests/test_names.py", "tests/test_cosine_scale.py"],
    "src/isoeat/_records.py": ["tests/test_names.py", "tests/test_runner_safety.py"],
    "src/isoeat/experiments/engine.py": ["tests/test_mutation_kills_engine.py", "tests/test_one_engine.py",
                                         "tests/test_runner.py", "tests/test_mutation_kills_compare.py"],
    "src/isoeat/experiments/compare.py": ["tests/test_labels_compare.py", "tests/test_mutation_kills_compare.py",
                                          "tests/test_labels.py::test_engine_labels_every_case_at_its_boundary"],
    "src/isoeat/experiments/_verdicts.py": ["tests/test_mutation_kills_verdicts.py", "tests/test_verdicts.py"],
    "src/isoeat/experiments/sensitivity.py": ["tests/test_sensitivity.py"],
    "src/isoeat/stats/validity.py": ["tests/test_mutation_kills_stats.py"],
    "src/isoeat/stats/rank.py": ["tests/test_mutation_kills_stats.py"],
    "src/isoeat/stats/_checks.py": ["tests/test_mutation_kills_stats.py"],
    "src/isoeat/stats/_exact.py": ["tests/test_mutation_kills_exact.py",
                                   "tests/test_exact_counts.py::test_tolerance_is_at_the_scale_of_rounding",
                                   "tests/test_exact_counts.py::test_ties_count_exact_duplicates_and_float_noise"],
    # certified p-values: the recorded runs (docs/mutation.md) leave out the GloVe-based tests of test_certified.py
    "src/isoeat/stats/_certified.py": ["tests/test_mutation_kills_certified.py", "tests/test_certified.py"],
    "src/isoeat/stats/multitest.py": ["tests/test_multitest_boundaries.py", "tests/test_multitest.py"],
    "src/isoeat/stats/bootstrap.py": ["tests/test_bootstrap_boundaries.py", "tests/test_mutation_kills_intervals.py",
                                      "tests/test_bootstrap.py"],
    "src/isoeat/stats/intervals.py": ["tests/test_mutation_kills_intervals.py", "tests/test_intervals.py"],
    "src/isoeat/stats/_ci.py": ["tests/test_mutation_kills_intervals.py", "tests/test_intervals.py"],
    "src/isoeat/stats/permutation.py": ["tests/test_mutation_kills_permutation.py", "tests/test_permutation.py"],
    "src/isoeat/stats/_montecarlo.py": ["tests/test_mutation_kills_permutation.py",
                                        "tests/test_permutation.py::test_random_subsets_are_uniform",
                                        "tests/test_permutation.py::test_sequential_stopping"],
    # WEAT/SC-WEAT and SEAT: the recorded runs (docs/mutation.md) take the kill tests and leave out the GloVe-based
    # tests of test_weat.py
    "src/isoeat/stats/weat.py": ["tests/test_mutation_kills_stats.py", "tests/test_weat.py",
                                 "tests/test_cosine_scale.py"],
    "src/isoeat/stats/seat.py": ["tests/test_mutation_kills_stats.py",
                                 "tests/test_result_surface.py::test_identity_values_of_seat",
                                 "tests/test_validity.py::test_seat_uses_the_same_check"],
    "src/isoeat/stats/results.py": ["tests/test_mutation_kills_results.py", "tests/test_result_surface.py",
                                    "tests/test_frames.py", "tests/test_reach.py"],
    "src/isoeat/calibration/zca.py": ["tests/test_mutation_kills.py", "tests/test_zca.py"],
    "src/isoeat/calibration/moments.py": ["tests/test_mutation_kills.py", "tests/test_moments.py"],
    # calibration modules: these files hold every test of the recorded runs (docs/mutation.md, which leave out
    # the GloVe-based tests for speed)
    "src/isoeat/calibration/alternatives.py": ["tests/test_mutation_kills_calibration.py",
                                               "tests/test_mutation_kills.py", "tests/test_alternatives.py",
                                               "tests/test_calibrator_integrity.py", "tests/test_zca.py"],
    "src/isoeat/calibration/_shrinkage.py": ["tests/test_mutation_kills_calibration.py",
                                             "tests/test_mutation_kills.py", "tests/test_alternatives.py",
                                             "tests/test_calibrator_integrity.py", "tests/test_zca.py"],
    "src/isoeat/calibration/_base.py": ["tests/test_mutation_kills_calibration.py",
                                        "tests/test_mutation_kills.py", "tests/test_alternatives.py",
                                        "tests/test_calibrator_integrity.py", "tests/test_zca.py"],
    "src/isoeat/calibration/io.py": ["tests/test_mutation_kills_calibration.py",
                                     "tests/test_mutation_kills.py", "tests/test_alternatives.py",
                                     "tests/test_calibrator_integrity.py", "tests/test_zca.py"],
    "src/isoeat/calibration/registry.py": ["tests/test_mutation_kills_calibration.py",
                                           "tests/test_mutation_kills.py", "tests/test_alternatives.py",
                                           "tests/test_calibrator_integrity.py", "tests/test_zca.py"],
}

PRAGMA = re.compile(r"#\s*mutation:\s*equivalent(?:\[(?P<ops>[^\]]+)\])?\s*\(.+\)\s*$")
CMP_SWAPS = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt,),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt,),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
}
CMP_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
ARITH_SWAPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}
ARITH_TEXT = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
MESSAGE_CALLS = re.compile(r"^(warnings\.warn|logging\.\w+|log\.\w+|logger\.\w+|_log\.\w+|_logger\.\w+|print)$")


@dataclass
class Mutant:
    module: str  # path relative to ROOT
    line: int
    operator: str
    original: str  # source line before
    mutated: str  # source line after
    source: str = field(repr=False, default="")  # the whole mutated module
    status: str = "pending"  # killed | survived | timeout | error
    seconds: float = 0.0


# ---------------------------------------------------------------------------
# finding mutation points
# ---------------------------------------------------------------------------


def _offsets(src: str) -> list[int]:
    """Character offset of the start of each line (1-based lines -> index line-1)."""
    out, pos = [], 0
    for line in src.splitlines(keepends=True):
        out.append(pos)
        pos += len(line)
    out.append(pos)
    return out


def _call_name(node: ast.Call) -> str:
    parts = []
    f = node.func
    while isinstance(f, ast.Attribute):
        parts.append(f.attr)
        f = f.value
    if isinstance(f, ast.Name):
        parts.append(f.id)
    return ".".join(reversed(parts))


def _excluded_nodes(tree: ast.AST) -> set[int]:
    """ids of nodes whose whole subtree is not mutated."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in ("__repr__", "__str__"):
                roots.append(node)
            if node.returns is not None:
                roots.append(node.returns)
            for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
                if a.annotation is not None:
                    roots.append(a.annotation)
            for a in (node.args.vararg, node.args.kwarg):
                if a is not None and a.annotation is not None:
                    roots.append(a.annotation)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        elif isinstance(node, ast.Raise):
            if node.exc is not None:
                roots.append(node.exc)
        elif isinstance(node, ast.JoinedStr):
            roots.append(node)
        elif isinstance(node, ast.Call) and MESSAGE_CALLS.match(_call_name(node)):
            roots.append(node)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            roots.append(node)
    out: set[int] = set()
    for r in roots:
        out.update(id(n) for n in ast.walk(r))
    return out


def _const_change(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return {0: 1, 1: 0}.get(value, value + 1)
    if isinstance(value, float):
        return 1.0 if value == 0.0 else value / 2.0
    return None


@dataclass
class _Edit:
    start: int  # absolute character offsets in the module source
    end: int
    text: str
    operator: str
    apply: object  # callable(tree_copy_node) -> None: the same change on the AST


def _edits(src: str, tree: ast.AST) -> list[tuple[ast.AST, _Edit]]:
    offs = _offsets(src)

    def pos(line: int, col: int) -> int:
        # ast columns are UTF-8 byte offsets
        text = src[offs[line - 1]: offs[line]]
        return offs[line - 1] + len(text.encode("utf-8")[:col].decode("utf-8", "replace"))

    def span(node: ast.AST) -> tuple[int, int]:
        return pos(node.lineno, node.col_offset), pos(node.end_lineno, node.end_col_offset)

    def gap_edit(a: ast.AST, b: ast.AST, pattern: str, repl: str) -> tuple[int, int, str] | None:
        g0, g1 = span(a)[1], span(b)[0]
        m = re.search(pattern, src[g0:g1])
        if m is None:
            return None
        return g0 + m.start(), g0 + m.end(), repl

    excluded = _excluded_nodes(tree)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    out: list[tuple[ast.AST, _Edit]] = []
    for node in ast.walk(tree):
        if id(node) in excluded or id(node) in docstrings:
            continue
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                for new in CMP_SWAPS.get(type(op), ()):
                    pat = r"(<=|>=|==|!=|<|>)"
                    e = gap_edit(operands[i], operands[i + 1], pat, CMP_TEXT[new])
                    if e is None:
                        continue

                    def apply(n, i=i, new=new):
                        n.ops[i] = new()

                    out.append((node, _Edit(*e, f"cmp {CMP_TEXT[type(op)]} -> {CMP_TEXT[new]}", apply)))
        elif isinstance(node, ast.BoolOp):
            old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            edits = [gap_edit(a, b, rf"\b{old}\b", new) for a, b in zip(node.values, node.values[1:])]
            if all(edits):
                # several gaps: encode as one edit over the whole node
                s0, s1 = span(node)
                text = src[s0:s1]
                for g0, g1, r in reversed(edits):
                    text = text[: g0 - s0] + r + text[g1 - s0:]

                def apply(n):
                    n.op = ast.Or() if isinstance(n.op, ast.And) else ast.And()

                out.append((node, _Edit(s0, s1, text, f"bool {old} -> {new}", apply)))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            s0, s1 = span(node)
            o0, o1 = span(node.operand)
            out.append((node, _Edit(s0, s1, "(" + src[o0:o1] + ")", "not removed", "unwrap")))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "abs" \
                and len(node.args) == 1 and not node.keywords:
            s0, s1 = span(node)
            o0, o1 = span(node.args[0])
            out.append((node, _Edit(s0, s1, "(" + src[o0:o1] + ")", "abs(x) -> x", "unwrap")))
        elif isinstance(node, ast.BinOp) and type(node.op) in ARITH_SWAPS:
            new = ARITH_SWAPS[type(node.op)]
            old_t, new_t = ARITH_TEXT[type(node.op)], ARITH_TEXT[new]
            e = gap_edit(node.left, node.right, rf"(?<![*/]){re.escape(old_t)}(?![*/=])", new_t)
            if e is not None:
                def apply(n, new=new):
                    n.op = new()

                out.append((node, _Edit(*e, f"arith {old_t} -> {new_t}", apply)))
        elif isinstance(node, ast.AugAssign) and type(node.op) in ARITH_SWAPS:
            new = ARITH_SWAPS[type(node.op)]
            old_t, new_t = ARITH_TEXT[type(node.op)], ARITH_TEXT[new]
            e = gap_edit(node.target, node.value, rf"{re.escape(old_t)}=", new_t + "=")
            if e is not None:
                def apply(n, new=new):
                    n.op = new()

                out.append((node, _Edit(*e, f"arith {old_t}= -> {new_t}=", apply)))
        elif isinstance(node, ast.Constant) and not isinstance(node.value, (str, bytes)):
            new_value = _const_change(node.value)
            if new_value is None:
                continue
            s0, s1 = span(node)

            def apply(n, v=new_value):
                n.value = v

            out.append((node, _Edit(s0, s1, repr(new_value), f"const {src[s0:s1]} -> {new_value!r}", apply)))
    return out


def _dump(tree: ast.AST) -> str:
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def _expected_tree(tree: ast.AST, target: ast.AST, edit: _Edit) -> str:
    """The AST the mutant must parse to (to check the text edit)."""
    clone = copy.deepcopy(tree)
    index = [id(n) for n in ast.walk(tree)].index(id(target))
    node = list(ast.walk(clone))[index]
    if edit.apply == "unwrap":
        repl = node.operand if isinstance(node, ast.UnaryOp) else node.args[0]
        for parent in ast.walk(clone):
            for name, value in ast.iter_fields(parent):
                if value is node:
                    setattr(parent, name, repl)
                elif isinstance(value, list):
                    for k, v in enumerate(value):
                        if v is node:
                            value[k] = repl
    else:
        edit.apply(node)
    return _dump(clone)


def find_mutants(module: str, lines: list[tuple[int, int]] | None = None) -> tuple[list[Mutant], int]:
    """All mutants of ``module`` (relative path) and how many the pragma skipped."""
    path = ROOT / module
    src = path.read_text(encoding="utf-8")
    tree = ast.parse(src)
    src_lines = src.splitlines()
    offs = _offsets(src)
    mutants, skipped, seen = [], 0, set()
    for k, text in enumerate(src_lines, 1):
        if "mutation: equivalent" in text and not PRAGMA.search(text):
            print(f"warning: {module}:{k}: pragma without a (reason) at the end of the line is ignored",
                  file=sys.stderr)
    for node, edit in _edits(src, tree):
        line = next(i for i in range(len(offs) - 1) if offs[i] <= edit.start < offs[i + 1]) + 1
        if lines and not any(a <= line <= b for a, b in lines):
            continue
        new_src = src[: edit.start] + edit.text + src[edit.end:]
        if new_src in seen:
            continue
        seen.add(new_src)
        pragma = PRAGMA.search(src_lines[line - 1])
        if pragma and (not pragma["ops"] or any(
                edit.operator.startswith(o.strip()) for o in pragma["ops"].split(","))):
            skipped += 1
            continue
        try:
            ok = _dump(ast.parse(new_src)) == _expected_tree(tree, node, edit)
        except SyntaxError:
            ok = False
        if not ok:
            print(f"warning: {module}:{line}: could not apply {edit.operator!r} by a text edit; skipped",
                  file=sys.stderr)
            continue
        new_lines = new_src.splitlines()
        end_line = line + edit.text.count("\n")
        mutated = "\n".join(new_lines[line - 1: end_line]) if new_lines else ""
        mutants.append(Mutant(module, line, edit.operator, src_lines[line - 1].strip(),
                              mutated.strip(), new_src))
    mutants.sort(key=lambda m: (m.line, m.operator))
    return mutants, skipped


# ---------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------


def _pytest_cmd(tests: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    try:
        import hypothesis  # noqa: F401

        cmd.append("--hypothesis-seed=0")  # the same examples for every mutant
    except ImportError:
        pass
    return cmd + tests


def _env(workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(workdir / "src"), *filter(None, [env.get("PYTHONPATH")])])
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a stale .pyc must never stand in for a mutant
    env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(workdir / "hypothesis")
    return env


def _make_workdir(base: Path, k: int) -> Path:
    w = base / f"w{k}"
    shutil.copytree(ROOT / "src", w / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
    return w


def _run(cmd: list[str], workdir: Path, timeout: float) -> tuple[str, float, str]:
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=_env(workdir), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - t0, ""
    status = {0: "survived", 1: "killed"}.get(proc.returncode, "killed" if proc.returncode != 5 else "error")
    return status, time.monotonic() - t0, proc.stdout


def run_mutant(m: Mutant, tests: list[str], workdir: Path, timeout: float) -> None:
    target = workdir / m.module
    original = (ROOT / m.module).read_text(encoding="utf-8")
    target.write_text(m.source, encoding="utf-8")
    try:
        m.status, m.seconds, _ = _run(_pytest_cmd(tests), workdir, timeout)
    finally:
        target.write_text(original, encoding="utf-8")


def _parse_lines(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)-(\d+)", text)
    if not m or int(m.group(1)) > int(m.group(2)):
        raise argparse.ArgumentTypeError(f"--lines must be A-B with A <= B, got {text!r}")
    return int(m.group(1)), int(m.group(2))


def _rel(path: str) -> str:
    p = Path(path)
    p = (p if p.is_absolute() else Path.cwd() / p).resolve()
    try:
        return p.relative_to(ROOT).as_posix()
    except ValueError:
        raise SystemExit(f"error: --module {path} is not inside the repository {ROOT}") from None


def _table(rows: list[list[str]]) -> str:
    head = ["module", "mutants", "killed", "survived", "timeout", "skipped"]
    allrows = [head, *rows]
    widths = [max(len(str(r[i])) for r in allrows) for i in range(len(head))]
    fmt = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([fmt(head), sep, *map(fmt, rows)])


def report(per_module: dict[str, tuple[list[Mutant], int]], lines: list[tuple[int, int]] | None) -> str:
    rows, survivors = [], []
    for mod, (muts, skipped) in per_module.items():
        count = lambda s, muts=muts: sum(m.status == s for m in muts)  # noqa: E731
        where = ", ".join(f"{a}-{b}" for a, b in lines or [])
        rows.append([mod + (f" (lines {where})" if lines else ""), len(muts),
                     count("killed"), count("survived"), count("timeout"), skipped])
        survivors += [m for m in muts if m.status == "survived"]
    out = [_table(rows), ""]
    if survivors:
        out.append(f"{len(survivors)} surviving mutant(s):")
        for m in survivors:
            out.append(f"- {m.module}:{m.line} [{m.operator}]\n    - `{m.original}`\n    + `{m.mutated}`")
    else:
        out.append("No surviving mutant.")
    errors = [m for muts, _ in per_module.values() for m in muts if m.status == "error"]
    for m in errors:
        out.append(f"error (no tests collected): {m.module}:{m.line} [{m.operator}]")
    return "\n".join(out)


def _write_doc(path: Path, text: str, argv: list[str], key: str) -> None:
    """Replace (or append) this run's block between the report markers of ``path``.

    Each block is keyed by the modules and line ranges of the run, so runs of
    different modules keep their own, latest, figures.
    """
    start, end = "<!-- mutation-report:start -->", "<!-- mutation-report:end -->"
    doc = path.read_text(encoding="utf-8")
    if start not in doc or end not in doc:
        raise SystemExit(f"error: --write-doc {path}: markers {start} / {end} not found")
    head, rest = doc.split(start, 1)
    body, tail = rest.split(end, 1)
    blocks = re.split(r"(?m)^(?=<!-- run: )", body.strip("\n"))
    blocks = [b.strip("\n") for b in blocks if b.strip() and not b.startswith(f"<!-- run: {key} -->")]
    cmd = " ".join(a for a in argv if not a.startswith("--write-doc") and a != str(path))
    blocks.append(f"<!-- run: {key} -->\n{time.strftime('%Y-%m-%d')}: "
                  f"`python tools/mutation.py {cmd}`\n\n{text}")
    blocks.sort()
    path.write_text(head + start + "\n" + "\n\n".join(blocks) + "\n" + end + tail, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", action="append", required=True, metavar="PATH",
                    help="module to mutate (repeatable), e.g. src/isoeat/stats/multitest.py")
    ap.add_argument("--tests", nargs="+", metavar="FILES",
                    help="test files to run for every mutant (default: the built-in TEST_MAP)")
    ap.add_argument("--lines", type=_parse_lines, action="append", metavar="A-B",
                    help="only mutants on lines A..B (repeatable: the union of the ranges)")
    ap.add_argument("--jobs", type=int, default=1, metavar="N", help="mutants run in parallel (default 1)")
    ap.add_argument("--max-mutants", type=int, metavar="N", help="at most N mutants per module (the first N)")
    ap.add_argument("--timeout", type=float, metavar="S",
                    help="per-mutant limit in seconds (default: 3 x baseline + 10)")
    ap.add_argument("--list", action="store_true", help="print the mutants and exit without running")
    ap.add_argument("--write-doc", type=Path, metavar="MD",
                    help="also write the report between the mutation-report markers of this file")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be >= 1")

    modules = [_rel(m) for m in args.module]
    found: dict[str, tuple[list[Mutant], int]] = {}
    for mod in modules:
        if not (ROOT / mod).is_file():
            ap.error(f"--module {mod}: no such file")
        muts, skipped = find_mutants(mod, args.lines)
        if args.max_mutants is not None:
            muts = muts[: args.max_mutants]
        found[mod] = (muts, skipped)
    if args.list:
        for mod, (muts, skipped) in found.items():
            print(f"{mod}: {len(muts)} mutants, {skipped} skipped by pragma")
            for m in muts:
                print(f"  {m.line:4d} {m.operator:<22} {m.original}\n       {'':<22} {m.mutated}")
        return 0

    selections: dict[str, list[str]] = {}
    for mod in modules:
        tests = args.tests or [t for t in TEST_MAP.get(mod, []) if (ROOT / t.split("::")[0]).is_file()]
        if not tests:
            ap.error(f"--module {mod}: no test files mapped; pass --tests")
        selections[mod] = tests

    with tempfile.TemporaryDirectory(prefix="isoeat-mutation-") as tmp:
        workdirs: queue.Queue[Path] = queue.Queue()
        for k in range(args.jobs):
            workdirs.put(_make_workdir(Path(tmp), k))
        timeouts: dict[str, float] = {}
        for sel in {tuple(s) for s in selections.values()}:
            w = workdirs.get()
            status, secs, output = _run(_pytest_cmd(list(sel)), w, timeout=3600)
            workdirs.put(w)
            if status != "survived":
                print(output[-4000:])
                print(f"error: baseline failed ({status}) for {' '.join(sel)}; fix it first", file=sys.stderr)
                return 2
            print(f"baseline ok in {secs:.1f}s: {' '.join(sel)}", flush=True)
            for mod, s in selections.items():
                if tuple(s) == sel:
                    timeouts[mod] = args.timeout or 3 * secs + 10

        jobs = [(m, selections[mod], timeouts[mod]) for mod, (muts, _) in found.items() for m in muts]
        total = len(jobs)

        def work(job):
            m, tests, limit = job
            w = workdirs.get()
            try:
                run_mutant(m, tests, w, limit)
            finally:
                workdirs.put(w)
            return m

        done = 0
        with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for m in pool.map(work, jobs):
                done += 1
                flag = "SURVIVED " if m.status == "survived" else ""
                print(f"[{done}/{total}] {m.status:<8} {m.seconds:5.1f}s {m.module}:{m.line} "
                      f"{m.operator} {flag}", flush=True)

    text = report(found, args.lines)
    print()
    print(text)
    if args.write_doc:
        key = " ".join(modules) + "".join(f" {a}-{b}" for a, b in args.lines or [])
        _write_doc(args.write_doc, text, argv, key)
    return 1 if any(m.status == "survived" for muts, _ in found.values() for m in muts) else 0


if __name__ == "__main__":
    sys.exit(main())
