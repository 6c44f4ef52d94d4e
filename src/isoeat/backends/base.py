"""The encoder interface every backend implements, and the lookup report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Encoder", "Lookup"]


@dataclass(frozen=True)
class Lookup:
    """Result of looking words up in a model.

    Attributes
    ----------
    words : tuple of str
        The words asked for, in order.
    vectors : numpy.ndarray
        ``(n_found, dim)`` float64 vectors of the found words, in order.
    found : tuple of str
        The words that were found (same order as ``vectors``).
    missing : tuple of str
        Words not in the vocabulary (out of vocabulary, OOV).
    case_folded : tuple of (str, str)
        ``(word, vocabulary entry)`` pairs found only by the lowercase fallback.
    embedded : tuple of (str, str)
        ``(stimulus, how)`` for every found stimulus not embedded as one vocabulary token: ``how`` is
        ``"phrase-token"`` (its words joined by ``_``, ``new_york``) or ``"mean-of-words"`` (the mean of its
        words' raw vectors); see :data:`isoeat.backends._phrases.PHRASE_RULE`. Every other found stimulus
        is a ``"token"`` (:meth:`how`). Static vectors only; contextual models match phrases in their contexts.
    missing_parts : tuple of (str, str)
        ``(phrase, word)`` for every missing phrase: the first of its words not in the vocabulary.
    """

    words: tuple[str, ...]
    vectors: np.ndarray
    found: tuple[str, ...]
    missing: tuple[str, ...]
    case_folded: tuple[tuple[str, str], ...] = ()
    embedded: tuple[tuple[str, str], ...] = ()
    missing_parts: tuple[tuple[str, str], ...] = ()

    def how(self, word: str) -> str:
        """How a found stimulus was embedded: ``"token"``, ``"phrase-token"`` or ``"mean-of-words"``."""
        return dict(self.embedded).get(word, "token")

    @property
    def coverage(self) -> float:
        """Share of the words that were found (1.0 for an empty request)."""
        return len(self.found) / len(self.words) if self.words else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_words": len(self.words),
            "n_found": len(self.found),
            "coverage": self.coverage,
            "missing": list(self.missing),
            "case_folded": [list(p) for p in self.case_folded],
            "embedded": [list(p) for p in self.embedded],
            "missing_parts": [list(p) for p in self.missing_parts],
        }


@runtime_checkable
class Encoder(Protocol):
    """What statistics and calibration need from a model.

    Attributes
    ----------
    name : str
        The spec it was loaded from, e.g. ``"glove-6b-50d"``.
    dim : int
        Vector dimension.
    fingerprint : str
        A stable hash identifying the model's vectors (used to refuse applying
        a whitener fitted on another model).
    """

    name: str
    dim: int

    @property
    def fingerprint(self) -> str: ...

    def lookup(self, words: Any) -> Lookup: ...

    def reference_vectors(self, n: int = 100_000, **kwargs: Any) -> tuple[np.ndarray, str]: ...
