"""The report's "Layer profile" section, for a folder written by ``isoeat run --layers --out DIR``.

The anisotropy of the test words' vectors per layer is not in the cells (it
needs the layer's vectors), so the section reads ``tables/layers.csv``
(:data:`PROFILE_COLUMNS`) with the safe line reader,
and checks every row's d raw and calibrated against the folder's own cells
(model ``NAME@L<layer>``): a damaged, hand-edited or stale CSV leaves the
section out with a one-line note, never a traceback and never numbers the
cells do not hold. :func:`write_layer_figure_from` redraws
``figures/layers.png`` from the same checked rows (``isoeat report``);
:func:`layer_section` is the HTML (text escaped, the figure embedded).
"""

from __future__ import annotations

import csv
import html
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._errors import DataFormatError, IsoeatError
from .._names import printable
from ..labels import CHANGE_CLASSES

__all__ = ["PROFILE_COLUMNS", "LAYERS_CSV", "LAYERS_FIGURE", "read_layer_rows", "write_layer_figure_from",
           "is_layer_figure", "LAYER_CAPTION", "layer_section"]

#: Columns of the profile rows (``layers.csv``), in order.
PROFILE_COLUMNS = ("model", "layer", "calibration", "test", "bias_type", "d_raw", "p_raw", "d_calibrated",
                   "p_calibrated", "delta_d", "change", "mean_cosine_raw", "mean_cosine_calibrated", "isoscore_raw",
                   "isoscore_calibrated", "n_words")
#: Where ``isoeat run --layers --out DIR`` writes the profile, relative to DIR.
LAYERS_CSV = Path("tables") / "layers.csv"
#: The profile figure, relative to DIR.
LAYERS_FIGURE = Path("figures") / "layers.png"

#: The caption of the embedded figure.
LAYER_CAPTION = "Layer profile: anisotropy and d per layer (raw solid, calibrated dashed)"

_INT = ("layer", "n_words")
_REAL = ("d_raw", "p_raw", "d_calibrated", "p_calibrated", "delta_d", "mean_cosine_raw", "mean_cosine_calibrated",
         "isoscore_raw", "isoscore_calibrated")
_CHANGES = CHANGE_CLASSES
_MAX_ROWS = 100_000


def _e(x: Any) -> str:
    return html.escape(printable(str(x)))  # control characters and bidi overrides shown as escapes


def _real(text: str) -> float:
    if text in ("", "nan", "NaN"):
        return math.nan
    x = float(text)  # ValueError: reported by the caller
    if math.isinf(x):
        raise ValueError(text)
    return x


def _parse(path: Path) -> list[dict[str, Any]]:
    from .._textio import iter_lines

    lines = iter_lines(path, what="layer profile (CSV)")
    rows: list[dict[str, Any]] = []
    header: list[str] | None = None
    for lineno, line in lines:
        if not line.strip():
            continue
        try:
            fields = next(csv.reader([line]))
        except csv.Error as exc:
            raise DataFormatError(f"{path}:{lineno}: not a CSV line ({exc})") from None
        if header is None:
            header = fields
            missing = [c for c in PROFILE_COLUMNS if c not in header]
            if missing:
                raise DataFormatError(f"{path}:{lineno}: header lacks {', '.join(missing)}")
            continue
        if len(fields) != len(header):
            raise DataFormatError(f"{path}:{lineno}: {len(fields)} fields, the header has {len(header)}")
        raw = dict(zip(header, fields))
        row: dict[str, Any] = {k: raw[k] for k in ("model", "calibration", "test", "bias_type", "change")}
        for k in _INT:
            try:
                row[k] = int(raw[k])
            except ValueError:
                raise DataFormatError(f"{path}:{lineno}: {k} {raw[k]!r} is not a whole number") from None
            if row[k] < 0:
                raise DataFormatError(f"{path}:{lineno}: {k} {row[k]} is negative")
        for k in _REAL:
            try:
                row[k] = _real(raw[k])
            except ValueError:
                raise DataFormatError(f"{path}:{lineno}: {k} {raw[k]!r} is not a finite number") from None
        if row["change"] not in _CHANGES:
            raise DataFormatError(f"{path}:{lineno}: change {row['change']!r} is not one of {', '.join(_CHANGES)}")
        rows.append(row)
        if len(rows) > _MAX_ROWS:
            raise DataFormatError(f"{path}: more than {_MAX_ROWS:,} rows (not a layer profile)")
    if not rows:
        raise DataFormatError(f"{path}: no rows")
    keys = [(r["layer"], r["test"]) for r in rows]
    if len(set(keys)) != len(keys):
        raise DataFormatError(f"{path}: a (layer, test) appears twice")
    if len({(r["model"], r["calibration"]) for r in rows}) != 1:
        raise DataFormatError(f"{path}: rows of more than one model or calibration")
    aniso = ("mean_cosine_raw", "mean_cosine_calibrated", "isoscore_raw", "isoscore_calibrated", "n_words")
    first: dict[int, dict[str, Any]] = {}
    for r in rows:  # each layer's anisotropy is repeated on each of its rows: the same on all
        f = first.setdefault(r["layer"], r)
        if any(not _same(float(r[k]), f[k]) for k in aniso):
            raise DataFormatError(f"{path}: layer {r['layer']}: the anisotropy differs between its rows "
                                  f"(tests {f['test']} and {r['test']})")
    return rows


def _same(a: float, b: Any) -> bool:
    if b is None or (isinstance(b, float) and math.isnan(b)):
        return math.isnan(a)
    return not math.isnan(a) and math.isclose(a, float(b), rel_tol=1e-9, abs_tol=1e-12)


def _check_against_cells(rows: Sequence[dict[str, Any]], res: Any, path: Path) -> None:
    """Every row's d raw and calibrated equal those of the folder's comparison of ``NAME@L<layer>``."""
    comps = {(str(c.get("model")), str(c.get("calibration")), str(c.get("test"))): c
             for c in getattr(res, "comparisons", None) or []}
    for r in rows:
        key = (f"{r['model']}@L{r['layer']}", r["calibration"], r["test"])
        c = comps.get(key)
        if c is None:
            raise DataFormatError(f"{path}: layer {r['layer']}, test {r['test']}: no such cell in this folder "
                                  f"(model {key[0]}, {key[1]}); the CSV is not this folder's")
        for k in ("d_raw", "d_calibrated", "change"):
            if not (r[k] == c.get(k) if k == "change" else _same(r[k], c.get(k))):
                raise DataFormatError(f"{path}: layer {r['layer']}, test {r['test']}: {k} {r[k]!r} differs from the "
                                      f"cells' {c.get(k)!r} (edited or stale; rerun isoeat run --layers)")


def read_layer_rows(res: Any) -> tuple[list[dict[str, Any]] | None, str | None]:
    """``(rows, note)`` of the folder's layer profile: ``(None, None)`` when there is none.

    A file that cannot be read, parsed or matched to the cells gives ``(None, note)``
    (the note is one line). A ``layers.csv`` that links outside the folder is refused
    (:class:`~isoeat.UnsafePathError`), as every file the report reads.
    """
    from .._io import check_inside

    out = Path(res.out)
    path = out / LAYERS_CSV
    if not os.path.lexists(path):
        return None, None
    check_inside(out, path)
    try:
        rows = _parse(path)
        _check_against_cells(rows, res, path)
    except IsoeatError as exc:
        return None, f"{exc}; the layer profile is left out."
    except (OSError, UnicodeError, ValueError) as exc:
        return None, f"{path}: cannot read ({type(exc).__name__}: {exc}); the layer profile is left out."
    return rows, None


def write_layer_figure_from(res: Any, figures_dir: str | Path, *, dpi: int | None = None) -> list[Path]:
    """Redraw ``figures/layers.png`` from the checked rows; ``[]`` when the folder holds no (readable) profile."""
    rows, _ = read_layer_rows(res)
    if not rows:
        return []
    from .layer_figure import write_layer_figure

    return [write_layer_figure(rows, Path(figures_dir) / LAYERS_FIGURE.name, dpi=dpi or 150)]


def is_layer_figure(path: Path, out: Path) -> bool:
    """Whether ``path`` is the folder's layer-profile figure (the section places it, not "Figures")."""
    return Path(os.path.abspath(path)) == Path(os.path.abspath(Path(out) / LAYERS_FIGURE))


def _f(x: Any, fmt: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def layer_section(res: Any, figures: Sequence[str] = ()) -> str:
    """The section's HTML (without its ``<h2>``); ``""`` when the folder holds no layer profile.

    ``figures``: the layer figure as HTML blocks, embedded by ``html.py`` (which escapes and inlines images).
    """
    rows, note = read_layer_rows(res)
    if rows is None:
        return "" if note is None else f"<p class='note bad'>{_e(note)}</p>"
    layers = sorted(dict.fromkeys(r["layer"] for r in rows))
    tests = list(dict.fromkeys(r["test"] for r in rows))
    first: dict = {}
    for r in rows:
        first.setdefault(r["layer"], r)
    r0 = rows[0]
    parts = [f"<p class='note'>{_e(r0['model'])}, raw vs {_e(r0['calibration'])}, every layer from the same forward "
             f"passes (layer 0 = the embedding output; each layer has its own calibrator). Anisotropy of the "
             f"{_e(r0['n_words'])} test words' vectors; d checked against this folder's cells "
             f"(from <code>{_e(LAYERS_CSV.as_posix())}</code>).</p>"]
    body = "".join(
        f"<tr><td>{_e(x)}</td><td>{_f(first[x]['mean_cosine_raw'], '.3f')}</td>"
        f"<td>{_f(first[x]['mean_cosine_calibrated'], '.3f')}</td><td>{_f(first[x]['isoscore_raw'], '.3f')}</td>"
        f"<td>{_f(first[x]['isoscore_calibrated'], '.3f')}</td></tr>" for x in layers)
    parts.append("<h3>Anisotropy per layer</h3><div class='scroll'><table class='layers-anisotropy'><thead>"
                 "<tr><th rowspan='2'>layer</th><th class='group' colspan='2'>mean cosine</th>"
                 "<th class='group' colspan='2'>IsoScore</th></tr><tr><th>raw</th><th>calibrated</th><th>raw</th>"
                 f"<th>calibrated</th></tr></thead><tbody>{body}</tbody></table></div>")
    by = {(r["test"], r["layer"]): r for r in rows}
    head = "".join(f"<th>L{_e(x)}</th>" for x in layers)
    trs = []
    for t in tests:
        cells = []
        for x in layers:
            hit = by.get((t, x))
            if hit is None:
                cells.append("<td>-</td>")
                continue
            mark = "" if hit["change"] == "Stable" else f" <span class='bad' title='{_e(hit['change'])}'>*</span>"
            cells.append(f"<td>{_f(hit['d_raw'], '+.2f')} &rarr; {_f(hit['d_calibrated'], '+.2f')}{mark}</td>")
        trs.append(f"<tr><td class='l'>{_e(t)}</td>{''.join(cells)}</tr>")
    parts.append("<h3>Effect size d, raw &rarr; calibrated</h3><div class='scroll'><table class='layers-d'><thead>"
                 f"<tr><th class='l'>test</th>{head}</tr></thead><tbody>{''.join(trs)}</tbody></table></div>"
                 "<p class='note'>* the change class is not Stable (Disappearing or Emerging; unadjusted p, "
                 f"alpha = {_e(format(float(getattr(res, 'alpha', 0.05)), 'g'))}).</p>")
    parts += list(figures)
    return "\n".join(parts)
