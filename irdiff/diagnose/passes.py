"""First diverging pass: where two variants' per-pass MLIR snapshots stop being equal.

The compile driver's ``--passes`` saves ``MLIR_ENABLE_DUMP`` output as one file per snapshot
(``passes/NNN-before-<Pass>.mlir``; Triton's pass manager prints the module *before* each pass, see
``triton/compiler/compiler.py`` and the MLIR ``IRPrinterInstrumentation``). :func:`first_diverging_pass` pairs the
two variants' snapshot sequences by pass name (an option or target can add or drop passes), normalizes each
snapshot like the TTIR/TTGIR stages (locations, SSA names, kernel name, layout aliases), and returns the first pass
whose *output* differs while its *input* was equal — with that pass's hunk. Module attributes that only record an
option (``"ttg.num-warps" = 8``, ``ttg.target = "cuda:90"``) are told apart: a pass whose output differs only there
is reported as ``records_only`` so the caller can name the first pass that changes the code.

Pure text over the bundle; snapshots are read one at a time.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

from irdiff.bundle import VariantResult

__all__ = ["PassDivergence", "first_diverging_pass", "needs_pass_trace", "pass_names"]

_HEADER = re.compile(r"^\d+-(before|after)-(.+?)_?\.mlir$")
_MODULE_ATTR = re.compile(r'"?ttg\.(num-warps|num-ctas|target|threads-per-warp|total-num-warps)"?\s*=\s*[^,}]+')


@dataclass
class PassDivergence:
    """Where the pass pipelines of two variants diverge.

    :ivar pass_name: the pass whose output differs first (``TritonGPUCoalesce``), or ``""`` when every saved
        snapshot is equal (the divergence is after the MLIR pipeline: LLVM lowering, ``make_llir``/``make_ptx``,
        or ptxas).
    :ivar index_a: position of that pass in ``a``'s snapshot list; ``index_b`` in ``b``'s.
    :ivar records_only: the first differing output differs only in module attributes recording an option
        (``ttg.num-warps``, ``ttg.target``); ``code_pass`` then names the first pass that changes ops or types.
    :ivar code_pass: first pass whose output differs beyond those attributes (``""`` if none).
    :ivar hunk: unified-diff lines of that pass's output (normalized, at most 40).
    :ivar missing_a: pass names only ``a`` runs (up to the divergence); ``missing_b`` only ``b``.
    """

    pass_name: str
    index_a: int | None = None
    index_b: int | None = None
    records_only: bool = False
    code_pass: str = ""
    hunk: list[str] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)


def pass_names(v: VariantResult) -> list[str]:
    """Pass names of the saved snapshots, in order (``TritonGPUCoalesce``)."""
    out = []
    for name in v.passes:
        m = _HEADER.match(name)
        out.append(m.group(2) if m else name)
    return out


def _norm(v: VariantResult, name: str, attrs: bool) -> list[str]:
    from irdiff.normalize import normalize

    p = Path(v.directory) / "passes" / name
    try:
        text = p.read_text(errors="replace")
    except OSError:
        return []
    lines = [ln for ln in text.splitlines() if not ln.startswith("// -----// IR Dump")]
    norm = normalize("ttgir", "\n".join(lines), v.kernel or None)
    out = norm.lines
    if not attrs:
        out = [_MODULE_ATTR.sub("", ln) for ln in out]
    return out


def first_diverging_pass(va: VariantResult, vb: VariantResult) -> PassDivergence | None:
    """The first pass whose output differs between ``va`` and ``vb``; None when either has no snapshots.

    Snapshot *k* is the input of pass *k*, so the pass that diverged is the one before the first unequal
    snapshot pair; a pass missing from one side is reported in ``only_a``/``only_b``.
    """
    if not va.passes or not vb.passes:
        return None
    na, nb = pass_names(va), pass_names(vb)
    sm = difflib.SequenceMatcher(a=na, b=nb, autojunk=False)
    pairs: list[tuple[int, int]] = []
    only_a: list[str] = []
    only_b: list[str] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            pairs.extend(zip(range(i1, i2), range(j1, j2), strict=True))
        else:
            only_a.extend(na[i1:i2])
            only_b.extend(nb[j1:j2])
    first_any: tuple[int, int] | None = None
    first_code: tuple[int, int] | None = None
    prev: tuple[int, int] | None = None
    for i, j in pairs:
        full_a, full_b = _norm(va, va.passes[i], True), _norm(vb, vb.passes[j], True)
        if full_a != full_b:
            if first_any is None:
                first_any = prev or (i, j)
            if _norm(va, va.passes[i], False) != _norm(vb, vb.passes[j], False):
                first_code = prev or (i, j)
                break
        prev = (i, j)
    if first_any is None:
        return PassDivergence("", only_a=only_a, only_b=only_b)
    ia, ib = first_any
    out = PassDivergence(na[ia], ia, ib, only_a=only_a, only_b=only_b)
    if first_code is not None:
        out.code_pass = na[first_code[0]]
        out.records_only = first_code != first_any
        ca, cb = first_code
    else:
        out.records_only = True
        ca, cb = ia, ib
    # the pass's output = the next snapshot (its input when it is the last: the final module is not dumped)
    nxt = [(i, j) for i, j in pairs if i > ca and j > cb]
    oa, ob = nxt[0] if nxt else (ca, cb)
    diff = difflib.unified_diff(
        _norm(va, va.passes[oa], not out.records_only or first_code is None),
        _norm(vb, vb.passes[ob], not out.records_only or first_code is None),
        va.name,
        vb.name,
        n=1,
        lineterm="",
    )
    out.hunk = [ln[:200] for ln in list(diff)[2:42]]
    return out


def needs_pass_trace(va: VariantResult, vb: VariantResult, ttir_identical: bool | None = None) -> bool:
    """True when the two variants' TTIR is the same after normalization but a later stage differs, and either lacks
    per-pass snapshots: then only a pass trace (``--passes``) can say where they diverge (an option, the target, the
    Triton version or the environment).

    :param ttir_identical: whether the normalized TTIR diff of the pair is identical, when the caller already has it
        (a cached comparison's TTIR :class:`~irdiff.align.StageDiff`); None normalizes and aligns the TTIR here.
    """
    if va.passes and vb.passes:
        return False
    ta, tb = va.text("ttir"), vb.text("ttir")
    if not ta or not tb:
        return False
    if ttir_identical is None:
        from irdiff.align import diff_stage
        from irdiff.normalize import normalize

        ttir_identical = diff_stage(
            normalize("ttir", ta, va.kernel or None), normalize("ttir", tb, vb.kernel or None)
        ).identical
    if not ttir_identical:
        return False
    for stage in ("ttgir", "ptx"):
        xa, xb = va.text(stage), vb.text(stage)
        if xa and xb and xa.replace(va.kernel, "K") != xb.replace(vb.kernel, "K"):
            return True
    return False
