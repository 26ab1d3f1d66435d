r"""
Rényi DP of randomized response, its conversion to (ε, δ), and E_γ curves
=========================================================================

Hsu, Martinez, Bertran, Sapiro and Calmon, *A Survey on Statistical, Information and
Estimation-Theoretic Views on Privacy*, §IV, measure the distance between the output laws of
two neighbouring databases in two ways:

* Rényi DP (eq. 22): a mechanism is :math:`(\alpha, \gamma)`-RDP when
  :math:`R_\alpha(P_D \,\|\, P_{D'}) \le \gamma` for all neighbours, the Rényi divergence of
  eq. 7; α = ∞ is ε-DP (:func:`dpcap.renyi_dp`);
* the :math:`E_\gamma` (hockey-stick) divergence (eq. 6),
  :math:`E_\gamma(P \,\|\, Q) = \sup_A P(A) - \gamma Q(A) = \sum_y (P(y) - \gamma Q(y))_+`: a
  mechanism is (ε, δ)-DP exactly when :math:`E_{e^\varepsilon} \le \delta` for every ordered
  pair of neighbours, so the smallest δ is :math:`\delta(\varepsilon) = \max E_{e^\varepsilon}`
  (:func:`dpcap.hockey_stick`, :func:`dpcap.dp_delta_curve`).

§IV-D gives the conversion used in practice: an :math:`(\alpha, \gamma)`-RDP mechanism is
(ε, δ)-DP for every ε > γ with

.. math::

   \delta = e^{-(\alpha - 1)(\varepsilon - \gamma)},

"loose, and it does not hold for all ε ≥ 0". Minimising over α gives the best δ this conversion
offers; it is the moments accountant's :math:`\delta = \min_\lambda \exp(\alpha_m(\lambda) -
\lambda\varepsilon)` of §IV-C (eqs. 26–27), since the λ-th log-moment of the privacy loss is
:math:`\alpha_m(\lambda) = \lambda R_{\lambda + 1}`. Here both are compared with the exact
:math:`\delta(\varepsilon)`.

Binary randomized response at level :math:`\varepsilon_0` has rows :math:`(a, 1 - a)` and
:math:`(1 - a, a)` with :math:`a = e^{\varepsilon_0}/(1 + e^{\varepsilon_0})`, hence the closed
forms

.. math::

   R_\alpha = \frac{1}{\alpha - 1} \log\bigl(a^\alpha (1-a)^{1-\alpha}
   + (1-a)^\alpha a^{1-\alpha}\bigr), \qquad
   E_\gamma = \bigl(a - \gamma (1 - a)\bigr)_+ \quad (\gamma \ge 1).
"""

import itertools
import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap.mechanisms import randomized_response
from dpcap.plots import plot_privacy_profile

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)

eps0 = 1.0
W = randomized_response(2, eps0)
a = math.exp(eps0) / (1 + math.exp(eps0))


def rdp_closed(alpha: float) -> float:
    """R_α between the two rows of binary randomized response, in nats."""
    if math.isinf(alpha):
        return eps0
    if alpha == 1:
        return (2 * a - 1) * math.log(a / (1 - a))  # KL, α → 1
    s = a**alpha * (1 - a) ** (1 - alpha) + (1 - a) ** alpha * a ** (1 - alpha)
    return math.log(s) / (alpha - 1)


# %%
# Rényi DP of randomized response over α
# --------------------------------------
#
# From KL-DP (α = 1, :math:`\varepsilon_0 \tanh(\varepsilon_0/2)`) up to ε-DP (α = ∞): the
# profile is non-decreasing in α.

orders = [0.5, 1.0, 1.5, 2.0, 4.0, 8.0, 32.0, 128.0, math.inf]
print(f"binary randomized response at ε0 = {eps0}: Rényi DP (nats)")
print(f"  {'alpha':>6} {'renyi_dp':>14} {'closed form':>14}")
rdp = []
for alpha in orders:
    got = dpcap.renyi_dp(W, alpha)
    rdp.append(got)
    print(f"  {alpha:>6g} {got:14.10f} {rdp_closed(alpha):14.10f}")
    assert math.isclose(got, rdp_closed(alpha), rel_tol=1e-12), alpha
assert all(x <= y * (1 + 1e-12) for x, y in itertools.pairwise(rdp))
assert math.isclose(rdp[1], eps0 * math.tanh(eps0 / 2), rel_tol=1e-12)  # KL-DP
assert math.isclose(rdp[-1], eps0, rel_tol=1e-12)  # α = ∞: pure DP

# %%
# E_γ curves
# ----------
#
# The hockey-stick divergence between the two rows, for γ from 1 (total variation,
# :math:`\tanh(\varepsilon_0/2)`) to :math:`e^{\varepsilon_0}`, where it reaches 0. At
# :math:`\gamma = e^\varepsilon` it is the δ of (ε, δ)-DP.

gammas = np.linspace(1.0, math.exp(2.0), 120)
P, Q = W.matrix
levels = [0.5, 1.0, 2.0]
e_curves = {}
for e in levels:
    rows = randomized_response(2, e).matrix
    ae = math.exp(e) / (1 + math.exp(e))
    e_curves[e] = dpcap.hockey_stick(rows[0], rows[1], gammas)
    closed = np.maximum(ae - gammas * (1 - ae), 0.0)
    assert np.allclose(e_curves[e], closed, rtol=0, atol=1e-15), e
    # δ(ε) is E_{e^ε}, the pair being symmetric.
    eps_of_gamma = np.log(gammas)
    assert np.allclose(
        dpcap.dp_delta_curve(randomized_response(2, e), eps_of_gamma),
        e_curves[e],
        rtol=0,
        atol=1e-15,
    )
assert math.isclose(float(dpcap.hockey_stick(P, Q, 1.0)), math.tanh(eps0 / 2), rel_tol=1e-12)
assert float(dpcap.hockey_stick(P, Q, math.exp(eps0))) <= 1e-15
print(f"E_1 = TV = {float(dpcap.hockey_stick(P, Q, 1.0)):.12f}, tanh(ε0/2) = {math.tanh(0.5):.12f}")

# %%
# From RDP to (ε, δ): the survey's conversion against the exact δ(ε)
# -------------------------------------------------------------------
#
# For each ε, the best α of the conversion, the same number from the moments accountant, and
# the exact :math:`\delta(\varepsilon)`. A second mechanism, 4-ary randomized response at the
# same ε-DP level, shows the same picture. (A truncated geometric mechanism would give exactly
# the binary curve: each pair of neighbouring counts reduces to binary randomized response.)

alphas = np.concatenate([np.geomspace(1.001, 2.0, 60), np.geomspace(2.0, 400.0, 140)[1:]])
eps_grid = np.linspace(0.0, 1.2, 49)


def rdp_to_dp(mech: object, eps_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """min over α of e^{−(α−1)(ε−γ(α))}, and the moments accountant's min_λ e^{α_m(λ) − λε}."""
    gamma = np.array([dpcap.renyi_dp(mech, float(al)) for al in alphas])
    conv = np.exp(-(alphas[:, None] - 1) * (eps_values[None, :] - gamma[:, None]))
    lam = alphas - 1
    moments = np.exp(lam[:, None] * gamma[:, None] - lam[:, None] * eps_values[None, :])
    return np.minimum(conv.min(axis=0), 1.0), np.minimum(moments.min(axis=0), 1.0)


rr4 = randomized_response(4, eps0)
profiles = {}
for name, mech in (("binary RR", W), ("4-ary RR", rr4)):
    exact = dpcap.dp_delta_curve(mech, eps_grid)
    conv, moments = rdp_to_dp(mech, eps_grid)
    profiles[name] = (exact, conv)
    # The two forms of the conversion are one formula (λ = α − 1).
    assert np.allclose(conv, moments, rtol=1e-12, atol=0), name
    # The conversion is valid: never below the exact δ(ε) (rounding of the exponent: 1e-12).
    assert np.all(exact <= conv * (1 + 1e-12)), name
    # Loose: at ε = ε0 the mechanism is pure DP (δ = 0), the conversion still asks for δ > 0.
    k0 = int(np.argmin(np.abs(eps_grid - eps0)))
    assert exact[k0] <= 1e-15
    assert conv[k0] > 1e-3, name
    print(f"\n{name}: ε-DP level {dpcap.dp_epsilon(mech):.6f}")
    print(f"  {'eps':>5} {'exact delta':>12} {'RDP -> (eps, delta)':>20}")
    for k in range(0, len(eps_grid), 8):
        print(f"  {eps_grid[k]:5.2f} {exact[k]:12.6f} {conv[k]:20.6f}")
rr_exact = profiles["binary RR"][0]
closed_delta = np.maximum(a - np.exp(eps_grid) * (1 - a), 0.0)
assert np.allclose(rr_exact, closed_delta, rtol=0, atol=1e-15)
closed_rr4 = np.maximum(math.exp(eps0) - np.exp(eps_grid), 0.0) / (math.exp(eps0) + 3)
assert np.allclose(profiles["4-ary RR"][0], closed_rr4, rtol=0, atol=1e-15)

# %%
# The figure: E_γ curves (left), exact δ(ε) against the RDP conversion (right)
# -----------------------------------------------------------------------------

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
for e in levels:
    ax1.plot(gammas, e_curves[e], lw=2, label=f"randomized response, ε0 = {e}")
    ax1.axvline(math.exp(e), color="0.7", lw=0.8, ls=":")
ax1.set_xlabel("γ")
ax1.set_ylabel("E_γ(P ‖ Q) = Σ_y (P(y) − γ Q(y))₊")
ax1.set_title("Hockey-stick divergence of the two rows (Hsu et al., eq. 6)")
ax1.title.set_fontsize(10)
ax1.legend(fontsize=8)
plot_privacy_profile(
    eps_grid,
    {
        "binary RR: exact δ(ε)": profiles["binary RR"][0],
        "binary RR: from RDP, min over α": profiles["binary RR"][1],
        "4-ary RR: exact δ(ε)": profiles["4-ary RR"][0],
        "4-ary RR: from RDP, min over α": profiles["4-ary RR"][1],
    },
    ax=ax2,
)
ax2.set_title(f"(ε, δ) from Rényi DP is loose (ε-DP level {eps0})")
ax2.title.set_fontsize(10)
fig.tight_layout()
fig.savefig(OUT / "hsu_renyi_dp_conversion.png", dpi=120)
