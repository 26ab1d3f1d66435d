"""Shannon capacity of channels, alone or in batches, with a certified bracket.

``C(W) = max_p I(p, W)``. For every prior ``p`` (``docs/mathematics.rst`` §1)::

    I(p, W) ≤ C ≤ max_x D(W_x ‖ pW),

so a result is a bracket ``lower ≤ C ≤ upper`` recomputed by the query layer
(:mod:`dpcap._core.certify`) from the priors an engine returns: the certificate is never taken on a
solver's word.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.channel import AdditiveMechanism
from dpcap.errors import ChannelError, ProblemTooLargeError, Status
from dpcap.function_mechanism import FunctionMechanism
from dpcap.result import CapacitiesResult, CapacityResult
from dpcap.shannon import structured as structured
from dpcap.shannon._plain import plain_capacity
from dpcap.shannon.cost import capacity_cost
from dpcap.solvers import backend, blahut, reduce

__all__ = ["capacities", "capacity"]

FloatArray = NDArray[np.float64]


def capacity(
    W: Any,
    /,
    *,
    method: str = "ba",
    solver: str | None = None,
    tol: float = 1e-9,
    rtol: float = 0.0,
    max_iter: int | None = None,
    unit: str = "nats",
    cost: Any = None,
    budget: Any = None,
    peak: Any = None,
) -> CapacityResult:
    """Shannon capacity ``C = max_p I(X;Y)`` of a channel, certified to ``tol`` (and ``rtol``).

    Parameters
    ----------
    W : array_like, Channel or Mechanism, shape (n_inputs, n_outputs)
        Rows are inputs. For a database mechanism this is its free-lunch privacy
        ``sup_{P_{X^n}} I(X^n; Y)`` (Cuff & Yu §6.2). An additive mechanism
        (:meth:`~dpcap.Mechanism.additive`, e.g. a counting query) is solved on its reachable
        totals, without enumerating its databases: its capacity is that of the noise rows of
        the reachable totals (:mod:`dpcap.shannon.structured`).
    method : {"ba", "conic"}
        ``"ba"`` (default): exact reductions (zero and proportional columns, duplicate rows),
        then Blahut–Arimoto in the log domain with an active-set KKT–Newton polish and a
        primal–dual interior-point fallback (:mod:`dpcap.solvers.blahut`). ``"conic"``: the
        exponential-cone program through cvxpy, an independent engine; its prior is then
        polished by the BA engine and certified like any other.
    solver : {"CLARABEL", "ECOS", "SCS"}, optional
        The cvxpy solver for ``method="conic"`` (default CLARABEL; case-insensitive).
    tol : float
        Target certified gap ``upper − lower`` in nats.
    rtol : float
        Relative target in ``[0, 1)``: the bracket has converged once ``upper − lower ≤
        max(tol, rtol·|upper|)`` (default 0: ``tol`` alone).
    max_iter : int, optional
        Budget of Blahut–Arimoto iterations (default 100,000).
    unit : {"nats", "bits"}
    cost, budget, peak : optional
        Input costs ``c_x ≥ 0`` (shape (n_inputs,)), a budget ``Σ_x p_x c_x ≤ budget`` and a
        peak (inputs with ``c_x > peak`` unused): the capacity–cost function, solved by
        :func:`dpcap.shannon.cost.capacity_cost` (``docs/mathematics.rst`` §12), which
        returns a :class:`~dpcap.result.CostCapacityResult`.

    Returns
    -------
    CapacityResult
        ``value`` is ``upper`` (the conservative end); ``prior`` attains ``lower``. For an
        additive mechanism, a :class:`~dpcap.shannon.structured.StructuredCapacityResult`:
        the bracket of the reduced channel (bit for bit), and the attaining law on databases
        (the optimal law of the total, each total's mass on its lexicographically first
        database), dense while the mechanism's matrix would fit in memory.

    Warns
    -----
    ConvergenceWarning
        If the bracket did not close to ``max(tol, rtol·|upper|)``; ``status`` is then
        ``max_iter`` (BA) or ``inaccurate`` (conic). The message says when the target is below
        the bracket's rounding floor (rounding, not iterations, limits the gap).

    Notes
    -----
    Certificate (Blahut 1972, Arimoto 1972; ``docs/mathematics.rst`` §1):
    ``I(p, W) ≤ C ≤ max_x D(W_x ‖ pW)``.
    KKT: ``D(W_x ‖ q*) = C`` on the support of an optimal prior and ``≤ C`` off it.
    Stopping rule: ``upper − lower ≤ max(tol, rtol·|upper|)``; ``tol`` alone is absolute,
    so a small capacity (``C ≈ 4e-4`` nats at ``tol = 1e-9``) gets few correct digits unless
    ``rtol`` asks for them.

    Examples
    --------
    >>> import math
    >>> res = capacity([[0.9, 0.1], [0.1, 0.9]])
    >>> math.isclose(res.value, math.log(2) + 0.9 * math.log(0.9) + 0.1 * math.log(0.1))
    True
    >>> res.upper - res.lower <= 1e-9, res.status.value
    (True, 'converged')

    A noisy count of 40 people: ``2^40`` databases, solved on the 41 counts. The law on
    databases has no dense form at this size; each count's mass is on its first database:

    >>> from dpcap.mechanisms import counting_query, truncated_geometric
    >>> res = capacity(counting_query(40, truncated_geometric(40, 0.5)))
    >>> res.status.value, res.totals.tolist() == list(range(41)), res.prior.shape
    ('converged', True, (0,))
    >>> res.databases[2].tolist() == [0] * 38 + [1, 1]
    True
    """
    if cost is not None or budget is not None or peak is not None:
        return capacity_cost(
            W,
            cost=cost,
            budget=budget,
            peak=peak,
            method=method,
            solver=solver,
            tol=tol,
            rtol=rtol,
            max_iter=max_iter,
            unit=unit,
        )
    return plain_capacity(
        W, method=method, solver=solver, tol=tol, rtol=rtol, max_iter=max_iter, unit=unit
    )


def _channels(Ws: Any) -> tuple[list[FloatArray], list[structured.Reduced | None]]:
    """Validate a list of channels, naming the element at fault (``Ws[i]``).

    An additive mechanism is replaced by its reduced channel (the noise rows of its reachable
    totals, as :func:`capacity` solves it), returned beside it to lift the prior back; one whose
    databases are too many for the dense prior of a batch is refused.
    """
    if isinstance(Ws, (str, bytes)):
        raise ChannelError(
            f"Ws must be a list of channels (or a stack of shape (B, n_inputs, n_outputs)), got "
            f"the string {check.show(Ws)}"
        )
    if isinstance(Ws, Sequence) or (isinstance(Ws, np.ndarray) and Ws.dtype == object):
        if len(Ws) == 0:
            raise ChannelError("Ws must hold at least one channel, got an empty list")
        mats: list[FloatArray] = []
        lifts: list[structured.Reduced | None] = []
        for i, W in enumerate(Ws):
            if backend.is_foreign_array(W):  # another array library's matrix, maybe on a GPU
                W = backend.to_host(W)
            if not isinstance(W, (AdditiveMechanism, FunctionMechanism)):
                mats.append(check.stochastic_matrix(W, f"Ws[{i}]"))
                lifts.append(None)
                continue
            if not structured.dense_fits(W):
                raise ProblemTooLargeError(
                    f"Ws[{i}] is a structured mechanism on {W.n_inputs} databases x "
                    f"{W.n_outputs} outputs, beyond what a batch holds as a dense prior "
                    f"({structured.MAX_DENSE_PRIOR} databases, {check.MAX_DENSE_ELEMENTS} "
                    f"entries); dpcap.capacity(Ws[{i}]) solves it on its reachable totals"
                )
            reduced = structured.reduce_mechanism(W)
            mats.append(check.stochastic_matrix(reduced.rows, f"Ws[{i}]"))
            lifts.append(reduced)
        return mats, lifts
    raise ChannelError(
        f"Ws must be a (B, n_inputs, n_outputs) array or a list of channels, got {check.show(Ws)}"
    )


def capacities(
    Ws: Any,
    /,
    *,
    tol: float = 1e-9,
    rtol: float = 0.0,
    max_iter: int | None = None,
    unit: str = "nats",
) -> CapacitiesResult:
    """Certified capacities of many channels at once.

    Parameters
    ----------
    Ws : sequence of channels, or array of shape (B, n_inputs, n_outputs)
        A list or tuple (arrays, :class:`~dpcap.Channel` or mechanism objects, of any sizes):
        each channel is reduced exactly as :func:`capacity` reduces it, the reduced channels of
        one shape are solved together as one vectorised batch, and each bracket is recomputed
        on the channel as given. Element ``i`` is then :func:`capacity` of ``Ws[i]`` with the
        same ``tol``, ``rtol`` and ``max_iter``, bit for bit: value, bracket, prior, output,
        status and iterations (the engine treats the elements of a batch independently, and the
        certificate is evaluated channel by channel). An additive mechanism is solved on its
        reachable totals, as :func:`capacity` solves it, and its prior is the dense law on its
        databases (``shapes[i]`` counts the databases); one whose dense matrix would exceed
        dpcap's memory limit is refused (:func:`capacity` returns its law in structured form).

        A 3-D array is one vectorised batch as it stands: no per-channel reductions, and one
        certificate evaluation for the whole stack. It is the fast path for many small channels
        of one size, where a list spends most of its time certifying channel by channel. Its
        brackets are certified on the channels as given and close to ``tol`` like any other,
        but they may differ from :func:`capacity`'s in the last bits, and a channel with
        duplicate rows or zero or proportional columns is solved unreduced, so its prior and
        iteration count may differ too.

        The 3-D array may also be one of another array library that follows the Python array
        API (a PyTorch or CuPy array, on any device; ``array_api_compat`` recognises it). It is
        copied to the host once, validated there and sent back to its device as float64; the
        engine runs there, in that library; the brackets are certified on the host in NumPy
        float64, exactly as for a NumPy stack. The result holds NumPy arrays.
    tol, rtol, max_iter, unit
        As for :func:`capacity` (the rule applies to each element).

    Returns
    -------
    CapacitiesResult
        The fields of :class:`CapacityResult` as arrays, one status per element; element ``i``
        is ``result[i]``. ``prior`` and ``output`` are padded with NaN beyond each element's
        own size. Each element leaves the vectorised working set as soon as its own bracket
        closes.

    Raises
    ------
    ProblemTooLargeError
        For an additive mechanism whose dense matrix would exceed dpcap's memory limit.

    Warns
    -----
    ConvergenceWarning
        If some element did not converge (the message counts them).

    Examples
    --------
    >>> import numpy as np
    >>> res = capacities(np.stack([np.eye(2), np.full((2, 2), 0.5)]))
    >>> np.round(res.value, 12).tolist()
    [0.693147180560, 0.0]
    >>> ragged = capacities([np.eye(3), [[0.9, 0.1], [0.1, 0.9]], [[1.0]]])
    >>> ragged.shapes, ragged[0].prior.tolist(), float(ragged.value[2])
    (((3, 3), (2, 2), (1, 1)), [0.3333333333333333, 0.3333333333333333, 0.3333333333333333], 0.0)
    """
    if isinstance(Ws, np.ndarray) and Ws.ndim == 3:
        stack = check.stochastic_stack(Ws, "Ws")
        rule, budget, divisor = _batch_options(tol, rtol, max_iter, unit)
        return _stack_capacities(stack, rule, budget, divisor, unit)
    if backend.is_foreign_array(Ws):
        stack = check.stochastic_stack(backend.to_host(Ws), "Ws")
        rule, budget, divisor = _batch_options(tol, rtol, max_iter, unit)
        on_device = backend.space(Ws).asarray(stack)  # the validated channels, on Ws's device
        return _stack_capacities(stack, rule, budget, divisor, unit, on_device)
    mats, lifts = _channels(Ws)
    rule, budget, divisor = _batch_options(tol, rtol, max_iter, unit)
    return _list_capacities(mats, rule, budget, divisor, unit, lifts)


#: The stopping rule of a batch: ``(tol, rtol)`` (:func:`dpcap._core.certify.conclude`).
Rule = tuple[float, float]


def _batch_options(
    tol: float, rtol: float, max_iter: int | None, unit: str
) -> tuple[Rule, int, float]:
    """The validated ``((tol, rtol), max_iter, unit divisor)`` of a batch."""
    rule = (check.tolerance(tol), check.rtol(rtol))
    return rule, check.max_iter(max_iter), check.unit_divisor(unit)


def _list_capacities(
    mats: list[FloatArray],
    rule: Rule,
    budget: int,
    divisor: float,
    unit: str,
    lifts: list[structured.Reduced | None] | None = None,
) -> CapacitiesResult:
    """:func:`capacities` of validated channels: :func:`capacity`'s steps, batched by shape.

    The engine treats the elements of a stack independently, but its sums follow the memory
    layout of a channel: a reduced channel that is not C-ordered (``reduce_channel`` returns a
    column-major matrix when it drops zero columns) is therefore solved alone, as
    :func:`capacity` solves it. The others are grouped by shape and solved in stacks of at most
    ``blahut.BLOCK_ELEMENTS`` entries (the engine's own parts): the extra memory is one such
    stack, and a channel larger than that is solved alone, as a view, without a copy.

    ``lifts[i]``, when given, says that ``mats[i]`` is the reduced channel of an additive
    mechanism: it is solved and certified as it stands, and its prior is lifted to the law on
    the mechanism's databases (:func:`dpcap.shannon.structured.database_law`).
    """
    lifts = [None] * len(mats) if lifts is None else lifts
    shapes = tuple(
        (int(m.shape[0]) if r is None else r.mechanism.n_inputs, int(m.shape[1]))
        for m, r in zip(mats, lifts, strict=True)
    )
    B = len(mats)
    reductions = _reductions(mats)
    groups: dict[tuple[int, ...], list[int]] = {}
    chunks: list[list[int]] = []
    for i, r in enumerate(reductions):
        if r.matrix.flags.c_contiguous:
            groups.setdefault(r.matrix.shape, []).append(i)
        else:
            chunks.append([i])
    for (nx, ny), members in groups.items():
        per_stack = max(1, blahut.BLOCK_ELEMENTS // (nx * ny))
        chunks.extend(members[k : k + per_stack] for k in range(0, len(members), per_stack))
    lower, upper = np.empty(B), np.empty(B)
    floors = np.full(B, np.nan)  # the rounding floors of the open brackets (NaN: not needed)
    closed = np.zeros(B, dtype=bool)  # where the engine's own bracket met the rule
    iterations = np.empty(B, dtype=np.int64)
    prior = np.full((B, max(s[0] for s in shapes)), np.nan)
    output = np.full((B, max(s[1] for s in shapes)), np.nan)
    for chunk in chunks:
        if len(chunk) == 1:
            stack = reductions[chunk[0]].matrix[None]
        else:
            stack = np.stack([reductions[i].matrix for i in chunk])
        solution = blahut.solve(stack, tol=rule[0], rtol=rule[1], max_iter=budget)
        del stack
        iterations[chunk] = solution.iterations
        closed[chunk] = solution.converged
        # priors back on each channel as given, then one certificate per group of channels of
        # one (C-ordered) shape: the certificate of a row does not depend on the rows beside it
        backs = [reductions[i].prior_back(solution.prior[j]) for j, i in enumerate(chunk)]
        ups = [reductions[i].prior_back(solution.upper_prior[j]) for j, i in enumerate(chunk)]
        together: dict[tuple[int, ...], list[int]] = {}
        for j, i in enumerate(chunk):
            key = mats[i].shape if mats[i].flags.c_contiguous else (-1 - j, 0)
            together.setdefault(key, []).append(j)
        for members in together.values():
            originals = (
                mats[chunk[members[0]]][None]
                if len(members) == 1
                else np.stack([mats[chunk[j]] for j in members])
            )
            lo, up = _certify.batch_bracket(
                originals,
                np.stack([backs[j] for j in members]),
                np.stack([ups[j] for j in members]),
            )
            for k, j in enumerate(members):
                i = chunk[j]
                lower[i], upper[i] = lo[k], up[k]
                if not _certify.met(up[k] - lo[k], *rule, up[k]):
                    floors[i] = _certify.floor(mats[i], backs[j], ups[j])
                rows, cols = shapes[i]
                lifted = lifts[i]
                prior[i, :rows] = (
                    backs[j] if lifted is None else structured.database_law(lifted, backs[j])
                )
                output[i, :cols] = backs[j] @ mats[i]
    return _result(
        lower, upper, prior, output, iterations, rule, budget, divisor, unit, shapes,
        (floors, closed), each=True,
    )  # fmt: skip


#: Channels up to this many entries are screened together for reductions (see _reductions).
SCREEN_ENTRIES = 256


def _reductions(mats: list[FloatArray]) -> list[reduce.Reduction]:
    """``reduce.reduce_channel`` of each channel, small channels screened in batches first.

    ``reduce_channel`` merges only exactly equal rows and exactly proportional columns and drops
    zero columns; a small channel in which a vectorised screen (:func:`_irreducible`) finds none
    of these reduces to itself, so its :class:`~dpcap.solvers.reduce.Reduction` (the channel
    itself, every row kept) is written here; every other channel goes through
    ``reduce_channel``. The screen's columns are compared with a relative slack of 1e-9, far
    wider than the rounding of their sums, so that it misses no merge.
    """
    out: list[reduce.Reduction | None] = [None] * len(mats)
    by_shape: dict[tuple[int, ...], list[int]] = {}
    for i, m in enumerate(mats):
        if m.size <= SCREEN_ENTRIES:
            by_shape.setdefault(m.shape, []).append(i)
    for (nx, ny), members in by_shape.items():
        step = max(1, blahut.BLOCK_ELEMENTS // (nx * max(nx, ny) ** 2))  # pairwise temporaries
        for k in range(0, len(members), step):
            chunk = members[k : k + step]
            plain = _irreducible(np.stack([mats[i] for i in chunk]))
            for i in np.asarray(chunk)[plain].tolist():
                out[i] = reduce.Reduction(mats[i], np.arange(nx, dtype=np.int64), nx)
    return [
        reduce.extreme_rows(reduce.reduce_channel(m) if r is None else r)
        for m, r in zip(mats, out, strict=True)
    ]


def _irreducible(W: FloatArray) -> NDArray[np.bool_]:
    """Elements of a stack with no equal rows, no zero column and no two columns proportional
    (within a relative 1e-9: a screen that flags every column pair ``reduce_channel`` merges)."""
    _, nx, ny = W.shape
    upper_rows = np.triu(np.ones((nx, nx), dtype=bool), 1)
    equal_rows = (W[:, :, None, :] == W[:, None, :, :]).all(axis=-1)
    sums = W.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        C = W / sums[:, None, :]  # 0/0 = NaN in a zero column, which is flagged below anyway
    a, b = C[:, :, :, None], C[:, :, None, :]
    close = (np.abs(a - b) <= 1e-9 * np.maximum(a, b)).all(axis=1)
    upper_cols = np.triu(np.ones((ny, ny), dtype=bool), 1)
    flagged = (equal_rows & upper_rows).any(axis=(1, 2)) | (sums <= 0).any(axis=-1)
    flagged |= (close & upper_cols).any(axis=(1, 2))
    plain: NDArray[np.bool_] = ~flagged
    return plain


def _stack_capacities(
    stack: FloatArray,
    rule: Rule,
    budget: int,
    divisor: float,
    unit: str,
    engine_stack: Any = None,
) -> CapacitiesResult:
    """:func:`capacities` of a validated 3-D stack: one vectorised batch, no reductions.

    ``engine_stack``, when given, is the same channels in another array library (on its
    device): the engine solves that, and everything else, the certificate included, uses
    ``stack`` on the host.
    """
    B, nx, ny = stack.shape
    engine_input = stack if engine_stack is None else engine_stack
    solution = blahut.solve(engine_input, tol=rule[0], rtol=rule[1], max_iter=budget)
    prior, upper_prior = solution.prior, solution.upper_prior
    lower, upper = np.empty(B), np.empty(B)
    # Certified one part of the engine's size at a time (a copy is at most one part). The radius
    # bound needs a second pass over a channel only where the engine's best upper end came from
    # another prior than its best lower end: those elements are certified apart.
    per_part = max(1, blahut.BLOCK_ELEMENTS // (nx * ny))
    for start in range(0, B, per_part):
        part = slice(start, start + per_part)
        W, p, centre = stack[part], prior[part], upper_prior[part]
        apart = ~(centre == p).all(axis=-1)
        if not apart.any():
            lower[part], upper[part] = _certify.batch_bracket(W, p)
        elif apart.all():
            lower[part], upper[part] = _certify.batch_bracket(W, p, centre)
        else:
            for idx, c in ((np.flatnonzero(~apart), None), (np.flatnonzero(apart), centre)):
                lower[start + idx], upper[start + idx] = _certify.batch_bracket(
                    W[idx], p[idx], None if c is None else c[idx]
                )
    output = np.einsum("bx,bxy->by", prior, stack)
    shapes = ((nx, ny),) * B
    floors = np.full(B, np.nan)  # the rounding floors of the open brackets, part by part
    open_ = np.flatnonzero(~_certify.met(upper - lower, *rule, upper))
    for start in range(0, open_.size, per_part):
        idx = open_[start : start + per_part]
        floors[idx] = _certify.batch_floor(stack[idx], prior[idx], upper_prior[idx])
    return _result(
        lower, upper, prior, output, solution.iterations, rule, budget, divisor, unit, shapes,
        (floors, solution.converged),
    )  # fmt: skip


def _result(
    lower: FloatArray,
    upper: FloatArray,
    prior: FloatArray,
    output: FloatArray,
    iterations: NDArray[np.int64],
    rule: Rule,
    budget: int,
    divisor: float,
    unit: str,
    shapes: tuple[tuple[int, int], ...],
    rounding: tuple[FloatArray, NDArray[np.bool_]],
    each: bool = False,
) -> CapacitiesResult:
    """The result of a batch; statuses as :func:`capacity` concludes them, one warning.

    ``rounding`` is, per element, the rounding floor of its bracket (NaN where it was not
    needed: a closed bracket) and whether the engine closed its own bracket: the message counts
    the open elements whose target is below their floor. With ``each``, every element also
    gets the message :func:`capacity` would give it (one formatting per element: the list
    path, not the vectorised stack).
    """
    tolerance, relative = rule
    floors, closed = rounding
    gap = upper - lower
    met = _certify.met(gap, tolerance, relative, upper)
    status = np.full(len(lower), Status.MAX_ITER, dtype=object)
    status[met] = Status.CONVERGED
    below = _certify.targets(tolerance, relative, upper) < _certify.rounding_floor(
        gap, upper, floors, closed
    )
    messages = (
        tuple(
            _certify.conclude(
                float(gap[i]),
                tolerance,
                rtol=relative,
                upper=float(upper[i]),
                floor=float(floors[i]),
                engine_closed=bool(closed[i]),
                iterations=int(iterations[i]),
                warn_open=False,
            )[1]
            for i in range(len(lower))
        )
        if each
        else ()
    )
    status, message = _certify.conclude_many(
        status,
        tolerance,
        rtol=relative,
        what="channels",
        note=f"budget {budget} iterations each",
        rounding=int(np.sum(below & ~met)),
    )
    return CapacitiesResult(
        value=upper / divisor,
        lower=lower / divisor,
        upper=upper / divisor,
        prior=prior,
        output=output,
        status=status,
        iterations=iterations.copy(),
        method="ba",
        unit=unit,
        message=message,
        tol=tolerance,
        shapes=shapes,
        messages=messages,
    )
