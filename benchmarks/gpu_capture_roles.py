"""Acceptance checks of issue 16 on two real captures of torch.compile ``dynamic=False`` vs ``dynamic=True`` (made by
``benchmarks/gpu_capture_roles.sh`` on a GPU): the root finding of the RMSNorm pair names the new runtime ``i64`` row
stride ``ks0``; no finding blames the ``eps`` argument; when TorchInductor's autotuner picked different
``XBLOCK``/``R0_BLOCK`` for the two sides, ``config.changed`` names it as its own root. Prints each check ``PASS`` or
``FAIL`` (exit status 1 when one fails) and writes ``roles.json`` (every pair's findings) next to the captures.

Usage: ``python benchmarks/gpu_capture_roles.py STATIC_CAPTURE DYNAMIC_CAPTURE``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv: list[str]) -> int:
    from irdiff.collections_diff.compare import compare_collections, render_overview
    from irdiff.diagnose.params import describe_role, pair_params

    static, dynamic = Path(argv[0]), Path(argv[1])
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
        blamed = [
            f.id
            for f in findings
            if f.id != "spec.param-added" and any(f"`{n}`" in f.title + f.explanation + (f.remedy or "") for n in eps)
        ]
        checks.append(
            ("no finding blames the eps argument", bool(eps) and not blamed, f"eps params {eps}, blamed by {blamed}")
        )
        cfg_a = {s.name: s.constexpr for s in va.specialization if s.is_constexpr_param}
        cfg_b = {s.name: s.constexpr for s in vb.specialization if s.is_constexpr_param}
        differ = {k: (cfg_a[k], cfg_b[k]) for k in cfg_a if k in cfg_b and cfg_a[k] != cfg_b[k]}
        if differ:
            cfg = by_id.get("config.changed")
            ok = bool(cfg and not cfg.causes and all(k in cfg.title for k in differ))
            checks.append((f"different block sizes {differ} named as their own root", ok, cfg.title if cfg else "none"))
        else:
            checks.append(
                ("same block sizes on both sides: no config.changed", "config.changed" not in by_id, str(cfg_a))
            )
    (static.parent / "roles.json").write_text(json.dumps(dump, indent=1))
    if not checks:
        checks.append(("an RMSNorm pair that differs was found", False, "no pair with 'rsqrt' in its name differs"))
    print("\nacceptance checks (issue 16)")
    for title, ok, why in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {title}: {why}")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
