"""isoeat's multiclass MAC and RNSB beside WEFE's on the bundled GloVe vectors.

Looks the words of three n-group tests up in glove-6b-50d (the 3 x 10 groups of ``benchmarks/ngroup.py`` against
2 and 3 attribute sets, and a 3 x 3 one against 2 x 3), writes their vectors to a JSON file, runs
``benchmarks/_wefe_ngroup.py`` under the Python that has WEFE (``--peer-python``, default
``/work/venv-peers/bin/python``; WEFE cannot share isoeat's environment), and compares:

* MAC: WEFE's ``MAC`` with its defaults; must agree to 1e-9 (both average the same float64 cosine distances).
* RNSB: WEFE's ``RNSB`` with the logistic regression isoeat fits (every pole word, no holdout, ``C = 1``,
  unpenalised intercept, fitted to its optimum: scikit-learn's ``newton-cholesky`` at ``tol = 1e-12``); must agree
  to 1e-7 relative. WEFE's default RNSB (``liblinear``, which penalises the intercept too, trained on a random
  stratified 80% of the pole words, ``random_state=0`` here) is printed beside it and not compared: it is another
  estimator, not another rounding.

Prints the comparison and exits 1 on a mismatch; exits 0 with one line when the peer Python or WEFE is missing.
``--write-fixture PATH`` also writes the small 3 x 3 test's vectors and WEFE's numbers, with this command as
provenance (``tests/data/wefe_ngroup.json``, read by ``tests/test_ngroup.py``).

Usage:  python benchmarks/peers_ngroup.py [--peer-python PATH] [--write-fixture PATH]
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SMALL = {
    "id": "small",
    "targets": {
        "christian": ["church", "bible", "priest"],
        "muslim": ["mosque", "quran", "imam"],
        "jewish": ["synagogue", "torah", "rabbi"],
    },
    "attributes": {"pleasant": ["love", "peace", "joy"], "unpleasant": ["hatred", "war", "agony"]},
}
MAC_ABS = 1e-9
RNSB_REL = 1e-7


def _tests() -> list[dict]:
    sys.path.insert(0, str(HERE))
    from ngroup import GROUPS, REGIONS, VALENCE

    return [
        SMALL,
        {"id": "valence", "targets": GROUPS, "attributes": VALENCE},
        {"id": "regions", "targets": GROUPS, "attributes": REGIONS},
    ]


def _vectors(tests: list[dict]) -> dict[str, list[float]]:
    import isoeat

    model = isoeat.load_model("glove-6b-50d")
    words = sorted({w for t in tests for part in ("targets", "attributes") for ws in t[part].values() for w in ws})
    lk = model.lookup(words)
    if lk.missing:
        raise SystemExit(f"not in glove-6b-50d: {lk.missing}")
    return {w: [float(x) for x in v] for w, v in zip(lk.found, lk.vectors.astype("float64"))}


def ours(test: dict, vectors: dict) -> dict:
    """isoeat's multiclass MAC and RNSB of ``test`` on ``vectors`` (word -> list of floats)."""
    import numpy as np

    from isoeat.metrics.multiclass import mac_multiclass, rnsb_multiclass

    T = [np.array([vectors[w] for w in ws]) for ws in test["targets"].values()]
    A = [np.array([vectors[w] for w in ws]) for ws in test["attributes"].values()]
    out = {"mac": mac_multiclass(T, A).estimate}
    if len(A) == 2:
        out["rnsb"] = rnsb_multiclass(T, A).estimate
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer-python", default="/work/venv-peers/bin/python", help="a Python with WEFE")
    ap.add_argument("--write-fixture", metavar="PATH", default=None, help="write the small test's fixture here")
    args = ap.parse_args()
    if not Path(args.peer_python).exists():
        print(f"peer Python {args.peer_python} not found: nothing compared")
        return 0
    tests = _tests()
    vectors = _vectors(tests)
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.json", Path(tmp) / "out.json"
        src.write_text(json.dumps({"vectors": vectors, "tests": tests}), encoding="utf-8")
        done = subprocess.run(
            [args.peer_python, str(HERE / "_wefe_ngroup.py"), str(src), str(dst)], capture_output=True, text=True
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["?"])[-1]
            if "No module named 'wefe'" in done.stderr:
                print(f"WEFE is not importable by {args.peer_python}: nothing compared")
                return 0
            print(f"the peer script failed: {last}")
            return 1
        peer = json.loads(dst.read_text(encoding="utf-8"))
    print(f"WEFE {peer['wefe']} (scikit-learn {peer['scikit-learn']}, numpy {peer['numpy']}) vs isoeat on glove-6b-50d")
    print(f"{'test':8}  {'metric':6}  {'isoeat':>20}  {'WEFE':>20}  {'difference':>10}  {'WEFE default RNSB':>18}")
    bad = []
    for t, p in zip(tests, peer["results"]):
        mine = ours(t, vectors)
        for name in ("mac", "rnsb"):
            if name not in mine:
                continue
            diff = abs(mine[name] - p[name])
            ok = diff <= (MAC_ABS if name == "mac" else RNSB_REL * abs(p[name]))
            extra = f"{p['rnsb_wefe_default']:.6f}" if name == "rnsb" else ""
            print(
                f"{t['id']:8}  {name:6}  {mine[name]:20.15f}  {p[name]:20.15f}  {diff:10.1e}  {extra:>18}"
                + ("" if ok else "   MISMATCH")
            )
            if not ok:
                bad.append(f"{t['id']} {name}")
    if args.write_fixture:
        small = peer["results"][0]
        fixture = {
            "provenance": "python benchmarks/peers_ngroup.py --write-fixture "
            + shlex.quote(args.write_fixture)
            + f" (WEFE {peer['wefe']}, scikit-learn {peer['scikit-learn']}, numpy {peer['numpy']}; vectors "
            "from isoeat's bundled glove-6b-50d; WEFE's numbers computed by benchmarks/_wefe_ngroup.py)",
            "test": SMALL,
            "vectors": {
                w: vectors[w] for ws in (*SMALL["targets"].values(), *SMALL["attributes"].values()) for w in ws
            },
            "wefe": small,
        }
        Path(args.write_fixture).write_text(json.dumps(fixture, indent=1) + "\n", encoding="utf-8")
        print(f"fixture written to {args.write_fixture}")
    if bad:
        print("MISMATCH: " + ", ".join(bad))
        return 1
    print(f"all agree (MAC to {MAC_ABS:g}, RNSB to {RNSB_REL:g} relative)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
