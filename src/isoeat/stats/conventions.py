r"""Peers' conventions by name (issue 46): why another tool gives another number for the same WEAT.

Every tool of the field computes WEAT's

.. math::

    d = \frac{\operatorname{mean}_{x\in X}s(x,A,B)-\operatorname{mean}_{y\in Y}s(y,A,B)}
             {\operatorname{std}_{w\in X\cup Y}s(w,A,B)}

but with its own conventions: the SD's ``ddof`` (:math:`d_0 = d_1\sqrt{N/(N-1)}`, :math:`N=|X|+|Y|`),
the side of p, what is done with target sets of unequal size, whether words are lowercased, how a
sentence is pooled, and how p is computed. A :class:`Convention` holds one tool's choices with the
line of its code or paper that makes each; :data:`CONVENTIONS` holds them by name (``isoeat``, the
default, ``caliskan``, ``wefe``, ``sent-bias``, ``ceat-code``, ``ml-eat``, ``responsibly``).

What is reproduced and what is only named:

* a *definition* (ddof, sidedness, equal-size handling) is applied: ``weat(model, "W6",
  convention="wefe")`` gives WEFE 1.0.1's d;
* a *defect* or an approximation of p (sampling with replacement from an unseeded generator, a normal
  curve fitted to a few permutations, ties dropped) is never copied: the result's p is isoeat's exact
  (or certified) p on the convention's side, and :func:`convention_lines` says, under every table,
  "this convention's p is ...; isoeat's exact p is X".

Lowercasing and pooling name what a peer does to a contextual model's input (sent-bias lowercases a
cased BERT and takes the first token, not [CLS]); they change nothing on a static model's WEAT and are
named, not applied. ``convention=`` is taken by :func:`isoeat.weat` and :func:`isoeat.sc_weat` (SC-WEAT is
defined by ``isoeat``, ``caliskan`` and ``ml-eat``); :func:`settle` refuses a convention that says nothing
about a command, in one line. CEAT's one convention of a peer, the released code's one-sided combined p
(``ceat-code``), is ``isoeat ceat --alternative greater`` (``ceat(..., alternative="greater")``).

Examples
--------
>>> CONVENTIONS.get("wefe").ddof
0
>>> CONVENTIONS.get("wef")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
isoeat._errors.UnknownNameError: unknown convention 'wef'; did you mean wefe? (known: isoeat, caliskan, ...)
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import ConfigError
from .._registry import Registry
from .._validate import check_choice

__all__ = [
    "Convention",
    "CONVENTIONS",
    "DEFAULT_CONVENTION",
    "get_convention",
    "settle",
    "equal_sizes",
    "side_of",
    "convention_lines",
    "p_note",
    "case_note",
    "warn_encoding",
    "warn_lost",
    "WEFE_LOST_THRESHOLD",
    "SENT_BIAS_SAMPLES",
]

DEFAULT_CONVENTION = "isoeat"

#: sent-bias's ``--n_samples`` default (sentbias/main.py:88-91): exact p up to this many partitions, else sampled.
SENT_BIAS_SAMPLES = 100_000

#: Where each peer's code was read (repository@commit or package version).
_WEFE = "wefe 1.0.1 (PyPI) wefe/metrics/WEAT.py"
_SB = "W4ngatang/sent-bias@e3559fb sentbias/"
_CEAT = "weiguowilliam/CEAT@497e295 code/ceat.py"
_MLEAT = "wolferobert3/ml-eat@ec117fc mleat.py"
_RESP = "responsibly 0.1.2 (PyPI) responsibly/we/weat.py"


@dataclass(frozen=True)
class Convention:
    """One tool's conventions for WEAT (and where it has them, SC-WEAT and CEAT).

    Attributes
    ----------
    name : str
        The name ``--convention`` and ``convention=`` take.
    peer : str
        The tool or paper, with its version.
    ddof : int
        Delta degrees of freedom of the SD in d (0: population SD, 1: sample SD).
    side : {"greater", "direction", "two-sided"}
        The side of p: ``greater`` :math:`P[S_i \\ge S]`; ``direction``: one-sided on the side of the
        permutation mean the observed S lies (ML-EAT's ``min(cdf, 1 - cdf)``).
    equal_size : {"any", "cut-end", "sample-42"}
        Target sets of unequal size: used as they are; the longer cut from its end to the shorter's length
        (what a sent-bias user does to pass its ``assert len(X) == len(Y)``); the longer replaced by
        ``random.seed(42); random.sample(words, n)`` of the shorter's length, attribute sets too
        (responsibly).
    lowercase, pooling : str
        What the tool does to a word or sentence before encoding it (named, not applied: static vectors).
    p_method : str
        How the tool computes p, in words.
    p_defect : str
        Empty where isoeat's exact p is the tool's p by definition; else the sentence that says how the
        tool's p departs (printed with isoeat's exact p, never copied).
    reason : str
        One line: why its d or p differs from isoeat's default.
    commands : tuple of str
        The commands (and API functions) the convention says something about.
    sources : tuple of (str, str)
        ``(what, where)``: each convention's line in the peer's code or paper.
    """

    name: str
    peer: str
    ddof: int
    side: str
    equal_size: str
    lowercase: str
    pooling: str
    p_method: str
    p_defect: str
    reason: str
    commands: tuple[str, ...]
    sources: tuple[tuple[str, str], ...]

    def to_dict(self) -> dict[str, Any]:
        """A flat JSON-ready record (sources as ``what: where`` texts)."""
        out = {
            k: getattr(self, k)
            for k in (
                "name",
                "peer",
                "ddof",
                "side",
                "equal_size",
                "lowercase",
                "pooling",
                "p_method",
                "p_defect",
                "reason",
            )
        }
        return {**out, "commands": list(self.commands), "sources": [f"{w}: {s}" for w, s in self.sources]}


_ALL = (
    Convention(
        "isoeat",
        "isoeat (default)",
        1,
        "greater",
        "any",
        "a word missing as cased is looked up lowercased (reported in case_folded)",
        "the model's own (--pooling)",
        "exact count of the equal-size partitions (certified bracket or Monte Carlo beyond the budget)",
        "",
        "the default",
        ("weat", "scweat"),
        (
            ("d, ddof 1", "Caliskan et al. 2017, Science 356:183, eq. for d (sample SD)"),
            ("p, one-sided", "Caliskan et al. 2017, supplement: P[S(Xi,Yi) > S(X,Y)] over equal-size partitions"),
        ),
    ),
    Convention(
        "caliskan",
        "Caliskan, Bryson & Narayanan 2017",
        1,
        "greater",
        "any",
        "none (the sets as published)",
        "static word vectors",
        "exact permutation test over the equal-size partitions of X ∪ Y, one-sided",
        "the paper writes this convention's p as P_i[s(X_i,Y_i,A,B) > s(X,Y,A,B)], strictly greater (the observed "
        "partition and ties not counted: 0 where the observed S is the largest); isoeat counts them (never 0)",
        "isoeat's default by design: d with ddof 1 over X ∪ Y, one-sided exact p",
        ("weat", "scweat"),
        (
            ("d, std-dev over X ∪ Y (sample SD)", "Science 356:183 (2017), 'Methods', WEAT effect size"),
            ("p, one-sided exact", "ibid., supplement S1: permutation test P_i[s(X_i,Y_i,A,B) > s(X,Y,A,B)]"),
            ("SC-WEAT (WEFAT) SD over A ∪ B", "ibid., 'Methods', WEFAT"),
        ),
    ),
    Convention(
        "wefe",
        "WEFE 1.0.1",
        0,
        "greater",
        "any",
        "none by default (preprocessors=[{}]): a cased word of a "
        "lowercased vocabulary is lost; past 20% lost in a set the query is nan",
        "static word vectors",
        "Monte Carlo: 'permutations' of X ∪ Y drawn WITH replacement (rng.choice) from an "
        "unseeded generator, strictly greater, (k+1)/(runs+1), 10,000 runs",
        "this convention's p is a Monte Carlo estimate over draws with replacement from an unseeded generator "
        "(WEFE 1.0.1): not a permutation p and not reproducible",
        "population SD (ddof 0): d larger by sqrt(N/(N-1)); p sampled with replacement",
        ("weat",),
        (
            ("d, np.std with ddof 0", f"{_WEFE}:137-141"),
            ("cosines in float32 (sklearn cosine_similarity of float32 vectors), means in float64", f"{_WEFE}:112-113"),
            ("p, rng = np.random.default_rng() unseeded", f"{_WEFE}:209"),
            ("p, rng.choice(pool, size=n): with replacement", f"{_WEFE}:215-217"),
            ("p, strictly greater; (k+1)/(runs+1)", f"{_WEFE}:21-22, 234"),
            ("right-sided by default; 20% lost-vocabulary threshold; preprocessors [{}]", f"{_WEFE}:251-256"),
        ),
    ),
    Convention(
        "sent-bias",
        "sent-bias, May et al. 2019",
        1,
        "greater",
        "cut-end",
        "a cased BERT is lowercased (the tokenizer's do_lower_case default)",
        "the first token's vector, not [CLS] (tokenize() adds none)",
        f"exact when C(2n, n) <= n_samples ({SENT_BIAS_SAMPLES:,}), ties counted; else Monte Carlo of n_samples "
        "shuffles biased by one",
        "",
        "X and Y must be of equal size: the longer set is cut from its end",
        ("weat",),
        (
            ("d, ddof 1", f"{_SB}weat.py:174-175"),
            ("equal sizes required: assert len(X) == len(Y)", f"{_SB}weat.py:92"),
            ("p, exact up to n_samples partitions, else sampled and biased by one", f"{_SB}weat.py:131-150"),
            ("p, ties count (conservative)", f"{_SB}weat.py:144-147"),
            ("n_samples default 100,000", f"{_SB}main.py:88-91"),
            ("lowercasing: BertTokenizer.from_pretrained(version) (do_lower_case=True)", f"{_SB}encoders/bert.py:8"),
            ("pooling: enc[:, 0, :], the first word piece", f"{_SB}encoders/bert.py:25"),
        ),
    ),
    Convention(
        "ceat-code",
        "CEAT code, Guo & Caliskan 2021",
        1,
        "greater",
        "any",
        "none",
        "the target word's token(s) in each sampled context",
        "WEAT: a normal curve fitted to 100 random partitions, 1 - cdf; "
        "CEAT: the combined effect's p = norm.sf(CES/SE), one-sided",
        "this convention's p fits a normal curve to 100 random partitions (CEAT code); the supplement's CEAT p "
        "is two-sided, the code's one-sided",
        "one-sided p where the paper's supplement says two-sided",
        ("weat",),
        (
            ("d, ddof 1 (per draw)", f"{_CEAT}:166-177"),
            ("WEAT p: normal fit to num=100 partitions, 1 - norm.cdf", f"{_CEAT}:185-203"),
            ("CEAT p: norm.sf(z), one-sided", f"{_CEAT}:259-261"),
            ("two-sided in the text", "Guo & Caliskan 2021, AIES, supplement (doc/supp.pdf in the repository)"),
        ),
    ),
    Convention(
        "ml-eat",
        "ML-EAT, Wolfe et al. 2024",
        1,
        "direction",
        "any",
        "none",
        "the model's own",
        "a normal curve fitted to 1,000 random permutations; p = min(cdf, 1 - cdf) at the observed S",
        "this convention's p is a normal approximation from 1,000 random permutations (ML-EAT)",
        "p one-sided on the side the observed S falls, from a normal curve",
        ("weat", "scweat"),
        (
            ("d, std(correction=1)", f"{_MLEAT}:177-178"),
            ("SC-EAT d, std(correction=1) over A ∪ B", f"{_MLEAT}:212-213"),
            ("p, 1,000 torch.randperm permutations, normal fit, min(cdf, 1 - cdf)", f"{_MLEAT}:6-31"),
        ),
    ),
    Convention(
        "responsibly",
        "responsibly 0.1.2",
        0,
        "greater",
        "sample-42",
        "none ('word in model': no case fallback)",
        "static word vectors",
        "exact (mlxtend permutation_test, method='exact') of sum(x) - sum(y), strictly "
        "greater: mlxtend < 0.17 drops ties",
        "this convention's p counts only strictly greater partitions (mlxtend < 0.17 drops ties)",
        "population SD (ddof 0); unequal sets sampled down with random.seed(42)",
        ("weat",),
        (
            ("d, np.std(ddof=0)", f"{_RESP}:260-262"),
            (
                "equal sizes: random.seed(42); random.sample(longer, len(shorter)), targets and attributes",
                f"{_RESP}:179-212",
            ),
            ("p, mlxtend permutation_test(func=sum(x)-sum(y), method='exact')", f"{_RESP}:130-141"),
        ),
    ),
)

#: Every convention by name (``isoeat`` first, the default).
CONVENTIONS: Registry[Convention] = Registry(
    "convention",
    {c.name: c for c in _ALL},
    fold_case=True,
    aliases={"sentbias": "sent-bias", "ceat": "ceat-code", "mleat": "ml-eat"},
)


def get_convention(name: Any) -> Convention:
    """The :class:`Convention` named ``name`` (a :class:`Convention` is returned as given).

    An unknown name is one :class:`~isoeat.UnknownNameError` line with a did-you-mean.
    """
    if isinstance(name, Convention):
        return name
    if not isinstance(name, str):
        raise ConfigError(f"convention must be a name ({', '.join(CONVENTIONS.names())}), got {type(name).__name__}")
    return CONVENTIONS.get(name)


def settle(name: Any, command: str, *, ddof: int | None, alternative: str) -> tuple[Convention, int, str]:
    """The convention for ``command`` with the ``ddof`` and ``alternative`` it fixes: one validation.

    ``ddof`` None takes the convention's. Under a peer's convention a ``ddof`` or an ``alternative`` other
    than the convention's (the default ``"greater"`` stands for the convention's side) is a
    :class:`~isoeat.ConfigError`: the two would say different things. A convention that says nothing about
    ``command`` is refused in one line naming those that do.

    >>> settle("wefe", "weat", ddof=None, alternative="greater")[1:]
    (0, 'greater')
    """
    conv = get_convention(name)
    if command not in conv.commands:
        takes = [c.name for c in _ALL if command in c.commands]
        raise ConfigError(
            f"convention {conv.name!r} ({conv.peer}) defines no {command}: {command} takes "
            f"convention {', '.join(takes)}"
        )
    if conv.name == DEFAULT_CONVENTION:
        return conv, 1 if ddof is None else ddof, alternative
    if ddof is not None and ddof != conv.ddof:
        raise ConfigError(
            f"ddof={ddof}: convention {conv.name!r} ({conv.peer}) fixes ddof {conv.ddof}; drop ddof or the convention"
        )
    if alternative != "greater" and alternative != conv.side:
        raise ConfigError(
            f"alternative={alternative!r}: convention {conv.name!r} ({conv.peer}) is one-sided "
            f"({conv.side}); drop alternative or the convention"
        )
    return conv, conv.ddof, "greater"


def equal_sizes(
    conv: Convention,
    words: dict[str, list[str]],
    vecs: dict[str, np.ndarray],
    *,
    roles: tuple[tuple[str, str], ...] = (("X", "Y"),),
) -> tuple[dict[str, np.ndarray], list[str]]:
    """The sets the convention uses after out-of-vocabulary words were dropped, and ``"ROLE:word"`` left out.

    ``cut-end``: the longer set of each pair keeps its first words (sent-bias: targets only). ``sample-42``:
    the longer keeps ``random.seed(42); random.sample(words, n)`` (responsibly: targets and attributes,
    reproduced with Python's :mod:`random` as responsibly calls it). ``any``: unchanged.

    >>> v = {"X": np.zeros((3, 2)), "Y": np.zeros((2, 2))}
    >>> equal_sizes(CONVENTIONS.get("sent-bias"), {"X": ["a", "b", "c"], "Y": ["d", "e"]}, v)[1]
    ['X:c']
    """
    if conv.equal_size == "any":
        return vecs, []
    check_choice("equal_size", conv.equal_size, ("cut-end", "sample-42"))
    pairs = roles if conv.equal_size == "cut-end" else (("X", "Y"), ("A", "B"))
    out, cut = dict(vecs), list[str]()
    for first, second in pairs:
        n = min(len(words[first]), len(words[second]))
        for role in (first, second):
            have = list(words[role])
            if len(have) <= n:
                continue
            if conv.equal_size == "cut-end":
                keep = list(range(n))
            else:  # responsibly's _sample_if_bigger: random.seed(42) then random.sample of the words; sample()
                # draws positions from len(words) and n alone, so these are the positions it keeps
                keep = sorted(random.Random(42).sample(range(len(have)), n))
            kept = set(keep)
            cut.extend(f"{role}:{w}" for i, w in enumerate(have) if i not in kept)
            out[role] = np.asarray(vecs[role])[keep]
    return out, cut


def warn_encoding(conv: Convention, model: Any) -> None:
    """An :class:`~isoeat.IsoeatWarning` where ``model`` is contextual and ``conv`` names an encoding of its own.

    A peer's lowercasing and pooling (sent-bias: a cased BERT lowercased, the first token) or its static word
    vectors (WEFE, responsibly, Caliskan et al.) are named, not applied: on a contextual model the vectors are
    isoeat's, and only d's and p's definitions follow the convention. ML-EAT takes the model as it is.
    """
    import warnings

    from .._errors import IsoeatWarning
    from .._types import name_of, streams_reference

    if conv.name == DEFAULT_CONVENTION or conv.pooling == "the model's own" or not streams_reference(model):
        return
    warnings.warn(
        f"convention {conv.name}: {conv.peer}'s encoding (lowercasing: {conv.lowercase}; pooling: {conv.pooling}) "
        f"is named, not applied: the vectors of {name_of(model)} are isoeat's (its own pooling and case); "
        "d and p follow the convention's definitions on them",
        IsoeatWarning,
        stacklevel=3,
    )


#: WEFE 1.0.1's ``lost_vocabulary_threshold`` default (wefe/preprocessing.py: nan where lost / len(set) > 0.2).
WEFE_LOST_THRESHOLD = 0.2


def warn_lost(conv: Convention, sizes: dict[str, int], dropped: Any) -> None:
    """An :class:`~isoeat.IsoeatWarning` where WEFE would give nan: a set lost more than 20% of its words.

    isoeat's default ``min_coverage`` 0.8 refuses the same sets (kept < 0.8 is lost > 0.2); a lower
    ``min_coverage`` measures them, and under ``wefe`` that is said. ``sizes``: the test's words per role;
    ``dropped``: ``"ROLE:word"`` entries.
    """
    import warnings

    from .._errors import IsoeatWarning

    if conv.name != "wefe":
        return
    for role, n in sizes.items():
        lost = sum(1 for e in dropped if str(e).split(":", 1)[0] == role)
        if n and lost / n > WEFE_LOST_THRESHOLD:
            warnings.warn(
                f"convention wefe: {role} lost {lost} of {n} words ({lost / n:.0%}): WEFE 1.0.1 gives nan past its "
                f"lost_vocabulary_threshold {WEFE_LOST_THRESHOLD} (this d is measured at a lower min_coverage)",
                IsoeatWarning,
                stacklevel=3,
            )


def side_of(conv: Convention, effect_size: float) -> str:
    """The side of p under ``conv``: its own, or for ``direction`` the side the observed statistic lies on.

    The permutation mean of :math:`S` is :math:`(n_x-n_y)\bar s`, and :math:`S - (n_x-n_y)\bar s =
    \frac{2 n_x n_y}{n_x+n_y}(\bar s_X - \bar s_Y)`: the side is the sign of d (``"greater"`` at 0 or
    where d is undefined). The same holds for SC-WEAT's sums over A and B.

    >>> side_of(CONVENTIONS.get("ml-eat"), -0.4), side_of(CONVENTIONS.get("wefe"), -0.4)
    ('less', 'greater')
    """
    if conv.side != "direction":
        return conv.side
    return "less" if effect_size < 0 else "greater"


def p_note(conv: Convention, p_value: float, n_partitions: int = 0, p_method: str = "exact") -> str:
    """The line under a table of this convention: how the peer's p departs and isoeat's p (empty: none does).

    sent-bias's p is isoeat's exact p up to :data:`SENT_BIAS_SAMPLES` partitions; beyond it, a Monte Carlo
    estimate. ``p_method`` is isoeat's (the result's ``p_method``): its p is called exact only where it is.
    """
    defect = conv.p_defect
    if conv.name == "sent-bias" and n_partitions > SENT_BIAS_SAMPLES:
        defect = (
            f"this convention's p is a Monte Carlo estimate of {SENT_BIAS_SAMPLES:,} shuffles biased by one "
            f"(sent-bias: {n_partitions:,} partitions > n_samples)"
        )
    if not defect:
        return ""
    shown = "nan" if not math.isfinite(p_value) else f"{p_value:.4g}"
    return f"{conv.name}: {defect}; isoeat's {p_method or 'exact'} p is {shown}"


#: What a peer with no case fallback does with a word isoeat found only lowercased (``case_folded``).
_CASE_LOST = {
    "wefe": "WEFE 1.0.1's default preprocessors=[{{}}] loses the {n} cased word(s) isoeat found lowercased "
    "({words}) and gives nan where a set loses over 20%; this d is WEFE's with "
    "preprocessors=[{{}}, {{'lowercase': True}}]",
    "responsibly": "responsibly's 'word in model' has no case fallback: it loses the {n} cased word(s) isoeat "
    "found lowercased ({words}), so its own sets and d differ (none where a set is lost); this d keeps them",
}


def case_note(conv: Convention, case_folded: Any) -> str:
    """The line saying a peer would lose the words isoeat found only lowercased (empty: none, or the peer folds).

    WEFE 1.0.1 (``preprocessors=[{}]`` by default) and responsibly (``word in model``) look a word up as given;
    isoeat's lookup falls back to the lowercase form (``case_folded``, ``"John->john"``), so on a lowercased
    vocabulary their sets, and their d, are not the ones isoeat measured under their name.

    >>> case_note(CONVENTIONS.get("responsibly"), ["John->john"])[:40]
    "responsibly's 'word in model' has no cas"
    """
    folded = [w for w in case_folded or () if w]
    if not folded or conv.name not in _CASE_LOST:
        return ""
    words = ", ".join(folded[:3]) + (", ..." if len(folded) > 3 else "")
    return _CASE_LOST[conv.name].format(n=len(folded), words=words)


_SIDES = {
    "greater": "p one-sided (greater)",
    "direction": "p one-sided on the side of the statistic",
    "two-sided": "p two-sided",
}
_EQUAL = {"cut-end": "the longer target set cut from its end", "sample-42": "the longer set sampled with seed 42"}


def convention_lines(records: list[Any]) -> list[str]:
    """The footer lines of a table of results (or records) under any convention but the default.

    One line per peer convention (what it applies), one per result whose peer p departs
    (:func:`p_note`), and where the results mix conventions, a line saying their d are not on one scale.
    """

    def get(r: Any, key: str, default: Any) -> Any:
        return r.get(key, default) if isinstance(r, dict) else getattr(r, key, default)

    def listed(r: Any, key: str) -> list[str]:  # a CSV record holds a list as "a;b" (_records.list_cell)
        from .._records import cell_list

        return cell_list(get(r, key, ()) or ())

    names = list(dict.fromkeys(str(get(r, "convention", DEFAULT_CONVENTION)) for r in records))
    out = []
    for name in names:
        if name == DEFAULT_CONVENTION:
            continue
        conv = CONVENTIONS.get(name)
        out.append(
            f"convention {conv.name} ({conv.peer}): ddof {conv.ddof}, {_SIDES[conv.side]}"
            f"{'' if conv.equal_size == 'any' else ', equal-size sets: ' + _EQUAL[conv.equal_size]}; "
            f"{conv.reason} (docs/conventions.md)"
        )
    seen: set[tuple[Any, ...]] = set()
    for r in records:
        name = str(get(r, "convention", DEFAULT_CONVENTION))
        if name == DEFAULT_CONVENTION:
            continue
        cut = listed(r, "cut")
        if cut and (tuple(cut), get(r, "test", "")) not in seen:
            seen.add((tuple(cut), get(r, "test", "")))
            out.append(f"{get(r, 'test', '')}: {name} left out {', '.join(cut)} (sets of equal size)")
        case = case_note(CONVENTIONS.get(name), listed(r, "case_folded"))
        if case and (case, get(r, "test", "")) not in seen:
            seen.add((case, get(r, "test", "")))
            out.append(f"{get(r, 'test', '')}: {name}: {case}")
        note = p_note(
            CONVENTIONS.get(name),
            float(get(r, "p_value", math.nan)),
            int(get(r, "n_partitions", 0)),
            str(get(r, "p_method", "exact")),
        )
        label = " ".join(str(x) for x in (get(r, "test", ""), get(r, "word", ""), get(r, "calibration", "")) if x)
        if note and (note, label) not in seen:
            seen.add((note, label))
            out.append(f"{label}: {note}" if label else note)
    if len(names) > 1:
        out.append(
            f"these results mix conventions ({', '.join(names)}): their d and p are not on one scale; "
            "compare within one convention"
        )
    return out
