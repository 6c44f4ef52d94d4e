"""Folders written by another format version: refused by name, never rewritten; older results upgraded aloud.

The one-line refusals (a newer, unversioned or truncated ``experiment.json``, a newer manifest or cell) are
cases of the robustness catalogue (``tests/robustness/test_bad_input_trust.py``); here: what is read and
said beyond them. An experiment folder holds three kinds of versioned records: ``experiment.json``
(``format_version``), the cells and ``manifest.json``. This isoeat reads the
versions in :mod:`isoeat.experiments._formats`; a record of a newer version is
refused by ``run`` and ``report`` with one line naming the file, the version
found and the version read, and no byte of the folder changes. A cell of an
older format is recomputed by ``run`` with one line saying so, and listed (not
used) by ``report``. A manifest written by another isoeat version is named.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from isoeat import __version__
from isoeat.cli import main
from isoeat.experiments import _formats
from robustness.test_bad_input_trust import edit_record  # the record editor of the catalogue's folder cases

CONFIG = "name: fmt\nmodels: [glove-6b-50d]\ntests: [W6, W7]\ncalibrations: [none, zca]\n" \
         "settings: {permutations: 500, reference: {size: 2000}}\n"


@pytest.fixture(scope="module")
def finished(tmp_path_factory, glove):
    d = tmp_path_factory.mktemp("fmt")
    (d / "c.yaml").write_text(CONFIG)
    assert main(["run", str(d / "c.yaml"), "--out", str(d / "exp"), "--no-progress"]) == 0
    return d


@pytest.fixture
def folder(finished, tmp_path):
    shutil.copy(finished / "c.yaml", tmp_path / "c.yaml")
    shutil.copytree(finished / "exp", tmp_path / "exp")
    return tmp_path


def _snapshot(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file() and p.name != ".isoeat.lock"}


def _cell(out: Path, cal: str = "zca", test: str = "W7") -> Path:
    return out / "cells" / "glove-6b-50d" / cal / f"{test}.json"


def _one_line(err: str) -> str:
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_the_versions_read_are_the_versions_written(folder):
    out = folder / "exp"
    assert json.loads((out / "experiment.json").read_text())["format_version"] == _formats.EXPERIMENT_FORMAT
    assert json.loads((out / "manifest.json").read_text())["format_version"] == _formats.MANIFEST_FORMAT
    assert json.loads(_cell(out).read_text())["format_version"] == _formats.CELL_FORMAT


@pytest.mark.filterwarnings("always::isoeat._errors.IsoeatWarning")  # the CLI prints them as one line
def test_a_manifest_of_another_isoeat_version_is_named(folder, capsys):
    out = folder / "exp"
    edit_record(out / "manifest.json", isoeat_version="0.0.7")
    assert main(["report", str(out), "--no-figures"]) == 0
    err = capsys.readouterr().err
    assert err.count("0.0.7") == 1 and f"isoeat {__version__}" in err and "manifest.json" in err
    assert main(["run", str(folder / "c.yaml"), "--out", str(out), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "0.0.7" in err and f"isoeat {__version__}" in err
    runs = json.loads((out / "manifest.json").read_text())["runs"]
    assert runs[-1]["isoeat_version"] == __version__  # each run records the version that made it


@pytest.mark.parametrize("sealed", [True, False])
def test_a_newer_cell_is_refused_by_report_and_run_and_never_rewritten(folder, capsys, sealed):
    out = folder / "exp"
    edit_record(_cell(out), sealed=sealed, format_version=_formats.CELL_FORMAT + 1)
    before = _snapshot(out)
    assert main(["run", str(folder / "c.yaml"), "--out", str(out)]) == 2
    err = _one_line(capsys.readouterr().err)
    assert str(_cell(out)) in err and f"cell format {_formats.CELL_FORMAT + 1}" in err
    assert f"reads cell format {_formats.CELL_FORMAT}" in err
    assert _snapshot(out) == before
    # report refuses it as run does (issue 40 #3): the tables and failures.json are not rewritten without its row
    assert main(["report", str(out), "--no-figures"]) == 2
    assert _one_line(capsys.readouterr().err) == err
    assert _snapshot(out) == before


@pytest.mark.filterwarnings("always::isoeat._errors.IsoeatWarning")
def test_older_cells_are_recomputed_with_one_line(folder, capsys):
    out = folder / "exp"
    for cal in ("none", "zca"):
        edit_record(_cell(out, cal), sealed=True, format_version=_formats.CELL_FORMAT - 1)
    assert main(["report", str(out), "--no-figures"]) == 0
    captured = capsys.readouterr()
    assert "2 WEAT cells" in captured.out
    assert sum(f"cell format {_formats.CELL_FORMAT - 1}" in ln for ln in captured.err.splitlines()) == 1
    assert main(["run", str(folder / "c.yaml"), "--out", str(out), "--no-progress"]) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "older" in ln]
    assert len(lines) == 1 and "2 cell(s)" in lines[0] and f"format {_formats.CELL_FORMAT}" in lines[0], lines
    for cal in ("none", "zca"):
        assert json.loads(_cell(out, cal).read_text())["format_version"] == _formats.CELL_FORMAT


@pytest.mark.filterwarnings("always::isoeat._errors.IsoeatWarning")
def test_a_damaged_manifest_is_said_not_skipped(folder, capsys):
    out = folder / "exp"
    p = out / "manifest.json"
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
    assert main(["report", str(out), "--no-figures"]) == 0
    said = [ln for ln in capsys.readouterr().err.splitlines() if "manifest.json: damaged (not valid JSON" in ln]
    assert len(said) == 1 and said[0].startswith("isoeat: note: "), said
    assert main(["run", str(folder / "c.yaml"), "--out", str(out), "--no-progress"]) == 0
    said = [ln for ln in capsys.readouterr().err.splitlines() if "manifest.json: damaged" in ln]
    assert len(said) == 1 and "earlier runs" in said[0], said
