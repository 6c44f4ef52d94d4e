"""isoeat: embedding association tests (WEAT, SC-WEAT) calibrated against anisotropy.

Quick start::

    import isoeat
    model = isoeat.load_model("glove-6b-50d")           # bundled GloVe 6B 50d
    zca = isoeat.fit_calibrator(model, "zca", n_reference=100_000, eps=1e-3)
    raw = isoeat.weat(model, "W6", rng=0)               # d, exact p
    white = isoeat.weat(model, "W6", calibration=zca, rng=0)
    print(raw.effect_size, raw.p_value, white.effect_size, white.p_value)
"""

from __future__ import annotations

from ._errors import (
    ConfigError,
    CoverageError,
    CustomCodeRefusedError,
    DataFormatError,
    DimensionMismatchError,
    ExperimentLockedError,
    ExperimentMismatchError,
    ExperimentNotFoundError,
    FingerprintMismatchError,
    InvalidTestError,
    InvalidValueError,
    IsoeatError,
    IsoeatFileNotFoundError,
    IsoeatWarning,
    MissingDependencyError,
    NotFittedError,
    ResourceLimitError,
    SchedulerUnreachableError,
    UnknownNameError,
    UnsafePathError,
)
from ._version import __version__

#: The public API outside the errors, imported on first access (PEP 562), so that ``import isoeat`` — and the
#: ``isoeat`` command, which imports it first — loads no numpy: a command that cannot load a library (a memory
#: limit, a broken installation) ends in one line of its own (``cli.py``), never in an import traceback.
_API = {
    **dict.fromkeys(("Lookup", "StaticVectors", "export_vectors", "load_model"), "isoeat.backends"),
    **dict.fromkeys(("ZCAWhitener", "calibrator_digest", "fit_calibrator", "fit_whitener", "load_calibrator",
                     "load_whitener", "make_calibrator", "save_calibrator", "save_whitener"), "isoeat.calibration"),
    **dict.fromkeys(("Comparison", "classify_change", "compare_calibration"), "isoeat.experiments"),
    "ConfidenceInterval": "isoeat.stats.intervals",
    **dict.fromkeys(("SCWEATResult", "WEATResult", "association_scores", "effect_size", "sc_weat",
                     "sc_weat_from_vectors", "weat", "weat_from_vectors"), "isoeat.stats.weat"),
    **dict.fromkeys(("CONVENTIONS", "Convention"), "isoeat.stats.conventions"),
    **dict.fromkeys(("ConventionRow", "explain_conventions"), "isoeat.stats.explain"),
    **dict.fromkeys(("AssociationTest", "WordSet", "get_test", "list_tests", "load_tests_from_file",
                     "register_test"), "isoeat.wordsets"),
    "metrics": "isoeat.metrics",  # the package itself, callable: isoeat.metrics(model, names, tests)
    **dict.fromkeys(("MetricResult", "metric", "metric_names"), "isoeat.metrics"),
    **dict.fromkeys(("NGroupResult", "ngroup"), "isoeat.metrics.ngroup"),
    **dict.fromkeys(("NGroupTest", "load_ngroup_tests"), "isoeat.wordsets"),
}

__all__ = [
    "__version__",
    # word sets
    "AssociationTest",
    "WordSet",
    "get_test",
    "list_tests",
    "load_tests_from_file",
    "register_test",
    # models
    "load_model",
    "StaticVectors",
    "Lookup",
    "export_vectors",
    # calibration
    "ZCAWhitener",
    "make_calibrator",
    "fit_calibrator",
    "save_calibrator",
    "load_calibrator",
    "calibrator_digest",
    "fit_whitener",  # deprecated: fit_calibrator(model, "zca", ...) (isoeat._surface.DEPRECATED_FUNCTIONS)
    "save_whitener",
    "load_whitener",
    # statistics
    "weat",
    "weat_from_vectors",
    "WEATResult",
    "sc_weat",
    "sc_weat_from_vectors",
    "SCWEATResult",
    "ConfidenceInterval",
    "association_scores",
    "effect_size",
    # peers' conventions (issue 46): weat(..., convention="wefe"), isoeat weat --explain
    "CONVENTIONS",
    "Convention",
    "ConventionRow",
    "explain_conventions",
    # other bias metrics (MAC, RND, ECT, RIPA, SemAxis, direct bias, NAS, RNSB)
    "metric",
    "metrics",
    "metric_names",
    "MetricResult",
    # tests of k >= 2 target groups (Generalized WEAT, SAME, multiclass MAC and RNSB)
    "ngroup",
    "NGroupResult",
    "NGroupTest",
    "load_ngroup_tests",
    # experiments
    "compare_calibration",
    "Comparison",
    "classify_change",
    # errors
    "IsoeatError",
    "ConfigError",
    "InvalidValueError",
    "CoverageError",
    "DataFormatError",
    "DimensionMismatchError",
    "FingerprintMismatchError",
    "ExperimentLockedError",
    "ExperimentMismatchError",
    "ExperimentNotFoundError",
    "SchedulerUnreachableError",
    "CustomCodeRefusedError",
    "UnsafePathError",
    "InvalidTestError",
    "IsoeatFileNotFoundError",
    "IsoeatWarning",
    "MissingDependencyError",
    "ResourceLimitError",
    "NotFittedError",
    "UnknownNameError",
    # loaded lazily on first access (see __getattr__)
    *sorted(_LAZY := {
        "load_corpus": "isoeat.corpora",
        "Corpus": "isoeat.corpora",
        "anisotropy": "isoeat.diagnostics",
        "compare_anisotropy": "isoeat.diagnostics",
        "AnisotropyResult": "isoeat.diagnostics",
        "eat_levels": "isoeat.diagnostics.levels",
        "LevelsResult": "isoeat.stats.levels",
        "evaluate_similarity": "isoeat.similarity",
        "compare_similarity": "isoeat.similarity",
        "SimilarityResult": "isoeat.similarity",
        "sensitivity_analysis": "isoeat.experiments.sensitivity",
        "SensitivityResult": "isoeat.experiments.sensitivity",
        "run_experiment": "isoeat.experiments.runner",
        "load_experiment": "isoeat.experiments.runner",
        "load_config": "isoeat.experiments.config",
        "seat": "isoeat.stats.seat",
        "SEATResult": "isoeat.stats.seat",
        "ceat": "isoeat.stats.ceat",
        "CEATResult": "isoeat.stats.ceat",
        "describe_test": "isoeat.wordsets",
        "criterion_validity": "isoeat.stats.criterion",
        "CriterionResult": "isoeat.stats.criterion",
        "load_criterion": "isoeat.wordsets.criteria",
        "word_list_audit": "isoeat.diagnostics.word_audit",
        "WordListAudit": "isoeat.diagnostics.word_audit",
    }),
]


def __getattr__(name: str):  # PEP 562: keep `import isoeat` light
    module = _API.get(name) or _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'isoeat' has no attribute {name!r}")
    import importlib
    import inspect

    loaded = importlib.import_module(module)
    value = loaded if module == f"isoeat.{name}" else getattr(loaded, name)
    if inspect.isfunction(value):  # every public function speaks the same words (isoeat._surface.public)
        from ._surface import public

        value = public(value)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API) | set(_LAZY))
