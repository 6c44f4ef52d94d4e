"""Coverage study of the confidence intervals on the WEAT effect size d.

Does a "95% interval" cover the quantity it names 95% of the time?  For each
estimand (``given-attributes``: the effect given these attribute words;
``populations``: the effect over the populations both word sets were drawn
from, see ``isoeat.stats.intervals``) and each interval method, the study
draws many data sets from a population whose true value is known, computes
the interval on each and counts how often it contains the truth.

Scenarios (all seeded):

* ``s-values``: per-word associations drawn directly, s ~ N(+D/2, 1) for X and
  N(-D/2, 1) for Y (estimand given-attributes; attributes play no part);
* ``crossed``: a cosine matrix with a crossed word x attribute structure,
  cos(w, a) = r_w/2 + g_w z_a + v_a + e_wa (and for B with -r_w/2), word
  effects r_w ~ N(+-D/2, 1), set-by-attribute effects z ~ N(0, 0.3^2),
  attribute effects v ~ N(0, 1), interaction noise e ~ N(0, 2): both
  estimands have closed forms;
* ``embeddings``: synthetic 50-d word vectors around a shared mean direction
  (anisotropic), X/Y and A/B separated along one axis; each population is a
  pool of 1,500 vectors per set, sampled with replacement, so both estimands
  are computed exactly from the pools.

Grid: targets per set 6, 8, 16, 25, 32; attributes per set 7, 8, 25; true
effects 0, 0.5, 1, 1.5.  The sizes of W1-W10 are all on it (named in the
table).  For each cell the table
prints the coverage with its Monte Carlo 95% error and the mean width.

Exit status: 1 when a default interval that the library prints *without* a
coverage warning (``isoeat.stats.intervals.coverage_warning``) falls outside
[0.93, 0.97] anywhere on the grid (``--quick``: when the Monte Carlo 95%
interval of its coverage misses the band); 0 otherwise. The cells missed are
named. No timing target: the run time is printed for information (the load
average before and after beside it). ``--json PATH`` writes the figures for
tools/perf_table.py.

**Metric intervals** (``isoeat.metrics.intervals``; the estimand is the
metric given the poles A, B, targets random). Populations: 100,000
synthetic 50-d word vectors per target set around a shared direction
(anisotropic), norms log-normal (sd 0.3, as RND and RIPA read norms), X
and Y separated by ``sep`` along one axis, the poles 8 + 8 vectors leaning
+-0.35 on it, fixed for the design (the defining pairs: A and B zipped);
``normal`` (Gaussian noise) and ``heavy`` (Student t_3 noise: outlying
words) scenarios. The truth of each metric is its value on the whole
populations (equal sizes: the mean of the per-word values, their
difference, or ECT's Spearman rho over both). Grid: 6, 8, 16, 25, 32 words
per set x sep 0, 0.6, 1.2 x both scenarios, 1,000 data sets a design (MC
error +-0.014). The rows printed plain (as "95% CI") are those
``isoeat.stats.coverage_study`` quotes inside [0.93, 0.97]; the others are
printed with their measured range.

Exit status: also 1 when a metric's default interval printed plain falls
outside the band, or when a measured coverage lies outside the range the
code quotes for it (``isoeat.stats.coverage_study``) by more than its MC
error (the quoted data are stale).

Usage:  python benchmarks/coverage.py [--quick] [--replicates R] [--compare] [--seed S] [--json PATH]
                                      [--part d|metrics|all] [--metrics NAME,NAME] [--methods M,M] [--data]

``--compare`` adds the bootstrap methods: for d the percentile and BCa
intervals (slow) at 6-32 target and 8 and 25 attribute words (``populations``:
8-25 targets), for the metrics the other of Welch's t and the studentized bootstrap, and
the percentile bootstrap (ECT's: 200 data sets of 200 resamples, it
recomputes rho on each), to show why they are not the defaults and to measure the
coverage their warnings quote. ``--data`` prints the measured ranges as the
Python literals of ``isoeat.stats.coverage_study``.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from isoeat.stats import intervals as iv

import _bench

BAND = (0.93, 0.97)
LEVEL = 0.95
EFFECTS = (0.0, 0.5, 1.0, 1.5)
TARGETS = (6, 8, 16, 25, 32)
ATTRIBUTES = (7, 8, 25)
W_SIZES = {"W1": (25, 25), "W2": (25, 25), "W3": (32, 25), "W4": (16, 25), "W5": (16, 8), "W6": (8, 8),
           "W7": (8, 8), "W8": (8, 8), "W9": (6, 7), "W10": (8, 8)}
SIGMA_Z, SIGMA_E = 0.3, math.sqrt(2.0)


def delta_for(theta: float, share: float = 0.5) -> float:
    """Standardised difference delta with theta = delta / sqrt(1 + share (1 - share) delta^2)."""
    return theta / math.sqrt(1.0 - share * (1.0 - share) * theta**2)


def theta_of(diff: np.ndarray, var: np.ndarray, share: float = 0.5) -> np.ndarray:
    return diff / np.sqrt(var + share * (1.0 - share) * diff**2)


@dataclass
class Draws:
    """R replicates of one cell: cosine blocks (or s-values) and the truth of each estimand."""

    s_x: np.ndarray  # (R, nx)
    s_y: np.ndarray
    mats: tuple[np.ndarray, ...] | None  # (R, n, k) x 4, or None (s-values only)
    truth: dict[str, np.ndarray]  # estimand -> (R,) true value per replicate


def draw_svalues(gen: np.random.Generator, theta: float, nt: int, na: int, reps: int) -> Draws:
    d = delta_for(theta)
    sx = gen.normal(d / 2, 1.0, (reps, nt))
    sy = gen.normal(-d / 2, 1.0, (reps, nt))
    return Draws(sx, sy, None, {"given-attributes": np.full(reps, theta)})


def draw_crossed(gen: np.random.Generator, theta: float, nt: int, na: int, reps: int) -> Draws:
    d = delta_for(theta)
    r_x = gen.normal(d / 2, 1.0, (reps, nt, 1))
    r_y = gen.normal(-d / 2, 1.0, (reps, nt, 1))
    blocks = []
    z = {}
    for att, sign in (("A", 0.5), ("B", -0.5)):
        z[att] = gen.normal(0.0, SIGMA_Z, (reps, 1, na))
        v = gen.normal(0.0, 1.0, (reps, 1, na))
        for r, g in ((r_x, 0.5), (r_y, -0.5)):
            blocks.append((att, g, sign * r + g * z[att] + v + gen.normal(0.0, SIGMA_E, (reps, nt, na))))
    cxa, cya, cxb, cyb = (b[2] for b in blocks)
    sx = cxa.mean(-1) - cxb.mean(-1)
    sy = cya.mean(-1) - cyb.mean(-1)
    shift = z["A"].mean(axis=(-2, -1)) - z["B"].mean(axis=(-2, -1))  # set-by-attribute part of the contrast
    noise = SIGMA_E**2 * (2.0 / na)
    truth = {"populations": np.full(reps, theta), "given-attributes": theta_of(d + shift, 1.0 + noise)}
    return Draws(sx, sy, (cxa, cxb, cya, cyb), truth)


class Pools:
    """Synthetic embedding populations whose effect over the populations is ``theta``.

    Unit vectors, so a cosine is a dot product and the mean cosine of a word
    with a set of attribute words is its dot product with their mean vector.
    """

    def __init__(self, gen: np.random.Generator, theta: float, size: int = 1500, dim: int = 50):
        self.gen = gen
        self.base = gen.normal(size=(4, size, dim)) / math.sqrt(dim)
        self.common = np.zeros(dim)
        self.common[0] = 1.0  # the shared direction every vector leans on (anisotropy)
        self.axis = np.zeros(dim)
        self.axis[1] = 1.0
        self.kappa = 0.35
        self.vec = self._vectors(self._solve(theta) if theta else 0.0)
        self.inf = self._theta_given(self.vec[2].mean(0), self.vec[3].mean(0))

    def _vectors(self, sep: float) -> tuple[np.ndarray, ...]:
        def unit(m: np.ndarray) -> np.ndarray:
            return m / np.linalg.norm(m, axis=-1, keepdims=True)

        return (unit(self.base[0] + self.common + sep / 2 * self.axis),
                unit(self.base[1] + self.common - sep / 2 * self.axis),
                unit(self.base[2] + self.common + self.kappa * self.axis),
                unit(self.base[3] + self.common - self.kappa * self.axis))

    def _theta_given(self, mean_a: np.ndarray, mean_b: np.ndarray, vec: tuple[np.ndarray, ...] | None = None
                     ) -> np.ndarray:
        """Effect over the X and Y pools given attribute mean vectors (..., dim)."""
        x, y = (vec or self.vec)[:2]
        w = (mean_a - mean_b).T  # (dim, ...)
        sx, sy = x @ w, y @ w  # (pool, ...)
        return theta_of(sx.mean(0) - sy.mean(0), 0.5 * sx.var(0) + 0.5 * sy.var(0))

    def _solve(self, theta: float) -> float:
        """Separation of X and Y whose effect over the populations is ``theta`` (bisection)."""
        lo, hi = 0.0, 4.0
        for _ in range(30):
            mid = (lo + hi) / 2
            vec = self._vectors(mid)
            if self._theta_given(vec[2].mean(0), vec[3].mean(0), vec) < theta:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    def draw(self, nt: int, na: int, reps: int) -> Draws:
        g = self.gen
        x, y, a, b = self.vec
        n = x.shape[0]
        xs, ys = x[g.integers(0, n, (reps, nt))], y[g.integers(0, n, (reps, nt))]
        as_, bs = a[g.integers(0, n, (reps, na))], b[g.integers(0, n, (reps, na))]
        cxa, cxb = xs @ as_.transpose(0, 2, 1), xs @ bs.transpose(0, 2, 1)
        cya, cyb = ys @ as_.transpose(0, 2, 1), ys @ bs.transpose(0, 2, 1)
        cond = self._theta_given(as_.mean(1), bs.mean(1))  # every pool word's s under the drawn attributes
        sx = cxa.mean(-1) - cxb.mean(-1)
        sy = cya.mean(-1) - cyb.mean(-1)
        return Draws(sx, sy, (cxa, cxb, cya, cyb), {"populations": np.full(reps, self.inf),
                                                    "given-attributes": cond})


# ---------------------------------------------------------------------------
# interval methods over replicates
# ---------------------------------------------------------------------------


def intervals(method: str, estimand: str, dr: Draws, gen: np.random.Generator, resamples: int) -> np.ndarray:
    """(R, 2) limits of ``method`` on every replicate."""
    nt = dr.s_x.shape[1]
    if method == "noncentral-t":
        lo, hi = iv.noncentral_t_limits(iv.d_within(dr.s_x, dr.s_y), nt, dr.s_y.shape[1], LEVEL)
        return np.stack([lo, hi], axis=1)
    out = np.empty((dr.s_x.shape[0], 2))
    if method == "jackknife":
        parts = []
        for start in range(0, dr.s_x.shape[0], 200):  # bounded memory: 200 replicates at a time
            chunk = [m[start:start + 200] for m in dr.mats]
            parts.append(np.stack(iv.jackknife_population_limits(*chunk, LEVEL)[2:], axis=1))
        return np.concatenate(parts)
    from isoeat.stats.bootstrap import bootstrap_effect_size

    for r in range(out.shape[0]):
        cos = tuple(m[r] for m in dr.mats) if estimand == "populations" else None
        b = bootstrap_effect_size(dr.s_x[r], dr.s_y[r], n_resamples=resamples, method=method, rng=gen,
                                  attribute_cos=cos)
        out[r] = (b.ci_low, b.ci_high)
    return out


def coverage(lim: np.ndarray, truth: np.ndarray) -> tuple[float, float, float, float]:
    """(coverage, Monte Carlo half-width, mean width, share undefined)."""
    ok = np.all(np.isfinite(lim), axis=1)
    n = int(ok.sum())
    if n == 0:
        return math.nan, math.nan, math.nan, 1.0
    hit = (lim[ok, 0] <= truth[ok]) & (truth[ok] <= lim[ok, 1])
    c = float(hit.mean())
    return c, 1.96 * math.sqrt(max(c * (1 - c), 1e-12) / n), float(np.mean(lim[ok, 1] - lim[ok, 0])), 1 - n / ok.size


def cells(quick: bool) -> list[tuple[str, int, int, float]]:
    """(label, targets per set, attributes per set, theta)."""
    if quick:
        sizes = [("", 8, 8), ("", 25, 25)]
        effects = (0.0, 1.0)
    else:
        sizes = [(",".join(w for w, ta in W_SIZES.items() if ta == (t, a)), t, a) for t in TARGETS for a in ATTRIBUTES]
        effects = EFFECTS
    return [(label, t, a, th) for label, t, a in sizes for th in effects]


def summary(rows: list[tuple]) -> str:
    """Per estimand, method and set sizes: the range of coverage over effects and scenarios."""
    groups: dict[tuple, list[tuple]] = {}
    for label, estimand, m, nt, na, c, err, width, undef, warn in rows:
        groups.setdefault((estimand, m, nt, na, label), []).append((c, err, width, undef, warn))
    out = ["| estimand | method | targets | attributes | tests | coverage (min-max) | MC error | width | "
           "undefined | shown |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (estimand, m, nt, na, label), vals in sorted(groups.items()):
        shown = "flagged" if vals[0][4] else "plain"
        out.append(f"| {estimand} | {m} | {nt} | {na} | {label or '-'} | {_ranges(vals, '.2f')} | {shown} |")
    return "\n".join(out)


def _ranges(vals: list[tuple], width: str) -> str:
    """The table cells of a group of (coverage, MC error, width, undefined, ...): ranges and worst cases."""
    cs = [v[0] for v in vals]
    return (f"{min(cs):.3f}-{max(cs):.3f} | +-{max(v[1] for v in vals):.3f} | "
            f"{min(v[2] for v in vals):{width}}-{max(v[2] for v in vals):{width}} | {max(v[3] for v in vals):.0%}")


# ---------------------------------------------------------------------------
# metric intervals
# ---------------------------------------------------------------------------

METRIC_TARGETS = (6, 8, 16, 25, 32)
METRIC_EFFECTS = (0.0, 0.6, 1.2)
METRIC_SCENARIOS = ("normal", "heavy")
METRIC_POOL = 100_000
METRIC_DIM = 50


class MetricPopulation:
    """Target populations X, Y (``size`` vectors each) and fixed poles A, B; the truth of every metric on them."""

    def __init__(self, gen: np.random.Generator, sep: float, scenario: str, size: int):
        d = METRIC_DIM
        common, axis = np.eye(d)[0], np.eye(d)[1]

        def noise(n: int) -> np.ndarray:
            if scenario == "normal":
                return gen.normal(size=(n, d)) / math.sqrt(d)
            return gen.standard_t(3, size=(n, d)) / math.sqrt(3 * d)  # t_3: variance 3, scaled to normal's

        def norms(n: int) -> np.ndarray:
            return np.exp(gen.normal(0.0, 0.3, (n, 1)))

        self.X = (noise(size) + common + sep / 2 * axis) * norms(size)
        self.Y = (noise(size) + common - sep / 2 * axis) * norms(size)
        self.A = (noise(8) + common + 0.35 * axis) * norms(8)
        self.B = (noise(8) + common - 0.35 * axis) * norms(8)
        self.size = size

    def inputs(self, ix: np.ndarray, iy: np.ndarray) -> Any:
        from isoeat.metrics.registry import Inputs

        return Inputs(np.vstack([self.X[ix], self.Y[iy]]), len(ix), self.A, self.B, self.A, self.B)

    def truth(self, spec: Any, opts: dict) -> float:
        """The metric on the whole populations (equal sizes, so the estimand at equal sets)."""
        everything = np.arange(self.size)
        return float(spec.compute(self.inputs(everything, everything), opts).estimate)


def metric_specs(only: str | None = None) -> list:
    """The metrics with an interval (``only``: a comma list of their names)."""
    from isoeat.metrics.registry import METRICS

    return [s for s in METRICS.values() if "ci" in s.options and (only is None or s.name in only.split(","))]


def metric_methods(spec: Any, compare: bool, only: str | None = None) -> list[str]:
    """The default method of ``spec``, and with ``compare`` the others it takes (``only``: a comma list of them)."""
    from isoeat.metrics.intervals import default_method

    first = default_method(spec)
    others = [m for m in ("welch-t", "studentized") if spec.summands is not None and m != first] + ["percentile"]
    methods = [first] + (others if compare else [])
    return [m for m in methods if only is None or m in only.split(",")]


def metric_coverage_cells(args: argparse.Namespace, reps: int, seed: int) -> tuple[list[dict], list[tuple]]:
    """Coverage of every metric's interval methods over the grid: the cells (for the checks) and table rows."""
    from isoeat.metrics.intervals import metric_interval
    from isoeat.metrics.registry import check_options
    from isoeat.stats.coverage_study import covers, metric_coverage

    quick = args.quick
    targets, effects = ((8, 25), (0.0, 1.2)) if quick else (METRIC_TARGETS, METRIC_EFFECTS)
    pool = METRIC_POOL
    cells_seen, table = [], []
    for si, scenario in enumerate(METRIC_SCENARIOS):
        for sep in effects:
            # seeded by the design, not the grid: --quick draws the full run's populations and first data sets
            ei = METRIC_EFFECTS.index(sep)
            pop = MetricPopulation(np.random.default_rng([seed, 35, si, ei]), sep, scenario, pool)
            for spec in metric_specs(getattr(args, "metrics", None)):
                for method in metric_methods(spec, args.compare, args.methods):
                    n_b = (200 if spec.summands is None else 1000) if method == "percentile" else 0
                    opts = check_options([spec], {"ci": True, "ci_method": method, "bootstrap": n_b})
                    truth = pop.truth(spec, opts)
                    r_here = reps if method != "percentile" or spec.summands is not None else min(reps, 200)
                    for nt in targets:
                        gen = np.random.default_rng([seed, 35, si, ei, nt, len(method)])
                        lim = np.empty((r_here, 2))
                        for r in range(r_here):
                            inp = pop.inputs(gen.choice(pool, nt, replace=False), gen.choice(pool, nt, replace=False))
                            ci = metric_interval(spec, inp, opts, gen)
                            lim[r] = (ci.get("ci_low", math.nan), ci.get("ci_high", math.nan))
                        c, err, width, undef = coverage(lim, np.full(r_here, truth))
                        quoted = metric_coverage(spec.name, method, nt, nt)
                        warn = math.isnan(quoted.low) or not covers(quoted)
                        sizes = f"{nt}x{nt}"
                        print(f"| {scenario} | metric {spec.name} | {method} | {sizes} | {sep:g} | {c:.3f} | "
                              f"{err:.3f} | {width:.3g} | {undef:.1%} | {'yes' if warn else ''} |", flush=True)
                        table.append((spec.name, method, nt, c, err, width, undef, warn))
                        cells_seen.append({"scenario": scenario, "estimand": f"metric {spec.name}", "method": method,
                                           "sizes": sizes, "theta": sep, "coverage": c, "err": err, "warned": warn,
                                           "default": method == metric_methods(spec, False)[0],
                                           "quoted": None if math.isnan(quoted.low) else [quoted.low, quoted.high]})
    return cells_seen, table


def metric_summary(rows: list[tuple]) -> str:
    """Per metric, method and set size: the range of coverage over effects and scenarios (docs/metrics.md)."""
    groups: dict[tuple, list[tuple]] = {}
    for name, m, nt, c, err, width, undef, warn in rows:
        groups.setdefault((name, m, nt), []).append((c, err, width, undef, warn))
    out = ["| metric | method | targets | coverage (min-max) | MC error | width | undefined | shown |",
           "|---|---|---|---|---|---|---|---|"]
    for (name, m, nt), vals in groups.items():
        shown = "with its coverage" if vals[0][4] else "as 95% CI"
        out.append(f"| {name} | {m} | {nt} | {_ranges(vals, '.3g')} | {shown} |")
    return "\n".join(out)


def data_literals(d_rows: list[tuple], m_rows: list[tuple]) -> str:
    """The measured ranges as the literals of isoeat.stats.coverage_study (METRIC_COVERAGE, D_COVERAGE)."""
    met: dict[tuple, dict[int, list[float]]] = {}
    for name, m, nt, c, *_ in m_rows:
        met.setdefault((name, m), {}).setdefault(nt, []).append(c)
    dd: dict[tuple, dict[tuple, list[float]]] = {}
    for _label, estimand, m, nt, na, c, *_ in d_rows:
        dd.setdefault((estimand, m), {}).setdefault((nt, na), []).append(c)
    lines = ["METRIC_COVERAGE = {"]
    for key, by in met.items():
        lines.append(f"    {key!r}: {{" + ", ".join(f"{k}: ({min(v):.3f}, {max(v):.3f})" for k, v in by.items()) + "},")
    lines += ["}", "D_COVERAGE = {"]
    for key, by in dd.items():
        lines.append(f"    {key!r}: {{" + ", ".join(f"{k}: ({min(v):.3f}, {max(v):.3f})" for k, v in by.items()) + "},")
    return "\n".join(lines + ["}"])


# ---------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------


def outside(cell: dict, quick: bool) -> bool:
    """Whether a default interval printed without a warning misses the band (quick: its MC interval misses it)."""
    if not cell["default"] or cell["warned"]:
        return False
    lo_c, hi_c = (cell["coverage"] - cell["err"], cell["coverage"] + cell["err"]) if quick else (cell["coverage"],) * 2
    return not (hi_c >= BAND[0] and lo_c <= BAND[1])


def stale(cell: dict) -> bool:
    """Whether a measured coverage lies outside the range the code quotes for it by more than its MC error."""
    q = cell.get("quoted")
    return q is not None and not (q[0] - cell["err"] <= cell["coverage"] <= q[1] + cell["err"])


def rows(f: dict) -> list[dict]:
    """One row per estimand and per metric: its default interval, printed without a warning, against the band (pure)."""
    out = []
    groups = [(e, m) for e, m in iv.DEFAULT_METHOD.items()]
    groups += sorted({(c["estimand"], c["method"]) for c in f["cells"]
                      if c["estimand"].startswith("metric ") and c["default"]})
    for estimand, method in groups:
        cs = [c for c in f["cells"] if c["estimand"] == estimand and c["method"] == method and c["default"]
              and not c["warned"]]
        if not cs:
            continue
        bad = [c for c in cs if outside(c, f["quick"])]
        cov = [c["coverage"] for c in cs]
        out.append(_bench.row(f"{estimand}: {method} interval (default, printed plain), {len(cs)} cells",
                              f"coverage {min(cov):.3f}-{max(cov):.3f}, {len(bad)} outside", round(min(cov), 4),
                              "coverage", f"every cell in [{BAND[0]}, {BAND[1]}]"
                              + (" (its MC 95% interval meets it)" if f["quick"] else ""), not bad))
    old = [c for c in f["cells"] if stale(c)]
    quoted = [c for c in f["cells"] if c.get("quoted") is not None]
    if quoted:
        out.append(_bench.row(f"coverage quoted by isoeat.stats.coverage_study, {len(quoted)} cells",
                              f"{len(old)} outside the quoted range", len(old), "cells",
                              "every measured coverage within the quoted range +- its MC error", not old))
    out.append(_bench.row("run time", f"{f['seconds']:.0f} s", round(f["seconds"], 1), "s", _bench.NO_TARGET, True))
    return out


def check(figures: dict) -> list[str]:
    """The cells missed by ``figures``, named (empty when every default interval printed plain is in the band)."""
    return ([f"{c['scenario']} {c['estimand']} {c['method']} {c['sizes']} theta={c['theta']:g}: {c['coverage']:.3f}"
             for c in figures["cells"] if outside(c, figures["quick"])]
            + [f"{c['scenario']} {c['estimand']} {c['method']} {c['sizes']} theta={c['theta']:g}: {c['coverage']:.3f} "
               f"outside the quoted {c['quoted'][0]:.3f}-{c['quoted'][1]:.3f}" for c in figures["cells"] if stale(c)])


def d_coverage_cells(args: argparse.Namespace, reps: int) -> tuple[list[dict], list[tuple]]:
    """The study of the intervals on d: every cell (for the checks) and the table rows."""
    cells_seen: list[dict] = []
    table: list[tuple[str, str, str, int, int, float, float, float, float, bool]] = []
    pools: dict[float, Pools] = {}
    for ci, (label, nt, na, theta) in enumerate(cells(args.quick)):
        seeds = np.random.SeedSequence([args.seed, ci]).spawn(3)
        scen = {"s-values": lambda g: draw_svalues(g, theta, nt, na, reps),
                "crossed": lambda g: draw_crossed(g, theta, nt, na, reps)}
        if theta not in pools:
            pools[theta] = Pools(np.random.default_rng([args.seed, int(theta * 10), 7]), theta)
        scen["embeddings"] = lambda g: (setattr(pools[theta], "gen", g), pools[theta].draw(nt, na, reps))[1]
        for (name, make), ss in zip(scen.items(), seeds):
            if name == "s-values" and na != ATTRIBUTES[-1] and not args.quick:
                continue  # attributes play no part in this scenario: one row per target size
            gen = np.random.default_rng(ss)
            dr = make(gen)
            for estimand in dr.truth:
                methods = [iv.DEFAULT_METHOD[estimand]]
                if args.compare and na in (8, 25) and (estimand == "given-attributes" or 8 <= nt <= 25):
                    methods += list(iv.BOOTSTRAP_METHODS)
                for m in methods:
                    lim = intervals(m, estimand, dr, gen, args.resamples)
                    c, err, width, undef = coverage(lim, dr.truth[estimand])
                    warn = iv.coverage_warning(estimand, m, nt, nt, na, na)
                    sizes = f"{label + ' ' if label else ''}{nt}x{nt} / {na}x{na}"
                    print(f"| {name} | {estimand} | {m} | {sizes} | {theta:g} | {c:.3f} | {err:.3f} | "
                          f"{width:.2f} | {undef:.1%} | {'yes' if warn else ''} |", flush=True)
                    table.append((label, estimand, m, nt, na, c, err, width, undef, bool(warn)))
                    cells_seen.append({"scenario": name, "estimand": estimand, "method": m, "sizes": sizes,
                                       "theta": theta, "coverage": c, "err": err, "warned": bool(warn),
                                       "default": m == iv.DEFAULT_METHOD[estimand]})
    return cells_seen, table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a small grid with fewer replicates (for the suite)")
    ap.add_argument("--replicates", type=int, default=None,
                    help="data sets per cell (default: d 2000, metrics 1000; quick 400 and 200)")
    ap.add_argument("--compare", action="store_true", help="also the bootstrap methods (slow)")
    ap.add_argument("--resamples", type=int, default=1000,
                    help="bootstrap resamples of the d intervals for --compare (default 1000)")
    ap.add_argument("--seed", type=int, default=20261201, help="root seed of the study (default 20261201)")
    ap.add_argument("--part", choices=("d", "metrics", "all"), default="all",
                    help="the d intervals, the metric intervals or both (default all)")
    ap.add_argument("--methods", default=None, metavar="M,M",
                    help="metric intervals: only these methods (default: every one the run measures)")
    ap.add_argument("--metrics", default=None, metavar="NAME,NAME",
                    help="metric intervals: only these metrics (e.g. ect; default: every metric with an interval)")
    ap.add_argument("--data", action="store_true", help="print the measured ranges as isoeat.stats.coverage_study's "
                                                        "literals")
    _bench.add_json_option(ap)
    args = ap.parse_args(argv)
    reps_d = args.replicates or (400 if args.quick else 2000)
    reps_m = args.replicates or (200 if args.quick else 1000)
    run = _bench.Run("coverage", quick=args.quick, quick_checks=True)
    t0 = time.perf_counter()
    print(f"# coverage study: level {LEVEL}, band {BAND}, replicates per cell: d {reps_d}, metrics {reps_m}; "
          f"seed {args.seed}")
    print(f"# {platform.python_version()} numpy {np.__version__}, {platform.machine()}, "
          f"{'quick' if args.quick else 'full'} grid{', with the bootstrap methods' if args.compare else ''}")
    print("| scenario | estimand | method | sizes | theta | coverage | +- | width | undefined | flagged |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    d_cells, d_table = d_coverage_cells(args, reps_d) if args.part in ("d", "all") else ([], [])
    m_cells, m_table = metric_coverage_cells(args, reps_m, args.seed) if args.part in ("metrics", "all") else ([], [])
    print()
    if d_table:
        print(summary(d_table))
        print()
    if m_table:
        print(metric_summary(m_table))
    if args.data:
        print()
        print(data_literals(d_table, m_table))
    figures = {"quick": args.quick, "cells": d_cells + m_cells, "seconds": time.perf_counter() - t0}
    print(f"# {figures['seconds']:.0f} s")
    failures = check(figures)
    if failures:
        print("FAIL: intervals printed without a warning outside the band, or outside the quoted coverage:",
              *failures, sep="\n  ")
    else:
        print("OK: every default interval printed without a warning covers within the band; every measured "
              "coverage within the quoted range")
    return run.finish(rows(figures), args.json)


if __name__ == "__main__":
    sys.exit(main())
