"""``isoeat weat --audit``: the word-list audit of each test, raw beside calibrated (issue 43).

The numbers are :func:`isoeat.diagnostics.word_audit.word_list_audit`'s, on the command's model and calibrator (not
refitted) with its seed and p options, so the audit's full d and p are the table's; the text is
:func:`isoeat.reporting.audit_text.audit_text`.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_audit_option", "run_audit", "AUDIT_HELP"]

AUDIT_HELP = (
    "after the table, the word-list audit of each test, raw beside calibrated: frequency balance of the sets "
    "(median ln frequency rank, the targets' gap, Spearman rho of word score and ln rank), set coherence "
    "against random pairs, and d and p with each word left out, flagging words whose removal changes the "
    "sign or the significance at --alpha; --format json: each record's 'audit'; --format csv: one row per "
    "left-out word instead of the table's rows (default: off)"
)


def add_audit_option(p: argparse.ArgumentParser) -> None:
    """``--audit`` on ``weat``."""
    p.add_argument("--audit", action="store_true", help=AUDIT_HELP)


def run_audit(args: argparse.Namespace, model: Any, tests: list[Any], cal: Any) -> list[list[Any]]:
    """The audits of ``tests``: per test, raw first, then the calibrated space."""
    from ..diagnostics.word_audit import word_list_audit

    perm = dict(alternative=args.alternative, method=args.method, n_permutations=args.permutations)
    if args.stop_early:
        perm["sequential_alpha"] = args.alpha
    if getattr(args, "exact_memory", None) is not None:
        perm["exact_memory"] = args.exact_memory
    return [
        word_list_audit(
            model,
            t,
            calibration=cal,
            rng=args.seed,
            alpha=args.alpha,
            ddof=args.ddof,
            min_coverage=args.min_coverage,
            allow_overlap=bool(getattr(args, "allow_overlap", False)),
            **perm,
        )
        for t in tests
    ]
