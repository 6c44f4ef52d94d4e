"""The one progress reporter: counts, ETA from the steps computed so far, and the on/off rule."""

from __future__ import annotations

import io

import isoeat._progress as P


class _Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_eta_is_mean_computed_step_time_times_steps_left(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(P.time, "perf_counter", clock)
    out = io.StringIO()
    bar = P.Progress(10, True, out, prefix="t")
    bar.advance("reused", n=4)  # reused steps: done, but not in the mean
    clock.t += 30.0
    bar.update(2, label="a")  # 2 steps in 30 s: 15 s each, 4 left -> 60 s
    line = out.getvalue().rsplit("\r", 1)[-1]
    assert line.startswith("t: [6/10]  60%") and "elapsed 0:30" in line and "ETA 1:00" in line
    clock.t += 5.0
    bar.update(1)  # 3 steps in 35 s, 3 left -> 35 s
    assert "ETA 0:35" in out.getvalue().rsplit("\r", 1)[-1]
    bar.close()
    assert out.getvalue().endswith("\n")


def test_disabled_bar_counts_silently():
    out = io.StringIO()
    with P.Progress(3, False, out) as bar:
        bar.update(3)
    assert bar.done == 3 and out.getvalue() == ""


def test_enabled_by_flag_then_environment(monkeypatch):
    monkeypatch.setenv("ISOEAT_PROGRESS", "0")
    assert P.progress_enabled(None) is False and P.progress_enabled(True) is True
    monkeypatch.setenv("ISOEAT_PROGRESS", "1")
    assert P.progress_enabled(None) is True and P.progress_enabled(False) is False
    assert P.terminal_progress() is not None
    monkeypatch.setenv("ISOEAT_PROGRESS", "off")
    assert P.terminal_progress() is None


def test_format_duration_boundaries():
    assert [P.format_duration(s) for s in (0, 59.4, 59.6, 3599, 3600)] == ["0:00", "0:59", "1:00", "59:59", "1:00:00"]
