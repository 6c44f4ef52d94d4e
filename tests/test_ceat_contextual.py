"""CEAT on a contextual encoder: per-context vectors, their cache, and calibrated vs raw (tiny random model)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from isoeat.backends.transformer import TransformerEncoder  # noqa: E402
from isoeat.stats.ceat import ceat  # noqa: E402
from test_transformer import CORPUS, _word_token_positions, build_tiny, direct_states  # noqa: E402


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return build_tiny(tmp_path_factory.mktemp("ceat-tiny") / "bert", "bert-uncased")


@pytest.fixture(scope="module")
def corpus():
    from isoeat.corpora import Corpus

    return Corpus.from_sentences(CORPUS, name="hand-made")


def _enc(folder, corpus, **kw):
    kw.setdefault("use_cache", False)
    return TransformerEncoder(str(folder), corpus=corpus, progress=False, device="cpu", **kw)


def _counting(enc, monkeypatch):
    calls = []
    orig = enc._encode_seqs

    def wrapped(*a, **k):
        calls.append(len(a[0]))
        return orig(*a, **k)

    monkeypatch.setattr(enc, "_encode_seqs", wrapped)
    return calls


def test_a_single_context_row_equals_a_direct_forward_pass(bert, corpus):
    # "violin" occurs in one corpus sentence: its one row is the mean of its tokens' last-layer states there
    vecs, rep = _enc(bert, corpus).context_vectors(["violin"])
    assert vecs["violin"].shape == (1, 32) and rep["contexts"] == {"violin": 1}
    tokens, _, states = direct_states(bert, CORPUS[3])
    expect = states[_word_token_positions(tokens, "violin")].mean(axis=0)
    np.testing.assert_allclose(vecs["violin"][0], expect, atol=1e-5)


def test_rows_average_to_the_lookup_vector(bert, corpus):
    enc = _enc(bert, corpus)
    vecs, _ = enc.context_vectors(["quokka", "garden", "the"])
    assert vecs["quokka"].shape[0] == 2 and vecs["garden"].shape[0] == 2
    lk = _enc(bert, corpus).lookup(["quokka", "garden", "the"])
    for i, w in enumerate(["quokka", "garden", "the"]):
        np.testing.assert_allclose(vecs[w].mean(axis=0), lk.vectors[i], atol=1e-12)


def test_missing_word_follows_the_policy(bert, corpus):
    with pytest.warns(Warning, match="template"):
        vecs, rep = _enc(bert, corpus).context_vectors(["zebra", "fox"])
    assert vecs["zebra"].shape == (1, 32) and rep["fallback"] == ["zebra"]
    vecs, rep = _enc(bert, corpus, missing="drop").context_vectors(["zebra", "fox"])
    assert "zebra" not in vecs and rep["dropped"] == ["zebra"]


def test_second_run_reads_the_cache_and_runs_no_forward_pass(bert, corpus, tmp_path, monkeypatch):
    words = ["quokka", "garden", "doctor", "nurse"]
    first = _enc(bert, corpus, cache_dir=tmp_path, use_cache=True)
    calls = _counting(first, monkeypatch)
    v1, r1 = first.context_vectors(words)
    assert calls and r1["cache_hits"] == 0
    second = _enc(bert, corpus, cache_dir=tmp_path, use_cache=True)
    calls2 = _counting(second, monkeypatch)
    v2, r2 = second.context_vectors(words)
    assert calls2 == [] and r2["cache_hits"] == len(words)
    for w in words:
        np.testing.assert_array_equal(v1[w], v2[w])
    # another contexts_per_word is another key: encoded again
    third = _enc(bert, corpus, cache_dir=tmp_path, use_cache=True, contexts_per_word=1)
    calls3 = _counting(third, monkeypatch)
    third.context_vectors(words)
    assert calls3


class _Identity:
    def transform(self, X):
        return np.array(X, dtype=np.float64)


def _tiny(**sets):
    """The tiny test (an AssociationTest: what ceat takes, with ids and test files)."""
    from isoeat import AssociationTest, WordSet

    words = {"X": ["quokka", "fox"], "Y": ["doctor", "nurse"], "A": ["garden", "flowers"], "B": ["hospital", "violin"],
             **sets}
    return AssociationTest(id="tiny", bias_type="Custom", **{r: WordSet(r, tuple(w)) for r, w in words.items()})


def test_ceat_on_the_tiny_model_identity_calibration_equals_raw(bert, corpus):
    test = _tiny()
    raw, ident = ceat(_enc(bert, corpus), test, calibration={"id": _Identity()}, n_draws=30, rng=4)
    assert ident.effect_sizes == raw.effect_sizes and ident.meta == raw.meta
    assert raw.n_contexts["quokka"] == 2 and raw.test == "tiny"
    again = ceat(_enc(bert, corpus), test, n_draws=30, rng=4)[0]
    assert again.effect_sizes == raw.effect_sizes


def test_cli_prints_raw_beside_calibrated_and_json_has_the_draws(bert, tmp_path, capsys):
    import json

    from isoeat.cli import main

    corpus_file = tmp_path / "corpus.txt"
    # 40 distinct sentences: more reference sentences than the tiny model's 32 dimensions
    corpus_file.write_text("\n".join(f"{s[:-1]} on day {n}." for n in ("one two three four five six seven "
                                                                        "eight").split() for s in CORPUS) + "\n")
    test_file = tmp_path / "tiny.yaml"
    test_file.write_text("id: tiny\nbias_type: custom\nX: [quokka, fox]\nY: [doctor, nurse]\n"
                         "A: [garden, flowers]\nB: [hospital, violin]\n")
    base = ["ceat", "--model", f"hf:{bert}", "--test", str(test_file), "--corpus", str(corpus_file),
            "--device", "cpu", "--no-cache", "--draws", "40", "--reference-size", "40", "--seed", "2"]
    assert main(base + ["--figure", str(tmp_path / "forest.svg")]) == 0
    assert (tmp_path / "forest.svg").read_text().lstrip().startswith("<?xml")
    out = capsys.readouterr().out
    assert "CEAT tiny" in out and "40 draws (seed 2)" in out
    assert [line.split()[0] for line in out.splitlines() if line.split()[:1] in (["raw"], ["zca"])] == ["raw", "zca"]
    assert main(base + ["--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["calibration"] for r in rows] == ["none", "zca"]
    assert len(rows[0]["effect_sizes"]) == 40 and rows[0]["n"] == 40
    # the CES printed is the DerSimonian-Laird combination of the draws it lists (from-scratch check)
    from test_ceat_stats import dl_from_scratch

    for r in rows:
        ces, se, tau2, _, _ = dl_from_scratch(r["effect_sizes"], r["variances"])
        assert (r["ces"], r["se"], r["tau2"]) == pytest.approx((ces, se, tau2), rel=1e-9, abs=1e-15)
    i = base.index("--reference-size")
    raw_only = base[:i] + base[i + 2:]  # the raw space fits nothing: --reference-size would be refused
    assert main(raw_only + ["--calibration", "none", "--format", "csv"]) == 0
    assert capsys.readouterr().out.count("\n") == 2  # header and the raw row


def test_ceat_records_fallback_words(bert, corpus):
    test = _tiny(X=["quokka", "zebra"])
    with pytest.warns(Warning, match="template"):
        raw = ceat(_enc(bert, corpus), test, n_draws=10, rng=0)[0]
    assert raw.fallback == ("X:zebra",) and raw.n_contexts["zebra"] == 1  # one template row to draw
    dropped = ceat(_enc(bert, corpus, missing="drop"), _tiny(X=["quokka", "fox", "zebra"]), n_draws=10, rng=0)[0]
    assert dropped.dropped == ("X:zebra",) and dropped.n_x == 2


def test_cli_variance_and_sidedness_options(bert, tmp_path, capsys):
    import json

    from isoeat.cli import main

    corpus_file = tmp_path / "corpus.txt"
    corpus_file.write_text("\n".join(CORPUS) + "\n")
    test_file = tmp_path / "tiny.yaml"
    test_file.write_text("id: tiny\nbias_type: custom\nX: [quokka, fox]\nY: [doctor, nurse]\n"
                         "A: [garden, flowers]\nB: [hospital, violin]\n")
    base = ["ceat", "--model", f"hf:{bert}", "--test", str(test_file), "--corpus", str(corpus_file),
            "--device", "cpu", "--no-cache", "--draws", "20", "--calibration", "none", "--seed", "1"]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "within-draw variance: published (Guo & Caliskan 2021" in out and "p: two-sided" in out
    assert main(base + ["--variance", "hedges-olkin", "--alternative", "greater", "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["variance"], row["alternative"]) == ("hedges-olkin", "greater")
    n = 4  # (nX + nY)/(nX nY) + d^2/(2 (nX + nY)) with nX = nY = 2
    assert row["variances"] == pytest.approx([n / 4 + d * d / (2 * n) for d in row["effect_sizes"]], rel=1e-12)
    with pytest.raises(SystemExit):
        main(base + ["--alternative", "both"])
