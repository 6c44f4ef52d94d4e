"""Issue 45 item 2: CEAT's intervals name their estimand; the contexts interval (a bootstrap over each word's contexts).

Expected values are derived here: the published numbers must not move (bootstrap on or off, compared with each
other and with a from-scratch DerSimonian-Laird over the draws); a hand case (one context per word: every draw and
every replicate the same, so the interval is the single d); the replicate's scores against the published
``draw_scores`` on the same indices; coverage in a small simulation whose context-level CES is computed from fresh
population draws (benchmarks/ceat_coverage.py is the full-size study).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from isoeat._errors import ConfigError
from isoeat._random import derive_seed
from isoeat.cli import main
from isoeat.commands.ceat import _table
from isoeat.stats import ceat_contexts as cc
from isoeat.stats.bootstrap import _d_rows
from isoeat.stats.ceat import _ces_statistic, ceat_from_contexts, draw_scores, random_effects, within_draw_variances

ROLES = ("X", "Y", "A", "B")


def _contexts(seed: int, n_words: int = 4, n_ctx: int = 6, dim: int = 8, shift: float = 0.6) -> dict:
    g = np.random.default_rng(seed)
    base = g.normal(size=dim)
    out = {}
    for r, sign in zip(ROLES, (1, -1, 1, -1)):
        mu = base + sign * shift * np.eye(dim)[0] + 0.5 * g.normal(size=(n_words, dim))
        out[r] = [m + g.normal(size=(n_ctx, dim)) for m in mu]
    return out


def test_published_numbers_do_not_move_with_the_bootstrap():
    ctx = _contexts(1)
    (off,) = ceat_from_contexts(ctx, n_draws=300, rng=5, bootstrap=0)
    (on,) = ceat_from_contexts(ctx, n_draws=300, rng=5, bootstrap=50)
    assert off.meta == on.meta and off.effect_sizes == on.effect_sizes  # bit-identical
    assert off.contexts is None and on.contexts is not None
    # and they are the published procedure: DL over the draws' d and published v, recomputed here
    s, n_x = draw_scores(ctx, np.random.default_rng(5).integers(0, [6] * 16, size=(300, 16)))
    d = _d_rows(s[:, :n_x], s[:, n_x:], 1)
    assert on.meta == random_effects(d, np.var(s, axis=1, ddof=1))


def test_one_context_per_word_gives_a_zero_width_interval_at_d():
    # hand case: one context each, so every draw and every replicate is the same d; DL of N equal d is d
    ctx = {r: [a[:1] for a in arrs] for r, arrs in _contexts(2).items()}
    (r,) = ceat_from_contexts(ctx, n_draws=20, rng=0, bootstrap=30)
    s, n_x = draw_scores(ctx, np.zeros((1, 16), dtype=np.int64))
    d = float(_d_rows(s[:, :n_x], s[:, n_x:], 1)[0])
    assert r.contexts.low == pytest.approx(d, abs=1e-12) and r.contexts.high == pytest.approx(d, abs=1e-12)
    assert r.contexts.se == pytest.approx(0.0, abs=1e-12)


def test_replicate_scores_equal_the_published_gather():
    ctx = _contexts(3)
    picks = cc._replicate({r: [6] * 4 for r in ROLES}, 40, np.random.default_rng(0))
    idx = np.concatenate([picks[r] for r in ROLES], axis=1)
    s_pub, _ = draw_scores(ctx, idx)
    np.testing.assert_allclose(cc._Space(ctx).scores(picks), s_pub, atol=1e-13)


def test_replicate_resamples_each_words_contexts_then_draws_from_them():
    # a word with 3 contexts: within one replicate at most 3 distinct picks, and over many replicates every
    # context is reached with frequency 1/3 (a draw from the resample is marginally uniform on the original)
    g = np.random.default_rng(9)
    sizes = {r: [3, 1] for r in ROLES}
    counts = np.zeros(3)
    for _ in range(3000):
        p = cc._replicate(sizes, 50, g)
        assert len(np.unique(p["X"][:, 0])) <= 3 and np.all(p["X"][:, 1] == 0)
        counts += np.bincount(p["X"][:, 0], minlength=3)
    np.testing.assert_allclose(counts / counts.sum(), 1 / 3, atol=0.01)


def test_the_stream_is_the_draws_seeds_contexts_substream():
    ctx = _contexts(4)
    (r,) = ceat_from_contexts(ctx, n_draws=100, rng=11, bootstrap=40)
    (again,) = cc.context_bootstrap(
        [ctx], n_draws=100, n_boot=40, rng=derive_seed(11, "contexts"), statistic=_ces_statistic(1, "published")
    )
    assert r.contexts == again
    (r2,) = ceat_from_contexts(ctx, n_draws=100, rng=11, bootstrap=40)
    assert r2.contexts == r.contexts


class _Scale:
    """A 'calibrator' that multiplies by 3: cosines unchanged, so a paired bootstrap gives the raw interval."""

    name = "x3"

    def transform(self, X):
        return 3.0 * np.asarray(X)


def test_spaces_are_resampled_with_the_same_indices():
    raw, scaled = ceat_from_contexts(_contexts(5), n_draws=100, rng=2, bootstrap=40, calibration=_Scale())
    assert scaled.contexts.low == pytest.approx(raw.contexts.low, abs=1e-12)
    assert scaled.contexts.high == pytest.approx(raw.contexts.high, abs=1e-12)


def test_work_budget_at_its_boundary():
    cc.check_context_work(10, 20, 3, 4, budget=10 * 20 * 3 * 4)  # at the budget: allowed
    with pytest.raises(ConfigError, match="over the 2.4e\\+03 budget"):
        cc.check_context_work(10, 20, 3, 4, budget=10 * 20 * 3 * 4 - 1)


@pytest.mark.parametrize("bad, msg", [(1, "at least 2 replicates, got 1"), (-1, "bootstrap")])
def test_bad_replicate_counts_are_refused(bad, msg):
    with pytest.raises(ConfigError, match=msg):
        ceat_from_contexts(_contexts(6), n_draws=10, rng=0, bootstrap=bad)


def test_cli_refuses_one_replicate_before_loading_a_model(capsys):
    assert main(["ceat", "--model", "minilm", "--test", "W6", "--bootstrap", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--bootstrap must be 0" in err


def test_table_names_both_intervals_and_their_estimands():
    rs = ceat_from_contexts(_contexts(7), n_draws=100, rng=0, bootstrap=40, calibration=_Scale(), test="T")
    text = _table(rs)
    head = text.splitlines()[1]
    for col in ("SE (draws)", "95% CI (draws)", "p (draws)", "95% CI (contexts)"):
        assert col in head
    c = rs[0].contexts
    assert f"[{c.low:.3f}, {c.high:.3f}]" in text
    assert "draw-level: they cover the choice of draws from these contexts only" in text
    assert "percentile interval of 40 bootstrap replicates" in text
    off = _table(ceat_from_contexts(_contexts(7), n_draws=100, rng=0, bootstrap=0, test="T"))
    assert "95% CI (contexts): not computed (--bootstrap 0)." in off
    row = next(ln for ln in off.splitlines() if ln.startswith("raw"))
    assert " - " in row


def test_records_carry_the_contexts_interval():
    (r,) = ceat_from_contexts(_contexts(8), n_draws=50, rng=0, bootstrap=20)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["contexts_low"] == r.contexts.low and d["contexts_n_boot"] == 20 and d["contexts_method"] == "percentile"
    assert r.records()[0]["contexts_high"] == r.contexts.high
    (off,) = ceat_from_contexts(_contexts(8), n_draws=50, rng=0, bootstrap=0)
    assert off.to_dict()["contexts_low"] is None


def _population_ces(mu: dict, sigma: float, g: np.random.Generator, n: int = 40_000) -> float:
    """The context-level CES: the published procedure on n draws, each a fresh context per word from the model."""
    u = {}
    for r, m in mu.items():
        c = m[None] + sigma * g.normal(size=(n, *m.shape))
        u[r] = c / np.linalg.norm(c, axis=2, keepdims=True)
    t = np.concatenate([u["X"], u["Y"]], axis=1)
    s = np.einsum("ntp,nap->nta", t, u["A"]).mean(2) - np.einsum("ntp,nap->nta", t, u["B"]).mean(2)
    nx = mu["X"].shape[0]
    d = _d_rows(s[:, :nx], s[:, nx:], 1)
    return random_effects(d, within_draw_variances(s, nx, d)).ces


def test_small_coverage_simulation():
    # contexts drawn afresh from a known model each time; the contexts interval holds the context-level CES
    # about 95% of the time (loose bound here at 60 runs; benchmarks/ceat_coverage.py: 0.93-0.97), the
    # draw-level one far less often
    g = np.random.default_rng(20261207)
    dim, nw = 8, 4
    base = g.normal(size=dim) * 0.5
    mu = {
        r: base + sign * 0.4 * np.eye(dim)[0] + 0.6 * g.normal(size=(nw, dim)) for r, sign in zip(ROLES, (1, -1, 1, -1))
    }
    truth = _population_ces(mu, 1.0, g)
    hits_c = hits_d = 0
    runs = 60
    for _ in range(runs):
        ctx = {r: [m + g.normal(size=(10, dim)) for m in mu[r]] for r in ROLES}
        (r,) = ceat_from_contexts(ctx, n_draws=100, rng=g, bootstrap=100)
        hits_c += r.contexts.low <= truth <= r.contexts.high
        hits_d += r.meta.ci_low <= truth <= r.meta.ci_high
    assert hits_c / runs >= 0.85
    assert hits_d / runs < hits_c / runs
    assert math.isfinite(truth)
