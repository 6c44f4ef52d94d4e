"""Environment variables: the documented values accepted, a typo'd name pointed out, an unwritable cache said once.

The refusals (a folder variable pointing nowhere, a value outside the allowed ones) are cases of the robustness
catalogue (``tests/robustness/test_bad_input_trust.py``: ENV_CASES, ENV_PATH_CASES).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from isoeat import IsoeatWarning
from isoeat.cli import main


@pytest.mark.parametrize("var, value", [("ISOEAT_PROGRESS", "0"), ("ISOEAT_PROGRESS", "LOG"), ("ISOEAT_NO_CACHE", ""),
                                        ("ISOEAT_REPORT_JOBS", "2"), ("ISOEAT_OFFLINE", "yes")])
def test_the_documented_values_are_accepted(monkeypatch, var, value):
    from isoeat import _env

    monkeypatch.setenv(var, value)
    _env.check(var)


@pytest.mark.filterwarnings("always::isoeat._errors.IsoeatWarning")
def test_an_unknown_isoeat_variable_is_pointed_out_once(monkeypatch, capsys, glove):
    monkeypatch.setenv("ISOEAT_CACHEDIR", "/tmp/x")
    assert main(["weat", "--test", "W6"]) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "ISOEAT_CACHEDIR" in ln]
    assert len(lines) == 1 and lines[0].startswith("isoeat: warning: ") and "ISOEAT_CACHE_DIR" in lines[0], err


def _puts(cache, n=6):
    for i in range(n):
        cache.put("static", {"model": "m", "word": f"w{i}"}, {"vectors": np.ones((2, 3))})


@pytest.mark.parametrize("how", ["a file", "unwritable"])
def test_a_cache_that_cannot_be_written_is_said_once(tmp_path, monkeypatch, how):
    from isoeat.backends import cache as C

    root = tmp_path / "c"
    if how == "a file":
        root.write_text("not a folder")
    else:
        def refuse(path, write):
            raise PermissionError(13, "Permission denied", str(path))

        monkeypatch.setattr(C, "atomic_write_with", refuse)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):  # two caches on the same folder (two models of one command): still once
            cache = C.EmbeddingCache(root, enabled=True)
            _puts(cache)
            assert cache.get("static", {"model": "m", "word": "w0"}) is None
    said = [str(w.message) for w in caught if issubclass(w.category, IsoeatWarning)]
    assert len(said) == 1 and str(root) in said[0], said
