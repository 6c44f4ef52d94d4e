"""The one home of isoeat's version, and the stamp it puts on every record isoeat writes.

``pyproject.toml`` reads ``__version__`` (``[tool.setuptools.dynamic]``) for the package metadata,
``isoeat --version`` prints it, and every manifest, run folder, cell, calibrator file and result record
isoeat writes states it (``isoeat_version``). A change that alters a printed number or a default is
recorded in CHANGELOG.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "versioned"]


def versioned(obj: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> Any:
    """Records stamped with the isoeat that writes them: ``isoeat_version`` as the last field.

    A mapping is one record (a summary object); anything else is a sequence of records, each stamped.
    A record that already has the field gets the writer's version, at the end. Every result record isoeat
    writes, to a file or to standard output, goes through here.

    Examples
    --------
    >>> versioned([{"test": "W6", "effect_size": 1.7}])[0] == {"test": "W6", "effect_size": 1.7,
    ...                                                        "isoeat_version": __version__}
    True
    >>> list(versioned({"isoeat_version": "0.0.1", "rows": 3}))
    ['rows', 'isoeat_version']
    """

    def stamp(rec: Mapping[str, Any]) -> dict[str, Any]:
        return {**{k: v for k, v in rec.items() if k != "isoeat_version"}, "isoeat_version": __version__}

    return stamp(obj) if isinstance(obj, Mapping) else [stamp(r) for r in obj]
