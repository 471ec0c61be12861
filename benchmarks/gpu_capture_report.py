"""Check and describe two captures for the GPU acceptance of `irdiff capture` (issue 6).

Prints, for each capture, every kernel (specialization, options, resources, launches, TorchInductor facts, hook
errors); then the pairing and, per pair, the stage-0 rows that differ and the findings as a cause → effect chain;
then the acceptance checks, each ``PASS`` or ``FAIL`` with the reason. Writes ``findings.json`` (every pair's
diagnosis) next to the captures. Exit status 0 when every check passes, 1 otherwise.

Usage: ``python benchmarks/gpu_capture_report.py STATIC_CAPTURE DYNAMIC_CAPTURE``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STAGES = ("python", "ttir", "ttgir", "llir", "ptx", "sass")


def describe_capture(path: Path) -> None:
    from irdiff.bundle import load_bundle

    b = load_bundle(path)
    info = json.loads((path / "capture.json").read_text()) if (path / "capture.json").is_file() else {}
    print(f"--- {path}: {len(b.variants)} kernels, target {b.target}, Triton {b.triton_version}, {b.ptxas_version}")
    print(f"    command: {' '.join(b.command)}")
    for k in ("exit_code", "program_seconds", "finalize_seconds", "processes", "warnings"):
        print(f"    {k}: {info.get(k)}")
    errors = path / ".capture" / "errors.log"
    if errors.is_file() and errors.read_text().strip():
        print("    hook errors (.capture/errors.log, last 40 lines):")
        for ln in errors.read_text().splitlines()[-40:]:
            print("      " + ln)
    for name, v in b.variants.items():
        missing = [s for s in STAGES if s not in v.stages]
        r = v.resources
        print(f"  {name}: kernel {v.kernel}, {v.target}, stages missing: {missing or 'none'}, cache_hit {v.cache_hit}")
        print(f"      options {v.options}")
        print(f"      resources: {r.registers} regs, spills {r.spill_store_bytes}/{r.spill_load_bytes} B, "
              f"shared {r.shared_bytes} B, {r.ptxas_version}")  # fmt: skip
        print(
            f"      ptxas at compile time: {v.metadata.get('ptxas_path')}; report by: {v.metadata.get('ptxas_rerun')}"
        )
        if v.metadata.get("resources_note"):
            print(f"      resources note: {v.metadata['resources_note']}")
        print(f"      compiled by {v.metadata.get('compiled_by')} (pid {v.metadata.get('pid')})")
        if v.metadata.get("inductor"):
            print(f"      inductor: {v.metadata['inductor']}")
        print(f"      explain: {v.metadata.get('explain')}")
        for s in v.specialization:
            print(f"      arg {s.index:2d} {s.name:16s} {s.summary():22s} {s.reason}")
        launches = v.metadata.get("launches")
        if launches:
            print(
                f"      launches: {launches.get('count')} ({launches.get('autotune', 0)} by an autotuner's benchmark)"
            )
            for smp in launches.get("samples", [])[:4]:
                print(f"        grid {smp.get('grid')} args {json.dumps(smp.get('args'))[:300]}")
        else:
            print("      launches: none recorded")


def main(argv: list[str]) -> int:
    from irdiff.collections_diff.compare import compare_collections, render_overview
    from irdiff.collections_diff.pairing import program_launches
    from irdiff.render import spec_rows

    a_path, b_path = Path(argv[0]), Path(argv[1])
    for p in (a_path, b_path):
        try:
            describe_capture(p)
        except Exception as e:  # noqa: BLE001 - report what is there, then fail the checks
            print(f"--- {p}: cannot read: {type(e).__name__}: {e}")
    try:
        cd = compare_collections(a_path, b_path)
    except Exception as e:  # noqa: BLE001
        print(f"\nacceptance checks\n  FAIL  the two captures can be compared: {type(e).__name__}: {e}")
        return 1
    print()
    print(render_overview(cd, width=160))
    dump: list[dict[str, Any]] = []
    spec_changes: list[str] = []
    downstream: list[str] = []
    for r in cd.results:
        print(f"=== pair {r.pair.a} ↔ {r.pair.b} ({r.pair.how}, score {r.pair.score})")
        if r.comparison is None:
            print(f"    not compared: {r.error}")
            continue
        c = r.comparison
        for row in spec_rows(c):
            if row.differs:
                a = row.a.summary() if row.a else "—"
                b = row.b.summary() if row.b else "—"
                line = f"{r.pair.a}: {row.name}: {a} → {b}"
                spec_changes.append(line)
                print(f"    spec differs: {row.name:16s} {a:22s} → {b}")
        d = c.diagnosis
        if d is None:
            print("    no diagnosis")
            continue
        for n in d.notes:
            print(f"    note: {n}")
        for f in d.findings:
            cause = f" ← {', '.join(f.causes)}" if f.causes else ""
            print(f"    [{f.severity:8s}] {f.stage:9s} {f.id}: {f.title}{cause}")
            if f.stage not in ("spec", "options") and f.causes:
                downstream.append(f"{r.pair.a}: {f.id} ({f.stage}) ← {', '.join(f.causes)}")
        dump.append({"pair": [r.pair.a, r.pair.b, r.pair.how], "diagnosis": d.to_json()})
    out = a_path.parent / "findings.json"
    out.write_text(json.dumps(dump, indent=1, default=str))
    print(f"\nwrote {out}")

    checks: list[tuple[str, bool, str]] = []
    full = all(
        all(s in v.stages for s in STAGES) and v.resources.registers for b in (cd.a, cd.b) for v in b.variants.values()
    )
    checks.append(
        (
            "both captures hold kernels with every stage and ptxas resources",
            bool(cd.a.variants) and bool(cd.b.variants) and full,
            f"{len(cd.a.variants)} and {len(cd.b.variants)} kernels",
        )
    )

    def ran(b: Any, names: list[str]) -> list[str]:
        """Kernels the program itself launched (an autotuner's benchmark launches aside)."""
        return [n for n in names if program_launches(b.variants[n]) > 0]

    also_a = [n for alts in cd.pairing.also_a.values() for n in alts]
    also_b = [n for alts in cd.pairing.also_b.values() for n in alts]
    unpaired_ran = ran(cd.a, cd.pairing.only_a + also_a) + ran(cd.b, cd.pairing.only_b + also_b)
    checks.append(
        (
            "the kernels pair up (every kernel the program launched is in a pair; "
            "configs only an autotuner launched may be listed as 'also compiled')",
            bool(cd.results) and not unpaired_ran,
            f"{len(cd.results)} pairs: {[(p.a, p.b, p.how) for p in cd.pairing.pairs]}; "
            f"unpaired: A {cd.pairing.only_a}, B {cd.pairing.only_b}; also compiled: A {also_a}, B {also_b}; "
            f"launched by the program but not paired: {unpaired_ran}",
        )
    )
    checks.append(
        (
            "the specialization shows what the dynamic sizes changed (runtime size arguments, lost divisibility)",
            bool(spec_changes),
            "; ".join(spec_changes[:8]) or "no stage-0 row differs",
        )
    )
    checks.append(
        (
            "findings name what that did downstream (a later-stage finding caused by another)",
            bool(downstream),
            "; ".join(downstream[:6]) or "no downstream finding with a cause",
        )
    )
    print("\nacceptance checks")
    for title, ok, why in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {title}: {why}")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
