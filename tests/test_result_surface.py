"""One surface for WEAT, SC-WEAT and SEAT: identity fields, the nested interval and its flat
record columns, ``from_dict``, ``calibration=`` forms, SEAT in ``stats``, stats never reaching
into backends beyond its one documented place."""

from __future__ import annotations

import ast
import hashlib
import json
import math
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

import isoeat
from isoeat import ConfidenceInterval, ConfigError, WEATResult, ZCAWhitener
from isoeat.reporting.tables import to_json
from isoeat.stats.results import IDENTITY_FIELDS, ResultIdentity, SCWEATResult
from isoeat.stats.weat import resolve_seed_sequence, sc_weat_from_vectors, weat_from_vectors

# The record layout of WEATResult.to_dict() (the layout before the interval was nested, plus the
# estimand, estimate and warning columns of issue 15 after the interval's note): a file format
# (CSV columns, JSON keys, the runner's cells), so it must not move.
WEAT_COLUMNS = [
    "test", "bias_type", "model", "calibration", "effect_size", "statistic", "p_value", "p_method",
    "n_permutations", "n_partitions", "count", "p_ci_low", "p_ci_high", "tolerance", "alternative", "ddof",
    "n_x", "n_y", "n_a", "n_b", "dropped", "case_folded", "fallback", "seed", "stopped_early",
    "effect_size_ci_low", "effect_size_ci_high", "effect_size_ci_method", "effect_size_ci_level",
    "effect_size_ci_resamples", "effect_size_ci_note", "effect_size_ci_estimand", "effect_size_ci_estimate",
    "effect_size_ci_warning", "p_holm", "p_bh", "seed_stream", "suggestions",
    "undefined",  # issue 40 #13: why d and p are undefined (appended: no column moved)
    "embedded",  # issue 42 #3: how each phrase was embedded (appended: no column moved)
    "convention",  # issue 46: whose conventions d and p follow (appended)
    "cut",  # issue 46: words a convention left out to make sets of equal size (appended)
]
SC_WEAT_COLUMNS = [
    "word", "effect_size", "statistic", "p_value", "p_method", "n_permutations", "n_partitions", "count",
    "p_ci_low", "p_ci_high", "alternative", "ddof", "n_a", "n_b", "seed", "tolerance", "dropped", "case_folded",
    "model", "calibration", "test", "seed_stream", "suggestions",
    "effect_size_ci_low", "effect_size_ci_high", "effect_size_ci_method", "effect_size_ci_level",
    "effect_size_ci_resamples", "effect_size_ci_note", "effect_size_ci_estimand", "effect_size_ci_estimate",
    "effect_size_ci_warning",
    "undefined",  # issue 40 #13 (appended)
    "embedded",  # issue 42 #3 (appended)
    "convention",  # issue 46 (appended)
]


def _same(a, b) -> bool:
    """Equal records, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@pytest.fixture(scope="module")
def sets():
    g = np.random.default_rng(11)
    return [g.normal(size=(n, 6)) for n in (5, 4, 3, 4)]


class ToyEncoder:
    """A sentence encoder with reproducible vectors per text, a shared offset (anisotropy) and reference vectors."""

    name = "toy-encoder"
    dim = 8
    fingerprint = "toy"

    def encode(self, texts):
        out = []
        for t in texts:
            g = np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:12], 16))
            out.append(3.0 + g.normal(size=self.dim) * np.linspace(0.2, 2.0, self.dim))
        return np.array(out)

    def reference_vectors(self, n=100_000, **kwargs):
        return self.encode([f"reference sentence {i}" for i in range(min(n, 400))]), "toy reference"


# ----------------------------------------------------------------------------
# records and the interval
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("kw", [
    {},
    {"bootstrap": 200},
    {"bootstrap": 200, "ci_method": "bca", "ci_level": 0.9},
    {"bootstrap": 200, "resample_attributes": True},
    {"method": "monte-carlo", "n_permutations": 300},
])
def test_weat_record_columns_unchanged_and_from_dict_round_trips(sets, kw):
    r = weat_from_vectors(*sets, rng=4, test="T", bias_type="b", model="m", calibration="c",
                          dropped=("X:w",), case_folded=("W->w",), **kw)
    d = r.to_dict()
    assert list(d) == WEAT_COLUMNS
    assert list(r.to_dict(scores=True)) == [*WEAT_COLUMNS, "s_x", "s_y"]
    for scores in (False, True):
        rec = r.to_dict(scores=scores)
        back = WEATResult.from_dict(rec)
        assert _same(back.to_dict(scores=scores), rec)
        # through JSON: NaN is written as null and lists stay lists
        again = WEATResult.from_dict(json.loads(to_json(rec)))
        assert _same(again.to_dict(scores=scores), rec)
    assert WEATResult.from_dict(r.to_dict(scores=True)) == r
    assert WEATResult.from_dict(d).s_x == ()


def test_interval_is_nested_and_its_columns_stay_readable(sets):
    names = {f.name for f in fields(WEATResult)}
    assert "effect_size_ci" in names and not any(n.startswith("effect_size_ci_") for n in names)
    plain = weat_from_vectors(*sets, rng=1)
    assert plain.effect_size_ci is None
    assert math.isnan(plain.effect_size_ci_low) and plain.effect_size_ci_resamples == 0
    assert plain.effect_size_ci_method == "" and plain.effect_size_ci_note == ""
    r = weat_from_vectors(*sets, rng=1, bootstrap=300, resample_attributes=True, ci_method="percentile")
    ci = r.effect_size_ci
    assert isinstance(ci, ConfidenceInterval)
    assert (ci.method, ci.resample_attributes, ci.n_resamples, ci.level) == ("percentile", True, 300, 0.95)
    assert ci.low < r.effect_size < ci.high
    assert (r.effect_size_ci_low, r.effect_size_ci_high) == (ci.low, ci.high)
    assert r.effect_size_ci_method == "percentile+attributes" and r.effect_size_ci_level == 0.95
    assert r.to_dict()["effect_size_ci_method"] == "percentile+attributes"
    with pytest.raises(AttributeError):
        r.effect_size_ci_low = 0.0


def test_from_dict_reads_runner_records_and_names_a_missing_column(sets):
    rec = weat_from_vectors(*sets, rng=2, bootstrap=200).to_dict()
    runner = {**rec, "model_name": "glove", "family": "static", "change": "Stable", "elapsed": 0.3}
    assert _same(WEATResult.from_dict(runner).to_dict(), rec)
    del rec["p_value"]
    with pytest.raises(ConfigError, match="missing key 'p_value'"):
        WEATResult.from_dict(rec)


def test_sc_weat_record_keeps_its_columns_and_adds_identity_last(sets):
    r = sc_weat_from_vectors(sets[0][0], sets[2], sets[3], word="w", rng=3)
    assert list(r.to_dict()) == SC_WEAT_COLUMNS
    assert (r.test, r.model, r.calibration) == ("custom", "", "none")


# ----------------------------------------------------------------------------
# identity fields on all three results
# ----------------------------------------------------------------------------


def test_identity_fields_are_shared_by_the_three_results():
    assert tuple(f.name for f in fields(ResultIdentity)) == IDENTITY_FIELDS
    for cls in (WEATResult, SCWEATResult, isoeat.SEATResult):
        assert issubclass(cls, ResultIdentity)
        assert set(IDENTITY_FIELDS) <= {f.name for f in fields(cls)}


def test_identity_values_of_weat_and_sc_weat(glove):
    w = isoeat.weat(glove, "W6", rng=5)
    ident = w.identity()
    assert "John->john" in ident.pop("case_folded")  # GloVe 6B is lowercase: names are found case-folded
    assert ident == {"test": "W6", "model": "glove-6b-50d", "calibration": "none", "seed": 5,
                     "n_a": 8, "n_b": 8, "dropped": [], "seed_stream": ["weat", "W6"], "suggestions": [],
                     "embedded": []}
    sc = isoeat.sc_weat(glove, "doctor,nurse", "W6", rng=5)
    for r in sc:
        assert (r.test, r.model, r.calibration, r.n_a, r.n_b) == ("W6", "glove-6b-50d", "none", 8, 8)
        assert r.seed == 5 and r.to_dict()["model"] == "glove-6b-50d"
        assert r.seed_stream == ("scweat", "W6", r.word)
    t = isoeat.get_test("W6")
    assert isoeat.sc_weat(glove, ["doctor"], (t.A, t.B), rng=5)[0].test == "custom"


def test_identity_values_of_seat():
    from isoeat.stats.seat import seat

    res = seat(ToyEncoder(), "W6", templates=["This is {}.", "{} is here."], rng=9)
    t = isoeat.get_test("W6")
    assert res.identity() == {"test": "W6", "model": "toy-encoder", "calibration": "none", "seed": 9,
                              "n_a": len(t.A.words), "n_b": len(t.B.words), "dropped": [], "case_folded": [],
                              "seed_stream": ["seat", "W6"], "suggestions": [], "embedded": []}
    assert (res.n_x, res.n_y) == (len(t.X.words), len(t.Y.words))
    d = res.to_dict()
    assert d["seed"] == 9 and d["n_x"] == len(t.X.words) and list(d)[-1] == "per_template"
    # the recorded root seed reproduces every template's seed
    fresh = seat(ToyEncoder(), "W6", templates=["This is {}.", "{} is here."], rng=None)
    again = seat(ToyEncoder(), "W6", templates=["This is {}.", "{} is here."], rng=fresh.seed)
    assert fresh.seed is not None and [r.seed for r in again.results] == [r.seed for r in fresh.results]


def test_seed_sequence_helper():
    root, seed = resolve_seed_sequence(None)
    assert root.entropy == seed
    gen_root, gen_seed = resolve_seed_sequence(np.random.default_rng(1))
    assert gen_seed is None and gen_root.entropy == int(np.random.default_rng(1).integers(0, 2**63))
    with pytest.raises(ConfigError, match=r"rng \(seed\) must be None"):
        resolve_seed_sequence(-1)


# ----------------------------------------------------------------------------
# calibration= means the same everywhere
# ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def own_zca(glove):
    vecs, _ = glove.reference_vectors(100_000)
    return ZCAWhitener().fit(vecs)


def test_weat_calibration_forms(glove, own_zca):
    raw = isoeat.weat(glove, "W6", rng=0).to_dict()
    assert _same(isoeat.weat(glove, "W6", calibration=None, rng=0).to_dict(), raw)
    assert _same(isoeat.weat(glove, "W6", calibration="none", rng=0).to_dict(), raw)
    by_name = isoeat.weat(glove, "W6", calibration="zca", rng=0)
    by_object = isoeat.weat(glove, "W6", calibration=own_zca, rng=0)
    assert by_name.calibration == by_object.calibration == "zca"
    assert by_name.effect_size == pytest.approx(by_object.effect_size, rel=1e-9)
    assert by_name.p_value == by_object.p_value and by_name.count == by_object.count
    assert abs(by_name.effect_size - raw["effect_size"]) > 1e-3  # calibration did something


def test_sc_weat_calibration_forms(glove, own_zca):
    raw = [r.to_dict() for r in isoeat.sc_weat(glove, "doctor,nurse", "W6", rng=1)]
    assert _same([r.to_dict() for r in isoeat.sc_weat(glove, "doctor,nurse", "W6", calibration="none", rng=1)], raw)
    by_name = isoeat.sc_weat(glove, "doctor,nurse", "W6", calibration="zca", rng=1)
    by_object = isoeat.sc_weat(glove, "doctor,nurse", "W6", calibration=own_zca, rng=1)
    for a, b, r in zip(by_name, by_object, raw):
        assert a.calibration == b.calibration == "zca"
        assert a.effect_size == pytest.approx(b.effect_size, rel=1e-9) and a.p_value == b.p_value
        assert abs(a.effect_size - r["effect_size"]) > 1e-3


def test_seat_calibration_forms():
    from isoeat.stats.seat import seat

    enc = ToyEncoder()
    tpl = ["This is {}.", "{} is here."]
    raw = seat(enc, "W6", templates=tpl, rng=0)
    assert _same(seat(enc, "W6", templates=tpl, calibration="none", rng=0).to_dict(), raw.to_dict())
    own = ZCAWhitener().fit(enc.reference_vectors()[0])
    by_name = seat(enc, "W6", templates=tpl, calibration="zca", rng=0)
    by_object = seat(enc, "W6", templates=tpl, calibration=own, rng=0)
    assert by_name.calibration == by_object.calibration == "zca"
    for a, b, r in zip(by_name.results, by_object.results, raw.results):
        assert a.calibration == "zca" and a.effect_size == pytest.approx(b.effect_size, rel=1e-9)
        assert abs(a.effect_size - r.effect_size) > 1e-3


def test_calibration_refusals(glove):
    with pytest.raises(ConfigError, match="calibration must be None, 'none', a calibration name"):
        isoeat.weat(glove, "W6", calibration=42)
    with pytest.raises(isoeat.UnknownNameError):
        isoeat.sc_weat(glove, "doctor", "W6", calibration="zcaa")


def test_calibration_is_documented_identically():
    from isoeat.stats.seat import seat
    from isoeat.stats.weat import CALIBRATION_DOC

    for fn in (isoeat.weat, isoeat.sc_weat, seat):
        assert CALIBRATION_DOC in fn.__doc__ and "see CALIBRATION_DOC" not in fn.__doc__


# ----------------------------------------------------------------------------
# SEAT lives in stats
# ----------------------------------------------------------------------------


def test_seat_is_importable_from_stats_and_the_old_places():
    import isoeat.commands.seat as cmd
    import isoeat.stats.seat as stats_seat

    assert isoeat.seat is stats_seat.seat is cmd.seat
    assert isoeat.SEATResult is stats_seat.SEATResult is cmd.SEATResult
    assert isoeat.seat.__module__ == "isoeat.stats.seat"


def test_stats_never_reaches_into_backends():
    root = Path(isoeat.__file__).parent / "stats"
    found = set()
    for f in sorted(root.glob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        owner = {}
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    owner.setdefault(node, fn.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = ["." * node.level + (node.module or ""), *(a.name for a in node.names)]
            else:
                continue
            if any("backends" in n for n in names):
                found.add((f.name, owner.get(node, "<module>")))
    assert found == set()  # the SEAT templates are stimulus data: isoeat.wordsets._templates
