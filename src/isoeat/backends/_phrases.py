r"""Multi-word stimuli (phrases) on static vectors: a phrase token, else the mean of the words.

The one rule (:data:`PHRASE_RULE`), applied by :meth:`isoeat.backends.static.StaticVectors.lookup` to a
stimulus that holds whitespace (``"new york"``) and is not itself a vocabulary entry:

1. **phrase token**: its words joined by ``_`` (``new_york``, ``New_York`` — how word2vec and fastText
   spell phrases), looked up as a word is (as given, then the model's lowercase fallback);
2. **mean of words**: else, when every word is in the vocabulary (each as a word is looked up), the mean of
   the words' **raw** vectors, as stored in the file, before any normalisation or calibration:

   .. math:: \vec p = \frac{1}{k}\sum_{i=1}^{k}\vec w_i

3. **missing**: else the phrase is missing, named with the first word the vocabulary lacks.

A calibrated space sees the same composed vector: the phrase is composed raw, then transformed with every
other vector. For ZCA whitening (affine, :math:`T(v) = W(v-\mu)`) the order does not matter, since
:math:`W(\tfrac1k\sum_i \vec w_i - \mu) = \tfrac1k\sum_i W(\vec w_i - \mu)`; for a calibration that is not
affine it would, and the rule is compose first. Cosine is not linear in its arguments, so the mean of raw
vectors and the mean of unit vectors differ: the raw mean is the rule (a word with a longer vector weighs
more in the phrase's direction; Mikolov et al. 2013 compose phrases by adding word vectors).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

__all__ = ["PHRASE_RULE", "PHRASE_RULE_VERSION", "EMBEDDINGS", "phrase_words", "compose", "rule_key"]

#: How a stimulus can be embedded, in the order the rule tries them.
EMBEDDINGS = ("token", "phrase-token", "mean-of-words")

#: The rule in one sentence (table footers, docs).
PHRASE_RULE = (
    "a phrase is its vocabulary token with '_' between its words if there is one (as given, then "
    "lowercased where the model folds case), else the mean of its words' raw vectors, before calibration"
)

#: Raise with any change of :func:`compose`'s arithmetic that leaves :data:`PHRASE_RULE`'s text as it is.
PHRASE_RULE_VERSION = 1

Row = Callable[[str], "tuple[int | None, str | None]"]


def phrase_words(stimulus: str) -> list[str]:
    """The words of a stimulus split at whitespace; a stimulus of one word is no phrase (``[]``).

    Examples
    --------
    >>> phrase_words("new  york"), phrase_words("york")
    (['new', 'york'], [])
    """
    parts = stimulus.split()
    return parts if len(parts) > 1 else []


def compose(stimulus: str, row: Row, vectors: np.ndarray) -> tuple[str, np.ndarray | None, str, str]:
    """``(how, vector, entry, missing_word)`` of a phrase not found as it is (see the module's rule).

    ``row(word) -> (index, folded entry)`` is the model's word lookup. ``how`` is ``"phrase-token"``,
    ``"mean-of-words"`` or ``"missing"``; ``vector`` the float64 vector (``None`` when missing);
    ``entry`` the vocabulary form matched when it differs from the stimulus by case (``""`` otherwise), the
    words' entries joined by a space for a mean; ``missing_word`` the first word not found.

    Examples
    --------
    >>> vocab = {"new": 0, "york": 1, "los_angeles": 2}
    >>> row = lambda w: (vocab.get(w.lower()), None if w in vocab else w.lower())
    >>> M = np.array([[1.0, 0.0], [0.0, 3.0], [2.0, 2.0]])
    >>> how, v, entry, gap = compose("new york", row, M)
    >>> how, v.tolist()
    ('mean-of-words', [0.5, 1.5])
    >>> compose("Los Angeles", row, M)[0::2]
    ('phrase-token', 'los_angeles')
    >>> compose("new yrok", row, M)[0::3]
    ('missing', 'yrok')
    """
    words = phrase_words(stimulus)
    i, via = row("_".join(words))
    if i is not None:
        return "phrase-token", np.asarray(vectors[i], dtype=np.float64), via or "", ""
    rows, entries = [], []
    for w in words:
        j, wvia = row(w)
        if j is None:
            return "missing", None, "", w
        rows.append(j)
        entries.append(wvia or w)
    mat = np.asarray(vectors[np.asarray(rows, dtype=np.int64)], dtype=np.float64)
    entry = " ".join(entries)
    return "mean-of-words", mat.mean(axis=0), entry if entry != " ".join(words) else "", ""


def rule_key(words: Iterable[str]) -> dict[str, str]:
    """``{"phrase_rule": ...}`` (the rule's version and text) when a stimulus of ``words`` is a phrase, else ``{}``.

    Part of a test's content hash (:func:`isoeat.experiments.config.test_hash`): a run folder's cell of a test
    with phrases is recomputed when the rule changes; a test without phrases keeps its hash.

    Examples
    --------
    >>> rule_key(["york", "paris"]), list(rule_key(["new york"]))
    ({}, ['phrase_rule'])
    """
    if not any(phrase_words(w) for w in words):
        return {}
    return {"phrase_rule": f"{PHRASE_RULE_VERSION}: {PHRASE_RULE}"}
