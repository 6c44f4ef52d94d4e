"""The test library: the built-in tests beyond W1..W10, the licences of their lists, and the files bundled for them.

The built-in W1..W10 (``data/weat.json``, Caliskan et al. 2017) are isoeat's default battery. The library adds
tests that isoeat *composes* from published word lists bundled under their licences in
``data/third_party/`` (Bolukbasi et al. 2016's lists from ``tolga-b/debiaswe``, MIT; Zhao et al. 2018's
GN-GloVe seed words from ``uclanlp/gn_glove``, Apache-2.0), with sets of W6..W8. Every test carries
``reference``, ``citation``, ``lists_from``, ``licence`` and, for a composed test, ``composed`` (never empty
there: a composed test is not its sources' authors' own). Lists whose licence forbids bundling (sent-bias,
CC BY-NC 4.0; WEATHub's GitHub copy, GPL-3.0) are read from the user's own copy by
:func:`isoeat.load_tests_from_file` (the page is ``docs/library.md``).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

from .._errors import DataFormatError
from .._names import printable
from ._spec import AssociationTest, WordSet

__all__ = ["LICENCES", "BUNDLED_FILES", "licence_parts", "library_metadata", "library_tests", "describe_test"]

#: The licences a built-in test's lists may carry; a test's ``licence`` is one or more of them, ``" AND "``-joined.
#: ``none-stated``: short stimulus lists printed in a paper whose authors state no licence (W1..W10's lists).
LICENCES = ("MIT", "Apache-2.0", "none-stated")

_DEBIASWE = "tolga-b/debiaswe @ 6bb03ee2a0d7214339e513ca71cd0a99069dc29c"
_GN_GLOVE = "uclanlp/gn_glove @ 7e0c7cabb67875bef76b0d3026846e1c2029c860"

#: Every third-party file bundled under ``isoeat/wordsets/data/``: path -> (licence, where it was copied from).
#: Copied byte for byte; NOTICE.md lists each (``tests/test_library.py`` checks it does).
BUNDLED_FILES: dict[str, tuple[str, str]] = {
    "third_party/debiaswe/LICENSE": ("MIT", f"{_DEBIASWE} LICENSE (MIT, Copyright (c) 2016 Tolga)"),
    **{
        f"third_party/debiaswe/{name}": ("MIT", f"{_DEBIASWE} data/{name}")
        for name in (
            "definitional_pairs.json",
            "equalize_pairs.json",
            "gender_specific_seed.json",
            "gender_specific_full.json",
            "professions.json",
        )
    },
    "third_party/gn_glove/LICENSE": ("Apache-2.0", f"{_GN_GLOVE} LICENSE (Apache License 2.0)"),
    **{
        f"third_party/gn_glove/{name}": ("Apache-2.0", f"{_GN_GLOVE} wordlist/{name}")
        for name in ("male_word_file.txt", "female_word_file.txt")
    },
}


def licence_parts(licence: str) -> list[str]:
    """The licences of a ``licence`` field: its ``" AND "``-separated parts.

    Examples
    --------
    >>> licence_parts("MIT AND none-stated")
    ['MIT', 'none-stated']
    """
    return [part.strip() for part in licence.split(" AND ")] if licence.strip() else []


@lru_cache(maxsize=1)
def library_metadata() -> dict:
    """The parsed ``library.json`` (notes and the composed tests)."""
    return json.loads(resources.files("isoeat.wordsets").joinpath("data/library.json").read_text("utf-8"))


def _test(t: dict) -> AssociationTest:
    if not t.get("composed") or set(licence_parts(t["licence"])) - set(LICENCES):
        raise DataFormatError(
            f"library.json: test {t.get('id')!r}: a composed test needs 'composed' and a licence among {LICENCES}"
        )
    return AssociationTest(
        id=t["id"],
        bias_type=t["bias_type"],
        title=t["title"],
        citation=t["citation"],
        X=WordSet(t["X"]["name"], tuple(t["X"]["words"])),
        Y=WordSet(t["Y"]["name"], tuple(t["Y"]["words"])),
        A=WordSet(t["A"]["name"], tuple(t["A"]["words"])),
        B=WordSet(t["B"]["name"], tuple(t["B"]["words"])),
        provenance=tuple(t.get("provenance", ())),
        source="builtin",
        reference=t["reference"],
        lists_from=t["lists_from"],
        licence=t["licence"],
        composed=t["composed"],
    )


@lru_cache(maxsize=1)
def library_tests() -> dict[str, AssociationTest]:
    """The library's tests by id, in the file's order (after W1..W10 in :func:`isoeat.list_tests`)."""
    return {t["id"]: _test(t) for t in library_metadata()["tests"]}


def _wrapped(label: str, text: str, width: int = 100) -> list[str]:
    """``text`` wrapped after ``label``, its whitespace runs as one space and any other control character or bidi
    override as its escape (``\\x1b``, ``\\u202e``: :func:`isoeat._names.printable`), as in every text table."""
    import textwrap

    return textwrap.wrap(
        printable(" ".join(text.split())),
        width=width,
        initial_indent=f"  {label:<11} ",
        subsequent_indent=" " * 14,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [f"  {label}"]


def describe_test(test: AssociationTest) -> str:
    """A test in full, as ``isoeat tests --show ID`` prints it: its four lists, then its provenance.

    The lists are printed in their order, each with its name and size; then the source, citation, where the
    lists come from, the licence, how isoeat composed the test (a composed test only), the provenance notes,
    and the file a user test was read from. A field the test lacks is printed as ``(not stated)``; a control
    character or bidi override of a file's text is printed as its escape (``\\x1b``), never as itself.

    Parameters
    ----------
    test : AssociationTest
        A built-in test (:func:`isoeat.get_test`) or one read from a file.

    Returns
    -------
    str
        Lines wrapped at 100 columns (a list is wrapped between words only).

    Examples
    --------
    >>> from isoeat.wordsets import get_test
    >>> text = describe_test(get_test("occupations-bolukbasi"))
    >>> print(next(line for line in text.splitlines() if line.startswith("  A ")))
      A (10)      Male terms (Bolukbasi): man, boy, he, father, son, guy, male, his, himself, John
    """
    lines = [printable(f"{test.id}: {' '.join((test.title or '(no title)').split())} [{test.bias_type}]")]
    for role, ws in test.sets().items():
        lines += _wrapped(f"{role} ({len(ws)})", f"{ws.name}: {', '.join(ws.words)}")
    if test.pairs:
        lines += _wrapped("pairs", ", ".join(f"{a}/{b}" for a, b in test.pairs))
    for label, value in (
        ("Source", test.reference),
        ("Citation", test.citation),
        ("Lists from", test.lists_from),
        ("Licence", test.licence),
    ):
        lines += _wrapped(label, value or "(not stated)")
    if test.composed:
        lines += _wrapped("Composed", test.composed)
    for note in test.provenance:
        lines += _wrapped("Provenance", note)
    if test.source != "builtin":
        lines += _wrapped("File", str(test.source))
    return "\n".join(lines)
