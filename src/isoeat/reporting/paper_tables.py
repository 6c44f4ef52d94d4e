r"""The paper's tables from an experiment's tidy results, in CSV, Markdown and LaTeX (and HTML).

* **Table A1** (Appendix C): per model and test, :math:`d` and :math:`p` raw (R)
  and calibrated (W) with the change class (S/D/E); models side by side,
  grouped by family; bold :math:`d` where :math:`p < \alpha`.
* **Table 2** (§5.1): anisotropy — mean and SD of pairwise cosine (and
  IsoScore) before and after calibration.
* **Table 3** (§5.2): Spearman :math:`\rho` raw and calibrated, :math:`\Delta`,
  and significance stars from the paired bootstrap.
* **Summary** (§5.3–5.5): counts and shares of Stable / Disappearing /
  Emerging, substantial shifts among Stable cases, by bias category and by
  model family, and the counts under Holm- and BH-adjusted p.

This module reads results only (an :class:`~isoeat.experiments.runner.ExperimentResults`
or anything with the same attributes); it computes nothing but formatting.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._io import atomic_write_text
from .._names import file_name as safe_name  # noqa: F401 - the one file-name scheme
from .._names import unique_names
from ..labels import CORPORA_COLUMNS, FIRM_LEVELS, STABILITY_SHARE, is_significant
from .tables import (
    corpus_names,
    finite_or_none,
    folder_fallback_lines,
    format_d,
    format_p,
    records_to_csv,
    undefined_footer,
)

__all__ = [
    "Cell",
    "Table",
    "table_a1",
    "table2",
    "table3",
    "summary_table",
    "all_tables",
    "write_tables",
    "to_markdown",
    "to_latex",
    "to_html",
    "latex_p",
    "stars",
    "safe_name",
    "unique_names",
    "calibration_names",
]

FAMILY_TITLES = {
    "static": "Static embeddings",
    "contextualized": "Contextualized embeddings",
    "contrastive": "Unsupervised contrastive embeddings",
    "supervised-contrastive": "Supervised contrastive embeddings (not in the paper)",
}
_CHG = {"Stable": "S", "Disappearing": "D", "Emerging": "E"}


@dataclass(frozen=True)
class Cell:
    """One table cell: text, and whether it is bold (significant) or a label (left-aligned)."""

    text: str
    bold: bool = False
    left: bool = False
    latex: str | None = None  # LaTeX form when it differs from the text

    @staticmethod
    def of(x: Any) -> Cell:
        return x if isinstance(x, Cell) else Cell(str(x))


@dataclass
class Table:
    """A rendered-agnostic table: header (with optional spanning groups), sections of rows, notes.

    ``blocks`` holds (title, groups, header, rows) for tables made of several
    sub-tables (Table A1: one per model family). ``records`` is the tidy CSV content.
    """

    name: str
    caption: str
    blocks: list[tuple[str, list[tuple[str, int]], list[str], list[list[Cell]]]]
    notes: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)


# --------------------------------------------------------------------------- formatting
def calibration_names(res: Any) -> dict[str, str]:
    """File-name part of each calibration label of ``res`` (see :func:`unique_names`)."""
    labels = [c["label"] for c in res.calibrations]
    return dict(zip(labels, unique_names([(lab,) for lab in labels])))


def stars(p: Any) -> str:
    """``***`` p < 0.001, ``**`` < 0.01, ``*`` < 0.05, ``n.s.`` otherwise (Table 3)."""
    p = finite_or_none(p)
    if p is None:
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else "n.s."


def latex_p(p: Any) -> str:
    """``.0098`` for p >= 1e-4, ``$2.1{\\times}10^{-5}$`` below (the value, not a floor)."""
    p = finite_or_none(p)
    if p is None:
        return "--"
    if p >= 1e-4 or p == 0:
        return format_p(p)
    mant, exp = f"{p:.1e}".split("e")
    return f"${mant}{{\\times}}10^{{{int(exp)}}}$"


def _latex_num(text: str) -> str:
    if text == "-":  # no number (d undefined): a dash, not a minus sign
        return "--"
    return text.replace("-", "$-$", 1) if text.startswith("-") else text


def _signed(x: float, digits: int = 3) -> str:
    if x is None or not math.isfinite(x):
        return "nan"
    s = f"{x:+.{digits}f}"
    return s.replace("+0.", "+.").replace("-0.", "-.")


def _rho(x: float) -> str:
    if x is None or not math.isfinite(x):
        return "nan"
    s = f"{x:.3f}"
    return s.replace("0.", ".", 1) if s.startswith("0.") else s.replace("-0.", "-.", 1)


#: How a cell of a grid draws its sampled figures, and how to replay one cell.
SEED_NOTE = ("Each cell draws its {what} from its own named stream of the experiment's seed (the seed column "
             "of {file}.csv); `{cmd}` with that seed reproduces the cell.")


def _pct(k: int, n: int) -> str:
    return f"{k} ({100.0 * k / n:.1f}%)" if n else str(k)


def _escape_tex(s: str) -> str:
    rep = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
           "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
           "\u2020": r"\textdagger{}"}
    return "".join(rep.get(ch, ch) for ch in s)


def _cal_file(res: Any, label: str) -> str:
    return calibration_names(res).get(label) or safe_name(label)


def _cal_title(res: Any, label: str) -> str:
    name = next((c["name"] for c in res.calibrations if c["label"] == label), label)
    return "ZCA-whitened" if name == "zca" and label == "zca" else f"calibrated ({label})"


# --------------------------------------------------------------------------- Table A1
def _daggers(r: dict[str, Any]) -> int:
    """Table A1's stability mark of a comparison row: 0 (firm, or no redraws), 1 (borderline: the class does not
    hold), 2 (unstable: its ``firm`` level, :func:`isoeat.labels.firm_level`; a row without the level, from a
    folder written before the levels, gets 1 where its class does not hold)."""
    if r.get("class_holds") is not False and str(r.get("class_holds")) != "False":
        return 0
    return 2 if r.get("firm") == "unstable" else 1


def table_a1(res: Any, calibration: str) -> Table:
    """Table A1 layout for one calibrated space: models side by side by family, tests as rows."""
    alpha = res.alpha
    rows_by = {(r["model"], r["test"]): r for r in res.comparisons if r["calibration"] == calibration}
    tests = [t for t in res.tests if any(k[1] == t["id"] for k in rows_by)]
    families: dict[str, list[dict]] = {}
    for m in res.models:
        if any(k[0] == m["label"] for k in rows_by):
            families.setdefault(m["family"], []).append(m)
    order = [f for f in FAMILY_TITLES if f in families] + [f for f in families if f not in FAMILY_TITLES]
    blocks = []
    for fam in order:
        models = families[fam]
        groups = [("", 2)] + [(m["label"], 5) for m in models]
        header = ["ID", "Bias"] + ["d_R", "p_R", "d_W", "p_W", "Chg"] * len(models)
        body = []
        for t in tests:
            cells = [Cell(t["id"], left=True), Cell(t.get("bias_type") or "", left=True)]
            for m in models:
                r = rows_by.get((m["label"], t["id"]))
                if r is None:
                    cells += [Cell("--")] * 5
                    continue
                for d, p in ((r["d_raw"], r["p_raw"]), (r["d_calibrated"], r["p_calibrated"])):
                    sig = p is not None and is_significant(p, alpha)
                    cells.append(Cell(format_d(d), bold=sig, latex=_latex_num(format_d(d))))
                    cells.append(Cell(format_p(p), latex=latex_p(p)))
                # the stability mark: a class that does not hold within the reference sample's error gets a dagger
                # and a class that differs on another corpus the grid holds the model on gets a double dagger
                firm = "\u2020" * _daggers(r)  # one: borderline; two: unstable (labels.firm_level)
                across = "\u2021" if r.get("class_holds_corpora") is False else ""
                letter = _CHG.get(r["change"], r["change"])
                cells.append(Cell(letter + firm + across, latex=letter + r"\textdagger{}" * len(firm)
                                  + (r"\textdaggerdbl{}" if across else "")))
            body.append(cells)
        blocks.append((FAMILY_TITLES.get(fam, fam), groups, header, body))
    s = res.settings
    methods = sorted({r.get("p_method_raw") for r in rows_by.values()} | {r.get("p_method_calibrated")
                                                                          for r in rows_by.values()} - {None})
    notes = [
        f"WEAT effect sizes d and permutation p-values ({s.get('alternative', 'greater')}) before (R, raw) and after "
        f"(W, {_cal_title(res, calibration)}) calibration. Bold d: p < {alpha:g}.",
        "Chg: S = Stable, D = Disappearing (significant -> not), E = Emerging (not -> significant), at "
        f"p < {alpha:g} on unadjusted p.",
        f"p: {' / '.join(methods) or '-'}; exact where all partitions can be counted, else certified where a "
        "bracket of relative width 1e-3 fits in memory (p = its upper end), else Monte Carlo with "
        f"{int(s.get('permutations', 0)):,} permutations, p = (k+1)/(N+1). Values below 1e-4 are printed as they are, "
        "not as floors.",
    ]
    marked = [r for r in rows_by.values() if r.get("replicates")]
    if marked:
        notes.append(f"\u2020: the change class does not hold within the reference sample's own error (the same in "
                     f"fewer than {STABILITY_SHARE:.0%} of {marked[0]['replicates']} redraws of the reference sample; "
                     f"{sum(r.get('class_holds') is False for r in marked)} of {len(marked)} classes; \u2020\u2020: "
                     f"unstable, fewer than {1 - FIRM_LEVELS[1][1]:.0%}: {sum(_daggers(r) == 2 for r in marked)}); "
                     "unmarked classes hold (docs/reference-size.md).")
    voted = [r for r in rows_by.values() if r.get("corpora_share")]
    if voted:
        names = ", ".join(dict.fromkeys(c for r in voted for c in corpus_names(r.get("corpora"))))
        differ = sum(r.get("class_holds_corpora") is False for r in voted)
        notes.append((f"\u2021: the change class differs on another corpus the model was run on ({names}; each its own "
                      f"contexts and reference sample; {differ} of {len(voted)} classes)" if differ else
                      f"Every change class is the same on every corpus the model was run on ({names}; each its own "
                      "contexts and reference sample)") + "; a check over the corpora at hand, with no track record.")
    left = list(dict.fromkeys(c for r in rows_by.values() for c in corpus_names(r.get("corpora_left_out"))))
    if left:
        notes.append(f"Left out of the comparison across corpora: {'; '.join(left)}.")
    notes += [line for m in res.models if any(k[0] == m["label"] for k in rows_by)
              for line in folder_fallback_lines(res, m["label"])]
    spaces = {calibration} | {c["label"] for c in getattr(res, "calibrations", []) if c["name"] == "none"}  # R, W
    shown = [r for r in getattr(res, "weat", []) if r["calibration"] in spaces and (r["model"], r["test"]) in rows_by]
    notes += undefined_footer(shown, [f"{r['model']} {r['test']} ({r['calibration']})" for r in shown]).splitlines()
    records = []
    for t in tests:
        for m in res.models:
            r = rows_by.get((m["label"], t["id"]))
            if r is not None:
                records.append({k: r.get(k) for k in (
                    "model", "family", "test", "bias_type", "d_raw", "p_raw", "p_holm_raw", "p_bh_raw",
                    "d_calibrated", "p_calibrated", "p_holm_calibrated", "p_bh_calibrated", "change",
                    "change_holm", "change_bh", "delta_d", "large_shift", "sign_reversal", "p_method_raw",
                    "p_method_calibrated")} | {"calibration": calibration}
                               | {k: r[k] for k in ("call_holds", "class_holds", "replicate_share", "firm") if k in r}
                               | {k: r[k] for k in CORPORA_COLUMNS if k in r})
    return Table(name=f"table_a1-{_cal_file(res, calibration)}",
                 caption=f"Table A1: WEAT d and p, raw vs {_cal_title(res, calibration)}",
                 blocks=blocks, notes=notes, records=records)


# --------------------------------------------------------------------------- Table 2
def table2(res: Any) -> Table | None:
    """Anisotropy: mean and SD of pairwise cosine (and IsoScore) per model and space."""
    from ..diagnostics.isotropy_check import frame_words

    if not res.anisotropy:
        return None
    cals = [c for c in res.calibrations if any(a["calibration"] == c["label"] for a in res.anisotropy)]
    by = {(a["model"], a["calibration"]): a for a in res.anisotropy}
    groups = [("", 2)] + [("Raw" if c["name"] == "none" else "ZCA-whitened" if c["label"] == "zca" else c["label"], 3)
                          for c in cals]
    header = ["Model", "Family"] + ["Mean", "SD", "IsoScore"] * len(cals)
    body = []
    for m in res.models:
        if not any((m["label"], c["label"]) in by for c in cals):
            continue
        cells = [Cell(m["label"], left=True), Cell(m["family"], left=True)]
        for c in cals:
            a = by.get((m["label"], c["label"]))
            if a is None:
                cells += [Cell("--")] * 3
                continue
            cells += [Cell(f"{a['mean_cosine']:.3f}", latex=_latex_num(f"{a['mean_cosine']:.3f}")),
                      Cell(f"{a['sd_cosine']:.3f}"),
                      Cell(f"{a['isoscore']:.3f}" if a.get("isoscore") is not None else "--")]
        body.append(cells)
    a0 = res.anisotropy[0]
    how = ("over every pair of the frame's vectors (exact)" if a0.get("cosine_method") == "exact" else
           f"among {a0.get('n_samples', '?')} sampled vectors")
    notes = [f"Mean and SD (population) of the pairwise cosine similarities {how}, before (Raw) and after "
             f"calibration, on the same vectors; IsoScore (Rudman et al. 2022) of {a0.get('n_samples', '?')} sampled, "
             "in [0, 1], 1 = isotropic. Frame: " + frame_words(a0.get("frame") or "reference") + " (the sample of "
             "each model below)."]
    samples: dict[str, str] = {}
    for a in res.anisotropy:
        samples.setdefault(a["model"], a.get("sampling", "?"))
    notes += [f"Sample ({m}): {desc}." for m, desc in samples.items()]
    notes.append(SEED_NOTE.format(what="sample", cmd="isoeat anisotropy --seed SEED --samples N", file="anisotropy"))
    records = [{k: v for k, v in a.items() if k not in ("explained_variance_ratio",)} for a in res.anisotropy]
    return Table(name="table2",
                 caption="Table 2: anisotropy (mean pairwise cosine +/- SD) before and after calibration",
                 blocks=[("", groups, header, body)], notes=notes, records=records)


# --------------------------------------------------------------------------- Table 3
def table3(res: Any, calibration: str) -> Table | None:
    """Similarity: Spearman rho raw and calibrated, its change and significance (paired bootstrap)."""
    rows = [s for s in res.similarity if s["calibration"] == calibration]
    if not rows:
        return None
    header = ["Model", "Bench.", "n", "Raw", "White" if calibration == "zca" else calibration, "Δ", "95% CI", "p",
              "Sig."]
    body = []
    for m in res.models:
        first = True
        for s in rows:
            if s["model"] != m["label"]:
                continue
            ci = (f"[{_signed(s.get('ci_low'))}, {_signed(s.get('ci_high'))}]"
                  if s.get("ci_low") is not None else "")
            delta = s.get("delta")
            body.append([
                Cell(m["label"] if first else "", left=True),
                Cell(s.get("benchmark_title") or s["benchmark"], left=True),
                Cell(str(s.get("n_pairs", ""))),
                Cell(_rho(s.get("rho_raw")), latex=_latex_num(_rho(s.get("rho_raw")))),
                Cell(_rho(s.get("rho_calibrated")), latex=_latex_num(_rho(s.get("rho_calibrated")))),
                Cell(_signed(delta), bold=stars(s.get("p_value")) not in ("n.s.", ""),
                     latex=_signed(delta).replace("-", "$-$")),
                Cell(ci, latex=ci.replace("-", "$-$")),
                Cell(format_p(s.get("p_value")), latex=latex_p(s.get("p_value"))),
                Cell(stars(s.get("p_value")), latex={"***": "$^{***}$", "**": "$^{**}$", "*": "$^{*}$"}.get(
                    stars(s.get("p_value")), stars(s.get("p_value")))),
            ])
            first = False
    b = rows[0].get("n_resamples") or rows[0].get("bootstrap") or "?"
    notes = ["Spearman rho between cosine similarity and human scores, before (Raw) and after calibration; "
             f"Δ = calibrated − raw; 95% percentile interval and two-sided p from a paired bootstrap over pairs "
             f"({b} resamples). Sig.: *** p < 0.001, ** p < 0.01, * p < 0.05, n.s. not significant.",
             "n: pairs with both words (or sentences) available in the model.",
             SEED_NOTE.format(what="bootstrap", cmd="isoeat similarity --benchmark B --seed SEED --bootstrap N",
                              file="similarity")]
    return Table(name=f"table3-{_cal_file(res, calibration)}",
                 caption=f"Table 3: similarity benchmarks, raw vs {_cal_title(res, calibration)}",
                 blocks=[("", [], header, body)], notes=notes, records=rows)


# --------------------------------------------------------------------------- summary (§5.3–5.5)
def summary_table(res: Any, calibration: str) -> Table | None:
    """Counts and shares of change classes overall, by bias category, by family and by model."""
    summ = res.summary.get(calibration)
    if not summ or not summ["overall"]["n"]:
        return None
    header = ["Group", "n", "Stable", "Disappearing", "Emerging", "|Δd|>0.5 (Stable, sig. both)",
              "Changed or shifted", "Sign reversals"]

    def row(label: str, b: dict, *, share_of_class: bool = False) -> list[Cell]:
        n = b["n"]
        cls = []
        for c in ("Stable", "Disappearing", "Emerging"):
            text = _pct(b[c], n)
            if share_of_class and f"{c}_share_of_class" in b and c != "Stable" and b[c]:
                soc = b[f"{c}_share_of_class"]
                if soc == soc:  # not NaN
                    text += f", {100 * soc:.0f}% of all {c}"
            cls.append(Cell(text, latex=text.replace("%", r"\%")))
        shifted = _pct(b["changed_or_shifted"], n)
        return [Cell(label, left=True), Cell(str(n)), *cls, Cell(str(b["stable_large_shift"])),
                Cell(shifted, latex=shifted.replace("%", r"\%")), Cell(str(b["sign_reversal"]))]

    blocks: list[tuple[str, list[tuple[str, int]], list[str], list[list[Cell]]]] = [
        ("Overall", [], header, [row("All model-test combinations", summ["overall"])])]
    for title, key in (("By bias category", "by_bias"), ("By model family", "by_family"), ("By model", "by_model")):
        blocks.append((title, [], header, [row(g["group"], g, share_of_class=True) for g in summ[key]]))
    adj = summ.get("adjusted") or {}
    if adj:
        blocks.append(("With adjusted p (Holm / Benjamini-Hochberg across the tests of each model and space)", [],
                       header, [row({"holm": "Holm-adjusted p", "bh": "BH-adjusted p"}[k], v) for k, v in adj.items()]))
    notes = [f"Change classes at p < {summ['alpha']:g} (unadjusted p, as the paper): Stable, Disappearing "
             "(significant raw, not after calibration), Emerging (the reverse). Shares in parentheses are of the "
             "group's n; 'x% of all Disappearing' (or Emerging) is the group's part of all cases of that class "
             "(paper §5.5), given where the group has any.",
             "|Δd|>0.5: Stable cases significant in both spaces whose effect size moved by more than 0.5 (§5.3). "
             "Changed or shifted: D + E + those shifts (the paper's 29 of 70)."]
    records = []
    for _key in ("overall",):
        records.append({"section": "overall", "group": "all", **summ["overall"]})
    for key in ("by_bias", "by_bias_group", "by_family", "by_model"):
        for g in summ[key]:
            records.append({"section": key, **g})
    for k, v in adj.items():
        records.append({"section": f"adjusted_{k}", "group": "all", **v})
    return Table(name=f"summary-{_cal_file(res, calibration)}",
                 caption=f"Summary of changes (§5.3-5.5), raw vs {_cal_title(res, calibration)}",
                 blocks=blocks, notes=notes, records=[{"calibration": calibration, **r} for r in records])


def all_tables(res: Any) -> list[Table]:
    """Every table the results support, in the paper's order."""
    out: list[Table] = []
    cal_labels = [c["label"] for c in res.calibrations if c["name"] != "none"]
    for c in cal_labels:
        if any(r["calibration"] == c for r in res.comparisons):
            out.append(table_a1(res, c))
    t2 = table2(res)
    if t2:
        out.append(t2)
    for c in cal_labels:
        t3 = table3(res, c)
        if t3:
            out.append(t3)
    for c in cal_labels:
        st = summary_table(res, c)
        if st:
            out.append(st)
    return out


# --------------------------------------------------------------------------- renderers
def to_markdown(t: Table) -> str:
    """GitHub-flavoured Markdown; bold as ``**x**``; spanning groups folded into the header names."""
    lines = [f"**{t.caption}**", ""]
    for title, groups, header, rows in t.blocks:
        if title:
            lines += [f"*{title}*", ""]
        names = list(header)
        if groups:
            i = 0
            for g, span in groups:
                if g:
                    names[i] = f"{g} {names[i]}"
                i += span
        lines.append("| " + " | ".join(n.replace("|", "\\|") for n in names) + " |")
        lines.append("|" + "|".join(":---" if (rows and rows[0][j].left) or (not rows and j < 2) else "---:"
                                    for j in range(len(names))) + "|")
        for r in rows:
            cells = [(f"**{c.text}**" if c.bold and c.text else c.text).replace("|", "\\|") for c in r]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines += [n for note in t.notes for n in (note, "")]
    return "\n".join(lines).rstrip() + "\n"


def to_latex(t: Table) -> str:
    """A ``table`` environment with booktabs rules (``\\usepackage{booktabs}``); bold as ``\\textbf``."""
    out = ["% generated by isoeat; needs \\usepackage{booktabs}", "\\begin{table*}[t]", "\\centering", "\\small",
           f"\\caption{{{_escape_tex(t.caption)}}}"]
    for title, groups, header, rows in t.blocks:
        ncol = len(header)
        align = "".join("l" if (rows and rows[0][j].left) else "r" for j in range(ncol))
        if title:
            out.append(f"\\par\\smallskip\\textit{{{_escape_tex(title)}}}\\par\\smallskip")
        out.append(f"\\begin{{tabular}}{{{align}}}")
        out.append("\\toprule")
        if groups and any(g for g, _ in groups):
            parts, rules, col = [], [], 1
            for g, span in groups:
                parts.append(f"\\multicolumn{{{span}}}{{c}}{{{_escape_tex(g)}}}" if g else
                             " & ".join([""] * span) if span > 1 else "")
                if g:
                    rules.append(f"\\cmidrule(lr){{{col}-{col + span - 1}}}")
                col += span
            out.append(" & ".join(parts) + " \\\\")
            out.append(" ".join(rules))
        out.append(" & ".join(_tex_header(h) for h in header) + " \\\\")
        out.append("\\midrule")
        for r in rows:
            cells = []
            for c in r:
                text = c.latex if c.latex is not None else _escape_tex(c.text)
                cells.append(f"\\textbf{{{text}}}" if c.bold and c.text else text)
            out.append(" & ".join(cells) + " \\\\")
        out.append("\\bottomrule")
        out.append("\\end{tabular}")
    if t.notes:
        out.append("\\par\\smallskip\\footnotesize " + " ".join(_escape_tex(n) for n in t.notes))
    out.append("\\end{table*}")
    return "\n".join(out) + "\n"


def _tex_header(h: str) -> str:
    special = {"d_R": "$d_R$", "p_R": "$p_R$", "d_W": "$d_W$", "p_W": "$p_W$", "Δ": "$\\Delta$",
               "|Δd|>0.5 (Stable, sig. both)": "$|\\Delta d|>0.5$ (S, sig.)", "95% CI": "95\\% CI"}
    return special.get(h, _escape_tex(h))


def to_html(t: Table) -> str:
    """An HTML ``<table>`` (escaped), with spanning group headers; bold cells in ``<strong>``."""
    parts = [f'<figure class="table" id="{html.escape(t.name)}"><figcaption>{html.escape(t.caption)}</figcaption>']
    for title, groups, header, rows in t.blocks:
        if title:
            parts.append(f"<h4>{html.escape(title)}</h4>")
        parts.append('<div class="scroll"><table>')
        parts.append("<thead>")
        if groups and any(g for g, _ in groups):
            parts.append("<tr>" + "".join(f'<th colspan="{span}" class="group">{html.escape(g)}</th>'
                                          for g, span in groups) + "</tr>")
        left = [bool(rows) and rows[0][j].left for j in range(len(header))]
        parts.append("<tr>" + "".join(("<th class='l'>" if left[j] else "<th>") + html.escape(h) + "</th>"
                                      for j, h in enumerate(header)) + "</tr></thead><tbody>")
        for r in rows:
            tds = []
            for c in r:
                text = html.escape(c.text)
                if c.bold and c.text:
                    text = f"<strong>{text}</strong>"
                cls = ' class="l"' if c.left else ""
                tds.append(f"<td{cls}>{text}</td>")
            parts.append("<tr>" + "".join(tds) + "</tr>")
        parts.append("</tbody></table></div>")
    for n in t.notes:
        parts.append(f'<p class="note">{html.escape(n)}</p>')
    parts.append("</figure>")
    return "\n".join(parts)


def write_tables(res: Any, folder: str | Path) -> list[Path]:
    """Write every table as ``NAME.csv``, ``NAME.md`` and ``NAME.tex`` into ``folder`` (atomically)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for t in all_tables(res):
        for ext, text in (("csv", records_to_csv(t.records)), ("md", to_markdown(t)), ("tex", to_latex(t))):
            p = folder / f"{t.name}.{ext}"
            atomic_write_text(p, text)
            written.append(p)
    return written
