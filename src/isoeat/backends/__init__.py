"""Encoders: turn words into vectors. Static vectors in this version."""

from ._export import export_vectors
from ._registry import FORMAT_PREFIXES, NAMED_MODELS, available_models, load_model
from .base import Encoder, Lookup
from .static import StaticVectors

__all__ = ["Encoder", "Lookup", "StaticVectors", "load_model", "export_vectors", "available_models", "NAMED_MODELS",
           "FORMAT_PREFIXES"]
