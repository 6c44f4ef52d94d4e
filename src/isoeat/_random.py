"""The one way randomness enters isoeat: the ``rng`` keyword.

``rng`` may be ``None`` (fresh entropy), a non-negative integer seed, a
:class:`numpy.random.Generator` or a :class:`numpy.random.SeedSequence`.
The library never touches numpy's global state.

* :func:`as_generator` turns ``rng`` into a ``Generator`` (exactly
  :func:`numpy.random.default_rng` for the accepted types, so the streams of
  existing seeds do not change).
* :func:`seed_sequence` turns ``rng`` into a root ``SeedSequence``.
* :func:`spawn_seeds` derives ``n`` independent child seeds (one per grid
  cell, template, word, ...) that results record.

Rules of :func:`seed_sequence`
------------------------------
* int ``s``: ``SeedSequence(s)``;
* ``SeedSequence``: itself (spawning from it advances its ``n_children_spawned``,
  as numpy intends);
* ``Generator`` ``g``: ``SeedSequence(int(g.integers(0, 2**63)))``: one draw
  from ``g``, so the result is deterministic given ``g``'s state (and ``g``
  advances by that one draw);
* ``None``: ``SeedSequence()`` with fresh OS entropy.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ._errors import InvalidValueError
from ._validate import check_int, show

__all__ = ["as_generator", "seed_sequence", "spawn_seeds", "resolve_seed", "resolve_seed_sequence", "RNG_TYPES"]

#: What an ``rng`` parameter accepts, in words (for messages and docstrings).
RNG_TYPES = "None, a non-negative integer, a numpy.random.Generator or a numpy.random.SeedSequence"


def _seed(rng: Any, name: str) -> int:
    if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, numbers.Integral) or rng < 0:
        raise InvalidValueError(name, RNG_TYPES, show(rng))
    return check_int(name, rng, lo=0)


def as_generator(rng: Any = None, *, name: str = "rng") -> np.random.Generator:
    """A :class:`numpy.random.Generator` from an ``rng`` parameter.

    Parameters
    ----------
    rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None``: fresh entropy; an int ``>= 0``: ``default_rng(rng)``; a
        Generator: returned as is (not copied); a SeedSequence: ``default_rng(rng)``.
    name : str
        The parameter's name in error messages (``"rng"``, ``"seed"``).

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    InvalidValueError
        Any other type (bool, float, str, ...), or a negative integer.

    Examples
    --------
    >>> import numpy as np
    >>> float(as_generator(0).random()) == float(np.random.default_rng(0).random())
    True
    >>> g = np.random.default_rng(1)
    >>> as_generator(g) is g
    True
    >>> as_generator(-1)
    Traceback (most recent call last):
    ...
    isoeat._errors.InvalidValueError: rng must be None, a non-negative integer, a numpy.random.Generator or a numpy.random.SeedSequence, got -1 (int)
    """
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    return np.random.default_rng(_seed(rng, name))


def seed_sequence(rng: Any = None, *, name: str = "rng") -> np.random.SeedSequence:
    """The root :class:`numpy.random.SeedSequence` of an ``rng`` parameter (rules in the module docstring).

    Examples
    --------
    >>> seed_sequence(7).entropy
    7
    """
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence(int(rng.integers(0, 2**63)))
    return np.random.SeedSequence(_seed(rng, name))


def spawn_seeds(rng: Any, n: int, *, name: str = "rng") -> list[int]:
    """``n`` independent child seeds (uint32 each) derived from ``rng``.

    For an int seed ``s`` this is exactly
    ``[int(c.generate_state(1)[0]) for c in np.random.SeedSequence(s).spawn(n)]``,
    the rule the experiment runner records ("numpy SeedSequence(root).spawn(n)"),
    so seeds and numbers of earlier runs do not change. A Generator or
    SeedSequence gives its root by :func:`seed_sequence`; ``None`` fresh entropy.

    Parameters
    ----------
    rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
    n : int
        How many seeds (``>= 0``).
    name : str
        The parameter's name in error messages.

    Returns
    -------
    list of int

    Examples
    --------
    >>> import numpy as np
    >>> spawn_seeds(0, 3) == [int(c.generate_state(1)[0]) for c in np.random.SeedSequence(0).spawn(3)]
    True
    """
    n = check_int("n", n, lo=0)
    root = seed_sequence(rng, name=name)
    return [int(c.generate_state(1)[0]) for c in root.spawn(n)]


def _recordable(rng: Any, name: str) -> int | None:
    """The int seed a result can record for ``rng``: the seed itself, a fresh one for None, None otherwise."""
    if rng is None:
        return int(np.random.SeedSequence().generate_state(1)[0])
    if isinstance(rng, (np.random.Generator, np.random.SeedSequence)):
        return None
    return _seed(rng, name)


def resolve_seed(rng: Any, *, name: str = "rng") -> tuple[np.random.Generator, int | None]:
    """A Generator for ``rng`` and the seed to record: ``None`` draws a fresh seed and records it.

    The seed recorded replays the result: ``resolve_seed(seed)`` gives the
    same stream. A Generator is used as given (nothing to record).

    Examples
    --------
    >>> gen, seed = resolve_seed(3)
    >>> seed, bool(gen.integers(0, 100) == np.random.default_rng(3).integers(0, 100))
    (3, True)
    """
    if isinstance(rng, np.random.Generator):
        return rng, None
    seed = _recordable(rng, name)
    return (np.random.default_rng(rng) if seed is None else np.random.default_rng(seed)), seed


def resolve_seed_sequence(rng: Any, *, name: str = "rng (seed)") -> tuple[np.random.SeedSequence, int | None]:
    """The root SeedSequence for ``rng`` and the seed to record (:func:`seed_sequence` plus the seed).

    Examples
    --------
    >>> root, seed = resolve_seed_sequence(7)
    >>> seed, root.entropy
    (7, 7)
    """
    seed = _recordable(rng, name)
    return (seed_sequence(rng, name=name) if seed is None else np.random.SeedSequence(seed)), seed
