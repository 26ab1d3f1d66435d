"""The exercise families (dpcap.exercises): the theorems and definitions each reference answer
is checked against, independently of the code that produced it.

* every family's reference lies in its certified bracket and matches an independent closed
  form or brute force: k-RR's δ(ε') = (e^ε − e^ε')/(e^ε + k − 1); ε of geometric noise as the
  largest adjacent-row log-ratio (loops); min-entropy, maximal and g-leakage by their sums
  (loops); BSC ln 2 − h(p), BEC (1 − p) ln 2, Z log2(1 + (1−p) p^{p/(1−p)}) bits; capacity,
  Sibson capacity and MI-DP slices by direct maximisation over priors (scipy); ε·tanh(ε/2) and
  1 − 2h⁻¹(ln 2 − ε) (mpmath bisection); R(D) = h(q) − h(D) and log k − h(D) − D log(k−1);
  ε*(D) = ln((k−1)(1−D)/D); the k-fold composition's binomial sum; the funnel by an LP over a
  fine grid of posteriors (scipy linprog);
* the worked solution's code, run on the data, passes the check;
* the check accepts the bracket widened by the stated tolerance and no more, names every
  mistake of the variant (bits for nats, transposed matrix, e^ε, neighbour relation, a prior
  that does not sum to 1) and never shows the key;
* variants are a function of (course, assignment, student): the same in another process
  under another PYTHONHASHSEED, with the digest of the documented SHA-256 key.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import mpmath
import numpy as np
import pytest
from scipy.optimize import linprog, minimize, minimize_scalar

import dpcap
from dpcap.errors import ParameterError
from dpcap.exercises import FAMILIES, LEVELS, Exercise, make, names, variant_digest

ROOT = Path(__file__).resolve().parent.parent
LN2 = math.log(2)
STUDENTS = [f"s{i:03d}" for i in range(6)]
CASES = [(f, lv) for f, fam in FAMILIES.items() for lv in fam.levels]


def h(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -p * math.log(p) - (1 - p) * math.log(1 - p)


def scale(unit: str) -> float:
    return 1 / LN2 if unit == "bits" else 1.0


def mi(p: np.ndarray, W: np.ndarray) -> float:
    """I(p, W) in nats, by its definition (loops)."""
    q = p @ W
    total = 0.0
    for x, y in itertools.product(range(W.shape[0]), range(W.shape[1])):
        if p[x] > 0 and W[x, y] > 0:
            total += p[x] * W[x, y] * math.log(W[x, y] / q[y])
    return total


def sibson(p: np.ndarray, W: np.ndarray, alpha: float) -> float:
    inner = (p[:, None] * W**alpha).sum(axis=0) ** (1 / alpha)
    return alpha / (alpha - 1) * math.log(inner.sum())


def maximise(f: Any, n: int) -> float:
    """max of f over the simplex of dimension n (n = 2: bounded scalar search; else SLSQP from
    a grid of starts)."""
    if n == 2:
        res = minimize_scalar(
            lambda t: -f(np.array([1 - t, t])), bounds=(0, 1), method="bounded",
            options={"xatol": 1e-12},
        )  # fmt: skip
        return float(-res.fun)
    best = -math.inf
    cons = ({"type": "eq", "fun": lambda p: p.sum() - 1},)
    for start in itertools.product(range(1, 5), repeat=n):
        p0 = np.array(start, float) / sum(start)
        res = minimize(lambda p: -f(np.clip(p, 0, 1)), p0, bounds=[(0, 1)] * n,
                       constraints=cons, method="SLSQP", options={"ftol": 1e-14})  # fmt: skip
        best = max(best, float(-res.fun))
    return best


# --- independent values, one per family ------------------------------------------------------


def truth(ex: Exercise) -> Any:
    d, unit = ex.data, ex.reference.unit
    s = scale(unit)
    if ex.family == "forced_response":
        k = len(d["f"])
        return np.array([[d["a"] * (x == y) + (1 - d["a"]) * d["f"][y] for y in range(k)]
                         for x in range(k)])  # fmt: skip
    if ex.family == "rr_delta":
        e, e2, k = math.exp(d["eps"]), math.exp(d["eps_prime"]), d["k"]
        return (e - e2) / (e + k - 1)
    if ex.family == "geometric_epsilon":
        W = d["W"]
        return max(abs(math.log(W[x, y] / W[x + 1, y]))
                   for x in range(len(W) - 1) for y in range(W.shape[1]))  # fmt: skip
    if ex.family == "min_entropy":
        p, W = d["prior"], d["W"]
        post = sum(max(p[x] * W[x, y] for x in range(len(p))) for y in range(W.shape[1]))
        return math.log(post / max(p)) * s
    if ex.family == "maximal_leakage":
        W = d["W"]
        return math.log(sum(max(W[:, y]) for y in range(W.shape[1]))) * s
    if ex.family == "g_leakage":
        p, W, G = d["prior"], d["W"], d["G"]
        prior_v = max(sum(G[w, x] * p[x] for x in range(len(p))) for w in range(len(G)))
        post_v = sum(max(sum(G[w, x] * p[x] * W[x, y] for x in range(len(p)))
                         for w in range(len(G))) for y in range(W.shape[1]))  # fmt: skip
        return post_v / prior_v
    if ex.family == "binary_capacity":
        W, p = d["W"], d["p"]
        if W.shape[1] == 3:
            return (1 - p) * LN2 * s
        if W[0, 1] == 0:  # Z channel
            return math.log2(1 + (1 - p) * p ** (p / (1 - p))) * LN2 * s
        return (LN2 - h(p)) * s
    if ex.family == "capacity_prior":
        W = d["W"]
        return maximise(lambda p: mi(p, W), len(W)) * s
    if ex.family == "renyi":
        W, a = d["W"], d["alpha"]
        return maximise(lambda p: sibson(p, W, a), len(W)) * s
    if ex.family == "midp_count":
        n, eps = d["n"], d["eps"]
        a = math.exp(-eps)
        noise = np.array([[((a**x) / (1 + a)) if y == 0 else ((a ** (n - x)) / (1 + a)) if y == n
                           else (1 - a) / (1 + a) * a ** abs(x - y) for y in range(n + 1)]
                          for x in range(n + 1)])  # fmt: skip
        slices = [noise[k : k + 2] for k in range(n)]
        return max(maximise(lambda p, V=V: mi(p, V), 2) for V in slices) * s
    if ex.family == "sandwich":
        eps = d["eps"]
        if ex.level == "by_hand":
            e = math.exp(eps)
            return eps * (e - 1) * (1 - 1 / e) / ((e - 1) + (1 - 1 / e)) * s
        mpmath.mp.dps = 40
        target = mpmath.log(2) - eps
        lo, hi = mpmath.mpf(0), mpmath.mpf("0.5")
        for _ in range(200):
            mid = (lo + hi) / 2
            value = -mid * mpmath.log(mid) - (1 - mid) * mpmath.log(1 - mid)
            lo, hi = (mid, hi) if value < target else (lo, mid)
        return float(1 - 2 * lo)
    if ex.family == "rate_distortion":
        p, D = d["prior"], d["D"]
        k = len(p)
        if k == 2:
            return (h(p[1]) - h(D)) * s
        return (math.log(k) - h(D) - D * math.log(k - 1)) * s
    if ex.family == "privacy_distortion":
        k, D = d["k"], d["D"]
        return math.log((k - 1) * (1 - D) / D)
    if ex.family == "composition":
        k, e0, eps = d["k"], d["eps0"], d["eps"]
        p = math.exp(e0) / (1 + math.exp(e0))
        terms = [
            math.comb(k, j)
            * (p**j * (1 - p) ** (k - j) - math.exp(eps) * p ** (k - j) * (1 - p) ** j)
            for j in range(k + 1)
        ]
        return sum(max(0.0, t) for t in terms)
    if ex.family == "privacy_funnel":
        return funnel_lp(d["joint"], d["R"] / s) * s
    raise AssertionError(ex.family)


def funnel_lp(joint: np.ndarray, R: float, steps: int = 120) -> float:
    """min I(S;Y) over mechanisms whose posteriors P_{X|Y} lie on a grid (step 1/steps) of the
    simplex with I(X;Y) ≥ R: an achievable value, above PF(R) by at most the grid's error."""
    px = joint.sum(axis=0)
    T = joint / px  # P(S | X = x), columns
    H = lambda v: -sum(t * math.log(t) for t in v if t > 0)  # noqa: E731
    grid = [np.array([i, j, steps - i - j]) / steps
            for i in range(steps + 1) for j in range(steps + 1 - i)]  # fmt: skip
    hx = np.array([H(q) for q in grid])
    hs = np.array([H(T @ q) for q in grid])
    A_eq = np.array(grid).T
    res = linprog(-hs, A_ub=[hx], b_ub=[H(px) - R], A_eq=A_eq, b_eq=px, bounds=(0, None),
                  method="highs")  # fmt: skip
    assert res.status == 0
    return float(H(joint.sum(axis=1)) + res.fun)


# --- the tests ---------------------------------------------------------------------------------


def test_there_are_at_least_twelve_families_with_both_levels() -> None:
    assert len(names()) >= 12
    assert sum(FAMILIES[f].levels == LEVELS for f in names()) >= 12
    kinds = {FAMILIES[f].answer_kind for f in names()}
    assert kinds == {"number", "matrix", "prior"}


@pytest.mark.parametrize(("name", "level"), CASES)
def test_reference_matches_an_independent_closed_form(name: str, level: str) -> None:
    for student in STUDENTS:
        ex = make(name, level=level, course="test", assignment="hw", student=student)
        ref = ex.reference
        expected = truth(ex)
        if ex.answer_kind == "matrix":
            np.testing.assert_allclose(ref.value, expected, rtol=0, atol=1e-15)
            continue
        assert ref.status == "converged"
        assert ref.lower <= ref.upper
        if ex.answer_kind == "prior":
            assert abs(sum(ref.value) - 1) < 1e-12
            # the key's prior attains the bracket, and the optimum found by scipy lies in it
            assert mi(np.asarray(ref.value), ex.data["W"]) * scale(ref.unit) >= ref.lower - 1e-9
            assert ref.lower - 1e-8 <= expected <= ref.upper + 1e-9
            continue
        slack = 1e-3 * abs(expected) + 1e-5 if name == "privacy_funnel" else 1e-8
        assert ref.lower - slack <= expected <= ref.upper + slack, (student, expected, ref)
        if name == "privacy_funnel":  # the grid LP is achievable: never below PF
            assert ref.lower <= expected + 1e-9


@pytest.mark.parametrize(("name", "level"), CASES)
def test_the_worked_solution_passes_its_check(name: str, level: str) -> None:
    for student in STUDENTS[:3]:
        ex = make(name, level=level, course="test", assignment="hw", student=student)
        space: dict[str, Any] = {"np": np, "math": math, "dpcap": dpcap, **ex.data}
        exec(ex.code, space)
        feedback = ex.check(space["answer"])
        assert feedback.correct, feedback.message
        assert feedback.message.startswith("Correct")


@pytest.mark.parametrize(("name", "level"), CASES)
def test_tolerance_is_the_bracket_widened_as_stated(name: str, level: str) -> None:
    ex = make(name, level=level, course="test", assignment="hw", student="tol")
    if ex.answer_kind != "number":
        return
    ref, tol = ex.reference, ex.tolerance
    assert tol == max(ex.rtol * max(abs(ref.lower), abs(ref.upper)), ex.atol)
    assert ex.check(ref.lower - 0.99 * tol).correct
    assert ex.check(ref.upper + 0.99 * tol).correct
    assert not ex.check(ref.upper + 1.01 * tol).correct
    assert not ex.check(ref.lower - 1.01 * tol).correct


@pytest.mark.parametrize(("name", "level"), CASES)
def test_every_mistake_is_recognised_and_the_key_never_shown(name: str, level: str) -> None:
    for student in STUDENTS:
        ex = make(name, level=level, course="test", assignment="hw", student=student)
        answers: list[Any] = [..., None, "abc", math.nan, -123.0]
        for m in ex.mistakes:
            feedback = ex.check(m.value)
            assert not feedback.correct
            assert feedback.mistake == m.name, (m.name, feedback)
            answers.append(m.value)
        if ex.answer_kind == "number":
            keys = {f"{ex.reference.value:.{d}g}" for d in (4, 6, 12)}
            keys = {k for k in keys if len(k.strip("-0.")) >= 3}
            for answer in answers:
                message = ex.check(answer).message
                assert not any(k in message for k in keys), (answer, message)


@pytest.mark.parametrize("unit", ["bits", "nats"])
def test_bits_for_nats_is_named(unit: str) -> None:
    for student in STUDENTS * 3:
        ex = make("binary_capacity", level="by_hand", course="u", assignment="a", student=student)
        if ex.reference.unit != unit:
            continue
        other = ex.reference.value * (LN2 if unit == "bits" else 1 / LN2)
        feedback = ex.check(other)
        assert "bits" in feedback.message
        assert "nats" in feedback.message
        assert feedback.mistake in ("bits_for_nats", "nats_for_bits")
        return
    pytest.fail(f"no variant in {unit}")


def test_a_transposed_matrix_gets_the_rows_must_be_inputs_hint() -> None:
    for level in LEVELS:
        for student in STUDENTS:
            ex = make("forced_response", level=level, course="c", assignment="a", student=student)
            feedback = ex.check(np.asarray(ex.reference.value).T)
            assert feedback.mistake == "transposed"
            assert feedback.message.startswith("Rows must be inputs")
            assert ex.check(np.asarray(ex.reference.value)).correct


def test_e_to_the_eps_and_the_neighbour_relation_are_named() -> None:
    ex = make("geometric_epsilon", level="by_hand", course="c", assignment="a", student="x")
    eps = float(np.max(np.abs(np.diff(np.log(ex.data["W"]), axis=0))))
    assert ex.check(eps).correct
    assert ex.check(math.exp(eps)).mistake == "exp_eps"
    W = ex.data["W"]
    n, m = W.shape
    all_pairs = max(
        abs(math.log(W[a, y] / W[b, y])) for a in range(n) for b in range(n) for y in range(m)
    )
    feedback = ex.check(all_pairs)
    assert feedback.mistake == "neighbors"
    assert "adjacent" in feedback.message
    pd = make("privacy_distortion", level="with_dpcap", course="c", assignment="a", student="x")
    assert any(m.name == "neighbors" for m in pd.mistakes)


def test_a_prior_that_does_not_sum_to_one_is_named() -> None:
    ex = make("capacity_prior", level="by_hand", course="c", assignment="a", student="x")
    p = np.asarray(ex.reference.value)
    assert ex.check(p).correct
    assert ex.check(np.round(p, 3) / np.round(p, 3).sum()).correct
    feedback = ex.check(p * 0.9)
    assert feedback.mistake == "prior_sum"
    assert "sum to 1" in feedback.message
    assert ex.check(np.array([0.5, 0.5])).mistake == "uniform_prior"
    assert ex.check(np.array([1.2, -0.2])).mistake == "negative"
    wide = make("capacity_prior", level="with_dpcap", course="c", assignment="a", student="x")
    assert wide.check(np.ones(wide.data["W"].shape[1] + 1) / 4).mistake == "shape"


def test_variants_differ_between_students_and_assignments() -> None:
    codes = {make("rr_delta", level="with_dpcap", course="c", assignment="a",
                  student=s).data_code() for s in STUDENTS}  # fmt: skip
    assert len(codes) >= 4
    a = make("renyi", level="with_dpcap", course="c", assignment="hw1", student="s")
    b = make("renyi", level="with_dpcap", course="c", assignment="hw2", student="s")
    assert a.variant != b.variant


def test_the_variant_digest_is_sha256_of_the_documented_key() -> None:
    key = json.dumps(["c", "hw", "ada", "renyi", "by_hand"], separators=(",", ":"))
    assert (
        variant_digest("c", "hw", "ada", "renyi", "by_hand")
        == hashlib.sha256(key.encode()).hexdigest()
    )
    ex = make("renyi", level="by_hand", course="c", assignment="hw", student="ada")
    assert ex.variant == variant_digest("c", "hw", "ada", "renyi", "by_hand")


def test_variants_are_identical_across_processes_and_hash_seeds() -> None:
    code = (
        "from dpcap.exercises import make, names\n"
        "for n in names():\n"
        "    ex = make(n, level='with_dpcap', course='c', assignment='a', student='émile')\n"
        "    print(n, ex.variant, ex.data_code(), repr(ex.reference.upper))\n"
    )
    outputs = set()
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, check=True)  # fmt: skip
        outputs.add(done.stdout)
    assert len(outputs) == 1
    here = "".join(
        f"{n} {ex.variant} {ex.data_code()} {ex.reference.upper!r}\n"
        for n in names()
        for ex in [make(n, level="with_dpcap", course="c", assignment="a", student="émile")]
    )
    assert outputs == {here}


def test_repr_and_student_dict_hold_no_key() -> None:
    ex = make("rr_delta", level="by_hand", course="c", assignment="a", student="s")
    assert f"{ex.reference.value:.4g}" not in repr(ex)
    public = ex.to_dict()
    assert "reference" not in public
    assert "solution" not in public
    assert ex.to_dict(key=True)["reference"]["unit"] == ""
    json.dumps(ex.to_dict(key=True))


def test_bad_family_level_and_key_are_named() -> None:
    with pytest.raises(ParameterError, match=r"family must be one of .* got 'nope'"):
        make("nope")
    with pytest.raises(ParameterError, match=r"level must be one of with_dpcap .* got 'by_hand'"):
        make("privacy_funnel", level="by_hand")
    with pytest.raises(ParameterError, match=r"student must be a string .* got 1\.5"):
        make("rr_delta", student=1.5)


# --- from the second reading -------------------------------------------------------------------


def test_odd_answers_get_feedback_not_a_traceback() -> None:
    number = make("rr_delta", course="c", assignment="a", student="s")
    assert not number.check([[1, 2], [3]]).correct  # ragged
    assert not number.check(10**400).correct  # beyond the doubles
    matrix = make("forced_response", course="c", assignment="a", student="s")
    empty = matrix.check(np.zeros((2, 0)))
    assert not empty.correct
    assert empty.mistake != "transposed"


def test_the_command_line_names_a_bad_answer(capsys: pytest.CaptureFixture[str]) -> None:
    from dpcap.cli import main

    assert main(["exercises", "check", "rr_delta", "[[1,2],[3]]"]) == 2
    assert "answer" in capsys.readouterr().err
    assert main(["exercises", "check", "rr_delta", "1" + "0" * 400]) in (1, 2)


def test_rosters_and_student_lists_are_checked(tmp_path: Path) -> None:
    from dpcap.exercises.notebooks import build, read_roster

    for text, match in [
        ("id\n", "no students"),
        ("email,name\nx@y.z,Al\n", "names no column"),
        ("id\nAlice\nalice\n", "twice"),
    ]:
        path = tmp_path / "roster.csv"
        path.write_text(text)
        with pytest.raises(ParameterError, match=match):
            read_roster(path)
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\xff\xfe\x00x")
    with pytest.raises(ParameterError, match="UTF-8"):
        read_roster(binary)
    for students in (["../../escaped"], [7], ["ok", "OK"]):
        with pytest.raises(ParameterError, match="student id"):
            build(students, out=tmp_path / "o", course="c", assignment="a", families=["rr_delta"])
    assert not (tmp_path / "escaped").exists()


def test_the_teaching_text_states_true_bounds() -> None:
    sandwich = make("sandwich", level="by_hand", course="c", assignment="a", student="s")
    assert "tightest" not in sandwich.prompt
    for student in ("s0", "s1", "s2", "s3"):
        renyi = make("renyi", level="with_dpcap", course="C", assignment="A", student=student)
        assert "between the Shannon capacity" not in renyi.prompt
