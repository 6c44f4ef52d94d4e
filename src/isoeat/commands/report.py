"""``isoeat report DIR [--html]``: tables, figures and a self-contained HTML page from an experiment folder.

Reads the cells that ``isoeat run [CONFIG.yaml] --out DIR`` wrote and writes
(holding the folder's lock, so not while a run is writing it):

* ``DIR/tables/``: Table A1 (per calibrated space), Table 2, Table 3 and the
  §5.3–5.5 summary, each as ``.csv``, ``.md`` and ``.tex``;
* ``DIR/figures/``: Figures 1–4 and the per-test heatmaps as PNG and PDF
  (formats and dpi from the config's ``report`` section or ``--formats``/``--dpi``);
* with ``--html``: ``DIR/report.html``, one file with the figures embedded;
  a folder of ``isoeat run --layers`` gets a "Layer profile" section (its
  ``tables/layers.csv``, checked against the cells, and ``figures/layers.png`` redrawn).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["register", "COMMANDS"]


def register(sub: Any, add_stat_options: Any) -> None:
    from ..cliargs import add, examples

    p = sub.add_parser("report",
                       description="Tables (CSV, Markdown, LaTeX), figures (PNG, PDF) and, with --html, a "
                                   "self-contained report.html from an experiment folder: the --out DIR of "
                                   "'isoeat run' (quick or CONFIG.yaml, --layers included) or of 'isoeat reproduce'.",
                       epilog=examples("isoeat report results/ --html",
                                       "isoeat report results/ --no-figures           # tables only"))
    p.add_argument("dir", metavar="DIR", help="experiment folder (the --out DIR of 'isoeat run' or 'isoeat reproduce')")
    p.add_argument("--html", action="store_true", help="also write DIR/report.html (figures embedded, offline)")
    add(p, "--no-figures")
    p.add_argument("--formats", default=None, metavar="LIST",
                   help="figure formats, comma-separated: png,pdf,svg (default: the config's, else png,pdf)")
    p.add_argument("--dpi", type=int, default=None,
                   help="PNG resolution, 50 to 1200 (default: the config's, else 150)")
    p.add_argument("--test-heatmaps", default=None, metavar="all|none|IDS",
                   help="per-test cosine heatmaps to draw (default: the config's, else all)")


def _cmd_report(args: argparse.Namespace) -> int:
    from .._errors import ConfigError
    from ..experiments.lock import DirLock
    from ..experiments.results import FORMAT_TYPE, check_writable
    from ..experiments.runner import load_experiment, write_results
    from ..reporting._render import CpuProbe

    t0 = time.perf_counter()
    probe = CpuProbe()  # the cores other processes keep busy while the folder is read: the drawing processes
    out = Path(args.dir)
    res = load_experiment(out)
    formats = None
    if args.formats:
        formats = tuple(f.strip().lower() for f in args.formats.split(",") if f.strip())
        bad = [f for f in formats if f not in ("png", "pdf", "svg")]
        if bad:
            raise ConfigError(f"--formats: unknown format(s) {', '.join(bad)} (allowed: png, pdf, svg)")
        if args.html and "png" not in formats:
            formats = ("png", *formats)  # the page embeds PNG
    if args.dpi is not None and not 50 <= args.dpi <= 1200:  # before anything is read or written
        raise ConfigError(f"--dpi must lie in [50, 1200], got {args.dpi}")
    heat: Any = None
    if args.test_heatmaps:
        heat = args.test_heatmaps if args.test_heatmaps in ("all", "none") else \
            [t.strip() for t in args.test_heatmaps.split(",") if t.strip()]
        if isinstance(heat, list):
            known = [t["id"] for t in res.tests]
            unknown = [t for t in heat if t not in known]
            if unknown:
                raise ConfigError(f"--test-heatmaps: unknown test(s) {', '.join(unknown)} (tests of this experiment: "
                                  f"{', '.join(known)}; or all, none)")
    figures: list[Path] = []
    with DirLock(out):  # a run writing this folder meanwhile is waited for by the user, not raced
        check_writable(out)  # as run: no owned path linked out, no newer-format record; before anything is written
        res = load_experiment(out)
        written = write_results(out, res)
        if not args.no_figures:
            from ..reporting._glyphs import glyphs_for, report_texts
            from ..reporting._render import _jobs
            from ..reporting.figures import require_matplotlib, write_figures

            with glyphs_for(report_texts(res)):  # a label's characters the font lacks: another font, or one line
                from ..reporting.mechanism_figure import aid_plan  # why d moved; anisotropy severity (PNG)

                require_matplotlib()  # loaded before the processes are counted: the probe's interval, ~0.4 s
                figures = write_figures(res, out / "figures", formats=formats, dpi=args.dpi, test_heatmaps=heat,
                                        extra=aid_plan(res),
                                        jobs=_jobs(None, 1 << 20, probe))  # capped by its figures there
                from ..reporting.layer_section import write_layer_figure_from  # --layers: figures/layers.png

                figures += write_layer_figure_from(res, out / "figures", dpi=args.dpi)
                from ..reporting.eat_map import write_eat_maps  # run --levels: the EAT-Maps

                figures += write_eat_maps(res, out / "figures", dpi=args.dpi or 150)
        page = None
        if args.html:
            from ..reporting.html import write_report

            page = write_report(res, out / "report.html", [p for p in figures if p.suffix == ".png"])
    tables = [p for p in written if p.parent.name == "tables"]
    print(f"{out}: {len(res.weat)} WEAT cells, {len(res.anisotropy)} anisotropy, {len(res.similarity)} similarity, "
          f"{len(res.failures)} failed")
    print(f"tables:  {len(tables)} files in {out / 'tables'}")
    if not args.no_figures:
        print(f"figures: {len(figures)} files in {out / 'figures'}")
    if page is not None:
        print(f"report:  {page} ({page.stat().st_size / 1024:.0f} KiB, self-contained)")
    print(f"({time.perf_counter() - t0:.1f} s)")
    for note in res.notes:  # versions: cells of another format, a manifest of another isoeat
        sys.stderr.write(f"isoeat: note: {note}\n")
    failed = [f for f in res.failures if f.get("type") != FORMAT_TYPE]
    if failed:
        sys.stderr.write(f"isoeat: note: {len(failed)} cell(s) failed; see {out / 'failures.json'}\n")
    return 0


COMMANDS = {"report": _cmd_report}
