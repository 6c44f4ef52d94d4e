"""The embedding cache's size cap (ISOEAT_CACHE_MAX, least recently used first), clear, and `isoeat cache`.

Expected sizes are read from the file system (``os.path.getsize``), expected
eviction orders worked out from the documented rule: once the cache holds more
than the cap, entries go by modification time (set on write, touched on read),
oldest first, until at most 90% of the cap remains.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from isoeat import ConfigError
from isoeat.backends import cache as C
from isoeat.cli import main

S = 1_000_000_000  # one second in ns (file times)


def _put(c: C.EmbeddingCache, word: str, kind: str = "hf-word", n: int = 50) -> Path:
    return c.put(kind, {"word": word}, {"vector": np.full(n, float(len(word)))})


def _age(path: Path, seconds: int) -> None:
    os.utime(path, ns=(seconds * S, seconds * S))


@pytest.fixture
def no_cap(monkeypatch):
    monkeypatch.delenv("ISOEAT_CACHE_MAX", raising=False)
    monkeypatch.delenv("ISOEAT_NO_CACHE", raising=False)


# ----------------------------------------------------------------------------
# ISOEAT_CACHE_MAX: sizes at their boundaries
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("1", 1),  # the smallest cap
    ("2G", 2 * 10**9),  # G: 10^9
    ("2GiB", 2 * 2**30),  # GiB: 2^30
    ("500M", 500 * 10**6),
    ("500MiB", 500 * 2**20),
    ("1.5K", 1500),
    ("1e3", 1000),
    (" 64 kb ", 64_000),
    ("", None),  # empty: no cap
    ("   ", None),
])
def test_cache_max_parses_sizes(monkeypatch, text, expected):
    monkeypatch.setenv("ISOEAT_CACHE_MAX", text)
    assert C.cache_max_bytes() == expected


@pytest.mark.parametrize("text", ["0", "0.5", "-1", "2X", "G", "1.5", "2 G B"])
def test_cache_max_refuses_non_sizes_naming_the_variable(monkeypatch, text):
    monkeypatch.setenv("ISOEAT_CACHE_MAX", text)
    with pytest.raises(ConfigError, match="ISOEAT_CACHE_MAX") as exc:
        C.cache_max_bytes()
    assert "\n" not in str(exc.value)


def test_a_bad_cap_is_one_line_from_the_command(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("ISOEAT_CACHE_MAX", "2X")
    assert main(["cache", "info", "--cache-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("isoeat: error: $ISOEAT_CACHE_MAX") and err.count("\n") == 1


# ----------------------------------------------------------------------------
# least recently used first
# ----------------------------------------------------------------------------


def test_evict_goes_oldest_first_and_a_read_makes_an_entry_young(tmp_path, no_cap):
    c = C.EmbeddingCache(tmp_path, enabled=True)
    paths = {w: _put(c, w) for w in ("a", "bb", "ccc", "dddd")}
    for t, w in enumerate(("a", "bb", "ccc", "dddd"), start=1000):
        _age(paths[w], t)  # written in this order
    assert c.get("hf-word", {"word": "a"}) is not None  # read now: a is the most recently used
    assert os.stat(paths["a"]).st_mtime_ns > 1003 * S
    size = {w: os.path.getsize(p) for w, p in paths.items()}
    total = sum(size.values())
    # by hand: use order bb, ccc, dddd, a; a cap that makes removing bb and ccc just enough (to 90% of it)
    cap = math.ceil((total - size["bb"] - size["ccc"]) / 0.9)
    assert total > cap and total - size["bb"] > 0.9 * cap  # one removal would not do
    removed, freed, left = C.evict(tmp_path, cap)
    assert (removed, freed, left) == (2, size["bb"] + size["ccc"], size["dddd"] + size["a"])
    assert [p.exists() for p in paths.values()] == [True, False, False, True]
    assert C.evict(tmp_path, left) == (0, 0, left)  # at the cap exactly: nothing goes


def test_writes_over_the_cap_evict_least_recently_used(tmp_path, no_cap, monkeypatch):
    probe = C.EmbeddingCache(tmp_path / "probe", enabled=True)
    one = os.path.getsize(_put(probe, "w0"))  # entries of one word and one shape all have this size
    monkeypatch.setenv("ISOEAT_CACHE_MAX", str(3 * one))  # room for three
    c = C.EmbeddingCache(tmp_path / "c")
    assert c.max_bytes == 3 * one
    paths = []
    for i, w in enumerate(("w1", "w2", "w3")):
        paths.append(_put(c, w))
        _age(paths[-1], 1000 + i)
    c.get("hf-word", {"word": "w1"})  # w1 used again: w2 is now the oldest
    paths.append(_put(c, "w4"))  # 4 entries > cap of 3: down to 90% of 3 = 2.7 entries -> two go
    assert [p.exists() for p in paths] == [True, False, False, True]
    assert c.evicted == 2 and sum(s for _, s, _ in C.cache_entries(tmp_path / "c")) == 2 * one


def test_an_entry_removed_by_another_process_is_a_plain_miss(tmp_path, no_cap, monkeypatch):
    c = C.EmbeddingCache(tmp_path, enabled=True)
    path = _put(c, "gone")
    path.unlink()  # evicted elsewhere, after this process saw it
    monkeypatch.setattr(Path, "exists", lambda self: True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "corrupt" warning
        assert c.get("hf-word", {"word": "gone"}) is None
    assert c.corrupt == 0 and c.misses == 1


# ----------------------------------------------------------------------------
# only cache files are ever counted or deleted
# ----------------------------------------------------------------------------


def _foreign(root: Path, outside: Path) -> list[Path]:
    """Files that look a little like entries but are not (each must survive clear and evict)."""
    hexname = "ab" + "0" * 62 + ".npz"
    shard = root / "embeddings" / "hf-word" / "ab"
    shard.mkdir(parents=True, exist_ok=True)
    made = [root / "notes.txt", root / "embeddings" / "stray.npz", shard / "short.npz",
            shard / ("AB" + "0" * 62 + ".npz"),  # upper case: not a key isoeat writes
            root / "embeddings" / "hf-word" / "cd" / hexname,  # a key in the wrong shard
            shard / f".{hexname}.x1y2.tmp"]  # a write in progress
    for p in made:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"keep me")
    outside.mkdir()
    target = outside / "precious.npz"
    target.write_bytes(b"not yours")
    link = shard / ("ab" + "1" * 62 + ".npz")
    link.symlink_to(target)  # a link named as an entry: neither it nor its target is isoeat's
    linked = outside / "ef"
    linked.mkdir()
    (linked / ("ef" + "2" * 62 + ".npz")).write_bytes(b"not yours either")
    (root / "embeddings" / "hf-word" / "ef").symlink_to(linked, target_is_directory=True)  # a linked shard
    return made + [target, link, linked / ("ef" + "2" * 62 + ".npz")]


def test_clear_touches_only_cache_files(tmp_path, no_cap, capsys):
    root = tmp_path / "cache"
    c = C.EmbeddingCache(root, enabled=True)
    entries = [_put(c, w) for w in ("x", "yy")] + [_put(c, "s", kind="st-sentences")]
    keep = _foreign(root, tmp_path / "outside")
    fp = root / "fingerprints.json"
    fp.write_text('{"format": 1, "entries": {}}')
    expected = sum(os.path.getsize(p) for p in entries) + os.path.getsize(fp)
    assert main(["cache", "clear", "--cache-dir", str(root), "--format", "json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec == {"location": str(root), "files_removed": 4, "bytes_freed": expected}
    assert not any(p.exists() for p in entries) and not fp.exists()
    assert all(p.read_bytes() in (b"keep me", b"not yours", b"not yours either") for p in keep)


def test_evict_never_deletes_what_is_not_an_entry(tmp_path, no_cap):
    root = tmp_path / "cache"
    c = C.EmbeddingCache(root, enabled=True)
    entries = [_put(c, w) for w in ("x", "yy")]
    keep = _foreign(root, tmp_path / "outside")
    assert C.evict(root, 1)[0] == 2  # a cap of one byte: every entry goes, nothing else
    assert not any(p.exists() for p in entries) and all(p.exists() for p in keep)


# ----------------------------------------------------------------------------
# isoeat cache info, and the note after a command that grew the cache
# ----------------------------------------------------------------------------


def test_cache_info_reports_location_entries_size_and_cap(tmp_path, no_cap, capsys, monkeypatch):
    root = tmp_path / "cache"
    c = C.EmbeddingCache(root, enabled=True)
    paths = [_put(c, "a"), _put(c, "bb"), _put(c, "s", kind="st-sentences", n=500)]
    total = sum(os.path.getsize(p) for p in paths)
    monkeypatch.setenv("ISOEAT_CACHE_MAX", "1M")
    assert main(["cache", "info", "--cache-dir", str(root)]) == 0
    rows = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert rows["location"] == str(root)
    assert rows["entries"] == "3 (hf-word 2, st-sentences 1)"
    assert rows["size"].endswith(f"({total:,} bytes)")
    assert rows["cap"].startswith("1.0 MB ($ISOEAT_CACHE_MAX") and "over it" not in rows["cap"]
    for cap, over in ((total, False), (total - 1, True)):  # at the cap is not over it; one byte less is
        monkeypatch.setenv("ISOEAT_CACHE_MAX", str(cap))
        assert main(["cache", "info", "--cache-dir", str(root)]) == 0
        assert ("over it now" in capsys.readouterr().out) is over
    monkeypatch.setenv("ISOEAT_CACHE_MAX", "1M")
    assert main(["cache", "info", "--cache-dir", str(root), "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["entries"], info["bytes"], info["max_bytes"]) == (3, total, 10**6)
    monkeypatch.delenv("ISOEAT_CACHE_MAX")
    assert main(["cache", "--cache-dir", str(tmp_path / "none")]) == 0  # info is the default action
    rows = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert rows["entries"] == "0" and rows["cap"].startswith("none") and "not created yet" in rows["location"]


def test_a_command_that_grew_the_cache_says_where_and_how_big(tmp_path, no_cap, capsys):
    from isoeat import cli
    from isoeat._progress import set_quiet

    C.reset_cache_growth()
    c = C.EmbeddingCache(tmp_path, enabled=True)
    paths = [_put(c, "a"), _put(c, "bb")]
    total = sum(os.path.getsize(p) for p in paths)
    cli._report_cache()
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"isoeat: embedding cache {tmp_path}: {C.format_bytes(total)} in 2 entries "
                           f"(+{C.format_bytes(total)} this run; no cap")
    old = set_quiet(True)
    try:
        cli._report_cache()
    finally:
        set_quiet(old)
    assert capsys.readouterr().err == ""  # --quiet
    assert main(["cache", "info", "--cache-dir", str(tmp_path)]) == 0  # a command that wrote nothing
    assert "embedding cache" not in capsys.readouterr().err


def test_format_bytes_at_unit_boundaries():
    assert [C.format_bytes(n) for n in (0, 999, 1000, 999_949, 10**6, 10**9, 10**12)] == [
        "0 B", "999 B", "1.0 kB", "999.9 kB", "1.0 MB", "1.0 GB", "1.0 TB"]
