#!/usr/bin/env bash
# Issue 18 on the lent 16-CPU machine (the H200 image: Triton 3.6.0, torch, no network), one device call:
#
#   WHEELS=.whl bash benchmarks/gpu_sweep_scaling.sh        # run tool: carry [".whl"], timeout_s 600
#
# 1. `bench_sweep.py hardware`: CPU topology (threads per core, cgroup quota) and the same fixed work in 1…16
#    processes at once (pure-Python loop = the ceiling for CPU-bound jobs; memory copy; fresh `import torch`).
# 2. `bench_sweep.py scaling`: jobs/s of the local pool at 16, 8, 4, 2, 1 workers on plans/scaling.toml (64 compiles
#    + 32 diagnoses, empty caches each time), with each job's own wall time; a budget guard skips worker counts
#    whose predicted time would overrun the call.
# JSON and the log go to $OUT (copied back) and benchmarks/results/.
set -u -o pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
DEST=${OUT:-$ROOT/benchmarks/results}
mkdir -p "$DEST"
exec > >(tee "$DEST/sweep_h200_log.txt") 2>&1
if [ -n "${WHEELS:-}" ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHEELS"/*.whl \
    && export PYTHONPATH=/tmp/site || exit 1
fi
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
echo "== $(date -u +%FT%TZ) $(nproc) CPUs; $($PY -c 'import triton, sys; print("triton", triton.__version__, "python", sys.version.split()[0])')"
timeout 120 $PY benchmarks/bench_sweep.py hardware --workers 1,2,4,8,12,16 --json "$DEST/sweep_hardware_h200.json"
timeout 450 $PY benchmarks/bench_sweep.py scaling --budget 400 --json "$DEST/sweep_scaling_h200.json"
echo "== done $(date -u +%FT%TZ)"
