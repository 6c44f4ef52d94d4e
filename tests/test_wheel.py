"""The built distributions hold what an installed isoeat needs: every module, every data file the code reads.

isoeat is developed installed in editable mode, where a data file missing from the wheel goes unnoticed.
These tests build the wheel and the sdist from this checkout (or read the ones CI built and installed:
``$ISOEAT_WHEEL``, ``$ISOEAT_SDIST``) and compare their file lists with the source tree. The list of data
files is derived from the code and the tree, never written here: every non-Python file under
``src/isoeat`` must be in the wheel, and every package resource the code reads
(``importlib.resources.files(PKG).joinpath(PATH)``, ``Path(__file__).parent / NAME``) must be such a file.
A read of package data written some other way fails the test until this scanner understands it.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PKG = SRC / "isoeat"

#: Uses of ``__file__`` that do not read package data: they look for ../shared/data beside a checkout.
OUTSIDE_THE_PACKAGE = {"isoeat/similarity/benchmarks.py", "isoeat/corpora/_load.py",
                       "isoeat/backends/cache.py"}  # code_digest: the package's own .py files, whatever they are

#: Files of the sdist besides the package (its MANIFEST.in and pyproject's license-files put them there).
SDIST_EXTRAS = ("pyproject.toml", "README.md", "LICENSE", "NOTICE.md", "CITATION.cff", "CHANGELOG.md",
                "MANIFEST.in", "tests/conftest.py", "docs/ARCHITECTURE.md", "examples/paper_glove.yaml")


def source_files(pkg: Path = PKG) -> set[str]:
    """Every file of the package as the wheel names it (``isoeat/...``), caches left out."""
    return {p.relative_to(pkg.parent).as_posix() for p in pkg.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")}


def _const_str(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_files_call(node: ast.AST) -> str | None:
    """``files("isoeat.x")`` / ``resources.files(...)`` / ``importlib.resources.files(...)``: the package."""
    if isinstance(node, ast.Call) and node.args:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name == "files":
            return _const_str(node.args[0])
    return None


def _is_here(node: ast.AST) -> bool:
    """``Path(__file__).parent`` or ``Path(__file__).resolve().parent``."""
    if not (isinstance(node, ast.Attribute) and node.attr == "parent"):
        return False
    inner = node.value
    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "resolve":
        inner = inner.func.value
    return (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "Path"
            and len(inner.args) == 1 and isinstance(inner.args[0], ast.Name) and inner.args[0].id == "__file__")


def resource_reads(pkg: Path = PKG) -> tuple[set[str], list[str]]:
    """The package files the code reads (``isoeat/...``) and the reads this scanner cannot resolve.

    A read is a ``files(PKG)`` or ``Path(__file__).parent`` base followed by ``.joinpath("a", "b/c")``
    or ``/ "a"`` with constant strings. Anything else that starts from ``files(...)`` or names
    ``__file__`` is returned as unresolved (``file:line``), unless the file is in :data:`OUTSIDE_THE_PACKAGE`.
    """
    reads: set[str] = set()
    unresolved: list[str] = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg.parent).as_posix()
        tree = ast.parse(path.read_text("utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            base: list[str] | None = None
            if (p := _is_files_call(node)) is not None and p.split(".")[0] == "isoeat":
                base = p.split(".")
            elif _is_here(node):
                base = rel.split("/")[:-1]
            elif isinstance(node, ast.Name) and node.id == "__file__":
                # the __file__ inside a recognised Path(__file__)[.resolve()].parent is handled from that node
                up, inside = node, False
                for _ in range(4):
                    up = parents.get(up)
                    inside = inside or (up is not None and _is_here(up))
                if rel not in OUTSIDE_THE_PACKAGE and not inside:
                    unresolved.append(f"{rel}:{node.lineno}")
                continue
            else:
                continue
            parts, cur, ok = list(base), node, False
            while True:
                up = parents.get(cur)
                if isinstance(up, ast.Attribute) and up.attr == "joinpath" and isinstance(parents.get(up), ast.Call):
                    call = parents[up]
                    args = [_const_str(a) for a in call.args]
                    if not args or None in args:
                        break
                    parts += [seg for a in args for seg in a.split("/")]
                    cur, ok = call, True
                elif isinstance(up, ast.BinOp) and isinstance(up.op, ast.Div) and up.left is cur:
                    if (s := _const_str(up.right)) is None:
                        break
                    parts += s.split("/")
                    cur, ok = up, True
                else:
                    break
            if ok:
                reads.add("/".join(parts))
            elif rel not in OUTSIDE_THE_PACKAGE:
                unresolved.append(f"{rel}:{node.lineno}")
    return reads, unresolved


# --- the scanner itself, on a small package written here ------------------------------------------------


def test_scanner_finds_resource_reads_and_flags_what_it_cannot_resolve(tmp_path: Path) -> None:
    pkg = tmp_path / "isoeat"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "m.py").write_text(
        "from importlib import resources\nfrom pathlib import Path\n"
        "A = resources.files('isoeat.sub').joinpath('data/a.json').read_text()\n"
        "B = resources.files('isoeat').joinpath('t', 'b.txt')\n"
        "C = Path(__file__).resolve().parent / 'templates' / 'c.yaml'\n"
        "D = Path(__file__).parent / 'd.csv'\n"
        "name = 'x'\nE = resources.files('isoeat.sub').joinpath(name)\n"
        "F = Path(__file__).with_name('f.json')\n"
        "G = resources.files('numpy').joinpath('core')\n")
    reads, unresolved = resource_reads(pkg)
    assert reads == {"isoeat/sub/data/a.json", "isoeat/t/b.txt", "isoeat/sub/templates/c.yaml", "isoeat/sub/d.csv"}
    assert unresolved == ["isoeat/sub/m.py:8", "isoeat/sub/m.py:9"]


def test_every_resource_the_code_reads_is_a_file_of_the_package() -> None:
    reads, unresolved = resource_reads()
    assert not unresolved, f"package data read in a way tests/test_wheel.py cannot check: {unresolved}"
    # today's reads: the word lists and the paper's values (a new read is found by the scan, not added here)
    assert {"isoeat/wordsets/data/weat.json", "isoeat/experiments/data/paper_values.json"} <= reads
    assert reads <= source_files(), sorted(reads - source_files())


# --- the built distributions ------------------------------------------------------------------------------


def _copy_checkout(dest: Path) -> Path:
    """The checkout's files without caches and earlier build outputs (a stale build/ could hide a missing file)."""
    skip = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                  ".hypothesis", "*.pyc", "isoeat-results")
    return Path(shutil.copytree(ROOT, dest, ignore=skip, symlinks=True))


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheel and the sdist: CI's (``$ISOEAT_WHEEL``, ``$ISOEAT_SDIST``), else built here without network."""
    given = {k: os.environ.get(f"ISOEAT_{k.upper()}") for k in ("wheel", "sdist")}
    if all(given.values()):
        return {k: Path(v) for k, v in given.items()}  # type: ignore[arg-type]
    if not (ROOT / "pyproject.toml").is_file():
        pytest.skip("no checkout to build from")
    base = tmp_path_factory.mktemp("dists")
    tree = _copy_checkout(base / "tree")
    out = base / "out"
    built = {}
    for kind in ("wheel", "sdist"):  # one process each: setuptools' backend keeps state between two calls
        code = (f"import sys; from setuptools import build_meta as b; "
                f"open(sys.argv[2], 'w').write(b.build_{kind}(sys.argv[1]))")
        proc = subprocess.run([sys.executable, "-c", code, str(out), str(base / kind)], cwd=tree,
                              capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr[-3000:]
        built[kind] = out / (base / kind).read_text()
    return built


def test_wheel_holds_every_module_and_data_file(dists: dict[str, Path]) -> None:
    with zipfile.ZipFile(dists["wheel"]) as zf:
        names = set(zf.namelist())
    expected = source_files()
    assert {"isoeat/py.typed", "isoeat/wordsets/data/weat.json"} <= expected  # the scan sees the tree
    missing = sorted(expected - names)
    assert not missing, f"the wheel lacks {missing} (pyproject.toml [tool.setuptools.package-data])"
    stray = sorted(n for n in names if n.startswith("isoeat/") and n not in expected)
    assert not stray, f"the wheel holds files the source tree does not: {stray}"


def test_wheel_metadata_states_version_licence_and_command(dists: dict[str, Path]) -> None:
    from isoeat._version import __version__

    with zipfile.ZipFile(dists["wheel"]) as zf:
        info = f"isoeat-{__version__}.dist-info"
        meta = HeaderParser().parsestr(zf.read(f"{info}/METADATA").decode("utf-8"))
        names = set(zf.namelist())
        entry = zf.read(f"{info}/entry_points.txt").decode("utf-8")
    assert dists["wheel"].name.startswith(f"isoeat-{__version__}-")
    assert meta["Version"] == __version__
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert {f"{info}/licenses/LICENSE", f"{info}/licenses/NOTICE.md"} <= names
    assert "isoeat = isoeat.cli:console" in entry


def test_sdist_holds_the_package_licence_citation_and_tests(dists: dict[str, Path]) -> None:
    from isoeat._version import __version__

    top = f"isoeat-{__version__}"
    with tarfile.open(dists["sdist"]) as tf:
        names = {n.removeprefix(top + "/") for n in tf.getnames()}
    missing = sorted({f"src/{f}" for f in source_files()} - names) + [f for f in SDIST_EXTRAS if f not in names]
    assert not missing, f"the sdist lacks {missing} (MANIFEST.in)"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_installed_package_is_not_the_checkout() -> None:
    """In CI's wheel environment ($ISOEAT_TEST_INSTALLED=1) the tests import the installed isoeat, not src/."""
    if os.environ.get("ISOEAT_TEST_INSTALLED") != "1":
        pytest.skip("only in the environment where the wheel is installed (.ci/run sets ISOEAT_TEST_INSTALLED=1)")
    import isoeat

    here = Path(isoeat.__file__).resolve()
    assert SRC not in here.parents and "site-packages" in here.parts, here
    from importlib.metadata import distribution

    dist = distribution("isoeat")
    assert dist.version == isoeat.__version__
    # a wheel install, not an editable one (PEP 610: an editable install says so in direct_url.json)
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    assert direct.get("dir_info", {}).get("editable") is not True, direct
