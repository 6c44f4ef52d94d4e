r"""Spearman's ρ between cosine similarity and human similarity judgements, raw and calibrated.

Experiment 2 of the paper (§4.3, §5.2, Table 3). For a benchmark of pairs
:math:`(p_i, q_i)` with human scores :math:`g_i`, the model's similarity is
:math:`s_i = \cos(\vec p_i, \vec q_i)` on the vectors as given (after
calibration when one is applied), and

.. math::

    \rho = \operatorname{corr}\big(\operatorname{rank}(g), \operatorname{rank}(s)\big)

with average ranks for ties (Spearman's ρ, as :func:`scipy.stats.spearmanr`).

Coverage policy (word pairs), the same as gensim's
``KeyedVectors.evaluate_word_pairs`` with ``dummy4unknown=False``: a pair is
used when both words are found by the model's ``lookup`` (for isoeat's static
vectors: exact match, then the lowercased word when the vocabulary is
lowercase); other pairs are skipped and listed; duplicated pairs are kept as
often as they occur. ``coverage = n_pairs / n_total``. For sentence pairs a
pair is used when both sentences get a vector (see
:mod:`isoeat.similarity.sentences`).

Calibration never changes which pairs are used, so the raw and calibrated ρ
are on the same pairs and :func:`compare_similarity` can pair them in the
bootstrap (:mod:`isoeat.similarity.bootstrap`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError, CoverageError, DataFormatError
from .._surface import public, require_encoder
from .._types import name_of, sentence_pooling_of
from .._validate import check_int, check_real
from ..stats.rank import rankdata, spearman  # noqa: F401 (rankdata re-exported: it lived here)
from ..stats.weat import resolve_calibration
from .benchmarks import SentencePairs, WordPairs, load_benchmark
from .bootstrap import PairedBootstrapResult, paired_bootstrap_spearman
from .sentences import _check_encoded, _StaticPooler

__all__ = [
    "rankdata",
    "spearman",
    "SimilarityResult",
    "SimilarityComparison",
    "evaluate_similarity",
    "compare_similarity",
]


@dataclass(frozen=True, eq=False)
class SimilarityResult:
    """Spearman ρ of one model (raw or calibrated) on one benchmark.

    Attributes
    ----------
    model, calibration : str
    benchmark : str
        Short name (``"ws353"``) or file name.
    title : str
        Table label (``"WS-353"``).
    kind : str
        ``"word"`` or ``"sentence"``.
    source : str
        The benchmark file.
    spearman : float
    n_pairs : int
        Pairs used.
    n_total : int
        Pairs in the benchmark.
    coverage : float
        ``n_pairs / n_total``.
    oov_pairs : tuple of (str, str, int)
        Skipped pairs: the two items and the line number in ``source``.
    missing : tuple of str
        Distinct words (or sentence tokens) not found.
    method : str
        How items became vectors (``"lookup"``, ``"encode_sentences"`` or the pooling rule).
    similarities, gold : numpy.ndarray
        Cosine and human score of each used pair (not in :meth:`to_dict`).
    used : numpy.ndarray
        Indices of the used pairs in the benchmark (not in :meth:`to_dict`).
    """

    model: str
    calibration: str
    benchmark: str
    title: str
    kind: str
    source: str
    spearman: float
    n_pairs: int
    n_total: int
    coverage: float
    oov_pairs: tuple[tuple[str, str, int], ...]
    missing: tuple[str, ...]
    method: str
    similarities: np.ndarray = field(repr=False)
    gold: np.ndarray = field(repr=False)
    used: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record (arrays left out; OOV pairs as ``[item1, item2, line]``)."""
        return {
            "model": self.model,
            "calibration": self.calibration,
            "benchmark": self.benchmark,
            "title": self.title,
            "kind": self.kind,
            "spearman": self.spearman,
            "n_pairs": self.n_pairs,
            "n_total": self.n_total,
            "coverage": self.coverage,
            "n_oov_pairs": len(self.oov_pairs),
            "oov_pairs": [list(p) for p in self.oov_pairs],
            "missing": list(self.missing),
            "method": self.method,
            "source": self.source,
        }

    def to_frame(self) -> Any:
        """This result as a one-row :class:`pandas.DataFrame`, columns = :meth:`to_dict` keys (needs pandas)."""
        from ..stats.results import records_frame

        return records_frame([self.to_dict()])


@dataclass(frozen=True, eq=False)
class SimilarityComparison:
    """Raw vs calibrated ρ on the same pairs, with the paired bootstrap (Table 3).

    Attributes
    ----------
    raw, calibrated : SimilarityResult
    bootstrap : PairedBootstrapResult or None
        None when ``n_resamples=0``.
    """

    raw: SimilarityResult
    calibrated: SimilarityResult
    bootstrap: PairedBootstrapResult | None

    @property
    def delta(self) -> float:
        """:math:`\\Delta\\rho = \\rho_{cal} - \\rho_{raw}`."""
        return self.calibrated.spearman - self.raw.spearman

    def records(self) -> list[dict[str, Any]]:
        """Two tidy records (raw, calibrated) with the same fields; Δρ fields filled on the calibrated one."""
        b = self.bootstrap
        out = []
        for res, is_cal in ((self.raw, False), (self.calibrated, True)):
            rec = res.to_dict()
            rec.update({
                "delta_spearman": self.delta if is_cal else None,
                "delta_ci_low": b.ci_low if (b and is_cal) else None,
                "delta_ci_high": b.ci_high if (b and is_cal) else None,
                "p_value": b.p_value if (b and is_cal) else None,
                "spearman_ci_low": (b.ci_b_low if is_cal else b.ci_a_low) if b else None,
                "spearman_ci_high": (b.ci_b_high if is_cal else b.ci_a_high) if b else None,
                "ci_level": b.ci_level if b else None,
                "n_resamples": b.n_resamples if b else 0,
                "n_valid_resamples": b.n_valid if b else 0,
                "seed": b.seed if b else None,
            })
            out.append(rec)
        return out

    def to_frame(self) -> Any:
        """:meth:`records` (raw, calibrated) as a two-row :class:`pandas.DataFrame` (needs pandas)."""
        from ..stats.results import records_frame

        return records_frame(self.records())

    def to_dict(self) -> dict[str, Any]:
        return {
            "raw": self.raw.to_dict(),
            "calibrated": self.calibrated.to_dict(),
            "delta_spearman": self.delta,
            "bootstrap": self.bootstrap.to_dict() if self.bootstrap else None,
        }


class _Encoded:
    """The pairs of a benchmark as vectors: raw once, calibrated on demand."""

    def __init__(self, model: Any, bench: WordPairs | SentencePairs, tokenizer: Callable | None = None):
        self.bench = bench
        self.missing: tuple[str, ...] = ()
        if isinstance(bench, WordPairs):
            self._init_words(model, bench)
        else:
            self._init_sentences(model, bench, tokenizer)

    def _init_words(self, model: Any, bench: WordPairs) -> None:
        words = list(dict.fromkeys(bench.word1 + bench.word2))
        look = model.lookup(words)
        row = {w: i for i, w in enumerate(look.found)}
        ok = np.array([a in row and b in row for a, b in zip(bench.word1, bench.word2)], dtype=bool)
        self.used = np.flatnonzero(ok)
        self.i1 = np.array([row[bench.word1[i]] for i in self.used], dtype=np.intp)
        self.i2 = np.array([row[bench.word2[i]] for i in self.used], dtype=np.intp)
        self.matrix = np.asarray(look.vectors, dtype=np.float64)
        self.missing = tuple(look.missing)
        self.method = "lookup"
        self._encoder_output = False

    def _init_sentences(self, model: Any, bench: SentencePairs, tokenizer: Callable | None) -> None:
        sents = list(dict.fromkeys(bench.sentence1 + bench.sentence2))
        pos = {s: i for i, s in enumerate(sents)}
        encode = sentence_pooling_of(model)
        if encode is not None:
            self.matrix = _check_encoded(encode(sents), len(sents), model)
            kept = np.ones(len(sents), dtype=bool)
            self.method = "encode_sentences"
            self._pooler = None
        else:
            self._pooler = _StaticPooler(model, sents, tokenizer)
            self.matrix = self._pooler.pool()
            kept = self._pooler.kept
            self.missing = self._pooler.missing
            self.method = _StaticPooler.method
        row = np.full(len(sents), -1, dtype=np.intp)
        row[kept] = np.arange(int(kept.sum()))
        r1 = np.array([row[pos[s]] for s in bench.sentence1], dtype=np.intp)
        r2 = np.array([row[pos[s]] for s in bench.sentence2], dtype=np.intp)
        ok = (r1 >= 0) & (r2 >= 0)
        self.used = np.flatnonzero(ok)
        self.i1, self.i2 = r1[ok], r2[ok]

    def vectors(self, calibration: Any = None) -> np.ndarray:
        if calibration is None:
            return self.matrix
        pooler = getattr(self, "_pooler", None)
        if pooler is not None:
            return pooler.pool(calibration)
        return np.asarray(calibration.transform(self.matrix), dtype=np.float64)

    def cosines(self, calibration: Any = None) -> np.ndarray:
        from .._cosine import row_cosines

        M = self.vectors(calibration)
        return row_cosines(M[self.i1], M[self.i2], "benchmark items", DataFormatError)

    def oov_pairs(self) -> tuple[tuple[str, str, int], ...]:
        b = self.bench
        mask = np.ones(len(b), dtype=bool)
        mask[self.used] = False
        a, c = (b.word1, b.word2) if isinstance(b, WordPairs) else (b.sentence1, b.sentence2)
        return tuple((a[i], c[i], b.lines[i]) for i in np.flatnonzero(mask))


def _result(enc: _Encoded, model: Any, calibration: Any, min_coverage: float) -> SimilarityResult:
    b = enc.bench
    name = name_of(model, "model")
    n_total, n_pairs = len(b), len(enc.used)
    what = "word" if b.kind == "word" else "sentence"
    if n_pairs == 0:
        raise CoverageError(
            f"{b.source}: none of the {n_total} pairs of {b.title} has both {what}s "
            f"{'in the vocabulary of' if what == 'word' else 'encodable by'} {name}"
            + (f" (missing e.g. {', '.join(enc.missing[:5])})" if enc.missing else "")
        )
    if n_pairs < 3:
        raise CoverageError(
            f"{b.source}: only {n_pairs} of the {n_total} pairs of {b.title} are covered by {name}; "
            "Spearman's rho needs at least 3"
        )
    coverage = n_pairs / n_total
    if coverage < min_coverage:
        raise CoverageError(
            f"{b.source}: {name} covers {n_pairs} of {n_total} pairs of {b.title} ({coverage:.1%}), "
            f"below min_coverage={min_coverage:g}"
        )
    gold = b.scores[enc.used]
    if np.ptp(gold) == 0:
        raise DataFormatError(
            f"{b.source}: all {n_pairs} human scores of the pairs used are equal ({gold[0]:g}); "
            "Spearman's rho is undefined"
        )
    sims = enc.cosines(calibration)
    if not np.isfinite(sims).all():
        raise DataFormatError(f"{name}: cosine similarities contain NaN or inf")
    if np.ptp(sims) == 0:
        raise DataFormatError(f"{name}: cosine similarity is the same for all {n_pairs} pairs of {b.title}; "
                              "Spearman's rho is undefined")
    cal_name = "none" if calibration is None else getattr(calibration, "name", type(calibration).__name__.lower())
    return SimilarityResult(
        model=name, calibration=cal_name, benchmark=b.name, title=b.title, kind=b.kind, source=b.source,
        spearman=spearman(gold, sims), n_pairs=n_pairs, n_total=n_total, coverage=coverage,
        oov_pairs=enc.oov_pairs(), missing=enc.missing, method=enc.method,
        similarities=sims, gold=gold, used=enc.used,
    )


def _check_min_coverage(min_coverage: float) -> float:
    return check_real("min_coverage", min_coverage, lo=0, hi=1)


def _encode(
    model: Any, benchmark: Any, calibration: Any, force: bool, min_coverage: float, tokenizer: Callable | None
) -> tuple[_Encoded, float]:
    """Check ``min_coverage`` and the calibrator against the model, load the benchmark, encode its pairs once."""
    min_coverage = _check_min_coverage(min_coverage)
    bench = load_benchmark(benchmark)
    if calibration is not None:
        from ..calibration import check_compatible

        check_compatible(calibration, model, force=force)
    return _Encoded(model, bench, tokenizer), min_coverage


@public
def evaluate_similarity(
    model: Any,
    benchmark: Any,
    *,
    calibration: Any = None,
    force: bool = False,
    min_coverage: float = 0.0,
    tokenizer: Callable[[str], list[str]] | None = None,
) -> SimilarityResult:
    """Spearman ρ between cosine and human scores on one benchmark, in one space.

    Parameters
    ----------
    model : Encoder
        Word benchmarks use ``model.lookup``; sentence benchmarks use
        ``model.encode_sentences`` when present, else mean word vectors
        (:func:`~isoeat.similarity.sentence_vectors`).
    benchmark : str, Path, WordPairs or SentencePairs
        A name (``"ws353"``, ``"simlex999"``, ``"men"``, ``"rg65"``, ``"rw"``,
        ``"mturk771"``, ``"stsb"``), a file, or a loaded benchmark.
    calibration : None, str, fitted calibrator or one-entry mapping, optional
        As in :func:`isoeat.weat` (a name such as ``"zca"`` is fitted here on
        the model's reference vectors); checked with
        :func:`~isoeat.calibration.check_compatible`.
    force : bool, default False
        Apply a calibrator fitted on another model.
    min_coverage : float, default 0.0
        Error when fewer than this share of the pairs are usable.
    tokenizer : callable, optional
        Sentence tokenizer for the static route.

    Returns
    -------
    SimilarityResult

    Raises
    ------
    CoverageError
        No pair (or fewer than 3) is usable, or coverage below ``min_coverage``.
    DataFormatError
        Malformed benchmark file (``file:line``), constant human scores.

    Examples
    --------
    >>> import isoeat  # doctest: +SKIP
    >>> r = evaluate_similarity(isoeat.load_model("glove-6b-50d"), "ws353")  # doctest: +SKIP
    >>> round(r.spearman, 3), r.n_pairs  # doctest: +SKIP
    """
    min_coverage = _check_min_coverage(min_coverage)
    require_encoder(model, "evaluate_similarity", needs=("lookup", "encode_sentences"))
    calibration = resolve_calibration(calibration, model, force=force)[0]
    enc, min_coverage = _encode(model, benchmark, calibration, force, min_coverage, tokenizer)
    return _result(enc, model, calibration, min_coverage)


@public
def compare_similarity(
    model: Any,
    benchmark: Any,
    calibration: Any,
    *,
    n_resamples: int = 10_000,
    ci_level: float = 0.95,
    rng: Any = None,
    force: bool = False,
    min_coverage: float = 0.0,
    tokenizer: Callable[[str], list[str]] | None = None,
) -> SimilarityComparison:
    """Raw vs calibrated Spearman ρ on the same pairs, with a paired bootstrap of Δρ (Table 3).

    Parameters
    ----------
    model : Encoder
    benchmark : str, Path, WordPairs or SentencePairs
    calibration : str, fitted calibrator or one-entry mapping
        The calibrated space compared with raw (as in :func:`evaluate_similarity`).
    n_resamples : int, default 10_000
        Bootstrap resamples (0: no bootstrap).
    ci_level : float, default 0.95
    rng : None, int or numpy.random.Generator
        The root seed (None: a fresh one, recorded); the resamples come from the stream ``("similarity", BENCHMARK)``
        (:func:`isoeat._random.derive_seed`), recorded as the bootstrap's ``seed``.
    force, min_coverage, tokenizer
        As in :func:`evaluate_similarity`.

    Returns
    -------
    SimilarityComparison

    Examples
    --------
    >>> import isoeat  # doctest: +SKIP
    >>> m = isoeat.load_model("glove-6b-50d")  # doctest: +SKIP
    >>> c = compare_similarity(m, "ws353", isoeat.fit_calibrator(m, "zca"), rng=0)  # doctest: +SKIP
    >>> c.delta, c.bootstrap.ci_low, c.bootstrap.p_value  # doctest: +SKIP
    """
    if calibration is None or calibration == "none":
        raise ConfigError("compare_similarity needs a calibration such as 'zca' or a fitted calibrator (use "
                          "evaluate_similarity for one space)")
    from .._limits import MAX_RESAMPLES

    n_resamples = check_int("n_resamples", n_resamples, lo=0, hi=MAX_RESAMPLES)
    min_coverage = _check_min_coverage(min_coverage)
    require_encoder(model, "compare_similarity", needs=("lookup", "encode_sentences"))
    calibration = resolve_calibration(calibration, model, force=force)[0]
    enc, min_coverage = _encode(model, benchmark, calibration, force, min_coverage, tokenizer)
    raw = _result(enc, model, None, min_coverage)
    cal = _result(enc, model, calibration, min_coverage)
    boot = None
    if n_resamples:
        from dataclasses import replace

        from .._random import stream

        name = str(benchmark) if isinstance(benchmark, (str, Path)) else getattr(benchmark, "name", "custom")
        rng, root = stream(rng, "similarity", name)  # the same resamples in every command, for one seed
        boot = paired_bootstrap_spearman(raw.gold, raw.similarities, cal.similarities, n_resamples=int(n_resamples),
                                         ci_level=ci_level, rng=rng)
        boot = boot if root is None else replace(boot, seed=root)
    return SimilarityComparison(raw, cal, boot)
