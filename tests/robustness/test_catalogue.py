"""The README quotes the bad-input catalogue's size; the suite counts it."""

from __future__ import annotations

import re
from pathlib import Path

from .catalogue import catalogue, size

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_case_has_a_distinct_name():
    names = [n for v in catalogue().values() for n in v]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
    assert size() >= 100


def test_readme_quotes_the_catalogue_size():
    m = re.search(r"The catalogue holds \*\*(\d+) cases\*\*", README.read_text(encoding="utf-8"))
    assert m, "README.md: no 'The catalogue holds **N cases**' sentence"
    per_file = {k: len(v) for k, v in catalogue().items()}
    assert int(m.group(1)) == size(), f"README says {m.group(1)}, the catalogue holds {size()}: {per_file}"
