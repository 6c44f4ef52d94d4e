"""Encoders: turn words into vectors (static vectors, ``hf:`` contextual models, ``st:`` sentence encoders).

Every name is loaded on first access (PEP 562), so that importing a light submodule (``backends._precision``,
whose constants the option table reads) loads no numpy: ``isoeat COMMAND --help`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - for type checkers and readers
    from ._export import export_vectors
    from ._registry import FORMAT_PREFIXES, NAMED_MODELS, available_models, load_model
    from .base import Encoder, Lookup
    from .static import StaticVectors

__all__ = [
    "Encoder",
    "Lookup",
    "StaticVectors",
    "load_model",
    "export_vectors",
    "available_models",
    "NAMED_MODELS",
    "FORMAT_PREFIXES",
]

_HOME = {
    "export_vectors": "._export",
    "FORMAT_PREFIXES": "._registry",
    "NAMED_MODELS": "._registry",
    "available_models": "._registry",
    "load_model": "._registry",
    "Encoder": ".base",
    "Lookup": ".base",
    "StaticVectors": ".static",
}


def __getattr__(name: str) -> Any:  # PEP 562
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
