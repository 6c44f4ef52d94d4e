"""Battery-level features: adjusted p, bootstrap intervals on d, SC-WEAT, sequential Monte Carlo."""

from __future__ import annotations

import numpy as np
import pytest

import isoeat
from isoeat.cli import main
from isoeat.stats.weat import cosine_matrix


@pytest.fixture(scope="module")
def comparison(glove, glove_zca):
    return isoeat.compare_calibration(glove, ["W1", "W4", "W6", "W7", "W8", "W9", "W10"], calibration=glove_zca, rng=0)


def test_adjusted_p_match_statsmodels(comparison):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    for space in ("raw", "calibrated"):
        res = [getattr(r, space) for r in comparison.rows]
        p = np.array([r.p_value for r in res])
        holm = multitest.multipletests(p, method="holm")[1]
        bh = multitest.multipletests(p, method="fdr_bh")[1]
        np.testing.assert_allclose([r.p_holm for r in res], holm, rtol=1e-12)
        np.testing.assert_allclose([r.p_bh for r in res], bh, rtol=1e-12)
        assert all(r.p_holm >= r.p_value for r in res)  # reported next to p, never replacing it


def test_change_classes_follow_unadjusted_p(comparison):
    for row in comparison.rows:
        assert row.change == isoeat.classify_change(row.raw.p_value, row.calibrated.p_value)
        assert row.delta_d == pytest.approx(row.calibrated.effect_size - row.raw.effect_size)


def test_classify_change_cases():
    assert isoeat.classify_change(0.01, 0.02) == "Stable"
    assert isoeat.classify_change(0.2, 0.3) == "Stable"
    assert isoeat.classify_change(0.049, 0.051) == "Disappearing"
    assert isoeat.classify_change(0.051, 0.049) == "Emerging"
    with pytest.raises(isoeat.ConfigError, match="alpha"):
        isoeat.classify_change(0.1, 0.1, alpha=1.5)


def test_bootstrap_interval_on_d(glove):
    a = isoeat.weat(glove, "W8", bootstrap=2000, rng=4, ci_method="percentile")
    b = isoeat.weat(glove, "W8", bootstrap=2000, rng=4, ci_method="percentile")
    assert a.effect_size_ci_low == b.effect_size_ci_low and a.effect_size_ci_high == b.effect_size_ci_high
    assert a.effect_size_ci_low < a.effect_size < a.effect_size_ci_high
    assert a.effect_size_ci_method == "percentile" and a.effect_size_ci_resamples == 2000
    c = isoeat.weat(glove, "W8", bootstrap=2000, rng=4, resample_attributes=True, ci_method="bca")
    assert c.effect_size_ci_method.endswith("+attributes")
    assert (c.effect_size_ci_high - c.effect_size_ci_low) > 0
    plain = isoeat.weat(glove, "W8")
    assert np.isnan(plain.effect_size_ci_low) and plain.effect_size_ci_resamples == 0
    with pytest.raises(isoeat.ConfigError, match="bootstrap"):
        isoeat.weat(glove, "W8", bootstrap=-1)


def test_sequential_monte_carlo_stops_early(glove):
    r = isoeat.weat(glove, "W3", method="monte-carlo", n_permutations=100_000, rng=0, sequential_alpha=0.05)
    assert r.stopped_early and r.n_permutations < 100_000
    assert r.p_ci_high < 0.05  # stopped because the interval lies clear of alpha


def test_exact_beyond_budget_is_a_clear_error(glove):
    with pytest.raises(isoeat.ConfigError, match=r"monte-carlo") as exc:
        isoeat.weat(glove, "W3", method="exact")
    assert "1832624140942590534" in str(exc.value).replace(",", "")  # C(64,32)


def test_sc_weat_model_level_equals_vector_level(glove):
    (r,) = isoeat.sc_weat(glove, ["engineer"], "W7", rng=0)
    t = isoeat.get_test("W7")
    A, B = glove.lookup(t.A.words).vectors, glove.lookup(t.B.words).vectors
    w = glove.lookup(["engineer"]).vectors[0]
    ca, cb = cosine_matrix(w[None], A)[0], cosine_matrix(w[None], B)[0]
    assert r.statistic == pytest.approx(ca.mean() - cb.mean(), abs=1e-12)
    assert r.effect_size == pytest.approx((ca.mean() - cb.mean()) / np.std(np.r_[ca, cb], ddof=1), abs=1e-12)
    assert r.p_method == "exact" and r.n_partitions == 12870
    with pytest.raises(isoeat.CoverageError, match="qqqzzz"):
        isoeat.sc_weat(glove, "qqqzzz", "W7")


def test_cli_scweat_and_adjust(capsys, glove):
    assert main(["scweat", "--words", "nurse,engineer", "--attributes", "W7"]) == 0
    out = capsys.readouterr().out
    assert "nurse" in out and "Male terms" in out
    assert main(["run", "--tests", "W6,W9", "--adjust", "bh", "--bootstrap", "200", "--ci-method", "percentile"]) == 0
    out = capsys.readouterr().out
    assert "BH_R" in out and "CI_R" in out and "200 resamples" in out
