#!/usr/bin/env bash
# GPU acceptance of issue 16 (parameters paired by role, configuration roots), for the H200 image (torch + Triton
# installed; irdiff from this checkout):
#
#   bash benchmarks/gpu_capture_roles.sh
#
# Captures benchmarks/gpu_rmsnorm_program.py (fused RMSNorm + residual under torch.compile) with dynamic=False and
# dynamic=True, and dynamic=True at another hidden size (where the autotuner may pick another R0_BLOCK; fresh
# TorchInductor/Triton caches: every kernel compiled, the autotuner runs each time), runs `irdiff diff` on
# static vs dynamic (timed) and dynamic vs the other size, then benchmarks/gpu_capture_roles.py (PASS/FAIL checks).
# Results in benchmarks/results/gpu_capture_roles/ (and $OUT when set). With WHEELS=DIR, first installs the wheels
# there (pip --no-index: the GPU image has no network).
set -u -o pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
RES=$ROOT/benchmarks/results/gpu_capture_roles
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 IRDIFF_PAGING=never IRDIFF_COLOR=never
rm -rf "$RES" && mkdir -p "$RES"
exec > >(tee "$RES/log.txt") 2>&1
if [ -n "${WHEELS:-}" ]; then $PY -m pip install -q --no-index "$WHEELS"/*.whl 2>&1 | tail -2; fi
echo "== versions"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -2
$PY -c "import torch, triton; print('torch', torch.__version__, '· triton', triton.__version__, '· cuda', torch.version.cuda)"
echo "irdiff at $(git rev-parse --short HEAD 2>/dev/null || echo '?') (+ uncommitted: $(git status --porcelain 2>/dev/null | wc -l) files)"
SCRATCH=$(mktemp -d /tmp/irdiff-gpu-roles.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
for run in "static false 4096" "dynamic true 4096" "dynamic-h1024 true 1024"; do
    set -- $run
    export TORCHINDUCTOR_CACHE_DIR="$SCRATCH/$1/inductor" TRITON_CACHE_DIR="$SCRATCH/$1/triton"
    echo "== irdiff capture $1 (dynamic=$2, hidden=$3)"
    $PY -m irdiff capture -o "$RES/$1" --force -- $PY benchmarks/gpu_rmsnorm_program.py --dynamic "$2" --hidden "$3" 2>&1 | tail -5
done
echo "== irdiff diff static dynamic (first diff: SASS and compiler logs of the pairs that differ made on demand)"
START=$(date +%s.%N)
$PY -m irdiff diff "$RES/static" "$RES/dynamic" --width 160 >"$RES/diff.txt" 2>&1
echo "irdiff diff took $($PY -c "print(round($(date +%s.%N) - $START, 1))") s (wall clock)"
head -150 "$RES/diff.txt"
echo "== irdiff diff dynamic dynamic-h1024"
$PY -m irdiff diff "$RES/dynamic" "$RES/dynamic-h1024" --width 160 >"$RES/diff-h1024.txt" 2>&1
head -60 "$RES/diff-h1024.txt"
echo "== checks"
$PY benchmarks/gpu_capture_roles.py "$RES/static" "$RES/dynamic" "$RES/dynamic-h1024" | tee "$RES/checks.txt"
STATUS=${PIPESTATUS[0]}
tar -C "$RES" -czf "$RES/captures.tar.gz" static dynamic dynamic-h1024 && rm -rf "$RES/static" "$RES/dynamic" "$RES/dynamic-h1024"
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then cp "$RES"/* "$OUT/" 2>/dev/null; fi
exit $STATUS
