r"""
Rényi capacity of the binary symmetric channel, from Shannon to ε-DP
====================================================================

The article *Differential Privacy and Information Theory: How to Secure Data with a Broken
Wifi Connection* (2022) measures privacy by the Rényi channel capacity
:math:`C_\alpha = \sup_P I_\alpha`, non-decreasing in α, and works out the binary symmetric
channel :math:`W = \begin{pmatrix} 1-p & p \\ p & 1-p \end{pmatrix}` (section "Protection
against B… Outcomes"):

* the **radius** (Sibson's α-capacity, :math:`\min_Q \max_x D_\alpha(W_x \,\|\, Q)`) is
  :math:`\log 2 - H_\alpha(p)` with the binary Rényi entropy
  :math:`H_\alpha(p) = \log(p^\alpha + (1-p)^\alpha) / (1-\alpha)`;
* the **diameter** :math:`\max_{x,x'} D_\alpha(W_x \,\|\, W_{x'})` is
  :math:`\log\bigl(p^\alpha (1-p)^{1-\alpha} + (1-p)^\alpha p^{1-\alpha}\bigr) / (\alpha-1)`;
* at α = ∞ the diameter is the ε-DP level :math:`\log((1-p)/p)` (section "Connecting
  Differential Privacy to Shannon"), while the radius is :math:`\log(2 \max(p, 1-p))` (section
  "Sibson's definition"), and their ratio tends to 2 as ε → 0.

Derivation of the radius. Sibson's α-information of a prior P is
:math:`I_\alpha^S(P, W) = \frac{\alpha}{\alpha-1} \log \sum_y \bigl(\sum_x P(x)
W(y \mid x)^\alpha\bigr)^{1/\alpha}`. The channel is symmetric under swapping both labels and
:math:`I_\alpha^S` is quasi-concave in P, so the uniform prior attains the maximum; there each
output contributes :math:`\bigl(\tfrac12 (p^\alpha + (1-p)^\alpha)\bigr)^{1/\alpha}`, and the sum
of the two gives :math:`\log 2 - H_\alpha(p)`. α → 1 gives Shannon's :math:`\log 2 - h(p)`,
α → ∞ gives :math:`\log 2 + \log \max(p, 1-p) = \log \sum_y \max_x W(y \mid x)`.

The article's section "Group Privacy and Composability" then states that k queries, each
ε-private at level α, are together kε-private at level :math:`1 + (\alpha - 1)/k`, and likewise
for a group of k rows; at α = ∞ this is the usual composition and group privacy of ε-DP.
"""

import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap.mechanisms import binary_symmetric
from dpcap.plots import plot_renyi_profile

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)

p = 0.2
W = binary_symmetric(p)
eps = math.log((1 - p) / p)  # the ε-DP level of the BSC


def radius(alpha: float) -> float:
    """``log 2 − H_α(p)``: the Rényi radius (Sibson capacity) of the BSC, in nats."""
    if alpha == 0:
        return 0.0  # both outputs are possible from both inputs: H_0(p) = log 2
    if alpha == 1:
        return math.log(2) + p * math.log(p) + (1 - p) * math.log(1 - p)
    if math.isinf(alpha):
        return math.log(2 * max(p, 1 - p))
    return math.log(2) - math.log(p**alpha + (1 - p) ** alpha) / (1 - alpha)


def diameter(alpha: float) -> float:
    """``max_{x,x'} D_α(W_x ‖ W_x')`` of the BSC, in nats (the two rows are mirror images)."""
    if alpha == 0:
        return 0.0  # D_0(P ‖ Q) = −log Q(supp P), and both rows have full support
    if alpha == 1:
        return (1 - 2 * p) * math.log((1 - p) / p)  # D(W_0 ‖ W_1)
    if math.isinf(alpha):
        return abs(math.log((1 - p) / p))
    s = p**alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha)
    return math.log(s) / (alpha - 1)


# %%
# The profile α ↦ C_α beside the closed forms
# -------------------------------------------
#
# :func:`dpcap.renyi_profile` returns a certified bracket at each order and the diameter.
alphas = np.array([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 4.0, 8.0, 16.0, 64.0, 256.0, math.inf])
tol = 1e-9
prof = dpcap.renyi_profile(W, alphas, tol=tol)
print(f"binary symmetric channel, p = {p} (ε = log((1-p)/p) = {eps:.6f} nats)")
header = ("alpha", "C_alpha dpcap", "log2 - H_a(p)", "diam dpcap", "diam closed")
print("  {:>6} {:>14} {:>14} {:>11} {:>11}".format(*header))
for k, a in enumerate(alphas):
    r, d = radius(a), diameter(a)
    print(f"  {a:>6g} {prof.value[k]:14.10f} {r:14.10f} {prof.diameter[k]:11.7f} {d:11.7f}")
    # The closed form lies in dpcap's certified bracket, whose width is at most tol.
    assert prof.lower[k] - 1e-12 <= r <= prof.upper[k] + 1e-12, (a, prof.lower[k], r)
    assert abs(prof.value[k] - r) <= tol + 1e-12, a
    # The diameter is a divergence between two rows, evaluated directly: rounding only.
    assert math.isclose(prof.diameter[k], d, rel_tol=1e-9, abs_tol=1e-12), a
    # The uniform prior attains C_α (symmetry + quasi-concavity of Sibson's I_α). I_α is
    # quadratic near its maximum, so a gap of tol = 1e-9 leaves the prior within ~√tol ≈ 3e-5.
    if a > 0:  # (at α = 0 every prior with full support attains C_0 = 0)
        assert np.allclose(prof.prior[k], [0.5, 0.5], atol=1e-4), (a, prof.prior[k])
assert np.all(np.diff(prof.value) >= 0), "C_α is non-decreasing in α"

# %%
# α = ∞: the two ends of the article's sandwich
# ---------------------------------------------
#
# Radius :math:`\le C_\infty \le` diameter: the radius is the maximal leakage, the diameter
# the ε-DP level.
c_inf = dpcap.renyi_capacity(W, math.inf).value
dp = dpcap.dp_epsilon(W)
closed_inf = math.log(2 * (1 - p))
print(f"  Sibson C_inf = log sum_y max_x W = {c_inf:.10f}   log(2(1-p)) = {closed_inf:.10f}")
print(f"  eps-DP level (diameter at inf)   = {dp:.10f}   log((1-p)/p) = {eps:.10f}")
assert math.isclose(c_inf, closed_inf, rel_tol=1e-12)
assert math.isclose(dpcap.max_leakage(W), closed_inf, rel_tol=1e-12)
assert math.isclose(dp, eps, rel_tol=1e-12)
# The article's own C_α (sup_P D_α(P_XY ‖ P_X P_Y), kind="naive") sits between the two and
# reaches the ε-DP level at α = ∞.
naive = dpcap.renyi_capacity(W, math.inf, kind="naive")
print(f"  article's C_inf (kind='naive')   = [{naive.lower:.10f}, {naive.upper:.10f}]")
assert math.isclose(naive.upper, eps, rel_tol=1e-12)
assert c_inf <= naive.upper

# "The ratio between the radius and the diameter approaches 2 in the small ε high α limit":
# at α = ∞ with p = 1/(1 + e^ε) the ratio is ε / (ε − log((1 + e^ε)/2)) = 2 + ε/2 + O(ε²).
print(f"  {'eps':>6} {'diameter/radius at inf':>23} {'2 + eps/2':>10}")
for e_small in (1.0, 0.1, 0.01):
    q = 1 / (1 + math.exp(e_small))
    Wq = binary_symmetric(q)
    ratio = dpcap.dp_epsilon(Wq) / dpcap.renyi_capacity(Wq, math.inf).value
    print(f"  {e_small:>6g} {ratio:23.6f} {2 + e_small / 2:10.6f}")
    assert abs(ratio - 2) <= e_small, e_small  # |ratio − 2| ≈ ε/2 for small ε
assert abs(ratio - 2 - e_small / 2) <= e_small**2

# %%
# Composition across α: k queries of the same row
# ------------------------------------------------
#
# The row is one bit, queried k times through independent copies of the channel: the
# repetition channel :math:`x \mapsto (y_1, \dots, y_k)`, built here with numpy (outputs are
# tuples in C order). The article's claim: :math:`C_{\alpha_k}(W^{(k)}) \le k\, C_\alpha(W)` at
# the level :math:`\alpha_k = 1 + (\alpha - 1)/k`. For Sibson's capacity it follows from two
# facts: the capacity of a product channel is the sum of the capacities (Gallager's
# :math:`E_0` is additive), the repetition channel is the product channel with its inputs
# restricted to the diagonal, and :math:`\alpha_k \le \alpha` for α ≥ 1. At α = ∞ it is the
# composition of ε-DP, and there it is exact: the k-fold channel is kε-DP.


def repetition(matrix: np.ndarray, k: int) -> np.ndarray:
    """The channel x ↦ (y_1, …, y_k), the y_j independent given x (outputs in C order)."""
    out = matrix
    for _ in range(k - 1):
        out = np.einsum("xa,xb->xab", out, matrix).reshape(matrix.shape[0], -1)
    return out


def product(matrix: np.ndarray, k: int) -> np.ndarray:
    """k rows, each answered by its own copy of the channel (rows and outputs in C order)."""
    out = np.ones((1, 1))
    for _ in range(k):
        out = np.kron(out, matrix)
    return out


def level(alpha: float, k: int) -> float:
    """The article's level 1 + (α − 1)/k of a combination of k queries or rows."""
    return alpha if math.isinf(alpha) else 1 + (alpha - 1) / k


ks = [1, 2, 3, 4]
orders = [1.0, 2.0, 8.0, math.inf]
single = {a: dpcap.renyi_capacity(W, a, tol=tol) for a in orders}
composed: dict[float, list[float]] = {}
grouped: dict[float, list[float]] = {}
print("\nComposition: C at level 1 + (α−1)/k of the k-fold repetition channel (nats)")
print(f"  {'alpha':>6} " + " ".join(f"{'k = ' + str(k):>18}" for k in ks))
for a in orders:
    composed[a] = []
    for k in ks:
        res = dpcap.renyi_capacity(repetition(W.matrix, k), level(a, k), tol=tol)
        composed[a].append(res.upper)
        # The article's bound, with certified ends: the upper end of the left side is below
        # the lower end of the right side, up to the certified gaps (k = 1 is an equality).
        assert res.upper <= k * single[a].lower + k * tol, (a, k)
        assert res.upper <= math.log(2) + 1e-12  # one bit of input: never more than log 2
    cells = " ".join(
        f"{c:8.5f} <= {k * single[a].value:7.4f}" for k, c in zip(ks, composed[a], strict=True)
    )
    print(f"  {a:>6g} {cells}")
for k in ks:
    # α = ∞: the k-fold channel is exactly kε-DP (its two rows' log-ratios add up).
    assert math.isclose(dpcap.dp_epsilon(repetition(W.matrix, k)), k * eps, rel_tol=1e-12)

# %%
# Group privacy across α: k rows answered separately
# ---------------------------------------------------
#
# A database of k binary rows, each answered by its own copy of the channel
# (:class:`dpcap.Mechanism` on shape :math:`(2, \dots, 2)`). Every row is private at level α
# with :math:`\varepsilon = C_\alpha(W)`, its Rényi MI-DP (:func:`dpcap.renyi_midp`); the whole
# group of k rows is :math:`k C_\alpha(W)`-private at level :math:`\alpha_k`: here its capacity
# is exactly :math:`k\, C_{\alpha_k}(W)` (additivity). At α = ∞ the ε-DP level between two
# databases that differ in all k rows is kε (group privacy of ε-DP), while neighbours (one row
# differs) stay at ε.

print("\nGroup privacy: C at level 1 + (α−1)/k of k rows answered separately (nats)")
print(f"  {'alpha':>6} " + " ".join(f"{'k = ' + str(k):>18}" for k in ks))
for a in orders:
    grouped[a] = []
    for k in ks:
        M = dpcap.Mechanism(product(W.matrix, k), (2,) * k)
        per_row = dpcap.renyi_midp(M, a, tol=tol)
        assert abs(per_row.value - single[a].value) <= tol + 1e-12, (a, k)
        res = dpcap.renyi_capacity(M.matrix, level(a, k), tol=tol)
        one = dpcap.renyi_capacity(W, level(a, k), tol=tol)
        grouped[a].append(res.upper)
        assert k * one.lower - k * 1e-12 <= res.upper <= k * one.upper + tol, (a, k)  # additivity
        assert res.upper <= k * per_row.lower + k * tol, (a, k)  # the article's bound
    cells = " ".join(
        f"{c:8.5f} <= {k * single[a].value:7.4f}" for k, c in zip(ks, grouped[a], strict=True)
    )
    print(f"  {a:>6g} {cells}")
for k in ks:
    M = dpcap.Mechanism(product(W.matrix, k), (2,) * k)
    assert math.isclose(dpcap.dp_epsilon(M), eps, rel_tol=1e-12)  # neighbours: one row
    # Every pair of databases (neighbors="all"): the pair that differs in all k rows.
    assert math.isclose(dpcap.dp_epsilon(M, neighbors="all"), k * eps, rel_tol=1e-12)

# %%
# The figure: the profile α ↦ C_α, and combinations of k queries or rows
# -----------------------------------------------------------------------

fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4))
fine = np.geomspace(0.25, 256.0, 200)
plot_renyi_profile(prof, ax=ax)
ax.plot(fine, [radius(a) for a in fine], "k:", label="log 2 − H_α(p)")
ax.axhline(math.log(2 * (1 - p)), color="C2", ls="--", lw=1, label="C_∞ = log 2(1−p)")
ax.axhline(eps, color="C3", ls="--", lw=1, label="ε = log((1−p)/p)")
ax.set_title(f"Rényi capacity of the BSC, p = {p}")
ax.set_ylim(0, 1.45 * eps)
ax.legend(fontsize=7, loc="upper left", ncol=2)
for j, a in enumerate([1.0, 2.0, math.inf]):
    color, order = f"C{j}", "∞" if math.isinf(a) else f"{a:g}"
    ax2.plot(ks, [k * single[a].value for k in ks], "--", color=color, lw=1)
    ax2.plot(ks, grouped[a], "s-", color=color, ms=5, label=f"k rows, α = {order}")
    ax2.plot(ks, composed[a], "o:", color=color, ms=5, label=f"k queries, α = {order}")
ax2.plot([], [], "k--", lw=1, label="bound k·C_α(W)")
ax2.axhline(math.log(2), color="0.6", lw=0.8)
ax2.set_xticks(ks)
ax2.set_xlabel("k (queries of one row, or rows of a group)")
ax2.set_ylabel("C at level 1 + (α − 1)/k (nats)")
ax2.set_title("Composition and group privacy across α")
ax2.legend(fontsize=7, ncol=2)
fig.tight_layout()
fig.savefig(OUT / "renyi_capacity_bsc.png", dpi=120)
