"""MI-DP (Cuff & Yu): the slice formula against random search, the paper's examples, its theorems.

``MI-DP = sup_{i, P_{X^n}} I(X_i; Y | X^{-i}) = max_i max_{x^{-i}} C(W_{i, x^{-i}})`` (Def. 2;
docs/mathematics.rst §2). Expected values are closed forms written here or quantities computed
by other means (the conditional mutual information of an explicit joint law, capacities of
explicit slices cut from the matrix with ``numpy.ravel_multi_index``), never the code's own output.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.special import xlogy

import dpcap
from dpcap import (
    ChannelError,
    ConvergenceWarning,
    MechanismError,
    MIDPResult,
    ParameterError,
    ProblemTooLargeError,
    Status,
    bounds,
)
from dpcap.mechanisms import (
    counting_query,
    one_time_pad,
    per_entry,
    revealing,
    truncated_geometric,
)
from dpcap.testing import positive_channels

FloatArray = NDArray[np.float64]

SLACK = 1e-12
TOL = 1e-9
LN2 = math.log(2.0)


def h2(p: float) -> float:
    """Binary entropy in nats."""
    return float(-xlogy(p, p) - xlogy(1 - p, 1 - p))


def dirichlet_mechanism(seed: int, shape: tuple[int, ...], ny: int) -> dpcap.Mechanism:
    rng = np.random.default_rng(seed)
    return dpcap.Mechanism(rng.dirichlet(np.ones(ny), size=math.prod(shape)), shape)


def slice_rows(M: dpcap.Mechanism, entry: int, context: tuple[int, ...]) -> FloatArray:
    """``W[(a, x^{-i})]`` for every value a, cut from the dense matrix by ravel_multi_index."""
    rows = []
    for a in range(M.shape[entry]):
        database = (*context[:entry], a, *context[entry:])
        rows.append(M.matrix[np.ravel_multi_index(database, M.shape)])
    return np.array(rows)


def contexts(shape: tuple[int, ...], entry: int) -> list[tuple[int, ...]]:
    others = [m for k, m in enumerate(shape) if k != entry]
    return [tuple(int(v) for v in c) for c in itertools.product(*(range(m) for m in others))]


def point_mass_joint(
    shape: tuple[int, ...], entry: int, context: tuple[int, ...], prior: FloatArray
) -> FloatArray:
    """The law ``δ_{context} × prior`` on ``X_1 × … × X_n`` (prior on entry ``entry``)."""
    joint = np.zeros(shape)
    index: tuple[Any, ...] = (*context[:entry], slice(None), *context[entry:])
    joint[index] = prior
    return joint


def contains(res: Any, truth: float, slack: float = SLACK) -> None:
    assert res.lower - slack <= truth <= res.upper + slack


def certified(res: Any, truth: float) -> None:
    assert res.status is Status.CONVERGED, res.message
    assert res.upper - res.lower <= res.tol
    contains(res, truth)


def marginal_channel(M: dpcap.Mechanism, entry: int, others: FloatArray) -> FloatArray:
    """``P(Y | X_i = a) = Σ_{x^{-i}} P(x^{-i}) W[(a, x^{-i})]`` for X_i independent of the rest."""
    tensor = np.moveaxis(M.tensor(), entry, 0)  # (m_i, *others, |Y|)
    V: FloatArray = np.tensordot(
        tensor, others, axes=(range(1, tensor.ndim - 1), range(0, others.ndim))
    )
    return V


# --------------------------------------------------------------------------- Def. 2, by search


class TestDefinition:
    @pytest.mark.parametrize("shape", [(2, 3), (3, 3), (3, 2)])
    @pytest.mark.parametrize("seed", [0, 1])
    def test_no_joint_law_beats_midp(self, shape: tuple[int, int], seed: int) -> None:
        M = dirichlet_mechanism(seed, shape, 4)
        res = dpcap.midp(M)
        assert res.status is Status.CONVERGED
        rng = np.random.default_rng(1000 + seed)
        for i in range(2):
            best = 0.0
            for alpha in (0.1, 1.0):
                for _ in range(150):
                    joint = rng.dirichlet(np.full(M.n_inputs, alpha)).reshape(shape)
                    best = max(best, dpcap.conditional_mutual_information(joint, M, i))
            for context in contexts(shape, i):  # the maximiser has this form
                for _ in range(20):
                    prior = rng.dirichlet(np.full(shape[i], 0.5))
                    joint = point_mass_joint(shape, i, context, prior)
                    best = max(best, dpcap.conditional_mutual_information(joint, M, i))
            assert best <= res.per_entry[i] + TOL
            assert best <= res.upper + TOL
            # A random search cannot beat the optimum; it gets close enough not to be vacuous.
            assert best >= 0.75 * res.per_entry_lower[i]

    @pytest.mark.parametrize("shape", [(2, 3), (3, 3), (2, 2, 2)])
    def test_witness_attains_lower(self, shape: tuple[int, ...]) -> None:
        M = dirichlet_mechanism(7, shape, 3)
        res = dpcap.midp(M)
        assert isinstance(res.entry, int)
        assert len(res.context) == len(shape) - 1
        assert res.prior.shape == (shape[res.entry],)
        assert res.prior.sum() == pytest.approx(1.0, abs=1e-12)
        joint = point_mass_joint(shape, res.entry, res.context, res.prior)
        cmi = dpcap.conditional_mutual_information(joint, M, res.entry)
        assert cmi == pytest.approx(res.lower, abs=1e-12)
        rows = slice_rows(M, res.entry, res.context)
        np.testing.assert_allclose(M.slice(res.entry, res.context).matrix, rows, atol=1e-15)
        assert dpcap.mutual_information(res.prior, rows) == pytest.approx(res.lower, abs=1e-12)

    @pytest.mark.parametrize("shape", [(2, 3), (3, 3), (2, 2, 2)])
    def test_per_entry_is_max_slice_capacity(self, shape: tuple[int, ...]) -> None:
        """Each entry's value is the largest capacity over its slices, each slice solved here
        with :func:`dpcap.capacity` on rows cut by ravel_multi_index."""
        M = dirichlet_mechanism(11, shape, 3)
        res = dpcap.midp(M)
        assert res.per_entry.shape == res.per_entry_lower.shape == (len(shape),)
        assert np.all(res.per_entry >= res.per_entry_lower)
        assert res.value == res.upper == res.per_entry.max()
        assert res.lower == res.per_entry_lower.max()
        assert res.entry == int(np.argmax(res.per_entry_lower))
        for i in range(len(shape)):
            slices = [dpcap.capacity(slice_rows(M, i, c)) for c in contexts(shape, i)]
            lo = max(s.lower for s in slices)
            up = max(s.upper for s in slices)
            assert res.per_entry_lower[i] <= up + SLACK
            assert lo <= res.per_entry[i] + SLACK
            assert abs(res.per_entry[i] - up) <= TOL
            group = dpcap.midp(M, group=i)
            assert group.entry == (i,)
            assert abs(group.value - res.per_entry[i]) <= TOL

    def test_one_entry_is_capacity(self) -> None:
        W = np.random.default_rng(3).dirichlet(np.ones(4), size=5)
        res = dpcap.midp(W)
        cap = dpcap.capacity(W)
        assert res.entry == 0
        assert res.context == ()
        assert res.per_entry.shape == (1,)
        assert res.lower <= cap.upper + SLACK
        assert cap.lower <= res.upper + TOL
        assert abs(res.value - cap.value) <= TOL
        assert dpcap.mutual_information(res.prior, W) == pytest.approx(res.lower, abs=1e-12)
        channel = dpcap.midp(dpcap.Channel(W))
        assert abs(channel.value - res.value) <= TOL

    @pytest.mark.parametrize("p", [0.05, 0.2, 0.4])
    def test_one_entry_closed_form(self, p: float) -> None:
        certified(dpcap.midp([[1 - p, p], [p, 1 - p]]), LN2 - h2(p))

    def test_units_and_result(self) -> None:
        M = dirichlet_mechanism(5, (2, 3), 3)
        nats = dpcap.midp(M)
        bits = dpcap.midp(M, unit="bits")
        assert bits.unit == "bits"
        for field in ("value", "lower", "upper"):
            assert getattr(bits, field) == pytest.approx(getattr(nats, field) / LN2, rel=1e-14)
        np.testing.assert_allclose(bits.per_entry, nats.per_entry / LN2, rtol=1e-14)
        assert isinstance(nats, MIDPResult)
        assert float(nats) == nats.value
        assert "MIDPResult(" in repr(nats)
        assert nats.method == "ba"
        assert nats.slices >= 1


# --------------------------------------------------------------------------- the sandwich


MECHANISM_SHAPES = [(2, 2), (3, 2), (2, 3), (2, 2, 2)]


@st.composite
def mechanisms(draw: Any) -> dpcap.Mechanism:
    """Random database mechanisms with every entry positive (finite ε-DP level)."""
    shape = draw(st.sampled_from(MECHANISM_SHAPES))
    rows = math.prod(shape)
    W = draw(positive_channels(min_inputs=rows, max_inputs=rows, max_outputs=4))
    return dpcap.Mechanism(W, shape)


SETTINGS = settings(max_examples=30, deadline=None)


class TestSandwich:
    @SETTINGS
    @given(mechanisms())
    def test_eps_dp_bounds_midp(self, M: dpcap.Mechanism) -> None:
        """Property 1 + Lemma 1: ε-DP ⇒ MI-DP ≤ ε·tanh(ε/2) ≤ min(ε, ε²); and every slice
        capacity is at most a KL divergence between two neighbours (KL-DP)."""
        res = dpcap.midp(M)
        eps = dpcap.dp_epsilon(M)
        assert math.isfinite(eps)
        assert res.value <= bounds.kl_dp_bound(eps) + TOL
        assert res.value <= min(eps, eps**2) + TOL
        assert res.value <= dpcap.kl_dp(M) + TOL

    @SETTINGS
    @given(mechanisms())
    def test_midp_bounds_total_variation(self, M: dpcap.Mechanism) -> None:
        """Lemma 2: ε-MI-DP ⇒ (0, δ')-DP with δ' = 1 − 2h^{-1}(ln 2 − ε)."""
        res = dpcap.midp(M)
        tv = dpcap.dp_delta(M, 0.0)
        assert tv == pytest.approx(dpcap.tv_dp(M), abs=1e-15)
        assert tv <= bounds.delta_from_midp(res.value) + TOL

    @SETTINGS
    @given(mechanisms())
    def test_total_variation_bounds_midp(self, M: dpcap.Mechanism) -> None:
        """Lemma 3: (δ)-DP ⇒ MI-DP ≤ 2h(δ) + 2δ ln min(|Y|, max_i |X_i| + 1)."""
        res = dpcap.midp(M)
        delta = dpcap.tv_dp(M)
        bound = 2 * h2(delta) + 2 * delta * math.log(min(M.n_outputs, max(M.shape) + 1))
        assert res.lower <= bound + SLACK
        limit = bounds.midp_from_delta(delta, n_outputs=M.n_outputs, max_entry_size=max(M.shape))
        assert limit == pytest.approx(bound, abs=1e-12)

    @pytest.mark.parametrize("eps", [0.1, 0.7, 2.0])
    def test_binary_randomized_response(self, eps: float) -> None:
        """Binary randomized response is BSC(p), p = 1/(1 + e^ε): MI-DP = ln 2 − h(p), below
        ε·tanh(ε/2) (which its KL attains), and Lemma 2 is tight on it: δ' = TV = 1 − 2p."""
        p = 1 / (1 + math.exp(eps))
        res = dpcap.midp([[1 - p, p], [p, 1 - p]])
        certified(res, LN2 - h2(p))
        assert res.value <= bounds.kl_dp_bound(eps) + TOL
        assert bounds.delta_from_midp(res.value) == pytest.approx(1 - 2 * p, abs=1e-6)


class TestIndependentData:
    @pytest.mark.parametrize("shape", [(2, 3), (3, 3), (2, 2, 2)])
    def test_corollary_1(self, shape: tuple[int, ...]) -> None:
        """Independent entries: ``I(X_i; Y) ≤ I(X_i; Y | X^{-i}) ≤ MI-DP`` (Cuff & Yu, eq. 42)."""
        M = dirichlet_mechanism(21, shape, 3)
        res = dpcap.midp(M)
        rng = np.random.default_rng(22)
        for i in range(len(shape)):
            others = tuple(m for k, m in enumerate(shape) if k != i)
            for _ in range(50):
                law_i = rng.dirichlet(np.full(shape[i], 0.5))
                law_rest = rng.dirichlet(np.full(math.prod(others), 0.5)).reshape(others)
                V = marginal_channel(M, i, law_rest)
                mi = dpcap.mutual_information(law_i, V)
                joint = np.moveaxis(np.multiply.outer(law_i, law_rest), 0, i)
                cmi = dpcap.conditional_mutual_information(joint, M, i)
                assert mi <= cmi + 1e-12  # Property 4
                assert cmi <= res.per_entry[i] + TOL


# --------------------------------------------------------------------------- composition


class TestComposition:
    @pytest.mark.parametrize("shape", [(2, 2), (3, 2), (2, 2, 2)])
    @pytest.mark.parametrize("seed", [0, 1, 2])
    def test_corollary_2(self, shape: tuple[int, ...], seed: int) -> None:
        """Conditionally independent releases: MI-DP(Y1, Y2) ≤ MI-DP(Y1) + MI-DP(Y2)."""
        M1 = dirichlet_mechanism(seed, shape, 2)
        M2 = dirichlet_mechanism(seed + 50, shape, 3)
        W12 = np.einsum("xa,xb->xab", M1.matrix, M2.matrix).reshape(M1.n_inputs, -1)
        both = dpcap.midp(dpcap.Mechanism(W12, shape))
        one, two = dpcap.midp(M1), dpcap.midp(M2)
        assert both.lower <= one.upper + two.upper + TOL
        # and the collection leaks at least what each release leaks (data processing)
        assert max(one.lower, two.lower) <= both.upper + TOL

    @pytest.mark.parametrize("p", [0.1, 0.3])
    @pytest.mark.parametrize("e", [0.2, 0.6])
    def test_partial_queries(self, p: float, e: float) -> None:
        """Corollary 4: Y1 from X_1 only (BSC(p)), Y2 from X_2 only (BEC(e)): each entry's
        MI-DP is its own channel's capacity, and the collection's is the larger one."""
        A = np.array([[1 - p, p], [p, 1 - p]])
        B = np.array([[1 - e, e, 0.0], [0.0, e, 1 - e]])
        W = np.einsum("ay,bz->abyz", A, B).reshape(4, 6)
        res = dpcap.midp(dpcap.Mechanism(W, (2, 2)))
        cA, cB = LN2 - h2(p), (1 - e) * LN2
        assert res.per_entry_lower[0] - SLACK <= cA <= res.per_entry[0] + SLACK
        assert res.per_entry_lower[1] - SLACK <= cB <= res.per_entry[1] + SLACK
        certified(res, max(cA, cB))

    @pytest.mark.parametrize("n", [1, 2, 3])
    def test_per_entry_mechanism(self, n: int) -> None:
        p = 0.15
        certified(dpcap.midp(per_entry(n, [[1 - p, p], [p, 1 - p]])), LN2 - h2(p))


# --------------------------------------------------------------------------- Cuff & Yu examples


class TestOneTimePad:
    @pytest.mark.parametrize("m", [2, 3, 5])
    def test_example_4(self, m: int) -> None:
        M = one_time_pad(m)
        res = dpcap.midp(M)
        certified(res, math.log(m))
        np.testing.assert_allclose(res.per_entry, [math.log(m)] * 2, atol=TOL)
        # X_2 uniform and independent of X_1: Y is uniform whatever X_1 is.
        V = marginal_channel(M, 0, np.full(m, 1 / m))
        np.testing.assert_allclose(V, np.full((m, m), 1 / m), atol=1e-15)
        uniform = np.full(m, 1 / m)
        assert dpcap.mutual_information(uniform, V) == pytest.approx(0.0, abs=1e-15)
        assert dpcap.capacity(V).value <= 1e-12
        assert dpcap.dp_epsilon(M) == math.inf


class TestCorrelatedDatabase:
    n, eps = 6, 0.5

    def test_example_3(self) -> None:
        noise = truncated_geometric(self.n, self.eps).matrix
        M = counting_query(self.n, noise)
        mi = dpcap.midp(M)
        leak = dpcap.correlated_leakage(M, entry=0)
        assert leak.status is Status.CONVERGED
        assert leak.upper - leak.lower <= TOL
        assert leak.lower > mi.upper  # correlation leaks more than the strong adversary gets
        # The witness law P(a, rows[a]) = prior[a] attains `lower`.
        assert leak.entry == 0
        assert len(leak.rows) == 2
        chosen = np.array([M.row((a, *leak.rows[a])) for a in range(2)])
        assert dpcap.mutual_information(leak.prior, chosen) == pytest.approx(leak.lower, abs=1e-12)
        extremes = dpcap.capacity(noise[[0, self.n]])
        if leak.rows != ((0,) * (self.n - 1), (1,) * (self.n - 1)):
            assert abs(dpcap.capacity(chosen).value - extremes.value) <= TOL
        assert extremes.lower <= leak.upper + TOL
        assert leak.lower <= extremes.upper + SLACK

    def test_example_3_by_enumerating_counts(self) -> None:
        """Given X_0 = a the count is a + (ones among the others): the effective channel for
        value a is some row of count c_a ∈ {a, …, a + n − 1}; maximise over the pairs."""
        noise = truncated_geometric(self.n, self.eps).matrix
        M = counting_query(self.n, noise)
        leak = dpcap.correlated_leakage(M)
        pairs = [
            dpcap.capacity(noise[[c0, c1]])
            for c0 in range(self.n)
            for c1 in range(1, self.n + 1)
            if c0 != c1
        ]
        assert max(r.lower for r in pairs) <= leak.upper + TOL
        assert leak.lower <= max(r.upper for r in pairs) + SLACK

    def test_independent_entries_are_protected(self) -> None:
        """For contrast (Corollary 1): i.i.d. entries leak at most the MI-DP."""
        M = counting_query(self.n, truncated_geometric(self.n, self.eps))
        dense = dpcap.Mechanism(M.matrix, M.shape)
        mi = dpcap.midp(M)
        for q in (0.1, 0.5, 0.9):
            law = np.array([1 - q, q])
            rest = law
            for _ in range(self.n - 2):
                rest = np.multiply.outer(rest, law)
            V = marginal_channel(dense, 0, rest)
            assert dpcap.mutual_information(law, V) <= mi.upper + TOL


class TestRevealing:
    @pytest.mark.parametrize("m", [2, 3, 4])
    @pytest.mark.parametrize("prob", [0.3, 1.0])
    def test_example_5(self, m: int, prob: float) -> None:
        """MI-DP = prob·ln 2, but the pair leaks prob·log(m + 1) (eqs. 48–51)."""
        M = revealing(2, m, prob)
        certified(dpcap.midp(M), prob * LN2)
        group = dpcap.midp(M, group=(0, 1))
        assert group.entry == (0, 1)
        assert group.context == ()
        certified(group, prob * math.log(m + 1))
        certified(dpcap.capacity(M), prob * math.log(m + 1))
        assert dpcap.midp(M, group=[1, 0]).entry == (0, 1)

    def test_three_entries(self) -> None:
        certified(dpcap.midp(revealing(3, 2, 0.5)), 0.5 * LN2)
        certified(dpcap.midp(revealing(3, 2, 0.5), group=(0, 1, 2)), 0.5 * math.log(3))


# --------------------------------------------------------------------------- structured form


class TestStructured:
    @pytest.mark.parametrize("n", [1, 2, 5, 8, 10])
    @pytest.mark.parametrize("kind", ["geometric", "random"])
    def test_structured_equals_dense(self, n: int, kind: str) -> None:
        if kind == "geometric":
            noise = truncated_geometric(n, 0.7).matrix
        else:
            noise = np.random.default_rng(n).dirichlet(np.ones(4), size=n + 1)
        M = counting_query(n, noise)
        dense = dpcap.Mechanism(M.matrix, M.shape)
        fast, slow = dpcap.midp(M), dpcap.midp(dense)
        assert fast.status is Status.CONVERGED
        assert slow.status is Status.CONVERGED
        assert abs(fast.value - slow.value) <= TOL
        assert fast.lower <= slow.upper + TOL
        assert slow.lower <= fast.upper + TOL
        np.testing.assert_allclose(fast.per_entry, slow.per_entry, atol=TOL)
        # the structured witness is a real slice of the mechanism
        rows = slice_rows(dense, int(fast.entry), fast.context)  # type: ignore[arg-type]
        assert dpcap.mutual_information(fast.prior, rows) == pytest.approx(fast.lower, abs=1e-12)
        assert dpcap.dp_epsilon(M) == pytest.approx(dpcap.dp_epsilon(dense), abs=1e-12)
        grid = np.array([0.0, 0.3, 1.0, 2.5])
        np.testing.assert_allclose(
            dpcap.dp_delta_curve(M, grid), dpcap.dp_delta_curve(dense, grid), atol=1e-12
        )

    @pytest.mark.parametrize(("n", "eps"), [(1, 1.0), (3, 1.0), (10, 0.3), (1000, 1.0)])
    def test_counting_query_closed_form(self, n: int, eps: float) -> None:
        """Every slice of entry i is the pair of noise rows (c, c + 1). Their likelihood ratio is
        e^{ε} for y ≤ c and e^{−ε} for y ≥ c + 1, so 1{y ≤ c} is sufficient and the slice is a
        BSC with crossover P(Y ≥ c + 1 | c) = P(Z ≥ 1) = a/(1 + a) = 1/(1 + e^ε), a = e^{−ε}:
        MI-DP = ln 2 − h(1/(1 + e^ε)), whatever n."""
        res = dpcap.midp(counting_query(n, truncated_geometric(n, eps)))
        certified(res, LN2 - h2(1 / (1 + math.exp(eps))))
        assert res.entry == 0
        assert len(res.context) == n - 1

    def test_additive_scores(self) -> None:
        """A bounded sum: entry 0 in {0,1,2}, entry 1 in {0,1}, total in {0..3}."""
        rng = np.random.default_rng(4)
        noise = rng.dirichlet(np.ones(3), size=4)
        M = dpcap.Mechanism.additive([[0, 1, 2], [0, 1]], noise)
        dense = dpcap.Mechanism(M.matrix, M.shape)
        fast, slow = dpcap.midp(M), dpcap.midp(dense)
        np.testing.assert_allclose(fast.per_entry, slow.per_entry, atol=TOL)
        for i in range(2):
            caps = [dpcap.capacity(slice_rows(dense, i, c)) for c in contexts(M.shape, i)]
            assert abs(max(c.value for c in caps) - fast.per_entry[i]) <= TOL


# --------------------------------------------------------------------------- certificate


class TestCertificate:
    """The upper end must be a certificate, not the information of some prior (regressions:
    ``midp`` and ``correlated_leakage`` took ``I(upper_prior)`` as each slice's upper end
    before 33c2498, so ``upper`` fell below the truth and a gap of 0 was reported)."""

    W1 = np.array([[0.5, 0.5], [2 / 3, 1 / 3], [4 / 7, 3 / 7]])
    X = np.array([[0.5, 0.5], [0.65, 0.35], [0.5, 0.5]])

    def closed(self) -> float:
        """C(W1): rows [a, 1 − a] are mixtures of a = 1/2 and a = 2/3, whose 2×2 KKT system
        ``log q_y + C = −(W^{-1} H)_y`` gives ``C = log Σ_y e^{−(W^{-1} H)_y}``."""
        W = self.W1[:2]
        H = -xlogy(W, W).sum(axis=1)
        return float(math.log(np.exp(-np.linalg.solve(W, H)).sum()))

    def test_upper_contains_closed_form(self) -> None:
        # entry 0's slices are W1 (context 0) and X (context 1); C(X) < C(W1)
        M = dpcap.Mechanism(np.stack([self.W1, self.X], axis=1).reshape(6, 2), (3, 2))
        contains(dpcap.midp(M), self.closed())

    def test_lower_is_sound(self) -> None:
        M = dpcap.Mechanism(np.stack([self.W1, self.X], axis=1).reshape(6, 2), (3, 2))
        res = dpcap.midp(M)
        assert res.lower <= self.closed() + SLACK
        assert abs(res.value - self.closed()) <= TOL

    @staticmethod
    def hard() -> tuple[FloatArray, dpcap.Mechanism]:
        """Truncated geometric noise on 101 values, and a two-entry mechanism whose entry-0
        slices are that channel and its mirror image: a gap of 1e-300 cannot be certified."""
        W = truncated_geometric(100, 0.1).matrix
        M = dpcap.Mechanism(np.stack([W, W[::-1]], axis=1).reshape(202, 101), (101, 2))
        return W, M

    def test_unreachable_tolerance_warns(self) -> None:
        _, M = self.hard()
        with pytest.warns(ConvergenceWarning, match=r"not converged: certified gap"):
            res = dpcap.midp(M, tol=1e-300, max_iter=1)
        assert res.status is Status.MAX_ITER

    def test_correlated_leakage_unreachable_tolerance_warns(self) -> None:
        W, _ = self.hard()  # one entry: its correlated leakage is its capacity
        with pytest.warns(ConvergenceWarning, match=r"not converged: certified gap"):
            res = dpcap.correlated_leakage(W, tol=1e-300, max_iter=1)
        assert res.status is Status.MAX_ITER

    def test_capped_budget_is_a_bracket(self) -> None:
        W, M = self.hard()
        truth = dpcap.capacity(W)  # every entry-0 slice is W or its mirror image
        assert truth.status is Status.CONVERGED
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            capped = dpcap.midp(M, max_iter=1)
        assert capped.lower <= truth.upper + SLACK
        assert truth.lower <= capped.upper + SLACK
        if capped.status is not Status.CONVERGED:
            assert capped.status is Status.MAX_ITER


# --------------------------------------------------------------------------- bad input


class TestBadInput:
    M = one_time_pad(2)

    @pytest.mark.parametrize(
        ("group", "match"),
        [
            ((0, 0), r"group must list distinct entries, got \(0, 0\)"),
            ((), r"group must list distinct entries, got \(\)"),
            ((0, 2), r"entry must be in \[0, 1\] for a mechanism with 2 entries, got 2"),
            (-1, r"entry must be in \[0, 1\] for a mechanism with 2 entries, got -1"),
            ((0, 1.0), r"entry must be an integer, got 1\.0"),
            (1.5, r"group must be an entry or a sequence of entries, got 1\.5"),
        ],
    )
    def test_bad_group(self, group: Any, match: str) -> None:
        with pytest.raises(MechanismError, match=match):
            dpcap.midp(self.M, group=group)

    def test_bad_unit(self) -> None:
        with pytest.raises(
            ParameterError, match=r"unit must be one of \['bits', 'nats'\], got 'dits'"
        ):
            dpcap.midp(self.M, unit="dits")
        with pytest.raises(ParameterError, match=r"unit must be one of"):
            dpcap.correlated_leakage(self.M, unit="dits")

    def test_bad_tol_and_budget(self) -> None:
        with pytest.raises(
            ParameterError, match=r"tol must be a positive finite number \(nats\), got 0"
        ):
            dpcap.midp(self.M, tol=0)
        with pytest.raises(ParameterError, match=r"max_iter must be an integer >= 1, got 0"):
            dpcap.midp(self.M, max_iter=0)

    def test_not_stochastic(self) -> None:
        with pytest.raises(ChannelError, match=r"M is not row-stochastic: row 0 sums to"):
            dpcap.midp([[0.5, 0.4], [0.5, 0.5]])

    def test_bad_entry_for_correlated_leakage(self) -> None:
        with pytest.raises(MechanismError, match=r"entry must be in \[0, 1\]"):
            dpcap.correlated_leakage(self.M, entry=2)

    def test_correlated_leakage_too_large(self) -> None:
        n = 300  # entry 0: n distinct rows for each value, n² > 65,536 choices
        M = counting_query(n, truncated_geometric(n, 1.0))
        with pytest.raises(ProblemTooLargeError, match=r"would compare 90000 choices .* entry 0"):
            dpcap.correlated_leakage(M, entry=0)


def test_plain_matrix_is_one_slice_solved_like_its_capacity() -> None:
    """A plain matrix is a one-entry database: MI-DP is its capacity (one slice, no dedup pass;
    the np.unique pass over one flattened 1000 × 1000 slice took ~19 s)."""
    W = dpcap.mechanisms.randomized_response(1000, 1.0)
    res = dpcap.midp(W)
    cap = dpcap.capacity(W)
    e = math.e
    # RR(k, ε) is symmetric: C = log k − H(row) with row (e, 1, …, 1)/(e + k − 1)
    closed = math.log(1000) + (e * math.log(e / (e + 999)) + 999 * math.log(1 / (e + 999))) / (
        e + 999
    )
    assert res.slices == 1
    assert res.lower - 1e-12 <= closed <= res.upper + 1e-12
    assert cap.lower - 1e-12 <= closed <= cap.upper + 1e-12
