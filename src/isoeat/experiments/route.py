"""The one calibrator route: how a calibrator is fitted, with or without reference-SE and the stability redraws.

``isoeat run`` (quick and grid), ``isoeat reproduce`` (a config for the runner) and
:func:`isoeat.compare_calibration` fit their calibrators here, so one protocol gives one table:

* a plain fit (:meth:`Engine.fit <isoeat.experiments.engine.Engine.fit>` on the reference sample);
* the same, plus the stability redraws of a static model's rows in shards (:func:`fit_stability`: the
  calibrator itself is the plain fit, the redraws go into its metadata);
* a sharded fit (:func:`~isoeat.experiments.reference.fit_reference`): ``size="auto"``, ``shards`` given, or
  the redraws of a contextual model (whose reference is split into shards to be redrawn): the reference-SE of
  every calibrated d, and the redraws of the same shards.

:class:`Route` is the parameter object (the config's ``settings.reference`` and ``settings.stability``, the
command's ``--reference-size/--reference-shards/--reference-tolerance/--reference-max/--stability``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .._errors import ConfigError
from .._types import streams_reference
from ._fitoptions import FitOptions
from .reference import DEFAULT_SHARDS, ReferenceOptions

__all__ = ["Route", "FitOptions", "fit_route", "with_redraws", "stability_replicates"]


@dataclass(frozen=True)
class Route:
    """How a calibrator's reference sample is used: its ``size`` (an int or ``"auto"``), its shards, ``auto``'s
    stopping rule (``reference``), the stability marks (``stability``: ``"auto"``, ``"off"`` or R redraws) and
    a static model's reference text."""

    size: int | str = 100_000
    reference: ReferenceOptions = field(default_factory=ReferenceOptions)
    stability: int | str = "auto"
    text: str | None = None

    @classmethod
    def of_settings(cls, settings: Any, text: str | None = None) -> Route:
        """The route of a config's ``settings`` (:class:`~isoeat.experiments.config.Settings`)."""
        r = settings.reference
        return cls(size=r.size, reference=ReferenceOptions(shards=r.shards, tolerance=r.tolerance,
                                                           max_size=r.max_size),
                   stability=settings.stability, text=text)

    @property
    def auto(self) -> bool:
        return self.size == "auto"

    def replicates(self, model: Any, calibration: Any, calibrator: Any = None) -> int:
        """The redraws of the stability marks (0: none; :func:`stability_replicates`)."""
        return stability_replicates(self.stability, model, calibrator, calibration,
                                    self.auto or self.reference.shards is not None)

    def sharded(self, model: Any, replicates: int) -> bool:
        """Whether the fit is :func:`fit_reference`'s: ``auto``, shards given, or a contextual model's redraws."""
        contextual = streams_reference(model)
        return self.auto or self.reference.shards is not None or bool(replicates and contextual)

    def key(self, model: Any, calibration: Any, tests: Sequence[Any]) -> dict[str, Any] | None:
        """What a sharded fit adds to its calibrator's request (None: a plain fit, whose request is as before)."""
        reps = self.replicates(model, calibration)
        if not self.sharded(model, reps):
            return None
        from .config import test_hash

        o = self.reference
        return {"size": self.size, "shards": o.shards, "replicates": reps,
                **({"tolerance": o.tolerance, "max_size": o.max_size,
                    "tests": sorted(test_hash(t) for t in tests)} if self.auto else {})}


def fit_route(engine: Any, tests: Sequence[Any], name: str, params: dict[str, Any] | None, route: Route,
              spec: Any, options: FitOptions | None = None) -> tuple[Any, dict[str, float]]:
    """The calibrator ``name`` (``params``) of ``engine``'s model fitted by ``route``, and its reference-SE by
    test (empty without shards). ``spec``: the :class:`~isoeat.calibration.sample.ReferenceSpec` of a plain fit."""
    o = options or FitOptions()
    model = engine.model
    replicates = route.replicates(model, name)
    reference_kwargs = {"text": route.text} if route.text else {}
    if route.sharded(model, replicates):
        from ..labels import classify_change
        from .reference import fit_reference

        ref = route.reference
        fit = fit_reference(model, tests, calibration=name, params=params, size=route.size,
                            shards=DEFAULT_SHARDS if ref.shards is None else ref.shards, tolerance=ref.tolerance,
                            max_size=ref.max_size, fit=replace(o, classify=classify_change,
                                                               reference_kwargs=reference_kwargs),
                            seed=engine.seed, replicates=replicates)
        return fit.calibrator, dict(fit.reference_se)
    return with_redraws(engine, engine.fit(name, params, spec), tests, name, params, route, o), {}


def with_redraws(engine: Any, calibrator: Any, tests: Sequence[Any], name: str, params: dict[str, Any] | None,
                 route: Route, options: FitOptions | None = None) -> Any:
    """A plain fit with the stability redraws ``route`` asks for: a static model's rows in shards, redrawn (no
    jackknife, no second fit; :func:`~isoeat.experiments.stability.fit_stability`), in its metadata. Also a saved
    calibrator reused by a grid that grew: the redraws of every test are drawn again, the same for the old ones."""
    o = options or FitOptions()
    replicates = route.replicates(engine.model, name)
    if replicates:
        from .stability import RedrawPlan, fit_stability

        st = fit_stability(engine.model, tests, RedrawPlan(size=int(route.size), replicates=replicates,
                                                           seed=engine.seed),
                           calibration=name, params=params,
                           reference_kwargs={"text": route.text} if route.text else {},
                           ddof=o.ddof, min_coverage=o.min_coverage)
        calibrator.metadata_ = {**(getattr(calibrator, "metadata_", {}) or {}), **st.metadata()}
    return calibrator


def stability_replicates(stability: Any, model: Any, calibrator: Any, calibration: Any, sharded: bool) -> int:
    """The redraws of the stability marks ``stability`` asks for (0: none): ``compare_calibration(stability=...)``
    and ``isoeat run --stability`` (``calibrator``: one fitted elsewhere, else None)."""
    from ..calibration import make_calibrator
    from .reference import DEFAULT_REPLICATES, check_replicates

    if stability in ("off", 0, None, False):
        return 0
    fitted_here = calibrator is None and isinstance(calibration, str) and calibration != "none"
    if stability == "auto":
        if not fitted_here:
            return 0
        if not hasattr(type(make_calibrator(calibration)), "from_statistics"):
            return 0
        return DEFAULT_REPLICATES if sharded or not streams_reference(model) else 0
    r = check_replicates(stability, "stability")
    if not fitted_here:
        raise ConfigError("stability: the marks refit the calibrator on redraws of its reference sample; not with "
                          "a calibrator fitted elsewhere (give a calibration name such as 'zca')")
    if not hasattr(type(make_calibrator(calibration)), "from_statistics"):
        raise ConfigError(f"stability is not available with calibration {calibration!r}: the marks refit the "
                          "calibrator from the merged statistics of redraws of its reference shards, which only "
                          "'zca' can; drop the marks or calibrate with 'zca'")
    return r
