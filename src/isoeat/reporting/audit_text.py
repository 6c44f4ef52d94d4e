"""The word-list audit as text: ``isoeat weat --audit`` prints it (records in, text out).

:func:`audit_text` takes the :class:`~isoeat.diagnostics.word_audit.WordListAudit` records of one test (raw first,
then the calibrated space) and gives three panels: frequency balance, coherence, and the leave-one-out table (every
word, d and Δd and p per space, and the flags: ``sign`` where d changes sign without the word, ``sig`` where its
significance at alpha changes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .tables import _render, format_d, format_p

__all__ = ["audit_text", "AUDIT_FLAGS"]

#: What the leave-one-out table's flags mean (printed under it).
AUDIT_FLAGS = (
    "flags: sign = d without the word has the opposite sign; sig = significance at alpha "
    "(p < {alpha:g}) changes without the word"
)


def _num(v: float, digits: int = 2) -> str:
    return "-" if not math.isfinite(v) else f"{v:.{digits}f}"


def _frequency(audits: Sequence[Any]) -> list[str]:
    a0 = audits[0]
    if a0.frequency_source.startswith("not measured"):
        return [f"Frequency balance: {a0.frequency_source}"]
    rows = [[r, _num(getattr(a0, f"median_log_rank_{r.lower()}"))] for r in ("X", "Y", "A", "B")]
    out = [
        f"Frequency balance (the same ranks in every space), from the {a0.frequency_source}:",
        _render(["Set", "median ln rank"], rows, align_left=1),
    ]
    ratio = a0.target_rank_ratio
    if math.isfinite(ratio):
        who = "X's" if ratio >= 1 else "Y's"
        times = ratio if ratio >= 1 else 1.0 / ratio
        out.append(
            f"targets: gap Y - X = {_num(a0.target_log_rank_gap)} in ln rank: {who} words about "
            f"{times:.1f}x more frequent (rank ratio; Zipf's law)"
        )
    if math.isfinite(a0.attribute_rank_ratio):
        out.append(
            f"attributes: gap B - A = {_num(a0.attribute_log_rank_gap)} in ln rank (rank ratio "
            f"{a0.attribute_rank_ratio:.2f})"
        )
    rho = ", ".join(f"{a.calibration} {_num(a.rho_score_log_rank)}" for a in audits)
    out.append(f"Spearman rho between a target word's score s(w,A,B) and its ln rank ({a0.n_ranked} words): {rho}")
    return out


def _coherence(audits: Sequence[Any]) -> list[str]:
    rows = [
        [a.calibration] + [_num(getattr(a, f"coherence_{r}"), 3) for r in "xyab"] + [_num(a.baseline_cosine, 3)]
        for a in audits
    ]
    return [
        f"Coherence: mean within-set cosine against random pairs of the model ({audits[0].baseline_source}):",
        _render(["Space", "X", "Y", "A", "B", "random pairs"], rows, align_left=1),
    ]


def _flags(r: Any) -> str:
    return ",".join(f for f, on in (("sign", r.sign_change), ("sig", r.significance_change)) if on)


def _influence(audits: Sequence[Any]) -> list[str]:
    header = ["Set", "Word"]
    for a in audits:
        header += [f"d {a.calibration}", "delta", "p", "flags"]
    rows = []
    for i, r0 in enumerate(audits[0].leave_one_out):
        row = [r0.role, r0.word]
        for a in audits:
            r = a.leave_one_out[i]
            row += [format_d(r.effect_size), format_d(r.delta), format_p(r.p_value), _flags(r) or "."]
        rows.append(row)
    d_full = ", ".join(f"{a.calibration} {format_d(a.effect_size)} (p {format_p(a.p_value)})" for a in audits)
    out = [
        f"Influence: d and p with each word left out (full test: d {d_full}):",
        _render(header, rows, align_left=2),
        AUDIT_FLAGS.format(alpha=audits[0].alpha),
    ]
    methods = sorted({r.p_method for a in audits for r in a.leave_one_out if r.p_method})
    if "monte-carlo" in methods:
        from ..stats.audit import LOO_EXACT_PARTITIONS, LOO_PERMUTATIONS

        out.append(
            f"(left-out p: exact where the test without the word has at most {LOO_EXACT_PARTITIONS:,} partitions, "
            f"else Monte Carlo of at most {LOO_PERMUTATIONS:,} partitions, stopped once clear of alpha: such a p "
            "says on which side of alpha it lies, not how small it is)"
        )
    notes = sorted({f"{r.role}:{r.word}: {r.note}" for a in audits for r in a.leave_one_out if r.note})
    out += notes
    for a in audits:
        top = sorted((r for r in a.leave_one_out if math.isfinite(r.delta)), key=lambda r: -abs(r.delta))[:3]
        if top:
            shown = ", ".join(f"{r.role}:{r.word} {r.delta:+.2f}" for r in top)
            out.append(f"{a.calibration}: largest changes of d (delta) when one word is left out: {shown}")
    for a in audits:
        if not (a.sign_changers or a.significance_changers):
            out.append(f"{a.calibration}: no single word left out changes the sign of d or its significance")
        for what, words in (("the sign of d", a.sign_changers), ("the significance", a.significance_changers)):
            if words:
                out.append(f"{a.calibration}: left out, {', '.join(words)} change{'s' * (len(words) == 1)} {what}")
    return out


def audit_text(audits: Sequence[Any]) -> str:
    """The three panels of one test's audit (raw first, then calibrated), as printed by ``isoeat weat --audit``."""
    a0 = audits[0]
    spaces = " beside ".join(a.calibration for a in audits)
    lines = [f"Word-list audit of {a0.test} on {a0.model} ({spaces})"]
    lines += _frequency(audits)
    lines += _coherence(audits)
    lines += _influence(audits)
    return "\n".join(lines)


def audit_records(audits: Sequence[Any]) -> list[dict[str, Any]]:
    """The CSV rows of ``weat --audit --format csv``: one per left-out word and space."""
    return [rec for a in audits for rec in a.records()]
