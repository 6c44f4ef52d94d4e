"""The bad-input catalogue: every case list (``*CASES``) of the ``test_bad_input_*.py`` files, counted.

The count is machine-independent (it counts declared cases, not collected or
passed tests), printed at the end of every test run and quoted in the README.
"""

from __future__ import annotations

import ast
from pathlib import Path

HERE = Path(__file__).resolve().parent


def catalogue() -> dict[str, list[str]]:
    """File name -> the case names it declares (first element of each case tuple), read with ``ast``."""
    out: dict[str, list[str]] = {}
    for f in sorted(HERE.glob("test_bad_input_*.py")):
        names: list[str] = []
        for node in ast.parse(f.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.endswith("CASES")
                                                    for t in node.targets):
                value = node.value
                if isinstance(value, (ast.List, ast.Tuple)):
                    for el in value.elts:
                        if isinstance(el, (ast.Tuple, ast.List)) and el.elts and isinstance(el.elts[0], ast.Constant):
                            names.append(str(el.elts[0].value))
                        elif isinstance(el, ast.Call) and el.args and isinstance(el.args[0], ast.Constant):
                            names.append(str(el.args[0].value))  # pytest.param("name", ...)
        out[f.name] = names
    return out


def size() -> int:
    return sum(len(v) for v in catalogue().values())
