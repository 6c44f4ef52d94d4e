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

The result records (:class:`WEATResult`, :class:`SCWEATResult`) live in
:mod:`isoeat.stats.results` and are importable from here too. ``calibration=``
means the same at every entry point (:func:`weat`, :func:`sc_weat`,
:func:`isoeat.seat`): see :func:`resolve_calibration`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeVar  # noqa: UP035 - one line: docs/mutation.md records line ranges here

import numpy as np

from .._cosine import cosine_matrix, unit_rows  # noqa: F401 - re-exported: the one home is isoeat._cosine
from .._errors import ConfigError, CoverageError, InvalidTestError
from .._random import as_generator, resolve_seed, resolve_seed_sequence, spawn_seeds, stream  # noqa: F401 - re-exported
from .._surface import public, require_encoder
from .._types import Calibrator, Encoder, name_of
from .._validate import SUGGEST_WORDS, check_bool, check_choice, check_int, check_real
from ..labels import undefined_reason
from .bootstrap import effect_size
from .intervals import check_interval_options, interval_on_d
from .options import IntervalOptions, PermutationOptions, ResultLabels, gather
from .permutation import PermutationResult, partition_test
from .results import SCWEATResult, WEATResult, suggestion_entries, with_suggestions
from .validity import check_test, embedded_entries, missing_parts_note, vocabulary_entries

if TYPE_CHECKING:
    from ..wordsets import AssociationTest, WordSet

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
    "resolve_seed_sequence",
    "resolve_calibration",
    "resolve_calibrations",
    "ALTERNATIVES",
]

ALTERNATIVES = ("greater", "less", "two-sided")


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


test_statistic.__test__ = False  # type: ignore[attr-defined]  # keep pytest from collecting it (a function attribute)


CALIBRATION_DOC = """calibration : None, str, Calibrator or mapping, default None
        ``None`` or ``"none"``: the raw vectors. A registered calibration
        name such as ``"zca"`` (see :func:`isoeat.calibration.calibration_names`):
        a calibrator fitted on the model's reference vectors with default
        settings (:func:`isoeat.fit_calibrator`). A fitted calibrator
        (anything with ``transform``, e.g. a :class:`~isoeat.ZCAWhitener`):
        used as given. A one-entry mapping ``{name: params}`` fits that
        calibration with those parameters (``{"zca": {"eps": 1e-2}}``);
        ``{label: calibrator}`` uses the calibrator under that label. Either way
        its dimension and model fingerprint are checked against the model
        (``force`` skips the fingerprint check, never the dimension check) and
        its name is recorded as the result's ``calibration``."""

_F = TypeVar("_F", bound=Callable[..., Any])


def documents_calibration(fn: _F) -> _F:
    """Put :data:`CALIBRATION_DOC` in place of the ``calibration : ...`` line of ``fn``'s docstring.

    The entry points (WEAT, SC-WEAT, SEAT, the metrics) thus describe ``calibration=`` in the same words.
    """
    fn.__doc__ = (fn.__doc__ or "").replace("calibration : see CALIBRATION_DOC", CALIBRATION_DOC)
    return fn


_CALIBRATION_FORMS = ("None, 'none', a calibration name such as 'zca', a fitted calibrator with transform(), or a "
                      "mapping {name: params or calibrator}")


def resolve_calibrations(
    calibration: Any, model: Any, *, force: bool = False, n_reference: int | None = None,
    reference_kwargs: dict[str, Any] | None = None, argument: str = "calibration",
) -> dict[str, Calibrator]:
    """Every calibrator ``calibration=`` asks for, by label, checked against ``model`` (none: the raw space only).

    ``calibration`` is None or ``"none"`` (``{}``), a registered name (fitted
    here on ``n_reference`` reference vectors, default that of
    :func:`isoeat.fit_calibrator`, with ``reference_kwargs``), a fitted
    calibrator (labelled with its ``name``), or a mapping label -> fitted
    calibrator, or name -> parameters of that calibration (a dict, fitted here;
    None: default parameters).

    Examples
    --------
    >>> resolve_calibrations("none", model=None)
    {}
    """
    from .._validate import show

    if calibration is None or (isinstance(calibration, str) and calibration == "none"):
        return {}
    from ..calibration import check_compatible, fit_calibrator

    fit_kw: dict[str, Any] = {} if n_reference is None else {"n_reference": n_reference}
    if reference_kwargs:
        fit_kw["reference_kwargs"] = dict(reference_kwargs)
    if isinstance(calibration, str):
        items: list[tuple[str, Any]] = [(calibration, None)]
    elif callable(getattr(calibration, "transform", None)):
        items = [(str(getattr(calibration, "name", type(calibration).__name__.lower())), calibration)]
    elif isinstance(calibration, dict):
        items = list(calibration.items())
    else:
        raise ConfigError(f"{argument} must be {_CALIBRATION_FORMS}; got {show(calibration)}")
    out: dict[str, Calibrator] = {}
    for label, value in items:
        if not isinstance(label, str) or not label or label == "none":
            raise ConfigError(f"{argument}: a key must be a calibration name or label (not 'none'), got {show(label)}")
        if value is None or isinstance(value, dict):
            cal = fit_calibrator(model, label, **fit_kw, **(value or {}))
        elif callable(getattr(value, "transform", None)):
            cal = value
        else:
            raise ConfigError(f"{argument}[{label!r}] must be a fitted calibrator or a dict of the calibration's "
                              f"parameters; got {show(value)}")
        check_compatible(cal, model, force=force)
        out[label] = cal
    return out


def resolve_calibration(
    calibration: Calibrator | str | None, model: Any, *, force: bool = False, **fit: Any
) -> tuple[Calibrator | None, str]:
    """The calibrator that ``calibration=`` asks for, checked against ``model``, and its name.

    See :data:`CALIBRATION_DOC` for the accepted forms (:func:`resolve_calibrations`,
    one space at most; ``fit``: its ``n_reference`` and ``reference_kwargs``). Returns ``(None, "none")`` for raw
    vectors.

    Examples
    --------
    >>> resolve_calibration("none", model=None)
    (None, 'none')
    """
    cals = resolve_calibrations(calibration, model, force=force, **fit)
    if len(cals) > 1:
        raise ConfigError(f"calibration: this function measures one calibrated space; got {len(cals)} "
                          f"({', '.join(cals)}): call it once per calibration")
    if not cals:
        return None, "none"
    (label, cal), = cals.items()
    name = label if isinstance(calibration, dict) else str(getattr(cal, "name", type(cal).__name__.lower()))
    return cal, name


def _p_fields(perm: PermutationResult, d: float, scores: np.ndarray, n: int, test: str = "weat") -> dict[str, Any]:
    """The effect size and p-value fields shared by WEAT and SC-WEAT results, and ``undefined``: where ``d`` is
    undefined (its SD is 0, or the ``scores`` the null splits into ``n`` and the rest differ by no more than the tie
    tolerance: :func:`isoeat.labels.undefined_reason`), d and p — every partition gives the same S — are ``nan``."""
    ranked = np.sort(scores)
    why = undefined_reason(d, test, float(ranked[-n:].sum() - ranked[:n].sum()), float(perm.tolerance), n)
    return dict(
        effect_size=math.nan if why else d,
        p_value=math.nan if why else float(perm.p_value),
        p_method=perm.p_method,
        n_permutations=int(perm.n_permutations if perm.n_permutations is not None else perm.n_partitions),
        n_partitions=int(perm.n_partitions),
        count=int(perm.count),
        p_ci_low=math.nan if why else float(perm.ci_low),
        p_ci_high=math.nan if why else float(perm.ci_high),
        undefined=why,
    )


def _validate(alternative: str, ddof: Any) -> int:
    """Check ``alternative`` and ``ddof`` (shared by WEAT and SC-WEAT); return ``ddof`` as int."""
    check_choice("alternative", alternative, ALTERNATIVES)
    return check_int("ddof", ddof, lo=0)


def _four_sets(test: str | None, **sets: Any) -> dict[str, np.ndarray]:
    """The four sets X, Y, A, B as float64 matrices: each 2-D, of at least 2 vectors, all of one dimension."""
    mats = {}
    for role, M in sets.items():
        M = np.asarray(M, dtype=np.float64)
        if M.ndim != 2:
            raise ConfigError(f"set {role}: expected a 2-D array of vectors, got shape {M.shape}")
        if M.shape[0] < 2:
            raise CoverageError(f"test {test}: set {role} has {M.shape[0]} word(s); at least 2 are needed")
        mats[role] = M
    dims = {M.shape[1] for M in mats.values()}
    if len(dims) != 1:
        raise ConfigError(f"test {test}: the four sets have different dimensions {sorted(dims)}")
    return mats


def weat_from_vectors(
    X: np.ndarray,
    Y: np.ndarray,
    A: np.ndarray,
    B: np.ndarray,
    *,
    ddof: int = 1,
    rng: int | np.random.Generator | None = None,
    permutation: PermutationOptions | None = None,
    interval: IntervalOptions | None = None,
    labels: ResultLabels | None = None,
    **options: Any,
) -> WEATResult:
    r"""WEAT effect size and permutation p-value from four matrices of vectors.

    Parameters
    ----------
    X, Y, A, B : ndarray of shape (n, dim)
        Target and attribute vectors (rows), already calibrated if wanted.
    ddof : int, default 1
        See :func:`effect_size`.
    rng : None, int or numpy.random.Generator
        Seeds the random parts (a sampled p, a bootstrap interval) directly; recorded as ``seed``.
    permutation : PermutationOptions, optional
        How p is computed (:class:`~isoeat.stats.options.PermutationOptions`):
        ``alternative`` (``"greater"``: :math:`p = P[S_i \ge S]` over
        equal-size partitions of :math:`X\cup Y`, ties within a tolerance
        counting as reaching), ``method`` (see
        :func:`isoeat.stats.permutation.partition_test`), ``n_permutations``
        (Monte Carlo sample size), ``sequential_alpha``, ``exact_budget``, ``rtol``, ...
    interval : IntervalOptions, optional
        The interval on d (:class:`~isoeat.stats.options.IntervalOptions`):
        ``ci`` (also implied by ``bootstrap > 0``), ``ci_estimand``
        (``"given-attributes"``: targets random; ``"populations"``: targets and
        attributes random; see :mod:`isoeat.stats.intervals`), ``ci_method``
        (``"auto"``: the estimand's default, chosen by the coverage study;
        methods whose coverage the study did not establish at the test's set
        sizes carry a ``warning``), ``ci_level``, ``bootstrap`` (replicates of
        ``percentile``/``bca``), ``resample_attributes`` (older spelling of
        ``ci_estimand="populations"``).
    labels : ResultLabels, optional
        What the result is labelled with: ``test``, ``bias_type``, ``model``,
        ``calibration`` (the calibration already applied to the vectors,
        ``"none"`` for raw), ``dropped``, ``case_folded``, ``fallback``.
    **options
        Any field of the three objects by name (``alternative="two-sided"``, ``ci=True``, ``test="W6"``).

    Examples
    --------
    >>> X = np.array([[1.0, 0.1], [1.0, 0.2]]); Y = np.array([[0.1, 1.0], [0.2, 1.0]])
    >>> A = np.array([[1.0, 0.0], [1.0, 0.05]]); B = np.array([[0.0, 1.0], [0.05, 1.0]])
    >>> r = weat_from_vectors(X, Y, A, B, rng=0)
    >>> round(r.effect_size, 3), r.p_method, r.n_partitions
    (1.728, 'exact', 6)
    """
    perm_o, ivl_o, lab = gather(options, where="weat_from_vectors", permutation=permutation, interval=interval,
                                labels=labels, takes=("permutation", "interval", "labels"))
    test = lab.test
    ddof = _validate(perm_o.alternative, ddof)
    mats = _four_sets(test, X=X, Y=Y, A=A, B=B)
    check_test(test, vectors=mats, ddof=ddof)
    request = ivl_o.request()
    gen, seed = resolve_seed(rng)
    cos = {(t, a): cosine_matrix(mats[t], mats[a]) for t in "XY" for a in "AB"}
    s_x = cos["X", "A"].mean(axis=1) - cos["X", "B"].mean(axis=1)
    s_y = cos["Y", "A"].mean(axis=1) - cos["Y", "B"].mean(axis=1)
    s, d = np.concatenate([s_x, s_y]), effect_size(s_x, s_y, ddof=ddof)
    perm: PermutationResult = partition_test(s, len(s_x), rng=gen, **perm_o.kwargs())
    ci = None if request is None else interval_on_d(
        s_x, s_y, (cos["X", "A"], cos["X", "B"], cos["Y", "A"], cos["Y", "B"]), request, ddof=ddof, rng=gen)
    return WEATResult(
        test=test,
        bias_type=lab.bias_type,
        model=lab.model,
        calibration=lab.calibration,
        statistic=test_statistic(s_x, s_y),
        **_p_fields(perm, d, s, len(s_x)),
        tolerance=float(perm.tolerance),
        alternative=perm_o.alternative,
        ddof=int(ddof),
        n_x=len(s_x),
        n_y=len(s_y),
        n_a=mats["A"].shape[0],
        n_b=mats["B"].shape[0],
        dropped=tuple(lab.dropped),
        case_folded=tuple(lab.case_folded),
        fallback=tuple(lab.fallback),
        seed=seed,
        stopped_early=bool(perm.stopped_early),
        effect_size_ci=ci,
        s_x=tuple(float(v) for v in s_x),
        s_y=tuple(float(v) for v in s_y),
    )


def _lookup_sets(
    model: Encoder, test: Any, min_coverage: float, fallback_out: list[str] | None = None,
    words_out: dict[str, tuple[list[str], list[str]]] | None = None, suggestions_out: list[str] | None = None,
    embedded_out: list[str] | None = None,
) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """Vectors per role, dropped and case-folded words; ``words_out`` gets role -> (found words, their entries).

    ``suggestions_out`` gets the did-you-mean entries of the first
    :data:`~isoeat._validate.SUGGEST_WORDS` dropped words of the test
    (:func:`~isoeat.stats.results.suggestion_entries`); a set with too few words
    names them in its error either way.
    """
    min_coverage = check_real("min_coverage", min_coverage, lo=0.0, hi=1.0)
    vecs: dict[str, np.ndarray] = {}
    dropped: list[str] = []
    folded: list[str] = []
    sets = test.sets() if hasattr(test, "sets") else test["sets"]
    test_id = test.id if hasattr(test, "id") else test["id"]
    budget = SUGGEST_WORDS
    for role, ws in sets.items():  # a set of fewer than 2 words is no WEAT set, whatever the vocabulary holds
        if len(ws.words) < 2:
            raise InvalidTestError(f"test {test_id}, set {role} ({ws.name}) has {len(ws.words)} word(s)"
                                   f"{': ' + ', '.join(ws.words) if ws.words else ''}; a set needs at least 2")
    for role, ws in sets.items():
        lk = model.lookup(ws.words)
        dropped.extend(f"{role}:{w}" for w in lk.missing)
        folded.extend(f"{w}->{entry}" for w, entry in lk.case_folded)
        if embedded_out is not None:
            embedded_out.extend(embedded_entries(lk, role))
        if fallback_out is not None:
            fallback_out.extend(f"{role}:{w}" for w in getattr(lk, "fallback", ()))
        # did-you-mean for the first SUGGEST_WORDS dropped words of the test, its sets in order (a bounded cost)
        wanted = suggestions_out is not None or lk.coverage < min_coverage or len(lk.found) < 2
        asked = lk.missing[:budget if suggestions_out is not None else min(budget, 10)] if wanted else []
        budget -= len(asked)
        near = suggestion_entries(model, asked)
        if suggestions_out is not None:
            suggestions_out.extend(f"{role}:{s}" for s in near)
        shown = ", ".join(with_suggestions(lk.missing[:10], near)) + (" ..." if len(lk.missing) > 10 else "")
        shown += missing_parts_note(lk)
        where = f"test {test_id}, set {role} ({ws.name})"
        name = name_of(model, "the model")
        corpus = getattr(lk, "corpus", "")  # a contextual model's missing words have no context in its corpus
        if lk.coverage < min_coverage:
            what = (f"have no context in corpus {corpus} ({name} drops them: missing='drop')" if corpus else
                    f"not in the vocabulary of {name}")
            raise CoverageError(f"{where}: {len(lk.missing)} of {len(ws.words)} words {what} ({lk.coverage:.0%} "
                                f"coverage; minimum {min_coverage:.0%}): {shown}")
        if len(lk.found) < 2:  # the coverage is met, the count is not
            what = f"with a context in corpus {corpus} ({name})" if corpus else f"in the vocabulary of {name}"
            raise CoverageError(f"{where}: only {len(lk.found)} of its {len(ws.words)} words {what}; a set needs at "
                                f"least 2 ({'no context' if corpus else 'not found'}: {shown})")
        vecs[role] = lk.vectors
        if words_out is not None:
            entries = vocabulary_entries(lk.found, lk.case_folded, getattr(lk, "embedded", ()))
            words_out[role] = (list(lk.found), entries)
    return vecs, dropped, folded


@public
@documents_calibration
def weat(
    model: Encoder,
    test: AssociationTest | str,
    *,
    calibration: Calibrator | str | None = None,
    rng: int | np.random.Generator | None = None,
    ddof: int | None = None,
    min_coverage: float = 0.8,
    allow_overlap: bool = False,
    force: bool = False,
    permutation: PermutationOptions | None = None,
    interval: IntervalOptions | None = None,
    **options: Any,
) -> WEATResult:
    """Run one WEAT on a model, optionally after calibration (pipeline stages 1–3).

    Parameters
    ----------
    model : Encoder
        Anything with ``lookup`` (:class:`isoeat._types.Encoder`), e.g.
        ``isoeat.load_model("glove-6b-50d")``.
    test : AssociationTest or str
        A test, a registered id such as ``"W6"``, or the path of a YAML/JSON
        test file holding one test (:func:`isoeat.load_tests_from_file`).
    calibration : see CALIBRATION_DOC
    rng : None, int or numpy.random.Generator
        The root seed (None: a fresh one, recorded as ``seed``); the test draws from its stream
        ``("weat", TEST)`` (``seed_stream``; :func:`isoeat._random.derive_seed`),
        the same in every space and every command. A Generator is used as given.
    ddof : int or None, default None
        See :func:`effect_size`; None: the convention's (1 under ``"isoeat"``).
    min_coverage : float, default 0.8
        Out-of-vocabulary words are dropped and reported; a set that keeps
        less than this share of its words (or fewer than 2) is an error.
    allow_overlap : bool, default False
        Sets that share words (X and Y, A and B, or a target word that is
        also an attribute word) are an :class:`~isoeat.InvalidTestError`;
        with ``True`` the test runs with an :class:`~isoeat.IsoeatWarning`.
        See :func:`isoeat.stats.validity.check_test` for every rule.
    force : bool, default False
        Apply a calibrator fitted on another model.
    permutation, interval
        How p is computed and which interval on d (see :func:`weat_from_vectors`).
    convention : str, default "isoeat"
        Whose conventions d and p follow (:data:`isoeat.stats.conventions.CONVENTIONS`): ``"wefe"``
        (ddof 0), ``"sent-bias"`` (X and Y cut to equal size from the longer's end), ``"responsibly"``
        (ddof 0, sets sampled to equal size with seed 42), ``"caliskan"``, ``"ceat-code"``, ``"ml-eat"``
        (p on the side the statistic falls). d follows the convention; p is isoeat's exact p on the
        convention's side, never a peer's defective estimate (:func:`~isoeat.stats.conventions.p_note`
        says how the peer's departs). Recorded as the result's ``convention``.
    **options
        Their fields by name: ``alternative``, ``method``, ``n_permutations``,
        ``sequential_alpha``, ..., ``ci``, ``ci_method``, ``ci_level``,
        ``ci_estimand``, ``bootstrap``, ``resample_attributes``; and ``convention``.
    """
    from ..wordsets import as_test
    from .conventions import equal_sizes, settle, warn_encoding, warn_lost

    convention = options.pop("convention", "isoeat")  # a keyword of its own, taken from **options (function budget)
    permutation, interval, _ = gather(options, where="weat", permutation=permutation, interval=interval,
                                      others=("convention",))
    conv, ddof, side = settle(convention, "weat", ddof=None if ddof is None else check_int("ddof", ddof, lo=0),
                              alternative=permutation.alternative)
    permutation = replace(permutation, alternative=side)
    allow_overlap = check_bool("allow_overlap", allow_overlap)
    require_encoder(model, "weat")  # the parameters first, then what is measured: the model, the test
    warn_encoding(conv, model)  # a peer's encoding on a contextual model: named, not applied
    test = as_test(test)
    fallback: list[str] = []
    found: dict[str, tuple[list[str], list[str]]] = {}
    near: list[str] = []
    embedded: list[str] = []
    vecs, dropped, folded = _lookup_sets(model, test, min_coverage, fallback, found, near, embedded)
    warn_lost(conv, {r: len(getattr(test, r).words) for r in "XYAB"}, dropped)  # WEFE's nan past 20% lost
    check_test(test.id, words={r: w for r, (w, _) in found.items()}, entries={r: e for r, (_, e) in found.items()},
               vectors=vecs, ddof=check_int("ddof", ddof, lo=0), allow_overlap=allow_overlap)
    cal, cal_name = resolve_calibration(calibration, model, force=force)
    if cal is not None:
        vecs = {role: cal.transform(v) for role, v in vecs.items()}
    key = ("weat", test.id)
    seed_of_stream, root = stream(rng, *key)
    labels = ResultLabels(test=test.id, bias_type=test.bias_type, model=name_of(model),
                          calibration=cal_name, dropped=tuple(dropped), case_folded=tuple(folded),
                          fallback=tuple(fallback))
    vecs, cut = equal_sizes(conv, {r: w for r, (w, _) in found.items()}, vecs)
    res = _on_side(conv, lambda perm: weat_from_vectors(
        vecs["X"], vecs["Y"], vecs["A"], vecs["B"], ddof=ddof, rng=seed_of_stream, permutation=perm,
        interval=interval, labels=labels), permutation)
    res = replace(res, suggestions=tuple(near), embedded=tuple(embedded), convention=conv.name, cut=tuple(cut))
    return res if root is None else replace(res, seed=root, seed_stream=key)


def _on_side(conv: Any, run: Callable[[PermutationOptions], Any], permutation: PermutationOptions) -> Any:
    """``run(permutation)``; under a convention whose p is on the side the statistic falls (ML-EAT), run again
    with ``alternative="less"`` where d < 0 (:func:`isoeat.stats.conventions.side_of`)."""
    from .conventions import side_of

    res = run(permutation)
    if conv.side != "direction":  # the side asked for (the convention's own where it is a peer's: settle)
        return res
    side = side_of(conv, res.effect_size)
    return res if side == permutation.alternative else run(replace(permutation, alternative=side))


def sc_weat_from_vectors(
    w: np.ndarray,
    A: np.ndarray,
    B: np.ndarray,
    *,
    word: str = "",
    ddof: int = 1,
    rng: int | np.random.Generator | None = None,
    permutation: PermutationOptions | None = None,
    interval: IntervalOptions | None = None,
    labels: ResultLabels | None = None,
    **options: Any,
) -> SCWEATResult:
    """SC-WEAT effect size and permutation p-value of one target vector ``w``.

    ``labels`` (``test``, ``model``, ``calibration``, ``dropped``,
    ``case_folded``) label the result (see
    :class:`~isoeat.stats.results.ResultIdentity`); ``ci=True`` adds an
    interval on d for the ``given-word`` estimand (``ci_method`` ``"auto"`` =
    ``"noncentral-t"``, the only method; ``ci_level``; see
    :mod:`isoeat.stats.intervals`); ``permutation`` (or its fields by name:
    ``alternative``, ``method``, ``n_permutations``, ``rtol``,
    ``exact_budget``, ``sequential_alpha``, ...) says how p is computed.

    Examples
    --------
    >>> A = np.array([[1.0, 0.0], [1.0, 1.0]]); B = np.array([[0.0, 1.0], [-1.0, 1.0]])
    >>> r = sc_weat_from_vectors(np.array([1.0, 0.0]), A, B, word="w", rng=0)
    >>> round(r.effect_size, 3), round(r.p_value, 4), r.n_partitions, r.calibration
    (1.58, 0.1667, 6, 'none')
    """
    _refuse_interval(options, interval)
    perm_o, ivl_o, lab = gather(options, where="sc_weat_from_vectors", permutation=permutation, interval=interval,
                                labels=labels, takes=("permutation", "interval", "labels"))
    ddof = _validate(perm_o.alternative, ddof)
    w = np.asarray(w, dtype=np.float64).reshape(1, -1)
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.ndim != 2 or B.ndim != 2 or A.shape[0] < 2 or B.shape[0] < 2:
        raise CoverageError("SC-WEAT needs at least 2 attribute words in each of A and B")
    request = check_interval_options(ivl_o.ci, 0, ivl_o.ci_method, ivl_o.ci_level, "given-word")
    check_test(lab.test, vectors={"w": w, "A": A, "B": B}, ddof=ddof, sd_over=("A", "B"))
    gen, seed = resolve_seed(rng)
    ca = cosine_matrix(w, A)[0]
    cb = cosine_matrix(w, B)[0]
    scores = np.concatenate([ca, cb])
    sd = float(np.std(scores, ddof=ddof))
    stat = float(ca.mean() - cb.mean())
    d = stat / sd if sd > 0 else math.nan
    perm = partition_test(scores, len(ca), rng=gen, **perm_o.kwargs())
    return SCWEATResult(
        word=word, statistic=stat, **_p_fields(perm, d, scores, len(ca), "sc-weat"), tolerance=float(perm.tolerance),
        alternative=perm_o.alternative, ddof=int(ddof), test=lab.test, model=lab.model, calibration=lab.calibration,
        seed=seed, n_a=len(ca), n_b=len(cb), dropped=tuple(lab.dropped), case_folded=tuple(lab.case_folded),
        effect_size_ci=None if request is None else interval_on_d(ca, cb, None, request, ddof=ddof),
    )


_INTERVAL_KEYS = ("bootstrap", "resample_attributes", "ci_estimand")


def _refuse_interval(kwargs: dict[str, Any], interval: IntervalOptions | None = None) -> None:
    """SC-WEAT's interval is the noncentral-t for one estimand: refuse WEAT's other interval options by name."""
    given = [k for k in _INTERVAL_KEYS if k in kwargs or (
        interval is not None and getattr(interval, k) != getattr(IntervalOptions(), k))]
    if given:
        raise ConfigError(
            f"SC-WEAT has no bootstrap interval and one estimand (given-word): {', '.join(given)} apply to WEAT "
            "only (isoeat.weat); drop them (ci=True gives SC-WEAT's interval)"
        )


def _attribute_sets(attributes: Any) -> tuple[str, WordSet, WordSet]:
    """``(test id, A, B)`` from a test, a test id, a test file or a pair of word sets (test id ``"custom"``)."""
    import os

    from ..wordsets import AssociationTest, WordSet, as_test

    if isinstance(attributes, (str, os.PathLike)):
        attributes = as_test(attributes, argument="attributes")
    if isinstance(attributes, AssociationTest):
        return attributes.id, attributes.A, attributes.B
    try:
        A, B = attributes
    except (TypeError, ValueError):
        raise ConfigError("attributes must be a test, a test id, a test file, or a pair of WordSets (A, B)") from None
    if not (isinstance(A, WordSet) and isinstance(B, WordSet)):
        raise ConfigError("attributes must be a test, a test id, a test file, or a pair of WordSets (A, B)")
    return "custom", A, B


def _target_lookup(model: Any, words: list[str], test_id: str, found: dict[str, Any], vecs: dict[str, Any],
                   ddof: int) -> Any:
    """SC-WEAT's target words looked up (every one must be found: a missing word is a `CoverageError` naming it,
    with suggestions) and each checked with the attributes by the one validity check."""
    lk = model.lookup(words)
    if lk.missing:
        shown = with_suggestions(lk.missing, suggestion_entries(model, lk.missing))
        corpus, name = getattr(lk, "corpus", ""), name_of(model, "the model")
        what = f"with no context in corpus {corpus} ({name}, missing='drop')" if corpus else \
            f"not in the vocabulary of {name}"
        raise CoverageError(f"target word(s) {what}: {', '.join(shown)}{missing_parts_note(lk)}")
    entries = vocabulary_entries(lk.found, lk.case_folded, getattr(lk, "embedded", ()))
    for i, (word, entry) in enumerate(zip(lk.found, entries)):
        check_test(test_id, words={"w": [word], "A": found["A"][0], "B": found["B"][0]},
                   entries={"w": [entry], "A": found["A"][1], "B": found["B"][1]},
                   vectors={"w": lk.vectors[i], "A": vecs["A"], "B": vecs["B"]}, ddof=ddof, sd_over=("A", "B"))
    return lk


@public
@documents_calibration
def sc_weat(
    model: Encoder,
    words: str | Iterable[str],
    attributes: AssociationTest | str | tuple[WordSet, WordSet],
    *,
    calibration: Calibrator | str | None = None,
    rng: int | np.random.Generator | None = None,
    ddof: int | None = None,
    min_coverage: float = 0.8,
    force: bool = False,
    permutation: PermutationOptions | None = None,
    interval: IntervalOptions | None = None,
    **options: Any,
) -> list[SCWEATResult]:
    """SC-WEAT of each target word against the attribute sets A and B of a test.

    Parameters
    ----------
    model : Encoder
        Anything with ``lookup`` (:class:`isoeat._types.Encoder`).
    words : str or iterable of str
        Target words (a string is split at commas); words missing from the
        model are an error.
    attributes : AssociationTest, str, or (WordSet, WordSet)
        Where A and B come from: a test (or its id, e.g. ``"W6"`` for career
        vs. family, or a test file's path) or a pair of word sets. The test id is recorded as each
        result's ``test`` (``"custom"`` for a pair of word sets).
    calibration : see CALIBRATION_DOC
    min_coverage : float, default 0.8
        As in :func:`weat`, for the attribute sets.
    rng : None, int or numpy.random.Generator
        The root seed (None: a fresh one, recorded); word ``w`` draws from the stream ``("scweat", TEST, w)``
        (:func:`isoeat._random.derive_seed`), recorded in each result. A Generator is one stream for every word.
    ddof, force
        As in :func:`weat`.
    convention : str, default "isoeat"
        As in :func:`weat`: ``"isoeat"``, ``"caliskan"`` (WEFAT), ``"ml-eat"`` (p on the side of d); others refused.
    permutation, interval, **options
        See :func:`sc_weat_from_vectors` (``alternative``, ``method``,
        ``n_permutations``, ``ci``, ``ci_method``, ``ci_level``, ...).

    Returns
    -------
    list of SCWEATResult, one per word, labelled with the model's name and the calibration.
    """
    _refuse_interval(options, interval)
    convention = options.pop("convention", "isoeat")  # as in weat
    permutation, interval, _ = gather(options, where="sc_weat", permutation=permutation, interval=interval,
                                      others=("convention",))
    from .conventions import settle, warn_encoding

    conv, ddof, side = settle(convention, "scweat", ddof=None if ddof is None else check_int("ddof", ddof, lo=0),
                              alternative=permutation.alternative)
    permutation = replace(permutation, alternative=side)
    require_encoder(model, "sc_weat")
    warn_encoding(conv, model)
    test_id, A, B = _attribute_sets(attributes)
    if isinstance(words, str):
        words = [w.strip() for w in words.split(",") if w.strip()]
    words = list(words)
    if not words:
        raise ConfigError("words: give at least one target word")
    found: dict[str, tuple[list[str], list[str]]] = {}
    near: list[str] = []
    embedded: list[str] = []
    vecs, dropped, folded = _lookup_sets(model, {"id": "SC-WEAT", "sets": {"A": A, "B": B}}, min_coverage,
                                         words_out=found, suggestions_out=near, embedded_out=embedded)
    lk = _target_lookup(model, words, test_id, found, vecs, ddof)
    W = lk.vectors
    Av, Bv = vecs["A"], vecs["B"]
    cal, cal_name = resolve_calibration(calibration, model, force=force)
    if cal is not None:
        W, Av, Bv = (cal.transform(m) for m in (W, Av, Bv))
    # a Generator or SeedSequence: one stream for every word, as given; else one named stream per word
    gen = as_generator(rng) if isinstance(rng, (np.random.Generator, np.random.SeedSequence)) else None
    root = None if gen is not None else stream(rng)[1]
    out = []
    for i, w in enumerate(words):
        key = ("scweat", test_id, w)
        labels = ResultLabels(test=test_id, model=name_of(model), calibration=cal_name, dropped=tuple(dropped),
                              case_folded=tuple(folded))
        word_rng = gen if gen is not None else stream(root, *key)[0]

        def one(perm: PermutationOptions, i: int = i, w: str = w, r: Any = word_rng, labels: ResultLabels = labels
                ) -> SCWEATResult:
            return sc_weat_from_vectors(W[i], Av, Bv, word=w, ddof=ddof, rng=r, permutation=perm, interval=interval,
                                        labels=labels)

        res = _on_side(conv, one, permutation)
        how = dict(getattr(lk, "embedded", ())).get(w, "token")  # a lookup of static vectors says how
        res = replace(res, suggestions=tuple(near), convention=conv.name,
                      embedded=tuple(embedded) + ((f"target:{w}->{how}",) if how != "token" else ()))
        out.append(res if gen is not None else replace(res, seed=root, seed_stream=key))
    return out
