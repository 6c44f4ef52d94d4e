"""The house's layering and the one home of each rule, checked on the source (ast), imports inside functions too.

Package layers, from the ground up (a unit may import only units of a lower layer; the foundation modules of
layers 0-1 may also import each other, and ``tests/test_house.py`` keeps them free of cycles):

0. ``_errors``, ``_types``, ``_io``, ``_limits``, ``_resources``
1. ``_validate``, ``_textio``, ``_progress``, ``_records``, ``_names``, ``_random``, ``_registry``, ``_cosine``, ``_surface``,
   ``labels``, ``_env``
2. ``wordsets``, ``corpora``, ``calibration``
3. ``backends``
4. ``stats`` (never ``backends``: the statistics take any encoder)
5. ``diagnostics``, ``metrics``, ``similarity``, ``distributed``
6. ``reporting`` (records in, text and figures out: it knows nothing of how they were computed)
7. ``experiments`` (the engine: it may write reports, reporting never runs it)
8. ``cliopts`` (the one option table), 9. ``cliargs``, 10. ``commands``, 11. ``cli``

Then the rules that once had several homes, each allowed in its home only (docs/ARCHITECTURE.md, "One home per
rule"): significance (``p < alpha``) and the sign-reversal product in ``labels``, seeds spawned in ``_random``,
canonical JSON in ``_records``, file-name slugs in ``_names``, unit rows (division by a row norm) in ``_cosine``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import isoeat

PKG = Path(isoeat.__file__).parent

LEVELS = {
    "_errors": 0, "_types": 0, "_io": 0, "_limits": 0, "_resources": 0,
    "_validate": 1, "_textio": 1, "_progress": 1, "_records": 1, "_names": 1, "_random": 1, "_registry": 1,
    "_cosine": 1, "labels": 1, "_version": 1, "_env": 1, "_surface": 1,
    "wordsets": 2, "corpora": 2, "calibration": 2,
    "backends": 3,
    "stats": 4,
    "diagnostics": 5, "metrics": 5, "similarity": 5, "distributed": 5,
    "reporting": 6,
    "experiments": 7,
    "cliopts": 8,
    "cliargs": 9,
    "commands": 10,
    "cli": 11,
}
FOUNDATION = 1  # units of this layer and below may import each other (no cycles: test_house.py)
NEVER = {("stats", "backends"), ("backends", "stats")}


def _modules():
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(PKG)
        if rel.name == "__init__.py":
            continue  # the curated, lazy public faces: not part of the data flow
        yield rel, ast.parse(f.read_text(encoding="utf-8"))


def _unit(rel: Path) -> str:
    return rel.parts[0].removesuffix(".py")


def _imports(rel: Path, tree: ast.AST):
    pkg = ["isoeat", *rel.parts[:-1]]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - node.level + 1] + ([node.module] if node.module else [])
                names = [".".join(base)] if node.module else [".".join(base + [a.name]) for a in node.names]
            else:
                names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "isoeat" and len(parts) > 1:
                yield node.lineno, parts[1]


def test_every_unit_has_a_layer():
    units = {_unit(rel) for rel, _ in _modules()}
    assert units <= set(LEVELS), f"give these a layer here and in docs/ARCHITECTURE.md: {sorted(units - set(LEVELS))}"


def test_imports_run_down_the_layers():
    bad = []
    for rel, tree in _modules():
        a = _unit(rel)
        for line, b in _imports(rel, tree):
            if b == a or b not in LEVELS:
                continue
            same_foundation = LEVELS[a] == LEVELS[b] <= FOUNDATION
            if (a, b) in NEVER or not (LEVELS[b] < LEVELS[a] or same_foundation):
                bad.append(f"{rel}:{line}: {a} (layer {LEVELS[a]}) imports {b} (layer {LEVELS[b]})")
    assert not bad, "\n".join(bad)


# --------------------------------------------------------------------------- one home per rule
def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _significance(node: ast.AST) -> bool:
    """``x < alpha`` (a p-value against a level) with a non-constant left side."""
    if not isinstance(node, ast.Compare):
        return False
    left = node.left
    for op, right in zip(node.ops, node.comparators):
        if isinstance(op, ast.Lt) and _name(right).endswith("alpha") and not isinstance(left, ast.Constant):
            return True
        left = right
    return False


def _sign_product(node: ast.AST) -> bool:
    """``a * b < 0``: the sign-reversal rule written out."""
    return (isinstance(node, ast.Compare) and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Mult)
            and len(node.ops) == 1 and isinstance(node.ops[0], ast.Lt)
            and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value == 0)


def _spawn(node: ast.AST) -> bool:
    """A seed spawned or a SeedSequence built by hand."""
    return isinstance(node, ast.Call) and _name(node.func) in ("spawn", "SeedSequence")


def _canonical_json(node: ast.AST) -> bool:
    """``json.dumps(..., sort_keys=True)``: a canonical form of its own."""
    return (isinstance(node, ast.Call) and _name(node.func) == "dumps"
            and any(k.arg == "sort_keys" for k in node.keywords))


def _slug(node: ast.AST) -> bool:
    """``re.sub(r"[^A-Za-z0-9...]", ...)``: a file-name scheme of its own."""
    return (isinstance(node, ast.Call) and _name(node.func) == "sub" and node.args
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
            and "A-Za-z0-9" in node.args[0].value)


def _unit_rows(node: ast.AST) -> bool:
    """``M / np.linalg.norm(M, axis=1, ...)``: unit rows of its own."""
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Call)
            and _name(node.right.func) == "norm" and any(k.arg == "axis" for k in node.right.keywords))


RULES = {
    # stats/_montecarlo.py: the sequential stopping rule compares an interval on p with the level, not p itself
    "significance (p < alpha)": (_significance, {"labels.py", "stats/_montecarlo.py"}),
    "the sign-reversal product": (_sign_product, {"labels.py"}),
    "seeds spawned by hand": (_spawn, {"_random.py"}),
    "canonical JSON": (_canonical_json, {"_records.py"}),
    "file-name slugs": (_slug, {"_names.py"}),
    "unit rows": (_unit_rows, {"_cosine.py"}),
}


@pytest.mark.parametrize("rule", list(RULES))
def test_each_rule_lives_in_its_home_only(rule):
    found, homes = RULES[rule]
    hits = [f"{rel}:{node.lineno}" for rel, tree in _modules() if str(rel) not in homes
            for node in ast.walk(tree) if found(node)]
    assert not hits, f"{rule} outside {', '.join(sorted(homes))}: " + ", ".join(hits)


@pytest.mark.parametrize("rule, source", [
    ("significance (p < alpha)", "sig = p < alpha"),
    ("significance (p < alpha)", "x = r.p_value < self.alpha"),
    ("the sign-reversal product", "rev = d_raw * d_cal < 0"),
    ("seeds spawned by hand", "c = np.random.SeedSequence(0).spawn(4)"),
    ("canonical JSON", "h = json.dumps(x, sort_keys=True)"),
    ("file-name slugs", "s = re.sub(r'[^A-Za-z0-9._-]+', '_', label)"),
    ("unit rows", "U = M / np.linalg.norm(M, axis=1, keepdims=True)"),
])
def test_the_rule_checks_can_fail(rule, source):
    found, _ = RULES[rule]
    assert any(found(node) for node in ast.walk(ast.parse(source)))


def test_the_rule_checks_leave_other_code_alone():
    for source in ("ok = 0.0 < alpha < 1.0", "n = json.dumps(x)", "r = a * b", "v = x / np.linalg.norm(x)"):
        assert not any(found(node) for found, _ in RULES.values() for node in ast.walk(ast.parse(source))), source
