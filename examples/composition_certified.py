r"""
Composition, certified: k-fold randomized response and the worst-pair trap
==========================================================================

Releasing a mechanism :math:`k` times on one database adds independent privacy losses, so the
composed :math:`\delta(\varepsilon)` is the hockey-stick divergence of a sum of :math:`k`
losses, maximised over the neighbour pairs (Dong, Roth & Su 2022). dpcap composes the whole
finite mechanism over its true neighbour relation and returns a bracket that holds in floating
point (:func:`dpcap.composed_delta_curve`, :func:`dpcap.composed_epsilon`).

This example checks the brackets against the binomial closed form of k-fold binary randomized
response, compares the exact :math:`\varepsilon(\delta)` with basic composition, the zCDP route
and the MI-DP composition bound of Cuff & Yu (Corollary 2, with Lemma 2's conversion to
:math:`(0, \delta)`-DP), and shows the *worst-pair trap*: for clamped discrete Gaussian noise,
which pair of neighbouring inputs is worst changes with ε, so no pair of pmfs chosen by hand
gives the curve.
"""

import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap.mechanisms import discrete_gaussian, randomized_response

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)

# %%
# k-fold binary randomized response against the binomial sum
# ------------------------------------------------------------
#
# One release has loss :math:`+\varepsilon_0` with probability :math:`p = e^{\varepsilon_0}/
# (1 + e^{\varepsilon_0})` and :math:`-\varepsilon_0` otherwise, so after :math:`k` releases
# :math:`\delta(\varepsilon) = \sum_{i} \binom{k}{i} p^i (1-p)^{k-i}
# (1 - e^{\varepsilon - (2i - k)\varepsilon_0})_+`.
eps0, k = 0.5, 40
p = math.exp(eps0) / (1 + math.exp(eps0))


def binomial_delta(eps: float) -> float:
    terms = [
        math.comb(k, i) * p**i * (1 - p) ** (k - i) * -math.expm1(eps - (2 * i - k) * eps0)
        for i in range(k + 1)
        if (2 * i - k) * eps0 > eps
    ]
    return math.fsum(terms)


grid = np.linspace(0.0, 15.0, 31)
curve = dpcap.composed_delta_curve([(randomized_response(2, eps0), k)], grid)
closed = np.array([binomial_delta(float(e)) for e in grid])
print(f"{k}-fold binary RR at eps0 = {eps0}: {curve.method}, widest bracket {curve.gap.max():.1e}")
assert np.all(curve.lower <= closed + 1e-15)
assert np.all(closed <= curve.upper + 1e-15)

# %%
# ε at δ = 1e-6 over k: exact, basic composition, zCDP, MI-DP
# ------------------------------------------------------------
#
# Basic composition gives :math:`k\varepsilon_0`; zCDP gives :math:`\rho k + 2\sqrt{\rho k
# \log(1/\delta)}` with :math:`\rho = \varepsilon_0^2/2` (Bun & Steinke 2016). MI-DP composes
# by summing (Cuff & Yu, Corollary 2), and an ε-MI-DP mechanism is
# :math:`(0, \delta')`-DP with :math:`\delta' = 1 - 2h^{-1}(\log 2 - \varepsilon)` (Lemma 2):
# a bound on :math:`\delta(0)`, which the exact curve gives directly.
delta = 1e-6
ks = np.array([1, 2, 5, 10, 20, 50, 100])
exact = np.array(
    [dpcap.composed_epsilon([(randomized_response(2, eps0), int(j))], delta).upper for j in ks]
)
basic = ks * eps0
rho = eps0**2 / 2
zcdp = rho * ks + 2 * np.sqrt(rho * ks * math.log(1 / delta))
assert np.all(exact <= basic + 1e-9)
assert np.all(exact <= zcdp)
midp_one = dpcap.midp(randomized_response(2, eps0)).upper
print(f"\neps at delta = {delta}, binary RR eps0 = {eps0}; MI-DP of one release {midp_one:.6f}")
print(
    f"  {'k':>4} {'exact':>10} {'basic':>8} {'zCDP':>8} {'delta(0) exact':>15} {'MI-DP bound':>12}"
)
for j, e, b, z in zip(ks, exact, basic, zcdp, strict=True):
    level = float(dpcap.bounds.midp_composition([midp_one] * int(j)))
    bound = float(dpcap.bounds.delta_from_midp(level)) if level < math.log(2) else 1.0
    tv = dpcap.composed_delta([(randomized_response(2, eps0), int(j))], 0.0)
    assert tv.upper <= bound + 1e-12  # Lemma 2 holds, and the exact value is below it
    print(f"  {j:4d} {e:10.4f} {b:8.2f} {z:8.2f} {tv.upper:15.6f} {bound:12.6f}")

# %%
# The worst-pair trap
# -------------------
#
# A clamped discrete Gaussian on {0, …, 6} with σ = 2: the end columns hold the tails, so the
# privacy loss of the pairs at the ends differs from the middle pairs'. After 10 releases, the
# pair whose δ is largest depends on ε, and the middle pair, the natural choice of a pair of
# pmfs written by hand, understates δ: its pure-DP level is lower, so its δ reaches 0 where the
# others' does not. (The clamped ends lie off the loss lattice; dpcap gives each a coordinate
# of its own, so the composition stays exact.)
noise = discrete_gaussian(6, 2.0)
levels = np.linspace(0.0, 12.0, 49)
worst = dpcap.composed_delta_curve([(noise, 10)], levels)
print(f"\n10-fold clamped discrete Gaussian: {worst.method}, widest bracket {worst.gap.max():.1e}")
pairs = sorted({tuple(int(v) for v in p) for p in worst.pair.tolist()})
print(f"  pairs that attain the maximum somewhere on the grid: {pairs}")
assert len(pairs) >= 2
per_pair = {
    pair: dpcap.composed_delta_curve([(noise, 10)], levels, neighbors=[list(pair)]).upper
    for pair in [(0, 1), (2, 3), (5, 6)]
}
middle = per_pair[(2, 3)]
shown = middle > 1e-12
ratio = float(np.max(worst.upper[shown] / middle[shown]))
gone = levels[(middle == 0.0) & (worst.lower > 0.0)]
print(f"  the middle pair (2, 3) alone understates delta by up to a factor {ratio:.2f}")
print(f"  and gives delta = 0 from eps = {gone.min():.2f} on, where the max is still positive")
assert ratio > 1.2
assert gone.size

# %%
# The figures
# -----------
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
left.plot(ks, basic, "k:", label="basic composition kε₀")
left.plot(ks, zcdp, "C0--", label="via zCDP")
left.plot(ks, exact, "C3o-", label="exact (dpcap, certified)")
left.set_xscale("log")
left.set_xlabel("releases k")
left.set_ylabel("ε at δ = 1e-6 (nats)")
left.set_title(f"binary randomized response, ε₀ = {eps0}")
left.legend(fontsize=8)
for pair, values in per_pair.items():
    right.semilogy(levels, values, "--", label=f"pair {pair} alone")
right.semilogy(levels, worst.upper, "k-", lw=2, label="max over all pairs (dpcap)")
right.set_xlabel("ε (nats)")
right.set_ylabel("δ(ε) after 10 releases")
right.set_title("clamped discrete Gaussian, σ = 2, on {0..6}")
right.set_ylim(1e-16, 2)
right.legend(fontsize=8)
fig.tight_layout()
fig.savefig(OUT / "composition_certified.png", dpi=120)
