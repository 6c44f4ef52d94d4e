"""Shared fixtures. Real data only: the bundled GloVe 6B 50d and ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

# Progress lines go to stderr when a stage runs longer than 10 s, which on a loaded machine is a matter of
# timing: tests that check a command's stderr (one line per error) would then pass or fail by luck. The suite
# runs with progress off unless a test asks for it (tests/test_progress*.py set or clear $ISOEAT_PROGRESS
# themselves; the docs run clears it, as a reader's shell would). An explicit $ISOEAT_PROGRESS is kept.
os.environ.setdefault("ISOEAT_PROGRESS", "0")


def _shared_data() -> Path | None:
    for cand in (os.environ.get("ISOEAT_SHARED_DATA"), ROOT.parent / "shared" / "data"):
        if cand and Path(cand).is_dir():
            return Path(cand)
    return None


SHARED = _shared_data()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if SHARED is None:
        pytest.skip("../shared/data not present (set ISOEAT_SHARED_DATA to run)")
    return SHARED


@pytest.fixture(scope="session")
def glove():
    import isoeat

    try:
        return isoeat.load_model("glove-6b-50d")
    except isoeat.MissingDependencyError as exc:  # Python 3.10 has no kumo wheel
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def glove_zca(glove):
    import isoeat

    return isoeat.fit_calibrator(glove, "zca", n_reference=100_000, eps=1e-3)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001 - pytest's hook signature
    """Print the bad-input catalogue's size (machine-independent; the README quotes it)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_isoeat_catalogue", ROOT / "tests" / "robustness" / "catalogue.py")
    if spec is None or spec.loader is None:
        return
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    per_file = {k.removeprefix("test_bad_input_").removesuffix(".py"): len(v) for k, v in mod.catalogue().items()}
    terminalreporter.write_line(f"bad-input catalogue: {mod.size()} cases "
                                f"({', '.join(f'{k} {n}' for k, n in per_file.items())})")
