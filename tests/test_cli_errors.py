"""Errors reached from the command line speak the command line (issue 33, item 5).

Each case is a mistake a user can make at the prompt whose message comes from the library: the line must name
the option as it is typed (``--duplicates``, ``--samples``, ``--method``, ``--bootstrap``, ``--frame``), hold no
Python parameter spelling (``duplicates='first'``, ``n_samples``, ``exact_budget``), fit in at most two lines
of a terminal, and write a huge count in scientific notation.
"""

from __future__ import annotations

import math
import re

import pytest

from isoeat.cli import main

#: Python spellings a command-line user cannot type
_PYTHON = re.compile(r"\w+='|\bn_samples\b|\bexact_budget\b|\bexact_memory\b|\bn_permutations\b|\bn_reference\b")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli-errors")
    (d / "dup.txt").write_text("the 0.1 0.2\ncat 0.3 0.4\nthe 0.5 0.6\n", encoding="utf-8")
    words = [f"w{i}" for i in range(2060)]
    (d / "big.yaml").write_text("id: big\nbias_type: x\nX: [" + ", ".join(words[:1030]) + "]\nY: ["
                                + ", ".join(words[1030:]) + "]\nA: [a1, a2]\nB: [b1, b2]\n", encoding="utf-8")
    (d / "big.txt").write_text("".join(f"{w} {(i % 7 + 1) / 7:.3f} {(i % 5 + 1) / 5:.3f} {(i % 3 + 1) / 3:.3f}\n"
                                       for i, w in enumerate(words + ["a1", "a2", "b1", "b2"])), encoding="utf-8")
    return d


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1, err
    line = err.strip()
    assert len(line) <= 2 * 160, f"more than two lines: {len(line)} characters"
    assert not _PYTHON.search(line), line
    return line


def test_duplicates_named_as_the_option(files, capsys):
    line = _error(capsys, ["weat", "--test", "W6", "--model", f"glove:{files / 'dup.txt'}", "--calibration", "none"])
    assert "dup.txt:3" in line and "--duplicates first or last" in line


def test_a_sample_size_named_as_the_option(capsys, glove):
    assert "--samples must be an integer >= 2, got 1" in _error(capsys, ["anisotropy", "--samples", "1"])


def test_a_frame_named_as_the_option(capsys, glove):
    line = _error(capsys, ["anisotropy", "--calibration", "none", "--frame", "vocabulary-top:1"])
    assert line.startswith("isoeat: error: --frame vocabulary-top:N")


def test_bootstrap_named_as_the_option(capsys, glove):
    line = _error(capsys, ["weat", "--test", "W6", "--calibration", "none", "--ci-method", "bca", "--bootstrap", "5"])
    assert "--bootstrap must be 0" in line


def test_exact_beyond_budget_says_what_to_type_and_a_short_count(files, capsys):
    line = _error(capsys, ["weat", "--test", str(files / "big.yaml"), "--model", f"glove:{files / 'big.txt'}",
                           "--method", "exact", "--calibration", "none"])
    # C(2060, 1030) from the log-gamma function, independently of the message's formatting
    log10 = (math.lgamma(2061) - 2 * math.lgamma(1031)) / math.log(10)
    want = f"{10 ** (log10 % 1):.2f}e+{int(log10)}"
    assert f"C(2060, 1030) = {want} partitions" in line
    assert "--method monte-carlo" in line and not re.search(r"\d{31}", line)


def test_a_name_the_command_has_no_option_for_is_left_alone():
    import argparse

    from isoeat.cliargs import cli_message

    p = argparse.ArgumentParser(prog="isoeat x")
    p.add_argument("--seed", type=int, default=0, help="seed")
    assert cli_message("seed must be >= 0", p) == "--seed must be >= 0"
    assert cli_message("frobnicate must be >= 0; seed='x'", p) == "frobnicate must be >= 0; --seed x"
    assert cli_message("n = 1" + "2" * 30, p) == "n = 1.22e+30"
    assert cli_message("n = 1" + "2" * 29, p) == "n = 1" + "2" * 29  # 30 digits (a value from a file): as it is


def test_options_a_config_makes_meaningless_are_named_as_typed(capsys, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("models: [glove-6b-50d]\ntests: [W6]\n", encoding="utf-8")
    line = _error(capsys, ["run", str(cfg), "--contexts", "5", "--calibrator", "x.npz"])
    assert "--calibrator, --contexts: not used with a CONFIG file" in line  # not --whitener, --contexts-per-word
