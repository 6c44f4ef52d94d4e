"""Characters the figures' font lacks (a CJK model label, an Arabic word): another installed font, or one line.

matplotlib draws every label in DejaVu Sans and, for each character that font
lacks, prints a raw ``UserWarning: Glyph N missing from font(s)`` per figure
and per format (16 lines for one CJK label). :func:`glyphs_for` looks at the
texts a report will draw first: when installed fonts have the missing
characters they are added as fallbacks (matplotlib >= 3.6 falls back glyph by
glyph along ``font.family``); when none has them, one
:class:`~isoeat.IsoeatWarning` names the characters and how to get a font. The
raw warnings are silenced either way (forked workers inherit the filter).
"""

from __future__ import annotations

import contextlib
import unicodedata
import warnings
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from .._errors import IsoeatWarning
from .._records import read_json

__all__ = ["glyphs_for", "report_texts", "missing_chars", "fonts_with"]

_BASE = "DejaVu Sans"


@cache
def _charmap(fname: str) -> frozenset[int]:
    from matplotlib.ft2font import FT2Font

    try:
        return frozenset(FT2Font(fname).get_charmap())
    except (OSError, RuntimeError, ValueError):  # a font file matplotlib cannot open: it covers nothing
        return frozenset()


@cache
def _fonts() -> tuple[tuple[str, str], ...]:
    """``(family name, file)`` of every installed font matplotlib knows that may stand in for DejaVu Sans."""
    from matplotlib import font_manager as fm

    seen: dict[str, str] = {}
    for f in fm.fontManager.ttflist:
        # not the base (the file drawn is its regular face, checked by missing_chars), not Last Resort (it maps
        # every character to a placeholder box: no glyph at all)
        if f.name != _BASE and not f.name.startswith("Last Resort"):
            seen.setdefault(f.fname, f.name)
    return tuple(sorted((name, fname) for fname, name in seen.items()))


def _drawn(ch: str) -> bool:
    """A character that needs a glyph (not a space, control or format character)."""
    return not ch.isspace() and unicodedata.category(ch)[0] not in ("C", "Z")


def missing_chars(texts: Iterable[str], family: str = _BASE) -> list[str]:
    """The characters of ``texts`` that ``family`` has no glyph for, in first-seen order."""
    from matplotlib import font_manager as fm

    have = _charmap(fm.findfont(fm.FontProperties(family=family), fallback_to_default=True))
    out: dict[str, None] = {}
    for text in texts:
        for ch in str(text):
            if ord(ch) > 127 and _drawn(ch) and ord(ch) not in have:
                out[ch] = None
    return list(out)


def fonts_with(chars: Iterable[str]) -> tuple[list[str], list[str]]:
    """``(families, still missing)``: installed font families that together have ``chars``, fewest first."""
    chars = list(chars)
    todo = {ord(c) for c in chars}
    families: list[str] = []
    for name, fname in _fonts():
        got = todo & _charmap(fname)
        if got and name not in families:
            families.append(name)
            todo -= got
        if not todo:
            break
    return families, [c for c in dict.fromkeys(chars) if ord(c) in todo]


def _strings(obj: Any, depth: int = 0) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif depth < 6 and isinstance(obj, dict):
        for k, v in obj.items():
            yield str(k)
            yield from _strings(v, depth + 1)
    elif depth < 6 and isinstance(obj, (list, tuple)):
        for v in obj:
            if isinstance(v, (str, dict, list, tuple)):
                yield from _strings(v, depth + 1)


def report_texts(res: Any) -> Iterator[str]:
    """Every text a report of ``res`` may draw: labels, names, test ids, and the words of the heatmaps."""
    yield from _strings(getattr(res, "experiment", {}).get("config", {}))
    for recs in (res.weat, res.comparisons, res.anisotropy, res.similarity, getattr(res, "metrics", [])):
        for r in recs:
            yield from _strings({k: v for k, v in r.items() if not isinstance(v, (list, tuple)) or k == "words"})
    for r in res.weat:
        if r.get("cell"):
            cos = (read_json(Path(res.out) / r["cell"]) or {}).get("cosines") or {}
            for k, v in cos.items():
                if k.endswith(("_words", "_name")):
                    yield from _strings(v)


@contextlib.contextmanager
def glyphs_for(texts: Iterable[str]) -> Iterator[list[str]]:
    """Draw the block's figures with a font for every character of ``texts`` where one is installed.

    Yields the characters no installed font has (said once, as an :class:`~isoeat.IsoeatWarning`); without
    matplotlib (a report of tables only) there is nothing to draw: it yields an empty list.
    """
    try:
        from matplotlib import rc_context
    except ImportError:
        yield []
        return

    missing = missing_chars(texts)
    families, lost = fonts_with(missing) if missing else ([], [])
    rc: dict[str, Any] = {}
    if families:  # matplotlib falls back glyph by glyph along font.family
        rc["font.family"] = [_BASE, *families]
    if lost:
        shown = ", ".join(lost[:12]) + (f" and {len(lost) - 12} more" if len(lost) > 12 else "")
        warnings.warn(f"the figures' labels hold {len(lost)} character(s) no installed font has ({shown}): they are "
                      "drawn as empty boxes; install a font that has them (e.g. fonts-noto-cjk for Chinese, "
                      "Japanese, Korean) and run the command again", IsoeatWarning, stacklevel=3)
    with rc_context(rc), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from", category=UserWarning)
        warnings.filterwarnings("ignore", message=r"findfont: ", category=UserWarning)
        yield lost
