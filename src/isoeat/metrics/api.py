"""Running the bias metrics on a model and a test, raw or calibrated: :func:`metric`, :func:`run_metrics`.

The pipeline is WEAT's (:func:`isoeat.weat`): look the four sets up (out of
vocabulary words dropped and reported, ``min_coverage`` enforced), refuse an
invalid test (:func:`isoeat.stats.validity.check_test`), resolve
``calibration=`` (:func:`isoeat.stats.weat.resolve_calibration`), transform
every vector, compute. Word-pair metrics look their defining pairs up too
(:mod:`isoeat.metrics._pairs`).

p-values: signed metrics permute the target words over the partitions of
:math:`X\\cup Y` (their per-word values do not depend on the split, so every
partition is a different split of one vector, as in WEAT); ``method="auto"``
counts exactly when that is cheap (:data:`EXACT_BUDGET`: up to 18 + 18
target words, or at most ``n_permutations`` partitions), a smaller exact
budget than WEAT's ``auto`` (which counts 25 + 25 exactly, seconds per
test), and samples ``n_permutations`` partitions beyond it (seeded through
``rng``). ``method="certified"`` asks for
:func:`~isoeat.stats.permutation.partition_test`'s bracket that holds the
exact p (WEAT's ``auto`` beyond its budget); it costs up to 0.3 s a test on
W1-W3 against 0.03 s for 100,000 sampled partitions, which would put the
eight metrics x ten tests x two spaces over the 5 s target
(``benchmarks/metrics.py``). ECT reports Spearman's test; MAC, direct bias
and RNSB have none.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._errors import ConfigError, CoverageError, InvalidTestError, IsoeatError, IsoeatWarning
from .._random import as_generator, resolve_seed, stream
from .._surface import public, require_encoder
from .._types import Calibrator, Encoder, name_of
from .._validate import check_bool
from ..stats.permutation import exact_cost, partition_test
from ..stats.validity import check_test, vocabulary_entries
from ..stats.weat import _lookup_sets, documents_calibration, resolve_calibration
from ._pairs import PairSpec, format_pairs, resolve_pairs
from ._result import MetricResult
from .formulas import Scores
from .registry import METRICS, Inputs, MetricSpec, check_options

__all__ = ["metric", "run_metrics", "metric_from_vectors", "select_metrics", "EXACT_BUDGET"]

#: ``exact_budget`` of ``method="auto"`` (see :func:`~isoeat.stats.permutation.exact_cost`): C(36, 18) costs
#: 8.8e6 and is counted exactly (C(32, 16), 2.0e6, in about 10 ms); C(38, 19) costs 1.9e7 and C(50, 25) 1.6e9
#: (seconds): sampled.
EXACT_BUDGET = 1e7


# --------------------------------------------------------------------------- from vectors
def _p_fields(spec: MetricSpec, scores: Scores, n_x: int, opts: dict[str, Any], gen: Any) -> dict[str, Any]:
    """p-value columns of the result: permutation over target partitions, Spearman, or none."""
    if spec.p_value == "spearman":
        return dict(p_value=scores.p_value, p_method="spearman-t" if not math.isnan(scores.p_value) else "none",
                    alternative="two-sided")
    if spec.p_value != "permutation" or not np.isfinite(scores.per_word).all():
        return {}
    method, n = opts["method"], len(scores.per_word)
    if method == "auto":  # exact when cheap, else sampled: a certified bracket costs up to 0.3 s a test here
        cheap = exact_cost(n, n_x) <= EXACT_BUDGET or math.comb(n, n_x) <= opts["n_permutations"]
        method = "exact" if cheap else "monte-carlo"
    perm = partition_test(scores.per_word, n_x, alternative=opts["alternative"], method=method,
                          n_permutations=opts["n_permutations"], rng=gen)
    return dict(p_value=float(perm.p_value), p_method=perm.p_method, alternative=opts["alternative"],
                n_permutations=int(perm.n_permutations if perm.n_permutations is not None else perm.n_partitions),
                n_partitions=int(perm.n_partitions))


def _result(spec: MetricSpec, inp: Inputs, opts: dict[str, Any], rng: Any, *, words: tuple[str, ...],
            pairs: PairSpec | None, labels: dict[str, Any]) -> MetricResult:
    gen, seed = resolve_seed(rng)
    scores = spec.compute(inp, opts)
    notes = []
    if pairs is not None and pairs.note:
        notes.append(pairs.note)
    if not math.isfinite(scores.estimate):  # a signed metric's estimate is nan whenever a per-word value is
        notes.append("estimate undefined (a constant or degenerate input); no p-value")
    p_fields = _p_fields(spec, scores, inp.n_x, opts, gen)
    ci = {}
    if (opts["ci"] or opts["bootstrap"]) and "ci" in spec.options and math.isfinite(scores.estimate):
        from .intervals import metric_interval

        ci = metric_interval(spec, inp, opts, gen)
        notes.append(ci.pop("_note", ""))
    return MetricResult(
        metric=spec.name, estimate=float(scores.estimate), signed=spec.signed, **ci,
        **p_fields, n_x=inp.n_x, n_y=len(inp.W) - inp.n_x,
        n_a=len(inp.A), n_b=len(inp.B),
        pairs=format_pairs(pairs.pairs) if pairs is not None else (),
        pairs_source=pairs.source if pairs is not None else "", settings=spec.settings(opts),
        note="; ".join(n for n in notes if n), seed=seed, words=tuple(words),
        per_word=tuple(float(v) for v in scores.per_word), **labels,
    )


def _matrix(M: Any, role: str) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2:
        raise ConfigError(f"set {role}: expected a 2-D array of vectors, got shape {M.shape}")
    return M


def metric_from_vectors(
    name: str, X: Any, Y: Any, A: Any, B: Any, *, P1: Any = None, P2: Any = None,
    rng: int | np.random.Generator | None = None, words: Iterable[str] = (), labels: Any = None, **options: Any,
) -> MetricResult:
    """One metric from four matrices of vectors (rows), already calibrated if wanted.

    Parameters
    ----------
    name : str
        A registered metric (:func:`isoeat.metric_names`).
    X, Y, A, B : ndarray of shape (n, dim)
        Targets and poles.
    P1, P2 : ndarray of shape (n_pairs, dim), optional
        Defining pairs of the word-pair metrics (row i of P1 with row i of P2).
        Without them RIPA and direct bias zip the rows of A and B (equal sizes
        needed) and SemAxis uses A and B as its poles.
    rng : None, int or numpy.random.Generator
        Seeds a Monte Carlo permutation p (recorded as ``seed``).
    words : iterable of str
        The target words, X first (recorded with the per-word values).
    labels : ResultLabels, optional
        ``test``, ``bias_type``, ``model``, ``calibration`` recorded in the result
        (:class:`~isoeat.stats.options.ResultLabels`; also accepted by name).
    **options
        Metric options (:mod:`isoeat.metrics.registry`), and the label fields by name.

    Examples
    --------
    >>> X = np.array([[1.0, 0.2], [1.0, 0.4]]); Y = np.array([[0.2, 1.0], [0.4, 1.0]])
    >>> A = np.array([[1.0, 0.0], [1.0, 0.1]]); B = np.array([[0.0, 1.0], [0.1, 1.0]])
    >>> r = metric_from_vectors("semaxis", X, Y, A, B, rng=0)
    >>> round(r.estimate, 3), r.p_method, r.n_partitions
    (0.949, 'exact', 6)
    """
    from ..stats.options import ResultLabels

    label_names = ("test", "bias_type", "model", "calibration")
    lab = labels if labels is not None else ResultLabels()
    if not isinstance(lab, ResultLabels):
        raise ConfigError(f"metric_from_vectors: labels must be a ResultLabels, got {type(lab).__name__}")
    lab = replace(lab, **{k: options.pop(k) for k in label_names if k in options})
    test = lab.test
    spec = METRICS.get(name)
    opts = check_options([spec], options)
    mats = {r: _matrix(M, r) for r, M in (("X", X), ("Y", Y), ("A", A), ("B", B))}
    check_test(test, vectors=mats, ddof=1)
    pairs = None
    if (P1 is not None or P2 is not None) and not spec.pairs:
        raise ConfigError(f"P1 and P2 (defining pairs) do not apply to {spec.name} (they apply to "
                          f"{', '.join(s.name for s in METRICS.values() if s.pairs)})")
    if P1 is not None or P2 is not None:
        P1, P2 = _matrix(P1, "P1"), _matrix(P2, "P2")
        if P1.shape != P2.shape or len(P1) < 1:
            raise ConfigError(f"P1 and P2 must have one row per pair and the same shape, got {P1.shape} and {P2.shape}")
        pairs = PairSpec((), "given")
    elif spec.pairs == "required":
        if len(mats["A"]) != len(mats["B"]):
            raise ConfigError(f"{spec.name} needs defining pairs: give P1 and P2, or A and B of the same size")
        P1, P2 = mats["A"], mats["B"]
        pairs = PairSpec((), "zip(A,B)", "pairs: rows of A and B zipped")
    dims = {M.shape[1] for M in (*mats.values(), *((P1, P2) if pairs else ()))}
    if len(dims) != 1:
        raise ConfigError(f"test {test}: the vectors have different dimensions {sorted(dims)}")
    inp = Inputs(np.vstack([mats["X"], mats["Y"]]), len(mats["X"]), mats["A"], mats["B"],
                 P1 if pairs else None, P2 if pairs else None)
    return _result(spec, inp, opts, rng, words=tuple(words), pairs=pairs,
                   labels={k: getattr(lab, k) for k in label_names})


# --------------------------------------------------------------------------- from a model
@dataclass(frozen=True)
class _PairVectors:
    """Defining pairs kept (both words found), their raw vectors, dropped pairs (``"pair:a-b"``), case folds."""

    spec: PairSpec
    P1: np.ndarray
    P2: np.ndarray
    dropped: tuple[str, ...]
    case_folded: tuple[str, ...]


class _Prepared:
    """A test's vectors looked up once (raw), with its words, dropped and case-folded entries."""

    def __init__(self, model: Encoder, test: Any, min_coverage: float, allow_overlap: bool) -> None:
        found: dict[str, tuple[list[str], list[str]]] = {}
        self.near: list[str] = []
        self.embedded: list[str] = []  # how each phrase was embedded (static vectors)
        self.vecs, self.dropped, self.folded = _lookup_sets(model, test, min_coverage, words_out=found,
                                                            suggestions_out=self.near, embedded_out=self.embedded)
        check_test(test.id, words={r: w for r, (w, _) in found.items()},
                   entries={r: e for r, (_, e) in found.items()}, vectors=self.vecs, ddof=1,
                   allow_overlap=allow_overlap)
        self.test, self.model, self.found = test, model, found
        self.min_coverage, self.allow_overlap = min_coverage, allow_overlap
        self._pairs: dict[tuple, _PairVectors] = {}

    def pair_vectors(self, spec: PairSpec) -> _PairVectors:
        """Raw vectors of the pairs both of whose words are in the vocabulary (looked up once per pair list)."""
        if spec.pairs not in self._pairs:
            self._pairs[spec.pairs] = self._lookup_pairs(spec)
        return self._pairs[spec.pairs]

    def _lookup_pairs(self, spec: PairSpec) -> _PairVectors:
        words = [w for p in spec.pairs for w in p]
        lk = self.model.lookup(list(dict.fromkeys(words)))
        row = {w: i for i, w in enumerate(lk.found)}
        entry = dict(zip(lk.found, vocabulary_entries(lk.found, lk.case_folded, getattr(lk, "embedded", ()))))
        kept = [p for p in spec.pairs if p[0] in row and p[1] in row]
        dropped = [f"pair:{a}-{b}" for a, b in spec.pairs if (a, b) not in kept]
        if not kept or len(kept) < self.min_coverage * len(spec.pairs):
            raise CoverageError(
                f"test {self.test.id}: {len(dropped)} of {len(spec.pairs)} defining pairs have a word not in the "
                f"vocabulary of {name_of(self.model, 'the model')} (minimum coverage "
                f"{self.min_coverage:.0%}, and at least 1 pair): {', '.join(dropped[:10])}")
        same = [f"{a}-{b}" for a, b in kept if entry[a] == entry[b]]
        if same:
            raise InvalidTestError(f"test {self.test.id}: the defining pair {same[0]} names one vocabulary entry twice")
        if spec.source != "zip(A,B)":
            targets = {e for r in ("X", "Y") for e in self.found[r][1]}
            common = sorted(targets & {entry[w] for p in kept for w in p})
            if common:
                msg = f"test {self.test.id}: target word(s) among the defining pairs: {', '.join(common[:8])}"
                if not self.allow_overlap:
                    raise InvalidTestError(msg + "; pass allow_overlap=True (--allow-overlap) to measure it anyway")
                warnings.warn(msg + " (allow_overlap=True)", IsoeatWarning, stacklevel=4)
        return _PairVectors(PairSpec(tuple(kept), spec.source, spec.note), lk.vectors[[row[a] for a, _ in kept]],
                            lk.vectors[[row[b] for _, b in kept]], tuple(dropped),
                            tuple(f"{w}->{e}" for w, e in lk.case_folded))


def _one(prep: _Prepared, spec: MetricSpec, cal: Calibrator | None, cal_name: str, opts: dict[str, Any],
         rng: Any) -> MetricResult:
    t = prep.test
    v = prep.vecs if cal is None else {r: cal.transform(m) for r, m in prep.vecs.items()}
    pairs, P1, P2, dropped, folded = None, None, None, tuple(prep.dropped), tuple(prep.folded)
    explicit = opts["pairs"] is not None or getattr(t, "pairs", None)
    if spec.pairs == "required" or (spec.pairs == "optional" and explicit):
        pv = prep.pair_vectors(resolve_pairs(opts["pairs"], t))
        pairs, P1, P2 = pv.spec, pv.P1, pv.P2
        dropped += pv.dropped
        folded += tuple(f for f in pv.case_folded if f not in folded)
        if cal is not None:
            P1, P2 = cal.transform(P1), cal.transform(P2)
    words = tuple(prep.found["X"][0] + prep.found["Y"][0])
    inp = Inputs(np.vstack([v["X"], v["Y"]]), len(v["X"]), v["A"], v["B"], P1, P2)
    return _result(spec, inp, opts, rng, words=words, pairs=pairs, labels=dict(
        test=t.id, bias_type=t.bias_type, model=name_of(prep.model), calibration=cal_name,
        dropped=dropped, case_folded=folded, suggestions=tuple(prep.near), embedded=tuple(prep.embedded)))


@public
@documents_calibration
def metric(
    model: Encoder, name: str, test: Any, *, calibration: Calibrator | str | None = None,
    rng: int | np.random.Generator | None = None, min_coverage: float = 0.8, force: bool = False,
    allow_overlap: bool = False, **options: Any,
) -> MetricResult:
    """One bias metric on one test, raw or calibrated.

    Parameters
    ----------
    model : Encoder
        Anything with ``lookup``, e.g. ``isoeat.load_model("glove-6b-50d")``.
    name : str
        ``"mac"``, ``"rnd"``, ``"ect"``, ``"ripa"``, ``"semaxis"``,
        ``"direct-bias"``, ``"nas"`` or ``"rnsb"`` (:func:`isoeat.metric_names`;
        formulas and citations in :mod:`isoeat.metrics.formulas`).
    test : AssociationTest or str
        A test, a registered id such as ``"W6"``, or the path of a test file
        holding one test. X and Y are the target words measured, A and B the poles.
    calibration : see CALIBRATION_DOC
    rng : None, int or numpy.random.Generator
        The root seed of a Monte Carlo permutation p or bootstrap, recorded as
        ``seed``; the draws come from the stream ``("metric", name, TEST)``
        (``seed_stream``; :func:`isoeat._random.derive_seed`).
    min_coverage : float, default 0.8
        As in :func:`isoeat.weat` (also the share of defining pairs kept).
    allow_overlap : bool, default False
        As in :func:`isoeat.weat`; also covers target words among the defining pairs.
    **options
        ``alternative`` (default ``"two-sided"``), ``method`` (``"auto"``),
        ``n_permutations`` (100000): the permutation p of RND, RIPA, SemAxis,
        NAS. ``pairs``: RIPA, direct bias, SemAxis; ``None`` (the test's
        pairs, else A and B zipped, see :mod:`isoeat.metrics._pairs`),
        ``"gender"`` (Bolukbasi et al.'s ten pairs) or a list of
        ``(word, word)``. ``c`` (1.0): DirectBias_c. ``C`` (1.0): RNSB's
        inverse L2 strength. An option the metric does not take is an error.

    Returns
    -------
    MetricResult

    Examples
    --------
    >>> import isoeat
    >>> r = isoeat.metric(isoeat.load_model("glove-6b-50d"), "ripa", "W7", rng=0)  # doctest: +SKIP
    >>> r.estimate, r.p_value, r.pairs_source  # doctest: +SKIP
    """
    from ..wordsets import as_test

    require_encoder(model, "metric")
    spec = METRICS.get(name)
    return _run(model, [spec], [as_test(test)], calibration, rng, min_coverage, force, allow_overlap,
                check_options([spec], options))[0]


def select_metrics(names: Any) -> list[MetricSpec]:
    """The specs ``names`` asks for: ``None``/``"all"`` (any case), ``"mac,ripa"`` or a list; duplicates refused."""
    if names is None or (isinstance(names, str) and names.strip().lower() == "all"):
        return list(METRICS.values())
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    specs = [METRICS.get(n) for n in names]
    if not specs:
        raise ConfigError("names: give at least one metric (see isoeat.metric_names())")
    dup = sorted({s.name for s in specs if specs.count(s) > 1})
    if dup:
        raise ConfigError(f"metric(s) named more than once: {', '.join(dup)}")
    return specs


@public
@documents_calibration
def run_metrics(
    model: Encoder, names: str | Iterable[str] | None = None, tests: Any = None, *,
    calibration: Calibrator | str | None = None, rng: int | np.random.Generator | None = None,
    min_coverage: float = 0.8, force: bool = False, allow_overlap: bool = False, **options: Any,
) -> list[MetricResult]:
    """Several metrics on several tests: one lookup per test, one calibrator for all (``isoeat.metrics(...)``).

    Parameters
    ----------
    model : Encoder
    names : None, "all", str or iterable of str
        Metric names (``"mac,ripa"`` or a list); ``None``/``"all"``: every
        registered metric.
    tests : None, AssociationTest, str or iterable
        Tests, ids (``"W1,W6"``) or test files (every test of a file);
        ``None``: the ten built-in tests W1..W10.
    calibration : see CALIBRATION_DOC
    rng : None, int or numpy.random.Generator
        The root seed: metric ``m`` on test ``t`` draws from the stream
        ``("metric", m, t)`` (:func:`isoeat._random.derive_seed`; raw and calibrated alike), so its
        numbers do not depend on the other metrics and tests asked for, and
        :func:`metric` with the same ``rng`` replays it. A Generator is shared by all.
    min_coverage, force, allow_overlap, **options
        As in :func:`metric`; an option applies to the metrics that take it
        and must apply to at least one of them.

    Returns
    -------
    list of MetricResult, tests outer, metrics inner.
    """
    from ..wordsets import as_tests

    require_encoder(model, "run_metrics")
    specs = select_metrics(names)
    opts = check_options(specs, options)
    tests = as_tests(tests)
    return _run(model, specs, tests, calibration, rng, min_coverage, force, allow_overlap, opts)


def _run(model: Encoder, specs: list[MetricSpec], tests: list[Any], calibration: Any, rng: Any,
         min_coverage: float, force: bool, allow_overlap: bool, opts: dict[str, Any]) -> list[MetricResult]:
    """Every metric of ``specs`` on every test (tests outer), each on its named stream of ``rng``."""
    allow_overlap = check_bool("allow_overlap", allow_overlap)
    cal, cal_name = resolve_calibration(calibration, model, force=force)
    root = None if isinstance(rng, (np.random.Generator, np.random.SeedSequence)) else stream(rng)[1]
    gen = as_generator(rng) if root is None else None
    out = []
    for t in tests:
        prep = _Prepared(model, t, min_coverage, allow_overlap)
        for spec in specs:
            key = ("metric", spec.name, t.id)
            try:
                res = _one(prep, spec, cal, cal_name, opts, gen if root is None else stream(root, *key)[0])
            except IsoeatError as exc:  # the failure is the metric's own, and says so
                raise _named(exc, f"{spec.name} on {t.id} ({'raw' if cal is None else cal_name})") from None
            out.append(res if root is None else replace(res, seed=root, seed_stream=key))
    return out


def _named(exc: IsoeatError, where: str) -> IsoeatError:
    """``exc`` with ``where`` (metric, test, space) in front of its message, of the same class when it can be."""
    msg = f"{where}: {exc}"
    try:
        named = type(exc)(msg)
    except TypeError:  # a class with another constructor (InvalidValueError): its family
        named = ConfigError(msg)
    return named
