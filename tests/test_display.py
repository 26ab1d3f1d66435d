"""How results and channels look in a notebook (``_repr_html_``, dpcap.result.display).

* the value shows only the digits both ends of the bracket agree on: every number inside the
  bracket rounds to those digits (checked on random brackets), and no further digit is shown;
* point, curve and batch results, and channels up to 16×16, render as theme-neutral tables
  (no colours) with unit, status and bracket, while ``repr()`` is unchanged;
* a large or structured mechanism is summarised without building its matrix.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import dpcap
from dpcap.mechanisms import counting_query, randomized_response, truncated_geometric
from dpcap.result.display import agreed


def _digits(text: str) -> int:
    mantissa = text.split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return len(mantissa) if mantissa else 1


def test_agreed_digits_hold_for_every_number_in_the_bracket() -> None:
    rng = np.random.default_rng(7)
    for _ in range(2000):
        centre = rng.uniform(-5, 5) * 10.0 ** rng.integers(-8, 8)
        width = abs(centre) * 10.0 ** rng.uniform(-13, -1)
        lo, up = centre - width * rng.random(), centre + width * rng.random()
        shown = agreed(lo, up)
        if not shown:
            continue
        s = _digits(shown)
        for x in np.linspace(lo, up, 7):
            assert float(f"{x:#.{s}g}") == float(shown), (lo, up, shown, x)
        if s < 12:  # one digit more would not be agreed
            assert f"{lo:#.{s + 1}g}" != f"{up:#.{s + 1}g}"


@pytest.mark.parametrize(
    ("lo", "up", "shown"),
    [(0.2999, 0.3001, "0.300"), (0.95, 1.05, ""), (1.25, 1.25, "1.25"), (np.inf, np.inf, "∞")],
)
def test_agreed_examples(lo: float, up: float, shown: str) -> None:
    assert agreed(lo, up) == shown


def _neutral(html: str) -> None:
    assert "<table" in html
    assert not re.search(r"background|color:|#[0-9a-fA-F]{3,6}\b", html)


def test_point_result_html_and_unchanged_repr() -> None:
    r = dpcap.capacity([[0.9, 0.1], [0.2, 0.8]], unit="bits")
    html = r._repr_html_()
    _neutral(html)
    assert f"{agreed(r.lower, r.upper)} bits" in html
    assert "converged" in html
    assert "prior" in html
    assert repr(r).startswith("CapacityResult(value=")
    assert "<" not in repr(r)


def test_curve_and_batch_html() -> None:
    curve = dpcap.rate_distortion_curve([0.3, 0.7], 1 - np.eye(2))
    html = curve._repr_html_()
    _neutral(html)
    assert html.count("<tr>") <= 14  # 12 points, the elision and the header
    assert "⋮" in html
    assert ">D<" in html
    batch = dpcap.capacities([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.1, 0.9]]])
    bhtml = batch._repr_html_()
    _neutral(bhtml)
    assert bhtml.count("converged") == 2


def test_channel_html_small_large_and_structured() -> None:
    html = randomized_response(3, 1.0)._repr_html_()
    _neutral(html)
    assert "rows are inputs" in html
    assert html.count("<tr>") == 3
    big = dpcap.Channel(np.full((20, 20), 0.05))._repr_html_()
    assert "first 16×16 shown" in big
    assert big.count("<tr>") == 17
    huge = counting_query(40, truncated_geometric(40, 1.0))._repr_html_()
    assert "1099511627776 inputs" in huge
    assert "<table" not in huge
