"""A resource failure ends in one line naming what ran out: memory, disk, a library that could not load.

Under an address-space limit (``prlimit --as``) a command fails wherever the
limit is reached first — importing numpy or pyarrow, mapping a shared
library, reading the vocabulary, allocating a matrix — and the way it fails
differs (``MemoryError``, ``ImportError: failed to map segment``, an
``ArrowMemoryError``, ``OSError: Cannot allocate memory``). The commands under
such limits are cases of the robustness catalogue (RESOURCE_CASES in
``tests/robustness/test_bad_input_trust.py``); here: each kind of failure
described, a bug kept as a bug, a contextual model under a limit.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import isoeat
from isoeat._resources import describe

SRC = Path(isoeat.__file__).resolve().parent.parent
PRLIMIT = shutil.which("prlimit")


def _env(tmp: Path) -> dict:
    env = dict(os.environ)
    env.update(PYTHONPATH=os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")]), ISOEAT_CACHE_DIR=str(tmp / "cache"),
               MPLCONFIGDIR=str(tmp / "mpl"))
    return env


# --- the one-line description, case by case -----------------------------------------------------
def _arrow_memory_error():
    pa = pytest.importorskip("pyarrow")
    return pa.lib.ArrowMemoryError("malloc of size 4096 failed")


DESCRIBED = [
    ("MemoryError", lambda: MemoryError(), "out of memory"),
    ("MemoryError with text", lambda: MemoryError("Unable to allocate 3.2 GiB for an array"), "Unable to allocate 3.2 GiB"),
    ("ENOMEM", lambda: OSError(errno.ENOMEM, "Cannot allocate memory"), "out of memory"),
    ("ENOSPC", lambda: OSError(errno.ENOSPC, "No space left on device", "/x/cells/a.json"), "disk full"),
    ("EDQUOT", lambda: OSError(errno.EDQUOT, "Disk quota exceeded", "/x/a"), "disk quota"),
    ("EMFILE", lambda: OSError(errno.EMFILE, "Too many open files"), "too many open files"),
    ("library map", lambda: ImportError("libarrow.so.2600: failed to map segment from shared object", name="pyarrow.lib"),
     "cannot load the library libarrow.so.2600"),
    ("library nomem", lambda: ImportError("libopenblas.so: cannot allocate memory in static TLS block"),
     "cannot load the library"),
    ("arrow memory", _arrow_memory_error, "out of memory"),
    ("thread", lambda: RuntimeError("can't start new thread"), "cannot start a thread"),
    ("torch allocator", lambda: RuntimeError("[enforce fail at alloc_cpu.cpp:83] DefaultCPUAllocator: can't allocate "
                                             "memory: you tried to allocate 123 bytes"), "out of memory"),
]


@pytest.mark.parametrize("name, make, expected", DESCRIBED, ids=[c[0] for c in DESCRIBED])
def test_each_resource_failure_is_named(name, make, expected):
    line = describe(make())
    assert line is not None and expected in line and "\n" not in line, line


@pytest.mark.parametrize("exc", [ValueError("bug"), KeyError("x"), RuntimeError("some bug"),
                                 ImportError("cannot import name 'x' from 'isoeat.stats'", name="isoeat.stats")])
def test_a_bug_is_not_a_resource_failure(exc):
    assert describe(exc) is None  # it keeps its traceback


def test_the_cli_turns_a_memory_error_into_one_line(monkeypatch, capsys, glove):
    from isoeat.cli import main
    from isoeat.commands import core

    def boom(*a, **kw):
        raise MemoryError("Unable to allocate 7.5 GiB for an array with shape (1000000, 1000)")

    monkeypatch.setattr(core, "weat", boom, raising=False)
    monkeypatch.setattr("isoeat.stats.weat.weat", boom)
    assert main(["weat", "--test", "W6"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("isoeat: error: out of memory") and err.count("\n") == 1 and "7.5 GiB" in err, err


def test_import_isoeat_loads_no_numpy():
    code = "import sys, isoeat, isoeat.cli; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(SRC)}, check=True).stdout
    assert out.strip() == "False"


def _missing_package_while_out_of_memory():
    from isoeat import MissingDependencyError

    try:
        raise ImportError("libtorch_cpu.so: failed to map segment from shared object", name="torch._C")
    except ImportError:
        raise MissingDependencyError('hf: models need torch and transformers: pip install "isoeat[transformers]"') \
            from None


def test_a_missing_package_said_while_memory_ran_out_says_memory(monkeypatch, capsys):
    """Under a memory limit torch cannot be mapped; "needs torch: pip install" would send the user astray."""
    from isoeat import cliargs
    from isoeat.cli import main

    def load(args):
        _missing_package_while_out_of_memory()

    monkeypatch.setattr(cliargs, "load_model_from_args", load)
    monkeypatch.setattr("isoeat.commands.core.load_model_from_args", load)
    assert main(["weat", "--test", "W6", "--model", "minilm"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("isoeat: error: cannot load the library libtorch_cpu.so") and "pip install" not in err, err


@pytest.mark.skipif(PRLIMIT is None, reason="prlimit is not installed")
@pytest.mark.parametrize("limit", [600_000_000, 700_000_000, 900_000_000])
def test_a_contextual_model_under_a_memory_limit_ends_in_one_line(tmp_path, limit):
    """Under these limits torch used to end the process from C now and then (glibc's "cannot allocate memory for
    thread-local data: ABORT", depending on what else ran): the headroom check refuses before torch loads."""
    pytest.importorskip("torch")
    proc = subprocess.run([PRLIMIT, f"--as={limit}", sys.executable, "-m", "isoeat.cli", "weat", "--test", "W6",
                           "--model", "minilm"], capture_output=True, text=True, timeout=300, env=_env(tmp_path),
                          cwd=tmp_path)
    if proc.returncode == 0:
        return
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("isoeat: error: ") and "Traceback" not in proc.stderr, proc.stderr
    assert "pip install" not in err[0] and ("memory" in err[0] or "cannot load the library" in err[0]), err[0]


def test_torch_headroom_refuses_exactly_when_the_limit_leaves_too_little(monkeypatch):
    """The rule at its boundary: refused when in-use + libraries + stacks + margin exceeds the limit by a byte."""
    from isoeat import _resources as r

    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.setattr(r, "_in_use", lambda: 100 * 2**20)
    monkeypatch.setattr(r, "_torch_library_bytes", lambda: 400 * 2**20)
    monkeypatch.setattr(r, "_thread_stacks", lambda: 16 * 2**20)
    need = 100 * 2**20 + 400 * 2**20 + 16 * 2**20 + r.TORCH_WORK_MARGIN
    monkeypatch.setattr(r, "address_space_limit", lambda: need)
    assert r.torch_headroom() is None
    monkeypatch.setattr(r, "address_space_limit", lambda: need - 1)
    line = r.torch_headroom()
    assert line is not None and "cannot load torch" in line and "raise the limit" in line
    assert f"at least {need / 1e6:.0f} MB" in line
    monkeypatch.setattr(r, "address_space_limit", lambda: None)  # no limit: never refused
    assert r.torch_headroom() is None


def test_torch_headroom_is_one_line_through_the_command(monkeypatch, capsys):
    """require_transformers raises ResourceLimitError before importing torch; the command prints one line."""
    from isoeat import ResourceLimitError
    from isoeat import _resources as r
    from isoeat.backends import _hf

    monkeypatch.setattr(r, "torch_headroom", lambda: "cannot load torch under the address-space limit of 1 MB")
    with pytest.raises(ResourceLimitError, match="cannot load torch"):
        _hf.require_transformers()
    with pytest.raises(MemoryError):  # a MemoryError for callers who catch that
        _hf.require_sentence_transformers()


@pytest.mark.parametrize("limited", [True, False])
def test_a_system_error_without_exception_is_memory_only_under_a_limit(monkeypatch, limited):
    """CPython's import machinery, failing an allocation under ``prlimit --as`` (150 MB), raised
    ``SystemError: error return without exception set`` (seen 1 run in 3 of ``isoeat weat --test W6``): under an
    address-space limit that is the limit, said in one line; without one it stays a bug (None: its traceback)."""
    from isoeat import _resources

    monkeypatch.setattr(_resources, "address_space_limit", lambda: 150_000_000 if limited else None)
    line = describe(SystemError("error return without exception set"), "while running isoeat weat")
    assert (line is not None and line.startswith("out of memory while running isoeat weat")) == limited
    assert describe(SystemError("some other internal error")) is None  # only the allocation-failure form
