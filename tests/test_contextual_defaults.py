"""Contextual defaults (issue 32, item 1): the largest corpus present offline by default, named in every table and
record, and a gate on words without a corpus context (marked everywhere; exit 3 unless --allow-fallback)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")

from isoeat.cli import main  # noqa: E402

# the CLI's own warnings (words in the template, a singular tiny reference) are what these runs are about
pytestmark = pytest.mark.filterwarnings("ignore::isoeat._errors.IsoeatWarning")

# W6's 32 words: this corpus mentions seven of them (John, Amy, office, executive, salary, family, wedding),
# leaving 25 of 32 (78.1%) without a context
from _w6_corpus import W6_SENTENCES as _SENTENCES  # noqa: E402 - the 12-sentence W6 corpus


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory):
    p = tmp_path_factory.mktemp("corpus") / "tiny.txt"
    p.write_text("\n".join(_SENTENCES) + "\n", encoding="utf-8")
    return str(p)


def test_the_default_corpus_is_the_largest_present_offline():
    import isoeat
    from isoeat.backends._contextual import DEFAULT_CORPUS
    from isoeat.corpora import offline_corpora

    assert DEFAULT_CORPUS == "auto"
    present = offline_corpora()
    enc = isoeat.load_model("minilm")
    if not present:
        pytest.skip("no corpus present offline")
    assert enc.corpus_name == present[0]["name"] and enc.describe()["corpus"] == present[0]["name"]


def test_too_many_fallbacks_are_marked_and_exit_3_unless_allowed(tiny_corpus, capsys):
    args = ["weat", "--model", "minilm", "--corpus", tiny_corpus, "--test", "W6", "--calibration", "none"]
    assert main(args) == 3
    out, err = capsys.readouterr()
    assert "Template fallback: 25 of 32 stimulus words (78%) had no context in corpus " in out
    assert "! more than 10% of the stimulus words fell back" in out and "--corpus PATH" in out
    (line,) = [ln for ln in err.splitlines() if ln.startswith("isoeat: 25 of 32")]
    assert "(78.1%, over 10%)" in line and "--allow-fallback" in line
    assert main([*args, "--allow-fallback"]) == 0
    capsys.readouterr()
    assert main([*args, "--allow-fallback", "--format", "json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert rec["corpus"] and len(rec["fallback"]) == 25


def test_run_names_the_corpus_in_every_record_and_gates_too(tiny_corpus, capsys):
    args = ["run", "--model", "minilm", "--corpus", tiny_corpus, "--tests", "W6", "--reference-size", "10",
            "--format", "json"]
    assert main(args) == 3
    recs = json.loads(capsys.readouterr().out)
    assert recs and all(r["corpus"] and r["fallback_exceeded"] is True for r in recs)
    assert main([*args, "--allow-fallback"]) == 0
