"""dpcap.interop: dp_accounting and OpenDP, the real packages (the ``interop`` extra).

The sandwich: a PLD exported from dpcap and composed in dp_accounting is pessimistic (or
optimistic) by construction, so its δ must lie above dpcap's certified lower end (below its
upper end); expected values of the OpenDP readings are closed forms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpcap
from dpcap import interop
from dpcap.errors import MechanismError, ParameterError
from dpcap.mechanisms import randomized_response, truncated_geometric

pytest.importorskip("dp_accounting")
dp = pytest.importorskip("opendp.prelude")
dp.enable_features("contrib")

#: dp_accounting drops tail masses below ~1e-15 when it composes (its documented floor).
FLOOR = 1e-14


@pytest.mark.parametrize(
    ("mechanism", "k", "pair"),
    [
        (randomized_response(4, 1.0), 100, None),
        (randomized_response(2, 0.5), 40, None),
        (truncated_geometric(4, 0.7), 10, (0, 1)),
    ],
)
def test_dp_accounting_sandwiches_dpcap(mechanism: object, k: int, pair: object) -> None:
    pess = interop.to_dp_accounting(mechanism, pair=pair).self_compose(k)
    opt = interop.to_dp_accounting(mechanism, pair=pair, pessimistic_estimate=False)
    opt = opt.self_compose(k)
    eps = np.linspace(0.0, 0.6 * k, 7)
    if pair is None:
        curve = dpcap.composed_delta_curve([(mechanism, k)], eps)
    else:  # the pair alone: its two orders as the relation
        curve = dpcap.composed_delta_curve([(mechanism, k)], eps, neighbors=[list(pair)])
    for i, e in enumerate(eps):
        assert pess.get_delta_for_epsilon(float(e)) >= curve.lower[i] - FLOOR
        assert opt.get_delta_for_epsilon(float(e)) <= curve.upper[i] + FLOOR
    # dpcap's bracket is far narrower than dp_accounting's pessimistic/optimistic gap
    wide = [pess.get_delta_for_epsilon(float(e)) - opt.get_delta_for_epsilon(float(e)) for e in eps]
    assert np.max(curve.gap) * 100 <= max(wide)


def test_several_worst_pairs_are_named() -> None:
    with pytest.raises(MechanismError, match="can be the worst"):
        interop.to_dp_accounting(truncated_geometric(5, 1.0))
    with pytest.raises(ParameterError, match="not an ordered pair"):
        interop.to_dp_accounting(truncated_geometric(5, 1.0), pair=(0, 3))
    with pytest.raises(ParameterError, match="value_discretization_interval"):
        interop.to_dp_accounting(randomized_response(2, 1.0), value_discretization_interval=0.0)


def test_from_opendp_randomized_response() -> None:
    W = interop.from_opendp(dp.m.make_randomized_response_bool(0.75), values=[False, True])
    assert np.allclose(W.matrix, [[0.75, 0.25], [0.25, 0.75]], rtol=1e-14)
    cats = interop.from_opendp(dp.m.make_randomized_response(["a", "b", "c"], 0.6), values="abc")
    # OpenDP: keep with prob 0.6, else uniform over the other two
    assert np.allclose(cats.matrix, [[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]])


def test_from_opendp_integer_laplace_keeps_every_dp_quantity() -> None:
    scale = 2.0
    m = dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale)
    W = interop.from_opendp(m, values=range(0, 5))
    a = 1.0 / scale
    assert dpcap.dp_epsilon(W) == pytest.approx(a, rel=1e-12)
    # adjacent inputs: loss +a with probability P(Z <= 0) = 1/(1 + r), −a otherwise
    r = math.exp(-a)
    for eps in (0.0, 0.2, 0.45):
        exact = (1.0 - math.exp(eps - a)) / (1.0 + r)
        assert dpcap.dp_delta(W, eps) == pytest.approx(exact, rel=1e-12)
    with pytest.raises(ParameterError, match="range"):
        interop.from_opendp(m, values=[0, 2, 5])


def test_from_opendp_refuses_other_measures() -> None:
    m = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0)
    with pytest.raises(MechanismError):
        interop.from_opendp(m, values=range(3))


def test_to_opendp_carries_the_exact_level() -> None:
    M = truncated_geometric(5, 0.8)
    m = interop.to_opendp(M)
    assert m.map(1) == pytest.approx(0.8, rel=1e-12)
    assert m.map(2) == pytest.approx(1.6, rel=1e-12)  # group privacy, exact for this noise
    assert 0 <= m(3) <= 5
    approx = interop.to_opendp(randomized_response(3, 1.0), delta=1e-6)
    eps, delta = approx.map(1)
    assert delta == 1e-6
    assert eps <= 1.0
    assert dpcap.dp_delta(randomized_response(3, 1.0), eps) <= 1e-6 + 1e-15
