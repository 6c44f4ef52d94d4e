"""Bad-input catalogue, round 4 (issue 40), group C: the protocol column, the contextual records, the size the
``--reference-size auto`` header states, and the Firm marks.

* PROTOCOL_CASES: a reference made small by anything (a calibrator file fitted on 500 words, a 5-word reference
  text, a 332-row model) is ``reduced`` with its size in every record kind (run, weat, scweat, metric); the raw
  space fits nothing and is the paper's; the run folder and ``--format json`` say the same.
* CONTEXT_CASES: a contextual run's folder records carry ``corpus`` and ``fallback_exceeded``, and ``--contexts 5``
  is marked (MiniLM on a 12-sentence corpus).
* FIRM_CASES: a call whose permutation null cannot reach p < alpha cannot flip (Firm firm, at p_floor == alpha);
  marks asked for on fewer than 20 shards are absent with a line saying why (20 shards: marks).
* CLI_CASES: one-line errors, nothing written.

Every expected number is derived here from the inputs (word counts, binomial coefficients), not pasted from
the program's output.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re

import numpy as np
import pytest

from isoeat.cli import main

PAPER = 100_000  # the paper's reference (§4.1): 100,000 vocabulary items

# small references are the point here: the singular-covariance warning they give is expected
pytestmark = pytest.mark.filterwarnings("ignore::isoeat._errors.IsoeatWarning")


def _reduced(n: int, asked: int | None = None) -> str:
    short = f"asked {asked:,}, only {n:,} available; " if asked is not None and asked > n else ""
    return f"reduced: reference {n:,} ({short}the paper: {PAPER:,})"


def _small_model(path, rows: int) -> None:
    """A GloVe-format text file of ``rows`` words (W6's 32 words first, lower-cased), 10-dimensional."""
    from isoeat.wordsets import get_test

    t = get_test("W6")
    words = list(dict.fromkeys(w.lower() for s in (t.X, t.Y, t.A, t.B) for w in s.words))
    words += [f"filler{i}" for i in range(rows - len(words))]
    rng = np.random.default_rng(0)
    path.write_text("".join(f"{w} " + " ".join(f"{x:.5f}" for x in rng.normal(size=10)) + "\n" for w in words))


def _json(capsys, argv) -> list[dict]:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _by_space(records) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in records:
        out.setdefault("raw" if r["calibration"] == "none" else "calibrated", set()).add(r["protocol"])
    return out


# (name, command and its options ({d}: the case's folder), setup, expected calibrated protocol)
PROTOCOL_CASES = [
    ("protocol: calibrator file fitted on 500 words", ["run", "--tests", "W6", "--calibrator", "{d}/c.npz"],
     "whiten500", _reduced(500)),
    ("protocol: 5-word reference text", ["run", "--tests", "W6", "--reference-text", "{d}/five.txt"],
     "five", _reduced(5, PAPER)),
    ("protocol: 332-row model", ["run", "--tests", "W6", "--model", "glove:{d}/m332.txt"], "m332",
     _reduced(332, PAPER)),
    ("protocol: weat with a 500-word reference", ["weat", "--test", "W6", "--reference-size", "500"], None,
     _reduced(500)),
    ("protocol: weat with a 332-row model", ["weat", "--test", "W6", "--model", "glove:{d}/m332.txt"], "m332",
     _reduced(332, PAPER)),
    ("protocol: scweat with a 500-word reference", ["scweat", "--words", "nurse,engineer", "--attributes", "W6",
                                                    "--reference-size", "500"], None, _reduced(500)),
    ("protocol: metric with a 5-word reference text", ["metric", "ripa", "--test", "W6", "--reference-text",
                                                       "{d}/five.txt"], "five", _reduced(5, PAPER)),
    ("protocol: weat at the paper's reference", ["weat", "--test", "W6"], None, "paper"),
]


def _setup(d, what) -> None:
    if what == "whiten500":
        assert main(["whiten", "--reference-size", "500", "--save", str(d / "c.npz")]) == 0
    elif what == "five":
        (d / "five.txt").write_text("the cat sat on mat\n")  # five distinct words, each in GloVe's vocabulary
    elif what == "m332":
        _small_model(d / "m332.txt", 332)


@pytest.mark.parametrize("name, argv, setup, want", PROTOCOL_CASES, ids=[c[0] for c in PROTOCOL_CASES])
def test_every_record_names_the_reference_its_fit_used(tmp_path, capsys, name, argv, setup, want):
    _setup(tmp_path, setup)
    capsys.readouterr()
    argv = [a.replace("{d}", str(tmp_path)) for a in argv]
    spaces = _by_space(_json(capsys, [*argv, "--format", "json"]))
    assert spaces == {"raw": {"paper"}, "calibrated": {want}}, name  # the raw space fits nothing
    if argv[0] == "run":  # the folder says what --format json says, record by record
        assert main([*argv, "--out", str(tmp_path / "o")]) == 0
        capsys.readouterr()
        folder = json.loads((tmp_path / "o" / "results.json").read_text())
        assert _by_space(folder) == spaces
        comps = list(csv.DictReader(io.StringIO((tmp_path / "o" / "comparison.csv").read_text())))
        assert {r["protocol"] for r in comps} == {want}
    elif want != "paper":  # the table says it too
        assert main(argv) == 0
        assert f"! Reduced protocol, not the paper's: {want.removeprefix('reduced: ')}." in capsys.readouterr().out


REFERENCE_USED_CASES = [  # (name, calibrator metadata, size asked, size used) at the paper's bound
    ("reference used: 99,999 rows seen", {"n": 99_999}, PAPER, 99_999),
    ("reference used: 100,000 rows seen", {"n": 100_000}, PAPER, 100_000),
    ("reference used: contextual sentences, not word vectors", {"n": 700_000, "reference_units": 50_000}, PAPER,
     50_000),
    ("reference used: auto's size", {"n": 25_000, "reference_size": 25_000}, None, 25_000),
]


@pytest.mark.parametrize("name, meta, asked, used", REFERENCE_USED_CASES, ids=[c[0] for c in REFERENCE_USED_CASES])
def test_the_reference_used_is_the_smallest_of_what_was_seen_and_asked(name, meta, asked, used):
    from isoeat.labels import protocol_departures, reference_used

    assert reference_used(meta, asked) == used
    marked = protocol_departures(reference_size=used, reference_asked=asked)
    assert bool(marked) == (used < PAPER)  # strictly below the paper's 100,000: reduced


# --- contextual models (MiniLM, a 12-sentence corpus) -------------------------------------------------------------
from _w6_corpus import W6_SENTENCES as _SENTENCES  # noqa: E402 - the 12-sentence W6 corpus

CONTEXT_CASES = [  # (name, extra options, contexts per word, reference sentences asked)
    ("contextual folder records: corpus, fallback, --contexts 5", ["--contexts", "5"], 5, 200),
]


@pytest.mark.parametrize("name, extra, contexts, asked", CONTEXT_CASES, ids=[c[0] for c in CONTEXT_CASES])
def test_contextual_folder_records_say_corpus_fallback_and_contexts(tmp_path, capsys, monkeypatch, name, extra,
                                                                    contexts, asked):
    pytest.importorskip("transformers")
    from isoeat.wordsets import get_test

    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("\n".join(_SENTENCES) + "\n")
    t = get_test("W6")
    # independent count: a stimulus word falls back when no corpus sentence holds it as a word
    tokens = {w.lower() for s in _SENTENCES for w in re.findall(r"[A-Za-z]+", s)}
    entries = [w for s in (t.X, t.Y, t.A, t.B) for w in s.words]
    fell = [w for w in entries if w.lower() not in tokens]
    exceeded = len(fell) / len(entries) > 0.10
    assert exceeded  # 25 of 32 here
    argv = ["run", "--model", "minilm", "--corpus", str(corpus), "--tests", "W6", "--reference-size", str(asked),
            "--permutations", "100", "--allow-fallback", *extra, "--out", str(tmp_path / "o"), "--format", "json"]
    printed = _json(capsys, argv)
    folder = json.loads((tmp_path / "o" / "results.json").read_text())
    comps = json.loads((tmp_path / "o" / "comparison.json").read_text())
    # the reference: the corpus's 12 sentences of the 200 asked
    cal_want = (f"{_reduced(len(_SENTENCES), asked)}; {contexts} contexts per word (the paper: 20)")
    raw_want = f"reduced: {contexts} contexts per word (the paper: 20)"
    for recs in (printed, folder, comps):
        for r in recs:
            assert r["corpus"] == str(corpus) and r["fallback_exceeded"] is exceeded, (name, r)  # as given
            assert r["protocol"] == (raw_want if r["calibration"] == "none" else cal_want), (name, r["protocol"])
    assert _by_space(folder) == _by_space(printed)


# --- --reference-size auto: the header states the size the fit used -----------------------------------------------
AUTO_CASES = [("auto header states the size used", ["--reference-size", "auto"])]


@pytest.mark.parametrize("name, extra", AUTO_CASES, ids=[c[0] for c in AUTO_CASES])
def test_the_auto_header_states_the_size_used(capsys, name, extra):
    assert main(["run", "--tests", "W6", *extra]) == 0
    out = capsys.readouterr().out
    used = int(re.search(r"reference size used: (\d+) words", out).group(1))
    assert used < PAPER  # auto stopped early on W6 (else the case tests nothing)
    header = out.splitlines()[0]
    assert f"subset: {used} reference vectors drawn without replacement from the first {PAPER}" in header, header
    assert f"subset: {PAPER} reference vectors" not in header
    assert f"! Reduced protocol, not the paper's: reference {used:,} (the paper: {PAPER:,})." in out


# --- Firm: the null's floor, and the fewest shards -----------------------------------------------------------------
# 3 against 3 target words: C(6, 3) = 20 partitions, so p >= 1/20 = 0.05 (one-sided): at alpha = 0.05, p < alpha is
# out of reach (is_significant is strict), and the calibrated call cannot flip on any redraw.
_TINY = {"id": "tiny", "bias_type": "Valence", "X": ["happy", "wonderful", "beautiful"],
         "Y": ["terrible", "horrible", "awful"], "A": ["love", "peace", "health", "friend"],
         "B": ["death", "filth", "murder", "grief"]}
FLOOR = 1 / math.comb(6, 3)

FIRM_CASES = [
    ("firm: p floor equal to alpha cannot flip", 0.05),
]


@pytest.mark.parametrize("name, alpha", FIRM_CASES, ids=[c[0] for c in FIRM_CASES])
def test_a_call_out_of_reach_is_firm(tmp_path, capsys, name, alpha):
    assert FLOOR == alpha  # the boundary: the smallest attainable p is alpha itself
    (tmp_path / "t.json").write_text(json.dumps(_TINY))
    argv = ["run", "--tests", str(tmp_path / "t.json"), "--stability", "100", "--reference-size", "2000",
            "--alpha", str(alpha)]
    recs = _json(capsys, [*argv, "--format", "json", "--out", str(tmp_path / "o")])
    (cal,) = [r for r in recs if r["calibration"] != "none"]
    assert cal["p_value"] >= FLOOR and cal["call_holds"] is True and cal["replicate_share"] == "100/100"
    (row,) = list(csv.DictReader(io.StringIO((tmp_path / "o" / "comparison.csv").read_text())))
    assert row["call_holds"] == "True" and row["replicate_share"] == "100/100"  # the folder agrees
    assert main(argv) == 0
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if ln.startswith("tiny ")]
    assert line.split()[-2:] == ["firm", "-"] and "p < 0.05 is out of reach" in out, out


def test_the_floor_bounds_each_redraw_at_and_below_the_boundary():
    from isoeat.labels import replicate_agreement

    # redraws at larger d move p below the floor along the normal slope; the floor holds them at 1/20
    reps = [1.5, 2.0, 2.5, 3.0]
    assert replicate_agreement(FLOOR, 1.5, reps, 3, 3, 0.05, p_floor=FLOOR) == (4, 4)
    assert replicate_agreement(FLOOR, 1.5, reps, 3, 3, 0.05) != (4, 4)  # without it, they would "flip"
    # alpha just above the floor: p = 1/20 is significant and a redraw can lose it (smaller d): no forced yes
    same, total = replicate_agreement(FLOOR, 1.5, [0.0, 1.5, 3.0], 3, 3, 0.0501, p_floor=FLOOR)
    assert (same, total) == (2, 3)


def _static_shards(rows: int, asked: int = 100) -> int:
    """Shards of a static reference of ``rows`` rows: k = min(asked, rows // 2) (at least 2 rows each), rows cut
    in pieces of ceil(rows / k), so ceil(rows / ceil(rows / k)) of them."""
    k = max(2, min(asked, rows // 2))
    return -(-rows // -(-rows // k))


# the redraws need at least 20 shards (MIN_REDRAW_SHARDS): 40 rows give 20 shards (marks), 39 rows 13 (a note)
SHARD_CASES = [
    ("firm: 39 rows give a note", ["--reference-size", "39"], _static_shards(39)),
    ("firm: 40 rows give marks", ["--reference-size", "40"], _static_shards(40)),
    ("firm: --reference-shards 5 gives a note", ["--reference-size", "2000", "--reference-shards", "5"], 5),
]


@pytest.mark.parametrize("name, extra, shards", SHARD_CASES, ids=[c[0] for c in SHARD_CASES])
def test_firm_marks_asked_for_are_there_or_said_absent(capsys, name, extra, shards):
    assert (_static_shards(39), _static_shards(40)) == (13, 20)
    assert main(["run", "--tests", "W6", "--stability", "100", *extra]) == 0
    out = capsys.readouterr().out
    header = next(ln for ln in out.splitlines() if ln.startswith("ID "))
    note = f"Firm: no marks: the reference sample gave {shards} shard(s) and the redraws need at least 20"
    if shards >= 20:
        assert "Firm" in header.split() and note not in out
    else:
        assert "Firm" not in header.split() and note in out, out


# --- one-line errors, nothing written ------------------------------------------------------------------------------
CLI_CASES = [
    ("stability with a calibration not refitted from statistics",
     ["run", "--tests", "W6", "--stability", "100", "--calibration", "abtt", "--out", "{d}/o"],
     "--stability is not available with calibration 'abtt'"),
]


def _snapshot(d):
    return {str(p): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir") for p in d.rglob("*")}


@pytest.mark.parametrize("name, args, expected", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_bad_input_gives_one_line_error(tmp_path, capsys, name, args, expected):
    before = _snapshot(tmp_path)
    code = main([a.replace("{d}", str(tmp_path)) for a in args])
    err = capsys.readouterr().err
    assert code == 2, (name, err)
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert expected in err, err
    assert _snapshot(tmp_path) == before
