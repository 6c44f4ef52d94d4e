"""``isoeat reproduce --model NAME=SPEC``: the paper's models bound to local files, compared digit by digit.

The stand-in is a tiny GloVe-format text file written here (seeded random vectors for every W1-W10 word
plus filler rows), mapped as the paper's GloVe. Its expected d values are computed in this file from the
file's own numbers (cosines, s, d with ddof 1; ZCA from numpy.linalg.eigh), not by isoeat; the paper's
published values are copied from Table A1 of shared/seeds/paper_zca_weat.txt (GloVe column).
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from isoeat import ConfigError
from isoeat.cli import main

#: Table A1, GloVe (paper_zca_weat.txt, Appendix C): d_R, p_R, d_W, p_W as printed.
PAPER_GLOVE = {"W1": ("1.17", "10^-5", "1.18", "10^-5"), "W3": ("0.95", "10^-5", "0.24", ".1660"),
               "W7": ("1.28", ".0020", "1.27", ".0023"), "W10": ("0.75", ".0691", "0.39", ".2294")}
DIM = 12


def _words() -> list[str]:
    from isoeat.wordsets import get_test

    out: list[str] = []
    for i in range(1, 11):
        t = get_test(f"W{i}")
        for s in (t.X, t.Y, t.A, t.B):
            out += [w for w in s.words if w not in out]
    return out


def _write_standin(path: Path, seed: int = 7) -> tuple[list[str], np.ndarray]:
    words = _words() + [f"filler{i}" for i in range(300)]
    g = np.random.default_rng(seed)
    vecs = np.round(g.standard_normal((len(words), DIM)) + np.eye(DIM)[0] * 3.0, 6)  # anisotropic: a common mean
    path.write_text("".join(w + " " + " ".join(f"{x:.6f}" for x in v) + "\n" for w, v in zip(words, vecs)),
                    encoding="utf-8")
    return words, vecs


def _d(vec: dict[str, np.ndarray], test_id: str) -> float:
    """WEAT d from scratch (Caliskan et al. 2017, eq. 3; SD over X∪Y with ddof 1)."""
    from isoeat.wordsets import get_test

    t = get_test(test_id)

    def unit(ws):
        m = np.array([vec[w] for w in ws])
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    A, B = unit(t.A.words), unit(t.B.words)
    s = {k: (unit(ws) @ A.T).mean(1) - (unit(ws) @ B.T).mean(1) for k, ws in (("X", t.X.words), ("Y", t.Y.words))}
    return float((s["X"].mean() - s["Y"].mean()) / np.concatenate([s["X"], s["Y"]]).std(ddof=1))


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "isoeat.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=dict(os.environ), timeout=600)


@pytest.fixture(scope="module")
def mapped_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("repro")
    words, vecs = _write_standin(tmp / "tiny-glove.txt")
    proc = _cli("reproduce", "--model", "glove-6b-100d=glove:tiny-glove.txt", "--models", "GloVe", "--quick",
                "--no-extras", "--offline", "--out", "rep", cwd=tmp)
    return tmp, words, vecs, proc


def _rows(stdout: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split() for line in stdout.splitlines() if line.split()[:1] and
            line.split()[0] in {f"W{i}" for i in range(1, 11)} and "|" in line}


def test_mapped_standin_is_compared_digit_by_digit(mapped_run):
    tmp, words, vecs, proc = mapped_run
    assert proc.returncode == 0, proc.stderr
    path = str((tmp / "tiny-glove.txt").resolve())
    head = next(line for line in proc.stdout.splitlines() if line.startswith("GloVe (glove:"))
    assert f"mapped: {path}" in head and "DIFFERENT" not in head and "substitute" not in head
    vec = dict(zip(words, vecs.astype(np.float64)))
    # whitened space from scratch: ZCA on every row (the quick reference asks 2,000; the file has fewer)
    mu, cov = vecs.mean(0), np.cov(vecs, rowvar=False, ddof=1)
    lam, U = np.linalg.eigh(cov)
    W = (U / np.sqrt(lam + 1e-3)) @ U.T
    wvec = {w: (v - mu) @ W for w, v in vec.items()}
    rows = _rows(proc.stdout)
    assert sorted(rows) == sorted(f"W{i}" for i in range(1, 11))
    for tid, cells in rows.items():
        ours = cells[2:6] if len(cells) == 14 else None  # ID Bias d p d p Chg | d p d p Chg k/4
        assert ours is not None, cells
        assert ours[0] == f"{_d(vec, tid):.2f}" and ours[2] == f"{_d(wvec, tid):.2f}"
        for p in (ours[1], ours[3]):
            assert p.startswith(".") and len(p) == 5 or p.startswith("10^-"), p
        if tid in PAPER_GLOVE:
            assert tuple(cells[8:12]) == PAPER_GLOVE[tid]
        # the paper's 10^-5 is "p < 1e-4" (its Monte Carlo floor): any of our p below 1e-4 prints the same
        same = sum(a.startswith("10^-") if b == "10^-5" else a == b
                   for a, b in zip(ours, cells[8:12]))
        assert cells[-1] == f"{same}/4"
    # every other paper model is listed as not compared like with like, with what would bring it when absent
    listed = proc.stdout.split("the paper's models not compared like with like here:\n", 1)[1].splitlines()
    for label in ("word2vec", "GPT-2", "BERT", "RoBERTa", "unsup-BERT", "unsup-RoBERTa"):
        line = next(ln for ln in listed if ln.startswith(f"  {label}: "))
        assert "not chosen (--models)" in line or f"--model {label}=" in line
    assert not any(ln.startswith("  GloVe: ") for ln in listed)
    with open(tmp / "rep" / "paper_comparison.csv", newline="") as fh:
        recs = list(csv.DictReader(fh))
    assert len(recs) == 10 and {r["model_source"] for r in recs} == {f"mapped: {path}"}
    assert all(r["same_model"] == "True" for r in recs)


def test_mapped_file_of_another_dimension_is_said_not_the_papers(mapped_run):
    """The stand-in holds 12-dimensional vectors; the paper's GloVe is 100-dimensional (paper_values.json)."""
    tmp, _, _, proc = mapped_run
    path = str((tmp / "tiny-glove.txt").resolve())
    want = (f"WARNING: {path} holds {DIM}-dimensional vectors; the paper's GloVe is 100-dimensional: not the "
            "paper's model")
    lines = proc.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("GloVe (glove:"))
    assert lines[head + 1].startswith(want), lines[head:head + 2]
    assert want in (tmp / "rep" / "paper_comparison.md").read_text(encoding="utf-8")
    assert f"GloVe: {want[9:]}" in proc.stderr


def test_changed_content_at_the_same_path_is_recomputed(mapped_run):
    tmp, _, _, first = mapped_run
    assert first.returncode == 0, first.stderr
    args = ("reproduce", "--model", "GloVe=glove:tiny-glove.txt", "--models", "GloVe", "--quick", "--no-extras",
            "--offline", "--out", "rep")
    again = _cli(*args, cwd=tmp)
    assert again.returncode == 0 and "20 cells: 0 computed, 20 reused" in again.stdout
    _write_standin(tmp / "tiny-glove.txt", seed=8)  # same path and words, other numbers
    changed = _cli(*args, cwd=tmp)
    assert changed.returncode == 0, changed.stderr
    assert "20 cells: 20 computed, 0 reused" in changed.stdout


@pytest.mark.parametrize("value, message", [
    ("glove-6b-300d=glove:x.txt", "--model 'glove-6b-300d=glove:x.txt': unknown paper model 'glove-6b-300d'; "
                                  "did you mean GloVe?"),
    ("bert-base-casd=hf:m", "unknown paper model 'bert-base-casd'; did you mean BERT"),
    ("glove:x.txt", "--model 'glove:x.txt': expected NAME=SPEC"),
    ("GloVe=glove:missing.txt", "--model 'GloVe=glove:missing.txt': no such file"),
    ("GloVe=vecs:x.txt", "--model 'GloVe=vecs:x.txt': unknown model format 'vecs'"),
    ("BERT=glove:here.txt", "--model 'BERT=glove:here.txt': the paper's model is a transformer"),
    ("BERT=hf:.", "holds no config.json"),
    ("GloVe=hf:.", "--model 'GloVe=hf:.': the paper's model is static word vectors"),
    ("GloVe=glove:.", "is a folder; the paper's static models are one vector file"),  # not "no such file"
    ("word2vec=.", "is a folder; the paper's static models are one vector file"),
])
def test_bad_name_or_spec_is_one_line(tmp_path, monkeypatch, capsys, value, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here.txt").write_text("a 1 2\n", encoding="utf-8")
    assert main(["reproduce", "--model", value, "--list", "--offline"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_mapped_twice_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("a 1 2\n", encoding="utf-8")
    assert main(["reproduce", "--model", "GloVe=a.txt", "--model", "glove-wiki-gigaword-100=a.txt", "--list",
                 "--offline"]) == 2
    assert "GloVe is mapped more than once" in capsys.readouterr().err


@pytest.mark.parametrize("second", ["word2vec=glove:a.txt", "word2vec=./sub/../a.txt"])
def test_one_file_mapped_to_two_paper_models_refused(tmp_path, monkeypatch, capsys, second):
    """One file is one model: bound to GloVe and word2vec, both would be compared with the paper as its own."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("a 1 2\n", encoding="utf-8")
    assert main(["reproduce", "--model", "GloVe=glove:a.txt", "--model", second, "--list", "--offline"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{(tmp_path / 'a.txt').resolve()} is mapped to both" in err[0], err
    # a config's mapping and the command line's together
    (tmp_path / "r.yaml").write_text("models:\n  GloVe: glove:a.txt\n", encoding="utf-8")
    assert main(["reproduce", "--config", "r.yaml", "--model", second, "--list", "--offline"]) == 2
    assert "is mapped to both GloVe and word2vec" in capsys.readouterr().err
    # the command line's GloVe replaces the config's: no clash
    (tmp_path / "b.txt").write_text("a 1 2\n", encoding="utf-8")
    assert main(["reproduce", "--config", "r.yaml", "--model", "GloVe=glove:b.txt", "--model", second, "--list",
                 "--offline"]) == 0


def test_a_comma_in_a_mapped_path_is_part_of_the_name(tmp_path, monkeypatch):
    """Only npy: specs take M.npy,VOCAB; a GloVe file named a,b.txt was cut at the comma: refused, or (with a file
    'a' beside it) marked 'mapped: .../a' while a,b.txt was read."""
    from isoeat.commands._paper_models import parse_model_mapping

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a,b.txt").write_text("a 1 2\n", encoding="utf-8")
    got = parse_model_mapping(["GloVe=glove:a,b.txt"])["GloVe"]
    assert got["path"] == str((tmp_path / "a,b.txt").resolve()) and got["spec"] == f"glove:{got['path']}"
    (tmp_path / "a").write_text("a 1 2\n", encoding="utf-8")
    assert parse_model_mapping(["GloVe=glove:a,b.txt"])["GloVe"]["path"] == got["path"]
    # npy: the vocabulary after the comma is a path too, read from the same base as the matrix (a config's folder)
    sub = tmp_path / "cfg"
    sub.mkdir()
    np.save(sub / "m.npy", np.zeros((1, 2)))
    (sub / "m.txt").write_text("a\n", encoding="utf-8")
    npy = parse_model_mapping({"GloVe": "npy:m.npy,m.txt"}, base=sub)["GloVe"]
    assert npy["spec"] == f"npy:{(sub / 'm.npy').resolve()},{(sub / 'm.txt').resolve()}"
    with pytest.raises(ConfigError, match="no such vocabulary file"):
        parse_model_mapping({"GloVe": "npy:m.npy,nope.txt"}, base=sub)


@pytest.mark.parametrize("label, model_type, refused", [
    ("BERT", "gpt2", True), ("GPT-2", "bert", True), ("RoBERTa", "bert", True), ("unsup-RoBERTa", "roberta", False),
    ("BERT", "bert", False), ("unsup-BERT", "BERT", False),
])
def test_a_folder_of_another_architecture_is_refused(tmp_path, label, model_type, refused):
    """A GPT-2 folder mapped as BERT was marked 'mapped' and compared with the paper's BERT digit by digit."""
    import json

    from isoeat.commands._paper_models import parse_model_mapping

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps({"model_type": model_type}), encoding="utf-8")
    item = f"{label}=hf:{tmp_path / 'm'}"
    if refused:
        with pytest.raises(ConfigError, match=f"model_type '{model_type}'; the paper's {label} is a"):
            parse_model_mapping([item])
    else:
        assert parse_model_mapping([item])[label]["path"] == str((tmp_path / "m").resolve())


def test_config_mapping_reads_paths_beside_the_file(tmp_path, monkeypatch, capsys):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "g.txt").write_text("a 1 2\n", encoding="utf-8")
    (tmp_path / "repro.yaml").write_text("models:\n  glove-6b-100d: glove:models/g.txt\n", encoding="utf-8")
    monkeypatch.chdir(Path("/"))
    assert main(["reproduce", "--config", str(tmp_path / "repro.yaml"), "--list", "--offline"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("GloVe "))
    assert f"glove:{(tmp_path / 'models' / 'g.txt').resolve()}" in line and "mapped:" in line
    assert "GloVe: --model" not in out  # a mapped model needs nothing more
    (tmp_path / "bad.yaml").write_text("models:\n  GloVe: glove:nope.txt\n", encoding="utf-8")
    assert main(["reproduce", "--config", str(tmp_path / "bad.yaml"), "--list", "--offline"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.yaml: models 'GloVe=glove:nope.txt': no such file" in err[0]


def test_auto_drops_the_substitute_of_a_mapped_model(tmp_path):
    from isoeat.commands._paper_models import candidate_models, parse_model_mapping, select_auto

    (tmp_path / "g.txt").write_text("a 1 2\n", encoding="utf-8")
    plain = [c["label"] for c in select_auto(candidate_models(online=False))]
    mapped = candidate_models(online=False, mapping=parse_model_mapping([f"GloVe=glove:{tmp_path / 'g.txt'}"]))
    chosen = [c["label"] for c in select_auto(mapped)]
    if "GloVe-6B-50d" in plain:
        assert "GloVe-6B-50d" not in chosen
    assert "GloVe" in chosen
    glove = next(c for c in mapped if c["label"] == "GloVe")
    assert glove["source"] == f"mapped: {(tmp_path / 'g.txt').resolve()}" and glove["available"]


def test_minilm_is_not_labelled_unsupervised():
    from isoeat.commands._paper_models import candidate_models
    from isoeat.reporting.paper_tables import FAMILY_TITLES

    mini = next(c for c in candidate_models(online=False) if c["label"] == "MiniLM")
    assert mini["family"] == "supervised-contrastive"
    assert "Unsupervised" not in FAMILY_TITLES[mini["family"]]


def test_a_local_transformer_folder_maps_a_paper_transformer(capsys):
    """``hf:FOLDER`` (here the bundled MiniLM's folder, a real local transformers model) stands for BERT."""
    from isoeat import MissingDependencyError
    from isoeat.backends._registry import minilm_folder

    try:
        folder = minilm_folder()
    except MissingDependencyError as exc:
        pytest.skip(str(exc))
    assert main(["reproduce", "--model", f"bert-base-cased=hf:{folder}", "--list", "--offline"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("BERT "))
    assert f"hf:{folder.resolve()}" in line and "available" in line and f"mapped: {folder.resolve()}" in line
    assert "  BERT: --model" not in out and "  GPT-2: --model GPT-2=hf:FOLDER" in out


def test_eps_relative_reproduction_records_the_absolute_eps(tmp_path):
    import json

    _, vecs = _write_standin(tmp_path / "g.txt")
    proc = _cli("reproduce", "--model", "GloVe=glove:g.txt", "--models", "GloVe", "--quick", "--no-extras",
                "--offline", "--eps-relative", "0.05", "--out", "rep", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "epsilon 0.05 x the mean eigenvalue of each reference covariance" in proc.stdout.splitlines()[0]
    lam = np.linalg.eigh(np.cov(vecs, rowvar=False, ddof=1))[0]  # every row is the quick reference (659 < 2,000)
    rec = json.loads((tmp_path / "rep" / "manifest.json").read_text())["calibrators"]["GloVe/zca"]
    assert rec["eps_mode"] == "relative" and rec["eps_relative"] == 0.05
    assert rec["eps"] == pytest.approx(0.05 * lam.mean(), rel=1e-6)
    # the comparison files say it too: they are what gets quoted, without the terminal's first line
    md = (tmp_path / "rep" / "paper_comparison.md").read_text(encoding="utf-8")
    assert md.splitlines()[1] == proc.stdout.splitlines()[0]
    with open(tmp_path / "rep" / "paper_comparison.csv", newline="") as fh:
        recs = list(csv.DictReader(fh))
    # the stand-in's rows, all of them the reference (the quick run asks 2,000): said too (issue 40 #6)
    short = f"reference {len(vecs)} (asked 2,000, only {len(vecs)} available; the paper: 100,000)"
    assert {r["protocol"] for r in recs} == {"not the paper's: --quick; epsilon 0.05 x the mean eigenvalue of each "
                                             f"reference covariance; {short}"}


def test_comparison_files_say_a_quick_run_is_not_the_papers_protocol(mapped_run):
    tmp, _, vecs, proc = mapped_run
    md = (tmp / "rep" / "paper_comparison.md").read_text(encoding="utf-8").splitlines()
    assert md[1].startswith("isoeat reproduce: 1 model(s): GloVe; epsilon absolute 0.001; QUICK settings")
    short = f"reference {len(vecs)} (asked 2,000, only {len(vecs)} available; the paper: 100,000)"  # every row
    with open(tmp / "rep" / "paper_comparison.csv", newline="") as fh:
        assert {r["protocol"] for r in csv.DictReader(fh)} == {f"not the paper's: --quick; {short}"}
    assert f"! GloVe: not the paper's protocol: {short}" in proc.stdout


@pytest.mark.parametrize("p, printed, agrees", [
    (9.99e-5, "10^-5", True), (1e-4, "10^-5", False),  # the paper's 10^-5 is p < 1e-4: the bound itself is not
    (0.0098, ".0098", True), (0.00986, ".0098", False), (0.009849, ".0098", True),
    (6e-5, "10^-4", True), (2e-5, "10^-4", False),  # 10^-4 is an order of magnitude: 3.2e-5 <= p < 1e-4
])
def test_paper_precision_at_its_bounds(p, printed, agrees):
    from isoeat.experiments.paper import format_paper_p, same_printed_p

    assert same_printed_p(p, printed) is agrees
    assert format_paper_p(1e-4) == ".0001" and format_paper_p(9.99e-5) == "10^-4" and format_paper_p(1.0) == "1.0000"


def test_models_accepts_the_names_model_accepts(tmp_path, monkeypatch, capsys):
    """--model glove-6b-100d=... binds GloVe; --models glove-6b-100d chose nothing ('unknown model')."""
    import isoeat.experiments.runner as runner

    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.txt").write_text("a 1 2\n", encoding="utf-8")

    class Ran(Exception):
        pass

    def fake_run(config, out, **kw):
        raise Ran([m.label for m in config.models])

    monkeypatch.setattr(runner, "run_experiment", fake_run)
    with pytest.raises(Ran) as got:
        main(["reproduce", "--model", "glove-6b-100d=glove:g.txt", "--models", "glove-6b-100d", "--quick",
              "--no-extras", "--offline", "--out", "rep"])
    assert got.value.args[0] == ["GloVe"]
    assert main(["reproduce", "--models", "glove-6b-300d", "--offline", "--out", "rep"]) == 2
    assert "unknown model 'glove-6b-300d'" in capsys.readouterr().err
