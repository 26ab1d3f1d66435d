"""The one result protocol of the engines (:class:`dpcap.solvers.status.Solution`).

Every engine's raw result carries ``status`` (an :class:`EngineStatus`, or one per element for
a batch), ``message`` (a string) and ``iterations`` (a count, or one per element); the
certificate layer reads the status of any of them through one reader,
:func:`dpcap._core.certify.status_of` (:func:`~dpcap._core.certify.statuses_of` for a batch).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import pytest
from numpy.typing import NDArray

from dpcap._core import certify as _certify
from dpcap.errors import Status
from dpcap.solvers import (
    blahut,
    conic,
    dplp,
    envelope_lp,
    gain_milp,
    inference,
    ratedistortion,
    renyi_zero,
    vertices,
)
from dpcap.solvers.status import EngineStatus, Solution, by_element, statuses

FloatArray = NDArray[np.float64]

#: A binary channel whose capacity-achieving prior is not uniform.
W = np.array([[0.9, 0.1], [0.2, 0.8]])
#: A joint law of a secret S (rows) and a datum X (columns), every marginal positive.
JOINT = np.array([[0.3, 0.1, 0.1], [0.05, 0.15, 0.3]])


def _funnel_problem() -> tuple[FloatArray, FloatArray, float]:
    """``T = P_{S|X}``, ``p = P_X`` and a quarter of ``H(X)`` (a utility level in the range)."""
    p = JOINT.sum(axis=0)
    T = JOINT / p
    return T, p, 0.25 * float(-np.sum(p * np.log(p)))


def _envelope() -> Any:
    T, p, R = _funnel_problem()
    return envelope_lp.solve(T, p, R, "pf", tol=1e-6, max_iter=200)[0]


def _envelope_local() -> Any:
    T, p, R = _funnel_problem()
    rng = np.random.default_rng(0)
    return envelope_lp.local_solve(T, p, R, "ib", tol=1e-6, max_iter=200, rng=rng)


def _perfect_privacy() -> Any:
    T, p, _ = _funnel_problem()
    return vertices.perfect_privacy_lp(vertices.perfect_privacy_vertices(T, p, rank=2), p)


def _mechanism_lp(solver: str) -> Callable[[], Any]:
    def run() -> Any:
        lp = dplp.MechanismLP(0.5 * (1 - np.eye(2)), np.array([0]), np.array([1]), solver=solver)
        return lp.solve(1.0)

    return run


#: Every engine on a tiny problem, by name: (engine, batch length or None for a single problem).
ENGINES: dict[str, tuple[Callable[[], Any], int | None]] = {
    "blahut": (lambda: blahut.solve(np.stack([W, np.eye(2), W.T])), 3),
    "ratedistortion": (
        lambda: ratedistortion.solve(
            np.array([0.3, 0.7]), 1 - np.eye(2), np.array([0.0, 1.0, 2.0, math.inf])
        ),
        4,
    ),
    "conic": (lambda: conic.capacity_conic(W), None),
    "conic-cost": (lambda: conic.capacity_conic(W, cost=np.array([0.0, 1.0]), budget=0.3), None),
    "conic-renyi": (lambda: conic.renyi_capacity_conic(W, 2.0), None),
    "conic-renyi-centre": (lambda: conic.renyi_capacity_conic(W, 0.3), None),
    "dplp-highs": (_mechanism_lp("HIGHS"), None),
    "dplp-clarabel": (_mechanism_lp("CLARABEL"), None),
    "envelope": (_envelope, None),
    "envelope-local": (_envelope_local, None),
    "gain-multiplicative": (
        lambda: gain_milp.multiplicative(W, np.eye(2), time_limit=30.0, rel_gap=1e-6),
        None,
    ),
    "gain-additive": (
        lambda: gain_milp.additive(W, np.eye(2), time_limit=30.0, rel_gap=1e-6),
        None,
    ),
    "inference": (lambda: inference.inference_conic(JOINT, 1 - np.eye(3), 0.3), None),
    "renyi-zero": (lambda: renyi_zero.solve(W), None),
    "renyi-centre": (lambda: renyi_zero.solve_centre(W, 0.3, tol=1e-9), None),
    "perfect-privacy": (_perfect_privacy, None),
}


def _is_count(value: object) -> bool:
    return bool(isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0)


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_every_engine_follows_the_protocol(name: str) -> None:
    run, batch = ENGINES[name]
    solution = run()
    assert isinstance(cast(object, solution), Solution)
    fields = {field.name for field in dataclasses.fields(solution)}
    assert {"status", "message", "iterations"} <= fields  # stored, not derived
    assert isinstance(solution.message, str)
    if batch is None:
        assert isinstance(solution.status, EngineStatus)
        assert solution.status.usable  # a tiny, well-posed problem
        assert _is_count(solution.iterations)
    else:
        status = solution.status
        assert isinstance(status, np.ndarray)
        assert status.dtype == object
        assert status.shape == (batch,)
        assert all(isinstance(s, EngineStatus) for s in status)
        assert isinstance(solution.iterations, np.ndarray)
        assert np.issubdtype(solution.iterations.dtype, np.integer)
        assert solution.iterations.shape == (batch,)
        assert (solution.iterations >= 0).all()
        assert "converged" not in fields  # derived from the status, never a second field
        np.testing.assert_array_equal(
            solution.converged, [s is EngineStatus.OPTIMAL for s in status]
        )
    per_element = statuses(solution)
    assert per_element.shape == (1 if batch is None else batch,)
    assert all(isinstance(s, EngineStatus) for s in per_element)


def test_iterative_engines_count_their_steps() -> None:
    """Engines that iterate report a positive count of their own steps on a non-trivial problem."""
    assert int(blahut.solve(W[None]).iterations[0]) > 0
    assert renyi_zero.solve_centre(W, 0.3, tol=1e-9).iterations > 0
    envelope = _envelope()
    assert envelope.iterations > 0
    assert str(envelope.iterations) in envelope.message
    assert conic.capacity_conic(W).iterations > 0  # Clarabel reports its iterations


def test_a_short_budget_reports_max_iter_per_element() -> None:
    # The uniform prior is optimal for the identity and for a channel with equal rows: their
    # brackets are closed before any iteration; one Blahut–Arimoto step from the uniform prior
    # cannot reach the Z channel's optimum (3/5, 2/5).
    z = np.array([[1.0, 0.0], [0.5, 0.5]])
    stack = np.stack([np.eye(2), z, np.full((2, 2), 0.5)])
    sol = blahut.solve(stack, tol=1e-12, max_iter=1, newton=False)
    assert list(sol.status) == [EngineStatus.OPTIMAL, EngineStatus.MAX_ITER, EngineStatus.OPTIMAL]
    assert sol.converged.tolist() == [True, False, True]
    assert sol.upper[1] - sol.lower[1] > 1e-12  # the engine's own bracket is open there
    assert "1 of 3" in sol.message
    assert (sol.iterations <= 1).all()
    public = _certify.statuses_of(sol)
    assert public.tolist() == [Status.INACCURATE, Status.MAX_ITER, Status.INACCURATE]
    # with a budget, the same batch closes everywhere
    done = blahut.solve(stack, tol=1e-12)
    assert all(s is EngineStatus.OPTIMAL for s in done.status)


def test_a_short_budget_reports_max_iter_per_slope() -> None:
    # At slope 0 the uniform output law is optimal (R = 0, the bound is tight at once); at
    # slope 1 one Blahut step from the uniform law leaves a gap.
    p = np.array([0.3, 0.7])
    slopes = np.array([0.0, 1.0])
    sol = ratedistortion.solve(p, 1 - np.eye(2), slopes, tol=1e-12, max_iter=1, newton=False)
    assert list(sol.status) == [EngineStatus.OPTIMAL, EngineStatus.MAX_ITER]
    assert sol.converged.tolist() == [True, False]
    assert sol.information[1] - sol.lower[1] > 1e-12


def test_by_element() -> None:
    out = by_element(np.array([True, False, True]))
    assert out.dtype == object
    assert list(out) == [EngineStatus.OPTIMAL, EngineStatus.MAX_ITER, EngineStatus.OPTIMAL]
    assert by_element(np.zeros(0, dtype=bool)).shape == (0,)


@pytest.mark.parametrize("engine", list(EngineStatus))
def test_the_reader_maps_every_engine_status(engine: EngineStatus) -> None:
    public = _certify.status_of(engine)
    assert isinstance(public, Status)
    assert public is not Status.CONVERGED  # only a closed bracket converges
    # a solution carrying that status reads the same, single or batched
    single = dataclasses.replace(renyi_zero.solve(W), status=engine)
    assert _certify.status_of(single) is public
    assert _certify.statuses_of(single).tolist() == [public]
    batch = blahut.solve(np.stack([W, W]))
    batch = dataclasses.replace(batch, status=np.array([engine, EngineStatus.OPTIMAL], object))
    assert _certify.statuses_of(batch).tolist() == [
        public,
        _certify.status_of(EngineStatus.OPTIMAL),
    ]


def test_the_reader_says_why_the_bracket_is_open() -> None:
    assert _certify.status_of(EngineStatus.MAX_ITER) is Status.MAX_ITER
    assert _certify.status_of(EngineStatus.MAX_CELLS) is Status.MAX_ITER
    assert _certify.status_of(EngineStatus.INFEASIBLE) is Status.INFEASIBLE
    assert _certify.status_of(EngineStatus.FAILED) is Status.FAILED
    for engine in (EngineStatus.STALLED, EngineStatus.LOCAL, EngineStatus.INACCURATE):
        assert _certify.status_of(engine) is Status.INACCURATE


def test_a_batch_has_no_single_status() -> None:
    with pytest.raises(TypeError, match="one status per element"):
        _certify.status_of(blahut.solve(np.stack([W, W])))


def test_statuses_rejects_what_is_not_a_status() -> None:
    bad = dataclasses.replace(renyi_zero.solve(W), status="optimal")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="EngineStatus"):
        statuses(bad)
