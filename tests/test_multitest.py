"""Tests for isoeat.stats.multitest.

Reference values: hand computation (worked inline) and, when importable,
statsmodels.stats.multitest.multipletests (methods "holm" and "fdr_bh").
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isoeat._errors import ConfigError
from isoeat.stats.multitest import adjust, benjamini_hochberg, holm

P = [0.01, 0.04, 0.03, 0.005]


def test_holm_hand_computed():
    # sorted: 0.005, 0.01, 0.03, 0.04 with factors 4, 3, 2, 1
    # -> 0.02, 0.03, 0.06, 0.04 -> running max 0.02, 0.03, 0.06, 0.06
    np.testing.assert_allclose(holm(P), [0.03, 0.06, 0.06, 0.02], rtol=0, atol=1e-15)
    np.testing.assert_allclose(adjust(P, "holm"), [0.03, 0.06, 0.06, 0.02], rtol=0, atol=1e-15)


def test_bh_hand_computed():
    # sorted: 0.005, 0.01, 0.03, 0.04 times m/j = 4, 2, 4/3, 1
    # -> 0.02, 0.02, 0.04, 0.04 -> running min from the top: 0.02, 0.02, 0.04, 0.04
    np.testing.assert_allclose(benjamini_hochberg(P), [0.02, 0.04, 0.04, 0.02], rtol=0, atol=1e-15)
    np.testing.assert_allclose(adjust(P, "bh"), [0.02, 0.04, 0.04, 0.02], rtol=0, atol=1e-15)


def test_ties_and_cap_hand_computed():
    # Holm on [0.04]*3: 0.12, 0.08, 0.04 -> running max 0.12 everywhere
    np.testing.assert_allclose(holm([0.04, 0.04, 0.04]), [0.12, 0.12, 0.12], atol=1e-15)
    # BH on [0.04]*3: 0.12, 0.06, 0.04 -> running min from the top 0.04 everywhere
    np.testing.assert_allclose(benjamini_hochberg([0.04, 0.04, 0.04]), [0.04] * 3, atol=1e-15)
    # capping: Holm 3 * 0.5 = 1.5 -> 1
    np.testing.assert_allclose(holm([0.5, 0.6, 0.9]), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(benjamini_hochberg([0.9]), [0.9])


def test_nan_passed_through_and_excluded_from_family():
    # with the NaN removed the family is P (m = 4), so the values are as above
    p = [0.01, np.nan, 0.04, 0.03, 0.005]
    h = holm(p)
    b = benjamini_hochberg(p)
    assert np.isnan(h[1]) and np.isnan(b[1])
    np.testing.assert_allclose(h[[0, 2, 3, 4]], [0.03, 0.06, 0.06, 0.02], atol=1e-15)
    np.testing.assert_allclose(b[[0, 2, 3, 4]], [0.02, 0.04, 0.04, 0.02], atol=1e-15)
    assert np.all(np.isnan(holm([np.nan, np.nan])))
    assert holm([]).shape == (0,)


def test_shape_preserved():
    p = np.array([[0.01, 0.04], [0.03, 0.005]])
    np.testing.assert_allclose(holm(p), [[0.03, 0.06], [0.06, 0.02]], atol=1e-15)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=30))
def test_properties(pvals):
    p = np.array(pvals)
    for fn in (holm, benjamini_hochberg):
        adj = fn(p)
        assert np.all(adj >= p - 1e-15) and np.all(adj <= 1.0)
        # monotone: a larger raw p never gets a smaller adjusted p
        order = np.argsort(p, kind="stable")
        assert np.all(np.diff(adj[order]) >= -1e-15)
    assert np.all(benjamini_hochberg(p) <= holm(p) + 1e-15)


# multipletests takes ~40 ms per call here, so few examples
@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=25))
def test_against_statsmodels(pvals):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.array(pvals)
    np.testing.assert_allclose(holm(p), multitest.multipletests(p, method="holm")[1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(
        benjamini_hochberg(p), multitest.multipletests(p, method="fdr_bh")[1], rtol=1e-12, atol=1e-15
    )


def test_against_statsmodels_fixed():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.random.default_rng(0).uniform(0, 0.2, size=40)
    p[::7] = p[1]  # ties
    np.testing.assert_allclose(holm(p), multitest.multipletests(p, method="holm")[1], rtol=1e-12)
    np.testing.assert_allclose(benjamini_hochberg(p), multitest.multipletests(p, method="fdr_bh")[1], rtol=1e-12)


def test_errors():
    with pytest.raises(ConfigError) as info:
        adjust(P, method="bonferroni")
    assert "method must be one of holm, bh; got 'bonferroni'" in str(info.value)
    with pytest.raises(ConfigError, match="pvalues"):
        holm([0.5, 1.5])
    with pytest.raises(ConfigError, match="pvalues"):
        benjamini_hochberg([-0.1])
