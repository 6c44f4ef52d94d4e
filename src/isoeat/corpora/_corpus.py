"""``Corpus``: a seeded sample of filtered sentences with a word → sentence index."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import ConfigError, DataFormatError
from .._random import as_generator, keyed_sequence
from .._records import content_hash
from .._validate import check_int
from ._files import texts_sha256
from ._index import TOKEN_RE, WordIndex, word_pattern
from ._readers import ReadStats, text_paragraphs
from ._text import PREPROCESS_VERSION, has_formula, normalize_space

__all__ = ["Corpus", "Contexts", "Sample", "check_settings", "word_rng"]

_DEFAULTS = {"min_tokens": 7, "max_tokens": 75, "max_sentences": 200_000, "seed": 0}
_CACHE_SIZE = 4096  # words whose matching sentence ids a corpus keeps


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Contexts:
    """Sentences of a corpus that contain a word, for contextual word vectors.

    Attributes
    ----------
    word : str
        The word as queried (white space normalised).
    sentences : tuple of str
        Up to ``k`` sentences, a seeded sample without replacement of all
        indexed sentences with a whole-word occurrence of ``word``.
    n_available : int
        How many indexed sentences contain the word (in the mode used).
    case_insensitive : bool
        True when the case-sensitive search found nothing and the sentences
        come from the case-insensitive fallback. False otherwise, including
        when neither search found anything (``n_available == 0``).
    spans : tuple of (int, int)
        For each sentence, the character ``[start, end)`` of the *first*
        whole-word occurrence of the word (``sentence[start:end]`` is the word,
        up to case in the fallback).
    sentence_ids : tuple of int
        Positions of the sentences in ``Corpus.sentences`` (handy as cache keys).
    occurrences : tuple of tuple of (int, int)
        For each sentence, the ``[start, end)`` of *every* whole-word
        occurrence, in order (the first is ``spans[i]``); what an ``hf:``
        encoder with ``occurrences="all"`` pools.
    """

    word: str
    sentences: tuple[str, ...]
    n_available: int
    case_insensitive: bool
    spans: tuple[tuple[int, int], ...]
    sentence_ids: tuple[int, ...] = ()
    occurrences: tuple[tuple[tuple[int, int], ...], ...] = ()

    def __len__(self) -> int:
        return len(self.sentences)

    @property
    def found(self) -> bool:
        """Whether at least one sentence contains the word."""
        return self.n_available > 0


class Sample(tuple):
    """A tuple of sentences from :meth:`Corpus.sample` that also says whether it was capped.

    Attributes
    ----------
    n_requested : int
        The ``n`` asked for.
    capped : bool
        True when the corpus has fewer than ``n_requested`` sentences, so all
        of them were returned (``len(sample) < n_requested``).
    sentence_ids : tuple of int
        Positions of the sentences in ``Corpus.sentences``.
    """

    n_requested: int
    capped: bool
    sentence_ids: tuple[int, ...]

    def __new__(cls, items: Iterable[str], n_requested: int, sentence_ids: Sequence[int] = ()) -> Sample:
        self = super().__new__(cls, items)
        self.n_requested = int(n_requested)
        self.capped = len(self) < self.n_requested
        self.sentence_ids = tuple(int(i) for i in sentence_ids)
        return self

    def __reduce__(self):  # keep the attributes through pickle
        return (Sample, (tuple(self), self.n_requested, self.sentence_ids))


# ---------------------------------------------------------------------------
# validation, sampling
# ---------------------------------------------------------------------------


def check_settings(min_tokens: Any, max_tokens: Any, max_sentences: Any, seed: Any) -> dict[str, int]:
    """Validate the corpus settings; :class:`~isoeat.ConfigError` names the bad parameter."""
    s = {
        "min_tokens": check_int("min_tokens", min_tokens, lo=1),
        "max_tokens": check_int("max_tokens", max_tokens, lo=1),
        "max_sentences": check_int("max_sentences", max_sentences, lo=1),
        "seed": check_int("seed", seed, lo=0),
    }
    if s["min_tokens"] > s["max_tokens"]:
        raise ConfigError(
            f"min_tokens must be <= max_tokens, got min_tokens={s['min_tokens']} > max_tokens={s['max_tokens']}"
        )
    return s


@dataclass(frozen=True)
class TextOrigin:
    """Where a corpus's text comes from: its name, its description, the counts of its reading, and the SHA-256 of
    its bytes (``source_sha256()``, asked once the stream is read: a streamed source knows its hash only then)."""

    name: str
    source: str
    stats: ReadStats
    source_sha256: Callable[[], str | None] = lambda: None


class _Reservoir:
    """Algorithm R with the seed's generator: a uniform sample of ``k`` items of a stream.

    Item ``n`` (0-based, ``n >= k``) replaces slot ``floor(u * (n + 1))`` when
    that is ``< k``, with ``u`` the next of ``Generator.random`` drawn in blocks
    of 65,536; the result depends only on the stream, ``k`` and the seed.
    """

    _BLOCK = 1 << 16

    def __init__(self, k: int, seed: int):
        self.k = k
        self.n = 0
        self.items: list[tuple[int, str]] = []
        self._rng = as_generator(seed, name="seed")
        self._u: list[float] = []
        self._ui = 0

    def add(self, item: str) -> None:
        n = self.n
        self.n = n + 1
        if n < self.k:
            self.items.append((n, item))
            return
        if self._ui >= len(self._u):
            self._u = self._rng.random(self._BLOCK).tolist()
            self._ui = 0
        j = int(self._u[self._ui] * (n + 1))
        self._ui += 1
        if j < self.k:
            self.items[j] = (n, item)

    def result(self) -> list[str]:
        """The sample in stream order."""
        return [s for _, s in sorted(self.items)]


def word_rng(seed: int, word: str) -> np.random.Generator:
    """The generator of ``word``'s context sample: seeded by ``seed`` and the word, so call order does not matter.

    ``SeedSequence([seed, h])`` with ``h`` the first 8 bytes (little-endian) of
    the SHA-256 of the word's UTF-8; :meth:`Corpus.contexts` and the ``hf:``
    encoders draw contexts with it.
    """
    h = int.from_bytes(hashlib.sha256(word.encode("utf-8", "surrogatepass")).digest()[:8], "little")
    return as_generator(keyed_sequence(seed, h))


# ---------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------


class Corpus:
    """A reference corpus: up to ``max_sentences`` filtered sentences and a word index.

    Build one with :func:`~isoeat.corpora.load_corpus` or
    :meth:`Corpus.from_sentences`; the constructor is internal.

    Attributes
    ----------
    name : str
        The corpus name (the spec it was loaded from, or the name given).
    sentences : tuple of str
        The indexed sample, in corpus (stream) order. It is the same for the
        same content, settings and seed.
    fingerprint : str
        First 16 hex digits of the SHA-256 of the content digest (every
        sentence that passed the filters, in order) and the settings
        (``min_tokens``, ``max_tokens``, ``max_sentences``, ``seed``, the
        splitter's name and version, the clean-up rules' version). Equal
        fingerprints mean equal ``sentences``.
    source_sha256 : str or None
        SHA-256 (64 hex digits) of the bytes of the source: the file, or for a
        folder every file with its relative name
        (:func:`~isoeat.corpora.file_sha256`), or the strings given to
        :meth:`from_sentences`, or the rows streamed from ``datasets``. It
        changes whenever the source changes, also where ``fingerprint`` does
        not (a rewritten line that no sentence filter keeps); results that
        depend on the whole text (the word counts of a static model's
        reference text) are keyed on it. None for a corpus unpickled from an
        older isoeat.
    min_tokens, max_tokens, max_sentences, seed : int
        The settings.
    """

    def __init__(
        self,
        sentences: Sequence[str],
        *,
        name: str,
        source: str,
        settings: dict[str, Any],
        content_sha256: str,
        stats: ReadStats,
        source_sha256: str | None = None,
    ):
        self.name = name
        self.source = source
        self.sentences: tuple[str, ...] = tuple(sentences)
        self._settings = dict(settings)
        self.min_tokens = int(settings["min_tokens"])
        self.max_tokens = int(settings["max_tokens"])
        self.max_sentences = int(settings["max_sentences"])
        self.seed = int(settings["seed"])
        self.splitter = str(settings["splitter"])
        self.content_sha256 = content_sha256
        self.source_sha256 = source_sha256
        self.stats = stats
        self.fingerprint = content_hash({"content_sha256": content_sha256, "settings": self._settings})
        self._lock = threading.Lock()
        self._index: WordIndex | None = None
        self._cache: dict[tuple[str, bool], np.ndarray] = {}

    # -- construction ------------------------------------------------------

    @classmethod
    def _build(cls, paragraphs: Iterable[str], split: Callable[[str], list[str]], splitter_label: str,
               origin: TextOrigin, settings: dict[str, int]) -> Corpus:
        """Split, filter and sample a stream of paragraphs (``settings``: :func:`check_settings`'s, validated)."""
        min_tokens, max_tokens = settings["min_tokens"], settings["max_tokens"]
        max_sentences, seed, stats = settings["max_sentences"], settings["seed"], origin.stats
        res = _Reservoir(max_sentences, seed)
        digest = hashlib.sha256()
        add = res.add
        update = digest.update
        n_split = short = long_ = formula = 0
        for para in paragraphs:
            for sent in split(para):
                n_split += 1
                n_tok = len(sent.split())
                if n_tok < min_tokens:
                    short += 1
                elif n_tok > max_tokens:
                    long_ += 1
                elif has_formula(sent):
                    formula += 1
                else:
                    update(sent.encode("utf-8"))
                    update(b"\n")
                    add(sent)
        stats.sentences += n_split
        stats.too_short += short
        stats.too_long += long_
        stats.formula += formula
        stats.candidates += res.n
        if res.n == 0:
            raise DataFormatError(_no_sentences_message(origin.source, stats, min_tokens, max_tokens))
        recorded = {
            "min_tokens": min_tokens,
            "max_tokens": max_tokens,
            "max_sentences": max_sentences,
            "seed": seed,
            "splitter": splitter_label,
            "preprocess": PREPROCESS_VERSION,
        }
        return cls(
            res.result(),
            name=origin.name,
            source=origin.source,
            settings=recorded,
            content_sha256=digest.hexdigest(),
            stats=stats,
            source_sha256=origin.source_sha256(),
        )

    @classmethod
    def from_sentences(
        cls,
        sentences: Sequence[str],
        *,
        name: str = "sentences",
        min_tokens: int = 7,
        max_tokens: int = 75,
        max_sentences: int = 200_000,
        seed: int = 0,
    ) -> Corpus:
        """A corpus from sentences that are already split (one string per sentence).

        Each string is whitespace-normalised and kept when it has
        ``min_tokens``–``max_tokens`` whitespace tokens (and no ``formula_N``
        placeholder); at most ``max_sentences`` are kept, by seeded reservoir
        sampling, in input order.

        Parameters
        ----------
        sentences : sequence of str
            The sentences, in order.
        name : str
            Name shown in descriptions.
        min_tokens, max_tokens : int
            Inclusive bounds on whitespace tokens (defaults 7 and 75).
        max_sentences : int
            How many sentences to keep at most (default 200,000).
        seed : int
            Seed of the reservoir sample (and of the default context sampling).

        Returns
        -------
        Corpus
            Its ``source`` reads "sentences given in memory"; its
            ``source_sha256`` hashes the strings as given.

        Raises
        ------
        ConfigError
            A bad setting, a single string, or an element that is not a string.
        DataFormatError
            No sentence passes the filters.

        Examples
        --------
        >>> c = Corpus.from_sentences(["The doctor said that she would call back tomorrow."])
        >>> len(c), c.contexts("doctor").spans
        (1, ((4, 10),))
        """
        settings = check_settings(min_tokens, max_tokens, max_sentences, seed)
        if isinstance(sentences, str):
            raise ConfigError("sentences must be a sequence of strings, got a single string")
        sentences = list(sentences)
        for i, s in enumerate(sentences):
            if not isinstance(s, str):
                raise ConfigError(f"sentences[{i}] must be a string, got {type(s).__name__}")
        stats = ReadStats()
        origin = TextOrigin(str(name), "sentences given in memory", stats, lambda: texts_sha256(sentences))
        return cls._build(text_paragraphs(sentences, stats), lambda s: [s], "none (one string per sentence)", origin,
                          settings)

    # -- basic protocol ------------------------------------------------------

    def __len__(self) -> int:
        return len(self.sentences)

    def __iter__(self):
        return iter(self.sentences)

    def __repr__(self) -> str:
        return f"Corpus(name={self.name!r}, n_sentences={len(self)}, fingerprint={self.fingerprint!r})"

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_lock"] = None
        state["_index"] = None
        state["_cache"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        state.setdefault("source_sha256", None)
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def settings(self) -> dict[str, Any]:
        """The settings that enter the fingerprint."""
        return dict(self._settings)

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description for manifests and reports.

        Returns
        -------
        dict
            ``name``, ``source``, ``n_sentences``, ``n_candidates`` (sentences
            that passed the filters, before sampling), ``settings``,
            ``fingerprint``, ``content_sha256``, ``source_sha256``, ``splitter``, ``tokens``
            (how tokens are counted) and ``read`` (reader counts: files, lines,
            headers, paragraphs, sentences split, too short/long, ...).
        """
        return {
            "name": self.name,
            "source": self.source,
            "n_sentences": len(self),
            "n_candidates": self.stats.candidates,
            "settings": self.settings,
            "fingerprint": self.fingerprint,
            "content_sha256": self.content_sha256,
            "source_sha256": self.source_sha256,
            "splitter": self.splitter,
            "tokens": "whitespace tokens of the detokenised, whitespace-normalised sentence",
            "read": self.stats.as_dict(),
        }

    # -- index -------------------------------------------------------------

    @property
    def index(self) -> WordIndex:
        """The word → sentence index (built on first use, then kept)."""
        if self._index is None:
            with self._lock:
                if self._index is None:
                    self._index = WordIndex(self.sentences)
        return self._index

    def build_index(self) -> Corpus:
        """Build the word index now (it is otherwise built on the first :meth:`contexts`); returns self."""
        _ = self.index
        return self

    def _matches(self, word: str, ignore_case: bool) -> np.ndarray:
        key = (word, ignore_case)
        hit = self._cache.get(key)
        if hit is None:
            hit = self.index.find(word, ignore_case)
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = hit
        return hit

    def count(self, word: str) -> tuple[int, bool]:
        """``(n_available, case_insensitive)`` for ``word``, as :meth:`contexts` would report."""
        word = _check_word(word)
        ids = self._matches(word, False)
        if ids.size:
            return int(ids.size), False
        ids = self._matches(word, True)
        return int(ids.size), bool(ids.size)

    def contexts(self, word: str, k: int = 20, *, rng: Any = None) -> Contexts:
        """Up to ``k`` indexed sentences with a whole-word occurrence of ``word``.

        Whole word: the word (white space inside it normalised to one space)
        occurs in the sentence not preceded and not followed by a letter,
        digit or underscore (Python's ``\\w``). So ``"he"`` does not match
        ``"the"`` or ``"he_"``, but matches ``"he,"`` and ``"(he"``; a
        hyphenated or multi-word query (``"short-term"``, ``"New York"``)
        matches that exact character sequence; ``"term"`` matches inside
        ``"short-term"``. The search is case-sensitive; only when it finds
        nothing the case-insensitive search (``re.IGNORECASE``) is used, and
        the result says so (``case_insensitive=True``).

        Parameters
        ----------
        word : str
            The word or phrase (must contain a letter, digit or underscore).
        k : int
            How many sentences at most (default 20, the paper's n_i).
        rng : None, int or numpy.random.Generator
            Randomness of the sample. ``None`` (default) uses a generator
            seeded by the corpus seed and the word, so the result does not
            depend on call order. The sample is the first ``k`` of a random
            permutation of all matches, so a smaller ``k`` gives a prefix of a
            larger one for the same seed.

        Returns
        -------
        Contexts
            Empty (``n_available == 0``) when the word does not occur.

        Raises
        ------
        ConfigError
            ``k < 1``, or a word without any letter, digit or underscore.
        """
        word = _check_word(word)
        k = check_int("k", k, lo=1)
        ids = self._matches(word, False)
        ignore_case = False
        if ids.size == 0:
            ids = self._matches(word, True)
            ignore_case = bool(ids.size)
        if ids.size == 0:
            return Contexts(word, (), 0, False, (), ())
        gen = word_rng(self.seed, word) if rng is None else as_generator(rng)
        chosen = ids[gen.permutation(ids.size)[:k]]
        finditer = word_pattern(word, ignore_case).finditer
        sents, every, kept = [], [], []
        for sid in chosen.tolist():
            s = self.sentences[sid]
            found = tuple(m.span() for m in finditer(s))
            if not found:  # pragma: no cover - guarded by WordIndex.find
                continue
            sents.append(s)
            every.append(found)
            kept.append(sid)
        return Contexts(word, tuple(sents), int(ids.size), ignore_case, tuple(f[0] for f in every), tuple(kept),
                        tuple(every))

    def sample(self, n: int, *, rng: Any = None) -> Sample:
        """``n`` sentences without replacement, e.g. for reference (whitening) statistics.

        Parameters
        ----------
        n : int
            How many sentences. When the corpus has fewer, all of them are
            returned and the result's ``capped`` attribute is True (no
            warning is emitted; check ``sample.capped``).
        rng : None, int or numpy.random.Generator
            ``None`` (default) uses a generator seeded by the corpus seed.
            The sample is the first ``n`` of a random permutation, so it is
            deterministic for a given seed and a smaller ``n`` gives a prefix.

        Returns
        -------
        Sample
            A tuple of sentences with ``capped``, ``n_requested`` and ``sentence_ids``.
        """
        n = check_int("n", n, lo=1)
        gen = as_generator(keyed_sequence(self.seed, 0x73616D706C65) if rng is None else rng)
        order = gen.permutation(len(self.sentences))[:n].tolist()
        return Sample((self.sentences[i] for i in order), n, order)


def _check_word(word: Any) -> str:
    if not isinstance(word, str):
        raise ConfigError(f"word must be a string, got {type(word).__name__}")
    w = normalize_space(word)
    if not TOKEN_RE.search(w):
        raise ConfigError(f"word must contain a letter, digit or underscore, got {word!r}")
    return w


def _no_sentences_message(source: str, stats: ReadStats, min_tokens: int, max_tokens: int) -> str:
    parts = [f"{source}: no usable sentences"]
    if stats.files and stats.empty_files == stats.files:
        return "; ".join(parts + ["the file is empty" if stats.files == 1 else f"all {stats.files} files are empty"])
    detail = (
        f"read {stats.files} file(s), {stats.lines} line(s) ({stats.blank_lines} blank, "
        f"{stats.header_lines} header, {stats.skipped_lines} skipped), {stats.paragraphs} paragraph(s), "
        f"split into {stats.sentences} sentence(s)"
        if stats.files
        else f"got {stats.lines} string(s) ({stats.blank_lines} blank), {stats.sentences} sentence(s)"
    )
    parts.append(detail)
    if stats.sentences:
        why = (
            f"none kept: {stats.too_short} had fewer than {min_tokens} tokens, {stats.too_long} more than {max_tokens}"
        )
        if stats.formula:
            why += f", {stats.formula} held a formula_N placeholder"
        parts.append(why + f" (min_tokens={min_tokens}, max_tokens={max_tokens})")
    else:
        parts.append("no text found")
    return "; ".join(parts)
