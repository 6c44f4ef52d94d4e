r"""CEAT's interval over the contexts: a bootstrap over each word's context sentences.

Guo & Caliskan's (2021) CES, SE, 95% interval and p are those of a
random-effects combination of :math:`N` draws *from the contexts at hand*:
their interval covers the CES that infinitely many draws from **these**
contexts would give (the *draw-level* estimand). A corpus is itself a sample
of the contexts in which each word occurs, and another sample of sentences
gives another CES; the draw-level SE (0.015 in one reported case) is far
smaller than the spread over samples of the corpus (0.140). This module gives
the interval on the *context-level* estimand, the CES of the published
procedure applied to the population of each word's contexts.

**Bootstrap over each word's contexts** (Efron & Tibshirani 1993, ch. 13,
percentile interval). Replicate :math:`b = 1, \dots, B`:

1. for every word :math:`w` of X, Y, A, B with contexts :math:`c_{w,1..n_w}`,
   resample :math:`n_w - 1` of them with replacement (a word with a single context
   keeps it: the interval cannot cover the sampling of that word's context);
2. draw :math:`N` times one context per word from the resampled sets
   (uniform, as the published draws);
3. compute :math:`\mathrm{CES}^*_b` by the published procedure (each draw's
   :math:`d_i`, its variance :math:`v_i`, DerSimonian–Laird).

Why :math:`n_w - 1`: a resample of size :math:`n` from :math:`n` contexts has
:math:`(n-1)/n` of their spread, so the plain bootstrap's interval is too
narrow where words have few contexts (measured coverage 0.875 at 2 contexts per
word, 0.900 at 3); a resample of :math:`n - 1` makes the variance of a word's
mean over its contexts :math:`s^2/n`, that of the sample (the factor
:math:`\sqrt{(n-1)/n}` of the bootstrap SE of a mean: Efron & Tibshirani 1993,
ch. 5). It errs on the safe side at 2 contexts per word
(measured 0.975) and changes nothing material at 20.

The :math:`(1-\alpha)` interval is the :math:`\alpha/2` and
:math:`1-\alpha/2` quantiles of :math:`\mathrm{CES}^*_{1..B}` (``numpy``'s
linear interpolation); ``se`` is their SD. The words are fixed (the test's
word lists), the contexts random. Raw and calibrated spaces are resampled with
the same indices (paired), from the stream ``("ceat-contexts", TEST)``.

**B = 1,000 by default**: the Monte Carlo error of a 2.5% quantile of
:math:`B` replicates is about :math:`\sqrt{0.025 \cdot 0.975 / B}/f`; at
1,000 it moves the interval's coverage by under 0.5 percentage point
(Efron & Tibshirani 1993, §19.3, recommend 1,000 or more for percentile
intervals), and it costs :math:`B` times the work of the published draws
(a few seconds for W1–W10's sizes at N = 1,000). The work
:math:`B \cdot N \cdot (n_X + n_Y)(n_A + n_B)` is checked against
:data:`CONTEXT_WORK` before anything is computed.

**Coverage.** ``benchmarks/ceat_coverage.py`` draws contexts afresh from a
synthetic model whose context-level CES is known and counts how often each
interval holds it (target 0.93–0.97 for this one; measured 0.952 ± 0.017
over 600 samples of 20 contexts per word, where the draw-level interval held
it 0.528 of the time; 0.975 and 0.950 ± 0.039 over 120 samples of 2 and 3
contexts per word, 2026-12-07).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .._cosine import unit_rows
from .._errors import ConfigError
from .._random import resolve_seed
from .._validate import check_int, check_real

__all__ = ["DEFAULT_CONTEXT_BOOTSTRAP", "CONTEXT_WORK", "ContextInterval", "check_context_work", "context_bootstrap"]

#: Bootstrap replicates of the contexts interval (``isoeat ceat --bootstrap``; 0: none).
DEFAULT_CONTEXT_BOOTSTRAP = 1000
#: Largest B x N x (n_X + n_Y) x (n_A + n_B) (cosines gathered) of a contexts bootstrap: minutes on 2 cores.
CONTEXT_WORK = 2e10

_ROLES = ("X", "Y", "A", "B")


@dataclass(frozen=True)
class ContextInterval:
    """The contexts interval on one space's CES (module docstring).

    Attributes
    ----------
    low, high : float
        The percentile interval over the bootstrap replicates.
    level : float
        Its confidence level.
    se : float
        SD of the replicates' CES.
    n_boot : int
        Replicates the interval was taken over: :math:`B`, less any whose CES is undefined (left out).
    method : str
        ``"percentile"``.
    """

    low: float
    high: float
    level: float
    se: float
    n_boot: int
    method: str = "percentile"

    def to_dict(self) -> dict[str, Any]:
        """Plain fields, each prefixed ``contexts_`` as in a CEAT record."""
        return {f"contexts_{k}": v for k, v in asdict(self).items()}


def check_context_work(
    n_boot: int, n_draws: int, n_targets: int, n_attributes: int, budget: float | None = None
) -> None:
    """Refuse a contexts bootstrap over ``budget`` (:data:`CONTEXT_WORK`, read at call time) gathered cosines.

    Examples
    --------
    >>> check_context_work(1000, 1000, 16, 16)  # W6's sizes: 2.6e8, within the budget
    """
    budget = CONTEXT_WORK if budget is None else budget
    work = float(n_boot) * n_draws * n_targets * n_attributes
    if work > budget:
        raise ConfigError(
            f"CEAT: a contexts bootstrap of {n_boot} replicates x {n_draws} draws of "
            f"{n_targets} targets x {n_attributes} attributes gathers {work:.2g} cosines, over the "
            f"{budget:.2g} budget (stats.ceat_contexts.CONTEXT_WORK); ask for fewer --bootstrap "
            "replicates or --draws, or --bootstrap 0 for the draw-level interval alone"
        )


class _Space:
    """One space's target x attribute context cosines, computed once (the replicates gather from them)."""

    def __init__(self, sets: Mapping[str, Sequence[np.ndarray]]):
        self.offsets: dict[str, np.ndarray] = {}
        units = {}
        for role in _ROLES:
            counts = np.array([a.shape[0] for a in sets[role]], dtype=np.int64)
            units[role] = unit_rows(np.vstack(sets[role]), "CEAT context vectors")
            self.offsets[role] = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.offsets["Y"] = self.offsets["Y"] + units["X"].shape[0]  # targets stacked X then Y
        targets = np.vstack([units["X"], units["Y"]])
        self.cos = {r: targets @ units[r].T for r in ("A", "B")}

    def scores(self, picks: Mapping[str, np.ndarray]) -> np.ndarray:
        """``(N, n_X + n_Y)`` association scores of the draws ``picks`` (role -> (N, words) context indices)."""
        t = np.concatenate([picks["X"] + self.offsets["X"], picks["Y"] + self.offsets["Y"]], axis=1)
        s = self._mean(self.cos["A"], t, picks["A"] + self.offsets["A"])
        s -= self._mean(self.cos["B"], t, picks["B"] + self.offsets["B"])
        return s

    @staticmethod
    def _mean(cos: np.ndarray, t: np.ndarray, a: np.ndarray) -> np.ndarray:
        """``mean_j cos[t[n, i], a[n, j]]`` for every draw n and target i, by one flat gather."""
        flat = (t * cos.shape[1])[:, :, None] + a[:, None, :]
        return np.take(cos.ravel(), flat).sum(axis=2) / a.shape[1]


def _replicate(sizes: Mapping[str, Sequence[int]], n_draws: int, gen: np.random.Generator) -> dict[str, np.ndarray]:
    """One replicate's draws: each word's contexts resampled with replacement, then N uniform draws from them.

    Word ``j`` with ``n_j`` contexts: ``pool_j`` = ``m_j = max(n_j - 1, 1)`` indices uniform on ``range(n_j)``
    (step 1: the resample of size ``n_j - 1``, module docstring), then ``N`` positions uniform on
    ``range(m_j)`` into ``pool_j`` (step 2); all words in two calls of ``gen``.
    """
    n = np.concatenate([np.asarray(sizes[r], dtype=np.int64) for r in _ROLES])
    m = np.maximum(n - 1, 1)
    start = np.concatenate([[0], np.cumsum(m)[:-1]])
    pool = np.floor(gen.random(int(m.sum())) * np.repeat(n, m)).astype(np.int64)
    pos = np.floor(gen.random((n_draws, n.size)) * m).astype(np.int64)
    flat = pool[start + pos]  # (N, words): context index of each word in each draw
    cols = np.cumsum([0] + [len(sizes[r]) for r in _ROLES])
    return {r: flat[:, cols[k] : cols[k + 1]] for k, r in enumerate(_ROLES)}


def context_bootstrap(
    spaces: Sequence[Mapping[str, Sequence[np.ndarray]]],
    *,
    n_draws: int,
    n_boot: int,
    statistic: Callable[[np.ndarray, int], float],
    rng: Any = None,
    level: float = 0.95,
) -> list[ContextInterval]:
    """The contexts interval of each space's CES, every space resampled with the same indices.

    Parameters
    ----------
    spaces : sequence of mapping role -> list of ndarray (n_contexts, dim)
        Each space's contexts (raw, then calibrated), the words in the same order in every space.
    n_draws : int
        Draws per replicate (the published run's N).
    n_boot : int
        Replicates :math:`B` (>= 2).
    statistic : callable ``(s, n_x) -> float``
        The published CES of one replicate's association scores ``s`` (``(N, n_X + n_Y)``, X first):
        :func:`isoeat.stats.ceat.ceat_from_contexts` passes its own, with its ``ddof`` and ``variance``
        (NaN: no CES, the replicate left out).
    rng : None, int, Generator or SeedSequence
        The replicates' stream.
    level : float, default 0.95
        Confidence level.

    Returns
    -------
    list of ContextInterval
        One per space, in order.
    """
    n_boot = check_int("n_boot", n_boot, lo=2)
    n_draws = check_int("n_draws", n_draws, lo=2)
    level = check_real("level", level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    if not spaces:
        return []
    sizes = {r: [int(a.shape[0]) for a in spaces[0][r]] for r in _ROLES}
    n_x = len(sizes["X"])
    check_context_work(n_boot, n_draws, n_x + len(sizes["Y"]), len(sizes["A"]) + len(sizes["B"]))
    prepared = [_Space(s) for s in spaces]
    gen, _ = resolve_seed(rng)
    ces = np.empty((len(prepared), n_boot))
    for b in range(n_boot):
        picks = _replicate(sizes, n_draws, gen)
        for k, space in enumerate(prepared):
            ces[k, b] = statistic(space.scores(picks), n_x)
    alpha = (1.0 - level) / 2.0
    out = []
    for row in ces:
        row = row[np.isfinite(row)]
        if row.size < 2:
            out.append(ContextInterval(math.nan, math.nan, level, math.nan, n_boot))
            continue
        lo, hi = np.quantile(row, [alpha, 1.0 - alpha])
        out.append(ContextInterval(float(lo), float(hi), level, float(np.std(row, ddof=1)), int(row.size)))
    return out
