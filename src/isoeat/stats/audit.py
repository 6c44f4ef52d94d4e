r"""Leave-one-out influence of each word on a WEAT (issue 43, the word-list audit).

A WEAT :math:`d` is one number over four word sets. For every word :math:`w`
of :math:`X, Y, A, B` the test is recomputed without it,

.. math::

    d_{-w} = d(X \setminus w,\, Y \setminus w,\, A \setminus w,\, B \setminus w),
    \qquad \Delta_w = d_{-w} - d,

with the same :math:`s`, ``ddof`` and permutation options as the full test
(:func:`~isoeat.stats.weat.weat_from_vectors` on the reduced matrices: the
definition, not an update formula), and its p-value. Two flags say whether the
word carries the call: ``sign_change`` (:math:`d_{-w}` and :math:`d` of
opposite signs: :func:`isoeat.labels.opposite_signs`) and
``significance_change`` (:func:`isoeat.labels.is_significant` at ``alpha``
differs between the full test and the test without :math:`w`).

Bounded work: one p per left-out word, chosen by its size alone. Where the
reduced test has at most :data:`LOO_EXACT_PARTITIONS` equal-size partitions
(:math:`\binom{n}{n_x}`; the 8-word tests W6-W10), its p is exact. Otherwise
it is a Monte Carlo estimate of at most :data:`LOO_PERMUTATIONS` random
partitions, drawn :data:`LOO_BATCH` at a time and stopped once its
Clopper–Pearson interval lies clear of ``alpha`` (``sequential_alpha``): the
significance flag is what it is for, and an exact or certified p of every
word of a 25-word test costs about 0.1-1 s each (W1 on GloVe: 99 words). Where
the interval never leaves ``alpha`` (p within its width of ``alpha``: which
side p lies on, and so the flag, would be a coin toss), that word's p is
computed as the full test's is (by default ``method="auto"``: counted, exact
or certified). ``p_method`` says which. Each left-out word draws from its own named stream
``("weat-loo", TEST, ROLE, WORD)`` of the root seed, the same in every space.
A set of two words keeps one without the word: no WEAT set, so that row is
``nan`` and its ``note`` says why.

With an integer seed and the bracket store installed
(:func:`~isoeat.stats._certified.bracket_store`: the embedding cache of every
command), one test's left-out rows are kept by content (every input byte for
byte, the seed and the digest of isoeat's code) and read back the next time:
the same rows, without the reduced tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from .._errors import CoverageError
from .._random import stream
from ..labels import is_significant, opposite_signs
from .options import PermutationOptions, ResultLabels
from .results import WEATResult
from .weat import weat_from_vectors

__all__ = [
    "LeaveOneOut",
    "leave_one_out",
    "loo_options",
    "ROLES",
    "LOO_PERMUTATIONS",
    "LOO_EXACT_PARTITIONS",
    "LOO_BATCH",
]

ROLES = ("X", "Y", "A", "B")
#: Largest Monte Carlo sample of a left-out word's p (a reduced test of more than LOO_EXACT_PARTITIONS partitions).
LOO_PERMUTATIONS = 10_000
#: Largest partition count of a reduced test whose p is counted exactly.
LOO_EXACT_PARTITIONS = 20_000
#: Random partitions per batch of a left-out Monte Carlo p (the sequential stop is checked after each).
LOO_BATCH = 256


def loo_options(permutation: PermutationOptions, alpha: float, n: int, n_x: int) -> PermutationOptions:
    """The options of a left-out word's p for a reduced test of ``n`` target words, ``n_x`` of them in X: exact
    where it has at most :data:`LOO_EXACT_PARTITIONS` partitions, else Monte Carlo of at most
    :data:`LOO_PERMUTATIONS` partitions, stopped once clear of ``alpha``.

    Examples
    --------
    >>> loo_options(PermutationOptions(), 0.05, 16, 8).method, loo_options(PermutationOptions(), 0.05, 49, 24).method
    ('exact', 'monte-carlo')
    """
    from dataclasses import replace

    if math.comb(n, n_x) <= LOO_EXACT_PARTITIONS:
        return replace(permutation, method="exact", sequential_alpha=None)
    return replace(
        permutation,
        method="monte-carlo",
        sequential_alpha=alpha,
        batch_size=LOO_BATCH,
        n_permutations=min(permutation.n_permutations, LOO_PERMUTATIONS),
    )


@dataclass(frozen=True)
class LeaveOneOut:
    """The test without one word: its d and p beside the full test's, and whether the call changes.

    Attributes
    ----------
    test, model, calibration : str
        As in :class:`~isoeat.stats.results.WEATResult`.
    role : str
        ``"X"``, ``"Y"``, ``"A"`` or ``"B"``: the set the word was left out of.
    word : str
        The word (as the test spells it).
    effect_size, p_value : float
        :math:`d_{-w}` and its p (``nan``: not computed, see ``note``).
    p_method : str
        How that p was computed (``exact``, ``certified``, ``monte-carlo``).
    delta : float
        :math:`d_{-w} - d`.
    sign_change, significance_change : bool
        :math:`d_{-w}` and :math:`d` of opposite signs; significance at ``alpha`` differs.
    full_effect_size, full_p_value, alpha : float
        The full test's d and p, and the level of ``significance_change``.
    note : str
        Why a row holds no numbers (empty otherwise).
    """

    test: str
    model: str
    calibration: str
    role: str
    word: str
    effect_size: float
    p_value: float
    p_method: str
    delta: float
    sign_change: bool
    significance_change: bool
    full_effect_size: float
    full_p_value: float
    alpha: float
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The record as a flat, JSON-ready dict (the field order; every field a scalar, so no deep copy)."""
        return {name: getattr(self, name) for name in _LOO_FIELDS}

    def to_frame(self) -> Any:
        """The record as a one-row :class:`pandas.DataFrame` (needs pandas)."""
        from .results import records_frame

        return records_frame([self.to_dict()])


_LOO_FIELDS = tuple(f.name for f in fields(LeaveOneOut))


def leave_one_out(
    vectors: dict[str, np.ndarray],
    words: dict[str, list[str]],
    full: WEATResult,
    *,
    alpha: float = 0.05,
    rng: Any = None,
    permutation: PermutationOptions | None = None,
) -> tuple[LeaveOneOut, ...]:
    r""":math:`d_{-w}` and its p for every word of the four sets, in the order X, Y, A, B.

    Parameters
    ----------
    vectors : dict
        ``{"X": (n_x, dim), "Y": ..., "A": ..., "B": ...}``: the vectors the full test used (calibrated if it was).
    words : dict
        The words of each row of ``vectors`` (the found words, in row order).
    full : WEATResult
        The full test (its ``ddof``, ``alternative``, labels, d and p).
    alpha : float, default 0.05
        Level of ``significance_change`` (:func:`isoeat.labels.is_significant`: ``p < alpha``).
    rng : None or int
        The root seed; word ``w`` of role ``R`` draws from ``("weat-loo", TEST, R, w)``.
    permutation : PermutationOptions, optional
        The full test's options (default: its ``alternative`` and the default method); each left-out p is computed
        as :func:`loo_options` says.

    Returns
    -------
    tuple of LeaveOneOut

    Examples
    --------
    >>> X = np.array([[1.0, 0.1], [1.0, 0.2], [1.0, 0.3]]); Y = np.array([[0.1, 1.0], [0.2, 1.0], [0.3, 1.0]])
    >>> A = np.array([[1.0, 0.0], [1.0, 0.05]]); B = np.array([[0.0, 1.0], [0.05, 1.0]])
    >>> v = {"X": X, "Y": Y, "A": A, "B": B}
    >>> w = {"X": ["x1", "x2", "x3"], "Y": ["y1", "y2", "y3"], "A": ["a1", "a2"], "B": ["b1", "b2"]}
    >>> rows = leave_one_out(v, w, weat_from_vectors(X, Y, A, B, rng=0), rng=0)
    >>> len(rows), rows[0].word, rows[-1].note
    (10, 'x1', 'set B keeps 1 word without it: no WEAT set')
    """
    perm = permutation or PermutationOptions(alternative=full.alternative)
    _, root = stream(rng, "weat-loo")
    d0, p0 = float(full.effect_size), float(full.p_value)
    key = _store_key(vectors, words, full, perm, alpha, root) if isinstance(rng, (int, np.integer)) else None
    kept = _kept(key)
    read_back = bool(kept)
    out: list[LeaveOneOut] = []
    for role in ROLES:
        for i, word in enumerate(words[role]):
            if kept:  # read back: no stream drawn from, no reduced test
                r = kept.pop(0)
            else:
                seed = stream(root, "weat-loo", full.test, role, word)[0] if root is not None else rng
                r = _without(vectors, role, i, full, perm, seed, alpha)
            base: dict[str, Any] = dict(
                test=full.test,
                model=full.model,
                calibration=full.calibration,
                role=role,
                word=word,
                full_effect_size=d0,
                full_p_value=p0,
                alpha=float(alpha),
            )
            if isinstance(r, str):  # no WEAT without the word: said in the row, never raised
                out.append(
                    LeaveOneOut(
                        **base,
                        effect_size=math.nan,
                        p_value=math.nan,
                        p_method="",
                        delta=math.nan,
                        sign_change=False,
                        significance_change=False,
                        note=r,
                    )
                )
                continue
            d, p = float(r.effect_size), float(r.p_value)
            out.append(
                LeaveOneOut(
                    **base,
                    effect_size=d,
                    p_value=p,
                    p_method=r.p_method,
                    delta=d - d0,
                    sign_change=bool(opposite_signs(d, d0)),
                    significance_change=is_significant(p, alpha) != is_significant(p0, alpha),
                    note=r.undefined or "",
                )
            )
    if not read_back:
        _keep(key, out)
    return tuple(out)


class _Kept:
    """A left-out test read back from the store: the fields :func:`leave_one_out` reads of a WEATResult."""

    def __init__(self, d: float, p: float, how: str, undefined: str) -> None:
        self.effect_size, self.p_value, self.p_method, self.undefined = d, p, how, undefined


def _store_key(
    vectors: dict[str, np.ndarray],
    words: dict[str, list[str]],
    full: WEATResult,
    perm: PermutationOptions,
    alpha: float,
    root: Any,
) -> dict[str, Any] | None:
    """The key of one test's left-out rows in the installed bracket store
    (:func:`~isoeat.stats._certified.bracket_store`, the embedding cache): every input byte for byte (the vectors,
    the words, the full d and p, ``ddof``, ``alpha``, the options, the root seed) and the digest of isoeat's code,
    as the certified brackets and the Level-2 counts are kept; None without a store."""
    import hashlib
    from dataclasses import asdict

    from .._records import canonical_json
    from ._certified import bracket_store

    store = bracket_store()
    if store is None:
        return None
    h = hashlib.sha256()
    for r in ROLES:
        v = np.ascontiguousarray(vectors[r], dtype=np.float64)
        h.update(repr(v.shape).encode())
        h.update(v.tobytes())
    return {
        "audit-loo": 1,
        "vectors": h.hexdigest(),
        "words": [list(words[r]) for r in ROLES],
        "test": full.test,
        "full": [float(full.effect_size).hex(), float(full.p_value).hex(), int(full.ddof)],
        "alpha": float(alpha).hex(),
        "root": int(root),
        "options": canonical_json({k: v for k, v in asdict(perm).items() if v is not None}),
        "code": store.code(),
    }


def _kept(key: dict[str, Any] | None) -> list[Any]:
    """The rows kept under ``key`` (in :func:`leave_one_out`'s order), or ``[]``."""
    import json

    from ._certified import bracket_store

    store = bracket_store()
    found = None if key is None or store is None else store.get(key)
    if found is None:
        return []
    try:
        return [
            (str(r[0]) if len(r) == 1 else _Kept(float.fromhex(r[0]), float.fromhex(r[1]), str(r[2]), str(r[3])))
            for r in json.loads(str(found))
        ]
    except (ValueError, TypeError, IndexError, AttributeError):  # not a record this code wrote: computed again
        return []


def _keep(key: dict[str, Any] | None, rows: list[LeaveOneOut]) -> None:
    """Keep ``rows``' numbers under ``key`` (a row without a test: its note alone)."""
    import json

    from ._certified import bracket_store

    store = bracket_store()
    if key is None or store is None:
        return
    recs = [[r.note] if not r.p_method else [r.effect_size.hex(), r.p_value.hex(), r.p_method, r.note] for r in rows]
    store.put(key, json.dumps(recs))


def _without(
    vectors: dict[str, np.ndarray],
    role: str,
    i: int,
    full: WEATResult,
    perm: PermutationOptions,
    seed: Any,
    alpha: float,
) -> WEATResult | str:
    """The WEAT without row ``i`` of set ``role``, or why there is none (a set left with one word)."""
    keep = {r: (np.delete(vectors[r], i, axis=0) if r == role else vectors[r]) for r in ROLES}
    if keep[role].shape[0] < 2:
        return f"set {role} keeps {keep[role].shape[0]} word without it: no WEAT set"
    n_x, n = keep["X"].shape[0], keep["X"].shape[0] + keep["Y"].shape[0]
    opts = loo_options(perm, alpha, n, n_x)
    try:
        r = _reduced(keep, full, seed, opts)
        if opts.method == "monte-carlo" and r.p_method == "monte-carlo" and r.p_ci_low <= alpha <= r.p_ci_high:
            # its interval never left alpha: p is computed as the full test's is (by default counted: exact, else
            # certified), so that the side of alpha it lies on, the significance flag, is not a coin toss
            from dataclasses import replace

            r = _reduced(keep, full, seed, replace(perm, sequential_alpha=None))
        return r
    except CoverageError as exc:
        return str(exc)


def _reduced(keep: dict[str, np.ndarray], full: WEATResult, seed: Any, opts: PermutationOptions) -> WEATResult:
    return weat_from_vectors(keep["X"], keep["Y"], keep["A"], keep["B"], ddof=full.ddof, rng=seed,
                             permutation=opts, labels=ResultLabels(test=full.test))
