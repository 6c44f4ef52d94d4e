"""A result can be replayed from its record: `isoeat weat --seed <recorded seed>` gives the same Monte Carlo p."""

from __future__ import annotations

import json

from isoeat.cli import main


def test_weat_replays_a_run_cell_from_its_recorded_seed(tmp_path, glove, capsys):
    out = tmp_path / "r"
    common = ["--method", "monte-carlo", "--permutations", "2000", "--reference-size", "2000"]
    assert main(["run", "--tests", "W3", *common, "--out", str(out)]) == 0
    capsys.readouterr()
    recs = {r["calibration"]: r for r in json.loads((out / "results.json").read_text())}
    assert {r["p_method"] for r in recs.values()} == {"monte-carlo"}
    for cal in ("none", "zca"):
        rec = recs[cal]
        fit = common if cal != "none" else common[:-2]  # the raw space fits nothing: --reference-size is refused
        assert main(["weat", "--test", "W3", "--calibration", cal, "--seed", str(rec["seed"]), *fit,
                     "--format", "json"]) == 0
        (again,) = [r for r in json.loads(capsys.readouterr().out) if r["calibration"] == cal]
        assert again["seed"] == rec["seed"]
        assert (again["p_value"], again["count"]) == (rec["p_value"], rec["count"])
        assert again["effect_size"] == rec["effect_size"]


def test_weat_records_the_seed_it_was_given(glove, capsys):
    assert main(["weat", "--test", "W6", "--seed", "12345", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["seed"] == 12345


def test_scweat_refuses_interval_options_it_cannot_honour(glove, capsys):
    for extra in (["--bootstrap", "1000"], ["--resample-attributes"], ["--ci-estimand", "populations"]):
        assert main(["scweat", "--words", "nurse", "--attributes", "W7", *extra]) == 2
        err = capsys.readouterr().err
        assert "SC-WEAT has no bootstrap interval" in err and extra[0] in err
    # SC-WEAT's one interval is the noncentral t for the given-word estimand: a bootstrap method is refused
    assert main(["scweat", "--words", "nurse", "--attributes", "W7", "--ci", "--ci-method", "bca"]) == 2
    assert "does not estimate 'given-word'" in capsys.readouterr().err
