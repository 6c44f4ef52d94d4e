"""``to_frame()`` on WEATResult, SCWEATResult, SEATResult and Comparison: one row per result (per test for a
Comparison), the columns of ``to_dict()`` in their order; pandas imported only when asked for."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from isoeat.stats.weat import sc_weat_from_vectors, weat_from_vectors

pd = pytest.importorskip("pandas")


def _vectors(seed: int = 0, n: int = 5) -> tuple:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, 8)) + off for off in (0.3, -0.3, 0.2, -0.2))


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _check_one_row(frame, record: dict) -> None:
    assert isinstance(frame, pd.DataFrame)
    assert frame.shape == (1, len(record))
    assert list(frame.columns) == list(record)
    row = frame.iloc[0]
    bad = [k for k, v in record.items() if not _same(row[k], v)]
    assert not bad, bad


def test_weat_result_frame() -> None:
    r = weat_from_vectors(*_vectors(), rng=0, bootstrap=200, test="T")
    _check_one_row(r.to_frame(), r.to_dict())
    with_scores = r.to_frame(scores=True)
    assert list(with_scores.columns)[-2:] == ["s_x", "s_y"] and list(with_scores.iloc[0]["s_x"]) == list(r.s_x)


def test_weat_result_frame_keeps_lists() -> None:
    from dataclasses import replace

    r = replace(weat_from_vectors(*_vectors(), rng=0), dropped=("X:gone", "A:lost"))
    frame = r.to_frame()
    assert frame.loc[0, "dropped"] == ["X:gone", "A:lost"]


def test_sc_weat_result_frame() -> None:
    X, _, A, B = _vectors(1)
    r = sc_weat_from_vectors(X[0], A, B, rng=0, word="nurse")
    _check_one_row(r.to_frame(), r.to_dict())
    assert r.to_frame().loc[0, "word"] == "nurse"


def test_seat_result_frame() -> None:
    from isoeat.stats.seat import SEATResult

    results = tuple(weat_from_vectors(*_vectors(i), rng=i, test="S") for i in range(3))
    ds = [r.effect_size for r in results]
    res = SEATResult(test="S", bias_type="", model="m", calibration="none", mode="templates",
                     templates=("This is {}.", "{} is here.", "It is {}."), results=results,
                     effect_size_mean=float(np.mean(ds)), effect_size_min=min(ds), effect_size_max=max(ds),
                     n_x=5, n_y=5, n_a=5, n_b=5)
    frame = res.to_frame()
    record = res.to_dict()
    assert frame.shape == (1, len(record)) and list(frame.columns) == list(record)
    assert frame.loc[0, "n_templates"] == 3 and frame.loc[0, "effect_size_max"] == max(ds)
    assert [t["template"] for t in frame.loc[0, "per_template"]] == list(res.templates)


def test_comparison_frame_one_row_per_test() -> None:
    from isoeat.experiments.compare import Comparison, ComparisonRow

    rows = []
    for i, test in enumerate(("T1", "T2", "T3")):
        raw = weat_from_vectors(*_vectors(i), rng=0, test=test)
        cal = weat_from_vectors(*_vectors(i + 10), rng=0, test=test, calibration="zca")
        rows.append(ComparisonRow(test=test, bias_type="b", raw=raw, calibrated=cal, change="Stable",
                                  delta_d=cal.effect_size - raw.effect_size, large_shift=False, sign_reversal=False))
    comp = Comparison(model="m", calibration="zca", alpha=0.05, rows=tuple(rows), calibrator_metadata={})
    frame = comp.to_frame()
    expected = comp.to_dict()["rows"]
    assert frame.shape == (3, len(expected[0]))
    assert list(frame.columns) == list(expected[0])
    assert list(frame["test"]) == ["T1", "T2", "T3"]
    for i, rec in enumerate(expected):
        bad = [k for k, v in rec.items() if not _same(frame.iloc[i][k], v)]
        assert not bad, bad


def test_without_pandas_a_one_line_error_names_the_pip_line(monkeypatch) -> None:
    import isoeat

    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now raises ImportError
    r = weat_from_vectors(*_vectors(), rng=0)
    with pytest.raises(isoeat.MissingDependencyError, match=r"pip install pandas"):
        r.to_frame()


def test_pandas_is_imported_lazily() -> None:
    code = ("import sys, isoeat, isoeat.stats.results, isoeat.stats.seat, isoeat.experiments.compare; "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
