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
    "InvalidValueError",
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
    "CustomCodeRefusedError",
    "UnsafePathError",
    "InvalidTestError",
    "IsoeatWarning",
]


class IsoeatError(Exception):
    """Base class of every error isoeat raises for a user mistake."""


class ConfigError(IsoeatError, ValueError):
    """A parameter or option has a value outside what is allowed."""


class InvalidValueError(ConfigError):
    """A parameter of the wrong type, or outside its range or choices.

    Raised by the validators of :mod:`isoeat._validate`. The message reads
    ``"<parameter> must be <requirement>, got <received>"`` (``"; got"`` after
    a list of choices), optionally followed by a did-you-mean hint. The parts
    are kept as attributes so that a caller can word the message for its
    context (the experiment file says ``"<key>: expected ..."``).

    Attributes
    ----------
    parameter : str
        The parameter's name as the user wrote it.
    requirement : str
        What is allowed, e.g. ``"a positive integer"``, ``"a number in (0, 1)"``.
    received : str
        The value received, shown with ``repr`` (and its type when that is the problem).
    hint : str
        ``""`` or ``"; did you mean 'x'?"``.
    """

    def __init__(self, parameter: str, requirement: str, received: str, hint: str = "", sep: str = ", ") -> None:
        self.parameter = parameter
        self.requirement = requirement
        self.received = received
        self.hint = hint
        self.sep = sep
        super().__init__(f"{parameter} must be {self.detail()}")

    def detail(self, requirement: str | None = None) -> str:
        """``"<requirement>, got <received><hint>"``, with ``requirement`` replaced when given."""
        return f"{requirement or self.requirement}{self.sep}got {self.received}{self.hint}"

    def __reduce__(self):  # picklable (Dask sends errors between processes)
        return (type(self), (self.parameter, self.requirement, self.received, self.hint, self.sep))


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


class ResourceLimitError(IsoeatError, MemoryError):
    """A resource limit leaves too little room to start the work at all (checked before, not run into)."""


class ExperimentLockedError(IsoeatError):
    """Another run holds the output folder."""


class ExperimentMismatchError(IsoeatError):
    """The output folder holds another experiment's results, or files isoeat did not write."""


class ExperimentNotFoundError(IsoeatError):
    """A folder is not an experiment folder (no ``experiment.json``)."""


class SchedulerUnreachableError(ConfigError, ConnectionError):
    """The Dask scheduler given with ``--scheduler`` cannot be reached."""


class CustomCodeRefusedError(DataFormatError):
    """A model folder that needs its own Python code (``auto_map`` in its config) to load: never run."""


class UnsafePathError(IsoeatError, ValueError):
    """A file isoeat was asked to read or embed is a symlink leading out of the folder it belongs to."""


class InvalidTestError(ConfigError):
    """An association test that cannot be measured as given.

    Identical or overlapping sets, two words of one set that fold to the same
    vocabulary entry, a set of fewer than 2 words, ``ddof`` not below the
    number of values, a model of dimension < 2 (see
    :func:`isoeat.stats.validity.check_test`). The message names the test,
    the sets and the words.
    """


class IsoeatWarning(UserWarning):
    """Warnings isoeat emits (few reference vectors, dropped words, ...)."""
