"""``isoeat anisotropy`` and ``isoeat similarity``: the paper's Experiments 1 and 2 (Tables 2 and 3).

::

    isoeat anisotropy [--model SPEC] [--calibration zca|none|...] [--samples 2000] [--top-k 50]
                      [--seed 0] [--matrix-out FILE.npz] [--format table|json|csv]
    isoeat similarity [--model SPEC] [--benchmark ws353,simlex999|men|rg65|rw|mturk771|stsb|PATH]
                      [--calibration zca|none|...] [--bootstrap 10000] [--ci-level 0.95] [--seed 0]
                      [--min-coverage 0] [--format table|json|csv]

Both fit the calibrator on the model's reference vectors (``--reference-size``,
``--reference-text``, ``--eps``, ``--calibration-param``) or load one saved
with ``isoeat whiten`` (``--whitener FILE``), like ``isoeat run``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from typing import Any

__all__ = ["register", "COMMANDS"]


def _common(p: argparse.ArgumentParser) -> None:
    from ..cliargs import add, add_calibration_options, add_model_options

    add(p, "--model", "--calibration", "--seed")
    add_calibration_options(p)
    add(p, "--format")
    add_model_options(p, cluster=False)


def register(subparsers: Any, add_stat_options: Any = None) -> None:
    """Add the ``anisotropy`` and ``similarity`` parsers (``add_stat_options`` is not used:
    its ``--bootstrap`` means resamples of WEAT targets, a different thing)."""
    from ..cliargs import add, examples, nonneg_int, positive_int

    p = subparsers.add_parser(
        "anisotropy",
        description="Is the space anisotropic, and does calibration fix it? Mean and SD of the pairwise cosine, "
                    "IsoScore, partition ratio and the explained variance of the top components, of the raw space "
                    "beside the calibrated one (default zca; none: raw only), over a sample of reference vectors "
                    "(--frame says which).",
        epilog=examples("isoeat anisotropy                                   # raw vs zca, glove-6b-50d",
                        "isoeat anisotropy --frame reference                 # the calibrator's reference pool",
                        "isoeat anisotropy --calibration none --samples 5000 --format json"),
    )
    _common(p)
    p.set_defaults(_reference_measured=True)  # --reference-size/-text also choose the vectors it measures
    p.add_argument("--samples", type=positive_int("--samples"), default=2000, metavar="N",
                   help="reference vectors sampled (default 2000, as the paper)")
    p.add_argument("--top-k", type=positive_int("--top-k"), default=50, metavar="K",
                   help="principal components whose explained-variance ratio is reported (default 50)")
    add(p, "--frame")
    p.add_argument("--matrix-out", metavar="FILE",
                   help="also save the pairwise cosine matrices (paper Figure 1) to this .npz file "
                        "(arrays named by calibration: none, zca, ...; info_json: sampling rule)")

    p = subparsers.add_parser(
        "similarity",
        description="Does calibration cost semantic quality? Spearman's rho between cosine and human similarity "
                    "scores on word-pair (and STS) benchmarks, raw beside calibrated (default zca; none: raw only), "
                    "with a paired bootstrap interval on the change in rho.",
        epilog=examples("isoeat similarity                                   # ws353,simlex999, raw vs zca",
                        "isoeat similarity --benchmark ws353 --calibration none"),
    )
    _common(p)
    p.add_argument("--benchmark", default="ws353,simlex999", metavar="NAME|PATH",
                   help="comma-separated: ws353, simlex999, men, rg65, rw, mturk771, stsb (stsb-dev, stsb-train) "
                        "or files (default ws353,simlex999)")
    add(p, "--bootstrap", "--ci-level", "--min-coverage")
    p.add_argument("--show-oov", type=nonneg_int("--show-oov"), default=10, metavar="N",
                   help="uncovered pairs listed per benchmark in the table (default 10; json/csv list all)")


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------


class _ReferenceMemo:
    """A model whose ``reference_vectors`` is computed once per argument set.

    Fitting the calibrator and sampling the anisotropy pool ask for the same
    reference vectors; for contextual encoders computing them is the
    expensive part, so do it once. Everything else is the wrapped model's.
    """

    def __init__(self, model: Any) -> None:
        self._model = model
        self._cache: dict[Any, Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def reference_vectors(self, n: int = 100_000, **kwargs: Any) -> Any:
        key = (n, tuple(sorted((k, str(v)) for k, v in kwargs.items())))
        if key not in self._cache:
            self._cache[key] = self._model.reference_vectors(n, **kwargs)
        return self._cache[key]


def _load(args: argparse.Namespace, memo: bool = False) -> tuple[Any, Any]:
    from ..calibration import check_compatible
    from ..cliargs import calibrator_from_args, load_model_from_args

    model = load_model_from_args(args)
    if getattr(args, "frame", None):  # a frame the model has not: refused before the calibrator is fitted
        from ..diagnostics.frames import check_frame_for

        check_frame_for(model, args.frame)
    if memo:
        model = _ReferenceMemo(model)
    cal = None
    if args.calibration != "none" or args.whitener:
        cal = calibrator_from_args(args, model)
        check_compatible(cal, model, force=args.force)
    return model, cal


def _sentence_calibrator(args: argparse.Namespace, model: Any, benches: list[Any]) -> Any:
    """A calibrator fitted on sentence vectors for the sentence benchmarks (STS-B) of a contextual model.

    Only when the command fits its calibrator (no --whitener), the user did not choose --reference-unit,
    and the model's reference unit is word occurrences (hf: models); else ``None`` (the one calibrator
    serves all: static models have no sentence unit, st: encoders no other).
    """
    from .._types import reference_unit_of
    from ..calibration import fit_calibrator
    from ..cliargs import calibration_params

    if (args.calibration == "none" or args.whitener or args.reference_unit is not None
            or reference_unit_of(model) == "sentence"  # static models, st: encoders
            or not any(b.kind == "sentence" for b in benches)):
        return None
    kwargs = {"unit": "sentence", **({"text": args.reference_text} if args.reference_text else {})}
    return fit_calibrator(model, args.calibration, n_reference=args.reference_size, reference_kwargs=kwargs,
                          **calibration_params(args))


def _cal_label(cal: Any) -> str:
    meta = getattr(cal, "metadata_", {}) or {}
    from ..calibration.registry import params_text

    params = meta.get("params") or (cal.get_params() if hasattr(cal, "get_params") else {})
    shown = params_text(params, getattr(cal, "eps_", None))
    label = "ZCA-whitened" if cal.name == "zca" else f"calibrated with {cal.name}"
    if meta.get("model_check"):
        label += " (model not verified)"
    parts = [shown] if shown else []
    if meta.get("reference"):
        parts.append(f"reference: {meta['reference']}")
    return label + (f" ({'; '.join(parts)})" if parts else "")


def _warn_lines(caught: list[warnings.WarningMessage]) -> None:
    for w in caught:
        sys.stderr.write(f"isoeat: warning: {w.message}\n")


def _rho(x: float | None) -> str:
    """Paper style: ``.477``, ``-.025``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    s = f"{x:.3f}"
    return s.replace("0.", ".", 1) if abs(x) < 1 else s


def _signed(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    s = _rho(abs(x))
    return ("+" if x >= 0 else "-") + s


def _small(v: float) -> str:
    """``0.0606``; values below 1e-4 in scientific notation."""
    return f"{v:.4f}" if v >= 1e-4 or v == 0 else f"{v:.1e}"


def _stars(p: float | None) -> str:
    if p is None:
        return "-"
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else "n.s."


# ----------------------------------------------------------------------------
# anisotropy
# ----------------------------------------------------------------------------


def _cmd_anisotropy(args: argparse.Namespace) -> int:
    import numpy as np

    from .._io import atomic_write_with
    from ..diagnostics import compare_anisotropy
    from ..reporting.tables import _render, emit_records

    t0 = time.perf_counter()
    if args.matrix_out:
        from ..cliargs import npz_out

        npz_out(args.matrix_out, "--matrix-out", "matrix file")  # the file written is the file said
    model, cal = _load(args, memo=True)
    kwargs = {"text": args.reference_text} if args.reference_text else {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = compare_anisotropy(
            model, cal, n_samples=args.samples, top_k=args.top_k, rng=args.seed,
            n_reference=args.reference_size, reference_kwargs=kwargs, force=args.force,
            return_matrix=bool(args.matrix_out), frame=args.frame,
        )
    _warn_lines(caught)
    if args.matrix_out:
        import json

        arrays: dict[str, Any] = {r.calibration: r.cosine_matrix for r in results}
        arrays["info_json"] = np.array(json.dumps({"model": model.name, "sampling": results[0].sampling,
                                                   "seed": results[0].seed}))
        atomic_write_with(args.matrix_out, lambda fh: np.savez(fh, **arrays))
    records = [r.to_dict() for r in results]
    if emit_records(records, args.format):
        return 0
    raw = results[0]
    title = f"{model.name}: anisotropy of " + {"reference": "the reference vectors", "paper": "frame paper (the "
                                                 "paper's protocol)"}.get(args.frame, f"frame {args.frame}")
    if cal is not None:
        title += f", raw vs {_cal_label(cal)}"
    print(title)
    print(f"Sample: {raw.sampling}")
    print()
    if cal is not None:
        c = results[1]
        tag = "Wh." if c.calibration == "zca" else c.calibration
        print(_render(["Model", "Raw Mean", "Raw SD", f"{tag} Mean", f"{tag} SD"],
                      [[model.name, f"{raw.mean_cosine:.3f}", f"{raw.sd_cosine:.3f}",
                        f"{c.mean_cosine:.3f}", f"{c.sd_cosine:.3f}"]], align_left=1))
        print()
    k = raw.top_k
    rows = []
    for r in results:
        evr = r.explained_variance_ratio
        ratio = f"{evr[0] / evr[-1]:.3g}" if evr[-1] > 0 else "inf"
        rows.append(["raw" if r.calibration == "none" else r.calibration, f"{r.mean_cosine:.4f}",
                     f"{r.sd_cosine:.4f}", f"{r.sample_mean_cosine:.4f} ± {r.sample_mean_cosine_se:.4f}",
                     f"{r.isoscore:.3f}", f"{r.partition_ratio:.3f}", _small(evr[0]), _small(evr[-1]), ratio])
    print(_render(["Space", "Mean cos", "SD cos", "Sample mean ± SE", "IsoScore", "I(W)", "EVR PC1", f"EVR PC{k}",
                   f"PC1/PC{k}"], rows, align_left=1))
    print()
    shown = min(k, 10)
    print(f"Explained variance ratio of the top {k} principal components"
          + (f" (first {shown} shown; --format json lists all):" if shown < k else ":"))
    for r in results:
        print(f"  {'raw' if r.calibration == 'none' else r.calibration:<6} "
              + " ".join(_small(v) for v in r.explained_variance_ratio[:shown]))
    print()
    print("\n".join(_cosine_notes(raw)))
    print("IsoScore: Rudman et al. (2022), 1 = all directions used equally, 0 = one direction. "
          "I(W): partition-function ratio min Z(c)/max Z(c) of Mu & Viswanath (2018), c over the "
          "eigenvectors of W'W and their negatives, 1 = isotropic (scale-dependent).")
    if args.matrix_out:
        print(f"Pairwise cosine matrices written to {args.matrix_out}")
    print(f"({time.perf_counter() - t0:.1f} s)")
    return 0


def _spectrum_note(r: Any) -> str:
    """Which of IsoScore and EVR are the frame's (exact covariance) and which the sample's (with the SE)."""
    n, size = r.n_samples, r.frame_size
    if getattr(r, "spectrum_method", "") == "exact" and size > n:
        return (f"IsoScore and EVR: exact, of the covariance of the frame's {size:,} vectors "
                f"(isoeat.diagnostics.frame_spectrum; the sample's top-PC share {r.sample_top_pc_share:.4f}); "
                f"I(W) of the {n:,} sampled vectors (no SE).")
    if getattr(r, "spectrum_method", "") == "sampled":
        return (f"IsoScore, I(W) and EVR are of the {n:,} sampled vectors; EVR PC1 ± "
                f"{r.top_pc_share_se:.4f} (delta-method SE; the frame is over the exact budget).")
    return f"IsoScore, I(W) and EVR are of the {n:,} sampled vectors (sampled; no SE)."


def _cosine_notes(r: Any) -> list[str]:
    """What the Mean cos, SD cos and Sample mean columns are: which figures are exact, which sampled (with SE)."""
    n, size = r.n_samples, r.frame_size
    if r.cosine_method == "exact" and size <= n:
        what = f"exact: over the N(N-1) off-diagonal pairs of the N = {n:,} vectors, the whole frame"
        sample = "Sample mean: the same (the sample is the frame; SE 0)."
    elif r.cosine_method == "exact":
        what = (f"exact: over all N(N-1) off-diagonal pairs of the frame's N = {size:,} vectors (Gram identity, "
                "isoeat.diagnostics.frame_cosine)")
        sample = (f"Sample mean ± SE: the mean over the {n:,} sampled vectors (the paper's protocol, §4.3) "
                  "± its SD over "
                  f"samples of {n:,} from the frame (exact formula).")
    else:
        what = (f"sampled: over the pairs of the N = {n:,} sampled vectors (the frame's {size:,} vectors are over the "
                "exact budget, isoeat.diagnostics.frame_cosine.EXACT_BUDGET)")
        sample = (f"Sample mean ± SE: the same mean ± its SE over samples of {n:,} from the frame, estimated from the "
                  "sample (U-statistic variance).")
    notes = [f"Mean cos, SD cos: {what}; population SD; near 0 mean = isotropic.",
             sample + " " + _spectrum_note(r)]
    from ..diagnostics.isotropy_check import rank_limited

    if rank_limited(n, r.dim):  # a sample covariance of rank < d
        notes.append(f"Undetermined: IsoScore, I(W) and EVR of {n:,} vectors in {r.dim:,} dimensions (N <= d) "
                     f"measure the sample's size, not the space (covariance rank at most {max(n - 1, 0):,}); use "
                     f"--samples {r.dim + 1:,} or more.")
    return notes


# ----------------------------------------------------------------------------
# similarity
# ----------------------------------------------------------------------------


def _benchmarks(spec: str) -> list[str]:
    from pathlib import Path

    if Path(spec).is_file():
        return [spec]
    items = [s.strip() for s in spec.split(",") if s.strip()]
    if not items:
        from .._errors import ConfigError

        raise ConfigError("--benchmark: give at least one benchmark name or file")
    return list(dict.fromkeys(items))


def _cmd_similarity(args: argparse.Namespace) -> int:
    from ..reporting.tables import _render, emit_records, format_p
    from ..similarity import compare_similarity, evaluate_similarity, load_benchmark

    t0 = time.perf_counter()
    names = _benchmarks(args.benchmark)
    benches = [load_benchmark(b) for b in names]  # fail on a bad file before any fitting
    model, cal = _load(args)
    cal_for = {"word": cal, "sentence": _sentence_calibrator(args, model, benches) or cal}
    comparisons: list[Any] = []
    records: list[dict[str, Any]] = []
    for b in benches:
        if cal is None:
            r = evaluate_similarity(model, b, min_coverage=args.min_coverage)
            rec = r.to_dict()
            rec.update({"delta_spearman": None, "delta_ci_low": None, "delta_ci_high": None, "p_value": None,
                        "spearman_ci_low": None, "spearman_ci_high": None, "ci_level": None, "n_resamples": 0,
                        "n_valid_resamples": 0, "seed": None})
            comparisons.append((r, None, None))
            records.append(rec)
        else:
            c = compare_similarity(model, b, cal_for[b.kind], n_resamples=args.bootstrap, ci_level=args.ci_level,
                                   rng=args.seed, force=args.force, min_coverage=args.min_coverage)
            comparisons.append((c.raw, c.calibrated, c.bootstrap))
            records.extend(c.records())
    if emit_records(records, args.format):
        return 0
    if cal is None:
        print(f"{model.name}: Spearman rho between cosine similarity and human scores (raw space)")
    else:
        print(f"{model.name}: Spearman rho between cosine similarity and human scores, raw vs {_cal_label(cal)}")
        if cal_for["sentence"] is not cal:
            print(f"  sentence benchmarks: raw vs {_cal_label(cal_for['sentence'])} (sentence-level reference "
                  "statistics, as the paper fits contextual models on sentence inputs; --reference-unit overrides)")
    print()
    any_boot = any(b is not None for _, _, b in comparisons)
    if cal is None:
        header = ["Bench.", "Kind", "rho", "Pairs", "Coverage"]
        rows = [[r.title, r.kind, _rho(r.spearman), f"{r.n_pairs}/{r.n_total}", f"{r.coverage:.1%}"]
                for r, _, _ in comparisons]
    else:
        tag = "White" if cal.name == "zca" else cal.name
        header = ["Bench.", "Kind", "Raw", tag, "Delta"]
        if any_boot:
            header += [f"{args.ci_level:.0%} CI", "p", "Sig."]
        header += ["Pairs", "Coverage"]
        rows = []
        for r, c, b in comparisons:
            row = [r.title, r.kind, _rho(r.spearman), _rho(c.spearman), _signed(c.spearman - r.spearman)]
            if any_boot:
                row += ([f"[{_signed(b.ci_low)}, {_signed(b.ci_high)}]", format_p(b.p_value), _stars(b.p_value)]
                        if b is not None else ["-", "-", "-"])
            row += [f"{r.n_pairs}/{r.n_total}", f"{r.coverage:.1%}"]
            rows.append(row)
    print(_render(header, rows, align_left=2))
    print()
    if cal is not None:
        print("Delta = rho(calibrated) - rho(raw) on the same pairs.")
        if any_boot:
            b0 = next(b for _, _, b in comparisons if b is not None)
            print(f"Paired bootstrap over the benchmark pairs: {b0.n_resamples:,} resamples (seed {args.seed}), "
                  f"{args.ci_level:.0%} percentile interval; two-sided p = 2(min(k<=0, k>=0)+1)/(B+1), "
                  f"smallest possible {format_p(2 / (b0.n_resamples + 1))}. "
                  "Sig.: *** p<0.001, ** p<0.01, * p<0.05, n.s. not significant.")
            short = [r.title for r, _, b in comparisons if b is not None and b.n_valid < b.n_resamples]
            if short:
                print(f"Resamples with constant ranks (no rho) left out for: {', '.join(short)}.")
    for r, _, _ in comparisons:
        if r.kind == "sentence":
            print(f"{r.title}: sentence vectors = {r.method}.")
    for r, _, _ in comparisons:
        if r.oov_pairs:
            what = "words" if r.kind == "word" else "sentences"
            shown = r.oov_pairs[: args.show_oov]
            if r.kind == "word":
                listed = ", ".join(f"{a}-{b}" for a, b, _ in shown)
            else:
                listed = ", ".join(f"line {ln}" for _, _, ln in shown)
            more = len(r.oov_pairs) - len(shown)
            tail = f" (+{more} more; --format json lists all)" if more > 0 else ""
            print(f"{r.title}: {len(r.oov_pairs)} of {r.n_total} pairs skipped ({what} not covered)"
                  + (f": {listed}{tail}" if shown else tail))
    print(f"({time.perf_counter() - t0:.1f} s)")
    return 0


COMMANDS = {"anisotropy": _cmd_anisotropy, "similarity": _cmd_similarity}
