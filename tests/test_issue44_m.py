"""Issue 44 (items 1, 3, 6, 7): the same answer on every machine, reduced protocols marked, Firm and sensitivity
cross-referenced, small wrong words fixed. Each test checks printed text or a number derived here."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
from pathlib import Path

import pytest

from isoeat.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = int(exc.code or 0)
    return rc, out.getvalue(), err.getvalue()


def _isotropy_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Isotropy check"))
    return lines[start:start + 4]


def _hide_shared_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh machine: no data folder beside the checkout, no data variable set."""
    import isoeat.corpora._load as load

    for var in ("ISOEAT_DATA_DIR", "ISOEAT_SHARED_DATA", "ISOEAT_WIKITEXT103", "ISOEAT_WIKITEXT2"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(load, "_shared_roots", lambda: [])
    load.clear_corpus_cache()


# --- item 1: the bundled reference text ---------------------------------------------------------------------

def test_bundled_wikitext2_test_split_is_the_canonical_file() -> None:
    # the canonical WikiText-2 raw test split: 1,290,590 bytes, SHA-256 173c87a5...dd08 (shared/data/README.md 1a,
    # pinned by many public projects); the package ships it gzip-compressed, nothing else changed
    from isoeat.corpora import bundled_wikitext2_test

    data = gzip.decompress(bundled_wikitext2_test().read_bytes())
    assert len(data) == 1_290_590
    digest = hashlib.sha256(data).hexdigest()
    assert digest.startswith("173c87a5") and digest.endswith("dd08")
    assert "wiki.test.raw.gz" in (ROOT / "NOTICE.md").read_text("utf-8")


def test_run_prints_the_same_isotropy_figures_without_the_shared_data(
        monkeypatch: pytest.MonkeyPatch, glove, shared_data: Path) -> None:
    monkeypatch.setenv("ISOEAT_SHARED_DATA", str(shared_data))
    rc, with_shared, _ = _run(["run", "--tests", "W1"])
    assert rc == 0
    _hide_shared_data(monkeypatch)
    from isoeat.corpora import shared_wikitext2_path

    assert shared_wikitext2_path() is None
    rc, fresh, _ = _run(["run", "--tests", "W1"])
    assert rc == 0
    lines = _isotropy_lines(fresh)
    assert lines == _isotropy_lines(with_shared)
    # the corpus named on the line; GloVe 50d on WikiText-2's test types: 0.068 raw, 0.035 after ZCA (frames.py)
    assert "(frame paper: vocabulary items of WikiText-2 (test split, bundled);" in lines[0]
    assert "mean cosine 0.068 " in lines[1] and "after zca: mean cosine 0.035," in lines[2]


def test_a_shared_copy_with_a_training_split_still_comes_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import isoeat.corpora._load as load
    from isoeat.diagnostics.frames import _paper_text

    folder = tmp_path / "corpora" / "wikitext-2-raw-v1"
    folder.mkdir(parents=True)
    (folder / "wiki.train.raw").write_text(" = A = \n the cat sat on the mat .\n", "utf-8")
    _hide_shared_data(monkeypatch)
    monkeypatch.setattr(load, "_shared_roots", lambda: [tmp_path])
    path, desc = _paper_text()
    assert path == folder / "wiki.train.raw" and desc.startswith("WikiText-2 (train split)")
    (folder / "wiki.train.raw").unlink()
    (folder / "wiki.test.raw").write_text(" = A = \n the cat sat on the mat .\n", "utf-8")
    path, desc = _paper_text()  # a shared copy without a training split: the bundled test split, same bytes
    assert path.name == "wiki.test.raw.gz" and desc.startswith("WikiText-2 (test split, bundled)")


# --- item 7: small wrong words -------------------------------------------------------------------------------

def _glove_top(glove, n: int, drop: set[str]):
    """``rank`` of a vocabulary of GloVe 6B 50d's ``n`` most frequent words without ``drop``."""
    def rank(w: str) -> int | None:
        i = glove.row(w)[0]
        return i if i is not None and i < n and w not in drop else None
    return rank


def test_did_you_mean_needs_real_similarity_on_glove(glove) -> None:
    """uncle (GloVe row 5152) missing from a 5,000-word GloVe vocabulary: nothing one edit away is a word there;
    two edits away are once, unable, unclear (five letters, two edits: little in common) - no suggestion now.
    A word of 8 letters (two edits = a quarter of them) still gets its two-edit neighbour."""
    from isoeat._validate import SUGGEST_TWO_EDITS_MIN_LENGTH, suggest_words

    assert SUGGEST_TWO_EDITS_MIN_LENGTH == 8
    assert suggest_words("uncle", _glove_top(glove, 5000, {"uncle"})) == ()
    rank = lambda w: glove.row(w)[0]  # noqa: E731
    assert suggest_words("gladiola", rank)[:1] == ("gladioli",)  # one edit: unchanged
    # the boundary, on GloVe: "govermnt" (8 letters) is two insertions from government, still suggested
    assert "government" in suggest_words("govermnt", _glove_top(glove, 400_000, {"goverment"}))
    assert suggest_words("abcdefxy", {"abcdefgh": 0}.get) == ("abcdefgh",)  # 8 letters, two edits: suggested
    rows = {"abcdefg": 0}
    assert suggest_words("abcdexy", rows.get) == ()  # 7 letters, two substitutions: not


def test_corpus_advice_without_other_corpora_has_no_dangling_or(monkeypatch: pytest.MonkeyPatch) -> None:
    import isoeat.corpora as corpora
    from isoeat.reporting.tables import corpus_advice

    monkeypatch.setattr(corpora, "offline_corpora", lambda: [])
    assert corpus_advice() == "use a larger corpus: --corpus PATH, a text file or folder of your own"
    monkeypatch.setattr(corpora, "offline_corpora", lambda: [{"name": "gensim-wiki"}, {"name": "x"}])
    assert corpus_advice("x") == ("use a larger corpus: present offline: gensim-wiki (--corpus NAME); or "
                                  "--corpus PATH, a text file or folder of your own")


def _cos(u, v):
    import numpy as np

    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def test_run_footer_defines_flags_and_explains_a_negative_d(tmp_path: Path, glove) -> None:
    """A test written the other way round (insects as X, flowers as Y): d < 0 raw and calibrated, the same
    direction, so Stable and unflagged (the decision of issue 44: no flag is right); the footer says what a
    negative d means and that the one-sided p (greater) never calls it significant."""
    import numpy as np

    p = tmp_path / "swapped.yaml"
    p.write_text("id: insects-first\nbias_type: Valence\nX: [ant, flea, wasp, moth, roach]\n"
                 "Y: [rose, tulip, daisy, lily, orchid]\nA: [love, peace, joy, happy, gentle]\n"
                 "B: [hatred, war, agony, filth, ugly]\n", "utf-8")
    rc, out, _ = _run(["run", "--tests", str(p), "--stability", "off"])
    assert rc == 0
    # d_R from scratch on the raw GloVe rows: s(w) = mean cos(w, A) - mean cos(w, B), d = (mean s_X - mean s_Y)
    # / SD(s over X u Y, ddof 1)
    vec = {w: np.asarray(glove.vectors[glove.row(w)[0]], float) for w in
           "ant flea wasp moth roach rose tulip daisy lily orchid love peace joy happy gentle hatred war agony filth "
           "ugly".split()}
    A, B = "love peace joy happy gentle".split(), "hatred war agony filth ugly".split()
    s = {w: np.mean([_cos(vec[w], vec[a]) for a in A]) - np.mean([_cos(vec[w], vec[b]) for b in B]) for w in vec
         if w not in A + B}
    X, Y = "ant flea wasp moth roach".split(), "rose tulip daisy lily orchid".split()
    d = (np.mean([s[w] for w in X]) - np.mean([s[w] for w in Y])) / np.std([s[w] for w in X + Y], ddof=1)
    assert d < -1.0
    row = next(line for line in out.splitlines() if line.startswith("insects-first"))
    assert f"{d:.2f}" in row.split() and row.split()[-1] == "-"  # printed d_R; no flag
    assert ("d < 0 (insects-first_R, insects-first_W): the association runs the other way (X with B, Y with A); "
            "the one-sided p (greater) tests only d > 0, so a negative d is never significant here: "
            "--alternative two-sided tests both directions.") in out
    assert "Flags: |dd|>0.5 (dd = d_W - d_R) in 0, sign (d_R, d_W of opposite signs) in 0." in out


def test_negative_d_footer_only_where_a_d_is_negative_and_at_zero_none() -> None:
    from types import SimpleNamespace as NS

    from isoeat.reporting.tables import negative_d_footer

    def row(dr: float, dw: float, alt: str = "greater") -> NS:
        return NS(test="T", raw=NS(effect_size=dr, alternative=alt), calibrated=NS(effect_size=dw, alternative=alt))

    assert negative_d_footer([row(0.0, 0.5)]) == ""  # d = 0 is not negative: the boundary
    assert negative_d_footer([row(float("nan"), 0.5)]) == ""
    assert negative_d_footer([row(-1.53, -1.50, "two-sided")]) == (
        "d < 0 (T_R, T_W): the association runs the other way (X with B, Y with A).")


def test_firm_footnote_is_two_lines_and_points_to_sensitivity(glove) -> None:
    rc, out, _ = _run(["run", "--tests", "W9"])
    assert rc == 0
    lines = out.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("Firm: "))
    assert lines[i].startswith("Firm: the share of 100 redraws of the reference sample (its 100 shards resampled) "
                               "that change the calibrated call (p_W < alpha), and so Chg, estimates how often a "
                               "fresh draw would: firm <= 5%")
    assert "Track record (benchmarks/stability.py" in lines[i]
    assert lines[i + 1] == ("Firm asks whether a fresh draw of this reference keeps the call; 'isoeat sensitivity' "
                            "asks whether other eps and reference sizes keep it, so a firm call can be fragile there.")


def test_comparison_summary_prints_as_counts_and_is_still_callable(glove) -> None:
    from isoeat import compare_calibration

    comp = compare_calibration(glove, ["W6"], n_reference=5000, stability="off", rng=0)
    text = str(comp.summary)
    assert text.startswith("{'Stable': ") and "bound method" not in text
    assert comp.summary() == comp.summary and sum(comp.summary[c] for c in ("Stable", "Disappearing", "Emerging")) == 1


@pytest.mark.parametrize("types,advice", [
    (["OSError"], "rerun with --overwrite failed to retry them"),
    (["CoverageError"], "1 CoverageError cell(s) would fail again (too few of a set's words are in the model: change "
                        "the word lists or the model, or lower --min-coverage)"),
    (["CoverageError", "OSError", "MemoryError"], "rerun with --overwrite failed to retry the other 2; 1 CoverageError "
                                                  "cell(s) would fail again (too few of a set's words are in the model: "
                                                  "change the word lists or the model, or lower --min-coverage)"),
])
def test_retry_advice_never_offers_a_retry_that_cannot_help(types: list[str], advice: str) -> None:
    from isoeat.reporting.tables import retry_advice

    assert retry_advice([{"type": t} for t in types]) == advice


# --- item 6: Firm and sensitivity speak of each other ---------------------------------------------------------

def test_sensitivity_names_the_firm_mark_and_why_it_differs(glove) -> None:
    """W9 on GloVe: run marks it Firm firm (a fresh draw of the 100,000-word reference keeps p_W < 0.05), the
    sweep calls it fragile (the ε and size sweep moves p across 0.05): the verdict line says both and why."""
    rc, run_out, _ = _run(["run", "--tests", "W1,W9"])
    assert rc == 0
    run_marks = {line.split()[0]: line.split()[-2] for line in run_out.splitlines() if line.startswith(("W1 ", "W9 "))}
    rc, out, _ = _run(["sensitivity", "--repeats", "2", "--test", "W1,W9"])
    assert rc == 0
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("ID "))
    assert header.split()[-2:] == ["Verdict", "Firm"]
    rows = {line.split()[0]: line.split() for line in lines if line.split()[:2] in (["W1", "Valence"], ["W9", "Health"])}
    assert rows["W1"][-2:] == ["robust", run_marks["W1"]] and rows["W9"][-2:] == ["fragile", run_marks["W9"]]
    assert run_marks["W9"] == "firm"
    w9 = next(line for line in lines if line.startswith("W9 fragile: "))
    assert w9.endswith("; Firm: firm in isoeat run: it asks whether a fresh draw of the default reference keeps the "
                       "call, this sweep whether other eps and reference sizes do.")
    assert not any(line.startswith("W1 ") and "Firm" in line for line in lines)  # the same answer: no line


def test_firm_line_at_each_combination() -> None:
    from types import SimpleNamespace as NS

    from isoeat.commands.sensitivity import firm_line

    robust, fragile = NS(test="T", verdict="robust", reason="r"), NS(test="T", verdict="fragile", reason="f")
    assert firm_line(robust, "firm") == "" and firm_line(robust, None) == ""
    assert firm_line(fragile, None) == "T fragile: f"
    assert firm_line(fragile, "borderline (90/100)") == "T fragile: f; Firm: borderline (90/100) too (isoeat run)"
    assert firm_line(robust, "unstable (60/100)").startswith("T robust; Firm: unstable (60/100) in isoeat run: it asks")


def test_weat_ci_says_the_p_is_one_sided_beside_a_two_sided_interval_holding_0(glove) -> None:
    """W4 after ZCA on GloVe: the 95% interval on d holds 0 (printed [-0.25, 1.00]); the p beside it is one-sided.
    The line names exactly the intervals that hold 0 (low <= 0 <= high, read from the printed cells)."""
    rc, out, _ = _run(["weat", "--test", "W4,W1", "--ci"])
    assert rc == 0
    cells = {}
    for line in out.splitlines():
        if line.startswith(("W4 ", "W1 ")) and "[" in line:
            lo, hi = line[line.index("[") + 1:line.index("]")].split(",")
            cells.setdefault(line.split()[0], []).append(float(lo) <= 0 <= float(hi))
    assert cells == {"W4": [False, True], "W1": [False, False]}
    assert ("p is one-sided (greater), the intervals two-sided: a one-sided p < alpha matches a two-sided interval "
            "at level 1 - 2 alpha (90% for alpha 0.05), so a p < alpha can sit beside a 95% interval that holds 0 "
            "(here: W4).") in out
    rc, out, _ = _run(["weat", "--test", "W4", "--ci", "--alternative", "two-sided"])
    assert rc == 0 and "p is one-sided" not in out


# --- item 3: a reference capped by the corpus is a reduced protocol, marked; the report says its real size -----

@pytest.mark.slow
def test_minilm_on_a_corpus_smaller_than_the_reference_is_marked_reduced(tmp_path: Path, shared_data: Path) -> None:
    pytest.importorskip("transformers")
    from isoeat.corpora import load_corpus
    from isoeat.experiments.results import load_experiment
    from isoeat.reporting.html import reference_sizes

    text = (shared_data / "corpora" / "wikitext-2-raw-v1" / "wiki.valid.raw").read_bytes()[:20_000]
    small = tmp_path / "small.raw"
    small.write_bytes(text[:text.rindex(b"\n") + 1])
    n_sentences = len(load_corpus(f"wikitext:{small}"))
    assert 20 < n_sentences < 100_000
    out = tmp_path / "run"
    rc, printed, _ = _run(["run", "--model", "minilm", "--tests", "W6", "--corpus", f"wikitext:{small}",
                           "--allow-fallback", "--reference-size", "100000", "--stability", "off", "--out", str(out)])
    assert rc == 0
    assert (f"! Reduced protocol, not the paper's: reference {n_sentences:,} (asked 100,000, only {n_sentences:,} "
            "available; the paper: 100,000).") in printed
    assert reference_sizes(load_experiment(out)) == f"{n_sentences:,} sentences (asked 100,000)"


def test_report_conventions_name_each_model_s_real_reference() -> None:
    from types import SimpleNamespace as NS

    from isoeat.reporting.html import reference_sizes

    res = NS(settings={"reference": {"size": 100_000}}, manifest={"calibrators": {
        "glove-6b-50d/zca": {"n": 100_000, "reference_asked": 100_000},
        "minilm/zca": {"n": 401_233, "reference_units": 17_162, "reference_asked": 100_000}}})
    assert reference_sizes(res) == "glove-6b-50d: 100,000 vectors; minilm: 17,162 sentences (asked 100,000)"
    res.manifest["calibrators"].pop("minilm/zca")
    assert reference_sizes(res) == "100,000 vectors"


def test_reproduce_headline_leaves_out_tests_over_the_fallback_gate() -> None:
    """A test whose words fell back to the template for more than 10% (strictly) is left out of the counts and
    named; at exactly 10% it counts (the gate's boundary, labels.too_many_fallbacks)."""
    from types import SimpleNamespace as NS

    from isoeat.commands.reproduce import agreement_headline, over_fallback

    def rec(test: str, fell: int) -> dict:  # 40 entries: 10 words in each of X, Y, A, B
        return {"model": "minilm", "calibration": "none", "test": test, "n_x": 10, "n_y": 10, "n_a": 10, "n_b": 10,
                "fallback": [f"X:w{i}" for i in range(fell)]}

    res = NS(weat=[rec("W1", 4), rec("W2", 5), rec("W3", 0), rec("W4", 0), rec("W5", 0)])
    assert over_fallback(res, "minilm") == ["W2"]  # 4/40 = 10% counts, 5/40 = 12.5% does not
    rows = [{"test": t, "change_agrees": t != "W2", "digits_agree": 2, "d_raw": d, "paper_d_raw": d + 0.1,
             "d_zca": d, "paper_d_zca": d - 0.1} for t, d in (("W1", 1.0), ("W2", 0.5), ("W3", 0.2), ("W4", 1.4),
                                                                 ("W5", 0.7))]
    line = agreement_headline(rows, ["W2"])
    assert line == ("change class agrees with the paper in 4 of 4 tests whose words had corpus contexts; 8 of 16 "
                    "numbers print the same digits; Pearson r of d with the paper's: raw 1.00, whitened 1.00 "
                    "(left out: W2, over 10% of their words in the fallback template; 0 of 1 agree)")
    assert agreement_headline(rows).startswith("change class agrees with the paper in 4 of 5 tests; 10 of 20 ")


def test_isotropy_line_names_a_contextual_model_s_reference_corpus() -> None:
    """MiniLM's frame paper is its reference sample: the line names the corpus the sentences came from (a fresh
    machine's gensim-wiki and a shared enwiki-sample give different figures, so the reader must see which)."""
    from isoeat.diagnostics.isotropy_check import isotropy_lines

    raw = {"frame": "paper", "n_samples": 2000, "frame_size": 45_878, "cosine_method": "exact", "mean_cosine": 0.018,
           "isoscore": 0.403, "explained_variance_ratio": [0.0215], "dim": 384,
           "sampling": "frame reference: 2000 of 45878 vectors drawn uniformly without replacement (seed 0) from the "
                       "pool: unit=word: pooled vectors of every word occurrence (letters-only words, subword-mean) of "
                       "2000 sentences sampled (seed 0) from corpus gensim-wiki (fingerprint 8358fbebc7bd02db); "
                       "layer 6 of minilm"}
    head = isotropy_lines("minilm", raw)[0]
    assert head == ("Isotropy check, minilm raw space: anisotropic (frame paper: word vectors of reference sentences "
                    "of corpus gensim-wiki; mean cosine exact over its 45,878 vectors; IsoScore and top-PC share of "
                    "2,000 sampled).")
    raw["sampling"] = "vectors as given"  # a record that names no corpus: the frame's words as before
    assert "(frame paper, the paper's protocol: mean cosine exact" in isotropy_lines("minilm", raw)[0]
