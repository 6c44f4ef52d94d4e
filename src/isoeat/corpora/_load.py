"""``load_corpus(spec)``: named corpora, ``FORMAT:PATH`` specs and sniffed paths."""

from __future__ import annotations

import hashlib
import lzma
import os
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from .._env import env_path
from .._errors import IsoeatFileNotFoundError, MissingDependencyError, UnknownNameError
from .._registry import Registry
from ._corpus import Corpus, TextOrigin, check_settings
from ._files import file_sha256, files_sha256
from ._readers import (
    _OPENERS,
    FORMATS,
    ReadStats,
    file_paragraphs,
    gensim_wiki_path,
    iter_files,
    wiki_xml_paragraphs,
    wikitext_paragraphs,
)
from ._text import Splitter, get_splitter

__all__ = [
    "load_corpus",
    "available_corpora",
    "clear_corpus_cache",
    "NAMED_CORPORA",
    "FORMAT_PREFIXES",
    "shared_wikitext2_path",
    "bundled_wikitext2_test",
    "BUNDLED_WIKITEXT2_NAME",
    "shared_enwiki_sample_path",
    "offline_corpora",
    "corpus_variables",
    "CORPUS_VARIABLES",
    "resolve_auto_corpus",
    "resolve_corpus_spec",
]

#: ``FORMAT:PATH`` prefixes.
FORMAT_PREFIXES = FORMATS

_WIKITEXT_HINT = (
    "download WikiText ({config}.zip from the WikiText page of Salesforce Research, or any copy) "
    "and pass 'wikitext:PATH' with PATH a folder holding wiki.train.raw, wiki.valid.raw, wiki.test.raw "
    "(or set {env} to that folder)"
)


class _Source(NamedTuple):
    description: str
    paragraphs: Callable[[ReadStats], Iterator[str]]
    identity: tuple  # what the content depends on (paths, sizes, mtimes, inodes); the in-process cache key
    sha256: Callable[[], str | None]  # SHA-256 of the source's bytes (asked once the paragraphs are read)


_CACHE: OrderedDict[tuple, Corpus] = OrderedDict()
_CACHE_MAX = 4
_CACHE_LOCK = threading.Lock()


def clear_corpus_cache() -> None:
    """Forget the corpora that :func:`load_corpus` keeps in memory."""
    with _CACHE_LOCK:
        _CACHE.clear()


def _file_identity(files: list[Path]) -> tuple:
    out = []
    for f in files:
        st = f.stat()
        out.append((str(f.resolve()), st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev))
    return tuple(out)


def _shared_roots() -> list[Path]:
    """Where shared data folders are looked for: ``$ISOEAT_DATA_DIR``, ``$ISOEAT_SHARED_DATA``, next to the
    source checkout (``<repo>/../shared/data``) and next to the working directory (``../shared/data``)."""
    roots: list[Path] = []
    for env in ("ISOEAT_DATA_DIR", "ISOEAT_SHARED_DATA"):
        value = env_path(env, folder=True)  # set but pointing nowhere: an error, never other data instead
        if value is not None:
            roots.append(value)
    here = Path(__file__).resolve()
    if len(here.parents) > 4:
        roots.append(here.parents[4] / "shared" / "data")
    roots.append(Path.cwd().parent / "shared" / "data")
    return roots


def _shared_corpus(folder: str, pattern: str) -> Path | None:
    for root in _shared_roots():
        cand = root / "corpora" / folder
        if cand.is_dir() and any(cand.glob(pattern)):
            return cand
    return None


def shared_wikitext2_path() -> Path | None:
    """The project's ``shared/data/corpora/wikitext-2-raw-v1`` copy, if one is reachable.

    Looked for under ``corpora/`` of each shared data folder (:func:`_shared_roots`: ``$ISOEAT_DATA_DIR``,
    ``$ISOEAT_SHARED_DATA``, ``<repo>/../shared/data``, ``../shared/data``). isoeat never needs it; it
    only serves ``"wikitext-2"``.
    """
    return _shared_corpus("wikitext-2-raw-v1", "wiki.*.raw")


#: How the bundled WikiText-2 test split is named beside a figure measured on it.
BUNDLED_WIKITEXT2_NAME = "WikiText-2 (test split, bundled)"


def bundled_wikitext2_test() -> Path:
    """The WikiText-2 raw test split shipped inside isoeat (``corpora/data/wiki.test.raw.gz``: Merity et al. 2016,
    CC BY-SA 3.0, see NOTICE.md; gzip-compressed, otherwise byte-identical, 1,290,590 bytes, SHA-256
    ``173c87a5...dd08``): the text frame ``paper`` reads when no larger WikiText is here, the same on every machine."""
    return Path(__file__).resolve().parent / "data" / "wiki.test.raw.gz"


def shared_enwiki_sample_path() -> Path | None:
    """The ``corpora/enwiki-2015-wikiextractor-sample`` folder (WikiExtractor text of 1,952 English
    Wikipedia articles) of a shared data folder, if one is reachable; it serves ``"enwiki-sample"``."""
    return _shared_corpus("enwiki-2015-wikiextractor-sample", "*/wiki_*")


def _enwiki_sample() -> _Source:
    found = shared_enwiki_sample_path()
    if found is None:
        raise IsoeatFileNotFoundError(
            "enwiki-sample: no corpora/enwiki-2015-wikiextractor-sample folder under $ISOEAT_DATA_DIR, "
            "$ISOEAT_SHARED_DATA or ../shared/data; give the folder as wikiextractor:PATH instead")
    return _folder_source(found, "wikiextractor")


def _text_bytes(files: list[Path]) -> int:
    """Bytes of text in ``files`` (a compressed file counts its uncompressed bytes, read once)."""
    total = 0
    for f in files:
        if f.suffix.lower() in (".bz2", ".gz", ".xz"):
            with _OPENERS[f.suffix.lower()](f, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    total += len(chunk)
        else:
            total += f.stat().st_size
    return total


#: The corpus variables: corpus name -> the variable naming its raw folder.
CORPUS_VARIABLES = {"wikitext-103": "ISOEAT_WIKITEXT103", "wikitext-2": "ISOEAT_WIKITEXT2"}


def _unreadable(name: str, path: Path, why: Exception | str) -> IsoeatFileNotFoundError:
    var = CORPUS_VARIABLES[name]
    return IsoeatFileNotFoundError(f"${var}={path}: no readable {name} text there ({why}); point it at the {name} "
                                   f"raw folder, or unset {var}")


def corpus_variables() -> dict[str, Path | None]:
    """The corpus folders the environment names (``wikitext-103``, ``wikitext-2``: a path or None), checked.

    The one check of the data variables, wherever a corpus is chosen (``offline_corpora``, and so ``reproduce``
    and ``corpus="auto"``; frame ``paper`` of ``run`` and ``anisotropy``): ``$ISOEAT_DATA_DIR`` and
    ``$ISOEAT_SHARED_DATA`` must name folders, ``$ISOEAT_WIKITEXT103`` and ``$ISOEAT_WIKITEXT2`` a file or
    folder with text to read. A variable that is set but names nothing usable is one line naming it and its
    path (:class:`~isoeat.IsoeatFileNotFoundError`), never other data instead.
    """
    _shared_roots()  # the data-folder variables
    named: dict[str, Path | None] = {}
    for name, var in CORPUS_VARIABLES.items():
        path = env_path(var)
        if path is not None:
            try:
                iter_files(path)
            except IsoeatFileNotFoundError as exc:  # an empty folder, a FIFO, a broken link inside
                raise _unreadable(name, path, str(exc).removeprefix(f"{path}: ")) from None
        named[name] = path
    return named


def offline_corpora() -> list[dict]:
    """The named corpora present on this machine without a network, largest first.

    The candidates: ``wikitext-103`` (only from the folder in ``$ISOEAT_WIKITEXT103``: through ``datasets``
    it needs a network or its cache), ``enwiki-sample``, ``wikitext-2`` (``$ISOEAT_WIKITEXT2`` or the shared
    copy) and ``gensim-wiki`` (gensim's test data); each present one with its ``path`` and ``bytes`` of
    text, sorted by ``bytes`` (descending). ``corpus="auto"`` means the first. A set variable is checked
    (:func:`corpus_variables`).
    """
    found: list[tuple[str, Path]] = []
    named = corpus_variables()
    if named["wikitext-103"] is not None:
        found.append(("wikitext-103", named["wikitext-103"]))
    enwiki = shared_enwiki_sample_path()
    if enwiki is not None:
        found.append(("enwiki-sample", enwiki))
    w2 = named["wikitext-2"] or shared_wikitext2_path()
    if w2:
        found.append(("wikitext-2", Path(w2)))
    try:
        found.append(("gensim-wiki", gensim_wiki_path()))
    except Exception:  # noqa: BLE001 - gensim (or its test data) absent: not a candidate
        pass
    out = []
    for name, path in found:
        try:
            out.append({"name": name, "path": str(path), "bytes": _text_bytes(iter_files(path))})
        except (OSError, EOFError, lzma.LZMAError, zlib.error, IsoeatFileNotFoundError) as exc:
            if named.get(name) == path:  # the user's variable names it: say so, never pick another corpus
                raise _unreadable(name, path, exc) from None
            continue  # not readable (a truncated or corrupt .gz/.bz2/.xz): not present
    return sorted(out, key=lambda c: -c["bytes"])


_Spec = TypeVar("_Spec", str, None)


def resolve_auto_corpus(spec: _Spec) -> _Spec:
    """``"auto"`` as the largest corpus of :func:`offline_corpora` (its name); any other spec unchanged."""
    if spec is None or str(spec).strip().lower() != "auto":
        return spec
    present = offline_corpora()
    if not present:
        raise IsoeatFileNotFoundError("corpus auto: no corpus is present offline (install gensim for its "
                                      "Wikipedia sample, or give a corpus file or folder)")
    return present[0]["name"]


def _folder_source(path: Path, fmt: str | None) -> _Source:
    files = iter_files(path)

    def paragraphs(stats: ReadStats) -> Iterator[str]:
        for f in files:
            yield from file_paragraphs(f, fmt, stats)

    what = f"{fmt} " if fmt else ""
    desc = f"{what}{'folder' if path.is_dir() else 'file'} {path.resolve()}"
    if path.is_dir():
        desc += f" ({len(files)} files)"
    return _Source(desc, paragraphs, ("files", fmt, _file_identity(files)), lambda: files_sha256(path, files))


def _datasets_wikitext(config: str, env: str) -> _Source:
    hint = _WIKITEXT_HINT.format(config=config, env=env)
    try:
        import datasets
    except ImportError:
        raise MissingDependencyError(
            f"{config} is read through the datasets library when no local copy is given: "
            f"pip install datasets — or {hint}"
        ) from None

    digest = hashlib.sha256(b"isoeat-datasets-rows-1\n")

    def lines() -> Iterator[str]:
        for row in rows():
            digest.update(row.encode("utf-8", "surrogatepass") + b"\0")
            yield row

    def rows() -> Iterator[str]:
        try:
            ds = datasets.load_dataset("wikitext", config)
        except Exception as exc:  # offline, hub errors, cache problems: all mean "not available here"
            raise IsoeatFileNotFoundError(
                f"could not load {config} through datasets ({type(exc).__name__}: {exc}); "
                f"if this machine is offline, {hint}"
            ) from None
        for split in ("train", "validation", "test"):
            if split not in ds:
                continue
            part = ds[split]
            if hasattr(part, "iter"):
                for batch in part.iter(batch_size=10_000):
                    yield from batch["text"]
            else:  # pragma: no cover - very old datasets
                for row in part:
                    yield row["text"]

    def paragraphs(stats: ReadStats) -> Iterator[str]:
        stats.files += 1
        stats.formats["wikitext"] = stats.formats.get("wikitext", 0) + 1
        yield from wikitext_paragraphs(lines(), stats)

    version = getattr(datasets, "__version__", "?")
    return _Source(f"datasets: wikitext/{config} (train, validation, test)", paragraphs, ("datasets", config, version),
                   digest.hexdigest)


def _wikitext_named(config: str, env: str, shared: bool) -> Callable[[], _Source]:
    def resolve() -> _Source:
        local = env_path(env)
        if local is not None:
            return _folder_source(local, "wikitext")
        if shared:
            found = shared_wikitext2_path()
            if found is not None:
                return _folder_source(found, "wikitext")
        return _datasets_wikitext(config, env)

    return resolve


def _gensim_wiki() -> _Source:
    path = gensim_wiki_path()

    def paragraphs(stats: ReadStats) -> Iterator[str]:
        yield from wiki_xml_paragraphs(path, stats)

    return _Source(
        f"gensim test data: {path.name} (MediaWiki XML, main-namespace articles)",
        paragraphs,
        ("gensim-wiki", _file_identity([path])),
        lambda: file_sha256(path),
    )


#: Named corpora: name -> resolver returning a source (description, paragraphs factory, identity).
#: Case-insensitive, with aliases (``wt103``, ``gensim``, ...).
NAMED_CORPORA: Registry[Callable[[], _Source]] = Registry(
    "corpus",
    {
        "gensim-wiki": _gensim_wiki,
        "wikitext-103": _wikitext_named("wikitext-103-raw-v1", "ISOEAT_WIKITEXT103", shared=False),
        "wikitext-2": _wikitext_named("wikitext-2-raw-v1", "ISOEAT_WIKITEXT2", shared=True),
        "enwiki-sample": _enwiki_sample,
    },
    aliases={
        "gensim": "gensim-wiki",
        "gensim-wikipedia": "gensim-wiki",
        "wikitext103": "wikitext-103",
        "wt103": "wikitext-103",
        "wikitext-103-raw-v1": "wikitext-103",
        "wikitext2": "wikitext-2",
        "wt2": "wikitext-2",
        "wikitext-2-raw-v1": "wikitext-2",
        "enwiki": "enwiki-sample",
        "enwiki-2015-wikiextractor-sample": "enwiki-sample",
    },
    fold_case=True,
    known="named corpora",
    also=f"or FORMAT:PATH with FORMAT in {', '.join(FORMAT_PREFIXES)}; or a path",
)


def resolve_corpus_spec(spec: str, option: str = "--corpus") -> str:
    """A corpus spec as the corpus it names: ``auto`` as the largest present offline, a named corpus (an alias
    or another case too) as its name, ``FORMAT:PATH`` or a path (which must exist) made absolute.

    Raises :class:`~isoeat.ConfigError` naming ``option`` and the spec: one line, with a suggestion.

    Examples
    --------
    >>> resolve_corpus_spec("/no/such/corpus.txt", "--corpus")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    isoeat._errors.ConfigError: --corpus /no/such/corpus.txt: no such file or folder and no named corpus (...)
    """
    from .._errors import ConfigError, IsoeatError

    try:
        name = resolve_auto_corpus(spec)
    except IsoeatError as exc:
        raise ConfigError(f"{option} {spec}: {exc}") from None
    named = NAMED_CORPORA.resolve(name)
    if named is not None:
        return str(named)
    prefix, sep, rest = name.partition(":")
    fmt = prefix if sep and prefix.lower() in [f.lower() for f in FORMAT_PREFIXES] else ""
    path = Path(rest if fmt else name).expanduser()
    if not path.exists():
        raise ConfigError(f"{option} {spec}: no such file or folder and no named corpus{NAMED_CORPORA.suggest(spec)} "
                          f"(named corpora: {', '.join(NAMED_CORPORA.names())}; or auto)")
    return f"{fmt}:{path.resolve()}" if fmt else str(path.resolve())


def corpus_list(items: list[str], option: str = "--across-corpora") -> list[str]:
    """The corpus specs of a list option (``run --across-corpora``), each item as given: an item that names an
    existing file or folder (``PATH`` or ``FORMAT:PATH``) is one corpus, commas and all; any other item is split at
    its commas. So a path with a comma is taken whole where it exists, and the option may be repeated instead.

    >>> corpus_list(["wikitext-2,enwiki-sample", "gensim-wiki"])
    ['wikitext-2', 'enwiki-sample', 'gensim-wiki']
    """
    from .._errors import ConfigError

    out: list[str] = []
    for item in items:
        text = str(item).strip()
        prefix, sep, rest = text.partition(":")
        path = rest if sep and prefix.lower() in [f.lower() for f in FORMAT_PREFIXES] else text
        if "," in text and path and Path(path).expanduser().exists():
            out.append(text)
            continue
        parts = [s.strip() for s in text.split(",")]
        if not all(parts):
            raise ConfigError(f"{option}: empty name in {text!r} (names and paths, comma-separated; a path with a "
                              f"comma: as it exists, or {option} repeated)")
        out.extend(parts)
    return out


def available_corpora() -> list[str]:
    """Names accepted by :func:`load_corpus` without a path, and the ``FORMAT:PATH`` prefixes."""
    return sorted(NAMED_CORPORA) + [f"{p}:PATH" for p in FORMAT_PREFIXES]


def _resolve(spec: str) -> tuple[str, _Source]:
    spec = resolve_auto_corpus(spec)
    key = NAMED_CORPORA.resolve(spec)
    if key is not None:
        return key, NAMED_CORPORA.get(key)()
    prefix, sep, rest = spec.partition(":")
    if sep and prefix.lower() in FORMAT_PREFIXES:
        if not rest.strip():
            raise UnknownNameError(f"corpus spec {spec!r}: a path is needed after '{prefix}:'")
        path = Path(rest.strip()).expanduser()
        if not path.exists():
            raise IsoeatFileNotFoundError(f"{path}: no such file or folder (corpus spec {spec!r})")
        return spec, _folder_source(path, prefix.lower())
    path = Path(spec).expanduser()
    if path.exists():
        return spec, _folder_source(path, None)
    looks_like_path = any(c in spec for c in "/\\") or "." in path.name or spec.startswith("~")
    if looks_like_path:
        raise IsoeatFileNotFoundError(f"{path}: no such file or folder (corpus spec {spec!r})")
    raise NAMED_CORPORA.unknown(spec, what=f"unknown corpus {spec!r} and no such file or folder")


def load_corpus(
    spec: str | os.PathLike,
    *,
    max_sentences: int = 200_000,
    min_tokens: int = 7,
    max_tokens: int = 75,
    seed: int = 0,
    splitter: str | Splitter = "sentencex",
    cache: bool = True,
) -> Corpus:
    """Read a reference corpus, split it into sentences, filter and sample them.

    Every paragraph (line) is split into sentences; a sentence is kept when
    it has ``min_tokens``–``max_tokens`` whitespace tokens (inclusive, counted
    after detokenisation) and no ``formula_N`` placeholder. Of the kept
    sentences ("candidates") at most ``max_sentences`` are sampled by
    reservoir sampling seeded with ``seed``; they are kept in corpus order.
    The sample depends only on the content, the settings and the seed
    (paper §4.1: 7–75 tokens, no section headers, up to 200,000 sentences,
    fixed seed).

    Parameters
    ----------
    spec : str or path
        * ``"gensim-wiki"``: the real Wikipedia XML sample shipped in gensim's
          test data (107 articles; works offline; needs gensim).
        * ``"wikitext-103"``: WikiText-103 raw (train, validation, test). From
          the folder in ``$ISOEAT_WIKITEXT103`` when set, else through
          ``datasets.load_dataset("wikitext", "wikitext-103-raw-v1")`` (needs
          the ``datasets`` package and a network or its cache).
        * ``"wikitext-2"``: WikiText-2 raw, from ``$ISOEAT_WIKITEXT2``, else the
          project's ``shared/data`` copy when reachable (valid and test splits
          only; see :func:`shared_wikitext2_path`), else through ``datasets``.
        * ``"enwiki-sample"``: the WikiExtractor text of 1,952 English Wikipedia
          articles in a shared data folder (:func:`shared_enwiki_sample_path`).
        * ``"auto"``: the largest corpus present offline (:func:`offline_corpora`).
        * ``"wikitext:PATH"``, ``"wikiextractor:PATH"``, ``"text:PATH"``: a
          file or folder in that format.
        * a file or folder path: the format of each file is sniffed (see
          :func:`~isoeat.corpora._readers.sniff_format`).
    max_sentences : int
        How many sentences to index at most (default 200,000).
    min_tokens, max_tokens : int
        Inclusive bounds on a sentence's whitespace tokens (defaults 7, 75).
    seed : int
        Seed of the reservoir sample (>= 0).
    splitter : {"sentencex", "regex"} or Splitter
        The sentence splitter (default: Wikimedia's sentencex).
    cache : bool
        Reuse a corpus already loaded in this process with the same source
        and settings (default True; the last 4 are kept). Files are the same
        source while their paths, sizes, modification times and inodes are;
        a cached corpus keeps its built index. ``False`` always reads again.

    Returns
    -------
    Corpus
        With ``source_sha256``, the SHA-256 of the source's bytes (see
        :class:`~isoeat.corpora.Corpus`).

    Raises
    ------
    ConfigError
        A bad setting (the message names it).
    UnknownNameError
        Neither a named corpus nor an existing path.
    IsoeatFileNotFoundError
        A missing or unreadable path, a FIFO, device or socket (refused
        before opening; also inside a folder); WikiText through ``datasets``
        unreachable.
    DataFormatError
        A file that is not UTF-8 text or has a line over 1 MiB (with
        file:line), or no usable sentences ("the file is empty" when the
        file has 0 bytes).
    MissingDependencyError
        gensim (for ``gensim-wiki``), datasets or sentencex not installed.

    Examples
    --------
    >>> corpus = load_corpus("gensim-wiki")  # doctest: +SKIP
    >>> ctx = corpus.contexts("doctor", k=20)  # doctest: +SKIP
    """
    settings = check_settings(min_tokens, max_tokens, max_sentences, seed)
    split = get_splitter(splitter)
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownNameError(f"corpus spec must be a non-empty string or path, got {spec!r}")
    name, source = _resolve(spec.strip())
    key = (name, source.identity, tuple(sorted(settings.items())), split.label)
    hit = _cached(key) if cache else None
    if hit is not None:
        return hit
    stats = ReadStats()
    corpus = Corpus._build(source.paragraphs(stats), split.split, split.label,
                           TextOrigin(name, source.description, stats, source.sha256), settings)
    if cache:
        _remember(key, corpus)
    return corpus


def _cached(key: tuple[Any, ...]) -> Corpus | None:
    """The corpus this process loaded with ``key`` (source, settings, splitter), if it is still kept."""
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
        return hit


def _remember(key: tuple[Any, ...], corpus: Corpus) -> None:
    """Keep ``corpus`` under ``key``, the last :data:`_CACHE_MAX` loaded."""
    with _CACHE_LOCK:
        _CACHE[key] = corpus
        while len(_CACHE) > _CACHE_MAX:
            _CACHE.popitem(last=False)
