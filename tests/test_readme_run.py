"""The README's ``isoeat run`` table, value by value, against an independent computation.

README.md ("The main job") shows the output of ``isoeat run``: ten WEATs on the
bundled GloVe 6B 50d, raw (R) and ZCA-whitened (W; eps = 1e-3, fitted on the
100,000 most frequent words), exact permutation p where feasible and a
certified bracket on the exact p elsewhere (W3, p its upper end).  This module parses that table
out of README.md and recomputes every cell from scratch, using isoeat only for
the raw vectors (``glove.lookup``, ``glove.vectors``) and the word lists
(``isoeat.wordsets.get_test``):

* ZCA: mean and covariance (ddof 1) of the first 100,000 rows,
  ``W = U (Lambda + eps I)^(-1/2) U^T`` from ``numpy.linalg.eigh``, checked
  against ``scipy.linalg.fractional_matrix_power``; ``z = W (x - mu)``.
* ``s(w) = mean cos(w, A) - mean cos(w, B)``, ``d = (mean s_X - mean s_Y) /
  std(s_X u s_Y, ddof=1)``.
* Exact one-sided p = P[sum over a random |X|-subset of s >= observed X sum]:
  brute force over all partitions for the small tests; for the large ones a
  dynamic program that counts |X|-subsets by quantised sum (resolution
  ``delta``), bracketing the true count rigorously by the worst rounding
  error of an |X|-subset (a method unrelated to isoeat's meet in the middle).
  ``delta`` is refined until every printed digit that depends on the p-value
  is settled.
* The certified row (W3): its printed p and Holm-adjusted p are those of the
  exact p from the same dynamic program; the command's bracket overlaps the
  program's (both hold the exact p), and a Monte Carlo row, should the README
  show one again, is checked against an independent seeded Monte Carlo run
  (99.9% Clopper-Pearson interval) and the program's exact p (99.9% binomial
  acceptance region of a 100,000-permutation estimate).
* Holm across the 10 tests of each space, change classes, flags, footers.
* Formatting of d and p re-implemented here from the rule in
  ``isoeat.reporting.tables`` (not imported), so printed digits are compared.

Finally the real command runs once and its table must equal the README's
block character for character (apart from the timing line).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[1] / "README.md"
TESTS = [f"W{i}" for i in range(1, 11)]
SPACES = ("R", "W")
EPS = 1e-3
N_REF = 100_000
N_MC = 100_000  # permutations of the README's Monte Carlo rows
ALPHA = 0.05
DELTA_START = 1e-4  # first quantisation step of the subset-sum dynamic program
DELTA_FLOOR = 5e-8  # give up refining below this (would mean a p on a rounding edge)

ROW_RE = re.compile(
    r"^(?P<id>W\d+)\s+(?P<bias>\S+)\s+"
    r"(?P<d_R>-?\d+\.\d\d)(?P<star_R>\*?)\s+(?P<p_R>\S+)\s+(?P<Holm_R>\S+)\s+"
    r"(?P<d_W>-?\d+\.\d\d)(?P<star_W>\*?)\s+(?P<p_W>\S+)\s+(?P<Holm_W>\S+)\s+"
    r"(?P<mag>[a-z]+/[a-z]+)\s+(?P<chg>[SDE])\s+(?P<firm>firm|(?:borderline|unstable) \(\d+/\d+\))\s+(?P<flags>\S+)$"
)


# ---------------------------------------------------------------------------
# the README block
# ---------------------------------------------------------------------------


def _readme_block() -> list[str]:
    """Lines of the code block under "## The main job" that shows the run's output."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## The main job", 1)[1]
    for block in re.findall(r"```[a-z]*\n(.*?)```", section, flags=re.S):
        if block.startswith("glove-6b-50d: raw (R)"):
            return block.rstrip("\n").split("\n")
    raise AssertionError("README.md: no `isoeat run` output block under 'The main job'")


@dataclass
class ReadmeTable:
    lines: list[str]
    title: str
    rows: dict[str, dict[str, str]]
    footer: list[str]
    counts: dict[str, int] = field(default_factory=dict)
    monte_carlo: list[str] = field(default_factory=list)
    mc_permutations: int = 0
    certified: list[str] = field(default_factory=list)  # "W3_R", ... as the footer names them
    dropped: str = ""


@pytest.fixture(scope="module")
def readme() -> ReadmeTable:
    lines = _readme_block()
    rows = {}
    for ln in lines:
        m = ROW_RE.match(ln)
        if m:
            rows[m["id"]] = m.groupdict()
    footer = lines[lines.index("", 2) + 1 :]
    tab = ReadmeTable(lines=lines, title=lines[0], rows=rows, footer=footer)
    foot = "\n".join(footer)
    m = re.search(
        r"^Stable (\d+), Disappearing (\d+), Emerging (\d+); Flags: \|dd\|>0\.5 \(dd = d_W - d_R\) in (\d+), "
        r"sign \(d_R, d_W of opposite signs\) in (\d+)\.$",
        foot, flags=re.M,
    )
    assert m, "README footer: no 'Stable .., Disappearing .., Emerging ..' line"
    tab.counts = dict(zip(("S", "D", "E", "large", "sign"), map(int, m.groups())))
    m = re.search(r"^Monte Carlo \(([\d,]+) permutations, p=\(k\+1\)/\(N\+1\)\) for: (.*?)(; exact elsewhere)?\.$",
                  foot, flags=re.M)
    if m:
        tab.mc_permutations = int(m[1].replace(",", ""))
        tab.monte_carlo = m[2].split(", ")
    m = re.search(r"^Certified \(p = upper end of a bracket that holds the exact p\) for: (.*); exact elsewhere\.$",
                  foot, flags=re.M)
    assert m or tab.monte_carlo, "README footer: no 'Certified (...) for: ...' or 'Monte Carlo (...) for: ...' line"
    tab.certified = re.findall(r"(W\d+_[RW]) \[", m[1]) if m else []
    m = re.search(r"^Not in vocabulary \(dropped\): (.*)$", foot, flags=re.M)
    tab.dropped = re.sub(r" \(did you mean [^)]*\)", "", m[1]) if m else ""  # the words, without the hints
    return tab


# ---------------------------------------------------------------------------
# formatting rule of the table (re-implemented from isoeat.reporting.tables)
# ---------------------------------------------------------------------------


def fmt_p(p: float) -> str:
    """``.0098`` for p >= 1e-4 (4 decimals, no leading zero), ``3.2e-10`` below."""
    if p >= 1e-4:
        s = "%.4f" % p
        return s[1:] if s.startswith("0.") else s
    return "0" if p == 0 else "%.1e" % p


def fmt_d(d: float) -> str:
    return "%.2f" % d


def settled(lo: float, hi: float, fmt=fmt_p) -> str | None:
    """The printed value when every number in [lo, hi] prints the same, else None."""
    a, b = fmt(lo), fmt(hi)
    return a if a == b else None


# ---------------------------------------------------------------------------
# independent statistics
# ---------------------------------------------------------------------------


def unit(M: np.ndarray) -> np.ndarray:
    return M / np.sqrt((M * M).sum(axis=1, keepdims=True))


def assoc(T: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """s(w, A, B) for every row of T."""
    T, A, B = unit(T), unit(A), unit(B)
    return np.einsum("id,jd->ij", T, A).mean(axis=1) - np.einsum("id,jd->ij", T, B).mean(axis=1)


def subset_count_bracket(s: np.ndarray, k: int, t: float, delta: float) -> tuple[int, int]:
    """``lo <= #{k-subsets I : sum_I s >= t} <= hi`` by a DP over (size, quantised sum).

    With ``q = rint(s / delta)`` and ``e = s - delta q`` the sum over I is
    ``delta Q_I + E_I`` with ``E_I`` between the sums of the k smallest and the
    k largest ``e`` (at most ``k delta / 2`` in size).  Counting subsets by
    ``Q_I`` at two integer thresholds therefore brackets the true count.  A
    slack of 1e-9 sum|s| (isoeat's stated tie tolerance) widens the upper end.
    The DP runs on ``r = max q - q >= 0`` (``R_I = k max q - Q_I``), counting
    ``R_I <= u``; partial sums only grow, so everything above ``u`` is dropped.
    """
    n = s.size
    q = np.rint(s / delta).astype(np.int64)
    e = np.sort(s - delta * q)
    slack = 1e-12 + 1e-9 * float(np.abs(s).sum())
    e_top = float(e[-k:].sum()) + slack
    e_bot = float(e[:k].sum()) - slack
    t_hi = math.ceil((t - e_top) / delta)  # sum_I s >= t          =>  Q_I >= t_hi
    t_lo = math.ceil((t - e_bot) / delta)  # Q_I >= t_lo            =>  sum_I s >= t
    qmax = int(q.max())
    u_lo, u_hi = k * qmax - t_lo, k * qmax - t_hi
    if u_hi < 0:
        return 0, 0
    dtype = np.int32 if math.comb(n, min(k, n // 2)) < 2**31 else np.int64  # bounds every C[j, v]
    C = np.zeros((k + 1, u_hi + 1), dtype=dtype)  # C[j, v]: j-subsets with R-sum v
    C[0, 0] = 1
    for i, ri in enumerate((qmax - q).tolist()):
        if ri > u_hi:
            continue
        # sizes that can still be completed to k with the n - 1 - i elements left
        for j in range(min(i + 1, k), max(1, k - (n - 1 - i)) - 1, -1):
            C[j, ri:] += C[j - 1, : u_hi + 1 - ri]
    cum = np.cumsum(C[k], dtype=np.int64)
    return (int(cum[u_lo]) if u_lo >= 0 else 0), int(cum[u_hi])


def brute_force_count(s: np.ndarray, k: int, t: float) -> int:
    """#{k-subsets I : sum_I s >= t - 1e-9 sum|s|} over all of them."""
    idx = np.array(list(itertools.combinations(range(s.size), k)))
    return int((s[idx].sum(axis=1) >= t - 1e-9 * np.abs(s).sum()).sum())


def holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p: sort, times (m - i), running max, capped at 1."""
    m = len(p)
    out = np.empty(m)
    running = 0.0
    for i, j in enumerate(np.argsort(p, kind="stable")):
        running = max(running, min(1.0, (m - i) * p[j]))
        out[j] = running
    return out


@dataclass
class Cell:
    """One test in one space."""

    s_x: np.ndarray
    s_y: np.ndarray
    d: float = 0.0
    n_partitions: int = 0
    method: str = "exact"  # "exact" | "monte-carlo" (as the README says)
    p_lo: float = float("nan")
    p_hi: float = float("nan")
    delta: float | None = None  # None: brute force (p_lo == p_hi)

    @property
    def s(self) -> np.ndarray:
        return np.concatenate([self.s_x, self.s_y])

    def refine(self, factor: float = 0.25) -> None:
        self.delta = DELTA_START if self.delta is None else self.delta * factor
        assert self.delta >= DELTA_FLOOR, "p-value bracket does not settle: a p-value on a rounding edge?"
        lo, hi = subset_count_bracket(self.s, self.s_x.size, float(self.s_x.sum()), self.delta)
        self.p_lo, self.p_hi = lo / self.n_partitions, hi / self.n_partitions


@dataclass
class Independent:
    mu: np.ndarray
    sigma: np.ndarray
    W: np.ndarray
    cells: dict[tuple[str, str], Cell]
    dropped: list[str]
    bias: dict[str, str]


@pytest.fixture(scope="module")
def indep(glove, readme) -> Independent:
    from isoeat.wordsets import get_test

    ref = np.asarray(glove.vectors[:N_REF], dtype=np.float64)
    mu = ref.mean(axis=0)
    sigma = np.cov(ref, rowvar=False, ddof=1)
    lam, U = np.linalg.eigh(sigma)
    W = (U * (lam + EPS) ** -0.5) @ U.T
    cells, dropped, bias = {}, [], {}
    for tid in TESTS:
        t = get_test(tid)
        bias[tid] = t.bias_type
        vec = {}
        for role in "XYAB":
            look = glove.lookup(getattr(t, role).words)
            dropped += [f"{tid} {role}:{w}" for w in look.missing]
            vec[role] = look.vectors
        for space in SPACES:
            v = vec if space == "R" else {r: (x - mu) @ W.T for r, x in vec.items()}
            c = Cell(assoc(v["X"], v["A"], v["B"]), assoc(v["Y"], v["A"], v["B"]))
            c.d = (c.s_x.mean() - c.s_y.mean()) / c.s.std(ddof=1)
            c.n_partitions = math.comb(c.s.size, c.s_x.size)
            if tid in readme.monte_carlo:
                c.method = "monte-carlo"
            elif c.n_partitions <= 20_000:
                c.p_lo = c.p_hi = brute_force_count(c.s, c.s_x.size, float(c.s_x.sum())) / c.n_partitions
            else:
                c.refine()
            cells[tid, space] = c
    return Independent(mu, sigma, W, cells, dropped, bias)


# ---------------------------------------------------------------------------
# the command itself, run once
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_run(glove, tmp_path_factory):
    from isoeat.cli import main

    out_dir = tmp_path_factory.mktemp("readme_run") / "res"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["run", "--out", str(out_dir)])
    assert rc == 0
    records = json.loads((out_dir / "results.json").read_text())
    return buf.getvalue(), {(r["test"], {"none": "R", "zca": "W"}[r["calibration"]]): r for r in records}


@pytest.fixture(scope="module")
def mc_p(readme, cli_run) -> dict[tuple[str, str], float]:
    """The Monte Carlo p-values of the run, (k+1)/(N+1) from its recorded count.

    A sampled p cannot be recomputed bit for bit; :func:`test_monte_carlo_row`
    checks it independently (to sampling accuracy), and the Holm columns are
    then recomputed from it.
    """
    _, records = cli_run
    out = {}
    for tid in readme.monte_carlo:
        for space in SPACES:
            r = records[tid, space]
            assert r["p_method"] == "monte-carlo" and r["n_permutations"] == N_MC
            p = (r["count"] + 1) / (N_MC + 1)
            assert r["p_value"] == pytest.approx(p, rel=1e-12)
            out[tid, space] = p
    return out


def p_bounds(indep: Independent, mc_p, space: str) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = [], []
    for tid in TESTS:
        c = indep.cells[tid, space]
        if c.method == "monte-carlo":
            lo.append(mc_p[tid, space])
            hi.append(mc_p[tid, space])
        else:
            lo.append(c.p_lo)
            hi.append(c.p_hi)
    return np.array(lo), np.array(hi)


def refine_factor(lo: float, hi: float) -> float:
    """How much to shrink delta so that [lo, hi] (width ~ delta) no longer straddles a rounding edge.

    The edge nearest the midpoint is found by bisection; the new half-width
    should be ~0.8 of the midpoint's distance to it (between 1/8 and 1/2 of
    the current one).
    """
    mid = (lo + hi) / 2
    dist = math.inf
    for end in (lo, hi):
        a, b = mid, end
        if fmt_p(a) == fmt_p(b) and (a < ALPHA) == (b < ALPHA):
            continue
        for _ in range(60):
            c = (a + b) / 2
            if fmt_p(c) == fmt_p(a) and (c < ALPHA) == (a < ALPHA):
                a = c
            else:
                b = c
        dist = min(dist, abs(b - mid))
    return min(0.5, max(0.125, 0.8 * dist / ((hi - lo) / 2))) if math.isfinite(dist) else 0.25


def settle_all(indep: Independent, mc_p) -> None:
    """Refine the DP brackets until every printed p and Holm-adjusted p (and p < alpha) is determined."""
    m = len(TESTS)
    while True:
        todo: dict[tuple[str, str], float] = {}

        def want(key: tuple[str, str], factor: float) -> None:
            if indep.cells[key].delta is not None:  # brute force and Monte Carlo cells are points
                todo[key] = min(factor, todo.get(key, 1.0))

        for space in SPACES:
            lo, hi = p_bounds(indep, mc_p, space)
            h_lo, h_hi = holm(lo), holm(hi)  # Holm is non-decreasing in every p
            rank = {j: r for r, j in enumerate(np.argsort(hi, kind="stable"))}
            for i, tid in enumerate(TESTS):
                if settled(lo[i], hi[i]) is None or (lo[i] < ALPHA) != (hi[i] < ALPHA):
                    want((tid, space), refine_factor(lo[i], hi[i]))
                if settled(h_lo[i], h_hi[i]) is None:
                    # Holm_i = max over the tests ranked no higher than i of (m - rank) p, capped at 1:
                    # refine those that can attain it (all of them if that picks no open bracket)
                    ranked = [j for j in range(m) if lo[j] <= hi[i]]
                    near = [j for j in ranked if (m - rank[j]) * hi[j] >= h_lo[i]]
                    if not any(indep.cells[TESTS[j], space].delta is not None for j in near):
                        near = ranked
                    for j in near:
                        want((TESTS[j], space), refine_factor(h_lo[i], h_hi[i]))
        if not todo:
            return
        for key, factor in sorted(todo.items()):
            indep.cells[key].refine(factor)


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------


def test_readme_block_shape(readme):
    assert list(readme.rows) == TESTS
    assert readme.title == (
        "glove-6b-50d: raw (R) vs ZCA-whitened (W); eps=0.001, "
        "reference: top 100000 vocabulary rows by frequency of glove-6b-50d"
    )
    header = ["ID", "Bias", "d_R", "p_R", "Holm_R", "d_W", "p_W", "Holm_W", "Mag", "Chg", "Firm", "Flags"]
    assert readme.lines[2].split() == header
    assert readme.footer[0] == (
        "* p < 0.05 (one-sided unless stated: greater). Chg: S=Stable, D=Disappearing, E=Emerging. "
        "p: certified / exact."
    )
    assert readme.footer[2] == ("Holm_R, Holm_W: Holm-adjusted p across the 10 tests of each space "
                                "(change classes use unadjusted p).")
    assert readme.certified == ["W3_R", "W3_W"] and readme.monte_carlo == []
    assert re.fullmatch(r"\(\d+\.\d s\)", readme.lines[-1])


def test_zca_from_scratch_agrees_with_fractional_matrix_power(indep):
    from scipy.linalg import fractional_matrix_power

    dim = indep.sigma.shape[0]
    W2 = np.real(fractional_matrix_power(indep.sigma + EPS * np.eye(dim), -0.5))
    np.testing.assert_allclose(indep.W, W2, rtol=0, atol=1e-10 * np.abs(W2).max())
    # whitened covariance W Sigma W^T = Sigma (Sigma + eps I)^-1: the identity up to eps / (lambda + eps)
    lam = np.linalg.eigvalsh(indep.sigma)
    np.testing.assert_allclose(indep.W @ indep.sigma @ indep.W.T, np.eye(dim), atol=1.01 * EPS / (lam.min() + EPS))


def test_bias_types_and_dropped_words(readme, indep):
    assert {tid: readme.rows[tid]["bias"] for tid in TESTS} == indep.bias
    assert readme.dropped == "; ".join(indep.dropped)


def test_effect_sizes(readme, indep):
    got = {(tid, sp): fmt_d(indep.cells[tid, sp].d) for tid in TESTS for sp in SPACES}
    want = {(tid, sp): readme.rows[tid][f"d_{sp}"] for tid in TESTS for sp in SPACES}
    assert got == want


def test_certified_rows_are_exactly_the_infeasible_ones(readme, indep):
    # exact when C(|X|+|Y|, |X|) is within C(50, 25), the README's "where feasible"
    infeasible = [tid for tid in TESTS if indep.cells[tid, "R"].n_partitions > math.comb(50, 25)]
    assert sorted({key.split("_")[0] for key in readme.certified}) == infeasible == ["W3"]


def test_certified_p_is_the_upper_end_of_a_narrow_bracket(readme, cli_run):
    _, records = cli_run
    cert = {key for key, r in records.items() if r["p_method"] == "certified"}
    assert {key for key, r in records.items() if r["p_method"] != "exact"} == cert == {("W3", "R"), ("W3", "W")}
    for tid, sp in cert:
        r = records[tid, sp]
        assert r["p_ci_low"] <= r["p_value"] == r["p_ci_high"]
        assert r["p_ci_high"] - r["p_ci_low"] <= 1e-3 * r["p_ci_low"]
        assert fmt_p(r["p_value"]) == readme.rows[tid][f"p_{sp}"]
        assert f"{tid}_{sp} [{r['p_ci_low']:.4g}, {r['p_ci_high']:.4g}]" in "\n".join(readme.footer)


def test_subset_count_bracket_contains_the_brute_force_count(indep):
    """The DP's bracket holds the true count (small tests and a random problem), and tightens with delta."""
    rng = np.random.default_rng(7)
    problems = [(c.s, c.s_x.size) for c in indep.cells.values() if c.n_partitions <= 20_000]
    problems.append((rng.normal(0, 0.1, 18), 8))
    for s, k in problems:
        for t in (float(s[:k].sum()), float(np.sort(s)[-k:].sum()), float(np.median(s)) * k):
            exact = brute_force_count(s, k, t)
            width = math.inf
            for delta in (1e-3, 1e-4, 1e-5):
                lo, hi = subset_count_bracket(s, k, t, delta)
                assert lo <= exact <= hi, (k, t, delta, lo, exact, hi)
                assert hi - lo <= width
                width = hi - lo
            assert width <= max(2, 0.01 * exact)


def test_exact_p_values(readme, indep, mc_p):
    settle_all(indep, mc_p)
    got, want = {}, {}
    for tid in TESTS:
        for sp in SPACES:
            c = indep.cells[tid, sp]
            if c.method == "exact":
                got[tid, sp] = settled(c.p_lo, c.p_hi)
                want[tid, sp] = readme.rows[tid][f"p_{sp}"]
    # 18 exact cells and the 2 certified ones (printed from a bracket on the same exact p)
    assert len(got) == 20 and got == want


def test_certified_row_overlaps_the_independent_bracket(readme, indep, cli_run, mc_p):
    """W3: both brackets hold the exact p, so they overlap; the program's is refined until the digits settle."""
    settle_all(indep, mc_p)
    _, records = cli_run
    for key in readme.certified:
        tid, sp = key.split("_")
        c, r = indep.cells[tid, sp], records[tid, sp]
        assert c.delta is not None and c.p_hi - c.p_lo < 0.01 * c.p_hi
        assert max(c.p_lo, r["p_ci_low"]) <= min(c.p_hi, r["p_ci_high"]), (key, c.p_lo, c.p_hi, r)


def test_monte_carlo_row(readme, indep):
    """W3: an independent Monte Carlo run and the exact p both agree with the README's sampled p."""
    from scipy.special import bdtr, betaincinv

    n_ind, batch = 200_000, 25_000
    rng = np.random.default_rng(20240611)
    for tid in readme.monte_carlo:
        cells = [indep.cells[tid, sp] for sp in SPACES]
        n, k = cells[0].s.size, cells[0].s_x.size
        S = np.stack([c.s for c in cells], axis=1)  # (n, 2): both spaces at once
        t = np.array([c.s_x.sum() - 1e-9 * np.abs(c.s).sum() for c in cells])
        hits = np.zeros(2, dtype=np.int64)
        for _ in range(n_ind // batch):
            r = rng.random((batch, n))
            inside = r <= np.partition(r, k - 1, axis=1)[:, k - 1 : k]  # a uniform random k-subset per row
            hits += (inside.astype(np.float64) @ S >= t).sum(axis=0)
        for sp, c, h in zip(SPACES, cells, hits.tolist()):
            shown = readme.rows[tid][f"p_{sp}"]
            # every count j whose (j+1)/(N+1) prints as the README's p (printing is off by < 50%)
            v = float(shown) * (N_MC + 1)
            near = range(max(0, int(v / 2) - 2), int(1.5 * v) + 2)
            ks = [j for j in near if fmt_p((j + 1) / (N_MC + 1)) == shown]
            assert ks, f"{tid} p_{sp}={shown} is no (k+1)/(N+1) with N={N_MC}"
            p_readme = (np.array(ks) + 1) / (N_MC + 1)
            # 99.9% Clopper-Pearson interval from the independent run
            cp_lo = 0.0 if h == 0 else betaincinv(h, n_ind - h + 1, 0.0005)
            cp_hi = betaincinv(h + 1, n_ind - h, 0.9995)
            assert ((p_readme >= cp_lo) & (p_readme <= cp_hi)).any(), (tid, sp, shown, h, cp_lo, cp_hi)
            # the exact p (DP bracket): the README's count must be a plausible Binomial(N, p) draw,
            # i.e. P[K <= j | p_hi] >= 0.0005 and P[K >= j | p_lo] >= 0.0005 for some printed j
            lo, hi = subset_count_bracket(c.s, k, float(c.s_x.sum()), 2.5e-5)
            pe_lo, pe_hi = lo / c.n_partitions, hi / c.n_partitions
            assert pe_hi - pe_lo < 0.05 * pe_hi
            plausible = [
                j for j in ks if bdtr(j, N_MC, pe_hi) >= 5e-4 and (j == 0 or 1 - bdtr(j - 1, N_MC, pe_lo) >= 5e-4)
            ]
            assert plausible, (tid, sp, shown, pe_lo, pe_hi)


def test_holm_columns(readme, indep, mc_p):
    settle_all(indep, mc_p)
    for sp in SPACES:
        lo, hi = p_bounds(indep, mc_p, sp)
        h_lo, h_hi = holm(lo), holm(hi)
        got = [settled(a, b) for a, b in zip(h_lo, h_hi)]
        assert got == [readme.rows[tid][f"Holm_{sp}"] for tid in TESTS], sp


def test_stars_change_classes_flags_and_counts(readme, indep, mc_p):
    settle_all(indep, mc_p)
    counts = dict.fromkeys(("S", "D", "E", "large", "sign"), 0)
    for tid in TESTS:
        row = readme.rows[tid]
        sig = {}
        for sp in SPACES:
            c = indep.cells[tid, sp]
            p_lo, p_hi = (mc_p[tid, sp],) * 2 if c.method == "monte-carlo" else (c.p_lo, c.p_hi)
            assert (p_lo < ALPHA) == (p_hi < ALPHA)
            sig[sp] = p_hi < ALPHA
            assert row[f"star_{sp}"] == ("*" if sig[sp] else ""), (tid, sp)
        chg = "S" if sig["R"] == sig["W"] else ("D" if sig["R"] else "E")
        d_r, d_w = indep.cells[tid, "R"].d, indep.cells[tid, "W"].d
        flags = [f for f, on in (("|dd|>0.5", abs(d_w - d_r) > 0.5), ("sign", d_r * d_w < 0)) if on]
        assert (row["chg"], row["flags"]) == (chg, ",".join(flags) or "-"), tid
        assert row["mag"] == f"{magnitude(d_r)}/{magnitude(d_w)}", tid
        counts[chg] += 1
        counts["large"] += abs(d_w - d_r) > 0.5
        counts["sign"] += d_r * d_w < 0
    assert readme.counts == counts


def magnitude(d: float) -> str:
    """Cohen (1988): |d| >= 0.8 large, >= 0.5 med(ium), >= 0.2 small, else negl(igible) (the table's short forms)."""
    return "large" if abs(d) >= 0.8 else "med" if abs(d) >= 0.5 else "small" if abs(d) >= 0.2 else "negl"


ISO_RE = re.compile(
    r"^  mean cosine (?P<m>-?\d\.\d{3}) \(anisotropic if >= 0\.1\): (?P<sm>ok|ANISOTROPIC); "
    r"IsoScore (?P<i>\d\.\d{3}) \(if < 0\.5\): (?P<si>ok|ANISOTROPIC); "
    r"top-PC share (?P<s>\d\.\d{4}) \(if >= 5/d = (?P<thr>[\d.]+)\): (?P<ss>ok|ANISOTROPIC)\.$", re.M)


def test_isotropy_check_under_the_table(readme):
    """The check's states follow from its printed values by the documented thresholds (re-implemented here)."""
    foot = "\n".join(readme.footer)
    head = re.search(r"^Isotropy check, glove-6b-50d raw space: (\S+) \(frame paper: vocabulary items of "
                     r"WikiText-2 \(test split, bundled\); mean cosine, IsoScore and top-PC share exact over its "
                     r"16,804 vectors\)\.$", foot, re.M)
    m = ISO_RE.search(foot)
    assert head and m, foot
    assert float(m["thr"]) == 5 / 50
    states = [float(m["m"]) >= 0.1, float(m["i"]) < 0.5, float(m["s"]) >= 5 / 50]
    assert [m["sm"], m["si"], m["ss"]] == ["ANISOTROPIC" if s else "ok" for s in states]
    assert head[1] == ("anisotropic" if any(states) else "near-isotropic")
    # the paper frame's mean over the 16,804 distinct in-vocabulary words of WikiText-2's test text, computed from
    # scratch in tests/test_frames.py (test_the_paper_frame_of_a_static_model_...): 0.068
    assert abs(float(m["m"]) - 0.068) < 0.001


def _readme_frame_here() -> bool:
    """Whether frame paper reads the text the README's isotropy check was measured on (WikiText-2's test split,
    bundled with isoeat); elsewhere (WikiText-103 set, or a WikiText-2 training split) its figures differ by design."""
    from pathlib import Path

    from isoeat._errors import IsoeatError
    from isoeat.diagnostics.frames import _paper_text

    try:
        source, _ = _paper_text()
    except IsoeatError:  # no reference corpus at all here (no gensim, no shared data): the pool stands in
        return False
    return isinstance(source, Path) and source.name in ("wiki.test.raw", "wiki.test.raw.gz")  # the same bytes


def test_command_prints_the_readme_block(readme, cli_run):
    printed, _ = cli_run
    lines = printed.rstrip("\n").split("\n")
    assert re.fullmatch(r"\(\d+\.\d s; written to .*\)", lines[-1])
    if _readme_frame_here():
        assert lines[:-1] == readme.lines[:-1]
    else:  # the table and its footers exactly; the isotropy check names its frame (another corpus here)
        cut = next(i for i, ln in enumerate(readme.lines) if ln.startswith("Isotropy check"))
        assert lines[:cut] == readme.lines[:cut]
        assert lines[cut].startswith("Isotropy check, glove-6b-50d raw space: ") and re.search(
            r"\((frame paper: vocabulary items of WikiText-\S+ \([^)]*\);|frame reference, the calibrator's reference "
            r"sample:) mean cosine exact over its [\d,]+ vectors", lines[cut]), lines[cut]
