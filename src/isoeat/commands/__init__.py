"""The sub-commands of ``isoeat``, each imported by :mod:`isoeat.cli` only when it runs.

:data:`COMMANDS` is the one list of the commands: each command's module (in
this package) and its line in ``isoeat --help``, in the order ``--help`` lists
them. ``isoeat --help`` and ``isoeat --version`` read only this table (no
command module, no numpy); ``isoeat weat ...`` imports and builds only the
module that holds ``weat``.

Each module here defines ``register(subparsers, add_stat_options)``, which adds
its parsers (their ``help`` line is taken from :data:`COMMANDS`), and
``COMMANDS``, a dict from command name to a handler ``handler(args) -> int``.
Handlers raise :class:`isoeat.IsoeatError` for user mistakes; the CLI turns
those into one-line errors with exit status 2. Private modules (``_name``) hold
helpers, not commands.
"""

from __future__ import annotations

__all__ = ["COMMANDS", "module_of", "summary"]

#: command -> (its module in this package, its line in ``isoeat --help``); the main commands first
COMMANDS: dict[str, tuple[str, str]] = {
    "tests": ("core", "list the built-in tests (or a test file's), print them as a test file, or print a test "
                      "file's template"),
    "weat": ("core", "one or a few WEATs on one model: raw beside calibrated, with the change class"),
    "scweat": ("core", "single-category WEAT: target words against the attributes of a test, raw beside "
                       "calibrated"),
    "whiten": ("core", "fit a calibrator (default the ZCA whitener) on a model's reference sample, save it (.npz)"),
    "run": ("run", "all tests raw vs ZCA-whitened, with change classes (paper Table A1)"),
    "cache": ("cache", "the embedding cache: location, entries, size and cap (info), or empty it (clear)"),
    "ceat": ("ceat", "CEAT: random-effects effect size over draws of context-specific word vectors (Guo & Caliskan "
                     "2021)"),
    "anisotropy": ("diagnostics", "anisotropy before/after calibration: mean and SD of pairwise cosine, IsoScore, "
                                  "partition ratio, explained variance (paper Table 2)"),
    "similarity": ("diagnostics", "Spearman rho of cosine vs human scores on similarity benchmarks, raw vs "
                                  "calibrated, paired bootstrap (paper Table 3)"),
    "whiten-distributed": ("distributed", "fit a calibrator (the ZCA whitener) on a Dask cluster (--scheduler "
                                          "ADDRESS or --local-workers N), save it (.npz)"),
    "metric": ("metric", "other bias metrics (MAC, RND, ECT, RIPA, SemAxis, direct bias, NAS, RNSB): raw vs "
                         "calibrated"),
    "ngroup": ("ngroup", "tests of k >= 2 target groups (Generalized WEAT, SAME, multiclass MAC and RNSB): raw vs "
                         "calibrated"),
    "report": ("report", "tables, figures and (--html) a self-contained report.html from an experiment folder"),
    "reproduce": ("reproduce", "the paper's protocol on every model available here, beside the paper's values"),
    "seat": ("seat", "SEAT: WEAT on sentence embeddings of the words placed in templates, raw beside calibrated "
                     "(May et al. 2019)"),
    "export": ("export", "write a model's vectors for words, or its top N rows, to .npy + vocabulary or GloVe "
                         "text"),
    "sensitivity": ("sensitivity", "robustness of calibrated WEAT to eps, reference size and reference corpus "
                                   "(paper §6.3)"),
}


def module_of(command: str) -> str:
    """The full name of the module that holds ``command`` (``weat`` -> ``isoeat.commands.core``)."""
    return f"{__name__}.{COMMANDS[command][0]}"


def summary(command: str) -> str:
    """``command``'s line in ``isoeat --help``."""
    return COMMANDS[command][1]
