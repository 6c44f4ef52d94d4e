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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError, IsoeatFileNotFoundError, IsoeatWarning
from .._progress import progress_callback
from .._random import root_seed
from .._surface import public, require_encoder
from .._types import name_of, streams_reference
from .._validate import check_choice, check_int, check_real
from ..calibration._base import EPS_MODES  # one home of the modes
from ..calibration.sample import ReferenceSpec
from ..stats.options import PermutationOptions, gather
from ._sensitivity_checks import (  # noqa: F401 - the defaults, re-exported here (their public home)
    DEFAULT_EPS_GRID,
    DEFAULT_EXACT_MAX_N,
    DEFAULT_PERMUTATIONS,
    DEFAULT_REFERENCE_SIZES,
    DEFAULT_REPEATS,
    DRAWS,
    MAX_SWEEP_CELLS,
    check_draw,
)
from ._sensitivity_records import (  # noqa: F401 (KINDS, TestSensitivity re-exported)
    KINDS,
    SWEEP_KINDS,
    SensitivityResult,
    SensitivityRow,
    TestSensitivity,
)
from ._sensitivity_rows import _rows
from ._verdicts import _summarise

__all__ = [
    "sensitivity_analysis",
    "Sweep",
    "Baseline",
    "VerdictRule",
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

# the defaults live in ._sensitivity_checks (light: `isoeat sensitivity --help` loads no numpy)
TOP = "top"


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


def _many(values: Any, scalar: tuple[type, ...]) -> tuple[Any, ...]:
    """``values`` as a tuple (None: empty; one value of a ``scalar`` type: a tuple of it)."""
    if values is None:
        return ()
    if isinstance(values, scalar) and not isinstance(values, bool):
        return (values,)
    return tuple(values)


def _floats(values: Any, name: str) -> tuple[float, ...]:
    """Finite numbers > 0 (ε values), each once, in order."""
    vals = _many(values, (int, float, np.integer, np.floating))
    return tuple(dict.fromkeys(check_real(name, v, lo=0.0, lo_open=True) for v in vals))


def _ints(values: Any, name: str, minimum: int = 2) -> tuple[int, ...]:
    """Whole numbers >= ``minimum`` (reference sizes), each once, in order."""
    return tuple(dict.fromkeys(check_int(name, v, lo=minimum) for v in _many(values, (int, np.integer))))


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


# ---------------------------------------------------------------------------
# the options
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Sweep:
    """What is varied around the default setting, one choice at a time (module docstring).

    ``eps`` (ε values > 0; empty: no ε sweep) in ``eps_mode``, ``reference_sizes``
    (>= 2), ``references`` (sources: ``"top"`` or a text path), ``calibrations``
    (other registered calibrations at the default size), ``repeats`` reference
    draws per setting, ``draw`` (``"auto"``, ``"bootstrap"``, ``"subset"``,
    ``"encoder"``, ``"fixed"``).
    """

    eps: tuple[float, ...] = DEFAULT_EPS_GRID
    eps_mode: str = "absolute"
    reference_sizes: tuple[int, ...] = DEFAULT_REFERENCE_SIZES
    references: tuple[str, ...] = ()
    calibrations: tuple[str, ...] = ()
    repeats: int = DEFAULT_REPEATS
    draw: str = "auto"


@dataclass(frozen=True)
class Baseline:
    """The default setting every sweep cell is compared with (paper §4.1: ZCA, ε = 1e-3, the top 100,000).

    ``params``: the calibration's parameters other than ε.
    """

    calibration: str = "zca"
    params: Mapping[str, Any] = field(default_factory=dict)
    eps: float = 1e-3
    size: int = 100_000
    reference: str = TOP


@dataclass(frozen=True)
class VerdictRule:
    """The robust/fragile rule (module docstring): significance at ``alpha``, agreement share, largest shift."""

    alpha: float = 0.05
    agreement_threshold: float = 0.9
    max_shift: float = 0.5


#: The flat keywords of :func:`sensitivity_analysis` and the option object field each sets.
FLAT = {
    **{f.name: ("sweep", f.name) for f in fields(Sweep)},
    "calibration": ("baseline", "calibration"), "calibration_params": ("baseline", "params"),
    "default_eps": ("baseline", "eps"), "n_reference": ("baseline", "size"),
    "default_reference": ("baseline", "reference"),
    **{f.name: ("rule", f.name) for f in fields(VerdictRule)},
}
#: The p-value keywords it takes besides :class:`~isoeat.stats.options.PermutationOptions`' fields.
_P_EXTRA = ("exact_max_n", "ddof", "min_coverage")


def _options(objects: dict[str, Any], permutation: Any, options: dict[str, Any]) -> tuple[Any, ...]:
    """The option objects with the flat keywords merged in, and the p options (:func:`isoeat.weat` keywords)."""
    from ..stats.permutation import exact_cost

    kinds = {"sweep": Sweep, "baseline": Baseline, "rule": VerdictRule}
    given: dict[str, dict[str, Any]] = {k: {} for k in kinds}
    for name in [n for n in options if n in FLAT]:
        kind, fld = FLAT[name]
        given[kind][fld] = options.pop(name)
    out: dict[str, Any] = {}
    for kind, cls in kinds.items():
        obj = objects.get(kind)
        if obj is not None and not isinstance(obj, cls):
            raise ConfigError(f"sensitivity_analysis: {kind} must be a {cls.__name__}, got {type(obj).__name__}")
        base: Any = obj or cls()
        out[kind] = replace(base, **given[kind])
    extra = {k: options.pop(k) for k in _P_EXTRA if k in options}
    p, _, _ = gather(options, where="sensitivity_analysis", permutation=permutation, takes=("permutation",),
                     others=(*FLAT, *_P_EXTRA))
    if "n_permutations" not in options and permutation is None:
        p = replace(p, n_permutations=DEFAULT_PERMUTATIONS)
    exact_max_n = extra.pop("exact_max_n", DEFAULT_EXACT_MAX_N)
    if exact_max_n is not None:
        exact_max_n = check_int("exact_max_n", exact_max_n, lo=2)
        p = replace(p, exact_budget=exact_cost(exact_max_n, exact_max_n // 2))
    check_int("n_permutations", p.n_permutations, lo=1)
    return out["sweep"], out["baseline"], out["rule"], p, extra, exact_max_n


@dataclass(frozen=True)
class _Plan:
    """The validated sweep: what the cells are made of."""

    eps: tuple[float, ...]
    sizes: tuple[int, ...]
    sources: tuple[str, ...]
    others: tuple[str, ...]
    repeats: int
    draw: str
    has_eps: bool
    params: dict
    notes: tuple[str, ...]
    calibration: str = "zca"
    eps_mode: str = "absolute"


def _validated(model: Any, sweep: Sweep, base: Baseline, rule: VerdictRule) -> tuple[_Plan, Baseline, VerdictRule]:
    """Every option checked once, with one-line errors naming it; the plan's notes (skipped sweeps, one repeat)."""
    from ..calibration import make_calibrator

    params = dict(base.params or {})
    if "eps" in params or "eps_mode" in params:  # eps_mode there would turn the absolute cells relative unsaid
        raise ConfigError("calibration_params: give ε as default_eps (and the sweep as eps, its mode as eps_mode), "
                          "not as a parameter")
    has_eps = "eps" in make_calibrator(base.calibration, **params).get_params()
    eps_grid = _floats(sweep.eps, "eps")
    check_choice("eps_mode", sweep.eps_mode, EPS_MODES)
    sizes = _ints(sweep.reference_sizes, "reference_sizes")
    sources = _sources(sweep.references, "references")
    others = tuple(dict.fromkeys(str(c) for c in (sweep.calibrations or ())))
    for name in others:
        make_calibrator(name)  # unknown names fail here, with suggestions
    repeats = check_int("repeats", sweep.repeats, lo=1)
    settings = len(eps_grid) + len(sizes) + len(sources) + len(others)
    if settings * repeats > MAX_SWEEP_CELLS:  # before a cell, a seed or a fit is made
        raise ConfigError(f"repeats={repeats} (--repeats) x {settings} settings make {settings * repeats:,} cells, "
                          f"each a calibrator fit with every test measured; at most {MAX_SWEEP_CELLS:,}: use at most "
                          f"{max(1, MAX_SWEEP_CELLS // max(settings, 1)):,} repeats, or fewer settings")
    draw = check_choice("draw", sweep.draw, DRAWS)
    check_draw(model, draw)  # issue 32: draws that cannot vary are refused (experiments/_sensitivity_checks.py)
    (d_eps,) = _floats((base.eps,), "default_eps")
    (d_size,) = _ints((base.size,), "n_reference")
    (d_ref,) = _sources((base.reference,), "default_reference")
    alpha = check_real("alpha", rule.alpha, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    share = check_real("agreement_threshold", rule.agreement_threshold, lo=0.0, hi=1.0)
    max_shift = check_real("max_shift", rule.max_shift, lo=0.0, lo_open=True)
    notes: list[str] = []
    if draw == "auto":
        draw = "encoder" if streams_reference(model) else "bootstrap"
    if draw == "fixed" and repeats > 1:
        notes.append(f"draw='fixed' is deterministic: {repeats} repeats would be identical, so 1 is run")
        repeats = 1
    if eps_grid and not has_eps:
        notes.append(f"calibration {base.calibration!r} has no ε: the ε sweep was skipped")
        eps_grid = ()
    if others and base.calibration not in others:
        others = (base.calibration, *others)  # the analysed calibration as the kind's own baseline
    plan = _Plan(eps_grid, sizes, sources, others, int(repeats), draw, has_eps, params, tuple(notes),
                 base.calibration, sweep.eps_mode)
    base = replace(base, eps=d_eps, size=d_size, reference=d_ref, params=params)
    return plan, base, VerdictRule(alpha, share, max_shift)


# ---------------------------------------------------------------------------
# the analysis: a plan of cells over the engine, and its summary
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


def _plan_cells(plan: _Plan, base: Baseline) -> list[_Cell]:
    """One cell per (setting, repeat) of every sweep kind (the default is not a cell)."""
    from ..calibration import make_calibrator

    nan = float("nan")
    cells: list[_Cell] = []
    for e in plan.eps:
        cells += [_Cell("eps", _label_eps(e), base.reference, base.size, r, base.calibration, e, plan.eps_mode)
                  for r in range(plan.repeats)]
    fixed_eps, fixed_mode = (base.eps, "absolute") if plan.has_eps else (nan, "")
    for n in plan.sizes:
        cells += [_Cell("reference_size", str(n), base.reference, n, r, base.calibration, fixed_eps, fixed_mode)
                  for r in range(plan.repeats)]
    for s in plan.sources:
        cells += [_Cell("reference", s, s, base.size, r, base.calibration, fixed_eps, fixed_mode)
                  for r in range(plan.repeats)]
    for c in plan.others:
        c_eps = "eps" in make_calibrator(c).get_params()
        cells += [_Cell("calibration", c, base.reference, base.size, r, c, base.eps if c_eps else nan,
                        "absolute" if c_eps else "") for r in range(plan.repeats)]
    if not cells:
        raise ConfigError(
            "empty sweep: give at least one ε (eps), reference size (reference_sizes), reference source "
            "(references) or calibration (calibrations)"
        )
    return cells


def _spec(source: str, n: int, draw: str, repeat: int, pool: int | None, seed: int) -> ReferenceSpec:
    """The reference sample of repeat ``repeat`` of size ``n`` from ``source`` (its stream: reference-draw)."""
    text = None if source == TOP else source
    if draw == "fixed":
        return ReferenceSpec(size=n, text=text)
    return ReferenceSpec(size=n, text=text, draw=draw, pool=pool if draw != "encoder" else None, seed=seed,
                         stream=("reference-draw", source, str(repeat)))


@public
def sensitivity_analysis(
    model: Any,
    tests: Sequence[Any] | None = None,
    *,
    sweep: Sweep | None = None,
    baseline: Baseline | None = None,
    rule: VerdictRule | None = None,
    n_reference: int | None = None,
    rng: Any = None,
    progress: Callable[[int, int, str], None] | None = None,
    permutation: PermutationOptions | None = None,
    **options: Any,
) -> SensitivityResult:
    r"""Robustness of calibrated WEAT results to ε, reference size and reference corpus.

    A plan builder and summariser over the engine
    (:class:`~isoeat.experiments.engine.Engine`): each sweep cell is a space
    (a calibration fitted on a :class:`~isoeat.calibration.sample.ReferenceSpec`)
    and its WEATs; the raw and default rows are the cells ``isoeat run`` computes
    with the same seed and p options.

    Parameters
    ----------
    model : Encoder
        Anything with ``lookup``, ``reference_vectors(n, text=...)``, ``name``
        and ``fingerprint`` (e.g. ``isoeat.load_model("glove-6b-50d")``).
    tests : sequence of AssociationTest, ids or test files, optional
        Default: the ten built-in WEATs.
    sweep : Sweep, optional
        What is varied (:class:`Sweep`): ``eps`` (default ``DEFAULT_EPS_GRID``,
        1e-6 … 1e-1; skipped, with a note, for a calibration without ε),
        ``eps_mode`` (``"relative"``: each ε times the mean eigenvalue
        :math:`\operatorname{tr}\Sigma/d` of the reference sample),
        ``reference_sizes`` (1,000 … 100,000; sizes beyond the pool are capped
        with a note and a warning), ``references`` (sources fitted at the
        default size and ε), ``calibrations`` (other registered calibrations at
        the default size), ``repeats`` (10), ``draw`` (module docstring;
        ``"auto"``: ``"encoder"`` for contextual encoders, else ``"bootstrap"``).
    baseline : Baseline, optional
        The default setting (:class:`Baseline`; paper: ZCA, 1e-3, 100,000, vocabulary top).
    rule : VerdictRule, optional
        The verdict (:class:`VerdictRule`): ``alpha`` (0.05), ``agreement_threshold`` (0.9), ``max_shift`` (0.5).
    n_reference : int, optional
        The default setting's reference size (``baseline.size``; paper: 100,000).
        ``default_size=`` is its deprecated spelling.
    rng : None or int, default None
        Root seed (see Randomness in the module docstring). None: a fresh one,
        drawn from the operating system's entropy and recorded as the result's
        ``seed`` (``rng=result.seed`` replays it); ``isoeat sensitivity``
        passes ``--seed``, default 0.
    progress : None, bool or callable
        Progress of the reference samples: None (a bar on a terminal), True/False, or a callable
        ``progress(done, total, label)`` called after each (:data:`isoeat._progress.PROGRESS_DOC`).
    permutation : PermutationOptions, optional
        How p is computed (default: as :func:`isoeat.weat`, 100,000 permutations where p is sampled).
    **options
        The fields of the option objects by name (:data:`FLAT`: ``eps``,
        ``reference_sizes``, ``repeats``, ``draw``, ``calibration``,
        ``calibration_params``, ``default_eps``, ``default_reference``,
        ``alpha``, ...), the permutation options
        (``n_permutations``, ``method``, ``alternative``), ``exact_max_n``
        (count p exactly when :math:`|X|+|Y|` is at most this; None: the
        library's budget), ``ddof`` and ``min_coverage`` (as :func:`isoeat.weat`).

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
    t0 = time.perf_counter()
    su = _setup(model, tests, {"sweep": sweep, "baseline": baseline, "rule": rule}, n_reference, rng, permutation,
                options)
    plan, base, rule, engine, seed, tests = su.plan, su.base, su.rule, su.engine, su.seed, su.tests
    cells = _plan_cells(plan, base)
    notes = list(plan.notes)
    default, n_default = _default_fit(engine, plan, base, seed, notes)
    raw_res = [engine.weat(t) for t in tests]
    def_res = [engine.weat(t, default) for t in tests]
    pools = _pools(engine, cells, plan.draw, notes)
    cell_out = _sweep(engine, cells, plan, pools, seed, tests, notes, progress_callback(progress, "isoeat sensitivity"))
    rows = _rows(name_of(model), tests, cells, cell_out, raw_res, def_res, plan, base, rule, n_default)
    summary = tuple(_summarise(rows, t.id, rule.alpha, rule.agreement_threshold, rule.max_shift) for t in tests)
    return SensitivityResult(
        model=name_of(model), calibration=base.calibration, calibration_params=plan.params,
        alpha=rule.alpha, **_settings_records(su, pools, n_default), seed=seed, rule=_rule_text(rule),
        agreement_threshold=rule.agreement_threshold, max_shift=rule.max_shift, rows=tuple(rows), summary=summary,
        notes=tuple(notes), calibrator_metadata=dict(getattr(default, "metadata_", {}) or {}),
        elapsed_s=float(time.perf_counter() - t0),
    )


def _settings_records(su: _Setup, pools: dict[str, np.ndarray], n_default: int) -> dict[str, dict]:
    """The result's ``default``, ``sweep`` and ``p_options`` records."""
    plan, base, p = su.plan, su.base, su.permutation
    d_eps = base.eps if plan.has_eps else float("nan")
    return {
        "default": {"calibration": base.calibration, "eps": d_eps, "eps_mode": "absolute", "n_reference": base.size,
                    "n_reference_used": n_default, "reference": base.reference, "draw": "fixed"},
        "sweep": {"eps": list(plan.eps), "eps_mode": su.sweep.eps_mode, "reference_sizes": list(plan.sizes),
                  "references": list(plan.sources), "calibrations": list(plan.others), "repeats": plan.repeats,
                  "draw": plan.draw, "pool_sizes": {s: int(v.shape[0]) for s, v in pools.items()}},
        "p_options": {"method": p.method, "n_permutations": int(p.n_permutations), "exact_max_n": su.exact_max_n,
                      "alternative": p.alternative, "ddof": su.weat_opts.get("ddof", 1),
                      "test_seeds": {t.id: su.seed for t in su.tests}},
    }


@dataclass(frozen=True)
class _Setup:
    """A sensitivity analysis checked and ready: its plan, default, verdict rule, engine, root seed and tests."""

    plan: Any
    base: Any
    rule: Any
    sweep: Any
    engine: Any
    seed: int
    tests: list
    permutation: Any
    weat_opts: dict
    exact_max_n: Any


def _setup(model: Any, tests: Any, objects: dict[str, Any], n_reference: int | None, rng: Any, permutation: Any,
           options: dict[str, Any]) -> _Setup:
    """Every option of :func:`sensitivity_analysis` checked (before anything is fitted), and its engine."""
    from ..wordsets import as_tests
    from .engine import Engine

    require_encoder(model, "sensitivity_analysis")
    options = dict(options, **({} if n_reference is None else {"n_reference": n_reference}))
    sweep, baseline, rule, p, weat_opts, exact_max_n = _options(objects, permutation, options)
    if isinstance(tests, (list, tuple)) and not tests:
        raise ConfigError("no tests given")
    tests = as_tests(tests)
    plan, base, rule = _validated(model, sweep, baseline, rule)
    if rng is not None and (isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0):
        raise ConfigError(f"rng (seed) must be None or a non-negative int, got {rng!r}")
    seed = root_seed(rng)  # every draw and every p comes from its own named stream of it (isoeat._random)
    engine = Engine(model, seed=seed, weat_kwargs=dict(permutation=p, **weat_opts))
    return _Setup(plan=plan, base=base, rule=rule, sweep=sweep, engine=engine, seed=seed, tests=list(tests),
                  permutation=p, weat_opts=weat_opts, exact_max_n=exact_max_n)


def _default_fit(engine: Any, plan: Any, base: Any, seed: int, notes: list[str]) -> tuple[Any, int]:
    """The default setting's calibrator (the run's cell) and the reference size it used (a note when short)."""
    eps_of = {"eps": base.eps} if plan.has_eps else {}
    default = engine.fit(base.calibration, {**plan.params, **eps_of}, _spec(base.reference, base.size, "fixed", 0,
                                                                           None, seed))
    n_default = int(default.n_samples_seen_)
    if n_default < base.size:
        notes.append(f"default reference {base.reference!r}: asked for {base.size:,} vectors, "
                     f"{n_default:,} available; the default was fitted on {n_default:,}")
    return default, n_default


def _rule_text(rule: VerdictRule) -> str:
    return (f"robust when the significance call (p < {rule.alpha:g}) agrees with the default in at least "
            f"{rule.agreement_threshold:.0%} of the sweep's cells (settings x repeats) and no cell's d departs from "
            f"the default d by more than {rule.max_shift:g}; otherwise fragile")


def _pools(engine: Any, cells: Sequence[_Cell], draw: str, notes: list[str]) -> dict[str, np.ndarray]:
    """Bootstrap and subset draws index into one pool per source: the largest sample any cell asks of it."""
    if draw not in ("bootstrap", "subset"):
        return {}
    needed: dict[str, int] = {}
    for c in cells:
        needed[c.source] = max(needed.get(c.source, 0), c.n_requested)
    pools = {}
    for s, n in needed.items():
        pools[s] = engine.sample(_spec(s, n, "fixed", 0, None, engine.seed))[0]
        if pools[s].shape[0] < n:
            _cap(notes, s, pools[s].shape[0], n)
    return pools


def _cap(notes: list[str], source: str, got: int, asked: int) -> None:
    msg = (f"reference {source!r}: {got:,} vectors available; reference sizes above that "
           f"(asked up to {asked:,}) were capped at {got:,}")
    if msg not in notes:
        notes.append(msg)
        warnings.warn(msg, IsoeatWarning, stacklevel=4)


def _sweep(engine: Any, cells: Sequence[_Cell], plan: _Plan, pools: dict[str, np.ndarray], seed: int,
           tests: Sequence[Any], notes: list[str],
           progress: Any) -> dict[int, tuple[list[Any], float, int, int | None]]:
    """Every cell's results: one reference sample per (source, size, repeat), each of its calibrations fitted once."""
    from .._random import derive_seed

    groups: dict[tuple[str, int, int], list[int]] = {}
    for i, c in enumerate(cells):
        n_eff = min(c.n_requested, pools[c.source].shape[0]) if pools else c.n_requested
        groups.setdefault((c.source, n_eff, c.repeat), []).append(i)
    out: dict[int, tuple[list[Any], float, int, int | None]] = {}
    fit_notes: dict[str, None] = {}
    ordered = sorted(groups.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1]))  # repeat, source, n
    for done, ((source, n_eff, r), members) in enumerate(ordered, 1):
        pool = pools[source].shape[0] if pools else None
        spec = _spec(source, n_eff, plan.draw, r, pool, seed)
        draw_seed = None if plan.draw == "fixed" else derive_seed(seed, *spec.stream)
        cache: dict[tuple[str, float, str], tuple[list[Any], float, int]] = {}
        for i in members:
            c = cells[i]
            key = (c.calibration, c.eps, c.eps_mode)
            if key not in cache:
                cache[key] = _fit_and_measure(engine, c, plan, spec, tests, fit_notes, n_eff)
                if cache[key][2] < c.n_requested and plan.draw in ("fixed", "encoder"):  # a small source
                    _cap(notes, source, cache[key][2], max(cells[k].n_requested for k in members))
            out[i] = (*cache[key], draw_seed)
        if progress:
            progress(done, len(ordered), f"{source} n={n_eff:,} repeat {r}")
    notes.extend(fit_notes)
    return out


def _fit_and_measure(engine: Any, c: _Cell, plan: _Plan, spec: ReferenceSpec, tests: Sequence[Any],
                     fit_notes: dict[str, None], n_eff: int) -> tuple[list[Any], float, int]:
    """The cell's calibrator on ``spec`` (its warnings kept as notes), its WEAT of every test, its ε and n."""
    params = dict(plan.params) if c.calibration == plan.calibration else {}
    if not math.isnan(c.eps):
        # a relative eps is the calibrator's eps_mode (one rule: calibration._base.effective_eps)
        params.update(eps=c.eps, **({"eps_mode": "relative"} if c.eps_mode == "relative" else {}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", IsoeatWarning)
        cal = engine.fit(c.calibration, params, spec, remember=False)
    for w in caught:
        if issubclass(w.category, IsoeatWarning):
            fit_notes[f"{c.calibration} on {n_eff:,} reference vectors: {w.message}"] = None
        else:  # pragma: no cover - pass foreign warnings through
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return [engine.weat(t, cal) for t in tests], float(getattr(cal, "eps_", c.eps)), int(cal.n_samples_seen_)
