"""Plain-text, CSV and JSON renderings of results (reads results, computes nothing)."""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .._names import printable
from .._records import csv_text, finite_or_none, records_to_csv, to_json, write_outputs  # noqa: F401 - re-exported
from .._version import versioned
from ..labels import holds_mark, is_significant
from ..stats.results import with_suggestions

__all__ = [
    "format_p",
    "format_d",
    "comparison_table",
    "metric_columns",
    "metric_comparison_cells",
    "metric_comparison_table",
    "weat_table",
    "reach_footer",
    "undefined_footer",
    "records_to_csv",
    "csv_text",
    "finite_or_none",
    "to_json",
    "emit_records",
    "write_outputs",
]

_CHG = {"Stable": "S", "Disappearing": "D", "Emerging": "E"}


#: counts above this print in scientific notation in tables (an exact test's number of partitions can have
#: 150 digits); records keep the exact integer
MAX_PLAIN_COUNT = 10**12


def format_count(n: int) -> str:
    """A count as tables print it: ``1,048,576`` up to :data:`MAX_PLAIN_COUNT` (inclusive), else
    ``1.23e+149`` (three significant digits; the record keeps every digit)."""
    n = int(n)
    if abs(n) <= MAX_PLAIN_COUNT:
        return f"{n:,}"
    from decimal import Decimal

    return format(Decimal(n), ".2e").replace("E", "e")  # exact integer, rounded once (a float would overflow)


def format_p(p: float) -> str:
    """``.0098`` style for p >= 1e-4, ``3.2e-10`` below (the exact value, not a floor); ``-`` where there is none
    (undefined: :func:`undefined_footer` says why)."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "-"
    if p >= 1e-4:
        s = f"{p:.4f}"
        return s[1:] if s.startswith("0.") else s
    if p == 0:
        return "0"
    return f"{p:.1e}"


def format_d(d: float) -> str:
    """``0.52``; ``-`` where d is undefined (:func:`undefined_footer` says why)."""
    return "-" if d is None or math.isnan(d) else f"{d:.2f}"


def undefined_footer(results: Sequence[Any], names: Sequence[str]) -> str:
    """One line per reason naming the results (objects or records) whose d and p are undefined (``-`` in the
    table; their ``undefined``), '' when none."""
    by: dict[str, list[str]] = {}
    for n, r in zip(names, results):
        why = r.get("undefined", "") if isinstance(r, dict) else getattr(r, "undefined", "")
        if why:
            by.setdefault(why, []).append(n)
    return "\n".join(f"-: {', '.join(dict.fromkeys(ns))}: {why}." for why, ns in by.items())


def embedded_footer(results: Sequence[Any], names: Sequence[str] | None = None) -> str:
    """The line under a table when a stimulus was a phrase (static vectors): how each was embedded, and the rule.

    ``results`` carry ``embedded`` (``"ROLE:stimulus->how"``); ``names`` label each result (the test).
    ``""`` when every stimulus was one vocabulary token.
    """
    from ..backends._phrases import PHRASE_RULE

    seen: dict[str, None] = {}
    for i, r in enumerate(results):
        entries = r.get("embedded", ()) if isinstance(r, dict) else getattr(r, "embedded", ())
        lead = f"{names[i]} " if names else ""
        seen.update({f"{lead}{e.replace('->', ': ')}": None for e in entries})
    if not seen:
        return ""
    return f"Phrases: {'; '.join(seen)}. Rule: {PHRASE_RULE}."


def _render(header: Sequence[str], rows: Sequence[Sequence[str]], align_left: int = 2, last_left: bool = False) -> str:
    rows = [[printable(c) for c in r] for r in rows]  # a label's control characters and bidi overrides as escapes
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    def fmt(cells: Sequence[str]) -> str:
        out = []
        for i, c in enumerate(cells):
            left = i < align_left or (last_left and i == len(cells) - 1)
            out.append(c.ljust(widths[i]) if left else c.rjust(widths[i]))
        return "  ".join(out).rstrip()
    lines = [fmt(header), "  ".join("-" * w for w in widths)]
    lines.extend(fmt(r) for r in rows)
    return "\n".join(lines)


_ESTIMAND_TEXT = {
    "given-attributes": "the effect given these attribute words (targets random)",
    "populations": "the effect over the populations both word sets were drawn from (targets and attributes random)",
    "given-word": "the effect given this word (attribute words random)",
}


def format_ci(ci: Any) -> str:
    """An interval on d as a table cell: ``[lo, hi]``, the estimate first where it is not d, ``!`` when flagged.

    A missing interval (no honest one exists: see the footer) reads ``-``.
    """
    if ci is None or not (math.isfinite(ci.low) and math.isfinite(ci.high)):
        return "-"
    cell = f"[{format_d(ci.low)}, {format_d(ci.high)}]"
    if math.isfinite(ci.estimate):
        cell = f"{format_d(ci.estimate)} {cell}"
    return cell + ("!" if ci.warning else "")


def ci_footer(intervals: Sequence[Any], names: Sequence[str], alternative: str | None = None) -> str:
    """Footer lines naming what the intervals estimate, how, and every warning or missing interval; with a
    one-sided ``alternative`` (the p beside them), that the p is one-sided and the interval two-sided, naming the
    intervals that hold 0 (a one-sided p < 0.05 matches a two-sided 90% interval, not a 95% one)."""
    shown = [(n, c) for n, c in zip(names, intervals) if c is not None]
    if not shown:
        return ""
    lines = []
    kinds = sorted({(c.level, c.estimand, c.label, c.n_resamples) for _, c in shown})
    for level, estimand, label, n in kinds:
        how = label + (f", {n:,} resamples" if n else "")
        lines.append(f"CI: {level * 100:.10g}% interval on {_ESTIMAND_TEXT.get(estimand, estimand)}: "
                     f"estimand {estimand} ({how}).")
        if estimand == "populations" and label == "jackknife":
            lines.append("    The value before it estimates d without the attribute words' noise (it can exceed d).")
    holds0 = [n for n, c in shown if math.isfinite(c.low) and math.isfinite(c.high) and c.low <= 0 <= c.high]
    if alternative in ("greater", "less") and holds0:
        lines.append(f"p is one-sided ({alternative}), the intervals two-sided: a one-sided p < alpha matches a "
                     "two-sided interval at level 1 - 2 alpha (90% for alpha 0.05), so a p < alpha can sit beside a "
                     f"{shown[0][1].level * 100:.10g}% interval that holds 0 (here: "
                     f"{', '.join(dict.fromkeys(holds0))}).")
    for warning in dict.fromkeys(c.warning for _, c in shown if c.warning):
        which = ", ".join(n for n, c in shown if c.warning == warning)
        lines.append(f"! {warning} ({which}).")
    for n, c in shown:
        if c.note and not (math.isfinite(c.low) and math.isfinite(c.high)):
            lines.append(f"- {n}: {c.note}.")
    return "\n".join(lines)


def reach_footer(results: Sequence[Any], names: Sequence[str], alpha: float = 0.05) -> str:
    """One line naming the results whose p cannot fall below ``alpha`` at their set sizes ('' when all can).

    Reads each result's ``p_floor`` (smallest p its permutation null allows); a name is listed once.
    """
    out = {n: r.p_floor for n, r in zip(names, results) if not r.can_reach(alpha)}
    if not out:
        return ""
    items = ", ".join(f"{n} (smallest possible p {format_p(floor)})" for n, floor in out.items())
    return f"! p < {alpha:g} is out of reach at these set sizes, whatever the vectors: {items}."


def sanity_footer(rows: Sequence[Any], alpha: float = 0.05) -> str:
    """One line naming the sanity tests (W1, W2) not significant in a space ('' when none; see ``sanity_failures``)."""
    from ..labels import sanity_failures

    bad = sanity_failures(rows, alpha)
    if not bad:
        return ""
    items = ", ".join(f"{t} {space} (d = {format_d(d)}, p = {format_p(p)})" for t, space, d, p in bad)
    return (f"! sanity check failed: {items}. W1 and W2 (flowers/insects, instruments/weapons vs pleasant/"
            "unpleasant) hold in nearly every human sample; a space that misses them is suspect (paper §5.3).")


def reference_footer(meta: dict[str, Any]) -> str:
    """The footer line of the SE_ref column: what it is, the shards and the reference size used."""
    unit = meta.get("reference_unit") or "vectors"
    line = (f"SE_ref: jackknife SE of d_W over {meta.get('reference_shards')} shards of the reference sample "
            f"(the spread of d_W were the reference drawn again); reference size used: "
            f"{meta.get('reference_size')} {unit}")
    if meta.get("reference_mode") == "auto":
        why = {"stable": f"every SE_ref < {meta.get('reference_tolerance'):g}, change classes unchanged over the "
                         "last 2 shards",
               "cap": f"reached the cap of {meta.get('reference_max_size')}"}
        line += f" (--reference-size auto: {why.get(str(meta.get('reference_stopped')), '')})"
    precision = meta.get("reference_se_precision")
    if isinstance(precision, (int, float)) and math.isfinite(precision):
        line += f"; each SE_ref is itself uncertain by about ±{precision:.0%} (its CV with this many shards)"
    factor, population = meta.get("reference_se_factor"), meta.get("reference_population")
    if population and isinstance(factor, (int, float)) and factor != 1.0:
        line += (f"; SE_ref includes the finite-population factor {factor:.3f} = sqrt(1 - n/M): auto used "
                 f"{meta.get('reference_size')} of the top {population} {unit}, drawn without replacement, "
                 f"so it is the spread of d_W around the top-{population} d_W")
    return line + "."


def negative_d_footer(rows: Sequence[Any]) -> str:
    """The line under a table that shows a negative d (``""`` where none is): what its sign means, and that a
    one-sided p of the other side never calls it significant (a d of -1.53 then -1.50 is Stable and unflagged:
    the same direction, the same call)."""
    neg = [f"{r.test}_{x}" for r in rows for x, res in (("R", r.raw), ("W", r.calibrated))
           if isinstance(res.effect_size, float) and res.effect_size < 0]
    if not neg:
        return ""
    line = f"d < 0 ({', '.join(neg)}): the association runs the other way (X with B, Y with A)"
    if rows[0].raw.alternative == "greater":
        line += ("; the one-sided p (greater) tests only d > 0, so a negative d is never significant here: "
                 "--alternative two-sided tests both directions")
    return line + "."


#: Failures that a rerun cannot mend: the same words, model and options fail the same way.
_LASTING_FAILURES = {"CoverageError": "too few of a set's words are in the model: change the word lists or the model, "
                                      "or lower --min-coverage"}


def retry_advice(failures: Sequence[dict]) -> str:
    """What to do about a run's failed cells (``failures.json`` records): ``--overwrite failed`` retries the cells
    that may succeed on a rerun; a coverage failure would fail again, so it is named with its remedy instead."""
    lasting = {str(f.get("type")) for f in failures} & set(_LASTING_FAILURES)
    retry = sum(f.get("type") not in _LASTING_FAILURES for f in failures)
    which = "them" if not lasting else f"the other {retry}"
    parts = [f"rerun with --overwrite failed to retry {which}"] if retry else []
    parts += [f"{sum(f.get('type') == t for f in failures)} {t} cell(s) would fail again ({_LASTING_FAILURES[t]})"
              for t in sorted(lasting)]
    return "; ".join(parts)


def stability_footer(meta: dict[str, Any]) -> str:
    """The footer line of the ``Firm`` column: the rule, the redraws and the rule's measured track record (marks
    asked for and not made: no column, the calibrator's ``reference_replicates_note`` instead)."""
    from ..labels import STABILITY_RULE, STABILITY_TRACK_RECORD

    return STABILITY_RULE.format(R=meta.get("reference_replicates"), K=meta.get("reference_replicate_shards"),
                                 record=STABILITY_TRACK_RECORD)


def corpora_cell(marks: dict[str, Any] | None) -> str:
    """The ``Corpora`` cell of one row from its ``corpora_share`` ("k/n"): :func:`~isoeat.labels.corpora_mark`."""
    from ..labels import corpora_mark

    if not marks or not marks.get("corpora_share"):
        return "-"
    same, total = (int(x) for x in str(marks["corpora_share"]).split("/"))
    return corpora_mark(same, total)


def corpus_names(value: Any) -> list[str]:
    """A ``corpora``/``corpora_left_out`` field as a list: a list as it is (JSON), a CSV cell split by
    :func:`isoeat._records.cell_list`."""
    from .._records import cell_list

    return cell_list(value)


def corpora_footer(marks: Sequence[dict[str, Any]]) -> str:
    """The footer line of the ``Corpora`` column: the rule, the corpora that voted and those left out."""
    from ..labels import CORPORA_RULE, FALLBACK_WARN_SHARE

    names = list(dict.fromkeys(c for m in marks for c in corpus_names(m.get("corpora"))))
    out = list(dict.fromkeys(c for m in marks for c in corpus_names(m.get("corpora_left_out"))))
    left = (f" Left out (over the {FALLBACK_WARN_SHARE:.0%} template-fallback gate, or no result): {'; '.join(out)}."
            if out else "")
    if len(names) < 2:
        return f"Corpora: no marks: fewer than two corpora vote ({', '.join(names) or 'none'}).{left}"
    return CORPORA_RULE.format(corpora=", ".join(names), left_out=left)


def corpora_table(comps: Sequence[Any]) -> str:
    """One model's results on several corpora side by side: per test and corpus ``d_R/d_W`` (``*``: p < alpha)
    and the change class, then the ``Corpora`` mark of the first comparison (this run's corpus).

    ``comps``: :class:`~isoeat.experiments.compare.Comparison` of one model and calibration, one per corpus.
    """
    from pathlib import PurePath

    first = comps[0]
    alpha = first.alpha

    def cell(row: Any) -> str:
        marks = ["*" if is_significant(res.p_value, alpha) else "" for res in (row.raw, row.calibrated)]
        return (f"{format_d(row.raw.effect_size)}{marks[0]}/{format_d(row.calibrated.effect_size)}{marks[1]} "
                f"{_CHG.get(row.change, row.change)}")

    names: list[str] = []
    seen: set[str] = set()
    for comp in comps:  # left out: over the fallback gate, the rule folder_corpora votes by
        base = PurePath(comp.corpus).name if ("/" in comp.corpus or "\\" in comp.corpus) else comp.corpus
        name, k = base, 2
        while name in seen:  # two files of one name in two folders
            name, k = f"{base}#{k}", k + 1
        seen.add(name)
        names.append(name + (" (left out)" if comp.fallback_exceeded else ""))
    by_corpus = [{r.test: r for r in comp.rows} for comp in comps]
    rows = [[r.test, *[cell(b[r.test]) if r.test in b else "-" for b in by_corpus], corpora_cell(r.across_corpora)]
            for r in first.rows]
    title = (f"{printable(first.model)} across corpora: d_R/d_W and the change class on each corpus (each its own "
             f"contexts and reference sample), raw vs {printable(first.calibration)}")
    foot = [f"* p < {alpha:g}. Chg: S=Stable, D=Disappearing, E=Emerging. Corpora: this run's corpus "
            f"({names[0]}) against the others, as under its table."]
    return "\n".join([title, "", _render(["ID", *names, "Corpora"], rows, align_left=1, last_left=True), "", *foot])


#: The short forms of Cohen's labels in the text table's ``Mag`` column (``negl/med``, ...).
_MAG_SHORT = {"negligible": "negl", "medium": "med"}


def magnitude_cell(d_raw: float, d_calibrated: float) -> str:
    """``"large/med"``: :func:`~isoeat.experiments.compare.cohen_magnitude` of both d, short forms."""
    from ..labels import cohen_magnitude

    return "/".join(_MAG_SHORT.get(m, m) for m in (cohen_magnitude(d_raw), cohen_magnitude(d_calibrated)))


@dataclass(frozen=True)
class _Columns:
    """Which optional columns a comparison table has: adjusted p, intervals, reference-SE, stability, corpora."""

    adjust: str
    with_ci: bool
    with_se: bool
    with_firm: bool
    with_corpora: bool

    @property
    def adj_field(self) -> str | None:
        return {"holm": "p_holm", "bh": "p_bh", "none": None}[self.adjust]

    @property
    def adj_label(self) -> str:
        return {"holm": "Holm", "bh": "BH", "none": ""}[self.adjust]

    @classmethod
    def of(cls, comp: Any, adjust: str) -> _Columns:
        rows = comp.rows
        return cls(adjust, with_ci=any(r.raw.effect_size_ci is not None for r in rows),
                   with_se=any(getattr(r, "reference_se", None) is not None for r in rows),
                   with_firm=any(getattr(r, "replicates_same", None) is not None for r in rows),
                   with_corpora=any(getattr(r, "across_corpora", None) is not None for r in rows))

    def header(self) -> list[str]:
        header = ["ID", "Bias"]
        for side in "RW":
            header.append(f"d_{side}")
            if self.with_se and side == "W":
                header.append("SE_ref")
            if self.with_ci:
                header.append(f"CI_{side}")
            header.append(f"p_{side}")
            if self.adj_field:
                header.append(f"{self.adj_label}_{side}")
        header += ["Mag", "Chg"]
        return header + ["Firm"] * self.with_firm + ["Corpora"] * self.with_corpora + ["Flags"]


def comparison_table(comp: Any, adjust: str = "holm") -> str:
    """Table A1 layout: d and p raw (R) and calibrated (W), change class, flags.

    ``adjust`` (``"holm"``, ``"bh"`` or ``"none"``) adds the adjusted p of each
    space next to its raw p; ``ci`` columns appear when bootstrap intervals
    were computed.
    """
    cols = _Columns.of(comp, adjust)
    rows = [_comparison_cells(r, comp.alpha, cols) for r in comp.rows]
    foot = _comparison_footer(comp, cols)
    return "\n".join([_comparison_title(comp), "", _render(cols.header(), rows, last_left=True), "", *foot])


def _comparison_cells(r: Any, alpha: float, cols: _Columns) -> list[str]:
    """One test's cells of the comparison table (``cols.header()``'s order)."""
    flags = ["|dd|>0.5"] * bool(r.large_shift) + ["sign"] * bool(r.sign_reversal)
    cells = [r.test, r.bias_type]
    for res in (r.raw, r.calibrated):
        cells.append(format_d(res.effect_size) + ("*" if is_significant(res.p_value, alpha) else " "))
        if cols.with_se and res is r.calibrated:
            cells.append("-" if r.reference_se is None else f"{r.reference_se:.3f}")
        if cols.with_ci:
            cells.append(format_ci(res.effect_size_ci))
        cells.append(format_p(res.p_value))
        if cols.adj_field:
            cells.append(format_p(getattr(res, cols.adj_field)))
    cells += [magnitude_cell(r.raw.effect_size, r.calibrated.effect_size), _CHG.get(r.change, r.change)]
    if cols.with_firm:
        cells.append(holds_mark(r.replicates_same, r.replicates))
    if cols.with_corpora:
        cells.append(corpora_cell(getattr(r, "across_corpora", None)))
    cells.append(",".join(flags) or "-")
    return cells


def _comparison_title(comp: Any) -> str:
    """The model, the calibration, its parameters and reference (and a model not verified)."""
    meta = comp.calibrator_metadata
    label = "ZCA-whitened" if comp.calibration == "zca" else f"calibrated with {comp.calibration}"
    title = printable(f"{comp.model}: raw (R) vs {label} (W)")
    if meta:
        from ..calibration.registry import params_text

        shown = params_text(meta.get("params") or {}, meta.get("eps"))  # a relative ε with the absolute one used
        title += f"; {shown + ', ' if shown else ''}reference: {meta.get('reference')}"
        if meta.get("model_check"):  # a calibrator file without a model fingerprint (calibration/io.py)
            title += "; model not verified (the calibrator file records no model fingerprint)"
    return title


def _comparison_footer(comp: Any, cols: _Columns) -> list[str]:
    """The lines under the comparison table: the legend and counts, then what each optional column and each
    departure from the exact, full protocol needs said."""
    from ..labels import MAGNITUDE_RULE

    meta = comp.calibrator_metadata
    s = comp.summary
    methods = sorted({r.raw.p_method for r in comp.rows} | {r.calibrated.p_method for r in comp.rows})
    foot = [
        f"* p < {comp.alpha:g} (one-sided unless stated: {comp.rows[0].raw.alternative}). "
        f"Chg: S=Stable, D=Disappearing, E=Emerging. p: {' / '.join(methods)}.",
        f"Stable {s['Stable']}, Disappearing {s['Disappearing']}, Emerging {s['Emerging']}; "
        f"Flags: |dd|>0.5 (dd = d_W - d_R) in {s['large_shift']}, sign (d_R, d_W of opposite signs) in "
        f"{s['sign_reversal']}.",
    ]
    foot += [line for line in [negative_d_footer(comp.rows)] if line]
    if cols.adj_field:
        foot.append(f"{cols.adj_label}_R, {cols.adj_label}_W: "
                    f"{'Holm' if cols.adjust == 'holm' else 'Benjamini-Hochberg'}-adjusted "
                    f"p across the {len(comp.rows)} tests of each space (change classes use unadjusted p).")
    foot.append("Mag: raw/calibrated " + MAGNITUDE_RULE.replace("negligible", "negl").replace("medium", "med"))
    if cols.with_ci:
        foot.append(ci_footer([res.effect_size_ci for r in comp.rows for res in (r.raw, r.calibrated)],
                              [f"{r.test}{side}" for r in comp.rows for side in ("_R", "_W")],
                              comp.rows[0].raw.alternative))
    if cols.with_se:
        foot.append(reference_footer(meta))
    foot += [stability_footer(meta)] if cols.with_firm else [
        str(n) for n in [meta.get("reference_replicates_note")] if n]
    if cols.with_corpora:
        foot.append(corpora_footer([r.across_corpora for r in comp.rows if r.across_corpora is not None]))
    elif getattr(comp, "contexts", False):
        foot += one_corpus_footer(getattr(comp, "corpus", ""))
    return foot + _p_method_footer(comp) + _words_footer(comp)


def _p_method_footer(comp: Any) -> list[str]:
    """Reach, undefined d, the sanity check, and where p is Monte Carlo or a certified bracket."""
    foot = []
    both = [res for r in comp.rows for res in (r.raw, r.calibrated)]
    sides = [(r.test, x) for r in comp.rows for x in "RW"]
    foot += [line for line in (reach_footer(both, [t for t, _ in sides], comp.alpha),
                               undefined_footer(both, [f"{t}_{x}" for t, x in sides])) if line]
    sanity = sanity_footer(comp.rows, comp.alpha)
    if sanity:
        foot.append(sanity)
    mc = [r.test for r in comp.rows if "monte-carlo" in (r.raw.p_method, r.calibrated.p_method)]
    cert = [f"{r.test}_{side} [{res.p_ci_low:.4g}, {res.p_ci_high:.4g}]" for r in comp.rows
            for side, res in (("R", r.raw), ("W", r.calibrated)) if res.p_method == "certified"]
    if mc:
        n = comp.rows[[r.test for r in comp.rows].index(mc[0])].raw.n_permutations
        foot.append(f"Monte Carlo ({n:,} permutations, p=(k+1)/(N+1)) for: {', '.join(mc)}"
                    f"{'.' if cert else '; exact elsewhere.'}")
    if cert:
        foot.append(f"Certified (p = upper end of a bracket that holds the exact p) for: {', '.join(cert)}; "
                    f"{'exact elsewhere.' if len(cert) + 2 * len(mc) < 2 * len(comp.rows) else 'none exact.'}")
    return foot


def _words_footer(comp: Any) -> list[str]:
    """Words dropped, template fallbacks, and the departures from the paper's protocol."""
    foot = []
    dropped = [f"{r.test} {w}" for r in comp.rows
               for w in with_suggestions(r.raw.dropped, getattr(r.raw, "suggestions", ()))]
    if dropped:
        from ..labels import dropped_label

        label = dropped_label(getattr(comp, "corpus", "") if getattr(comp, "contexts", False) else "")
        foot.append(f"{label[0].upper()}{label[1:]}: " + "; ".join(dropped))
    foot += fallback_footer([r.raw for r in comp.rows], contexts=getattr(comp, "contexts", False),
                            corpus=getattr(comp, "corpus", ""))
    foot += [line for line in [embedded_footer([r.raw for r in comp.rows], [r.test for r in comp.rows])] if line]
    return foot + protocol_footer(getattr(comp, "departures", ()))


def protocol_footer(departures: Sequence[str]) -> list[str]:
    """The ``!`` line under a table whose run departs from the paper's protocol (none for the paper's)."""
    if not departures:
        return []
    return [f"! Reduced protocol, not the paper's: {'; '.join(departures)}. Read these numbers as a check of the "
            "pipeline, not as a result."]


def fallback_footer(results: list[Any], *, contexts: bool = False, corpus: str = "") -> list[str]:
    """Footer lines on words encoded in the fallback template (one result per test of one space).

    Printed for a contextual model (``contexts``) even when none fell back, and wherever one did: the corpus
    the contexts came from, the count of test-set entries among the stimulus words, the words, and a ``!``
    warning above :data:`~isoeat.labels.FALLBACK_WARN_SHARE` of them with the corpora present offline.
    """
    from ..labels import FALLBACK_WARN_SHARE, fallback_counts, too_many_fallbacks

    k, n, distinct = fallback_counts(results)
    if not (contexts or k):
        return []
    places = 0  # a share above the bound is never printed as the bound itself (21 of 200: 10.5%, not 10%)
    while too_many_fallbacks(k, n) and float(f"{100 * k / n:.{places}f}") <= 100 * FALLBACK_WARN_SHARE:
        places += 1
    share = f" ({100 * k / n:.{places}f}%)" if n else ""
    context = f"context in corpus {corpus}" if corpus else "corpus context"
    out = [f"Template fallback: {k} of {n} stimulus words{share} had no {context} and were encoded in the "
           f"fallback template{'.' if not k else f' ({distinct} distinct word(s)).'}"]
    if k:
        entries = [f"{r.test} {w}" for r in results for w in (getattr(r, "fallback", ()) or ())]
        out.append(f"No corpus context, encoded in the fallback template: {distinct} distinct word(s), {k} test-set "
                   f"entries: {'; '.join(entries[:12])}{'; ...' if len(entries) > 12 else ''}")
    if too_many_fallbacks(k, n):
        out.append(f"! more than {FALLBACK_WARN_SHARE:.0%} of the stimulus words fell back to the template: their "
                   f"vectors say little about the words in context; {corpus_advice(corpus)}")
    return out


def one_corpus_footer(current: str) -> list[str]:
    """The line under a contextual model's table whose calls rest on one corpus while others are present offline
    (none when no other is present)."""
    from ..corpora import offline_corpora

    try:
        others = [c["name"] for c in offline_corpora() if c["name"] != current]
    except Exception:  # noqa: BLE001 - a footer never fails a table
        others = []
    if not others:
        return []
    return [f"Corpora: every call above rests on one corpus ({current}); {', '.join(others)} "
            f"{'is' if len(others) == 1 else 'are'} present too: --across-corpora marks whether each call holds on "
            "them."]


def corpus_advice(current: str = "") -> str:
    """Advice that works offline: the larger corpora present on this machine, and how to name one's own."""
    from ..corpora import offline_corpora

    try:
        present = [c["name"] for c in offline_corpora() if c["name"] != current]
    except Exception:  # noqa: BLE001 - advice never fails a table
        present = []
    have = f"present offline: {', '.join(present)} (--corpus NAME); or " if present else ""
    return f"use a larger corpus: {have}--corpus PATH, a text file or folder of your own"


def folder_fallback_lines(res: Any, label: str, *, words: bool = False) -> list[str]:
    """:func:`fallback_footer` for one model of an experiment folder (its raw WEAT records; a contextual
    family prints the count even when none fell back). ``words=False`` leaves out the list of words."""
    from types import SimpleNamespace

    model: dict[str, Any] = next((m for m in res.models if m["label"] == label), {})
    raws = [SimpleNamespace(**r) for r in getattr(res, "weat", ())
            if r["model"] == label and r["calibration"] == "none"]
    lines = fallback_footer(raws, contexts=model.get("family") not in (None, "static")) if raws else []
    return [f"! {label}: {line[2:]}" if line.startswith("! ") else f"{label}: {line}" for line in lines
            if words or not line.startswith("No corpus context")]


def weat_table(results: Iterable[Any], alpha: float = 0.05, *, contexts: bool = False, corpus: str = "") -> str:
    """One line per WEAT result; a footer line names the tests that cannot reach ``p < alpha``.

    ``contexts``: the model encodes words in corpus contexts, read from ``corpus`` (see :func:`fallback_footer`).
    """
    results = list(results)
    with_ci = any(r.effect_size_ci is not None for r in results)
    header = ["Test", "Bias", "Model", "Calibration", "d"] + (["CI on d"] if with_ci else []) + [
        "p", "p 95% CI", "p method", "N", "|X|", "|Y|", "|A|", "|B|"]
    rows = []
    for r in results:
        ci = [format_ci(r.effect_size_ci)] if with_ci else []
        p_ci = "exact" if r.p_method == "exact" else f"[{format_p(r.p_ci_low)}, {format_p(r.p_ci_high)}]"
        rows.append([r.test, r.bias_type, r.model, r.calibration, format_d(r.effect_size), *ci,
                     format_p(r.p_value), p_ci, r.p_method, format_count(r.n_permutations),
                     str(r.n_x), str(r.n_y), str(r.n_a), str(r.n_b)])
    table = _render(header, rows, align_left=4)
    if with_ci:
        table += "\n" + ci_footer([r.effect_size_ci for r in results], [r.test for r in results],
                                   results[0].alternative)
    if any(r.p_method == "certified" for r in results):
        table += "\ncertified: the p interval is a bracket that holds the exact p with certainty; p is its upper end."
    reach = reach_footer(results, [r.test for r in results], alpha)
    undefined = undefined_footer(results, [f"{r.test} ({r.calibration})" for r in results])
    one_space = [r for r in results if r.calibration == results[0].calibration] if results else []
    fallback = fallback_footer(one_space, contexts=contexts, corpus=corpus)
    fallback += [line for line in [embedded_footer(one_space, [r.test for r in one_space])] if line]
    return (table + ("\n" + reach if reach else "") + ("\n" + undefined if undefined else "")
            + "".join("\n" + line for line in fallback))


#: First characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection").
def metric_columns(calibration: str) -> list[str]:
    """Column names of :func:`metric_comparison_cells`, naming the calibrated space."""
    return ["Test", "Metric", "Raw", calibration, "Change", "p raw", f"p {calibration}", "Conclusion"]


def metric_comparison_cells(row: dict[str, Any]) -> list[str]:
    """One :func:`isoeat.experiments.compare.metric_comparison_rows` row as text cells (``-``: no p-value)."""
    def est(x: Any) -> str:
        return "nan" if finite_or_none(x) is None else f"{float(x):.3f}"

    def p(x: Any) -> str:
        value = finite_or_none(x)
        return "-" if not row.get("change") else format_p(float("nan") if value is None else value)

    delta = finite_or_none(row.get("delta"))
    why = f" ({row['reason']})" if row.get("reason") else ""
    return [str(row.get("test", "")), str(row.get("metric", "")), est(row.get("estimate_raw")),
            est(row.get("estimate_calibrated")), "nan" if delta is None else f"{delta:+.3f}",
            p(row.get("p_raw")), p(row.get("p_calibrated")), f"{row.get('conclusion', '')}{why}"]


def metric_comparison_table(rows: Sequence[dict[str, Any]], alpha: float) -> str:
    """Text tables of the metrics x tests summary, one per (model, calibrated space), with the rule under them."""
    from ..labels import METRIC_CHANGE_RULE

    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((str(r.get("model", "")), str(r.get("calibration", ""))), []).append(r)
    out = []
    for (model, cal), rs in groups.items():
        changed = sum(r.get("conclusion") == "changed" for r in rs)
        judged = sum(r.get("conclusion") != "no conclusion" for r in rs)
        header = metric_columns(cal)
        out.append(f"Calibration across metrics: {model}, raw vs {cal} ({changed} of {judged} conclusions changed)\n"
                   + _render(header, [metric_comparison_cells(r) for r in rs], last_left=True))
    if out:
        out.append(METRIC_CHANGE_RULE.format(alpha=alpha))
    return "\n\n".join(out[:-1]) + ("\n" + out[-1] if out else "")


def emit_records(records: Any, fmt: str) -> bool:
    """Write result records to standard output as ``json`` or ``csv``, stamped by :func:`versioned`.

    ``records`` is a list of records (or, for ``json``, one summary mapping). Returns False for any other
    format (the caller prints its table).
    """
    if fmt == "json":
        sys.stdout.write(to_json(versioned(records)))
    elif fmt == "csv":
        sys.stdout.write(records_to_csv(versioned(records)))
    else:
        return False
    return True
