"""One option table: a long option means one thing in every command (``isoeat.cliopts``).

Every command's parser is built; an option spelled in two commands must agree in destination, type, default,
choices, arity and help text, unless ``cliopts.DEVIATIONS`` lists that command with its reason, and the reason is
printed in that command's --help. Older spellings (hidden from --help) must still parse to the same destination.
"""

from __future__ import annotations

import argparse
import collections

import pytest

from isoeat import cliopts
from isoeat.cli import build_parser

PARSER = build_parser()
COMMANDS = dict(next(a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction)).choices)


def _signature(action: argparse.Action) -> tuple:
    return (type(action).__name__, action.dest, action.type, repr(action.default), action.choices, action.nargs,
            action.const, action.required, action.help, action.metavar)


def _uses(commands: dict[str, argparse.ArgumentParser]) -> dict[str, dict[str, argparse.Action]]:
    """Long option -> command -> its action (visible options only; hidden older spellings apart)."""
    found: dict[str, dict[str, argparse.Action]] = collections.defaultdict(dict)
    for name, p in commands.items():
        for a in p._actions:
            if a.help == argparse.SUPPRESS or isinstance(a, argparse._HelpAction):
                continue
            for flag in a.option_strings:
                if flag.startswith("--"):
                    found[flag][name] = a
    return found


def _differences(commands: dict[str, argparse.ArgumentParser]) -> list[str]:
    """Every long option of two commands that differs outside the table's listed deviations."""
    bad = []
    primary = {f: entry.flags[0] for entry in cliopts.table().values() for f in entry.flags}
    for flag, by_command in _uses(commands).items():
        if len(by_command) < 2 or flag in ("--help", "--quiet"):
            continue
        listed = cliopts.DEVIATIONS.get(primary.get(flag, flag), {})
        plain = {c: _signature(a) for c, a in by_command.items() if c not in listed}
        if len(set(plain.values())) > 1:
            groups = collections.defaultdict(list)
            for c, sig in plain.items():
                groups[sig].append(c)
            bad.append(f"{flag}: " + " vs ".join("/".join(cs) for cs in groups.values()))
        for c, a in by_command.items():
            if c in listed and listed[c].reason not in (a.help or ""):
                bad.append(f"{flag} in {c}: the deviation's reason is not in its --help")
    return bad


def test_one_option_one_meaning() -> None:
    assert not _differences(COMMANDS), "\n".join(_differences(COMMANDS))


def test_the_check_fails_on_a_hand_made_option() -> None:
    # the check is not vacuous: a command declaring --seed itself (another default, or only another type object,
    # or another help text) is caught
    for change in ({"default": 1}, {}, {"help": "seed (default 0)"}):
        a, b = argparse.ArgumentParser(prog="isoeat a"), argparse.ArgumentParser(prog="isoeat b")
        cliopts.add(a, "--seed")
        kw = {**cliopts.spec("--seed", "b"), **change}
        if not change:
            kw["type"] = cliopts.nonneg_int("--seed")  # the same rule, but not the table's option
        b.add_argument("--seed", **kw)
        assert _differences({"a": a, "b": b}), change


def test_every_shared_option_comes_from_the_table() -> None:
    shared = [flag for flag, cs in _uses(COMMANDS).items() if len(cs) > 1 and flag not in ("--help", "--quiet")]
    known = {flag for entry in cliopts.table().values() for flag in entry.flags}
    assert set(shared) <= known, sorted(set(shared) - known)


def test_every_deviation_is_used_and_states_its_reason() -> None:
    uses = _uses(COMMANDS)
    for flag, by_command in cliopts.DEVIATIONS.items():
        for command, dev in by_command.items():
            assert command in uses[flag], f"{flag}: deviation for {command}, which has no such option"
            assert dev.reason and dev.reason in uses[flag][command].help


@pytest.mark.parametrize(("command", "new", "old"), [
    *[(c, n, o) for (c, n), o in cliopts.OLD_SPELLINGS.items()],
    ("weat", "--calibrator", "--whitener"), ("run", "--calibrator", "--whitener"),
])
def test_older_spellings_still_parse_alike(command: str, new: str, old: str) -> None:
    values = {"--eps-relative": ("1e-3", "relative"), "--reference-unit": ("sentence",) * 2,
              "--reference-shards": ("4",) * 2, "--scheduler-timeout": ("5",) * 2}.get(new, ("x.npz",) * 2)
    req = {"weat": ["--test", "W6"], "seat": ["--test", "W6"], "ceat": ["--test", "W6"]}.get(command, [])
    if new == "--test":
        req = []
        values = ("W6", "W6")
    if command == "metric":
        req = ["mac", *req]
    new_args = PARSER.parse_args([command, *req, new, values[0]])
    old_args = PARSER.parse_args([command, *req, old, values[1]])
    dest = next(a.dest for a in COMMANDS[command]._actions if new in a.option_strings)
    if old == "--eps-mode":  # sensitivity's --eps LIST --eps-mode relative is now --eps-relative LIST
        from isoeat.commands.sensitivity import eps_sweep

        old_args = PARSER.parse_args([command, "--eps", "1e-3", old, "relative"])
        assert eps_sweep(new_args) == eps_sweep(old_args) == ("1e-3", "relative")
        return
    assert getattr(new_args, dest) == getattr(old_args, dest)
    assert old not in COMMANDS[command].format_usage().replace("[", " ").split()  # hidden from --help


def test_test_and_tests_alike_everywhere() -> None:
    for name, p in COMMANDS.items():
        flags = {f for a in p._actions for f in a.option_strings}
        if "--test" in flags:
            assert "--tests" in flags, name
            argv = [name, *(["mac"] if name == "metric" else []), "--tests", "W6"]
            assert PARSER.parse_args(argv).test == "W6"


def test_table_constants_match_the_library() -> None:
    from isoeat.experiments.sensitivity import DEFAULT_EPS_GRID, DEFAULT_PERMUTATIONS
    from isoeat.metrics.registry import CI_METHODS

    assert cliopts.METRIC_CI_METHODS == CI_METHODS
    from isoeat.calibration import calibration_names
    from isoeat.experiments.reference import DEFAULT_SHARDS

    assert cliopts.CALIBRATIONS == calibration_names()  # the light copy the option table reads
    assert cliopts.DEFAULT_SHARDS == DEFAULT_SHARDS
    from isoeat.backends._pooling import SENTENCE_POOLINGS

    assert cliopts.SEAT_POOLINGS == SENTENCE_POOLINGS
    assert cliopts.table()["--permutations"].kwargs["default"] == DEFAULT_PERMUTATIONS  # sensitivity too
    assert ",".join(f"{e:g}" for e in DEFAULT_EPS_GRID) in cliopts.DEVIATIONS["--eps"]["sensitivity"].changes["help"]


def test_calibration_means_compared_with_raw_everywhere() -> None:
    """--calibration NAME is the calibration measured beside raw, default zca, wherever it measures."""
    for name in ("weat", "scweat", "seat", "run", "metric", "ceat", "anisotropy", "similarity"):
        a = next(a for a in COMMANDS[name]._actions if a.dest == "calibration")
        assert a.default == "zca" and "beside the raw space" in a.help, name
