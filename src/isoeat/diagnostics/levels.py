r"""ML-EAT levels of a test on a model, raw beside calibrated, with Level 3 on the model's own scale.

:func:`eat_levels` runs the WEAT (Level 1, :func:`isoeat.weat`, the same numbers), looks up the four sets once,
and computes Levels 2 and 3 (:mod:`isoeat.stats.levels`) in the raw space and, when a calibration is asked for,
in the calibrated one. Level 3's z-scores need the model's random-pair cosine in each space: the exact mean and
SD of the pairwise cosines of a frame (:func:`isoeat.diagnostics.anisotropy.compare_anisotropy`, frame ``paper``
by default: the vocabulary items of the reference corpus for a static model, summed exactly; the reference
sample for a contextual one) — the figures of the isotropy check of ``isoeat run``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._surface import public, require_encoder
from ..labels import check_alpha
from ..stats.levels import LevelsResult, levels_from_vectors
from ..stats.options import PermutationOptions, gather

if TYPE_CHECKING:
    from ..stats.results import WEATResult
    from ..wordsets import AssociationTest

__all__ = ["eat_levels", "frame_label", "frame_moments", "levels_of"]


def frame_moments(
    model: Any, calibration: Any, frame: str = "paper", rng: Any = 0, n_reference: int = 100_000
) -> list[tuple[str, float, float]]:
    """``(frame, mean, sd)`` of the model's pairwise cosine, raw and (with ``calibration``, a fitted calibrator)
    calibrated: the isotropy check's figures (exact over the frame where it is summed; a contextual model's frame
    ``paper`` is a sample of its reference pool of ``n_reference`` vectors, the calibrator's own where sizes agree)."""
    from .anisotropy import compare_anisotropy

    res = compare_anisotropy(model, calibration, rng=rng, frame=frame, n_reference=n_reference)
    return [
        (frame_label(r.frame, r.cosine_method, r.frame_size, r.n_samples), float(r.mean_cosine), float(r.sd_cosine))
        for r in res
    ]


def frame_label(frame: str, method: str, size: Any, n_samples: Any) -> str:
    """The frame as the levels name it: its name and how its mean and SD were obtained (exact over every pair of
    its vectors, or over a sample of them)."""
    if method == "exact":
        return f"{frame} (exact over every pair of its {int(size):,} vectors)"
    return f"{frame} (over {int(n_samples):,} sampled vectors)"


def levels_of(
    model: Any,
    tests: Sequence[AssociationTest],
    level1: Sequence[Sequence[WEATResult]],
    calibrator: Any = None,
    *,
    alpha: float = 0.05,
    frames: Sequence[tuple[str, float, float]] | None = None,
    rng: Any = None,
    permutation: PermutationOptions | None = None,
    min_coverage: float = 0.8,
) -> list[list[LevelsResult]]:
    """The levels of each test in each space (``level1[space][i]`` the WEAT of ``tests[i]``: space 0 raw,
    space 1 calibrated by ``calibrator``), per space as ``level1``; ``frames`` per space (None: no z-scores)."""
    from .._types import name_of
    from ..stats._bundle import bundled

    # the Level-2 counts kept in the bracket store, read as one bundle (the same records, one file)
    with bundled("levels", [name_of(model), [t.id for t in tests]]):
        return _levels_of(model, tests, level1, calibrator, alpha, frames, rng, permutation, min_coverage)


def _levels_of(
    model: Any,
    tests: Sequence[AssociationTest],
    level1: Sequence[Sequence[WEATResult]],
    calibrator: Any,
    alpha: float,
    frames: Sequence[tuple[str, float, float]] | None,
    rng: Any,
    permutation: PermutationOptions | None,
    min_coverage: float,
) -> list[list[LevelsResult]]:
    from ..stats.weat import _lookup_sets

    out: list[list[LevelsResult]] = [[] for _ in level1]
    for i, test in enumerate(tests):
        vecs = _lookup_sets(model, test, min_coverage)[0]
        for s, results in enumerate(level1):
            v = vecs if s == 0 or calibrator is None else {r: calibrator.transform(m) for r, m in vecs.items()}
            out[s].append(
                levels_from_vectors(
                    v["X"],
                    v["Y"],
                    v["A"],
                    v["B"],
                    results[i],
                    alpha=alpha,
                    frame=None if frames is None else frames[s],
                    rng=rng,
                    permutation=permutation,
                )
            )
    return out


@public
def eat_levels(
    model: Any,
    test: AssociationTest | str,
    *,
    calibration: Any = None,
    alpha: float = 0.05,
    frame: str | None = "paper",
    rng: Any = None,
    force: bool = False,
    n_reference: int = 100_000,
    permutation: PermutationOptions | None = None,
    **options: Any,
) -> tuple[LevelsResult, ...]:
    r"""The ML-EAT levels of one test (Wolfe, Hiniker & Howe 2024), raw and, with ``calibration``, calibrated.

    Level 1 is :func:`isoeat.weat` (the same d and p); Level 2 the single-target test of X and of Y over
    :math:`A\cup B` (d with ddof 1, two-sided exact permutation p); Level 3 the mean and SD of the four cosine
    blocks X–A, X–B, Y–A, Y–B, each mean also as a z-score
    :math:`z = (\bar c_{block} - \mu_{frame})/\sigma_{frame}` against the model's random-pair cosine. See
    :mod:`isoeat.stats.levels` for the formulas and where they follow or depart from ML-EAT.

    Parameters
    ----------
    model : Encoder
        E.g. ``isoeat.load_model("glove-6b-50d")``.
    test : AssociationTest or str
        A test or its id (``"W6"``) or a test file of one test.
    calibration : None, str or fitted calibrator
        As in :func:`isoeat.weat`; fitted once here for both the WEAT and the frame.
    alpha : float, default 0.05
        The level of the pattern's calls (:func:`isoeat.labels.eat_pattern`; p < alpha, strict).
    frame : str or None, default "paper"
        The frame of the random-pair cosine (:func:`isoeat.compare_anisotropy`'s ``frame``); None: no z-scores
        and no anisotropy rule.
    rng : None or int
        The root seed (None: a fresh one, recorded): the WEAT's stream ``("weat", TEST)``, the frame sample's
        ``("anisotropy", FRAME)``, a sampled Level-2 p's ``("levels", TEST, "X"|"Y")``.
    force : bool, default False
        Apply a calibrator fitted on another model.
    n_reference : int, default 100_000
        Reference vectors of a calibration fitted here (by name), and of a contextual model's frame pool.
    permutation : PermutationOptions, optional
        How the p-values are computed (Level 2 always two-sided).
    **options
        The other keywords of :func:`isoeat.weat` (``ddof``, ``min_coverage``, ``allow_overlap``, ``method``,
        ``alternative``, ...).

    Returns
    -------
    tuple of LevelsResult
        ``(raw,)`` or ``(raw, calibrated)``; ``pattern`` and :func:`isoeat.labels.pattern_changed` compare them.

    Examples
    --------
    >>> import isoeat  # doctest: +SKIP
    >>> m = isoeat.load_model("glove-6b-50d")  # doctest: +SKIP
    >>> raw, zca = isoeat.eat_levels(m, "W2", calibration="zca", rng=0)  # doctest: +SKIP
    >>> raw.pattern, zca.pattern  # doctest: +SKIP
    ('A0', 'AB')
    """
    from .._random import stream
    from ..stats.weat import resolve_calibration, weat
    from ..wordsets import as_test

    alpha = check_alpha(alpha)
    own = ("ddof", "min_coverage", "allow_overlap")  # weat's own keywords; the rest are option-object fields
    permutation, interval, _ = gather(
        {k: v for k, v in options.items() if k not in own},
        where="eat_levels",
        permutation=permutation,
        takes=("permutation", "interval"),
        others=own,
    )
    require_encoder(model, "eat_levels")
    test = as_test(test)
    cal = resolve_calibration(calibration, model, force=force, n_reference=n_reference)[0]
    root = stream(rng)[1]
    weat_kw = {k: options[k] for k in own if k in options}
    level1 = [
        [weat(model, test, calibration=c, rng=root, force=force, permutation=permutation, interval=interval, **weat_kw)]
        for c in ([None] if cal is None else [None, cal])
    ]
    frames = None if frame is None else frame_moments(model, cal, frame, rng=root, n_reference=n_reference)
    out = levels_of(
        model,
        [test],
        level1,
        cal,
        alpha=alpha,
        frames=frames,
        rng=root,
        permutation=permutation,
        min_coverage=options.get("min_coverage", 0.8),
    )
    return tuple(space[0] for space in out)
