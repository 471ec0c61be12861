"""Issue 14 probe: does the size of the runner's L2 flush explain its remaining disagreement with do_bench on tiny
kernels? Runs ``bench_agreement.py --only CASES`` twice in one process family: once with the runner's flush (2x the
L2, 120 MiB on the H200) and once with do_bench's own flush buffer (256e6 bytes, ``triton/testing.py``).

Usage: ``PYTHONPATH=. python benchmarks/flush_probe.py matmul:512,matmul:1024,matmul:2048 [--bytes N]``.
"""

from __future__ import annotations

import runpy
import sys

if __name__ == "__main__":
    cases = sys.argv[1]
    nbytes = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--bytes" else 0
    if nbytes:
        import torch

        from irdiff.run import timing

        orig = timing._Cuda.__init__

        def init(self, flush: bool, spin: bool) -> None:  # type: ignore[no-untyped-def]
            orig(self, flush, spin)
            if flush:
                self.flush_bytes = nbytes
                self.buf = torch.empty(nbytes, dtype=torch.int8, device="cuda")

        timing._Cuda.__init__ = init  # type: ignore[method-assign]
    sys.argv = ["bench_agreement.py", "--only", cases]
    runpy.run_path("benchmarks/bench_agreement.py", run_name="__main__")
