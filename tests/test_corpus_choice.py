"""Which corpus ``auto`` means (the largest present offline), and the template-fallback footer at its bound."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from isoeat import IsoeatError
from isoeat.corpora import _load, offline_corpora, resolve_auto_corpus


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """A shared-data folder with two small corpora; nothing else present (no gensim sample, no env copies)."""
    for var in ("ISOEAT_WIKITEXT103", "ISOEAT_WIKITEXT2", "ISOEAT_SHARED_DATA"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ISOEAT_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(_load, "gensim_wiki_path", lambda: (_ for _ in ()).throw(ImportError("no gensim")))
    monkeypatch.setattr(_load, "_shared_roots", lambda: [tmp_path])
    en = tmp_path / "corpora" / "enwiki-2015-wikiextractor-sample" / "AA"
    en.mkdir(parents=True)
    w2 = tmp_path / "corpora" / "wikitext-2-raw-v1"
    w2.mkdir(parents=True)
    return en / "wiki_00", w2 / "wiki.test.raw"


def test_auto_is_the_largest_present(data_dir):
    enwiki, wt2 = data_dir
    enwiki.write_bytes(b"x" * 2000)
    wt2.write_bytes(b"y" * 1999)
    found = offline_corpora()
    assert [c["name"] for c in found] == ["enwiki-sample", "wikitext-2"]
    assert [c["bytes"] for c in found] == [2000, 1999]
    assert resolve_auto_corpus("auto") == "enwiki-sample" and resolve_auto_corpus("AUTO") == "enwiki-sample"
    wt2.write_bytes(b"y" * 2001)
    assert resolve_auto_corpus("auto") == "wikitext-2"
    assert resolve_auto_corpus("gensim-wiki") == "gensim-wiki"  # any other spec unchanged


def test_a_folder_without_its_files_is_not_present(data_dir):
    enwiki, wt2 = data_dir
    wt2.write_bytes(b"y" * 10)
    assert [c["name"] for c in offline_corpora()] == ["wikitext-2"]  # the enwiki folder has no wiki_* file
    wt2.unlink()
    from isoeat import IsoeatError

    with pytest.raises(IsoeatError, match="corpus auto: no corpus is present offline"):
        resolve_auto_corpus("auto")


def test_config_records_the_corpus_auto_chose(data_dir):
    from isoeat.experiments.config import parse_config

    enwiki, wt2 = data_dir
    enwiki.write_bytes(b"x" * 50)
    wt2.write_bytes(b"y" * 10)
    cfg = parse_config({"models": ["minilm"], "tests": ["W6"], "settings": {"reference": {"corpus": "auto"}}})
    assert cfg.settings.reference.corpus == "enwiki-sample"


def test_reproduce_bad_corpus_is_one_line(data_dir, capsys, monkeypatch, tmp_path):
    from isoeat.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "--models", "GloVe-6B-50d", "--corpus", "wikitext-3", "--offline", "--quick",
                 "--no-extras", "--out", "r"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("isoeat: error: --corpus wikitext-3: no such file or folder") \
        and "wikitext-2" in err[0]


# --------------------------------------------------------------------------- the fallback footer
def _results(n_tests: int, n_fallback: int):
    """``n_tests`` results of 4 sets x 4 words (16 entries each), ``n_fallback`` entries in the template."""
    from isoeat.stats.weat import weat_from_vectors

    g = np.random.default_rng(0)
    base = weat_from_vectors(*(g.standard_normal((4, 5)) for _ in range(4)), rng=0, test="W1")
    assert base.n_x + base.n_y + base.n_a + base.n_b == 16
    names = iter(f"X:w{i}" for i in range(n_fallback))
    out = []
    for t in range(n_tests):
        take = [next(names) for _ in range(min(16, n_fallback - 16 * t))] if n_fallback > 16 * t else []
        out.append(dataclasses.replace(base, test=f"W{t + 1}", fallback=tuple(take)))
    return out


@pytest.mark.parametrize("k, warned", [(16, False), (17, True)])  # 10% of 160 entries is 16: strictly above warns
def test_fallback_warning_at_its_bound(k, warned):
    from isoeat.experiments.compare import Comparison, ComparisonRow, too_many_fallbacks
    from isoeat.reporting.tables import comparison_table, weat_table

    assert too_many_fallbacks(k, 160) is warned
    res = _results(10, k)
    rows = tuple(ComparisonRow(test=r.test, bias_type="", raw=r, calibrated=r, change="Stable", delta_d=0.0,
                               large_shift=False, sign_reversal=False) for r in res)
    for text in (comparison_table(Comparison(model="m", calibration="zca", alpha=0.05, rows=rows,
                                             calibrator_metadata={}, contexts=True)),
                 weat_table(res, contexts=True)):
        lines = text.splitlines()
        assert f"Template fallback: {k} of 160 stimulus words ({100 * k / 160:.0f}%) had no corpus context" \
            in "\n".join(lines)
        assert any(ln.startswith("! more than 10% of the stimulus words fell back") for ln in lines) is warned


def test_contextual_tables_print_zero_and_static_tables_print_nothing():
    from isoeat.reporting.tables import weat_table

    res = _results(2, 0)
    assert "Template fallback: 0 of 32 stimulus words (0%) had no corpus context" in weat_table(res, contexts=True)
    assert "Template fallback" not in weat_table(res)


def test_auto_in_model_options_and_on_the_command_line_is_recorded_resolved(data_dir):
    """Cells are keyed by the corpus ``auto`` chose, so a bigger corpus added later never reuses them."""
    import argparse

    from isoeat.cliargs import model_options
    from isoeat.experiments.config import parse_config

    enwiki, wt2 = data_dir
    enwiki.write_bytes(b"x" * 5)
    wt2.write_bytes(b"y" * 50)
    cfg = parse_config({"models": [{"spec": "minilm", "options": {"corpus": "auto"}}], "tests": ["W6"]})
    assert cfg.models[0].options["corpus"] == "wikitext-2"
    args = argparse.Namespace(corpus="auto", layer=None, contexts_per_word=None, missing=None, reference_unit=None,
                              device=None, cache_dir=None)
    assert model_options(args)["corpus"] == "wikitext-2"


def test_folder_fallback_lines_name_the_model_and_skip_static_models():
    from types import SimpleNamespace

    from isoeat.reporting.tables import folder_fallback_lines

    def rec(model, cal, fb):
        return {"model": model, "calibration": cal, "test": "W1", "fallback": fb, "n_x": 5, "n_y": 5, "n_a": 5,
                "n_b": 5}

    res = SimpleNamespace(models=[{"label": "ctx", "family": "contextualized"}, {"label": "vec", "family": "static"}],
                          weat=[rec("ctx", "none", ["X:a", "A:b", "B:c"]), rec("ctx", "zca", ["X:a", "A:b", "B:c"]),
                                rec("vec", "none", [])])
    lines = folder_fallback_lines(res, "ctx")  # 3 of 20 entries = 15% > 10%: counted once (the raw space), warned
    assert lines[0].startswith("ctx: Template fallback: 3 of 20 stimulus words (15%)")
    assert lines[1].startswith("! ctx: more than 10% of the stimulus words fell back")
    assert len(lines) == 2 and folder_fallback_lines(res, "vec") == []


@pytest.mark.parametrize("name, data", [
    ("wiki.train.raw.gz", "truncated-gz"), ("wiki.train.raw.bz2", b"BZh9 not bzip2"), ("wiki.train.raw.xz", b"no xz"),
    ("wiki.train.raw.gz", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage-deflate"),
])
def test_a_corrupt_compressed_corpus_named_by_a_variable_is_one_line(data_dir, tmp_path, monkeypatch, capsys, name,
                                                                     data):
    """A truncated or corrupt compressed file in the folder a variable names: a one-line error naming the
    variable, never a crash, and never another corpus picked instead (issue 31)."""
    import gzip

    from isoeat.cli import main

    enwiki, _ = data_dir
    enwiki.write_bytes(b"x" * 100)
    wt103 = tmp_path / "wt103"
    wt103.mkdir()
    if data == "truncated-gz":
        full = gzip.compress(b"hello world " * 10000)
        data = full[: len(full) // 2]
    (wt103 / name).write_bytes(data)
    monkeypatch.setenv("ISOEAT_WIKITEXT103", str(wt103))
    for read in (offline_corpora, lambda: resolve_auto_corpus("auto")):
        with pytest.raises(IsoeatError, match=r"\$ISOEAT_WIKITEXT103=.*wt103: no readable wikitext-103 text"):
            read()
    assert main(["reproduce", "--list", "--offline"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("isoeat: error: ") and "$ISOEAT_WIKITEXT103=" in err and err.count("\n") == 1


@pytest.mark.parametrize("k, n, shown", [(21, 200, "10.5%"), (201, 2000, "10.1%"), (2001, 20000, "10.01%"),
                                         (20, 200, "10%"), (19, 200, "10%"), (24, 200, "12%")])
def test_a_warned_share_is_never_printed_as_the_bound(k, n, shown):
    """21 of 200 is 10.5% > 10%: warned; printed '(10%)' (round half to even) the warning read as a contradiction."""
    import types

    from isoeat.reporting.tables import fallback_footer

    res = [types.SimpleNamespace(test="W1", n_x=n, n_y=0, n_a=0, n_b=0, fallback=tuple(f"X:w{i}" for i in range(k)))]
    lines = fallback_footer(res, contexts=True)
    assert lines[0].startswith(f"Template fallback: {k} of {n} stimulus words ({shown}) had no corpus context")
    assert any(ln.startswith("! more than 10%") for ln in lines) is (k * 10 > n)
