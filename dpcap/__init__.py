"""dpcap: how much can a privacy mechanism leak?

Certified channel capacities, mutual-information DP (Cuff & Yu), Rényi capacities and the classic
DP metrics of finite mechanisms. A channel is ``W[x, y] = P(Y=y | X=x)`` (rows are inputs);
information is in nats unless ``unit="bits"``.

>>> import dpcap
>>> from dpcap.mechanisms import randomized_response
>>> W = randomized_response(3, 1.0)
>>> round(dpcap.dp_epsilon(W), 12)
1.0

The package is built in wings (the architecture page of the documentation draws them); this
module publishes each wing's public names, and ``__all__`` is the union of the wings' own:

* ground: :mod:`dpcap.errors`, :mod:`dpcap.result`;
* model: :mod:`dpcap.channel`, :mod:`dpcap.mechanisms`, :mod:`dpcap.product_channel`;
* families: :mod:`dpcap.shannon`, :mod:`dpcap.mi_dp`, :mod:`dpcap.renyi`, :mod:`dpcap.privacy`,
  :mod:`dpcap.metric_privacy`, :mod:`dpcap.qif`, :mod:`dpcap.gain_capacity`,
  :mod:`dpcap.measures`, :mod:`dpcap.bounds`, :mod:`dpcap.tradeoffs`, :mod:`dpcap.accounting`;
* faces: :mod:`dpcap.study` (sweeps, calibration, the query catalogue), :mod:`dpcap.plots`,
  :mod:`dpcap.cli`.
"""

from dpcap import (
    accounting,
    bounds,
    channel,
    errors,
    gain_capacity,
    interop,
    measures,
    mechanisms,
    metric_privacy,
    mi_dp,
    privacy,
    product_channel,
    qif,
    renyi,
    result,
    shannon,
    study,
    tradeoffs,
)
from dpcap._core.version import VERSION
from dpcap.accounting import *  # noqa: F403
from dpcap.channel import *  # noqa: F403
from dpcap.errors import *  # noqa: F403
from dpcap.gain_capacity import *  # noqa: F403
from dpcap.measures import *  # noqa: F403
from dpcap.metric_privacy import *  # noqa: F403
from dpcap.mi_dp import *  # noqa: F403
from dpcap.privacy import *  # noqa: F403
from dpcap.product_channel import *  # noqa: F403
from dpcap.qif import *  # noqa: F403
from dpcap.renyi import *  # noqa: F403
from dpcap.result import *  # noqa: F403
from dpcap.shannon import *  # noqa: F403
from dpcap.study import *  # noqa: F403
from dpcap.tradeoffs import *  # noqa: F403

__version__: str = VERSION

__all__ = ["__version__", "bounds", "interop", "mechanisms"]
__all__ += errors.__all__
__all__ += result.__all__
__all__ += channel.__all__
__all__ += product_channel.__all__
__all__ += shannon.__all__
__all__ += mi_dp.__all__
__all__ += renyi.__all__
__all__ += privacy.__all__
__all__ += metric_privacy.__all__
__all__ += qif.__all__
__all__ += gain_capacity.__all__
__all__ += measures.__all__
__all__ += tradeoffs.__all__
__all__ += study.__all__
__all__ += accounting.__all__
