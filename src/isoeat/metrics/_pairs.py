"""Defining pairs of the word-pair metrics (RIPA, direct bias, SemAxis): where they come from.

In order: pairs given by the caller (``pairs=[("she", "he"), ...]`` or
``pairs="gender"``), the test's own ``pairs`` (an optional field of a test),
A and B zipped word by word when they have the same length (``A[i]``,
``B[i]``, in their published order), Bolukbasi et al.'s gender pairs for a
Gender test whose A and B differ in length; otherwise an error that says
what to pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._errors import ConfigError
from ..wordsets._spec import pair_conflict

__all__ = ["GENDER_PAIRS", "PairSpec", "check_pairs", "resolve_pairs", "format_pairs"]

#: The ten gender-defining pairs of Bolukbasi et al. (2016, §5, Figure "gender pairs"), female word first.
GENDER_PAIRS: tuple[tuple[str, str], ...] = (
    ("she", "he"), ("her", "his"), ("woman", "man"), ("Mary", "John"), ("herself", "himself"),
    ("daughter", "son"), ("mother", "father"), ("gal", "guy"), ("girl", "boy"), ("female", "male"),
)

#: Words of ``source`` for the result's ``pairs_source`` field.
SOURCES = ("given", "gender-default", "test", "zip(A,B)")


@dataclass(frozen=True)
class PairSpec:
    """Defining pairs before lookup: the pairs, where they came from, and a note for the result."""

    pairs: tuple[tuple[str, str], ...]
    source: str
    note: str = ""


def check_pairs(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    """``value`` as a tuple of two-word pairs, or a one-line error naming ``where``.

    Refused: not a non-empty list of pairs of non-empty words, a pair naming
    one word twice, a pair repeated, a pair reversed (:func:`isoeat.wordsets._spec.pair_conflict`).
    """
    try:
        pairs = tuple((p[0], p[1]) for p in value if len(p) == 2)
        ok = len(pairs) == len(value) and all(isinstance(w, str) and w.strip() for p in pairs for w in p)
    except (TypeError, KeyError, IndexError):
        ok = False
    if not ok or not pairs:
        raise ConfigError(f"{where} must be 'gender' or a non-empty list of (word, word) pairs, e.g. "
                          "[('she', 'he'), ('woman', 'man')]")
    same = [p for p in pairs if p[0] == p[1]]
    if same:
        raise ConfigError(f"{where}: the pair {same[0]!r} names one word twice; a pair needs two words")
    conflict = pair_conflict(pairs)
    if conflict:  # the message names pairs[i]: "pairs" itself need not be said twice
        lead = where[:-len("pairs")] if where.endswith("pairs") and not where.startswith("--") else f"{where}: "
        raise ConfigError(lead + conflict)
    return pairs


def resolve_pairs(pairs: Any, test: Any) -> PairSpec:
    """The defining pairs a word-pair metric uses on ``test`` (rules in the module docstring).

    Examples
    --------
    >>> from isoeat.wordsets import get_test
    >>> spec = resolve_pairs(None, get_test("W7"))
    >>> spec.source, spec.pairs[:2]
    ('zip(A,B)', (('male', 'female'), ('man', 'woman')))
    >>> resolve_pairs("gender", get_test("W7")).pairs[0]
    ('she', 'he')
    """
    if isinstance(pairs, str):
        if pairs != "gender":
            raise ConfigError(f"pairs must be 'gender' or a list of (word, word) pairs; got {pairs!r}")
        return PairSpec(GENDER_PAIRS, "gender-default", "Bolukbasi et al. (2016) gender pairs, female word first")
    if pairs is not None:
        return PairSpec(check_pairs(pairs, "pairs"), "given")
    own = getattr(test, "pairs", None)
    if own:
        return PairSpec(check_pairs(own, f"test {test.id}: pairs"), "test")
    A, B = test.A.words, test.B.words
    if len(A) == len(B):
        return PairSpec(tuple(zip(A, B)), "zip(A,B)", "pairs derived by zipping A and B in their listed order")
    if str(getattr(test, "bias_type", "")).lower() == "gender":
        return PairSpec(GENDER_PAIRS, "gender-default",
                        f"A and B differ in length ({len(A)}, {len(B)}): Bolukbasi et al. (2016) gender pairs, "
                        "female word first")
    raise ConfigError(
        f"test {test.id}: the word-pair metrics need defining pairs; A and B differ in length ({len(A)}, {len(B)}) "
        "and the test lists none: pass pairs=[(word, word), ...] (--pairs w1:w2,...) or pairs='gender'"
    )


def format_pairs(pairs: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """``("she-he", ...)`` for the result record.

    Examples
    --------
    >>> format_pairs([("she", "he")])
    ('she-he',)
    """
    return tuple(f"{a}-{b}" for a, b in pairs)
