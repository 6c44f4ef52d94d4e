"""Validation of experiment files: the key checker, the safe YAML reader, model and corpus preflight.

:mod:`isoeat.experiments.config` holds the dataclasses and the parsing of each
section; this module holds what every section uses. Every error names the key
(``settings.permutations``, ``models[2].family``), what is allowed and the value
received; the values themselves are checked by :mod:`isoeat._validate`, so an
experiment file and a Python call refuse the same values.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._errors import ConfigError, InvalidValueError, IsoeatError
from .._validate import check_bool, check_choice, check_int, check_real, describe_range, suggest
from ..wordsets._safe_load import (  # noqa: F401 - _UniqueKeyLoader stays importable from here
    FLAG_WORDS,
    NotUTF8Error,
    SafeLoadError,
    load_yaml,
    plain_flag,
    plain_scalar,
    read_regular_text,
    safe_show,
)
from ..wordsets._safe_load import UniqueKeyLoader as _UniqueKeyLoader  # noqa: F401 - importable from here

__all__: list[str] = []

_show = safe_show
_TOO_BIG = object()  # stands in for a container given where a scalar is expected (its repr costs nothing)

# --------------------------------------------------------------------------- the keys of each section
_TOP_KEYS = ("name", "description", "models", "tests", "calibrations", "metrics", "settings", "anisotropy",
             "similarity", "report")
_MODEL_KEYS = ("spec", "label", "family", "layer", "contexts_per_word", "options")
_CAL_KEYS = ("name", "label", "params")
_SETTINGS_KEYS = (
    "permutations", "method", "alternative", "ddof", "alpha", "seed", "eps", "eps_relative", "min_coverage", "adjust",
    "bootstrap", "ci", "ci_estimand", "ci_method", "ci_level", "resample_attributes", "exact_memory", "allow_overlap",
    "stop_early", "contexts_per_word", "layer",
    "reference", "stability",
)
_REFERENCE_KEYS = ("corpus", "size", "sentences", "shards", "tolerance", "max_size")
_ANISO_KEYS = ("sample", "components", "heatmap_size", "frame")
_SIM_KEYS = ("benchmarks", "bootstrap")
_REPORT_KEYS = ("test_heatmaps", "figure_formats", "dpi")
_METHODS = ("auto", "exact", "certified", "monte-carlo")
_ALTERNATIVES = ("greater", "less", "two-sided")
_ADJUST = ("holm", "bh", "none")
_CI_METHODS = ("auto", "noncentral-t", "jackknife", "bca", "percentile")  # isoeat.stats.intervals.ALL_METHODS
_FIG_FORMATS = ("png", "pdf", "svg")


def _where(source: str | None, key: str) -> str:
    if source and key:
        return f"{source}: {key}"
    return source or key


class _Checker:
    """Helpers that raise :class:`ConfigError` naming the key, the value and what is allowed.

    Messages read ``"<file>: <key>: expected <what>, got <value>"``; the checks
    are those of :mod:`isoeat._validate`. The YAML reader keeps every plain
    scalar as text (:func:`~isoeat.wordsets._safe_load.load_yaml`), so the
    conversions happen here, where the schema says what a key holds: a plain
    ``1000``, ``1e-3`` or ``100_000`` is a number where a number is expected,
    a float such as ``100000.0`` is a whole number, and ``true``/``false``
    (also ``yes``/``no``/``on``/``off``) is a flag where a flag is expected.
    A quoted scalar is text and is not converted (except to a real: ``"1e-3"``
    was always accepted as a number).
    """

    def __init__(self, source: str | None) -> None:
        self.source = source

    def fail(self, key: str, msg: str) -> ConfigError:
        where = _where(self.source, key)
        return ConfigError(f"{where}: {msg}" if where else msg)

    def _check(self, key: str, fn: Callable[..., Any], v: Any, *args: Any, requirement: str | None = None,
               **kwargs: Any) -> Any:
        scalar = v is None or isinstance(v, (str, numbers.Number))
        try:  # a container is never valid here: the validator sees a stand-in, the message a bounded repr
            return fn(key, v if scalar else _TOO_BIG, *args, **kwargs)
        except InvalidValueError as exc:
            received = exc.received if scalar else _show(v)
            raise self.fail(key, f"expected {requirement or exc.requirement}{exc.sep}"
                                 f"got {received}{exc.hint}") from None

    def keys(self, key: str, mapping: Any, allowed: Sequence[str]) -> dict:
        if not isinstance(mapping, Mapping):
            raise self.fail(key, f"expected a mapping with keys {', '.join(allowed)}; got {_show(mapping)}")
        for k in mapping:
            if k not in allowed:
                name = str(k) if len(str(k)) <= 80 else str(k)[:77] + "..."
                sub = f"{key}.{name}" if key else name
                raise self.fail(sub, f"unknown key{suggest(name, allowed)} (allowed: {', '.join(allowed)})")
        return dict(mapping)

    def integer(self, key: str, v: Any, *, lo: int | None = None, hi: int | None = None) -> int:
        v = plain_scalar(v)
        if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
            v = int(v)
        return self._check(key, check_int, v, lo=lo, hi=hi, requirement=f"a whole number{describe_range(lo, hi)}")

    def number(self, key: str, v: Any, *, lo: float | None = None, hi: float | None = None,
               lo_open: bool = False, hi_open: bool = False) -> float:
        v = plain_scalar(v)
        if isinstance(v, str):  # a quoted "1e-3" was always read as a number
            try:
                v = float(v)
            except ValueError:
                pass
        return self._check(key, check_real, v, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)

    def choice(self, key: str, v: Any, allowed: Sequence[Any]) -> Any:
        return self._check(key, check_choice, v, allowed)

    def string(self, key: str, v: Any, *, empty: bool = False) -> str:
        if not isinstance(v, str) or (not empty and not v.strip()):
            raise self.fail(key, f"expected a non-empty string, got {_show(v)}")
        return v.strip()

    def boolean(self, key: str, v: Any) -> bool:
        return self._check(key, check_bool, plain_flag(v))

    def option(self, key: str, v: Any) -> Any:
        """A model option (its type unknown here): plain scalars typed as YAML 1.2 would, YAML 1.1 flags refused."""
        if isinstance(v, Mapping):
            return {k: self.option(f"{key}.{k}", x) for k, x in v.items()}
        if isinstance(v, list):
            return [self.option(f"{key}[{i}]", x) for i, x in enumerate(v)]
        if isinstance(v, str) and v.strip().lower() in FLAG_WORDS and v.strip().lower() not in ("true", "false"):
            raise self.fail(key, f"{_show(str(v))} is ambiguous here (YAML 1.1 reads it as a flag, YAML 1.2 as "
                            "text): write true or false")
        return plain_scalar(v)

    def entries(self, key: str, raw: Any, field: str, allowed: Sequence[str], expected: str) -> list[tuple[str, dict]]:
        """``(key[i], mapping)`` for a list section (models, calibrations).

        One item may stand for a list of one; a bare string ``s`` is ``{field: s}``.
        """
        if isinstance(raw, (str, Mapping)):
            raw = [raw]
        if not isinstance(raw, list) or not raw:
            raise self.fail(key, f"expected {expected}, got {_show(raw)}")
        return [(f"{key}[{i}]", self.keys(f"{key}[{i}]", {field: item} if isinstance(item, str) else item, allowed))
                for i, item in enumerate(raw)]

    def str_list(self, key: str, v: Any, *, allow_str: bool = True) -> list[str]:
        if allow_str and isinstance(v, str):
            v = [p.strip() for p in v.split(",") if p.strip()]
        if not isinstance(v, list) or not v:
            raise self.fail(key, f"expected a non-empty list of strings, got {_show(v)}")
        return [self.string(f"{key}[{i}]", x) for i, x in enumerate(v)]


def _parse_metrics(ck: _Checker, raw: Any) -> tuple[str, ...]:
    """``metrics:`` -- registered metric names (``all``: every one), in the registry's spelling; absent: none."""
    raw = plain_flag(raw)
    if raw is None or raw is False or raw == []:
        return ()
    from ..metrics.registry import METRICS

    if isinstance(raw, str) and raw.strip().lower() == "all":
        return METRICS.names()
    names: list[str] = []
    for i, n in enumerate(ck.str_list("metrics", raw)):
        try:
            names.append(METRICS.get(n).name)
        except ConfigError as exc:
            raise ck.fail(f"metrics[{i}]", str(exc)) from None
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ck.fail("metrics", f"metric(s) listed more than once: {', '.join(dup)}")
    return tuple(names)


# --------------------------------------------------------------------------- YAML
def read_yaml(path: Path) -> tuple[Any, str]:
    """``(data, text)`` of an experiment file, read by :func:`~isoeat.wordsets._safe_load.load_yaml`.

    A regular file only (FIFOs, devices and folders are named and refused), UTF-8
    with a leading BOM dropped; plain scalars stay text (the checks convert),
    no aliases, no duplicate keys; errors name the file and the line.
    """
    import yaml

    try:
        text = read_regular_text(path, what="config file")
    except NotUTF8Error as exc:
        raise ConfigError(f"{path}: cannot read ({exc}, line {exc.line})") from None
    try:
        data = load_yaml(text)
    except SafeLoadError as exc:
        line = f" (line {exc.line})" if exc.line is not None and "(line" not in str(exc) else ""
        raise ConfigError(f"{path}: {exc}{line}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}: not valid YAML{where}: {problem}") from None
    if data is None:
        raise ConfigError(f"{path}: the file is empty; it needs at least 'models' (see docs/experiments.md)")
    return data, text


# --------------------------------------------------------------------------- models and corpora
def _spec_kind(spec: str) -> str:
    """The one rule (:func:`isoeat.backends._registry.spec_kind`, imported when a config is checked): ``"static"``,
    or ``"transformer"``/``"sentence"`` for ``hf:``, ``st:`` and the packaged minilm and mpnet by any of their names."""
    from ..backends._registry import spec_kind

    return spec_kind(spec)


def _check_corpus(ck: _Checker, spec: str, base: Path, key: str = "settings.reference.corpus") -> str:
    """A named corpus (wikitext-103, wikitext-2, gensim-wiki, ...), FORMAT:PATH, or an existing file/folder."""
    from ..corpora import FORMAT_PREFIXES, NAMED_CORPORA, resolve_auto_corpus

    if spec.strip().lower() == "auto":  # recorded as the corpus it chose, so the protocol names it
        try:
            return str(resolve_auto_corpus(spec))
        except IsoeatError as exc:
            raise ck.fail(key, str(exc)) from None
    if spec in NAMED_CORPORA:
        return spec
    prefixes = [p.lower() for p in FORMAT_PREFIXES]
    prefix, sep, rest = spec.partition(":")
    path_part = rest if (sep and prefix.lower() in prefixes) else spec
    p = Path(path_part).expanduser()
    if not p.is_absolute():
        p = base / p
    if p.exists():
        return f"{prefix}:{p.resolve()}" if (sep and prefix.lower() in prefixes) else str(p.resolve())
    raise ck.fail("settings.reference.corpus",
                  f"no such file or folder {str(p)!r} and no named corpus {spec!r}{NAMED_CORPORA.suggest(spec)} "
                  f"(named corpora: {', '.join(NAMED_CORPORA.names()) or 'none'}; or FORMAT:PATH with FORMAT in "
                  f"{', '.join(FORMAT_PREFIXES) or '-'}; or omit the key for each model's default reference sample)")


def _preflight_model(ck: _Checker, key: str, spec: str) -> None:
    """Catch an unknown model name before a long grid starts (loading happens later, once per model)."""
    from ..backends import FORMAT_PREFIXES, NAMED_MODELS

    if spec in NAMED_MODELS or _spec_kind(spec) != "static":
        return
    prefix, sep, rest = spec.partition(":")
    prefixes = {p.lower() for p in FORMAT_PREFIXES}
    if sep and len(prefix) > 1 and prefix.lower() in prefixes:
        if rest and not Path(rest.split(",")[0]).expanduser().exists():
            raise ck.fail(key, f"no such file {rest.split(',')[0]!r} (from model spec {spec!r})")
        return
    if sep and len(prefix) > 1:
        return  # a prefix this version does not know: load_model decides (and the cells record why)
    if Path(spec).expanduser().exists():
        return
    raise ck.fail(key, str(NAMED_MODELS.unknown(spec)))


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
