r"""Statistics of k >= 2 target groups: Generalized WEAT, SAME, and their permutation test over group labels.

Notation: target groups :math:`X_1, \dots, X_k` (sizes :math:`n_i`, :math:`N = \sum n_i`), attribute
sets :math:`A_1, \dots, A_m`; :math:`\hat u = u / \lVert u\rVert`; a bar is the mean of unit vectors,
:math:`\bar x_i = \operatorname{mean}_{x\in X_i}\hat x`, :math:`\bar a_j = \operatorname{mean}_{a\in A_j}\hat a`.

* Generalized WEAT (Swinger, De-Arteaga, Heffernan, Leiserson & Kalai 2019, AIES, "What are the biases in
  my word embedding?"), :math:`k = m`, group :math:`i` paired with attribute set :math:`i`:

  .. math::

      G = \sum_{i=1}^{k} (\bar x_i - \bar x)\cdot(\bar a_i - \bar a),\qquad
      \bar x = \tfrac1k\sum_i \bar x_i,\ \bar a = \tfrac1k\sum_i \bar a_i .

  Since :math:`\sum_i(\bar a_i - \bar a) = 0`, :math:`G = \sum_i \operatorname{mean}_{x\in X_i} s_i(x)` with
  :math:`s_i(x) = \hat x\cdot(\bar a_i - \bar a)`. For :math:`k = 2`, :math:`s_1 = -s_2 = s/2` with WEAT's
  :math:`s(w) = \operatorname{mean}_A\cos(w,a) - \operatorname{mean}_B\cos(w,b)`, so
  :math:`G = \tfrac12(\operatorname{mean}_X s - \operatorname{mean}_Y s)`, half the numerator of WEAT's
  :math:`d`, and its permutation p is WEAT's (it is computed by the same
  :func:`~isoeat.stats.permutation.partition_test`).
* SAME (Schröder, Schulz, Kenneweg, Feldhans, Hinder & Hammer 2021, "Evaluating metrics for bias in word
  embeddings"; the multiclass form of the authors' reference implementation, HammerLabML/EmbeddingBiasScores
  ``geometrical_bias/same.py`` at 5e72d36, 2024; its directions' signs differ, which ``|cos|`` ignores): the groups
  are the target groups, the words measured are the attribute words :math:`W = \bigcup_j A_j`. Bias
  directions :math:`b_1 = \bar x_2 - \bar x_1` and, for :math:`i = 3..k`, :math:`b_{i-1}` = the part of
  :math:`\bar x_i - \bar x_1` orthogonal to :math:`b_1, \dots, b_{i-2}` (Gram–Schmidt); per word

  .. math::

      \mathrm{same}(w) = \lvert\cos(w, b_1)\rvert + \sum_{j=2}^{k-1}\lVert b_j\rVert\,\lvert\cos(w, b_j)\rvert,
      \qquad \mathrm{SAME} = \operatorname{mean}_{w\in W}\mathrm{same}(w)

  (a magnitude: 0 when no attribute word leans towards any group).

Permutation test (:func:`group_permutation_test`): under the null, every assignment of the :math:`N` target
words to groups of the observed sizes is equally likely; there are :math:`N! / \prod_i n_i!` distinct ones.
"greater": :math:`p = P[G_\pi \ge G - \tau]`; "less": :math:`P[G_\pi \le G + \tau]`; "two-sided" (GWEAT,
whose null mean is 0): :math:`P[\lvert G_\pi\rvert \ge \lvert G\rvert - \tau]`; :math:`\tau` = ``rtol`` times
the statistic's scale (:data:`~isoeat.stats.permutation.DEFAULT_RTOL`). Exact (every assignment counted) when
their number is at most ``n_permutations`` (``method="auto"``, the convention of
:func:`~isoeat.stats.permutation.partition_test`) or ``method="exact"`` within :data:`MAX_EXACT_ASSIGNMENTS`;
else ``n_permutations`` uniform random assignments, :math:`p = (k + 1)/(N + 1)` with the Clopper–Pearson
interval of :math:`k/N`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .._cosine import unit_rows
from .._errors import ConfigError
from .._random import as_generator
from .._resources import one_blas_thread
from .._validate import check_choice, check_int
from ._montecarlo import clopper_pearson
from .permutation import DEFAULT_RTOL, partition_test

__all__ = [
    "MAX_EXACT_ASSIGNMENTS",
    "GroupPermutation",
    "n_assignments",
    "gweat_scores",
    "gweat_statistic",
    "same_scores",
    "same_statistic",
    "group_permutation_test",
    "gweat_test",
    "same_test",
]

#: The most assignments exact counting enumerates (built at once: about 20 bytes per assignment and target word,
#: 400 MB for 1,000,000 assignments of 20 words); ``method="auto"`` samples beyond it.
MAX_EXACT_ASSIGNMENTS = 1_000_000
_CHUNK = 8192
_ALTERNATIVES = ("greater", "less", "two-sided")


@dataclass(frozen=True)
class GroupPermutation:
    """Outcome of :func:`group_permutation_test` (the fields of :class:`~isoeat.stats.permutation.PermutationResult`).

    ``n_assignments`` is the size of the null (:math:`N!/\\prod n_i!`); ``n_permutations`` the number sampled
    (``None`` when exact); ``ci_low``/``ci_high`` the Clopper–Pearson interval of a sampled p (both ``p_value``
    when exact).
    """

    p_value: float
    p_method: str
    alternative: str
    count: int
    n_assignments: int
    n_permutations: int | None
    ci_low: float
    ci_high: float
    tolerance: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def n_assignments(sizes: Any) -> int:
    """The number of distinct assignments of :math:`N = \\sum n_i` words to groups of sizes :math:`n_i`.

    >>> n_assignments([3, 3, 3]), n_assignments([10, 10])
    (1680, 184756)
    """
    out, left = 1, sum(sizes)
    for n in sizes:
        out *= math.comb(left, n)
        left -= n
    return out


def _labels(sizes: Any) -> np.ndarray:
    return np.repeat(np.arange(len(sizes)), sizes).astype(np.int64)


def _units(sets: Any, role: str) -> list[np.ndarray]:
    return [unit_rows(np.asarray(v, dtype=np.float64), f"{role} {i + 1}") for i, v in enumerate(sets)]


# --------------------------------------------------------------------------- Generalized WEAT
def gweat_scores(targets: Any, attributes: Any) -> np.ndarray:
    r"""The matrix :math:`s_i(w) = \hat w\cdot(\bar a_i - \bar a)`, shape ``(N, k)``, target rows in group order.

    ``targets``, ``attributes``: sequences of ``(n, dim)`` arrays, as many attribute sets as target groups.
    """
    if len(targets) != len(attributes):
        raise ConfigError(
            f"Generalized WEAT pairs target group i with attribute set i: it needs as many attribute "
            f"sets as target groups (got {len(targets)} target groups, {len(attributes)} attribute "
            "sets)"
        )
    centres = np.stack([a.mean(axis=0) for a in _units(attributes, "attribute set")])
    directions = centres - centres.mean(axis=0)
    return np.vstack(_units(targets, "target group")) @ directions.T


def gweat_statistic(targets: Any, attributes: Any) -> float:
    r""":math:`G = \sum_i (\bar x_i - \bar x)\cdot(\bar a_i - \bar a)` (Swinger et al. 2019), by its definition.

    Examples
    --------
    >>> X = [np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])]
    >>> round(gweat_statistic(X, X), 6)  # (x1 - x)·(x1 - x) + (x2 - x)·(x2 - x) = 2 · 0.5
    1.0
    """
    xs = np.stack([t.mean(axis=0) for t in _units(targets, "target group")])
    ats = np.stack([a.mean(axis=0) for a in _units(attributes, "attribute set")])
    if len(xs) != len(ats):
        gweat_scores(targets, attributes)  # the one message
    return float(np.sum((xs - xs.mean(axis=0)) * (ats - ats.mean(axis=0))))


def _gweat_batch(S: np.ndarray, sizes: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    rows = np.arange(S.shape[0])
    inv = 1.0 / sizes

    def stat(L: np.ndarray) -> np.ndarray:
        return np.sum(S[rows, L] * inv[L], axis=1)

    return stat


# --------------------------------------------------------------------------- SAME
def _directions(means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SAME's bias directions from group means ``(..., k, dim)``: unit directions and their weights.

    Returns unit directions ``(..., k-1, dim)`` and weights ``(..., k-1)`` (1 for the first, the norm of the
    orthogonalised difference for the others), as in the authors' ``same.py``. Two groups with one mean (a
    zero direction) make SAME undefined: a one-line error naming the direction.
    """
    lead, k, dim = means.shape[:-2], means.shape[-2], means.shape[-1]
    units = np.empty((*lead, k - 1, dim))
    weights = np.ones((*lead, k - 1))
    for i in range(1, k):
        v = means[..., i, :] - means[..., 0, :]
        for j in range(i - 1):  # Gram-Schmidt on the earlier unit directions
            u = units[..., j, :]
            v = v - np.sum(v * u, axis=-1, keepdims=True) * u
        if i > 1:
            weights[..., i - 1] = np.linalg.norm(v, axis=-1)
        units[..., i - 1, :] = unit_rows(v.reshape(-1, dim), f"SAME bias direction {i} (group means)").reshape(v.shape)
    return units, weights


def same_scores(targets: Any, words: Any) -> np.ndarray:
    r"""Per-word SAME of the rows of ``words`` against the groups ``targets`` (a sequence of arrays)."""
    if len(targets) < 2:
        raise ConfigError(f"SAME needs at least 2 target groups, got {len(targets)}")
    means = np.stack([t.mean(axis=0) for t in _units(targets, "target group")])
    units, weights = _directions(means)
    W = unit_rows(np.asarray(words, dtype=np.float64), "attribute words")
    return np.abs(W @ units.T) @ weights


def same_statistic(targets: Any, words: Any) -> float:
    r""":math:`\mathrm{SAME} = \operatorname{mean}_w \mathrm{same}(w)` (see the module docstring).

    Examples
    --------
    >>> X = [np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])]
    >>> round(same_statistic(X, np.array([[1.0, 0.0], [1.0, 1.0]])), 6)  # |cos| with (-1, 1): 0.707107 and 0
    0.353553
    """
    return float(same_scores(targets, words).mean())


def _same_batch(U: np.ndarray, sizes: np.ndarray, W: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    k = len(sizes)
    # every group mean lies in the span of the target rows: cosines with W need only W's part in that span
    # (|w| = 1 is kept), so the work runs in r = rank <= min(N, dim) coordinates, not dim
    Q, _ = np.linalg.qr(U.T)
    U, W = U @ Q, W @ Q
    total = U.sum(axis=0)

    def stat(L: np.ndarray) -> np.ndarray:
        # group means by one matrix product per group (B x N indicators times N x dim), then B x (k-1) x |W| cosines
        means = np.empty((len(L), k, U.shape[1]))
        for g in range(k - 1):
            means[:, g] = (L == g).astype(np.float64) @ U
        means[:, k - 1] = total - means[:, : k - 1].sum(axis=1)  # the last group's sum: the rest of the total
        means /= sizes[None, :, None]
        units, weights = _directions(means)
        cos = np.abs(units @ W.T)
        return (cos.sum(axis=2) * weights).sum(axis=1) / W.shape[0]

    return stat


# --------------------------------------------------------------------------- the permutation test
def _all_assignments(sizes: Any) -> np.ndarray:
    """Every distinct assignment of ``N`` positions to groups of ``sizes``, one int8 row each (groups in order)."""
    from itertools import combinations

    N = int(sum(sizes))
    L = np.full((1, N), -1, dtype=np.int8)
    for g, n in enumerate(sizes[:-1]):
        free = N - int(sum(sizes[:g]))
        combos = np.array(list(combinations(range(free), int(n))), dtype=np.int64).reshape(-1, int(n))
        F = np.flatnonzero(L.ravel() == -1).reshape(len(L), free) % N
        R = len(L)
        L = np.repeat(L, len(combos), axis=0)
        pos = np.take_along_axis(np.repeat(F, len(combos), axis=0), np.tile(combos, (R, 1)), axis=1)
        np.put_along_axis(L, pos, np.int8(g), axis=1)
    L[L == -1] = len(sizes) - 1
    return L


def _reaches(values: np.ndarray, observed: float, alternative: str, tol: float) -> int:
    if alternative == "greater":
        return int(np.count_nonzero(values >= observed - tol))
    if alternative == "less":
        return int(np.count_nonzero(values <= observed + tol))
    return int(np.count_nonzero(np.abs(values) >= abs(observed) - tol))


def group_permutation_test(
    statistic: Callable[[np.ndarray], np.ndarray],
    sizes: Any,
    *,
    scale: float = 1.0,
    alternative: str = "greater",
    method: str = "auto",
    n_permutations: int = 100_000,
    rng: Any = None,
    confidence: float = 0.95,
    rtol: float | None = None,
) -> GroupPermutation:
    r"""Permutation p of a statistic of group labels over every assignment of the target words to the groups.

    Parameters
    ----------
    statistic : callable
        ``statistic(L)`` for an integer array ``L`` of shape ``(B, N)`` (row: each word's group) returns the
        ``B`` values; the observed labels are the words in group order (``sizes[0]`` zeros, ...).
    sizes : sequence of int
        The group sizes :math:`n_i` (at least 2 groups).
    scale : float
        The statistic's scale: the tie tolerance is :math:`\tau = \mathrm{rtol}\cdot\mathrm{scale}`.
    alternative : {"greater", "less", "two-sided"}
        "two-sided" compares :math:`\lvert G_\pi\rvert` with :math:`\lvert G\rvert` (a statistic whose null
        mean is 0, as Generalized WEAT's).
    method : {"auto", "exact", "monte-carlo"}
        "auto": exact when :func:`n_assignments` is at most ``n_permutations``, else Monte Carlo.
    n_permutations : int
        Monte Carlo sample size.
    rng : None, int or numpy.random.Generator
        The draws of a Monte Carlo p (:func:`isoeat._random.as_generator`).

    Returns
    -------
    GroupPermutation
        Exact: :math:`p = c / (N!/\prod n_i!)`; Monte Carlo: :math:`p = (k+1)/(N+1)` and the Clopper–Pearson
        interval of :math:`k/N`.

    Examples
    --------
    >>> stat = lambda L: (L == 0).astype(float) @ np.arange(4.0)   # sum of the values in group 0
    >>> r = group_permutation_test(stat, [2, 2])   # observed {0, 1}: sum 1, the smallest of C(4, 2) = 6
    >>> r.p_value, r.p_method, r.n_assignments
    (1.0, 'exact', 6)
    """
    sizes = [check_int("group size", n, lo=1) for n in sizes]
    if len(sizes) < 2:
        raise ConfigError(f"a permutation test over group labels needs at least 2 groups, got {len(sizes)}")
    check_choice("alternative", alternative, _ALTERNATIVES)
    check_choice("method", method, ("auto", "exact", "monte-carlo"))
    n_permutations = check_int("n_permutations", n_permutations, lo=1)
    tol = (DEFAULT_RTOL if rtol is None else float(rtol)) * abs(float(scale))
    total = n_assignments(sizes)
    observed = float(statistic(_labels(sizes)[None, :])[0])
    if not math.isfinite(observed):
        return GroupPermutation(math.nan, "none", alternative, 0, total, None, math.nan, math.nan, tol)
    exact = method == "exact" or (method == "auto" and total <= min(n_permutations, MAX_EXACT_ASSIGNMENTS))
    if exact:
        if total > MAX_EXACT_ASSIGNMENTS:
            raise ConfigError(
                f"method='exact' would enumerate {total:,} assignments of the target words to their "
                f"groups (at most {MAX_EXACT_ASSIGNMENTS:,}); use method='monte-carlo'"
            )
        L = _all_assignments(sizes)
        with one_blas_thread():  # many small products: BLAS threads only contend
            count = sum(
                _reaches(statistic(L[i : i + _CHUNK].astype(np.int64)), observed, alternative, tol)
                for i in range(0, len(L), _CHUNK)
            )
        return GroupPermutation(
            count / total, "exact", alternative, count, total, None, count / total, count / total, tol
        )
    gen = as_generator(rng)
    base = _labels(sizes)
    hits, done = 0, 0
    with one_blas_thread():  # many small products: BLAS threads only contend (CPU time halved, measured)
        while done < n_permutations:
            b = min(_CHUNK, n_permutations - done)
            L = gen.permuted(np.broadcast_to(base, (b, base.size)), axis=1)
            hits += _reaches(statistic(L), observed, alternative, tol)
            done += b
    low, high = clopper_pearson(hits, n_permutations, confidence)
    return GroupPermutation(
        (hits + 1) / (n_permutations + 1), "monte-carlo", alternative, hits, total, n_permutations, low, high, tol
    )


def gweat_test(
    targets: Any,
    attributes: Any,
    *,
    alternative: str = "greater",
    method: str = "auto",
    n_permutations: int = 100_000,
    rng: Any = None,
) -> tuple[float, GroupPermutation]:
    """Generalized WEAT and its permutation p; for k = 2 the p of :func:`~isoeat.stats.permutation.partition_test`
    on WEAT's scores (the same number as WEAT's p under the same options and seed).

    Examples
    --------
    >>> r = np.random.default_rng(0)
    >>> X = [r.normal(size=(3, 4)) for _ in range(3)]
    >>> A = [r.normal(size=(3, 4)) for _ in range(3)]
    >>> G, perm = gweat_test(X, A, rng=0)
    >>> perm.p_method, perm.n_assignments
    ('exact', 1680)
    """
    S = gweat_scores(targets, attributes)
    sizes = np.array([len(t) for t in targets], dtype=np.float64)
    G = float(np.sum([S[int(sizes[:i].sum()) : int(sizes[: i + 1].sum()), i].mean() for i in range(len(sizes))]))
    if len(targets) == 2:
        n_x = len(targets[0])
        # WEAT's method choice: partition_test's own "auto" (exact, certified or Monte Carlo)
        res = partition_test(
            S[:, 0], n_x, alternative=alternative, method=method, n_permutations=n_permutations, rng=rng
        )
        return G, GroupPermutation(
            float(res.p_value),
            res.p_method,
            alternative,
            int(res.count),
            int(res.n_partitions),
            res.n_permutations,
            float(res.ci_low),
            float(res.ci_high),
            float(res.tolerance),
        )
    perm = group_permutation_test(
        _gweat_batch(S, sizes),
        sizes.astype(int),
        scale=float(np.abs(S).sum()),
        alternative=alternative,
        method=method,
        n_permutations=n_permutations,
        rng=rng,
    )
    return G, perm


def same_test(
    targets: Any, words: Any, *, method: str = "auto", n_permutations: int = 100_000, rng: Any = None
) -> tuple[float, np.ndarray, GroupPermutation]:
    """SAME, its per-word values and its one-sided permutation p (a larger SAME under relabelled groups)."""
    per_word = same_scores(targets, words)
    sizes = np.array([len(t) for t in targets], dtype=np.float64)
    U = np.vstack(_units(targets, "target group"))
    W = unit_rows(np.asarray(words, dtype=np.float64), "attribute words")
    perm = group_permutation_test(
        _same_batch(U, sizes, W),
        sizes.astype(int),
        scale=float(len(targets)),
        alternative="greater",
        method=method,
        n_permutations=n_permutations,
        rng=rng,
    )
    return float(per_word.mean()), per_word, perm
