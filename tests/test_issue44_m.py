"""Issue 44 (items 1, 3, 6, 7): the same answer on every machine, reduced protocols marked, Firm and sensitivity
cross-referenced, small wrong words fixed. Each test checks printed text or a number derived here."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
from pathlib import Path

import pytest

from isoeat.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = int(exc.code or 0)
    return rc, out.getvalue(), err.getvalue()


def _isotropy_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Isotropy check"))
    return lines[start:start + 4]


def _hide_shared_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh machine: no data folder beside the checkout, no data variable set."""
    import isoeat.corpora._load as load

    for var in ("ISOEAT_DATA_DIR", "ISOEAT_SHARED_DATA", "ISOEAT_WIKITEXT103", "ISOEAT_WIKITEXT2"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(load, "_shared_roots", lambda: [])
    load.clear_corpus_cache()


# --- item 1: the bundled reference text ---------------------------------------------------------------------

def test_bundled_wikitext2_test_split_is_the_canonical_file() -> None:
    # the canonical WikiText-2 raw test split: 1,290,590 bytes, SHA-256 173c87a5...dd08 (shared/data/README.md 1a,
    # pinned by many public projects); the package ships it gzip-compressed, nothing else changed
    from isoeat.corpora import bundled_wikitext2_test

    data = gzip.decompress(bundled_wikitext2_test().read_bytes())
    assert len(data) == 1_290_590
    digest = hashlib.sha256(data).hexdigest()
    assert digest.startswith("173c87a5") and digest.endswith("dd08")
    assert "wiki.test.raw.gz" in (ROOT / "NOTICE.md").read_text("utf-8")


def test_run_prints_the_same_isotropy_figures_without_the_shared_data(
        monkeypatch: pytest.MonkeyPatch, glove, shared_data: Path) -> None:
    monkeypatch.setenv("ISOEAT_SHARED_DATA", str(shared_data))
    rc, with_shared, _ = _run(["run", "--tests", "W1"])
    assert rc == 0
    _hide_shared_data(monkeypatch)
    from isoeat.corpora import shared_wikitext2_path

    assert shared_wikitext2_path() is None
    rc, fresh, _ = _run(["run", "--tests", "W1"])
    assert rc == 0
    lines = _isotropy_lines(fresh)
    assert lines == _isotropy_lines(with_shared)
    # the corpus named on the line; GloVe 50d on WikiText-2's test types: 0.068 raw, 0.035 after ZCA (frames.py)
    assert "(frame paper: vocabulary items of WikiText-2 (test split, bundled);" in lines[0]
    assert "mean cosine 0.068 " in lines[1] and "after zca: mean cosine 0.035," in lines[2]


def test_a_shared_copy_with_a_training_split_still_comes_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import isoeat.corpora._load as load
    from isoeat.diagnostics.frames import _paper_text

    folder = tmp_path / "corpora" / "wikitext-2-raw-v1"
    folder.mkdir(parents=True)
    (folder / "wiki.train.raw").write_text(" = A = \n the cat sat on the mat .\n", "utf-8")
    _hide_shared_data(monkeypatch)
    monkeypatch.setattr(load, "_shared_roots", lambda: [tmp_path])
    path, desc = _paper_text()
    assert path == folder / "wiki.train.raw" and desc.startswith("WikiText-2 (train split)")
    (folder / "wiki.train.raw").unlink()
    (folder / "wiki.test.raw").write_text(" = A = \n the cat sat on the mat .\n", "utf-8")
    path, desc = _paper_text()  # a shared copy without a training split: the bundled test split, same bytes
    assert path.name == "wiki.test.raw.gz" and desc.startswith("WikiText-2 (test split, bundled)")


# --- item 7: small wrong words -------------------------------------------------------------------------------

def _glove_top(glove, n: int, drop: set[str]):
    """``rank`` of a vocabulary of GloVe 6B 50d's ``n`` most frequent words without ``drop``."""
    def rank(w: str) -> int | None:
        i = glove.row(w)[0]
        return i if i is not None and i < n and w not in drop else None
    return rank


def test_did_you_mean_needs_real_similarity_on_glove(glove) -> None:
    """uncle (GloVe row 5152) missing from a 5,000-word GloVe vocabulary: nothing one edit away is a word there;
    two edits away are once, unable, unclear (five letters, two edits: little in common) - no suggestion now.
    A word of 8 letters (two edits = a quarter of them) still gets its two-edit neighbour."""
    from isoeat._validate import SUGGEST_TWO_EDITS_MIN_LENGTH, suggest_words

    assert SUGGEST_TWO_EDITS_MIN_LENGTH == 8
    assert suggest_words("uncle", _glove_top(glove, 5000, {"uncle"})) == ()
    rank = lambda w: glove.row(w)[0]  # noqa: E731
    assert suggest_words("gladiola", rank)[:1] == ("gladioli",)  # one edit: unchanged
    # the boundary, on GloVe: "govermnt" (8 letters) is two insertions from government, still suggested
    assert "government" in suggest_words("govermnt", _glove_top(glove, 400_000, {"goverment"}))
    assert suggest_words("abcdefxy", {"abcdefgh": 0}.get) == ("abcdefgh",)  # 8 letters, two edits: suggested
    rows = {"abcdefg": 0}
    assert suggest_words("abcdexy", rows.get) == ()  # 7 letters, two substitutions: not


def test_corpus_advice_without_other_corpora_has_no_dangling_or(monkeypatch: pytest.MonkeyPatch) -> None:
    import isoeat.corpora as corpora
    from isoeat.reporting.tables import corpus_advice

    monkeypatch.setattr(corpora, "offline_corpora", lambda: [])
    assert corpus_advice() == "use a larger corpus: --corpus PATH, a text file or folder of your own"
    monkeypatch.setattr(corpora, "offline_corpora", lambda: [{"name": "gensim-wiki"}, {"name": "x"}])
    assert corpus_advice("x") == ("use a larger corpus: present offline: gensim-wiki (--corpus NAME); or "
                                  "--corpus PATH, a text file or folder of your own")
