"""Read user-defined association tests from YAML or JSON files.

Two layouts are accepted:

* isoeat's own: a mapping with ``id``, ``bias_type`` and the four sets ``X``,
  ``Y``, ``A``, ``B`` (each ``{"name": ..., "words": [...]}`` or a bare list),
  optionally ``citation`` and ``title``; or ``{"tests": [<such mappings>]}``.
* the sent-bias format of May et al. (2019):
  ``{"targ1": {"category": ..., "examples": [...]}, "targ2": ..., "attr1": ...,
  "attr2": ...}`` (their files end in ``.jsonl`` but hold one JSON object).
  The test id is the file's stem.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._errors import DataFormatError, IsoeatFileNotFoundError
from ._spec import AssociationTest, WordSet

__all__ = ["load_tests_from_file", "tests_from_mapping"]

_SENT_BIAS_KEYS = {"targ1": "X", "targ2": "Y", "attr1": "A", "attr2": "B"}


def _read_text(path: Path) -> str:
    if not path.exists():
        raise IsoeatFileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise IsoeatFileNotFoundError(f"{path}: is a folder, expected a YAML or JSON file")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IsoeatFileNotFoundError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataFormatError(f"{path}:{line}: not valid UTF-8 (byte {exc.start})") from None


def _parse(path: Path, text: str) -> Any:
    suffix = path.suffix.lower()
    if suffix in {".yaml", ".yml"}:
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise DataFormatError(f"{path}{where}: invalid YAML ({problem})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if suffix in {".json", ".jsonl"}:
            raise DataFormatError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
        import yaml  # files without a known suffix: try YAML after JSON

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError:
            raise DataFormatError(
                f"{path}:{exc.lineno}: neither valid JSON ({exc.msg}) nor valid YAML"
            ) from None


def _word_set(where: str, role: str, value: Any, default_name: str) -> WordSet:
    if isinstance(value, dict):
        name = value.get("name", value.get("category", default_name))
        words = value.get("words", value.get("examples"))
        if words is None:
            raise DataFormatError(f"{where}: set {role!r} has no 'words' list")
    else:
        name, words = default_name, value
    if not isinstance(words, list):
        raise DataFormatError(f"{where}: set {role!r}: 'words' must be a list, got {type(words).__name__}")
    if not words:
        raise DataFormatError(f"{where}: set {role!r} ({name}) is empty")
    for i, w in enumerate(words):
        if not isinstance(w, str):
            raise DataFormatError(
                f"{where}: set {role!r} ({name}), item {i + 1}: expected a string, got {w!r}"
            )
    try:
        return WordSet(str(name), tuple(w.strip() for w in words))
    except Exception as exc:  # ConfigError from WordSet validation
        raise DataFormatError(f"{where}: {exc}") from None


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
    if isinstance(data, dict) and set(_SENT_BIAS_KEYS) <= set(data):
        sets = {
            role: _word_set(where, key, data[key], default_name=key)
            for key, role in _SENT_BIAS_KEYS.items()
        }
        return [
            AssociationTest(
                id=default_id,
                bias_type=str(data.get("bias_type", "Custom")),
                citation="sent-bias format (May et al. 2019)",
                title=f"{sets['X'].name} vs. {sets['Y'].name} / {sets['A'].name} vs. {sets['B'].name}",
                source=where,
                **sets,
            )
        ]
    if isinstance(data, dict) and "tests" in data:
        items = data["tests"]
        if not isinstance(items, list) or not items:
            raise DataFormatError(f"{where}: 'tests' must be a non-empty list")
        out: list[AssociationTest] = []
        for i, item in enumerate(items):
            out.extend(tests_from_mapping(item, where=f"{where} (tests[{i}])", default_id=f"{default_id}-{i + 1}"))
        return out
    if not isinstance(data, dict):
        raise DataFormatError(
            f"{where}: expected a mapping with keys X, Y, A, B (or targ1/targ2/attr1/attr2), "
            f"got {type(data).__name__}"
        )
    missing = [k for k in ("X", "Y", "A", "B") if k not in data]
    if missing:
        raise DataFormatError(
            f"{where}: missing key(s) {', '.join(missing)}; a test needs X, Y, A, B "
            "(isoeat format) or targ1, targ2, attr1, attr2 (sent-bias format)"
        )
    known = {"id", "bias_type", "citation", "title", "provenance", "X", "Y", "A", "B"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise DataFormatError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(known)}")
    sets = {role: _word_set(where, role, data[role], default_name=role) for role in ("X", "Y", "A", "B")}
    provenance = data.get("provenance", ())
    if isinstance(provenance, str):
        provenance = (provenance,)
    return [
        AssociationTest(
            id=str(data.get("id", default_id)),
            bias_type=str(data.get("bias_type", "Custom")),
            citation=str(data.get("citation", "")),
            title=str(data.get("title", "")),
            provenance=tuple(str(p) for p in provenance),
            source=where,
            **sets,
        )
    ]


def load_tests_from_file(path: str | Path) -> list[AssociationTest]:
    """Read one or more association tests from a YAML or JSON file.

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
    p = Path(path)
    text = _read_text(p)
    if not text.strip():
        raise DataFormatError(f"{p}: file is empty")
    data = _parse(p, text)
    return tests_from_mapping(data, where=str(p), default_id=p.stem)
