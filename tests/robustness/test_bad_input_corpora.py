"""Bad-input catalogue (corpora): reference corpora that are not regular files,
lines over the length limit, empty files, and bad keywords of the contextual
encoders (``occurrences=``, ``progress=``).

Each corpus case raises an IsoeatError whose one-line message names the file
(and line), changes nothing in the temporary folder, and returns at once (a
FIFO is refused by ``os.stat`` before anything opens it).
"""

from __future__ import annotations

import os
import threading

import pytest

from isoeat import IsoeatError

LONG = "The doctor said that the quokka would recover in a few days at the hospital.\n"
FIFO = object()  # a files value: make a named pipe there

CORPUS_CASES = [
    ("corpus FIFO", {"p.txt": FIFO}, "{d}/p.txt", "p.txt: not a regular file (a FIFO); expected a corpus file"),
    ("corpus FIFO with format", {"p.txt": FIFO}, "text:{d}/p.txt", "p.txt: not a regular file (a FIFO); expected a corpus file"),
    ("corpus FIFO in folder", {"f/a.txt": LONG, "f/p.txt": FIFO}, "{d}/f", "p.txt: not a regular file (a FIFO)"),
    ("corpus character device", {}, "text:/dev/null", "/dev/null: not a regular file (a character device)"),
    ("corpus line too long", {"l.txt": LONG + "x" * (1 << 20) + "\n"}, "{d}/l.txt", "l.txt:2: line longer than 1 MiB"),
    ("corpus line too long without newline", {"n.txt": "y" * ((1 << 20) + 5)}, "text:{d}/n.txt",
     "n.txt:1: line longer than 1 MiB"),
    ("corpus empty file", {"e.txt": ""}, "text:{d}/e.txt", "e.txt: no usable sentences; the file is empty"),
    ("corpus empty compressed file", {"e.txt.gz": b""}, "text:{d}/e.txt.gz", "e.txt.gz: no usable sentences; the file is empty"),
    ("corpus blank file", {"b.txt": "\n \n"}, "text:{d}/b.txt", "b.txt: no usable sentences"),
]


def _snapshot(root):
    return sorted((str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1) for p in root.rglob("*"))


def _make(tmp_path, files):
    for n, c in files.items():
        p = tmp_path / n
        p.parent.mkdir(parents=True, exist_ok=True)
        if c is FIFO:
            if not hasattr(os, "mkfifo"):
                pytest.skip("no FIFOs here")
            os.mkfifo(p)
        else:
            (p.write_bytes if isinstance(c, bytes) else p.write_text)(c)


@pytest.mark.parametrize("name, files, spec, expected", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_bad_corpus_source(tmp_path, name, files, spec, expected):
    from isoeat.corpora import load_corpus

    if "/dev/" in spec and not os.path.exists(spec.partition(":")[2]):
        pytest.skip("no such device here")
    _make(tmp_path, files)
    before = _snapshot(tmp_path)
    outcome: dict = {}

    def attempt():
        try:
            load_corpus(spec.replace("{d}", str(tmp_path)), cache=False, splitter="regex")
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome["exc"] = exc

    t = threading.Thread(target=attempt, daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), f"{name}: load_corpus blocked"
    exc = outcome.get("exc")
    assert isinstance(exc, IsoeatError), repr(exc)
    if name == "corpus blank file":
        assert "is empty" not in str(exc)
    assert expected in str(exc)
    assert "\n" not in str(exc)
    assert _snapshot(tmp_path) == before


def _config_only_folder(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 2}')
    return folder


KEYWORD_CASES = [
    ("occurrences unknown", {"occurrences": "every"}, "occurrences must be one of first, all; got 'every'"),
    ("occurrences wrong type", {"occurrences": 2}, "occurrences must be one of first, all; got 2 (int)"),
    ("progress not a flag", {"progress": "yes"}, "progress must be one of True, False, None; got 'yes'"),
    ("missing policy unknown", {"missing": "skip"}, "missing must be one of fallback, drop; got 'skip'"),
    ("reference unit unknown", {"reference_unit": "token"}, "reference_unit must be one of word, sentence; got 'token'"),
    ("layer not an integer", {"layer": 1.5}, "layer must be an integer"),
]


@pytest.mark.parametrize("name, kwargs, expected", KEYWORD_CASES, ids=[c[0] for c in KEYWORD_CASES])
def test_bad_contextual_keyword(tmp_path, name, kwargs, expected):
    from isoeat.backends.transformer import TransformerEncoder

    with pytest.raises(IsoeatError) as info:
        TransformerEncoder(str(_config_only_folder(tmp_path)), use_cache=False, **kwargs)
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


def test_catalogue_size():
    names = [c[0] for c in CORPUS_CASES + KEYWORD_CASES]
    assert len(names) == len(set(names)) and len(names) >= 15
