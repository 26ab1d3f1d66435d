"""Shannon capacity: closed forms, certified brackets, engines, exact reductions and theorems.

Every expected value is a textbook or paper formula written out here, never the code's output.
The contract under test (docs/mathematics.rst §1): ``lower ≤ C ≤ upper`` for every result,
``upper − lower ≤ tol`` when the status is converged, a :class:`dpcap.ConvergenceWarning`
otherwise, and the returned prior attains ``lower`` (``I(prior, W) = lower``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.special import xlogy

import dpcap
from dpcap import (
    CapacitiesResult,
    CapacityResult,
    ChannelError,
    ConvergenceWarning,
    ParameterError,
    Status,
)
from dpcap.mechanisms import erasure, truncated_geometric
from dpcap.testing import channels

FloatArray = NDArray[np.float64]

#: Rounding slack when a closed form is compared with a bracket end (both are ~1 nat).
SLACK = 1e-12
TOL = 1e-9
LN2 = math.log(2.0)


def h2(p: float) -> float:
    """Binary entropy in nats."""
    return float(-xlogy(p, p) - xlogy(1 - p, 1 - p))


def entropy(v: FloatArray) -> float:
    return float(-xlogy(v, v).sum())


def dirichlet(rng: np.random.Generator, rows: int, cols: int) -> FloatArray:
    W: FloatArray = rng.dirichlet(np.ones(cols), size=rows)
    return W


def two_by_two(W: FloatArray) -> float:
    """Capacity of a non-singular 2×2 channel from its KKT system (both inputs are used).

    ``D_x = C`` for both inputs reads ``Σ_y W_xy (log q_y + C) = −H(W_x)``, so
    ``log q_y + C = −(W^{-1} H)_y`` and ``Σ_y q_y = 1`` gives ``C = log Σ_y e^{−(W^{-1} H)_y}``.
    """
    H = np.array([entropy(W[0]), entropy(W[1])])
    return float(math.log(np.exp(-np.linalg.solve(W, H)).sum()))


def assert_certified(res: CapacityResult, closed: float, tol: float = TOL) -> None:
    """The bracket contains the closed form, is closed to ``tol`` and is attained by the prior."""
    assert res.status is Status.CONVERGED, res.message
    assert res.lower - SLACK <= closed <= res.upper + SLACK
    assert res.upper - res.lower <= tol
    assert res.value == res.upper
    assert res.unit == "nats"
    assert res.tol == tol


def assert_prior_attains_lower(res: CapacityResult, W: FloatArray) -> None:
    assert res.prior.shape == (W.shape[0],)
    assert np.all(res.prior >= 0)
    assert res.prior.sum() == pytest.approx(1.0, abs=1e-12)
    assert dpcap.mutual_information(res.prior, W) == pytest.approx(res.lower, abs=1e-12)
    np.testing.assert_allclose(res.output, res.prior @ W, atol=1e-15)


def overlap(results: Sequence[CapacityResult]) -> None:
    """Brackets of the same capacity must intersect."""
    assert max(r.lower for r in results) <= min(r.upper for r in results) + SLACK


#: Two channels whose batch solve reported ``upper`` below the capacity of the first one
#: (rows ``[a, 1 − a]``, a ∈ {1/2, 2/3, 4/7}: C is the 2×2 capacity of a = 1/2 and a = 2/3)
#: while ``capacities`` took ``I(upper_prior)`` for the upper end (fixed in 33c2498).
FAILING_BATCH = np.array(
    [[[0.5, 0.5], [2 / 3, 1 / 3], [4 / 7, 3 / 7]], [[0.5, 0.5], [0.8, 0.2], [0.5, 0.5]]]
)
#: A batch in which the second element has an all-zero column (a 0/0 in the interior-point
#: step before commit 44c5afb).
ZERO_COLUMN_BATCH = np.array(
    [
        [[1 / 3, 1 / 3, 1 / 3], [0.4, 0.4, 0.2], [1 / 3, 1 / 3, 1 / 3]],
        [[2 / 3, 1 / 3, 0.0], [1 / 3, 2 / 3, 0.0], [0.5, 0.5, 0.0]],
    ]
)


# --------------------------------------------------------------------------- closed forms


class TestClosedForms:
    @pytest.mark.parametrize("p", [0.0, 0.01, 0.11, 0.3, 0.45, 0.5])
    def test_binary_symmetric(self, p: float) -> None:
        W = np.array([[1 - p, p], [p, 1 - p]])
        res = dpcap.capacity(W)
        assert_certified(res, LN2 - h2(p))
        assert_prior_attains_lower(res, W)
        if p != 0.5:
            # I(π) = h(p + π(1 − 2p)) − h(p) has curvature 4(1 − 2p)² at π = 1/2, so a prior
            # within tol of the maximum is within √(tol / (2(1 − 2p)²)) < 1e-4 of uniform.
            np.testing.assert_allclose(res.prior, [0.5, 0.5], atol=1e-4)

    @pytest.mark.parametrize("e", [0.0, 0.1, 0.5, 0.9, 1.0])
    def test_binary_erasure(self, e: float) -> None:
        W = np.array([[1 - e, e, 0.0], [0.0, e, 1 - e]])
        res = dpcap.capacity(W)
        assert_certified(res, (1 - e) * LN2)
        assert_prior_attains_lower(res, W)

    @pytest.mark.parametrize("s", [0.05, 0.2, 0.5, 0.8, 0.95])
    def test_z_channel(self, s: float) -> None:
        """``P(Y=0 | X=1) = s``: ``C = log(1 + z)``, ``z = (1−s) s^{s/(1−s)}``.

        With ``π = P(X=1)``, ``I(π) = h((1−s)π) − π h(s)``; setting the derivative to zero gives
        ``(1−s) log((1 − (1−s)π) / ((1−s)π)) = h(s)``, i.e. ``π* = s^{s/(1−s)} / (1 + z)``.
        """
        W = np.array([[1.0, 0.0], [s, 1 - s]])
        z = (1 - s) * s ** (s / (1 - s))
        one = s ** (s / (1 - s)) / (1 + z)
        closed = math.log1p(z)
        assert h2((1 - s) * one) - one * h2(s) == pytest.approx(closed, abs=1e-14)
        res = dpcap.capacity(W)
        assert_certified(res, closed)
        assert_prior_attains_lower(res, W)
        np.testing.assert_allclose(res.prior, [1 - one, one], atol=1e-4)

    def test_z_channel_at_one_half(self) -> None:
        res = dpcap.capacity([[1.0, 0.0], [0.5, 0.5]])
        assert_certified(res, math.log(5 / 4))
        np.testing.assert_allclose(res.prior, [3 / 5, 2 / 5], atol=1e-4)

    @pytest.mark.parametrize(("k", "d"), [(3, 0.5), (5, 0.7), (8, 0.95), (4, 0.25)])
    def test_k_ary_symmetric(self, k: int, d: float) -> None:
        off = (1 - d) / (k - 1)
        W = np.full((k, k), off)
        np.fill_diagonal(W, d)
        res = dpcap.capacity(W)
        assert_certified(res, math.log(k) - entropy(W[0]))
        assert_prior_attains_lower(res, W)

    @pytest.mark.parametrize("k", [3, 6])
    def test_circulant_channel(self, k: int) -> None:
        """Rows and columns are permutations of one vector v: ``C = log k − H(v)``, uniform p."""
        v = dirichlet(np.random.default_rng(k), 1, k)[0]
        W = np.array([np.roll(v, x) for x in range(k)])
        res = dpcap.capacity(W)
        assert_certified(res, math.log(k) - entropy(v))
        np.testing.assert_allclose(res.prior, np.full(k, 1 / k), atol=1e-4)

    @pytest.mark.parametrize("n", [1, 2, 5, 10])
    @pytest.mark.parametrize("delta", [0.0, 0.1, 0.5, 1.0])
    def test_cuff_yu_erasure(self, n: int, delta: float) -> None:
        """Cuff & Yu, Example 2, eq. (37): ``C = δ log N``."""
        W = erasure(n, delta).matrix
        res = dpcap.capacity(W)
        assert_certified(res, delta * math.log(n))
        assert_prior_attains_lower(res, W)

    @pytest.mark.parametrize("lam", [0.01, 0.3, 0.5, 0.9])
    def test_mixture_row_gets_no_mass(self, lam: float) -> None:
        """A third row ``λ W_0 + (1−λ) W_1`` added to BSC(0.1): C is the BSC's.

        ``D(mix ‖ q*) < C`` strictly (convexity of D; the rows differ), so every optimal prior
        gives it mass 0, and for any prior ``C − I(p) ≥ p_2 (C − D(mix ‖ q*))``: the mass left
        on it is at most ``gap / (C − D(mix ‖ q*))`` with ``q*`` uniform.
        """
        p = 0.1
        W = np.array([[1 - p, p], [p, 1 - p], [0.0, 0.0]])
        W[2] = lam * W[0] + (1 - lam) * W[1]
        closed = LN2 - h2(p)
        res = dpcap.capacity(W)
        assert_certified(res, closed)
        assert_prior_attains_lower(res, W)
        slack = closed - (LN2 - h2(float(W[2, 0])))
        assert slack > 0
        assert res.prior[2] <= (res.upper - res.lower) / slack + 1e-15

    @pytest.mark.parametrize(("n", "eps"), [(10, 1.0), (30, 0.3), (100, 0.1)])
    def test_truncated_geometric_converges(self, n: int, eps: float) -> None:
        """A DP channel whose optimal prior is sparse (the hard case for plain BA)."""
        W = truncated_geometric(n, eps).matrix
        res = dpcap.capacity(W)
        assert res.status is Status.CONVERGED, res.message
        assert res.upper - res.lower <= TOL
        assert_prior_attains_lower(res, W)
        # C ≤ log(n + 1); and C ≥ the capacity of the 2×2 channel obtained by keeping inputs
        # 0 and n and reporting only whether y ≤ n/2 (fewer inputs, then post-processing).
        assert res.upper <= math.log(n + 1) + SLACK
        half = W[[0, n]][:, : n // 2 + 1].sum(axis=1)
        assert res.upper + SLACK >= two_by_two(np.column_stack([half, 1 - half]))
        # The mirror symmetry x ↦ n − x, y ↦ n − y maps the problem to itself.
        mirrored = dpcap.capacity(W[::-1, ::-1])
        overlap([res, mirrored])

    @pytest.mark.parametrize("gap", [1e-5, 1e-8, 1e-11, 0.0])
    def test_near_duplicate_rows(self, gap: float) -> None:
        """Rows ``[a, 1 − a]`` for a ∈ {0.3, 0.3 + gap, 0.55, 0.8}: binary-output rows are convex
        combinations of the two extremes, so C is the 2×2 capacity of a = 0.3 and a = 0.8."""
        a = np.array([0.3, 0.3 + gap, 0.55, 0.8])
        W = np.stack([a, 1 - a], axis=1)
        closed = two_by_two(W[[0, 3]])
        res = dpcap.capacity(W)
        assert_certified(res, closed)
        assert_prior_attains_lower(res, W)

    def test_two_by_two_formula_matches_bsc(self) -> None:
        """The helper above against the BSC closed form (it is itself a closed form)."""
        p = 0.2
        assert two_by_two(np.array([[1 - p, p], [p, 1 - p]])) == pytest.approx(
            LN2 - h2(p), abs=1e-14
        )

    def test_identity_and_constant(self) -> None:
        assert_certified(dpcap.capacity(np.eye(7)), math.log(7))
        assert_certified(dpcap.capacity(np.full((4, 3), 1 / 3)), 0.0)
        assert_certified(dpcap.capacity([[1.0]]), 0.0)


# --------------------------------------------------------------------------- units and result


class TestUnitsAndResult:
    def test_bits_are_nats_over_ln2(self) -> None:
        W = dirichlet(np.random.default_rng(0), 4, 5)
        nats = dpcap.capacity(W)
        bits = dpcap.capacity(W, unit="bits")
        assert bits.unit == "bits"
        for field in ("value", "lower", "upper"):
            assert getattr(bits, field) == pytest.approx(getattr(nats, field) / LN2, rel=1e-14)
        np.testing.assert_allclose(bits.prior, nats.prior, atol=1e-15)

    def test_bsc_in_bits(self) -> None:
        res = dpcap.capacity([[0.9, 0.1], [0.1, 0.9]], unit="bits")
        closed = 1 + 0.9 * math.log2(0.9) + 0.1 * math.log2(0.1)
        assert res.lower - SLACK <= closed <= res.upper + SLACK
        assert res.upper - res.lower <= TOL / LN2

    def test_float_and_repr(self) -> None:
        res = dpcap.capacity(np.eye(2))
        assert float(res) == res.value
        assert res.gap == res.upper - res.lower
        assert res.method == "ba"
        assert "CapacityResult(" in repr(res)
        assert "converged" in repr(res)
        assert res.iterations >= 0

    def test_accepts_channel_objects(self) -> None:
        W = np.array([[0.8, 0.2], [0.3, 0.7]])
        overlap([dpcap.capacity(dpcap.Channel(W)), dpcap.capacity(W)])

    def test_result_is_frozen(self) -> None:
        res = dpcap.capacity(np.eye(2))
        with pytest.raises(AttributeError):
            res.value = 0.0  # type: ignore[misc]


# --------------------------------------------------------------------------- engines agree


class TestEnginesAgree:
    @pytest.mark.parametrize(("rows", "cols"), [(2, 3), (3, 3), (4, 2), (5, 4)])
    def test_conic_and_ba_brackets_overlap(self, rows: int, cols: int) -> None:
        W = dirichlet(np.random.default_rng(100 * rows + cols), rows, cols)
        results = [dpcap.capacity(W, method="ba")]
        for solver in (None, "CLARABEL", "ECOS", "SCS"):
            res = dpcap.capacity(W, method="conic", solver=solver)
            assert res.method == f"conic/{solver or 'CLARABEL'}"
            assert res.status is Status.CONVERGED, res.message
            assert res.upper - res.lower <= TOL
            assert_prior_attains_lower(res, W)
            results.append(res)
        overlap(results)

    @pytest.mark.parametrize("solver", ["CLARABEL", "ECOS", "SCS"])
    def test_conic_closed_form(self, solver: str) -> None:
        W = np.array([[1.0, 0.0], [0.5, 0.5]])
        assert_certified(dpcap.capacity(W, method="conic", solver=solver), math.log(5 / 4))

    def test_conic_respects_reductions(self) -> None:
        W = np.array([[0.9, 0.0, 0.1], [0.1, 0.0, 0.9], [0.9, 0.0, 0.1]])
        res = dpcap.capacity(W, method="conic", solver="ECOS")
        assert_certified(res, LN2 - h2(0.1))
        assert_prior_attains_lower(res, W)


# --------------------------------------------------------------------------- exact reductions


class TestReductions:
    @pytest.fixture
    def base(self) -> FloatArray:
        return dirichlet(np.random.default_rng(7), 3, 4)

    def check_same(self, W: FloatArray, base: FloatArray) -> None:
        res, ref = dpcap.capacity(W), dpcap.capacity(base)
        assert res.status is Status.CONVERGED
        assert res.upper - res.lower <= TOL
        overlap([res, ref])
        assert_prior_attains_lower(res, W)

    def test_duplicate_rows(self, base: FloatArray) -> None:
        W = base[[0, 1, 1, 2, 0, 1]]
        self.check_same(W, base)

    def test_zero_columns(self, base: FloatArray) -> None:
        W = np.insert(base, [0, 2, 4], 0.0, axis=1)
        assert W.shape == (3, 7)
        self.check_same(W, base)

    @pytest.mark.parametrize("c", [0.5, 0.25, 1 / 3, 0.9])
    def test_proportional_columns(self, base: FloatArray, c: float) -> None:
        """Splitting output 1 into two outputs c·W[:, 1] and (1 − c)·W[:, 1] (exactly
        proportional in exact arithmetic; bitwise after normalisation or not)."""
        W = np.column_stack([base[:, 0], c * base[:, 1], base[:, 2:], (1 - c) * base[:, 1]])
        self.check_same(W, base)

    def test_all_three_at_once(self, base: FloatArray) -> None:
        W = np.column_stack([0.5 * base[:, 0], base, np.zeros(3), 0.5 * base[:, 0]])
        W[:, 1] *= 0.0  # remove the original column 0: its mass is in the two halves
        W = W[[2, 0, 2, 1, 0]]
        self.check_same(W, base)

    def test_constant_after_reduction(self) -> None:
        """Every row the same: a single input remains, C = 0 and the prior is still full-length."""
        W = np.tile([0.2, 0.0, 0.8], (4, 1))
        res = dpcap.capacity(W)
        assert_certified(res, 0.0)
        assert_prior_attains_lower(res, W)


# --------------------------------------------------------------------------- theorems


SETTINGS = settings(max_examples=25, deadline=None)


class TestProperties:
    @SETTINGS
    @given(channels(max_inputs=6, max_outputs=6))
    def test_bounds(self, W: FloatArray) -> None:
        res = dpcap.capacity(W)
        assert res.status is Status.CONVERGED, res.message
        assert res.upper - res.lower <= TOL
        assert res.lower >= 0.0
        assert res.upper <= math.log(min(W.shape)) + TOL
        assert_prior_attains_lower(res, W)

    @SETTINGS
    @given(channels(max_inputs=5, max_outputs=5), st.data())
    def test_permutation_invariance(self, W: FloatArray, data: st.DataObject) -> None:
        rows = data.draw(st.permutations(range(W.shape[0])))
        cols = data.draw(st.permutations(range(W.shape[1])))
        res = dpcap.capacity(W)
        permuted = dpcap.capacity(W[np.ix_(rows, cols)])
        overlap([res, permuted])
        assert abs(res.value - permuted.value) <= TOL

    @SETTINGS
    @given(channels(max_inputs=5, max_outputs=5), st.data())
    def test_data_processing(self, W: FloatArray, data: st.DataObject) -> None:
        ny = W.shape[1]
        V = data.draw(channels(min_inputs=ny, max_inputs=ny, max_outputs=5))
        processed = dpcap.capacity(W @ V)
        original = dpcap.capacity(W)
        # lower(WV) ≤ C(WV) ≤ C(W) ≤ upper(W)
        assert processed.lower <= original.upper + SLACK
        assert processed.value <= original.value + TOL

    @SETTINGS
    @given(
        st.integers(2, 4).flatmap(
            lambda nx: st.integers(2, 4).flatmap(
                lambda ny: st.lists(
                    channels(min_inputs=nx, max_inputs=nx, min_outputs=ny, max_outputs=ny),
                    min_size=1,
                    max_size=4,
                )
            )
        )
    )
    @example(Ws=[FAILING_BATCH[0], FAILING_BATCH[1]])
    def test_batch_equals_loop(self, Ws: list[FloatArray]) -> None:
        batch = dpcap.capacities(np.stack(Ws))
        assert isinstance(batch, CapacitiesResult)
        assert len(batch) == len(Ws)
        assert batch.converged.all(), batch.message
        for i, W in enumerate(Ws):
            one = dpcap.capacity(W)
            element = batch[i]
            assert element.status is Status.CONVERGED
            assert element.upper - element.lower <= TOL
            assert element.value == batch.value[i]
            overlap([element, one])
            assert abs(element.value - one.value) <= TOL
            assert_prior_attains_lower(element, W)

    @SETTINGS
    @given(st.lists(channels(max_inputs=5, max_outputs=5), min_size=2, max_size=5))
    @example(Ws=[FAILING_BATCH[0], FAILING_BATCH[1]])
    @example(Ws=[ZERO_COLUMN_BATCH[0][:2], ZERO_COLUMN_BATCH[1][:, :2]])
    def test_ragged_batch_equals_loop(self, Ws: list[FloatArray]) -> None:
        batch = dpcap.capacities(Ws)
        assert batch.shapes == tuple(W.shape for W in Ws)
        for i, W in enumerate(Ws):
            one = dpcap.capacity(W)
            element = batch[i]
            assert element.status is Status.CONVERGED, batch.message
            assert element.upper - element.lower <= TOL
            overlap([element, one])
            assert abs(element.value - one.value) <= TOL
            assert_prior_attains_lower(element, W)
            assert np.isnan(batch.prior[i, W.shape[0] :]).all()
            assert np.isnan(batch.output[i, W.shape[1] :]).all()


class TestBatch:
    def test_closed_forms_in_one_batch(self) -> None:
        ps = [0.01, 0.1, 0.3, 0.5]
        stack = np.array([[[1 - p, p], [p, 1 - p]] for p in ps])
        res = dpcap.capacities(stack)
        closed = np.array([LN2 - h2(p) for p in ps])
        assert np.all(res.lower - SLACK <= closed)
        assert np.all(closed <= res.upper + SLACK)
        assert np.all(res.upper - res.lower <= TOL)
        np.testing.assert_array_equal(res.value, res.upper)
        assert all(s is Status.CONVERGED for s in res.status)

    def test_ragged_closed_forms_and_units(self) -> None:
        Ws = [erasure(3, 0.5).matrix, np.eye(2), truncated_geometric(4, 1.0).matrix]
        nats = dpcap.capacities(Ws)
        bits = dpcap.capacities(Ws, unit="bits")
        assert bits.unit == "bits"
        np.testing.assert_allclose(bits.value, nats.value / LN2, rtol=1e-14)
        for i, closed in [(0, 0.5 * math.log(3)), (1, LN2)]:
            assert nats.lower[i] - SLACK <= closed <= nats.upper[i] + SLACK
        assert nats[0].prior.shape == (3,)
        assert nats[1].output.shape == (2,)
        assert "CapacitiesResult(3 channels, 3 converged" in repr(nats)

    def test_batch_upper_contains_the_closed_form(self) -> None:
        closed = two_by_two(FAILING_BATCH[0][:2])
        res = dpcap.capacities(FAILING_BATCH)
        assert res.lower[0] - SLACK <= closed <= res.upper[0] + SLACK

    def test_batch_with_a_zero_column(self) -> None:
        """An all-zero output column in one element must not reach a 0/0 anywhere (pytest turns
        RuntimeWarning into an error); each lower end is the information of its prior."""
        res = dpcap.capacities(ZERO_COLUMN_BATCH)
        for i, W in enumerate(ZERO_COLUMN_BATCH):
            assert_prior_attains_lower(res[i], W)
            assert res.lower[i] <= dpcap.capacity(W).upper + SLACK


# --------------------------------------------------------------------------- non-convergence


class TestNonConvergence:
    W = truncated_geometric(100, 0.1).matrix

    def test_capped_budget_is_still_a_bracket(self) -> None:
        truth = dpcap.capacity(self.W)
        assert truth.status is Status.CONVERGED
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = dpcap.capacity(self.W, max_iter=1)
        ours = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
        if res.status is Status.CONVERGED:
            assert not ours
            assert res.upper - res.lower <= TOL
        else:
            assert res.status is Status.MAX_ITER
            assert len(ours) == 1
            assert "not converged" in str(ours[0].message)
        assert res.lower - SLACK <= truth.upper
        assert truth.lower <= res.upper + SLACK

    def test_unreachable_tolerance_warns(self) -> None:
        """A gap of 1e-300 nats cannot be certified in floating point: MAX_ITER and a warning,
        and the bracket still contains the converged value."""
        truth = dpcap.capacity(self.W)
        with pytest.warns(ConvergenceWarning, match=r"not converged: certified gap"):
            res = dpcap.capacity(self.W, tol=1e-300, max_iter=50)
        assert res.status is Status.MAX_ITER
        assert not res.status.ok
        assert res.upper - res.lower > 1e-300
        assert res.lower - SLACK <= truth.upper
        assert truth.lower <= res.upper + SLACK
        assert_prior_attains_lower(res, self.W)

    def test_unreachable_tolerance_warns_in_batch(self) -> None:
        with pytest.warns(ConvergenceWarning, match=r"of 2 channels not converged"):
            res = dpcap.capacities(np.stack([self.W, self.W[::-1]]), tol=1e-300, max_iter=20)
        assert not res.converged.all()
        assert all(
            s is Status.MAX_ITER for s, c in zip(res.status, res.converged, strict=True) if not c
        )
        assert np.all(res.lower <= res.upper)


# --------------------------------------------------------------------------- bad input


class TestBadInput:
    W = np.eye(2)

    @pytest.mark.parametrize("tol", [0.0, -1e-9, math.nan, "1e-9", True])
    def test_bad_tol(self, tol: object) -> None:
        with pytest.raises(
            ParameterError, match=r"tol must be a positive finite number \(nats\), got"
        ):
            dpcap.capacity(self.W, tol=tol)  # type: ignore[arg-type]

    def test_infinite_tol(self) -> None:
        with pytest.raises(
            ParameterError, match=r"tol must be a positive finite number \(nats\), got inf"
        ):
            dpcap.capacity(self.W, tol=math.inf)

    @pytest.mark.parametrize("max_iter", [0, -1, 2.5, True])
    def test_bad_max_iter(self, max_iter: object) -> None:
        with pytest.raises(ParameterError, match=r"max_iter must be an integer >= 1, got"):
            dpcap.capacity(self.W, max_iter=max_iter)  # type: ignore[arg-type]

    def test_unknown_method(self) -> None:
        with pytest.raises(ParameterError, match=r"method must be one of \('ba', 'conic'\), got"):
            dpcap.capacity(self.W, method="newton")

    def test_solver_with_ba(self) -> None:
        with pytest.raises(
            ParameterError,
            match=r"solver selects a cvxpy solver for method='conic' only; got solver=",
        ):
            dpcap.capacity(self.W, solver="ECOS")

    def test_unknown_solver(self) -> None:
        with pytest.raises(
            ParameterError, match=r"solver must be one of \('CLARABEL', 'ECOS', 'SCS'\), got 'MO"
        ):
            dpcap.capacity(self.W, method="conic", solver="MOSEK")

    def test_unknown_unit(self) -> None:
        with pytest.raises(ParameterError, match=r"unit must be one of \['bits', 'nats'\]"):
            dpcap.capacity(self.W, unit="dits")

    def test_not_stochastic(self) -> None:
        with pytest.raises(ChannelError, match=r"W is not row-stochastic: row 1 sums to 0\.9"):
            dpcap.capacity([[1.0, 0.0], [0.5, 0.4]])

    @pytest.mark.parametrize(
        ("W", "match"),
        [
            ([0.5, 0.5], r"W must be a 2-D matrix"),
            (np.zeros((0, 2)), r"W must have at least one row and one column"),
            ([[0.5, np.nan], [0.5, 0.5]], r"W contains NaN at index \(0, 1\)"),
            ([[1.5, -0.5], [0.5, 0.5]], r"W has a negative entry -0\.5 at index \(0, 1\)"),
        ],
    )
    def test_malformed(self, W: object, match: str) -> None:
        with pytest.raises(ChannelError, match=match):
            dpcap.capacity(W)

    def test_empty_list(self) -> None:
        with pytest.raises(ChannelError, match=r"Ws must hold at least one channel"):
            dpcap.capacities([])

    def test_stack_with_bad_row(self) -> None:
        stack = np.stack([np.eye(3), np.eye(3), np.eye(3)])
        stack[1, 2] = [0.5, 0.2, 0.2]
        with pytest.raises(ChannelError, match=r"Ws\[1\] is not row-stochastic: row 2 sums to"):
            dpcap.capacities(stack)

    def test_list_with_bad_row(self) -> None:
        with pytest.raises(ChannelError, match=r"Ws\[1\] is not row-stochastic: row 0 sums to"):
            dpcap.capacities([np.eye(2), [[0.3, 0.3], [0.5, 0.5]]])

    def test_not_a_stack(self) -> None:
        with pytest.raises(ChannelError, match=r"Ws must be a \(B, n_inputs, n_outputs\) array"):
            dpcap.capacities(3.0)

    def test_batch_bad_options(self) -> None:
        with pytest.raises(ParameterError, match=r"tol must be a positive finite number"):
            dpcap.capacities([np.eye(2)], tol=0.0)
        with pytest.raises(ParameterError, match=r"max_iter must be an integer >= 1"):
            dpcap.capacities([np.eye(2)], max_iter=0)
        with pytest.raises(ParameterError, match=r"unit must be one of"):
            dpcap.capacities([np.eye(2)], unit="dits")


class TestSolverNames:
    """Solver names are case-insensitive everywhere (one list, in dpcap.solvers.status)."""

    @pytest.mark.parametrize("name", ["clarabel", "Clarabel", "CLARABEL"])
    def test_conic_solver_name_any_case(self, name: str) -> None:
        res = dpcap.capacity([[0.9, 0.1], [0.1, 0.9]], method="conic", solver=name)
        assert res.method == "conic/CLARABEL"
        closed = math.log(2) + 0.9 * math.log(0.9) + 0.1 * math.log(0.1)
        assert res.lower - 1e-12 <= closed <= res.upper + 1e-12

    def test_renyi_solver_name_any_case(self) -> None:
        res = dpcap.renyi_capacity([[0.9, 0.1], [0.1, 0.9]], 2.0, method="conic", solver="scs")
        assert res.method.startswith("conic/SCS")


class TestResultShape:
    """Every result has gap, to_dict (JSON-safe) and to_frame; batches are sequences."""

    def test_point_to_dict_is_json_safe(self) -> None:
        import json

        res = dpcap.capacity([[1.0, 0.0], [0.0, 1.0]])
        d = res.to_dict()
        assert d["status"] == "converged"
        assert isinstance(d["prior"], list)
        assert d["gap"] == pytest.approx(res.upper - res.lower)
        assert json.loads(json.dumps(d))["value"] == pytest.approx(math.log(2), abs=1e-9)
        assert str(res.status) == "converged"

    def test_infinity_is_kept(self) -> None:
        leak = dpcap.renyi_capacity([[1.0, 0.0], [0.0, 1.0]], 0.0)
        assert leak.to_dict()["upper"] == pytest.approx(math.log(2))
        res = dpcap.CapacityResult(
            value=math.inf, lower=0.0, upper=math.inf, prior=np.ones(1), output=np.ones(1),
            status=Status.FAILED, iterations=0, method="x", unit="nats", message="", tol=1e-9,
        )  # fmt: skip
        assert res.to_dict()["upper"] == math.inf

    def test_point_to_frame_is_one_row(self) -> None:
        frame = dpcap.capacity([[0.9, 0.1], [0.1, 0.9]]).to_frame()
        assert len(frame) == 1
        assert {"value", "lower", "upper", "status", "gap", "method"} <= set(frame.columns)
        assert frame["status"].iloc[0] == "converged"

    def test_batch_is_a_sequence_of_points(self) -> None:
        Ws = np.stack([np.eye(2), np.full((2, 2), 0.5), [[0.9, 0.1], [0.1, 0.9]]])
        res = dpcap.capacities(Ws)
        assert len(res) == 3
        assert [r.value for r in res] == [float(v) for v in res.value]
        assert res[-1].value == res[2].value
        np.testing.assert_array_equal(res.gap, res.upper - res.lower)
        frame = res.to_frame()
        assert len(frame) == 3
        assert list(frame["n_inputs"]) == [2, 2, 2]
        assert list(frame["status"]) == ["converged"] * 3
        assert len(res.to_dict()["points"]) == 3
        with pytest.raises(IndexError, match="index 3 out of range for 3 points"):
            res[3]
