r"""The isotropy check before calibration (paper §6.1: "check isotropy first and calibrate when needed").

Three measures of the *raw* space, each against a stated threshold (the one
home of these thresholds; ``tests/test_isotropy_check.py`` tests each at its
boundary):

* **mean pairwise cosine** :math:`\bar c` — anisotropic when
  :math:`\bar c \ge` :data:`MEAN_COSINE_MAX` (0.10). Provenance: the paper's
  Table 2 has every whitened space at 0.001–0.040 and the most isotropic raw
  model (word2vec) at 0.059, the mildly anisotropic GloVe at 0.192.
* **IsoScore** :math:`\iota` (Rudman et al. 2022) — anisotropic when
  :math:`\iota <` :data:`ISOSCORE_MIN` (0.5). For variance spread evenly over
  :math:`k` of :math:`n` directions :math:`\iota = (k-1)/(n-1)` exactly, so
  below 0.5 means fewer than about half the dimensions are in use.
* **top-PC share** :math:`\lambda_1/\sum_j\lambda_j` of the covariance —
  anisotropic when it is at least :data:`TOP_PC_FACTOR` (5) times the share
  :math:`1/d` of a direction of an isotropic space, i.e.
  :math:`\lambda_1/\sum\lambda \ge 5/d` (at :math:`d \le 5`: only when one direction holds all the variance).

The verdict: ``"anisotropic"`` when any measure is flagged (recommendation:
calibrate, and report the calibrated result beside the raw one, paper §6.1
and its ethics statement), ``"near-isotropic"`` when all three pass,
``"partly measured"`` when none flags but one or two are unknown, ``"not
measured"`` when none is known. A measure that is NaN is "unknown" and
never flags. IsoScore and the top-PC share of :math:`N \le d` vectors are
**undetermined** (unknown, never flagged, said in one line): the sample
covariance of :math:`N` vectors has rank at most :math:`N-1 < d` whatever
the space, so they measure the sample's size (an isotropic Gaussian sample of
20 vectors in 50 dimensions has IsoScore at most 18/49); the mean cosine is
still measured. Passing is no guarantee: the paper's word2vec (0.059) still
changed 3 of 10 conclusions (§5.4), so the calibrated column is shown anyway.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .frames import paper_corpus, sentence_corpus

__all__ = ["MEAN_COSINE_MAX", "ISOSCORE_MIN", "TOP_PC_FACTOR", "VERDICTS", "IsotropyCheck", "isotropy_check",
           "check_from_record", "isotropy_lines", "rank_limited"]

#: Mean pairwise cosine at or above this is anisotropic.
MEAN_COSINE_MAX = 0.10
#: IsoScore strictly below this is anisotropic.
ISOSCORE_MIN = 0.5
#: A top-PC share of variance at or above TOP_PC_FACTOR / d is anisotropic.
TOP_PC_FACTOR = 5.0
#: The verdicts of :func:`isotropy_check`.
VERDICTS = ("anisotropic", "near-isotropic", "partly measured", "not measured")

_RECOMMEND = {
    "anisotropic": "calibrate before measuring, and report the calibrated result beside the raw one (paper §6.1)",
    "near-isotropic": ("calibration is not required by this check; the calibrated column still shows what it "
                       "would change (a near-isotropic space can still change conclusions, paper §5.4)"),
    "partly measured": ("no measured check flags anisotropy, but not every measure is known; calibrate and "
                        "report both when in doubt (paper §6.1)"),
    "not measured": "measure anisotropy first (an 'anisotropy:' section in the config; isoeat anisotropy)",
}


def _finite(x: Any) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class IsotropyCheck:
    """The three measures, which of them are flagged, the verdict and its recommendation."""

    mean_cosine: float | None
    isoscore: float | None
    top_pc_share: float | None
    dim: int | None
    flagged: tuple[str, ...]
    unknown: tuple[str, ...]
    verdict: str
    recommendation: str
    undetermined: tuple[str, ...] = ()
    note: str = ""

    @property
    def top_pc_threshold(self) -> float | None:
        """:data:`TOP_PC_FACTOR` / d (None when d is unknown)."""
        return TOP_PC_FACTOR / self.dim if self.dim else None


def rank_limited(n_samples: int, dim: int) -> bool:
    """Whether ``n_samples`` vectors are too few for IsoScore and the top-PC share in ``dim`` dimensions (N <= d).

    >>> rank_limited(50, 50), rank_limited(51, 50)
    (True, False)
    """
    return int(n_samples) <= int(dim)


def isotropy_check(mean_cosine: Any, isoscore: Any, top_pc_share: Any, dim: Any,
                   n_samples: Any = None) -> IsotropyCheck:
    """Flag each measure against its threshold (module docstring) and give the verdict.

    ``n_samples``: the vectors IsoScore and the top-PC share were computed on; at most ``dim`` of them
    leaves both undetermined (``undetermined``, ``note``).

    Examples
    --------
    >>> isotropy_check(0.10, 0.9, 0.01, 50).flagged   # the mean-cosine bound is inclusive
    ('mean cosine',)
    >>> isotropy_check(0.0999, 0.5, 0.0999, 50).verdict  # IsoScore 0.5 and share < 5/50 pass
    'near-isotropic'
    >>> isotropy_check(0.01, 0.3, 0.2, 50, n_samples=50).verdict  # 50 vectors in 50 dimensions: rank <= 49
    'partly measured'
    """
    m, i, s = _finite(mean_cosine), _finite(isoscore), _finite(top_pc_share)
    d = int(dim) if _finite(dim) is not None and float(dim) >= 1 else None
    n = int(n_samples) if _finite(n_samples) is not None else None
    undetermined: tuple[str, ...] = ()
    note = ""
    if d is not None and n is not None and rank_limited(n, d) and (i is not None or s is not None):
        undetermined, i, s = ("IsoScore", "top-PC share"), None, None
        note = (f"IsoScore and top-PC share undetermined: {n:,} vectors in {d:,} dimensions (N <= d) have a "
                f"covariance of rank at most {max(n - 1, 0):,} whatever the space; measure at least {d + 1:,} "
                "vectors")
    flags = {
        "mean cosine": None if m is None else m >= MEAN_COSINE_MAX,
        "IsoScore": None if i is None else i < ISOSCORE_MIN,
        "top-PC share": None if s is None or d is None else s >= TOP_PC_FACTOR / d,
    }
    flagged = tuple(k for k, v in flags.items() if v)
    unknown = tuple(k for k, v in flags.items() if v is None)
    verdict = ("anisotropic" if flagged else "not measured" if len(unknown) == len(flags)
               else "partly measured" if unknown else "near-isotropic")
    return IsotropyCheck(m, i, s, d, flagged, unknown, verdict, _RECOMMEND[verdict], undetermined, note)


def check_from_record(rec: dict | None) -> IsotropyCheck:
    """An anisotropy record's check (``AnisotropyResult.to_dict()``, an ``anisotropy.csv`` row); None: not measured."""
    rec = rec or {}
    evr = rec.get("explained_variance_ratio") or []
    return isotropy_check(rec.get("mean_cosine"), rec.get("isoscore"), evr[0] if len(evr) else None, rec.get("dim"),
                          rec.get("n_samples"))


def _value(x: float | None, fmt: str) -> str:
    return "n/a" if x is None else format(x, fmt)


def isotropy_lines(model: str, raw: dict | None, calibrated: dict | None = None, calibration: str = "") -> list[str]:
    """The check as text lines (printed by ``isoeat run`` above each table; the report shows the same lines).

    ``raw``/``calibrated``: anisotropy records of the raw and the calibrated space (either may be None).
    """
    c = check_from_record(raw)
    thr = "n/a" if c.top_pc_threshold is None else f"{c.top_pc_threshold:.3g}"
    mark = {True: "ANISOTROPIC", False: "ok", None: "n/a"}

    def state(name: str) -> str:
        if name in c.undetermined:
            return "undetermined (N <= d)"
        return mark[None] if name in c.unknown else mark[name in c.flagged]

    head = f"Isotropy check, {model} raw space: {c.verdict}"
    if raw and raw.get("n_samples"):
        n, size = raw["n_samples"], raw.get("frame_size") or 0
        frame = raw.get("frame") or "reference"
        sampling = raw.get("sampling") or ""
        corpus = paper_corpus(sampling) if frame == "paper" else None
        sentences = sentence_corpus(sampling) if frame == "paper" and not corpus else None
        words = (f"frame paper: vocabulary items of {corpus};" if corpus else
                 f"frame paper: word vectors of reference sentences of corpus {sentences};" if sentences else
                 f"{frame_words(frame)}:")
        head += f" ({words} " + (
            f"mean cosine exact over its {size:,} vectors; IsoScore and top-PC share of {n:,} sampled)"
            if raw.get("cosine_method") == "exact" and size > n else f"{n:,} sampled vectors)")
    lines = [head + ".",
             f"  mean cosine {_value(c.mean_cosine, '.3f')} (anisotropic if >= {MEAN_COSINE_MAX:g}): "
             f"{state('mean cosine')}; IsoScore {_value(c.isoscore, '.3f')} (if < {ISOSCORE_MIN:g}): "
             f"{state('IsoScore')}; top-PC share {_value(c.top_pc_share, '.4f')} (if >= {TOP_PC_FACTOR:g}/d = {thr}): "
             f"{state('top-PC share')}."]
    if c.note:
        lines.append(f"  {c.note}.")
    if calibrated:
        a = check_from_record(calibrated)
        lines.append(f"  after {calibration or 'calibration'}: mean cosine {_value(a.mean_cosine, '.3f')}, IsoScore "
                     f"{_value(a.isoscore, '.3f')}, top-PC share {_value(a.top_pc_share, '.4f')}.")
    lines.append(f"  Recommendation: {c.recommendation}.")
    return lines


def frame_words(frame: str) -> str:
    """A frame as printed beside a figure or verdict (:mod:`isoeat.diagnostics.frames`)."""
    return {"paper": "frame paper, the paper's protocol",
            "reference": "frame reference, the calibrator's reference sample"}.get(frame, f"frame {frame}")


def space_records(records: Any, model: str, raw_label: str, calibrated_label: str) -> tuple[dict | None, dict | None]:
    """The raw and the calibrated anisotropy record of ``model`` among ``records`` (None where absent)."""
    found = {r.get("calibration"): r for r in records or () if r.get("model") == model}
    return found.get(raw_label), found.get(calibrated_label)
