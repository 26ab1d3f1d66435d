"""Constructors of finite channels and database mechanisms.

Single-entry channels (:class:`~dpcap.channel.Channel`): :func:`randomized_response`,
:func:`binary_symmetric`, :func:`erasure`, :func:`truncated_geometric`, :func:`discrete_laplace`,
:func:`discrete_gaussian`, :func:`staircase`, :func:`exponential`.

Database mechanisms (:class:`~dpcap.channel.Mechanism`): :func:`counting_query`,
:func:`one_time_pad`, :func:`revealing`, :func:`per_entry`.

Each docstring states the mechanism's ε-DP level and, where known, its capacity and MI-DP in
closed form, with the paper and equation.
"""

from dpcap.mechanisms._database import counting_query, one_time_pad, per_entry, revealing
from dpcap.mechanisms._local import (
    binary_symmetric,
    discrete_gaussian,
    discrete_laplace,
    erasure,
    exponential,
    randomized_response,
    staircase,
    truncated_geometric,
)

__all__ = [
    "binary_symmetric",
    "counting_query",
    "discrete_gaussian",
    "discrete_laplace",
    "erasure",
    "exponential",
    "one_time_pad",
    "per_entry",
    "randomized_response",
    "revealing",
    "staircase",
    "truncated_geometric",
]
