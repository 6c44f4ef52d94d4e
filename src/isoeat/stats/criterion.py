r"""Criterion validity: each target word's SC-WEAT effect size against a real-world figure (WEFAT).

Caliskan, Bryson & Narayanan (2017, WEFAT) and Garg, Schiebinger, Jurafsky & Zou (2018) validate an
embedding association by correlating, over target words :math:`w_1..w_n` (occupations), the word's
association with a real-world figure (the share of women among its workers). Here the association is the
word's SC-WEAT effect size :math:`d_i` (:func:`isoeat.sc_weat`, against the attribute sets A and B of a test)
and the figure the criterion value :math:`v_i` (:func:`isoeat.wordsets.criteria.load_criterion`):

.. math::

    r = \frac{\sum_i (d_i-\bar d)(v_i-\bar v)}{\sqrt{\sum_i (d_i-\bar d)^2\sum_i (v_i-\bar v)^2}},
    \qquad \rho = r\big(\operatorname{rank}(d), \operatorname{rank}(v)\big)

(average ranks for ties, :mod:`isoeat.stats.rank`). Intervals at level :math:`1-\alpha`, both by Fisher's
:math:`z = \operatorname{artanh}(r)` transform, :math:`\tanh(z \pm z_{1-\alpha/2}\,\mathrm{SE})`:

* Pearson: :math:`\mathrm{SE} = 1/\sqrt{n-3}` (Fisher 1921);
* Spearman: :math:`\mathrm{SE} = \sqrt{(1+\rho^2/2)/(n-3)}` (Bonett & Wright 2000).

With :math:`n = 3` the SE is infinite and the interval is :math:`[-1, 1]`; with :math:`|r| = 1` it is the
point :math:`r`. Two-sided p-values by the t statistic :math:`t = r\sqrt{(n-2)/(1-r^2)}` on :math:`n-2`
degrees of freedom (as :func:`scipy.stats.pearsonr` and :func:`scipy.stats.spearmanr`). The attribute set A
is the positive side: with W7 (A = male terms, B = female terms) a word closer to the female terms has a
negative d, so a valid measure correlates *negatively* with the share of women.

Fewer than :data:`MIN_WORDS` words with both an effect size and a value are refused; criterion values all
equal, or effect sizes all equal, leave r and ρ undefined (``nan``, with the reason in ``undefined``), never
a number. Words of the criterion that the model lacks are listed (``missing``), and words whose SC-WEAT d is
undefined (``undefined_words``); neither is silently dropped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import CoverageError
from .._surface import public, require_encoder
from .._types import Calibrator, Encoder, name_of
from .._validate import check_real
from .options import PermutationOptions, gather
from .rank import spearman
from .results import records_frame, suggestion_entries, with_suggestions
from .validity import missing_parts_note, vocabulary_entries

__all__ = ["MIN_WORDS", "CriterionResult", "correlate", "criterion_validity", "coverage_note"]

#: The fewest words a correlation is computed over (two points always lie on a line).
MIN_WORDS = 3

#: The intervals' method, as every record states it.
CI_METHOD = "fisher-z (Pearson: SE 1/sqrt(n-3); Spearman: Bonett-Wright SE sqrt((1+rho^2/2)/(n-3)))"


#: The run of ``benchmarks/criterion_coverage.py`` whose coverages :func:`coverage_note` quotes.
COVERAGE_RUN = "benchmarks/criterion_coverage.py, seed 20261207, 2,000 data sets a design, 2026-12-07"


def coverage_note(n: int, ci_level: float) -> str:
    """The measured coverage of the intervals at ``n`` words and ``ci_level`` (the track record the output quotes).

    ``benchmarks/criterion_coverage.py`` measured 95% intervals over n = 5, 10, 20, 40 on bivariate-normal,
    bounded (a share in percent) and heavy-tailed (bivariate t with 3 df) data: both held near 95% on normal and
    bounded data at n >= 10; Pearson's undercovers with heavy tails (outlying words), Spearman's does not; at
    n = 5 Spearman's undercovers at rho = 0.8. A level other than 95% has no measured record (said).

    Examples
    --------
    >>> coverage_note(40, 0.9)[:39]
    'No measured coverage at the 90% level ('
    """
    if abs(ci_level - 0.95) > 1e-9:
        return f"No measured coverage at the {ci_level:.0%} level ({COVERAGE_RUN.split(',')[0]} measured 95% intervals)"
    text = (
        "Measured coverage of these 95% intervals: 0.945-0.977 on normal or bounded (percent) data at n >= 10, "
        "but Pearson's only 0.73-0.85 with heavy-tailed data (bivariate t, 3 df), where Spearman's kept "
        "0.91-0.95: with outlying words read Spearman's"
    )
    if n < 10:
        text += f"; n = {n} is below the n >= 10 where they held (at n = 5, rho = 0.8 Spearman's covered only 0.85)"
    return f"{text} ({COVERAGE_RUN})"


def _fisher(r: float, se: float, level: float) -> tuple[float, float]:
    """``tanh(artanh(r) -+ z * se)``: the point ``r`` when ``|r| = 1``, ``[-1, 1]`` when ``se`` is infinite."""
    from scipy.stats import norm

    if abs(r) >= 1.0:
        return r, r
    z, q = math.atanh(r), float(norm.ppf(0.5 + level / 2))
    return math.tanh(z - q * se), math.tanh(z + q * se)


def _p_two_sided(r: float, n: int) -> float:
    """Two-sided p of ``r`` over ``n`` pairs: t = r sqrt((n-2)/(1-r^2)) on n-2 degrees of freedom."""
    from scipy.stats import t as student_t

    if abs(r) >= 1.0:
        return 0.0
    t = r * math.sqrt((n - 2) / (1.0 - r * r))
    return float(min(1.0, 2.0 * student_t.sf(abs(t), n - 2)))


def correlate(x: Sequence[float], y: Sequence[float], *, ci_level: float = 0.95) -> dict[str, Any]:
    r"""Pearson's r and Spearman's ρ of ``x`` and ``y`` with their Fisher-z intervals and two-sided p.

    Parameters
    ----------
    x, y : sequence of float, the same length n >= 3
    ci_level : float, default 0.95

    Returns
    -------
    dict
        ``n``, ``pearson_r``, ``pearson_ci_low``, ``pearson_ci_high``, ``pearson_p``, the same four for
        ``spearman_rho``, ``ci_level``, ``ci_method`` and ``undefined`` (why r and ρ are ``nan``, else ``""``).

    Raises
    ------
    CoverageError
        Fewer than :data:`MIN_WORDS` pairs.

    Examples
    --------
    >>> c = correlate([1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 3.0, 2.0, 5.0, 4.0])
    >>> round(c["pearson_r"], 3), round(c["spearman_rho"], 3), [round(c[k], 3) for k in ("pearson_ci_low",
    ...                                                                                  "pearson_ci_high")]
    (0.8, 0.8, [-0.28, 0.986])
    >>> correlate([1.0, 2.0, 3.0], [4.0, 4.0, 4.0])["undefined"]
    'the criterion values are all equal (4)'
    """
    ci_level = check_real("ci_level", ci_level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    xs, ys = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    n = len(xs)
    if n != len(ys):
        raise CoverageError(f"criterion validity: {n} effect sizes but {len(ys)} criterion values")
    if n < MIN_WORDS:
        raise CoverageError(
            f"criterion validity needs at least {MIN_WORDS} words with an effect size and a value, got {n}"
        )
    out: dict[str, Any] = {"n": n}
    nan = float("nan")
    why = (
        "the criterion values are all equal" + f" ({ys[0]:g})"
        if np.all(ys == ys[0])
        else "every word has the same effect size" + f" ({xs[0]:g})"
        if np.all(xs == xs[0])
        else ""
    )
    if why:
        for k in (
            "pearson_r",
            "pearson_ci_low",
            "pearson_ci_high",
            "pearson_p",
            "spearman_rho",
            "spearman_ci_low",
            "spearman_ci_high",
            "spearman_p",
        ):
            out[k] = nan
    else:
        dx, dy = xs - xs.mean(), ys - ys.mean()
        r = float(np.clip(dx @ dy / math.sqrt(float(dx @ dx) * float(dy @ dy)), -1.0, 1.0))
        rho = spearman(xs, ys)
        se = 1.0 / math.sqrt(n - 3) if n > 3 else math.inf
        se_rho = math.sqrt((1.0 + rho * rho / 2.0) / (n - 3)) if n > 3 else math.inf
        lo, hi = _fisher(r, se, ci_level)
        rlo, rhi = _fisher(rho, se_rho, ci_level)
        out.update(
            pearson_r=r,
            pearson_ci_low=lo,
            pearson_ci_high=hi,
            pearson_p=_p_two_sided(r, n),
            spearman_rho=rho,
            spearman_ci_low=rlo,
            spearman_ci_high=rhi,
            spearman_p=_p_two_sided(rho, n),
        )
    out.update(ci_level=ci_level, ci_method=CI_METHOD, undefined=why)
    return out


@dataclass(frozen=True, kw_only=True)
class CriterionResult:
    """Criterion validity of one space: the correlation of the words' SC-WEAT d with their criterion values.

    Attributes
    ----------
    criterion : str
        The criterion's name (``"occupations"``) or file.
    model, calibration, test : str
        The model's name, the calibration (``"none"`` for raw), the test the attribute sets came from.
    attribute_a, attribute_b : str
        The attribute sets' names (A is the positive side of d).
    n : int
        Words correlated.
    pearson_r, pearson_ci_low, pearson_ci_high, pearson_p : float
        Pearson's r, its Fisher-z interval, its two-sided p (``nan`` when undefined).
    spearman_rho, spearman_ci_low, spearman_ci_high, spearman_p : float
        Spearman's ρ, its Fisher-z interval with the Bonett-Wright SE, its two-sided p.
    ci_level : float
    ci_method : str
    ci_coverage : str
        The intervals' measured coverage (:func:`coverage_note`), or that the level has none.
    undefined : str
        Why r and ρ are ``nan`` (constant values or effect sizes), else ``""``.
    words, effect_sizes, values : tuple
        The correlated words, their SC-WEAT d in this space and their criterion values.
    missing : tuple of str
        Criterion words the model lacks (did-you-mean appended where the model has near entries).
    undefined_words : tuple of str
        Words whose SC-WEAT d is undefined (the same cosine with every attribute word): left out.
    embedded : tuple of str
        ``"ROLE:stimulus->how"`` for each phrase (see :attr:`isoeat.stats.results.ResultIdentity.embedded`).
    ddof : int
    seed : int or None
        The root seed of the SC-WEAT p-values (the effect sizes are not random).
    """

    criterion: str
    model: str
    calibration: str
    test: str
    attribute_a: str
    attribute_b: str
    n: int
    pearson_r: float
    pearson_ci_low: float
    pearson_ci_high: float
    pearson_p: float
    spearman_rho: float
    spearman_ci_low: float
    spearman_ci_high: float
    spearman_p: float
    ci_level: float
    ci_method: str
    ci_coverage: str = ""
    undefined: str = ""
    words: tuple[str, ...] = ()
    effect_sizes: tuple[float, ...] = ()
    values: tuple[float, ...] = ()
    missing: tuple[str, ...] = ()
    undefined_words: tuple[str, ...] = ()
    embedded: tuple[str, ...] = ()
    ddof: int = 1
    seed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """A flat JSON-ready record in field order (tuples become lists)."""
        return {k: list(v) if isinstance(v := getattr(self, k), tuple) else v for k in self.__dataclass_fields__}

    def to_frame(self) -> Any:
        """This result as a one-row :class:`pandas.DataFrame`, columns = :meth:`to_dict` keys (needs pandas)."""
        return records_frame([self.to_dict()])

    def word_records(self) -> list[dict[str, Any]]:
        """One record per correlated word: word, d, value, model, calibration, criterion (tidy, for a plot)."""
        return [
            {
                "word": w,
                "effect_size": d,
                "value": v,
                "model": self.model,
                "calibration": self.calibration,
                "criterion": self.criterion,
            }
            for w, d, v in zip(self.words, self.effect_sizes, self.values)
        ]


def first_space(results: Sequence[Any]) -> str:
    """``MODEL (CALIBRATION)`` of a list of SC-WEAT results."""
    return f"{results[0].model} ({results[0].calibration})" if results else "the model"


def _refuse_twice(crit: Any, words: Sequence[str], entries: Sequence[str]) -> None:
    """Two criterion words that are one vocabulary entry (``Nurse`` and ``nurse`` on a lowercase model) would count
    one vector twice: refused, naming both."""
    seen: dict[str, str] = {}
    for w, e in zip(words, entries):
        if e in seen:
            raise CoverageError(
                f"criterion {crit.name}: {seen[e]!r} and {w!r} are the same vocabulary entry {e!r}; keep one of them"
            )
        seen[e] = w


def _require(n: int, crit: Any, what: str, left_out: Sequence[str], note: str) -> None:
    """Refuse, in one line naming the criterion and the words left out, fewer than :data:`MIN_WORDS` words."""
    if n < MIN_WORDS:
        shown = ", ".join(left_out[:10]) + (" ..." if len(left_out) > 10 else "")
        raise CoverageError(
            f"criterion {crit.name}: only {n} of its {len(crit)} words {what}; criterion validity "
            f"needs at least {MIN_WORDS} (left out: {shown}{note})"
        )


@public
def criterion_validity(
    model: Encoder,
    criterion: Any = "occupations",
    attributes: Any = "W7",
    *,
    calibration: Calibrator | str | None = None,
    rng: int | np.random.Generator | None = None,
    ddof: int = 1,
    ci_level: float = 0.95,
    min_coverage: float = 0.8,
    force: bool = False,
    permutation: PermutationOptions | None = None,
    **options: Any,
) -> CriterionResult:
    """Criterion validity (WEFAT) of one space: each criterion word's SC-WEAT d correlated with its value.

    Parameters
    ----------
    model : Encoder
        Anything with ``lookup``, e.g. ``isoeat.load_model("glove-6b-50d")``.
    criterion : str, path or Criterion, default "occupations"
        A bundled criterion (``"occupations"``: the share of women in 40 occupations, BLS 2017 via Zhao et al.
        2018), a ``word,value`` CSV file (:func:`isoeat.wordsets.criteria.load_criterion`), or a
        :class:`~isoeat.wordsets.criteria.Criterion`.
    attributes : test, test id, test file or (WordSet, WordSet), default "W7"
        Where A and B come from, as in :func:`isoeat.sc_weat` (W7: A = male terms, B = female terms, the
        gender attribute words of Caliskan et al. 2017's WEFAT).
    calibration, rng, ddof, min_coverage, force
        As in :func:`isoeat.sc_weat`.
    permutation, **options
        How the words' SC-WEAT p-values are computed (:class:`~isoeat.stats.options.PermutationOptions`, or
        its fields by name: ``alternative``, ``method``, ``n_permutations``, ...); r and ρ do not use them.
    ci_level : float, default 0.95
        The level of the Fisher-z intervals on r and ρ.

    Returns
    -------
    CriterionResult
        r and ρ with intervals and p (see :mod:`isoeat.stats.criterion` for every formula), the words, their d
        and values, and the criterion words left out (``missing``, ``undefined_words``).

    Raises
    ------
    CoverageError
        Fewer than :data:`MIN_WORDS` criterion words have a vector and a defined d.
    """
    from ..wordsets.criteria import Criterion, load_criterion
    from .weat import _attribute_sets, sc_weat

    permutation, _, _ = gather(options, where="criterion_validity", permutation=permutation, takes=("permutation",))
    require_encoder(model, "criterion_validity")
    ci_level = check_real("ci_level", ci_level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    crit = criterion if isinstance(criterion, Criterion) else load_criterion(criterion)
    test_id, A, B = _attribute_sets(attributes)
    lk = model.lookup(crit.words)
    missing = tuple(with_suggestions(lk.missing, suggestion_entries(model, lk.missing)))
    value_of = dict(zip(crit.words, crit.values))
    found = list(lk.found)
    _refuse_twice(crit, found, vocabulary_entries(lk.found, lk.case_folded, getattr(lk, "embedded", ())))
    _require(len(found), crit, f"are in {name_of(model, 'the model')}", missing, missing_parts_note(lk))
    res = sc_weat(
        model,
        found,
        attributes,
        calibration=calibration,
        rng=rng,
        ddof=ddof,
        min_coverage=min_coverage,
        force=force,
        permutation=permutation,
    )
    kept = [r for r in res if math.isfinite(r.effect_size)]
    undefined = [r.word for r in res if not math.isfinite(r.effect_size)]
    _require(len(kept), crit, f"have a defined SC-WEAT d in {first_space(res)}", undefined, "")
    corr = correlate([r.effect_size for r in kept], [value_of[r.word] for r in kept], ci_level=ci_level)
    first = res[0]
    return CriterionResult(
        criterion=crit.name,
        model=first.model,
        calibration=first.calibration,
        test=test_id,
        attribute_a=A.name,
        attribute_b=B.name,
        **corr,
        ci_coverage=coverage_note(corr["n"], corr["ci_level"]),
        words=tuple(r.word for r in kept),
        effect_sizes=tuple(r.effect_size for r in kept),
        values=tuple(value_of[r.word] for r in kept),
        missing=missing,
        undefined_words=tuple(undefined),
        embedded=tuple(dict.fromkeys(e for r in res for e in r.embedded if e.startswith("target:"))),
        ddof=int(ddof),
        seed=first.seed,
    )
