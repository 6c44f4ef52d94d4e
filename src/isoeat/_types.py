"""What the statistics need from a model and from a calibrator, as structural types.

These Protocols sit in a neutral module so that :mod:`isoeat.stats` can name
them in its signatures without importing :mod:`isoeat.backends` or
:mod:`isoeat.calibration` (the data flow runs backends -> calibration ->
statistics, never back). Any object with the right methods qualifies: a
loaded model, a user's own wrapper, a test double.

Examples
--------
>>> import numpy as np
>>> class Identity:
...     name = "identity"
...     def transform(self, X):
...         return np.asarray(X)
>>> isinstance(Identity(), Calibrator)
True
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol, Sequence, runtime_checkable

import numpy as np

__all__ = ["WordLookup", "Encoder", "SentenceEncoder", "Calibrator"]


class WordLookup(Protocol):
    """The report :meth:`Encoder.lookup` returns (e.g. :class:`isoeat.Lookup`).

    Attributes
    ----------
    vectors : ndarray of shape (n_found, dim)
        Vectors of the found words, in order.
    found, missing : tuple of str
        Words found, and words not in the vocabulary.
    case_folded : tuple of (str, str)
        ``(word, entry)`` pairs found only by the lowercase fallback.
    coverage : float
        Share of the words asked for that were found.
    """

    vectors: np.ndarray
    found: tuple[str, ...]
    missing: tuple[str, ...]
    case_folded: tuple[tuple[str, str], ...]

    @property
    def coverage(self) -> float: ...


@runtime_checkable
class Encoder(Protocol):
    """A model that maps words to vectors: what :func:`isoeat.weat` and :func:`isoeat.sc_weat` use.

    ``name`` labels results; ``lookup`` returns the vectors and the coverage
    report. Fitting a calibrator by name (``calibration="zca"``) also needs
    ``reference_vectors`` (see :func:`isoeat.fit_calibrator`).
    """

    name: str

    def lookup(self, words: Sequence[str]) -> WordLookup: ...


@runtime_checkable
class SentenceEncoder(Protocol):
    """A model that embeds whole texts: what :func:`isoeat.seat` uses.

    ``encode_sentences`` is used when present (contextual ``hf:`` encoders),
    ``encode`` otherwise (sentence-transformers ``st:`` encoders).
    """

    name: str

    def encode(self, texts: Iterable[str]) -> np.ndarray: ...


@runtime_checkable
class Calibrator(Protocol):
    """A fitted transform of embedding vectors (stage 2), e.g. :class:`isoeat.ZCAWhitener`.

    ``name`` is recorded as the result's ``calibration``. ``n_features_in_``
    and ``metadata_["model_fingerprint"]``, when present, are checked against
    the model before it is applied.
    """

    name: str

    def transform(self, X: Any) -> np.ndarray: ...
