"""Tests that kill mutants of ``isoeat/stats/{validity,rank,_checks}.py``.

Expected values are derived by hand from the documented rules (module
docstrings), or recomputed with scipy in the test — never read from isoeat.

* validity: a set needs >= 2 words; X == Y or A == B refused; two words that
  are one vocabulary entry refused; ``ddof`` must be below the pooled count;
  dimension >= 2; zero or non-finite vectors refused, named by their word
  (or ``row i`` when no word is known); partial overlaps refused unless
  ``allow_overlap=True`` (then a warning); at most 8 overlapping words are
  listed, then `` ...``.
* rank: average 1-based ranks; Spearman = Pearson of the ranks.
* _checks: ``s`` 1-D with >= 2 values; ``1 <= n_x <= n - 1``; a level in (0, 1).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from isoeat._errors import ConfigError, DataFormatError, InvalidTestError, IsoeatWarning
from isoeat.stats._checks import _as_scores, _check_level, _check_n_x
from isoeat.stats.rank import rankdata, spearman, tie_groups
from isoeat.stats.validity import check_test

WORDS = {"X": ["x1", "x2"], "Y": ["y1", "y2"], "A": ["a1", "a2"], "B": ["b1", "b2"]}


def _vecs(n=2, dim=3, seed=0, scale=1.0):
    """``n`` random vectors of dimension ``dim`` with no zero row (entries in [0.1, 0.5] * scale)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0.1, 0.5, size=(n, dim)) * scale


def _four(n=(2, 2, 2, 2), dim=3, scale=1.0):
    return {r: _vecs(k, dim, seed=i, scale=scale) for i, (r, k) in enumerate(zip("XYAB", n))}


# --- validity: valid inputs pass ------------------------------------------------------------------


def test_valid_words_and_vectors_pass():
    check_test("T", words=WORDS)
    check_test("T", words=WORDS, vectors=_four())
    check_test("T", vectors=_four(n=(2, 3, 4, 5), dim=2))  # dimension 2 is enough; n != dim
    check_test("T", vectors=_four(dim=7, scale=0.1))  # every |entry| below 1 is fine
    # SC-WEAT shape: a 1-D target vector "w" (one word is allowed for "w") and A, B
    check_test("S", vectors={"w": np.array([0.3, 0.2, 0.1]), "A": _vecs(2, 3, 1), "B": _vecs(2, 3, 2)},
               ddof=1, sd_over=("A", "B"))
    check_test("S", words={"w": ["t"], "A": ["a1", "a2"], "B": ["b1", "b2"]})


def test_ddof_is_ignored_when_no_set_is_sized():
    check_test("T", ddof=5)  # no sets: nothing to pool, nothing to refuse


# --- validity: sizes ------------------------------------------------------------------------------


def test_a_set_of_one_word_is_refused():
    with pytest.raises(InvalidTestError, match="set X has 1 word"):
        check_test("T", words={**WORDS, "X": ["x1"]})


def test_a_set_of_one_vector_is_refused_whatever_its_dimension():
    vecs = _four()
    vecs["X"] = _vecs(1, 3)
    with pytest.raises(InvalidTestError, match="set X has 1 word"):
        check_test("T", vectors=vecs)


def test_a_one_dimensional_array_is_one_vector():
    vecs = _four()
    vecs["Y"] = np.array([0.1, 0.2, 0.3])
    with pytest.raises(InvalidTestError, match="set Y has 1 word"):
        check_test("T", vectors=vecs)


def test_dimension_one_is_refused_and_two_accepted():
    with pytest.raises(InvalidTestError, match="dimension 1"):
        check_test("T", vectors=_four(n=(3, 3, 3, 3), dim=1))
    check_test("T", vectors=_four(n=(3, 3, 3, 3), dim=2))


@pytest.mark.parametrize(("n", "ok"), [(4, False), (3, True)])
def test_ddof_must_be_below_the_pooled_count(n, ok):
    # X and Y have 2 words each: the pooled count is 4, so ddof = 4 is refused, 3 accepted
    if ok:
        check_test("T", words=WORDS, ddof=n)
        check_test("T", vectors=_four(), ddof=n)
    else:
        with pytest.raises(InvalidTestError, match="ddof=4 must be below the 4 values"):
            check_test("T", words=WORDS, ddof=n)


def test_ddof_over_attribute_sets():
    # SC-WEAT pools A and B: |A| + |B| = 5, ddof = 5 refused, 4 accepted
    words = {"w": ["t"], "A": ["a1", "a2", "a3"], "B": ["b1", "b2"]}
    check_test("S", words=words, ddof=4, sd_over=("A", "B"))
    with pytest.raises(InvalidTestError, match="5 values of sets A\\+B"):
        check_test("S", words=words, ddof=5, sd_over=("A", "B"))


# --- validity: bad vectors are named -------------------------------------------------------------


def test_a_zero_vector_is_named_by_its_word():
    vecs = _four(n=(3, 2, 2, 2), dim=4)
    vecs["X"][2] = 0.0
    with pytest.raises(InvalidTestError, match="set X: the vector of 'x3' is all zeros"):
        check_test("T", words={**WORDS, "X": ["x1", "x2", "x3"]}, vectors=vecs)


def test_a_non_finite_vector_is_named_by_its_word():
    vecs = _four(n=(3, 2, 2, 2), dim=4)
    vecs["X"][2, 1] = np.nan
    with pytest.raises(InvalidTestError, match="set X: the vector of 'x3' is not finite"):
        check_test("T", words={**WORDS, "X": ["x1", "x2", "x3"]}, vectors=vecs)
    vecs["X"][2, 1] = np.inf
    with pytest.raises(InvalidTestError, match="the vector of 'x3' is not finite"):
        check_test("T", words={**WORDS, "X": ["x1", "x2", "x3"]}, vectors=vecs)


def test_a_bad_vector_without_its_word_is_named_by_its_row():
    vecs = _four(n=(3, 2, 2, 2), dim=4)
    vecs["X"][1] = 0.0
    with pytest.raises(InvalidTestError, match="the vector of row 1 is all zeros"):
        check_test("T", vectors=vecs)
    # fewer words than rows: the row beyond the words is named by its index
    vecs = _four(n=(3, 2, 2, 2), dim=4)
    vecs["X"][2] = 0.0
    with pytest.raises(InvalidTestError, match="the vector of row 2 is all zeros"):
        check_test("T", words={"X": ["x1", "x2"]}, vectors=vecs)


# --- validity: duplicates, identical sets, overlaps ----------------------------------------------


def test_a_word_listed_twice_is_refused():
    with pytest.raises(InvalidTestError, match="set A lists 'a1' twice"):
        check_test("T", words={**WORDS, "A": ["a1", "a2", "a1"]})


def test_two_words_of_one_entry_are_refused():
    words = {**WORDS, "A": ["Bill", "bill", "john"]}
    entries = {**WORDS, "A": ["bill", "bill", "john"]}
    with pytest.raises(InvalidTestError, match="'Bill' and 'bill', which are the same vocabulary entry 'bill'"):
        check_test("T", words=words, entries=entries)


def test_identical_sets_are_refused():
    with pytest.raises(InvalidTestError, match="set X is identical to set Y"):
        check_test("T", words={**WORDS, "Y": ["x2", "x1"]})
    vecs = _four()
    vecs["B"] = vecs["A"].copy()
    with pytest.raises(InvalidTestError, match="set A is identical to set B \\(the same vectors\\)"):
        check_test("T", vectors=vecs)


def test_one_set_of_a_pair_alone_is_not_compared():
    # only X of the target pair: no comparison with a missing Y, no error
    check_test("T", words={"X": ["x1", "x2"], "A": ["a1", "a2"], "B": ["b1", "b2"]})


def test_overlap_refused_by_default_and_warned_when_allowed():
    words = {**WORDS, "Y": ["y1", "x2"]}
    with pytest.raises(InvalidTestError, match="sets X and Y share 1 word\\(s\\): 'x2'; pass allow_overlap=True"):
        check_test("T", words=words)
    with pytest.raises(InvalidTestError, match="allow_overlap"):
        check_test("T", words=words, allow_overlap=False)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        check_test("T", words=words, allow_overlap=True)
    assert [str(w.message) for w in rec if issubclass(w.category, IsoeatWarning)] == [
        "test T: sets X and Y share 1 word(s): 'x2' (allow_overlap=True)"]


def test_overlap_message_lists_at_most_eight_words():
    shared = [f"s{i}" for i in range(9)]  # 9 shared words: 8 listed, then " ..."
    words = {"X": shared + ["x"], "Y": shared + ["y"], "A": ["a1", "a2"], "B": ["b1", "b2"]}
    with pytest.raises(InvalidTestError) as exc:
        check_test("T", words=words)
    listed = ", ".join(repr(w) for w in shared[:8])
    assert f"share 9 word(s): {listed} ...;" in str(exc.value)
    # exactly 8 shared words: all listed, no " ..."
    shared = shared[:8]
    words = {"X": shared + ["x"], "Y": shared + ["y"], "A": ["a1", "a2"], "B": ["b1", "b2"]}
    with pytest.raises(InvalidTestError) as exc:
        check_test("T", words=words)
    assert f"share 8 word(s): {listed}; pass" in str(exc.value)


# --- rank --------------------------------------------------------------------------------------------


def test_rankdata_by_hand():
    assert rankdata([10, 30, 20, 20]).tolist() == [1.0, 4.0, 2.5, 2.5]
    assert rankdata([3.0, 1.0, 2.0]).tolist() == [3.0, 1.0, 2.0]
    assert rankdata([5, 5, 5, 1]).tolist() == [3.0, 3.0, 3.0, 1.0]  # ranks 2, 3, 4 averaged
    assert rankdata([2, 2]).tolist() == [1.5, 1.5]


def test_tie_groups_by_hand():
    order, starts, group = tie_groups([10, 30, 20, 20])
    assert order.tolist() == [0, 2, 3, 1]
    assert starts.tolist() == [0, 1, 3]
    assert group.tolist() == [0, 2, 1, 1]
    order, starts, group = tie_groups([7, 7, 1])
    assert (order.tolist(), starts.tolist(), group.tolist()) == ([2, 0, 1], [0, 1], [1, 1, 0])


@pytest.mark.parametrize("seed", range(5))
def test_rankdata_and_spearman_equal_scipy(seed):
    from scipy.stats import rankdata as sp_rankdata
    from scipy.stats import spearmanr

    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, size=11).astype(float)  # many ties
    y = rng.normal(size=11)
    np.testing.assert_array_equal(rankdata(x), sp_rankdata(x))
    assert spearman(x, y) == pytest.approx(spearmanr(x, y)[0], rel=1e-12)


def test_spearman_by_hand():
    # ranks (1,2,3,4) and (1,2,4,3): centred (-1.5,-.5,.5,1.5), (-1.5,-.5,1.5,.5): 4 / 5 = 0.8
    assert spearman([1, 2, 3, 4], [10, 20, 40, 30]) == pytest.approx(0.8, abs=1e-15)
    assert spearman([1, 2], [5, 9]) == pytest.approx(1.0)  # two pairs are enough
    assert spearman([1, 2], [9, 5]) == pytest.approx(-1.0)


def test_spearman_refusals():
    with pytest.raises(ConfigError, match="same length"):
        spearman([1, 2, 3], [1, 2])
    with pytest.raises(ConfigError, match="at least 2 pairs"):
        spearman([1], [1])
    with pytest.raises(DataFormatError, match="NaN or inf"):
        spearman([1, 2, 3], [1, np.nan, 3])
    with pytest.raises(DataFormatError, match="NaN or inf"):
        spearman([1, np.inf, 3], [1, 2, 3])
    with pytest.raises(DataFormatError, match="constant"):
        spearman([1, 1, 1], [1, 2, 3])


# --- _checks -----------------------------------------------------------------------------------------


def test_scores_need_one_dimension_and_two_values():
    assert _as_scores([1.0, 2.0]).tolist() == [1.0, 2.0]
    with pytest.raises(ConfigError, match="at least 2 values, got 1"):
        _as_scores([1.0])
    with pytest.raises(ConfigError, match="must be 1-D"):
        _as_scores([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ConfigError, match="must be 1-D"):
        _as_scores(3.0)


@pytest.mark.parametrize(("n_x", "ok"), [(-1, False), (0, False), (1, True), (3, True), (4, True), (5, False)])
def test_n_x_leaves_both_sides_non_empty(n_x, ok):
    n = 5
    if ok:
        assert _check_n_x(n_x, n) == n_x
    else:
        with pytest.raises(ConfigError, match="1 <= n_x <= n - 1"):
            _check_n_x(n_x, n)


@pytest.mark.parametrize(("level", "ok"), [
    (0.0, False), (1.0, False), (-0.1, False), (1.5, False),
    (1e-9, True), (0.5, True), (0.95, True), (1 - 1e-9, True),
])
def test_level_in_the_open_unit_interval(level, ok):
    if ok:
        assert _check_level("level", level) == level
    else:
        with pytest.raises(ConfigError, match="level"):
            _check_level("level", level)


def test_scores_nan_and_inf_refused():
    with pytest.raises(ConfigError, match="NaN at positions \\[1\\]"):
        _as_scores([1.0, math.nan, 2.0])
    with pytest.raises(ConfigError, match="infinite values at positions \\[2\\]"):
        _as_scores([1.0, 2.0, -math.inf])


# --- seat: SEAT on a stand-in sentence encoder ------------------------------------------------------
# Expected d values are recomputed from scratch below (cosines, per-word s, pooled sample SD), from the
# vectors the stand-in encoder gives each filled sentence; never read from isoeat.


def _text_vector(text, dim=6):
    """A reproducible vector per text (seeded by the SHA-256 of the text), with a shared offset."""
    import hashlib

    g = np.random.default_rng(int(hashlib.sha256(text.encode()).hexdigest()[:12], 16))
    return 0.5 + g.normal(size=dim)


class _Recorder:
    """A sentence encoder with only ``encode_sentences``; it records every text it was given."""

    name = "stand-in"

    def __init__(self):
        self.seen = []

    def encode_sentences(self, texts):
        self.seen.extend(texts)
        return np.array([_text_vector(t) for t in texts])


def _seat_test(sets=None):
    from isoeat.wordsets import AssociationTest, WordSet

    sets = sets or {"X": ["apple", "pear", "plum"], "Y": ["stone", "brick", "sand", "clay"],
                    "A": ["good", "nice"], "B": ["bad", "awful", "nasty", "vile", "foul"]}
    return AssociationTest(id="T9", bias_type="Stand-in", **{r: WordSet(f"set{r}", tuple(w)) for r, w in sets.items()})


def _d_from_scratch(sent, ddof=1):
    """WEAT d of the filled sentences ``sent`` (role -> texts), from the encoder's vectors."""
    def unit(texts):
        M = np.array([_text_vector(t) for t in texts])
        return M / np.sqrt((M * M).sum(axis=1, keepdims=True))

    U = {r: unit(t) for r, t in sent.items()}
    s = {r: (U[r] @ U["A"].T).mean(axis=1) - (U[r] @ U["B"].T).mean(axis=1) for r in "XY"}
    pooled = np.concatenate([s["X"], s["Y"]])
    sd = math.sqrt(sum((v - pooled.mean()) ** 2 for v in pooled) / (len(pooled) - ddof))
    return (s["X"].mean() - s["Y"].mean()) / sd


def test_seat_defaults_d_per_template_and_the_summary_by_hand():
    from isoeat.stats.seat import seat

    enc, t = _Recorder(), _seat_test()
    tpl = ["This is {}.", "{} is here."]
    res = seat(enc, t, templates=tpl)
    # defaults: a fresh root seed, recorded (issue 33: rng=None everywhere), alpha 0.05, ddof 1, templates mode,
    # first letter capitalised
    assert isinstance(res.seed, int) and res.seed == res.results[0].seed
    assert seat(_Recorder(), t, templates=tpl, rng=res.seed).effect_size_mean == res.effect_size_mean
    assert res.alpha == 0.05 and res.mode == "templates" and res.templates == tuple(tpl)
    assert all(r.ddof == 1 for r in res.results)
    assert "Apple is here." in enc.seen and "apple is here." not in enc.seen and "This is apple." in enc.seen
    ds = []
    for template in tpl:
        fill = (lambda w: template.replace("{}", w[0].upper() + w[1:] if template.startswith("{}") else w))
        ds.append(_d_from_scratch({r: [fill(w) for w in getattr(t, r).words] for r in "XYAB"}))
    assert [r.effect_size for r in res.results] == pytest.approx(ds, rel=1e-12)
    assert res.effect_size_mean == pytest.approx(sum(ds) / 2, rel=1e-12)
    assert (res.effect_size_min, res.effect_size_max) == pytest.approx((min(ds), max(ds)), rel=1e-12)
    assert res.effect_size_range == pytest.approx(max(ds) - min(ds), rel=1e-12)
    assert (res.n_x, res.n_y, res.n_a, res.n_b) == (3, 4, 2, 5)
    # capitalize=False keeps the word as given
    enc2 = _Recorder()
    seat(enc2, t, templates=tpl, capitalize=False)
    assert "apple is here." in enc2.seen and "Apple is here." not in enc2.seen


def test_seat_default_ddof_permutations_and_ddof_zero_accepted():
    from isoeat.stats.seat import seat

    t = _seat_test()
    mc = seat(_Recorder(), t, templates=["This is {}."], method="monte-carlo")
    assert mc.results[0].n_permutations == 100_000 and mc.results[0].p_method == "monte-carlo"
    zero = seat(_Recorder(), t, templates=["This is {}."], ddof=0)  # ddof 0 is allowed (lo = 0)
    sent = {r: [f"This is {w}." for w in getattr(t, r).words] for r in "XYAB"}
    assert zero.results[0].effect_size == pytest.approx(_d_from_scratch(sent, ddof=0), rel=1e-12)


def test_seat_sentence_stimuli_are_one_result_with_the_set_sizes():
    from isoeat.stats.seat import seat

    sets = {"X": ["an apple fell", "a pear fell", "a plum fell"], "Y": ["a stone sank", "a brick sank"],
            "A": ["it was good", "it was nice", "it was fine"], "B": ["it was bad", "it was vile"]}
    enc = _Recorder()
    res = seat(enc, _seat_test(sets), templates=["This is {}."])  # auto: every stimulus has a space
    assert res.mode == "sentences" and res.templates == () and len(res.results) == 1
    assert sorted(enc.seen) == sorted(w for ws in sets.values() for w in ws)  # embedded as given
    assert (res.n_x, res.n_y, res.n_a, res.n_b) == (3, 2, 3, 2)
    assert res.results[0].effect_size == pytest.approx(_d_from_scratch(sets), rel=1e-12)
    # one stimulus without a space: templates
    words = dict(sets, Y=["stone", "a brick sank"])
    assert seat(_Recorder(), _seat_test(words), templates=["This is {}."]).mode == "templates"


def _seat_record(ps, alpha=None):
    import dataclasses

    from isoeat.stats.seat import SEATResult
    from isoeat.stats.weat import weat_from_vectors

    g = np.random.default_rng(5)
    base = weat_from_vectors(*(g.normal(size=(3, 4)) + c for c in (1, -1, 0.5, -0.5)), rng=0)
    kw = dict(test="T", model="m", calibration="none", seed=0, n_a=3, n_b=3, bias_type="b", mode="templates",
              templates=tuple(f"t{i} {{}}" for i in range(len(ps))),
              results=tuple(dataclasses.replace(base, p_value=p) for p in ps),
              effect_size_mean=0.5, effect_size_min=0.25, effect_size_max=2.0, n_x=3, n_y=3)
    return SEATResult(**kw) if alpha is None else SEATResult(**kw, alpha=alpha)


def test_seat_significant_templates_are_p_strictly_below_alpha_005():
    import dataclasses

    r = _seat_record([0.05, 0.01, 0.02, 0.5])
    assert r.alpha == 0.05 and r.n_significant == 2  # 0.05 itself is not below alpha
    assert _seat_record([0.03, 0.2], alpha=0.03).n_significant == 0
    assert r.effect_size_range == 1.75  # 2.0 - 0.25
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.alpha = 0.1
    values = [getattr(r, f.name) for f in dataclasses.fields(r)]
    with pytest.raises(TypeError):
        type(r)(*values)  # keyword-only
    # SEATResult's own fields are keyword-only too (not only those of ResultIdentity)
    own = [f.name for f in dataclasses.fields(r) if f.name in type(r).__annotations__]
    rest = {f.name: getattr(r, f.name) for f in dataclasses.fields(r) if f.name not in own}
    with pytest.raises(TypeError):
        type(r)(*[getattr(r, n) for n in own], **rest)


def test_seat_alpha_is_checked_in_the_open_unit_interval():
    from isoeat.stats.seat import seat

    t = _seat_test()
    for bad in (0.0, 1.0):
        with pytest.raises(ConfigError, match="alpha"):
            seat(_Recorder(), t, templates=["This is {}."], alpha=bad)
    assert seat(_Recorder(), t, templates=["This is {}."], alpha=0.75).alpha == 0.75


def test_seat_needs_a_callable_encoder_and_prefers_encode_sentences():
    from isoeat.stats.seat import seat

    class NotCallable:
        name = "bad"
        encode_sentences = 5

    with pytest.raises(ConfigError, match="SEAT needs a sentence encoder"):
        seat(NotCallable(), _seat_test(), templates=["This is {}."])

    class Both(_Recorder):
        def encode(self, texts):  # never used when encode_sentences exists
            raise AssertionError("encode called")

    assert seat(Both(), _seat_test(), templates=["This is {}."]).results


def test_seat_refuses_a_calibrator_of_another_model_unless_forced():
    from isoeat._errors import FingerprintMismatchError
    from isoeat.stats.seat import seat

    class Flip:
        name = "flip"
        metadata_ = {"model_fingerprint": "other", "model": "other"}

        def transform(self, v):
            return v * np.array([1, -1, 1, -1, 1, -1])

    class Enc(_Recorder):
        fingerprint = "mine"

    t = _seat_test()
    with pytest.raises(FingerprintMismatchError):
        seat(Enc(), t, templates=["This is {}."], calibration=Flip())
    res = seat(Enc(), t, templates=["This is {}."], calibration=Flip(), force=True)
    assert res.calibration == "flip"


def test_seat_refuses_shared_stimuli_by_default():
    from isoeat.stats.seat import seat

    t = _seat_test({"X": ["apple", "pear"], "Y": ["stone", "brick"], "A": ["good", "apple"], "B": ["bad", "vile"]})
    with pytest.raises(InvalidTestError, match="share 1 word"):
        seat(_Recorder(), t, templates=["This is {}."])
    with pytest.warns(IsoeatWarning, match="share 1 word"):
        seat(_Recorder(), t, templates=["This is {}."], allow_overlap=True)


# --- weat: cosines, scores, WEAT and SC-WEAT from scratch ---------------------------------------------
# Expected values are recomputed with plain loops over the rows (cosine = dot / (|u| |v|), s(w) = mean cos
# with A - mean cos with B, d = difference of means / pooled SD with ddof), or taken from the docstrings.


def _cos(u, v):
    return sum(a * b for a, b in zip(u, v)) / math.sqrt(sum(a * a for a in u) * sum(b * b for b in v))


def _s(w, A, B):
    return sum(_cos(w, a) for a in A) / len(A) - sum(_cos(w, b) for b in B) / len(B)


def _weat_d(X, Y, A, B, ddof=1):
    sx, sy = [_s(x, A, B) for x in X], [_s(y, A, B) for y in Y]
    pooled = sx + sy
    m = sum(pooled) / len(pooled)
    sd = math.sqrt(sum((v - m) ** 2 for v in pooled) / (len(pooled) - ddof))
    return (sum(sx) / len(sx) - sum(sy) / len(sy)) / sd, sx, sy


def _weat_sets(sizes=(3, 4, 2, 5), dim=6):
    g = np.random.default_rng(21)
    return [g.normal(size=(n, dim)) + c for n, c in zip(sizes, (0.8, -0.8, 0.4, -0.4))]


class _SpyPermutations:
    """Stands in for ``partition_test`` in ``isoeat.stats.weat``: records its keyword arguments, then runs it."""

    def __init__(self, monkeypatch):
        import isoeat.stats.weat as weat_module

        self.real, self.calls = weat_module.partition_test, []
        monkeypatch.setattr(weat_module, "partition_test", self)

    def __call__(self, *args, **kwargs):
        self.calls.append(kwargs)
        return self.real(*args, **{**kwargs, "n_permutations": 1000})


def test_unit_rows_by_hand_and_the_row_it_names():
    from isoeat.stats.weat import unit_rows

    M = np.array([[1.0, 0.5, 0.0, 0.0], [3.0, -4.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]])
    U = unit_rows(M)  # a row whose largest entry is exactly 1 is an ordinary row
    expected = [[1 / math.sqrt(1.25), 0.5 / math.sqrt(1.25), 0, 0], [0.6, -0.8, 0, 0], [0.5] * 4]
    np.testing.assert_allclose(U, expected, rtol=1e-15, atol=0)
    bad = M.copy()
    bad[2, 1] = math.nan  # row 2, column 1
    with pytest.raises(ConfigError, match=r"not finite \(M row 2\)"):
        unit_rows(bad)
    zero = M.copy()
    zero[1] = 0.0
    with pytest.raises(ConfigError, match=r"all-zero vector \(M row 1\)"):
        unit_rows(zero)


def test_association_scores_and_statistic_from_scratch():
    from isoeat.stats.weat import association_scores, test_statistic

    W, A, B = _weat_sets((3, 2, 5, 2))[:3]
    assert association_scores(W, A, B) == pytest.approx([_s(w, A, B) for w in W], rel=1e-12, abs=1e-15)
    assert test_statistic(np.array([1.0, 2.0]), np.array([0.5])) == 2.5  # 1 + 2 - 0.5
    assert test_statistic.__test__ is False  # (this module imports it: pytest must not collect it)


def test_weat_from_vectors_from_scratch_with_its_defaults(monkeypatch):
    from isoeat.stats.weat import weat_from_vectors

    spy = _SpyPermutations(monkeypatch)
    X, Y, A, B = _weat_sets()  # |A| = 2, |B| = 5, dimension 6: sizes differ from the dimension
    r = weat_from_vectors(X, Y, A, B, rng=0)
    d, sx, sy = _weat_d(X, Y, A, B)
    assert r.effect_size == pytest.approx(d, rel=1e-12)
    assert r.statistic == pytest.approx(sum(sx) - sum(sy), rel=1e-12)
    assert r.s_x == pytest.approx(sx, rel=1e-12) and r.s_y == pytest.approx(sy, rel=1e-12)
    assert (r.n_x, r.n_y, r.n_a, r.n_b, r.ddof) == (3, 4, 2, 5, 1)
    assert r.effect_size_ci is None and spy.calls[-1]["n_permutations"] == 100_000
    ci = weat_from_vectors(X, Y, A, B, rng=0, ci=True).effect_size_ci
    assert (ci.level, ci.estimand) == (0.95, "given-attributes")
    zero = weat_from_vectors(X, Y, A, B, rng=0, ddof=0)  # ddof 0 allowed
    assert zero.effect_size == pytest.approx(_weat_d(X, Y, A, B, ddof=0)[0], rel=1e-12)


def test_weat_from_vectors_shape_checks():
    from isoeat._errors import CoverageError
    from isoeat.stats.weat import weat_from_vectors

    X, Y, A, B = _weat_sets()
    with pytest.raises(ConfigError, match=r"set X: expected a 2-D array of vectors, got shape \(6,\)"):
        weat_from_vectors(X[0], Y, A, B)
    with pytest.raises(CoverageError, match=r"set X has 1 word\(s\); at least 2"):
        weat_from_vectors(X[:1], Y, A, B)
    assert weat_from_vectors(X[:2], Y, A, B, rng=0).n_x == 2  # two words are enough
    with pytest.raises(ConfigError, match=r"different dimensions \[5, 6\]"):
        weat_from_vectors(X[:, :5], Y, A, B)


_VOCAB = ["apple", "pear", "plum", "fig", "lime", "stone", "brick", "sand", "clay", "good", "nice", "fine",
          "bad", "vile", "foul", "awful", "nasty", "doctor", "nurse"]


@pytest.fixture(scope="module")
def toy_model():
    import isoeat

    g = np.random.default_rng(8)
    return isoeat.StaticVectors(_VOCAB, g.normal(size=(len(_VOCAB), 6)) + 0.3, name="toy")


def _wtest(**sets):
    base = {"X": ["apple", "pear", "plum"], "Y": ["stone", "brick", "sand", "clay"], "A": ["good", "nice"],
            "B": ["bad", "vile", "foul", "awful", "nasty"]}
    return _seat_test({**base, **sets})


def _rows(model, words):
    return model.lookup(words).vectors


def test_weat_from_scratch_with_its_defaults(toy_model, monkeypatch):
    import isoeat

    spy = _SpyPermutations(monkeypatch)
    t = _wtest()
    r = isoeat.weat(toy_model, t, rng=0)
    d = _weat_d(*(_rows(toy_model, getattr(t, k).words) for k in "XYAB"))[0]
    assert r.effect_size == pytest.approx(d, rel=1e-12) and r.ddof == 1 and r.effect_size_ci is None
    assert spy.calls[-1]["n_permutations"] == 100_000
    ci = isoeat.weat(toy_model, t, rng=0, ci=True).effect_size_ci
    assert (ci.level, ci.estimand) == (0.95, "given-attributes")
    zero = isoeat.weat(toy_model, t, rng=0, ddof=0)
    assert zero.effect_size == pytest.approx(
        _weat_d(*(_rows(toy_model, getattr(t, k).words) for k in "XYAB"), ddof=0)[0], rel=1e-12)
    with pytest.raises(InvalidTestError, match="share 1 word"):  # allow_overlap defaults to False
        isoeat.weat(toy_model, _wtest(A=["good", "apple"]), rng=0)


def test_weat_coverage_at_its_boundaries(toy_model):
    import isoeat
    from isoeat._errors import CoverageError

    four_of_five = ["bad", "vile", "foul", "awful", "zzz1"]
    assert isoeat.weat(toy_model, _wtest(B=four_of_five), rng=0).dropped == ("B:zzz1",)  # 0.8 = default
    three_of_five = ["bad", "vile", "foul", "zzz1", "zzz2"]
    with pytest.raises(CoverageError, match="2 of 5 words"):
        isoeat.weat(toy_model, _wtest(B=three_of_five), rng=0)
    assert isoeat.weat(toy_model, _wtest(B=three_of_five), rng=0, min_coverage=0.6).n_b == 3  # at 0.6
    assert isoeat.weat(toy_model, _wtest(), rng=0, min_coverage=1.0).n_b == 5  # 1.0 allowed
    assert isoeat.weat(toy_model, _wtest(A=["good", "nice"]), rng=0, min_coverage=0.0).n_a == 2  # 2 found
    with pytest.raises(CoverageError, match="a set needs at least 2"):
        isoeat.weat(toy_model, _wtest(A=["good", "zzz1"]), rng=0, min_coverage=0.0)
    # the message lists the first 10 missing words, then " ..." when there are more
    ten = [f"zz{i:02d}" for i in range(10)]
    with pytest.raises(CoverageError) as e10:
        isoeat.weat(toy_model, _wtest(A=["good", "nice", *ten]), rng=0)
    assert str(e10.value).endswith(": " + ", ".join(ten))
    with pytest.raises(CoverageError) as e11:
        isoeat.weat(toy_model, _wtest(A=["good", "nice", *ten, "zz10"]), rng=0)
    assert str(e11.value).endswith(": " + ", ".join(ten) + " ...")


class _Mismatched:
    """A calibrator fitted on another model (its fingerprint differs from every model's here)."""

    name = "mismatched"
    metadata_ = {"model_fingerprint": "another model", "model": "other"}

    def transform(self, v):
        return np.asarray(v) * 2.0


def test_resolve_calibration_forms_and_force(toy_model):
    from isoeat._errors import FingerprintMismatchError
    from isoeat.stats.weat import resolve_calibration

    assert resolve_calibration(None, toy_model) == (None, "none")
    assert resolve_calibration("none", toy_model) == (None, "none")
    with pytest.raises(ConfigError, match="zcaa"):
        resolve_calibration("zcaa", toy_model)  # an unknown name is not "none"
    with pytest.raises(ConfigError, match="calibration must be None"):
        resolve_calibration(object(), toy_model)
    with pytest.raises(FingerprintMismatchError):
        resolve_calibration(_Mismatched(), toy_model)  # force defaults to False
    cal, name = resolve_calibration(_Mismatched(), toy_model, force=True)
    assert name == "mismatched" and isinstance(cal, _Mismatched)


def test_weat_and_sc_weat_refuse_another_models_calibrator_unless_forced(toy_model):
    import isoeat
    from isoeat._errors import FingerprintMismatchError

    with pytest.raises(FingerprintMismatchError):
        isoeat.weat(toy_model, _wtest(), calibration=_Mismatched(), rng=0)
    assert isoeat.weat(toy_model, _wtest(), calibration=_Mismatched(), force=True, rng=0).calibration == "mismatched"
    with pytest.raises(FingerprintMismatchError):
        isoeat.sc_weat(toy_model, "doctor", _wtest(), calibration=_Mismatched(), rng=0)
    assert isoeat.sc_weat(toy_model, "doctor", _wtest(), calibration=_Mismatched(), force=True,
                          rng=0)[0].calibration == "mismatched"


def test_the_entry_points_document_calibration_in_full():
    import isoeat
    from isoeat.stats.weat import CALIBRATION_DOC, documents_calibration

    for fn in (isoeat.weat, isoeat.sc_weat, isoeat.seat):
        assert CALIBRATION_DOC in fn.__doc__ and "see CALIBRATION_DOC" not in fn.__doc__

    def bare():
        pass

    assert documents_calibration(bare).__doc__ == ""


def _sc_scratch(w, A, B, ddof=1):
    ca, cb = [_cos(w, a) for a in A], [_cos(w, b) for b in B]
    pooled = ca + cb
    m = sum(pooled) / len(pooled)
    sd = math.sqrt(sum((v - m) ** 2 for v in pooled) / (len(pooled) - ddof))
    stat = sum(ca) / len(ca) - sum(cb) / len(cb)
    return stat / sd, stat


def test_sc_weat_from_vectors_from_scratch_with_its_defaults(monkeypatch):
    from isoeat.stats.weat import sc_weat_from_vectors

    spy = _SpyPermutations(monkeypatch)
    X, _, A, B = _weat_sets()
    r = sc_weat_from_vectors(X[0], A, B, rng=0)
    d, stat = _sc_scratch(X[0], A, B)
    assert r.effect_size == pytest.approx(d, rel=1e-12) and r.statistic == pytest.approx(stat, rel=1e-12)
    assert (r.n_a, r.n_b, r.ddof) == (2, 5, 1) and r.effect_size_ci is None
    assert spy.calls[-1]["n_permutations"] == 100_000
    assert sc_weat_from_vectors(X[0], A, B, rng=0, ci=True).effect_size_ci.level == 0.95
    zero = sc_weat_from_vectors(X[0], A, B, rng=0, ddof=0)
    assert zero.effect_size == pytest.approx(_sc_scratch(X[0], A, B, ddof=0)[0], rel=1e-12)


def test_sc_weat_from_vectors_with_equal_cosines_has_no_effect_size():
    from isoeat.stats.weat import sc_weat_from_vectors

    # every cosine with w = (1, 0, 0) is exactly 1/sqrt(2): the SD is 0 and d is undefined
    A = np.array([[1.0, 1.0, 0.0], [1.0, -1.0, 0.0]])
    B = np.array([[1.0, 0.0, 1.0], [1.0, 0.0, -1.0]])
    r = sc_weat_from_vectors(np.array([1.0, 0.0, 0.0]), A, B, rng=0)
    assert math.isnan(r.effect_size) and r.statistic == 0.0


@pytest.mark.parametrize("which", ["A", "B"])
def test_sc_weat_from_vectors_needs_two_attribute_vectors_in_each_set(which):
    from isoeat._errors import CoverageError
    from isoeat.stats.weat import sc_weat_from_vectors

    X, _, A, B = _weat_sets((3, 4, 3, 4))
    sets = {"A": A, "B": B}
    for bad in (sets[which][0], sets[which][:1]):  # a 1-D vector; one row
        with pytest.raises(CoverageError, match="SC-WEAT needs at least 2 attribute words"):
            sc_weat_from_vectors(X[0], **{**sets, which: bad})
    r = sc_weat_from_vectors(X[0], **{**sets, which: sets[which][:2]}, rng=0)  # two are enough
    assert (r.n_a, r.n_b) == ((2, 4) if which == "A" else (3, 2))


def test_sc_weat_from_scratch_with_its_defaults(toy_model, monkeypatch):
    import isoeat

    spy = _SpyPermutations(monkeypatch)
    t = _wtest()
    A, B = _rows(toy_model, t.A.words), _rows(toy_model, t.B.words)
    res = isoeat.sc_weat(toy_model, " doctor, nurse ,", t, rng=0)  # split at commas, blanks dropped
    assert [r.word for r in res] == ["doctor", "nurse"]
    for r, w in zip(res, _rows(toy_model, ["doctor", "nurse"])):
        assert r.effect_size == pytest.approx(_sc_scratch(w, A, B)[0], rel=1e-12)
        assert r.ddof == 1 and r.effect_size_ci is None and r.test == "T9"
    assert spy.calls[-1]["n_permutations"] == 100_000
    assert isoeat.sc_weat(toy_model, "doctor", t, rng=0, ci=True)[0].effect_size_ci.level == 0.95
    zero = isoeat.sc_weat(toy_model, ["doctor"], t, rng=0, ddof=0)[0]
    assert zero.effect_size == pytest.approx(_sc_scratch(_rows(toy_model, ["doctor"])[0], A, B, ddof=0)[0],
                                             rel=1e-12)
    four_of_five = ["bad", "vile", "foul", "awful", "zzz1"]
    assert isoeat.sc_weat(toy_model, "doctor", (t.A, _wtest(B=four_of_five).B), rng=0)[0].n_b == 4
    from isoeat._errors import CoverageError

    with pytest.raises(CoverageError, match="2 of 5 words"):  # 0.6 < the default 0.8
        isoeat.sc_weat(toy_model, "doctor", (t.A, _wtest(B=["bad", "vile", "foul", "zz1", "zz2"]).B), rng=0)


def test_sc_weat_argument_checks(toy_model):
    import isoeat

    t = _wtest()
    with pytest.raises(ConfigError, match="give at least one target word"):
        isoeat.sc_weat(toy_model, " , ", t)
    for bad in ((t.A, "B"), ("A", t.B), (t.A,)):
        with pytest.raises(ConfigError, match="attributes must be a test, a test id, a test file, or a pair of WordSets"):
            isoeat.sc_weat(toy_model, "doctor", bad)
    assert isoeat.sc_weat(toy_model, "doctor", (t.A, t.B), rng=0)[0].test == "custom"


@pytest.mark.parametrize("role", ["A", "B"])
def test_sc_weat_names_two_spellings_of_one_vocabulary_entry(toy_model, role):
    import isoeat

    t = _wtest(**{role: ["Good", "good", "nice"] if role == "A" else ["Bad", "bad", "vile"]})
    w = "good" if role == "A" else "bad"
    msg = f"set {role} lists '{w.capitalize()}' and '{w}', which are the same vocabulary entry '{w}'"
    with pytest.raises(InvalidTestError, match=msg):
        isoeat.sc_weat(toy_model, "doctor", t, rng=0)
