"""Read user-defined association tests from YAML or JSON files.

Two layouts are accepted:

* isoeat's own: a mapping with ``id``, ``bias_type`` and the four sets ``X``,
  ``Y``, ``A``, ``B`` (each ``{"name": ..., "words": [...]}`` or a bare list),
  optionally ``citation``, ``title``, ``provenance``, the library's provenance
  fields ``reference``, ``lists_from``, ``licence`` and ``composed``, and ``pairs`` (defining
  pairs of the word-pair metrics: ``[[she, he], [woman, man]]``); several
  tests are a list of such mappings, or ``{"tests": [<such mappings>]}``.
  ``isoeat tests --template`` prints a commented example and
  ``isoeat tests --format json|yaml`` writes this layout (:mod:`._format`);
  a ``source`` key (written by earlier versions of ``isoeat tests --format
  json``) is read and ignored: a test's source is the file it is read from.
* the sent-bias format of May et al. (2019):
  ``{"targ1": {"category": ..., "examples": [...]}, "targ2": ..., "attr1": ...,
  "attr2": ...}`` (their files end in ``.jsonl`` but hold one JSON object).
  The test id is the file's stem. sent-bias's own files are CC BY-NC 4.0 (non-commercial only; never
  bundled): read them from your copy. WEATHub's GitHub files are in this layout too (GPL-3.0, never bundled).
* WEATHub rows (Mukherjee et al. 2023; the Hugging Face release, CC BY 4.0), one JSON row or a list, or a
  ``.jsonl`` file of one row a line: :mod:`._weathub`. The library's pages: ``docs/library.md``.
"""

from __future__ import annotations

import json
import unicodedata
import warnings
from pathlib import Path
from typing import Any

from .._errors import ConfigError, DataFormatError, IsoeatWarning
from .._names import check_label
from .._validate import check_path, suggest
from ._safe_load import SafeLoadError, load_json, load_yaml, read_regular_text, safe_repr, safe_show
from ._spec import LIBRARY_FIELDS, AssociationTest, WordSet, pair_conflict
from ._weathub import is_weathub, json_lines, weathub_tests

__all__ = ["load_tests_from_file", "tests_from_mapping"]

_SENT_BIAS_KEYS = {"targ1": "X", "targ2": "Y", "attr1": "A", "attr2": "B"}
#: The keys each mapping of a test file may hold (anything else is refused with a did-you-mean).
_ISOEAT_KEYS = frozenset({"id", "bias_type", "citation", "title", "provenance", "pairs", "source",
                          "X", "Y", "A", "B", *LIBRARY_FIELDS})
_SENT_BIAS_TOP = frozenset({*_SENT_BIAS_KEYS, "bias_type"})
_LIST_KEYS = frozenset({"tests"})
_SET_KEYS = frozenset({"name", "words", "category", "examples"})


def _known_keys(where: str, data: dict, allowed: frozenset[str]) -> None:
    """Refuse keys outside ``allowed``: one line naming the file, the key(s), the closest allowed key and the rest."""
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        shown = safe_repr(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise DataFormatError(f"{where}: unknown key(s) {shown}{suggest(unknown[0], allowed)}; "
                              f"allowed: {sorted(allowed)}")


def ngroup_hint(where: str) -> str:
    """The one line a two-group reader says about a k-group mapping (``targets:``/``attributes:``)."""
    return (
        f"{where}: a test with named groups (targets:/attributes:) is an n-group test; run it with "
        "'isoeat ngroup --tests FILE' (Python: isoeat.ngroup), not with a two-group command"
    )


def _test_id(where: str, value: Any, default: str) -> str:
    """The test's id: text without control characters or bidi overrides (it labels tables and files)."""
    test_id = _text(where, "id", value, default)
    try:
        check_label(test_id, "test id")
    except ConfigError as exc:
        raise DataFormatError(f"{where}: {exc}") from None
    return test_id


def _read_text(path: Path) -> str:
    try:
        return read_regular_text(path)
    except SafeLoadError as exc:
        raise DataFormatError(f"{path}:{exc.line}: {exc}") from None


def _refused(path: Path, exc: SafeLoadError) -> DataFormatError:
    return DataFormatError(f"{path}{'' if exc.line is None else f':{exc.line}'}: {exc}")


def _yaml(path: Path, text: str) -> Any:
    import yaml

    try:
        return load_yaml(text)
    except SafeLoadError as exc:
        raise _refused(path, exc) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise DataFormatError(f"{path}{where}: invalid YAML ({problem})") from None


def _parse(path: Path, text: str) -> Any:
    suffix = path.suffix.lower()
    if suffix in {".csv", ".tsv"} or text.startswith("id,bias_type,"):  # `isoeat tests --format csv`: no words
        raise DataFormatError(f"{path}: a CSV listing is no test file: `isoeat tests --format csv` "
                              "lists the tests' names, sizes and provenance, with no words; write them with "
                              "--format yaml (or json) to read them back")
    if suffix in {".yaml", ".yml"}:
        return _yaml(path, text)
    try:
        return load_json(text)
    except SafeLoadError as exc:
        raise _refused(path, exc) from None
    except json.JSONDecodeError as exc:
        if suffix == ".jsonl" and exc.msg == "Extra data":  # JSON lines: one value a line (WEATHub rows exported)
            return json_lines(path, text)
        if suffix in {".json", ".jsonl"}:
            raise DataFormatError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
        try:  # files without a known suffix: try YAML after JSON
            return _yaml(path, text)
        except DataFormatError as yexc:
            if "invalid YAML" not in str(yexc):
                raise
            raise DataFormatError(
                f"{path}:{exc.lineno}: neither valid JSON ({exc.msg}) nor valid YAML"
            ) from None


def _text(where: str, key: str, value: Any, default: str) -> str:
    """A metadata field (id, bias_type, citation, title): text, or ``default`` when absent or null."""
    if value is None:
        return default
    if not isinstance(value, str):
        raise DataFormatError(f"{where}: {key}: expected a string, got {safe_show(value)}")
    return str(value)


def _nfc(words: list[str], changed: list[str]) -> tuple[str, ...]:
    out = []
    for w in words:
        w = w.strip()
        n = unicodedata.normalize("NFC", w)
        if n != w:
            changed.append(n)
        out.append(n)
    return tuple(out)


def _word_set(where: str, role: str, value: Any, default_name: str, changed: list[str]) -> WordSet:
    if isinstance(value, dict):
        _known_keys(f"{where}: set {role!r}", value, _SET_KEYS)
        if "words" in value and "examples" in value:
            raise DataFormatError(f"{where}: set {role!r}: give 'words' or 'examples', not both")
        name = value.get("name", value.get("category", default_name))
        words = value.get("words", value.get("examples"))
        if words is None:
            raise DataFormatError(f"{where}: set {role!r} has no 'words' list")
    else:
        name, words = default_name, value
    name = _text(where, f"set {role!r} name", name, default_name)
    if not isinstance(words, list):
        raise DataFormatError(f"{where}: set {role!r}: 'words' must be a list, got {type(words).__name__}")
    if not words:
        raise DataFormatError(f"{where}: set {role!r} ({name}) is empty")
    for i, w in enumerate(words):
        if not isinstance(w, str):
            hint = " (write words such as 'null' in quotes)" if w is None else ""
            raise DataFormatError(
                f"{where}: set {role!r} ({name}), item {i + 1}: expected a string, got {safe_show(w)}{hint}"
            )
    try:
        return WordSet(name, _nfc(words, changed))
    except Exception as exc:  # ConfigError from WordSet validation
        raise DataFormatError(f"{where}: {exc}") from None


def _sets(where: str, data: dict, keys: dict[str, str]) -> tuple[dict[str, WordSet], list[str]]:
    """The four sets (``keys``: file key -> role) and the words that NFC normalisation changed."""
    changed: list[str] = []
    sets = {role: _word_set(where, key, data[key], key, changed) for key, role in keys.items()}
    return sets, changed


def _nfc_note(where: str, changed: list[str]) -> tuple[str, ...]:
    if not changed:
        return ()
    shown = ", ".join(changed[:5]) + (f", ... ({len(changed)} in all)" if len(changed) > 5 else "")
    note = f"normalised to Unicode NFC: {shown}"
    warnings.warn(f"{where}: {len(changed)} word(s) {note}", IsoeatWarning, stacklevel=4)
    return (note,)


def tests_from_mapping(data: Any, *, where: str, default_id: str) -> list[AssociationTest]:
    """Build tests from an already-parsed YAML/JSON document.

    Parameters
    ----------
    data : Any
        The parsed document.
    where : str
        Used in error messages (usually the file path).
    default_id : str
        Id for a test that has none (usually the file stem).
    """
    if is_weathub(data):
        return weathub_tests(where, data, default_id, tests_from_mapping)
    if isinstance(data, dict) and set(_SENT_BIAS_KEYS) <= set(data):
        label = f"{where}: test {default_id!r}"
        _known_keys(label, data, _SENT_BIAS_TOP)
        sets, changed = _sets(label, data, _SENT_BIAS_KEYS)
        return [
            AssociationTest(
                id=_test_id(where, default_id, default_id),
                bias_type=_text(label, "bias_type", data.get("bias_type"), "Custom"),
                citation="sent-bias format (May et al. 2019)",
                title=f"{sets['X'].name} vs. {sets['Y'].name} / {sets['A'].name} vs. {sets['B'].name}",
                provenance=_nfc_note(label, changed),
                source=where,
                X=sets["X"], Y=sets["Y"], A=sets["A"], B=sets["B"],
            )
        ]
    if isinstance(data, dict) and "tests" in data:
        _known_keys(where, data, _LIST_KEYS)
        return _test_list(where, "tests", data["tests"], default_id)
    if isinstance(data, list):
        return _test_list(where, "", data, default_id)
    if not isinstance(data, dict):
        raise DataFormatError(
            f"{where}: expected a mapping with keys X, Y, A, B (or targ1/targ2/attr1/attr2) or a list of them, "
            f"got {type(data).__name__}"
        )
    if "targets" in data or "attributes" in data:  # a k-group test: one line naming its command
        raise DataFormatError(ngroup_hint(f"{where}: test {safe_show(data.get('id', default_id))}"))
    missing = [k for k in ("X", "Y", "A", "B") if k not in data]
    if missing:
        raise DataFormatError(
            f"{where}: missing key(s) {', '.join(missing)}; a test needs X, Y, A, B "
            "(isoeat format) or targ1, targ2, attr1, attr2 (sent-bias format)"
        )
    _known_keys(where, data, _ISOEAT_KEYS)
    test_id = _test_id(where, data.get("id"), default_id)
    label = f"{where}: test {test_id!r}"
    sets, changed = _sets(label, data, {r: r for r in ("X", "Y", "A", "B")})
    provenance = data.get("provenance")
    provenance = [] if provenance is None else [provenance] if isinstance(provenance, str) else provenance
    if not isinstance(provenance, list):
        raise DataFormatError(f"{label}: provenance: expected a string or a list of strings, "
                              f"got {safe_show(provenance)}")
    notes = tuple(_text(label, f"provenance[{i}]", p, "") for i, p in enumerate(provenance))
    return [
        AssociationTest(
            id=test_id,
            bias_type=_text(label, "bias_type", data.get("bias_type"), "Custom"),
            citation=_text(label, "citation", data.get("citation"), ""),
            title=_text(label, "title", data.get("title"), ""),
            provenance=notes + _nfc_note(label, changed),
            source=where,
            pairs=_pairs(label, data.get("pairs"), changed),
            reference=_text(label, "reference", data.get("reference"), ""),
            lists_from=_text(label, "lists_from", data.get("lists_from"), ""),
            licence=_text(label, "licence", data.get("licence"), ""),
            composed=_text(label, "composed", data.get("composed"), ""),
            X=sets["X"], Y=sets["Y"], A=sets["A"], B=sets["B"],
        )
    ]


def _test_list(where: str, key: str, items: Any, default_id: str) -> list[AssociationTest]:
    """The tests of a list (the whole document, ``key`` ``""``, or ``tests: [...]``, ``key`` ``"tests"``).

    Each item must be a test mapping (a list's first item without an id is ``STEM-1``, ...); ids must differ, in
    any case (the registry's rule: ``W1`` and ``w1`` name one test).
    """
    if not isinstance(items, list) or not items:
        raise DataFormatError(f"{where}: " + (f"{key!r} must be a non-empty list of tests, got {safe_show(items)}"
                                              if key else "the list of tests is empty"))
    out: list[AssociationTest] = []
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        label = f"{where} ({key}[{i}])"
        if not isinstance(item, dict) or "tests" in item:
            got = "a nested 'tests' list" if isinstance(item, dict) else safe_show(item)
            raise DataFormatError(f"{label}: expected a mapping with keys X, Y, A, B (one test), got {got}")
        (test,) = tests_from_mapping(item, where=label, default_id=f"{default_id}-{i + 1}")
        j = first.setdefault(test.id.casefold(), i)
        if j != i:
            raise DataFormatError(f"{label}: test id {test.id!r} is also the id of {key}[{j}] ({out[j].id!r}); "
                                  "the ids of a file's tests must differ")
        out.append(test)
    return out


def _pairs(where: str, value: Any, changed: list[str]) -> tuple[tuple[str, str], ...]:
    """The optional ``pairs`` field: a list of two-word lists (``[[she, he], ...]``), words in NFC."""
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        raise DataFormatError(f"{where}: pairs: expected a non-empty list of [word, word] pairs such as "
                              f"[[she, he], [woman, man]], got {safe_show(value)}")
    out = []
    for i, p in enumerate(value):
        if not (isinstance(p, list) and len(p) == 2 and all(isinstance(w, str) and w.strip() for w in p)):
            raise DataFormatError(f"{where}: pairs[{i}]: expected two words such as [she, he], got {safe_show(p)}")
        a, b = _nfc(p, changed)
        if a == b:
            raise DataFormatError(f"{where}: pairs[{i}]: {safe_show(p)} names one word twice; a pair needs two words")
        out.append((a, b))
    conflict = pair_conflict(out, lambda p: safe_repr(list(p)))
    if conflict:
        raise DataFormatError(f"{where}: {conflict}")
    return tuple(out)


def load_tests_from_file(path: str | Path) -> list[AssociationTest]:
    """Read one or more association tests from a YAML or JSON file (the reader; the public function of this name
    is :func:`isoeat.wordsets._registry.load_tests_from_file`, which also checks the ids against the registry).

    Parameters
    ----------
    path : str or Path
        A ``.yaml``/``.yml``/``.json`` file in isoeat's format, or a sent-bias
        ``.jsonl``/``.json`` file.

    Returns
    -------
    list of AssociationTest

    Raises
    ------
    IsoeatFileNotFoundError
        The file does not exist or cannot be read.
    DataFormatError
        The content is not a valid test (the message names file, line or key).
    """
    p = check_path("load_tests_from_file: path", path)
    text = _read_text(p)
    if not text.strip():
        raise DataFormatError(f"{p}: file is empty")
    data = _parse(p, text)
    return tests_from_mapping(data, where=str(p), default_id=p.stem)
