"""Every docstring example in the package runs and prints what it says (doctest).

A module whose optional dependency is not installed is skipped, with the reason.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import isoeat


def _module_names() -> list[str]:
    names = [isoeat.__name__]
    for m in pkgutil.walk_packages(isoeat.__path__, prefix="isoeat."):
        names.append(m.name)
    return sorted(names)


@pytest.mark.parametrize("name", _module_names())
def test_docstring_examples(name):
    try:
        mod = importlib.import_module(name)
    except ImportError as exc:  # an optional dependency (torch, dask, matplotlib, ...)
        pytest.skip(f"{name}: {exc}")
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    for t in finder.find(mod, name, extraglobs={"np": np}):
        runner.run(t, out=report.append)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, "".join(report)[:4000]
