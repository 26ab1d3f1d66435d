"""The DP libraries users already run: Google's dp_accounting and OpenDP.

* :func:`to_dp_accounting`: the privacy loss of a finite mechanism as a dp_accounting
  ``PrivacyLossDistribution``, built from dpcap's exact loss law (:func:`dpcap.privacy_loss`)
  of a neighbour pair that the caller does not have to write by hand;
* :func:`from_opendp`: an OpenDP measurement whose output distribution is finite (randomized
  response on booleans or categories) or integer noise (``make_laplace`` / ``make_geometric``
  on integers), read as a dpcap channel on the values given;
* :func:`to_opendp`: a dpcap mechanism as an OpenDP user measurement whose privacy map is
  dpcap's exact ε, or its certified ε(δ).

Both libraries are optional (``pip install dpcap[interop]``) and imported only when one of
these functions runs.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap import privacy
from dpcap._core import validation as check
from dpcap.accounting import composed_epsilon, privacy_loss
from dpcap.channel import Channel, as_mechanism
from dpcap.errors import MechanismError, ParameterError
from dpcap.mechanisms import randomized_response
from dpcap.neighbors import Neighbors, within
from dpcap.result import PairLoss

__all__ = ["from_opendp", "to_dp_accounting", "to_opendp"]

FloatArray = NDArray[np.float64]

#: Default tail mass left outside the output window of integer noise read from OpenDP.
DEFAULT_TAIL = 1e-12


def _need(module: str, extra: str = "interop") -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{module} is not installed; install it with pip install 'dpcap[{extra}]'"
        ) from exc


def _pair_law(M: Any, neighbors: Neighbors | None, pair: Any) -> tuple[PairLoss, PairLoss | None]:
    """The law of the ordered pair ``pair`` (or of the only candidate), and of its reverse."""
    loss = privacy_loss(M, neighbors=neighbors)

    def find(x: int, xp: int) -> PairLoss | None:
        for law in loss.laws:
            if np.any((law.pairs[:, 0] == x) & (law.pairs[:, 1] == xp)):
                return law
        return None

    if pair is None:
        candidates = [loss.laws[i] for i in loss.candidates]
        if len(candidates) != 1:
            shown = [tuple(int(v) for v in law.pairs[0]) for law in candidates[:8]]
            raise MechanismError(
                f"to_dp_accounting: {len(candidates)} neighbour pairs can be the worst "
                f"(e.g. {shown}) and no single pair's PLD bounds them all; pass pair=(x, x') "
                "and compose each, or use dpcap.composed_delta, which takes the max over pairs"
            )
        law = candidates[0]
        x, xp = (int(v) for v in law.pairs[0])
        return law, find(xp, x)
    try:
        x, xp = (check.integer(v, "pair", minimum=0) for v in pair)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"pair must be two row indices (x, x'), got {pair!r}") from exc
    chosen = find(x, xp)
    if chosen is None:
        raise ParameterError(
            f"pair {(x, xp)} is not an ordered pair of neighbours of the mechanism"
        )
    return chosen, find(xp, x)


def _rounded(law: PairLoss, interval: float, pessimistic: bool) -> dict[int, float]:
    """Loss values rounded to the grid (up when pessimistic), masses summed per grid point;
    rounding includes the law's own rounding bound, so pessimistic stays pessimistic."""
    shift = law.rounding if pessimistic else -law.rounding
    scaled = (law.loss + shift) / interval
    if len(scaled) and float(np.max(np.abs(scaled))) >= 2.0**62:
        raise ParameterError(
            f"value_discretization_interval {interval!r} is too small for losses up to "
            f"{float(np.max(np.abs(law.loss))):.6g}: the grid index would overflow"
        )
    index = np.ceil(scaled) if pessimistic else np.floor(scaled)
    out: dict[int, float] = {}
    for i, m in zip(index.astype(np.int64).tolist(), law.mass.tolist(), strict=True):
        out[i] = out.get(i, 0.0) + m
    return out


def to_dp_accounting(
    M: Any,
    /,
    *,
    neighbors: Neighbors | None = None,
    pair: Any = None,
    pessimistic_estimate: bool = True,
    value_discretization_interval: float = 1e-4,
) -> Any:
    """The privacy loss of ``M`` as a dp_accounting ``PrivacyLossDistribution``.

    The PLD of the ordered pair ``(x, x')`` has ``mu_upper = W[x]`` and ``mu_lower = W[x']``:
    its loss ``log W[x,y]/W[x',y]`` is dpcap's exact law (:func:`dpcap.privacy_loss`, from the
    log matrix, so underflowed entries keep their logs), rounded to dp_accounting's grid
    upward (``pessimistic_estimate``) or downward, with dpcap's own rounding bound of each
    loss included in that direction; infinite loss goes to the PLD's infinity mass. The
    reverse pair ``(x', x)`` becomes the PLD's ``add`` side (a non-symmetric PLD unless the
    two laws are the same), so composing it in dp_accounting accounts for both orders.

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    neighbors : keyword-only, optional
        The relation (default: the one ``M`` carries).
    pair : (x, x'), keyword-only, optional
        The ordered pair of row indices. Default: the only pair that can be worst (an error
        names the candidates when several can: no single pair's PLD bounds the others, and
        which one is worst can change with ε and with composition).
    pessimistic_estimate, value_discretization_interval : keyword-only
        As in dp_accounting.

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution

    Raises
    ------
    ImportError
        If dp_accounting is not installed.
    MechanismError
        If ``pair`` is not given and several pairs can be the worst.
    ParameterError
        For a ``pair`` that is not an ordered pair of neighbours, or an interval that is not
        positive.
    """
    interval = check.nonnegative_scalar(
        value_discretization_interval,
        "value_discretization_interval",
        allow_inf=False,
        positive=True,
    )
    pessimistic_estimate = check.flag(pessimistic_estimate, "pessimistic_estimate")
    pld_module = _need("dp_accounting.pld.privacy_loss_distribution")
    law, reverse = _pair_law(M, neighbors, pair)
    remove = _rounded(law, interval, pessimistic_estimate)
    if reverse is None or (
        np.array_equal(reverse.loss, law.loss)
        and np.array_equal(reverse.mass, law.mass)
        and reverse.infinite == law.infinite
    ):
        return pld_module.PrivacyLossDistribution.create_from_rounded_probability(
            remove, law.infinite, interval, pessimistic_estimate
        )
    add = _rounded(reverse, interval, pessimistic_estimate)
    return pld_module.PrivacyLossDistribution.create_from_rounded_probability(
        remove,
        law.infinite,
        interval,
        pessimistic_estimate,
        add,
        reverse.infinite,
        symmetric=False,
    )


def _two_sided_geometric(values: range, scale: float, tail: float) -> Channel:
    """Discrete Laplace noise ``P(Z = z) ∝ r^{|z|}``, ``r = e^{−1/scale}``, added to each value,
    the output clamped to a window whose outside mass is at most ``tail``: the loss is constant
    on each tail (geometric tails), so every DP quantity of the clamped channel equals the
    unclamped one's, and information measures are at most the unclamped ones'."""
    r = math.exp(-1.0 / scale)
    width = max(math.ceil(math.log(tail * (1.0 + r) / 2.0) / math.log(r)), 0) if r > 0 else 0
    check.dense_size(len(values), len(values) + 2 * width, "the clamped integer-noise channel")
    lo, hi = values.start - width, values.stop - 1 + width
    outputs = np.arange(lo, hi + 1)
    x = np.arange(values.start, values.stop)
    d = outputs[None, :] - x[:, None]
    logc = math.log1p(-r) - math.log1p(r)
    with np.errstate(divide="ignore"):
        log_w = logc + np.abs(d) * math.log(r) if r > 0 else np.where(d == 0, 0.0, -np.inf)
        # the ends hold the tails: Σ_{k ≥ m} c r^k = c r^m / (1 − r) = r^m / (1 + r)
        log_w[:, 0] = np.abs(d[:, 0]) * math.log(r) - math.log1p(r) if r > 0 else log_w[:, 0]
        log_w[:, -1] = np.abs(d[:, -1]) * math.log(r) - math.log1p(r) if r > 0 else log_w[:, -1]
    W = np.exp(log_w)
    W /= W.sum(axis=1, keepdims=True)
    return Channel(W, neighbors="line")


def from_opendp(measurement: Any, /, *, values: Any, tail: float = DEFAULT_TAIL) -> Channel:
    """An OpenDP measurement with a finite (or clamped integer) output law as a dpcap channel.

    OpenDP measurements do not expose their parameters, so the parameter is read back from
    the measurement's own privacy map (the channel's ε is checked against it, which guards the
    reading of the map, not the number of categories: OpenDP does not expose it, so ``values``
    must list the measurement's categories):

    * randomized response on booleans (``make_randomized_response_bool``) or on categories
      (``make_randomized_response``): ``ε = map(1)`` gives ``randomized_response(k, ε)``
      (rows and columns in the order of ``values``);
    * integer noise (``make_laplace`` / ``make_geometric`` on an integer atom domain with the
      absolute distance): discrete Laplace with ``scale = 1/map(1)`` added to each integer of
      ``values`` (a contiguous range), the output clamped to a window whose outside mass is at
      most ``tail``. The privacy loss is constant on geometric tails, so every DP quantity
      (ε, δ(ε), compositions) of the clamped channel is the measurement's; information
      measures are lower bounds (data processing).

    Parameters
    ----------
    measurement : opendp.mod.Measurement
    values : sequence
        The inputs: the categories (or ``[False, True]``), or a range of integers.
    tail : float, keyword-only
        Largest output mass left outside the window of integer noise.

    Returns
    -------
    Channel
        Carrying ``"all"`` (randomized response) or ``"line"`` (integer noise).

    Raises
    ------
    ImportError
        If OpenDP is not installed.
    MechanismError
        For a measurement of another kind, or whose privacy map disagrees with the channel.
    """
    dp = _need("opendp.prelude")
    tail = check.probability_scalar(tail, "tail")
    if not 0.0 < tail < 1.0:
        raise ParameterError(f"tail must be in (0, 1), got {tail!r}")
    measure = str(measurement.output_measure)
    if "MaxDivergence" not in measure or "Smoothed" in measure or "Approximate" in measure:
        raise MechanismError(
            f"from_opendp reads pure-DP measurements (MaxDivergence), got {measure}"
        )
    domain, metric = str(measurement.input_domain), str(measurement.input_metric)
    eps = float(measurement.map(1))
    if "DiscreteDistance" in metric:
        k = len(values)
        if k < 2:
            raise ParameterError(f"values must list at least 2 categories, got {values!r}")
        W = randomized_response(k, eps)
    elif "AbsoluteDistance" in metric and ("i32" in domain or "i64" in domain or "int" in domain):
        if not isinstance(values, range) or values.step != 1 or len(values) < 2:
            raise ParameterError(
                f"values must be a range of at least 2 consecutive integers, got {values!r}"
            )
        W = _two_sided_geometric(values, 1.0 / eps, tail)
    else:
        raise MechanismError(
            f"from_opendp: no finite reading of a measurement on {domain} with {metric}"
        )
    level = privacy.dp_epsilon(W)
    if not math.isclose(level, eps, rel_tol=1e-9, abs_tol=1e-12):
        raise MechanismError(
            f"from_opendp: the channel's ε {level!r} disagrees with the measurement's map "
            f"{eps!r} ({dp.__name__})"
        )
    return W


def to_opendp(M: Any, /, *, delta: float = 0.0) -> Any:
    """A dpcap mechanism as an OpenDP user measurement with dpcap's exact privacy map.

    The input is a row index of ``M`` (an ``int``): under ``"all"`` the input metric is the
    discrete distance (every two inputs neighbours), under ``"line"`` the absolute distance
    (``d_in`` = how far apart two inputs are: the map gives the level of the pairs at distance
    at most ``d_in``, group privacy computed exactly). ``delta = 0``: a ``MaxDivergence``
    measurement whose map is ``dp_epsilon``. ``delta > 0``: an approximate-DP measurement whose
    map is the certified upper end of ε(δ) (:func:`dpcap.composed_epsilon`, one release).
    The function samples ``W[x]`` with the operating system's random source (float inverse
    CDF; not hardened against floating-point side channels: for experiments and accounting).

    Raises
    ------
    ImportError
        If OpenDP is not installed.
    MechanismError
        For a relation other than ``"all"`` or ``"line"``.
    """
    dp = _need("opendp.prelude")
    level = check.probability_scalar(delta, "delta")
    mech = as_mechanism(M)
    relation = mech.neighbors
    n = mech.matrix.shape[0]
    named = relation if isinstance(relation, str) else None
    if named == "all" or (named == "hamming" and len(mech.shape) == 1):
        metric = dp.discrete_distance()

        def at(d_in: int) -> Neighbors:
            return "all"

    elif named == "line":
        metric = dp.absolute_distance(T=int)

        def at(d_in: int) -> Neighbors:
            return within(n - 1, max(int(d_in), 1))

    else:
        raise MechanismError(f"to_opendp wraps mechanisms under 'all' or 'line', got {relation!r}")
    dp.enable_features("contrib", "honest-but-curious")
    W = mech.matrix
    source = random.SystemRandom()

    def release(x: int) -> int:
        row = np.cumsum(W[int(x)])
        return int(min(np.searchsorted(row, source.random() * row[-1], side="right"), len(row) - 1))

    if level == 0.0:
        measure = dp.max_divergence()

        def privacy_map(d_in: int) -> float:
            if int(d_in) <= 0:
                return 0.0
            return float(privacy.dp_epsilon(mech, neighbors=at(d_in)))

    else:
        measure = dp.approximate(dp.max_divergence())

        def privacy_map(d_in: int) -> tuple[float, float]:  # type: ignore[misc]
            if int(d_in) <= 0:
                return (0.0, level)
            r = composed_epsilon(mech, level, neighbors=at(d_in))
            return (float(r.upper), level)

    return dp.m.make_user_measurement(
        dp.atom_domain(T=int), metric, measure, release, privacy_map, TO=int
    )
