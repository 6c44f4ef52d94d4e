r"""Sensitivity of a calibrated WEAT to the choices the paper fixed (§6.3).

The paper estimates its whitening with :math:`\varepsilon = 10^{-3}` on
100,000 reference vectors from one corpus and names all three choices as
limitations. :func:`sensitivity_analysis` re-runs the calibrated WEAT battery
while varying one choice at a time around that **default setting**

* ``eps``: the regulariser :math:`\varepsilon` (absolute, or relative to the
  mean eigenvalue :math:`\operatorname{tr}\Sigma/d` of the reference sample);
* ``reference_size``: the number :math:`n` of reference vectors;
* ``reference``: the reference source (vocabulary top, or a text whose words
  are taken by frequency);
* ``calibration`` (opt-in): another correction of anisotropy (``center``,
  ``abtt``, ...), fitted on the same reference samples,

and reports, per test, how far d moves and how often the significance call
agrees with the default.

Sampling rule
-------------
A reference **source** is ``"top"`` — the model's own reference sample
(``model.reference_vectors(n)``: the n most frequent vocabulary rows of
static vectors; the encoder's corpus for contextual encoders) — or a text
path (``reference_vectors(n, text=PATH)``: for static vectors, the n most
frequent in-vocabulary words of that text). ``draw`` says how repeat
:math:`r` obtains a reference sample of size :math:`n`:

* ``"bootstrap"`` (default for static vectors): a **pool** is taken once per
  source, the first :math:`P = \max(n_{default}, \max \text{reference\_sizes})`
  reference vectors (capped at what the source has; a note and one warning
  say so). Repeat :math:`r` draws one index sequence over the pool,
  uniformly *with* replacement, with its own seed; the sample of size n is
  its first n entries. Each sample is thus an i.i.d. draw of size n from
  the pool's empirical distribution, so even :math:`n = P` varies across
  repeats (what another reference sample of the same size from the same
  population could have given).
* ``"subset"``: as bootstrap, but the sequence is a random permutation of the
  pool (samples *without* replacement; at :math:`n = P` every repeat is the
  whole pool and the draws do not vary).
* ``"encoder"`` (default for contextual encoders, i.e. models with
  ``reference_batches``): the sample is ``model.reference_vectors(n,
  seed=s_r)`` — the encoder re-samples n reference *sentences* with the
  repeat's seed and returns their vectors (n counts what the encoder's n
  counts: sentences).
* ``"fixed"``: no randomness — the sample is ``model.reference_vectors(n)``,
  as ``isoeat run --reference-size n`` uses; repeats would be identical, so
  only one is run.

Within a repeat, samples of different sizes are nested (bootstrap, subset)
and the ε sweep reuses one sample: common random numbers, so the curves show
the effect of the setting and the bands the effect of the draw.

The **default setting** is fitted deterministically as ``isoeat run`` does:
``fit_calibrator(model, calibration, n_reference=n_default, eps=eps_default)``
on the default source (paper §4.1: ZCA, ε = 1e-3, the 100,000 most frequent
vocabulary items). Every sweep cell is compared with it.

Relative ε (``eps_mode="relative"``) is the calibrator's own ``eps_mode``: fitted on
each reference sample it adds :math:`\varepsilon \cdot \bar\lambda` (the mean
eigenvalue, :math:`\operatorname{tr}\Sigma/d`; recorded as ``eps_effective``). The
default setting stays absolute.

Randomness
----------
``rng`` is the root seed (None: a fresh one, recorded). Repeat ``r`` of
source ``s`` draws its reference sample from the named stream
``("reference-draw", s, r)``, and test ``t`` its permutations from
``("weat", t)`` (:func:`isoeat._random.derive_seed`) — the stream
``isoeat run`` and :func:`isoeat.weat` use, so the raw and default rows are
the cells of ``isoeat run`` with the same settings. A test uses the same
permutations in every cell (common random numbers: Monte Carlo noise does not
masquerade as a change between settings). Both seeds are recorded in every
row, and the result is reproducible for a seed.

Verdict
-------
A test is **robust** when its significance call (:math:`p < \alpha`) agrees
with the default in at least ``agreement_threshold`` (default 90%) of the
sweep's cells (settings × repeats) and no cell's d departs from the default d
by more than ``max_shift`` (default 0.5, the paper's large-shift threshold);
otherwise **fragile**, with the failing criterion named. Both bounds are
inclusive (a share equal to ``agreement_threshold`` and a shift equal to
``max_shift`` pass); ``p == alpha`` is not significant; a cell with an
undefined d fails the shift criterion. The rule is implemented, as small pure
functions, in :mod:`isoeat.experiments._verdicts`; the result records live in
:mod:`isoeat.experiments._sensitivity_records` (re-exported here).
"""

from __future__ import annotations

import math
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .._errors import ConfigError, IsoeatFileNotFoundError, IsoeatWarning
from .._random import derive_seed, root_seed
from ..calibration._base import EPS_MODES  # one home of the modes
from ._sensitivity_records import (  # noqa: F401 (KINDS, TestSensitivity re-exported)
    KINDS,
    SWEEP_KINDS,
    SensitivityResult,
    SensitivityRow,
    TestSensitivity,
)
from ._verdicts import _summarise, agrees, is_significant

__all__ = [
    "sensitivity_analysis",
    "SensitivityResult",
    "SensitivityRow",
    "TestSensitivity",
    "DEFAULT_EPS_GRID",
    "DEFAULT_REFERENCE_SIZES",
    "DEFAULT_REPEATS",
    "DEFAULT_PERMUTATIONS",
    "DEFAULT_EXACT_MAX_N",
    "SWEEP_KINDS",
    "DRAWS",
]

#: ε values swept by default (paper: 1e-3).
DEFAULT_EPS_GRID: tuple[float, ...] = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)
#: reference sample sizes swept by default (paper: 100,000).
DEFAULT_REFERENCE_SIZES: tuple[int, ...] = (1_000, 3_000, 10_000, 30_000, 100_000)
#: reference draws per setting.
DEFAULT_REPEATS = 10
#: the most cells a sweep may hold (settings x repeats; each a calibrator fit and every test measured), checked
#: before a cell is made: the default sweep holds 110
MAX_SWEEP_CELLS = 10_000
#: Monte Carlo permutations where p is not exact.
DEFAULT_PERMUTATIONS = 10_000
#: p is counted exactly when |X| + |Y| <= this (W4–W10 on the built-in battery; W1–W3 Monte Carlo).
DEFAULT_EXACT_MAX_N = 40

DRAWS = ("auto", "bootstrap", "subset", "encoder", "fixed")
TOP = "top"


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


def _floats(values: Any, name: str) -> tuple[float, ...]:
    if values is None:
        return ()
    if isinstance(values, (int, float, np.integer, np.floating)) and not isinstance(values, bool):
        values = (values,)
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise ConfigError(f"{name}: every value must be a number > 0, got {v!r}")
        if not math.isfinite(float(v)) or float(v) <= 0:
            raise ConfigError(f"{name}: ε must be a finite number > 0, got {v!r}")
        out.append(float(v))
    return tuple(dict.fromkeys(out))


def _ints(values: Any, name: str, minimum: int = 2) -> tuple[int, ...]:
    if values is None:
        return ()
    if isinstance(values, (int, np.integer)) and not isinstance(values, bool):
        values = (values,)
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
            raise ConfigError(f"{name}: every value must be a whole number >= {minimum}, got {v!r}")
        out.append(int(v))
    return tuple(dict.fromkeys(out))


def _sources(values: Any, name: str) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, (str, Path)):
        values = (values,)
    out = []
    for v in values:
        s = str(v).strip()
        if not s:
            raise ConfigError(f"{name}: empty reference name (use 'top' or a text path)")
        if s != TOP:
            reference_text(s, name)
        out.append(s)
    return tuple(dict.fromkeys(out))


def reference_text(path: str, option: str) -> None:
    """A reference text given by ``option``: an existing regular file; one line saying what it is otherwise
    (missing, a folder, a FIFO), never "no such" for what exists."""
    from .._textio import check_regular_file

    if not os.path.lexists(path):
        raise IsoeatFileNotFoundError(f"{option}: {path}: no such reference text (use 'top' or a text path)")
    try:
        check_regular_file(path, what="reference text (a text file, or 'top')")
    except IsoeatFileNotFoundError as exc:
        raise IsoeatFileNotFoundError(f"{option}: {exc}") from None


def _check_choice(value: Any, name: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ConfigError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def _check_unit(value: Any, name: str, lo_open: bool = True, hi_open: bool = True) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number, got {value!r}") from None
    ok = (v > 0 if lo_open else v >= 0) and (v < 1 if hi_open else v <= 1)
    if not ok:
        raise ConfigError(f"{name} must lie in {'(' if lo_open else '['}0, 1{')' if hi_open else ']'}, got {value!r}")
    return v


# ---------------------------------------------------------------------------
# the analysis
# ---------------------------------------------------------------------------


@dataclass
class _Cell:
    kind: str
    setting: str
    source: str
    n_requested: int
    repeat: int
    calibration: str
    eps: float  # nominal; nan when the calibration has no eps
    eps_mode: str


def _label_eps(e: float) -> str:
    return f"{e:g}"


def sensitivity_analysis(
    model: Any,
    tests: Sequence[Any] | None = None,
    *,
    calibration: str = "zca",
    calibration_params: dict[str, Any] | None = None,
    eps: Sequence[float] | None = DEFAULT_EPS_GRID,
    eps_mode: str = "absolute",
    reference_sizes: Sequence[int] | None = DEFAULT_REFERENCE_SIZES,
    references: Sequence[str] | None = None,
    calibrations: Sequence[str] | None = None,
    repeats: int = DEFAULT_REPEATS,
    draw: str = "auto",
    default_eps: float = 1e-3,
    default_size: int = 100_000,
    default_reference: str = TOP,
    alpha: float = 0.05,
    rng: Any = 0,
    n_permutations: int = DEFAULT_PERMUTATIONS,
    exact_max_n: int | None = DEFAULT_EXACT_MAX_N,
    method: str = "auto",
    alternative: str = "greater",
    ddof: int = 1,
    min_coverage: float = 0.8,
    agreement_threshold: float = 0.9,
    max_shift: float = 0.5,
    progress: Callable[[int, int, str], None] | None = None,
) -> SensitivityResult:
    r"""Robustness of calibrated WEAT results to ε, reference size and reference corpus.

    Parameters
    ----------
    model : Encoder
        Anything with ``lookup``, ``reference_vectors(n, text=...)``, ``name``
        and ``fingerprint`` (e.g. ``isoeat.load_model("glove-6b-50d")``).
    tests : sequence of AssociationTest or ids, optional
        Default: the ten built-in WEATs.
    calibration : str, default "zca"
        The calibration whose robustness is analysed (any registered name).
    calibration_params : dict, optional
        Its parameters other than ε (e.g. ``{"n_components": 2}`` for abtt).
    eps : sequence of float or None, default ``DEFAULT_EPS_GRID`` (1e-6 … 1e-1)
        ε values (> 0). Empty or None: no ε sweep. Skipped, with a note, for a
        calibration without ε.
    eps_mode : {"absolute", "relative"}
        ``"relative"``: each ε is multiplied by the mean eigenvalue
        :math:`\operatorname{tr}\Sigma/d` of the reference sample.
    reference_sizes : sequence of int or None, default 1,000 … 100,000
        Reference sample sizes (>= 2). Sizes beyond the pool are capped (note
        and warning).
    references : sequence of str, optional
        Reference sources to compare, each ``"top"`` (the model's own reference) or a text
        path; fitted at ``default_size`` and ``default_eps``. Default: none.
    calibrations : sequence of str, optional
        Other registered calibrations to compare at the default size (their
        default parameters; ε = ``default_eps`` where they take one).
    repeats : int, default 10
        Reference draws per setting (see the module's sampling rule).
    draw : {"auto", "bootstrap", "subset", "encoder", "fixed"}, default "auto"
        How a repeat draws its reference sample (module docstring); "auto"
        is "encoder" for contextual encoders and "bootstrap" otherwise.
    default_eps, default_size, default_reference
        The default setting (paper: 1e-3, 100,000, vocabulary top).
    alpha : float, default 0.05
        Significance level of the agreement and the verdict.
    rng : None or int, default 0
        Root seed (see Randomness in the module docstring).
    n_permutations : int, default 10,000
        Monte Carlo sample size where p is not exact.
    exact_max_n : int or None, default 40
        Count p exactly when :math:`|X|+|Y|` is at most this (``None``: the
        library default, exact up to 50 — about 1–2 s per test and cell for
        W1/W2). Monte Carlo otherwise.
    method, alternative, ddof, min_coverage
        As in :func:`isoeat.weat`.
    agreement_threshold : float, default 0.9
    max_shift : float, default 0.5
        The verdict rule (module docstring).
    progress : callable, optional
        ``progress(done, total, label)`` after each reference sample.

    Returns
    -------
    SensitivityResult

    Examples
    --------
    >>> import isoeat
    >>> from isoeat.experiments.sensitivity import sensitivity_analysis
    >>> m = isoeat.load_model("glove-6b-50d")                     # doctest: +SKIP
    >>> res = sensitivity_analysis(m, ["W6", "W9"], repeats=2)    # doctest: +SKIP
    >>> res.verdicts()                                            # doctest: +SKIP
    {'W6': 'robust', 'W9': 'fragile'}
    """
    from ..calibration import fit_calibrator, make_calibrator
    from ..stats.permutation import exact_cost
    from ..stats.weat import weat
    from ..wordsets import get_test, resolve_tests

    t0 = time.perf_counter()
    # -- validation ---------------------------------------------------------
    if tests is None:
        tests = resolve_tests(None)
    tests = [get_test(t) if isinstance(t, str) else t for t in tests]
    if not tests:
        raise ConfigError("no tests given")
    params = dict(calibration_params or {})
    if "eps" in params or "eps_mode" in params:  # eps_mode there would turn the absolute cells relative unsaid
        raise ConfigError("calibration_params: give ε as default_eps (and the sweep as eps, its mode as eps_mode), "
                          "not as a parameter")
    probe = make_calibrator(calibration, **params)
    has_eps = "eps" in probe.get_params()
    eps_grid = _floats(eps, "eps")
    _check_choice(eps_mode, "eps_mode", EPS_MODES)
    sizes = _ints(reference_sizes, "reference_sizes")
    sources = _sources(references, "references")
    others = tuple(dict.fromkeys(str(c) for c in (calibrations or ())))
    for name in others:
        make_calibrator(name)  # unknown names fail here, with suggestions
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ConfigError(f"repeats must be a whole number >= 1, got {repeats!r}")
    settings = len(eps_grid) + len(sizes) + len(sources) + len(others)
    if settings * repeats > MAX_SWEEP_CELLS:  # before a cell, a seed or a fit is made
        raise ConfigError(f"repeats={repeats} (--repeats) x {settings} settings make {settings * repeats:,} cells, each a "
                          f"calibrator fit with every test measured; at most {MAX_SWEEP_CELLS:,}: use at most "
                          f"{max(1, MAX_SWEEP_CELLS // max(settings, 1)):,} repeats, or fewer settings")
    _check_choice(draw, "draw", DRAWS)
    (default_eps,) = _floats((default_eps,), "default_eps")
    (default_size,) = _ints((default_size,), "default_size")
    (default_reference,) = _sources((default_reference,), "default_reference")
    alpha = _check_unit(alpha, "alpha")
    agreement_threshold = _check_unit(agreement_threshold, "agreement_threshold", lo_open=False, hi_open=False)
    try:
        max_shift = float(max_shift)
    except (TypeError, ValueError):
        raise ConfigError(f"max_shift must be a number > 0, got {max_shift!r}") from None
    if not (math.isfinite(max_shift) and max_shift > 0):
        raise ConfigError(f"max_shift must be a finite number > 0, got {max_shift!r}")
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, (int, np.integer)) or n_permutations < 1:
        raise ConfigError(f"n_permutations must be a whole number >= 1, got {n_permutations!r}")
    p_kwargs: dict[str, Any] = {}
    if exact_max_n is not None:
        if isinstance(exact_max_n, bool) or not isinstance(exact_max_n, (int, np.integer)) or exact_max_n < 2:
            raise ConfigError(f"exact_max_n must be None or a whole number >= 2, got {exact_max_n!r}")
        p_kwargs["exact_budget"] = exact_cost(int(exact_max_n), int(exact_max_n) // 2)
    notes: list[str] = []
    if draw == "auto":
        draw = "encoder" if hasattr(model, "reference_batches") else "bootstrap"
    if draw == "fixed" and repeats > 1:
        notes.append(f"draw='fixed' is deterministic: {repeats} repeats would be identical, so 1 is run")
        repeats = 1
    if eps_grid and not has_eps:
        notes.append(f"calibration {calibration!r} has no ε: the ε sweep was skipped")
        eps_grid = ()
    if others and calibration not in others:
        others = (calibration, *others)  # the analysed calibration as the kind's own baseline

    # -- the cells ----------------------------------------------------------
    cells: list[_Cell] = []
    nan = float("nan")
    for e in eps_grid:
        for r in range(repeats):
            cells.append(_Cell("eps", _label_eps(e), default_reference, default_size, r, calibration, e, eps_mode))
    for n in sizes:
        for r in range(repeats):
            cells.append(_Cell("reference_size", str(n), default_reference, n, r, calibration,
                               default_eps if has_eps else nan, "absolute" if has_eps else ""))
    for s in sources:
        for r in range(repeats):
            cells.append(_Cell("reference", s, s, default_size, r, calibration,
                               default_eps if has_eps else nan, "absolute" if has_eps else ""))
    for c in others:
        c_eps = "eps" in make_calibrator(c).get_params()
        for r in range(repeats):
            cells.append(_Cell("calibration", c, default_reference, default_size, r, c,
                               default_eps if c_eps else nan, "absolute" if c_eps else ""))
    if not cells:
        raise ConfigError(
            "empty sweep: give at least one ε (eps), reference size (reference_sizes), reference source "
            "(references) or calibration (calibrations)"
        )

    # -- seeds --------------------------------------------------------------
    if rng is not None and (isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0):
        raise ConfigError(f"rng (seed) must be None or a non-negative int, got {rng!r}")
    seed = root_seed(rng)  # every draw and every p comes from its own named stream of it (isoeat._random)
    all_sources = tuple(dict.fromkeys((default_reference, *sources)))
    draw_seeds = {(s, r): derive_seed(seed, "reference-draw", s, str(r)) for s in all_sources for r in range(repeats)}
    test_seeds = [seed] * len(tests)  # weat() draws test t's permutations from the stream (weat, t)

    stat_kw = dict(method=method, n_permutations=int(n_permutations), alternative=alternative, ddof=ddof,
                   min_coverage=min_coverage, **p_kwargs)

    # -- raw and default ----------------------------------------------------
    def ref_kw(source: str) -> dict[str, Any]:
        return {} if source == TOP else {"text": source}

    default_cal = fit_calibrator(model, calibration, n_reference=default_size,
                                 reference_kwargs=ref_kw(default_reference),
                                 **params, **({"eps": default_eps} if has_eps else {}))
    n_default_used = int(default_cal.n_samples_seen_)
    if n_default_used < default_size:
        notes.append(f"default reference {default_reference!r}: asked for {default_size:,} vectors, "
                     f"{n_default_used:,} available; the default was fitted on {n_default_used:,}")
    raw_res = [weat(model, t, rng=test_seeds[i], **stat_kw) for i, t in enumerate(tests)]
    def_res = [weat(model, t, calibration=default_cal, rng=test_seeds[i], **stat_kw) for i, t in enumerate(tests)]

    # -- reference samples ---------------------------------------------------
    # pool modes index into one pool per source; call modes ask the model for each sample
    needed: dict[str, int] = {}
    for c in cells:
        needed[c.source] = max(needed.get(c.source, 0), c.n_requested)
    pools: dict[str, np.ndarray] = {}
    capped: set[str] = set()

    def cap_note(source: str, got: int, asked: int) -> None:
        if source in capped:
            return
        capped.add(source)
        msg = (f"reference {source!r}: {got:,} vectors available; reference sizes above that "
               f"(asked up to {asked:,}) were capped at {got:,}")
        notes.append(msg)
        warnings.warn(msg, IsoeatWarning, stacklevel=3)

    if draw in ("bootstrap", "subset"):
        for s, n in needed.items():
            vecs, _desc = model.reference_vectors(n, **ref_kw(s))
            pools[s] = np.ascontiguousarray(vecs, dtype=np.float64)
            if vecs.shape[0] < n:
                cap_note(s, vecs.shape[0], n)
    call_cache: dict[tuple[str, int, int], np.ndarray] = {}

    def sample(source: str, n: int, r: int) -> tuple[np.ndarray, int | None]:
        if draw in ("fixed", "encoder"):
            seed_r = draw_seeds[(source, r)] if draw == "encoder" else None
            key = (source, n, r if draw == "encoder" else 0)
            if key not in call_cache:
                kw = {**ref_kw(source), **({"seed": seed_r} if seed_r is not None else {})}
                call_cache[key] = np.asarray(model.reference_vectors(n, **kw)[0], dtype=np.float64)
                if call_cache[key].shape[0] < n:
                    cap_note(source, call_cache[key].shape[0], needed[source])
            return call_cache[key], seed_r
        pool = pools[source]
        seed_r = draw_seeds[(source, r)]
        g = np.random.default_rng(seed_r)
        m = pool.shape[0]
        if draw == "bootstrap":
            idx = g.integers(0, m, size=min(needed[source], m))
        else:
            idx = g.permutation(m)
        return pool[idx[:n]], seed_r

    # -- sweep: one reference sample per (source, n, repeat) ------------------
    groups: dict[tuple[str, int, int], list[int]] = {}
    for i, c in enumerate(cells):
        n_eff = min(c.n_requested, pools[c.source].shape[0]) if pools else c.n_requested
        groups.setdefault((c.source, n_eff, c.repeat), []).append(i)
    cell_out: dict[int, tuple[list[Any], float, int, int | None]] = {}
    fit_notes: dict[str, None] = {}
    total = len(groups)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1]))  # repeat, source, n
    for done, ((source, n_eff, r), members) in enumerate(ordered, 1):
        X, ref_seed = sample(source, n_eff, r)
        cache: dict[tuple[str, float, str], tuple[list[Any], float]] = {}
        for i in members:
            c = cells[i]
            key = (c.calibration, c.eps, c.eps_mode)
            if key not in cache:
                cparams = dict(params) if c.calibration == calibration else {}
                if not math.isnan(c.eps):
                    # a relative eps is the calibrator's eps_mode (one rule: calibration._base.effective_eps)
                    cparams.update(eps=c.eps, **({"eps_mode": "relative"} if c.eps_mode == "relative" else {}))
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", IsoeatWarning)
                    cal = make_calibrator(c.calibration, **cparams).fit(X)
                for w in caught:
                    if issubclass(w.category, IsoeatWarning):
                        fit_notes[f"{c.calibration} on {n_eff:,} reference vectors: {w.message}"] = None
                    else:  # pragma: no cover - pass foreign warnings through
                        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
                cal.metadata_ = {"model_fingerprint": getattr(model, "fingerprint", None)}
                res = [weat(model, t, calibration=cal, rng=test_seeds[j], **stat_kw) for j, t in enumerate(tests)]
                cache[key] = (res, float(getattr(cal, "eps_", c.eps)))
            cell_out[i] = (*cache[key], int(X.shape[0]), ref_seed)
        if progress:
            progress(done, total, f"{source} n={n_eff:,} repeat {r}")
    notes.extend(fit_notes)

    # -- rows -----------------------------------------------------------------
    model_name = getattr(model, "name", "")
    rows: list[SensitivityRow] = []

    def make_row(j: int, res: Any, kind: str, setting: str, eps_nom: float, mode: str, eps_eff: float,
                 reference: str, n_req: int, n_used: int, drw: str, rep: int, ref_seed: int | None,
                 cal_name: str) -> SensitivityRow:
        d0 = def_res[j]
        sig = is_significant(res.p_value, alpha)
        return SensitivityRow(
            model=model_name, calibration=cal_name, test=res.test, bias_type=res.bias_type, kind=kind,
            setting=setting, value=_value(kind, eps_nom, n_req), eps=float(eps_nom), eps_mode=mode, eps_effective=float(eps_eff), reference=reference,
            n_requested=int(n_req), n_reference=int(n_used), draw=drw, repeat=int(rep),
            effect_size=float(res.effect_size), statistic=float(res.statistic), p_value=float(res.p_value),
            p_method=res.p_method, n_permutations=int(res.n_permutations), p_ci_low=float(res.p_ci_low),
            p_ci_high=float(res.p_ci_high), significant=sig, agrees_with_default=agrees(res.p_value, d0.p_value, alpha),
            delta_d=float(res.effect_size - d0.effect_size), reference_seed=ref_seed, seed=res.seed,
            n_x=res.n_x, n_y=res.n_y, n_a=res.n_a, n_b=res.n_b,
        )

    d_eps = default_eps if has_eps else nan
    d_mode = "absolute" if has_eps else ""
    for j in range(len(tests)):
        rows.append(make_row(j, raw_res[j], "raw", "none", nan, "", nan, "", 0, 0, "", 0, None, "none"))
        rows.append(make_row(j, def_res[j], "default", "default", d_eps, d_mode, d_eps, default_reference,
                             default_size, n_default_used, "fixed", 0, None, calibration))
        for i, c in enumerate(cells):
            res_list, eps_eff, n_used, ref_seed = cell_out[i]
            rows.append(make_row(j, res_list[j], c.kind, c.setting, c.eps, c.eps_mode, eps_eff, c.source,
                                 c.n_requested, n_used, draw, c.repeat, ref_seed, c.calibration))

    summary = tuple(_summarise(rows, t.id, alpha, agreement_threshold, max_shift) for t in tests)
    rule = (
        f"robust when the significance call (p < {alpha:g}) agrees with the default in at least "
        f"{agreement_threshold:.0%} of the sweep's cells (settings x repeats) and no cell's d departs from the "
        f"default d by more than {max_shift:g}; otherwise fragile"
    )
    return SensitivityResult(
        model=model_name,
        calibration=calibration,
        calibration_params=params,
        alpha=alpha,
        default={"calibration": calibration, "eps": d_eps, "eps_mode": "absolute", "n_reference": default_size,
                 "n_reference_used": n_default_used, "reference": default_reference, "draw": "fixed"},
        sweep={"eps": list(eps_grid), "eps_mode": eps_mode, "reference_sizes": list(sizes),
               "references": list(sources), "calibrations": list(others), "repeats": int(repeats), "draw": draw,
               "pool_sizes": {s: int(p.shape[0]) for s, p in pools.items()}},
        seed=seed,
        rule=rule,
        agreement_threshold=agreement_threshold,
        max_shift=max_shift,
        rows=tuple(rows),
        summary=summary,
        notes=tuple(notes),
        calibrator_metadata=dict(getattr(default_cal, "metadata_", {}) or {}),
        p_options={"method": method, "n_permutations": int(n_permutations), "exact_max_n": exact_max_n,
                   "alternative": alternative, "ddof": ddof, "test_seeds": dict(zip((t.id for t in tests),
                                                                                     test_seeds))},
        elapsed_s=float(time.perf_counter() - t0),
    )


def _value(kind: str, eps: float, n: int) -> float:
    if kind == "eps":
        return float(eps)
    if kind == "reference_size":
        return float(n)
    return float("nan")
