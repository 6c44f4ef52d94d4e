"""Environment variables: each checked where it is read, named when wrong, never silently replaced by other data.

A path variable pointing nowhere is an error naming the variable (not a quiet
fall-back to another data folder); a variable with a fixed set of values
(``ISOEAT_PROGRESS``, ``ISOEAT_NO_CACHE``, ``ISOEAT_OFFLINE``) or a number
(``ISOEAT_REPORT_JOBS``) refuses any other value as ``ISOEAT_CACHE_MAX`` does;
an ``ISOEAT_*`` name isoeat does not read is pointed out once; an embedding
cache that cannot be written is said once, not once per entry.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from isoeat import IsoeatError, IsoeatWarning
from isoeat.cli import main

NOWHERE = "/nonexistent-isoeat/folder"


def _corpus(spec):
    from isoeat.corpora import load_corpus

    return lambda: load_corpus(spec, cache=False, max_sentences=10)


def _offline():
    from isoeat.corpora import offline_corpora

    return offline_corpora()


def _benchmark(name):
    from isoeat.similarity import find_benchmark_file

    return lambda: find_benchmark_file(name)


# (variable, value ("EMPTY": an existing empty folder), what reads it)
PATH_CASES = [
    ("data dir for a named corpus", "ISOEAT_DATA_DIR", NOWHERE, _corpus("wikitext-2")),
    ("data dir for the auto corpus", "ISOEAT_DATA_DIR", NOWHERE, _offline),
    ("data dir for a benchmark", "ISOEAT_DATA_DIR", NOWHERE, _benchmark("men")),
    ("shared data for a named corpus", "ISOEAT_SHARED_DATA", NOWHERE, _corpus("enwiki-sample")),
    ("wikitext-103 named", "ISOEAT_WIKITEXT103", NOWHERE, _corpus("wikitext-103")),
    ("wikitext-103 for auto", "ISOEAT_WIKITEXT103", NOWHERE, _offline),
    ("wikitext-103 empty folder for auto", "ISOEAT_WIKITEXT103", "EMPTY", _offline),
    ("wikitext-2 named", "ISOEAT_WIKITEXT2", NOWHERE, _corpus("wikitext-2")),
    ("wikitext-2 for auto", "ISOEAT_WIKITEXT2", NOWHERE, _offline),
]


@pytest.mark.parametrize("name, var, value, read", PATH_CASES, ids=[c[0] for c in PATH_CASES])
def test_a_path_variable_pointing_nowhere_is_an_error_naming_it(tmp_path, monkeypatch, shared_data, name, var,
                                                                 value, read):
    monkeypatch.setenv("ISOEAT_SHARED_DATA", str(shared_data))  # other data is reachable: it must not be used
    if value == "EMPTY":
        value = str(tmp_path)
    monkeypatch.setenv(var, value)
    with pytest.raises(IsoeatError) as info:
        read()
    msg = str(info.value)
    assert f"${var}" in msg and value in msg and "\n" not in msg, msg


@pytest.mark.parametrize("var, value, argv", [
    ("ISOEAT_PROGRESS", "sometimes", ["weat", "--test", "W6"]),
    ("ISOEAT_NO_CACHE", "maybe", ["cache", "info"]),
    ("ISOEAT_OFFLINE", "perhaps", ["reproduce", "--list"]),
    ("ISOEAT_REPORT_JOBS", "two", ["report", "{d}"]),
    ("ISOEAT_REPORT_JOBS", "0", ["report", "{d}"]),
    ("ISOEAT_REPORT_JOBS", "100000", ["report", "{d}"]),
    ("ISOEAT_CACHE_MAX", "lots", ["cache", "info"]),
])
def test_a_variable_with_an_invalid_value_is_a_one_line_error(tmp_path, monkeypatch, capsys, glove, var, value,
                                                              argv):
    if "{d}" in argv:
        assert main(["run", "--tests", "W6", "--reference-size", "2000", "--out", str(tmp_path / "o"), "-q"]) == 0
        capsys.readouterr()
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(var, value)
    assert main([a.replace("{d}", str(tmp_path / "o")) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1, err
    assert f"${var}" in err and repr(value) in err


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
