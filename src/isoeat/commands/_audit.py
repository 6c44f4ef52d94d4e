"""``isoeat weat --audit``: the word-list audit of each test, raw beside calibrated (issue 43).

The numbers are :func:`isoeat.diagnostics.word_audit.word_list_audit`'s, on the command's model and calibrator (not
refitted) with its seed and p options, so the audit's full d and p are the table's; the text is
:func:`isoeat.reporting.audit_text.audit_text`.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["run_audit", "check_run_audit", "write_run_audit"]


def run_audit(
    args: argparse.Namespace, model: Any, tests: list[Any], cal: Any, full: dict[str, list[Any]] | None = None
) -> list[list[Any]]:
    """The audits of ``tests``: per test, raw first, then the calibrated space; ``full``: each test's full results
    already computed (by id), not computed again."""
    from .._resources import one_blas_thread
    from .._types import name_of
    from ..stats._bundle import bundled
    from ..stats._certified import bracket_store, set_bracket_store

    if bracket_store() is None:  # the left-out rows kept by content, as 'isoeat run' keeps its slow counts
        from ..backends.cache import BracketStore

        set_bracket_store(BracketStore())
    perm = dict(alternative=args.alternative, method=args.method, n_permutations=args.permutations)
    if args.stop_early:
        perm["sequential_alpha"] = args.alpha
    if getattr(args, "exact_memory", None) is not None:
        perm["exact_memory"] = args.exact_memory
    # the left-out rows kept in the store, read as one bundle; many small products: BLAS threads only contend
    with bundled("audit", [name_of(model), [t.id for t in tests]]), one_blas_thread():
        return _audits(args, model, tests, cal, full, perm)


def _audits(
    args: argparse.Namespace, model: Any, tests: list[Any], cal: Any, full: dict[str, list[Any]] | None, perm: dict
) -> list[list[Any]]:
    from ..diagnostics.word_audit import word_list_audit

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
            full=None if full is None else full.get(t.id),
            n_reference=size if isinstance(size := getattr(args, "reference_size", None), int) else 100_000,
            **perm,
        )
        for t in tests
    ]


def check_run_audit(args: argparse.Namespace) -> None:
    """``run --audit``: only for the quick run of one model and one layer, into a folder (before anything runs)."""
    from .._errors import ConfigError

    if not getattr(args, "audit", False):
        return
    clash = [
        o
        for o, on in (
            ("a CONFIG file", bool(args.config)),
            ("--layers", args.layers is not None),
            ("--across-corpora", bool(getattr(args, "across_corpora", None))),
        )
        if on
    ]
    if clash:
        raise ConfigError(
            f"--audit: the quick run of one model only, not with {' or '.join(clash)} ('isoeat weat "
            "--model M --test T --audit' audits any model)"
        )
    if not args.out:
        raise ConfigError(
            "--audit writes tables/audit.json into the run folder: give --out DIR (or print it with "
            "'isoeat weat --test T --audit')"
        )


def _relabel(audit: Any, model: str, cal_label: str | None) -> Any:
    """The audit under the folder's labels: its model label, and the calibrated space's label (the calibrator's own
    name may differ), on the panel and on each left-out row."""
    from dataclasses import replace

    cal = audit.calibration if audit.calibration == "none" or cal_label is None else cal_label
    if (audit.model, audit.calibration) == (model, cal) and all(
        (r.model, r.calibration) == (model, cal) for r in audit.leave_one_out
    ):
        return audit  # the labels already: nothing to replace
    rows = tuple(replace(r, model=model, calibration=cal) for r in audit.leave_one_out)
    return replace(audit, model=model, calibration=cal, leave_one_out=rows)


def write_run_audit(args: argparse.Namespace, model: Any, out: Any, config: Any, comps: list[Any]) -> list[Any]:
    """The audits of the run's tests (raw beside the run's calibrator), written to ``tables/audit.json`` and
    ``tables/audit.csv``; returned for the caller's line."""
    from pathlib import Path

    from .._io import atomic_write_text
    from .._records import records_to_csv, write_json
    from ..calibration import load_calibrator
    from ..experiments._store import slug
    from ..reporting.audit_section import AUDIT_JSON
    from ..reporting.audit_text import audit_records
    from ..wordsets import resolve_tests

    out = Path(out)
    label, cal_label = config.models[0].label, config.calibrations[1].label if len(config.calibrations) > 1 else None
    cal = None if cal_label is None else load_calibrator(out / "calibrators" / slug(label) / f"{slug(cal_label)}.npz")
    full = {r.test: [r.raw, r.calibrated] for c in comps[:1] for r in c.rows}  # the run's own d and p
    audits = run_audit(args, model, resolve_tests(args.test), cal, full)
    flat = [a for pair in audits for a in pair]
    flat = [_relabel(a, label, cal_label) for a in flat]
    write_json(out / AUDIT_JSON, {"model": label, "audits": [a.to_dict() for a in flat]})
    atomic_write_text(out / AUDIT_JSON.with_suffix(".csv"), records_to_csv(audit_records(flat)))
    return flat
