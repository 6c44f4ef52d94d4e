"""Every name a package's ``__all__`` promises exists: ``from isoeat.X import *`` works.

mypy (``implicit_reexport = false`` on the strict modules) reads ``__all__`` as the public API; a name
listed there but never imported makes ``from isoeat.calibration import *`` raise AttributeError.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import isoeat


def _packages() -> list[str]:
    return ["isoeat"] + sorted(m.name for m in pkgutil.walk_packages(isoeat.__path__, "isoeat.") if m.ispkg)


@pytest.mark.parametrize("name", _packages())
def test_every_name_in_all_exists_and_star_import_works(name):
    mod = importlib.import_module(name)
    missing = [n for n in getattr(mod, "__all__", ()) if not hasattr(mod, n)]
    assert missing == [], f"{name}.__all__ lists names it does not define: {missing}"
    namespace: dict[str, object] = {}
    exec(f"from {name} import *", namespace)  # the statement under test
