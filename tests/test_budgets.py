"""Nothing unbounded: exact counting has a memory budget, cost estimates never overflow, seeds replay."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError, IsoeatWarning
from isoeat.stats.permutation import DEFAULT_EXACT_MEMORY, exact_cost, exact_memory_bytes, partition_test
from isoeat.stats.weat import sc_weat_from_vectors, weat_from_vectors

W3_SCRIPT = textwrap.dedent("""
    import resource, warnings
    resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
    import isoeat
    m = isoeat.load_model("glove-6b-50d")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = isoeat.weat(m, "W3", n_permutations=2_000_000_000_000_000_000, rng=0)
    print(r.p_method, r.n_permutations, r.p_ci_low <= r.p_value <= r.p_ci_high)
    print(" | ".join(str(w.message) for w in caught))
""")


def test_w3_with_absurd_permutations_falls_back_to_a_certified_bracket_within_3_gib():
    out = subprocess.run([sys.executable, "-c", W3_SCRIPT], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    first, second = out.stdout.splitlines()[:2]
    assert first.startswith("certified ") and first.endswith(" True")
    assert "exact_memory" in second and "certified bracket" in second


def test_exact_beyond_memory_budget_is_one_line_error():
    s = np.random.default_rng(0).normal(size=40)
    with pytest.raises(ConfigError, match=r"exact_memory") as info:
        partition_test(s, 20, method="exact", exact_memory=1 << 20)
    assert "\n" not in str(info.value) and "MiB" in str(info.value)
    with pytest.warns(IsoeatWarning, match="exact_memory"):
        r = partition_test(s, 20, exact_memory=1 << 20, n_permutations=2000, rng=0)
    assert r.p_method == "certified" and "exact_memory" in r.note  # the bracket fits where the count does not
    assert partition_test(s[:16], 8).note == ""


def test_memory_estimate_grows_with_the_problem_and_default_is_2_gib():
    assert DEFAULT_EXACT_MEMORY == 2 * 2**30
    assert exact_memory_bytes(50, 25) < DEFAULT_EXACT_MEMORY < exact_memory_bytes(64, 32)
    assert exact_memory_bytes(20, 10) < exact_memory_bytes(30, 15) < exact_memory_bytes(40, 20)


@pytest.mark.parametrize("n", [2_100, 6_000, 100_000])
def test_cost_estimates_never_overflow(n):
    assert exact_cost(n, n // 2) == float("inf") or exact_cost(n, n // 2) > 1e300
    assert exact_memory_bytes(n, n // 2) > 2**60
    s = np.random.default_rng(1).normal(size=n)
    r = partition_test(s, n // 2, n_permutations=200, rng=0)
    assert r.p_method == "monte-carlo"


def test_large_sets_run_for_weat_and_sc_weat():
    g = np.random.default_rng(2)
    X, Y = g.normal(size=(1_100, 5)), g.normal(size=(1_100, 5))
    A, B = g.normal(size=(3, 5)), g.normal(size=(3, 5))
    r = weat_from_vectors(X, Y, A, B, n_permutations=100, rng=0)
    assert r.p_method == "monte-carlo"
    sc = sc_weat_from_vectors(g.normal(size=5), g.normal(size=(3_000, 5)), g.normal(size=(3_000, 5)),
                              n_permutations=100, rng=0)
    assert sc.p_method == "monte-carlo"


def test_monte_carlo_memory_is_chunked_whatever_n():
    s = np.random.default_rng(3).normal(size=64)
    s[:32] += 3.0  # p tiny: sequential stopping ends it after the first batch
    r = partition_test(s, 32, method="monte-carlo", n_permutations=10**9, sequential_alpha=0.05, rng=0)
    assert r.stopped_early and r.n_permutations < 10**6


def test_recorded_seed_replays_monte_carlo_bit_for_bit(glove):
    first = isoeat.weat(glove, "W3", method="monte-carlo", n_permutations=2_000)
    assert first.p_method == "monte-carlo" and isinstance(first.seed, int)
    again = isoeat.weat(glove, "W3", method="monte-carlo", n_permutations=2_000, rng=first.seed)
    assert (again.p_value, again.count, again.p_ci_low, again.p_ci_high, again.seed) == (
        first.p_value, first.count, first.p_ci_low, first.p_ci_high, first.seed)
