"""A first contextual answer in minutes, never in silence (issue 41 items 7 and 8).

* a slow fake encoder on a fake clock: the tiny sentence-transformers model of
  tests/test_sentence.py, each forward pass advancing a hand-driven clock by a
  time proportional to its padded tokens (so the length-sorted batches differ
  in cost, as real ones do). Its reference pass must never leave stderr silent
  for more than ``LOG_INTERVAL`` (10 s) of that clock, and every ETA printed
  after the first minute must lie within 3x of the time the pass really had
  left (read off the same clock when the pass ended);
* before a long pass, one line states its size, its estimated time and the two
  ways to a shorter first answer (``--reference-size``, ``--calibrator``), both
  options of the command that prints it;
* reference statistics are shared: a second command on the same model and
  corpus (``weat`` then ``run``, ``anisotropy``; ``seat`` then ``ceat``) asks the
  model's statistics pass for no chunk at all.

The speed of the pass against a bare encode is measured by ``benchmarks/refpass.py``
(its targets are tested in tests/test_benchmark_checks.py).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import isoeat._progress as P  # noqa: E402
from test_layers import _cli_files, bert  # noqa: E402,F401  (fixtures)
from test_sentence import tiny_st  # noqa: E402,F401  (a fixture: the tiny sentence-transformers model)

torch = pytest.importorskip("torch")

#: fake seconds per padded token of a forward pass: ~0.4-1.4 s per batch of 8 sentences of the corpus below
SECONDS_PER_TOKEN = 0.01
#: lengths from about 5 to 45 tokens (none over the tiny model's 60), as corpus sentences of 7 to 75 words spread
SENTENCES = [f"The fox and the dog {'and more ' * (k % 10)}slept in the garden {k}." for k in range(600)]


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _slow(model, clock):
    """Every forward pass of ``model`` (a loaded SentenceTransformer) advances ``clock`` by its padded tokens'
    fake time."""
    def pre(_module, args):
        features = args[0]
        clock.t += SECONDS_PER_TOKEN * features["input_ids"].numel()

    return model.register_forward_pre_hook(pre)


def _timeline(err: str) -> list[tuple[float, float | None]]:
    """(elapsed, ETA or None) of every progress line, in seconds."""
    def secs(text):
        parts = [int(p) for p in text.split(":")]
        return float(sum(p * 60 ** i for i, p in enumerate(reversed(parts))))

    out = []
    for line in err.splitlines():
        m = re.search(r"(?:elapsed|done in|stopped after) (\d+:\d\d(?::\d\d)?)(?:\s+ETA (\S+))?", line)
        if m and line.startswith("isoeat: ["):
            eta = m.group(2)
            out.append((secs(m.group(1)), secs(eta) if eta and eta != "?" else None))
    return out


@pytest.mark.parametrize("chunk_size", [128, 600])  # 600: one chunk, sorted longest first by sentence-transformers
def test_a_slow_encoder_is_never_silent_over_ten_seconds_and_its_eta_is_honest(tiny_st, tmp_path, monkeypatch,
                                                                                 capsys, chunk_size):
    import isoeat

    monkeypatch.setenv("ISOEAT_PROGRESS", "log")
    clock = Clock()
    enc = isoeat.load_model(f"st:{tiny_st}", corpus=SENTENCES, use_cache=False, device="cpu", batch_size=8,
                            chunk_size=chunk_size)
    enc.clock = clock
    enc._load()
    _slow(enc._model, clock)
    t0 = clock.t
    stats, _ = enc.reference_statistics(len(SENTENCES))
    total = clock.t - t0
    err = capsys.readouterr().err
    line = _timeline(err)
    assert stats.n == len(SENTENCES) and total > 120, total  # a pass of minutes on the fake clock
    assert line and line[-1][0] == pytest.approx(total, abs=1)  # the final line: the whole pass
    stamps = [0.0] + [t for t, _ in line]
    gaps = np.diff(stamps)
    # never silent for more than LOG_INTERVAL: the start, every line, the end (lines carry whole seconds: +1)
    assert gaps.max() <= P.LOG_INTERVAL + 1, (gaps.max(), err)
    late = [(t, eta) for t, eta in line[:-1] if t >= 60]
    assert late, err
    for t, eta in late:  # after the first minute: within 3x of the time really left
        left = total - t
        assert eta is not None and left / 3 <= eta <= 3 * left, (t, eta, left)
    # the announcement, from the first batches (the longest: sentence-transformers sorts them first), within 1.25x
    # (the bar is weighed by characters; counted in sentences, the 600-sentence chunk is announced at 1.45x)
    notes = [x for x in err.splitlines() if "reference sentences of corpus" in x]
    assert len(notes) == 1, err
    about = _timeline("isoeat: [0/0] elapsed " + re.search(r"about (\S+) on this machine", notes[0]).group(1))
    assert total / 1.25 <= about[0][0] <= 1.25 * total, (about, total)


def test_progress_log_lines_come_before_the_next_step_would_pass_the_interval():
    """The log form's rule: a line when ``interval`` seconds passed since the last one, or when the longest of the
    last ``RECENT_STEPS`` steps, taken once more, would pass it (strictly): so no silence over ``interval`` while
    steps are no longer than those. Boundaries by hand."""
    import io

    clock, buf = Clock(), io.StringIO()
    bar = P.Progress(100, "log", buf, clock=clock, interval=10.0)
    start = clock.t
    for t in (3.0, 6.0, 7.0):  # steps of 3, 3, 1: at 7, 7 + 3 = 10 is not over 10 -> no line
        clock.t = start + t
        bar.update(1)
    assert buf.getvalue() == ""
    clock.t = start + 7.5  # 7.5 + 3 > 10: a line now, before the next step could make the gap 10.5 s
    bar.update(1)
    assert len(buf.getvalue().splitlines()) == 1
    clock.t = start + 16.5  # 9 s after it; 9 + 9 > 10: a line
    bar.update(1)
    assert len(buf.getvalue().splitlines()) == 2


def _seat_cli(tiny_st, tmp_path, clock, monkeypatch, size):
    from isoeat.backends import _contextual
    from isoeat.backends.sentence import SentenceEncoder
    from isoeat.cli import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES) + "\n")
    test_file = tmp_path / "tiny.yaml"
    test_file.write_text("id: tiny\nbias_type: custom\nX: [quokka, fox]\nY: [doctor, nurse]\n"
                         "A: [garden, flowers]\nB: [violin, concert]\n")
    load = SentenceEncoder._load

    def slow_load(self):
        fresh = self._model is None
        load(self)
        if fresh:
            _slow(self._model, clock)

    monkeypatch.setattr(SentenceEncoder, "_load", slow_load)
    monkeypatch.setattr(_contextual._ContextualBase, "clock", clock)
    return main(["seat", "--model", f"st:{tiny_st}", "--test", str(test_file), "--corpus", str(corpus),
                 "--device", "cpu", "--batch-size", "8", "--reference-size", str(size), "--cache-dir",
                 str(tmp_path / "cache"), "--permutations", "100", "--seed", "0"])


def test_a_long_reference_pass_is_announced_in_one_line_with_its_size_time_and_ways_to_shorten_it(
        tiny_st, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ISOEAT_PROGRESS", "auto")  # not a terminal: the announcement still comes
    clock = Clock()
    assert _seat_cli(tiny_st, tmp_path, clock, monkeypatch, len(SENTENCES)) == 0
    err = capsys.readouterr().err
    notes = [x for x in err.splitlines() if "reference sentences of" in x]
    assert len(notes) == 1, err
    note = notes[0]
    assert note.startswith(f"isoeat: fitting zca on {len(SENTENCES):,} reference sentences of corpus"), note
    m = re.search(r"about (\d+:\d\d) on this machine", note)
    assert m, note
    assert "--reference-size" in note and "--calibrator FILE" in note
    suggested = int(re.search(r"--reference-size (\d+)", note).group(1))
    assert 0 < suggested < len(SENTENCES)
    from isoeat.cli import build_parser  # both options exist in the command that printed them

    helptext = build_parser().parse_args(["seat", "--model", "x", "--test", "W6"])._parser.format_help()
    assert "--reference-size" in helptext and "--calibrator FILE" in helptext


def test_a_short_reference_pass_is_not_announced(tiny_st, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ISOEAT_PROGRESS", "auto")
    clock = Clock()
    assert _seat_cli(tiny_st, tmp_path, clock, monkeypatch, 40) == 0  # well under a minute of fake time
    assert "reference sentences of" not in capsys.readouterr().err


def test_the_announcement_boundary_is_one_minute():
    """``Progress.estimate``: the line comes when the estimated whole step (time so far + ETA) reaches
    ``LONG_STEP`` (60 s), not below; it is written once."""
    import io

    for per_step, shown in ((5.9, False), (6.0, True)):  # 10 steps: 59 s and 60 s in all
        clock, buf = Clock(), io.StringIO()
        bar = P.Progress(10, "log", buf, clock=clock, interval=1e9)
        bar.announce = lambda seconds: f"long: {seconds:.0f}"
        for _ in range(10):
            clock.t += per_step
            bar.update(1)
        lines = [x for x in buf.getvalue().splitlines() if x.startswith("long")]
        assert len(lines) == (1 if shown else 0), (per_step, lines)


COMMAND_PAIRS = [("weat", "run"), ("weat", "anisotropy"), ("run", "weat"), ("seat", "ceat")]


@pytest.mark.parametrize("first,second", COMMAND_PAIRS)
def test_a_second_command_reuses_the_reference_statistics(first, second, bert, tmp_path, monkeypatch, capsys):
    from isoeat.backends.transformer import TransformerEncoder
    from isoeat.cli import main

    asked: list[int] = []
    orig = TransformerEncoder._statistics_pass

    def counted(self, chunks, unit, **kw):
        asked.append(len(chunks))
        return orig(self, chunks, unit, **kw)

    monkeypatch.setattr(TransformerEncoder, "_statistics_pass", counted)
    corpus_file, test_file = _cli_files(tmp_path)
    common = ["--model", f"hf:{bert}", "--corpus", str(corpus_file), "--device", "cpu", "--cache-dir",
              str(tmp_path / "cache"), "--reference-size", "40"]
    extra = {"weat": ["--test", str(test_file), "--permutations", "100"],
             "run": ["--tests", str(test_file), "--permutations", "100"],
             "anisotropy": [], "seat": ["--test", str(test_file), "--permutations", "100"],
             "ceat": ["--test", str(test_file), "--draws", "5"]}
    assert main([first, *common, *extra[first]]) == 0, capsys.readouterr().err
    assert sum(asked) > 0  # the first command computed them
    asked.clear()
    assert main([second, *common, *extra[second]]) == 0, capsys.readouterr().err
    assert sum(asked) == 0, asked  # the second read every chunk's statistics from the cache


def test_a_weighed_eta_is_time_per_unit_of_work_times_work_left():
    """By hand: 100 work units in 10 steps; 2 steps of 60 units in all took 12 s (0.2 s a unit); 3 steps of 30 units
    read from a cache (done, not timed): 100 - 60 - 30 = 10 units left -> 2 s. Counted in steps it would be
    12 s / 2 x 5 left = 30 s."""
    import io

    clock = Clock()
    bar = P.Progress(10, "log", io.StringIO(), clock=clock)
    bar.weigh(100)
    bar.skip(3, work=30)
    clock.t += 12.0
    bar.update(2, work=60)
    assert bar.eta() == pytest.approx(2.0)
    assert bar.rate() == pytest.approx(60 / 12 / (100 / 10))  # steps per second at the stage's mean step: 0.5
    clock.t += 1.0
    bar.update(1)  # no work given: the stage's mean step, 10 units; 0 left
    assert bar.eta() == pytest.approx(0.0)


def test_a_slow_first_step_does_not_make_the_log_print_every_step():
    """A first step of 20 s (a model warming up), then steps of 1 s: after ``RECENT_STEPS`` of them the 20 s no
    longer counts, and lines come when 9 s + 1 s would pass 10 s, i.e. at 10 s apart (by hand), not once a step."""
    import io

    clock, buf = Clock(), io.StringIO()
    bar = P.Progress(1000, "log", buf, clock=clock, interval=10.0)
    start = clock.t
    clock.t += 20.0
    bar.update(1)  # 20 s: a line (20 >= 10)
    for _ in range(200):
        clock.t += 1.0
        bar.update(1)
    lines = buf.getvalue().splitlines()
    # while the 20 s step is among the last 32 (steps 1..32: t = 20 ... 51 s): a line at every step, 32 lines;
    # then one when 10 s have passed since the last (t = 61, 71, ..., 211): 16 more
    assert len(lines) == 32 + 16, len(lines)
    assert "elapsed 3:31" in lines[-1] and clock.t - start == 220.0  # the last at t = 211 s


@pytest.mark.parametrize("command, expected", [
    ("seat", "--reference-size 900 for a smaller (marked) protocol, or --calibrator FILE to reuse a saved one"),
    ("whiten", "--reference-size 900 for a smaller (marked) protocol"),  # it has no --calibrator: not named
    ("reproduce", "the encoder's reference statistics are cached: a rerun reads them"),  # neither option
])
def test_the_announcement_names_only_options_of_the_command_that_prints_it(command, expected):
    from isoeat._progress import pass_advice, set_pass_advice
    from isoeat.cli import _pass_advice, build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    old = set_pass_advice(_pass_advice(sub))
    try:
        advice = pass_advice(900)
    finally:
        set_pass_advice(old)
    assert advice.startswith(expected), advice
    assert ("--calibrator" in advice) == ("--calibrator" in sub._option_string_actions)
