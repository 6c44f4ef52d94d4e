"""A self-contained HTML report of an experiment: one file, figures embedded, no network.

The page holds the summary of changes, every table (Table A1, 2, 3, the
§5.3–5.5 summary), the figures as embedded PNG (``data:`` URIs), the failed
cells, the manifest summary (versions, fingerprints, seeds, runs, durations),
the conventions of the measurement and the config as given. It uses no
external stylesheet, font, script or image, so it opens offline in any
browser and can be mailed as it is.
"""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._errors import UnsafePathError
from .._io import atomic_write_text
from .._names import printable
from .aids import AID_PARTS, aid_parts
from .paper_tables import all_tables, to_html
from .tables import finite_or_none, metric_columns, metric_comparison_cells

__all__ = ["render_report", "write_report", "report_title", "CONVENTIONS", "UNNAMED"]

#: The names isoeat gives a run nobody named (``isoeat run`` without a config; a config without ``name`` read
#: from no file): the report is titled with the run folder's name instead.
UNNAMED = ("isoeat-run", "experiment")

#: The conventions of the measurement, as printed in the report (README "Conventions").
CONVENTIONS = (
    ("Cosine", "on the vectors as given, after calibration when one is applied."),
    ("s, S, d", "Caliskan et al. (2017), paper eq. 1-3: s(w,A,B) = mean_a cos(w,a) - mean_b cos(w,b); "
                "S = sum_X s - sum_Y s; d = (mean_X s - mean_Y s) / SD_{{X u Y}}(s), SD with ddof = {ddof}."),
    ("p-values", "permutation p over all partitions of X u Y into sets of sizes |X| and |Y|; alternative "
                 "'{alternative}' (greater: p = P[S_i >= S]); ties within 1e-12 * sum|s| count as reaching. Exact "
                 "(k / C(|X|+|Y|, |X|)) when feasible, else Monte Carlo with {permutations:,} permutations, "
                 "p = (k+1)/(N+1), with a Clopper-Pearson interval."),
    ("Adjusted p", "Holm and Benjamini-Hochberg across the tests of each (model, space); reported next to p, "
                   "never instead; change classes use unadjusted p, as the paper."),
    ("Calibration", "ZCA: mu and Sigma (n - 1) of the reference sample ({ref_size}), Sigma = U Lambda U^T, "
                    "W = U (Lambda + eps I)^(-1/2) U^T, z = W (x - mu), eps = {eps} (unless a calibration sets "
                    "its own). Reference: {reference}."),
    ("Change classes", "at alpha = {alpha:g}: Stable (significance unchanged), Disappearing (significant raw, not "
                       "after calibration), Emerging (the reverse); |Delta d| > 0.5 among Stable cases significant "
                       "in both spaces is a substantial shift (paper section 5.3)."),
    ("Out-of-vocabulary words", "dropped and reported per cell; a set keeping less than {min_coverage:.0%} of its "
                                "words (or fewer than 2) fails that cell."),
    ("Seeds", "root seed {seed}; every cell draws from its own named stream of it (a WEAT: weat/TEST, "
              "raw and calibrated alike), the same in every command, recorded in each cell."),
)

_CSS = """
:root { --fg:#1d232b; --muted:#5b6673; --line:#d9dee5; --bg:#ffffff; --accent:#2156a5; --bad:#b42318; }
* { box-sizing: border-box; }
body { font: 15px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--fg);
       background: var(--bg); margin: 0; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 60px; }
h1 { font-size: 26px; margin: 0 0 4px; } h2 { font-size: 20px; margin: 34px 0 10px; \
border-bottom: 2px solid var(--line);
padding-bottom: 4px; } h3 { font-size: 16px; margin: 22px 0 8px; } \
h4 { font-size: 14px; margin: 14px 0 6px; color: var(--muted); }
.sub { color: var(--muted); margin: 0 0 16px; }
nav { background: #f4f6f9; border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px; margin: 12px 0 20px; }
nav a { margin-right: 14px; color: var(--accent); text-decoration: none; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 12px 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 16px; min-width: 150px; background: #fafbfc; }
.card .n { font-size: 24px; font-weight: 650; } .card .l { color: var(--muted); font-size: 13px; }
.card.S .n { color: #9c4668; } .card.D .n { color: #c62828; } .card.E .n { color: #1f5fbf; } \
.card.F .n { color: var(--bad); }
figure { margin: 16px 0 26px; } figcaption { font-weight: 600; margin-bottom: 6px; }
.scroll { overflow-x: auto; max-width: 100%; }
table.kv { table-layout: fixed; width: 100%; max-width: 100%; }
table.kv th { width: 11em; vertical-align: top; }
table.kv td { white-space: normal; overflow-wrap: anywhere; word-break: break-word; }
code { overflow-wrap: anywhere; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; margin: 4px 0 8px; }
th, td { padding: 3px 8px; text-align: right; border-bottom: 1px solid #edf0f3; white-space: nowrap; }
th { background: #f4f6f9; border-bottom: 1px solid var(--line); }
th.group { text-align: center; border-bottom: 1px solid #bfc7d1; }
td.l, th.l { text-align: left; }
tbody tr:hover { background: #f8fafc; }
p.note { color: var(--muted); font-size: 13px; margin: 4px 0; max-width: 980px; }
img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; background: white; }
.figs figure { display: block; max-width: 100%; }
.bad { color: var(--bad); } .ok { color: #1a7f37; }
pre { background: #f6f8fa; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; overflow-x: auto;
      font-size: 12.5px; }
dl.conv dt { font-weight: 600; margin-top: 8px; } dl.conv dd { margin: 2px 0 0 18px; }
details { margin: 8px 0; } summary { cursor: pointer; color: var(--accent); }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
@media print { nav { display: none; } details { display: block; } }
"""

# Marks the page once every image has decoded (the headless-browser test reads it); nothing else.
_SCRIPT = """
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute("data-images", imgs.length);
  document.body.setAttribute("data-images-loaded", ok);
  document.body.setAttribute("data-tables", document.querySelectorAll("table").length);
});
"""


def _e(x: Any) -> str:
    return html.escape(printable(str(x)))  # control characters and bidi overrides shown as escapes


def _inside(path: Path, root: Path) -> Path:
    """``path``, refused when it lies in the run folder ``root`` but a symlink takes it outside.

    The report embeds what it reads: a ``config.yaml`` or figure that links to
    ``~/.ssh/id_rsa`` would end up in ``report.html``. Files given from outside
    the run folder are the caller's choice and are left alone.
    """
    lexical = Path(os.path.abspath(path))
    if not lexical.is_relative_to(Path(os.path.abspath(root))):
        return path
    real, real_root = Path(os.path.realpath(path)), Path(os.path.realpath(root))
    if real != real_root and not real.is_relative_to(real_root):
        raise UnsafePathError(f"{path}: a symlink to {real}, outside the run folder {root}; the report does not "
                              "read files outside it (replace the link by the file itself)")
    return path


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{data}">'


def _figure_block(path: Path, caption: str) -> str:
    return f"<figure>{_img(path, caption)}<figcaption>{_e(caption)}</figcaption></figure>"


def _fmt_s(x: Any) -> str:
    x = finite_or_none(x)
    if x is None:
        return "-"
    return f"{x:.3f} s" if x < 10 else f"{x:.1f} s" if x < 600 else f"{x / 60:.1f} min"


def reference_sizes(res: Any) -> str:
    """The reference each calibrator of a folder was really fitted on (:func:`isoeat.labels.reference_used`: a
    contextual model counts sentences, and a short corpus caps them below the size asked), per model where they
    differ: ``"100,000 vectors"``, ``"glove-6b-50d: 100,000 vectors; minilm: 17,162 sentences (asked 100,000)"``."""
    from ..labels import reference_used

    asked = ((res.settings or {}).get("reference") or {}).get("size")
    said: dict[str, str] = {}
    for key, meta in sorted(((res.manifest or {}).get("calibrators") or {}).items()):
        if not isinstance(meta, dict):
            continue
        used = reference_used(meta, asked)
        if used is None:
            continue
        unit = "sentences" if meta.get("reference_units") is not None else "vectors"
        want = meta.get("reference_asked") or asked
        more = f" (asked {want:,})" if isinstance(want, int) and want > used else ""
        said.setdefault(str(key).split("/")[0], f"{used:,} {unit}{more}")
    if not said:
        return f"{asked:,} asked" if isinstance(asked, int) else "size not recorded"
    if len(set(said.values())) == 1:
        return next(iter(said.values()))
    return "; ".join(f"{m}: {v}" for m, v in said.items())


def _conventions(res: Any) -> str:
    s = res.settings
    ref = s.get("reference") or {}
    corpus = ref.get("corpus") or "the model's default sample (static vectors: the top-N vocabulary rows by frequency)"
    fields = dict(ddof=s.get("ddof", 1), alternative=s.get("alternative", "greater"),
                  permutations=int(s.get("permutations", 0)), ref_size=reference_sizes(res),
                  eps=(f"{float(s['eps_relative']):g} x the mean eigenvalue of the reference covariance"
                       if s.get("eps_relative") is not None else f"{float(s.get('eps', 0)):g}"),
                  reference=corpus, alpha=float(s.get("alpha", 0.05)), min_coverage=float(s.get("min_coverage", 0.8)),
                  seed=s.get("seed", 0))
    items = []
    for k, v in CONVENTIONS:
        try:
            text = v.format(**fields)
        except (KeyError, ValueError, IndexError):
            text = v
        items.append(f"<dt>{_e(k)}</dt><dd>{_e(text)}</dd>")
    return '<dl class="conv">' + "".join(items) + "</dl>"


def _cards(res: Any) -> str:
    out = []
    for label, summ in res.summary.items():
        o = summ["overall"]
        if not o["n"]:
            continue
        title = "raw vs " + ("ZCA-whitened" if label == "zca" else label)
        out.append(f"<h3>{_e(title)}: {_e(o['n'])} model-test combinations</h3><div class='cards'>")
        for cls, key in (("S", "Stable"), ("D", "Disappearing"), ("E", "Emerging")):
            share = 100.0 * o[key] / o["n"]
            out.append(f"<div class='card {cls}'><div class='n'>{_e(o[key])}</div><div class='l'>{key} "
                       f"({share:.1f}%)</div></div>")
        out.append(f"<div class='card'><div class='n'>{_e(o['stable_large_shift'])}</div><div class='l'>Stable "
                   "with |&Delta;d| &gt; 0.5</div></div>")
        out.append(f"<div class='card'><div class='n'>{_e(o['changed_or_shifted'])}</div><div class='l'>changed "
                   f"or shifted ({100.0 * o['changed_or_shifted_share']:.1f}%)</div></div>")
        out.append("</div>")
    n_fail = len(res.failures)
    cells = (res.manifest.get("cells") or {})
    out.append("<div class='cards'>")
    out.append(f"<div class='card'><div class='n'>{_e(cells.get('ok', len(res.weat)))}</div><div class='l'>cells "
               f"finished</div></div>")
    out.append(f"<div class='card F'><div class='n'>{n_fail}</div><div class='l'>cells failed</div></div>")
    out.append(f"<div class='card'><div class='n'>{_fmt_s(cells.get('compute_seconds'))}</div><div class='l'>compute "
               f"time (all cells)</div></div>")
    out.append("</div>")
    return "\n".join(out)


def _failures(res: Any) -> str:
    if not res.failures:
        return "<p class='ok'>No cell failed.</p>"
    rows = "".join(
        f"<tr><td class='l'>{_e(f.get('kind'))}</td><td class='l'>{_e(f.get('model'))}</td>"
        f"<td class='l'>{_e(f.get('calibration'))}</td><td class='l'>{_e(f.get('item'))}</td>"
        f"<td class='l'>{_e(f.get('stage', ''))}</td>"
        f"<td class='l bad'>{_e(f.get('type'))}: {_e(f.get('message'))}</td></tr>"
        for f in res.failures)
    from .tables import retry_advice

    return ("<p class='bad'>These cells raised; the rest of the grid went on: "
            f"{_e(retry_advice(res.failures))} (<code>isoeat run CONFIG --out DIR</code>).</p>"
            "<div class='scroll'><table><thead><tr><th class='l'>kind</th><th class='l'>model</th>"
            "<th class='l'>calibration</th><th class='l'>item</th><th class='l'>stage</th><th class='l'>error</th>"
            f"</tr></thead><tbody>{rows}</tbody></table></div>")


def _manifest(res: Any) -> str:
    m = res.manifest or {}
    env = m.get("environment", {})
    pk = {k: v for k, v in (m.get("packages") or {}).items() if v}
    parts = ["<h3>Environment</h3><table class='kv'><tbody>"]
    for k, v in (("isoeat", m.get("isoeat_version")),
                 ("Python", f"{env.get('python')} ({env.get('python_implementation')})"),
                 ("platform", env.get("platform")), ("host", env.get("hostname")), ("CPUs", env.get("cpu_count")),
                 ("manifest written", m.get("written"))):
        parts.append(f"<tr><th class='l'>{_e(k)}</th><td class='l'>{_e(v)}</td></tr>")
    parts.append("<tr><th class='l'>packages</th><td class='l'>" + _e(", ".join(f"{k} {v}" for k, v in pk.items()))
                 + "</td></tr></tbody></table>")
    parts.append("<h3>Models</h3><div class='scroll'><table><thead><tr><th class='l'>label</th><th class='l'>spec</th>"
                 "<th class='l'>family</th><th>dim</th><th>vocabulary</th><th class='l'>fingerprint</th>"
                 "<th>load time</th></tr></thead><tbody>")
    for lab, d in (m.get("models") or {}).items():
        parts.append(f"<tr><td class='l'>{_e(lab)}</td><td class='l'>{_e(d.get('spec'))}</td><td class='l'>"
                     f"{_e(d.get('family'))}</td><td>{_e(d.get('dim', '-'))}</td>"
                     f"<td>{_e(d.get('vocab_size', '-'))}</td>"
                     f"<td class='l'><code>{_e(d.get('fingerprint'))}</code></td>"
                     f"<td>{_fmt_s(d.get('load_seconds'))}</td></tr>")
    parts.append("</tbody></table></div>")
    cals = m.get("calibrators") or {}
    if cals:
        parts.append("<h3>Calibrators</h3><div class='scroll'><table><thead><tr><th class='l'>model/calibration</th>"
                     "<th class='l'>parameters</th><th>n</th><th class='l'>reference</th><th class='l'>file</th>"
                     "</tr></thead><tbody>")
        for k, d in cals.items():
            parts.append(f"<tr><td class='l'>{_e(k)}</td><td class='l'>{_e(d.get('params'))}</td>"
                         f"<td>{_e(d.get('n'))}</td>"
                         f"<td class='l'>{_e(d.get('reference'))}</td><td class='l'>{_e(d.get('path'))}</td></tr>")
        parts.append("</tbody></table></div>")
    corp = m.get("corpora") or {}
    rows = []
    ref = corp.get("reference")
    if ref:
        fp = ref.get("fingerprint") or str(ref.get("sha256", ""))[:16]
        extra = f", {ref['n_sentences']:,} sentences" if isinstance(ref.get("n_sentences"), int) else ""
        rows.append(("reference corpus", f"{ref.get('name') or ref.get('path')}{extra}", fp))
    for name, b in (corp.get("benchmarks") or {}).items():
        rows.append((f"benchmark {name}", b.get("path") or b.get("error", ""), str(b.get("sha256", ""))[:16]))
    for lab, d in (m.get("models") or {}).items():
        cd = d.get("corpus_description")
        if cd:
            rows.append((f"contexts of {lab}", f"{cd.get('name')} ({cd.get('n_sentences', '?')} sentences)",
                         cd.get("fingerprint", "")))
    if rows:
        parts.append("<h3>Corpora and benchmark files</h3><table class='kv'><tbody>" + "".join(
            f"<tr><th class='l'>{_e(k)}</th><td class='l'>{_e(v)}</td><td class='l'><code>{_e(fp)}</code></td></tr>"
            for k, v, fp in rows) + "</tbody></table>")
    seeds = m.get("seeds") or {}
    parts.append(f"<h3>Seeds</h3><p>root seed <code>{_e(seeds.get('root'))}</code>; {_e(seeds.get('rule', ''))}</p>")
    runs = m.get("runs") or []
    if runs:
        parts.append("<h3>Runs</h3><div class='scroll'><table><thead><tr><th class='l'>run</th><th class='l'>started"
                     "</th><th class='l'>ended</th><th class='l'>status</th><th>computed</th><th>reused</th>"
                     "<th>failed</th><th>wall time</th></tr></thead><tbody>")
        for r in runs:
            parts.append(f"<tr><td class='l'><code>{_e(r.get('run_id'))}</code></td>"
                         f"<td class='l'>{_e(r.get('started'))}"
                         f"</td><td class='l'>{_e(r.get('ended') or '(interrupted)')}</td><td class='l'>"
                         f"{_e(r.get('status'))}</td><td>{_e(r.get('computed'))}</td><td>{_e(r.get('reused'))}</td>"
                         f"<td>{_e(r.get('failed'))}</td><td>{_fmt_s(r.get('seconds'))}</td></tr>")
        parts.append("</tbody></table></div>")
    cells = (m.get("cells") or {}).get("list") or []
    if cells:
        cell_rows = "".join(
            f"<tr><td class='l'>{_e(c.get('key'))}</td><td class='l'>{_e(c.get('kind'))}</td><td class='l'>"
            f"{_e(c.get('status'))}</td><td>{_e(c.get('seed'))}</td><td>{_fmt_s(c.get('duration_s'))}</td>"
            f"<td class='l'><code>{_e(c.get('run_id') or '')}</code></td></tr>" for c in cells)
        parts.append(f"<details><summary>Per-cell seeds and durations ({len(cells)} cells)</summary>"
                     "<div class='scroll'>"
                     "<table><thead><tr><th class='l'>cell</th><th class='l'>kind</th><th class='l'>status</th>"
                     "<th>seed</th><th>duration</th><th class='l'>run</th></tr></thead>"
                     f"<tbody>{cell_rows}</tbody></table>"
                     "</div></details>")
    return "\n".join(parts)


def _metrics(res: Any) -> str:
    """The "Calibration across metrics" section: metrics x tests per (model, calibrated space), text escaped."""
    from ..labels import METRIC_CHANGE_RULE

    groups: dict[tuple[str, str], list[dict]] = {}
    for r in getattr(res, "metric_comparisons", None) or []:
        groups.setdefault((str(r.get("model", "")), str(r.get("calibration", ""))), []).append(r)
    parts = ["<p class='note'>Each configured bias metric (docs/metrics.md) on every test, in the raw and the "
             "calibrated space: the estimate, its change, its p-value where the metric has one, and whether "
             "calibration changes the conclusion. " + _e(METRIC_CHANGE_RULE.format(alpha=res.alpha)) + "</p>"]
    for (model, cal), rows in groups.items():
        head = "".join(f"<th class='l'>{_e(c)}</th>" if i in (0, 1, 7) else f"<th>{_e(c)}</th>"
                       for i, c in enumerate(metric_columns(cal)))
        body = "".join("<tr>" + "".join(f"<td class='l'>{_e(v)}</td>" if i in (0, 1, 7) else f"<td>{_e(v)}</td>"
                                        for i, v in enumerate(metric_comparison_cells(r))) + "</tr>" for r in rows)
        parts.append(f"<h3>{_e(model)}: raw vs {_e(cal)}</h3><div class='scroll'><table><thead><tr>{head}</tr>"
                     f"</thead><tbody>{body}</tbody></table></div>")
    return "\n".join(parts)


def report_title(res: Any) -> str:
    """The page's title: the config's ``name``, else (:data:`UNNAMED`) the run folder's name."""
    exp = res.experiment or {}
    name = str(exp.get("name") or (exp.get("config") or {}).get("name") or "")
    if name and name not in UNNAMED:
        return name
    return Path(os.path.abspath(res.out)).name or name or "experiment"


def _figures_html(any_png: bool, main_figs: list[Path], test_figs: list[Path]) -> list[str]:
    """The report's "Figures" section: Figures 1-4 with their captions, then the per-test heatmaps."""
    captions = {
        "fig1": "Figure 1: pairwise cosine similarity heatmaps before and after calibration",
        "fig2": "Figure 2: explained variance ratio of the top principal components (log scale)",
        "fig3": "Figure 3: effect sizes, raw (upper-left) vs calibrated (lower-right)",
        "fig4": "Figure 4: calibrated vs raw effect size by bias type",
    }
    body: list[str] = []
    body.append("<h2 id='figures'>Figures</h2>")
    if not any_png:
        body.append("<p class='note'>No figures (run <code>isoeat report DIR --html</code> with matplotlib "
                    "installed: <code>pip install \"isoeat[plot]\"</code>).</p>")
    for p in main_figs:
        cap = next((v for k, v in captions.items() if p.stem.startswith(k)), p.stem)
        if "-" in p.stem and p.stem.startswith(("fig3", "fig4")):
            cap += f" ({p.stem.split('-', 1)[1]})"
        body.append(_figure_block(p, cap))
    if test_figs:
        body.append("<h3>Per-test heatmaps: cosine of every target word with every attribute word</h3>")
        body.append("<p class='note'>One figure per model and test: target words X (left) and Y (right) as rows, "
                    "attribute words A | B as columns (white line), one row of panels per space.</p>")
        open_ = " open" if len(test_figs) <= 12 else ""
        body.append(f"<details{open_}><summary>{len(test_figs)} heatmaps</summary><div class='figs'>")
        body += [_figure_block(p, f"Per-test heatmap: {p.stem}") for p in test_figs]
        body.append("</div></details>")
    return body


def render_report(res: Any, figures: Sequence[Path] = ()) -> str:
    """The report page as a string (``figures``: PNG files to embed, from
    :func:`~isoeat.reporting.figures.write_figures`).

    It reads top-down: the d / p / change table (Table A1) first, the change counts, then the decision aids
    under plain headings (isotropy check, sanity tests, why d moved, severity, how to read), the other
    tables, the metrics, the layer profile, figures, failures, manifest, conventions and config.
    """
    from .. import __version__

    exp = res.experiment
    cfg = exp.get("config", {})
    name = report_title(res)
    pngs = [_inside(Path(p), Path(res.out)) for p in figures if Path(p).suffix == ".png" and Path(p).exists()]
    cfg_text = _config_text(res, cfg)
    from .layer_section import LAYER_CAPTION, is_layer_figure, layer_section  # the layer sweep: its own section
    from .mechanism_figure import is_aid_figure  # the decision aids' figures go to their own section

    aid_figs = [p for p in pngs if is_aid_figure(p)]
    layer_figs = [p for p in pngs if is_layer_figure(p, Path(res.out))]
    layers_html = layer_section(res, [_figure_block(p, LAYER_CAPTION) for p in layer_figs])
    from .audit_section import audit_section  # isoeat run --audit: the word-list audit, its own section
    from .eat_map import eat_map_section, is_eat_map  # run --levels: the EAT-Maps, their own section

    audit_html = audit_section(res)
    eat_figs = [p for p in pngs if is_eat_map(p)]
    eat_html = eat_map_section(res, [_figure_block(p, f"EAT-Map of {p.stem[len('eatmap-'):]}") for p in eat_figs])
    main_figs = [p for p in pngs if p.parent.name != "tests" and not is_aid_figure(p) and p not in layer_figs
                 and p not in eat_figs]
    test_figs = [p for p in pngs if p.parent.name == "tests"]
    tables = all_tables(res)
    first = [t for t in tables if t.name.startswith("table_a1")]  # d, p and the change class: what a reader came for
    more = [t for t in tables if t not in first]
    aids = aid_parts(res, aid_figs)
    has_metrics = bool(getattr(res, "metric_comparisons", None))
    nav = ["<a href='#results'>d and p</a>", "<a href='#summary'>Changes</a>"]
    nav += [f"<a href='#{key}'>{_e(link)}</a>" for key, _, link in AID_PARTS]
    nav += ["<a href='#tables'>More tables</a>"] if more else []
    nav += ["<a href='#metrics'>Calibration across metrics</a>"] if has_metrics else []
    nav += ["<a href='#layers'>Layer profile</a>"] if layers_html else []
    nav += ["<a href='#eatmaps'>EAT-Maps</a>"] if eat_html else []
    nav += ["<a href='#audit'>Word-list audit</a>"] if audit_html else []
    nav += ["<a href='#figures'>Figures</a>", "<a href='#failures'>Failures</a>", "<a href='#manifest'>Manifest</a>",
           "<a href='#conventions'>Conventions</a>", "<a href='#config'>Config</a>"]
    models = ", ".join(f"{m['label']} ({m['family']})" for m in res.models)
    tests = ", ".join(t["id"] for t in res.tests)
    cals = ", ".join(c["label"] for c in res.calibrations)
    body = [
        f"<h1>{_e(name)}</h1>",
        f"<p class='sub'>{_e(cfg.get('description') or '')} Models: {_e(models)}. Tests: {_e(tests)}. Spaces: "
        f"{_e(cals)}. Created {_e(exp.get('created', '?'))}, updated {_e(exp.get('updated', '?'))}.</p>",
        "<nav>" + "".join(nav) + "</nav>",
        "<h2 id='results'>Effect sizes d and p-values, raw and calibrated</h2>",
    ]
    body += [to_html(t) for t in first] or ["<p>No finished cells yet.</p>"]
    body += ["<h2 id='summary'>How many results changed</h2>", _cards(res)]
    body += [f"<h2 id='{key}'>{_e(heading)}</h2>\n{html_}" for key, heading, html_ in aids]
    if more:
        body += ["<h2 id='tables'>More tables</h2>", *(to_html(t) for t in more)]
    if has_metrics:
        body += ["<h2 id='metrics'>Calibration across metrics</h2>", _metrics(res)]
    if layers_html:
        body += ["<h2 id='layers'>Layer profile</h2>", layers_html]
    if eat_html:
        body += ["<h2 id='eatmaps'>EAT-Maps: the ML-EAT levels, raw beside calibrated</h2>", eat_html]
    if audit_html:
        body += ["<h2 id='audit'>Word-list audit</h2>", audit_html]
    body += _figures_html(bool(pngs), main_figs, test_figs)
    body += ["<h2 id='failures'>Failures</h2>", _failures(res),
             "<h2 id='manifest'>Manifest</h2>", _manifest(res),
             "<h2 id='conventions'>Conventions</h2>", _conventions(res),
             "<h2 id='config'>Config</h2>"]
    body.append(f"<pre>{_e(cfg_text)}</pre>")
    body.append(f"<footer>Written by isoeat {_e(__version__)} (<code>isoeat report</code>). "
                "Self-contained: no external resources.</footer>")
    return ("<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>\n"
            f"<title>{_e(name)} — isoeat report</title>\n<style>{_CSS}</style>\n<script>{_SCRIPT}</script>\n</head>\n"
            "<body>\n<main>\n" + "\n".join(body) + "\n</main>\n</body>\n</html>\n")


def _config_text(res: Any, cfg: Any) -> str:
    """The run folder's ``config.yaml`` as given (refused if it links outside the folder), else the parsed config."""
    cfg_path = Path(res.out) / "config.yaml"
    if os.path.lexists(cfg_path):
        _inside(cfg_path, Path(res.out))
        if cfg_path.is_file():
            return cfg_path.read_text("utf-8", errors="replace")
    import json

    return json.dumps(cfg, indent=2)


def write_report(res: Any, path: str | Path, figures: Sequence[Path] = ()) -> Path:
    """Write :func:`render_report` to ``path`` atomically."""
    path = Path(path)
    atomic_write_text(path, render_report(res, figures))
    return path
