"""Privacy-loss laws and certified composition (dpcap.accounting).

Expected values come from outside the code under test: multinomial sums in mpmath for k-fold
randomized response, and the brute-force product matrix (``dpcap.compose`` + ``dp_delta_curve``,
an independent engine) for small heterogeneous compositions.
"""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcap
from dpcap.errors import MechanismError, NeighborError, ParameterError, ProblemTooLargeError
from dpcap.mechanisms import (
    discrete_gaussian,
    discrete_laplace,
    randomized_response,
    truncated_geometric,
)


def rr_kfold_delta(K: int, eps0: float, k: int, eps: float, dps: int = 60) -> mp.mpf:
    """δ(ε) of k-fold K-ary randomized response: the loss of one release is +ε₀, 0 or −ε₀
    with probabilities e^ε₀/Z, (K−2)/Z, 1/Z (Z = e^ε₀ + K − 1); a multinomial sum."""
    with mp.workdps(dps):
        e0 = mp.mpf(eps0)
        Z = mp.e**e0 + K - 1
        p, q, z = mp.e**e0 / Z, 1 / Z, mp.mpf(K - 2) / Z
        total = mp.mpf(0)
        for a in range(k + 1):
            for b in range(k + 1 - a):
                loss = (a - b) * e0
                if loss <= eps:
                    continue
                c = k - a - b
                coeff = mp.factorial(k) / (mp.factorial(a) * mp.factorial(b) * mp.factorial(c))
                total += coeff * p**a * q**b * (z**c if c else 1) * (1 - mp.e ** (eps - loss))
        return total


@pytest.mark.parametrize(
    ("K", "eps0", "k"), [(2, 1.0, 10), (2, 0.3, 57), (4, 1.0, 100), (3, 0.5, 40)]
)
def test_k_fold_randomized_response_matches_the_multinomial_sum(
    K: int, eps0: float, k: int
) -> None:
    grid = np.linspace(0.0, k * eps0, 13)
    curve = dpcap.composed_delta_curve([(randomized_response(K, eps0), k)], grid)
    assert curve.method == "lattice"
    for i, eps in enumerate(grid):
        exact = float(rr_kfold_delta(K, eps0, k, float(eps)))
        assert curve.lower[i] <= exact <= curve.upper[i], (eps, curve.lower[i], exact)
        # relative rounding of the masses, and the loss rounding (a shift of ε by k·~1e-14)
        assert curve.upper[i] - curve.lower[i] <= 1e-11 * exact + 1e-13


def test_epsilon_of_100_fold_4_ary_randomized_response() -> None:
    # eps0 = ln 3: the case of the issue (zCDP ~116, basic composition ~110, exact ~72.39)
    r = dpcap.composed_epsilon([(randomized_response(4, math.log(3)), 100)], 1e-6)
    assert r.status is dpcap.Status.CONVERGED
    assert r.gap <= 1e-9
    assert rr_kfold_delta(4, math.log(3), 100, r.lower) > 1e-6
    assert rr_kfold_delta(4, math.log(3), 100, r.upper) <= 1e-6
    assert 72.39 < r.value < 72.40
    assert r.value < 100 * math.log(3)  # far below basic composition


def test_one_release_agrees_with_dp_delta() -> None:
    W = discrete_laplace(6, 0.8)
    grid = np.linspace(0.0, 2.0, 9)
    curve = dpcap.composed_delta_curve(W, grid)
    direct = dpcap.dp_delta_curve(W, grid)
    assert np.all(curve.lower <= direct + 1e-15)
    assert np.all(direct <= curve.upper + 1e-15)


@pytest.mark.parametrize(
    "parts",
    [
        [(truncated_geometric(5, 0.5), 4), truncated_geometric(5, 1.3)],
        [randomized_response(3, 1.0), randomized_response(3, 0.7), randomized_response(3, 1.047)],
        [(discrete_gaussian(4, 1.0), 3)],
        [(discrete_laplace(3, 0.4), 2), (truncated_geometric(3, 0.9), 2)],
    ],
)
def test_composition_brackets_the_product_matrix(parts: list) -> None:
    mechs = []
    for part in parts:
        m, k = part if isinstance(part, tuple) else (part, 1)
        mechs += [m] * k
    product = dpcap.compose(*mechs)
    grid = np.array([0.0, 0.3, 1.0, 2.0, 3.5])
    brute = dpcap.dp_delta_curve(product, grid, neighbors=mechs[0].neighbors)
    with warnings.catch_warnings():  # a grid's bracket can be wider than the default target
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        curve = dpcap.composed_delta_curve(parts, grid)
    slack = 1e-14  # the brute force's own rounding
    assert np.all(curve.lower <= brute + slack), (curve.lower, brute)
    assert np.all(brute <= curve.upper + slack), (brute, curve.upper)


@settings(max_examples=15, deadline=None)
@given(
    st.integers(2, 3),
    st.integers(2, 3),
    st.integers(1, 3),
    st.integers(0, 2**32 - 1),
)
def test_random_compositions_bracket_the_product_matrix(
    n: int, outputs: int, k: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    W = rng.dirichlet(np.ones(outputs), size=n)
    if seed % 3 == 0:
        W[0, 0] = 0.0  # an infinite loss
        W[0] /= W[0].sum()
    V = rng.dirichlet(np.ones(2), size=n)
    product = dpcap.compose(*([W] * k), V)
    grid = np.array([0.0, 0.2, 0.7, 1.5])
    brute = dpcap.dp_delta_curve(product, grid, neighbors="all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        curve = dpcap.composed_delta_curve([(W, k), V], grid, neighbors="all")
    assert np.all(curve.lower <= brute + 1e-14)
    assert np.all(brute <= curve.upper + 1e-14)
    eps = dpcap.composed_epsilon([(W, k), V], 0.05, neighbors="all")
    if math.isinf(eps.upper):  # the mass of infinite loss exceeds δ: no finite ε
        assert dpcap.dp_delta_curve(product, [1e6], neighbors="all")[0] > 0.05
        return
    check = dpcap.dp_delta_curve(product, [eps.upper], neighbors="all")[0]
    assert check <= 0.05 + 1e-12
    if eps.lower > 0:
        assert dpcap.dp_delta_curve(product, [eps.lower], neighbors="all")[0] >= 0.05 - 1e-12


def test_the_worst_pair_changes_with_eps() -> None:
    # clamped discrete Gaussian, 10-fold: the max over pairs is not one pair's curve
    W = discrete_gaussian(6, 1.0)
    grid = np.linspace(0.0, 12.0, 25)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        curve = dpcap.composed_delta_curve([(W, 10)], grid)
    pairs = {tuple(p) for p in curve.pair.tolist()}
    assert len(pairs) >= 2
    loss = dpcap.privacy_loss(W)
    assert len(loss.candidates) >= 2


def test_privacy_loss_of_randomized_response() -> None:
    loss = dpcap.privacy_loss(randomized_response(4, 1.0))
    assert len(loss) == 1
    assert loss.pairs == 12
    law = loss[0]
    Z = math.e + 3
    assert np.allclose(law.loss, [-1.0, 0.0, 1.0], atol=1e-14)
    assert np.allclose(law.mass, [1 / Z, 2 / Z, math.e / Z], rtol=1e-14)
    assert law.infinite == 0.0
    assert law.worst
    assert loss.value == pytest.approx(1.0, abs=1e-14)


def test_privacy_loss_keeps_infinite_loss_and_underflowed_logs() -> None:
    W = np.array([[0.5, 0.5], [1.0, 0.0]])
    loss = dpcap.privacy_loss(W)
    (row1,) = [law for law in loss.laws if tuple(law.pairs[0]) == (1, 0)]
    assert row1.infinite == 0.0
    (row0,) = [law for law in loss.laws if tuple(law.pairs[0]) == (0, 1)]
    assert row0.infinite == 0.5
    assert math.isinf(row0.value)
    # truncated geometric with entries below the smallest normal: the loss stays eps
    deep = dpcap.privacy_loss(truncated_geometric(1000, 1.0))
    assert deep.value == pytest.approx(1.0, abs=1e-9)


def test_a_dominated_pair_is_flagged() -> None:
    # rows 0 and 2 are far apart, row 1 in the middle: under "all", (0, 2) dominates (0, 1)
    W = np.array([[0.9, 0.1], [0.5, 0.5], [0.1, 0.9]])
    loss = dpcap.privacy_loss(W, neighbors="all")
    worst = {tuple(map(int, p)) for law in loss.laws if law.worst for p in law.pairs}
    assert worst == {(0, 2), (2, 0)}


def test_infinite_mass_composes() -> None:
    W = np.array([[0.5, 0.5], [1.0, 0.0]])  # (0, 1): mass 1/2 at +inf
    r = dpcap.composed_delta([(W, 3)], 50.0)
    assert r.lower <= 1 - 0.5**3 <= r.upper
    e = dpcap.composed_epsilon([(W, 3)], 0.5)
    assert math.isinf(e.value)
    assert math.isinf(e.lower)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"eps": -1.0}, "eps"),
        ({"eps": float("nan")}, "eps"),
        ({"eps": [1.0, 2.0]}, "eps must be a single number"),
        ({"eps": "1"}, "eps"),
        ({"eps": 1.0, "tol": -1.0}, "tol"),
        ({"eps": 1.0, "rtol": 1.0}, "rtol"),
    ],
)
def test_bad_parameters_are_named(kwargs: dict, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        dpcap.composed_delta(randomized_response(2, 1.0), **kwargs)


def test_bad_parts_are_named() -> None:
    with pytest.raises(ParameterError, match=r"parts\[0\] count"):
        dpcap.composed_delta([(randomized_response(2, 1.0), 0)], 1.0)
    with pytest.raises(ParameterError, match=r"parts\[0\] count"):
        dpcap.composed_delta([(randomized_response(2, 1.0), True)], 1.0)
    with pytest.raises(MechanismError, match="same database"):
        dpcap.composed_delta([randomized_response(2, 1.0), randomized_response(3, 1.0)], 1.0)
    with pytest.raises(NeighborError, match="different neighbour relations"):
        dpcap.composed_delta([randomized_response(3, 1.0), truncated_geometric(2, 1.0)], 1.0)
    with pytest.raises(ParameterError, match="delta"):
        dpcap.composed_epsilon(randomized_response(2, 1.0), 1.5)


def test_a_lattice_too_large_falls_back_to_a_certified_grid() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        r = dpcap.composed_delta([(discrete_gaussian(30, 2.0), 300)], 20.0)
    assert r.method == "grid"
    assert 0.0 <= r.lower <= r.upper <= 1.0


def test_a_composition_too_large_is_refused_with_its_size() -> None:
    with pytest.raises(ProblemTooLargeError, match=r"GRID_CELLS"):
        dpcap.composed_delta([(discrete_gaussian(30, 0.7), 40000)], 1.0)


def test_results_are_json_safe_and_index() -> None:
    curve = dpcap.composed_delta_curve([(randomized_response(2, 1.0), 5)], [0.0, 1.0])
    d = curve.to_dict()
    assert d["method"] == "lattice"
    assert len(d["points"]) == 2
    point = curve[1]
    assert point.eps == 1.0
    assert point.quantity == "delta"
    assert dpcap.privacy_loss(randomized_response(2, 1.0)).to_dict()["laws"][0]["worst"]


def _brute_tradeoff(P: np.ndarray, pairs: list[tuple[int, int]], alpha: np.ndarray) -> np.ndarray:
    """Lower convex hull of the Neyman–Pearson points of every ordered pair (product matrix)."""
    xs, ys = [np.array([0.0, 1.0])], [np.array([1.0, 0.0])]
    for i, j in pairs:
        p, q = P[i], P[j]
        with np.errstate(divide="ignore", invalid="ignore"):
            order = np.argsort(np.log(p) - np.log(q))
        xs.append(np.concatenate([[0.0], np.cumsum(p[order])]))
        ys.append(1.0 - np.concatenate([[0.0], np.cumsum(q[order])]))
    x, y = np.concatenate(xs), np.concatenate(ys)
    hull: list[tuple[float, float]] = []
    for a, b in sorted(zip(x.tolist(), y.tolist(), strict=True)):
        if hull and hull[-1][0] == a:
            continue
        while (
            len(hull) >= 2
            and (hull[-1][0] - hull[-2][0]) * (b - hull[-2][1])
            - (hull[-1][1] - hull[-2][1]) * (a - hull[-2][0])
            <= 0
        ):
            hull.pop()
        hull.append((a, b))
    h = np.array(hull)
    return np.interp(alpha, h[:, 0], h[:, 1])


def test_tradeoff_of_pure_dp_randomized_response() -> None:
    # ε-DP binary RR: f(α) = max(0, 1 − e^ε α, e^{−ε}(1 − α)), the trade-off function of
    # (ε, 0)-DP (Dong, Roth & Su 2022)
    eps = math.log(3)
    alpha = np.linspace(0.0, 1.0, 41)
    curve = dpcap.tradeoff_curve(randomized_response(2, eps), alpha)
    exact = np.maximum.reduce([np.zeros_like(alpha), 1 - 3 * alpha, (1 - alpha) / 3])
    assert np.all(curve.lower <= exact + 1e-15)
    assert np.all(exact <= curve.upper + 1e-15)
    assert np.max(curve.gap) < 1e-12
    assert curve.advantage == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize(
    "parts", [[(discrete_gaussian(5, 1.0), 3)], [(randomized_response(3, 0.8), 6)]]
)
def test_tradeoff_of_a_composition_brackets_the_product_matrix(parts: list) -> None:
    M, k = parts[0]
    product = dpcap.compose(*([M] * k)).matrix
    I, J = dpcap.neighbor_pairs(M.shape, M.neighbors)
    pairs = list(zip(I.tolist(), J.tolist(), strict=True))
    pairs += [(j, i) for i, j in pairs]
    alpha = np.array([0.0, 1e-3, 0.01, 0.05, 0.1, 0.3, 0.7])
    brute = _brute_tradeoff(product, pairs, alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        curve = dpcap.tradeoff_curve(parts, alpha)
    assert np.all(curve.lower <= brute + 1e-12), (curve.lower, brute)
    assert np.all(brute <= curve.upper + 1e-12), (brute, curve.upper)


def test_adaptive_composition_of_one_release_is_the_envelope() -> None:
    M = truncated_geometric(5, 1.0)
    loss = dpcap.privacy_loss(M)
    levels = np.unique(np.concatenate([law.loss for law in loss.laws]))
    levels = levels[levels >= 0]
    adaptive = dpcap.composed_delta_curve(M, levels, adaptive=True)
    direct = dpcap.dp_delta_curve(M, levels)
    assert np.all(adaptive.upper >= direct - 1e-15)
    assert np.all(adaptive.upper <= direct + 1e-12)
    assert adaptive.pair.tolist() == [[-1, -1]] * len(levels)


@pytest.mark.parametrize("mechanism", [discrete_gaussian(6, 2.0), truncated_geometric(4, 0.6)])
def test_adaptive_is_never_below_the_non_adaptive_value(mechanism: object) -> None:
    grid = np.linspace(0.0, 6.0, 7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        fixed = dpcap.composed_delta_curve([(mechanism, 4)], grid)
        free = dpcap.composed_delta_curve([(mechanism, 4)], grid, adaptive=True)
    assert np.all(free.upper >= fixed.lower)


def test_one_law_makes_adaptive_and_fixed_agree() -> None:
    fixed = dpcap.composed_delta_curve([(randomized_response(3, 1.0), 20)], [1.0, 5.0])
    free = dpcap.composed_delta_curve(
        [(randomized_response(3, 1.0), 20)], [1.0, 5.0], adaptive=True
    )
    np.testing.assert_allclose(free.upper, fixed.upper, rtol=1e-13)
    with pytest.raises(ParameterError, match="adaptive must be True or False"):
        dpcap.composed_delta(randomized_response(2, 1.0), 1.0, adaptive=1)


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 5), st.integers(2, 4), st.integers(0, 2**32 - 1))
def test_the_dominating_pair_dominates_every_pair(n: int, outputs: int, seed: int) -> None:
    from dpcap.accounting.dominating import dominating_law
    from dpcap.accounting.losses import hockey, ordered_pairs, pair_laws
    from dpcap.channel import as_mechanism

    W = np.random.default_rng(seed).dirichlet(np.ones(outputs), size=n)
    mech = as_mechanism(W)
    X, Xp = ordered_pairs(mech, "all")
    combos, _ = pair_laws([mech], X, Xp, "test")
    laws = [c[0] for c in combos]
    top = dominating_law(laws)
    eps = np.linspace(-3.0, 3.0, 61)
    envelope = np.max([hockey(law, eps) for law in laws], axis=0)
    assert np.all(hockey(top, eps) >= envelope - 1e-15)
    assert abs(float(np.sum(top.mass)) + top.infinite - 1.0) < 1e-9


# --- from the second reading: the ends that could fail ---------------------------------------


def test_adaptive_ends_hold_with_losses_beyond_exp_range() -> None:
    tiny = 1e-320  # likelihood ratios near e^737: e^ℓ overflows
    W = np.array([[0.5, 0.5 - tiny, tiny], [tiny, 0.5, 0.5 - tiny], [0.3, 0.3, 0.4]])
    grid = np.array([0.0, 1.0, 5.0])
    fixed = dpcap.composed_delta_curve(W, grid, neighbors="all")
    free = dpcap.composed_delta_curve(W, grid, neighbors="all", adaptive=True)
    brute = dpcap.dp_delta_curve(W, grid, neighbors="all")
    assert np.all(free.upper >= brute - 1e-15)
    assert np.all(free.lower <= brute + 1e-15)
    assert np.all(fixed.lower <= free.upper)


def test_adaptive_composition_of_pure_dp_parts_stays_pure() -> None:
    M = truncated_geometric(4, 0.6)  # 0.6-DP; 50 releases are 30-DP whatever the adaption
    r = dpcap.composed_delta([(M, 50)], 30.5, adaptive=True)
    assert r.upper == 0.0
    e = dpcap.composed_epsilon([(M, 50)], 1e-12, adaptive=True)
    assert e.upper <= 30.0 + 1e-9


def test_adaptive_between_breakpoints_and_its_lower_end() -> None:
    W = np.array([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6], [0.1, 0.7, 0.2]])
    grid = np.linspace(0.0, 2.0, 41)  # most of these are no loss value of any pair
    brute = dpcap.dp_delta_curve(W, grid, neighbors="all")
    free = dpcap.composed_delta_curve(W, grid, neighbors="all", adaptive=True)
    assert np.all(free.lower <= brute + 1e-15)  # a fixed pair is one adaptive strategy
    assert np.all(free.upper >= brute - 1e-15)
    # the envelope bends where two pairs' curves cross: those points are in the hull
    assert free.upper[0] == pytest.approx(brute[0], abs=1e-9)


def test_tradeoff_with_losses_beyond_exp_range_is_finite_and_holds() -> None:
    W = np.array([[0.6, 0.4], [1e-200, 1 - 1e-200]])
    alpha = np.array([0.0, 0.01, 0.3, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        curve = dpcap.tradeoff_curve([(W, 2)], alpha)
    assert np.all(np.isfinite(curve.lower))
    assert np.all(np.isfinite(curve.upper))
    # the product matrix underflows (1e-400 becomes 0), which only moves its curve at α = 0
    product = dpcap.compose(W, W).matrix
    brute = _brute_tradeoff(product, [(0, 1), (1, 0)], alpha)
    assert np.all(curve.lower[1:] <= brute[1:] + 1e-12)
    assert np.all(brute[1:] <= curve.upper[1:] + 1e-12)


def test_privacy_loss_brackets_the_exact_log_ratio() -> None:
    W = randomized_response(3, 0.7)
    loss = dpcap.privacy_loss(W)
    exact = max(
        mp.log(mp.mpf(W.matrix[x, y])) - mp.log(mp.mpf(W.matrix[xp, y]))
        for x in range(3)
        for xp in range(3)
        if x != xp
        for y in range(3)
    )
    assert loss.lower <= float(exact) <= loss.upper
    assert loss.upper - loss.lower < 1e-13


def test_epsilon_at_delta_zero_is_the_composed_pure_level() -> None:
    M = discrete_gaussian(4, 1.0)
    r = dpcap.composed_epsilon([(M, 2)], 0.0)
    pure = dpcap.dp_epsilon(dpcap.compose(M, M))
    assert r.lower - 1e-9 <= pure <= r.upper + 1e-9
    assert r.status is dpcap.Status.CONVERGED


def test_a_count_beyond_the_rounding_is_refused() -> None:
    with pytest.raises(ProblemTooLargeError, match="rounding"):
        dpcap.composed_delta([(np.full((2, 2), 0.5), 10**30)], 0.0)


def test_parts_in_every_accepted_form() -> None:
    M = randomized_response(2, 1.0)
    a = dpcap.composed_delta((M, 3), 1.0)
    b = dpcap.composed_delta([(M, 3)], 1.0)
    assert a.folds == b.folds == 3
    assert a.upper == b.upper
    with pytest.raises(ParameterError, match="empty"):
        dpcap.composed_delta([], 1.0)
    with pytest.raises(ParameterError, match="1-D"):
        dpcap.composed_delta_curve(M, [[0.0, 1.0]])
