"""RIPA with several defining pairs: its orientation, the pairs refused, and its definition beside WEFE's.

Expected values are hand computations (written out beside each assertion) or from-scratch numpy on the
bundled GloVe; none is read from isoeat's own output.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import isoeat
from isoeat._errors import ConfigError, DataFormatError
from isoeat.metrics._pairs import resolve_pairs
from isoeat.metrics.formulas import relation_direction, ripa
from isoeat.wordsets import load_tests_from_file


def _w6_with(pairs):
    W = isoeat.get_test("W6")
    return type(W)(**{k: getattr(W, k) for k in ("id", "bias_type", "X", "Y", "A", "B")}, pairs=pairs)


# ----------------------------------------------------------------------------------------- refused pairs
@pytest.mark.parametrize("pairs,message", [
    ([("she", "he"), ("he", "she")], r"pairs\[1\] \('he', 'she'\) contradicts pairs\[0\] \('she', 'he'\)"),
    ([("she", "he"), ("woman", "man"), ("she", "he")], r"pairs\[2\] \('she', 'he'\) is listed more than once"),
    ([("she", "he"), ("woman", "man"), ("man", "woman")], r"pairs\[2\] .*contradicts pairs\[1\]"),
])
def test_contradictory_or_repeated_pairs_are_refused(pairs, message):
    W6 = isoeat.get_test("W6")
    with pytest.raises(ConfigError, match=message):
        resolve_pairs(pairs, W6)                      # pairs given to the call (RIPA, direct bias, SemAxis)
    with pytest.raises(ConfigError, match=message.replace(r"pairs\[", r"pair.*\[")):
        _w6_with(pairs)                               # a test's own pairs


def test_a_test_file_with_contradictory_pairs_is_refused_naming_the_keys(tmp_path):
    f = tmp_path / "t.yaml"
    f.write_text("id: T\nbias_type: Gender\nX: [john, paul]\nY: [amy, joan]\nA: [career, salary]\n"
                 "B: [home, family]\npairs: [[she, he], [woman, man], [he, she]]\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"t\.yaml.*pairs\[2\] \['he', 'she'\] contradicts pairs\[0\]"):
        load_tests_from_file(f)


def test_the_cli_refuses_contradictory_pairs_in_one_line_naming_the_option(capsys):
    from isoeat.cli import main

    code = main(["metric", "ripa", "--test", "W7", "--calibration", "none", "--pairs", "she:he,he:she"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1
    assert "--pairs" in err[0] and "contradicts" in err[0]


def test_pairs_that_cancel_on_their_direction_are_refused():
    # differences (1, 0), (-1, 0), (0, 0.5): D'D = diag(2, 0.25), so the direction is +-(1, 0), and the
    # pairs' differences sum to (0, 0.5), orthogonal to it: no side is the first words' side
    P1 = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.5]])
    with pytest.raises(ConfigError, match="no side"):
        relation_direction(P1, np.zeros_like(P1))
    # just off the tie: the second difference shortened by 1e-6, the sum (1e-6, 0.5) is on the side of (1, 0)
    P1[1, 0] = -1.0 + 1e-6
    np.testing.assert_allclose(relation_direction(P1, np.zeros_like(P1)), [1.0, 0.0], atol=1e-12)


# ----------------------------------------------------------------------------------------- orientation
def test_orientation_follows_the_mean_pair_difference_in_any_listed_order():
    g = np.random.default_rng(5)
    P1, P2 = g.normal(size=(6, 4)), g.normal(size=(6, 4))
    W = g.normal(size=(8, 4))
    ref = relation_direction(P1, P2)
    assert float((P1 - P2).mean(axis=0) @ ref) > 0  # the stated rule: <mean(p1 - p2), b> > 0
    want = ripa(W, P1, P2, 4).estimate
    for perm in itertools.islice(itertools.permutations(range(6)), 0, 720, 37):
        idx = list(perm)
        np.testing.assert_allclose(relation_direction(P1[idx], P2[idx]), ref, atol=1e-12)
        assert ripa(W, P1[idx], P2[idx], 4).estimate == pytest.approx(want, abs=1e-12)


def test_a_hand_example_of_the_two_multi_pair_definitions():
    # differences d = (4, 0), (0, 1), (0, 2): D'D = diag(16, 5), first singular vector b = (1, 0),
    # oriented: sum <d_i, b> = 4 > 0. Target x = (-1, 3), y = (0, 0).
    # isoeat (Ethayarajh et al.): f(x) = <x, b> = -1, estimate -1 - 0 = -1.
    # WEFE: mean over pairs of <x, d_i/|d_i|> = (-1 + 3 + 3) / 3 = 5/3: the opposite sign.
    P1 = np.array([[4.0, 0.0], [0.0, 1.0], [0.0, 2.0]])
    W = np.array([[-1.0, 3.0], [0.0, 0.0]])
    r = ripa(W, P1, np.zeros_like(P1), 1)
    assert r.estimate == pytest.approx(-1.0, abs=1e-12)
    units = P1 / np.linalg.norm(P1, axis=1, keepdims=True)
    assert float((W[0] @ units.T).mean()) == pytest.approx(5 / 3)


def test_w3_and_w4_on_glove_differ_in_sign_from_the_per_pair_average(glove):
    # from-scratch numpy: the first right singular vector of the zipped pleasant/unpleasant differences, oriented
    # by their mean, against WEFE's mean over pairs of the unit differences (docs/metrics.md quotes these signs)
    for tid in ("W3", "W4"):
        t = isoeat.get_test(tid)
        pairs = list(zip(t.A.words, t.B.words))
        lk = glove.lookup([w for p in pairs for w in p])
        vec = dict(zip(lk.found, lk.vectors))
        D = np.array([vec[a] - vec[b] for a, b in pairs if a in vec and b in vec])
        b = np.linalg.svd(D, full_matrices=False)[2][0]
        b = b if D.mean(axis=0) @ b > 0 else -b
        units = D / np.linalg.norm(D, axis=1, keepdims=True)
        X, Y = glove.lookup(t.X.words).vectors, glove.lookup(t.Y.words).vectors
        ours = float((X @ b).mean() - (Y @ b).mean())
        wefe = float((X @ units.T).mean() - (Y @ units.T).mean())
        assert ours < 0 < wefe, (tid, ours, wefe)
        got = isoeat.metric(glove, "ripa", tid, calibration=None, rng=0, n_permutations=200)
        assert got.estimate == pytest.approx(ours, rel=1e-9)
