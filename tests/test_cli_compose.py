"""``dpcap compose``: parts with counts, δ(ε), ε(δ), trade-off, JSON, errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from dpcap import cli


def _rr(tmp_path: Path, eps: float) -> Path:
    e = math.exp(eps)
    path = tmp_path / "rr.csv"
    np.savetxt(path, np.array([[e, 1.0], [1.0, e]]) / (e + 1.0), delimiter=",")
    return path


def test_compose_prints_brackets_that_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _rr(tmp_path, 1.0)
    assert cli.main(["compose", f"{path}:10", "--eps", "0,5", "--delta", "1e-3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # 10-fold binary RR at eps = 5: sum over i of C(10, i) p^i (1 - p)^(10 - i) (1 - e^(5 - L))
    p = math.e / (1 + math.e)
    exact = sum(
        math.comb(10, i) * p**i * (1 - p) ** (10 - i) * (1 - math.exp(5 - (2 * i - 10)))
        for i in range(11)
        if 2 * i - 10 > 5
    )
    lower, upper = out["delta"]["lower"][1], out["delta"]["upper"][1]
    assert lower - 1e-15 <= exact <= upper + 1e-15
    eps = out["epsilon"][0]
    assert eps["lower"] <= eps["upper"] <= 10.0


def test_compose_table_and_tradeoff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _rr(tmp_path, math.log(3))
    assert cli.main(["compose", str(path), "--alpha", "0,0.25,1"]) == 0
    text = capsys.readouterr().out
    assert "trade-off beta(alpha)" in text
    assert "0.25" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["{path}:0"], "count after ':'"),
        (["{path}:5", "--delta", "2"], "delta"),
        (["{missing}:3"], "no such file"),
    ],
)
def test_compose_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    path = _rr(tmp_path, 1.0)
    filled = [a.format(path=path, missing=tmp_path / "missing.csv") for a in argv]
    try:
        status = cli.main(["compose", *filled])
    except SystemExit as exc:  # argparse refuses a bad count before main runs
        status = int(exc.code or 0)
    assert status == 2
    assert message in capsys.readouterr().err
