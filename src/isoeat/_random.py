"""The one way randomness enters isoeat: the ``rng`` keyword.

``rng`` may be ``None`` (fresh entropy), a non-negative integer seed, a
:class:`numpy.random.Generator` or a :class:`numpy.random.SeedSequence`.
The library never touches numpy's global state.

* :func:`as_generator` turns ``rng`` into a ``Generator`` (exactly
  :func:`numpy.random.default_rng` for the accepted types, so the streams of
  existing seeds do not change).
* :func:`seed_sequence` turns ``rng`` into a root ``SeedSequence``.
* :func:`spawn_seeds` derives ``n`` independent child seeds (one per
  template, word, ...) that results record.
* :func:`derive_seed` / :func:`stream` give the seed of one *named stream*
  of a run: a pure function of the root seed and the stream's name
  (``("weat", "W6")``), so the same cell draws the same numbers
  whichever command computes it and whatever else is in the run. Every
  result that draws records the root ``seed`` and its ``seed_stream``.

Names of the streams (one rule for every command)
-------------------------------------------------
* a WEAT: ``("weat", TEST)``;
* SC-WEAT: ``("scweat", TEST, WORD)``; SEAT: ``("seat", TEST, TEMPLATE)``;
  CEAT: ``("ceat", TEST)``;
* another bias metric: ``("metric", METRIC, TEST)``;
* the anisotropy sample of a frame (raw and calibrated on the same vectors):
  ``("anisotropy", FRAME)``;
* a similarity benchmark's bootstrap: ``("similarity", BENCHMARK)``;
* a sensitivity analysis's reference draw: ``("reference-draw", SOURCE, REPEAT)``;
  the shards of a reference sample: ``("reference-shards",)``.

No name holds the space (raw or a calibration): every space of a test draws
the same permutations, samples and draws (common random numbers), so a
difference between spaces is the calibration's alone, never Monte Carlo noise.

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

__all__ = ["as_generator", "seed_sequence", "spawn_seeds", "resolve_seed", "resolve_seed_sequence", "RNG_TYPES",
           "derive_seed", "stream", "root_seed", "keyed_sequence"]

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
    isoeat._errors.InvalidValueError: rng must be None, a non-negative integer, a numpy.random.Generator or a
    numpy.random.SeedSequence, got -1 (int)
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


def _key_words(key: tuple[str, ...]) -> tuple[int, ...]:
    """The stream's name as 32-bit words: the SHA-256 of its parts as a JSON array (one name, one array)."""
    import hashlib
    import json

    text = json.dumps([str(k) for k in key], ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return tuple(int(w) for w in np.frombuffer(digest, dtype="<u4"))


def derive_seed(root: int, *key: str) -> int:
    """The seed (uint32) of the stream named ``key`` of a run seeded with ``root``.

    ``SeedSequence(root, spawn_key=words)``, ``words`` the eight little-endian
    32-bit words of the SHA-256 of the name as a compact JSON array of
    strings (``["weat","W6"]``, UTF-8 as is): independent
    streams for different names, the same stream for the same name — whatever
    other streams the run draws, and in whatever order.

    Examples
    --------
    >>> derive_seed(0, "weat", "none", "W6") == derive_seed(0, "weat", "none", "W6")
    True
    >>> len({derive_seed(0, "weat", s, "W6") for s in ("none", "zca")} | {derive_seed(1, "weat", "none", "W6")})
    3
    """
    root = _seed(root, "seed")
    return int(np.random.SeedSequence(root, spawn_key=_key_words(key)).generate_state(1)[0])


def stream(rng: Any, *key: str, name: str = "rng") -> tuple[Any, int | None]:
    """What a function that draws passes on for its named stream, and the root seed its result records.

    ``rng`` None or an int: the root seed (None draws a fresh one, which is
    recorded) and the stream's own seed :func:`derive_seed` ``(root, *key)``;
    a ``Generator`` or ``SeedSequence``: used as given (the caller owns the
    stream; nothing to record).

    Returns
    -------
    (rng for the stream, recorded root seed or None)

    Examples
    --------
    >>> s, root = stream(7, "weat", "none", "W1")
    >>> root, s == derive_seed(7, "weat", "none", "W1")
    (7, True)
    """
    if isinstance(rng, (np.random.Generator, np.random.SeedSequence)):
        return rng, None
    root = _recordable(rng, name)
    assert root is not None
    return derive_seed(root, *key), root


def root_seed(rng: Any, *, name: str = "rng") -> int:
    """The root seed (an int) a run of several streams uses for ``rng``.

    An int: itself; None: a fresh one; a Generator: one draw from it; a
    SeedSequence: its first generated word (so a run seeded by either is
    deterministic given its state).

    Examples
    --------
    >>> root_seed(5), root_seed(np.random.default_rng(0)) == root_seed(np.random.default_rng(0))
    (5, True)
    """
    ss, seed = resolve_seed_sequence(rng, name=name)
    return int(ss.generate_state(1)[0]) if seed is None else seed


def keyed_sequence(*entropy: int) -> np.random.SeedSequence:
    """``SeedSequence(list(entropy))``: a stream keyed by whole numbers (a corpus's seed and a word's hash).

    Examples
    --------
    >>> keyed_sequence(0, 5).entropy
    [0, 5]
    """
    return np.random.SeedSequence([int(e) for e in entropy])
