r"""
Local frequency oracles as channels: estimator variance, ε and capacity
=======================================================================

Wang, Blocki, Li and Jha (USENIX Security 2017) compare local-DP protocols for frequency
estimation by the variance of their unbiased estimators. Each protocol is a *pure* protocol: a
report ``y`` supports a set of values, the true value is supported with probability
:math:`p^*`, any other value with probability :math:`q^*`, and the frequency estimate of
``n`` reports has variance

.. math::

   \operatorname{Var}[\hat f_v] = \frac{q^*(1 - q^*)}{n (p^* - q^*)^2}
   + \frac{f_v (1 - p^* - q^*)}{n (p^* - q^*)}.

In dpcap each protocol is a channel (rows: the ``k`` values; columns: the reports, in the
order its docstring states), so its ε-LDP level and its capacity come from the matrix. Here we

* check that :func:`dpcap.dp_epsilon` of every protocol is its ε;
* compute the estimator's variance **exactly from the matrix** (every report enumerated) and
  print it beside the closed form;
* draw the variance and the capacity against ε. At ``k = 4`` the direct answers — k-ary
  randomized response, and subset selection, which becomes it once its subset size is 1 — have
  both the smallest variance and the largest capacity; the protocols built for large ``k``
  (unary encodings, Hadamard response, local hashing: their variance does not grow with ``k``)
  leak less about a value and estimate its frequency worse at this size (Wang et al.: direct
  encoding wins while :math:`k < 3e^\varepsilon + 2`).
"""

import itertools
import math
import os
from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap import bounds
from dpcap import mechanisms as mech

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)

k = 4  # values a user may hold


# %%
# Each protocol: the channel, the supports of its reports, and its p*, q*
# -----------------------------------------------------------------------
#
# The supports follow the documented order of the reports: bit vectors in C order (bit 0
# first) for the unary encodings; the rows of the Hadamard matrix; subsets in
# ``itertools.combinations`` order; ``(function j, bucket b)`` at column ``j g + b``.
def unary_support(k: int) -> np.ndarray:
    return np.array(list(itertools.product((0, 1), repeat=k)), dtype=bool)


def hadamard_support(k: int) -> np.ndarray:
    K = 1 << k.bit_length()
    y = np.arange(K)
    return np.array([[bin((x + 1) & j).count("1") % 2 == 0 for x in range(k)] for j in y])


def subset_support(k: int, d: int) -> np.ndarray:
    return np.array([[v in S for v in range(k)] for S in itertools.combinations(range(k), d)])


def hashing_support(k: int, g: int) -> np.ndarray:
    functions = np.array(list(itertools.product(range(g), repeat=k)))  # (g^k, k)
    return (functions[:, None, :] == np.arange(g)[None, :, None]).reshape(-1, k)


def olh_g(eps: float) -> int:
    return math.floor(math.exp(eps) + 1.5)


def ss_d(eps: float) -> int:
    return max(1, math.ceil(k / (math.exp(eps) + 1)))


Protocol = tuple[
    Callable[[float], dpcap.Channel],
    Callable[[float], np.ndarray],
    Callable[[float], tuple[float, float]],
]


def sue_pq(eps: float) -> tuple[float, float]:
    p = math.exp(eps / 2) / (math.exp(eps / 2) + 1)
    return p, 1 - p


def ss_pq(eps: float) -> tuple[float, float]:
    e, d = math.exp(eps), ss_d(eps)
    return d * e / (d * e + k - d), d * ((d - 1) * e + k - d) / ((k - 1) * (d * e + k - d))


PROTOCOLS: dict[str, Protocol] = {
    "k-RR": (
        lambda e: mech.randomized_response(k, e),
        lambda e: np.eye(k, dtype=bool),
        lambda e: (math.exp(e) / (math.exp(e) + k - 1), 1 / (math.exp(e) + k - 1)),
    ),
    "SUE (RAPPOR)": (
        lambda e: mech.symmetric_unary_encoding(k, e),
        lambda e: unary_support(k),
        sue_pq,
    ),
    "OUE": (
        lambda e: mech.optimized_unary_encoding(k, e),
        lambda e: unary_support(k),
        lambda e: (0.5, 1 / (math.exp(e) + 1)),
    ),
    "Hadamard": (
        lambda e: mech.hadamard_response(k, e),
        lambda e: hadamard_support(k),
        lambda e: (math.exp(e) / (math.exp(e) + 1), 0.5),
    ),
    "subset selection": (
        lambda e: mech.subset_selection(k, e),
        lambda e: subset_support(k, ss_d(e)),
        ss_pq,
    ),
    "BLH": (
        lambda e: mech.binary_local_hashing(k, e),
        lambda e: hashing_support(k, 2),
        lambda e: (math.exp(e) / (math.exp(e) + 1), 0.5),
    ),
    "OLH": (
        lambda e: mech.optimized_local_hashing(k, e),
        lambda e: hashing_support(k, olh_g(e)),
        lambda e: (math.exp(e) / (math.exp(e) + olh_g(e) - 1), 1 / olh_g(e)),
    ),
}


def exact_variance(W: np.ndarray, supports: np.ndarray, p: float, q: float) -> np.ndarray:
    """``n Var[f̂_v]`` at uniform frequencies, every report enumerated (unbiasedness checked)."""
    est = (supports.astype(float) - q) / (p - q)
    mean = W @ est
    assert np.allclose(mean, np.eye(W.shape[0]), atol=1e-9), "the estimator is unbiased"
    var_u = W @ est**2 - mean**2
    out: np.ndarray = np.full(W.shape[0], 1 / W.shape[0]) @ var_u
    return out


# %%
# ε, variance and capacity over a grid of ε
# -----------------------------------------
grid = np.linspace(0.25, 2.5, 10)
variance = {name: [] for name in PROTOCOLS}
capacity = {name: [] for name in PROTOCOLS}
f_v = 1 / k
print(f"k = {k} values; n Var[f_v] at uniform frequencies: exact (matrix) / closed form")
print(f"  {'protocol':<17}" + "".join(f"{'eps=' + format(e, '.2f'):>22}" for e in grid[::3]))
for name, (build, support, pq) in PROTOCOLS.items():
    cells = []
    for i, eps in enumerate(grid):
        W = build(eps)
        level = dpcap.dp_epsilon(W)
        assert math.isclose(level, eps, rel_tol=1e-12), (name, eps, level)
        p, q = pq(eps)
        closed = q * (1 - q) / (p - q) ** 2 + f_v * (1 - p - q) / (p - q)
        exact = exact_variance(W.matrix, support(eps), p, q)
        assert np.allclose(exact, closed, rtol=1e-9), (name, eps)
        variance[name].append(closed)
        capacity[name].append(float(dpcap.capacity(W)))
        if i % 3 == 0:
            cells.append(f"{exact[0]:10.4f} /{closed:10.4f}")
    print(f"  {name:<17}" + "".join(f"{c:>22}" for c in cells))

# %%
# One published equality, exactly
# -------------------------------
#
# At :math:`\varepsilon = \ln 3` the bucket count of OLH is exactly :math:`g = e^\varepsilon + 1
# = 4`, and OUE and OLH have the same :math:`\operatorname{Var}^* = 4e^\varepsilon /
# (e^\varepsilon - 1)^2 = 3` (the :math:`f_v \to 0` variance, ``n = 1``): computed from the
# matrices with every user holding value 0, for the value 1.
eps = math.log(3.0)
for name in ("OUE", "OLH"):
    build, support, pq = PROTOCOLS[name]
    W, (p, q) = build(eps).matrix, pq(eps)
    est = (support(eps).astype(float) - q) / (p - q)
    var_star = float(W[0] @ est[:, 1] ** 2 - (W[0] @ est[:, 1]) ** 2)
    print(f"{name} at eps = ln 3: Var* = {var_star:.12f} (closed form 4e^eps/(e^eps - 1)^2 = 3)")
    assert math.isclose(var_star, 3.0, rel_tol=1e-10)

# %%
# The figure: variance (log scale) and capacity against ε
# -------------------------------------------------------
#
# Every ε-LDP channel has capacity at most the KL-DP bound :math:`\varepsilon\tanh(\varepsilon/2)`
# (Cuff & Yu, Property 1) and at most :math:`\log k`.
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
for j, name in enumerate(PROTOCOLS):
    style = {"color": f"C{j}", "marker": "os^vD<>"[j], "ms": 4}
    left.plot(grid, variance[name], label=name, **style)
    right.plot(grid, capacity[name], label=name, **style)
left.set_yscale("log")
left.set_xlabel("ε")
left.set_ylabel("n · Var[estimated frequency], uniform frequencies")
left.set_title(f"Estimator variance, k = {k} (Wang et al. 2017)")
left.legend(fontsize=8)
cap_bound = np.minimum(bounds.kl_dp_bound(grid), math.log(k))
right.plot(grid, cap_bound, "k:", label="min(ε tanh(ε/2), log k)")
right.set_xlabel("ε")
right.set_ylabel("capacity (nats)")
right.set_title("Capacity: the most a report leaks")
right.legend(fontsize=8)
fig.tight_layout()
fig.savefig(OUT / "local_protocols.png", dpi=120)
