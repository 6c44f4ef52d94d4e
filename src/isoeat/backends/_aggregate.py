r"""Aggregated contextual word vectors (Bommasani et al. 2020) for ``hf:`` models: the lookup side.

For each word, up to ``contexts_per_word`` sentences that contain it are
drawn from the reference corpus with a seed derived from the encoder's seed
and the word; each sentence is encoded once, the word's subword tokens are
mean-pooled, and the pooled vectors are averaged over the sentences:

.. math::

    \vec w = \frac{1}{|C_w|}\sum_{c\in C_w}\frac{1}{|T_{w,c}|}\sum_{t\in T_{w,c}} h^{(\ell)}_t(c)

``occurrences="first"`` (default): :math:`T_{w,c}` are the tokens of the
*first* whole-word occurrence of the word in :math:`c`. ``occurrences="all"``:
each occurrence :math:`o` of the word in :math:`c` is pooled on its own and the
sentence contributes the mean over its occurrences,
:math:`\frac{1}{|O_{w,c}|}\sum_{o}\frac{1}{|T_{o}|}\sum_{t\in T_o} h^{(\ell)}_t(c)`
(occurrences cut off by truncation are left out).

A word with no context follows the ``missing`` policy (encoded once in the
fallback template, or reported as missing: no context in the corpus). Results are cached per
word and per looked-up set of words.

:class:`_WordAggregation` is a mixin for
:class:`~isoeat.backends.transformer.TransformerEncoder`: it uses the host's
``corpus``, ``cache``, ``model_key``, ``layer``, ``dim``, ``seed``,
``contexts_per_word``, ``occurrences``, ``missing``, ``fallback_template``, ``max_length_key``,
``_encode_seqs`` and ``_pool``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import ConfigError, DataFormatError, IsoeatWarning
from ._contextual import _texts_digest
from .base import Lookup

if TYPE_CHECKING:
    from .cache import EmbeddingCache

__all__ = ["ContextualLookup", "FALLBACK_TEMPLATE", "MISSING_POLICIES", "OCCURRENCES"]

#: Neutral template for words with no context under ``missing="fallback"``.
FALLBACK_TEMPLATE = "This is {}."
MISSING_POLICIES = ("fallback", "drop")
#: Which occurrences of a word in a context sentence are pooled.
OCCURRENCES = ("first", "all")
# Bumped when the aggregation's arithmetic changes: part of every cache key.
_ALGO = "aggregated-2"
_POOLING = "subword-mean"


# ----------------------------------------------------------------------------
# lookup report
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextualLookup(Lookup):
    """A :class:`~isoeat.backends.base.Lookup` with what contextual aggregation adds.

    Attributes
    ----------
    fallback : tuple of str
        Found words that had no context in the corpus and were encoded in the
        neutral template (``missing="fallback"``).
    n_contexts : tuple of int
        Sentences averaged for each found word (1 for fallbacks), in ``found`` order.
    truncated : int
        Contexts longer than the model's maximum, truncated around the word.
    corpus : str
        The corpus the contexts come from, by name: ``missing`` holds the words that have no context in it
        (``missing="drop"``), not words out of a vocabulary.
    """

    fallback: tuple[str, ...] = ()
    n_contexts: tuple[int, ...] = ()
    truncated: int = 0
    corpus: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update(fallback=list(self.fallback), n_contexts=dict(zip(self.found, self.n_contexts)),
                 truncated=self.truncated, corpus=self.corpus)
        return d


def _sentence_means(means: np.ndarray, counts: np.ndarray, row_sentence: np.ndarray,
                    n_sentences: int) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence, the float64 mean of its pooled occurrences that kept a token, and whether it has one.

    With one occurrence per sentence this is exactly that occurrence's vector in float64.
    """
    ok = counts > 0
    sums = np.zeros((n_sentences, means.shape[1]), dtype=np.float64)
    np.add.at(sums, row_sentence[ok], means[ok].astype(np.float64))
    k = np.bincount(row_sentence[ok], minlength=n_sentences)
    return sums / np.maximum(k, 1)[:, None], k > 0


@dataclass
class _WordResult:
    vector: np.ndarray | None
    n_contexts: int
    case_insensitive: bool = False
    truncated: int = 0
    fallback: bool = False
    extra: dict = field(default_factory=dict)


class _WordAggregation:
    """Aggregated word vectors, with memo and on-disk cache (a mixin of ``TransformerEncoder``)."""

    _memo: dict[str, _WordResult]
    _template_memo: dict[tuple[str, str], np.ndarray]

    if TYPE_CHECKING:  # what the mixin reads of its host (TransformerEncoder and its _ContextualBase)
        name: str
        layer: int
        seed: int
        contexts_per_word: int
        occurrences: str
        missing: str
        fallback_template: str
        cache: EmbeddingCache

        @property
        def model_key(self) -> str: ...
        @property
        def corpus(self) -> Any: ...
        @property
        def corpus_name(self) -> str: ...
        @property
        def max_length_key(self) -> int | str: ...
        @property
        def dim(self) -> int: ...
        def _encode_seqs(self, sentences: Sequence[str], jobs: Sequence[Any], mode: str) -> tuple[list[Any], int]: ...
        def _pool(self, seqs: Sequence[Any], n_rows: int, desc: str) -> tuple[np.ndarray, np.ndarray]: ...
        def _pool_layers(self, seqs: Sequence[Any], n_rows: int, desc: str, layers: Sequence[int],
                         batches: Sequence[list[int]] | None = None) -> tuple[np.ndarray, np.ndarray]: ...

    # -- lookup --------------------------------------------------------------
    def _word_key(self, word: str) -> dict[str, Any]:
        key = {
            "kind": "hf-word", "algo": _ALGO, "model": self.model_key, "layer": self.layer,
            "pooling": _POOLING, "corpus": self.corpus.fingerprint, "seed": self.seed,
            "contexts_per_word": self.contexts_per_word, "max_length": self.max_length_key, "word": word,
        }
        if self.occurrences != "first":  # keys of the default stay as they were, so existing caches stay valid
            key["occurrences"] = self.occurrences
        return key

    def _template_key(self, word: str, template: str) -> dict[str, Any]:
        return {
            "kind": "hf-template", "algo": _ALGO, "model": self.model_key, "layer": self.layer,
            "pooling": _POOLING, "template": template, "max_length": self.max_length_key, "word": word,
        }

    def _word_rng(self, word: str) -> np.random.Generator:
        """Context sampling for ``word``: seeded by the encoder's seed and the word (order-independent)."""
        from ..corpora._corpus import word_rng

        return word_rng(self.seed, word)

    def _occurrence_spans(self, ctx: Any) -> list[np.ndarray]:
        """Per context sentence, the ``(k, 2)`` character spans of the occurrences to pool."""
        every = getattr(ctx, "occurrences", ()) if self.occurrences == "all" else ()
        if not every:
            every = [(span,) for span in ctx.spans]
        return [np.asarray(spans, dtype=np.int64).reshape(-1, 2) for spans in every]

    def _aggregate(self, words: Sequence[str]) -> dict[str, _WordResult]:
        """Contexts, one batched pass over all their sentences, and the averages."""
        return self._aggregate_layers(words, None)[self.layer]

    def _aggregate_layers(self, words: Sequence[str],
                          layers: Sequence[int] | None) -> dict[int, dict[str, _WordResult]]:
        """:meth:`_aggregate` for each hidden-state index in ``layers`` (None: the encoder's layer), one pass."""
        sentences: list[str] = []
        jobs: list[tuple[np.ndarray, np.ndarray]] = []
        owner: list[int] = []  # word of each sentence
        row_sentence: list[int] = []  # sentence of each pooled occurrence
        infos = []
        for wi, w in enumerate(words):
            ctx = self.corpus.contexts(w, k=self.contexts_per_word, rng=self._word_rng(w))
            infos.append(ctx)
            for sent, spans in zip(ctx.sentences, self._occurrence_spans(ctx)):
                rows = np.arange(len(row_sentence), len(row_sentence) + len(spans), dtype=np.int64)
                jobs.append((spans, rows))
                row_sentence.extend([len(sentences)] * len(spans))
                sentences.append(sent)
                owner.append(wi)
        keys = [self.layer] if layers is None else [int(x) for x in layers]
        sent_vecs = [np.zeros((0, 0))] * len(keys)
        sent_ok = np.zeros(0, dtype=bool)
        trunc_flags: list[bool] = []
        if sentences:
            seqs, _ = self._encode_seqs(sentences, jobs, "focus-words")
            trunc_flags = [s.truncated for s in seqs]
            if layers is None:
                means, counts = self._pool(seqs, len(row_sentence), "contexts")
                means = means[None]
            else:
                from ._layers import check_rows

                check_rows(len(keys), len(row_sentence), self.dim, "word contexts")  # the rows are known now

                means, counts = self._pool_layers(seqs, len(row_sentence), "contexts", keys)
            rs = np.asarray(row_sentence, dtype=np.int64)
            pooled = [_sentence_means(m, counts, rs, len(sentences)) for m in means]
            sent_vecs = [p[0] for p in pooled]
            sent_ok = pooled[0][1]
        owner_arr = np.asarray(owner, dtype=np.int64)
        out: dict[int, dict[str, _WordResult]] = {k: {} for k in keys}
        for wi, w in enumerate(words):
            rows = np.flatnonzero(owner_arr == wi) if owner else np.zeros(0, dtype=np.int64)
            rows = rows[sent_ok[rows]] if rows.size else rows
            ctx = infos[wi]
            folded = bool(getattr(ctx, "case_insensitive", False))
            for k, vecs in zip(keys, sent_vecs):
                if rows.size:
                    out[k][w] = _WordResult(vecs[rows].mean(axis=0), int(rows.size), folded,
                                            int(sum(trunc_flags[r] for r in rows)),
                                            extra={"n_available": int(getattr(ctx, "n_available", rows.size)),
                                                   "contexts": vecs[rows]})
                else:
                    out[k][w] = _WordResult(None, 0, folded)
        return out

    def _template_vectors(self, words: Sequence[str], template: str) -> dict[str, np.ndarray]:
        """Each word pooled in ``template`` (the fallback for words without context)."""
        res: dict[str, np.ndarray] = {}
        todo = []
        for w in words:
            if (w, template) in self._template_memo:
                res[w] = self._template_memo[(w, template)]
                continue
            hit = self.cache.get("hf-template", self._template_key(w, template))
            if hit is not None and hit.get("vector") is not None and hit["vector"].shape == (self.dim,):
                res[w] = hit["vector"]
            else:
                todo.append(w)
        if todo:
            sents, jobs = [], []
            for i, w in enumerate(todo):
                pos = template.index("{}")
                sents.append(template.replace("{}", w))
                jobs.append((pos, pos + len(w), i))
            seqs, _ = self._encode_seqs(sents, jobs, "focus")
            means, counts = self._pool(seqs, len(todo), "templates")
            for i, w in enumerate(todo):
                if counts[i] == 0:
                    raise DataFormatError(f"{self.name}: the tokenizer gives no token for {w!r} in {template!r}")
                res[w] = means[i].astype(np.float64)
                self.cache.put("hf-template", self._template_key(w, template), {"vector": res[w]})
        for w, v in res.items():
            self._template_memo[(w, template)] = v
        return res

    def _bundle_key(self, words: Sequence[str]) -> dict[str, Any]:
        key = self._word_key("")
        key.update(kind="hf-word-set", word=None, words=_texts_digest(words), n_words=len(words))
        return key

    def _fresh_words(self, words: Sequence[str]) -> dict[str, _WordResult]:
        """Aggregated vectors of words in neither memo nor cache: one pass (for every layer of a sweep)."""
        sweep = getattr(self, "_sweep", None)
        return self._aggregate(words) if sweep is None else sweep.word_results(self, words)

    def _put_word(self, word: str, r: _WordResult) -> None:
        """Store one word's aggregated vector in the on-disk cache (kind ``hf-word``, keyed by layer)."""
        self.cache.put("hf-word", self._word_key(word), {
            "vector": r.vector if r.vector is not None else np.zeros(0),
            "info": np.array(self._info(r), dtype=np.int64),
        })

    @staticmethod
    def _info(r: _WordResult) -> list[int]:
        # contexts used, contexts available, found case-insensitively, truncated contexts
        return [r.n_contexts, r.extra.get("n_available", r.n_contexts), int(r.case_insensitive), r.truncated]

    @staticmethod
    def _from_info(vec: np.ndarray | None, info: Any) -> _WordResult:
        n_ctx, n_avail, folded, trunc = (int(x) for x in info)
        return _WordResult(vec if n_ctx > 0 else None, n_ctx, bool(folded), trunc, extra={"n_available": n_avail})

    def _word_results(self, words: Sequence[str]) -> tuple[dict[str, _WordResult], int]:
        """Per word: memo, else the cache (one file for the whole set when it was looked up before,
        else one file per word), else the model."""
        results: dict[str, _WordResult] = {w: self._memo[w] for w in words if w in self._memo}
        rest = [w for w in words if w not in results]
        if len(rest) > 1:
            hit = self.cache.get("hf-word-set", self._bundle_key(rest))
            if (hit is not None and hit.get("vectors") is not None and hit["vectors"].shape == (len(rest), self.dim)
                    and hit.get("info") is not None and hit["info"].shape == (len(rest), 4)):
                for i, w in enumerate(rest):
                    results[w] = self._from_info(hit["vectors"][i], hit["info"][i])
                self._memo.update(results)
                return results, len(rest)
        todo: list[str] = []
        hits = 0
        for w in rest:
            hit = self.cache.get("hf-word", self._word_key(w))
            if hit is not None:
                try:
                    r = self._from_info(hit["vector"], hit["info"])
                    if r.vector is not None and r.vector.shape != (self.dim,):
                        raise KeyError("vector shape")
                    results[w] = r
                    hits += 1
                    continue
                except (KeyError, ValueError, TypeError):
                    pass
            todo.append(w)
        if todo:
            fresh = self._fresh_words(todo)
            for w, r in fresh.items():
                self._put_word(w, r)
            results.update(fresh)
        if len(rest) > 1:
            self.cache.put("hf-word-set", self._bundle_key(rest), {
                "vectors": np.vstack([results[w].vector if results[w].vector is not None else np.zeros(self.dim)
                                      for w in rest]),
                "info": np.array([self._info(results[w]) for w in rest], dtype=np.int64),
            })
        self._memo.update(results)
        return results, hits

    def _contexts_key(self, word: str) -> dict[str, Any]:
        """Cache key of a word's per-context vectors: the word key under its own kind."""
        return {**self._word_key(word), "kind": "hf-word-contexts"}

    def context_vectors(self, words: Iterable[str]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Each word's context vectors, ``(n_contexts, dim)`` float64: the rows :meth:`lookup` averages.

        Row ``c`` is the word's subword tokens pooled in its ``c``-th context
        sentence (the same sentences, seed and pooling as :meth:`lookup`, whose
        vector is their mean). Encoded once and cached on disk per word
        (kind ``hf-word-contexts``, keyed like the word's mean vector), so a
        second call runs no forward pass. A word with no context follows
        ``missing``: one row, the word in the fallback template (listed in the
        report's ``fallback``), or no entry (listed in ``dropped``).

        Returns
        -------
        vectors : dict word -> ndarray (n_contexts, dim)
        report : dict
            ``fallback``, ``dropped``, ``contexts`` (rows per word), ``cache_hits``.
        """
        uniq = list(dict.fromkeys(words))
        memo = self.__dict__.setdefault("_contexts_memo", {})
        found: dict[str, np.ndarray] = {}
        todo: list[str] = []
        hits = 0
        for w in uniq:
            if w in memo:
                found[w] = memo[w]
                continue
            hit = self.cache.get("hf-word-contexts", self._contexts_key(w))
            if hit is not None and hit.get("vectors") is not None and hit["vectors"].ndim == 2 \
                    and hit["vectors"].shape[1] == self.dim:
                found[w] = hit["vectors"]
                hits += 1
            else:
                todo.append(w)
        if todo:
            for w, r in self._aggregate(todo).items():
                arr = r.extra.get("contexts", np.zeros((0, self.dim)))
                found[w] = np.asarray(arr, dtype=np.float64)
                self.cache.put("hf-word-contexts", self._contexts_key(w), {"vectors": found[w]})
        memo.update(found)
        empty = [w for w in uniq if found[w].shape[0] == 0]
        fb = self._template_vectors(empty, self.fallback_template) if empty and self.missing == "fallback" else {}
        out = {w: (fb[w][None, :] if w in fb else found[w]) for w in uniq if found[w].shape[0] or w in fb}
        report = {"fallback": list(fb), "dropped": [w for w in empty if w not in fb],
                  "contexts": {w: int(found[w].shape[0]) for w in uniq}, "cache_hits": hits}
        if fb:
            warnings.warn(f"{self.name}: {len(fb)} word(s) have no context in corpus "
                          f"{getattr(self.corpus, 'name', '?')} and were encoded once in the template "
                          f"{self.fallback_template!r}: {', '.join(list(fb)[:12])}", IsoeatWarning, stacklevel=2)
        return out, report

    def lookup(self, words: Iterable[str]) -> ContextualLookup:
        """Aggregated vectors of ``words`` (see the module docstring) and a report.

        Words with no context follow ``missing``: encoded in the fallback
        template (listed in ``fallback``) or dropped (listed in ``missing``).
        Contexts found only case-insensitively are listed in ``case_folded``
        as ``(word, word.lower())``. Fallbacks and truncations are also
        announced with an :class:`~isoeat.IsoeatWarning`.
        """
        words = tuple(words)
        for w in words:
            if not isinstance(w, str) or not w.strip():
                raise ConfigError(f"words must be non-empty strings, got {w!r}")
        uniq = list(dict.fromkeys(words))
        results, hits = self._word_results(uniq)
        need_fb = [w for w in uniq if results[w].vector is None] if self.missing == "fallback" else []
        fb_vecs = self._template_vectors(need_fb, self.fallback_template) if need_fb else {}
        vecs, found, missing, folded, fallback, n_ctx = [], [], [], [], [], []
        truncated = 0
        for w in words:
            r = results[w]
            if r.vector is not None:
                vecs.append(r.vector)
                found.append(w)
                n_ctx.append(r.n_contexts)
                truncated += r.truncated
                if r.case_insensitive:
                    folded.append((w, w.lower()))
            elif w in fb_vecs:
                vecs.append(fb_vecs[w])
                found.append(w)
                n_ctx.append(1)
                fallback.append(w)
            else:
                missing.append(w)
        mat = np.vstack(vecs).astype(np.float64) if vecs else np.zeros((0, self.dim))
        self.last_report = {
            "n_words": len(words),
            "fallback": list(dict.fromkeys(fallback)),
            "dropped": list(dict.fromkeys(missing)),
            "contexts": {w: results[w].n_contexts for w in uniq},
            "truncated": truncated,
            "cache_hits": hits,
            "fallback_template": self.fallback_template,
        }
        if fallback:
            fb = list(dict.fromkeys(fallback))
            warnings.warn(
                f"{self.name}: {len(fb)} word(s) have no context in corpus {getattr(self.corpus, 'name', '?')} "
                f"and were encoded in the template {self.fallback_template!r}: {', '.join(fb[:12])}"
                + (" ..." if len(fb) > 12 else ""),
                IsoeatWarning, stacklevel=2,
            )
        if truncated:
            warnings.warn(
                f"{self.name}: {truncated} context sentence(s) longer than the model's maximum were truncated "
                "around the word",
                IsoeatWarning, stacklevel=2,
            )
        return ContextualLookup(
            words, mat, tuple(found), tuple(missing), tuple(folded),
            fallback=tuple(fallback), n_contexts=tuple(n_ctx), truncated=truncated, corpus=self.corpus_name,
        )
