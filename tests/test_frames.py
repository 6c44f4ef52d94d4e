"""Sampling frames of anisotropy (isoeat.diagnostics.frames): which vectors the mean cosine is computed on.

Expected values are computed here from scratch: the mean of the off-diagonal pairwise cosines of the exact set
of vectors a frame must hold, when the frame holds no more than the sample size (so no draw is involved).
"""

from __future__ import annotations

import numpy as np
import pytest

import isoeat
from isoeat.cli import main
from isoeat.diagnostics import compare_anisotropy
from isoeat.diagnostics.frames import parse_frame, sample_frame


def _mean_cos(V):
    U = V / np.linalg.norm(V, axis=1, keepdims=True)
    C = U @ U.T
    n = len(V)
    return float((C.sum() - np.trace(C)) / (n * (n - 1)))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    g = np.random.default_rng(0)
    words = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(40)]   # letters only: text tokens
    V = g.standard_normal((40, 6)) + 0.8          # a shared offset: anisotropic
    f = tmp_path_factory.mktemp("frames") / "tiny.txt"
    f.write_text("\n".join(w + " " + " ".join(f"{x:.6f}" for x in v) for w, v in zip(words, V)) + "\n")
    m = isoeat.load_model(f"glove:{f}")
    return m, words, np.asarray(m.vectors, dtype=np.float64)   # the stored (rounded) vectors, row i = word wi


def test_vocabulary_top_n_is_the_first_n_rows(tiny):
    m, _, V = tiny
    (raw,) = compare_anisotropy(m, n_samples=50, frame="vocabulary-top:12", rng=0)
    assert raw.mean_cosine == pytest.approx(_mean_cos(V[:12]), abs=1e-12)
    assert "frame vocabulary-top:12: all 12 of the top 12 vocabulary rows" in raw.sampling


def test_vocabulary_all_draws_over_every_row(tiny):
    m, _, V = tiny
    (raw,) = compare_anisotropy(m, n_samples=40, frame="vocabulary-all", rng=0)
    assert raw.mean_cosine == pytest.approx(_mean_cos(V), abs=1e-12)
    X, desc, _ = sample_frame(m, "vocabulary-all", 10, rng=3)
    rows = [int(np.flatnonzero((V == x).all(axis=1))[0]) for x in X]
    assert len(set(rows)) == 10 and rows == sorted(rows) and "10 of the 40 vocabulary rows (all)" in desc


def test_corpus_types_and_tokens(tiny, tmp_path):
    m, words, V = tiny
    text = tmp_path / "t.txt"
    # words[3] three times, words[5] twice, words[7] once, an unknown word twice
    w3, w5, w7 = words[3], words[5], words[7]
    text.write_text(f"{w3} {w5} {w3} zzz\n{w7} {w3} {w5} zzz\n")
    (types,) = compare_anisotropy(m, n_samples=50, frame=f"corpus-types:{text}", rng=0)
    assert types.mean_cosine == pytest.approx(_mean_cos(V[[3, 5, 7]]), abs=1e-12)
    (tokens,) = compare_anisotropy(m, n_samples=50, frame=f"corpus-tokens:{text}", rng=0)
    # every token: the repeated words' copies have cosine 1 with each other
    assert tokens.mean_cosine == pytest.approx(_mean_cos(V[[3, 3, 3, 5, 5, 7]]), abs=1e-12)
    assert "6 of the 6 in-vocabulary word tokens" in tokens.sampling
    X, desc, _ = sample_frame(m, f"corpus-tokens:{text}", 4, rng=1)
    assert len(X) == 4 and "drawn without replacement from the token stream" in desc
    counts = {i: sum((V[i] == x).all() for x in X) for i in (3, 5, 7)}
    assert counts[3] <= 3 and counts[5] <= 2 and counts[7] <= 1     # never more copies than tokens


def test_a_text_is_counted_once_while_its_content_is_the_same(tiny, tmp_path, monkeypatch):
    """Frame paper's cells (raw, calibrated) count the reference text once; a changed text is counted again
    (the memo is keyed by the content's SHA-256)."""
    import isoeat.backends.static as static
    from isoeat.diagnostics import frames

    m, words, V = tiny
    calls = []
    real = static._word_counts
    monkeypatch.setattr(static, "_word_counts", lambda path: calls.append(path) or real(path))
    monkeypatch.setattr(frames, "_COUNTS", {})
    text = tmp_path / "t.txt"
    text.write_text(f"{words[1]} {words[2]} {words[1]}\n")
    for _ in range(3):
        (r,) = compare_anisotropy(m, n_samples=50, frame=f"corpus-types:{text}", rng=0)
        assert r.mean_cosine == pytest.approx(_mean_cos(V[[1, 2]]), abs=1e-12)
    assert len(calls) == 1
    # new content under the same name (another size too: file_sha256 itself trusts size, mtime and inode)
    text.write_text(f"{words[1]} {words[2]} {words[4]} {words[4]}\n")
    (r,) = compare_anisotropy(m, n_samples=50, frame=f"corpus-types:{text}", rng=0)
    assert r.mean_cosine == pytest.approx(_mean_cos(V[[1, 2, 4]]), abs=1e-12) and len(calls) == 2
    for i in range(3):  # at most two texts kept
        other = tmp_path / f"o{i}.txt"
        other.write_text(f"{words[i]} {words[i + 5]}\n")
        compare_anisotropy(m, n_samples=50, frame=f"corpus-types:{other}", rng=0)
    assert len(frames._COUNTS) == 2


def test_the_counts_memo_reads_content_not_name_size_or_time(tiny, tmp_path):
    """An edit of the same size with the time put back is counted anew; the same bytes under a .gz name and a
    plain name are two texts (one decompressed, one not)."""
    import gzip
    import os
    import shutil

    from isoeat._errors import DataFormatError

    m, words, V = tiny
    text = tmp_path / "t.txt"
    text.write_text(f"{words[1]} {words[2]}\n")
    st = os.stat(text)
    (r,) = compare_anisotropy(m, n_samples=50, frame=f"corpus-types:{text}", rng=0)
    assert r.mean_cosine == pytest.approx(_mean_cos(V[[1, 2]]), abs=1e-12)
    text.write_text(f"{words[1]} {words[3]}\n")  # the same length
    os.utime(text, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(text).st_size == st.st_size
    (r,) = compare_anisotropy(m, n_samples=50, frame=f"corpus-types:{text}", rng=0)
    assert r.mean_cosine == pytest.approx(_mean_cos(V[[1, 3]]), abs=1e-12)
    packed = tmp_path / "g.txt.gz"
    with gzip.open(packed, "wt") as fh:
        fh.write(f"{words[4]} {words[5]}\n")
    (r,) = compare_anisotropy(m, n_samples=50, frame=f"corpus-types:{packed}", rng=0)
    assert r.mean_cosine == pytest.approx(_mean_cos(V[[4, 5]]), abs=1e-12)
    plain = tmp_path / "g_raw.txt"
    shutil.copy(packed, plain)
    # the same bytes under a plain name are not read as gzip (the memo keys by the name too): said so in one line
    with pytest.raises(DataFormatError, match="a gzip file without a .gz name"):
        compare_anisotropy(m, n_samples=50, frame=f"corpus-types:{plain}", rng=0)


@pytest.mark.parametrize("frame, message", [
    ("vocab-all", "one of reference"), ("vocabulary-top", "vocabulary-top:N"), ("vocabulary-top:x", "integer"),
    ("vocabulary-top:1", "vocabulary-top N"), ("vocabulary-all:5", "takes no argument"),
    ("corpus-tokens", "corpus-tokens:TEXT"), ("", "one of reference"),
])
def test_bad_frames_refused(frame, message):
    with pytest.raises(isoeat.ConfigError, match=message):
        kind, arg = parse_frame(frame)
        if kind == "vocabulary-top":
            from isoeat.diagnostics.frames import _top_n

            _top_n(arg)


def test_frames_other_than_reference_need_a_static_model():
    class Contextual:
        name = "ctx"

    with pytest.raises(isoeat.ConfigError, match="static vector models"):
        sample_frame(Contextual(), "vocabulary-all", 10)


def test_cli_prints_the_frame(glove, capsys):
    assert main(["anisotropy", "--calibration", "none", "--frame", "vocabulary-top:2000", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert "frame vocabulary-top:2000" in out
    assert main(["anisotropy", "--calibration", "none", "--samples", "300", "--frame", "reference"]) == 0
    assert "Sample: frame reference:" in capsys.readouterr().out
    assert main(["anisotropy", "--calibration", "none", "--samples", "300"]) == 0  # the default: the paper's
    assert "Sample: frame paper: 300 of the " in capsys.readouterr().out


def test_the_paper_frame_of_a_static_model_is_the_vocabulary_items_of_the_reference_text(glove, monkeypatch):
    """Frame paper (the default of run's isotropy check and of anisotropy): the distinct in-vocabulary words of
    WikiText-2 here (no WikiText-103), each once; its mean cosine computed from scratch: unit rows u_i of the
    distinct words, mean over i != j of u_i.u_j = (|sum u|^2 - N) / (N (N - 1))."""
    import gzip
    import re

    from isoeat.diagnostics.frames import _paper_text

    monkeypatch.delenv("ISOEAT_WIKITEXT103", raising=False)
    path, _ = _paper_text()  # a shared copy's training split, else the WikiText-2 test split bundled (never skipped)
    data = path.read_bytes()
    text = (gzip.decompress(data) if path.name.endswith(".gz") else data).decode("utf-8")
    words = set(re.findall(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", text))
    rows = sorted({glove.row(w)[0] for w in words} - {None})
    u = np.asarray(glove.vectors[rows], dtype=float)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    s = u.sum(axis=0)
    expected = (s @ s - len(rows)) / (len(rows) * (len(rows) - 1))
    (raw,) = compare_anisotropy(glove, None, rng=0)  # the default frame
    assert raw.frame == "paper" and raw.frame_size == len(rows)
    assert raw.mean_cosine == pytest.approx(expected, rel=1e-9)
    assert 0.05 < expected < 0.09  # 0.068 for GloVe 6B 50d on WikiText-2's test text (the paper's 300d: 0.192)


def test_run_checks_isotropy_on_the_paper_frame_and_names_it(glove, tmp_path, capsys):
    """The isotropy check under run's table: frame paper by default, named on the line, the same figures as
    'isoeat anisotropy' (one frame, one seed stream); another frame by name; a bad one refused in one line."""
    from isoeat.experiments.results import load_experiment

    out = tmp_path / "r"
    assert main(["run", "--tests", "W6", "--permutations", "1000", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert ("raw space: anisotropic (frame paper: vocabulary items of WikiText-2 (test split, bundled); mean cosine, "
            "IsoScore and top-PC share exact over its") in printed  # issue 45: the spectrum is the frame's too
    raw = next(a for a in load_experiment(out).anisotropy if a["calibration"] == "none")
    assert raw["frame"] == "paper"
    alone = compare_anisotropy(glove, None, rng=0)[0]
    assert (raw["mean_cosine"], raw["isoscore"]) == pytest.approx((alone.mean_cosine, alone.isoscore), rel=1e-12)
    assert main(["run", "--tests", "W6", "--permutations", "1000", "--frame", "vocabulary-top:5000", "-q"]) == 0
    assert "(frame vocabulary-top:5000: mean cosine, IsoScore and top-PC share exact over its 5,000 vectors" in capsys.readouterr().out
    cfg = tmp_path / "c.yaml"
    cfg.write_text("models: [glove-6b-50d]\ntests: [W6]\ncalibrations: [none, zca]\nanisotropy: {frame: bogus}\n")
    assert main(["run", str(cfg), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "anisotropy.frame" in err and "bogus" in err


def test_the_paper_frame_of_a_model_without_the_corpus_words_is_the_reference_pool_and_says_so():
    """A static model whose vocabulary holds too few of the reference corpus's words (another language, a toy):
    frame paper cannot be measured; the reference pool stands in, the record says frame reference and why."""
    from isoeat.backends.static import StaticVectors

    r = np.random.default_rng(0)
    toy = StaticVectors([f"zz{i}" for i in range(300)], r.normal(size=(300, 5)) + 1.0, name="toy")
    (raw,) = compare_anisotropy(toy, None, n_samples=100, rng=0)
    assert raw.frame == "reference" and raw.sampling.startswith("frame paper not measurable")
    alone = compare_anisotropy(toy, None, n_samples=100, rng=0, frame="reference")[0]
    assert raw.mean_cosine == pytest.approx(alone.mean_cosine, rel=1e-12)  # the whole pool: exact, seed-free


def test_the_paper_frame_without_any_reference_corpus_here_is_the_pool_and_says_so(glove, monkeypatch):
    """No reference text readable (an install that lost its bundled WikiText-2): frame paper falls back to the reference pool (the
    run's isotropy check still measures, and names what it measured) instead of failing the run."""
    import isoeat.diagnostics.frames as frames
    from isoeat._errors import IsoeatFileNotFoundError

    def nothing():
        raise IsoeatFileNotFoundError("corpus auto: no corpus is present offline (install gensim ...)")

    monkeypatch.setattr(frames, "_paper_text", nothing)
    (raw,) = compare_anisotropy(glove, None, n_samples=200, rng=0)
    assert raw.frame == "reference" and raw.sampling.startswith("frame paper not measurable (corpus auto: no corpus")
