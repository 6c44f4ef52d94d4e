"""Defining pairs in test files (``pairs:``): read, checked, hashed, and used by the word-pair metrics.

The expected RIPA value is computed here from Ethayarajh et al.'s definition
with one defining pair, where the relation vector is (x - y) / ||x - y||
oriented towards the first word (docs/metrics.md): per word <w, b>, the
estimate the X mean minus the Y mean; the expected hash of a test without
pairs is the formula of test_hash before pairs existed, written out here.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import isoeat
from isoeat._errors import ConfigError, DataFormatError
from isoeat.experiments.config import test_hash as _test_hash
from isoeat.wordsets import load_tests_from_file

SETS = dict(X=["john", "paul", "mike", "kevin"], Y=["amy", "joan", "lisa", "sarah"],
            A=["executive", "management", "salary", "career"], B=["home", "parents", "children", "family"])


def _file(tmp_path: Path, pairs: str | None, name: str = "t.yaml") -> Path:
    p = tmp_path / name
    p.write_text("id: T\nbias_type: Gender\n" + "".join(f"{k}: [{', '.join(v)}]\n" for k, v in SETS.items())
                 + (f"pairs: {pairs}\n" if pairs is not None else ""), encoding="utf-8")
    return p


def test_pairs_are_read_from_a_test_file(tmp_path):
    (t,) = load_tests_from_file(_file(tmp_path, "[[she, he], [woman, man]]"))
    assert t.pairs == (("she", "he"), ("woman", "man"))
    assert t.to_dict()["pairs"] == [["she", "he"], ["woman", "man"]]
    (plain,) = load_tests_from_file(_file(tmp_path, None, "plain.yaml"))
    assert plain.pairs == () and "pairs" not in plain.to_dict()


@pytest.mark.parametrize("pairs,message", [
    ("[]", "pairs: expected a non-empty list"),
    ("she", "pairs: expected a non-empty list"),
    ("[[she, he, it]]", r"pairs\[0\]: expected two words"),
    ("[she]", r"pairs\[0\]: expected two words"),
    ("[[she, '']]", r"pairs\[0\]: expected two words"),
    ("[[she, she]]", r"pairs\[0\].*names one word twice"),
    ("[[she, he], [she, he]]", "listed more than once"),
])
def test_bad_pairs_are_refused_naming_the_key(tmp_path, pairs, message):
    with pytest.raises(DataFormatError, match=message):
        load_tests_from_file(_file(tmp_path, pairs))


def test_association_test_checks_its_pairs():
    W = isoeat.get_test("W6")
    with pytest.raises(ConfigError, match="two non-empty words"):
        type(W)(**{**{k: getattr(W, k) for k in ("id", "bias_type", "X", "Y", "A", "B")}, "pairs": (("a",),)})


def test_hash_of_tests_without_pairs_leaves_pairs_out_and_pairs_change_it(tmp_path):
    (plain,) = load_tests_from_file(_file(tmp_path, None, "plain.yaml"))
    (paired,) = load_tests_from_file(_file(tmp_path, "[[she, he]]"))
    old = {"id": plain.id, "bias_type": plain.bias_type,
           **{r: [ws.name, list(ws.words)] for r, ws in plain.sets().items()}}
    canonical = json.dumps(old, sort_keys=True, separators=(",", ":"), ensure_ascii=False)  # isoeat._records' form
    want = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    assert _test_hash(plain) == want
    assert _test_hash(isoeat.get_test("W6")) != _test_hash(paired) != want


def test_ripa_uses_the_pairs_of_the_test_file(tmp_path, glove):
    (t,) = load_tests_from_file(_file(tmp_path, "[[she, he]]"))
    r = isoeat.metric(glove, "ripa", t, rng=0)
    assert r.pairs_source == "test" and r.pairs == ("she-he",)
    v = {w: glove.lookup([w]).vectors[0].astype(np.float64) for w in ["she", "he", *SETS["X"], *SETS["Y"]]}
    b = (v["she"] - v["he"]) / np.linalg.norm(v["she"] - v["he"])
    want = np.mean([v[w] @ b for w in SETS["X"]]) - np.mean([v[w] @ b for w in SETS["Y"]])
    assert r.estimate == pytest.approx(want, abs=1e-9) and r.estimate < 0  # male names lie towards "he"
    # given pairs still win over the file's
    assert isoeat.metric(glove, "ripa", t, rng=0, pairs=[("woman", "man")]).pairs_source == "given"
