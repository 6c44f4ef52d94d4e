"""The ``isoeat`` command.

Every user mistake ends as one line ``isoeat: error: ...`` on stderr and exit
status 2; results go to stdout (and, with ``--out``, to files written
atomically).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ._resources import describe_chain  # imported now: under a memory limit an import in the handler fails too

#: said when even the line of a memory failure cannot be built (no allocation left for it)
_NO_MEMORY = "isoeat: error: out of memory: the process's memory limit or the machine's memory was reached\n"

__all__ = ["main", "build_parser"]


class _Formatter(argparse.HelpFormatter):
    """Wraps descriptions and option help as usual; prints a text of several lines (the examples) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" not in text:
            return super()._fill_text(text, width, indent)
        return "".join(indent + line for line in text.splitlines(keepends=True))


class _OneSpelling(argparse.Action):
    """Mixed into every action of the parser: two spellings of one option given together (``--test W6 --tests
    W7``, ``--calibrator A --whitener B``, ``--progress --no-progress``) are an error naming both, never the last
    one silently. One spelling given twice stays argparse's (the last wins); flags that only switch on (``-q
    --quiet``) and repeatable options are left alone."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if option_string and (self.nargs != 0 or isinstance(self, argparse.BooleanOptionalAction)) and not isinstance(
                self, (argparse._AppendAction, argparse._ExtendAction)):
            seen = namespace.__dict__.setdefault("_spellings", {})
            first = seen.setdefault(self.dest, option_string)
            if first != option_string:
                parser.error(f"{first} and {option_string} are two spellings of one option; give it once")
        super().__call__(parser, namespace, values, option_string)  # type: ignore[misc]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line with a pointer to ``--help`` (no usage block).

    Its sub-command parsers share its help formatter: each command's ``epilog`` lists examples.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)
        for name, cls in list(self._registries["action"].items()):  # every action says which spelling set it
            if isinstance(cls, type) and issubclass(cls, argparse.Action) and not issubclass(cls, _OneSpelling):
                self.register("action", name, type(cls.__name__, (_OneSpelling, cls), {}))

    def add_argument(self, *args: Any, **kwargs: Any) -> Any:  # noqa: D102 - an action given as a class too
        cls = kwargs.get("action")
        if isinstance(cls, type) and issubclass(cls, argparse.Action) and not issubclass(cls, _OneSpelling):
            kwargs["action"] = type(cls.__name__, (_OneSpelling, cls), {})
        return super().add_argument(*args, **kwargs)

    def error(self, message: str) -> Any:  # noqa: D102 - argparse's hook
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:  # noqa: D102 - argparse's
        ns, extras = self.parse_known_args(args, namespace)
        if extras:  # the command's own line and --help, and the commands that do take the option
            own = getattr(ns, "_parser", None) or self
            own.error(f"unrecognized arguments: {' '.join(extras)}{_taken_by(extras)}")
        return ns


def _taken_by(extras: list[str]) -> str:
    """``"; --convention is an option of scweat, weat"`` for the first unknown option another command takes."""
    opt = next((w.split("=", 1)[0] for w in extras if w.startswith("--")), "")
    if not opt:
        return ""
    subs = [a for a in build_parser(None)._actions if isinstance(a, argparse._SubParsersAction)]
    names = sorted(n for a in subs for n, p in a.choices.items() if opt in p._option_string_actions)
    return f"; {opt} is an option of {', '.join(names)}" if names else ""


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """The sub-command action: each command's ``--help`` line comes from :data:`isoeat.commands.COMMANDS`."""

    def add_parser(self, name: str, **kwargs: Any) -> Any:  # noqa: D102 - argparse's
        from .commands import summary

        kwargs.setdefault("help", summary(name))
        return super().add_parser(name, **kwargs)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``isoeat`` argument parser.

    ``command`` None: every command's parser (the tests walk them all). A command's name: only the parsers of
    the module that holds it (``isoeat weat ...`` imports no other command module). ``""``: each command a bare
    entry with its ``--help`` line (``isoeat --help``, ``isoeat --version``: no command module, no numpy).
    """
    from . import __version__
    from .commands import COMMANDS

    parser = _Parser(
        prog="isoeat",
        description=DESCRIPTION,
        epilog="examples:\n  isoeat run                       # W1..W10 raw vs ZCA-whitened (paper Table A1)\n"
               "  isoeat weat --test W6 --help     # any command's options, defaults and examples",
    )
    parser.add_argument("--version", action="version", version=f"isoeat {__version__}")
    parser.add_argument("-q", "--quiet", **_QUIET_OPTION)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", action=_Commands)
    if command == "":
        for name in COMMANDS:
            sub.add_parser(name)
        return parser
    from .cliargs import add_stat_options

    for mod in _command_modules(command):
        mod.register(sub, add_stat_options)
    for p in sub.choices.values():  # each command knows its defaults (to tell given options apart)
        p.set_defaults(_parser=p)
        p.add_argument("-q", "--quiet", **_QUIET_OPTION)  # before or after the command name
    return parser


#: ``isoeat --help``: which command answers which question (docs: README, "Commands").
DESCRIPTION = """\
Embedding association tests (WEAT, SC-WEAT, SEAT, CEAT, other bias metrics) on the raw space beside the
space calibrated against anisotropy (the ZCA whitener or another calibrator), as the paper recommends:
every measuring command takes --calibration NAME (default zca; none: the raw space only).

which command answers which question:
  does calibration change my bias results? (the paper's Table A1)     run
  one or a few tests, every statistics option                         weat
  single words (nurse, engineer) against a test's attributes          scweat
  a sentence encoder: the words in templates, or sentence stimuli     seat
  a contextual model: the effect over draws of contexts               ceat
  other bias metrics (MAC, RND, ECT, RIPA, SemAxis, ...)              metric
  three or more groups (Generalized WEAT, SAME, multiclass MAC, RNSB) ngroup
  is the space anisotropic, and does calibration fix it?              anisotropy
  does calibration cost semantic similarity?                          similarity
  is the calibrated result robust to eps, reference size, corpus?     sensitivity
  tables, figures and an HTML report of a results folder              report
  the paper's protocol on the models available here                   reproduce
  fit a calibrator once, apply it later with --calibrator FILE        whiten, whiten-distributed
  the built-in tests, a test file's template; the embedding cache     tests, cache
  a model's vectors for words or its top rows, to .npy or GloVe text  export
"""

#: ``--quiet``: set only when given (SUPPRESS), so the command's copy never overwrites the global one.
_QUIET_OPTION: dict[str, Any] = dict(
    action="store_true", default=argparse.SUPPRESS,
    help="no progress lines and no note on the embedding cache's size on stderr (default: progress as "
         "$ISOEAT_PROGRESS says: a bar on a terminal, log lines every 10 s otherwise)")


def _command_modules(command: str | None = None) -> list[Any]:
    """The modules of :mod:`isoeat.commands` that hold ``command`` (None: every command's, in ``--help`` order);
    each has ``register`` and ``COMMANDS``."""
    import importlib

    from .commands import COMMANDS, module_of

    names = [command] if command is not None else list(COMMANDS)
    return [importlib.import_module(m) for m in dict.fromkeys(module_of(n) for n in names)]


def _command_in(argv: Sequence[str]) -> str | None:
    """Which parser to build for ``argv``: the command's name where it comes first (after ``-q``/``--quiet``),
    ``""`` where no command is named (``--help``, ``--version``, nothing), None otherwise (the whole parser, so
    that argparse says what is wrong as it always did)."""
    from .commands import COMMANDS

    words = [w for w in argv if w not in ("-q", "--quiet")]
    if not words or all(w in ("-h", "--help", "--version") for w in words):
        return ""
    return words[0] if words[0] in COMMANDS else None


#: the parser of the command running (a warning names its options as an error does: ``cliargs.cli_message``)
_COMMAND_PARSER: list[argparse.ArgumentParser] = []


def _one_line_warnings() -> Any:
    """Print isoeat's own warnings as ``isoeat: warning: ...`` (no source lines), each text once per command;
    returns the old hook."""
    import warnings

    from ._errors import IsoeatWarning

    default = warnings.showwarning
    said: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001
        if issubclass(category, IsoeatWarning):
            if str(message) not in said:  # the same warning from several places: said once
                said.add(str(message))
                text = str(message)
                if _COMMAND_PARSER:  # the command's own options, not the library's keywords (allow_overlap=True)
                    from .cliargs import cli_message

                    text = cli_message(text, _COMMAND_PARSER[-1])
                sys.stderr.write(f"isoeat: warning: {text}\n")
        else:
            default(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    return default


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status.

    A resource failure (memory, disk, files, threads, a library that cannot load), wherever it happens —
    importing a command's modules included — ends in one line naming what ran out (``_resources.describe``).
    """
    import warnings

    previous = _one_line_warnings()
    try:
        from ._resources import probe_numpy

        line = probe_numpy()  # under a memory limit: can numpy load at all? (OpenBLAS would end us from C)
        if line:
            sys.stderr.write(f"isoeat: error: {line}\n")
            return 2
        return _main(argv)
    except Exception as exc:  # noqa: BLE001 - a resource failure is one line; anything else keeps its traceback
        return _resource_failure(exc, argv)
    finally:
        warnings.showwarning = previous


def _resource_failure(exc: BaseException, argv: Sequence[str] | None) -> int:
    """Exit status 2 and one line when ``exc`` says a resource ran out; raise it again otherwise (a bug)."""
    try:
        words = list(sys.argv[1:] if argv is None else argv)
        command = next((w for w in words if not w.startswith("-")), "")
        line = describe_chain(exc, f"while running isoeat {command}".rstrip())
    except MemoryError:  # not even room for the line: the short one, built in advance
        line = "" if isinstance(exc, MemoryError) else None
    if line is None:
        raise exc
    try:
        sys.stderr.write(f"isoeat: error: {line}\n" if line else _NO_MEMORY)
    except MemoryError:
        sys.stderr.write(_NO_MEMORY)
    except (OSError, ValueError):  # stderr gone: the status still says it
        pass
    return 2


def _main(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_in(words))  # only the running command's module is imported and built
    args = parser.parse_args(words)
    if args.command is None:  # bare `isoeat` shows help; `isoeat run` is the main job
        parser.print_help()
        return 0
    handlers: dict[str, Any] = {}
    for mod in _command_modules(args.command):
        handlers.update(mod.COMMANDS)
    from ._progress import set_pass_advice, set_quiet
    from .backends.cache import reset_cache_growth

    was_quiet = set_quiet(vars(args).pop("quiet", False))
    old_advice = set_pass_advice(_pass_advice(getattr(args, "_parser", None)))
    reset_cache_growth()
    _say_unknown_variables()
    parser_of_command = getattr(args, "_parser", None)
    if parser_of_command is not None:
        _COMMAND_PARSER.append(parser_of_command)
    try:
        return _dispatch(args, handlers)
    finally:
        if parser_of_command is not None:
            _COMMAND_PARSER.pop()
        set_pass_advice(old_advice)
        try:
            _report_cache()
        except OSError:  # a closed stderr: nothing to tell
            pass
        set_quiet(was_quiet)


def _pass_advice(parser: Any) -> str:
    """How this command gets a shorter reference pass, in its own options only (announced before a long pass):
    ``--reference-size`` and ``--calibrator`` where it has them."""
    options = getattr(parser, "_option_string_actions", {})
    size = "--reference-size {size} for a smaller (marked) protocol"
    if "--reference-size" in options and "--calibrator" in options:
        return f"{size}, or --calibrator FILE to reuse a saved one ('isoeat whiten --save FILE' saves one)"
    if "--reference-size" in options:
        return size
    return "the encoder's reference statistics are cached: a rerun reads them"


def _say_unknown_variables() -> None:
    """One warning per ``ISOEAT_*`` variable isoeat does not read (a typo is otherwise ignored)."""
    import warnings

    from ._env import unknown_variables
    from ._errors import IsoeatWarning

    for line in unknown_variables():
        warnings.warn(line, IsoeatWarning, stacklevel=2)


def _report_cache() -> None:
    """One stderr line per embedding cache this command grew: where it is, its size, its cap."""
    from ._progress import is_quiet
    from .backends.cache import cache_entries, cache_growth, cache_max_bytes, format_bytes

    if is_quiet():
        return
    for root, added in cache_growth().items():
        entries = cache_entries(root)
        try:
            cap = cache_max_bytes()
            limit = f"cap {format_bytes(cap)}" if cap else "no cap (set ISOEAT_CACHE_MAX, e.g. 2G)"
        except Exception:  # noqa: BLE001 - a bad variable was already reported as the command's error
            limit = "ISOEAT_CACHE_MAX not understood"
        sys.stderr.write(f"isoeat: embedding cache {root}: {format_bytes(sum(e[1] for e in entries))} in "
                         f"{len(entries):,} entries (+{format_bytes(added)} this run; {limit}; "
                         "'isoeat cache info|clear')\n")


def _dispatch(args: argparse.Namespace, handlers: dict[str, Any]) -> int:
    from ._errors import IsoeatError

    try:
        from .cliargs import check_option_effects

        check_option_effects(args)  # options that would change nothing: refused before any work
        from ._env import check_values

        check_values()  # a variable with a value isoeat does not accept: one line, whatever the command
        if getattr(args, "scheduler", None) and args.command in {"weat", "run", "scweat", "whiten", "metric"}:
            from .distributed import connect

            with connect(scheduler=args.scheduler, timeout=args.scheduler_timeout) as client:
                args._client = client
                return handlers[args.command](args)
        return handlers[args.command](args)
    except IsoeatError as exc:  # raised while a resource ran out ("needs torch" as torch ran out of memory): that
        from ._resources import underlying  # is what the line says
        from .cliargs import cli_message

        line = (underlying(exc, f"while running isoeat {args.command}")
                or cli_message(str(exc), getattr(args, "_parser", None)))
        sys.stderr.write(f"isoeat: error: {line}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("isoeat: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # disk full, permission denied, read-only file system, ...
        from ._resources import describe

        ran_out = describe(exc, f"while running isoeat {args.command}", _elsewhere(args))  # what ran out
        if ran_out is None:
            ran_out = (f"{exc.filename}: " if getattr(exc, "filename", None) else "") + str(exc.strerror or exc)
        sys.stderr.write(f"isoeat: error: {ran_out}\n")
        return 2


#: The destinations of the options that say where a command writes (the disk-full advice names the command's own).
_OUTPUT_DESTS = ("out", "save", "matrix_out", "figure")


def _elsewhere(args: argparse.Namespace) -> str:
    """How the command could write to another disk, in its own options: ``report`` writes into its experiment
    folder; another command names its output options (``--out``, ``--save``, ``--matrix-out``, ``--figure``);
    a command without one: empty (the advice is then to free space)."""
    if args.command == "report":
        return f"copy {args.dir} to a disk with room and report the copy"
    parser = getattr(args, "_parser", None)
    actions = getattr(parser, "_actions", [])
    options = [a.option_strings[0] for a in actions if a.dest in _OUTPUT_DESTS and a.option_strings]
    return f"write elsewhere ({', '.join(options)})" if options else ""


def console() -> None:
    """The ``isoeat`` command (and ``python -m isoeat.cli``): :func:`main` on ``sys.argv``, then exit with its status.

    Before the interpreter's teardown the objects alive are frozen (``gc.freeze``): the teardown's last
    collections then skip the hundred thousand objects numpy, matplotlib and isoeat keep to the end, which took
    about 0.15 s of a report's exit on a 2-core machine (``benchmarks/speed.py``). Nothing is left to a
    collection: every file isoeat writes is closed explicitly (``_io.atomic_write_*``), and exit handlers run as
    always. Only after a command that succeeded: one that failed may have run out of memory, and a teardown that
    no longer frees the objects in cycles then failed to allocate, in a screen of ``MemoryError`` lines after the
    one-line error (under ``prlimit --as``). Only the command does this: :func:`main` called from Python leaves
    the collector alone.
    """
    code = main()
    if code == 0:
        import gc

        gc.freeze()
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    console()
