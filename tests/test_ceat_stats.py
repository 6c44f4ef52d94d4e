"""CEAT statistics (isoeat.stats.ceat): DerSimonian–Laird against hand numbers and a from-scratch version."""

from __future__ import annotations

import math

import numpy as np
import pytest

from isoeat._errors import ConfigError
from isoeat.stats.ceat import (
    ceat_from_contexts,
    check_draw_memory,
    draw_effect_sizes,
    draw_indices,
    effect_size_variance,
    random_effects,
)


def dl_from_scratch(d, v):
    """DerSimonian & Laird (1986), written out with plain loops (independent of the package)."""
    n = len(d)
    w = [1.0 / x for x in v]
    sw = sum(w)
    mean_f = sum(wi * di for wi, di in zip(w, d)) / sw
    q = sum(wi * (di - mean_f) ** 2 for wi, di in zip(w, d))
    c = sw - sum(wi * wi for wi in w) / sw
    tau2 = max(0.0, (q - (n - 1)) / c)
    ws = [1.0 / (vi + tau2) for vi in v]
    ces = sum(wi * di for wi, di in zip(ws, d)) / sum(ws)
    se = 1.0 / math.sqrt(sum(ws))
    # two-sided normal p: 2 * (1 - Phi(|z|)), Phi by the error function
    p = 2.0 * (1.0 - 0.5 * (1.0 + math.erf(abs(ces / se) / math.sqrt(2.0))))
    return ces, se, tau2, q, p


def test_three_studies_by_hand():
    # hand computation: d = (0, 0.6, 1.2), v = (0.1, 0.2, 0.4)
    # w = (10, 5, 2.5), sum 17.5; fixed mean 6/17.5 = 12/35
    # Q = sum w d^2 - (sum w d)^2 / sum w = 5.4 - 36/17.5 = 117/35
    # C = 17.5 - (100 + 25 + 6.25)/17.5 = 10; tau2 = (117/35 - 2)/10 = 47/350
    # w* = 1/(v + 47/350) = 350/82, 350/117, 350/187
    r = random_effects([0.0, 0.6, 1.2], [0.1, 0.2, 0.4])
    assert r.q == pytest.approx(117 / 35, rel=1e-12)
    assert r.tau2 == pytest.approx(47 / 350, rel=1e-12)
    ws = [350 / 82, 350 / 117, 350 / 187]
    ces = (ws[1] * 0.6 + ws[2] * 1.2) / sum(ws)
    assert r.ces == pytest.approx(ces, rel=1e-12)
    assert ces == pytest.approx(0.44252, abs=1e-5)  # the decimal worked by hand
    assert r.se == pytest.approx(1 / math.sqrt(sum(ws)), rel=1e-12)
    assert r.ci_low == pytest.approx(ces - 1.959964 / math.sqrt(sum(ws)), rel=1e-6)
    assert r.ci_high == pytest.approx(ces + 1.959964 / math.sqrt(sum(ws)), rel=1e-6)
    assert r.n == 3


def test_tau2_is_zero_at_its_boundary_and_positive_just_above():
    # d = (-1, 0, 1), v = 1: Q = 2 = N - 1 exactly, so tau2 = 0 and CES is the fixed-effect mean
    r = random_effects([-1.0, 0.0, 1.0], [1.0, 1.0, 1.0])
    assert r.q == 2.0
    assert r.tau2 == 0.0
    assert r.se == pytest.approx(1 / math.sqrt(3))
    # a = 1.01: Q = 2 a^2 = 2.0402, C = 3 - 3/3 = 2, tau2 = 0.0402 / 2 = 0.0201
    r2 = random_effects([-1.01, 0.0, 1.01], [1.0, 1.0, 1.0])
    assert r2.tau2 == pytest.approx(0.0201, rel=1e-9)
    # below the boundary (Q < N - 1) tau2 is clipped to 0, not negative
    assert random_effects([-0.5, 0.0, 0.5], [1.0, 1.0, 1.0]).tau2 == 0.0


def test_random_example_matches_from_scratch():
    g = np.random.default_rng(11)
    d = g.normal(0.5, 1.0, size=40)
    v = effect_size_variance(d, 8, 8)
    ces, se, tau2, q, p = dl_from_scratch(list(d), list(v))
    r = random_effects(d, v)
    assert tau2 > 0  # the example exercises the random-effects branch
    assert (r.ces, r.se, r.tau2, r.q) == pytest.approx((ces, se, tau2, q), rel=1e-10)
    assert r.p_value == pytest.approx(p, rel=1e-6, abs=1e-15)


def test_variance_of_d():
    # Hedges & Olkin: (nx + ny)/(nx ny) + d^2/(2(nx + ny)); nx=8, ny=6, d=0.5: 14/48 + 0.25/28
    assert float(effect_size_variance(0.5, 8, 6)) == pytest.approx(14 / 48 + 0.25 / 28)


def test_random_effects_refuses_bad_input():
    with pytest.raises(ConfigError):
        random_effects([0.1], [0.1])
    with pytest.raises(ConfigError):
        random_effects([0.1, 0.2], [0.1, 0.0])
    with pytest.raises(ConfigError):
        random_effects([0.1, float("nan")], [0.1, 0.1])


def _contexts(seed=0, dim=5):
    g = np.random.default_rng(seed)
    return {r: [g.normal(size=(int(g.integers(1, 5)), dim)) + (1.0 if r in "XA" else 0.0) for _ in range(3)]
            for r in "XYAB"}


def _picks(ctx, idx, i):
    """The context vectors draw ``i`` takes, as lists for X, Y, A, B (columns of ``idx`` in role order)."""
    picks, col = [], 0
    for r in "XYAB":
        picks.append([a[idx[i, col + j]] for j, a in enumerate(ctx[r])])
        col += len(ctx[r])
    return picks


def _d_by_hand(x_vecs, y_vecs, a_vecs, b_vecs):
    def cos(u, w):
        return float(np.dot(u, w) / (np.linalg.norm(u) * np.linalg.norm(w)))

    def s(w):
        return np.mean([cos(w, a) for a in a_vecs]) - np.mean([cos(w, b) for b in b_vecs])

    sx = [s(x) for x in x_vecs]
    sy = [s(y) for y in y_vecs]
    return (np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=1)


def test_draw_effect_sizes_match_a_loop_over_draws():
    ctx = _contexts()
    counts = [a.shape[0] for r in "XYAB" for a in ctx[r]]
    idx, seed = draw_indices(counts, 25, rng=3)
    assert seed == 3 and idx.shape == (25, 12)
    assert np.all(idx >= 0) and np.all(idx < np.array(counts))
    d = draw_effect_sizes(ctx, idx)
    for i in range(25):
        assert d[i] == pytest.approx(_d_by_hand(*_picks(ctx, idx, i)), rel=1e-10)


def test_every_context_is_drawn():
    idx, _ = draw_indices([1, 4], 2000, rng=0)
    assert set(idx[:, 0]) == {0}
    assert set(idx[:, 1]) == {0, 1, 2, 3}


def test_draws_reproducible_by_seed():
    ctx = _contexts(1)
    a = ceat_from_contexts(ctx, n_draws=50, rng=7)[0]
    b = ceat_from_contexts(ctx, n_draws=50, rng=7)[0]
    c = ceat_from_contexts(ctx, n_draws=50, rng=8)[0]
    assert a.effect_sizes == b.effect_sizes and a.meta == b.meta and a.seed == 7
    assert a.effect_sizes != c.effect_sizes


class _Identity:
    def transform(self, X):
        return np.array(X, dtype=np.float64)


class _Scale:
    """Stretches the first axis: changes cosines, so a calibrated CEAT must differ from raw."""

    def transform(self, X):
        X = np.array(X, dtype=np.float64)
        X[:, 0] *= 10.0
        return X


def test_calibrated_equals_raw_under_the_identity_and_uses_the_same_draws():
    ctx = _contexts(2)
    raw, ident, scaled = ceat_from_contexts(ctx, n_draws=60, rng=5, calibration={"id": _Identity(),
                                                                                   "scale": _Scale()})
    assert (raw.calibration, ident.calibration, scaled.calibration) == ("none", "id", "scale")
    assert ident.effect_sizes == raw.effect_sizes
    assert ident.meta == raw.meta
    assert scaled.effect_sizes != raw.effect_sizes
    # same draws: the scaled space's d equals the raw recipe applied to scaled contexts with the same seed
    sc_ctx = {r: [_Scale().transform(a) for a in ctx[r]] for r in "XYAB"}
    assert ceat_from_contexts(sc_ctx, n_draws=60, rng=5)[0].effect_sizes == scaled.effect_sizes


def test_result_records_and_n_contexts():
    ctx = _contexts(3)
    words = {r: [f"{r.lower()}{i}" for i in range(3)] for r in "XYAB"}
    r = ceat_from_contexts(ctx, n_draws=20, rng=0, test="T", model="m", words=words)[0]
    assert r.n_draws == 20 and (r.n_x, r.n_y, r.n_a, r.n_b) == (3, 3, 3, 3)
    assert r.n_contexts["x0"] == ctx["X"][0].shape[0]
    row = r.records()[0]
    assert row["ces"] == r.meta.ces and row["calibration"] == "none" and row["test"] == "T"
    assert "effect_sizes" not in row and len(r.to_dict(draws=True)["effect_sizes"]) == 20


def test_memory_budget_is_checked_at_its_boundary():
    # need = 8 * draws * (words + targets * attributes) bytes: 8 * 10 * (4 + 2 * 2) = 640
    check_draw_memory(10, 4, 2, 2, budget=640)
    with pytest.raises(ConfigError, match="budget"):
        check_draw_memory(10, 4, 2, 2, budget=639)
    with pytest.raises(ConfigError, match="budget"):
        ceat_from_contexts(_contexts(), n_draws=10**9, rng=0)


def test_ceat_checks_its_draws_against_the_budget_at_the_boundary(monkeypatch):
    import isoeat.stats.ceat as mod

    # _contexts: 12 words, |X| + |Y| = 6 targets, max(|A|, |B|) = 3: 8 * 10 * (12 + 6 * 3) = 2400 bytes for 10 draws
    monkeypatch.setattr(mod, "CEAT_MEMORY", 2400)
    assert len(ceat_from_contexts(_contexts(), n_draws=10, rng=0)[0].effect_sizes) == 10
    monkeypatch.setattr(mod, "CEAT_MEMORY", 2399)
    with pytest.raises(ConfigError, match="budget"):
        ceat_from_contexts(_contexts(), n_draws=10, rng=0)


def test_forest_figure_is_written_and_bad_suffix_refused(tmp_path):
    pytest.importorskip("matplotlib")
    from isoeat.reporting.ceat_figure import figure_ceat_forest, write_ceat_figure

    res = ceat_from_contexts(_contexts(4), n_draws=30, rng=0, calibration={"id": _Identity()})
    fig = figure_ceat_forest(res)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["id", "raw"]  # raw on top
    assert len(ax.collections) == 2 and all(len(c.get_offsets()) == 30 for c in ax.collections)  # every draw
    path = write_ceat_figure(res, tmp_path / "f.png", dpi=50)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ConfigError, match="png"):
        write_ceat_figure(res, tmp_path / "f.jpg")


def test_boundaries_of_the_inputs():
    import dataclasses

    with pytest.raises(ConfigError):
        effect_size_variance(0.5, 0, 8)
    with pytest.raises(ConfigError):
        effect_size_variance(0.5, 8, 0)
    assert float(effect_size_variance(0.0, 1, 1)) == 2.0  # (1 + 1)/(1 * 1): one word per set is allowed
    # exactly two effect sizes: accepted (one is refused above); hand: w = 10, 10; Q = 10*0.01*2 = 0.2 < 1
    r = random_effects([0.1, 0.3], [0.1, 0.1])
    assert r.tau2 == 0.0 and r.ces == pytest.approx(0.2) and r.se == pytest.approx(math.sqrt(0.05))
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.ces = 1.0
    # a negative CES has the same two-sided p as its mirror image
    neg, pos = random_effects([-0.1, -0.3], [0.1, 0.1]), random_effects([0.1, 0.3], [0.1, 0.1])
    assert neg.ces == -pos.ces and neg.p_value == pos.p_value
    assert pos.p_value == pytest.approx(math.erfc(0.2 / math.sqrt(0.05) / math.sqrt(2)))
    with pytest.raises(ConfigError):
        draw_indices([2, 2], 1, rng=0)
    with pytest.raises(ConfigError):
        draw_indices([2, 0], 5, rng=0)
    assert draw_indices([2, 2], 2, rng=0)[0].shape == (2, 2)


def test_set_checks():
    ctx = _contexts(5)
    two = {**ctx, "B": ctx["B"][:2]}  # two words in a set: enough
    assert len(ceat_from_contexts(two, n_draws=5, rng=0)[0].effect_sizes) == 5
    with pytest.raises(Exception, match="at least 2"):
        ceat_from_contexts({**ctx, "B": ctx["B"][:1]}, n_draws=5, rng=0)
    with pytest.raises(ConfigError):
        ceat_from_contexts({**ctx, "A": [np.zeros((0, 5)), *ctx["A"][1:]]}, n_draws=5, rng=0)
    with pytest.raises(ConfigError):
        ceat_from_contexts({**ctx, "A": [np.ones(5), *ctx["A"][1:]]}, n_draws=5, rng=0)
    with pytest.raises(ConfigError, match="dimensions"):
        ceat_from_contexts({**ctx, "A": [np.ones((2, 4)), *ctx["A"][1:]]}, n_draws=5, rng=0)
    with pytest.raises(ConfigError, match="all-zero vector"):
        ceat_from_contexts({**ctx, "A": [np.zeros((1, 5)), *ctx["A"][1:]]}, n_draws=5, rng=0)
    with pytest.raises(ConfigError, match="columns"):
        draw_effect_sizes(ctx, np.zeros((3, 11), dtype=np.int64))
    with pytest.raises(ConfigError, match="columns"):
        draw_effect_sizes(ctx, np.zeros(12, dtype=np.int64))


def test_unequal_target_sizes_and_ddof_zero():
    ctx = _contexts(6)
    ctx = {**ctx, "Y": ctx["Y"][:2]}  # |X| = 3, |Y| = 2
    counts = [a.shape[0] for r in "XYAB" for a in ctx[r]]
    idx, _ = draw_indices(counts, 15, rng=1)
    d1 = draw_effect_sizes(ctx, idx)
    d0 = draw_effect_sizes(ctx, idx, ddof=0)
    for i in range(15):
        assert d1[i] == pytest.approx(_d_by_hand(*_picks(ctx, idx, i)), rel=1e-10)
    # ddof=0 divides by n instead of n - 1: d larger by sqrt(n/(n-1)), n = 5
    np.testing.assert_allclose(d0, d1 * math.sqrt(5 / 4), rtol=1e-12)


def test_log10_p_beyond_float_range():
    mpmath = pytest.importorskip("mpmath")
    from isoeat.commands.ceat import _p_text
    from isoeat.stats.ceat import log10_two_sided_p

    mpmath.mp.dps = 50
    for z in (0.5, 3.0, 30.0, 36.0, 38.0, 39.0, 60.0, 400.0):  # both sides of the 1e-300 switch (|z| ~ 37)
        expect = float(mpmath.log10(mpmath.erfc(mpmath.mpf(z) / mpmath.sqrt(2))))
        # p itself to a relative 5e-12 (log10 to 2e-12, plus float rounding of a large log): every series term counts
        assert log10_two_sided_p(z) == pytest.approx(expect, rel=0, abs=2e-12 + 1e-15 * abs(expect))
        assert log10_two_sided_p(-z) == log10_two_sided_p(z)
    # z = 39: p = erfc(39/sqrt 2) = 1.3e-332 by mpmath, below the smallest normal float: printed, not "0"
    meta = random_effects([0.39, 0.39], [0.02, 0.02])  # CES 0.39, SE 0.1: z = 3.9 (ordinary p)
    from isoeat.reporting.tables import format_p

    assert _p_text(meta) == format_p(meta.p_value)  # an ordinary p is printed as everywhere else
    from isoeat.stats.ceat import MetaAnalysis

    tiny = MetaAnalysis(ces=3.9, se=0.1, ci_low=0, ci_high=0, p_value=0.0, tau2=0, q=0, n=2,
                        log10_p=float(mpmath.log10(mpmath.erfc(39 / mpmath.sqrt(2)))))
    assert _p_text(tiny) == "1.1e-332"  # mpmath: erfc(39 / sqrt 2) = 1.1e-332


def test_two_draws_are_enough_and_one_is_refused():
    assert ceat_from_contexts(_contexts(), n_draws=2, rng=0)[0].meta.n == 2
    with pytest.raises(ConfigError):
        ceat_from_contexts(_contexts(), n_draws=1, rng=0)


def test_default_is_1000_draws():
    # issue 18: "N random draws (default 1,000, seeded)"
    (raw,) = ceat_from_contexts(_contexts(1), rng=0)
    assert raw.meta.n == 1000 and len(raw.effect_sizes) == 1000


def test_default_budget_is_2_gib_at_its_boundary():
    # need = 8 * draws * (4 + 2 * 2) = 64 * draws: 2**25 draws need exactly 2 GiB (the documented default)
    check_draw_memory(2**25, 4, 2, 2)
    with pytest.raises(ConfigError, match="budget"):
        check_draw_memory(2**25 + 1, 4, 2, 2)


def test_log10_p_of_the_combined_effect_is_that_of_its_z():
    from scipy.stats import norm

    m = random_effects([0.2, 0.5, 0.9, 0.4], [0.04, 0.09, 0.05, 0.02])
    z = m.ces / m.se                                      # Wald z of the combined effect
    assert m.log10_p == pytest.approx(math.log10(2 * norm.sf(abs(z))), abs=1e-9)
    assert m.p_value == pytest.approx(2 * norm.sf(abs(z)), rel=1e-9)


def test_a_word_needs_at_least_one_context_row():
    ctx = _contexts(4)
    ctx["Y"][1] = np.empty((0, 5))                         # a word with no context at all
    with pytest.raises(ConfigError, match=r"n_contexts >= 1"):
        ceat_from_contexts(ctx, n_draws=5, rng=0)
    ctx["Y"][1] = np.ones((1, 5))                          # exactly one context: accepted
    assert len(ceat_from_contexts(ctx, n_draws=5, rng=0)[0].effect_sizes) == 5


def test_results_are_frozen_and_ddof_defaults_to_1():
    import dataclasses

    ctx = _contexts(6)
    r = ceat_from_contexts(ctx, n_draws=30, rng=2)[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.test = "other"
    # d with the sample SD (ddof=1, as Caliskan et al. and isoeat's WEAT) unless asked otherwise
    assert r.effect_sizes == ceat_from_contexts(ctx, n_draws=30, rng=2, ddof=1)[0].effect_sizes
    assert r.effect_sizes != ceat_from_contexts(ctx, n_draws=30, rng=2, ddof=0)[0].effect_sizes


class _FakeContextual:
    """A stand-in contextual model: fixed context vectors per word, no forward pass."""

    name = "fake"

    def __init__(self, ctx):
        self.vecs = {f"{r.lower()}{i}": a for r in "XYAB" for i, a in enumerate(ctx[r])}

    def context_vectors(self, words):
        return {w: self.vecs[w] for w in words if w in self.vecs}, {"dropped": [w for w in words if w not in self.vecs]}


def _fake_test(n=3, missing=()):
    from isoeat import AssociationTest, WordSet

    sets = {r: WordSet(r, tuple(f"{r.lower()}{i}" for i in range(n)) + tuple(missing if r == "Y" else ()))
            for r in "XYAB"}
    return AssociationTest(id="T", bias_type="Custom", **sets)


def test_ceat_on_a_model_defaults_to_ddof_1_and_needs_two_words_per_set():
    from isoeat import CoverageError
    from isoeat.stats.ceat import ceat

    ctx = _contexts(7)
    model = _FakeContextual(ctx)
    (r,) = ceat(model, _fake_test(), n_draws=25, rng=3)          # three words a set: more than the minimum
    from _streams import stream_seed

    (want,) = ceat_from_contexts(ctx, n_draws=25, rng=stream_seed(3, "ceat", "T"), ddof=1)  # its named stream of 3
    assert r.effect_sizes == want.effect_sizes and (r.seed, r.seed_stream) == (3, ("ceat", "T"))
    (r2,) = ceat(model, _fake_test(n=2), n_draws=5, rng=0)        # exactly two words: accepted
    assert (r2.n_x, r2.n_y) == (2, 2)
    small = _fake_test(n=1, missing=("zz",))                      # one word with contexts (+1 unknown): refused
    with pytest.raises(CoverageError, match="at least 2"):
        ceat(model, small, n_draws=5, rng=0)
