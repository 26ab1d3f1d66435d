r"""
Audit your own mechanism: from a file with the command line, and from Python
============================================================================

A mechanism is a matrix: one row per database, one column per output, each row a probability
law. Write it in a file (``.csv``, ``.npy``, ``.json`` or whitespace-separated text) and
``dpcap audit`` reports every DP metric of it; the same numbers come from the query functions
of the Python API.

The mechanism here is a small survey. Two respondents each hold a sensitive bit and answer
with the *forced-response* design: with probability 1/2 they answer truthfully, otherwise they
say "yes" with probability 1/3 and "no" with probability 1/6, whatever the truth. Only the
number of "yes" answers is published. The databases are the four pairs
:math:`(x_1, x_2)` (rows in C order), the outputs the counts 0, 1 and 2.

By hand: one answer is "yes" with probability 1/3 if the truth is 0 and 5/6 if it is 1; the
count is the sum of two independent answers. Changing one respondent's bit changes the law of
the count by at most a factor 4 (both answers "no" is four times likelier when the changed bit
is 0), so the mechanism is :math:`\ln 4`-DP, the level of a single answer; its total
variation between neighbours is at most 5/12 (:math:`x_2 = 1`, :math:`x_1` flipped).
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap.plots import plot_privacy_profile

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)

# %%
# The mechanism, written to a CSV file
# ------------------------------------
#
# One answer: row = the true bit, columns = ("no", "yes"). The count of "yes" answers is the
# convolution of the two answers' laws.

answer = np.array([[1 / 2 + 1 / 6, 1 / 3], [1 / 6, 1 / 2 + 1 / 3]])
W = np.zeros((4, 3))
for x1 in (0, 1):
    for x2 in (0, 1):
        W[2 * x1 + x2] = np.convolve(answer[x1], answer[x2])
path = OUT / "forced_response_count.csv"
lines = ["# two respondents, forced response; rows (x1, x2) = 00, 01, 10, 11", "none,one,two"]
lines += [",".join(repr(float(v)) for v in row) for row in W]
path.write_text("\n".join(lines) + "\n")
print(path.read_text().replace(str(OUT), "OUT"))

# %%
# The command line
# ----------------
#
# ``--shape 2,2`` says the rows are databases of two binary entries (neighbours: one entry
# differs); ``--eps`` the levels of the δ(ε) table. The script runs the ``dpcap`` it imported.

eps_levels = [0.0, 0.5, 1.0, math.log(4)]
source_root = str(Path(dpcap.__file__).resolve().parent.parent)
env = {**os.environ, "PYTHONPATH": os.pathsep.join([source_root, os.environ.get("PYTHONPATH", "")])}
command = [
    sys.executable,
    "-m",
    "dpcap",
    "audit",
    str(path),
    "--shape",
    "2,2",
    "--eps",
    ",".join(repr(e) for e in eps_levels),
]
text = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
print(text.stdout.replace(str(OUT), "OUT"))
as_json = subprocess.run([*command, "--json"], capture_output=True, text=True, env=env, check=True)
report = json.loads(as_json.stdout)

# %%
# The same through the API
# ------------------------
#
# :class:`dpcap.Mechanism` with the domain shape; then one query function per metric. The
# exact metrics agree to the last bit; the capacity and the MI-DP are certified brackets,
# which must overlap and agree to within their tolerance (1e-9 nats).

M = dpcap.Mechanism(W, (2, 2))
api = {
    "dp_epsilon": dpcap.dp_epsilon(M),
    "delta": dpcap.dp_delta_curve(M, eps_levels),
    "tv": dpcap.tv_dp(M),
    "kl_dp": dpcap.kl_dp(M),
    "max_leakage": dpcap.max_leakage(M),
    "capacity": dpcap.capacity(M),
    "midp": dpcap.midp(M),
}
print(f"  {'metric':<12} {'command line':>14} {'API':>14}")
for key in ("dp_epsilon", "tv", "kl_dp", "max_leakage"):
    print(f"  {key:<12} {report[key]:14.10f} {api[key]:14.10f}")
    assert math.isclose(report[key], api[key], rel_tol=1e-12, abs_tol=1e-15), key
for (e, d), d_api in zip(report["delta"], api["delta"], strict=True):
    print(f"  {'δ(' + format(e, '.3g') + ')':<12} {d:14.10f} {d_api:14.10f}")
    assert math.isclose(d, d_api, rel_tol=1e-12, abs_tol=1e-15), e
for key in ("capacity", "midp"):
    lower, upper = report[key]
    res = api[key]
    print(f"  {key:<12} {upper:14.10f} {res.upper:14.10f}")
    assert max(lower, res.lower) <= min(upper, res.upper) + 1e-15, key  # the brackets overlap
    assert abs(upper - res.upper) <= 1e-9, key

# %%
# Against the numbers worked out by hand
# --------------------------------------
#
# The ε and the total variation above, and δ(ε) evaluated straight from its definition,
# :math:`\delta(\varepsilon) = \max_{x \sim x'} \sum_y (W[x, y] - e^\varepsilon W[x', y])_+`,
# over the ordered pairs of databases that differ in one entry.

assert math.isclose(api["dp_epsilon"], math.log(4), rel_tol=1e-12)
assert math.isclose(api["tv"], 5 / 12, rel_tol=1e-12)
pairs = [(0, 1), (0, 2), (1, 3), (2, 3)]  # rows 00, 01, 10, 11: one entry differs
pairs += [(j, i) for i, j in pairs]
for e, d in zip(eps_levels, api["delta"], strict=True):
    by_hand = max(np.maximum(W[i] - math.exp(e) * W[j], 0.0).sum() for i, j in pairs)
    assert math.isclose(d, by_hand, rel_tol=1e-12, abs_tol=1e-15), e
# Post-processing: no metric of the count exceeds that of the two answers released together.
both = dpcap.Mechanism(np.kron(answer, answer), (2, 2))
assert api["dp_epsilon"] <= dpcap.dp_epsilon(both) * (1 + 1e-12)
assert api["midp"].lower <= dpcap.midp(both).upper
print(
    f"ε = ln 4 = {math.log(4):.10f}, TV = 5/12 = {5 / 12:.10f}; "
    f"MI-DP of the count {api['midp'].value:.6f} <= of the two answers "
    f"{dpcap.midp(both).value:.6f} nats"
)

# %%
# Its privacy profile δ(ε)
# ------------------------
#
# The count against the two answers published separately.

grid = np.linspace(0.0, 1.6, 81)
fig, ax = plt.subplots(figsize=(6, 4))
plot_privacy_profile(
    grid,
    {
        "count of 'yes' answers (the file)": dpcap.dp_delta_curve(M, grid),
        "both answers": dpcap.dp_delta_curve(both, grid),
    },
    ax=ax,
)
ax.axvline(math.log(4), color="0.6", lw=0.8, ls=":")
ax.set_title("Forced response, two respondents: δ(ε)")
fig.tight_layout()
fig.savefig(OUT / "audit_your_own_mechanism.png", dpi=120)
