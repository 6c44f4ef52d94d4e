"""Every label isoeat prints, at its boundary, through both ways into ``isoeat run``.

The labels — change class (Stable / Disappearing / Emerging), the ``|dd|>0.5``
flag and the sign-reversal flag — are what a reader of an audit acts on. The
expected labels below are written by hand from the documented rules, not
computed by isoeat:

* significant means p < alpha, strictly (p == alpha is not significant);
* Disappearing: significant raw, not calibrated; Emerging: the reverse; else Stable;
* large shift: |d_W - d_R| > 0.5, strictly;
* sign reversal: d_R * d_W < 0 (a zero or NaN on either side is no reversal).

One table of cases drives the quick run (``isoeat run --tests ...``) and the
config runner (``isoeat run CONFIG.yaml``): each case is a test whose raw and
calibrated (d, p) are set to the case's values inside the WEAT cell, so both
paths must label them identically from the same numbers.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from isoeat.cli import main
from isoeat.experiments import runner as R
from isoeat.experiments.compare import MAGNITUDES, change_flags, classify_change, cohen_magnitude, compare_records

ALPHA = 0.05
NAN = float("nan")

# id: (d_raw, p_raw, d_cal, p_cal, change, large_shift, sign_reversal)
CASES = {
    "P1": (1.0, 0.05, 1.0, 0.01, "Emerging", False, False),       # p_raw == alpha: not significant
    "P2": (1.0, 0.01, 1.0, 0.05, "Disappearing", False, False),   # p_cal == alpha: not significant
    "P3": (1.0, 0.05, 1.0, 0.05, "Stable", False, False),         # both at alpha: neither significant
    "P4": (1.0, 0.0499999, 1.0, 0.0500001, "Disappearing", False, False),  # just either side
    "P5": (1.0, 0.0500001, 1.0, 0.0499999, "Emerging", False, False),
    "P6": (1.0, 0.001, 1.0, 0.002, "Stable", False, False),       # both significant
    "D1": (1.0, 0.5, 0.5, 0.5, "Stable", False, False),            # |dd| == 0.5 exactly: no flag
    "D2": (1.0, 0.5, 0.4999, 0.5, "Stable", True, False),          # just above 0.5
    "D3": (0.25, 0.5, 0.75, 0.5, "Stable", False, False),          # +0.5 exactly
    "D4": (0.25, 0.5, 0.7500001, 0.5, "Stable", True, False),
    "D5": (-0.3, 0.5, 0.25, 0.5, "Stable", True, True),            # both flags
    "S1": (0.0, 0.5, -0.3, 0.5, "Stable", False, False),           # zero raw: no reversal
    "S2": (0.1, 0.5, -0.1, 0.5, "Stable", False, True),
    "S3": (-0.2, 0.5, -0.1, 0.5, "Stable", False, False),
    "S4": (0.3, 0.5, 0.0, 0.5, "Stable", False, False),            # zero calibrated: no reversal
    "S5": (NAN, 0.5, -0.1, 0.5, "Stable", False, False),           # NaN: neither flag
}

W6 = dict(X=["executive", "management", "professional", "corporation", "salary", "office", "business", "career"],
          Y=["home", "parents", "children", "family", "cousins", "marriage", "wedding", "relatives"],
          A=["john", "paul", "mike", "kevin", "steve", "greg", "jeff", "bill"],
          B=["amy", "joan", "lisa", "sarah", "diana", "kate", "ann", "donna"])


def _tests_file(tmp_path: Path) -> Path:
    lines = []
    for tid in CASES:
        lines.append(f"  - id: {tid}\n    bias_type: Gender\n" + "".join(
            f"    {k}: [{', '.join(v)}]\n" for k, v in W6.items()))
    p = tmp_path / "cases.yaml"
    p.write_text("tests:\n" + "".join(lines), encoding="utf-8")
    return p


@pytest.fixture
def forced_cells(monkeypatch):
    """Each WEAT cell computes for real, then takes its case's (d, p) in the raw or calibrated space."""
    real = R.compute_cell

    def fake(engine, cell, *a):
        payload = real(engine, cell, *a)
        if cell.kind != "weat":
            return payload
        d_raw, p_raw, d_cal, p_cal = CASES[cell.item][:4]
        raw = cell.calibration == "none"
        payload["result"].update(effect_size=d_raw if raw else d_cal, p_value=p_raw if raw else p_cal)
        return payload

    monkeypatch.setattr(R, "compute_cell", fake)


def _magnitude(d: float) -> str:
    """Cohen (1988): |d| >= 0.8 large, >= 0.5 medium, >= 0.2 small, else negligible; NaN n/a (written by hand)."""
    if d != d:
        return "n/a"
    return "large" if abs(d) >= 0.8 else "medium" if abs(d) >= 0.5 else "small" if abs(d) >= 0.2 else "negligible"


def _check_rows(rows: list[dict]) -> None:
    assert sorted(r["test"] for r in rows) == sorted(CASES)
    for r in rows:
        d_raw, _, d_cal, _, change, large, sign = CASES[r["test"]]
        assert (r["change"], r["large_shift"], r["sign_reversal"]) == (change, large, sign), r["test"]
        assert (r["magnitude_raw"], r["magnitude_calibrated"]) == (_magnitude(d_raw), _magnitude(d_cal)), r["test"]
        # new columns go last, before the version of isoeat that wrote the record (the stability marks, where
        # the run made redraws of its reference sample, after the protocol)
        stab = ["call_holds", "class_holds", "replicate_share", "replicates", "firm"]
        if "call_holds" in r:
            assert list(r)[-6:-1] == stab
        assert [k for k in r if k not in stab][-4:] == ["magnitude_raw", "magnitude_calibrated", "protocol",
                                                        "isoeat_version"]


@pytest.mark.parametrize("d, label", [
    (0.2, "small"), (math.nextafter(0.2, 0), "negligible"), (0.5, "medium"), (math.nextafter(0.5, 0), "small"),
    (0.8, "large"), (math.nextafter(0.8, 0), "medium"), (-0.2, "small"), (-0.19999, "negligible"),
    (-0.5, "medium"), (-0.8, "large"), (-0.79999, "medium"), (0.0, "negligible"), (-0.0, "negligible"),
    (12.0, "large"), (NAN, "n/a"), (float("inf"), "n/a"), (float("-inf"), "n/a"), (None, "n/a"),
])
def test_cohen_magnitude_at_its_boundaries(d, label):
    assert cohen_magnitude(d) == label
    assert label in MAGNITUDES
    if d is not None and d == d and abs(d) != float("inf"):
        assert _magnitude(d) == label  # the hand-written rule of the run checks agrees


def _check_table(text: str) -> None:
    """The printed table: Chg and Flags columns and the footer counts."""
    letters = {"Stable": "S", "Disappearing": "D", "Emerging": "E"}
    for tid, (_, _, _, _, change, large, sign) in CASES.items():
        line = next(ln for ln in text.splitlines() if ln.startswith(tid + " "))
        # the Firm column (stability marks, between Chg and Flags) when the run made redraws
        cells = re.sub(r"\s+(firm|(borderline|unstable) \(\d+/\d+\))(?=\s+\S+$)", "", line).split()
        flags = ",".join(f for f, on in (("|dd|>0.5", large), ("sign", sign)) if on) or "-"
        assert cells[-2:] == [letters[change], flags], line
    n = {c: sum(1 for v in CASES.values() if v[4] == c) for c in letters}
    n_large = sum(1 for v in CASES.values() if v[5])
    n_sign = sum(1 for v in CASES.values() if v[6])
    assert (f"Stable {n['Stable']}, Disappearing {n['Disappearing']}, Emerging {n['Emerging']}; "
            f"Flags: |dd|>0.5 (dd = d_W - d_R) in {n_large}, sign (d_R, d_W of opposite signs) in {n_sign}.") in text


def test_engine_labels_every_case_at_its_boundary():
    for tid, (d_r, p_r, d_c, p_c, change, large, sign) in CASES.items():
        assert classify_change(p_r, p_c, ALPHA) == change, tid
        flags = change_flags(d_r, d_c)
        assert (flags["large_shift"], flags["sign_reversal"]) == (large, sign), tid
        row = compare_records({"effect_size": d_r, "p_value": p_r}, {"effect_size": d_c, "p_value": p_c}, ALPHA)
        assert (row["change"], row["large_shift"], row["sign_reversal"]) == (change, large, sign), tid
        assert row["sig_raw"] is (p_r < ALPHA) and row["sig_calibrated"] is (p_c < ALPHA)


def test_exact_p_can_equal_alpha_and_is_then_not_significant():
    # a 6 x 6 test has C(12, 6) = 924 partitions: p = k/924 hits alpha = k/924 exactly
    k = 46
    p = k / 924
    assert classify_change(p, 0.9, alpha=k / 924) == "Stable"
    assert classify_change(p, 0.9, alpha=math.nextafter(k / 924, 1.0)) == "Disappearing"


def test_quick_run_labels(tmp_path, glove, forced_cells, capsys):
    out = tmp_path / "quick"
    rc = main(["run", "--tests", str(_tests_file(tmp_path)), "--reference-size", "2000", "--permutations", "1000",
               "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0
    _check_table(text)
    _check_rows(json.loads((out / "comparison.json").read_text()))


def test_config_run_labels(tmp_path, glove, forced_cells, capsys):
    tests = _tests_file(tmp_path)
    cfg = tmp_path / "exp.yaml"
    cfg.write_text(f"name: labels\nmodels: [glove-6b-50d]\ntests: [{tests}]\ncalibrations: [none, zca]\n"
                   "settings: {permutations: 1000, reference: {size: 2000}}\n", encoding="utf-8")
    out = tmp_path / "grid"
    rc = main(["run", str(cfg), "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0
    _check_table(text)
    _check_rows(json.loads((out / "comparison.json").read_text()))


def test_quick_run_folder_is_a_report_folder(tmp_path, glove, capsys):
    """`isoeat run --out DIR` then `isoeat report DIR` (tables; figures need matplotlib)."""
    pytest.importorskip("matplotlib")
    out = tmp_path / "r"
    assert main(["run", "--tests", "W6,W9", "--reference-size", "2000", "--out", str(out)]) == 0
    assert main(["report", str(out), "--html"]) == 0
    capsys.readouterr()
    assert (out / "report.html").stat().st_size > 10_000
    assert any((out / "tables").glob("*.md"))
    assert json.loads((out / "experiment.json").read_text())["format"] == "isoeat-experiment"
    assert (out / "manifest.json").exists()
    assert not (out / ".isoeat.lock").exists()


def test_quick_run_resumes_and_refuses_a_foreign_folder(tmp_path, glove, capsys):
    out = tmp_path / "r"
    args = ["run", "--tests", "W6", "--reference-size", "2000", "--out", str(out)]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    second = capsys.readouterr().out
    assert "4 of 4 cells reused" in second  # 2 WEAT cells, 2 anisotropy cells (the isotropy check)
    strip = lambda s: [ln for ln in s.splitlines() if not ln.startswith("(")]  # noqa: E731 - timing line
    assert strip(first) == strip(second)
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "results.csv").write_text("mine\n")
    assert main(["run", "--tests", "W6", "--out", str(foreign)]) == 2
    assert "isoeat did not write" in capsys.readouterr().err
    assert (foreign / "results.csv").read_text() == "mine\n"


def test_a_different_saved_calibrator_is_not_reused(tmp_path, glove, capsys):
    """Cells computed with one --whitener are not reused for another one (its content is in the cell hash)."""
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    assert main(["whiten", "--out", str(a), "--reference-size", "2000"]) == 0
    assert main(["whiten", "--out", str(b), "--reference-size", "3000"]) == 0
    out = tmp_path / "r"
    assert main(["run", "--tests", "W6", "--whitener", str(a), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["run", "--tests", "W6", "--whitener", str(b), "--out", str(out)]) == 0
    assert "2 of 4 cells reused" in capsys.readouterr().out
    cells = json.loads((out / "manifest.json").read_text())["runs"][-1]
    assert cells["computed"] == 2 and cells["reused"] == 2  # raw WEAT and anisotropy reused, calibrated recomputed
