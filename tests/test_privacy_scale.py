"""DP metrics at scale use structure, and refuse what stays quadratic (issue 10, item 7).

No timings are asserted: a *work meter* wraps the pairwise kernels behind the metrics and
counts ``pairs × outputs`` compared, failing as soon as a budget is passed (so the quadratic
code of old fails at once instead of running for minutes); the screen by matrix products
(:mod:`dpcap.solvers.gram`) is not pairwise work, the pairs it leaves to a kernel are. Expected
values are closed forms or a brute force over every ordered pair, written out here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy.special import rel_entr

import dpcap
from dpcap import Mechanism, ProblemTooLargeError, neighbors, privacy
from dpcap.channel import as_mechanism
from dpcap.mechanisms import counting_query, randomized_response, truncated_geometric
from dpcap.privacy import _pairs as pairs_module
from dpcap.solvers import hockey, pairwise

KERNELS = (
    (pairwise, "max_divergence"),
    (pairwise, "max_tv"),
    (pairwise, "max_log_ratio"),
    (hockey, "hockey_curve"),
)


@pytest.fixture
def meter(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], dict[str, int]]:
    """``meter(budget)``: count the pair-outputs the metrics compare, fail above ``budget``."""

    def install(budget: int) -> dict[str, int]:
        seen = {"work": 0}

        def count(work: int) -> None:
            seen["work"] += work
            assert seen["work"] <= budget, f"{seen['work']} pair-outputs > budget {budget}"

        for module, name in KERNELS:
            real = getattr(module, name)

            def counted(W: Any, I: Any, J: Any, *args: Any, _real: Any = real, **kw: Any) -> Any:
                count(len(I) * np.shape(W)[1])
                return _real(W, I, J, *args, **kw)

            monkeypatch.setattr(module, name, counted)
        real_all = hockey.all_pairs_curve

        def all_counted(W: Any, *args: Any, **kw: Any) -> Any:
            n, width = np.shape(W)
            count(n * (n - 1) // 2 * width)
            return real_all(W, *args, **kw)

        monkeypatch.setattr(hockey, "all_pairs_curve", all_counted)
        return seen

    return install


def rr_closed(k: int, eps: float) -> dict[str, Any]:
    """Randomized response: every pair of rows is ``(p, q, q…)`` against ``(q, p, q…)``."""
    p = 1.0 / (1.0 + (k - 1) * math.exp(-eps))
    q = p * math.exp(-eps)

    def renyi(alpha: float) -> float:
        total = p**alpha * q ** (1 - alpha) + q**alpha * p ** (1 - alpha) + (k - 2) * q
        return math.log(total) / (alpha - 1)

    def delta(level: float) -> float:
        return max(p - math.exp(level) * q, 0.0)

    return {"kl": (p - q) * eps, "tv": p - q, "renyi": renyi, "delta": delta}


def brute_force(W: np.ndarray, levels: list[float]) -> dict[str, Any]:
    """Every metric over every ordered pair of rows, one pair at a time."""
    out: dict[str, Any] = {"eps": 0.0, "kl": 0.0, "tv": 0.0, "r05": 0.0, "r2": 0.0}
    out["delta"] = np.zeros(len(levels))
    n = W.shape[0]
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            a, b = W[i], W[j]
            both = a > 0
            ratio = np.where(both & (b > 0), a / np.where(b > 0, b, 1.0), np.inf)
            out["eps"] = max(out["eps"], float(np.log(ratio[both]).max(initial=0.0)))
            out["kl"] = max(out["kl"], float(rel_entr(a, b).sum()))
            out["tv"] = max(out["tv"], 0.5 * float(np.abs(a - b).sum()))
            for key, alpha in (("r05", 0.5), ("r2", 2.0)):
                with np.errstate(divide="ignore"):
                    s = float(np.sum(a[both] ** alpha * b[both] ** (1 - alpha)))
                out[key] = max(out[key], math.log(s) / (alpha - 1) if s > 0 else math.inf)
            for k, level in enumerate(levels):
                out["delta"][k] = max(out["delta"][k], np.maximum(a - math.exp(level) * b, 0).sum())
    return out


# --------------------------------------------------------------------------- randomized response


@pytest.mark.parametrize(("k", "eps"), [(300, 1.0), (2000, 0.1), (2000, 3.0)])
def test_randomized_response_all_pairs(meter: Any, k: int, eps: float) -> None:
    """All pairs of RR rows are alike: the work is a few pairs, not k²/2 × k."""
    W = randomized_response(k, eps)
    seen = meter(20 * k)
    ref = rr_closed(k, eps)
    assert dpcap.dp_delta(W, eps / 2) == pytest.approx(ref["delta"](eps / 2), rel=1e-12)
    grid = [0.0, eps / 4, eps, 2 * eps]
    expected = [ref["delta"](e) for e in grid]
    np.testing.assert_allclose(dpcap.dp_delta_curve(W, grid), expected, rtol=1e-11, atol=1e-16)
    assert dpcap.kl_dp(W) == pytest.approx(ref["kl"], rel=1e-11)
    assert dpcap.tv_dp(W) == pytest.approx(ref["tv"], rel=1e-11)
    for alpha in (0.5, 2.0):
        assert dpcap.renyi_dp(W, alpha) == pytest.approx(ref["renyi"](alpha), rel=1e-11)
    assert dpcap.renyi_dp(W, math.inf) == pytest.approx(eps, rel=1e-12)
    assert seen["work"] <= 20 * k


def test_issue_delta_of_randomized_response_5000(meter: Any) -> None:
    meter(10**5)
    W = randomized_response(5000, 1.0)
    p = 1.0 / (1.0 + 4999 * math.exp(-1.0))
    assert dpcap.dp_delta(W, 0.5) == pytest.approx(p * (1 - math.exp(-0.5)), rel=1e-12)


def test_duplicated_rows_are_compared_once(meter: Any) -> None:
    W = np.repeat(randomized_response(40, 1.0).matrix, 100, axis=0)  # 4000 rows, 40 kinds
    meter(2 * 40 * 40 * 40)  # two metrics, each over the 40·39/2 pairs of distinct rows
    ref = rr_closed(40, 1.0)
    assert dpcap.dp_delta(W, 0.5) == pytest.approx(ref["delta"](0.5), rel=1e-12)
    assert dpcap.kl_dp(W) == pytest.approx(ref["kl"], rel=1e-12)


def test_hamming_pairs_of_identical_rows_are_merged(meter: Any) -> None:
    """A dense counting query: 65536 databases, 17 distinct rows, 16 distinct pairs of them."""
    eps = 1.0
    M = Mechanism(counting_query(16, truncated_geometric(16, eps)).matrix, (2,) * 16)
    meter(2 * 16 * 17)  # two calls, each over the 16 pairs of adjacent counts
    a = math.exp(-eps)
    for level in (0.0, 0.5):
        expected = (1 - math.exp(level - eps)) / (1 + a)  # adjacent rows of the geometric
        assert dpcap.dp_delta(M, level) == pytest.approx(expected, rel=1e-12)


# --------------------------------------------------------------------------- one-entry geometric


def test_issue_geometric_1999_hamming(meter: Any) -> None:
    """Hamming on one entry relates every pair: ε = n·ε, read from the extreme columns."""
    meter(10**7)
    W = truncated_geometric(1999, 0.1)
    assert dpcap.dp_epsilon(W, neighbors="hamming") == pytest.approx(199.9, rel=1e-12)
    assert dpcap.renyi_dp(W, math.inf, neighbors="hamming") == pytest.approx(199.9, rel=1e-12)
    one_entry = Mechanism.additive([np.arange(2000)], W)  # the database view
    assert dpcap.dp_epsilon(one_entry) == pytest.approx(199.9, rel=1e-12)
    assert dpcap.dp_epsilon(Mechanism(W, (2000,))) == pytest.approx(199.9, rel=1e-12)


def test_two_outputs_compare_the_extreme_rows(meter: Any) -> None:
    rng = np.random.default_rng(7)
    p = rng.uniform(0.05, 0.95, size=20000)
    W = np.stack([p, 1 - p], axis=1)
    meter(100)
    lo, hi = p.min(), p.max()
    kl = max(
        float(rel_entr([hi, 1 - hi], [lo, 1 - lo]).sum()),
        float(rel_entr([lo, 1 - lo], [hi, 1 - hi]).sum()),
    )
    assert dpcap.kl_dp(W) == pytest.approx(kl, rel=1e-12)
    assert dpcap.tv_dp(W) == pytest.approx(hi - lo, rel=1e-12)


def test_the_extreme_rows_are_ordered_by_the_likelihood_ratio(
    meter: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows ``(1, 2e-300)`` and ``(1, 1.5e-300)`` tie in the first column (1 − 2e-300 = 1): the
    end of the segment is the one with the smaller second entry (KL-DP came out 0.14 low)."""
    monkeypatch.setattr(pairs_module, "PLAIN_WORK", 0)
    W = np.array([[1.0, 2e-300], [0.5, 0.5], [1.0, 1.5e-300]])
    meter(100)
    every = max(float(rel_entr(W[i], W[j]).sum()) for i in range(3) for j in range(3) if i != j)
    assert every == pytest.approx(0.5 * math.log(0.5) + 0.5 * math.log(0.5 / 1.5e-300), rel=1e-12)
    assert dpcap.kl_dp(W) == pytest.approx(every, rel=1e-12)


# --------------------------------------------------------------------------- refusal


@pytest.mark.parametrize(
    "metric",
    [
        lambda W, **kw: dpcap.dp_delta(W, 0.5, **kw),
        lambda W, **kw: dpcap.dp_delta_curve(W, [0.0, 1.0], **kw),
    ],
)
def test_unstructured_quadratic_work_is_refused_at_once(meter: Any, metric: Any) -> None:
    meter(0)  # nothing is compared before the refusal
    W = np.random.default_rng(3).dirichlet(np.ones(1200), size=1200)
    pairs = 1200 * 1199 // 2
    message = (
        rf"{pairs} distinct pairs of rows over 1200 outputs .*limit of {neighbors.MAX_PAIR_WORK}"
    )
    with pytest.raises(ProblemTooLargeError, match=message):
        metric(W, neighbors="all")
    I, J = np.triu_indices(1200, k=1)
    with pytest.raises(ProblemTooLargeError, match=message):
        metric(W, neighbors=np.stack([I, J], axis=1))


DIVERGENCES = {
    "kl": dpcap.kl_dp,
    "renyi 2": lambda W, **kw: dpcap.renyi_dp(W, 2.0, **kw),
    "renyi 0.5": lambda W, **kw: dpcap.renyi_dp(W, 0.5, **kw),
    "tv": dpcap.tv_dp,
}


@pytest.mark.parametrize("name", DIVERGENCES)
def test_the_same_work_is_screened_by_products(meter: Any, name: str) -> None:
    """KL, Rényi and TV over the 719,400 pairs of a 1200 × 1200 channel (8.6·10⁸ pair-outputs,
    refused before the screen): the products leave a handful of pairs to the kernel, for all
    pairs and for the same pairs listed."""
    seen = meter(16 * 1200)
    W = np.random.default_rng(3).dirichlet(np.ones(1200), size=1200)
    value = DIVERGENCES[name](W, neighbors="all")
    I, J = np.triu_indices(1200, k=1)
    assert DIVERGENCES[name](W, neighbors=np.stack([I, J], axis=1)) == value
    assert 0 < seen["work"] <= 16 * 1200
    assert 0.0 < value < math.inf


@pytest.mark.parametrize("name", DIVERGENCES)
def test_a_screen_above_its_own_limit_is_refused(
    meter: Any, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    meter(0)
    monkeypatch.setattr(neighbors, "MAX_PRODUCT_WORK", 1200**3 - 1)
    W = np.random.default_rng(3).dirichlet(np.ones(1200), size=1200)
    with pytest.raises(ProblemTooLargeError, match="719400 distinct pairs of rows over 1200"):
        DIVERGENCES[name](W, neighbors="all")


def test_ties_past_the_screen_go_to_the_kernel_or_are_refused(
    meter: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows that all nearly agree leave every pair to the kernel: within the work limit it
    compares them all (the value of old), past it the refusal says what the screen left."""
    rng = np.random.default_rng(8)
    W = np.tile(rng.dirichlet(np.ones(300)), (300, 1)) * (1 + 1e-12 * rng.random((300, 300)))
    W /= W.sum(axis=1, keepdims=True)
    monkeypatch.setattr(pairs_module, "PLAIN_WORK", 0)
    seen = meter(300 * 299 // 2 * 300)
    I, J = np.triu_indices(300, k=1)
    M = as_mechanism(W).matrix  # the rows the metric sees
    direct = pairwise.max_divergence(M, I.astype(np.int64), J.astype(np.int64), 1.0)[0]
    seen["work"] = 0
    assert dpcap.kl_dp(W) == direct
    assert seen["work"] >= 300 * 299 // 2 * 300  # every pair, past the screen
    monkeypatch.setattr(neighbors, "MAX_PAIR_WORK", 1000 * 300)
    with pytest.raises(ProblemTooLargeError, match="the matrix products left 44850 pairs"):
        dpcap.kl_dp(W)


def test_geometric_1999_delta_under_hamming_is_refused(meter: Any) -> None:
    meter(0)
    with pytest.raises(ProblemTooLargeError, match="1999000 distinct pairs of rows"):
        dpcap.dp_delta(truncated_geometric(1999, 0.1), 1.0, neighbors="hamming")


def test_the_limit_is_documented() -> None:
    assert neighbors.MAX_PAIR_WORK == 2**29
    assert "MAX_PAIR_WORK" in (privacy.__doc__ or "")
    assert "ProblemTooLargeError" in (privacy.__doc__ or "")


# --------------------------------------------------------------------------- structure is exact


def sparse_rows(seed: int, n: int = 36, m: int = 24) -> np.ndarray:
    """Rows that are one value outside a few columns: repeated kinds, overlapping columns."""
    rng = np.random.default_rng(seed)
    kinds = [rng.uniform(0.01, 0.2, size=rng.integers(0, 4)) for _ in range(5)]
    W = np.empty((n, m))
    for x in range(n):
        dev = kinds[rng.integers(len(kinds))]
        cols = rng.choice(m // 2 if x % 3 else m, size=len(dev), replace=False)  # overlaps
        W[x] = (1 - dev.sum()) / (m - len(dev))
        W[x, cols] = dev
    W[-3:] = W[:3]  # duplicates
    return dpcap.Channel(W).matrix


@pytest.mark.parametrize("seed", range(8))
def test_structure_matches_brute_force(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.setattr(pairs_module, "PLAIN_WORK", 0)  # take the structured path on small inputs
    real = pairs_module._background_pairs
    used = []

    def recorded(*args: Any) -> Any:
        found = real(*args)
        used.append(found is not None)
        return found

    monkeypatch.setattr(pairs_module, "_background_pairs", recorded)
    W = sparse_rows(seed)
    levels = [0.0, 0.05, 0.3, 1.0, 3.0]
    ref = brute_force(W, levels)
    np.testing.assert_allclose(
        dpcap.dp_delta_curve(W, levels), ref["delta"], rtol=1e-12, atol=1e-15
    )
    assert dpcap.dp_epsilon(W) == pytest.approx(ref["eps"], rel=1e-12)
    assert dpcap.kl_dp(W) == pytest.approx(ref["kl"], rel=1e-12, abs=1e-15)
    assert dpcap.tv_dp(W) == pytest.approx(ref["tv"], rel=1e-12, abs=1e-15)
    assert dpcap.renyi_dp(W, 0.5) == pytest.approx(ref["r05"], rel=1e-12, abs=1e-15)
    assert dpcap.renyi_dp(W, 2.0) == pytest.approx(ref["r2"], rel=1e-12, abs=1e-15)
    assert all(used)  # the kinds of rows were compared, not every pair
    assert used


def test_structure_with_a_log_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Randomized response at ε = 800 through the structured path: its logs are used."""
    monkeypatch.setattr(pairs_module, "PLAIN_WORK", 0)
    W = randomized_response(30, 800.0)
    assert W.log_matrix is not None
    p = 1.0 / (1.0 + 29 * math.exp(-800.0))
    assert dpcap.dp_epsilon(W) == pytest.approx(800.0, rel=1e-14)
    assert dpcap.kl_dp(W) == pytest.approx(800.0 * p, rel=1e-12)
    assert dpcap.dp_delta(W, 799.0) == pytest.approx(p * (1 - math.exp(-1.0)), rel=1e-12)
    assert dpcap.dp_delta(W, math.inf) == 0.0
