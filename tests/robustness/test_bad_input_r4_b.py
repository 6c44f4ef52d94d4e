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


# --- issue 40 #13: an undefined d (SD 0 of the scores) is said, and p does not pretend to be 1.0 -------------------
# Targets in dimensions 4-5, attributes in dimensions 1-3: every target-attribute cosine is 0, so s(w) = 0 for every
# target word (and cos(w, .) = 0 for every attribute word in SC-WEAT): the SD in d's denominator is 0.
_FLAT_VECTORS = {"xa": [0, 0, 0, 1, 0], "xb": [0, 0, 0, 0, 1], "ya": [0, 0, 0, 1, 1], "yb": [0, 0, 0, 1, -1],
                 "aa": [0, 1, 0, 0, 0], "ab": [0, 1, 0.2, 0, 0], "ba": [0, 0, 1, 0, 0], "bb": [0.2, 0, 1, 0, 0]}
_FLAT_TEST = {"id": "T9", "X": ["xa", "xb"], "Y": ["ya", "yb"], "A": ["aa", "ab"], "B": ["ba", "bb"]}
UNDEFINED_WEAT = "d undefined: every target word has the same association score"
UNDEFINED_SC = "d undefined: the word has the same cosine with every attribute word"


def _flat_files(d: Path, vectors=None) -> tuple[str, str]:
    rows = (vectors or _FLAT_VECTORS).items()
    (d / "v.txt").write_text("".join(f"{w} {' '.join(str(float(x)) for x in v)}\n" for w, v in rows))
    (d / "t.json").write_text(json.dumps(_FLAT_TEST))
    return f"glove:{d / 'v.txt'}", str(d / "t.json")


def _sets(vectors=None):
    import numpy as np

    v = vectors or _FLAT_VECTORS
    return [np.array([v[w] for w in _FLAT_TEST[k]], dtype=float) for k in "XYAB"]


def _scores_from_scratch(X, Y, A, B):
    """s(w) = mean_a cos(w, a) - mean_b cos(w, b), from the definition (Caliskan et al. 2017, eq. 3)."""
    import numpy as np

    def unit(M):
        return M / np.linalg.norm(M, axis=1, keepdims=True)

    def s(W):
        return (unit(W) @ unit(A).T).mean(axis=1) - (unit(W) @ unit(B).T).mean(axis=1)

    return s(X), s(Y)


def test_an_undefined_d_is_nan_with_its_reason_and_p_undefined_too():
    import math

    import numpy as np

    from isoeat.stats.weat import weat_from_vectors

    X, Y, A, B = _sets()
    sx, sy = _scores_from_scratch(X, Y, A, B)
    assert np.std(np.concatenate([sx, sy]), ddof=1) == 0  # the premise, from scratch
    r = weat_from_vectors(X, Y, A, B, rng=0)
    assert math.isnan(r.effect_size) and math.isnan(r.p_value), (r.effect_size, r.p_value)
    assert r.undefined.startswith(UNDEFINED_WEAT)
    rec = r.to_dict()
    assert rec["undefined"] == r.undefined and math.isnan(rec["p_value"])


def test_d_is_defined_as_soon_as_the_scores_differ():
    """The boundary: SD 0 is undefined; the smallest difference the float scores carry gives d and p again."""
    import numpy as np

    from isoeat.stats.weat import weat_from_vectors

    moved = dict(_FLAT_VECTORS, xa=[0, 1e-6, 0, 1, 0])  # xa leans (barely) towards A
    X, Y, A, B = _sets(moved)
    sx, sy = _scores_from_scratch(X, Y, A, B)
    s = np.concatenate([sx, sy])
    assert np.std(s, ddof=1) > 0
    expected = (sx.mean() - sy.mean()) / np.std(s, ddof=1)  # d = (mean s_X - mean s_Y) / SD_{X u Y}(s), ddof 1
    r = weat_from_vectors(X, Y, A, B, rng=0)
    assert r.undefined == "" and r.effect_size == pytest.approx(expected, rel=1e-9)
    # only xa's score is not 0, so S = s(xa) on every split keeping xa on the X side (3 of the C(4,2) = 6), -s(xa) else
    assert r.p_value == pytest.approx(3 / 6)


def test_the_tables_say_d_is_undefined_and_print_no_p(tmp_path, capsys):
    model, test = _flat_files(tmp_path)
    assert main(["weat", "--model", model, "--test", test, "--calibration", "none"]) == 0
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith("T9"))
    assert row.split()[4:6] == ["-", "-"], row  # d and p
    assert "nan" not in out and "1.0000" not in out
    assert f"T9 (none): {UNDEFINED_WEAT}" in out
    assert main(["weat", "--model", model, "--test", test, "--calibration", "none", "--format", "json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert rec["effect_size"] is None and rec["p_value"] is None and rec["undefined"].startswith(UNDEFINED_WEAT)
    assert main(["scweat", "--model", model, "--words", "xa", "--attributes", test, "--calibration", "none"]) == 0
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith("xa"))
    assert row.split()[2:4] == ["-", "-"], row
    assert f"xa (none): {UNDEFINED_SC}" in out and "1.0000" not in out


def test_the_run_table_and_records_say_d_is_undefined(tmp_path, capsys):
    model, test = _flat_files(tmp_path)
    out_dir = tmp_path / "o"
    assert main(["run", "--model", model, "--test", test, "--calibration", "center", "--out", str(out_dir),
                 "--frame", "reference"]) == 0
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith("T9"))
    assert row.split()[2:5] == ["-", "-", "-"], row  # d_R, p_R, Holm_R
    assert f"T9_R: {UNDEFINED_WEAT}" in out
    recs = json.loads((out_dir / "results.json").read_text())
    raw = next(r for r in recs if r["calibration"] == "none")
    assert raw["p_value"] is None and raw["undefined"].startswith(UNDEFINED_WEAT)


def test_scores_equal_but_for_rounding_leave_d_undefined():
    """Targets that are multiples of one vector have the same s in exact arithmetic; in float64 their scores differ
    by rounding, so SD > 0 and d was a ratio of rounding errors (printed 0.00 with p 1.0000). The X-side sums of all
    partitions lie within the p-value's tie tolerance 1e-12 * sum|s| (isoeat.stats.permutation): undefined."""
    import math

    import numpy as np

    from isoeat.stats.weat import weat_from_vectors

    v = np.array([0.3, 0.7, 0.1, 0.9, 0.2])
    X, Y = np.array([v, 3 * v]), np.array([7 * v, 0.1 * v])
    A = np.array([[1, 0.2, 0, 0, 0], [0.1, 1, 0, 0, 0]])
    B = np.array([[0, 0, 1, 0.3, 0], [0, 0, 0.2, 0, 1]])
    sx, sy = _scores_from_scratch(X, Y, A, B)
    s = np.sort(np.concatenate([sx, sy]))
    assert s[-2:].sum() - s[:2].sum() <= 1e-12 * np.abs(s).sum()  # every partition ties (from scratch)
    r = weat_from_vectors(X, Y, A, B, rng=0)
    assert math.isnan(r.effect_size) and math.isnan(r.p_value) and r.undefined.startswith(UNDEFINED_WEAT)


def test_the_undefined_rule_at_its_boundary():
    """Inclusive: a spread of the X-side sums equal to the tie tolerance is undefined; the next float above is not."""
    import numpy as np

    from isoeat.labels import undefined_reason

    tol = 3e-13
    assert undefined_reason(0.7, spread=tol, tolerance=tol).startswith(UNDEFINED_WEAT)
    assert undefined_reason(0.7, spread=float(np.nextafter(tol, 1.0)), tolerance=tol) == ""
    assert undefined_reason(0.0, spread=0.0, tolerance=0.0).startswith(UNDEFINED_WEAT)  # all scores 0
    assert undefined_reason(float("nan"), spread=1.0, tolerance=0.0).startswith(UNDEFINED_WEAT)  # SD exactly 0
    assert undefined_reason(0.7, "sc-weat", spread=0.0).startswith(UNDEFINED_SC)
