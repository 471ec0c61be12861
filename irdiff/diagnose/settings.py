"""Settings findings: the two sides were compiled with another target, Triton release or compile environment.

When one kernel is compiled twice under different settings (``--target sm80 --against-target sm90``,
``--triton 3.6.0 --against-triton 3.9.0``, a variant with ``env={"DISABLE_MMA_V3": "1"}``), the setting is the
root of every difference the code shows. The data comes from ``VariantResult.settings`` (written by the compile
driver: ``target``, ``triton``, ``ptxas``, ``env``) and, for bundles made before those were recorded, from the
variant's ``target`` and ``metadata["triton_version"]``. Launch options (num_warps …) are ``options.changed``
(:mod:`irdiff.diagnose.rules`).

Finding ids: ``settings.target-changed``, ``settings.triton-changed``, ``settings.env-changed``. Each names the
first compiler pass whose output differs when both sides carry per-pass snapshots (``--passes``; Triton's
``MLIR_ENABLE_DUMP``), from :func:`irdiff.diagnose.passes.first_diverging_pass`: the first pass that changes the code
(module attributes that only record the setting, such as ``ttg.target``, do not count).

When both sides compile the same kernel source, findings that no other finding explains are linked to the
settings findings (:func:`link_to_settings`): with the source equal, the setting is their root.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from irdiff.bundle import VariantResult
from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.passes import PassDivergence, first_diverging_pass

__all__ = [
    "SETTINGS_FINDING_IDS",
    "SettingChange",
    "link_to_settings",
    "settings_diff",
    "settings_findings",
]

SETTINGS_FINDING_IDS = ("settings.target-changed", "settings.triton-changed", "settings.env-changed")

# What some Triton compile knobs do (``triton/knobs.py``; env var → effect), quoted in ``settings.env-changed``.
KNOWN_KNOBS: dict[str, str] = {
    "DISABLE_MMA_V3": "turns off Hopper `wgmma` (MMA v3): `tt.dot` is lowered to `mma.sync` (MMA v2)",
    "DISABLE_MMA_V5": "turns off Blackwell `tcgen05` (MMA v5)",
    "DISABLE_LLVM_OPT": "skips LLVM's optimization passes on the LLIR",
    "DISABLE_PTXAS_OPT": "runs ptxas without optimization",
    "TRITON_DEFAULT_FP_FUSION": "decides whether a*b+c may be fused into one FMA (`enable_fp_fusion`)",
    "TRITON_F32_DEFAULT": "sets the default fp32 dot precision (`input_precision`)",
    "TRITON_DISABLE_LINE_INFO": "drops debug line info from the output",
    "TRITON_ENABLE_EXPERIMENTAL_CONSAN": "adds the concurrency sanitizer's instrumentation",
    "MLIR_ENABLE_DIAGNOSTICS": "changes MLIR's diagnostics output only",
}


@dataclass(frozen=True)
class SettingChange:
    """One setting that differs: ``key`` is ``target``, ``triton``, ``ptxas`` or ``env.NAME``; values as recorded
    (``""`` when unset on that side)."""

    key: str
    a: str
    b: str


def _settings_of(v: VariantResult) -> dict[str, Any]:
    s = dict(v.settings or {})
    s.setdefault("target", v.target)
    s.setdefault("triton", str(v.metadata.get("triton_version", "") or ""))
    s.setdefault("ptxas", v.resources.ptxas_version)
    s.setdefault("env", {})
    return s


def settings_diff(va: VariantResult, vb: VariantResult) -> list[SettingChange]:
    """The settings that differ between two compiled variants, in the order target, Triton, ptxas, env."""
    sa, sb = _settings_of(va), _settings_of(vb)
    out = []
    for key in ("target", "triton", "ptxas"):
        x, y = str(sa.get(key) or ""), str(sb.get(key) or "")
        if x and y and x != y:
            out.append(SettingChange(key, x, y))
    ea, eb = dict(sa.get("env") or {}), dict(sb.get("env") or {})
    for name in sorted(set(ea) | set(eb)):
        if ea.get(name) != eb.get(name):
            out.append(SettingChange(f"env.{name}", str(ea.get(name, "")), str(eb.get(name, ""))))
    return out


def _changed_line(hunk: list[str], sign: str) -> str:
    """The first line a unified-diff hunk removes (``-``: side a's) or adds (``+``: side b's), stripped."""
    return next((ln[1:].strip() for ln in hunk if ln.startswith(sign)), "")


def _pass_sentence(d: PassDivergence | None) -> str:
    """What the per-pass snapshots say about the pair (:func:`irdiff.diagnose.passes.first_diverging_pass`)."""
    if d is None:
        return " Run with `--passes` to name the first compiler pass whose output differs."
    if not d.pass_name:
        return " The per-pass snapshots agree pass by pass (the difference arises outside the MLIR passes)."
    one_side = list(dict.fromkeys([*d.only_a, *d.only_b]))
    extra = f" Passes run on one side only: {', '.join(one_side[:6])}." if one_side else ""
    if d.records_only and not d.code_pass:
        return (
            f" The per-pass snapshots differ only in module attributes that record the setting (from `{d.pass_name}` "
            "on): no MLIR pass changes the code differently, the difference arises after the MLIR passes." + extra
        )
    line = _changed_line(d.hunk, "-") or _changed_line(d.hunk, "+")
    quoted = f": `{line}`." if line else "."
    return f" The first pass whose output differs is `{d.code_pass or d.pass_name}`" + quoted + extra


def settings_findings(a: str, b: str, va: VariantResult, vb: VariantResult) -> list[Finding]:
    """``settings.*`` findings for the pair (empty when the settings agree); the first diverging pass, when both
    sides have per-pass snapshots, goes into each finding's explanation and evidence."""
    changes = settings_diff(va, vb)
    if not changes:
        return []
    div = first_diverging_pass(va, vb)
    passes = _pass_sentence(div)
    pass_ev = []
    if div is not None and div.pass_name:
        name = div.code_pass or div.pass_name
        pass_ev = [
            Evidence(a, "passes", None, f"after {name}: {_changed_line(div.hunk, '-') or '(no line of its own)'}"),
            Evidence(b, "passes", None, f"after {name}: {_changed_line(div.hunk, '+') or '(no line of its own)'}"),
        ]
    by_key = {c.key: c for c in changes}
    out: list[Finding] = []
    t = by_key.get("target")
    tv = by_key.get("triton")
    px = by_key.get("ptxas")
    if t:
        # Triton picks the assembler by architecture (``get_ptxas`` in ``backends/nvidia/compiler.py``: the bundled
        # ``ptxas`` below sm90, ``ptxas-blackwell`` from sm90 on); a release change says so in its own finding.
        assembler = (
            f" The two targets are assembled by different ptxas builds too ({px.a} vs {px.b}; Triton picks ptxas by "
            "architecture)."
            if px and not tv
            else ""
        )
        out.append(
            Finding(
                id="settings.target-changed",
                severity="major",
                title=f"Target differs: {t.a} in `{a}` vs {t.b} in `{b}`",
                explanation=(
                    f"`{a}` is compiled for {t.a} and `{b}` for {t.b}. The NVIDIA backend chooses passes, layouts "
                    "and instructions by compute capability (e.g. `mma.sync` on sm8x, `wgmma` and TMA on sm90, "
                    "`tcgen05` on sm100; `backends/nvidia/compiler.py`), and ptxas schedules and allocates registers "
                    "per architecture, so every later difference starts here." + assembler + passes
                ),
                evidence=[
                    Evidence(a, "settings", None, f"target {t.a}"),
                    Evidence(b, "settings", None, f"target {t.b}"),
                    *pass_ev,
                ],  # fmt: skip
                stage="settings",
            )
        )
    if tv:
        ptxas = f" ptxas differs too ({px.a} vs {px.b}): SASS and registers can change with the same PTX." if px else ""
        missing = [m for m in (va.metadata.get("missing") or []) + (vb.metadata.get("missing") or [])]
        lacks = f" The older release lacks: {'; '.join(dict.fromkeys(missing))}." if missing else ""
        out.append(
            Finding(
                id="settings.triton-changed",
                severity="major",
                title=f"Triton release differs: {tv.a} in `{a}` vs {tv.b} in `{b}`",
                explanation=(
                    f"`{a}` is compiled by Triton {tv.a} and `{b}` by Triton {tv.b}. Between releases the JIT's "
                    "specialization rules, the pass pipeline and the bundled ptxas change; with the same kernel "
                    "source, the release is the root of the differences below." + ptxas + lacks + passes
                ),
                evidence=[
                    Evidence(a, "settings", None, f"Triton {tv.a}" + (f", {px.a}" if px else "")),
                    Evidence(b, "settings", None, f"Triton {tv.b}" + (f", {px.b}" if px else "")),
                    *pass_ev,
                ],
                stage="settings",
            )
        )
    envs = [c for c in changes if c.key.startswith("env.")]
    if envs:

        def show(name: str, v: str, who: str) -> str:
            return f"{name}={v} in `{who}`" if v else f"{name} unset in `{who}`"

        names = [c.key[4:] for c in envs]
        known = [f"`{n}` {KNOWN_KNOBS[n]}" for n in names if n in KNOWN_KNOBS]
        what = (" " + "; ".join(known) + ".") if known else ""
        desc = "; ".join(f"{show(c.key[4:], c.a, a)} vs {show(c.key[4:], c.b, b)}" for c in envs)
        out.append(
            Finding(
                id="settings.env-changed",
                severity="major",
                title=f"Compile environment differs: {desc}",
                explanation=(
                    f"The compile environment differs: {desc}. Each variant's variables are set only in its own "
                    "compile process, so nothing else about the two sides differs." + what + passes
                ),
                evidence=[
                    *[Evidence(a, "settings", None, show(c.key[4:], c.a, a)) for c in envs],
                    *[Evidence(b, "settings", None, show(c.key[4:], c.b, b)) for c in envs],
                    *pass_ev,
                ],
                stage="settings",
            )
        )
    return out


def same_source(va: VariantResult, vb: VariantResult) -> bool:
    """Both sides compile the same kernel text (the kernel function's own lines of the ``python`` stage)."""

    def kernel_text(v: VariantResult) -> str:
        text = v.text("python")
        lines = v.metadata.get("kernel_lines")
        if isinstance(lines, list) and len(lines) == 2:
            text = "\n".join(text.splitlines()[int(lines[0]) - 1 : int(lines[1])])
        return text

    ta, tb = kernel_text(va), kernel_text(vb)
    return bool(ta) and ta == tb and va.kernel == vb.kernel


def link_to_settings(findings: list[Finding], settings: list[Finding], linkable: bool) -> None:
    """Make the settings findings the cause of every finding nothing else explains (``causes`` empty), when
    ``linkable`` (the two sides compile the same source, so nothing else can be the root)."""
    if not settings or not linkable:
        return
    ids = [s.id for s in settings]
    for f in findings:
        if f.id in ids or f.causes:
            continue
        f.causes = list(ids)
