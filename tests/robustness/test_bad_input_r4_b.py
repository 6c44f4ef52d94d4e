"""Bad-input catalogue, round 4 (issue 40), group B: what ``report`` writes through, the environment's corpus
variables, the disk-full advice, and an undefined effect size.

CLI cases end as :mod:`test_bad_input_more`'s: a one-line isoeat error, exit 2, the message naming the cause
(file, variable, path), no traceback, and nothing written or changed — in the temporary folder and in the
folder outside it that a link points at.
"""

from __future__ import annotations

import errno
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from isoeat.cli import main

GRID = ("models: [glove-6b-50d]\ntests: [W6, W7]\ncalibrations: [none, center]\n"
        "settings: {permutations: 100}\n")


@pytest.fixture(scope="module")
def finished(tmp_path_factory, glove):
    """A finished experiment folder with a calibrated space (so ``report`` writes tables and figures)."""
    d = tmp_path_factory.mktemp("finished")
    (d / "c.yaml").write_text(GRID)
    assert main(["run", str(d / "c.yaml"), "--out", str(d / "exp"), "-q"]) == 0
    assert main(["report", str(d / "exp"), "--html"]) == 0  # tables/ and figures/ exist: a link replaces them
    return d / "exp"


def _snapshot(d: Path) -> dict[str, str]:
    return {str(p): ("link" if p.is_symlink() else hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file()
                     else "dir") for p in d.rglob("*")}


def _link_out(name: str, target: str = "outside"):
    """Replace ``exp/NAME`` with a link to ``../TARGET`` (a folder outside the run folder holding a file)."""
    def mutate(d: Path) -> None:
        p = d / "exp" / name
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
        p.symlink_to(d / target)
    return mutate


def _newer_cell(rel: str, version: int = 2):
    """Mark one cell as written in a newer cell format (``format_version`` = ``version``)."""
    def mutate(d: Path) -> None:
        p = d / "exp" / rel
        rec = json.loads(p.read_text())
        rec["format_version"] = version
        p.write_text(json.dumps(rec))
    return mutate


def _nested_link(d: Path) -> None:
    """figures/tests (the per-test heatmaps' folder) a link out of the folder: the link is one level down."""
    p = d / "exp" / "figures" / "tests"
    shutil.rmtree(p)
    p.symlink_to(d / "outside")


REPORT_CASES = [
    # issue 40 #2: report writes only inside the folder, and refuses as run does (one check, before writing)
    ("report tables linked out", _link_out("tables"), [], "exp/tables: is a link leading out of the folder"),
    ("report figures linked out", _link_out("figures"), [], "exp/figures: is a link leading out of the folder"),
    ("report html linked out", _link_out("report.html", "outside/page.html"), ["--html"],
     "exp/report.html: is a link leading out of the folder"),
    ("report heatmap folder linked out", _nested_link, [], "exp/figures/tests: is a link leading out of the folder"),
    # issue 40 #3: a newer-format cell is refused by report as by run, naming the file and both versions
    ("report newer WEAT cell", _newer_cell("cells/glove-6b-50d/center/W7.json"), ["--no-figures"],
     "exp/cells/glove-6b-50d/center/W7.json: written in cell format 2 by a newer isoeat; this isoeat"),
    ("report newer raw cell", _newer_cell("cells/glove-6b-50d/none/W6.json", 7), [],
     "exp/cells/glove-6b-50d/none/W6.json: written in cell format 7 by a newer isoeat"),
]


@pytest.mark.parametrize("name, mutate, extra, expected", REPORT_CASES, ids=[c[0] for c in REPORT_CASES])
def test_report_refuses_before_writing(tmp_path, capsys, finished, name, mutate, extra, expected):
    shutil.copytree(finished, tmp_path / "exp", symlinks=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "keep.txt").write_text("a file of the user's\n")
    (tmp_path / "outside" / "page.html").write_text("<p>the user's page</p>\n")
    mutate(tmp_path)
    before = _snapshot(tmp_path)
    code = main(["report", str(tmp_path / "exp"), *extra])
    err = capsys.readouterr().err
    assert code == 2, (name, err)
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1, err
    assert expected in err and "Traceback" not in err, err
    assert _snapshot(tmp_path) == before  # nothing written: not the tables, not failures.json, not outside


def test_run_and_report_refuse_a_link_with_the_same_line(tmp_path, capsys, finished):
    """One check: run and report print the same line for the same linked folder."""
    shutil.copytree(finished, tmp_path / "exp", symlinks=True)
    (tmp_path / "outside").mkdir()
    _link_out("tables")(tmp_path)
    (tmp_path / "c.yaml").write_text(GRID)
    assert main(["run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "exp"), "-q"]) == 2
    by_run = capsys.readouterr().err
    assert main(["report", str(tmp_path / "exp")]) == 2
    assert capsys.readouterr().err == by_run


# --- issue 40 #30: the disk-full advice names what the command writes to -------------------------------------------
def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


DISK_FULL_CASES = [
    # (name, argv, the advice the line must give); "(--out)" is named only by commands that have --out
    ("disk full during report", ["report", "{d}/exp", "--no-figures"],
     "free space on that disk, or copy {d}/exp to a disk with room and report the copy"),
    ("disk full during anisotropy", ["anisotropy", "--calibration", "none", "--samples", "200", "--matrix-out",
                                     "{d}/m.npz"], "free space on that disk, or write elsewhere (--matrix-out)"),
    ("disk full during run", ["run", "--tests", "W6", "--permutations", "100", "--out", "{d}/o", "-q"],
     "free space on that disk, or write elsewhere (--out)"),
]


@pytest.mark.parametrize("name, argv, advice", DISK_FULL_CASES, ids=[c[0] for c in DISK_FULL_CASES])
def test_disk_full_advice_names_what_the_command_writes(tmp_path, capsys, monkeypatch, finished, name, argv, advice):
    import isoeat._io

    shutil.copytree(finished, tmp_path / "exp", symlinks=True)
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(isoeat._io.os, "replace", _enospc)
    code = main([a.replace("{d}", str(tmp_path)) for a in argv])
    monkeypatch.undo()
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert code == 2, err
    assert last.startswith("isoeat: error: disk full: ") and "No space left on device" in last, err
    assert last.endswith(advice.replace("{d}", str(tmp_path))), last
    if "--out" not in argv:
        assert "--out" not in last  # report and anisotropy have no --out


# --- issue 40 #5: a set-but-bad corpus variable is refused by run's and anisotropy's frame, as by reproduce ------
def _env_case(name, var, value, expected, files=()):
    return (name, var, value, dict.fromkeys(files, "text\n"), expected)


ENV_CASES = [
    _env_case("wikitext-103 nowhere", "ISOEAT_WIKITEXT103", "{d}/nowhere", "$ISOEAT_WIKITEXT103={d}/nowhere: no such "),
    _env_case("wikitext-103 empty folder", "ISOEAT_WIKITEXT103", "{d}/empty", "$ISOEAT_WIKITEXT103={d}/empty: no "
              "readable wikitext-103 text there"),
    _env_case("wikitext-103 without its training text", "ISOEAT_WIKITEXT103", "{d}/w", "$ISOEAT_WIKITEXT103={d}/w: "
              "no wiki.train.raw there", files=["w/wiki.test.raw"]),
    _env_case("wikitext-2 nowhere", "ISOEAT_WIKITEXT2", "{d}/nowhere", "$ISOEAT_WIKITEXT2={d}/nowhere: no such "),
    _env_case("wikitext-2 empty folder", "ISOEAT_WIKITEXT2", "{d}/empty", "$ISOEAT_WIKITEXT2={d}/empty: no "
              "readable wikitext-2 text there"),
    _env_case("wikitext-2 without wiki text", "ISOEAT_WIKITEXT2", "{d}/w", "$ISOEAT_WIKITEXT2={d}/w: no "
              "wiki.train.raw or wiki.test.raw there", files=["w/notes.txt"]),
    _env_case("data dir nowhere", "ISOEAT_DATA_DIR", "{d}/nowhere", "$ISOEAT_DATA_DIR={d}/nowhere: no such "),
]
_COMMANDS = {"anisotropy": ["anisotropy", "--calibration", "none", "--samples", "200"],
             "run": ["run", "--tests", "W6", "--permutations", "100", "--out", "{d}/o"]}


@pytest.mark.parametrize("command", sorted(_COMMANDS))
@pytest.mark.parametrize("name, var, value, files, expected", ENV_CASES, ids=[c[0] for c in ENV_CASES])
def test_a_set_but_bad_corpus_variable_is_refused(tmp_path, capsys, monkeypatch, glove, command, name, var, value,
                                                  files, expected):
    """Before: frame paper fell back to the reference pool (another verdict, exit 0); now one line naming the
    variable and its path, and nothing written (run's --out folder is not created)."""
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path.parent / f"{tmp_path.name}-cache"))
    (tmp_path / "empty").mkdir()
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    monkeypatch.setenv(var, value.replace("{d}", str(tmp_path)))
    before = _snapshot(tmp_path)
    code = main([a.replace("{d}", str(tmp_path)) for a in _COMMANDS[command]])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert expected.replace("{d}", str(tmp_path)) in err, err
    assert _snapshot(tmp_path) == before
