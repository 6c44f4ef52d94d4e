"""The association-test specification: four word sets and their metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._errors import ConfigError
from .._names import check_label
from ._safe_load import safe_repr, safe_show

__all__ = ["WordSet", "AssociationTest", "BIAS_TYPES", "pair_conflict", "LIBRARY_FIELDS"]

#: The provenance fields of a test beside ``citation`` and ``provenance`` (read and written by test files).
LIBRARY_FIELDS = ("reference", "lists_from", "licence", "composed")

#: Bias categories of the ten standard WEATs (paper Table 1). User tests may
#: use any other label; these are the ones the reports group by.
BIAS_TYPES = ("Valence", "Race", "Gender", "Health", "Age")


@dataclass(frozen=True)
class WordSet:
    """A named, ordered tuple of stimulus words (or sentences, for SEAT).

    Parameters
    ----------
    name : str
        Label of the set, e.g. ``"Flowers"``.
    words : tuple of str
        The stimuli, in their published order. Duplicates are refused.

    Examples
    --------
    >>> WordSet("Career", ("executive", "management")).words
    ('executive', 'management')
    """

    name: str
    words: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError(f"word set name must be a non-empty string, got {safe_show(self.name)}")
        check_label(self.name, "word set name")
        words = tuple(self.words) if not isinstance(self.words, tuple) else self.words
        object.__setattr__(self, "words", words)
        for w in words:
            if not isinstance(w, str) or not w.strip():
                raise ConfigError(
                    f"word set {safe_show(self.name)}: every word must be a non-empty string, got {safe_show(w)}"
                )
            check_label(w, f"word set {safe_show(self.name)}: word")
        seen: set[str] = set()
        dups = [w for w in words if w in seen or seen.add(w)]  # type: ignore[func-returns-value]
        if dups:
            raise ConfigError(f"word set {safe_show(self.name)}: duplicate word(s) {safe_repr(sorted(set(dups)))}")

    def __len__(self) -> int:
        return len(self.words)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "words": list(self.words)}


def pair_conflict(pairs: Any, show: Any = None) -> str | None:
    """Why a list of defining pairs cannot define one direction, or ``None``: a pair repeated or reversed.

    The one rule of every word-pair metric (RIPA, direct bias, SemAxis) and of a
    test file's ``pairs``: ``(a, b)`` listed twice counts one relation twice;
    ``(a, b)`` with ``(b, a)`` points the relation both ways, so no side is the
    first words' side. The message names the later pair and the earlier one
    (``show`` writes a pair; default ``repr``).

    Examples
    --------
    >>> pair_conflict([("she", "he"), ("woman", "man")]) is None
    True
    >>> pair_conflict([("she", "he"), ("he", "she")])
    "pairs[1] ('he', 'she') contradicts pairs[0] ('she', 'he'): the same two words in the other order point the
    direction both ways; keep the one whose first word is on the side you mean"
    """
    show = show or repr
    seen: dict[tuple, int] = {}
    for i, p in enumerate(pairs):
        a, b = p
        if (a, b) in seen:
            return f"pairs[{i}] {show(p)} is listed more than once (also pairs[{seen[(a, b)]}]); a pair counts once"
        if (b, a) in seen:
            j = seen[(b, a)]
            return (f"pairs[{i}] {show(p)} contradicts pairs[{j}] {show(pairs[j])}: the same two words in the other "
                    "order point the direction both ways; keep the one whose first word is on the side you mean")
        seen[(a, b)] = i
    return None


@dataclass(frozen=True)
class AssociationTest:
    """A WEAT: targets ``X``, ``Y`` and attributes ``A``, ``B`` (paper notation).

    The test asks whether ``X`` is more associated with ``A`` (and ``Y`` with
    ``B``) than the reverse; a positive effect size means it is.

    Parameters
    ----------
    id : str
        Registry id, e.g. ``"W6"``.
    bias_type : str
        Category, e.g. ``"Gender"``.
    X, Y : WordSet
        Target sets.
    A, B : WordSet
        Attribute sets.
    citation : str
        Where the stimuli come from.
    title : str
        Short human-readable description.
    provenance : tuple of str
        How the lists were established and checked.
    source : str
        ``"builtin"`` or the path of the file the test was read from.
    pairs : tuple of (str, str)
        Optional defining pairs of the word-pair metrics (RIPA, direct bias,
        SemAxis; :mod:`isoeat.metrics._pairs`), e.g. ``(("she", "he"),)``;
        empty: those metrics zip A and B or use the gender defaults. WEAT
        does not read them.
    reference : str
        Short source: the paper the test is from, or ``"composed by isoeat: ..."``.
    lists_from : str
        Where the word lists were taken from (repository, commit and file, or the paper's table).
    licence : str
        The licence(s) of the lists, ``" AND "``-joined (:data:`isoeat.wordsets._library.LICENCES`).
    composed : str
        Empty for a test its authors published; else how isoeat composed it from published lists (such a test
        is never the authors' own).
    """

    id: str
    bias_type: str
    X: WordSet
    Y: WordSet
    A: WordSet
    B: WordSet
    citation: str = ""
    title: str = ""
    provenance: tuple[str, ...] = field(default=(), repr=False)
    source: str = "builtin"
    pairs: tuple[tuple[str, str], ...] = ()
    reference: str = ""
    lists_from: str = ""
    licence: str = ""
    composed: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise ConfigError(f"test id must be a non-empty string, got {safe_show(self.id)}")
        check_label(self.id, "test id")
        for role in ("X", "Y", "A", "B"):
            if not isinstance(getattr(self, role), WordSet):
                raise ConfigError(f"test {self.id!r}: {role} must be a WordSet")
        object.__setattr__(self, "provenance", tuple(self.provenance))
        for key in LIBRARY_FIELDS:
            if not isinstance(getattr(self, key), str):
                raise ConfigError(f"test {self.id!r}: {key} must be a string, got {safe_show(getattr(self, key))}")
        pairs = tuple(tuple(p) if isinstance(p, (list, tuple)) else p for p in self.pairs)
        for p in pairs:
            if not (isinstance(p, tuple) and len(p) == 2 and all(isinstance(w, str) and w.strip() for w in p)):
                raise ConfigError(f"test {self.id!r}: every defining pair must be two non-empty words, "
                                  f"got {safe_show(p)}")
            if p[0] == p[1]:
                raise ConfigError(f"test {self.id!r}: the defining pair {safe_show(list(p))} names one word twice")
        conflict = pair_conflict(pairs, safe_repr)
        if conflict:
            raise ConfigError(f"test {self.id!r}: defining {conflict}")
        object.__setattr__(self, "pairs", pairs)

    @property
    def sizes(self) -> tuple[int, int, int, int]:
        """``(|X|, |Y|, |A|, |B|)``."""
        return (len(self.X), len(self.Y), len(self.A), len(self.B))

    def sets(self) -> dict[str, WordSet]:
        """The four sets keyed by role."""
        return {"X": self.X, "Y": self.Y, "A": self.A, "B": self.B}

    def swapped_targets(self) -> AssociationTest:
        """The same test with ``X`` and ``Y`` exchanged (negates ``d`` and ``S``)."""
        from dataclasses import replace

        return replace(self, X=self.Y, Y=self.X)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "bias_type": self.bias_type,
            "title": self.title,
            "citation": self.citation,
            **{role: ws.to_dict() for role, ws in self.sets().items()},
            "provenance": list(self.provenance),
            "source": self.source,
            **({"pairs": [list(p) for p in self.pairs]} if self.pairs else {}),
            **{k: getattr(self, k) for k in LIBRARY_FIELDS if getattr(self, k)},
        }
