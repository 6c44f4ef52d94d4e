"""Bad-input catalogue (statistics): invalid tests, budgets, intervals, cosines.

CLI cases (``isoeat weat``) end in a one-line isoeat error, exit 2, a message
naming the test, set and word, no traceback and nothing written. Library
cases raise an IsoeatError whose one-line message names the parameter.

Counts: CLI_CASES + LIBRARY_CASES bad-input cases.
"""

from __future__ import annotations

import numpy as np
import pytest

import isoeat
from isoeat import IsoeatError
from isoeat.cli import main
from isoeat.stats.permutation import exact_count, partition_test
from isoeat.stats.weat import cosine_matrix, sc_weat_from_vectors, weat_from_vectors


def _t(X, Y, A, B):
    q = lambda ws: "[" + ", ".join(f'"{w}"' for w in ws) + "]"  # noqa: E731
    return f'{{"id": "T9", "X": {q(X)}, "Y": {q(Y)}, "A": {q(A)}, "B": {q(B)}}}'


M, F = ["john", "paul", "mike"], ["amy", "joan", "lisa"]
C, H = ["executive", "salary", "office"], ["home", "parents", "children"]

CLI_CASES = [
    ("X identical to Y", _t(M, M, C, H), "test T9: set X is identical to set Y"),
    ("A identical to B", _t(M, F, C, C), "test T9: set A is identical to set B"),
    ("X and Y share a word", _t(M, ["john", "joan", "lisa"], C, H), "sets X and Y share 1 word(s): 'john'"),
    ("A and B share a word", _t(M, F, C, ["home", "salary", "children"]), "sets A and B share 1 word(s): 'salary'"),
    ("target is an attribute", _t(M, F, ["executive", "amy", "office"], H),
     "sets targets and attributes share 1 word(s): 'amy'"),
    ("two words fold to one entry", _t(["Bill", "bill", "john"], F, C, H),
     "set X lists 'Bill' and 'bill', which are the same vocabulary entry 'bill'"),
]

_g = np.random.default_rng(0)
_X, _Y, _A, _B = (_g.normal(size=(3, 4)) for _ in range(4))

LIBRARY_CASES = [
    ("ddof not below n", lambda: weat_from_vectors(_X, _Y, _A, _B, ddof=6), "ddof=6 must be below the 6 values"),
    ("SC-WEAT ddof not below n", lambda: sc_weat_from_vectors(_X[0], _A, _B, ddof=7), "ddof=7 must be below"),
    ("dimension 1", lambda: weat_from_vectors(_X[:, :1], _Y[:, :1], _A[:, :1], _B[:, :1]), "dimension 1"),
    ("bootstrap of 1", lambda: weat_from_vectors(_X, _Y, _A, _B, bootstrap=1), "bootstrap must be 0 (no interval) or at least 200"),
    ("bootstrap too few for 99%", lambda: weat_from_vectors(_X, _Y, _A, _B, bootstrap=999, ci_level=0.99), "at least 1000"),
    ("bad ci_method", lambda: weat_from_vectors(_X, _Y, _A, _B, ci_method="bcx"), "ci_method must be one of auto, noncentral-t, jackknife, bca, percentile"),
    ("SC-WEAT interval", lambda: sc_weat_from_vectors(_X[0], _A, _B, bootstrap=1000), "SC-WEAT has no bootstrap interval"),
    ("exact over memory", lambda: partition_test(np.arange(40.0), 20, method="exact", exact_memory=2**20),
     "exact_memory 1 MiB"),
    ("exact_count over memory", lambda: exact_count(np.arange(40.0), 20, 3.0, exact_memory=2**20), "exact_memory 1 MiB"),
    ("negative exact_memory", lambda: partition_test(np.arange(6.0), 3, exact_memory=-1),
     "exact_memory must be a non-negative integer, got -1"),
    ("zero vector", lambda: cosine_matrix(np.zeros((1, 3)), np.ones((1, 3))), "all-zero vector (first matrix row 0)"),
    ("NaN vector", lambda: cosine_matrix(np.ones((1, 3)), np.full((1, 3), np.nan)), "not finite (second matrix row 0)"),
    ("rtol negative", lambda: partition_test(np.arange(6.0), 3, rtol=-1.0), "rtol must be a finite number >= 0, got -1.0"),
    ("allow_overlap not a bool", lambda: isoeat.weat(None, "W6", allow_overlap="yes"), "allow_overlap must be true or false"),
]


@pytest.mark.parametrize("name, test_json, expected", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_invalid_test_file_gives_one_line_error(tmp_path, capsys, glove, name, test_json, expected):
    (tmp_path / "t.json").write_text(test_json)
    before = set(tmp_path.rglob("*"))
    code = main(["weat", "--test", str(tmp_path / "t.json")])
    err = capsys.readouterr().err
    assert code == 2, (name, err)
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1, err
    assert expected in err and "Traceback" not in err, err
    assert set(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("name, call, expected", LIBRARY_CASES, ids=[c[0] for c in LIBRARY_CASES])
def test_library_refuses_with_one_line_error(name, call, expected):
    with pytest.raises(IsoeatError) as info:
        call()
    assert expected in str(info.value) and "\n" not in str(info.value), str(info.value)


def test_catalogue_size():
    assert len(CLI_CASES) + len(LIBRARY_CASES) >= 20
    assert len({c[0] for c in CLI_CASES + LIBRARY_CASES}) == len(CLI_CASES) + len(LIBRARY_CASES)
