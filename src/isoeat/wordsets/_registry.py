"""Registry of association tests: the built-in W1..W10 and user additions."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path

from .._errors import ConfigError
from .._registry import Registry
from ._loaders import load_tests_from_file
from ._spec import AssociationTest, WordSet

__all__ = ["get_test", "list_tests", "register_test", "resolve_tests", "builtin_metadata", "TESTS"]

@lru_cache(maxsize=1)
def builtin_metadata() -> dict:
    """The parsed ``weat.json`` data file (citation, notes, per-test provenance)."""
    text = resources.files("isoeat.wordsets").joinpath("data/weat.json").read_text("utf-8")
    return json.loads(text)


@lru_cache(maxsize=1)
def _builtin() -> dict[str, AssociationTest]:
    data = builtin_metadata()
    out: dict[str, AssociationTest] = {}
    for t in data["tests"]:
        prov = list(t.get("provenance", [])) + [f"difference: {d}" for d in t.get("differences", [])]
        out[t["id"]] = AssociationTest(
            id=t["id"],
            bias_type=t["bias_type"],
            title=t.get("title", ""),
            citation=t.get("citation", data.get("citation", "")),
            X=WordSet(t["X"]["name"], tuple(t["X"]["words"])),
            Y=WordSet(t["Y"]["name"], tuple(t["Y"]["words"])),
            A=WordSet(t["A"]["name"], tuple(t["A"]["words"])),
            B=WordSet(t["B"]["name"], tuple(t["B"]["words"])),
            provenance=tuple(prov),
            source="builtin",
        )
    return out


def _load_builtin(reg: Registry[AssociationTest]) -> None:
    for test_id, test in _builtin().items():
        reg.register(test_id, test)


#: Every registered test: the built-in W1..W10 (read at first use), then user tests. Ids are case-insensitive.
TESTS: Registry[AssociationTest] = Registry(
    "test id", fold_case=True, cutoff=0.4, also="or give a YAML/JSON file path", loader=_load_builtin
)


def get_test(test_id: str) -> AssociationTest:
    """Return a registered test by id (case-insensitive).

    Parameters
    ----------
    test_id : str
        ``"W1"`` .. ``"W10"`` or the id of a test added with :func:`register_test`.

    Raises
    ------
    UnknownNameError
        No such id; the message lists close matches.

    Examples
    --------
    >>> get_test("W6").sizes
    (8, 8, 8, 8)
    """
    return TESTS.get(test_id)


def list_tests() -> tuple[AssociationTest, ...]:
    """All registered tests: the built-in ones in order W1..W10, then user tests."""
    return tuple(TESTS.values())


def register_test(test: AssociationTest) -> AssociationTest:
    """Add a user test to the registry; duplicate ids (in any case) are refused."""
    if not isinstance(test, AssociationTest):
        raise ConfigError(f"register_test expects an AssociationTest, got {type(test).__name__}")
    return TESTS.register(test.id, test)


def resolve_tests(specs: str | Iterable[str] | None) -> list[AssociationTest]:
    """Turn ``"W1,W2"``, a list of ids, or file paths into tests.

    An item that names an existing file (or ends in .json/.jsonl/.yaml/.yml)
    is read as a file; anything else is looked up as an id. ``None`` gives all
    built-in tests.
    """
    if specs is None:
        return list(_builtin().values())
    if isinstance(specs, str):
        specs = [s for s in (part.strip() for part in specs.split(",")) if s]
    out: list[AssociationTest] = []
    for spec in specs:
        p = Path(spec)
        if p.suffix.lower() in {".json", ".jsonl", ".yaml", ".yml"} or p.exists():
            out.extend(load_tests_from_file(p))
        else:
            out.append(get_test(spec))
    if not out:
        raise ConfigError("no tests selected (parameter 'tests' is empty)")
    ids = [t.id for t in out]
    dups = sorted({i for i in ids if ids.count(i) > 1})
    if dups:
        raise ConfigError(f"test id(s) selected more than once: {', '.join(dups)}")
    return out
