"""The optional sections of an experiment config (``anisotropy``, ``similarity``, ``report``): specs and parsers.

Split from :mod:`isoeat.experiments.config` (which re-exports them); see docs/experiments.md for the keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .._errors import IsoeatError
from .._limits import MAX_DPI, MAX_RESAMPLES
from ..wordsets._safe_load import plain_flag
from ._config_check import _ANISO_KEYS, _FIG_FORMATS, _REPORT_KEYS, _SIM_KEYS, _Checker, _show, similarity_benchmarks


@dataclass(frozen=True)
class AnisotropySpec:
    """Experiment 1 (paper §4.3): anisotropy of ``sample`` reference vectors per (model, calibration).

    ``components``: principal components kept for Figure 2 (paper: 50).
    ``heatmap_size``: vectors shown in the Figure 1 heatmaps (the statistics use all ``sample``).
    ``frame``: the vectors sampled (:mod:`isoeat.diagnostics.frames`); ``paper``, the paper's protocol:
    tokens of the reference corpus (a static model: word tokens of WikiText-103, else WikiText-2, else the
    largest offline corpus; a contextual model: its reference sample's vectors). ``reference``: the
    calibrator's own reference sample (the earlier default; CHANGELOG).
    """

    sample: int = 2000
    components: int = 50
    heatmap_size: int = 300
    frame: str = "paper"


@dataclass(frozen=True)
class SimilaritySpec:
    """Experiment 2 (paper §4.3): Spearman rho on similarity benchmarks, paired bootstrap of the change."""

    benchmarks: tuple[str, ...] = ("ws353", "simlex999")
    bootstrap: int = 10_000


@dataclass(frozen=True)
class ReportSpec:
    """What ``isoeat report`` draws: per-test cosine heatmaps (``all``, ``none`` or test ids), formats, dpi."""

    test_heatmaps: str | tuple[str, ...] = "all"
    figure_formats: tuple[str, ...] = ("png", "pdf")
    dpi: int = 150



def _module_available(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _section(ck: _Checker, key: str, raw: Any, allowed: Sequence[str], module: str, expected: str
             ) -> dict | None:
    """An optional section: absent or false -> None, true -> defaults, else a mapping of ``allowed`` keys.

    The section needs ``module`` (an installation without it refuses the key).
    """
    raw = plain_flag(raw)
    if raw is None or raw is False:
        return None
    if raw is True:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ck.fail(key, f"expected {expected}; got {_show(raw)}")
    r = ck.keys(key, raw, allowed)
    if not _module_available(module):
        raise ck.fail(key, f"needs the module {module}, which this installation of isoeat "
                      "does not have; remove the key or update isoeat")
    return r


def _parse_anisotropy(ck: _Checker, raw: Any) -> AnisotropySpec | None:
    r = _section(ck, "anisotropy", raw, _ANISO_KEYS, "isoeat.diagnostics",
                 f"true, false or a mapping with keys {', '.join(_ANISO_KEYS)}")
    if r is None:
        return None
    lowest = {"sample": 10, "components": 1, "heatmap_size": 10}
    sizes: dict[str, Any] = {k: ck.integer(f"anisotropy.{k}", r[k], lo=lo) for k, lo in lowest.items() if k in r}
    spec = AnisotropySpec(**sizes)
    if "frame" in r:
        from ..diagnostics.frames import parse_frame

        try:
            parse_frame(r["frame"])
        except IsoeatError as exc:
            raise ck.fail("anisotropy.frame", str(exc)) from None
        spec = replace(spec, frame=str(r["frame"]).strip())
    return spec


def _parse_similarity(ck: _Checker, raw: Any) -> SimilaritySpec | None:
    if isinstance(raw, list) or (isinstance(raw, str) and not isinstance(plain_flag(raw), bool)):
        raw = {"benchmarks": raw}
    r = _section(ck, "similarity", raw, _SIM_KEYS, "isoeat.similarity",
                 f"a list of benchmarks such as [ws353, simlex999], or a mapping with keys {', '.join(_SIM_KEYS)}")
    if r is None:
        return None
    kw: dict[str, Any] = {}
    if "benchmarks" in r:
        names = ck.str_list("similarity.benchmarks", r["benchmarks"])
        known = similarity_benchmarks()
        for i, n in enumerate(names):
            if known and n not in known and not Path(n).suffix:
                ck.choice(f"similarity.benchmarks[{i}]", n, known)
        if len(set(names)) != len(names):
            raise ck.fail("similarity.benchmarks", "a benchmark is listed more than once")
        kw["benchmarks"] = tuple(names)
    if "bootstrap" in r:
        kw["bootstrap"] = ck.integer("similarity.bootstrap", r["bootstrap"], lo=0, hi=MAX_RESAMPLES)
    return SimilaritySpec(**kw)


def _parse_report(ck: _Checker, raw: Any, test_ids: list[str]) -> ReportSpec:
    if raw is None:
        return ReportSpec()
    r = ck.keys("report", raw, _REPORT_KEYS)
    kw: dict[str, Any] = {}
    if "test_heatmaps" in r:
        v = plain_flag(r["test_heatmaps"])
        if v in ("all", "none"):
            kw["test_heatmaps"] = v
        elif v is False:
            kw["test_heatmaps"] = "none"
        else:
            ids = ck.str_list("report.test_heatmaps", v)
            for i, t in enumerate(ids):
                ck.choice(f"report.test_heatmaps[{i}]", t, test_ids)
            kw["test_heatmaps"] = tuple(ids)
    if "figure_formats" in r:
        fm = ck.str_list("report.figure_formats", r["figure_formats"])
        for i, f in enumerate(fm):
            ck.choice(f"report.figure_formats[{i}]", f, _FIG_FORMATS)
        kw["figure_formats"] = tuple(fm)
    if "dpi" in r:
        kw["dpi"] = ck.integer("report.dpi", r["dpi"], lo=50, hi=MAX_DPI)
    return ReportSpec(**kw)
