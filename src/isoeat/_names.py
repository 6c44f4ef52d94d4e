"""The one file-name scheme: labels (models, calibrations, tests, benchmarks) as names of files and folders.

Used by the cells of a run folder and by the report's files alike. The rule:

* a label of at most :data:`MAX_KEPT` characters made of letters, digits,
  ``.``, ``_``, ``=`` and ``-``, starting with a letter or digit, not ending
  with ``.`` and not a name Windows reserves (``CON``, ``NUL``, ``COM1``, ...)
  is its own name: ``GloVe``, ``zca``, ``W6``, ``glove-6b-50d``;
* any other label becomes its slug (every other run of characters replaced
  by ``_``, cut to :data:`SLUG_CHARS`) followed by ``+`` and 10 hex digits of
  the SHA-256 of the label: ``z 1`` -> ``z_1+2e22fb0583``. ``+`` never occurs
  in a kept label, so an escaped name never equals a kept one (a label that
  *is* ``z_1+2e22fb0583`` contains ``+`` and is escaped in turn);
* every name is at most 100 bytes, far below the 255-byte limit of common
  file systems, with room for an extension.

Labels that differ only in case (``GloVe`` and ``glove``) keep their own
names, which one file would hold on the case-insensitive disks of macOS and
Windows: :func:`check_distinct` refuses such a set of labels up front, and
:func:`unique_names` (names of several parts, for the report's files)
separates them with a hash. :func:`check_distinct` refuses as well labels
that only *look* alike (:func:`look_alike_key`: the same file name, case
folded, after NFKC and the removal of invisible format characters: ``café``
in NFC and NFD, ``GloVe`` and ``GloVe`` + zero-width space, full-width ``ＧloVe``),
and labels holding a control character or a bidirectional override
(:func:`check_label`), which would print as something else in a table.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence

from ._errors import ConfigError

__all__ = ["file_name", "unique_names", "check_distinct", "check_label", "look_alike_key", "printable",
           "MAX_KEPT", "SLUG_CHARS"]

#: The longest label kept as its own name.
MAX_KEPT = 100
#: The longest slug in front of the hash of an escaped label.
SLUG_CHARS = 80
_KEPT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._=-]*\Z")
_RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))})


#: Bidirectional embeddings, overrides and isolates: they reorder the text printed after them.
BIDI_CONTROLS = frozenset(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))


def _hidden(ch: str) -> bool:
    """A character a label may not hold: a control character (category Cc, NUL and ESC included) or a bidi control."""
    return ch in BIDI_CONTROLS or unicodedata.category(ch) == "Cc"


def check_label(label: str, what: str) -> None:
    """Refuse a label holding a control character or a bidirectional override (it would print as another text).

    Examples
    --------
    >>> check_label("GloVe", "model label")
    >>> check_label("glove\\u202efdp.exe", "model label")
    Traceback (most recent call last):
    ...
    isoeat._errors.ConfigError: model label 'glove\\u202efdp.exe' contains U+202E (a control character or a
    bidirectional override, which changes how the label prints); remove it
    """
    bad = next((ch for ch in str(label) if _hidden(ch)), None)
    if bad is not None:
        raise ConfigError(f"{what} {str(label)!r} contains U+{ord(bad):04X} (a control character or a "
                          "bidirectional override, which changes how the label prints); remove it")


def printable(text: str) -> str:
    """Text for a table cell: each control character and bidi control written as its escape (``\\u202e``).

    Examples
    --------
    >>> printable("GloVe"), printable("a\\u202eb\\x00")
    ('GloVe', 'a\\\\u202eb\\\\x00')
    """
    text = str(text)
    if not any(_hidden(ch) for ch in text):
        return text
    return "".join(repr(ch)[1:-1] if _hidden(ch) else ch for ch in text)


def look_alike_key(label: str) -> str:
    """What a reader (and a case-insensitive disk) sees of a label: its :func:`file_name` after NFKC and the
    removal of invisible format characters (category Cf), case folded. Labels escaped into names keep the
    hash of that text, so ``z 1`` and ``Z 1`` stay two labels (two files); ``GloVe`` and ``glove`` are one.

    Examples
    --------
    >>> look_alike_key("Caf\\u00e9") == look_alike_key("Cafe\\u0301") == look_alike_key("\\uff23af\\u00e9\\u200b")
    True
    >>> look_alike_key("GloVe") == look_alike_key("glove"), look_alike_key("z 1") == look_alike_key("Z 1")
    (True, False)
    """
    text = unicodedata.normalize("NFKC", str(label))
    text = unicodedata.normalize("NFKC", "".join(ch for ch in text if unicodedata.category(ch) != "Cf"))
    return file_name(text).casefold()


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def _kept(label: str) -> bool:
    return (len(label) <= MAX_KEPT and bool(_KEPT.match(label)) and not label.endswith(".")
            and label.split(".", 1)[0].casefold() not in _RESERVED)


def file_name(label: str) -> str:
    """A label as a file or folder name that no other label can share (the rule is in the module docstring).

    Examples
    --------
    >>> file_name("GloVe-50d"), file_name("W6")
    ('GloVe-50d', 'W6')
    >>> file_name("z 1")
    'z_1+2e22fb0583'
    >>> file_name("z_1+2e22fb0583") != file_name("z 1")
    True
    >>> file_name("nul").startswith("nul+"), len(file_name("x" * 300))
    (True, 91)
    """
    label = str(label)
    if _kept(label):
        return label
    slug = re.sub(r"[^A-Za-z0-9._=-]+", "_", label).strip("._-")[:SLUG_CHARS].rstrip("._-") or "x"
    return f"{slug}+{_hash(label)}"


def unique_names(keys: Sequence[tuple[str, ...]], sep: str = "-") -> list[str]:
    """File names for several items, each named by the labels of ``key`` joined with ``sep``.

    Each part goes through :func:`file_name`. Names that would still coincide
    (parts that contain ``sep``: ``a-b`` + ``c`` and ``a`` + ``b-c``; or labels
    that differ only in case, one file on macOS and Windows) get ``+`` and a
    hash of their whole key; a name longer than 200 characters is cut and
    gets the hash too; every other name is left as it is.

    Examples
    --------
    >>> unique_names([("GloVe", "W6"), ("GloVe", "W7")])
    ['GloVe-W6', 'GloVe-W7']
    >>> a, b = unique_names([("GloVe",), ("glove",)])
    >>> a.casefold() != b.casefold()
    True
    """
    import json

    base = [sep.join(file_name(p) for p in key) for key in keys]
    groups: dict[str, set] = {}
    for key, name in zip(keys, base):
        groups.setdefault(name.casefold(), set()).add(tuple(key))
    out = []
    for key, name in zip(keys, base):
        if len(groups[name.casefold()]) > 1 or len(name) > 200:
            name = f"{name[:150]}+{_hash(json.dumps(list(key)))}"
        out.append(name)
    return out


def check_distinct(labels: Iterable[str], what: str) -> None:
    """Refuse labels that differ only in case (one file on the disks of macOS and Windows) or only look alike
    (:func:`look_alike_key`), and labels :func:`check_label` refuses.

    ``what`` is plural (``"model labels"``); one label is named by it without its last ``s``.

    Raises
    ------
    ConfigError
        Naming the two labels (or the one) and ``what`` they label.

    Examples
    --------
    >>> check_distinct(["GloVe", "word2vec"], "model labels")
    >>> check_distinct(["GloVe", "glove"], "model labels")
    Traceback (most recent call last):
    ...
    isoeat._errors.ConfigError: model labels 'GloVe' and 'glove' differ only in case: their files would be one
    file on the case-insensitive disks of macOS and Windows; rename one of them
    """
    seen: dict[str, str] = {}
    one = what[:-1] if what.endswith("s") else what
    for label in dict.fromkeys(str(x) for x in labels):
        check_label(label, one)
        key = look_alike_key(label)
        if key not in seen:
            seen[key] = label
        elif seen[key].casefold() == label.casefold():
            raise ConfigError(f"{what} {seen[key]!r} and {label!r} differ only in case: their files would be one file "
                              "on the case-insensitive disks of macOS and Windows; rename one of them")
        else:
            raise ConfigError(f"{what} {ascii(seen[key])} and {ascii(label)} look alike (they differ only in Unicode "
                              "form, invisible characters or case): tables would show them as one; rename one of them")
