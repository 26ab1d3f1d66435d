r"""
The Cuff–Yu sandwich on binary randomized response
==================================================

P. Cuff and L. Yu, *Differential Privacy as a Mutual Information Constraint* (CCS 2016), define
the mutual-information differential privacy (MI-DP) of a mechanism as
:math:`\sup_{i, P_{X^n}} I(X_i; Y \mid X^{-i})` (their Definition 2) and prove (Theorem 1,
eq. 20) the chain

.. math::

   \varepsilon\text{-DP} \;\succeq_{(A)}\; \text{KL-DP} \;\succeq_{(B)}\; \text{MI-DP}
   \;\succeq_{(C)}\; (\delta)\text{-DP} \;=_{(D)}\; (\varepsilon, \delta)\text{-DP},

with the reverse step under a cardinality bound (Lemma 3). Each arrow has a number attached:

* Lemma 1 (A, B): ε-DP implies KL-DP :math:`\le \varepsilon\tanh(\varepsilon/2) \le
  \min\{\varepsilon, \varepsilon^2\}` (Property 1, eqs. 10–11), and MI-DP ≤ KL-DP;
* Lemma 2 (C): ε-MI-DP implies (0, δ′)-DP with :math:`\delta' = 1 - 2h^{-1}(\ln 2 -
  \varepsilon) \le \sqrt{2\varepsilon}` (eqs. 27–28);
* Property 3 (D): ε-DP implies :math:`(0, 1 - 2/(e^\varepsilon + 1))`-DP, the tightest
  trade-off (eq. 13);
* Lemma 3: (δ)-DP implies ε′-MI-DP with :math:`\varepsilon' = 2h(\delta) + 2\delta \ln
  \min\{|\mathcal{Y}|, \max_i |\mathcal{X}_i| + 1\}` (eq. 35).

Binary randomized response is the extremal case for most of them. Its rows are
:math:`(e^\varepsilon, 1)/(1 + e^\varepsilon)`: a binary symmetric channel with crossover
:math:`q = 1/(1 + e^\varepsilon)` and total variation :math:`1 - 2q = \tanh(\varepsilon/2)`
between the rows, so

* KL-DP :math:`= \varepsilon\tanh(\varepsilon/2)` exactly (Property 1 is tight "with binary
  distributions");
* MI-DP is the capacity of that channel, :math:`\ln 2 - h(q)` nats (Appendix C, eq. 98);
* Lemma 2 maps that MI-DP back to exactly its total variation :math:`\tanh(\varepsilon/2)`
  (the binary symmetric channel is the extreme case in the proof of Lemma 2), which is also
  the δ of Property 3 at ε′ = 0.
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
TOL = 1e-9  # the certified gap asked of every capacity (MI-DP) computation, in nats
eps_grid = np.round(np.linspace(0.05, 3.0, 60), 10)


def bsc_capacity(tv: float) -> float:
    """ln 2 − h((1 − tv)/2) nats (Cuff & Yu eq. 98), in a form without cancellation."""
    return 0.5 * ((1 + tv) * math.log1p(tv) + (1 - tv) * math.log1p(-tv))


# %%
# Every rung of the ladder, computed and in closed form
# -----------------------------------------------------
#
# For each ε, dpcap computes the pure DP level, the KL-DP level, the certified MI-DP and the
# total variation; :mod:`dpcap.bounds` evaluates the paper's conversions.

rows = []
for eps in eps_grid:
    W = randomized_response(2, eps)
    tv = math.tanh(eps / 2)  # total variation between the two rows, 1 − 2q
    res = dpcap.midp(W, tol=TOL)
    rows.append(
        {
            "eps": eps,
            "dp": dpcap.dp_epsilon(W),
            "kl": dpcap.kl_dp(W),
            "midp": res.value,
            "midp_lower": res.lower,
            "tv": dpcap.dp_delta(W, 0.0),
            "delta_prime": bounds.delta_from_midp(res.value),
            "delta_prop3": bounds.tradeoff(eps, 0.0, 0.0),
            "lemma3": bounds.midp_from_delta(tv, n_outputs=2, max_entry_size=2),
            # closed forms, straight from the paper
            "kl_closed": eps * tv,
            "midp_closed": bsc_capacity(tv),
            "midp_closed_h": math.log(2) - bounds.binary_entropy(1 / (1 + math.exp(eps))),
            "tv_closed": tv,
            "lemma3_closed": 2 * bounds.binary_entropy(tv) + 2 * tv * math.log(2),
        }
    )

print("Binary randomized response: the Cuff–Yu ladder (nats)")
head = ("ε", "KL-DP", "ε·tanh(ε/2)", "MI-DP", "ln2−h(q)", "δ′ (L.2)", "tanh(ε/2)", "ε′ (L.3)")
print("  " + " ".join(f"{h:>11}" for h in head))
for r in rows[::10]:
    vals = (
        r["eps"],
        r["kl"],
        r["kl_closed"],
        r["midp"],
        r["midp_closed"],
        r["delta_prime"],
        r["tv_closed"],
        r["lemma3"],
    )
    print("  " + " ".join(f"{v:11.7f}" for v in vals))

# %%
# The closed forms
# ----------------
#
# Every value equals the paper's closed form, up to rounding (1e-12 relative) or, for the
# MI-DP, up to the certified gap ``TOL`` of the capacity solver.

for r in rows:
    eps, tv = r["eps"], r["tv_closed"]
    assert math.isclose(r["dp"], eps, rel_tol=1e-12), "pure DP level is ε"
    # Property 1, eq. 11: tight for binary distributions.
    assert math.isclose(r["kl"], r["kl_closed"], rel_tol=1e-12), "KL-DP = ε·tanh(ε/2)"
    assert math.isclose(r["kl_closed"], bounds.kl_dp_bound(eps), rel_tol=1e-12)
    # Appendix C, eq. 98: MI-DP of a one-entry database is the capacity of the BSC.
    assert math.isclose(r["midp_closed"], r["midp_closed_h"], rel_tol=0, abs_tol=1e-15)
    assert r["midp_lower"] - 1e-15 <= r["midp_closed"] <= r["midp"] + 1e-15
    assert r["midp"] - r["midp_closed"] <= TOL, "MI-DP = ln 2 − h(1/(1+e^ε))"
    # Total variation of the rows, and Property 3 at ε′ = 0 (eq. 13): δ = 1 − 2/(e^ε + 1).
    assert math.isclose(r["tv"], tv, rel_tol=1e-12)
    assert math.isclose(r["delta_prop3"], tv, rel_tol=1e-12)
    # Lemma 2 is tight on the BSC: fed the exact MI-DP it returns the total variation.
    assert math.isclose(bounds.delta_from_midp(r["midp_closed"]), tv, rel_tol=1e-9)
    # Lemma 3, eq. 35, with |Y| = 2, |X_1| + 1 = 3: min = 2.
    assert math.isclose(r["lemma3"], r["lemma3_closed"], rel_tol=1e-12)

# %%
# The sandwich inequalities of Theorem 1 (eq. 20), at every ε
# ------------------------------------------------------------

for r in rows:
    eps = r["eps"]
    # (A) Lemma 1, eq. 21 with Property 1: KL-DP ≤ ε·tanh(ε/2) ≤ min{ε, ε²} ≤ ε.
    assert r["kl"] <= r["kl_closed"] * (1 + 1e-12) <= min(eps, eps**2) * (1 + 1e-12)
    # (B) Lemma 1, eq. 22: MI-DP ≤ KL-DP.
    assert r["midp"] <= r["kl"]
    # (C) Lemma 2, eqs. 27–28: the true δ ≤ δ′ ≤ √(2·MI-DP).
    assert r["tv"] <= r["delta_prime"] <= math.sqrt(2 * r["midp"])
    # Lemma 3, eq. 34: (δ)-DP with δ = tanh(ε/2) ⇒ MI-DP ≤ ε′.
    assert r["midp"] <= r["lemma3"]

# %%
# At small ε the KL-DP is about :math:`\varepsilon^2/2` (Property 1) while the capacity of
# the channel is about :math:`\mathrm{tv}^2/2 \approx \varepsilon^2/8`: the MI-DP sits a factor
# of about 4 below the KL-DP at high privacy (ordering B is strict).

first = rows[0]
print(
    f"at ε = {first['eps']}: KL-DP/(ε²/2) = {first['kl'] / (first['eps'] ** 2 / 2):.4f}, "
    f"MI-DP/(ε²/8) = {first['midp'] / (first['eps'] ** 2 / 8):.4f}"
)
assert abs(first["kl"] / (first["eps"] ** 2 / 2) - 1) < first["eps"] ** 2  # 1 − ε²/12 + …
assert abs(first["midp"] / (first["eps"] ** 2 / 8) - 1) < first["eps"] ** 2

# %%
# One figure: the ladder of privacy levels (left) and of δ's (right)
# -------------------------------------------------------------------

eps_arr = np.array([r["eps"] for r in rows])
col = {k: np.array([r[k] for r in rows]) for k in rows[0]}

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
ax1.plot(eps_arr, eps_arr, "k--", lw=1, label="ε-DP level ε")
ax1.plot(eps_arr, np.minimum(eps_arr, eps_arr**2), ":", c="grey", label="min{ε, ε²} (Lemma 1)")
ax1.plot(eps_arr, col["kl"], lw=2, label="KL-DP = ε·tanh(ε/2)")
ax1.plot(eps_arr, col["lemma3"], lw=2, label="ε′ from (δ)-DP (Lemma 3)")
ax1.plot(eps_arr, col["midp"], lw=2.5, label="MI-DP (dpcap.midp)")
ax1.plot(eps_arr, col["midp_closed"], "k:", label="ln 2 − h(1/(1+e^ε))")
ax1.set_xlabel("ε of randomized response (nats)")
ax1.set_ylabel("privacy level (nats)")
ax1.set_ylim(0, 2.3)
ax1.set_title("privacy levels")
ax1.legend(fontsize=8)
ax2.plot(eps_arr, np.minimum(np.sqrt(2 * col["midp"]), 1), lw=2, label="√(2·MI-DP) (eq. 27)")
ax2.plot(eps_arr, col["delta_prime"], lw=2.5, label="δ′ = 1 − 2h⁻¹(ln2 − MI-DP) (eq. 28)")
ax2.plot(eps_arr, col["tv"], "k:", lw=2, label="true δ = TV = tanh(ε/2)")
ax2.set_xlabel("ε of randomized response (nats)")
ax2.set_ylabel("δ of (0, δ)-DP")
ax2.set_title("MI-DP ⇒ (δ)-DP (Lemma 2), tight here")
ax2.legend(fontsize=8)
fig.suptitle("Cuff & Yu, Theorem 1 on binary randomized response")
fig.tight_layout()
fig.savefig(OUT / "cuff_yu_sandwich.png", dpi=120)
