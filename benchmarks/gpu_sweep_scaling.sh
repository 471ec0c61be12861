#!/usr/bin/env bash
# Issue 18 on the lent 16-CPU machine (the H200 image: Triton 3.6.0, torch, no network), one device call:
#
#   WHEELS=.whl bash benchmarks/gpu_sweep_scaling.sh        # run tool: carry [".whl"], timeout_s 600
#   SKIP_HARDWARE=1 WHEELS=.whl bash benchmarks/gpu_sweep_scaling.sh   # scaling only (step 1 measured already)
#
# 1. `bench_sweep.py hardware` (skipped with SKIP_HARDWARE=1): CPU topology (threads per core, cgroup quota) and
#    the same fixed work in 1…16 processes at once (pure-Python loop = the ceiling for CPU-bound jobs; memory copy;
#    fresh `import torch`). About 40 s.
# 2. `bench_sweep.py scaling`: jobs/s of the local pool at 16, 8, 4, 2, 1 workers (WORKERS=16,8,… to change) on
#    plans/scaling.toml (64 compiles + 32 diagnoses, empty caches each time), with each job's own wall time. Jobs
#    start longest predicted first from a timing history kept apart from the emptied caches: a first run at 16
#    workers (plan order, reported as `cold_history`, not in the efficiencies) fills it. NO_HISTORY=1: plan order
#    throughout (the previous measurement's setting). A budget guard skips worker counts whose predicted time would
#    overrun the call (about 400 s in all at the last measurement: 16+16+25+50+90+190 s). PLAN=FILE: another plan.
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
BUDGET=480
if [ -z "${SKIP_HARDWARE:-}" ]; then
  timeout 120 $PY benchmarks/bench_sweep.py hardware --workers 1,2,4,8,12,16 --json "$DEST/sweep_hardware_h200.json"
  BUDGET=400
fi
timeout $((BUDGET + 50)) $PY benchmarks/bench_sweep.py scaling --budget $BUDGET --workers "${WORKERS:-1,2,4,8,16}" \
  ${PLAN:+--plan "$PLAN"} \
  ${NO_HISTORY:+--no-history} --json "$DEST/sweep_scaling_h200.json"
echo "== done $(date -u +%FT%TZ)"
