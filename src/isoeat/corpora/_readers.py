"""Readers: turn a corpus source into a stream of paragraphs.

A *paragraph* is one line of text after format-specific clean-up; the
sentence splitter runs on each paragraph separately, so a sentence never spans
two lines. Formats:

``wikitext``
    WikiText raw files (``wiki.train.raw`` …): blank lines and header lines
    (``" = Title = "``, ``" = = Section = = "``) are skipped; every other line
    is detokenised with :func:`~isoeat.corpora._text.detokenize_wikitext`.
``wikiextractor``
    WikiExtractor output: ``<doc id=… url=… title=…>`` … ``</doc>`` blocks.
    The ``<doc>``/``</doc>`` lines and the first non-blank line of each block
    (the article title WikiExtractor writes there) are skipped; text outside
    blocks is skipped and counted. Section headings (short lines ending in
    ``.``) cannot be told from one-sentence paragraphs and go through the
    splitter like any line; nearly all of them are shorter than 7 tokens.
    Empty ``()`` left by removed templates are deleted.
``text``
    Plain UTF-8 text, one paragraph per line (hard-wrapped text should be
    unwrapped first); blank lines are skipped.

Files may be compressed (``.gz``, ``.bz2``, ``.xz``). A folder is read
recursively in sorted order of relative paths, skipping hidden files and
folders (names starting with ``.``); WikiText split files in one folder are
read in the order train, valid, test (as the ``datasets`` library does).

Only regular files are read: a FIFO, a device, a socket or a broken link,
given directly or found in a folder, is refused before anything opens it
(see :mod:`isoeat.corpora._files`), and a line longer than 1 MiB is an error
naming file and line.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .._errors import DataFormatError, IsoeatFileNotFoundError
from ._files import bounded_lines, check_regular_file
from ._text import (
    clean_wikiextractor,
    detokenize_wikitext,
    is_wikitext_header,
    normalize_space,
)

__all__ = ["ReadStats", "FORMATS", "sniff_format", "iter_files", "file_paragraphs", "wikitext_paragraphs"]

FORMATS = ("wikitext", "wikiextractor", "text")


@dataclass
class ReadStats:
    """What a reader saw; reported by ``Corpus.describe()`` and in errors."""

    files: int = 0
    empty_files: int = 0  # files of 0 bytes
    lines: int = 0
    blank_lines: int = 0
    header_lines: int = 0
    documents: int = 0
    skipped_lines: int = 0  # title lines, <doc> tags, text outside <doc>, wiki markup lines
    paragraphs: int = 0
    sentences: int = 0  # sentences out of the splitter
    too_short: int = 0
    too_long: int = 0
    formula: int = 0  # sentences dropped for a ``formula_N`` placeholder
    candidates: int = 0  # sentences that passed every filter
    formats: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "files": self.files,
            "empty_files": self.empty_files,
            "lines": self.lines,
            "blank_lines": self.blank_lines,
            "header_lines": self.header_lines,
            "documents": self.documents,
            "skipped_lines": self.skipped_lines,
            "paragraphs": self.paragraphs,
            "sentences_split": self.sentences,
            "too_short": self.too_short,
            "too_long": self.too_long,
            "dropped_formula": self.formula,
            "candidates": self.candidates,
            "formats": dict(self.formats),
        }


# ---------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------

# Callable[..., Any]: the openers are overloaded (binary or text by mode), so no IO[bytes] signature fits them
_OPENERS: dict[str, Callable[..., Any]] = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def _open_binary(path: Path) -> IO[bytes]:
    check_regular_file(path)
    opener = _OPENERS.get(path.suffix.lower(), open)
    try:
        return opener(path, "rb")
    except OSError as exc:
        raise IsoeatFileNotFoundError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` of a UTF-8 file (``\\r\\n`` accepted, BOM dropped).

    Raises
    ------
    DataFormatError
        At the first line that is not valid UTF-8, or longer than 1 MiB
        (:data:`~isoeat.corpora._files.MAX_LINE_BYTES`), naming file and line.
    IsoeatFileNotFoundError
        When the file cannot be opened or read.
    """
    with _open_binary(path) as fh:
        lineno = 0
        try:
            for raw in bounded_lines(fh, path):
                lineno += 1
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise DataFormatError(
                        f"{path}:{lineno}: not valid UTF-8 (byte {raw[exc.start]:#04x} at column "
                        f"{exc.start + 1}); corpus files must be UTF-8 text"
                    ) from None
                if lineno == 1 and text.startswith("\ufeff"):
                    text = text[1:]
                yield lineno, text.rstrip("\r\n")
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise IsoeatFileNotFoundError(f"{path}:{lineno + 1}: cannot be read ({exc})") from None


_WIKITEXT_SPLIT_ORDER = {"train": 0, "valid": 1, "validation": 1, "test": 2}
_WT_NAME = re.compile(r"wiki\.(train|valid|validation|test)\.(raw|tokens)(\.\w+)?", re.IGNORECASE)


def _sort_key(root: Path, path: Path) -> tuple:
    rel = path.relative_to(root)
    m = _WT_NAME.fullmatch(path.name)
    order = _WIKITEXT_SPLIT_ORDER[m.group(1).lower()] if m else -1
    return (rel.parent.as_posix(), order, rel.name)


def iter_files(path: Path) -> list[Path]:
    """The files of a corpus path: the file itself, or a folder's files (recursive, sorted).

    Raises
    ------
    IsoeatFileNotFoundError
        Missing path, a path or a folder entry that is not a regular file
        (FIFO, device, socket, broken link), or a folder without any
        (non-hidden) file.
    """
    if not path.exists():
        raise IsoeatFileNotFoundError(f"{path}: no such file or folder")
    if not path.is_dir():
        check_regular_file(path)
        return [path]
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        files.extend(Path(dirpath) / f for f in filenames if not f.startswith("."))
    for f in files:
        check_regular_file(f)
    if not files:
        raise IsoeatFileNotFoundError(f"{path}: folder has no files to read")
    return sorted(files, key=lambda f: _sort_key(path, f))


_DOC_OPEN = re.compile(r"\s*<doc(\s[^>]*)?>\s*")
_DOC_CLOSE = re.compile(r"\s*</doc>\s*")
_WT_ESCAPE = re.compile(r" @[-,.]@ ")


def sniff_format(path: Path) -> str:
    """Guess a file's format from its first lines: ``wikiextractor``, ``wikitext`` or ``text``.

    ``<doc …>`` as the first non-blank line means WikiExtractor; a WikiText
    header line with its leading space (``" = Title = "``) or an ``@-@``,
    ``@,@``, ``@.@`` escape within the first 200 non-blank lines means WikiText;
    anything else is plain text. A file with a NUL byte in its first 64 KiB is
    refused as binary.
    """
    with _open_binary(path) as fh:
        try:
            head = fh.read(65536)
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise IsoeatFileNotFoundError(f"{path}: cannot be read ({exc})") from None
    if b"\x00" in head:
        raise DataFormatError(f"{path}: looks binary (NUL bytes); corpus files must be UTF-8 text")
    text = head.decode("utf-8", errors="replace")
    lines = [ln for ln in text.splitlines() if ln.strip()][:200]
    if lines and _DOC_OPEN.match(lines[0]) and lines[0].lstrip().startswith("<doc"):
        return "wikiextractor"
    for ln in lines:
        if (ln.startswith(" =") and is_wikitext_header(ln)) or _WT_ESCAPE.search(ln):
            return "wikitext"
    return "text"


# ---------------------------------------------------------------------------
# line-level readers
# ---------------------------------------------------------------------------


def _paragraphs(lines: Iterable[str], stats: ReadStats, skip: Callable[[str], str | None],
                clean: Callable[[str], str]) -> Iterator[str]:
    """The loop every line reader shares: count the line, skip blank ones and those ``skip`` names, clean the rest.

    ``skip(line)`` returns the :class:`ReadStats` counter to increase for a
    line that is not a paragraph, or None; ``clean(line)`` returns the
    paragraph (an empty result is dropped without being counted).
    """
    for line in lines:
        stats.lines += 1
        reason = "blank_lines" if not line.strip() else skip(line)
        if reason is not None:
            setattr(stats, reason, getattr(stats, reason) + 1)
            continue
        para = clean(line)
        if para:
            stats.paragraphs += 1
            yield para


def _never(line: str) -> None:
    return None


def wikitext_paragraphs(lines: Iterable[str], stats: ReadStats) -> Iterator[str]:
    """Paragraphs of WikiText raw lines: headers and blank lines skipped, detokenised."""
    return _paragraphs(lines, stats, lambda line: "header_lines" if is_wikitext_header(line) else None,
                       detokenize_wikitext)


def wikiextractor_paragraphs(lines: Iterable[str], stats: ReadStats) -> Iterator[str]:
    """Paragraphs of WikiExtractor output (see the module docstring)."""
    state = {"in_doc": False, "want_title": False}

    def skip(line: str) -> str | None:
        if _DOC_OPEN.fullmatch(line):
            stats.documents += 1
            state.update(in_doc=True, want_title=True)
            return "skipped_lines"
        if _DOC_CLOSE.fullmatch(line):
            state.update(in_doc=False, want_title=False)
            return "skipped_lines"
        if not state["in_doc"] or state["want_title"]:
            state["want_title"] = False
            return "skipped_lines"  # the title line, or text outside any <doc>
        return None

    return _paragraphs(lines, stats, skip, clean_wikiextractor)


def text_paragraphs(lines: Iterable[str], stats: ReadStats) -> Iterator[str]:
    """Paragraphs of plain text: one per non-blank line, white space normalised."""
    return _paragraphs(lines, stats, _never, normalize_space)


_LINE_READERS: dict[str, Callable[[Iterable[str], ReadStats], Iterator[str]]] = {
    "wikitext": wikitext_paragraphs,
    "wikiextractor": wikiextractor_paragraphs,
    "text": text_paragraphs,
}


def file_paragraphs(path: Path, fmt: str | None, stats: ReadStats) -> Iterator[str]:
    """Paragraphs of one file in format ``fmt`` (sniffed when ``None``)."""
    fmt = fmt or sniff_format(path)
    stats.files += 1
    stats.empty_files += int(check_regular_file(path).st_size == 0)
    stats.formats[fmt] = stats.formats.get(fmt, 0) + 1
    yield from _LINE_READERS[fmt]((text for _, text in iter_lines(path)), stats)


# ---------------------------------------------------------------------------
# gensim's Wikipedia XML sample
# ---------------------------------------------------------------------------

GENSIM_WIKI_FILE = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
_WIKI_HEADING = re.compile(r"=+[^=].*?=+")
_WIKI_MARKUP_START = tuple("*#:;|!{}")
_BOLD_ITALIC = re.compile(r"'{2,}")
_ENDS_SENTENCE = re.compile(r"[.!?][\"'”’)\]]*$")
_FILE_LINK = re.compile(r"(?:File|Image):", re.IGNORECASE)


def gensim_wiki_path() -> Path:
    """Path of the Wikipedia XML dump sample shipped in gensim's test data."""
    try:
        from gensim.test.utils import datapath
    except ImportError:
        from .._errors import MissingDependencyError

        raise MissingDependencyError(
            'the gensim-wiki corpus needs gensim (its test data): pip install "isoeat[gensim]"'
        ) from None
    path = Path(datapath(GENSIM_WIKI_FILE))
    if not path.is_file():
        raise IsoeatFileNotFoundError(f"{path}: gensim's Wikipedia test sample is missing from this gensim install")
    return path


def wiki_xml_paragraphs(path: Path, stats: ReadStats) -> Iterator[str]:
    """Paragraphs of a MediaWiki XML dump (``.bz2``) through gensim's markup filter.

    Only main-namespace articles are read; redirects are skipped. After
    ``gensim.corpora.wikicorpus.filter_wiki`` each line is a paragraph, except
    blank lines, ``== Heading ==`` lines, lines that start with list/table
    markup (``* # : ; | ! { }``) or ``File:``/``Image:`` (gallery residue),
    and lines that do not end a sentence (``. ! ?``, optionally followed by
    closing quotes or brackets): gensim's filter leaves image captions,
    table cells and list introductions as such lines. ``''``/``'''``
    emphasis marks are removed and template residue is cleaned as by
    :func:`~isoeat.corpora._text.clean_wikiextractor`.
    """
    from gensim.corpora.wikicorpus import extract_pages, filter_wiki

    stats.files += 1
    stats.formats["mediawiki-xml"] = stats.formats.get("mediawiki-xml", 0) + 1
    with _open_binary(path) as fh:
        for _title, text, _pageid in extract_pages(fh, filter_namespaces=("0",)):
            if text.lstrip()[:9].lower() == "#redirect":
                continue
            stats.documents += 1
            for line in filter_wiki(text).splitlines():
                stats.lines += 1
                s = line.strip()
                if not s:
                    stats.blank_lines += 1
                    continue
                if _WIKI_HEADING.fullmatch(s):
                    stats.header_lines += 1
                    continue
                para = clean_wikiextractor(_BOLD_ITALIC.sub("", s))
                if s.startswith(_WIKI_MARKUP_START) or _FILE_LINK.match(s) or not _ENDS_SENTENCE.search(para):
                    stats.skipped_lines += 1
                    continue
                if para:
                    stats.paragraphs += 1
                    yield para
