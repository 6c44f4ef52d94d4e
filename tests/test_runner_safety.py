"""Nothing lost: results are replaced only after their successors exist, foreign files are never replaced."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from isoeat.cli import main
from isoeat.experiments import runner as R

W6 = ["executive", "management", "professional", "corporation", "salary", "office", "business", "career",
      "home", "parents", "children", "family", "cousins", "marriage", "wedding", "relatives",
      "john", "paul", "mike", "kevin", "steve", "greg", "jeff", "bill",
      "amy", "joan", "lisa", "sarah", "diana", "kate", "ann", "donna"]


@pytest.fixture
def small_glove(tmp_path, glove) -> Path:
    """A GloVe text file: the 400 most frequent words plus W6's words (real vectors)."""
    words = list(dict.fromkeys(list(glove.words[:400]) + W6))
    vecs = glove.lookup(words).vectors
    p = tmp_path / "small.txt"
    p.write_text("".join(w + " " + " ".join(f"{x:.6f}" for x in v) + "\n" for w, v in zip(words, vecs)),
                 encoding="utf-8")
    return p


def _config(tmp_path: Path, model: Path) -> Path:
    cfg = tmp_path / "exp.yaml"
    cfg.write_text(f"name: safety\nmodels: [{{spec: 'glove:{model}', label: small}}]\ntests: [W6]\n"
                   "settings: {permutations: 1000, reference: {size: 300}}\n", encoding="utf-8")
    return cfg


def _snapshot(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_overwrite_all_with_a_broken_model_keeps_the_old_results(tmp_path, small_glove, capsys):
    cfg, out = _config(tmp_path, small_glove), tmp_path / "out"
    assert main(["run", str(cfg), "--out", str(out)]) == 0
    before = _snapshot(out)
    assert json.loads((out / "results.json").read_text())  # two finished cells
    small_glove.write_text("this is not a vector file\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["run", str(cfg), "--out", str(out), "--overwrite", "all"]) == 1
    err = capsys.readouterr().err
    assert "nothing replaced" in err and "failed" in err
    after = _snapshot(out)
    assert after == before  # byte for byte, and no staging folder left
    assert not list(out.glob(".isoeat-*"))


def test_overwrite_all_replaces_only_after_success(tmp_path, small_glove, capsys):
    cfg, out = _config(tmp_path, small_glove), tmp_path / "out"
    assert main(["run", str(cfg), "--out", str(out)]) == 0
    first = json.loads((out / "manifest.json").read_text())["runs"][-1]["run_id"]
    assert main(["run", str(cfg), "--out", str(out), "--overwrite", "all"]) == 0
    cells = [json.loads(p.read_text()) for p in (out / "cells").rglob("*.json")]
    assert len(cells) == 2 and all(c["run_id"] != first for c in cells)
    assert [p.name.split("-")[1] for p in out.glob(".isoeat-*")] == ["replaced"]  # the old results, kept


def test_a_cut_short_replacement_is_undone_on_the_next_run(tmp_path, glove):
    out = tmp_path / "out"
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: x\nmodels: [glove-6b-50d]\ntests: [W6]\nsettings: {permutations: 500, "
                   "reference: {size: 2000}}\n", encoding="utf-8")
    R.run_experiment(cfg, out)
    results = (out / "results.json").read_bytes()
    # a swap killed after moving results.json aside, before its successor arrived; and a staging folder
    old = out / ".isoeat-old-x"
    old.mkdir()
    (old / ".isoeat-scratch").write_text("old\n")  # the marker isoeat puts in its own scratch folders
    (out / "results.json").rename(old / "results.json")
    (out / ".isoeat-staging-y").mkdir()
    (out / ".isoeat-staging-y" / ".isoeat-scratch").write_text("staging\n")
    (out / ".isoeat-staging-y" / "junk.json").write_text("{}")
    notes: list[str] = []
    s = R.run_experiment(cfg, out, log=notes.append, write_tables=False)
    assert s.reused == 2 and (out / "results.json").read_bytes() == results
    assert any("restored results.json" in n for n in notes)
    assert not list(out.glob(".isoeat-*"))


def test_a_run_left_running_is_recorded_as_interrupted(tmp_path, glove):
    out = tmp_path / "out"
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: x\nmodels: [glove-6b-50d]\ntests: [W6]\nsettings: {permutations: 500, "
                   "reference: {size: 2000}}\n", encoding="utf-8")
    R.run_experiment(cfg, out)
    m = json.loads((out / "manifest.json").read_text())
    m["runs"][-1]["status"] = "running"  # as a run killed during its last write leaves it
    (out / "manifest.json").write_text(json.dumps(m))
    R.run_experiment(cfg, out)
    runs = json.loads((out / "manifest.json").read_text())["runs"]
    assert [r["status"] for r in runs] == ["interrupted", "finished"]


def test_an_interruption_is_recorded_with_its_reason(tmp_path, glove, monkeypatch):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: x\nmodels: [glove-6b-50d]\ntests: [W6, W7]\nsettings: {permutations: 500, "
                   "reference: {size: 2000}}\n", encoding="utf-8")
    # a full disk while the tables are written interrupts the run, and the manifest says so
    monkeypatch.setattr(R, "write_results", lambda out: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    out = tmp_path / "out"
    with pytest.raises(OSError):
        R.run_experiment(cfg, out)
    run = json.loads((out / "manifest.json").read_text())["runs"][-1]
    assert run["status"] == "interrupted" and "No space left" in run["reason"]
    assert not (out / ".isoeat.lock").exists()


def test_foreign_results_file_is_never_replaced(tmp_path, glove, capsys):
    f = tmp_path / "f"
    f.mkdir()
    (f / "results.csv").write_text("mine\n")
    for extra in ([], ["--overwrite", "all"]):
        assert main(["run", "--tests", "W6", "--reference-size", "2000", "--out", str(f), *extra]) == 2
        assert "isoeat did not write" in capsys.readouterr().err
    assert (f / "results.csv").read_text() == "mine\n" and sorted(p.name for p in f.iterdir()) == ["results.csv"]


def test_the_tables_of_a_foreign_folder_beside_isoeat_files(tmp_path, glove):
    f = tmp_path / "f"
    f.mkdir()
    (f / "notes.txt").write_text("mine")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: x\nmodels: [glove-6b-50d]\ntests: [W6]\nsettings: {permutations: 500, "
                   "reference: {size: 2000}}\n", encoding="utf-8")
    R.run_experiment(cfg, f, overwrite="all")
    assert (f / "notes.txt").read_text() == "mine" and (f / "results.json").exists()
    assert np.isfinite(json.loads((f / "results.json").read_text())[0]["effect_size"])


@pytest.mark.parametrize("content", ["[1]", "{}", '{"config": []}', '{"config": {"models": null}}'])
def test_a_damaged_experiment_file_is_a_one_line_error(tmp_path, glove, capsys, content):
    out = tmp_path / "r"
    assert main(["run", "--tests", "W6", "--reference-size", "2000", "--out", str(out)]) == 0
    (out / "experiment.json").write_text(content)
    capsys.readouterr()
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "experiment.json" in err and "damaged" in err
    assert main(["run", "--tests", "W6", "--reference-size", "2000", "--out", str(out)]) == 2
    assert "damaged" in capsys.readouterr().err


def test_damaged_cell_and_manifest_files_are_recomputed_or_ignored(tmp_path, glove, capsys):
    out = tmp_path / "r"
    args = ["run", "--tests", "W6,W7", "--reference-size", "2000", "--out", str(out)]
    assert main(args) == 0
    first = capsys.readouterr().out.splitlines()[:-1]
    cell = out / "cells" / "glove-6b-50d" / "zca" / "W7.json"
    rec = json.loads(cell.read_text())
    del rec["result"]  # "status": "ok" and no result
    cell.write_text(json.dumps(rec))
    m = json.loads((out / "manifest.json").read_text())
    m["runs"], m["models"] = None, [1]
    (out / "manifest.json").write_text(json.dumps(m))
    assert main(["report", str(out), "--no-figures"]) == 0  # the damaged cell is a failure there, not a crash
    capsys.readouterr()
    assert main(args) == 0  # the resume recomputes it
    out_text = capsys.readouterr().out.splitlines()
    assert out_text[:-1] == first and "5 of 6 cells reused" in out_text[-1]


def test_a_full_disk_names_the_file_being_written(tmp_path, monkeypatch):
    import errno
    import os

    import isoeat._io as io_

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    target = tmp_path / "results.json"
    with pytest.raises(OSError) as info:
        io_.atomic_write_text(target, "x")
    assert info.value.filename == str(target) and info.value.errno == errno.ENOSPC
    assert not list(tmp_path.iterdir())


def _npy_model(tmp_path: Path, glove, scale_w6: float = 1.0) -> Path:
    """An npy+vocab model of 3,000 real GloVe rows (W6's words included), W6's name vectors scaled."""
    words = list(dict.fromkeys(list(glove.words[:3000]) + W6))
    vecs = np.array(glove.lookup(words).vectors, dtype=np.float32)
    names = set(W6[16:])
    for i, w in enumerate(words):
        if w in names:
            vecs[i] = vecs[i] * scale_w6 + (0.0 if scale_w6 == 1.0 else 0.5)
    np.save(tmp_path / "m.npy", vecs)
    (tmp_path / "m.vocab").write_text("\n".join(words) + "\n", encoding="utf-8")
    return tmp_path / "m.npy"


def test_a_changed_model_file_is_never_served_from_finished_cells(tmp_path, glove):
    model = _npy_model(tmp_path, glove)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: x\nmodels: [{{spec: 'npy:{model}', label: m}}]\ntests: [W6]\n"
                   "settings: {permutations: 500, reference: {size: 2000}}\n", encoding="utf-8")
    out = tmp_path / "out"
    R.run_experiment(cfg, out)
    before = {r["calibration"]: r["effect_size"] for r in json.loads((out / "results.json").read_text())}
    _npy_model(tmp_path, glove, scale_w6=-1.0)  # the 16 name vectors change, nothing else
    s = R.run_experiment(cfg, out)
    after = {r["calibration"]: r["effect_size"] for r in json.loads((out / "results.json").read_text())}
    fresh = R.run_experiment(cfg, tmp_path / "fresh")
    expected = {r["calibration"]: r["effect_size"] for r in json.loads((tmp_path / "fresh" / "results.json").read_text())}
    assert s.computed == 2 and fresh.computed == 2
    assert after == expected and after != before


def test_a_rewritten_reference_corpus_refits_and_recomputes(tmp_path, glove):
    ref = tmp_path / "ref.txt"
    vocab = list(glove.words[:4000])
    ref.write_text(" ".join(vocab[:3000]) + "\n", encoding="utf-8")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: x\nmodels: [glove-6b-50d]\ntests: [W7]\n"
                   f"settings: {{permutations: 500, reference: {{corpus: '{ref}', size: 2000}}}}\n", encoding="utf-8")
    out = tmp_path / "out"
    R.run_experiment(cfg, out)
    ref.write_text(" ".join(vocab[1000:4000]) + "\n", encoding="utf-8")  # same name, other content
    notes: list[str] = []
    s = R.run_experiment(cfg, out, log=notes.append)
    assert s.computed == 1 and s.reused == 1  # raw kept, calibrated recomputed with a refitted calibrator
    assert any("calibrator's inputs changed" in n for n in notes)
    fresh = tmp_path / "fresh"
    R.run_experiment(cfg, fresh)
    got = json.loads((out / "results.json").read_text())
    want = json.loads((fresh / "results.json").read_text())
    assert [r["effect_size"] for r in got] == [r["effect_size"] for r in want]


def test_files_linked_out_of_the_run_folder_are_refused(tmp_path, glove, capsys):
    out = tmp_path / "r"
    assert main(["run", "--tests", "W6", "--reference-size", "2000", "--out", str(out)]) == 0
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(json.loads((out / "manifest.json").read_text())))
    (out / "manifest.json").unlink()
    (out / "manifest.json").symlink_to(secret)
    capsys.readouterr()
    assert main(["report", str(out), "--no-figures"]) == 2
    err = capsys.readouterr().err
    assert "leads out of the run folder" in err and err.count("\n") == 1


def test_sensitivity_out_claims_its_folder(tmp_path, glove, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "sensitivity.csv").write_text("mine\n")
    args = ["sensitivity", "--tests", "W6", "--eps", "1e-3", "--reference-sizes", "none", "--reference", "none",
            "--calibrations", "none", "--no-figures"]
    assert main([*args, "--out", str(mine)]) == 2
    assert "isoeat did not write" in capsys.readouterr().err
    assert (mine / "sensitivity.csv").read_text() == "mine\n"
    fresh = tmp_path / "fresh"
    assert main([*args, "--out", str(fresh)]) == 0
    assert main([*args, "--out", str(fresh)]) == 0  # its own folder: written again
    capsys.readouterr()
    assert (fresh / "sensitivity.csv").exists() and (fresh / ".isoeat-output.json").exists()
    assert not (fresh / ".isoeat.lock").exists()
    run = tmp_path / "run"
    assert main(["run", "--tests", "W6", "--reference-size", "2000", "--out", str(run)]) == 0
    assert main([*args, "--out", str(run)]) == 2  # another command's folder
    capsys.readouterr()


def _quick(out, *extra):
    return ["run", "--tests", "W6,W7", "--reference-size", "2000", "--permutations", "1000", "--out", str(out), *extra]


def test_a_hand_edited_cell_is_never_published(tmp_path, glove, capsys):
    out = tmp_path / "r"
    assert main(_quick(out)) == 0
    first = capsys.readouterr().out.splitlines()[:-1]
    cell = out / "cells" / "glove-6b-50d" / "zca" / "W7.json"
    rec = json.loads(cell.read_text())
    rec["result"]["effect_size"], rec["result"]["p_value"] = 9.99, 1e-30  # numbers only, the file stays valid
    cell.write_text(json.dumps(rec))
    assert main(["report", str(out), "--no-figures"]) == 0
    capsys.readouterr()
    assert "9.99" not in (out / "tables" / "table_a1-zca.md").read_text()
    assert main(_quick(out)) == 0  # the resume recomputes it
    text = capsys.readouterr().out.splitlines()
    assert text[:-1] == first and "5 of 6 cells reused" in text[-1]


def test_a_foreign_experiment_file_is_never_replaced(tmp_path, glove, capsys):
    out = tmp_path / "r"
    out.mkdir()
    (out / "experiment.json").write_text('{"project": "another tool"}')
    (out / "notes.txt").write_text("mine")
    for extra in ([], ["--overwrite", "all"]):
        assert main(_quick(out, *extra)) == 2
        assert "not a file isoeat wrote" in capsys.readouterr().err
    assert json.loads((out / "experiment.json").read_text()) == {"project": "another tool"}


def test_overwrite_all_keeps_what_it_replaces(tmp_path, glove, capsys):
    out = tmp_path / "r"
    assert main(_quick(out)) == 0
    (out / "tables" / "my-annotations.md").write_text("notes")
    assert main(_quick(out, "--overwrite", "all")) == 0
    capsys.readouterr()
    kept = list(out.glob(".isoeat-replaced-*"))
    assert len(kept) == 1 and (kept[0] / "tables" / "my-annotations.md").read_text() == "notes"
    assert main(_quick(out)) == 0  # the kept folder is neither in the way nor removed
    assert list(out.glob(".isoeat-replaced-*")) == kept


def test_a_users_dot_isoeat_folder_is_left_alone(tmp_path, glove, capsys):
    out = tmp_path / "r"
    (out / ".isoeat-backup").mkdir(parents=True)
    (out / ".isoeat-backup" / "data.txt").write_text("precious")
    assert main(_quick(out)) == 2  # a folder with files isoeat did not write
    assert main(_quick(out, "--overwrite", "all")) == 0  # written beside them
    capsys.readouterr()
    assert (out / ".isoeat-backup" / "data.txt").read_text() == "precious"


def test_an_owned_folder_linked_elsewhere_is_refused(tmp_path, glove, capsys):
    out = tmp_path / "r"
    assert main(_quick(out)) == 0
    elsewhere = tmp_path / "elsewhere"
    (out / "cells").rename(elsewhere)
    (out / "cells").symlink_to(elsewhere)
    capsys.readouterr()
    assert main(_quick(out)) == 2
    assert "link leading out of the folder" in capsys.readouterr().err
    assert main(["report", str(out), "--no-figures"]) == 2
