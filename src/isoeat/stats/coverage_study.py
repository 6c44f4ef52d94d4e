r"""The measured coverage of every interval isoeat prints, kept as data with the run that measured it.

An interval is offered with the coverage ``benchmarks/coverage.py`` measured
for its method at the design's set sizes: simulated data sets from
populations whose true value is known, the share of 95% intervals that
contain it. This module holds those numbers (copied from the benchmark's
output, its run named in :data:`METRIC_STUDY` and :data:`D_STUDY`) and looks
them up for the design at hand:

* the smaller target set :math:`n = \min(n_X, n_Y)` (and for d the smaller
  attribute set) picks the study's rows: the size itself when the study ran
  it, else the two sizes around it (the range over both), else the nearest
  size, said in a note (the study ran equal sets of 6 to 32 words);
* a level other than the study's 95% has no measured coverage (``nan``, said).

:func:`covers` is the rule a table applies: a range inside :data:`BAND` at
95% is printed as "95% CI"; any other is printed with its measured range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["BAND", "LEVEL", "Measured", "METRIC_STUDY", "METRIC_COVERAGE", "D_STUDY", "D_COVERAGE",
           "metric_coverage", "d_coverage", "covers", "coverage_text"]

#: The band a 95% interval's measured coverage must lie in to be printed as "95% CI".
BAND = (0.93, 0.97)
#: The level the study measured.
LEVEL = 0.95

_M_COMPARE = "benchmarks/coverage.py --part metrics --compare, seed 20261201, 1,000 data sets a design, 2026-12-04"
_M_STUDENTIZED = ("benchmarks/coverage.py --part metrics --methods studentized, seed 20261201, 1,000 data sets a "
                  "design of 10,000 resamples, 2026-12-04")
#: (metric, method) -> {target words per set: (lowest, highest coverage over effects and scenarios)}: the
#: ``--data`` output of the runs in :data:`METRIC_STUDY` (ECT's percentile: 200 data sets of 200 resamples).
METRIC_COVERAGE: dict[tuple[str, str], dict[int, tuple[float, float]]] = {
    ('mac', 'studentized'): {6: (0.933, 0.958), 8: (0.932, 0.961), 16: (0.935, 0.949), 25: (0.930, 0.958), 32: (0.943, 0.952)},
    ('rnd', 'studentized'): {6: (0.946, 0.962), 8: (0.944, 0.956), 16: (0.928, 0.955), 25: (0.944, 0.961), 32: (0.939, 0.964)},
    ('ripa', 'studentized'): {6: (0.933, 0.969), 8: (0.929, 0.956), 16: (0.925, 0.955), 25: (0.930, 0.961), 32: (0.914, 0.946)},
    ('semaxis', 'studentized'): {6: (0.951, 0.963), 8: (0.932, 0.953), 16: (0.921, 0.958), 25: (0.939, 0.960), 32: (0.934, 0.957)},
    ('direct-bias', 'studentized'): {6: (0.944, 0.966), 8: (0.943, 0.963), 16: (0.940, 0.951), 25: (0.946, 0.962), 32: (0.943, 0.961)},
    ('nas', 'studentized'): {6: (0.925, 0.968), 8: (0.938, 0.967), 16: (0.931, 0.959), 25: (0.940, 0.963), 32: (0.947, 0.957)},
    ('mac', 'welch-t'): {6: (0.935, 0.958), 8: (0.932, 0.965), 16: (0.940, 0.963), 25: (0.942, 0.954), 32: (0.937, 0.957)},
    ('mac', 'percentile'): {6: (0.869, 0.905), 8: (0.879, 0.917), 16: (0.918, 0.946), 25: (0.910, 0.938), 32: (0.929, 0.952)},
    ('rnd', 'welch-t'): {6: (0.948, 0.962), 8: (0.948, 0.961), 16: (0.950, 0.964), 25: (0.948, 0.961), 32: (0.944, 0.951)},
    ('rnd', 'percentile'): {6: (0.881, 0.905), 8: (0.890, 0.918), 16: (0.924, 0.944), 25: (0.921, 0.943), 32: (0.932, 0.951)},
    ('ect', 'jackknife-z'): {6: (0.782, 0.999), 8: (0.769, 0.992), 16: (0.845, 0.978), 25: (0.849, 0.985), 32: (0.895, 0.967)},
    ('ect', 'percentile'): {6: (0.525, 0.955), 8: (0.610, 0.965), 16: (0.760, 0.955), 25: (0.840, 0.950), 32: (0.880, 0.950)},
    ('ripa', 'welch-t'): {6: (0.938, 0.966), 8: (0.935, 0.964), 16: (0.939, 0.959), 25: (0.942, 0.958), 32: (0.940, 0.951)},
    ('ripa', 'percentile'): {6: (0.873, 0.900), 8: (0.889, 0.915), 16: (0.921, 0.931), 25: (0.915, 0.943), 32: (0.928, 0.941)},
    ('semaxis', 'welch-t'): {6: (0.948, 0.965), 8: (0.945, 0.960), 16: (0.948, 0.961), 25: (0.946, 0.962), 32: (0.933, 0.956)},
    ('semaxis', 'percentile'): {6: (0.870, 0.903), 8: (0.901, 0.920), 16: (0.920, 0.944), 25: (0.917, 0.942), 32: (0.928, 0.951)},
    ('direct-bias', 'welch-t'): {6: (0.916, 0.961), 8: (0.921, 0.956), 16: (0.918, 0.955), 25: (0.940, 0.965), 32: (0.938, 0.953)},
    ('direct-bias', 'percentile'): {6: (0.864, 0.899), 8: (0.865, 0.917), 16: (0.919, 0.941), 25: (0.928, 0.939), 32: (0.917, 0.953)},
    ('nas', 'welch-t'): {6: (0.923, 0.951), 8: (0.930, 0.953), 16: (0.939, 0.959), 25: (0.940, 0.956), 32: (0.929, 0.955)},
    ('nas', 'percentile'): {6: (0.858, 0.902), 8: (0.880, 0.914), 16: (0.906, 0.936), 25: (0.915, 0.944), 32: (0.921, 0.952)},
}
#: Provenance of each row of :data:`METRIC_COVERAGE`.
METRIC_STUDY: dict[tuple[str, str], str] = {
    key: _M_STUDENTIZED if key[1] == "studentized" else _M_COMPARE for key in METRIC_COVERAGE}
#: ECT's default re-measured (issue 45): the range over two independent runs (the seed above and 20261207; a
#: 16-word design measured 0.978 and a 25-word one 0.985 and 0.849 in the second, outside the first's range).
METRIC_STUDY[("ect", "jackknife-z")] = ("benchmarks/coverage.py --part metrics --metrics ect --methods jackknife-z, "
                                        "seeds 20261201 and 20261207, 1,000 data sets a design each, the range over "
                                        "both, 2026-12-07")

_D_BOOTSTRAP = ("benchmarks/coverage.py --part d --compare --replicates 600, seed 20261201, 1,000 resamples, "
                "2026-12-04")
_D_JACKKNIFE = "benchmarks/coverage.py --compare, seed 20261201, 2,000 data sets a cell, 2026-12-01"
#: Provenance of each row of :data:`D_COVERAGE`.
D_STUDY: dict[tuple[str, str], str] = {
    ("given-attributes", "percentile"): _D_BOOTSTRAP, ("given-attributes", "bca"): _D_BOOTSTRAP,
    ("populations", "percentile"): _D_BOOTSTRAP, ("populations", "bca"): _D_BOOTSTRAP,
    ("populations", "jackknife"): _D_JACKKNIFE,
}
#: (estimand, method) -> {(target, attribute words per set): (lowest, highest over effects and scenarios)}: the
#: methods of the d interval that are printed with a warning somewhere (the ``--data`` output of those runs;
#: the jackknife's from the table in docs/intervals.md).
D_COVERAGE: dict[tuple[str, str], dict[tuple[int, int], tuple[float, float]]] = {
    ("given-attributes", "percentile"): {
        (6, 8): (0.832, 0.908), (6, 25): (0.780, 0.915), (8, 8): (0.838, 0.912), (8, 25): (0.825, 0.938),
        (16, 8): (0.878, 0.945), (16, 25): (0.892, 0.937), (25, 8): (0.918, 0.952), (25, 25): (0.913, 0.942),
        (32, 8): (0.922, 0.940), (32, 25): (0.902, 0.948)},
    ("given-attributes", "bca"): {
        (6, 8): (0.885, 0.958), (6, 25): (0.853, 0.972), (8, 8): (0.875, 0.957), (8, 25): (0.887, 0.963),
        (16, 8): (0.918, 0.970), (16, 25): (0.927, 0.963), (25, 8): (0.938, 0.963), (25, 25): (0.932, 0.963),
        (32, 8): (0.932, 0.960), (32, 25): (0.920, 0.962)},
    ("populations", "percentile"): {
        (8, 8): (0.940, 0.977), (8, 25): (0.933, 0.965), (16, 8): (0.865, 0.983), (16, 25): (0.957, 0.975),
        (25, 8): (0.765, 0.982), (25, 25): (0.943, 0.970)},
    ("populations", "bca"): {
        (8, 8): (0.922, 0.963), (8, 25): (0.938, 0.975), (16, 8): (0.907, 0.970), (16, 25): (0.947, 0.968),
        (25, 8): (0.892, 0.957), (25, 25): (0.947, 0.967)},
    ("populations", "jackknife"): {
        (6, 7): (0.956, 0.987), (6, 8): (0.954, 0.982), (6, 25): (0.915, 0.929), (8, 7): (0.957, 0.983),
        (8, 8): (0.954, 0.975), (8, 25): (0.922, 0.942), (16, 7): (0.971, 0.982), (16, 8): (0.964, 0.979),
        (16, 25): (0.936, 0.951), (25, 7): (0.976, 0.986), (25, 8): (0.967, 0.983), (25, 25): (0.943, 0.961),
        (32, 7): (0.970, 0.989), (32, 8): (0.973, 0.981), (32, 25): (0.949, 0.962)},
}


@dataclass(frozen=True)
class Measured:
    """The coverage the study measured for one method at one design (``nan`` where it did not)."""

    low: float
    high: float
    sizes: str
    note: str = ""
    source: str = ""


def _around(sizes: list[int], n: int) -> tuple[list[int], str]:
    """The study's sizes that stand for ``n``, and a note when ``n`` lies outside them."""
    if n in sizes:
        return [n], ""
    below, above = [s for s in sizes if s < n], [s for s in sizes if s > n]
    if below and above:
        return [below[-1], above[0]], ""
    near = below[-1] if below else above[0]
    return [near], f"{n} words per set is outside the study's {sizes[0]}-{sizes[-1]}: the nearest ({near}) is quoted"


def _text(values: list[int]) -> str:
    return "-".join(str(v) for v in dict.fromkeys(values))


def metric_coverage(metric: str, method: str, n_x: int, n_y: int, level: float = LEVEL) -> Measured:
    """The coverage measured for ``method`` intervals on ``metric`` at ``n_x``, ``n_y`` target words.

    Examples
    --------
    >>> metric_coverage("mac", "welch-t", 8, 8, 0.9).note
    'coverage measured at the 95% level only'
    """
    rows = METRIC_COVERAGE.get((metric, method))
    if abs(level - LEVEL) > 1e-12:
        return Measured(math.nan, math.nan, "", f"coverage measured at the {LEVEL:.0%} level only")
    if not rows:
        return Measured(math.nan, math.nan, "", f"the coverage of {method} intervals on {metric} is not measured")
    pick, note = _around(sorted(rows), min(n_x, n_y))
    return Measured(min(rows[s][0] for s in pick), max(rows[s][1] for s in pick), _text(pick), note,
                    METRIC_STUDY[(metric, method)])


def d_coverage(estimand: str, method: str, n_x: int, n_y: int, n_a: int, n_b: int) -> Measured:
    """The coverage measured for ``method`` intervals on d (``estimand``) at these set sizes (95%)."""
    rows = D_COVERAGE.get((estimand, method))
    if not rows:
        return Measured(math.nan, math.nan, "", f"the coverage of {method} intervals ({estimand}) is not measured",
                        "")
    targets, attributes = sorted({t for t, _ in rows}), sorted({a for _, a in rows})
    pick_t, note_t = _around(targets, min(n_x, n_y))
    pick_a, note_a = _around(attributes, min(n_a, n_b))
    cells = [rows[(t, a)] for t in pick_t for a in pick_a if (t, a) in rows]
    note = "; ".join(n.replace("words per set", w) for n, w in ((note_t, "target words per set"),
                                                                (note_a, "attribute words per set")) if n)
    return Measured(min(c[0] for c in cells), max(c[1] for c in cells),
                    f"{_text(pick_t)} target and {_text(pick_a)} attribute words per set", note,
                    D_STUDY[(estimand, method)])


def covers(m: Measured) -> bool:
    """Whether a measured range lies inside :data:`BAND` (a 95% interval printed as such)."""
    return BAND[0] <= m.low and m.high <= BAND[1]


def coverage_text(m: Measured) -> str:
    """``"0.901-0.944"`` (``"not measured"`` when nan); three decimals, so that no range rounds into the band."""
    if math.isnan(m.low):
        return "not measured"
    return f"{m.low:.3f}-{m.high:.3f}" if round(m.low, 3) != round(m.high, 3) else f"{m.low:.3f}"
