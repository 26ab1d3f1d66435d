r"""
Mir's risk–distortion function and the exponential mechanism
============================================================

D. J. Mir, *Information-theoretic foundations of differential privacy* (FPS 2012), defines the
privacy risk of a mechanism as the mutual information :math:`I(X; O)` between database and
output and asks for the least risk at a given expected distortion (his eq. 4):

.. math::

   R(D) = \min \{ I(X; O) : \mathbb{E}\,\mathrm{dist}(X, O) \le D \}.

Theorem 3 (after Tishby et al.): the minimiser is the exponential mechanism
:math:`\pi(o \mid x) \propto \pi(o)\, e^{-\varepsilon\, \mathrm{dist}(x, o)}`, whose parameter
is the slope of the curve, :math:`dR/dD = -\varepsilon`. Theorem 4 (with McSherry–Talwar's
Theorem 1): that mechanism is :math:`2\varepsilon\Delta\mathrm{dist}`-differentially private.
Mir's Figure 1 draws :math:`R(D)` with its tangent lines of slope :math:`-\varepsilon`.

Under Hamming distortion (:math:`\Delta\mathrm{dist} = 1`) a uniform source on m symbols has the
closed form (the m-ary form of the binary case in Cover & Thomas, *Elements of Information
Theory*, §10.3)

.. math::

   R(D) = \log m - h(D) - D \log(m - 1), \qquad 0 \le D \le (m - 1)/m,

and slope :math:`\varepsilon = \log((1 - D)(m - 1)/D)`: the optimal mechanism is m-ary
randomized response, whose DP level is exactly ε, half of Theorem 4's bound. A non-uniform
source needs the factor 2: for a Bernoulli(p) source :math:`R(D) = h(p) - h(D)` (Cover & Thomas,
Theorem 10.3.1), the slope is still :math:`\log((1 - D)/D)`, but the exponential mechanism's
base measure is no longer uniform and its DP level lies strictly between ε and 2ε.
"""

import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap.plots import plot_rate_distortion

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)


def h(t: float) -> float:
    """Binary entropy in nats."""
    return 0.0 if t in (0.0, 1.0) else -t * math.log(t) - (1 - t) * math.log(1 - t)


# Each point's R(D) is certified within tol = 1e-9 nats (the default); the slope and the DP
# level are read off a mechanism found to that accuracy, so we allow them 1e-6.
TOL_R, TOL_SLOPE = 1e-8, 1e-6

# %%
# A uniform ternary source under Hamming distortion
# -------------------------------------------------
#
# The whole curve (:func:`dpcap.rate_distortion_curve`) against the closed form; at each point
# the slope and the DP level of the optimal mechanism against :math:`\log((1 - D)(m - 1)/D)`.
m = 3
prior = np.full(m, 1.0 / m)
hamming = 1.0 - np.eye(m)
curve = dpcap.rate_distortion_curve(prior, hamming, n_points=9)

print(f"Uniform source on {m} symbols, Hamming distortion (Mir, Thm 3-4)")
print(
    f"  {'D':>7} {'R(D) dpcap':>11} {'closed form':>11} {'slope s':>9} {'log((1-D)(m-1)/D)':>18}"
    f" {'DP level':>9} {'2s (Thm 4)':>10}"
)
for point in curve:
    D = point.distortion_achieved
    closed = math.log(m) - h(D) - D * math.log(m - 1)
    assert point.lower - TOL_R <= closed <= point.upper + TOL_R, D
    if 0.0 < D < (m - 1) / m:
        eps = math.log((1 - D) * (m - 1) / D)
        assert math.isclose(point.slope, eps, rel_tol=0, abs_tol=TOL_SLOPE), D
        # The optimal mechanism is m-ary randomized response: its DP level is the slope itself.
        assert math.isclose(point.dp_level, eps, rel_tol=0, abs_tol=TOL_SLOPE), D
        assert point.dp_level <= 2 * point.slope * (1 + 1e-12)  # Theorem 4, Δdist = 1
        W_rr = np.full((m, m), D / (m - 1))
        np.fill_diagonal(W_rr, 1 - D)
        assert np.allclose(point.mechanism, W_rr, rtol=0, atol=TOL_SLOPE)
    else:
        eps = math.inf if D == 0.0 else 0.0
    print(
        f"  {D:7.4f} {point.value:11.8f} {closed:11.8f} {point.slope:9.5f} {eps:18.5f}"
        f" {point.dp_level:9.5f} {2 * point.slope:10.5f}"
    )
assert math.isclose(curve.value[0], math.log(m), rel_tol=1e-12)  # R(0) = H(X) = log m
assert curve.value[-1] == 0.0  # R = 0 from D = (m − 1)/m on
assert math.isclose(curve.D[-1], (m - 1) / m)

# %%
# One budget on a fair bit
# ------------------------
#
# :math:`R(D) = \log 2 - h(D)`, and the optimal mechanism is binary randomized response at
# :math:`\varepsilon = \log((1 - D)/D)`.
D = 0.1
bit = dpcap.rate_distortion([0.5, 0.5], [[0, 1], [1, 0]], D)
print(
    f"\nFair bit at D = {D}: R(D) = {bit.value:.9f} vs log 2 - h(D) = {math.log(2) - h(D):.9f}; "
    f"slope {bit.slope:.6f} vs log 9 = {math.log(9):.6f}"
)
assert bit.lower - TOL_R <= math.log(2) - h(D) <= bit.upper + TOL_R
assert math.isclose(bit.slope, math.log(9), abs_tol=TOL_SLOPE)
assert math.isclose(bit.dp_level, math.log(9), abs_tol=TOL_SLOPE)

# %%
# A biased bit: Theorem 4 needs its factor 2
# ------------------------------------------
#
# Same slope as for a fair bit, but the DP level of the optimal mechanism exceeds it.
p = 0.2
print(f"\nBernoulli({p}) source, Hamming distortion: R(D) = h(p) - h(D) for D <= p")
print(f"  {'D':>5} {'R(D) dpcap':>11} {'h(p)-h(D)':>11} {'slope s':>8} {'DP level':>9} {'2s':>8}")
for D in (0.05, 0.1, 0.15):
    res = dpcap.rate_distortion([1 - p, p], [[0, 1], [1, 0]], D)
    closed = h(p) - h(D)
    s = math.log((1 - D) / D)
    print(
        f"  {D:5.2f} {res.value:11.8f} {closed:11.8f} {res.slope:8.5f} {res.dp_level:9.5f}"
        f" {2 * res.slope:8.5f}"
    )
    assert res.lower - TOL_R <= closed <= res.upper + TOL_R
    assert math.isclose(res.slope, s, abs_tol=TOL_SLOPE)
    assert s + TOL_SLOPE < res.dp_level <= 2 * s + TOL_SLOPE

# %%
# Mir's Figure 1: the convex curve and its tangents of slope −ε
# -------------------------------------------------------------
fig, ax = plt.subplots(figsize=(6, 4))
plot_rate_distortion(curve, ax=ax)
grid = np.linspace(0.0, (m - 1) / m, 101)
ax.plot(
    grid,
    [math.log(m) - h(t) - t * math.log(m - 1) for t in grid],
    "k:",
    label="log m − h(D) − D log(m−1)",
)
ax.set_title(f"Mir, Fig. 1: risk–distortion of a uniform {m}-ary source")
ax.legend(loc="upper right", frameon=False)
fig.tight_layout()
fig.savefig(OUT / "mir_risk_distortion.png", dpi=120)
