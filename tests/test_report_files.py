"""Report files: names that cannot collide, CSV cells that cannot run, no symlink leaving the run folder,
bounded figure resolution, escaped HTML."""

from __future__ import annotations

import csv
import io
import os
import time

import pytest

import isoeat
from isoeat.experiments import runner as R
from isoeat.reporting import figures as F
from isoeat.reporting import html as H
from isoeat.reporting import paper_tables as PT
from isoeat.reporting.tables import records_to_csv

CONFIG = """\
name: names
models: [{spec: glove-6b-50d, label: z 1}, {spec: glove-6b-50d, label: z_1}]
tests: [W6]
calibrations: [none, {name: zca, label: c 1}, {name: zca, label: c_1, params: {eps: 0.01}}]
settings: {permutations: 100}
report: {figure_formats: [png], dpi: 50}
"""


@pytest.fixture(scope="module")
def experiment(tmp_path_factory, glove):
    base = tmp_path_factory.mktemp("names")
    (base / "exp.yaml").write_text(CONFIG, encoding="utf-8")
    R.run_experiment(base / "exp.yaml", base / "out")
    return base / "out"


# --------------------------------------------------------------------------- names
def test_safe_name_keeps_safe_labels_and_never_collides():
    assert PT.safe_name("GloVe") == "GloVe" and PT.safe_name("zca") == "zca" and PT.safe_name("W6") == "W6"
    labels = ["z 1", "z_1", "GloVe A", "GloVe_A", "a/b", "a_b", "", "..", "x", "é", "e"]
    names = [PT.safe_name(lab) for lab in labels]
    assert len(set(names)) == len(labels), names
    assert all(n and "/" not in n and not n.startswith(".") for n in names)


def test_unique_names_fold_case_and_joined_parts():
    names = PT.unique_names([("GloVe",), ("glove",), ("a-b", "c"), ("a", "b-c"), ("W6",)])
    folded = [n.casefold() for n in names]
    assert len(set(folded)) == 5 and names[4] == "W6"


def test_tables_and_figures_of_similar_labels_do_not_overwrite_each_other(experiment, tmp_path):
    pytest.importorskip("matplotlib")
    tables = sorted(p.name for p in (experiment / "tables").iterdir())
    assert len([t for t in tables if t.startswith("table_a1-") and t.endswith(".csv")]) == 2, tables
    res = R.load_experiment(experiment)
    written = F.write_figures(res, tmp_path / "figs")
    assert len(written) == len(set(written)) == len(list((tmp_path / "figs").rglob("*.png")))
    assert len([p for p in written if p.parent.name == "tests"]) == 2  # one per model


# --------------------------------------------------------------------------- CSV
def test_csv_text_cells_cannot_start_a_formula():
    text = records_to_csv([{"label": "=HYPERLINK(\"http://x\")", "w": ["+a", "b"], "n": -1.5, "k": -2,
                            "s": "-2.5", "m": "-x", "at": "@SUM(1)", "tab": "\tx", "cr": "\rx", "ok": "GloVe"}])
    row = next(csv.DictReader(io.StringIO(text, newline="")))
    assert row["label"] == "'=HYPERLINK(\"http://x\")" and row["w"] == "'+a;b" and row["m"] == "'-x"
    assert row["at"] == "'@SUM(1)" and row["tab"] == "'\tx" and "\"'\rx\"" in text
    assert row["n"] == "-1.5" and row["k"] == "-2" and row["s"] == "-2.5" and row["ok"] == "GloVe"


# --------------------------------------------------------------------------- figures
def test_dpi_is_bounded_before_anything_is_drawn(experiment, tmp_path):
    pytest.importorskip("matplotlib")
    res = R.load_experiment(experiment)
    t0 = time.perf_counter()
    for dpi in (100000, 0, 5, 2.5, True):
        with pytest.raises(isoeat.ConfigError, match="dpi"):
            F.write_figures(res, tmp_path / "figs", dpi=dpi)
    assert time.perf_counter() - t0 < 5 and not (tmp_path / "figs").exists()


def test_figure_pixel_size_is_bounded_before_anything_is_drawn(experiment, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    res = R.load_experiment(experiment)
    monkeypatch.setattr(F, "MAX_PIXELS", 200_000)
    with pytest.raises(isoeat.ConfigError, match=r"figs/fig3_effect_sizes-c_1\+[0-9a-f]{10}: .* pixels at 300 dpi"):
        F.write_figures(res, tmp_path / "figs", dpi=300)
    assert not (tmp_path / "figs").exists()


def test_sensitivity_figures_bound_dpi_first(tmp_path):
    from isoeat.reporting.sensitivity_plots import save_sensitivity_figures

    with pytest.raises(isoeat.InvalidValueError, match=r"dpi must be an integer in \[10, 1200\], got 100000"):
        save_sensitivity_figures(object(), tmp_path / "s", dpi=100000)
    assert not (tmp_path / "s").exists()


def test_no_figures_folder_when_nothing_to_draw(experiment, tmp_path):
    pytest.importorskip("matplotlib")
    res = R.load_experiment(experiment)
    res.comparisons = []
    assert F.write_figures(res, tmp_path / "figs", test_heatmaps="none") == []
    assert not (tmp_path / "figs").exists()


# --------------------------------------------------------------------------- HTML
def test_report_refuses_a_config_symlink_leaving_the_run_folder(experiment, tmp_path):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(experiment, copy)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-TOKEN")
    (copy / "config.yaml").unlink()
    os.symlink(secret, copy / "config.yaml")
    res = R.load_experiment(copy)
    with pytest.raises(isoeat.IsoeatError, match=r"config\.yaml.*symlink.*outside"):
        H.write_report(res, copy / "report.html")
    assert not (copy / "report.html").exists()
    fig = copy / "figures" / "fig.png"
    fig.parent.mkdir(exist_ok=True)
    os.symlink(secret, fig)
    (copy / "config.yaml").unlink()
    (copy / "config.yaml").write_text("name: x\n")
    with pytest.raises(isoeat.IsoeatError, match=r"fig\.png.*symlink"):
        H.render_report(res, [fig])
    inside = copy / "config-link.yaml"
    os.symlink(copy / "config.yaml", inside)  # a link inside the folder is fine
    assert "TOP-SECRET" not in H.render_report(res, [])


def test_report_escapes_manifest_text(experiment):
    res = R.load_experiment(experiment)
    res.manifest = {**(res.manifest or {}), "cells": {**(res.manifest or {}).get("cells", {}),
                                                     "ok": "<script>alert(1)</script>"}}
    page = H.render_report(res, [])
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
