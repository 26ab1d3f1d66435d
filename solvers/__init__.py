"""dpcap's numerical engines, installed as ``dpcap.solvers``.

Engines know arrays, not dpcap's classes: they take validated ``float64`` arrays and return raw
numbers and arrays. The query layer (``dpcap``) validates input, calls an engine and recomputes
any certificate itself. Nothing here imports the rest of dpcap, and nothing heavy (cvxpy) is
imported at module import time.
"""

# conic imports cvxpy inside capacity_conic only, so importing it here stays cheap.
from . import conic, divergence, pairwise

__all__ = ["conic", "divergence", "pairwise"]
