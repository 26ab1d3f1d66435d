r"""
Geo-indistinguishability on a grid: planar mechanisms and the optimal one
=========================================================================

Andrés, Bordenabe, Chatzikokolakis and Palamidessi, *Geo-indistinguishability* (CCS 2013), ask
a location mechanism to be :math:`\varepsilon d_2`-private: reported locations may differ in
likelihood by at most :math:`e^{\varepsilon r}` between true locations :math:`r` apart
(Chatzikokolakis et al.'s d-privacy, PETS 2013, with the Euclidean distance). Their example:
:math:`\ell = \ln 4` within :math:`r = 200` m, i.e. :math:`\varepsilon = \ln 4 / 200` per metre.

On a 5 × 5 grid of 100 m cells:

* the planar geometric mechanism (lattice noise :math:`\propto e^{-\varepsilon \|z\|_2}`,
  remapped to the nearest grid point) is exactly :math:`\varepsilon d_2`-private — a closed
  form that :func:`dpcap.dp_epsilon` with ``metric=`` must reproduce from the matrix;
* its Manhattan variant is a product of two truncated geometric mechanisms, exactly
  :math:`\varepsilon d_1`-private and :math:`\sqrt 2\, \varepsilon d_2`-private;
* the planar Laplace mechanism, integrated over the cells, is :math:`\varepsilon' d_2`-private
  with :math:`\varepsilon' \le \varepsilon` (remapping is post-processing);
* the least expected distance of any :math:`\varepsilon d_2`-private mechanism, for a uniform
  prior (Bordenabe, Chatzikokolakis and Palamidessi, CCS 2014), comes from
  :func:`dpcap.optimal_mechanism` with ``metric=``, with a certified bracket; every remapped
  planar mechanism is one such mechanism, so it cannot do better.
"""

import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap.mechanisms import planar_geometric, planar_laplace
from dpcap.metric_privacy import grid_metric

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)

grid, step = (5, 5), 100.0  # metres
eps = math.log(4) / 200  # ℓ = ln 4 within r = 200 m
euclid = grid_metric(grid, step=step)
manhattan = grid_metric(grid, step=step, norm="manhattan")

# %%
# The d-privacy level of each mechanism, computed against its closed form
# -----------------------------------------------------------------------
geometric = planar_geometric(grid, eps, step=step)
level = dpcap.dp_epsilon(geometric, metric=euclid)
print(f"planar geometric (Euclidean): eps = {level:.12g} per m, closed form {eps:.12g}")
assert math.isclose(level, eps, rel_tol=1e-9)

taxicab = planar_geometric(grid, eps, step=step, norm="manhattan")
level_1 = dpcap.dp_epsilon(taxicab, metric=manhattan)
level_2 = dpcap.dp_epsilon(taxicab, metric=euclid)
print(f"planar geometric (Manhattan): {level_1:.12g} for d1 (closed form {eps:.12g}),")
root2 = math.sqrt(2) * eps
print(f"                              {level_2:.12g} for d2 (closed form {root2:.12g})")
assert math.isclose(level_1, eps, rel_tol=1e-9)
assert math.isclose(level_2, root2, rel_tol=1e-9)

laplace = planar_laplace(grid, eps, step=step)
level_l = dpcap.dp_epsilon(laplace, metric=euclid)
print(f"planar Laplace on the cells: eps' = {level_l:.12g} <= eps = {eps:.12g}")
assert level_l <= eps * (1 + 1e-12)

# %%
# The optimal ε·d₂-private mechanism against the remapped planar mechanisms
# -------------------------------------------------------------------------
#
# A user at a uniformly random grid point reports a point; the loss is the distance between
# them. The consumer may remap a report to the point of least expected distance (a Bayesian
# remap, post-processing, so the remapped mechanism is still ε·d₂-private).
prior = np.full(euclid.shape[0], 1 / euclid.shape[0])


def remapped_loss(W: np.ndarray) -> float:
    """Expected distance after the consumer's optimal remap of each report."""
    cost = (prior[:, None] * W).T @ euclid  # cost[z, y] = Σ_x p_x W[x, z] d(x, y)
    return float(cost.min(axis=1).sum())


scales = [0.5, 1.0, 2.0, 4.0]  # multiples of the ln 4 / 200 m level
rows = []
print(f"{'eps (per km)':>12} {'LP lower':>10} {'LP upper':>10} {'geometric':>10} {'Laplace':>10}")
for scale in scales:
    e = scale * eps
    res = dpcap.optimal_mechanism(prior, euclid, e, metric=euclid)
    geo = remapped_loss(planar_geometric(grid, e, step=step).matrix)
    lap = remapped_loss(planar_laplace(grid, e, step=step).matrix)
    print(f"{1000 * e:12.4f} {res.lower:10.4f} {res.upper:10.4f} {geo:10.4f} {lap:10.4f}")
    assert res.dp_level <= e  # the LP's mechanism is itself ε·d₂-private
    assert res.upper - res.lower <= 1e-6
    assert res.lower <= geo + 1e-9  # each planar mechanism is a feasible point
    assert res.lower <= lap + 1e-9
    rows.append((e, res.lower, res.upper, geo, lap))
curve = np.array(rows)

# %%
# The figure: a planar geometric output law, and d*(ε) against the planar mechanisms
# ----------------------------------------------------------------------------------
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 4))
centre = (grid[0] // 2) * grid[1] + grid[1] // 2
image = left.imshow(geometric.matrix[centre].reshape(grid), cmap="viridis", origin="lower")
left.set_title(f"planar geometric, from the centre\n(ε = ln 4 / 200 m, cells of {step:g} m)")
left.title.set_fontsize(9)
fig.colorbar(image, ax=left, shrink=0.8, label="P(report)")
right.plot(1000 * curve[:, 0], curve[:, 2], "ko-", mfc="none", label="optimal (LP, certified)")
right.plot(1000 * curve[:, 0], curve[:, 3], "C0s--", label="planar geometric + remap")
right.plot(1000 * curve[:, 0], curve[:, 4], "C1^--", label="planar Laplace + remap")
right.set_xlabel("ε (per km)")
right.set_ylabel("expected distance (m)")
right.set_title("least expected distance of an ε·d₂-private mechanism")
right.title.set_fontsize(9)
right.legend(fontsize=7)
fig.tight_layout()
fig.savefig(OUT / "geo_indistinguishability.png", dpi=120)
