r"""Contextual word vectors from Hugging Face transformers (``hf:NAME_OR_PATH``).

Word vectors follow the *Aggregated* procedure of Bommasani et al. (2020), as
in the paper's §4.1:

1. for each word, up to ``contexts_per_word`` (default 20) sentences that
   contain it as a whole word are drawn from a reference corpus with a fixed
   seed (:meth:`isoeat.corpora.Corpus.contexts`);
2. each sentence is encoded once; the hidden states of the chosen ``layer``
   (default: the last) at the word's *subword tokens* are mean-pooled: those
   of its first whole-word occurrence in the sentence (``occurrences="first"``,
   the default), or of each occurrence separately, then averaged over the
   occurrences (``occurrences="all"``). The
   word's tokens are found with the tokenizer's offset mapping: every token
   whose character span overlaps the word's span in the sentence (so
   WordPiece ``##`` pieces, and byte-level BPE tokens that carry the word's
   leading space, ``Ġword``, both count, while special tokens never do);
3. the pooled vectors are averaged over the sentences:

.. math::

    \vec w = \frac{1}{|C_w|}\sum_{c\in C_w}\frac{1}{|T_{w,c}|}\sum_{t\in T_{w,c}} h^{(\ell)}_t(c)

A word with no context in the corpus is handled by the ``missing`` policy:
``"fallback"`` (default) encodes it once in a neutral template
(``"This is {}."``) and reports it; ``"drop"`` reports it as missing (without a context in the
corpus, named in the lookup's ``corpus``), dropped like a word missing from a static model.

Reference vectors for whitening (paper §3.3, §4.1: *sentence* inputs) come
from up to ``n`` corpus sentences drawn with the seed, streamed batch by batch
into the covariance (no :math:`n\times d` matrix in memory):

* ``unit="word"`` (default): the pooled vector of every word occurrence in
  those sentences, the same kind of vector WEAT measures. A *word* is a
  maximal run of letters with internal apostrophes or hyphens
  (``[^\W\d_]+(?:['’-][^\W\d_]+)*``, the pattern static models use for
  reference texts); numbers and punctuation are not words. Its tokens are
  again those whose offsets overlap it.
* ``unit="sentence"``: the mean of the layer's hidden states over the
  attention mask (special tokens included, as sentence-transformers' mean
  pooling does).

Inputs longer than the model's maximum are truncated: around the word for
word contexts (a window of the maximum length centred on the word's tokens),
from the end otherwise; every truncation is counted and reported.

This module holds :class:`TransformerEncoder` (model loading, the forward
pass, sentence and reference vectors). Its parts live beside it, shared with
``st:`` where they apply: :mod:`._hf` (model folders, fingerprints, loading
without custom code), :mod:`._contextual` (lazy corpus, streamed reference
vectors and statistics), :mod:`._pooling` (offset-based token assignment,
truncation, batched pooling) and :mod:`._aggregate` (the word lookup). Every
public name this module exported before is still importable from here.
"""

from __future__ import annotations

import hashlib
import os
import re
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError, DataFormatError, IsoeatWarning
from .._validate import check_choice, check_int
from ._aggregate import (
    _ALGO,
    _POOLING,
    FALLBACK_TEMPLATE,
    MISSING_POLICIES,
    OCCURRENCES,
    ContextualLookup,
    _WordAggregation,
    _WordResult,  # noqa: F401  (importable from here, as before)
)
from ._contextual import (
    DEFAULT_CORPUS,
    _as_corpus,  # noqa: F401  (importable from here, as before)
    _ContextualBase,
    _texts_digest,
    _vectors_hit,
    check_template,
)
from ._hf import (  # noqa: F401  (importable from here, as before)
    _MODEL_FILES_SKIP,
    INSTALL_LINE,
    _cfg_get,
    _check_model_folder,
    _file_digest,
    _looks_like_path,
    _offline,
    _quiet_hf,
    _read_config,
    folder_fingerprint,
    load_tokenizer_and_model,
    require_transformers,
    resolve_model_folder,
    select_device,
)
from ._pooling import (
    SENTENCE_POOLINGS,
    _Seq,
    assign_tokens,
    encode_flat,
    encode_sequences,
    keep_one_token,
    length_batches,
    pool_rows,
    pool_rows_layers,
)
from ._precision import check_dtype_device

__all__ = [
    "TransformerEncoder",
    "ContextualLookup",
    "INSTALL_LINE",
    "DEFAULT_CORPUS",
    "FALLBACK_TEMPLATE",
    "MISSING_POLICIES",
    "OCCURRENCES",
    "REFERENCE_UNITS",
    "REFERENCE_WORD_RE",
    "resolve_model_folder",
    "folder_fingerprint",
    "select_device",
    "require_transformers",
    "assign_tokens",
]

REFERENCE_UNITS = ("word", "sentence")
#: What a "word" is for ``unit="word"`` reference vectors.
REFERENCE_WORD_RE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", re.UNICODE)

#: Default ``(batch_size, max_tokens_per_batch)`` by device type: the CPU's are those isoeat has always used
#: (its numbers depend on the batches); a GPU is fed larger length-sorted batches.
DEVICE_BATCHES = {"cpu": (64, 16384), "cuda": (256, 32768)}
#: Whether the reference statistics pass tokenizes the next chunks in a background thread during the forward
#: pass (:func:`isoeat.backends._refpass.prefetched`): None (default) on CUDA only, where the host would otherwise
#: idle while the device computes (on CPU the forward pass keeps every core busy, and measured no faster with
#: it); True or False forces it. Read at call time.
REFERENCE_PREFETCH: bool | None = None

# models whose position ids start after padding_idx, so that max_position_embeddings - padding_idx - 1 are usable
_ROBERTA_LIKE = {"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer", "data2vec-text",
                 "roberta-prelayernorm", "mpnet"}


def _word_spans(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The :data:`REFERENCE_WORD_RE` words of ``texts``: their spans ``(k, 2)`` in their sentence and the sentence
    of each, from one regular-expression pass over the texts joined by newlines (a word never spans one: it is
    letters with apostrophes or hyphens between letters).

    Examples
    --------
    >>> spans, where = _word_spans(["It's here.", "", "Two-fold 2 x"])
    >>> spans.tolist(), where.tolist()
    ([[0, 4], [5, 9], [0, 8], [11, 12]], [0, 0, 2, 2])
    """
    base = np.concatenate([[0], np.cumsum([len(t) + 1 for t in texts])]).astype(np.int64)
    pos = np.fromiter((p for m in REFERENCE_WORD_RE.finditer("\n".join(texts)) for p in m.span()), dtype=np.int64)
    pos = pos.reshape(-1, 2)
    where = np.searchsorted(base, pos[:, 0], side="right") - 1
    return pos - base[where][:, None], where


class TransformerEncoder(_WordAggregation, _ContextualBase):
    """Aggregated contextual word vectors from a Hugging Face model (``hf:NAME_OR_PATH``).

    Parameters
    ----------
    model : str
        A local model folder (``save_pretrained`` layout) or a hub name
        (looked up in the local Hugging Face cache; downloaded only when the
        hub is reachable).
    name : str, optional
        Spec for reports (default ``"hf:" + model``).
    layer : int, default -1
        Hidden-state index: ``0`` is the embedding output, ``1..L`` the
        layers, negative values count from the end (``-1``: last layer).
    corpus : str, Corpus or list of str, optional
        Where contexts and reference sentences come from (default
        ``"auto"``, the largest corpus present offline; the paper used WikiText-103: ``"wikitext-103"``).
    contexts_per_word : int, default 20
        Sentences per word (Bommasani et al. 2020, paper §4.1).
    occurrences : {"first", "all"}, default "first"
        Which occurrences of the word in a context sentence are pooled.
        ``"first"``: only the first whole-word occurrence (the vectors isoeat
        has always computed). ``"all"``: every whole-word occurrence is pooled
        on its own (mean of its subword tokens) and the sentence's vector is
        the mean of those, so a sentence counts once however often the word
        occurs in it; occurrences cut off by truncation are left out. Part of
        the embedding-cache key.
    seed : int, default 0
        Seed of context and reference sampling.
    missing : {"fallback", "drop"}
        Words with no context: encode in ``fallback_template`` (reported), or
        report as missing (no context in the corpus).
    fallback_template : str, default "This is {}."
    reference_unit : {"word", "sentence"}
        Default unit of :meth:`reference_batches`.
    batch_size : int, optional
        Sentences per forward pass (batches are length-bucketed); default
        64 on CPU, 256 on CUDA (:data:`DEVICE_BATCHES`).
    max_tokens_per_batch : int, optional
        Also caps a batch at this many (padded) tokens; default 16384 on CPU,
        32768 on CUDA.
    max_length : int, optional
        Maximum input length in tokens (default: the model's).
    device : str, optional
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``; default: CUDA when present.
    dtype : {"float32", "tf32", "bfloat16", "float16"}, default "float32"
        Precision of the forward pass (:mod:`isoeat.backends._precision`):
        float32 is the published protocol; the others are opt-in, faster on a
        GPU and slightly different (``tf32`` and ``float16`` need CUDA). Pooling
        and reference statistics are accumulated in float32 and float64 whatever
        it is. Part of the fingerprint and of every cache key.
    progress : bool, optional
        Progress line on stderr, the one reporter of :mod:`isoeat._progress`
        (default None: when stderr is a terminal or ``ISOEAT_PROGRESS=1``).
    cache_dir : path, optional
        Embedding cache folder (default ``$ISOEAT_CACHE_DIR`` or ``~/.cache/isoeat``).
    use_cache : bool, optional
        Default: on unless ``$ISOEAT_NO_CACHE`` is set.
    chunk_size : int, default 1024
        Reference sentences per streamed batch (and per cache file).

    Attributes
    ----------
    last_report : dict
        What the last :meth:`lookup` did: fallbacks, drops, contexts per word,
        truncations, cache hits.

    Examples
    --------
    >>> m = TransformerEncoder("/path/to/bert-base-cased", corpus="wikitext-103")  # doctest: +SKIP
    >>> lk = m.lookup(["doctor", "nurse"])  # doctest: +SKIP
    >>> lk.vectors.shape  # doctest: +SKIP
    (2, 768)
    """

    kind = "transformer"

    def __init__(
        self,
        model: str,
        *,
        name: str | None = None,
        layer: int = -1,
        corpus: Any = None,
        contexts_per_word: int = 20,
        occurrences: str = "first",
        seed: int = 0,
        missing: str = "fallback",
        fallback_template: str = FALLBACK_TEMPLATE,
        reference_unit: str = "word",
        batch_size: int | None = None,
        max_tokens_per_batch: int | None = None,
        max_length: int | None = None,
        device: str | None = None,
        dtype: str | None = None,
        progress: bool | None = None,
        cache_dir: str | os.PathLike | None = None,
        use_cache: bool | None = None,
        chunk_size: int = 1024,
        sentence_pooling: str = "mean",
        _folder: Path | None = None,
        _source: str | None = None,
    ) -> None:
        layer = check_int("layer", layer)
        self.contexts_per_word = check_int("contexts_per_word", contexts_per_word, lo=1)
        self.occurrences = check_choice("occurrences", occurrences, OCCURRENCES)
        self.seed = check_int("seed", seed, lo=0)
        self.missing = check_choice("missing", missing, MISSING_POLICIES)
        self.fallback_template = check_template(fallback_template, name="fallback_template")
        self.reference_unit = check_choice("reference_unit", reference_unit, REFERENCE_UNITS)
        # None: sized for the device when the model is loaded (DEVICE_BATCHES)
        self.batch_size = None if batch_size is None else check_int("batch_size", batch_size, lo=1)
        self.max_tokens_per_batch = (None if max_tokens_per_batch is None
                                     else check_int("max_tokens_per_batch", max_tokens_per_batch, lo=16))
        self.chunk_size = check_int("chunk_size", chunk_size, lo=1)
        self.sentence_pooling = check_choice("sentence_pooling", sentence_pooling, SENTENCE_POOLINGS)
        if max_length is not None:
            max_length = check_int("max_length", max_length, lo=4)
        self._max_length_arg = max_length
        self._init_source(model, "hf", name=name, corpus=corpus, device=device, progress=progress,
                          cache_dir=cache_dir, use_cache=use_cache, folder=_folder, source=_source, dtype=dtype)
        self._config = _read_config(self.folder)
        n_layers = _cfg_get(self._config, "num_hidden_layers", "n_layer", "num_layers")
        self.n_layers = n_layers
        self._layer_arg = int(layer)
        if n_layers is not None:
            self.layer = self._normalise_layer(int(layer), n_layers)
        else:  # resolved once the model is loaded
            self.layer = int(layer)
        dim = _cfg_get(self._config, "hidden_size", "n_embd", "d_model", "dim")
        self._dim = int(dim) if dim is not None else None
        self._tokenizer: Any = None
        self._backend: Any = None
        self._memo: dict[str, _WordResult] = {}
        self._template_memo: dict[tuple[str, str], np.ndarray] = {}
        self._stats_memo: dict[tuple, tuple[Any, int]] = {}
        self._sweep: Any = None  # the LayerSweep this encoder is one layer of
        self._parent: Any = None  # the encoder whose model and corpus a layer view shares

    # -- layers ------------------------------------------------------------
    def layer_sweep(self, layers: Any = "all", *, name: str = "layers") -> Any:
        """Every layer in ``layers`` from the same forward passes: a :class:`~isoeat.backends._layers.LayerSweep`.

        ``layers``: ``"all"`` (0, the embedding output, to ``n_layers``), ``"0,6,12"``
        or a list of indices; ``name`` is the parameter named in errors. Each
        ``sweep[layer]`` is an encoder at that layer (``lookup``,
        ``reference_statistics``, calibration, WEAT) whose model runs are shared
        with the other layers and whose results equal a single-layer encoder's.
        """
        from ._layers import LayerSweep

        return LayerSweep(self, layers, name=name)

    def _layer_view(self, layer: int, sweep: Any) -> TransformerEncoder:
        """This encoder at ``layer``, sharing its model, corpus and cache, with its own memories."""
        import copy

        view = copy.copy(self)
        view.__dict__.pop("_contexts_memo", None)
        view.__dict__.pop("_vectors_memo", None)
        view.layer = view._layer_arg = int(layer)
        view._memo, view._template_memo, view._stats_memo = {}, {}, {}
        view.last_report = {}
        view._sweep, view._parent = sweep, self
        return view

    def _swept_statistics(self, sents: Sequence[str], unit: str) -> tuple[Any, int] | None:
        """Reference statistics from this view's sweep (every layer at once), or None outside a sweep."""
        return None if self._sweep is None else self._sweep.reference_statistics(self, sents, unit)

    def _remember_vectors(self, key: str, chunks: list[tuple[np.ndarray, int]]) -> None:
        """Keep the vectors as :class:`_ContextualBase` does; a layer view also makes its sweep drop the others'."""
        super()._remember_vectors(key, chunks)
        if self._sweep is not None:
            self._sweep.forget_others(self)

    def _swept_vectors(self, sents: Sequence[str], unit: str) -> list[tuple[np.ndarray, int]] | None:
        """Per-chunk reference vectors from this view's sweep (every layer at once), or None (no sweep, over budget)."""
        return None if self._sweep is None else self._sweep.reference_vectors(self, sents, unit)

    # -- identity ----------------------------------------------------------
    @staticmethod
    def _normalise_layer(layer: int, n_layers: int) -> int:
        n_states = n_layers + 1
        if not -n_states <= layer < n_states:
            raise ConfigError(
                f"layer must lie in [{-n_states}, {n_layers}] for this model ({n_layers} layers plus the "
                f"embedding output at 0), got {layer}"
            )
        return layer % n_states

    def __repr__(self) -> str:
        return f"TransformerEncoder(name={self.name!r}, layer={self.layer}, dim={self._dim})"

    @property
    def fingerprint(self) -> str:
        """Hash of the model folder, the layer, the pooling and the dtype (unless float32): which vector space this is.

        A whitener fitted on this encoder is refused for another layer, model or precision.
        """
        # a text pooled by one token is another space of sentence vectors (the default, mean, keeps its fingerprint)
        pool = "" if self.sentence_pooling == "mean" else f"|sentence-pooling={self.sentence_pooling}"
        h = hashlib.sha256(f"hf|{self.model_fingerprint}|layer={self.layer}|{_POOLING}{pool}{self._dtype_tag()}"
                           .encode())
        return h.hexdigest()[:16]

    @property
    def sentence_pooling_name(self) -> str:
        """How a whole text is pooled (SEAT records it): ``"hf: mean"``, ``"hf: cls"`` or ``"hf: last"``."""
        return f"hf: {self.sentence_pooling}"

    def _sentence_pool_label(self) -> str:
        """The cache and metadata label of the sentence pooling (``attention-mean`` as before for the mean)."""
        return "attention-mean" if self.sentence_pooling == "mean" else f"{self.sentence_pooling}-token"

    def _settings(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "n_layers": self.n_layers,
            "pooling": _POOLING,
            "sentence_pooling": self.sentence_pooling,
            "contexts_per_word": self.contexts_per_word,
            "occurrences": self.occurrences,
            "missing": self.missing,
            "fallback_template": self.fallback_template,
            "seed": self.seed,
            "corpus": self.corpus_name,
        }

    # -- model -------------------------------------------------------------
    def _load(self) -> None:
        if self._model is not None:
            return
        if self._parent is not None:  # a layer view: the parent's model, loaded once
            self._parent._load()
            for attr in ("_tokenizer", "_backend", "_model", "_torch", "device", "_pad_id", "max_length", "_dim",
                         "batch_size", "max_tokens_per_batch"):
                setattr(self, attr, getattr(self._parent, attr))
            return
        device = select_device(self._device_arg)
        check_dtype_device(self.dtype, device)  # refused before anything loads
        tok, model, torch = load_tokenizer_and_model(self.folder, allow_pickle=self.allow_pickle)
        backend = getattr(tok, "backend_tokenizer", None) if getattr(tok, "is_fast", False) else None
        if backend is None:
            raise DataFormatError(
                f"{self.folder}: the tokenizer has no fast (Rust) version, which word pooling needs for its "
                "offset mapping; add a tokenizer.json to the folder"
            )
        from tokenizers import Tokenizer

        backend = Tokenizer.from_str(backend.to_str())  # a private copy: no truncation, no padding
        backend.no_truncation()
        backend.no_padding()
        self.device = device
        cuda = device.startswith("cuda")
        if self.batch_size is None:
            self.batch_size = DEVICE_BATCHES["cuda" if cuda else "cpu"][0]
        if self.max_tokens_per_batch is None:
            self.max_tokens_per_batch = DEVICE_BATCHES["cuda" if cuda else "cpu"][1]
        model.eval()
        model.to(self.device)
        cfg = model.config
        n_layers = getattr(cfg, "num_hidden_layers", None) or getattr(cfg, "n_layer", None)
        if self.n_layers is None and n_layers:
            self.n_layers = int(n_layers)
            self.layer = self._normalise_layer(self._layer_arg, self.n_layers)
        if self._dim is None:
            self._dim = int(getattr(cfg, "hidden_size", None) or cfg.n_embd)
        pad = tok.pad_token_id
        if pad is None:
            pad = getattr(cfg, "pad_token_id", None)
        if pad is None:
            pad = tok.eos_token_id if tok.eos_token_id is not None else 0
        self._pad_id = int(pad)
        self.max_length = self._resolve_max_length(tok, cfg)
        self._tokenizer, self._backend, self._model, self._torch = tok, backend, model, torch

    def _resolve_max_length(self, tok: Any, cfg: Any) -> int:
        limits = []
        mml = getattr(tok, "model_max_length", None)
        if isinstance(mml, int) and 0 < mml < 1_000_000:
            limits.append(mml)
        mpe = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
        if isinstance(mpe, int) and mpe > 0:
            if getattr(cfg, "model_type", "") in _ROBERTA_LIKE:
                mpe -= (getattr(cfg, "pad_token_id", 1) or 1) + 1  # positions start after padding_idx
            limits.append(mpe)
        model_max = min(limits) if limits else 512
        if self._max_length_arg is not None:
            if self._max_length_arg > model_max:
                raise ConfigError(f"max_length {self._max_length_arg} exceeds the model's maximum of "
                                  f"{model_max} tokens")
            return self._max_length_arg
        return model_max

    @property
    def max_length_key(self) -> int | str:
        """Cache-key form of the length limit without loading the model."""
        return self._max_length_arg if self._max_length_arg is not None else "model"

    # -- the pipeline --------------------------------------------------------
    def _encode_seqs(self, sentences: Sequence[str], jobs: Sequence[Any], mode: str) -> tuple[list[_Seq], int]:
        """Tokenize and assign tokens to output rows (see :func:`~isoeat.backends._pooling.encode_sequences`).

        ``mode="focus"``: ``jobs[i]`` is ``(start, end, row)``, one word per
        sentence, truncation centred on it; ``"focus-words"``: ``(spans (k,2),
        rows (k,))``, the occurrences of one word, truncation centred on them.
        ``mode="words"``: ``jobs[i]`` is ``(spans (k,2), rows (k,))``, truncation
        from the end. ``mode="all"``: ``jobs[i]`` is the row; every token
        (specials too) is pooled.
        """
        self._load()
        encs = self._backend.encode_batch(list(sentences), add_special_tokens=True)
        return encode_sequences(encs, jobs, mode, self.max_length)

    def _pool(self, seqs: Sequence[_Seq], n_rows: int, desc: str) -> tuple[np.ndarray, np.ndarray]:
        """Forward every sequence once; per output row the mean of its tokens' states, and the count.

        Returns ``(means (n_rows, dim) float32, counts (n_rows,))``; rows with
        no token have count 0 and a zero vector.
        """
        self._load()
        batches = length_batches([len(s.ids) for s in seqs], self.batch_size, self.max_tokens_per_batch)
        with self._progress(len(seqs), desc) as bar, self._precision():
            return pool_rows(self._hidden(), self._torch, seqs, n_rows, dim=self.dim, device=self.device,
                             pad_id=self._pad_id, batches=batches, bar=bar)

    def _hidden(self) -> Any:
        """``hidden(input_ids, attention_mask)``: the forward pass, returning this layer's states ``(b, L, dim)``."""
        self._load()
        need_hidden = self.layer != self.n_layers

        def hidden(ids: Any, mask: Any) -> Any:
            out = self._model(input_ids=ids, attention_mask=mask, output_hidden_states=need_hidden)
            return out.hidden_states[self.layer] if need_hidden else out.last_hidden_state

        return hidden

    def _pool_layers(self, seqs: Sequence[_Seq], n_rows: int, desc: str, layers: Sequence[int],
                     batches: Sequence[list[int]] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_pool` for every hidden-state index in ``layers`` from the same forward passes.

        ``batches``: lists of indices into ``seqs`` (default: :func:`length_batches`, as :meth:`_pool` runs them).
        Returns ``(means (len(layers), n_rows, dim) float32, counts (n_rows,))``.
        """
        self._load()
        layers = tuple(int(x) for x in layers)

        def hidden(ids: Any, mask: Any) -> Any:
            out = self._model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
            return [out.hidden_states[x] for x in layers]

        if batches is None:
            batches = length_batches([len(s.ids) for s in seqs], self.batch_size, self.max_tokens_per_batch)
        with self._progress(len(seqs), desc) as bar, self._precision():
            return pool_rows_layers(hidden, self._torch, seqs, n_rows, n_layers=len(layers), dim=self.dim,
                                    device=self.device, pad_id=self._pad_id, batches=batches, bar=bar)

    # -- sentences -----------------------------------------------------------
    def encode_sentences(self, texts: Iterable[str]) -> np.ndarray:
        """Each text's vector at the layer, ``(n, dim)`` float64, pooled as ``sentence_pooling`` says.

        The sentence vector SEAT uses for ``hf:`` models: ``"mean"`` (default), the mean of the hidden states over
        the attention mask (special tokens included, as sentence-transformers' mean pooling); ``"cls"``, the first
        token's state; ``"last"``, the last token's (see :data:`~isoeat.backends._pooling.SENTENCE_POOLINGS`).
        """
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim))
        key = {"kind": "hf-sentences", "algo": _ALGO, "model": self.model_key, "layer": self.layer,
               "pooling": self._sentence_pool_label(), "max_length": self.max_length_key, "texts": _texts_digest(texts),
               "n": len(texts)}
        hit = self.cache.get("hf-sentences", key)
        if hit is not None and "vectors" in hit and hit["vectors"].shape == (len(texts), self.dim):
            return hit["vectors"].astype(np.float64)
        seqs, n_trunc = self._encode_seqs(texts, list(range(len(texts))), "all")
        means, _ = self._pool(keep_one_token(seqs, self.sentence_pooling), len(texts), "sentences")
        if n_trunc:
            warnings.warn(f"{self.name}: {n_trunc} text(s) longer than the model's maximum of {self.max_length} "
                          "tokens were truncated", IsoeatWarning, stacklevel=2)
        self.cache.put("hf-sentences", key, {"vectors": means})
        return means.astype(np.float64)

    # -- reference vectors for calibration (streamed by _ContextualBase) -----
    _stats_kind = "hf-reference-stats"
    _truncation_note = "longer than the model's maximum were truncated (their end is not used)"

    def _check_unit(self, unit: str | None) -> str:
        return check_choice("unit", unit or self.reference_unit, REFERENCE_UNITS)

    def _meta(self, n: int, unit: str, corp: Any, seed: int, sents: Sequence[str]) -> dict[str, Any]:
        return {
            "unit": unit,
            "pooling": _POOLING if unit == "word" else self._sentence_pool_label(),
            "word_pattern": REFERENCE_WORD_RE.pattern if unit == "word" else None,
            **self._corpus_meta(n, corp, seed, sents),
            "layer": self.layer,
            "model": self.name,
        }

    def _reference_words(self, meta: dict[str, Any]) -> tuple[str, str]:
        what = ("pooled vectors of every word occurrence (letters-only words, subword-mean)" if meta["unit"] == "word"
                else "mean-pooled sentence vectors (attention mask)" if self.sentence_pooling == "mean"
                else f"sentence vectors of the {self.sentence_pooling} token")
        return what, f"; layer {meta['layer']} of {self.name}"

    def _reference_key(self, chunk: Sequence[str], unit: str) -> dict[str, Any]:
        return {"kind": "hf-reference", "algo": _ALGO, "model": self.model_key, "layer": self.layer,
                "unit": unit, "pooling": _POOLING if unit == "word" else self._sentence_pool_label(),
                "word_pattern": REFERENCE_WORD_RE.pattern if unit == "word" else None,
                "max_length": self.max_length_key, "sentences": _texts_digest(chunk), "n_sentences": len(chunk)}

    def _reference_rows(self, sentence: str, unit: str) -> int:
        """Pooled rows a reference sentence gives: its words (``unit="word"``) or 1."""
        return 1 if unit == "sentence" else sum(1 for _ in REFERENCE_WORD_RE.finditer(sentence))

    def _reference_seqs(self, chunk: Sequence[str], unit: str) -> tuple[list[_Seq], int, int]:
        """Tokenized reference sentences with their rows assigned: sequences, truncations, rows."""
        self._load()
        chunk = list(chunk)
        encs = self._backend.encode_batch(chunk, add_special_tokens=True)
        if unit == "sentence":
            seqs, nt = encode_flat(encs, self.max_length)
            return keep_one_token(seqs, self.sentence_pooling), nt, len(chunk)
        spans, where = _word_spans(chunk)
        seqs, nt = encode_flat(encs, self.max_length, texts=chunk, spans=spans, span_text=where)
        return seqs, nt, len(spans)

    def _chunk_vectors(self, chunk: Sequence[str], unit: str) -> tuple[np.ndarray, int]:
        """Reference vectors of one chunk of sentences (float64) and its truncation count, cached."""
        key = self._reference_key(chunk, unit)
        hit = self.cache.get("hf-reference", key)
        if _vectors_hit(hit, self.dim):
            return hit["vectors"].astype(np.float64), int(hit.get("truncated", 0))
        seqs, nt, n_rows = self._reference_seqs(chunk, unit)
        means, counts = self._pool(seqs, n_rows, f"reference ({unit})")
        vecs = np.ascontiguousarray(means[counts > 0])
        self.cache.put("hf-reference", key, {"vectors": vecs, "truncated": np.int64(nt)})
        return vecs.astype(np.float64), nt

    # -- reference statistics: pooled and accumulated on the model's device (_refpass) ------------
    def _moments(self, vecs: np.ndarray) -> Any:
        """Statistics of one chunk's vectors, accumulated where they are: with the model loaded, as
        :func:`~isoeat.backends._refpass.statistics_pass` accumulates them (float64 on the model's device), so
        vectors kept from a pass give its numbers exactly; vectors read from the cache with the model not
        loaded, on the host (the same to rounding, about 1e-16 relative), without loading it."""
        from ..calibration.moments import DeviceAccumulator

        if self._model is None:
            return super()._moments(vecs)
        X = self._torch.from_numpy(np.ascontiguousarray(vecs, dtype=np.float64)).to(self.device)
        return DeviceAccumulator(self.dim, self._torch, self.device).update(X).to_host()

    def _keeps_vectors(self, sents: Sequence[str], unit: str) -> bool:
        """Whether the statistics pass hands back (and caches) the vectors: when all of them, float64, fit
        :data:`~isoeat.backends._contextual.VECTORS_MEMO` (counted by words before any pass), as a following
        ``reference_vectors`` of the same sentences would keep them; else only O(d^2) statistics leave the device."""
        from . import _contextual

        budget = _contextual.VECTORS_MEMO
        per_row = 8 * self.dim
        rows = 0
        for s in sents:
            rows += self._reference_rows(s, unit)
            if rows * per_row > budget:
                return False
        return True

    def _statistics_pass(self, chunks: Sequence[Sequence[str]], unit: str, *, bar: Any,
                         keep: bool) -> Any:
        """Chunks whose vectors are cached: their statistics from those; the others from one
        :func:`~isoeat.backends._refpass.statistics_pass` (vectors cached too with ``keep``)."""
        from ._refpass import statistics_pass

        run = []
        for j, chunk in enumerate(chunks):
            hit = self.cache.get("hf-reference", self._reference_key(chunk, unit))
            if _vectors_hit(hit, self.dim):
                vecs = hit["vectors"].astype(np.float64)
                bar.skip(len(chunk), work=float(sum(len(s) for s in chunk)))
                yield j, self._moments(vecs), int(hit.get("truncated", 0)), vecs
            else:
                run.append(j)
        if not run:
            return
        self._load()
        prefetch = self.device.startswith("cuda") if REFERENCE_PREFETCH is None else bool(REFERENCE_PREFETCH)
        for k, acc, nt, vecs in statistics_pass(self, [chunks[j] for j in run], unit, keep=keep, bar=bar,
                                                prefetch=prefetch):
            if vecs is not None:
                self.cache.put("hf-reference", self._reference_key(chunks[run[k]], unit),
                               {"vectors": vecs, "truncated": np.int64(nt)})
                vecs = vecs.astype(np.float64)
            yield run[k], acc, nt, vecs
