"""Shannon capacity: of one channel, of a batch, under an input cost, of a structured mechanism.

* :mod:`~dpcap.shannon.shannon_capacity`: :func:`capacity` and :func:`capacities` (batched);
* :mod:`~dpcap.shannon.cost`: the capacity–cost function ``C(P)`` (``capacity(W, cost=...)``);
* :mod:`~dpcap.shannon.structured`: additive mechanisms reduced to their reachable totals, so a
  count of ``n`` people is solved without enumerating the ``2^n`` databases.
"""

from dpcap.shannon.shannon_capacity import capacities, capacity

__all__ = ["capacities", "capacity"]
