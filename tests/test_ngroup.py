"""Issue 42, item 4: tests of k >= 2 target groups (Generalized WEAT, SAME, multiclass MAC and RNSB).

Every expected value is computed here from the papers' definitions with plain loops (or is WEFE's, from the fixture
``tests/data/wefe_ngroup.json`` that ``benchmarks/peers_ngroup.py --write-fixture`` wrote), never pasted from
isoeat's output.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

import isoeat
from isoeat import DataFormatError
from isoeat.cli import main
from isoeat.metrics.multiclass import mac_multiclass, rnsb_multiclass
from isoeat.metrics.ngroup import ngroup_from_vectors
from isoeat.stats.ngroup import group_permutation_test, gweat_test, n_assignments, same_test

HERE = Path(__file__).resolve().parent
# the word lists of docs/ngroup.md, read as plain YAML (not through isoeat's reader)
_EXAMPLE = {t["id"]: t for t in yaml.safe_load((HERE.parent / "examples" / "religion.yaml").read_text())["tests"]}
GROUPS = _EXAMPLE["religion-regions"]["targets"]
REGIONS = _EXAMPLE["religion-regions"]["attributes"]


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = int(exc.code or 0)
    return rc, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- from-scratch definitions
def _unit(v):
    v = [float(x) for x in v]
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def _dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def _mean(rows):
    return [sum(c) / len(rows) for c in zip(*rows)]


def _cos(a, b):
    return _dot(_unit(a), _unit(b))


def gweat_scratch(T, A):
    """Swinger et al. (2019): sum_i (mean_i x^ - mean x^) . (mean_i a^ - mean a^), unit vectors, k = m."""
    xs = [_mean([_unit(x) for x in t]) for t in T]
    ats = [_mean([_unit(a) for a in s]) for s in A]
    xbar, abar = _mean(xs), _mean(ats)
    return sum(_dot([p - q for p, q in zip(xi, xbar)], [p - q for p, q in zip(ai, abar)]) for xi, ai in zip(xs, ats))


def same_scratch(T, words):
    """SAME as the authors' same.py: b1 = mean(T2) - mean(T1); b_i = (mean(T_{i+1}) - mean(T1)) minus its
    projections on the earlier (normalised) b's; per word |cos(w, b1)| + sum_{j>=2} |cos(w, b_j)| * |b_j|."""
    means = [_mean([_unit(x) for x in t]) for t in T]
    pairs = [[p - q for p, q in zip(means[1], means[0])]]
    for i in range(2, len(T)):
        new = [p - q for p, q in zip(means[i], means[0])]
        for pair in pairs:
            u = _unit(pair)
            c = _dot(new, u)
            new = [p - c * q for p, q in zip(new, u)]
        pairs.append(new)
    vals = []
    for w in words:
        b = abs(_cos(w, pairs[0]))
        for p in pairs[1:]:
            b += abs(_cos(w, p)) * math.sqrt(_dot(p, p))
        vals.append(b)
    return sum(vals) / len(vals)


def mac_scratch(T, A):
    """Manzini et al. (2019) / WEFE: the mean over target words t and attribute sets A_j of mean_{a in A_j} 1 - cos."""
    scores = [sum(1 - _cos(t, a) for a in s) / len(s) for g in T for t in g for s in A]
    return sum(scores) / len(scores)


def _random_sets(seed, sizes, dim=6):
    r = np.random.default_rng(seed)
    return [r.normal(size=(n, dim)) for n in sizes]


# --------------------------------------------------------------------------- definitions
def test_mac_multiclass_equals_its_definition_unequal_sizes():
    T = _random_sets(1, [3, 5, 2])
    A = _random_sets(2, [4, 2, 3])
    assert mac_multiclass(T, A).estimate == pytest.approx(mac_scratch(T, A), abs=1e-12)


def test_mac_multiclass_two_groups_is_the_two_group_mac():
    from isoeat.metrics.formulas import mac

    T, A = _random_sets(3, [4, 4]), _random_sets(4, [3, 3])
    assert mac_multiclass(T, A).estimate == pytest.approx(mac(np.vstack(T), A[0], A[1]).estimate, abs=1e-14)


def test_gweat_and_same_equal_their_definitions():
    T, A = _random_sets(5, [3, 4, 2]), _random_sets(6, [2, 3, 4])
    G, _ = gweat_test(T, A, method="monte-carlo", n_permutations=10, rng=0)
    assert G == pytest.approx(gweat_scratch(T, A), abs=1e-12)
    S, per_word, _ = same_test(T, np.vstack(A), method="monte-carlo", n_permutations=10, rng=0)
    assert S == pytest.approx(same_scratch(T, list(np.vstack(A))), abs=1e-12)
    assert len(per_word) == 9
    T4 = _random_sets(7, [2, 3, 2, 3])  # four groups: two orthogonalised directions
    S4, _, _ = same_test(T4, np.vstack(A), method="monte-carlo", n_permutations=10, rng=0)
    assert S4 == pytest.approx(same_scratch(T4, list(np.vstack(A))), abs=1e-12)


def test_rnsb_multiclass_is_rnsb_on_the_pooled_groups():
    # the KL divergence from uniform of the normalised P(negative | w), computed here from the fitted coefficients
    T, A = _random_sets(8, [3, 4, 3]), _random_sets(9, [5, 5])
    sc = rnsb_multiclass(T, A)
    theta = sc.extra["coef"]
    W = np.vstack(T)
    q = 1 / (1 + np.exp(-(W @ theta[:-1] + theta[-1])))
    P = q / q.sum()
    assert sc.estimate == pytest.approx(float(np.sum(P * np.log(P * len(P)))), abs=1e-12)
    with pytest.raises(isoeat.ConfigError, match="exactly 2 attribute sets"):
        rnsb_multiclass(T, _random_sets(1, [2, 2, 2]))


# --------------------------------------------------------------------------- exact p by brute force
def _brute_p(stat, groups, alternative="greater"):
    """p over every distinct relabelling of the pooled rows into groups of the same sizes (itertools)."""
    pooled = [row for g in groups for row in g]
    sizes = [len(g) for g in groups]
    labels = [i for i, n in enumerate(sizes) for _ in range(n)]
    obs = stat(groups)
    hits = total = 0
    for perm in set(itertools.permutations(labels)):
        regrouped = [[pooled[j] for j in range(len(pooled)) if perm[j] == i] for i in range(len(sizes))]
        v = stat(regrouped)
        total += 1
        tol = 1e-9
        if alternative == "greater":
            hits += v >= obs - tol
        elif alternative == "less":
            hits += v <= obs + tol
        else:
            hits += abs(v) >= abs(obs) - tol
    assert total == n_assignments(sizes)
    return hits / total


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_gweat_exact_p_is_brute_force_enumeration(alternative):
    T, A = _random_sets(10, [2, 2, 2]), _random_sets(11, [2, 2, 2])
    _, perm = gweat_test(T, A, alternative=alternative)
    assert perm.p_method == "exact" and perm.n_assignments == 90
    expected = _brute_p(lambda g: gweat_scratch([np.array(x) for x in g], A), [list(t) for t in T], alternative)
    assert perm.p_value == pytest.approx(expected, abs=1e-15)


def test_same_exact_p_is_brute_force_enumeration():
    T, W = _random_sets(12, [2, 2, 1]), np.vstack(_random_sets(13, [2, 2]))
    _, _, perm = same_test(T, W)
    assert perm.p_method == "exact" and perm.n_assignments == 30
    expected = _brute_p(lambda g: same_scratch([np.array(x) for x in g], list(W)), [list(t) for t in T])
    assert perm.p_value == pytest.approx(expected, abs=1e-15)


def test_exact_when_assignments_at_most_permutations_boundary():
    # [2, 2, 2] has 90 assignments: n_permutations = 90 counts them all; 89 samples
    T, A = _random_sets(14, [2, 2, 2]), _random_sets(15, [2, 2, 2])
    assert gweat_test(T, A, n_permutations=90)[1].p_method == "exact"
    mc = gweat_test(T, A, n_permutations=89, rng=0)[1]
    assert mc.p_method == "monte-carlo" and mc.n_permutations == 89
    assert mc.p_value == pytest.approx((mc.count + 1) / 90)
    assert mc.ci_low <= mc.count / 89 <= mc.ci_high


def test_monte_carlo_p_is_close_to_the_exact_one():
    T, A = _random_sets(16, [3, 3, 3]), _random_sets(17, [3, 3, 3])
    exact = gweat_test(T, A)[1]
    mc = gweat_test(T, A, method="monte-carlo", n_permutations=20_000, rng=1)[1]
    assert exact.p_method == "exact" and exact.n_assignments == 1680
    assert mc.ci_low - 1e-3 <= exact.p_value <= mc.ci_high + 1e-3


def test_group_permutation_test_hand_example():
    # statistic: the sum of group 0's values 0..3; observed {0, 1} = 1, the smallest of the 6 splits -> p = 1, 1/6
    stat = lambda L: (L == 0).astype(float) @ np.arange(4.0)  # noqa: E731
    assert group_permutation_test(stat, [2, 2]).p_value == 1.0
    assert group_permutation_test(stat, [2, 2], alternative="less").p_value == pytest.approx(1 / 6)


# --------------------------------------------------------------------------- k = 2: the relation with WEAT
def test_two_group_gweat_is_half_weat_numerator_and_has_weats_p(glove):
    # Swinger et al.: for two groups Generalized WEAT is WEAT's statistic up to a factor; with group means it is
    # (mean_X s - mean_Y s) / 2, s(w) = mean_A cos(w, a) - mean_B cos(w, b); its permutation p is WEAT's
    test = isoeat.get_test("W6")
    res = {r.statistic: r for r in isoeat.ngroup(glove, "W6", statistics="gweat,mac", rng=0)}
    vec = {role: glove.lookup(list(ws.words)).vectors for role, ws in test.sets().items()}
    s = [
        sum(_cos(w, a) for a in vec["A"]) / len(vec["A"]) - sum(_cos(w, b) for b in vec["B"]) / len(vec["B"])
        for w in list(vec["X"]) + list(vec["Y"])
    ]
    nx = len(vec["X"])
    expected = (sum(s[:nx]) / nx - sum(s[nx:]) / (len(s) - nx)) / 2
    assert res["gweat"].estimate == pytest.approx(expected, abs=1e-10)
    w = isoeat.weat(glove, "W6", rng=0)
    assert res["gweat"].p_value == w.p_value and res["gweat"].p_method == w.p_method == "exact"
    assert res["gweat"].n_assignments == math.comb(16, 8)


# --------------------------------------------------------------------------- a three-group test on GloVe
@pytest.fixture(scope="module")
def religion_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("ngroup") / "religion.json"
    p.write_text(json.dumps({"id": "regions", "bias_type": "Religion", "targets": GROUPS, "attributes": REGIONS}))
    return p


def test_three_group_test_raw_and_calibrated_on_glove(glove, glove_zca, religion_file):
    T = {g: glove.lookup(ws).vectors.astype(np.float64) for g, ws in GROUPS.items()}
    A = {a: glove.lookup(ws).vectors.astype(np.float64) for a, ws in REGIONS.items()}
    for cal in (None, glove_zca):
        res = {
            r.statistic: r
            for r in isoeat.ngroup(glove, str(religion_file), calibration=cal, rng=0, n_permutations=2_000)
        }
        f = (lambda M: M) if cal is None else glove_zca.transform
        Tl, Al = [f(v) for v in T.values()], [f(v) for v in A.values()]
        assert res["gweat"].estimate == pytest.approx(gweat_scratch(Tl, Al), abs=1e-9)
        assert res["same"].estimate == pytest.approx(same_scratch(Tl, list(np.vstack(Al))), abs=1e-9)
        assert res["mac"].estimate == pytest.approx(mac_scratch(Tl, Al), abs=1e-9)
        assert math.isnan(res["rnsb"].estimate) and "exactly 2 attribute sets" in res["rnsb"].note
        assert res["gweat"].calibration == ("none" if cal is None else res["gweat"].calibration)
        assert res["gweat"].k == res["gweat"].m == 3 and res["gweat"].group_sizes == (10, 10, 10)
        assert res["gweat"].p_method == "monte-carlo" and res["gweat"].n_assignments == n_assignments([10, 10, 10])
        assert res["gweat"].seed_stream == ("ngroup", "gweat", "regions")
    assert res["gweat"].calibration != "none"


def test_wefe_fixture_mac_and_rnsb():
    # WEFE 1.0.1's numbers on the fixture's vectors (provenance in the file)
    fx = json.loads((HERE / "data" / "wefe_ngroup.json").read_text())
    assert "peers_ngroup.py" in fx["provenance"]
    V = fx["vectors"]
    T = [np.array([V[w] for w in ws]) for ws in fx["test"]["targets"].values()]
    A = [np.array([V[w] for w in ws]) for ws in fx["test"]["attributes"].values()]
    assert mac_multiclass(T, A).estimate == pytest.approx(fx["wefe"]["mac"], abs=1e-9)
    assert rnsb_multiclass(T, A).estimate == pytest.approx(fx["wefe"]["rnsb"], rel=1e-7)
    # WEFE's default RNSB (liblinear, 80% holdout) is another estimator: not equal, by design
    assert abs(rnsb_multiclass(T, A).estimate - fx["wefe"]["rnsb_wefe_default"]) > 1e-4


def test_results_round_trip_and_records():
    T, A = _random_sets(20, [2, 2, 2]), _random_sets(21, [2, 2])
    rs = ngroup_from_vectors(dict(zip("abc", T)), dict(zip("pq", A)), rng=3, test="t")
    assert [r.statistic for r in rs] == ["gweat", "same", "mac", "rnsb"]
    assert math.isnan(rs[0].estimate) and "k = 3, m = 2" in rs[0].note
    for r in rs:
        assert type(r).from_dict(r.to_dict(scores=True)) == r or math.isnan(r.estimate)
    assert rs[1].seed == 3 and rs[1].alternative == "greater"
    with pytest.raises(isoeat.ConfigError, match="as many attribute sets as target groups"):
        ngroup_from_vectors(dict(zip("abc", T)), dict(zip("pq", A)), statistics="gweat", test="t")


# --------------------------------------------------------------------------- bad inputs and the command line
def _write(tmp_path, data, name="t.yaml"):
    import yaml

    p = tmp_path / name
    p.write_text(yaml.safe_dump(data))
    return p


@pytest.mark.parametrize(
    "targets, match",
    [
        ({"only": ["a", "b"]}, "targets: 1 group"),
        ({"a": ["x", "y"], "b": []}, "targets group 'b' is empty"),
        ({"a": ["x", "y"], "b": ["y", "z"]}, "word 'y' is in group 'a' and in group 'b'"),
    ],
)
def test_bad_files_are_one_line(tmp_path, targets, match):
    p = _write(tmp_path, {"id": "bad", "targets": targets, "attributes": {"p": ["good"], "q": ["bad1"]}})
    with pytest.raises(DataFormatError, match=match) as e:
        isoeat.load_ngroup_tests(p)
    assert "\n" not in str(e.value) and str(p) in str(e.value)
    rc, out, err = _run(["ngroup", "--test", str(p), "--calibration", "none"])
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_k_group_file_given_to_weat_names_ngroup(tmp_path):
    p = _write(tmp_path, {"id": "r", "targets": GROUPS, "attributes": REGIONS})
    with pytest.raises(DataFormatError, match="isoeat ngroup"):
        isoeat.load_tests_from_file(p)
    rc, _, err = _run(["weat", "--test", str(p), "--calibration", "none"])
    assert rc == 2 and "isoeat ngroup" in err and len(err.strip().splitlines()) == 1


def test_cli_table_and_json(religion_file):
    rc, out, err = _run(["ngroup", "--test", str(religion_file), "--permutations", "500"])
    assert rc == 0, err
    assert "3 target groups (christian 10, muslim 10, jewish 10) x 3 attribute sets" in out
    assert "Generalized WEAT" in out and "ZCA" in out
    rc, out, err = _run(
        [
            "ngroup",
            "--test",
            str(religion_file),
            "--permutations",
            "500",
            "--format",
            "json",
            "--statistics",
            "gweat,mac",
        ]
    )
    assert rc == 0, err
    recs = json.loads(out)
    recs = recs["records"] if isinstance(recs, dict) else recs
    assert [(r["statistic"], r["calibration"]) for r in recs] == [
        ("gweat", "none"),
        ("mac", "none"),
        ("gweat", "zca"),
        ("mac", "zca"),
    ]
    assert recs[0]["groups"] == ["christian", "muslim", "jewish"] and len(recs[0]["per_word"]) == 30


def test_benchmark_target_at_its_bound():
    # benchmarks/ngroup.py: each test raw and calibrated in <= 2 s (fabricated figures, nothing timed)
    import importlib.util
    import sys

    bench = HERE.parent / "benchmarks"
    sys.path.insert(0, str(bench))
    try:
        spec = importlib.util.spec_from_file_location("bench_ngroup", bench / "ngroup.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(bench))
    figures = {"stages": [("load", 1.0)], "tests": [("valence", 2.0, 1.0), ("regions", 1.5, 1.0)], "target": 2.0}
    assert mod.check(figures) == []
    figures["tests"][0] = ("valence", 2.001, 1.0)
    assert [m.split(":")[0] for m in mod.check(figures)] == ["valence"]


def test_one_vocabulary_entry_in_two_groups_is_refused(glove, tmp_path):
    # 'Church' is read as GloVe's lowercase 'church' (case folding): the same vector in two groups
    p = _write(tmp_path, {"id": "fold", "targets": {"a": ["Church", "bible"], "b": ["church", "mosque"]},
                          "attributes": {"p": ["love", "peace"], "q": ["war", "evil"]}})
    with pytest.raises(isoeat.InvalidTestError, match="one vocabulary entry") as e:
        isoeat.ngroup(glove, str(p), rng=0)
    assert "\n" not in str(e.value)


def test_a_named_statistic_the_shape_forbids_is_one_line_in_the_cli(religion_file):
    rc, _, err = _run(["ngroup", "--test", f"{religion_file}:regions", "--statistics", "rnsb",
                       "--calibration", "none"])
    assert rc == 2 and "exactly 2 attribute sets" in err and len(err.strip().splitlines()) == 1


def test_an_ngroup_test_given_to_weat_names_ngroup(glove):
    t = isoeat.NGroupTest("r", "Religion", tuple(isoeat.WordSet(g, tuple(ws[:3])) for g, ws in GROUPS.items()),
                          tuple(isoeat.WordSet(a, tuple(ws[:3])) for a, ws in REGIONS.items()))
    with pytest.raises(isoeat.ConfigError, match=r"isoeat\.ngroup") as e:
        isoeat.weat(glove, t)
    assert "\n" not in str(e.value)


def test_exact_cap_at_its_boundary(monkeypatch):
    import isoeat.stats.ngroup as ng

    T, A = _random_sets(14, [2, 2, 2]), _random_sets(15, [2, 2, 2])  # 90 assignments
    monkeypatch.setattr(ng, "MAX_EXACT_ASSIGNMENTS", 90)
    assert gweat_test(T, A, n_permutations=1000)[1].p_method == "exact"
    monkeypatch.setattr(ng, "MAX_EXACT_ASSIGNMENTS", 89)
    assert gweat_test(T, A, n_permutations=1000, rng=0)[1].p_method == "monte-carlo"
    with pytest.raises(isoeat.ConfigError, match="at most 89"):
        gweat_test(T, A, method="exact")


def test_to_frame_and_csv(religion_file):
    pytest.importorskip("pandas")
    T, A = _random_sets(22, [2, 2, 2]), _random_sets(23, [2, 2])
    r = ngroup_from_vectors(dict(zip("abc", T)), dict(zip("pq", A)), statistics="mac", test="t")[0]
    assert list(r.to_frame().columns) == list(r.to_dict())
    rc, out, err = _run(["ngroup", "--test", f"{religion_file}:regions", "--statistics", "mac", "--calibration",
                         "none", "--format", "csv"])
    assert rc == 0, err
    import csv

    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 1 and rows[0]["statistic"] == "mac" and rows[0]["groups"] == "christian;muslim;jewish"
    Tv = [np.array(v) for v in (isoeat.load_model("glove-6b-50d").lookup(ws).vectors for ws in GROUPS.values())]
    Av = [np.array(v) for v in (isoeat.load_model("glove-6b-50d").lookup(ws).vectors for ws in REGIONS.values())]
    assert float(rows[0]["estimate"]) == pytest.approx(mac_scratch(Tv, Av), abs=1e-12)
