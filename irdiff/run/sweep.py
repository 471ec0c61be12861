"""Shape sweeps: the ``--shapes`` grammar and the TFLOP/s table (one row per shape, like the seed reports).

``--shapes`` grammar (each ``--shapes`` option, or each ``;``-separated part of one, is an *axis*; the shapes run
are the product of the axes, the last axis varying fastest; dimensions no axis names keep the value of ``--shape``
or the suite's default shape)::

    AXIS   := [NAMES "="] VALUES
    NAMES  := NAME ("=" NAME)*          dimensions set together:  M=N=1024
    VALUES := ITEM ("," ITEM)*
    ITEM   := INT | START ":" STOP [":" STEP]     inclusive range; STEP defaults to START

Examples (matmul's dimensions are M, N, K)::

    --shapes 256:4096:256            M=N=K=256, 512, ..., 4096 (bare values set every dimension)
    --shapes 512,1024                M=N=K=512 and M=N=K=1024
    --shapes M=N=8192 --shapes K=512,2048,8192      three shapes, M=N=8192 in each
    --shapes "M=N=1024,2048;K=512:2048:512"         2 x 4 shapes

Nothing here imports torch or Triton.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MAX_SHAPES", "format_table", "parse_shapes", "shape_label"]

MAX_SHAPES = 4096

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _parse_values(text: str, whole: str) -> list[int]:
    values: list[int] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise ValueError(f"--shapes {whole!r}: empty value")
        if ":" in item:
            parts = item.split(":")
            if len(parts) not in (2, 3) or not all(p.strip().isdigit() for p in parts):
                raise ValueError(f"--shapes {whole!r}: range {item!r} is not START:STOP[:STEP] of positive integers")
            start, stop = int(parts[0]), int(parts[1])
            step = int(parts[2]) if len(parts) == 3 else start
            if start <= 0 or step <= 0 or stop < start:
                raise ValueError(f"--shapes {whole!r}: range {item!r} needs 0 < START <= STOP and STEP > 0")
            if (stop - start) // step + 1 > MAX_SHAPES:
                raise ValueError(f"--shapes {whole!r}: range {item!r} has more than {MAX_SHAPES} values")
            values.extend(range(start, stop + 1, step))
        else:
            if not item.isdigit() or int(item) <= 0:
                raise ValueError(f"--shapes {whole!r}: {item!r} is not a positive integer")
            values.append(int(item))
    return values


def parse_shapes(specs: Sequence[str], base: Mapping[str, int]) -> list[dict[str, int]]:
    """Expand ``--shapes`` options (see the module docstring) into a list of full shapes.

    :param specs: the option values, one per ``--shapes``; empty → ``[dict(base)]``.
    :param base: the shape the axes modify (suite default updated by ``--shape``).
    :raises ValueError: malformed axis, a dimension the shape does not have, bare values for a suite with no shape
        dimensions, or more than ``MAX_SHAPES`` shapes.
    """
    axes: list[tuple[list[str], list[int]]] = []
    for spec in specs:
        for part in spec.split(";"):
            part = part.strip()
            if not part:
                continue
            pieces = part.split("=")
            names = [p.strip() for p in pieces[:-1]]
            values = _parse_values(pieces[-1], spec)
            if not names:
                if not base:
                    raise ValueError(f"--shapes {spec!r}: the suite has no shape dimensions to set; use NAME=VALUES")
                names = list(base)
            for n in names:
                if not _NAME.match(n):
                    raise ValueError(f"--shapes {spec!r}: {n!r} is not a dimension name")
                if base and n not in base:
                    raise ValueError(
                        f"--shapes {spec!r}: the shape has no dimension {n!r} (dimensions: {', '.join(base)})"
                    )
            axes.append((names, values))
    if not axes:
        return [dict(base)]
    total = math.prod(len(v) for _, v in axes)
    if total > MAX_SHAPES:
        raise ValueError(f"--shapes: {total} shapes is more than {MAX_SHAPES}")
    shapes = []
    for combo in itertools.product(*(values for _, values in axes)):
        shape = dict(base)
        for (names, _), value in zip(axes, combo):
            for n in names:
                shape[n] = value
        shapes.append(shape)
    return shapes


def shape_label(shape: Mapping[str, int]) -> str:
    """Compact label grouping equal dimensions: ``M=N=K=4096``, ``M=N=8192 K=512``; ``default shape`` for a suite
    without named dimensions."""
    if not shape:
        return "default shape"
    groups: dict[int, list[str]] = {}
    for k, v in shape.items():
        groups.setdefault(v, []).append(k)
    return " ".join("=".join(names) + f"={v}" for v, names in groups.items())


def _fmt(x: Any, digits: int = 1) -> str:
    if x is None:
        return "—"
    if isinstance(x, float) and not math.isfinite(x):
        return "—"
    return f"{x:.{digits}f}"


def format_table(timing: Mapping[str, Any]) -> str:
    """The timing table of a ``bundle.runs["timing"]`` record: one row per shape with each variant's TFLOP/s (or
    GB/s when the suite gives no FLOP count), the reference's, and the verdict of the first pair.

    Variants whose output is wrong (state ``wrong``) are marked ``✗`` next to their number (a variant that was not
    checked is not marked); the findings are listed under the table.
    """
    rows = timing.get("rows", [])
    names: list[str] = list(timing.get("variants", []))
    ref_name = timing.get("reference_name") or "reference"
    has_ref = any(r.get("reference") for r in rows)
    use_tflops = any(v.get("tflops") is not None for r in rows for v in r.get("variants", {}).values())
    unit = "TFLOP/s" if use_tflops else "GB/s"
    key = "tflops" if use_tflops else "gbps"
    header = ["shape"] + [f"{n} {unit}" for n in names] + ([f"{ref_name} {unit}"] if has_ref else [])
    pair = names[:2] if len(names) >= 2 else []
    if pair:
        header.append(f"{pair[0]} vs {pair[1]}")
    verdicts = {(v.get("a"), v.get("b"), shape_label(v.get("shape") or {})): v for v in timing.get("verdicts", [])}
    table: list[list[str]] = [header]
    for r in rows:
        label = shape_label(r["shape"])
        cells = [label]
        for n in names:
            v = r.get("variants", {}).get(n, {})
            if v.get("error"):
                cells.append("error")
                continue
            wrong = v.get("state") == "wrong" if "state" in v else v.get("correct") is False
            mark = " ✗" if wrong else ""
            cells.append(_fmt(v.get(key)) + mark)
        if has_ref:
            ref = r.get("reference") or {}
            cells.append(_fmt(ref.get(key)) if ref and not ref.get("error") else "—")
        if pair:
            vd = verdicts.get((pair[0], pair[1], label))
            if vd is None:
                cells.append("—")
            elif vd["verdict"] == "no significant difference":
                cells.append("same")
            elif vd["verdict"] == "faster":
                cells.append(f"{1.0 / vd['ratio']:.2f}x faster")
            else:
                cells.append(f"{vd['ratio']:.2f}x slower")
        table.append(cells)
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = []
    for i, row in enumerate(table):
        lines.append("  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(row, widths))))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
