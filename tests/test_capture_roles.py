"""Captures of two programs whose kernels differ as torch.compile ``dynamic=False`` vs ``dynamic=True`` does: a
runtime ``i64`` row stride ``ks0`` is inserted, ``eps`` becomes the parameter ``in_ptr2`` and the weight pointer
moves from ``in_ptr2`` to ``in_ptr3``. The kernels are hand-written in TorchInductor's style
(``tests/scripts/inductor_like``), compiled by their launches under ``irdiff capture --target sm90`` (no GPU: the
launch compiles, then is skipped). Checks that the explanation pairs parameters by role, names the new stride as
the root, blames nothing on ``eps``, names a different block-size choice as its own root, and calls a change outside
the kernels no difference."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from irdiff.bundle import load_bundle
from irdiff.collections_diff.compare import compare_collections, render_overview
from irdiff.diagnose import Diagnosis
from irdiff.diagnose.params import describe_role, pair_params, param_roles
from irdiff.render import spec_rows

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "tests" / "scripts" / "inductor_like" / "program.py"
KERNEL = "triton_red_fused_add_mean_mul_rsqrt_0"


def _capture(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "irdiff", "capture", "--target", "sm90", "-o", str(out), "--", str(PROGRAM), *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=dict(os.environ))


@pytest.fixture(scope="module")
def caps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("roles")
    # The static kernel file with a change outside the kernel (a list above it: every line below shifts).
    moved = root / "moved"
    moved.mkdir()
    src = (PROGRAM.parent / "rmsnorm_static.py").read_text()
    (moved / "rmsnorm_static.py").write_text(src.replace("\n\n@triton.jit", "\nSIZES = [1, 2, 3]\n\n\n@triton.jit", 1))
    runs = {
        "static": ("--dynamic", "0"),
        "dynamic": ("--dynamic", "1"),
        "dynamic1024": ("--dynamic", "1", "--r0-block", "1024"),
        "static-moved": ("--dynamic", "0", "--kernels", str(moved)),
        "both": ("--dynamic", "1", "--both"),
        "both1024": ("--dynamic", "1", "--r0-block", "1024", "--both"),
        "ln-static": ("--kernel", "layernorm", "--dynamic", "0"),
        "ln-dynamic": ("--kernel", "layernorm", "--dynamic", "1"),
    }
    for name, args in runs.items():
        r = _capture(root / name, *args)
        assert r.returncode == 0, r.stderr
        assert "kernel launches are skipped" in r.stderr and r.stderr.count("launches are skipped") == 1
        assert "program: steps done" in r.stdout
    return root


def _diagnosis(caps: Path, a: str, b: str) -> tuple[Diagnosis, object]:
    cd = compare_collections(caps / a, caps / b)
    assert len(cd.results) == 1
    c = cd.results[0].comparison
    assert c is not None and c.diagnosis is not None
    return c.diagnosis, c


def test_parameters_pair_by_role(caps: Path) -> None:
    vs = load_bundle(caps / "static").variants[KERNEL]
    vd = load_bundle(caps / "dynamic").variants[KERNEL]
    pairing = pair_params(vs.specialization, vs.text("ttir"), vd.specialization, vd.text("ttir"))
    by_a = {p.a.name: (p.b.name if p.b else None, p.how) for p in pairing.pairs if p.a}
    assert by_a["in_ptr2"] == ("in_ptr3", "renamed")  # the weight: the same address in every program
    assert by_a["in_ptr0"] == ("in_ptr0", "same") and by_a["out_ptr1"] == ("out_ptr1", "same")
    assert by_a["R0_BLOCK"] == ("R0_BLOCK", "config")
    assert sorted(r.name for r in pairing.only("b")) == ["in_ptr2", "ks0"]
    roles = {r.name: r for r in param_roles(vd.specialization, vd.text("ttir"))}
    assert {"stride", "row"} <= roles["ks0"].features
    assert "the row stride" in describe_role(roles["ks0"]) and "i64" in describe_role(roles["ks0"])
    assert roles["in_ptr2"].features == frozenset({"value"})  # eps: arithmetic only
    assert "weight or bias" in describe_role(roles["in_ptr3"])
    # The same pairing seen from the other side.
    back = pair_params(vd.specialization, vd.text("ttir"), vs.specialization, vs.text("ttir"))
    assert {p.a.name: p.b.name for p in back.pairs if p.a and p.b}["in_ptr3"] == "in_ptr2"


@pytest.mark.parametrize("order", [("static", "dynamic"), ("dynamic", "static")])
def test_root_is_the_new_runtime_stride_and_eps_is_blamed_for_nothing(caps: Path, order: tuple[str, str]) -> None:
    a, b = order
    d, c = _diagnosis(caps, a, b)
    by_id = {f.id: f for f in d.findings}
    root = by_id["spec.param-added"]
    dyn = next(v for v in (d.a, d.b) if v.startswith("dynamic"))
    assert root.title.startswith(f"`ks0` is new in `{dyn}`") and "row stride" in root.title and "i64" in root.title
    assert root.predicts == dyn and not root.causes
    assert by_id["ttir.i64-index-math"].causes[0] == "spec.param-added"
    assert "spec.param-added" in by_id["coalesce.contiguity"].causes
    # eps (`in_ptr2` of the dynamic kernel) is blamed for nothing; the weight pointers are not compared with it.
    assert "spec.type-changed" not in by_id
    for f in d.findings:
        if f.id.startswith("source.") and f.severity == "info":
            # The source diff pairs the signature by role: eps is the dynamic kernel's own new parameter.
            assert "in_ptr2" not in f.title or f"parameter `in_ptr2` only in `{dyn}`" in f.title, f.title
            continue
        assert "in_ptr2" not in f.title, f.title
        if f.id != "spec.param-added":
            assert "in_ptr2" not in f.explanation and "in_ptr2" not in (f.remedy or ""), f.id
    assert "used only in arithmetic" in root.explanation  # named for what it is, in the root's explanation
    # Stage 0 shows the paired parameters side by side.
    labels = [r.name for r in spec_rows(c)]  # type: ignore[arg-type]
    assert ("in_ptr2 → in_ptr3" if a == "static" else "in_ptr3 → in_ptr2") in labels
    assert "config.changed" not in by_id  # same block sizes


@pytest.mark.parametrize("order", [("ln-static", "ln-dynamic"), ("ln-dynamic", "ln-static")])
def test_fp64_eps_is_named_by_role_and_explains_no_count(caps: Path, order: tuple[str, str]) -> None:
    """A second kernel of the kind (LayerNorm): the dynamic kernel takes eps as a runtime fp64 scalar `in_ptr1`, so
    the static kernel's `in_ptr1` (the weight pointer) is the dynamic one's `in_ptr2`. The fp64 finding is true (one
    f64→f32 conversion) but names eps as the dynamic kernel's own new parameter, is caused by the new parameters,
    and causes nothing: two instructions cannot explain a SASS count that doubles."""
    d, _ = _diagnosis(caps, *order)
    by_id = {f.id: f for f in d.findings}
    dyn = next(v for v in (d.a, d.b) if v.startswith("ln-dynamic"))
    static = d.b if dyn == d.a else d.a
    assert by_id["spec.param-added"].title.startswith(f"`ks0` is new in `{dyn}`")
    fp = by_id["precision.fp64"]
    assert fp.severity == "minor" and fp.predicts == dyn and fp.causes == ["spec.param-added"]
    assert f"`in_ptr1` (a parameter only `{dyn}` has)" in fp.explanation
    assert not any(e.variant == static for e in fp.evidence)  # no counterpart by name: static's in_ptr1 is a pointer
    assert all("precision.fp64" not in f.causes for f in d.findings)
    sass = by_id["sass.instructions"]
    assert sass.instructions is not None and fp.instructions is not None and 4 * fp.instructions < sass.instructions
    # The source diff pairs the signature by role too: no "`in_ptr1` is annotated … in static" (the weight pointer).
    assert not any("`in_ptr1` is annotated" in f.title for f in d.findings)
    assert any(f"parameter `in_ptr1` only in `{dyn}`" in f.title for f in d.findings if f.id.startswith("source."))


def test_block_size_choice_is_its_own_root(caps: Path) -> None:
    d, _ = _diagnosis(caps, "dynamic", "dynamic1024")
    by_id = {f.id: f for f in d.findings}
    cfg = by_id["config.changed"]
    assert "R0_BLOCK" in cfg.title and "2048→1024" in cfg.title and not cfg.causes
    assert "spec.param-added" not in by_id  # same signature
    assert "config.changed" in by_id["spec.constexpr-changed"].causes

    def roots(fid: str, seen: set[str] | None = None) -> set[str]:
        seen = seen or set()
        f = by_id[fid]
        if not f.causes:
            return {fid}
        out: set[str] = set()
        for x in f.causes:
            if x not in seen:
                seen.add(x)
                out |= roots(x, seen)
        return out

    for f in d.findings:
        if f.id != "time.measured":
            assert roots(f.id) == {"config.changed"}, (f.id, f.causes)
    # Signature and configuration differ at once: two separate roots.
    d2, _ = _diagnosis(caps, "static", "dynamic1024")
    ids2 = {f.id: f for f in d2.findings}
    assert not ids2["config.changed"].causes and not ids2["spec.param-added"].causes
    assert "R0_BLOCK" in ids2["config.changed"].title and "ks0" in ids2["spec.param-added"].title


def test_change_outside_the_kernels_is_no_difference(caps: Path) -> None:
    cd = compare_collections(caps / "static", caps / "static-moved")
    text = render_overview(cd)
    assert all(r.comparison is not None and r.comparison.identical for r in cd.results)
    assert "1 pair: 1 identical" in text or "0 differ, 1 identical" in text


def test_capture_options_after_the_double_dash_are_refused(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "irdiff", "capture", "-o", str(tmp_path / "x"), "--", "--target", "sm90", "python"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "put it before `--`" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


def test_moved_capture_keeps_whole_file_for_line_mapping(caps: Path) -> None:
    v = load_bundle(caps / "static-moved").variants[KERNEL]
    assert "SIZES = [1, 2, 3]" in v.text("python")  # the whole file is kept: IR locations point into it
    first, last = v.metadata["kernel_lines"]
    lines = v.text("python").splitlines()
    assert lines[first - 1].startswith("@triton.jit") and "def " + KERNEL in lines[first]
    assert last == len(lines)


def test_overview_grouped_by_severity_with_top(caps: Path) -> None:
    cd = compare_collections(caps / "both", caps / "both1024")
    text = render_overview(cd, width=200)
    assert "2 pairs: 1 identical, 1 differ — by severity: major 1" in text
    lines = text.splitlines()
    first_row = next(i for i, ln in enumerate(lines) if ln.startswith("  " + KERNEL))
    # the pair that differs comes first, with its configuration and root finding on the next line
    assert "identical" not in lines[first_row]
    assert "R0_BLOCK=2048→1024" in lines[first_row + 1] and "root config.changed (major)" in lines[first_row + 1]
    assert any("identical" in ln for ln in lines[first_row + 2 :])
    top = render_overview(cd, width=200, top=1)
    assert "1 identical pair not listed (--top)" in top
    assert sum(1 for ln in top.splitlines() if ln.startswith("  " + KERNEL)) == 1


def test_batched_sass_is_what_triton_disassembles(caps: Path) -> None:
    from triton.compiler.compiler import AsmDict

    from irdiff.capture.finalize import _cuobjdump, sass_of_listing

    vs = [load_bundle(caps / d).variants[KERNEL] for d in ("static", "dynamic")]
    cubins = [(f"k{i}", v.path("cubin").read_bytes(), 90) for i, v in enumerate(vs)]  # type: ignore[union-attr]
    listings = _cuobjdump(["-sass"], cubins)  # one cuobjdump call for both kernels
    for name, cubin, _ in cubins:
        asm = AsmDict()
        asm["cubin"] = cubin
        assert sass_of_listing(listings[name]) == asm["sass"]
    usage = _cuobjdump(["--dump-resource-usage"], cubins)
    assert all("REG:" in usage[n] for n, _, _ in cubins)
