"""Shannon capacity: dpcap's Blahut–Arimoto engine against cvxpy's conic solvers.

Cases: BSC(0.1); Dirichlet(1) channels 4×4 to 256×256 (seeded); k-ary randomised response
(k = 64, ε = 1); BSC(0.1) plus a near-duplicate row ``[0.9−η, 0.1+η]`` (η = 1e-3, 1e-5: the
optimal prior is sparse, plain BA's hard case); the truncated geometric mechanism on {0..99} at
ε = 0.1 (a DP channel with a sparse optimal prior). Then a batch of 10,000 random 4×8 channels,
and a ragged family: the truncated geometric mechanism on {0..n}, n = 2..200, at ten values of ε
(1,990 channels of 199 sizes), a loop of ``dpcap.capacity`` against one ``dpcap.capacities`` call
on the list (whose elements must equal the loop's, bit for bit). Last, when PyTorch is installed,
``dpcap.capacities`` of the same stacks as NumPy arrays and as CPU tensors (the engine running in
PyTorch, the certificate on the host in NumPy).

dpcap runs ``dpcap.capacity(W, tol=1e-9)`` (certified gap ``upper − lower ≤ 1e-9`` nats). The peers
are cvxpy with Clarabel, ECOS and SCS on the exponential-cone formulation
(:func:`dpcap.solvers.conic.capacity_conic`, tolerance 1e-9, clamped to each solver's floor),
timed whole: problem construction, canonicalisation and solve. A peer's certified gap is computed
here from its prior, the same way for everyone: ``max_x D(W_x ‖ pW) − I(p)``. Times are the best of
a few repeats after one warm-up call; everything runs in one process on the same inputs.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from _timing import best_of
from scipy.special import rel_entr

import dpcap
from dpcap.solvers.conic import SOLVERS, capacity_conic

TOL = 1e-9
SEED = 20261124


def certified_gap(W: np.ndarray, prior: np.ndarray) -> float:
    """``max_x D(W_x ‖ pW) − I(p)``: the width of the bracket any prior certifies (nats)."""
    W = np.asarray(W, dtype=np.float64)
    D = rel_entr(W, prior @ W).sum(axis=1)
    return float(D.max() - prior @ D)


def cases() -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(SEED)
    bsc = np.array([[0.9, 0.1], [0.1, 0.9]])
    out = [("BSC(0.1)", bsc)]
    for n in (4, 16, 64, 256):
        out.append((f"Dirichlet {n}x{n}", rng.dirichlet(np.ones(n), size=n)))
    out.append(("k-RR k=64 eps=1", np.asarray(dpcap.mechanisms.randomized_response(64, 1.0))))
    for eta in (1e-3, 1e-5):
        out.append((f"BSC+dup eta={eta:g}", np.vstack([bsc, [0.9 - eta, 0.1 + eta]])))
    geometric = dpcap.mechanisms.truncated_geometric(99, 0.1)
    out.append(("trunc. geom. 100 eps=0.1", np.asarray(geometric)))
    return out


def run_dpcap(W: np.ndarray, repeat: int) -> tuple[float, float, str] | None:
    """``(seconds, certified gap, status)`` of ``dpcap.capacity``, or None if it does not exist."""
    capacity = getattr(dpcap, "capacity", None)
    if capacity is None:
        return None
    seconds, result = best_of(lambda: capacity(W, tol=TOL), repeat)
    status = str(getattr(result.status, "value", result.status))
    return seconds, float(result.upper - result.lower), status


def run_peer(W: np.ndarray, solver: str, repeat: int) -> tuple[float, float, str]:
    """``(seconds, certified gap from its prior, status)`` of cvxpy with ``solver``."""
    seconds, sol = best_of(lambda: capacity_conic(W, solver=solver, tol=TOL), repeat)
    status = sol.status.value  # an EngineStatus (dpcap.solvers.status)
    gap = certified_gap(W, sol.prior) if status in ("optimal", "inaccurate") else np.nan
    return seconds, gap, status


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.2f}"


def single_channels(repeat: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    header = f"{'case':26s} {'dpcap ms':>8s} {'gap':>7s}"
    for solver in SOLVERS:
        header += f" | {solver:>8s} ms {'gap':>7s}"
    header += " | peer/dpcap"
    print(f"Shannon capacity, tol = {TOL:g} nats; times: best of {repeat}, construction included")
    print(header)
    print("-" * len(header))
    for name, W in cases():
        row: dict[str, Any] = {"case": name, "shape": W.shape}
        ours = run_dpcap(W, repeat)
        line = f"{name:26s} "
        if ours is None:
            line += f"{'n/a':>8s} {'n/a':>7s}"
        else:
            row.update(dpcap_s=ours[0], dpcap_gap=ours[1], dpcap_status=ours[2])
            line += f"{_ms(ours[0])} {ours[1]:7.0e}"
        fastest = np.inf
        for solver in SOLVERS:
            seconds, gap, status = run_peer(W, solver, repeat)
            row[solver] = {"s": seconds, "gap": gap, "status": status}
            flag = "" if status == "optimal" else "*"
            line += f" | {_ms(seconds)}{flag:1s}  {gap:7.0e}"
            if status in ("optimal", "inaccurate"):
                fastest = min(fastest, seconds)
        if ours is not None:
            row["ratio"] = fastest / ours[0]
            line += f" | {row['ratio']:8.1f}x"
        print(line)
        rows.append(row)
    print("  (* = solver status not 'optimal'; gap = max_x D(W_x||pW) - I(p) from the prior)")
    return rows


def batch(n_channels: int = 10_000, n_peer: int = 200, repeat: int = 3) -> dict[str, Any]:
    rng = np.random.default_rng(SEED + 1)
    Ws = rng.dirichlet(np.ones(8), size=(n_channels, 4))
    out: dict[str, Any] = {"n": n_channels}
    print(f"\nBatch: {n_channels:,} random 4x8 channels (Dirichlet(1) rows), tol = {TOL:g}")
    capacities = getattr(dpcap, "capacities", None)
    if capacities is None:
        print("  dpcap.capacities not available yet")
    else:
        seconds, result = best_of(lambda: capacities(Ws, tol=TOL), repeat)
        gaps = np.asarray(result.upper) - np.asarray(result.lower)
        statuses, counts = np.unique(np.asarray(result.status).astype(str), return_counts=True)
        tally = dict(zip(statuses.tolist(), counts.tolist(), strict=True))
        out.update(dpcap_s=seconds, dpcap_rate=n_channels / seconds, dpcap_max_gap=gaps.max())
        print(
            f"  dpcap.capacities   {seconds:8.3f} s  {n_channels / seconds:12,.0f} channels/s"
            f"  max gap {gaps.max():.1e}  status {tally}"
        )
    # The fastest peer on a small probe, then a loop over a subsample, extrapolated.
    probe = Ws[:20]
    speed = {
        s: best_of(lambda s=s: [capacity_conic(W, solver=s, tol=TOL) for W in probe], 1)[0]
        for s in SOLVERS
    }
    solver = min(speed, key=speed.__getitem__)
    sample = Ws[:n_peer]
    start = time.perf_counter()
    sols = [capacity_conic(W, solver=solver, tol=TOL) for W in sample]
    per = (time.perf_counter() - start) / n_peer
    peer_gaps = np.array([certified_gap(W, s.prior) for W, s in zip(sample, sols, strict=True)])
    not_optimal = sum(s.status.value != "optimal" for s in sols)
    out.update(peer=solver, peer_s=per * n_channels, peer_rate=1 / per)
    out["peer_max_gap"] = peer_gaps.max()
    print(
        f"  cvxpy+{solver:<12s} {per * n_channels:8.3f} s  {1 / per:12,.0f} channels/s"
        f"  max gap {peer_gaps.max():.1e}  ({n_peer} channels looped, extrapolated;"
        f" {not_optimal} not optimal; probe per 20: "
        + ", ".join(f"{s} {t * 1e3:.0f} ms" for s, t in speed.items())
        + ")"
    )
    if "dpcap_s" in out:
        out["ratio"] = out["peer_s"] / out["dpcap_s"]
        print(f"  peer/dpcap         {out['ratio']:8.1f} x")
    return out


#: The ε of the ragged family (with n = 2..200: 1,990 channels).
FAMILY_EPSILONS = tuple(0.2 * k for k in range(1, 11))


def ragged(sizes: range = range(2, 201), repeat: int = 1) -> dict[str, Any]:
    """A loop of ``capacity`` against ``capacities(list)`` on the truncated geometric family."""
    from dpcap.mechanisms import truncated_geometric

    family = [truncated_geometric(n, eps) for n in sizes for eps in FAMILY_EPSILONS]
    print(
        f"\nRagged family: truncated geometric on {{0..n}}, n = {sizes.start}..{sizes.stop - 1} x "
        f"{len(FAMILY_EPSILONS)} eps ({len(family):,} channels), tol = {TOL:g}; best of {repeat}"
    )
    capacities = getattr(dpcap, "capacities", None)
    if capacities is None:
        print("  dpcap.capacities not available yet")
        return {"n": len(family)}
    small = family[: 2 * len(FAMILY_EPSILONS)]
    capacities(small, tol=TOL)  # warm-up (imports, first calls)
    loop_s = batch_s = np.inf
    for _ in range(repeat):  # interleaved, so that a busy machine slows both alike
        start = time.perf_counter()
        loop = [dpcap.capacity(W, tol=TOL) for W in family]
        loop_s = min(loop_s, time.perf_counter() - start)
        start = time.perf_counter()
        result = capacities(family, tol=TOL)
        batch_s = min(batch_s, time.perf_counter() - start)
    equal = all(
        (r.lower, r.upper, r.iterations) == (result.lower[i], result.upper[i], result[i].iterations)
        and np.array_equal(r.prior, result[i].prior)
        for i, r in enumerate(loop)
    )
    n = len(family)
    print(f"  loop of capacity   {loop_s:8.3f} s  {n / loop_s:12,.0f} channels/s")
    print(
        f"  capacities(list)   {batch_s:8.3f} s  {n / batch_s:12,.0f} channels/s"
        f"  bit for bit equal to the loop: {equal}"
    )
    print(f"  loop/capacities    {loop_s / batch_s:8.1f} x")
    return {"n": n, "loop_s": loop_s, "batch_s": batch_s, "ratio": loop_s / batch_s, "equal": equal}


def backends(n_channels: int = 10_000, repeat: int = 3) -> dict[str, Any]:
    """``capacities`` of one stack as a NumPy array and as a PyTorch CPU tensor (when installed).

    The engine runs in the array's own library (the array API standard); the certificate is the
    same host NumPy evaluation for both, so the brackets are compared too. The stacks are the
    batch's 4x8 channels and one Dirichlet(1) 256x256 channel; the two are timed interleaved.
    """
    print(f"\nArray libraries: capacities(stack), tol = {TOL:g}; best of {repeat}")
    try:
        import torch  # type: ignore[import-not-found]
    except ImportError:
        print("  torch (CPU) not installed: row skipped")
        return {}
    rng = np.random.default_rng(SEED + 2)
    stacks = {
        f"{n_channels:,} x 4x8": rng.dirichlet(np.ones(8), size=(n_channels, 4)),
        "1 x 256x256": rng.dirichlet(np.ones(256), size=256)[None],
    }
    out: dict[str, Any] = {"torch": torch.__version__}
    for name, stack in stacks.items():
        tensor = torch.asarray(stack.copy())
        dpcap.capacities(stack[:2], tol=TOL), dpcap.capacities(tensor[:2], tol=TOL)  # warm-up
        times = {"numpy": np.inf, "torch": np.inf}
        results: dict[str, Any] = {}
        for _ in range(repeat):
            for label, arg in (("numpy", stack), ("torch", tensor)):
                start = time.perf_counter()
                results[label] = dpcap.capacities(arg, tol=TOL)
                times[label] = min(times[label], time.perf_counter() - start)
        a, b = results["numpy"], results["torch"]
        overlap = bool(np.all(a.lower <= b.upper) and np.all(b.lower <= a.upper))
        out[name] = {**times, "overlap": overlap}
        print(
            f"  {name:14s} numpy {times['numpy']:8.3f} s   torch {times['torch']:8.3f} s"
            f"   torch/numpy {times['torch'] / times['numpy']:5.2f}   brackets overlap: {overlap}"
        )
    return out


def tall() -> dict[str, float]:
    """Tall channels (issue 26): solved on two extreme rows or a working set of rows, never a
    dense |X| × |X| system (before: a raw MemoryError at 100,000 × 2, > 120 s at 10,000 × 8).
    Clarabel is timed where it finishes in reasonable time."""

    print("\nTall channels (Dirichlet(1) rows), tol = 1e-09; best of 1")
    rng = np.random.default_rng(SEED)
    out: dict[str, float] = {}
    for rows, cols, peer in ((100_000, 2, False), (20_000, 2, False), (10_000, 8, True),
                             (1024, 256, True)):  # fmt: skip
        W = rng.dirichlet(np.ones(cols), size=rows)
        start = time.perf_counter()
        res = dpcap.capacity(W)
        ours = time.perf_counter() - start
        line = (
            f"  {rows:>7,} x {cols:<4} dpcap {ours:8.3f} s  gap {res.upper - res.lower:.1e} "
            f"{res.status.value}"
        )
        if peer:
            start = time.perf_counter()
            capacity_conic(W, solver="CLARABEL", tol=1e-9)
            theirs = time.perf_counter() - start
            line += f"   Clarabel {theirs:8.3f} s   peer/dpcap {theirs / ours:6.1f} x"
        print(line)
        out[f"{rows}x{cols}"] = ours
    return out


def main(repeat: int = 3) -> dict[str, Any]:
    if getattr(dpcap, "capacity", None) is None:
        print("dpcap.capacity not available yet: timing the cvxpy peers only\n")
    rows = single_channels(repeat)
    out = {"single": rows, "batch": batch(), "ragged": ragged(), "backends": backends()}
    out["tall"] = tall()
    return out


if __name__ == "__main__":
    main()
