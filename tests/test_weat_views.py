"""``isoeat weat``'s views that do not combine (issues 43 and 46 landed together): each pair is refused in one
line before a model is loaded, never silently dropped."""

from __future__ import annotations

import pytest

from isoeat.cli import main


@pytest.mark.parametrize("extra, says", [
    (("--explain", "--levels"), "--explain prints one table of every convention; it does not take --levels"),
    (("--explain", "--audit"), "it does not take --audit"),
    (("--explain", "--levels", "--audit"), "it does not take --levels or --audit"),
    (("--levels", "--convention", "wefe"), "--levels follow isoeat's definitions; --convention wefe"),
    (("--audit", "--convention", "sent-bias"), "--audit follow isoeat's definitions"),
    (("--levels", "--audit", "--format", "csv"), "--levels and --audit with --format csv"),
])
def test_views_that_do_not_combine_are_one_line(capsys, monkeypatch, extra, says):
    import isoeat.cliargs as cliargs

    def no_model(*a, **k):  # the refusal comes before any model is loaded
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(cliargs, "load_model_from_args", no_model)
    assert main(["weat", "--test", "W6", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err


@pytest.mark.parametrize("extra", [("--levels", "--audit", "--format", "json"), ("--levels", "--convention", "isoeat")])
def test_views_that_combine_are_not_refused(extra):
    from isoeat.cli import build_parser
    from isoeat.commands.core import _check_weat_views

    args = build_parser("weat").parse_args(["weat", "--test", "W6", *extra])
    _check_weat_views(args)  # no error
