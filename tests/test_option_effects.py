"""Options that would change nothing are refused with one line saying why (issue 32, item 7).

Each case is a command line a user could write; the expected outcome follows from what the option does (the
raw space fits nothing; `center` has no epsilon; `--force` only matters for a saved calibrator; the static
vectors' reference sample is the same top rows in every draw), not from isoeat's output.
"""

from __future__ import annotations

import pytest

from isoeat._errors import ConfigError
from isoeat.cli import build_parser, main
from isoeat.cliargs import check_option_effects


def _check(argv):
    check_option_effects(build_parser().parse_args(argv))


@pytest.mark.parametrize("argv, says", [
    (["weat", "--test", "W6", "--calibration", "none", "--eps", "0.5"], r"--eps: no effect with --calibration none"),
    (["weat", "--test", "W6", "--calibration", "none", "--eps-relative", "0.1"], r"--eps-relative: no effect with --calibration none"),
    (["weat", "--test", "W6", "--calibration", "none", "--reference-size", "5000"], r"--reference-size: no effect with --calibration none"),
    (["metric", "ripa", "--calibration", "none", "--reference-text", "t.txt"], r"--reference-text: no effect"),
    (["similarity", "--calibration", "none", "--eps", "0.01"], r"--eps: no effect with --calibration none"),
    (["ceat", "--test", "W6", "--calibration", "none", "--eps", "0.01"], r"--eps: no effect"),
    (["weat", "--test", "W6", "--calibration", "center", "--eps-relative", "0.1"],
     r"--eps-relative: calibration 'center' has no epsilon"),
    (["run", "--calibration", "center", "--eps", "0.5"], r"--eps: calibration 'center' has no epsilon"),
    (["run", "--calibration", "abtt", "--eps", "0.5"], r"--eps: calibration 'abtt' has no epsilon"),
    (["weat", "--test", "W6", "--calibration", "zca", "--force"], r"--force: no effect without --calibrator"),
    (["weat", "--test", "W6", "--calibration", "zca", "--eps", "0.01", "--calibration-param", "eps=0.1"],
     r"--eps and --calibration-param eps=0\.1 both set epsilon"),
    (["weat", "--test", "W6", "--method", "exact", "--permutations", "5000"],
     r"--permutations: no effect with --method exact"),
    (["metric", "rnd", "--method", "certified", "--permutations", "5000"],
     r"--permutations: no effect with --method certified"),
    (["sensitivity", "--method", "exact", "--permutations", "5000"], r"--permutations: no effect with --method exact"),
])
def test_options_without_effect_are_refused(argv, says):
    with pytest.raises(ConfigError, match=says):
        _check(argv)


@pytest.mark.parametrize("argv", [
    ["weat", "--test", "W6"],                                                   # nothing given
    ["weat", "--test", "W6", "--calibration", "zca", "--eps", "0.5"],           # a whitener takes epsilon
    ["weat", "--test", "W6", "--calibration", "pca-whiten", "--eps-relative", "0.1"],
    ["weat", "--test", "W6", "--calibration", "center", "--reference-size", "5000"],  # centring is fitted too
    ["weat", "--test", "W6", "--eps", "0.001"],                                 # the default value: not "given"
    ["weat", "--test", "W6", "--whitener", "w.npz", "--force"],                 # --force with a saved calibrator
    ["anisotropy", "--calibration", "none", "--reference-size", "3000"],        # there it sets what is measured
    ["run", "--calibration", "zca", "--eps", "0.5"],
    ["weat", "--test", "W6", "--calibration", "zca", "--calibration-param", "eps=0.1"],
    ["weat", "--test", "W6", "--method", "monte-carlo", "--permutations", "5000"],
    ["weat", "--test", "W6", "--permutations", "5000"],                         # auto: sampled where counting is not
])
def test_options_with_an_effect_are_accepted(argv):
    _check(argv)


def test_the_cli_refuses_in_one_line_before_loading_anything(capsys):
    assert main(["weat", "--test", "W6", "--calibration", "none", "--eps", "0.5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("isoeat: error: --eps: no effect with --calibration none")
    assert main(["run", "--calibration", "center", "--eps", "0.5"]) == 2
    assert "has no epsilon" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["sensitivity", "--calibration", "center", "--eps", "1e-3,1e-2"], r"--eps: calibration 'center' has no epsilon"),
    (["sensitivity", "--eps", "none", "--eps-mode", "relative"], r"--eps-mode: no effect with --eps none"),
    (["sensitivity", "--calibration", "center", "--eps-mode", "relative"], r"--eps-mode: calibration 'center'"),
])
def test_sensitivity_options_without_effect_are_refused(argv, says):
    with pytest.raises(ConfigError, match=says):
        _check(argv)


def test_sensitivity_encoder_draws_of_static_vectors_are_refused(glove):
    from isoeat.experiments.sensitivity import sensitivity_analysis

    # static vectors ignore the draw's seed: their reference sample is the same top rows in every repeat
    with pytest.raises(ConfigError, match=r"draw='encoder'.*glove-6b-50d.*the same top rows in every repeat"):
        sensitivity_analysis(glove, tests=["W6"], eps=None, reference_sizes=[1000], draw="encoder", repeats=3,
                    n_reference=1000, n_permutations=100, rng=0)
    # the draws that do vary for static vectors are still accepted (at their smallest size)
    res = sensitivity_analysis(glove, tests=["W6"], eps=None, reference_sizes=[1000], draw="bootstrap", repeats=2,
                      n_reference=1000, n_permutations=100, rng=0)
    assert res is not None


def test_sensitivity_cli_refuses_encoder_draws_on_static_vectors(capsys):
    assert main(["sensitivity", "--tests", "W6", "--draw", "encoder", "--eps", "none", "--reference-sizes",
                 "1000", "--default-size", "1000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--draw encoder" in err[0] and "static" in err[0]
