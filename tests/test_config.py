"""Experiment config files: defaults, the example, and errors that name the key and the allowed values."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import isoeat
from isoeat.experiments.config import load_config, parse_config

ROOT = Path(__file__).resolve().parents[1]


def _write(tmp_path: Path, text: str, name: str = "exp.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _err(tmp_path: Path, text: str) -> str:
    with pytest.raises(isoeat.IsoeatError) as info:
        load_config(_write(tmp_path, text))
    return str(info.value)


def test_defaults():
    cfg = parse_config({"models": ["glove-6b-50d"]})
    assert [m.label for m in cfg.models] == ["glove-6b-50d"] and cfg.models[0].family == "static"
    assert [t.id for t in cfg.tests] == [f"W{i}" for i in range(1, 11)]
    assert [(c.name, c.label, c.params) for c in cfg.calibrations] == [("none", "none", {}), ("zca", "zca", {"eps": 1e-3})]
    s = cfg.settings
    assert (s.permutations, s.seed, s.alpha, s.eps, s.reference.size, s.contexts_per_word, s.layer) == \
        (100_000, 0, 0.05, 1e-3, 100_000, 20, -1)
    assert cfg.anisotropy is None and cfg.similarity is None
    assert len(cfg.cell_keys()) == 20


def test_example_config_is_valid():
    cfg = load_config(ROOT / "examples" / "paper_glove.yaml")
    assert cfg.name == "paper-glove" and [m.label for m in cfg.models] == ["GloVe-6B-50d"]
    assert [t.id for t in cfg.tests] == [f"W{i}" for i in range(1, 11)]
    assert cfg.anisotropy.sample == 2000 and cfg.similarity.benchmarks == ("ws353", "simlex999")
    assert cfg.settings.permutations == 100_000 and cfg.report.figure_formats == ("png", "pdf")


def test_full_config_and_relative_test_file(tmp_path):
    (tmp_path / "sets").mkdir()
    (tmp_path / "sets" / "mine.yaml").write_text(
        "id: MINE\nbias_type: Gender\nX: [doctor, engineer]\nY: [nurse, teacher]\n"
        "A: [he, him, his]\nB: [she, her, hers]\n", encoding="utf-8")
    p = _write(tmp_path, """
name: full
models:
  - glove-6b-50d
  - {spec: minilm, label: MiniLM, layer: -2, contexts_per_word: 5}
  - {spec: "hf:princeton-nlp/unsup-simcse-bert-base-uncased", label: simcse}
tests: [w6, sets/mine.yaml]
calibrations:
  - none
  - zca
  - {name: zca, params: {eps: 1e-2}}
settings: {permutations: 2000, eps: 1e-3, seed: 7, reference: {size: 500}}
report: {test_heatmaps: [W6], figure_formats: [png]}
""")
    cfg = load_config(p)
    assert [t.id for t in cfg.tests] == ["W6", "MINE"]
    # MiniLM (all-MiniLM-L6-v2) was trained on labelled pairs: not the paper's unsupervised contrastive family
    assert [m.family for m in cfg.models] == ["static", "supervised-contrastive", "contrastive"]
    assert cfg.models[1].layer == -2 and not cfg.models[1].is_static
    assert [c.label for c in cfg.calibrations] == ["none", "zca(eps=0.001)", "zca(eps=0.01)"]
    assert cfg.calibrations[2].params == {"eps": 0.01}  # YAML reads 1e-2 as a string; accepted as a number
    assert cfg.settings.eps == 1e-3 and cfg.settings.seed == 7 and cfg.settings.reference.size == 500
    assert cfg.report.test_heatmaps == ("W6",)


def test_protocol_hash_tracks_settings_not_grid():
    a = parse_config({"models": ["glove-6b-50d"], "tests": ["W6"]})
    b = parse_config({"models": ["glove-6b-50d"], "tests": ["W6", "W7"]})
    c = parse_config({"models": ["glove-6b-50d"], "tests": ["W6"], "settings": {"permutations": 10}})
    d = parse_config({"models": ["glove-6b-50d"], "tests": ["W6"], "settings": {"adjust": "bh"}})
    assert a.protocol_hash() == b.protocol_hash() == d.protocol_hash() != c.protocol_hash()


@pytest.mark.parametrize("text, expected", [
    ("models: [glove-6b-50d]\nsettings: {permutaions: 10}\n",
     ["settings.permutaions", "did you mean 'permutations'", "allowed: permutations"]),
    ("models: [glove-6b-50d]\nmodle: x\n", ["modle", "did you mean 'models'"]),
    ("models: [glove-6b-50d]\nsettings: {permutations: many}\n", ["settings.permutations", "whole number", "'many'"]),
    ("models: [glove-6b-50d]\nsettings: {permutations: 0}\n", ["settings.permutations", ">= 1", "got 0"]),
    ("models: [glove-6b-50d]\nsettings: {alpha: 1.5}\n", ["settings.alpha", "(0, 1)", "1.5"]),
    ("models: [glove-6b-50d]\nsettings: {method: exakt}\n",
     ["settings.method", "auto, exact, certified, monte-carlo", "'exakt'", "did you mean 'exact'"]),
    ("models: [glove-6b-50d]\nsettings: {stop_early: yes please}\n", ["settings.stop_early", "true or false"]),
    ("models: [glove-6b-50d]\nsettings: {reference: {sise: 10}}\n", ["settings.reference.sise", "size"]),
    ("models: [glove-6b-50d]\ncalibrations: [none, zcaa]\n", ["calibrations[1].name", "none, zca", "did you mean 'zca'"]),
    ("models: [glove-6b-50d]\ncalibrations: [zca]\n", ["calibrations", "must include 'none'"]),
    ("models: [glove-6b-50d]\ncalibrations: [none, {name: zca, params: {epsilon: 1}}]\n",
     ["calibrations[1].params.epsilon", "allowed: eps"]),
    ("models: [glove-6b-50d]\ncalibrations: [none, zca, zca]\n", ["calibrations", "more than once"]),
    ("models: [glove-6b-50d]\ntests: [W1, W11]\n", ["tests[1]", "W11", "did you mean"]),
    ("models: [glove-6b-50d]\ntests: [nothere/mine.yaml]\n", ["tests[0]", "no such test file"]),
    ("models: [glove-6b-50d]\ntests: [W1, W1]\n", ["tests", "more than once"]),
    ("models: [glove-6b-5d]\n", ["models[0].spec", "unknown model", "glove-6b-50d"]),
    ("models: ['glove:/no/such/file.txt']\n", ["models[0].spec", "no such file"]),
    ("models: [{spec: glove-6b-50d, family: transformer}]\n",
     ["models[0].family", "static, contextualized, contrastive"]),
    ("models: [{spec: glove-6b-50d, layer: 3}]\n", ["models[0].layer", "contextual encoders"]),
    ("models: [glove-6b-50d, glove-6b-50d]\n", ["models", "label", "more than once"]),
    ("models: [{label: x}]\n", ["models[0].spec", "missing"]),
    ("tests: [W1]\n", ["models", "missing"]),
    ("models: [glove-6b-50d]\nsimilarity: {benchmarks: [ws999]}\n", ["similarity.benchmarks[0]", "ws353"]),
    ("models: [glove-6b-50d]\nanisotropy: 5\n", ["anisotropy", "true, false or a mapping"]),
    ("models: [glove-6b-50d]\nreport: {figure_formats: [gif]}\n", ["report.figure_formats[0]", "png, pdf, svg"]),
    ("models: [glove-6b-50d]\nreport: {test_heatmaps: [W9]}\ntests: [W1]\n", ["report.test_heatmaps[0]", "W1"]),
    ("models: [glove-6b-50d]\nsettings: {reference: {corpus: no-such-corpus}}\n",
     ["settings.reference.corpus", "named corpora"]),
    ("models: [glove-6b-50d]\nmodels: [x]\n", ["duplicate key 'models'", "line 2"]),
    ("models: [glove-6b-50d\n", ["not valid YAML", "line"]),
    ("", ["empty"]),
    ("- just\n- a list\n", ["expected a mapping"]),
])
def test_config_errors_name_the_key(tmp_path, text, expected):
    msg = _err(tmp_path, text)
    assert msg.startswith(str(tmp_path / "exp.yaml") + ": ") or "empty" in msg
    for part in expected:
        assert part in msg, (part, msg)


def test_optional_sections_need_their_modules(tmp_path, monkeypatch):
    from isoeat.experiments import _config_sections

    monkeypatch.setattr(_config_sections, "_module_available", lambda name: False)
    msg = _err(tmp_path, "models: [glove-6b-50d]\nanisotropy: true\n")
    assert "anisotropy" in msg and "isoeat.diagnostics" in msg
    msg = _err(tmp_path, "models: [glove-6b-50d]\nsimilarity: [ws353]\n")
    assert "similarity" in msg and "isoeat.similarity" in msg


def test_missing_config_file(tmp_path):
    with pytest.raises(isoeat.IsoeatFileNotFoundError):
        load_config(tmp_path / "nope.yaml")


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "isoeat.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=dict(os.environ), timeout=120)


def test_cli_config_errors_are_one_line(tmp_path):
    _write(tmp_path, "models: [glove-6b-50d]\nsettings: {permutations: -3}\n")
    proc = _cli("run", "exp.yaml", "--out", "o", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and proc.stderr.startswith("isoeat: error: exp.yaml: settings.permutations")
    assert "Traceback" not in proc.stderr and not (tmp_path / "o").exists()
    # statistics options belong in the file when a CONFIG is given
    _write(tmp_path, "models: [glove-6b-50d]\ntests: [W6]\n")
    proc = _cli("run", "exp.yaml", "--out", "o", "--permutations", "5", cwd=tmp_path)
    assert proc.returncode == 2 and "--permutations" in proc.stderr and "settings" in proc.stderr
    proc = _cli("run", "exp.yaml", cwd=tmp_path)
    assert proc.returncode == 2 and "--out" in proc.stderr


def test_exact_memory_and_allow_overlap_settings():
    from isoeat.experiments.config import parse_config

    base = {"models": ["glove-6b-50d"], "tests": ["W6"]}
    plain = parse_config(base)
    same = parse_config({**base, "settings": {"exact_memory": "2GiB", "allow_overlap": False}})
    assert plain.protocol_hash() == same.protocol_hash()  # defaults keep the hash of earlier folders
    small = parse_config({**base, "settings": {"exact_memory": "1MiB", "allow_overlap": True}})
    assert small.settings.exact_memory == 1 << 20
    assert small.settings.weat_kwargs()["exact_memory"] == 1 << 20 and small.settings.weat_kwargs()["allow_overlap"]
    assert small.protocol_hash() != plain.protocol_hash()
    with pytest.raises(isoeat.ConfigError, match="settings.exact_memory"):
        parse_config({**base, "settings": {"exact_memory": "lots"}})


def test_the_bundled_sentence_models_are_supervised_contrastive_by_their_spec():
    """all-MiniLM-L6-v2 and all-mpnet-base-v2 were both trained contrastively on the same ~1B labelled sentence
    pairs (their model cards, sentence-transformers): one family for both; ``mpnet`` read as static before."""
    from isoeat.experiments.config import default_family

    for spec in ("minilm", "mpnet", "all-mpnet-base-v2", "sentence-transformers/all-mpnet-base-v2", "st:minilm"):
        assert default_family(spec) == "supervised-contrastive", spec
    assert default_family("st:some-other-model") == "contrastive"
    assert default_family("glove-6b-50d") == "static"
