"""SASS normalization details (``irdiff/normalize/sass.py``) on texts in the forms Triton's tools print: ``get_sass``
(``triton/tools/disasm.py``: ``ctrl<TAB>instr``, ``Function:NAME``, ``LBBn:``), cuobjdump's raw form (addresses,
two encoding words per instruction; the control code computed from the second) and nvdisasm's (``.text.NAME:``,
``.L_x_N`` labels). The instructions are those ``cuobjdump -sass`` printed for a Triton 3.9 ``copy_rows`` kernel on
sm_80 (``tests/test_normalize.py`` compares the two forms on a whole compiled kernel). Exact outputs; no compile."""

from __future__ import annotations

import pytest

from irdiff.normalize import NormalizedStage, normalize
from irdiff.normalize.builder import Builder, BulkBuilder
from irdiff.normalize.model import Region
from irdiff.normalize.sass import _sass_ctrl, _sass_raw, normalize_sass

GET_SASS = """\
Function:copy_rows
--:-:-:-:2	IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28];
--:-:0:-:1	S2R R0, SR_TID.X;
--:-:1:-:1	S2UR UR4, SR_CTAID.X;
02:-:-:-:2	USHF.L.U32 UR4, UR4, 0x4, URZ;
--:-:-:-:6	@!P0 EXIT;
--:-:-:-:5	EXIT;
LBB0:
--:-:-:Y:0	BRA LBB0;
--:-:-:Y:0	NOP;"""

CUOBJDUMP = """
	code for sm_80
		Function : copy_rows
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"
        /*0000*/                   IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;           /* 0x00000a00ff017624 */
                                                                                     /* 0x000fe400078e00ff */
        /*0010*/                   S2R R0, SR_TID.X ;                                /* 0x0000000000007919 */
                                                                                     /* 0x000e220000002100 */
        /*0020*/                   S2UR UR4, SR_CTAID.X ;                            /* 0x00000000000479c3 */
                                                                                     /* 0x000e620000002500 */
        /*0080*/                   USHF.L.U32 UR4, UR4, 0x4, URZ ;                   /* 0x0000000404047899 */
                                                                                     /* 0x002fe4000800063f */
        /*0af0*/              @!P0 EXIT ;                                            /* 0x000000000000894d */
                                                                                     /* 0x000fec0003800000 */
        /*0b10*/                   EXIT ;                                            /* 0x000000000000794d */
                                                                                     /* 0x000fea0003800000 */
        /*0b20*/                   BRA 0xb20;                                        /* 0xfffffff000007947 */
                                                                                     /* 0x000fc0000383ffff */
        /*0b30*/                   NOP;                                              /* 0x0000000000007918 */
                                                                                     /* 0x000fc00000000000 */
		..........
"""

LINES = [
    "Function:KERNEL",
    "IMAD.MOV.U32 R0, RZ, RZ, c[0x0][0x28];",  # registers renumbered by first appearance, per class
    "S2R R1, SR_TID.X;",  # special registers whole
    "S2UR UR0, SR_CTAID.X;",
    "USHF.L.U32 UR0, UR0, 0x4, URZ;",  # URZ kept
    "@!P0 EXIT;",
    "EXIT;",
    "LBB0:",
    "BRA LBB0;",
    "NOP;",
]
COLUMNS = ["", "--:-:-:-:2", "--:-:0:-:1", "--:-:1:-:1", "02:-:-:-:2", "--:-:-:-:6", "--:-:-:-:5", "", "--:-:-:Y:0",
           "--:-:-:Y:0"]  # fmt: skip


def _both(text: str, kernel: str | None = "copy_rows") -> NormalizedStage:
    """:func:`normalize`, the bulk builder (called directly: :func:`normalize` would fall back to the reference
    builder if it raised) and the reference builder give one stage; no fallback to raw lines."""
    ns = normalize("sass", text, kernel_name=kernel)
    for make in (Builder, BulkBuilder):
        out = make("sass", text, with_columns=True)
        normalize_sass(out, text.splitlines(), kernel)
        assert out.build() == ns
    assert not ns.fallback
    return ns


def test_get_sass_form() -> None:
    ns = _both(GET_SASS)
    assert ns.lines == LINES and ns.columns == COLUMNS and ns.raw_line == list(range(1, 11))
    assert ns.shapes[1:5] == [
        "IMAD.MOV.U32 R_, RZ, RZ, c[0x0][0x28];",
        "S2R R_, SR_TID.X;",
        "S2UR UR_, SR_CTAID.X;",
        "USHF.L.U32 UR_, UR_, 0x4, URZ;",
    ]
    assert ns.shapes[5] == "@!P_ EXIT;" and ns.shapes[7:9] == ["L_:", "BRA L_;"]
    assert ns.symbols[1:9] == [("R0",), ("R1",), ("UR0",), ("UR0", "UR0"), ("P0",), (), ("LBB0",), ("LBB0",)]
    assert ns.regions == [
        Region(0, 9, "Function:KERNEL", "Function:KERNEL", anchor=True, function=True),
        Region(7, 9, "block", "LBB0 (line 8)", anchor=False, function=False),
    ]


def test_cuobjdump_raw_form_equals_get_sass() -> None:
    """Addresses and encodings dropped, the control code computed from the second word, a ``BRA 0xb20`` target
    made the label ``get_sass`` prints on the target's line; header lines dropped."""
    ns = _both(CUOBJDUMP)
    assert ns.lines == LINES and ns.columns == COLUMNS
    assert ns.raw_line == [3, 5, 7, 9, 11, 13, 15, 17, 17, 19]  # the label is the BRA's own line (its address)
    assert ns.shapes == _both(GET_SASS).shapes and ns.symbols == _both(GET_SASS).symbols
    assert ns.regions == [
        Region(0, 9, "Function:KERNEL", "Function:KERNEL", anchor=True, function=True),
        Region(7, 9, "block", "LBB0 (line 17)", anchor=False, function=False),
    ]
    # Of a fatbin (an executable, a ``.so``), cuobjdump prints its header first: dropped.
    header = (
        "\nFatbin elf code:\n================\narch = sm_80\ncode version = [1,7]\nhost = linux\ncompile_size = 64bit\n"
    )
    fatbin = _both(header + CUOBJDUMP)
    assert fatbin.lines == LINES and fatbin.columns == COLUMNS and fatbin.raw_line == [n + 7 for n in ns.raw_line]
    # Without its encoding words (cut from a listing): no control codes, the same instructions.
    bare = _both("\n".join(ln for ln in CUOBJDUMP.splitlines() if not ln.strip().startswith("/* 0x")))
    assert bare.lines == LINES and bare.columns == [""] * len(LINES)


@pytest.mark.parametrize(
    ("word", "ctrl"),
    [("000fe400078e00ff", "--:-:-:-:2"), ("000e220000002100", "--:-:0:-:1"), ("002fe4000800063f", "02:-:-:-:2"),
     ("000fc0000383ffff", "--:-:-:Y:0"), ("0000a2000c1e1500", "--:0:2:-:1"), ("010fca000000001c", "16:-:-:Y:5")],
)  # fmt: skip
def test_control_code_from_the_encoding(word: str, ctrl: str) -> None:
    """The pairs of one compile: cuobjdump's second word and the control code ``get_sass`` printed for it."""
    assert _sass_ctrl(word) == ctrl


def test_raw_line_parts() -> None:
    assert _sass_raw("        /*0b20*/                   BRA 0xb20;      /* 0xfffffff000007947 */") == (
        "BRA 0xb20",
        "fffffff000007947",
    )
    assert _sass_raw("  /*0010*/   S2R R0, SR_TID.X ;  ") == ("S2R R0, SR_TID.X", None)
    assert _sass_raw("  /*0010*/  ;") == ("", None) and _sass_raw("S2R R0, SR_TID.X ;") is None


# nvdisasm's form: ``.text.NAME:`` headers, ``.L_x_N`` labels (uses quoted as `` `(.L_x_N) ``), a call to an
# address; two functions (a noinline helper after the kernel); a ``//##`` comment dropped; an unknown line kept.
NVDISASM = """\
        .type           copy_rows,@function
        .text.copy_rows:
        /*0000*/                   MOV R20, 32@lo((copy_rows + .L_x_2)) ;
        /*0010*/                   CALL.REL.NOINC 0x40 ;
        /*0020*/              @!P1 BRA `(.L_x_3) ;
.L_x_2:
        //## File "/tmp/k.py", line 7
        /*0030*/                   EXIT ;
.L_x_3:
        /*0040*/                   BRA `(.L_x_2) ;
        .text.helper:
        /*0050*/                   BSSY B1, `(.L_x_2) ;
        .section .nv.info
        /*0060*/                   RET.REL.NODEC R20 0x0 ;
"""


def test_nvdisasm_form_functions_labels_and_addresses() -> None:
    ns = _both(NVDISASM)
    assert ns.lines == [
        ".type           KERNEL,@function",  # a line of no known kind: kept, the kernel's name replaced
        "Function:KERNEL",
        "MOV R0, 32@lo((KERNEL + .L_x_0));",  # a call's return address: the kernel's name replaced
        "CALL.REL.NOINC ADDR0;",  # a code address of a branch-like instruction: renamed by first appearance
        "@!P0 BRA `(.L_x_1);",  # labels renamed by first appearance (.L_x_2 was first, in the MOV)
        ".L_x_0:",
        "EXIT;",
        ".L_x_1:",
        "BRA `(.L_x_0);",
        "Function:helper",
        "BSSY B0, `(.L_x_0);",
        ".section .nv.info",
        "RET.REL.NODEC R0 0x0;",  # RET is not branch-like here: its 0x0 is text; R20 was renamed R0 above
    ]
    assert ns.shapes[3] == "CALL.REL.NOINC A_;" and ns.symbols[3] == ("ADDR0",)
    assert ns.shapes[4] == "@!P_ BRA `(L_);" and ns.symbols[10] == ("B0", ".L_x_0")
    assert ns.regions == [
        Region(1, 8, "Function:KERNEL", "Function:KERNEL", anchor=True, function=True),
        Region(5, 6, "block", ".L_x_2 (line 6)", anchor=False, function=False),
        Region(7, 8, "block", ".L_x_3 (line 9)", anchor=False, function=False),
        Region(9, 12, "Function:helper", "Function:helper", anchor=True, function=True),
    ]


def test_get_sass_call_setup_labels_and_the_kernel_name() -> None:
    """A call's return address (``MOV R20, 32@lo((kernel + .L_x_3))``, as cuobjdump prints it for ``CALL.REL``):
    the kernel's own name is replaced, a longer name holding it is not; ``.L_x_`` and ``LBB`` labels share one
    counter (numbered by first appearance); without a kernel name nothing is replaced."""
    calls = """\
Function:copy_rows
--:-:-:-:1	MOV R20, 32@lo((copy_rows + .L_x_3));
--:-:-:-:1	MOV R21, 32@hi((copy_rows + .L_x_3));
--:-:-:Y:5	CALL.REL.NOINC `(copy_rows_helper);
--:-:-:-:6	@!P0 BRA LBB2;
LBB1:
--:-:-:-:5	EXIT;
LBB2:
--:-:-:-:1	BRA LBB1;"""
    lines = [
        "Function:KERNEL",
        "MOV R0, 32@lo((KERNEL + .L_x_0));",
        "MOV R1, 32@hi((KERNEL + .L_x_0));",
        "CALL.REL.NOINC `(copy_rows_helper);",
        "@!P0 BRA LBB1;",
        "LBB2:",
        "EXIT;",
        "LBB1:",
        "BRA LBB2;",
    ]
    ns = _both(calls)
    assert ns.lines == lines and ns.shapes[1] == "MOV R_, 32@lo((KERNEL + L_));" and ns.symbols[4] == ("P0", "LBB1")
    assert ns.regions == [
        Region(0, 8, "Function:KERNEL", "Function:KERNEL", anchor=True, function=True),
        Region(5, 6, "block", "LBB1 (line 6)", anchor=False, function=False),
        Region(7, 8, "block", "LBB2 (line 8)", anchor=False, function=False),
    ]
    assert _both(calls, None).lines == [ln.replace("KERNEL", "copy_rows") for ln in lines]


def test_raw_form_branch_targets_and_call_addresses() -> None:
    """Two branch targets (one a uniform ``BRA.U``) become ``LBB0``, ``LBB1`` in order of first reference, each
    opening a block on its target's line; call addresses are numbered apart (``ADDR0``, ``ADDR1``)."""
    raw = """\
        /*0000*/                   IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;           /* 0x00000a00ff017624 */
                                                                                     /* 0x000fe400078e00ff */
        /*0010*/              @!UP0 BRA.U 0x40 ;                                     /* 0x0000000109007547 */
                                                                                     /* 0x000fea000b800000 */
        /*0020*/                   CALL.REL.NOINC 0x60 ;                             /* 0x0000003000007944 */
                                                                                     /* 0x000fea0003c00000 */
        /*0030*/                   CALL.REL.NOINC 0x70 ;                             /* 0x0000003000007944 */
                                                                                     /* 0x000fea0003c00000 */
        /*0040*/              @!P0 BRA 0x50 ;                                        /* 0x0000000000008947 */
                                                                                     /* 0x000fea0003800000 */
        /*0050*/                   EXIT ;                                            /* 0x000000000000794d */
                                                                                     /* 0x000fea0003800000 */
"""
    ns = _both(raw)
    assert ns.lines == [
        "IMAD.MOV.U32 R0, RZ, RZ, c[0x0][0x28];",
        "@!UP0 BRA.U LBB0;",
        "CALL.REL.NOINC ADDR0;",
        "CALL.REL.NOINC ADDR1;",
        "LBB0:",
        "@!P0 BRA LBB1;",
        "LBB1:",
        "EXIT;",
    ]
    assert ns.raw_line == [1, 3, 5, 7, 9, 9, 11, 11] and ns.columns is not None and ns.columns[4] == ""
    assert ns.regions == [
        Region(4, 5, "block", "LBB0 (line 9)", anchor=False, function=False),
        Region(6, 7, "block", "LBB1 (line 11)", anchor=False, function=False),
    ]


def test_cut_listings() -> None:
    """Texts cut from a listing (``irdiff show`` of a range): one starting at an instruction's second encoding
    word (no instruction to give it to: dropped), one ending at a label (a block of one line), a function header
    alone (a function of one line)."""
    tail = _both("\n".join(CUOBJDUMP.splitlines()[5:]))
    assert tail.lines == ["S2R R0, SR_TID.X;", *LINES[3:]] and tail.columns == COLUMNS[2:] and tail.raw_line[0] == 2
    head = _both("\n".join(GET_SASS.splitlines()[:8]))
    assert head.lines == LINES[:8] and head.regions == [
        Region(0, 7, "Function:KERNEL", "Function:KERNEL", anchor=True, function=True),
        Region(7, 7, "block", "LBB0 (line 8)", anchor=False, function=False),
    ]
    alone = _both("Function:copy_rows\n")
    assert alone.lines == ["Function:KERNEL"] and alone.regions == [
        Region(0, 0, "Function:KERNEL", "Function:KERNEL", anchor=True, function=True)
    ]


def test_raw_lines_with_doubled_semicolons_extra_words_and_bare_addresses() -> None:
    """Raw-form lines cuobjdump does not print but a cut or hand-joined listing can hold: ``NOP ; ;`` and ``EXIT ;;``
    end in one ``;`` with no blank before it, a second lone encoding word after an instruction's control code is
    ignored (no fallback to raw lines), and an address alone is an empty line."""
    raw = "\n".join(
        [
            "        /*0000*/                   NOP ; ;                                  /* 0x0000000000007918 */",
            "                                                                            /* 0x000fc00000000000 */",
            "                                                                            /* 0x000fc00000000000 */",
            "        /*0010*/                   EXIT ;;                                  /* 0x000000000000794d */",
            "        /*0020*/",
            "        /*0030*/                   EXIT ;",
        ]
    )
    ns = _both(raw, None)
    assert ns.lines == ["NOP;", "EXIT;", "", "EXIT;"] and ns.raw_line == [1, 4, 5, 6]
    assert ns.columns == ["--:-:-:Y:0", "", "", ""]


def test_label_after_dropped_lines_starts_its_block_there() -> None:
    """A ``get_sass`` text with a blank line, a ``//`` comment and another blank line before ``LBB0:`` (all dropped):
    the block region starts at the label's own index, as without them."""
    ns = _both(GET_SASS.replace("LBB0:", "\n// a comment\n\nLBB0:"))
    assert ns.lines == LINES and ns.raw_line == [1, 2, 3, 4, 5, 6, 7, 11, 12, 13]
    assert ns.regions == [
        Region(0, 9, "Function:KERNEL", "Function:KERNEL", anchor=True, function=True),
        Region(7, 9, "block", "LBB0 (line 11)", anchor=False, function=False),
    ]
