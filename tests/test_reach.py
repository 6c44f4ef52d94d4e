"""The smallest attainable p of a test, and the footer line that says when p < alpha is out of reach.

Expected floors are counted here from scratch (math.comb over the partitions
of the set sizes, and a brute-force enumeration of every partition), never
read from the library: a 3-vs-3 test has C(6, 3) = 20 partitions, so its
exact p is at least 1/20 = 0.05 and can never be < 0.05; a 3-vs-4 test has
C(7, 3) = 35, so p can reach 1/35 < 0.05.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from isoeat.reporting.tables import comparison_table, reach_footer, weat_table
from isoeat.stats.weat import weat_from_vectors


def _separated(n_x: int, n_y: int, n_a: int = 3, n_b: int = 3, dim: int = 6, seed: int = 1) -> tuple:
    """Targets X near the A direction and Y near B, so the observed partition is the most extreme one."""
    rng = np.random.default_rng(seed)
    a_dir, b_dir = np.eye(dim)[0], np.eye(dim)[1]

    def around(d: np.ndarray, n: int) -> np.ndarray:
        return d + 0.05 * rng.standard_normal((n, dim))

    return around(a_dir, n_x), around(b_dir, n_y), around(a_dir, n_a), around(b_dir, n_b)


def _brute_p(X, Y, A, B, alternative: str) -> float:
    """Exact permutation p by enumerating every X/Y partition (independent of isoeat's counting)."""
    def unit(M):
        return M / np.linalg.norm(M, axis=1, keepdims=True)

    W, Au, Bu = unit(np.vstack([X, Y])), unit(A), unit(B)
    s = (W @ Au.T).mean(axis=1) - (W @ Bu.T).mean(axis=1)
    n, n_x = len(s), len(X)
    t_obs, m = s[:n_x].sum(), n_x * s.mean()
    tol = 1e-12 * np.abs(s).sum()
    hits = 0
    for idx in itertools.combinations(range(n), n_x):
        t = s[list(idx)].sum()
        hits += {"greater": t >= t_obs - tol, "less": t <= t_obs + tol,
                 "two-sided": abs(t - m) >= abs(t_obs - m) - tol}[alternative]
    return hits / math.comb(n, n_x)


@pytest.mark.parametrize("n_x, n_y, alternative, mirror, reachable", [
    (3, 3, "greater", 1, False),    # 1/20 = 0.05: not < 0.05
    (3, 4, "greater", 1, True),     # 1/35
    (3, 3, "two-sided", 2, False),  # the observed partition and its mirror: 2/20
    (3, 4, "two-sided", 1, True),   # unequal sides: no mirror, 1/35
    (4, 4, "two-sided", 2, True),   # 2/70
])
def test_floor_at_the_boundary(n_x, n_y, alternative, mirror, reachable) -> None:
    X, Y, A, B = _separated(n_x, n_y)
    r = weat_from_vectors(X, Y, A, B, alternative=alternative, rng=0)
    floor = mirror / math.comb(n_x + n_y, n_x)
    assert r.p_method == "exact"
    assert r.p_floor == floor
    # the floor is attained by the most extreme data: it is the smallest p, not a bound below it
    assert r.p_value == pytest.approx(_brute_p(X, Y, A, B, alternative), abs=0) == floor
    assert r.can_reach(0.05) is reachable


def test_two_sided_mirror_counts_at_alpha_equal_to_the_floor() -> None:
    # 4 vs 4: one-sided floor 1/70, two-sided 2/70; at alpha = 2/70 only the one-sided test can be significant
    X, Y, A, B = _separated(4, 4)
    alpha = 2 / math.comb(8, 4)
    one = weat_from_vectors(X, Y, A, B, alternative="greater", rng=0)
    two = weat_from_vectors(X, Y, A, B, alternative="two-sided", rng=0)
    assert one.can_reach(alpha) and not two.can_reach(alpha)


def test_monte_carlo_floor_is_one_over_n_plus_one() -> None:
    # 10 vs 10: C(20, 10) = 184,756 partitions; Monte Carlo with N draws cannot go below 1/(N+1)
    X, Y, A, B = _separated(10, 10)
    at_19 = weat_from_vectors(X, Y, A, B, method="monte-carlo", n_permutations=19, rng=0)
    at_20 = weat_from_vectors(X, Y, A, B, method="monte-carlo", n_permutations=20, rng=0)
    assert at_19.p_floor == 1 / 20 and not at_19.can_reach(0.05)
    assert at_20.p_floor == 1 / 21 and at_20.can_reach(0.05)
    assert at_19.p_value >= 1 / 20


def test_sc_weat_floor_uses_the_attribute_sizes() -> None:
    from isoeat.stats.weat import sc_weat_from_vectors

    rng = np.random.default_rng(3)
    w = np.eye(6)[0] + 0.05 * rng.standard_normal(6)
    A = np.eye(6)[0] + 0.05 * rng.standard_normal((3, 6))
    B = np.eye(6)[1] + 0.05 * rng.standard_normal((3, 6))
    r = sc_weat_from_vectors(w, A, B, rng=0)
    assert r.n_partitions == math.comb(6, 3)
    assert r.p_floor == 1 / 20 and not r.can_reach(0.05)
    r4 = sc_weat_from_vectors(w, A, np.vstack([B, B[:1] + 0.01]), rng=0)
    assert r4.p_floor == 1 / math.comb(7, 3) and r4.can_reach(0.05)


def test_weat_table_footer_names_only_the_unreachable_test() -> None:
    small = weat_from_vectors(*_separated(3, 3), rng=0, test="T3")
    big = weat_from_vectors(*_separated(3, 4), rng=0, test="T4")
    text = weat_table([small, big])
    lines = [ln for ln in text.splitlines() if ln.startswith("!")]
    assert len(lines) == 1
    assert "p < 0.05 is out of reach" in lines[0] and "T3 (smallest possible p .0500)" in lines[0]
    assert "T4" not in lines[0]
    assert not [ln for ln in weat_table([big]).splitlines() if ln.startswith("!")]


def test_comparison_table_footer_and_its_alpha() -> None:
    from isoeat.experiments.compare import Comparison, ComparisonRow

    def row(test: str, n_y: int) -> ComparisonRow:
        r = weat_from_vectors(*_separated(3, n_y), rng=0, test=test)
        return ComparisonRow(test=test, bias_type="", raw=r, calibrated=r, change="Stable", delta_d=0.0,
                             large_shift=False, sign_reversal=False)

    comp = Comparison(model="m", calibration="zca", alpha=0.05, rows=(row("T3", 3), row("T4", 4)),
                      calibrator_metadata={})
    foot = [ln for ln in comparison_table(comp).splitlines() if ln.startswith("!")]
    assert foot == ["! p < 0.05 is out of reach at these set sizes, whatever the vectors: "
                    "T3 (smallest possible p .0500)."]
    # at alpha = 0.02 the 3-vs-4 test (smallest p 1/35 = 0.0286) cannot reach either
    strict = Comparison(model="m", calibration="zca", alpha=0.02, rows=comp.rows, calibrator_metadata={})
    foot = [ln for ln in comparison_table(strict).splitlines() if ln.startswith("!")]
    assert len(foot) == 1 and "T3" in foot[0] and "T4 (smallest possible p .0286)" in foot[0]


def test_reach_footer_is_empty_when_every_test_can_reach() -> None:
    big = weat_from_vectors(*_separated(4, 4), rng=0)
    assert reach_footer([big], ["W"], 0.05) == ""
    mid = weat_from_vectors(*_separated(3, 4), rng=0)  # smallest p 1/35 = 0.0286: reaches 0.05 (the default)
    assert reach_footer([mid], ["W"]) == ""
    assert reach_footer([mid], ["W"], 0.02) != ""


def test_default_alpha_and_degenerate_partition_counts() -> None:
    from dataclasses import replace

    r = weat_from_vectors(*_separated(3, 4), rng=0)
    assert r.can_reach() and not replace(r, n_partitions=math.comb(6, 3)).can_reach()  # default alpha 0.05
    assert replace(r, n_partitions=1).p_floor == 1.0  # one partition: p is always 1
    none = replace(r, n_partitions=0)  # nothing was partitioned: no floor to state
    assert math.isnan(none.p_floor) and not none.can_reach(0.05)


_SMALL = ("id: small\nbias_type: Valence\nX: [rose, tulip, daisy]\nY: [ant, flea, wasp]\n"
          "A: [love, peace, joy]\nB: [hatred, war, agony]\n")


def test_weat_command_warns_in_its_footer(tmp_path, capsys, glove) -> None:
    from isoeat.cli import main

    p = tmp_path / "small.yaml"
    p.write_text(_SMALL)
    assert main(["weat", "--test", f"{p},W6"]) == 0
    out = capsys.readouterr().out
    # 3 vs 3 words: 20 partitions, smallest p 1/20; W6 (8 vs 8, 12,870 partitions) is not named
    assert ("! p < 0.05 is out of reach at these set sizes, whatever the vectors: small (smallest possible p .0500)."
            in out.splitlines())
    assert "W6 (" not in out


def test_scweat_command_warns_for_three_attribute_words(tmp_path, capsys, glove) -> None:
    from isoeat.cli import main

    p = tmp_path / "small.yaml"
    p.write_text(_SMALL)
    assert main(["scweat", "--words", "rose,ant", "--attributes", str(p)]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("!")]
    assert lines == ["! p < 0.05 is out of reach at these set sizes, whatever the vectors: "
                     "rose (smallest possible p .0500), ant (smallest possible p .0500)."]


def _seat(n_y_per_template: list[int], alpha: float = 0.05):
    from isoeat.stats.seat import SEATResult

    results = tuple(weat_from_vectors(*_separated(3, n_y, seed=i), rng=0, test="S")
                    for i, n_y in enumerate(n_y_per_template))
    ds = [r.effect_size for r in results]
    return SEATResult(test="S", bias_type="", model="m", calibration="none", mode="templates",
                      templates=tuple(f"T{i} {{}}." for i in range(len(results))), results=results,
                      effect_size_mean=float(np.mean(ds)), effect_size_min=min(ds), effect_size_max=max(ds),
                      n_x=3, n_y=results[0].n_y, n_a=3, n_b=3, alpha=alpha)


def test_seat_table_footer() -> None:
    from isoeat.commands.seat import _table

    every = [ln for ln in _table(_seat([3, 3])).splitlines() if ln.startswith("!")]
    assert every == ["! p < 0.05 is out of reach at these set sizes, whatever the vectors: "
                     "every template (smallest possible p .0500)."]
    some = [ln for ln in _table(_seat([3, 4])).splitlines() if ln.startswith("!")]
    assert some == ["! p < 0.05 is out of reach at these set sizes, whatever the vectors: "
                    "T0 {}. (smallest possible p .0500)."]
    assert not [ln for ln in _table(_seat([4, 4])).splitlines() if ln.startswith("!")]
    # the SEAT result's own alpha: at 0.02 a 3-vs-4 template (1/35) cannot reach either
    strict = [ln for ln in _table(_seat([4, 4], alpha=0.02)).splitlines() if ln.startswith("!")]
    assert strict and "p < 0.02" in strict[0] and "every template (smallest possible p .0286)" in strict[0]


def test_seat_sentences_footer_names_the_one_row() -> None:
    from dataclasses import replace

    from isoeat.commands.seat import _table

    one = replace(_seat([3]), mode="sentences", templates=())
    assert [ln for ln in _table(one).splitlines() if ln.startswith("!")] == [
        "! p < 0.05 is out of reach at these set sizes, whatever the vectors: "
        "(sentences as given) (smallest possible p .0500)."]
