"""Content, not samples: a finished contextual cell is reused only while the corpus its word vectors were
aggregated over is unchanged. A contextual word vector is the mean of the word's vectors in its corpus
contexts, so the raw cells depend on the corpus as much as the calibrated ones (whose calibrator request
already hashes a corpus file), and a named corpus (``wikitext-2`` from ``$ISOEAT_WIKITEXT2``) is read from
files that can change under the same name."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
pytest.importorskip("torch")

from test_layers import REFERENCE  # noqa: E402
from test_transformer import CORPUS, build_tiny  # noqa: E402

TEST = ("id: tiny\nbias_type: custom\nX: [quokka, fox]\nY: [doctor, nurse]\n"
        "A: [garden, flowers]\nB: [violin, concert]\n")
# the same words in other contexts: every test word's aggregated vector changes
OTHER = [s.replace("the ", "a very ").replace("The ", "One ") for s in CORPUS]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return build_tiny(tmp_path_factory.mktemp("content-tiny") / "bert", "bert-uncased")


def _run(bert, corpus, test_file, out, capsys):
    from isoeat.cli import main

    assert main(["run", "--model", f"hf:{bert}", "--tests", str(test_file), "--corpus", corpus, "--device", "cpu",
                 "--no-cache", "--reference-size", "40", "--permutations", "200", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    row = next(csv.DictReader(open(out / "comparison.csv")))
    return float(row["d_raw"]), float(row["d_calibrated"]), printed.out + printed.err


def _expected(bert, corpus, test_file, tmp_path, capsys):
    """The same run into a folder of its own: what the changed corpus gives when nothing is reused."""
    return _run(bert, corpus, test_file, tmp_path / "fresh", capsys)[:2]


@pytest.mark.parametrize("named", [False, True], ids=["corpus-file", "named-corpus"])
def test_a_changed_corpus_recomputes_raw_and_calibrated_contextual_cells(bert, tmp_path, capsys, monkeypatch, named):
    text = tmp_path / "corpus.txt"
    test_file = tmp_path / "tiny.yaml"
    test_file.write_text(TEST)
    text.write_text("\n".join(CORPUS + REFERENCE) + "\n")
    corpus = str(text)
    if named:
        monkeypatch.setenv("ISOEAT_WIKITEXT2", str(text))
        corpus = "wikitext-2"
    out = tmp_path / "run"
    first = _run(bert, corpus, test_file, out, capsys)[:2]
    text.write_text("\n".join(OTHER + REFERENCE) + "\n")  # same path, same name: other contexts
    again = _run(bert, corpus, test_file, out, capsys)[:2]
    want = _expected(bert, corpus, test_file, tmp_path, capsys)
    assert abs(want[0] - first[0]) > 1e-6, "the changed corpus must change the raw d (else this test is void)"
    assert again == pytest.approx(want, abs=1e-9), (first, again, want)
