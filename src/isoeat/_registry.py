"""One registry type for every set of named things (tests, calibrators, models, corpora, ...).

A :class:`Registry` maps names to objects. It refuses duplicate names,
resolves aliases and (optionally) case, and answers an unknown name with an
:class:`~isoeat.UnknownNameError` that suggests close matches (via
:func:`isoeat._validate.suggest`) and lists the known names. It reads like a
read-only mapping (``reg[name]``, ``name in reg``, ``len``, iteration,
``items()``), so code written for the dicts it replaces keeps working.

Examples
--------
>>> reg = Registry("calibration", cutoff=0.4)
>>> reg.register("zca", "ZCA whitening")
'ZCA whitening'
>>> reg.get("zca")
'ZCA whitening'
>>> reg.get("zcaa")
Traceback (most recent call last):
...
isoeat._errors.UnknownNameError: unknown calibration 'zcaa'; did you mean zca? (known: zca)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from ._errors import ConfigError, UnknownNameError
from ._validate import suggest

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Named objects with duplicate refusal, aliases and did-you-mean lookups.

    Parameters
    ----------
    kind : str
        What a name names, for messages: ``"test id"``, ``"calibration"``, ``"model"``.
    items : mapping, optional
        Initial entries (registered in order).
    aliases : mapping, optional
        Alternative spellings, alias -> registered name.
    fold_case : bool
        Names are case-insensitive (lookups, duplicates and suggestions);
        :meth:`names` keep the spelling they were registered with.
    known : str
        Label of the name list in the unknown-name message (default ``"known"``).
    also : str
        What else the caller accepts, appended to that list
        (e.g. ``"or give a YAML/JSON file path"``).
    n, cutoff : int, float
        At most ``n`` suggestions with similarity >= ``cutoff`` (see :func:`~isoeat._validate.suggest`).
    loader : callable, optional
        Called once, at first use, to register the built-in entries (e.g.
        read from a data file); keeps module import cheap.
    """

    def __init__(self, kind: str, items: Mapping[str, T] | None = None, *, aliases: Mapping[str, str] | None = None,
                 fold_case: bool = False, known: str = "known", also: str = "", n: int = 3, cutoff: float = 0.5,
                 loader: Callable[[Registry[T]], None] | None = None) -> None:
        self.kind = kind
        self.fold_case = fold_case
        self.known = known
        self.also = also
        self._n, self._cutoff = n, cutoff
        self._entries: dict[str, T] = {}
        self._keys: dict[str, str] = {}  # folded key -> registered name
        self._aliases: dict[str, str] = {}
        self._loader = loader
        for name, obj in (items or {}).items():
            self.register(name, obj)
        for alias, name in (aliases or {}).items():
            self.add_alias(alias, name)

    # -- filling ---------------------------------------------------------------
    def _key(self, name: str) -> str:
        return name.strip().lower() if self.fold_case else name

    def _load(self) -> None:
        if self._loader is not None:
            loader, self._loader = self._loader, None
            loader(self)

    def register(self, name: str, obj: T, *, same_ok: bool = False) -> T:
        """Add ``obj`` under ``name``; a name (or alias) already taken is refused.

        With ``same_ok=True``, registering the very same object again under its
        name is a no-op (so a module that registers classes may be imported
        twice). Returns ``obj``.

        Raises
        ------
        ConfigError
            ``name`` is not a non-empty string, or is already registered.
        """
        self._load()
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"a {self.kind} must be a non-empty string, got {name!r}")
        key = self._key(name)
        if key in self._aliases:
            raise ConfigError(f"{self.kind} {name!r} is already registered (as an alias of {self._aliases[key]!r})")
        if key in self._keys:
            if same_ok and self._entries[self._keys[key]] is obj:
                return obj
            raise ConfigError(f"{self.kind} {name!r} is already registered")
        self._keys[key] = name
        self._entries[name] = obj
        return obj

    def add_alias(self, alias: str, name: str) -> None:
        """Let ``alias`` stand for the registered ``name``."""
        self._load()
        key = self._key(alias)
        if key in self._keys or self._aliases.get(key, name) != name:
            raise ConfigError(f"{self.kind} alias {alias!r} is already taken")
        self._aliases[key] = self._keys.get(self._key(name), name)

    # -- queries ---------------------------------------------------------------
    def resolve(self, name: Any) -> str | None:
        """The registered name that ``name`` (an alias, or another case when folding) stands for, or None."""
        if not isinstance(name, str):
            return None
        self._load()
        if name in self._entries:
            return name
        key = self._key(name)
        key = self._aliases.get(key, key)
        return self._keys.get(self._key(key))

    def get(self, name: str) -> T:
        """The object registered under ``name`` (or its alias).

        Raises
        ------
        UnknownNameError
            Unknown name; the message suggests close matches and lists the known names.
        """
        found = self.resolve(name)
        if found is None:
            raise self.unknown(name)
        return self._entries[found]

    __getitem__ = get

    def suggest(self, name: Any) -> str:
        """``"; did you mean a, b?"`` for an unknown name (aliases count, reported as their name), or ``""``."""
        self._load()
        return suggest(str(name), list(self._entries), n=self._n, cutoff=self._cutoff, quote=False,
                       aliases={a: n for a, n in self._aliases.items()}, fold_case=self.fold_case)

    def unknown(self, name: Any, *, what: str | None = None, names: Any = None) -> UnknownNameError:
        """The error for an unknown ``name`` (to raise): ``"<what><hint> (<known>: ...; <also>)"``.

        ``what`` defaults to ``"unknown <kind> 'name'"``; ``names`` to :meth:`names`.
        """
        what = what if what is not None else f"unknown {self.kind} {name!r}"
        listed = ", ".join(self.names() if names is None else names)
        tail = f"; {self.also}" if self.also else ""
        return UnknownNameError(f"{what}{self.suggest(name)} ({self.known}: {listed}{tail})")

    def names(self) -> tuple[str, ...]:
        """Registered names, in registration order (aliases excluded)."""
        self._load()
        return tuple(self._entries)

    def aliases(self) -> dict[str, str]:
        """Alias -> registered name (aliases as stored: lower case when folding case)."""
        self._load()
        return dict(self._aliases)

    def items(self) -> list[tuple[str, T]]:
        """``(name, object)`` pairs in registration order."""
        self._load()
        return list(self._entries.items())

    def keys(self) -> tuple[str, ...]:
        """Same as :meth:`names` (mapping protocol)."""
        return self.names()

    def values(self) -> list[T]:
        """Registered objects in registration order."""
        self._load()
        return list(self._entries.values())

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is a registered name or alias (case-insensitive when folding)."""
        return self.resolve(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self._load()
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, names={list(self.names())!r})"
