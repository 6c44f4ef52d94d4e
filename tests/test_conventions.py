"""Peers' conventions by name (issue 46): ``convention=`` / ``--convention`` / ``weat --explain``.

Expected values are computed here from the peers' definitions, from scratch in numpy (the code lines are in
``isoeat/stats/conventions.py`` and docs/conventions.md), never copied from isoeat's output:

* WEFE 1.0.1 (``wefe/metrics/WEAT.py:112-141``): s from the mean cosines, d with ``np.std`` (ddof 0); its cosines
  are sklearn's ``cosine_similarity`` of float32 vectors, in float32, and its means are float64;
  ``tests/data/wefe_glove50_w1_w10.json`` holds WEFE 1.0.1's own d (provenance in the file);
* sent-bias (``sentbias/weat.py:92, 174-175``): ddof 1, X and Y of equal size: the longer cut from its end;
* responsibly 0.1.2 (``responsibly/we/weat.py:179-212, 260``): ddof 0, the longer set of each pair replaced by
  ``random.seed(42); random.sample(words, n)``;
* Caliskan et al. 2017: ddof 1 over X ∪ Y, one-sided exact p (counted here over every partition).
"""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, UnknownNameError, WEATResult
from isoeat.cli import main
from isoeat.labels import compare_records
from isoeat.stats.conventions import (
    CONVENTIONS,
    SENT_BIAS_SAMPLES,
    convention_lines,
    equal_sizes,
    get_convention,
    p_note,
    settle,
    side_of,
)
from isoeat.stats.explain import explain_conventions

TESTS = [f"W{i}" for i in range(1, 11)]
FIXTURE = Path(__file__).parent / "data" / "wefe_glove50_w1_w10.json"


def _found(glove, words):
    """The words the model has (isoeat's case fallback: what WEFE's preprocessors=[{}, {'lowercase': True}] does),
    in order, and their raw vectors."""
    lk = glove.lookup(list(words))
    return list(lk.found), np.asarray(lk.vectors, dtype=np.float64)


def _sets(glove, tid):
    t = isoeat.get_test(tid)
    return {role: _found(glove, getattr(t, role).words) for role in "XYAB"}


def _cos(U, V, dtype=np.float64):
    U = np.asarray(U, dtype=dtype)
    V = np.asarray(V, dtype=dtype)
    Un = U / np.sqrt((U * U).sum(axis=1, keepdims=True))
    Vn = V / np.sqrt((V * V).sum(axis=1, keepdims=True))
    return Un @ Vn.T


def _s(W, A, B, dtype=np.float64):
    """s(w, A, B) per row; the means in float64 (WEFE: np.mean(..., dtype=np.float64))."""
    return np.mean(_cos(W, A, dtype), axis=1, dtype=np.float64) - np.mean(_cos(W, B, dtype), axis=1, dtype=np.float64)


def _d(X, Y, A, B, ddof, dtype=np.float64):
    sx, sy = _s(X, A, B, dtype), _s(Y, A, B, dtype)
    return (sx.mean() - sy.mean()) / np.std(np.concatenate([sx, sy]), ddof=ddof, dtype=np.float64)


@pytest.mark.parametrize("tid", TESTS)
def test_wefe_d_is_ddof0_from_scratch_and_wefe_float32_path(glove, tid):
    sets = _sets(glove, tid)
    X, Y, A, B = (sets[r][1] for r in "XYAB")
    r = isoeat.weat(glove, tid, rng=0, convention="wefe")
    assert r.ddof == 0 and r.convention == "wefe" and (r.n_x, r.n_y) == (len(X), len(Y))
    assert r.effect_size == pytest.approx(_d(X, Y, A, B, 0), rel=1e-12)
    # WEFE's dtype path: float32 cosines (sklearn keeps float32), float64 means: agreement to float32 rounding
    assert r.effect_size == pytest.approx(_d(X, Y, A, B, 0, np.float32), rel=1e-5)


def test_wefe_d_matches_wefe_1_0_1_itself_on_w1_to_w10(glove):
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert "WEFE 1.0.1" in doc["provenance"] and sorted(doc["effect_size"]) == sorted(TESTS)
    for tid, d_wefe in doc["effect_size"].items():
        assert isoeat.weat(glove, tid, rng=0, convention="wefe").effect_size == pytest.approx(d_wefe, rel=1e-5), tid


def test_wefe_w6_is_isoeat_scaled_by_the_ddof_factor(glove):
    # the numbers: W6 1.7638 (ddof 0) vs 1.7078 (ddof 1), +3.3%; d0 = d1 * sqrt(N / (N - 1)), N = 16
    d0 = isoeat.weat(glove, "W6", rng=0, convention="wefe").effect_size
    d1 = isoeat.weat(glove, "W6", rng=0).effect_size
    assert round(d0, 4) == 1.7638 and round(d1, 4) == 1.7078
    assert d0 == pytest.approx(d1 * math.sqrt(16 / 15), rel=1e-12)


@pytest.mark.parametrize("tid", TESTS)
def test_sent_bias_cuts_the_longer_target_set_from_its_end(glove, tid):
    sets = _sets(glove, tid)
    n = min(len(sets["X"][0]), len(sets["Y"][0]))
    X, Y = sets["X"][1][:n], sets["Y"][1][:n]
    r = isoeat.weat(glove, tid, rng=0, convention="sent-bias")
    assert (r.n_x, r.n_y) == (n, n) and r.ddof == 1
    assert r.cut == tuple(f"{role}:{w}" for role in "XY" for w in sets[role][0][n:])
    assert r.effect_size == pytest.approx(_d(X, Y, sets["A"][1], sets["B"][1], 1), rel=1e-12)


def test_sent_bias_w1_is_24_by_24_and_1_0701(glove):
    sets = _sets(glove, "W1")
    assert (len(sets["X"][0]), len(sets["Y"][0])) == (24, 25)  # gladiola is not in GloVe 6B
    r = isoeat.weat(glove, "W1", rng=0, convention="sent-bias")
    assert (r.n_x, r.n_y) == (24, 24) and round(r.effect_size, 4) == 1.0701
    assert round(isoeat.weat(glove, "W1", rng=0).effect_size, 4) == 1.0804


@pytest.mark.parametrize("tid", ["W1", "W9"])
def test_responsibly_samples_with_seed_42_and_ddof_0(glove, tid):
    sets = _sets(glove, tid)
    keep = {}
    for a, b in (("X", "Y"), ("A", "B")):
        n = min(len(sets[a][0]), len(sets[b][0]))
        for role in (a, b):
            words, vecs = sets[role]
            if len(words) > n:
                random.seed(42)  # responsibly/we/weat.py:179-183, _sample_if_bigger
                chosen = set(random.sample(words, n))
                vecs = vecs[[i for i, w in enumerate(words) if w in chosen]]
            keep[role] = vecs
    r = isoeat.weat(glove, tid, rng=0, convention="responsibly")
    assert (r.n_x, r.n_y, r.n_a, r.n_b) == tuple(len(keep[k]) for k in "XYAB")
    assert len(r.cut) == sum(len(sets[k][0]) - len(keep[k]) for k in "XYAB")
    assert r.effect_size == pytest.approx(_d(keep["X"], keep["Y"], keep["A"], keep["B"], 0), rel=1e-12)


def test_caliskan_is_ddof1_and_the_exact_one_sided_p_counted_by_hand(glove):
    sets = _sets(glove, "W6")
    X, Y, A, B = (sets[r][1] for r in "XYAB")
    s = np.concatenate([_s(X, A, B), _s(Y, A, B)])
    observed = s[:8].sum()
    sums = np.array([s[list(c)].sum() for c in itertools.combinations(range(16), 8)])
    p = np.mean(sums >= observed - 1e-12)  # P[S_i >= S] over all 12,870 equal-size partitions
    r = isoeat.weat(glove, "W6", rng=0, convention="caliskan")
    assert r.effect_size == pytest.approx(_d(X, Y, A, B, 1), rel=1e-12)
    assert r.p_value == pytest.approx(p, rel=1e-12) and r.p_method == "exact" and r.alternative == "greater"


def test_ml_eat_takes_p_on_the_side_of_the_statistic(glove):
    # W7 with X and Y swapped by hand is a test with d < 0: ML-EAT's min(cdf, 1 - cdf) is the lower tail there
    t = isoeat.get_test("W7")
    swapped = isoeat.AssociationTest(id="W7-swapped", bias_type=t.bias_type, X=t.Y, Y=t.X, A=t.A, B=t.B)
    r = isoeat.weat(glove, swapped, rng=0, convention="ml-eat")
    less = isoeat.weat(glove, swapped, rng=0, alternative="less")
    assert r.effect_size < 0 and r.alternative == "less" and r.p_value == less.p_value
    up = isoeat.weat(glove, "W7", rng=0, convention="ml-eat")
    assert up.alternative == "greater" and up.p_value == isoeat.weat(glove, "W7", rng=0).p_value
    words = {w.word: w for w in isoeat.sc_weat(glove, "nurse,engineer", "W7", rng=0, convention="ml-eat")}
    assert words["nurse"].effect_size < 0 and words["nurse"].alternative == "less"
    assert words["engineer"].effect_size > 0 and words["engineer"].alternative == "greater"


def test_side_of_at_zero_and_for_one_sided_conventions():
    ml, wefe = CONVENTIONS.get("ml-eat"), CONVENTIONS.get("wefe")
    assert side_of(ml, 0.0) == "greater" and side_of(ml, -1e-300) == "less" and side_of(ml, math.nan) == "greater"
    assert side_of(wefe, -5.0) == "greater"


def test_equal_sizes_by_hand():
    v = {r: np.arange(n * 2, dtype=float).reshape(n, 2) for r, n in (("X", 4), ("Y", 2), ("A", 3), ("B", 2))}
    words = {"X": ["a", "b", "c", "d"], "Y": ["e", "f"], "A": ["g", "h", "i"], "B": ["j", "k"]}
    out, cut = equal_sizes(CONVENTIONS.get("sent-bias"), words, v)
    assert cut == ["X:c", "X:d"] and out["X"].tolist() == v["X"][:2].tolist() and out["A"].shape == (3, 2)
    random.seed(42)
    keep_x = set(random.sample(words["X"], 2))
    random.seed(42)
    keep_a = set(random.sample(words["A"], 2))
    out, cut = equal_sizes(CONVENTIONS.get("responsibly"), words, v)
    assert sorted(cut) == sorted(
        [f"X:{w}" for w in words["X"] if w not in keep_x] + [f"A:{w}" for w in words["A"] if w not in keep_a]
    )
    assert out["X"].shape == (2, 2) and out["A"].shape == (2, 2)
    same, none = equal_sizes(CONVENTIONS.get("wefe"), words, v)
    assert same is v and none == []


def test_unknown_convention_is_one_line_with_did_you_mean(glove, capsys):
    with pytest.raises(UnknownNameError, match=r"unknown convention 'wef'; did you mean wefe\?"):
        isoeat.weat(glove, "W6", convention="wef")
    with pytest.raises(ConfigError, match="convention must be a name"):
        get_convention(3)
    with pytest.raises(SystemExit) as exc:
        main(["weat", "--test", "W6", "--convention", "sentbiass"])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and "\n" not in err and "did you mean sent-bias" in err


def test_aliases_and_case():
    assert get_convention("SentBias").name == "sent-bias" and get_convention("WEFE").name == "wefe"


def test_contradictions_and_commands_are_refused_in_one_line(glove):
    assert settle("wefe", "weat", ddof=0, alternative="greater")[1:] == (0, "greater")  # the convention's own: kept
    with pytest.raises(ConfigError, match="fixes ddof 0"):
        isoeat.weat(glove, "W6", convention="wefe", ddof=1)
    with pytest.raises(ConfigError, match="one-sided"):
        isoeat.weat(glove, "W6", convention="sent-bias", alternative="two-sided")
    with pytest.raises(ConfigError, match="defines no scweat: scweat takes convention isoeat, caliskan, ml-eat"):
        isoeat.sc_weat(glove, "nurse", "W7", convention="wefe")
    assert isoeat.weat(glove, "W6", ddof=0).ddof == 0  # the default convention leaves ddof free


def test_record_carries_its_convention_as_the_last_column(glove):
    r = isoeat.weat(glove, "W6", rng=0, convention="wefe")
    rec = r.to_dict()
    assert list(rec)[-2:] == ["convention", "cut"] and rec["convention"] == "wefe" and rec["cut"] == []
    assert WEATResult.from_dict(rec).convention == "wefe"
    assert isoeat.weat(glove, "W6", rng=0).to_dict()["convention"] == "isoeat"
    old = {k: v for k, v in rec.items() if k != "convention"}  # a record written before issue 46
    assert WEATResult.from_dict(old).convention == "isoeat"
    sc = isoeat.sc_weat(glove, "nurse", "W7", rng=0, convention="caliskan")[0].to_dict()
    assert list(sc)[-1] == "convention" and sc["convention"] == "caliskan"


def test_p_notes_name_the_peer_and_give_isoeats_exact_p():
    wefe = CONVENTIONS.get("wefe")
    assert p_note(wefe, 0.0101) == (
        "wefe: this convention's p is a Monte Carlo estimate over draws with replacement "
        "from an unseeded generator (WEFE 1.0.1): not a permutation p and not "
        "reproducible; isoeat's exact p is 0.0101"
    )
    sb = CONVENTIONS.get("sent-bias")  # exact while C(2n, n) <= n_samples (sentbias/weat.py:132: '>' samples)
    assert p_note(sb, 0.01, SENT_BIAS_SAMPLES) == ""
    assert "Monte Carlo estimate of 100,000 shuffles" in p_note(sb, 0.01, SENT_BIAS_SAMPLES + 1)
    # caliskan's paper writes p strictly greater (tests/test_conventions_adversary.py): named; isoeat's: none
    assert (
        "strictly greater" in p_note(CONVENTIONS.get("caliskan"), 0.01)
        and p_note(CONVENTIONS.get("isoeat"), 0.01) == ""
    )


def test_mixed_conventions_are_said_and_not_compared(glove):
    a = isoeat.weat(glove, "W6", rng=0)
    b = isoeat.weat(glove, "W6", rng=0, convention="wefe")
    lines = convention_lines([a, b])
    assert lines[0].startswith("convention wefe (WEFE 1.0.1): ddof 0")
    assert lines[-1].startswith("these results mix conventions (isoeat, wefe)")
    assert not any("mix" in line for line in convention_lines([b, b]))
    assert convention_lines([a.to_dict()]) == []
    with pytest.raises(ConfigError, match="mix conventions"):
        compare_records(a.to_dict(), b.to_dict(), 0.05)


def test_explain_rows_on_w6(glove):
    rows = explain_conventions(glove, "W6", rng=0)
    assert [r.convention for r in rows] == [
        "isoeat",
        "caliskan",
        "wefe",
        "sent-bias",
        "ceat-code",
        "ml-eat",
        "responsibly",
    ]
    by = {r.convention: r for r in rows}
    sets = _sets(glove, "W6")
    X, Y, A, B = (sets[k][1] for k in "XYAB")
    assert by["wefe"].effect_size == pytest.approx(_d(X, Y, A, B, 0), rel=1e-12)
    assert by["wefe"].delta_d == pytest.approx(math.sqrt(16 / 15) - 1, rel=1e-9)
    assert by["isoeat"].reason == "the default" and all(r.reason for r in rows)
    assert by["sent-bias"].reason.startswith("d as isoeat's here (8/8 words)")
    assert "with replacement" in by["wefe"].p_note and "strictly greater" in by["caliskan"].p_note
    assert by["wefe"].to_frame().shape == (1, len(by["wefe"].to_dict()))
    with pytest.raises(ConfigError, match="ddof is each convention's own"):
        explain_conventions(glove, "W6", ddof=0)


def test_cli_explain_prints_every_convention_with_its_reason(glove, capsys):
    assert main(["weat", "--test", "W6", "--explain"]) == 0
    out = capsys.readouterr().out
    for name in CONVENTIONS.names():
        assert f"\n{name} " in out
    assert "1.7638" in out and "+3.3%" in out and "isoeat's exact p is 7.77e-05" in out
    assert main(["weat", "--test", "W6", "--explain", "--format", "json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert [r["convention"] for r in recs] == list(CONVENTIONS.names())
    assert main(["weat", "--test", "W6", "--explain", "--ddof", "0"]) == 2
    assert "drop --ddof" in capsys.readouterr().err


def test_cli_convention_footer_and_typed_ddof(glove, capsys):
    assert main(["weat", "--test", "W1", "--convention", "sent-bias", "--calibration", "none"]) == 0
    out = capsys.readouterr().out
    assert "convention sent-bias (sent-bias, May et al. 2019): ddof 1" in out and "  24   24" in out
    assert "W1: sent-bias left out Y:weevil (sets of equal size)" in out  # Y's 25th word, weevil, cut
    assert main(["weat", "--test", "W6", "--convention", "wefe", "--ddof", "1", "--calibration", "none"]) == 2
    assert "fixes ddof 0" in capsys.readouterr().err  # typed at the default value: still a contradiction
    assert (
        main(
            [
                "scweat",
                "--words",
                "nurse",
                "--attributes",
                "W7",
                "--convention",
                "ml-eat",
                "--alternative",
                "greater",
                "--calibration",
                "none",
            ]
        )
        == 2
    )
    assert "drop --alternative" in capsys.readouterr().err


def test_cli_scweat_refuses_a_convention_without_sc_weat_in_one_line(glove, capsys):
    code = main(["scweat", "--words", "nurse", "--attributes", "W7", "--convention", "wefe", "--calibration", "none"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "defines no scweat" in err and "isoeat, caliskan, ml-eat" in err
