"""How results and channels look in a notebook: small, theme-neutral HTML tables.

The value of a certified result is shown with only the digits both ends of its bracket agree
on (:func:`agreed`): every number in ``[lower, upper]`` rounds to the digits shown, so none of
them is a guess. The tables set no colours (they inherit the notebook's theme, light or dark);
``repr()`` is untouched, so doctests hold.

>>> agreed(0.27570230387, 0.27570230391)
'0.2757023039'
>>> agreed(0.2999, 0.3001)
'0.300'
>>> agreed(0.95, 1.05)
''
"""

from __future__ import annotations

import html
import math
from dataclasses import fields
from typing import Any

import numpy as np

__all__ = ["agreed", "channel_html", "matrix_html", "point_html", "sequence_html"]

#: Largest matrix shown entry by entry (rows and columns); beyond, a corner and a summary.
MATRIX_LIMIT = 16
#: Rows of a curve or batch shown before the middle is elided.
SEQUENCE_LIMIT = 12
#: Fields every result has, shown in their own rows (or not at all).
_OWN = {"value", "lower", "upper", "unit", "status", "method", "iterations", "message", "tol"}
_OWN |= {"details", "points", "messages"}
_STYLE = "border-collapse:collapse;text-align:right"


def _number(x: Any, digits: int = 12) -> str:
    value = float(x)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.{digits}g}"


def agreed(lower: Any, upper: Any, max_digits: int = 12) -> str:
    """The significant digits on which ``lower`` and ``upper`` agree after rounding ("" if not
    even the first one does). Rounding is monotone, so every number between the two ends
    rounds to the same digits: the text is exact about what the bracket proves."""
    lo, up = float(lower), float(upper)
    if math.isnan(lo) or math.isnan(up):
        return "nan"
    if lo == up:
        return _number(up)
    lo, up = min(lo, up), max(lo, up)
    if math.isinf(lo) or math.isinf(up):
        return ""
    best = ""
    for digits in range(1, max_digits + 1):
        a, b = f"{lo:#.{digits}g}", f"{up:#.{digits}g}"
        if a != b:
            break
        best = a.rstrip(".") if "e" not in a else a
    return best


def _cell(text: str, header: bool = False) -> str:
    tag = "th" if header else "td"
    return f"<{tag}>{html.escape(text)}</{tag}>"


def matrix_html(M: Any, *, caption: str = "", digits: int = 4) -> str:
    """A matrix (a vector as one row) as a table, up to :data:`MATRIX_LIMIT` rows and columns;
    a larger one as its top-left corner with its shape."""
    A = np.atleast_2d(np.asarray(M))
    rows, cols = A.shape[:2] if A.ndim == 2 else (A.shape[0], int(np.prod(A.shape[1:])))
    A = A.reshape(rows, cols)
    r, c = min(rows, MATRIX_LIMIT), min(cols, MATRIX_LIMIT)
    body = []
    for i in range(r):
        cells = "".join(_cell(_entry(v, digits)) for v in A[i, :c])
        more = _cell("…") if cols > c else ""
        body.append(f"<tr>{cells}{more}</tr>")
    if rows > r:
        body.append("<tr>" + _cell("⋮") * (c + (cols > c)) + "</tr>")
    title = caption + (f" ({rows}×{cols}, first {r}×{c} shown)" if (rows, cols) != (r, c) else "")
    head = f"<caption>{html.escape(title)}</caption>" if title else ""
    return f'<table style="{_STYLE}">{head}{"".join(body)}</table>'


def _entry(v: Any, digits: int) -> str:
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return _number(v, digits)
    return str(v)


def _value_text(result: Any) -> str:
    unit = f" {result.unit}" if getattr(result, "unit", "") else ""
    shown = agreed(result.lower, result.upper)
    return (shown or "(bracket open)") + unit


def _field_html(value: Any) -> str | None:
    """A field's cell: small arrays as tables, scalars and tuples as text; None to skip."""
    if isinstance(value, np.ndarray):
        if value.ndim <= 2 and value.size <= MATRIX_LIMIT * MATRIX_LIMIT:
            return matrix_html(value)
        return html.escape(f"array of shape {value.shape}")
    if isinstance(value, (float, np.floating)):
        return html.escape(_number(value))
    if isinstance(value, (int, str, tuple, np.integer)):
        text = str(value)
        return html.escape(text if len(text) <= 80 else text[:77] + "...")
    return None


def point_html(result: Any) -> str:
    """A point result: value (agreed digits) with unit, bracket, status, method, the attaining
    object and the other fields."""
    status = str(getattr(result, "status", ""))
    rows = [
        ("value", html.escape(_value_text(result))),
        ("bracket", html.escape(f"[{_number(result.lower)}, {_number(result.upper)}]")),
    ]
    if status:
        rows.append(("status", html.escape(status)))
    method = getattr(result, "method", "")
    if method:
        iterations = getattr(result, "iterations", None)
        rows.append(("method", html.escape(f"{method} ({iterations} iterations)")))
    if status and status != "converged" and getattr(result, "message", ""):
        rows.append(("message", html.escape(result.message)))
    for f in fields(result):
        if f.name in _OWN:
            continue
        cell = _field_html(getattr(result, f.name))
        if cell is not None:
            rows.append((f.name, cell))
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{v}</td></tr>" for k, v in rows)
    caption = f"<caption>{html.escape(type(result).__name__)}</caption>"
    return f'<div class="dpcap-result"><table style="{_STYLE}">{caption}{body}</table></div>'


def sequence_html(result: Any) -> str:
    """A curve or batch: one row per point (its axis value, the agreed value, the bracket and
    the status); the middle of a long one elided."""
    n = len(result)
    axis = getattr(result, "axis", "")
    columns = ([axis] if axis and hasattr(result, axis) else []) + ["value", "lower", "upper"]
    columns += ["status"]
    index = list(range(n))
    if n > SEQUENCE_LIMIT:
        half = SEQUENCE_LIMIT // 2
        index = [*range(half), -1, *range(n - half, n)]
    body = []
    for i in index:
        if i < 0:
            body.append("<tr>" + _cell("⋮") * (len(columns) + 1) + "</tr>")
            continue
        cells = [str(i)]
        if columns[0] == axis and axis:
            cells.append(_number(np.asarray(getattr(result, axis))[i]))
        cells += [
            agreed(result.lower[i], result.upper[i]) or "(open)",
            _number(result.lower[i]),
            _number(result.upper[i]),
            str(result.status[i]),
        ]
        body.append("<tr>" + "".join(_cell(c) for c in cells) + "</tr>")
    head = "<tr>" + _cell("", True) + "".join(_cell(c, True) for c in columns) + "</tr>"
    unit = getattr(result, "unit", "")
    method = getattr(result, "method", "")
    caption = f"{type(result).__name__}: {n} points" + (f", {unit}" if unit else "")
    caption += f", {method}" if method else ""
    return (
        f'<div class="dpcap-result"><table style="{_STYLE}">'
        f"<caption>{html.escape(caption)}</caption>{head}{''.join(body)}</table></div>"
    )


#: Largest matrix (entries) of a channel or mechanism that is built to be shown.
DENSE_LIMIT = 1 << 16


def channel_html(ch: Any) -> str:
    """A channel or mechanism: its matrix up to :data:`MATRIX_LIMIT` square (rows are inputs),
    its corner beyond, and only a summary when the matrix is not built cheaply (more than
    :data:`DENSE_LIMIT` entries, e.g. a structured mechanism on ``2^40`` databases)."""
    rows, cols = int(ch.n_inputs), int(ch.n_outputs)
    relation = ch.neighbors
    if callable(relation):
        shown = f"predicate {getattr(relation, '__name__', 'function')}"
    elif isinstance(relation, str):
        shown = relation
    else:
        shown = f"{len(relation)} pairs"
    shape = tuple(getattr(ch, "shape", (rows,)))
    domain = ""
    if len(shape) > 1:
        domain = f", {len(shape)} entries" + (f" of sizes {shape}" if len(shape) <= 8 else "")
    caption = (
        f"{type(ch).__name__}: {rows} inputs × {cols} outputs (rows are inputs){domain}, "
        f"neighbours: {shown}"
    )
    if rows * cols > DENSE_LIMIT:
        return f'<div class="dpcap-channel"><p>{html.escape(caption)}</p></div>'
    return f'<div class="dpcap-channel">{matrix_html(ch.matrix, caption=caption)}</div>'
