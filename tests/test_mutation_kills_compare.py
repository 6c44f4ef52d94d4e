"""Tests that kill the surviving mutants of ``isoeat/experiments/compare.py``.

Expected values are written by hand from the documented rules (``p < alpha``
is significant; Holm: sorted p times ``m - i + 1``, running maximum, capped at
1; Benjamini–Hochberg: sorted p times ``m / i``, running minimum from the
top, capped at 1), or recomputed from scratch here — never read from isoeat.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from isoeat import ConfigError
from isoeat.experiments.compare import (
    CHANGE_CLASSES,
    Comparison,
    ComparisonRow,
    _row,
    adjust_family,
    adjust_records,
    compare_records,
    comparison_rows,
    result_from_record,
)
from isoeat.stats.results import WEATResult

NAN = float("nan")


def _holm(p):
    """Holm step-down adjusted p, from scratch."""
    p = np.asarray(p, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    out = np.empty(m)
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        out[j] = running
    return out


def _bh(p):
    """Benjamini–Hochberg step-up adjusted p, from scratch."""
    p = np.asarray(p, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    out = np.empty(m)
    running = 1.0
    for i in range(m - 1, -1, -1):
        j = order[i]
        running = min(running, p[j] * m / (i + 1))
        out[j] = running
    return out


def _result(test="W1", *, d=1.0, p=0.01, calibration="none", model="m", p_holm=NAN, p_bh=NAN):
    return WEATResult(
        test=test, model=model, calibration=calibration, seed=1, n_a=8, n_b=8, effect_size=d, statistic=0.1,
        p_value=p, p_method="exact", n_permutations=924, n_partitions=924, count=int(round(p * 924)),
        p_ci_low=NAN, p_ci_high=NAN, alternative="greater", ddof=1, bias_type="Gender", n_x=6, n_y=6,
        p_holm=p_holm, p_bh=p_bh,
    )


# --- adjust_family / adjust_records -------------------------------------------------------------


def test_from_scratch_helpers_match_hand_values():
    # p = (0.01, 0.04, 0.03): Holm 0.03, max(0.06, 0.04) = 0.06, 0.06; BH 0.03, min(0.045, 0.04) = 0.04, 0.04
    np.testing.assert_allclose(_holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(_bh([0.01, 0.04, 0.03]), [0.03, 0.04, 0.04])


def test_adjust_family_hand_values_and_nan_not_counted():
    ph, pb = adjust_family([0.01, NAN, 0.04, 0.03])
    np.testing.assert_allclose(ph, [0.03, NAN, 0.06, 0.06], equal_nan=True)
    np.testing.assert_allclose(pb, [0.03, NAN, 0.04, 0.04], equal_nan=True)


def test_adjust_family_all_nan_stays_nan():
    ph, pb = adjust_family([NAN, NAN])
    assert np.isnan(ph).all() and np.isnan(pb).all()


def test_adjust_records_fills_each_family_separately():
    recs = [
        {"model": "a", "calibration": "none", "p_value": 0.01},
        {"model": "a", "calibration": "none", "p_value": 0.04},
        {"model": "a", "calibration": "none", "p_value": 0.03},
        {"model": "a", "calibration": "zca", "p_value": 0.02},  # a family of one: unchanged
        {"model": "b", "calibration": "none", "p_value": 0.02},
        {"model": "b", "calibration": "none", "p_value": NAN},  # not counted: m = 1 in family (b, none)
    ]
    adjust_records(recs)
    got = [(r.get("p_holm"), r.get("p_bh")) for r in recs]
    assert got[0] == pytest.approx((0.03, 0.03))
    assert got[1] == pytest.approx((0.06, 0.04))
    assert got[2] == pytest.approx((0.06, 0.04))
    assert got[3] == pytest.approx((0.02, 0.02))
    assert got[4] == pytest.approx((0.02, 0.02))
    assert math.isnan(got[5][0]) and math.isnan(got[5][1])


def test_adjust_records_custom_family_key_matches_from_scratch():
    rng = np.random.default_rng(3)
    p = rng.uniform(0, 0.2, size=7)
    recs = [{"model": f"m{i}", "calibration": f"c{i % 2}", "space": "one", "p_value": float(v)}
            for i, v in enumerate(p)]
    adjust_records(recs, by=("space",))  # one family across models and calibrations
    np.testing.assert_allclose([r["p_holm"] for r in recs], _holm(p), rtol=1e-12)
    np.testing.assert_allclose([r["p_bh"] for r in recs], _bh(p), rtol=1e-12)


def test_adjust_records_all_nan_family_is_left_alone():
    recs = [
        {"model": "a", "calibration": "none", "p_value": NAN},
        {"model": "a", "calibration": "none", "p_value": NAN},
        {"model": "a", "calibration": "zca", "p_value": 0.5},
    ]
    adjust_records(recs)
    assert "p_holm" not in recs[0] and "p_bh" not in recs[0]
    assert "p_holm" not in recs[1] and "p_bh" not in recs[1]
    assert recs[2]["p_holm"] == 0.5 and recs[2]["p_bh"] == 0.5


# --- compare_records: adjusted change classes ----------------------------------------------------


def test_change_holm_and_bh_use_the_adjusted_p():
    raw = {"effect_size": 1.0, "p_value": 0.01, "p_holm": 0.06, "p_bh": 0.04}
    cal = {"effect_size": 0.9, "p_value": 0.20, "p_holm": 0.40, "p_bh": 0.30}
    row = compare_records(raw, cal, 0.05)
    assert row["change"] == "Disappearing"
    assert row["change_holm"] == "Stable"  # 0.06 is not < 0.05
    assert row["change_bh"] == "Disappearing"  # 0.04 < 0.05 <= 0.30
    assert (row["p_holm_raw"], row["p_holm_calibrated"], row["p_bh_raw"], row["p_bh_calibrated"]) == (
        0.06, 0.40, 0.04, 0.30)


@pytest.mark.parametrize("missing", ["none", "nan_raw", "nan_cal"])
def test_change_holm_absent_without_both_adjusted_p(missing):
    raw = {"effect_size": 1.0, "p_value": 0.01, "p_holm": 0.02, "p_bh": 0.02}
    cal = {"effect_size": 0.9, "p_value": 0.20, "p_holm": 0.40, "p_bh": 0.30}
    if missing == "none":
        del cal["p_holm"]
        del raw["p_bh"]
    elif missing == "nan_raw":
        raw["p_holm"] = raw["p_bh"] = NAN
    else:
        cal["p_holm"] = cal["p_bh"] = NAN
    row = compare_records(raw, cal, 0.05)
    assert "change_holm" not in row and "change_bh" not in row
    assert row["change"] == "Disappearing"


# --- comparison_rows --------------------------------------------------------------------------------


def _rec(model, cal, test, d, p, **extra):
    return {"model": model, "calibration": cal, "test": test, "effect_size": d, "p_value": p, **extra}


def test_comparison_rows_pairs_each_calibration_with_the_raw_label():
    recs = [
        _rec("g", "RAW", "W1", 1.0, 0.01, family="static", bias_type="Gender"),
        _rec("g", "Z", "W1", 0.3, 0.20, calibration_name="zca"),
        _rec("g", "P", "W1", -0.2, 0.01, calibration_name="pca"),
        _rec("h", "RAW", "W1", 0.1, 0.30),
        _rec("h", "Z", "W1", 0.2, 0.01, calibration_name="zca"),
        _rec("h", "Z", "W2", 0.2, 0.01),  # no raw record of (h, W2): no row
    ]
    # the raw space is the one *named* "none", whatever its label; listed second on purpose
    cals = [{"label": "Z", "name": "zca"}, {"label": "RAW", "name": "none"}, {"label": "P", "name": "pca"}]
    rows = comparison_rows(recs, cals, 0.05)
    key = [(r["model"], r["calibration"], r["test"]) for r in rows]
    assert key == [("g", "Z", "W1"), ("g", "P", "W1"), ("h", "Z", "W1")]
    g_z, g_p, h_z = rows
    assert (g_z["d_raw"], g_z["d_calibrated"], g_z["change"]) == (1.0, 0.3, "Disappearing")
    assert g_z["delta_d"] == pytest.approx(-0.7) and g_z["large_shift"] and not g_z["sign_reversal"]
    assert (g_z["family"], g_z["bias_type"], g_z["calibration_name"]) == ("static", "Gender", "zca")
    assert (g_p["change"], g_p["sign_reversal"], g_p["calibration_name"]) == ("Stable", True, "pca")
    assert (h_z["d_raw"], h_z["p_raw"], h_z["change"]) == (0.1, 0.30, "Emerging")


def test_comparison_rows_default_raw_label_is_none():
    recs = [_rec("g", "none", "W1", 1.0, 0.01), _rec("g", "zca", "W1", 1.0, 0.5)]
    rows = comparison_rows(recs, [{"label": "zca", "name": "zca"}], 0.05)
    assert [(r["calibration"], r["change"]) for r in rows] == [("zca", "Disappearing")]


# --- result_from_record ------------------------------------------------------------------------------


def test_result_from_record_prefers_model_name_over_the_runner_label():
    rec = _result(model="ignored").to_dict()
    rec.update(model="g50", model_name="glove-6b-50d")
    assert result_from_record(rec).model == "glove-6b-50d"
    rec.update(model_name=None)
    assert result_from_record(rec).model == "g50"
    del rec["model_name"]
    assert result_from_record(rec).model == "g50"
    del rec["model"]
    assert result_from_record(rec).model == ""


# --- Comparison / ComparisonRow ----------------------------------------------------------------------


def _comparison():
    pairs = [
        (_result("W1", d=1.0, p=0.01), _result("W1", d=0.2, p=0.30, calibration="zca")),  # D, large
        (_result("W2", d=0.5, p=0.20), _result("W2", d=-0.3, p=0.01, calibration="zca")),  # E, large, sign
        (_result("W3", d=0.4, p=0.01), _result("W3", d=0.5, p=0.02, calibration="zca")),  # S
        (_result("W4", d=0.4, p=0.30), _result("W4", d=0.3, p=0.40, calibration="zca")),  # S
        (_result("W5", d=0.4, p=0.02), _result("W5", d=0.3, p=0.40, calibration="zca")),  # D
    ]
    rows = tuple(_row(r, c, 0.05) for r, c in pairs)
    return Comparison(model="m", calibration="zca", alpha=0.05, rows=rows, calibrator_metadata={"eps": 1e-3})


def test_summary_counts_by_hand():
    s = _comparison().summary()
    assert s == {"Stable": 2, "Disappearing": 2, "Emerging": 1, "large_shift": 2, "sign_reversal": 1}
    assert tuple(s)[:3] == CHANGE_CLASSES


def test_summary_of_no_rows_is_all_zero():
    c = Comparison(model="m", calibration="zca", alpha=0.05, rows=(), calibrator_metadata={})
    assert c.summary() == {"Stable": 0, "Disappearing": 0, "Emerging": 0, "large_shift": 0, "sign_reversal": 0}


def test_records_and_to_dict():
    c = _comparison()
    recs = c.records()
    assert [(r["test"], r["calibration"], r["change"]) for r in recs[:4]] == [
        ("W1", "none", "Disappearing"), ("W1", "zca", "Disappearing"),
        ("W2", "none", "Emerging"), ("W2", "zca", "Emerging"),
    ]
    assert len(recs) == 10
    d = c.to_dict()
    assert (d["model"], d["calibration"], d["alpha"], d["calibrator"]) == ("m", "zca", 0.05, {"eps": 1e-3})
    assert d["summary"]["Disappearing"] == 2
    row = d["rows"][1]
    assert (row["test"], row["d_raw"], row["d_calibrated"], row["p_raw"], row["p_calibrated"]) == (
        "W2", 0.5, -0.3, 0.20, 0.01)
    assert (row["change"], row["large_shift"], row["sign_reversal"], row["calibration"]) == (
        "Emerging", True, True, "zca")
    assert row["delta_d"] == pytest.approx(-0.8)


def test_results_are_frozen():
    c = _comparison()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.alpha = 0.1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.rows[0].change = "Stable"  # type: ignore[misc]
    assert isinstance(c.rows[0], ComparisonRow)


# --- compare_calibration on a small synthetic model ---------------------------------------------------
# A 5-dimensional model of 47 random words (4 or 5 per set, 30 reference-only words) and tests that use
# them: every comparison runs in milliseconds, and the expected effect sizes are recomputed from the
# vectors here (cosines, s(w, A, B), d with the sample sd), the expected seeds from numpy's SeedSequence.


def _toy_words():
    return ([f"x{i}" for i in range(5)] + [f"y{i}" for i in range(4)] + [f"a{i}" for i in range(4)]
            + [f"b{i}" for i in range(4)] + [f"r{i}" for i in range(30)])


def _toy_model(seed=0, name="toy"):
    from isoeat import StaticVectors

    words = _toy_words()
    vecs = np.random.default_rng(seed).normal(size=(len(words), 5)) + np.array([2.0, 1.0, 0.0, 0.0, 0.5])
    return StaticVectors(words, vecs, name=name)


def _toy_test(tid="T1", x=("x0", "x1", "x2", "x3"), a=("a0", "a1", "a2", "a3")):
    from isoeat import AssociationTest, WordSet

    return AssociationTest(id=tid, bias_type="Toy", X=WordSet("x", tuple(x)), Y=WordSet("y", ("y0", "y1", "y2", "y3")),
                           A=WordSet("a", tuple(a)), B=WordSet("b", ("b0", "b1", "b2", "b3")))


def _d_from_scratch(model, test, shift=None, ddof=1):
    """WEAT d: s(w) = mean cos(w, A) - mean cos(w, B); d = (mean s_X - mean s_Y) / sd(s over X and Y)."""
    def vec(words):
        V = np.array([model.vectors[model.words.index(w)] for w in words], dtype=float)
        return V if shift is None else V - shift

    X, Y, A, B = (vec(test.sets()[k].words) for k in "XYAB")

    def s(w):
        cos = lambda V: V @ w / (np.linalg.norm(V, axis=1) * np.linalg.norm(w))  # noqa: E731
        return cos(A).mean() - cos(B).mean()

    sx, sy = [s(w) for w in X], [s(w) for w in Y]
    return (np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=ddof)


def _streams(seed, space, tests):
    """What each result records: the root seed and its named stream (the rule is tests/_streams.py's)."""
    return [(seed, ("weat", t)) for t in tests]


def test_compare_calibration_pairs_raw_and_calibrated_with_their_own_seeds_and_progress():
    from isoeat import compare_calibration
    from isoeat.calibration import fit_calibrator

    model = _toy_model()
    center = fit_calibrator(model, "center")
    tests = [_toy_test("T1"), _toy_test("T2", a=("a1", "a2", "a3", "r0")), _toy_test("T3", x=("x4", "x1", "x2"))]
    calls = []
    comp = compare_calibration(model, tests, calibration=center, rng=7, progress=lambda *a: calls.append(a))
    # every result draws from its own named stream of seed 7: (weat, TEST), the same in both spaces
    assert [(r.raw.seed, r.raw.seed_stream) for r in comp.rows] == _streams(7, "none", ["T1", "T2", "T3"])
    assert [(r.calibrated.seed, r.calibrated.seed_stream) for r in comp.rows] == _streams(7, "center",
                                                                                         ["T1", "T2", "T3"])
    assert calls == [(1, 6, "T1 raw"), (2, 6, "T1 center"), (3, 6, "T2 raw"), (4, 6, "T2 center"),
                     (5, 6, "T3 raw"), (6, 6, "T3 center")]
    assert comp.calibration == "center" and comp.model == "toy"
    assert comp.calibrator_metadata["model_fingerprint"] == model.fingerprint
    mean = np.asarray(model.vectors, dtype=float).mean(axis=0)  # center's reference: the whole 47-word vocabulary
    for row, t in zip(comp.rows, tests):
        assert (row.raw.calibration, row.calibrated.calibration) == ("none", "center")
        assert row.raw.effect_size == pytest.approx(_d_from_scratch(model, t), abs=1e-12)
        assert row.calibrated.effect_size == pytest.approx(_d_from_scratch(model, t, shift=mean), abs=1e-12)
        assert row.raw.ddof == 1  # the default ddof
    # Holm and BH within each space separately (one family per space)
    for side in ("raw", "calibrated"):
        p = [getattr(r, side).p_value for r in comp.rows]
        np.testing.assert_allclose([getattr(r, side).p_holm for r in comp.rows], _holm(p))
        np.testing.assert_allclose([getattr(r, side).p_bh for r in comp.rows], _bh(p))


def test_compare_calibration_default_seed_is_fresh_and_recorded_and_ddof_is_passed():
    from isoeat import compare_calibration
    from isoeat.calibration import fit_calibrator

    model = _toy_model()
    center = fit_calibrator(model, "center")
    tests = [_toy_test("T1"), _toy_test("T2", a=("a1", "a2", "a3", "r0"))]
    comp = compare_calibration(model, tests, calibration=center, rng=0)
    assert [(r.raw.seed, r.raw.seed_stream) for r in comp.rows] == _streams(0, "none", ["T1", "T2"])
    assert [(r.calibrated.seed, r.calibrated.seed_stream) for r in comp.rows] == _streams(0, "center", ["T1", "T2"])
    fresh = compare_calibration(model, tests, calibration=center)  # rng=None (issue 33): a fresh root, recorded
    root = fresh.rows[0].raw.seed
    assert [(r.raw.seed, r.raw.seed_stream) for r in fresh.rows] == _streams(root, "none", ["T1", "T2"])
    comp0 = compare_calibration(model, tests[:1], calibration=center, ddof=0)
    assert comp0.rows[0].raw.ddof == 0
    assert comp0.rows[0].raw.effect_size == pytest.approx(_d_from_scratch(model, tests[0], ddof=0), abs=1e-12)


def test_compare_calibration_takes_its_root_seed_from_a_seed_sequence():
    from isoeat import compare_calibration

    model = _toy_model()
    root = np.random.SeedSequence(11)
    comp = compare_calibration(model, [_toy_test("T1"), _toy_test("T2")], calibration="center", rng=root)
    # a SeedSequence gives one root seed, its first generated word; every result records it
    first = int(np.random.SeedSequence(11).generate_state(1)[0])
    assert [r.calibrated.seed for r in comp.rows] == [first, first]
    assert [r.calibrated.seed_stream for r in comp.rows] == [("weat", "T1"), ("weat", "T2")]


def test_compare_calibration_fits_the_named_calibration_with_its_defaults():
    from isoeat import compare_calibration

    model = _toy_model()
    comp = compare_calibration(model, [_toy_test()])
    # default: zca with its default eps, fitted on n_reference = 100,000 asked (the vocabulary has 47 words)
    assert comp.calibration == "zca" and comp.alpha == 0.05
    meta = comp.calibrator_metadata
    assert meta["calibration"] == "zca" and meta["params"] == {"eps": 1e-3, "eps_mode": "absolute"} and meta["n"] == 47
    assert "asked for 100000" in meta["reference"]
    comp = compare_calibration(model, [_toy_test()], calibration="abtt", calibration_params={"n_components": 2},
                               n_reference=40, alpha=0.75)
    assert comp.calibration == "abtt" and comp.alpha == 0.75
    assert comp.calibrator_metadata["params"] == {"n_components": 2} and comp.calibrator_metadata["n"] == 40


def test_compare_calibration_prefers_the_fitted_calibrator_over_the_default_name():
    from isoeat import compare_calibration
    from isoeat.calibration import fit_calibrator

    model = _toy_model()
    center = fit_calibrator(model, "center")
    for kw in ({"calibration": center}, {"calibration": {"mine": center}}):
        comp = compare_calibration(model, [_toy_test()], **kw)
        assert comp.calibration == "center" and comp.rows[0].calibrated.calibration == "center"
    with pytest.warns(DeprecationWarning, match="calibrator= is deprecated; use calibration="):
        assert compare_calibration(model, [_toy_test()], calibrator=center).calibration == "center"
    with pytest.raises(ConfigError, match="give calibration= only"):  # issue 33: one keyword, not two that race
        compare_calibration(model, [_toy_test()], calibrator=center, calibration="pca-whiten")


def test_compare_calibration_refuses_bad_arguments_before_any_fit():
    from isoeat import compare_calibration

    model = _toy_model()
    with pytest.raises(ConfigError, match="no tests given"):
        compare_calibration(model, [])
    for alpha in (0.0, 1.0, -0.1, 1.5):
        calls = []
        with pytest.raises(ConfigError, match="alpha must lie in"):
            compare_calibration(model, [_toy_test()], calibration="center", alpha=alpha,
                                progress=lambda *a: calls.append(a))
        assert calls == []  # refused up front, not after computing the WEATs (the change classes refuse it too)
    with pytest.raises(ConfigError, match="compares the raw space with itself"):
        compare_calibration(model, [_toy_test()], calibration="none")
    # just inside (0, 1) at both ends
    for alpha in (1e-12, 1.0 - 1e-12):
        assert compare_calibration(model, [_toy_test()], calibration="center", alpha=alpha).alpha == alpha


def test_compare_calibration_default_coverage_is_80_percent():
    from isoeat import CoverageError, compare_calibration

    model = _toy_model()
    four_of_five = _toy_test(x=("x0", "x1", "x2", "x3", "zz0"))  # coverage 0.8: kept
    comp = compare_calibration(model, [four_of_five], calibration="center")
    assert comp.rows[0].raw.n_x == 4 and comp.rows[0].raw.dropped == ("X:zz0",)
    three_of_five = _toy_test(x=("x0", "x1", "x2", "zz0", "zz1"))  # coverage 0.6 < 0.8: refused
    with pytest.raises(CoverageError):
        compare_calibration(model, [three_of_five], calibration="center")
    comp = compare_calibration(model, [three_of_five], calibration="center", min_coverage=0.6)
    assert comp.rows[0].calibrated.n_x == 3


def test_compare_calibration_default_permutations_and_force():
    from isoeat import FingerprintMismatchError, compare_calibration
    from isoeat.calibration import fit_calibrator

    model = _toy_model()
    comp = compare_calibration(model, [_toy_test()], calibration="center", method="monte-carlo")
    assert comp.rows[0].raw.n_permutations == 100_000 and comp.rows[0].calibrated.n_permutations == 100_000
    other = fit_calibrator(_toy_model(seed=1, name="other"), "center")  # fitted on another model
    with pytest.raises(FingerprintMismatchError):
        compare_calibration(model, [_toy_test()], calibration=other)
    assert compare_calibration(model, [_toy_test()], calibration=other, force=True).calibration == "center"


def test_compare_calibration_auto_reference_defaults(monkeypatch):
    """Defaults of the adaptive reference (docs/reference-size.md): SE tolerance 0.02, cap 100,000, 100 shards."""
    import isoeat.experiments.reference as R
    from isoeat import compare_calibration

    seen: dict = {}

    class Stop(Exception):
        pass

    def fake(model, tests, **kw):
        seen.update(kw)
        raise Stop

    monkeypatch.setattr(R, "fit_reference", fake)
    with pytest.raises(Stop):
        compare_calibration(_toy_model(), [_toy_test()], n_reference="auto")
    assert (seen["size"], seen["tolerance"], seen["max_size"], seen["shards"]) == ("auto", 0.02, 100_000, 100)
    seen.clear()
    with pytest.raises(Stop):
        compare_calibration(_toy_model(), [_toy_test()], n_reference=40, reference_shards=4, reference_tolerance=0.5,
                            reference_max=60)
    assert (seen["size"], seen["tolerance"], seen["max_size"], seen["shards"]) == (40, 0.5, 60, 4)
    # the shards' order: the root seed (an integer rng; a SeedSequence's first word), as every stream of the run
    for rng, seed in ((3, 3), (np.random.SeedSequence(7), int(np.random.SeedSequence(7).generate_state(1)[0]))):
        seen.clear()
        with pytest.raises(Stop):
            compare_calibration(_toy_model(), [_toy_test()], reference_shards=4, rng=rng)
        assert seen["seed"] == seed
