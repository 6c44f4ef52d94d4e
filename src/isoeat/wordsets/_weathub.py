"""WEATHub (Mukherjee, Raj, Zhu & Anastasopoulos 2023) read from the user's own copy: never bundled.

WEATHub holds WEAT word lists in 24 languages: the ten tests of Caliskan et al. (2017) translated, and new
human-centred, India-specific and country-specific tests. Its two distributions carry two licences:

* the Hugging Face dataset ``iamshnoo/WEATHub``: CC BY 4.0 (its dataset card); no copy could be obtained for
  isoeat, so none is bundled. Export a split to JSON lines with the ``datasets`` library
  (``load_dataset("iamshnoo/WEATHub")["original_weat"].to_json("weathub.jsonl")``) and give that file to
  ``--test``: each row (``language``, ``weat``, ``targ1.category``, ``targ1.examples``, ... ``attr2.examples``,
  the features its dataset card lists; splits ``original_weat``, ``new_human_biases``,
  ``india_specific_biases``) is one test, id ``WEAT-LANGUAGE`` (the ``weat`` and ``language`` columns). Cite
  Mukherjee et al. (2023) and keep the attribution CC BY 4.0 asks for.
* the GitHub repository ``iamshnoo/weathub`` (``data/<language>_<group>/weatN.json``): GPL-3.0 (its
  ``LICENSE`` @ ``878d6cea7aabc0ce4233bcf48e7ed1759ef41538``), which isoeat's BSD licence cannot bundle. Its
  files are in the sent-bias layout and are read by the sent-bias reader of :mod:`._loaders` (id: the
  file's stem). A list with a repeated word (``data/en_india/weat16.json`` lists ``woman`` twice) is refused
  in one line naming the word, as any test file's is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._errors import DataFormatError
from ._safe_load import SafeLoadError, load_json, safe_repr, safe_show
from ._spec import AssociationTest

__all__ = ["WEATHUB_CITATION", "is_weathub", "weathub_tests", "json_lines", "JsonLines"]

WEATHUB_CITATION = (
    "Mukherjee, A., Raj, C., Zhu, Z., & Anastasopoulos, A. (2023). Global Voices, Local Biases: "
    "Socio-Cultural Prejudices across Languages. Proceedings of the 2023 Conference on Empirical "
    "Methods in Natural Language Processing (EMNLP), 15828-15845. "
    "https://doi.org/10.18653/v1/2023.emnlp-main.981"
)
_SETS = ("targ1", "targ2", "attr1", "attr2")
_ROW_KEYS = frozenset(f"{s}.examples" for s in _SETS)


def is_weathub(data: Any) -> bool:
    """``data`` is one WEATHub row (a mapping with a ``targ1.examples`` .. ``attr2.examples`` column) or a list of them.

    One such column is enough: a row lacking the others is then refused naming them (:func:`weathub_tests`).
    """
    rows = data if isinstance(data, list) and data else [data]
    return all(isinstance(r, dict) for r in rows) and any(_ROW_KEYS & set(r) for r in rows)


class JsonLines(list[Any]):
    """The values of a JSON-lines file, with ``lines``: the line of each (blank lines are no values)."""

    lines: list[int]


def json_lines(path: Path, text: str) -> list[Any]:
    """The JSON values of a JSON-lines file (one a line, blank lines skipped); a bad line names its number.

    Returns a :class:`JsonLines` (a list whose ``lines`` are the values' line numbers, for the messages)."""
    out = JsonLines()
    out.lines = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        out.lines.append(lineno)
        try:
            out.append(load_json(line))
        except json.JSONDecodeError as exc:
            raise DataFormatError(f"{path}:{lineno}: invalid JSON line ({exc.msg})") from None
        except SafeLoadError as exc:
            raise DataFormatError(f"{path}:{lineno}: {exc}") from None
    return out


def _row_id(where: str, row: dict, default_id: str) -> str:
    parts = []
    for key in ("weat", "language"):
        value = row.get(key)
        if value is not None and not (isinstance(value, str) and value.strip()):
            raise DataFormatError(f"{where}: {key}: expected a non-empty string, got {safe_show(value)}")
        if value is not None:
            parts.append(value.strip())
    return "-".join(parts) if parts else default_id


def weathub_tests(
    where: str, data: Any, default_id: str, from_mapping: Callable[..., list[AssociationTest]]
) -> list[AssociationTest]:
    """The tests of WEATHub rows (one row or a list), each read as a sent-bias test by ``from_mapping``.

    A row must hold all four ``*.examples`` lists; ``*.category`` names a set (default: the key); ``weat``
    and ``language`` make the id (``WEAT1-en``); other columns are not read and are named in the test's
    provenance. Ids must differ (one line naming both rows).
    """
    from dataclasses import replace

    rows = data if isinstance(data, list) else [data]
    lines = getattr(data, "lines", None)  # a .jsonl file's: a row's line, named where blank lines make it differ
    out: list[AssociationTest] = []
    seen: dict[str, int] = {}
    for i, row in enumerate(rows):
        label = f"{where} (row {i + 1}" + (f", line {lines[i]})" if lines and lines[i] != i + 1 else ")")
        if not isinstance(row, dict):
            raise DataFormatError(f"{label}: expected a WEATHub row (a mapping), got {safe_show(row)}")
        missing = sorted(_ROW_KEYS - set(row))
        if missing:
            raise DataFormatError(
                f"{label}: missing column(s) {', '.join(missing)}; a WEATHub row holds "
                "targ1.examples, targ2.examples, attr1.examples and attr2.examples"
            )
        test_id = _row_id(label, row, f"{default_id}-{i + 1}")
        j = seen.setdefault(test_id.casefold(), i)
        if j != i:
            raise DataFormatError(
                f"{label}: test id {test_id!r} is also the id of row {j + 1}; the rows of a "
                "file must differ in weat or language"
            )
        mapping = {s: {"category": row.get(f"{s}.category") or s, "examples": row[f"{s}.examples"]} for s in _SETS}
        (test,) = from_mapping(mapping, where=label, default_id=test_id)
        known = {*_ROW_KEYS, *(f"{s}.category" for s in _SETS), "weat", "language"}
        unread = sorted(str(k) for k in row if k not in known)
        notes = (f"WEATHub columns not read: {safe_repr(unread)}",) if unread else ()
        out.append(
            replace(
                test,
                citation=WEATHUB_CITATION,
                provenance=test.provenance + notes,
                reference="WEATHub (Mukherjee et al. 2023), the user's copy",
                lists_from=f"row {i + 1} of the user's copy of WEATHub (Hugging Face iamshnoo/WEATHub)",
                licence="CC-BY-4.0 (WEATHub's Hugging Face release)",
            )
        )
    return out
