"""What the statistics and the engine may ask of a model and of a calibrator, as structural types.

The engine (:mod:`isoeat.experiments.engine`) and the commands ask a model
only for what these Protocols declare, never for a private attribute:

* :class:`Encoder`: ``name``, ``lookup(words)`` — every test and metric;
* identity: ``fingerprint`` (content hash, keys reuse), ``kind`` (``"static"``,
  ``"transformer"``, ``"sentence"``), ``dim``, ``describe()`` — read with
  :func:`fingerprint_of` and :func:`kind_of` (absent on a user's own wrapper);
* :class:`ReferenceModel`: ``reference_vectors(n, text=..., seed=...)`` — fitting a calibrator;
* :class:`StreamingReference` (``reference_batches``), :class:`StatisticsReference`
  (``reference_statistics``), :class:`ChunkedReference` (``chunk_size``, ``reference_metadata``) —
  contextual encoders that stream their reference;
* :class:`ContextEncoder`: ``context_vectors(words)`` — CEAT;
* :class:`CorpusModel`: ``corpus``, ``loaded_corpus`` — the corpus an encoder reads (provenance, cell reuse);
* :class:`VocabularyModel`: ``vectors``, ``words``, ``row(word)`` — static vectors (anisotropy frames);
* :class:`LayeredModel`: ``layer_sweep(layers)`` — ``--layers``; its ``layer`` read with :func:`layer_of`
  (recorded by a calibrator, checked against the model it is applied to), its ``n_layers`` with :func:`n_layers_of`;
* :class:`DescribedModel` (``describe()``), :class:`SuggestingModel` (``suggest(words)``: near entries of a
  missing word).

Each question about a model has one function here, and no other module asks it by a string probe
(``getattr(model, "...")``, ``hasattr(model, "...")``; ``tests/test_capabilities.py`` checks the sources): is it
contextual (:func:`streams_reference`: ``hf:``, ``st:``, ``minilm``, ``mpnet``; before loading, a spec's
:func:`isoeat.backends._registry.spec_kind`), does it give a word's contexts (``isinstance(model,
ContextEncoder)``), how does it embed a whole text (:func:`sentence_pooling_of`, :func:`sentence_encoder_of`),
and its optional values: :func:`name_of`, :func:`dim_of`, :func:`fingerprint_of`, :func:`kind_of`,
:func:`corpus_name_of`, :func:`loaded_corpus_of`, :func:`contexts_per_word_of`, :func:`reference_unit_of`,
:func:`lowercase_fallback_of`.

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

import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # annotations only: importing the protocols loads no numpy (``isoeat COMMAND --help``)
    import numpy as np

__all__ = ["WordLookup", "Encoder", "SentenceEncoder", "Calibrator", "ReferenceModel", "StreamingReference",
           "StatisticsReference", "ChunkedReference", "ContextEncoder", "CorpusModel", "VocabularyModel",
           "LayeredModel", "DescribedModel", "SuggestingModel", "fingerprint_of", "layer_of", "kind_of",
           "streams_reference", "name_of", "dim_of", "corpus_name_of", "loaded_corpus_of", "contexts_per_word_of",
           "reference_unit_of", "n_layers_of", "lowercase_fallback_of", "sentence_pooling_of", "sentence_encoder_of",
           "sentence_pooling_name_of"]


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


@runtime_checkable
class ReferenceModel(Protocol):
    """A model that can give reference vectors for fitting a calibrator (stage 1)."""

    def reference_vectors(self, n: int, **kwargs: Any) -> tuple[np.ndarray, str]: ...


@runtime_checkable
class StreamingReference(Protocol):
    """A contextual encoder that streams its reference vectors in batches (no n x d matrix in memory)."""

    def reference_batches(self, n: int, **kwargs: Any) -> tuple[Any, str]: ...


@runtime_checkable
class StatisticsReference(Protocol):
    """An encoder that gives the mergeable statistics of its reference (cached per chunk: no re-encoding)."""

    def reference_statistics(self, n: int, **kwargs: Any) -> tuple[Any, str]: ...


@runtime_checkable
class ChunkedReference(Protocol):
    """An encoder whose reference is encoded in ``chunk_size``-sentence chunks, counted by ``reference_metadata``."""

    chunk_size: int

    def reference_metadata(self, n: int, **kwargs: Any) -> dict: ...


@runtime_checkable
class ContextEncoder(Protocol):
    """A contextual encoder: a word's vectors in each of its corpus contexts (CEAT)."""

    def context_vectors(self, words: Sequence[str]) -> tuple[dict, dict]: ...


@runtime_checkable
class CorpusModel(Protocol):
    """An encoder that reads a corpus (its reference sentences, a word's contexts): the corpus, and whether loaded."""

    @property
    def corpus(self) -> Any: ...

    @property
    def loaded_corpus(self) -> Any: ...


@runtime_checkable
class VocabularyModel(Protocol):
    """Static vectors: the matrix, the vocabulary in row order, and the row of a word."""

    vectors: Any
    words: Any

    def row(self, word: str) -> tuple[int | None, str | None]: ...


@runtime_checkable
class LayeredModel(Protocol):
    """A transformer whose layers can be swept (``isoeat run --layers``)."""

    def layer_sweep(self, layers: Any, *, name: str = ...) -> Any: ...


@runtime_checkable
class DescribedModel(Protocol):
    """A model that describes its own provenance (a loaded model's ``describe()``: name, source, sha256, ...)."""

    def describe(self) -> dict[str, Any]: ...


@runtime_checkable
class SuggestingModel(Protocol):
    """A model that names near vocabulary entries of words it lacks (``suggest(words)``: word -> entries)."""

    def suggest(self, words: Iterable[str], n: int = ...) -> dict[str, tuple[str, ...]]: ...


def name_of(model: Any, default: str = "") -> str:
    """The model's ``name`` (its label in results and messages), ``default`` for an object that has none."""
    name = getattr(model, "name", None)
    return default if name is None else str(name)


def dim_of(model: Any) -> Any:
    """The model's vector dimension as it states it (``dim``), None for an object that does not say."""
    return getattr(model, "dim", None)


def corpus_name_of(model: Any) -> str:
    """The name of the corpus a contextual encoder reads (its contexts, its reference), "" for static vectors."""
    return str(getattr(model, "corpus_name", "") or "")


def loaded_corpus_of(model: Any) -> Any:
    """The corpus a contextual encoder has loaded, None before it has (or for static vectors). Never loads it:
    ``isinstance(model, CorpusModel)`` evaluates the ``corpus`` property on Python < 3.12, which loads it."""
    return getattr(model, "loaded_corpus", None)


def contexts_per_word_of(model: Any) -> Any:
    """How many contexts a contextual encoder averages per word (``contexts_per_word``), None for other models."""
    return getattr(model, "contexts_per_word", None) if isinstance(model, ContextEncoder) else None


def reference_unit_of(model: Any) -> str:
    """What a contextual encoder's reference vectors are (``"word"`` or ``"sentence"``); ``"sentence"`` for a
    model that does not say (static vectors, ``st:`` encoders: one unit only)."""
    return str(getattr(model, "reference_unit", None) or "sentence")


def n_layers_of(model: Any) -> int | None:
    """How many hidden layers a layered encoder has (``n_layers``), None for other models or before it says."""
    if not isinstance(model, LayeredModel):
        return None
    n = getattr(model, "n_layers", None)
    return None if n is None else int(n)


def lowercase_fallback_of(model: Any) -> bool:
    """Whether a vocabulary looks a word up lowercased when its own case is missing (``lowercase_fallback``)."""
    return bool(getattr(model, "lowercase_fallback", False))


def sentence_pooling_of(model: Any) -> Callable[..., Any] | None:
    """The model's own pooling of whole texts (``encode_sentences``: ``hf:`` and ``st:`` encoders), else None
    (static vectors: a text is pooled from its words' vectors by the caller)."""
    fn = getattr(model, "encode_sentences", None)
    return fn if callable(fn) else None


def sentence_pooling_name_of(model: Any) -> str:
    """How the model pools a text's tokens into one vector, as SEAT records it (``sentence_pooling_name``:
    ``"st: mean"``, ``"hf: cls"``, ...), or ``""`` for a model that does not say (a user's own encoder)."""
    name = getattr(model, "sentence_pooling_name", "")
    return str(name) if name else ""


def sentence_encoder_of(model: Any) -> Callable[..., Any] | None:
    """How SEAT embeds a text with ``model``: :func:`sentence_pooling_of`, else its ``encode`` (a
    :class:`SentenceEncoder`, e.g. a user's wrapper), else None (static word vectors only)."""
    fn = sentence_pooling_of(model) or getattr(model, "encode", None)
    return fn if callable(fn) else None


def fingerprint_of(model: Any) -> str | None:
    """The model's content fingerprint (None for an object that has none, e.g. a user's own wrapper)."""
    fp = getattr(model, "fingerprint", None)
    return None if fp is None else str(fp)


def layer_of(model: Any) -> int | None:
    """The hidden layer a layered encoder's vectors come from (``hf:`` models: ``layer``), else None."""
    if not isinstance(model, LayeredModel):
        return None
    layer = getattr(model, "layer", None)
    return int(layer) if isinstance(layer, numbers.Integral) and not isinstance(layer, bool) else None


def kind_of(model: Any) -> str:
    """``"static"``, ``"transformer"`` or ``"sentence"`` (a model that does not say is static)."""
    return str(getattr(model, "kind", None) or "static")


def streams_reference(model: Any) -> bool:
    """Whether the model streams its reference (a contextual encoder) rather than holding it as rows."""
    return isinstance(model, StreamingReference)
