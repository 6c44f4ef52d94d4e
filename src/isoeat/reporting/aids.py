"""The report's "Decision aids" section: isotropy check, sanity tests, Cohen magnitudes, why d moved, how to read.

Everything here is read from the experiment folder (anisotropy records,
comparison rows, the mechanism records of the calibrated WEAT cells); the
labels and thresholds come from their one home
(:mod:`isoeat.experiments.compare`, :mod:`isoeat.diagnostics.isotropy_check`).
All text is HTML-escaped.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from .._names import printable

__all__ = ["INTERPRETATION", "AID_PARTS", "aid_parts", "aids_section"]

#: The interpretation note of the report (heading, paragraph), in the order shown.
INTERPRETATION = (
    ("Association is not harm", "A WEAT effect size measures how differently two sets of target words relate to two "
     "sets of attribute words by cosine in one embedding space. It is a property of the geometry, not evidence that "
     "a system using the embedding treats anyone differently; nor does a small d show a system is fair."),
    ("Representational and allocational harms", "An association can be a representational harm by itself (a group "
     "depicted through stereotypes). Allocational harms (who gets a loan, a job ad, a diagnosis) arise in "
     "downstream decisions and must be measured there; intrinsic and downstream bias measures often disagree "
     "(Goldfarb-Tarrant et al. 2021)."),
    ("What a change class means", "Stable: the same significance verdict raw and calibrated. Disappearing: "
     "significant only in the raw space, so the raw result may owe its significance to anisotropy "
     "(overestimation). Emerging: significant only after calibration, so anisotropy may have masked it "
     "(underestimation). Neither space is ground truth: report both (paper §6.1, ethics statement)."),
    ("Magnitudes", "Cohen's small / medium / large are conventions for standardised mean differences in "
     "behavioural data; they rank effect sizes, they do not say how much an association matters."),
)


def _e(x: Any) -> str:
    return html.escape(printable(str(x)))  # control characters and bidi overrides shown as escapes


def _f(x: Any, fmt: str = ".3f") -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return "-"
    return format(x, fmt) if math.isfinite(x) else "-"


def _pct(x: Any) -> str:
    """A share as a whole percent ('-' when unknown; never '-0%')."""
    s = _f(None if x is None else 100.0 * float(x), ".0f")
    return "-" if s == "-" else ("0" if s == "-0" else s) + "%"


def _raw_label(res: Any) -> str:
    return next((c["label"] for c in res.calibrations if c["name"] == "none"), "none")


def _calibrated(res: Any) -> list[str]:
    return [c["label"] for c in res.calibrations if c["name"] != "none"]


def _isotropy(res: Any) -> str:
    """The isotropy check of every model (a layer of a ``--layers`` run is one): one table, a row per model."""
    from ..diagnostics.isotropy_check import (
        ISOSCORE_MIN,
        MEAN_COSINE_MAX,
        TOP_PC_FACTOR,
        check_from_record,
        frame_words,
        space_records,
    )

    parts = ["<p class='note'>Paper §6.1: check isotropy first and calibrate when it is needed. Thresholds "
             f"(<code>isoeat.diagnostics.isotropy_check</code>): mean pairwise cosine &ge; {MEAN_COSINE_MAX:g}, "
             f"IsoScore &lt; {ISOSCORE_MIN:g}, top principal component's share of variance &ge; "
             f"{TOP_PC_FACTOR:g}/d; any one flags the space as anisotropic.</p>"]
    cals = _calibrated(res)
    after = _e(cals[0]) if cals else "calibrated"
    rows: list = []
    advice: dict = {}
    frames: dict = {}
    for m in res.models:
        raw, cal = space_records(res.anisotropy, m["label"], _raw_label(res), cals[0] if cals else "")
        c, a = check_from_record(raw), check_from_record(cal if cals else None)
        if raw:
            frames.setdefault(frame_words(raw.get("frame") or "reference"), []).append(m["label"])

        def value(name: str, v: Any, fmt: str, c=c) -> str:
            if name in c.undetermined:
                return "<td class='l'>undetermined (N &le; d)</td>"
            if name in c.unknown:
                return "<td class='l'>not measured</td>"
            return f"<td class='bad'>{_f(v, fmt)}</td>" if name in c.flagged else f"<td>{_f(v, fmt)}</td>"

        thr = "-" if c.top_pc_threshold is None else f"{c.top_pc_threshold:.3g}"
        verdict_cls = " bad" if c.verdict == "anisotropic" else " ok" if c.verdict == "near-isotropic" else ""
        rows.append(f"<tr><td class='l'>{_e(m['label'])}</td>{value('mean cosine', c.mean_cosine, '.3f')}"
                    f"{value('IsoScore', c.isoscore, '.3f')}{value('top-PC share', c.top_pc_share, '.4f')}"
                    f"<td>{thr}</td><td class='l{verdict_cls}'>{_e(c.verdict)}</td><td>{_f(a.mean_cosine, '.3f')}"
                    f"</td><td>{_f(a.isoscore, '.3f')}</td><td>{_f(a.top_pc_share, '.4f')}</td></tr>")
        advice.setdefault(f"{c.note}; {c.recommendation}" if c.note else c.recommendation, []).append(m["label"])
    parts.append("<div class='scroll'><table class='isotropy'><thead><tr><th rowspan='2' class='l'>model</th>"
                 "<th colspan='5' class='group'>raw space</th>"
                 f"<th colspan='3' class='group'>after {after}</th></tr><tr><th>mean cosine<br>(&ge; "
                 f"{MEAN_COSINE_MAX:g}: anisotropic)</th><th>IsoScore<br>(&lt; {ISOSCORE_MIN:g})</th><th>top-PC share"
                 f"<br>(&ge; {TOP_PC_FACTOR:g}/d)</th><th>{TOP_PC_FACTOR:g}/d</th><th class='l'>verdict</th>"
                 "<th>mean cosine</th><th>IsoScore</th><th>top-PC share</th></tr></thead>"
                 f"<tbody>{''.join(rows)}</tbody></table></div>")
    for text, labels in frames.items():  # the vectors measured, named beside the verdicts (issue 32)
        who = "" if len(frames) == 1 else f" ({_e(', '.join(labels))})"
        parts.append(f"<p class='note'>Measured on{who}: {_e(text)}.</p>")
    for text, labels in advice.items():
        who = "" if len(advice) == 1 else f" ({_e(', '.join(labels))})"
        parts.append(f"<p class='note'>Recommendation{who}: {_e(text)}.</p>")
    return "\n".join(parts)


def _sanity(res: Any) -> str:
    from ..labels import SANITY_TESTS
    from .tables import sanity_footer

    alt = (res.settings or {}).get("alternative", "greater")
    out = []
    for m in res.models:
        for cal in _calibrated(res):
            rows = [SimpleNamespace(test=r["test"],
                                    raw=SimpleNamespace(effect_size=r["d_raw"], p_value=r["p_raw"], alternative=alt),
                                    calibrated=SimpleNamespace(effect_size=r["d_calibrated"], p_value=r["p_calibrated"],
                                                               alternative=alt))
                    for r in res.comparisons if r["model"] == m["label"] and r["calibration"] == cal]
            if not rows:
                continue
            line = sanity_footer(rows, res.alpha)
            present = [t for t in SANITY_TESTS if any(r.test == t for r in rows)]
            if line:
                out.append(f"<p class='bad sanity'>{_e(m['label'])}, raw vs {_e(cal)}: {_e(line.lstrip('! '))}</p>")
            elif present:
                absent = [t for t in SANITY_TESTS if t not in present]
                out.append(f"<p class='ok sanity'>{_e(m['label'])}, raw vs {_e(cal)}: "
                           f"sanity tests {_e(', '.join(present))} "
                           "significant in both spaces" + (f" ({_e(', '.join(absent))} not in this experiment)"
                                                           if absent else "") + ".</p>")
            else:
                out.append(f"<p class='note sanity'>{_e(m['label'])}, raw vs {_e(cal)}: sanity tests "
                           f"{_e(', '.join(SANITY_TESTS))} not in this experiment.</p>")
    return "\n".join(out)


def _mechanism_table(res: Any, model: str, cal: str) -> str:
    from ..labels import cohen_magnitude
    from .mechanism_data import mechanism_records

    mech = {t: rec for t, _, rec in mechanism_records(res, model, cal)}
    head = ("<tr><th class='l'>test</th><th class='l'>bias</th><th>d_R</th><th class='l'>magnitude</th><th>d_W</th>"
            "<th class='l'>magnitude</th><th class='l'>change</th><th>top-1</th><th>top-3</th><th>top-10</th>"
            "<th>f_1</th><th>top-3 after</th></tr>")
    body = []
    for r in res.comparisons:
        if r["model"] != model or r["calibration"] != cal:
            continue
        m = mech.get(r["test"]) or {}
        sr, sc = m.get("share_raw") or {}, m.get("share_calibrated") or {}
        f1 = (m.get("shrink") or [None])[0]
        body.append(f"<tr><td class='l'>{_e(r['test'])}</td><td class='l'>{_e(r.get('bias_type') or '')}</td>"
                    f"<td>{_f(r['d_raw'], '.2f')}</td><td class='l'>{_e(cohen_magnitude(r['d_raw']))}</td>"
                    f"<td>{_f(r['d_calibrated'], '.2f')}</td>"
                    f"<td class='l'>{_e(cohen_magnitude(r['d_calibrated']))}</td>"
                    f"<td class='l'>{_e(r['change'])}</td><td>{_pct(sr.get('1'))}</td><td>{_pct(sr.get('3'))}</td>"
                    f"<td>{_pct(sr.get('10'))}</td><td>{_f(f1, '.2f')}</td><td>{_pct(sc.get('3'))}</td></tr>")
    note = ("" if mech else "<p class='note'>No mechanism recorded for this space (a calibrator without principal "
            "directions, or cells written before isoeat recorded it: rerun with <code>--overwrite all</code>).</p>")
    return (f"<div class='scroll'><table class='mechanism'><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"
            f"</div>{note}")


_MECH_NOTE = (
    "top-k: the share of the raw contrast C = mean_X s - mean_Y s (d's numerator) that lies along the top k principal "
    "directions u_k of the reference covariance that ZCA uses: sum_{j<=k} c_j / C, with c_k = (u_k . D_T)(u_k . D_AB), "
    "D_T the difference of the mean unit target vectors and D_AB that of the mean unit attribute vectors; "
    "sum_k c_k = C exactly. Shares can exceed 100% or be negative when directions cancel. f_1 = sqrt((median "
    "eigenvalue + eps) / (lambda_1 + eps)): the factor by which ZCA scales direction 1 relative to a direction of "
    "median variance. A contrast carried by the top directions that whitening shrinks is why a d falls; one hidden "
    "under them is why it rises. 'top-3 after': the same share of the calibrated contrast (docs/diagnostics.md).")


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure class="aid"><img alt="{_e(alt)}" src="data:image/png;base64,{data}"><figcaption>{_e(alt)}'
            "</figcaption></figure>")


#: The parts of the decision aids, in the order the report shows them: (anchor, plain heading, link text).
AID_PARTS = (
    ("aids", "Is the space anisotropic? The isotropy check", "Isotropy check"),
    ("sanity", "Do the sanity tests hold?", "Sanity tests"),
    ("mechanism", "Why d moved", "Why d moved"),
    ("severity", "Anisotropy severity and changed results (paper §5.4)", "Severity"),
    ("reading", "How to read these numbers", "How to read"),
)


def aid_parts(res: Any, figures: Sequence[Path] = ()) -> list[tuple[str, str, str]]:
    """``(anchor, heading, HTML)`` of each part of :data:`AID_PARTS` (headings left to the page);
    ``figures``: the PNGs of :func:`~.mechanism_figure.write_aid_figures`.

    The mechanism part opens with its table; the formula of its columns follows the table.
    """
    from .mechanism_figure import aid_figure_names, severity_points

    by_stem = {Path(p).stem: Path(p) for p in figures}
    figs = {key: by_stem[stem] for key, stem in aid_figure_names(res).items() if stem in by_stem}
    mech = ["<p class='note'>How much of each raw contrast lies along the few directions that dominate the raw "
            "space (the top principal directions of the reference covariance), and how far ZCA shrinks them: "
            "what whitening took away, or uncovered. The columns are defined below the tables.</p>"]
    for m in res.models:
        for cal in _calibrated(res):
            mech.append(f"<h3>{_e(m['label'])}: raw vs {_e(cal)}</h3>")
            mech.append(_mechanism_table(res, m["label"], cal))
            fig = figs.get(("mechanism", m["label"], cal))
            if fig is not None:
                mech.append(_img(fig, f"Why d moved: {m['label']}, raw vs {cal}: each top direction's contribution "
                                      "to d (d * c_k / C), raw and calibrated"))
    mech.append("<p class='note formula'>" + _e(_cohen_rule()) + " " + _e(_MECH_NOTE) + "</p>")
    severity = []
    for cal in _calibrated(res):
        points, note = severity_points(res, cal)
        fig = figs.get(("severity", None, cal))
        if note or fig is None:
            why = note or "figure not drawn (no matplotlib)"
            severity.append(f"<p class='note severity'>raw vs {_e(cal)}: {_e(why)}</p>")
        else:
            severity.append(_img(fig, f"Anisotropy severity (raw mean cosine) vs significance changes, raw vs {cal}, "
                                      f"{len(points)} models, Spearman's rho on the figure"))
    reading = "<dl class='conv interpretation'>" + "".join(
        f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in INTERPRETATION) + "</dl>"
    html_of = {"aids": _isotropy(res), "sanity": _sanity(res), "mechanism": "\n".join(mech),
               "severity": "\n".join(severity), "reading": reading}
    return [(key, heading, html_of[key]) for key, heading, _ in AID_PARTS]


def aids_section(res: Any, figures: Sequence[Path] = ()) -> str:
    """Every part of :func:`aid_parts`, each under an ``<h3>`` of its heading (one block of HTML)."""
    return "\n".join(f"<h3 id='{key}'>{_e(heading)}</h3>\n{body}" for key, heading, body in aid_parts(res, figures))


def _cohen_rule() -> str:
    from ..labels import MAGNITUDE_RULE

    return MAGNITUDE_RULE
