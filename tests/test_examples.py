"""The gallery in examples/: every script runs to completion (its own asserts check the papers'
numbers) and saves a figure, and every script has the sphinx-gallery form the docs build needs.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))

#: The published results the gallery reproduces (issue "A gallery of examples"), by script.
REPRODUCED = {
    "cuff_yu_sandwich": "Cuff & Yu, Theorem 1 and Lemmas 1-3",
    "cuff_yu_examples": "Cuff & Yu, Examples 2-5 and §6.1-6.2",
    "cuff_yu_composition": "Cuff & Yu, Corollaries 2-5",
    "mir_risk_distortion": "Mir, Theorems 3-4",
    "wang_ying_zhang_privacy_distortion": "Wang-Ying-Zhang eps*(D) (Ünsal & Önen §5)",
    "min_entropy_leakage": "Ünsal & Önen §4.2-4.3",
    "hsu_funnel_bottleneck": "Hsu et al. §III-B",
    "hsu_renyi_dp_conversion": "Hsu et al. §IV, RDP and E_gamma",
    "renyi_capacity_bsc": "the Rényi-capacity article",
    "optimal_mechanism_geometric": "Ghosh-Roughgarden-Sundararajan",
    "sweep_midp_family": "a sweep",
    "audit_your_own_mechanism": "the command line and the API",
    "geo_indistinguishability": "Andrés et al. 2013; Bordenabe et al. 2014",
    "qif_gain_functions": "Alvim et al. 2012/2020, g-leakage and capacities",
    "plot_local_protocols": "Wang-Blocki-Li-Jha 2017 estimator variances; Ye-Barg; Acharya et al.",
    "composition_certified": "Dong-Roth-Su 2022; Cuff & Yu, Corollary 2 and Lemma 2",
    "plot_shared_sample_amplification": "Balle-Barthe-Gaboardi 2018, log(1 + q(e^eps - 1))",
}


def test_every_published_result_has_its_script() -> None:
    names = {p.stem for p in EXAMPLES}
    missing = sorted(set(REPRODUCED) - names)
    assert not missing, f"examples missing from the gallery: {missing}"


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_has_gallery_form(script: Path) -> None:
    """A title underlined with '=' opens the docstring; '# %%' lines carry no text (it would
    not be rendered); no backend is chosen (sphinx-gallery and the tests set Agg)."""
    source = script.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source), clean=False)
    assert doc is not None, "the script starts with a docstring"
    lines = doc.strip("\n").split("\n")
    assert len(lines) >= 3, "a title, its underline and a body"
    title, underline = lines[0], lines[1]
    assert title.strip(), "the first line is the title"
    assert re.fullmatch("=+", underline), f"title underlined with '=', got {underline!r}"
    assert len(underline) == len(title), f"underline of {len(title)} '=' under {title!r}"
    assert lines[2] == "", "a blank line after the title"
    for number, line in enumerate(source.splitlines(), start=1):
        assert not re.match(r"#\s*%%\s*\S", line), f"line {number}: text after '# %%' is lost"
    assert "matplotlib.use(" not in source, "the backend is the caller's choice"
    assert "plt.close(" not in source, "a closed figure is not captured by sphinx-gallery"


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(script: Path, tmp_path: Path) -> None:
    env = {**os.environ, "DPCAP_EXAMPLES_OUT": str(tmp_path), "MPLBACKEND": "Agg"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert list(tmp_path.glob("*.png")), "each example saves a figure"
