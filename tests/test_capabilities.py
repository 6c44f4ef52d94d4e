"""One capability check for models (issue 41, item 5): each question about a model has one function in
``isoeat._types`` (a Protocol's isinstance, or the one reader of an optional value), each question about a spec
before loading one function, :func:`isoeat.backends._registry.spec_kind`; no other module asks by a string probe.

Checked on the source (ast, like tests/test_layering.py), then the functions' answers on small doubles.
"""

from __future__ import annotations

import ast
import types
from pathlib import Path

import numpy as np
import pytest

import isoeat
from isoeat import _types
from isoeat.backends._registry import spec_kind

PKG = Path(isoeat.__file__).parent

#: Names a model goes by in the sources: a string probe of any of these is a capability question.
MODEL_NAMES = {"model", "encoder", "enc", "view"}
#: What only a model has: a string probe of these, on whatever name, is a capability question too.
MODEL_ONLY = {"reference_batches", "reference_statistics", "reference_metadata", "reference_vectors",
              "context_vectors", "encode_sentences", "layer_sweep", "corpus_name", "contexts_per_word",
              "reference_unit", "n_layers", "lowercase_fallback", "chunk_size"}
#: The probes that remain, each with its reason (path relative to the package, attribute).
EXCEPTIONS = {
    # the sentence-transformers object a SentenceEncoder wraps (a third-party model), not an isoeat model
    ("backends/sentence.py", "max_seq_length"), ("backends/sentence.py", "tokenizer"),
    ("backends/sentence.py", "register_forward_hook"),  # its torch module's hook: progress per batch
}
#: Spec prefixes read outside the one rule, with their reason.
PREFIX_EXCEPTIONS = {
    # default_family: a paper family guessed from the model's *name* (simcse, minilm), not what the spec loads
    "experiments/config.py",
}


def _target(node: ast.expr) -> str | None:
    """``model`` for ``model`` and ``self.model``: the last name of the probed object."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _probes() -> list[str]:
    found = []
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(PKG).as_posix()
        if rel == "_types.py":
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2):
                continue
            attr = node.args[1]
            if not (isinstance(attr, ast.Constant) and isinstance(attr.value, str)):
                continue
            if (_target(node.args[0]) in MODEL_NAMES or attr.value in MODEL_ONLY) \
                    and (rel, attr.value) not in EXCEPTIONS:
                found.append(f"{rel}:{node.lineno} {node.func.id}({_target(node.args[0])}, {attr.value!r})")
    return found


def test_no_module_asks_a_model_by_a_string_probe():
    """``getattr(model, "...")``/``hasattr(model, "...")`` only in _types.py (before issue 41: 79 of them)."""
    assert _probes() == [], "ask isoeat._types (streams_reference, name_of, ...), not the attribute"


def test_a_spec_is_asked_by_the_one_rule():
    """``spec.startswith("hf:")`` and ``is_contextual_spec`` are gone: ``spec_kind`` answers, before loading."""
    bad = []
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(PKG).as_posix()
        if rel in PREFIX_EXCEPTIONS or rel == "backends/_registry.py":
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "startswith" and node.args:
                arg = node.args[0]
                values = [arg] if isinstance(arg, ast.Constant) else list(getattr(arg, "elts", []))
                if any(isinstance(v, ast.Constant) and str(v.value).lower() in ("hf:", "st:", "hf", "st")
                       for v in values):
                    bad.append(f"{rel}:{node.lineno}")
            if isinstance(node, (ast.Name, ast.Attribute)) and _target(node) in ("is_contextual_spec",
                                                                                 "_is_contextual_spec"):
                bad.append(f"{rel}:{node.lineno} is_contextual_spec")
    assert bad == []


@pytest.mark.parametrize("spec, kind", [
    ("glove-6b-50d", "static"), ("glove:/tmp/v.txt", "static"), ("w2v.bin", "static"), ("", "static"),
    ("hf:bert-base-uncased", "transformer"), ("HF:bert", "transformer"), ("  hf:x  ", "transformer"),
    ("minilm", "transformer"), ("all-MiniLM-L6-v2", "transformer"), ("mpnet", "transformer"),
    ("st:minilm", "sentence"), ("ST:all-mpnet-base-v2", "sentence"), ("hf", "static"), ("st", "static"),
])
def test_spec_kind_says_what_a_spec_loads(spec, kind):
    # the table of backends._registry: hf: and the packaged minilm/mpnet (any name) load as transformer encoders,
    # st: as sentence encoders, everything else as static vectors
    assert spec_kind(spec) == kind


def test_spec_kind_agrees_with_the_loaded_model(glove):
    assert spec_kind("glove-6b-50d") == _types.kind_of(glove) == "static"
    assert not _types.streams_reference(glove)


class _Wrapper:
    """A user's own encoder: lookup only, no name, no kind."""

    def lookup(self, words):  # pragma: no cover - never called here
        raise AssertionError


class _Streaming(_Wrapper):
    name = "streamer"
    dim = 3
    corpus_name = "tiny"
    reference_unit = "word"

    def reference_batches(self, n, **kw):  # pragma: no cover - never called here
        return iter(()), "none"

    @property
    def corpus(self):
        return None

    @property
    def loaded_corpus(self):
        return None

    def context_vectors(self, words):  # pragma: no cover - never called here
        return {}, {}

    contexts_per_word = 7


def test_the_questions_have_one_answer_each():
    plain, stream = _Wrapper(), _Streaming()
    assert (_types.name_of(plain), _types.name_of(plain, "the model"), _types.name_of(stream)) == \
        ("", "the model", "streamer")
    assert (_types.dim_of(plain), _types.dim_of(stream)) == (None, 3)
    assert (_types.kind_of(plain), _types.streams_reference(plain), _types.streams_reference(stream)) == \
        ("static", False, True)
    assert (_types.corpus_name_of(plain), _types.corpus_name_of(stream)) == ("", "tiny")
    assert (_types.contexts_per_word_of(plain), _types.contexts_per_word_of(stream)) == (None, 7)
    assert (_types.reference_unit_of(plain), _types.reference_unit_of(stream)) == ("sentence", "word")
    assert _types.n_layers_of(stream) is None and _types.lowercase_fallback_of(plain) is False
    assert _types.sentence_pooling_of(plain) is None and _types.sentence_encoder_of(plain) is None
    enc = types.SimpleNamespace(encode=lambda texts: np.zeros((len(list(texts)), 2)))
    assert _types.sentence_pooling_of(enc) is None and _types.sentence_encoder_of(enc) is enc.encode
    pooled = types.SimpleNamespace(encode_sentences=lambda t: None, encode=lambda t: None)
    assert _types.sentence_encoder_of(pooled) is pooled.encode_sentences
    assert _types.sentence_encoder_of(types.SimpleNamespace(encode_sentences=None, encode="no")) is None


def test_seat_loads_mpnet_as_the_transformer_it_is(monkeypatch):
    """``isoeat seat --model mpnet`` gets the options of an hf: model (seed, device, sentence reference unit), as
    ``hf:...`` does: the spec is asked by spec_kind, not by its "hf:" prefix (it was loaded with none of them)."""
    import argparse

    import isoeat.backends
    from isoeat.commands.seat import _load_encoder

    got = {}

    def fake(spec, **kw):
        got[spec] = kw
        return types.SimpleNamespace(encode_sentences=lambda t: None)

    monkeypatch.setattr(isoeat.backends, "load_model", fake)
    args = argparse.Namespace(model="mpnet", cache_dir=None, no_cache=False, device="cpu", batch_size=4,
                              allow_pickle=False, corpus=None, dtype=None, normalize=True, seed=5)
    _load_encoder(args)
    args.model = "hf:some/model"
    _load_encoder(args)
    assert got["mpnet"] == got["hf:some/model"]
    assert got["mpnet"]["seed"] == 5 and got["mpnet"]["reference_unit"] == "sentence"
