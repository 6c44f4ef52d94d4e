"""The words of the public Python API: one keyword per concept, the old spellings as deprecation shims.

Every public function speaks the same words (issue 33): ``calibration=`` (a
name, a fitted calibrator, or a mapping where a function takes several),
``n_reference=`` (the reference sample's size), ``rng=`` (None, an int, a
Generator). The spellings they replaced are listed once, per function, in
:data:`RENAMED` (function -> old keyword -> the keyword that replaced it and the
version that removes the old one: a keyword renamed in one function is no old
spelling in another) and :data:`DEPRECATED_FUNCTIONS`; ``tests/test_api_surface.py``
checks that no public signature holds an old spelling of its own and that each
shim warns, naming its removal version, and gives the same numbers.

:func:`public` wraps a public function so that

* an old keyword of that function is renamed, with one :class:`DeprecationWarning`
  naming the new keyword and the version that removes the old one (giving both is
  a :class:`~isoeat.ConfigError`);
* an unknown keyword, a missing argument or one argument too many is a
  one-line :class:`~isoeat.ConfigError` naming the function and the argument,
  with a did-you-mean, never a raw ``TypeError`` (a function with
  ``**options`` checks its own keywords: :func:`isoeat.stats.options.gather`).

Examples
--------
>>> @public
... def sensitivity_analysis(model, *, n_reference=10):
...     return n_reference
>>> import warnings
>>> with warnings.catch_warnings(record=True) as w:
...     warnings.simplefilter("always")
...     sensitivity_analysis(None, default_size=5), str(w[0].message)  # doctest: +NORMALIZE_WHITESPACE
(5, 'sensitivity_analysis: default_size= is deprecated; use n_reference= (same meaning; default_size= is
removed in isoeat 0.3.0)')
>>> sensitivity_analysis(None, n_refrence=5)
Traceback (most recent call last):
...
isoeat._errors.ConfigError: sensitivity_analysis: unknown keyword 'n_refrence'; did you mean n_reference?
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from ._errors import ConfigError
from ._validate import show, suggest

__all__ = ["REMOVED_IN", "RENAMED", "DEPRECATED_FUNCTIONS", "public", "checked_bind", "keywords", "renamed",
           "deprecated_function", "require_encoder"]

#: The release that removes the shims of issue 33 (deprecated in 0.1.0: one minor release of warnings).
REMOVED_IN = "0.3.0"

#: Public function -> {old keyword: (the keyword that replaced it, the version that removes the old one)}: the
#: keywords each function took before issue 33 (the one list of the shims). A keyword is renamed only in the
#: functions listed with it: ``calibrator`` is :func:`isoeat.save_calibrator`'s own first parameter.
RENAMED: dict[str, dict[str, tuple[str, str]]] = {
    "compare_calibration": {"calibrator": ("calibration", REMOVED_IN)},
    "ceat": {"calibrators": ("calibration", REMOVED_IN)},
    "ceat_from_contexts": {"calibrators": ("calibration", REMOVED_IN)},
    "run_experiment": {"calibrators": ("calibration", REMOVED_IN)},
    "anisotropy": {"reference_size": ("n_reference", REMOVED_IN)},
    "compare_anisotropy": {"reference_size": ("n_reference", REMOVED_IN)},
    "sensitivity_analysis": {"default_size": ("n_reference", REMOVED_IN)},
}

#: Old public function -> (what replaced it, the version that removes it): a shim that warns, then does the same.
DEPRECATED_FUNCTIONS: dict[str, tuple[str, str]] = {
    "fit_whitener": ("fit_calibrator(model, 'zca', n_reference=..., eps=..., reference_kwargs={...})", REMOVED_IN),
}

_F = TypeVar("_F", bound=Callable[..., Any])

#: The named keywords of each function wrapped by :func:`public`, by name: a function that gathers its other
#: keywords (:func:`isoeat.stats.options.gather`) suggests among these too.
_KEYWORDS: dict[str, tuple[str, ...]] = {}


def keywords(where: str) -> tuple[str, ...]:
    """The named keywords of the public function ``where`` (empty when it is not one)."""
    return _KEYWORDS.get(where, ())


def _caller_level(where: str) -> int:
    """The ``stacklevel`` of the frame that called the public function ``where``: past this module's frames and
    ``where``'s own (so the warning names the user's line; a command of the CLI is a module of isoeat, whose
    warnings Python's default filter hides)."""
    import sys

    here = _caller_level.__code__.co_filename  # this module's frames
    frame: Any = sys._getframe(1)  # a FrameType, then None past the outermost caller
    level = 1
    while frame is not None and (frame.f_code.co_filename == here or frame.f_code.co_name == where):
        frame, level = frame.f_back, level + 1
    return level


def _warn(where: str, old: str, new: str, removal: str) -> None:
    warnings.warn(f"{where}: {old}= is deprecated; use {new}= (same meaning; {old}= is removed in isoeat {removal})",
                  DeprecationWarning, stacklevel=_caller_level(where))


def renamed(kwargs: dict[str, Any], where: str, accepts: Any) -> dict[str, Any]:
    """``kwargs`` with each old keyword of ``where`` (:data:`RENAMED`) whose new name ``accepts`` holds, renamed
    (warned, naming the version that removes it). Giving an old keyword and its new one together is a
    :class:`~isoeat.ConfigError`; a function not listed renames nothing.
    """
    out = dict(kwargs)
    for old, (new, removal) in RENAMED.get(where, {}).items():
        if old in out and new in accepts:
            if new in out:
                raise ConfigError(f"{where}: give {new}= only ({old}= is its deprecated spelling)")
            _warn(where, old, new, removal)
            out[new] = out.pop(old)
    return out


def _bind_error(where: str, sig: inspect.Signature, args: tuple, kwargs: dict[str, Any]) -> ConfigError:
    """The one-line error for a call that does not fit ``sig``: the keyword, argument or count named."""
    params = sig.parameters
    takes_var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
    names = [n for n, p in params.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if not takes_var_kw:
        for k in kwargs:
            if k in params and params[k].kind is inspect.Parameter.POSITIONAL_ONLY:
                return ConfigError(f"{where}: give {k} by position ({where}({k}, ...)), not as {k}=")
            if k not in params:
                return ConfigError(f"{where}: unknown keyword {k!r}{suggest(k, names, n=2, quote=False)}")
    positional = [n for n, p in params.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(args) > len(positional) and not any(p.kind is p.VAR_POSITIONAL for p in params.values()):
        keywords = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY]
        return ConfigError(f"{where} takes {len(positional)} positional argument(s) ({', '.join(positional)}), "
                           f"got {len(args)}; give the others by keyword ({', '.join(keywords[:6])}, ...)")
    given = set(positional[: len(args)]) | set(kwargs)
    for k in kwargs:
        if k in positional[: len(args)]:
            return ConfigError(f"{where}: {k} given twice (by position and by keyword)")
    missing = [n for n, p in params.items() if p.default is p.empty and n not in given
               and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if missing:
        return ConfigError(f"{where}: missing argument {missing[0]!r}")
    return ConfigError(f"{where}: these arguments do not fit its signature {sig}")


def checked_bind(sig: inspect.Signature, where: str, *args: Any, **kwargs: Any) -> inspect.BoundArguments:
    """``sig.bind(*args, **kwargs)`` with old keywords renamed (warned) and a one-line error for a call that does
    not fit (what :func:`public` does for a function's own signature, for one that passes its keywords on)."""
    kwargs = renamed(kwargs, where, sig.parameters)
    try:
        return sig.bind(*args, **kwargs)
    except TypeError:
        raise _bind_error(where, sig, args, kwargs) from None


def public(fn: _F) -> _F:
    """Wrap a public function: old keywords renamed (:data:`RENAMED`, warned), a call that does not fit its
    signature a one-line :class:`~isoeat.ConfigError`. The signature (``inspect.signature``) stays ``fn``'s."""
    if getattr(fn, "__isoeat_public__", False):
        return fn
    sig = inspect.signature(fn)
    where = fn.__name__
    _KEYWORDS.setdefault(where, tuple(n for n, p in sig.parameters.items()
                                      if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)))

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bound = checked_bind(sig, where, *args, **kwargs)
        return fn(*bound.args, **bound.kwargs)

    wrapper.__isoeat_public__ = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def deprecated_function(name: str) -> None:
    """Warn once per call that ``name`` (a key of :data:`DEPRECATED_FUNCTIONS`) is deprecated, naming its successor."""
    successor, removal = DEPRECATED_FUNCTIONS[name]
    warnings.warn(f"{name} is deprecated; use {successor} ({name} is removed in isoeat {removal})",
                  DeprecationWarning, stacklevel=_caller_level(name))


def require_encoder(model: Any, where: str, *, needs: tuple[str, ...] = ("lookup",),
                    example: str = "glove-6b-50d") -> None:
    """A one-line :class:`~isoeat.ConfigError` when ``model`` has none of the methods ``needs`` names: no model at
    all (``None``, a model's name, a path). What a model of the wrong kind lacks, the function says itself."""
    if any(hasattr(model, n) for n in needs):
        return
    hint = (f"; load it first: isoeat.load_model({model!r})" if isinstance(model, str) and len(model) < 200
            else f", e.g. isoeat.load_model({example!r})")
    raise ConfigError(f"{where}: model must be an encoder with {' or '.join(n + '()' for n in needs)}{hint}; "
                      f"got {show(model)}")
