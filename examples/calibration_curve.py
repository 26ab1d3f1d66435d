"""
Calibrating noise to an information-theoretic target
====================================================

Differential-privacy libraries calibrate noise to an (ε, δ) target; :func:`dpcap.calibrate`
does it for the information-theoretic measures, with certificates. Here a count of :math:`n`
people is released through truncated geometric noise of level ε, and we ask two questions as
:math:`n` grows:

* which ε keeps the **MI-DP** (Cuff and Yu, Definition 2) within 0.01 nats? An entry of a count
  is seen through two adjacent rows of the noise, and the worst pair is at the edge of the
  range, which is binary randomized response: MI-DP :math:`= \\ln 2 - h(1/(1 + e^{\\epsilon}))`
  (their eq. 98) whatever :math:`n`, so the calibrated ε must not depend on :math:`n`;
* which ε keeps the **free-lunch privacy** :math:`\\sup I(X^n; Y)` (their §6.2, the capacity of
  the count, computed on the :math:`n + 1` reachable totals) within 0.1 nats? The whole
  database leaks more as it grows, so the calibrated ε shrinks.

Every answer is a parameter bracket: its lower end is proven to meet the target (the measure's
certified upper end is within it) and its upper end proven to miss it (the measure's certified
lower end is beyond it). The calibrated mechanism is ε-DP for that ε exactly.
"""

# %%
import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import brentq

import dpcap

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)
MIDP_TARGET, FREE_LUNCH_TARGET = 0.01, 0.1  # nats
sizes = [1, 2, 5, 10, 20, 50, 100, 200]


def h(t: float) -> float:
    """Binary entropy in nats."""
    return -t * math.log(t) - (1 - t) * math.log(1 - t)


# The closed-form answer to the first question (Cuff & Yu, eq. 98 at the edge of the count).
exact = brentq(lambda e: math.log(2) - h(1 / (1 + math.exp(e))) - MIDP_TARGET, 1e-3, 5)

# %%
# Calibrate both measures at every size
# -------------------------------------
rows = []
for n in sizes:
    common = {"bounds": (1e-4, 10.0), "fixed": {"n": n}, "database": "counting"}
    by_midp = dpcap.calibrate("truncated_geometric", "eps", "midp", MIDP_TARGET, **common)
    by_cap = dpcap.calibrate("truncated_geometric", "eps", "capacity", FREE_LUNCH_TARGET, **common)
    rows.append((n, by_midp, by_cap))

print(f"MI-DP <= {MIDP_TARGET} nats: closed form eps = {exact:.10f}")
print(f"  {'n':>4} {'eps (MI-DP)':>24} {'eps (free lunch)':>26} {'calls':>6}")
for n, a, b in rows:
    print(
        f"  {n:>4} [{a.lower:.8f}, {a.upper:.8f}] [{b.lower:.8f}, {b.upper:.8f}] "
        f"{a.evaluations + b.evaluations:>6}"
    )

# %%
# What the certificates say
# -------------------------
# Each MI-DP bracket contains the closed form, and the calibrated mechanism's certified MI-DP is
# within the target; the free-lunch bracket is certified the same way from both sides.
for n, a, b in rows:
    assert a.status is dpcap.Status.CONVERGED
    assert b.status is dpcap.Status.CONVERGED
    assert a.lower <= exact <= a.upper, (n, a)
    assert a.upper - a.lower <= 1e-6 * a.upper
    assert a.measure_result.upper <= MIDP_TARGET
    assert b.measure_result.upper <= FREE_LUNCH_TARGET
    beyond = dpcap.capacity(
        dpcap.mechanisms.counting_query(n, dpcap.mechanisms.truncated_geometric(n, b.upper))
    )
    assert beyond.lower > FREE_LUNCH_TARGET, (n, beyond)
    # the calibrated mechanism is ε-DP at exactly the calibrated level
    assert math.isclose(dpcap.dp_epsilon(a.mechanism), a.value, rel_tol=1e-12)

# One person (n = 1): the count is binary randomized response, so both measures are the same
# capacity, ln 2 − h(1/(1 + e^ε)), and the free-lunch answer solves the same equation at 0.1.
one_cap = brentq(lambda e: math.log(2) - h(1 / (1 + math.exp(e))) - FREE_LUNCH_TARGET, 1e-3, 5)
assert rows[0][2].lower <= one_cap <= rows[0][2].upper
# The whole database leaks more as it grows: the free-lunch ε shrinks with n.
free_lunch = np.array([b.value for _, _, b in rows])
assert np.all(np.diff(free_lunch) < 0)
# It shrinks about as 1/n: the noise spreads over n·ε, and the product settles (printed, not a
# theorem).
print("  n * eps (free lunch):", np.round(np.array(sizes) * free_lunch, 4).tolist())

# %%
# The figure: the calibrated ε against the number of people
# ----------------------------------------------------------
fig, ax = plt.subplots(figsize=(6.4, 4.2))
ns = np.array(sizes)
ax.plot(ns, [a.value for _, a, _ in rows], "o-", label=f"MI-DP ≤ {MIDP_TARGET} nats")
ax.axhline(exact, color="k", ls=":", lw=1, label="closed form (Cuff & Yu eq. 98)")
ax.plot(ns, free_lunch, "s-", label=f"free-lunch privacy ≤ {FREE_LUNCH_TARGET} nats")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("number of people n in the count")
ax.set_ylabel("calibrated ε of the geometric noise (nats)")
ax.set_title("The largest ε that meets each target")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(OUT / "calibration_curve.png", dpi=120)
