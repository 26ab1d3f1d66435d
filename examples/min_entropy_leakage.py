r"""
Min-entropy leakage and maximal leakage of ε-DP mechanisms
==========================================================

Ünsal & Önen, *Information-Theoretic Approaches to Differential Privacy*, §4.2–4.3, review two
bounds on what an ε-DP mechanism leaks to a guessing adversary.

§4.3, after Barthe and Köpf (CSF 2011): the min-entropy leakage
:math:`H_\infty(X) - H_\infty(X \mid Y)` of a channel (eqs. 47–48) is largest at the uniform
prior, where it equals the maximal leakage (eq. 51)

.. math::

   ML(P_{Y|X}) = \max_{P_X} \bigl(H_\infty(X) - H_\infty(X \mid Y)\bigr)
   = \log \sum_y \max_x P_{Y|X}(y \mid x),

and an ε-DP channel with two inputs leaks at most (eq. 50)

.. math::

   ML(P_{Y|X}) \le \log \frac{2 e^\varepsilon}{1 + e^\varepsilon},

which binary randomized response attains. Eq. 52 reduces any such channel to a binary one with
the same leakage, :math:`\log(\bar p + \bar q)` (Table 2).

§4.2, after Calmon and Fawaz (Allerton 2012): a mechanism is ε-information private under a
prior when every posterior stays within a factor :math:`e^{\pm\varepsilon}` of the prior
(eq. 40); Theorem 4 then gives 2ε-DP (eq. 43) and a leakage :math:`H(X) - H(X \mid Y = y)` of
at most :math:`\varepsilon/\ln 2` bits, i.e. ε nats, for every output y (eqs. 41, 44–46).
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


def eq52(W: np.ndarray) -> float:
    """log(p̄ + q̄) of Table 2: merge I = {y : W[0, y] ≤ W[1, y]} into one output."""
    in_I = W[0] <= W[1]
    return math.log(W[0, ~in_I].sum() + W[1, in_I].sum())


# %%
# Binary randomized response attains the bound of eq. 50
# ------------------------------------------------------
#
# :func:`dpcap.max_leakage` is eq. 51, :func:`dpcap.min_entropy_leakage` the leakage at one
# prior, :func:`dpcap.bounds.min_entropy_leakage_bound` the right side of eq. 50.

print("Min-entropy leakage (nats) against log(2e^eps/(1+e^eps))")
print(
    f"  {'mechanism':<24} {'eps':>7} {'max leakage':>12} {'bound (50)':>11} {'log(p+q) (52)':>14}"
)
for eps in (0.25, 0.5, 1.0, 2.0):
    W = randomized_response(2, eps)
    bound = float(bounds.min_entropy_leakage_bound(eps))
    closed = math.log(2 * math.exp(eps) / (1 + math.exp(eps)))
    assert math.isclose(bound, closed, rel_tol=1e-14)
    # Binary randomized response attains the bound, at the uniform prior (eq. 49).
    ml = dpcap.max_leakage(W)
    assert math.isclose(ml, closed, rel_tol=1e-12)
    assert math.isclose(dpcap.min_entropy_leakage([0.5, 0.5], W), closed, rel_tol=1e-12)
    assert math.isclose(eq52(W.matrix), ml, rel_tol=1e-12)
    print(f"  {'binary RR':<24} {eps:7.3f} {ml:12.9f} {closed:11.9f} {eq52(W.matrix):14.9f}")

# %%
# Random ε-DP channels with two inputs stay below it
# --------------------------------------------------
#
# Three hundred random channels with four outputs; for each, its own ε (:func:`dpcap.dp_epsilon`)
# and eqs. 49–52. All comparisons hold up to rounding (1e-12 relative).

rng = np.random.default_rng(12)
sampled = []
for _ in range(300):
    W = rng.dirichlet(np.full(4, 0.7), size=2)  # two inputs, four outputs
    eps = dpcap.dp_epsilon(W)
    if eps > 3.0:
        continue
    ml = dpcap.max_leakage(W)
    # Eq. 51: the maximal leakage is log Σ_y max_x W[x, y], the leakage at the uniform prior.
    assert math.isclose(ml, math.log(W.max(axis=0).sum()), rel_tol=1e-12)
    assert math.isclose(dpcap.min_entropy_leakage([0.5, 0.5], W), ml, rel_tol=1e-12)
    # Any other prior leaks less (eq. 49 is a maximum over priors).
    prior = rng.dirichlet([1.0, 1.0])
    assert dpcap.min_entropy_leakage(prior, W) <= ml + 1e-12
    # Eq. 52: the binary channel that merges I = {y : W[0, y] <= W[1, y]} leaks the same.
    assert math.isclose(ml, eq52(W), rel_tol=1e-12)
    # Eq. 50: the bound for ε-DP channels with two inputs.
    assert ml <= math.log(2 * math.exp(eps) / (1 + math.exp(eps))) + 1e-12
    sampled.append((eps, ml, eq52(W)))
sampled_arr = np.array(sampled)
for eps, ml, merged in sampled[:3]:
    print(
        f"  {'random 2x4 channel':<24} {eps:7.3f} {ml:12.9f} "
        f"{float(bounds.min_entropy_leakage_bound(eps)):11.9f} {merged:14.9f}"
    )
print(f"  ... {len(sampled)} random channels with eps <= 3, all below the bound")

# %%
# Maximal leakage of k-ary randomized response
# --------------------------------------------
#
# With more inputs the leakage grows past the two-input bound: for k-ary randomized response it
# is :math:`\log(k e^\varepsilon / (e^\varepsilon + k - 1))`, which tends to
# :math:`\min(\varepsilon, \log k)` at the extremes.

eps = 1.0
print(f"\nk-ary randomized response at eps = {eps}: maximal leakage (nats)")
for k in (2, 3, 5, 10, 100):
    ml = dpcap.max_leakage(randomized_response(k, eps))
    closed = math.log(k * math.exp(eps) / (math.exp(eps) + k - 1))
    print(f"  k = {k:>3}: {ml:.9f}   closed form {closed:.9f}")
    assert math.isclose(ml, closed, rel_tol=1e-12)
    assert ml <= min(eps, math.log(k)) + 1e-15

# %%
# §4.2: information privacy implies 2ε-DP and bounds each output's leakage
# ------------------------------------------------------------------------
#
# Under a prior :math:`P_X`, the information-privacy level is the largest
# :math:`|\ln(P(x \mid y)/P(x))|`; the DP level of the channel is at most twice that (eq. 43),
# and the leakage :math:`H(X) - H(X \mid Y = y)` of every output is at most that level, in
# nats (eq. 46).


def entropy(p: np.ndarray) -> float:
    return float(-np.sum(p[p > 0] * np.log(p[p > 0])))


print("\n  prior                 eps_IP   eps-DP   <= 2 eps_IP   max_y H(X) - H(X|Y=y)")
for prior in ([1 / 3, 1 / 3, 1 / 3], [0.5, 0.3, 0.2], [0.7, 0.2, 0.1]):
    p = np.array(prior)
    W = randomized_response(3, 1.0).matrix
    joint = p[:, None] * W
    posterior = joint / joint.sum(axis=0)  # posterior[x, y] = P(x | y)
    eps_ip = float(np.max(np.abs(np.log(posterior / p[:, None]))))
    gain = max(entropy(p) - entropy(posterior[:, y]) for y in range(W.shape[1]))
    eps_dp = dpcap.dp_epsilon(W)
    print(f"  {np.round(p, 2)!s:<20} {eps_ip:8.5f} {eps_dp:8.5f} {2 * eps_ip:13.5f} {gain:21.5f}")
    assert eps_dp <= 2 * eps_ip * (1 + 1e-12)  # eq. 43
    assert gain <= eps_ip * (1 + 1e-12)  # eqs. 44-46

# %%
# The figure: every sampled channel below the curve of eq. 50
# ------------------------------------------------------------

fig, ax = plt.subplots(figsize=(6, 4))
eps_grid = np.linspace(0.0, 3.0, 200)
ax.plot(
    eps_grid,
    bounds.min_entropy_leakage_bound(eps_grid),
    "k-",
    label=r"$\log(2e^\varepsilon/(1+e^\varepsilon))$, eq. (50)",
)
ax.plot(
    sampled_arr[:, 0], sampled_arr[:, 1], ".", ms=4, alpha=0.6, label="random 2×4 ε-DP channels"
)
rr_eps = [0.25, 0.5, 1.0, 2.0]
rr = [dpcap.max_leakage(randomized_response(2, e)) for e in rr_eps]
ax.plot(rr_eps, rr, "o", mfc="none", label="binary randomized response")
ax.set_xlabel("ε (nats, dp_epsilon)")
ax.set_ylabel("maximal min-entropy leakage (nats)")
ax.set_title("Barthe & Köpf (Ünsal & Önen §4.3): leakage of ε-DP channels")
ax.legend(frameon=False, loc="lower right")
fig.tight_layout()
fig.savefig(OUT / "min_entropy_leakage.png", dpi=120)
