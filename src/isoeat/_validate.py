"""One validator per kind of parameter (in the spirit of scipy's ``_xxx_iv`` functions).

Every public function of isoeat checks its parameters at the edge, once,
with these helpers. Each raises :class:`~isoeat.InvalidValueError` (a
:class:`~isoeat.ConfigError`) whose one-line message names the parameter,
what is allowed and the value received::

    n_resamples must be a positive integer, got 0
    alpha must be a number in (0, 1), got 1.5
    method must be one of auto, exact, monte-carlo; got 'exakt'; did you mean 'exact'?

Conventions
-----------
* ``bool`` is never a number: ``True`` is refused where an integer or a real
  is expected (``True`` is not 1), and ``1`` is refused where a bool is
  expected (so are strings such as ``"no"``).
* numpy scalars (``np.int64``, ``np.float32``, ``np.bool_``) are accepted and
  returned as the Python type.
* Reals must be finite unless ``finite=False``; NaN is refused unless
  ``nan=True`` (then it is returned without a range check).
* Strings are never converted: ``"3"`` is not an integer here. Readers of text
  formats (YAML, the command line) convert first and then validate.
"""

from __future__ import annotations

import difflib
import math
import numbers
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ._errors import InvalidValueError

__all__ = [
    "check_bytes", "check_path", "check_int", "check_real", "check_choice", "check_bool", "suggest", "suggest_words",
    "show", "describe_range", "SUGGEST_PROBES", "SUGGEST_WORDS", "SUGGEST_NOTE",
    "SUGGEST_TWO_EDITS_MIN_LENGTH"]


# --------------------------------------------------------------------------- presentation
def _bounded_repr() -> Any:
    import reprlib

    r = reprlib.Repr()
    r.maxlevel, r.maxlist, r.maxtuple, r.maxdict, r.maxset = 2, 4, 4, 4, 4
    r.maxstring, r.maxother, r.maxlong = 60, 60, 40
    return r


_REPR = _bounded_repr()


def show(value: Any, *, limit: int = 60) -> str:
    """``repr`` of a received value for a message: bounded, with its type unless it is a string.

    The value is cut *while* it is written (:mod:`reprlib`), so a huge or
    deeply nested value (a YAML alias bomb) costs nothing to show.

    Examples
    --------
    >>> show("many")
    "'many'"
    >>> show(True)
    'True (bool)'
    >>> show([[1] * 1000] * 1000)
    '[[1, 1, 1, 1, ...], [1, 1, 1, 1, ...], [1, 1, 1, 1, ...], [1, 1, 1, 1, ...], ...] (list)'
    """
    text = _REPR.repr(value)
    if len(text) > limit + 40:
        text = text[: limit + 37] + "..."
    return text if isinstance(value, str) else f"{text} ({type(value).__name__})"


def _plain(value: Any) -> str:
    """``repr`` of a number as Python writes it (``np.float64(2.0)`` shows as ``2.0``)."""
    np = sys.modules.get("numpy")  # a numpy scalar exists only once numpy is loaded: this module loads none
    return repr(value.item() if np is not None and isinstance(value, np.generic) else value)


def _num(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def describe_range(lo: float | None = None, hi: float | None = None, *, lo_open: bool = False,
                   hi_open: bool = False) -> str:
    """The bounds as words: ``""``, ``" >= 0"``, ``" < 1"`` or ``" in (0, 1]"``.

    Examples
    --------
    >>> describe_range(0, 1, lo_open=True, hi_open=True)
    ' in (0, 1)'
    >>> describe_range(lo=2)
    ' >= 2'
    """
    if lo is None:
        return "" if hi is None else f" {'<' if hi_open else '<='} {_num(hi)}"
    if hi is None:
        return f" {'>' if lo_open else '>='} {_num(lo)}"
    return f" in {'(' if lo_open else '['}{_num(lo)}, {_num(hi)}{')' if hi_open else ']'}"


def _int_requirement(lo: int | None, hi: int | None) -> str:
    if hi is None and lo == 1:
        return "a positive integer"
    if hi is None and lo == 0:
        return "a non-negative integer"
    return "an integer" + describe_range(lo, hi)


def _real_requirement(lo: float | None, hi: float | None, lo_open: bool, hi_open: bool, finite: bool) -> str:
    # with both bounds the number is finite anyway; say "finite" only when it adds something
    word = "a finite number" if finite and (lo is None or hi is None) else "a number"
    return word + describe_range(lo, hi, lo_open=lo_open, hi_open=hi_open)


# --------------------------------------------------------------------------- validators
def _is_bool(value: Any) -> bool:
    np = sys.modules.get("numpy")
    return isinstance(value, bool) or (np is not None and isinstance(value, np.bool_))


def check_int(name: str, value: Any, *, lo: int | None = None, hi: int | None = None) -> int:
    """Validate an integer parameter and return it as ``int``.

    Parameters
    ----------
    name : str
        The parameter's name, used in the message.
    value : Any
        The value received. ``int`` and numpy integers are accepted; ``bool``,
        floats (even ``2.0``) and strings are refused.
    lo, hi : int, optional
        Inclusive bounds.

    Returns
    -------
    int

    Raises
    ------
    InvalidValueError
        Wrong type or out of range; the message names ``name``, the range and the value.

    Examples
    --------
    >>> check_int("k", 3, lo=1)
    3
    >>> check_int("k", 0, lo=1)
    Traceback (most recent call last):
    ...
    isoeat._errors.InvalidValueError: k must be a positive integer, got 0
    >>> check_int("seed", True, lo=0)
    Traceback (most recent call last):
    ...
    isoeat._errors.InvalidValueError: seed must be a non-negative integer, got True (bool)
    """
    requirement = _int_requirement(lo, hi)
    if _is_bool(value) or not isinstance(value, numbers.Integral):
        raise InvalidValueError(name, requirement, show(value))
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise InvalidValueError(name, requirement, _plain(value))
    return v


def check_real(name: str, value: Any, *, lo: float | None = None, hi: float | None = None, lo_open: bool = False,
               hi_open: bool = False, finite: bool = True, nan: bool = False) -> float:
    """Validate a real parameter and return it as ``float``.

    Parameters
    ----------
    name : str
        The parameter's name, used in the message.
    value : Any
        ``int``, ``float`` or a numpy integer/floating scalar; ``bool`` and strings are refused.
    lo, hi : float, optional
        Bounds, inclusive unless ``lo_open``/``hi_open``.
    lo_open, hi_open : bool
        Exclude the bound itself.
    finite : bool
        Refuse ``inf`` and ``-inf`` (default True).
    nan : bool
        Accept NaN (returned as is, without a range check; default False).

    Returns
    -------
    float

    Raises
    ------
    InvalidValueError
        Wrong type, NaN, infinite or out of range.

    Examples
    --------
    >>> check_real("alpha", 0.05, lo=0, hi=1, lo_open=True, hi_open=True)
    0.05
    >>> check_real("alpha", 1, lo=0, hi=1, lo_open=True, hi_open=True)
    Traceback (most recent call last):
    ...
    isoeat._errors.InvalidValueError: alpha must be a number in (0, 1), got 1
    >>> check_real("eps", float("nan"), lo=0)
    Traceback (most recent call last):
    ...
    isoeat._errors.InvalidValueError: eps must be a finite number >= 0, got nan
    """
    requirement = _real_requirement(lo, hi, lo_open, hi_open, finite)
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise InvalidValueError(name, requirement, show(value))
    v = float(value)
    if math.isnan(v):
        if nan:
            return v
        raise InvalidValueError(name, requirement, _plain(value))
    ok = not (finite and math.isinf(v))
    if lo is not None:
        ok = ok and (v > lo if lo_open else v >= lo)
    if hi is not None:
        ok = ok and (v < hi if hi_open else v <= hi)
    if not ok:
        raise InvalidValueError(name, requirement, _plain(value))
    return v


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> Any:
    """Validate that ``value`` is one of ``choices``; return the matching choice.

    ``True`` does not match ``1`` (nor ``False`` ``0``) unless a bool is among
    the choices. The message lists the choices and suggests the closest one.

    Parameters
    ----------
    name : str
        The parameter's name.
    value : Any
        The value received.
    choices : iterable
        The allowed values, in the order the message lists them.

    Returns
    -------
    The element of ``choices`` equal to ``value``.

    Raises
    ------
    InvalidValueError
        Not one of the choices.

    Examples
    --------
    >>> check_choice("alternative", "less", ("greater", "less", "two-sided"))
    'less'
    >>> check_choice("method", "exakt", ("auto", "exact", "monte-carlo"))
    Traceback (most recent call last):
    ...
    isoeat._errors.InvalidValueError: method must be one of auto, exact, monte-carlo; got 'exakt'; did you mean 'exact'?
    """
    options = tuple(choices)
    bool_ok = any(_is_bool(c) for c in options)
    if bool_ok or not _is_bool(value):
        for c in options:
            try:
                same = bool(c == value) and _is_bool(c) == _is_bool(value)
            except Exception:  # noqa: BLE001 - an exotic __eq__ is simply "not equal"
                same = False
            if same:
                return c
    hint = suggest(str(value), [str(c) for c in options]) if isinstance(value, str) else ""
    raise InvalidValueError(name, "one of " + ", ".join(map(str, options)), show(value), hint, sep="; ")


def check_path(name: str, value: Any, *, requirement: str = "a path (str or os.PathLike)") -> Path:
    """Validate a path parameter (a non-empty ``str`` or an ``os.PathLike`` naming text) and return it as a Path.

    Examples
    --------
    >>> check_path("path", "c.yaml").name
    'c.yaml'
    >>> check_path("load_config: path", {"models": []})
    Traceback (most recent call last):
    ...
    isoeat._errors.InvalidValueError: load_config: path must be a path (str or os.PathLike), got {'models': []} (dict)
    """
    text = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(text, str) or not text:
        raise InvalidValueError(name, requirement, show(value))
    return Path(text)


def check_bool(name: str, value: Any) -> bool:
    """Validate a flag: ``True``/``False`` (or ``numpy.bool_``) only; ``1``, ``"no"`` are refused.

    Examples
    --------
    >>> check_bool("cache", False)
    False
    >>> check_bool("cache", "no")
    Traceback (most recent call last):
    ...
    isoeat._errors.InvalidValueError: cache must be true or false, got 'no'
    """
    if not _is_bool(value):
        raise InvalidValueError(name, "true or false", show(value))
    return bool(value)


# --------------------------------------------------------------------------- did you mean
def suggest(word: str, candidates: Iterable[str], *, n: int = 1, cutoff: float = 0.6, quote: bool = True,
            aliases: Mapping[str, str] | None = None, fold_case: bool = False) -> str:
    """The did-you-mean hint for an unknown ``word``: ``"; did you mean 'x'?"`` or ``""``.

    The close matches are those of :func:`difflib.get_close_matches` (at most
    ``n``, similarity ratio >= ``cutoff``), best first. A candidate ``n_NAME``
    (a count) is matched by ``NAME`` too.

    Parameters
    ----------
    word : str
        What the user wrote.
    candidates : iterable of str
        The valid names.
    n : int
        How many suggestions at most (default 1).
    cutoff : float
        Minimum :class:`difflib.SequenceMatcher` ratio (default 0.6).
    quote : bool
        Quote the suggestions with ``repr`` (keys and choices), or list them
        bare (registered names: ``did you mean W1, W10?``).
    aliases : mapping, optional
        Alternative spellings, alias -> name: matched too, reported as their name.
    fold_case : bool
        Compare case-insensitively (suggestions keep their spelling).

    Examples
    --------
    >>> suggest("permutaions", ["permutations", "method"])
    "; did you mean 'permutations'?"
    >>> suggest("W11", ["W1", "W2", "W10"], n=3, cutoff=0.4, quote=False)
    '; did you mean W1, W10, W2?'
    >>> suggest("permutations", ["permutation", "n_permutations"], quote=False)   # a count's name: the count
    '; did you mean n_permutations?'
    >>> suggest("xyz", ["W1"])
    ''
    """
    candidates = list(map(str, candidates))
    # a count's name without its n_ (permutations=10) means the count (n_permutations), not a near namesake
    alias_map = {c[2:]: c for c in candidates if c.startswith("n_") and c[2:] and c[2:] not in candidates}
    alias_map.update(aliases or {})
    key = str.lower if fold_case else str
    spelled: dict[str, str] = {}
    for c in [*candidates, *alias_map]:
        spelled.setdefault(key(c), c)
    close = difflib.get_close_matches(key(str(word)), list(spelled), n=n, cutoff=cutoff)
    names = list(dict.fromkeys(alias_map.get(spelled[c], spelled[c]) for c in close))
    if not names:
        return ""
    return "; did you mean " + ", ".join(repr(s) if quote else s for s in names) + "?"



#: Most vocabulary probes one :func:`suggest_words` call makes (every word two edits from a query of up to
#: 10 letters fits; longer queries get every word one edit away and the two-edit words the budget reaches).
SUGGEST_PROBES = 300_000

#: The shortest missing word whose did-you-mean may reach two edits away (:func:`suggest_words`): two edits are
#: at most a quarter of its letters. A shorter word two edits from a vocabulary word has little in common with it
#: (``uncle`` -> ``once``, ``unable`` on a vocabulary without it): one edit or no suggestion.
SUGGEST_TWO_EDITS_MIN_LENGTH = 8


#: Most dropped words of one test (its four sets together; the target words of SC-WEAT) that get a
#: did-you-mean: each costs up to :data:`SUGGEST_PROBES` lookups, so a test's suggestions cost at most
#: ``SUGGEST_WORDS * SUGGEST_PROBES`` lookups however many words it drops. A list cut there ends in
#: :data:`SUGGEST_NOTE`.
SUGGEST_WORDS = 20
SUGGEST_NOTE = f"(suggestions for the first {SUGGEST_WORDS})"

#: Most distinct dropped words one model looks up did-you-means for, over all the tests of a command or a run
#: (a grid of many tests, each dropping its own words, stays bounded too): after them, dropped words are listed
#: without suggestions.
SUGGEST_MODEL_WORDS = 5 * SUGGEST_WORDS


def _one_edit(word: str, letters: str) -> dict[str, None]:
    """Every string one edit from ``word`` (delete, swap two adjacent, substitute, insert), in that order."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = [a + b[1:] for a, b in splits if b]
    out += [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1]
    out += [a + c + b[1:] for a, b in splits if b for c in letters]
    out += [a + c + b for a, b in splits for c in letters]
    return dict.fromkeys(out)


def suggest_words(word: str, rank: Any, *, n: int = 3, probes: int = SUGGEST_PROBES) -> tuple[str, ...]:
    """Did-you-mean for a word missing from a vocabulary too large to scan: the nearest words, most frequent first.

    The strings one edit from ``word`` (Damerau–Levenshtein: delete, insert,
    substitute, swap two adjacent characters; inserted and substituted
    characters from a–z and the word's own) are looked up with ``rank``; if
    none is a word and ``word`` has at least :data:`SUGGEST_TWO_EDITS_MIN_LENGTH` characters, the strings two
    edits away (so two edits are at most a quarter of its letters). The words found are ordered by
    ``rank`` (a vocabulary row: frequency order for GloVe and word2vec files)
    and the first ``n`` returned. The cost depends on the word's length, never
    on the vocabulary's size: at most ``probes`` calls of ``rank``
    (:data:`SUGGEST_PROBES`; the two-edit ring of a long word is cut there).

    Parameters
    ----------
    word : str
        The word not found (as the vocabulary would hold it, e.g. lowercased).
    rank : callable
        ``rank(candidate)`` -> the candidate's row in the vocabulary, or ``None``.
    n : int
        How many suggestions at most.
    probes : int
        The budget of ``rank`` calls.

    Examples
    --------
    >>> rows = {"the": 0, "salary": 1, "saler": 2, "executive": 3}
    >>> suggest_words("salery", rows.get)
    ('salary', 'saler')
    >>> suggest_words("egzecutive", rows.get)   # two edits: g -> x, z deleted
    ('executive',)
    >>> suggest_words("salxrz", rows.get)   # two edits from salary, but six letters: no suggestion
    ()
    """
    letters = "".join(sorted(set("abcdefghijklmnopqrstuvwxyz") | set(word)))
    budget = [check_int("probes", probes, lo=1)]

    def found(candidates: Iterable[str]) -> list[tuple[int, str]]:
        hits = []
        for c in candidates:
            if budget[0] <= 0:
                break
            budget[0] -= 1
            r = rank(c)
            if r is not None:
                hits.append((r, c))
        return hits

    ring1 = [c for c in _one_edit(word, letters) if c != word]
    hits = found(ring1)
    if not hits and len(word) >= SUGGEST_TWO_EDITS_MIN_LENGTH:
        seen = {word, *ring1}

        def ring2() -> Iterable[str]:
            for c in ring1:
                for c2 in _one_edit(c, letters):
                    if c2 not in seen:
                        seen.add(c2)
                        yield c2

        hits = found(ring2())
    return tuple(c for _, c in sorted(hits)[:check_int("n", n, lo=1)])


_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1 << 10, "m": 1000**2, "mb": 1000**2, "mib": 1 << 20,
          "g": 1000**3, "gb": 1000**3, "gib": 1 << 30, "t": 1000**4, "tb": 1000**4, "tib": 1 << 40}


def check_bytes(name: str, value: Any, *, lo: int = 1) -> int:
    """A size in bytes: an integer, or text such as ``"2GiB"``, ``"500 MB"``, ``"1e9"``.

    Examples
    --------
    >>> check_bytes("exact_memory", "2GiB"), check_bytes("exact_memory", "500MB"), check_bytes("m", 4096)
    (2147483648, 500000000, 4096)
    """
    import re

    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9][0-9_]*(?:\.[0-9]*)?(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*", value)
        unit = m.group(2).lower() if m else None
        if not m or unit not in _UNITS:
            raise InvalidValueError(name, "a size in bytes such as 2GiB, 500MB or 1000000", show(value))
        size = float(m.group(1).replace("_", "")) * _UNITS[unit]
        if not math.isfinite(size) or size != int(size):
            raise InvalidValueError(name, "a whole number of bytes", show(value))
        value = int(size)
    return check_int(name, value, lo=lo)
