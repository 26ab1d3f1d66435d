r"""
Amplification by subsampling, exactly: one shared sample is not k fresh ones
============================================================================

Running an ε-DP mechanism on a Poisson sample of the records (each kept with probability q)
gives the classic amplified level (Li, Qardaji, Su 2012; Balle, Barthe, Gaboardi 2018)

.. math::

   \varepsilon' = \log\bigl(1 + q(e^\varepsilon - 1)\bigr).

The theorem assumes a **fresh** sample per release. When k releases read **one** sample,
composing the amplified guarantees, :math:`k\log(1 + q(e^\varepsilon - 1))`, is not a bound
any more: the releases are one kε-DP mechanism amplified once, at most
:math:`\log(1 + q(e^{k\varepsilon} - 1))`, and for randomized response that is attained.

:func:`dpcap.mechanisms.poisson_subsample` and :func:`dpcap.mechanisms.shared_sample` build the
subsampled mechanisms as matrices on small databases, so :func:`dpcap.dp_epsilon` gives their
levels exactly, not as bounds.
"""

import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap.mechanisms import (
    counting_query,
    poisson_subsample,
    randomized_response,
    shared_sample,
    truncated_geometric,
)

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)

eps, q = 1.0, 0.2


def amplified(q: float, eps: float) -> float:
    """``log(1 + q(e^ε − 1))``."""
    return math.log1p(q * math.expm1(eps))


# %%
# One record, one release: the classic formula, exactly
# -----------------------------------------------------
#
# Binary randomized response on one record; an absent record is read as 0 (``absent=0``). The
# subsampled mechanism has rows for the values 0, 1 and "absent"; under add/remove (the
# default relation) and under replace-one its level is exactly the amplified ε.
rr = randomized_response(2, eps)
print(f"randomized response at eps = {eps}, Poisson sampling")
print(f"  {'q':>5} {'add/remove':>12} {'replace-one':>12} {'log(1+q(e^eps-1))':>18}")
for rate in (0.01, 0.1, 0.2, 0.5, 1.0):
    add_remove = dpcap.dp_epsilon(poisson_subsample(rr, rate, absent=0))
    replace = dpcap.dp_epsilon(poisson_subsample(rr, rate, absent=0, relation="replace_one"))
    closed = amplified(rate, eps)
    print(f"  {rate:5.2f} {add_remove:12.9f} {replace:12.9f} {closed:18.9f}")
    assert math.isclose(add_remove, closed, rel_tol=1e-12)
    assert math.isclose(replace, closed, rel_tol=1e-12)

# %%
# k releases: fresh samples against one shared sample
# ---------------------------------------------------
#
# Fresh samples are :func:`dpcap.compose` of k subsampled mechanisms; their exact level is the
# composed amplified level. One shared sample is :func:`~dpcap.mechanisms.shared_sample`.
# Randomized response, and a count of two records with truncated geometric noise, attain the
# amplify-once level; randomized response whose absent record answers with a fair coin lies
# strictly between the two formulas (its own amplified level,
# :math:`-\log(1 - q\tanh(\varepsilon/2))` under add/remove, replaces
# :math:`\log(1 + q(e^\varepsilon - 1))` in the composed line).
ks = np.arange(1, 7)
p = math.exp(eps) / (1 + math.exp(eps))
coin = np.array([[p, 1 - p], [1 - p, p], [0.5, 0.5]])  # values 0, 1 and absent
count = counting_query(2, truncated_geometric(2, eps))
fresh, shared_rr, shared_count, shared_coin = [], [], [], []
for k in ks:
    fresh.append(dpcap.dp_epsilon(dpcap.compose(*[poisson_subsample(rr, q, absent=0)] * k)))
    shared_rr.append(dpcap.dp_epsilon(shared_sample(*[rr] * k, q=q, absent=0)))
    shared_count.append(dpcap.dp_epsilon(shared_sample(*[count] * k, q=q, absent=0)))
    shared_coin.append(dpcap.dp_epsilon(shared_sample(*[coin] * k, q=q)))
naive = ks * amplified(q, eps)
naive_coin = -ks * math.log1p(-q * math.tanh(eps / 2))
once = np.array([amplified(q, k * eps) for k in ks])

print(f"\nk releases at eps = {eps}, q = {q} (add/remove)")
print(
    f"  {'k':>2} {'fresh':>9} {'k log(..)':>9} {'shared RR':>10} {'log(1+q(e^keps-1))':>19} "
    f"{'shared count':>12} {'shared coin':>11} {'k x coin':>9}"
)
rows = zip(ks, fresh, naive, shared_rr, once, shared_count, shared_coin, naive_coin, strict=True)
for k, a, b, c, d, e, f, g in rows:
    print(f"  {k:2d} {a:9.6f} {b:9.6f} {c:10.6f} {d:19.6f} {e:12.6f} {f:11.6f} {g:9.6f}")
np.testing.assert_allclose(fresh, naive, rtol=1e-12)  # fresh samples: composition is exact
np.testing.assert_allclose(shared_rr, once, rtol=1e-12)  # shared: the composition amplified once
np.testing.assert_allclose(shared_count, once, rtol=1e-12)
assert all(s > n for s, n in zip(shared_rr[1:], naive[1:], strict=True))  # naive underestimates
assert all(n < s < o for n, s, o in zip(naive_coin[1:], shared_coin[1:], once[1:], strict=True))

# %%
# The composed amplified levels are not a bound for a shared sample, but neither is the
# shared sample always worse: under replace-one, the coin mechanism's shared level is *below*
# k times its amplified level for k = 2, 3, 4 and above it from k = 5. Only the exact
# mechanism says which.
single = dpcap.dp_epsilon(poisson_subsample(coin, q, relation="replace_one"))
replace_shared = [
    dpcap.dp_epsilon(shared_sample(*[coin] * k, q=q, relation="replace_one")) for k in ks
]
print("\nthe coin mechanism under replace-one: shared sample against k x amplified")
for k, s in zip(ks, replace_shared, strict=True):
    side = "equal" if math.isclose(s, k * single) else ("below" if s < k * single else "above")
    print(f"  k = {k}: {s:.6f} vs {k * single:.6f} ({side})")

# %%
# The figure
# ----------
fig, ax = plt.subplots(figsize=(6.4, 4.4))
ax.plot(ks, ks * eps, "k:", label="kε (no sampling)")
ax.plot(ks, once, "C3-", label="log(1 + q(e^(kε) − 1)): the composition amplified once")
ax.plot(ks, shared_rr, "C3o", ms=8, label="shared sample: randomized response (dpcap)")
ax.plot(ks, shared_count, "C1x", ms=8, label="shared sample: count of 2 records (dpcap)")
ax.plot(ks, shared_coin, "C2s-", label="shared sample: RR, absent answers a coin (dpcap)")
ax.plot(ks, naive, "C0--", label="k log(1 + q(e^ε − 1)): composed amplified levels")
ax.plot(ks, fresh, "C0^", label="fresh sample per release (dpcap)")
ax.plot(ks, naive_coin, "C2--", label="k × amplified level of the coin mechanism")
ax.set_xlabel("number of releases k")
ax.set_ylabel("ε (nats), add/remove")
ax.set_title(f"Poisson sampling, q = {q}; each release ε = {eps}")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(OUT / "shared_sample_amplification.png", dpi=120)
