"""The test-file format written back: the commented template and tests as the loader reads them.

One format, read by :mod:`isoeat.wordsets._loaders` and written here: ``isoeat tests --template`` prints
:data:`TEMPLATE` (two tests, every key), ``isoeat tests --format json|yaml`` prints :func:`dump_tests`; both load
back as they are (``tests/test_test_files.py``). The user-facing page is ``docs/test-files.md``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ._spec import LIBRARY_FIELDS, AssociationTest

__all__ = ["TEMPLATE", "file_dict", "dump_tests"]

TEMPLATE = """\
# An isoeat test file (printed by: isoeat tests --template). Give it to any command's --test FILE
# (every test of the file) or --test FILE:ID (one of them); in Python: isoeat.load_tests_from_file(FILE).
#
# A file holds one test (a mapping with the keys below) or several: a list of such mappings, as here
# (a mapping `tests: [...]` holding the list is read too). JSON with the same keys works the same way,
# and so does the output of `isoeat tests --format yaml` or `--format json` (the built-in W1..W10).
#
# Required: X and Y (the target sets) and A and B (the attribute sets), each either
#   {name: LABEL, words: [word, word, ...]}  or a bare list [word, word, ...] (named X, Y, A or B).
# Optional: id (default: the file's stem; in a list, STEM-1, STEM-2, ...; ids must differ),
#   bias_type (default Custom), title, citation, provenance (a text or a list of texts),
#   reference, lists_from, licence, composed (where the lists come from: docs/library.md),
#   pairs (defining pairs of RIPA, direct bias and SemAxis: [[word, word], ...], first word towards
#   the positive direction; WEAT does not read them).
# d > 0 means X is closer to A (and Y to B) than the reverse. Words are matched as written (a model
# whose vocabulary is lowercase also tries the lowercased word); a word YAML reads as empty needs
# quotes ('null', '~').

- id: math-arts-gender
  bias_type: Gender
  title: Math vs. arts / male vs. female terms
  citation: Nosek et al. (2002); a shortened W7 of Caliskan et al. (2017)
  provenance: [an example of the template, four words per set]
  X: {name: Math, words: [math, algebra, geometry, calculus]}
  Y: {name: Arts, words: [poetry, art, dance, literature]}
  A: {name: Male terms, words: [male, man, boy, brother]}
  B: {name: Female terms, words: [female, woman, girl, sister]}
  pairs: [[man, woman], [boy, girl]]

- id: flowers-insects
  X: [rose, daisy, tulip, lily]
  Y: [ant, wasp, flea, moth]
  A: [love, peace, happy, gift]
  B: [hatred, war, ugly, filth]
"""


def file_dict(test: AssociationTest) -> dict[str, Any]:
    """A test as one mapping of a test file: every key the loader reads, and nothing it would refuse.

    ``source`` is left out (a test's source is the file it is read from); empty optional keys too.
    """
    out: dict[str, Any] = {"id": test.id, "bias_type": test.bias_type}
    if test.title:
        out["title"] = test.title
    if test.citation:
        out["citation"] = test.citation
    if test.provenance:
        out["provenance"] = list(test.provenance)
    out.update({k: getattr(test, k) for k in LIBRARY_FIELDS if getattr(test, k)})
    out.update({role: ws.to_dict() for role, ws in test.sets().items()})
    if test.pairs:
        out["pairs"] = [list(p) for p in test.pairs]
    return out


def dump_tests(tests: Sequence[AssociationTest], fmt: str) -> str:
    """``tests`` as a test file's text, ``fmt`` ``"json"`` or ``"yaml"``: a list of mappings (:func:`file_dict`).

    Examples
    --------
    >>> from isoeat.wordsets import get_test
    >>> print(dump_tests([get_test("W6")], "yaml").splitlines()[1])
    - id: W6
    """
    docs = [file_dict(t) for t in tests]
    if fmt == "json":
        return json.dumps(docs, indent=2, ensure_ascii=False) + "\n"
    if fmt != "yaml":
        raise ValueError(f"dump_tests: fmt must be 'json' or 'yaml', got {fmt!r}")
    import yaml

    head = (f"# {len(docs)} isoeat test(s); load with --test FILE (all) or --test FILE:ID (one); "
            "layout: isoeat tests --template\n")
    return head + yaml.safe_dump(docs, sort_keys=False, allow_unicode=True, width=1000, default_flow_style=None)
