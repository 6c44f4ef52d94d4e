"""Folders written by another format version: refused by name, never rewritten; older results upgraded aloud.

An experiment folder holds three kinds of versioned records: ``experiment.json``
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
from isoeat._records import seal
from isoeat.cli import main
from isoeat.experiments import _formats

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


def _edit(p: Path, sealed: bool = False, **changes) -> None:
    rec = json.loads(p.read_text())
    rec.update(changes)
    if sealed:
        rec.pop("content_sha256", None)
        rec = seal(rec)
    p.write_text(json.dumps(rec))


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


@pytest.mark.parametrize("command", ["run", "report"])
def test_a_newer_experiment_file_is_refused_and_kept(folder, capsys, command):
    out = folder / "exp"
    _edit(out / "experiment.json", format_version=_formats.EXPERIMENT_FORMAT + 1, isoeat_version="9.0.0")
    before = _snapshot(out)
    argv = ["run", str(folder / "c.yaml"), "--out", str(out)] if command == "run" else ["report", str(out)]
    assert main(argv) == 2
    err = _one_line(capsys.readouterr().err)
    assert f"{out / 'experiment.json'}" in err
    assert f"format {_formats.EXPERIMENT_FORMAT + 1}" in err and "9.0.0" in err
    assert f"reads experiment format {_formats.EXPERIMENT_FORMAT}" in err
    assert _snapshot(out) == before  # never rewritten


@pytest.mark.parametrize("value", [None, "1", True, 0, 1.5])
def test_an_experiment_file_without_a_valid_version_is_damaged(folder, capsys, value):
    out = folder / "exp"
    _edit(out / "experiment.json", format_version=value)
    before = _snapshot(out)
    assert main(["report", str(out)]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "experiment.json" in err and "damaged" in err and "format_version" in err
    assert main(["run", str(folder / "c.yaml"), "--out", str(out)]) == 2
    assert "format_version" in capsys.readouterr().err
    assert _snapshot(out) == before


@pytest.mark.parametrize("command", ["run", "report"])
def test_a_newer_manifest_is_refused_and_kept(folder, capsys, command):
    out = folder / "exp"
    _edit(out / "manifest.json", format_version=_formats.MANIFEST_FORMAT + 1)
    before = _snapshot(out)
    argv = ["run", str(folder / "c.yaml"), "--out", str(out)] if command == "run" else ["report", str(out)]
    assert main(argv) == 2
    err = _one_line(capsys.readouterr().err)
    assert "manifest.json" in err and f"format {_formats.MANIFEST_FORMAT + 1}" in err
    assert _snapshot(out) == before


@pytest.mark.filterwarnings("always::isoeat._errors.IsoeatWarning")  # the CLI prints them as one line
def test_a_manifest_of_another_isoeat_version_is_named(folder, capsys):
    out = folder / "exp"
    _edit(out / "manifest.json", isoeat_version="0.0.7")
    assert main(["report", str(out), "--no-figures"]) == 0
    err = capsys.readouterr().err
    assert err.count("0.0.7") == 1 and f"isoeat {__version__}" in err and "manifest.json" in err
    assert main(["run", str(folder / "c.yaml"), "--out", str(out), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "0.0.7" in err and f"isoeat {__version__}" in err
    runs = json.loads((out / "manifest.json").read_text())["runs"]
    assert runs[-1]["isoeat_version"] == __version__  # each run records the version that made it


@pytest.mark.parametrize("sealed", [True, False])
def test_a_newer_cell_is_not_used_by_report_nor_rewritten_by_run(folder, capsys, sealed):
    out = folder / "exp"
    _edit(_cell(out), sealed=sealed, format_version=_formats.CELL_FORMAT + 1)
    before = _snapshot(out)
    assert main(["run", str(folder / "c.yaml"), "--out", str(out)]) == 2
    err = _one_line(capsys.readouterr().err)
    assert str(_cell(out)) in err and f"cell format {_formats.CELL_FORMAT + 1}" in err
    assert f"reads cell format {_formats.CELL_FORMAT}" in err
    assert _snapshot(out) == before
    assert main(["report", str(out), "--no-figures"]) == 0
    captured = capsys.readouterr()
    assert "3 WEAT cells" in captured.out  # the newer cell is not among those used
    notes = [ln for ln in captured.err.splitlines() if f"cell format {_formats.CELL_FORMAT + 1}" in ln]
    assert len(notes) == 1 and "not used" in notes[0]
    failures = json.loads((out / "failures.json").read_text())
    assert [f["item"] for f in failures] == ["W7"] and "cell format" in failures[0]["message"]


@pytest.mark.filterwarnings("always::isoeat._errors.IsoeatWarning")
def test_older_cells_are_recomputed_with_one_line(folder, capsys):
    out = folder / "exp"
    for cal in ("none", "zca"):
        _edit(_cell(out, cal), sealed=True, format_version=_formats.CELL_FORMAT - 1)
    assert main(["report", str(out), "--no-figures"]) == 0
    captured = capsys.readouterr()
    assert "2 WEAT cells" in captured.out
    assert sum(f"cell format {_formats.CELL_FORMAT - 1}" in ln for ln in captured.err.splitlines()) == 1
    assert main(["run", str(folder / "c.yaml"), "--out", str(out), "--no-progress"]) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "older" in ln]
    assert len(lines) == 1 and "2 cell(s)" in lines[0] and f"format {_formats.CELL_FORMAT}" in lines[0], lines
    for cal in ("none", "zca"):
        assert json.loads(_cell(out, cal).read_text())["format_version"] == _formats.CELL_FORMAT


def test_a_truncated_experiment_file_is_damaged_not_missing(folder, capsys):
    out = folder / "exp"
    p = out / "experiment.json"
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
    before = _snapshot(out)
    for argv in (["report", str(out)], ["run", str(folder / "c.yaml"), "--out", str(out)]):
        assert main(argv) == 2
        err = _one_line(capsys.readouterr().err)
        assert str(p) in err and "damaged" in err, err
        assert "not an isoeat experiment" not in err and "did not write" not in err
    assert _snapshot(out) == before
