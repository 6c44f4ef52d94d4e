"""Cosines are right for any finite vectors, however large or small their scale."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError
from isoeat.stats.weat import cosine_matrix, weat_from_vectors


def _w6(glove):
    t = isoeat.get_test("W6")
    return [glove.lookup(t.sets()[r].words).vectors for r in "XYAB"]


def test_scaled_vectors_give_the_same_effect_size(glove):
    X, Y, A, B = _w6(glove)
    base = weat_from_vectors(X, Y, A, B, rng=0)
    X2, A2, B2 = X.copy(), A.copy(), B.copy()
    X2[0] *= 1e200
    A2[1] *= 1e-170
    B2[3] *= 1e-300  # subnormal territory: still a direction
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaled = weat_from_vectors(X2, Y, A2, B2, rng=0)
    assert scaled.effect_size == pytest.approx(base.effect_size, abs=1e-12, rel=0)
    assert scaled.p_value == base.p_value and scaled.count == base.count


def test_cosine_matrix_extremes():
    U = np.array([[3e300, 4e300], [3e-320, 4e-320], [1.0, 0.0]])
    V = np.array([[4e-200, 3e-200], [0.0, 1e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = cosine_matrix(U, V)
    expected = np.array([[24 / 25, 4 / 5], [24 / 25, 4 / 5], [4 / 5, 0.0]])
    np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-15)  # row 1 is subnormal: few bits
    np.testing.assert_allclose(c[0], expected[0], rtol=1e-15)


@pytest.mark.parametrize("bad,word", [(0.0, "all-zero"), (np.nan, "not finite"), (np.inf, "not finite")])
def test_cosine_refuses_only_zero_or_non_finite_rows(bad, word):
    U = np.array([[1.0, 2.0], [bad, bad]])
    with pytest.raises(ConfigError, match=word) as info:
        cosine_matrix(U, np.eye(2))
    assert "\n" not in str(info.value) and "row 1" in str(info.value)
