"""The registry of bias metrics: name, citation, sign, p-value kind, options, formula.

Each entry is a :class:`MetricSpec`; :data:`METRICS` is an
:class:`isoeat._registry.Registry` (case-insensitive, with aliases such as
``direct_bias``), so an unknown name is answered with a did-you-mean.

Options (keywords of :func:`isoeat.metric` beyond the common ones) and the
metrics that take them:

=================== ============================== ======================================
option              default                        metrics
=================== ============================== ======================================
``alternative``     ``"two-sided"``                RND, RIPA, SemAxis, NAS (permutation p)
``method``          ``"auto"``                     RND, RIPA, SemAxis, NAS
``n_permutations``  100_000                        RND, RIPA, SemAxis, NAS
``pairs``           ``None`` (see ``_pairs``)      RIPA, direct bias, SemAxis
``c``               1.0                            direct bias (DirectBias_c)
``C``               1.0                            RNSB (inverse L2 strength)
``ci``              ``False``                      every metric but RNSB (see ``intervals``)
``ci_method``       ``"auto"``                     every metric but RNSB
``bootstrap``       0 (no interval)                every metric but RNSB (an interval; resamples of ``percentile``)
``ci_level``        0.95                           every metric but RNSB
=================== ============================== ======================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import ConfigError
from .._limits import MAX_RESAMPLES
from .._registry import Registry
from .._validate import check_bool, check_choice, check_int, check_real
from . import formulas as F

__all__ = ["MetricSpec", "METRICS", "metric_names", "OPTION_DEFAULTS", "METHODS", "check_options", "CI_METHODS",
           "default_method", "resolve_ci_method"]

_PERMUTATION = ("alternative", "method", "n_permutations")
#: Interval options (:mod:`isoeat.metrics.intervals`; not RNSB: a resample would refit its classifier).
_INTERVAL = ("ci", "ci_method", "bootstrap", "ci_level")

#: ``method`` of the permutation p (see :func:`isoeat.stats.permutation.partition_test`).
METHODS = ("auto", "exact", "certified", "monte-carlo")

#: Most bootstrap resamples of a metric interval (their estimates are held: 8 bytes each, 80 MB here).
MAX_BOOTSTRAP = MAX_RESAMPLES  # the one bound of resamples (_limits)

#: Default value of every metric option.
OPTION_DEFAULTS: dict[str, Any] = {
    "alternative": "two-sided", "method": "auto", "n_permutations": 100_000, "pairs": None, "c": 1.0, "C": 1.0,
    "ci": False, "ci_method": "auto", "bootstrap": 0, "ci_level": 0.95,
}


def _summands(scores: F.Scores, options: dict[str, Any]) -> np.ndarray:
    """The per-word values the estimate averages (MAC, RND, RIPA, SemAxis, NAS)."""
    return scores.per_word


def _direct_bias_summands(scores: F.Scores, options: dict[str, Any]) -> np.ndarray:
    r"""Direct bias averages :math:`|\cos(w, g)|^c`, not the signed projection it reports per word."""
    return scores.extra["terms"]


@dataclass(frozen=True)
class Inputs:
    """Vectors a formula reads: targets ``W = [X; Y]`` (``n_x`` X rows first), poles, defining pairs."""

    W: np.ndarray
    n_x: int
    A: np.ndarray
    B: np.ndarray
    P1: np.ndarray | None = None
    P2: np.ndarray | None = None


@dataclass(frozen=True)
class MetricSpec:
    r"""One registered metric.

    Attributes
    ----------
    name, title, citation : str
    signed : bool
        Estimate flips sign when X and Y are swapped (and has a permutation p).
    p_value : str
        ``"permutation"``, ``"spearman"`` or ``"none"`` (not defined in the literature).
    pairs : str
        ``"required"`` (RIPA, direct bias), ``"optional"`` (SemAxis: poles A and B
        unless pairs are given) or ``""``.
    options : tuple of str
        Metric-specific options (see the module docstring).
    direction : str
        What a positive estimate means, in words.
    compute : callable
        ``compute(inputs, options) -> formulas.Scores``.
    summands : callable or None
        ``summands(scores, options)``: the per-word values :math:`t(w)` whose
        mean the estimate is (signed: :math:`\operatorname{mean}_X t -
        \operatorname{mean}_Y t`; unsigned: the mean over :math:`X\cup Y`),
        each depending on its word and the poles only; ``None`` where the
        estimate is no such mean (ECT's rank correlation, RNSB's normalised KL).
    """

    name: str
    title: str
    citation: str
    signed: bool
    p_value: str
    pairs: str
    options: tuple[str, ...]
    direction: str
    compute: Callable[[Inputs, dict[str, Any]], F.Scores]
    summands: Callable[[F.Scores, dict[str, Any]], np.ndarray] | None = None

    def settings(self, options: dict[str, Any]) -> str:
        """The options that shape the value, as text for the record (``"c=1"``)."""
        return ", ".join(f"{k}={options[k]:g}" for k in ("c", "C") if k in self.options)


def _required_pairs(inp: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """The defining pairs' vectors, of a metric that requires them (resolved before it is computed)."""
    assert inp.P1 is not None and inp.P2 is not None, "the pairs are resolved before a metric that requires them"
    return inp.P1, inp.P2


def _pair_vectors(inp: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """The defining pairs' vectors, or the poles A and B when no pairs were resolved (SemAxis)."""
    return _required_pairs(inp) if inp.P1 is not None else (inp.A, inp.B)


_SPECS = (
    MetricSpec("mac", "mean average cosine distance", "Manzini et al. 2019, NAACL", False, "none", "", _INTERVAL,
               "larger: targets farther from the attribute words (a distance, not a direction)",
               lambda i, o: F.mac(i.W, i.A, i.B), _summands),
    MetricSpec("rnd", "relative norm distance", "Garg et al. 2018, PNAS", True, "permutation", "",
               _PERMUTATION + _INTERVAL,
               "negative: X nearer A (relative to B) than Y is",
               lambda i, o: F.rnd(i.W, i.A, i.B, i.n_x), _summands),
    MetricSpec("ect", "embedding coherence test (Spearman rho)", "Dev & Phillips 2019, AISTATS", False, "spearman",
               "", _INTERVAL, "1: the targets rank alike against A and B (coherent); lower: less coherent",
               lambda i, o: F.ect(i.W, i.A, i.B)),
    MetricSpec("ripa", "relational inner product association", "Ethayarajh et al. 2019, ACL", True, "permutation",
               "required", _PERMUTATION + ("pairs",) + _INTERVAL,
               "positive: X lies further towards the first pair words than Y",
               lambda i, o: F.ripa(i.W, *_required_pairs(i), i.n_x), _summands),
    MetricSpec("semaxis", "SemAxis score", "An et al. 2018, ACL", True, "permutation", "optional",
               _PERMUTATION + ("pairs",) + _INTERVAL, "positive: X nearer the A pole than Y",
               lambda i, o: F.semaxis(i.W, *_pair_vectors(i), i.n_x), _summands),
    MetricSpec("direct-bias", "direct bias DirectBias_c", "Bolukbasi et al. 2016, NeurIPS", False, "none",
               "required", ("pairs", "c") + _INTERVAL,
               "larger: targets more aligned with the pair direction (unsigned)",
               lambda i, o: F.direct_bias(i.W, *_required_pairs(i), c=o["c"]), _direct_bias_summands),
    MetricSpec("nas", "normalised association score", "Caliskan et al. 2017; sweater's nas", True, "permutation", "",
               _PERMUTATION + _INTERVAL, "positive: X nearer A (relative to B) than Y is",
               lambda i, o: F.nas(i.W, i.A, i.B, i.n_x), _summands),
    MetricSpec("rnsb", "relative negative sentiment bias (KL)", "Sweeney & Najafian 2019, ACL", False, "none", "",
               ("C",), "larger: the classifier's B probability is less uniform over the targets (unsigned)",
               lambda i, o: F.rnsb(i.W, i.A, i.B, C=o["C"])),
)

#: The registered metrics (case-insensitive names; ``direct_bias`` and ``directbias`` are aliases).
METRICS: Registry[MetricSpec] = Registry(
    "metric", {s.name: s for s in _SPECS}, aliases={"direct_bias": "direct-bias", "directbias": "direct-bias"},
    fold_case=True, cutoff=0.4,
)


def metric_names() -> tuple[str, ...]:
    """Names of the registered metrics, in the order of the docs.

    Examples
    --------
    >>> metric_names()
    ('mac', 'rnd', 'ect', 'ripa', 'semaxis', 'direct-bias', 'nas', 'rnsb')
    """
    return METRICS.names()


def check_options(specs: list[MetricSpec], options: dict[str, Any]) -> dict[str, Any]:
    """Validate metric options once; every option must apply to at least one of ``specs``.

    Returns the defaults updated with the given options (values checked).
    """
    from .._validate import suggest

    taken = {o for s in specs for o in s.options}
    for key in options:
        if key not in OPTION_DEFAULTS:
            raise ConfigError(f"unknown metric option {key!r}{suggest(key, list(OPTION_DEFAULTS))} "
                              f"(options: {', '.join(OPTION_DEFAULTS)})")
        if key not in taken:
            users = [s.name for s in METRICS.values() if key in s.options]
            raise ConfigError(f"option {key!r} does not apply to {', '.join(s.name for s in specs)} "
                              f"(it applies to {', '.join(users)})")
    out = {**OPTION_DEFAULTS, **options}
    check_choice("alternative", out["alternative"], ("greater", "less", "two-sided"))
    check_choice("method", out["method"], METHODS)
    out["n_permutations"] = check_int("n_permutations", out["n_permutations"], lo=1)
    out["c"] = check_real("c", out["c"], lo=0.0)
    out["C"] = check_real("C", out["C"], lo=0.0, lo_open=True)
    out["ci_level"] = check_real("ci_level", out["ci_level"], lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    out["bootstrap"] = check_int("bootstrap", out["bootstrap"], lo=0, hi=MAX_BOOTSTRAP)
    out["ci"] = check_bool("ci", out["ci"])
    _check_interval_options(specs, out, given=set(options))
    return out


#: ``ci_method`` values (:mod:`isoeat.metrics.intervals`).
CI_METHODS = ("auto", "studentized", "welch-t", "jackknife-z", "percentile")


#: The metrics whose per-word values are skewed (direct bias: |cos(w, g)|^c, folded at 0; NAS: a ratio per
#: word), so a t quantile undercovers (Welch 0.916-0.929 at 6-16 words per set) and the studentized bootstrap
#: is their default (0.940-0.966; benchmarks/coverage.py, docs/metrics.md).
_SKEWED = ("direct-bias", "nas")


def default_method(spec: MetricSpec) -> str:
    """The interval method ``ci_method="auto"`` picks (chosen by the coverage study, docs/metrics.md).

    ``"welch-t"`` for a mean of per-word values that are close to symmetric
    (MAC, RND, RIPA, SemAxis), ``"studentized"`` for skewed ones (direct bias,
    NAS), ``"jackknife-z"`` for ECT's rank correlation.
    """
    if spec.summands is None:
        return "jackknife-z"
    return "studentized" if spec.name in _SKEWED else "welch-t"


def resolve_ci_method(spec: MetricSpec, method: str) -> str:
    """The method ``method`` stands for on ``spec`` (``"auto"``: its default); one it cannot use is an error."""
    if method == "auto":
        return default_method(spec)
    if method in ("studentized", "welch-t") and spec.summands is None:
        raise ConfigError(f"ci_method {method!r} needs an estimate that is a mean of per-word values; {spec.name}'s "
                          f"is not (its method: {default_method(spec)})")
    if method == "jackknife-z" and spec.name != "ect":
        raise ConfigError(f"ci_method 'jackknife-z' is ECT's (a correlation); {spec.name}'s is "
                          f"{default_method(spec)}")
    return method


def _check_interval_options(specs: list[MetricSpec], out: dict[str, Any], given: set[str]) -> None:
    """Check the interval options of ``out`` (already typed) against every spec that takes them."""
    from .._validate import check_choice
    from ..stats.bootstrap import min_resamples

    check_choice("ci_method", out["ci_method"], CI_METHODS)
    for spec in specs:
        if "ci" in spec.options:
            resolve_ci_method(spec, out["ci_method"])
    need = min_resamples(out["ci_level"])
    if 0 < out["bootstrap"] < need:
        from .._errors import InvalidValueError

        raise InvalidValueError("bootstrap", f"0 (no interval) or at least {need} for a {out['ci_level']:g} interval",
                                repr(out["bootstrap"]))
    if not (out["ci"] or out["bootstrap"]):
        unused = [k for k in ("ci_level", "ci_method") if k in given]
        if unused:
            raise ConfigError(f"{' and '.join(unused)} given but no interval asked for: add ci=True (--ci), or drop "
                              f"{'them' if len(unused) > 1 else 'it'}")

