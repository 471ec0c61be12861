"""Memory-hint, fp64 and helper-file facts of ``irdiff/diagnose/mechfacts.py``, read from real compiles of
``tests/suites/hintfacts/hintfacts.py`` (sm80; ``ws`` on sm100): every hint kind a kernel can write (``tl.assume``,
``tl.multiple_of``/``tl.max_contiguous`` on a scalar, on a tile per dimension, cache and eviction modifiers on loads
and stores, ``volatile``) with the value, the TTIR op carrying it and the Python line that wrote it; no hint from
the JIT's argument divisibility; no kernel line quoted for ops that a helper in another file made; fp64 scalar,
tensor and control-flow ops counted as the kernel forces. Cheap: one cached compile per target, parsing only."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from irdiff.bundle import Bundle, VariantResult
from irdiff.diagnose.facts import Ref, strip_loc
from irdiff.diagnose.mechfacts import clear_memos, compiler_messages, extract_mech_facts

SUITE = str(Path(__file__).parent / "suites" / "hintfacts" / "hintfacts.py")


@pytest.fixture(scope="session")
def hint80(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, ["hinted", "plain", "tile", "elsewhere", "acc64"], "sm80")


@pytest.fixture(autouse=True)
def _cold_memos() -> None:
    """Each test parses the texts itself (the op lines and location tables are memoized per text)."""
    clear_memos()


def _origin(v: VariantResult, ref: Ref) -> tuple[str, int]:
    """``(file, line)`` where the op a TTIR/TTGIR reference quotes was written, read from its ``loc(#locN)``: the
    callee of a ``callsite(A at B)``, the location a name ``"x"(A)`` wraps, the first of ``fused[A, …]``."""
    text = v.text(ref.stage)
    raw = text.splitlines()[(ref.line or 0) - 1]
    assert strip_loc(raw).strip() == ref.text  # the reference quotes its own line
    table = dict(re.findall(r"^(#loc\d*) = loc\((.*)\)$", text, re.M))
    m = re.search(r"loc\((#loc\d*)\)\s*$", raw)
    assert m, raw
    body = table[m[1]]
    for _ in range(20):
        fm = re.match(r'^"([^"]+)":(\d+):\d+', body)
        if fm:
            return fm[1], int(fm[2])
        nm = re.search(r"#loc\d*", body)
        assert nm, body
        body = table[nm[0]]
    raise AssertionError(body)


def _line_of(v: VariantResult, snippet: str) -> int:
    """The one line of the saved kernel source's code (after the module docstring) holding ``snippet`` (1-based)."""
    lines = v.text("python").splitlines()
    first = lines.index("@triton.jit")
    (no,) = [n for n, ln in enumerate(lines, 1) if n > first and snippet in ln]
    return no


# ------------------------------------------------------------------------------------------------ every hint kind


def test_every_hint_kind_with_its_op_value_and_line(hint80: Bundle) -> None:
    """``hinted`` writes one hint per line; each is found once, in TTIR order, with the value the kernel gave, the op
    Triton put it on (``tl.multiple_of(tl.load(..), 32)`` on the ``tt.load``, ``tl.max_contiguous`` on the offsets'
    ``arith.addi``, ``tl.assume`` as ``llvm.intr.assume`` in both releases) and the Python line that wrote it."""
    v = hint80.variants["hinted"]
    hs = extract_mech_facts(v).hints
    assert [(h.kind, h.value, h.op) for h in hs] == [
        ("assume", "", "llvm.intr.assume"),
        ("multiple_of", "32", "tt.load"),
        ("max_contiguous", "16", "arith.addi"),
        ("cache_modifier", "ca", "tt.load"),
        ("eviction_policy", "evict_last", "tt.load"),
        ("volatile", "true", "tt.load"),
        ("cache_modifier", "wt", "tt.store"),
    ]
    written = [
        "tl.assume(n > 0)",
        "start = tl.multiple_of(tl.load(idx_ptr + row), 32)",
        "offs = tl.max_contiguous(start + tl.arange(0, B), 16)",
        'cache_modifier=".ca")',
        'eviction_policy="evict_last")',
        "volatile=True)",
        'cache_modifier=".wt")',
    ]
    src = str(v.metadata["source_path"])
    for h, snippet in zip(hs, written, strict=True):
        assert h.ref.stage == "ttir" and h.ref.line is not None
        assert _origin(v, h.ref) == (src, _line_of(v, snippet)), h  # the op was written on that line
        assert h.python is not None and h.python.stage == "python"
        assert h.python.line == _line_of(v, snippet) and snippet in h.python.text
        op = h.ref.text.split(" = ", 1)[1] if h.ref.text.startswith("%") else h.ref.text
        assert op.startswith(h.op + " ")  # the op named is the op quoted
        assert h.value in h.ref.text
    assert "tt.divisibility = dense<32>" in hs[1].ref.text and "tt.contiguity = dense<16>" in hs[2].ref.text
    assert "isVolatile = true" in hs[5].ref.text


def test_argument_divisibility_is_no_hint(hint80: Bundle) -> None:
    """``plain`` does the same reads and writes without hints: no hint, although every pointer argument (and ``n``,
    a multiple of 16) carries the JIT's ``tt.divisibility = 16`` on the ``tt.func`` line."""
    v = hint80.variants["plain"]
    func = next(ln for ln in v.text("ttir").splitlines() if "tt.func public" in ln)
    assert func.count("tt.divisibility = 16") == 4
    assert extract_mech_facts(v).hints == []


def test_per_dimension_hints_on_a_tile(hint80: Bundle) -> None:
    """``tl.max_contiguous(tl.multiple_of(tile, [1, 16]), [1, B])`` on an 8×64 tile of offsets: TTIR prints one value
    per dimension (``dense<[1, 16]>``, ``dense<[1, 64]>``), both on the ``arith.addi`` that makes the tile. The hint's
    own line makes no op: the Python line quoted is the one that computed the tile (the op's location)."""
    v = hint80.variants["tile"]
    hs = extract_mech_facts(v).hints
    assert [(h.kind, h.value, h.op) for h in hs] == [
        ("multiple_of", "[1, 16]", "arith.addi"),
        ("max_contiguous", "[1, 64]", "arith.addi"),
    ]
    line = _line_of(v, "tile = start + tl.arange(0, 8)[:, None] * n + tl.arange(0, B)[None, :]")
    assert _line_of(v, "tile = tl.max_contiguous(tl.multiple_of(tile, [1, 16]), [1, B])") == line + 1
    for h in hs:
        assert h.python is not None and h.python.line == line
        assert "dense<" + h.value + ">" in h.ref.text


# ------------------------------------------------------------------------------------------------ other files


def test_ops_written_in_another_file_quote_no_kernel_line(hint80: Bundle) -> None:
    """``elsewhere`` calls helpers of ``other.py``: the ``tl.assume``, the ``tl.multiple_of`` load, the ``.cg`` load,
    the ``tl.dot``, its ``tl.atomic_add`` with the layout conversion before it and the first fp64 op all resolve to
    ``other.py``. Their line numbers exist in the kernel's file too, so only the file name tells them apart: no
    Python line is quoted for any of them."""
    v = hint80.variants["elsewhere"]
    f = extract_mech_facts(v)
    n_kernel = len(v.text("python").splitlines())
    assert [(h.kind, h.value, h.op) for h in f.hints] == [
        ("assume", "", "llvm.intr.assume"),
        ("multiple_of", "16", "tt.load"),
        ("cache_modifier", "cg", "tt.load"),
    ]
    (d,) = f.dots
    (a,) = f.atomics
    (c,) = f.converts
    assert (a.op, a.sem, c.consumers) == ("fadd", "relaxed", ["tt.atomic_rmw"])
    assert f.f64_first is not None and "arith.extf" in f.f64_first.text
    refs: list[tuple[Ref, Ref | None]] = [(h.ref, h.python) for h in f.hints]
    refs += [(d.ttir, d.python), (a.ref, a.python), (c.ref, c.python), (f.f64_first, f.f64_python)]
    for ref, py in refs:
        file, line = _origin(v, ref)
        assert Path(file).name == "other.py" and file != v.metadata["source_path"], ref
        assert 1 <= line <= n_kernel  # a reader ignoring the file name would quote this line of the kernel's file
        assert py is None, (ref, py)


def test_without_a_recorded_source_path_the_saved_source_is_quoted(hint80: Bundle) -> None:
    """A variant whose metadata names no ``source_path`` (a bundle that recorded only the saved ``kernel.py``) still
    quotes the kernel lines: there is no other file name to compare with."""
    v = hint80.variants["hinted"]
    bare = copy.copy(v)
    bare.metadata = {k: x for k, x in v.metadata.items() if k != "source_path"}
    want = [h.python for h in extract_mech_facts(v).hints]
    assert want and all(p is not None for p in want)
    clear_memos()
    assert [h.python for h in extract_mech_facts(bare).hints] == want


# ------------------------------------------------------------------------------------------------ release spellings

# The same three accesses of ``hinted`` as Triton 3.9.0 and 3.6.0 print them in TTIR (copied from the sm80 compile).
# 3.9 prints both fields of ``cachePolicy`` on every hinted access, the defaults (``none``, ``evict_normal``) included.
ACCESSES_39 = """\
    %x_6 = tt.load %x_5, %x_3 {cachePolicy = #tt.cache_policy<cache_modifier = ca, eviction_policy = evict_normal>} : tensor<64x!tt.ptr<f32>>
    %w_7 = tt.load %w {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_last>} : !tt.ptr<f32>
    tt.store %4, %9 {cachePolicy = #tt.cache_policy<cache_modifier = wt, eviction_policy = evict_normal>} : tensor<64x!tt.ptr<f32>>
"""  # noqa: E501
ACCESSES_36 = """\
    %x_6 = tt.load %x_5, %x_3 cacheModifier = ca : tensor<64x!tt.ptr<f32>>
    %w_7 = tt.load %w evictionPolicy = evict_last : !tt.ptr<f32>
    tt.store %4, %9 cacheModifier = wt : tensor<64x!tt.ptr<f32>>
"""


@pytest.mark.parametrize("text", [ACCESSES_39, ACCESSES_36], ids=["3.9", "3.6"])
def test_default_cache_fields_are_no_hints(text: str) -> None:
    """Only what the kernel set is a hint: ``cache_modifier = none`` and ``eviction_policy = evict_normal`` in 3.9's
    ``cachePolicy`` are the defaults; both releases' spellings give the same facts, with no Python line (no
    ``loc``)."""
    from irdiff.diagnose.mechfacts import _hints

    hs = _hints(text, "", "")
    assert [(h.kind, h.value, h.op, h.ref.line, h.python) for h in hs] == [
        ("cache_modifier", "ca", "tt.load", 1, None),
        ("eviction_policy", "evict_last", "tt.load", 2, None),
        ("cache_modifier", "wt", "tt.store", 3, None),
    ]


# ------------------------------------------------------------------------------------------------ fp64


def test_fp64_scalar_tensor_and_control_flow(hint80: Bundle) -> None:
    """``acc64`` (``eps: tl.float64``): eight TTIR ops make fp64 values: the scalar ``eps * eps``, its halving inside
    the ``scf.if``, the widening and the add in the loop, the splat of the scale and the multiply, the reduction's
    scalar combine ``arith.addf`` and the scalar truncation to fp32; four of them are tensors. Not counted: the
    constants, the ``scf.if``/``scf.for``/``scf.yield`` that carry fp64 values without computing, the combine
    region's ``tt.reduce.return``, the ``tt.func`` line, the int32 offsets the kernel names ``f64``. The first is quoted with its Python line; ``eps`` is the
    fp64 argument (the fp32 pointers are not)."""
    v = hint80.variants["acc64"]
    f = extract_mech_facts(v)
    ttir = v.text("ttir")
    assert re.search(r"= scf\.if .*-> \(f64\)", ttir) and "tt.reduce.return" in ttir  # what must not be counted
    assert re.search(r"%f64 = tt\.make_range .*: tensor<64xi32>", strip_loc(ttir))  # named f64, typed i32: not counted
    assert (f.f64_ttir, f.f64_tensor) == (8, 4)
    assert f.f64_first is not None and strip_loc(ttir.splitlines()[(f.f64_first.line or 0) - 1]).strip() == (
        "%e2 = arith.mulf %eps, %eps : f64"
    )
    assert f.f64_python is not None and f.f64_python.text == "e2 = eps * eps"
    assert f.f64_python.line == _line_of(v, "e2 = eps * eps")
    assert f.f64_args == ["eps"]


def test_warp_specialized_loop(compile_suite, loop100: Bundle) -> None:  # type: ignore[no-untyped-def]
    """``ws``: a TMA K loop under ``tl.range(..., warp_specialize=True)`` on sm100 is split into warp partitions
    (TTGIR ``ttg.warp_specialize``); the same K loop without it (``diag_loop.py`` ``dot3``) is not."""
    ws = compile_suite(SUITE, ["ws"], "sm100").variants["ws"]
    assert "ttg.warp_specialize" in ws.text("ttgir")
    assert extract_mech_facts(ws).warp_specialized is True
    assert "ttg.warp_specialize" not in loop100.variants["dot3"].text("ttgir")
    assert extract_mech_facts(loop100.variants["dot3"]).warp_specialized is False


# ------------------------------------------------------------------------------------------------ compiler messages


def test_warning_source_line_is_not_a_message() -> None:
    """Python prints the source line of the ``warnings.warn`` call under each warning; written on one line, it holds
    the message's own words (``deprecated``) and still is no message of its own."""
    log = "\n".join(
        [
            "/x/triton/language/core.py:2114: DeprecationWarning: tl.foo is deprecated, use tl.bar",
            '  warnings.warn("tl.foo is deprecated, use tl.bar", DeprecationWarning)',
        ]
    )
    (m,) = compiler_messages(log)
    assert (m.line, m.stage) == (1, "compile") and m.text.endswith(
        "DeprecationWarning: tl.foo is deprecated, use tl.bar"
    )
