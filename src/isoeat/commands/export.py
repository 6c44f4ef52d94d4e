"""``isoeat export``: a model's vectors for words, or its top rows, to a file that loads back (``npy:``, ``glove:``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from ..cliargs import add, examples, load_model_from_args
from ..cliopts import positive_int

__all__ = ["register", "COMMANDS"]

#: A --words value with one of these suffixes (or a /) names a file of words, one a line ("word<TAB>count" too).
_LIST_SUFFIXES = frozenset({".txt", ".tsv", ".lst", ".list", ".vocab", ".words"})


def register(sub: Any, add_stat_options_: Any = None) -> None:
    """Add the ``export`` parser."""
    p = sub.add_parser("export",
                       description="Write the raw vectors of a static model (GloVe, word2vec, npy:, a named model) "
                                   "for a list of words, or its first N rows, exactly as stored: X.npy (the "
                                   "matrix, its dtype kept, and its vocabulary X.vocab beside it; load it back "
                                   "with --model npy:X.npy) or X.txt (GloVe text, values that read back to the same "
                                   "float32; --model glove:X.txt). Rows are streamed; both files are written "
                                   "atomically, an existing one replaced only with --force.",
                       epilog=examples("isoeat export --words nurse,engineer,doctor --out jobs.npy",
                                       "isoeat export --top 10000 --out top10k.txt     # GloVe text",
                                       "isoeat export --words words.txt --skip-missing --out mine.npy"))
    add(p, "--model", "--words")
    p.add_argument("--top", type=positive_int("--top"), default=None, metavar="N",
                   help="the first N rows instead (the most frequent words of GloVe and word2vec files) (default: "
                        "none; give --words or --top)")
    add(p, "--out", "--force")
    p.add_argument("--skip-missing", action="store_true",
                   help="write the words that are in the vocabulary and list the others (default: a word not in it "
                        "is an error and nothing is written)")
    add(p, "--duplicates", "--allow-pickle", group=p.add_argument_group("vector files"))


def _words(value: str) -> list[str]:
    """``--words``: a file of words, one a line (blank lines skipped), when it names a regular file; else a
    comma-separated list."""
    from .._errors import IsoeatFileNotFoundError
    from .._textio import iter_lines

    p = Path(value)
    if p.is_file():
        words = [w.split("\t", 1)[0].strip() for _, w in iter_lines(p, what="word list") if w.strip()]
        if not words:
            raise ConfigError(f"--words {value}: the file holds no word")
        return words
    if p.suffix.lower() in _LIST_SUFFIXES or "/" in value:
        raise IsoeatFileNotFoundError(f"--words {value}: no such file (a list of words is comma-separated)")
    words = [w.strip() for w in value.split(",") if w.strip()]
    if not words:
        raise ConfigError(f"--words {value!r}: no word given (comma-separated words, or a file of words)")
    return words


def _cmd_export(args: argparse.Namespace) -> int:
    from ..backends import export_vectors
    from ..backends._export import out_paths

    if (args.words is None) == (args.top is None):
        raise ConfigError("give --words WORDS|FILE or --top N (one of them)")
    out_paths(args.out, args.force)  # an output refused before the model is read
    words = None if args.words is None else _words(args.words)
    model = load_model_from_args(args)
    done = export_vectors(model, args.out, words=words, top=args.top, skip_missing=args.skip_missing,
                          force=args.force)
    what = f"its first {done['rows']:,} rows" if words is None else f"{done['rows']:,} word(s)"
    also = f" and its vocabulary {done['vocabulary']}" if done["vocabulary"] else ""
    print(f"wrote the raw vectors of {model.name}, {what} (dim {done['dim']}, {done['dtype']}), to {done['path']}"
          f"{also}; load them with --model {done['spec']}")
    if done["missing"]:
        miss = done["missing"]
        sys.stderr.write(f"isoeat: not in the vocabulary (not written): {', '.join(miss[:20])}"
                         f"{f', ... ({len(miss)} in all)' if len(miss) > 20 else ''}\n")
    return 0


COMMANDS = {"export": _cmd_export}
