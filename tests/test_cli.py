"""The command line: ``dpcap audit`` of a mechanism stored in a file, and ``dpcap demo``.

* a counting query of ``n`` binary entries with truncated geometric noise of level ε is ε-DP
  under Hamming neighbours, its free-lunch capacity is the noise's capacity (the count takes
  every value), its MI-DP the largest capacity of two adjacent noise rows and at most
  ``ε tanh(ε/2)`` (Cuff & Yu, Def. 2, §6.2, Lemma 1), its maximal leakage
  ``log Σ_y max_c noise[c, y]``; ``dpcap demo --n 40`` gets these through the structured
  mechanism, never enumerating the 2^40 databases;
* randomized response on k values at level ε: ``δ(ε') = (e^ε − e^ε')/(e^ε + k − 1)`` below ε.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import dpcap
from dpcap import cli
from dpcap.mechanisms import discrete_laplace, randomized_response, truncated_geometric


def test_demo_prints_the_default_audit(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "count of 8 binary entries" in out
    # a count of binary entries with geometric noise of level 1 is 1-DP (Hamming neighbours)
    assert "eps = 1 nats" in out
    assert "KL-DP" in out
    assert "maximal leakage" in out


def test_audit_json_matches_closed_forms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rr.npy"
    np.save(path, randomized_response(3, 1.0).matrix)
    assert cli.main(["audit", str(path), "--eps", "0,0.5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    e = math.e
    assert report["dp_epsilon"] == pytest.approx(1.0)
    assert report["delta"][1][1] == pytest.approx((e - math.exp(0.5)) / (e + 2))
    assert report["max_leakage"] == pytest.approx(math.log(3 * e / (e + 2)))


def test_audit_csv_with_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "xor.csv"
    np.savetxt(path, [[1, 0], [0, 1], [0, 1], [1, 0]], delimiter=",")
    assert cli.main(["audit", str(path), "--shape", "2,2"]) == 0
    assert "no finite eps" in capsys.readouterr().out


def test_errors_are_reported_not_raised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.csv"
    np.savetxt(path, [[0.5, 0.4], [0.5, 0.5]], delimiter=",")
    assert cli.main(["audit", str(path)]) == 2
    assert "row 0 sums to 0.9" in capsys.readouterr().err
    assert cli.main(["audit", str(tmp_path / "missing.npy")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize(("n", "eps"), [(2, 0.5), (10, 1.0)])
def test_audit_of_a_truncated_geometric_reports_eps(n: int, eps: float) -> None:
    report = cli.audit(truncated_geometric(n, eps))
    assert report["neighbors"] == "line"
    assert abs(report["dp_epsilon"] - eps) <= 1e-12
    forced = cli.audit(truncated_geometric(n, eps), neighbors="all")
    assert forced["neighbors"] == "all"
    assert forced["dp_epsilon"] == pytest.approx(n * eps, rel=1e-12)


def test_audit_command_of_a_truncated_geometric(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n, eps = 6, 0.75
    path = tmp_path / "geometric.csv"
    np.savetxt(path, truncated_geometric(n, eps).matrix, delimiter=",")
    assert cli.main(["audit", str(path), "--neighbors", "line", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["neighbors"] == "line"
    assert report["dp_epsilon"] == pytest.approx(eps, abs=1e-12)
    # a matrix in a file carries no relation: one entry under "hamming", every pair of rows
    assert cli.main(["audit", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["neighbors"] == "hamming"
    assert report["dp_epsilon"] == pytest.approx(n * eps, rel=1e-12)


def test_audit_of_explicit_pairs_is_json_safe() -> None:
    report = cli.audit(discrete_laplace(5, 1.0, sensitivity=2))
    assert report["neighbors"][:3] == [[0, 1], [0, 2], [1, 2]]
    assert report["dp_epsilon"] == pytest.approx(1.0, rel=1e-12)
    json.dumps(report)
    assert "9 explicit pairs" in cli.format_audit(report, "title")


def test_version_and_option_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import dpcap

    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"dpcap {dpcap.__version__}"
    path = tmp_path / "rr.npy"
    np.save(path, randomized_response(2, 1.0).matrix)
    assert cli.main(["audit", str(path), "--eps", "abc"]) == 2
    err = capsys.readouterr().err
    assert "argument --eps: expected comma-separated levels eps (nats)" in err
    assert "got 'abc'" in err


@pytest.mark.parametrize(
    "text",
    [
        "y0,y1\n0.75,0.25\n0.25,0.75\n",
        "y0;y1\n0.75;0.25\n0.25;0.75\n",
        "0.75\t0.25\n0.25\t0.75\n",
        "# a comment\n0.75 0.25\n0.25 0.75\n",
    ],
)
def test_text_matrices_with_headers_and_separators(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "W.csv"
    path.write_text(text)
    assert cli.main(["audit", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # a BSC with crossover 1/4 as a one-entry database: ε = ln 3
    assert report["dp_epsilon"] == pytest.approx(math.log(3), rel=1e-12)


def test_ragged_text_matrix_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "W.csv"
    path.write_text("0.5,0.5\n1.0\n")
    assert cli.main(["audit", str(path)]) == 2
    assert "different lengths" in capsys.readouterr().err


def test_demo_n_40_runs_through_the_structured_mechanism(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """2^40 databases: every audit query must use the counting structure (no dense matrix)."""
    n, eps = 40, 1.0
    assert cli.main(["demo", "--n", str(n), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    noise = truncated_geometric(n, eps).matrix
    assert report["shape"] == [2] * n
    assert report["outputs"] == n + 1
    assert report["dp_epsilon"] == pytest.approx(eps, abs=1e-12)
    # maximal leakage log Σ_y max_x W[x, y]: the rows are the noise rows of the counts 0..n
    assert report["max_leakage"] == pytest.approx(math.log(noise.max(axis=0).sum()), rel=1e-12)
    # free-lunch privacy sup I(X^n; Y) = C(noise), certified by the dense engine on 41 rows
    dense = dpcap.capacity(noise)
    lower, upper = report["capacity"]
    assert lower <= dense.upper + 1e-9
    assert dense.lower <= upper + 1e-9
    assert upper - lower <= 1e-9
    # MI-DP = max_c C([noise_c; noise_c+1]) (two-row slices), and ε tanh(ε/2) bounds it
    slices = max(dpcap.capacity(noise[c : c + 2]).upper for c in range(n))
    assert report["midp"][1] == pytest.approx(slices, abs=1e-9)
    assert report["midp"][1] <= eps * math.tanh(eps / 2) + 1e-12
    # δ(ε) of the DP level is 0 up to rounding, δ(0) is the TV level
    levels = dict(report["delta"])
    assert levels[1.0] <= 1e-12
    assert levels[0.0] == pytest.approx(report["tv"], rel=1e-12)


def test_demo_text_names_units_and_a_long_shape_compactly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["demo", "--n", "40", "--unit", "bits"]) == 0
    out = capsys.readouterr().out
    assert "domain shape (2,) * 40" in out
    assert "eps = 1 nats" in out  # ε is never converted
    assert "KL-DP" in out
    assert "bits" in out


def test_demo_bad_inputs_name_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "--n", "0"]) == 2
    assert "argument --n: expected an integer >= 1, got '0'" in capsys.readouterr().err
    assert cli.main(["demo", "--eps", "-1"]) == 2
    assert "--eps -1.0: eps must be >= 0" in capsys.readouterr().err


def test_audit_reads_json_with_its_shape_and_relation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n, eps = 4, 0.5
    path = tmp_path / "geometric.json"
    matrix = truncated_geometric(n, eps).matrix.tolist()
    path.write_text(json.dumps({"matrix": matrix, "neighbors": "line", "name": "TG"}))
    assert cli.main(["audit", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["neighbors"] == "line"
    assert report["dp_epsilon"] == pytest.approx(eps, abs=1e-12)
    # the command line wins over the file: every pair of the 5 values, ε = n·0.5
    assert cli.main(["audit", str(path), "--neighbors", "all", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dp_epsilon"] == pytest.approx(n * eps)


def test_audit_and_demo_write_the_delta_curve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "rr.npy"
    np.save(path, randomized_response(3, 1.0).matrix)
    figure = tmp_path / "audit.png"
    assert cli.main(["audit", str(path), "--plot", str(figure)]) == 0
    assert f"figure: {figure}" in capsys.readouterr().out
    assert figure.stat().st_size > 0
    figure = tmp_path / "demo.png"
    assert cli.main(["demo", "--n", "3", "--plot", str(figure)]) == 0
    assert figure.stat().st_size > 0


# --------------------------------------------------------------------------- what does not fit


@pytest.fixture
def above_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, np.ndarray]:
    """A 300 × 300 Dirichlet channel whose 44,850 pairs of rows (13,455,000 pair-outputs) pass
    a pair-work limit lowered to 10⁶: δ(ε) does not fit, ε (column by column), KL-DP and TV
    (matrix products, a few pairs left to the kernel) do."""
    import dpcap.neighbors

    monkeypatch.setattr(dpcap.neighbors, "MAX_PAIR_WORK", 10**6)
    W = np.random.default_rng(26).dirichlet(np.ones(300), size=300)
    path = tmp_path / "W.npy"
    np.save(path, W)
    return path, W


def test_audit_reports_what_fits_and_names_what_it_skipped(
    above_the_limit: tuple[Path, np.ndarray], capsys: pytest.CaptureFixture[str]
) -> None:
    path, W = above_the_limit
    assert cli.main(["audit", str(path), "--json"]) == 1  # something was skipped
    report = json.loads(capsys.readouterr().out)
    assert list(report["skipped"]) == ["delta"]
    assert report["delta"] is None
    reason, option = report["skipped"]["delta"]["reason"], report["skipped"]["delta"]["option"]
    assert "44850 distinct pairs of rows over 300 outputs (13455000 pair-outputs" in reason
    assert option.startswith("--max-pair-work 13455000 ")
    assert report["kl_dp"] == dpcap.kl_dp(W)
    assert report["tv"] == dpcap.tv_dp(W)
    assert report["dp_epsilon"] == dpcap.dp_epsilon(W)
    assert report["capacity"][0] <= report["capacity"][1]
    assert cli.main(["audit", str(path)]) == 1
    out = capsys.readouterr().out
    assert "approximate DP   skipped: dp_delta_curve would compare 44850" in out
    assert "to allow it: --max-pair-work 13455000" in out
    assert "KL-DP            " in out
    assert "prior on X_i = mass on " in out  # 300 values: the support, not the list
    assert "skipped" not in out.split("KL-DP")[1]


def test_the_option_named_allows_the_metric(
    above_the_limit: tuple[Path, np.ndarray], capsys: pytest.CaptureFixture[str]
) -> None:
    import dpcap.neighbors

    path, W = above_the_limit
    eps = "0,0.5,1"
    assert (
        cli.main(["audit", str(path), "--eps", eps, "--max-pair-work", "13455000", "--json"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["skipped"] == {}
    assert dpcap.neighbors.MAX_PAIR_WORK == 10**6  # restored after the command
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dpcap.neighbors, "MAX_PAIR_WORK", 2**29)
        curve = dpcap.dp_delta_curve(W, [0.0, 0.5, 1.0])
    assert [d for _, d in report["delta"]] == curve.tolist()


def test_no_figure_when_the_curve_was_skipped(
    above_the_limit: tuple[Path, np.ndarray], capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = above_the_limit
    figure = path.with_suffix(".png")
    assert cli.main(["audit", str(path), "--plot", str(figure)]) == 1
    assert "no figure: delta(eps) was skipped" in capsys.readouterr().out
    assert not figure.exists()
