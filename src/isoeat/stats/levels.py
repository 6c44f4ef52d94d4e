r"""ML-EAT levels of a WEAT (Wolfe, Hiniker & Howe, AIES 2024: the Multilevel Embedding Association Test).

One WEAT of target sets :math:`X, Y` and attribute sets :math:`A, B` is read at three levels:

**Level 1** is the WEAT itself (:func:`isoeat.stats.weat.weat_from_vectors`): :math:`d` and :math:`p` as everywhere
in isoeat.

**Level 2** is the single-target test of :math:`X` (and, alike, of :math:`Y`) over the attribute words. Each
attribute word :math:`a \in A\cup B` gets its mean cosine to the target set,
:math:`m_X(a) = \operatorname{mean}_{x\in X}\cos(\vec x, \vec a)`, and

.. math::

    d_{2,X} = \frac{\operatorname{mean}_{a\in A} m_X(a) - \operatorname{mean}_{b\in B} m_X(b)}
                   {\operatorname{std}_{w\in A\cup B} m_X(w)}\quad(\text{ddof } 1)

— ML-EAT's own Level-2 effect size (``mleat.py``, ``ST_EAT``). Its p-value is the permutation test of that
difference over the partitions of :math:`A\cup B` into :math:`|A|` and :math:`|B|` words
(:func:`isoeat.stats.permutation.partition_test` on the scores :math:`m_X`: the WEAT's partition problem with the
roles of targets and attributes swapped), **two-sided**, exact where the sets are small. ML-EAT instead takes the
smaller one-sided tail of a normal fitted to 1,000 random permutations; isoeat counts (exact or certified, as the
run's ``method`` says) and tests both directions at once, so that "toward A or toward B at alpha" is one test at
level alpha, not two (a one-sided tail chosen after seeing the sign would test at 2 alpha).

**Level 3** is the four blocks of cosines :math:`X\!-\!A, X\!-\!B, Y\!-\!A, Y\!-\!B`: the mean and the SD
(ddof 1, over every pair of the block, as ML-EAT) of each. isoeat adds their scale: each block mean as a z-score
against the model's own random-pair cosine, :math:`z = (\bar c_{block} - \mu_{frame}) / \sigma_{frame}`, with
:math:`\mu_{frame}, \sigma_{frame}` the mean and SD of the pairwise cosines of a frame of the model's
vocabulary in the same space (exact over every pair of the frame for a static model,
:mod:`isoeat.diagnostics.frame_cosine`; over a sample of the reference pool for a contextual one), and states the
rule that flags "cosine cannot discriminate here" (:func:`isoeat.labels.cosine_flat`).

The **pattern** (:func:`isoeat.labels.eat_pattern`) is two letters, Level 2 of X then of Y, each ``A`` (toward A),
``0`` (null) or ``B`` (toward B) at alpha: nine patterns, as ML-EAT's nine EAT patterns.

This module holds the numbers on vectors (:func:`levels_from_vectors`) and the record (:class:`LevelsResult`);
the model-level entry point is :func:`isoeat.eat_levels` (:mod:`isoeat.diagnostics.levels`, which knows frames).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from .._cosine import cosine_matrix
from .._random import stream
from ..labels import cosine_flat, eat_pattern, undefined_reason
from .options import PermutationOptions
from .permutation import partition_test

if TYPE_CHECKING:
    import pandas as pd

    from .results import WEATResult

__all__ = ["BLOCKS", "LEVEL_FIELDS", "LevelsResult", "level2", "level3", "levels_from_vectors"]

#: The four Level-3 blocks, target then attribute.
BLOCKS = ("xa", "xb", "ya", "yb")

#: The JSON/CSV fields of the levels, in order (issue 43): Level 2 of X and Y, Level 3's blocks, the pattern.
LEVEL_FIELDS = ("l2x_d", "l2x_p", "l2y_d", "l2y_p", *(f"l3_{b}_{m}" for b in BLOCKS for m in ("mean", "sd")), "pattern")


@dataclass(frozen=True)
class LevelsResult:
    """The ML-EAT levels of one test in one space.

    Attributes
    ----------
    test, bias_type, model, calibration : str
        What was measured (as :class:`~isoeat.stats.results.WEATResult`).
    effect_size, p_value : float
        Level 1: the WEAT's d and p (its own ``alternative``).
    l2x_d, l2x_p, l2y_d, l2y_p : float
        Level 2: the single-target d of X and of Y over :math:`A\\cup B` and its two-sided permutation p
        (``nan`` where d is undefined: every attribute word equally close to the targets).
    l3_xa_mean, l3_xa_sd, ... : float
        Level 3: mean and SD (ddof 1) of the cosines of each block.
    l3_xa_z, ... : float
        The block mean as a z-score against the frame's random-pair cosine (``nan`` without a frame).
    pattern : str
        Two letters, L2 of X then Y: ``A`` toward A, ``0`` null, ``B`` toward B at ``alpha``; ``-`` undefined.
    cosine_flat : bool or None
        The anisotropy rule (:func:`isoeat.labels.cosine_flat`); ``None`` without a frame.
    frame_mean, frame_sd : float
        The frame's mean and SD of pairwise cosine in this space (``nan`` without a frame).
    frame : str
        Which frame (``""`` without one).
    alpha : float
        The level the pattern was called at.
    l2_p_method : str
        How the Level-2 p-values were computed (``exact``, ``certified``, ``monte-carlo``).
    seed : int or None
        The root seed (a Monte Carlo Level-2 p draws from the streams ``("levels", TEST, "X"|"Y")``).
    """

    test: str
    bias_type: str
    model: str
    calibration: str
    effect_size: float
    p_value: float
    l2x_d: float
    l2x_p: float
    l2y_d: float
    l2y_p: float
    l3_xa_mean: float
    l3_xa_sd: float
    l3_xb_mean: float
    l3_xb_sd: float
    l3_ya_mean: float
    l3_ya_sd: float
    l3_yb_mean: float
    l3_yb_sd: float
    pattern: str
    l3_xa_z: float = math.nan
    l3_xb_z: float = math.nan
    l3_ya_z: float = math.nan
    l3_yb_z: float = math.nan
    cosine_flat: bool | None = None
    frame_mean: float = math.nan
    frame_sd: float = math.nan
    frame: str = ""
    alpha: float = 0.05
    l2_p_method: str = ""
    seed: int | None = None
    block_cosines: dict[str, tuple[tuple[float, ...], ...]] = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The record as a flat dict (the word x word cosines of the blocks left out: :attr:`block_cosines`)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "block_cosines"}  # no deep copy

    def to_frame(self) -> pd.DataFrame:
        """A one-row :class:`pandas.DataFrame` of :meth:`to_dict`."""
        import pandas as pd

        return pd.DataFrame([self.to_dict()])

    @property
    def block_z(self) -> dict[str, float]:
        """The four block z-scores by block name."""
        return {b: float(getattr(self, f"l3_{b}_z")) for b in BLOCKS}


def level2(
    T: np.ndarray,
    A: np.ndarray,
    B: np.ndarray,
    *,
    ddof: int = 1,
    rng: Any = None,
    permutation: PermutationOptions | None = None,
) -> tuple[float, float, str]:
    r"""Level 2 of one target set: ``(d, p, p_method)`` of the single-target test of ``T`` over :math:`A\cup B`.

    :math:`m_T(a) = \operatorname{mean}_{t\in T}\cos(t, a)`;
    :math:`d = (\bar m_T(A) - \bar m_T(B)) / \operatorname{std}_{A\cup B}(m_T)` (``ddof``);
    p two-sided over the partitions of :math:`A\cup B` (``permutation``'s ``method``, budgets and tolerance; its
    ``alternative`` is not used). d and p are ``nan`` where d is undefined (:func:`isoeat.labels.undefined_reason`).

    Examples
    --------
    >>> T = np.array([[1.0, 0.0], [1.0, 0.1]])
    >>> A = np.array([[1.0, 0.0], [1.0, 0.2], [1.0, 0.3]]); B = np.array([[0.0, 1.0], [0.2, 1.0], [0.3, 1.0]])
    >>> d, p, how = level2(T, A, B)
    >>> round(d, 3), p, how  # the 3 A words closest: 2 of the 20 splits (this one and its mirror) reach it
    (1.784, 0.1, 'exact')
    """
    return _level2(cosine_matrix(T, A), cosine_matrix(T, B), ddof, rng, permutation)


def _level2(
    c_a: np.ndarray, c_b: np.ndarray, ddof: int, rng: Any, permutation: PermutationOptions | None
) -> tuple[float, float, str]:
    """:func:`level2` from the cosines of T with A and with B (the Level-3 blocks: computed once)."""
    scores = np.concatenate([c_a.mean(axis=0), c_b.mean(axis=0)])
    n_a = c_a.shape[1]
    sd = float(np.std(scores, ddof=ddof))
    d = float((scores[:n_a].mean() - scores[n_a:].mean()) / sd) if sd > 0 else math.nan
    opts = permutation or PermutationOptions()
    kw = {**opts.kwargs(), "alternative": "two-sided"}
    p, how, tol = _kept_p(scores, n_a, rng, kw)
    ranked = np.sort(scores)
    why = undefined_reason(d, "sc-weat", float(ranked[-n_a:].sum() - ranked[:n_a].sum()), tol, n_a)
    return (math.nan, math.nan, how) if why else (d, p, how)


def _kept_p(scores: np.ndarray, n_a: int, rng: Any, kw: dict[str, Any]) -> tuple[float, str, float]:
    """``(p, p_method, tolerance)`` of :func:`partition_test`; a count (exact or certified: no random draw) that took
    :data:`~isoeat.stats._certified.CACHE_SECONDS` or more is kept in the installed bracket store
    (:func:`~isoeat.stats._certified.bracket_store`, the embedding cache in every command) under every input byte
    for byte and the digest of isoeat's code, as the certified brackets are: an exact Level-2 p of 25 + 25
    attribute words takes about 1.5 s to count, and a run asks for the same ones again."""
    import hashlib
    import json
    import time

    from .._records import canonical_json
    from ._certified import CACHE_SECONDS, bracket_store

    store = bracket_store()
    key = None
    if store is not None and kw.get("method") != "monte-carlo":
        key = {
            "levels-l2": 1,
            "values": hashlib.sha256(np.ascontiguousarray(scores).tobytes()).hexdigest(),
            "n": int(scores.size),
            "n_x": int(n_a),
            "code": store.code(),
            "options": canonical_json({k: v for k, v in kw.items() if v is not None}),
        }
        found = store.get(key)
        if found is not None:
            try:
                p, how, tol = json.loads(str(found))
                return float.fromhex(p), str(how), float.fromhex(tol)
            except (ValueError, TypeError):  # not a record this code wrote: computed again
                pass
    t0 = time.perf_counter()
    perm = partition_test(scores, n_a, rng=rng, **kw)
    out = (float(perm.p_value), perm.p_method, float(perm.tolerance))
    if key is not None and perm.p_method != "monte-carlo":
        record = json.dumps([out[0].hex(), out[1], out[2].hex()])
        if time.perf_counter() - t0 >= CACHE_SECONDS:
            store.put(key, record)
        elif hasattr(store, "keep"):  # a quick count: kept in the batch's bundle only (stats._bundle)
            store.keep(key, record)
    return out


def level3(T: np.ndarray, U: np.ndarray) -> tuple[float, float, np.ndarray]:
    """Level 3 of one block: ``(mean, SD with ddof 1, cosines)`` of the cosines of every row of ``T`` with every
    row of ``U``.

    Examples
    --------
    >>> m, sd, c = level3(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 0.0]]))
    >>> m, round(sd, 4), c.shape
    (0.5, 0.7071, (2, 1))
    """
    return _level3(cosine_matrix(T, U))


def _level3(c: np.ndarray) -> tuple[float, float, np.ndarray]:
    return float(c.mean()), float(np.std(c, ddof=1)), c


def levels_from_vectors(
    X: np.ndarray,
    Y: np.ndarray,
    A: np.ndarray,
    B: np.ndarray,
    level1: WEATResult,
    *,
    alpha: float = 0.05,
    frame: tuple[str, float, float] | None = None,
    rng: Any = None,
    permutation: PermutationOptions | None = None,
) -> LevelsResult:
    r"""The three ML-EAT levels of a test whose WEAT (Level 1) is ``level1``, from its four sets of vectors.

    Parameters
    ----------
    X, Y, A, B : ndarray of shape (n, dim)
        The vectors ``level1`` was computed from (calibrated if it was).
    level1 : WEATResult
        Level 1; its labels, ``ddof`` and ``seed`` are the levels' too.
    alpha : float, default 0.05
        The level of the pattern's calls (:func:`isoeat.labels.eat_pattern`).
    frame : (name, mean, sd), optional
        The frame's mean and SD of pairwise cosine in this space: the Level-3 z-scores and the
        anisotropy rule (:func:`isoeat.labels.cosine_flat`). None: both left out (``nan``, ``None``).
    rng : None, int or Generator
        Root seed of a sampled Level-2 p (streams ``("levels", TEST, "X")`` and ``("levels", TEST, "Y")``).
    permutation : PermutationOptions, optional
        How the Level-2 p-values are computed (its ``alternative`` is replaced by ``"two-sided"``).

    Examples
    --------
    >>> from isoeat.stats.weat import weat_from_vectors
    >>> X = np.array([[1.0, 0.1], [1.0, 0.2]]); Y = np.array([[0.1, 1.0], [0.2, 1.0]])
    >>> A = np.array([[1.0, 0.0], [1.0, 0.05]]); B = np.array([[0.0, 1.0], [0.05, 1.0]])
    >>> lv = levels_from_vectors(X, Y, A, B, weat_from_vectors(X, Y, A, B, rng=0), rng=0)
    >>> lv.pattern, round(lv.l2x_d, 3), round(lv.l3_xa_mean, 3)  # 4 attribute words: p = 2/6 at best
    ('00', 1.73, 0.991)
    """
    ddof = int(level1.ddof)
    test = level1.test
    # the four blocks' cosines, once: Level 3's blocks and Level 2's per-attribute means
    cos = {b: cosine_matrix(X if b[0] == "x" else Y, A if b[1] == "a" else B) for b in BLOCKS}
    l2 = {}
    for side in ("x", "y"):
        seed = rng if isinstance(rng, np.random.Generator) else stream(rng, "levels", test, side.upper())[0]
        l2[side] = _level2(cos[f"{side}a"], cos[f"{side}b"], ddof, seed, permutation)
    l3 = {b: _level3(cos[b]) for b in BLOCKS}
    z: dict[str, float] = {b: math.nan for b in BLOCKS}
    flat = None
    name, mu, sigma = frame if frame is not None else ("", math.nan, math.nan)
    if frame is not None:
        z = {b: (l3[b][0] - mu) / sigma if sigma > 0 else math.nan for b in BLOCKS}
        flat = cosine_flat([z[b] for b in BLOCKS])
    kw: dict[str, Any] = {f"l3_{b}_{m}": l3[b][i] for b in BLOCKS for i, m in enumerate(("mean", "sd"))}
    kw.update({f"l3_{b}_z": z[b] for b in BLOCKS})
    return LevelsResult(
        test=test,
        bias_type=level1.bias_type,
        model=level1.model,
        calibration=level1.calibration,
        effect_size=float(level1.effect_size),
        p_value=float(level1.p_value),
        l2x_d=l2["x"][0],
        l2x_p=l2["x"][1],
        l2y_d=l2["y"][0],
        l2y_p=l2["y"][1],
        pattern=eat_pattern(l2["x"][0], l2["x"][1], l2["y"][0], l2["y"][1], alpha),
        cosine_flat=flat,
        frame_mean=float(mu),
        frame_sd=float(sigma),
        frame=name,
        alpha=float(alpha),
        l2_p_method=l2["x"][2] if l2["x"][2] == l2["y"][2] else f"{l2['x'][2]}/{l2['y'][2]}",
        seed=level1.seed if isinstance(level1.seed, int) else None,
        block_cosines={b: tuple(map(tuple, l3[b][2].tolist())) for b in BLOCKS},  # Python floats, row by row
        **kw,
    )


def level_fields() -> tuple[str, ...]:
    """Every field of :class:`LevelsResult` that :meth:`LevelsResult.to_dict` writes, in order."""
    return tuple(f.name for f in fields(LevelsResult) if f.name != "block_cosines")
