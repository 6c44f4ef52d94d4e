"""WEFE's multiclass MAC and RNSB on given vectors: the peer side of ``benchmarks/peers_ngroup.py``.

Runs under a Python that has WEFE (1.0.1 here: ``/work/venv-peers/bin/python``, numpy 1.26, scikit-learn,
gensim), never isoeat. Reads a JSON file ``{"vectors": {word: [floats]}, "tests": [{"id": ..., "targets":
{name: [words]}, "attributes": {name: [words]}}]}`` and writes, per test, WEFE's numbers:

* ``mac``: ``wefe.metrics.MAC().run_query(query, model)["result"]`` (WEFE's defaults);
* ``rnsb``: ``RNSB().run_query(..., estimator_params={"solver": "newton-cholesky", "C": 1.0, "tol": 1e-12,
  "max_iter": 10000}, holdout=False)``: the logistic regression fitted on every pole word to its optimum with an
  unpenalised intercept, the model isoeat fits (``isoeat.metrics.formulas.logistic_regression``);
* ``rnsb_wefe_default``: WEFE's own defaults with ``random_state=0`` (``solver="liblinear"``, which also
  penalises the intercept, ``holdout=True``: trained on a stratified 80% of the pole words), for the record: it
  differs from the first by design, not by rounding.

Usage:  /work/venv-peers/bin/python benchmarks/_wefe_ngroup.py IN.json OUT.json
"""

from __future__ import annotations

import json
import logging
import sys


def main(argv: list[str]) -> int:
    import gensim
    import numpy as np
    import sklearn
    import wefe
    from gensim.models import KeyedVectors
    from wefe.metrics import MAC, RNSB
    from wefe.query import Query
    from wefe.word_embedding_model import WordEmbeddingModel

    logging.disable(logging.WARNING)
    src, dst = argv
    with open(src, encoding="utf-8") as f:
        doc = json.load(f)
    words = list(doc["vectors"])
    vecs = np.array([doc["vectors"][w] for w in words], dtype=np.float64)
    kv = KeyedVectors(vector_size=vecs.shape[1], dtype=np.float64)
    kv.add_vectors(words, vecs)
    model = WordEmbeddingModel(kv, "given")
    out = []
    for t in doc["tests"]:
        q = Query(
            list(t["targets"].values()), list(t["attributes"].values()), list(t["targets"]), list(t["attributes"])
        )
        rec = {"id": t["id"], "mac": float(MAC().run_query(q, model)["result"])}
        if len(t["attributes"]) == 2:
            exact = {"solver": "newton-cholesky", "C": 1.0, "tol": 1e-12, "max_iter": 10000}
            rec["rnsb"] = float(RNSB().run_query(q, model, estimator_params=exact, holdout=False)["result"])
            rec["rnsb_wefe_default"] = float(RNSB().run_query(q, model, random_state=0)["result"])
        out.append(rec)
    res = {
        "wefe": wefe.__version__,
        "scikit-learn": sklearn.__version__,
        "gensim": gensim.__version__,
        "numpy": np.__version__,
        "results": out,
    }
    with open(dst, "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
