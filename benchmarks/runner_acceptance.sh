#!/usr/bin/env bash
# Issue 7 acceptance on a CUDA machine: the runner's measurements, each step's output in its own file under $1.
#   bash benchmarks/runner_acceptance.sh OUTDIR        (run from the repository root; irdiff need not be installed)
# Steps: matmul timing table (4 shapes, torch reference), planted bug, persistent-matmul at M=N=8192, the spread
# benchmark, the runner's tests (GPU tests included), --autotune at one shape. Each step has its own time limit
# and a failing step does not stop the others.
set -u
OUT=${1:?usage: runner_acceptance.sh OUTDIR}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
PY=${PYTHON:-python3}
B=$(mktemp -d)

step() {  # step NAME LIMIT_S COMMAND...
  local name=$1 limit=$2
  shift 2
  {
    echo "\$ $*"
    local t0=$SECONDS
    timeout "$limit" "$@"
    echo "[exit $?, $((SECONDS - t0)) s]"
  } >>"$OUT/$name.txt" 2>&1
}

{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
  $PY -c 'import sys, torch, triton; print("python", sys.version.split()[0], "| torch", torch.__version__, "| CUDA", torch.version.cuda, "| triton", triton.__version__)'
} >"$OUT/matmul.txt" 2>&1

step matmul 150 $PY -m irdiff matmul --variant annotated --against unannotated --target sm90 \
  --shapes 512,1024,2048,4096 --save "$B/matmul" --stage ttir
step planted 60 $PY -m irdiff run tests/suites/planted_bug.py --shapes 4096 --save "$B/planted"
step persistent 150 $PY -m irdiff persistent-matmul --variant persistent --against tiled --target sm90 \
  --shapes M=N=8192 --shapes K=512,2048,8192 --save "$B/persistent" --stage ttir
step persistent 90 $PY -m irdiff run persistent-matmul --variant persistent-noflatten --against tiled \
  --shapes M=N=8192 --shapes K=512,2048,8192
step bench_runner 90 $PY benchmarks/bench_runner.py --shapes 1024,4096
step pytest 200 $PY -m pytest -q -p no:cacheprovider tests/test_run.py
step autotune 120 $PY -m irdiff run matmul --autotune --shapes 4096

$PY - "$B" "$OUT/records.json" <<'EOF'
import json, sys
from pathlib import Path
out = {}
for name in ("matmul", "planted", "persistent"):
    mf = Path(sys.argv[1]) / name / "manifest.json"
    out[name] = json.loads(mf.read_text()).get("runs", {}) if mf.is_file() else None
Path(sys.argv[2]).write_text(json.dumps(out, indent=1))
EOF
rm -rf "$B"
