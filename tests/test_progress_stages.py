"""Progress per stage: log-line cadence on a fake clock, ETA arithmetic, the on/off rule, --quiet.

Every time here comes from a hand-driven clock (no sleeps, no timing luck);
expected lines and ETAs are worked out by hand from the documented rule:
a log line when at least ``interval`` seconds passed since the last one (or
the stage's start), or when the longest of the last 32 steps, taken once more,
would pass it (strictly; tests/test_refpass_speed.py), a final line at close;
ETA = mean computed step time x steps left.
"""

from __future__ import annotations

import io
import re
import sys

import pytest

import isoeat._progress as P
from isoeat.cli import main


class Clock:
    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _lines(buf: io.StringIO) -> list[str]:
    return buf.getvalue().splitlines()


def test_log_lines_at_most_one_per_interval_and_a_final_line():
    clock, buf = Clock(), io.StringIO()
    bar = P.Progress(100, "log", buf, prefix="isoeat", clock=clock, interval=10.0)
    bar.label = "reference (word)"
    for t in range(1, 36):  # one step a second for 35 s
        clock.t = float(t)
        bar.update(1)
    # by hand: lines at t = 10, 20, 30 (each >= 10 s after the previous), none in between
    periodic = _lines(buf)
    assert len(periodic) == 3
    assert [re.search(r"elapsed (\S+)", x).group(1) for x in periodic] == ["0:10", "0:20", "0:30"]
    assert periodic[0].startswith("isoeat: [10/100]  10%")
    assert "\r" not in buf.getvalue()  # plain lines for log files, never a rewritten bar
    clock.t = 35.0
    bar.close()
    final = _lines(buf)[-1]
    # 35 of 100 steps: the stage ended early, and says so with its count and time
    assert final == "isoeat: [35/100]  35%  stopped after 0:35  reference (word)"
    bar.close()  # closing twice writes nothing more
    assert len(_lines(buf)) == 4


def test_log_line_boundary_exactly_at_the_interval():
    clock, buf = Clock(), io.StringIO()
    bar = P.Progress(4, "log", buf, clock=clock, interval=10.0)
    clock.t = 5.0
    bar.update(1, label="a")
    assert buf.getvalue() == ""  # 5 s, and a next step of 5 s would make 10, not over 10: nothing yet
    clock.t = 10.0
    bar.update(1, label="b")
    assert len(_lines(buf)) == 1  # at 10 s exactly: the first line
    clock.t = 15.0
    bar.update(1, label="c")
    assert len(_lines(buf)) == 1  # 5 s after it, 5 + 5 = 10: still one
    clock.t = 15.001
    bar.update(1, label="c")
    assert len(_lines(buf)) == 1  # the last step: no periodic line, the final one follows
    clock.t = 20.0
    bar = P.Progress(3, "log", buf, clock=clock, interval=10.0)
    for t in (25.0, 25.001):  # 5.001 s after the start, with a step of 5 s seen: 10.001 > 10, a line now
        clock.t = t
        bar.update(1, label="d")
    assert len(_lines(buf)) == 2
    clock.t = 30.0
    bar.update(1, label="d")
    bar.close()
    assert _lines(buf)[-1] == "isoeat run: [3/3] 100%  done in 0:10  d"


def test_a_short_stage_nobody_asked_to_see_prints_nothing_in_a_log(monkeypatch):
    """Auto mode (stderr not a terminal): silent below LOG_INTERVAL, a final line at or above it."""
    monkeypatch.delenv("ISOEAT_PROGRESS", raising=False)
    err = io.StringIO()  # not a terminal
    monkeypatch.setattr(sys, "stderr", err)
    for seconds, shown in ((P.LOG_INTERVAL - 0.5, False), (P.LOG_INTERVAL, True)):
        clock = Clock()
        with P.progress_bar(4, "cells", clock=clock, stream=err) as bar:
            clock.t = seconds
            bar.update(4)
        assert ("[4/4] 100%  done in" in err.getvalue()) is shown, seconds


def test_eta_is_measured_throughput_times_steps_left():
    clock, buf = Clock(100.0), io.StringIO()
    bar = P.Progress(10, True, buf, prefix="t", clock=clock)
    assert bar.eta() != bar.eta()  # NaN: nothing measured yet
    bar.advance("reused", n=4)  # reused: done, but no time measured
    assert bar.eta() != bar.eta()
    clock.t = 130.0
    bar.update(2)  # 2 steps in 30 s: 15 s each; 10 - 6 = 4 left -> 60 s
    assert bar.eta() == pytest.approx(60.0)
    line = buf.getvalue().rsplit("\r", 1)[-1]
    assert "ETA 1:00" in line and "15.0 s each" in line
    clock.t = 133.0
    bar.update(3)  # 5 steps in 33 s = 6.6 s each; 1 left -> 6.6 s
    assert bar.eta() == pytest.approx(6.6)
    clock.t = 134.0
    bar.update(1)
    assert bar.eta() == 0.0 and "ETA 0:00" in buf.getvalue().rsplit("\r", 1)[-1]


def test_throughput_reads_as_steps_per_second_when_fast():
    clock, buf = Clock(), io.StringIO()
    bar = P.Progress(10_000, True, buf, prefix="t", clock=clock)
    clock.t = 4.0
    bar.update(1_024)  # 1024 / 4 = 256 per second; 8976 left at 3.90625 ms -> 35.06 s
    line = buf.getvalue().rsplit("\r", 1)[-1]
    assert "[1,024/10,000]" in line and "256.0/s" in line and "ETA 0:35" in line


@pytest.mark.parametrize("env, tty, flag, expected", [
    (None, True, None, "bar"),
    (None, False, None, "log"),
    ("auto", False, None, "log"),
    ("0", True, None, None),
    ("off", False, None, None),
    ("1", False, None, "log"),  # on: a log for a log file
    ("1", True, None, "bar"),
    ("log", True, None, "log"),
    ("bar", False, None, "bar"),
    ("0", False, True, "log"),  # an explicit flag beats the variable
    ("1", True, False, None),
])
def test_mode_from_flag_environment_and_terminal(monkeypatch, env, tty, flag, expected):
    if env is None:
        monkeypatch.delenv("ISOEAT_PROGRESS", raising=False)
    else:
        monkeypatch.setenv("ISOEAT_PROGRESS", env)
    stream = io.StringIO()
    stream.isatty = lambda: tty  # type: ignore[method-assign]
    monkeypatch.setattr(sys, "stderr", stream)
    assert P.progress_mode(flag) == expected


def test_quiet_beats_everything(monkeypatch):
    monkeypatch.setenv("ISOEAT_PROGRESS", "bar")
    old = P.set_quiet(True)
    try:
        assert P.progress_mode(True) is None and P.terminal_progress() is None
        buf = io.StringIO()
        with P.progress_bar(3, "x", stream=buf) as bar:
            bar.update(3)
        assert buf.getvalue() == ""
    finally:
        P.set_quiet(old)
    assert P.progress_mode(None) == "bar"


def test_terminal_progress_callback_logs_one_stage(monkeypatch):
    monkeypatch.setenv("ISOEAT_PROGRESS", "log")
    clock, buf = Clock(), io.StringIO()
    cb = P.terminal_progress("isoeat sensitivity", clock=clock, stream=buf)
    for done in range(1, 5):
        clock.t = 6.0 * done  # 6 s a step: 6 + 6 > 10, a line after every step; at 24 s only the final line
        cb(done, 4, f"repeat {done}")
    lines = _lines(buf)
    assert lines[1].startswith("isoeat sensitivity: [2/4]  50%  elapsed 0:12  ETA 0:12")
    assert lines[-1] == "isoeat sensitivity: [4/4] 100%  done in 0:24  repeat 4"
    assert len(lines) == 4


def _run_stderr(capsys, monkeypatch, argv):
    monkeypatch.setenv("ISOEAT_PROGRESS", "log")  # every stage's final line, even a short one
    assert main(argv) == 0
    return capsys.readouterr().err


@pytest.mark.parametrize("where", ["global", "command"])
def test_quiet_silences_a_run(capsys, monkeypatch, tmp_path, where):
    args = ["run", "--tests", "W6", "--reference-size", "2000", "--permutations", "200", "--method", "monte-carlo"]
    err = _run_stderr(capsys, monkeypatch, args)
    assert re.search(r"isoeat run: \[(\d+)/\1\] 100%  done in \d+:\d\d", err), err  # without --quiet: shown
    quiet = ["--quiet", *args] if where == "global" else [*args, "--quiet"]
    err = _run_stderr(capsys, monkeypatch, quiet)
    assert "isoeat run: [" not in err, err
    assert not P.is_quiet()  # the command's --quiet ends with the command
