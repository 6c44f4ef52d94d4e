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
still measured. The three are the frame's own where they can be: the mean
cosine exact by :mod:`~isoeat.diagnostics.frame_cosine`, IsoScore and the
top-PC share from the frame's whole covariance by
:mod:`~isoeat.diagnostics.frame_spectrum`; a frame over the budget gives the
sample's top-PC share with its SE, and a threshold within
:data:`BORDERLINE_SE` (2) SE of it marks the verdict *borderline*
(``IsotropyCheck.borderline``; the flag itself is unchanged). Passing is no
guarantee: the paper's word2vec (0.059) still changed 3 of 10 conclusions
(§5.4), so the calibrated column is shown anyway.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .frames import paper_corpus, sentence_corpus

__all__ = ["MEAN_COSINE_MAX", "ISOSCORE_MIN", "TOP_PC_FACTOR", "BORDERLINE_SE", "VERDICTS", "IsotropyCheck",
           "isotropy_check", "check_from_record", "isotropy_lines", "rank_limited"]

#: Mean pairwise cosine at or above this is anisotropic.
MEAN_COSINE_MAX = 0.10
#: IsoScore strictly below this is anisotropic.
ISOSCORE_MIN = 0.5
#: A top-PC share of variance at or above TOP_PC_FACTOR / d is anisotropic.
TOP_PC_FACTOR = 5.0
#: A sampled top-PC share within this many SEs of its threshold (inclusive) is borderline.
BORDERLINE_SE = 2.0
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
    top_pc_se: float | None = None
    borderline: tuple[str, ...] = ()

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
                   n_samples: Any = None, top_pc_se: Any = None) -> IsotropyCheck:
    """Flag each measure against its threshold (module docstring) and give the verdict.

    ``n_samples``: the vectors IsoScore and the top-PC share were computed on; at most ``dim`` of them
    leaves both undetermined (``undetermined``, ``note``). ``top_pc_se``: the sampling SE of a sampled
    top-PC share (0 or None: exact); a threshold within :data:`BORDERLINE_SE` (2) SE of the share, inclusive,
    marks that measure ``borderline`` (its flag is kept; the printed line says so).

    Examples
    --------
    >>> isotropy_check(0.10, 0.9, 0.01, 50).flagged   # the mean-cosine bound is inclusive
    ('mean cosine',)
    >>> isotropy_check(0.0999, 0.5, 0.0999, 50).verdict  # IsoScore 0.5 and share < 5/50 pass
    'near-isotropic'
    >>> isotropy_check(0.01, 0.3, 0.2, 50, n_samples=50).verdict  # 50 vectors in 50 dimensions: rank <= 49
    'partly measured'
    >>> isotropy_check(0.01, 0.9, 0.11, 50, top_pc_se=0.005).borderline  # |0.11 - 5/50| <= 2 x 0.005
    ('top-PC share',)
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
    se = _finite(top_pc_se)
    se = se if se is not None and se > 0 else None
    near = s is not None and d is not None and se is not None and _near_threshold(s, d, se)
    return IsotropyCheck(m, i, s, d, flagged, unknown, verdict, _RECOMMEND[verdict], undetermined, note,
                         se, ("top-PC share",) if near else ())


def _near_threshold(share: float, dim: int, se: float) -> bool:
    """``|share - TOP_PC_FACTOR / dim| <= BORDERLINE_SE * se``, the share and SE read as the decimals they print
    as (``Fraction(str(.))``, as :func:`isoeat.labels.call_holds`) and 5/d exact: inclusive at the bound, where
    float arithmetic can land a hair beyond it (0.098 against 0.1 - 2 x 0.001)."""
    from fractions import Fraction

    def q(x: float) -> Fraction:
        return Fraction(str(x))

    return abs(q(share) - q(TOP_PC_FACTOR) / dim) <= q(BORDERLINE_SE) * q(se)


def check_from_record(rec: dict | None) -> IsotropyCheck:
    """An anisotropy record's check (``AnisotropyResult.to_dict()``, an ``anisotropy.csv`` row); None: not measured."""
    rec = rec or {}
    evr = rec.get("explained_variance_ratio") or []
    exact = rec.get("spectrum_method") == "exact" and (rec.get("frame_size") or 0) > (rec.get("n_samples") or 0)
    return isotropy_check(rec.get("mean_cosine"), rec.get("isoscore"), evr[0] if len(evr) else None, rec.get("dim"),
                          rec.get("frame_size") if exact else rec.get("n_samples"), rec.get("top_pc_share_se"))


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
        if name in c.borderline:
            return f"{mark[name in c.flagged]}, borderline (threshold within {BORDERLINE_SE:g} SE)"
        return mark[None] if name in c.unknown else mark[name in c.flagged]

    se_text = f" ± {c.top_pc_se:.4f} (SE)" if c.top_pc_se is not None else ""
    head = f"Isotropy check, {model} raw space: {c.verdict}" + (", borderline" if c.borderline else "")
    if raw and raw.get("n_samples"):
        n, size = raw["n_samples"], raw.get("frame_size") or 0
        frame = raw.get("frame") or "reference"
        sampling = raw.get("sampling") or ""
        corpus = paper_corpus(sampling) if frame == "paper" else None
        sentences = sentence_corpus(sampling) if frame == "paper" and not corpus else None
        words = (f"frame paper: vocabulary items of {corpus};" if corpus else
                 f"frame paper: word vectors of reference sentences of corpus {sentences};" if sentences else
                 f"{frame_words(frame)}:")
        cos_exact = raw.get("cosine_method") == "exact" and size > n
        spec_exact = raw.get("spectrum_method", "exact") == "exact" and size > n and "sample_isoscore" in raw
        head += f" ({words} " + (
            f"mean cosine, IsoScore and top-PC share exact over its {size:,} vectors)" if cos_exact and spec_exact
            else f"mean cosine exact over its {size:,} vectors; IsoScore and top-PC share of {n:,} sampled)"
            if cos_exact else f"{n:,} sampled vectors)")
    lines = [head + ".",
             f"  mean cosine {_value(c.mean_cosine, '.3f')} (anisotropic if >= {MEAN_COSINE_MAX:g}): "
             f"{state('mean cosine')}; IsoScore {_value(c.isoscore, '.3f')} (if < {ISOSCORE_MIN:g}): "
             f"{state('IsoScore')}; top-PC share {_value(c.top_pc_share, '.4f')}{se_text} "
             f"(if >= {TOP_PC_FACTOR:g}/d = {thr}): "
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
