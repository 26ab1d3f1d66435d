"""g-vulnerability, g-leakage, Bayes risk and guessing entropy at one prior (dpcap.qif).

Every expected value is a closed form or a theorem written out here, never the code's output:

* libqif's test suite (chatziko/libqif, ``tests/src/measure/*.cpp``): with ``c1 = [[0.8, 0.2],
  [0.3, 0.7]]``, ``π1 = (0.2, 0.8)``, ``π3 = (0.25, 0.75)``, ``π4 = (0.75, 0.25)``, identity
  channels ``id_n`` and the non-interfering channel ``noint_n`` (one output): Bayes
  vulnerability ``max π``, ``V_1[π4▷c1] = 31/40``, ``V_1[π3▷c1] = V_1(π3)``, Bayes risk ``1 − V``
  (``9/40`` for π4 and c1), guessing entropy ``1.2`` for π1, ``5.5`` for uniform on 10, and
  ``1.225`` after c1 at π4; min-entropy leakage ``log2 1.5`` bits for c1 at the uniform prior;
* identities: the multiplicative Bayes leakage is ``exp`` of the min-entropy leakage (nats);
  the 0-1 loss gives ``U = 1 − V``; the additive risk leakage of ℓ is the additive g-leakage of
  ``−ℓ``; the additive g-leakage is invariant under adding a vector ``κ(x)`` to every guess and
  scales with a positive factor, the multiplicative one is invariant under that factor;
* theorems (hypothesis): ``V_g[π▷W] ≥ V_g(π)``; the miracle theorem ``L_g^×(π, W) ≤
  Σ_y max_x W[x, y]`` for ``g ≥ 0`` (Alvim et al. 2020, Thm 7.5); the additive miracle theorem
  ``L_g^+(π, W) ≤ 1 − Σ_y min_x W[x, y]`` for ``0 ≤ g ≤ 1`` (§9); data processing
  ``V_g[π▷WV] ≤ V_g[π▷W]`` (Alvim et al. 2012); ``1 ≤ G(π▷W) ≤ G(π) ≤ (n + 1)/2``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcap
from dpcap import qif
from dpcap.errors import ChannelError, ParameterError, PriorError
from dpcap.testing import channels, distributions

C1 = np.array([[0.8, 0.2], [0.3, 0.7]])
PI1, PI3, PI4 = [0.2, 0.8], [0.25, 0.75], [0.75, 0.25]
PI2 = [0.2, 0.8] + [0.0] * 8


def uniform(n: int) -> list[float]:
    return [1.0 / n] * n


def dirac(n: int) -> list[float]:
    return [1.0] + [0.0] * (n - 1)


def noint(n: int) -> np.ndarray:
    return np.ones((n, 1))


# --------------------------------------------------------------------------- libqif's values


def test_bayes_vulnerability_and_risk_libqif() -> None:
    """libqif's test suite: ``V_1 = max π`` and ``U = 1 − max π``."""
    for prior, v in ((uniform(2), 0.5), (uniform(10), 0.1), (dirac(4), 1.0), (PI1, 0.8)):
        assert qif.bayes_vulnerability(prior) == pytest.approx(v, abs=1e-15)
        assert qif.g_vulnerability(prior) == pytest.approx(v, abs=1e-15)
        assert qif.bayes_risk(prior) == pytest.approx(1.0 - v, abs=1e-15)


@pytest.mark.parametrize(
    ("prior", "W", "expected"),
    [
        (uniform(2), np.eye(2), 1.0),
        (dirac(2), np.eye(2), 1.0),
        (PI1, np.eye(2), 1.0),
        (uniform(10), np.eye(10), 1.0),
        (PI2, np.eye(10), 1.0),
        (uniform(10), noint(10), 0.1),
        (dirac(10), noint(10), 1.0),
        (PI2, noint(10), 0.8),
        (PI3, C1, 0.75),
        (PI4, C1, 31 / 40),
    ],
)
def test_posterior_bayes_vulnerability_libqif(
    prior: list[float], W: np.ndarray, expected: float
) -> None:
    """libqif's test suite: posterior Bayes vulnerability, and the risk ``1 − V``."""
    assert qif.posterior_bayes_vulnerability(prior, W) == pytest.approx(expected, abs=1e-14)
    assert qif.posterior_g_vulnerability(prior, W) == pytest.approx(expected, abs=1e-14)
    G = np.eye(len(prior))
    assert qif.posterior_g_vulnerability(prior, W, G) == pytest.approx(expected, abs=1e-14)
    assert qif.posterior_bayes_risk(prior, W) == pytest.approx(1 - expected, abs=1e-14)
    L = 1.0 - np.eye(len(prior))
    assert qif.posterior_bayes_risk(prior, W, L) == pytest.approx(1 - expected, abs=1e-14)


def test_min_entropy_leakage_libqif() -> None:
    """libqif's test suite, in bits: 1 (id_2), log2 10 (id_10), 0 (noint_10), log2 1.5 (c1)."""
    cases = (
        (uniform(2), np.eye(2), 1.0),
        (uniform(10), np.eye(10), math.log2(10)),
        (uniform(10), noint(10), 0.0),
        (uniform(2), C1, math.log2(1.5)),
    )
    for prior, W, bits in cases:
        assert math.log2(qif.bayes_leakage(prior, W)) == pytest.approx(bits, abs=1e-14)
        assert math.log2(qif.g_leakage(prior, W)) == pytest.approx(bits, abs=1e-14)


def test_guessing_entropy_libqif() -> None:
    """libqif's test suite: 1.5, 5.5, 1, 1.2 before; 1, 5.5, 1, G(π) and 1.225 after."""
    for prior, g in ((uniform(2), 1.5), (uniform(10), 5.5), (dirac(4), 1.0), (PI1, 1.2)):
        assert qif.guessing_entropy(prior) == pytest.approx(g, abs=1e-14)
    cases = (
        (uniform(2), np.eye(2), 1.0),
        (PI1, np.eye(2), 1.0),
        (uniform(10), np.eye(10), 1.0),
        (PI2, np.eye(10), 1.0),
        (uniform(10), noint(10), 5.5),
        (dirac(10), noint(10), 1.0),
        (PI2, noint(10), 1.2),
        (PI3, C1, 1.25),
        (PI4, C1, 1.225),
    )
    for prior, W, g in cases:
        assert qif.posterior_guessing_entropy(prior, W) == pytest.approx(g, abs=1e-14)


def test_risk_leakage_libqif_and_closed_forms() -> None:
    """``U(π)/U[π▷W]``: c1 at the uniform prior is ``(1/2)/(1/4) = 2``; ∞ for id_2."""
    assert qif.risk_leakage(uniform(2), C1) == pytest.approx(2.0, rel=1e-14)
    assert qif.risk_leakage(uniform(2), np.eye(2)) == math.inf
    assert qif.risk_leakage(PI4, C1, kind="additive") == pytest.approx(0.25 - 9 / 40, abs=1e-15)
    assert qif.risk_leakage(uniform(3), noint(3)) == 1.0


# --------------------------------------------------------------------------- identities


def test_strategy_of_c1() -> None:
    """At π4 the best guess after y0 is secret 0 (0.6 > 0.075), after y1 secret 1."""
    assert qif.g_strategy(PI4, C1).tolist() == [0, 1]
    G = np.array([[0.0, 1.0], [1.0, 0.0]])  # rows swapped: the guesses swap too
    assert qif.g_strategy(PI4, C1, G).tolist() == [1, 0]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_bayes_leakage_is_exp_min_entropy_leakage(data: st.DataObject) -> None:
    W = data.draw(channels(max_inputs=5, max_outputs=5))
    p = data.draw(distributions(W.shape[0]))
    mult = qif.bayes_leakage(p, W)
    assert math.log(mult) == pytest.approx(dpcap.min_entropy_leakage(p, W), abs=1e-12)
    assert qif.g_leakage(p, W) == pytest.approx(mult, rel=1e-14)
    add = qif.bayes_leakage(p, W, kind="additive")
    assert add == pytest.approx(max(p) * (mult - 1.0), abs=1e-14)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_gain_shift_scale_and_loss_identities(data: st.DataObject) -> None:
    W = data.draw(channels(max_inputs=4, max_outputs=4))
    n = W.shape[0]
    p = data.draw(distributions(n))
    k = data.draw(st.integers(1, 4))
    G = np.array(data.draw(st.lists(st.floats(0.05, 2.0), min_size=k * n, max_size=k * n)))
    G = G.reshape(k, n)
    kappa = np.array(data.draw(st.lists(st.floats(-3.0, 3.0), min_size=n, max_size=n)))
    add = qif.g_leakage(p, W, G, kind="additive")
    assert qif.g_leakage(p, W, G + kappa, kind="additive") == pytest.approx(add, abs=1e-12)
    assert qif.g_leakage(p, W, 3.0 * G, kind="additive") == pytest.approx(3 * add, abs=1e-12)
    mult = qif.g_leakage(p, W, G)
    assert qif.g_leakage(p, W, 3.0 * G) == pytest.approx(mult, rel=1e-12)
    assert qif.risk_leakage(p, W, G, kind="additive") == pytest.approx(
        qif.g_leakage(p, W, -G, kind="additive"), abs=1e-12
    )
    assert qif.bayes_risk(p, G) == pytest.approx(-qif.g_vulnerability(p, -G), abs=1e-15)


# --------------------------------------------------------------------------- theorems


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_miracle_theorems(data: st.DataObject) -> None:
    """For ``g ≥ 0``: ``L_g^× ≤ Σ_y max_x W``; for ``0 ≤ g ≤ 1``: ``L_g^+ ≤ 1 − Σ_y min_x W``."""
    W = data.draw(channels(max_inputs=5, max_outputs=5, degenerate=True))
    n = W.shape[0]
    p = data.draw(distributions(n, allow_zeros=False))
    k = data.draw(st.integers(1, 5))
    G = np.array(data.draw(st.lists(st.floats(0.0, 1.0), min_size=k * n, max_size=k * n)))
    G = G.reshape(k, n)
    prior_v = qif.g_vulnerability(p, G)
    post_v = qif.posterior_g_vulnerability(p, W, G)
    assert post_v >= prior_v - 1e-15
    if prior_v > 0:
        assert qif.g_leakage(p, W, G) <= np.sum(np.max(W, axis=0)) * (1 + 1e-12)
    add = qif.g_leakage(p, W, G, kind="additive")
    assert add <= 1.0 - np.sum(np.min(W, axis=0)) + 1e-12


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_data_processing_and_guessing_bounds(data: st.DataObject) -> None:
    W = data.draw(channels(max_inputs=4, max_outputs=4))
    n, m = W.shape
    V = data.draw(channels(min_inputs=m, max_inputs=m, max_outputs=4))
    p = data.draw(distributions(n))
    G = np.array(data.draw(st.lists(st.floats(-1.0, 1.0), min_size=3 * n, max_size=3 * n)))
    G = G.reshape(3, n)
    assert (
        qif.posterior_g_vulnerability(p, W @ V, G) <= qif.posterior_g_vulnerability(p, W, G) + 1e-12
    )
    before, after = qif.guessing_entropy(p), qif.posterior_guessing_entropy(p, W)
    assert 1.0 - 1e-12 <= after <= before + 1e-12
    assert before <= (n + 1) / 2 + 1e-12
    assert qif.guessing_leakage(p, W) >= 1.0
    assert qif.guessing_leakage(p, W, kind="additive") == pytest.approx(
        max(before - after, 0.0), abs=1e-15
    )


# --------------------------------------------------------------------------- input rules


@pytest.mark.parametrize(
    ("gain", "match"),
    [
        ([[1.0, 0.0, 0.0]], r"gain must be a 2-D matrix gain\[w, x\].*\(2\), got shape \(1, 3\)"),
        ([1.0, 0.0], r"gain must be a 2-D matrix.*got shape \(2,\)"),
        ([[1.0, float("nan")]], r"gain must be finite, got nan at index \(0, 1\)"),
        ([[1.0, float("inf")]], r"gain must be finite, got inf at index \(0, 1\)"),
        ([[1.0, 1j]], r"gain must be real, got complex"),
        ("G.npy", r"gain must be .* got the string 'G.npy'"),
        ([[True, False]], r"gain must hold numbers, got booleans"),
        ([[1.0, 0.0], [1.0]], r"gain must be a rectangular array.*ragged"),
        (np.zeros((0, 2)), r"gain must be a 2-D matrix.*got shape \(0, 2\)"),
    ],
)
def test_bad_gains_are_refused(gain: object, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        qif.g_vulnerability([0.5, 0.5], gain)
    with pytest.raises(ParameterError, match=match.replace("gain", "loss")):
        qif.bayes_risk([0.5, 0.5], gain)


def test_bad_priors_channels_and_kinds_are_refused() -> None:
    with pytest.raises(PriorError, match=r"prior must have length 2, got length 3"):
        qif.g_leakage([0.2, 0.3, 0.5], C1)
    with pytest.raises(PriorError, match=r"prior must sum to 1"):
        qif.guessing_entropy([0.2, 0.2])
    with pytest.raises(ChannelError, match=r"W is not row-stochastic: row 1 sums to 0.9"):
        qif.posterior_g_vulnerability([0.5, 0.5], [[0.5, 0.5], [0.4, 0.5]])
    with pytest.raises(
        ParameterError, match=r"kind must be one of \('multiplicative', 'additive'\)"
    ):
        qif.g_leakage([0.5, 0.5], C1, kind="ratio")
    with pytest.raises(ParameterError, match=r"kind must be one of"):
        qif.risk_leakage([0.5, 0.5], C1, kind=None)  # type: ignore[arg-type]


def test_ratios_need_a_positive_denominator() -> None:
    G = np.array([[-1.0, 0.0], [0.0, -2.0]])
    with pytest.raises(ParameterError, match=r"multiplicative g-leakage needs V_g\(prior\) > 0"):
        qif.g_leakage([0.5, 0.5], C1, G)
    assert qif.g_leakage([0.5, 0.5], C1, G, kind="additive") >= 0.0
    with pytest.raises(ParameterError, match=r"loss has a negative entry -1.0 at index \(0, 0\)"):
        qif.risk_leakage([0.5, 0.5], C1, G)
    with pytest.raises(
        ParameterError, match=r"multiplicative risk leakage needs U_loss\(prior\) > 0"
    ):
        qif.risk_leakage([1.0, 0.0], C1)
