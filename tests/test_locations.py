"""Source locations per stage (``irdiff/normalize/locations.py``) on the forms Triton prints: nvdisasm's ``//##``
line info (Triton 3.9, sm86), PTX ``.loc``/``.file`` with inlining, MLIR location aliases (call sites, fused and
named locations), LLVM debug metadata. Live compiles are checked in ``tests/test_html.py``
(``test_source_map_*``); these pin the details those cannot reach."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from irdiff.normalize.locations import source_map, stages_with_locations

# nvdisasm -g of matmul sm86 (tests/golden/lexers/cuda-sass/nvdisasm-sm86-triton39.txt) plus an inlined frame.
SASS = """\
//--------------------- .text.matmul_kernel_unannotated --------------------------
\t.section\t.text.matmul_kernel_unannotated,"ax",@progbits
.text.matmul_kernel_unannotated:
\t//## File "/work/main/irdiff/suites/matmul.py", line 91
        /*13a0*/               @P0 BRA `(.L_x_0) ;

        /*1cc0*/                   UIADD3 UR7, UR17, UR7, URZ ;
\t//## File "/site/triton/language/standard.py", line 40 inlined at "/work/main/irdiff/suites/matmul.py", line 37
        /*1cd0*/                   IMAD R1, R2, R3, RZ ;
        // a comment
\t//## File "/site/triton/language/standard.py", line 41
        /*1ce0*/                   MOV R1, R2 ;
Function : other
        /*0000*/                   EXIT ;
\t//## File "/elsewhere/matmul.py", line 12
        /*0010*/                   NOP ;
Function:k2
        /*0000*/                   EXIT ;
\t//## File "/work/main/irdiff/suites/matmul.py", line 1
        /*0010*/                   NOP ;
"""


def test_sass_line_info() -> None:
    # An instruction inlined from another file maps to the call in ours (the ``inlined at`` frame); a file of the
    # same name elsewhere counts (a bundle from another machine); ``Function:`` starts over (line 18 maps nothing).
    assert source_map("sass", SASS, "/work/main/irdiff/suites/matmul.py") == {5: 91, 7: 91, 9: 37, 16: 12, 20: 1}


def test_python_and_unknown_stages() -> None:
    assert source_map("python", "a\nb\n\nc", "/k.py") == {1: 1, 2: 2, 3: 3, 4: 4}
    assert source_map("nope", "a", "/k.py") == {} and source_map("ptx", "", "/k.py") == {}
    assert {"python", "ttir", "ttgir", "llir", "ptx", "sass"} <= set(stages_with_locations())


PTX = """\
\t.file\t1 "/src/k.py"
\t.file\t2 "/site/triton/language/standard.py"
\tmov.u32 \t%r0, 0;
\t.loc\t1 36 24
\tadd.s32 \t%r1, %r2, 1;
$L__BB0_1:
\t// comment
\t{
\t.loc\t2 43 17, function_name $L__info_string0, inlined_at 1 37 14
\tmul.lo.s32 \t%r3, %r1, 2;
\t.loc\t2 50 1
\tret;
\t.loc\t1 38 1
\t}
\t@@DWARF .b8 1
\tst.global.b32 \t[%rd1], %r3;
\t.section\t.debug_info
\t.loc\t1 39 1
\tmov.u32 \t%r9, 9;
"""


def test_ptx_locations() -> None:
    # Before any .loc nothing maps; a .loc of another file without an inlining frame in ours maps nothing; labels,
    # comments, braces and DWARF bytes are not code; nothing after the first .section is read.
    assert source_map("ptx", PTX, "/src/k.py") == {5: 36, 10: 37, 16: 38}
    assert source_map("ptx", PTX, "/other/dir/k.py") == {5: 36, 10: 37, 16: 38}  # matched by file name
    assert source_map("ptx", PTX, "/src/j.py") == {}
    assert source_map("ptx", PTX, "") == {}


MLIR = """\
#loc = loc("/src/k.py":99:0)
module {
  %0 = arith.addi %a, %b : i32 loc(#loc3)
  %1 = tt.dot %x, %y, %z : tensor<4xf32> loc(#loc4)
  %2 = arith.muli %a, %b : i32 loc(fused[#loc5, #loc1])
  %3 = tt.call @f() {note = "loc(#loc1)"} : () -> i32 loc(#loc6)
  %4 = arith.subi %a, %b : i32 loc(#loc9)
  %5 = arith.addf %x, %y : f32 myloc(#loc1)
  %6 = arith.addf %x, %y : f32 loc(#loc1
  %7 = arith.addf %x, %y : f32 loc(loc("/src/k.py":70:2))
  %8 = arith.addf %x, %y : f32 loc("/src/a\\"b.py":71:2)
  %9 = arith.addf %x, %y : f32 loc(#loc7)
  %10 = arith.addf %x, %y : f32 loc(#loc5) loc(#loc1)
}
#loc1 = loc("/src/k.py":64:14)
#loc2 = loc("/src/k.py":119:4)
#loc3 = loc(callsite(#loc1 at #loc2))
#loc4 = loc("acc"(#loc3))
#loc5 = loc("/site/triton/language/standard.py":40:1)
#loc6 = loc(callsite(#loc5 at #loc2))
#loc7 = loc(callsite(#loc5 at #loc8))
#loc8 = loc(unknown)
"""


def test_mlir_locations() -> None:
    assert source_map("ttgir", MLIR, "/src/k.py") == {3: 64, 4: 64, 5: 64, 6: 119, 10: 70, 13: 64}
    assert source_map("ttir", MLIR.replace("/src/k.py", '/src/a\\"b.py'), '/src/a"b.py')[11] == 71
    assert source_map("ttgir", MLIR, "/src/other.py") == {}


def test_mlir_location_cycles_end() -> None:
    text = "  %0 = arith.addi %a, %b : i32 loc(#loc1)\n#loc1 = loc(#loc2)\n#loc2 = loc(#loc1)\n"
    assert source_map("ttgir", text, "/src/k.py") == {}
    deep = "".join(f'#loc{i} = loc("n"(#loc{i + 1}))\n' for i in range(1, 80)) + '#loc80 = loc("/src/k.py":5:1)\n'
    assert source_map("ttgir", "  %0 = arith.addi %a, %b : i32 loc(#loc1)\n" + deep, "/src/k.py") == {}
    shallow = "".join(f'#loc{i} = loc("n"(#loc{i + 1}))\n' for i in range(1, 20)) + '#loc20 = loc("/src/k.py":5:1)\n'
    assert source_map("ttgir", "  %0 = arith.addi %a, %b : i32 loc(#loc1)\n" + shallow, "/src/k.py") == {1: 5}


LLIR = """\
  %5 = add i32 %3, %4, !dbg !12
  %6 = mul i32 %3, %4, !dbg !15
  %7 = mul i32 %3, %4, !dbg !16
  %8 = mul i32 %3, %4, !dbg !17
  %9 = mul i32 %3, %4, !dbg !99
  %10 = mul i32 %3, %4
!1 = !DIFile(filename: "k.py", directory: "/src")
!2 = !DIFile(filename: "/abs/j.py", directory: "/src")
!3 = !DIFile(filename: "s.py", directory: "")
!4 = distinct !DISubprogram(name: "k", scope: !1, file: !1, line: 99)
!5 = distinct !DISubprogram(name: "j", scope: !2, file: !2, line: 9)
!6 = distinct !DISubprogram(name: "s", scope: !3, line: 9)
!13 = distinct !DILexicalBlockFile(scope: !4, discriminator: 0)
!12 = !DILocation(line: 36, column: 11, scope: !13, inlinedAt: !14)
!14 = !DILocation(line: 117, column: 5, scope: !4)
!15 = !DILocation(line: 7, column: 5, scope: !5, inlinedAt: !14)
!16 = !DILocation(line: 8, column: 5, scope: !6)
!17 = !DILocation(line: x, column: 5, scope: !4)
"""


def test_llir_locations() -> None:
    assert source_map("llir", LLIR, "/src/k.py") == {1: 36, 2: 117}
    assert source_map("llir", LLIR, "/abs/j.py") == {2: 7}
    assert source_map("llir", LLIR, "s.py") == {3: 8}
    assert source_map("llir", LLIR, "/src/j.py") == {2: 7}  # same file name


@pytest.mark.parametrize("stage", ["ttir", "llir", "ptx", "sass"])
def test_no_locations_map_nothing(stage: str) -> None:
    assert source_map(stage, "  add r1, r2\n  mul r3, r4\n", "/src/k.py") == {}


def _chain(first: str, hops: int) -> str:
    """An op whose location is ``first`` (naming ``#loc1``), then ``hops`` aliases each naming the next, then the
    file location: nesting ``hops`` + 1 or 2 levels deep."""
    defs = "".join(f"#loc{i} = loc(#loc{i + 1})\n" for i in range(1, hops + 1))
    return f'  %0 = arith.addi %a, %b : i32 loc({first})\n{defs}#loc{hops + 1} = loc("/src/k.py":5:1)\n'


@pytest.mark.parametrize(
    ("first", "deepest"),
    [
        ("#loc1", 63),  # every alias one level: the file location read at depth 64, the limit
        ('"n"(#loc1)', 62),  # a named location, a call site, a fused location, a nested loc(...): two levels
        ("callsite(#loc1 at #loc999)", 62),
        ("fused[#loc1, #loc999]", 62),
        ("loc(#loc1)", 62),
    ],
)
def test_mlir_location_depth_limit(first: str, deepest: int) -> None:
    """Locations nest at most 64 levels (a cycle or a hostile bundle ends there): exactly at the limit still maps."""
    assert source_map("ttgir", _chain(first, deepest), "/src/k.py") == {1: 5}
    assert source_map("ttgir", _chain(first, deepest + 1), "/src/k.py") == {}


def test_mlir_last_top_level_loc_only() -> None:
    head = '#loc1 = loc("/src/k.py":64:14)\n'
    lines = [
        'loc("/src/k.py":3:1)',  # a location at the very start of a line
        "  %0 = arith.addf %x, %y : f32 {n = myloc(1)} loc(#loc1)",  # a name ending in loc( is skipped, not the end
        '  %1 = arith.addf %x, %y : f32 {n = f_loc("/src/k.py":72:1)}',  # only part of a name: no location
        '  %2 = arith.addf %x, %y : f32 {n = #loc("/src/k.py":73:1)}',
    ]
    assert source_map("ttgir", head + "\n".join(lines), "/src/k.py") == {2: 3, 3: 64}


def _llir_chain(hops: int) -> str:
    """A value whose location is inlined through ``hops`` call sites in another file, the last one in ours."""
    defs = [
        '!1 = !DIFile(filename: "k.py", directory: "/src")',
        '!2 = !DIFile(filename: "j.py", directory: "/lib")',
        '!3 = distinct !DISubprogram(name: "k", scope: !1, file: !1, line: 1)',
        '!4 = distinct !DISubprogram(name: "j", scope: !2, file: !2, line: 1)',
    ]
    defs += [
        f"!{100 + k} = !DILocation(line: {k + 1}, column: 1, scope: !4, inlinedAt: !{101 + k})" for k in range(hops)
    ]
    defs.append(f"!{100 + hops} = !DILocation(line: 77, column: 1, scope: !3)")
    return "  %5 = add i32 %3, %4, !dbg !100\n" + "\n".join(defs) + "\n"


def test_llir_inlining_depth_limit_and_odd_records() -> None:
    assert source_map("llir", _llir_chain(63), "/src/k.py") == {1: 77}  # read at depth 63: the last one read
    assert source_map("llir", _llir_chain(64), "/src/k.py") == {}
    text = (
        "  %5 = add i32 %3, %4, !dbg !18\n"
        "  %6 = add i32 %3, %4, !dbg !19\n"
        '!20 = !{!"a metadata line naming", !dbg !19}\n'
        '!1 = !DIFile(filename: "k.py", directory: "/src")\n'
        '!4 = distinct !DISubprogram(name: "k", scope: !1, file: !1, line: 99)\n'
        "!18 = !DILocation(column: 5, scope: !4)\n"  # no line: nothing to point at
        "!19 = !DILocation(line: 12, column: 5, scope: !4)\n"
    )
    assert source_map("llir", text, "/src/k.py") == {2: 12}


def test_llir_lexical_block_in_another_file() -> None:
    """Triton 3.9's LLIR (matmul, sm86) scopes a line inlined from ``triton/language/standard.py`` in a
    ``DILexicalBlockFile`` whose scope is the kernel's subprogram (in the kernel's file) but whose ``file`` is
    standard.py: the line is standard.py's, so the kernel's line is the call site (``inlinedAt``). A scope the text
    does not define (a cut text) maps nothing."""
    text = (
        "  %13 = add i32 %3, 127, !dbg !15\n"
        "  %14 = add i32 %3, 1, !dbg !22\n"
        '!1 = !DIFile(filename: "matmul.py", directory: "/work/src")\n'
        '!4 = distinct !DISubprogram(name: "k", linkageName: "k", scope: !1, file: !1, line: 73, type: !5, '
        "scopeLine: 73, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)\n"
        "!15 = !DILocation(line: 43, column: 13, scope: !16, inlinedAt: !18)\n"
        "!16 = distinct !DILexicalBlockFile(scope: !4, file: !17, discriminator: 0)\n"
        '!17 = !DIFile(filename: "standard.py", directory: "/site/triton/language")\n'
        "!18 = !DILocation(line: 88, column: 27, scope: !4)\n"
        "!22 = !DILocation(line: 91, column: 5, scope: !50)\n"
    )
    assert source_map("llir", text, "/work/src/matmul.py") == {1: 88}
    assert source_map("llir", text, "/site/triton/language/standard.py") == {1: 43}


def test_llir_file_name_with_a_colon() -> None:
    """A kernel file whose name holds a ``:`` (legal on Linux): LLVM prints it quoted in ``DIFile``; the field is
    split at its first ``:`` (the key's), not inside the quoted name."""
    text = (
        "  %5 = add i32 %3, %4, !dbg !12\n"
        '!1 = !DIFile(filename: "run:2.py", directory: "/work/src")\n'
        '!4 = distinct !DISubprogram(name: "k", linkageName: "k", scope: !1, file: !1, line: 3, unit: !0)\n'
        "!12 = !DILocation(line: 36, column: 11, scope: !4)\n"
    )
    assert source_map("llir", text, "/work/src/run:2.py") == {1: 36}
    assert source_map("llir", text, "/work/src/run.py") == {}


def _tool_listing(tool: str, args: list[str], cubin: Path) -> str:
    from irdiff.compile import compat

    r = subprocess.run([compat.tool_path(tool), *args, str(cubin)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_sass_restarts_on_the_real_function_headers(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """Real listings of a real compile (README's add, sm80): ``nvdisasm -gi`` (``//##`` line info, one
    ``//---- .text.add ----`` rule per section) followed by ``cuobjdump -sass`` of the other variant (``\\t\\tFunction :
    add``, no line info). The second function's instructions have no line and must not inherit the last ``//##`` of
    the first (the restart tested ``raw.startswith("Function:")``, Triton's ``get_sass`` spelling only)."""
    b = compile_suite(str(Path(__file__).parent / "suites" / "readme_add.py"), ["plain", "dns"], "sm80")
    plain, dns = b.variants["plain"], b.variants["dns"]
    src = str(plain.metadata["source_path"])
    first, last = plain.metadata["kernel_lines"]
    nvd = _tool_listing("nvdisasm", ["-gi", "-c"], Path(plain.directory) / "kernel.cubin")
    cuo = _tool_listing("cuobjdump", ["-sass"], Path(dns.directory) / "kernel.cubin")
    assert "//## File" in nvd and re.search(r"^\s+Function : \w+$", cuo, re.M)
    alone = source_map("sass", nvd, src)
    instructions = [no for no, ln in enumerate(nvd.splitlines(), 1) if re.match(r"\s+/\*[0-9a-f]{4}\*/", ln)]
    assert set(instructions) <= set(alone) and {first + 1, first + 2, first + 3} <= set(alone.values())
    both = source_map("sass", nvd + cuo, src)
    n = len(nvd.splitlines())
    assert [no for no in both if no > n] == [], "cuobjdump's function has no line info"
    assert {no: ln for no, ln in both.items() if no <= n} == alone
    # nvdisasm's whole listing (every section): the sections after .text (.nv.info, .nv.constant0 …) map nothing.
    full = _tool_listing("nvdisasm", ["-gi"], Path(plain.directory) / "kernel.cubin")
    lines = full.splitlines()
    mapped = source_map("sass", full, src)
    assert mapped and all(re.match(r"\s+/\*[0-9a-f]{4}\*/", lines[no - 1]) or ":" in lines[no - 1] for no in mapped)
    # Triton's own spelling still restarts, whatever precedes it.
    assert source_map("sass", nvd + "Function:add\n--:-:-:Y:4\tEXIT;\n", src) == alone


def test_mlir_fused_location_ending_in_a_named_one() -> None:
    """A fused location whose last member is a named one (``fused[#loc5, "acc"(#loc1)]``: MLIR prints a NameLoc as
    ``"name"(child)``) maps through that name to the file line, whether the fused list is on the op or behind an
    alias; the other member (``standard.py``) is another file. A file name with brackets inside the list does not
    move where the list starts."""
    head = '#loc1 = loc("/src/k.py":64:14)\n#loc5 = loc("/site/triton/language/standard.py":40:1)\n'
    ops = '  %0 = arith.addi %a, %b : i32 loc(fused[#loc5, "acc"(#loc1)])\n  %1 = arith.addi %a, %b : i32 loc(#loc9)\n'
    alias = '#loc9 = loc(fused[#loc5, "acc"(#loc1)])\n'
    assert source_map("ttgir", ops + head + alias, "/src/k.py") == {1: 64, 2: 64}
    # a `[` inside the list (a file name with brackets): the list opens at the first `[`
    odd = '  %0 = arith.addi %a, %b : i32 loc(fused[#loc5, "/src/k[2].py":70:2])\n' + head
    assert source_map("ttgir", odd, "/src/k[2].py") == {1: 70}


def test_mlir_unclosed_nested_location_maps_nothing() -> None:
    """An alias whose nested ``callsite(``/``loc(`` is not closed (a text cut or edited by hand) maps nothing: the
    members are not guessed from the unclosed text."""
    head = '#loc1 = loc("/src/k.py":64:14)\n#loc2 = loc("/src/k.py":119:4)\n'
    op = "  %0 = arith.addi %a, %b : i32 loc(#loc3)\n"
    for cut in ("callsite(#loc1 at #loc2", "loc(#loc1 x"):
        assert source_map("ttgir", op + head + f"#loc3 = loc({cut})\n", "/src/k.py") == {}
    assert source_map("ttgir", op + head + "#loc3 = loc(callsite(#loc1 at #loc2))\n", "/src/k.py") == {1: 64}


def test_mlir_location_read_up_to_its_own_closing_parenthesis() -> None:
    """A location is read up to its own closing ``)``: text right after it (a ``,`` or ``x`` in a cut or hand-edited
    line or alias) is not part of the location, whether the location is the op's own, a nested ``loc(...)`` or a
    ``callsite(...)`` whose last member is a named one (``"n"(#loc1)``, MLIR's NameLoc)."""
    head = '#loc1 = loc("/src/k.py":64:14)\n#loc5 = loc("/site/triton/language/standard.py":40:1)\n'
    op = "  %0 = arith.addi %a, %b : i32 loc(#loc3)\n"
    assert source_map("ttgir", '  %0 = arith.addi %a, %b : i32 loc("acc"(#loc1)),\n' + head, "/src/k.py") == {1: 64}
    assert source_map("ttgir", op + head + '#loc3 = loc(loc("acc"(#loc1))x)\n', "/src/k.py") == {1: 64}
    # the call site's first member is in another file: only the named last member maps
    assert source_map("ttgir", op + head + '#loc3 = loc(callsite(#loc5 at "acc"(#loc1))x)\n', "/src/k.py") == {1: 64}
