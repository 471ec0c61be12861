"""Acceptance checks of issue 16 on two real captures of torch.compile ``dynamic=False`` vs ``dynamic=True`` (made by
``benchmarks/gpu_capture_roles.sh`` on a GPU): the root finding of the RMSNorm pair names the new runtime ``i64`` row
stride ``ks0``; no finding blames the ``eps`` argument (a finding may say that eps is a new runtime fp64 scalar, but
only as the dynamic kernel's own parameter, never paired by name with the static kernel's parameter of that name,
never ranked major, never linked as the cause of another finding); when TorchInductor's autotuner picked different
``XBLOCK``/``R0_BLOCK`` for the two sides, ``config.changed`` names it as its own root. With a third capture
(``DYNAMIC_OTHER``: the dynamic program at another size, where the autotuner may pick another block), the same
configuration check runs on dynamic vs that one. Prints each check ``PASS`` or ``FAIL`` (exit status 1 when one fails)
and writes ``roles.json`` (every pair's findings) next to the captures.

Usage: ``python benchmarks/gpu_capture_roles.py STATIC_CAPTURE DYNAMIC_CAPTURE [DYNAMIC_OTHER]``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _config_check(va: object, vb: object, by_id: dict[str, object], what: str) -> tuple[str, bool, str]:
    cfg_a = {s.name: s.constexpr for s in va.specialization if s.is_constexpr_param}  # type: ignore[attr-defined]
    cfg_b = {s.name: s.constexpr for s in vb.specialization if s.is_constexpr_param}  # type: ignore[attr-defined]
    differ = {k: (cfg_a[k], cfg_b[k]) for k in cfg_a if k in cfg_b and cfg_a[k] != cfg_b[k]}
    if differ:
        cfg = by_id.get("config.changed")
        ok = bool(cfg and not cfg.causes and all(k in cfg.title for k in differ))  # type: ignore[attr-defined]
        return (f"{what}: different block sizes {differ} named as their own root", ok, cfg.title if cfg else "none")  # type: ignore[attr-defined]
    return (f"{what}: same block sizes on both sides: no config.changed", "config.changed" not in by_id, str(cfg_a))


def main(argv: list[str]) -> int:
    from irdiff.collections_diff.compare import compare_collections, render_overview
    from irdiff.diagnose.params import describe_role, pair_params

    static, dynamic = Path(argv[0]), Path(argv[1])
    other = Path(argv[2]) if len(argv) > 2 else None
    cd = compare_collections(static, dynamic)
    print(render_overview(cd, width=160))
    checks: list[tuple[str, bool, str]] = []
    dump = []
    for r in cd.results:
        c = r.comparison
        if c is None or c.diagnosis is None or c.identical:
            continue
        va, vb = cd.a.variants[r.pair.a], cd.b.variants[r.pair.b]
        pairing = pair_params(va.specialization, va.text("ttir"), vb.specialization, vb.text("ttir"))
        added = [(x.name, describe_role(x)) for x in pairing.only("b")]
        renamed = [(p.a.name, p.b.name) for p in pairing.renamed if p.a and p.b]
        findings = c.diagnosis.findings
        dump.append(
            {
                "pair": [r.pair.a, r.pair.b],
                "added_in_dynamic": added,
                "renamed": renamed,
                "findings": [
                    {"id": f.id, "severity": f.severity, "title": f.title, "causes": f.causes} for f in findings
                ],
            }
        )
        by_id = {f.id: f for f in findings}
        if "rsqrt" not in r.pair.a and "rsqrt" not in r.pair.b:
            continue
        root = by_id.get("spec.param-added")
        ok = bool(root and not root.causes and "`ks0`" in root.title and "stride" in root.title and "i64" in root.title)
        checks.append(("root finding names the new runtime i64 row stride ks0", ok, root.title if root else "none"))
        eps = [n for n, role in added if "only in arithmetic" in role]
        dyn_label = c.diagnosis.b
        static_label = c.diagnosis.a
        problems = []
        for f in findings:
            if f.id == "spec.param-added":
                continue
            text = f.title + " " + f.explanation + " " + (f.remedy or "")
            for n in eps:
                if f"`{n}`" not in text:
                    continue
                if f.id.startswith("source.") and f"parameter `{n}` only in `{dyn_label}`" in f.title:
                    continue  # the source diff stating that eps is new in the dynamic kernel
                if f.severity in ("major", "critical"):
                    problems.append(f"{f.id} ranks it {f.severity}")
                if any(f.id in g.causes for g in findings):
                    problems.append(
                        f"{f.id} is linked as a cause of " + ", ".join(g.id for g in findings if f.id in g.causes)
                    )
                if f"`{n}` (a parameter only `{dyn_label}` has)" not in text:
                    problems.append(f"{f.id} does not name `{n}` as the dynamic kernel's own parameter")
                if any(e.variant == static_label and e.text.startswith(f"{n}:") for e in f.evidence):
                    problems.append(f"{f.id} shows the static kernel's `{n}` as its counterpart (paired by name)")
        checks.append(
            (
                "no finding blames the eps argument",
                bool(eps) and not problems,
                f"eps params {eps}; "
                + (
                    "; ".join(problems)
                    if problems
                    else "named only as the dynamic kernel's own new fp64 scalar, minor, causing nothing"
                ),
            )
        )
        checks.append(_config_check(va, vb, by_id, "static vs dynamic"))
    if other is not None:
        cd2 = compare_collections(dynamic, other)
        print(render_overview(cd2, width=160))
        for r in cd2.results:
            if "rsqrt" not in r.pair.a and "rsqrt" not in r.pair.b:
                continue
            c = r.comparison
            va, vb = cd2.a.variants[r.pair.a], cd2.b.variants[r.pair.b]
            by_id = {f.id: f for f in (c.diagnosis.findings if c is not None and c.diagnosis is not None else [])}
            dump.append(
                {
                    "pair": [f"{dynamic.name}:{r.pair.a}", f"{other.name}:{r.pair.b}"],
                    "findings": [
                        {"id": f.id, "severity": f.severity, "title": f.title, "causes": f.causes}
                        for f in by_id.values()
                    ],
                }
            )
            checks.append(_config_check(va, vb, by_id, f"dynamic vs {other.name}"))
    (static.parent / "roles.json").write_text(json.dumps(dump, indent=1))
    if not checks:
        checks.append(("an RMSNorm pair that differs was found", False, "no pair with 'rsqrt' in its name differs"))
    print("\nacceptance checks (issue 16)")
    for title, ok, why in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {title}: {why}")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
