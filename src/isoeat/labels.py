"""Every label a reader acts on, as small pure functions: the one home of each rule.

* significance: :func:`is_significant` (``p < alpha``, strict; NaN is not significant);
* change classes (paper §4.3): :func:`classify_change` — ``Stable`` (significance
  unchanged), ``Disappearing`` (significant raw, not after calibration),
  ``Emerging`` (the reverse);
* flags: :func:`change_flags` — ``large_shift`` when :math:`|\\Delta d| > 0.5`,
  ``sign_reversal`` (:func:`opposite_signs`) when the raw and calibrated effect
  sizes have opposite, non-zero signs;
* magnitude: :func:`cohen_magnitude` (Cohen's negligible / small / medium / large);
* the sanity rule (:func:`sanity_failures`: W1 and W2 significant in their expected direction);
* the template-fallback rule of contextual models (:func:`too_many_fallbacks`);
* the other bias metrics: :func:`metric_change` (``changed`` / ``unchanged`` / ``no conclusion``);
* stability: :func:`call_holds` (a calibrated call holds when at least :data:`STABILITY_SHARE` of the
  reference replicates agree; :func:`replicate_agreement`, :func:`shifted_p`, :func:`holds_mark`); the ``Firm``
  mark's levels by the estimated flip probability (:data:`FIRM_LEVELS`, :data:`FIRM_MEANING`,
  :func:`flip_estimate`, :func:`firm_level`);
* the protocol: :func:`protocol_departures` — where a run departs from the paper's (a reduced reference,
  another ε, fewer permutations or contexts, ``--quick``), named under every table and in every record.

Every summariser, table and figure imports its labels from here; the
layering test (``tests/test_layers.py``) keeps copies of these rules out of
other modules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ._errors import ConfigError

__all__ = [
    "CHANGE_CLASSES", "LARGE_SHIFT", "check_alpha", "is_significant", "classify_change", "opposite_signs",
    "change_flags", "compare_records", "COHEN_BOUNDS", "MAGNITUDES", "MAGNITUDE_RULE", "cohen_magnitude",
    "SANITY_TESTS", "sanity_failures", "FALLBACK_WARN_SHARE", "fallback_counts", "too_many_fallbacks",
    "dropped_label", "METRIC_CONCLUSIONS", "METRIC_CHANGE_RULE", "metric_change", "PAPER_PROTOCOL",
    "protocol_departures",
    "protocol_text", "reference_used", "STABILITY_SHARE", "call_holds", "holds_mark", "shifted_p", "FIRM_LEVELS",
    "FIRM_MEANING", "flip_estimate", "firm_level",
    "replicate_agreement",
    "FRESH_DRAW_SCALE", "STABILITY_RULE", "STABILITY_TRACK_RECORD", "corpora_agreement", "corpora_mark",
    "CORPORA_RULE", "CORPORA_COLUMNS", "MAX_CORPORA", "UNDEFINED_D", "undefined_reason", "SCORE_RESOLUTION",
    "UNDEFINED_ROUNDING",
]

#: Why an effect size is undefined: the SD in its denominator is 0, the scores the permutation null shuffles
#: being all equal; then every partition gives the same statistic and p says nothing either (1.0 would read as
#: "no bias" measured). By the scores' test: WEAT and SEAT (s over X and Y), SC-WEAT (cosines over A and B).
UNDEFINED_D = {
    "weat": "d undefined: every target word has the same association score (SD 0); p undefined: every "
            "partition of the targets gives the same S",
    "sc-weat": "d undefined: the word has the same cosine with every attribute word (SD 0); p undefined: every "
               "partition of the attributes gives the same S",
}


#: The finest spread of association scores a d is computed from (1e-10). Scores are differences of mean cosines,
#: each cosine in [-1, 1] rounded to about 1e-16 (float64 near 1, more over many dimensions); scores whose
#: partitions' X-side sums span no more than ``n`` times this are mostly rounding (vectors sharing one dominant
#: direction, e.g. one extreme reference row after centring), and their d a ratio of rounding errors.
SCORE_RESOLUTION = 1e-10

#: Why such a d is undefined (:data:`SCORE_RESOLUTION`), by the scores' test.
UNDEFINED_ROUNDING = (
    "d undefined: the {what} differ by at most 1e-10 (vectors on nearly one direction, e.g. one extreme reference "
    "row after centring): float64 rounding of their cosines is a sizeable share of that, so d would be a ratio of "
    "rounding errors; p undefined too")


def undefined_reason(d: float, test: str = "weat", spread: float = math.inf, tolerance: float = 0.0,
                     n: int = 0) -> str:
    """Why ``d`` is undefined (:data:`UNDEFINED_D` of ``test``), or ``""`` when it is a number.

    Undefined: ``d`` is not a number (the SD is 0), or the scores differ by no more than rounding: ``spread``, the
    range of the X-side sum over the partitions (the largest ``n_x`` scores' sum minus the smallest ``n_x``'
    sum), is at most the p-value's tie ``tolerance`` (:mod:`isoeat.stats.permutation`), so every partition ties
    with the observed one and d is a ratio of rounding errors (inclusive: ``spread == tolerance`` is undefined);
    or ``spread`` is at most ``n`` (the X-side size) times :data:`SCORE_RESOLUTION`: the scores are mostly the
    rounding of cosines near ±1 (:data:`UNDEFINED_ROUNDING`; inclusive too).

    >>> undefined_reason(0.4, spread=4e-10, n=4)[:35]
    'd undefined: the association scores'
    >>> undefined_reason(0.4), undefined_reason(float("nan"))[:13], undefined_reason(0.0, spread=0.0)[:13]
    ('', 'd undefined: ', 'd undefined: ')
    """
    if not (math.isfinite(d) and spread > tolerance):
        return UNDEFINED_D[test]
    if spread <= n * SCORE_RESOLUTION:  # inclusive, as the tie rule
        return UNDEFINED_ROUNDING.format(what="association scores" if test == "weat" else "cosines")
    return ""


def check_alpha(alpha: Any) -> float:
    """``alpha`` as a float in the open interval (0, 1), else a one-line :class:`ConfigError`.

    Examples
    --------
    >>> check_alpha(0.05)
    0.05
    >>> check_alpha(1)
    Traceback (most recent call last):
    ...
    isoeat._errors.ConfigError: alpha must lie in (0, 1), got 1
    """
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise ConfigError(f"alpha must lie in (0, 1), got {alpha!r}") from None
    if isinstance(alpha, bool) or not 0.0 < value < 1.0:
        raise ConfigError(f"alpha must lie in (0, 1), got {alpha!r}")
    return value


CHANGE_CLASSES = ("Stable", "Disappearing", "Emerging")


#: |Δd| strictly above this is flagged ``large_shift`` (the paper's "|Δd| > 0.5").
LARGE_SHIFT = 0.5


#: A contextual model's table warns when strictly more than this share of its stimulus words (test-set
#: entries) had no corpus context and were encoded in the fallback template instead.
FALLBACK_WARN_SHARE = 0.10


def fallback_counts(results: Sequence[Any]) -> tuple[int, int, int]:
    """``(entries in the template, stimulus entries, distinct words in the template)`` of a table's results.

    ``results``: one result (or record) per test of one space. An entry is a word of one set of one test
    (a word in two tests counts twice), among the words the test kept (``n_x + n_y + n_a + n_b``).
    """
    def get(r: Any, k: str) -> Any:
        return r[k] if isinstance(r, dict) else getattr(r, k)

    entries = [w for r in results for w in (get(r, "fallback") or ())]
    total = sum(int(get(r, k)) for r in results for k in ("n_x", "n_y", "n_a", "n_b"))
    return len(entries), total, len({w.split(":", 1)[-1] for w in entries})


def too_many_fallbacks(n_fallback: int, n_total: int) -> bool:
    """``n_fallback / n_total > FALLBACK_WARN_SHARE`` (strict; no entries: False).

    Examples
    --------
    >>> too_many_fallbacks(10, 100), too_many_fallbacks(11, 100)
    (False, True)
    """
    from fractions import Fraction

    return n_total > 0 and Fraction(n_fallback, n_total) > Fraction(str(FALLBACK_WARN_SHARE))  # exact at the bound


def dropped_label(corpus: str = "") -> str:
    """What the words a test dropped are called: out of a static model's vocabulary, or, for a contextual model
    (its ``corpus`` named; ``--missing drop``), without a context in that corpus.

    Examples
    --------
    >>> dropped_label()
    'not in vocabulary (dropped)'
    >>> dropped_label("wikitext-2")
    'no context in corpus wikitext-2 (dropped)'
    """
    return f"no context in corpus {corpus} (dropped)" if corpus else "not in vocabulary (dropped)"


def is_significant(p: float, alpha: float) -> bool:
    """Significance as everywhere in isoeat: ``p < alpha`` (strict; NaN is not significant).

    Examples
    --------
    >>> is_significant(0.05, 0.05), is_significant(0.0499, 0.05)
    (False, True)
    """
    return bool(p < alpha)


def classify_change(p_raw: float, p_calibrated: float, alpha: float = 0.05) -> str:
    """``"Stable"``, ``"Disappearing"`` or ``"Emerging"`` (significance is ``p < alpha``).

    Examples
    --------
    >>> classify_change(0.001, 0.2)
    'Disappearing'
    >>> classify_change(0.2, 0.05)  # p equal to alpha is not significant
    'Stable'
    """
    check_alpha(alpha)
    raw, cal = is_significant(p_raw, alpha), is_significant(p_calibrated, alpha)
    if raw and not cal:
        return "Disappearing"
    if cal and not raw:
        return "Emerging"
    return "Stable"


def opposite_signs(a: float, b: float) -> bool:
    """True when ``a`` and ``b`` are finite, non-zero and of opposite signs (the sign-reversal rule).

    Examples
    --------
    >>> opposite_signs(0.2, -0.1), opposite_signs(0.0, -0.1), opposite_signs(float("nan"), -1.0)
    (True, False, False)
    """
    # compared by sign, not by the product: a * b underflows to -0.0 for tiny values of opposite signs
    return bool(math.isfinite(a) and math.isfinite(b) and ((a > 0 > b) or (a < 0 < b)))


def change_flags(d_raw: float, d_calibrated: float) -> dict[str, Any]:
    """``delta_d`` = d_W − d_R, ``large_shift`` (abs(Δd) > 0.5) and ``sign_reversal`` (opposite, non-zero signs).

    A zero or non-finite effect size on either side is never a sign reversal;
    a non-finite Δd is never a large shift.

    Examples
    --------
    >>> change_flags(1.0, 0.5)["large_shift"], change_flags(1.0, 0.4)["large_shift"]
    (False, True)
    >>> change_flags(0.2, -0.1)["sign_reversal"], change_flags(0.0, -0.1)["sign_reversal"]
    (True, False)
    """
    dd = float(d_calibrated) - float(d_raw)
    return {
        "delta_d": dd,
        "large_shift": bool(math.isfinite(dd) and abs(dd) > LARGE_SHIFT),
        "sign_reversal": opposite_signs(d_raw, d_calibrated),
    }


#: Cohen's (1988, §2.2.3) conventional magnitudes of a standardised mean difference, by lower bound of
#: :math:`|d|` (inclusive): 0.2 small, 0.5 medium, 0.8 large; below 0.2 negligible.
COHEN_BOUNDS = ((0.8, "large"), (0.5, "medium"), (0.2, "small"))
#: Every label :func:`cohen_magnitude` returns ("n/a": d is NaN or infinite).
MAGNITUDES = ("negligible", "small", "medium", "large", "n/a")
#: The rule in one line, printed under every table that shows it.
MAGNITUDE_RULE = ("Cohen's magnitude of |d|: negligible < 0.2 <= small < 0.5 <= medium < 0.8 <= large "
                  "(a convention for effect sizes, not a measure of harm).")


def cohen_magnitude(d: float) -> str:
    """Cohen's label of an effect size: ``abs(d)`` against :data:`COHEN_BOUNDS` (lower bounds inclusive).

    The sign does not matter (-0.9 is large); NaN and infinities are ``"n/a"``.

    Examples
    --------
    >>> [cohen_magnitude(d) for d in (0.19999, 0.2, 0.5, -0.8, 0.79999, float("nan"))]
    ['negligible', 'small', 'medium', 'large', 'medium', 'n/a']
    """
    if d is None or not math.isfinite(d := float(d)):
        return "n/a"
    for bound, label in COHEN_BOUNDS:
        if abs(d) >= bound:
            return label
    return "negligible"


#: Sanity tests (Caliskan et al. 2017; paper §5.3): flowers/insects and instruments/weapons vs pleasant/
#: unpleasant, associations found in nearly every human sample (Greenwald et al. 1998). A space in which one
#: is not significant, in its expected direction, is suspect (raw GPT-2 fails both in the paper's Table A1).
SANITY_TESTS = ("W1", "W2")


def sanity_failures(rows: Sequence[Any], alpha: float) -> list[tuple[str, str, float, float]]:
    """``(test, space, d, p)`` for each sanity test of ``rows`` not significant in its expected direction.

    ``rows`` have ``test``, ``raw`` and ``calibrated`` (results with ``effect_size``, ``p_value``,
    ``alternative``); ``space`` is "raw" or "calibrated". A failure is p ≥ alpha, or d ≤ 0 under a
    two-sided alternative; a result tested with ``alternative="less"`` asks another question and is skipped.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> ok, weak = NS(effect_size=1.2, p_value=0.001, alternative="greater"), NS(effect_size=0.3, p_value=0.05,
    ...                                                                       alternative="greater")
    >>> sanity_failures([NS(test="W1", raw=weak, calibrated=ok), NS(test="W6", raw=weak, calibrated=weak)], 0.05)
    [('W1', 'raw', 0.3, 0.05)]
    """
    out = []
    for r in rows:
        if r.test not in SANITY_TESTS:
            continue
        for space, res in (("raw", r.raw), ("calibrated", r.calibrated)):
            if res.alternative == "less":
                continue
            wrong_way = res.alternative == "two-sided" and not res.effect_size > 0
            if wrong_way or not is_significant(res.p_value, alpha):
                out.append((r.test, space, float(res.effect_size), float(res.p_value)))
    return out


def compare_records(raw: dict, calibrated: dict, alpha: float) -> dict[str, Any]:
    """The comparison columns of one test from its raw and calibrated WEAT records.

    ``raw``/``calibrated`` hold at least ``effect_size``, ``p_value`` and, when
    adjusted, ``p_holm``/``p_bh``. Returns d, p (and adjusted p) of both
    spaces, ``sig_raw``/``sig_calibrated``, ``change`` (and ``change_holm``/
    ``change_bh`` where both adjusted p exist), ``delta_d``, ``large_shift``
    and ``sign_reversal`` — the one definition of every label isoeat prints. Records of two conventions
    (``convention``, issue 46: a d with ddof 0 beside one with ddof 1) are not compared: a ``ConfigError``.
    """
    conventions = {str(r.get("convention") or "isoeat") for r in (raw, calibrated)}
    if len(conventions) > 1:
        raise ConfigError(f"test {raw.get('test', '?')}: its records mix conventions ({', '.join(sorted(conventions))})"
                          ": their d and p are not on one scale; compare records of one convention")
    row = {
        "d_raw": raw["effect_size"], "p_raw": raw["p_value"], "p_method_raw": raw.get("p_method"),
        "d_calibrated": calibrated["effect_size"], "p_calibrated": calibrated["p_value"],
        "p_method_calibrated": calibrated.get("p_method"),
        "p_holm_raw": raw.get("p_holm"), "p_holm_calibrated": calibrated.get("p_holm"),
        "p_bh_raw": raw.get("p_bh"), "p_bh_calibrated": calibrated.get("p_bh"),
        "sig_raw": is_significant(raw["p_value"], alpha),
        "sig_calibrated": is_significant(calibrated["p_value"], alpha),
        "change": classify_change(raw["p_value"], calibrated["p_value"], alpha),
        **change_flags(raw["effect_size"], calibrated["effect_size"]),
    }
    for m in ("holm", "bh"):
        a, b = row[f"p_{m}_raw"], row[f"p_{m}_calibrated"]
        if a is not None and b is not None and math.isfinite(a) and math.isfinite(b):
            row[f"change_{m}"] = classify_change(a, b, alpha)
    return row


#: The conclusion labels of :func:`metric_change`.
METRIC_CONCLUSIONS = ("changed", "unchanged", "no conclusion")

#: :func:`metric_change`'s rule in one sentence, printed under every table of it (``{alpha}`` filled in).
METRIC_CHANGE_RULE = ("changed: significance at alpha = {alpha:g} differs (p < alpha; where the metric has a p-value) "
                      "or the estimate reverses sign (signed metrics; a zero is no reversal); no conclusion: "
                      "unsigned and no p-value (MAC, direct bias, RNSB), compare the estimates.")


def metric_change(estimate_raw: float, p_raw: float, estimate_calibrated: float, p_calibrated: float, *,
                  signed: bool, has_p: bool, alpha: float = 0.05) -> dict[str, Any]:
    """Whether calibration changes a bias metric's conclusion: the one rule behind every metric summary.

    A metric's conclusion is what a reader takes from it: *significant or not
    at alpha* where the metric has a p-value (RND, RIPA, SemAxis, NAS: the
    permutation p; ECT: Spearman's test), and *which way* where it is signed
    (RND, RIPA, SemAxis, NAS). The conclusion **changed** when

    * the metric has a p-value and significance (``p < alpha``, strict, as
      :func:`is_significant`) differs between the spaces
      (:func:`classify_change` is Disappearing or Emerging), or
    * the metric is signed and the estimates have opposite, non-zero signs
      (the ``sign_reversal`` rule of :func:`change_flags`: a zero or NaN
      estimate on either side is no reversal), whether or not significant;

    **unchanged** otherwise, and **no conclusion** for a metric with neither
    a p-value nor a sign (MAC, direct bias, RNSB): only its change in the
    estimate is reported.

    Returns ``delta`` (calibrated - raw), ``sig_raw``, ``sig_calibrated``,
    ``change`` (``Stable`` / ``Disappearing`` / ``Emerging``, ``""`` without
    a p-value), ``sign_reversal`` (False for an unsigned metric),
    ``conclusion`` and ``reason`` (what changed, ``"; "``-joined).

    Examples
    --------
    >>> metric_change(0.3, 0.01, 0.2, 0.05, signed=True, has_p=True)["reason"]  # p == alpha: not significant
    'Disappearing'
    >>> metric_change(0.0, 0.5, -0.3, 0.5, signed=True, has_p=True)["conclusion"]  # zero raw: no reversal
    'unchanged'
    >>> metric_change(0.6, float("nan"), 0.4, float("nan"), signed=False, has_p=False)["conclusion"]
    'no conclusion'
    """
    check_alpha(alpha)
    flags = change_flags(estimate_raw, estimate_calibrated)
    change = classify_change(p_raw, p_calibrated, alpha) if has_p else ""
    reversal = bool(signed and flags["sign_reversal"])
    reasons = ([change] if change not in ("", "Stable") else []) + (["sign reversal"] if reversal else [])
    conclusion = "no conclusion" if not (has_p or signed) else "changed" if reasons else "unchanged"
    return {"delta": flags["delta_d"], "sig_raw": bool(has_p and is_significant(p_raw, alpha)),
            "sig_calibrated": bool(has_p and is_significant(p_calibrated, alpha)), "change": change,
            "sign_reversal": reversal, "conclusion": conclusion, "reason": "; ".join(reasons)}




#: The paper's protocol (§4.1, §4.3): 100,000 reference vocabulary items or sentences, ε = 1e-3, 100,000
#: permutations where p is sampled, 20 contexts per word for contextual models.
PAPER_PROTOCOL = {"reference_size": 100_000, "eps": 1e-3, "permutations": 100_000, "contexts_per_word": 20}


def protocol_departures(*, reference_size: int | None = None, eps: float | None = None, eps_relative: bool = False,
                        permutations: int | None = None, sampled: bool = False,
                        contexts_per_word: int | None = None, quick: bool = False,
                        reference_asked: int | None = None) -> tuple[str, ...]:
    """Where a run departs from :data:`PAPER_PROTOCOL`, in words (empty: the paper's protocol).

    A reference smaller than 100,000 (``reference_size``: the size the fit really used, :func:`reference_used`;
    ``reference_asked``, when larger, is named too: the model, text or corpus had fewer), an ε other than 1e-3 (or
    a relative ε), fewer than 100,000 permutations where a p was sampled (``sampled``; an exact or certified p
    needs none), fewer than 20 contexts per word, ``--quick``. None: not applicable (the question does not arise).

    Examples
    --------
    >>> protocol_departures(reference_size=100_000, eps=1e-3)
    ()
    >>> protocol_departures(reference_size=99_999, permutations=10_000, sampled=True)
    ('reference 99,999 (the paper: 100,000)', '10,000 permutations (the paper: 100,000)')
    >>> protocol_departures(reference_size=332, reference_asked=100_000)
    ('reference 332 (asked 100,000, only 332 available; the paper: 100,000)',)
    """
    p = PAPER_PROTOCOL
    out = ["--quick"] if quick else []
    if reference_size is not None and reference_size < p["reference_size"]:
        short = (f"asked {reference_asked:,}, only {reference_size:,} available; "
                 if reference_asked is not None and reference_asked > reference_size else "")
        out.append(f"reference {reference_size:,} ({short}the paper: {p['reference_size']:,})")
    if eps_relative:
        out.append("relative epsilon (the paper: absolute 0.001)")
    elif eps is not None and eps != p["eps"]:
        out.append(f"epsilon {eps:.12g} (the paper: {p['eps']:g})")
    if sampled and permutations is not None and permutations < p["permutations"]:
        out.append(f"{permutations:,} permutations (the paper: {p['permutations']:,})")
    if contexts_per_word is not None and contexts_per_word < p["contexts_per_word"]:
        out.append(f"{contexts_per_word} contexts per word (the paper: {p['contexts_per_word']})")
    return tuple(out)


def reference_used(meta: Any, asked: int | None = None) -> int | None:
    """The size of the reference a calibrator was really fitted on, from its metadata (None: unknown).

    The fewest of: the size asked for (``asked``), the size its record states (``reference_size``: a sharded or
    ``auto`` fit; ``reference_spec.size``), and what it saw: ``reference_units`` (the sentences of a contextual
    encoder's reference, which a short corpus caps), else ``n`` (the rows it was fitted on: a small model, a short
    reference text). So a 332-row model asked for 100,000 is a reference of 332, whatever was asked.

    Examples
    --------
    >>> reference_used({"n": 332}, 100_000), reference_used({"n": 186, "reference_units": 12}, 200)
    (332, 12)
    >>> reference_used({"n": 100_000, "reference_size": 25_000}), reference_used({}), reference_used(None, 500)
    (25000, None, 500)
    """
    meta = meta if isinstance(meta, dict) else {}
    spec = meta.get("reference_spec") if isinstance(meta.get("reference_spec"), dict) else {}
    seen = meta.get("reference_units") if meta.get("reference_units") is not None else meta.get("n")
    sizes = [v for v in (asked, meta.get("reference_size"), spec.get("size"), seen)
             if isinstance(v, int) and not isinstance(v, bool) and v > 0]
    return min(sizes) if sizes else None


def protocol_text(departures: Sequence[str]) -> str:
    """The ``protocol`` column: ``"paper"``, or ``"reduced: "`` and the departures.

    Examples
    --------
    >>> protocol_text(()), protocol_text(["--quick"])
    ('paper', 'reduced: --quick')
    """
    return "paper" if not departures else "reduced: " + "; ".join(departures)


#: The stability rule (:func:`call_holds`): a calibrated call holds when at least this share of the reference
#: replicates gives the same call (19 of 20, 95 of 100). 0.95: a call marked as holding flips under a fresh
#: reference draw at most about 1 time in 20 (its measured track record: benchmarks/stability.py).
STABILITY_SHARE = 0.95


def call_holds(same: int, total: int, share: float = STABILITY_SHARE) -> bool:
    """``same / total >= share`` (exact at the bound; ``total`` 0: False): the stability rule of a call.

    ``same`` of ``total`` reference replicates give the calibrated space the
    same significance call (and so the same change class: the raw call does
    not depend on the reference sample).

    Examples
    --------
    >>> call_holds(95, 100), call_holds(94, 100), call_holds(19, 20), call_holds(18, 20)
    (True, False, True, False)
    """
    from fractions import Fraction

    return total > 0 and Fraction(int(same), int(total)) >= Fraction(str(share))


#: The levels of the ``Firm`` mark by the estimated flip probability :func:`flip_estimate` (the share of the
#: reference redraws whose calibrated call differs, each redraw's deviation scaled by :data:`FRESH_DRAW_SCALE`):
#: ``(level, the largest estimate it takes)``, in order. ``firm``: at most 5% (:data:`STABILITY_SHARE`: 95% of the
#: redraws agree); ``borderline``: above 5%, at most 25%; ``unstable``: above 25%. What each level means, measured
#: against fresh reference draws (benchmarks/stability.py), is :data:`FIRM_MEANING`.
FIRM_LEVELS = (("firm", 0.05), ("borderline", 0.25), ("unstable", 1.0))  # firm: 1 - STABILITY_SHARE

#: What each level claims about a fresh reference draw: ``(level, the lowest and highest mean flip rate it
#: allows)``; benchmarks/stability.py fails where a level's measured mean flip rate contradicts its band beyond
#: Monte Carlo error. ``borderline`` claims only an upper bound: the estimate q runs high at a larger reference
#: (measured, 2026-12-07: calls marked borderline flip in 15% of fresh draws at 2,000 words, 4.8% at
#: 5,000; firm 2.3% and 0.9%; unstable 36% and 25%).
FIRM_MEANING = {"firm": (0.0, 0.05), "borderline": (0.0, 0.25), "unstable": (0.25, 1.0)}


def flip_estimate(same: int, total: int) -> float:
    r"""The estimated chance that a fresh reference draw flips the call: :math:`\hat q = 1 - k/R`.

    :math:`k` = ``same``, :math:`R` = ``total``.

    ``same`` of ``total`` redraws (:func:`replicate_agreement`) give the calibrated call its own value; ``total``
    0: NaN.

    Examples
    --------
    >>> flip_estimate(95, 100), flip_estimate(0, 0)
    (0.05, nan)
    """
    return (total - same) / total if total > 0 else math.nan


def firm_level(same: int, total: int) -> str:
    r"""The level of :data:`FIRM_LEVELS` of :math:`\hat q` (:func:`flip_estimate`), exact at each bound.

    ``firm`` when :math:`\hat q \le 0.05` (so exactly when :func:`call_holds`), ``borderline`` when
    :math:`0.05 < \hat q \le 0.25`, ``unstable`` above; ``total`` 0: ``""``; counts outside
    :math:`0 \le k \le R, R > 0`: :class:`~isoeat.ConfigError`.

    Examples
    --------
    >>> firm_level(95, 100), firm_level(94, 100), firm_level(75, 100), firm_level(74, 100), firm_level(1, 0)
    ('firm', 'borderline', 'borderline', 'unstable', '')
    """
    from fractions import Fraction

    if total == 0:
        return ""
    if total < 0 or not 0 <= same <= total:  # k of R redraws agree: 0 <= k <= R
        raise ConfigError(f"Firm: {same} of {total} redraws agreeing is impossible (k of R needs 0 <= k <= R)")
    q = 1 - Fraction(int(same), int(total))
    return next(name for name, top in FIRM_LEVELS if q <= Fraction(str(top)))


def holds_mark(same: int | None, total: int | None) -> str:
    """The ``Firm`` cell: ``firm``, ``borderline (k/R)``, ``unstable (k/R)`` (:func:`firm_level`; k of R
    replicates agree), ``-`` (not computed).

    Examples
    --------
    >>> holds_mark(100, 100), holds_mark(94, 100), holds_mark(60, 100), holds_mark(None, None)
    ('firm', 'borderline (94/100)', 'unstable (60/100)', '-')
    """
    if same is None or not total:
        return "-"
    level = firm_level(same, total)
    return level if level == "firm" else f"{level} ({same}/{total})"


def _probit(q: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(min(max(q, 1e-300), 1.0 - 1e-16))  # mutation: equivalent[const 1e-300 -> 5e-301] (a clamp deep in the tail: p = 1 maps near -37 either way)


def shifted_p(p: float, d: float, d_new: float, n_x: int, n_y: int, alternative: str = "greater",
              ddof: int = 1) -> float:
    r"""The p of a WEAT whose effect size moved from ``d`` to ``d_new``, at the slope of the permutation null.

    The permutation null of :math:`S` has exact mean and variance, and the
    standardised statistic is :math:`Z = c\,d` with
    :math:`c = \sqrt{n_x n_y / n}\,\sqrt{(n-1)/(n-\mathrm{ddof})}`, :math:`n = n_x + n_y`
    (Hoeffding 1952; for ``ddof = 1``, :math:`c = \sqrt{n_x n_y/n}`). The cell's own
    p (exact, certified or sampled) is moved along that slope in normal scores:

    .. math:: p' = 1 - \Phi\bigl(\Phi^{-1}(1-p) + c\,(d' - d)\bigr)

    ("greater"; "less" moves the other way, "two-sided" by :math:`|d'| - |d|`
    on :math:`\Phi^{-1}(1 - p/2)`). So :math:`p' = p` when :math:`d' = d`.

    Examples
    --------
    >>> shifted_p(0.05, 0.5, 0.5, 8, 8)
    0.05
    >>> round(shifted_p(0.5, 0.0, 0.5, 8, 8), 4)  # 1 - Phi(2 * 0.5)
    0.1587
    """
    from statistics import NormalDist

    if not all(math.isfinite(v) for v in (p, d, d_new)):
        return math.nan
    if d_new == d:
        return float(p)
    n = n_x + n_y
    c = math.sqrt(n_x * n_y / n) * math.sqrt((n - 1) / (n - ddof))
    phi = NormalDist().cdf
    if alternative == "two-sided":
        return min(1.0, 2.0 * (1.0 - phi(_probit(1.0 - p / 2.0) + c * (abs(d_new) - abs(d)))))
    sign = -1.0 if alternative == "less" else 1.0
    return 1.0 - phi(_probit(1.0 - p) + sign * c * (d_new - d))


#: A fresh reference draw differs from the one the cell used by the difference of two independent draws,
#: whose SD is sqrt(2) times that of one: each redraw's deviation from d is scaled by this before its call is
#: read (measured on 2,000-word references, benchmarks/stability.py: unscaled, calls marked firm flipped in 4.5%
#: of fresh draws and 43 of 100 calls flipping in more than 5% were marked firm; scaled, 2.6% and 25 of 100).
FRESH_DRAW_SCALE = math.sqrt(2.0)


def replicate_agreement(p: float, d: float, d_replicates: Sequence[float], n_x: int, n_y: int, alpha: float, *,
                        alternative: str = "greater", ddof: int = 1,
                        scale: float = FRESH_DRAW_SCALE, p_floor: float | None = None) -> tuple[int, int]:
    r"""``(same, total)``: how many reference redraws give the calibrated call ``p < alpha`` its own value.

    Redraw :math:`r` stands for a fresh reference draw at
    :math:`d'_r = d + \mathrm{scale}\,(d_r - d)` (:data:`FRESH_DRAW_SCALE`: a fresh draw and the cell's
    draw are two independent draws), and its p is :func:`shifted_p` of the cell's p to :math:`d'_r`, never
    below ``p_floor`` (the smallest p the permutation null allows at the test's size,
    :attr:`isoeat.stats.results.WEATResult.p_floor`: a redraw moves d, not the number of partitions; so where
    the floor is at or above ``alpha`` no redraw is significant and the call cannot flip);
    a non-finite redraw d does not count (it is left out of ``total``).

    Examples
    --------
    >>> replicate_agreement(0.01, 1.0, [1.0, 0.9, 0.2], 8, 8, 0.05, scale=1.0)
    (2, 3)
    >>> replicate_agreement(0.05, 1.0, [2.0, 3.0], 3, 3, 0.05, p_floor=0.05)  # 1/C(6,3) = alpha: out of reach
    (2, 2)
    """
    sig = is_significant(p, alpha)
    floor = float(p_floor) if p_floor is not None and math.isfinite(p_floor) else 0.0
    reps = [x for x in d_replicates if math.isfinite(x)]
    same = sum(is_significant(max(floor, shifted_p(p, d, d + scale * (x - d), n_x, n_y, alternative, ddof)), alpha)
               == sig for x in reps)
    return same, len(reps)


#: The levels' measured track record (benchmarks/stability.py, docs/reference-size.md), printed after the rule.
STABILITY_TRACK_RECORD = ("Track record (benchmarks/stability.py, glove-6b-50d W1-W10, 2026-12-07): fresh draws of "
                          "2,000 / 5,000 words flipped calls marked firm in 2.3% / 0.9%, borderline in 15% / 4.8%, "
                          "unstable in 36% / 25%.")

#: The ``Firm`` mark's rule in words, printed under every table with a ``Firm`` column (``{R}``, ``{K}``,
#: ``{record}`` filled in): two lines, the levels with what each claims and their record, then how the mark
#: differs from ``isoeat sensitivity``. (How a redraw's p is found - the cell's p moved to the redraw's d_W along
#: the permutation null's slope, the deviation scaled by :data:`FRESH_DRAW_SCALE` - is in docs/reference-size.md.)
STABILITY_RULE = ("Firm: the share of {R} redraws of the reference sample (its {K} shards resampled) that change "
                  "the calibrated call (p_W < alpha), and so Chg, estimates how often a fresh draw would: firm "
                  f"<= {FIRM_LEVELS[0][1]:.0%} (flips in at most 1 in 20 fresh draws); borderline (k/R agree) "
                  f"<= {FIRM_LEVELS[1][1]:.0%} (may flip, at most 1 in 4); unstable (k/R) above (flips in more than "
                  "1 in 4). {record}\n"
                  "Firm asks whether a fresh draw of this reference keeps the call; 'isoeat sensitivity' asks whether "
                  "other eps and reference sizes keep it, so a firm call can be fragile there.")


#: The most corpora one run compares, its own included (each is a whole run of the model: its contexts and its
#: reference sample): ``isoeat run --across-corpora`` takes at most ``MAX_CORPORA - 1`` besides ``--corpus``.
MAX_CORPORA = 8

#: The comparison-row columns of the across-corpora marks (:func:`isoeat.experiments.stability.folder_corpora`).
CORPORA_COLUMNS = ("raw_call_holds_corpora", "call_holds_corpora", "class_holds_corpora", "corpora_share",
                   "corpora", "corpora_left_out")


def corpora_agreement(own: tuple[float, float], others: Sequence[tuple[float, float]], alpha: float) -> dict[str, Any]:
    """Whether one test's calls hold across corpora: ``own`` is ``(p_raw, p_calibrated)`` with this run's corpus,
    ``others`` the same pair with each other corpus compared (each its own contexts and reference sample).

    Returns ``raw_call``, ``call`` (the calibrated call), ``class`` (the change class): True when every corpus
    gives the same value (unanimity: a handful of corpora is no sample to take a share of); ``same``: how many
    of the ``total`` corpora (this one included) give both calls, and so the class, their values here.

    Examples
    --------
    >>> r = corpora_agreement((0.01, 0.2), [(0.03, 0.3), (0.01, 0.04)], 0.05)
    >>> r["raw_call"], r["call"], r["class"], r["same"], r["total"]
    (True, False, False, 2, 3)
    >>> corpora_agreement((0.01, 0.01), [(0.2, 0.3)], 0.05)["class"]  # Stable both, on opposite calls
    True
    """
    def calls(pair: tuple[float, float]) -> tuple[bool, bool, str]:
        return (is_significant(pair[0], alpha), is_significant(pair[1], alpha),
                classify_change(pair[0], pair[1], alpha))

    mine, theirs = calls(own), [calls(o) for o in others]
    return {"raw_call": all(t[0] == mine[0] for t in theirs), "call": all(t[1] == mine[1] for t in theirs),
            "class": all(t[2] == mine[2] for t in theirs),
            "same": 1 + sum(t[:2] == mine[:2] for t in theirs), "total": 1 + len(theirs)}


def corpora_mark(same: int | None, total: int | None) -> str:
    """The ``Corpora`` cell: ``yes`` (every corpus gives both calls their values here), ``no (k/n)``, ``-``.

    Examples
    --------
    >>> corpora_mark(3, 3), corpora_mark(2, 3), corpora_mark(None, None), corpora_mark(1, 1)
    ('yes', 'no (2/3)', '-', '-')
    """
    if same is None or not total or total < 2:
        return "-"
    return "yes" if same == total else f"no ({same}/{total})"


#: :func:`corpora_agreement`'s rule in words, printed under every table with a ``Corpora`` column
#: (``{corpora}``, ``{left_out}`` filled in).
CORPORA_RULE = ("Corpora: whether the raw call (p_R < alpha) and the calibrated call (p_W < alpha), and so the change "
                "class, are the same with every corpus compared ({corpora}; each gives the contextual model its own "
                "contexts and reference sample); no (k/n): only k of the n corpora agree. A check of this run's "
                "choice of corpus over the corpora at hand, not a probability: it has no track record.{left_out}")


# --- ML-EAT levels (issue 43; isoeat.stats.levels) -----------------------------------------------------------------

#: The letters of a Level-2 call (ML-EAT's nine EAT patterns are two of them: X's, then Y's).
PATTERN_LETTERS = {"A": "toward A", "0": "null", "B": "toward B", "-": "undefined"}

#: :func:`eat_pattern` in words, printed under every table with a ``Pattern`` column (``{alpha}`` filled in).
PATTERN_RULE = ("Pattern: Level 2 of X then of Y (ML-EAT): A = toward A (d > 0, two-sided p < alpha = {alpha:g}), "
                "B = toward B (d < 0, p < alpha), 0 = null, - = undefined; '*' marks a pattern that calibration "
                "changed.")


def pattern_letter(d: float, p: float, alpha: float) -> str:
    """One Level-2 call: ``"A"`` (``d > 0`` and significant), ``"B"`` (``d < 0`` and significant), ``"0"``, or
    ``"-"`` (d undefined). Significance is :func:`is_significant` (p < alpha, strict).

    Examples
    --------
    >>> pattern_letter(0.9, 0.01, 0.05), pattern_letter(-0.9, 0.01, 0.05), pattern_letter(0.9, 0.05, 0.05)
    ('A', 'B', '0')
    >>> pattern_letter(float("nan"), float("nan"), 0.05)
    '-'
    """
    if not (math.isfinite(d) and math.isfinite(p)):
        return "-"
    if not is_significant(p, alpha) or d == 0:
        return "0"
    return "A" if d > 0 else "B"


def eat_pattern(l2x_d: float, l2x_p: float, l2y_d: float, l2y_p: float, alpha: float) -> str:
    """The ML-EAT pattern: :func:`pattern_letter` of Level 2 of X, then of Y (``"A0"``: X toward A, Y null).

    Examples
    --------
    >>> eat_pattern(1.2, 0.001, -0.3, 0.4, 0.05), eat_pattern(1.2, 0.001, 0.8, 0.01, 0.05)
    ('A0', 'AA')
    """
    return pattern_letter(l2x_d, l2x_p, alpha) + pattern_letter(l2y_d, l2y_p, alpha)


def pattern_changed(raw: str, calibrated: str) -> bool:
    """Whether calibration changed the pattern (an undefined side, ``-``, is a change too: it is not the same call).

    Examples
    --------
    >>> pattern_changed("A0", "A0"), pattern_changed("A0", "AB")
    (False, True)
    """
    return raw != calibrated


#: The anisotropy rule's bound on every block's |z| (block mean cosine against the frame's random-pair cosine,
#: in frame SDs). See :data:`COSINE_FLAT_RULE`.
COSINE_FLAT_Z = 1.0
#: The anisotropy rule's bound on the spread of the four block means (largest minus smallest), in frame SDs.
COSINE_FLAT_SPREAD = 0.25

#: :func:`cosine_flat` in one sentence (``{z}``, ``{spread}`` filled in by :func:`cosine_flat_rule`).
COSINE_FLAT_RULE = ("Flat: cosine cannot discriminate here when every block's mean cosine lies within {z:g} SD of "
                    "the model's random-pair cosine (|z| < {z:g}) and the four block means lie within {spread:g} SD "
                    "of one another: the test's words are no closer to each other than random words of this "
                    "model, and the differences d is built from are a small share of one random pair's spread.")


def cosine_flat_rule() -> str:
    """:data:`COSINE_FLAT_RULE` with its constants."""
    return COSINE_FLAT_RULE.format(z=COSINE_FLAT_Z, spread=COSINE_FLAT_SPREAD)


def cosine_flat(block_z: Sequence[float], z_max: float = COSINE_FLAT_Z, spread_max: float = COSINE_FLAT_SPREAD
                ) -> bool | None:
    """The anisotropy rule: True when every ``|z| < z_max`` and ``max(z) - min(z) < spread_max`` (both strict, so
    a block exactly at a bound is not flat); ``None`` when a z is not a number (no frame).

    Examples
    --------
    >>> cosine_flat([0.1, 0.2, 0.15, 0.05]), cosine_flat([0.1, 0.2, 0.15, 0.45]), cosine_flat([1.0, 1.0, 1.0, 1.0])
    (True, False, False)
    """
    zs = [float(z) for z in block_z]
    if not zs or not all(math.isfinite(z) for z in zs):
        return None
    return bool(max(abs(z) for z in zs) < z_max and max(zs) - min(zs) < spread_max)
