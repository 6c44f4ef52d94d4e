"""The report's "Word-list audit" section, for a folder written by ``isoeat run --audit --out DIR``.

The audit needs the words' vectors, which the cells do not hold, so ``isoeat run --audit`` writes it to
``tables/audit.json`` (:data:`AUDIT_JSON`); this module reads it back (a link out of the folder refused), rebuilds
the :class:`~isoeat.diagnostics.word_audit.WordListAudit` records, checks each one's full d against the folder's
own cells (model, test, space), and renders the text of :func:`~isoeat.reporting.audit_text.audit_text`, one
collapsible block per test. A damaged, hand-edited or stale file leaves the section out with a one-line note,
never a traceback and never numbers the cells do not hold.
"""

from __future__ import annotations

import html
import math
import os
from dataclasses import fields
from pathlib import Path
from typing import Any

from .._errors import DataFormatError, IsoeatError
from .._names import printable

__all__ = ["AUDIT_JSON", "read_audits", "audit_section"]

#: Where ``isoeat run --audit --out DIR`` writes the audit, relative to DIR (and ``audit.csv`` beside it).
AUDIT_JSON = Path("tables") / "audit.json"


def _e(x: Any) -> str:
    return html.escape(printable(str(x)))


def _rebuild(item: Any, path: Path) -> Any:
    from ..diagnostics.word_audit import WordListAudit
    from ..stats.audit import LeaveOneOut

    if not isinstance(item, dict):
        raise DataFormatError(f"{path}: an audit is not a mapping")
    try:  # strict JSON wrote nan as null: read back as nan
        rows = tuple(
            LeaveOneOut(**{f.name: _nan(r[f.name]) for f in fields(LeaveOneOut)}) for r in item["leave_one_out"]
        )
        kw = {f.name: _nan(item[f.name]) for f in fields(WordListAudit) if f.name != "leave_one_out"}
    except (KeyError, TypeError) as exc:
        raise DataFormatError(f"{path}: an audit lacks {exc}") from None
    return WordListAudit(**kw, leave_one_out=rows)


def _nan(v: Any) -> Any:
    return math.nan if v is None else v


def _check_against_cells(audits: list[Any], res: Any, path: Path) -> None:
    comps = {(str(c.get("model")), str(c.get("test"))): c for c in getattr(res, "comparisons", None) or []}
    for a in audits:
        c = comps.get((a.model, a.test))
        if c is None:
            raise DataFormatError(
                f"{path}: {a.model} {a.test}: no such cell in this folder; the audit is not this folder's"
            )
        d = c.get("d_raw") if a.calibration == "none" else c.get("d_calibrated")
        same = (d is None and math.isnan(a.effect_size)) or (
            d is not None and math.isclose(float(d), float(a.effect_size), rel_tol=1e-9, abs_tol=1e-12)
        )
        if not same or (a.calibration != "none" and a.calibration != c.get("calibration")):
            raise DataFormatError(
                f"{path}: {a.test} ({a.calibration}): d {a.effect_size!r} differs from the cells' "
                f"{d!r} (edited or stale; rerun isoeat run --audit)"
            )
        p = c.get("p_raw") if a.calibration == "none" else c.get("p_calibrated")
        bad = "p" if p is not None and not _close(float(p), float(a.p_value)) else _row_disagrees(a)
        if bad:
            raise DataFormatError(
                f"{path}: {a.test} ({a.calibration}): {bad} does not follow from the audit's own numbers and the "
                "folder's cells (edited or stale; rerun isoeat run --audit)"
            )


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _row_disagrees(a: Any) -> str:
    """The first left-out row whose full d and p, delta or flags do not follow from its numbers (``ROLE:word``,
    or ``""``): the flags the section prints are recomputed by the rules of :mod:`isoeat.labels`."""
    from ..labels import is_significant, opposite_signs

    for r in a.leave_one_out:
        full_ok = _close(r.full_effect_size, a.effect_size) and _close(r.full_p_value, a.p_value)
        delta_ok = _close(r.delta, r.effect_size - r.full_effect_size)
        sign = bool(opposite_signs(r.effect_size, r.full_effect_size)) if r.p_method else False
        sig = (is_significant(r.p_value, a.alpha) != is_significant(r.full_p_value, a.alpha)) if r.p_method else False
        if not (full_ok and delta_ok and r.sign_change == sign and r.significance_change == sig and r.alpha == a.alpha):
            return f"the left-out row {r.role}:{printable(str(r.word))}"
    return ""


def read_audits(res: Any) -> tuple[list[Any] | None, str | None]:
    """``(audits, note)`` of the folder: ``(None, None)`` when it holds no audit, ``(None, note)`` when it cannot
    be read or does not match the cells (the note is one line)."""
    import json

    from .._io import check_inside

    out = Path(res.out)
    path = out / AUDIT_JSON
    if not os.path.lexists(path):
        return None, None
    check_inside(out, path)
    try:
        data = json.loads(path.read_text("utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("audits"), list) or not data["audits"]:
            raise DataFormatError(f"{path}: not an audit file (a mapping with a list 'audits')")
        audits = [_rebuild(item, path) for item in data["audits"]]
        _check_against_cells(audits, res, path)
    except IsoeatError as exc:
        return None, f"{exc}; the word-list audit is left out."
    except (OSError, UnicodeError, ValueError) as exc:
        return None, f"{path}: cannot read ({type(exc).__name__}: {exc}); the word-list audit is left out."
    return audits, None


def audit_section(res: Any) -> str:
    """The section's HTML (without its ``<h2>``); ``""`` when the folder holds no audit."""
    from .audit_text import audit_text

    audits, note = read_audits(res)
    if audits is None:
        return "" if note is None else f"<p class='note bad'>{_e(note)}</p>"
    by_test: dict[tuple[str, str], list[Any]] = {}
    for a in audits:
        by_test.setdefault((a.model, a.test), []).append(a)
    parts = [
        "<p class='note'>Why each d is what it is: the frequency balance of the sets, their coherence against "
        "random pairs, and d and p with each word left out (flags: a word whose removal changes the sign of d "
        "or its significance), raw beside calibrated (<code>isoeat run --audit</code>; "
        "<code>tables/audit.csv</code> holds the rows).</p>"
    ]
    for (_, test), group in by_test.items():
        flagged = sorted({w for a in group for w in a.sign_changers + a.significance_changers})
        head = f"{test}: " + (
            f"changed by leaving out {', '.join(flagged)}" if flagged else "no single word changes the call"
        )
        parts.append(f"<details><summary>{_e(head)}</summary><pre>{_e(audit_text(group))}</pre></details>")
    return "\n".join(parts)
