"""The environment variables isoeat reads: each one named, read and checked here, and nowhere else.

Every variable is read where it is used (a folder variable only when isoeat
looks for that data), through one of the readers below, so a wrong value is an
error that names the variable, its value and what is allowed — never a quiet
fall-back to other data:

* :func:`env_path`: a folder or file that must exist (``ISOEAT_DATA_DIR``,
  ``ISOEAT_SHARED_DATA``, ``ISOEAT_WIKITEXT103``, ``ISOEAT_WIKITEXT2``);
* :func:`env_flag`: ``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off``
  (``ISOEAT_NO_CACHE``, ``ISOEAT_OFFLINE``);
* :func:`env_choice`: one of a few words (``ISOEAT_PROGRESS``);
* :func:`env_int`: a bounded whole number (``ISOEAT_REPORT_JOBS``);
* :func:`env_bytes`: a size (``ISOEAT_CACHE_MAX``).

An empty variable counts as unset. :func:`unknown_variables` lists the
``ISOEAT_*`` names that isoeat does not read (a typo would otherwise be ignored).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ._errors import ConfigError, IsoeatFileNotFoundError
from ._validate import check_bytes, show, suggest

__all__ = ["VARIABLES", "VALUE_VARIABLES", "env_text", "env_path", "env_flag", "env_choice", "env_int", "env_bytes",
           "check", "check_values", "unknown_variables"]

#: Every variable isoeat reads, with what it holds (``isoeat --help`` and the docs say the same).
VARIABLES: dict[str, str] = {
    "ISOEAT_DATA_DIR": "a shared data folder (corpora/, similarity benchmarks)",
    "ISOEAT_SHARED_DATA": "a shared data folder (corpora/)",
    "ISOEAT_WIKITEXT103": "the WikiText-103 raw folder (wiki.train.raw, wiki.valid.raw, wiki.test.raw)",
    "ISOEAT_WIKITEXT2": "the WikiText-2 raw folder (wiki.*.raw)",
    "ISOEAT_CACHE_DIR": "the embedding cache folder",
    "ISOEAT_CACHE_MAX": "the embedding cache's size cap",
    "ISOEAT_NO_CACHE": "turn the embedding cache off",
    "ISOEAT_PROGRESS": "progress on stderr",
    "ISOEAT_REPORT_JOBS": "processes drawing the report's figures",
    "ISOEAT_OFFLINE": "never try the network",
    "ISOEAT_DISTRIBUTED_KILL_ONCE": "a test hook of the distributed worker",
    # the test suite's own switches (set by .ci/run for the smoke run on the installed wheel; isoeat ignores them)
    "ISOEAT_TEST_INSTALLED": "the test suite: test the installed package, not the checkout",
    "ISOEAT_WHEEL": "the test suite: the wheel file under test",
    "ISOEAT_SDIST": "the test suite: the sdist file under test",
    "ISOEAT_FUZZ_EXAMPLES": "the test suite: examples per fuzz test",
}

_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")


def env_text(name: str) -> str | None:
    """The variable's value, stripped; None when it is unset or empty."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        return None
    return value.strip()


def env_path(name: str, what: str | None = None, *, folder: bool = False) -> Path | None:
    """The file or folder the variable names (``~`` expanded), or None when unset.

    Raises
    ------
    IsoeatFileNotFoundError
        The path does not exist (``$NAME=VALUE: no such file or folder``), or
        is not a folder though ``folder`` asks for one.
    """
    value = env_text(name)
    if value is None:
        return None
    path = Path(value).expanduser()
    if not path.exists():
        raise IsoeatFileNotFoundError(
            f"${name}={value}: no such file or folder; point it at {what or VARIABLES.get(name, 'the data')}, "
            f"or unset {name} (isoeat never falls back to other data when it is set)")
    if folder and not path.is_dir():
        raise IsoeatFileNotFoundError(f"${name}={value}: not a folder; point it at "
                                      f"{what or VARIABLES.get(name, 'a folder')}, or unset {name}")
    return path


def _invalid(name: str, requirement: str, value: Any) -> ConfigError:
    return ConfigError(f"${name} must be {requirement}, got {show(value)}")


def env_flag(name: str) -> bool:
    """True for ``1``, ``true``, ``yes``, ``on``; False for ``0``, ``false``, ``no``, ``off`` or unset (any case)."""
    value = env_text(name)
    if value is None or value.lower() in _OFF:
        return False
    if value.lower() in _ON:
        return True
    raise _invalid(name, f"one of {', '.join(_ON + _OFF)} (or unset)", value)


def env_choice(name: str, choices: Iterable[str], default: str) -> str:
    """One of ``choices`` (lower-cased), or ``default`` when unset."""
    value = env_text(name)
    if value is None:
        return default
    choices = tuple(choices)
    if value.lower() not in choices:
        raise ConfigError(f"${name} must be one of {', '.join(choices)} (or unset), got {show(value)}"
                          + suggest(value.lower(), choices))
    return value.lower()


def env_int(name: str, default: int, *, lo: int, hi: int) -> int:
    """A whole number in ``[lo, hi]``, or ``default`` when unset."""
    value = env_text(name)
    if value is None:
        return default
    try:
        n = int(value)
    except ValueError:
        n = None
    if n is None or not lo <= n <= hi:
        raise _invalid(name, f"a whole number from {lo} to {hi}", value)
    return n


def env_bytes(name: str) -> int | None:
    """A size in bytes (``2G``, ``500M``, ``1000000``), or None when unset."""
    value = env_text(name)
    if value is None:
        return None
    try:
        return check_bytes(name, value)
    except ConfigError as exc:
        raise ConfigError(f"${exc}") from None


#: How :func:`check` reads each variable (the readers above, with their settings).
_CHECKS: dict[str, Callable[[str], Any]] = {
    "ISOEAT_DATA_DIR": env_path, "ISOEAT_SHARED_DATA": env_path, "ISOEAT_WIKITEXT103": env_path,
    "ISOEAT_WIKITEXT2": env_path, "ISOEAT_NO_CACHE": env_flag, "ISOEAT_OFFLINE": env_flag,
    "ISOEAT_CACHE_MAX": env_bytes,
    "ISOEAT_PROGRESS": lambda n: env_choice(n, PROGRESS_VALUES, "auto"),
    "ISOEAT_REPORT_JOBS": lambda n: env_int(n, 1, lo=1, hi=REPORT_JOBS_MAX),
}
#: ``ISOEAT_PROGRESS``: ``auto`` (a bar on a terminal, log lines otherwise), ``bar``, ``log``, on, off.
PROGRESS_VALUES: tuple[str, ...] = ("auto", "bar", "log", *_ON, *_OFF)
#: ``ISOEAT_REPORT_JOBS``: at most this many processes draw figures.
REPORT_JOBS_MAX = 64


def check(name: str) -> Any:
    """Read ``name`` with its reader (an error when its value is not allowed); the value read."""
    reader = _CHECKS.get(name, lambda n: env_text(n))
    return reader(name)


#: The variables whose value (not a path) is checked when a command starts, whatever the command.
VALUE_VARIABLES = ("ISOEAT_PROGRESS", "ISOEAT_NO_CACHE", "ISOEAT_OFFLINE", "ISOEAT_CACHE_MAX", "ISOEAT_REPORT_JOBS")


def check_values() -> None:
    """Check every set variable of :data:`VALUE_VARIABLES` (paths are checked where the data is looked for)."""
    for name in VALUE_VARIABLES:
        check(name)


def unknown_variables() -> list[str]:
    """One line per ``ISOEAT_*`` variable that isoeat does not read (a typo), with a did-you-mean."""
    out = []
    for name in sorted(os.environ):
        if name.startswith("ISOEAT_") and name not in VARIABLES:
            hint = suggest(name, list(VARIABLES), quote=False)
            out.append(f"${name} is not a variable isoeat reads" + (hint or f" (it reads {', '.join(VARIABLES)})"))
    return out
