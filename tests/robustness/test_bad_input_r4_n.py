"""Bad-input catalogue, round 4 (issue 40), group N: the adversary of round 4's fixes. Variations of its cases
through other calibrators, other commands and the Python API reaching the same code.

CLI cases end in a one-line isoeat error, exit 2, a message naming the cause, no traceback, nothing written
in the temporary folder. Library cases raise an IsoeatError subclass with a one-line message. Value cases
derive the expected number independently in the test (exact arithmetic, mpmath).

Counts: CLI_CASES + LIBRARY_CASES + REFERENCE_CASES = TOTAL_CASES bad-input cases.
"""

from __future__ import annotations

import bz2
import gzip
import lzma

import numpy as np
import pytest

from isoeat import DataFormatError, IsoeatError, NotFittedError
from isoeat.cli import main

from ._oneline import assert_one_line_error
from .test_bad_input_r4_a import _EPS, _exact_calibrated_d, _glove_text, _scaled_reference, _toy_d

_TOY_TEST = "id: toy\nbias_type: toy\nX: [w0, w1, w2, w3]\nY: [w4, w5, w6, w7]\nA: [w8, w9, w10, w11]\nB: [w12, w13, w14, w15]\n"


def _weat(s, *calibration):
    return ({"v.txt": _glove_text(_scaled_reference(s)), "t.yaml": _TOY_TEST},
            ["weat", "--model", "glove:{d}/v.txt", "--test", "{d}/t.yaml", "--reference-size", "60", *calibration])


CLI_CASES = [
    # item 1 through the shrinkage whitener: shrinkage 0 is ZCA, its extreme row gave a wrong d with exit 0
    ("shrinkage 0 reference row scaled by 1e8", *_weat(1e8, "--calibration", "zca-shrinkage",
                                                       "--calibration-param", "shrinkage=0"),
     "zca-shrinkage: the reference covariance"),
    ("shrinkage 0 reference row scaled by 1e8 named", *_weat(1e8, "--calibration", "zca-shrinkage",
                                                             "--calibration-param", "shrinkage=0"),
     "reference row 21 causes it"),
    # item 1 through whiten: the same row refused, no calibrator file written
    # item 34 through the small text files (test files, configs, SEAT templates): "not valid UTF-8 (byte 13)"
    ("bz2 test file", {"v.txt": _glove_text(_scaled_reference(1.0)), "t.yaml.bz2": bz2.compress(_TOY_TEST.encode())},
     ["weat", "--model", "glove:{d}/v.txt", "--test", "{d}/t.yaml.bz2"],
     "{d}/t.yaml.bz2: bzip2 compression is not supported (a word-set or config file is read as plain UTF-8 text; "
     "decompress it first)"),
    ("gzip test file", {"v.txt": _glove_text(_scaled_reference(1.0)), "t.json.gz": gzip.compress(b'{"id": "x"}')},
     ["weat", "--model", "glove:{d}/v.txt", "--test", "{d}/t.json.gz"], "{d}/t.json.gz: gzip compression is not"),
    ("xz config under a plain name", {"c.yaml": lzma.compress(b"models: [glove-6b-50d]\ntests: [W6]\n")},
     ["run", "{d}/c.yaml", "--out", "{d}/o"], "{d}/c.yaml: xz compression is not supported"),
    ("bz2 SEAT templates", {"tpl.txt.bz2": bz2.compress(b"This is {}.\n")},
     ["seat", "--model", "minilm", "--test", "W6", "--templates", "{d}/tpl.txt.bz2"],
     "{d}/tpl.txt.bz2: bzip2 compression is not supported (a templates file is read as plain UTF-8 text"),
    # item 16 through weat: two tests of one file whose ids differ only in Unicode form printed as one
    ("test ids NFC and NFD in one file", {"t.yaml": "- id: T\u00e9\n  X: [w0, w1]\n  Y: [w2, w3]\n  A: [w4, w5]\n"
                                                   "  B: [w6, w7]\n- id: Te\u0301\n  X: [w0, w1]\n  Y: [w2, w3]\n"
                                                   "  A: [w4, w5]\n  B: [w6, w7]\n",
                                          "v.txt": _glove_text(_scaled_reference(1.0))},
     ["weat", "--model", "glove:{d}/v.txt", "--test", "{d}/t.yaml", "--calibration", "none"],
     "test ids 'T\\xe9' and 'Te\\u0301' look alike"),
    ("test ids with a zero-width space across files",
     {"a.yaml": _TOY_TEST, "b.yaml": _TOY_TEST.replace("id: toy", "id: to\u200by"),
      "v.txt": _glove_text(_scaled_reference(1.0))},
     ["weat", "--model", "glove:{d}/v.txt", "--test", "{d}/a.yaml,{d}/b.yaml", "--calibration", "none"],
     "test ids 'toy' and 'to\\u200by' look alike"),
    ("whiten reference row scaled by 1e10", {"v.txt": _glove_text(_scaled_reference(1e10))},
     ["whiten", "--model", "glove:{d}/v.txt", "--reference-size", "60", "--out", "{d}/w.npz"],
     "reference row 21 causes it"),
]


@pytest.mark.parametrize("name, files, args, expected", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_bad_input_gives_one_line_error(tmp_path, capsys, monkeypatch, name, files, args, expected):
    assert_one_line_error(tmp_path, capsys, monkeypatch, name, files, args, expected)


# --- library cases ------------------------------------------------------------------------------------
def _streamed_eps0(R):
    """ZCA with eps=0 fitted batch by batch (partial_fit), then used."""
    from isoeat import ZCAWhitener

    w = ZCAWhitener(eps=0).partial_fit(R[:30]).partial_fit(R[30:])
    return w.transform(R[:16])


def _singular():
    R = np.random.default_rng(0).normal(size=(60, 8))
    R[:, 3] = 0.0  # one dimension constant: the covariance is singular, eps=0 cannot whiten it
    return R


LIBRARY_CASES = [
    # item 1 through partial_fit with eps=0: the condition was never checked (an inf whitening matrix, NaN d)
    ("partial_fit eps 0 on a singular covariance", lambda: _streamed_eps0(_singular()), NotFittedError,
     "zca: eps=0 but the covariance has a zero eigenvalue"),
    ("partial_fit eps 0 with a row scaled by 1e12", lambda: _streamed_eps0(_scaled_reference(1e12)),
     NotFittedError, "not fitted yet"),
    ("partial_fit eps 0 with a row scaled by 1e8", lambda: _streamed_eps0(_scaled_reference(1e8)),
     NotFittedError, "has condition number"),
]


@pytest.mark.parametrize("name, call, exc, expected", LIBRARY_CASES, ids=[c[0] for c in LIBRARY_CASES])
def test_library_case(name, call, exc, expected):
    with pytest.raises(exc) as info:
        call()
    msg = str(info.value)
    assert expected in msg and "\n" not in msg, msg


def test_partial_fit_eps0_recovers_when_later_batches_fill_the_space():
    """A first batch smaller than the dimension is singular; the batches after it make the fit usable, and
    it is the fit on all rows (the same whitener as fit())."""
    from isoeat import ZCAWhitener

    R = _scaled_reference(1.0)
    w = ZCAWhitener(eps=0).partial_fit(R[:5])
    with pytest.raises(NotFittedError):
        w.transform(R[:2])
    w.partial_fit(R[5:])
    np.testing.assert_allclose(w.transform(R), ZCAWhitener(eps=0).fit(R).transform(R), atol=1e-9)


# --- value cases: the shrinkage whitener at shrinkage 0 is ZCA; its d is exact or the row is named -----
REFERENCE_CASES = [
    ("shrinkage 0 reference row x 1e8", 1e8),
    ("shrinkage 0 reference row x 1e12", 1e12),
    ("shrinkage 0 reference row x 1e30", 1e30),
]


@pytest.mark.parametrize("name, s", REFERENCE_CASES, ids=[c[0] for c in REFERENCE_CASES])
def test_shrinkage_extreme_row_gives_the_exact_d_or_is_named(name, s):
    from isoeat.calibration import make_calibrator

    R = _scaled_reference(s)
    try:
        got = _toy_d(make_calibrator("zca-shrinkage", eps=_EPS, shrinkage=0.0).fit(R).transform(R[:16]))
    except DataFormatError as exc:
        msg = str(exc)
        assert "zca-shrinkage" in msg and "reference row 21 causes it" in msg and "\n" not in msg, msg
        return
    # shrinkage 0: the shrunk covariance is the covariance, so the exact ZCA d (mpmath, test_bad_input_r4_a)
    assert got == pytest.approx(_exact_calibrated_d(R), abs=1e-6)


@pytest.mark.parametrize("factor, refused", [(1 - 1e-9, False), (1 + 1e-9, True)])
def test_shrinkage_condition_bound_at_its_boundary(factor, refused):
    """Shrinkage 0 on diag(a, 1) with ε = 1e-3: condition (a + ε)/(1 + ε) just below and above the bound
    1e-4 / float64 machine epsilon (the same bound as zca's)."""
    from isoeat.calibration import make_calibrator
    from isoeat.calibration.moments import CovarianceAccumulator

    bound = 1e-4 / np.finfo(np.float64).eps
    a = bound * (1 + _EPS) * factor - _EPS
    acc = CovarianceAccumulator.from_arrays({"n": 3, "mean": np.zeros(2), "comoment": np.diag([2 * a, 2.0])})
    cal = make_calibrator("zca-shrinkage", eps=_EPS, shrinkage=0.0)
    if refused:
        with pytest.raises(DataFormatError, match="has condition number"):
            cal._fit_moments(acc.mean, acc.covariance(), acc.n, None)
    else:
        cal._fit_moments(acc.mean, acc.covariance(), acc.n, None)


def test_shrinkage_well_conditioned_still_fits():
    """Ledoit-Wolf shrinkage (auto) on the extreme row: the shrunk covariance is well conditioned, so it fits."""
    from isoeat.calibration import make_calibrator

    make_calibrator("zca-shrinkage", eps=_EPS).fit(_scaled_reference(1e8))


TOTAL_CASES = len(CLI_CASES) + len(LIBRARY_CASES) + len(REFERENCE_CASES)


def test_catalogue_names_unique():
    names = [c[0] for c in CLI_CASES + LIBRARY_CASES + REFERENCE_CASES]
    assert len(names) == len(set(names)) == TOTAL_CASES
    assert all(isinstance(e, type) and issubclass(e, IsoeatError) for *_, e, _ in LIBRARY_CASES)


# --- item 6 through reproduce: paper_comparison.csv said 'paper' for a mapped model smaller than the reference ----
def test_reproduce_says_a_small_mapped_model_is_not_the_papers_protocol(tmp_path, monkeypatch, capsys):
    """The paper's GloVe mapped to a stand-in of every W1-W10 word and 300 fillers: its reference is all its rows,
    far fewer than the paper's 100,000, so neither paper_comparison.csv nor the printout may call it the paper's."""
    import csv

    from isoeat.wordsets import get_test

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    tests = [get_test(f"W{i}") for i in range(1, 11)]
    words = list(dict.fromkeys(w for t in tests for s in (t.X, t.Y, t.A, t.B) for w in s.words))
    words += [f"filler{i}" for i in range(300)]
    vecs = np.random.default_rng(7).standard_normal((len(words), 12)) + np.eye(12)[0] * 3.0
    (tmp_path / "g.txt").write_text("".join(w + " " + " ".join(f"{x:.6f}" for x in v) + "\n"
                                            for w, v in zip(words, vecs)), encoding="utf-8")
    rows = len(words)  # the file's rows (counted here): every one is in the reference sample
    assert main(["reproduce", "--model", "GloVe=glove:g.txt", "--models", "GloVe", "--no-extras", "--offline",
                 "--out", "rep"]) == 0
    out = capsys.readouterr().out
    said = f"reference {rows:,} (asked 100,000, only {rows:,} available; the paper: 100,000)"
    with open(tmp_path / "rep" / "paper_comparison.csv", newline="") as fh:
        protocols = {r["protocol"] for r in csv.DictReader(fh)}
    assert protocols == {f"not the paper's: {said}"}, protocols
    assert f"GloVe: not the paper's protocol: {said}" in out
    assert f"GloVe: not the paper's protocol: {said}" in (tmp_path / "rep" / "paper_comparison.md").read_text()


# --- item 6 through seat: its records carried no protocol field, its table no reduced-protocol line -----------
from test_sentence import tiny_st  # noqa: E402,F401  (a fixture: the tiny sentence-transformers model)


@pytest.mark.filterwarnings("ignore::isoeat.IsoeatWarning")  # the tiny model truncates sentences
def test_seat_records_say_their_protocol(tiny_st, tmp_path, monkeypatch, capsys):
    """SEAT's calibrator fitted on 40 reference sentences (the paper: 100,000) is not the paper's protocol: each
    record says so in ``protocol`` (as weat's, scweat's and run's do), the raw space's too, and the table's footer."""
    import json

    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    base = ["seat", "--model", f"st:{tiny_st}", "--test", "W7", "--reference-size", "40", "--permutations", "200",
            "--device", "cpu"]
    assert main(base + ["--format", "json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    by_space = {r["calibration"]: r["protocol"] for r in recs}
    assert by_space["none"] == "paper" or "reference" not in by_space["none"], by_space
    assert by_space["zca"].startswith("reduced: reference 40 (") and "the paper: 100,000" in by_space["zca"], by_space
    assert main(base) == 0
    assert "! Reduced protocol, not the paper's: reference 40 (" in capsys.readouterr().out


# --- item 6 through ceat: its records carried no protocol field either --------------------------------------
@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    pytest.importorskip("torch")
    from test_transformer import build_tiny

    return build_tiny(tmp_path_factory.mktemp("r4n-tiny") / "bert", "bert-uncased")


@pytest.mark.filterwarnings("ignore::isoeat.IsoeatWarning")  # the tiny model's small reference: singular
def test_ceat_records_say_their_protocol(tiny_bert, tmp_path, capsys):
    """CEAT on a contextual model with 5 contexts per word (the paper: 20) and a calibrator fitted on 40 sentences:
    both spaces' records say the contexts, the calibrated one the reference too; the table a '!' line."""
    import json

    from test_transformer import CORPUS

    corpus_file = tmp_path / "corpus.txt"
    corpus_file.write_text("\n".join(f"{s[:-1]} on day {n}." for n in ("one two three four five six seven "
                                                                        "eight").split() for s in CORPUS) + "\n")
    test_file = tmp_path / "tiny.yaml"
    test_file.write_text("id: tiny\nbias_type: custom\nX: [quokka, fox]\nY: [doctor, nurse]\n"
                         "A: [garden, flowers]\nB: [hospital, violin]\n")
    base = ["ceat", "--model", f"hf:{tiny_bert}", "--test", str(test_file), "--corpus", str(corpus_file),
            "--device", "cpu", "--no-cache", "--draws", "20", "--reference-size", "40", "--contexts", "5"]
    assert main(base + ["--format", "json"]) == 0
    recs = {r["calibration"]: r["protocol"] for r in json.loads(capsys.readouterr().out)}
    assert recs["none"] == "reduced: 5 contexts per word (the paper: 20)", recs
    assert recs["zca"].startswith("reduced: reference 40 (") and "5 contexts per word" in recs["zca"], recs
    assert main(base) == 0
    assert "! Reduced protocol, not the paper's: reference 40 (" in capsys.readouterr().out


# --- items 1 and 13 through centring: one extreme reference row leaves every test vector on one direction -------
# The centred vectors x - mean all point along the extreme row (the mean holds 1/60 of it): their cosines are 1
# within 1e-20, below float64's resolution of 1.1e-16 near 1, so their association scores are rounding noise and
# d was printed as a number (0.71, with a "sign reversal" against the raw -0.97), exit 0.
def _scores(Z):
    """s(w) of the toy test (rows 0-3 X, 4-7 Y, 8-11 A, 12-15 B), from the definition (Caliskan et al. 2017)."""
    U = Z / np.linalg.norm(Z, axis=1, keepdims=True)
    X, Y, A, B = U[:4], U[4:8], U[8:12], U[12:16]
    return np.concatenate([(W @ A.T).mean(1) - (W @ B.T).mean(1) for W in (X, Y)])


@pytest.mark.parametrize("s, undefined", [(1e4, False), (1e6, False), (1e10, True), (1e12, True)])
def test_scores_within_cosine_rounding_leave_d_undefined(s, undefined):
    from isoeat.stats.weat import weat_from_vectors

    R = _scaled_reference(s)
    Z = R[:16] - R.mean(axis=0)  # centring, from scratch
    sc = _scores(Z)
    spread = np.sort(sc)[-4:].sum() - np.sort(sc)[:4].sum()
    assert bool(spread <= 4 * 1e-10) == undefined  # the premise: the X-side sums span at most 4 x 1e-10 or not
    r = weat_from_vectors(Z[:4], Z[4:8], Z[8:12], Z[12:16], rng=0)
    if undefined:
        assert np.isnan(r.effect_size) and np.isnan(r.p_value) and "float64 rounding" in r.undefined, r
    else:  # d from scratch (ddof 1)
        assert r.undefined == "" and r.effect_size == pytest.approx((sc[:4].mean() - sc[4:].mean()) / np.std(sc, ddof=1))


@pytest.mark.parametrize("factor, undefined", [(1.0, True), (1.0 + 1e-9, False)])
def test_score_resolution_at_its_boundary(factor, undefined):
    """The rule: X-side sums spanning at most n x 1e-10 (n the X-side size) are undefined, inclusive."""
    from isoeat.labels import SCORE_RESOLUTION, undefined_reason

    assert SCORE_RESOLUTION == 1e-10
    why = undefined_reason(0.5, "weat", 4 * 1e-10 * factor, 1e-30, n=4)
    assert bool(why) is undefined


def test_centred_extreme_row_prints_no_d(tmp_path, capsys, monkeypatch):
    import json

    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "v.txt").write_text(_glove_text(_scaled_reference(1e12)))
    (tmp_path / "t.yaml").write_text(_TOY_TEST)
    assert main(["weat", "--model", f"glove:{tmp_path}/v.txt", "--test", f"{tmp_path}/t.yaml", "--calibration",
                 "center", "--reference-size", "60", "--format", "json"]) == 0
    recs = {r["calibration"]: r for r in json.loads(capsys.readouterr().out)}
    assert recs["none"]["effect_size"] is not None
    assert recs["center"]["effect_size"] is None and "float64 rounding" in recs["center"]["undefined"]


# --- item 29 through --test: a test file whose path holds a comma was split into "unknown test id" -------------
def test_a_test_file_with_a_comma_in_its_path_is_read_whole(tmp_path, capsys, monkeypatch):
    import json

    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "a,b"
    folder.mkdir()
    (folder / "t,1.yaml").write_text(_TOY_TEST)
    (tmp_path / "v.txt").write_text(_glove_text(_scaled_reference(1.0)))
    for spec in (f"{folder}/t,1.yaml", f"{folder}/t,1.yaml:toy"):
        assert main(["weat", "--model", f"glove:{tmp_path}/v.txt", "--test", spec, "--calibration", "none",
                     "--format", "json"]) == 0, capsys.readouterr().err
        (rec,) = json.loads(capsys.readouterr().out)
        assert rec["test"] == "toy"
    # a list still splits at its commas (W6 and the file), and a missing path with a comma says it was split
    assert main(["weat", "--model", f"glove:{tmp_path}/v.txt", "--test", f"{folder}/nope,2.yaml",
                 "--calibration", "none"]) == 2
    assert "split at its commas" in capsys.readouterr().err



def test_sensitivity_reference_text_with_a_comma_in_its_path_is_read_whole(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "a,b"
    folder.mkdir()
    names = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(60)]  # letters only: reference-text words
    (folder / "ref,1.txt").write_text(" ".join(names) + " .\n")
    (tmp_path / "v.txt").write_text("".join(f"{w} " + " ".join(repr(float(x)) for x in row) + "\n"
                                            for w, row in zip(names, _scaled_reference(1.0))))
    (tmp_path / "t.yaml").write_text(f"id: toy\nX: {names[0:4]}\nY: {names[4:8]}\nA: {names[8:12]}\n"
                                     f"B: {names[12:16]}\n")
    code = main(["sensitivity", "--model", f"glove:{tmp_path}/v.txt", "--test", f"{tmp_path}/t.yaml",
                 "--reference-text", f"{folder}/ref,1.txt", "--eps", "none", "--reference-sizes", "none",
                 "--permutations", "100", "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "ref,1.txt" in captured.out


# --- item 20 across a grid: 20 did-you-means per test, but no bound per model over many tests -----------------
def test_suggestions_are_bounded_per_model_across_tests(tmp_path, capsys, monkeypatch):
    """Ten tests of one file, each dropping 20 words of its own: each test's suggestions are bounded (20 words),
    and the model's too, whatever the number of tests (SUGGEST_MODEL_WORDS distinct words at most)."""
    import isoeat.backends.static as static
    from isoeat._validate import SUGGEST_MODEL_WORDS, SUGGEST_WORDS

    assert SUGGEST_MODEL_WORDS == 5 * SUGGEST_WORDS
    calls = []
    real = static.suggest_words
    monkeypatch.setattr(static, "suggest_words", lambda w, *a, **k: calls.append(w) or real(w, *a, **k))
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "v.txt").write_text(_glove_text(_scaled_reference(1.0)))
    tests = "".join(f"- id: t{k}\n  X: [w0, w1, w2, w3, {', '.join(f'missing{k}x{j}' for j in range(20))}]\n"
                    "  Y: [w4, w5, w6, w7]\n  A: [w8, w9, w10, w11]\n  B: [w12, w13, w14, w15]\n" for k in range(10))
    (tmp_path / "t.yaml").write_text(tests)
    assert main(["weat", "--model", f"glove:{tmp_path}/v.txt", "--test", f"{tmp_path}/t.yaml", "--calibration",
                 "none", "--min-coverage", "0.1", "--permutations", "100"]) == 0
    out = capsys.readouterr().out
    assert len(calls) == SUGGEST_MODEL_WORDS == len(set(calls)), len(calls)
    assert "t9: " in out and "X:missing9x19" in out  # later tests: their dropped words are listed still
