"""``isoeat COMMAND --help``: every option described with its default, every command with examples.

The expected defaults are read from the parser itself (``action.default``),
never from a list kept here, so a default changed in code but not in its help
text fails this test.
"""

from __future__ import annotations

import argparse
import math
import re
import shlex

import pytest

from isoeat.cli import build_parser

_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,_]*(?:\.\d+)?(?:[eE]-?\d+)?")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


PARSER = build_parser()
COMMANDS = _subparsers(PARSER)


def _options(p: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options --help shows (older spellings, hidden with SUPPRESS, apart)."""
    return [a for a in p._actions if not isinstance(a, argparse._HelpAction) and a.help != argparse.SUPPRESS]


def _shown(p: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The help text as --help prints it (``%(default)s`` expanded, ``%%`` unescaped)."""
    return p._get_formatter()._expand_help(action) if action.help else ""


def _states_value(text: str, default: object) -> bool:
    """Whether ``text`` names ``default``: a number by value (100000, 100,000, 1e-3), text literally."""
    if isinstance(default, bool):  # a --no-X flag (store_false): its default is "on"; "default" must be said
        return True
    if isinstance(default, (list, tuple)):  # a repeatable option given no times
        return not default and re.search(r"default:? none", text) is not None
    if isinstance(default, (int, float)):
        values = [float(m.replace(",", "").replace("_", "")) for m in _NUMBER.findall(text)]
        return any(math.isclose(v, float(default), rel_tol=1e-12) for v in values)
    return str(default) in text


def _examples(p: argparse.ArgumentParser) -> list[str]:
    return [line.strip() for line in (p.epilog or "").splitlines() if line.strip().startswith("isoeat ")]


def test_every_command_is_walked() -> None:
    # the walk below must see the commands README.md documents (a parser that lost them would pass vacuously)
    assert {"tests", "weat", "scweat", "whiten", "run", "seat", "anisotropy", "similarity", "sensitivity",
            "report", "reproduce", "whiten-distributed"} <= set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_has_examples(name: str) -> None:
    assert _examples(COMMANDS[name]), f"isoeat {name} --help: no example in its epilog"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_examples_parse(name: str) -> None:
    """Every example is a command line the parser accepts (options spelled right, values valid)."""
    for line in _examples(COMMANDS[name]):
        argv = shlex.split(line.split(" #")[0])[1:]
        if "--help" in argv:
            continue
        args = PARSER.parse_args(argv)
        assert args.command == argv[0]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_has_help_with_its_default(name: str) -> None:
    p = COMMANDS[name]
    missing, silent = [], []
    for a in _options(p):
        label = "/".join(a.option_strings) or a.dest
        text = _shown(p, a)
        if not text.strip():
            missing.append(label)
            continue
        if a.default in (None, False, argparse.SUPPRESS):
            continue
        if "default" not in text or not _states_value(text, a.default):
            silent.append(f"{label} (default {a.default!r}): {text}")
    assert not missing, f"isoeat {name}: options without help: {missing}"
    assert not silent, f"isoeat {name}: help does not state the default:\n" + "\n".join(silent)


def test_help_prints_examples_as_written() -> None:
    text = COMMANDS["weat"].format_help()
    examples = _examples(COMMANDS["weat"])
    assert examples and all(f"\n  {line}" in text for line in examples)


def test_the_checker_fails_on_a_wrong_default() -> None:
    # the rule above is not vacuous: a help text naming another value, or none, is caught
    assert _states_value("level (default 0.05)", 0.05)
    assert not _states_value("level (default 0.01)", 0.05)
    assert _states_value("permutations (default 100,000)", 100_000)
    assert not _states_value("permutations (default 10000)", 100_000)
    assert _states_value("regulariser (default 1e-3)", 0.001)
    assert not _states_value("format (default json)", "table")
    assert not _states_value("repeatable", [])


@pytest.mark.parametrize("name", ["weat", "scweat", "seat"])
def test_association_commands_put_raw_beside_calibrated(name: str) -> None:
    """weat, scweat and seat measure the raw space beside zca unless --calibration none (README agrees)."""
    p = COMMANDS[name]
    cal = next(a for a in _options(p) if a.dest == "calibration")
    assert cal.default == "zca"
    assert "default zca" in _shown(p, cal) and "none: the raw space only" in _shown(p, cal)
    assert "raw space beside the calibrated" in (p.description or "").replace("raw sentence embeddings beside the "
                                                                              "calibrated", "raw space beside the "
                                                                              "calibrated")


def test_run_defaults_to_zca() -> None:
    p = COMMANDS["run"]
    cal = next(a for a in _options(p) if a.dest == "calibration")
    assert cal.default == "zca" and "default zca" in _shown(p, cal)


def test_seat_reference_size_speaks_of_sentences() -> None:
    p = COMMANDS["seat"]
    text = _shown(p, next(a for a in _options(p) if a.dest == "reference_size"))
    assert "sentences" in text and "frequent words" not in text


def test_benchmark_help_names_no_ticket() -> None:
    """A benchmark's --help (its docstring, description and option help) speaks to users, not to the tracker."""
    import ast
    from pathlib import Path

    ticket = re.compile(r"\bissues?\s*#?\d|#\d|\bticket\b", re.IGNORECASE)
    found = []
    for path in sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        texts = [ast.get_docstring(tree) or ""]
        texts += [kw.value.value for node in ast.walk(tree) if isinstance(node, ast.Call) for kw in node.keywords
                  if kw.arg in ("help", "description", "epilog") and isinstance(kw.value, ast.Constant)]
        found += [f"{path.name}: {m.group(0)!r}" for t in texts for m in ticket.finditer(str(t))]
    assert not found, found


# --------------------------------------------------------------------------- entry points (issue 33, item 4)
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_a_description(name: str) -> None:
    """What the command is for, in a sentence or more (not only the one-line summary of `isoeat --help`)."""
    text = (COMMANDS[name].description or "").strip()
    assert len(text) > 60, f"isoeat {name} --help: no description"


def test_isoeat_help_says_which_command_answers_which_question() -> None:
    text = PARSER.format_help()
    start = text.index("which command answers which question:")
    table = text[start:text.index("positional arguments")]
    named = {w.strip(",") for line in table.splitlines()[1:] for w in line.split()[-2:]}
    assert set(COMMANDS) <= named, sorted(set(COMMANDS) - named)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_prints_no_doubled_percent(name: str) -> None:
    assert "%%" not in COMMANDS[name].format_help()


@pytest.mark.parametrize("name", sorted(n for n in COMMANDS if any(
    "--corpus" in a.option_strings for a in COMMANDS[n]._actions)))
def test_corpus_help_lists_every_named_corpus(name: str) -> None:
    from isoeat.corpora._load import NAMED_CORPORA

    p = COMMANDS[name]
    text = _shown(p, next(a for a in _options(p) if "--corpus" in a.option_strings))
    for corpus in ["auto", *NAMED_CORPORA.names()]:
        assert corpus in text, f"isoeat {name} --corpus: {corpus} not listed"


def test_report_help_takes_every_experiment_folder() -> None:
    text = COMMANDS["report"].format_help()
    assert "'isoeat run CONFIG.yaml --out DIR'" not in text and "(the --out of 'isoeat run CONFIG.yaml')" not in text
    assert "'isoeat run'" in text and "reproduce" in text
