r"""Tests of k >= 2 target groups on a model, raw or calibrated: :func:`ngroup` and :class:`NGroupResult`.

Four statistics (formulas: :mod:`isoeat.stats.ngroup`, :mod:`isoeat.metrics.multiclass`):

* ``gweat``: Generalized WEAT (Swinger et al. 2019), target group i paired with attribute set i (k = m);
  signed; permutation p over the groups' labels.
* ``same``: SAME (Schröder et al. 2021), the attribute words against the target groups' directions;
  unsigned; one-sided permutation p over the groups' labels.
* ``mac``: multiclass MAC (Manzini et al. 2019); unsigned; no p (it pools the groups).
* ``rnsb``: multiclass RNSB (Sweeney & Najafian 2019), m = 2 (positive, negative); unsigned; no p.

The pipeline is WEAT's: every set looked up (out-of-vocabulary words dropped and reported, ``min_coverage``
enforced, a set of fewer than 2 words refused), two words that are one vocabulary entry refused, ``calibration=``
resolved by :func:`isoeat.stats.weat.resolve_calibration` and every vector transformed. A statistic that the
test's shape does not allow (GWEAT with k != m, RNSB with m != 2) is a record with ``nan`` and a note when it
was not asked for by name, and a one-line error when it was.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .._errors import ConfigError, InvalidTestError
from .._random import as_generator, stream
from .._surface import public, require_encoder
from .._types import Encoder, name_of
from .._validate import check_bool, check_choice, suggest
from ..stats.ngroup import gweat_scores, gweat_test, same_test
from ..stats.weat import _lookup_sets, documents_calibration, resolve_calibration
from .multiclass import mac_multiclass, rnsb_multiclass

__all__ = ["NGroupResult", "NGROUP_STATISTICS", "ngroup", "ngroup_from_vectors"]

#: statistic -> (title, citation, signed, has a permutation p)
NGROUP_STATISTICS: dict[str, tuple[str, str, bool, bool]] = {
    "gweat": ("Generalized WEAT", "Swinger et al. 2019", True, True),
    "same": ("SAME", "Schröder et al. 2021", False, True),
    "mac": ("multiclass MAC (mean cosine distance)", "Manzini et al. 2019", False, False),
    "rnsb": ("multiclass RNSB (KL divergence)", "Sweeney & Najafian 2019", False, False),
}
_OPTIONS = {"alternative": "greater", "method": "auto", "n_permutations": 100_000, "C": 1.0}


@dataclass(frozen=True, kw_only=True)
class NGroupResult:
    r"""One statistic of an n-group test in one embedding space.

    Attributes
    ----------
    statistic : str
        ``"gweat"``, ``"same"``, ``"mac"`` or ``"rnsb"``.
    test, bias_type, model, calibration : str
        The test, its category, the model and the space (``"none"``: raw).
    estimate : float
        The statistic (``nan`` where the test's shape does not define it: ``note`` says why).
    p_value : float
        Permutation p over the assignments of the target words to the groups (``nan`` for MAC and RNSB).
    p_method : str
        ``"exact"``, ``"certified"`` (GWEAT with k = 2, as WEAT), ``"monte-carlo"`` or ``"none"``.
    alternative : str
        GWEAT: as asked; SAME: ``"greater"`` (a magnitude); ``""`` without a p.
    n_assignments : int
        :math:`N!/\prod n_i!`, the size of the permutation null (0 without a p).
    n_permutations : int
        Assignments sampled (0 when exact or without a p).
    p_ci_low, p_ci_high : float
        Clopper–Pearson interval of a sampled p (both ``p_value`` when exact; a certified bracket).
    k, m : int
        Target groups and attribute sets.
    groups, group_sizes, attributes, attribute_sizes : tuple
        Names in file order and the numbers of words used.
    settings, note : str
        Parameters that shape the value (``"C=1"``) and what a reader must know.
    dropped, case_folded, suggestions : tuple of str
        As in :class:`~isoeat.WEATResult`.
    seed : int or None
        The root seed; ``seed_stream`` the named stream ``("ngroup", STATISTIC, TEST)`` the draws came from.
    words, per_word : tuple
        The words scored (target words in group order; SAME: the attribute words) and their values (only in the
        record with ``scores=True``).
    """

    statistic: str
    test: str
    bias_type: str = ""
    model: str = ""
    calibration: str = "none"
    estimate: float
    signed: bool
    p_value: float = float("nan")
    p_method: str = "none"
    alternative: str = ""
    n_assignments: int = 0
    n_permutations: int = 0
    p_ci_low: float = float("nan")
    p_ci_high: float = float("nan")
    k: int
    m: int
    groups: tuple[str, ...] = ()
    group_sizes: tuple[int, ...] = ()
    attributes: tuple[str, ...] = ()
    attribute_sizes: tuple[int, ...] = ()
    settings: str = ""
    note: str = ""
    dropped: tuple[str, ...] = ()
    case_folded: tuple[str, ...] = ()
    suggestions: tuple[str, ...] = ()
    seed: int | None = None
    seed_stream: tuple[str, ...] = ()
    words: tuple[str, ...] = field(default=(), repr=False)
    per_word: tuple[float, ...] = field(default=(), repr=False)

    _COLUMNS: ClassVar[tuple[str, ...]] = (
        "statistic",
        "test",
        "bias_type",
        "model",
        "calibration",
        "estimate",
        "signed",
        "p_value",
        "p_method",
        "alternative",
        "n_assignments",
        "n_permutations",
        "p_ci_low",
        "p_ci_high",
        "k",
        "m",
        "groups",
        "group_sizes",
        "attributes",
        "attribute_sizes",
        "settings",
        "note",
        "dropped",
        "case_folded",
        "suggestions",
        "seed",
        "seed_stream",
    )

    def to_dict(self, *, scores: bool = False) -> dict[str, Any]:
        """A flat JSON-ready record (tuples become lists; ``words``/``per_word`` only if ``scores``)."""
        keys = self._COLUMNS + (("words", "per_word") if scores else ())
        return {k: list(v) if isinstance(v := getattr(self, k), tuple) else v for k in keys}

    def to_frame(self, *, scores: bool = False) -> Any:
        """This result as a one-row :class:`pandas.DataFrame` (needs pandas)."""
        from ..stats.results import records_frame

        return records_frame([self.to_dict(scores=scores)])

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> NGroupResult:
        """The result a :meth:`to_dict` record came from.

        >>> r = NGroupResult(statistic="mac", test="t", estimate=0.5, signed=False, k=3, m=2, groups=("a", "b", "c"))
        >>> NGroupResult.from_dict(r.to_dict(scores=True)) == r
        True
        """
        kw: dict[str, Any] = {
            k: tuple(v)
            if isinstance(v, list)
            else (math.nan if v is None and k in ("estimate", "p_value", "p_ci_low", "p_ci_high") else v)
            for k, v in record.items()
        }
        return cls(**kw)


def _check_options(options: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(k for k in options if k not in _OPTIONS)
    if unknown:
        raise ConfigError(
            f"ngroup: unknown option {unknown[0]!r}{suggest(unknown[0], _OPTIONS)}; options: {', '.join(_OPTIONS)}"
        )
    opts = {**_OPTIONS, **options}
    check_choice("alternative", opts["alternative"], ("greater", "less", "two-sided"))
    check_choice("method", opts["method"], ("auto", "exact", "certified", "monte-carlo"))
    return opts


def _select(statistics: Any) -> tuple[list[str], bool]:
    """The statistics asked for and whether by name (``None``/``"all"``: every one, none by name)."""
    if statistics is None or (isinstance(statistics, str) and statistics.strip().lower() == "all"):
        return list(NGROUP_STATISTICS), False
    names = (
        [s.strip().lower() for s in statistics.split(",") if s.strip()]
        if isinstance(statistics, str)
        else [str(s).lower() for s in statistics]
    )
    for n in names:
        check_choice("statistics", n, tuple(NGROUP_STATISTICS))
    if not names or len(set(names)) < len(names):
        raise ConfigError("statistics: name each of gweat, same, mac, rnsb at most once (or 'all')")
    return names, True


def _undefined(name: str, k: int, m: int) -> str:
    if name == "gweat" and k != m:
        return (
            f"undefined: Generalized WEAT pairs target group i with attribute set i and needs as many attribute "
            f"sets as target groups (k = {k}, m = {m})"
        )
    if name == "rnsb" and m != 2:
        return f"undefined: RNSB needs exactly 2 attribute sets, positive then negative (m = {m})"
    return ""


def _one(
    name: str,
    T: list[np.ndarray],
    A: list[np.ndarray],
    opts: dict[str, Any],
    rng: Any,
    words: tuple[list[str], list[str]],
) -> dict[str, Any]:
    """The value, p fields and per-word values of one statistic on vectors already in their space."""
    target_words, attribute_words = words
    if name == "mac":
        sc = mac_multiclass(T, A)
        return dict(estimate=sc.estimate, per_word=sc.per_word, words=target_words)
    if name == "rnsb":
        sc = rnsb_multiclass(T, A, C=opts["C"])
        return dict(estimate=sc.estimate, per_word=sc.per_word, words=target_words, settings=f"C={opts['C']:g}")
    method = opts["method"]
    if name == "gweat":
        G, perm = gweat_test(
            T, A, alternative=opts["alternative"], method=method, n_permutations=opts["n_permutations"], rng=rng
        )
        S = gweat_scores(T, A)
        group = np.repeat(np.arange(len(T)), [len(t) for t in T])
        per_word, scored, alternative = S[np.arange(len(S)), group], target_words, opts["alternative"]
    else:
        if method == "certified":
            raise ConfigError(
                "SAME: method 'certified' brackets the p of a two-group sum only; use auto, exact or monte-carlo"
            )
        G, per_word, perm = same_test(T, np.vstack(A), method=method, n_permutations=opts["n_permutations"], rng=rng)
        scored, alternative = attribute_words, "greater"
    return dict(
        estimate=G,
        per_word=per_word,
        words=scored,
        p_value=perm.p_value,
        p_method=perm.p_method,
        alternative=alternative,
        n_assignments=perm.n_assignments,
        n_permutations=perm.n_permutations or 0,
        p_ci_low=perm.ci_low,
        p_ci_high=perm.ci_high,
    )


def ngroup_from_vectors(
    targets: Mapping[str, Any],
    attributes: Mapping[str, Any],
    *,
    statistics: Any = None,
    rng: Any = None,
    test: str = "test",
    labels: Mapping[str, Any] | None = None,
    **options: Any,
) -> list[NGroupResult]:
    """The n-group statistics from named matrices of vectors (rows), already calibrated if wanted.

    Parameters
    ----------
    targets, attributes : mapping of name -> array of shape (n, dim)
        The target groups and the attribute sets, in order (``dict`` order).
    statistics : None, "all", str or list
        ``"gweat,same"`` or a list; ``None``/``"all"``: every one (those the shape does not allow get ``nan``
        and a note; named ones are refused).
    rng : None, int or numpy.random.Generator
        The root seed of a Monte Carlo p; statistic ``s`` draws from the stream ``("ngroup", s, test)``.
    **options
        ``alternative`` (GWEAT, "greater"), ``method`` ("auto"), ``n_permutations`` (100000), ``C`` (RNSB, 1.0).

    Returns
    -------
    list of NGroupResult, in the order of ``statistics``.
    """
    opts = _check_options(options)
    names, named = _select(statistics)
    T = [np.asarray(v, dtype=np.float64) for v in targets.values()]
    A = [np.asarray(v, dtype=np.float64) for v in attributes.values()]
    k, m = len(T), len(A)
    if k < 2 or m < 2:
        raise ConfigError(
            f"test {test}: an n-group test needs at least 2 target groups and 2 attribute sets (got k = {k}, m = {m})"
        )
    lab = dict(labels or {})
    words = (list(lab.pop("target_words", ())), list(lab.pop("attribute_words", ())))
    root = None if isinstance(rng, (np.random.Generator, np.random.SeedSequence)) else stream(rng)[1]
    gen = as_generator(rng) if root is None else None
    out = []
    for name in names:
        title, _, signed, _ = NGROUP_STATISTICS[name]
        base = dict(
            statistic=name,
            test=test,
            signed=signed,
            k=k,
            m=m,
            groups=tuple(targets),
            group_sizes=tuple(len(t) for t in T),
            attributes=tuple(attributes),
            attribute_sizes=tuple(len(a) for a in A),
            **lab,
        )
        why = _undefined(name, k, m)
        if why:
            if named:
                raise ConfigError(f"test {test}: {why.removeprefix('undefined: ')}")
            out.append(NGroupResult(estimate=math.nan, note=why, **base))
            continue
        key = ("ngroup", name, test)
        fields = _one(name, T, A, opts, gen if root is None else stream(root, *key)[0], words)
        per_word = tuple(float(v) for v in fields.pop("per_word"))
        scored = tuple(fields.pop("words"))
        res = NGroupResult(**base, **fields, per_word=per_word, words=scored if len(scored) == len(per_word) else ())
        out.append(res if root is None else replace(res, seed=root, seed_stream=key))
    return out


def _prepare(model: Encoder, test: Any, min_coverage: float) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Raw vectors of every set (roles ``target NAME``, ``attribute NAME``) and the record's labels."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    near: list[str] = []
    vecs, dropped, folded = _lookup_sets(model, test, min_coverage, words_out=found, suggestions_out=near)
    owner: dict[str, str] = {}
    for role, (words, entries) in found.items():  # entries: weat's lookup's (vocabulary_entries, phrases too)
        for w, e in zip(words, entries):
            if e in owner:
                raise InvalidTestError(
                    f"test {test.id}: {owner[e]} and {role}:{w} are one vocabulary entry "
                    f"({e!r}) of {name_of(model, 'the model')}; a word belongs to one set"
                )
            owner[e] = f"{role}:{w}"
    labels = dict(
        bias_type=test.bias_type,
        model=name_of(model),
        dropped=tuple(dropped),
        case_folded=tuple(folded),
        suggestions=tuple(near),
        target_words=[w for g in test.targets for w in found[f"target {g.name}"][0]],
        attribute_words=[w for a in test.attributes for w in found[f"attribute {a.name}"][0]],
    )
    return vecs, labels


@public
@documents_calibration
def ngroup(
    model: Encoder,
    tests: Any,
    *,
    statistics: Any = None,
    calibration: Any = None,
    rng: Any = None,
    min_coverage: float = 0.8,
    force: bool = False,
    **options: Any,
) -> list[NGroupResult]:
    """Generalized WEAT, SAME, multiclass MAC and RNSB of n-group tests on a model, in one space.

    Parameters
    ----------
    model : Encoder
        Anything with ``lookup``, e.g. ``isoeat.load_model("glove-6b-50d")``.
    tests : NGroupTest, AssociationTest, str or list
        An n-group test, a two-group test (k = m = 2), a built-in id, a test file (every test of it; both
        layouts), or a list of those.
    statistics : None, "all", str or list
        Which statistics (see :func:`ngroup_from_vectors`).
    calibration : see CALIBRATION_DOC
    rng : None, int or numpy.random.Generator
        The root seed, recorded as ``seed``; statistic ``s`` on test ``t`` draws from the stream
        ``("ngroup", s, t)``, raw and calibrated alike.
    min_coverage : float, default 0.8
        As in :func:`isoeat.weat`, per set.
    force : bool, default False
        As in :func:`isoeat.weat`.
    **options
        ``alternative``, ``method``, ``n_permutations``, ``C`` (see :func:`ngroup_from_vectors`).

    Returns
    -------
    list of NGroupResult, tests outer, statistics inner.

    Examples
    --------
    >>> import isoeat
    >>> rs = isoeat.ngroup(isoeat.load_model("glove-6b-50d"), "religion.yaml", rng=0)  # doctest: +SKIP
    """
    from ..wordsets import as_ngroup_tests

    require_encoder(model, "ngroup")
    force = check_bool("force", force)
    opts = _check_options(options)
    _select(statistics)
    tests = as_ngroup_tests(tests)
    cal, cal_name = resolve_calibration(calibration, model, force=force)
    if not isinstance(rng, (np.random.Generator, np.random.SeedSequence)):
        rng = stream(rng)[1]  # one root seed for every test (None: a fresh one, recorded)
    out: list[NGroupResult] = []
    for t in tests:
        vecs, labels = _prepare(model, t, min_coverage)
        if cal is not None:
            vecs = {role: cal.transform(v) for role, v in vecs.items()}
        out += ngroup_from_vectors(
            {g.name: vecs[f"target {g.name}"] for g in t.targets},
            {a.name: vecs[f"attribute {a.name}"] for a in t.attributes},
            statistics=statistics,
            rng=rng,
            test=t.id,
            labels={**labels, "calibration": cal_name},
            **opts,
        )
    return out
