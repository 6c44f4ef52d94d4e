"""One validity check for WEAT, SC-WEAT and SEAT: is this test measurable as given?

:func:`check_test` refuses, with an :class:`~isoeat.InvalidTestError` naming
the test id, the sets and the words:

* a set of fewer than 2 words (after out-of-vocabulary words were dropped);
* X identical to Y, or A identical to B (the statistic would be 0 by construction);
* two words of one set that are the same vocabulary entry (``Bill`` and
  ``bill`` when the lookup falls back to lowercase; ``new york``, ``new  york`` and
  ``new_york``, one phrase): the entry would count twice;
* ``ddof`` not below the number of values the standard deviation is taken
  over (``|X| + |Y|`` for WEAT, ``|A| + |B|`` for SC-WEAT);
* vectors of dimension < 2 (every cosine is +-1), zero or non-finite vectors.

Partial overlaps -- X and Y sharing a word, A and B sharing a word, a target
word that is also an attribute word -- are refused too unless
``allow_overlap=True``, which proceeds with an :class:`~isoeat.IsoeatWarning`
(none of the built-in tests W1..W10 overlaps; a user list may do so on
purpose, e.g. to probe a word against sets it belongs to).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from .._errors import InvalidTestError, IsoeatWarning

__all__ = ["check_test", "vocabulary_entries", "embedded_entries", "missing_parts_note"]

TARGETS = ("X", "Y")
ATTRIBUTES = ("A", "B")


def vocabulary_entries(
    found: Sequence[str], case_folded: Sequence[tuple[str, str]] = (), embedded: Sequence[tuple[str, str]] = ()
) -> list[str]:
    """The vocabulary entry each found word stands for (its lowercase fallback when case-folded).

    A phrase's entry is its words joined by ``_`` (the phrase token it is), so ``"new york"``, ``"new  york"``
    (two spaces, a tab or a no-break space between the words) and the token ``"new_york"`` are one entry and
    never count twice. A phrase embedded as the mean of its words (``embedded``: ``Lookup.embedded``) is the
    mean of the same words in any order: its entry is the sorted words joined by ``" + "``, so ``"new york"``
    and ``"york new"``, one vector, are one entry too (:mod:`isoeat.backends._phrases`).

    Examples
    --------
    >>> vocabulary_entries(["Bill", "bill"], [("Bill", "bill")])
    ['bill', 'bill']
    >>> vocabulary_entries(["new york", "new  york", "new_york", "New York"], [("New York", "new york")])
    ['new_york', 'new_york', 'new_york', 'new_york']
    >>> vocabulary_entries(["new york", "york new"], (), [("new york", "mean-of-words"), ("york new", "mean-of-words")])
    ['new + york', 'new + york']
    """
    folded = dict(case_folded)
    how = dict(embedded)
    return [_entry_key(folded.get(w, w), how.get(w) == "mean-of-words") for w in found]


def _entry_key(entry: str, mean: bool = False) -> str:
    """``entry`` with the words of a phrase joined by ``_`` (a mean of words: sorted, joined by ``" + "``)."""
    parts = entry.split()
    if len(parts) < 2:
        return entry
    return " + ".join(sorted(parts)) if mean else "_".join(parts)


def embedded_entries(lookup: object, role: str) -> list[str]:
    """``"ROLE:stimulus->how"`` for each stimulus a lookup embedded other than as one token (phrases).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> embedded_entries(SimpleNamespace(embedded=(("new york", "mean-of-words"),)), "X")
    ['X:new york->mean-of-words']
    """
    return [f"{role}:{w}->{how}" for w, how in getattr(lookup, "embedded", ())]


def missing_parts_note(lookup: object) -> str:
    """``" (phrase 'new yrok': 'yrok' not in the vocabulary)"`` for the missing phrases of a lookup, else ``""``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> missing_parts_note(SimpleNamespace(missing_parts=(("new yrok", "yrok"),)))
    " (phrase 'new yrok': its word 'yrok' is not in the vocabulary)"
    """
    parts = getattr(lookup, "missing_parts", ())
    if not parts:
        return ""
    shown = "; ".join(f"phrase {p!r}: its word {w!r} is not in the vocabulary" for p, w in parts[:10])
    return f" ({shown}{' ...' if len(parts) > 10 else ''})"


def _shown(words: Sequence[str], limit: int = 8) -> str:
    words = list(dict.fromkeys(words))
    return ", ".join(map(repr, words[:limit])) + (" ..." if len(words) > limit else "")


def _check_vectors(test_id: str, role: str, M: np.ndarray, words: Sequence[str] | None) -> None:
    if M.ndim == 2 and M.shape[1] < 2:
        raise InvalidTestError(f"test {test_id}: vectors of dimension {M.shape[1]}; cosines need dimension >= 2")
    rows = ~np.isfinite(M).all(axis=1) | ~(np.abs(M).max(axis=1, initial=0.0) > 0)
    if rows.any():
        i = int(np.argmax(rows))
        what = repr(words[i]) if words is not None and i < len(words) else f"row {i}"
        kind = "not finite" if not np.isfinite(M[i]).all() else "all zeros"
        raise InvalidTestError(f"test {test_id}: set {role}: the vector of {what} is {kind}; cosine is undefined")


def _check_duplicates(test_id: str, role: str, words: Sequence[str], entries: Sequence[str]) -> None:
    seen: dict[str, str] = {}
    for w, e in zip(words, entries):
        if e in seen:
            same = (f"{seen[e]!r} and {w!r}, which are the same vocabulary entry {e!r}" if seen[e] != w
                    else f"{w!r} twice")
            raise InvalidTestError(f"test {test_id}: set {role} lists {same}; drop one of them")
        seen[e] = w


def _overlap(test_id: str, first: str, second: str, common: set[str], allow: bool) -> None:
    if not common:
        return
    msg = f"test {test_id}: sets {first} and {second} share {len(common)} word(s): {_shown(sorted(common))}"
    if not allow:
        raise InvalidTestError(msg + "; pass allow_overlap=True (--allow-overlap, settings.allow_overlap) "
                               "to measure it anyway")
    warnings.warn(msg + " (allow_overlap=True)", IsoeatWarning, stacklevel=3)


def check_test(
    test_id: str,
    *,
    words: Mapping[str, Sequence[str]] | None = None,
    entries: Mapping[str, Sequence[str]] | None = None,
    vectors: Mapping[str, np.ndarray] | None = None,
    ddof: int | None = None,
    sd_over: Sequence[str] = TARGETS,
    allow_overlap: bool = False,
) -> None:
    """Refuse a test that cannot be measured as given (rules in the module docstring).

    Parameters
    ----------
    test_id : str
        Named in every message.
    words : mapping role -> words, optional
        The words (or sentences) of each set that were found, in the order of
        their vectors. Roles are ``"X"``, ``"Y"``, ``"A"``, ``"B"`` (SC-WEAT:
        ``"A"`` and ``"B"``, plus the target as ``"w"``).
    entries : mapping role -> vocabulary entries, optional
        What each word was looked up as (:func:`vocabulary_entries`);
        defaults to the words themselves.
    vectors : mapping role -> ndarray (n, dim), optional
        The vectors, checked for size, dimension, zero and non-finite rows
        and for identical sets.
    ddof : int, optional
        Checked against the number of values in the sets ``sd_over``.
    sd_over : sequence of roles, default ("X", "Y")
        The sets whose values the standard deviation of ``d`` pools.
    allow_overlap : bool, default False
        Proceed with a warning when sets share words instead of refusing.

    Raises
    ------
    InvalidTestError

    Examples
    --------
    >>> check_test("T", words={"X": ["a", "b"], "Y": ["a", "b"], "A": ["c", "d"], "B": ["e", "f"]})
    Traceback (most recent call last):
    ...
    isoeat._errors.InvalidTestError: test T: set X is identical to set Y ('a', 'b')
    """
    sizes: dict[str, int] = {}
    for role, M in (vectors or {}).items():
        M = np.asarray(M, dtype=np.float64)
        sizes[role] = M.shape[0] if M.ndim == 2 else 1
        _check_vectors(test_id, role, M.reshape(1, -1) if M.ndim == 1 else M, (words or {}).get(role))
    keys = {role: list((entries or words or {}).get(role, ())) for role in (words or entries or {})}
    for role, ws in (words or {}).items():
        sizes.setdefault(role, len(ws))
        _check_duplicates(test_id, role, ws, keys.get(role, ws))
    for role, n in sizes.items():
        if role != "w" and n < 2:
            raise InvalidTestError(f"test {test_id}: set {role} has {n} word(s); at least 2 are needed")
    for first, second in (TARGETS, ATTRIBUTES):
        if first in keys and second in keys and keys[first] and set(keys[first]) == set(keys[second]):
            raise InvalidTestError(f"test {test_id}: set {first} is identical to set {second} ({_shown(keys[first])})")
        if (vectors and first in vectors and second in vectors
                and np.array_equal(np.asarray(vectors[first]), np.asarray(vectors[second]))):
            raise InvalidTestError(f"test {test_id}: set {first} is identical to set {second} (the same vectors)")
    for first, second in (TARGETS, ATTRIBUTES):
        if first in keys and second in keys:
            _overlap(test_id, first, second, set(keys[first]) & set(keys[second]), allow_overlap)
    targets = {e for r in (*TARGETS, "w") for e in keys.get(r, ())}
    attributes = {e for r in ATTRIBUTES for e in keys.get(r, ())}
    _overlap(test_id, "targets", "attributes", targets & attributes, allow_overlap)
    if ddof is not None:
        n = sum(sizes.get(r, 0) for r in sd_over)
        if n and ddof >= n:
            raise InvalidTestError(
                f"test {test_id}: ddof={ddof} must be below the {n} values of sets {'+'.join(sd_over)} "
                "that the standard deviation pools"
            )
