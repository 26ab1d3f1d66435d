"""Fuzz group ``capacity``: :func:`dpcap.capacity` and :func:`dpcap.capacities`.

References: a plain Blahut–Arimoto whose prior is certified exactly in mpmath (a rigorous
bracket whether or not it converged), the closed forms of randomized response, the binary
symmetric and the erasure channel, and exact invariances (``docs/mathematics.rst`` §1).
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
from _harness import fuzz
from _reference import (
    LN2,
    MP_SLACK,
    capacity_reference,
    mp_binary_entropy,
    mp_capacity_bracket,
    mp_mutual_information,
    normalise,
)
from hypothesis import example, given
from hypothesis import strategies as st

import dpcap
from dpcap import mechanisms as mech
from dpcap.testing import channels, epsilons

#: Rounding allowance of a float64 bracket (the certified gap is 1e-9; the divergences are
#: evaluated to about 1e-15 relative): a miss beyond it is a wrong number, not rounding.
FLOAT_SLACK = 1e-12


def no_deep_tiny(W: np.ndarray) -> bool:
    """Masses near 1e-300 meet the engine's known gap (F1, tested apart below)."""
    return not ((W > 0) & (W < 1e-150)).any()


small_channels = channels(max_inputs=4, max_outputs=4, degenerate=True).filter(no_deep_tiny)


def quietly(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        return call(*args, **kwargs)


def check_result(res: dpcap.CapacityResult, W: np.ndarray, tol: float = 1e-9) -> None:
    """What every capacity result promises, whatever its status."""
    Wn = normalise(W)
    nx, _ny = Wn.shape
    assert 0.0 <= res.lower <= res.upper, res
    assert res.value == res.upper
    used = int((Wn.sum(axis=0) > 0).sum())
    assert res.lower <= math.log(min(nx, used)) + FLOAT_SLACK  # C ≤ log min(|X|, |Y|)
    assert res.prior.shape == (nx,)
    assert (res.prior >= 0).all()
    assert abs(res.prior.sum() - 1.0) <= 1e-12
    np.testing.assert_allclose(res.output, res.prior @ Wn, rtol=1e-12, atol=1e-15)
    if res.status is dpcap.Status.CONVERGED:
        assert res.upper - res.lower <= tol
    # lower is the information of the returned prior
    info = float(mp_mutual_information(res.prior, Wn))
    assert abs(info - res.lower) <= FLOAT_SLACK * (1.0 + info), (info, res.lower)


def contains(res: dpcap.CapacityResult, ref: tuple[float, float], slack: float) -> None:
    lo, hi = ref
    allowance = slack * (1.0 + abs(hi))
    assert res.lower <= hi + allowance, f"lower {res.lower!r} above the truth <= {hi!r}"
    assert res.upper >= lo - allowance, f"upper {res.upper!r} below the truth >= {lo!r}"


@fuzz(examples=3000, quick=6)
@given(W=small_channels)
def test_bracket_contains_the_blahut_arimoto_reference(W: np.ndarray) -> None:
    res = quietly(dpcap.capacity, W)
    check_result(res, W)
    contains(res, capacity_reference(W), FLOAT_SLACK)


@fuzz(examples=300, quick=4)
@given(W=channels(max_inputs=4, max_outputs=4, underflow=True))
@example(
    W=np.array(
        [
            [1.25e-300, 0.0, 0.5, 0.5],
            [0.2, 1.2e-300, 0.4, 0.4],
            [0.5, 0.0, 0.5, 1.5e-300],
            [2 / 3, 0.0, 1.66666667e-300, 1 / 3],
        ]
    )
)
def test_underflowing_entries(W: np.ndarray) -> None:
    """Fuzz finding F1: masses below ~1e-306 gave a wrong lower end (lower 0.5 for a capacity of
    3.5e-309), masses near 1e-300 hundreds of RuntimeWarnings (0·∞ in the Newton Jacobian)."""
    res = dpcap.capacity(W, max_iter=2000)
    check_result(res, W)
    contains(res, capacity_reference(W), FLOAT_SLACK)


@fuzz(examples=800, quick=6)
@given(
    W=st.one_of(
        small_channels,
        st.builds(
            lambda k, e: mech.randomized_response(k, e).matrix,
            st.sampled_from([2, 5, 40]),
            st.sampled_from([1e-8, 1e-6, 1e-3, 0.1, 1.0]),
        ),
    )
)
def test_bracket_holds_in_floating_point(W: np.ndarray) -> None:
    # the truth lies in [lower, upper] exactly, with only the reference's 40-digit error
    res = quietly(dpcap.capacity, W)
    contains(res, capacity_reference(W), MP_SLACK)


@fuzz(examples=1500, quick=4)
@given(k=st.integers(2, 12), eps=epsilons(max_value=60.0))
def test_randomized_response_closed_form(k: int, eps: float) -> None:
    W = mech.randomized_response(k, eps)
    res = quietly(dpcap.capacity, W)
    e = mpmath.exp(-mpmath.mpf(eps))  # q / p
    p = 1 / (1 + (k - 1) * e)
    q = e * p
    exact = mpmath.log(k) + p * mpmath.log(p) + ((k - 1) * q * mpmath.log(q) if q > 0 else 0)
    exact = float(exact)
    # the float matrix is exactly symmetric: the uniform prior's bracket is its capacity
    lo, hi = mp_capacity_bracket(normalise(W.matrix), np.full(k, 1.0 / k))
    contains(res, (float(lo), float(hi)), FLOAT_SLACK)
    assert abs(res.value - exact) <= 1e-9 * exact + 1e-14, (res, exact)


@fuzz(examples=800, quick=3)
@given(p=st.floats(0.0, 1.0))
def test_binary_symmetric_closed_form(p: float) -> None:
    res = quietly(dpcap.capacity, mech.binary_symmetric(p))
    exact = float(mpmath.log(2) - mp_binary_entropy(p))
    assert abs(res.value - exact) <= 1e-9, (res, exact)
    assert res.lower <= exact + 1e-12
    assert res.upper >= exact - 1e-12


@fuzz(examples=700, quick=3)
@given(n=st.integers(1, 8), delta=st.floats(0.0, 1.0))
def test_erasure_closed_form(n: int, delta: float) -> None:
    res = quietly(dpcap.capacity, mech.erasure(n, delta))
    exact = delta * math.log(n)
    assert abs(res.value - exact) <= 1e-9 * (1 + exact), (res, exact)
    assert res.lower <= exact * (1 + 1e-12) + 1e-15
    assert res.upper >= exact * (1 - 1e-12) - 1e-15


@fuzz(examples=1500, quick=4)
@given(W=small_channels, data=st.data())
def test_invariances(W: np.ndarray, data: st.DataObject) -> None:
    """Row and column permutations, a duplicated row and a zero column leave C unchanged; bits
    are nats / ln 2."""
    base = quietly(dpcap.capacity, W)
    rows = data.draw(st.permutations(range(W.shape[0])))
    cols = data.draw(st.permutations(range(W.shape[1])))
    dup = data.draw(st.integers(0, W.shape[0] - 1))
    variants = [
        W[list(rows)][:, list(cols)],
        np.vstack([W, W[dup]]),
        np.hstack([W, np.zeros((W.shape[0], 1))]),
    ]
    for V in variants:
        other = quietly(dpcap.capacity, V)
        allowance = FLOAT_SLACK * (1 + base.upper)
        assert other.lower <= base.upper + allowance, (base, other)
        assert base.lower <= other.upper + allowance, (base, other)
    bits = quietly(dpcap.capacity, W, unit="bits")
    assert bits.unit == "bits"
    for field in ("lower", "upper", "value"):
        nats = getattr(base, field)
        assert abs(getattr(bits, field) - nats / LN2) <= 1e-15 * (1 + nats), field


@fuzz(examples=1000, quick=3)
@given(W=small_channels, budget=st.integers(1, 6), tol=st.sampled_from([1e-3, 1e-9, 1e-12]))
def test_small_budgets_still_certify(W: np.ndarray, budget: int, tol: float) -> None:
    """An open bracket is still a valid bracket: ``lower ≤ C ≤ upper`` after a few iterations."""
    res = quietly(dpcap.capacity, W, max_iter=budget, tol=tol)
    check_result(res, W, tol)
    contains(res, capacity_reference(W), FLOAT_SLACK)


@fuzz(examples=1200, quick=3)
@given(
    batch=st.lists(
        channels(max_inputs=3, max_outputs=3, degenerate=True).filter(no_deep_tiny),
        min_size=1,
        max_size=4,
    )
)
def test_capacities_agree_with_the_reference(batch: list[np.ndarray]) -> None:
    res = quietly(dpcap.capacities, batch)
    assert len(res) == len(batch)
    for i, W in enumerate(batch):
        one = res[i]
        check_result(one, W)
        contains(one, capacity_reference(W), FLOAT_SLACK)
    same = [b for b in batch if b.shape == batch[0].shape]
    if len(same) == len(batch):
        stacked = quietly(dpcap.capacities, np.stack(batch))
        for i, W in enumerate(batch):
            contains(stacked[i], capacity_reference(W), FLOAT_SLACK)


@fuzz(examples=300, quick=2)
@given(W=channels(max_inputs=3, max_outputs=3, degenerate=True).filter(no_deep_tiny))
def test_conic_engine_agrees(W: np.ndarray) -> None:
    res = quietly(dpcap.capacity, W, method="conic")
    check_result(res, W)
    contains(res, capacity_reference(W), FLOAT_SLACK)


@fuzz(examples=500, quick=2)
@given(W=small_channels)
def test_channel_objects_and_arrays_agree(W: np.ndarray) -> None:
    plain = quietly(dpcap.capacity, W)
    as_channel = quietly(dpcap.capacity, dpcap.Channel(W))
    as_mechanism = quietly(dpcap.capacity, dpcap.Mechanism(W, (W.shape[0],)))
    # a Channel holds the matrix renormalised once more (an ulp may move, and the engine may
    # stop one iteration apart): the brackets are both valid, so they overlap
    for other in (as_channel, as_mechanism):
        allowance = FLOAT_SLACK * (1 + plain.upper)
        assert other.lower <= plain.upper + allowance, (plain, other)
        assert plain.lower <= other.upper + allowance, (plain, other)
