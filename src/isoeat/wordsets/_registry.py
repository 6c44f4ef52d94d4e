"""Registry of association tests: the built-in W1..W10 and user additions."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from .._errors import ConfigError, DataFormatError, InvalidValueError, UnknownNameError
from .._names import check_distinct, look_alike_key
from .._registry import Registry
from .._validate import show, suggest
from ._library import library_tests
from ._loaders import load_tests_from_file as _read_tests_file
from ._spec import AssociationTest, WordSet

__all__ = ["get_test", "list_tests", "register_test", "resolve_tests", "as_test", "as_tests", "builtin_metadata",
           "TESTS", "split_file_id", "pick_test", "check_own_ids", "load_tests_from_file"]

#: The suffixes of a test file: a string ending in one is read as a file (:func:`as_test`, :func:`resolve_tests`).
TEST_FILE_SUFFIXES = frozenset({".json", ".jsonl", ".yaml", ".yml"})
#: What an argument that names a test may be (the one sentence of every refusal).
TEST_FORMS = "an AssociationTest, a test id such as 'W6', or the path of a YAML/JSON test file"

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
            reference=f"{data['library']['reference']}, {t['id']}",
            lists_from=data["library"]["lists_from"],
            licence=data["library"]["licence"],
        )
    return out


def _load_builtin(reg: Registry[AssociationTest]) -> None:
    for test_id, test in {**_builtin(), **library_tests()}.items():  # W1..W10, then the library (_library.py)
        reg.register(test_id, test)


#: Every registered test: W1..W10 and the library (read at first use), then user tests. Ids are case-insensitive.
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
        No such id; the message lists close matches (a file path is pointed to
        :func:`~isoeat.load_tests_from_file`; the id is shown cut to 60 characters).

    Examples
    --------
    >>> get_test("W6").sizes
    (8, 8, 8, 8)
    """
    if not isinstance(test_id, str):
        raise InvalidValueError("test_id", "a test id (a string) such as 'W6'", show(test_id))
    found = TESTS.resolve(test_id)
    if found is not None:
        return TESTS[found]
    if _is_file_spec(test_id):
        raise UnknownNameError(f"get_test looks up registered test ids; {show(test_id)} is a file: read it with "
                               f"isoeat.load_tests_from_file({show(test_id)}), or pass the path where a test goes "
                               "(isoeat.weat(model, PATH))")
    raise TESTS.unknown(test_id, what=f"unknown test id {show(test_id)}")


def _is_file_spec(spec: Any) -> bool:
    """A string or path that names a test file: a test-file suffix, or an existing path."""
    if isinstance(spec, os.PathLike):
        return True
    p = Path(spec)
    try:
        return p.suffix.lower() in TEST_FILE_SUFFIXES or p.exists()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte: no file
        return False


def split_file_id(spec: Any) -> tuple[str, str] | None:
    """``(FILE, ID)`` when ``spec`` is written ``FILE:ID`` with a test-file suffix before the colon, else ``None``.

    Only the spelling is read (a config resolves FILE against its own folder); see :func:`_file_and_id`.

    Examples
    --------
    >>> split_file_id("my_tests.yaml:career")
    ('my_tests.yaml', 'career')
    >>> split_file_id("W6") is None
    True
    """
    if not isinstance(spec, str) or ":" not in spec:
        return None
    path, test_id = spec.rsplit(":", 1)
    return (path, test_id.strip()) if test_id.strip() and Path(path).suffix.lower() in TEST_FILE_SUFFIXES else None


def _existing_file_spec(spec: str) -> bool:
    """``spec`` names an existing path, or is ``FILE:ID`` of an existing FILE."""
    pair = _file_and_id(spec)
    try:
        return Path(pair[0] if pair else spec).exists()
    except (OSError, ValueError):
        return False


def _file_and_id(spec: Any) -> tuple[str, str] | None:
    """``(FILE, ID)`` of a ``FILE:ID`` spec (one test of a test file), else ``None``.

    A spec that is a file itself (``C:/tests/t.yaml``, or a file with a colon in its name) is no ``FILE:ID``; FILE
    has a test-file suffix or exists.
    """
    if not isinstance(spec, str) or ":" not in spec or _is_file_spec(spec):
        return None
    path, test_id = spec.rsplit(":", 1)
    return (path, test_id.strip()) if test_id.strip() and _is_file_spec(path) else None


def pick_test(path: Any, tests: list[AssociationTest], test_id: str) -> list[AssociationTest]:
    """The one test of ``tests`` (read from ``path``) whose id is ``test_id``, case-insensitively, as a list.

    An id the file lacks is one line naming the file, its ids and the closest one.
    """
    chosen = [t for t in tests if t.id.casefold() == test_id.casefold()]
    if chosen:
        return chosen
    ids = [t.id for t in tests]
    shown = ", ".join(ids[:10]) + (f", ... ({len(ids)} in all)" if len(ids) > 10 else "")
    raise UnknownNameError(f"{path}: no test with id {show(test_id)} in this file (it holds {shown})"
                           f"{suggest(test_id, ids, fold_case=True, quote=False)}")


def _file_tests(spec: Any) -> list[AssociationTest]:
    """The tests a file spec names: every test of ``FILE``, or the one test ``ID`` of ``FILE:ID``."""
    split = _file_and_id(spec)
    if split is None:
        return load_tests_from_file(os.fspath(spec))
    path, test_id = split
    return pick_test(path, load_tests_from_file(path), test_id)


def as_test(test: Any, *, argument: str = "test") -> AssociationTest:
    """The one test an argument names: an :class:`AssociationTest`, a registered id, or a test file's path.

    A file must hold exactly one test (a file of several is for functions that
    take ``tests``); a path that does not exist is an
    :class:`~isoeat.IsoeatFileNotFoundError`; anything else (``None``, a number,
    a dict) is an :class:`~isoeat.InvalidValueError` naming ``argument``.

    Examples
    --------
    >>> as_test("w6").id
    'W6'
    >>> as_test(123)
    Traceback (most recent call last):
    ...
    isoeat._errors.InvalidValueError: test must be an AssociationTest, a test id such as 'W6', or the path of a \
YAML/JSON test file, got 123 (int)
    """
    if isinstance(test, AssociationTest):
        check_own_ids([test], argument=argument)  # a hand-built "W6" with other lists would print as the built-in
        return test
    if (isinstance(test, str) and TESTS.resolve(test) is not None
            and Path(test).suffix.lower() not in TEST_FILE_SUFFIXES):
        return get_test(test)  # a registered id wins over a folder or file of that name in the working directory
    if isinstance(test, (str, os.PathLike)) and (_is_file_spec(test) or _file_and_id(test)):
        tests = _file_tests(test)
        if len(tests) != 1:
            raise ConfigError(f"{argument}: {test} holds {len(tests)} tests ({', '.join(t.id for t in tests[:5])}"
                              f"{', ...' if len(tests) > 5 else ''}); name one as FILE:ID ('{test}:{tests[0].id}'), "
                              "or pass the file as tests= to a function that takes several "
                              "(isoeat.compare_calibration, isoeat.metrics)")
        return tests[0]
    if isinstance(test, str):
        return get_test(test)
    hint = ("; a mapping is no test: build one with isoeat.AssociationTest(...) or write it to a YAML file"
            if isinstance(test, dict) else "")
    if type(test).__name__ == "NGroupTest":  # a test of named groups: its own function
        hint = "; a test of named groups (NGroupTest) is measured by isoeat.ngroup (the command: isoeat ngroup)"
    raise InvalidValueError(argument, TEST_FORMS, show(test), hint)


def as_tests(tests: Any, *, argument: str = "tests") -> list[AssociationTest]:
    """The tests an argument names: None (the ten built-in WEATs), one test, ``"W1,W6"``, or a sequence of
    tests, ids and file paths (a file gives all its tests); an id named twice is refused.

    Examples
    --------
    >>> [t.id for t in as_tests("W1, w6")]
    ['W1', 'W6']
    """
    if tests is None or isinstance(tests, str):
        return resolve_tests(tests)
    if isinstance(tests, (AssociationTest, os.PathLike)):
        tests = [tests]
    if not isinstance(tests, (list, tuple)):
        raise InvalidValueError(argument, f"None, or a list of tests, each {TEST_FORMS}", show(tests))
    out: list[AssociationTest] = []
    for i, t in enumerate(tests):
        if isinstance(t, (str, os.PathLike)) and (_is_file_spec(t) or _file_and_id(t)):
            out.extend(_file_tests(t))
        else:
            out.append(as_test(t, argument=f"{argument}[{i}]"))
    if not out:
        raise ConfigError(f"{argument}: no tests given")
    ids = [t.id for t in out]
    dups = sorted(i for i, n in Counter(ids).items() if n > 1)  # linear: a file may hold thousands of tests
    if dups:
        raise ConfigError(f"{argument}: test id(s) given more than once: {', '.join(dups)}")
    return out


def _lists_differ(test: AssociationTest, known: AssociationTest, mine: str = "this file's") -> str:
    """How ``test``'s lists differ from ``known``'s (``""``: the same words in the same order, the same pairs)."""
    for role, ws in test.sets().items():
        theirs = known.sets()[role].words
        if ws.words == theirs:
            continue
        gone = [w for w in theirs if w not in ws.words]
        new = [w for w in ws.words if w not in theirs]
        if not gone and not new:
            return f"{role}: the same words in another order"
        parts = ([f"{show(gone[0])} not in {mine}"] if gone else []) + ([f"{show(new[0])} not in {known.id}'s"]
                                                                             if new else [])
        return f"{role}: {' and '.join(parts)}"
    return "" if test.pairs == known.pairs else "pairs differ"


def check_own_ids(tests: Iterable[AssociationTest], *, argument: str | None = None) -> None:
    """Refuse a test read from a file whose id is a registered test's (in any case, or only looking alike:
    :func:`isoeat._names.look_alike_key`) while its lists differ: its results would be printed under the
    built-in's name. The same lists (a built-in written out by ``isoeat tests --format yaml``) keep the id.
    ``argument``: the tests are Python objects given as this argument (``test``, ``tests[1]``), not a file's;
    the built-in's own :meth:`AssociationTest.swapped_targets` passes there (d negated, as asked).

    Raises
    ------
    DataFormatError
        One line naming the file, the id, the registered test and the first difference.
    ConfigError
        The same, naming ``argument``, for a test built in Python.
    """
    known = {look_alike_key(t.id): t for t in TESTS.values()}
    for test in tests:
        reg = known.get(look_alike_key(test.id))
        if reg is None or reg is test:
            continue
        diff = _lists_differ(test, reg, "this test's" if argument else "this file's")
        if diff and argument and not _lists_differ(test, reg.swapped_targets()):
            continue  # AssociationTest.swapped_targets() of the built-in: the API's own (d negated), kept
        if diff:
            kind = "built-in test" if reg.source == "builtin" else "registered test"
            raise (ConfigError if argument else DataFormatError)(
                f"{argument or test.source}: test id {show(test.id)} names the {kind} {reg.id} "
                f"({reg.reference or reg.title or reg.source}), whose lists differ ({diff}); "
                f"its results would be printed as {reg.id}'s: give the test an id of its own")


def load_tests_from_file(path: str | Path) -> list[AssociationTest]:
    """Read one or more association tests from a YAML or JSON file.

    Parameters
    ----------
    path : str or Path
        A ``.yaml``/``.yml``/``.json`` file in isoeat's format, a sent-bias ``.jsonl``/``.json`` file, or
        WEATHub rows (one JSON row, a list, or a ``.jsonl`` file of one row a line).

    Returns
    -------
    list of AssociationTest

    Raises
    ------
    IsoeatFileNotFoundError
        The file does not exist or cannot be read.
    DataFormatError
        The content is not a valid test (the message names file, line or key), or a test takes the id of a
        built-in (or registered) test, in any case or only looking alike, with lists of its own
        (:func:`check_own_ids`).
    """
    tests = _read_tests_file(path)
    check_own_ids(tests)  # a file's "W6" with lists of its own would print as the built-in W6
    return tests


def list_tests() -> tuple[AssociationTest, ...]:
    """All registered tests: W1..W10, the library's composed tests (docs/library.md), then user tests."""
    return tuple(TESTS.values())


def register_test(test: AssociationTest) -> AssociationTest:
    """Add a user test to the registry; duplicate ids (in any case) are refused."""
    if not isinstance(test, AssociationTest):
        raise ConfigError(f"register_test expects an AssociationTest, got {type(test).__name__}")
    return TESTS.register(test.id, test)


def resolve_tests(specs: str | Iterable[str] | None) -> list[AssociationTest]:
    """Turn ``"W1,W2"``, a list of ids, or file paths into tests.

    An item that names an existing file (or ends in .json/.jsonl/.yaml/.yml)
    is read as a file (all its tests); ``FILE:ID`` is the one test ``ID`` of
    the file; anything else is looked up as an id. ``None`` gives the ten
    built-in WEATs W1..W10 (the default battery; the library's tests are
    measured when named).
    """
    if specs is None:
        return list(_builtin().values())
    split = False
    if isinstance(specs, str):
        if "," in specs and _existing_file_spec(specs.strip()):  # a path with a comma: whole, where it exists
            specs = [specs.strip()]
        else:
            split = "," in specs
            specs = [s for s in (part.strip() for part in specs.split(",")) if s]
    out: list[AssociationTest] = []
    for spec in specs:
        if _is_file_spec(spec) or _file_and_id(spec):
            out.extend(_file_tests(spec))
            continue
        try:
            out.append(get_test(spec))
        except UnknownNameError as exc:
            if not split:
                raise
            raise UnknownNameError(f"{exc}; the list was split at its commas (a path with a comma is taken whole "
                                   "only where it exists)") from None
    if not out:
        raise ConfigError("no tests selected (parameter 'tests' is empty)")
    ids = [t.id for t in out]
    dups = sorted(i for i, n in Counter(ids).items() if n > 1)  # linear: a file may hold thousands of tests
    if dups:
        raise ConfigError(f"test id(s) selected more than once: {', '.join(dups)}")
    check_distinct(ids, "test ids")  # ids that only look alike (Unicode form, invisible characters, case): one row
    return out
