"""Hostile and messy input gets a clear dpcap error, never a raw traceback (issue 27, items 4,
11-13 and 19): each test failed on the code before the fix, with the raw exception named.

* an integer beyond the doubles in a matrix (``OverflowError``), ``unit=[]`` and array units
  (``TypeError: unhashable``), deeply nested JSON (``RecursionError``), ``planar_geometric``
  at a tiny ε (``ZeroDivisionError``/``OverflowError``), a staircase sensitivity of ``2**63``
  (``OverflowError``);
* a list option that expands to 10^11 values is refused while parsing;
* ``capacities("abc")`` names the string, not its first letter; a ``.npz`` saved as ``.npy`` is
  named as an archive;
* a JSON ``"name"`` with control characters cannot forge report lines;
* a pandas CSV with its index column is read (the label column is dropped).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpcap
from dpcap import cli
from dpcap.errors import ChannelError, ParameterError, ProblemTooLargeError
from dpcap.mechanisms import planar_geometric, staircase

BSC = [[0.9, 0.1], [0.1, 0.9]]


def test_an_integer_beyond_the_doubles_is_named() -> None:
    with pytest.raises(ChannelError, match=r"W holds an integer too large for a double"):
        dpcap.capacity([[10**400, 1], [0.5, 0.5]])


@pytest.mark.parametrize("unit", [[], np.array(["bits"]), {"bits": 1}])
def test_a_unit_that_is_not_a_string_is_named(unit: object) -> None:
    with pytest.raises(ParameterError, match=r"unit must be one of \['bits', 'nats'\]"):
        dpcap.capacity(BSC, unit=unit)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"unit must be one of"):
        dpcap.renyi_capacity(BSC, 2.0, unit=unit)  # type: ignore[arg-type]


@pytest.mark.parametrize("eps", [1e-170, 1e-160])
def test_planar_geometric_at_a_tiny_level_is_refused_up_front(eps: float) -> None:
    with pytest.raises(ProblemTooLargeError, match=r"out to radius above .*limit of 8192"):
        planar_geometric((2, 2), eps)


def test_a_huge_staircase_sensitivity_is_refused() -> None:
    with pytest.raises(ParameterError, match=r"sensitivity must be an integer in \[1, 2\*\*52\]"):
        staircase(4, 1.0, sensitivity=2**63)


def test_capacities_of_a_string_names_the_string() -> None:
    with pytest.raises(ChannelError, match=r"Ws must be a list of channels .* the string 'abc'"):
        dpcap.capacities("abc")


def test_deeply_nested_json_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert cli.main(["capacity", str(path)]) == 2
    assert "JSON nested too deeply to be a matrix" in capsys.readouterr().err


def test_an_npz_saved_as_npy_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "W.npy"
    with path.open("wb") as handle:
        np.savez(handle, W=np.array(BSC))
    assert cli.main(["capacity", str(path)]) == 2
    err = capsys.readouterr().err
    assert "a NumPy .npz archive (arrays W), not a .npy array" in err


def test_a_range_of_1e11_values_is_refused_while_parsing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "W.csv"
    np.savetxt(path, BSC, delimiter=",")
    assert cli.main(["delta", str(path), "--eps", "1:2:99999999999"]) == 2
    assert "at most 100000 values" in capsys.readouterr().err
    assert cli.main(["rd", str(path), "--n-points", "99999999"]) == 2
    assert "--n-points: expected an integer in [2, 10000]" in capsys.readouterr().err


def test_a_name_with_control_characters_cannot_forge_report_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "W.json"
    forged = "RR\n  pure DP          eps = 0 nats\x1b[2K"
    path.write_text(json.dumps({"matrix": BSC, "name": forged}))
    assert cli.main(["audit", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert out.splitlines()[0] == r"dpcap audit: RR\n  pure DP          eps = 0 nats\x1b[2K"
    assert not any(line.startswith("  pure DP          eps = 0 nats") for line in out.splitlines())


def test_a_pandas_csv_with_its_index_column_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = pd.DataFrame(BSC, index=["x0", "x1"], columns=["y0", "y1"])
    labelled = tmp_path / "labelled.csv"
    frame.to_csv(labelled)
    plain = tmp_path / "plain.csv"
    pd.DataFrame(BSC).to_csv(plain)  # the default RangeIndex: a header "",0,1
    for path in (labelled, plain):
        assert cli.main(["capacity", str(path), "--json"]) == 0, capsys.readouterr().err
        result = json.loads(capsys.readouterr().out)["result"]
        assert result["lower"] <= np.log(2) + 0.9 * np.log(0.9) + 0.1 * np.log(0.1) + 1e-12
        assert len(result["prior"]) == 2


def test_a_gain_capacity_programme_is_counted_before_it_is_built() -> None:
    """100 × 100 with a 100 × 100 gain: 10^4 binaries (at the binary limit) but about 10^8
    nonzeros; refused at once (it built the model for 74 s and 12.5 GB before)."""
    rng = np.random.default_rng(5)
    W = rng.dirichlet(np.ones(100), size=100)
    G = rng.uniform(0.1, 1.0, size=(100, 100))
    with pytest.raises(ProblemTooLargeError, match=r"constraint nonzeros .* limit of 4000000"):
        dpcap.g_capacity(W, G, time_limit=1.0)


def test_calibrate_at_a_subnormal_tolerance_does_not_overflow() -> None:
    """Binary randomized response: maximal leakage ``log(2e^ε/(1+e^ε)) = 0.3`` at
    ``ε = log(e^0.3/(2 − e^0.3))``; ``tol=1e-320`` raised OverflowError in the ITP step count."""
    truth = math.log(math.exp(0.3) / (2 - math.exp(0.3)))
    with pytest.warns(dpcap.ConvergenceWarning):
        r = dpcap.calibrate(
            "randomized_response", "eps", "max_leakage", 0.3, bounds=(0.1, 2), fixed={"k": 2},
            tol=1e-320,
        )  # fmt: skip
    assert r.value == pytest.approx(truth, rel=1e-12)


# --- item 19: real files are messy ------------------------------------------------------------

ROUNDED = [[0.3333333, 0.6666667], [0.1428571, 0.8571428]]  # 7 decimals: row 1 sums to 1 − 1e-7


def test_rounded_rows_are_refused_with_a_hint_and_renormalised_on_request() -> None:
    with pytest.raises(ChannelError, match=r"row 1 sums to 0.99999989.*normalize="):
        dpcap.capacity(ROUNDED)
    ch = dpcap.Channel(ROUNDED, normalize=1e-6)
    assert ch.renormalized == pytest.approx(1e-7, rel=1e-6)
    assert np.allclose(ch.matrix.sum(axis=1), 1.0, atol=1e-15)
    exact = np.array(ROUNDED) / np.array(ROUNDED).sum(axis=1, keepdims=True)
    res = dpcap.capacity(ch)
    assert res.lower <= dpcap.capacity(exact).upper
    assert dpcap.capacity(exact).lower <= res.upper
    M = dpcap.Mechanism(ROUNDED, (2,), normalize=1e-6)
    assert M.renormalized == ch.renormalized
    with pytest.raises(ChannelError, match=r"within 1e-08"):
        dpcap.Channel(ROUNDED, normalize=1e-8)
    for bad in (1e-2, -1.0, True, "1e-6"):
        with pytest.raises(ParameterError, match=r"normalize must be a tolerance in \[1e-09"):
            dpcap.Channel(ROUNDED, normalize=bad)  # type: ignore[arg-type]


def test_the_command_line_renormalises_on_request_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rounded.csv"
    np.savetxt(path, ROUNDED, delimiter=",", fmt="%.7f")
    assert cli.main(["capacity", str(path)]) == 2
    assert "normalize" in capsys.readouterr().err
    for command in ("capacity", "audit", "delta", "renyi", "dp_epsilon"):
        assert cli.main([command, str(path), "--normalize", "1e-6"]) == 0, command
        err = capsys.readouterr().err
        assert "dpcap: note:" in err
        assert "rows renormalised (largest |row sum - 1| = 1e-07" in err


def test_a_sweep_with_failed_rows_exits_1_and_stores_no_internal_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "families_19.py"
    module.write_text(
        "from dpcap.mechanisms import randomized_response\n"
        "def family(k):\n"
        "    if k == 3:\n"
        "        raise ValueError('no such mechanism')\n"
        "    return randomized_response(k, 1.0)\n"
    )
    spec = tmp_path / "spec.toml"
    spec.write_text('family = "families_19:family"\nqueries = ["dp_epsilon"]\n[grid]\nk = [2, 3]\n')
    store = tmp_path / "store"
    argv = ["sweep", str(spec), "--store", str(store), "--allow-module", str(module)]
    assert cli.main([*argv, "--no-progress", "--executor", "serial"]) == 1
    capsys.readouterr()
    stored = pd.read_parquet(store)
    assert not [c for c in stored.columns if c.startswith("_")]
    assert sorted(stored["status"]) == ["converged", "failed"]


def test_a_missing_module_is_not_blamed_on_dask(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The family's module imports a module that is not installed: the error names it, and
    Dask only when Dask is what is missing (it blamed Dask even with --executor serial)."""
    module = tmp_path / "needs_missing.py"
    module.write_text("import no_such_module_dpcap\n\ndef family(k):\n    return k\n")
    spec = tmp_path / "spec.toml"
    spec.write_text('family = "needs_missing:family"\nqueries = ["capacity"]\n[grid]\nk = [2]\n')
    argv = ["sweep", str(spec), "--allow-module", str(module), "--executor", "serial"]
    assert cli.main([*argv, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "no_such_module_dpcap" in err
    assert "dask" not in err.lower()
