"""Sentence encoders (``st:NAME_OR_PATH``, sentence-transformers) and SEAT templates.

SEAT (May et al. 2019) measures sentence encoders by placing each stimulus
word into *semantically bleached* templates ("This is {}.", "{} is here.")
and running WEAT on the sentence embeddings; as the tutorial advises, the
effect size is reported per template and summarised by its mean and range
across templates (see :func:`isoeat.commands.seat.seat`).

:class:`SentenceEncoder` follows the :class:`~isoeat.backends.base.Encoder`
protocol: :meth:`~SentenceEncoder.lookup` embeds each word placed in one
template (default ``"{}"``, the bare word, as May et al. encode their
word-level tests), :meth:`~SentenceEncoder.encode` embeds any texts, and
:meth:`~SentenceEncoder.reference_batches` streams sentence embeddings of
corpus sentences for whitening (paper §4.1: sentence inputs).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError, IsoeatWarning
from .._validate import check_bool, check_int
from ..wordsets._templates import (  # noqa: F401 - SEAT templates are stimulus data (wordsets); importable here
    DEFAULT_TEMPLATES,
    fill_template,
    load_templates,
    validate_templates,
)
from ._contextual import (
    _as_corpus,  # noqa: F401  (importable from here, as before)
    _ContextualBase,
    _texts_digest,
    check_template,
)
from ._hf import (  # noqa: F401  (importable from here, as before)
    INSTALL_LINE,
    _quiet_hf,
    _read_config,
    folder_fingerprint,
    load_sentence_transformer,
    require_sentence_transformers,
    resolve_model_folder,
    select_device,
)
from ._precision import check_dtype_device
from .base import Lookup

__all__ = [
    "SentenceEncoder",
    "DEFAULT_TEMPLATES",
    "fill_template",
    "check_template",
    "validate_templates",
    "load_templates",
    "require_sentence_transformers",
]

_ST_POOLING_MODES = (("cls_token", "cls"), ("mean_tokens", "mean"), ("max_tokens", "max"),
                     ("mean_sqrt_len_tokens", "mean-sqrt-len"), ("weightedmean_tokens", "weighted-mean"),
                     ("lasttoken", "last"))


def _st_pooling(folder: Path) -> str:
    """The pooling of a sentence-transformers folder as SEAT records it (``"st: mean"``; several modes joined by
    ``+``), read from its Pooling module's config without loading the model; ``"st: unknown"`` where unreadable."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        pool = next(m for m in modules if str(m.get("type", "")).endswith("Pooling"))
        cfg = json.loads((folder / str(pool.get("path", "")) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError, AttributeError, StopIteration):
        return "st: unknown"
    modes = [short for key, short in _ST_POOLING_MODES if cfg.get(f"pooling_mode_{key}")]
    return "st: " + ("+".join(modes) if modes else "unknown")


def _st_dim(folder: Path) -> int | None:
    """Output dimension from the sentence-transformers module configs, without loading the model."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        modules = None
    dim = None
    if isinstance(modules, list):
        for m in modules:
            if not isinstance(m, dict):
                continue
            typ, sub = str(m.get("type", "")), folder / str(m.get("path", ""))
            try:
                cfg = json.loads((sub / "config.json").read_text(encoding="utf-8")) if m.get("path") else {}
            except (OSError, ValueError):
                cfg = {}
            pool_dim = cfg.get("word_embedding_dimension", cfg.get("embedding_dimension"))
            if typ.endswith("Pooling") and isinstance(pool_dim, int):
                dim = pool_dim
            elif typ.endswith("Dense") and isinstance(cfg.get("out_features"), int):
                dim = cfg["out_features"]
            elif typ.endswith(("Transformer", "Normalize")):
                continue
            elif typ:
                return None  # an unknown module might change the dimension: ask the model
    if dim is None:
        cfg = _read_config(folder)
        d = cfg.get("hidden_size") or cfg.get("d_model") or cfg.get("dim")
        dim = int(d) if isinstance(d, int) else None
    return dim


@contextlib.contextmanager
def _counting_batches(model: Any, bar: Any, texts: Sequence[str]) -> Iterator[list[int]]:
    """While the block runs, each forward pass of ``model`` (a ``torch.nn.Module``) counts its batch's texts into
    ``bar`` (at most ``len(texts)`` in all); yields the count so far, ``[n]``. The progress line then advances per
    batch, not per call, without changing how sentence-transformers batches the texts. Each batch's work (for a
    weighed bar, :meth:`isoeat._progress.Progress.weigh`) is the characters of its texts: sentence-transformers
    sorts a call's texts by characters, longest first, so the k-th batch holds the k-th run of those lengths."""
    counted = [0]
    lengths = sorted((len(t) for t in texts), reverse=True)

    def hook(_module: Any, _args: Any, out: Any) -> None:
        rows = out.get("sentence_embedding") if callable(getattr(out, "get", None)) else None  # a BatchEncoding
        n = min(int(getattr(rows, "shape", (0,))[0]) if rows is not None else 0, len(texts) - counted[0])
        if n > 0:
            bar.update(n, work=float(sum(lengths[counted[0]:counted[0] + n])))
            counted[0] += n

    register = getattr(model, "register_forward_hook", None)
    handle = register(hook) if callable(register) else None
    try:
        yield counted
    finally:
        if handle is not None:
            handle.remove()


class SentenceEncoder(_ContextualBase):
    """A sentence-transformers model (``st:NAME_OR_PATH``).

    Parameters
    ----------
    model : str
        A sentence-transformers folder or hub name (local cache first; the
        hub only when reachable).
    name : str, optional
        Spec for reports (default ``"st:" + model``).
    normalize_embeddings : bool, default True
        L2-normalise every embedding (the tutorial's advice for cosine tests).
    template : str, default "{}"
        How :meth:`lookup` turns a word into a sentence.
    corpus : str, Corpus or list of str, optional
        Reference sentences for whitening (default ``"auto"``: the largest corpus present offline).
    seed : int, default 0
    batch_size : int, default 64
    chunk_size : int, default 2048
        Reference sentences per streamed batch and cache file.
    device : str, optional
        Default: CUDA when present, else CPU.
    dtype : {"float32", "tf32", "bfloat16", "float16"}, default "float32"
        Precision of the forward pass (:mod:`isoeat.backends._precision`;
        ``tf32`` and ``float16`` need CUDA). Part of the fingerprint and of
        every cache key.
    progress : bool, optional
        Progress line on stderr, the one reporter of :mod:`isoeat._progress`
        (default None: when stderr is a terminal or ``ISOEAT_PROGRESS=1``, for
        calls of more than four batches). sentence-transformers encodes all
        texts of a call at once (its own length sorting and batches); the
        line advances after each batch's forward pass (a hook on the model,
        which changes no batch).
    cache_dir, use_cache
        Embedding cache (see :class:`~isoeat.backends.cache.EmbeddingCache`).
    """

    kind = "sentence"

    def __init__(
        self,
        model: str,
        *,
        name: str | None = None,
        normalize_embeddings: bool = True,
        template: str = "{}",
        corpus: Any = None,
        seed: int = 0,
        batch_size: int = 64,
        chunk_size: int = 2048,
        device: str | None = None,
        dtype: str | None = None,
        progress: bool | None = None,
        cache_dir: str | os.PathLike | None = None,
        use_cache: bool | None = None,
        _folder: Path | None = None,
        _source: str | None = None,
    ) -> None:
        self.normalize_embeddings = check_bool("normalize_embeddings", normalize_embeddings)
        self.template = check_template(template)
        self.seed = check_int("seed", seed, lo=0)
        self.batch_size = check_int("batch_size", batch_size, lo=1)
        self.chunk_size = check_int("chunk_size", chunk_size, lo=1)
        self._init_source(model, "st", name=name, corpus=corpus, device=device, progress=progress,
                          cache_dir=cache_dir, use_cache=use_cache, folder=_folder, source=_source, dtype=dtype)
        self._dim = _st_dim(self.folder)

    def __repr__(self) -> str:
        return f"SentenceEncoder(name={self.name!r}, dim={self._dim}, normalize={self.normalize_embeddings})"

    # -- identity ------------------------------------------------------------
    @property
    def sentence_pooling_name(self) -> str:
        """How the model pools a text's tokens (its Pooling module's mode): ``"st: mean"``, ``"st: cls"``, ..."""
        return _st_pooling(self.folder)

    def _loaded_dim(self) -> int:
        return int(self._model.get_sentence_embedding_dimension())

    @property
    def fingerprint(self) -> str:
        """Hash of the model folder, whether embeddings are normalised and the dtype (unless float32)."""
        h = hashlib.sha256(f"st|{self.model_fingerprint}|normalize={self.normalize_embeddings}{self._dtype_tag()}"
                           .encode())
        return h.hexdigest()[:16]

    def _configured_max_seq_length(self) -> int | None:
        try:
            cfg = json.loads((self.folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
            return int(cfg["max_seq_length"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    @property
    def max_seq_length(self) -> int | None:
        """Tokens the encoder reads per text (longer texts are truncated by sentence-transformers)."""
        if self._model is None:
            v = self._configured_max_seq_length()
            if v is not None:
                return v
            self._load()
        v = getattr(self._model, "max_seq_length", None)
        return int(v) if v else None

    def _settings(self) -> dict[str, Any]:
        return {
            "normalize_embeddings": self.normalize_embeddings,
            "template": self.template,
            "max_seq_length": self.max_seq_length,
            "corpus": self.corpus_name,
        }

    # -- model ---------------------------------------------------------------
    def _load(self) -> None:
        if self._model is not None:
            return
        check_dtype_device(self.dtype, select_device(self._device_arg))  # refused before anything loads
        model, device = load_sentence_transformer(self.folder, self._device_arg, allow_pickle=self.allow_pickle)
        import torch

        model.eval()
        self._model, self._torch = model, torch
        self.device = device

    # -- encoding ------------------------------------------------------------
    def _show_progress(self, n: int) -> bool | None:
        if self.progress is None:  # a few batches need no line; more follow --quiet and $ISOEAT_PROGRESS
            return None if n > 4 * self.batch_size else False
        return self.progress

    def _count_truncated(self, texts: Sequence[str]) -> int:
        limit = self.max_seq_length
        tok = getattr(self._model, "tokenizer", None)
        if not limit or tok is None:
            return 0
        try:
            enc = tok(list(texts), add_special_tokens=True, truncation=False)["input_ids"]
        except Exception:  # pragma: no cover - exotic tokenizers
            return 0
        return sum(len(ids) > limit for ids in enc)

    def _encode_uncached(self, texts: Sequence[str]) -> tuple[np.ndarray, int]:
        self._load()
        import torch

        # one call for all texts (sentence-transformers batches them by length: the numbers depend on it); the bar
        # advances after each batch's forward pass (a hook on the model), the rest of the call at its end
        with (self._progress(len(texts), "sentences", self._show_progress(len(texts))) as bar, torch.inference_mode(),
              self._precision(), _counting_batches(self._model, bar, texts) as counted):
            emb = self._model.encode(
                list(texts), batch_size=self.batch_size, normalize_embeddings=self.normalize_embeddings,
                convert_to_numpy=True, show_progress_bar=False,
            )
            if len(texts) > counted[0]:
                bar.update(len(texts) - counted[0], work=float(sum(len(t) for t in texts[counted[0]:])))
        emb = np.asarray(emb, dtype=np.float32).reshape(len(texts), -1)
        if self._dim is None:
            self._dim = emb.shape[1]
        return emb, self._count_truncated(texts)

    def _key(self, texts: Sequence[str], kind: str) -> dict[str, Any]:
        # the folder fingerprint covers the configured length; "default" avoids loading the model for a key
        return {"kind": kind, "model": self.model_key, "normalize": self.normalize_embeddings,
                "max_seq_length": self._configured_max_seq_length() or "default", "texts": _texts_digest(texts),
                "n": len(texts)}

    def encode(self, texts: Iterable[str]) -> np.ndarray:
        """Sentence embeddings of ``texts``, ``(n, dim)`` float64 (cached on disk).

        Texts longer than the model's ``max_seq_length`` are truncated by
        sentence-transformers; they are counted and reported with an
        :class:`~isoeat.IsoeatWarning`.
        """
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim))
        for i, t in enumerate(texts):
            if not t.strip():
                raise ConfigError(f"texts[{i}] is empty")
        key = self._key(texts, "st-sentences")
        hit = self.cache.get("st-sentences", key)
        if hit is not None and "vectors" in hit and hit["vectors"].shape[0] == len(texts):
            emb, n_trunc = hit["vectors"], int(hit.get("truncated", 0))
        else:
            emb, n_trunc = self._encode_uncached(texts)
            self.cache.put("st-sentences", key, {"vectors": emb, "truncated": np.int64(n_trunc)})
        self.last_report = {"n_texts": len(texts), "truncated": n_trunc}
        if n_trunc:
            warnings.warn(f"{self.name}: {n_trunc} text(s) longer than max_seq_length={self.max_seq_length} tokens "
                          "were truncated by the encoder", IsoeatWarning, stacklevel=2)
        return emb.astype(np.float64)

    def encode_sentences(self, texts: Iterable[str]) -> np.ndarray:
        """Alias of :meth:`encode` (the name SEAT uses for every encoder)."""
        return self.encode(texts)

    def lookup(self, words: Iterable[str]) -> Lookup:
        """Each word placed in ``template`` and embedded; every word is found."""
        words = tuple(words)
        for w in words:
            if not isinstance(w, str) or not w.strip():
                raise ConfigError(f"words must be non-empty strings, got {w!r}")
        vecs = self.encode([fill_template(self.template, w) for w in words]) if words else np.zeros((0, self.dim))
        return Lookup(words, vecs, words, (), ())

    # -- reference vectors (streamed by _ContextualBase) ---------------------
    _stats_kind = "st-reference-stats"
    _truncation_note = "longer than max_seq_length were truncated by the encoder"

    def _check_unit(self, unit: str | None) -> str:
        if unit not in (None, "sentence"):
            raise ConfigError(
                f"unit={unit!r}: st: encoders give sentence embeddings, so their reference unit is 'sentence' "
                "(for word-occurrence vectors use an hf: model)"
            )
        return "sentence"

    def _meta(self, n: int, unit: str, corp: Any, seed: int, sents: Sequence[str]) -> dict[str, Any]:
        return {"unit": unit, "pooling": "sentence-transformers", **self._corpus_meta(n, corp, seed, sents),
                "normalize_embeddings": self.normalize_embeddings, "model": self.name}

    def _reference_words(self, meta: dict[str, Any]) -> tuple[str, str]:
        return f"sentence embeddings ({'normalised' if self.normalize_embeddings else 'raw'})", f" by {self.name}"

    def _reference_key(self, chunk: Sequence[str], unit: str) -> dict[str, Any]:
        return self._key(chunk, "st-reference")

    def _chunk_vectors(self, chunk: Sequence[str], unit: str = "sentence") -> tuple[np.ndarray, int]:
        """Sentence embeddings of one chunk of sentences (float64) and its truncation count, cached."""
        key = self._reference_key(chunk, unit)
        hit = self.cache.get("st-reference", key)
        if hit is not None and "vectors" in hit and hit["vectors"].shape[0] == len(chunk):
            return hit["vectors"].astype(np.float64), int(hit.get("truncated", 0))
        emb, nt = self._encode_uncached(chunk)
        self.cache.put("st-reference", key, {"vectors": emb, "truncated": np.int64(nt)})
        return emb.astype(np.float64), nt
