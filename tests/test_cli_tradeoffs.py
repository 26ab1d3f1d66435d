"""``dpcap rd``, ``pd`` and ``funnel`` through ``main()``, against closed forms.

* Mir, Thm 3 (Cover & Thomas, Thm 10.3.1): a Bernoulli(p) source under Hamming distortion has
  ``R(D) = h(p) − h(D)`` for ``0 ≤ D ≤ min(p, 1 − p)`` and 0 beyond; the optimal mechanism is
  exponential with slope ``s = ln((1 − D)/D)``.
* Wang, Ying and Zhang (Ünsal & Önen §5): databases ``{0..m−1}^n`` with a uniform prior,
  Hamming distortion between databases and Hamming neighbours have
  ``ε*(D) = ln(n/D − 1) + ln(m − 1)`` for ``0 < D ≤ n(m − 1)/m``.
* Hsu et al. §III-B on the doubly symmetric binary source (X uniform, S = X ⊕ Bern(p)): the
  privacy funnel is linear, ``PF(R) = R · I(S;X)/H(X)`` (erasing X), and the information
  bottleneck is Mrs. Gerber's lemma, ``IB(R) = ln 2 − h(p ⋆ h^{-1}(ln 2 − R))`` with
  ``a ⋆ b = a(1 − b) + b(1 − a)``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from dpcap import cli

LN2 = math.log(2)


def h(p: float) -> float:
    if p in (0.0, 1.0):
        return 0.0
    return -p * math.log(p) - (1 - p) * math.log(1 - p)


def h_inverse(y: float) -> float:
    """The p in [0, 1/2] with h(p) = y (bisection)."""
    lo, hi = 0.0, 0.5
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if h(mid) < y else (lo, mid)
    return (lo + hi) / 2


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert cli.main([*argv, "--json"]) == 0, capsys.readouterr().err
    out: dict = json.loads(capsys.readouterr().out)
    return out


def write(tmp_path: Path, name: str, matrix: list[list[float]] | np.ndarray) -> Path:
    path = tmp_path / name
    np.savetxt(path, np.asarray(matrix, dtype=float), delimiter=",")
    return path


# --- rd -----------------------------------------------------------------------------------


@pytest.mark.parametrize("unit", ["nats", "bits"])
def test_rate_distortion_of_a_binary_source(
    unit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = 0.3
    path = write(tmp_path, "hamming.csv", [[0, 1], [1, 0]])
    budgets = [0.0, 0.05, 0.1, 0.2, 0.3, 0.45]
    out = run_json(
        capsys, "rd", str(path), "--prior", "0.3,0.7", "--D", "0,0.05,0.1,0.2,0.3,0.45",
        "--unit", unit,
    )  # fmt: skip
    scale = 1.0 if unit == "nats" else LN2
    res = out["result"]
    assert out["prior"] == pytest.approx([p, 1 - p])
    assert res["D"] == budgets
    assert res["unit"] == unit
    for D, lower, upper, point in zip(
        budgets, res["lower"], res["upper"], res["points"], strict=True
    ):
        expected = max(0.0, h(p) - h(D)) / scale
        assert lower - 1e-9 <= expected <= upper + 1e-9
        assert upper - lower <= 1e-9 / scale
        if 0 < D < p:  # the exponential mechanism's slope, in nats per unit distortion
            assert point["slope"] == pytest.approx(math.log((1 - D) / D), rel=1e-6)


def test_rate_distortion_curve_text_and_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"distortion": [[0, 1], [1, 0]], "prior": [0.3, 0.7]}))
    curve = run_json(capsys, "rd", str(path), "--n-points", "5")["result"]
    assert len(curve["D"]) == 5
    assert curve["D"][0] == 0.0
    assert curve["D"][-1] == pytest.approx(0.3)
    assert curve["value"][0] == pytest.approx(h(0.3), abs=1e-9)
    assert curve["value"][-1] == 0.0
    assert cli.main(["rd", str(path), "--n-points", "5", "--unit", "bits"]) == 0
    out = capsys.readouterr().out
    assert "R(D) [bits]" in out
    assert "slope s [nats/d]" in out
    assert "eps [nats]" in out
    pytest.importorskip("matplotlib")
    figure = tmp_path / "rd.png"
    assert cli.main(["rd", str(path), "--plot", str(figure)]) == 0
    assert figure.stat().st_size > 0


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--D", "0.01"], "--D 0.01: D must be >= D_min = 0.1"),
        (["--D", "-1"], "argument --D: budgets D must be >= 0 and finite, got '-1'"),
        (["--prior", "0.5,0.6"], "--prior '0.5,0.6': prior must sum to 1"),
        (["--prior", "0.2,0.3,0.5"], "--prior '0.2,0.3,0.5': expected 2 probabilities"),
        (["--D", "0.2", "--n-points", "3"], "argument --n-points: not allowed with argument --D"),
        (["--n-points", "1"], "argument --n-points: expected an integer in [2, 10000], got '1'"),
    ],
)
def test_rate_distortion_bad_inputs(
    argv: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "d.csv", [[0.1, 1], [1, 0.1]])
    assert cli.main(["rd", str(path), *argv]) == 2
    assert named in capsys.readouterr().err


# --- pd -----------------------------------------------------------------------------------


def hamming_between_databases(n: int, m: int) -> np.ndarray:
    db = np.array(np.unravel_index(np.arange(m**n), (m,) * n)).T
    return (db[:, None, :] != db[None, :, :]).sum(axis=-1).astype(float)


@pytest.mark.parametrize(("n", "m"), [(2, 2), (2, 3)])
def test_privacy_distortion_closed_form(
    n: int, m: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "d.csv", hamming_between_databases(n, m))
    top = n * (m - 1) / m
    budgets = [0.1, 0.5, 0.9 * top]
    shape = ",".join([str(m)] * n)
    argv = ["pd", str(path), "--shape", shape, "--D", ",".join(map(repr, budgets))]
    res = run_json(capsys, *argv, "--unit", "bits")["result"]  # ε stays in nats
    assert res["unit"] == "nats"
    for D, lower, upper in zip(budgets, res["lower"], res["upper"], strict=True):
        expected = math.log(n / D - 1) + math.log(m - 1)
        assert lower - 1e-12 <= expected <= upper + 1e-12
        assert upper - lower <= 1e-9
    assert res["D"] == pytest.approx(budgets)
    for point, D in zip(res["points"], budgets, strict=True):
        assert point["distortion_achieved"] <= D


def test_privacy_distortion_json_input_text_and_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hamming4.json"
    spec = {"distortion": hamming_between_databases(2, 2).tolist(), "shape": [2, 2]}
    path.write_text(json.dumps(spec))
    curve = run_json(capsys, "pd", str(path), "--n-points", "4")["result"]
    assert np.all(np.diff(curve["value"]) <= 0)  # ε* is non-increasing in D
    assert cli.main(["pd", str(path), "--D", "0.5", "--unit", "bits"]) == 0
    out = capsys.readouterr().out
    assert "eps*(D) [nats]" in out
    assert f"{math.log(3):.9g}" in out  # ln(2/0.5 − 1)
    pytest.importorskip("matplotlib")
    figure = tmp_path / "pd.png"
    assert cli.main(["pd", str(path), "--n-points", "4", "--plot", str(figure)]) == 0
    assert figure.stat().st_size > 0


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--D", "0.01"], "--D 0.01: D=0.01 is below the least achievable expected distortion"),
        (["--shape", "2,3"], "--shape 2,3 describes 6 databases but"),
        (["--prior", "1,0,0"], "--prior '1,0,0': expected 4 probabilities"),
        (["--solver", "nope", "--D", "0.5"], "--solver nope: solver must be one of"),
    ],
)
def test_privacy_distortion_bad_inputs(
    argv: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "d.csv", hamming_between_databases(2, 2) + 0.1)
    assert cli.main(["pd", str(path), *argv]) == 2
    assert named in capsys.readouterr().err


# --- funnel -------------------------------------------------------------------------------


def dsbs(p: float) -> list[list[float]]:
    return [[0.5 * (1 - p), 0.5 * p], [0.5 * p, 0.5 * (1 - p)]]


@pytest.mark.parametrize("unit", ["nats", "bits"])
def test_funnel_on_the_doubly_symmetric_binary_source(
    unit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = 0.1
    scale = 1.0 if unit == "nats" else LN2
    path = write(tmp_path, "dsbs.csv", dsbs(p))
    levels = [0.1 / scale, 0.3 / scale, 0.6 / scale]
    argv = ["funnel", str(path), "--R", ",".join(map(repr, levels)), "--unit", unit]
    out = run_json(capsys, *argv)
    i_sx = LN2 - h(p)
    assert out["H(X)"] == pytest.approx(LN2 / scale)
    assert out["I(S;X)"] == pytest.approx(i_sx / scale)
    pf, ib = out["privacy_funnel"], out["information_bottleneck"]
    assert pf["R"] == pytest.approx(levels)
    for k, R in enumerate(levels):
        funnel = R * scale * i_sx / LN2 / scale
        assert pf["lower"][k] - 1e-7 <= funnel <= pf["upper"][k] + 1e-7
        q = h_inverse(LN2 - R * scale)
        gerber = (LN2 - h(p * (1 - q) + q * (1 - p))) / scale
        assert ib["lower"][k] - 1e-7 <= gerber <= ib["upper"][k] + 1e-7


def test_funnel_from_a_prior_and_a_channel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The BSC(p) with a uniform prior on S is the doubly symmetric source."""
    p = 0.1
    joint = write(tmp_path, "dsbs.csv", dsbs(p))
    channel = write(tmp_path, "bsc.csv", [[1 - p, p], [p, 1 - p]])
    a = run_json(capsys, "funnel", str(joint), "--problem", "ib", "--R", "0.3")
    b = run_json(
        capsys, "funnel", str(channel), "--prior", "0.5,0.5", "--problem", "ib", "--R", "0.3"
    )
    np.testing.assert_allclose(b["joint"], dsbs(p), rtol=1e-15)
    assert b["information_bottleneck"]["value"] == pytest.approx(
        a["information_bottleneck"]["value"], abs=1e-9
    )
    assert "privacy_funnel" not in b
    spec = tmp_path / "channel.json"  # the same, with the prior inside the file
    spec.write_text(json.dumps({"matrix": [[1 - p, p], [p, 1 - p]], "prior": [0.5, 0.5]}))
    c = run_json(capsys, "funnel", str(spec), "--problem", "ib", "--R", "0.3")
    assert c["information_bottleneck"]["value"] == b["information_bottleneck"]["value"]


def test_funnel_curves_text_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "dsbs.csv", dsbs(0.1))
    assert cli.main(["funnel", str(path), "--n-points", "3", "--unit", "bits"]) == 0
    out = capsys.readouterr().out
    assert "H(X) = 1 bits" in out
    assert "PF(R) [bits]" in out
    assert "IB upper [bits]" in out
    pytest.importorskip("matplotlib")
    figure = tmp_path / "region.svg"
    assert cli.main(["funnel", str(path), "--n-points", "3", "--plot", str(figure)]) == 0
    assert figure.stat().st_size > 0


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--R", "5"], "--R 5: R must be in [0, H(X)]"),
        (["--problem", "pf", "--plot", "x.png"], "--plot x.png: the region needs both curves"),
        (["--prior", "0.5,0.6"], "--prior '0.5,0.6': prior must sum to 1"),
        (["--method", "exact"], "argument --method: invalid choice: 'exact'"),
    ],
)
def test_funnel_bad_inputs(
    argv: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "dsbs.csv", dsbs(0.1))
    if "--prior" in argv:
        path = write(tmp_path, "bsc.csv", [[0.9, 0.1], [0.1, 0.9]])
    assert cli.main(["funnel", str(path), *argv]) == 2
    assert named in capsys.readouterr().err


def test_funnel_refuses_a_channel_without_a_prior(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "bsc.csv", [[0.9, 0.1], [0.1, 0.9]])
    assert cli.main(["funnel", str(path)]) == 2
    err = capsys.readouterr().err
    assert "bsc.csv: the entries sum to 2, not 1: a joint law P(S, X) is expected" in err
    assert "give --prior" in err
    path = tmp_path / "j.json"
    path.write_text(json.dumps({"joint": dsbs(0.1), "prior": [0.5, 0.5]}))
    assert cli.main(["funnel", str(path)]) == 2
    assert '"joint" is a joint law, which takes no prior' in capsys.readouterr().err
