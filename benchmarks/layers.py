"""Benchmark of ``isoeat run --layers all``: every hidden-state layer from one forward pass.

Runs, in this process, the real command twice on the same small workload:

* single layer: ``isoeat run --model minilm --tests W7 --reference-size 1000 --layer 6``
  (the model's last layer);
* all layers: the same with ``--layers all`` (all-MiniLM-L6-v2: the embedding
  output and its 6 layers, 7 hidden states), which also computes the layer
  profile and writes tables/layers.csv and figures/layers.png;

both with ``--no-cache``, ``--permutations 10000`` and ``--out`` in a fresh
temporary folder (word contexts of the test's 32 words, 20 each; 1,000
reference sentences of gensim-wiki for ZCA; WEAT raw and calibrated per
layer). It prints the process CPU time (all threads, ``time.process_time``)
and the wall time of each run and their ratios. With ``--repeats N`` (default 2)
the two runs alternate N times and each takes its best, so that load from other
processes hurts both alike.

``--model`` takes a comma-separated list (e.g. ``minilm,mpnet``: all-MiniLM-L6-v2's
7 hidden states and all-mpnet-base-v2's 13, a 12-layer model, installed
as docs/encoders.md says); each model is measured in turn, its rows named after it.

Target (CPU time, which load from other processes inflates less than wall
time; the wall ratio is printed beside it; the load average is printed before
and after): the all-layers run costs <= 1.3 x the single-layer run, for every
model. Also checked: both runs feed the model the same padded tokens (every
batch of every forward pass counted as it goes by), i.e. the sweep runs the
forward passes of one layer and no more. The script exits with status 1 when a
target is missed and names it.

``--quick`` is a smoke run (100 reference sentences, 2 layers): timings printed,
not checked. ``--json PATH`` writes the figures for tools/perf_table.py.

Usage:  python benchmarks/layers.py [--model minilm[,mpnet]] [--tests W7] [--reference 1000] [--layers all]
                                    [--repeats 2] [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

import _bench

RATIO = 1.3


def rows(f: dict) -> list[dict]:
    """The figures of one model against the target (pure: ``f`` is what :func:`measure` measured)."""
    cpu = f["layers"]["cpu"] / f["single"]["cpu"]
    wall = f["layers"]["wall"] / f["single"]["wall"]
    what = f"--layers {f['layers_spec']} ({f['n_layers']} layers of {f.get('model', 'the model')}) / one layer"
    return [
        _bench.row(f"{what}, CPU time",
                   f"{cpu:.2f} ({f['layers']['cpu']:.1f} s vs {f['single']['cpu']:.1f} s)", round(cpu, 3), "x",
                   f"<= {RATIO:g}", cpu <= RATIO),
        _bench.row(f"{what}, wall time",
                   f"{wall:.2f} ({f['layers']['wall']:.1f} s vs {f['single']['wall']:.1f} s)", round(wall, 3), "x",
                   _bench.NO_TARGET, True),
        _bench.row(f"{what}, padded tokens of the forward passes",
                   f"{f['layers']['tokens']:,} vs {f['single']['tokens']:,} ({f['layers']['batches']} vs "
                   f"{f['single']['batches']} batches)", f["layers"]["tokens"], "tokens", "equal",
                   f["layers"]["tokens"] == f["single"]["tokens"]),
    ]


def check(figures: dict) -> list[str]:
    """The targets missed by ``figures`` (empty when all are met)."""
    return _bench.missed(rows(figures))


_PADDED = {"batches": 0, "tokens": 0}  # forward passes of the model: batches and padded tokens (sequences x length)


def _count_padding() -> None:
    """Count every batch the model runs, and its padded tokens, as they go by (the pooling itself unchanged)."""
    from isoeat.backends import _pooling, transformer

    real = _pooling.pool_rows_layers
    if getattr(real, "counted", False):
        return

    def counted(hidden, torch, seqs, n_rows, *, batches, **kw):
        def seen():
            for b in batches:
                _PADDED["batches"] += 1
                _PADDED["tokens"] += len(b) * max(len(seqs[i].ids) for i in b)
                yield b
        return real(hidden, torch, seqs, n_rows, batches=seen(), **kw)

    counted.counted = True
    _pooling.pool_rows_layers = transformer.pool_rows_layers = counted


def timed(argv: list[str]) -> dict:
    """CPU and wall time of ``isoeat`` with ``argv`` in this process (its output swallowed; status checked),
    with the batches and padded tokens of its forward passes."""
    from isoeat.cli import main

    _count_padding()
    _PADDED.update(batches=0, tokens=0)
    out = io.StringIO()
    c0, w0 = time.process_time(), time.perf_counter()
    with contextlib.redirect_stdout(out):
        rc = main(argv)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    if rc != 0:
        raise SystemExit(f"isoeat {' '.join(argv)} failed with status {rc}:\n{out.getvalue()}")
    return {"cpu": cpu, "wall": wall, "output": out.getvalue(), **_PADDED}


def measure(model_spec: str, args: argparse.Namespace) -> dict:
    """Time one model's single-layer and all-layers runs (alternating, best of ``args.repeats``); print them."""
    import isoeat

    model = isoeat.load_model(model_spec)
    n_layers = len(model.layer_sweep(args.layers).layers)
    base = ["run", "--model", model_spec, "--tests", args.tests, "--reference-size", str(args.reference),
            "--no-cache", "--permutations", "10000", "--quiet"]
    with tempfile.TemporaryDirectory() as tmp:
        # warm-up (imports, file caches): both timed runs then read the corpus and load the model alike
        timed(base + ["--layer", str(model.n_layers), "--reference-size", "20", "--out", f"{tmp}/warm"])
        runs: dict[str, list[dict]] = {"single": [], "layers": []}
        for i in range(args.repeats):
            runs["single"].append(timed(base + ["--layer", str(model.n_layers), "--out", f"{tmp}/single{i}"]))
            runs["layers"].append(timed(base + ["--layers", args.layers, "--out", f"{tmp}/layers{i}"]))
        single, layers = ({"cpu": min(r["cpu"] for r in rs), "wall": min(r["wall"] for r in rs),
                           "output": rs[-1]["output"], "tokens": rs[-1]["tokens"], "batches": rs[-1]["batches"]}
                          for rs in (runs["single"], runs["layers"]))
        profile = (Path(tmp) / "layers0" / "tables" / "layers.csv").read_text().count("\n") - 1
    print(f"\nmodel {model.name}: {n_layers} hidden states swept (--layers {args.layers}); tests {args.tests}; "
          f"{args.reference} reference sentences; profile rows {profile}")
    for key, label in (("single", f"single layer ({model.n_layers})"), ("layers", f"--layers {args.layers}")):
        each = ", ".join(f"{r['cpu']:.1f}/{r['wall']:.1f}" for r in runs[key])
        best = single if key == "single" else layers
        print(f"{label:24s} CPU {best['cpu']:7.1f} s   wall {best['wall']:7.1f} s   (best of CPU/wall s: {each}); "
              f"{best['batches']} batches, {best['tokens']:,} padded tokens")
    tail = layers["output"].split("layer profile:", 1)
    if len(tail) == 2:
        print("\nlayer profile:" + tail[1].rstrip())
    return {"model": model_spec, "layers_spec": args.layers, "n_layers": n_layers, "reference": args.reference,
            "tests": args.tests, "single": {k: single[k] for k in ("cpu", "wall", "tokens", "batches")},
            "layers": {k: layers[k] for k in ("cpu", "wall", "tokens", "batches")}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="minilm", help="hf: specs, comma-separated (default minilm)")
    ap.add_argument("--tests", default="W7", help="tests of both runs (default W7)")
    ap.add_argument("--reference", type=int, default=None, help="reference sentences (default 1000; --quick 100)")
    ap.add_argument("--layers", default=None, help="--layers of the sweep (default all; --quick 0,6)")
    ap.add_argument("--repeats", type=int, default=None, help="alternating runs, best of each (default 2; --quick 1)")
    ap.add_argument("--quick", action="store_true", help="smoke run: small sizes, timings not checked")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    args.reference = args.reference or (100 if args.quick else 1000)
    args.layers = args.layers or ("0,6" if args.quick else "all")
    args.repeats = args.repeats or (1 if args.quick else 2)
    models = [m.strip() for m in args.model.split(",") if m.strip()]
    if not models:
        ap.error("--model: give at least one model")
    run = _bench.Run("layers", quick=args.quick)
    table = [r for spec in models for r in rows(measure(spec, args))]
    return run.finish(table, args.json)


if __name__ == "__main__":
    sys.exit(main())
