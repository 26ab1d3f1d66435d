"""``dpcap capacity``, ``midp``, ``renyi`` and ``delta`` through ``main()``, against closed forms.

* BSC(p): ``C = ln 2 − h(p)`` (Cover & Thomas §7.1.4); Sibson's ``C_α = ln 2 − H_α(p)`` with
  ``H_α(p) = ln(p^α + (1 − p)^α)/(1 − α)`` and ``C_∞ = ln(2 max(p, 1 − p))`` (the Rényi-capacity
  article's BSC example); the Rényi divergence between its rows
  ``D_α = ln((1−p)^α p^{1−α} + p^α (1−p)^{1−α})/(α − 1)``, at ∞ ``ln((1 − p)/p)``.
* Y = X_1 XOR X_2: every slice is a permutation of two outputs, so MI-DP = ln 2 for each
  entry and for the group, at every Rényi order (Cuff & Yu, Def. 2).
* Binary randomized response at level ε as one entry: MI-DP = its capacity
  ``ln 2 − h(1/(1 + e^ε))`` (Cuff & Yu, Example 1), Rényi MI-DP of order α the radius above.
* k-ary randomized response at level ε: ``δ(ε') = (e^ε − e^ε')/(e^ε + k − 1)`` for ε' < ε and 0
  from ε on; its pure DP level is ε and ``δ(0)`` its total variation.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from dpcap import cli
from dpcap.mechanisms import randomized_response

LN2 = math.log(2)


def h(p: float) -> float:
    return -p * math.log(p) - (1 - p) * math.log(1 - p)


def renyi_entropy(p: float, alpha: float) -> float:
    if math.isinf(alpha):
        return -math.log(max(p, 1 - p))
    if alpha == 1:
        return h(p)
    return math.log(p**alpha + (1 - p) ** alpha) / (1 - alpha)


def renyi_divergence(p: float, alpha: float) -> float:
    """``D_α(W_0 ‖ W_1)`` between the rows (1 − p, p) and (p, 1 − p)."""
    if math.isinf(alpha):
        return math.log((1 - p) / p)
    if alpha == 1:
        return (1 - 2 * p) * math.log((1 - p) / p)
    inner = (1 - p) ** alpha * p ** (1 - alpha) + p**alpha * (1 - p) ** (1 - alpha)
    return math.log(inner) / (alpha - 1)


def bsc_file(tmp_path: Path, p: float) -> Path:
    path = tmp_path / "bsc.csv"
    np.savetxt(path, [[1 - p, p], [p, 1 - p]], delimiter=",")
    return path


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert cli.main([*argv, "--json"]) == 0, capsys.readouterr().err
    out: dict = json.loads(capsys.readouterr().out)
    return out


# --- capacity -----------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.1, 0.25, 0.4])
def test_capacity_of_a_bsc(p: float, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = bsc_file(tmp_path, p)
    out = run_json(capsys, "capacity", str(path))
    res = out["result"]
    assert out["command"] == "capacity"
    assert res["lower"] - 1e-12 <= LN2 - h(p) <= res["upper"] + 1e-12
    assert res["upper"] - res["lower"] <= 1e-9
    assert res["prior"] == pytest.approx([0.5, 0.5], abs=1e-6)
    assert res["status"] == "converged"
    assert res["unit"] == "nats"
    bits = run_json(capsys, "capacity", str(path), "--unit", "bits")["result"]
    assert bits["unit"] == "bits"
    assert bits["value"] == pytest.approx((LN2 - h(p)) / LN2, abs=1e-9)


def test_capacity_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["capacity", str(bsc_file(tmp_path, 0.1)), "--unit", "bits"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  capacity\s+", out, re.M)
    assert f"{(LN2 - h(0.1)) / LN2:.9g} bits" in out
    assert re.search(r"^  prior\s+\[0.5, 0.5\]$", out, re.M)


def test_capacity_bad_matrix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "W.csv"
    path.write_text("0.5,0.6\n0.5,0.5\n")
    assert cli.main(["capacity", str(path)]) == 2
    assert "W.csv: W is not row-stochastic: row 0 sums to 1.1" in capsys.readouterr().err


# --- midp ---------------------------------------------------------------------------------


def test_midp_of_xor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "xor.csv"
    np.savetxt(path, [[1, 0], [0, 1], [0, 1], [1, 0]], delimiter=",")
    res = run_json(capsys, "midp", str(path), "--shape", "2,2")["result"]
    assert res["value"] == pytest.approx(LN2, abs=1e-9)
    assert res["per_entry"] == pytest.approx([LN2, LN2], abs=1e-9)
    group = run_json(capsys, "midp", str(path), "--shape", "2,2", "--group", "0,1")["result"]
    assert group["value"] == pytest.approx(LN2, abs=1e-9)
    assert group["entry"] == [0, 1]
    for alpha in ("2", "inf"):
        argv = ["renyi_midp", str(path), "--shape", "2,2", "--alpha", alpha, "--unit", "bits"]
        out = run_json(capsys, *argv)
        assert out["parameters"]["alpha"] == float(alpha)
        assert out["result"]["value"] == pytest.approx(1.0, abs=1e-9)
    assert cli.main(["midp", str(path), "--shape", "2,2"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^  midp\s+0.69314718", text, re.M)
    assert re.search(r"^  per entry\s+\[0.693147, 0.693147\]$", text, re.M)


@pytest.mark.parametrize("alpha", [0.5, 2.0, math.inf])
def test_renyi_midp_of_binary_randomized_response(
    alpha: float, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    eps = 1.0
    p = 1 / (1 + math.e**eps)
    path = tmp_path / "rr.npy"
    np.save(path, randomized_response(2, eps).matrix)
    shannon = run_json(capsys, "midp", str(path))["result"]
    assert shannon["value"] == pytest.approx(LN2 - h(p), abs=1e-9)
    res = run_json(capsys, "renyi_midp", str(path), "--alpha", str(alpha))["result"]
    assert res["value"] == pytest.approx(LN2 - renyi_entropy(p, alpha), abs=1e-9)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--shape", "2,3"], "--shape 2,3 describes 6 databases but"),
        (["--shape", "2,2", "--group", "5"], "--group 5: group must be"),
        (["--shape", "2,x"], "argument --shape: expected comma-separated integers >= 1, got '2,x'"),
        (["--alpha", "-1"], "argument --alpha: order must be >= 0, got '-1'"),
        (["--alpha", "2,3"], "argument --alpha: expected one order, got '2,3'"),
    ],
)
def test_midp_bad_inputs(
    argv: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "xor.csv"
    np.savetxt(path, [[1, 0], [0, 1], [0, 1], [1, 0]], delimiter=",")
    command = "renyi_midp" if "--alpha" in argv else "midp"
    assert cli.main([command, str(path), *argv]) == 2
    assert named in capsys.readouterr().err


# --- renyi --------------------------------------------------------------------------------


@pytest.mark.parametrize("unit", ["nats", "bits"])
def test_renyi_profile_of_a_bsc(
    unit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = 0.1
    orders = [0.5, 1.0, 2.0, math.inf]
    path = bsc_file(tmp_path, p)
    out = run_json(capsys, "renyi", str(path), "--alpha", "0.5,1,2,inf", "--unit", unit)
    scale = 1.0 if unit == "nats" else LN2
    res = out["result"]
    assert res["alpha"] == orders
    assert res["unit"] == unit
    expected = [(LN2 - renyi_entropy(p, a)) / scale for a in orders]
    assert res["value"] == pytest.approx(expected, abs=1e-9)
    # one entry: every pair of rows are neighbours, the Rényi DP level is the diameter; the
    # diameter is a divergence in --unit, the Rényi DP level a privacy level in nats like ε
    divergence = [renyi_divergence(p, a) for a in orders]
    assert out["renyi_dp"] == pytest.approx(divergence, rel=1e-9)
    assert out["renyi_dp_unit"] == "nats"
    assert res["diameter"] == pytest.approx([d / scale for d in divergence], rel=1e-9)
    assert out["neighbors"] == "hamming"


def test_renyi_text_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = bsc_file(tmp_path, 0.1)
    assert cli.main(["renyi", str(path), "--unit", "bits"]) == 0
    out = capsys.readouterr().out
    assert "C_alpha [bits]" in out
    assert "Renyi DP [nats]" in out  # a privacy level: ε's unit, whatever --unit says
    assert out.count("converged") == 7  # the default orders 0.5, 1, 2, 4, 8, 16, inf
    pytest.importorskip("matplotlib")
    figure = tmp_path / "renyi.png"
    assert cli.main(["renyi", str(path), "--plot", str(figure)]) == 0
    assert figure.stat().st_size > 0
    assert f"figure: {figure}" in capsys.readouterr().out


def test_renyi_bad_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = bsc_file(tmp_path, 0.1)
    assert cli.main(["renyi", str(path), "--alpha", "abc"]) == 2
    assert "argument --alpha: expected comma-separated orders" in capsys.readouterr().err
    assert cli.main(["renyi", str(path), "--shape", "3"]) == 2
    assert "--shape 3 describes 3 databases but" in capsys.readouterr().err


# --- delta --------------------------------------------------------------------------------


def test_delta_of_randomized_response(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    eps, k = 1.0, 3
    rr = tmp_path / "rr.npy"
    np.save(rr, randomized_response(k, eps).matrix)
    levels = [0.0, 0.25, 0.5, 1.0, 2.0]
    expected = [max(0.0, (math.e**eps - math.e**e) / (math.e**eps + k - 1)) for e in levels]
    out = run_json(capsys, "delta", str(rr), "--eps", "0,0.25,0.5,1,2")
    assert out["eps"] == levels
    (mech,) = out["mechanisms"]
    assert mech["delta"] == pytest.approx(expected, abs=1e-12)
    assert mech["dp_epsilon"] == pytest.approx(eps, abs=1e-12)
    assert mech["tv"] == pytest.approx(expected[0], abs=1e-12)
    # two mechanisms side by side: the BSC(p) is ln((1-p)/p)-DP, δ(0) = 1 − 2p
    p = 0.2
    bsc = bsc_file(tmp_path, p)
    out = run_json(capsys, "delta", str(rr), str(bsc), "--eps", "0")
    assert [m["input"] for m in out["mechanisms"]] == [str(rr), str(bsc)]
    assert out["mechanisms"][1]["delta"] == pytest.approx([1 - 2 * p], abs=1e-12)
    assert out["mechanisms"][1]["dp_epsilon"] == pytest.approx(math.log((1 - p) / p))


def test_delta_text_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rr = tmp_path / "rr.npy"
    np.save(rr, randomized_response(3, 1.0).matrix)
    assert cli.main(["delta", str(rr), "--unit", "bits"]) == 0
    out = capsys.readouterr().out
    assert "eps [nats]" in out  # ε is never converted
    assert "pure DP eps = 1 nats" in out
    pytest.importorskip("matplotlib")
    figure = tmp_path / "delta.pdf"
    assert cli.main(["delta", str(rr), str(bsc_file(tmp_path, 0.2)), "--plot", str(figure)]) == 0
    assert figure.stat().st_size > 0


def test_delta_bad_inputs_name_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = bsc_file(tmp_path, 0.2)
    bad = tmp_path / "bad.csv"
    bad.write_text("0.5,0.4\n0.5,0.5\n")
    assert cli.main(["delta", str(good), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: W is not row-stochastic" in err
    assert cli.main(["delta", str(good), "--eps", "abc"]) == 2
    assert "argument --eps: expected comma-separated levels eps (nats)" in capsys.readouterr().err
