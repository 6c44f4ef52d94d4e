"""``--reference-shards K`` is bounded: each shard is one more refit, so K is checked (and its cost estimated)
before a single reference vector is encoded; the refusal is one line naming the option, the cost and the way on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from isoeat import ConfigError
from isoeat.cli import main
from isoeat.experiments import reference as ref


@pytest.fixture
def no_encoding(monkeypatch):
    """Fail the test if the reference is encoded (the checks must come first)."""
    def refuse(*a, **kw):
        raise AssertionError("the reference was encoded before the shards were checked")

    monkeypatch.setattr(ref, "_shard_stream", refuse)


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("k", [ref.MAX_SHARDS + 1, 2000, 10**9])
def test_too_many_shards_is_refused_before_encoding(glove, capsys, no_encoding, k):
    assert main(["run", "--tests", "W6", "--reference-size", "20000", "--reference-shards", str(k)]) == 2
    err = _one_line(capsys)
    assert f"--reference-shards must be from 2 to {ref.MAX_SHARDS}, got {k}" in err


def test_the_maximum_itself_is_allowed(glove):
    assert ref.check_shards(ref.MAX_SHARDS, 50) == ref.MAX_SHARDS
    with pytest.raises(ConfigError, match=f"from 2 to {ref.MAX_SHARDS}"):
        ref.check_shards(ref.MAX_SHARDS + 1, 50)
    with pytest.raises(ConfigError, match="from 2 to"):
        ref.check_shards(1, 50)


def test_shards_of_fewer_than_two_rows_are_refused(glove, capsys, no_encoding):
    assert main(["run", "--tests", "W6", "--reference-size", "300", "--reference-shards", "151"]) == 2
    err = _one_line(capsys)
    assert "--reference-shards 151" in err and "300" in err and "at most 150" in err


def test_the_cost_model_grows_as_the_refits_do():
    # K delete-one-shard refits: K(K-1) merges of d x d co-moments and K eigendecompositions of d x d
    t = ref.refit_seconds
    assert t(50, 20) < t(50, 40) < t(50, 80)
    assert t(50, 400) - t(50, 200) > t(50, 200) - t(50, 2)  # the merges grow as K^2
    assert t(768, 10) > 10 * t(50, 10)  # d^3: a BERT-size calibrator costs far more per refit


def test_the_time_budget_is_checked_at_its_bound():
    dim = 768
    k = 30
    budget = ref.refit_seconds(dim, k)
    assert ref.check_shards(k, dim, max_seconds=budget) == k  # at the budget: allowed
    with pytest.raises(ConfigError) as info:
        ref.check_shards(k + 1, dim, max_seconds=budget)
    msg = str(info.value)
    assert "31 delete-one-shard refits of a 768x768 calibrator" in msg and f"use at most {k} shards" in msg
    assert "about" in msg and "\n" not in msg


def test_fit_reference_checks_before_encoding(glove, no_encoding):
    from isoeat.wordsets import resolve_tests

    with pytest.raises(ConfigError, match="from 2 to"):
        ref.fit_reference(glove, resolve_tests("W6"), size=20000, shards=2000)
    with pytest.raises(ConfigError, match="refits of a 50x50 calibrator"):
        ref.fit_reference(glove, resolve_tests("W6"), size=20000, shards=100, max_seconds=1e-6)


def test_the_jackknife_precision_quoted_in_the_message():
    # the relative SD of a jackknife SE over K groups is about 1/sqrt(2(K-1)) (chi-square with K-1 df)
    assert f"{100 / math.sqrt(2 * (ref.MAX_SHARDS - 1)):.0f}%" in ref.shards_requirement()
    rng = np.random.default_rng(0)
    se = [ref.jackknife_se(rng.normal(size=ref.MAX_SHARDS)) for _ in range(400)]
    assert abs(np.std(se) / np.mean(se) - 1 / math.sqrt(2 * (ref.MAX_SHARDS - 1))) < 0.02
