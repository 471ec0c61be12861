#!/usr/bin/env bash
# Issue 14 after the settling change (run from the repository root):  bash benchmarks/gpu_runner_session3.sh OUTDIR
# bench_agreement.{txt,json} (benchmarks/bench_agreement.py), compare.txt + persistent.report.json (persistent vs
# tiled with --ncu, clocks), pytest.txt (the runner's GPU tests).
set -u
OUT=${1:?usage: gpu_runner_session3.sh OUTDIR}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 IRDIFF_PAGING=never
PY=${PYTHON:-python3}
B=$(mktemp -d)
{ timeout 400 $PY benchmarks/bench_agreement.py --out "$OUT"; echo "[exit $?]"; } >"$OUT/bench_stdout.log" 2>&1
{ echo "\$ irdiff persistent-matmul --variant persistent --against tiled --shape M=8192,N=8192,K=4096 --ncu"
  timeout 150 $PY -m irdiff persistent-matmul --variant persistent --against tiled --shape M=8192,N=8192,K=4096 --ncu \
    --save "$B/p" --color never --json-report "$B/p.json" --force; echo "[exit $?]"; } >"$OUT/compare.txt" 2>&1
$PY - "$B/p.json" "$OUT/persistent.report.json" <<'PYEOF'
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
{ timeout 150 $PY -m pytest -q -m gpu -p no:cacheprovider tests/test_run.py tests/test_runner_kinds.py 2>&1 | tail -15; } >"$OUT/pytest.txt" 2>&1
