"""Fuzzing the core file parsers: random bytes and mutated valid files never
raise anything but isoeat's own errors (IsoeatError), and never hang.

FUZZ_EXAMPLES examples per parser (hypothesis, derandomised so CI is stable).
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import isoeat
from isoeat import IsoeatError
from isoeat.backends.static import read_glove_text, read_npy, read_word2vec_binary, read_word2vec_text
from isoeat.wordsets import load_tests_from_file

FUZZ_EXAMPLES = int(os.environ.get("ISOEAT_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

VALID_GLOVE = b"the 0.1 0.2 0.3\ncat -1 2.5 0\nnew york 3 1 -2\n"
VALID_W2V_TEXT = b"2 3\nthe 0.1 0.2 0.3\ncat -1 2.5 0\n"
VALID_W2V_BIN = b"2 3\n" + b"the " + struct.pack("<3f", 0.1, 0.2, 0.3) + b"\ncat " + struct.pack("<3f", 1, 2, 3) + b"\n"
VALID_TEST = json.dumps({"id": "t", "X": ["a", "b"], "Y": ["c", "d"], "A": ["e", "f"], "B": ["g", "h"]}).encode()
VALID_SENT = json.dumps({k: {"category": k, "examples": ["x y", "z w"]} for k in ("targ1", "targ2", "attr1", "attr2")}).encode()
VALID_YAML = b"id: t\nX: [a, b]\nY: [c, d]\nA: [e, f]\nB: [g, h]\n"


def mutations(valid: bytes):
    """Valid bytes with random flips, cuts, duplications and insertions."""
    @st.composite
    def strat(draw):
        data = bytearray(valid)
        for _ in range(draw(st.integers(1, 6))):
            op = draw(st.sampled_from(["flip", "cut", "dup", "insert", "truncate"]))
            if not data:
                break
            i = draw(st.integers(0, len(data) - 1))
            if op == "flip":
                data[i] = draw(st.integers(0, 255))
            elif op == "cut":
                del data[i : i + draw(st.integers(1, 8))]
            elif op == "dup":
                data[i:i] = data[i : i + draw(st.integers(1, 8))]
            elif op == "insert":
                data[i:i] = draw(st.binary(min_size=1, max_size=8))
            else:
                del data[i:]
        return bytes(data)
    return strat()


def inputs(valid: bytes):
    return st.one_of(st.binary(max_size=300), mutations(valid))


def _check(parse, data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"f{suffix}"
        p.write_bytes(data)
        try:
            parse(p)
        except IsoeatError:
            pass


@FUZZ
@given(inputs(VALID_GLOVE))
def test_fuzz_glove_text(data):
    _check(read_glove_text, data, ".txt")


@FUZZ
@given(inputs(VALID_W2V_TEXT))
def test_fuzz_word2vec_text(data):
    _check(read_word2vec_text, data, ".vec")


@FUZZ
@given(inputs(VALID_W2V_BIN))
def test_fuzz_word2vec_binary(data):
    _check(read_word2vec_binary, data, ".bin")


@FUZZ
@given(inputs(b"the\ncat\tcount\nnew york\n"))
def test_fuzz_npy_vocabulary(data):
    def parse(p):
        np.save(p.with_suffix(".npy"), np.ones((3, 2)))
        read_npy(p.with_suffix(".npy"), p)
    _check(parse, data, ".vocab")


@FUZZ
@given(inputs(VALID_TEST))
def test_fuzz_test_json(data):
    _check(load_tests_from_file, data, ".json")


@FUZZ
@given(inputs(VALID_SENT))
def test_fuzz_sent_bias(data):
    _check(load_tests_from_file, data, ".jsonl")


@FUZZ
@given(inputs(VALID_YAML))
def test_fuzz_test_yaml(data):
    _check(load_tests_from_file, data, ".yaml")


def _valid_calibrator() -> bytes:
    with tempfile.TemporaryDirectory() as d:
        w = isoeat.ZCAWhitener().fit(np.random.default_rng(0).normal(size=(50, 3)))
        p = isoeat.save_calibrator(w, Path(d) / "w.npz")
        return p.read_bytes()


VALID_NPZ = _valid_calibrator()


@FUZZ
@given(inputs(VALID_NPZ))
def test_fuzz_calibrator_npz(data):
    _check(isoeat.load_calibrator, data, ".npz")
