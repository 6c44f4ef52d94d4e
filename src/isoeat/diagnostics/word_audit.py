r"""The word-list audit of a WEAT (issue 43): why d is large, whether a few words carry it, whether it tracks frequency.

Three panels per test and space (raw beside calibrated), one :class:`WordListAudit`:

Frequency balance
    Each found word's frequency rank :math:`r_w`. A static model: its vocabulary row, :math:`r_w = \text{row} + 1`
    (GloVe and word2vec files are in frequency order, most frequent first; the row order of any other file is
    taken as given and named so). A contextual model with a corpus: the word's rank by its token count in that
    corpus (1 + the number of word types counted more often). The panel gives the median :math:`\ln r` of each
    set, the targets' gap :math:`g = \operatorname{med}_Y \ln r - \operatorname{med}_X \ln r` and its ratio
    :math:`e^{g}` (under Zipf's law, rank ratio ≈ frequency ratio: X's words are about :math:`e^{g}` times more
    frequent than Y's), the attributes' gap likewise (B − A), and Spearman's :math:`\rho` between each target
    word's association score :math:`s(w,A,B)` and :math:`\ln r_w` (ranks are the same in every space; ρ is not:
    does calibration remove the frequency signal?). A model with neither gets the reason, no numbers.
Influence
    :func:`isoeat.stats.audit.leave_one_out`: d and p without each word, and whether the sign or the significance
    changes.
Coherence
    Each set's mean within-set cosine (every pair of distinct found words) against the mean cosine of random pairs
    of the model (:data:`BASELINE_SIZE` vectors of the isotropy check's frame ``paper`` for a static model — the
    reference pool where the frame cannot be measured — else the reference sample; exact over all pairs of the
    sample), in the same space: a set no more coherent than random pairs is no category of the embedding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from .._cosine import unit_rows
from .._errors import ConfigError
from .._random import stream
from .._surface import public, require_encoder
from .._types import ContextEncoder, VocabularyModel, corpus_name_of, name_of
from ..stats.audit import ROLES, LeaveOneOut, leave_one_out
from ..stats.options import PermutationOptions, ResultLabels

__all__ = ["WordListAudit", "word_list_audit", "frequency_ranks", "mean_pair_cosine", "BASELINE_SIZE"]

#: Vectors sampled for the random-pair baseline of coherence.
BASELINE_SIZE = 1000


def mean_pair_cosine(V: np.ndarray) -> float:
    r"""Mean cosine over the :math:`n(n-1)/2` pairs of distinct rows: :math:`(\lVert\sum_i u_i\rVert^2 - n)/(n(n-1))`.

    Examples
    --------
    >>> round(mean_pair_cosine(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])), 6)
    0.471405
    """
    U = unit_rows(np.asarray(V, dtype=np.float64))
    n = U.shape[0]
    if n < 2:
        return math.nan
    total = U.sum(axis=0)
    return float((total @ total - n) / (n * (n - 1)))


def _corpus_word_counts(model: Any, corpus: str) -> Any:
    """Word-token counts of a contextual model's corpus: by its name (counted once, kept), else the loaded
    corpus's sentences (an in-memory corpus), else None."""
    from .._errors import IsoeatError
    from .._types import loaded_corpus_of
    from .frames import _corpus_counts, _text_counts

    try:
        return _text_counts(corpus, True)
    except IsoeatError:
        loaded = loaded_corpus_of(model)
        return None if loaded is None else _corpus_counts(loaded)


def frequency_ranks(model: Any, words: list[str]) -> tuple[np.ndarray | None, str]:
    """The frequency rank of each word (``nan`` where unknown) and where the ranks come from, or ``(None, why)``."""
    if isinstance(model, VocabularyModel):
        rows = [model.row(w)[0] for w in words]
        ranks = np.array([math.nan if i is None else i + 1.0 for i in rows])
        return ranks, (
            f"vocabulary row order of {name_of(model, 'the model')}, rank = row + 1 (GloVe and word2vec "
            "files are in frequency order)"
        )
    corpus = corpus_name_of(model) if isinstance(model, ContextEncoder) else ""
    counts = _corpus_word_counts(model, corpus) if corpus else None
    if counts is None:
        return None, (
            f"not measured: {name_of(model, 'the model')} has no frequency order (no vocabulary rows) "
            "and no corpus to count its words in"
        )
    ordered = np.sort(np.fromiter(counts.values(), dtype=np.int64, count=len(counts)))[::-1]
    by_count: list[float] = []
    for w in words:
        c = counts.get(w, 0)
        # 1 + the types counted more often (ties share the best rank); a word never counted has no rank
        by_count.append(math.nan if c == 0 else 1.0 + float(np.searchsorted(-ordered, -c, side="left")))
    return np.array(by_count), f"token counts in corpus {corpus} (rank 1 = the most frequent word type)"


@dataclass(frozen=True)
class WordListAudit:
    """The word-list audit of one WEAT in one space (see the module docstring for every number).

    Attributes
    ----------
    test, model, calibration : str
    effect_size, p_value : float
        The full test's d and p.
    frequency_source : str
        Where the ranks come from, or ``"not measured: ..."`` with the reason (then the frequency numbers are nan).
    median_log_rank_x, median_log_rank_y, median_log_rank_a, median_log_rank_b : float
        Median :math:`\\ln r` of each set's ranked words.
    target_log_rank_gap, target_rank_ratio : float
        :math:`g = \\operatorname{med}_Y - \\operatorname{med}_X` and :math:`e^{g}`.
    attribute_log_rank_gap, attribute_rank_ratio : float
        The same for B − A.
    rho_score_log_rank : float
        Spearman's ρ between the target words' :math:`s(w,A,B)` and :math:`\\ln r_w` (``nan``: fewer than 3 ranked
        words, or constant).
    n_ranked : int
        Target words with a rank.
    coherence_x, coherence_y, coherence_a, coherence_b : float
        Mean within-set cosine.
    baseline_cosine : float
        Mean cosine of random pairs; ``baseline_source`` says of what.
    alpha : float
    leave_one_out : tuple of LeaveOneOut
    """

    test: str
    model: str
    calibration: str
    effect_size: float
    p_value: float
    frequency_source: str
    median_log_rank_x: float
    median_log_rank_y: float
    median_log_rank_a: float
    median_log_rank_b: float
    target_log_rank_gap: float
    target_rank_ratio: float
    attribute_log_rank_gap: float
    attribute_rank_ratio: float
    rho_score_log_rank: float
    n_ranked: int
    coherence_x: float
    coherence_y: float
    coherence_a: float
    coherence_b: float
    baseline_cosine: float
    baseline_source: str
    alpha: float
    leave_one_out: tuple[LeaveOneOut, ...] = field(default=())

    @property
    def sign_changers(self) -> list[str]:
        """``ROLE:word`` of the words without which d changes sign."""
        return [f"{r.role}:{r.word}" for r in self.leave_one_out if r.sign_change]

    @property
    def significance_changers(self) -> list[str]:
        """``ROLE:word`` of the words without which significance at ``alpha`` changes."""
        return [f"{r.role}:{r.word}" for r in self.leave_one_out if r.significance_change]

    def summary(self) -> dict[str, Any]:
        """The panel numbers without the per-word rows."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "leave_one_out"}  # scalars only
        out["sign_changers"] = self.sign_changers
        out["significance_changers"] = self.significance_changers
        return out

    def to_dict(self) -> dict[str, Any]:
        """:meth:`summary` and the per-word records under ``leave_one_out``."""
        return {**self.summary(), "leave_one_out": [r.to_dict() for r in self.leave_one_out]}

    def records(self) -> list[dict[str, Any]]:
        """One flat record per left-out word, the panel numbers repeated on each (the CSV rows)."""
        head = {k: v for k, v in self.summary().items() if k not in ("sign_changers", "significance_changers")}
        keep = (
            "role",
            "word",
            "effect_size",
            "p_value",
            "p_method",
            "delta",
            "sign_change",
            "significance_change",
            "note",
        )
        return [{**head, **{f"loo_{k}": getattr(r, k) for k in keep}} for r in self.leave_one_out]

    def to_frame(self) -> Any:
        """:meth:`records` as a :class:`pandas.DataFrame` (needs pandas)."""
        from ..stats.results import records_frame

        return records_frame(self.records())


def _median_log(ranks: np.ndarray) -> float:
    ok = ranks[np.isfinite(ranks)]
    return float(np.median(np.log(ok))) if ok.size else math.nan


def _frequency(model: Any, words: dict[str, list[str]], scores: np.ndarray) -> dict[str, Any]:
    """The frequency panel's fields (nan where not measured)."""
    from ..stats.rank import spearman

    nan = math.nan
    ranks_all, source = frequency_ranks(model, [w for r in ROLES for w in words[r]])
    out: dict[str, Any] = {"frequency_source": source, "n_ranked": 0, "rho_score_log_rank": nan}  # mixed types
    med = {r: nan for r in ROLES}
    if ranks_all is not None:
        at = 0
        ranks: dict[str, np.ndarray] = {}
        for r in ROLES:
            ranks[r] = ranks_all[at : at + len(words[r])]
            at += len(words[r])
            med[r] = _median_log(ranks[r])
        target = np.concatenate([ranks["X"], ranks["Y"]])
        ok = np.isfinite(target)
        out["n_ranked"] = int(ok.sum())
        if ok.sum() >= 3 and np.ptp(scores[ok]) > 0 and np.ptp(target[ok]) > 0:
            out["rho_score_log_rank"] = float(spearman(scores[ok], np.log(target[ok])))
    for r in ROLES:
        out[f"median_log_rank_{r.lower()}"] = med[r]
    out["target_log_rank_gap"] = med["Y"] - med["X"]
    out["target_rank_ratio"] = math.exp(out["target_log_rank_gap"]) if math.isfinite(med["Y"] - med["X"]) else nan
    out["attribute_log_rank_gap"] = med["B"] - med["A"]
    out["attribute_rank_ratio"] = math.exp(out["attribute_log_rank_gap"]) if math.isfinite(med["B"] - med["A"]) else nan
    return out


def _given_full(res: Any, s_x: np.ndarray, s_y: np.ndarray, ddof: int, test: str, space: str) -> Any:
    """A full result handed in, checked: its d is the d of the association scores ``s_x``, ``s_y`` of this space's
    vectors (relative 1e-9), relabelled for this space."""
    from dataclasses import replace

    from ..stats.bootstrap import effect_size

    d = effect_size(s_x, s_y, ddof=ddof)
    same = (math.isnan(d) and math.isnan(res.effect_size)) or math.isclose(d, res.effect_size, rel_tol=1e-9)
    if not same or res.ddof != ddof:
        raise ConfigError(
            f"full: the result given for {test} ({space}) has d {res.effect_size!r}, not this test's "
            f"{d!r} in that space"
        )
    return replace(res, test=test, calibration=space)


def _checked_sets(
    model: Any, test: Any, min_coverage: float, ddof: int, allow_overlap: bool
) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    """The found vectors and words of each set, checked as :func:`isoeat.weat` checks them."""
    from ..stats.validity import check_test
    from ..stats.weat import _lookup_sets

    found: dict[str, tuple[list[str], list[str]]] = {}
    raw, _, _ = _lookup_sets(model, test, min_coverage, words_out=found)
    words = {r: found[r][0] for r in ROLES}
    entries = {r: e for r, (_, e) in found.items()}
    check_test(test.id, words=words, entries=entries, vectors=raw, ddof=ddof, allow_overlap=allow_overlap)
    return raw, words


#: The last baseline drawn, ``(model, seed, n_reference, vectors, description)``: the tests of one command share
#: it (the same model and root seed draw the same vectors); held by identity of the model, read-only.
_LAST_BASELINE: list[tuple[Any, Any, int, np.ndarray, str]] = []


def _baseline(model: Any, rng: Any, n_reference: int = 100_000) -> tuple[np.ndarray, str]:
    """:data:`BASELINE_SIZE` vectors for the random-pair baseline, and what they are (a pool of the model's
    ``n_reference`` reference vectors where the frame cannot stand in); the last one again for the same model
    (by identity), integer seed and pool size."""
    last = _LAST_BASELINE[0] if _LAST_BASELINE else None
    if rng is not None and last is not None and last[0] is model and last[1] == rng and last[2] == n_reference:
        return last[3], last[4]
    vecs, desc = _draw_baseline(model, rng, n_reference)
    vecs.setflags(write=False)
    if rng is not None:
        _LAST_BASELINE[:] = [(model, rng, n_reference, vecs, desc)]
    return vecs, desc


def _draw_baseline(model: Any, rng: Any, n_reference: int) -> tuple[np.ndarray, str]:
    from .frames import frame_or_pool, sample_frame, sample_reference

    seed = stream(rng, "audit-baseline")[0]
    if isinstance(model, VocabularyModel):
        pop, why = frame_or_pool(model, "paper", BASELINE_SIZE)
        if pop is not None:
            vecs, desc, _ = sample_frame(model, "paper", BASELINE_SIZE, rng=seed, population=pop)
            return vecs, desc
    vecs, desc, _ = sample_reference(model, min(BASELINE_SIZE, n_reference), rng=seed, reference_size=n_reference)
    return vecs, desc


@public
def word_list_audit(
    model: Any,
    test: Any,
    *,
    calibration: Any = None,
    rng: Any = None,
    alpha: float = 0.05,
    ddof: int = 1,
    min_coverage: float = 0.8,
    allow_overlap: bool = False,
    permutation: PermutationOptions | None = None,
    full: Sequence[Any] | None = None,
    **options: Any,
) -> list[WordListAudit]:
    r"""The word-list audit of ``test`` on ``model``, raw first, then each calibrated space.

    Parameters
    ----------
    model : Encoder
        Any model :func:`isoeat.weat` takes.
    test : AssociationTest or str
        A test or its id (``"W3"``).
    calibration : None, str or Calibrator
        As :func:`isoeat.weat`'s; the raw space is always audited first, then this one.
    rng : None or int
        The root seed: the full test draws from ``("weat", TEST)`` (:func:`isoeat.weat`'s d and p), each left-out
        word from ``("weat-loo", TEST, ROLE, WORD)``, the baseline from ``("audit-baseline",)``.
    alpha : float, default 0.05
        Level of the significance flags (``p < alpha``).
    ddof, min_coverage, allow_overlap
        As in :func:`isoeat.weat` (the same validity checks).
    full : sequence of WEATResult, optional
        The full test already computed in each space (raw first, as :func:`isoeat.weat` gives it), used instead of
        computing it again; its d is checked against these vectors' (a ``ConfigError``: another test or space).
    permutation, **options
        How each p is computed (:class:`~isoeat.stats.options.PermutationOptions` or its fields by name); and
        ``n_reference`` (default 100,000): the reference pool of the baseline where no frame stands in (a
        contextual model; the commands pass ``--reference-size``).

    Returns
    -------
    list of WordListAudit, one per space: raw, then calibrated.
    """
    from .._random import resolve_seed
    from .._validate import check_bool, check_int, check_real
    from ..labels import check_alpha
    from ..stats.options import gather
    from ..stats.weat import association_scores, resolve_calibration, weat_from_vectors
    from ..wordsets import as_test

    require_encoder(model, "word_list_audit")
    n_reference = check_int("n_reference", options.pop("n_reference", 100_000), lo=2)
    perm, _, _ = gather(options, where="word_list_audit", permutation=permutation, takes=("permutation",))
    check_alpha(alpha)
    min_coverage = check_real("min_coverage", min_coverage, lo=0.0, hi=1.0)
    ddof = check_int("ddof", ddof, lo=0)
    test = as_test(test)
    raw, words = _checked_sets(model, test, min_coverage, ddof, check_bool("allow_overlap", allow_overlap))
    cal, cal_name = resolve_calibration(calibration, model)
    root = resolve_seed(rng)[1] if not isinstance(rng, np.random.Generator) else None
    base_raw, base_desc = _baseline(model, root, n_reference)
    spaces = [("none", None)] + ([(cal_name, cal)] if cal is not None else [])
    out = []
    if full is not None and len(full) != len(spaces):
        raise ConfigError(f"full: {len(full)} result(s) for {len(spaces)} space(s) (raw first, then calibrated)")
    for k, (name, c) in enumerate(spaces):
        vecs = raw if c is None else {r: c.transform(v) for r, v in raw.items()}
        s_x, s_y = (association_scores(vecs[t], vecs["A"], vecs["B"]) for t in "XY")  # once: the check and rho
        labels = ResultLabels(test=test.id, model=name_of(model), calibration=name)
        if full is None:
            given = weat_from_vectors(
                vecs["X"],
                vecs["Y"],
                vecs["A"],
                vecs["B"],
                permutation=perm,
                ddof=ddof,
                rng=stream(root, "weat", test.id)[0] if root is not None else rng,
                labels=labels,
            )
        else:
            given = _given_full(full[k], s_x, s_y, ddof, test.id, name)
        base = base_raw if c is None else c.transform(base_raw)
        coherence: dict[str, Any] = {f"coherence_{r.lower()}": mean_pair_cosine(vecs[r]) for r in ROLES}
        out.append(
            WordListAudit(
                test=test.id,
                model=name_of(model),
                calibration=name,
                effect_size=float(given.effect_size),
                p_value=float(given.p_value),
                **_frequency(model, words, np.concatenate([s_x, s_y])),
                **coherence,
                baseline_cosine=mean_pair_cosine(base),
                baseline_source=base_desc,
                alpha=float(alpha),
                leave_one_out=leave_one_out(vecs, words, given, alpha=alpha, rng=root, permutation=perm),
            )
        )
    return out
