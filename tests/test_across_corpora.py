"""Whether each conclusion holds across corpora (issue 32, item 6): the rule, the folder marks, the command.

Expected values are derived by hand (the rule's boundaries) or recomputed from scratch in the test from each
corpus's own p-values (p < alpha, the paper's change classes), never read from the marks themselves.
"""

from __future__ import annotations

import json

import pytest

from isoeat.experiments.stability import corpus_groups, folder_corpora
from isoeat.labels import CORPORA_RULE, corpora_agreement, corpora_mark

pytestmark = pytest.mark.filterwarnings("ignore::isoeat._errors.IsoeatWarning")


# --------------------------------------------------------------------------- the rule
def test_agreement_at_the_significance_boundary():
    # p == alpha is not significant (p < alpha, strict): 0.05 and 0.2 are the same call at alpha 0.05
    r = corpora_agreement((0.05, 0.01), [(0.2, 0.0499)], 0.05)
    assert (r["raw_call"], r["call"], r["class"], r["same"], r["total"]) == (True, True, True, 2, 2)
    # just below alpha on one corpus: the raw call differs, and the class (Emerging vs Stable) with it
    r = corpora_agreement((0.05, 0.01), [(0.0499, 0.01)], 0.05)
    assert (r["raw_call"], r["call"], r["class"], r["same"]) == (False, True, False, 1)


def test_agreement_is_unanimity_and_counts_this_corpus():
    own = (0.01, 0.01)  # significant in both spaces: Stable
    agree, differ = (0.001, 0.02), (0.01, 0.3)  # Stable / Disappearing
    r = corpora_agreement(own, [agree] * 5 + [differ], 0.05)
    assert (r["call"], r["class"], r["same"], r["total"]) == (False, False, 6, 7)
    r = corpora_agreement(own, [agree] * 6, 0.05)
    assert (r["call"], r["class"], r["same"], r["total"]) == (True, True, 7, 7)


def test_a_class_can_hold_while_both_calls_flip():
    # Stable (both significant) vs Stable (neither): the class holds, neither call does, and no corpus agrees
    r = corpora_agreement((0.01, 0.01), [(0.5, 0.5)], 0.05)
    assert (r["raw_call"], r["call"], r["class"], r["same"]) == (False, False, True, 1)


def test_mark_at_its_bounds():
    assert corpora_mark(3, 3) == "yes" and corpora_mark(2, 3) == "no (2/3)"
    assert corpora_mark(1, 1) == "-" and corpora_mark(None, None) == "-" and corpora_mark(0, 0) == "-"
    assert "no track record" in CORPORA_RULE


def test_a_table_on_one_corpus_says_so_when_others_are_present(monkeypatch):
    import isoeat.corpora
    from isoeat.reporting.tables import one_corpus_footer

    def present(*names):
        monkeypatch.setattr(isoeat.corpora, "offline_corpora", lambda: [{"name": n} for n in names])

    present("wikitext-2")
    assert one_corpus_footer("wikitext-2") == []  # the run's own is the only one
    present("wikitext-2", "gensim-wiki")
    (line,) = one_corpus_footer("wikitext-2")
    assert "rests on one corpus (wikitext-2); gensim-wiki is present too: --across-corpora" in line
    present("a", "b", "wikitext-2")
    assert "a, b are present too" in one_corpus_footer("wikitext-2")[0]


# --------------------------------------------------------------------------- a folder's models
def _model(label, corpus, spec="minilm", family="contrastive", **kw):
    return {"spec": spec, "label": label, "family": family, "layer": kw.get("layer"),
            "contexts_per_word": None, "options": {"corpus": corpus, **kw.get("options", {})}, "corpus": corpus}


def test_groups_are_one_model_on_several_corpora():
    models = [_model("m", "c1"), _model("m2", "c2"), _model("m3", "c1"),  # m3: c1 again, m stands for it
              _model("L3", "c1", layer=3), _model("L3b", "c2", layer=3),  # another layer: its own group
              _model("g", "c1", spec="glove-6b-50d", family="static"), _model("g2", "c2", spec="glove-6b-50d",
                                                                             family="static"),
              _model("solo", "c9", options={"contexts_per_word": 5})]
    groups = corpus_groups(models)
    assert [[m["label"] for m in g] for g in groups] == [["m", "m2"], ["L3", "L3b"]]


def _weat(model, fallback, total=20):
    # one test of 4 sets of total/4 words; `fallback` of them fell back to the template
    return {"model": model, "calibration": "none", "test": "T", "fallback": [f"X:w{i}" for i in range(fallback)],
            "n_x": total // 4, "n_y": total // 4, "n_a": total // 4, "n_b": total // 4}


def _row(model, p_raw, p_cal, test="T"):
    return {"model": model, "calibration": "zca", "test": test, "p_raw": p_raw, "p_calibrated": p_cal}


def test_folder_marks_and_the_fallback_gate_at_its_bound():
    models = [_model("a", "A"), _model("b", "B"), _model("c", "C"), _model("d", "D")]
    # a: 2 of 20 fell back (10%, at the gate: votes); d: 3 of 20 (15%, over it: left out)
    weat = [_weat("a", 2), _weat("b", 0), _weat("c", 0), _weat("d", 3)]
    rows = [_row("a", 0.01, 0.01), _row("b", 0.01, 0.02), _row("c", 0.01, 0.2), _row("d", 0.9, 0.9)]
    folder_corpora(rows, weat, models, 0.05)
    a, b, c, d = rows
    # from scratch: calls (sig_raw, sig_cal) = a (T,T), b (T,T), c (T,F); d does not vote
    assert (a["raw_call_holds_corpora"], a["call_holds_corpora"], a["class_holds_corpora"]) == (True, False, False)
    assert a["corpora_share"] == "2/3" and b["corpora_share"] == "2/3" and c["corpora_share"] == "1/3"
    assert a["corpora"] == ["A", "B", "C"] and d["corpora_left_out"][0].startswith("D (3 of 20 stimulus words, 15%")
    assert d["corpora_share"] is None and d["call_holds_corpora"] is None and d["corpora"] == ["A", "B", "C"]


def test_no_marks_when_fewer_than_two_corpora_vote():
    models = [_model("a", "A"), _model("b", "B")]
    rows = [_row("a", 0.01, 0.01), _row("b", 0.01, 0.01)]
    folder_corpora(rows, [_weat("a", 0), _weat("b", 20)], models, 0.05)
    assert rows[0]["corpora_share"] is None and rows[0]["corpora"] == ["A"]
    assert rows[0]["corpora_left_out"][0].startswith("B (20 of 20")


def test_a_corpus_without_a_result_is_named_not_silently_dropped():
    models = [_model("a", "A"), _model("b", "B"), _model("c", "C")]
    rows = [_row("a", 0.01, 0.01), _row("b", 0.01, 0.01)]  # c's cell of T failed: no row
    folder_corpora(rows, [_weat("a", 0), _weat("b", 0), _weat("c", 0)], models, 0.05)
    assert rows[0]["corpora_share"] == "2/2" and rows[0]["corpora"] == ["A", "B"]
    assert rows[0]["corpora_left_out"] == ["C (no result for T: its cell failed)"]


def test_one_corpus_spelled_twice_votes_once():
    # the manifest's corpus fingerprint (its content) decides, not the spelling of its path
    models = [{**_model("a", "a.txt"), "corpus_fingerprint": "f1"}, {**_model("b", "text:a.txt"),
                                                                     "corpus_fingerprint": "f1"},
              {**_model("c", "c.txt"), "corpus_fingerprint": "f2"}]
    assert [[m["label"] for m in g] for g in corpus_groups(models)] == [["a", "c"]]


def test_static_grids_get_no_columns():
    models = [_model("g", "c1", spec="glove-6b-50d", family="static"),
              _model("g2", "c2", spec="glove-6b-50d", family="static")]
    rows = [_row("g", 0.01, 0.01), _row("g2", 0.5, 0.5)]
    folder_corpora(rows, [], models, 0.05)
    assert all("corpora" not in r for r in rows)


# --------------------------------------------------------------------------- the command
from isoeat.cli import main  # noqa: E402 - the command's tests (minilm: the transformers extra)

_X, _Y = ["john", "paul", "mike", "kevin"], ["amy", "lisa", "sarah", "kate"]
_A, _B = ["office", "salary", "executive", "manager"], ["family", "wedding", "garden", "home"]


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """Two small corpora holding every word of a 4x4 test in different sentences, and one holding none."""
    pytest.importorskip("transformers")  # the rule's and the folder's tests above run without it
    d = tmp_path_factory.mktemp("corpora")
    a = [f"{_X[i]} talked about the {_A[j]} with {_Y[(i + j) % 4]} before going {_B[j]} in the evening."
         for i in range(4) for j in range(4)]
    b = [f"Yesterday {_Y[i]} saw the {_B[(i * 3 + j) % 4]} while {_X[j]} checked the {_A[i]} twice."
         for i in range(4) for j in range(4)]
    (d / "a.txt").write_text("\n".join(a) + "\n", encoding="utf-8")
    (d / "b.txt").write_text("\n".join(b) + "\n", encoding="utf-8")
    (d / "c.txt").write_text("The weather was calm and the river was quiet.\n" * 5, encoding="utf-8")
    (d / "t.yaml").write_text(f"id: tiny\nbias_type: custom\nX: [{', '.join(_X)}]\nY: [{', '.join(_Y)}]\n"
                              f"A: [{', '.join(_A)}]\nB: [{', '.join(_B)}]\n", encoding="utf-8")
    return d


_CLASS = {(True, True): "Stable", (False, False): "Stable", (True, False): "Disappearing", (False, True): "Emerging"}


def _args(d, *extra):
    return ["run", "--model", "minilm", "--corpus", str(d / "a.txt"), "--tests", str(d / "t.yaml"),
            "--reference-size", "10", "--across-corpora", f"{d / 'b.txt'},{d / 'c.txt'}", *extra]


def test_run_marks_each_record_as_recomputed_from_each_corpus(corpora, capsys):
    assert main(_args(corpora, "--format", "json")) == 0  # a.txt (the run's corpus) is under the gate: exit 0
    recs = json.loads(capsys.readouterr().out)
    p = {(r["corpus"].rsplit("/", 1)[-1], r["calibration"]): r["p_value"] for r in recs}
    assert {c for c, _ in p} == {"a.txt", "b.txt", "c.txt"}
    # choose alpha between the two voting corpora's raw p, so that their raw calls differ (from scratch)
    pa, pb = p[("a.txt", "none")], p[("b.txt", "none")]
    assert pa != pb
    alpha = round((pa + pb) / 2, 6)
    sig = {k: v < alpha for k, v in p.items()}
    cls = {c: _CLASS[(sig[(c, "none")], sig[(c, "zca")])] for c in ("a.txt", "b.txt")}
    assert main(_args(corpora, "--format", "json", "--alpha", str(alpha))) == 0
    recs = json.loads(capsys.readouterr().out)
    own = {r["calibration"]: r for r in recs if r["corpus"].endswith("a.txt")}
    assert own["none"]["call_holds_corpora"] is False
    assert own["zca"]["call_holds_corpora"] is (sig[("a.txt", "zca")] == sig[("b.txt", "zca")])
    assert own["zca"]["class_holds_corpora"] is (cls["a.txt"] == cls["b.txt"])
    assert own["zca"]["corpora_share"] == "1/2" and len(own["zca"]["corpora_left_out"]) == 1
    assert own["zca"]["corpora_left_out"][0].endswith("c.txt (16 of 16 stimulus words, 100%, fell back to the template)")
    assert main(_args(corpora, "--alpha", str(alpha))) == 0
    out = capsys.readouterr().out
    table = out.split("across corpora")[0]
    assert "Corpora" in table and "no (1/2)" in table and "Left out (over the 10% template-fallback gate, or no result)" in table
    side = out.split("across corpora")[1]
    assert "c.txt (left out)" in side and side.count("no (1/2)") == 1


def test_the_gate_is_the_run_own_corpus(corpora, capsys):
    args = ["run", "--model", "minilm", "--corpus", str(corpora / "c.txt"), "--tests", str(corpora / "t.yaml"),
            "--reference-size", "10", "--across-corpora", f"{corpora / 'a.txt'},{corpora / 'b.txt'}"]
    assert main(args) == 3  # every word of c.txt fell back: the run's own results are gated
    out, err = capsys.readouterr()
    assert "isoeat: 16 of 16 stimulus words" in err
    assert "Corpora: whether" in out  # a.txt and b.txt still vote; c.txt's own rows carry no mark
    assert main([*args, "--allow-fallback"]) == 0


def test_a_folder_keeps_the_marks_for_report(corpora, tmp_path, capsys):
    assert main(_args(corpora, "--format", "json")) == 0
    recs = json.loads(capsys.readouterr().out)
    p = {(r["corpus"].rsplit("/", 1)[-1], r["calibration"]): r["p_value"] for r in recs}
    # an alpha at which the two voting corpora give different change classes, found from their p (from scratch)
    cuts = sorted({p[(c, s)] for c in ("a.txt", "b.txt") for s in ("none", "zca")})
    alphas = [round((lo + hi) / 2, 6) for lo, hi in zip(cuts, cuts[1:])]
    alpha = next(al for al in alphas if _CLASS[(p[("a.txt", "none")] < al, p[("a.txt", "zca")] < al)]
                 != _CLASS[(p[("b.txt", "none")] < al, p[("b.txt", "zca")] < al)])
    out = tmp_path / "res"
    assert main([*_args(corpora, "--alpha", str(alpha)), "--out", str(out), "-q"]) == 0
    capsys.readouterr()
    rows = json.loads((out / "comparison.json").read_text())
    assert {r["model"] for r in rows} == {"minilm", "minilm[b.txt]", "minilm[c.txt]"}
    by = {r["model"]: r for r in rows}
    assert by["minilm"]["class_holds_corpora"] is False and by["minilm[b.txt]"]["class_holds_corpora"] is False
    assert by["minilm[c.txt]"]["corpora_share"] is None  # left out: every word fell back
    assert main(["report", str(out)]) == 0
    capsys.readouterr()
    a1 = (out / "tables" / "table_a1-zca.md").read_text()
    (row,) = [ln for ln in a1.splitlines() if ln.startswith("| tiny")]
    assert row.count("\u2021") == 2 and "a check over the corpora at hand" in a1 and "2 of 2 classes" in a1
    assert "['" not in a1 and "Left out of the comparison across corpora: " in a1 and "c.txt (16 of 16" in a1


@pytest.mark.parametrize(("extra", "message"), [
    (["--model", "glove-6b-50d", "--across-corpora"], "a static model's vectors"),
    (["--across-corpora", "wikitext-3"], "--across-corpora wikitext-3: no such file or folder and no named corpus; "
                                         "did you mean wikitext-103, wikitext-2?"),
    (["--across-corpora", "/no/such/corpus.txt"], "--across-corpora /no/such/corpus.txt: no such file or folder"),
    (["--across-corpora", "{a}"], "no corpus besides this run's"),
    (["--across-corpora", ",".join(["{a}"] + [f"{{d}}/x{i}.txt" for i in range(8)])], "at most 7"),
    (["--across-corpora", "{b}", "--reference-text", "{b}"], "not with --reference-text"),
    (["--across-corpora", "{b}", "--layers", "all"], "--layers: not with --across-corpora"),
    (["--across-corpora", "{d}/empty.txt"], "--across-corpora: file "),  # no usable sentences: before encoding
    (["--across-corpora", "text:{a},{a}"], "every corpus named has the content of this run's"),
    (["--across-corpora", "cfg.yaml"], "looks like a CONFIG file"),
])
def test_refusals_are_one_line(corpora, capsys, extra, message):
    for i in range(8):
        (corpora / f"x{i}.txt").write_text(f"line {i} of the corpus\n", encoding="utf-8")
    (corpora / "empty.txt").write_text("", encoding="utf-8")
    fill = {"a": str(corpora / "a.txt"), "b": str(corpora / "b.txt"), "d": str(corpora)}
    extra = [e.format(**fill) for e in extra]
    base = ["run", "--model", "minilm", "--corpus", fill["a"], "--tests", str(corpora / "t.yaml")]
    if extra[:2] == ["--model", "glove-6b-50d"]:
        base = ["run", "--tests", "W6"]
    assert main([*base, *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_without_corpus_the_run_own_is_the_default_one(corpora, capsys):
    from isoeat.corpora import offline_corpora

    present = [c["name"] for c in offline_corpora()]
    if not present:
        pytest.skip("no corpus present offline")
    # checked before anything is encoded: the default corpus (auto, the largest present) is the run's own
    args = ["run", "--model", "minilm", "--tests", str(corpora / "t.yaml"), "--across-corpora", present[0]]
    assert main(args) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"no corpus besides this run's ({present[0]})" in line


def test_a_changed_corpus_refits_the_calibrator_of_a_folder(corpora, tmp_path, capsys):
    """The calibrator of a contextual model is fitted on its own corpus's reference sample: a rerun into the
    same folder after that corpus's content changed refits it (its d_W equals a fresh run's), never reuses it."""
    import shutil

    moving = tmp_path / "moving"
    moving.mkdir()
    shutil.copy(corpora / "b.txt", moving / "m.txt")
    base = ["run", "--model", "minilm", "--corpus", str(corpora / "a.txt"), "--tests", str(corpora / "t.yaml"),
            "--reference-size", "10", "--across-corpora", str(moving / "m.txt"), "--format", "json"]
    out = tmp_path / "res"
    assert main([*base, "--out", str(out)]) == 0
    capsys.readouterr()
    # new content under the same name (a.txt's sentences and one more: not the run's own corpus either)
    (moving / "m.txt").write_text((corpora / "a.txt").read_text() + "Kate met John at home after the long meeting about the salary.\n", encoding="utf-8")
    assert main([*base, "--out", str(out)]) == 0
    again = {r["calibration"]: r["effect_size"] for r in json.loads(capsys.readouterr().out)
             if r["corpus"].endswith("m.txt")}
    assert main([*base, "--out", str(tmp_path / "fresh")]) == 0
    fresh = {r["calibration"]: r["effect_size"] for r in json.loads(capsys.readouterr().out)
             if r["corpus"].endswith("m.txt")}
    assert again == pytest.approx(fresh, abs=1e-12)


def test_a_config_says_how_it_compares_corpora(corpora, tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: x\nmodels: [minilm]\n", encoding="utf-8")
    assert main(["run", str(cfg), "--out", str(tmp_path / "o"), "--across-corpora"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "a CONFIG lists the model once per corpus" in line


def test_one_corpus_named_twice_is_one_column(corpora, capsys):
    args = ["run", "--model", "minilm", "--corpus", str(corpora / "a.txt"), "--tests", str(corpora / "t.yaml"),
            "--reference-size", "10", "--across-corpora", f"{corpora / 'b.txt'},text:{corpora / 'b.txt'}",
            "--format", "json"]
    assert main(args) == 0
    recs = json.loads(capsys.readouterr().out)
    assert len({r["corpus"] for r in recs}) == 2 and {r["corpora_share"] for r in recs} <= {"1/2", "2/2"}


def test_an_unreadable_corpus_fails_its_cells_not_the_run(corpora, tmp_path, capsys):
    """The calibrator's request reads each model's corpus: one without usable sentences fails that model's cells
    (as before the request held the corpus), while the other model's results are written."""
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: x\nmodels:\n  - {{spec: minilm, label: good, options: {{corpus: {corpora / 'a.txt'}}}}}\n"
                   f"  - {{spec: minilm, label: bad, options: {{corpus: {tmp_path / 'empty.txt'}}}}}\n"
                   f"tests: [{corpora / 't.yaml'}]\nsettings: {{reference: {{size: 10}}}}\nanisotropy: false\n",
                   encoding="utf-8")
    out = tmp_path / "o"
    assert main(["run", str(cfg), "--out", str(out), "--format", "json"]) == 1
    capsys.readouterr()
    rows = json.loads((out / "comparison.json").read_text())
    assert [r["model"] for r in rows] == ["good"]
    failed = json.loads((out / "failures.json").read_text())
    assert {f["model"] for f in (failed if isinstance(failed, list) else failed["failed"])} == {"bad"}


def _config(path, models, tests, reference=""):
    lines = ["name: x", "models:"] + [f"  - {m}" for m in models]
    lines += [f"tests: [{', '.join(map(str, tests))}]",
              f"settings: {{reference: {{size: 10{', corpus: ' + str(reference) if reference else ''}}}}}",
              "anisotropy: false"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _d_w(out, model):
    return {r["test"]: r["d_calibrated"] for r in json.loads((out / "comparison.json").read_text())
            if r["model"] == model}


@pytest.mark.parametrize("change", ["corpus beside a reference corpus", "reference unit"])
def test_what_the_reference_sample_depends_on_refits_the_calibrator(corpora, tmp_path, capsys, change):
    """A contextual encoder's calibrator depends on the corpus it reads (its own, which wins over
    settings.reference.corpus) and on how it pools the reference (the unit): a change to either refits it."""
    import shutil

    shutil.copy(corpora / "b.txt", tmp_path / "m.txt")
    t = corpora / "t.yaml"
    ref = corpora / "a.txt" if change.startswith("corpus") else ""
    first = _config(tmp_path / "c1.yaml", [f"{{spec: minilm, label: m, options: {{corpus: {tmp_path / 'm.txt'}}}}}"],
                    [t], ref)
    out = tmp_path / "o"
    assert main(["run", first, "--out", str(out), "-q"]) == 0
    if change.startswith("corpus"):  # new content; the config's text is unchanged
        (tmp_path / "m.txt").write_text((corpora / "a.txt").read_text(), encoding="utf-8")
        second = first
    else:
        second = _config(tmp_path / "c2.yaml", [f"{{spec: minilm, label: m, options: {{corpus: {tmp_path / 'm.txt'}, "
                                                "reference_unit: sentence}}"], [t], ref)
    assert main(["run", second, "--out", str(out), "-q"]) == 0
    assert main(["run", second, "--out", str(tmp_path / "fresh"), "-q"]) == 0
    capsys.readouterr()
    assert _d_w(out, "m") == pytest.approx(_d_w(tmp_path / "fresh", "m"), abs=1e-12)


def test_a_corpus_gone_unreadable_keeps_the_finished_cells(corpora, tmp_path, capsys):
    import shutil

    shutil.copy(corpora / "b.txt", tmp_path / "m.txt")
    cfg = _config(tmp_path / "c.yaml", [f"{{spec: minilm, label: m, options: {{corpus: {tmp_path / 'm.txt'}}}}}"],
                  [corpora / "t.yaml"])
    out = tmp_path / "o"
    assert main(["run", cfg, "--out", str(out), "-q"]) == 0
    before = (out / "comparison.json").read_text()
    (tmp_path / "m.txt").write_text("", encoding="utf-8")
    assert main(["run", cfg, "--out", str(out), "-q"]) == 0  # nothing to compute: both finished cells kept
    assert json.loads((out / "comparison.json").read_text()) == json.loads(before)
