"""The fonts of the per-test heatmaps and the widths of their texts: one home for the metrics.

DejaVu Sans (matplotlib's default font: the PNG drawn by Pillow and every
matplotlib figure) and Helvetica (the direct PDF: one of PDF's 14 standard
fonts, its metrics in matplotlib's data folder). :func:`text_in` measures a
text as the wider of the two, so that the layout of
:mod:`~isoeat.reporting.heatmap_plan` holds whichever renderer draws it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["font_files", "helvetica_widths", "text_in", "label_in", "EST_EM"]


@cache
def font_files() -> tuple[Path, Path] | None:
    """DejaVu Sans (PNG) and Helvetica's metrics (PDF) from matplotlib's data folder, or None."""
    try:
        import matplotlib
    except ImportError:
        return None
    root = Path(matplotlib.get_data_path()) / "fonts"
    ttf, afm = root / "ttf" / "DejaVuSans.ttf", root / "pdfcorefonts" / "Helvetica.afm"
    return (ttf, afm) if ttf.is_file() and afm.is_file() else None


#: Names of printable ASCII in PDF's WinAnsiEncoding where they differ from the AFM file's StandardEncoding.
_WINANSI_NAMES = {39: "quotesingle", 96: "grave"}


@cache
def helvetica_widths() -> dict[str, float]:
    """Advance width (per 1 pt of font size) of each printable ASCII character in Helvetica, from its AFM file."""
    files = font_files()
    assert files is not None
    by_code, by_name = {}, {}
    for line in files[1].read_text(encoding="latin-1").splitlines():
        if not line.startswith("C "):
            continue
        fields = dict(f.strip().split(" ", 1) for f in line.split(";") if f.strip())
        by_name[fields["N"]] = int(fields["WX"]) / 1000
        by_code[int(fields["C"])] = fields["N"]
    return {chr(c): by_name[_WINANSI_NAMES.get(c) or by_code[c]] for c in range(32, 127)}


#: The width (em) counted for a character DejaVu Sans lacks, drawn by a fallback font (CJK: 1 em) or as a box
#: (matplotlib measured 1.1 em per character of such a word on a system without CJK fonts).
MISSING_EM = 1.1
#: The estimate of a label character's width (em): a floor, so that a word it fits keeps the layout it had.
EST_EM = 0.62


def text_in(s: str, size_pt: float) -> float:
    """Width of ``s`` at ``size_pt`` in inches: the wider of DejaVu Sans (the PNG and matplotlib's figures) and
    Helvetica (the direct PDF), summed over its characters' advances (a character DejaVu Sans lacks counts
    :data:`MISSING_EM`; no fonts found: :data:`EST_EM` per character)."""
    return sum(_char_em(ch) for ch in s) * size_pt / 72


def label_in(word: str, size_pt: float) -> float:
    """A word label's margin: :func:`text_in`, never less than the estimate of :data:`EST_EM` per character."""
    return max(len(word) * (size_pt * EST_EM / 72), text_in(word, size_pt))


@cache
def _char_em(ch: str) -> float:
    fonts = _fonts()
    if fonts is None:
        return EST_EM
    ft, helvetica = fonts
    code = ord(ch)
    dejavu = ft.load_char(code).linearHoriAdvance / 65536 / 72 if ft.get_char_index(code) else MISSING_EM
    return max(dejavu, helvetica.get(ch, 0.0))


@cache
def _fonts() -> tuple[Any, dict[str, float]] | None:
    """DejaVu Sans at 72 px per em (FreeType, through matplotlib) and Helvetica's widths; None without them."""
    files = font_files()
    if files is None:
        return None
    from matplotlib.ft2font import FT2Font

    ft = FT2Font(str(files[0]))
    ft.set_size(72, 72)
    return ft, helvetica_widths()
