"""Consistency checks on the paper's own tables (``isoeat.experiments.paper``, ``isoeat reproduce --check-paper``).

Expected findings come from reading the paper (shared/seeds/paper_zca_weat.txt, Appendix C Table A1 and
§5.3–5.5), not from the program: Table A1 prints W4 and W5 identically for GloVe (1.32 -> 0.81) and word2vec
(1.31 -> 0.78) although W5 uses other attribute words than W4 (Caliskan et al. 2017: W4 takes W3's 25+25
pleasant/unpleasant words, W5 the 8+8 of Nosek et al.); §5.4 lists changes for six models (5+5+4+3+1+1 = 19)
while Table A1 has 22 changed rows, unsup-RoBERTa's 3 (W2 D, W9 D, W10 E) being the ones not listed.
"""

from __future__ import annotations

import copy

import pytest

from isoeat.cli import main
from isoeat.experiments.paper import paper_consistency, paper_values
from isoeat.wordsets import get_test


def _by(found, check):
    return [f for f in found if f.check == check]


def test_w4_w5_duplication_is_reported_for_glove_and_word2vec():
    found = paper_consistency()
    dup = _by(found, "identical rows")
    assert sorted(f.where for f in dup) == ["Table A1, GloVe W4 and W5", "Table A1, word2vec W4 and W5"]
    assert all(f.severity == "inconsistent" for f in dup)
    assert "1.32 -> 0.81" in dup[0].detail + dup[1].detail and "1.31 -> 0.78" in dup[0].detail + dup[1].detail
    # the inputs do differ: same targets, other attribute words (so the rows should not be equal)
    w4, w5 = get_test("W4"), get_test("W5")
    assert w4.X.words == w5.X.words and set(w4.A.words) != set(w5.A.words)
    assert all("A, B words differ" in f.detail for f in dup)


def test_the_papers_labels_and_counts_agree_with_its_table_except_the_per_model_list():
    found = paper_consistency()
    assert _by(found, "change class") == []
    counts = _by(found, "counts")
    assert [(f.severity, "unsup-RoBERTa has 3 change(s)" in f.detail, "19 of 22" in f.detail) for f in counts] == [
        ("note", True, True)]


def _values_with(edit):
    v = copy.deepcopy(paper_values())
    edit(v)
    return v


@pytest.mark.parametrize("p_w, label, inconsistent", [
    (".0500", "D", False),   # p = alpha is not significant (strict p < alpha): raw sig, calibrated not -> D
    (".0500", "S", True),
    (".0499", "S", False),   # just below alpha: significant in both -> S
    (".0499", "D", True),
])
def test_change_class_against_its_p_at_the_alpha_boundary(p_w, label, inconsistent):
    def edit(v):  # GloVe W1 is significant raw (p 10^-5)
        v["table_a1"]["GloVe"]["W1"].update({"p_W": p_w, "chg": label})
        v["summary"] = {}

    found = _by(paper_consistency(_values_with(edit)), "change class")
    assert bool(found) == inconsistent
    if inconsistent:
        assert found[0].where == "Table A1, GloVe W1"


def test_a_count_the_text_gets_wrong_is_inconsistent():
    def edit(v):
        v["summary"]["Disappearing"] = 13
        v["summary"]["disappearing_by_bias"] = {"Race": 7}

    counts = [f for f in _by(paper_consistency(_values_with(edit)), "counts") if f.severity == "inconsistent"]
    assert sorted(f.where.split(": ")[-1] for f in counts) == ["Disappearing", "disappearing_by_bias[Race]"]
    assert any("the text says 13, Table A1 gives 12" in f.detail for f in counts)


def test_identical_rows_on_two_models_are_reported():
    def edit(v):
        v["table_a1"]["BERT"]["W6"] = dict(v["table_a1"]["RoBERTa"]["W6"])
        v["summary"] = {}

    dup = _by(paper_consistency(_values_with(edit)), "identical rows")
    assert "Table A1, W6 on BERT and RoBERTa" in [f.where for f in dup]


def test_differing_by_one_hundredth_is_not_identical():
    def edit(v):
        v["table_a1"]["GloVe"]["W5"]["d_W"] = 0.82
        v["summary"] = {}

    dup = _by(paper_consistency(_values_with(edit)), "identical rows")
    assert [f.where for f in dup] == ["Table A1, word2vec W4 and W5"]


def test_reproduce_check_paper_runs_nothing_and_prints_the_findings(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "--check-paper"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Checks of the paper's own tables: 2 inconsistent, 1 note(s)")
    assert "GloVe W4 and W5" in out and list(tmp_path.iterdir()) == []
