"""pygments lexers for the stages Triton prints: TTIR/TTGIR (MLIR with Triton dialects), PTX, SASS and LLIR.

Registered through the ``pygments.lexers`` entry point (see ``pyproject.toml``), so ``pygmentize -l ttgir FILE``
works once irdiff is installed:

- ``TTIRLexer`` (``ttir``): ``make_ttir`` output (``tt.``, ``scf.``, ``arith.`` ops).
- ``TTGIRLexer`` (``ttgir``): ``make_ttgir`` output (adds ``ttg.``/``ttng.`` ops and layout attributes).
- ``TritonPtxLexer`` (``tptx``, ``triton-ptx``): PTX from ``make_ptx`` (pygments' ``PtxLexer``, gaps fixed).
- ``SassLexer`` (``cuda-sass``, ``nvsass``): ``cuobjdump -sass``, ``nvdisasm`` and Triton's ``get_sass`` output.
- ``LlirLexer`` (``tllir``, not registered): LLVM IR from ``make_llir`` (``LlvmLexer`` plus newer keywords).

Every lexer round-trips its input exactly (the tokens join back into the text) and produces no ``Error`` token on
the IR of the built-in suites under Triton 3.6 and 3.9 (``tests/test_lexers.py``). Token types follow pygments'
usual meaning: ops and opcodes are ``Keyword``, types and opcode modifiers ``Keyword.Type``, SSA values and
registers ``Name.Variable``, layout aliases (``#blocked1``) ``Name.Constant``, dialect attributes
(``#ttg.blocked``) ``Name.Builtin``, predicate guards (``@P0``, ``@!%p1``) ``Name.Decorator``, source locations
(``loc(...)``) and SASS control codes ``Comment``.
"""

from __future__ import annotations

import re

from pygments.lexer import RegexLexer, bygroups, include, inherit, words
from pygments.lexers.asm import LlvmLexer
from pygments.lexers.ptx import PtxLexer
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Whitespace,
)

__all__ = ["TTIRLexer", "TTGIRLexer", "TritonPtxLexer", "SassLexer", "LlirLexer", "lexer_for_stage"]

# --------------------------------------------------------------------------------------------------------------
# MLIR (TTIR / TTGIR)
# --------------------------------------------------------------------------------------------------------------

# Example: "%a_ptrs_60", "%c-1_i32", "%acc_118:17" (the ":17" is lexed apart), "%acc_113#0", "%arg3", "%0"
_MLIR_SSA = r"%[\w$.\-]+(?:#\d+)?"
# Example: "tt.load", "ttg.async_copy_global_to_local", "llvm.intr.assume", "triton_gpu.convert_layout" (3.2)
_MLIR_DOTTED = r"[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)+"
# Example: "i32", "f16", "bf16", "f8E4M3FN", "index", "tf32"
_MLIR_SCALAR = r"(?:[su]?i\d+|bf16|tf32|f\d+(?:E\d+M\d+(?:FNUZ|FN)?)?|index|none)"
# Example: "128x32x" in "tensor<128x32xf16, ...>", "3x128x32x" in "!ttg.memdesc<3x128x32xf16, ...>"
_MLIR_SHAPE = r"(?:\d+|\?)(?:x(?:\d+|\?))*x(?=[A-Za-z!?])"

_MLIR_KEYWORDS = (
    "module",
    "attributes",
    "public",
    "private",
    "nested",
    "iter_args",
    "to",
    "step",
    "mask",
    "other",
    "tokens",
    "token",
    "cacheModifier",
    "evictionPolicy",
    "isVolatile",
    "dense",
    "array",
    "affine_map",
    "mutable",
    "unit",
    "offset",
    "strides",
    "do",
    "else",
    "then",
)
_MLIR_PREDICATES = (
    "eq",
    "ne",
    "slt",
    "sle",
    "sgt",
    "sge",
    "ult",
    "ule",
    "ugt",
    "uge",
    "oeq",
    "one",
    "olt",
    "ole",
    "ogt",
    "oge",
    "ueq",
    "une",
    "ord",
    "uno",
    "x",
    "y",
    "z",
)


class TTIRLexer(RegexLexer):
    """Triton IR (``make_ttir`` output): MLIR with the ``tt``, ``scf``, ``arith``, ``math``, ``cf`` dialects.

    Reads Triton 3.2–3.9 output, with or without ``loc(...)`` locations, and irdiff's normalized form.
    """

    name = "Triton TTIR"
    aliases = ["ttir"]
    filenames = ["*.ttir", "ttir.mlir"]
    mimetypes = ["text/x-triton-ttir"]
    url = "https://triton-lang.org"
    version_added = "irdiff"
    flags = re.MULTILINE

    tokens = {
        "root": [
            include("whitespace"),
            # Before the generic '#' rules: "#loc12 = loc(...)" definitions read as location noise.
            (r"(#loc\d*)(\s*)(=)", bygroups(Comment, Whitespace, Punctuation)),
            (r"\bloc\(", Comment, "loc"),
            include("value"),
        ],
        "whitespace": [
            (r"[ \t\r\f\v]+", Whitespace),
            (r"\n", Whitespace),
            (r"//[^\n]*", Comment.Single),
        ],
        # A source location: balanced parentheses, strings inside, all of it one comment colour.
        "loc": [
            (r"\(", Comment, "#push"),
            (r"\)", Comment, "#pop"),
            (r'"(?:\\.|[^"\\\n])*"', Comment),
            (r'[^()"\n]+', Comment),
            (r"\n", Whitespace),
            (r'"', Comment),
        ],
        "value": [
            (_MLIR_SSA, Name.Variable),
            # Example: "^bb0(%arg5: i32)"
            (r"\^[\w$.\-]+", Name.Label),
            # Example: "@matmul_kernel", "@\"quoted\""
            (r'@(?:[\w$.\-]+|"(?:\\.|[^"\\\n])*")', Name.Function),
            # Example: "#ttg.blocked<{...}>", "#ttg.slice<...>", "#triton_gpu.blocked" (3.2)
            (r"#" + _MLIR_DOTTED, Name.Builtin),
            # Example: "#blocked1", "#mma", "#shared", "#smem", "#loc"
            (r"#[\w$.\-]+", Name.Constant),
            # Example: "!tt.ptr<f16>", "!ttg.memdesc<...>", "!ttg.async.token"
            (r"!" + _MLIR_DOTTED, Keyword.Type),
            (r"![\w$.\-]+", Keyword.Type),
            (r'"(?:\\.|[^"\\\n])*"', String),
            # Example: "tensor<128x32xf16, #blocked>" (the "128x32x" part)
            # Example: "128x32xf16" (shape, then element type)
            (r"(" + _MLIR_SHAPE + r")(" + _MLIR_SCALAR + r")\b", bygroups(Number, Keyword.Type)),
            (_MLIR_SHAPE, Number),
            # Example: "128x32" in "!ttg.memdesc<128x16xf16, #shared, #smem, mutable, 128x32>"
            (r"\b\d+(?:x\d+)+\b", Number),
            (words(("tensor", "vector", "memref", "complex", "tuple"), prefix=r"\b", suffix=r"\b"), Keyword.Type),
            (r"(?<![\w$.%#!])" + _MLIR_SCALAR + r"\b", Keyword.Type),
            # Attribute names: "tt.divisibility = 16", "sizePerThread = [1, 8]", '"ttg.num-warps" = 4' is a string.
            (r"(" + _MLIR_DOTTED + r")(?=\s*=(?!=))", Name.Attribute),
            (r"[A-Za-z_][\w$]*(?=\s*=(?!=))", Name.Attribute),
            # Ops: "tt.load", "scf.for", "arith.muli", "ttng.warp_group_dot", "llvm.intr.assume"
            (_MLIR_DOTTED, Keyword),
            (words(("true", "false"), prefix=r"\b", suffix=r"\b"), Keyword.Constant),
            (words(_MLIR_KEYWORDS, prefix=r"\b", suffix=r"\b"), Keyword),
            (words(_MLIR_PREDICATES, prefix=r"\b", suffix=r"\b"), Name.Builtin),
            (r"[A-Za-z_][\w$]*", Name),
            # Numbers: "0.000000e+00", "-1", "0x7FC00000", "1.5"
            (r"0x[0-9A-Fa-f]+", Number.Hex),
            (r"[-+]?\d+\.\d*(?:[eE][-+]?\d+)?", Number.Float),
            (r"[-+]?\d+", Number.Integer),
            (r"->", Operator),
            (r"[-+*/]", Operator),
            (r"[=:,;()\[\]{}<>?|]", Punctuation),
        ],
    }


class TTGIRLexer(TTIRLexer):
    """TritonGPU IR (``make_ttgir`` output): TTIR plus the ``ttg``/``ttng`` dialects and layout attributes.

    Layout aliases (``#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], ...}>``) lex as ``Name.Constant`` at the
    use site and ``Name.Builtin`` + ``Name.Attribute`` in the definition.
    """

    name = "Triton TTGIR"
    aliases = ["ttgir"]
    filenames = ["*.ttgir", "ttgir.mlir"]
    mimetypes = ["text/x-triton-ttgir"]


# --------------------------------------------------------------------------------------------------------------
# PTX
# --------------------------------------------------------------------------------------------------------------

# Every PTX instruction name from PtxLexer's list plus the ones it lacks (cp.async.* is "cp", tcgen05 is new).
_PTX_OPCODES = (
    "abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind bmsk bra brev brkpt brx call "
    "clusterlaunchcontrol clz cnot copysign cos cp createpolicy cvt cvta discard div dp2a dp4a elect ex2 exit fence "
    "fma fns getctarank griddepcontrol isspacep istypep ld ldmatrix ldu lg2 lop3 mad mad24 madc mapa match max "
    "mbarrier membar min mma mov movmatrix mul mul24 multimem nanosleep neg not or pmevent popc prefetch prefetchu "
    "prmt rcp red redux rem ret rsqrt sad selp set setmaxnreg setp shf shfl shl shr sin slct sqrt st stackrestore "
    "stacksave stmatrix sub subc suld suq sured sust szext tanh tcgen05 tensormap testp tex tld4 trap txq vabsdiff "
    "vabsdiff2 vabsdiff4 vadd vadd2 vadd4 vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2 vmin4 vote vset vset2 vset4 "
    "vshl vshr vsub vsub2 vsub4 wgmma wmma xor"
).split()
_PTX_DIRECTIVES = (
    ".address_size .alias .align .branchtargets .callprototype .calltargets .common .const .entry .explicitcluster "
    ".extern .file .func .global .globl .loc .local .maxclusterrank .maxnctapersm .maxnreg .maxntid .minnctapersm "
    ".noreturn .param .pragma .reg .reqnctapercluster .reqntid .section .shared .sreg .target .tex .version .visible "
    ".weak .ptr"
).split()
# Fundamental types, vector widths and packed types (PtxLexer lacks .v2/.v4/.v8, .b128, .bf16, .e4m3 ...).
_PTX_TYPES = (
    ".s8 .s16 .s32 .s64 .u8 .u16 .u32 .u64 .f16 .f16x2 .f32 .f64 .b8 .b16 .b32 .b64 .b128 .pred .bf16 .bf16x2 "
    ".tf32 .e4m3 .e5m2 .e4m3x2 .e5m2x2 .e2m1 .e2m1x2 .e3m2 .e2m3 .ue8m0 .u16x2 .s16x2 .v2 .v4 .v8"
).split()


class TritonPtxLexer(PtxLexer):
    """PTX as Triton's ``make_ptx`` prints it: pygments' ``PtxLexer`` with its gaps fixed.

    Fixes: a dotted instruction (``cp.async.cg.shared.global``, ``ld.global.v4.b32``,
    ``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32``, ``fence.proxy.async.shared::cta``) is one ``Keyword``
    token; keywords end at a word boundary (an identifier ``bar_x`` is not the opcode ``bar``); ``.v4``, ``.b128``,
    ``.bf16`` and the fp8 types are types; predicate guards ``@%p1``/``@!%p1`` and float immediates
    (``0f3F800000``) lex; a ``//`` comment on the last line without a newline is a comment.
    """

    name = "PTX (Triton)"
    aliases = ["tptx", "triton-ptx"]
    filenames: list[str] = []
    mimetypes: list[str] = []
    url = "https://docs.nvidia.com/cuda/parallel-thread-execution/"
    version_added = "irdiff"
    flags = re.MULTILINE

    tokens = {
        "root": [
            include("whitespace"),
            # Example: "@%p1 ld.global.b16 { %rs1 }, [ %rd1 + 0 ];", "@!%p3 bra $L__BB0_4;"
            (r"@!?%[\w$]+", Name.Decorator),
            # Float immediates: "0f3F800000" (f32), "0d3FF0000000000000" (f64)
            (r"0[fF][0-9A-Fa-f]{8}\b|0[dD][0-9A-Fa-f]{16}\b", Number.Float),
            (r"[-+]?0[xX][0-9A-Fa-f]+U?\b", Number.Hex),
            (r",", Punctuation),
            (r"[-+*/]", Operator),
            # Before PtxLexer's label rule, which would read "mbarrier.try_wait.parity.shared:" as a label.
            include("keyword"),
            inherit,
        ],
        "whitespace": [
            (r"\s+", Whitespace),
            (r"//[^\n]*", Comment.Single),
            (r"/\*(?:.|\n)*?\*/", Comment.Multiline),
        ],
        "keyword": [
            # Example: "cp.async.cg.shared.global", "mbarrier.try_wait.parity.shared::cta.b64", "bar.sync"
            (
                r"(?<![\w.$%])" + words(_PTX_OPCODES, suffix=r"\b").get() + r"(?:\.[A-Za-z0-9_]+(?:::[A-Za-z0-9_]+)*)*",
                Keyword,
            ),
            (words(_PTX_TYPES, suffix=r"\b"), Keyword.Type),
            (words(_PTX_DIRECTIVES, suffix=r"\b"), Keyword.Reserved),
        ],
    }


# --------------------------------------------------------------------------------------------------------------
# SASS
# --------------------------------------------------------------------------------------------------------------

# Example: "--:-:1:-:1", "01:-:-:Y:b" (Triton's get_sass: wait mask, read barrier, write barrier, yield, stall)
_SASS_CONTROL = r"[-\w]{2}:[-\w]:[-\w]:[-\w]:[0-9A-Fa-f]+"
# Example: "@P0", "@!P1", "@PT", "@!UP2", "@!UPT"
_SASS_GUARD = r"@!?U?P(?:T|\d+)"


class SassLexer(RegexLexer):
    """NVIDIA SASS in the three forms irdiff meets: Triton's ``get_sass`` (``ctrl<TAB>instr``), raw
    ``cuobjdump -sass`` (``/*0070*/`` addresses, ``/* 0x... */`` encodings) and ``nvdisasm`` (``//##`` source
    lines), plus irdiff's normalized form (control codes moved to a side column).

    Opcodes are ``Keyword`` and their modifiers (``.E.BYPASS.LTC128B.128``) ``Keyword.Type``; registers ``R12``,
    ``RZ``, ``UR4``, ``P0``, ``UP1``, ``PT``, ``SR_TID.X`` are ``Name.Variable``/``Name.Builtin``; predicate guards
    ``@!P0`` are ``Name.Decorator``; control codes, addresses and encodings are comments.
    """

    name = "NVIDIA SASS"
    # Not "sass": pygments' built-in CSS Sass lexer owns that alias (built-ins are looked up before plugins).
    aliases = ["cuda-sass", "nvsass"]
    filenames = ["sass.sass", "*.nvsass"]
    mimetypes = ["text/x-sass-nvidia"]
    url = "https://docs.nvidia.com/cuda/cuda-binary-utilities/"
    version_added = "irdiff"
    flags = re.MULTILINE

    tokens = {
        "root": [
            (r"[ \t\r\f\v]+", Whitespace),
            (r"\n", Whitespace),
            include("comments"),
            # Example: "Function:matmul_kernel" (get_sass), "Function : matmul_kernel" (cuobjdump)
            (r"(Function)(\s*:\s*)(\S+)", bygroups(Keyword.Reserved, Punctuation, Name.Function)),
            # Example: "code for sm_90a"
            (r"(code for)(\s+)(sm_\w+)", bygroups(Comment.Preproc, Whitespace, Name.Builtin)),
            # Example: '.headerflags @"EF_CUDA_SM90 ..."', ".target sm_90a", ".section .text.kernel"
            (r"\.[a-z_]+(?=[ \t])", Keyword.Reserved, "directive"),
            (r"^" + _SASS_CONTROL, Comment.Special),
            # Example: "LBB0:", ".L_x_3:", "$L__BB0_2:" (a label on its own line)
            (r"([.$]?[A-Za-z_][\w.$]*)(:)(?=[ \t]*(?://[^\n]*)?$)", bygroups(Name.Label, Punctuation)),
            (_SASS_GUARD, Name.Decorator),
            (r"[{}]", Punctuation),
            # Example: "LDGSTS.E.BYPASS.LTC128B.128", "HGMMA.64x128x16.F32", "IMAD.MOV.U32"
            (r"([A-Z][A-Z0-9_]*)((?:\.[A-Za-z0-9_]+)*)", bygroups(Keyword, Keyword.Type), "operands"),
        ],
        "comments": [
            # Example: "/*0070*/" (address), "/* 0x000fe40000000f00 */" (encoding)
            (r"/\*(?:.|\n)*?\*/", Comment.Multiline),
            # Example: '//## File "/home/user/kernel.py", line 13 inlined at ...'
            (r"//[^\n]*", Comment.Single),
        ],
        "directive": [
            (r"[ \t]+", Whitespace),
            (r'"(?:\\.|[^"\\\n])*"', String),
            (r"[@,]", Punctuation),
            (r"\d+\b", Number.Integer),
            (r"[^\s\"@,]+", Name.Builtin),
            (r"\n", Whitespace, "#pop"),
        ],
        "operands": [
            (r";", Punctuation, "#pop"),
            (r"\n", Whitespace, "#pop"),
            (r"[ \t]+", Whitespace),
            include("comments"),
            # Registers with modifiers: "R6.reuse", "R48.64", "UR4", "RZ", "URZ", "P0", "!PT", "UP0", "UPT"
            (
                r"(!?)(U?R(?:Z|\d+)|U?P(?:T|\d+)|SRZ)((?:\.[A-Za-z0-9_]+)*)\b",
                bygroups(Operator, Name.Variable, Keyword.Type),
            ),
            # Special registers, whole, whatever their case: "SR_CTAID.X", "SR_TID.X", "SR_LANEID", "SR_CgaCtaId"
            (r"SR_\w+(?:\.\w+)*", Name.Builtin),
            # Constant bank and descriptors: "c[0x0][0x28]", "desc[UR18][R4.64]", "gdesc[UR8].tnspB"
            (r"\b(?:c|desc|gdesc|tmem|idesc)(?=\[)", Name.Builtin),
            (r"0x[0-9A-Fa-f]+", Number.Hex),
            (r"[-+]?(?:\d+\.\d*(?:[eE][-+]?\d+)?|INF|QNAN|NAN)\b", Number.Float),
            (r"\d+", Number.Integer),
            # Branch targets: "`(.L_x_3)", "LBB0"
            (r"`\(([^)\n]*)\)", Name.Label),
            (r"[.$]?L[\w.$]*", Name.Label),
            (r"\.[A-Za-z0-9_]+", Keyword.Type),
            (r"[A-Za-z_][\w]*", Name),
            (r"[-+|~!]", Operator),
            (r"[,\[\]{}()]", Punctuation),
        ],
    }

    def analyse_text(text: str) -> float:  # type: ignore[misc,override]
        """A SASS listing starts with ``Function:`` or ``code for sm_`` and has ``R<n>`` registers."""
        if re.search(r"^\s*(?:Function\s*:|code for sm_)", text, re.MULTILINE):
            return 0.8
        return 0.0


# --------------------------------------------------------------------------------------------------------------
# LLIR
# --------------------------------------------------------------------------------------------------------------


class LlirLexer(LlvmLexer):
    """LLVM IR from Triton's ``make_llir``: pygments' ``LlvmLexer`` plus a word rule for the keywords it lacks.

    LLVM 19–22 added flags such as ``disjoint`` (``or disjoint i32``), ``nneg`` (``zext nneg``),
    ``captures(none)`` and ``ptx_kernel``; the stock lexer gives each letter of them an ``Error`` token.
    """

    name = "LLVM IR (Triton)"
    aliases = ["tllir"]
    filenames: list[str] = []
    mimetypes: list[str] = []
    version_added = "irdiff"

    tokens = {
        "root": [
            inherit,
            (r"[A-Za-z_][\w.]*", Keyword),
            # Example: "spFlags: DISPFlagDefinition | DISPFlagOptimized"
            (r"\|", Operator),
        ],
    }


# irdiff's lexers by every alias they answer to (a stage names its lexer by alias: irdiff.stages.Stage.lexer).
_LEXERS_BY_ALIAS: dict[str, type[RegexLexer]] = {
    alias: cls for cls in (TTIRLexer, TTGIRLexer, TritonPtxLexer, SassLexer, LlirLexer) for alias in cls.aliases
}


def lexer_for_stage(stage: str) -> RegexLexer | None:
    """A fresh lexer for an irdiff stage name (``ttir``, ``ttgir``, ``llir``, ``ptx``, ``sass``, ``python``).

    Returns None for stages without a lexer. ``python`` uses pygments' own ``PythonLexer``.
    """
    from irdiff import stages

    st = stages.get(stage)
    alias = st.lexer if st is not None else None
    if alias == "python":
        from pygments.lexers.python import PythonLexer

        return PythonLexer(stripnl=False, ensurenl=False)
    cls = _LEXERS_BY_ALIAS.get(alias) if alias else None
    return cls(stripnl=False, ensurenl=False) if cls else None
