"""``isoeat reproduce [--out DIR]``: the paper's protocol on every model this machine has, beside the paper's numbers.

Models, in the paper's order of families:

* always (offline): ``glove-6b-50d`` (the bundled GloVe 6B **50d**; the paper used 6B **100d**, so its
  numbers are shown beside ours as a *different model*) and ``minilm`` (all-MiniLM-L6-v2, not in the paper);
* when present in the local gensim-data folder, or downloadable with gensim when online: GloVe 6B 100d
  (``glove-wiki-gigaword-100``) and
  word2vec GoogleNews 300d (``word2vec-google-news-300``): the paper's own static models;
* when in the local Hugging Face cache or the hub is reachable: ``gpt2``, ``bert-base-cased``,
  ``roberta-base``, ``princeton-nlp/unsup-simcse-bert-base-uncased``,
  ``princeton-nlp/unsup-simcse-roberta-base``: the paper's own transformer models;
* ``--model NAME=SPEC`` (or ``models:`` in ``--config FILE``): any of the paper's seven bound to a local file
  or folder, marked ``mapped: PATH`` and compared with the paper digit by digit
  (:mod:`isoeat.commands._paper_models`). With ``--models auto`` a substitute is dropped when its paper
  model is here; the paper's models that are not here are listed with what would bring them.

The protocol (paper §4): ten WEATs, raw vs ZCA (ε = 1e-3, or ``--eps-relative R``), 100,000 permutations,
one-sided; 100,000 reference vectors (static: the top vocabulary rows; contextual: sentences of the corpus
``--corpus``, default ``auto``: the largest present offline, :func:`isoeat.corpora.offline_corpora`, said in
the output); 20 contexts per word, last layer; anisotropy on 2,000 sampled vectors; Spearman ρ on
WordSim-353 and SimLex-999 (and STS-B when its file is found), paired bootstrap with 10,000 resamples.
``--quick`` shrinks the sample sizes for a smoke test (and says so). Our numbers are printed at the paper's
precision (:func:`~isoeat.experiments.paper.format_paper_p`), each row with how many of its four numbers
print the same digits as the paper's; a contextual model's table gives its template-fallback count.

The run is an ordinary experiment folder (resumable, ``isoeat report DIR --html`` works on it); the
comparison with the paper is printed and written to ``DIR/paper_comparison.{csv,md}``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..experiments.paper import (
    format_paper_d,
    format_paper_p,
    paper_consistency,
    paper_rows,
    paper_values,
    parse_paper_p,  # paper_values, parse_paper_p, paper_rows: re-exported (__all__)
    same_printed_p,
)
from ..labels import FALLBACK_WARN_SHARE
from ._paper_models import candidate_models, paper_model_names, parse_model_mapping, select_auto, what_is_needed

__all__ = ["register", "COMMANDS", "paper_values", "parse_paper_p", "paper_rows", "candidate_models",
           "compare_with_paper"]


def _corpus_for(spec: str) -> str:
    """The corpus of the contextual models: ``auto`` as the largest present offline, a named corpus, or a path."""
    from ..corpora import resolve_corpus_spec

    return resolve_corpus_spec(spec, "--corpus")


def _corpora_text(spec: str) -> str:
    """What ``--corpus auto`` chooses from: the corpora present offline, largest first."""
    from ..corpora import offline_corpora

    present = offline_corpora()
    listed = "; ".join(f"{c['name']} ({c['bytes'] / 1e6:.1f} MB of text, {c['path']})" for c in present) or "none"
    pick = f"; --corpus auto uses {present[0]['name']}" if present else ""
    return f"corpora present offline, largest first: {listed}{pick} (this run: --corpus {spec})"


def _fallback_line(res: Any, label: str) -> str:
    """The template-fallback count of a model's raw WEATs (a contextual model only), with the warning."""
    from ..reporting.tables import folder_fallback_lines

    return "\n".join(folder_fallback_lines(res, label))


def _benchmarks() -> list[str]:
    out = ["ws353", "simlex999"]
    try:
        from ..similarity import find_benchmark_file

        find_benchmark_file("stsb")
        out.append("stsb")
    except Exception:  # noqa: BLE001 - STS-B is optional
        pass
    return out


# --------------------------------------------------------------------------- comparison
#: The four numbers of a Table A1 cell, ours and the paper's, as (our key, paper key, formatter).
_CELLS = (("d_raw", "paper_d_raw", format_paper_d), ("p_raw", "paper_p_raw", format_paper_p),
          ("d_zca", "paper_d_zca", format_paper_d), ("p_zca", "paper_p_zca", format_paper_p))


def _firm_cell(r: dict[str, Any]) -> str:
    """The ``Firm`` cell of a row with ``replicate_share`` "k/R" (:func:`isoeat.labels.holds_mark`), else ``-``."""
    from ..labels import holds_mark

    if "/" not in str(r.get("replicate_share") or ""):
        return "-"
    same, total = (int(x) for x in str(r["replicate_share"]).split("/"))
    return holds_mark(same, total)


def _source(m: dict[str, Any]) -> str:
    """How a model stands for the paper's: ``same model``, ``mapped: PATH`` or ``substitute (...)``."""
    if m.get("mapped"):
        return f"mapped: {m['mapped']}"
    if m.get("same"):
        return "same model"
    return f"substitute ({m.get('note', 'a different model')})"


def compare_with_paper(res: Any, chosen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our Table A1 rows beside the paper's, for every model that has a paper counterpart.

    Each row also holds our four numbers printed at the paper's precision (``*_printed``: d to 2 decimals,
    p to 4 or as an order of magnitude below 1e-4), ``digits_agree`` (how many of the four print the
    same as the paper's; the paper's ``10^-5``, p < 1e-4, is matched by any p below 1e-4:
    :func:`~isoeat.experiments.paper.same_printed_p`) and ``model_source`` (``same model``, ``mapped: PATH``,
    ``substitute (...)``).
    """
    from ..experiments.stability import stability_columns
    from .run import comparisons

    paper = {(r["model"], r["test"]): r for r in paper_rows()}
    comps = [c for c in comparisons(res) if c.calibration == "zca"]
    marks = {(c.model, row.test): {k: v for k, v in stability_columns((row.replicates_same, row.replicates)).items()
                                   if k in ("firm", "replicate_share")}  # the Firm level and k/R, as `run`'s records
             for c in comps for row in c.rows if row.replicates}
    for m in chosen:  # the redraws behind a model's marks (the footer states them)
        m["firm_meta"] = next((c.calibrator_metadata for c in comps if c.model == m["label"]), {})
    out = []
    for m in chosen:
        if not m.get("paper"):
            continue
        for r in res.comparisons:
            if r["model"] != m["label"] or r["calibration"] != "zca":
                continue
            p = paper.get((m["paper"], r["test"]))
            if p is None:
                continue
            row = {
                "model": m["label"], "paper_model": m["paper"], "same_model": m["same"], "model_source": _source(m),
                "test": r["test"], "bias_type": r["bias_type"],
                "d_raw": r["d_raw"], "paper_d_raw": p["d_raw"], "p_raw": r["p_raw"], "paper_p_raw": p["p_raw_printed"],
                "d_zca": r["d_calibrated"], "paper_d_zca": p["d_calibrated"], "p_zca": r["p_calibrated"],
                "paper_p_zca": p["p_calibrated_printed"], "change": r["change"], "paper_change": p["change"],
                "change_agrees": r["change"] == p["change"],
                **marks.get((m["label"], r["test"]), {}),
            }
            agree = 0
            for ours, theirs, fmt in _CELLS:
                row[f"{ours}_printed"] = fmt(row[ours])
                agree += (same_printed_p(row[ours], row[theirs]) if fmt is format_paper_p
                          else row[f"{ours}_printed"] == fmt(row[theirs]))
            row["digits_agree"] = agree
            out.append(row)
    return out


def _render(rows: list[dict], chosen: list[dict]) -> str:
    from ..reporting.tables import _render as render
    from ..reporting.tables import stability_footer

    lines: list[str] = []
    by_model: dict[str, list[dict]] = {}
    for r in rows:
        by_model.setdefault(r["model"], []).append(r)
    for m in chosen:
        rs = by_model.get(m["label"])
        if not rs:
            continue
        if m.get("mapped"):
            how = (f"mapped: {m['mapped']} (the paper's model by your mapping, read from that path); ours at the "
                   "paper's printed digits, compared digit by digit")
        elif m["same"]:
            how = ("the same model; ours at the paper's printed digits; differences come from the reference corpus "
                   "and sample, contexts and Monte Carlo")
        else:
            how = f"A DIFFERENT MODEL, a substitute ({m.get('note', '')}); compare patterns, not digits"
        lines += [f"{m['label']} ({m['spec']}) beside the paper's {m['paper']}: {how}",
                  *([m["dim_note"]] if m.get("dim_note") else []), ""]
        header = ["ID", "Bias", "d_R", "p_R", "d_W", "p_W", "Chg", "|", "paper d_R", "p_R", "d_W", "p_W", "Chg",
                  "same digits"]
        body = [[r["test"], r["bias_type"] or "", r["d_raw_printed"], r["p_raw_printed"], r["d_zca_printed"],
                 r["p_zca_printed"], r["change"][0], "|", format_paper_d(r["paper_d_raw"]), r["paper_p_raw"],
                 format_paper_d(r["paper_d_zca"]), r["paper_p_zca"], r["paper_change"][0],
                 f"{r['digits_agree']}/4"] for r in rs]
        lines.append(render(header, body))
        if any("firm" in r for r in rs):  # isoeat run's Firm column: does our calibrated call hold on redraws?
            lines += ["", render(["ID", "Chg", "Firm"], [[r["test"], r["change"], _firm_cell(r)] for r in rs]),
                      stability_footer(m.get("firm_meta") or {})]
        lines += ["", agreement_headline(rs, m.get("over_fallback") or ()), ""]
        if m.get("fallback_line"):
            lines.insert(len(lines) - 1, m["fallback_line"])
    return "\n".join(lines)


def over_fallback(res: Any, label: str) -> list[str]:
    """The tests of model ``label`` whose raw WEAT encoded more than :data:`~isoeat.labels.FALLBACK_WARN_SHARE` of
    its words in the fallback template (no corpus context): their d says little about the words in context."""
    from ..labels import fallback_counts, too_many_fallbacks

    out = []
    for r in getattr(res, "weat", ()):
        if r["model"] == label and r["calibration"] == "none":
            n, total, _ = fallback_counts([r])
            if too_many_fallbacks(n, total):
                out.append(r["test"])
    return out


def agreement_headline(rs: list[dict], over: Sequence[str] = ()) -> str:
    """The line under a model's comparison with the paper: how many change classes agree, how many numbers print
    the same digits, Pearson r of d; tests in ``over`` (:func:`over_fallback`) are left out of the counts and
    named, with how many of them agree."""
    import numpy as np

    kept = [r for r in rs if r["test"] not in set(over)]
    dr = np.array([[r["d_raw"], r["paper_d_raw"]] for r in kept], dtype=float).reshape(-1, 2)
    dw = np.array([[r["d_zca"], r["paper_d_zca"]] for r in kept], dtype=float).reshape(-1, 2)

    def corr(a: Any) -> str:
        ok = np.isfinite(a).all(axis=1)
        if ok.sum() < 3 or np.ptp(a[ok, 0]) == 0 or np.ptp(a[ok, 1]) == 0:
            return "-"
        return f"{np.corrcoef(a[ok, 0], a[ok, 1])[0, 1]:.2f}"

    line = (f"change class agrees with the paper in {sum(r['change_agrees'] for r in kept)} of {len(kept)} tests"
            f"{' whose words had corpus contexts' if len(kept) < len(rs) else ''}; "
            f"{sum(r['digits_agree'] for r in kept)} of {4 * len(kept)} numbers print the same digits; "
            f"Pearson r of d with the paper's: raw {corr(dr)}, whitened {corr(dw)}")
    left = [r for r in rs if r["test"] in set(over)]
    if left:
        line += (f" (left out: {', '.join(r['test'] for r in left)}, over "
                 f"{FALLBACK_WARN_SHARE:.0%} of their words in the fallback template; "
                 f"{sum(r['change_agrees'] for r in left)} of {len(left)} agree)")
    return line


def _render_t2_t3(res: Any, chosen: list[dict]) -> str:
    pv = paper_values()
    lines = []
    for m in chosen:
        if not m.get("paper"):
            continue
        a = {x["calibration"]: x for x in res.anisotropy if x["model"] == m["label"]}
        t2 = pv["table2"].get(m["paper"])
        if a.get("none") and a.get("zca") and t2:
            tag = _source(m)
            lines.append(f"{m['label']} anisotropy (mean ± SD pairwise cosine): raw {a['none']['mean_cosine']:.3f} ± "
                         f"{a['none']['sd_cosine']:.3f} -> whitened {a['zca']['mean_cosine']:.3f} ± "
                         f"{a['zca']['sd_cosine']:.3f}; paper's {m['paper']} ({tag}): raw {t2['raw_mean']:.3f} ± "
                         f"{t2['raw_sd']:.3f} -> {t2['white_mean']:.3f} ± {t2['white_sd']:.3f}")
        t3 = pv["table3"].get(m["paper"], {})
        for s in res.similarity:
            if s["model"] != m["label"] or s["calibration"] != "zca":
                continue
            p = t3.get(s["benchmark"])
            if not p:
                continue
            lines.append(f"{m['label']} {p['label']}: rho {s['rho_raw']:.3f} -> {s['rho_calibrated']:.3f} "
                         f"(delta {s['delta']:+.3f}); paper's {m['paper']}: {p['raw']:.3f} -> {p['white']:.3f} "
                         f"(delta {p['delta']:+.3f} {p['sig']})")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the command
def register(sub: Any, add_stat_options: Any) -> None:
    from ..cliargs import add, add_eps_options, examples

    p = sub.add_parser("reproduce",
                       description="Run the paper's protocol (10 WEATs raw vs ZCA, anisotropy, similarity) on every "
                                   "model available on this machine, or bound to a local file with --model, and print "
                                   "the paper's published values beside ours (labelled: the same model, mapped to a "
                                   "path, or a substitute).",
                       epilog=examples("isoeat reproduce --list                        # what can run here",
                                       "isoeat reproduce --check-paper                 # the paper's tables checked",
                                       "isoeat reproduce --models glove-6b-50d --quick --out repro/   # a smoke test",
                                       "isoeat reproduce --model glove-6b-100d=glove:glove.6B.100d.txt --models GloVe"))
    add(p, "--out")
    p.add_argument("--models", default="auto", metavar="LIST",
                   help="comma-separated labels or specs to run (default auto: every available model, less a "
                        "substitute whose paper model is here)")
    add(p, "--model")
    p.add_argument("--config", metavar="FILE",
                   help="YAML file with 'models: {NAME: SPEC}' mappings (paths read from the file's folder) and "
                        "optionally 'corpus: SPEC'; --model and --corpus given here win (default: none)")
    add(p, "--corpus")
    add_eps_options(p)
    p.add_argument("--offline", action="store_true", help="do not try the network (hub models only from the cache)")
    p.add_argument("--quick", action="store_true",
                   help="small samples (10,000 permutations, 2,000 reference vectors, 5 contexts, 200-resample "
                        "bootstrap): a smoke test, not the paper's protocol")
    p.add_argument("--no-extras", action="store_true", help="WEAT only: no anisotropy and no similarity cells")
    add(p, "--overwrite")
    p.add_argument("--list", action="store_true",
                   help="list the candidate models and whether they are available; run nothing")
    p.add_argument("--check-paper", action="store_true",
                   help="only check the paper's own tables (identical rows with different inputs, change classes "
                        "against their p, the text's counts against Table A1); run nothing (default: the checks "
                        "are printed after a run)")


def _paper_checks_text() -> str:
    """The findings of :func:`~isoeat.experiments.paper.paper_consistency`, one per line, under a heading."""
    found = paper_consistency()
    head = (f"Checks of the paper's own tables: {sum(f.severity == 'inconsistent' for f in found)} inconsistent, "
            f"{sum(f.severity == 'note' for f in found)} note(s)")
    return "\n".join([head, *(f"  {f.line()}" for f in found)])


def _read_config(path: str) -> tuple[dict[str, dict[str, str]], str | None]:
    """``(mapping, corpus)`` from a reproduce config file (keys ``models`` and ``corpus``)."""
    from .._errors import ConfigError
    from ..experiments._config_check import read_yaml

    file = Path(path)
    data, _ = read_yaml(file)
    if not isinstance(data, dict):
        raise ConfigError(f"--config {path}: expected a mapping with 'models' and/or 'corpus'")
    unknown = sorted(set(data) - {"models", "corpus"})
    if unknown:
        raise ConfigError(f"--config {path}: unknown key(s) {', '.join(unknown)} (allowed: models, corpus)")
    models = data.get("models") or {}
    if not isinstance(models, dict):
        raise ConfigError(f"--config {path}: 'models' must map paper model names to specs, e.g. "
                          "{GloVe: glove:glove.6B.100d.txt}")
    mapping = parse_model_mapping(models, base=file.resolve().parent, where=f"{path}: models")
    corpus = data.get("corpus")
    if corpus is not None and not isinstance(corpus, str):
        raise ConfigError(f"--config {path}: 'corpus' must be a corpus name or path, got {corpus!r}")
    if corpus and not Path(corpus).expanduser().is_absolute() and (file.resolve().parent / corpus).exists():
        corpus = str((file.resolve().parent / corpus).resolve())  # a path beside the config file
    return mapping, corpus


def _not_here(cands: list[dict[str, Any]], chosen: list[dict[str, Any]]) -> list[str]:
    """One line per paper model that is neither found nor mapped (or not chosen), with what would bring it."""
    run = {c["paper"] for c in chosen if c.get("same")}
    out = []
    for c in cands:
        if not c.get("same") or c["paper"] in run:
            continue
        sub = next((x["label"] for x in chosen if x.get("paper") == c["paper"] and not x.get("same")), None)
        state = "not chosen (--models)" if c["available"] else f"not here ({c['why']})"
        out.append(f"  {c['paper']}: {state}" + (f"; its substitute {sub} runs instead" if sub else "")
                   + (f"; to compare like with like: {what_is_needed(c)}" if not c["available"] else ""))
    return out


def _note_dimensions(res: Any, chosen: list[dict[str, Any]]) -> None:
    """``dim_note`` on each mapped model whose vectors (the manifest's ``dim``) are not the paper model's size."""
    dims = {m["label"]: m.get("dim") for m in paper_values()["models"]}
    for c in chosen:
        ours = ((res.manifest or {}).get("models") or {}).get(c["label"], {}).get("dim")
        theirs = dims.get(c.get("paper"))
        if c.get("mapped") and ours and theirs and int(ours) != int(theirs):
            c["dim_note"] = (f"WARNING: {c['mapped']} holds {ours}-dimensional vectors; the paper's {c['paper']} is "
                             f"{theirs}-dimensional: not the paper's model, whatever the mapping says")
            print(f"isoeat: warning: {c['label']}: {c['dim_note'][9:]}", file=sys.stderr)


def _chosen(models: str, cands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The models ``--models`` names (``auto``: the available candidates ``select_auto`` picks)."""
    from .._errors import ConfigError

    if models == "auto":
        chosen = select_auto(cands)
    else:
        want = [w.strip() for w in models.split(",") if w.strip()]
        chosen = []
        for w in want:
            hit = next((c for c in cands if w.lower() in (c["label"].lower(), c["spec"].lower())), None)
            paper = paper_model_names().resolve(w) if hit is None else None  # any name --model accepts
            hit = hit or next((c for c in cands if paper and c.get("same") and c["label"] == paper), None)
            if hit is None:
                raise ConfigError(f"--models: unknown model {w!r} (candidates: "
                                  f"{', '.join(c['label'] for c in cands)})")
            if not hit["available"]:
                raise ConfigError(f"--models: {hit['label']} is not available here ({hit['why']}; "
                                  f"{what_is_needed(hit) if hit.get('same') else ''})")
            chosen.append(hit)
    return chosen


def _config(chosen: list[dict[str, Any]], args: argparse.Namespace, corpus: str | None) -> dict[str, Any]:
    """The reproduction's experiment config (the paper's protocol; ``--quick``: smaller samples)."""
    quick = args.quick
    settings: dict[str, Any] = {
        "permutations": 10_000 if quick else 100_000, "seed": 0, "alpha": 0.05,
        **({"eps_relative": args.eps_relative} if args.eps_relative is not None else {"eps": args.eps}),
        "contexts_per_word": 5 if quick else 20, "layer": -1,
        "reference": {"size": 2_000 if quick else 100_000, "sentences": 20_000 if quick else 200_000},
    }
    if corpus is not None:  # contextual models: their reference and context corpus
        settings["reference"]["corpus"] = corpus
    cfg = {
        "name": "paper-reproduction" + ("-quick" if quick else ""),
        "description": "The protocol of 'Calibrating WEAT Against Anisotropy' (AIES 2026) on the models available "
                       "here" + (" (--quick: smaller samples, not the paper's protocol)" if quick else ""),
        "models": [{"spec": c["spec"], "label": c["label"], "family": c["family"]} for c in chosen],
        "tests": [f"W{i}" for i in range(1, 11)],
        "calibrations": ["none", "zca"],
        "settings": settings,
        "report": {"test_heatmaps": "none"},
    }
    if not args.no_extras:
        cfg["anisotropy"] = {"sample": 2000}
        cfg["similarity"] = {"benchmarks": _benchmarks(), "bootstrap": 200 if quick else 10_000}
    return cfg


def _model_departures(res: Any, chosen: list[dict], own: list[str]) -> dict[str, list[str]]:
    """Per model label: the reproduction's own departures (``--quick``, ε as its first line says it), then the
    folder's for the model's raw and ZCA spaces (:func:`~isoeat.experiments.results.folder_departures`: the
    reference the fit really used, a small model or corpus giving fewer rows than asked; contexts per word;
    sampled permutations), the folder's ε left out (said once, by the reproduction's)."""
    out = {}
    for c in chosen:
        folder = [d for cal in ("none", "zca") for d in res.departures(c["label"], cal)
                  if not d.startswith(("epsilon ", "relative epsilon"))]
        out[c["label"]] = list(dict.fromkeys([*own, *folder]))
    return out


def _departure_lines(per_model: dict[str, list[str]], own: list[str]) -> str:
    """One line per model whose run departs from the paper's protocol beyond what the first line says."""
    return "\n".join(f"! {label}: not the paper's protocol: {'; '.join(d for d in deps if d not in own)}"
                     for label, deps in per_model.items() if any(d not in own for d in deps))


def _write_comparison(out: Path, rows: list[dict], departures: dict[str, list[str]], head: str, text: str,
                      extra: str, missing: list[str]) -> None:
    """``paper_comparison.csv`` and ``.md``: the files say how they were made (quick, another ε, a reference
    smaller than the paper's: not the paper's protocol; ``departures``: per model label)."""
    from .._io import atomic_write_text
    from .._records import records_to_csv
    from .._version import versioned

    for r in rows:  # the files say how they were made: a quick or other-epsilon run is not the paper's protocol
        deps = departures.get(r["model"], [])
        r["protocol"] = "paper" if not deps else "not the paper's: " + "; ".join(deps)
    atomic_write_text(out / "paper_comparison.csv", records_to_csv(versioned(rows)))
    tail = "\n".join(["", "the paper's models not compared like with like here:", *missing]) if missing else ""
    atomic_write_text(out / "paper_comparison.md",
                      "```\n" + head + "\n\n" + text + ("\n" + extra if extra else "") + tail + "\n```\n")


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .._errors import ConfigError
    from .._io import atomic_write_text
    from .._records import records_to_csv
    from .._version import versioned
    from ..cliargs import eps_params
    from ..experiments.config import parse_config
    from ..experiments.runner import load_experiment, run_experiment

    if args.check_paper:
        print(_paper_checks_text())
        return 0
    mapping, corpus_given = _read_config(args.config) if args.config else ({}, None)
    mapping = parse_model_mapping(args.model_map, into=mapping)
    corpus_spec = args.corpus if args.corpus is not None else (corpus_given or "auto")
    if args.list:
        _corpus_for(corpus_spec)  # a --corpus that names nothing: one line, not a listing that hides it
    cands = candidate_models(online=False if args.offline else None, mapping=mapping)
    if args.list:
        for c in cands:
            state = "available" if c["available"] else f"not available ({c['why']})"
            paper = (f"paper: {c['paper']} ({_source(c)})" if c["paper"] else "not in the paper")
            print(f"{c['label']:<15} {c['spec']:<55} {state}; {paper}")
        needed = [f"  {c['paper']}: {what_is_needed(c)}" for c in cands if c.get("same") and not c["available"]]
        if needed:
            print("To compare like with like, the paper's models missing here need:", *needed, sep="\n")
        print(_corpora_text(corpus_spec))
        return 0
    chosen = _chosen(args.models, cands)
    if not chosen:
        raise ConfigError("no model of the reproduction is available here (isoeat reproduce --list says why)")
    for c in chosen:
        if c.get("gensim_name") and not c.get("local"):
            print(f"downloading {c['gensim_name']} with gensim.downloader (the paper's {c['label']}) ...")
            sys.stdout.flush()
            import gensim.downloader as api

            c["spec"] = f"{c['spec_prefix']}:{api.load(c['gensim_name'], return_path=True)}"
    quick = args.quick
    contextual = any(c["family"] != "static" for c in chosen)
    corpus = _corpus_for(corpus_spec) if contextual or args.corpus is not None or corpus_given else None
    cfg = _config(chosen, args, corpus if contextual else None)
    config = parse_config(cfg, source="isoeat reproduce")
    eps = eps_params(args)
    said_corpus = ""
    if contextual:
        auto = " (auto: the largest present offline)" if corpus_spec.lower() == "auto" else ""
        said_corpus = f"; reference and context corpus of the contextual models: {corpus}{auto}"
    said_eps = (f"absolute {eps['eps']:g}" if "eps_mode" not in eps else
                f"{eps['eps']:g} x the mean eigenvalue of each reference covariance")
    head = (f"isoeat reproduce: {len(chosen)} model(s): {', '.join(c['label'] for c in chosen)}{said_corpus}; "
            f"epsilon {said_eps}" + ("; QUICK settings (not the paper's protocol)" if quick else ""))
    departures = [*(["--quick"] if quick else []), *([f"epsilon {said_eps}"] if eps != {"eps": 1e-3} else [])]
    print(head)
    for c in chosen:
        if c.get("mapped"):
            print(f"  {c['label']}: mapped: {c['mapped']}")
    missing = _not_here(cands, chosen)
    if missing:
        print("the paper's models not compared like with like here:", *missing, sep="\n")
    sys.stdout.flush()
    summary = run_experiment(config, args.out, overwrite=args.overwrite, argv=sys.argv[1:])
    res = summary.results or load_experiment(args.out)  # what the run wrote, not read again
    rows = compare_with_paper(res, chosen)
    _note_dimensions(res, chosen)
    for c in chosen:
        c["fallback_line"] = _fallback_line(res, c["label"])
        c["over_fallback"] = over_fallback(res, c["label"])
    per_model = _model_departures(res, chosen, departures)
    text = "\n".join(filter(None, [_render(rows, chosen), _departure_lines(per_model, departures)]))
    print()
    print(text)
    extra = _render_t2_t3(res, chosen)
    if extra:
        print(extra)
        print()
    for c in chosen:
        if not c.get("paper"):
            print(f"{c['label']}: not in the paper ({c.get('note', '')}); its results are in {args.out}/tables")
            if c.get("fallback_line"):
                print(c["fallback_line"])
    _write_comparison(Path(args.out), rows, per_model, head, text, extra, missing)
    print(_paper_checks_text())
    out = Path(args.out)
    atomic_write_text(out / "paper_checks.csv", records_to_csv(versioned([f.to_dict() for f in paper_consistency()])))
    pv = paper_values()["source"]
    print(f"paper values: {pv['tables']['table_a1']}, transcribed from {pv['transcribed_from']}")
    print(f"{summary.line()}; comparison in {out / 'paper_comparison.csv'}; report: isoeat report {out} --html")
    if summary.failed:
        sys.stderr.write(f"isoeat: {len(summary.failed)} cell(s) failed:\n")
        for f in summary.failed[:20]:
            sys.stderr.write(f"  {f['key']}: {f.get('type')}: {f.get('message')}\n")
        return 1
    return 0


COMMANDS = {"reproduce": _cmd_reproduce}
