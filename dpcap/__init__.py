"""dpcap: how much can a privacy mechanism leak?

Certified channel capacities, mutual-information DP (Cuff & Yu), Rényi capacities and the classic
DP metrics of finite mechanisms. A channel is ``W[x, y] = P(Y=y | X=x)`` (rows are inputs);
information is in nats unless ``unit="bits"``.

>>> import dpcap
>>> from dpcap.mechanisms import randomized_response
>>> W = randomized_response(3, 1.0)
>>> round(dpcap.dp_epsilon(W), 12)
1.0
"""

from dpcap._source import register_source_solvers

register_source_solvers()

from dpcap import bounds, mechanisms  # noqa: E402
from dpcap.calibrate import CalibrationResult, calibrate  # noqa: E402
from dpcap.capacity import capacities, capacity  # noqa: E402
from dpcap.channel import Channel, Mechanism, neighbor_pairs  # noqa: E402
from dpcap.compose import compose  # noqa: E402
from dpcap.funnel import (  # noqa: E402
    information_bottleneck,
    information_bottleneck_curve,
    privacy_funnel,
    privacy_funnel_curve,
)
from dpcap.gain_capacity import g_capacity, risk_capacity  # noqa: E402
from dpcap.inference_privacy import inference_privacy  # noqa: E402
from dpcap.measures import (  # noqa: E402
    arimoto_conditional_entropy,
    arimoto_mi,
    augustin_mi,
    bhattacharyya_coefficient,
    bhattacharyya_distance,
    chi2_divergence,
    conditional_entropy,
    conditional_mutual_information,
    conditional_sibson_mi,
    entropy,
    f_divergence,
    hellinger_distance,
    hellinger_divergence,
    hockey_stick,
    jensen_shannon_divergence,
    kl_divergence,
    min_entropy_leakage,
    mutual_information,
    renyi_divergence,
    renyi_entropy,
    renyi_mi,
    sibson_mi,
    tsallis_entropy,
    tv_distance,
)
from dpcap.metric_privacy import (  # noqa: E402
    grid_metric,
    grid_points,
    metric_delta,
    metric_epsilon,
    metric_matrix,
)
from dpcap.midp import correlated_leakage, midp, renyi_midp  # noqa: E402
from dpcap.optimal_mechanism import optimal_mechanism  # noqa: E402
from dpcap.perfect_privacy import perfect_privacy  # noqa: E402
from dpcap.privacy import dp_delta, dp_delta_curve, dp_epsilon, kl_dp, max_leakage, renyi_dp, tv_dp  # noqa: E402
from dpcap.privacy_distortion import privacy_distortion, privacy_distortion_curve  # noqa: E402
from dpcap.qif import (  # noqa: E402
    bayes_leakage,
    bayes_risk,
    bayes_vulnerability,
    g_leakage,
    g_strategy,
    g_vulnerability,
    guessing_entropy,
    guessing_leakage,
    posterior_bayes_risk,
    posterior_bayes_vulnerability,
    posterior_g_vulnerability,
    posterior_guessing_entropy,
    risk_leakage,
)
from dpcap.ratedistortion import (  # noqa: E402
    mi_privacy_distortion,
    mi_privacy_distortion_curve,
    rate_distortion,
    rate_distortion_curve,
)
from dpcap.renyi import alpha_leakage, renyi_capacity, renyi_profile  # noqa: E402
from dpcap.result import (  # noqa: E402
    CapacitiesResult,
    CapacityResult,
    ChannelError,
    ConvergenceWarning,
    CorrelatedLeakageResult,
    CostCapacityResult,
    CurveResult,
    DistortionResult,
    DpcapError,
    FunnelCurve,
    FunnelResult,
    GainCapacityResult,
    MechanismError,
    MIDPResult,
    NeighborError,
    ParameterError,
    PriorError,
    ProblemTooLargeError,
    RenyiProfile,
    SolverError,
    Status,
    StructuredCapacityResult,
)
from dpcap.sweep import SweepInterrupted, load_sweep, sweep  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "CalibrationResult",
    "CapacitiesResult",
    "CapacityResult",
    "Channel",
    "ChannelError",
    "ConvergenceWarning",
    "CorrelatedLeakageResult",
    "CostCapacityResult",
    "CurveResult",
    "DistortionResult",
    "DpcapError",
    "FunnelCurve",
    "FunnelResult",
    "GainCapacityResult",
    "MIDPResult",
    "Mechanism",
    "MechanismError",
    "NeighborError",
    "ParameterError",
    "PriorError",
    "ProblemTooLargeError",
    "RenyiProfile",
    "SolverError",
    "Status",
    "StructuredCapacityResult",
    "SweepInterrupted",
    "__version__",
    "alpha_leakage",
    "arimoto_conditional_entropy",
    "arimoto_mi",
    "augustin_mi",
    "bayes_leakage",
    "bayes_risk",
    "bayes_vulnerability",
    "bhattacharyya_coefficient",
    "bhattacharyya_distance",
    "bounds",
    "calibrate",
    "capacities",
    "capacity",
    "chi2_divergence",
    "compose",
    "conditional_entropy",
    "conditional_mutual_information",
    "conditional_sibson_mi",
    "correlated_leakage",
    "dp_delta",
    "dp_delta_curve",
    "dp_epsilon",
    "entropy",
    "f_divergence",
    "g_capacity",
    "g_leakage",
    "g_strategy",
    "g_vulnerability",
    "grid_metric",
    "grid_points",
    "guessing_entropy",
    "guessing_leakage",
    "hellinger_distance",
    "hellinger_divergence",
    "hockey_stick",
    "inference_privacy",
    "information_bottleneck",
    "information_bottleneck_curve",
    "jensen_shannon_divergence",
    "kl_divergence",
    "kl_dp",
    "load_sweep",
    "max_leakage",
    "mechanisms",
    "metric_delta",
    "metric_epsilon",
    "metric_matrix",
    "mi_privacy_distortion",
    "mi_privacy_distortion_curve",
    "midp",
    "min_entropy_leakage",
    "mutual_information",
    "neighbor_pairs",
    "optimal_mechanism",
    "perfect_privacy",
    "posterior_bayes_risk",
    "posterior_bayes_vulnerability",
    "posterior_g_vulnerability",
    "posterior_guessing_entropy",
    "privacy_distortion",
    "privacy_distortion_curve",
    "privacy_funnel",
    "privacy_funnel_curve",
    "rate_distortion",
    "rate_distortion_curve",
    "renyi_capacity",
    "renyi_divergence",
    "renyi_dp",
    "renyi_entropy",
    "renyi_mi",
    "renyi_midp",
    "renyi_profile",
    "risk_capacity",
    "risk_leakage",
    "sibson_mi",
    "sweep",
    "tsallis_entropy",
    "tv_distance",
    "tv_dp",
]
