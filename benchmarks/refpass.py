"""Benchmark: the reference pass against a bare encode of the same sentences.

The reference pass is what a first calibrated contextual answer waits for
(``isoeat seat --model st:minilm``, ``isoeat run --model minilm``): the
encoder's ``reference_statistics(n)`` (sample, chunks, forward passes,
pooling, float64 statistics, per-chunk bookkeeping), here without the disk
cache so that every repeat runs the model. Beside it, on the same sentences
and batch size, the bare encode a user would write:

* ``st:`` — ``SentenceTransformer.encode(sentences, batch_size=B,
  normalize_embeddings=True)`` on the very model object the encoder loaded;
* ``hf:`` (unit sentence and unit word) — the tokenizer with padding and the
  model's forward pass over batches of B sentences sorted by length (the
  pipeline's bucketing; nothing pooled, nothing accumulated).

Pass and bare encode alternate, ``--repeats`` times; the ratio of each pair
(pass time / bare time, measured back to back, so load from other processes
hurts both alike) is printed with the rates, and the median ratio is checked.

Target (any load: the ratio, not the rates):

* every pass's median ratio <= 1.2 (the pass within 1.2x of the bare encode).

``--quick``: 64 sentences, one repeat, st: only; timings printed, not checked.
``--json PATH`` writes the figures for tools/perf_table.py.

Usage:  python benchmarks/refpass.py [--sentences 2000] [--corpus auto] [--batch-size 64]
                                     [--models st:minilm,minilm] [--repeats 3] [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import _bench

RATIO_MAX = 1.2


def rows(f: dict) -> list[dict]:
    """The figures against the target (pure: ``f`` is what :func:`main` measured)."""
    out = []
    for p in f["passes"]:
        ratio = statistics.median(p["ratios"])
        out.append(_bench.row(f"{p['label']}: reference pass / bare encode (median of {len(p['ratios'])})",
                              f"{ratio:.2f} (pass {p['n'] / p['pass_s']:.0f} sentences/s, bare "
                              f"{p['n'] / p['bare_s']:.0f}/s, best of each)", round(ratio, 3), "x bare",
                              f"<= {RATIO_MAX:g}", ratio <= RATIO_MAX))
    return out


def check(figures: dict) -> list[str]:
    """The targets missed by ``figures`` (empty when all are met)."""
    return _bench.missed(rows(figures))


def _st_bare(m, sents, batch_size):
    model = m._model

    def run():
        model.encode(list(sents), batch_size=batch_size, normalize_embeddings=m.normalize_embeddings,
                     convert_to_numpy=True, show_progress_bar=False)
    return run


def _hf_bare(m, sents, batch_size):
    import torch

    tok, model = m._tokenizer, m._model
    lengths = [len(ids) for ids in tok(list(sents), truncation=True)["input_ids"]]
    order = sorted(range(len(sents)), key=lengths.__getitem__)

    def run():
        with torch.inference_mode():
            for i in range(0, len(order), batch_size):
                enc = tok([sents[j] for j in order[i:i + batch_size]], padding=True, truncation=True,
                          return_tensors="pt")
                model(**{k: v.to(m.device) for k, v in enc.items()})
    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=None, help="comma-separated specs (default st:minilm,minilm; --quick "
                                                   "st:minilm)")
    ap.add_argument("--corpus", default="auto", help="corpus of the sentences (default auto)")
    ap.add_argument("--sentences", type=int, default=None, help="reference sentences (default 2000; --quick 64)")
    ap.add_argument("--batch-size", type=int, default=64, help="sentences per forward pass (default 64)")
    ap.add_argument("--repeats", type=int, default=None, help="alternating pairs (default 3; --quick 1)")
    ap.add_argument("--quick", action="store_true", help="smoke run: small sizes, timings not checked")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    args.sentences = args.sentences or (64 if args.quick else 2000)
    args.repeats = args.repeats or (1 if args.quick else 3)
    specs = (args.models or ("st:minilm" if args.quick else "st:minilm,minilm")).split(",")
    run = _bench.Run("refpass", quick=args.quick)

    import warnings

    import torch

    import isoeat
    from isoeat.corpora import load_corpus

    corpus = load_corpus(args.corpus)
    sents = tuple(corpus.sample(args.sentences, rng=0))
    words = sum(len(s.split()) for s in sents) / len(sents)
    print(f"corpus {corpus.name}: {len(sents):,} sentences sampled (mean {words:.1f} words); batch {args.batch_size}; "
          f"torch threads {torch.get_num_threads()}", flush=True)
    passes = []
    for spec in specs:
        units = ["sentence"] if spec.startswith("st:") else ["sentence", "word"]
        m = isoeat.load_model(spec, corpus=list(sents), use_cache=False, progress=False, batch_size=args.batch_size,
                              device="cpu")
        m._load()
        bare = (_st_bare if spec.startswith("st:") else _hf_bare)(m, sents, args.batch_size)
        bare()  # warm-up
        for unit in units:
            def ref(unit=unit):
                m.__dict__.pop("_vectors_memo", None)  # no vectors kept from the last repeat
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # truncation notes
                    m.reference_statistics(len(sents), unit=unit)
            t_pass, t_bare, ratios = [], [], []
            for _ in range(args.repeats):
                t = time.perf_counter()
                ref()
                t_pass.append(time.perf_counter() - t)
                t = time.perf_counter()
                bare()
                t_bare.append(time.perf_counter() - t)
                ratios.append(t_pass[-1] / t_bare[-1])
                print(f"  {spec} unit={unit}: pass {t_pass[-1]:.2f} s, bare {t_bare[-1]:.2f} s, "
                      f"ratio {ratios[-1]:.2f}", flush=True)
            passes.append({"label": f"{spec} unit={unit}", "n": len(sents), "pass_s": min(t_pass),
                           "bare_s": min(t_bare), "ratios": ratios})
    return run.finish(rows({"passes": passes}), args.json)


if __name__ == "__main__":
    sys.exit(main())
