"""Writing one figure to one file whose suffix names the format (the CEAT and layer figures)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .figures import _check_pixels, _save, check_dpi

__all__ = ["FORMATS", "write_figure_file"]

FORMATS = ("png", "pdf", "svg")


def write_figure_file(build: Callable[[], Any], path: str | Path, *, dpi: int, what: str) -> Path:
    """``build()`` written to ``path`` (``.png``, ``.pdf`` or ``.svg``), its pixel size checked first."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ConfigError(f"{path}: a {what} is written as .png, .pdf or .svg")
    dpi = check_dpi(dpi)
    fig = build()
    _check_pixels(fig, path, dpi)
    path.parent.mkdir(parents=True, exist_ok=True)
    return _save(fig, path.with_suffix(""), [fmt], dpi)[0]
