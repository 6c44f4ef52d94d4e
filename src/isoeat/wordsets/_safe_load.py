"""Safe reading of the text files users hand to isoeat: word-set files and experiment configs.

* **Regular files only**: a FIFO, device, socket or folder is refused by
  :func:`os.stat` before anything opens it (a FIFO would block forever).
* **UTF-8**, with a leading byte-order mark stripped.
* **YAML without surprises**: a plain scalar is the text the user wrote.
  YAML 1.1 reads ``no``, ``on`` and ``yes`` as booleans, ``2019`` as a number,
  ``2019-01-01`` as a date; here they stay the strings ``"no"``,
  ``"on"``, ``"yes"``, ``"2019"``. Only an empty value and ``null``/``Null``/
  ``NULL``/``~`` are ``None`` (write ``'null'`` in quotes for the word).
  Readers convert where their schema expects a number or a flag (see
  :func:`plain_scalar`).
* **No aliases** (``*name``): an alias can multiply a 700-byte file into
  gigabytes ("billion laughs"); no isoeat file needs one.
* **No duplicate keys** (YAML and JSON): a silent overwrite hides mistakes.
* **Bounded nesting** (:data:`MAX_DEPTH` levels).

Errors are :class:`SafeLoadError` with the line (``line``, 1-based, or None);
each caller words them as its own error class (``DataFormatError`` for word
sets, ``ConfigError`` for configs).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from .._errors import DataFormatError, IsoeatFileNotFoundError
from .._textio import check_regular_file, compression_kind
from .._validate import _REPR, show

__all__ = ["UniqueKeyLoader", "SafeLoadError", "NotUTF8Error", "read_regular_text", "load_yaml", "load_json",
           "plain_scalar", "plain_flag", "QuotedStr", "safe_show", "safe_repr", "MAX_DEPTH"]

#: Deepest nesting of lists and mappings accepted in a word-set or config file.
MAX_DEPTH = 64

class SafeLoadError(Exception):
    """A YAML/JSON document isoeat will not read; ``line`` is 1-based (or None)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class NotUTF8Error(SafeLoadError):
    """The file's bytes are not UTF-8."""


class QuotedStr(str):
    """A YAML scalar written in quotes (or a block scalar): text by the author's choice, never converted."""

    __slots__ = ()


# --------------------------------------------------------------------------- messages


def safe_show(value: Any, *, limit: int = 60) -> str:
    """Bounded ``repr`` for an error message, with its type unless a string (the one in :mod:`isoeat._validate`)."""
    return show(value, limit=limit)


def safe_repr(value: Any, *, limit: int = 60) -> str:
    """:func:`safe_show` without the type."""
    text = _REPR.repr(value)
    return text if len(text) <= limit + 40 else text[: limit + 37] + "..."


# --------------------------------------------------------------------------- files
#: Word-set files and configs are small: larger ones are refused before they are read.
MAX_FILE_BYTES = 16 << 20
MAX_LINE_BYTES = 1 << 20


def read_regular_text(path: Path, *, what: str = "file") -> str:
    """The UTF-8 text of a regular file, without a leading BOM.

    Raises
    ------
    IsoeatFileNotFoundError
        No such file, not a regular file (folder, FIFO, device, socket; named), or unreadable.
    NotUTF8Error
        Not UTF-8 (with the line of the first bad byte).
    """
    kind_of = what if what != "file" else "word-set or config file"
    if not Path(path).exists() and not Path(path).is_symlink():
        raise IsoeatFileNotFoundError(f"{path}: no such {what}")
    st = check_regular_file(path, what=kind_of)  # the one check of every reader (isoeat._textio)
    if st.st_size > MAX_FILE_BYTES:
        raise IsoeatFileNotFoundError(f"{path}: {st.st_size:,} bytes; a {kind_of} is at most "
                                      f"{MAX_FILE_BYTES >> 20} MiB (word sets and configs are small text files)")
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise IsoeatFileNotFoundError(f"{path}: cannot read ({exc.strerror})") from None
    compressed = compression_kind(path, raw[:8], gzip=True)  # a .bz2, .gz, ...: said, not "not valid UTF-8"
    if compressed is not None:
        raise DataFormatError(f"{path}: {compressed} compression is not supported (a {kind_of} is read as plain "
                              "UTF-8 text; decompress it first)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise NotUTF8Error(f"not valid UTF-8 (byte {exc.start})", line) from None
    longest = max((len(line) for line in raw.split(b"\n")), default=0)
    if longest > MAX_LINE_BYTES:
        line = next(i for i, ln in enumerate(raw.split(b"\n"), 1) if len(ln) > MAX_LINE_BYTES)
        raise IsoeatFileNotFoundError(f"{path}:{line}: line longer than {MAX_LINE_BYTES >> 20} MiB; a {kind_of} is a "
                                      "small text file")
    return text[1:] if text.startswith("\ufeff") else text


# --------------------------------------------------------------------------- JSON
def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise SafeLoadError(f"duplicate key {safe_show(k)}")
        out[k] = v
    return out


def load_json(text: str) -> Any:
    """``json.loads`` refusing duplicate keys and deep nesting (:class:`SafeLoadError`; syntax errors stay
    :class:`json.JSONDecodeError`)."""
    try:
        data = json.loads(text, object_pairs_hook=_unique_pairs)
    except RecursionError:
        raise SafeLoadError(f"nested more than {MAX_DEPTH} levels deep") from None
    if _depth(data) > MAX_DEPTH:
        raise SafeLoadError(f"nested more than {MAX_DEPTH} levels deep")
    return data


def _depth(x: Any) -> int:
    """Nesting depth of lists/dicts, iteratively (a deep document must not overflow the stack here)."""
    best, stack = 0, [(x, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, (list, dict)):
            best = max(best, d)
            if d > MAX_DEPTH:
                return d
            stack.extend((v, d + 1) for v in (node.values() if isinstance(node, dict) else node))
    return best


# --------------------------------------------------------------------------- YAML
_NULLS = {"null", "Null", "NULL", "~"}


def _make_loader() -> type:
    import yaml
    from yaml.events import AliasEvent, CollectionStartEvent

    class Loader(yaml.SafeLoader):
        """SafeLoader: plain scalars are strings, no aliases, no duplicate keys, bounded depth."""

        yaml_implicit_resolvers: dict = {}
        _depth = 0

        def compose_node(self, parent, index):  # noqa: D401 - yaml hook
            event = self.peek_event()
            if isinstance(event, AliasEvent):
                raise SafeLoadError(f"YAML aliases are not allowed (*{event.anchor})", event.start_mark.line + 1)
            if isinstance(event, CollectionStartEvent):
                if self._depth >= MAX_DEPTH:
                    raise SafeLoadError(f"nested more than {MAX_DEPTH} levels deep", event.start_mark.line + 1)
                self._depth += 1
                try:
                    return super().compose_node(parent, index)
                finally:
                    self._depth -= 1
            return super().compose_node(parent, index)

        def construct_mapping(self, node, deep=False):
            seen: dict = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    first = seen.get(key)
                except TypeError:
                    raise SafeLoadError("a mapping key must be text", key_node.start_mark.line + 1) from None
                line = key_node.start_mark.line + 1
                if first is not None:
                    raise SafeLoadError(f"duplicate key {safe_show(key)} (line {line}; first on line {first})", line)
                seen[key] = line
            return super().construct_mapping(node, deep=deep)

    def construct_plain(loader, node):
        value = loader.construct_scalar(node)
        if node.style is not None:
            return QuotedStr(value)
        return None if (value == "" or value in _NULLS) else value

    Loader.add_constructor("tag:yaml.org,2002:str", construct_plain)
    return Loader


class _UniqueKeyLoader:
    """Namespace of the one loader class (built at first use: PyYAML is imported lazily)."""

    _cls: list[type] = []

    @staticmethod
    def make() -> type:
        """The :class:`yaml.SafeLoader` subclass described in the module docstring."""
        if not _UniqueKeyLoader._cls:
            _UniqueKeyLoader._cls.append(_make_loader())
        return _UniqueKeyLoader._cls[0]


UniqueKeyLoader = _UniqueKeyLoader  # the public name (experiments.config re-exports it as _UniqueKeyLoader)


def load_yaml(text: str) -> Any:
    """Parse YAML with plain scalars kept as text (see the module docstring).

    Parameters
    ----------
    text : str
        The document.

    Raises
    ------
    SafeLoadError
        An alias, a duplicate key or too deep nesting (with the line).
    yaml.YAMLError
        Invalid YAML.
    """
    import yaml

    try:
        return yaml.load(text, Loader=_UniqueKeyLoader.make())  # noqa: S506 - a SafeLoader subclass
    except RecursionError:
        raise SafeLoadError(f"nested more than {MAX_DEPTH} levels deep") from None


# --------------------------------------------------------------------------- typed values from text
_INT = re.compile(r"[-+]?[0-9][0-9_]*")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?")
_SPECIAL = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}
_TRUE = {"true", "True", "TRUE"}
_FALSE = {"false", "False", "FALSE"}
#: Spellings of a flag accepted where the schema expects one (YAML 1.1 booleans, any case).
FLAG_WORDS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


def plain_flag(text: Any) -> Any:
    """``True``/``False`` for a plain scalar spelled as a YAML 1.1 boolean (``yes``, ``Off``, ...); else ``text``.

    For keys whose schema expects a flag; elsewhere such words stay text.
    """
    if isinstance(text, str) and not isinstance(text, QuotedStr):
        return FLAG_WORDS.get(text.strip().lower(), text)
    return text


def plain_scalar(text: Any) -> Any:
    """A plain YAML scalar as YAML 1.2 (core schema) would type it: ``true``/``false``, integers, reals
    (``1e-3``, ``.inf``); anything else stays text. Non-strings and quoted scalars (:class:`QuotedStr`)
    are returned as they are.

    Examples
    --------
    >>> [plain_scalar(s) for s in ("3", "1e-3", "100_000", "false", "no", "2019-01-01")]
    [3, 0.001, 100000, False, 'no', '2019-01-01']
    """
    if not isinstance(text, str) or isinstance(text, QuotedStr):
        return text
    s = text.strip()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    if _INT.fullmatch(s):
        return int(s.replace("_", ""))
    if _FLOAT.fullmatch(s) and any(ch.isdigit() for ch in s):
        return float(s.replace("_", ""))
    if s.lower() in _SPECIAL:
        return _SPECIAL[s.lower()]
    return text
