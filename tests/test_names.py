"""The one homes of issue 30 at their boundaries: file names, record keys, seed streams, cosine.

Expected values are written out by hand or recomputed from the documented rule (hashlib, json), not taken
from the functions under test.
"""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest

from isoeat._errors import ConfigError, DataFormatError
from isoeat._names import MAX_KEPT, SLUG_CHARS, check_distinct, file_name, unique_names
from isoeat._records import canonical_json, content_hash, is_sealed, record_digest, seal


def _h(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


# --------------------------------------------------------------------------- file names
@pytest.mark.parametrize("label", ["GloVe", "W6", "glove-6b-50d", "a.b_c=d-e", "0", "x" * 100, "com10", "lpt10"])
def test_safe_labels_are_their_own_names(label):
    assert file_name(label) == label


@pytest.mark.parametrize("label, slug", [
    ("z 1", "z_1"),                          # a space
    ("z_1+2e22fb0583", "z_1_2e22fb0583"),   # '+' marks an escaped name: a label holding one is escaped too
    (".hidden", "hidden"), ("-flag", "flag"), ("_x", "x"),  # may not start with . - _
    ("end.", "end"),                         # Windows drops a trailing dot
    ("nul", "nul"), ("CON.txt", "CON.txt"), ("com1", "com1"), ("LPT9", "LPT9"),  # Windows device names
    ("ü", "x"), ("", "x"), ("a/b", "a_b"), ("a\\b", "a_b"),
    ("x" * 101, "x" * 80),                   # one over the limit of 100: the slug is cut at 80
    ("y" * 81 + " ", "y" * 80),
])
def test_other_labels_get_a_slug_and_a_hash(label, slug):
    assert file_name(label) == f"{slug}+{_h(label)}"


def test_no_escaped_name_equals_a_kept_one_and_names_stay_short():
    labels = ["z 1", "z_1", "z_1+" + _h("z 1"), "z_1-2e22fb", "Z 1", "x" * 1000, "é" * 300]
    names = [file_name(x) for x in labels]
    assert len(set(names)) == len(labels)
    assert max(len(n.encode()) for n in names) <= 80 + 11 and MAX_KEPT == 100 and SLUG_CHARS == 80


def test_check_distinct_at_the_case_boundary():
    check_distinct(["GloVe", "GloVe2", "z 1", "Z 1"], "model labels")  # escaped names differ by their hash
    check_distinct(["a", "a"], "model labels")                          # the same label twice is one label
    with pytest.raises(ConfigError, match="'W6' and 'w6' differ only in case"):
        check_distinct(["W6", "w6"], "test ids")


def test_unique_names_separate_case_twins_and_joined_collisions_and_cut_long_names():
    a, b = unique_names([("GloVe",), ("glove",)])
    assert a.casefold() != b.casefold() and a.startswith("GloVe+") and b.startswith("glove+")
    x, y = unique_names([("a-b", "c"), ("a", "b-c")])
    assert x != y
    (long_name,) = unique_names([("m" * 100, "n" * 100, "o" * 100)])
    assert len(long_name) == 150 + 11 and long_name[150] == "+"
    (ok,) = unique_names([("m" * 100, "n" * 99)])  # 200 characters: kept
    assert ok == "m" * 100 + "-" + "n" * 99
    (cut,) = unique_names([("m" * 100, "n" * 100)])  # 201: cut to 150 and the hash of the key
    assert cut == "m" * 100 + "-" + "n" * 49 + "+" + _h(json.dumps(["m" * 100, "n" * 100]))


# --------------------------------------------------------------------------- records and keys
def test_canonical_json_is_sorted_compact_and_refuses_what_would_collide():
    assert canonical_json({"b": 1, "a": [np.int64(2), np.float64(0.5)], "é": None}) == '{"a":[2,0.5],"b":1,"é":null}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})  # it would read as null, like None
    with pytest.raises(TypeError):
        canonical_json({"x": {1, 2}})        # a set's str could differ between runs


def test_content_hash_is_sha256_of_the_canonical_text():
    obj = {"z": [1, "ü"], "a": True}
    want = hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":"),
                                     ensure_ascii=False).encode()).hexdigest()
    assert content_hash(obj, None) == want and content_hash(obj) == want[:16]


def test_a_sealed_record_reads_back_sealed_and_notices_an_edit():
    rec = seal({"d": 1.0804, "p": float("nan"), "words": ["a", "b"]})
    back = json.loads(json.dumps({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()}))
    assert is_sealed(back) and record_digest(back) == rec["content_sha256"]
    back["d"] = 1.0805
    assert not is_sealed(back)


# --------------------------------------------------------------------------- seed streams
def test_stream_names_are_injective():
    from isoeat._random import derive_seed

    from _streams import stream_seed

    assert derive_seed(0, "a\x1fb") != derive_seed(0, "a", "b")  # a separator inside a part is no separator
    assert derive_seed(0, "ab", "c") != derive_seed(0, "a", "bc")
    assert derive_seed(7, "weat", "W6") == stream_seed(7, "weat", "W6")
    assert derive_seed(7, "weat", "W6") != derive_seed(8, "weat", "W6")


# --------------------------------------------------------------------------- cosine
def test_unit_vector_is_one_row_scaled():
    from isoeat._cosine import unit_vector

    v = unit_vector([3e200, 0.0, 4e200])
    assert v.shape == (3,) and v.tolist() == pytest.approx([0.6, 0.0, 0.8], rel=1e-15)
    with pytest.raises(ConfigError, match=r"all-zero vector \(axis row 0\)"):
        unit_vector(np.zeros(3), "axis")


def test_row_cosines_name_the_zero_row_with_the_error_class_asked_for():
    from isoeat._cosine import row_cosines

    U = np.array([[1.0, 0.0], [3e200, 4e200]])
    V = np.array([[1.0, 1.0], [3e-170, 4e-170]])
    assert row_cosines(U, V) == pytest.approx([math.sqrt(0.5), 1.0], rel=1e-15)
    with pytest.raises(DataFormatError, match=r"all-zero vector \(items row 1\)"):
        row_cosines(U, np.array([[1.0, 0.0], [0.0, 0.0]]), "items", DataFormatError)
