"""Every figure of ``dpcap.plots`` says what it shows: a title and axis labels with quantities
and units.

One case per curve kind (δ(ε), a leakage against a parameter, ε*(D), R(D), the Rényi
α-profile, the PF/IB region, a sweep), in nats and in bits where the kind has an information
axis. The rules checked: the title names the curve; every axis that carries an information
quantity ends with its unit, "(nats)" or "(bits)" as asked; ε is always "(nats)", also when
bits are asked for (it bounds the natural log of a likelihood ratio); δ, a probability, has no
unit; and the two distortion plots never take each other's names (the ε*(D) figure is not
"R(D)", the R(D) figure is not "ε*(D)").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from matplotlib.axes import Axes

import dpcap
from dpcap.mechanisms import randomized_response
from dpcap.plots import (
    plot_leakage,
    plot_privacy_distortion,
    plot_privacy_profile,
    plot_privacy_region,
    plot_rate_distortion,
    plot_renyi_profile,
    plot_sweep,
)

HAMMING = 1.0 - np.eye(2)
EPS = [0.5, 1.0, 2.0]
JOINT = 0.5 * np.array([[0.9, 0.1], [0.1, 0.9]])  # doubly symmetric binary source, p = 0.1


def privacy_profile(unit: str) -> Axes:
    grid = [0.0, 0.5, 1.0, 1.5]
    deltas = {f"RR(2, {e})": dpcap.dp_delta_curve(randomized_response(2, e), grid) for e in EPS}
    return plot_privacy_profile(grid, deltas)


def leakage(unit: str) -> Axes:
    results = [dpcap.capacity(randomized_response(3, e)) for e in EPS]
    return plot_leakage(EPS, results, quantity="capacity", unit=unit, label="RR(3)")


def epsilon_level(unit: str) -> Axes:
    levels = [dpcap.dp_epsilon(randomized_response(3, e)) for e in EPS]
    return plot_leakage(EPS, levels, quantity="dp_epsilon", unit=unit)


def privacy_distortion(unit: str) -> Axes:
    curve = dpcap.privacy_distortion_curve([0.5, 0.5], HAMMING, n_points=4)
    return plot_privacy_distortion(curve, unit=unit)


def rate_distortion(unit: str) -> Axes:
    curve = dpcap.rate_distortion_curve([0.3, 0.7], HAMMING, n_points=6)
    return plot_rate_distortion(curve, unit=unit)


def renyi_profile(unit: str) -> Axes:
    profile = dpcap.renyi_profile([[0.9, 0.1], [0.1, 0.9]], [0.5, 2.0, 8.0, np.inf])
    return plot_renyi_profile(profile, unit=unit)


def privacy_region(unit: str) -> Axes:
    pf = dpcap.privacy_funnel_curve(JOINT, n_points=3)
    ib = dpcap.information_bottleneck_curve(JOINT, n_points=3)
    return plot_privacy_region(pf, ib, unit=unit, mechanisms=False)


def sweep(unit: str) -> Axes:
    rows = []
    for point, (n, eps) in enumerate((n, e) for n in (2, 3) for e in EPS):
        result = dpcap.capacity(randomized_response(n, eps))
        rows.append(
            {
                "point": point,
                "n": n,
                "eps": eps,
                "query": "capacity",
                "value": result.value,
                "lower": result.lower,
                "upper": result.upper,
                "status": result.status.value,
                "iterations": result.iterations,
                "method": result.method,
                "unit": result.unit,
                "message": "",
                "seconds": 0.0,
            }
        )
    return plot_sweep(pd.DataFrame(rows), "eps", "capacity", hue="n", unit=unit)


#: kind → (figure, title pieces, horizontal label, vertical label; "{unit}" is the unit asked).
CASES: dict[str, tuple[Callable[[str], Axes], list[str], str, str]] = {
    "delta(eps)": (
        privacy_profile,
        ["privacy profile", r"$(\varepsilon, \delta)$-DP"],
        "ε (nats)",
        "δ(ε)",
    ),
    "leakage vs parameter": (leakage, ["capacity against ε"], "ε (nats)", "capacity ({unit})"),
    "eps-DP level vs parameter": (
        epsilon_level,
        ["ε-DP level against ε"],
        "ε (nats)",
        "ε-DP level (nats)",
    ),
    "eps*(D)": (
        privacy_distortion,
        ["privacy–distortion", r"$\varepsilon^*(D)$"],
        "distortion budget $D$",
        r"least $\varepsilon$-DP level $\varepsilon^*(D)$ (nats)",
    ),
    "R(D)": (
        rate_distortion,
        ["rate–distortion", "$R(D)$"],
        "expected distortion $D$",
        "rate $R(D)$ ({unit})",
    ),
    "Renyi profile": (
        renyi_profile,
        ["Rényi capacity profile", r"$\alpha \mapsto C_\alpha$", "radius and diameter"],
        r"order $\alpha$",
        "Rényi capacity ({unit})",
    ),
    "PF/IB region": (
        privacy_region,
        ["privacy–utility region", "Hsu et al."],
        "utility $I(X;Y)$ ({unit})",
        "leakage $I(S;Y)$ ({unit})",
    ),
    "sweep": (sweep, ["capacity against eps"], "eps (nats)", "capacity ({unit})"),
}


@pytest.mark.parametrize("unit", ["nats", "bits"])
@pytest.mark.parametrize("kind", list(CASES))
def test_title_and_axis_labels_name_quantities_and_units(kind: str, unit: str) -> None:
    make, title_pieces, xlabel, ylabel = CASES[kind]
    ax = make(unit)
    assert isinstance(ax, Axes)
    title = ax.get_title()
    for piece in title_pieces:
        assert piece in title, (kind, title)
    assert ax.get_xlabel() == xlabel.format(unit=unit)
    assert ax.get_ylabel() == ylabel.format(unit=unit)


@pytest.mark.parametrize(
    ("make", "absent"),
    [(privacy_distortion, "R(D)"), (rate_distortion, r"\varepsilon^*")],
    ids=["eps*(D) is not R(D)", "R(D) is not eps*(D)"],
)
def test_distortion_figures_do_not_take_each_others_names(
    make: Callable[[str], Axes], absent: str
) -> None:
    ax = make("nats")
    texts: list[Any] = [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
    legend = ax.get_legend()
    assert legend is not None
    texts += [t.get_text() for t in legend.get_texts()]
    assert not any(absent in text for text in texts), texts
