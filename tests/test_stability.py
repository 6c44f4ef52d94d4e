"""The stability marks (issue 32, item 6): the rule at its boundary, the redraws rebuilt by hand, the records,
the Firm column and its footer, the CLI option.

Expected values are derived here from their definitions: the redraws' calibrators from stacked copies of the
shards' rows (numpy covariance and eigh), d from cosines, the moved p from scipy's normal distribution.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import norm

import isoeat
from isoeat import AssociationTest, WordSet
from isoeat._errors import ConfigError
from isoeat.experiments.compare import ComparisonRow, compare_calibration
from isoeat.experiments.stability import redraw_d, redraw_statistics, redraw_weights
from isoeat.labels import STABILITY_SHARE, call_holds, holds_mark, replicate_agreement, shifted_p

# ---------------------------------------------------------------------------- the rule at its boundary

@pytest.mark.parametrize("same,total,holds", [(95, 100, True), (94, 100, False), (100, 100, True), (19, 20, True),
                                              (18, 20, False), (0, 0, False), (1, 1, True), (0, 1, False)])
def test_call_holds_at_the_stated_share(same, total, holds):
    assert STABILITY_SHARE == 0.95
    assert call_holds(same, total) is holds


def test_call_holds_is_exact_at_a_share_that_floats_miss():
    # 0.95 is not a binary fraction: 19/20 must hold although 19/20 < 0.95 could round either way
    assert call_holds(19, 20) and call_holds(57, 60) and not call_holds(56, 60)
    assert call_holds(3, 4, share=0.75) and not call_holds(2, 4, share=0.75)


def test_holds_mark_cells():
    assert holds_mark(95, 100) == "firm"  # the levels at their bounds: tests/test_firm_levels.py
    assert holds_mark(94, 100) == "borderline (94/100)"
    assert holds_mark(None, None) == "-"


# ---------------------------------------------------------------------------- the moved p

def _c(nx, ny):
    return math.sqrt(nx * ny / (nx + ny))


@pytest.mark.parametrize("p,d,d2,alt", [(0.03, 0.8, 0.6, "greater"), (0.2, 0.3, 0.9, "greater"),
                                        (0.04, -0.8, -0.5, "less"), (0.08, 0.7, -0.9, "two-sided")])
def test_shifted_p_follows_the_normal_slope(p, d, d2, alt):
    nx, ny = 8, 10
    c = _c(nx, ny)
    if alt == "greater":
        want = norm.sf(norm.isf(p) + c * (d2 - d))
    elif alt == "less":
        want = norm.cdf(norm.ppf(p) + c * (d2 - d))
    else:
        want = 2 * norm.sf(norm.isf(p / 2) + c * (abs(d2) - abs(d)))
    assert shifted_p(p, d, d2, nx, ny, alt) == pytest.approx(want, rel=1e-9)
    assert shifted_p(p, d, d, nx, ny, alt) == p


def test_shifted_p_matches_the_z_of_the_permutation_null():
    # Z = (T - E T) / SD T of the permutation null is sqrt(nx ny / n) d for d with ddof = 1 (Hoeffding):
    # check the slope against the exact null moments of a small s vector
    rng = np.random.default_rng(3)
    s = rng.normal(size=12)
    nx = 5
    n = len(s)
    T = s[:nx].sum()
    mean, var = nx * s.mean(), nx * (n - nx) / (n * (n - 1)) * ((s - s.mean()) ** 2).sum()
    z = (T - mean) / math.sqrt(var)
    d = (s[:nx].mean() - s[nx:].mean()) / s.std(ddof=1)
    assert z == pytest.approx(_c(nx, n - nx) * d, rel=1e-12)
    # so moving d by delta moves the normal score by c * delta
    p0 = norm.sf(z)
    assert shifted_p(p0, d, d + 0.1, nx, n - nx) == pytest.approx(norm.sf(z + _c(nx, n - nx) * 0.1), rel=1e-9)


def test_replicate_agreement_counts_same_calls():
    p, d = 0.03, 0.9
    reps = [0.9, 0.75, 0.7, 0.5, float("nan"), 1.2]
    for scale in (1.0, math.sqrt(2)):  # the default: a fresh draw is two draws' error away (sqrt 2)
        want = sum((norm.sf(norm.isf(p) + _c(8, 8) * scale * (x - d)) < 0.05) == (p < 0.05)
                   for x in reps if math.isfinite(x))
        assert replicate_agreement(p, d, reps, 8, 8, 0.05, scale=scale) == (want, 5)
    # d_W - 0.1 keeps p < .05 unscaled (z 1.88 - 0.2), not at sqrt(2) x 0.1 (z 1.60): the default is scaled
    assert replicate_agreement(p, d, [0.8], 8, 8, 0.05, scale=1.0) == (1, 1)
    assert replicate_agreement(p, d, [0.8], 8, 8, 0.05) == (0, 1)


# ---------------------------------------------------------------------------- redraws rebuilt by hand

def _toy(seed=0, n=300, dim=6):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n)]
    vecs = rng.normal(size=(n, dim)) + np.linspace(0, 2, dim)  # anisotropic: a shared offset
    vecs[0:5, 0] += 0.8  # X leans to A
    vecs[20:25, 0] += 1.0
    model = isoeat.StaticVectors(words, vecs, name="toy")
    test = AssociationTest("T1", "Toy", WordSet("x", tuple(words[0:5])), WordSet("y", tuple(words[5:10])),
                           WordSet("a", tuple(words[20:25])), WordSet("b", tuple(words[25:30])))
    return model, test, words, vecs


def _zca(rows, eps=1e-3):
    mu = rows.mean(axis=0)
    lam, u = np.linalg.eigh(np.cov(rows, rowvar=False))
    return mu, u @ np.diag(1 / np.sqrt(lam + eps)) @ u.T


def _d(sets, mu, w):
    z = {k: (v - mu) @ w for k, v in sets.items()}
    unit = {k: v / np.linalg.norm(v, axis=1, keepdims=True) for k, v in z.items()}

    def s(rows):
        return (rows @ unit["A"].T).mean(axis=1) - (rows @ unit["B"].T).mean(axis=1)

    sx, sy = s(unit["X"]), s(unit["Y"])
    return (sx.mean() - sy.mean()) / np.concatenate([sx, sy]).std(ddof=1)


def test_redraw_statistics_are_those_of_the_stacked_copies():
    from isoeat.calibration.moments import CovarianceAccumulator

    rng = np.random.default_rng(1)
    blocks = [rng.normal(size=(k, 4)) + i for i, k in enumerate((3, 5, 4))]
    parts = [CovarianceAccumulator().update(b) for b in blocks]
    w = [0, 2, 1]
    stacked = np.vstack([b for b, k in zip(blocks, w) for _ in range(k)])
    acc = redraw_statistics(parts, w)
    assert acc.n == len(stacked)
    np.testing.assert_allclose(acc.mean, stacked.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(acc.covariance(), np.cov(stacked, rowvar=False), rtol=1e-10, atol=1e-12)


def test_redraw_weights_draw_k_shards_with_replacement():
    w = redraw_weights(7, 50, 3)
    assert w.shape == (50, 7) and (w.sum(axis=1) == 7).all() and (w >= 0).all()
    assert (w == redraw_weights(7, 50, 3)).all() and not (w == redraw_weights(7, 50, 4)).all()
    assert (w.max(axis=1) > 1).any()  # with replacement


def test_redraw_d_matches_calibrators_built_by_hand():
    from isoeat.calibration import make_calibrator
    from isoeat.calibration.moments import CovarianceAccumulator

    model, test, words, vecs = _toy()
    blocks = [vecs[i:i + 30] for i in range(0, 300, 30)]  # 10 shards by hand
    parts = [CovarianceAccumulator().update(b) for b in blocks]
    sets = {"X": vecs[0:5], "Y": vecs[5:10], "A": vecs[20:25], "B": vecs[25:30]}
    got = redraw_d(parts, make_calibrator("zca"), {"T1": sets}, 12, seed=5)["T1"]
    want = []
    for w in redraw_weights(10, 12, 5):
        mu, wm = _zca(np.vstack([b for b, k in zip(blocks, w) for _ in range(k)]))
        want.append(_d(sets, mu, wm))
    np.testing.assert_allclose(got, want, rtol=1e-8)


def test_marks_of_compare_calibration_from_a_hand_computation():
    from isoeat.calibration.sample import reference_sample
    from isoeat.experiments.reference import shuffled

    # a toy whose calibrated call is near alpha (p = 0.040 on a 60-row reference): some redraws disagree
    model, test, words, vecs = _toy(seed=3)
    R, n = 40, 60
    comp = compare_calibration(model, [test], n_reference=n, stability=R, rng=0, progress=False)
    row = comp.rows[0]
    # the shards: the reference rows in the seeded order of the stream ("reference-shards",), in 100 shards
    # at most and at least 2 rows each: 30 shards of 2 rows
    rows, _ = reference_sample(model, shuffled(n, {}, 0))
    blocks = [rows[i:i + 2] for i in range(0, n, 2)]
    sets = {"X": vecs[0:5], "Y": vecs[5:10], "A": vecs[20:25], "B": vecs[25:30]}
    p, d = row.calibrated.p_value, row.calibrated.effect_size
    same = 0
    for w in redraw_weights(len(blocks), R, 0):
        mu, wm = _zca(np.vstack([b for b, c in zip(blocks, w) for _ in range(c)]))
        p2 = norm.sf(norm.isf(p) + _c(5, 5) * math.sqrt(2) * (_d(sets, mu, wm) - d))
        same += (p2 < 0.05) == (p < 0.05)
    assert (row.replicates_same, row.replicates) == (same, R)
    assert 0 < same < 38  # the case is not trivial: the mark is "no"
    assert row.call_holds is False and row.class_holds is False


# ---------------------------------------------------------------------------- only marks are added

def test_marks_change_no_number(glove):
    on = compare_calibration(glove, ["W6", "W9"], progress=False)
    off = compare_calibration(glove, ["W6", "W9"], progress=False, stability="off")
    for a, b in zip(on.rows, off.rows):
        assert (a.calibrated.effect_size, a.calibrated.p_value, a.raw.p_value, a.change) == \
               (b.calibrated.effect_size, b.calibrated.p_value, b.raw.p_value, b.change)
    assert all(r.replicates == 100 for r in on.rows) and all(r.replicates is None for r in off.rows)


def test_records_carry_the_columns(glove):
    comp = compare_calibration(glove, ["W6"], progress=False)
    raw, cal = comp.records()
    assert cal["call_holds"] is True and cal["class_holds"] is True and cal["replicate_share"] == "100/100"
    assert raw["call_holds"] is None and raw["class_holds"] is True and raw["replicate_share"] is None
    row = comp.rows[0].to_dict()
    assert row["call_holds"] is True and row["replicate_share"] == "100/100" and row["replicates"] == 100


def test_stability_refused_for_a_calibrator_fitted_elsewhere(glove):
    cal = isoeat.fit_calibrator(glove, "zca", n_reference=2000)
    with pytest.raises(ConfigError, match="stability"):
        compare_calibration(glove, ["W6"], calibration=cal, stability=50, progress=False)
    with pytest.raises(ConfigError, match="stability"):
        compare_calibration(glove, ["W6"], stability=1, progress=False)
    assert compare_calibration(glove, ["W6"], calibration=cal, progress=False).rows[0].replicates is None


# ---------------------------------------------------------------------------- the Firm column and the footer

def _comparison(same):
    from isoeat.experiments.compare import Comparison
    from isoeat.stats.weat import weat_from_vectors

    rng = np.random.default_rng(0)
    res = weat_from_vectors(*(rng.normal(size=(6, 4)) for _ in range(4)), rng=0)
    rows = tuple(ComparisonRow(test=f"T{i}", bias_type="Toy", raw=res, calibrated=res, change="Stable",
                               delta_d=0.0, large_shift=False, sign_reversal=False, replicates_same=k,
                               replicates=100) for i, k in enumerate(same))
    meta = {"reference_replicates": 100, "reference_replicate_shards": 100}
    return Comparison(model="toy", calibration="zca", alpha=0.05, rows=rows, calibrator_metadata=meta)


def test_firm_column_and_footer():
    from isoeat.reporting.tables import comparison_table

    text = comparison_table(_comparison([95, 94]))
    header = next(line for line in text.splitlines() if line.startswith("ID"))
    assert header.split()[-2:] == ["Firm", "Flags"]
    t0 = next(line for line in text.splitlines() if line.startswith("T0 "))
    t1 = next(line for line in text.splitlines() if line.startswith("T1 "))
    assert " firm " in t0 and "borderline (94/100)" in t1
    foot = next(line for line in text.splitlines() if line.startswith("Firm:"))
    assert "of 100 redraws" in foot and "100 shards" in foot and "isoeat sensitivity" in text
    assert "Track record" in foot


def test_no_firm_column_without_redraws():
    from isoeat.reporting.tables import comparison_table

    comp = _comparison([95])
    from dataclasses import replace

    comp = replace(comp, rows=tuple(replace(r, replicates_same=None, replicates=None) for r in comp.rows))
    text = comparison_table(comp)
    assert "Firm" not in text


# ---------------------------------------------------------------------------- the CLI

@pytest.fixture
def run_cli(capsys, glove):
    from isoeat.cli import main

    def call(*args):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return call


def test_run_records_and_option(run_cli):
    code, out, err = run_cli("run", "--tests", "W6,W9", "--format", "json")
    assert code == 0, err
    recs = json.loads(out)
    cal = [r for r in recs if r["calibration"] == "zca"]
    assert len(cal) == 2 and all(r["call_holds"] is True and r["replicate_share"] == "100/100" for r in cal)
    assert all(r["call_holds"] is None for r in recs if r["calibration"] == "none")
    code, out, err = run_cli("run", "--tests", "W6", "--stability", "off", "--format", "json")
    assert code == 0 and "call_holds" not in json.loads(out)[0]
    code, out, err = run_cli("run", "--tests", "W6", "--stability", "20")
    assert code == 0 and "20 redraws" in out and " firm " in out
    code, out, err = run_cli("run", "--tests", "W6", "--stability", "many")
    assert code == 2 and "--stability" in err and "Traceback" not in err
    code, out, err = run_cli("run", "--tests", "W6", "--stability", "1")
    assert code == 2 and "stability" in err and "Traceback" not in err and err.count("\n") == 1


def test_folder_records_and_report_table_mark_a_class_that_does_not_hold(tmp_path, run_cli):
    """A toy whose calibrated call is near alpha, run from files: comparison.csv carries the columns and the
    report's Table A1 marks the class with a dagger (its share recomputed by hand from the records)."""
    import csv

    model, test, words, vecs = _toy(seed=3)
    vf = tmp_path / "toy.txt"
    vf.write_text("".join(w + " " + " ".join(repr(float(x)) for x in v) + "\n" for w, v in zip(words, vecs)))
    tf = tmp_path / "t.yaml"
    tf.write_text("id: T1\nbias_type: Toy\nX: [%s]\nY: [%s]\nA: [%s]\nB: [%s]\n" % tuple(
        ", ".join(words[a:a + 5]) for a in (0, 5, 20, 25)))
    out = tmp_path / "res"
    code, text, err = run_cli("run", "--model", f"glove:{vf}", "--tests", str(tf), "--reference-size", "60",
                              "--stability", "40", "--out", str(out))
    assert code == 0, err
    with open(out / "comparison.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    same, total = map(int, row["replicate_share"].split("/"))
    assert total == 40 and 0 < same < 38
    assert row["call_holds"] == row["class_holds"] == "False"
    level = "borderline" if same >= 30 else "unstable"  # 1 - same/40 <= 25%: borderline
    assert f"{level} ({same}/40)" in text
    a1 = (out / "tables" / "table_a1-zca.md").read_text()
    assert "\u2020" in a1 and "1 of 1 classes" in a1
    assert r"\textdagger{}" in (out / "tables" / "table_a1-zca.tex").read_text()


def test_fit_reference_redraws_its_own_shards():
    """--reference-shards / auto / a contextual --stability R: the redraws come from fit_reference's one pass,
    the same shards as fit_stability's for the same size, shards and seed (a static model)."""
    from isoeat.experiments.reference import fit_reference
    from isoeat.experiments.stability import RedrawPlan, fit_stability

    model, test, words, vecs = _toy(seed=3)
    fit = fit_reference(model, [test], size=60, shards=30, seed=0, replicates=25)
    meta = fit.calibrator.metadata_
    assert meta["reference_replicates"] == 25 and meta["reference_replicate_shards"] == 30
    st = fit_stability(model, [test], RedrawPlan(size=60, shards=30, replicates=25, seed=0))
    np.testing.assert_allclose(meta["reference_replicate_d"]["T1"], st.replicate_d["T1"], rtol=1e-10)
    comp = compare_calibration(model, [test], n_reference=60, reference_shards=30, rng=0, progress=False)
    assert comp.rows[0].replicates == 100 and comp.rows[0].reference_se is not None  # auto: shards made anyway


def test_too_few_shards_give_no_marks():
    """A bootstrap of fewer than MIN_REDRAW_SHARDS = 20 groups (auto stopping at 5-19 shards) makes no redraws."""
    from isoeat.experiments.reference import MIN_REDRAW_SHARDS, fit_reference

    model, test, words, vecs = _toy(seed=3)
    assert MIN_REDRAW_SHARDS == 20
    fit = fit_reference(model, [test], size=60, shards=19, seed=0, replicates=25)
    assert "reference_replicate_d" not in fit.calibrator.metadata_
    fit = fit_reference(model, [test], size=60, shards=20, seed=0, replicates=25)
    assert len(fit.calibrator.metadata_["reference_replicate_d"]["T1"]) == 25
