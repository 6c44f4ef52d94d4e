"""The isotropy check's thresholds at their exact boundaries (diagnostics/isotropy_check.py).

The rules, written here by hand from the module's documentation: anisotropic when
mean cosine >= 0.10, or IsoScore < 0.5, or top-PC share >= 5/d; a NaN measure is
unknown and never flags; no known measure at all: "not measured".
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from isoeat.diagnostics import isotropy_check as ic

NAN = float("nan")
below = lambda x: math.nextafter(x, 0.0)  # noqa: E731
above = lambda x: math.nextafter(x, 1.0)  # noqa: E731


def test_thresholds_are_the_documented_constants():
    assert (ic.MEAN_COSINE_MAX, ic.ISOSCORE_MIN, ic.TOP_PC_FACTOR) == (0.10, 0.5, 5.0)


@pytest.mark.parametrize("m, flagged", [(0.10, True), (below(0.10), False), (0.9, True), (-0.2, False)])
def test_mean_cosine_boundary(m, flagged):
    c = ic.isotropy_check(m, 0.9, 0.01, 50)
    assert (c.flagged == ("mean cosine",)) is flagged
    assert c.verdict == ("anisotropic" if flagged else "near-isotropic")


@pytest.mark.parametrize("i, flagged", [(0.5, False), (below(0.5), True), (above(0.5), False), (0.0, True)])
def test_isoscore_boundary(i, flagged):
    c = ic.isotropy_check(0.0, i, 0.01, 50)
    assert (c.flagged == ("IsoScore",)) is flagged


@pytest.mark.parametrize("d", [50, 384, 768])
def test_top_pc_share_boundary_is_five_over_d(d):
    thr = 5.0 / d
    assert ic.isotropy_check(0.0, 0.9, thr, d).flagged == ("top-PC share",)
    assert ic.isotropy_check(0.0, 0.9, below(thr), d).flagged == ()
    assert ic.isotropy_check(0.0, 0.9, below(thr), d).top_pc_threshold == thr


def test_small_dimension_never_flags_the_top_pc_share():
    assert ic.isotropy_check(0.0, 0.9, 0.99, 5).flagged == ()  # 5/5 = 1: a share is never >= 1 but for one PC
    assert ic.isotropy_check(0.0, 0.9, 1.0, 5).flagged == ("top-PC share",)


def test_nan_is_unknown_and_never_flags():
    c = ic.isotropy_check(NAN, NAN, 0.5, 50)
    assert c.flagged == ("top-PC share",) and set(c.unknown) == {"mean cosine", "IsoScore"}
    c = ic.isotropy_check(NAN, None, NAN, None)
    assert c.verdict == "not measured" and c.flagged == () and len(c.unknown) == 3
    assert ic.isotropy_check(0.05, NAN, NAN, 50).verdict == "partly measured"  # what is known passes, no more
    assert ic.isotropy_check(0.05, 0.9, 0.5, None).unknown == ("top-PC share",)  # no d, no threshold


def test_every_verdict_has_a_recommendation():
    seen = {ic.isotropy_check(*a).verdict: ic.isotropy_check(*a).recommendation
            for a in ((0.5, 0.1, 0.9, 50), (0.0, 0.9, 0.01, 50), (0.0, NAN, 0.01, 50), (NAN, NAN, NAN, 50))}
    assert set(seen) == set(ic.VERDICTS)
    assert "calibrate" in seen["anisotropic"] and "§6.1" in seen["anisotropic"]


def test_record_and_lines_on_real_measures():
    """From an anisotropy record as the runner stores it: a shared offset makes a space anisotropic."""
    from isoeat.diagnostics import anisotropy_from_vectors

    X = np.random.default_rng(0).normal(size=(400, 20))
    iso = anisotropy_from_vectors(X).to_dict()
    aniso = anisotropy_from_vectors(X + 3.0).to_dict()
    assert ic.check_from_record(iso).verdict == "near-isotropic"
    c = ic.check_from_record(aniso)
    assert c.verdict == "anisotropic" and "mean cosine" in c.flagged
    assert c.top_pc_share == aniso["explained_variance_ratio"][0] and c.dim == 20
    lines = ic.isotropy_lines("toy", aniso, iso, "zca")
    assert lines[0] == ("Isotropy check, toy raw space: anisotropic (frame reference, the calibrator's reference "
                        "sample: 400 sampled vectors).")  # a record without 'frame' was measured on the reference pool
    assert "(anisotropic if >= 0.1): ANISOTROPIC" in lines[1] and "5/d = 0.25" in lines[1]
    assert lines[2].startswith("  after zca: mean cosine") and lines[-1].startswith("  Recommendation: calibrate")
    assert ic.isotropy_lines("toy", None)[0] == "Isotropy check, toy raw space: not measured."
