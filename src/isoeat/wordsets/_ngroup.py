"""Tests of k >= 2 named target groups and m >= 2 named attribute sets (issue 42, item 4).

The layout (YAML or JSON; one test, a list, or ``tests: [...]`` as for two-group tests)::

    id: religion
    bias_type: Religion
    targets:                       # k >= 2 named groups, in this order
      christian: [church, bible, christian]
      muslim: [mosque, quran, muslim]
      jewish: [synagogue, torah, jewish]
    attributes:                    # m >= 2 named sets, in this order
      pleasant: [love, peace, joy]
      unpleasant: [hatred, war, agony]

A two-group file (``X``, ``Y``, ``A``, ``B``) is the same test with k = m = 2
(:meth:`NGroupTest.from_association_test`): its targets are X then Y, its
attributes A then B, each under its set's name. The two-group loader refuses a
k-group mapping with one line naming ``isoeat ngroup`` (``_loaders.ngroup_hint``).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import ConfigError, DataFormatError
from .._names import check_label, look_alike_key
from .._validate import check_path, suggest
from ._safe_load import safe_repr, safe_show
from ._spec import AssociationTest, WordSet

__all__ = [
    "NGroupTest",
    "NGROUP_KEYS",
    "ngroup_tests_from_mapping",
    "load_ngroup_tests",
    "as_ngroup_tests",
]

#: The keys of a k-group test mapping.
NGROUP_KEYS = frozenset({"id", "bias_type", "citation", "title", "provenance", "source", "targets", "attributes"})


def _check_groups(test_id: str, role: str, groups: tuple[WordSet, ...]) -> None:
    """At least two groups of at least one word each, names distinct, no word in two groups."""
    if len(groups) < 2:
        raise ConfigError(
            f"test {test_id!r}: {role}: {len(groups)} group(s); an n-group test needs at least 2 named {role} sets"
        )
    names: dict[str, str] = {}
    seen: dict[str, str] = {}
    for g in groups:
        if not isinstance(g, WordSet):
            raise ConfigError(f"test {test_id!r}: {role}: every group must be a WordSet, got {safe_show(g)}")
        if ";" in g.name:  # a CSV record lists the groups joined by ';' (isoeat._records): 'a;b' would be two
            raise ConfigError(
                f"test {test_id!r}: {role}: group name {safe_repr(g.name)} holds ';', which separates the group "
                "names in a CSV record; rename it"
            )
        key = look_alike_key(" ".join(g.name.split()))  # what a reader of the table sees: case, width, blanks
        if key in names:
            raise ConfigError(
                f"test {test_id!r}: {role}: two groups named {safe_repr(names[key])} and {safe_repr(g.name)}, "
                "which print alike (names must differ in more than case, width, blanks or invisible characters)"
            )
        names[key] = g.name
        for w in g.words:
            if w in seen:
                raise ConfigError(
                    f"test {test_id!r}: {role}: word {safe_repr(w)} is in group {seen[w]!r} and in "
                    f"group {g.name!r}; a word belongs to one group"
                )
            seen[w] = g.name


@dataclass(frozen=True)
class NGroupTest:
    """An association test of ``k >= 2`` named target groups and ``m >= 2`` named attribute sets.

    Parameters
    ----------
    id : str
        The test's id (labels tables and seed streams).
    bias_type : str
        Category, e.g. ``"Religion"``.
    targets : tuple of WordSet
        The target groups, in order (group ``i`` is paired with attribute set
        ``i`` by Generalized WEAT, which needs ``k == m``).
    attributes : tuple of WordSet
        The attribute sets, in order (RNSB needs exactly two: its first is the
        positive, its second the negative pole).
    citation, title, source : str
        As in :class:`~isoeat.wordsets.AssociationTest`.

    Examples
    --------
    >>> t = NGroupTest("r", "Religion", (WordSet("a", ("x1", "x2")), WordSet("b", ("y1", "y2")),
    ...     WordSet("c", ("z1", "z2"))), (WordSet("p", ("p1", "p2")), WordSet("q", ("q1", "q2"))))
    >>> t.k, t.m, t.group_names
    (3, 2, ('a', 'b', 'c'))
    """

    id: str
    bias_type: str
    targets: tuple[WordSet, ...]
    attributes: tuple[WordSet, ...]
    citation: str = ""
    title: str = ""
    provenance: tuple[str, ...] = ()
    source: str = "builtin"

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise ConfigError(f"test id must be a non-empty string, got {safe_show(self.id)}")
        check_label(self.id, "test id")
        object.__setattr__(self, "targets", tuple(self.targets))
        object.__setattr__(self, "attributes", tuple(self.attributes))
        object.__setattr__(self, "provenance", tuple(self.provenance))
        _check_groups(self.id, "targets", self.targets)
        _check_groups(self.id, "attributes", self.attributes)
        both = sorted({w for g in self.targets for w in g.words} & {w for g in self.attributes for w in g.words})
        if both:
            raise ConfigError(f"test {self.id!r}: word(s) both a target and an attribute: {safe_repr(both[:5])}")

    @property
    def k(self) -> int:
        """The number of target groups."""
        return len(self.targets)

    @property
    def m(self) -> int:
        """The number of attribute sets."""
        return len(self.attributes)

    @property
    def group_names(self) -> tuple[str, ...]:
        """The target groups' names, in order."""
        return tuple(g.name for g in self.targets)

    def sets(self) -> dict[str, WordSet]:
        """Every set keyed by a role that names it: ``target NAME`` and ``attribute NAME`` (file order)."""
        return {**{f"target {g.name}": g for g in self.targets}, **{f"attribute {a.name}": a for a in self.attributes}}

    @classmethod
    def from_association_test(cls, test: AssociationTest) -> NGroupTest:
        """A two-group test as k = m = 2: targets X, Y and attributes A, B under their sets' names."""

        def named(ws: WordSet, role: str, other: WordSet) -> WordSet:
            return ws if ws.name.casefold() != other.name.casefold() else WordSet(f"{ws.name} ({role})", ws.words)

        return cls(
            test.id,
            test.bias_type,
            (named(test.X, "X", test.Y), named(test.Y, "Y", test.X)),
            (named(test.A, "A", test.B), named(test.B, "B", test.A)),
            citation=test.citation,
            title=test.title,
            provenance=test.provenance,
            source=test.source,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "bias_type": self.bias_type,
            "title": self.title,
            "citation": self.citation,
            "targets": {g.name: list(g.words) for g in self.targets},
            "attributes": {a.name: list(a.words) for a in self.attributes},
            "provenance": list(self.provenance),
            "source": self.source,
        }


def _text(where: str, key: str, value: Any, default: str) -> str:
    if value is None:
        return default
    if not isinstance(value, str):
        raise DataFormatError(f"{where}: {key}: expected a string, got {safe_show(value)}")
    return value


def _groups(where: str, role: str, value: Any) -> tuple[WordSet, ...]:
    """``{name: [words], ...}`` in file order, each word a string in NFC."""
    if not isinstance(value, dict):
        raise DataFormatError(
            f"{where}: {role}: expected a mapping of named groups such as "
            f"{{christian: [church, bible], muslim: [mosque, quran]}}, got {safe_show(value)}"
        )
    out = []
    for name, words in value.items():
        label = f"{where}: {role} group {safe_repr(name)}"
        if not isinstance(name, str) or not name.strip():
            raise DataFormatError(f"{where}: {role}: a group name must be a non-empty string, got {safe_show(name)}")
        if not isinstance(words, list):
            raise DataFormatError(f"{label}: expected a list of words, got {safe_show(words)}")
        if not words:
            raise DataFormatError(f"{label} is empty")
        for i, w in enumerate(words):
            if not isinstance(w, str) or not w.strip():
                hint = " (write words such as 'null' in quotes)" if w is None else ""
                raise DataFormatError(f"{label}, item {i + 1}: expected a non-empty string, got {safe_show(w)}{hint}")
        try:
            out.append(WordSet(name, tuple(unicodedata.normalize("NFC", w.strip()) for w in words)))
        except ConfigError as exc:
            raise DataFormatError(f"{where}: {exc}") from None
    return tuple(out)


def _one(where: str, data: Any, default_id: str) -> NGroupTest:
    if not isinstance(data, dict):
        raise DataFormatError(
            f"{where}: expected a mapping with keys targets and attributes, got {type(data).__name__}"
        )
    if not {"targets", "attributes"} & set(data) and {"X", "Y", "A", "B"} <= set(data):
        from ._loaders import tests_from_mapping

        return NGroupTest.from_association_test(tests_from_mapping(data, where=where, default_id=default_id)[0])
    unknown = sorted(str(k) for k in data if k not in NGROUP_KEYS)
    if unknown:
        raise DataFormatError(
            f"{where}: unknown key(s) {safe_repr(unknown[:5])}{suggest(unknown[0], NGROUP_KEYS)}; "
            f"allowed: {sorted(NGROUP_KEYS)}"
        )
    missing = [k for k in ("targets", "attributes") if k not in data]
    if missing:
        raise DataFormatError(
            f"{where}: missing key(s) {', '.join(missing)}; an n-group test needs targets and "
            "attributes, each a mapping of named word lists"
        )
    test_id = _text(where, "id", data.get("id"), default_id)
    label = f"{where}: test {test_id!r}"
    provenance = data.get("provenance")
    provenance = [] if provenance is None else [provenance] if isinstance(provenance, str) else provenance
    if not isinstance(provenance, list):
        raise DataFormatError(
            f"{label}: provenance: expected a string or a list of strings, got {safe_show(provenance)}"
        )
    try:
        return NGroupTest(
            test_id,
            _text(label, "bias_type", data.get("bias_type"), "Custom"),
            _groups(label, "targets", data["targets"]),
            _groups(label, "attributes", data["attributes"]),
            citation=_text(label, "citation", data.get("citation"), ""),
            title=_text(label, "title", data.get("title"), ""),
            provenance=tuple(_text(label, f"provenance[{i}]", p, "") for i, p in enumerate(provenance)),
            source=where,
        )
    except ConfigError as exc:
        if isinstance(exc, DataFormatError):
            raise
        raise DataFormatError(f"{where}: {exc}") from None


def ngroup_tests_from_mapping(data: Any, *, where: str, default_id: str) -> list[NGroupTest]:
    """The n-group tests of a parsed document: one mapping, a list, or ``tests: [...]``; two-group ones as k = 2."""
    items: Any = data
    key = ""
    if isinstance(data, dict) and "tests" in data:
        if set(data) != {"tests"}:
            extra = sorted(str(k) for k in data if k != "tests")
            raise DataFormatError(f"{where}: unknown key(s) {safe_repr(extra[:5])} beside 'tests'")
        items, key = data["tests"], "tests"
    if not isinstance(items, list):
        return [_one(where, items, default_id)]
    if not items:
        raise DataFormatError(f"{where}: the list of tests is empty")
    out: list[NGroupTest] = []
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        t = _one(f"{where} ({key or 'item'}[{i}])", item, f"{default_id}-{i + 1}")
        j = first.setdefault(t.id.casefold(), i)
        if j != i:
            raise DataFormatError(
                f"{where} ({key or 'item'}[{i}]): test id {t.id!r} is also the id of item {j}; "
                "the ids of a file's tests must differ"
            )
        out.append(t)
    return out


def load_ngroup_tests(path: str | Path) -> list[NGroupTest]:
    """Read n-group tests (and two-group ones, as k = 2) from a YAML or JSON file.

    Raises
    ------
    DataFormatError
        The content is not a valid test: one line naming the file, the key, the group or the word.
    """
    from ._loaders import _parse, _read_text

    p = check_path("load_ngroup_tests: path", path)
    text = _read_text(p)
    if not text.strip():
        raise DataFormatError(f"{p}: file is empty")
    return ngroup_tests_from_mapping(_parse(p, text), where=str(p), default_id=p.stem)


def as_ngroup_tests(tests: Any) -> list[NGroupTest]:
    """The tests an argument names: an :class:`NGroupTest`, an ``AssociationTest``, a built-in id, a file path
    (every test of it), or a list of those."""
    from ._registry import TESTS, pick_test, split_file_id

    if isinstance(tests, (list, tuple)):
        out = [t for item in tests for t in as_ngroup_tests(item)]
        if not out:
            raise ConfigError("tests: give at least one test")
        return out
    if isinstance(tests, NGroupTest):
        return [tests]
    if isinstance(tests, AssociationTest):
        return [NGroupTest.from_association_test(tests)]
    if isinstance(tests, (str, Path)):
        text = str(tests)
        if isinstance(tests, str) and text in TESTS:
            return [NGroupTest.from_association_test(TESTS.get(text))]
        split = split_file_id(text) if not Path(text).exists() else None
        if split is not None:  # FILE:ID, one test of a file (the two-group spelling)
            return pick_test(split[0], load_ngroup_tests(split[0]), split[1])  # type: ignore[arg-type, return-value]
        if Path(text).exists() or Path(text).suffix.lower() in (".yaml", ".yml", ".json", ".jsonl"):
            return load_ngroup_tests(text)
        if isinstance(tests, str) and "," in text:
            return as_ngroup_tests([t.strip() for t in text.split(",") if t.strip()])
        return [NGroupTest.from_association_test(TESTS.get(text))]  # an unknown id: the registry's one line
    raise ConfigError(
        f"tests: expected an NGroupTest, an AssociationTest, a test id or a test file, got {type(tests).__name__}"
    )
