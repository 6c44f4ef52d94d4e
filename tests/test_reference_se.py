"""Reference-SE (delete-one-shard jackknife of the calibrated d) and ``--reference-size auto``.

Expected values are computed here from scratch with numpy: the shards are the
documented seeded random order of the top-N rows (``numpy.random.default_rng(seed)
.permutation``) cut in blocks of ceil(N/K); each left-out fit is mean, covariance
(n-1), eigendecomposition and W = U (L + eps)^(-1/2) U^T written out below, and d
is the WEAT effect size from cosines. The simulation compares the SE with the
spread of d over independent reference samples of the same size.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from isoeat import AssociationTest, ConfigError, StaticVectors, WordSet
from isoeat.experiments.compare import classify_change, compare_calibration
from isoeat.experiments.reference import (
    AUTO_SHARDS,
    MIN_AUTO_SHARDS,
    STABLE_SHARDS,
    _stable,
    fit_reference,
    jackknife_se,
    memory_needed,
)
from isoeat.reporting.tables import comparison_table

DIM = 4
EPS = 1e-3
TEST_WORDS = ([f"x{i}" for i in range(5)] + [f"y{i}" for i in range(5)] + [f"a{i}" for i in range(4)]
              + [f"b{i}" for i in range(4)])
SCALES = np.array([3.0, 1.0, 0.5, 0.2])  # anisotropic reference: whitening moves the test words


def _test(tid="T1"):
    return AssociationTest(id=tid, bias_type="Toy", X=WordSet("x", tuple(TEST_WORDS[0:5])),
                           Y=WordSet("y", tuple(TEST_WORDS[5:10])), A=WordSet("a", tuple(TEST_WORDS[10:14])),
                           B=WordSet("b", tuple(TEST_WORDS[14:18])))


def _test_vectors(seed=100):
    """Fixed test-word vectors: X leans towards A, Y towards B (a visible, not saturated, effect)."""
    rng = np.random.default_rng(seed)
    a_dir, b_dir = rng.normal(size=DIM), rng.normal(size=DIM)
    rows = []
    for w in TEST_WORDS:
        base = rng.normal(size=DIM) * SCALES + 0.5
        lean = {"x": 0.6 * a_dir, "y": 0.6 * b_dir, "a": a_dir, "b": b_dir}[w[0]]
        rows.append(base + lean)
    return np.array(rows)


def _model(n_ref, seed=0, test_seed=100):
    """Static vectors: ``n_ref`` reference rows first (the 'most frequent'), the test words last."""
    ref = np.random.default_rng(seed).normal(size=(n_ref, DIM)) * SCALES + np.array([1.0, -0.5, 0.3, 0.0])
    words = [f"r{i}" for i in range(n_ref)] + TEST_WORDS
    return StaticVectors(words, np.vstack([ref, _test_vectors(test_seed)]), name="toy")


# --- from scratch ---------------------------------------------------------------------------------


def _zca_from_scratch(R):
    mu = R.mean(axis=0)
    C = (R - mu).T @ (R - mu) / (len(R) - 1)
    lam, U = np.linalg.eigh(C)
    return mu, U @ np.diag(1.0 / np.sqrt(lam + EPS)) @ U.T


def _d_from_scratch(V, mu=None, W=None):
    """WEAT d of the toy test on rows V (TEST_WORDS order), after z = (v - mu) W when given."""
    Z = V if W is None else (V - mu) @ W
    Z = Z / np.linalg.norm(Z, axis=1, keepdims=True)
    X, Y, A, B = Z[0:5], Z[5:10], Z[10:14], Z[14:18]
    s = lambda T: (T @ A.T).mean(axis=1) - (T @ B.T).mean(axis=1)  # noqa: E731
    sx, sy = s(X), s(Y)
    return (sx.mean() - sy.mean()) / np.concatenate([sx, sy]).std(ddof=1)


def _jackknife_from_scratch(model, n, k, seed):
    R = np.asarray(model.vectors[:n], dtype=float)
    from _streams import stream_seed

    order = np.random.default_rng(stream_seed(seed, "reference-shards")).permutation(n)  # the named stream's order
    size = -(-n // k)
    shards = [order[i:i + size] for i in range(0, n, size)]
    V = np.asarray(model.vectors[n:], dtype=float)
    d = []
    for i in range(len(shards)):
        keep = np.concatenate([s for j, s in enumerate(shards) if j != i])
        d.append(_d_from_scratch(V, *_zca_from_scratch(R[keep])))
    d = np.array(d)
    return math.sqrt((k - 1) / k * ((d - d.mean()) ** 2).sum()), _d_from_scratch(V, *_zca_from_scratch(R))


# --- the formula ----------------------------------------------------------------------------------


def test_jackknife_se_hand_values():
    # sqrt((K-1)/K * sum (v - mean)^2): [1, 2, 3] -> sqrt(2/3 * 2); a single value has no SE
    assert jackknife_se([1.0, 2.0, 3.0]) == pytest.approx(math.sqrt(4 / 3), rel=1e-12)
    assert jackknife_se([0.5, 0.5, 0.5, 0.5]) == 0.0
    assert math.isnan(jackknife_se([1.0]))


@pytest.mark.parametrize("n,k,seed", [(300, 5, 3), (257, 10, 0)])
def test_reference_se_equals_jackknife_from_scratch(n, k, seed):
    model = _model(n, seed=seed)
    fit = fit_reference(model, [_test()], size=n, shards=k, seed=seed, params={"eps": EPS})
    se, d_full = _jackknife_from_scratch(model, n, k, seed)
    assert fit.shards == k and fit.size == n and fit.mode == "fixed"
    assert fit.reference_se["T1"] == pytest.approx(se, rel=1e-7)
    assert fit.d["T1"] == pytest.approx(d_full, rel=1e-9)
    # the fitted calibrator is the full top-n fit (merged shards)
    np.testing.assert_allclose(fit.calibrator.mean_, np.asarray(model.vectors[:n]).mean(axis=0), rtol=1e-10)
    assert fit.calibrator.metadata_["reference_se"] == fit.reference_se
    assert fit.calibrator.metadata_["n"] == n


def test_simulation_se_matches_spread_over_independent_reference_samples():
    """SE from one reference sample vs the SD of d over 40 independent samples of the same size (seeded)."""
    n, reps = 200, 40
    d, se = [], []
    for rep in range(reps):
        fit = fit_reference(_model(n, seed=1000 + rep), [_test()], size=n, shards=10, seed=rep,
                            params={"eps": EPS})
        d.append(fit.d["T1"])
        se.append(fit.reference_se["T1"])
    spread, typical = float(np.std(d, ddof=1)), float(np.median(se))
    assert spread > 0.01  # the reference sample matters in this setting
    assert 0.5 < typical / spread < 2.0, (typical, spread)


# --- auto -----------------------------------------------------------------------------------------


def test_auto_stops_early_on_an_easy_case_and_records_the_size():
    n = 2000
    fit = fit_reference(_model(n), [_test()], size="auto", max_size=n, tolerance=1.0, classify=classify_change,
                        params={"eps": EPS})
    shard = n // AUTO_SHARDS
    assert fit.stopped == "stable" and fit.shards == MIN_AUTO_SHARDS
    assert fit.size == MIN_AUTO_SHARDS * shard
    assert fit.calibrator.n_samples_seen_ == fit.size
    assert fit.calibrator.metadata_["reference_size"] == fit.size
    assert fit.calibrator.metadata_["reference_mode"] == "auto"


def test_auto_runs_to_the_cap_on_a_hard_case():
    n = 2000
    fit = fit_reference(_model(n), [_test()], size="auto", max_size=n, tolerance=1e-9, classify=classify_change,
                        params={"eps": EPS})
    assert fit.stopped == "cap" and fit.size == n and fit.shards == AUTO_SHARDS
    assert [s["size"] for s in fit.steps] == [k * n // AUTO_SHARDS for k in range(2, AUTO_SHARDS + 1)]


def test_auto_tolerance_is_strict_at_its_boundary():
    n = 2000
    common = dict(size="auto", max_size=n, classify=classify_change, params={"eps": EPS})
    probe = fit_reference(_model(n), [_test()], tolerance=1e-9, **common)
    at_min = next(s for s in probe.steps if s["shards"] == MIN_AUTO_SHARDS)["max_se"]
    equal = fit_reference(_model(n), [_test()], tolerance=at_min, **common)
    above = fit_reference(_model(n), [_test()], tolerance=float(np.nextafter(at_min, np.inf)), **common)
    assert equal.shards > MIN_AUTO_SHARDS  # SE == tolerance is not below it
    assert above.shards == MIN_AUTO_SHARDS and above.stopped == "stable"


def _steps(classes, se=0.001):
    return [{"shards": MIN_AUTO_SHARDS - len(classes) + 1 + i, "max_se": se, "classes": c}
            for i, c in enumerate(classes)]


def test_stopping_rule_no_class_flip_over_the_last_two_shards():
    S, D = {"T": "Stable"}, {"T": "Disappearing"}
    assert STABLE_SHARDS == 2
    assert _stable(_steps([S, S, S]), 0.02)
    assert not _stable(_steps([D, S, S]), 0.02)  # a flip within the last 2 shards
    assert not _stable(_steps([S, D, S]), 0.02)
    assert _stable(_steps([D, S, S, S]), 0.02)  # a flip 3 shards back is outside the window
    assert not _stable(_steps([S, S, S], se=0.02), 0.02)


def test_auto_needs_a_mergeable_calibration_and_a_classifier():
    with pytest.raises(ConfigError, match="mergeable"):
        fit_reference(_model(200), [_test()], calibration="abtt", size=200)
    with pytest.raises(ConfigError, match="classify"):
        fit_reference(_model(200), [_test()], size="auto", max_size=200)


def test_memory_budget_is_checked_at_its_boundary_before_encoding():
    need = memory_needed(DIM, 10)
    fit_reference(_model(200), [_test()], size=200, shards=10, memory=need)
    with pytest.raises(ConfigError, match="budget"):
        fit_reference(_model(200), [_test()], size=200, shards=10, memory=need - 1)
    assert memory_needed(1024, 10) == 16 * 1024 * 1024 * 8 + 10 * 1024 * 8  # (K + 6) d^2 + K d doubles


# --- contextual-style models (reference_batches, chunks of sentences) ------------------------------


class _Streamed:
    """A fake contextual encoder: chunks of ``chunk_size`` sentences, 2 vectors per sentence."""

    chunk_size = 10

    def __init__(self, n_sentences, seed=0):
        self.static = _model(2 * n_sentences, seed=seed)
        self.n_sentences, self.name, self.dim, self.consumed = n_sentences, "streamed", DIM, 0

    def lookup(self, words):
        return self.static.lookup(words)

    def reference_metadata(self, n, **_):
        return {"n_sentences": min(n, self.n_sentences)}

    def reference_batches(self, n, **_):
        m = min(n, self.n_sentences)
        R = np.asarray(self.static.vectors[:2 * m], dtype=float)

        def gen():
            for c0 in range(0, m, self.chunk_size):
                self.consumed += 1
                yield R[2 * c0:2 * min(c0 + self.chunk_size, m)]

        return gen(), f"{m} sentences"


def test_streamed_shards_count_sentences_and_stop_encoding_early():
    enc = _Streamed(400)
    fit = fit_reference(enc, [_test()], size="auto", max_size=400, tolerance=1.0, classify=classify_change,
                        params={"eps": EPS})
    assert fit.unit == "sentences" and fit.size == MIN_AUTO_SHARDS * 20  # shards of 400/20 = 2 chunks
    assert enc.consumed == fit.size // enc.chunk_size  # nothing encoded past the stop
    R = np.asarray(enc.static.vectors[:2 * fit.size], dtype=float)
    np.testing.assert_allclose(fit.calibrator.mean_, R.mean(axis=0), rtol=1e-10)


def test_streamed_fixed_size_matches_jackknife_over_chunk_groups():
    enc = _Streamed(100)
    fit = fit_reference(enc, [_test()], size=100, shards=5, params={"eps": EPS})
    R = np.asarray(enc.static.vectors[:200], dtype=float)  # shards: sentences 0-19, 20-39, ... (2 rows each)
    V = np.asarray(enc.static.vectors[len(enc.static) - len(TEST_WORDS):], dtype=float)
    d = [_d_from_scratch(V, *_zca_from_scratch(np.delete(R, np.s_[40 * i:40 * (i + 1)], axis=0))) for i in range(5)]
    assert fit.shards == 5
    assert fit.reference_se["T1"] == pytest.approx(math.sqrt(4 / 5 * np.sum((np.array(d) - np.mean(d)) ** 2)),
                                                   rel=1e-7)


# --- the comparison and its table ----------------------------------------------------------------------


def test_compare_calibration_reports_reference_se_and_the_table_shows_it_only_then():
    model, test = _model(300), _test()
    # stability="off": the Firm column (static default; none from 5 shards) is another test's (test_stability.py)
    plain = compare_calibration(model, [test], n_reference=300, n_permutations=1000, rng=0, stability="off")
    sharded = compare_calibration(model, [test], n_reference=300, reference_shards=5, n_permutations=1000, rng=0,
                                  stability="off")
    se, _ = _jackknife_from_scratch(model, 300, 5, 0)  # the shards' order: the stream of root seed 0
    assert plain.rows[0].reference_se is None and "reference_se" not in plain.rows[0].to_dict()
    assert sharded.rows[0].reference_se == pytest.approx(se, rel=1e-7)
    assert sharded.rows[0].to_dict()["reference_se"] == sharded.rows[0].reference_se
    raw_rec, cal_rec = sharded.records()
    assert raw_rec["reference_se"] is None and cal_rec["reference_se"] == sharded.rows[0].reference_se
    assert cal_rec["reference_size"] == 300 and raw_rec["reference_size"] is None
    head_plain = comparison_table(plain).splitlines()[2].split()
    head_sharded = comparison_table(sharded).splitlines()[2].split()
    assert "SE_ref" not in head_plain
    assert head_sharded == head_plain[:head_plain.index("d_W") + 1] + ["SE_ref"] + head_plain[head_plain.index("d_W") + 1:]
    assert "reference size used: 300 words" in comparison_table(sharded)


def test_compare_calibration_auto_records_the_size_used():
    comp = compare_calibration(_model(2000), [_test()], n_reference="auto", reference_max=2000,
                               reference_tolerance=1.0, n_permutations=1000)
    assert comp.calibrator_metadata["reference_size"] == MIN_AUTO_SHARDS * 100
    assert comp.calibrator_metadata["reference_stopped"] == "stable"
    assert "--reference-size auto" in comparison_table(comp)


# --- isoeat run ------------------------------------------------------------------------------------


def test_run_reference_size_auto_records_and_prints_the_size_used(tmp_path, glove, capsys):
    import json

    from isoeat.cli import main

    out = tmp_path / "r"
    # cap 4000 -> shards of 200 words; tolerance 1 is met at once: stops after MIN_AUTO_SHARDS shards
    assert main(["run", "--tests", "W6,W9", "--reference-size", "auto", "--reference-max", "4000",
                 "--reference-tolerance", "1", "--permutations", "1000", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    used = MIN_AUTO_SHARDS * 4000 // AUTO_SHARDS
    assert f"reference size used: {used} words (--reference-size auto" in text
    assert text.splitlines()[2].split()[5:7] == ["d_W", "SE_ref"]
    rec = json.loads((out / "manifest.json").read_text())["calibrators"]["glove-6b-50d/zca"]
    assert rec["reference_size"] == used and rec["n"] == used and rec["reference_mode"] == "auto"
    assert set(rec["reference_se"]) == {"W6", "W9"} and all(0 < v < 1 for v in rec["reference_se"].values())
    assert main(["run", "--tests", "W6,W9", "--reference-size", "auto", "--reference-max", "4000",
                 "--reference-tolerance", "1", "--permutations", "1000", "--out", str(out), "--format", "json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    cal = [r for r in recs if r["calibration"] == "zca"]
    assert [r["reference_se"] for r in cal] == [rec["reference_se"]["W6"], rec["reference_se"]["W9"]]
    assert {r["reference_size"] for r in cal} == {used}


@pytest.mark.parametrize("extra,message", [
    (["--reference-tolerance", "0.1"], "--reference-tolerance: only used with --reference-size auto"),
    (["--reference-max", "5000"], "--reference-max: only used with --reference-size auto"),
    (["--reference-size", "auto", "--reference-shards", "5"], "--reference-shards: --reference-size auto chooses"),
    (["--reference-size", "auto", "--calibration", "abtt"], "mergeable statistics"),
    (["--reference-shards", "1"], "--reference-shards must be from 2 to 200, got 1"),
])
def test_run_reference_options_refused_in_one_line(tmp_path, glove, capsys, extra, message):
    from isoeat.cli import main

    assert main(["run", "--tests", "W6", *extra]) == 2
    assert message in capsys.readouterr().err


def test_run_reference_size_is_a_number_or_auto(capsys):
    from isoeat.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--tests", "W6", "--reference-size", "several"])
    assert "--reference-size must be a whole number >= 1 or 'auto', got 'several'" in capsys.readouterr().err


def test_a_vocabulary_smaller_than_the_reference_size_is_sharded_by_what_there_is():
    model = _model(100)  # 118 rows in all; asked for 100,000
    fit = fit_reference(model, [_test()], size=100_000, shards=10, params={"eps": EPS})
    assert fit.shards == 10 and fit.size == len(model)
    auto = fit_reference(model, [_test()], size="auto", max_size=100_000, tolerance=1e-9, classify=classify_change,
                         params={"eps": EPS})
    assert auto.shards == AUTO_SHARDS and auto.size == len(model) and auto.stopped == "cap"


# --- precision of one SE and the finite-population factor of auto (issue 35) ---------------------------


def test_stated_precision_is_the_measured_spread_over_k_minus_1_degrees_of_freedom():
    from isoeat.experiments.reference import DEFAULT_SHARDS, SE_SPREAD, se_precision

    # a variance on K-1 degrees of freedom has CV sqrt(2/(K-1)), so its square root about 1/sqrt(2(K-1))
    for k in (2, 10, 100):
        assert se_precision(k) == pytest.approx(SE_SPREAD / math.sqrt(2 * (k - 1)), rel=1e-15)
    # the default is the fewest shards whose stated precision is within +-10% (the benchmark's measured CV:
    # 0.061-0.080 at K = 100 on glove-6b-50d, W1-W10)
    assert se_precision(DEFAULT_SHARDS) <= 0.10 < se_precision(DEFAULT_SHARDS // 2)
    with pytest.raises(ConfigError, match="reference shards"):
        se_precision(1)


def test_auto_on_a_static_model_reports_the_se_of_a_subset_drawn_without_replacement():
    from isoeat.experiments.reference import finite_population_factor, se_precision

    n = 2000
    fit = fit_reference(_model(n), [_test()], size="auto", max_size=n, tolerance=1.0, classify=classify_change,
                        params={"eps": EPS}, seed=4)
    used = fit.size  # the first shards of the seeded order: a subset of the top n rows, by hand below
    from _streams import stream_seed

    order = np.random.default_rng(stream_seed(4, "reference-shards")).permutation(n)  # the named stream's order
    shard = -(-n // AUTO_SHARDS)
    shards = [order[i:i + shard] for i in range(0, used, shard)]
    R, V = np.asarray(_model(n).vectors[:n], dtype=float), np.asarray(_model(n).vectors[n:], dtype=float)
    d = np.array([_d_from_scratch(V, *_zca_from_scratch(R[np.concatenate([s for j, s in enumerate(shards) if j != i])]))
                  for i in range(len(shards))])
    k = len(shards)
    jack = math.sqrt((k - 1) / k * ((d - d.mean()) ** 2).sum())
    factor = math.sqrt(1 - used / n)
    assert fit.reference_se["T1"] == pytest.approx(jack * factor, rel=1e-7)
    meta = fit.calibrator.metadata_
    assert meta["reference_se_factor"] == pytest.approx(factor, rel=1e-12) == finite_population_factor(used, n)
    assert meta["reference_population"] == n and meta["reference_se_precision"] == se_precision(k)
    fixed = fit_reference(_model(n), [_test()], size=n, shards=10, params={"eps": EPS})
    assert fixed.calibrator.metadata_["reference_se_factor"] == 1.0    # the whole sample: no correction


def test_corrected_se_matches_the_spread_over_subsets():
    # what auto does: subsets of n of the M rows without replacement; their d spreads by sqrt(1 - n/M) x the SE
    M, n, reps = 3000, 1500, 60
    base = _model(M)
    R = np.asarray(base.vectors[:M])
    gen = np.random.default_rng(8)
    d, se = [], []
    for rep in range(reps):
        rows = np.sort(gen.choice(M, n, replace=False))
        sub = StaticVectors([f"r{i}" for i in range(n)] + TEST_WORDS, np.vstack([R[rows], base.vectors[M:]]),
                            name="toy")
        fit = fit_reference(sub, [_test()], size=n, shards=20, seed=rep, params={"eps": EPS})
        d.append(fit.d["T1"])
        se.append(fit.reference_se["T1"])
    ratio = float(np.mean(se)) * math.sqrt(1 - n / M) / float(np.std(d, ddof=1))
    assert 0.75 < ratio < 1.3, ratio        # uncorrected it would be about 1.41 here


def test_run_records_and_prints_the_precision_of_the_se(glove, capsys):
    from isoeat.cli import main
    from isoeat.experiments.reference import DEFAULT_SHARDS, se_precision

    assert main(["run", "--tests", "W6", "--reference-shards", "--format", "json"]) == 0
    recs = {r["calibration"]: r for r in __import__("json").loads(capsys.readouterr().out)}
    assert recs["zca"]["reference_se_precision"] == pytest.approx(se_precision(DEFAULT_SHARDS), rel=1e-12)
    assert recs["none"]["reference_se_precision"] is None
    assert main(["run", "--tests", "W6", "--reference-shards", "10"]) == 0
    out = capsys.readouterr().out
    assert "over 10 shards" in out and "each SE_ref is itself uncertain by about ±29%" in out
