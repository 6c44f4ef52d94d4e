"""What brings ``isoeat run --levels --audit --out`` within 1.2x of ``isoeat run --out`` changes no number.

* ``stats._bundle.bundled``: the bracket-store records one batch reads (the audit's left-out rows, the Level-2
  counts) answered from one bundle; a record is given only under the exact text of its own key, so a stale,
  foreign or damaged bundle is a miss (computed again), never another record.
* The quick Level-2 counts (never kept in a file of their own) are kept in the bundle: read back, not recounted,
  and equal to the count made without any store.
* The folder written by ``isoeat run --levels --audit`` is the same, character for character, whether its audit
  and levels are computed (empty cache), read from their own entries, or read from the bundles.

Expected values: the rows and p-values computed with no store installed (the definition's computation, tested
against from-scratch numpy in tests/test_audit.py and tests/test_levels.py); here only their reuse is tested.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from isoeat._records import canonical_json
from isoeat.stats._bundle import BundledStore, bundled
from isoeat.stats._certified import bracket_store, set_bracket_store


class _Store:
    """A bracket store in memory (BracketStore's interface), counting its reads."""

    def __init__(self, code="code-1"):
        self.d: dict[str, str] = {}
        self.reads: list[dict] = []
        self._code = code

    def code(self):
        return self._code

    def get(self, key):
        self.reads.append(key)
        return self.d.get(canonical_json(key))

    def put(self, key, record):
        self.d[canonical_json(key)] = record


@pytest.fixture
def store():
    s = _Store()
    old = set_bracket_store(s)
    yield s
    set_bracket_store(old)


def _bundles(s):
    return {k: v for k, v in s.d.items() if '"bundle"' in k}


def test_bundle_answers_by_exact_key_and_reads_once(store):
    k1, k2 = {"levels-l2": 1, "v": "a", "code": "code-1"}, {"levels-l2": 1, "v": "b", "code": "code-1"}
    store.put(k1, "rec-1")  # a record with its own entry
    with bundled("levels", ["m", ["W1"]]) as b:
        assert isinstance(bracket_store(), BundledStore)
        assert bracket_store().get(k1) == "rec-1"  # from its own entry
        b.keep(k2, "rec-2")  # a quick result: the bundle only
    assert bracket_store() is store
    assert canonical_json(k2) not in store.d  # no file of its own
    (bundle,) = _bundles(store).values()
    assert json.loads(bundle) == {canonical_json(k1): "rec-1", canonical_json(k2): "rec-2"}
    store.reads.clear()
    with bundled("levels", ["m", ["W1"]]):
        assert bracket_store().get(k1) == "rec-1" and bracket_store().get(k2) == "rec-2"
    assert len(store.reads) == 1 and "bundle" in store.reads[0]  # the bundle: one read, nothing else
    assert len(_bundles(store)) == 1  # unchanged: not written again


def test_bundle_never_answers_another_key(store):
    k = {"audit-loo": 1, "words": ["a"], "code": "code-1"}
    with bundled("audit", "ctx"):
        bracket_store().put(k, "rows-a")
    other = {**k, "words": ["b"]}  # another test's key, asked under the same bundle
    with bundled("audit", "ctx"):
        assert bracket_store().get(other) is None
        assert bracket_store().get({**k, "code": "code-2"}) is None  # the code digest is part of the text
        assert bracket_store().get(k) == "rows-a"


def test_bundle_holds_only_the_last_batch(store):
    a, b = {"k": "a"}, {"k": "b"}
    with bundled("levels", "ctx"):
        bracket_store().keep(a, "1")
    with bundled("levels", "ctx"):
        bracket_store().keep(b, "2")  # a not asked this time
    (bundle,) = _bundles(store).values()
    assert json.loads(bundle) == {canonical_json(b): "2"}


@pytest.mark.parametrize("damage", ["not json", "[1, 2]", '{"k": 3}', "{"])
def test_damaged_bundle_is_empty_and_rewritten(store, damage):
    key = {"bundle": "levels", "context": "ctx", "code": "code-1"}
    store.put(key, damage)
    k = {"k": 1}
    with bundled("levels", "ctx"):
        assert bracket_store().get(k) is None
        bracket_store().keep(k, "r")
    assert json.loads(store.d[canonical_json(key)]) == {canonical_json(k): "r"}


def test_no_store_no_bundle_and_no_nesting(store):
    old = set_bracket_store(None)
    try:
        with bundled("levels", "ctx") as b:
            assert b is None and bracket_store() is None
    finally:
        set_bracket_store(old)
    with bundled("levels", "ctx") as outer:
        with bundled("audit", "ctx") as inner:
            assert inner is None and bracket_store() is outer


def test_bundle_not_written_after_an_error(store):
    with pytest.raises(RuntimeError):
        with bundled("levels", "ctx"):
            bracket_store().keep({"k": 1}, "r")
            raise RuntimeError("stop")
    assert bracket_store() is store and not _bundles(store)


def test_quick_level2_counts_read_back_not_recounted(store, monkeypatch):
    """Level 2 of an 8 + 8 attribute test (an exact count well under CACHE_SECONDS: no file of its own): the
    second batch reads its p from the bundle, with no partition test, equal to the count without a store."""
    import isoeat.stats.levels as lv

    rng = np.random.default_rng(3)
    T, A, B = rng.normal(size=(8, 5)), rng.normal(size=(8, 5)), rng.normal(size=(8, 5))
    old = set_bracket_store(None)
    try:
        plain = lv.level2(T, A, B)
    finally:
        set_bracket_store(old)
    with bundled("levels", "ctx"):
        first = lv.level2(T, A, B)
    assert not [k for k in store.d if "levels-l2" in k and '"bundle"' not in k]  # quick: no entry of its own
    monkeypatch.setattr(lv, "partition_test", lambda *a, **k: (_ for _ in ()).throw(AssertionError("recounted")))
    with bundled("levels", "ctx"):
        again = lv.level2(T, A, B)
    assert plain[2] == "exact" and plain == first == again
    with pytest.raises(AssertionError, match="recounted"):  # outside the bundle: counted (no entry of its own)
        lv.level2(T, A, B)


def test_leave_one_out_read_from_the_bundle(store, monkeypatch):
    import isoeat.stats.audit as audit
    from isoeat.stats.weat import weat_from_vectors

    rng = np.random.default_rng(7)
    v = {r: rng.normal(size=(n, 6)) for r, n in (("X", 6), ("Y", 5), ("A", 3), ("B", 4))}
    w = {r: [f"{r}{i}" for i in range(len(v[r]))] for r in v}
    full = weat_from_vectors(v["X"], v["Y"], v["A"], v["B"], rng=0)
    old = set_bracket_store(None)
    try:
        plain = audit.leave_one_out(v, w, full, rng=3)
    finally:
        set_bracket_store(old)
    with bundled("audit", "ctx"):
        audit.leave_one_out(v, w, full, rng=3)
    store.reads.clear()
    monkeypatch.setattr(audit, "_without", lambda *a, **k: (_ for _ in ()).throw(AssertionError("recomputed")))
    with bundled("audit", "ctx"):
        again = audit.leave_one_out(v, w, full, rng=3)
    assert len(store.reads) == 1  # the bundle alone

    def same(a, b):
        return all(
            (isinstance(x, float) and math.isnan(x) and math.isnan(y)) or x == y
            for x, y in zip(a.to_dict().values(), b.to_dict().values())
        )

    assert len(plain) == len(again) and all(same(a, b) for a, b in zip(plain, again))


def _files(folder):
    # the files whose text is the same in every run (the manifest, cells and experiment.json carry run ids and
    # times): the audit, the levels and the result tables
    names = ["tables/audit.json", "tables/audit.csv", "tables/levels.csv", "results.json", "comparison.json"]
    return {n: (folder / n).read_bytes() for n in names}


def test_run_folder_same_cold_warm_and_bundled(tmp_path, monkeypatch, glove):
    """W6 and W9 (small tests: quick), run three times on one cache folder: computed, then read back twice
    (the second reading from the bundles): the same audit.json, audit.csv, levels.csv and results, byte for byte."""
    from isoeat.cli import main

    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ISOEAT_NO_CACHE", raising=False)
    runs = []
    for i in range(3):
        out = tmp_path / f"run{i}"
        assert main(["run", "--test", "W6,W9", "--levels", "--audit", "--out", str(out)]) == 0
        runs.append(_files(out))
    assert runs[0] == runs[1] == runs[2]
    keys = [str(np.load(p)["__key__"]) for p in (tmp_path / "cache").rglob("*.npz")]
    names = {json.loads(k).get("bundle") for k in keys}
    assert {"audit", "levels"} <= names  # both batches were bundled in this cache folder
