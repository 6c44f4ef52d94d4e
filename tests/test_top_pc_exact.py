"""Issue 45 item 3: the isotropy verdict's top-PC share (and IsoScore) over the whole frame, or with its SE.

Expected values are computed here from scratch with numpy (``np.cov`` and ``np.linalg.eigvalsh`` of the
frame's rows; IsoScore by Rudman et al. 2022, Algorithm 1, written out below) or, for GloVe, the figure the
issue states (0.1060, exact over the frame).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import isoeat
from isoeat.diagnostics import compare_anisotropy
from isoeat.diagnostics import frame_cosine as fc
from isoeat.diagnostics.frame_spectrum import frame_covariance, top_pc_share_se
from isoeat.diagnostics.frames import frame_or_pool
from isoeat.diagnostics.isotropy_check import BORDERLINE_SE, isotropy_check, isotropy_lines


def _isoscore(lam: np.ndarray) -> float:
    """Rudman et al. (2022), Algorithm 1, from the covariance eigenvalues (steps 3-6 of the paper)."""
    n = lam.size
    sig = math.sqrt(n) * lam / np.linalg.norm(lam)
    delta = np.linalg.norm(sig - 1) / math.sqrt(2 * (n - math.sqrt(n)))
    return ((n - delta**2 * (n - math.sqrt(n))) ** 2 - n) / (n * (n - 1))


@pytest.fixture(scope="module")
def glove():
    return isoeat.load_model("glove-6b-50d")


def test_glove_paper_frame_top_pc_share_is_exact(glove):
    pop, why = frame_or_pool(glove, "paper", 2000)
    assert pop is not None and not why
    rows = np.vstack([b for b, _ in pop.blocks()])
    lam = np.sort(np.linalg.eigvalsh(np.cov(rows.T)))[::-1]  # centred, ddof 1: as explained_variance_ratio
    (raw,) = compare_anisotropy(glove, None, n_samples=2000, rng=0, frame="paper")
    assert raw.spectrum_method == "exact"
    assert raw.explained_variance_ratio[0] == pytest.approx(lam[0] / lam.sum(), abs=1e-12)
    assert round(raw.explained_variance_ratio[0], 4) == 0.1060  # the exact figure
    assert raw.isoscore == pytest.approx(_isoscore(lam), abs=1e-10)
    assert raw.top_pc_share_se == 0.0
    # the sample's own figure kept beside it: the 2,000 sampled rows' covariance
    assert raw.sample_top_pc_share != raw.explained_variance_ratio[0]
    assert 0.10 < raw.sample_top_pc_share < 0.12


def test_calibrated_space_spectrum_is_the_transformed_frames(glove):
    zca = isoeat.fit_calibrator(glove, "zca", n_reference=5000)
    pop, _ = frame_or_pool(glove, "paper", 2000)
    Z = zca.transform(np.vstack([b for b, _ in pop.blocks()]))
    lam = np.sort(np.linalg.eigvalsh(np.cov(np.asarray(Z).T)))[::-1]
    _, white = compare_anisotropy(glove, zca, n_samples=2000, rng=0, frame="paper")
    assert white.explained_variance_ratio[0] == pytest.approx(lam[0] / lam.sum(), abs=1e-12)
    assert white.isoscore == pytest.approx(_isoscore(lam), abs=1e-10)


def test_weighted_frame_covariance_counts_copies():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 5)) + 3.0
    w = rng.integers(1, 4, size=40)
    expect = np.cov(np.repeat(X, w, axis=0).T)  # every token a row
    got = frame_covariance([(X[:17], w[:17]), (X[17:], w[17:])])
    assert np.allclose(got, expect, atol=1e-12)


def test_sampled_share_se_matches_spread_over_samples():
    # a frame of 20,000 rows with one dominant direction; samples of 1,000 without replacement
    rng = np.random.default_rng(7)
    frame = rng.normal(size=(20_000, 10)) * np.array([2.0] + [1.0] * 9)
    shares, ses = [], []
    for _ in range(300):
        S = frame[rng.choice(len(frame), 1000, replace=False)]
        lam = np.linalg.eigvalsh(np.cov(S.T))
        shares.append(lam[-1] / lam.sum())
        ses.append(top_pc_share_se(S, len(frame)))
    assert np.mean(ses) == pytest.approx(np.std(shares, ddof=1), rel=0.15)


def test_over_budget_frame_gives_sampled_share_with_se(glove, monkeypatch):
    monkeypatch.setattr(fc, "EXACT_BUDGET", 1.0)  # every frame over the budget
    (raw,) = compare_anisotropy(glove, None, n_samples=2000, rng=0, frame="paper")
    assert raw.spectrum_method == "sampled"
    assert raw.explained_variance_ratio[0] == raw.sample_top_pc_share
    assert 0 < raw.top_pc_share_se < 0.01
    lines = isotropy_lines("glove-6b-50d", raw.to_dict())
    assert f"top-PC share {raw.sample_top_pc_share:.4f} ± {raw.top_pc_share_se:.4f} (SE)" in lines[1]


def test_borderline_at_two_se():
    # d = 64: threshold 5/64 = 0.078125; SE 1/128; all exactly representable
    thr, se = 5 / 64, 1 / 128
    at = isotropy_check(0.01, 0.9, thr + BORDERLINE_SE * se, 64, top_pc_se=se)
    assert at.borderline == ("top-PC share",) and at.verdict == "anisotropic"
    below = isotropy_check(0.01, 0.9, thr - BORDERLINE_SE * se, 64, top_pc_se=se)
    assert below.borderline == ("top-PC share",) and below.verdict == "near-isotropic"
    beyond = isotropy_check(0.01, 0.9, np.nextafter(thr + BORDERLINE_SE * se, 1.0), 64, top_pc_se=se)
    assert beyond.borderline == ()
    assert isotropy_check(0.01, 0.9, thr, 64, top_pc_se=0.0).borderline == ()  # exact: never borderline


def test_isotropy_line_names_exact_spectrum(glove):
    (raw,) = compare_anisotropy(glove, None, n_samples=2000, rng=0, frame="paper")
    lines = isotropy_lines("glove-6b-50d", raw.to_dict())
    assert "mean cosine, IsoScore and top-PC share exact over its 16,804 vectors" in lines[0]
    assert "top-PC share 0.1060 (if >= 5/d = 0.1): ANISOTROPIC" in lines[1]
    assert "borderline" not in lines[0]


def test_paper_tokens_frame_is_the_token_reading_of_the_paper_corpus(glove):
    # the same text as frame paper, read as tokens: a word counted once per occurrence (docs/diagnostics.md)
    types, _ = frame_or_pool(glove, "paper", 2000)
    tokens, why = frame_or_pool(glove, "paper-tokens", 2000)
    assert not why and tokens.source == types.source
    assert np.array_equal(np.sort(tokens.rows), np.sort(types.rows))  # the same words
    assert tokens.count == int(tokens.weights.sum()) == 196_982 and types.count == 16_804
    (raw,) = compare_anisotropy(glove, None, n_samples=2000, rng=0, frame="paper-tokens")
    assert raw.frame == "paper-tokens" and raw.frame_size == 196_982
    assert round(raw.mean_cosine, 4) == 0.4313  # docs/diagnostics.md frame table, corpus-tokens of the same text


def test_paper_tokens_is_refused_on_a_contextual_model():
    from isoeat.diagnostics.frames import static_frame_refusal

    assert "applies to static vector models" in static_frame_refusal("paper-tokens", "minilm")
