r"""WEAT and SC-WEAT statistics (Caliskan, Bryson & Narayanan 2017).

Notation follows the paper (§2.1, eq. 1–4). For a target word :math:`w` and
attribute sets :math:`A, B`

.. math::

    s(w,A,B) = \operatorname{mean}_{a\in A}\cos(\vec w,\vec a)
             - \operatorname{mean}_{b\in B}\cos(\vec w,\vec b)

    S(X,Y,A,B) = \sum_{x\in X}s(x,A,B) - \sum_{y\in Y}s(y,A,B)

    d = \frac{\operatorname{mean}_{x\in X}s(x,A,B)-\operatorname{mean}_{y\in Y}s(y,A,B)}
             {\operatorname{std}_{w\in X\cup Y}s(w,A,B)}

The standard deviation uses ``ddof=1`` (sample SD, as Caliskan et al.) unless
told otherwise. :math:`s` is computed once per target word; every permutation
of the test is then a different split of that vector (see
:mod:`isoeat.stats.permutation`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .._errors import ConfigError, CoverageError
from .bootstrap import effect_size
from .permutation import PermutationResult, partition_test

__all__ = [
    "cosine_matrix",
    "association_scores",
    "effect_size",
    "test_statistic",
    "WEATResult",
    "SCWEATResult",
    "weat_from_vectors",
    "weat",
    "sc_weat_from_vectors",
    "sc_weat",
    "resolve_seed",
    "ALTERNATIVES",
]

ALTERNATIVES = ("greater", "less", "two-sided")


def cosine_matrix(U: np.ndarray, V: np.ndarray) -> np.ndarray:
    r"""Pairwise cosine similarities :math:`\cos(u_i, v_j)`, shape ``(len(U), len(V))``."""
    U = np.asarray(U, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    nu = np.linalg.norm(U, axis=1, keepdims=True)
    nv = np.linalg.norm(V, axis=1, keepdims=True)
    if (nu == 0).any() or (nv == 0).any():
        raise ConfigError("cosine is undefined for an all-zero vector")
    return (U / nu) @ (V / nv).T


def association_scores(W: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    r""":math:`s(w,A,B)` for every row ``w`` of ``W`` (paper eq. 1).

    Examples
    --------
    >>> association_scores(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]))
    array([1.])
    """
    return cosine_matrix(W, A).mean(axis=1) - cosine_matrix(W, B).mean(axis=1)


def test_statistic(s_x: np.ndarray, s_y: np.ndarray) -> float:
    r""":math:`S = \sum_X s - \sum_Y s` (paper eq. 2)."""
    return float(np.sum(s_x) - np.sum(s_y))


test_statistic.__test__ = False  # keep pytest from collecting it


def resolve_seed(rng: Any) -> tuple[np.random.Generator, int | None]:
    """Turn the ``rng`` keyword (None, int or Generator) into a Generator and a recordable seed."""
    if isinstance(rng, np.random.Generator):
        return rng, None
    if rng is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
        return np.random.default_rng(seed), seed
    if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0:
        raise ConfigError(f"rng must be None, a non-negative int or a numpy Generator, got {rng!r}")
    return np.random.default_rng(int(rng)), int(rng)


@dataclass(frozen=True)
class WEATResult:
    """One WEAT on one embedding space.

    The same fields are filled on every path; quantities that were not
    computed are ``nan`` (floats) or ``None``.

    Attributes
    ----------
    test, bias_type, model, calibration : str
    effect_size : float
        :math:`d` (eq. 3), SD with ``ddof``.
    statistic : float
        :math:`S` (eq. 2).
    p_value : float
        Permutation p-value for ``alternative``; exact (``k / n_partitions``)
        or Monte Carlo (``(k+1)/(N+1)``), see ``p_method``.
    p_method : str
        ``"exact"`` or ``"monte-carlo"``.
    n_permutations : int
        Number of partitions the p-value is based on: all of them when exact,
        the N sampled ones for Monte Carlo.
    n_partitions : int
        :math:`\\binom{|X|+|Y|}{|X|}`, the size of the full permutation null.
    count : int
        Partitions (or sampled ones) whose statistic reached the observed one.
    p_ci_low, p_ci_high : float
        Clopper–Pearson 95% interval on p for Monte Carlo; equal to p when exact.
    tolerance : float
        Absolute tolerance on the X-side sum under which ties count as reaching.
    alternative : str
    ddof : int
    n_x, n_y, n_a, n_b : int
        Set sizes actually used (after dropping out-of-vocabulary words).
    dropped : tuple of str
        ``"ROLE:word"`` for every word not found in the model.
    case_folded : tuple of str
        ``"word->entry"`` for words found by the lowercase fallback.
    fallback : tuple of str
        ``"ROLE:word"`` for words a contextual model found in no corpus
        sentence and encoded in its neutral template instead.
    seed : int or None
        Seed of the Monte Carlo generator (``None`` when a Generator was passed).
    stopped_early : bool
        Monte Carlo stopped once its interval on p lay clear of alpha.
    effect_size_ci_low, effect_size_ci_high : float
        Bootstrap interval on d when requested (``bootstrap > 0``), else ``nan``.
    effect_size_ci_method : str
        ``"percentile"`` or ``"bca"`` (``"+attributes"`` appended when the
        attribute words were resampled too); empty when not computed.
    effect_size_ci_level : float
        Confidence level of that interval.
    effect_size_ci_resamples : int
        Bootstrap replicates (0 when not computed).
    effect_size_ci_note : str
        Why BCa fell back to percentile, or how many undefined replicates
        were dropped; empty otherwise.
    p_holm, p_bh : float
        Holm and Benjamini–Hochberg adjusted p across the battery the result
        was run in (see :func:`isoeat.compare_calibration`); ``nan`` for a
        single test. They are reported next to ``p_value``, never instead.
    """

    test: str
    bias_type: str
    model: str
    calibration: str
    effect_size: float
    statistic: float
    p_value: float
    p_method: str
    n_permutations: int
    n_partitions: int
    count: int
    p_ci_low: float
    p_ci_high: float
    tolerance: float
    alternative: str
    ddof: int
    n_x: int
    n_y: int
    n_a: int
    n_b: int
    dropped: tuple[str, ...] = ()
    case_folded: tuple[str, ...] = ()
    fallback: tuple[str, ...] = ()
    seed: int | None = None
    stopped_early: bool = False
    effect_size_ci_low: float = float("nan")
    effect_size_ci_high: float = float("nan")
    effect_size_ci_method: str = ""
    effect_size_ci_level: float = float("nan")
    effect_size_ci_resamples: int = 0
    effect_size_ci_note: str = ""
    p_holm: float = float("nan")
    p_bh: float = float("nan")
    s_x: tuple[float, ...] = field(default=(), repr=False)
    s_y: tuple[float, ...] = field(default=(), repr=False)

    def significant(self, alpha: float = 0.05) -> bool:
        """``p_value < alpha``."""
        return bool(self.p_value < alpha)

    def to_dict(self, *, scores: bool = False) -> dict[str, Any]:
        """A JSON-ready record (tuples become lists; ``s_x``/``s_y`` only if ``scores``)."""
        d = asdict(self)
        for k in ("dropped", "case_folded", "fallback", "s_x", "s_y"):
            d[k] = list(d[k])
        if not scores:
            d.pop("s_x")
            d.pop("s_y")
        return d


def _p_fields(perm: PermutationResult) -> dict[str, Any]:
    """The p-value fields shared by WEAT and SC-WEAT results."""
    return dict(
        p_value=float(perm.p_value),
        p_method=perm.p_method,
        n_permutations=int(perm.n_permutations if perm.n_permutations is not None else perm.n_partitions),
        n_partitions=int(perm.n_partitions),
        count=int(perm.count),
        p_ci_low=float(perm.ci_low),
        p_ci_high=float(perm.ci_high),
    )


def _validate(alternative: str, ddof: Any) -> None:
    if alternative not in ALTERNATIVES:
        raise ConfigError(f"alternative must be one of {', '.join(ALTERNATIVES)}; got {alternative!r}")
    if isinstance(ddof, bool) or not isinstance(ddof, (int, np.integer)) or ddof < 0:
        raise ConfigError(f"ddof must be a non-negative integer, got {ddof!r}")


def weat_from_vectors(
    X: np.ndarray,
    Y: np.ndarray,
    A: np.ndarray,
    B: np.ndarray,
    *,
    ddof: int = 1,
    alternative: str = "greater",
    method: str = "auto",
    n_permutations: int = 100_000,
    rng: Any = None,
    test: str = "custom",
    bias_type: str = "",
    model: str = "",
    calibration: str = "none",
    dropped: tuple[str, ...] = (),
    case_folded: tuple[str, ...] = (),
    fallback: tuple[str, ...] = (),
    bootstrap: int = 0,
    ci_method: str = "percentile",
    ci_level: float = 0.95,
    resample_attributes: bool = False,
    **permutation_kwargs: Any,
) -> WEATResult:
    r"""WEAT effect size and permutation p-value from four matrices of vectors.

    Parameters
    ----------
    X, Y, A, B : ndarray of shape (n, dim)
        Target and attribute vectors (rows), already calibrated if wanted.
    ddof : int, default 1
        See :func:`effect_size`.
    alternative : {"greater", "less", "two-sided"}
        ``"greater"``: :math:`p = P[S_i \ge S]` over equal-size partitions of
        :math:`X\cup Y` (ties within a tolerance count as reaching).
    method : {"auto", "exact", "monte-carlo"}
        See :func:`isoeat.stats.permutation.partition_test`.
    n_permutations : int, default 100_000
        Monte Carlo sample size.
    rng : None, int or numpy.random.Generator
    bootstrap : int, default 0
        Bootstrap replicates for a confidence interval on d (0: none). Target
        words are resampled with replacement within X and within Y; with
        ``resample_attributes`` the A and B words too.
    ci_method : {"percentile", "bca"}
    ci_level : float, default 0.95
    **permutation_kwargs
        Passed to :func:`~isoeat.stats.permutation.partition_test`, e.g.
        ``sequential_alpha=0.05`` (stop Monte Carlo once the Clopper–Pearson
        interval on p lies clear of 0.05), ``exact_budget``, ``rtol``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.1], [1.0, 0.2]]); Y = np.array([[0.1, 1.0], [0.2, 1.0]])
    >>> A = np.array([[1.0, 0.0], [1.0, 0.05]]); B = np.array([[0.0, 1.0], [0.05, 1.0]])
    >>> r = weat_from_vectors(X, Y, A, B, rng=0)
    >>> round(r.effect_size, 3), r.p_method, r.n_partitions
    (1.73, 'exact', 6)
    """
    _validate(alternative, ddof)
    mats = {}
    for role, M in (("X", X), ("Y", Y), ("A", A), ("B", B)):
        M = np.asarray(M, dtype=np.float64)
        if M.ndim != 2:
            raise ConfigError(f"set {role}: expected a 2-D array of vectors, got shape {M.shape}")
        if M.shape[0] < 2:
            raise CoverageError(f"test {test}: set {role} has {M.shape[0]} word(s); at least 2 are needed")
        mats[role] = M
    dims = {M.shape[1] for M in mats.values()}
    if len(dims) != 1:
        raise ConfigError(f"test {test}: the four sets have different dimensions {sorted(dims)}")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, (int, np.integer)) or bootstrap < 0:
        raise ConfigError(f"bootstrap must be a non-negative integer (0 = no interval), got {bootstrap!r}")
    gen, seed = resolve_seed(rng)
    cos = {(t, a): cosine_matrix(mats[t], mats[a]) for t in "XY" for a in "AB"}
    s_x = cos["X", "A"].mean(axis=1) - cos["X", "B"].mean(axis=1)
    s_y = cos["Y", "A"].mean(axis=1) - cos["Y", "B"].mean(axis=1)
    s = np.concatenate([s_x, s_y])
    perm: PermutationResult = partition_test(
        s,
        len(s_x),
        alternative=alternative,
        method=method,
        n_permutations=n_permutations,
        rng=gen,
        **permutation_kwargs,
    )
    ci: dict[str, Any] = {}
    if bootstrap:
        from .bootstrap import bootstrap_effect_size

        boot = bootstrap_effect_size(
            s_x, s_y, ddof=ddof, n_resamples=int(bootstrap), confidence=ci_level, method=ci_method, rng=gen,
            attribute_cos=(
                (cos["X", "A"], cos["X", "B"], cos["Y", "A"], cos["Y", "B"]) if resample_attributes else None
            ),
        )
        ci = dict(
            effect_size_ci_low=float(boot.ci_low),
            effect_size_ci_high=float(boot.ci_high),
            effect_size_ci_method=boot.method + ("+attributes" if boot.resample_attributes else ""),
            effect_size_ci_level=float(boot.confidence),
            effect_size_ci_resamples=int(boot.n_resamples),
            effect_size_ci_note=boot.note or "",
        )
    return WEATResult(
        test=test,
        bias_type=bias_type,
        model=model,
        calibration=calibration,
        effect_size=effect_size(s_x, s_y, ddof=ddof),
        statistic=test_statistic(s_x, s_y),
        **_p_fields(perm),
        tolerance=float(perm.tolerance),
        alternative=alternative,
        ddof=int(ddof),
        n_x=len(s_x),
        n_y=len(s_y),
        n_a=mats["A"].shape[0],
        n_b=mats["B"].shape[0],
        dropped=tuple(dropped),
        case_folded=tuple(case_folded),
        fallback=tuple(fallback),
        seed=seed,
        stopped_early=bool(perm.stopped_early),
        **ci,
        s_x=tuple(float(v) for v in s_x),
        s_y=tuple(float(v) for v in s_y),
    )


def _lookup_sets(
    model: Any, test: Any, min_coverage: float, fallback_out: list[str] | None = None
) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    if not (0.0 <= float(min_coverage) <= 1.0):
        raise ConfigError(f"min_coverage must lie in [0, 1], got {min_coverage!r}")
    vecs: dict[str, np.ndarray] = {}
    dropped: list[str] = []
    folded: list[str] = []
    sets = test.sets() if hasattr(test, "sets") else test["sets"]
    test_id = test.id if hasattr(test, "id") else test["id"]
    for role, ws in sets.items():
        lk = model.lookup(ws.words)
        dropped.extend(f"{role}:{w}" for w in lk.missing)
        folded.extend(f"{w}->{entry}" for w, entry in lk.case_folded)
        if fallback_out is not None:
            fallback_out.extend(f"{role}:{w}" for w in getattr(lk, "fallback", ()))
        if lk.coverage < min_coverage or len(lk.found) < 2:
            shown = ", ".join(lk.missing[:10]) + (" ..." if len(lk.missing) > 10 else "")
            raise CoverageError(
                f"test {test_id}, set {role} ({ws.name}): {len(lk.missing)} of {len(ws.words)} words "
                f"not in the vocabulary of {getattr(model, 'name', 'the model')} "
                f"({lk.coverage:.0%} coverage; minimum {min_coverage:.0%}, and at least 2 words): {shown}"
            )
        vecs[role] = lk.vectors
    return vecs, dropped, folded


def weat(
    model: Any,
    test: Any,
    *,
    calibration: Any = None,
    ddof: int = 1,
    alternative: str = "greater",
    method: str = "auto",
    n_permutations: int = 100_000,
    rng: Any = None,
    min_coverage: float = 0.8,
    force: bool = False,
    **permutation_kwargs: Any,
) -> WEATResult:
    """Run one WEAT on a model, optionally after calibration (pipeline stages 2–3).

    Parameters
    ----------
    model : Encoder
        E.g. ``isoeat.load_model("glove-6b-50d")``.
    test : AssociationTest or str
        A test or a registered id such as ``"W6"``.
    calibration : fitted calibrator or None
        Anything with ``transform``, e.g. a fitted :class:`~isoeat.ZCAWhitener`.
        Its dimension and model fingerprint are checked (``force`` skips the
        fingerprint check, never the dimension check).
    min_coverage : float, default 0.8
        Out-of-vocabulary words are dropped and reported; a set that keeps
        less than this share of its words (or fewer than 2) is an error.
    ddof, alternative, method, n_permutations, rng
        See :func:`weat_from_vectors`.
    """
    if isinstance(test, str):
        from ..wordsets import get_test

        test = get_test(test)
    fallback: list[str] = []
    vecs, dropped, folded = _lookup_sets(model, test, min_coverage, fallback)
    cal_name = "none"
    if calibration is not None:
        from ..calibration import check_compatible

        check_compatible(calibration, model, force=force)
        vecs = {role: calibration.transform(v) for role, v in vecs.items()}
        cal_name = getattr(calibration, "name", type(calibration).__name__.lower())
    return weat_from_vectors(
        vecs["X"],
        vecs["Y"],
        vecs["A"],
        vecs["B"],
        ddof=ddof,
        alternative=alternative,
        method=method,
        n_permutations=n_permutations,
        rng=rng,
        test=test.id,
        bias_type=test.bias_type,
        model=getattr(model, "name", ""),
        calibration=cal_name,
        dropped=tuple(dropped),
        case_folded=tuple(folded),
        fallback=tuple(fallback),
        **permutation_kwargs,
    )


@dataclass(frozen=True)
class SCWEATResult:
    r"""Single-category WEAT for one target word (Caliskan et al. 2017).

    .. math::

        d = \frac{\operatorname{mean}_{a\in A}\cos(\vec w,\vec a)-\operatorname{mean}_{b\in B}\cos(\vec w,\vec b)}
                 {\operatorname{std}_{x\in A\cup B}\cos(\vec w,\vec x)}

    The p-value permutes the attribute words: all partitions of
    :math:`A\cup B` into sets of sizes :math:`|A|` and :math:`|B|`.
    """

    word: str
    effect_size: float
    statistic: float
    p_value: float
    p_method: str
    n_permutations: int
    n_partitions: int
    count: int
    p_ci_low: float
    p_ci_high: float
    alternative: str
    ddof: int
    n_a: int
    n_b: int
    seed: int | None = None
    tolerance: float = float("nan")
    dropped: tuple[str, ...] = ()
    case_folded: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["dropped"], d["case_folded"] = list(self.dropped), list(self.case_folded)
        return d


def sc_weat_from_vectors(
    w: np.ndarray,
    A: np.ndarray,
    B: np.ndarray,
    *,
    word: str = "",
    ddof: int = 1,
    alternative: str = "greater",
    method: str = "auto",
    n_permutations: int = 100_000,
    rng: Any = None,
    dropped: tuple[str, ...] = (),
    case_folded: tuple[str, ...] = (),
    **permutation_kwargs: Any,
) -> SCWEATResult:
    """SC-WEAT effect size and permutation p-value of one target vector ``w``.

    ``permutation_kwargs`` go to :func:`~isoeat.stats.permutation.partition_test`
    (``rtol``, ``exact_budget``, ``sequential_alpha``, ...).
    """
    _validate(alternative, ddof)
    w = np.asarray(w, dtype=np.float64).reshape(1, -1)
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.ndim != 2 or B.ndim != 2 or A.shape[0] < 2 or B.shape[0] < 2:
        raise CoverageError("SC-WEAT needs at least 2 attribute words in each of A and B")
    gen, seed = resolve_seed(rng)
    ca = cosine_matrix(w, A)[0]
    cb = cosine_matrix(w, B)[0]
    sd = float(np.std(np.concatenate([ca, cb]), ddof=ddof))
    stat = float(ca.mean() - cb.mean())
    d = stat / sd if sd > 0 else math.nan
    perm = partition_test(
        np.concatenate([ca, cb]), len(ca), alternative=alternative, method=method,
        n_permutations=n_permutations, rng=gen, **permutation_kwargs,
    )
    return SCWEATResult(
        word=word,
        effect_size=d,
        statistic=stat,
        **_p_fields(perm),
        alternative=alternative,
        ddof=int(ddof),
        n_a=len(ca),
        n_b=len(cb),
        seed=seed,
        tolerance=float(perm.tolerance),
        dropped=tuple(dropped),
        case_folded=tuple(case_folded),
    )


def sc_weat(
    model: Any,
    words: Any,
    attributes: Any,
    *,
    calibration: Any = None,
    ddof: int = 1,
    alternative: str = "greater",
    method: str = "auto",
    n_permutations: int = 100_000,
    rng: Any = None,
    min_coverage: float = 0.8,
    force: bool = False,
    **permutation_kwargs: Any,
) -> list[SCWEATResult]:
    """SC-WEAT of each target word against the attribute sets A and B of a test.

    Parameters
    ----------
    model : Encoder
    words : str or iterable of str
        Target words; words missing from the model are an error.
    attributes : AssociationTest, str, or (WordSet, WordSet)
        Where A and B come from: a test (or its id, e.g. ``"W6"`` for career
        vs. family) or a pair of word sets.
    calibration : fitted calibrator, optional

    Returns
    -------
    list of SCWEATResult, one per word (same seed stream, one child per word).
    """
    from ..wordsets import AssociationTest, WordSet, get_test

    if isinstance(attributes, str):
        attributes = get_test(attributes)
    if isinstance(attributes, AssociationTest):
        A, B = attributes.A, attributes.B
    else:
        try:
            A, B = attributes
        except (TypeError, ValueError):
            raise ConfigError("attributes must be a test, a test id, or a pair of WordSets (A, B)") from None
        if not (isinstance(A, WordSet) and isinstance(B, WordSet)):
            raise ConfigError("attributes must be a test, a test id, or a pair of WordSets (A, B)")
    if isinstance(words, str):
        words = [w.strip() for w in words.split(",") if w.strip()]
    words = list(words)
    if not words:
        raise ConfigError("words: give at least one target word")
    attrs = {"id": "SC-WEAT", "sets": {"A": A, "B": B}}
    vecs, dropped, folded = _lookup_sets(model, attrs, min_coverage)
    lk = model.lookup(words)
    if lk.missing:
        raise CoverageError(
            f"target word(s) not in the vocabulary of {getattr(model, 'name', 'the model')}: {', '.join(lk.missing)}"
        )
    W = lk.vectors
    Av, Bv = vecs["A"], vecs["B"]
    if calibration is not None:
        from ..calibration import check_compatible

        check_compatible(calibration, model, force=force)
        W, Av, Bv = (calibration.transform(m) for m in (W, Av, Bv))
    gen, _seed = resolve_seed(rng)
    seeds = np.random.SeedSequence(int(gen.integers(0, 2**63))).spawn(len(words))
    return [
        sc_weat_from_vectors(
            W[i], Av, Bv, word=w, ddof=ddof, alternative=alternative, method=method,
            n_permutations=n_permutations, rng=int(seeds[i].generate_state(1)[0]),
            dropped=tuple(dropped), case_folded=tuple(folded), **permutation_kwargs,
        )
        for i, w in enumerate(words)
    ]
