"""The batched capacity engine on other array libraries, through the Python array API standard.

``array_api_strict`` implements the standard and nothing else, and refuses to combine arrays of
two of its devices: an engine that ran a NumPy-only call, or created an array on the default
device, fails on it. Each channel is solved there (on the device ``device1``) and with NumPy, and
both engines' priors are certified on the host by the same NumPy float64 certificate
(``docs/mathematics.rst`` §1 and §8). Checked:

* closed forms inside both certified brackets, which therefore overlap: the binary symmetric
  channel, ``C = log 2 − h(δ)`` nats (Shannon 1948; Cover and Thomas 2006, §7.1.4); the Z-channel
  ``W = [[1, 0], [ε, 1 − ε]]``, ``C = log(1 + (1 − ε) ε^{ε/(1−ε)})`` nats (Golomb 1980); the
  same channels with duplicate rows and zero columns, which do not change a capacity; a channel
  with subnormal entries (``C`` within 1e-300 of ``log 2``);
* for random Dirichlet stacks, overlapping brackets, each of width at most ``tol``;
* the arrays the engine model receives are on the input's device, and results are host NumPy;
* the generic linear solve: NumPy's least-squares answer for a singular system, NaN for a
  non-finite one;
* Sibson's α-capacity model the same way: the binary symmetric channel's ``log 2 − H_α(δ)``
  inside both brackets (orders near 1 included), random stacks with overlapping brackets;
* PyTorch (CPU) the same way when it is installed; ``import dpcap`` imports neither library.
"""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Any

import mpmath as mp  # type: ignore[import-untyped]
import numpy as np
import pytest
from numpy.typing import NDArray

import dpcap
from dpcap import ChannelError, Status
from dpcap._core import certify as _certify
from dpcap.solvers import blahut, kkt_newton, renyi

xp = pytest.importorskip("array_api_strict")

FloatArray = NDArray[np.float64]

#: The device of the strict arrays: not the default one, so a stray array would be refused.
DEVICE = xp.Device("device1")

#: Rounding slack of a closed form evaluated here (a handful of roundings of numbers ≤ log 4).
SLACK = 1e-14
TOL = 1e-10


def h(d: float) -> float:
    """Binary entropy (nats)."""
    return -d * math.log(d) - (1 - d) * math.log(1 - d)


def bsc(d: float) -> FloatArray:
    return np.array([[1 - d, d], [d, 1 - d]])


def z_channel(e: float) -> FloatArray:
    return np.array([[1.0, 0.0], [e, 1 - e]])


def z_capacity(e: float) -> float:
    return math.log1p((1 - e) * e ** (e / (1 - e)))


def padded(W: FloatArray) -> FloatArray:
    """``W`` with its first row repeated and a zero column inserted: the same capacity."""
    rows = np.vstack([W, W[:1]])
    return np.insert(rows, 1, 0.0, axis=1)


def closed_forms() -> list[tuple[str, FloatArray, float]]:
    subnormal = np.array([[1.0, 5e-324, 0.0], [0.0, 5e-324, 1.0]])  # rows sum to 1.0 in float
    return [
        ("bsc 0.11", bsc(0.11), math.log(2) - h(0.11)),
        ("bsc 0.5", bsc(0.5), 0.0),
        ("z 0.3", z_channel(0.3), z_capacity(0.3)),
        ("z 0.9", z_channel(0.9), z_capacity(0.9)),
        ("bsc padded", padded(bsc(0.2)), math.log(2) - h(0.2)),
        ("z padded", padded(z_channel(0.45)), z_capacity(0.45)),
        ("subnormal", subnormal, math.log(2)),
        ("identity", np.eye(4), math.log(4)),
    ]


def strict(W: FloatArray) -> Any:
    return xp.asarray(W, device=DEVICE)


def certified(W: FloatArray, sol: blahut.BatchSolution) -> tuple[FloatArray, FloatArray]:
    """The host certificate of an engine's priors (the one the query layer evaluates)."""
    return _certify.batch_bracket(W, sol.prior, sol.upper_prior)


class DeviceRecorder:
    """Shannon's model, asserting that every array it is handed is a strict array on DEVICE."""

    def __init__(self) -> None:
        self.inner = blahut.Shannon()
        self.calls = 0

    def _check(self, *arrays: Any) -> None:
        for a in arrays:
            assert not isinstance(a, np.ndarray)
            assert a.device == DEVICE
        self.calls += 1

    def prepare(self, W: Any) -> Any:
        self._check(W)
        return self.inner.prepare(W)

    def divergences(self, W: Any, aux: Any, p: Any) -> Any:
        self._check(W, aux, p)
        return self.inner.divergences(W, aux, p)

    def lower(self, W: Any, aux: Any, p: Any, D: Any) -> Any:
        self._check(W, aux, p, D)
        return self.inner.lower(W, aux, p, D)

    def jacobian(self, W: Any, aux: Any, p: Any, D: Any) -> Any:
        self._check(W, aux, p, D)
        return self.inner.jacobian(W, aux, p, D)


# --------------------------------------------------------------------------------------------
# The engine on array_api_strict


@pytest.mark.parametrize(("name", "W", "capacity"), closed_forms(), ids=lambda v: str(v)[:12])
def test_closed_forms_inside_both_certified_brackets(
    name: str, W: FloatArray, capacity: float
) -> None:
    stack = W[None]
    ours = blahut.solve(strict(stack), tol=TOL)
    numpy = blahut.solve(stack, tol=TOL)
    assert isinstance(ours.prior, np.ndarray)
    assert isinstance(ours.upper_prior, np.ndarray)
    assert ours.converged[0]
    for sol in (ours, numpy):
        lower, upper = certified(stack, sol)
        assert lower[0] - SLACK <= capacity <= upper[0] + SLACK, name
        assert upper[0] - lower[0] <= TOL + 1e-12


def test_random_stacks_agree_with_numpy_within_their_certificates() -> None:
    rng = np.random.default_rng(15)
    for nx, ny in ((4, 8), (7, 3), (12, 12)):
        stack = rng.dirichlet(np.full(ny, 0.5), size=(40, nx))
        ours = blahut.solve(strict(stack), tol=TOL)
        numpy = blahut.solve(stack, tol=TOL)
        assert ours.converged.all()
        lo_a, up_a = certified(stack, ours)
        lo_b, up_b = certified(stack, numpy)
        assert np.all(up_a - lo_a <= TOL + 1e-12)
        assert np.all(lo_a <= up_b)
        assert np.all(lo_b <= up_a)


def test_the_engine_never_leaves_the_device() -> None:
    """Every array the model sees lives on the input's device (the Newton polish included:
    a truncated geometric mechanism with a sparse optimal prior)."""
    W = np.asarray(dpcap.mechanisms.truncated_geometric(30, 0.2))[None]
    recorder = DeviceRecorder()
    sol = blahut.solve(strict(W), tol=TOL, model=recorder)
    assert recorder.calls > 0
    assert sol.converged[0]
    lower, upper = certified(W, sol)
    reference = dpcap.capacity(W[0], tol=TOL)
    assert lower[0] <= reference.upper
    assert reference.lower <= upper[0]


def test_initial_priors_and_float32_input_are_accepted() -> None:
    W = np.stack([bsc(0.1), z_channel(0.3)])
    start = np.array([[1.0, 0.0], [0.2, 0.8]])  # a zero mass regains weight (floor e^-700)
    sol = blahut.solve(strict(W), tol=TOL, initial=start)
    lower, upper = certified(W, sol)
    for k, capacity in enumerate((math.log(2) - h(0.1), z_capacity(0.3))):
        assert lower[k] - SLACK <= capacity <= upper[k] + SLACK
    low = blahut.solve(xp.astype(strict(W), xp.float32), tol=TOL)  # solved in float64
    assert low.prior.dtype == np.float64
    assert low.converged.all()


def test_generic_linear_solve_falls_back_to_least_squares_and_nan() -> None:
    rng = np.random.default_rng(3)
    A = rng.standard_normal((3, 5, 5)) + 5 * np.eye(5)
    A[1, -1] = 0.0  # singular
    A[2, 0, 0] = np.nan  # not finite
    b = rng.standard_normal((3, 5))
    x = np.asarray(
        blahut._solve(lambda k: strict(A)[k, ...], strict(b)).to_device(xp.Device("CPU_DEVICE"))
    )
    lstsq = np.linalg.lstsq(A[1], b[1], rcond=None)[0]
    np.testing.assert_allclose(x[1], lstsq, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(x[0], np.linalg.pinv(A[0]) @ b[0], rtol=1e-9, atol=1e-12)
    assert np.isnan(x[2]).all()
    y = kkt_newton.solve_stack(lambda k: strict(A[:1])[k, ...], strict(b[:1]))
    np.testing.assert_allclose(np.from_dlpack(y)[0], np.linalg.solve(A[0], b[0]), rtol=1e-10)


def sibson_certified(W: FloatArray, sol: blahut.BatchSolution, alpha: float) -> Any:
    return _certify.batch_bracket(W, sol.prior, sol.upper_prior, model=renyi.Sibson(alpha))


@pytest.mark.parametrize("alpha", [0.5, 0.995, 1.004, 2.0, 10.0])
def test_sibson_engine_on_strict_arrays_meets_the_symmetric_closed_form(alpha: float) -> None:
    """The α-capacity of a symmetric channel is ``log |Y| − H_α(row)`` (the uniform prior is
    optimal; Sibson's information at it is ``log 2 + log((1−δ)^α + δ^α)/(α − 1)`` for the binary
    symmetric channel), inside the certified brackets of both engines; orders within 1e-2 of 1
    take the model's expm1/log1p forms."""
    with mp.workdps(50):  # near α = 1 the float formula would cancel
        d, a = mp.mpf(0.1), mp.mpf(alpha)
        capacity = float(mp.log(2) + mp.log((1 - d) ** a + d**a) / (a - 1))
    stack = bsc(0.1)[None]
    ours = blahut.solve(strict(stack), tol=TOL, model=renyi.Sibson(alpha))
    numpy = blahut.solve(stack, tol=TOL, model=renyi.Sibson(alpha))
    assert ours.converged[0]
    for sol in (ours, numpy):
        lower, upper = sibson_certified(stack, sol, alpha)
        assert lower[0] - SLACK <= capacity <= upper[0] + SLACK
        assert upper[0] - lower[0] <= TOL + 1e-12


@pytest.mark.parametrize("alpha", [0.3, 0.999, 3.0, 20.0])
def test_sibson_random_stacks_agree_with_numpy_within_their_certificates(alpha: float) -> None:
    rng = np.random.default_rng(16)
    for nx, ny in ((4, 8), (9, 5)):
        stack = rng.dirichlet(np.full(ny, 0.5), size=(25, nx))
        ours = blahut.solve(strict(stack), tol=TOL, model=renyi.Sibson(alpha))
        numpy = blahut.solve(stack, tol=TOL, model=renyi.Sibson(alpha))
        assert ours.converged.all()
        lo_a, up_a = sibson_certified(stack, ours, alpha)
        lo_b, up_b = sibson_certified(stack, numpy, alpha)
        assert np.all(up_a - lo_a <= TOL + 1e-12)
        assert np.all(lo_a <= up_b)
        assert np.all(lo_b <= up_a)


# --------------------------------------------------------------------------------------------
# dpcap.capacities on a strict stack


def test_capacities_of_a_strict_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    stack = np.stack([padded(bsc(0.11)), padded(z_channel(0.3))])
    truth = np.array([math.log(2) - h(0.11), z_capacity(0.3)])
    seen: list[Any] = []
    solve = blahut.solve

    def spy(W: Any, **options: Any) -> blahut.BatchSolution:
        seen.append(W)
        return solve(W, **options)

    monkeypatch.setattr(blahut, "solve", spy)
    res = dpcap.capacities(strict(stack), tol=TOL)
    monkeypatch.undo()
    assert [W.device for W in seen] == [DEVICE]  # solved on the device, as float64
    assert seen[0].dtype == xp.float64
    ref = dpcap.capacities(stack, tol=TOL)
    for field in (res.prior, res.output, res.lower, res.upper, res.value, res.iterations):
        assert isinstance(field, np.ndarray)
    assert all(s is Status.CONVERGED for s in res.status)
    assert np.all(res.lower - SLACK <= truth)
    assert np.all(truth <= res.upper + SLACK)
    assert np.all(res.lower <= ref.upper)
    assert np.all(ref.lower <= res.upper)
    bits = dpcap.capacities(strict(stack), tol=TOL, unit="bits")
    np.testing.assert_allclose(bits.value, res.value / math.log(2), rtol=1e-12)


def test_capacities_of_a_list_of_strict_matrices_equals_the_numpy_list() -> None:
    mats = [bsc(0.2), z_channel(0.4), padded(bsc(0.3))]
    ours = dpcap.capacities([strict(W) for W in mats], tol=TOL)
    ref = dpcap.capacities(mats, tol=TOL)
    assert np.array_equal(ours.value, ref.value)
    assert np.array_equal(ours.prior, ref.prior, equal_nan=True)


def test_capacities_validates_a_strict_stack_like_a_numpy_one() -> None:
    bad = np.stack([bsc(0.1), bsc(0.2)])
    bad[1, 0, 1] = np.nan
    with pytest.raises(ChannelError, match=r"Ws contains NaN at index \(1, 0, 1\)"):
        dpcap.capacities(strict(bad))
    with pytest.raises(ChannelError, match=r"Ws must be a non-empty \(B, n_inputs, n_outputs\)"):
        dpcap.capacities(strict(bsc(0.1)))
    bad = np.stack([bsc(0.1), [[0.5, 0.6], [0.5, 0.5]]])
    with pytest.raises(ChannelError, match=r"Ws\[1\] is not row-stochastic: row 0 sums to 1.1"):
        dpcap.capacities(strict(bad))


# --------------------------------------------------------------------------------------------
# PyTorch, when installed


def test_torch_stack_on_its_device() -> None:
    torch = pytest.importorskip("torch")
    stack = np.stack([padded(bsc(0.11)), padded(z_channel(0.3))])
    truth = np.array([math.log(2) - h(0.11), z_capacity(0.3)])
    tensor = torch.asarray(stack.copy())
    sol = blahut.solve(torch.asarray(stack.copy()), tol=TOL)
    assert isinstance(sol.prior, np.ndarray)
    lower, upper = certified(stack, sol)
    assert np.all(lower - SLACK <= truth)
    assert np.all(truth <= upper + SLACK)
    res = dpcap.capacities(tensor, tol=TOL)
    assert isinstance(res.prior, np.ndarray)
    assert all(s is Status.CONVERGED for s in res.status)
    assert np.all(res.lower - SLACK <= truth)
    assert np.all(truth <= res.upper + SLACK)
    rng = np.random.default_rng(2)
    random = rng.dirichlet(np.ones(8), size=(30, 4))
    got = dpcap.capacities(torch.asarray(random), tol=TOL)
    ref = dpcap.capacities(random, tol=TOL)
    assert np.all(got.lower <= ref.upper)
    assert np.all(ref.lower <= got.upper)


def test_torch_engine_polishes_a_sparse_optimum() -> None:
    torch = pytest.importorskip("torch")
    W = np.asarray(dpcap.mechanisms.truncated_geometric(40, 0.1))[None]
    sol = blahut.solve(torch.asarray(W.copy()), tol=TOL)
    assert sol.converged[0]
    assert sol.iterations[0] < 200  # certified by the Newton polish, not a long BA run
    lower, upper = certified(W, sol)
    assert upper[0] - lower[0] <= TOL + 1e-12


def test_import_dpcap_imports_no_array_library() -> None:
    code = (
        "import sys, dpcap; print(sorted(m for m in ('torch', 'array_api_strict', 'cupy') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
