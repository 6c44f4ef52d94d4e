"""The word-list audit's left-out rows kept by content (issue 43: the audit within 20% of ``isoeat run``): with a
store installed, the second call reads the rows back, equal field for field to the computed ones, and any
change of an input (a vector's bytes, alpha, the seed) is another key."""

from __future__ import annotations

import math

import numpy as np
import pytest

from isoeat.stats import _certified
from isoeat.stats.audit import _loo_key, leave_one_out
from isoeat.stats.options import PermutationOptions
from isoeat.stats.weat import weat_from_vectors


class _Store:
    def __init__(self):
        self.kept: dict[str, str] = {}
        self.gets = self.puts = 0

    def code(self):
        return "code-1"

    def get(self, key):
        self.gets += 1
        return self.kept.get(repr(sorted(key.items())))

    def put(self, key, record):
        self.puts += 1
        self.kept[repr(sorted(key.items()))] = record


def _sets(seed=0):
    r = np.random.default_rng(seed)
    v = {k: r.normal(size=(4, 6)) for k in "XYAB"}
    w = {k: [f"{k.lower()}{i}" for i in range(4)] for k in "XYAB"}
    return v, w


@pytest.fixture
def store():
    s = _Store()
    old = _certified.set_bracket_store(s)
    yield s
    _certified.set_bracket_store(old)


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for k, u in x.to_dict().items():
            v = y.to_dict()[k]
            assert (math.isnan(u) and math.isnan(v)) if isinstance(u, float) and math.isnan(u) else u == v, k


def test_rows_read_back_equal_the_computed_rows(store):
    v, w = _sets()
    full = weat_from_vectors(v["X"], v["Y"], v["A"], v["B"], rng=3)
    first = leave_one_out(v, w, full, rng=3)
    assert store.puts == 1 and store.gets == 1
    second = leave_one_out(v, w, full, rng=3)
    assert store.puts == 1 and store.gets == 2  # read, not computed again
    _same(first, second)
    _certified.set_bracket_store(None)
    _same(first, leave_one_out(v, w, full, rng=3))  # and what a computation without a store gives


def test_every_input_is_in_the_key():
    v, w = _sets()
    full = weat_from_vectors(v["X"], v["Y"], v["A"], v["B"], rng=3)
    perm = PermutationOptions(alternative=full.alternative)
    base = _loo_key(v, w, full, 0.05, 3, perm, "c")
    moved = {**v, "B": v["B"].copy()}
    moved["B"][2, 5] = np.nextafter(moved["B"][2, 5], 1.0)  # one ulp of one component
    assert _loo_key(moved, w, full, 0.05, 3, perm, "c") != base
    assert _loo_key(v, {**w, "A": ["a0", "a1", "a2", "z"]}, full, 0.05, 3, perm, "c") != base
    assert _loo_key(v, w, full, 0.05 + 1e-12, 3, perm, "c") != base
    assert _loo_key(v, w, full, 0.05, 4, perm, "c") != base
    assert _loo_key(v, w, full, 0.05, 3, PermutationOptions(alternative="two-sided"), "c") != base
    assert _loo_key(v, w, full, 0.05, 3, perm, "other code") != base
    assert _loo_key(v, w, full, 0.05, None, perm, "c") is None  # no seed: not reproducible, never kept
    assert _loo_key(v, w, full, 0.05, np.random.default_rng(3), perm, "c") is None
