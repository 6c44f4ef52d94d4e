"""The Python API speaks one set of words (issue 33, item 6).

* every misuse is a one-line :class:`isoeat.IsoeatError` naming the argument (never a raw AttributeError,
  TypeError or KeyError, never a huge repr);
* a test file's path is accepted wherever a test id is;
* one keyword per concept in every public signature (``calibration``, ``n_reference``, ``rng=None``): the old
  spellings are deprecation shims, listed once per function (``isoeat._surface.RENAMED``, ``DEPRECATED_FUNCTIONS``),
  that warn naming the new keyword and the version that removes them, and give the same numbers.

Expected values are computed here from the vectors (cosine, s, d by the paper's eq. 1-3), not read from isoeat.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import isoeat
from isoeat._surface import DEPRECATED_FUNCTIONS, RENAMED

W6 = isoeat.get_test("W6")


def _one_line(exc: BaseException, *names: str) -> str:
    msg = str(exc)
    assert isinstance(exc, isoeat.IsoeatError), type(exc)
    assert "\n" not in msg and len(msg) <= 400, msg
    for n in names:
        assert n in msg, (n, msg)
    return msg


def _d_from_scratch(model, test) -> float:
    """Caliskan et al. eq. 1-3 on the model's vectors (unit rows, mean cosine differences, SD over X u Y, ddof 1)."""
    def unit(words):
        v = model.lookup(list(words)).vectors.astype(np.float64)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    X, Y, A, B = (unit(s.words) for s in (test.X, test.Y, test.A, test.B))
    s = lambda W: (W @ A.T).mean(axis=1) - (W @ B.T).mean(axis=1)  # noqa: E731
    sx, sy = s(X), s(Y)
    return float((sx.mean() - sy.mean()) / np.concatenate([sx, sy]).std(ddof=1))


def _write_w6(path, test_id="mine"):
    lines = [f"id: {test_id}", "bias_type: Gender"]
    for role in "XYAB":
        ws = getattr(W6, role)
        lines.append(f"{role}: {{name: {ws.name}, words: [{', '.join(ws.words)}]}}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- misuse: one line, the argument named
def test_weat_of_no_model_names_the_model(glove):
    with pytest.raises(isoeat.ConfigError) as e:
        isoeat.weat(None, "W6")
    _one_line(e.value, "model", "load_model")
    with pytest.raises(isoeat.ConfigError) as e:  # a model's name instead of a model: the call to make
        isoeat.weat("glove-6b-50d", "W6")
    assert "isoeat.load_model('glove-6b-50d')" in _one_line(e.value, "model")


@pytest.mark.parametrize("test", [123, 1.5, None, ["W6"], object()])
def test_weat_of_a_test_that_is_no_test_names_the_argument(glove, test):
    with pytest.raises(isoeat.ConfigError) as e:
        isoeat.weat(glove, test)
    _one_line(e.value, "test must be", "test id", "file")


def test_weat_of_a_dict_that_is_no_test(glove):
    with pytest.raises(isoeat.ConfigError) as e:
        isoeat.weat(glove, {"X": ["a", "b"], "sets": 1})
    assert "AssociationTest" in _one_line(e.value, "test must be", "(dict)")


@pytest.mark.parametrize("call, name, hint", [
    (lambda m: isoeat.weat(m, "W6", n_permutation=10), "n_permutation", "n_permutations"),
    (lambda m: isoeat.compare_anisotropy(m, n_sample=10), "n_sample", "n_samples"),
    (lambda m: isoeat.anisotropy(m, n_sample=10), "n_sample", "n_samples"),
    (lambda m: isoeat.evaluate_similarity(m, "ws353", min_coverag=0.5), "min_coverag", "min_coverage"),
    (lambda m: isoeat.compare_calibration(m, ["W6"], n_refrence=10), "n_refrence", "n_reference"),
    (lambda m: isoeat.ceat(m, "W6", n_draw=10), "n_draw", "n_draws"),
    (lambda m: isoeat.load_tests_from_file(path="x.yaml", strict=True), "strict", ""),
])
def test_an_unknown_keyword_is_one_line_with_did_you_mean(glove, call, name, hint):
    with pytest.raises(isoeat.ConfigError) as e:
        call(glove)
    _one_line(e.value, repr(name), hint)


def test_a_missing_argument_and_too_many_positional_ones_are_one_line(glove):
    with pytest.raises(isoeat.ConfigError) as e:
        isoeat.weat(glove)
    _one_line(e.value, "weat", "missing argument 'test'")
    with pytest.raises(isoeat.ConfigError) as e:
        isoeat.weat(glove, "W6", "zca")
    _one_line(e.value, "weat takes 2 positional argument(s)", "calibration")


def test_get_test_of_an_unknown_id_shows_a_bounded_id():
    huge = "W" + "x" * 100_000
    with pytest.raises(isoeat.UnknownNameError) as e:
        isoeat.get_test(huge)
    assert "unknown test id" in _one_line(e.value)  # at most 400 characters, not 100,000
    with pytest.raises(isoeat.ConfigError) as e:
        isoeat.get_test({"id": "W6"})
    _one_line(e.value, "test_id must be", "(dict)")


def test_get_test_of_a_file_path_points_to_the_loader(tmp_path):
    path = _write_w6(tmp_path / "mine.yaml")
    with pytest.raises(isoeat.UnknownNameError) as e:
        isoeat.get_test(str(path))
    _one_line(e.value, "load_tests_from_file", "is a file")


# --------------------------------------------------------------------------- a test file wherever a test id goes
def test_weat_takes_a_test_file_and_gives_the_papers_d(glove, tmp_path):
    path = _write_w6(tmp_path / "my_test.yaml")
    res = isoeat.weat(glove, str(path), rng=0)
    assert res.test == "mine" and res.effect_size == pytest.approx(_d_from_scratch(glove, W6), abs=1e-9)
    assert isoeat.weat(glove, path, rng=0).effect_size == res.effect_size  # a Path too


def test_every_test_argument_takes_a_file(glove, tmp_path):
    path = str(_write_w6(tmp_path / "t.yaml"))
    assert isoeat.sc_weat(glove, "doctor", path, rng=0)[0].test == "mine"
    assert isoeat.metric(glove, "mac", path).test == "mine"
    assert [r.test for r in isoeat.metrics(glove, "mac", [path])] == ["mine"]
    comp = isoeat.compare_calibration(glove, path, calibration="center", n_reference=2000, rng=0)
    assert [r.test for r in comp.rows] == ["mine"]


def test_a_file_of_several_tests_where_one_goes_is_one_line(glove, tmp_path):
    path = tmp_path / "two.yaml"
    one = _write_w6(tmp_path / "a.yaml").read_text()
    path.write_text("tests:\n" + "\n".join(
        "  - " + one.replace("\n", "\n    ").rstrip().replace("id: mine", f"id: t{i}") for i in (1, 2)) + "\n")
    assert [t.id for t in isoeat.load_tests_from_file(path)] == ["t1", "t2"]
    with pytest.raises(isoeat.ConfigError) as e:
        isoeat.weat(glove, str(path))
    _one_line(e.value, "holds 2 tests", "t1, t2")


def test_a_registered_id_wins_over_a_folder_of_that_name(glove, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "W6").mkdir()
    assert isoeat.weat(glove, "W6", rng=0).effect_size == pytest.approx(_d_from_scratch(glove, W6), abs=1e-9)


def test_a_missing_test_file_names_the_file(glove, tmp_path):
    with pytest.raises(isoeat.IsoeatFileNotFoundError) as e:
        isoeat.weat(glove, str(tmp_path / "my_test.yaml"))
    _one_line(e.value, "my_test.yaml")


# --------------------------------------------------------------------------- one word per concept
def _public_callables():
    for name in isoeat.__all__:
        obj = getattr(isoeat, name)
        if isinstance(obj, type) or not callable(obj) or name.endswith("Error") or name == "metrics":
            continue
        yield name, obj


def test_no_public_signature_holds_an_old_spelling():
    seen = []
    for name, fn in _public_callables():
        params = {n: p for n, p in inspect.signature(fn).parameters.items() if p.kind is not p.POSITIONAL_ONLY}
        old = sorted(set(params) & set(RENAMED.get(name, {})))
        assert not old, f"isoeat.{name} takes {old}: use {[RENAMED[name][o][0] for o in old]} (shims only)"
        if "rng" in params:
            assert params["rng"].default is None, f"isoeat.{name}: rng defaults to {params['rng'].default!r}"
            seen.append(name)
    assert {"weat", "sc_weat", "seat", "ceat", "metric", "compare_calibration", "compare_anisotropy",
            "compare_similarity", "sensitivity_analysis"} <= set(seen)


def test_the_concepts_have_their_one_keyword():
    takes = {name: set(inspect.signature(fn).parameters) for name, fn in _public_callables()}
    for name in ("weat", "sc_weat", "seat", "ceat", "metric", "compare_calibration", "compare_anisotropy",
                 "anisotropy", "evaluate_similarity", "compare_similarity", "run_experiment"):
        assert "calibration" in takes[name], name
    for name in ("fit_calibrator", "compare_calibration", "compare_anisotropy", "ceat", "sensitivity_analysis"):
        assert "n_reference" in takes[name], name
    assert isoeat.ceat is __import__("isoeat.stats.ceat", fromlist=["ceat"]).ceat and "ceat" in isoeat.__all__


def test_the_shims_are_listed_once_and_name_their_successor():
    # per function: the old keywords each function accepted before issue 33 (git show 860f7ae^), and nothing else
    assert {fn: {old: new for old, (new, _) in shims.items()} for fn, shims in RENAMED.items()} == {
        "compare_calibration": {"calibrator": "calibration"},
        "ceat": {"calibrators": "calibration"}, "ceat_from_contexts": {"calibrators": "calibration"},
        "run_experiment": {"calibrators": "calibration"},
        "anisotropy": {"reference_size": "n_reference"}, "compare_anisotropy": {"reference_size": "n_reference"},
        "sensitivity_analysis": {"default_size": "n_reference"}}
    assert set(DEPRECATED_FUNCTIONS) == {"fit_whitener"}


def _version(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def test_every_shim_says_the_version_that_removes_it(glove):
    """Each shim's DeprecationWarning names its removal version, a later one than this isoeat's (issue 41 item 5)."""
    removals = [r for shims in RENAMED.values() for _, r in shims.values()] + \
        [r for _, r in DEPRECATED_FUNCTIONS.values()]
    assert removals and all(_version(r) > _version(isoeat.__version__) for r in removals), removals
    cal = isoeat.fit_calibrator(glove, "center", n_reference=2000)
    calls = {
        "compare_calibration": lambda: isoeat.compare_calibration(glove, ["W6"], calibrator=cal, rng=0,
                                                                  n_permutations=100),
        "anisotropy": lambda: isoeat.anisotropy(glove, n_samples=50, reference_size=2000, rng=0, frame="reference"),
        "fit_whitener": lambda: isoeat.fit_whitener(glove, n_reference=2000),
    }
    for where, call in calls.items():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call()
        msg = " ".join(str(x.message) for x in w if issubclass(x.category, DeprecationWarning))
        removal = RENAMED[where][next(iter(RENAMED[where]))][1] if where in RENAMED else \
            DEPRECATED_FUNCTIONS[where][1]
        assert f"removed in isoeat {removal}" in msg and where in msg, msg


def test_a_renamed_keyword_applies_only_to_the_functions_that_had_it(glove):
    # weat and fit_calibrator never took calibrator=/reference_size=: a typo of today's keyword, not a shim
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(isoeat.ConfigError) as e:
            isoeat.weat(glove, "W6", calibrator="center")
        _one_line(e.value, "calibrator", "calibration")
        with pytest.raises(isoeat.ConfigError) as e:
            isoeat.fit_calibrator(glove, "zca", reference_size=2000)
        _one_line(e.value, "reference_size")  # its calibration's parameters are listed


def test_save_calibrator_takes_calibrator_by_keyword(glove, tmp_path):
    """``calibrator`` is save_calibrator's own first parameter, not an old spelling of calibration= (issue 41):
    by keyword it saves the same file as by position, and never answers "did you mean calibrator?"."""
    cal = isoeat.fit_calibrator(glove, "center", n_reference=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        a = isoeat.save_calibrator(cal, tmp_path / "a.npz")
        b = isoeat.save_calibrator(calibrator=cal, path=tmp_path / "b.npz")
    la, lb = isoeat.load_calibrator(a), isoeat.load_calibrator(b)
    assert np.array_equal(la.mean_, lb.mean_) and np.array_equal(la.mean_, cal.mean_)
    assert isoeat.calibrator_digest(calibrator=cal) == isoeat.calibrator_digest(cal)
    with pytest.raises(isoeat.ConfigError) as e:
        isoeat.save_calibrator(calibratr=cal, path=tmp_path / "c.npz")
    _one_line(e.value, "calibratr", "did you mean calibrator")


def test_a_positional_only_argument_given_by_keyword_is_named_so():
    from isoeat._surface import public

    @public
    def f(x, /, *, y=1):
        return x + y

    with pytest.raises(isoeat.ConfigError) as e:
        f(x=1)
    msg = _one_line(e.value, "f:", "x", "by position")
    assert "did you mean" not in msg


def _warns(new: str, call):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = call()
    dep = [x for x in w if issubclass(x.category, DeprecationWarning)]
    assert len(dep) == 1 and f"use {new}" in str(dep[0].message), [str(x.message) for x in dep]
    assert dep[0].filename == __file__, dep[0].filename  # the caller's line, not isoeat's (Python shows it there)
    return out


def test_fit_whitener_warns_and_fits_what_fit_calibrator_fits(glove):
    new = isoeat.fit_calibrator(glove, "zca", n_reference=3000, eps=1e-2)
    old = _warns("fit_calibrator", lambda: isoeat.fit_whitener(glove, n_reference=3000, eps=1e-2))
    assert np.array_equal(old.whitening_, new.whitening_) and np.array_equal(old.mean_, new.mean_)


def test_compare_calibration_calibrator_shim(glove):
    cal = isoeat.fit_calibrator(glove, "center", n_reference=2000)
    new = isoeat.compare_calibration(glove, ["W6", "W8"], calibration=cal, rng=3)
    old = _warns("calibration=", lambda: isoeat.compare_calibration(glove, ["W6", "W8"], calibrator=cal, rng=3))
    assert [(r.raw.effect_size, r.calibrated.effect_size, r.calibrated.p_value) for r in old.rows] == \
        [(r.raw.effect_size, r.calibrated.effect_size, r.calibrated.p_value) for r in new.rows]
    with pytest.raises(isoeat.ConfigError) as e:
        isoeat.compare_calibration(glove, ["W6"], calibration=cal, calibrator=cal)
    _one_line(e.value, "give calibration= only")


def test_compare_calibration_takes_a_name_with_its_parameters(glove):
    a = isoeat.compare_calibration(glove, ["W6"], calibration={"zca": {"eps": 1e-2}}, n_reference=3000, rng=0)
    b = isoeat.compare_calibration(glove, ["W6"], calibration="zca", calibration_params={"eps": 1e-2},
                                   n_reference=3000, rng=0)
    assert a.calibrator_metadata["eps"] == 1e-2 and a.rows[0].calibrated.effect_size == b.rows[0].calibrated.effect_size


def test_compare_anisotropy_reference_size_shim(glove):
    # frame reference: the pool is the n_reference top rows (the paper's frame does not depend on it)
    new = isoeat.compare_anisotropy(glove, n_samples=200, n_reference=3000, rng=1, frame="reference")
    old = _warns("n_reference=", lambda: isoeat.compare_anisotropy(glove, n_samples=200, reference_size=3000, rng=1,
                                                                   frame="reference"))
    assert old[0].mean_cosine == new[0].mean_cosine and old[0].sampling == new[0].sampling
    assert "3000" in new[0].sampling
    one = _warns("n_reference=", lambda: isoeat.anisotropy(glove, n_samples=200, reference_size=3000, rng=1,
                                                           frame="reference"))
    assert one.mean_cosine == new[0].mean_cosine


def test_compare_anisotropy_fits_a_calibration_by_name(glove):
    by_name = isoeat.compare_anisotropy(glove, "center", n_samples=200, n_reference=3000, rng=1)[1]
    fitted = isoeat.fit_calibrator(glove, "center", n_reference=3000)
    given = isoeat.compare_anisotropy(glove, fitted, n_samples=200, n_reference=3000, rng=1)[1]
    assert by_name.mean_cosine == given.mean_cosine and by_name.calibration == "center"


def test_ceat_from_contexts_calibrators_shim():
    from isoeat.stats.ceat import ceat_from_contexts

    gen = np.random.default_rng(0)
    ctx = {r: [gen.normal(size=(3, 4)) for _ in range(3)] for r in "XYAB"}

    class Scale:
        name = "scale"

        def transform(self, X):
            return np.asarray(X) * np.array([10.0, 1.0, 1.0, 1.0])

    new = ceat_from_contexts(ctx, n_draws=20, rng=2, calibration={"s": Scale()})
    old = _warns("calibration=", lambda: ceat_from_contexts(ctx, n_draws=20, rng=2, calibrators={"s": Scale()}))
    assert [r.effect_sizes for r in old] == [r.effect_sizes for r in new] and new[1].calibration == "s"
    assert ceat_from_contexts(ctx, n_draws=20, rng=2, calibration=Scale())[1].calibration == "scale"


def test_sensitivity_default_size_shim(glove):
    kw = dict(eps=(1e-2,), reference_sizes=None, repeats=1, draw="fixed", rng=0)
    new = isoeat.sensitivity_analysis(glove, ["W6"], n_reference=3000, **kw)
    old = _warns("n_reference=", lambda: isoeat.sensitivity_analysis(glove, ["W6"], default_size=3000, **kw))
    assert new.default["n_reference"] == 3000 == old.default["n_reference"]
    assert [r.effect_size for r in old.rows] == [r.effect_size for r in new.rows]


def test_run_experiment_calibrators_shim(glove, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: shim\nmodels: [{spec: glove-6b-50d, label: g}]\ntests: [W6]\ncalibrations: [none, center]\n"
                   "settings: {permutations: 500}\nanisotropy: false\n", encoding="utf-8")
    cal = isoeat.fit_calibrator(glove, "center", n_reference=2000)
    isoeat.run_experiment(cfg, tmp_path / "new", models={"g": glove}, calibration={("g", "center"): cal},
                          write_tables=False, progress=False)
    _warns("calibration=", lambda: isoeat.run_experiment(cfg, tmp_path / "old", models={"g": glove},
                                                          calibrators={("g", "center"): cal}, write_tables=False,
                                                          progress=False))
    d = [isoeat.load_experiment(tmp_path / k).weat for k in ("new", "old")]
    assert [(r["calibration"], r["effect_size"]) for r in d[0]] == [(r["calibration"], r["effect_size"]) for r in d[1]]


# --------------------------------------------------------------------------- rng=None: a fresh seed, recorded
def test_rng_none_draws_a_fresh_seed_that_replays(glove):
    kw = dict(calibration="center", n_reference=2000, method="monte-carlo", n_permutations=200)
    a = isoeat.compare_calibration(glove, ["W6"], **kw)
    seed = a.rows[0].raw.seed
    assert isinstance(seed, int)
    b = isoeat.compare_calibration(glove, ["W6"], rng=seed, **kw)
    assert (a.rows[0].raw.p_value, a.rows[0].calibrated.p_value) == (b.rows[0].raw.p_value,
                                                                      b.rows[0].calibrated.p_value)
    seeds = {isoeat.compare_calibration(glove, ["W6"], **kw).rows[0].raw.seed for _ in range(3)}
    assert len(seeds | {seed}) > 1  # fresh entropy: 4 draws of 2^32 seeds agree with probability < 1e-9


def _var_keyword_calls(m):
    """Public functions with ``**options`` check their own keywords: one call each with a typo'd keyword."""
    X, Y = np.eye(4)[:2], np.eye(4)[2:]
    return {
        "load_model": lambda: isoeat.load_model("glove-6b-50d", bogus_kw=1),
        "make_calibrator": lambda: isoeat.make_calibrator("zca", bogus_kw=1),
        "fit_calibrator": lambda: isoeat.fit_calibrator(m, "zca", bogus_kw=1),
        "weat": lambda: isoeat.weat(m, "W6", bogus_kw=1),
        "weat_from_vectors": lambda: isoeat.weat_from_vectors(X, Y, X, Y, bogus_kw=1),
        "sc_weat": lambda: isoeat.sc_weat(m, "career", "W6", bogus_kw=1),
        "explain_conventions": lambda: isoeat.explain_conventions(m, "W6", bogus_kw=1),
        "sc_weat_from_vectors": lambda: isoeat.sc_weat_from_vectors(X[0], X, Y, bogus_kw=1),
        "criterion_validity": lambda: isoeat.criterion_validity(m, "occupations", "W7", bogus_kw=1),
        "seat": lambda: isoeat.seat(m, "W6", bogus_kw=1),
        "word_list_audit": lambda: isoeat.word_list_audit(m, "W6", bogus_kw=1),
        "metric": lambda: isoeat.metric(m, "mac", "W6", bogus_kw=1),
        "ngroup": lambda: isoeat.ngroup(m, "W6", bogus_kw=1),
        "compare_calibration": lambda: isoeat.compare_calibration(m, ["W6"], bogus_kw=1),
        "sensitivity_analysis": lambda: isoeat.sensitivity_analysis(m, ["W6"], bogus_kw=1),
        "anisotropy": lambda: isoeat.anisotropy(m, bogus_kw=1),
        "compare_anisotropy": lambda: isoeat.compare_anisotropy(m, bogus_kw=1),
        "eat_levels": lambda: isoeat.eat_levels(m, "W6", bogus_kw=1),
        "fit_whitener": None,  # deprecated: its **kwargs go to the model's reference_vectors
    }


def test_every_public_function_refuses_an_unknown_keyword_in_one_line(glove):
    calls = _var_keyword_calls(glove)
    for name, fn in _public_callables():
        takes_any = any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
        call = calls[name] if takes_any else (lambda: fn(bogus_kw=1))
        if call is None:
            continue
        with pytest.raises(isoeat.ConfigError) as e:
            call()
        _one_line(e.value, "bogus_kw")


def test_the_package_never_calls_its_own_deprecated_keywords():
    """isoeat's own commands call the public API by its current keywords (an old one warns the user of
    something they did not write): every call, in src/isoeat, of a function wrapped by the shims."""
    import ast
    import importlib
    import pathlib
    import pkgutil

    from isoeat import _surface

    for m in pkgutil.walk_packages(isoeat.__path__, "isoeat."):  # the shims register their functions on import
        try:
            importlib.import_module(m.name)
        except ImportError:  # an optional extra's module
            continue
    wrapped = set(_surface.keywords.__globals__["_KEYWORDS"])
    assert {"weat", "ceat", "compare_anisotropy", "sensitivity_analysis", "run_experiment"} <= wrapped
    bad = []
    for f in pathlib.Path(isoeat.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                bad += [f"{f.name}:{node.lineno} {fn}({kw.arg}=)" for kw in node.keywords
                        if fn in wrapped and kw.arg in _surface.RENAMED.get(fn, {})]
    assert bad == []
