"""Studies of families of mechanisms: sweeps into tables, calibration, the query catalogue.

* :mod:`~dpcap.study.catalogue`: every point query dpcap can ask of a mechanism (and the
  trade-off queries of a family of problems), registered once with its parameters and unit;
  sweeps, calibration and the command line read it (:func:`register_query` adds your own);
* :mod:`~dpcap.study.sweeps`: :func:`sweep` and :func:`load_sweep` (tidy tables, executors,
  the Parquet store with resume);
* :mod:`~dpcap.study.calibration`: :func:`calibrate`, the parameter that meets a target.
"""

from dpcap.study.calibration import calibrate
from dpcap.study.catalogue import register_query, unregister_query
from dpcap.study.sweeps import load_sweep, sweep

__all__ = ["calibrate", "load_sweep", "register_query", "sweep", "unregister_query"]
