"""One exception tree for isoeat.

Every error that a user can cause (a bad file, an unknown test id, a wrong
parameter) is an :class:`IsoeatError`. The command line prints such errors as
one line, ``isoeat: error: <message>``, and exits with status 2; anything else
is a bug and keeps its traceback.

The subclasses also derive from the matching built-in exception, so code that
already catches ``ValueError`` or ``FileNotFoundError`` keeps working.
"""

from __future__ import annotations

__all__ = [
    "IsoeatError",
    "ConfigError",
    "DataFormatError",
    "CoverageError",
    "NotFittedError",
    "DimensionMismatchError",
    "FingerprintMismatchError",
    "MissingDependencyError",
    "UnknownNameError",
    "IsoeatFileNotFoundError",
    "ExperimentLockedError",
    "ExperimentMismatchError",
    "ExperimentNotFoundError",
    "SchedulerUnreachableError",
    "IsoeatWarning",
]


class IsoeatError(Exception):
    """Base class of every error isoeat raises for a user mistake."""


class ConfigError(IsoeatError, ValueError):
    """A parameter or option has a value outside what is allowed."""


class UnknownNameError(ConfigError, KeyError):
    """An unknown test id, model spec or other registered name.

    ``KeyError`` quotes its message with ``repr``; ``__str__`` is overridden so
    the message prints as written.
    """

    def __str__(self) -> str:  # pragma: no cover - trivial
        return str(self.args[0]) if self.args else ""


class DataFormatError(IsoeatError, ValueError):
    """A file's content is malformed (the message names file and line)."""


class IsoeatFileNotFoundError(IsoeatError, FileNotFoundError):
    """A path given by the user does not exist or cannot be read."""


class CoverageError(IsoeatError, ValueError):
    """Too many words of a set are missing from the model's vocabulary."""


class NotFittedError(IsoeatError, ValueError):
    """A calibrator was used before ``fit``."""


class DimensionMismatchError(IsoeatError, ValueError):
    """Vectors of one dimension were given to something fitted on another."""


class FingerprintMismatchError(IsoeatError, ValueError):
    """A saved calibrator belongs to another model (use ``force=True``)."""


class MissingDependencyError(IsoeatError, ImportError):
    """An optional dependency is not installed; the message gives the pip line."""


class ExperimentLockedError(IsoeatError):
    """Another run holds the output folder."""


class ExperimentMismatchError(IsoeatError):
    """The output folder holds another experiment's results, or files isoeat did not write."""


class ExperimentNotFoundError(IsoeatError):
    """A folder is not an experiment folder (no ``experiment.json``)."""


class SchedulerUnreachableError(ConfigError, ConnectionError):
    """The Dask scheduler given with ``--scheduler`` cannot be reached."""


class IsoeatWarning(UserWarning):
    """Warnings isoeat emits (few reference vectors, dropped words, ...)."""
