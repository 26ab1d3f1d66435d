"""A store written before the wings move (dpcap 0.1.0, flat layout) still loads and resumes.

``tests/data/store_0_1`` was written by the code of commit 0ff8af5: ``randomized_response`` at
``k ∈ {2, 3}``, ``ε ∈ {0.5, 1}``, with ``capacity`` and ``dp_delta`` at ``ε' ∈ {0, 0.5}``.
The values are checked against closed forms of k-ary randomized response, whose rows are
``e^ε/(e^ε + k − 1)`` on the diagonal and ``1/(e^ε + k − 1)`` elsewhere:

* capacity (a symmetric channel): ``log k − H(row)``;
* ``δ(ε')`` of the worst ordered pair: ``(e^ε − e^{ε'})/(e^ε + k − 1)`` for ``ε' ≤ ε``
  (only the pair's own column contributes), so ``δ(0)`` is the total variation.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

import dpcap

STORE = Path(__file__).resolve().parent / "data" / "store_0_1"
SPEC = {
    "family": "randomized_response",
    "grid": {"k": [2, 3], "eps": [0.5, 1.0]},
    "queries": ["capacity", ("dp_delta", {"eps": [0.0, 0.5]})],
}


def capacity(k: int, eps: float) -> float:
    z = math.exp(eps) + k - 1
    row = [math.exp(eps) / z] + [1 / z] * (k - 1)
    return math.log(k) + sum(p * math.log(p) for p in row)


def delta(k: int, eps: float, level: float) -> float:
    return max(math.exp(eps) - math.exp(level), 0.0) / (math.exp(eps) + k - 1)


def test_an_old_store_loads_with_its_values() -> None:
    table = dpcap.load_sweep(STORE)
    assert len(table) == 12
    for row in table.itertuples():
        if row.query == "capacity":
            assert row.lower - 1e-12 <= capacity(row.k, row.eps) <= row.upper + 1e-12
        else:
            assert row.value == pytest.approx(delta(row.k, row.eps, row.query_eps), abs=1e-12)


def test_an_old_store_resumes_without_recomputing(tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(STORE, store)
    before = sorted(p.name for p in store.iterdir())
    table = dpcap.sweep(SPEC["family"], SPEC["grid"], SPEC["queries"], store=store, progress=False)
    assert len(table) == 12
    assert sorted(p.name for p in store.iterdir()) == before  # nothing was computed again
