"""Parameter objects of functions that took many related options (issue 41, item 4: the function budget).

``seat``'s sentences (:class:`SentenceOptions`), ``ceat_from_contexts``'s labels (:class:`CEATLabels`) and
``compare_anisotropy``'s settings (:class:`AnisotropySettings`) are each one object, and each field is still a
keyword of its own: both spellings give the same result, an object and a keyword are merged, a wrong object or a
typo is one line naming it.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import isoeat
from isoeat.backends import StaticVectors
from isoeat.diagnostics.anisotropy import AnisotropySettings, compare_anisotropy
from isoeat.stats.ceat import CEATLabels, ceat_from_contexts
from isoeat.stats.options import own
from isoeat.stats.seat import SentenceOptions, seat


class _Sentences:
    """A sentence encoder whose vector of a text is fixed by the text's SHA-256 (no model needed)."""

    name = "hashed"

    def encode_sentences(self, texts):  # noqa: ANN001, ANN201
        rows = [np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).normal(size=8)
                for t in texts]
        return np.asarray(rows)


def _d_from_scratch(X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray) -> float:
    # Caliskan et al. (2017): s(w) = mean cos(w, A) - mean cos(w, B); d = (mean s(X) - mean s(Y)) / sd(s(X u Y))
    def cos(U: np.ndarray, V: np.ndarray) -> np.ndarray:
        U = U / np.linalg.norm(U, axis=1, keepdims=True)
        V = V / np.linalg.norm(V, axis=1, keepdims=True)
        return U @ V.T

    sx = cos(X, A).mean(1) - cos(X, B).mean(1)
    sy = cos(Y, A).mean(1) - cos(Y, B).mean(1)
    return float((sx.mean() - sy.mean()) / np.concatenate([sx, sy]).std(ddof=1))


def test_seat_sentences_by_object_and_by_keyword_agree() -> None:
    enc = _Sentences()
    templates = ["This is {}.", "{} is here."]
    flat = seat(enc, "W6", templates=templates, mode="templates", capitalize=False, alpha=0.1, rng=0)
    obj = seat(enc, "W6", sentences=SentenceOptions(templates=templates, mode="templates", capitalize=False,
                                                    alpha=0.1), rng=0)
    mixed = seat(enc, "W6", sentences=SentenceOptions(templates=templates, capitalize=False), alpha=0.1,
                 mode="templates", rng=0)
    assert flat.to_dict() == obj.to_dict() == mixed.to_dict()
    assert flat.templates == tuple(templates) and flat.alpha == 0.1
    # the first template's d, from scratch on the encoded sentences (capitalize=False: the words as written)
    test = isoeat.get_test("W6")
    sets = {r: np.asarray(enc.encode_sentences([templates[0].format(w) for w in ws.words]))
            for r, ws in test.sets().items()}
    assert flat.results[0].effect_size == pytest.approx(_d_from_scratch(sets["X"], sets["Y"], sets["A"],
                                                                        sets["B"]), abs=1e-12)


def test_seat_refuses_a_wrong_object_and_a_typo_in_one_line() -> None:
    with pytest.raises(isoeat.ConfigError, match=r"^seat: sentences= takes a SentenceOptions\(\.\.\.\), got dict$"):
        seat(_Sentences(), "W6", sentences={"mode": "templates"})
    with pytest.raises(isoeat.ConfigError, match=r"^seat: unknown option 'capitalise'; did you mean capitalize\?$"):
        seat(_Sentences(), "W6", capitalise=False)
    with pytest.raises(isoeat.ConfigError, match="mode"):
        seat(_Sentences(), "W6", sentences=SentenceOptions(mode="words"))


def _contexts() -> dict[str, list[np.ndarray]]:
    r = np.random.default_rng(0)
    return {role: [r.normal(size=(3, 5)) + (1.0 if role in "XA" else 0.0) for _ in range(3)] for role in "XYAB"}


def test_ceat_labels_by_object_and_by_keyword_agree() -> None:
    words = {"X": ["a", "b", "c"], "Y": ["d", "e", "f"], "A": ["g", "h", "i"], "B": ["j", "k", "l"]}
    flat = ceat_from_contexts(_contexts(), n_draws=20, rng=1, test="T", model="m", words=words, dropped=("X:z",),
                              fallback=("A:y",))
    obj = ceat_from_contexts(_contexts(), n_draws=20, rng=1, labels=CEATLabels(
        test="T", model="m", words=words, dropped=("X:z",), fallback=("A:y",)))
    assert flat == obj
    (r,) = flat
    assert (r.test, r.model, r.dropped, r.fallback) == ("T", "m", ("X:z",), ("A:y",))
    assert set(r.n_contexts) == {w for ws in words.values() for w in ws}
    (plain,) = ceat_from_contexts(_contexts(), n_draws=20, rng=1)
    assert plain.test == "custom" and plain.effect_sizes == r.effect_sizes  # labels change no number


def test_ceat_refuses_a_wrong_object_and_a_typo_in_one_line() -> None:
    with pytest.raises(isoeat.ConfigError, match=r"^ceat_from_contexts: labels= takes a CEATLabels\(\.\.\.\)"):
        ceat_from_contexts(_contexts(), labels="T")
    with pytest.raises(isoeat.ConfigError, match=r"^ceat_from_contexts: unknown keyword 'tset'; did you mean test"):
        ceat_from_contexts(_contexts(), tset="T")


def test_anisotropy_settings_by_object_and_by_keyword_agree() -> None:
    r = np.random.default_rng(0)
    m = StaticVectors([f"w{i}" for i in range(300)], r.normal(size=(300, 6)) + 2.0, name="toy")
    kw = dict(rng=2, n_reference=300)
    flat = compare_anisotropy(m, "zca", n_samples=100, top_k=3, frame="reference", return_matrix=True,
                              matrix_size=5, **kw)
    obj = compare_anisotropy(m, "zca", settings=AnisotropySettings(n_samples=100, top_k=3, frame="reference",
                                                                   return_matrix=True, matrix_size=5), **kw)
    assert [a.to_dict() for a in flat] == [b.to_dict() for b in obj]
    assert all(np.array_equal(a.cosine_matrix, b.cosine_matrix) for a, b in zip(flat, obj))
    assert flat[0].cosine_matrix.shape == (5, 5) and flat[0].n_requested == 100
    with pytest.raises(isoeat.ConfigError, match=r"^compare_anisotropy: unknown keyword 'top_n'; did you mean top_k"):
        compare_anisotropy(m, top_n=3)


def test_own_takes_its_fields_out_and_leaves_the_rest() -> None:
    options = {"mode": "sentences", "alternative": "less"}
    got = own(SentenceOptions, SentenceOptions(alpha=0.2), options, where="seat", name="sentences")
    assert got == SentenceOptions(mode="sentences", alpha=0.2) and options == {"alternative": "less"}
    assert own(SentenceOptions, None, {}, where="seat", name="sentences", last=True) == SentenceOptions()
