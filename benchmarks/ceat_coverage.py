"""Coverage of CEAT's two intervals when the contexts themselves are resampled.

Guo & Caliskan's 95% interval (``meta.ci_low``/``ci_high``, printed "95% CI (draws)") covers the choice of
draws from the contexts at hand. The question a reader asks of a corpus is another: would another sample of
sentences give the same CES? This study draws every word's contexts afresh from a known model and counts how
often each interval holds the **context-level CES**, the published procedure applied to the population of
contexts (computed once from ``--truth-draws`` draws, each a fresh context per word from the model).

The model (seeded): ``--dim``-dimensional vectors; a shared direction ``base`` (an anisotropic space, as
contextual models are); word means ``base + sign * effect * e1 + 0.6 * noise`` (X and A +, Y and B -); each
context is its word's mean plus ``--sigma`` times standard normal noise (at the defaults two contexts of one
word have cosine about 0.6, contexts of different words about 0.3-0.5). ``--contexts`` per word (isoeat's
default 20), ``--words`` per set (W6 has 8), ``--draws`` per run, ``--bootstrap`` replicates.

Target: the contexts interval's coverage in 0.93-0.97 (``--quick``: its Monte Carlo 95% interval meets the
band). The draw-level interval's coverage is printed beside it, with no target (it estimates another quantity).
Exit 1 on a miss. No timing target; the run time is printed.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from isoeat.stats.bootstrap import _d_rows  # noqa: E402
from isoeat.stats.ceat import ceat_from_contexts, random_effects, within_draw_variances  # noqa: E402

from _bench import NO_TARGET, Run, add_json_option, row  # noqa: E402

ROLES = ("X", "Y", "A", "B")


def model(dim: int, words: int, effect: float, seed: int) -> dict[str, np.ndarray]:
    """Each role's word means (words x dim)."""
    g = np.random.default_rng(seed)
    base = 1.5 * g.normal(size=dim) / math.sqrt(dim) * 2.0
    e1 = np.eye(dim)[0]
    return {
        r: base + s * effect * e1 + 0.6 * g.normal(size=(words, dim)) / math.sqrt(dim) * 2.0
        for r, s in zip(ROLES, (1, -1, 1, -1))
    }


def context_level_ces(mu: dict[str, np.ndarray], sigma: float, n: int, g: np.random.Generator) -> float:
    """The published procedure on ``n`` draws, each a fresh context per word from the model (chunks of 20,000)."""
    ds, vs = [], []
    nx = mu["X"].shape[0]
    for start in range(0, n, 20_000):
        m = min(20_000, n - start)
        u = {}
        for r, mean in mu.items():
            c = mean[None] + sigma * g.normal(size=(m, *mean.shape)) / math.sqrt(mean.shape[1]) * 2.0
            u[r] = c / np.linalg.norm(c, axis=2, keepdims=True)
        t = np.concatenate([u["X"], u["Y"]], axis=1)
        s = np.einsum("ntp,nap->nta", t, u["A"]).mean(2) - np.einsum("ntp,nap->nta", t, u["B"]).mean(2)
        d = _d_rows(s[:, :nx], s[:, nx:], 1)
        ds.append(d)
        vs.append(within_draw_variances(s, nx, d))
    return random_effects(np.concatenate(ds), np.concatenate(vs)).ces


def study(args: argparse.Namespace) -> dict:
    g = np.random.default_rng(args.seed)
    mu = model(args.dim, args.words, args.effect, args.seed)
    truth = context_level_ces(mu, args.sigma, args.truth_draws, g)
    hit_c = hit_d = 0
    ces, se_d, se_c = [], [], []
    t0 = time.perf_counter()
    for _ in range(args.runs):
        ctx = {
            r: [m + args.sigma * g.normal(size=(args.contexts, args.dim)) / math.sqrt(args.dim) * 2.0 for m in mu[r]]
            for r in ROLES
        }
        (res,) = ceat_from_contexts(ctx, n_draws=args.draws, rng=g, bootstrap=args.bootstrap)
        hit_d += res.meta.ci_low <= truth <= res.meta.ci_high
        hit_c += res.contexts.low <= truth <= res.contexts.high
        ces.append(res.meta.ces)
        se_d.append(res.meta.se)
        se_c.append(res.contexts.se)
    return {
        "truth": truth,
        "cov_contexts": hit_c / args.runs,
        "cov_draws": hit_d / args.runs,
        "sd_ces": float(np.std(ces, ddof=1)),
        "mean_se_draws": float(np.mean(se_d)),
        "mean_se_contexts": float(np.mean(se_c)),
        "seconds": time.perf_counter() - t0,
        "runs": args.runs,
    }


def rows(f: dict, quick: bool) -> list[dict]:
    r = f["runs"]
    mc = 1.96 * math.sqrt(0.95 * 0.05 / r)
    cov = f["cov_contexts"]
    ok = (cov + mc >= 0.93 and cov - mc <= 0.97) if quick else 0.93 <= cov <= 0.97
    return [
        row(
            "contexts interval coverage",
            f"{cov:.3f} (+-{mc:.3f} MC, {r} runs)",
            cov,
            "share",
            "0.93-0.97" + (" (MC interval meets it)" if quick else ""),
            ok,
        ),
        row("draw-level interval coverage", f"{f['cov_draws']:.3f}", f["cov_draws"], "share", NO_TARGET, True),
        row(
            "SD of CES over context samples",
            f"{f['sd_ces']:.4f} (truth {f['truth']:.4f})",
            f["sd_ces"],
            "",
            NO_TARGET,
            True,
        ),
        row(
            "mean SE: draws | contexts",
            f"{f['mean_se_draws']:.4f} | {f['mean_se_contexts']:.4f}",
            f["mean_se_contexts"],
            "",
            NO_TARGET,
            True,
        ),
        row("run time", f"{f['seconds']:.0f} s", f["seconds"], "s", NO_TARGET, True),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=600, help="context samples (default 600)")
    ap.add_argument("--draws", type=int, default=200, help="CEAT draws per run (default 200)")
    ap.add_argument("--bootstrap", type=int, default=400, help="replicates per run (default 400)")
    ap.add_argument("--contexts", type=int, default=20, help="contexts per word (default 20, isoeat's default)")
    ap.add_argument("--words", type=int, default=8, help="words per set (default 8)")
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--effect", type=float, default=0.5)
    ap.add_argument("--sigma", type=float, default=1.0, help="context noise (default 1.0)")
    ap.add_argument("--truth-draws", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=45)
    ap.add_argument("--quick", action="store_true", help="120 runs, 200 replicates")
    add_json_option(ap)
    args = ap.parse_args()
    if args.quick:
        args.runs, args.bootstrap = 120, 200
    run = Run("ceat_coverage", quick=args.quick, quick_checks=True)
    print(
        f"# {args.runs} runs: {args.words} words per set, {args.contexts} contexts per word, dim {args.dim}, "
        f"{args.draws} draws, {args.bootstrap} replicates, sigma {args.sigma}, effect {args.effect}",
        flush=True,
    )
    f = study(args)
    return run.finish(rows(f, args.quick), args.json)


if __name__ == "__main__":
    sys.exit(main())
