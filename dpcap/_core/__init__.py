"""dpcap's private infrastructure, shared by two or more query families.

* :mod:`~dpcap._core.validation`: one validator per argument kind (the one rule for bad input);
* :mod:`~dpcap._core.certify`: the certificate's arithmetic (brackets widened by their rounding
  bound, statuses, warnings); every certificate bound goes through it;
* :mod:`~dpcap._core.information`: entropy and information kernels;
* :mod:`~dpcap._core.gains`: gain and loss matrices of g-leakage;
* :mod:`~dpcap._core.partial_sums`: totals reachable by sums of per-entry scores;
* :mod:`~dpcap._core.log_matrix`: channels held as log-probabilities.

It imports only :mod:`dpcap.errors`, :mod:`dpcap.result` and the engines (:mod:`dpcap.solvers`).
Nothing here is public API: names and signatures change without notice.
"""
