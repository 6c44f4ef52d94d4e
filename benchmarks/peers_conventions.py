"""WEFE 1.0.1 against ``--convention wefe`` on W1-W10 of the bundled GloVe.

The vectors of every word of W1-W10 (and of its lowercase form) are written by ``isoeat export`` to a GloVe
text file; WEFE runs in its own environment (``--peers-python``, default ``/work/venv-peers/bin/python``:
WEFE 1.0.1 needs numpy 1.26) on that file, with ``preprocessors=[{}, {"lowercase": True}]`` (WEFE's own way
to find "John" as "john", what isoeat's case fallback does; its default ``[{}]`` loses the cased words and
returns nan past 20% lost) and its other defaults. Each test's WEFE ``effect_size`` is compared with
``isoeat.weat(model, T, convention="wefe").effect_size``: the target is agreement to float32 rounding
(relative difference <= 1e-5: WEFE takes the cosines of float32 vectors in float32, isoeat in float64).
With ``--p-tests W6,W10`` WEFE's p (``calculate_p_value=True``: draws with replacement from an unseeded
generator, 10,000 runs, minutes per test) is printed beside isoeat's exact p, for the record, with no target. Where WEFE cannot be run, the benchmark says so and exits 1.

``--write-fixture PATH`` also writes WEFE's d per test as JSON (the fixture ``tests/data/wefe_glove50_w1_w10.json``
of ``tests/test_conventions.py``).

    python benchmarks/peers_conventions.py [--json out/peers.json] [--write-fixture tests/data/...json]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import _bench

WEFE_SCRIPT = r"""
import json, sys, numpy as np
from gensim.models import KeyedVectors
from wefe.metrics import WEAT
from wefe.query import Query
from wefe.word_embedding_model import WordEmbeddingModel
import wefe
kv = KeyedVectors.load_word2vec_format(sys.argv[1], binary=False, no_header=True)
model = WordEmbeddingModel(kv, "glove-6b-50d")
tests = json.loads(open(sys.argv[2]).read())
out = {"wefe": wefe.__version__, "numpy": np.__version__, "tests": {}}
for t in tests:
    q = Query([t["X"], t["Y"]], [t["A"], t["B"]], ["X", "Y"], ["A", "B"])
    r = WEAT().run_query(q, model, return_effect_size=True, calculate_p_value=t["p"],
                         preprocessors=[{}, {"lowercase": True}])
    out["tests"][t["id"]] = {"effect_size": float(r["effect_size"]), "p_value": float(r["p_value"])}
print(json.dumps(out))
"""

#: The target: relative agreement of d to float32 rounding.
RTOL = 1e-5


def rows(figures: dict) -> list[dict]:
    """One row per test (WEFE's d against --convention wefe's) and one of WEFE's p (no target)."""
    out = []
    for tid, f in figures["tests"].items():
        rel = abs(f["isoeat"] - f["wefe"]) / abs(f["wefe"]) if f["wefe"] else math.inf
        out.append(
            _bench.row(
                f"{tid}: d, WEFE {figures['version']} vs --convention wefe",
                f"{f['wefe']:.6f} vs {f['isoeat']:.6f} (rel {rel:.1e})",
                rel,
                "relative",
                f"<= {RTOL:g}",
                rel <= RTOL,
            )
        )
    for tid, f in figures["tests"].items():
        if f.get("wefe_p") is not None:
            out.append(
                _bench.row(
                    f"{tid}: p, WEFE (with replacement, unseeded) vs isoeat exact",
                    f"{f['wefe_p']:.4f} vs {f['isoeat_p']:.4f}",
                    f["wefe_p"],
                    "p",
                    _bench.NO_TARGET,
                    True,
                )
            )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--peers-python",
        default="/work/venv-peers/bin/python",
        help="the Python of the environment WEFE 1.0.1 is installed in",
    )
    ap.add_argument(
        "--p-tests",
        default="",
        help="tests whose WEFE p is computed too, e.g. W6,W10 (10,000 draws each, minutes; default none)",
    )
    ap.add_argument("--write-fixture", default=None, metavar="PATH", help="also write WEFE's d per test as JSON")
    ap.add_argument("--quick", action="store_true", help="W6-W8 only")
    _bench.add_json_option(ap)
    args = ap.parse_args()
    run = _bench.Run("peers_conventions", quick=args.quick, quick_checks=True)

    import isoeat

    model = isoeat.load_model("glove-6b-50d")
    tests = isoeat.list_tests()[5:8] if args.quick else isoeat.list_tests()[:10]
    p_tests = set(filter(None, args.p_tests.split(",")))
    with tempfile.TemporaryDirectory() as tmp:
        words = sorted({v for t in tests for s in (t.X, t.Y, t.A, t.B) for w in s.words for v in (w, w.lower())})
        (Path(tmp) / "words.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
        vecs = Path(tmp) / "vectors.txt"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "isoeat.cli",
                "export",
                "--words",
                str(Path(tmp) / "words.txt"),
                "--skip-missing",
                "--out",
                str(vecs),
                "-q",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        spec = [
            {
                "id": t.id,
                "X": list(t.X.words),
                "Y": list(t.Y.words),
                "A": list(t.A.words),
                "B": list(t.B.words),
                "p": t.id in p_tests,
            }
            for t in tests
        ]
        (Path(tmp) / "tests.json").write_text(json.dumps(spec), encoding="utf-8")
        (Path(tmp) / "wefe_run.py").write_text(WEFE_SCRIPT, encoding="utf-8")
        try:
            done = subprocess.run(
                [args.peers_python, str(Path(tmp) / "wefe_run.py"), str(vecs), str(Path(tmp) / "tests.json")],
                capture_output=True,
                text=True,
                check=False,
            )
        except OSError as exc:
            print(f"WEFE could not be run with {args.peers_python}: {exc}")
            return 1
        if done.returncode != 0:
            print(f"WEFE could not be run with {args.peers_python}: {done.stderr.strip().splitlines()[-1:]}")
            return 1
    wefe = json.loads(done.stdout)
    figures: dict = {"version": wefe["wefe"], "tests": {}}
    for t in tests:
        r = isoeat.weat(model, t, rng=0, convention="wefe")
        w = wefe["tests"][t.id]
        figures["tests"][t.id] = {
            "wefe": w["effect_size"],
            "isoeat": r.effect_size,
            "isoeat_p": r.p_value,
            "wefe_p": w["p_value"] if t.id in p_tests else None,
        }
    if args.write_fixture:
        doc = {
            "provenance": f"python benchmarks/peers_conventions.py --write-fixture {args.write_fixture} "
            f"(WEFE {wefe['wefe']}, numpy {wefe['numpy']}, WEAT().run_query(query, model, "
            "return_effect_size=True, preprocessors=[{}, {'lowercase': True}]) on the bundled "
            "glove-6b-50d vectors of W1-W10 written by isoeat export)",
            "effect_size": {tid: f["wefe"] for tid, f in figures["tests"].items()},
        }
        Path(args.write_fixture).parent.mkdir(parents=True, exist_ok=True)
        Path(args.write_fixture).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return run.finish(rows(figures), args.json)


if __name__ == "__main__":
    sys.exit(main())
