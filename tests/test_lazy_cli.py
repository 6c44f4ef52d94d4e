"""A lazy command line (issue 41, item 3): ``isoeat --version`` and ``isoeat --help`` import no numpy and no
command module; a command imports and builds only the module that holds it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import isoeat
from isoeat.cli import _command_in, _command_modules, build_parser
from isoeat.commands import COMMANDS

SRC = str(Path(isoeat.__file__).parent.parent)


_PROBE = """
import sys
from isoeat.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stderr.write("MODULES " + " ".join(sorted(sys.modules)) + "\\n")
"""


def _imported(*argv: str) -> tuple[set[str], str]:
    """The modules ``isoeat ARGV`` imports, and its stdout: ``python -X importtime`` names every module an
    ``import`` statement loads (numpy's included); ``sys.modules`` at the end holds those loaded by
    ``importlib`` too (the command modules)."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", _PROBE, *argv], capture_output=True,
                          text=True, env=env, timeout=120)
    lines = proc.stderr.splitlines()
    timed = {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}
    loaded = next(line for line in lines if line.startswith("MODULES ")).split()[1:]
    assert "isoeat._version" in timed and "isoeat.cli" in loaded  # both lists were read
    return timed | set(loaded), proc.stdout


def test_the_version_line_as_a_module_run_imports_no_numpy() -> None:
    # issue 41's own check: `python -X importtime -m isoeat.cli --version` names no numpy module
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "isoeat.cli", "--version"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("isoeat ")
    assert "isoeat._version" in proc.stderr
    assert "numpy" not in proc.stderr


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ("-q", "--help"), ()])
def test_version_and_help_import_no_numpy_and_no_command(argv: tuple[str, ...]) -> None:
    names, out = _imported(*argv)
    assert not {n for n in names if n == "numpy" or n.startswith("numpy.")}
    assert not {n for n in names if n.startswith("isoeat.commands.")}
    assert out.strip()  # it printed the version or the help


def test_a_command_imports_only_its_own_module() -> None:
    names, out = _imported("weat", "--help")
    assert "--test" in out
    # no other command's module (a command's private helpers, ``commands._name``, are its own)
    assert {n for n in names if n.startswith("isoeat.commands.") and not n.startswith("isoeat.commands._")} \
        == {"isoeat.commands.core"}


def test_the_help_lines_are_the_full_parsers() -> None:
    # the bare entries of `isoeat --help` say what the built commands say, in the same order
    def listing(parser):  # noqa: ANN001, ANN202
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_Commands")
        return [(a.dest, a.help) for a in sub._choices_actions]

    full, bare = listing(build_parser()), listing(build_parser(""))
    assert full == bare
    assert [name for name, _ in full] == list(COMMANDS)
    assert build_parser().format_help() == build_parser("").format_help()


def test_every_command_is_in_the_module_the_table_names() -> None:
    for mod in _command_modules():
        for name in mod.COMMANDS:
            assert mod.__name__ == f"isoeat.commands.{COMMANDS[name][0]}", name
    assert {n for mod in _command_modules() for n in mod.COMMANDS} == set(COMMANDS)


@pytest.mark.parametrize(("argv", "built"), [
    ([], ""), (["--version"], ""), (["-h"], ""), (["-q", "--help"], ""),
    (["weat", "--test", "W6"], "weat"), (["-q", "run"], "run"), (["--quiet", "whiten-distributed"], "whiten-distributed"),
    (["bogus"], None), (["--qu", "weat"], None), (["--version", "weat"], None), (["--", "weat"], None),
])
def test_which_parser_is_built(argv: list[str], built: str | None) -> None:
    assert _command_in(argv) == built


def test_an_abbreviated_global_option_still_runs_its_command(capsys: pytest.CaptureFixture[str]) -> None:
    from isoeat.cli import main

    assert main(["--qu", "tests", "--format", "json"]) == 0
    assert '"W6"' in capsys.readouterr().out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_commands_help_imports_no_numpy(command: str) -> None:
    """Issue 41 item 3: ``isoeat COMMAND --help`` builds that command's parser from the option table and its
    module alone, loading none of the numerical stack (numpy, scipy, pandas, torch, matplotlib)."""
    modules, out = _imported(command, "--help")
    assert f"usage: isoeat {command}" in out
    heavy = sorted(m for m in ("numpy", "scipy", "pandas", "torch", "matplotlib") if m in modules)
    assert heavy == [], (command, heavy)
