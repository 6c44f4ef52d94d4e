"""The doc-test collector: every command and Python block of README.md and docs/*.md, as a runnable script.

A fenced block is *runnable* when its language is ``bash``, ``sh``, ``console`` or ``python``, or when it has
no language and its first line is a shell transcript (``$ command``). Every runnable block is run by
``tests/test_docs_run.py`` unless an HTML comment directly above its fence says otherwise; the directives,
one per comment line, are::

    <!-- doc-run: skip REASON -->             not run (the reason is required: a cluster, a GPU, a placeholder path)
    <!-- doc-run: drop TEXT -- REASON -->     lines containing TEXT are left out (the reason is required)
    <!-- doc-run: replace OLD => NEW -->      OLD replaced by NEW before running (a small input for a long run)
    <!-- doc-run: timeout SECONDS -->         the block's limit (default 900 s)
    <!-- doc-run: compare -->                 a transcript whose printed output must equal the command's output
    <!-- doc-run: needs-data -->              reads the benchmark files of ../shared/data ($ISOEAT_DATA_DIR is set
                                              to it); skipped where that folder is absent

A transcript's commands are the ``$``-lines (the prompt stripped); under ``compare`` the lines after each
command are an excerpt of its standard output: every non-blank line must appear in the output, in the same
order, equal after stripping trailing blanks (a doc may leave out a header or a footer, never change a digit).
Shell blocks run under
``bash -euo pipefail`` and Python blocks as a script (``python file.py``, so a missing
``if __name__ == "__main__":`` guard fails as it would for a reader), in a fresh folder holding links to the
repository's ``examples/`` and ``benchmarks/``, with an embedding cache private to the session; ``shared-data/`` links ../shared/data where it exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

RUNNABLE = {"bash", "sh", "console", "python"}
_FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
_DIRECTIVE = re.compile(r"^<!--\s*doc-run:\s*(\w[\w-]*)\s*(.*?)\s*-->\s*$")
DEFAULT_TIMEOUT = 900.0  # a guard against a hang, not a speed target


class DocRunError(ValueError):
    """A malformed directive (named by file and line)."""


@dataclass
class Block:
    """One fenced block: where it is, what it holds and how it is to be run."""

    path: Path
    line: int  # line of the opening fence, 1-based
    lang: str
    text: str
    skip: str | None = None
    drops: list[tuple[str, str]] = field(default_factory=list)
    replaces: list[tuple[str, str]] = field(default_factory=list)
    timeout: float = DEFAULT_TIMEOUT
    compare: bool = False
    needs_data: bool = False

    @property
    def transcript(self) -> bool:
        return self.lang == "console" or (self.lang == "" and self.text.lstrip().startswith("$ "))

    @property
    def runnable(self) -> bool:
        return self.lang in RUNNABLE or self.transcript

    @property
    def kind(self) -> str:
        return "python" if self.lang == "python" else "shell"

    @property
    def ident(self) -> str:
        return f"{self.path.name}:{self.line}"

    def source(self) -> str:
        """The text to run: lines dropped, replacements made, a transcript's prompts stripped."""
        lines = []
        for ln in self.text.splitlines():
            if any(t in ln for t, _ in self.drops):
                continue
            if self.transcript:
                if not ln.startswith("$ "):
                    continue
                ln = ln[2:]
            lines.append(ln)
        out = "\n".join(lines) + "\n"
        for old, new in self.replaces:
            out = out.replace(old, new)
        return out

    def expected(self) -> list[tuple[str, str]]:
        """(command, expected output) pairs of a transcript."""
        pairs: list[tuple[str, list[str]]] = []
        for ln in self.text.splitlines():
            if ln.startswith("$ "):
                pairs.append((ln[2:], []))
            elif pairs:
                pairs[-1][1].append(ln.rstrip())
        return [(cmd, "\n".join(out).rstrip("\n")) for cmd, out in pairs]


def _apply(block: Block, name: str, arg: str, where: str) -> None:
    if name == "skip":
        if not arg:
            raise DocRunError(f"{where}: doc-run skip needs a reason")
        block.skip = arg
    elif name == "drop":
        text, sep, reason = arg.partition(" -- ")
        if not sep or not text.strip() or not reason.strip():
            raise DocRunError(f"{where}: doc-run drop needs 'TEXT -- REASON'")
        block.drops.append((text.strip(), reason.strip()))
    elif name == "replace":
        old, sep, new = arg.partition(" => ")
        if not sep or not old:
            raise DocRunError(f"{where}: doc-run replace needs 'OLD => NEW'")
        block.replaces.append((old, new))
    elif name == "timeout":
        try:
            block.timeout = float(arg)
        except ValueError:
            raise DocRunError(f"{where}: doc-run timeout needs seconds, got {arg!r}") from None
    elif name == "compare":
        block.compare = True
    elif name == "needs-data":
        block.needs_data = True
    else:
        raise DocRunError(f"{where}: unknown doc-run directive {name!r} "
                          "(skip, drop, replace, timeout, compare, needs-data)")


def collect(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, with the directives written above it."""
    text = path.read_text(encoding="utf-8")
    blocks = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        block = Block(path, line, m.group(1).lower(), m.group(2))
        above = text[:m.start()].splitlines()
        i = len(above) - 1
        while i >= 0:
            d = _DIRECTIVE.match(above[i].strip())
            if d is None:
                break
            _apply(block, d.group(1), d.group(2), f"{path.name}:{i + 1}")
            i -= 1
        if block.compare and not block.transcript:
            raise DocRunError(f"{block.ident}: doc-run compare is for '$ command' transcripts only")
        blocks.append(block)
    return blocks


def doc_files(root: Path) -> list[Path]:
    """README.md and every docs/*.md, in a stable order."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]
