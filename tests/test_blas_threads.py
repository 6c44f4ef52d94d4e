"""The quick run of static vectors computes on one BLAS thread (a second OpenBLAS thread only spins on its many
small products), and gives the threads back when it ends; a contextual model keeps them."""

from __future__ import annotations

import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads() -> list[int]:
    return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]


def test_quick_run_of_static_vectors_on_one_blas_thread(monkeypatch, capsys):
    from isoeat import _resources
    from isoeat.cli import main

    seen: list[list[int]] = []
    real = _resources.one_blas_thread

    def spy():
        ctx = real()
        seen.append(["entered"])
        return ctx

    monkeypatch.setattr(_resources, "one_blas_thread", spy)
    before = _blas_threads()
    import isoeat.experiments.runner as runner

    real_run = runner.run_experiment

    def run_experiment(*a, **k):
        seen.append(_blas_threads())  # inside the run: one thread per BLAS library
        return real_run(*a, **k)

    monkeypatch.setattr(runner, "run_experiment", run_experiment)
    assert main(["run", "--tests", "W6", "--reference-size", "2000", "--stability", "off", "--quiet"]) == 0
    assert seen[0] == ["entered"] and all(n == 1 for n in seen[1])
    assert _blas_threads() == before  # given back
