"""Rényi capacity of the binary symmetric channel: from Shannon (α = 1) to ε-DP (α = ∞).

The article *Differential Privacy and Information Theory: How to Secure Data with a Broken
Wifi Connection* (2022) measures privacy by the Rényi channel capacity ``C_α = sup_P I_α``,
non-decreasing in α, and works out the binary symmetric channel ``W = [[1−p, p], [p, 1−p]]``
(section "Protection against B… Outcomes"):

* the **radius** (Sibson's α-capacity, ``min_Q max_x D_α(W_x ‖ Q)``) is
  ``log 2 − H_α(p)`` with the binary Rényi entropy ``H_α(p) = log(p^α + (1−p)^α) / (1−α)``;
* the **diameter** ``max_{x,x'} D_α(W_x ‖ W_x')`` is
  ``log(p^α (1−p)^{1−α} + (1−p)^α p^{1−α}) / (α−1)``;
* at α = ∞ the diameter is the ε-DP level ``log((1−p)/p)`` (section "Connecting
  Differential Privacy to Shannon"), while the radius is ``log(2 max(p, 1−p))`` (section
  "Sibson's definition"), and their ratio tends to 2 as ε → 0.

Derivation of the radius. Sibson's α-information of a prior P is
``I_α^S(P, W) = α/(α−1) · log Σ_y (Σ_x P(x) W(y|x)^α)^{1/α}``. The BSC is symmetric under
swapping both labels and ``I_α^S`` is quasi-concave in P, so the uniform prior attains the
maximum; there each output contributes ``(½(p^α + (1−p)^α))^{1/α}``, and the sum of the two
gives ``log 2 − H_α(p)``. α → 1 gives Shannon's ``log 2 − h(p)``, α → ∞ gives
``log 2 + log max(p, 1−p) = log Σ_y max_x W(y|x)``.

Run it with ``python examples/renyi_capacity_bsc.py``; the figure goes to
``$DPCAP_EXAMPLES_OUT`` (default ``out/``).
"""

# %%
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

import dpcap
from dpcap.mechanisms import binary_symmetric

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


# %% The profile α ↦ C_α beside the closed forms
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

# %% α = ∞: the two ends of the article's sandwich radius ≤ C_∞ ≤ diameter
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

# %% The figure: the radius C_α with the diameter band above it
out = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # the `plot` extra is optional
    print("  (matplotlib not installed: no figure)")
else:
    from dpcap.plots import plot_renyi_profile

    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    fine = np.geomspace(0.25, 256.0, 200)
    plot_renyi_profile(prof, ax=ax)
    ax.plot(fine, [radius(a) for a in fine], "k:", label="log 2 − H_α(p)")
    ax.axhline(math.log(2 * (1 - p)), color="C2", ls="--", lw=1, label="C_∞ = log 2(1−p)")
    ax.axhline(eps, color="C3", ls="--", lw=1, label="ε = log((1−p)/p)")
    ax.set_title(f"Rényi capacity of the BSC, p = {p}")
    ax.set_ylim(0, 1.45 * eps)
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    fig.tight_layout()
    fig.savefig(out / "renyi_capacity_bsc.png", dpi=120)
    print(f"  figure: {out / 'renyi_capacity_bsc.png'}")
