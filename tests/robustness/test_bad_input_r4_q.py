"""Bad-input catalogue, round 4, group Q: the merged main's regressions on contextual runs.

* The contextual shard check (its shards are whole encoding chunks, issue 40 item 31) applies to a run that is
  sharded: ``--reference-shards K`` or ``--stability R`` (redraws of 100 shards). The merge of the calibrator route
  (wave2-I) dropped that guard, so every contextual quick run on a corpus of fewer than 100 chunks was refused
  ("--stability's --reference-shards 100 ...") though it asked for no redraws. The boundary: ``--stability off``,
  ``auto`` or the default (no redraws for a contextual model) run; ``--stability 2`` (the fewest redraws) is refused
  before anything is encoded, naming the option, the size and the shards the reference can give.
"""

from __future__ import annotations

import hashlib

import pytest

pytest.importorskip("transformers")

from isoeat.cli import main  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::isoeat._errors.IsoeatWarning")

_X, _Y = ["john", "paul", "mike", "kevin"], ["amy", "lisa", "sarah", "kate"]
_A, _B = ["office", "salary", "executive", "manager"], ["family", "wedding", "garden", "home"]
# every word of the 4x4 test in context (16 sentences: one encoding chunk of 1,024)
CORPUS = "\n".join(f"{_X[i]} talked about the {_A[j]} with {_Y[(i + j) % 4]} before going {_B[j]} in the evening."
                   for i in range(4) for j in range(4)) + "\n"
TEST = (f"id: tiny\nbias_type: custom\nX: [{', '.join(_X)}]\nY: [{', '.join(_Y)}]\n"
        f"A: [{', '.join(_A)}]\nB: [{', '.join(_B)}]\n")
_RUN = ["run", "--model", "minilm", "--corpus", "{d}/c.txt", "--tests", "{d}/t.yaml", "--reference-size", "10"]

# (name, argv extra, expected substrings): refused in one line, before anything is encoded
CLI_CASES = [
    ("stability redraws a contextual reference cannot give", ["--stability", "2"],
     ["--stability's --reference-shards 100", "--reference-size 10", "1,024 sentences", "at most 1 shard"]),
    ("reference shards a contextual reference cannot give", ["--reference-shards", "2"],
     ["--reference-shards 2 with --reference-size 10", "at most 1 shard"]),
]

# (name, argv extra): good runs (not bad-input cases: not counted): no redraws asked for, no shard check, exit 0
GOOD_RUNS = [
    ("contextual run, stability by default", []),
    ("contextual run, stability auto", ["--stability", "auto"]),
    ("contextual run, stability off", ["--stability", "off"]),
]


def _snapshot(d):
    return {str(p): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir") for p in d.rglob("*")}


def _files(d):
    (d / "c.txt").write_text(CORPUS, encoding="utf-8")
    (d / "t.yaml").write_text(TEST, encoding="utf-8")
    return d


@pytest.mark.parametrize("name, extra, expected", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_a_sharded_contextual_run_is_refused_before_encoding(tmp_path, capsys, monkeypatch, name, extra, expected):
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(cache))
    d = _files(tmp_path)
    before = _snapshot(d)
    code = main([a.replace("{d}", str(d)) for a in _RUN] + extra)
    err = capsys.readouterr().err
    assert code == 2, (name, err)
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1, err
    for e in expected:
        assert e in err, (e, err)
    assert _snapshot(d) == before  # nothing written
    assert not [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else True  # nothing encoded


@pytest.mark.parametrize("name, extra", GOOD_RUNS, ids=[c[0] for c in GOOD_RUNS])
def test_a_contextual_run_without_redraws_is_not_shard_checked(tmp_path, capsys, monkeypatch, name, extra):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    d = _files(tmp_path)
    code = main([a.replace("{d}", str(d)) for a in _RUN] + extra + ["--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, (name, err)  # every word in context: no fallback, no refusal
    assert "reference-shards" not in err and "isoeat: error" not in err, err
    assert '"tiny"' in out  # the test's row was computed
