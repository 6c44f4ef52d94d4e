"""The one check of a command-line bad-input case: files written, the command run, one line, nothing written.

Shared by the ``test_bad_input_r4_*.py`` files (each case: a name, the files to write, the arguments with
``{d}`` for the temporary folder, the text the one error line must hold).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any


def write_files(d: Path, files: dict[str, Any]) -> None:
    """Each file of ``files`` (name -> text or bytes) under ``d``, its folders made."""
    for name, content in files.items():
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content) if isinstance(content, bytes) else p.write_text(content, encoding="utf-8")


def snapshot(d: Path) -> dict[str, str]:
    """Every path under ``d`` with the SHA-256 of a file's bytes (``"dir"`` for a folder)."""
    return {str(p): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir") for p in d.rglob("*")}


def assert_one_line_error(tmp_path: Path, capsys: Any, monkeypatch: Any, name: str, files: dict[str, Any],
                          args: list[str], expected: str) -> None:
    """Exit status 2, one line ``isoeat: error: ...`` holding ``expected``, no traceback, nothing written under
    ``tmp_path`` (the embedding cache kept beside it, out of the snapshot)."""
    from isoeat.cli import main

    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path.parent / f"{tmp_path.name}-cache"))
    write_files(tmp_path, files)
    before = snapshot(tmp_path)
    code = main([a.replace("{d}", str(tmp_path)) for a in args])
    err = capsys.readouterr().err
    assert code == 2, (name, err)
    assert err.startswith("isoeat: error: ") and err.count("\n") == 1, err
    assert expected.replace("{d}", str(tmp_path)) in err, err
    assert "Traceback" not in err
    assert snapshot(tmp_path) == before
