#!/usr/bin/env bash
# Issue 14 on a CUDA machine with Nsight Compute (run from the repository root):  bash benchmarks/gpu_runner_session2.sh OUTDIR
# 1. bench_agreement.{txt,json}: benchmarks/bench_agreement.py (runner vs do_bench, partners, run-to-run, clocks);
# 2. compare.txt: `irdiff matmul … --ncu`, `irdiff persistent-matmul … --ncu`, the planted bug compared (exit status
#    after each), and *.report.json: the diagnosis, timing and counters of each (slimmed --json-report);
# 3. pytest.txt: the runner's GPU tests.
set -u
OUT=${1:?usage: gpu_runner_session2.sh OUTDIR}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 IRDIFF_PAGING=never
PY=${PYTHON:-python3}
B=$(mktemp -d)
cmp() {  # cmp NAME LIMIT ARGS...
  local name=$1 limit=$2
  shift 2
  { echo "\$ irdiff $*"; local t0=$SECONDS; timeout "$limit" $PY -m irdiff "$@" --color never --json-report "$B/$name.json" --force; echo "[exit $?, $((SECONDS - t0)) s]"; echo; } >>"$OUT/compare.txt" 2>&1
  $PY - "$B/$name.json" "$OUT/$name.report.json" <<'PYEOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    r = {"error": str(e)}
keep = {k: r.get(k) for k in ("schema", "suite", "a", "b", "command", "diagnosis", "timing", "error")}
if isinstance(keep.get("diagnosis"), dict):
    keep["diagnosis"] = {k: v for k, v in keep["diagnosis"].items() if k != "facts"}
json.dump(keep, open(sys.argv[2], "w"), indent=1, default=str)
PYEOF
}
{ timeout 300 $PY benchmarks/bench_agreement.py --out "$OUT"; echo "[exit $?]"; } >"$OUT/bench_stdout.log" 2>&1
cmp matmul 200 matmul --variant annotated --against unannotated --shape M=4096,N=4096,K=4096 --ncu --save "$B/m"
cmp persistent 200 persistent-matmul --variant persistent --against tiled --shape M=8192,N=8192,K=4096 --ncu --save "$B/p"
cmp planted 200 tests/suites/planted_bug.py --variant half_k --against correct --shape M=2048,N=2048,K=2048 --save "$B/q"
{ timeout 300 $PY -m pytest -q -m gpu -p no:cacheprovider tests/test_run.py tests/test_runner_kinds.py 2>&1 | tail -15; } >"$OUT/pytest.txt" 2>&1
