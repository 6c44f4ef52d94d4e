"""Sanity tests W1 and W2 (paper §5.3): a space in which one is not significant is named under the table.

The rule (``experiments.compare.sanity_failures``) is tested at its boundaries with hand-built results:
p exactly alpha fails (significance is p < alpha), just below passes; under a two-sided alternative a
significant negative d fails (the expected direction is X with A); ``alternative="less"`` is skipped;
other tests are never checked.
"""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from isoeat.experiments.compare import Comparison, ComparisonRow, sanity_failures
from isoeat.reporting.tables import comparison_table, sanity_footer


def _res(d, p, alternative="greater"):
    return NS(effect_size=d, p_value=p, alternative=alternative)


@pytest.mark.parametrize("d, p, alternative, fails", [
    (1.0, 0.05, "greater", True),              # p = alpha: not significant
    (1.0, 0.05 - 1e-12, "greater", False),     # just below alpha
    (1.0, 0.001, "two-sided", False),
    (-1.0, 0.001, "two-sided", True),          # significant, but the wrong way
    (0.0, 0.001, "two-sided", True),           # d = 0 is not the expected direction
    (1.0, 0.9, "less", False),                 # another question: not checked
])
def test_rule_at_its_boundaries(d, p, alternative, fails):
    row = NS(test="W2", raw=_res(d, p, alternative), calibrated=_res(1.5, 1e-6))
    assert sanity_failures([row], 0.05) == ([("W2", "raw", d, p)] if fails else [])


def test_only_w1_and_w2_are_checked_in_both_spaces():
    weak = _res(0.1, 0.4)
    rows = [NS(test=t, raw=weak, calibrated=weak) for t in ("W1", "W3", "W2", "W10")]
    assert [(t, s) for t, s, _, _ in sanity_failures(rows, 0.05)] == [
        ("W1", "raw"), ("W1", "calibrated"), ("W2", "raw"), ("W2", "calibrated")]


def test_footer_under_the_comparison_table():
    import numpy as np

    from isoeat.stats.weat import weat_from_vectors

    g = np.random.default_rng(3)
    X, Y, A, B = (g.standard_normal((8, 5)) for _ in range(4))      # random sets: W1's d near 0, p large
    r = weat_from_vectors(X, Y, A, B, rng=0, test="W1")
    assert r.p_value >= 0.05                                            # the premise of the footer
    row = ComparisonRow(test="W1", bias_type="Valence", raw=r, calibrated=r, change="Stable", delta_d=0.0,
                        large_shift=False, sign_reversal=False)
    comp = Comparison(model="m", calibration="zca", alpha=0.05, rows=(row,), calibrator_metadata={})
    foot = [ln for ln in comparison_table(comp).splitlines() if ln.startswith("! sanity")]
    assert len(foot) == 1 and "W1 raw" in foot[0] and "W1 calibrated" in foot[0] and "§5.3" in foot[0]
    ok = NS(test="W1", raw=_res(1.2, 1e-5), calibrated=_res(1.1, 1e-4))
    assert sanity_footer([ok]) == ""


def test_fallback_footer_counts_distinct_words_and_entries():
    """The footer of template-encoded words says how many distinct words and how many test-set entries."""
    import dataclasses

    import numpy as np

    from isoeat.stats.weat import weat_from_vectors

    g = np.random.default_rng(0)
    base = weat_from_vectors(*(g.standard_normal((4, 5)) for _ in range(4)), rng=0, test="W1")
    # "iris" falls back in two tests (two entries, one word); 14 entries in all, 13 distinct words
    words = [f"w{i}" for i in range(12)]
    r1 = dataclasses.replace(base, test="W1", fallback=tuple(f"X:{w}" for w in words[:7]) + ("A:iris",))
    r2 = dataclasses.replace(base, test="W2", fallback=tuple(f"Y:{w}" for w in words[7:]) + ("X:iris",))
    rows = tuple(ComparisonRow(test=r.test, bias_type="", raw=r, calibrated=r, change="Stable", delta_d=0.0,
                               large_shift=False, sign_reversal=False) for r in (r1, r2))
    text = comparison_table(Comparison(model="m", calibration="zca", alpha=0.05, rows=rows, calibrator_metadata={}))
    (line,) = [ln for ln in text.splitlines() if ln.startswith("No corpus context")]
    assert "13 distinct word(s), 14 test-set entries: W1 X:w0;" in line and line.endswith("; ...")
