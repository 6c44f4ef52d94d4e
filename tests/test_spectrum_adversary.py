"""Adversary of the frame's exact spectrum and the sampled share's SE (issue 45, item 4).

Expected values come from numpy here (``np.cov`` and ``np.linalg.eigvalsh`` on the frame's rows, token
frames with ``fweights``) and from hand decimals at the 2-SE boundary, never from the code under test.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from isoeat.diagnostics.isotropy_check import isotropy_check


# The boundary is inclusive (isotropy_check's docstring: "within 2 SE, inclusive"). These (share, SE) pairs sit
# exactly 2 SE from 5/50 = 0.1 as decimals (hand arithmetic: 0.098 = 0.1 - 2 x 0.001, 0.01 = 0.1 - 2 x 0.045,
# 0.102 = 0.1 + 2 x 0.001, 0.13 = 0.1 + 2 x 0.015), yet float subtraction put some a hair beyond it.
@pytest.mark.parametrize(
    "share, se", [(0.098, 0.001), (0.01, 0.045), (0.102, 0.001), (0.13, 0.015), (0.096, 0.002), (0.038, 0.031)]
)
def test_borderline_exactly_at_two_se(share: float, se: float) -> None:
    assert abs(Fraction(str(share)) - Fraction(1, 10)) == 2 * Fraction(str(se))  # the hand example holds
    assert isotropy_check(0.01, 0.9, share, 50, top_pc_se=se).borderline == ("top-PC share",)


@pytest.mark.parametrize("share, se", [(0.0979, 0.001), (0.1021, 0.001)])
def test_not_borderline_just_beyond_two_se(share: float, se: float) -> None:
    assert isotropy_check(0.01, 0.9, share, 50, top_pc_se=se).borderline == ()


def test_exact_top_pc_share_of_glove_paper_frames_equals_numpy() -> None:
    """The exact share over the whole frame, centred, token frames weighted by their counts (np.cov fweights)."""
    import isoeat
    from isoeat.diagnostics.frames import frame_population

    m = isoeat.load_model("glove-6b-50d")
    for frame in ("paper", "paper-tokens"):
        pop = frame_population(m, frame)
        X = np.asarray(m.vectors[pop.rows], dtype=np.float64)
        lam = np.linalg.eigvalsh(np.cov(X.T, fweights=pop.weights))
        res = isoeat.anisotropy(m, frame=frame)
        assert res.spectrum_method == "exact" and res.top_pc_share_se == 0.0
        assert res.explained_variance_ratio[0] == pytest.approx(lam[-1] / lam.sum(), rel=1e-9)
    assert round(float(lam[-1] / lam.sum()), 4) != 0.1060  # the token frame is not the types' 0.1060


def test_sampled_share_se_matches_the_spread_over_samples() -> None:
    """The delta-method SE against the SD of the share over 200 samples of 2,000 from a synthetic frame of 8,000
    (numpy only: eigvalsh of np.cov per sample); within 20% (the SD of 200 draws is itself within ~10%)."""
    from isoeat.diagnostics.frame_spectrum import top_pc_share_se

    g = np.random.default_rng(45)
    F = g.normal(size=(8000, 20)) * np.linspace(2.0, 0.5, 20)
    shares, ses = [], []
    for _ in range(200):
        X = F[g.choice(len(F), 2000, replace=False)]
        lam = np.linalg.eigvalsh(np.cov(X.T))
        shares.append(lam[-1] / lam.sum())
        ses.append(top_pc_share_se(X, len(F)))
    assert np.mean(ses) == pytest.approx(np.std(shares, ddof=1), rel=0.2)
