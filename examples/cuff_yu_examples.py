r"""
Cuff & Yu's Examples 2–5, personalised and free-lunch MI-DP
===========================================================

P. Cuff and L. Yu, *Differential Privacy as a Mutual Information Constraint* (CCS 2016), define
MI-DP :math:`= \sup_{i, P_{X^n}} I(X_i; Y \mid X^{-i})` (Definition 2) and illustrate it with
four examples, each checked below against the paper's numbers:

* Example 2 (erasure channel, eqs. 36–38): MI-DP :math:`= \delta \log N`, within a factor of
  about two of the (δ)-DP ⇒ MI-DP bound of Lemma 3 for large alphabets;
* Example 3 (correlated database, §4.1): a noisy count is ε-DP, yet when all entries are equal
  :math:`I(X_i; Y) \to` 1 bit while :math:`I(X_i; Y \mid X^{-i}) = 0`;
* Example 4 (one-time pad, §4.2): two responses that each leak nothing reveal :math:`X_1`
  together, so Corollary 2 needs conditionally independent responses; with the key as a
  database entry, conditioning on the rest of the database increases the leakage
  (Property 4);
* Example 5 (§5): MI-DP :math:`= \varepsilon \ln 2` while the pair of entries leaks
  :math:`\varepsilon \log(|\mathcal{X}_1| + 1)` (eq. 51): no group privacy without a
  cardinality bound (Corollary 5).

Then §6.1 (personalised MI-DP: one level per entry, ``MIDPResult.per_entry``) and §6.2
(free-lunch privacy :math:`\sup I(X^n; Y)`: :func:`dpcap.capacity` of the database mechanism).
"""

import itertools
import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap import bounds
from dpcap.mechanisms import (
    counting_query,
    erasure,
    one_time_pad,
    randomized_response,
    revealing,
    truncated_geometric,
)

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)
TOL = 1e-9  # certified gap asked of every capacity computation (nats)
LN2 = math.log(2)


def close(computed: float, published: float) -> bool:
    """Equal up to the solver's certified gap and a few ulps."""
    return abs(computed - published) <= TOL + 1e-12 * max(1.0, abs(published))


# %%
# Example 2: the erasure channel
# ------------------------------
#
# The erasure channel on N symbols reveals its input with probability δ and erases it
# otherwise (eq. 36). Its MI-DP is :math:`\delta \log N` (eqs. 37–38), and it is (0, δ)-DP and
# no better.
delta = 0.1
print(f"Example 2 — erasure channel, δ = {delta} (nats)")
print(f"  {'N':>5} {'MI-DP':>12} {'δ log N':>12} {'Lemma 3 ε′':>12} {'ratio':>7}")
ratios = []
for N in (2, 4, 16, 64, 256):
    W = erasure(N, delta)
    got = dpcap.midp(W, tol=TOL).value
    paper = delta * math.log(N)  # eq. 37
    # Lemma 3, eq. 35: |Y| = N + 1 and |X_1| + 1 = N + 1.
    lemma3 = bounds.midp_from_delta(delta, n_outputs=N + 1, max_entry_size=N)
    ratios.append(lemma3 / paper)
    print(f"  {N:>5} {got:12.9f} {paper:12.9f} {lemma3:12.6f} {ratios[-1]:7.3f}")
    assert close(got, paper), "MI-DP = δ log N"
    assert math.isclose(lemma3, 2 * bounds.binary_entropy(delta) + 2 * delta * math.log(N + 1))
    # It is (0, δ)-DP and no better: δ(ε′) = δ at every ε′ (the note under eq. 36).
    for eps_prime in (0.0, 1.0, 10.0):
        assert math.isclose(dpcap.dp_delta(W, eps_prime), delta, rel_tol=1e-12)
    assert got <= lemma3  # Lemma 3 is a bound
# "roughly within a factor of two of the correct scaling for large cardinalities": the ratio
# (2h(δ) + 2δ ln(N+1)) / (δ ln N) is above 2, decreases in N, and tends to 2.
assert all(r > 2 for r in ratios)
assert all(a > b for a, b in itertools.pairwise(ratios))
big = []
for N in (1e6, 1e12, 1e100):
    big.append(
        (2 * bounds.binary_entropy(delta) + 2 * delta * math.log1p(N)) / (delta * math.log(N))
    )
    print(f"  N = {N:.0e}: ratio {big[-1]:.3f} (closed form; slowly, 2 + 2h(δ)/(δ ln N) → 2)")
assert big[0] > big[1] > big[2] > 2
assert big[2] < 2.03

# %%
# Example 3: a correlated database
# --------------------------------
#
# The paper adds :math:`\mathrm{Lap}(1/(n\varepsilon))` noise to the mean of n binary entries,
# i.e. :math:`\mathrm{Lap}(1/\varepsilon)` to their count; here the count is released through
# its discrete, truncated form, the truncated geometric mechanism. The MI-DP stays small, while
# a weak adversary facing equal entries learns :math:`I(X_i; Y) \to` 1 bit
# (:func:`dpcap.correlated_leakage`).
eps = 0.5
ns = [1, 2, 4, 8, 12, 16, 24, 32]
print(f"\nExample 3 — noisy count of n binary entries, ε = {eps}")
print(f"  {'n':>3} {'MI-DP':>10} {'sup I(X_i;Y)':>13} {'(bits)':>7} {'BSC bound':>10}")
ex3_midp, ex3_corr = [], []
for n in ns:
    noise = truncated_geometric(n, eps)
    M = counting_query(n, noise)
    mi = dpcap.midp(M, tol=TOL).value
    corr = dpcap.correlated_leakage(M, entry=0, tol=TOL)
    # Lower bound of Appendix C: a binary-input channel whose rows are at total variation d
    # carries at least ln 2 − h((1 − d)/2) nats. The rows here are counts 0 and n.
    d = 0.5 * np.abs(noise.matrix[0] - noise.matrix[n]).sum()
    floor = LN2 - bounds.binary_entropy((1 - d) / 2)
    ex3_midp.append(mi)
    ex3_corr.append(corr.value)
    print(f"  {n:>3} {mi:10.6f} {corr.value:13.6f} {corr.value / LN2:7.4f} {floor:10.6f}")
    # Lemma 1: ε-DP (one entry moves the count by one) ⇒ MI-DP ≤ ε·tanh(ε/2).
    assert mi <= eps * math.tanh(eps / 2)
    # The weak adversary's best law is the paper's: all entries equal.
    assert corr.rows == ((0,) * (n - 1), (1,) * (n - 1))
    assert floor - TOL <= corr.value <= LN2 + TOL
    # Corollary 1 needs independence: with correlation the leakage far exceeds the MI-DP.
    assert n < 4 or corr.value > 5 * mi
print(
    f"  paper: I(X_i; Y) ≈ 1 bit for large n; computed at n = {ns[-1]}: "
    f"{ex3_corr[-1] / LN2:.4f} bits"
)
assert ex3_corr[-1] / LN2 > 0.99
# "I(X_i; Y | X^{-i}) = 0 because H(X_i | X^{-i}) = 0": the all-equal law.
n = 6
joint = np.zeros((2,) * n)
joint[(0,) * n] = joint[(1,) * n] = 0.5
cmi = dpcap.conditional_mutual_information(joint, counting_query(n, truncated_geometric(n, eps)), 0)
print(f"  I(X_1; Y | X^-1) under the all-equal law (n = {n}): {cmi:.3g} (paper: 0)")
assert cmi == 0.0

# %%
# Example 4: the one-time pad
# ---------------------------
#
# The paper's form: :math:`Y_1 = X_1 \oplus U` and :math:`Y_2 = U` with U uniform; each
# response alone is independent of :math:`X_1`, the pair reveals it.
m = 4
print(f"\nExample 4 — one-time pad on an alphabet of m = {m} (nats)")
Y1 = np.full((m, m), 1 / m)  # P(Y_1 = y | X_1 = x) = 1/m
Y2 = np.full((m, m), 1 / m)  # U does not depend on X_1
both = np.zeros((m, m * m))  # outputs (y_1, y_2), y_1 = (x + y_2) mod m
for x in range(m):
    for u in range(m):
        both[x, ((x + u) % m) * m + u] = 1 / m
mi_y1, mi_y2, mi_both = (dpcap.midp(w, tol=TOL).value for w in (Y1, Y2, both))
print(
    f"  MI-DP of Y_1: {mi_y1:.9f}, of Y_2: {mi_y2:.9f}, of (Y_1, Y_2): {mi_both:.9f}"
    f"  (paper: 0, 0, log|X_1| = {math.log(m):.9f})"
)
assert close(mi_y1, 0.0)
assert close(mi_y2, 0.0)
assert close(mi_both, math.log(m))
# With the key held as a second database entry X_2 and only the ciphertext released:
pad = one_time_pad(m)
res = dpcap.midp(pad, tol=TOL)
uniform = np.full((m, m), 1 / m**2)  # X_1, X_2 independent and uniform
W1 = pad.tensor().mean(axis=1)  # the channel X_1 → Y once the independent key is averaged out
i_plain = dpcap.mutual_information(np.full(m, 1 / m), W1)
i_cond = dpcap.conditional_mutual_information(uniform, pad, 0)
print(
    f"  key as entry X_2: per-entry MI-DP {np.round(res.per_entry, 9)}; "
    f"I(X_1; Y) = {i_plain:.3g} but I(X_1; Y | X_2) = {i_cond:.9f} (Property 4)"
)
assert np.all(np.abs(res.per_entry - math.log(m)) <= TOL)
assert abs(i_plain) <= 1e-12
assert math.isclose(i_cond, math.log(m), rel_tol=1e-12)

# %%
# Example 5: no group privacy for MI-DP
# -------------------------------------
#
# With probability ε the mechanism reveals the common value of two equal entries (or that they
# differ), otherwise it erases. MI-DP :math:`= \varepsilon \ln 2`, but the pair of entries leaks
# :math:`\varepsilon \log(|\mathcal{X}_1| + 1)` (eq. 51): the group leakage grows without bound
# in :math:`|\mathcal{X}_i|` while the MI-DP does not move.
prob = 0.25  # the paper's ε: the probability of an unerased output
print(f"\nExample 5 — reveal the common value with probability {prob} (nats)")
print(
    f"  {'|X_i|':>5} {'MI-DP':>11} {'ε ln 2':>11} {'I(X1,X2;Y)':>11} {'ε log(m+1)':>11}"
    f" {'Cor. 5':>8}"
)
for mm in (2, 4, 8, 16):
    M = revealing(2, mm, prob)
    mi = dpcap.midp(M, tol=TOL).value
    grp = dpcap.midp(M, group=[0, 1], tol=TOL).value  # sup I(X_1, X_2; Y)
    free = dpcap.capacity(M, tol=TOL).value  # the same thing, as free-lunch privacy (§6.2)
    cor5 = bounds.group_midp_bound(mi, 2, n_outputs=mm + 2, max_entry_size=mm)
    print(
        f"  {mm:>5} {mi:11.9f} {prob * LN2:11.9f} {grp:11.9f} {prob * math.log(mm + 1):11.9f}"
        f" {cor5:8.3f}"
    )
    assert close(mi, prob * LN2), "MI-DP = ε ln 2"
    assert close(grp, prob * math.log(mm + 1)), "eq. 51"
    assert close(free, prob * math.log(mm + 1)), "eq. 51"
    assert math.isclose(prob * math.log(mm + 1), prob * math.log(M.n_outputs - 1))
    assert grp <= cor5  # Corollary 5 holds (and is loose)
# The group leakage grows without bound in |X_i| while the MI-DP does not move: no group
# privacy (Property 7's analogue fails for MI-DP).

# %%
# §6.1 personalised MI-DP and §6.2 free-lunch privacy
# ---------------------------------------------------
#
# Each entry is answered by its own randomized response, at its own level
# :math:`\varepsilon_i` (personalised DP, eq. 55); the personalised MI-DP (eq. 56) is
# ``MIDPResult.per_entry``. Free-lunch privacy :math:`\sup I(X^n; Y)` (eq. 58) is the capacity
# of the whole mechanism, and bounds every :math:`I(X_{\mathcal{I}}; Y \mid X_{\mathcal{J}})`
# (eq. 59).
eps_i = [0.25, 1.0, 2.0]
W = np.ones((1, 1))
for e in eps_i:
    W = np.kron(W, randomized_response(2, e).matrix)
M = dpcap.Mechanism(W, (2,) * len(eps_i))
res = dpcap.midp(M, tol=TOL)
# Corollary 4 (partial queries): entry i leaks only through its own response, a BSC.
paper = [LN2 - bounds.binary_entropy(1 / (1 + math.exp(e))) for e in eps_i]
print("\n§6.1 personalised MI-DP (eq. 56), one randomized response per entry (nats)")
for e, got, want in zip(eps_i, res.per_entry, paper, strict=True):
    print(f"  ε_i = {e:4}: per-entry MI-DP {got:.9f}, ln 2 − h(1/(1+e^ε_i)) = {want:.9f}")
    assert close(got, want)
    assert got <= e * math.tanh(e / 2)
assert close(res.value, max(paper))
assert res.entry == int(np.argmax(eps_i))
# §6.2: free-lunch privacy sup I(X^n; Y) — a product channel's capacity is the sum, which by the
# chain rule (eq. 59) bounds every I(X_I; Y | X_J).
free = dpcap.capacity(M, tol=TOL).value
pair = dpcap.midp(M, group=[1, 2], tol=TOL).value
print(
    f"§6.2 free-lunch sup I(X^3; Y) = {free:.9f}, Σ_i C_i = {sum(paper):.9f}; "
    f"sup I(X_2, X_3; Y | X_1) = {pair:.9f} = C_2 + C_3"
)
assert close(free, sum(paper))
assert close(pair, paper[1] + paper[2])
assert max(res.per_entry) <= pair + TOL <= free + 2 * TOL

# %%
# One figure: MI-DP against each example's parameter
# --------------------------------------------------
fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
ax = axes[0]
dgrid = np.linspace(0.0, 0.5, 11)
for N, c in ((4, "C0"), (64, "C1")):
    ax.plot(
        dgrid,
        [dpcap.midp(erasure(N, d), tol=TOL).value for d in dgrid],
        "o",
        c=c,
        ms=4,
        label=f"MI-DP, N = {N}",
    )
    ax.plot(dgrid, dgrid * math.log(N), "-", c=c, lw=1, label="δ log N")
    ax.plot(
        dgrid,
        bounds.midp_from_delta(dgrid, n_outputs=N + 1, max_entry_size=N),
        "--",
        c=c,
        lw=1,
        label="Lemma 3 bound",
    )
ax.set_xlabel("δ (probability of revealing)")
ax.set_ylabel("nats")
ax.set_title("Example 2: erasure channel")
ax.legend(fontsize=7)
ax = axes[1]
ax.plot(ns, ex3_corr, "o-", label="sup I(X_i; Y), correlated")
ax.plot(ns, ex3_midp, "s-", label="MI-DP")
ax.axhline(LN2, c="k", ls=":", label="1 bit")
ax.set_xlabel("n (entries)")
ax.set_ylabel("nats")
ax.set_title(f"Example 3: noisy count, ε = {eps}")
ax.legend(fontsize=7)
ax = axes[2]
pgrid = np.linspace(0.0, 1.0, 11)
for mm, c in ((2, "C0"), (16, "C1")):
    ax.plot(
        pgrid,
        [dpcap.capacity(revealing(2, mm, p), tol=TOL).value for p in pgrid],
        "o",
        c=c,
        ms=4,
        label=f"sup I(X_1,X_2; Y), |X_i| = {mm}",
    )
    ax.plot(pgrid, pgrid * math.log(mm + 1), "-", c=c, lw=1, label="ε log(|X_i| + 1)")
ax.plot(
    pgrid,
    [dpcap.midp(revealing(2, 16, p), tol=TOL).value for p in pgrid],
    "ks",
    ms=4,
    label="MI-DP (any |X_i|)",
)
ax.plot(pgrid, pgrid * LN2, "k-", lw=1, label="ε ln 2")
ax.set_xlabel("ε (probability of an unerased output)")
ax.set_ylabel("nats")
ax.set_title("Example 5: no group privacy")
ax.legend(fontsize=7)
fig.suptitle("Cuff & Yu, Examples 2, 3 and 5: MI-DP against each parameter")
fig.tight_layout()
fig.savefig(OUT / "cuff_yu_examples.png", dpi=120)
