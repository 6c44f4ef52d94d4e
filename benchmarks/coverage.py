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

Usage:  python benchmarks/coverage.py [--quick] [--replicates R] [--compare] [--seed S] [--json PATH]

``--compare`` adds the bootstrap methods (percentile, BCa; slow) on the
8-word cells, to show why they are not the defaults.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from dataclasses import dataclass

import numpy as np

import _bench
from isoeat.stats import intervals as iv

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
        cs = [v[0] for v in vals]
        shown = "flagged" if vals[0][4] else "plain"
        out.append(f"| {estimand} | {m} | {nt} | {na} | {label or '-'} | {min(cs):.3f}-{max(cs):.3f} | "
                   f"+-{max(v[1] for v in vals):.3f} | {min(v[2] for v in vals):.2f}-{max(v[2] for v in vals):.2f} | "
                   f"{max(v[3] for v in vals):.0%} | {shown} |")
    return "\n".join(out)


def outside(cell: dict, quick: bool) -> bool:
    """Whether a default interval printed without a warning misses the band (quick: its MC interval misses it)."""
    if not cell["default"] or cell["warned"]:
        return False
    lo_c, hi_c = (cell["coverage"] - cell["err"], cell["coverage"] + cell["err"]) if quick else (cell["coverage"],) * 2
    return not (hi_c >= BAND[0] and lo_c <= BAND[1])


def rows(f: dict) -> list[dict]:
    """One row per estimand: its default interval, printed without a warning, against the band (pure)."""
    out = []
    for estimand, method in iv.DEFAULT_METHOD.items():
        cs = [c for c in f["cells"] if c["estimand"] == estimand and c["default"] and not c["warned"]]
        if not cs:
            continue
        bad = [c for c in cs if outside(c, f["quick"])]
        cov = [c["coverage"] for c in cs]
        out.append(_bench.row(f"{estimand}: {method} interval (default, printed plain), {len(cs)} cells",
                              f"coverage {min(cov):.3f}-{max(cov):.3f}, {len(bad)} outside", round(min(cov), 4),
                              "coverage", f"every cell in [{BAND[0]}, {BAND[1]}]"
                              + (" (its MC 95% interval meets it)" if f["quick"] else ""), not bad))
    out.append(_bench.row("run time", f"{f['seconds']:.0f} s", round(f["seconds"], 1), "s", _bench.NO_TARGET, True))
    return out


def check(figures: dict) -> list[str]:
    """The cells missed by ``figures``, named (empty when every default interval printed plain is in the band)."""
    return [f"{c['scenario']} {c['estimand']} {c['method']} {c['sizes']} theta={c['theta']:g}: {c['coverage']:.3f}"
            for c in figures["cells"] if outside(c, figures["quick"])]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a small grid with fewer replicates (for the suite)")
    ap.add_argument("--replicates", type=int, default=None, help="data sets per cell (default 2000; quick 400)")
    ap.add_argument("--compare", action="store_true", help="also the bootstrap methods on the 8-word cells")
    ap.add_argument("--resamples", type=int, default=1000,
                    help="bootstrap resamples for --compare (default 1000)")
    ap.add_argument("--seed", type=int, default=20261201, help="root seed of the study (default 20261201)")
    _bench.add_json_option(ap)
    args = ap.parse_args(argv)
    reps = args.replicates or (400 if args.quick else 2000)
    run = _bench.Run("coverage", quick=args.quick, quick_checks=True)
    t0 = time.perf_counter()
    print(f"# coverage study: level {LEVEL}, band {BAND}, {reps} replicates per cell, seed {args.seed}")
    print(f"# {platform.python_version()} numpy {np.__version__}, {platform.machine()}, "
          f"{'quick' if args.quick else 'full'} grid")
    print("| scenario | estimand | method | sizes | theta | coverage | +- | width | undefined | flagged |")
    print("|---|---|---|---|---|---|---|---|---|---|")
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
                if args.compare and nt == 8 and na == 8:
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
    print()
    print(summary(table))
    figures = {"quick": args.quick, "cells": cells_seen, "seconds": time.perf_counter() - t0}
    print(f"# {figures['seconds']:.0f} s")
    failures = check(figures)
    if failures:
        print("FAIL: default intervals printed without a warning outside the band:", *failures, sep="\n  ")
    else:
        print("OK: every default interval printed without a warning covers within the band")
    return run.finish(rows(figures), args.json)


if __name__ == "__main__":
    sys.exit(main())
