"""Kill tests for the result records (tools/mutation.py on src/isoeat/stats/results.py).

Expected values are the documented contract: significance is p strictly below alpha (0.05 by
default), results take keyword arguments only, stopped_early defaults to False and the long
s-value tuples stay out of repr.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from isoeat.stats.results import SCWEATResult, WEATResult
from isoeat.stats.weat import sc_weat_from_vectors, weat_from_vectors

_G = np.random.default_rng(3)
_SETS = tuple(_G.normal(size=(4, 5)) + s for s in (0.6, -0.6, 0.3, -0.3))


@pytest.fixture(scope="module")
def result() -> WEATResult:
    return weat_from_vectors(*_SETS, rng=0)


def test_significant_is_p_strictly_below_alpha_with_default_005(result):
    at = dataclasses.replace(result, p_value=0.05)
    assert at.significant() is False and at.significant(0.05) is False  # p == alpha: not significant
    below = dataclasses.replace(result, p_value=0.049)
    assert below.significant() is True
    # default alpha is 0.05, not 0.025: p = 0.03 is significant by default
    assert dataclasses.replace(result, p_value=0.03).significant() is True
    assert dataclasses.replace(result, p_value=0.5).significant() is False


def test_results_take_keyword_arguments_only(result):
    values = [getattr(result, f.name) for f in dataclasses.fields(WEATResult)]
    with pytest.raises(TypeError):
        WEATResult(*values)
    sc = sc_weat_from_vectors(_SETS[0][0], _SETS[2], _SETS[3], word="w", rng=0)
    with pytest.raises(TypeError):
        SCWEATResult(*[getattr(sc, f.name) for f in dataclasses.fields(SCWEATResult)])


def test_stopped_early_defaults_to_false(result):
    fields = {f.name: f for f in dataclasses.fields(WEATResult)}
    assert fields["stopped_early"].default is False
    assert result.stopped_early is False  # exact p: nothing stopped


def test_s_values_stay_out_of_repr(result):
    assert result.s_x and "s_x=" not in repr(result) and "s_y=" not in repr(result)


@pytest.mark.parametrize("cls", [WEATResult, SCWEATResult])
def test_own_fields_are_keyword_only_too(result, cls):
    rec = result if cls is WEATResult else sc_weat_from_vectors(_SETS[0][0], _SETS[2], _SETS[3], word="w", rng=0)
    own = [f.name for f in dataclasses.fields(cls) if f.name in cls.__annotations__]
    rest = {f.name: getattr(rec, f.name) for f in dataclasses.fields(cls) if f.name not in own}
    with pytest.raises(TypeError):
        cls(*[getattr(rec, n) for n in own], **rest)
