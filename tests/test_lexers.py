"""Lexers for TTIR/TTGIR/PTX/SASS/LLIR: golden token files, real IR from Triton 3.9 and 3.6, random input.

Golden files live in ``tests/golden/lexers/<alias>/<name>.txt`` (``---input---`` then ``---tokens---``, as in
pygments' own ``tests/snippets``). The alias is looked up through pygments, so these tests also prove that the
``pygments.lexers`` entry points are installed. Rewrite them with ``pytest tests/test_lexers.py --update-goldens``
and review the diff: goldens freeze behaviour, good or bad.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.lexers.ptx import PtxLexer
from pygments.token import Error, Keyword, Name, _TokenType

from irdiff.bundle import Bundle, load_bundle
from irdiff.lexers import LlirLexer, SassLexer, TritonPtxLexer, TTGIRLexer, TTIRLexer, lexer_for_stage

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).parent / "golden" / "lexers"
GOLDEN_FILES = sorted(GOLDEN.glob("*/*.txt"))
LEXERS: list[type[Lexer]] = [TTIRLexer, TTGIRLexer, TritonPtxLexer, SassLexer, LlirLexer]
STAGES = ["ttir", "ttgir", "llir", "ptx", "sass", "python"]


def tokens(lexer: Lexer, text: str) -> list[tuple[_TokenType, str]]:
    return [(t, v) for t, v in lexer.get_tokens(text) if v]


def format_tokens(toks: list[tuple[_TokenType, str]]) -> str:
    return "".join(f"{v!r:<40} {str(t)}\n" for t, v in toks)


def read_golden(path: Path) -> tuple[str, str]:
    text = path.read_text()
    head, sep = "---input---\n", "\n---tokens---\n"
    assert text.startswith(head) and sep in text, f"{path}: expected ---input--- and ---tokens--- sections"
    body = text[len(head) :]
    i = body.index(sep)
    return body[:i], body[i + len(sep) :]


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=[f"{p.parent.name}/{p.name}" for p in GOLDEN_FILES])
def test_golden_tokens(path: Path, update_goldens: bool) -> None:
    src, expected = read_golden(path)
    lexer = get_lexer_by_name(path.parent.name, stripnl=False, ensurenl=False)
    assert type(lexer).__module__ == "irdiff.lexers", f"alias {path.parent.name!r} resolves to {type(lexer)}"
    toks = tokens(lexer, src)
    assert "".join(v for _, v in toks) == src, f"{path}: tokens do not join back into the input"
    got = format_tokens(toks)
    if update_goldens:
        path.write_text(f"---input---\n{src}\n---tokens---\n{got}")
        return
    assert got == expected, (
        f"{path.relative_to(ROOT)}: tokens changed; if intended run "
        f"`.venv/bin/python -m pytest tests/test_lexers.py --update-goldens` and review the diff"
    )


def test_goldens_have_no_error_tokens() -> None:
    for path in GOLDEN_FILES:
        src, _ = read_golden(path)
        lexer = get_lexer_by_name(path.parent.name, stripnl=False, ensurenl=False)
        bad = [v for t, v in tokens(lexer, src) if t in Error]
        assert not bad, f"{path.name}: Error tokens {bad[:10]}"


@pytest.fixture(scope="session")
def matmul_sm86_triton36(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    """The matmul pair for sm86 compiled by Triton 3.6 (``.venv36``), in a subprocess: irdiff is not installed there."""
    py = ROOT / ".venv36" / "bin" / "python"
    if not py.exists():
        pytest.skip("no .venv36 (Triton 3.6) next to the checkout")
    out = tmp_path_factory.mktemp("triton36") / "matmul-sm86"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRITON_DEFAULT_FP_FUSION": "1"}
    cmd = [str(py), "-m", "irdiff", "compile", "matmul", "--target", "sm86", "--save", str(out)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return load_bundle(out)


@pytest.fixture(params=["triton39-sm86", "triton39-sm90", "triton36-sm86"])
def real_bundle(request: pytest.FixtureRequest) -> Bundle:
    name = {"triton39-sm86": "matmul_sm86", "triton39-sm90": "matmul_sm90", "triton36-sm86": "matmul_sm86_triton36"}
    return request.getfixturevalue(name[request.param])  # type: ignore[no-any-return]


def test_real_ir_lexes_without_errors(real_bundle: Bundle) -> None:
    """Every stage of both variants round-trips and has no Error token (3.9 sm86/sm90 and 3.6 sm86)."""
    assert real_bundle.triton_version
    checked = 0
    for v in real_bundle.variants.values():
        assert not v.error, v.error
        for stage in STAGES:
            text = v.text(stage)
            assert text, f"{v.name}: no {stage} text"
            lexer = lexer_for_stage(stage)
            assert lexer is not None
            toks = tokens(lexer, text)
            assert "".join(val for _, val in toks) == text, f"{v.name} {stage}: tokens do not join back"
            bad = sorted({val for t, val in toks if t in Error})
            assert not bad, f"{real_bundle.triton_version} {v.name} {stage}: Error tokens {bad[:20]}"
            checked += 1
    assert checked == 2 * len(STAGES)


def test_real_ir_key_tokens(matmul_sm86: Bundle) -> None:
    """The tokens a reader looks for come out whole and typed (cp.async, layouts, LDGSTS, predicates)."""
    u = matmul_sm86.variants["unannotated"]
    ptx = tokens(TritonPtxLexer(), u.text("ptx"))
    assert (Keyword, "cp.async.cg.shared.global") in ptx
    assert any(t is Keyword and v.startswith("mma.sync.aligned.m16n8k16") for t, v in ptx)
    assert any(t is Name.Decorator and v.startswith("@%p") for t, v in ptx)
    ttgir = tokens(TTGIRLexer(), u.text("ttgir"))
    assert (Name.Builtin, "#ttg.blocked") in ttgir
    assert (Name.Attribute, "sizePerThread") in ttgir
    assert (Keyword, "ttg.async_copy_global_to_local") in ttgir
    assert (Name.Constant, "#blocked1") in ttgir
    sass = tokens(SassLexer(), u.text("sass"))
    assert (Keyword, "LDGSTS") in sass
    assert (Keyword.Type, ".E.BYPASS.LTC128B.128") in sass
    a_ptx = tokens(TritonPtxLexer(), matmul_sm86.variants["annotated"].text("ptx"))
    assert (Keyword, "ld.global.b16") in a_ptx


def test_ptx_fixes_over_stock_lexer() -> None:
    line = "\tcp.async.cg.shared.global [ %r74 + 0 ], [ %rd10 + 0 ], 0x10, %r75;\n\tadd.s32 %r1, %bar_x, 1;\n"
    stock = tokens(PtxLexer(), line)
    ours = tokens(TritonPtxLexer(), line)
    assert (Keyword, "cp") in stock  # the gap: the opcode is split at the first dot
    assert (Keyword, "cp.async.cg.shared.global") in ours
    assert (Name.Variable, "%bar_x") in ours
    assert not any(t in Error for t, _ in ours)
    assert (Keyword.Type, ".b128") in tokens(TritonPtxLexer(), ".reg .b128 %rq<4>;\n")
    assert (Keyword.Type, ".bf16") in tokens(TritonPtxLexer(), ".reg .bf16 %h<4>;\n")
    assert (Keyword, "barx") not in tokens(TritonPtxLexer(), "barx:\n")


@pytest.mark.parametrize(
    "reg", ["SR_CgaCtaId", "SR_CTAID.X", "SR_TID.Y", "SR_LANEID", "SR_ClusterCtaId", "SR_SWINHI", "SR_CLOCKLO"]
)
def test_sass_special_registers_stay_whole(reg: str) -> None:
    """Mixed-case special registers (``SR_CgaCtaId`` on sm90+) are one token, not ``SR_C`` + ``gaCtaId``."""
    toks = tokens(SassLexer(), f"        /*0010*/                   S2UR UR4, {reg} ;\n")
    assert (Name.Builtin, reg) in toks
    assert [v for t, v in toks if t in Name] == ["UR4", reg]


def test_llir_lexer_fills_llvmlexer_gaps(matmul_sm86: Bundle) -> None:
    from pygments.lexers.asm import LlvmLexer

    text = matmul_sm86.variants["annotated"].text("llir")
    assert any(t in Error for t, _ in tokens(LlvmLexer(), text)), (
        "stock LlvmLexer no longer has the gap: drop LlirLexer"
    )
    assert not any(t in Error for t, _ in tokens(LlirLexer(), text))


@pytest.mark.parametrize("cls", LEXERS, ids=[c.__name__ for c in LEXERS])
def test_lexer_metadata(cls: type[Lexer]) -> None:
    assert cls.name, f"{cls.__name__}: set `name`"
    assert cls.aliases, f"{cls.__name__}: set `aliases`"
    assert cls.__doc__, f"{cls.__name__}: write a docstring"
    if cls is not LlirLexer:  # LlirLexer is internal (no entry point)
        for alias in cls.aliases:
            assert type(get_lexer_by_name(alias)) is cls, f"alias {alias!r} does not resolve to {cls.__name__}"


def test_sass_alias_is_not_ours() -> None:
    """pygments' CSS Sass lexer owns ``sass`` (built-ins win over plugins); ours is ``cuda-sass``/``nvsass``."""
    assert type(get_lexer_by_name("sass")).__module__ != "irdiff.lexers"
    assert type(get_lexer_by_name("cuda-sass")) is SassLexer


def test_lexer_for_stage() -> None:
    assert isinstance(lexer_for_stage("ttgir"), TTGIRLexer)
    assert isinstance(lexer_for_stage("ptx"), TritonPtxLexer)
    assert isinstance(lexer_for_stage("llir"), LlirLexer)
    assert lexer_for_stage("python") is not None
    assert lexer_for_stage("cubin") is None


@pytest.mark.parametrize("alias", ["ttir", "ttgir", "tptx", "cuda-sass"])
def test_pygmentize_command(alias: str, matmul_sm86: Bundle) -> None:
    """``pygmentize -l ALIAS FILE`` works through the entry point (``python -m pygments`` is pygmentize)."""
    stage = {"ttir": "ttir", "ttgir": "ttgir", "tptx": "ptx", "cuda-sass": "sass"}[alias]
    path = matmul_sm86.variants["unannotated"].path(stage)
    r = subprocess.run(
        [sys.executable, "-m", "pygments", "-l", alias, "-f", "raw", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "Token.Keyword" in r.stdout
    assert "Token.Error" not in r.stdout


ASCII = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=400)
IR_PIECES = st.lists(
    st.sampled_from(
        [
            "%a_1",
            "#blocked1",
            "tt.load",
            "loc(",
            ")",
            '"',
            "<",
            ">",
            "{",
            "}",
            "\n",
            " ",
            "\t",
            "--:-:1:-:1",
            "@!P0",
            "LDGSTS.E.128",
            "R12.64",
            "/*",
            "*/",
            "//",
            "cp.async.cg",
            "@%p1",
            "0f3F800000",
            "128x32xf16",
            "!tt.ptr",
            "`(",
            ";",
            ".",
            ":",
            "!",
            "\\",
        ]
    ),
    max_size=60,
).map("".join)


@pytest.mark.parametrize("cls", LEXERS, ids=[c.__name__ for c in LEXERS])
@settings(max_examples=150, deadline=None)
@given(text=st.one_of(ASCII, IR_PIECES, st.text(max_size=200)))
def test_random_input_round_trips(cls: type[Lexer], text: str) -> None:
    """Any text lexes without raising and the tokens join back into it exactly (pygments' random-input test)."""
    lexer = cls(stripnl=False, ensurenl=False)
    # get_tokens_unprocessed: get_tokens would first turn "\r" into "\n" (pygments' input preprocessing).
    assert "".join(v for _, _, v in lexer.get_tokens_unprocessed(text)) == text
