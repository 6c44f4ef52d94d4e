"""The reference sample: which vectors a calibrator is fitted on, as one value every command shares.

A :class:`ReferenceSpec` names the sample; :func:`reference_sample` draws it.
The same spec gives the same vectors wherever it is used — the fit of
``isoeat run``, :func:`isoeat.compare_calibration`, a sensitivity sweep's
cell, the isotropy check's pool — so a calibrator and the check of it see
the same rows, and a stored result keyed by the spec is reused only for the
same sample.

Draws (``draw``):

* ``"fixed"``: ``model.reference_vectors(size)`` — static vectors: the top
  ``size`` vocabulary rows (or a text's words by frequency, ``text``);
  contextual encoders: the word vectors of ``size`` seeded reference sentences;
* ``"subset"``: ``size`` rows drawn *without* replacement from the ``pool``
  rows of the fixed sample of size ``pool`` (a uniform random order, its first
  ``size``: samples of different sizes from one stream are nested);
* ``"bootstrap"``: as subset, *with* replacement (``pool`` uniform indices, the
  first ``size``);
* ``"encoder"``: ``model.reference_vectors(size, seed=s)``: a contextual
  encoder re-samples ``size`` reference sentences with the stream's seed.

The random draws come from the named stream ``stream`` of the root ``seed``
(:func:`isoeat._random.derive_seed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._errors import ConfigError
from .._validate import check_choice, check_int

__all__ = ["ReferenceSpec", "DRAWS", "reference_sample", "reference_kwargs", "drawn_description"]

#: How a reference sample is drawn (module docstring).
DRAWS = ("fixed", "subset", "bootstrap", "encoder")


@dataclass(frozen=True)
class ReferenceSpec:
    """Which reference vectors: ``size`` of them, from ``text`` (None: the model's own), drawn by ``draw``.

    Examples
    --------
    >>> ReferenceSpec(100_000).describe()
    'fixed: the first 100000 reference vectors'
    >>> ReferenceSpec(5000, draw="subset", pool=20000, seed=0, stream=("reference-shards",)).key()["pool"]
    20000
    """

    size: int = 100_000
    text: str | None = None
    draw: str = "fixed"
    pool: int | None = None
    seed: int | None = None
    stream: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_int("reference size", self.size, lo=1)
        check_choice("draw", self.draw, DRAWS)
        if self.draw in ("subset", "bootstrap", "encoder") and self.seed is None:
            raise ConfigError(f"a {self.draw!r} reference sample needs a seed")
        if self.pool is not None:
            check_int("reference pool", self.pool, lo=1)

    def key(self) -> dict[str, Any]:
        """The spec as plain JSON (hashed into every result computed on it; recorded in calibrator metadata)."""
        return {"size": int(self.size), "text": self.text, "draw": self.draw, "pool": self.pool, "seed": self.seed,
                "stream": list(self.stream)}

    @classmethod
    def from_key(cls, key: Mapping[str, Any]) -> ReferenceSpec:
        """The spec a :meth:`key` came from (a calibrator's ``metadata_["reference_spec"]``)."""
        return cls(size=int(key["size"]), text=key.get("text"), draw=str(key.get("draw", "fixed")),
                   pool=key.get("pool"), seed=key.get("seed"), stream=tuple(key.get("stream") or ()))

    def describe(self) -> str:
        src = f"the words of {self.text} by frequency" if self.text else "reference vectors"
        if self.draw == "fixed":
            return f"fixed: the first {self.size} {src}"
        how = {"subset": "without replacement", "bootstrap": "with replacement"}.get(self.draw)
        where = f"drawn {how} from the first {self.pool or self.size}" if how else "re-sampled by the encoder"
        return f"{self.draw}: {self.size} {src} {where} (seed {self.seed}, stream {'/'.join(self.stream)})"


def reference_kwargs(spec: ReferenceSpec) -> dict[str, Any]:
    """Keyword arguments of ``model.reference_vectors`` for ``spec``'s source."""
    return {"text": spec.text} if spec.text else {}


def reference_sample(model: Any, spec: ReferenceSpec, pool: tuple[np.ndarray, str] | None = None
                     ) -> tuple[np.ndarray, str]:
    """The reference vectors ``spec`` names, as float64 rows, and how they were drawn.

    ``pool``: the fixed sample of size ``spec.pool`` (and its description), when
    the caller holds it already (a subset or bootstrap draw indexes into it).

    Raises
    ------
    ConfigError
        ``draw="encoder"`` on a model that cannot re-sample its reference (static vectors).
    """
    from .._random import stream

    kw = reference_kwargs(spec)
    if spec.draw == "fixed":
        vecs, desc = model.reference_vectors(spec.size, **kw)
        return np.asarray(vecs, dtype=np.float64), desc
    seed, _ = stream(spec.seed, *spec.stream)
    if spec.draw == "encoder":
        from .._types import name_of, streams_reference

        if not streams_reference(model):
            raise ConfigError(f"draw 'encoder' re-samples reference sentences: {name_of(model, str(model))!r} "
                              "has none (static vectors: use 'bootstrap' or 'subset')")
        vecs, desc = model.reference_vectors(spec.size, **kw, seed=seed)
        return np.asarray(vecs, dtype=np.float64), f"{desc}; re-sampled with seed {seed}"
    rows, desc = pool if pool is not None else model.reference_vectors(spec.pool or spec.size, **kw)
    rows = np.asarray(rows, dtype=np.float64)
    g = np.random.default_rng(seed)
    m = rows.shape[0]
    idx = np.asarray(g.integers(0, m, size=m)) if spec.draw == "bootstrap" else g.permutation(m)
    drawn = rows[idx[:spec.size]]
    return drawn, drawn_description(spec, len(drawn), m, desc)


def drawn_description(spec: ReferenceSpec, n_drawn: int, n_pool: int, pool_description: str) -> str:
    """How a subset or bootstrap sample was drawn, with the sizes it really has: ``n_drawn`` rows of a pool of
    ``n_pool`` (a small vocabulary gives fewer than the spec asks; ``--reference-size auto`` uses its first rows).

    >>> drawn_description(ReferenceSpec(100, draw="subset", pool=100, seed=0, stream=("s",)), 25, 100, "top 100")
    'subset: 25 reference vectors drawn without replacement from the first 100 (seed 0, stream s); pool: top 100'
    """
    shown = replace(spec, size=int(n_drawn), pool=min(int(n_pool), spec.pool or spec.size))
    return f"{shown.describe()}; pool: {pool_description}"
