"""Sensitivity analysis of calibrated WEAT (ε, reference size, reference corpus): API, CLI, figures, bad input."""

from __future__ import annotations

import csv
import json
import sys
import warnings

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, IsoeatFileNotFoundError, IsoeatWarning, MissingDependencyError, UnknownNameError
from isoeat.cli import main
from isoeat.experiments.sensitivity import (
    DEFAULT_EPS_GRID,
    DEFAULT_REFERENCE_SIZES,
    SensitivityResult,
    sensitivity_analysis,
)

SMALL = dict(eps=(1e-4, 1e-2), reference_sizes=(2_000, 20_000), repeats=2)


@pytest.fixture(scope="module")
def default_sweep(glove):
    """The default grid on all ten tests, one draw per setting (repeats are checked on `small`)."""
    return sensitivity_analysis(glove, repeats=1, rng=7)


@pytest.fixture(scope="module")
def small(glove):
    return sensitivity_analysis(glove, ["W6", "W9"], rng=3, **SMALL)


def test_one_row_per_test_setting_repeat(default_sweep):
    res = default_sweep
    assert isinstance(res, SensitivityResult)
    n_settings = len(DEFAULT_EPS_GRID) + len(DEFAULT_REFERENCE_SIZES)
    assert len(res.rows) == 10 * (2 + n_settings * 1)
    keys = [(r.test, r.kind, r.setting, r.repeat) for r in res.rows]
    assert len(set(keys)) == len(keys)
    for t in (f"W{i}" for i in range(1, 11)):
        mine = [r for r in res.rows if r.test == t]
        assert [r.kind for r in mine[:2]] == ["raw", "default"]
        assert sorted({r.setting for r in mine if r.kind == "eps"}, key=float) == [f"{e:g}" for e in DEFAULT_EPS_GRID]
        assert {r.n_reference for r in mine if r.kind == "reference_size"} == set(DEFAULT_REFERENCE_SIZES)
        assert all(r.value == (r.eps if r.kind == "eps" else r.n_requested) for r in mine
                   if r.kind in ("eps", "reference_size"))
        assert {r.repeat for r in mine if r.kind in ("eps", "reference_size")} == {0}
    assert [s.test for s in res.summary] == [f"W{i}" for i in range(1, 11)]
    assert all(s.verdict in ("robust", "fragile") and s.n_cells == n_settings for s in res.summary)
    assert "robust when" in res.rule and "90%" in res.rule and "0.5" in res.rule
    df = res.to_frame()
    assert len(df) == len(res.rows) and {"test", "kind", "setting", "repeat", "effect_size", "p_value", "p_method",
                                         "significant", "agrees_with_default", "seed", "reference_seed"} <= set(df)
    assert len(res.summary_frame()) == 10
    json.dumps(res.to_dict(), default=float)


def test_default_row_is_the_paper_setting(default_sweep, glove, glove_zca):
    # The default equals `isoeat run` (ZCA, eps 1e-3, top 100,000 words); raw equals the uncalibrated WEAT.
    for t in ("W6", "W9"):
        rows = {r.kind: r for r in default_sweep.rows if r.test == t and r.kind in ("raw", "default")}
        assert rows["default"].effect_size == isoeat.weat(glove, t, calibration=glove_zca, rng=0).effect_size
        assert rows["raw"].effect_size == isoeat.weat(glove, t, rng=0).effect_size
        assert rows["default"].eps == 1e-3 and rows["default"].n_reference == 100_000
    assert default_sweep.calibrator_metadata["n"] == 100_000


def test_summary_statistics_follow_the_rows(default_sweep):
    res = default_sweep
    for s in res.summary:
        mine = [r for r in res.rows if r.test == s.test]
        dflt = next(r for r in mine if r.kind == "default")
        sweep = [r for r in mine if r.kind not in ("raw", "default")]
        d = np.array([r.effect_size for r in sweep])
        assert s.d_min == d.min() and s.d_max == d.max()
        assert s.d_sd == pytest.approx(d.std(ddof=1))
        assert s.max_abs_shift == pytest.approx(np.abs(d - dflt.effect_size).max())
        agree = [r.significant == dflt.significant for r in sweep]
        assert [r.agrees_with_default for r in sweep] == agree
        assert s.share_agree == pytest.approx(np.mean(agree))
        robust = s.share_agree >= 0.9 and s.max_abs_shift <= 0.5
        assert s.verdict == ("robust" if robust else "fragile")
        assert np.isnan(s.share_agree_reference) and np.isnan(s.share_agree_calibration)


def test_reproducible_for_a_seed(glove, small):
    from isoeat.reporting.tables import to_json

    again = sensitivity_analysis(glove, ["W6", "W9"], rng=3, **SMALL)
    assert to_json(again.records()) == to_json(small.records())
    assert to_json(again.summary_records()) == to_json(small.summary_records())
    other = sensitivity_analysis(glove, ["W6", "W9"], rng=4, **SMALL)
    drawn = [(a.effect_size, b.effect_size) for a, b in zip(small.rows, other.rows) if a.kind == "reference_size"]
    assert any(x != y for x, y in drawn)
    # seeds are recorded: one permutation seed per test, one draw seed per repeat
    w6 = [r for r in small.rows if r.test == "W6"]
    assert len({r.seed for r in w6}) == 1
    assert len({r.reference_seed for r in w6 if r.kind != "raw" and r.kind != "default"}) == 2
    assert small.p_options["test_seeds"]["W6"] == w6[0].seed


def test_repeats_share_one_draw_across_settings(small):
    # within a repeat, the eps sweep reuses one reference sample (common random numbers)
    rows = [r for r in small.rows if r.test == "W6" and r.kind == "eps"]
    for rep in (0, 1):
        assert len({r.reference_seed for r in rows if r.repeat == rep}) == 1
        assert {r.n_reference for r in rows if r.repeat == rep} == {100_000}


def test_draw_top_and_subset_reproduce_the_default(glove):
    with_top = sensitivity_analysis(glove, ["W6"], eps=(1e-3,), reference_sizes=(100_000,), repeats=3, draw="fixed")
    assert any("deterministic" in n for n in with_top.notes) and with_top.sweep["repeats"] == 1
    d0 = next(r.effect_size for r in with_top.rows if r.kind == "default")
    assert all(r.effect_size == d0 for r in with_top.rows if r.kind in ("eps", "reference_size"))
    sub = sensitivity_analysis(glove, ["W6"], eps=None, reference_sizes=(100_000,), repeats=2, draw="subset")
    for r in sub.rows:
        if r.kind == "reference_size":  # a subset of the whole pool is the pool: same covariance
            assert r.effect_size == pytest.approx(d0, abs=1e-9)


def test_relative_eps_scales_by_the_mean_eigenvalue(glove, glove_zca):
    res = sensitivity_analysis(glove, ["W6"], eps=(1e-2,), eps_mode="relative", reference_sizes=None, draw="fixed")
    (row,) = [r for r in res.rows if r.kind == "eps"]
    assert row.eps == 1e-2 and row.eps_mode == "relative"
    assert row.eps_effective == pytest.approx(1e-2 * glove_zca.eigenvalues_.mean(), rel=1e-9)
    zca = isoeat.ZCAWhitener(eps=row.eps_effective).fit(glove.reference_vectors(100_000)[0])
    assert row.effect_size == pytest.approx(isoeat.weat(glove, "W6", calibration=zca).effect_size, abs=1e-12)


def test_reference_and_calibration_sweeps(glove, shared_data):
    text = shared_data / "corpora" / "wikitext-2-raw-v1" / "wiki.valid.raw"
    with pytest.warns(IsoeatWarning, match="capped") as rec:
        res = sensitivity_analysis(glove, ["W6", "W8"], eps=None, reference_sizes=None, repeats=2,
                                   references=("top", str(text)), calibrations=("center", "abtt"))
    assert sum("capped" in str(w.message) for w in rec) == 1  # warned once
    assert any("capped" in n and "wiki.valid.raw" in n for n in res.notes)
    kinds = {(r.kind, r.setting) for r in res.rows if r.test == "W6"}
    assert {("reference", "top"), ("reference", str(text)), ("calibration", "zca"), ("calibration", "center"),
            ("calibration", "abtt")} <= kinds
    wiki = [r for r in res.rows if r.setting == str(text)]
    assert all(r.n_reference == res.sweep["pool_sizes"][str(text)] < 100_000 for r in wiki)
    s = res.summary[0]
    assert 0 <= s.share_agree_reference <= 1 and 0 <= s.share_agree_calibration <= 1 and np.isnan(s.share_agree_eps)


def test_sizes_beyond_the_vocabulary_are_capped_with_one_warning(glove):
    extra = [w for w in isoeat.get_test("W6").sets()["Y"].words + isoeat.get_test("W6").sets()["X"].words
             + isoeat.get_test("W6").sets()["A"].words + isoeat.get_test("W6").sets()["B"].words]
    rows = [glove.lookup([w]) for w in extra]
    words = list(glove.words[:2900]) + [w for w, lk in zip(extra, rows) if lk.found and w not in glove.words[:2900]]
    vecs = np.vstack([np.asarray(glove.vectors[:2900])] + [lk.vectors for w, lk in zip(extra, rows)
                                                              if lk.found and w not in glove.words[:2900]])
    tiny = isoeat.StaticVectors(words, vecs, name="tiny")
    m = len(words)
    with pytest.warns(IsoeatWarning, match=f"capped at {m:,}") as rec:
        res = sensitivity_analysis(tiny, ["W6"], eps=None, reference_sizes=(1000, 5000, 8000), repeats=1,
                                   n_reference=2000)
    assert len([w for w in rec if "capped" in str(w.message)]) == 1
    assert [r.n_reference for r in res.rows if r.kind == "reference_size"] == [1000, m, m]
    assert [r.n_requested for r in res.rows if r.kind == "reference_size"] == [1000, 5000, 8000]


def test_calibration_without_eps_skips_the_eps_sweep(glove):
    res = sensitivity_analysis(glove, ["W6"], calibration="abtt", calibration_params={"n_components": 2},
                               reference_sizes=(5000,), repeats=1)
    assert any("no ε" in n for n in res.notes)
    assert {r.kind for r in res.rows} == {"raw", "default", "reference_size"}
    assert res.calibrator_metadata["params"] == {"n_components": 2}


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(eps=(1e-3, 0.0)), ConfigError, "eps must be a finite number > 0, got 0.0"),
    (dict(eps=(-1e-3,)), ConfigError, "eps"),
    (dict(eps=None, reference_sizes=None), ConfigError, "empty sweep"),
    (dict(eps=(), reference_sizes=(), references=(), calibrations=()), ConfigError, "empty sweep"),
    (dict(reference_sizes=(1,)), ConfigError, "reference_sizes.*>= 2"),
    (dict(repeats=0), ConfigError, "repeats"),
    (dict(draw="jackknife"), ConfigError, "draw must be one of auto, bootstrap, subset, encoder, fixed"),
    (dict(eps_mode="scaled"), ConfigError, "eps_mode"),
    (dict(references=("/no/such/corpus.txt",)), IsoeatFileNotFoundError, "no such reference text"),
    (dict(calibrations=("zcaa",)), UnknownNameError, "did you mean zca"),
    (dict(calibration_params={"eps": 1e-2}), ConfigError, "default_eps"),
    (dict(alpha=1.5), ConfigError, "alpha"),
])
def test_bad_input(glove, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sensitivity_analysis(glove, ["W6"], **kwargs)


def test_abtt_components_at_least_dimension_is_refused(glove):
    with pytest.raises(ConfigError, match="n_components"):
        sensitivity_analysis(glove, ["W6"], calibration="abtt", calibration_params={"n_components": 50},
                             reference_sizes=(5000,), repeats=1)


def test_cli_writes_rows_summary_and_figures(tmp_path, capsys, glove):
    pytest.importorskip("matplotlib")
    out = tmp_path / "sens"
    rc = main(["sensitivity", "--tests", "W6,W9", "--eps", "1e-4,1e-2", "--reference-sizes", "2000,20_000",
               "--repeats", "2", "--seed", "3", "--out", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert text.startswith("glove-6b-50d: sensitivity of zca-calibrated WEAT; default eps=0.001, n=100,000")
    table = text.split("\n\n")[1].splitlines()
    assert table[0].split()[:4] == ["ID", "Bias", "d_raw", "p_raw"]
    assert [ln.split()[0] for ln in table[2:]] == ["W6", "W9"]
    assert "Rule: robust when" in text
    with open(out / "sensitivity.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * (2 + 4 * 2)
    assert json.loads((out / "sensitivity-summary.json").read_text())["summary"][0]["test"] == "W6"
    assert len(json.loads((out / "sensitivity_by_test.json").read_text())) == 2
    for stem in ("sensitivity_eps", "sensitivity_reference_size"):
        for ext in ("png", "pdf"):
            assert (out / f"{stem}.{ext}").stat().st_size > 5000
    assert (out / "sensitivity_eps.png").read_bytes()[:4] == b"\x89PNG"
    assert not list(out.glob(".*.tmp"))


def test_cli_csv_matches_api(capsys, glove, small):
    rc = main(["sensitivity", "--tests", "W6,W9", "--eps", "1e-4,1e-2", "--reference-sizes", "2000,20000",
               "--repeats", "2", "--seed", "3", "--format", "csv"])
    assert rc == 0
    rows = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    assert [float(r["effect_size"]) for r in rows] == pytest.approx([r.effect_size for r in small.rows], abs=1e-12)


@pytest.mark.parametrize("args,match", [
    (["--eps", "0"], "--eps: ε must be a finite number > 0, got '0'"),
    (["--eps", "1e-3,-1e-2"], "--eps: ε must be"),
    (["--eps", "1e-3,abc"], "--eps: 'abc' is not a number"),
    (["--eps", ""], "--eps: empty list"),
    (["--eps", "1e-3,,1e-2"], "--eps: empty list or empty item"),
    (["--reference-sizes", "1000,lots"], "--reference-sizes: 'lots' is not a whole number"),
    (["--reference-sizes", "1.5"], "--reference-sizes: sizes must be whole numbers"),
    (["--eps", "none", "--reference-sizes", "none"], "empty sweep"),
    (["--reference", "/no/such/file.txt"], "no such reference text"),
    (["--calibrations", "abt"], "unknown calibration 'abt'"),
    (["--calibration", "abtt", "--calibration-param", "components=2"], "has no parameter 'components'"),
    (["--calibration-param", "eps=1"], "--default-eps"),
])
def test_cli_errors_are_one_line(capsys, glove, args, match):
    assert main(["sensitivity", "--tests", "W6", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1 and match in err
    assert "Traceback" not in err


def test_plots_without_matplotlib_name_the_extra(monkeypatch, small, tmp_path, capsys):
    from isoeat.reporting import sensitivity_plots

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "isoeat\[plot\]"'):
        sensitivity_plots.plot_sensitivity(small, "eps")
    rc = main(["sensitivity", "--tests", "W6", "--eps", "1e-3", "--reference-sizes", "none",
               "--out", str(tmp_path / "x")])
    assert rc == 2 and 'pip install "isoeat[plot]"' in capsys.readouterr().err
    assert not (tmp_path / "x").exists()  # refused before any work


def test_plot_objects(small):
    pytest.importorskip("matplotlib")
    from isoeat.reporting.sensitivity_plots import plot_sensitivity

    fig = plot_sensitivity(small, "eps")
    (ax,) = fig.axes
    assert ax.get_xscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["W6 (Gender)", "W9 (Health)"]
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == [1e-4, 1e-2]
    w6 = [r.effect_size for r in small.rows if r.test == "W6" and r.kind == "eps" and r.setting == "0.0001"]
    assert line.get_ydata()[0] == pytest.approx(np.mean(w6))
    with pytest.raises(ConfigError, match="no 'reference' sweep"):
        plot_sensitivity(small, "reference")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plot_sensitivity(small.records(), "reference_size")  # plain records work too


class _Contextual:
    """A stand-in contextual encoder: re-samples 'sentences' by seed and returns two vectors per sentence."""

    def __init__(self, glove):
        self.glove, self.name, self.dim, self.fingerprint = glove, "fake-contextual", glove.dim, "fake"
        self.calls = []

    def lookup(self, words):
        return self.glove.lookup(words)

    def reference_batches(self, n, **kw):  # contextual encoders stream (fit_calibrator uses this)
        X, desc = self.reference_vectors(n, **kw)
        return iter([X[:1000], X[1000:]]), desc

    def reference_vectors(self, n, *, seed=None, text=None, **_):
        self.calls.append((n, seed))
        g = np.random.default_rng(0 if seed is None else seed)
        rows = g.choice(50_000, size=2 * n, replace=False)
        return np.asarray(self.glove.vectors[np.sort(rows)], dtype=np.float64), f"{n} sentences (seed {seed})"


def test_encoder_draw_resamples_sentences(glove):
    enc = _Contextual(glove)
    res = sensitivity_analysis(enc, ["W6"], eps=(1e-3,), reference_sizes=(1000,), repeats=2, n_reference=3000)
    assert res.sweep["draw"] == "encoder" and not res.sweep["pool_sizes"]
    swept = [r for r in res.rows if r.kind in ("eps", "reference_size")]
    assert {(r.kind, r.repeat, r.n_reference) for r in swept} == {
        ("eps", 0, 6000), ("eps", 1, 6000), ("reference_size", 0, 2000), ("reference_size", 1, 2000)}
    seeds = {r.repeat: r.reference_seed for r in swept}
    assert len(set(seeds.values())) == 2
    assert enc.calls[0] == (3000, None)  # the default: the encoder's own deterministic sample, streamed
    assert {(1000, seeds[0]), (1000, seeds[1]), (3000, seeds[0]), (3000, seeds[1])} <= set(enc.calls)
    assert len(enc.calls) == 5  # the default + one call per (size, repeat), shared across settings
    d = [r.effect_size for r in swept if r.kind == "eps"]
    assert d[0] != d[1]
