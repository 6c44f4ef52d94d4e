"""The paper's numbers (Tables A1, 2, 3 and the counts of §5.3–5.5) and consistency checks on them.

``paper_values`` reads ``experiments/data/paper_values.json`` (transcribed, with provenance), ``paper_rows``
gives Table A1 as tidy rows; ``isoeat reproduce`` compares a run with them. A reproduction tool should
also notice when the published tables disagree with themselves. Table A1 is checked against itself and
against the counts its text states (§5.3–5.5):

* **identical rows**: two tests of one model (or two models on one test) with the same printed d in both
  spaces although their inputs differ (the tests' word sets, or the models). At two printed decimals a chance
  match of both d's is about 1 in 10^4 per pair; the paper's W4 and W5 rows agree in both spaces for GloVe
  (1.32 → 0.81) and word2vec (1.31 → 0.78), though W4 and W5 use different attribute words;
* **labels**: each row's change class against its own p-values at α = 0.05 (strict: p < α);
* **counts**: the text's totals and breakdowns (Stable / Disappearing / Emerging, Stable with |Δd| > 0.5,
  changed or shifted, by bias type, by family, changes per model) recomputed from the table; a model with
  changes that the text's per-model list leaves out is a note, not a contradiction.

Each finding is a frozen :class:`Finding`; :func:`paper_consistency` returns them all.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from itertools import combinations
from typing import Any

from ..labels import classify_change, is_significant

_CHG = {"S": "Stable", "D": "Disappearing", "E": "Emerging"}


# --------------------------------------------------------------------------- the paper's numbers
@lru_cache(maxsize=1)
def paper_values() -> dict[str, Any]:
    """The paper's Table A1, 2, 3 and §5.3–5.5 counts (``experiments/data/paper_values.json``), with provenance."""
    text = resources.files("isoeat.experiments").joinpath("data/paper_values.json").read_text("utf-8")
    return json.loads(text)


def parse_paper_p(text: str) -> tuple[float, str]:
    """A p-value as printed in the paper: ``(value, relation)``.

    ``".0098"`` → ``(0.0098, "=")``; ``"10^-5"`` (order of magnitude, p < 1e-4) → ``(1e-4, "<")``;
    ``"10^-4"`` → ``(1e-4, "~")``.

    Examples
    --------
    >>> parse_paper_p(".1660")
    (0.166, '=')
    >>> parse_paper_p("10^-5")
    (0.0001, '<')
    """
    t = str(text).strip()
    if t.startswith("10^"):
        exp = int(t[3:])
        return (1e-4, "<") if exp <= -5 else (10.0 ** exp, "~")
    return float(t), "="


def format_paper_p(p: Any) -> str:
    """A p-value printed as the paper prints it: 4 decimals without the leading zero (``.0098``), or for
    p < 1e-4 its order of magnitude (``10^-5``; Table A1's caption).

    Examples
    --------
    >>> format_paper_p(0.0098), format_paper_p(9.9999e-06), format_paper_p(0.5)
    ('.0098', '10^-5', '.5000')
    """
    import math

    try:
        p = float(p)
    except (TypeError, ValueError):
        return "-"
    if not math.isfinite(p):
        return "nan"
    if p < 1e-4:
        return f"10^{round(math.log10(p))}" if p > 0 else "0"
    text = f"{p:.4f}"
    return text[1:] if text.startswith("0") else text


def same_printed_p(p: Any, printed: str) -> bool:
    """Whether ``p`` prints as the paper's ``printed`` p at the paper's precision.

    The paper's ``10^-5`` means p < 1e-4 (its Monte Carlo floor, :func:`parse_paper_p`): any p below 1e-4
    agrees with it; every other printed value must be matched digit for digit by :func:`format_paper_p`.

    >>> same_printed_p(3e-9, "10^-5"), same_printed_p(0.0098, ".0098"), same_printed_p(0.00986, ".0098")
    (True, True, False)
    """
    value, relation = parse_paper_p(printed)
    if relation == "<":
        try:
            return float(p) < value
        except (TypeError, ValueError):
            return False
    return format_paper_p(p) == str(printed).strip()


def format_paper_d(d: Any) -> str:
    """An effect size printed as the paper prints it: 2 decimals (``1.17``, ``-0.00``)."""
    import math

    try:
        d = float(d)
    except (TypeError, ValueError):
        return "-"
    return "nan" if not math.isfinite(d) else f"{d:.2f}"


def paper_rows(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Table A1 as tidy rows (model, family, test, bias_type, d_raw, p_raw, d_calibrated, p_calibrated, change).

    ``values``: the paper's values in the format of ``paper_values.json`` (default: the transcribed paper).
    """
    pv = paper_values() if values is None else values
    fam = {m["label"]: m["family"] for m in pv["models"]}
    rows = []
    for model, tests in pv["table_a1"].items():
        for tid, v in tests.items():
            pr, pw = parse_paper_p(v["p_R"])[0], parse_paper_p(v["p_W"])[0]
            rows.append({"model": model, "family": fam[model], "test": tid, "bias_type": v["bias_type"],
                         "d_raw": v["d_R"], "p_raw": pr if parse_paper_p(v["p_R"])[1] != "<" else 1e-5,
                         "p_raw_printed": v["p_R"], "d_calibrated": v["d_W"],
                         "p_calibrated": pw if parse_paper_p(v["p_W"])[1] != "<" else 1e-5,
                         "p_calibrated_printed": v["p_W"], "change": _CHG[v["chg"]], "delta_d": v["d_W"] - v["d_R"]})
    return rows


#: Significance level of the paper's change classes (strict: p < alpha).
ALPHA = 0.05

#: Bias types the text folds into "Other" in its breakdown of Emerging cases (§5.5).
_OTHER = ("Health", "Age")


@dataclass(frozen=True)
class Finding:
    """One result of checking the paper's tables: ``severity`` is "inconsistent" or "note"."""

    check: str
    severity: str
    where: str
    detail: str

    def line(self) -> str:
        return f"[{self.severity}] {self.check}: {self.where}: {self.detail}"

    def to_dict(self) -> dict[str, str]:
        return {"check": self.check, "severity": self.severity, "where": self.where, "detail": self.detail}


def _change(p_raw: float, p_cal: float, alpha: float = ALPHA) -> str:
    return classify_change(p_raw, p_cal, alpha)


def _word_sets(test_id: str) -> tuple | None:
    from ..wordsets import get_test

    try:
        t = get_test(test_id)
    except Exception:  # noqa: BLE001 - a test the package does not ship: inputs unknown, not compared
        return None
    return tuple(tuple(s.words) for s in (t.X, t.Y, t.A, t.B))


def identical_rows(rows: list[dict[str, Any]]) -> list[Finding]:
    """Pairs of rows with the same printed d raw and calibrated whose inputs differ."""
    out = []
    by_model: dict[str, list[dict]] = {}
    by_test: dict[str, list[dict]] = {}
    for r in rows:
        by_model.setdefault(r["model"], []).append(r)
        by_test.setdefault(r["test"], []).append(r)
    for model, rs in by_model.items():
        for a, b in combinations(rs, 2):
            if (a["d_raw"], a["d_calibrated"]) != (b["d_raw"], b["d_calibrated"]):
                continue
            sa, sb = _word_sets(a["test"]), _word_sets(b["test"])
            if sa is not None and sa == sb:
                continue
            differ = ("" if sa is None or sb is None else
                      " although their " + ", ".join(n for n, x, y in zip("XYAB", sa, sb) if x != y) + " words differ")
            out.append(Finding("identical rows", "inconsistent", f"Table A1, {model} {a['test']} and {b['test']}",
                               f"d = {a['d_raw']:.2f} -> {a['d_calibrated']:.2f} in both{differ} "
                               f"(p raw {a['p_raw_printed']} / {b['p_raw_printed']}, "
                               f"calibrated {a['p_calibrated_printed']} / {b['p_calibrated_printed']})"))
    for test, rs in by_test.items():
        for a, b in combinations(rs, 2):
            keys = ("d_raw", "d_calibrated", "p_raw_printed", "p_calibrated_printed")
            if all(a[k] == b[k] for k in keys):
                out.append(Finding("identical rows", "inconsistent",
                                   f"Table A1, {test} on {a['model']} and {b['model']}",
                                   "the same d and p in both spaces for two different models"))
    return out


def change_labels(rows: list[dict[str, Any]], alpha: float = ALPHA) -> list[Finding]:
    """Rows whose printed change class disagrees with their own p-values at ``alpha``."""
    out = []
    for r in rows:
        want = _change(r["p_raw"], r["p_calibrated"], alpha)
        if want != r["change"]:
            out.append(Finding("change class", "inconsistent", f"Table A1, {r['model']} {r['test']}",
                               f"labelled {r['change']}, but p raw {r['p_raw_printed']} and calibrated "
                               f"{r['p_calibrated_printed']} at alpha {alpha:g} give {want}"))
    return out


def recount(rows: list[dict[str, Any]], stated: dict[str, Any], alpha: float = ALPHA) -> list[Finding]:
    """The text's counts (``paper_values()["summary"]``) against the same counts from Table A1."""
    changed = [r for r in rows if r["change"] != "Stable"]
    sig_both = [r for r in rows if r["change"] == "Stable" and is_significant(r["p_raw"], alpha)
                and is_significant(r["p_calibrated"], alpha)]
    shift = sum(abs(r["delta_d"]) > 0.5 for r in sig_both)
    classes = Counter(r["change"] for r in rows)
    table: dict[str, Any] = {
        "n": len(rows), "Stable": classes["Stable"], "Disappearing": classes["Disappearing"],
        "Emerging": classes["Emerging"], "stable_large_shift": shift, "changed_or_shifted": len(changed) + shift,
        "disappearing_by_bias": Counter(r["bias_type"] for r in rows if r["change"] == "Disappearing"),
        "emerging_by_bias_group": Counter("Other" if r["bias_type"] in _OTHER else r["bias_type"]
                                          for r in rows if r["change"] == "Emerging"),
        "emerging_by_family": Counter(r["family"] for r in rows if r["change"] == "Emerging"),
        "disappearing_by_family": Counter(r["family"] for r in rows if r["change"] == "Disappearing"),
        "changes_by_model": Counter(r["model"] for r in changed),
    }
    out = []
    where = stated.get("where", "the text")
    for key, value in stated.items():
        if key not in table:
            continue
        got = table[key]
        if isinstance(value, dict):
            for group, n in value.items():
                if got.get(group, 0) != n:
                    out.append(Finding("counts", "inconsistent", f"{where}: {key}[{group}]",
                                       f"the text says {n}, Table A1 gives {got.get(group, 0)}"))
            if key == "changes_by_model":
                for group in sorted(set(got) - set(value)):
                    out.append(Finding("counts", "note", f"{where}: {key}",
                                       f"{group} has {got[group]} change(s) in Table A1 but is not in the text's list "
                                       f"({sum(value.values())} of {len(changed)} changes accounted for)"))
        elif got != value:
            out.append(Finding("counts", "inconsistent", f"{where}: {key}",
                               f"the text says {value}, Table A1 gives {got}"))
    return out


def paper_consistency(values: dict[str, Any] | None = None) -> list[Finding]:
    """Every finding of the checks above on the paper's transcribed tables (or on ``values`` of that format)."""
    if values is None:
        values = paper_values()
        rows = paper_rows()
    else:
        rows = paper_rows(values)
    alpha = float(values.get("protocol", {}).get("alpha", ALPHA))
    return [*identical_rows(rows), *change_labels(rows, alpha), *recount(rows, values.get("summary", {}), alpha)]
