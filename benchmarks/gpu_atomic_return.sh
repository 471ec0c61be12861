#!/usr/bin/env bash
# GPU check of atomic.result-used (run from the repository root; irdiff from the checkout):
#   bash benchmarks/gpu_atomic_return.sh OUTDIR
# 1. run.txt: `irdiff run` of benchmarks/atomic_return.py (old value read vs unused; 256 and 65,536 bins; both orders
#    for 256 bins: the same kernels beside the same partner), N = 16 Mi elements, sm90 (H200);
# 2. findings.txt: the diagnosis of each pair (`irdiff compare --no-run --json`, the titles and what they predict).
set -u
OUT=${1:?usage: gpu_atomic_return.sh OUTDIR}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 IRDIFF_PAGING=never
PY=${PYTHON:-python3}
S=benchmarks/atomic_return.py
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  $PY -c 'import sys, torch, triton; print("python", sys.version.split()[0], "| torch", torch.__version__, "| CUDA", torch.version.cuda, "| triton", triton.__version__)'
} >"$OUT/run.txt" 2>&1
for pair in "ret256 noret256" "noret256 ret256" "ret64k noret64k"; do
  set -- $pair
  { echo "\$ irdiff run $S --variant $1 --against $2"; t0=$SECONDS; timeout 240 $PY -m irdiff run $S --variant $1 --against $2; echo "[exit $?, $((SECONDS - t0)) s]"; echo; } >>"$OUT/run.txt" 2>&1
  { echo "\$ irdiff compare $S --variant $1 --against $2 --no-run --json"
    timeout 240 $PY -m irdiff compare $S --variant $1 --against $2 --no-run --json \
      | $PY -c 'import json, sys; [print(f["id"], f["severity"], "predicts", f.get("predicts"), "|", f["title"]) for f in json.load(sys.stdin)["findings"]]'
    echo; } >>"$OUT/findings.txt" 2>&1
done
