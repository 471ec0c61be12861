"""Alignment and diffs of real Triton stages, plus invariants checked with hypothesis."""

from __future__ import annotations

import gzip
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irdiff.align import DiffLine, StageDiff, diff_stage, diff_texts
from irdiff.bundle import Bundle
from irdiff.normalize import normalize

STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")
SUITES = Path(__file__).parent / "suites"


def _diff(bundle: Bundle, stage: str, a: str = "annotated", b: str = "unannotated", **kw: object) -> StageDiff:
    va, vb = bundle.variants[a], bundle.variants[b]
    return diff_texts(stage, va.text(stage), vb.text(stage), kernel_a=va.kernel, kernel_b=vb.kernel, **kw)  # type: ignore[arg-type]


def _check_alignment(d: StageDiff) -> None:
    """Every line of each side appears exactly once, in order; tags agree with the indices; hunks are consistent."""
    assert [r.a for r in d.lines if r.a is not None] == list(range(len(d.a.lines)))
    assert [r.b for r in d.lines if r.b is not None] == list(range(len(d.b.lines)))
    for r in d.lines:
        assert (r.a is None) == (r.tag == "insert") and (r.b is None) == (r.tag == "delete")
        assert r.a_text == (d.a.lines[r.a] if r.a is not None else None)
        assert r.b_text == (d.b.lines[r.b] if r.b is not None else None)
        if r.tag == "equal":
            assert d.a.shapes[r.a] == d.b.shapes[r.b]  # type: ignore[index]
            assert not r.a_spans and not r.b_spans
            assert r.a_text == r.b_text, "an unchanged line reads the same on both sides (joint names)"
        if r.tag == "replace":
            assert r.a_text != r.b_text, "a replaced pair shows a difference"
    for run in _changed_runs(d):
        deleted = {r.a_text for r in run if r.tag == "delete"}
        assert not any(r.b_text in deleted for r in run if r.tag == "insert"), "same text deleted and inserted"
        for spans, text in ((r.a_spans, r.a_text), (r.b_spans, r.b_text)):
            for s in spans:
                assert text is not None and 0 <= s.start < s.end <= len(text)
    assert d.added == sum(r.tag in ("insert", "replace") for r in d.lines)
    assert d.removed == sum(r.tag in ("delete", "replace") for r in d.lines)
    assert d.identical == (not d.hunks)
    for h in d.hunks:
        assert any(r.tag != "equal" for r in h.lines)
        assert h.a_len == sum(r.a is not None for r in h.lines)
        assert h.b_len == sum(r.b is not None for r in h.lines)
        first_a = next((r.a for r in h.lines if r.a is not None), None)
        assert first_a is None or first_a == h.a_start


def _changed_runs(d: StageDiff) -> list[list[DiffLine]]:
    """Maximal runs of consecutive changed rows (what a hunk shows between two unchanged lines)."""
    runs: list[list[DiffLine]] = [[]]
    for r in d.lines:
        if r.tag == "equal":
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append(r)
    return [run for run in runs if run]


# -- zero diff: same kernel, moved file, renamed local -----------------------------------------------------------


@pytest.mark.parametrize("target", ["sm86", "sm90"])
def test_moved_kernel_with_renamed_local_diffs_to_zero(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    a = compile_suite(str(SUITES / "moved_a.py"), ["v"], target).variants["v"]
    b = compile_suite(str(SUITES / "sub" / "moved_b.py"), ["v"], target).variants["v"]
    assert a.error is None and b.error is None
    for stage in STAGES:
        d = diff_texts(stage, a.text(stage), b.text(stage), kernel_a=a.kernel, kernel_b=b.kernel)
        _check_alignment(d)
        assert d.identical, (stage, [(r.a_text, r.b_text) for h in d.hunks for r in h.lines if r.tag != "equal"][:5])
        assert d.hunks == [] and d.added == d.removed == 0
        if stage != "sass":  # the raw texts do differ (locations, line numbers, the renamed local)
            assert not diff_texts(stage, a.text(stage), b.text(stage), raw=True).identical, stage
    # the renamed local is visible in the normalized TTIR, so equality came from the symbol correspondence
    ta = "\n".join(normalize("ttir", a.text("ttir"), a.kernel).lines)
    tb = "\n".join(normalize("ttir", b.text("ttir"), b.kernel).lines)
    assert "%acc." in ta and "%accumulator." in tb and "%accumulator." not in ta


@pytest.mark.parametrize("stage", ["ttir", "ttgir", "ptx"])
def test_moved_kernel_zero_diff_on_triton36_ir(stage: str) -> None:
    data = Path(__file__).parent / "data" / "normalize"
    a = gzip.decompress((data / f"triton36-sm86-moved_a.{stage}.gz").read_bytes()).decode()
    b = gzip.decompress((data / f"triton36-sm86-moved_b.{stage}.gz").read_bytes()).decode()
    assert a != b
    if stage == "ptx":
        assert ".version 8.7" in a  # Triton 3.6's ptxas generation (3.9 prints 8.8)
    d = diff_texts(stage, a, b, kernel_a="moved_kernel", kernel_b="moved_kernel")
    _check_alignment(d)
    assert d.identical
    assert not diff_texts(stage, a, b, raw=True).identical


# -- the seed-000 pair (matmul, sm86): what the TTIR and TTGIR hunks must show -----------------------------------


def _changed(d: StageDiff) -> list[DiffLine]:
    return [r for h in d.hunks for r in h.lines if r.tag != "equal"]


def test_matmul_ttir_shows_runtime_strides(matmul_sm86: Bundle) -> None:
    d = _diff(matmul_sm86, "ttir")
    _check_alignment(d)
    removed = [r.a_text.strip() for r in _changed(d) if r.a_text is not None]
    # a = annotated: three extra runtime i32 stride arguments without divisibility
    for arg in ("%stride_ak.0: i32", "%stride_bn.0: i32", "%stride_cn.0: i32"):
        assert arg in removed, arg
    assert not any(r.b_text is not None and "%stride_ak" in r.b_text for r in d.lines)
    # ... and offsets multiplied by the runtime stride
    assert any(re.search(r"arith\.muli .*%stride_ak\.0|arith\.muli %a_ptrs\.\d+, %a_ptrs\.\d+", t) for t in removed)
    assert any("arith.muli %stride_ak.0, %c32_i32.0" in t for t in removed)
    # the unannotated side folded `tl.assume(stride_ak > 0)`
    assert any(r.b_text is not None and "llvm.intr.assume %true" in r.b_text for r in _changed(d))
    # hunk headers name the function and, inside the K loop, the loop
    assert all(h.header.startswith("tt.func @KERNEL") for h in d.hunks)
    loop_hunks = [h for h in d.hunks if "scf.for (line " in h.header]
    assert loop_hunks
    line = int(re.search(r"scf\.for \(line (\d+)\)", loop_hunks[0].header).group(1))  # type: ignore[union-attr]
    assert "scf.for" in d.a.raw.splitlines()[line - 1]


def test_matmul_ttgir_shows_layout_and_async_copies(matmul_sm86: Bundle) -> None:
    d = _diff(matmul_sm86, "ttgir")
    _check_alignment(d)
    pairs = [r for r in _changed(d) if r.tag == "replace" and "sizePerThread = [1, 1]" in (r.a_text or "")]
    pairs = [r for r in pairs if "sizePerThread = [1, 8]" in (r.b_text or "")]
    assert pairs, "blocked layout [1, 1] (annotated) vs [1, 8] (unannotated) shown as one replaced line"
    r = pairs[0]
    assert r.a_text is not None and r.b_text is not None
    ka = r.a_text.index("sizePerThread = [1, 1]") + len("sizePerThread = [1, ")
    kb = r.b_text.index("sizePerThread = [1, 8]") + len("sizePerThread = [1, ")
    # the spans cover the changed number, not the whole line
    assert any(s.start == ka and s.end == ka + 1 for s in r.a_spans), r.a_spans
    assert any(s.start == kb and s.end == kb + 1 for s in r.b_spans), r.b_spans
    assert sum(s.end - s.start for s in r.b_spans) < len(r.b_text) // 2
    # the async copies exist only on the unannotated side
    inserted = [r.b_text for r in _changed(d) if r.b_text is not None and r.a_text is None]
    assert sum("ttg.async_copy_global_to_local" in t for t in inserted) >= 2
    assert not any("ttg.async_copy_global_to_local" in line for line in d.a.lines)


@pytest.mark.parametrize("stage", STAGES)
def test_matmul_alignment_is_consistent(matmul_sm90: Bundle, stage: str) -> None:
    d = _diff(matmul_sm90, stage, context=2)
    _check_alignment(d)
    assert not d.identical
    back = _diff(matmul_sm90, stage, a="unannotated", b="annotated", context=2)
    assert _mirror_rows(back) == _rows(d)


# -- what a changed line means: joint names, no identical -/+ pairs (README vector add, sm80) -------------------


@pytest.fixture(scope="module")
def add_sm80(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(str(SUITES / "readme_add.py"), ["plain", "dns"], "sm80")


@pytest.mark.parametrize("stage", ["ttir", "ttgir"])
def test_do_not_specialize_changes_one_line(add_sm80: Bundle, stage: str) -> None:
    """`n` loses `tt.divisibility = 16`: that argument is the one changed line. The bound check that uses `n`
    (`%m.0 = tt.splat %n.0`, same text on both sides) is unchanged, not a `-`/`+` pair of identical lines."""
    d = _diff(add_sm80, stage, a="dns", b="plain")
    _check_alignment(d)
    changed = _changed(d)
    assert [(r.tag, r.a_text.strip(), r.b_text.strip()) for r in changed] == [  # type: ignore[union-attr]
        ("replace", "%n.0: i32", "%n.0: i32 {tt.divisibility = 16 : i32}")
    ]
    r = changed[0]
    assert r.b_text is not None and not r.a_spans
    assert [r.b_text[s.start : s.end] for s in r.b_spans] == ["{tt.divisibility = 16 : i32}"]
    splat = [x for x in d.lines if "tt.splat %n.0" in (x.a_text or "")]
    assert splat and all(x.tag == "equal" for x in splat)
    back = _diff(add_sm80, stage, a="plain", b="dns")
    assert _rows(back) == _mirror_rows(d)


def _defined(text: str | None) -> str | None:
    m = re.match(r"\s*(%[\w.$\-]+)(?::\d+)? = ", text or "")
    return m.group(1) if m else None


@pytest.mark.parametrize("stage", ["ttir", "ttgir", "llir"])
def test_unchanged_and_changed_lines_use_one_naming(matmul_sm86: Bundle, stage: str) -> None:
    """Within a hunk a name means one value: a value defined on an unchanged line is not also defined on a changed
    line (before, LLIR context lines kept the left side's `%N` next to `+` lines in the right side's numbering)."""
    d = _diff(matmul_sm86, stage)
    _check_alignment(d)
    checked = 0
    for h in d.hunks:
        context = {n for r in h.lines if r.tag == "equal" for n in [_defined(r.a_text)] if n}
        changed = {n for r in h.lines if r.tag != "equal" for t in (r.a_text, r.b_text) for n in [_defined(t)] if n}
        assert not context & changed, (h.header, sorted(context & changed)[:5])
        checked += bool(context and changed)
    assert checked


@pytest.mark.parametrize("stage", STAGES)
def test_joint_names_rename_each_side_one_to_one(matmul_sm86: Bundle, stage: str) -> None:
    """The diff renames both sides together: per side a bijection of the normalizer's names, structure kept;
    unchanged lines carry the same names on both sides."""
    va, vb = matmul_sm86.variants["annotated"], matmul_sm86.variants["unannotated"]
    na, nb = normalize(stage, va.text(stage), va.kernel), normalize(stage, vb.text(stage), vb.kernel)
    d = diff_stage(na, nb)
    for old, new in ((na, d.a), (nb, d.b)):
        assert new.shapes == old.shapes and new.raw_line == old.raw_line and new.regions == old.regions
        mapping: dict[str, str] = {}
        for xs, ys in zip(old.symbols, new.symbols, strict=True):
            assert len(xs) == len(ys)
            for x, y in zip(xs, ys, strict=True):
                assert mapping.setdefault(x, y) == y
        assert len(set(mapping.values())) == len(mapping), "two values got one name"
    for r in d.lines:
        if r.tag == "equal":
            assert d.a.symbols[r.a] == d.b.symbols[r.b]  # type: ignore[index]


def test_llir_context_keeps_one_numbering() -> None:
    """A value inserted at the top of a function shifts LLVM's `%N` on one side only: after the diff's joint
    renumbering the unchanged lines read the same on both sides, and the inserted value has a name of its own."""
    a = "define void @k(i32 %0) {\n  %2 = add i32 %0, 1\n  %3 = mul i32 %2, 2\n  store i32 %3, ptr null\n  ret void\n}\n"
    b = (
        "define void @k(i32 %0) {\n  %2 = sub i32 %0, 7\n  %3 = add i32 %0, 1\n  %4 = mul i32 %3, 2\n"
        "  store i32 %4, ptr null\n  store i32 %2, ptr null\n  ret void\n}\n"
    )
    d = diff_texts("llir", a, b)
    _check_alignment(d)
    assert [(r.tag, r.b_text) for r in d.lines if r.tag != "equal"] == [
        ("insert", "  %1 = sub i32 %0, 7"),
        ("insert", "  store i32 %1, ptr null"),
    ]
    assert [r.a_text for r in d.lines if r.tag == "equal" and "%" in (r.a_text or "")][1:] == [
        "  %2 = add i32 %0, 1",
        "  %3 = mul i32 %2, 2",
        "  store i32 %3, ptr null",
    ]


def test_engines_agree_on_what_is_equal(matmul_sm86: Bundle) -> None:
    # both sequence matchers give a valid alignment; neither may call a line equal that the other sees differ in
    for engine in ("difflib", "rapidfuzz"):
        d = _diff(matmul_sm86, "ttir", engine=engine)
        _check_alignment(d)
        assert any("%stride_ak.0: i32" in (r.a_text or "") for r in _changed(d))


# -- properties ----------------------------------------------------------------------------------------------


Row = tuple[str, int | None, int | None, tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]


def _rows(d: StageDiff) -> list[Row]:
    return [
        (r.tag, r.a, r.b, tuple((s.start, s.end) for s in r.a_spans), tuple((s.start, s.end) for s in r.b_spans))
        for r in d.lines
    ]


def _mirror_rows(d: StageDiff) -> list[Row]:
    swap = {"delete": "insert", "insert": "delete"}
    return [(swap.get(t, t), b, a, sb, sa) for t, a, b, sa, sb in _rows(d)]


_SSA = re.compile(r"%([A-Za-z_$.\-][\w$.\-]*|\d+)")
_PTX_REG = re.compile(r"%(rd|rs|r|p|f)(\d+)\b")


def _rename_outside_strings(text: str, pattern: re.Pattern[str], repl: object) -> str:
    parts = re.split(r'("(?:[^"\\]|\\.)*")', text)
    return "".join(p if k % 2 else pattern.sub(repl, p) for k, p in enumerate(parts))  # type: ignore[call-overload]


class _Texts(dict[str, str]):
    def __repr__(self) -> str:  # hypothesis prints arguments of failing examples
        return "<matmul sm86 stage texts>"


@pytest.fixture(scope="module")
def real(matmul_sm86: Bundle) -> dict[str, str]:
    texts = _Texts()
    for stage in STAGES:
        texts[stage] = matmul_sm86.variants["annotated"].text(stage)
        texts[stage + "/b"] = matmul_sm86.variants["unannotated"].text(stage)
    return texts


def _slice(text: str, data: st.DataObject, max_lines: int = 400) -> str:
    lines = text.splitlines()
    i = data.draw(st.integers(0, max(0, len(lines) - 1)))
    j = data.draw(st.integers(i, min(len(lines), i + max_lines)))
    return "\n".join(lines[i:j])


_HS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_HS
@given(data=st.data(), stage=st.sampled_from(STAGES + ("python",)), junk=st.text(max_size=200))
def test_diff_with_itself_is_empty(real: dict[str, str], data: st.DataObject, stage: str, junk: str) -> None:
    text = _slice(real.get(stage, real["ttir"]), data) + junk
    d = diff_texts(stage, text, text)
    assert d.identical and d.hunks == [] and all(r.tag == "equal" for r in d.lines)


@_HS
@given(data=st.data(), stage=st.sampled_from(STAGES), context=st.integers(0, 5))
def test_diff_is_a_mirror_image(real: dict[str, str], data: st.DataObject, stage: str, context: int) -> None:
    a = normalize(stage, _slice(real[stage], data), "matmul_kernel_annotated")
    b = normalize(stage, _slice(real[stage + "/b"], data), "matmul_kernel_unannotated")
    ab, ba = diff_stage(a, b, context), diff_stage(b, a, context)
    _check_alignment(ab)
    assert _rows(ab) == _mirror_rows(ba)
    assert (ab.added, ab.removed) == (ba.removed, ba.added)
    assert [(h.a_start, h.a_len, h.b_start, h.b_len) for h in ab.hunks] == [
        (h.b_start, h.b_len, h.a_start, h.a_len) for h in ba.hunks
    ]


@_HS
@given(data=st.data(), stage=st.sampled_from(["ttir", "ttgir", "llir"]), seed=st.integers(0, 2**32 - 1))
def test_consistent_ssa_renaming_changes_nothing(
    real: dict[str, str], data: st.DataObject, stage: str, seed: int
) -> None:
    text = _slice(real[stage], data, max_lines=600)
    rng = random.Random(seed)
    names = sorted(set(_rename_outside_strings_names(text)))
    fresh = [f"v{k}_{rng.randrange(1000)}" for k in range(len(names))]
    rng.shuffle(fresh)
    mapping = dict(zip(names, fresh, strict=True))
    renamed = _rename_outside_strings(text, _SSA, lambda m: "%" + mapping[m.group(1)])
    if stage == "llir":  # block labels are defined without the sigil: "12:" names %12
        renamed = re.sub(
            r"^([\w$.\-]+):", lambda m: mapping.get(m.group(1), m.group(1)) + ":", renamed, flags=re.MULTILINE
        )
    if names:
        assert renamed != text
    d = diff_texts(stage, text, renamed)
    assert d.identical, [(r.a_text, r.b_text) for r in d.lines if r.tag != "equal"][:3]


def _rename_outside_strings_names(text: str) -> list[str]:
    parts = re.split(r'("(?:[^"\\]|\\.)*")', text)
    return [m.group(1) for k, p in enumerate(parts) if k % 2 == 0 for m in _SSA.finditer(p)]


@_HS
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_consistent_register_renaming_changes_nothing(real: dict[str, str], data: st.DataObject, seed: int) -> None:
    text = _slice(real["ptx"], data, max_lines=800)
    rng = random.Random(seed)
    perm: dict[tuple[str, str], str] = {}
    for cls in ("rd", "rs", "r", "p", "f"):
        regs = sorted({m.group(2) for m in _PTX_REG.finditer(text) if m.group(1) == cls}, key=int)
        shuffled = [str(int(x) + 5000) for x in regs]
        rng.shuffle(shuffled)
        perm.update({(cls, x): y for x, y in zip(regs, shuffled, strict=True)})
    renamed = _PTX_REG.sub(lambda m: f"%{m.group(1)}{perm[(m.group(1), m.group(2))]}", text)
    d = diff_texts("ptx", text, renamed)
    assert d.identical


@_HS
@given(data=st.data(), stage=st.sampled_from(STAGES), seed=st.integers(0, 2**32 - 1))
def test_edits_show_up_and_alignment_stays_valid(
    real: dict[str, str], data: st.DataObject, stage: str, seed: int
) -> None:
    a = normalize(stage, _slice(real[stage], data))
    rng = random.Random(seed)
    lines = list(a.raw.splitlines())
    if not lines:
        return
    k = rng.randrange(len(lines))
    new_line = "    %zz_new = arith.addi %zz_x, %zz_y : i32 // edit"
    edited = lines[:k] + [new_line] + lines[k:]
    b = normalize(stage, "\n".join(edited))
    d = diff_stage(a, b)
    _check_alignment(d)
    ba = diff_stage(b, a)
    assert _rows(d) == _mirror_rows(ba)
    if len(b.lines) > len(a.lines):
        assert not d.identical and d.added >= 1


@settings(max_examples=200, deadline=None)
@given(a=st.text(max_size=300), b=st.text(max_size=300), stage=st.sampled_from(STAGES + ("python",)))
def test_arbitrary_text_diffs(a: str, b: str, stage: str) -> None:
    d = diff_texts(stage, a, b)
    _check_alignment(d)
    assert _rows(d) == _mirror_rows(diff_texts(stage, b, a))


def test_python_parameters_that_gain_an_annotation_pair_up() -> None:
    a = "def k(\n    a_ptr: tl.pointer_type,\n    M: int,\n    BLOCK: tl.constexpr,\n):\n"
    b = "def k(\n    a_ptr,\n    M,\n    BLOCK: tl.constexpr,\n):\n"
    d = diff_texts("python", a, b)
    rows = [ln for h in d.hunks for ln in h.lines if ln.tag != "equal"]
    assert [ln.tag for ln in rows] == ["replace", "replace"]
    assert [(ln.a_text or "")[s.start : s.end] for ln in rows for s in ln.a_spans] == [": tl.pointer_type", ": int"]


def _shape_similarity(stage: str, x: str, y: str) -> float:
    """2 × matched / total characters of the two lines' normalized shapes (the aligner's measure, by difflib)."""
    import difflib

    sx, sy = normalize(stage, x + "\n").shapes[0], normalize(stage, y + "\n").shapes[0]
    return difflib.SequenceMatcher(a=sx, b=sy, autojunk=False).ratio()


@pytest.mark.parametrize(
    ("x", "y", "paired"),
    [
        ("value = first_term + second", "value = other_term * third", True),  # about 0.64 alike
        ("y = tl.load(x_ptr + offs, mask=m)", "y = tl.load(z_ptr + idx, other=0)", True),  # about 0.70
        ("acc = tl.dot(a, b, acc)", "out = tl.sum(v, axis=0)", False),  # about 0.48
    ],
)
def test_lines_pair_from_half_similarity(x: str, y: str, paired: bool) -> None:
    """A changed line pairs with its replacement (one ``replace`` row, the change shown within the line) from half
    of the characters alike (``align._SIMILAR``): lines 0.5–0.8 alike pair, a line below 0.5 is a deletion plus an
    insertion; in either order."""
    r = _shape_similarity("python", x, y)
    assert (0.5 <= r < 0.8) if paired else (r < 0.5), r  # the premise: these lines sit on either side of 0.5
    for a, b in ((x, y), (y, x)):
        d = diff_texts("python", f"def k():\n    {a}\n    return\n", f"def k():\n    {b}\n    return\n")
        tags = [ln.tag for h in d.hunks for ln in h.lines if ln.tag != "equal"]
        assert sorted(tags) == (["replace"] if paired else ["delete", "insert"]), (a, b, tags)
