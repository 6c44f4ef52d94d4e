"""A SIGTERM at any point of a run's last steps never leaves ``manifest.json`` saying ``running``.

The signal is sent by the process to itself at exact points (a wrapper around
the function that runs there), not after a sleep: the outcome does not depend
on timing. Whatever the point, the manifest's last run says ``finished`` (the
results are complete) or ``interrupted`` (they are not), the lock is released,
and a finished run's results are whole.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from isoeat.cli import main
from isoeat.experiments import runner as R

ARGS = ["run", "--tests", "W6", "--reference-size", "2000", "--permutations", "500", "--no-progress"]


def _sigterm_at(monkeypatch, owner, name: str, call: int | None) -> list[int]:
    """Count the calls of ``owner.name``; send SIGTERM to this process just before the ``call``-th (1-based)."""
    real = getattr(owner, name)
    calls = [0]

    def wrapped(*a, **kw):
        calls[0] += 1
        if calls[0] == call:
            os.kill(os.getpid(), signal.SIGTERM)
        return real(*a, **kw)

    monkeypatch.setattr(owner, name, wrapped)
    return calls


def _last_run(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())["runs"][-1]


#: (function the runner calls, which call counted from the last one of a whole run: 0 = the last one)
POINTS = [("write_manifest", 0), ("write_manifest", 1), ("_build_manifest", 0), ("_cell_states", 0),
          ("_cell_states", 1), ("_cell_states", 2), ("write_results", 0), ("now_iso", 0), ("now_iso", 1),
          ("now_iso", 2), ("now_iso", 3)]


@pytest.fixture(autouse=True)
def _term_handler():
    old = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, old)  # the test never leaves a handler behind


@pytest.mark.parametrize("name, from_end", POINTS, ids=[f"{p[0]}-{p[1]}" for p in POINTS])
def test_a_sigterm_in_the_last_steps_never_leaves_running(tmp_path, glove, monkeypatch, capsys, name, from_end):
    calls = _sigterm_at(monkeypatch, R, name, None)  # a whole run first: how many calls it makes
    assert main([*ARGS, "--out", str(tmp_path / "whole")]) == 0
    monkeypatch.undo()
    target = calls[0] - from_end
    assert target >= 1, f"{name} is called {calls[0]} times"
    out = tmp_path / "o"
    calls = _sigterm_at(monkeypatch, R, name, target)
    code = main([*ARGS, "--out", str(out)])
    assert calls[0] >= target
    run = _last_run(out)
    assert run["status"] in ("finished", "interrupted"), run
    assert not (out / ".isoeat.lock").exists()  # the lock is released
    assert code in (0, 130)
    if code == 130:
        assert "interrupted" in capsys.readouterr().err
    if run["status"] == "finished":
        assert json.loads((out / "results.json").read_text())  # the results are whole
    monkeypatch.undo()
    assert main([*ARGS, "--out", str(out)]) == 0  # and the next run goes on from there
    assert _last_run(out)["status"] == "finished"


def test_a_sigterm_while_replacing_results_keeps_the_folder_whole(tmp_path, glove, monkeypatch, capsys):
    out = tmp_path / "o"
    assert main([*ARGS, "--out", str(out)]) == 0
    before = json.loads((out / "results.json").read_text())
    _sigterm_at(monkeypatch, R, "_swap_in", 1)
    code = main([*ARGS, "--out", str(out), "--overwrite", "all"])
    assert code in (0, 130)
    assert _last_run(out)["status"] in ("finished", "interrupted")
    assert json.loads((out / "results.json").read_text()) == before  # same inputs, same numbers, whole
    assert not list(out.glob(".isoeat-staging-*")) and not list(out.glob(".isoeat-old-*"))
