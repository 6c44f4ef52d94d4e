"""One calibrator route (issue 41, item 1): the quick run, a CONFIG grid and ``reproduce`` fit their calibrators
the same way, so both ways into ``isoeat run`` print the same table for one protocol, Firm column included.

The tables are compared with each other (the same printed text), not with pinned numbers: the redraws and
marks themselves are checked against hand computations in tests/test_stability.py.
"""

from __future__ import annotations

import json
import re

import pytest

from isoeat.cli import main


@pytest.fixture
def run_cli(capsys, glove):
    def call(*args):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return call


def _table(text: str) -> str:
    """The printed tables, without the closing lines that say where and how long (they differ by design)."""
    keep = [ln for ln in text.splitlines()
            if not re.match(r"^\(\d+\.\d s", ln) and not ln.startswith(("tables: ", "isoeat-run: "))]
    return "\n".join(keep).rstrip()


def _config(tmp_path, settings: str) -> str:
    cfg = tmp_path / "run.yaml"
    cfg.write_text(
        "name: isoeat-run\n"
        "models: [{spec: glove-6b-50d, label: glove-6b-50d}]\n"
        "tests: [W6, W7]\n"
        "calibrations: [none, zca]\n"
        "anisotropy: {sample: 2000, components: 50, frame: paper}\n"
        f"settings: {{permutations: 2000, method: monte-carlo{settings}}}\n")
    return str(cfg)


@pytest.mark.parametrize("options, settings", [
    ((), ""),  # stability auto: R = 100 redraws of a static model's rows
    (("--stability", "20"), ", stability: 20"),
    (("--reference-shards", "20", "--stability", "20"), ", stability: 20, reference: {shards: 20}"),
])
def test_quick_and_grid_print_the_same_table_firm_column_included(tmp_path, run_cli, options, settings):
    common = ("--permutations", "2000", "--method", "monte-carlo")
    code, quick, err = run_cli("run", "--tests", "W6,W7", *common, *options, "--out", tmp_path / "quick")
    assert code == 0, err
    code, grid, err = run_cli("run", _config(tmp_path, settings), "--out", tmp_path / "grid")
    assert code == 0, err
    assert "Firm" in quick and "redraws" in quick
    assert _table(quick) == _table(grid)
    # the same redraws recorded: the folders' comparison records carry the same shares
    recs = [json.loads((tmp_path / d / "comparison.json").read_text()) for d in ("quick", "grid")]
    share = [[(r["test"], r["replicate_share"]) for r in rs] for rs in recs]
    assert share[0] == share[1] and all(s for _, s in share[0])


def test_grid_reference_size_auto_is_the_quick_runs(tmp_path, run_cli):
    """``settings.reference.size: auto`` fits as ``--reference-size auto`` does: the same size used, the same SE."""
    common = ("--permutations", "2000", "--method", "monte-carlo")
    code, quick, err = run_cli("run", "--tests", "W6,W7", *common, "--reference-size", "auto",
                               "--reference-max", "20000", "--out", tmp_path / "quick")
    assert code == 0, err
    code, grid, err = run_cli("run", _config(tmp_path, ", reference: {size: auto, max_size: 20000}"),
                              "--out", tmp_path / "grid")
    assert code == 0, err
    assert "SE_ref" in quick or "reference-SE" in quick
    assert _table(quick) == _table(grid)


def test_config_stability_setting_is_checked(tmp_path, run_cli):
    code, out, err = run_cli("run", _config(tmp_path, ", stability: 1"), "--out", tmp_path / "g")
    assert code == 2 and "settings.stability" in err and err.count("\n") == 1
    assert not (tmp_path / "g").exists()
    code, out, err = run_cli("run", _config(tmp_path, ", stability: many"), "--out", tmp_path / "g")
    assert code == 2 and "settings.stability" in err and err.count("\n") == 1
    code, out, err = run_cli("run", _config(tmp_path, ", reference: {tolerance: 0.01}"), "--out", tmp_path / "g")
    assert code == 2 and "settings.reference.tolerance" in err and "auto" in err and err.count("\n") == 1
    code, out, err = run_cli("run", _config(tmp_path, ", reference: {size: auto, shards: 20}"),
                             "--out", tmp_path / "g")
    assert code == 2 and "settings.reference.shards" in err and err.count("\n") == 1


def test_stability_default_keeps_the_protocol_hash():
    """The new settings at their defaults leave a folder's protocol as before (old folders resume)."""
    from isoeat.experiments.config import parse_config

    base = {"models": ["glove-6b-50d"], "tests": ["W6"], "calibrations": ["none", "zca"]}
    plain = parse_config(base)
    same = parse_config({**base, "settings": {"stability": "auto", "reference": {"size": 100_000}}})
    other = parse_config({**base, "settings": {"stability": 20}})
    assert plain.protocol_hash() == same.protocol_hash() != other.protocol_hash()
    assert "stability" not in plain.protocol()["settings"]
    assert set(plain.protocol()["settings"]["reference"]) == {"corpus", "size", "sentences"}


def test_reproduce_prints_the_firm_column(tmp_path, monkeypatch, capsys):
    """``reproduce`` runs a config through the same route: its calibrated calls get the Firm marks of ``run``
    (a tiny mapped GloVe stand-in, --quick --no-extras: tests/test_reproduce_mapping.py's small run)."""
    import numpy as np

    from isoeat.wordsets import get_test

    words: list[str] = []
    for i in range(1, 11):
        t = get_test(f"W{i}")
        for ws in (t.X, t.Y, t.A, t.B):
            words += [w for w in ws.words if w not in words]
    words += [f"filler{i}" for i in range(200)]
    vecs = np.random.default_rng(7).normal(size=(len(words), 12))
    (tmp_path / "g.txt").write_text("".join(w + " " + " ".join(f"{x:.6f}" for x in v) + "\n"
                                            for w, v in zip(words, vecs)))
    monkeypatch.chdir(tmp_path)
    code = main(["reproduce", "--model", "glove-6b-100d=glove:g.txt", "--models", "GloVe", "--quick", "--no-extras",
                 "--offline", "--out", "rep"])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.split() == ["ID", "Chg", "Firm"])
    firm = lines[at + 2:at + 12]
    assert "redraws of the reference sample" in lines[at + 12]
    marks = [ln.split()[0] for ln in firm]
    assert marks == [f"W{i}" for i in range(1, 11)]
    # the marks are the folder's: comparison.json's replicate shares, read by the Firm rule
    from isoeat.labels import holds_mark

    recs = json.loads((tmp_path / "rep" / "comparison.json").read_text())
    for rec in recs:
        same, total = map(int, rec["replicate_share"].split("/"))
        line = next(ln for ln in firm if ln.split()[:1] == [rec["test"]])
        assert line.rstrip().endswith(holds_mark(same, total))


@pytest.mark.parametrize("settings, ok", [
    ({"stability": 1}, False), ({"stability": 2}, True), ({"stability": 1000}, True), ({"stability": 1001}, False),
    ({"stability": "off"}, True), ({"stability": True}, False),
    ({"reference": {"shards": 1}}, False), ({"reference": {"shards": 2}}, True),
    ({"reference": {"size": "auto", "max_size": 39}}, False), ({"reference": {"size": "auto", "max_size": 40}}, True),
    ({"reference": {"size": "auto", "tolerance": 0}}, False),
    ({"reference": {"size": "auto", "tolerance": 1e-9}}, True),
    ({"reference": {"max_size": 5000}}, False),  # only with size auto
])
def test_route_settings_at_their_bounds(settings, ok):
    """The config's route settings take what ``isoeat run``'s options take (--stability 2..1000, shards >= 2,
    --reference-max >= 40 = 2 x the 20 shards of auto, tolerance > 0), and refuse the rest in one line."""
    from isoeat import ConfigError
    from isoeat.experiments.config import parse_config

    data = {"models": ["glove-6b-50d"], "tests": ["W6"], "calibrations": ["none", "zca"], "settings": settings}
    if ok:
        parse_config(data)
        return
    with pytest.raises(ConfigError) as err:
        parse_config(data)
    key = "settings.stability" if "stability" in settings else "settings.reference."
    assert key in str(err.value) and "\n" not in str(err.value)


def test_route_settings_refused_for_a_calibration_without_merged_statistics():
    from isoeat import ConfigError
    from isoeat.experiments.config import parse_config

    for settings in ({"stability": 20}, {"reference": {"shards": 20}}, {"reference": {"size": "auto"}}):
        with pytest.raises(ConfigError, match="mergeable statistics"):
            parse_config({"models": ["glove-6b-50d"], "tests": ["W6"], "calibrations": ["none", "abtt"],
                          "settings": settings})
    parse_config({"models": ["glove-6b-50d"], "tests": ["W6"], "calibrations": ["none", "abtt"]})  # auto: no marks


def test_a_run_writes_its_manifest_once_per_stage_and_reads_its_folder_once(tmp_path, run_cli, monkeypatch):
    """Issue 41 item 2: the manifest is written when the run starts and when it ends (not a third time between,
    for the tables: they read it in memory), the cells are read into records once, and the command prints
    from what ``run_experiment`` returned (the folder is not read again)."""
    from isoeat.experiments import results as results_mod
    from isoeat.experiments import runner as runner_mod

    writes: list[str] = []
    loads: list[str] = []
    real_write, real_load = runner_mod.write_manifest, results_mod.load_experiment

    def counting_write(out, manifest):
        writes.append(str(out))
        return real_write(out, manifest)

    def counting_load(out, **kw):
        loads.append(str(out))
        return real_load(out, **kw)

    monkeypatch.setattr(runner_mod, "write_manifest", counting_write)
    monkeypatch.setattr(runner_mod, "load_experiment", counting_load)
    monkeypatch.setattr(results_mod, "load_experiment", counting_load)
    code, out, err = run_cli("run", "--tests", "W6", "--permutations", "2000", "--method", "monte-carlo",
                             "--out", tmp_path / "r")
    assert code == 0, err
    assert len(writes) == 2, writes  # started, ended
    assert len(loads) == 1, loads
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["runs"][-1]["status"] == "finished"
