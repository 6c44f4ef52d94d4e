"""Text clean-up and sentence splitting for reference corpora.

Everything here works on one *paragraph* (one line of a corpus file) at a time.

WikiText detokenisation (:func:`detokenize_wikitext`)
-----------------------------------------------------
WikiText-2/103 *raw* files keep Wikipedia's words but space out punctuation
(``"Homarus gammarus , known as ..."``, ``"0 @.@ 7 – 2 @.@ 2 kg ( 1 @.@ 5 lb )"``).
The rules, applied in this order, are exactly:

1. ``" @-@ "`` → ``"-"``, ``" @,@ "`` → ``","``, ``" @.@ "`` → ``"."``
   (WikiText's escaped hyphens and number separators).
2. The line is cut into whitespace tokens and glued back with one space, except:

   * no space **before** a closing token: ``,`` ``.`` ``;`` ``:`` ``!`` ``?``
     ``%`` ``)`` ``]`` ``}`` ``...`` and the clitics ``'s 't 're 've 'll 'd 'm
     n't`` (also with ``’``);
   * ``’`` followed by one of the clitic tails ``s t re ve ll d m`` is glued to
     both neighbours (``"SEPTA ’ s"`` → ``"SEPTA’s"``, ``"I ’ m"`` → ``"I’m"``);
   * no space **after** an opening bracket ``(`` ``[`` ``{``;
   * no space after a currency sign ``$ £ € ¥ ₱ #`` that is followed by a
     token starting with a digit (``"$ 25,085"`` → ``"$25,085"``);
   * straight double quotes ``"`` standing alone: when a line has an even
     number of them they are paired left to right, the first of each pair
     glued to the next token and the second to the previous one
     (``'" lobster red "'`` → ``'"lobster red"'``); with an odd number they
     are left as they are. Single quotes ``'`` are left alone (a lone ``'``
     is as often a plural possessive, ``"Linnaeus ' concept"``, as a quote).
   * Everything else (``–``, ``—``, ``/``, ``&``) keeps its spaces.

Header lines (``" = Title = "``, ``" = = Section = = "``, …) are recognised
by :func:`is_wikitext_header`: after stripping, one or more ``"= "`` at the
start, one or more ``" ="`` at the end, and something in between.

Sentence splitting
------------------
The default splitter is `sentencex <https://github.com/wikimedia/sentencex>`_
(Wikimedia's rule-based segmenter, MIT, compiled wheels for CPython ≥ 3.10 on
Linux, macOS and Windows; it knows English abbreviations, initials, decimal
numbers and quotes, and was written for Wikipedia text). ``splitter="regex"``
selects a small built-in splitter with no dependency (see
:func:`regex_split`); it is documented, deterministic and a little cruder.
The splitter's name and version are part of a corpus fingerprint.

Sentences are whitespace-normalised (runs of white space become one space,
ends stripped) and their *tokens*, for the 7–75 filter, are the whitespace
tokens of that normalised, detokenised text (``len(sentence.split())``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .._errors import MissingDependencyError
from .._validate import check_choice

__all__ = [
    "detokenize_wikitext",
    "is_wikitext_header",
    "clean_wikiextractor",
    "regex_split",
    "Splitter",
    "get_splitter",
    "SPLITTERS",
    "normalize_space",
    "PREPROCESS_VERSION",
]

#: Version of the readers' clean-up rules; part of every corpus fingerprint.
PREPROCESS_VERSION = "isoeat-corpora-1"

_HEADER = re.compile(r"(?:= )+\S.*?(?: =)+")
_AT_ESCAPES = ((" @-@ ", "-"), (" @,@ ", ","), (" @.@ ", "."))
_CLOSE = frozenset({",", ".", ";", ":", "!", "?", "%", ")", "]", "}", "...", "n't", "n’t"})
_CLITIC = re.compile(r"['’](?:s|t|re|ve|ll|d|m)", re.IGNORECASE)
_CLITIC_TAIL = frozenset({"s", "t", "re", "ve", "ll", "d", "m"})
_OPEN = frozenset({"(", "[", "{"})
_CURRENCY = frozenset({"$", "£", "€", "¥", "₱", "#"})
_WS = re.compile(r"\s+")


def normalize_space(text: str) -> str:
    """Collapse runs of white space to one space and strip the ends."""
    return " ".join(text.split())


def is_wikitext_header(line: str) -> bool:
    """Whether a WikiText line is a title or section header (``" = = Name = = "``)."""
    return _HEADER.fullmatch(line.strip()) is not None


def detokenize_wikitext(line: str) -> str:
    """Undo WikiText's tokenisation spacing on one paragraph line.

    Parameters
    ----------
    line : str
        One line of a WikiText *raw* file (not a header).

    Returns
    -------
    str
        The line with the rules in this module's docstring applied, whitespace
        normalised.

    Examples
    --------
    >>> detokenize_wikitext(' It weighs 0 @.@ 7 – 2 @,@ 200 kg ( 1 @.@ 5 lb ) , " red @-@ tipped " . ')
    'It weighs 0.7 – 2,200 kg (1.5 lb), "red-tipped".'
    """
    for old, new in _AT_ESCAPES:
        line = line.replace(old, new)
    toks = line.split()
    if not toks:
        return ""
    n_quotes = sum(1 for t in toks if t == '"')
    pair_quotes = n_quotes > 0 and n_quotes % 2 == 0
    out: list[str] = []
    glue_next = False  # no space before the next token
    quote_open = False
    n = len(toks)
    for i, tok in enumerate(toks):
        attach = glue_next  # attach this token to the previous one
        glue_next = False
        if tok in _CLOSE or (_CLITIC.fullmatch(tok) and out and out[-1][-1:].isalnum()):
            attach = True
        elif tok == "’" and i + 1 < n and toks[i + 1].lower() in _CLITIC_TAIL and out and out[-1][-1:].isalnum():
            attach = True
            glue_next = True
        elif tok in _OPEN:
            glue_next = True
        elif tok in _CURRENCY and i + 1 < n and toks[i + 1][:1].isdigit():
            glue_next = True
        elif tok == '"' and pair_quotes:
            if quote_open:
                attach = True
            else:
                glue_next = True
            quote_open = not quote_open
        if attach and out:
            out[-1] += tok
        else:
            out.append(tok)
    return " ".join(out)


_EMPTY_PARENS = re.compile(r"\s*\(\s*\)")
_LEADING_PUNCT_IN_PARENS = re.compile(r"\(\s*(?:[,;]\s*)+")
_TRAILING_PUNCT_IN_PARENS = re.compile(r"(?:\s*[,;])+\s*\)")
_FORMULA = re.compile(r"\bformula_\d+\b")


def clean_wikiextractor(line: str) -> str:
    """Remove residue of removed templates: ``(; ,`` openings, ``, )`` endings, then empty ``()``.

    Parameters
    ----------
    line : str
        One paragraph line of WikiExtractor (or gensim ``filter_wiki``) output.

    Returns
    -------
    str
        The cleaned, whitespace-normalised line.

    Examples
    --------
    >>> clean_wikiextractor("Arctic () with long winters (; , born 1950, ) here (; ).")
    'Arctic with long winters (born 1950) here.'
    """
    line = _LEADING_PUNCT_IN_PARENS.sub("(", line)
    line = _TRAILING_PUNCT_IN_PARENS.sub(")", line)
    line = _EMPTY_PARENS.sub("", line)
    return normalize_space(line)


def has_formula(sentence: str) -> bool:
    """Whether a sentence has WikiExtractor's ``formula_N`` placeholder (such sentences are dropped)."""
    return "formula_" in sentence and _FORMULA.search(sentence) is not None


# ---------------------------------------------------------------------------
# the built-in regex splitter
# ---------------------------------------------------------------------------

#: Lower-cased abbreviations (without their final period) after which a period
#: does not end a sentence in :func:`regex_split`.
REGEX_ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof sr jr st mt ft rev hon gen col lt sgt capt cmdr adm gov sen rep pres
    no nos vol vols fig figs p pp ed eds inc ltd co corp bros dept univ assn
    jan feb mar apr jun jul aug sep sept oct nov dec
    e.g i.e etc vs cf al approx ca c est op ch sec art mss
    """.split()
)
_BOUNDARY = re.compile(r"[.!?]+[\"'’”)\]]*\s+")
_OPENERS = "\"'“‘([¿¡"


def regex_split(paragraph: str) -> list[str]:
    """Split a paragraph into sentences with isoeat's built-in rules.

    A boundary is a run of ``. ! ?`` (optionally followed by closing quotes or
    brackets ``" ' ’ ” ) ]``), then white space, then a token that starts
    (after optional opening quotes/brackets) with an upper-case letter or a
    digit. A boundary whose run is a single ``.`` is ignored when the word
    before it is a known abbreviation (:data:`REGEX_ABBREVIATIONS`, e.g.
    ``Mr.``, ``Fig.``, ``e.g.``), a single letter (an initial: ``J. R. R.``,
    ``H. gammarus``) or dotted letters (``U.S.``, ``D.C.``).

    Parameters
    ----------
    paragraph : str
        One paragraph of ordinary (detokenised) text.

    Returns
    -------
    list of str
        The sentences, whitespace-normalised, in order.

    Examples
    --------
    >>> regex_split("Dr. J. R. Smith lives in the U.S. now. He is 3.5 m tall! Is he?")
    ['Dr. J. R. Smith lives in the U.S. now.', 'He is 3.5 m tall!', 'Is he?']
    """
    text = paragraph.strip()
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        end = m.end()
        if end >= len(text):
            break
        nxt = text[end:].lstrip(_OPENERS)[:1]
        if not nxt or not (nxt.isupper() or nxt.isdigit()):
            continue
        punct = m.group(0).rstrip().rstrip("\"'’”)]")
        if punct == ".":
            before = text[start : m.start()].rsplit(None, 1)
            word = before[-1].lstrip(_OPENERS) if before else ""
            low = word.lower()
            if (
                low in REGEX_ABBREVIATIONS
                or (len(word) == 1 and word.isalpha())
                or re.fullmatch(r"(?:[^\W\d_]\.)+[^\W\d_]", word)
            ):
                continue
        out.append(text[start : m.end()].strip())
        start = end
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return [normalize_space(s) for s in out if s.strip()]


@dataclass(frozen=True)
class Splitter:
    """A sentence splitter: ``split(paragraph) -> list[str]`` plus a versioned name."""

    name: str
    version: str
    split: Callable[[str], list[str]]

    @property
    def label(self) -> str:
        """``"name version"``, as recorded in fingerprints and descriptions."""
        return f"{self.name} {self.version}"


def _sentencex_splitter(language: str = "en") -> Splitter:
    try:
        import sentencex
    except ImportError:
        raise MissingDependencyError(
            "sentence splitting uses the package sentencex (a dependency of isoeat): "
            'pip install "sentencex>=1.0" — or pass splitter="regex" for the built-in splitter'
        ) from None
    from importlib.metadata import PackageNotFoundError, version

    try:
        ver = version("sentencex")
    except PackageNotFoundError:  # pragma: no cover - vendored copies
        ver = getattr(sentencex, "__version__", "unknown")
    segment = sentencex.segment

    def split(paragraph: str) -> list[str]:
        return [s for s in (normalize_space(x) for x in segment(language, paragraph)) if s]

    return Splitter(name=f"sentencex[{language}]", version=ver, split=split)


def _regex_splitter() -> Splitter:
    return Splitter(name="isoeat-regex", version="1", split=regex_split)


#: Splitter names accepted by ``load_corpus(..., splitter=...)``.
SPLITTERS: dict[str, Callable[[], Splitter]] = {
    "sentencex": _sentencex_splitter,
    "regex": _regex_splitter,
}


def get_splitter(name: str | Splitter) -> Splitter:
    """Resolve a splitter name (``"sentencex"``, ``"regex"``) or pass a :class:`Splitter` through."""
    if isinstance(name, Splitter):
        return name
    key = check_choice("splitter", name.lower() if isinstance(name, str) else name, tuple(SPLITTERS))
    return SPLITTERS[key]()
