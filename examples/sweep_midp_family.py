r"""
A sweep: MI-DP and ε of a noisy count over a parameter grid
===========================================================

A count of n binary entries released with the truncated geometric mechanism (Ghosh, Roughgarden
& Sundararajan, *Universally utility-maximizing privacy mechanisms*, §2) is ε-DP for Hamming
neighbours. Cuff & Yu, *Differential Privacy as a Mutual Information Constraint* (CCS 2016),
order the privacy notions as ε-DP ⪰ KL-DP ⪰ MI-DP (Theorem 1, eq. 20):

* Property 1, eq. 11: an ε-close pair has :math:`D(P \,\|\, Q) \le \varepsilon
  \tanh(\varepsilon/2)` (:math:`\le \min\{\varepsilon, \varepsilon^2\}`, eq. 10), so an ε-DP
  mechanism is :math:`\varepsilon\tanh(\varepsilon/2)`-KL-DP;
* Lemma 1, eq. 22: ε-KL-DP implies ε-MI-DP (the capacity radius is at most the diameter).

Hence MI-DP :math:`\le \varepsilon\tanh(\varepsilon/2)` for every row of the sweep. For this
family the bound can be sharpened into a closed form. Changing one entry moves the count from c
to c + 1, and the two noise rows have likelihood ratio :math:`e^{+\varepsilon}` on outputs
≤ c and :math:`e^{-\varepsilon}` above, so :math:`\mathbf{1}\{Y \le c\}` is a sufficient
statistic and every slice of Cuff & Yu's Definition 2 is binary randomised response with
crossover :math:`p = 1/(1 + e^\varepsilon)`:

* MI-DP :math:`= \log 2 - h(1/(1 + e^\varepsilon))`, whatever n;
* KL-DP :math:`= \varepsilon\tanh(\varepsilon/2)`: the family attains Property 1 with equality;
* the (0, δ) level (total variation) is :math:`\tanh(\varepsilon/2)`, which is what Lemma 2,
  eq. 28, :math:`\delta' = 1 - 2h^{-1}(\log 2 - \text{MI-DP})`, gives back: tight as well.

:func:`dpcap.sweep` evaluates the queries on every grid point and returns a tidy table (one row
per point and query), which :func:`dpcap.plots.plot_sweep` draws.
"""

import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap import bounds
from dpcap.channel import AdditiveMechanism
from dpcap.mechanisms import counting_query, truncated_geometric
from dpcap.plots import plot_sweep

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)


def noisy_count(n: int, eps: float) -> AdditiveMechanism:
    """The family: a count of n binary entries with truncated geometric noise at level ε.

    Defined at module level, so ``executor="processes"`` or ``"dask"`` could import it too.
    """
    return counting_query(n, truncated_geometric(n, eps))


# %%
# The sweep: 7 × 8 mechanisms, four queries each, in one call
# -----------------------------------------------------------
grid = {"n": [1, 2, 4, 8, 16, 32, 64], "eps": [0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0]}
tol = 1e-9
table = dpcap.sweep(noisy_count, grid, ["dp_epsilon", "midp", "kl_dp", "tv_dp"], tol=tol)
assert (table["status"] == "converged").all()
print(table.head(4).to_string(columns=["n", "eps", "query", "value", "lower", "upper"]))
print(f"tidy table: {len(table)} rows, columns {table.columns.tolist()[:7]} ...")

midp = table[table["query"] == "midp"].pivot_table(index="eps", columns="n", values="value")
print("\nMI-DP (nats) by ε (rows) and n (columns): the same in every column")
print(midp.to_string(float_format=lambda v: f"{v:.6f}"))

# %%
# Every row against the closed forms and Cuff & Yu's bounds
# ---------------------------------------------------------
#
# The closed forms lie in each certified bracket (width ≤ ``tol``); the ε-DP, KL-DP and total
# variation levels are exact up to rounding (1e-12 relative).
h = bounds.binary_entropy  # in nats


def closed_midp(eps: float) -> float:
    """``log 2 − h(1/(1 + e^ε))``: the capacity of binary randomised response."""
    return math.log(2) - h(1 / (1 + math.exp(eps)))


by = table.set_index(["n", "eps", "query"])
summary = []
for n in grid["n"]:
    for eps in grid["eps"]:
        eps_dp = by.loc[(n, eps, "dp_epsilon"), "value"]
        row = by.loc[(n, eps, "midp")]
        kl = by.loc[(n, eps, "kl_dp"), "value"]
        tv = by.loc[(n, eps, "tv_dp"), "value"]
        prop1 = bounds.kl_dp_bound(eps)
        # ε-DP = ε exactly (the ratio of two neighbouring rows is e^{±ε}): rounding only.
        assert math.isclose(eps_dp, eps, rel_tol=1e-12), (n, eps)
        # Cuff & Yu, Property 1 + Lemma 1: MI-DP ≤ KL-DP ≤ ε·tanh(ε/2) ≤ min{ε, ε²}.
        # (KL-DP meets the bound with equality here: compare to the bound or equal in rounding.)
        assert row["value"] <= kl, (n, eps)
        assert kl <= prop1 or math.isclose(kl, prop1, rel_tol=1e-12), (n, eps)
        assert prop1 <= min(eps, eps**2), (n, eps)
        # The closed form lies in the certified bracket (width ≤ tol).
        c = closed_midp(eps)
        assert row["lower"] - 1e-12 <= c <= row["upper"] + 1e-12, (n, eps, c)
        assert math.isclose(kl, eps * math.tanh(eps / 2), rel_tol=1e-12), (n, eps)
        assert math.isclose(tv, math.tanh(eps / 2), rel_tol=1e-12), (n, eps)
        # Lemma 2 holds (δ' ≥ TV) and is tight here (δ' = TV up to the bracket's width).
        # (delta_from_midp rounds up and value is the certified upper end: no slack needed.)
        assert bounds.delta_from_midp(row["value"]) >= tv, (n, eps)
        if n == grid["n"][0]:
            summary.append((eps, row["value"], c, kl, prop1, min(eps, eps**2)))

print("\nε      MI-DP dpcap  log2-h(p)   KL-DP dpcap  ε·tanh(ε/2)  min(ε,ε²)")
for eps, m, c, kl, prop1, loose in summary:
    print(f"{eps:<5g} {m:11.8f} {c:11.8f} {kl:12.8f} {prop1:12.8f} {loose:10.6f}")

# %%
# The figure: MI-DP over ε, one line per n, under the Cuff & Yu bounds
# --------------------------------------------------------------------
fig, ax = plt.subplots(figsize=(5.5, 4))
plot_sweep(table, x="eps", query="midp", hue="n", ax=ax)
fine = np.linspace(0.0, max(grid["eps"]), 200)
ax.plot(fine, bounds.kl_dp_bound(fine), "k--", lw=1, label="ε·tanh(ε/2) (Property 1)")
ax.plot(fine, np.minimum(fine, fine**2), "k:", lw=1, label="min{ε, ε²} (Lemma 1)")
ax.plot(
    fine,
    [closed_midp(e) for e in fine],
    color="0.5",
    lw=4,
    alpha=0.3,
    zorder=0,
    label="log 2 − h(1/(1+e^ε))",
)
ax.set_ylim(0, 1.2)
ax.set_xlabel("ε")
ax.set_title("Noisy count, truncated geometric noise: MI-DP vs ε")
ax.legend(fontsize=7, ncol=2, title="n", title_fontsize=7, loc="upper left")
fig.tight_layout()
fig.savefig(OUT / "sweep_midp_family.png", dpi=120)
