"""What the runner's blocks looked like in a ``bench_agreement.py`` run (issue 14), from its JSON alone (no GPU).

For each variant: the timed launches summed over all blocks (the window), the block medians' spread, and per block
the NVML SM clock and power; for the partner test, ``tiled``'s clock and power beside each partner next to the
partner's own. This is the data behind the settling and block-length changes in ``irdiff/run/timing.py``.

Usage: ``python benchmarks/agreement_blocks.py benchmarks/results/agreement-h200-final/bench_agreement.json``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _blocks(c: dict[str, Any] | None) -> str:
    if not c:
        return "—"
    return " ".join(f"{b['sm_mhz']:.0f}/{b['power_w']:.0f}" for b in c.get("per_block", []))


def report(rows: list[dict[str, Any]]) -> str:
    """The text printed for the rows of ``bench_agreement.json``."""
    out = ["1. runner vs do_bench: timed window (sum of timed launches over all blocks), deviation, per-block MHz/W"]
    out.append(f"{'suite':<18} {'M':>5} {'variant':<14} {'window ms':>9} {'dev':>7}  blocks (MHz/W)")
    for r in rows:
        if r.get("test") != "do_bench":
            continue
        out.append(
            f"{r['suite']:<18} {r['shape'].get('M', 0):>5} {r['variant']:<14} {r['window_ms']:9.0f} "
            f"{r['dev'] * 100:+6.2f}%  {_blocks(r.get('clock'))}"
        )
    out += ["", "2. tiled beside two partners: tiled's blocks, then the partner's (MHz/W)"]
    for r in rows:
        if r.get("test") != "partners":
            continue
        out.append(f"M=N={r['shape']['M']}: partner effect {r['partner_dev'] * 100:+.2f}%")
        for key, partner in (("m1", "persistent"), ("m2", "persistent-noflatten"), ("m3", "persistent")):
            c = r["clocks"].get(key, {})
            out.append(f"  {key} tiled      {_blocks(c.get('tiled'))}")
            out.append(f"  {key} {partner:<10} {_blocks(c.get(partner))}")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    try:
        rows = json.loads(Path(argv[0]).read_text())["rows"]
    except (OSError, ValueError, KeyError) as e:
        print(f"error: cannot read {argv[0]}: {e}", file=sys.stderr)
        return 2
    print(report(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
