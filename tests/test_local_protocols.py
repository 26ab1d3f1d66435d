"""Local-DP frequency oracles as channels (dpcap.mechanisms): the papers' closed forms.

Theorems and published formulas checked here, every expected value computed in this file:

* each matrix equals an independent construction from the protocol's definition (bit vectors
  from ``itertools.product``, the Hadamard matrix from ``scipy.linalg.hadamard``, subsets from
  ``itertools.combinations``, every function ``[k] → [g]`` listed), in the documented order of
  reports; rows sum to 1;
* the local-DP level (:func:`dpcap.dp_epsilon`, and the definition evaluated on the matrix)
  equals the protocol's ε: SUE with ``p = e^{ε/2}/(e^{ε/2} + 1)``, OUE with ``p = 1/2``,
  ``q = 1/(e^ε + 1)``, UE(p, q) at ``|log(p(1 − q)/((1 − p)q))|``, RAPPOR's
  ``2 log((1 − f/2)/(f/2))`` and ``log(q*(1 − p*)/(p*(1 − q*)))`` with the IRR (Erlingsson et
  al. 2014), Hadamard response, subset selection and local hashing at ε, OLH with
  ``g = round(e^ε + 1)``;
* Wang, Blocki, Li, Jha (2017): the pure-protocol count estimator is unbiased, and its variance
  ``q*(1 − q*)/(n(p* − q*)²) + f_v(1 − p* − q*)/(n(p* − q*))``, with each protocol's ``p*``,
  ``q*`` from the papers, equals the variance computed exactly from the matrix (every report
  enumerated); the papers' ``Var*`` closed forms for SUE, OUE, OLH and Hadamard response;
* bad arguments raise ParameterError naming the argument; an alphabet above the dense limit
  raises ProblemTooLargeError naming its size, at once.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable

import numpy as np
import pytest
import scipy.linalg

import dpcap
from dpcap import mechanisms as mech
from dpcap.channel import Channel
from dpcap.errors import ParameterError, ProblemTooLargeError

EPS = [0.0, 0.3, 1.0, 2.5]

# --------------------------------------------------------------------------- helpers


def local_level(W: np.ndarray) -> float:
    """``max_{x ≠ x', y} log W[x, y]/W[x', y]`` (0/0 ignored, p/0 = ∞), by definition."""
    level = 0.0
    for a, b in itertools.permutations(range(W.shape[0]), 2):
        if np.any((W[a] > 0) & (W[b] == 0)):
            return math.inf
        both = (W[a] > 0) & (W[b] > 0)
        if both.any():
            level = max(level, float(np.max(np.log(W[a, both] / W[b, both]))))
    return level


def unary_reference(k: int, p: float, q: float) -> tuple[np.ndarray, np.ndarray]:
    """UE(p, q) from its definition, reports in ``itertools.product`` order; and Supp."""
    reports = list(itertools.product((0, 1), repeat=k))
    W = np.array(
        [
            [
                math.prod(
                    (p if i == x else q) if b else (1 - (p if i == x else q))
                    for i, b in enumerate(y)
                )
                for y in reports
            ]
            for x in range(k)
        ]
    )
    return W, np.array(reports, dtype=bool)


def hadamard_reference(k: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    K = 2 ** math.ceil(math.log2(k + 1))
    H = scipy.linalg.hadamard(K)
    owned = H[1 : k + 1] == 1  # (k, K): y ∈ C_x
    e = math.exp(eps)
    W = np.where(owned, 2 * e / (K * (e + 1)), 2 / (K * (e + 1)))
    return W, owned.T


def subset_reference(k: int, eps: float, d: int) -> tuple[np.ndarray, np.ndarray]:
    subsets = list(itertools.combinations(range(k), d))
    e = math.exp(eps)
    Z = math.comb(k - 1, d - 1) * e + math.comb(k - 1, d)
    W = np.array([[(e if x in S else 1.0) / Z for S in subsets] for x in range(k)])
    supports = np.array([[v in S for v in range(k)] for S in subsets])
    return W, supports


def hashing_reference(k: int, eps: float, g: int) -> tuple[np.ndarray, np.ndarray]:
    functions = list(itertools.product(range(g), repeat=k))  # h(x) = functions[j][x]
    m, e = len(functions), math.exp(eps)
    cols = [(h, b) for h in functions for b in range(g)]
    W = np.array(
        [[(e if h[x] == b else 1.0) / (m * (e + g - 1)) for h, b in cols] for x in range(k)]
    )
    supports = np.array([[h[v] == b for v in range(k)] for h, b in cols])
    return W, supports


def exact_variance(
    W: np.ndarray, supports: np.ndarray, p_star: float, q_star: float, f: np.ndarray, n: int
) -> np.ndarray:
    """``Var[f̂_v]`` of ``n`` independent reports, every report enumerated.

    Each user's contribution ``(1[v ∈ Supp(Y)] − q*)/(p* − q*)`` must have mean ``1[u = v]``
    under the matrix (unbiasedness, checked); its variance under ``W[u]`` is averaged over the
    users' values ``f`` and divided by ``n``.
    """
    est = (supports.astype(float) - q_star) / (p_star - q_star)  # (|Y|, k)
    mean = W @ est
    np.testing.assert_allclose(mean, np.eye(W.shape[0]), rtol=0, atol=1e-9)
    var_u = W @ est**2 - mean**2
    out: np.ndarray = f @ var_u / n
    return out


def wang_variance(p: float, q: float, f: np.ndarray, n: int) -> np.ndarray:
    return q * (1 - q) / (n * (p - q) ** 2) + f * (1 - p - q) / (n * (p - q))


def frequencies(k: int) -> np.ndarray:
    return np.random.default_rng(k).dirichlet(np.ones(k))


# --------------------------------------------------------------------------- the surface


NEW = {
    "basic_rappor",
    "binary_local_hashing",
    "hadamard_response",
    "local_hashing",
    "optimized_local_hashing",
    "optimized_unary_encoding",
    "subset_selection",
    "symmetric_unary_encoding",
    "unary_encoding",
}


def test_exported_and_documented() -> None:
    assert set(mech.__all__) >= NEW
    for name in NEW:
        assert f":func:`{name}`" in (mech.__doc__ or ""), name
        doc = getattr(mech, name).__doc__ or ""
        for section in ("Parameters", "Returns", "Raises", "Notes", "References", "Examples"):
            assert section in doc, (name, section)


PROTOCOLS: list[tuple[str, Callable[[], Channel], int]] = [
    ("ue", lambda: mech.unary_encoding(4, 0.8, 0.3), 2**4),
    ("sue", lambda: mech.symmetric_unary_encoding(5, 1.0), 2**5),
    ("oue", lambda: mech.optimized_unary_encoding(3, 2.0), 2**3),
    ("rappor", lambda: mech.basic_rappor(4, 0.5, p=0.5, q=0.75), 2**4),
    ("hr", lambda: mech.hadamard_response(7, 1.0), 8),
    ("ss", lambda: mech.subset_selection(6, 0.5), math.comb(6, 3)),
    ("lh", lambda: mech.local_hashing(3, 1.0, 3), 3**4),
    ("blh", lambda: mech.binary_local_hashing(4, 1.0), 2**5),
    ("olh", lambda: mech.optimized_local_hashing(2, 1.5), 5**3),
]


@pytest.mark.parametrize(
    ("build", "outputs"), [(b, o) for _, b, o in PROTOCOLS], ids=[n for n, _, _ in PROTOCOLS]
)
def test_channels_are_stochastic_local_channels(build: Callable[[], Channel], outputs: int) -> None:
    ch = build()
    assert isinstance(ch, Channel)
    assert ch.neighbors == "all"
    assert ch.n_outputs == outputs
    assert np.all(ch.matrix >= 0)
    np.testing.assert_allclose(ch.matrix.sum(axis=1), 1.0, rtol=0, atol=1e-13)


# --------------------------------------------------------------------------- unary encodings


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("k", [2, 3, 5])
def test_symmetric_unary_encoding(k: int, eps: float) -> None:
    p = math.exp(eps / 2) / (math.exp(eps / 2) + 1)
    expected, _ = unary_reference(k, p, 1 - p)
    ch = mech.symmetric_unary_encoding(k, eps)
    np.testing.assert_allclose(ch.matrix, expected, rtol=1e-12, atol=0)
    assert dpcap.dp_epsilon(ch) == pytest.approx(eps, abs=1e-12)
    assert local_level(ch.matrix) == pytest.approx(eps, abs=1e-12)


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("k", [2, 4])
def test_optimized_unary_encoding(k: int, eps: float) -> None:
    expected, _ = unary_reference(k, 0.5, 1 / (math.exp(eps) + 1))
    ch = mech.optimized_unary_encoding(k, eps)
    np.testing.assert_allclose(ch.matrix, expected, rtol=1e-12, atol=0)
    assert dpcap.dp_epsilon(ch) == pytest.approx(eps, abs=1e-12)


@pytest.mark.parametrize(("p", "q"), [(0.8, 0.3), (0.5, 0.1), (0.2, 0.6), (0.9, 0.9)])
def test_unary_encoding_level(p: float, q: float) -> None:
    ch = mech.unary_encoding(3, p, q)
    expected, _ = unary_reference(3, p, q)
    np.testing.assert_allclose(ch.matrix, expected, rtol=1e-12, atol=0)
    closed = abs(math.log(p * (1 - q) / ((1 - p) * q)))
    assert dpcap.dp_epsilon(ch) == pytest.approx(closed, abs=1e-12)


@pytest.mark.parametrize("f", [0.1, 0.5, 0.9, 1.0])
def test_basic_one_time_rappor_is_sue(f: float) -> None:
    # permanent randomized response only: epsilon_inf = 2 h log((1 - f/2)/(f/2)), h = 1
    ch = mech.basic_rappor(4, f)
    assert dpcap.dp_epsilon(ch) == pytest.approx(2 * math.log((1 - f / 2) / (f / 2)), abs=1e-12)
    eps = 2 * math.log((1 - f / 2) / (f / 2))
    np.testing.assert_allclose(
        ch.matrix, mech.symmetric_unary_encoding(4, eps).matrix, rtol=1e-12, atol=1e-15
    )


@pytest.mark.parametrize(("f", "p", "q"), [(0.5, 0.5, 0.75), (0.25, 0.2, 0.9), (0.0, 0.3, 0.6)])
def test_basic_rappor_with_irr(f: float, p: float, q: float) -> None:
    # Erlingsson et al.: q* = f(p + q)/2 + (1 - f) q, p* = f(p + q)/2 + (1 - f) p, and the
    # one-report level epsilon_1 = h log(q*(1 - p*) / (p*(1 - q*))), h = 1
    q_star = 0.5 * f * (p + q) + (1 - f) * q
    p_star = 0.5 * f * (p + q) + (1 - f) * p
    ch = mech.basic_rappor(3, f, p=p, q=q)
    expected, _ = unary_reference(3, q_star, p_star)
    np.testing.assert_allclose(ch.matrix, expected, rtol=1e-12, atol=0)
    closed = math.log(q_star * (1 - p_star) / (p_star * (1 - q_star)))
    assert dpcap.dp_epsilon(ch) == pytest.approx(closed, abs=1e-12)


# --------------------------------------------------------------------------- the others


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("k", [2, 3, 4, 7, 12])
def test_hadamard_response(k: int, eps: float) -> None:
    expected, _ = hadamard_reference(k, eps)
    ch = mech.hadamard_response(k, eps)
    np.testing.assert_allclose(ch.matrix, expected, rtol=1e-12, atol=0)
    assert dpcap.dp_epsilon(ch) == pytest.approx(eps, abs=1e-12)


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize(("k", "d"), [(2, 1), (4, 1), (4, 2), (5, 3), (6, 5)])
def test_subset_selection(k: int, d: int, eps: float) -> None:
    expected, _ = subset_reference(k, eps, d)
    ch = mech.subset_selection(k, eps, d)
    np.testing.assert_allclose(ch.matrix, expected, rtol=1e-12, atol=0)
    assert dpcap.dp_epsilon(ch) == pytest.approx(eps, abs=1e-12)


def test_subset_selection_default_size_and_randomized_response() -> None:
    for k, eps in [(6, 0.5), (10, 1.0), (10, 3.0), (3, 0.0)]:
        d = max(1, math.ceil(k / (math.exp(eps) + 1)))  # Ye & Barg
        assert mech.subset_selection(k, eps).n_outputs == math.comb(k, d)
    np.testing.assert_allclose(
        mech.subset_selection(5, 1.2, 1).matrix,
        mech.randomized_response(5, 1.2).matrix,
        rtol=1e-13,
        atol=0,
    )


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize(("k", "g"), [(2, 2), (3, 2), (3, 3), (2, 5)])
def test_local_hashing(k: int, g: int, eps: float) -> None:
    expected, _ = hashing_reference(k, eps, g)
    ch = mech.local_hashing(k, eps, g)
    np.testing.assert_allclose(ch.matrix, expected, rtol=1e-12, atol=0)
    assert dpcap.dp_epsilon(ch) == pytest.approx(eps, abs=1e-12)


@pytest.mark.parametrize("eps", [0.0, 0.5, 1.0, 1.7])
def test_binary_and_optimized_local_hashing(eps: float) -> None:
    np.testing.assert_array_equal(
        mech.binary_local_hashing(3, eps).matrix, mech.local_hashing(3, eps, 2).matrix
    )
    g = math.floor(math.exp(eps) + 1 + 0.5)  # round(e^eps + 1), half up
    olh = mech.optimized_local_hashing(2, eps)
    assert olh.n_outputs == g**3
    np.testing.assert_array_equal(olh.matrix, mech.local_hashing(2, eps, g).matrix)
    assert dpcap.dp_epsilon(olh) == pytest.approx(eps, abs=1e-12)


def test_local_hashing_with_a_family() -> None:
    # a seeded draw of 5 functions [4] -> [3]; the pair (0, 1) collides under every one
    family = np.array([[0, 0, 1, 2], [1, 1, 0, 2], [2, 2, 2, 0], [0, 0, 2, 1], [1, 1, 1, 1]])
    ch = mech.local_hashing(4, 1.0, 3, family=family)
    assert ch.n_outputs == 15
    np.testing.assert_array_equal(ch.matrix[0], ch.matrix[1])  # never separated: same rows
    assert dpcap.dp_epsilon(ch) == pytest.approx(1.0, abs=1e-12)
    e = math.e
    assert ch.matrix[2, 3 * 2 + 2] == pytest.approx(e / (5 * (e + 2)), rel=1e-13)
    assert ch.matrix[2, 3 * 2 + 0] == pytest.approx(1 / (5 * (e + 2)), rel=1e-13)


def test_large_and_infinite_eps() -> None:
    for ch in (
        mech.symmetric_unary_encoding(3, 800.0),
        mech.optimized_unary_encoding(3, 800.0),
        mech.hadamard_response(3, 800.0),
        mech.subset_selection(4, 800.0, 2),
        mech.local_hashing(2, 800.0, 2),
    ):
        assert ch.log_matrix is not None  # e^{-800} underflows; the logs keep it
        assert dpcap.dp_epsilon(ch) == pytest.approx(800.0, rel=1e-12)
    assert dpcap.dp_epsilon(mech.symmetric_unary_encoding(3, math.inf)) == math.inf
    assert dpcap.dp_epsilon(mech.basic_rappor(3, 0.0)) == math.inf


# --------------------------------------------------------------------------- variance


def pure_cases() -> list[tuple[str, np.ndarray, np.ndarray, float, float]]:
    """(name, W, Supp, p*, q*) with p*, q* from the papers' closed forms."""
    cases = []
    for eps in (0.5, 1.0, 2.0):
        e = math.exp(eps)
        p = math.exp(eps / 2) / (math.exp(eps / 2) + 1)
        _, supp = unary_reference(4, p, 1 - p)
        cases.append((f"sue{eps}", mech.symmetric_unary_encoding(4, eps).matrix, supp, p, 1 - p))
        cases.append(
            (f"oue{eps}", mech.optimized_unary_encoding(4, eps).matrix, supp, 0.5, 1 / (e + 1))
        )
        _, supp = hadamard_reference(5, eps)
        cases.append((f"hr{eps}", mech.hadamard_response(5, eps).matrix, supp, e / (e + 1), 0.5))
        k, d = 6, 2
        _, supp = subset_reference(k, eps, d)
        p_ss = d * e / (d * e + k - d)
        q_ss = d * ((d - 1) * e + k - d) / ((k - 1) * (d * e + k - d))
        cases.append((f"ss{eps}", mech.subset_selection(k, eps, d).matrix, supp, p_ss, q_ss))
        for g in (2, 3):
            _, supp = hashing_reference(3, eps, g)
            W = mech.local_hashing(3, eps, g).matrix
            cases.append((f"lh{g}-{eps}", W, supp, e / (e + g - 1), 1 / g))
        supp = np.eye(4, dtype=bool)
        W = mech.randomized_response(4, eps).matrix
        cases.append((f"rr{eps}", W, supp, e / (e + 3), 1 / (e + 3)))
    f, pp, qq = 0.5, 0.5, 0.75
    q_star, p_star = 0.5 * f * (pp + qq) + (1 - f) * qq, 0.5 * f * (pp + qq) + (1 - f) * pp
    _, supp = unary_reference(3, 0.5, 0.5)
    cases.append(("rappor", mech.basic_rappor(3, f, p=pp, q=qq).matrix, supp, q_star, p_star))
    return cases


@pytest.mark.parametrize(
    ("W", "supp", "p", "q"), [c[1:] for c in pure_cases()], ids=[c[0] for c in pure_cases()]
)
def test_wang_variance_formula_equals_the_exact_variance(
    W: np.ndarray, supp: np.ndarray, p: float, q: float
) -> None:
    k, n = W.shape[0], 1000
    f = frequencies(k)
    exact = exact_variance(W, supp, p, q, f, n)
    np.testing.assert_allclose(exact, wang_variance(p, q, f, n), rtol=1e-9, atol=0)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_published_var_star(eps: float) -> None:
    """The f_v → 0 variances of the papers (n = 1), against the exact variance at f_v = 0."""
    e, k = math.exp(eps), 4
    f = np.zeros(k)
    f[0] = 1.0  # every user holds 0: for v != 0, f_v = 0
    p = math.exp(eps / 2) / (math.exp(eps / 2) + 1)
    _, supp = unary_reference(k, p, 1 - p)
    sue = exact_variance(mech.symmetric_unary_encoding(k, eps).matrix, supp, p, 1 - p, f, 1)
    assert sue[1] == pytest.approx(math.exp(eps / 2) / (math.exp(eps / 2) - 1) ** 2, rel=1e-10)
    oue = exact_variance(mech.optimized_unary_encoding(k, eps).matrix, supp, 0.5, 1 / (e + 1), f, 1)
    assert oue[1] == pytest.approx(4 * e / (e - 1) ** 2, rel=1e-10)
    _, supp = hadamard_reference(k, eps)
    hr = exact_variance(mech.hadamard_response(k, eps).matrix, supp, e / (e + 1), 0.5, f, 1)
    assert hr[1] == pytest.approx((e + 1) ** 2 / (e - 1) ** 2, rel=1e-10)
    assert hr[0] == pytest.approx((e + 1) ** 2 / (e - 1) ** 2 - 1.0, rel=1e-10)
    g = 3
    _, supp = hashing_reference(k, eps, g)
    lh = exact_variance(mech.local_hashing(k, eps, g).matrix, supp, e / (e + g - 1), 1 / g, f, 1)
    assert lh[1] == pytest.approx((e - 1 + g) ** 2 / ((e - 1) ** 2 * (g - 1)), rel=1e-10)


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: mech.unary_encoding(1, 0.5, 0.2), "k must be an integer >= 2, got 1"),
        (lambda: mech.unary_encoding(2.5, 0.5, 0.2), "k must be an integer >= 2, got 2.5"),
        (lambda: mech.unary_encoding(True, 0.5, 0.2), "k must be an integer >= 2, got True"),
        (lambda: mech.unary_encoding(3, 1.5, 0.2), "p must be in"),
        (lambda: mech.unary_encoding(3, 0.5, -0.2), "q must be >= 0, got -0.2"),
        (lambda: mech.symmetric_unary_encoding(3, -1.0), "eps"),
        (lambda: mech.optimized_unary_encoding(3, "1"), "eps"),
        (lambda: mech.basic_rappor(3, 1.2), "f must be in"),
        (lambda: mech.basic_rappor(3, 0.5, p=2.0), "p must be in"),
        (lambda: mech.hadamard_response(3, math.nan), "eps"),
        (lambda: mech.subset_selection(5, 1.0, 0), "d must be an integer >= 1, got 0"),
        (lambda: mech.subset_selection(5, 1.0, 5), r"d must be an integer in \[1, k - 1\]"),
        (lambda: mech.subset_selection(5, 1.0, 2.0), "d must be an integer"),
        (lambda: mech.local_hashing(3, 1.0, 1), "g must be an integer >= 2, got 1"),
        (lambda: mech.local_hashing(3, 1.0, 2, family=[[0, 1]]), "family must be a 2-D array"),
        (lambda: mech.local_hashing(3, 1.0, 2, family=[[0, 1, 2]]), r"family must hold buckets"),
        (lambda: mech.local_hashing(3, 1.0, 2, family=[[0, 1, 0.5]]), "family must hold integer"),
        (lambda: mech.local_hashing(3, 1.0, 2, family="abc"), "family must be"),
        (lambda: mech.local_hashing(3, 1.0, 2, family=np.zeros((0, 3), int)), "family must be"),
        (lambda: mech.optimized_local_hashing(3, math.inf), "eps"),
    ],
)
def test_bad_arguments_are_named(call: Callable[[], object], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: mech.unary_encoding(40, 0.5, 0.25), r"2\*\*40 reports"),
        (lambda: mech.symmetric_unary_encoding(10**12, 1.0), "1000000000000 values"),
        (lambda: mech.unary_encoding(10**400, 0.5, 0.1), r"~10\^400 values"),
        (lambda: mech.subset_selection(10**400, 1.0), r"~10\^400 values"),
        (lambda: mech.local_hashing(10**400, 1.0, 2), r"~10\^400 values"),
        (lambda: mech.hadamard_response(10**400, 1.0), r"~10\^400 values"),
        (lambda: mech.optimized_local_hashing(10**400, 1.0), r"~10\^400 values"),
        (lambda: mech.local_hashing(3, 1.0, 10**400), r"~10\^400\*\*4 reports"),
        (lambda: mech.optimized_unary_encoding(23, 1.0), "23 x 8388608"),
        (lambda: mech.hadamard_response(10**9, 1.0), "1000000000 values"),
        (lambda: mech.hadamard_response(10_000, 1.0), "10000 x 16384"),
        (lambda: mech.subset_selection(60, 0.1, 30), r"C\(60, 30\) reports"),
        (lambda: mech.local_hashing(30, 1.0, 3), r"3\*\*31 reports"),
        (lambda: mech.binary_local_hashing(40, 1.0), r"2\*\*41 reports"),
        (lambda: mech.optimized_local_hashing(3, 100.0), r"10\^43.4 buckets"),
        (lambda: mech.optimized_local_hashing(4, 20.0), "reports"),
    ],
)
def test_large_alphabets_are_refused_at_once(call: Callable[[], object], match: str) -> None:
    start = time.perf_counter()
    with pytest.raises(ProblemTooLargeError, match=match):
        call()
    assert time.perf_counter() - start < 1.0
