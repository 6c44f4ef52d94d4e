"""Bad-input catalogue, round 4 (issue 40), group A: npy matrices and their vocabularies, compressed
vector files, calibrator paths, float32 defining pairs that cancel, frames smaller than their dimension,
extreme rows in a reference sample.

CLI cases end in a one-line isoeat error, exit 2, a message naming the cause (file, row, word), no
traceback, nothing written in the temporary folder. Library cases raise an IsoeatError subclass with a
one-line message. Value cases derive the expected number independently in the test.

Counts: CLI_CASES + LIBRARY_CASES + PAIR_CASES + FRAME_CASES (+ REFERENCE_CASES) = TOTAL_CASES bad-input cases.
"""

from __future__ import annotations

import bz2
import io
import lzma

import numpy as np
import pytest

from isoeat import ConfigError, DataFormatError, IsoeatError
from isoeat.cli import main

from ._oneline import assert_one_line_error
from ._oneline import snapshot as _snapshot

_RNG = np.random.default_rng(40)
_M = _RNG.normal(size=(50, 10)).astype(np.float32)
_VOCAB50 = "".join(f"w{i}\n" for i in range(50))
_VOCAB49 = "".join(f"w{i}\n" for i in range(49))
_TEXT = "".join(f"w{i} " + " ".join(f"{x:.5f}" for x in _M[i]) + "\n" for i in range(50))


def _npy(m):
    buf = io.BytesIO()
    np.save(buf, m)
    return buf.getvalue()


def _npz(**arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _with_nan(row):
    m = _M.copy()
    m[row, 2] = np.nan
    return _npy(m)


# item 1: a reference sample (60 rows, dimension 8) whose row 21 is scaled by s, and a test on its first words
_REF = np.random.default_rng(1).normal(size=(60, 8)) @ np.diag(np.linspace(0.5, 2, 8)) + 0.3
_TOY_TEST = "id: toy\nbias_type: toy\nX: [w0, w1, w2, w3]\nY: [w4, w5, w6, w7]\nA: [w8, w9, w10, w11]\nB: [w12, w13, w14, w15]\n"


def _scaled_reference(s, row=20):
    R = _REF.copy()
    R[row] *= s
    return R


def _glove_text(R):
    return "".join(f"w{i} " + " ".join(repr(float(x)) for x in R[i]) + "\n" for i in range(len(R)))


def _weat_zca(s):
    return ({"v.txt": _glove_text(_scaled_reference(s)), "t.yaml": _TOY_TEST},
            ["weat", "--model", "glove:{d}/v.txt", "--test", "{d}/t.yaml", "--calibration", "zca",
             "--reference-size", "60"])


CLI_CASES = [
    # item 1: an extreme row is named, never a wrong d (1e8) nor the test's sets blamed (1e30)
    ("reference row scaled by 1e8", *_weat_zca(1e8), "reference row 21 causes it"),
    ("reference row scaled by 1e30", *_weat_zca(1e30), "reference row 21 causes it (distance 4.41e+30"),
    # item 28: the message says both counts and names both files
    ("npy vocabulary one entry short", {"m.npy": _npy(_M), "v.txt": _VOCAB49},
     ["anisotropy", "--model", "npy:{d}/m.npy,{d}/v.txt"],
     "{d}/v.txt: the vocabulary has 49 entries but the matrix {d}/m.npy has 50 rows"),
    ("npy vocabulary one entry long", {"m.npy": _npy(_M), "m.vocab": _VOCAB50 + "extra\n"},
     ["anisotropy", "--model", "npy:{d}/m.npy"], "{d}/m.vocab: the vocabulary has 51 entries but the matrix {d}/m.npy"),
    # item 21: an .npz archive where a .npy matrix is expected
    ("npy spec naming an npz archive", {"a.npz": _npz(m=_M), "v.txt": _VOCAB50},
     ["anisotropy", "--model", "npy:{d}/a.npz,{d}/v.txt"], "{d}/a.npz: a .npz archive (arrays: m), not a .npy matrix"),
    ("npz archive without its vocabulary", {"a.npz": _npz(vectors=_M)},
     ["anisotropy", "--model", "npy:{d}/a.npz"], "a.npz: a .npz archive (arrays: vectors), not a .npy matrix"),
    # item 11: a NaN row is refused, file, row and word named (as the text reader does), never dropped
    ("npy NaN row in the reference sample", {"m.npy": _with_nan(3), "m.vocab": _VOCAB50},
     ["whiten", "--model", "npy:{d}/m.npy", "--out", "{d}/w.npz", "--reference-size", "50"],
     "{d}/m.npy: row 4 (word 'w3', {d}/m.vocab:4) has NaN or inf values"),
    ("npy NaN in the last row", {"m.npy": _with_nan(49), "m.vocab": _VOCAB50},
     ["anisotropy", "--model", "npy:{d}/m.npy"], "{d}/m.npy: row 50 (word 'w49', {d}/m.vocab:50) has NaN"),
    # item 34: compressions other than gzip are said to be unsupported, with what is supported
    ("bz2 vector file", {"v.txt.bz2": bz2.compress(_TEXT.encode())},
     ["anisotropy", "--model", "glove:{d}/v.txt.bz2"],
     "v.txt.bz2: bzip2 compression is not supported (this file is read uncompressed or gzip-compressed (.gz) only"),
    ("xz vector file under a plain name", {"v.txt": lzma.compress(_TEXT.encode())},
     ["anisotropy", "--model", "glove:{d}/v.txt"], "v.txt: xz compression is not supported"),
    ("bz2 npy matrix", {"m.npy.bz2": bz2.compress(_npy(_M)), "v.txt": _VOCAB50},
     ["anisotropy", "--model", "npy:{d}/m.npy.bz2,{d}/v.txt"], "m.npy.bz2: bzip2 compression is not supported"),
    ("bz2 word2vec binary", {"v.bin.bz2": bz2.compress(b"2 3\n")},
     ["anisotropy", "--model", "word2vec:{d}/v.bin.bz2"], "v.bin.bz2: bzip2 compression is not supported"),
]


@pytest.mark.parametrize("name, files, args, expected", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_bad_input_gives_one_line_error(tmp_path, capsys, monkeypatch, name, files, args, expected):
    assert_one_line_error(tmp_path, capsys, monkeypatch, name, files, args, expected)


# --- library cases ------------------------------------------------------------------------------
def _fitted():
    from isoeat import ZCAWhitener

    return ZCAWhitener().fit(np.random.default_rng(0).normal(size=(40, 5)))


def _save_into_folder(d):
    from isoeat import save_calibrator

    (d / "out").mkdir()
    save_calibrator(_fitted(), d / "out")


def _save_into_folder_npz(d):
    from isoeat import save_calibrator

    (d / "out.npz").mkdir()
    save_calibrator(_fitted(), d / "out")


def _save_with_trailing_slash(d):
    from isoeat import save_calibrator

    save_calibrator(_fitted(), f"{d / 'newdir'}/")


def _reference_nan_in_memory(d):
    from isoeat.backends.static import StaticVectors

    m = _M.astype(np.float64)
    m[7, 0] = np.inf
    StaticVectors([f"w{i}" for i in range(50)], m, name="toy").reference_vectors(50)


LIBRARY_CASES = [
    # item 19: a folder is refused, nothing written beside it
    ("save_calibrator into an existing folder", _save_into_folder, ConfigError, "out: is a folder; give the calibrator's"),
    ("save_calibrator where NAME.npz is a folder", _save_into_folder_npz, ConfigError,
     "out.npz: exists and is not a regular file"),
    ("save_calibrator to a name ending in a separator", _save_with_trailing_slash, ConfigError, "newdir/: is a folder"),
    # item 11: an in-memory matrix's non-finite row in the reference sample is refused, not dropped
    ("reference sample with an inf row", _reference_nan_in_memory, DataFormatError,
     "toy: row 8 (word 'w7') of the reference sample has NaN or inf values"),
]


@pytest.mark.parametrize("name, call, exc, expected", LIBRARY_CASES, ids=[c[0] for c in LIBRARY_CASES])
def test_library_case(tmp_path, name, call, exc, expected):
    before = _snapshot(tmp_path)
    with pytest.raises(exc) as info:
        call(tmp_path)
    msg = str(info.value)
    assert expected in msg and "\n" not in msg, msg
    after = _snapshot(tmp_path)
    assert [p for p in after if p not in before and not p.endswith(("/out", "/out.npz"))] == []


# --- item 4: float32 defining pairs that cancel ---------------------------------------------------
_F32_EPS = float(np.finfo(np.float32).eps)


def _cancelling_float32_pairs():
    """(a, b) and (c, d) with c - d = -(a - b) in exact arithmetic: c = b + δ, d = a + δ, rounded to float32.

    The pairs have no side; what float32 rounding leaves of their summed difference is noise of size
    eps32·|δ|, which a tolerance of 1e-10 (relative, today's) did not absorb.
    """
    rng = np.random.default_rng(4)
    a, b, delta = (rng.normal(size=20).astype(np.float32) for _ in range(3))
    c, d = (b + delta).astype(np.float32), (a + delta).astype(np.float32)
    P1, P2 = np.stack([a, c]), np.stack([b, d])
    residue = (P1.astype(np.float64) - P2).sum(axis=0)
    assert np.abs(residue).max() > 0  # rounding left something: the case is not an exact cancellation
    return P1, P2


def _ripa_cancel():
    from isoeat.metrics.formulas import ripa

    P1, P2 = _cancelling_float32_pairs()
    ripa(np.eye(20)[:4], P1, P2, 2)


def _semaxis_cancel():
    from isoeat.metrics.formulas import semaxis

    P1, P2 = _cancelling_float32_pairs()
    semaxis(np.eye(20)[:4], P1, P2, 2)


PAIR_CASES = [
    ("RIPA float32 pairs that cancel", _ripa_cancel, "no side"),
    ("SemAxis float32 poles with one mean", _semaxis_cancel, "SemAxis: the semantic axis"),
]


@pytest.mark.parametrize("name, call, expected", PAIR_CASES, ids=[c[0] for c in PAIR_CASES])
def test_float32_pairs_that_cancel_are_refused(name, call, expected):
    with pytest.raises(ConfigError, match=expected):
        call()


@pytest.mark.parametrize("factor, refused", [(1 - 1e-6, True), (1 + 1e-6, False)])
def test_side_rule_at_its_boundary(factor, refused):
    """Two pairs on the x axis: D = [(1, 0), (-(1 - t), 0)], so g = (1, 0) and the summed projection is t.

    The rule (formulas.relation_direction): no side when |Σ_i <D_i, g>| <= eps32 · Σ_i (|p1_i| + |p2_i|),
    twice the worst float32 storage rounding of the pairs' summed projection. The bound is computed here
    from the four vectors' norms; t is set just below and just above it.
    """
    from isoeat.metrics.formulas import relation_direction

    t = 0.0
    for _ in range(3):  # t enters the fourth norm: a fixed point, reached to float64 rounding
        t = _F32_EPS * (np.sqrt(2.0) + 1.0 + 1.0 + np.hypot(1.0 - t, 1.0)) * factor
    P1 = np.array([[1.0, 1.0], [0.0, 1.0]])
    P2 = np.array([[0.0, 1.0], [1.0 - t, 1.0]])
    if refused:
        with pytest.raises(ConfigError, match="no side"):
            relation_direction(P1, P2)
    else:
        assert relation_direction(P1, P2) == pytest.approx([1.0, 0.0])


@pytest.mark.parametrize("factor, refused", [(1 - 1e-6, True), (1 + 1e-6, False)])
def test_semaxis_rule_at_its_boundary(factor, refused):
    """Poles (1, 0) and (1, -t): the axis is (0, t), of norm t.

    The rule (formulas.semaxis): a zero axis when |v| <= eps32 · (mean |p1| + mean |p2|), twice the worst
    float32 storage rounding of the difference of the poles' means; t set just below and just above it.
    """
    from isoeat.metrics.formulas import semaxis

    t = _F32_EPS * (1.0 + np.hypot(1.0, 1e-7)) * factor
    P1, P2 = np.array([[1.0, 0.0]]), np.array([[1.0, -t]])
    W = np.array([[0.0, 1.0], [0.0, -1.0]])
    if refused:
        with pytest.raises(ConfigError, match="SemAxis: the semantic axis"):
            semaxis(W, P1, P2, 1)
    else:
        assert semaxis(W, P1, P2, 1).estimate == pytest.approx(2.0)  # cos 1 for the first, -1 for the second


def test_pairs_far_from_the_bound_still_measured():
    """Ordinary float32 pairs keep their direction: one pair gives (p1 - p2)/|p1 - p2| (Ethayarajh et al.)."""
    from isoeat.metrics.formulas import ripa

    P1, P2 = _M[:1], _M[1:2]
    d = P1[0].astype(np.float64) - P2[0]
    W = _M[2:6].astype(np.float64)
    f = W @ (d / np.linalg.norm(d))
    assert ripa(W, P1, P2, 2).estimate == pytest.approx(f[:2].mean() - f[2:].mean(), rel=1e-12)


# --- item 14: a frame with no more vectors than dimensions ------------------------------------------
def _isotropic_record(n, d, seed=14):
    """The anisotropy record of ``n`` draws of an isotropic Gaussian in ``d`` dimensions (every direction equal)."""
    from isoeat.diagnostics.anisotropy import anisotropy_from_vectors

    X = np.random.default_rng(seed).normal(size=(n, d))
    return anisotropy_from_vectors(X, model="gauss", calibration="none").to_dict()


FRAME_CASES = [
    ("20 isotropic vectors in 50 dimensions", 20, 50),
    ("50 isotropic vectors in 50 dimensions", 50, 50),
]


@pytest.mark.parametrize("name, n, d", FRAME_CASES, ids=[c[0] for c in FRAME_CASES])
def test_rank_limited_frame_is_undetermined(name, n, d):
    from isoeat.diagnostics.isotropy_check import check_from_record, isotropy_lines

    rec = _isotropic_record(n, d)
    # why the old verdict was wrong: the sample covariance of n vectors has rank <= n - 1, so IsoScore is at
    # most (n - 2)/(d - 1) (variance spread evenly over n - 1 of d directions, Rudman et al.'s (k-1)/(d-1))
    assert rec["isoscore"] <= (n - 2) / (d - 1) + 1e-12
    c = check_from_record(rec)
    assert c.verdict == "partly measured" and c.flagged == () and c.undetermined == ("IsoScore", "top-PC share")
    lines = isotropy_lines("gauss", rec)
    assert "ANISOTROPIC" not in "\n".join(lines)
    note = [ln for ln in lines if "undetermined:" in ln]
    assert len(note) == 1 and f"{n} vectors in {d} dimensions (N <= d)" in note[0], lines


def test_rank_rule_at_its_boundary():
    """N = d is undetermined, N = d + 1 measured (its covariance can have full rank d)."""
    from isoeat.diagnostics.isotropy_check import check_from_record

    assert check_from_record(_isotropic_record(50, 50)).undetermined
    c = check_from_record(_isotropic_record(51, 50))
    assert c.undetermined == () and c.note == "" and c.isoscore is not None


def test_rank_limited_mean_cosine_still_flags():
    """The mean cosine does not depend on the rank: a shifted sample still reads anisotropic on it."""
    from isoeat.diagnostics.isotropy_check import isotropy_check

    c = isotropy_check(0.3, 0.1, 0.5, 50, n_samples=20)
    assert c.verdict == "anisotropic" and c.flagged == ("mean cosine",)


def test_anisotropy_command_says_undetermined(capsys):
    assert main(["anisotropy", "--samples", "20", "--calibration", "none"]) == 0
    out = capsys.readouterr().out
    assert out.count("Undetermined: IsoScore, I(W) and EVR of 20 vectors in 50 dimensions (N <= d)") == 1, out



# --- item 1: one extreme row in the reference sample ----------------------------------------------
_EPS = 1e-3


def _toy_d(Z):
    """WEAT's d (Caliskan et al. 2017, ddof=1) of rows 0-3 (X), 4-7 (Y), 8-11 (A), 12-15 (B) of ``Z``."""
    U = Z / np.linalg.norm(Z, axis=1, keepdims=True)
    X, Y, A, B = U[:4], U[4:8], U[8:12], U[12:16]
    sx, sy = ((W @ A.T).mean(1) - (W @ B.T).mean(1) for W in (X, Y))
    return float((sx.mean() - sy.mean()) / np.std(np.r_[sx, sy], ddof=1))


def _exact_calibrated_d(R):
    """The calibrated d in 80-digit arithmetic (mpmath): mean, covariance (n-1), eigendecomposition,
    W = U (Λ + ε)^(-1/2) U^T, z = W (x - μ) of the first 16 rows, then d. The float64 inputs are exact
    binary numbers, so this is the exact-arithmetic answer for them (to 1e-70)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 80
    n, d = R.shape
    M = mpmath.matrix(R.tolist())
    mu = [mpmath.fsum(M[i, j] for i in range(n)) / n for j in range(d)]
    C = mpmath.matrix(d, d)
    for a in range(d):
        for b in range(a, d):
            C[a, b] = C[b, a] = mpmath.fsum((M[i, a] - mu[a]) * (M[i, b] - mu[b]) for i in range(n)) / (n - 1)
    E, Q = mpmath.eigsy(C)
    W = Q * mpmath.diag([1 / mpmath.sqrt(E[k] + _EPS) for k in range(d)]) * Q.T
    Z = [[float(z) for z in W * mpmath.matrix([M[i, j] - mu[j] for j in range(d)])] for i in range(16)]
    return _toy_d(np.array(Z))


REFERENCE_CASES = [
    ("reference row x 1e8", 1e8),
    ("reference row x 1e10", 1e10),
    ("reference row x 1e12", 1e12),
    ("reference row x 1e14", 1e14),
    ("reference row x 1e30", 1e30),
]


def test_exact_d_is_the_same_at_every_large_scale():
    """The premise of the defect: in exact arithmetic the calibrated d tends to a limit as one row grows
    (the row's direction is whitened away, leaving a common offset), the same to 1e-8 from 1e8 on."""
    values = [_exact_calibrated_d(_scaled_reference(s)) for s in (1e8, 1e14)]
    assert values[0] == pytest.approx(values[1], abs=1e-8)


@pytest.mark.parametrize("name, s", REFERENCE_CASES, ids=[c[0] for c in REFERENCE_CASES])
def test_extreme_reference_row_gives_the_exact_d_or_is_named(name, s):
    from isoeat import ZCAWhitener

    R = _scaled_reference(s)
    try:
        got = _toy_d(ZCAWhitener(eps=_EPS).fit(R).transform(R[:16]))
    except DataFormatError as exc:
        msg = str(exc)
        assert "reference row 21 causes it" in msg and "\n" not in msg, msg
        return
    assert got == pytest.approx(_exact_calibrated_d(R), abs=1e-6)


def test_extreme_row_refused_when_streamed():
    """Batches (partial_fit, fit_batches) hold no rows to name; the condition is still refused."""
    from isoeat import ZCAWhitener

    R = _scaled_reference(1e30)
    with pytest.raises(DataFormatError, match="has condition number"):
        ZCAWhitener(eps=_EPS).partial_fit(R[:30]).partial_fit(R[30:])
    with pytest.raises(DataFormatError, match="has condition number"):
        ZCAWhitener(eps=_EPS).fit_batches([R[:30], R[30:]])


@pytest.mark.parametrize("s", [1.0, 1e2, 1e4])
def test_moderate_reference_row_gives_the_exact_d(s):
    """Below the condition bound the fit goes ahead and its d is the exact one (to 1e-8)."""
    from isoeat import ZCAWhitener

    R = _scaled_reference(s)
    assert _toy_d(ZCAWhitener(eps=_EPS).fit(R).transform(R[:16])) == pytest.approx(_exact_calibrated_d(R), abs=1e-8)


@pytest.mark.parametrize("factor, refused", [(1 - 1e-9, False), (1 + 1e-9, True)])
@pytest.mark.parametrize("calibration", ["zca", "pca-whiten"])
def test_condition_bound_at_its_boundary(factor, refused, calibration):
    """A diagonal covariance diag(a, 1) with ε = 1e-3: condition number (a + ε)/(1 + ε), set just below and
    just above 1e-4 / float64's machine epsilon (the bound: rounding of the largest eigenvalue stays within
    1e-4 of the smallest regularised one)."""
    from isoeat.calibration import make_calibrator
    from isoeat.calibration.moments import CovarianceAccumulator

    bound = 1e-4 / np.finfo(np.float64).eps
    a = bound * (1 + _EPS) * factor - _EPS
    acc = CovarianceAccumulator.from_arrays({"n": 3, "mean": np.zeros(2), "comoment": np.diag([2 * a, 2.0])})
    cal = make_calibrator(calibration, eps=_EPS)
    if refused:
        with pytest.raises(DataFormatError, match="has condition number"):
            _fit_stats(cal, acc)
    else:
        _fit_stats(cal, acc)


def _fit_stats(cal, acc):
    """Fit from the statistics alone (ZCA's from_statistics; PCA whitening's moment fit)."""
    if hasattr(type(cal), "from_statistics"):
        return type(cal).from_statistics(acc, eps=_EPS)
    return cal._fit_moments(acc.mean, acc.covariance(), acc.n)


TOTAL_CASES = len(CLI_CASES) + len(LIBRARY_CASES) + len(PAIR_CASES) + len(FRAME_CASES) + len(REFERENCE_CASES)


def test_catalogue_names_unique():
    names = [c[0] for c in CLI_CASES + LIBRARY_CASES + PAIR_CASES + FRAME_CASES + REFERENCE_CASES]
    assert len(names) == len(set(names)) == TOTAL_CASES
    assert all(isinstance(e, type) and issubclass(e, IsoeatError) for *_, e, _ in LIBRARY_CASES)
