"""Plain records: the one home of JSON and CSV text, canonical JSON, content hashes and sealed files.

This module sits below :mod:`isoeat.experiments` and :mod:`isoeat.reporting`
(both write records; neither imports the other for it).

* :func:`clean` — NaN/inf to None and numpy to Python, recursively (strict JSON);
* :func:`to_json` / :func:`records_to_csv` — the text of a result file (CSV text
  cells escaped by :func:`csv_text`, so a spreadsheet never runs them);
* :func:`canonical_json` / :func:`content_hash` — the one canonical form of a
  value (sorted keys, compact, no NaN, numpy as Python, nothing else coerced)
  and its SHA-256: every key that decides whether a stored result may be
  reused (protocol, cell, calibration request, test words) is a
  :func:`content_hash`;
* :func:`seal` / :func:`is_sealed` — a record with the hash of its own content,
  so a changed or hand-edited file is noticed when read back;
* :func:`write_json` / :func:`read_json` — strict JSON written atomically, read
  forgivingly (a damaged file reads as missing, with a warning).
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._errors import IsoeatWarning
from ._io import atomic_write_text

__all__ = ["clean", "to_json", "jsonable", "records_to_csv", "csv_text", "list_cell", "cell_list", "finite_or_none",
           "nan_of",
           "canonical_json", "digest_json", "content_hash", "record_digest", "seal", "is_sealed", "CONTENT_KEY",
           "write_json", "indented_json", "read_json", "write_outputs"]


def clean(x: Any) -> Any:
    """NaN/inf -> None and numpy scalars and arrays -> Python, recursively (strict JSON).

    Examples
    --------
    >>> clean({"d": float("nan"), "n": np.int64(3), "v": np.array([1.5, np.inf])})
    {'d': None, 'n': 3, 'v': [1.5, None]}
    """
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        if x and all(type(v) is float for v in x[:8]) and all(type(v) is float and math.isfinite(v) for v in x):
            return list(x)
        return [clean(v) for v in x]
    if isinstance(x, np.generic):
        return clean(x.item())
    if isinstance(x, np.ndarray):
        return clean(x.tolist())
    return x


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def to_json(obj: Any) -> str:
    """JSON text of a result (indented); NaN is written as null so that strict parsers accept it.

    Examples
    --------
    >>> print(to_json({"p": float("nan")}), end="")
    {
      "p": null
    }
    """
    return json.dumps(clean(obj), indent=2, default=_json_default) + "\n"


def jsonable(obj: Any) -> Any:
    """``obj`` as plain JSON values (what :func:`to_json` would write, read back)."""
    return json.loads(to_json(obj))


def finite_or_none(x: Any) -> float | None:
    """``float(x)`` when it is a finite number, else None (text, None, NaN, inf)."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def nan_of(v: Any) -> float:
    """``float(v)``, with None (a NaN written to JSON) read back as NaN."""
    return float("nan") if v is None else float(v)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(text: str) -> str:
    """A text cell that a spreadsheet will not run: a leading ``= + - @``, tab or CR gets a ``'`` before it.

    Text that is a number (``-2.5``) is left as it is: a spreadsheet reads it as that number.

    Examples
    --------
    >>> csv_text("=1+2"), csv_text("-x"), csv_text("-2.5"), csv_text("GloVe")
    ("'=1+2", "'-x", '-2.5', 'GloVe')
    """
    if not text.startswith(_FORMULA_START):
        return text
    try:
        float(text)
        return text
    except ValueError:
        return "'" + text


def list_cell(items: Any) -> str:
    """A list as one CSV cell: its items joined by ``;``, each ``\\`` in an item written ``\\\\`` and each ``;``
    written ``\\;`` (a stimulus may hold a ``;``: ``rock;roll``), so that :func:`cell_list` reads back the very
    items. Items without either character are written as they are.

    Examples
    --------
    >>> list_cell(["rock;roll", "jazz"]), list_cell(["a", "b"])
    ('rock\\\\;roll;jazz', 'a;b')
    """
    return ";".join(str(x).replace("\\", "\\\\").replace(";", "\\;") for x in items)


def cell_list(value: Any) -> list[str]:
    """The items of a list cell written by :func:`list_cell` (``\\;`` and ``\\\\`` read as ``;`` and ``\\``; any other
    backslash kept, as a cell written before the escapes holds it); a list (JSON) as it is; empty items and an empty
    or missing cell give none.

    Examples
    --------
    >>> cell_list("rock\\\\;roll;jazz"), cell_list(["x;y"]), cell_list(None)
    (['rock;roll', 'jazz'], ['x;y'], [])
    """
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    text, out, item, i = str(value or ""), [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in "\\;":
            item.append(text[i + 1])
            i += 2
            continue
        if ch == ";":
            out.append("".join(item))
            item = []
        else:
            item.append(ch)
        i += 1
    out.append("".join(item))
    return [v for v in out if v]


def _cell(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        v = list_cell(v)
    if v is None:
        return ""
    return csv_text(v) if isinstance(v, str) else v


#: Cell values written as they are (exact types: a subclass goes through :func:`_cell`).
_PLAIN_CELL = frozenset({float, int, bool})


def records_to_csv(records: Sequence[dict[str, Any]]) -> str:
    """CSV text with one row per record (lists joined by ``;``: :func:`list_cell`; text cells escaped by
    :func:`csv_text`)."""
    if not records:
        return ""
    fields: list[str] = list(dict.fromkeys(itertools.chain.from_iterable(records)))  # first-seen order, linear
    rows = [
        [
            v if type(v) in _PLAIN_CELL or (type(v) is str and not v.startswith(_FORMULA_START)) else _cell(v)
            for v in map(rec.get, fields)
        ]
        for rec in records
    ]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")  # rows as lists: what csv.DictWriter writes, without its checks
    w.writerow([csv_text(str(k)) for k in fields])
    w.writerows(rows)
    text = buf.getvalue()
    if "\r" not in text:  # only a text cell can hold a CR
        return text
    # the csv module quotes only the characters of the line terminator: a row with a CR is quoted in full
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w_cr = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    w.writerow([csv_text(str(k)) for k in fields])
    for row in rows:
        (w_cr if any(isinstance(v, str) and "\r" in v for v in row) else w).writerow(row)
    return buf.getvalue()


def write_outputs(out_dir: str | Path, stem: str, records: Sequence[dict[str, Any]],
                  extra: dict[str, Any] | None = None) -> list[Path]:
    """Write ``STEM.csv`` and ``STEM.json`` (and ``STEM-summary.json``) atomically, stamped by
    :func:`isoeat._version.versioned`."""
    from ._version import versioned

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}.csv", out / f"{stem}.json"]
    atomic_write_text(paths[0], records_to_csv(versioned(records)))
    atomic_write_text(paths[1], to_json(versioned(list(records))))
    if extra is not None:
        p = out / f"{stem}-summary.json"
        atomic_write_text(p, to_json(versioned(extra)))
        paths.append(p)
    return paths


# --------------------------------------------------------------------------- canonical JSON and content hashes
def canonical_json(obj: Any) -> str:
    """The one canonical text of a value: sorted keys, compact, UTF-8 as is, numpy as Python.

    Anything JSON cannot hold exactly is an error, never silently turned into
    something that another value could also become: an object or a set (its
    ``str`` could differ between runs) raises ``TypeError``, NaN or infinity
    (it would read as null, like None) raises ``ValueError``.

    Examples
    --------
    >>> canonical_json({"b": [1, np.float64(0.5), np.int64(2)], "é": "x"})
    '{"b":[1,0.5,2],"é":"x"}'
    >>> canonical_json({"a": float("nan")})
    Traceback (most recent call last):
    ...
    ValueError: Out of range float values are not JSON compliant
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                      default=_json_default)


def digest_json(obj: Any, default: Any = None) -> str:
    """:func:`canonical_json` for a digest of data that may hold NaN or infinity (a result's undefined d):
    written as JSON's ``NaN`` / ``Infinity`` tokens (each reads back as itself, never as another value);
    ``default`` turns other objects into plain data (else they are refused, as by :func:`canonical_json`).

    Examples
    --------
    >>> digest_json({"d": float("nan"), "a": 1})
    '{"a":1,"d":NaN}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True,
                      default=default or _json_default)


def content_hash(obj: Any, length: int | None = 16) -> str:
    """SHA-256 (hex, the first ``length`` digits; None: all 64) of :func:`canonical_json` of ``obj``.

    The key of every stored result: it changes whenever any part of ``obj`` changes.

    Examples
    --------
    >>> len(content_hash({"a": 1})), len(content_hash({"a": 1}, None))
    (16, 64)
    >>> content_hash({"a": 1, "b": 2}) == content_hash({"b": 2, "a": 1}) != content_hash({"a": 1, "b": 3})
    True
    """
    digest = hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()
    return digest if length is None else digest[:length]


#: The key of a sealed record's content hash.
CONTENT_KEY = "content_sha256"


def record_digest(rec: dict) -> str:
    """SHA-256 of a record as its file holds it (:func:`clean`: NaN as null), without its own ``content_sha256``.

    A float written by :func:`json.dumps` reads back to the same float, so a
    record read from its file hashes to the value computed before writing it.
    """
    return content_hash(clean({k: v for k, v in rec.items() if k != CONTENT_KEY}), None)


def seal(rec: dict) -> dict:
    """``rec`` with its content hash, so a changed or hand-edited file is noticed when read back."""
    return {**rec, CONTENT_KEY: record_digest(rec)}


def is_sealed(rec: Any) -> bool:
    """True when ``rec`` carries a content hash that matches its content."""
    return isinstance(rec, dict) and rec.get(CONTENT_KEY) == record_digest(rec)


# --------------------------------------------------------------------------- JSON files
def write_json(path: Path, obj: Any, *, compact: bool = False) -> None:
    """Strict JSON (NaN written as null), atomically; ``compact`` for the per-cell files (fast C encoder), else
    indented by two spaces (:func:`indented_json`: the text of ``json.dumps(clean(obj), indent=2)``)."""
    if compact:
        text = json.dumps(clean(obj), separators=(",", ":"), allow_nan=False, default=_json_default)
    else:
        text = indented_json(obj, clean_values=True)
    atomic_write_text(path, text + "\n")


_SCALAR = (str, int, float, type(None))
_PLAIN = frozenset({str, int, float, bool, type(None)})  # exact types that clean() leaves as they are (finite)
_FLAT: dict[int, json.JSONEncoder] = {}  # an encoder per depth: items on their own lines, that depth's indent


def _flat_encoder(depth: int) -> json.JSONEncoder:
    enc = _FLAT.get(depth)
    if enc is None:
        sep = (",\n" + "  " * depth, ": ")
        enc = _FLAT[depth] = json.JSONEncoder(separators=sep, allow_nan=False, default=_json_default)
    return enc


def indented_json(obj: Any, *, clean_values: bool = False) -> str:
    """``json.dumps(obj, indent=2, allow_nan=False, default=...)``, character for character, faster;
    ``clean_values``: of :func:`clean` ``(obj)`` (NaN and infinity as null, numpy as Python), without building it.

    Python's JSON encoder indents in pure Python; here a container of scalars (a record, a list of numbers)
    is written by the C encoder in one call, its items separated by a newline and its depth's indent, so
    only the nesting above the records is walked in Python (and cleaned: a record of plain values is written
    as it is, unless the encoder finds a NaN or infinity in it).

    Examples
    --------
    >>> indented_json({"a": [1, 2.5], "b": {}, "c": [{"x": None, "y": "é"}]}) == json.dumps(
    ...     {"a": [1, 2.5], "b": {}, "c": [{"x": None, "y": "é"}]}, indent=2)
    True
    >>> indented_json({"d": float("nan")}, clean_values=True)
    '{\\n  "d": null\\n}'
    """
    out: list[str] = []
    _indent_into(obj, 0, out, clean_values)
    return "".join(out)


def _indent_into(o: Any, depth: int, out: list[str], cleaning: bool) -> None:
    if cleaning and isinstance(o, (float, np.generic, np.ndarray)):
        o = clean(o)
    if isinstance(o, dict):
        values: Any = o.values()
        opening, closing = "{", "}"
    elif isinstance(o, (list, tuple)):
        values, opening, closing = o, "[", "]"
    elif isinstance(o, _SCALAR):
        out.append(_flat_encoder(0).encode(o))
        return
    else:  # what json's encoder does: the default's value, encoded in its place
        _indent_into(_json_default(o), depth, out, cleaning)
        return
    if not o:
        out.append(opening + closing)
        return
    pad, inner = "  " * depth, "  " * (depth + 1)
    if all(type(v) in _PLAIN for v in values) if cleaning else all(isinstance(v, _SCALAR) for v in values):
        enc = _flat_encoder(depth + 1)  # a record: one C call
        try:
            text = enc.encode(o)
        except ValueError:  # a NaN or infinity: null where clean() writes it
            if not cleaning:
                raise
            text = enc.encode(clean(o))
        out.append(f"{opening}\n{inner}{text[1:-1]}\n{pad}{closing}")
        return
    out.append(opening)
    first = True
    for k, v in o.items() if opening == "{" else ((None, v) for v in o):
        out.append(("\n" if first else ",\n") + inner)
        first = False
        if opening == "{":
            out.append(_flat_encoder(0).encode({k: 0})[1:-2])  # the key as json writes it, and ": "
        _indent_into(v, depth + 1, out, cleaning)
    out.append(f"\n{pad}{closing}")


def read_json(path: Path) -> Any:
    """The JSON value in ``path``; None when it does not exist, or (with a warning) cannot be read or parsed."""
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        warnings.warn(f"{path}: unreadable ({exc}); treated as missing", IsoeatWarning, stacklevel=2)
        return None
