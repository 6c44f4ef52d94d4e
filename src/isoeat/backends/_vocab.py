"""A vocabulary's words, as readers hand them over, made safe to index.

Two things can silently change what a word means to a lookup:

* **Unicode normal form.** ``"cafe\\u0301"`` (NFD) and ``"caf\\u00e9"`` (NFC)
  look the same and are the same word, but differ as strings. Words are
  stored in NFC and queries are normalised too; the words that changed are
  counted, reported with an :class:`~isoeat.IsoeatWarning` and kept (with
  examples of their original form) for ``describe()``.
* **Duplicates.** A word present twice (possibly only after normalisation)
  has two vectors. The ``duplicates`` policy decides: ``"error"`` (default) refuses
  the file with a message naming the word and both positions; ``"first"``
  and ``"last"`` keep every row and make lookups return the first or the
  last one.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .._errors import DataFormatError, IsoeatWarning
from .._textio import nfc
from .._validate import check_choice

__all__ = ["DUPLICATE_POLICIES", "Vocabulary", "build_vocabulary", "row_locator", "line_locator", "entry_locator"]

#: Accepted values of the ``duplicates`` keyword.
DUPLICATE_POLICIES = ("error", "first", "last")
_EXAMPLES = 5

#: ``locate(i) -> (prefix, where)`` names row ``i`` in messages, e.g. ``("v.txt:12", "on line 12")``.
Locate = Callable[[int], "tuple[str, str]"]


def row_locator(source: str) -> Locate:
    """Rows of an in-memory matrix: ``("SOURCE: row 3", "in row 3")``."""
    return lambda i: (f"{source}: row {i + 1}", f"in row {i + 1}")


def line_locator(path: object, lines: Sequence[int]) -> Locate:
    """Rows read from lines of a text file: ``("PATH:12", "on line 12")``."""
    return lambda i: (f"{path}:{lines[i]}", f"on line {lines[i]}")


def entry_locator(path: object) -> Locate:
    """Entries of a binary file: ``("PATH: entry 3", "in entry 3")``."""
    return lambda i: (f"{path}: entry {i + 1}", f"in entry {i + 1}")


@dataclass(frozen=True)
class Vocabulary:
    """Normalised words, their index, and what normalisation and the duplicate policy did.

    Attributes
    ----------
    words : tuple of str
        Every word in NFC, in file order (duplicates included).
    index : dict
        Word -> row of its vector (first or last occurrence, by ``policy``).
    policy : str
        The duplicates policy applied.
    n_normalized : int
        How many words were not in NFC.
    normalized_examples : tuple of (str, str)
        Up to five ``(original, normalised)`` pairs.
    n_duplicates : int
        Rows that lookups never return (``len(words) - len(index)``).
    duplicate_examples : tuple of str
        Up to five duplicated words.
    """

    words: tuple[str, ...]
    index: dict[str, int]
    policy: str
    n_normalized: int
    normalized_examples: tuple[tuple[str, str], ...]
    n_duplicates: int
    duplicate_examples: tuple[str, ...]

    def describe(self) -> dict[str, object]:
        """The two reports, as plain JSON values (for manifests)."""
        return {
            "unicode_normalized": {"count": self.n_normalized,
                                   "examples": [list(p) for p in self.normalized_examples]},
            "duplicates": {"policy": self.policy, "count": self.n_duplicates,
                           "examples": list(self.duplicate_examples)},
        }


def build_vocabulary(words: Sequence[str], *, duplicates: str = "error", locate: Locate,
                     source: str) -> Vocabulary:
    """Normalise ``words`` to NFC and index them under the ``duplicates`` policy.

    Parameters
    ----------
    words : sequence of str
        Words in row order, as read.
    duplicates : {"error", "first", "last"}
        What a word present twice means: an error (default), or lookups
        return its first / last row.
    locate : callable
        Names row ``i`` in messages (:func:`line_locator`, :func:`entry_locator`,
        :func:`row_locator`).
    source : str
        The file or model, for the normalisation warning.

    Raises
    ------
    DataFormatError
        ``PATH:N: word 'x' appears again (first on line M)`` under ``"error"``.
    InvalidValueError
        ``duplicates`` is not one of the policies.

    Examples
    --------
    >>> v = build_vocabulary(["a", "b", "a"], duplicates="last", locate=row_locator("toy"), source="toy")
    >>> v.index["a"], v.n_duplicates
    (2, 1)
    """
    policy = check_choice("duplicates", duplicates, DUPLICATE_POLICIES)
    out: list[str] = []
    index: dict[str, int] = {}
    changed: list[tuple[str, str]] = []
    n_changed = 0
    dup_examples: list[str] = []
    for i, raw in enumerate(words):
        w = nfc(raw)
        if w is not raw and w != raw:
            n_changed += 1
            if len(changed) < _EXAMPLES:
                changed.append((raw, w))
        out.append(w)
        j = index.get(w)
        if j is None:
            index[w] = i
            continue
        if policy == "error":
            raise _duplicate_error(w, i, j, locate, words)
        if policy == "last":
            index[w] = i
        if len(dup_examples) < _EXAMPLES and w not in dup_examples:
            dup_examples.append(w)
    if n_changed:
        orig, new = changed[0]
        warnings.warn(
            f"{source}: {n_changed} word(s) were not in Unicode NFC and are stored normalised "
            f"(e.g. {ascii(orig)} -> {ascii(new)}); queries are normalised the same way",
            IsoeatWarning, stacklevel=3,
        )
    return Vocabulary(tuple(out), index, policy, n_changed, tuple(changed), len(out) - len(index),
                      tuple(dup_examples))


def _duplicate_error(word: str, i: int, j: int, locate: Locate, raw: Sequence[str]) -> DataFormatError:
    at, _ = locate(i)
    _, first = locate(j)
    how = " after Unicode NFC normalisation" if raw[i] != raw[j] else ""
    return DataFormatError(
        f"{at}: word {word!r} appears again (first {first}){how}; "
        "choose which vector to keep with duplicates='first' or 'last'"
    )
