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

import difflib
import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from .._errors import ConfigError, IsoeatError, IsoeatFileNotFoundError

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

#: Architectural families of the paper (§4.1), used for its breakdowns.
FAMILIES = ("static", "contextualized", "contrastive")

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

_TOP_KEYS = ("name", "description", "models", "tests", "calibrations", "settings", "anisotropy", "similarity", "report")
_MODEL_KEYS = ("spec", "label", "family", "layer", "contexts_per_word", "options")
_CAL_KEYS = ("name", "label", "params")
_SETTINGS_KEYS = (
    "permutations", "method", "alternative", "ddof", "alpha", "seed", "eps", "min_coverage", "adjust",
    "bootstrap", "ci_method", "ci_level", "resample_attributes", "stop_early", "contexts_per_word", "layer",
    "reference",
)
_REFERENCE_KEYS = ("corpus", "size", "sentences")
_ANISO_KEYS = ("sample", "components", "heatmap_size")
_SIM_KEYS = ("benchmarks", "bootstrap")
_REPORT_KEYS = ("test_heatmaps", "figure_formats", "dpi")
_METHODS = ("auto", "exact", "monte-carlo")
_ALTERNATIVES = ("greater", "less", "two-sided")
_ADJUST = ("holm", "bh", "none")
_CI_METHODS = ("percentile", "bca")
_FIG_FORMATS = ("png", "pdf", "svg")


# --------------------------------------------------------------------------- errors and checks
def _where(source: str | None, key: str) -> str:
    if source and key:
        return f"{source}: {key}"
    return source or key


class _Checker:
    """Helpers that raise :class:`ConfigError` naming the key, the value and what is allowed."""

    def __init__(self, source: str | None) -> None:
        self.source = source

    def fail(self, key: str, msg: str) -> ConfigError:
        where = _where(self.source, key)
        return ConfigError(f"{where}: {msg}" if where else msg)

    def keys(self, key: str, mapping: Any, allowed: Sequence[str]) -> dict:
        if not isinstance(mapping, Mapping):
            raise self.fail(key, f"expected a mapping with keys {', '.join(allowed)}; got {_show(mapping)}")
        for k in mapping:
            if k not in allowed:
                close = difflib.get_close_matches(str(k), list(allowed), n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                sub = f"{key}.{k}" if key else str(k)
                raise self.fail(sub, f"unknown key{hint} (allowed: {', '.join(allowed)})")
        return dict(mapping)

    def integer(self, key: str, v: Any, *, lo: int | None = None) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
                v = int(v)
            else:
                what = "a whole number" + (f" >= {lo}" if lo is not None else "")
                raise self.fail(key, f"expected {what}, got {_show(v)}")
        if lo is not None and v < lo:
            raise self.fail(key, f"expected a whole number >= {lo}, got {v}")
        return int(v)

    def number(self, key: str, v: Any, *, lo: float | None = None, hi: float | None = None,
               lo_open: bool = False, hi_open: bool = False) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            if isinstance(v, str):  # YAML reads 1e-3 (no dot) as a string
                try:
                    v = float(v)
                except ValueError:
                    raise self.fail(key, f"expected a number{_range(lo, hi, lo_open, hi_open)}, got {_show(v)}") from None
            else:
                raise self.fail(key, f"expected a number{_range(lo, hi, lo_open, hi_open)}, got {_show(v)}")
        v = float(v)
        ok = math.isfinite(v)
        if lo is not None:
            ok = ok and (v > lo if lo_open else v >= lo)
        if hi is not None:
            ok = ok and (v < hi if hi_open else v <= hi)
        if not ok:
            raise self.fail(key, f"expected a number{_range(lo, hi, lo_open, hi_open)}, got {v:g}")
        return v

    def choice(self, key: str, v: Any, allowed: Sequence[Any]) -> Any:
        if isinstance(v, bool) or not isinstance(v, (str, int)) or v not in allowed:
            close = difflib.get_close_matches(str(v), [str(a) for a in allowed], n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise self.fail(key, f"expected one of {', '.join(map(str, allowed))}; got {_show(v)}{hint}")
        return v

    def string(self, key: str, v: Any, *, empty: bool = False) -> str:
        if not isinstance(v, str) or (not empty and not v.strip()):
            raise self.fail(key, f"expected a non-empty string, got {_show(v)}")
        return v.strip()

    def boolean(self, key: str, v: Any) -> bool:
        if not isinstance(v, bool):
            raise self.fail(key, f"expected true or false, got {_show(v)}")
        return v

    def str_list(self, key: str, v: Any, *, allow_str: bool = True) -> list[str]:
        if allow_str and isinstance(v, str):
            v = [p.strip() for p in v.split(",") if p.strip()]
        if not isinstance(v, list) or not v:
            raise self.fail(key, f"expected a non-empty list of strings, got {_show(v)}")
        return [self.string(f"{key}[{i}]", x) for i, x in enumerate(v)]


def _range(lo: float | None, hi: float | None, lo_open: bool, hi_open: bool) -> str:
    if lo is None and hi is None:
        return ""
    if hi is None:
        return f" {'>' if lo_open else '>='} {lo:g}"
    if lo is None:
        return f" {'<' if hi_open else '<='} {hi:g}"
    return f" in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"


def _show(v: Any) -> str:
    text = repr(v)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(v).__name__})" if not isinstance(v, str) else text


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
        contrastive for SimCSE names; ``st:``/``minilm``: contrastive; else static).
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
        return not _is_contextual_spec(self.spec)

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
    vectors (paper: 100,000). ``sentences``: sentences indexed from the corpus
    for contextual encoders (paper: up to 200,000).
    """

    corpus: str | None = None
    size: int = 100_000
    sentences: int = 200_000


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
    min_coverage: float = 0.8
    adjust: str = "holm"
    bootstrap: int = 0
    ci_method: str = "percentile"
    ci_level: float = 0.95
    resample_attributes: bool = False
    stop_early: bool = False
    contexts_per_word: int = 20
    layer: int = -1
    reference: ReferenceSettings = field(default_factory=ReferenceSettings)

    def weat_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :func:`isoeat.weat` for one cell (without ``rng``)."""
        kw: dict[str, Any] = dict(
            ddof=self.ddof, alternative=self.alternative, method=self.method, n_permutations=self.permutations,
            min_coverage=self.min_coverage,
        )
        if self.bootstrap:
            kw.update(bootstrap=self.bootstrap, ci_method=self.ci_method, ci_level=self.ci_level,
                      resample_attributes=self.resample_attributes)
        if self.stop_early:
            kw["sequential_alpha"] = self.alpha
        return kw


@dataclass(frozen=True)
class AnisotropySpec:
    """Experiment 1 (paper §4.3): anisotropy of ``sample`` reference vectors per (model, calibration).

    ``components``: principal components kept for Figure 2 (paper: 50).
    ``heatmap_size``: vectors shown in the Figure 1 heatmaps (the statistics use all ``sample``).
    """

    sample: int = 2000
    components: int = 50
    heatmap_size: int = 300


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


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated experiment: the grid and its settings.

    ``tests`` holds the resolved :class:`~isoeat.AssociationTest` objects
    (files read relative to the config file), ``test_specs`` the entries as written.
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
        if not s.get("resample_attributes"):  # added later: off keeps the hash of folders written before
            s.pop("resample_attributes", None)
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
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def test_hash(test: Any) -> str:
    """SHA-256 (16 hex) of a test's id, bias type and four word lists: a changed file changes it."""
    return _sha({"id": test.id, "bias_type": test.bias_type,
                 **{r: [ws.name, list(ws.words)] for r, ws in test.sets().items()}})


test_hash.__test__ = False  # keep pytest from collecting it


# --------------------------------------------------------------------------- loading
def _is_contextual_spec(spec: str) -> bool:
    low = spec.strip().lower()
    return low.startswith(("hf:", "st:", "minilm")) or low in {"minilm", "all-minilm-l6-v2"}


def default_family(spec: str) -> str:
    """The paper's family for a model spec: hf: -> contextualized (SimCSE -> contrastive), st:/minilm -> contrastive."""
    low = spec.strip().lower()
    if low.startswith("hf:"):
        return "contrastive" if ("simcse" in low or "contrastive" in low) else "contextualized"
    if low.startswith("st:") or low.startswith("minilm") or "minilm" in low:
        return "contrastive"
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


class _UniqueKeyLoader:
    """A yaml SafeLoader that refuses duplicate keys (a silent overwrite hides mistakes)."""

    @staticmethod
    def make():
        import yaml

        class Loader(yaml.SafeLoader):
            pass

        def construct_mapping(loader, node, deep=False):
            loader.flatten_mapping(node)
            seen: dict = {}
            for key_node, _ in node.value:
                key = loader.construct_object(key_node, deep=deep)
                if key in seen:
                    raise ConfigError(
                        f"duplicate key {key!r} (line {key_node.start_mark.line + 1}; first on line {seen[key]})"
                    )
                seen[key] = key_node.start_mark.line + 1
            return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)

        Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
        return Loader


def load_config(path: str | Path) -> ExperimentConfig:
    """Read and validate an experiment file (YAML, or JSON which YAML reads too).

    Raises
    ------
    ConfigError
        Naming the key, the value received and the allowed values.
    IsoeatFileNotFoundError
        The file (or a test file it names) does not exist.
    """
    import yaml

    path = Path(path)
    if not path.is_file():
        raise IsoeatFileNotFoundError(f"{path}: no such config file")
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader.make())  # noqa: S506 - a SafeLoader subclass
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}: not valid YAML{where}: {problem}") from None
    if data is None:
        raise ConfigError(f"{path}: the file is empty; it needs at least 'models' (see docs/experiments.md)")
    return parse_config(data, source=str(path), base_dir=path.parent, text=text)


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
    anisotropy = _parse_anisotropy(ck, data.get("anisotropy"))
    similarity = _parse_similarity(ck, data.get("similarity"))
    report = _parse_report(ck, data.get("report"), [t.id for t in tests])
    return ExperimentConfig(
        name=name, description=description, models=models, tests=tests, test_specs=specs,
        calibrations=calibrations, settings=settings, anisotropy=anisotropy, similarity=similarity,
        report=report, source=source, text=text,
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
    if "eps" in raw:
        kw["eps"] = ck.number("settings.eps", raw["eps"], lo=0)
    if "min_coverage" in raw:
        kw["min_coverage"] = ck.number("settings.min_coverage", raw["min_coverage"], lo=0, hi=1)
    if "adjust" in raw:
        kw["adjust"] = ck.choice("settings.adjust", raw["adjust"], _ADJUST)
    if "bootstrap" in raw:
        kw["bootstrap"] = ck.integer("settings.bootstrap", raw["bootstrap"], lo=0)
    if "ci_method" in raw:
        kw["ci_method"] = ck.choice("settings.ci_method", raw["ci_method"], _CI_METHODS)
    if "ci_level" in raw:
        kw["ci_level"] = ck.number("settings.ci_level", raw["ci_level"], lo=0, hi=1, lo_open=True, hi_open=True)
    if "stop_early" in raw:
        kw["stop_early"] = ck.boolean("settings.stop_early", raw["stop_early"])
    if "resample_attributes" in raw:
        kw["resample_attributes"] = ck.boolean("settings.resample_attributes", raw["resample_attributes"])
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
            rk["size"] = ck.integer("settings.reference.size", r["size"], lo=2)
        if "sentences" in r:
            rk["sentences"] = ck.integer("settings.reference.sentences", r["sentences"], lo=1)
        kw["reference"] = ReferenceSettings(**rk)
    return Settings(**{**asdict(d), "reference": d.reference, **kw})


def _check_corpus(ck: _Checker, spec: str, base: Path) -> str:
    """A named corpus (wikitext-103, wikitext-2, gensim-wiki, ...), FORMAT:PATH, or an existing file/folder."""
    names: list[str] = []
    prefixes: list[str] = []
    try:
        from ..corpora import _load as cl

        names = list(getattr(cl, "NAMED_CORPORA", {})) + list(getattr(cl, "_ALIASES", {}))
        prefixes = list(getattr(cl, "FORMAT_PREFIXES", {}))
    except ImportError:  # pragma: no cover - corpora ships with isoeat
        pass
    if spec.lower() in {n.lower() for n in names}:
        return spec
    prefix, sep, rest = spec.partition(":")
    path_part = rest if (sep and prefix.lower() in prefixes) else spec
    p = Path(path_part).expanduser()
    if not p.is_absolute():
        p = base / p
    if p.exists():
        return f"{prefix}:{p.resolve()}" if (sep and prefix.lower() in prefixes) else str(p.resolve())
    close = difflib.get_close_matches(spec.lower(), names, n=2, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise ck.fail("settings.reference.corpus",
                  f"no such file or folder {str(p)!r} and no named corpus {spec!r}{hint} (named corpora: "
                  f"{', '.join(getattr(cl, 'NAMED_CORPORA', {})) if names else 'none'}; or FORMAT:PATH with FORMAT in "
                  f"{', '.join(prefixes) or '-'}; or omit the key for each model's default reference sample)")


def _parse_models(ck: _Checker, raw: Any) -> tuple[ModelSpec, ...]:
    if raw is None:
        raise ck.fail("models", "missing: give a list of model specs, e.g. [glove-6b-50d]")
    if isinstance(raw, (str, Mapping)):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise ck.fail("models", f"expected a non-empty list of model specs, got {_show(raw)}")
    out: list[ModelSpec] = []
    for i, item in enumerate(raw):
        key = f"models[{i}]"
        if isinstance(item, str):
            item = {"spec": item}
        m = ck.keys(key, item, _MODEL_KEYS)
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
        if (layer is not None or cpw is not None) and not _is_contextual_spec(spec):
            which = "layer" if layer is not None else "contexts_per_word"
            raise ck.fail(f"{key}.{which}", f"only applies to contextual encoders (hf:, st:, minilm); "
                          f"{spec!r} is static vectors")
        options = ck.keys(f"{key}.options", m.get("options") or {}, list((m.get("options") or {}).keys()))
        out.append(ModelSpec(spec=spec, label=label, family=family, layer=layer, contexts_per_word=cpw,
                             options=options, family_given="family" in m))
    labels = [m.label for m in out]
    dup = sorted({lab for lab in labels if labels.count(lab) > 1})
    if dup:
        raise ck.fail("models", f"label(s) used more than once: {', '.join(dup)} (give each model a distinct 'label')")
    return tuple(out)


def _preflight_model(ck: _Checker, key: str, spec: str) -> None:
    """Catch an unknown model name before a long grid starts (loading happens later, once per model)."""
    try:
        from ..backends import _registry as reg
    except Exception:  # pragma: no cover - backends always present
        return
    named = {n.lower() for n in getattr(reg, "NAMED_MODELS", {})} | {a.lower() for a in getattr(reg, "_ALIASES", {})}
    low = spec.lower()
    if low in named or _is_contextual_spec(spec):
        return
    prefix, sep, rest = spec.partition(":")
    prefixes = {p.lower() for p in getattr(reg, "FORMAT_PREFIXES", {})}
    if sep and len(prefix) > 1 and prefix.lower() in prefixes:
        if rest and not Path(rest.split(",")[0]).expanduser().exists():
            raise ck.fail(key, f"no such file {rest.split(',')[0]!r} (from model spec {spec!r})")
        return
    if sep and len(prefix) > 1:
        return  # a prefix this version does not know: load_model decides (and the cells record why)
    if Path(spec).expanduser().exists():
        return
    close = difflib.get_close_matches(low, sorted(named), n=2, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise ck.fail(key, f"unknown model {spec!r}{hint} (named models: {', '.join(sorted(getattr(reg, 'NAMED_MODELS', {})))}; "
                  f"or PREFIX:PATH with PREFIX in {', '.join(sorted(prefixes))}; or an existing file)")


def _parse_tests(ck: _Checker, raw: Any, base: Path) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    from ..wordsets import get_test, list_tests, load_tests_from_file

    if raw is None:
        tests = [t for t in list_tests() if t.source == "builtin"]
        return tuple(tests), tuple(t.id for t in tests)
    items = ck.str_list("tests", raw)
    out: list[Any] = []
    for i, spec in enumerate(items):
        p = Path(spec).expanduser()
        looks_like_file = p.suffix.lower() in {".json", ".jsonl", ".yaml", ".yml"} or "/" in spec or "\\" in spec
        try:
            if looks_like_file:
                if not p.is_absolute():
                    p = base / p
                if not p.exists():
                    raise ck.fail(f"tests[{i}]", f"no such test file {str(p)!r}")
                out.extend(load_tests_from_file(p))
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
    if isinstance(raw, (str, Mapping)):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise ck.fail("calibrations", f"expected a non-empty list such as [none, zca], got {_show(raw)}")
    names = calibration_names()
    out: list[CalibrationSpec] = []
    for i, item in enumerate(raw):
        key = f"calibrations[{i}]"
        if isinstance(item, str):
            item = {"name": item}
        c = ck.keys(key, item, _CAL_KEYS)
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
            if "eps" in accepted:
                params["eps"] = settings.eps
            for k, v in given.items():
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
    counts = {c.name: sum(1 for d in out if d.name == c.name) for c in out}
    labelled = []
    for c in out:
        if not c.label:
            lab = c.name if counts[c.name] == 1 else c.name + "(" + ",".join(f"{k}={v:g}" if isinstance(v, float)
                                                                              else f"{k}={v}" for k, v in c.params.items()) + ")"
            c = CalibrationSpec(name=c.name, label=lab, params=c.params)
        labelled.append(c)
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


def _module_available(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _parse_anisotropy(ck: _Checker, raw: Any) -> AnisotropySpec | None:
    if raw is None or raw is False:
        return None
    if raw is True:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ck.fail("anisotropy", f"expected true, false or a mapping with keys {', '.join(_ANISO_KEYS)}; "
                      f"got {_show(raw)}")
    r = ck.keys("anisotropy", raw, _ANISO_KEYS)
    if not _module_available("isoeat.diagnostics"):
        raise ck.fail("anisotropy", "needs the module isoeat.diagnostics, which this installation of isoeat "
                      "does not have; remove the key or update isoeat")
    kw: dict[str, Any] = {}
    if "sample" in r:
        kw["sample"] = ck.integer("anisotropy.sample", r["sample"], lo=10)
    if "components" in r:
        kw["components"] = ck.integer("anisotropy.components", r["components"], lo=1)
    if "heatmap_size" in r:
        kw["heatmap_size"] = ck.integer("anisotropy.heatmap_size", r["heatmap_size"], lo=10)
    return AnisotropySpec(**kw)


def similarity_benchmarks() -> tuple[str, ...]:
    """Benchmark names :mod:`isoeat.similarity` knows (empty when the module is absent)."""
    try:
        from .. import similarity as sim  # type: ignore[attr-defined]
    except ImportError:
        return ()
    for attr in ("benchmark_names", "list_benchmarks", "available_benchmarks"):
        fn = getattr(sim, attr, None)
        if callable(fn):
            try:
                names = fn()
                return tuple(n if isinstance(n, str) else getattr(n, "name", str(n)) for n in names)
            except Exception:  # pragma: no cover - defensive
                continue
    reg = getattr(sim, "BENCHMARKS", None)
    return tuple(reg) if isinstance(reg, Mapping) else ()


def _parse_similarity(ck: _Checker, raw: Any) -> SimilaritySpec | None:
    if raw is None or raw is False:
        return None
    if isinstance(raw, (list, str)):
        raw = {"benchmarks": raw}
    if raw is True:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ck.fail("similarity", f"expected a list of benchmarks such as [ws353, simlex999], or a mapping "
                      f"with keys {', '.join(_SIM_KEYS)}; got {_show(raw)}")
    r = ck.keys("similarity", raw, _SIM_KEYS)
    if not _module_available("isoeat.similarity"):
        raise ck.fail("similarity", "needs the module isoeat.similarity, which this installation of isoeat "
                      "does not have; remove the key or update isoeat")
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
        kw["bootstrap"] = ck.integer("similarity.bootstrap", r["bootstrap"], lo=0)
    return SimilaritySpec(**kw)


def _parse_report(ck: _Checker, raw: Any, test_ids: list[str]) -> ReportSpec:
    if raw is None:
        return ReportSpec()
    r = ck.keys("report", raw, _REPORT_KEYS)
    kw: dict[str, Any] = {}
    if "test_heatmaps" in r:
        v = r["test_heatmaps"]
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
        kw["dpi"] = ck.integer("report.dpi", r["dpi"], lo=50)
    return ReportSpec(**kw)
