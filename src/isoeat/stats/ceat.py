r"""CEAT: the Contextualized Embedding Association Test (Guo & Caliskan 2021), raw and calibrated.

A contextual model gives a word one vector per context sentence. CEAT draws
one context vector per word, ``N`` times (default 1,000), computes the WEAT
effect size :math:`d_i` of every draw (:func:`isoeat.stats.bootstrap.effect_size`,
``ddof=1``) and combines the draws with a random-effects meta-analysis.

Within-draw variance :math:`v_i` of each draw, by ``variance``:

* ``"published"`` (the default; Guo & Caliskan 2021, supplement §8.3, and
  their released ``code/ceat.py``): the square of the standard deviation in
  :math:`d_i`'s denominator, the sample variance of the association scores
  over the targets,

  .. math::

      v_i = \frac{1}{n_X + n_Y - \mathrm{ddof}} \sum_{w \in X \cup Y} (s_i(w) - \bar s_i)^2,
      \qquad s_i(w) = \operatorname{mean}_{a \in A} \cos(w, a) - \operatorname{mean}_{b \in B} \cos(w, b)

  (in draw :math:`i`'s contexts). It is a variance of :math:`s`, in squared
  cosine units, not the sampling variance of :math:`d_i`.

* ``"hedges-olkin"``: the large-sample variance of Cohen's :math:`d` for two
  groups (Hedges & Olkin 1985, eq. 5.14; Borenstein et al. 2009, eq. 4.20),

  .. math::

      v_i = \frac{n_X + n_Y}{n_X n_Y} + \frac{d_i^2}{2(n_X + n_Y)}

  the variance of the quantity being combined, free of the cosines' scale
  (which calibration changes); the reason to prefer it is in docs/encoders.md.

Random-effects combination by DerSimonian & Laird (1986), as in Guo &
Caliskan (2021, §3.3), with fixed-effect weights :math:`w_i = 1/v_i`:

.. math::

    Q = \sum_i w_i (d_i - \bar d_w)^2, \qquad \bar d_w = \frac{\sum_i w_i d_i}{\sum_i w_i}

    \tau^2 = \max\Bigl(0,\ \frac{Q - (N - 1)}{\sum_i w_i - \sum_i w_i^2 / \sum_i w_i}\Bigr)

    w_i^* = \frac{1}{v_i + \tau^2}, \qquad
    \mathrm{CES} = \frac{\sum_i w_i^* d_i}{\sum_i w_i^*}, \qquad
    \mathrm{SE} = \frac{1}{\sqrt{\sum_i w_i^*}}

The 95% interval is :math:`\mathrm{CES} \pm 1.96\,\mathrm{SE}`. The p-value,
by ``alternative``, with :math:`z = \mathrm{CES}/\mathrm{SE}`: ``"two-sided"``
(the default, the supplement's text) :math:`2\,(1 - \Phi(|z|))`;
``"greater"`` (their released code, ``scipy.stats.norm.sf(z)``)
:math:`1 - \Phi(z)`; ``"less"`` :math:`\Phi(z)`.

Calibration (paper §3.3) is applied to every context vector before the
draws; raw and calibrated CEAT use the same draws (the same indices, from
one seed), so their difference is the calibration's alone.

References
----------
Guo, W. & Caliskan, A. (2021). Detecting emergent intersectional biases:
contextualized word embeddings contain a distribution of human-like biases. AIES.
DerSimonian, R. & Laird, N. (1986). Meta-analysis in clinical trials.
Controlled Clinical Trials 7, 177–188.
Hedges, L. V. & Olkin, I. (1985). Statistical Methods for Meta-Analysis. Academic Press.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .._cosine import unit_rows
from .._errors import ConfigError, CoverageError, InvalidTestError
from .._random import derive_seed, resolve_seed, spawn_seeds, stream
from .._surface import public
from .._types import ContextEncoder, name_of
from .._validate import check_choice, check_int
from .bootstrap import _d_rows
from .ceat_contexts import DEFAULT_CONTEXT_BOOTSTRAP, ContextInterval, check_context_work, context_bootstrap
from .options import CEAT_DRAWS, CEAT_VARIANCES, own

__all__ = ["DEFAULT_DRAWS", "CEAT_MEMORY", "VARIANCES", "ALTERNATIVES", "CEATResult", "MetaAnalysis",
           "effect_size_variance", "within_draw_variances", "random_effects", "log10_two_sided_p",
           "log10_normal_p", "normal_p", "draw_indices", "draw_scores", "draw_effect_sizes",
           "ceat_from_contexts", "ceat", "CEATLabels"]

#: Draws of one context vector per word (Guo & Caliskan 2021 use 10,000; 1,000 is the default here).
DEFAULT_DRAWS = CEAT_DRAWS
#: Bytes the draws may take (index arrays and per-draw association matrices) before they are refused.
CEAT_MEMORY = 2 * 2**30
#: The normal quantile of the 95% interval.
Z95 = 1.959963984540054

ROLES = ("X", "Y", "A", "B")

#: Within-draw variances: Guo & Caliskan's (the default) and Hedges & Olkin's variance of d.
VARIANCES = CEAT_VARIANCES
#: Sidedness of the combined p: the supplement's text (two-sided, the default) or one tail (their code: greater).
ALTERNATIVES = ("two-sided", "greater", "less")


def effect_size_variance(d: Any, n_x: int, n_y: int) -> np.ndarray:
    r"""Large-sample variance of Cohen's d for two groups (Hedges & Olkin 1985).

    .. math::

        v = \frac{n_X + n_Y}{n_X n_Y} + \frac{d^2}{2(n_X + n_Y)}

    Examples
    --------
    >>> float(effect_size_variance(1.0, 8, 8))  # 16/64 + 1/32
    0.28125
    """
    n_x = check_int("n_x", n_x, lo=1)
    n_y = check_int("n_y", n_y, lo=1)
    d = np.asarray(d, dtype=np.float64)
    return (n_x + n_y) / (n_x * n_y) + d * d / (2.0 * (n_x + n_y))


@dataclass(frozen=True)
class MetaAnalysis:
    """A DerSimonian–Laird random-effects combination (see the module docstring).

    Attributes
    ----------
    ces : float
        Combined effect size.
    se : float
        Its standard error, :math:`1/\\sqrt{\\sum w^*}`.
    ci_low, ci_high : float
        ``ces ± 1.96 se``.
    p_value : float
        From the normal, on the side ``alternative`` names (0.0 once it is
        below the smallest float).
    log10_p : float
        :math:`\\log_{10}` of the p-value, finite where ``p_value`` underflows
        (an asymptotic series of erfc there, see :func:`log10_normal_p`).
    tau2 : float
        Between-draw variance :math:`\\tau^2` (0 at the boundary ``Q <= N-1``).
    q : float
        Cochran's Q.
    n : int
        Number of effect sizes combined.
    """

    ces: float
    se: float
    ci_low: float
    ci_high: float
    p_value: float
    tau2: float
    q: float
    n: int
    log10_p: float
    alternative: str = "two-sided"


def log10_two_sided_p(z: float) -> float:
    r"""``log10(2 (1 - Phi(|z|)))`` = ``log10(erfc(|z|/sqrt 2))``, finite for any z.

    Where ``erfc`` is below 1e-300 (``|z| > 37``), the asymptotic series
    (Abramowitz & Stegun 7.1.23)

    .. math::

        \operatorname{erfc}(x) = \frac{e^{-x^2}}{x\sqrt\pi}
            \Bigl(1 - \frac{1}{2x^2} + \frac{3}{4x^4} - \frac{15}{8x^6} + \dots\Bigr)

    is summed in log space (relative error below 1e-9 for x > 26).
    """
    x = abs(float(z)) / math.sqrt(2.0)
    e = math.erfc(x)
    if e > 1e-300:  # mutation: equivalent[cmp > -> >=, const 1e-300 -> 5e-301] (erfc is still a normal float there and both branches agree to 1e-9 at the switch)
        return math.log10(e)
    x2 = x * x
    series = 1.0 - 1.0 / (2 * x2) + 3.0 / (4 * x2 ** 2) - 15.0 / (8 * x2 ** 3) + 105.0 / (16 * x2 ** 4)  # mutation: equivalent[const 16 -> 17] (x > 26: the last term is below 3e-11, the change 2e-12, under the stated 1e-9)
    return (-x2 - math.log(x * math.sqrt(math.pi)) + math.log(series)) / math.log(10.0)


def log10_normal_p(z: float, alternative: str = "two-sided") -> float:
    r"""``log10`` of the normal p-value of ``z`` on the side ``alternative`` names, finite for any z.

    ``"two-sided"``: :math:`2(1 - \Phi(|z|))` (:func:`log10_two_sided_p`);
    ``"greater"``: :math:`1 - \Phi(z)`; ``"less"``: :math:`\Phi(z)`. A tail
    below one half is half the two-sided p of ``z``; a tail above one half is
    :math:`1 - \tfrac12 \operatorname{erfc}(|z|/\sqrt 2)`, taken by ``log1p``.

    Examples
    --------
    >>> round(10 ** log10_normal_p(1.959963984540054, "greater"), 6)
    0.025
    >>> log10_normal_p(0.0, "less") == math.log10(0.5)
    True
    """
    alternative = check_choice("alternative", alternative, ALTERNATIVES)
    z = float(z)
    if alternative == "two-sided":
        return log10_two_sided_p(z)
    upper = z if alternative == "greater" else -z  # the tail's p is P[Z >= upper]
    if upper >= 0:
        return log10_two_sided_p(upper) - math.log10(2.0)
    return math.log1p(-0.5 * math.erfc(-upper / math.sqrt(2.0))) / math.log(10.0)


def normal_p(z: float, alternative: str = "two-sided") -> float:
    """The normal p-value of ``z`` on the side ``alternative`` names (see :func:`log10_normal_p`).

    Examples
    --------
    >>> round(normal_p(1.959963984540054), 6), round(normal_p(-1.959963984540054, "greater"), 6)
    (0.05, 0.975)
    """
    alternative = check_choice("alternative", alternative, ALTERNATIVES)
    if alternative == "two-sided":
        return math.erfc(abs(z) / math.sqrt(2.0))
    upper = z if alternative == "greater" else -z
    return 0.5 * math.erfc(upper / math.sqrt(2.0))


def random_effects(d: Any, v: Any, alternative: str = "two-sided") -> MetaAnalysis:
    """DerSimonian–Laird random-effects combination of effect sizes ``d`` with variances ``v``.

    Parameters
    ----------
    d, v : array_like of shape (N,)
        Effect sizes and their (positive, finite) variances; ``N >= 2``.
    alternative : {"two-sided", "greater", "less"}
        Side of the p-value of :math:`z = \\mathrm{CES}/\\mathrm{SE}` (see the module docstring).

    Examples
    --------
    >>> r = random_effects([0.2, 0.2], [0.1, 0.1])
    >>> round(r.ces, 6), r.tau2, round(r.se, 6)
    (0.2, 0.0, 0.223607)
    """
    alternative = check_choice("alternative", alternative, ALTERNATIVES)
    d = np.asarray(d, dtype=np.float64).ravel()
    v = np.asarray(v, dtype=np.float64).ravel()
    if d.shape != v.shape:
        raise ConfigError(f"random_effects: d and v differ in length ({d.size} vs {v.size})")
    if d.size < 2:
        raise ConfigError(f"random_effects: need at least 2 effect sizes, got {d.size}")
    if not (np.all(np.isfinite(d)) and np.all(np.isfinite(v)) and np.all(v > 0)):
        raise ConfigError("random_effects: effect sizes must be finite and variances finite and positive")
    n = d.size
    w = 1.0 / v
    sw = float(w.sum())
    d_fixed = float(np.dot(w, d) / sw)
    q = float(np.dot(w, (d - d_fixed) ** 2))
    c = sw - float(np.dot(w, w)) / sw
    tau2 = max(0.0, (q - (n - 1)) / c)  # c > 0 for N >= 2 finite positive weights
    ws = 1.0 / (v + tau2)
    sws = float(ws.sum())
    ces = float(np.dot(ws, d) / sws)
    se = 1.0 / math.sqrt(sws)
    z = ces / se
    return MetaAnalysis(ces=ces, se=se, ci_low=ces - Z95 * se, ci_high=ces + Z95 * se,
                        p_value=float(normal_p(z, alternative)), tau2=float(tau2), q=q, n=int(n),
                        log10_p=log10_normal_p(z, alternative), alternative=alternative)


def _check_sets(contexts: Mapping[str, Sequence[np.ndarray]]) -> dict[str, list[np.ndarray]]:
    out: dict[str, list[np.ndarray]] = {}
    dims = set()
    for role in ROLES:
        arrs = [np.asarray(a, dtype=np.float64) for a in contexts[role]]
        if len(arrs) < 2:
            raise CoverageError(f"CEAT: set {role} has {len(arrs)} word(s) with contexts; at least 2 are needed")
        for a in arrs:
            if a.ndim != 2 or a.shape[0] < 1:
                raise ConfigError(f"CEAT: set {role}: each word needs a (n_contexts >= 1, dim) array, got {a.shape}")
            dims.add(a.shape[1])
        out[role] = arrs
    if len(dims) != 1:
        raise ConfigError(f"CEAT: the context vectors have different dimensions {sorted(dims)}")
    return out


def check_draw_memory(n_draws: int, n_words: int, n_targets: int, n_attributes: int,
                      budget: int | None = None) -> None:
    """Refuse draws whose arrays (indices and per-draw target × attribute cosines) exceed ``budget`` bytes.

    ``budget`` defaults to :data:`CEAT_MEMORY` (read at call time).
    """
    budget = CEAT_MEMORY if budget is None else budget
    need = 8 * n_draws * (n_words + n_targets * n_attributes)
    if need > budget:
        raise ConfigError(f"CEAT: {n_draws} draws of {n_words} words need {need / 2**30:.2f} GiB, over the "
                          f"{budget / 2**30:g} GiB budget; ask for fewer draws")


def draw_indices(counts: Sequence[int], n_draws: int, rng: Any = None) -> tuple[np.ndarray, int | None]:
    """``(n_draws, len(counts))`` context indices, column ``j`` uniform on ``range(counts[j])``, and the seed.

    One ``rng`` stream (:func:`isoeat._random.resolve_seed`): the same seed gives the same draws.
    """
    n_draws = check_int("n_draws", n_draws, lo=2)
    sizes = np.asarray([check_int("n_contexts", c, lo=1) for c in counts], dtype=np.int64)
    gen, seed = resolve_seed(rng)
    return gen.integers(0, sizes, size=(n_draws, sizes.size)), seed


def _unit(M: np.ndarray) -> np.ndarray:
    return unit_rows(M, "CEAT context vectors")


def draw_scores(contexts: Mapping[str, Sequence[np.ndarray]], indices: np.ndarray) -> tuple[np.ndarray, int]:
    """The association scores :math:`s_i(w, A, B)` of every draw: ``(N, n_X + n_Y)`` and ``n_X``.

    Row ``i`` of ``indices`` picks one context per word (columns: the words of
    X, Y, A, B in that order); columns of the result are the targets X then Y.
    All cosines between target and attribute contexts are computed once; each
    draw then gathers its own.
    """
    sets = _check_sets(contexts)
    sizes = [len(sets[r]) for r in ROLES]
    if indices.ndim != 2 or indices.shape[1] != sum(sizes):
        raise ConfigError(f"CEAT: indices must have {sum(sizes)} columns, got shape {indices.shape}")
    # row offset of each word's contexts in the stacked matrices
    flat = {}
    for role in ROLES:
        counts = np.array([a.shape[0] for a in sets[role]], dtype=np.int64)
        flat[role] = (_unit(np.vstack(sets[role])), np.concatenate([[0], np.cumsum(counts)[:-1]]))
    cols = np.cumsum([0] + sizes)
    rows = {r: indices[:, cols[k]:cols[k + 1]] + flat[r][1][None, :] for k, r in enumerate(ROLES)}
    n_x = sizes[0]
    t_rows = np.concatenate([rows["X"], rows["Y"]], axis=1)  # (N, n_x + n_y)
    s = np.zeros(t_rows.shape, dtype=np.float64)
    targets = np.vstack([flat["X"][0], flat["Y"][0]])
    offset_y = flat["X"][0].shape[0]
    t_rows = t_rows.copy()
    t_rows[:, n_x:] += offset_y
    for role, sign in (("A", 1.0), ("B", -1.0)):
        cos = targets @ flat[role][0].T  # (all target contexts, all attribute contexts)
        g = cos[t_rows[:, :, None], rows[role][:, None, :]]  # (N, n_targets, n_attr)
        s += sign * g.mean(axis=2)
    return s, n_x


def draw_effect_sizes(contexts: Mapping[str, Sequence[np.ndarray]], indices: np.ndarray,
                      ddof: int = 1) -> np.ndarray:
    """The WEAT effect size of each draw: row ``i`` of ``indices`` picks one context per word.

    ``indices`` columns are the words of X, Y, A, B in that order (see :func:`draw_scores`).
    """
    s, n_x = draw_scores(contexts, indices)
    return _d_rows(s[:, :n_x], s[:, n_x:], check_int("ddof", ddof, lo=0))


def within_draw_variances(s: np.ndarray, n_x: int, d: np.ndarray, variance: str = "published",
                          ddof: int = 1) -> np.ndarray:
    """Each draw's variance :math:`v_i` (see the module docstring), from its scores ``s`` and effect size ``d``.

    ``"published"``: the variance of row ``s[i]`` with ``ddof`` (the square of
    the SD in :math:`d_i`'s denominator); ``"hedges-olkin"``: :func:`effect_size_variance`.

    Examples
    --------
    >>> s = np.array([[1.0, 0.0, -1.0, 0.0]])           # s over X = (1, 0), Y = (-1, 0)
    >>> float(within_draw_variances(s, 2, np.array([1.5 ** 0.5]))[0])  # (1 + 0 + 1 + 0) / 3
    0.6666666666666666
    """
    variance = check_choice("variance", variance, VARIANCES)
    if variance == "hedges-olkin":
        return effect_size_variance(d, n_x, s.shape[1] - n_x)
    return np.var(s, axis=1, ddof=check_int("ddof", ddof, lo=0))


@dataclass(frozen=True)
class CEATResult:
    """CEAT of one test in one space (raw or calibrated).

    Attributes
    ----------
    test, model, calibration : str
        What was measured (``calibration`` is ``"none"`` for raw vectors).
    meta : MetaAnalysis
        CES, SE, 95% interval, p (and its side, ``meta.alternative``), τ², Q and N.
    n_x, n_y, n_a, n_b : int
        Words per set that had contexts.
    seed : int or None
        The root seed of the draws (``None`` when a Generator was passed).
    seed_stream : tuple of str
        The stream the draws came from (``("ceat", TEST)``; empty when ``seed`` seeded them directly).
    effect_sizes, variances : tuple of float
        Each draw's :math:`d_i` and :math:`v_i`.
    variance : str
        Which :math:`v_i`: ``"published"`` (Guo & Caliskan) or ``"hedges-olkin"``.
    n_contexts : dict
        Contexts available per word.
    dropped : tuple of str
        ``"ROLE:word"`` for words with no context vector.
    fallback : tuple of str
        ``"ROLE:word"`` for words with no context in the corpus, encoded once
        in the fallback template (one vector, the same in every draw).
    contexts : ContextInterval or None
        The interval that also covers the sampling of the contexts (a bootstrap
        over each word's contexts, :mod:`isoeat.stats.ceat_contexts`); ``None``
        with ``bootstrap=0``. ``meta``'s SE, interval and p are **draw-level**:
        they cover only the choice of draws from these contexts.
    """

    test: str
    model: str
    calibration: str
    meta: MetaAnalysis
    n_x: int
    n_y: int
    n_a: int
    n_b: int
    seed: int | None = None
    effect_sizes: tuple[float, ...] = ()
    variances: tuple[float, ...] = ()
    n_contexts: dict[str, Any] = field(default_factory=dict)
    dropped: tuple[str, ...] = ()
    fallback: tuple[str, ...] = ()
    seed_stream: tuple[str, ...] = ()
    variance: str = "published"
    contexts: ContextInterval | None = None

    @property
    def n_draws(self) -> int:
        return self.meta.n

    @property
    def alternative(self) -> str:
        """The side of the p-value (``meta.alternative``)."""
        return self.meta.alternative

    def to_dict(self, draws: bool = False) -> dict[str, Any]:
        """Plain types for JSON; the per-draw d and v only with ``draws=True``."""
        d = {k: v for k, v in asdict(self).items() if k not in ("meta", "effect_sizes", "variances", "contexts")}
        d.update(asdict(self.meta))
        d.update(self.contexts.to_dict() if self.contexts is not None else
                 {f"contexts_{k}": None for k in ("low", "high", "level", "se", "n_boot", "method")})
        d["dropped"] = list(self.dropped)
        d["fallback"] = list(self.fallback)
        d["seed_stream"] = list(self.seed_stream)
        if draws:
            d["effect_sizes"] = list(self.effect_sizes)
            d["variances"] = list(self.variances)
        return d

    def records(self) -> list[dict[str, Any]]:
        """One flat row (for CSV)."""
        d = self.to_dict()
        d.pop("n_contexts")
        d["dropped"] = ";".join(self.dropped)
        d["fallback"] = ";".join(self.fallback)
        d["seed_stream"] = "/".join(self.seed_stream)
        return [d]

    def to_frame(self) -> Any:
        """:meth:`records` as a one-row :class:`pandas.DataFrame` (needs pandas)."""
        from .results import records_frame

        return records_frame(self.records())


def _spaces(calibration: Any) -> dict[str, Any]:
    """``calibration=`` of :func:`ceat_from_contexts`: None, a fitted calibrator, or a mapping label -> calibrator."""
    from .._validate import show

    if calibration is None or (isinstance(calibration, str) and calibration == "none"):
        return {}
    if callable(getattr(calibration, "transform", None)):
        return {str(getattr(calibration, "name", type(calibration).__name__.lower())): calibration}
    if isinstance(calibration, Mapping):
        bad = [k for k, v in calibration.items() if not callable(getattr(v, "transform", None))]
        if not bad:
            return dict(calibration)
        raise ConfigError(f"calibration[{bad[0]!r}] must be a fitted calibrator (with transform()), got "
                          f"{show(calibration[bad[0]])}")
    raise ConfigError(f"calibration must be None, a fitted calibrator, or a mapping label -> fitted calibrator; "
                      f"got {show(calibration)}")


@dataclass(frozen=True)
class CEATLabels:
    """What :func:`ceat_from_contexts` labels its results with (``labels=``, or each field by name).

    Attributes
    ----------
    test, model : str
        The test's id and the model's name.
    words : mapping role -> words, optional
        The words of each role, in the order of the contexts (the labels of ``n_contexts``).
    dropped, fallback : tuple of str
        ``"ROLE:word"`` for words with no context vector, and for words encoded in a template.
    """

    test: str = "custom"
    model: str = ""
    words: Mapping[str, Sequence[str]] | None = None
    dropped: tuple[str, ...] = ()
    fallback: tuple[str, ...] = ()


def _ces_statistic(ddof: int, variance: str) -> Any:
    """The published CES of one draw set's scores ``(s, n_x)`` (draws with an undefined d left out; NaN below 2)."""

    def ces(s: np.ndarray, n_x: int) -> float:
        d = _d_rows(s[:, :n_x], s[:, n_x:], ddof)
        ok = np.isfinite(d)
        if ok.sum() < 2:
            return math.nan
        v = within_draw_variances(s[ok], n_x, d[ok], variance, ddof)
        return random_effects(d[ok], np.maximum(v, np.finfo(float).tiny)).ces

    return ces


def _contexts_stream(rng: Any, seed: int | None) -> Any:
    """The contexts bootstrap's stream: a caller's Generator continued after the draws, else the sub-stream
    ``"contexts"`` of the draws' seed (a SeedSequence: its next spawned child)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if seed is not None:
        return derive_seed(seed, "contexts")
    return spawn_seeds(rng, 1)[0] if isinstance(rng, np.random.SeedSequence) else None


@public
def ceat_from_contexts(
    contexts: Mapping[str, Sequence[np.ndarray]],
    *,
    n_draws: int = DEFAULT_DRAWS,
    rng: Any = None,
    calibration: Any = None,
    ddof: int = 1,
    variance: str = "published",
    alternative: str = "two-sided",
    labels: CEATLabels | None = None,
    bootstrap: int = DEFAULT_CONTEXT_BOOTSTRAP,
    **options: Any,
) -> list[CEATResult]:
    """CEAT in the raw space and in every calibrated one, from the same draws.

    Parameters
    ----------
    contexts : mapping role -> list of ndarray (n_contexts, dim)
        Keys ``"X"``, ``"Y"``, ``"A"``, ``"B"``: per word, its context vectors.
    n_draws : int, default 1000
        Draws of one context per word.
    rng : None, int, Generator or SeedSequence
        One stream for the draw indices (shared by every space; None: a fresh seed, recorded).
    calibration : None, fitted calibrator, or mapping label -> fitted calibrator
        Each ``transform`` is applied to every context vector before the draws
        (the vectors are given here: nothing to fit a calibration by name on).
    ddof : int, default 1
        Of each draw's effect size (as WEAT), and of the published variance.
    variance : {"published", "hedges-olkin"}, default "published"
        Each draw's variance in the combination: Guo & Caliskan's (the sample
        variance of :math:`s(w, A, B)` over X ∪ Y) or Hedges & Olkin's variance
        of :math:`d` (see the module docstring).
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        Side of the combined p (the supplement's text is two-sided; the
        released code computes ``"greater"``).
    labels : CEATLabels, optional
        What the results are labelled with (:class:`CEATLabels`), or by name: ``test``, ``model``, ``words``
        (mapping role -> words: the labels of ``n_contexts``), ``dropped``, ``fallback``.
    bootstrap : int, default 1000
        Replicates of the contexts interval (:mod:`isoeat.stats.ceat_contexts`: each word's contexts
        resampled, the published procedure rerun; every space with the same indices); 0: none
        (``contexts`` is ``None``). Drawn after the published draws: with an int or None ``rng``, from the
        sub-stream ``"contexts"`` of the draws' seed (:func:`isoeat._random.derive_seed`); with a Generator,
        from it once the draws are taken. The published CES, SE, interval and p are unchanged by it.

    Returns
    -------
    list of CEATResult
        Raw first, then one per calibrator, in the mapping's order.
    """
    lab = own(CEATLabels, labels, options, where="ceat_from_contexts", name="labels", last=True)
    test, words = lab.test, lab.words
    spaces_given = _spaces(calibration)
    variance = check_choice("variance", variance, VARIANCES)
    alternative = check_choice("alternative", alternative, ALTERNATIVES)
    ddof = check_int("ddof", ddof, lo=0)
    sets = _check_sets(contexts)
    counts = [a.shape[0] for r in ROLES for a in sets[r]]
    sizes = {r: len(sets[r]) for r in ROLES}
    n_draws = check_int("n_draws", n_draws, lo=2)
    ddof = check_int("ddof", ddof, lo=0)
    if ddof >= sizes["X"] + sizes["Y"]:  # said as what it is, not as "all associations equal"
        raise InvalidTestError(f"test {test}: ddof={ddof} must be below the {sizes['X'] + sizes['Y']} target words "
                               "(|X| + |Y|) whose associations each draw's standard deviation pools")
    check_draw_memory(n_draws, len(counts), sizes["X"] + sizes["Y"], max(sizes["A"], sizes["B"]))
    bootstrap = check_int("bootstrap", bootstrap, lo=0)
    if bootstrap == 1:
        raise ConfigError("bootstrap must be 0 (no contexts interval) or at least 2 replicates, got 1")
    if bootstrap:
        check_context_work(bootstrap, n_draws, sizes["X"] + sizes["Y"], sizes["A"] + sizes["B"])
    idx, seed = draw_indices(counts, n_draws, rng)
    names = [w for r in ROLES for w in (words or {}).get(r, [f"{r}{i}" for i in range(sizes[r])])]
    n_ctx = dict(zip(names, counts))
    spaces: list[tuple[str, Mapping[str, Sequence[np.ndarray]]]] = [("none", sets)]
    for name, cal in spaces_given.items():
        spaces.append((name, {r: [np.asarray(cal.transform(a), dtype=np.float64) for a in sets[r]] for r in ROLES}))
    intervals: list[ContextInterval | None] = [None] * len(spaces)
    if bootstrap:
        boot_rng = _contexts_stream(rng, seed)
        intervals = list(context_bootstrap([c for _, c in spaces], n_draws=n_draws, n_boot=bootstrap, rng=boot_rng,
                                           statistic=_ces_statistic(ddof, variance)))
    out = []
    for (name, ctx), interval in zip(spaces, intervals):
        s, n_x = draw_scores(ctx, idx)
        d = _d_rows(s[:, :n_x], s[:, n_x:], ddof)
        if not np.all(np.isfinite(d)):
            raise ConfigError(f"CEAT ({name}): {int(np.sum(~np.isfinite(d)))} draw(s) have an undefined effect "
                              "size (all associations equal)")
        v = within_draw_variances(s, n_x, d, variance, ddof)
        out.append(CEATResult(test=test, model=lab.model, calibration=name, meta=random_effects(d, v, alternative),
                              n_x=sizes["X"], n_y=sizes["Y"], n_a=sizes["A"], n_b=sizes["B"], seed=seed,
                              effect_sizes=tuple(float(x) for x in d), variances=tuple(float(x) for x in v),
                              n_contexts=n_ctx, dropped=tuple(lab.dropped), fallback=tuple(lab.fallback),
                              variance=variance, contexts=interval))
    return out


@public
def ceat(
    model: Any,
    test: Any,
    *,
    calibration: Any = None,
    n_reference: int = 100_000,
    n_draws: int = DEFAULT_DRAWS,
    rng: Any = None,
    ddof: int = 1,
    variance: str = "published",
    alternative: str = "two-sided",
    bootstrap: int = DEFAULT_CONTEXT_BOOTSTRAP,
) -> list[CEATResult]:
    """CEAT of an association test on a contextual encoder, raw and calibrated from the same draws.

    Parameters
    ----------
    model : encoder with ``context_vectors(words)``
        E.g. :class:`~isoeat.backends.transformer.TransformerEncoder` (``hf:``
        models, ``minilm``): each word's contexts are encoded once and cached.
    test : AssociationTest or str
        A test, a registered id such as ``"W6"``, or the path of a test file holding one test.
    calibration : None, str, fitted calibrator, or mapping, default None
        The calibrated spaces measured beside the raw one (CEAT takes several,
        all from the same draws). ``None``/``"none"``: raw only. A registered
        name (``"zca"``): fitted here on ``n_reference`` sentence-level
        reference vectors (``reference_kwargs={"unit": "sentence"}``, as the
        paper does, and as ``isoeat ceat``). A fitted calibrator: used as
        given, labelled with its ``name``. A mapping label -> fitted calibrator,
        or name -> parameters of that calibration (a dict, fitted here).
        Each is checked against the model (dimension, fingerprint).
    n_reference : int, default 100_000
        Reference sentences of a calibration fitted here (ignored for fitted calibrators).
    n_draws, ddof, variance, alternative, bootstrap
        See :func:`ceat_from_contexts` (defaults: Guo & Caliskan's variance, two-sided p, 1,000 replicates of
        the contexts interval).
    rng : None, int, Generator or SeedSequence
        The root seed (None: a fresh one, recorded); the draws come from the stream ``("ceat", TEST)``
        (:func:`isoeat._random.derive_seed`), shared by every space, recorded as ``seed``.
    """
    from .._surface import require_encoder
    from ..wordsets import as_test

    if not isinstance(model, ContextEncoder):
        require_encoder(model, "ceat", needs=("context_vectors", "lookup"), example="minilm")
        raise ConfigError(f"CEAT needs a contextual model (hf: or minilm); {name_of(model, '?')!r} "
                          "gives one vector per word")
    test = as_test(test)
    n_draws = check_int("n_draws", n_draws, lo=2)  # before any word is encoded
    ddof = check_int("ddof", ddof, lo=0)
    n_reference = check_int("n_reference", n_reference, lo=2)
    bootstrap = check_int("bootstrap", bootstrap, lo=0)
    sets = test.sets()
    if bootstrap:  # before any word is encoded
        check_context_work(bootstrap, n_draws, len(sets["X"].words) + len(sets["Y"].words),
                           len(sets["A"].words) + len(sets["B"].words))
    test_id = test.id
    contexts: dict[str, list[np.ndarray]] = {}
    words: dict[str, list[str]] = {}
    dropped: list[str] = []
    fallback: list[str] = []
    for role in ROLES:
        vecs, report = model.context_vectors(sets[role].words)
        kept = [w for w in dict.fromkeys(sets[role].words) if w in vecs]
        dropped.extend(f"{role}:{w}" for w in report.get("dropped", ()))
        fallback.extend(f"{role}:{w}" for w in report.get("fallback", ()))
        if len(kept) < 2:
            raise CoverageError(f"test {test_id}, set {role}: {len(kept)} word(s) with contexts; at least 2 "
                                "are needed")
        contexts[role] = [vecs[w] for w in kept]
        words[role] = kept
    from dataclasses import replace

    from .weat import resolve_calibrations

    spaces = resolve_calibrations(calibration, model, n_reference=n_reference, reference_kwargs={"unit": "sentence"})
    key = ("ceat", test_id)  # one stream of draws, shared by every space
    rng, root = stream(rng, *key)
    out = ceat_from_contexts(contexts, n_draws=n_draws, rng=rng, calibration=spaces, ddof=ddof,
                             variance=variance, alternative=alternative, bootstrap=bootstrap, test=test_id,
                             model=name_of(model), words=words, dropped=tuple(dropped),
                             fallback=tuple(fallback))
    return out if root is None else [replace(r, seed=root, seed_stream=key) for r in out]
