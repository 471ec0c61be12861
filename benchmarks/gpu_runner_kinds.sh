#!/usr/bin/env bash
# Issues 20/14 on a CUDA machine (run from the repository root; irdiff from the checkout):
#   bash benchmarks/gpu_runner_kinds.sh OUTDIR
# 1. kinds.txt: `irdiff run` on every suite of tests/suites/runner_kinds.py (accumulating outputs, a faulting hint,
#    TMA descriptors, padded rows, TF32 vs IEEE, no reference), exit status after each;
# 2. builtins.txt: `irdiff run` of the built-in pairs (matmul 4096, persistent-matmul 8192) and the planted bug;
# 3. pytest.txt: the GPU tests of the runner;  4. records.json: every run's record (the bundles' runs).
# Each step has its own time limit; a failing step does not stop the others.
set -u
OUT=${1:?usage: gpu_runner_kinds.sh OUTDIR}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 IRDIFF_PAGING=never
PY=${PYTHON:-python3}
B=$(mktemp -d)
K=tests/suites/runner_kinds.py
step() {  # step FILE LIMIT_S ARGS... (irdiff arguments)
  local file=$1 limit=$2
  shift 2
  { echo "\$ irdiff $*"; local t0=$SECONDS; timeout "$limit" $PY -m irdiff "$@"; echo "[exit $?, $((SECONDS - t0)) s]"; echo; } >>"$OUT/$file" 2>&1
}
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  $PY -c 'import sys, torch, triton; print("python", sys.version.split()[0], "| torch", torch.__version__, "| CUDA", torch.version.cuda, "| triton", triton.__version__)'
  $PY -c 'import pynvml; pynvml.nvmlInit(); print("nvidia-ml-py", pynvml.nvmlSystemGetDriverVersion())' 2>&1 | tail -1
} >"$OUT/kinds.txt" 2>&1
step kinds.txt 240 run $K::splitk-fp32 --variant splitk --against direct --shape M=2048,N=2048,K=8192 --save "$B/splitk-fp32"
step kinds.txt 240 run $K::splitk-fp32 --variant rmw --against direct --shape M=2048,N=2048,K=8192 --save "$B/splitk-fp32-rmw"
step kinds.txt 240 run $K::splitk-bf16 --variant splitk --against direct --shape M=2048,N=2048,K=8192 --save "$B/splitk-bf16"
step kinds.txt 240 run $K::splitk-nan --variant splitk --against direct --shape M=2048,N=2048,K=8192 --save "$B/splitk-nan"
step kinds.txt 240 run $K::histogram --shape N=16777216 --save "$B/histogram"
step kinds.txt 240 run $K::hint-fault --shape N=16777216 --save "$B/hint-fault"
step kinds.txt 240 run $K::crash --shape N=1048576 --save "$B/crash"
step kinds.txt 240 run $K::tma --shape M=4096,N=4096,K=4096 --config BM=128,BN=128,BK=64 --save "$B/tma"
step kinds.txt 240 run $K::padded-rows --shape M=65536,N=100 --save "$B/padded-rows"
step kinds.txt 240 run $K::padded-rows-nocompare --shape M=65536,N=100 --save "$B/padded-rows-nocompare"
step kinds.txt 240 run $K::dot-precision --shape M=2048,N=2048,K=2048 --save "$B/dot-precision"
step kinds.txt 240 run $K::no-reference --shape N=16777216 --save "$B/no-reference"
step builtins.txt 300 run matmul --variant annotated --against unannotated --shapes 4096 --save "$B/matmul"
step builtins.txt 300 run persistent-matmul --variant persistent --against tiled --shapes M=N=8192 --save "$B/persistent"
step builtins.txt 300 run tests/suites/planted_bug.py --shapes 2048 --save "$B/planted"
{ timeout 600 $PY -m pytest -q -m gpu -p no:cacheprovider tests/test_run.py tests/test_runner_kinds.py 2>&1 | tail -40; } >"$OUT/pytest.txt" 2>&1
$PY - "$B" "$OUT/records.json" <<'PYEOF'
import json, sys, pathlib
out = {}
for m in sorted(pathlib.Path(sys.argv[1]).glob("*/manifest.json")):
    out[m.parent.name] = json.loads(m.read_text()).get("runs", {})
pathlib.Path(sys.argv[2]).write_text(json.dumps(out, indent=1, default=str))
PYEOF
