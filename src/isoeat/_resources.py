"""Resource failures in one line: what ran out (memory, disk, files, threads, a library that could not load).

:func:`describe` turns an exception that says a resource ran out into the
line the command prints (``isoeat: error: <line>``); anything else — a bug —
gives None and keeps its traceback. ``cli.py`` asks it about every exception
a command ends with, including those raised while the command's modules are
imported (``import isoeat`` itself loads no numpy, so even a library that
cannot be mapped under a memory limit is caught here).
"""

from __future__ import annotations

import errno
import re
from typing import Any

__all__ = ["describe", "describe_chain", "underlying", "address_space_limit", "probe_numpy", "torch_headroom",
           "one_blas_thread"]

_LIMIT = ("the process's memory limit (ulimit -v, prlimit --as, a container or job limit) or the machine's memory "
          "was reached")
_WAY = "free memory or raise the limit, or ask for less (a smaller --reference-size, fewer tests or permutations)"
#: words of a message that say memory (or address space) ran out
_MEMORY_WORDS = ("cannot allocate memory", "can't allocate memory", "out of memory", "failed to map segment",
                 "unable to allocate", "memory allocation", "std::bad_alloc", "mmap failed", "malloc of size")


def _said(exc: BaseException) -> str:
    text = " ".join(str(exc).split())  # one line, whatever the library wrote
    return f" ({text[:200]}{'...' if len(text) > 200 else ''})" if text else ""


def _memory(what: str, exc: BaseException) -> str:
    return f"out of memory {what}{_said(exc)}: {_LIMIT}; {_WAY}"


def _is_memory_text(text: str) -> bool:
    low = text.lower()
    return any(w in low for w in _MEMORY_WORDS)


def describe(exc: BaseException, where: str = "", elsewhere: str = "") -> str | None:
    """One line naming the resource that ran out, or None when ``exc`` is not a resource failure.

    Parameters
    ----------
    exc : BaseException
        What the command ended with.
    where : str
        What was running (``"while running isoeat weat"``), put in the line.
    elsewhere : str
        For a full disk: how the command could write elsewhere, in its own words (``"write elsewhere (--out)"``;
        ``cli`` names the command's own options); empty: the line says only to free space.

    Examples
    --------
    >>> describe(OSError(28, "No space left on device", "out/cells/W6.json"), elsewhere="write elsewhere (--out)")
    'disk full: out/cells/W6.json: No space left on device; free space on that disk, or write elsewhere (--out)'
    >>> describe(ValueError("a bug")) is None
    True
    """
    what = where or "while running"
    module = type(exc).__module__ or ""
    if isinstance(exc, MemoryError):  # pyarrow's ArrowMemoryError too
        return _memory(what, exc)
    if isinstance(exc, SystemError) and "without exception set" in str(exc) and address_space_limit() is not None:
        # CPython's import machinery failing an allocation under an address-space limit without a MemoryError
        # (seen importing a command's modules at 150 MB); with no limit it stays a bug, with its traceback
        return _memory(what, exc)
    if isinstance(exc, OSError) and not module.startswith("pyarrow"):
        name = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        if exc.errno == errno.ENOMEM:
            return _memory(what, exc)
        other = f", or {elsewhere}" if elsewhere else ""
        if exc.errno == errno.ENOSPC:
            return f"disk full: {name}{exc.strerror or exc}; free space on that disk{other}"
        if exc.errno == getattr(errno, "EDQUOT", -1):
            return f"disk quota exceeded: {name}{exc.strerror or exc}; free space{other}"
        if exc.errno in (errno.EMFILE, errno.ENFILE):
            return f"too many open files{_said(exc)}: raise the limit (ulimit -n) or close other programs"
        return None
    if isinstance(exc, ImportError):
        if (exc.name or "").split(".")[0] == "isoeat":
            return None  # isoeat's own import: a bug
        shared = re.search(r"(lib[\w.+-]*\.so[\w.]*|[\w.+-]+\.(?:dll|dylib))", str(exc))
        library = shared.group(1) if shared else (exc.name or "").split(".")[0] or "a library"
        if _is_memory_text(str(exc)):
            return (f"cannot load the library {library}{_said(exc)}: out of memory or address space while loading "
                    f"it; {_LIMIT}; {_WAY}")
        if "shared object" in str(exc) or "DLL load failed" in str(exc):
            return (f"cannot load the library {library}{_said(exc)}: its compiled part did not load; reinstall "
                    f"it (pip install --force-reinstall {library})")
        return None
    if module.startswith("pyarrow"):
        if _is_memory_text(str(exc)):
            return _memory(f"{what} (pyarrow)", exc)
        return None
    if isinstance(exc, RuntimeError):
        if "can't start new thread" in str(exc):
            return (f"cannot start a thread{_said(exc)}: the process's thread or memory limit was reached; "
                    f"{_WAY}")
        if _is_memory_text(str(exc)):  # torch's allocator, BLAS
            return _memory(what, exc)
    return None


def describe_chain(exc: BaseException, where: str = "") -> str | None:
    """:func:`describe` of the exception ``exc`` was raised from (numpy wraps a library that did not load in an
    ImportError of advice), else of ``exc`` itself."""
    cause: Any = exc.__cause__ or exc.__context__
    return (describe(cause, where) if cause is not None else None) or describe(exc, where)


def underlying(exc: BaseException, where: str = "") -> str | None:
    """The resource failure an error of isoeat's was raised while handling (a missing-package message raised as
    a library could not be mapped into memory), or None: the chain of causes, three deep."""
    seen: Any = exc.__cause__ or exc.__context__
    for _ in range(3):
        if seen is None:
            return None
        line = describe(seen, where)
        if line:
            return line
        seen = seen.__cause__ or seen.__context__
    return None


def address_space_limit() -> int | None:
    """The process's address-space limit in bytes (``ulimit -v``, ``prlimit --as``), or None when unlimited."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return None
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return None if soft in (resource.RLIM_INFINITY, -1) else int(soft)


def probe_numpy() -> str | None:
    """Under an address-space limit, whether numpy (and its BLAS) can load at all: None, or the line to print.

    OpenBLAS reserves its buffers when numpy is imported and, when the limit
    forbids them, prints its own message and ends the process from C, before
    any Python handler runs. So under a limit (only then: it costs a process
    start) a child process with the same limit tries first.
    """
    import subprocess
    import sys

    limit = address_space_limit()
    if limit is None or "numpy" in sys.modules:
        return None
    try:
        proc = subprocess.run([sys.executable, "-c", "import numpy"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        return describe(exc) if isinstance(exc, OSError) else None
    if proc.returncode == 0:
        return None
    lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
    said = next((ln for ln in reversed(lines) if _is_memory_text(ln)), lines[-1] if lines else "")  # what ran out
    return (f"cannot load numpy under the address-space limit of {limit / 1e6:.0f} MB (ulimit -v, prlimit --as): "
            f"out of memory while loading it ({said[:200]}); raise the limit")


#: address space torch's first work needs beyond its libraries (transformers, a small model, a first batch)
TORCH_WORK_MARGIN = 256 * 2**20


def _in_use() -> int | None:
    """This process's address space in use now (``VmSize``, bytes), or None where /proc does not say."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _torch_library_bytes() -> int | None:
    """Bytes of torch's shared libraries (what importing it maps), found without importing it; None if unknown."""
    import importlib.util
    from pathlib import Path

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    lib = Path(spec.origin).parent / "lib"
    try:
        return sum(f.stat().st_size for f in lib.iterdir() if ".so" in f.name or f.suffix in (".dll", ".dylib"))
    except OSError:
        return None


def _thread_stacks() -> int:
    """Address space torch's thread pool reserves: one stack (``ulimit -s``, else 8 MiB) per core."""
    import os
    import resource

    soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
    stack = soft if 0 < soft < 2**30 else 8 * 2**20
    return (os.cpu_count() or 1) * stack


def torch_headroom() -> str | None:
    """Under an address-space limit, whether torch can be imported and run at all: None, or the line to print.

    Past a certain point, memory that runs out while torch loads or starts its threads ends the process from C
    (glibc's "cannot allocate memory for thread-local data: ABORT", an uncaught ``std::bad_alloc``), before any
    Python handler could print isoeat's line; whether it does depends on what else the process holds. So
    before torch is first imported under a limit, the space it needs — its libraries' size (what importing it
    maps), one stack per core for its threads and :data:`TORCH_WORK_MARGIN` — is compared with what the limit
    leaves, and the import is refused in one line when it does not fit. Costs no process start; does nothing
    without a limit, once torch is loaded, or where the sizes cannot be read.
    """
    import sys

    limit = address_space_limit()
    if limit is None or "torch" in sys.modules:
        return None
    used, libraries = _in_use(), _torch_library_bytes()
    if used is None or libraries is None:
        return None
    need = libraries + _thread_stacks() + TORCH_WORK_MARGIN
    if used + need <= limit:
        return None
    mb = 1e6
    return (f"cannot load torch under the address-space limit of {limit / mb:.0f} MB (ulimit -v, prlimit --as): "
            f"out of memory before it could load (it needs about {need / mb:.0f} MB: {libraries / mb:.0f} MB of "
            f"libraries, thread stacks and a first batch; {used / mb:.0f} MB are in use); raise the limit to at "
            f"least {(used + need) / mb:.0f} MB")


def one_blas_thread() -> Any:
    """A context in which BLAS/LAPACK use one thread (threadpoolctl, when installed; else nothing changes).

    For many small matrix products or decompositions, where BLAS threads only contend (the reference-SE refits,
    the stability redraws, the permutations of ``stats.ngroup``); the numbers are the same either way.
    """
    import contextlib

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # an optional speed-up
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
