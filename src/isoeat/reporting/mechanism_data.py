"""The mechanism records of an experiment folder: what each calibrated WEAT cell stored under ``mechanism``.

:func:`isoeat.experiments.cells.run_weat_cell` writes, for a calibrator with
principal directions (ZCA and its variants), the record of
:func:`isoeat.diagnostics.mechanism.mechanism_from_vectors` into the cell.
Cells written before isoeat recorded it, and calibrators without principal
directions, have none; :func:`mechanism_records` leaves those tests out.
"""

from __future__ import annotations

from typing import Any

from .._records import read_json

__all__ = ["mechanism_records"]


def mechanism_records(res: Any, model: str, calibration: str) -> list[tuple[str, dict, dict]]:
    """``(test, comparison row, mechanism record)`` for each test of ``model`` in the space ``calibration``, in
    order."""
    cells = {r["test"]: r.get("cell") for r in res.weat if r["model"] == model and r["calibration"] == calibration}
    out = []
    for row in res.comparisons:
        if row["model"] != model or row["calibration"] != calibration or not cells.get(row["test"]):
            continue
        rec = (read_json(res.out / cells[row["test"]]) or {}).get("mechanism")
        if isinstance(rec, dict) and rec.get("c_raw"):
            out.append((row["test"], row, rec))
    return out
