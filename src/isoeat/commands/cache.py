"""``isoeat cache info|clear``: where the embedding cache is, how big, its cap; or empty it.

The cache (:mod:`isoeat.backends.cache`) holds the vectors of contextual and
sentence encoders (reference chunks, word contexts, sentences). ``clear``
deletes only isoeat's cache files: embedding entries (``embeddings/<kind>/<xx>/
<64 hex digits>.npz``) and the model-fingerprint file ``fingerprints.json``;
anything else in the folder is left alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "COMMANDS", "cache_info"]


def register(sub: Any, add_stat_options: Any) -> None:
    from ..cliargs import add, examples

    p = sub.add_parser("cache",
                       description="Where the embedding cache is, how many entries and bytes it holds and its "
                                   "size cap ($ISOEAT_CACHE_MAX, least recently used entries evicted), or clear "
                                   "it (only isoeat's cache files are deleted).",
                       epilog=examples("isoeat cache info",
                                       "isoeat cache clear                           # frees the space, says how much",
                                       "isoeat cache info --cache-dir /scratch/isoeat --format json"))
    p.add_argument("action", nargs="?", choices=("info", "clear"), default="info",
                   help="info: location, entries, size and cap (default info); clear: delete the cache's entries")
    add(p, "--cache-dir", "--format")


def cache_info(root: str | os.PathLike) -> dict[str, Any]:
    """Location, entries (by kind), bytes, cap and on/off of the cache at ``root``."""
    from ..backends.cache import FingerprintCache, cache_enabled_by_default, cache_entries, cache_max_bytes

    root = Path(root)
    entries = cache_entries(root)
    kinds: dict[str, int] = {}
    for path, _, _ in entries:
        kinds[path.parent.parent.name] = kinds.get(path.parent.parent.name, 0) + 1
    fp = root / FingerprintCache.FILE
    return {"location": str(root), "exists": root.is_dir(), "enabled": cache_enabled_by_default(),
            "entries": len(entries), "bytes": sum(size for _, size, _ in entries), "kinds": dict(sorted(kinds.items())),
            "max_bytes": cache_max_bytes(),
            "fingerprints_bytes": fp.stat().st_size if fp.is_file() and not fp.is_symlink() else 0}


def _cmd_cache(args: argparse.Namespace) -> int:
    from ..backends.cache import clear_cache, default_cache_dir, format_bytes

    root = Path(args.cache_dir).expanduser() if args.cache_dir else default_cache_dir()
    if root.exists() and not root.is_dir():  # a file is no cache "not created yet", nor one to clear
        from .._errors import ConfigError

        where = ("--cache-dir" if args.cache_dir else "$ISOEAT_CACHE_DIR" if os.environ.get("ISOEAT_CACHE_DIR")
                 else "the default cache folder")
        raise ConfigError(f"{where} {root}: is a file, not a folder (the embedding cache is a folder); give a folder")
    if args.action == "clear":
        info = cache_info(root)  # the cap is checked too: a bad ISOEAT_CACHE_MAX is an error before deleting
        removed, freed = clear_cache(root, fingerprints=True)
        if args.format == "json":
            print(json.dumps({"location": str(root), "files_removed": removed, "bytes_freed": freed}))
        else:
            print(f"cleared {root}: {removed:,} file(s) removed ({info['entries']:,} embedding entries), "
                  f"{format_bytes(freed)} freed ({freed:,} bytes)")
        return 0
    info = cache_info(root)
    if args.format == "json":
        print(json.dumps(info))
        return 0
    cap = info["max_bytes"]
    kinds = ", ".join(f"{k} {n:,}" for k, n in info["kinds"].items())
    rows = [
        ("location", f"{root}{'' if info['exists'] else ' (not created yet)'}"),
        ("enabled", "yes" if info["enabled"] else "no ($ISOEAT_NO_CACHE is set)"),
        ("entries", f"{info['entries']:,}{f' ({kinds})' if kinds else ''}"),
        ("size", f"{format_bytes(info['bytes'])} ({info['bytes']:,} bytes)"),
        ("cap", f"{format_bytes(cap)} ($ISOEAT_CACHE_MAX; least recently used entries evicted"
                f"{', over it now: the next write trims it' if info['bytes'] > cap else ''})" if cap
         else "none (set ISOEAT_CACHE_MAX, e.g. 2G or 500M)"),
    ]
    if info["fingerprints_bytes"]:
        rows.append(("fingerprints", f"{format_bytes(info['fingerprints_bytes'])} (model file hashes)"))
    sys.stdout.write("".join(f"{k:<13}{v}\n" for k, v in rows))
    return 0


COMMANDS = {"cache": _cmd_cache}
