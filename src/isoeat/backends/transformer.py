r"""Contextual word vectors from Hugging Face transformers (``hf:NAME_OR_PATH``).

Word vectors follow the *Aggregated* procedure of Bommasani et al. (2020), as
in the paper's §4.1:

1. for each word, up to ``contexts_per_word`` (default 20) sentences that
   contain it as a whole word are drawn from a reference corpus with a fixed
   seed (:meth:`isoeat.corpora.Corpus.contexts`);
2. each sentence is encoded once; the hidden states of the chosen ``layer``
   (default: the last) at the word's *subword tokens* are mean-pooled. The
   word's tokens are found with the tokenizer's offset mapping: every token
   whose character span overlaps the word's span in the sentence (so
   WordPiece ``##`` pieces, and byte-level BPE tokens that carry the word's
   leading space, ``Ġword``, both count, while special tokens never do);
3. the pooled vectors are averaged over the sentences:

.. math::

    \vec w = \frac{1}{|C_w|}\sum_{c\in C_w}\frac{1}{|T_{w,c}|}\sum_{t\in T_{w,c}} h^{(\ell)}_t(c)

A word with no context in the corpus is handled by the ``missing`` policy:
``"fallback"`` (default) encodes it once in a neutral template
(``"This is {}."``) and reports it; ``"drop"`` reports it as out of vocabulary,
like a word missing from a static model.

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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from .._errors import (
    ConfigError,
    DataFormatError,
    IsoeatFileNotFoundError,
    IsoeatWarning,
    MissingDependencyError,
    UnknownNameError,
)
from .base import Lookup
from .cache import EmbeddingCache

__all__ = [
    "TransformerEncoder",
    "ContextualLookup",
    "INSTALL_LINE",
    "DEFAULT_CORPUS",
    "FALLBACK_TEMPLATE",
    "MISSING_POLICIES",
    "REFERENCE_UNITS",
    "REFERENCE_WORD_RE",
    "resolve_model_folder",
    "folder_fingerprint",
    "select_device",
    "require_transformers",
    "assign_tokens",
]

#: The exact line every missing-extra error ends with.
INSTALL_LINE = 'pip install "isoeat[transformers]"'
#: Reference corpus for contexts and whitening statistics when none is given (offline everywhere).
DEFAULT_CORPUS = "gensim-wiki"
#: Neutral template for words with no context under ``missing="fallback"``.
FALLBACK_TEMPLATE = "This is {}."
MISSING_POLICIES = ("fallback", "drop")
REFERENCE_UNITS = ("word", "sentence")
#: What a "word" is for ``unit="word"`` reference vectors.
REFERENCE_WORD_RE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", re.UNICODE)

# Bumped when the aggregation's arithmetic changes: part of every cache key.
_ALGO = "aggregated-2"
_POOLING = "subword-mean"
_MODEL_FILES_SKIP = {"readme.md", ".gitattributes", "license", "license.txt", "license.md"}
# models whose position ids start after padding_idx, so that max_position_embeddings - padding_idx - 1 are usable
_ROBERTA_LIKE = {"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer", "data2vec-text",
                 "roberta-prelayernorm", "mpnet"}


# ----------------------------------------------------------------------------
# optional dependencies
# ----------------------------------------------------------------------------


def require_transformers(what: str = "hf: models") -> tuple[Any, Any]:
    """Import torch and transformers, or raise ``MissingDependencyError`` with the install line."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise MissingDependencyError(
            f"{what} need torch and transformers ({exc.name or exc} is not installed): {INSTALL_LINE}"
        ) from None
    return torch, transformers


@contextlib.contextmanager
def _quiet_hf() -> Iterator[None]:
    """Silence transformers' and huggingface_hub's progress bars while loading, then restore them."""
    restore = []
    try:
        from transformers.utils import logging as tlog

        if tlog.is_progress_bar_enabled():
            tlog.disable_progress_bar()
            restore.append(tlog.enable_progress_bar)
    except Exception:  # pragma: no cover - very old or very new transformers
        pass
    try:
        yield
    finally:
        for fn in restore:
            fn()


# ----------------------------------------------------------------------------
# model folders: local paths and hub names
# ----------------------------------------------------------------------------


def _offline() -> bool:
    return any(os.environ.get(v, "").strip().lower() in {"1", "true", "yes", "on"}
               for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _looks_like_path(spec: str) -> bool:
    return (spec.startswith((".", "/", "~")) or "\\" in spec or spec.count("/") > 1
            or (len(spec) > 1 and spec[1] == ":"))


def _check_model_folder(path: Path, prefix: str) -> Path:
    if not path.exists():
        raise IsoeatFileNotFoundError(f"{path}: no such model folder")
    if not path.is_dir():
        raise DataFormatError(
            f"{path}: is a file, not a model folder; {prefix}: expects a folder with config.json, the "
            "tokenizer files and the weights (as written by save_pretrained)"
        )
    if not (path / "config.json").is_file():
        raise DataFormatError(
            f"{path}: not a Hugging Face model folder (no config.json); {prefix}: expects a folder written "
            "by save_pretrained or downloaded from the hub"
        )
    return path


def resolve_model_folder(spec: str, *, prefix: str = "hf") -> tuple[Path, str]:
    """The local folder of a model given as a path or a Hugging Face hub name.

    A path that exists must be a model folder (``config.json`` inside). A hub
    name is looked up in the local Hugging Face cache first; only when that
    fails and the hub is not switched off (``HF_HUB_OFFLINE``) is it
    downloaded (config, tokenizer and weight files only). Without network the
    error says so and suggests a local path.

    Returns
    -------
    folder : Path
    source : str
        ``"local folder"`` or ``"hub NAME (cache)"``.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownNameError(f"{prefix}: needs a model name or folder, got {spec!r}")
    spec = spec.strip()
    path = Path(spec).expanduser()
    if path.exists():
        return _check_model_folder(path.resolve(), prefix), "local folder"
    if _looks_like_path(spec):
        raise IsoeatFileNotFoundError(f"{spec}: no such model folder")
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise MissingDependencyError(
            f"loading {spec!r} from the Hugging Face hub needs huggingface_hub: {INSTALL_LINE}"
        ) from None
    try:
        folder = Path(snapshot_download(spec, local_files_only=True))
        if (folder / "config.json").is_file():
            return folder, f"hub {spec} (local cache)"
    except Exception:
        pass
    hint = (
        f"download it where there is internet (e.g. `hf download {spec} --local-dir DIR`, or "
        f"save_pretrained) and pass the folder: {prefix}:/path/to/DIR"
    )
    if _offline():
        raise ConfigError(
            f"model {spec!r} is not in the local Hugging Face cache and the hub is switched off "
            f"(HF_HUB_OFFLINE); {hint}"
        )
    try:
        from huggingface_hub import HfApi

        snapshot_download(spec, allow_patterns=["config.json"])  # fails fast without network
        files = HfApi().list_repo_files(spec)
        weights = [f for f in files if f.endswith(".safetensors")]
        if not weights:
            weights = [f for f in files if f.endswith(".bin") and "pytorch_model" in f]
        keep = [f for f in files if f.endswith((".json", ".txt", ".model", ".tiktoken")) or f in weights]
        folder = Path(snapshot_download(spec, allow_patterns=keep))
    except Exception as exc:
        raise ConfigError(
            f"cannot load model {spec!r} from the Hugging Face hub (offline, or no such model: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); {hint}"
        ) from None
    return _check_model_folder(folder, prefix), f"hub {spec}"


def _file_digest(path: Path, h: Any) -> None:
    """Whole file when small; otherwise size and 32 evenly spaced 64 KiB samples."""
    size = path.stat().st_size
    h.update(f"{size}|".encode())
    with open(path, "rb") as fh:
        if size <= 4 << 20:
            h.update(fh.read())
            return
        chunk = 1 << 16
        for pos in np.linspace(0, size - chunk, num=32).astype(np.int64):
            fh.seek(int(pos))
            h.update(fh.read(chunk))


def folder_fingerprint(folder: str | Path) -> str:
    """A stable, cheap hash of a model folder's files (configs, tokenizer, weights).

    Small files are hashed whole; large ones (weights) by size and 32 evenly
    spaced 64 KiB samples, so a multi-gigabyte checkpoint costs about 2 MB of
    reading. Relative paths are part of the hash; READMEs, licences and hidden
    files are not. Copies of a folder hash the same.
    """
    folder = Path(folder)
    h = hashlib.sha256(b"isoeat-model-folder-1|")
    files = sorted(p for p in folder.rglob("*") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts)
                   and p.name.lower() not in _MODEL_FILES_SKIP and "__pycache__" not in p.parts)
    if not files:
        raise DataFormatError(f"{folder}: the model folder is empty")
    for p in files:
        h.update(p.relative_to(folder).as_posix().encode("utf-8") + b"\0")
        _file_digest(p, h)
    return h.hexdigest()[:16]


def select_device(device: Any = None) -> str:
    """``None``/``"auto"``: ``"cuda"`` when available, else ``"cpu"``; else the device as given, checked."""
    torch, _ = require_transformers()
    if device is None or (isinstance(device, str) and device.strip().lower() == "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ConfigError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r} ({exc})") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r} asked for, but torch sees no CUDA device here (use device='cpu')")
    return str(dev)


def _read_config(folder: Path) -> dict[str, Any]:
    try:
        cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataFormatError(f"{folder / 'config.json'}: not readable JSON ({exc})") from None
    if not isinstance(cfg, dict):
        raise DataFormatError(f"{folder / 'config.json'}: expected a JSON object")
    return cfg


def _cfg_get(cfg: dict[str, Any], *names: str) -> Any:
    for n in names:
        if isinstance(cfg.get(n), int):
            return cfg[n]
    sub = cfg.get("text_config")
    if isinstance(sub, dict):
        return _cfg_get(sub, *names)
    return None


def _progress_bar(total: int, desc: str, enabled: bool | None) -> Any:
    if enabled is None:
        enabled = sys.stderr.isatty()
    if enabled:
        try:
            from tqdm.auto import tqdm

            return tqdm(total=total, desc=desc, unit="sent", file=sys.stderr, leave=False, dynamic_ncols=True)
        except ImportError:  # pragma: no cover - tqdm comes with transformers
            pass
    return contextlib.nullcontext(_NoBar())


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def __enter__(self) -> "_NoBar":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


# ----------------------------------------------------------------------------
# corpora
# ----------------------------------------------------------------------------


def _as_corpus(corpus: Any, seed: int) -> Any:
    """A corpus object from a spec (``"gensim-wiki"``, a path), a list of sentences, or a corpus."""
    if corpus is None:
        corpus = DEFAULT_CORPUS
    if hasattr(corpus, "contexts") and hasattr(corpus, "fingerprint"):
        return corpus
    try:
        from ..corpora import Corpus, load_corpus
    except ImportError as exc:  # pragma: no cover - corpora ships with isoeat
        raise MissingDependencyError(f"reference corpora are not available: {exc}") from None
    if isinstance(corpus, (str, os.PathLike)):
        return load_corpus(str(corpus), seed=seed)
    if isinstance(corpus, (list, tuple)):
        return Corpus.from_sentences(list(corpus), seed=seed)
    raise ConfigError(
        f"corpus must be a corpus spec (e.g. {DEFAULT_CORPUS!r} or a path), a list of sentences or a "
        f"Corpus, got {type(corpus).__name__}"
    )


def _texts_digest(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        b = t.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


# ----------------------------------------------------------------------------
# token assignment (pure numpy; tested on its own)
# ----------------------------------------------------------------------------


def assign_tokens(
    offsets: np.ndarray, special: np.ndarray, spans: np.ndarray, rows: np.ndarray
) -> np.ndarray:
    """Which output row each token is pooled into, ``-1`` for none.

    Parameters
    ----------
    offsets : ndarray (L, 2)
        Character span ``[start, end)`` of each token (the tokenizer's offset mapping).
    special : ndarray (L,) of bool
        Special tokens ([CLS], <s>, ...) are never assigned.
    spans : ndarray (k, 2)
        Character spans of the words, sorted by start and not overlapping.
    rows : ndarray (k,)
        Output row of each span.

    A token belongs to the first span it overlaps (``start < span_end`` and
    ``end > span_start``); zero-length tokens belong to none.

    Examples
    --------
    >>> offs = np.array([[0, 0], [0, 3], [4, 6], [6, 9], [9, 10], [0, 0]])
    >>> spec = np.array([1, 0, 0, 0, 0, 1], bool)
    >>> assign_tokens(offs, spec, np.array([[4, 9]]), np.array([7])).tolist()
    [-1, -1, 7, 7, -1, -1]
    """
    L = offsets.shape[0]
    out = np.full(L, -1, dtype=np.int64)
    k = spans.shape[0]
    if k == 0 or L == 0:
        return out
    ts, te = offsets[:, 0], offsets[:, 1]
    j = np.searchsorted(spans[:, 1], ts, side="right")  # first span ending after the token starts
    jj = np.minimum(j, k - 1)
    ok = (~special) & (te > ts) & (j < k) & (spans[jj, 0] < te)
    out[ok] = rows[jj[ok]]
    return out


def _chunked_statistics(cache: EmbeddingCache, kind: str, keyed_chunks: Iterable[tuple[Sequence[str], dict]],
                        compute: Any, dim: int) -> tuple[Any, int]:
    """Merge per-chunk covariance statistics, from the cache where present, else from ``compute(chunk)``."""
    from ..calibration.moments import CovarianceAccumulator

    parts = []
    n_trunc = 0
    for chunk, key in keyed_chunks:
        key = {**key, "kind": kind}
        hit = cache.get(kind, key)
        if (hit is not None and {"n", "mean", "comoment"} <= set(hit) and hit["mean"].shape == (dim,)
                and hit["comoment"].shape == (dim, dim)):
            parts.append(CovarianceAccumulator.from_arrays(hit))
            n_trunc += int(hit.get("truncated", 0))
            continue
        vecs, nt = compute(chunk)
        n_trunc += nt
        acc = CovarianceAccumulator(dim).update(vecs)
        cache.put(kind, key, {**acc.to_arrays(), "truncated": np.int64(nt)})
        parts.append(acc)
    acc = CovarianceAccumulator.merge_all(parts)
    if acc.n < 2:
        raise DataFormatError(f"reference statistics: need at least 2 vectors, got {acc.n}")
    return acc, n_trunc


@dataclass
class _Seq:
    ids: np.ndarray  # int64 (L,)
    assign: np.ndarray  # int64 (L,)
    truncated: bool = False


# ----------------------------------------------------------------------------
# lookup report
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextualLookup(Lookup):
    """A :class:`~isoeat.backends.base.Lookup` with what contextual aggregation adds.

    Attributes
    ----------
    fallback : tuple of str
        Found words that had no context in the corpus and were encoded in the
        neutral template (``missing="fallback"``).
    n_contexts : tuple of int
        Sentences averaged for each found word (1 for fallbacks), in ``found`` order.
    truncated : int
        Contexts longer than the model's maximum, truncated around the word.
    """

    fallback: tuple[str, ...] = ()
    n_contexts: tuple[int, ...] = ()
    truncated: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update(fallback=list(self.fallback), n_contexts=dict(zip(self.found, self.n_contexts)),
                 truncated=self.truncated)
        return d


@dataclass
class _WordResult:
    vector: np.ndarray | None
    n_contexts: int
    case_insensitive: bool = False
    truncated: int = 0
    fallback: bool = False
    extra: dict = field(default_factory=dict)


# ----------------------------------------------------------------------------
# the encoder
# ----------------------------------------------------------------------------


def _check_int(name: str, value: Any, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise ConfigError(f"{name} must be an integer >= {lo}, got {value!r}")
    return int(value)


def check_template(template: Any, *, name: str = "template") -> str:
    """A template must be a string with exactly one ``{}`` slot."""
    if not isinstance(template, str):
        raise ConfigError(f"{name} must be a string with one '{{}}' slot, got {template!r}")
    n = template.count("{}")
    if n != 1:
        raise ConfigError(
            f"{name} {template!r} must contain exactly one '{{}}' slot for the word (found {n})"
        )
    return template


class TransformerEncoder:
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
        ``"gensim-wiki"``; the paper used WikiText-103: ``"wikitext-103"``).
    contexts_per_word : int, default 20
        Sentences per word (Bommasani et al. 2020, paper §4.1).
    seed : int, default 0
        Seed of context and reference sampling.
    missing : {"fallback", "drop"}
        Words with no context: encode in ``fallback_template`` (reported), or
        report as out of vocabulary.
    fallback_template : str, default "This is {}."
    reference_unit : {"word", "sentence"}
        Default unit of :meth:`reference_batches`.
    batch_size : int, default 64
        Sentences per forward pass (batches are length-bucketed).
    max_tokens_per_batch : int, default 16384
        Also caps a batch at this many (padded) tokens.
    max_length : int, optional
        Maximum input length in tokens (default: the model's).
    device : str, optional
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``; default: CUDA when present.
    progress : bool, optional
        Progress bar on stderr (default: when stderr is a terminal).
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
        seed: int = 0,
        missing: str = "fallback",
        fallback_template: str = FALLBACK_TEMPLATE,
        reference_unit: str = "word",
        batch_size: int = 64,
        max_tokens_per_batch: int = 16384,
        max_length: int | None = None,
        device: str | None = None,
        progress: bool | None = None,
        cache_dir: str | os.PathLike | None = None,
        use_cache: bool | None = None,
        chunk_size: int = 1024,
        _folder: Path | None = None,
        _source: str | None = None,
    ) -> None:
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
            raise ConfigError(f"layer must be an integer (negative counts from the end), got {layer!r}")
        self.contexts_per_word = _check_int("contexts_per_word", contexts_per_word, 1)
        self.seed = _check_int("seed", seed, 0)
        if missing not in MISSING_POLICIES:
            raise ConfigError(f"missing must be one of {', '.join(MISSING_POLICIES)}; got {missing!r}")
        if reference_unit not in REFERENCE_UNITS:
            raise ConfigError(f"reference_unit must be one of {', '.join(REFERENCE_UNITS)}; got {reference_unit!r}")
        self.missing = missing
        self.fallback_template = check_template(fallback_template, name="fallback_template")
        self.reference_unit = reference_unit
        self.batch_size = _check_int("batch_size", batch_size, 1)
        self.max_tokens_per_batch = _check_int("max_tokens_per_batch", max_tokens_per_batch, 16)
        self.chunk_size = _check_int("chunk_size", chunk_size, 1)
        if max_length is not None:
            max_length = _check_int("max_length", max_length, 4)
        self._max_length_arg = max_length
        self._device_arg = device
        self.progress = progress
        if _folder is None:
            _folder, _source = resolve_model_folder(model, prefix="hf")
        self.folder = Path(_folder)
        self.source = _source or "local folder"
        self.name = name or f"hf:{model}"
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
        self._corpus_arg = corpus
        self._corpus: Any = None
        self.cache = EmbeddingCache(cache_dir, enabled=use_cache)
        self._model_fp: str | None = None
        self._model: Any = None
        self._tokenizer: Any = None
        self._backend: Any = None
        self._memo: dict[str, _WordResult] = {}
        self._template_memo: dict[tuple[str, str], np.ndarray] = {}
        self.last_report: dict[str, Any] = {}

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
    def dim(self) -> int:
        if self._dim is None:
            self._load()
        return int(self._dim)  # type: ignore[arg-type]

    @property
    def model_fingerprint(self) -> str:
        """Hash of the model folder (configs, tokenizer, weights): the model alone."""
        if self._model_fp is None:
            self._model_fp = folder_fingerprint(self.folder)
        return self._model_fp

    @property
    def fingerprint(self) -> str:
        """Hash of the model folder, the layer and the pooling: which vector space this is.

        A whitener fitted on this encoder is refused for another layer or model.
        """
        h = hashlib.sha256(f"hf|{self.model_fingerprint}|layer={self.layer}|{_POOLING}".encode())
        return h.hexdigest()[:16]

    @property
    def corpus(self) -> Any:
        """The reference corpus (loaded on first use)."""
        if self._corpus is None:
            self._corpus = _as_corpus(self._corpus_arg, self.seed)
            if len(self._corpus) == 0:
                raise DataFormatError(f"corpus {getattr(self._corpus, 'name', '?')}: no usable sentences")
        return self._corpus

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "source": f"{self.folder} ({self.source})",
            "dim": self.dim,
            "layer": self.layer,
            "n_layers": self.n_layers,
            "pooling": _POOLING,
            "contexts_per_word": self.contexts_per_word,
            "missing": self.missing,
            "fallback_template": self.fallback_template,
            "seed": self.seed,
            "corpus": getattr(self._corpus, "name", self._corpus_arg if isinstance(self._corpus_arg, str)
                              else DEFAULT_CORPUS if self._corpus_arg is None else "sentences"),
            "fingerprint": self.fingerprint,
            "model_fingerprint": self.model_fingerprint,
        }

    # -- model -------------------------------------------------------------
    def _load(self) -> None:
        if self._model is not None:
            return
        torch, transformers = require_transformers()
        from transformers import AutoModel, AutoTokenizer

        try:
            with _quiet_hf():
                tok = AutoTokenizer.from_pretrained(str(self.folder), local_files_only=True)
                try:
                    model = AutoModel.from_pretrained(str(self.folder), local_files_only=True, dtype=torch.float32)
                except TypeError:  # transformers < 4.56 spells it torch_dtype
                    model = AutoModel.from_pretrained(str(self.folder), local_files_only=True,
                                                      torch_dtype=torch.float32)
        except ImportError as exc:
            raise MissingDependencyError(
                f"{self.folder}: loading this model needs a package that is not installed ({exc}); "
                f"install it, or the extra: {INSTALL_LINE}"
            ) from None
        except Exception as exc:  # transformers, safetensors and tokenizers raise many kinds
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DataFormatError(f"{self.folder}: transformers cannot load this folder as a model ({first})") from None
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
        self.device = select_device(self._device_arg)
        model.eval()
        model.to(self.device)
        cfg = model.config
        n_layers = getattr(cfg, "num_hidden_layers", None) or getattr(cfg, "n_layer", None)
        if self.n_layers is None and n_layers:
            self.n_layers = int(n_layers)
            self.layer = self._normalise_layer(self._layer_arg, self.n_layers)
        if self._dim is None:
            self._dim = int(getattr(cfg, "hidden_size", None) or getattr(cfg, "n_embd"))
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
                raise ConfigError(f"max_length {self._max_length_arg} exceeds the model's maximum of {model_max} tokens")
            return self._max_length_arg
        return model_max

    @property
    def max_length_key(self) -> int | str:
        """Cache-key form of the length limit without loading the model."""
        return self._max_length_arg if self._max_length_arg is not None else "model"

    # -- the pipeline --------------------------------------------------------
    def _encode_seqs(self, sentences: Sequence[str], jobs: Sequence[Any], mode: str) -> tuple[list[_Seq], int]:
        """Tokenize and assign tokens to output rows.

        ``mode="focus"``: ``jobs[i]`` is ``(start, end, row)``, one word per
        sentence, truncation centred on it. ``mode="words"``: ``jobs[i]`` is
        ``(spans (k,2), rows (k,))``, truncation from the end. ``mode="all"``:
        ``jobs[i]`` is the row; every token (specials too) is pooled.
        """
        self._load()
        encs = self._backend.encode_batch(list(sentences), add_special_tokens=True)
        max_len = self.max_length
        seqs: list[_Seq] = []
        n_trunc = 0
        for enc, job in zip(encs, jobs):
            ids = np.asarray(enc.ids, dtype=np.int64)
            L = ids.shape[0]
            special = np.asarray(enc.special_tokens_mask, dtype=bool)
            if mode == "all":
                assign = np.full(L, int(job), dtype=np.int64)
            else:
                offs = np.asarray(enc.offsets, dtype=np.int64).reshape(L, 2)
                if mode == "focus":
                    s, e, row = job
                    assign = assign_tokens(offs, special, np.array([[s, e]], dtype=np.int64),
                                           np.array([row], dtype=np.int64))
                else:
                    spans, rows = job
                    assign = assign_tokens(offs, special, spans, rows)
            truncated = False
            if L > max_len:
                truncated = True
                n_trunc += 1
                content = np.flatnonzero(~special)
                first, last = (int(content[0]), int(content[-1])) if content.size else (0, L - 1)
                prefix = np.arange(0, first)
                suffix = np.arange(last + 1, L)
                budget = max_len - prefix.size - suffix.size
                if budget < 1:
                    prefix, suffix, budget = np.arange(0), np.arange(0), max_len
                start = first
                if mode == "focus":
                    tp = np.flatnonzero(assign >= 0)
                    if tp.size:
                        lo, hi = int(tp[0]), int(tp[-1]) + 1
                        start = lo - max(0, (budget - (hi - lo)) // 2)
                        start = max(first, min(start, last + 1 - budget))
                keep = np.concatenate([prefix, np.arange(start, start + budget), suffix])
                ids, assign = ids[keep], assign[keep]
            seqs.append(_Seq(ids, assign, truncated))
        return seqs, n_trunc

    def _batches(self, seqs: Sequence[_Seq]) -> Iterator[list[int]]:
        """Length-bucketed batches: sort by length, cut at batch_size or the token budget."""
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i].ids))
        batch: list[int] = []
        for i in order:
            L = len(seqs[i].ids)
            if batch and (len(batch) >= self.batch_size or (len(batch) + 1) * L > self.max_tokens_per_batch):
                yield batch
                batch = []
            batch.append(i)
        if batch:
            yield batch

    def _pool(self, seqs: Sequence[_Seq], n_rows: int, desc: str) -> tuple[np.ndarray, np.ndarray]:
        """Forward every sequence once; per output row the sum of its tokens' states, and the count.

        Returns ``(means (n_rows, dim) float32, counts (n_rows,))``; rows with
        no token have count 0 and a zero vector.
        """
        self._load()
        torch = self._torch
        dev = self.device
        d = self.dim
        sums = torch.zeros((max(n_rows, 1), d), dtype=torch.float32, device=dev)
        counts = torch.zeros(max(n_rows, 1), dtype=torch.float32, device=dev)
        need_hidden = self.layer != self.n_layers
        with torch.inference_mode(), _progress_bar(len(seqs), desc, self.progress) as bar:
            for batch in self._batches(seqs):
                Lmax = max(len(seqs[i].ids) for i in batch)
                ids = np.full((len(batch), Lmax), self._pad_id, dtype=np.int64)
                mask = np.zeros((len(batch), Lmax), dtype=np.int64)
                assign = np.full((len(batch), Lmax), -1, dtype=np.int64)
                for r, i in enumerate(batch):
                    L = len(seqs[i].ids)
                    ids[r, :L] = seqs[i].ids
                    mask[r, :L] = 1
                    assign[r, :L] = seqs[i].assign
                t_ids = torch.from_numpy(ids).to(dev)
                t_mask = torch.from_numpy(mask).to(dev)
                out = self._model(input_ids=t_ids, attention_mask=t_mask, output_hidden_states=need_hidden)
                H = out.hidden_states[self.layer] if need_hidden else out.last_hidden_state
                a = torch.from_numpy(assign).to(dev).reshape(-1)
                sel = a >= 0
                idx = a[sel]
                sums.index_add_(0, idx, H.reshape(-1, d)[sel].float())
                counts.index_add_(0, idx, torch.ones_like(idx, dtype=torch.float32))
                bar.update(len(batch))
        sums = sums[:n_rows]
        counts = counts[:n_rows]
        means = sums / counts.clamp(min=1.0)[:, None]
        return means.cpu().numpy(), counts.cpu().numpy().astype(np.int64)

    # -- lookup --------------------------------------------------------------
    def _word_key(self, word: str) -> dict[str, Any]:
        return {
            "kind": "hf-word", "algo": _ALGO, "model": self.model_fingerprint, "layer": self.layer,
            "pooling": _POOLING, "corpus": self.corpus.fingerprint, "seed": self.seed,
            "contexts_per_word": self.contexts_per_word, "max_length": self.max_length_key, "word": word,
        }

    def _template_key(self, word: str, template: str) -> dict[str, Any]:
        return {
            "kind": "hf-template", "algo": _ALGO, "model": self.model_fingerprint, "layer": self.layer,
            "pooling": _POOLING, "template": template, "max_length": self.max_length_key, "word": word,
        }

    def _word_rng(self, word: str) -> np.random.Generator:
        """Context sampling for ``word``: seeded by the encoder's seed and the word (order-independent)."""
        h = int.from_bytes(hashlib.sha256(word.encode("utf-8", "surrogatepass")).digest()[:8], "little")
        return np.random.default_rng([self.seed, h])

    def _aggregate(self, words: Sequence[str]) -> dict[str, _WordResult]:
        """Contexts, one batched pass over all their sentences, and the averages."""
        sentences: list[str] = []
        jobs: list[tuple[int, int, int]] = []
        owner: list[int] = []
        infos = []
        for wi, w in enumerate(words):
            ctx = self.corpus.contexts(w, k=self.contexts_per_word, rng=self._word_rng(w))
            infos.append(ctx)
            for sent, (s, e) in zip(ctx.sentences, ctx.spans):
                jobs.append((int(s), int(e), len(sentences)))
                sentences.append(sent)
                owner.append(wi)
        out: dict[str, _WordResult] = {}
        means = np.zeros((0, 0))
        counts = np.zeros(0, dtype=np.int64)
        trunc_flags: list[bool] = []
        if sentences:
            seqs, _ = self._encode_seqs(sentences, jobs, "focus")
            trunc_flags = [s.truncated for s in seqs]
            means, counts = self._pool(seqs, len(sentences), "contexts")
        owner_arr = np.asarray(owner, dtype=np.int64)
        for wi, w in enumerate(words):
            rows = np.flatnonzero(owner_arr == wi) if owner else np.zeros(0, dtype=np.int64)
            rows = rows[counts[rows] > 0] if rows.size else rows
            ctx = infos[wi]
            if rows.size:
                vec = means[rows].astype(np.float64).mean(axis=0)
                out[w] = _WordResult(vec, int(rows.size), bool(getattr(ctx, "case_insensitive", False)),
                                     int(sum(trunc_flags[r] for r in rows)),
                                     extra={"n_available": int(getattr(ctx, "n_available", rows.size))})
            else:
                out[w] = _WordResult(None, 0, bool(getattr(ctx, "case_insensitive", False)))
        return out

    def _template_vectors(self, words: Sequence[str], template: str) -> dict[str, np.ndarray]:
        """Each word pooled in ``template`` (the fallback for words without context)."""
        res: dict[str, np.ndarray] = {}
        todo = []
        for w in words:
            if (w, template) in self._template_memo:
                res[w] = self._template_memo[(w, template)]
                continue
            hit = self.cache.get("hf-template", self._template_key(w, template))
            if hit is not None and hit.get("vector") is not None and hit["vector"].shape == (self.dim,):
                res[w] = hit["vector"]
            else:
                todo.append(w)
        if todo:
            sents, jobs = [], []
            for i, w in enumerate(todo):
                pos = template.index("{}")
                sents.append(template.replace("{}", w))
                jobs.append((pos, pos + len(w), i))
            seqs, _ = self._encode_seqs(sents, jobs, "focus")
            means, counts = self._pool(seqs, len(todo), "templates")
            for i, w in enumerate(todo):
                if counts[i] == 0:
                    raise DataFormatError(f"{self.name}: the tokenizer gives no token for {w!r} in {template!r}")
                res[w] = means[i].astype(np.float64)
                self.cache.put("hf-template", self._template_key(w, template), {"vector": res[w]})
        for w, v in res.items():
            self._template_memo[(w, template)] = v
        return res

    def _bundle_key(self, words: Sequence[str]) -> dict[str, Any]:
        key = self._word_key("")
        key.update(kind="hf-word-set", word=None, words=_texts_digest(words), n_words=len(words))
        return key

    @staticmethod
    def _info(r: _WordResult) -> list[int]:
        # contexts used, contexts available, found case-insensitively, truncated contexts
        return [r.n_contexts, r.extra.get("n_available", r.n_contexts), int(r.case_insensitive), r.truncated]

    @staticmethod
    def _from_info(vec: np.ndarray | None, info: Any) -> _WordResult:
        n_ctx, n_avail, folded, trunc = (int(x) for x in info)
        return _WordResult(vec if n_ctx > 0 else None, n_ctx, bool(folded), trunc, extra={"n_available": n_avail})

    def _word_results(self, words: Sequence[str]) -> tuple[dict[str, _WordResult], int]:
        """Per word: memo, else the cache (one file for the whole set when it was looked up before,
        else one file per word), else the model."""
        results: dict[str, _WordResult] = {w: self._memo[w] for w in words if w in self._memo}
        rest = [w for w in words if w not in results]
        if len(rest) > 1:
            hit = self.cache.get("hf-word-set", self._bundle_key(rest))
            if (hit is not None and hit.get("vectors") is not None and hit["vectors"].shape == (len(rest), self.dim)
                    and hit.get("info") is not None and hit["info"].shape == (len(rest), 4)):
                for i, w in enumerate(rest):
                    results[w] = self._from_info(hit["vectors"][i], hit["info"][i])
                self._memo.update(results)
                return results, len(rest)
        todo: list[str] = []
        hits = 0
        for w in rest:
            hit = self.cache.get("hf-word", self._word_key(w))
            if hit is not None:
                try:
                    r = self._from_info(hit["vector"], hit["info"])
                    if r.vector is not None and r.vector.shape != (self.dim,):
                        raise KeyError("vector shape")
                    results[w] = r
                    hits += 1
                    continue
                except (KeyError, ValueError, TypeError):
                    pass
            todo.append(w)
        if todo:
            fresh = self._aggregate(todo)
            for w, r in fresh.items():
                self.cache.put("hf-word", self._word_key(w), {
                    "vector": r.vector if r.vector is not None else np.zeros(0),
                    "info": np.array(self._info(r), dtype=np.int64),
                })
            results.update(fresh)
        if len(rest) > 1:
            self.cache.put("hf-word-set", self._bundle_key(rest), {
                "vectors": np.vstack([results[w].vector if results[w].vector is not None else np.zeros(self.dim)
                                      for w in rest]),
                "info": np.array([self._info(results[w]) for w in rest], dtype=np.int64),
            })
        self._memo.update(results)
        return results, hits

    def lookup(self, words: Iterable[str]) -> ContextualLookup:
        """Aggregated vectors of ``words`` (see the module docstring) and a report.

        Words with no context follow ``missing``: encoded in the fallback
        template (listed in ``fallback``) or dropped (listed in ``missing``).
        Contexts found only case-insensitively are listed in ``case_folded``
        as ``(word, word.lower())``. Fallbacks and truncations are also
        announced with an :class:`~isoeat.IsoeatWarning`.
        """
        words = tuple(words)
        for w in words:
            if not isinstance(w, str) or not w.strip():
                raise ConfigError(f"words must be non-empty strings, got {w!r}")
        uniq = list(dict.fromkeys(words))
        results, hits = self._word_results(uniq)
        need_fb = [w for w in uniq if results[w].vector is None] if self.missing == "fallback" else []
        fb_vecs = self._template_vectors(need_fb, self.fallback_template) if need_fb else {}
        vecs, found, missing, folded, fallback, n_ctx = [], [], [], [], [], []
        truncated = 0
        for w in words:
            r = results[w]
            if r.vector is not None:
                vecs.append(r.vector)
                found.append(w)
                n_ctx.append(r.n_contexts)
                truncated += r.truncated
                if r.case_insensitive:
                    folded.append((w, w.lower()))
            elif w in fb_vecs:
                vecs.append(fb_vecs[w])
                found.append(w)
                n_ctx.append(1)
                fallback.append(w)
            else:
                missing.append(w)
        mat = np.vstack(vecs).astype(np.float64) if vecs else np.zeros((0, self.dim))
        self.last_report = {
            "n_words": len(words),
            "fallback": list(dict.fromkeys(fallback)),
            "dropped": list(dict.fromkeys(missing)),
            "contexts": {w: results[w].n_contexts for w in uniq},
            "truncated": truncated,
            "cache_hits": hits,
            "fallback_template": self.fallback_template,
        }
        if fallback:
            fb = list(dict.fromkeys(fallback))
            warnings.warn(
                f"{self.name}: {len(fb)} word(s) have no context in corpus {getattr(self.corpus, 'name', '?')} "
                f"and were encoded in the template {self.fallback_template!r}: {', '.join(fb[:12])}"
                + (" ..." if len(fb) > 12 else ""),
                IsoeatWarning, stacklevel=2,
            )
        if truncated:
            warnings.warn(
                f"{self.name}: {truncated} context sentence(s) longer than the model's maximum were truncated "
                "around the word",
                IsoeatWarning, stacklevel=2,
            )
        return ContextualLookup(
            words, mat, tuple(found), tuple(missing), tuple(folded),
            fallback=tuple(fallback), n_contexts=tuple(n_ctx), truncated=truncated,
        )

    # -- sentences -----------------------------------------------------------
    def encode_sentences(self, texts: Iterable[str]) -> np.ndarray:
        """Mean of the layer's hidden states over each text's attention mask, ``(n, dim)`` float64.

        The sentence vector SEAT uses for ``hf:`` models (special tokens
        included, as sentence-transformers' mean pooling).
        """
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim))
        key = {"kind": "hf-sentences", "algo": _ALGO, "model": self.model_fingerprint, "layer": self.layer,
               "pooling": "attention-mean", "max_length": self.max_length_key, "texts": _texts_digest(texts),
               "n": len(texts)}
        hit = self.cache.get("hf-sentences", key)
        if hit is not None and "vectors" in hit and hit["vectors"].shape == (len(texts), self.dim):
            return hit["vectors"].astype(np.float64)
        seqs, n_trunc = self._encode_seqs(texts, list(range(len(texts))), "all")
        means, _ = self._pool(seqs, len(texts), "sentences")
        if n_trunc:
            warnings.warn(f"{self.name}: {n_trunc} text(s) longer than the model's maximum of {self.max_length} "
                          "tokens were truncated", IsoeatWarning, stacklevel=2)
        self.cache.put("hf-sentences", key, {"vectors": means})
        return means.astype(np.float64)

    # -- reference vectors for calibration ------------------------------------
    def _reference_setup(self, n: Any, unit: str | None, corpus: Any, text: Any, seed: Any) -> tuple[Any, ...]:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ConfigError(f"reference size 'n' must be a positive integer, got {n!r}")
        unit = unit or self.reference_unit
        if unit not in REFERENCE_UNITS:
            raise ConfigError(f"unit must be one of {', '.join(REFERENCE_UNITS)}; got {unit!r}")
        if corpus is not None and text is not None:
            raise ConfigError("give the reference corpus as corpus= or text=, not both")
        seed = self.seed if seed is None else _check_int("seed", seed, 0)
        src = corpus if corpus is not None else text
        corp = self.corpus if src is None else _as_corpus(src, seed)
        sents = tuple(corp.sample(int(n), rng=seed))
        if not sents:
            raise DataFormatError(f"corpus {getattr(corp, 'name', '?')}: no usable sentences for reference vectors")
        return int(n), unit, corp, seed, sents

    def reference_metadata(self, n: int = 100_000, *, unit: str | None = None, corpus: Any = None,
                           text: Any = None, seed: int | None = None, **_: Any) -> dict[str, Any]:
        """What :meth:`reference_batches` would stream, as a dict (for manifests)."""
        return self._meta(*self._reference_setup(n, unit, corpus, text, seed))

    def _meta(self, n: int, unit: str, corp: Any, seed: int, sents: Sequence[str]) -> dict[str, Any]:
        return {
            "unit": unit,
            "pooling": _POOLING if unit == "word" else "attention-mean",
            "word_pattern": REFERENCE_WORD_RE.pattern if unit == "word" else None,
            "corpus": getattr(corp, "name", "?"),
            "corpus_fingerprint": corp.fingerprint,
            "n_requested": n,
            "n_sentences": len(sents),
            "seed": seed,
            "layer": self.layer,
            "model": self.name,
        }

    def _describe_reference(self, meta: dict[str, Any]) -> str:
        what = ("pooled vectors of every word occurrence (letters-only words, subword-mean)" if meta["unit"] == "word"
                else "mean-pooled sentence vectors (attention mask)")
        desc = (f"unit={meta['unit']}: {what} of {meta['n_sentences']} sentences sampled (seed {meta['seed']}) "
                f"from corpus {meta['corpus']} (fingerprint {meta['corpus_fingerprint']}); layer {meta['layer']} "
                f"of {self.name}")
        if meta["n_sentences"] < meta["n_requested"]:
            desc += f" (asked for {meta['n_requested']}; the corpus has {meta['n_sentences']})"
        return desc

    def reference_batches(self, n: int = 100_000, *, unit: str | None = None, corpus: Any = None,
                          text: Any = None, seed: int | None = None, **_: Any) -> tuple[Iterator[np.ndarray], str]:
        """Stream reference vectors from ``n`` corpus sentences, a chunk at a time.

        Parameters
        ----------
        n : int, default 100_000
            Sentences (paper §4.1: up to 100,000 sentences for contextual models).
        unit : {"word", "sentence"}, optional
            Default ``reference_unit`` (``"word"``).
        corpus, text : corpus spec, Corpus or list of sentences, optional
            Another reference corpus than the encoder's (``text`` is the name
            the CLI's ``--reference-text`` uses).
        seed : int, optional
            Sampling seed (default the encoder's).

        Returns
        -------
        batches : iterator of ndarray (b, dim) float64
            One array per chunk of ``chunk_size`` sentences; each chunk is
            cached on disk (keyed by the model, layer, unit and the chunk's
            sentences), so a rerun does not run the model.
        description : str
            Unit, pooling, corpus name and fingerprint, number of sentences,
            seed and layer (recorded in the whitener's metadata).
        """
        n, unit, corp, seed, sents = self._reference_setup(n, unit, corpus, text, seed)
        meta = self._meta(n, unit, corp, seed, sents)
        return self._reference_iter(sents, unit), self._describe_reference(meta)

    def _reference_key(self, chunk: Sequence[str], unit: str) -> dict[str, Any]:
        return {"kind": "hf-reference", "algo": _ALGO, "model": self.model_fingerprint, "layer": self.layer,
                "unit": unit, "pooling": _POOLING if unit == "word" else "attention-mean",
                "word_pattern": REFERENCE_WORD_RE.pattern if unit == "word" else None,
                "max_length": self.max_length_key, "sentences": _texts_digest(chunk), "n_sentences": len(chunk)}

    def _chunk_vectors(self, chunk: Sequence[str], unit: str) -> tuple[np.ndarray, int]:
        """Reference vectors of one chunk of sentences (float64) and its truncation count, cached."""
        key = self._reference_key(chunk, unit)
        hit = self.cache.get("hf-reference", key)
        if hit is not None and "vectors" in hit and hit["vectors"].ndim == 2 and hit["vectors"].shape[1] == self.dim:
            return hit["vectors"].astype(np.float64), int(hit.get("truncated", 0))
        if unit == "sentence":
            seqs, nt = self._encode_seqs(chunk, list(range(len(chunk))), "all")
            n_rows = len(chunk)
        else:
            jobs = []
            n_rows = 0
            for s in chunk:
                spans = [(m.start(), m.end()) for m in REFERENCE_WORD_RE.finditer(s)]
                arr = np.asarray(spans, dtype=np.int64).reshape(len(spans), 2)
                jobs.append((arr, np.arange(n_rows, n_rows + len(spans), dtype=np.int64)))
                n_rows += len(spans)
            seqs, nt = self._encode_seqs(chunk, jobs, "words")
        means, counts = self._pool(seqs, n_rows, f"reference ({unit})")
        vecs = np.ascontiguousarray(means[counts > 0])
        self.cache.put("hf-reference", key, {"vectors": vecs, "truncated": np.int64(nt)})
        return vecs.astype(np.float64), nt

    def _chunks(self, sents: Sequence[str]) -> Iterator[Sequence[str]]:
        for c0 in range(0, len(sents), self.chunk_size):
            yield sents[c0:c0 + self.chunk_size]

    def _warn_truncated(self, n_trunc: int) -> None:
        if n_trunc:
            warnings.warn(f"{self.name}: {n_trunc} reference sentence(s) longer than the model's maximum were "
                          "truncated (their end is not used)", IsoeatWarning, stacklevel=3)

    def _reference_iter(self, sents: Sequence[str], unit: str) -> Iterator[np.ndarray]:
        n_trunc = 0
        for chunk in self._chunks(sents):
            vecs, nt = self._chunk_vectors(chunk, unit)
            n_trunc += nt
            yield vecs
        self._warn_truncated(n_trunc)

    def reference_statistics(self, n: int = 100_000, *, unit: str | None = None, corpus: Any = None,
                             text: Any = None, seed: int | None = None, **_: Any) -> tuple[Any, str]:
        """Count, mean and co-moment of the :meth:`reference_batches` vectors, merged chunk by chunk.

        Returns ``(CovarianceAccumulator, description)``; feed it to
        ``ZCAWhitener.from_statistics``. Each chunk's statistics are cached
        next to its vectors, so a rerun reads ``O(d^2)`` numbers per chunk
        instead of every vector (and never runs the model).
        """
        n, unit, corp, seed, sents = self._reference_setup(n, unit, corpus, text, seed)
        desc = self._describe_reference(self._meta(n, unit, corp, seed, sents))
        acc, n_trunc = _chunked_statistics(
            self.cache, "hf-reference-stats",
            ((chunk, self._reference_key(chunk, unit)) for chunk in self._chunks(sents)),
            lambda chunk: self._chunk_vectors(chunk, unit), self.dim,
        )
        self._warn_truncated(n_trunc)
        return acc, desc

    def reference_vectors(self, n: int = 100_000, **kwargs: Any) -> tuple[np.ndarray, str]:
        """:meth:`reference_batches` materialised as one ``(m, dim)`` matrix (small ``n`` only)."""
        batches, desc = self.reference_batches(n, **kwargs)
        parts = [b for b in batches if b.size]
        if not parts:
            raise DataFormatError(f"{self.name}: the reference sentences gave no vectors")
        return np.concatenate(parts, axis=0), desc
