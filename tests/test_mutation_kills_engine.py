"""The engine's own rules (experiments/engine.py): samples drawn once, calibrators fitted once, force, cell payloads.

A toy static model counts its reference reads, so what the engine reads and keeps is observable.
"""

from __future__ import annotations

import numpy as np
import pytest

import isoeat
from isoeat.calibration.sample import ReferenceSpec
from isoeat.experiments.engine import Engine


class _Toy:
    """40 words in 6 dimensions; ``reference_vectors`` counts its calls."""

    name, kind, dim, fingerprint = "toy", "static", 6, "toy-fp"

    def __init__(self):
        rng = np.random.default_rng(3)
        self.words = [f"w{i}" for i in range(40)]
        self.vectors = rng.normal(size=(40, 6)) + np.array([2.0, 0, 0, 0, 0, 0])
        self.calls = []

    def lookup(self, words):
        from isoeat.backends.base import Lookup

        words = list(words)
        idx = [self.words.index(w) for w in words if w in self.words]
        return Lookup(vectors=self.vectors[idx], found=tuple(w for w in words if w in self.words),
                      missing=tuple(w for w in words if w not in self.words), case_folded=())

    def reference_vectors(self, n, **kw):
        self.calls.append(n)
        return self.vectors[:n].copy(), f"top {min(n, 40)}"


def test_a_fixed_sample_is_read_once_and_a_drawn_one_from_its_pool():
    toy = _Toy()
    e = Engine(toy, seed=1)
    a = e.sample(ReferenceSpec(30))
    assert e.sample(ReferenceSpec(30))[0] is a[0] and toy.calls == [30]
    d1 = e.sample(ReferenceSpec(10, draw="subset", pool=30, seed=1, stream=("x",)))
    assert toy.calls == [30]                                     # the pool is the fixed sample of 30, read once
    assert e.sample(ReferenceSpec(10, draw="subset", pool=30, seed=1, stream=("x",)))[0] is d1[0]  # kept
    d2 = e.sample(ReferenceSpec(10, draw="bootstrap", seed=1, stream=("y",)))  # no pool: its own size
    assert toy.calls == [30, 10] and d2[0].shape == (10, 6)
    # only the last drawn sample is kept: the first is drawn again (equal rows, a new array)
    again = e.sample(ReferenceSpec(10, draw="subset", pool=30, seed=1, stream=("x",)))
    assert again[0] is not d1[0] and np.array_equal(again[0], d1[0]) and toy.calls == [30, 10]


def test_a_calibrator_is_fitted_once_unless_not_remembered():
    toy = _Toy()
    e = Engine(toy, seed=1)
    spec = ReferenceSpec(30)
    z = e.fit("zca", {"eps": 1e-3}, spec)
    assert e.fit("zca", {"eps": 1e-3}, spec) is z
    assert e.fit("zca", {"eps": 1e-2}, spec) is not z               # other parameters, another space
    once = e.fit("center", None, spec, remember=False)
    assert e.fit("center", None, spec, remember=False) is not once  # not kept
    assert z.metadata_["reference_spec"] == spec.key() and z.n_samples_seen_ == 30
    drawn = ReferenceSpec(20, draw="subset", pool=30, seed=2, stream=("s",))
    c = e.fit("zca", None, drawn)
    assert c.n_samples_seen_ == 20 and c.metadata_["n"] == 20 and c.metadata_["reference_spec"] == drawn.key()
    assert c.metadata_["model_fingerprint"] == "toy-fp"


def test_the_default_reference_is_the_papers_hundred_thousand():
    toy = _Toy()
    cal = Engine(toy, seed=0).fit("zca")
    assert toy.calls == [100_000] and cal.metadata_["reference_spec"]["size"] == 100_000


def test_force_is_off_by_default(glove):
    toy = _Toy()
    other = Engine(toy, seed=0).fit("zca", None, ReferenceSpec(40))  # six dimensions, another model
    with pytest.raises(isoeat.IsoeatError):
        Engine(glove, seed=0).weat("W6", other)
    assert Engine(glove, seed=0).force is False


def test_cells_carry_their_payloads(glove, tmp_path):
    e = Engine(glove, seed=4, weat_kwargs={"n_permutations": 500})
    cal = e.fit("zca", None, ReferenceSpec(5000))
    w = e.weat_cell(isoeat.get_test("W6"), cal)
    assert set(w) == {"result", "cosines", "mechanism"} and w["result"]["seed"] == 4
    assert "mechanism" not in e.weat_cell(isoeat.get_test("W6"))  # raw: nothing moved
    m = e.metrics_cell(isoeat.get_test("W6"), None, ["ripa", "mac"], {"pairs": [("nowordhere", "he")]})
    recs = {r["metric"]: r for r in m["result"]["metrics"]}
    assert recs["ripa"]["error"]["user_error"] is True and recs["ripa"]["seed"] == 4 and "error" not in recs["mac"]
    assert {"words", "per_word"} <= set(recs["mac"])  # a metric cell keeps its per-word scores (the report's)
    a = e.anisotropy_cell(cal, ReferenceSpec(3000), sample=200, components=5, heatmap_size=50,
                          heatmap=tmp_path / "h.npz")
    assert (a["result"]["heatmap_file"], a["result"]["heatmap_size"]) == ("h.npz", 50)
    with np.load(tmp_path / "h.npz") as z:
        assert z["cosine"].shape == (50, 50)
    plain = e.anisotropy_cell(cal, ReferenceSpec(3000), sample=200, components=5, heatmap_size=50)
    assert "heatmap_file" not in plain["result"]


def test_the_cosine_payload_is_the_rounded_target_attribute_matrix(glove):
    e = Engine(glove, seed=0)
    t = isoeat.get_test("W6")
    cos = e.weat_cell(t)["cosines"]

    def unit(M):
        M = np.asarray(M, dtype=float)
        return M / np.linalg.norm(M, axis=1, keepdims=True)

    vec = {r: glove.lookup(ws.words).vectors for r, ws in t.sets().items()}
    for side in "XY":
        want = np.hstack([unit(vec[side]) @ unit(vec["A"]).T, unit(vec[side]) @ unit(vec["B"]).T])
        got = np.array(cos[f"{side}_AB"])
        assert got.shape == (8, 16) and np.array_equal(got, np.round(want, 6))  # six decimals, A then B


def test_the_similarity_cell_without_and_with_a_bootstrap(glove):
    pytest.importorskip("gensim")
    e = Engine(glove, seed=2)
    cal = e.fit("zca", None, ReferenceSpec(20_000))
    none = e.similarity_cell("ws353", cal, 0)["result"]
    assert (none["n_resamples"], none["n_valid_resamples"], none["ci_low"], none["p_value"]) == (0, 0, None, None)
    assert none["delta"] == pytest.approx(none["rho_calibrated"] - none["rho_raw"], abs=0) and none["delta"] != 0
    some = e.similarity_cell("ws353", cal, 200)["result"]
    assert some["n_resamples"] == 200 and 0 < some["n_valid_resamples"] <= 200 and some["seed"] == 2
    assert some["ci_low"] < some["delta"] < some["ci_high"]


class _Streaming(_Toy):
    """The toy as a contextual encoder would be: its reference also comes in batches (counted apart)."""

    def __init__(self):
        super().__init__()
        self.batch_calls = []

    def reference_batches(self, n, **kw):
        self.batch_calls.append(n)
        return iter([self.vectors[:n // 2].copy(), self.vectors[n // 2:n].copy()]), f"top {min(n, 40)} in batches"


def test_a_fixed_reference_is_fitted_as_fit_calibrator_fits_it_a_drawn_one_from_its_rows():
    """Fixed: the model's own path (a streaming encoder streams: no n x d matrix); drawn: the drawn rows."""
    toy = _Streaming()
    e = Engine(toy, seed=1)
    fixed = e.fit("zca", None, ReferenceSpec(30))
    assert toy.batch_calls == [30] and toy.calls == []  # streamed, never read as one matrix
    assert fixed.metadata_["reference"] == "top 30 in batches"
    e.fit("zca", None, ReferenceSpec(20, draw="subset", pool=30, seed=2, stream=("s",)))
    assert toy.calls == [30] and toy.batch_calls == [30]  # a drawn sample: rows of the pool, read as rows


def test_a_drawn_fit_records_the_dimension_not_the_row_count():
    toy = _Toy()  # 40 rows of 6 dimensions: n and d differ
    c = Engine(toy, seed=1).fit("zca", None, ReferenceSpec(20, draw="subset", pool=30, seed=2, stream=("s",)))
    assert (c.metadata_["n"], c.metadata_["dim"]) == (20, 6)


def test_a_second_drawn_sample_from_a_kept_pool_replaces_the_first():
    """Only the last drawn sample is kept, also when no new fixed sample is read in between (the pool of both
    is already held): the first is drawn again, equal rows in a new array."""
    toy = _Toy()
    e = Engine(toy, seed=1)
    e.sample(ReferenceSpec(30))
    first = e.sample(ReferenceSpec(10, draw="subset", pool=30, seed=1, stream=("a",)))
    e.sample(ReferenceSpec(10, draw="subset", pool=30, seed=1, stream=("b",)))  # same pool, another stream
    again = e.sample(ReferenceSpec(10, draw="subset", pool=30, seed=1, stream=("a",)))
    assert again[0] is not first[0] and np.array_equal(again[0], first[0]) and toy.calls == [30]


def test_the_similarity_cell_counts_the_pairs_the_model_misses(glove, tmp_path):
    """A benchmark file with a pair of words GloVe lacks: 5 of 6 pairs measured, n_missing its 2 missing words."""
    bench = tmp_path / "pairs.txt"
    bench.write_text("king queen 8.5\nman woman 8.3\ncar automobile 8.9\ncup mug 7.8\nsun moon 6.0\n"
                     "zzqxw qqzxv 5.0\n", encoding="utf-8")
    e = Engine(glove, seed=2)
    rec = e.similarity_cell(str(bench), e.fit("center", None, ReferenceSpec(5000)), 0)["result"]
    assert (rec["n_pairs"], rec["n_total"], rec["n_missing"]) == (5, 6, 2)


def test_no_cosine_matrix_for_a_set_with_no_word_in_the_vocabulary(glove):
    """The heatmap payload: a side whose words are all missing gets no matrix (not an empty one)."""
    from isoeat.experiments.engine import _cosines
    from isoeat.wordsets import AssociationTest, WordSet

    t = isoeat.get_test("W6")
    s = t.sets()
    empty = AssociationTest(id="T", bias_type="x", source="hand", X=WordSet("none here", ("zzqxw", "qqzxv")),
                            Y=s["Y"], A=s["A"], B=s["B"])
    out = _cosines(glove, empty, None)
    assert "X_AB" not in out and np.array(out["Y_AB"]).shape == (8, 16)
