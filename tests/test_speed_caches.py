"""The caches that make ``isoeat run`` fast (issue 41, item 6): each gives exactly what it replaces, and is
read again when what it was keyed by changes."""

from __future__ import annotations

import os

import numpy as np
import pytest

from isoeat.backends.cache import WordListCache, file_stamp
from isoeat.backends.static import StaticVectors


def _files(tmp_path, words):
    """A vocabulary file and a matrix file, stamped as written a minute ago (not racy)."""
    vocab, matrix = tmp_path / "v.txt", tmp_path / "m.npy"
    vocab.write_text("\n".join(words) + "\n", encoding="utf-8")
    np.save(matrix, np.arange(len(words) * 3, dtype=np.float64).reshape(len(words), 3))
    for f in (vocab, matrix):
        os.utime(f, ns=(f.stat().st_mtime_ns - 60 * 10**9,) * 2)
    return vocab, matrix


def _load(vocab, matrix, calls, **kwargs):
    def read_words():
        calls.append(1)
        return vocab.read_text(encoding="utf-8").splitlines()

    stamps = [file_stamp(matrix), file_stamp(vocab)]
    return StaticVectors.from_stamped_files(read_words, np.load(matrix, mmap_mode="r"), file_stamps=stamps,
                                            name="toy", **kwargs)


def test_word_list_cache_gives_the_model_read_from_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    vocab, matrix = _files(tmp_path, ["the", "Cat", "sat", "on", "mat"])
    calls: list[int] = []
    first = _load(vocab, matrix, calls)
    second = _load(vocab, matrix, calls)
    assert calls == [1]  # the second load read no word file
    # the reference: the constructor on the words as read (what every load did before the cache)
    plain = StaticVectors(vocab.read_text(encoding="utf-8").splitlines(), np.load(matrix), name="toy")
    for m in (first, second):
        assert m.words == plain.words and list(m._index.items()) == list(plain._index.items())
        assert m.lowercase_fallback == plain.lowercase_fallback and m.fingerprint == plain.fingerprint
        assert {k: v for k, v in m.describe().items()} == plain.describe()
    assert second.lookup(["Cat", "mat", "dog"]).missing == ("dog",)


def test_word_list_cache_reads_again_when_a_file_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    vocab, matrix = _files(tmp_path, ["a", "b", "c"])
    calls: list[int] = []
    _load(vocab, matrix, calls)
    vocab.write_text("x\ny\nz\n", encoding="utf-8")  # same size, new content and stamp
    assert _load(vocab, matrix, calls).words == ("x", "y", "z")
    assert calls == [1, 1]


@pytest.mark.parametrize("words", [["cafe\u0301", "b"], ["a", "a"]], ids=["not-nfc", "duplicate"])
def test_word_list_cache_stores_only_a_clean_vocabulary(tmp_path, monkeypatch, words):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    vocab, matrix = _files(tmp_path, words)
    calls: list[int] = []
    for _ in range(2):
        with pytest.warns(Warning) if words[0] != "a" else _nothing():
            _load(vocab, matrix, calls, duplicates="first")
    assert calls == [1, 1]  # read each time: its warning and duplicate report come from reading


def test_word_list_cache_racy_or_disabled_stores_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    stamps = [{**file_stamp(__file__), "racy": True}]
    assert not WordListCache().put(stamps, {"model": "m"}, ("a",))
    monkeypatch.setenv("ISOEAT_NO_CACHE", "1")
    assert not WordListCache().put([file_stamp(__file__)], {"model": "m"}, ("a",))


def test_word_list_cache_refuses_a_wrong_count_or_a_bad_entry(tmp_path):
    c = WordListCache(tmp_path)
    stamps = [{**file_stamp(__file__), "racy": False}]
    assert c.put(stamps, {"model": "m"}, ("a", "b"))
    assert c.get(stamps, {"model": "m"}, 3) is None  # the matrix has another number of rows: read the file
    path = c.cache.path(c.KIND, c._parts(stamps, {"model": "m"}))
    path.write_bytes(b"not a zip")
    assert c.get(stamps, {"model": "m"}, 2) is None and not path.exists()


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _toy_model(seed=3, n=300, dim=6):
    from isoeat.wordsets import AssociationTest, WordSet

    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n)]
    vecs = rng.normal(size=(n, dim)) + np.linspace(0, 2, dim)
    vecs[0:5, 0] += 0.8
    model = StaticVectors(words, vecs, name="toy")
    test = AssociationTest("T1", "Toy", WordSet("x", tuple(words[0:5])), WordSet("y", tuple(words[5:10])),
                           WordSet("a", tuple(words[20:25])), WordSet("b", tuple(words[25:30])))
    return model, test


def test_redraws_cached_by_content_are_the_redraws_float_for_float(tmp_path, monkeypatch):
    import isoeat.experiments.stability as stab

    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    model, test = _toy_model()
    monkeypatch.setenv("ISOEAT_NO_CACHE", "1")
    plain = stab.fit_stability(model, [test], stab.RedrawPlan(size=60, shards=30, replicates=25, seed=0))  # computed: no cache
    monkeypatch.delenv("ISOEAT_NO_CACHE")
    first = stab.fit_stability(model, [test], stab.RedrawPlan(size=60, shards=30, replicates=25, seed=0))
    assert first.replicate_d == plain.replicate_d
    assert list((tmp_path / "cache" / "embeddings" / "redraws").rglob("*.npz"))

    def never(*a, **k):
        raise AssertionError("recomputed")

    monkeypatch.setattr(stab, "redraw_d", never)
    again = stab.fit_stability(model, [test], stab.RedrawPlan(size=60, shards=30, replicates=25, seed=0))
    assert again.replicate_d == plain.replicate_d  # == on tuples of floats: bit for bit
    assert all(type(x) is float for x in again.replicate_d["T1"])
    for other, kw in (({"seed": 1}, {}), ({"replicates": 24}, {}), ({"shards": 29}, {}), ({}, {"params": {"eps": 0.01}})):
        with pytest.raises(AssertionError, match="recomputed"):  # any input changed: a miss
            plan = stab.RedrawPlan(**{"size": 60, "shards": 30, "replicates": 25, "seed": 0, **other})
            stab.fit_stability(model, [test], plan, **kw)
    shifted = StaticVectors(model.words, model.vectors + 1e-12, name="toy")
    with pytest.raises(AssertionError, match="recomputed"):  # a vector changed in its last bits: a miss
        stab.fit_stability(shifted, [test], stab.RedrawPlan(size=60, shards=30, replicates=25, seed=0))


def test_speed_caches_say_nothing_and_count_nothing_in_the_run_output(tmp_path, monkeypatch):
    """A stored speed-up leaves the command's output as it was: no growth line, no warning."""
    from isoeat.backends import cache as c

    c.reset_cache_growth()
    assert c.quiet_put(c.EmbeddingCache(tmp_path), "redraws", {"k": 1}, {"d": np.ones((1, 2))})
    assert c.cache_growth() == {} and list(tmp_path.rglob("*.npz"))
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert not c.quiet_put(c.EmbeddingCache(blocked), "redraws", {"k": 1}, {"d": np.ones((1, 2))})
    assert str(blocked) not in c._UNWRITABLE  # the embedding cache still says it once when it cannot write


def test_certified_bracket_cached_by_content_is_the_computed_one(tmp_path, monkeypatch):
    """A slow bracket is stored and read back field for field (ints of any size, the float tolerance); a
    fast one is not stored; a changed input computes again."""
    from isoeat.backends.cache import BracketStore
    from isoeat.stats import _certified as c

    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(c, "_STORE", BracketStore())  # the engine installs it (the statistics import no backend)
    s = np.random.default_rng(5).normal(size=40)
    computed = c._certified_tail_count(s, 20, "greater", 1e-12, 2**30)  # the reference: no cache involved
    monkeypatch.setattr(c, "CACHE_SECONDS", 0.0)  # every bracket is slow enough to keep
    assert c.certified_tail_count(s, 20, "greater", 1e-12, 2**30) == computed
    calls = []
    real = c._certified_tail_count
    monkeypatch.setattr(c, "_certified_tail_count", lambda *a: calls.append(a) or real(*a))
    again = c.certified_tail_count(s, 20, "greater", 1e-12, 2**30)
    assert again == computed and calls == []
    assert [type(x) for x in again] == [type(x) for x in computed]
    for args in ((s, 20, "less", 1e-12, 2**30), (s, 19, "greater", 1e-12, 2**30), (s, 20, "greater", 1e-11, 2**30),
                 (s, 20, "greater", 1e-12, 2**29), (np.nextafter(s, 9), 20, "greater", 1e-12, 2**30)):
        c.certified_tail_count(*args)
    assert len(calls) == 5  # each changed input: computed


def test_certified_bracket_fast_ones_are_not_stored(tmp_path, monkeypatch):
    from isoeat.backends.cache import BracketStore
    from isoeat.stats import _certified as c

    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(c, "_STORE", BracketStore())
    monkeypatch.setattr(c, "CACHE_SECONDS", 1e9)
    s = np.random.default_rng(5).normal(size=30)
    assert c.certified_tail_count(s, 15, "greater", 1e-12, 2**30) == c._certified_tail_count(
        s, 15, "greater", 1e-12, 2**30)
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("*.npz"))


def test_frame_text_counts_kept_by_content_for_the_next_process(tmp_path, monkeypatch):
    """A slow text's counts are stored and read back in their first-seen order (the frame's row order, so
    its sums are the same); a changed text is counted again; a fast text is not stored."""
    from collections import Counter

    import isoeat.backends.static as static
    from isoeat.diagnostics import frames

    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    text = tmp_path / "t.txt"
    text.write_text("zeta alpha zeta beta\nalpha zeta gamma\n", encoding="utf-8")
    expected = Counter()  # the reference: every token in file order, counted from scratch
    for token in text.read_text(encoding="utf-8").split():
        expected[token] += 1
    calls = []
    real = static._word_counts
    monkeypatch.setattr(static, "_word_counts", lambda path: calls.append(path) or real(path))
    monkeypatch.setattr(frames, "COUNTS_CACHE_SECONDS", 0.0)
    monkeypatch.setattr(frames, "_COUNTS", {})
    first = frames._text_counts(text, False)
    monkeypatch.setattr(frames, "_COUNTS", {})  # a new process: nothing in memory
    second = frames._text_counts(text, False)
    assert calls == [text] and list(first.items()) == list(second.items()) == list(expected.items())
    text.write_text("zeta alpha\n", encoding="utf-8")
    monkeypatch.setattr(frames, "_COUNTS", {})
    assert frames._text_counts(text, False) == Counter({"zeta": 1, "alpha": 1}) and len(calls) == 2
    monkeypatch.setattr(frames, "COUNTS_CACHE_SECONDS", 1e9)
    text.write_text("other words\n", encoding="utf-8")
    for _ in range(2):
        monkeypatch.setattr(frames, "_COUNTS", {})
        frames._text_counts(text, False)
    assert len(calls) == 4  # too fast to keep: counted in each process


def test_frame_rows_looked_up_once_per_text_and_vocabulary(tmp_path, monkeypatch):
    """The raw and calibrated cells of frame paper share the text's rows; another vocabulary (or fallback rule)
    looks them up itself."""
    from isoeat.diagnostics import frames

    monkeypatch.setattr(frames, "_COUNTS", {})
    monkeypatch.setattr(frames, "_ROWS", {})
    text = tmp_path / "t.txt"
    text.write_text("b a b c zz\n", encoding="utf-8")
    m = StaticVectors(["a", "b", "c"], np.eye(3), name="m")
    rows, n = frames._text_rows(m, text)
    # the reference: first-seen order of the in-vocabulary words, their token counts
    assert rows.tolist() == [1, 0, 2] and n.tolist() == [2, 1, 1] and not rows.flags.writeable
    calls = []
    real = StaticVectors._row  # what row() calls (patching row itself would change the memo's key)
    monkeypatch.setattr(StaticVectors, "_row", lambda self, *a, **k: calls.append(a) or real(self, *a, **k))
    again = frames._text_rows(m, text)
    assert again[0] is rows and again[1] is n and calls == []  # no lookup again
    other = StaticVectors(["c", "b"], np.eye(2), name="m2")
    assert frames._text_rows(other, text)[0].tolist() == [1, 0] and calls  # its own rows, looked up


_FIG_CONFIG = """\
name: memo
models: [{spec: glove-6b-50d, label: g}]
tests: [W6]
calibrations: [none, zca]
settings: {permutations: 100}
report: {figure_formats: [png, pdf], dpi: 50}
"""


@pytest.fixture(scope="module")
def small_experiment(tmp_path_factory, glove):
    from isoeat.experiments import runner as R

    base = tmp_path_factory.mktemp("memo")
    (base / "exp.yaml").write_text(_FIG_CONFIG, encoding="utf-8")
    R.run_experiment(base / "exp.yaml", base / "out")
    return base / "out"


def test_figures_of_the_same_inputs_in_the_same_folder_are_kept_not_drawn(small_experiment, tmp_path, monkeypatch):
    """A second report of the same results into the same folder draws nothing and returns the same files, whose
    bytes are those a fresh drawing gives; a file edited, another dpi or another folder draws again."""
    pytest.importorskip("matplotlib")
    from isoeat.experiments import runner as R
    from isoeat.reporting import figures as F

    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    res = R.load_experiment(small_experiment)
    first = F.write_figures(res, tmp_path / "figs")
    drawn = {p: p.read_bytes() for p in first}
    fresh = F.write_figures(res, tmp_path / "other")  # the reference: a drawing into a new folder (no memo)
    assert [p.relative_to(tmp_path / "other") for p in fresh] == [p.relative_to(tmp_path / "figs") for p in first]
    assert all(q.read_bytes() == drawn[p] for p, q in zip(first, fresh))  # drawing is reproducible, byte for byte
    calls = []
    real = F.draw_all

    def spy(entries, *a, **k):  # the figures drawn (an entry built as None, no figure, draws nothing)
        files = real(entries, *a, **k)
        calls.append([e.name for e, f in zip(entries, files) if f is not None])
        return files

    monkeypatch.setattr(F, "draw_all", spy)
    again = F.write_figures(res, tmp_path / "figs")
    assert again == first and calls == [[]]  # nothing drawn, the same list in the plan's order
    assert all(p.read_bytes() == drawn[p] for p in again)
    edited = first[0]
    edited.write_bytes(drawn[edited][:-1])  # one file changed: its figure is drawn again, the others kept
    F.write_figures(res, tmp_path / "figs")
    assert calls[-1] == [edited.relative_to(tmp_path / "figs").with_suffix("").as_posix()]
    assert edited.read_bytes() == drawn[edited]
    F.write_figures(res, tmp_path / "figs", dpi=60)
    assert len(calls[-1]) == len(first) // 2  # another dpi: every figure drawn


def _speed():
    import importlib.util
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    if str(bench) not in sys.path:
        sys.path.insert(0, str(bench))
    spec = importlib.util.spec_from_file_location("bench_speed", bench / "speed.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _speed_figures(run=1.5, first=1.0, again=1.0):
    """Fabricated figures (nothing timed): each target at the bound the docstring states, 1.5 s and 1x."""
    return {"run": {"wall": run, "cpu": run, "n": 7},
            "first": {"ratio": first, "cpu_ratio": first, "wall": 3.0 * first, "grid": 3.0},
            "again": {"ratio": again, "cpu_ratio": again, "wall": 3.0 * again, "grid": 3.0}}


@pytest.mark.parametrize("kw, missed", [
    ({}, []),                                                  # every target met at its bound
    ({"run": 1.5001}, ["isoeat run"]), ({"first": 1.0001}, ["isoeat report / its grid"]),
    ({"again": 1.0001}, ["isoeat report again / its grid"]), ({"run": 0.9, "first": 0.5, "again": 0.1}, []),
])
def test_speed_benchmark_targets_at_their_bounds(kw, missed):
    sp = _speed()
    assert [m.split(" (")[0].split(":")[0] for m in sp.check(_speed_figures(**kw))] == missed
    run_row, first_row, again_row = sp.rows(_speed_figures(**kw))
    assert run_row["target"] == "<= 1.5 s" and first_row["target"] == again_row["target"] == "<= 1x"
    assert run_row["value"] == round(kw.get("run", 1.5), 3) and first_row["unit"] == "x"


def test_a_change_to_isoeat_code_computes_every_kept_value_again(monkeypatch):
    """The key of each value kept by content holds code_digest(): another code, another key."""
    from isoeat.backends import cache as c
    from isoeat.calibration import make_calibrator
    from isoeat.diagnostics import frames
    from isoeat.experiments import stability as stab
    from isoeat.stats import _certified

    s = np.random.default_rng(5).normal(size=30)

    def keys():
        return (stab._redraw_key([], make_calibrator("zca"), {}, 5, 0, 1),
                _certified._cache_key(s, 15, "greater", 1e-12, 2**30, c.BracketStore().code()), frames._counts_parts(("file", "x", "plain")))

    before = keys()
    assert all(k is not None and k["code"] == c.code_digest() for k in before)
    monkeypatch.setattr(c, "_CODE", ["another version of the code"])
    assert all(a["code"] == "another version of the code" and a != b for a, b in zip(keys(), before))


def test_without_a_store_the_statistics_compute_every_bracket(monkeypatch):
    """The statistics import no backend: with no store installed a bracket is computed, never looked up."""
    from isoeat.stats import _certified as c

    monkeypatch.setattr(c, "_STORE", None)
    s = np.random.default_rng(6).normal(size=30)
    assert c.certified_tail_count(s, 15, "greater", 1e-12, 2**30) == c._certified_tail_count(
        s, 15, "greater", 1e-12, 2**30)


def test_the_engine_installs_the_embedding_cache_as_the_bracket_store():
    import isoeat.experiments.engine  # noqa: F401 - installs it on import
    from isoeat.backends.cache import BracketStore
    from isoeat.stats import _certified as c

    assert isinstance(c._STORE, BracketStore)


def test_certified_bracket_of_a_huge_count_is_stored_exactly(tmp_path, monkeypatch):
    """Counts of any size (C(4000, 2000) has about 1,200 digits; larger sets pass str()'s 4,300-digit limit) are
    stored exactly and read back equal."""
    from isoeat.backends.cache import BracketStore
    from isoeat.stats import _certified as c

    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(c, "_STORE", BracketStore())
    monkeypatch.setattr(c, "CACHE_SECONDS", 0.0)
    big = c.CertifiedCount(10**5000 + 1, 10**5000 + 7, 3 * 10**5000, 1e-12, 19, True, 2**40, "")
    monkeypatch.setattr(c, "_certified_tail_count", lambda *a: big)
    s = np.random.default_rng(7).normal(size=20)
    assert c.certified_tail_count(s, 10, "greater", 1e-12, 2**30) == big
    monkeypatch.setattr(c, "_certified_tail_count", lambda *a: (_ for _ in ()).throw(AssertionError("computed")))
    assert c.certified_tail_count(s, 10, "greater", 1e-12, 2**30) == big  # read back, not computed
