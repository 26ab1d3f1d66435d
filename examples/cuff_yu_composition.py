r"""
Composition and group privacy of MI-DP: k releases of randomized response
=========================================================================

P. Cuff and L. Yu, *Differential Privacy as a Mutual Information Constraint* (CCS 2016), §4.2
and §5, prove that MI-DP composes like ε-DP, and that a group of entries is protected only
under a cardinality bound:

* Corollary 2 (conditionally independent queries): responses :math:`Y_1, \dots, Y_k` produced
  independently given the database, each :math:`\varepsilon_j`-MI-DP, are together
  :math:`(\sum_j \varepsilon_j)`-MI-DP (eq. 43);
* Corollary 3 (sequential queries): the same when each :math:`P_{Y_j \mid X^n, Y^{j-1}}` is
  :math:`\varepsilon_j`-MI-DP, so a response may adapt to the previous ones;
* Corollary 4 (partial queries): responses that each read a disjoint part of the database, each
  ε-MI-DP, are together ε-MI-DP (eq. 44);
* Corollary 5 (group privacy): under ε-MI-DP a group of k entries leaks at most

  .. math::

     \sup_{P_{X^n}} I(X_{\mathcal{I}}; Y \mid X_{\mathcal{I}^c}) \le 2h\bigl(k\sqrt{2\varepsilon}
     \bigr) + 2k\sqrt{2\varepsilon} \log M, \qquad
     M = \min\{|\mathcal{Y}|, (\max_i |\mathcal{X}_i|)^k + 1\}

  (eq. 54), while ε-DP gives :math:`I(X^n; Y) \le \min\{n\varepsilon, (n\varepsilon)^2\}`
  (eq. 53).

Here the database has two binary entries, and each release answers both through binary
randomized response at level ε (one independent coin per entry and per release). Its MI-DP has a
closed form: by symmetry the uniform prior is optimal, and k releases of one entry make the
channel :math:`x \mapsto (y_1, \dots, y_k)` with :math:`y_j` flipped with probability
:math:`q = 1/(1 + e^\varepsilon)`, whose capacity is

.. math::

   C_k = H(Y^k) - k\,h(q), \qquad
   H(Y^k) = -\sum_{j=0}^{k} \binom{k}{j} p_j \log p_j, \quad
   p_j = \tfrac12\bigl(q^j (1-q)^{k-j} + (1-q)^j q^{k-j}\bigr).
"""

import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap import bounds
from dpcap.mechanisms import randomized_response

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)
TOL = 1e-9  # the certified gap asked of every MI-DP computation, in nats
LN2 = math.log(2)
h = bounds.binary_entropy  # in nats


def releases(matrix: np.ndarray, k: int) -> dpcap.Mechanism:
    """k independent releases of one mechanism on the 2-entry database (``dpcap.compose``:
    row x, output (o_1, …, o_k) in C order), checked against the product built by hand."""
    single = dpcap.Mechanism(matrix, (2, 2))
    composed = dpcap.compose(*[single] * k)
    by_hand = matrix
    for _ in range(k - 1):
        by_hand = np.einsum("xa,xb->xab", by_hand, matrix).reshape(matrix.shape[0], -1)
    assert np.allclose(composed.matrix, by_hand, rtol=0, atol=1e-15)
    return composed


def repeated_bsc_capacity(q: float, k: int) -> float:
    """C_k = H(Y^k) − k h(q) of k independent looks at one bit through a BSC(q), in nats."""
    js = np.arange(k + 1)
    p = 0.5 * (q**js * (1 - q) ** (k - js) + (1 - q) ** js * q ** (k - js))
    binom = np.array([math.comb(k, int(j)) for j in js], dtype=float)
    return float(-np.sum(binom * p * np.log(p)) - k * h(q))


# %%
# One release: both entries through randomized response
# ------------------------------------------------------
#
# Rows are the four databases :math:`(x_1, x_2)` in C order, outputs the four pairs
# :math:`(y_1, y_2)`: the Kronecker product of two randomized responses.

eps = 1.0
q = 1 / (1 + math.exp(eps))
rr = randomized_response(2, eps).matrix
one = np.kron(rr, rr)
C1 = LN2 - h(q)  # the MI-DP of one release (Appendix C, eq. 98)
print(f"binary randomized response at ε = {eps}: q = {q:.6f}, C_1 = ln 2 − h(q) = {C1:.9f} nats")

# %%
# Corollary 2: k releases on the same database
# --------------------------------------------
#
# The exact MI-DP of k releases against three bounds: Corollary 2 (:math:`k C_1`), Lemma 1
# with Property 1 applied to the composed ε-DP level kε (:math:`k\varepsilon
# \tanh(k\varepsilon/2)`), and :math:`\ln 2` (an entry is one bit).

ks = [1, 2, 3, 4]
comp = []
print(f"\n  {'k':>2} {'MI-DP dpcap':>12} {'C_k closed':>12} {'k·C_1 (Cor.2)':>14} {'kε·tanh':>9}")
for k in ks:
    M = releases(one, k)
    res = dpcap.midp(M, tol=TOL)
    closed = repeated_bsc_capacity(q, k)
    eps_k = dpcap.dp_epsilon(M)
    kl_bound = bounds.kl_dp_bound(eps_k)
    comp.append((k, res.value, closed, k * C1, kl_bound))
    print(f"  {k:>2} {res.value:12.9f} {closed:12.9f} {k * C1:14.9f} {kl_bound:9.5f}")
    # The closed form lies in the certified bracket (width ≤ TOL).
    assert res.lower - 1e-12 <= closed <= res.upper + 1e-12, k
    assert np.allclose(res.per_entry, res.value, atol=TOL)  # both entries alike
    # ε-DP composes exactly: k releases of an ε-DP mechanism are kε-DP, no better.
    assert math.isclose(eps_k, k * eps, rel_tol=1e-12), k
    # Corollary 2 (eq. 43), Lemma 1 with Property 1, and one bit per entry.
    assert res.value <= k * C1 + 1e-12, k
    assert res.value <= kl_bound
    assert res.value <= LN2
# Corollary 2 is an equality only at k = 1: repeated looks at the same bit overlap.
assert all(value < bound - 1e-3 for _, value, _, bound, _ in comp[1:])

# %%
# Corollary 3: a second release that adapts to the first
# ------------------------------------------------------
#
# One entry. The first release is randomized response at :math:`\varepsilon_1`; the second
# uses :math:`\varepsilon_a` if the first answer was 0 and :math:`\varepsilon_b` otherwise. Given
# the first answer, the second is an :math:`\max(C(\varepsilon_a), C(\varepsilon_b))`-MI-DP
# mechanism, so together they are at most :math:`C(\varepsilon_1) + \max(C(\varepsilon_a),
# C(\varepsilon_b))`.

eps1, eps_a, eps_b = 1.0, 0.5, 2.0
first = randomized_response(2, eps1).matrix
second = {0: randomized_response(2, eps_a).matrix, 1: randomized_response(2, eps_b).matrix}
adaptive = np.zeros((2, 4))  # outputs (y_1, y_2) in C order
for y1 in (0, 1):
    adaptive[:, 2 * y1 : 2 * y1 + 2] = first[:, [y1]] * second[y1]
together = dpcap.midp(adaptive, tol=TOL)
levels = {e: dpcap.midp(randomized_response(2, e), tol=TOL).upper for e in (eps1, eps_a, eps_b)}
cor3 = levels[eps1] + max(levels[eps_a], levels[eps_b])
print(f"\nadaptive pair: MI-DP {together.value:.9f} <= C(ε_1) + max(C(ε_a), C(ε_b)) = {cor3:.9f}")
assert together.value <= cor3
# Each response given the previous one: the capacity of the second, given y_1, is C(ε(y_1)).
for y1, e in ((0, eps_a), (1, eps_b)):
    assert math.isclose(dpcap.midp(second[y1], tol=TOL).value, levels[e], abs_tol=TOL)

# %%
# Corollary 4: releases that read disjoint entries
# ------------------------------------------------
#
# Release j answers only entry j: together they are as private as one release.

partial = np.kron(rr, rr)  # Y_1 from X_1 alone, Y_2 from X_2 alone
res = dpcap.midp(dpcap.Mechanism(partial, (2, 2)), tol=TOL)
print(f"\ntwo partial queries: MI-DP {res.value:.9f} = C_1 = {C1:.9f} (not 2·C_1 = {2 * C1:.6f})")
assert res.lower - 1e-12 <= C1 <= res.upper + 1e-12
assert np.all(np.abs(res.per_entry - C1) <= TOL)

# %%
# Corollary 5: group privacy of both entries
# ------------------------------------------
#
# The group leakage :math:`\sup I(X_1, X_2; Y)` (``dpcap.midp(M, group=[0, 1])``) against
# Corollary 5, fed the exact MI-DP, and against eq. 53, fed the ε-DP level. For k releases the
# group leakage is exactly :math:`2 C_k`: the two entries are answered independently.

group_rows = []
print(f"\n  {'k':>2} {'group leakage':>14} {'2·C_k':>12} {'Cor. 5 bound':>13} {'eq. 53':>8}")
for k in ks:
    M = releases(one, k)
    mi = dpcap.midp(M, tol=TOL)
    grp = dpcap.midp(M, group=[0, 1], tol=TOL)
    cor5 = bounds.group_midp_bound(mi.upper, 2, n_outputs=M.n_outputs, max_entry_size=2)
    eq53 = min(2 * k * eps, (2 * k * eps) ** 2)  # n = 2 entries, each k·ε-DP
    exact = 2 * repeated_bsc_capacity(q, k)
    group_rows.append((k, grp.value, exact, cor5, eq53))
    print(f"  {k:>2} {grp.value:14.9f} {exact:12.9f} {cor5:13.6f} {eq53:8.3f}")
    assert grp.lower - 2e-12 <= exact <= grp.upper + 2e-12, k
    assert grp.value <= cor5
    assert grp.value <= eq53
    # Group privacy of ε-DP: the databases that differ in both entries are 2kε apart.
    assert math.isclose(dpcap.dp_epsilon(M, neighbors="all"), 2 * k * eps, rel_tol=1e-12)

# %%
# Corollary 5 over ε, for one release
# -----------------------------------
#
# At small ε the MI-DP is about :math:`\varepsilon^2/8` and the group leakage about
# :math:`\varepsilon^2/4`, while Corollary 5's bound is of order
# :math:`\varepsilon \ln(1/\varepsilon)`: a guarantee, but a loose one. Without the
# cardinality bound there is none at all: see Example 5 in
# :ref:`sphx_glr_auto_examples_cuff_yu_examples.py`.

eps_grid = np.linspace(0.05, 2.0, 40)
grp_curve, cor5_curve, eq53_curve = [], [], []
for e in eps_grid:
    r = randomized_response(2, e).matrix
    M = dpcap.Mechanism(np.kron(r, r), (2, 2))
    mi = dpcap.midp(M, tol=TOL).upper
    g = dpcap.midp(M, group=[0, 1], tol=TOL)
    closed = 2 * (LN2 - h(1 / (1 + math.exp(e))))
    assert g.lower - 2e-12 <= closed <= g.upper + 2e-12, e
    grp_curve.append(g.value)
    cor5_curve.append(bounds.group_midp_bound(mi, 2, n_outputs=4, max_entry_size=2))
    eq53_curve.append(min(2 * e, (2 * e) ** 2))
assert all(g <= c for g, c in zip(grp_curve, cor5_curve, strict=True))
assert all(g <= b for g, b in zip(grp_curve, eq53_curve, strict=True))

# %%
# The figure: composition over k (left), group privacy over ε (right)
# -------------------------------------------------------------------

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10.5, 4))
arr = np.array(comp)
ax1.plot(arr[:, 0], arr[:, 1], "o-", lw=2, label="MI-DP of k releases (dpcap.midp)")
ax1.plot(arr[:, 0], arr[:, 3], "s--", label="k·C_1 (Corollary 2)")
ax1.plot(arr[:, 0], arr[:, 4], "^:", label="kε·tanh(kε/2) (Lemma 1, Property 1)")
ax1.axhline(LN2, color="0.5", lw=1, label="ln 2 (one bit per entry)")
ax1.set_xticks(ks)
ax1.set_ylim(0, 1.6)
ax1.set_xlabel("k (independent releases)")
ax1.set_ylabel("MI-DP (nats)")
ax1.set_title(f"Composition, randomized response at ε = {eps}")
ax1.legend(fontsize=8)
ax2.plot(eps_grid, grp_curve, lw=2, label="sup I(X_1, X_2; Y) (group=[0, 1])")
ax2.plot(eps_grid, cor5_curve, "--", label="Corollary 5, from the MI-DP")
ax2.plot(eps_grid, eq53_curve, ":", label="min{2ε, (2ε)²} (eq. 53), from ε-DP")
ax2.axhline(2 * LN2, color="0.5", lw=1, label="2 ln 2 (two bits)")
ax2.set_ylim(0, 3.2)
ax2.set_xlabel("ε of randomized response (nats)")
ax2.set_ylabel("group leakage (nats)")
ax2.set_title("Group privacy of a 2-entry database, one release")
ax2.legend(fontsize=8)
fig.suptitle("Cuff & Yu, Corollaries 2–5")
fig.tight_layout()
fig.savefig(OUT / "cuff_yu_composition.png", dpi=120)
