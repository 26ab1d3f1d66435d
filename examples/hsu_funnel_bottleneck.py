r"""
Privacy funnel, information bottleneck and perfect privacy on binary data
=========================================================================

Hsu, Martinez, Bertran, Sapiro and Calmon, *A Survey on Statistical, Information and
Estimation-Theoretic Views on Privacy*, §III-B, consider a Markov chain :math:`S - X - Y`: a
private attribute S, the data X, and a mechanism :math:`P_{Y \mid X}` that releases Y. The
privacy funnel (eq. 12) keeps the utility :math:`I(X; Y)` above R while leaking as little of S
as possible; the information bottleneck (Tishby et al.) keeps as much of S as possible within a
rate R. Together they bound the achievable set of pairs :math:`(I(X; Y), I(S; Y))`:

.. math::

   \mathrm{PF}(R) = \min_{I(X;Y) \ge R} I(S; Y), \qquad
   \mathrm{IB}(R) = \max_{I(X;Y) \le R} I(S; Y).

On the doubly symmetric binary source, S a fair bit and :math:`X = S \oplus N` with
:math:`N \sim \mathrm{Bernoulli}(p)`, both curves have closed forms:

* Mrs. Gerber's lemma (Wyner and Ziv, 1973): if :math:`H(X \mid Y) \ge v` then
  :math:`H(S \mid Y) \ge h(p \star h^{-1}(v))`, with :math:`a \star b = a(1-b) + b(1-a)`; a
  binary symmetric channel from X to Y attains it, so

  .. math::

     \mathrm{IB}(R) = \ln 2 - h\bigl(p \star h^{-1}(\ln 2 - R)\bigr);

* the funnel is the chord :math:`\mathrm{PF}(R) = R\, I(S; X) / H(X)`, attained by erasing X
  with some probability: the region is convex and the chord joins its two corners, and dpcap's
  certified lower ends show that nothing lies below it.

Perfect privacy (Calmon, Makhdoumi and Médard, 2015; :func:`dpcap.perfect_privacy`) asks for
the largest utility :math:`g_0` with :math:`I(S; Y) = 0`: zero on this source, positive as soon
as :math:`P_{S \mid X}` has a null space.
"""

import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap import bounds
from dpcap.plots import plot_privacy_region

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)
LN2 = math.log(2)
h = bounds.binary_entropy  # in nats


def star(a: float, b: float) -> float:
    """Binary convolution a ⋆ b = a(1 − b) + b(1 − a): the crossover of two BSCs in a row."""
    return a * (1 - b) + b * (1 - a)


def ib_closed(R: float, p: float) -> float:
    """Mrs. Gerber's lemma: IB(R) = ln 2 − h(p ⋆ h⁻¹(ln 2 − R)) nats."""
    return LN2 - h(star(p, bounds.binary_entropy_inverse(max(LN2 - R, 0.0))))


# %%
# The doubly symmetric binary source
# ----------------------------------
#
# ``joint[s, x]`` is :math:`P(S = s, X = x)`. Both curves are computed on 11 utilities
# :math:`R \in [0, H(X)]`, each point with a certified bracket (default gap 1e-7 nats).

p = 0.1
joint = 0.5 * np.array([[1 - p, p], [p, 1 - p]])
i_sx = LN2 - h(p)  # I(S; X) in nats
pf = dpcap.privacy_funnel_curve(joint, n_points=11)
ib = dpcap.information_bottleneck_curve(joint, n_points=11)

print(f"DSBS(p = {p}): H(X) = ln 2, I(S;X) = ln 2 − h(p) = {i_sx:.9f} nats")
print(f"  {'R':>8} {'PF dpcap':>12} {'R·I(S;X)/H(X)':>14} {'IB dpcap':>12} {'MGL closed':>12}")
for k, R in enumerate(pf.R):
    chord = R * i_sx / LN2
    mgl = ib_closed(R, p)
    print(f"  {R:8.5f} {pf.value[k]:12.9f} {chord:14.9f} {ib.value[k]:12.9f} {mgl:12.9f}")
    # Each closed form lies in its certified bracket (1e-12: the closed forms' rounding).
    assert pf.lower[k] - 1e-12 <= chord <= pf.upper[k] + 1e-12, R
    assert ib.lower[k] - 1e-12 <= mgl <= ib.upper[k] + 1e-12, R
    # Every returned mechanism is feasible and lands in the region.
    assert pf.utility[k] >= R - 1e-12
    assert ib.utility[k] <= R + 1e-12
    assert pf.leakage[k] <= ib.leakage[k] + 1e-7
assert np.all(pf.upper - pf.lower <= 1e-7)
assert np.all(ib.upper - ib.lower <= 1e-7)
# Both ends: (0, 0) and (H(X), I(S;X)).
assert pf.value[0] == ib.value[0] == 0.0
assert math.isclose(pf.value[-1], i_sx, rel_tol=1e-9)
assert math.isclose(ib.value[-1], i_sx, rel_tol=1e-9)

# %%
# The mechanisms behind the closed forms
# --------------------------------------
#
# Erasing X with probability :math:`1 - R/\ln 2` gives :math:`I(X; Y) = R` and
# :math:`I(S; Y) = R\, I(S;X)/\ln 2`; a binary symmetric channel of crossover z with
# :math:`h(z) = \ln 2 - R` gives :math:`I(X;Y) = R` and the bottleneck value.

R = 0.3
keep = R / LN2
erase = np.array([[keep, 0.0, 1 - keep], [0.0, keep, 1 - keep]])  # outputs 0, 1, erased
z = bounds.binary_entropy_inverse(LN2 - R)
bsc = np.array([[1 - z, z], [z, 1 - z]])
p_x = joint.sum(axis=0)
p_s = joint.sum(axis=1)
for name, mech, target in (("erasure", erase, R * i_sx / LN2), ("BSC", bsc, ib_closed(R, p))):
    utility = dpcap.mutual_information(p_x, mech)
    leakage = dpcap.mutual_information(p_s, (joint / p_s[:, None]) @ mech)
    print(f"  {name:<8} at R = {R}: I(X;Y) = {utility:.9f}, I(S;Y) = {leakage:.9f}")
    assert math.isclose(utility, R, rel_tol=1e-9)
    assert math.isclose(leakage, target, rel_tol=1e-9)
pf_point = dpcap.privacy_funnel(joint, R)
ib_point = dpcap.information_bottleneck(joint, R)
assert pf_point.lower - 1e-12 <= R * i_sx / LN2 <= pf_point.upper + 1e-12
assert ib_point.lower - 1e-12 <= ib_closed(R, p) <= ib_point.upper + 1e-12

# %%
# Perfect privacy
# ---------------
#
# On the DSBS, :math:`P_{S \mid X}` is invertible: any Y independent of S is independent of X,
# and :math:`g_0 = 0`. With two bits :math:`X = (X_1, X_2)` and S their parity,
# :math:`P_{S \mid X}` has a two-dimensional null space: releasing one of the bits tells nothing
# about the parity, and that is the best one can do, :math:`g_0 = \ln 2`.

dsbs = dpcap.perfect_privacy(joint)
rank = dict(dsbs.details)["rank"]
print(f"\nperfect privacy, DSBS: g0 = {dsbs.value} (rank of P(S|X): {rank:g})")
assert dsbs.value == 0.0
assert dsbs.upper == 0.0

parity = np.zeros((2, 4))  # X = (x1, x2) uniform, in C order; S = x1 XOR x2
for x1 in (0, 1):
    for x2 in (0, 1):
        parity[x1 ^ x2, 2 * x1 + x2] = 0.25
pp = dpcap.perfect_privacy(parity)
print(f"perfect privacy, parity of two bits: g0 = {pp.value:.12f} (ln 2 = {LN2:.12f})")
print(f"  mechanism P(Y | X), rows x = 00, 01, 10, 11:\n{pp.mechanism}")
# The vertices of {q : P(S|X) q = P_S} are the laws uniform on one even and one odd x, each of
# entropy ln 2: g0 = H(X) − ln 2 = ln 2 (Rassouli & Gündüz's LP, solved exactly here).
assert pp.lower - 1e-12 <= LN2 <= pp.upper + 1e-12
assert pp.leakage_achieved <= 1e-12
assert math.isclose(pp.utility_achieved, LN2, rel_tol=1e-12)

# %%
# The achievable region
# ---------------------
#
# :func:`dpcap.plots.plot_privacy_region` shades the region between the two curves; the
# closed forms are drawn on top.

fig, ax = plt.subplots(figsize=(6, 4.5))
plot_privacy_region(pf, ib, ax=ax)
fine = np.linspace(0.0, LN2, 200)
ax.plot(fine, [ib_closed(r, p) for r in fine], "k:", lw=1.5, label="ln 2 − h(p ⋆ h⁻¹(ln 2 − R))")
ax.plot(fine, fine * i_sx / LN2, "k-.", lw=1, label="R·I(S;X)/H(X) (erasure)")
ax.set_title(f"Doubly symmetric binary source, p = {p}: PF and IB (Hsu et al. §III-B)")
ax.title.set_fontsize(10)
ax.legend(loc="upper left", frameon=False, fontsize=8)
fig.tight_layout()
fig.savefig(OUT / "hsu_funnel_bottleneck.png", dpi=120)
