"""Experiment configuration: one YAML file describing a grid of models x calibrations x tests.

The file is validated once, here, at the edge: every error names the key
(``settings.permutations``, ``models[2].family``), the value received and what
is allowed, and unknown keys are refused with a suggestion. The reference of
every key is ``docs/experiments.md``; :data:`EXAMPLE` is a complete example.

Examples
--------
>>> cfg = parse_config({"models": ["glove-6b-50d"], "tests": ["W6", "W7"]})
>>> [c.label for c in cfg.calibrations], cfg.settings.permutations
(['none', 'zca'], 100000)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .._errors import ConfigError, InvalidValueError, IsoeatError
from .._limits import MAX_RESAMPLES
from .._records import content_hash
from .._validate import check_bytes, check_path, show
from ..wordsets._safe_load import plain_scalar
from ._config_check import (  # noqa: F401 - _UniqueKeyLoader, similarity_benchmarks stay importable from here
    _ADJUST,
    _ALTERNATIVES,
    _ANISO_KEYS,
    _CAL_KEYS,
    _CI_METHODS,
    _FIG_FORMATS,
    _METHODS,
    _MODEL_KEYS,
    _REFERENCE_KEYS,
    _REPORT_KEYS,
    _SETTINGS_KEYS,
    _SIM_KEYS,
    _TOP_KEYS,
    _check_corpus,
    _Checker,
    _parse_metrics,
    _preflight_model,
    _show,
    _spec_kind,
    _UniqueKeyLoader,
    _where,
    read_yaml,
    similarity_benchmarks,
)
from ._config_sections import (  # noqa: F401 - the optional sections, importable from here
    AnisotropySpec,
    ReportSpec,
    SimilaritySpec,
    _parse_anisotropy,
    _parse_report,
    _parse_similarity,
)

__all__ = [
    "ExperimentConfig",
    "ModelSpec",
    "CalibrationSpec",
    "Settings",
    "ReferenceSettings",
    "AnisotropySpec",
    "SimilaritySpec",
    "ReportSpec",
    "load_config",
    "parse_config",
    "FAMILIES",
    "EXAMPLE",
]

#: The paper's families (§4.1; contrastive: unsupervised SimCSE) and supervised-contrastive (e.g. MiniLM), not its.
FAMILIES = ("static", "contextualized", "contrastive", "supervised-contrastive")

EXAMPLE = """\
# A grid: models x calibrations x tests (see docs/experiments.md for every key)
name: paper-glove
models:
  - spec: glove-6b-50d          # bundled GloVe 6B 50d
    label: GloVe-50d
    family: static
tests: [W1, W2, W3, W4, W5, W6, W7, W8, W9, W10]   # ids or YAML/JSON files
calibrations: [none, zca]        # 'none' is the raw space
settings:
  permutations: 100000
  seed: 0
  alpha: 0.05
  eps: 0.001
  reference: {size: 100000}
"""



# --------------------------------------------------------------------------- the specs
@dataclass(frozen=True)
class ModelSpec:
    """One model of the grid.

    Attributes
    ----------
    spec : str
        What :func:`isoeat.load_model` accepts (``glove-6b-50d``, ``glove:PATH``, ``hf:gpt2``, ...).
    label : str
        Display name in tables and figures (unique in the grid; default: ``spec``).
    family : str
        ``static``, ``contextualized`` or ``contrastive`` (paper §4.1), for the
        breakdowns of §5.5; default from the spec (``hf:``: contextualized, or
        contrastive for SimCSE names; ``st:``: contrastive; ``minilm``, ``mpnet``: supervised-contrastive; else
        static).
    layer, contexts_per_word : int or None
        Per-model overrides of the settings of the same name (contextual encoders only).
    options : dict
        Extra keyword arguments for ``load_model``.
    family_given : bool
        Whether ``family`` was written in the file (else it may be refined from the loaded model's kind).
    """

    spec: str
    label: str
    family: str
    layer: int | None = None
    contexts_per_word: int | None = None
    options: dict = field(default_factory=dict)
    family_given: bool = False

    @property
    def is_static(self) -> bool:
        """Whether the spec names static vectors (no sentence contexts, no layer)."""
        return _spec_kind(self.spec) == "static"

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "family_given"}


@dataclass(frozen=True)
class CalibrationSpec:
    """One calibration of the grid: ``none`` (the raw space) or a registered calibrator with parameters."""

    name: str
    label: str
    params: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ReferenceSettings:
    """Where calibrators get their reference vectors (paper §3.3, stage 1).

    ``corpus``: a text file (its vocabulary by frequency for static vectors,
    its sentences for contextual encoders), or None for the model's default
    (the top-``size`` vocabulary rows for static vectors). ``size``: reference
    vectors (paper: 100,000), or ``"auto"`` (shards encoded until every
    reference-SE < ``tolerance``, capped at ``max_size``). ``sentences``: sentences indexed from the corpus
    for contextual encoders (paper: up to 200,000). ``shards``: a fixed size split into this many shards for
    the reference-SE (None: none). The calibrator route (:mod:`isoeat.experiments.route`) reads them.
    """

    corpus: str | None = None
    size: int | str = 100_000
    sentences: int = 200_000
    shards: int | None = None
    tolerance: float = 0.02
    max_size: int = 100_000


@dataclass(frozen=True)
class Settings:
    """Statistical settings shared by every cell (see ``docs/experiments.md``)."""

    permutations: int = 100_000
    method: str = "auto"
    alternative: str = "greater"
    ddof: int = 1
    alpha: float = 0.05
    seed: int = 0
    eps: float = 1e-3
    eps_relative: float | None = None  # ε = this x the reference's mean eigenvalue (eps_mode="relative")
    min_coverage: float = 0.8
    adjust: str = "holm"
    bootstrap: int = 0
    ci_method: str = "auto"
    ci_level: float = 0.95
    resample_attributes: bool = False
    ci: bool = False
    ci_estimand: str = "given-attributes"
    exact_memory: int = 2 << 30
    allow_overlap: bool = False
    stop_early: bool = False
    contexts_per_word: int = 20
    layer: int = -1
    reference: ReferenceSettings = field(default_factory=ReferenceSettings)
    #: the Firm column's redraws: "auto" (R = 100 where cheap, as ``isoeat run --stability``), "off" or R
    stability: int | str = "auto"

    def eps_params(self) -> dict[str, Any]:
        """The calibrators' ε: ``{"eps": eps}``, or ``{"eps": r, "eps_mode": "relative"}`` with ``eps_relative``."""
        if self.eps_relative is not None:
            return {"eps": self.eps_relative, "eps_mode": "relative"}
        return {"eps": self.eps}

    def weat_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :func:`isoeat.weat` for one cell (without ``rng``)."""
        kw: dict[str, Any] = dict(
            ddof=self.ddof, alternative=self.alternative, method=self.method, n_permutations=self.permutations,
            min_coverage=self.min_coverage,
        )
        if self.ci or self.bootstrap:
            kw.update(ci=True, bootstrap=self.bootstrap, ci_method=self.ci_method, ci_level=self.ci_level,
                      ci_estimand=self.ci_estimand, resample_attributes=self.resample_attributes)
        if self.stop_early:
            kw["sequential_alpha"] = self.alpha
        if self.exact_memory != Settings.exact_memory:
            kw["exact_memory"] = self.exact_memory
        if self.allow_overlap:
            kw["allow_overlap"] = True
        return kw


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated experiment: the grid and its settings.

    ``tests`` holds the resolved :class:`~isoeat.AssociationTest` objects
    (files read relative to the config file), ``test_specs`` the entries as written.
    ``metrics``: registered bias metrics computed beside WEAT in every space
    (:func:`isoeat.metric_names`; empty: WEAT only). Like the tests, they are
    not part of the protocol: the list may grow in the same folder.
    """

    name: str
    models: tuple[ModelSpec, ...]
    tests: tuple[Any, ...]
    test_specs: tuple[str, ...]
    calibrations: tuple[CalibrationSpec, ...]
    settings: Settings
    anisotropy: AnisotropySpec | None = None
    similarity: SimilaritySpec | None = None
    report: ReportSpec = field(default_factory=ReportSpec)
    description: str = ""
    source: str | None = None
    text: str | None = None
    metrics: tuple[str, ...] = ()

    # -- grid -----------------------------------------------------------------
    @property
    def calibrated(self) -> tuple[CalibrationSpec, ...]:
        """The calibrations other than ``none``."""
        return tuple(c for c in self.calibrations if c.name != "none")

    def cell_keys(self) -> list[tuple[str, str, str]]:
        """``(model label, calibration label, test id)`` for every WEAT cell, in run order."""
        return [(m.label, c.label, t.id) for m in self.models for c in self.calibrations for t in self.tests]

    def model(self, label: str) -> ModelSpec:
        for m in self.models:
            if m.label == label:
                return m
        raise KeyError(label)

    def calibration(self, label: str) -> CalibrationSpec:
        for c in self.calibrations:
            if c.label == label:
                return c
        raise KeyError(label)

    # -- identity ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The normalised configuration (JSON-ready; tests as ids and word-list hashes)."""
        return {
            "name": self.name,
            "description": self.description,
            "models": [m.to_dict() for m in self.models],
            "tests": [{"id": t.id, "spec": s, "bias_type": t.bias_type, "source": t.source,
                       "words_sha256": test_hash(t)} for t, s in zip(self.tests, self._specs_per_test())],
            "calibrations": [c.to_dict() for c in self.calibrations],
            "settings": asdict(self.settings),
            "anisotropy": asdict(self.anisotropy) if self.anisotropy else None,
            "similarity": {**asdict(self.similarity), "benchmarks": list(self.similarity.benchmarks)}
            if self.similarity else None,
            "report": {**asdict(self.report),
                       "test_heatmaps": self.report.test_heatmaps if isinstance(self.report.test_heatmaps, str)
                       else list(self.report.test_heatmaps),
                       "figure_formats": list(self.report.figure_formats)},
            **({"metrics": list(self.metrics)} if self.metrics else {}),  # absent: WEAT only, as before the key
        }

    def _specs_per_test(self) -> list[str]:
        out: list[str] = []
        for t in self.tests:
            out.append(t.id if t.source == "builtin" else str(t.source))
        return out

    def protocol(self) -> dict[str, Any]:
        """What every cell's result depends on besides its model and test: settings and calibrations.

        Two runs with the same protocol may share an output folder (the grid
        may grow); a different protocol is another experiment.
        """
        s = asdict(self.settings)
        for k in ("adjust",):  # presentation only
            s.pop(k, None)
        for k, default in (("resample_attributes", False), ("exact_memory", Settings.exact_memory),
                           ("eps_relative", None),
                           ("allow_overlap", False), ("ci", False), ("ci_estimand", "given-attributes")):
            if s.get(k) == default:  # added later: the default keeps the hash of folders written before
                s.pop(k, None)
        if s.get("stability") == "auto":
            s.pop("stability", None)
        ref = s.get("reference")
        if isinstance(ref, dict):
            defaults: dict[str, Any] = {"shards": None, "tolerance": 0.02, "max_size": 100_000}
            for k, default in defaults.items():  # added later: absent, as in folders written before
                if ref.get(k) == default:
                    ref.pop(k, None)
        if not (self.settings.ci or self.settings.bootstrap):
            # without an interval its method decides nothing: the former default keeps those folders' hash
            s["ci_method"] = "percentile"
        return {
            "settings": s,
            "calibrations": [c.to_dict() for c in self.calibrations],
            "anisotropy": asdict(self.anisotropy) if self.anisotropy else None,
            "similarity": {**asdict(self.similarity), "benchmarks": sorted(self.similarity.benchmarks)}
            if self.similarity else None,
        }

    def protocol_hash(self) -> str:
        return _sha(self.protocol())


def _sha(obj: Any) -> str:
    """The content key of ``obj`` (:func:`isoeat._records.content_hash`)."""
    return content_hash(obj)


def test_hash(test: Any) -> str:
    """SHA-256 (16 hex) of a test's id, bias type, four word lists and defining pairs: a changed file changes it.

    A test with a phrase (``new york``) hashes the phrase rule too (:func:`isoeat.backends._phrases.rule_key`).
    """
    from ..backends._phrases import rule_key

    return _sha({"id": test.id, "bias_type": test.bias_type,  # defining pairs only when given: hashes kept
                 **{r: [ws.name, list(ws.words)] for r, ws in test.sets().items()},
                 **({"pairs": [list(p) for p in test.pairs]} if getattr(test, "pairs", ()) else {}),
                 **rule_key(w for ws in test.sets().values() for w in ws.words)})  # phrases: the rule too


test_hash.__test__ = False  # type: ignore[attr-defined]  # keep pytest from collecting it


# --------------------------------------------------------------------------- loading
def default_family(spec: str) -> str:
    """The family of a spec: hf: -> contextualized (SimCSE: contrastive), st: -> contrastive, the bundled
    sentence-transformers models (minilm, mpnet: all-MiniLM-L6-v2, all-mpnet-base-v2) supervised-contrastive.

    Examples
    --------
    >>> [default_family(s) for s in ("glove-6b-50d", "minilm", "mpnet", "st:all-mpnet-base-v2", "hf:gpt2")]
    ['static', 'supervised-contrastive', 'supervised-contrastive', 'supervised-contrastive', 'contextualized']
    """
    low = spec.strip().lower()
    if low.startswith("hf:"):
        return "contrastive" if ("simcse" in low or "contrastive" in low) else "contextualized"
    if low.startswith("st:") or "minilm" in low or "mpnet" in low:  # the all-* models: trained on labelled pairs
        return "supervised-contrastive" if ("minilm" in low or "mpnet" in low) else "contrastive"
    return "static"


def family_from_kind(kind: str | None) -> str | None:
    """Map an encoder's ``kind`` attribute to a family (None when unknown)."""
    if not kind:
        return None
    k = str(kind).lower()
    if k == "static":
        return "static"
    if k in {"sentence", "sentence-transformers", "contrastive"}:
        return "contrastive"
    if k in {"contextual", "contextualized", "transformer", "hf"}:
        return "contextualized"
    return None


def load_config(path: str | os.PathLike[str] | Mapping[Any, Any]) -> ExperimentConfig:
    """Read and validate an experiment file (YAML, or JSON which YAML reads too), or a mapping of the same keys.

    A mapping (``{"models": [...], "tests": [...], ...}``) is checked as the file would be; relative paths in
    it are read from the current folder, and its JSON is what a run folder keeps as ``config.yaml``.

    Raises
    ------
    ConfigError
        Naming the key, the value received and the allowed values; or ``path`` neither a path nor a mapping.
    IsoeatFileNotFoundError
        The file (or a test file it names) does not exist.
    """
    if isinstance(path, Mapping):
        try:
            text: str | None = json.dumps(path, indent=2, ensure_ascii=False) + "\n"
        except (TypeError, ValueError, RecursionError):  # what JSON cannot hold (a Path): the checks name it
            text = None
        return parse_config(path, text=text)
    path = check_path("load_config: path", path, requirement="a path (str or os.PathLike) or a mapping")
    data, text = read_yaml(path)
    return parse_config(data, source=str(path), base_dir=path.parent, text=text)


def as_config(config: Any, name: str = "config") -> ExperimentConfig:
    """``config`` if an :class:`ExperimentConfig`, else :func:`load_config` of it (a mapping or a path)."""
    if isinstance(config, ExperimentConfig):
        return config
    if not isinstance(config, (Mapping, str, os.PathLike)):
        raise InvalidValueError(name, "an ExperimentConfig, a mapping of a config file's keys, or a path "
                                "(str or os.PathLike) of one", show(config))
    return load_config(config)


def parse_config(data: Any, *, source: str | None = None, base_dir: str | Path | None = None,
                 text: str | None = None) -> ExperimentConfig:
    """Validate a mapping (the parsed YAML) into an :class:`ExperimentConfig`."""
    ck = _Checker(source)
    data = ck.keys("", data, _TOP_KEYS)
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    name = ck.string("name", data["name"]) if "name" in data else (Path(source).stem if source else "experiment")
    description = ck.string("description", data.get("description", ""), empty=True)

    settings = _parse_settings(ck, data.get("settings", {}) or {}, base)
    models = _parse_models(ck, data.get("models"))
    tests, specs = _parse_tests(ck, data.get("tests"), base)
    calibrations = _parse_calibrations(ck, data.get("calibrations"), settings)
    _check_route(ck, settings, calibrations)
    metrics = _parse_metrics(ck, data.get("metrics"))
    anisotropy = _parse_anisotropy(ck, data.get("anisotropy"))
    if anisotropy is not None:  # a frame of static vectors on a contextual model: refused before anything runs
        from ..diagnostics.frames import static_frame_refusal

        for m in models:
            why = None if m.is_static else static_frame_refusal(anisotropy.frame, m.label, key="anisotropy.frame")
            if why:
                raise ck.fail("anisotropy.frame", why)
    similarity = _parse_similarity(ck, data.get("similarity"))
    report = _parse_report(ck, data.get("report"), [t.id for t in tests])
    return ExperimentConfig(
        name=name, description=description, models=models, tests=tests, test_specs=specs,
        calibrations=calibrations, settings=settings, anisotropy=anisotropy, similarity=similarity,
        report=report, source=source, text=text, metrics=metrics,
    )


def _parse_settings(ck: _Checker, raw: Any, base: Path) -> Settings:
    raw = ck.keys("settings", raw, _SETTINGS_KEYS)
    d = Settings()
    kw: dict[str, Any] = {}
    if "permutations" in raw:
        kw["permutations"] = ck.integer("settings.permutations", raw["permutations"], lo=1)
    if "method" in raw:
        kw["method"] = ck.choice("settings.method", raw["method"], _METHODS)
    if "alternative" in raw:
        kw["alternative"] = ck.choice("settings.alternative", raw["alternative"], _ALTERNATIVES)
    if "ddof" in raw:
        kw["ddof"] = ck.integer("settings.ddof", raw["ddof"], lo=0)
    if "alpha" in raw:
        kw["alpha"] = ck.number("settings.alpha", raw["alpha"], lo=0, hi=1, lo_open=True, hi_open=True)
    if "seed" in raw:
        kw["seed"] = ck.integer("settings.seed", raw["seed"], lo=0)
    if "eps" in raw and raw.get("eps_relative") is not None:
        raise ck.fail("settings.eps_relative", "give settings.eps (absolute) or settings.eps_relative, not both")
    if "eps" in raw:
        kw["eps"] = ck.number("settings.eps", raw["eps"], lo=0)
    if raw.get("eps_relative") is not None:
        kw["eps_relative"] = ck.number("settings.eps_relative", raw["eps_relative"], lo=0)
    if "min_coverage" in raw:
        kw["min_coverage"] = ck.number("settings.min_coverage", raw["min_coverage"], lo=0, hi=1)
    if "adjust" in raw:
        kw["adjust"] = ck.choice("settings.adjust", raw["adjust"], _ADJUST)
    if "bootstrap" in raw:
        kw["bootstrap"] = ck.integer("settings.bootstrap", raw["bootstrap"], lo=0, hi=MAX_RESAMPLES)
    if "ci" in raw:
        kw["ci"] = ck.boolean("settings.ci", raw["ci"])
    if "ci_estimand" in raw:
        kw["ci_estimand"] = ck.choice("settings.ci_estimand", raw["ci_estimand"], ("given-attributes", "populations"))
    if "ci_method" in raw:
        kw["ci_method"] = ck.choice("settings.ci_method", raw["ci_method"], _CI_METHODS)
    if "ci_level" in raw:
        kw["ci_level"] = ck.number("settings.ci_level", raw["ci_level"], lo=0, hi=1, lo_open=True, hi_open=True)
    if "stop_early" in raw:
        kw["stop_early"] = ck.boolean("settings.stop_early", raw["stop_early"])
    if "resample_attributes" in raw:
        kw["resample_attributes"] = ck.boolean("settings.resample_attributes", raw["resample_attributes"])
    if "allow_overlap" in raw:
        kw["allow_overlap"] = ck.boolean("settings.allow_overlap", raw["allow_overlap"])
    if "exact_memory" in raw:
        try:
            kw["exact_memory"] = check_bytes("settings.exact_memory", raw["exact_memory"])
        except ConfigError as exc:
            raise ck.fail("settings.exact_memory", str(exc).removeprefix("settings.exact_memory ")) from None
    if "contexts_per_word" in raw:
        kw["contexts_per_word"] = ck.integer("settings.contexts_per_word", raw["contexts_per_word"], lo=1)
    if "layer" in raw:
        kw["layer"] = ck.integer("settings.layer", raw["layer"])
    if "reference" in raw:
        r = ck.keys("settings.reference", raw["reference"] or {}, _REFERENCE_KEYS)
        rk: dict[str, Any] = {}
        if r.get("corpus") is not None:
            rk["corpus"] = _check_corpus(ck, ck.string("settings.reference.corpus", r["corpus"]), base)
        if "size" in r:
            rk["size"] = "auto" if r["size"] == "auto" else ck.integer("settings.reference.size", r["size"], lo=2)
        if "sentences" in r:
            rk["sentences"] = ck.integer("settings.reference.sentences", r["sentences"], lo=1)
        rk.update(_route_settings(ck, r, rk.get("size")))
        kw["reference"] = ReferenceSettings(**rk)
    if "stability" in raw:
        kw["stability"] = _stability_setting(ck, raw["stability"])
    out = Settings(**{**asdict(d), "reference": d.reference, **kw})
    from ..stats.intervals import resolve_method
    from ..stats.options import ineffective

    for name, why in ineffective(out.method, stop_early=out.stop_early, exact_memory="exact_memory" in raw):
        raise ck.fail(f"settings.{name}", f"no effect with settings.method {out.method} ({why}); drop it")
    estimand = "populations" if out.resample_attributes else out.ci_estimand
    try:
        resolve_method(estimand, out.ci_method)
    except ConfigError as exc:
        raise ck.fail("settings.ci_method", str(exc)) from None
    return out


def _route_settings(ck: _Checker, r: dict, size: Any) -> dict[str, Any]:
    """``settings.reference``'s shards, tolerance and max_size, checked as ``isoeat run --reference-*`` is."""
    from .reference import check_auto_max

    out: dict[str, Any] = {}
    if r.get("shards") is not None:
        out["shards"] = ck.integer("settings.reference.shards", r["shards"], lo=2)
        if size == "auto":
            raise ck.fail("settings.reference.shards", "size auto chooses its shards (the cap in 20); drop it")
    for key in ("tolerance", "max_size"):
        if key in r and size != "auto":
            raise ck.fail(f"settings.reference.{key}", "only used with settings.reference.size auto")
    if "tolerance" in r:
        out["tolerance"] = ck.number("settings.reference.tolerance", r["tolerance"], lo=0, lo_open=True)
    if "max_size" in r:
        n = ck.integer("settings.reference.max_size", r["max_size"], lo=2)
        try:
            out["max_size"] = check_auto_max(n, "settings.reference.max_size")
        except ConfigError as exc:
            raise ck.fail("settings.reference.max_size", str(exc).removeprefix("settings.reference.max_size ")) \
                from None
    return out


def _check_route(ck: _Checker, settings: Settings, calibrations: Sequence[CalibrationSpec]) -> None:
    """Shards, ``size: auto`` and a number of redraws refit from merged statistics (zca): another calibration
    is refused here, in one line, not in every cell."""
    from ..calibration import make_calibrator

    r = settings.reference
    key = ("settings.reference.size" if r.size == "auto" else "settings.reference.shards" if r.shards is not None
           else "settings.stability" if isinstance(settings.stability, int) else None)
    if key is None:
        return
    for c in calibrations:
        if c.name != "none" and not hasattr(type(make_calibrator(c.name)), "from_statistics"):
            raise ck.fail(key, f"needs calibrations fitted from mergeable statistics (zca); {c.label!r} is not "
                          "(reference-SE, size auto and the stability redraws refit from merged shard statistics)")


def _stability_setting(ck: _Checker, value: Any) -> int | str:
    """``settings.stability``: auto, off, or a whole number of redraws (2 to 1000)."""
    from .reference import MAX_REPLICATES

    if value in ("auto", "off"):
        return str(value)
    try:
        return ck.integer("settings.stability", value, lo=2, hi=MAX_REPLICATES)
    except ConfigError:
        raise ck.fail("settings.stability", f"auto, off or a whole number of redraws (2 to {MAX_REPLICATES}), "
                      f"got {value!r}") from None


def _parse_models(ck: _Checker, raw: Any) -> tuple[ModelSpec, ...]:
    if raw is None:
        raise ck.fail("models", "missing: give a list of model specs, e.g. [glove-6b-50d]")
    out: list[ModelSpec] = []
    for key, m in ck.entries("models", raw, "spec", _MODEL_KEYS, "a non-empty list of model specs"):
        if "spec" not in m:
            raise ck.fail(f"{key}.spec", "missing: the model to load, e.g. glove-6b-50d or glove:/path/vectors.txt")
        spec = ck.string(f"{key}.spec", m["spec"])
        _preflight_model(ck, f"{key}.spec", spec)
        label = ck.string(f"{key}.label", m["label"]) if "label" in m else spec
        if "family" in m:
            family = ck.choice(f"{key}.family", m["family"], FAMILIES)
        else:
            family = default_family(spec)
        layer = ck.integer(f"{key}.layer", m["layer"]) if m.get("layer") is not None else None
        cpw = ck.integer(f"{key}.contexts_per_word", m["contexts_per_word"], lo=1) \
            if m.get("contexts_per_word") is not None else None
        if (layer is not None or cpw is not None) and _spec_kind(spec) == "static":
            which = "layer" if layer is not None else "contexts_per_word"
            raise ck.fail(f"{key}.{which}", f"only applies to contextual encoders (hf:, st:, minilm); "
                          f"{spec!r} is static vectors")
        options = ck.option(f"{key}.options", ck.keys(f"{key}.options", m.get("options") or {},
                                                       list((m.get("options") or {}).keys())))
        if str(options.get("corpus", "")).strip().lower() == "auto":  # keyed by the corpus auto chose
            options = {**options, "corpus": _check_corpus(ck, "auto", Path.cwd(), key=f"{key}.options.corpus")}
        out.append(ModelSpec(spec=spec, label=label, family=family, layer=layer, contexts_per_word=cpw,
                             options=options, family_given="family" in m))
    labels = [m.label for m in out]
    dup = sorted({lab for lab in labels if labels.count(lab) > 1})
    if dup:
        raise ck.fail("models", f"label(s) used more than once: {', '.join(dup)} (give each model a distinct 'label')")
    return tuple(out)


def _parse_tests(ck: _Checker, raw: Any, base: Path) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    from ..wordsets import get_test, load_tests_from_file, resolve_tests
    from ..wordsets._registry import TEST_FILE_SUFFIXES, pick_test, split_file_id

    if raw is None:
        tests = resolve_tests(None)  # the default battery W1..W10 (not the library's composed tests)
        return tuple(tests), tuple(t.id for t in tests)
    items = ck.str_list("tests", raw)
    out: list[Any] = []
    for i, spec in enumerate(items):
        p = Path(spec).expanduser()
        one, test_id = split_file_id(spec), None  # FILE:ID, one test of a file (unless a file has the whole name)
        if one is not None and not (p if p.is_absolute() else base / p).exists():
            spec, test_id = one
            p = Path(spec).expanduser()
        looks_like_file = p.suffix.lower() in TEST_FILE_SUFFIXES or "/" in spec or "\\" in spec
        try:
            if looks_like_file:
                if not p.is_absolute():
                    p = base / p
                if not p.exists():
                    raise ck.fail(f"tests[{i}]", f"no such test file {str(p)!r}")
                tests = load_tests_from_file(p)
                out.extend(tests if test_id is None else pick_test(p, tests, test_id))
            else:
                out.append(get_test(spec))
        except ConfigError as exc:
            if str(exc).startswith(_where(ck.source, "tests[")):
                raise
            raise ck.fail(f"tests[{i}]", str(exc)) from None
        except IsoeatError as exc:
            raise ck.fail(f"tests[{i}]", str(exc)) from None
    ids = [t.id for t in out]
    dup = sorted({x for x in ids if ids.count(x) > 1})
    if dup:
        raise ck.fail("tests", f"test id(s) selected more than once: {', '.join(dup)}")
    return tuple(out), tuple(items)


def _parse_calibrations(ck: _Checker, raw: Any, settings: Settings) -> tuple[CalibrationSpec, ...]:
    from ..calibration import calibration_names, make_calibrator

    if raw is None:
        raw = ["none", "zca"]
    names = calibration_names()
    out: list[CalibrationSpec] = []
    for key, c in ck.entries("calibrations", raw, "name", _CAL_KEYS, "a non-empty list such as [none, zca]"):
        if "name" not in c:
            raise ck.fail(f"{key}.name", f"missing (allowed: {', '.join(names)})")
        name = ck.choice(f"{key}.name", c["name"], names)
        given = c.get("params") or {}
        if name == "none":
            if given:
                raise ck.fail(f"{key}.params", "the raw space ('none') takes no parameters")
            params: dict[str, Any] = {}
        else:
            accepted = make_calibrator(name).get_params()
            given = ck.keys(f"{key}.params", given, list(accepted))
            params = {}
            if "eps" in accepted:  # its own eps is absolute (unless its own eps_mode says not): settings' not used
                params.update(settings.eps_params() if "eps" not in given else {"eps": given["eps"]})  # eps first
            for k, v in given.items():
                v = plain_scalar(v)
                if isinstance(v, str):
                    try:
                        v = float(v)
                    except ValueError:
                        pass
                params[k] = v
            try:
                make_calibrator(name, **params)
            except IsoeatError as exc:
                raise ck.fail(f"{key}.params", str(exc)) from None
        label = ck.string(f"{key}.label", c["label"]) if "label" in c else None
        out.append(CalibrationSpec(name=name, label=label or "", params=params))
    # default labels: the name, or name(params) when a name appears more than once
    counts = {s.name: sum(1 for d in out if d.name == s.name) for s in out}
    labelled = []
    for spec in out:
        if not spec.label:
            lab = spec.name if counts[spec.name] == 1 else spec.name + "(" + ",".join(
                f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in spec.params.items()) + ")"
            spec = CalibrationSpec(name=spec.name, label=lab, params=spec.params)
        labelled.append(spec)
    labels = [c.label for c in labelled]
    dup = sorted({lab for lab in labels if labels.count(lab) > 1})
    if dup:
        raise ck.fail("calibrations", f"the same calibration appears more than once: {', '.join(dup)} "
                      "(give distinct 'label's or parameters)")
    if "none" not in [c.name for c in labelled]:
        raise ck.fail("calibrations", "must include 'none', the raw space every calibration is compared with "
                      f"(got {', '.join(labels)})")
    if labelled[0].name != "none":
        labelled = [c for c in labelled if c.name == "none"] + [c for c in labelled if c.name != "none"]
    return tuple(labelled)
