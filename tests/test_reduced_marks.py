"""Every reduced reference is marked (issue 45, item 4): a reference smaller than the protocol's 100,000 for any
reason - a short reference text, a short corpus, a small vocabulary, a cap asked for - is stated as a reduced
protocol wherever protocols are stated (the run table's ``!`` line, the records' ``protocol``, the folder's
records, the weat / scweat / metric records); a full-size reference is not.

The expected sizes are derived here independently: the distinct words of the text we write (an upper bound of
what the fit can use), the rows of the model file we write, the sentences of a contextual reference recorded
in the calibrator's metadata.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from isoeat.labels import PAPER_PROTOCOL, protocol_departures, reference_used

BUNDLED = Path(__file__).resolve().parents[1] / "src" / "isoeat" / "corpora" / "data" / "wiki.test.raw.gz"
MARK = "! Reduced protocol, not the paper's: reference "


def _cli(argv: list[str]) -> tuple[int, str, str]:
    from isoeat.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = int(exc.code or 0)
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def text_2000(tmp_path_factory) -> tuple[Path, int]:
    """The first 2,000 words of the bundled WikiText-2 test split, and how many distinct words it has."""
    with gzip.open(BUNDLED, "rt", encoding="utf-8") as f:
        words = f.read().split()[:2000]
    path = tmp_path_factory.mktemp("ref") / "ref2000.txt"
    path.write_text(" ".join(words) + "\n", encoding="utf-8")
    return path, len({w.lower() for w in words})


def _reduced_size(line: str) -> int:
    m = re.match(r"! Reduced protocol, not the paper's: reference ([\d,]+) ", line)
    assert m is not None, line
    return int(m.group(1).replace(",", ""))


# ---------------------------------------------------------------------------- a short reference text

def test_run_with_a_2000_word_reference_text_prints_the_mark(glove, text_2000) -> None:
    path, distinct = text_2000
    rc, out, err = _cli(["run", "--tests", "W1", "--reference-text", str(path), "--stability", "off"])
    assert rc == 0, err
    marks = [line for line in out.splitlines() if line.startswith(MARK)]
    assert len(marks) == 1
    used = _reduced_size(marks[0])
    assert 0 < used <= distinct < 2000  # at most its distinct words (those in the vocabulary)
    assert "asked 100,000, only" in marks[0] and "the paper: 100,000" in marks[0]
    head = out.splitlines()[0]
    assert f"reference: {used} vocabulary words of {path}" in head  # the same size the fit states


@pytest.mark.parametrize("extra", [[], ["--stability", "off"], ["--reference-shards", "20"],
                                   ["--reference-size", "2000"]])
def test_run_records_of_a_reference_text_are_reduced(glove, text_2000, extra) -> None:
    path, distinct = text_2000
    rc, out, err = _cli(["run", "--tests", "W1", "--reference-text", str(path), "--format", "json", *extra])
    assert rc == 0, err
    recs = {r["calibration"]: r for r in json.loads(out)}
    assert recs["none"]["protocol"] == "paper"  # the raw space fits nothing
    m = re.match(r"reduced: reference ([\d,]+) \(", recs["zca"]["protocol"])
    assert m is not None, recs["zca"]["protocol"]
    assert int(m.group(1).replace(",", "")) <= distinct


@pytest.mark.parametrize("command", [["weat", "--test", "W1"], ["scweat", "--words", "W1", "--attributes", "W1"],
                                     ["metric", "ripa", "--test", "W1"]])
def test_other_commands_mark_a_reference_text(glove, text_2000, command) -> None:
    path, distinct = text_2000
    rc, out, err = _cli([*command, "--calibration", "zca", "--reference-text", str(path), "--format", "json"])
    assert rc == 0, err
    recs = json.loads(out)
    cal = [r for r in recs if r.get("calibration") == "zca"]
    assert cal and all(str(r["protocol"]).startswith("reduced: reference ") for r in cal)
    assert all(r["protocol"] == "paper" for r in recs if r.get("calibration") == "none")


def test_folder_of_a_reference_text_is_reduced(glove, text_2000, tmp_path) -> None:
    path, _ = text_2000
    out = tmp_path / "res"
    rc, _, err = _cli(["run", "--tests", "W1", "--reference-text", str(path), "--out", str(out), "-q",
                       "--stability", "off"])
    assert rc == 0, err
    rows = json.loads((out / "comparison.json").read_text())
    assert rows and all(str(r["protocol"]).startswith("reduced: reference ") for r in rows)


# ---------------------------------------------------------------------------- a small vocabulary, a cap

def _small_model(tmp_path: Path, n: int = 60, dim: int = 6) -> tuple[str, Path]:
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(n)]
    vecs = rng.normal(size=(n, dim)) + np.linspace(0, 2, dim)
    vf = tmp_path / "small.txt"
    vf.write_text("".join(w + " " + " ".join(repr(float(x)) for x in v) + "\n" for w, v in zip(words, vecs)))
    tf = tmp_path / "t.yaml"
    tf.write_text("id: T1\nbias_type: Toy\nX: [%s]\nY: [%s]\nA: [%s]\nB: [%s]\n" % tuple(
        ", ".join(words[a:a + 5]) for a in (0, 5, 20, 25)))
    return f"glove:{vf}", tf


def test_a_vocabulary_smaller_than_asked_is_marked(tmp_path) -> None:
    model, tf = _small_model(tmp_path)
    rc, out, err = _cli(["run", "--model", model, "--tests", str(tf), "--stability", "off"])
    assert rc == 0, err
    (mark,) = [line for line in out.splitlines() if line.startswith(MARK)]
    assert _reduced_size(mark) == 60 and "asked 100,000, only 60 available" in mark  # the file's 60 rows


def test_a_cap_asked_for_is_marked(tmp_path) -> None:
    model, tf = _small_model(tmp_path)
    rc, out, err = _cli(["run", "--model", model, "--tests", str(tf), "--reference-size", "40", "--stability", "off",
                         "--format", "json"])
    assert rc == 0, err
    cal = [r for r in json.loads(out) if r["calibration"] == "zca"]
    assert [r["protocol"] for r in cal] == ["reduced: reference 40 (the paper: 100,000)"]


# ---------------------------------------------------------------------------- a short corpus (contextual)

def test_a_short_corpus_is_marked_from_its_sentences() -> None:
    """A contextual reference of 71 sentences (the corpus had no more) over 2,000 word vectors: the sentences
    are the reference's size (the protocol counts sentences), so it is reduced, with the size asked named."""
    from isoeat.experiments.compare import space_departures

    meta = {"n": 2000, "reference_units": 71, "reference_asked": 100_000, "eps": 1e-3}
    assert reference_used(meta) == 71
    assert space_departures(meta, [], None) == (
        "reference 71 (asked 100,000, only 71 available; the paper: 100,000)",)


def test_a_short_corpus_in_a_folder_is_marked() -> None:
    from isoeat.experiments.results import folder_departures

    cfg = {"settings": {"reference": {"size": 100_000}, "eps": 1e-3},
           "calibrations": [{"label": "zca", "name": "zca"}], "models": [{"label": "m", "family": "static"}]}
    manifest = {"calibrators": {"m/zca": {"n": 5000, "reference_units": 300, "reference_asked": 100_000}}}
    (dep,) = folder_departures(cfg, manifest, "m", "zca", [])
    assert dep == "reference 300 (asked 100,000, only 300 available; the paper: 100,000)"


# ---------------------------------------------------------------------------- the full size is not marked

def test_the_full_reference_is_not_marked(glove) -> None:
    rc, out, err = _cli(["run", "--tests", "W1", "--stability", "off", "--format", "json"])
    assert rc == 0, err
    assert {r["protocol"] for r in json.loads(out)} == {"paper"}
    size = PAPER_PROTOCOL["reference_size"]
    assert protocol_departures(reference_size=size, reference_asked=size, eps=1e-3) == ()
    assert protocol_departures(reference_size=size - 1, eps=1e-3) == (
        "reference 99,999 (the paper: 100,000)",)  # one row short: marked (the boundary)
