"""SEAT templates (May et al. 2019): the bleached sentences a stimulus word is placed into.

Stimulus data, like the word sets: the sentence encoders (:mod:`isoeat.backends.sentence`)
and SEAT (:mod:`isoeat.stats.seat`) both read them from here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .._errors import ConfigError, DataFormatError, IsoeatFileNotFoundError
from .._textio import compression_kind

__all__ = ["DEFAULT_TEMPLATES", "fill_template", "validate_templates", "load_templates"]

#: Semantically bleached templates after May et al. (2019), usable for names
#: and for common nouns alike. ``{}`` is the stimulus; a sentence that starts
#: with it gets a capital first letter.
DEFAULT_TEMPLATES: tuple[str, ...] = (
    "This is {}.",
    "That is {}.",
    "There is {}.",
    "Here is {}.",
    "{} is here.",
    "{} is there.",
    "{} is a person.",
    "It is {}.",
)


def fill_template(template: str, word: str, *, capitalize: bool = True) -> str:
    """``template`` with its ``{}`` replaced by ``word`` (other braces are literal).

    With ``capitalize`` the first letter of a sentence that starts with the
    slot is upper-cased ("{} is here." + "executive" -> "Executive is here.").

    Examples
    --------
    >>> fill_template("{} is here.", "executive")
    'Executive is here.'
    >>> fill_template("This is {}.", "Amy")
    'This is Amy.'
    """
    text = template.replace("{}", word, 1)
    if capitalize and template.startswith("{}") and text[:1].islower():
        text = text[0].upper() + text[1:]
    return text


def validate_templates(templates: Any, *, source: str | None = None) -> tuple[str, ...]:
    """Check a sequence of templates: strings, each with exactly one ``{}``, no duplicates."""
    if isinstance(templates, str):
        templates = [templates]
    try:
        items = list(templates)
    except TypeError:
        raise ConfigError(f"templates must be a list of strings with a '{{}}' slot, got {templates!r}") from None
    if not items:
        raise ConfigError("templates: the list is empty")
    seen: set[str] = set()
    for i, t in enumerate(items):
        where = f"{source}:{i + 1}" if source else f"templates[{i}]"
        if not isinstance(t, str) or t.count("{}") != 1:
            raise ConfigError(f"{where}: template {t!r} must contain exactly one '{{}}' slot for the word")
        if t in seen:
            raise ConfigError(f"{where}: duplicate template {t!r}")
        seen.add(t)
    return tuple(items)


def load_templates(path: str | os.PathLike) -> tuple[str, ...]:
    """Templates from a text file: one per line; blank lines and lines starting with ``#`` are skipped.

    Raises
    ------
    IsoeatFileNotFoundError
        No such file.
    DataFormatError
        A line without exactly one ``{}`` (the message gives file:line), a
        duplicate, or no template at all.
    """
    path = Path(path)
    if not path.exists():
        raise IsoeatFileNotFoundError(f"{path}: no such templates file")
    if path.is_dir():
        raise IsoeatFileNotFoundError(f"{path}: is a folder, expected a text file with one template per line")
    raw = path.read_bytes()
    compressed = compression_kind(path, raw[:8], gzip=True)  # a .bz2, .gz, ...: said, not "not valid UTF-8"
    if compressed is not None:
        raise DataFormatError(f"{path}: {compressed} compression is not supported (a templates file is read as "
                              "plain UTF-8 text; decompress it first)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
    out: list[str] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        t = line.strip()
        if not t or t.startswith("#"):
            continue
        n = t.count("{}")
        if n != 1:
            raise DataFormatError(
                f"{path}:{lineno}: template {t!r} has {n} '{{}}' slots; each template needs exactly one "
                "(e.g. 'This is {}.')"
            )
        if t in seen:
            raise DataFormatError(f"{path}:{lineno}: duplicate template {t!r} (first on line {seen[t]})")
        seen[t] = lineno
        out.append(t)
    if not out:
        raise DataFormatError(f"{path}: no templates (one per line, each with a '{{}}' slot)")
    return tuple(out)
