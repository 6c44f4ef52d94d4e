"""Adversary of the ML-EAT levels (issue 43): what the first build got silently wrong, each a test that failed
before its fix.

Provenance: every expected value here is derived in the test from the folder's own numbers by the definitions
(the pattern by :func:`isoeat.labels.eat_pattern`'s rule written out: ``A`` d > 0 and p < alpha, ``B`` d < 0 and
p < alpha, ``0`` else; a z-score as (block mean - frame mean) / frame SD), never pasted from the program's output.
"""

from __future__ import annotations

import csv
import io

import pytest

from isoeat.cli import main


def _letter(d: float, p: float, alpha: float) -> str:
    """The ML-EAT call of one Level-2 test, written out from the paper's rule (p < alpha, strict)."""
    if p < alpha and d > 0:
        return "A"
    if p < alpha and d < 0:
        return "B"
    return "0"


def _rewrite(path, edit) -> None:
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    edit(rows)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0].keys()), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


@pytest.fixture(scope="module")
def levels_run(tmp_path_factory, glove):
    out = tmp_path_factory.mktemp("adv3") / "run"
    assert main(["run", "--test", "W7", "--levels", "--out", str(out), "--seed", "1"]) == 0
    return out


@pytest.mark.parametrize(
    "edit",
    [
        # the pattern edited while the block means (the only thing checked) stay the cells'
        lambda rows: rows[0].update(pattern="BB" if rows[0]["pattern"] != "BB" else "AA"),
        # a z-score edited: the EAT-Map prints it in its quadrant
        lambda rows: rows[0].update(l3_xa_z="9.99"),
        # the anisotropy verdict flipped
        lambda rows: rows[0].update(cosine_flat="True" if rows[0]["cosine_flat"] == "False" else "False"),
    ],
    ids=["pattern", "z", "flat"],
)
def test_tampered_levels_csv_not_drawn_from(levels_run, edit, tmp_path):
    """An edited pattern, z or Flat in tables/levels.csv (block means untouched) is not shown in the EAT-Map as the
    folder's: the row is left out with the one-line note, as a row whose block means were edited."""
    import shutil

    from isoeat.experiments.runner import load_experiment
    from isoeat.reporting.eat_map import read_levels

    out = tmp_path / "run"
    shutil.copytree(levels_run, out)
    path = out / "tables" / "levels.csv"
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    # the file as written is consistent: the pattern follows from its Level-2 numbers (independent rule above)
    for r in rows:
        a = float(r["alpha"])
        want = _letter(float(r["l2x_d"]), float(r["l2x_p"]), a) + _letter(float(r["l2y_d"]), float(r["l2y_p"]), a)
        assert r["pattern"] == want
        z = (float(r["l3_xa_mean"]) - float(r["frame_mean"])) / float(r["frame_sd"])
        assert abs(float(r["l3_xa_z"]) - z) < 1e-9
    levels, note = read_levels(load_experiment(out))
    assert ("W7", "none") in levels and note == ""
    _rewrite(path, edit)
    levels, note = read_levels(load_experiment(out))
    assert ("W7", "none") not in levels and ("W7", "zca") in levels
    assert "W7 (none)" in note and "\n" not in note
