"""One rule for bad input across every function (issue "Reliability", items 1, 2, 8, 10).

Each case failed before the rule existed: ``−0.0`` passed validation and zeroed δ(ε); complex
input lost its imaginary part silently; strings were parsed as numbers by some functions and
refused by others; ``None`` was reported as NaN; ragged lists gave numpy's "setting an array
element with a sequence"; a file name gave "an array of shape ()"; a huge broadcast view gave
numpy's MemoryError.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dpcap
from dpcap import ChannelError, DpcapError, ParameterError, PriorError, ProblemTooLargeError

RR = [[0.75, 0.25], [0.25, 0.75]]


def test_negative_zero_is_a_zero() -> None:
    W = np.round(np.array([[0.5, 0.5], [1.0, -1e-17]]), 6)  # [[.5, .5], [1, -0.]]
    assert np.signbit(W[1, 1])
    # row 1 never gives output 1, row 0 does with probability 1/2: δ(ε) = 1/2 at every ε
    np.testing.assert_array_equal(dpcap.dp_delta_curve(W, [0, 1, 5, math.inf]), [0.5] * 4)
    assert dpcap.dp_delta(W, 1.0) == 0.5
    assert dpcap.dp_epsilon(W) == math.inf
    assert not np.signbit(dpcap.Channel(W).matrix).any()


# (function taking the bad value, the argument name in the message, the error class)
MATRIX_TAKERS: list[tuple[Callable[[Any], Any], str, type[DpcapError]]] = [
    (lambda v: dpcap.capacity(v), "W", ChannelError),
    (lambda v: dpcap.renyi_capacity(v, 2.0), "W", ChannelError),
    (lambda v: dpcap.dp_epsilon(v), "M", ChannelError),
    (lambda v: dpcap.midp(v), "M", ChannelError),
    (lambda v: dpcap.max_leakage(v), "W", ChannelError),
    (lambda v: dpcap.Channel(v), "W", ChannelError),
    (lambda v: dpcap.mutual_information([0.5, 0.5], v), "W", ChannelError),
]


@pytest.mark.parametrize(("call", "name", "error"), MATRIX_TAKERS)
@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ([[0.5 + 1j, 0.5 - 1j], [0.5, 0.5]], r"must be real, got complex numbers"),
        ([[0.5 + 0j, 0.5 + 0j], [0.5, 0.5]], r"must be real, got complex numbers"),
        ([[0.5, 0.5], [1.0]], r"ragged nested sequence"),
        (None, r"got None"),
        (True, r"got the bool True"),
        ([[True, False], [False, True]], r"got booleans"),
        ([["0.5", "0.5"], ["1", "0"]], r"got strings"),
        ("W.npy", r"got the string 'W\.npy'; a file name is not a matrix"),
    ],
)
def test_bad_matrices_are_refused_naming_the_argument(
    call: Callable[[Any], Any], name: str, error: type[DpcapError], bad: Any, says: str
) -> None:
    with pytest.raises(error, match=rf"^{name} .*{says}"):
        call(bad)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda v: dpcap.entropy(v), "p"),
        (lambda v: dpcap.capacity(RR) and dpcap.mutual_information(v, RR), "prior"),
    ],
)
@pytest.mark.parametrize(
    ("bad", "says"),
    [([0.5 + 3j, 0.5 - 3j], "complex"), ([0.5, None], "None"), ([[0.5], [0.25, 0.25]], "ragged")],
)
def test_bad_distributions_are_refused(
    call: Callable[[Any], Any], name: str, bad: Any, says: str
) -> None:
    with pytest.raises(PriorError, match=rf"^{name} .*{says}"):
        call(bad)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda v: dpcap.dp_delta(RR, v), "eps"),
        (lambda v: dpcap.dp_delta_curve(RR, v), "eps"),
        (lambda v: dpcap.renyi_dp(RR, v), "alpha"),
        (lambda v: dpcap.renyi_capacity(RR, v), "alpha"),
        (lambda v: dpcap.capacity(RR, tol=v), "tol"),
    ],
)
@pytest.mark.parametrize("bad", ["1", None, True, 1j])
def test_bad_parameters_are_refused_the_same_way(
    call: Callable[[Any], Any], name: str, bad: Any
) -> None:
    shown = {"1": "'1'", None: "None", True: "True", 1j: "1j"}[bad]
    with pytest.raises(ParameterError, match=rf"^{name} must .*{shown}"):
        call(bad)
    with pytest.raises(ParameterError) as info:
        call(bad)
    assert "NaN" not in str(info.value)


def test_a_huge_broadcast_view_is_too_large_not_a_memory_error() -> None:
    view = np.broadcast_to(np.array([0.5, 0.5]), (2**30, 2))
    with pytest.raises(ProblemTooLargeError, match=r"W has 2147483648 entries"):
        dpcap.capacity(view)
    with pytest.raises(ProblemTooLargeError):
        dpcap.Channel(view)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"tol": math.nan}, r"tol must be a positive finite number \(nats\), got nan"),
        ({"tol": "x"}, r"tol must be a positive finite number \(nats\), got 'x'"),
        ({"max_iter": 1.5}, r"max_iter must be an integer >= 1, got 1\.5"),
        ({"max_iter": -5}, r"max_iter must be an integer >= 1, got -5"),
    ],
)
def test_augustin_options_are_validated_before_the_engine(
    options: dict[str, Any], says: str
) -> None:
    # tol=nan ran the whole budget, 'x' and 1.5 raised TypeError inside the engine, and -5 was
    # reported as a SolverError
    with pytest.raises(ParameterError, match=says):
        dpcap.augustin_mi([0.5, 0.5], RR, 2.0, **options)


def test_huge_domains_are_counted_before_any_array_is_built() -> None:
    # numpy's "Maximum allowed size exceeded" before
    with pytest.raises(ProblemTooLargeError, match=r"neighbors='hamming' gives \d+ pairs"):
        dpcap.neighbor_pairs((2**40, 2**40))
    with pytest.raises(ProblemTooLargeError, match=r"neighbors='line' gives 1099511627775 pairs"):
        dpcap.neighbor_pairs((2**40,), "line")


def test_score_totals_that_overflow_int64_are_refused() -> None:
    # accepted before (int64 overflow of the score span), then an IndexError later
    with pytest.raises(dpcap.MechanismError, match=r"scores must keep every total within"):
        dpcap.Mechanism.additive([[-(2**63), 2**63 - 1], [0, 1]], [[1.0, 0.0]])


@pytest.mark.parametrize("group", ["a", [5], [0.5]])
def test_midp_group_errors_name_group(group: Any) -> None:
    M = dpcap.mechanisms.per_entry(2, dpcap.mechanisms.randomized_response(2, 1.0))
    with pytest.raises(dpcap.MechanismError, match=r"^group must be an entry or a sequence"):
        dpcap.midp(M, group=group)
