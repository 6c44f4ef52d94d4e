"""Sampling frames of anisotropy: which vectors "2,000 randomly sampled embedding vectors" are drawn from.

The mean pairwise cosine of a static space depends entirely on the frame (GloVe 6B 50d, exact over every pair:
0.430 on the top 2k words, 0.220 on the top 10k, 0.012 on the top 100k, 0.113 on all 400k words, and 0.43 on
the tokens of a text, whose frequent words repeat). A figure is meaningless without its frame, so every anisotropy
result names it. Frames (``frame=`` of :func:`~isoeat.diagnostics.compare_anisotropy`, ``--frame``):

``paper`` (the default of ``isoeat run``'s isotropy check, ``isoeat anisotropy`` and Table 2)
    The paper's protocol (§4.1, §4.3, Table 2: "2,000 randomly sampled embedding vectors from WikiText-103";
    "for static models, we sample up to 100,000 vocabulary items"). A static model: the distinct words of the
    reference corpus that are in the vocabulary, each once (``corpus-types``) — WikiText-103's training text
    when ``$ISOEAT_WIKITEXT103`` names its folder, else WikiText-2 (``$ISOEAT_WIKITEXT2``, or a shared copy that
    holds its training split), else the WikiText-2 test split shipped inside isoeat (the same figures on every
    machine), named in the description (:data:`PAPER_CORPORA`); for a vocabulary lacking the corpus's words the
    reference pool stands in (``frame_or_pool``), said in the description and recorded as ``reference``.
    A contextual model: its reference sample's vectors (``reference``: vectors of reference-corpus tokens in
    their sentences). Why types, not tokens, for a static model: the paper's text says it samples "vocabulary
    items" of WikiText-103 for a static model (§4.3); the whitened figures do not decide it (the token reading
    with a calibrator fitted on the same tokens also whitens into Table 2's 0.001-0.040). ``paper-tokens``
    measures the token reading.
``paper-tokens`` (static models)
    The other reading of the paper's frame: the in-vocabulary word *tokens* of frame ``paper``'s corpus (the
    same text), as ``corpus-tokens:TEXT``. docs/diagnostics.md measures both readings on the bundled GloVe, the
    token reading also with a calibrator fitted on the same tokens, and argues the default from the paper's text.
``reference``
    The calibrator's reference pool: ``model.reference_vectors(reference_size)`` (static: the top
    ``reference_size`` vocabulary rows by frequency; contextual: word vectors of reference sentences); the
    earlier default (CHANGELOG).
``vocabulary-top:N``
    The top ``N`` vocabulary rows (static models), whatever the reference size.
``vocabulary-all``
    Every vocabulary row (static models); rows are drawn by index, the matrix is never copied whole.
``corpus-types:TEXT``
    The distinct words of a text that are in the vocabulary, each once (static models).
``corpus-tokens:TEXT``
    The word tokens of a text whose word is in the vocabulary, drawn without replacement from the token
    stream (multivariate hypergeometric over the word counts): frequency-weighted, a frequent word can be
    drawn many times, and its copies have cosine 1 with each other.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError, DataFormatError, IsoeatFileNotFoundError, IsoeatWarning
from .._random import resolve_seed
from .._types import lowercase_fallback_of, name_of
from .._validate import check_int

__all__ = ["FRAMES", "STATIC_FRAMES", "FramePopulation", "parse_frame", "static_frame_refusal", "check_frame_for",
           "frame_population", "sample_frame", "sample_reference", "paper_variables", "PAPER_CORPORA",
           "paper_corpus", "sentence_corpus"]

#: Frame kinds (``KIND`` or ``KIND:ARGUMENT``).
FRAMES = ("reference", "vocabulary-top", "vocabulary-all", "corpus-types", "corpus-tokens", "paper", "paper-tokens")
#: The kinds that sample a static model's rows (a contextual model has no vocabulary rows): refused up front for
#: a contextual model, before anything is encoded.
STATIC_FRAMES = ("vocabulary-top", "vocabulary-all", "corpus-types", "corpus-tokens", "paper-tokens")


def parse_frame(frame: str) -> tuple[str, str]:
    """``"corpus-tokens:wiki.txt"`` -> ``("corpus-tokens", "wiki.txt")``; an unknown kind is a one-line error."""
    from .._validate import check_choice

    if not isinstance(frame, str) or not frame.strip():
        raise ConfigError(f"frame: expected one of {', '.join(FRAMES)}, got {frame!r}")
    kind, _, arg = frame.strip().partition(":")
    check_choice("frame", kind, FRAMES)
    needs = {"vocabulary-top": "N", "corpus-types": "TEXT", "corpus-tokens": "TEXT"}
    if kind in needs and not arg:
        raise ConfigError(f"frame {kind}: give {kind}:{needs[kind]}")
    if kind not in needs and arg:
        raise ConfigError(f"frame {kind} takes no argument, got {frame!r}")
    return kind, arg


#: The WikiText-2 files frame paper reads (the first present).
_W2_FILES = ("wiki.train.raw", "wiki.test.raw")


def paper_variables() -> tuple[Path | None, Path | None]:
    """The WikiText-103 and WikiText-2 paths of frame ``paper`` that the environment names (None: unset), checked.

    The variables are checked as wherever a corpus is chosen (:func:`isoeat.corpora.corpus_variables`:
    ``$ISOEAT_DATA_DIR`` too), and for the file the frame reads (WikiText-103's ``wiki.train.raw``; a WikiText-2
    folder's ``wiki.train.raw`` or ``wiki.test.raw``): a variable set but naming no such text is one line
    naming it and its path, never another corpus or the reference pool instead (the verdict would change).
    """
    from ..corpora import corpus_variables

    named = corpus_variables()
    w103, w2 = named["wikitext-103"], named["wikitext-2"]
    if w103 is not None and not (w103 / "wiki.train.raw").is_file():
        raise IsoeatFileNotFoundError(
            f"$ISOEAT_WIKITEXT103={w103}: no wiki.train.raw there (frame paper reads WikiText-103's training "
            "text); point it at the WikiText-103 raw folder, or unset ISOEAT_WIKITEXT103")
    if w2 is not None and w2.is_dir() and not any((w2 / n).is_file() for n in _W2_FILES):
        raise IsoeatFileNotFoundError(
            f"$ISOEAT_WIKITEXT2={w2}: no {' or '.join(_W2_FILES)} there (frame paper reads one); point it at the "
            "WikiText-2 raw folder, or unset ISOEAT_WIKITEXT2")
    return w103, w2


def static_frame_refusal(frame: str, model: str, *, key: str | None = None) -> str | None:
    """Why ``frame`` cannot be measured on the contextual model named ``model`` (None: it can).

    ``key``: the config key that set the frame (the caller names it); else said as the parameter ``frame``.
    """
    kind, _ = parse_frame(frame)
    if kind not in STATIC_FRAMES:
        return None
    head, other = (repr(frame.strip()), "frame reference or paper") if key else \
        (f"frame={frame.strip()!r}", "frame='reference' or 'paper'")
    return (f"{head} applies to static vector models, not to the contextual model {model} (its anisotropy "
            f"samples the word vectors of its reference sentences: {other})")


def check_frame_for(model: Any, frame: str) -> None:
    """Refuse ``frame`` for ``model`` before anything is fitted or encoded: a frame of static vectors
    (:data:`STATIC_FRAMES`) on a model without vocabulary rows (a contextual encoder)."""
    from .._types import VocabularyModel

    if isinstance(model, VocabularyModel):
        parse_frame(frame)
        return
    why = static_frame_refusal(frame, name_of(model, "model"))
    if why:
        raise ConfigError(why)


#: The names of the texts frame ``paper`` reads, as its descriptions (and so the isotropy line) give them.
PAPER_CORPORA = ("WikiText-103 (train split)", "WikiText-2 (train split)", "WikiText-2 (test split, bundled)",
                 "WikiText-2 (test split)")


def _paper_text() -> tuple[Path | str, str]:
    """The text of frame ``paper``: the paper's WikiText-103 (``$ISOEAT_WIKITEXT103``), else WikiText-2
    (``$ISOEAT_WIKITEXT2``, or a shared copy holding the training split), else the WikiText-2 test split
    shipped inside isoeat (the same on every machine: a shared copy's test split is the same bytes).
    A path and its description, which starts with one of :data:`PAPER_CORPORA`."""
    from ..corpora import BUNDLED_WIKITEXT2_NAME, bundled_wikitext2_test, shared_wikitext2_path

    w103, w2 = paper_variables()
    if w103 is not None:
        return w103 / "wiki.train.raw", "WikiText-103 (train split; the paper's corpus)"
    if w2 is None:
        shared = shared_wikitext2_path()
        if shared is not None and (shared / "wiki.train.raw").is_file():
            w2 = shared
    later = " (the paper used WikiText-103, not available here)"
    if w2 is None:
        return bundled_wikitext2_test(), BUNDLED_WIKITEXT2_NAME + later
    p = Path(w2)
    if p.is_dir():
        cands = [p / n for n in _W2_FILES if (p / n).exists()]
        if not cands:
            raise ConfigError(f"frame paper: {p} holds no wiki.train.raw or wiki.test.raw")
        p = cands[0]
    split = "train" if p.name.startswith("wiki.train") else "test"
    return p, f"WikiText-2 ({split} split){later}"


def paper_corpus(sampling: str) -> str | None:
    """The name (one of :data:`PAPER_CORPORA`) of the text a frame ``paper`` sample was drawn from, read from its
    ``sampling`` description; None where it names none (a record written before isoeat named it)."""
    return next((name for name in PAPER_CORPORA if name in (sampling or "")), None)


def sentence_corpus(sampling: str) -> str | None:
    """The corpus whose sentences a contextual model's reference sample was drawn from, read from an anisotropy
    record's ``sampling`` description (``... from corpus NAME (fingerprint ...``); None where it names none."""
    import re

    m = re.search(r"sentences sampled \([^)]*\) from corpus (.+?) \(fingerprint", sampling or "")
    return m.group(1) if m else None


def _static(model: Any, frame: str) -> Any:
    from .._types import VocabularyModel

    check_frame_for(model, frame)
    if not isinstance(model, VocabularyModel):  # frame paper reaches here only for a static model
        raise ConfigError(f"frame {frame}: applies to static vector models")
    return model


def _corpus_counts(corpus: Any) -> Any:
    """Word-token counts over the indexed sentences of a reference corpus (as the encoders read it)."""
    from collections import Counter

    from .._textio import nfc
    from ..backends.static import _TOKEN_RE

    counts: Counter = Counter()
    for sentence in corpus:
        counts.update(_TOKEN_RE.findall(nfc(sentence)))
    return counts


#: The word counts of the last texts counted in this process, by their content's SHA-256: frame paper counts
#: its reference text once per run, not once per anisotropy cell (raw and each calibrated space).
_COUNTS: dict[tuple[str, ...], Any] = {}
_COUNTS_KEPT = 2
#: :func:`_text_rows` of the last texts and vocabularies in this process.
_ROWS: dict[tuple[Any, ...], tuple[Any, np.ndarray, np.ndarray]] = {}
#: A text whose counting took at least this long is kept for later processes in the embedding cache (kind
#: ``counts``), by the same content key and the bytes of the code that counts (:func:`_counts_parts`).
COUNTS_CACHE_SECONDS = 0.05


def _text_counts(text: Path | str, corpus: bool) -> Any:
    """:func:`_corpus_counts` of the named corpus ``text`` (``corpus``) or the word counts of the file ``text``,
    reused while the content is the same (the key is its SHA-256, read anew, and whether its name makes it gzip;
    a named corpus's ``content_sha256``)."""
    from ..backends.static import _word_counts

    if corpus:
        from ..corpora import load_corpus

        source = load_corpus(str(text))
        key: tuple[str, ...] = ("corpus", str(source.content_sha256))
    else:
        from .._textio import is_gzip_name
        from ..corpora._files import file_sha256

        if not Path(text).is_file():
            return _word_counts(Path(text))  # its one-line error
        # hashed now (not from a cache keyed by name, size and time), and read as its name says: the same bytes
        # named .gz are decompressed, named otherwise are not
        key = ("file", file_sha256(text, fresh=True), "gzip" if is_gzip_name(text) else "plain")
    if key not in _COUNTS:
        counts = _stored_counts(key)
        if counts is None:
            t0 = time.perf_counter()
            counts = _corpus_counts(source) if corpus else _word_counts(Path(text))
            if time.perf_counter() - t0 >= COUNTS_CACHE_SECONDS:  # a text worth keeping (WikiText-2: 0.2 s)
                _store_counts(key, counts)
        while len(_COUNTS) >= _COUNTS_KEPT:
            _COUNTS.pop(next(iter(_COUNTS)))
        _COUNTS[key] = counts
    return _COUNTS[key]


def _counts_parts(key: tuple[str, ...]) -> dict[str, Any]:
    """The cache key parts of a text's counts: its content key and the bytes of the code that counts."""
    import unicodedata

    from ..backends.cache import code_digest

    return {"text_counts": 1, "text": list(key), "code": code_digest(), "unicode": unicodedata.unidata_version}


def _stored_counts(key: tuple[str, ...]) -> Any:
    """The counts of the text with content ``key`` as counted by an earlier process (first-seen order), or None."""
    from collections import Counter

    from ..backends.cache import EmbeddingCache, quiet_get

    cache = EmbeddingCache()
    found = quiet_get(cache, "counts", _counts_parts(key)) if cache.enabled else None
    if found is None or set(found) != {"words", "counts"}:
        return None
    try:
        words = found["words"].tobytes().decode("utf-8").split("\n") if found["counts"].size else []
    except UnicodeDecodeError:
        return None
    counts = found["counts"]
    if len(words) != counts.size or counts.dtype.kind != "i":
        return None
    return Counter(dict(zip(words, (int(c) for c in counts))))


def _store_counts(key: tuple[str, ...], counts: Any) -> None:
    """Keep ``counts`` for the next process (words joined by newlines: a token never holds one)."""
    from ..backends.cache import EmbeddingCache, quiet_put

    cache = EmbeddingCache()
    if not cache.enabled or any("\n" in w for w in counts):
        return
    quiet_put(cache, "counts", _counts_parts(key), {
        "words": np.frombuffer("\n".join(counts).encode("utf-8"), dtype=np.uint8),
        "counts": np.fromiter(counts.values(), dtype=np.int64, count=len(counts))})


def _text_rows(model: Any, text: Path | str, corpus: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Vocabulary rows of a text's distinct in-vocabulary words and their token counts (first-seen order);
    ``corpus``: ``text`` names a reference corpus whose sentences are counted."""
    counts = _text_counts(text, corpus)
    row = model.row
    # the same counts (this object) looked up in the same vocabulary (content, fallback rule, lookup code): the
    # rows of the raw cell serve the calibrated ones (a space changes the vectors, not which row a word is)
    memo_key = (id(counts), model.fingerprint, lowercase_fallback_of(model),
                getattr(getattr(row, "__func__", row), "__qualname__", repr(row)))
    memo = _ROWS.get(memo_key)
    if memo is not None and memo[0] is counts:
        return memo[1], memo[2]
    by_row: dict[int, int] = {}
    for w, c in counts.items():
        i, _ = row(w)
        if i is not None:
            by_row[i] = by_row.get(i, 0) + c
    if len(by_row) < 2:
        raise ConfigError(f"{text}: fewer than 2 words of the text are in the vocabulary of {model.name}")
    rows, n = np.fromiter(by_row.keys(), dtype=np.int64), np.fromiter(by_row.values(), dtype=np.int64)
    rows.setflags(write=False)
    n.setflags(write=False)
    while len(_ROWS) >= _COUNTS_KEPT:
        _ROWS.pop(next(iter(_ROWS)))
    _ROWS[memo_key] = (counts, rows, n)  # the counts held: their id names them while the entry lives
    return rows, n


def _top_n(arg: str) -> int:
    try:
        value = int(arg)
    except ValueError:
        raise ConfigError(f"frame vocabulary-top: N must be an integer >= 2, got {arg!r}") from None
    return check_int("frame vocabulary-top N", value, lo=2)


@dataclass(frozen=True)
class FramePopulation:
    """Every vector of a frame, without copying it: rows of ``matrix`` (``rows``; ``None``: the first ``size``).

    ``weights`` (token frames) is the number of copies of each row (its
    tokens); ``None``: one each. :meth:`blocks` reads the rows a block at a time.
    """

    matrix: Any
    rows: np.ndarray | None
    weights: np.ndarray | None
    size: int
    what: str
    source: str = ""

    @property
    def count(self) -> int:
        """The vectors of the frame (a row with weight w counts w times)."""
        return self.size if self.weights is None else int(self.weights.sum())

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def blocks(self, block: int = 8192) -> Any:
        """``(rows as float64, weights or None)`` for ``block`` rows at a time, in frame order."""
        for i in range(0, self.size, block):
            idx = slice(i, min(i + block, self.size)) if self.rows is None else self.rows[i:i + block]
            yield (np.asarray(self.matrix[idx], dtype=np.float64),
                   None if self.weights is None else self.weights[i:i + block])


def frame_population(model: Any, frame: str) -> FramePopulation:
    """The whole frame ``frame`` of a static ``model`` (not ``reference``: its pool is the model's reference sample).

    Nothing is copied or read here: the rows are read by :meth:`FramePopulation.blocks`.
    """
    kind, arg = parse_frame(frame)
    if kind == "reference":
        raise ConfigError("frame reference: its vectors are the model's reference pool (sample_reference)")
    m = _static(model, frame)
    if kind in ("vocabulary-top", "vocabulary-all"):
        rows_all = int(m.vectors.shape[0])
        size = rows_all if kind == "vocabulary-all" else min(_top_n(arg), rows_all)
        what = f"{rows_all} vocabulary rows (all)" if kind == "vocabulary-all" else f"top {size} vocabulary rows"
        return FramePopulation(m.vectors, None, None, size, what)
    text, text_desc = (_paper_text() if kind in ("paper", "paper-tokens") else (Path(arg), str(arg)))
    rows, counts = _text_rows(m, text, corpus=not isinstance(text, Path))
    if kind in ("corpus-types", "paper"):  # the paper's static protocol: vocabulary items of its corpus (§4.1)
        return FramePopulation(m.vectors, rows, None, len(rows), f"distinct in-vocabulary words of {text_desc}",
                               text_desc)
    return FramePopulation(m.vectors, rows, counts, len(rows), f"in-vocabulary word tokens of {text_desc}", text_desc)


def frame_or_pool(model: Any, frame: str, n: int) -> tuple[FramePopulation | None, str]:
    """:func:`frame_population` of ``frame``, or ``(None, why)`` where the pool must stand in: frame ``paper`` of
    a static model whose vocabulary holds fewer of the reference corpus's words than the ``n`` sampled (e.g.
    a model of another language) is measured on the model's reference pool, and the description says so."""
    if parse_frame(frame)[0] in ("paper", "paper-tokens"):
        paper_variables()  # a variable set but naming no text: its one line, never the reference pool instead
    try:
        pop = frame_population(model, frame)
    except (ConfigError, IsoeatFileNotFoundError) as exc:  # too few of its words, or no reference corpus here
        if parse_frame(frame)[0] != "paper":
            raise
        return None, f"frame paper not measurable ({exc}): measured on the reference pool instead"
    if parse_frame(frame)[0] == "paper" and pop.size < n:
        return None, (f"frame paper not measurable: only {pop.size} of the words of {pop.source} are in the "
                      f"vocabulary of {model.name}, fewer than the {n} sampled; measured on the reference pool instead")
    return pop, ""


def sample_frame(model: Any, frame: str, n: int, *, rng: Any = None,
                 population: FramePopulation | None = None) -> tuple[np.ndarray, str, int | None]:
    """``n`` vectors of ``model`` drawn from ``frame`` (not ``reference``: see :func:`sample_reference`).

    Returns ``(vectors, description, seed)`` as :func:`sample_reference`: all
    of the frame when it holds at most ``n`` vectors (tokens: at most ``n`` tokens), else ``n`` drawn
    uniformly without replacement with the seeded generator. ``population``: the frame's
    :func:`frame_population`, when the caller has it already.
    """
    n = check_int("n_samples", n, lo=2)
    kind, arg = parse_frame(frame)
    if kind == "reference":
        raise ConfigError("frame reference: use sample_reference")
    m = _static(model, frame)
    pop = population or frame_population(m, frame)
    gen, seed = resolve_seed(rng)
    how = f"seed {seed}" if seed is not None else "a caller-supplied Generator"
    if kind in ("vocabulary-top", "vocabulary-all"):
        size, what = pop.size, pop.what
        rows = np.arange(size) if size <= n else np.sort(gen.choice(size, size=n, replace=False))
        desc = (f"frame {frame}: " + (f"all {size} of the {what}" if size <= n else
                                      f"{n} of the {what} drawn uniformly without replacement ({how})")
                + f" of {m.name}")
        return np.asarray(m.vectors[rows], dtype=np.float64), desc, seed
    text_desc, named, counts = pop.source, pop.rows, pop.weights
    assert named is not None  # a text's frame names its rows (frame_population)
    rows = named
    if kind in ("corpus-types", "paper"):
        pick = rows if len(rows) <= n else np.sort(rows[gen.choice(len(rows), size=n, replace=False)])
        desc = (f"frame {frame}: {len(pick)} of the {len(rows)} distinct in-vocabulary words of {text_desc}"
                + ("" if len(rows) <= n else f", drawn uniformly without replacement ({how})"))
        return np.asarray(m.vectors[pick], dtype=np.float64), desc, seed
    assert counts is not None  # a token frame weighs its rows by their tokens (frame_population)
    total = int(counts.sum())
    take = counts if total <= n else gen.multivariate_hypergeometric(counts, n)
    rep = np.repeat(rows, take)
    desc = (f"frame {frame}: {len(rep)} of the {total} in-vocabulary word tokens of {text_desc}"
            + ("" if total <= n else f", drawn without replacement from the token stream ({how}): "
                                     "frequency-weighted, repeated words give identical vectors"))
    return np.asarray(m.vectors[rep], dtype=np.float64), desc, seed


def sample_reference(
    model: Any,
    n: int = 2000,
    *,
    rng: Any = None,
    reference_size: int = 100_000,
    reference_kwargs: dict | None = None,
    reference: Any = None,
    pool: tuple[np.ndarray, str] | None = None,
) -> tuple[np.ndarray, str, int | None]:
    """Draw ``n`` reference vectors of ``model`` uniformly at random, without replacement.

    The pool is ``model.reference_vectors(reference_size, **reference_kwargs)``
    (for static vectors: the ``reference_size`` most frequent vocabulary rows,
    the sample ZCA is fitted on; for sentence encoders: the encoder's
    reference sentences). ``n`` distinct rows of the pool are drawn with
    ``Generator.choice(m, n, replace=False)`` and kept in pool order. When the
    pool has fewer than ``n`` rows, all of them are used, an
    :class:`~isoeat.IsoeatWarning` is issued and the description says so.

    Parameters
    ----------
    model : Encoder
    n : int, default 2000
        Sample size (paper §4.3: 2,000).
    rng : None, int or numpy.random.Generator
    reference_size : int, default 100_000
        Size of the pool the sample is drawn from.
    reference_kwargs : dict, optional
        Passed to ``model.reference_vectors`` (e.g. ``{"text": PATH}``).
    reference : ReferenceSpec, optional
        The pool as a calibrator's reference sample
        (:class:`~isoeat.calibration.sample.ReferenceSpec`, e.g. its
        ``metadata_["reference_spec"]``); it replaces ``reference_size`` and
        ``reference_kwargs``, so the check samples the rows the calibrator was fitted on.
    pool : (vectors, description), optional
        What ``model.reference_vectors`` (or ``reference_sample``) returned already (it is not asked again).

    Returns
    -------
    vectors : numpy.ndarray, shape (min(n, m), d)
    description : str
        The sampling rule, for the result.
    seed : int or None
        The seed used (None when a Generator was passed).
    """
    n = check_int("n_samples", n, lo=2)
    gen, seed = resolve_seed(rng)
    if pool is not None:
        given, pool_desc = pool
    elif reference is not None:
        from ..calibration.sample import reference_sample

        given, pool_desc = reference_sample(model, reference)
    else:
        given, pool_desc = model.reference_vectors(reference_size, **(reference_kwargs or {}))
    vectors = np.asarray(given, dtype=np.float64)
    m = vectors.shape[0]
    seed_txt = f"seed {seed}" if seed is not None else "a caller-supplied Generator"
    if m < 2:
        raise DataFormatError(f"{name_of(model, 'model')}: only {m} reference vector(s); need at least 2")
    if m <= n:
        if m < n:
            warnings.warn(
                f"{name_of(model, 'model')}: asked for {n} reference vectors but only {m} are "
                f"available; using all {m}",
                IsoeatWarning,
                stacklevel=2,
            )
        desc = f"frame reference: all {m} vectors of the pool ({pool_desc})"
        if m < n:
            desc += f"; asked for {n}, only {m} available"
        return vectors, desc, seed
    idx = np.sort(gen.choice(m, size=int(n), replace=False))
    desc = (f"frame reference: {n} of {m} vectors drawn uniformly without replacement ({seed_txt}) from the "
            f"pool: {pool_desc}")
    return vectors[idx], desc, seed
