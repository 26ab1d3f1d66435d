"""Constructors of finite channels and database mechanisms.

Single-entry channels (:class:`~dpcap.channel.Channel`) on categories, carrying the neighbour
relation ``"all"`` (every pair of inputs, local DP): :func:`randomized_response`,
:func:`binary_symmetric`, :func:`erasure`, :func:`exponential`.

Additive noise on a line of values ``{0, …, n}``, carrying ``"line"`` (``|x − x'| = 1``, or the
pairs at distance at most the sensitivity Δ): :func:`truncated_geometric`,
:func:`discrete_laplace`, :func:`discrete_gaussian`, :func:`staircase`.

Database mechanisms (:class:`~dpcap.channel.Mechanism`), carrying ``"hamming"`` (databases that
differ in one entry; :func:`per_entry` lifts the relation of its local channel):
:func:`counting_query`, :func:`one_time_pad`, :func:`revealing`, :func:`per_entry`,
:func:`histogram` (per-cell counts, independent noise per cell), :func:`bounded_sum` (per-entry
score sets), :meth:`~dpcap.channel.Mechanism.additive` for any sum of per-entry scores, and
:func:`from_function` for any query with a finite range followed by a noise channel
(:class:`~dpcap.function_mechanism.FunctionMechanism`).

Local-DP frequency oracles (Wang, Blocki, Li, Jha 2017), carrying ``"all"``. Each is a *pure*
protocol: a report ``y`` supports a set of values, the true one with probability ``p*`` and any
other with probability ``q*``, and ``f̂_v = (#{j : v ∈ Supp(y_j)}/n − q*)/(p* − q*)`` estimates
the frequency of ``v`` from ``n`` reports without bias, with variance
``q*(1 − q*)/(n(p* − q*)²) + f_v(1 − p* − q*)/(n(p* − q*))``; each docstring gives the order of
the reports, ``Supp``, ``p*``, ``q*`` and ε. The unary encodings
:func:`unary_encoding`, :func:`symmetric_unary_encoding` (basic one-time RAPPOR),
:func:`optimized_unary_encoding` and :func:`basic_rappor` (reports are bit vectors);
:func:`hadamard_response`, :func:`subset_selection`, and local hashing over an explicit finite
hash family: :func:`local_hashing`, :func:`binary_local_hashing`,
:func:`optimized_local_hashing`. k-ary randomized response is :func:`randomized_response`.

Amplification by subsampling, exactly, on small databases: :func:`poisson_subsample`,
:func:`sample_without_replacement` and :func:`shared_sample` (several releases reading one
sample) build the mechanism of "sample, then run a mechanism on the sample" as a matrix, whose
every metric (ε, δ(ε), MI-DP, capacity) is then exact. They carry ``"add_remove"`` (explicit
pairs: one record present or absent) or ``"replace_one"`` (``"hamming"`` on the population).

Location mechanisms on a grid of points (geo-indistinguishability), carrying ``"all"`` and
meant for a distance (:func:`dpcap.dp_epsilon` with ``metric=``;
:func:`dpcap.metric_privacy.grid_metric`):
:func:`planar_geometric` (lattice noise ``∝ e^{−ε‖z‖}``, Euclidean or Manhattan) and
:func:`planar_laplace` (the planar Laplace noise's mass on each grid cell), both remapping noise
that leaves the grid to its nearest point.

The DP metrics (:func:`dpcap.dp_epsilon` and its relatives) use the carried relation unless
they are given ``neighbors=``, so ``dp_epsilon(truncated_geometric(n, eps))`` is ``eps``;
:meth:`~dpcap.channel.Channel.with_neighbors` gives the same channel under another relation.

Argument order
--------------
One rule for every constructor: **the domain first, then what is applied to it**. The domain is
the number of entries or values (``n``, ``k``, ``m``), or the object that fixes it (the
``utility`` matrix of :func:`exponential`, the ``scores`` of ``Mechanism.additive``); then come
the component applied to it (a ``noise`` channel) and the privacy or noise parameter (``eps``,
``sigma``, ``delta``, ``prob``); options are keyword-only. Hence ``counting_query(n, noise)``,
``per_entry(n, noise)``, ``revealing(n, m, prob)``, ``truncated_geometric(n, eps)``.

Each docstring states the mechanism's ε-DP level and, where known, its capacity and MI-DP in
closed form, with the paper and equation.
"""

from dpcap.function_mechanism import from_function
from dpcap.mechanisms._amplification import (
    poisson_subsample,
    sample_without_replacement,
    shared_sample,
)
from dpcap.mechanisms._database import counting_query, one_time_pad, per_entry, revealing
from dpcap.mechanisms._histogram import bounded_sum, histogram
from dpcap.mechanisms._local import binary_symmetric, erasure, exponential, randomized_response
from dpcap.mechanisms._noise import (
    discrete_gaussian,
    discrete_laplace,
    staircase,
    truncated_geometric,
)
from dpcap.mechanisms._planar import planar_geometric, planar_laplace
from dpcap.mechanisms._protocols import (
    binary_local_hashing,
    hadamard_response,
    local_hashing,
    optimized_local_hashing,
    subset_selection,
)
from dpcap.mechanisms._unary import (
    basic_rappor,
    optimized_unary_encoding,
    symmetric_unary_encoding,
    unary_encoding,
)

__all__ = [
    "basic_rappor",
    "binary_local_hashing",
    "binary_symmetric",
    "bounded_sum",
    "counting_query",
    "discrete_gaussian",
    "discrete_laplace",
    "erasure",
    "exponential",
    "from_function",
    "hadamard_response",
    "histogram",
    "local_hashing",
    "one_time_pad",
    "optimized_local_hashing",
    "optimized_unary_encoding",
    "per_entry",
    "planar_geometric",
    "planar_laplace",
    "poisson_subsample",
    "randomized_response",
    "revealing",
    "sample_without_replacement",
    "shared_sample",
    "staircase",
    "subset_selection",
    "symmetric_unary_encoding",
    "truncated_geometric",
    "unary_encoding",
]
