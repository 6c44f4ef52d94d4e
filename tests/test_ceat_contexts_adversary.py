"""Adversary of CEAT's contexts interval (issue 45, item 3): few contexts per word, words with very different
context counts, seeds, replicate counts, and the records with the interval off.

The truth of the spread is simulated here: fresh context samples from a known model, each run through the
published procedure alone (``bootstrap=0``), and the SD of their CES taken with numpy; the interval's SE
must match it, not only at 20 contexts per word (benchmarks/ceat_coverage.py) but at 3.
"""

from __future__ import annotations

import numpy as np
import pytest

import isoeat.stats.ceat_contexts as cc
from isoeat.stats.ceat import ceat_from_contexts

ROLES = ("X", "Y", "A", "B")


def _model(g: np.random.Generator, dim: int = 8, nw: int = 4) -> dict:
    base = g.normal(size=dim) * 0.5
    return {r: base + s * 0.4 * np.eye(dim)[0] + 0.6 * g.normal(size=(nw, dim)) for r, s in zip(ROLES, (1, -1, 1, -1))}


def _sample(mu: dict, n_ctx, g: np.random.Generator) -> dict:
    sizes = n_ctx if isinstance(n_ctx, dict) else {r: [n_ctx] * len(mu[r]) for r in ROLES}
    return {r: [m + g.normal(size=(k, m.size)) for m, k in zip(mu[r], sizes[r])] for r in ROLES}


def test_se_is_not_below_the_spread_over_context_samples_at_two_contexts_per_word() -> None:
    """2 contexts per word, the model of benchmarks/ceat_coverage.py (dim 32, a shared direction, 4 words a set):
    the plain bootstrap's SE was 0.80 of the true spread (a resample of n has (n - 1)/n of the sample's variance:
    coverage measured 0.875 at 2, 0.900 at 3 contexts per word, benchmarks/ceat_coverage.py --quick --contexts
    2|3); the interval must not be narrower than the truth (ratio >= 0.9: the SD of 150 samples is within ~6%)."""
    import math

    g = np.random.default_rng(4545)
    dim = 32
    base = 1.5 * g.normal(size=dim) / math.sqrt(dim) * 2.0
    mu = {
        r: base + s * 0.5 * np.eye(dim)[0] + 0.6 * g.normal(size=(4, dim)) / math.sqrt(dim) * 2.0
        for r, s in zip(ROLES, (1, -1, 1, -1))
    }
    ces, se = [], []
    for _ in range(150):
        ctx = {r: [m + g.normal(size=(2, dim)) / math.sqrt(dim) * 2.0 for m in mu[r]] for r in ROLES}
        (r,) = ceat_from_contexts(ctx, n_draws=100, rng=g, bootstrap=100)
        ces.append(r.meta.ces)
        se.append(r.contexts.se)
    ratio = float(np.mean(se) / np.std(ces, ddof=1))
    assert 0.9 <= ratio <= 1.5, ratio


def test_very_different_context_counts_each_word_resampled_from_its_own() -> None:
    """One word with 200 contexts beside words with 2: replicate picks stay within each word's own contexts,
    and a word's picks within one replicate come from at most n - 1 of its contexts (the resample's size)."""
    g = np.random.default_rng(7)
    sizes = {"X": [200, 2], "Y": [2, 5], "A": [2, 2], "B": [1, 3]}
    for _ in range(200):
        p = cc._replicate(sizes, 400, g)
        for r in ROLES:
            for j, n in enumerate(sizes[r]):
                col = p[r][:, j]
                assert col.min() >= 0 and col.max() < n
                assert len(np.unique(col)) <= max(n - 1, 1)


def test_same_seed_same_interval_and_seed_changes_it() -> None:
    g = np.random.default_rng(1)
    ctx = _sample(_model(g), 5, g)
    (a,) = ceat_from_contexts(ctx, n_draws=50, rng=3, bootstrap=50)
    (b,) = ceat_from_contexts(ctx, n_draws=50, rng=3, bootstrap=50)
    (c,) = ceat_from_contexts(ctx, n_draws=50, rng=4, bootstrap=50)
    assert a.contexts == b.contexts and a.contexts != c.contexts


def test_records_with_the_interval_off_have_every_field_empty() -> None:
    g = np.random.default_rng(2)
    (r,) = ceat_from_contexts(_sample(_model(g), 4, g), n_draws=20, rng=0, bootstrap=0)
    rec = r.records()[0]
    keys = [k for k in rec if k.startswith("contexts_")]
    assert sorted(keys) == sorted(f"contexts_{k}" for k in ("low", "high", "level", "se", "n_boot", "method"))
    assert all(rec[k] is None for k in keys)


def test_huge_bootstrap_is_refused_before_any_work() -> None:
    g = np.random.default_rng(3)
    with pytest.raises(Exception, match="budget"):
        ceat_from_contexts(_sample(_model(g), 2, g), n_draws=1000, rng=0, bootstrap=10**9)


def test_table_names_the_words_whose_single_context_the_interval_cannot_cover() -> None:
    """A word with one context is the same in every replicate: the interval is silent about its sampling, so
    the table says which words those are (and says nothing when every word has two or more)."""
    from isoeat.commands.ceat import _table

    g = np.random.default_rng(5)
    mu = _model(g)
    sizes = {r: [4] * 4 for r in ROLES}
    sizes["A"] = [1, 4, 4, 1]
    words = {r: [f"{r.lower()}{i}" for i in range(4)] for r in ROLES}
    rs = ceat_from_contexts(_sample(mu, sizes, g), n_draws=30, rng=0, bootstrap=20, test="T", words=words)
    line = [ln for ln in _table(rs).splitlines() if "with one context" in ln]
    assert line == ["95% CI (contexts) leaves out the sampling of 2 word(s) with one context: a0, a3."]
    rs = ceat_from_contexts(_sample(mu, 2, g), n_draws=30, rng=0, bootstrap=20, test="T", words=words)
    assert "with one context" not in _table(rs)


@pytest.fixture(scope="module")
def tiny_cli(tmp_path_factory):
    """tests/test_ceat_contextual.py's tiny BERT, a 40-sentence corpus and a 2+2+2+2 test file."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from test_transformer import CORPUS, build_tiny

    tmp = tmp_path_factory.mktemp("adv-ceat")
    bert = build_tiny(tmp / "bert", "bert-uncased")
    corpus_file = tmp / "corpus.txt"
    corpus_file.write_text(
        "\n".join(f"{s[:-1]} on day {n}." for n in "one two three four five six seven eight".split() for s in CORPUS)
        + "\n"
    )
    test_file = tmp / "tiny.yaml"
    test_file.write_text(
        "id: tiny\nbias_type: custom\nX: [quokka, fox]\nY: [doctor, nurse]\n"
        "A: [garden, flowers]\nB: [hospital, violin]\n"
    )
    return [
        "--model",
        f"hf:{bert}",
        "--test",
        str(test_file),
        "--corpus",
        str(corpus_file),
        "--device",
        "cpu",
        "--no-cache",
        "--reference-size",
        "40",
        "--seed",
        "2",
    ]


@pytest.mark.parametrize("command, extra", [("ceat", ["--draws", "20", "--bootstrap", "10"]), ("seat", [])])
def test_seat_and_ceat_mark_a_reduced_reference(tiny_cli, command, extra, capsys) -> None:
    """A 40-sentence reference (the corpus holds no more) is a reduced protocol in every calibrated record and
    under the table (the paper: 100,000); the raw space fits nothing and stays 'paper'."""
    import json

    from isoeat.cli import main

    assert main([command, *tiny_cli, *extra, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    marks = {r["calibration"]: r["protocol"] for r in rows}
    assert marks["none"] == "paper"
    assert marks["zca"].startswith("reduced: reference 40 ") and "the paper: 100,000" in marks["zca"]
    assert main([command, *tiny_cli, *extra]) == 0
    out = capsys.readouterr().out
    assert "! Reduced protocol, not the paper's: reference 40 " in out


def test_replicates_left_out_are_not_counted_as_used() -> None:
    """A replicate whose CES is undefined (NaN) is left out of the interval; the count the table prints ("interval
    of B bootstrap replicates") must be the replicates the interval was taken over, not those asked for."""
    g = np.random.default_rng(6)
    ctx = _sample(_model(g), 4, g)
    calls = iter(range(10**6))

    def every_other(s: np.ndarray, n_x: int) -> float:
        return float(s.mean()) if next(calls) % 2 else float("nan")

    (c,) = cc.context_bootstrap([ctx], n_draws=10, n_boot=40, statistic=every_other, rng=0)
    assert c.n_boot == 20
