"""The layer profile: anisotropy and WEAT d, raw and calibrated, for every layer of an ``hf:`` model.

Every layer comes from the same forward passes
(:class:`isoeat.backends._layers.LayerSweep`). Per layer:

* anisotropy of the test words' vectors (the union of X, Y, A and B as the
  encoder gives them, duplicates once): the mean pairwise cosine and the
  IsoScore (:func:`isoeat.diagnostics.cosine_stats`,
  :func:`isoeat.diagnostics.isoscore`), in the raw space and after the
  layer's calibrator;
* per test, d raw and calibrated, their p, Δd and the change class (the
  :class:`~isoeat.experiments.compare.Comparison` of that layer).

``isoeat run --layers`` builds the rows from its experiment folder
(:func:`profile_rows`) and writes them with :func:`write_profile`;
:func:`layer_profile` is the in-memory Python API.

In a CONFIG grid, :class:`SharedLayers` serves the ``hf:`` model entries that
differ only in their layer (``options: {layer: L}`` or ``layer: L``) as views of
one sweep, so the grid runs one set of forward passes for all of them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._types import kind_of, n_layers_of, name_of
from ..reporting.layer_section import PROFILE_COLUMNS

__all__ = ["PROFILE_COLUMNS", "SharedLayers", "test_words", "word_anisotropy", "profile_rows", "profile_table",
           "write_profile", "layer_profile"]



def test_words(tests: Sequence[Any]) -> list[str]:
    """The words of every set of ``tests``, each once, in order."""
    seen: dict[str, None] = {}
    for t in tests:
        for ws in t.sets().values():
            seen.update(dict.fromkeys(ws.words))
    return list(seen)


def word_anisotropy(vectors: np.ndarray, calibrator: Any) -> dict[str, float]:
    """Mean pairwise cosine and IsoScore of ``vectors``, raw and after ``calibrator.transform``."""
    from ..diagnostics import cosine_stats, isoscore

    X = np.asarray(vectors, dtype=np.float64)
    Z = np.asarray(calibrator.transform(X), dtype=np.float64)
    return {"mean_cosine_raw": cosine_stats(X)[0], "mean_cosine_calibrated": cosine_stats(Z)[0],
            "isoscore_raw": isoscore(X), "isoscore_calibrated": isoscore(Z), "n_words": int(X.shape[0])}


def profile_rows(comparisons: Mapping[int, Any], anisotropy: Mapping[int, Mapping[str, float]], *,
                 model: str) -> list[dict[str, Any]]:
    """Tidy rows: one per layer and test, with the layer's anisotropy repeated on each of its rows.

    ``comparisons[layer]`` is that layer's :class:`~isoeat.experiments.compare.Comparison`;
    ``anisotropy[layer]`` is :func:`word_anisotropy` of its test words.
    """
    rows = []
    for layer in comparisons:
        comp, an = comparisons[layer], anisotropy[layer]
        for r in comp.rows:
            rows.append({"model": model, "layer": int(layer), "calibration": comp.calibration, "test": r.test,
                         "bias_type": r.bias_type, "d_raw": r.raw.effect_size, "p_raw": r.raw.p_value,
                         "d_calibrated": r.calibrated.effect_size, "p_calibrated": r.calibrated.p_value,
                         "delta_d": r.delta_d, "change": r.change,
                         **{k: an[k] for k in PROFILE_COLUMNS[11:]}})
    return rows


def _num(x: Any, fmt: str = "{:+.2f}") -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt.format(x)


def profile_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The profile as text: anisotropy per layer, then d raw → calibrated per test (rows) and layer (columns)."""
    if not rows:
        return "layer profile: no rows"
    layers = list(dict.fromkeys(r["layer"] for r in rows))
    tests = list(dict.fromkeys(r["test"] for r in rows))
    first = {r["layer"]: r for r in rows}
    r0 = rows[0]
    lines = [f"layer profile: {r0['model']}, raw vs {r0['calibration']} (anisotropy of the {r0['n_words']} test "
             "words' vectors)",
             f"{'layer':>5}  {'mean cos raw':>12}  {'calibrated':>10}  {'IsoScore raw':>12}  {'calibrated':>10}"]
    for layer in layers:
        a = first[layer]
        lines.append(f"{layer:>5}  {_num(a['mean_cosine_raw'], '{:.3f}'):>12}  "
                     f"{_num(a['mean_cosine_calibrated'], '{:.3f}'):>10}  {_num(a['isoscore_raw'], '{:.3f}'):>12}  "
                     f"{_num(a['isoscore_calibrated'], '{:.3f}'):>10}")
    by = {(r["test"], r["layer"]): r for r in rows}
    width = max(5, *(len(t) for t in tests))
    lines += ["", "d raw -> calibrated (* change class not Stable)",
              f"{'test':<{width}}  " + "  ".join(f"{'L' + str(layer):>13}" for layer in layers)]
    for t in tests:
        cells = []
        for layer in layers:
            r = by.get((t, layer))
            cells.append(f"{'':>13}" if r is None else
                         format(_num(r["d_raw"]) + "->" + _num(r["d_calibrated"])
                                + ("*" if r["change"] != "Stable" else " "), ">13"))
        lines.append(f"{t:<{width}}  " + "  ".join(cells))
    return "\n".join(lines)


def write_profile(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Write the rows as CSV (columns :data:`PROFILE_COLUMNS`), atomically."""
    from .._io import atomic_write_text
    from .._records import records_to_csv

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = records_to_csv([{k: r.get(k) for k in PROFILE_COLUMNS} for r in rows])
    atomic_write_text(path, text)
    return path


def layer_profile(model: Any, tests: Sequence[Any] | None = None, *, layers: Any = "all", calibration: str = "zca",
                  n_reference: int = 100_000, **compare_kwargs: Any) -> list[dict[str, Any]]:
    """Anisotropy and d raw vs calibrated for every layer in ``layers``, from one sweep of forward passes.

    Parameters
    ----------
    model : TransformerEncoder
        An ``hf:`` encoder (e.g. ``load_model("minilm")``); its own layer is not used.
    tests : sequence, optional
        Test ids or tests (default W1..W10).
    layers : "all", str or sequence of int
        Hidden-state indices (see :func:`isoeat.backends._layers.parse_layers`).
    calibration, n_reference, **compare_kwargs
        As :func:`isoeat.experiments.compare.compare_calibration` (one calibrator fitted per layer).

    Returns
    -------
    list of dict
        The :data:`PROFILE_COLUMNS` rows (``pandas.DataFrame(rows)`` for a frame).
    """
    from .._errors import ConfigError
    from .._types import LayeredModel
    from ..wordsets import resolve_tests
    from .compare import compare_calibration

    if not isinstance(model, LayeredModel):
        raise ConfigError(f"layers: only hf: models (and minilm) have layers; {name_of(model, str(model))!r} "
                          "has none")
    resolved = list(tests) if tests is not None and not isinstance(tests, str) and \
        not all(isinstance(t, str) for t in tests) else resolve_tests(tests)
    from ..calibration import fit_calibrator

    sweep = model.layer_sweep(layers)
    comps, aniso = {}, {}
    for layer, view in sweep.items():
        cal = fit_calibrator(view, calibration, n_reference=n_reference)
        comps[layer] = compare_calibration(view, resolved, calibration=cal, **compare_kwargs)
        aniso[layer] = word_anisotropy(view.lookup(test_words(resolved)).vectors, cal)
    return profile_rows(comps, aniso, model=name_of(model))


def _layers_per_sweep(dim: Any) -> int:
    """How many layers of a ``dim``-dimensional model one grid sweep takes (0 or 1: none shared)."""
    from ..backends import _layers

    if not isinstance(dim, int) or dim < 1:
        return 1
    return max(1, (_layers.LAYERS_MEMORY // 2) // _layers.sweep_bytes(1, 0, dim))


def _key_part(value: Any) -> Any:
    """A kwargs value as part of a grouping key: plain values as they are, objects by identity."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return f"<object {type(value).__name__} {id(value)}>"


class SharedLayers:
    """The ``hf:`` models of a grid that differ only in their layer, served as views of one layer sweep.

    Two model entries share a sweep when ``load_model`` is called with the same
    spec and the same keyword arguments but for ``layer``, their encoders know
    their number of layers (from the folder's config) and their layers are
    distinct; every other entry is left to the runner (``get`` returns None).
    A group is split into sweeps whose accumulators (``2 d^2`` doubles per
    layer) take at most half of ``LAYERS_MEMORY``, so sharing never makes a
    grid fail a memory check that its separate entries pass.
    A view gives the numbers of a single-layer encoder (to 1e-6,
    tests/test_layers.py) and has its fingerprint, so cells, calibrators and
    their reuse are unchanged; only the forward passes are shared. Building
    this reads each contextual entry's config file, nothing more; an entry
    that cannot be built is left to the runner, which reports it.

    Parameters
    ----------
    config : ExperimentConfig
    skip : iterable of str
        Labels whose models the caller gives itself.
    """

    def __init__(self, config: Any, skip: Any = ()) -> None:
        from .cells import load_model_for, model_kwargs

        skip = set(skip)
        groups: dict[Any, list[tuple[str, Any]]] = {}
        for mspec in config.models:
            if mspec.is_static or mspec.label in skip:
                continue
            try:
                enc = load_model_for(mspec, config)
                kwargs = model_kwargs(mspec, config)
            except Exception:  # noqa: BLE001 - the runner loads it again and reports the error per cell
                continue
            if kind_of(enc) != "transformer" or n_layers_of(enc) is None:  # n_layers_of: a LayeredModel
                continue
            key = (type(enc).__name__, mspec.spec,
                   tuple(sorted((k, _key_part(v)) for k, v in kwargs.items() if k != "layer")))
            groups.setdefault(key, []).append((mspec.label, enc))
        self._views: dict[str, Any] = {}
        self.sweeps: list[Any] = []
        for members in groups.values():
            layers = [enc.layer for _, enc in members]
            if len(members) < 2 or len(set(layers)) != len(layers):
                continue
            # a sweep's accumulators take 2 d^2 doubles per layer: groups of at most half the memory budget's worth
            size = _layers_per_sweep(getattr(members[0][1], "_dim", None))
            for at in range(0, len(members), size):
                part = members[at:at + size]
                if len(part) < 2:
                    continue
                sweep = part[0][1].layer_sweep([enc.layer for _, enc in part])
                self.sweeps.append(sweep)
                for label, enc in part:
                    self._views[label] = sweep[enc.layer]

    def get(self, label: str) -> Any:
        """The view of the model labelled ``label`` (handed out once), or None when it shares no sweep."""
        return self._views.pop(label, None)

    def __len__(self) -> int:
        return len(self._views)
