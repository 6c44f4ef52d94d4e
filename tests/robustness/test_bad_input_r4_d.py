"""Bad-input catalogue, round 4 (issue 40), group D: options and their spellings.

Two spellings of one option given together, contradictory or ineffective
options, advice that names a flag with a value it does not take, Python names
in command-line errors, commas in corpus paths, and the older spelling of
``sensitivity --reference-text`` in its errors.

CLI cases end in a one-line isoeat error, exit 2, a message naming the options
(both spellings where two were given), no traceback, and nothing written in the
temporary folder. Advice cases also check that every flag the message advises
is named the way the parser accepts it (a flag without a value).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import isoeat
from isoeat import ConfigError
from isoeat.cli import build_parser, main

OVERLAP = json.dumps({"id": "ov", "X": ["he", "him", "man"], "Y": ["she", "her", "woman"],
                      "A": ["work", "job", "man"], "B": ["home", "family", "kids"]})

CLI_CASES = [
    # --- item 8: two spellings of one option --------------------------------------------------
    ("test and tests together", {}, ["weat", "--test", "W6", "--tests", "W7", "--calibration", "none"],
     "--test and --tests are two spellings of one option"),
    ("tests and test together", {}, ["run", "--tests", "W6", "--test", "W7"], "--tests and --test are two spellings"),
    ("calibrator and whitener together", {"w.npz": "WHITENER"},
     ["weat", "--test", "W6", "--calibrator", "{d}/w.npz", "--whitener", "{d}/w.npz"],
     "--calibrator and --whitener are two spellings of one option"),
    ("save and out together", {}, ["whiten", "--save", "{d}/a.npz", "--out", "{d}/b.npz"],
     "--save and --out are two spellings"),
    ("sensitivity reference-text and reference together", {},
     ["sensitivity", "--tests", "W6", "--reference-text", "top", "--reference", "top"],
     "--reference-text and --reference are two spellings"),
    ("progress and no-progress together", {}, ["run", "--tests", "W6", "--progress", "--no-progress"],
     "--progress and --no-progress are two spellings of one option"),
    ("resample-attributes and ci-estimand given-attributes", {},
     ["weat", "--test", "W6", "--ci", "--resample-attributes", "--ci-estimand", "given-attributes"],
     "--resample-attributes (the older spelling of --ci-estimand populations) and --ci-estimand given-attributes"),
    # --- item 9: the raw space and a saved calibrator ------------------------------------------
    ("calibration none with a calibrator", {"w.npz": "WHITENER"},
     ["weat", "--test", "W6", "--calibration", "none", "--calibrator", "{d}/w.npz"],
     "--calibration none and --calibrator"),
    ("calibration none with a whitener (anisotropy)", {"w.npz": "WHITENER"},
     ["anisotropy", "--calibration", "none", "--whitener", "{d}/w.npz"], "--calibration none and --calibrator"),
    ("calibration none with a calibrator (metric)", {"w.npz": "WHITENER"},
     ["metric", "ripa", "--test", "W7", "--calibration", "none", "--calibrator", "{d}/w.npz"],
     "--calibration none and --calibrator"),
    # --- item 18: options that change nothing under --method ------------------------------------
    ("stop-early with exact", {}, ["weat", "--test", "W6", "--method", "exact", "--stop-early"],
     "--stop-early: no effect with --method exact"),
    ("stop-early with certified", {}, ["scweat", "--words", "nurse", "--attributes", "W7", "--method", "certified",
                                       "--stop-early"], "--stop-early: no effect with --method certified"),
    ("exact-memory with monte-carlo", {}, ["weat", "--test", "W6", "--method", "monte-carlo", "--exact-memory", "1GiB"],
     "--exact-memory: no effect with --method monte-carlo"),
    ("config stop_early with exact", {"c.yaml": "models: [glove-6b-50d]\ntests: [W6]\nsettings: {method: exact, "
                                                "stop_early: true}\n"},
     ["run", "{d}/c.yaml", "--out", "{d}/o"], "settings.stop_early: no effect with settings.method exact"),
    ("config exact_memory with monte-carlo", {"c.yaml": "models: [glove-6b-50d]\ntests: [W6]\nsettings: {method: "
                                                        "monte-carlo, exact_memory: 1GiB}\n"},
     ["run", "{d}/c.yaml", "--out", "{d}/o"], "settings.exact_memory: no effect with settings.method monte-carlo"),
    # --- item 24: the command line names its own options ----------------------------------------
    ("contexts on a static model", {}, ["weat", "--test", "W6", "--contexts", "5"],
     "--contexts applies to contextual models"),
    ("reference-unit on a static model", {}, ["anisotropy", "--reference-unit", "word"],
     "--reference-unit applies to contextual models"),
    ("occurrences on a static model", {}, ["weat", "--test", "W6", "--occurrences", "all"],
     "--occurrences applies to contextual models"),
    ("contexts on a sentence encoder", {}, ["weat", "--test", "W6", "--model", "st:minilm", "--contexts", "5"],
     "--contexts does not apply to st: models"),
    ("duplicates on a contextual model", {}, ["weat", "--test", "W6", "--model", "minilm", "--duplicates", "first"],
     "--duplicates applies to vector files (static models)"),
    ("exact-memory too small", {}, ["weat", "--test", "W1", "--method", "exact", "--exact-memory", "1KiB"],
     "> --exact-memory 1 KiB"),
    ("permutations over the cap", {}, ["weat", "--test", "W6", "--method", "monte-carlo", "--permutations",
                                       "1000000000000"], "--permutations: at most 1,000,000,000"),
    # --- item 29: commas in --across-corpora ------------------------------------------------------
    ("across-corpora item missing", {}, ["run", "--model", "minilm", "--across-corpora", "{d}/no,where.txt"],
     "--across-corpora {d}/no: no such file or folder"),
    # --- item 33: sensitivity names --reference-text ------------------------------------------------
    ("sensitivity reference text missing", {}, ["sensitivity", "--tests", "W6", "--reference-text", "{d}/none.txt"],
     "--reference-text: "),
    ("cache info on a regular file", {"f": "not a folder"}, ["cache", "info", "--cache-dir", "{d}/f"],
     "{d}/f: is a file, not a folder"),
    ("cache clear on a regular file", {"f": "not a folder"}, ["cache", "clear", "--cache-dir", "{d}/f"],
     "--cache-dir {d}/f: is a file, not a folder"),
]

#: (name, files, args, expected, flag the message must advise as the parser takes it)
ADVICE_CASES = [
    ("force advised without a value", {"w.npz": "OTHER_WHITENER"}, ["weat", "--test", "W6", "--calibrator", "{d}/w.npz"],
     "; --force applies it anyway", "--force"),
    ("ci advised without a value", {}, ["weat", "--test", "W6", "--ci-level", "0.9"], "add --ci, or drop", "--ci"),
    ("allow-overlap advised without a value", {"t.json": OVERLAP}, ["weat", "--test", "{d}/t.json"],
     "pass --allow-overlap ", "--allow-overlap"),
    ("metric ci advised without a value", {}, ["metric", "mac", "--test", "W7", "--ci-level", "0.9"],
     "add --ci, or drop", "--ci"),
    ("metric allow-overlap advised without a value", {"t.json": OVERLAP}, ["metric", "mac", "--test", "{d}/t.json"],
     "pass --allow-overlap to measure it anyway", "--allow-overlap"),
    ("no allow-pickle advised for a calibrator", {"w.npz": "OBJECT_WHITENER"},
     ["weat", "--test", "W6", "--calibrator", "{d}/w.npz"], "refused (Python objects); calibrator files never contain pickles", None),
]


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory, glove):
    """A whitener of glove-6b-50d, one of another (small) model, and one holding a pickled array."""
    d = tmp_path_factory.mktemp("artefacts-r4d")
    assert main(["whiten", "--save", str(d / "w.npz"), "--reference-size", "500"]) == 0
    rng = np.random.default_rng(0)
    (d / "small.txt").write_text("".join(f"w{i} " + " ".join(f"{x:.4f}" for x in rng.normal(size=50)) + "\n"
                                         for i in range(300)))
    assert main(["whiten", "--model", f"glove:{d / 'small.txt'}", "--save", str(d / "other.npz"),
                 "--reference-size", "300"]) == 0
    with np.load(d / "w.npz") as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["metadata_json"] = np.array([{"a": 1}], dtype=object)
    with open(d / "object.npz", "wb") as fh:
        np.savez(fh, **arrays)
    return d


def _materialise(d: Path, files: dict, artefacts: Path) -> None:
    named = {"WHITENER": "w.npz", "OTHER_WHITENER": "other.npz", "OBJECT_WHITENER": "object.npz"}
    for name, content in files.items():
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if content in named:
            p.write_bytes((artefacts / named[content]).read_bytes())
        else:
            p.write_text(content)


def _snapshot(d: Path) -> dict:
    return {str(p): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir") for p in d.rglob("*")}


def _one_line_error(code: object, err: str, expected: str, name: str) -> None:
    assert code == 2, (name, err)
    assert re.match(r"isoeat( [\w-]+)?: error: ", err) and err.count("\n") == 1, err
    assert expected in err, err
    assert "Traceback" not in err


def _run(tmp_path, capsys, monkeypatch, artefacts, files, args):
    monkeypatch.setenv("ISOEAT_CACHE_DIR", str(tmp_path.parent / f"{tmp_path.name}-cache"))  # not in the snapshot
    _materialise(tmp_path, files, artefacts)
    argv = [a.replace("{d}", str(tmp_path)) for a in args]
    before = _snapshot(tmp_path)
    try:
        code = main(argv)
    except SystemExit as exc:  # an argument error of argparse's
        code = exc.code
    err = capsys.readouterr().err.replace(str(tmp_path), "{d}")
    assert _snapshot(tmp_path) == before  # nothing written, nothing changed
    return code, err


@pytest.mark.parametrize("name, files, args, expected", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_bad_input_gives_one_line_error(tmp_path, capsys, monkeypatch, artefacts, name, files, args, expected):
    code, err = _run(tmp_path, capsys, monkeypatch, artefacts, files, args)
    _one_line_error(code, err, expected, name)


def _flags(command: str) -> set[str]:
    """The long options of ``command`` that take no value (store_true and the like)."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {f for a in sub._actions if a.nargs == 0 for f in a.option_strings if f.startswith("--")}


@pytest.mark.parametrize("name, files, args, expected, flag", ADVICE_CASES, ids=[c[0] for c in ADVICE_CASES])
def test_advice_names_flags_as_the_parser_takes_them(tmp_path, capsys, monkeypatch, artefacts, name, files, args,
                                                     expected, flag):
    code, err = _run(tmp_path, capsys, monkeypatch, artefacts, files, args)
    _one_line_error(code, err, expected, name)
    for f in _flags(args[0]):  # no flag advised with a value it does not take
        assert not re.search(rf"{re.escape(f)}(?![\w-])[ =](True|False|true|false)\b", err), err
    assert "allow_pickle" not in err and "allow-pickle" not in err
    if flag is not None:  # the advised command line parses and runs
        argv = [a.replace("{d}", str(tmp_path)) for a in [*args, flag, "--calibration", "none"]]
        if flag == "--force":
            argv = [a.replace("{d}", str(tmp_path)) for a in [*args, flag]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", isoeat.IsoeatWarning)  # --allow-overlap measures with a warning
            assert main(argv) == 0, capsys.readouterr().err


def test_every_alias_given_twice_is_refused(capsys):
    """Every option of every command with two spellings (aliases, hidden older spellings): both together are one
    line naming both, whatever the values."""
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    checked = 0
    for command, sub in commands.items():
        spellings: dict[str, list[tuple[str, argparse.Action]]] = {}
        for a in sub._actions:
            if a.nargs == 0 or isinstance(a, (argparse._AppendAction, argparse._HelpAction)):
                continue
            for f in a.option_strings:
                if f.startswith("--"):
                    spellings.setdefault(a.dest, []).append((f, a))
        for dest, forms in spellings.items():
            if len(forms) < 2:
                continue
            (first, a1), (second, _) = forms[0], forms[1]
            value = str((a1.choices and list(a1.choices)[0]) or "2")
            with pytest.raises(SystemExit) as info:
                build_parser().parse_args([command, first, value, second, value])
            err = capsys.readouterr().err
            assert info.value.code == 2 and err.count("\n") == 1, (command, dest, err)
            assert f"{first} and {second} are two spellings of one option" in err, (command, dest, err)
            checked += 1
    assert checked >= 8  # --test/--tests, --calibrator/--whitener (every command that loads one), older spellings


def test_one_spelling_twice_and_flags_still_parse():
    """One spelling repeated stays argparse's (the last wins); a flag given in two spellings changes nothing."""
    args = build_parser().parse_args(["weat", "--test", "W6", "--test", "W7", "-q", "--quiet"])
    assert args.test == "W7"


# --- item 24: the Python API -------------------------------------------------------------------------------------
API_CASES = [
    ("permutations suggests n_permutations", lambda m: isoeat.weat(m, "W6", permutations=10),
     "did you mean n_permutations"),
    ("stop early with exact (API)", lambda m: isoeat.weat(m, "W6", method="exact", sequential_alpha=0.05),
     "sequential_alpha: no effect with method='exact'"),
    ("exact memory with Monte Carlo (API)", lambda m: isoeat.weat(m, "W6", method="monte-carlo", exact_memory=2**20),
     "exact_memory: no effect with method='monte-carlo'"),
]


@pytest.mark.parametrize("name, call, expected", API_CASES, ids=[c[0] for c in API_CASES])
def test_api_bad_input(glove, name, call, expected):
    with pytest.raises(ConfigError) as info:
        call(glove)
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_load_model_takes_a_path(tmp_path):
    rows = {"he": [1.0, 0.0, 2.0], "she": [0.0, 1.0, -1.0]}
    f = tmp_path / "v.txt"
    f.write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in rows.items()))
    m = isoeat.load_model(f)
    # provenance: the rows written above, looked up as they are
    np.testing.assert_allclose(m.lookup(["he", "she"]).vectors, np.array([rows["he"], rows["she"]]))


def test_auto_notes_that_stop_early_stopped_nothing(glove):
    """--method auto decides later: where it counted p exactly, --stop-early is said to have stopped nothing."""
    with pytest.warns(isoeat.IsoeatWarning, match="early stopping .*stopped nothing"):
        r = isoeat.weat(glove, "W6", sequential_alpha=0.05)
    assert r.p_method == "exact"


# --- item 29: a comma in an --across-corpora path ------------------------------------------------------------
def test_across_corpora_path_with_a_comma_is_taken_whole(tmp_path):
    from isoeat.corpora import corpus_list

    a = tmp_path / "a,b.txt"
    a.write_text("x\n")
    c = tmp_path / "c.txt"
    c.write_text("x\n")
    assert corpus_list([str(a)], "--across-corpora") == [str(a)]
    assert corpus_list([f"{c},{c}"], "--across-corpora") == [str(c), str(c)]
    assert corpus_list([str(a), str(c)], "--across-corpora") == [str(a), str(c)]  # the option repeated
    assert corpus_list([f"text:{a}"], "--across-corpora") == [f"text:{a}"]


def test_across_corpora_repeated_parses():
    args = build_parser().parse_args(["run", "--model", "minilm", "--across-corpora", "x", "--across-corpora", "y"])
    assert args.across_corpora == ["x", "y"]


def test_cache_info_of_a_folder_not_created(tmp_path, capsys):
    assert main(["cache", "info", "--cache-dir", str(tmp_path / "new")]) == 0
    assert "(not created yet)" in capsys.readouterr().out


def test_no_deprecation_noise():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build_parser()


@pytest.mark.parametrize("kw", [dict(method="certified", exact_memory=2**30), dict(method="exact", exact_memory=2**30),
                                dict(method="monte-carlo", sequential_alpha=0.05, n_permutations=2000)],
                         ids=["exact-memory with certified", "exact-memory with exact", "stop early with monte-carlo"])
def test_options_that_change_something_are_accepted(glove, kw):
    """The other side of the rule (stats.options.ineffective): where the option matters, no error and no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = isoeat.weat(glove, "W6", rng=0, **kw)
    assert r.p_method == kw["method"]


def test_across_corpora_reads_a_path_with_a_comma_whole(tmp_path):
    """run --across-corpora "DIR/a,b.txt": the file that exists is the corpus (not 'DIR/a' and 'b.txt')."""
    from types import SimpleNamespace

    from isoeat.commands.run import _other_corpora

    line = "This is a perfectly fine sentence with many words in it number {} .\n"
    own, other = tmp_path / "own.txt", tmp_path / "a,b.txt"
    own.write_text("".join(line.format(i) for i in range(30)))
    other.write_text("".join(line.format(100 + i) for i in range(30)))
    model = SimpleNamespace(reference_batches=lambda n, **kw: None, name="m", corpus=None)  # a StreamingReference
    args = argparse.Namespace(across_corpora=[str(other)], whitener=None, reference_text=None, corpus=str(own),
                              model="m")
    assert _other_corpora(args, model) == (("m[a,b.txt]", str(other.resolve())),)
