"""Parameter objects of the association tests: how p is computed, which interval, what a result is labelled.

Every test function (:func:`isoeat.weat`, :func:`isoeat.sc_weat`,
:func:`isoeat.seat`, the ``*_from_vectors`` forms, :func:`isoeat.metric`) takes
its options as these frozen objects, or, equivalently, as keywords of the same
names (``alternative="two-sided"`` is ``permutation=PermutationOptions(
alternative="two-sided")``). One spelling, one meaning: a keyword that is no
field of the objects a function takes is a one-line :class:`~isoeat.ConfigError`
naming it (with a did-you-mean), never a raw ``TypeError``.

Examples
--------
>>> p, i, _ = gather({"alternative": "two-sided", "ci_level": 0.9}, where="weat")
>>> p.alternative, p.n_permutations, i.ci_level
('two-sided', 100000, 0.9)
>>> gather({"alternativ": "less"}, where="weat")
Traceback (most recent call last):
...
isoeat._errors.ConfigError: weat: unknown option 'alternativ'; did you mean alternative?
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from .._errors import ConfigError

__all__ = ["PermutationOptions", "IntervalOptions", "ResultLabels", "gather", "ineffective", "own", "CEAT_DRAWS",
           "CEAT_VARIANCES", "SEAT_MODES"]

# Choices and defaults the command line shows, here (no numpy) so that ``isoeat ceat --help`` and
# ``isoeat seat --help`` load none; ``stats.ceat`` and ``stats.seat`` take them from here.
#: Draws of one context vector per word (Guo & Caliskan 2021 use 10,000; 1,000 is the default here).
CEAT_DRAWS = 1000
#: Within-draw variances: Guo & Caliskan's (the default) and Hedges & Olkin's variance of d.
CEAT_VARIANCES = ("published", "hedges-olkin")
#: What SEAT encodes: templates filled with the words, sentences given as stimuli, or either by the test.
SEAT_MODES = ("auto", "templates", "sentences")


@dataclass(frozen=True)
class PermutationOptions:
    """How the permutation p-value is computed (:func:`~isoeat.stats.permutation.partition_test` has each field).

    Attributes
    ----------
    alternative : {"greater", "less", "two-sided"}
        ``"greater"``: :math:`p = P[S_i \\ge S]` over the equal-size partitions of :math:`X\\cup Y`.
    method : {"auto", "exact", "certified", "monte-carlo"}
    n_permutations : int
        Monte Carlo sample size.
    rtol : float or None
        Relative tie tolerance (None: the default, 1e-12).
    exact_budget, exact_memory : optional
        Largest exact count (cost units) and its memory budget in bytes (None: the defaults).
    sequential_alpha : float or None
        Monte Carlo: stop once the Clopper–Pearson interval on p lies clear of this level.
    confidence : float
        Level of the Clopper–Pearson interval on a sampled p.
    batch_size : int or None
        Random partitions per vectorised batch.
    """

    alternative: str = "greater"
    method: str = "auto"
    n_permutations: int = 100_000
    rtol: float | None = None
    exact_budget: float | None = None
    exact_memory: int | None = None
    sequential_alpha: float | None = None
    confidence: float = 0.95
    batch_size: int | None = None

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~isoeat.stats.permutation.partition_test` (unset ones left out)."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if not (f.default is None and getattr(self, f.name) is None)}


def ineffective(method: str, *, stop_early: bool, exact_memory: bool, permutations: bool = False
                ) -> list[tuple[str, str]]:
    """The permutation options that would change nothing under ``method``, each with why: the one rule of the
    Python API (:func:`~isoeat.stats.permutation.partition_test`), the config (``settings``) and the command line.

    ``stop_early``: early stopping was asked for (``sequential_alpha``, ``--stop-early``); ``exact_memory``: a
    memory budget of exact counting was given; ``permutations``: a Monte Carlo sample size was given (the CLI can
    tell; the API's ``n_permutations`` always has a value, and so has a config's ``settings.permutations`` that
    ``isoeat run``'s quick grid writes). ``auto`` decides later: none is refused
    there (where it counts p, :func:`~isoeat.stats.permutation.partition_test` says that early stopping stopped
    nothing).

    >>> ineffective("exact", stop_early=True, exact_memory=False)[0][0]
    'stop_early'
    >>> ineffective("auto", stop_early=True, exact_memory=True)
    []
    """
    out = []
    if permutations and method in ("exact", "certified"):
        out.append(("permutations", "it counts partitions and samples none; the permutations are the Monte Carlo "
                                    "sample of method monte-carlo or auto"))
    if stop_early and method in ("exact", "certified"):
        out.append(("stop_early", "it counts partitions and samples none; early stopping stops the Monte Carlo "
                                  "sample of method monte-carlo, or of auto where it samples"))
    if exact_memory and method == "monte-carlo":
        out.append(("exact_memory", "it samples partitions and counts none; the budget bounds the exact count and "
                                    "the certified bracket of method exact, certified or auto"))
    return out


@dataclass(frozen=True)
class IntervalOptions:
    """Which confidence interval on d is computed (:mod:`isoeat.stats.intervals`).

    An interval is computed when ``ci`` is true or ``bootstrap > 0``.
    ``resample_attributes=True`` is the older spelling of ``ci_estimand="populations"``.
    """

    ci: bool = False
    ci_estimand: str = "given-attributes"
    ci_method: str = "auto"
    ci_level: float = 0.95
    bootstrap: int = 0
    resample_attributes: bool = False

    def request(self) -> Any:
        """The checked request (:func:`~isoeat.stats.intervals.check_interval_options`), None without an interval."""
        from .intervals import check_interval_options

        return check_interval_options(self.ci, self.bootstrap, self.ci_method, self.ci_level, self.ci_estimand,
                                      self.resample_attributes)


@dataclass(frozen=True)
class ResultLabels:
    """What a result computed from vectors is labelled with (the ``*_from_vectors`` functions).

    ``calibration`` names the calibration already applied to the vectors
    (``"none"`` for raw); ``dropped``, ``case_folded`` and ``fallback`` report
    the words a lookup lost, folded or encoded in a template.
    """

    test: str = "custom"
    bias_type: str = ""
    model: str = ""
    calibration: str = "none"
    dropped: tuple[str, ...] = ()
    case_folded: tuple[str, ...] = ()
    fallback: tuple[str, ...] = ()


_KINDS = {"permutation": PermutationOptions, "interval": IntervalOptions, "labels": ResultLabels}


def gather(options: Mapping[str, Any], *, where: str, permutation: PermutationOptions | None = None,
           interval: IntervalOptions | None = None, labels: ResultLabels | None = None,
           takes: tuple[str, ...] = ("permutation", "interval"), others: tuple[str, ...] = ()
           ) -> tuple[Any, Any, Any]:
    """The option objects ``takes`` names, each updated with the flat keywords among ``options`` that it owns.

    Returns ``(permutation, interval, labels)`` (None for a kind ``where`` does
    not take). A keyword that none of them owns is a :class:`ConfigError`
    naming ``where`` and the keyword (did-you-mean among their fields,
    ``others``, the keywords ``where`` took itself, and the named keywords of
    the public function ``where``, :func:`isoeat._surface.keywords`); so is an object of the wrong type.
    """
    from .._surface import keywords
    from .._validate import suggest

    given = {"permutation": permutation, "interval": interval, "labels": labels}
    out: dict[str, Any] = {}
    for kind in ("permutation", "interval", "labels"):
        cls = _KINDS[kind]
        obj = given[kind]
        if obj is not None and not isinstance(obj, cls):
            raise ConfigError(f"{where}: {kind} must be a {cls.__name__}, got {type(obj).__name__}")
        out[kind] = (obj or cls()) if kind in takes else None
    owners = {f.name: kind for kind in takes for f in fields(_KINDS[kind])}
    unknown = [k for k in options if k not in owners]
    if unknown:
        names = [*owners, *others, *keywords(where)]
        raise ConfigError(f"{where}: unknown option {unknown[0]!r}{suggest(unknown[0], names, quote=False)}")
    for kind in takes:
        mine = {k: v for k, v in options.items() if owners[k] == kind}
        if mine:
            out[kind] = replace(out[kind], **{k: tuple(v) if isinstance(v, list) else v for k, v in mine.items()})
    return out["permutation"], out["interval"], out["labels"]


def own(cls: type[Any], given: Any, options: dict[str, Any], *, where: str, name: str,
        last: bool = False) -> Any:
    """A parameter object given as ``name=`` (or ``cls()``), updated with its fields given by name among
    ``options``, which are taken out of it (``seat(..., mode="templates")`` is ``sentences=SentenceOptions(
    mode="templates")``). ``last``: no other object takes the rest, so a keyword left over is a
    :class:`ConfigError` naming ``where`` and the keyword, with a did-you-mean."""
    from .._surface import keywords
    from .._validate import suggest

    if given is not None and not isinstance(given, cls):
        raise ConfigError(f"{where}: {name}= takes a {cls.__name__}(...), got {type(given).__name__}")
    names = [f.name for f in fields(cls)]
    mine = {k: options.pop(k) for k in names if k in options}
    if last and options:
        unknown = next(iter(options))
        raise ConfigError(f"{where}: unknown keyword {unknown!r}"  # as a keyword of the signature is said
                          f"{suggest(unknown, [*names, *keywords(where)], n=2, quote=False)}")
    return replace(given or cls(), **{k: tuple(v) if isinstance(v, list) else v for k, v in mine.items()})
