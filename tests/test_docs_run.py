"""Docs that run: every command and Python block of README.md and docs/*.md is executed here.

The collector (``tests/docrun.py``) says which blocks run and how (``<!-- doc-run: ... -->`` comments above a
fence: skip with a reason, drop a line, a smaller input, a timeout, compare a transcript's output). A block that
stops working fails this test, naming the file and line of its fence.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SHARED
from docrun import Block, DocRunError, collect, doc_files

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = [b for f in doc_files(ROOT) for b in collect(f) if b.runnable]


#: One embedding cache for every block of a session (a model's vectors are encoded once, as a reader's
#: cache would hold them); never the user's own cache. Parallel workers of one run (pytest-xdist) share
#: it: the cache is written atomically, so two workers encoding the same entry only repeat work.
_CACHE: list[Path] = []


def _cache_dir(tmp: Path) -> Path:
    if not _CACHE:
        import tempfile

        run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
        if run.isalnum():  # the same id in every worker of this run, a new one for every run
            shared = Path(tempfile.gettempdir()) / f"isoeat-docs-cache-{run}"
            shared.mkdir(mode=0o700, exist_ok=True)
            _CACHE.append(shared)
        else:
            _CACHE.append(Path(tempfile.mkdtemp(prefix="isoeat-docs-cache-")))
    return _CACHE[0]


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["ISOEAT_CACHE_DIR"] = str(_cache_dir(tmp))
    env["MPLBACKEND"] = "Agg"
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("ISOEAT_PROGRESS", None)
    if SHARED is not None:
        env.setdefault("ISOEAT_DATA_DIR", str(SHARED))
    return env


def _workdir(tmp: Path) -> Path:
    work = tmp / "work"
    work.mkdir(parents=True)
    for name in ("examples", "benchmarks"):
        (work / name).symlink_to(ROOT / name, target_is_directory=True)
    if SHARED is not None:
        (work / "shared-data").symlink_to(SHARED, target_is_directory=True)
    return work


def run_block(block: Block, tmp: Path) -> subprocess.CompletedProcess:
    """Run one block in a fresh folder; raise AssertionError naming the block when it fails."""
    src = block.source()
    if ("shared-data/" in src or block.needs_data) and SHARED is None:
        pytest.skip("../shared/data not present (set ISOEAT_SHARED_DATA to run)")
    work = _workdir(tmp)
    if block.kind == "python":
        script = work / "doc_block.py"
        script.write_text(src, encoding="utf-8")
        argv = [sys.executable, str(script)]
    else:
        argv = ["bash", "-euo", "pipefail", "-c", src]
    try:
        proc = subprocess.run(argv, cwd=work, env=_env(tmp), capture_output=True, text=True,
                              timeout=block.timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{block.ident}: did not finish in {block.timeout:g} s") from None
    if proc.returncode != 0:
        tail = (proc.stdout[-2000:] + "\n" + proc.stderr[-3000:]).strip()
        raise AssertionError(f"{block.ident}: exit status {proc.returncode}\n--- block ---\n{src}--- output ---\n{tail}")
    return proc


def missing_lines(expected: str, output: str) -> list[str]:
    """The doc's non-blank lines not found in ``output`` in their order (an excerpt may skip output lines)."""
    got = iter(ln.rstrip() for ln in output.splitlines())
    missing = []
    for want in (ln.rstrip() for ln in expected.splitlines() if ln.strip()):
        if not any(ln == want for ln in got):
            missing.append(want)
            got = iter(ln.rstrip() for ln in output.splitlines())  # report every missing line, not just the first
    return missing


def compare_transcript(block: Block, tmp: Path) -> None:
    """Each command of a transcript: the lines printed under it appear in its standard output, in order."""
    for i, (cmd, expected) in enumerate(block.expected()):
        one = Block(block.path, block.line, "console", f"$ {cmd}\n", replaces=block.replaces, timeout=block.timeout,
                    needs_data=block.needs_data)
        proc = run_block(one, tmp / f"cmd{i}")
        miss = missing_lines(expected, proc.stdout)
        assert not miss, (f"{block.ident}: output of `{cmd}` differs from the doc; not found in order:\n"
                          + "\n".join(miss) + f"\n--- now ---\n{proc.stdout}")


@pytest.mark.docs
@pytest.mark.parametrize("block", [b for b in BLOCKS if b.skip is None], ids=lambda b: b.ident)
def test_doc_block_runs(block: Block, tmp_path: Path) -> None:
    if block.compare:
        compare_transcript(block, tmp_path)
    else:
        run_block(block, tmp_path)


def test_every_skip_and_drop_gives_a_reason() -> None:
    skipped = [b for b in BLOCKS if b.skip is not None]
    assert all(len(b.skip) >= 10 for b in skipped), [b.ident for b in skipped]
    assert all(len(reason) >= 10 for b in BLOCKS for _, reason in b.drops)
    # most of what the docs show is run: the skipped blocks stay a minority
    assert len(skipped) < len(BLOCKS) / 3, [b.ident for b in skipped]


# --- the collector itself --------------------------------------------------------------------------------


def _md(tmp: Path, text: str) -> list[Block]:
    p = tmp / "doc.md"
    p.write_text(text, encoding="utf-8")
    return [b for b in collect(p) if b.runnable]


def test_collector_finds_runnable_blocks_and_directives(tmp_path: Path) -> None:
    blocks = _md(tmp_path, (
        "# t\n\n```yaml\na: 1\n```\n\n"
        "<!-- doc-run: replace 100000 => 5 -->\n<!-- doc-run: drop /path/ -- a placeholder path -->\n"
        "```bash\necho 100000\ncat /path/x\n```\n\n"
        "```\n$ echo hi\nhi\n```\n\n```\nplain output\n```\n"))
    assert [(b.line, b.lang) for b in blocks] == [(9, "bash"), (14, "")]
    assert blocks[0].source() == "echo 5\n"
    assert blocks[1].transcript and blocks[1].source() == "echo hi\n"
    assert blocks[1].expected() == [("echo hi", "hi")]


@pytest.mark.parametrize("directive, message", [
    ("skip", "needs a reason"), ("drop x", "TEXT -- REASON"), ("replace a", "OLD => NEW"),
    ("timeout soon", "needs seconds"), ("skp because", "unknown doc-run directive"),
])
def test_collector_refuses_bad_directives(tmp_path: Path, directive: str, message: str) -> None:
    with pytest.raises(DocRunError, match=message):
        _md(tmp_path, f"<!-- doc-run: {directive} -->\n```bash\ntrue\n```\n")


def test_a_failing_command_fails_and_names_the_block(tmp_path: Path) -> None:
    (block,) = _md(tmp_path, "x\n\n```bash\ntrue\nfalse\necho after\n```\n")
    with pytest.raises(AssertionError, match=r"doc\.md:3: exit status 1"):
        run_block(block, tmp_path)


def test_a_python_block_runs_as_a_script(tmp_path: Path) -> None:
    (block,) = _md(tmp_path, "```python\nimport sys\nassert __name__ == '__main__'\nsys.exit(3)\n```\n")
    with pytest.raises(AssertionError, match="exit status 3"):
        run_block(block, tmp_path)


def test_a_transcript_whose_output_changed_fails(tmp_path: Path) -> None:
    (good,) = _md(tmp_path, "<!-- doc-run: compare -->\n```\n$ printf 'head\\na  \\nb\\nfoot\\n'\na\n\nb\n```\n")
    compare_transcript(good, tmp_path / "good")        # an excerpt: header and footer left out, blank line ignored
    (bad,) = _md(tmp_path, "<!-- doc-run: compare -->\n```\n$ echo a\nb\n```\n")
    with pytest.raises(AssertionError, match="differs from the doc"):
        compare_transcript(bad, tmp_path / "bad")


@pytest.mark.parametrize("expected, output, missing", [
    ("a\nb", "a\nb\n", []),
    ("a\nb", "x\na\ny\nb\nz\n", []),            # lines skipped between them
    ("b\na", "a\nb\n", ["a"]),                     # order matters
    ("W6  1.70", "W6  1.71\n", ["W6  1.70"]),        # one digit
    ("a", "a   \n", []),                           # trailing blanks only
    (" a", "a\n", [" a"]),                          # leading blanks are layout: they count
])
def test_excerpt_matching(expected: str, output: str, missing: list[str]) -> None:
    assert missing_lines(expected, output) == missing


def test_isoeat_on_path_is_this_checkout() -> None:
    assert shutil.which("isoeat", path=str(Path(sys.executable).parent)) is not None
